"""Coverage of the score intervals on the engines, at the extremes (issue 42).

A run's score interval (:func:`balance.stats.pentanomial_score`) and a
score pooled over several matches by deal (:func:`balance.tables.pooled_side`,
``cluster_mean(..., bounds=(0, 1))``) are measured on real games: one long
run per matchup on one seed is cut into consecutive blocks of deals, each
block a replicate (a game depends on ``(seed, game)`` alone, so blocks are
independent, and the matches of one seed share deal *d*, as a study's do);
the true score is the grand mean over every block. Each test also measures
the normal (Wald) interval ``score ± z·se`` clipped to [0, 1] that the tables
printed before, which collapses to a point when every deal scores alike.

The matchups do not depend on Clash's Spear-against-Shield rule: Tosk's
random against economist (about 0.05%), balanced against turtle (about
96.7%), Trisk's tempo against random (about 95.5%) and Trisk's random
against the field (pooled, about 2.4%). ``docs/methods.md`` cites the
figures.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from balance import stats, tables
from balance.config import bind_side, load_strategy, resolve_variant
from balance.registry import get_game

Z = 1.959963984540054
SEED = 4242


_RUNS: dict[tuple[str, str, str, str], np.ndarray] = {}


def _points(game: str, a: str, b: str, games: int, variant: str = "base") -> np.ndarray:
    """A's half points (0, 1, 2) per game of the first ``games`` games of one
    run on :data:`SEED`, shape (deals, 2): a deal's two games, seats swapped.
    Kept for the module's other tests: game i is the same at any run size."""
    key = (game, a, b, variant)
    if key not in _RUNS or len(_RUNS[key]) < games // 2:
        eng = get_game(game).engine_module()
        rs = resolve_variant(game, variant)
        va, vb = (bind_side(rs, load_strategy(game, s)).vector() for s in (a, b))
        out = eng.simulate(rs.vector(), va, vb, SEED, 0, games)
        _RUNS[key] = np.asarray(out["a_points"], dtype=np.int64).reshape(-1, 2)
    return _RUNS[key][: games // 2]


def _blocks(pts: np.ndarray, deals: int, reps: int) -> np.ndarray:
    """The first ``reps`` blocks of ``deals`` consecutive deals: (reps, deals, 2)."""
    return pts[: reps * deals].reshape(reps, deals, 2)


def _per_run(game, a, b, games, reps):
    """Coverage of the run's score interval, now and before (Wald), over
    ``reps`` runs of ``games`` games; and the true score."""
    deals = games // 2
    g = _blocks(_points(game, a, b, games * reps), deals, reps)
    truth = g.mean() / 2
    codes = g.sum(axis=2)
    hit = np.zeros(2)
    for c in codes:
        r = stats.pentanomial_score(stats.pentanomial_counts(c))
        hit[0] += r["lo"] <= truth <= r["hi"]
        lo, hi = max(0.0, r["score"] - Z * r["se"]), min(1.0, r["score"] + Z * r["se"])
        hit[1] += lo <= truth <= hi
    return hit / reps, truth


@pytest.mark.slow
@pytest.mark.parametrize(
    ("game", "a", "b", "games", "near", "old_below"),
    [
        # the study's pilot size; before: the run scores 0 in most runs, [0, 0]
        ("tosk", "random", "economist", 1000, 0.0005, 0.6),
        ("tosk", "balanced", "turtle", 1000, 0.967, None),
        # the case: 60 games (30 deals)
        ("trisk", "tempo", "random", 60, 0.955, 0.9),
    ],
)
def test_run_score_interval_covers_at_the_extremes(game, a, b, games, near, old_below):
    cover, truth = _per_run(game, a, b, games, reps=500)
    assert truth == pytest.approx(near, abs=0.01 if near > 0.01 else 0.0003)
    print(
        f"{game} {a} vs {b}, {games} games, truth {truth:.5f}: now {cover[0]:.3f}, Wald {cover[1]:.3f}"
    )
    assert cover[0] >= 0.93, cover
    if old_below is not None:  # the interval it replaces did not
        assert cover[1] < old_below, cover


def _pooled(game, x, opponents, deals, reps):
    """Coverage of ``x``'s score pooled over its matches against ``opponents``
    (one seed: deal d is the same shuffle in each), now and before (the normal
    interval clipped to [0, 1]); and the true pooled score. ``x`` is side A in
    the first half of the matches and side B in the rest (as in a round robin)."""
    runs = []
    for j, o in enumerate(opponents):
        as_b = j >= (len(opponents) + 1) // 2
        g = _points(game, o, x, 2 * deals * reps) if as_b else _points(game, x, o, 2 * deals * reps)
        runs.append((_blocks(g, deals, reps), "b" if as_b else "a"))
    # every match has the same games: the pooled truth is the mean of x's scores
    truth = float(np.mean([(g if s == "a" else 2 - g).mean() / 2 for g, s in runs]))
    hit = np.zeros(2)
    for r in range(reps):
        parts = []
        for g, side in runs:
            gr = g[r]
            parts.append(
                (
                    SimpleNamespace(
                        spec=SimpleNamespace(seed=SEED),
                        pair_points=gr.sum(axis=1),
                        draws=int((gr == 1).sum()),
                        games=gr.size,
                    ),
                    side,
                )
            )
        p = tables.pooled_side(parts)
        hit[0] += p["score_lo"] <= truth <= p["score_hi"]
        lo = max(0.0, p["score"] - Z * p["score_se"])
        hi = min(1.0, p["score"] + Z * p["score_se"])
        hit[1] += lo <= truth <= hi
    return hit / reps, truth


TRISK_FIELD = ("control", "ramp", "rush", "tempo")


@pytest.mark.slow
@pytest.mark.parametrize("deals", [10, 30])
def test_pooled_score_covers_near_three_percent_at_few_deals(deals):
    """Trisk's random against the field (about 2.4%), pooled over four matches
    on one seed, 10 and 30 deals a match."""
    cover, truth = _pooled("trisk", "random", TRISK_FIELD, deals, reps=1000)
    assert 0.015 < truth < 0.035, truth
    print(
        f"trisk random vs field, {deals} deals, truth {truth:.4f}: now {cover[0]:.3f}, before {cover[1]:.3f}"
    )
    assert cover[0] >= 0.93, cover
    assert cover[1] < 0.9, cover


@pytest.mark.slow
@pytest.mark.parametrize(
    ("x", "opponents", "lo", "hi"),
    [
        ("random", ("economist", "healer", "turtle"), 0.0003, 0.0015),
        ("adaptive", ("turtle", "random"), 0.955, 0.98),
    ],
)
def test_pooled_score_covers_at_the_extremes(x, opponents, lo, hi):
    """Tosk: random against three opponents it almost never beats, and adaptive
    against two it almost always does, pooled over 100 deals a match."""
    cover, truth = _pooled("tosk", x, opponents, 100, reps=1000)
    assert lo < truth < hi, truth
    print(
        f"tosk {x} vs {opponents}, 100 deals, truth {truth:.5f}: now {cover[0]:.3f}, before {cover[1]:.3f}"
    )
    assert cover[0] >= 0.93, cover
    if truth < 0.01:  # before: se 0 whenever no deal scored, [0, 0]
        assert cover[1] < 0.6, cover


@pytest.mark.slow
@pytest.mark.parametrize(("deals", "reps", "least"), [(50, 2000, 0.92), (250, 400, 0.93)])
def test_paired_variant_difference_covers(deals, reps, least):
    """A variant's paired difference for one strategy (``tables.variant_diffs``:
    per-deal differences on the same deals, pooled over its opponents by deal,
    ``cluster_mean``): Tosk's balanced under ``force`` against base, against
    turtle and economist, on one run of 100,000 deals a match cut into
    ``reps`` blocks of ``deals``. The normal interval covers a little under
    95%: 92.7% on 100 clusters (50 deals a match, 2,000 blocks), 93.8% on 500
    (250 deals a match, 400 blocks): per-deal differences are few-valued
    and skewed, and the z quantile ignores the estimated SE's own error.
    """
    opponents = ("turtle", "economist")
    total = 2 * 100_000
    diffs = []
    for o in opponents:
        new = _blocks(_points("tosk", "balanced", o, total, "force"), deals, reps)
        old = _blocks(_points("tosk", "balanced", o, total), deals, reps)
        diffs.append((new.sum(axis=2) - old.sum(axis=2)) / 4.0)  # (reps, deals)
    full = [
        (
            _points("tosk", "balanced", o, total, "force").sum(axis=1)
            - _points("tosk", "balanced", o, total).sum(axis=1)
        )
        / 4.0
        for o in opponents
    ]
    truth = float(np.mean(full))  # every deal of the long runs
    hit = 0
    for r in range(reps):
        y, m = stats.pool_by_deal((SEED, np.vstack([d[r], np.ones(deals)])) for d in diffs)
        c = stats.cluster_mean(y, m)
        hit += c["lo"] <= truth <= c["hi"]
    print(
        f"tosk balanced, force vs base, {deals} deals x 2 opponents, truth {truth:.4f}: {hit / reps:.3f}"
    )
    assert abs(truth) > 0.01  # a real effect
    assert hit / reps >= least
