"""Tosk's fast paths against their references, and the profile's bookkeeping
(``sims.tosk.profile``). Nothing here is timed against a figure."""

from __future__ import annotations

import numpy as np
import pytest

from balance.config import load_strategy, resolve_variant
from sims import tosk

PARTS = ("enumerate plays", "choose play", "choose heal", "state, draws and RNG")


def _random_front_state(g: np.random.Generator):
    """Workspace rows for ``_front``: up to 8 actions with printed pips, each
    in one of four groups, their subsets' packed sums, and a random count of
    techniques per group."""
    ws = tosk.workspace(tosk.MAX_HAND)[0]
    n = int(g.integers(0, tosk.MAX_HAND + 1))
    ranks = g.integers(0, tosk.FIRST_TECHNIQUE, size=n)
    groups = g.integers(0, 4 if g.random() < 0.7 else 2, size=n)
    ws[tosk.W_GACT, :4] = 0
    for j in range(n):
        ws[tosk.W_ATK, j] = tosk.PIP_ATK[ranks[j]]
        ws[tosk.W_DEF, j] = tosk.PIP_DEF[ranks[j]]
        ws[tosk.W_GACT, groups[j]] |= 1 << j
    for x in range(1 << n):  # what enumerate_plays leaves there: each subset's packed sums
        bits = [j for j in range(n) if (x >> j) & 1]
        ws[tosk.W_M_PACK, x] = (
            (sum(int(ws[tosk.W_ATK, j]) for j in bits) << tosk._F_ATK)
            | (sum(int(ws[tosk.W_DEF, j]) for j in bits) << tosk._F_DEF)
            | (len(bits) << tosk._F_N)
        )
    tg = 0
    for grp in range(4):
        t = int(g.choice([0, 0, 1, 1, 1, 2, 2, 3, 4]))
        tg |= t << (4 * grp)
    rel = int(g.integers(0, 1 << n)) if n else 0
    return ws, rel, tg


def test_front_matches_the_group_by_group_reference():
    """``_front``'s shortcuts (no choice; one group choosing one action) give
    the same front, order and wasted count as ``_front_dp`` on random states."""
    g = np.random.default_rng(41)
    front = np.zeros(64, dtype=np.int64)
    ref = np.zeros(64, dtype=np.int64)
    shortcut = general = 0
    for _ in range(4000):
        ws, rel, tg = _random_front_state(g)
        if tg == 0:
            continue
        count, wasted = tosk._front(rel, tg, ws.copy(), front, 3)
        count_r, wasted_r = tosk._front_dp(rel, tg, ws.copy(), ref, 3)
        assert (count, wasted) == (count_r, wasted_r), (rel, tg)
        assert np.array_equal(front[3 : 3 + count], ref[3 : 3 + count]), (rel, tg)
        choices = [
            ((tg >> (4 * grp)) & 15, bin(rel & int(ws[tosk.W_GACT, grp])).count("1"))
            for grp in range(4)
        ]
        choosing = [(t, m) for t, m in choices if 0 < t < m]
        if not choosing or (len(choosing) == 1 and choosing[0][0] == 1):
            shortcut += 1
        else:
            general += 1
    assert shortcut > 1000 and general > 100  # both ways were exercised


@pytest.mark.parametrize("b", ["balanced", "random"])
def test_profile_parts_are_positive_and_sum_to_the_total(b):
    """``profile`` replays the recorded decisions (checking the replayed choices
    against the games for a strategy without noise) and splits each game's
    time into parts that add up to the total."""
    rs = resolve_variant("tosk", "base")
    a = load_strategy("tosk", "balanced").vector()
    prof = tosk.profile(rs.vector(), a, load_strategy("tosk", b).vector(), 3, 60)
    assert tuple(prof) == (*PARTS, "total")
    assert all(prof[k] > 0.0 for k in PARTS), prof
    assert sum(prof[k] for k in PARTS) == pytest.approx(prof["total"], rel=1e-9)


def test_profile_takes_seat_swapped_pairs():
    rules = resolve_variant("tosk", "base").vector()
    a = load_strategy("tosk", "balanced").vector()
    with pytest.raises(ValueError, match="even"):
        tosk.profile(rules, a, a, 1, 7)
