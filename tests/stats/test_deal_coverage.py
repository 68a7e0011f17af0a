"""Coverage of the deal-clustered intervals of the per-game figures, on the
real engines (issue 42, items 3 and 6).

The matches of a round robin replay the same deals (same seed, same deal
index), and a deal's two games are played from the same shuffles, so every
per-game figure (game length, the first seat's share of decided games,
draws, round-cap games, lead changes) is pooled by deal across the matches
(``balance.tables.per_game_figures``, ``balance.metrics.game_metrics``).
Here many replicate round robins, each on its own seed, are played; the
truth is the grand figure over all of them, and each replicate's 95%
interval should cover it in about 95% of them.

In Trisk a deal's length is alike in every match (an interval counted per
game covers about 80% here, 68% with five strategies), and a deal's two games
usually go to the same side, one to each seat (an interval counted per
game, with the two games of a deal counted as one, covers 100% and is about
2.2 times too wide).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from balance import metrics, runner, stats, tables
from balance.config import load_strategy, resolve_variant


def _replicates(game: str, variant: str, strategies: list[str], n: int, seeds: int):
    """``seeds`` round robins of ``strategies`` (``n`` games a match), each
    on its own seed: a list of each round robin's runs."""
    rs = resolve_variant(game, variant)
    side = {s: load_strategy(game, s) for s in strategies}
    pairs = list(itertools.combinations(strategies, 2))
    specs = [
        runner.RunSpec(rs, side[a], side[b], n, 1000 + k) for k in range(seeds) for a, b in pairs
    ]
    res = runner.simulate_runs(specs, batch_size=1 << 14)
    return [res[k * len(pairs) : (k + 1) * len(pairs)] for k in range(seeds)], res


def _coverage(rows: list[dict], key: str, lo: str, hi: str, truth: float) -> float:
    a = np.array([[r[lo], r[hi]] for r in rows], dtype=float)
    return float(np.mean((a[:, 0] <= truth) & (truth <= a[:, 1])))


@pytest.mark.slow
def test_trisk_round_robin_length_and_seat_share_intervals_cover_95():
    """400 Trisk round robins of rush, ramp and tempo (200 games a match, 240,000
    games). Measured: game length 96.2%, seat share 94.8%, lead changes 93.8%
    (the per-game length interval: 79.8%)."""
    groups, every = _replicates("trisk", "base", ["rush", "ramp", "tempo"], 200, 400)
    figs = [tables.per_game_figures(g) for g in groups]
    mets = [metrics.game_metrics(g) for g in groups]
    truth = tables.per_game_figures(every)
    lc_truth = metrics.game_metrics(every)["lead_changes"]
    cov = {
        "rounds": _coverage(figs, "rounds_mean", "rounds_lo", "rounds_hi", truth["rounds_mean"]),
        "seat share": _coverage(figs, "seat1_share", "seat1_lo", "seat1_hi", truth["seat1_share"]),
        "lead changes": _coverage(
            mets, "lead_changes", "lead_changes_lo", "lead_changes_hi", lc_truth
        ),
    }
    for name, c in cov.items():
        assert 0.92 <= c <= 0.98, (name, cov)
    # the intervals the tables used to show, for contrast: the length counted per
    # game is too narrow, the seat share with the two games of a deal as one too wide
    old_len = []
    for g in groups:
        h = tables.pooled_rounds(g)
        d = stats.hist_mean_ci(np.arange(len(h)), h)
        old_len.append({"lo": d["lo"], "hi": d["hi"]})
    assert _coverage(old_len, "", "lo", "hi", truth["rounds_mean"]) < 0.88
    widths = [f["seat1_hi"] - f["seat1_lo"] for f in figs]
    old_widths = [
        np.subtract(*stats.wilson(f["seat1_share"] * f["decided"] / 2, f["decided"] / 2)[::-1])
        for f in figs
    ]
    assert np.mean(old_widths) > 1.8 * np.mean(widths)


@pytest.mark.slow
def test_tosk_draw_round_cap_and_lead_change_intervals_cover_95():
    """200 Tosk round robins of aggressor, turtle and economist under a round cap
    of 14 (about a third of the games stopped there, drawn; 200 games a match).
    Measured: draws 95.0%, round-cap share 95.0%, lead changes 94.0%, game
    length 95.5%, seat share 95.5%."""
    groups, every = _replicates(
        "tosk", "base+max_rounds=14", ["aggressor", "turtle", "economist"], 200, 200
    )
    figs = [tables.per_game_figures(g) for g in groups]
    mets = [metrics.game_metrics(g) for g in groups]
    truth = tables.per_game_figures(every)
    lc_truth = metrics.game_metrics(every)["lead_changes"]
    assert 0.2 < truth["cap_share"] < 0.5  # the cap matters here
    cov = {
        "draws": _coverage(figs, "draw_rate", "draw_lo", "draw_hi", truth["draw_rate"]),
        "round cap": _coverage(figs, "cap_share", "cap_lo", "cap_hi", truth["cap_share"]),
        "rounds": _coverage(figs, "rounds_mean", "rounds_lo", "rounds_hi", truth["rounds_mean"]),
        "seat share": _coverage(figs, "seat1_share", "seat1_lo", "seat1_hi", truth["seat1_share"]),
        "lead changes": _coverage(
            mets, "lead_changes", "lead_changes_lo", "lead_changes_hi", lc_truth
        ),
    }
    for name, c in cov.items():
        assert 0.91 <= c <= 0.985, (name, cov)
