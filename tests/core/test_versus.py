"""The per-property verdict of a ruleset against base (``balance.versus``):
every branch on constructed figures, and its error rate by simulation: two
rulesets with the same true value are called "closer" or "further" in at most
5% of runs (the difference's 95% interval must exclude 0 first)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from balance import stats, versus
from balance.versus import AS_FAR, BOTH_INSIDE, CLOSER, FURTHER, NO_CHANGE, NOT_JUDGED

SEAT = (0.47, 0.53)


def fig(mean, se=0.01, n=1000):
    return {"mean": mean, "se": se, "lo": mean - 1.96 * se, "hi": mean + 1.96 * se, "n": n}


def test_distance_to_a_target_range():
    assert versus.distance(0.50, SEAT) == 0.0
    assert versus.distance(0.60, SEAT) == pytest.approx(0.07)
    assert versus.distance(0.40, SEAT) == pytest.approx(0.07)
    assert versus.distance(0.20, (None, 0.10)) == pytest.approx(0.10)
    assert versus.distance(1.0, (2, None)) == 1.0
    assert versus.distance(3.0, (2, None)) == 0.0
    assert math.isnan(versus.distance(0.5, None))


@pytest.mark.parametrize(
    ("base", "other", "target", "verdict"),
    [
        (0.60, 0.50, SEAT, CLOSER),  # from outside to inside
        (0.60, 0.56, SEAT, CLOSER),  # outside, nearer
        (0.50, 0.60, SEAT, FURTHER),  # from inside to outside
        (0.40, 0.30, SEAT, FURTHER),  # below, further below
        (0.60, 0.601, SEAT, NO_CHANGE),  # the interval holds 0
        (0.48, 0.52, SEAT, BOTH_INSIDE),  # shown, both estimates inside
        (1.0, 0.0, (0.25, 0.75), AS_FAR),  # across the range, equally far
        (0.20, 0.05, (None, 0.10), CLOSER),  # an open lower end (draws, round cap)
        (0.05, 0.20, (None, 0.10), FURTHER),
        (1.0, 3.0, (2, None), CLOSER),  # an open upper end (support)
        (0.10, 0.20, None, NOT_JUDGED),  # no target: shown, not judged
        (0.10, 0.101, None, NO_CHANGE),
    ],
)
def test_every_branch(base, other, target, verdict):
    r = versus.versus_base("p", fig(base), fig(other), target)
    assert r["verdict"] == verdict
    assert r["shown"] == (verdict != NO_CHANGE)
    assert r["diff"] == pytest.approx(other - base)
    se = math.hypot(0.01, 0.01)  # independent searches: SE = sqrt(se_a² + se_b²)
    assert r["diff_se"] == pytest.approx(se)
    assert r["diff_lo"] == pytest.approx(other - base - 1.959964 * se)
    assert r["diff_hi"] == pytest.approx(other - base + 1.959964 * se)


def test_a_given_paired_difference_is_used():
    # the independent SE would hold 0 (±2.8 points); a paired difference on common
    # deals is far tighter and shows the change
    b, o = fig(0.56), fig(0.55)
    assert versus.versus_base("p", b, o, SEAT)["verdict"] == NO_CHANGE
    paired = {"mean": -0.01, "lo": -0.015, "hi": -0.005}
    r = versus.versus_base("p", b, o, SEAT, diff=paired)
    assert r["verdict"] == CLOSER and r["diff_hi"] == -0.005


def test_se_from_a_bootstrap_range_and_missing_figures():
    # a support size: value and a bootstrap range, no se
    b = {"value": 1, "lo": 1, "hi": 1}
    o = {"value": 3, "lo": 2, "hi": 4}
    r = versus.versus_base("support", b, o, (2, None))
    assert r["diff_se"] == pytest.approx(2 / (2 * 1.959964))
    assert r["verdict"] == CLOSER
    r = versus.versus_base("support", b, {"value": 2, "lo": 1, "hi": 5}, (2, None))
    assert r["verdict"] == NO_CHANGE  # the range is too wide to show the change
    nan = {"mean": float("nan"), "se": float("nan"), "lo": None, "hi": None}
    assert versus.versus_base("p", fig(0.5), nan, SEAT)["verdict"] == NO_CHANGE


@pytest.mark.parametrize(
    ("base", "other", "verdict"),
    [
        ("yes", "no", CLOSER),
        ("no", "yes", FURTHER),
        ("yes", "yes", NO_CHANGE),
        ("no", "no", NO_CHANGE),
        ("not shown", "no", NO_CHANGE),
        ("yes", "not shown", NO_CHANGE),
    ],
)
def test_a_three_valued_property(base, other, verdict):
    assert versus.versus_status("dominant", base, other, "no")["verdict"] == verdict


def test_the_ruleset_line():
    rows = [
        {"property": "a", "label": "seat fairness", "verdict": CLOSER},
        {"property": "b", "label": "game length", "verdict": BOTH_INSIDE},
        {"property": "c", "label": "draws", "verdict": NO_CHANGE},
    ]
    line = versus.ruleset_line("force", rows, "base", "under equilibrium play")
    assert line == (
        "force vs base under equilibrium play: closer on seat fairness; further on none; "
        "no change shown on draws; changed, both within target on game length"
    )


def test_the_ruleset_line_says_where_a_moved_property_now_stands():
    """ "closer on draws (still fails)": an improvement that still misses its
    target says so, from the ruleset's own interval against the target."""
    rows = [
        {"property": "d", "label": "draws", "verdict": CLOSER, "value_status": "fails"},
        {"property": "r", "label": "round-cap share", "verdict": CLOSER, "value_status": "meets"},
        {"property": "s", "label": "seat fairness", "verdict": FURTHER, "value_status": "unclear"},
        {"property": "l", "label": "game length", "verdict": FURTHER, "value_status": "fails"},
        {"property": "x", "label": "support size", "verdict": NO_CHANGE, "value_status": "fails"},
    ]
    line = versus.ruleset_line("force", rows, "base", "under equilibrium play")
    assert line == (
        "force vs base under equilibrium play: closer on draws (still fails), round-cap share "
        "(now meets); further on seat fairness (unclear), game length (fails); no change shown "
        "on support size"
    )


def _seat_share(rng, p: float, deals: int) -> dict:
    """The first seat's share of decided games as the equilibrium's ``play``
    measures it: each deal played twice (seats swapped), clustered by deal."""
    y = rng.binomial(2, p, size=deals).astype(float)
    return stats.cluster_mean(y, np.full(deals, 2.0), bounds=(0.0, 1.0))


@pytest.mark.slow
@pytest.mark.parametrize("p", [0.56, 0.50])  # outside the target, and inside it
def test_same_true_value_is_rarely_called_closer_or_further(p):
    rng = np.random.default_rng(44)
    runs, deals = 4000, 400
    moved = 0
    for _ in range(runs):
        r = versus.versus_base("seat", _seat_share(rng, p, deals), _seat_share(rng, p, deals), SEAT)
        moved += r["verdict"] in (CLOSER, FURTHER)
    rate = moved / runs
    # the rule's nominal rate is 5% (a two-sided 95% interval must miss 0), so a
    # measured rate scatters around 5%: the test fails when the rate is shown
    # above 5% at the 99.9% level (a sound rule fails it in 1 of 2,000 seeds; a
    # rule at 7% fails it nearly always). Measured: 5.8% [5.1, 6.6] at 0.56 and
    # 4.6% at 0.50 with this seed; 5.04% and 5.08% over 10,000 runs at 0.56 with
    # seeds 1 and 2; one search's SE alone instead of sqrt(se_a² + se_b²): 16.8%
    lo, hi = stats.wilson(moved, runs, alpha=0.001)
    print(
        f"p={p}: closer/further in {100 * rate:.1f}% of {runs} runs [{100 * lo:.1f}, {100 * hi:.1f}]"
    )
    assert lo <= 0.05


@pytest.mark.slow
def test_a_real_move_is_seen():
    # base truly 0.56 (3 points above the target), the ruleset truly 0.50: the
    # difference is 6 points, 4.8 SE at 1,600 deals each (a deal's share has
    # variance p(1-p)/2: SE 0.88 points per ruleset, 1.25 for the difference)
    rng = np.random.default_rng(45)
    runs = 500
    closer = sum(
        versus.versus_base(
            "seat", _seat_share(rng, 0.56, 1600), _seat_share(rng, 0.50, 1600), SEAT
        )["verdict"]
        == CLOSER
        for _ in range(runs)
    )
    print(f"closer in {closer} of {runs} runs")
    assert closer / runs >= 0.9


def test_each_value_carries_its_own_status_against_the_target():
    r = versus.versus_base("p", fig(0.60), fig(0.50, se=0.005), SEAT)
    assert (r["base_status"], r["value_status"]) == ("fails", "meets")
    assert r["base_lo"] == pytest.approx(0.60 - 0.0196) and r["value_n"] == 1000
    r = versus.versus_base("p", fig(0.52), fig(0.50), SEAT)  # 0.52 ± 1.96: straddles 0.53
    assert r["base_status"] == "unclear"
    assert versus.versus_base("p", fig(0.5), fig(0.5), None)["value_status"] is None
