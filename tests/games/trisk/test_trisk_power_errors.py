"""Error rates of the whole staged equal-power procedure, measured by simulation.

METHODS: "a procedure's error rates are measured by simulation in a test, not
assumed". The procedure is :func:`balance.games.trisk.power.sequential` itself (the
function ``run_power`` drives with engine runs), driven here with synthetic
strata: every card has ``STRATA`` strata whose per-deal differences share the
deal (a common per-deal shock, correlation ``RHO`` between strata: the +0.21
the engine showed when strata replayed the same deals, the worst case), with
the engine's per-deal spread. A card's data at a look are the first deals of
one pre-drawn sequence, as when the runner extends a run.

Issue 15 measured the old procedure: a card exactly at +δ ended "equal" 14.8%
of the time (46% with the strata correlation) instead of at most 5%. The last
test replays that procedure (no α spent over the looks, strata variances
added as if independent) on the same data and shows it fails the bound, so
these tests can fail.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from balance.games.trisk import power as tp

ALPHA = 0.05
DELTA = 0.01  # one point of score
STRATA = 20
SD = 0.16  # per-deal SD of a stratum's difference (score), as the engine gives with 4 copies
RHO = 0.21  # between-strata correlation of a deal, the largest the engine showed
PLAN = tp.PowerPlan(delta=DELTA, alpha=ALPHA, games=200, max_games=3200)
REPS = 300
# Monte Carlo slack: the bound α plus two binomial SEs of the estimate at α
SLACK = 2 * np.sqrt(ALPHA * (1 - ALPHA) / REPS)


@pytest.fixture(autouse=True)
def _no_gc_in_multipletests(monkeypatch):
    """statsmodels' Holm calls gc.collect() on every call (85 ms with a test
    session's heap); the thousands of looks simulated here do not need it."""
    import gc

    monkeypatch.setattr(gc, "collect", lambda *args: 0)


def _draw(rng, effects: np.ndarray, deals: int) -> np.ndarray:
    """Per-deal differences [card, stratum, deal]: a shared shock per deal
    (correlation RHO across the card's strata) plus each stratum's own."""
    k = len(effects)
    shared = rng.standard_normal((k, 1, deals))
    own = rng.standard_normal((k, STRATA, deals))
    return effects[:, None, None] + SD * (np.sqrt(RHO) * shared + np.sqrt(1 - RHO) * own)


def _measure(data: np.ndarray, naive: bool = False):
    """The ``measure`` callback of :func:`tp.sequential` on pre-drawn data: a
    card's first n/2 deals of every stratum (``naive``: the old SE that adds
    the strata variances as if independent)."""

    def measure(n_of: dict, active: set, look: int) -> pd.DataFrame:
        rows = []
        for c in range(data.shape[0]):
            st = tp.pool_strata(list(data[c, :, : n_of[c] // 2]))
            se = st["se_independent"] if naive else st["se"]
            sd = se * np.sqrt(n_of[c] // 2)
            rows.append(
                {
                    "row": c,
                    "effect": st["mean"],
                    "se": se,
                    "sd": sd,
                    "games": st["n_games"],
                    "strata": st["strata"],
                }
            )
        return pd.DataFrame(rows)

    return measure


def _run(effects, seed: int, naive: bool = False, reps: int = REPS):
    """Verdict tables of ``reps`` replications of the whole staged procedure."""
    rng = np.random.default_rng(seed)
    effects = np.asarray(effects, dtype=float)
    out = []
    for _ in range(reps):
        data = _draw(rng, effects, PLAN.max_games // 2)
        table, _, _ = tp.sequential(
            PLAN, list(range(len(effects))), _measure(data, naive), n_looks=1 if naive else None
        )
        out.append(table)
    return out


def test_the_plan_has_five_looks_and_spends_alpha_over_them():
    assert tp.looks(PLAN) == 5  # 200, 400, 800, 1600, 3200 games a run
    assert tp.looks(replace(PLAN, max_games=200)) == 1
    assert tp.looks(replace(PLAN, max_games=1000)) == 4  # 200, 400, 800, 1000
    t = tp.decide(
        pd.DataFrame({"effect": [0.0], "se": [0.001], "sd": [0.1], "games": [1000]}),
        DELTA,
        ALPHA,
        n_looks=5,
    )
    assert t["alpha_look"].iloc[0] == pytest.approx(0.01)


@pytest.mark.slow
def test_a_card_exactly_at_the_margin_is_wrongly_called_equal_at_most_alpha():
    # two cards at +δ and −δ (the TOST's hardest case), three at 0 beside them
    tables = _run([DELTA, -DELTA, 0.0, 0.0, 0.0], seed=1)
    wrong = np.mean(
        [t["verdict"].iloc[i] in ("equal", "equal within margin") for t in tables for i in (0, 1)]
    )
    print(f"P(wrongly equal | effect = ±δ) = {wrong:.3f} over {2 * REPS} cards")
    assert wrong <= ALPHA + SLACK, wrong
    # and the procedure still decides the cards at 0: equality is shown for most
    shown = np.mean(
        [
            t["verdict"].iloc[i] in ("equal", "equal within margin")
            for t in tables
            for i in (2, 3, 4)
        ]
    )
    assert shown > 0.5, shown


@pytest.mark.slow
def test_when_every_card_is_equal_none_is_called_different_at_most_alpha():
    tables = _run([0.0] * 8, seed=2)
    any_wrong = np.mean([(t["direction"] != "").any() for t in tables])  # familywise
    print(f"P(any card wrongly different | all equal) = {any_wrong:.3f} over {REPS} families")
    assert any_wrong <= ALPHA + SLACK, any_wrong


@pytest.mark.slow
def test_the_procedure_detects_a_card_two_margins_off():
    # power, so the two tests above cannot pass by deciding nothing
    tables = _run([2 * DELTA, -2 * DELTA, 0.0], seed=3, reps=50)
    found = np.mean(
        [
            t["direction"].iloc[0] == "stronger" and t["direction"].iloc[1] == "weaker"
            for t in tables
        ]
    )
    print(f"P(both cards 2δ off detected) = {found:.3f}")
    assert found > 0.9, found


@pytest.mark.slow
def test_the_old_procedure_fails_the_bound_on_the_same_data():
    # no α spent over the looks and the strata added as if independent: the
    # procedure issue 15 measured. Same draws as the test at the margin.
    tables = _run([DELTA, -DELTA, 0.0, 0.0, 0.0], seed=1, naive=True, reps=100)
    wrong = np.mean(
        [t["verdict"].iloc[i] in ("equal", "equal within margin") for t in tables for i in (0, 1)]
    )
    print(f"old procedure: P(wrongly equal | effect = ±δ) = {wrong:.3f}")
    assert wrong > ALPHA + SLACK, wrong


# --------------------------------------------------------------------------- on the engine
@pytest.mark.slow
def test_clones_of_the_neutral_card_are_never_called_different(tmp_path):
    """Issue 15: "on the engine, a set of clones of the neutral card must come
    out with no 'not equal'". Three clones (new names and ids, the neutral's
    stats; rows after every card of the set) swapped in as the plan does."""
    from balance.games.trisk.cards import load_card_set

    cs = load_card_set("reference")
    doc = tp.load_toml(cs.path)
    raw = next(c for c in doc["card"] if c["name"] == cs.names[cs.neutral])
    text = cs.path.read_text(encoding="utf-8")
    clones = [f"Clay Twin {i}" for i in (1, 2, 3)]
    for i, name in enumerate(clones):
        card = {**raw, "id": 9000 + i, "name": name}
        text += "\n[[card]]\n" + "".join(f"{k} = {tp._toml_value(v)}\n" for k, v in card.items())
    path = tmp_path / "clones.toml"
    path.write_text(text, encoding="utf-8")
    plan = replace(
        tp.load_plan(),
        card_set=str(path),
        cards=tuple(clones),
        games=100,
        max_games=200,
        restricted_games=100,
        check_strategy=None,
        calibration_games=0,
        finishes_games=0,
    )
    res = tp.run_power(
        plan,
        results=tmp_path / "store",
        progress=False,
        threads=1,
        regression=False,
        finishes=False,
    )
    assert list(res.cards["card"]) != [] and set(res.cards["card"]) == set(clones)
    assert not (res.cards["verdict"] == "not equal").any(), res.cards[["card", "label"]]
    assert (res.cards["direction"] == "").all(), res.cards[["card", "label"]]
    # every clone was played in all 100 strata (10 Primals x 10 field decks)
    assert (res.cards["strata"] == 100).all()
    # and more than that: a clone plays exactly as the neutral card (the engine
    # never reads a card's row or name), so every paired deal differs by 0
    assert (res.cards["effect"] == 0).all() and (res.cards["se"] == 0).all()
