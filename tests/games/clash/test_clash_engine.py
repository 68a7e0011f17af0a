"""Clash of Steel games: replays checked round by round against the rules,
invariants over many games, maneuvers, hidden information and seat symmetry
per loadout. What every engine must do (mirror = 1/2, same seed same games,
thread and batch invariance, trace = simulate) is tests/core/test_conformance.py.

``_replay`` re-derives every logged round from the rulebook functions
(C4–C13), independently of the game loop: the cards' faces, totals from the
played cards only, the outcome, discards, wounds, Armor, disarms and
retrieval, the range, the next initiative, the maneuvers and the end.
"""

from __future__ import annotations

import tomllib

import numpy as np
import pytest

from kernels.contract import Side
from sims import clash
from sims.clash import (
    ARMOR,
    ATTACK,
    DEFEND,
    FEINT,
    MOVE,
    SECOND_WIND,
    T_ACTION,
    T_ITEM,
    T_STANCE,
    T_TARGET,
)
from strategies import clash as kernel
from strategies.clash import encode_strategy
from strategies.clash import view as kview
from tests import ROOT

NAMES = ["random", "aggressive", "counter", "ranger", "miser", "bluffer"]
RULES = clash.encode_rules(clash.DEFAULT_RULES)


def spec(name: str) -> dict:
    with open(ROOT / "strategies" / "clash" / f"{name}.toml", "rb") as fh:
        data = tomllib.load(fh)
    data.pop("description", None)
    data.pop("loadout", None)
    return data


def strat(name: str, loadout: int) -> np.ndarray:
    return encode_strategy(spec(name), Side(loadout=loadout))


def lo(name: str) -> int:
    return clash.loadout_index(name)


# ------------------------------------------------------------------- replay oracle
def _seat(row, s):
    b = clash.SEAT0 + s * clash.SEAT_W
    return row[b : b + clash.SEAT_W]


def _replay(rules, log, bids, res, loadouts) -> dict:
    """Check one traced game against the rules; returns counts of what it saw."""
    seen = {
        "feint": 0,
        "armor": 0,
        "second_wind": 0,
        "disarm": 0,
        "retrieve": 0,
        "wound": 0,
        "repeat_wound": 0,
        "move": 0,
        "rounds": 0,
        "wait": 0,
        "hit": 0,
    }
    deck = rules[clash.R_STAMINA : clash.R_STAMINA + 5].astype(np.int64)
    stack_only = bool(rules[clash.R_HIT_STACK_ONLY])
    mods = rules[clash.R_ITEM_MODS : clash.R_ITEM_MODS + clash.N_ITEM_MODS].astype(np.int64)
    sw_max = int(rules[clash.R_SECOND_WIND_MAX])
    hand = np.array([deck, deck], dtype=np.int64)
    disc = np.zeros((2, 5), dtype=np.int64)
    # the bid (C2; CD4: never the last card, a tie that changes nothing goes to the coin)
    keep_last = bool(rules[clash.R_BID_KEEPS_LAST])
    init = -1
    for b in bids:
        bid = np.array([b[0:5], b[5:10]], dtype=np.int64)
        assert all(bid[s].sum() >= 1 and (bid[s] <= hand[s]).all() for s in range(2))
        kept = np.zeros(2, dtype=np.int64)
        init = clash.settle_bid(hand, disc, bid, keep_last, kept)
        assert list(kept) == list(b[clash.B_KEPT : clash.B_KEPT + 2])
        if init == -2:
            init = int(b[clash.B_COIN])
            assert init in (0, 1) and res[clash.X_BID_COIN] == 1
        else:
            assert b[clash.B_COIN] == -1
        if keep_last:
            assert hand[0].sum() >= 1 and hand[1].sum() >= 1
    assert init == res[clash.X_BID_WINNER]
    if keep_last:
        assert init >= 0 and res[clash.X_ROUNDS] >= 1  # no game ends in the bid
    items = [list(clash.ALL_LOADOUTS[lo_][:2]) for lo_ in loadouts]
    man = [clash.ALL_LOADOUTS[lo_][2] for lo_ in loadouts]
    man_left = [True, True]
    avail = [[True, True], [True, True]]
    wounds = np.zeros((2, 3), dtype=np.int64)
    rng = int(res[clash.X_START_RANGE])
    rounds = log.shape[0]
    assert rounds == res[clash.X_ROUNDS] <= rules[clash.R_MAX_ROUNDS]
    range_wins = np.zeros((2, 4), dtype=np.int64)
    for r in range(rounds):
        row = log[r]
        seen["rounds"] += 1
        assert row[clash.G_RANGE] == rng and row[clash.G_INIT] == init
        waits = int(row[clash.G_WAIT])
        seen["wait"] += bin(waits).count("1")
        x = [_seat(row, 0), _seat(row, 1)]
        card = [
            [int(x[s][k]) for k in (clash.S_STANCE, clash.S_ITEM, clash.S_ACTION, clash.S_TARGET)]
            for s in range(2)
        ]
        played = []
        for s in range(2):
            assert (x[s][clash.S_HAND : clash.S_HAND + 5] == hand[s]).all()
            # C4: Wait -> both face up, Act -> both face down, for the four card types
            assert int(x[s][clash.S_FACEUP]) == waits
            # C5: an available item is played; none only when both are disarmed
            it = card[s][T_ITEM]
            if it < 0:
                assert not any(avail[s])
            else:
                assert it in items[s] and avail[s][items[s].index(it)]
            assert 0 <= card[s][T_STANCE] < 3 and 0 <= card[s][T_ACTION] < 3
            assert 0 <= card[s][T_TARGET] < 3
            p = [int(v) for v in (x[s][clash.S_P1], x[s][clash.S_P2]) if v > 0]
            assert 1 <= len(p) <= 2
            pc = np.zeros(5, dtype=np.int64)
            for v in p:
                pc[v - 1] += 1
            assert (pc <= hand[s]).all()
            played.append(pc)
            # C12 Feint: once, by a Feint holder, the card really changes
            f = int(x[s][clash.S_FEINT])
            if f:
                assert man[s] == FEINT and man_left[s]
                man_left[s] = False
                seen["feint"] += 1
                now = card[s][T_ACTION] if f <= 3 else card[s][T_TARGET]
                assert now == (f - 1 if f <= 3 else f - 4) != int(x[s][clash.S_FEINT_FROM])
        # C6/C7 totals from the played cards only
        totals = []
        for s in range(2):
            o = 1 - s
            t = clash.action_total(
                card[s][T_ACTION],
                int((played[s] * np.arange(1, 6)).sum()),
                card[s][T_STANCE],
                card[s][T_ITEM],
                card[o][T_ITEM],
                rng,
                card[s][T_TARGET],
                card[o][T_ACTION],
                card[o][T_TARGET],
                wounds[s, 0],
                wounds[s, 1],
                wounds[s, 2],
                int(rules[clash.R_SPEAR_VS_SPEAR]),
                mods,
                int(rules[clash.R_SPEAR_VS_SHIELD]),
            )
            assert t == x[s][clash.S_TOTAL]
            assert t == sum(int(x[s][clash.S_T_STAM + k]) for k in range(5))
            totals.append(t)
        w = clash.round_winner(totals[0], totals[1], init)
        assert row[clash.G_WINNER] == w
        range_wins[w, rng] += 1
        hit, disarmed, mover = clash.resolve(card[0][T_ACTION], card[1][T_ACTION], w)
        # C9 discards, C13 Second Wind
        left = []
        for s in range(2):
            out = np.zeros(5, dtype=np.int64)
            n = clash.discard_counts(
                hand[s] - played[s], played[s], card[s][T_ACTION], hit == s, stack_only, out
            )
            assert (x[s][clash.S_DISC : clash.S_DISC + 5] == out).all()
            assert bool(x[s][clash.S_HIT]) == (hit == s)
            if hit != s:
                assert n >= 1  # never discard the last card unless hit
            hand[s] -= out
            disc[s] += out
            sw = int(x[s][clash.S_SW])
            if sw:
                assert man[s] == SECOND_WIND and man_left[s] and disc[s, sw - 1] > 0
                # C13: the highest discarded card of value at most second_wind_max
                assert sw <= sw_max
                assert sw == max(v + 1 for v in range(sw_max) if disc[s, v] > 0)
                man_left[s] = False
                disc[s, sw - 1] -= 1
                hand[s, sw - 1] += 1
                n += 1
                seen["second_wind"] += 1
            assert n == x[s][clash.S_LEFT] == hand[s].sum()
            left.append(n)
        if 0 in left:
            assert r == rounds - 1, "the game went on after a defeat"
            assert res[clash.X_WINNER] == (1 if left[0] == 0 else 0)
            assert res[clash.X_REASON] == clash.END_DEFEAT
            break
        # C10 wounds and Armor
        if hit >= 0:
            seen["hit"] += 1
            kind = card[w][T_TARGET]
            xs = x[hit]
            if wounds[hit, kind]:
                seen["repeat_wound"] += 1
                assert not xs[clash.S_ARMOR] and xs[clash.S_WOUND] == kind
                assert xs[clash.S_REPEAT] == 1
            elif xs[clash.S_ARMOR]:
                assert man[hit] == ARMOR and man_left[hit] and xs[clash.S_WOUND] == -1
                man_left[hit] = False
                seen["armor"] += 1
            else:
                assert xs[clash.S_WOUND] == kind and xs[clash.S_REPEAT] == 0
                wounds[hit, kind] = 1
                seen["wound"] += 1
        else:
            assert all(x[s][clash.S_WOUND] == -1 and not x[s][clash.S_ARMOR] for s in range(2))
        # C8 disarm
        for s in range(2):
            if disarmed == s and card[s][T_ITEM] >= 0:
                assert x[s][clash.S_DISARMED] == card[s][T_ITEM]
                avail[s][items[s].index(card[s][T_ITEM])] = False
                seen["disarm"] += 1
            else:
                assert x[s][clash.S_DISARMED] == -1
        # C8 move and retrieval
        new = int(row[clash.G_NEW_RANGE])
        if mover >= 0:
            assert new != rng
            seen["move"] += 1
            ret = int(x[mover][clash.S_RETRIEVED])
            if not all(avail[mover]):
                assert ret in items[mover] and not avail[mover][items[mover].index(ret)]
                avail[mover][items[mover].index(ret)] = True
                seen["retrieve"] += 1
            else:
                assert ret == -1
        else:
            assert new == rng and all(x[s][clash.S_RETRIEVED] == -1 for s in range(2))
        rng = new
        # C11 initiative
        init = clash.next_initiative(card[0][T_STANCE], card[1][T_STANCE], w)
        assert row[clash.G_NEXT_INIT] == init
    else:
        if rounds == rules[clash.R_MAX_ROUNDS]:
            assert res[clash.X_WINNER] == -1 and res[clash.X_REASON] == clash.END_CAP
    assert res[clash.X_CONSERVED] == 1
    assert (hand + disc == deck).all()  # each player's stamina cards are all accounted for
    for s in range(2):
        b = clash.X_RANGE_WINS + 4 * s
        assert (range_wins[s] == res[b : b + 4]).all()
        assert res[clash.X_N0 + s] == hand[s].sum()
        assert res[clash.X_WOUNDS + s] == wounds[s].sum()
    return seen


PAIRS = [
    ("random", "random"),
    ("aggressive", "counter"),
    ("counter", "bluffer"),
    ("ranger", "miser"),
    ("bluffer", "random"),
    ("miser", "aggressive"),
]


@pytest.mark.parametrize("a,b", PAIRS)
def test_replay_random_games(a, b):
    """Every round of many traced games agrees with the rules."""
    rs = np.random.default_rng(7)
    total: dict = {}
    for g in range(40):
        la, lb = (int(v) for v in rs.integers(0, 27, 2))
        sa, sb = strat(a, la), strat(b, lb)
        log, bids, res = clash.trace_log(RULES, sa, sb, 11, g)
        loads = (la, lb) if g % 2 == 0 else (lb, la)
        seen = _replay(RULES, log, bids, res, loads)
        for k, v in seen.items():
            total[k] = total.get(k, 0) + v
    assert total["rounds"] > 40


@pytest.mark.slow
def test_replay_covers_every_rule():
    """Random play with the knobs changed reaches every branch the oracle checks."""
    total: dict = {}
    for rules_over in (
        {},
        {
            "hit_discard_stack_only": False,
            "spear_vs_spear": True,
            "spear_vs_shield": True,
            "feint_order": 1,
            "allow_shield_spear": True,
            "bid_keeps_last": False,
        },
    ):
        rules = clash.encode_rules(dict(clash.DEFAULT_RULES, **rules_over))
        n_lo = len(clash.legal_loadouts(rules))
        for g in range(300):
            la, lb = g % n_lo, (7 * g + 3) % n_lo
            log, bids, res = clash.trace_log(rules, strat("random", la), strat("random", lb), 5, g)
            loads = (la, lb) if g % 2 == 0 else (lb, la)
            for k, v in _replay(rules, log, bids, res, loads).items():
                total[k] = total.get(k, 0) + v
    for k in (
        "feint",
        "armor",
        "second_wind",
        "disarm",
        "retrieve",
        "wound",
        "repeat_wound",
        "move",
        "wait",
        "hit",
    ):
        assert total[k] > 0, k


# ---------------------------------------------------------------- scripted strategies
ALWAYS_ACT = {"wait": {"bias": -100.0}}


BID_HIGH = {"bid": {"gap": -10.0}, "bid_target": 12}  # wins the bid against the default
# (a strategy without bid weights bids a single 1)


def test_bid_in_a_game():
    """The rulebook bid in a game: 5+2 against a bid of 4."""
    ben = encode_strategy(
        {"bid": {"gap": -10.0, "cards": -1.0, "fives": 0.5}, "bid_target": 7}, Side(loadout=0)
    )
    jess = encode_strategy({"bid": {"gap": -10.0, "cards": -1.0}, "bid_target": 4}, Side(loadout=0))
    log, bids, res = clash.trace_log(RULES, ben, jess, 1, 0)
    assert list(bids[0, 10:12]) == [7, 4]
    assert sorted(np.repeat(np.arange(1, 6), bids[0, 0:5])) == [2, 5]
    assert res[clash.X_BID_WINNER] == 0 and len(bids) == 1
    # Ben starts the first round without his 5 and 2; Jessica has all 15 cards
    assert list(log[0, clash.SEAT0 + clash.S_HAND : clash.SEAT0 + clash.S_HAND + 5]) == [
        3,
        2,
        3,
        3,
        2,
    ]
    b1 = clash.SEAT0 + clash.SEAT_W
    assert list(log[0, b1 + clash.S_HAND : b1 + clash.S_HAND + 5]) == [3, 3, 3, 3, 3]
    assert log[0, clash.G_INIT] == 0
    out = clash.simulate(RULES, ben, jess, 1, 0, 2)
    assert out["bid_seat0"][0] == 7 and out["bid_seat1"][0] == 4 and out["bid_winner"][0] == 0
    assert out["bid_seat0"][1] == 4 and out["bid_winner"][1] == 1  # seats swapped


def test_tied_bids_are_discarded_and_rebid():
    """C2: "If there's a tie, both players discard their bid cards, and bid again."
    and (C9) "You can't discard your last Stamina card unless you were hit":
    identical bidders tie every time until each is down to its last card,
    which neither may discard; bidding again could change nothing, so a coin
    gives the initiative and the duel begins (CD4). Today's engine ended such
    games in the bid as a double defeat, before the first round."""
    same = encode_strategy({"bid": {"gap": -10.0, "cards": -1.0}, "bid_target": 5}, Side(loadout=0))
    coins = set()
    for g in range(8):
        log, bids, res = clash.trace_log(RULES, same, same, 1, g)
        assert len(bids) >= 2 and all(b[10] == b[11] for b in bids)
        assert res[clash.X_REASON] != clash.END_DOUBLE and res[clash.X_ROUNDS] >= 1
        assert res[clash.X_BID_COIN] == 1 and bids[-1][clash.B_COIN] == res[clash.X_BID_WINNER]
        assert log[0, clash.SEAT0 + clash.S_HAND : clash.SEAT0 + clash.S_HAND + 5].sum() == 1
        coins.add(int(res[clash.X_BID_WINNER]))
        _replay(RULES, log, bids, res, (0, 0))
    assert coins == {0, 1}  # a fair coin, not a seat
    # the old reading (bid_keeps_last = false): both hands empty, a double defeat
    old = clash.encode_rules(dict(clash.DEFAULT_RULES, bid_keeps_last=False))
    log, bids, res = clash.trace_log(old, same, same, 1, 0)
    assert res[clash.X_REASON] == clash.END_DOUBLE and res[clash.X_WINNER] == -1
    assert res[clash.X_ROUNDS] == 0 and res[clash.X_BID_WINNER] == -1
    _replay(old, log, bids, res, (0, 0))
    # a bidder with a different bid wins at once
    log, bids, res = clash.trace_log(RULES, same, encode_strategy({}, Side(loadout=0)), 1, 0)
    assert len(bids) == 1 and res[clash.X_BID_WINNER] == 0


@pytest.mark.parametrize("name", NAMES)
def test_no_game_ends_in_the_bid(name):
    """C9 in the bid: no mirror match of a shipped strategy ends before its
    first round (today 8% of miser mirrors and 5% of aggressive mirrors ended
    as a double defeat after a run of ties)."""
    s = strat(name, 0)
    out = clash.simulate(RULES, s, s, 1, 0, 2000)
    assert (out["rounds"] >= 1).all() and (out["reason"] != clash.END_DOUBLE).all()
    assert (out["bid_winner"] >= 0).all()
    assert (out["stamina_seat0"] + out["stamina_seat1"] >= 1).all()


def test_the_bid_does_not_see_the_opponents_items():
    """C3: "Once Initiative has been determined, each player reveals their Item
    cards." A view written for the bid (no initiative yet) holds no item of
    the opponent's; once the initiative is decided it does."""
    hand = np.full((2, 5), 3, dtype=np.int64)
    zeros3 = np.zeros((2, 3), dtype=np.int64)
    items = np.array([[0, 1], [2, 4]], dtype=np.int64)
    avail = np.ones((2, 2), dtype=np.int64)
    man = np.zeros(2, dtype=np.int64)
    view = np.zeros(kview.N_VIEW)
    for init in (-1, 0):
        clash._fill_view(
            view,
            0,
            0,
            0,
            init,
            hand,
            np.zeros((2, 5), np.int64),
            zeros3,
            items,
            avail,
            man,
            np.ones(2, np.int64),
        )
        opp = [view[kview.V_OPP_ITEM + k] for k in range(2)]
        opp_avail = [view[kview.V_OPP_AVAIL + k] for k in range(2)]
        mine = [view[kview.V_MY_ITEM + k] for k in range(2)]
        assert mine == [0, 1]
        if init < 0:
            assert opp == [-1, -1] and opp_avail == [0, 0]
        else:
            assert opp == [2, 4] and opp_avail == [1, 1]


def test_hidden_cards_are_not_seen():
    """A card chosen face down cannot depend on the opponent's face-down card
    of the same round: the initiative loser's first-round cards are the same
    whatever the holder's hidden Action is (C4)."""
    base = {**BID_HIGH, **ALWAYS_ACT}
    attacker = encode_strategy({**base, "action": {"attack": 5.0}}, Side(loadout=0))
    mover = encode_strategy({**base, "action": {"move": 5.0}}, Side(loadout=0))
    follower = strat("counter", 0)  # would answer the Action if it could see it
    cards = []
    for holder in (attacker, mover):
        log, bids, res = clash.trace_log(RULES, holder, follower, 3, 0)
        assert res[clash.X_BID_WINNER] == 0 and log[0, clash.G_WAIT] == 0
        x = _seat(log[0], 1)
        cards.append(
            [
                int(x[k])
                for k in (
                    clash.S_STANCE,
                    clash.S_ITEM,
                    clash.S_ACTION,
                    clash.S_TARGET,
                    clash.S_P1,
                    clash.S_P2,
                )
            ]
        )
        assert _seat(log[0], 0)[clash.S_ACTION] == (ATTACK if holder is attacker else MOVE)
    assert cards[0] == cards[1]
    # ... while a face-up Action is answered: the counter holder Waits and defends
    waiter = encode_strategy(
        {**spec("counter"), "bid_target": 14, "bid": {"gap": -10.0}, "wait": {"bias": 100.0}},
        Side(loadout=0),
    )
    log, bids, res = clash.trace_log(RULES, waiter, attacker, 3, 0)
    assert log[0, clash.G_WAIT] == 15 and _seat(log[0], 1)[clash.S_ACTION] == ATTACK
    assert _seat(log[0], 0)[clash.S_ACTION] == DEFEND


def test_armor_negates_one_wound():
    armored = encode_strategy(
        {"action": {"defend": 5.0}, "armor": {"bias": 1.0}, "stamina": {"sum": -1.0}},
        Side(loadout=lo("Axe+Dagger/Armor")),
    )
    hitter = encode_strategy(
        {
            "action": {"attack": 5.0},
            "target": {"new_wound": 2.0},
            "stamina": {"sum": 1.0},
            **BID_HIGH,
        },
        Side(loadout=lo("Axe+Dagger/Feint")),
    )
    log, bids, res = clash.trace_log(RULES, armored, hitter, 1, 0)
    a = [_seat(log[r], 0) for r in range(log.shape[0])]
    used = [r for r in range(len(a)) if a[r][clash.S_ARMOR]]
    hits = [r for r in range(len(a)) if a[r][clash.S_HIT]]
    assert len(used) == 1 and used[0] == hits[0]  # the first wound is negated, once
    assert a[hits[0]][clash.S_WOUND] == -1
    assert any(a[r][clash.S_WOUND] >= 0 for r in hits[1:])
    assert res[clash.X_MAN_ROUND] == used[0] + 1
    _replay(RULES, log, bids, res, (lo("Axe+Dagger/Armor"), lo("Axe+Dagger/Feint")))


def test_wound_penalties_and_repeat_wounds():
    """Mid attacks: the first gives a Torso wound (-1 to Attacks), repeats add nothing."""
    victim = encode_strategy(
        {"action": {"attack": 5.0}, "stamina": {"sum": -1.0}, **BID_HIGH},
        Side(loadout=lo("Axe+Dagger/Feint")),
    )
    hitter = encode_strategy(
        {"action": {"attack": 5.0}, "target": {"mid": 5.0}, "stamina": {"sum": 1.0}},
        Side(loadout=lo("Axe+Dagger/Feint")),
    )
    log, bids, res = clash.trace_log(RULES, victim, hitter, 1, 0)
    v = [_seat(log[r], 0) for r in range(log.shape[0])]
    # (a hit in the deciding round ends the game before wounds are applied)
    hit_rounds = [r for r in range(len(v) - 1) if v[r][clash.S_HIT]]
    assert len(hit_rounds) >= 2
    assert all(v[r][clash.S_WOUND] == 1 for r in hit_rounds)  # Torso each time
    assert res[clash.X_WOUNDS] == 1  # but one wound card
    for r in range(hit_rounds[0] + 1, len(v)):
        assert v[r][clash.S_T_WOUND] == -1  # -1 to its Attacks, not -2
    for r in range(hit_rounds[0] + 1):
        assert v[r][clash.S_T_WOUND] == 0
    _replay(RULES, log, bids, res, (lo("Axe+Dagger/Feint"), lo("Axe+Dagger/Feint")))


def test_feint_swaps_after_seeing_a_face_up_action():
    """The holder Waits on the Action: the loser shows Attack, the holder shows
    Move... the loser's Feint then swaps its Action (once per game)."""
    feinter = encode_strategy(
        {"action": {"attack": 1.0, "move_vs_move": 2.5}, "feint_margin": 0.5},
        Side(loadout=lo("Axe+Sword/Feint")),
    )
    holder = encode_strategy(
        {**BID_HIGH, "wait": {"bias": 100.0}, "action": {"move": 1.0}},
        Side(loadout=lo("Axe+Sword/Armor")),
    )
    log, bids, res = clash.trace_log(RULES, holder, feinter, 2, 0)
    f = _seat(log[0], 1)
    assert _seat(log[0], 0)[clash.S_ACTION] == MOVE
    assert f[clash.S_FEINT] == 1 + MOVE and f[clash.S_FEINT_FROM] == ATTACK
    assert f[clash.S_ACTION] == MOVE
    assert all(_seat(log[r], 1)[clash.S_FEINT] == 0 for r in range(1, log.shape[0]))
    _replay(RULES, log, bids, res, (lo("Axe+Sword/Armor"), lo("Axe+Sword/Feint")))


def test_second_wind_escapes_defeat():
    sw = encode_strategy(
        {"action": {"attack": 5.0}, "stamina": {"sum": 1.0}, "second_wind_at": 0},
        Side(loadout=lo("Axe+Dagger/Second Wind")),
    )
    hitter = encode_strategy(
        {
            "action": {"attack": 5.0},
            "stamina": {"sum": 1.0},
            "bid": {"gap": -10.0},
            "bid_target": 3,
        },
        Side(loadout=lo("Axe+Dagger/Feint")),
    )
    log, bids, res = clash.trace_log(RULES, sw, hitter, 1, 0)
    used = [r for r in range(log.shape[0]) if _seat(log[r], 0)[clash.S_SW]]
    assert len(used) == 1
    r = used[0]
    x = _seat(log[r], 0)
    assert x[clash.S_LEFT] == 1  # it had discarded its last card, one came back
    assert res[clash.X_MAN_ROUND] == r + 1
    _replay(RULES, log, bids, res, (lo("Axe+Dagger/Second Wind"), lo("Axe+Dagger/Feint")))
    # never: the same game ends at that round
    never = sw.copy()
    never[kernel.P_SECOND_WIND_AT] = -1
    _, _, res2 = clash.trace_log(RULES, never, hitter, 1, 0)
    assert res2[clash.X_ROUNDS] == r + 1 and res2[clash.X_WINNER] == 1


def test_disarm_and_retrieval():
    """A winning Defend disarms the item played; a winning Move brings one back."""
    defender = encode_strategy(
        {"action": {"defend": 5.0}, "stamina": {"sum": 1.0}, **BID_HIGH},
        Side(loadout=lo("Axe+Shield/Feint")),
    )
    victim = encode_strategy(
        {"action": {"attack": 2.0, "retrieve": 5.0}, "stamina": {"sum": -1.0}},
        Side(loadout=lo("Dagger+Sword/Feint")),
    )
    log, bids, res = clash.trace_log(RULES, defender, victim, 1, 0)
    v = [_seat(log[r], 1) for r in range(log.shape[0])]
    dis = [r for r in range(len(v)) if v[r][clash.S_DISARMED] >= 0]
    ret = [r for r in range(len(v)) if v[r][clash.S_RETRIEVED] >= 0]
    assert dis and v[dis[0]][clash.S_DISARMED] == v[dis[0]][clash.S_ITEM]
    assert res[clash.X_DISARMED + 1] == len(dis)
    _replay(RULES, log, bids, res, (lo("Axe+Shield/Feint"), lo("Dagger+Sword/Feint")))
    # retrieval is covered across random games too (test_replay_covers_every_rule)
    assert all(v[r][clash.S_ACTION] == MOVE for r in ret)


def test_no_item_when_both_disarmed():
    rules = RULES
    found = False
    for g in range(200):
        log, bids, res = clash.trace_log(rules, strat("counter", 3), strat("random", 8), 9, g)
        for r in range(log.shape[0]):
            for s in range(2):
                if _seat(log[r], s)[clash.S_ITEM] == -1:
                    found = True
        if found:
            break
    assert found


# ---------------------------------------------------------------- many games
@pytest.fixture(scope="module")
def tournament():
    out = {}
    for a in NAMES:
        for b in NAMES:
            la = (4 * NAMES.index(a) + 1) % 27
            out[a, b] = clash.simulate(RULES, strat(a, la), strat(b, 9), 17, 0, 400)
    return out


def test_invariants_over_many_games(tournament):
    cap = int(RULES[clash.R_MAX_ROUNDS])
    for out in tournament.values():
        assert (out["conserved"] == 1).all()
        assert (out["cards_seat0"] == 15).all() and (out["cards_seat1"] == 15).all()
        assert ((out["rounds"] >= 0) & (out["rounds"] <= cap)).all()
        dec = out["winner_seat"] >= 0
        loser_left = np.where(out["winner_seat"] == 0, out["stamina_seat1"], out["stamina_seat0"])
        assert (loser_left[dec] == 0).all()
        capped = out["reason"] == clash.END_CAP
        assert (out["rounds"][capped] == cap).all() and (out["winner_seat"][capped] == -1).all()
        assert (out["rounds"][~capped & (out["reason"] == clash.END_DEFEAT)] <= cap).all()
        assert (out["stamina_seat0"][capped] > 0).all() and (out["stamina_seat1"][capped] > 0).all()
        double = out["reason"] == clash.END_DOUBLE  # a tied bid emptied both hands
        assert (out["winner_seat"][double] == -1).all() and (out["rounds"][double] == 0).all()
        wins = sum(out[f"wins_seat{s}_{r.lower()}"] for s in range(2) for r in clash.RANGES)
        fought = sum(out[f"rounds_{r.lower()}"] for r in clash.RANGES)
        assert (wins == out["rounds"]).all() and (fought == out["rounds"]).all()
        assert set(np.unique(out["a_points"])) <= {0, 1, 2}
        assert (out["bid_winner"] >= -1).all() and (out["bids"] >= 1).all()
        for k in clash.METRICS:
            assert k in out and (out[k] >= -1).all()
        assert (out["max_deficit"][dec] >= 0).all() and (out["max_deficit"][~dec] == -1).all()
        assert ((out["decided_pct"][dec] >= 0) & (out["decided_pct"][dec] <= 100)).all()


def test_strategies_are_sensible(tournament):
    score = {k: v["a_points"].mean() / 2 for k, v in tournament.items()}
    for name in NAMES[1:]:
        assert score[name, "random"] > 0.7, name  # every scripted strategy beats random
    assert score["random", "random"] == pytest.approx(0.5, abs=0.1)


@pytest.mark.parametrize("name", ["random", "bluffer", "counter"])
@pytest.mark.parametrize("loadout", [0, 13, 26])
def test_mirror_scores_one_half(name, loadout):
    """A loadout against itself with the same strategy: each seat-swapped pair
    scores exactly 2 half points (½ each)."""
    s = strat(name, loadout)
    out = clash.simulate(RULES, s, s, 5, 0, 200)
    pairs = out["a_points"][0::2] + out["a_points"][1::2]
    assert (pairs == 2).all()


def test_round_cap_is_a_draw():
    rules = clash.encode_rules(dict(clash.DEFAULT_RULES, max_rounds=2))
    out = clash.simulate(rules, strat("random", 0), strat("random", 0), 1, 0, 20)
    capped = out["rounds"] == 2
    assert capped.any()
    assert (out["winner_seat"][capped & (out["reason"] == clash.END_CAP)] == -1).all()
    assert (out["a_points"][out["winner_seat"] == -1] == 1).all()


def test_trace_says_a_repeat_wound_adds_no_penalty():
    """C10: each player has one wound card of each kind ("A High Attack deals
    Head Wounds"), so a second Torso wound adds no penalty: the trace says so."""
    victim = encode_strategy(
        {"action": {"attack": 5.0}, "stamina": {"sum": -1.0}, **BID_HIGH},
        Side(loadout=lo("Axe+Dagger/Feint")),
    )
    hitter = encode_strategy(
        {"action": {"attack": 5.0}, "target": {"mid": 5.0}, "stamina": {"sum": 1.0}},
        Side(loadout=lo("Axe+Dagger/Feint")),
    )
    ev = clash.trace(RULES, victim, hitter, 1, 0, names=("victim", "hitter"))
    texts = [e["text"] for e in ev if e["kind"] == "round"]
    first = [i for i, t in enumerate(texts) if "takes a Torso wound" in t]
    again = [
        i for i, t in enumerate(texts) if "takes a second Torso wound, which adds no penalty" in t
    ]
    assert len(first) == 1 and again and min(again) > first[0]


def test_trace_texts():
    ev = clash.trace(
        RULES, strat("counter", 5), strat("aggressive", 9), 3, 1, names=("counter", "aggressive")
    )
    kinds = [e["kind"] for e in ev]
    assert kinds[0] == "loadouts" and "bid" in kinds and kinds[-1] == "end"
    assert all(isinstance(e["text"], str) and e["text"] for e in ev)
    rounds = [e for e in ev if e["kind"] == "round"]
    assert rounds and "stamina" in rounds[0]["text"] and "initiative" in rounds[0]["text"]
    assert "item" in rounds[0]["text"] and "wins the round" in rounds[0]["text"]


def test_strategy_surface():
    """SECTIONS/SCALARS list every weight; every named TOML uses only known keys."""
    allowed = {"description", "name", *kernel.SCALARS, *kernel.SECTIONS}
    for name in NAMES:
        data = spec(name)
        assert set(data) <= allowed, name
        for sec, (_, feats) in kernel.SECTIONS.items():
            assert set(data.get(sec, {})) <= {f[0] for f in feats}, (name, sec)
    v = encode_strategy(spec("counter"), Side(loadout=13))
    assert v.shape == (kernel.N_PARAMS,) and v[kernel.P_LOADOUT] == 13
    idx = sorted(
        [b + i for b, feats in kernel.SECTIONS.values() for i in range(len(feats))]
        + [i for i, _ in kernel.SCALARS.values()]
        + [kernel.P_LOADOUT]
    )
    assert idx == list(range(kernel.N_PARAMS))  # the layout has no gap and no overlap
