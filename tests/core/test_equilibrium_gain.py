"""The gain interval of a best response (``balance.oracle.gain_interval``):
its measured coverage where the normal interval is fine, and where it is not
(nearly every deal drawn: the normal SE is 0 or rests on a handful of deals)."""

from __future__ import annotations

import numpy as np
import pytest

from balance.oracle import gain_interval


def coverage(probs, n_deals: int, reps: int, seed: int) -> float:
    """Share of ``reps`` samples of ``n_deals`` deals (scores 0, ¼, ½, ¾, 1
    with ``probs``) whose interval holds the true gain."""
    values = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
    true = float(values @ probs) - 0.5
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(reps):
        g = gain_interval(rng.choice(values, size=n_deals, p=probs))
        hits += g["lo"] <= true <= g["hi"]
    return hits / reps


def test_an_all_drawn_sample_gets_an_interval_not_a_point():
    g = gain_interval(np.full(2000, 0.5))
    assert g["mean"] == 0 and g["se"] == 0
    # ½ · Clopper–Pearson's upper bound of 0 of 2,000 deals above ½: 0.092 points
    assert 0.0009 < g["hi"] < 0.00093 and g["lo"] == -g["hi"]


@pytest.mark.parametrize(
    "probs, floor",
    [
        # a response that wins one deal in a thousand, every other deal drawn:
        # the normal interval alone covers about 86% (measured below)
        ((0.0, 0.0, 0.999, 0.0, 0.001), 0.95),
        # rare deviations both ways
        ((0.0005, 0.0, 0.998, 0.0, 0.0015), 0.95),
        # an ordinary spread of deal scores around a +3 point gain
        ((0.15, 0.2, 0.25, 0.2, 0.2), 0.94),
        # a response that wins nearly everything (Clash's responses gain 25-50 points)
        ((0.0, 0.0, 0.003, 0.01, 0.987), 0.94),
    ],
)
def test_the_gain_interval_covers(probs, floor):
    got = coverage(np.array(probs), 2000, 2000, seed=11)
    assert got >= floor, got


def test_the_normal_interval_alone_does_not_cover_rare_wins():
    """Why the Clopper–Pearson side exists: with one deal in a thousand won,
    the plain normal interval misses the true gain far more than 5% of the
    time (whenever no deal, or one, was won)."""
    from balance import stats

    rng = np.random.default_rng(5)
    values = np.array([0.5, 1.0])
    true = 0.5 * 0.001
    hits = 0
    for _ in range(2000):
        d = stats.paired_diff(rng.choice(values, size=2000, p=(0.999, 0.001)) - 0.5)
        hits += d["lo"] <= true <= d["hi"]
    assert hits / 2000 < 0.90
