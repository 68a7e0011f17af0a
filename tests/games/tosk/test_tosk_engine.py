"""Tosk games: invariants over many games, replays checked round by round,
end-of-game rulings, mirror matches in the variants, common random numbers.
What every engine must do (same seed same games, thread and batch invariance,
trace = simulate) is tests/core/test_conformance.py.

``_replay`` re-derives every logged round from the rulebook (T7–T11) and the
rules calculator, independently of the game loop: combat, healing limits,
drawing, the hand carried into the next round, sudden death and the result.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from balance.config import Ruleset, all_variant_combinations, load_strategy, resolve_variant
from balance.runner import RunSpec, simulate_run
from kernels import rng
from kernels.contract import Side
from sims import tosk
from strategies.tosk import encode_strategy
from tests import ROOT
from tests.games.tosk import tosk_helpers

VARIANTS = all_variant_combinations("tosk")
# base in the fast tier (pytest -m "not slow"), every combination in the full run
VARIANT_PARAMS = [
    pytest.param(v, marks=() if v == "base" else pytest.mark.slow, id=v) for v in VARIANTS
]
NAMES = ["random", "aggressor", "turtle", "balanced", "economist", "healer", "adaptive"]
SEED = 20240607
RANK_OF = {name: i for i, name in enumerate(tosk.RANK_NAMES)}

# scripted strategies written here, to reach situations on purpose
PASSIVE = encode_strategy({"play": {"empty": 100.0}}, Side())  # never plays a card
TEMPERED = encode_strategy(
    {
        "play": {"atk": 1.0, "def": 0.7, "draw": 0.2},
        "temperature": 0.7,
        "heal": {"gain": 1.0, "hand_loss": -0.5},
        "heal_temperature": 0.4,
        "keep": {"atk": 1.0, "def": 1.0},
    },
    Side(),
)


@pytest.fixture(scope="module")
def rules() -> dict[str, np.ndarray]:
    return {v: resolve_variant("tosk", v).vector() for v in VARIANTS}


@pytest.fixture(scope="module")
def strat() -> dict[str, np.ndarray]:
    return {n: load_strategy("tosk", n).vector() for n in NAMES}


def _rules_with(variant: str, **over) -> np.ndarray:
    r = dict(resolve_variant("tosk", variant).rules)
    r.update(over)
    return tosk.encode_rules(r)


def _eval(rules, cards, mode) -> tuple[int, int, int]:
    out = np.zeros(4, dtype=np.int64)
    tosk.evaluate(rules, np.asarray(cards, dtype=np.int64), len(cards), mode, out)
    return int(out[0]), int(out[1]), int(out[2])


def _bits(mask: int, n: int) -> list[int]:
    return [i for i in range(n) if (int(mask) >> i) & 1]


# ---------------------------------------------------------------- replay oracle


def _replay(rules, log, res) -> dict:
    """Check one traced game against the rules; returns what it saw."""
    cap, max_hand, start = (
        int(rules[k]) for k in (tosk.R_CAPACITY, tosk.R_MAX_HAND, tosk.R_START_HP)
    )
    heal_cards, per = int(rules[tosk.R_HEAL_CARDS]), int(rules[tosk.R_HEAL_PER_CARD])
    max_rounds = int(rules[tosk.R_MAX_ROUNDS])
    rule_dict = {k: int(v) for k, v in zip(tosk.RULE_FIELDS, rules, strict=False)}
    rounds = log.shape[0]
    assert rounds == res[1] and 1 <= rounds <= max_rounds
    assert res[9] == tosk.N_CARDS  # cards conserved
    seen = {"plays": [], "heals": [], "hands": [], "reshuffles": 0}
    hp_prev = [start, start]
    deck_n, disc_n = tosk.N_CARDS - 2 * max_hand, 0  # TD1: both hands dealt full
    sudden = False
    played_mask = [0, 0]
    seen_mask = [0, 0]
    winner, reason = tosk.DRAW, tosk.END_CAP
    for r in range(rounds):
        rows = log[r]
        hands = []
        for s in range(2):
            row = rows[s]
            hand = [int(c) for c in row[tosk.L_HAND : tosk.L_HAND + tosk.MAX_HAND]]
            n = sum(c >= 0 for c in hand)
            assert all(c >= 0 for c in hand[:n]) and all(c == -1 for c in hand[n:])
            assert all(0 <= c < tosk.N_CARDS for c in hand[:n])
            assert n <= max_hand
            hands.append(hand[:n])
            seen["hands"].append(n)
            for c in hand[:n]:
                seen_mask[s] |= 1 << c
            assert int(row[tosk.L_SUDDEN]) == int(sudden)
            assert row[tosk.L_PLAYED] >> n == 0 and row[tosk.L_HEALED] >> n == 0
            assert row[tosk.L_PLAYED] & row[tosk.L_HEALED] == 0
            played = [hand[i] for i in _bits(row[tosk.L_PLAYED], n)]
            for c in played:
                played_mask[s] |= 1 << c
            cost, atk, dfn = (int(row[k]) for k in (tosk.L_COST, tosk.L_ATK, tosk.L_DEF))
            assert cost <= cap
            # the play is the rules' value of its cards under one undominated technique
            # assignment (T4, TD6), from the brute-force oracle
            ref = tosk_helpers.play(rule_dict, played)
            assert cost == ref["cost"] and (atk, dfn) in ref["front"]
            seen["plays"].append(played)
        all_cards = hands[0] + hands[1]
        assert len(set(all_cards)) == len(all_cards)  # no card in two places
        dmg = [
            max(0, int(rows[1, tosk.L_ATK] - rows[0, tosk.L_DEF])),
            max(0, int(rows[0, tosk.L_ATK] - rows[1, tosk.L_DEF])),
        ]
        hp = []
        for s in range(2):
            assert rows[s, tosk.L_DMG_TAKEN] == dmg[s]
            hp.append(hp_prev[s] - dmg[s])
            assert rows[s, tosk.L_HP_COMBAT] == hp[s] <= start
        # end of the game (T10), decided here from the log alone
        decided = False
        if sudden:
            if dmg[0] != dmg[1]:
                winner, reason, decided = (0 if dmg[1] > dmg[0] else 1), tosk.END_SUDDEN_DEATH, True
        elif hp[0] <= 0 and hp[1] <= 0:
            if dmg[0] != dmg[1]:
                winner, reason, decided = (0 if dmg[1] > dmg[0] else 1), tosk.END_DOUBLE_KO, True
            else:
                sudden = True
        elif hp[0] <= 0 or hp[1] <= 0:
            winner, reason, decided = (1 if hp[0] <= 0 else 0), tosk.END_KO, True
        if decided:
            assert r == rounds - 1, "the game went on after it was decided"
            for s in range(2):
                assert rows[s, tosk.L_HP_END] == hp[s]
            break
        # recover (T9): discard the plays and heal for both, then draw seat 1 first
        for s in range(2):
            disc_n += bin(int(rows[s, tosk.L_PLAYED] | rows[s, tosk.L_HEALED])).count("1")
        for s in range(2):
            k = int(rows[s, tosk.L_DRAWN])
            if k > deck_n:  # the deck runs out mid-draw: the discard pile becomes the deck
                assert rows[s, tosk.L_RESHUFFLES] == 1
                deck_n, disc_n = disc_n - (k - deck_n), 0
                seen["reshuffles"] += 1
            else:
                assert rows[s, tosk.L_RESHUFFLES] == 0
                deck_n -= k
            assert deck_n >= 0
        for s in range(2):
            row = rows[s]
            n = len(hands[s])
            n_played = len(_bits(row[tosk.L_PLAYED], n))
            healed = _bits(row[tosk.L_HEALED], n)
            h = len(healed)
            lost = start - hp[s]
            assert h <= heal_cards
            if h:
                assert lost > 0 and h <= -(-lost // per)  # TD2: every heal card restores HP
                seen["heals"].append((h, int(row[tosk.L_HP_END]) - hp[s], int(row[tosk.L_HP_END])))
            assert row[tosk.L_HP_END] == min(start, hp[s] + h * per) <= start
            kept = [
                hands[s][i]
                for i in range(n)
                if not (row[tosk.L_PLAYED] >> i) & 1 and not (row[tosk.L_HEALED] >> i) & 1
            ]
            assert len(kept) == n - n_played - h
            # hands hold at most 12 cards, so deck + discard always has enough to draw
            assert row[tosk.L_DRAWN] == min(cap - int(row[tosk.L_COST]), max_hand - len(kept))
            if r + 1 < rounds:
                nxt = [
                    int(c)
                    for c in log[r + 1, s, tosk.L_HAND : tosk.L_HAND + tosk.MAX_HAND]
                    if c >= 0
                ]
                assert nxt[: len(kept)] == kept  # unplayed cards stay, drawn cards follow
                assert len(nxt) == len(kept) + row[tosk.L_DRAWN]
            hp_prev[s] = int(row[tosk.L_HP_END])
    else:
        assert rounds == max_rounds and not decided
    assert (res[0], res[2]) == (winner, reason)
    assert (res[3], res[4]) == (log[-1, 0, tosk.L_HP_END], log[-1, 1, tosk.L_HP_END])
    # cards held are cards seen; cards played are exactly the logged plays
    for s in range(2):
        assert seen_mask[s] & ~int(res[5 + s]) == 0
        assert int(res[7 + s]) == played_mask[s]
    return seen


def _trace_games(rules, a, b, games, seed=SEED):
    out = []
    for g in games:
        log, res = tosk.trace_log(rules, a, b, seed, g)
        out.append((g, log, res, _replay(rules, log, res)))
    return out


# ---------------------------------------------------------------- invariants, every variant

SCRIPTED_PAIRS = [
    ("aggressor", "turtle"),
    ("balanced", "random"),
    ("healer", "economist"),
    ("adaptive", "aggressor"),
]


def _check_outcomes(rules, out, n):
    start, max_rounds = int(rules[tosk.R_START_HP]), int(rules[tosk.R_MAX_ROUNDS])
    assert all(len(v) == n for v in out.values())
    assert (out["cards_total"] == tosk.N_CARDS).all()
    assert ((out["rounds"] >= 1) & (out["rounds"] <= max_rounds)).all()
    draw = out["winner_seat"] == tosk.DRAW
    assert (draw == (out["reason"] == tosk.END_CAP)).all()
    assert (out["rounds"][draw] == max_rounds).all()
    hp = np.stack([out["hp_seat0"], out["hp_seat1"]], axis=1)
    assert (hp <= start).all()
    ko = out["reason"] == tosk.END_KO
    w = out["winner_seat"]
    assert (hp[ko, w[ko]] > 0).all() and (hp[ko, 1 - w[ko]] <= 0).all()
    both = out["reason"] == tosk.END_DOUBLE_KO
    assert (hp[both] <= 0).all()
    pts = out["a_points"]
    assert ((pts == 2) == (w == out["a_seat"])).all() and ((pts == 1) == draw).all()
    assert (out["played_a"] & ~out["seen_a"] == 0).all()
    assert (out["played_b"] & ~out["seen_b"] == 0).all()
    opening = int(rules[tosk.R_MAX_HAND])
    assert all(bin(int(x)).count("1") >= opening for x in out["seen_a"])


@pytest.mark.parametrize("variant", VARIANT_PARAMS)
def test_invariants_over_many_games(variant, rules, strat):
    rv = rules[variant]
    out = tosk.simulate(rv, strat["random"], strat["random"], SEED, 0, 1000)
    _check_outcomes(rv, out, 1000)
    for a, b in SCRIPTED_PAIRS:
        out = tosk.simulate(rv, strat[a], strat[b], SEED, 0, 1000)
        _check_outcomes(rv, out, 1000)


@pytest.mark.parametrize("variant", VARIANT_PARAMS)
def test_replayed_games_follow_the_rules(variant, rules, strat):
    rv = rules[variant]
    traced = _trace_games(rv, strat["random"], strat["random"], range(6))
    traced += _trace_games(rv, TEMPERED, strat["healer"], range(4))
    for a, b in SCRIPTED_PAIRS:
        traced += _trace_games(rv, strat[a], strat[b], range(6))
    plays = [p for *_, s in traced for p in s["plays"]]
    hands = [n for *_, s in traced for n in s["hands"]]
    heals = [h for *_, s in traced for h in s["heals"]]
    assert sum(s["reshuffles"] for *_, s in traced) > 0  # long games re-form the deck
    max_hand = int(rv[tosk.R_MAX_HAND])
    assert max(hands) == max_hand  # the opening hand is full
    assert heals, "nobody healed in any traced game"
    per, most = int(rv[tosk.R_HEAL_PER_CARD]), int(rv[tosk.R_HEAL_CARDS])
    start = int(rv[tosk.R_START_HP])
    assert all(1 <= h <= most for h, _, _ in heals)
    # each card restores `per` HP, short only when it tops up to full (TD2: no card
    # is discarded that restores nothing)
    assert all(
        gain == per * h or (end == start and per * (h - 1) < gain < per * h)
        for h, gain, end in heals
    )
    if "potent-healing" in variant:
        assert (per, most) == (2, 2) and max(h for h, _, _ in heals) == 2
        assert any(gain == 4 for _, gain, _ in heals)
    else:
        assert (per, most) == (1, 3) and max(h for h, _, _ in heals) == 3
    if "battle-weary" in variant:
        assert max_hand == 5 and int(rv[tosk.R_CAPACITY]) == 11
    # each variant's effect shows in some traced play (the replay already checked
    # every play's value under the variant's own rules)
    for key, flag in (
        ("force", tosk.R_FORCE),
        ("momentum", tosk.R_MOMENTUM),
        ("advanced-techniques", tosk.R_BY_COLOUR),
    ):
        off = rv.copy()
        off[flag] = 0
        changed = sum(any(_eval(rv, p, m) != _eval(off, p, m) for m in (0, 1)) for p in plays)
        assert (changed > 0) == (key in variant), (key, changed)


def test_momentum_discount_and_force_bonus_direction(rules, strat):
    rv = rules["force+momentum"]
    plain = rules["base"]
    traced = _trace_games(rv, strat["random"], strat["random"], [0, 1, 2, 3])
    for *_, s in traced:
        for p in s["plays"]:
            for m in (0, 1):
                c, a, d = _eval(rv, p, m)
                c0, a0, d0 = _eval(plain, p, m)
                assert c <= c0 and a >= a0 and d >= d0


def test_passive_players_draw_at_the_round_cap(rules):
    rv = rules["base"]
    out = tosk.simulate(rv, PASSIVE, PASSIVE, SEED, 0, 20)
    assert (out["winner_seat"] == tosk.DRAW).all() and (out["reason"] == tosk.END_CAP).all()
    assert (out["rounds"] == 100).all() and (out["hp_seat0"] == 20).all()
    assert (out["played_a"] == 0).all() and (out["played_b"] == 0).all()
    log, res = tosk.trace_log(rv, PASSIVE, PASSIVE, SEED, 0)
    _replay(rv, log, res)
    assert (log[:, :, tosk.L_DRAWN] == 0).all()  # a full hand draws nothing


def test_trace_and_simulate_agree(rules, strat):
    rv = rules["force+momentum+potent-healing"]
    out = tosk.simulate(rv, strat["balanced"], strat["random"], SEED, 0, 12)
    for g in range(12):
        _, res = tosk.trace_log(rv, strat["balanced"], strat["random"], SEED, g)
        assert res[0] == out["winner_seat"][g] and res[1] == out["rounds"][g]
        assert res[2] == out["reason"][g]
        assert (res[3], res[4]) == (out["hp_seat0"][g], out["hp_seat1"][g])
        a_seat = g % 2
        assert (res[5 + a_seat], res[6 - a_seat]) == (out["seen_a"][g], out["seen_b"][g])
        assert (res[7 + a_seat], res[8 - a_seat]) == (out["played_a"][g], out["played_b"][g])


def test_trace_events(rules, strat):
    rv = rules["base"]
    for g in (6, 7):
        events = tosk.trace(rv, strat["aggressor"], strat["turtle"], SEED, g, ("agg", "tur"))
        log, res = tosk.trace_log(rv, strat["aggressor"], strat["turtle"], SEED, g)
        rounds = [e for e in events if e["kind"] == "round"]
        assert len(rounds) == 2 * log.shape[0] and events[-1]["kind"] == "end"
        seat1 = "agg" if g % 2 == 0 else "tur"
        assert all(e["player"] == seat1 for e in rounds if e["seat"] == 1)
        assert all(e["player"] != seat1 for e in rounds if e["seat"] == 2)
        for e in rounds:
            row = log[e["round"] - 1, e["seat"] - 1]
            logged = tuple(int(x) for x in row[tosk.L_COST : tosk.L_DEF + 1])
            assert (e["cost"], e["atk"], e["def"]) == logged
            assert len(e["played"]) == bin(int(row[tosk.L_PLAYED])).count("1")
            assert set(e["played"]) <= set(e["hand"]) and e["hp_end"] <= 20
        end = events[-1]
        assert end["rounds"] == res[1] and end["reason"] == tosk.END_NAMES[res[2]]
        if res[0] != tosk.DRAW:
            assert end["winner_seat"] == res[0] + 1 and end["winner"] in ("agg", "tur")
            assert end["winner"] in end["text"]


# ---------------------------------------------------------------- end of game (T10, T11)


def _find(out, reason):
    hits = np.flatnonzero(out["reason"] == reason)
    assert len(hits), f"no game ended by {tosk.END_NAMES[reason]}"
    return [int(g) for g in hits[:3]]


@pytest.fixture(scope="module")
def brawl(rules, strat):
    """Aggressor against economist: short games, many ending with both down."""
    rv = rules["base"]
    return rv, tosk.simulate(rv, strat["aggressor"], strat["economist"], SEED, 0, 2000)


def test_both_fall_in_one_round(brawl, strat):
    rv, out = brawl
    for g in _find(out, tosk.END_DOUBLE_KO):
        log, res = tosk.trace_log(rv, strat["aggressor"], strat["economist"], SEED, g)
        _replay(rv, log, res)
        last = log[-1]
        assert (last[:, tosk.L_HP_COMBAT] <= 0).all()
        w = int(res[0])
        assert w == out["winner_seat"][g]
        # the winner dealt more damage: the loser took more
        assert last[1 - w, tosk.L_DMG_TAKEN] > last[w, tosk.L_DMG_TAKEN]
        assert not last[:, tosk.L_SUDDEN].any()


def test_sudden_death(brawl, strat):
    rv, out = brawl
    for g in _find(out, tosk.END_SUDDEN_DEATH):
        log, res = tosk.trace_log(rv, strat["aggressor"], strat["economist"], SEED, g)
        _replay(rv, log, res)
        hp = log[:, :, tosk.L_HP_COMBAT]
        dmg = log[:, :, tosk.L_DMG_TAKEN]
        fell = int(np.flatnonzero((hp <= 0).all(axis=1))[0])
        assert dmg[fell, 0] == dmg[fell, 1]  # equal damage: no winner yet
        assert fell < log.shape[0] - 1  # rounds go on
        assert not log[: fell + 1, :, tosk.L_SUDDEN].any()
        assert log[fell + 1 :, :, tosk.L_SUDDEN].all()
        # rounds in between are tied; the deciding one is not
        assert (dmg[fell + 1 : -1, 0] == dmg[fell + 1 : -1, 1]).all()
        w = int(res[0])
        assert dmg[-1, 1 - w] > dmg[-1, w]
        # players at <= 0 HP still heal and draw as normal (the replay checked how much)
        assert (log[fell, :, tosk.L_HP_END] >= log[fell, :, tosk.L_HP_COMBAT]).all()


@pytest.mark.parametrize("max_rounds", [1, 3])
def test_round_cap_makes_draws(max_rounds, strat):
    rv = _rules_with("base", max_rounds=max_rounds)
    out = tosk.simulate(rv, strat["turtle"], strat["healer"], SEED, 0, 400)
    _check_outcomes(rv, out, 400)
    draw = out["reason"] == tosk.END_CAP
    assert draw.sum() > 0
    assert (out["winner_seat"][draw] == -1).all() and (out["a_points"][draw] == 1).all()
    assert (out["rounds"] <= max_rounds).all()
    first_draw = int(np.flatnonzero(draw)[0])
    log, res = tosk.trace_log(rv, strat["turtle"], strat["healer"], SEED, first_draw)
    _replay(rv, log, res)
    assert log.shape[0] == max_rounds and res[0] == -1
    # the runner counts them as draws, never as wins
    base = resolve_variant("tosk", "base")
    rs = Ruleset("tosk", "base", (), {**base.rules, "max_rounds": max_rounds})
    spec = RunSpec(rs, load_strategy("tosk", "turtle"), load_strategy("tosk", "healer"), 400, SEED)
    run = simulate_run(spec)
    assert run.draws == int(draw.sum()) == run.reasons[tosk.END_CAP]
    assert run.a_wins + run.b_wins + run.draws == 400
    assert run.seat_wins.sum() == 400 - run.draws
    assert run.rounds_hist[max_rounds + 1 :].sum() == 0


# ---------------------------------------------------------------- symmetry, reproducibility


@pytest.mark.parametrize("who", ["balanced", "aggressor", "random", "tempered"])
@pytest.mark.parametrize("variant", ["base", "advanced-techniques+force+momentum"])
def test_mirror_match_scores_exactly_half(who, variant, rules, strat):
    v = TEMPERED if who == "tempered" else strat[who]
    out = tosk.simulate(rules[variant], v, v.copy(), SEED, 0, 400)
    pair = out["a_points"][0::2] + out["a_points"][1::2]
    assert (pair == 2).all()
    assert (out["winner_seat"][0::2] == out["winner_seat"][1::2]).all()
    # identical players: the deal and the seat decide, and some games are decided
    assert (out["winner_seat"] != -1).sum() > 0


def _opening(rv, a, b, game, seed=SEED):
    log, _ = tosk.trace_log(rv, a, b, seed, game)
    return log[0, :, tosk.L_HAND : tosk.L_HAND + tosk.MAX_HAND].tolist()


def test_opening_deal_comes_from_the_deal_stream(rules, strat):
    # TD1: one card at a time from the top of the deck shuffled by stream
    # (seed, deal, PURPOSE_DEAL), alternating, seat 1 first
    for game in (0, 5, 12):
        st = np.zeros(4, dtype=np.uint64)
        rng.seed_state(st, SEED, game // 2, rng.PURPOSE_DEAL)
        deck = np.arange(tosk.N_CARDS, dtype=np.int64)
        rng.shuffle(st, deck, tosk.N_CARDS)
        top = deck[::-1].tolist()
        for variant, mh in (("base", 6), ("battle-weary", 5)):
            hands = _opening(rules[variant], strat["random"], strat["turtle"], game)
            assert hands[0][:mh] == top[0 : 2 * mh : 2] and hands[1][:mh] == top[1 : 2 * mh : 2]


def test_common_random_numbers_opening_hands(rules, strat):
    for game in (0, 9):
        ref = {}
        for v in VARIANTS:
            mh = int(rules[v][tosk.R_MAX_HAND])
            hands = _opening(rules[v], strat["balanced"], strat["random"], game)
            ref.setdefault(mh, hands)
            assert hands == ref[mh], v
        for a, b in [("aggressor", "turtle"), ("random", "random"), ("adaptive", "healer")]:
            assert _opening(rules["base"], strat[a], strat[b], game) == ref[6]
        # the two games of a deal share it: same hands in the same seats
        mate = game + 1 if game % 2 == 0 else game - 1
        assert _opening(rules["base"], strat["balanced"], strat["random"], mate) == ref[6]
        # battle-weary deals the same shuffled deck, one card fewer each
        for s in range(2):
            assert ref[5][s][:5] == ref[6][s][:5] and ref[5][s][5] == -1 != ref[6][s][5]
    assert _opening(rules["base"], strat["balanced"], strat["random"], 0) != _opening(
        rules["base"], strat["balanced"], strat["random"], 2
    )


@pytest.mark.parametrize("rank", ["9", "J", "A"])
def test_restricted_play_never_plays_the_rank(rank, rules):
    rv = rules["advanced-techniques+force"]
    idx = RANK_OF[rank]
    free = load_strategy("tosk", "balanced")
    barred = free.restricted(idx, rank)
    opp = load_strategy("tosk", "aggressor").vector()
    rank_bits = sum(1 << (4 * idx + s) for s in range(4))
    out = tosk.simulate(rv, barred.vector(), opp, SEED, 0, 1000)
    assert (out["played_a"] & rank_bits == 0).all()
    assert (out["seen_a"] & rank_bits != 0).any()  # it did hold the rank
    unbarred = tosk.simulate(rv, free.vector(), opp, SEED, 0, 1000)
    assert (unbarred["played_a"] & rank_bits != 0).any()  # and would have played it
    for g in (0, 1):
        log, res = tosk.trace_log(rv, barred.vector(), opp, SEED, g)
        _replay(rv, log, res)
        a = g % 2
        for row in log[:, a]:
            n = int((row[: tosk.MAX_HAND] >= 0).sum())
            assert all(row[i] // 4 != idx for i in _bits(row[tosk.L_PLAYED], n))


# ---------------------------------------------------------------- pure Python = jitted

_NOJIT = """
import json
from balance.config import load_strategy, resolve_variant
from kernels import rng
from sims import tosk
rv = resolve_variant("tosk", "advanced-techniques+force+momentum").vector()
a, b = load_strategy("tosk", "aggressor").vector(), load_strategy("tosk", "turtle").vector()
out = tosk.simulate(rv, a, b, %d, 0, 4)
log, res = tosk.trace_log(rv, a, b, %d, 1)
print(json.dumps({"sim": {k: v.tolist() for k, v in out.items()}, "log": log.tolist(),
                  "res": res.tolist()}))
"""


def test_engine_same_without_jit(rules, strat):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NUMBA_DISABLE_JIT": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", _NOJIT % (SEED, SEED)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    pure = json.loads(proc.stdout.strip().splitlines()[-1])
    rv = rules["advanced-techniques+force+momentum"]
    out = tosk.simulate(rv, strat["aggressor"], strat["turtle"], SEED, 0, 4)
    log, res = tosk.trace_log(rv, strat["aggressor"], strat["turtle"], SEED, 1)
    assert pure["sim"] == {k: v.tolist() for k, v in out.items()}
    assert pure["log"] == log.tolist() and pure["res"] == res.tolist()
