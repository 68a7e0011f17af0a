"""The four-suits RPG engine: invariants over many struggles for every
strategy and every variant, traces replayed card count by card count,
reproducibility of the Task kernels and without JIT, seat symmetry in every
variant, and the Task kernels against the exact oracle (``sims.suits_oracle``)
with a negative control that proves the statistical check has power. What
every engine must do (same seed same games, thread and batch invariance,
trace = simulate) is tests/core/test_conformance.py.

Statistical checks use fixed seeds (they cannot flake) and a Wilson interval
at z = 4.5 (two-sided alpha 6.8e-6 per check, about 1e-3 over the ~100 checks
of this file: Bonferroni-safe).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numba
import numpy as np
import pytest
from scipy.stats import norm
from statsmodels.stats.proportion import proportion_confint

from balance.config import all_variant_combinations, load_strategy, resolve_variant
from kernels import rng
from sims import suits as S
from sims.suits import MODE_DIFFICULT, MODE_EITHER, MODE_IN_SUIT
from sims.suits_oracle import task_odds
from tests import ROOT

VARIANTS = all_variant_combinations("suits")
SCRIPTED = [
    f"{a}-{d}-{g}" for a in ("high", "low") for d in ("defend", "absorb") for g in ("hand", "deck")
]
NAMES = SCRIPTED + ["random"]
PAIRS = [(n, "high-defend-hand") for n in SCRIPTED] + [("random", "random")]
SEED = 20240611
Z = 4.5
ALPHA = 2 * norm.sf(Z)
HAND, DECK = 5, 54


@pytest.fixture(scope="module")
def rules() -> dict[str, np.ndarray]:
    return {v: resolve_variant("suits", v).vector() for v in VARIANTS}


@pytest.fixture(scope="module")
def strat() -> dict[str, np.ndarray]:
    return {n: load_strategy("suits", n).vector() for n in NAMES}


def within(count, n, exact) -> bool:
    lo, hi = proportion_confint(int(count), int(n), alpha=ALPHA, method="wilson")
    return lo <= float(exact) <= hi


def test_every_variant_and_strategy_is_covered():
    assert len(VARIANTS) == 16 and "suited-struggles+to-the-death" in VARIANTS
    shipped = sorted(p.stem for p in (ROOT / "strategies" / "suits").glob("*.toml"))
    assert shipped == sorted([*NAMES, "tuned"])  # the policies and the shipped tuned strategy


# ---------------------------------------------------------------------- invariants
def _check_invariants(o: dict, rv: np.ndarray, n: int) -> dict:
    """Every per-game invariant of ``simulate``'s arrays; returns a few counts."""
    assert all(len(v) == n for v in o.values())
    suited, death = bool(rv[S.R_SUITS]), bool(rv[S.R_END])
    refill, cap = bool(rv[S.R_REFILL_DAMAGE]), int(rv[S.R_MAX_ROUNDS])
    w, reason = o["winner_seat"], o["reason"]
    dis = np.stack([o["disabled_seat0"], o["disabled_seat1"]])
    dead = np.stack([o["dead_seat0"], o["dead_seat1"]])
    left = np.stack([o["left_seat0"], o["left_seat1"]])
    assert np.all(o["conserved"] == 1)
    assert o["max_hand"].max() == HAND and o["max_hand"].min() >= 1
    assert np.isin(w, [-1, 0, 1]).all() and np.isin(reason, [0, 1, 2, 3]).all()
    assert np.all((left >= 0) & (left <= DECK - 1))  # one card lies on the table
    assert np.all((o["rounds"] >= 1) & (o["rounds"] <= cap))
    assert np.array_equal(o["a_seat"], np.arange(n) % 2)
    assert np.array_equal(o["a_points"], np.where(w < 0, 1, np.where(w == o["a_seat"], 2, 0)))
    assert np.isin(o["first_seat"], [0, 1]).all()
    assert np.array_equal(
        o["first_result"], np.where(w < 0, 1, np.where(w == o["first_seat"], 2, 0))
    )
    ic = np.stack([o["initiative_card_seat0"], o["initiative_card_seat1"]])
    assert np.all((ic >= 0) & (ic < DECK))
    # counts of the exchanges
    assert np.all(o["answers"] <= o["exchanges"]) and np.all(o["ties"] <= o["answers"])
    assert np.all(o["hits_seat0"] + o["hits_seat1"] <= o["exchanges"])
    assert np.all(o["exchanges"] >= 1)
    played = 2 * (DECK - 1) - left.sum(axis=0)  # cards gone from decks and hands
    gone = o["exchanges"] + o["answers"] + o["damage_seat0"] + o["damage_seat1"]
    if suited:  # a Difficult pair is two cards; an SD10 pass trades one
        assert np.all(played >= gone)
        assert np.all(played <= gone + o["exchanges"] + o["answers"] + o["passes"])
    else:
        assert np.array_equal(played, gone)
        assert o["passes"].max() <= 2  # only an empty hand over an empty deck passes
    assert np.all(o["damage_seat0"] <= DECK - 1 - left[1])
    assert np.all(o["damage_seat1"] <= DECK - 1 - left[0])
    # the first disabling and death
    for key in ("disabled_at", "dead_at"):
        at = o[key]
        assert np.all((at == -1) | ((at >= 1) & (at <= o["exchanges"])))
    assert np.array_equal(o["dead_at"] > 0, dead.any(axis=0))
    assert np.all(dis.any(axis=0)[o["disabled_at"] > 0])
    no_pass = o["passes"] == 0  # then every disabling happens in an attack
    assert np.array_equal((o["disabled_at"] > 0)[no_pass], dis.any(axis=0)[no_pass])
    # the end (S3, SD5)
    won = w >= 0
    ws, ls = w[won], 1 - w[won]
    cols = np.flatnonzero(won)
    loser_dead, loser_dis = dead[ls, cols], dis[ls, cols]
    assert np.all(dead[ws, cols] == 0)
    assert np.array_equal(reason[won] == S.END_DEAD, loser_dead == 1)
    assert np.all(np.isin(reason[won], [S.END_DEAD, S.END_DISABLED]))
    assert np.all(left[ls, cols][loser_dead == 1] == 0)
    # S3: a character left with no card was forced to discard its last ones (dead),
    # or played them out and was disabled by the draw that found its deck empty
    assert np.all((dead | dis)[left == 0])
    assert np.all(left[dead == 1] == 0)
    if death:
        assert not np.any(reason == S.END_DISABLED)
        assert np.all(loser_dead == 1)
    else:
        assert np.all(dis[ws, cols] == 0)  # the winner is still standing
        assert np.all((loser_dead == 1) | (loser_dis == 1))
        assert np.all(left[ls, cols][reason[won] == S.END_DISABLED] <= HAND)
    both = reason == S.END_BOTH
    assert np.all(w[both] == -1)
    if death:
        assert np.all((dead[0, both] & dead[1, both]) | (dis[0, both] & dis[1, both]))
    else:
        out = dis | dead
        assert np.all(out[0, both] & out[1, both])
    capped = reason == S.END_CAP
    assert np.all(w[capped] == -1) and np.all(o["rounds"][capped] == cap)
    if capped.any():
        # only to the death with suits, no refill after damage and passes that
        # do nothing (SD10 off): the stalemate of test_round_cap_is_a_stalemate
        # (one character disabled, the other stuck with no legal attack)
        assert suited and death and not refill and not rv[S.R_PASS_CYCLES]
        assert np.all(dis[:, capped].sum(axis=0) == 1) and not dead[:, capped].any()
        assert np.all(o["passes"][capped] >= cap - o["exchanges"][capped])
    return {"capped": int(capped.sum()), "dead": int((reason == S.END_DEAD).sum())}


@pytest.mark.parametrize("variant", VARIANTS)
def test_invariants_every_strategy_every_variant(rules, strat, variant):
    rv = rules[variant]
    n = 400
    for a, b in PAIRS:
        o = S.simulate(rv, strat[a], strat[b], SEED, 0, n)
        seen = _check_invariants(o, rv, n)
        assert seen["capped"] == 0, (variant, a, b)  # every struggle ends (SD10)
        if rv[S.R_END]:
            assert seen["dead"] > n // 2


@pytest.mark.slow
def test_round_cap_is_a_stalemate(rules, strat):
    """Why SD10 exists: to the death with suits in struggles, a disabled
    character cannot act, and the other can be left with a hand that holds no
    legal attack (no Club, no Joker, no two cards of one other suit) that it
    never refills (SD4: it never plays) when a pass does nothing
    (``pass_cycles = false``): nobody can act, and the struggle runs to the
    cap. With refill after damage the hand is always full (5 cards in 4 suits
    always hold a legal attack), and with SD10 (the default) a pass trades the
    lowest card: either way the stalemate is gone."""
    rv = rules["suited-struggles+to-the-death"].copy()
    default = S.simulate(rv, strat["random"], strat["random"], SEED, 0, 600)
    assert not np.any(default["reason"] == S.END_CAP)
    rv[S.R_PASS_CYCLES] = 0
    o = S.simulate(rv, strat["random"], strat["random"], SEED, 0, 600)
    capped = np.flatnonzero(o["reason"] == S.END_CAP)
    assert 0 < len(capped) < 120
    for g in capped[:4]:
        log, res = S.trace_log(rv, strat["random"], strat["random"], SEED, int(g))
        stuck = 1 - int(np.flatnonzero([res[S.X_DIS0], res[S.X_DIS1]])[0])
        assert res[S.X_DEAD0] == res[S.X_DEAD1] == 0 and res[S.X_ROUNDS] == 200
        last = log[log[:, S.L_A1] >= 0][-1]  # the last attack
        assert last[S.L_ROUND] < 100  # then nothing but passes to round 200
        after = log[log[:, S.L_ROUND] > last[S.L_ROUND]]
        assert (after[:, S.L_A1] == -1).all() and (after[:, S.L_PASS] == -1).all()
        assert res[S.X_PASSES] >= 200 - last[S.L_ROUND]
        h = res[S.X_LEFT0 + stuck]
        assert 1 <= h  # it holds cards, none of which attacks
    rr = rules["refill-after-damage+suited-struggles+to-the-death"].copy()
    rr[S.R_PASS_CYCLES] = 0
    ok = S.simulate(rr, strat["random"], strat["random"], SEED, 0, 600)
    assert not np.any(ok["reason"] == S.END_CAP)


# --------------------------------------------------------------------- reproducibility
def _same(a: dict, b: dict):
    assert a.keys() == b.keys()
    for k, v in a.items():
        assert np.array_equal(v, b[k]), k


def test_task_kernels_do_not_depend_on_batches_or_threads(rules):
    """The Task kernels (``task_fresh``, ``task_rundown``) split anywhere and
    on 1 or 2 threads count the same (struggles: tests/core/test_conformance.py)."""
    before = numba.get_num_threads()
    outs = []
    try:
        for t in sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)}):
            numba.set_num_threads(t)
            fresh = S.task_fresh(rules["base"], 2, 9, SEED, 0, 30000)
            # split at a chunk boundary (see test_task_fresh_split_anywhere for others)
            cut = 2 * S.TASK_CHUNK
            fresh_parts = S.task_fresh(rules["base"], 2, 9, SEED, 0, cut) + S.task_fresh(
                rules["base"], 2, 9, SEED, cut, 30000 - cut
            )
            assert np.array_equal(fresh, fresh_parts)
            down = S.task_rundown(rules["base"], 1, 8, MODE_EITHER, SEED, 0, 3000)
            down_parts = [
                S.task_rundown(rules["base"], 1, 8, MODE_EITHER, SEED, f, m)
                for f, m in ((0, 1000), (1000, 2000))
            ]
            for k in down:
                assert np.array_equal(down[k], down_parts[0][k] + down_parts[1][k]), k
            outs.append((fresh, down))
    finally:
        numba.set_num_threads(before)
    for fresh, down in outs[1:]:
        assert np.array_equal(fresh, outs[0][0])
        _same(down, outs[0][1])


@pytest.mark.parametrize("cut", [1, 10001])
def test_task_fresh_split_anywhere(rules, cut):
    whole = S.task_fresh(rules["base"], 2, 9, SEED, 0, 30000)
    parts = S.task_fresh(rules["base"], 2, 9, SEED, 0, cut) + S.task_fresh(
        rules["base"], 2, 9, SEED, cut, 30000 - cut
    )
    assert np.array_equal(whole, parts)


def test_task_rundown_split_anywhere(rules):
    """Each character deals its own deck from its stream: any split agrees."""
    whole = S.task_rundown(rules["base"], 3, 11, MODE_EITHER, SEED, 0, 700)
    parts = [
        S.task_rundown(rules["base"], 3, 11, MODE_EITHER, SEED, f, m)
        for f, m in ((0, 1), (1, 300), (301, 399))
    ]
    for k in whole:
        assert np.array_equal(whole[k], sum(p[k] for p in parts)), k


_NOJIT = """
import json
import numba
from balance.config import load_strategy, resolve_variant
from sims import suits as S
rv = resolve_variant("suits", "suited-struggles+ties-to-attacker+to-the-death").vector()
a, b = load_strategy("suits", "low-defend-hand").vector(), load_strategy("suits", "random").vector()
out = S.simulate(rv, a, b, %d, 0, 4)
log, res = S.trace_log(rv, a, b, %d, 1)
fresh = S.task_fresh(rv, 2, 9, %d, 0, 400)
down = S.task_rundown(rv, 1, 8, S.MODE_EITHER, %d, 0, 3)
print(json.dumps({"nojit": bool(numba.config.DISABLE_JIT), "sim": {k: v.tolist() for k, v in out.items()}, "log": log.tolist(),
                  "res": res.tolist(), "fresh": fresh.tolist(),
                  "down": {k: v.tolist() for k, v in down.items()}}))
"""


def test_engine_same_without_jit(rules, strat):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NUMBA_DISABLE_JIT": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", _NOJIT % ((SEED,) * 4)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    pure = json.loads(proc.stdout.strip().splitlines()[-1])
    assert pure["nojit"] is True
    rv = rules["suited-struggles+ties-to-attacker+to-the-death"]
    a, b = strat["low-defend-hand"], strat["random"]
    out = S.simulate(rv, a, b, SEED, 0, 4)
    log, res = S.trace_log(rv, a, b, SEED, 1)
    assert pure["sim"] == {k: v.tolist() for k, v in out.items()}
    assert pure["log"] == log.tolist() and pure["res"] == res.tolist()
    assert pure["fresh"] == S.task_fresh(rv, 2, 9, SEED, 0, 400).tolist()
    down = S.task_rundown(rv, 1, 8, MODE_EITHER, SEED, 0, 3)
    assert pure["down"] == {k: v.tolist() for k, v in down.items()}


# ------------------------------------------------------------------ seats and the deal
@pytest.mark.parametrize("variant", ["base", "suited-struggles+ties-to-attacker+to-the-death"])
def test_self_play_scores_exactly_half(rules, strat, variant):
    """Against itself a strategy plays the same deal twice with the same
    seats' decks and noise: the two games of a pair are identical, so it
    scores exactly one half."""
    for name in NAMES:
        o = S.simulate(rules[variant], strat[name], strat[name], SEED, 0, 400)
        assert o["a_points"].sum() == 400  # half points: 2 per win, 1 per draw
        for k, v in o.items():
            if k not in ("a_seat", "a_points"):
                assert np.array_equal(v[0::2], v[1::2]), (name, k)
        assert len(np.unique(o["winner_seat"])) > 1


def _first_hand(seed, deal, seat):
    state = np.zeros(4, dtype=np.uint64)
    rng.seed_state(state, np.uint64(seed), deal, rng.PURPOSE_GAME + seat)
    deck = np.zeros(S.MAX_DECK, dtype=np.int64)
    S._deal(deck, 2, state)
    return deck[:HAND]


def test_the_deal_is_shared_by_the_two_games_of_a_pair(rules, strat):
    """Game 2d and 2d+1 deal the same deck to each seat (the strategies swap
    seats): the scripted initiative card (the lowest of the first hand, SD7)
    is the same in both games and is the lowest card of the dealt hand."""
    o = S.simulate(rules["base"], strat["low-absorb-deck"], strat["high-defend-hand"], SEED, 0, 200)
    for s in range(2):
        ic = o[f"initiative_card_seat{s}"]
        assert np.array_equal(ic[0::2], ic[1::2])
        for d in range(0, 100, 7):
            hand = _first_hand(SEED, d, s)
            vals = [S.card_value(c, 14) for c in hand]
            assert ic[2 * d] == hand[int(np.argmin(vals))]
    assert not np.array_equal(o["winner_seat"][0::2], o["winner_seat"][1::2])


def test_first_mover_has_the_better_initiative_card_and_ties_are_a_fair_coin(rules, strat):
    o = S.simulate(
        rules["base"], strat["high-defend-hand"], strat["low-absorb-hand"], SEED, 0, 6000
    )

    def key(c):  # SD7: suit order (Spades first), then value; a Joker is a Spade of 14
        return 3 * 16 + 14 if c >= 52 else (3 - c // 13) * 16 + c % 13 + 2

    k0 = np.array([key(int(c)) for c in o["initiative_card_seat0"]])
    k1 = np.array([key(int(c)) for c in o["initiative_card_seat1"]])
    diff = k0 != k1
    assert np.array_equal(o["first_seat"][diff], np.where(k0 > k1, 0, 1)[diff])
    ties = ~diff
    assert ties.sum() > 100
    assert within((o["first_seat"][ties] == 0).sum(), ties.sum(), 0.5)


# ------------------------------------------------------------ Tasks: oracle vs simulation
N_FRESH = 200_000


@pytest.fixture(scope="module")
def fresh(rules) -> dict[int, np.ndarray]:
    return {t: S.task_fresh(rules["base"], t % 4, t, SEED + t, 0, N_FRESH) for t in range(2, 15)}


def _fresh_rates(out) -> dict[str, int]:
    """Counts of ``task_fresh``: difficult_only from the cards (1 in suit, 2
    Difficult, 1 on a failure)."""
    return {
        "in_suit": out[0],
        "difficult": out[1],
        "either": out[2],
        "difficult_only": out[3] - out[5],
        "joker": out[4],
    }


@pytest.mark.parametrize("target", range(2, 15))
def test_fresh_hands_match_the_exact_oracle(fresh, target):
    out = fresh[target]
    assert out[5] == N_FRESH
    # exact identities of the counts: a Difficult-only hand costs 2 cards
    assert out[3] - out[5] == out[2] - out[0]
    assert out[0] <= out[2] <= out[0] + out[1]
    exact = task_odds(target)
    assert exact["cards"] == 1 + exact["difficult_only"]
    for key, count in _fresh_rates(out).items():
        assert within(count, N_FRESH, exact[key]), (target, key, count / N_FRESH, float(exact[key]))
    if target == 2:
        assert out[2] == N_FRESH  # exactly 1
    if target == 14:
        assert out[3] == out[5]  # difficult only: exactly 0


@pytest.mark.parametrize("target", range(5, 11))
def test_negative_control_the_check_has_power(fresh, target):
    """Target t's simulation against target t+1's exact odds: outside."""
    out = _fresh_rates(fresh[target])
    wrong = task_odds(target + 1)
    for key in ("in_suit", "difficult", "either"):
        assert not within(out[key], N_FRESH, wrong[key]), (target, key)


def test_fresh_hands_with_other_rules():
    rv = S.encode_rules({**S.DEFAULT_RULES, "jokers": 0, "failed_task_cards": 2})
    out = S.task_fresh(rv, 3, 10, SEED, 0, 100_000)
    exact = task_odds(10, jokers=0, failed_task_cards=2)
    assert out[4] == 0 and exact["joker"] == 0
    assert within(out[0], out[5], exact["in_suit"]) and within(out[1], out[5], exact["difficult"])
    fails = out[5] - out[2]
    assert out[3] == out[0] + 2 * (out[2] - out[0]) + 2 * fails
    mean_cards = out[3] / out[5]
    assert abs(mean_cards - float(exact["cards"])) < Z * 0.5 / math.sqrt(out[5])


# ------------------------------------------------------------------------ run-down
N_DOWN = 20_000
LAST_DRAW = DECK - HAND  # 49 cards are drawn after the first hand


@pytest.fixture(scope="module")
def rundown(rules) -> dict[int, dict]:
    return {
        m: S.task_rundown(rules["base"], S.CLUBS, 9, m, SEED, 0, N_DOWN)
        for m in (MODE_IN_SUIT, MODE_DIFFICULT, MODE_EITHER)
    }


@pytest.mark.parametrize("mode", [MODE_IN_SUIT, MODE_DIFFICULT, MODE_EITHER])
def test_rundown_counts(rundown, mode):
    r = rundown[mode]
    ba, bd = r["by_attempt"], r["by_deck"]
    att, succ = r["attempts_hist"], r["successes_hist"]
    k = np.arange(len(att))
    assert att.sum() == N_DOWN and succ.sum() == N_DOWN
    assert (k * att).sum() == ba[S.RD_ATTEMPTS].sum() == bd[S.RD_ATTEMPTS].sum()
    assert (k * succ).sum() == ba[S.RD_SUCCESS].sum() == bd[S.RD_SUCCESS].sum()
    assert np.array_equal(ba.sum(axis=1), bd.sum(axis=1))
    # every character makes a first attempt, with 49 cards in the deck, and only one
    assert ba[S.RD_ATTEMPTS, 0] == N_DOWN and bd[S.RD_ATTEMPTS, LAST_DRAW] == N_DOWN
    assert np.array_equal(bd[:, LAST_DRAW], ba[:, 0])
    assert not bd[:, LAST_DRAW + 1 :].any() and not bd[:, 0].any()
    assert np.all(np.diff(ba[S.RD_ATTEMPTS]) <= 0)  # attempt k+1 only after attempt k
    # 1 or 2 cards an attempt: at least ceil(49 / 2) = 25 attempts, at most 49
    lo = math.ceil(LAST_DRAW / 2)
    assert not att[:lo].any() and not att[LAST_DRAW + 1 :].any()
    assert not succ[LAST_DRAW + 1 :].any()
    # cards: 1 in suit or on a failure, 2 for a Difficult pair
    assert np.array_equal(ba[S.RD_CARDS], ba[S.RD_ATTEMPTS] + ba[S.RD_DIFFICULT])
    assert np.all(ba[S.RD_DIFFICULT] <= ba[S.RD_SUCCESS])
    # the deck: every character draws its 49 cards, the last attempt may play a
    # second card the deck no longer replaces (an attempt with 1 card left, or a
    # pair with 2 left, is the last)
    over = bd[S.RD_CARDS, 1] - bd[S.RD_ATTEMPTS, 1]
    assert ba[S.RD_CARDS].sum() == N_DOWN * LAST_DRAW + over
    assert bd[S.RD_ATTEMPTS, 1] + bd[S.RD_DIFFICULT, 2] == N_DOWN
    if mode == MODE_IN_SUIT:
        assert att[LAST_DRAW] == N_DOWN and not ba[S.RD_DIFFICULT].any() and over == 0
    if mode == MODE_DIFFICULT:
        assert np.array_equal(ba[S.RD_DIFFICULT], ba[S.RD_SUCCESS])
    if mode == MODE_EITHER:
        assert att[lo:LAST_DRAW].sum() > 0.9 * N_DOWN and over > 0


def test_rundown_first_attempt_is_a_fresh_hand(rundown):
    exact = task_odds(9)
    for mode, key in (
        (MODE_IN_SUIT, "in_suit"),
        (MODE_DIFFICULT, "difficult"),
        (MODE_EITHER, "either"),
    ):
        ba = rundown[mode]["by_attempt"]
        assert within(ba[S.RD_SUCCESS, 0], N_DOWN, exact[key]), key
    ba = rundown[MODE_EITHER]["by_attempt"]
    assert within(ba[S.RD_DIFFICULT, 0], N_DOWN, exact["difficult_only"])
    # power: the run-down's later attempts are not all fresh hands (the hand keeps
    # its failures), the tenth attempt of "either" succeeds less often
    assert not within(ba[S.RD_SUCCESS, 10], ba[S.RD_ATTEMPTS, 10], exact["either"])


# ---------------------------------------------------------------------------- traces
@pytest.mark.parametrize(
    "variant", ["base", "suited-struggles+to-the-death", "refill-after-damage+ties-to-attacker"]
)
def test_trace_replays_the_simulated_games(rules, strat, variant):
    rv = rules[variant]
    a, b = strat["low-defend-hand"], strat["random"]
    n = 12
    o = S.simulate(rv, a, b, SEED, 0, n)
    tta, mind = bool(rv[S.R_TIES_ATTACKER]), int(rv[S.R_MIN_DAMAGE])
    saw_answer = saw_pair = saw_decline = 0
    for g in range(n):
        ev = S.trace(rv, a, b, SEED, g, names=("LOW", "RND"))
        assert ev[0]["kind"] == "initiative" and ev[-1]["kind"] == "end"
        turns = ev[1:-1]
        attacks = [e for e in turns if e["kind"] == "attack"]
        passes = [e for e in turns if e["kind"] == "pass"]
        declines = [e for e in turns if e["kind"] == "decline"]
        assert len(attacks) + len(passes) + len(declines) == len(turns)
        assert len(attacks) == o["exchanges"][g]
        assert len(passes) == o["passes"][g] and len(declines) == o["declines"][g]
        saw_decline += len(declines)
        ini, end = ev[0], ev[-1]
        assert ini["cards"] == [S.card_name(o[f"initiative_card_seat{s}"][g]) for s in range(2)]
        assert ini["first_seat"] == o["first_seat"][g] + 1
        who = ("LOW", "RND") if g % 2 == 0 else ("RND", "LOW")
        assert f"seat 1 {who[0]} plays" in ini["text"]
        w = o["winner_seat"][g]
        assert end["winner_seat"] == (w + 1 if w >= 0 else None)
        assert end["winner"] == (who[w] if w >= 0 else None)
        assert end["rounds"] == o["rounds"][g] and end["exchanges"] == o["exchanges"][g]
        assert end["reason"] == S.END_NAMES[o["reason"][g]]
        assert end["left"] == [o["left_seat0"][g], o["left_seat1"][g]]
        assert ("wins after" if w >= 0 else "draw after") in end["text"]
        # replay: the cards each seat has left, attack by attack
        left = [DECK - 1, DECK - 1]
        dmg, hits, answers, ties = [0, 0], [0, 0], 0, 0
        rnd = 1
        for e in turns:
            s = e["seat"] - 1
            assert rnd <= e["round"] <= o["rounds"][g]
            rnd = e["round"]
            if e["kind"] in ("pass", "decline"):  # SD10 trades one card; SD6 only draws
                left[s] -= 1 if e["discarded"] else 0
                assert e["left"] == left
                continue
            # SD2 (pair_value 0): a play is worth its highest card; a pair's lower card
            # must meet the opposing value too, or an answer pair counts for nothing
            av = [S.card_value(S.card_id(c), 14) for c in e["attack"]]
            dv = [S.card_value(S.card_id(c), 14) for c in e["answer"]]
            cva = max(av)
            assert 1 <= len(e["attack"]) <= 2 and e["attack_value"] == cva
            cvd = max(dv) if dv else 0
            assert e["answer_value"] == cvd
            void = len(dv) == 2 and (min(dv) < cva or (tta and min(dv) == cva))
            assert e["answer_counts"] == (not void)
            eff = 0 if void else cvd
            hit = min(av) > eff or (tta and min(av) == eff)
            assert e["damage"] == (max(cva - eff, mind) if hit else 0)
            taken = e["from_hand"] + e["from_deck"]
            assert taken <= e["damage"]
            left[s] -= len(e["attack"])
            left[1 - s] -= len(e["answer"]) + taken
            # S3: damage reaching the cards left kills; short of it, it lives
            assert ("is dead" in e["text"]) == (hit and e["damage"] > 0 and left[1 - s] == 0)
            if taken < e["damage"]:
                assert left[1 - s] == 0
            assert e["left"] == left  # by seat: seat 1, seat 2
            assert f"cards left (seat 1 : seat 2) {left[0]} : {left[1]}" in e["text"]
            dmg[s] += taken
            hits[s] += e["damage"] > 0
            answers += bool(e["answer"])
            ties += bool(e["answer"]) and (min(av) == eff or (len(dv) == 2 and min(dv) == cva))
            saw_answer += bool(e["answer"])
            saw_pair += len(e["attack"]) == 2
            assert f"seat {s + 1} ({who[s]}) attacks with" in e["text"]
        assert left == end["left"]
        assert dmg == [o["damage_seat0"][g], o["damage_seat1"][g]]
        assert hits == [o["hits_seat0"][g], o["hits_seat1"][g]]
        assert answers == o["answers"][g] and ties == o["ties"][g]
    assert saw_answer > 0 and saw_decline > 0  # random declines now and then (SD11)
    if rv[S.R_SUITS]:
        assert saw_pair > 0


def test_trace_of_a_to_the_death_struggle_after_the_first_disabling(rules, strat):
    """SD5 to the death: once disabled, a character never attacks again and
    never answers."""
    rv = rules["to-the-death"]
    a, b = strat["high-defend-hand"], strat["low-defend-deck"]
    after = 0
    for g in range(40):
        log, res = S.trace_log(rv, a, b, SEED, g)
        down = [False, False]
        for row in log:
            s = int(row[S.L_SEAT])
            assert not down[s]  # a disabled character does not act
            if down[1 - s]:
                assert row[S.L_D1] == -1  # ... nor answer
                after += 1
            down[s] |= bool(row[S.L_DIS_A])
            down[1 - s] |= bool(row[S.L_DIS_D])
        assert down == [bool(res[S.X_DIS0]), bool(res[S.X_DIS1])]
    assert after > 20
