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

Issue 42: "not equal" was said of cards not shown outside the margin (a
failed TOST plus a detected difference). The issue-42 tests run the default
plan at the issue's precision (ten independent strata: SE 0.126 points at the
last look) and show cards inside the margin are not called "not equal", the
old rule on the same data does, and cards three margins off still are.
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


# the thousands of looks simulated here call statsmodels' Holm (tests.conftest.no_gc)
pytestmark = pytest.mark.usefixtures("no_gc")


def _draw(rng, effects: np.ndarray, deals: int, strata: int = STRATA, rho: float = RHO):
    """Per-deal differences [card, stratum, deal]: a shared shock per deal
    (correlation ``rho`` across the card's strata) plus each stratum's own."""
    k = len(effects)
    shared = rng.standard_normal((k, 1, deals))
    own = rng.standard_normal((k, strata, deals))
    return effects[:, None, None] + SD * (np.sqrt(rho) * shared + np.sqrt(1 - rho) * own)


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


def _run(
    effects,
    seed: int,
    naive: bool = False,
    reps: int = REPS,
    strata: int = STRATA,
    rho: float = RHO,
    plan: tp.PowerPlan = PLAN,
):
    """Verdict tables of ``reps`` replications of the whole staged procedure."""
    rng = np.random.default_rng(seed)
    effects = np.asarray(effects, dtype=float)
    out = []
    for _ in range(reps):
        data = _draw(rng, effects, plan.max_games // 2, strata, rho)
        table, _, _ = tp.sequential(
            plan, list(range(len(effects))), _measure(data, naive), n_looks=1 if naive else None
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
    # nor, at the margin, shown beyond it: "not equal" needs the interval wholly
    # outside ±δ (the hardest case for that test too), familywise
    outside = np.mean([(t["verdict"] == "not equal").any() for t in tables])
    print(f"P(any card wrongly not equal | |effect| <= δ) = {outside:.3f} over {REPS} families")
    assert outside <= ALPHA + SLACK, outside
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


# --------------------------------------------------------------------------- issue 42
# The issue's card: truly at +0.8 points (inside δ = 1) and measured to about
# ±0.12 points at the last look. Strata on their own seeds are independent
# (rho 0, what run_power plays); ten of them with the engine's per-deal SD give
# an SE of 0.16 / sqrt(10) / sqrt(1,600 deals) = 0.126 points at 3,200 games a run.
ISSUE_STRATA = 10
ISSUE_SE_LAST = SD / np.sqrt(ISSUE_STRATA) / np.sqrt(PLAN.max_games // 2)
DEFAULT = tp.load_plan()  # configs/trisk/power.toml


def test_the_simulations_use_the_default_plan():
    assert (DEFAULT.games, DEFAULT.max_games, DEFAULT.delta, DEFAULT.alpha) == (
        PLAN.games,
        PLAN.max_games,
        PLAN.delta,
        PLAN.alpha,
    )
    assert 0.0011 < ISSUE_SE_LAST < 0.0013  # "measured to ±0.12" points


@pytest.mark.slow
def test_cards_inside_the_margin_are_never_called_not_equal():
    """Issue 42: a set of 11 cards truly at +0.8 points "gets 'the claim does
    not hold' every time" (a failed TOST was read as "not equal"). Now: "not
    equal" needs the interval wholly beyond ±δ, so such cards are "not shown
    equal" (or shown equal), and the claim is not shown, never rejected."""
    tables = _run([0.008] * 11, seed=42, reps=REPS, strata=ISSUE_STRATA, rho=0.0, plan=DEFAULT)
    cards = pd.concat(tables)
    not_equal = np.mean(cards["verdict"] == "not equal")
    claims = [tp.claim(t["verdict"])["status"] for t in tables]
    rejected = np.mean([c == "does not hold" for c in claims])
    se_last = cards.loc[cards["games"] == cards["games"].max(), "se"].median()
    print(
        f"+0.8 points, 11 cards x {REPS}: not equal {not_equal:.4f} of cards, claim does not "
        f"hold {rejected:.3f} of sets; verdicts {cards['verdict'].value_counts().to_dict()}; "
        f"SE at the last look {se_last * 100:.3f} points"
    )
    assert 0.0011 < se_last < 0.0014  # the issue's precision
    assert not_equal <= ALPHA, not_equal
    # the guarantee is familywise: P(some card of a set within ±δ is "not
    # equal") <= α (measured at exactly ±δ above). At +0.8 it is far below: an
    # estimate 3.5 SEs above the truth at the first look (SE 0.5 points) is
    # needed, about 0.4% of sets of 11 by the normal approximation; "never" is
    # what no level-α test can promise
    assert rejected <= 0.01, rejected
    # the old rule on the same data: a difference detected and the TOST failed
    old = cards["significant"] & ~cards["equivalent"]
    old_sets = np.mean([(t["significant"] & ~t["equivalent"]).any() for t in tables])
    print(f"old rule: 'not equal' for {old.mean():.3f} of the same cards, {old_sets:.3f} of sets")
    assert old.mean() > 0.5 and old_sets > 0.9, (old.mean(), old_sets)


@pytest.mark.slow
def test_a_card_three_margins_off_is_shown_not_equal():
    """Power: a card at +3 points (and one at −3) is "not equal" at least 90%
    of the time at the default plan, beside eight cards inside the margin
    (a Holm family of ten)."""
    effects = [0.03, -0.03] + [0.0, 0.005, -0.005, 0.008, -0.008, 0.0, 0.002, -0.002]
    for strata, rho in ((ISSUE_STRATA, 0.0), (STRATA, RHO)):
        tables = _run(effects, seed=43, reps=100, strata=strata, rho=rho, plan=DEFAULT)
        found = np.mean([t["verdict"].iloc[i] == "not equal" for t in tables for i in (0, 1)])
        signs = all(
            t["direction"].iloc[0] == "stronger"
            for t in tables
            if t["verdict"].iloc[0] == "not equal"
        )
        print(f"strata {strata}, rho {rho}: P(+-3 points called not equal) = {found:.3f}")
        assert found >= 0.9, found
        assert signs


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
