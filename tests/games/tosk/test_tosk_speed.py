"""Tosk's fast paths against their references, and the profile's bookkeeping
(``sims.tosk.profile``). Nothing here is timed against a figure."""

from __future__ import annotations

import numpy as np
import pytest

from balance.config import load_strategy, resolve_variant
from kernels import rng
from sims import tosk
from strategies import tosk as strat_mod
from strategies.tosk.view import (
    I_CAPACITY,
    I_MAX_HAND,
    I_MY_HAND,
    I_MY_HP,
    I_OPP_ATK_SUM,
    I_OPP_DEF_SUM,
    I_OPP_HP,
    I_OPP_REVEALS,
    I_START_HP,
    N_INFO,
)
from tests.games.tosk.test_tosk_rules import _random_rules

PARTS = ("enumerate and choose play", "choose heal", "state, draws and RNG")


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


@pytest.mark.slow  # 4,000 random states through both paths: 1.3-1.9 s
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


def _random_decision(g: np.random.Generator):
    """Rules, a hand, a strategy vector and a view for one play decision:
    printed rules half the time (the game loop's path without flags), random
    legal ones otherwise; weights drawn from a few round values (ties between
    candidates are common) or at random, some zero; a temperature a third of
    the time; now and then no prior weight before any reveal (an undefined
    expected opponent ATK and DEF: every score NaN)."""
    rules = (
        resolve_variant("tosk", "base").vector().copy() if g.random() < 0.5 else _random_rules(g)
    )
    if g.random() < 0.2:
        rules[tosk.R_FORCE] = rules[tosk.R_MOMENTUM] = 0
    n = int(g.integers(0, rules[tosk.R_MAX_HAND] + 1))
    cards = np.full(tosk.MAX_HAND, -1, dtype=np.int64)
    cards[:n] = g.choice(48, size=n, replace=False)
    forbidden = int(g.integers(0, 1 << 12)) if g.random() < 0.15 else 0
    strat = np.zeros(strat_mod.N_PARAMS)
    k = strat_mod.P_TEMP_PLAY
    if g.random() < 0.5:
        strat[:k] = g.choice([0.0, 0.0, 1.0, -1.0, 0.5, 2.0, -0.1], size=k)
    else:
        strat[:k] = g.normal(size=k) * (g.random(k) < 0.7)
    strat[strat_mod.P_TEMP_PLAY] = g.uniform(0.1, 3.0) if g.random() < 0.33 else 0.0
    strat[strat_mod.P_PRIOR_ATK] = g.uniform(0, 6)
    strat[strat_mod.P_PRIOR_DEF] = g.uniform(0, 4)
    strat[strat_mod.P_PRIOR_WEIGHT] = g.choice([0.0, 1.0, 3.0, 1e9])
    strat[strat_mod.P_FORBIDDEN] = forbidden
    info = np.zeros(N_INFO)
    start = float(rules[tosk.R_START_HP])
    info[I_START_HP] = start
    info[I_MY_HP] = float(g.integers(-3, start + 1))
    info[I_OPP_HP] = float(g.integers(-3, start + 1))
    info[I_MY_HAND] = n
    info[I_MAX_HAND] = rules[tosk.R_MAX_HAND]
    info[I_CAPACITY] = rules[tosk.R_CAPACITY]
    reveals = float(g.integers(0, 30))
    info[I_OPP_REVEALS] = reveals
    info[I_OPP_ATK_SUM] = float(g.integers(0, 8 * reveals + 1))
    info[I_OPP_DEF_SUM] = float(g.integers(0, 6 * reveals + 1))
    return rules, cards, n, forbidden, strat, info


@pytest.mark.slow
def test_choose_from_hand_matches_enumerate_then_choose():
    """The game loop's one-pass ``choose_from_hand`` picks the play (mask,
    cost, ATK, DEF) that ``choose_play`` picks among ``enumerate_plays``'
    candidates, and draws as much noise, on random rules, hands, strategies
    and views."""
    g = np.random.default_rng(2026)
    ws, front, cand, c_mask = tosk.workspace(tosk.MAX_HAND)
    ws2, front2, _, _ = tosk.workspace(tosk.MAX_HAND)
    tab = np.zeros((tosk.N_T, tosk.N_CARDS), dtype=np.int64)
    noise_ref = np.zeros(4, dtype=np.uint64)
    noise = np.zeros(4, dtype=np.uint64)
    seen = {"no flags": 0, "flags": 0, "temperature": 0, "technique": 0, "not empty": 0}
    for trial in range(6000):
        rules, cards, n, forbidden, strat, info = _random_decision(g)
        tosk.card_table(rules, forbidden, tab)
        rng.seed_state(noise_ref, 5, trial, rng.PURPOSE_GAME)
        noise[:] = noise_ref
        k = tosk.enumerate_plays(rules, cards, n, forbidden, ws, front, *cand, c_mask)
        j = strat_mod.choose_play(strat, info, *cand, k, noise_ref)
        want = (int(c_mask[j]), int(cand[2, j]), int(cand[0, j]), int(cand[1, j]))
        got = tosk.choose_from_hand(rules, tab, cards, n, ws2, front2, strat, info, noise)
        assert got == want, (trial, rules, cards[:n], forbidden, strat, info)
        assert np.array_equal(noise, noise_ref), trial  # the same draws
        plain = rules[tosk.R_FORCE] == 0 and rules[tosk.R_MOMENTUM] == 0
        forbidden_held = any((forbidden >> (int(c) // 4)) & 1 for c in cards[:n])
        seen["no flags" if plain and not forbidden_held else "flags"] += 1
        seen["temperature"] += strat[strat_mod.P_TEMP_PLAY] > 0
        seen["technique"] += cand[4, :k].any() or any(int(c) // 4 >= 9 for c in cards[:n])
        seen["not empty"] += want[0] != 0
    assert min(seen.values()) > 600, seen


def test_the_front_memo_survives_its_stamp_wrapping_around():
    """A decision stamps the memo of fronts instead of clearing it
    (``_new_memo``); when the stamp passes its largest value the row is
    cleared and stamps restart at 1. Decisions on either side of the wrap,
    on one workspace, choose what a fresh workspace chooses for each."""
    g = np.random.default_rng(77)
    ws, front, _, _ = tosk.workspace(tosk.MAX_HAND)
    ws[tosk.W_STAMP, 0] = tosk._MAX_STAMP - 40
    # entries left from the stamps' previous life (no points, stamps 1-40):
    # read after the wrap, they would hide plays
    cols = np.arange(ws.shape[1])
    ws[tosk.W_MEMO] = ((cols % 40 + 1) << 40) | 5
    tab = np.zeros((tosk.N_T, tosk.N_CARDS), dtype=np.int64)
    noise = np.zeros(4, dtype=np.uint64)
    stamps = []
    for _ in range(80):
        rules, cards, n, forbidden, strat, info = _random_decision(g)
        strat[strat_mod.P_TEMP_PLAY] = 0.0
        tosk.card_table(rules, forbidden, tab)
        ws_new, front_new, _, _ = tosk.workspace(tosk.MAX_HAND)
        want = tosk.choose_from_hand(rules, tab, cards, n, ws_new, front_new, strat, info, noise)
        got = tosk.choose_from_hand(rules, tab, cards, n, ws, front, strat, info, noise)
        assert got == want
        stamps.append(int(ws[tosk.W_STAMP, 0]))
    assert stamps[39] == tosk._MAX_STAMP and stamps[40] == 1 and stamps[-1] == 40
    # the wrap clears the row: a hand without a technique writes no entry
    ws[tosk.W_STAMP, 0] = tosk._MAX_STAMP
    ws[tosk.W_MEMO] = (1 << 40) | 5
    rules, cards, n, forbidden, strat, info = _random_decision(g)
    cards[:n] = np.arange(n) * 4  # ranks A, 2, 3, ...: no technique
    tosk.card_table(rules, forbidden, tab)
    tosk.choose_from_hand(rules, tab, cards, n, ws, front, strat, info, noise)
    assert ws[tosk.W_STAMP, 0] == 1 and not ws[tosk.W_MEMO].any()


def _heal_order_in_full(keeps):
    """The selection sort ``_heal_order`` did over the whole hand (before it
    stopped after the cards a heal may discard): the reference."""
    m = len(keeps)
    idx = list(range(m))
    for a in range(m):
        lo = a
        for b in range(a + 1, m):
            if keeps[idx[b]] < keeps[idx[lo]]:
                lo = b
        idx[a], idx[lo] = idx[lo], idx[a]
    return idx


def test_heal_order_sorts_the_least_wanted_first():
    """``_heal_order`` with at most ``h_max`` discards gives the first
    ``h_max`` positions (and their keep values) of the full selection sort,
    ties included (keep values drawn from a few levels)."""
    g = np.random.default_rng(9)
    kv = g.choice([-1.0, 0.0, 0.5, 2.0], size=tosk.N_CARDS)
    keeps = np.zeros(tosk.MAX_HAND)
    ks = np.zeros(tosk.MAX_HAND)
    idx = np.zeros(tosk.MAX_HAND, dtype=np.int64)
    ties = 0
    for _ in range(500):
        m = int(g.integers(1, tosk.MAX_HAND + 1))
        hand = np.full(tosk.MAX_HAND, -1, dtype=np.int64)
        hand[:m] = g.choice(tosk.N_CARDS, size=m, replace=False)
        h_max = int(g.integers(1, m + 1))
        tosk._heal_order(kv, hand, m, h_max, keeps, idx, ks)
        full = _heal_order_in_full([float(kv[c]) for c in hand[:m]])
        assert list(idx[:h_max]) == full[:h_max]
        assert list(ks[:h_max]) == [float(kv[hand[i]]) for i in full[:h_max]]
        ties += len(set(kv[hand[:m]])) < m
    assert ties > 100


@pytest.mark.parametrize("b", ["balanced", "random"])
@pytest.mark.slow
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


def test_written_out_min_and_max_are_pythons():
    """``play_score``'s ``fmin``/``fmax`` (written out for speed) return what
    Python's ``min``/``max`` return, bit for bit: ties and signed zeros keep
    the first argument, a NaN first argument is kept and a NaN second one is
    passed over, as ``min(a, b)`` does."""
    import math

    from numba import njit

    @njit
    def both(a, b):
        return strat_mod.fmin(a, b), strat_mod.fmax(a, b)

    g = np.random.default_rng(7)
    special = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan]
    pairs = [(a, b) for a in special for b in special]
    pairs += [tuple(x) for x in g.integers(-3, 4, size=(200, 2)).astype(float)]
    pairs += [tuple(x) for x in g.normal(size=(200, 2))]
    for a, b in pairs:
        lo, hi = both(a, b)
        for got, want in ((lo, min(a, b)), (hi, max(a, b))):
            assert np.float64(got).tobytes() == np.float64(want).tobytes(), (a, b, got, want)


@pytest.mark.slow
def test_play_score_skips_zero_weights_without_changing_a_score():
    """``play_score`` leaves out a costly term whose weight is 0 (it would
    add a zero): against the score with every term added (as first written),
    each score is the same float but for a zero's sign, so every comparison,
    and so every choice, is the same. Weights are mostly 0, some signed
    zeros, some huge; the views include a starting HP of 0 and a prior
    weight of 0 with no reveals (a context that is not finite: nothing is
    skipped then)."""
    import math

    from numba import njit

    fmin, fmax = strat_mod.fmin, strat_mod.fmax

    @njit(error_model="numpy")  # as the engine's kernels: x / 0 is inf or nan
    def dense(w, ctx, atk, dfn, cost, cards, wasted):
        opp_atk, opp_def, hurt, opp_hurt, room, temp, cap, opp_hp = ctx[:8]
        unspent = cap - cost
        draw = fmin(unspent, room + cards)
        dmg = fmax(0.0, atk - opp_def)
        exposed = fmax(0.0, opp_atk - dfn)
        s = (
            w[0] * atk
            + w[1] * dfn
            + w[2] * cost
            + w[3] * unspent
            + w[4] * cards
            + w[5] * draw
            + w[6] * dmg
            + w[7] * fmin(dfn, opp_atk)
            + w[9] * dfn * hurt
            + w[10] * atk * opp_hurt
            + w[11] * wasted
            + w[13] * exposed
        )
        if dmg >= opp_hp:
            s += w[8]
        if cards == 0:
            s += w[12]
        return s

    @njit(error_model="numpy")
    def both(w, info, cand, out):
        ctx = strat_mod.play_context(w, info)
        noise = np.zeros(4, np.uint64)
        for k in range(cand.shape[0]):
            a, d, c, n, x = cand[k]
            out[k, 0] = strat_mod.play_score(w, ctx, a, d, c, n, x, noise)
            out[k, 1] = dense(w, ctx, a, d, c, n, x)

    g = np.random.default_rng(11)
    seen_skips = seen_nonfinite = 0
    for trial in range(400):
        w = np.zeros(strat_mod.N_PARAMS)
        w[: strat_mod.NF] = np.where(
            g.random(strat_mod.NF) < 0.4, g.normal(size=strat_mod.NF) * 3, 0.0
        )
        w[: strat_mod.NF][g.random(strat_mod.NF) < 0.1] = -0.0
        if trial % 7 == 0:
            w[g.integers(0, strat_mod.NF)] = 1e308
        w[strat_mod.P_PRIOR_ATK], w[strat_mod.P_PRIOR_DEF] = g.uniform(0, 6, 2)
        w[strat_mod.P_PRIOR_WEIGHT] = 0.0 if trial % 5 == 0 else 10.0 ** g.uniform(-2, 9)
        info = np.zeros(N_INFO)
        info[I_START_HP] = 0.0 if trial % 11 == 0 else 20.0
        info[I_MY_HP], info[I_OPP_HP] = g.integers(-3, 21, 2)
        info[I_OPP_REVEALS] = 0 if trial % 5 == 0 else g.integers(0, 30)
        info[I_OPP_ATK_SUM], info[I_OPP_DEF_SUM] = g.integers(0, 200, 2)
        info[I_CAPACITY], info[I_MAX_HAND], info[I_MY_HAND] = 13, 7, g.integers(0, 8)
        cand = g.integers(0, 30, size=(50, 5)).astype(float)
        cand[:, 3] = g.integers(0, 8, 50)
        cand[:, 4] = g.integers(0, 3, 50)
        out = np.zeros((50, 2))
        both(w, info, cand, out)
        ctx = strat_mod.play_context(w, info)
        if not all(ctx[8:]):
            seen_skips += 1
        if not np.isfinite(ctx[:4]).all():
            seen_nonfinite += 1
            assert all(ctx[8:])
        for new, old in out:
            if new == 0.0 and old == 0.0:
                continue  # a zero's sign may differ
            assert np.float64(new).tobytes() == np.float64(old).tobytes(), (w, info, new, old)
            assert math.isnan(new) == math.isnan(old)
    assert seen_skips > 100 and seen_nonfinite > 30
