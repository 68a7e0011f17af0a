"""The strategy kernel's mixed choices: ``_pick`` draws a candidate with
softmax(score / temperature) probabilities by inverting one uniform, and
plays the first best score at temperature 0; ``_coin`` is its two-way form
(logistic). Frequencies are checked against the exact probabilities with a
binomial tolerance of 5 standard errors (a wrong sampler is off by far more)."""

import numpy as np
import pytest

from kernels import rng
from strategies.clash import SC_ID, SC_SCORE, SCRATCH, _coin, _pick


def _draws(scores, temp, n=40_000, seed=3):
    sc = np.zeros(SCRATCH)
    state = np.zeros(4, np.uint64)
    rng.seed_state(state, seed, 0, rng.PURPOSE_SEAT0)
    counts = np.zeros(len(scores), np.int64)
    for _ in range(n):
        for i, s in enumerate(scores):
            sc[SC_SCORE + i] = s
            sc[SC_ID + i] = 10 + i  # ids are returned, not positions
        counts[_pick(sc, len(scores), temp, state) - 10] += 1
    return counts


@pytest.mark.parametrize(
    "scores,temp",
    [
        ([0.0, 0.0, 0.0], 1.0),
        ([1.0, 0.0, -2.0, 0.5], 0.7),
        ([3.0, 2.9], 0.1),
        ([-40.0, 0.0, -60.0], 1.0),
    ],
)
def test_pick_follows_the_softmax(scores, temp):
    n = 40_000
    counts = _draws(scores, temp, n)
    p = np.exp((np.array(scores) - max(scores)) / temp)
    p /= p.sum()
    se = np.sqrt(p * (1 - p) / n)
    assert np.all(np.abs(counts / n - p) <= 5 * se + 1e-12), (counts / n, p)


def test_pick_at_temperature_zero_is_the_first_best():
    counts = _draws([1.0, 2.0, 2.0, 0.0], 0.0, n=100)
    assert counts.tolist() == [0, 100, 0, 0]


@pytest.mark.parametrize("s,temp", [(0.0, 1.0), (1.0, 0.5), (-2.0, 1.5)])
def test_coin_is_logistic(s, temp):
    state = np.zeros(4, np.uint64)
    rng.seed_state(state, 9, 0, rng.PURPOSE_SEAT0)
    n = 40_000
    k = sum(_coin(s, temp, state) for _ in range(n))
    p = 1 / (1 + np.exp(-s / temp))
    assert abs(k / n - p) <= 5 * np.sqrt(p * (1 - p) / n)


def test_coin_at_temperature_zero():
    state = np.zeros(4, np.uint64)
    assert _coin(0.1, 0.0, state) and not _coin(0.0, 0.0, state) and not _coin(-1.0, 0.0, state)
