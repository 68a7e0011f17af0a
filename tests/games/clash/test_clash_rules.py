"""Clash of Steel: every rulebook example and ruling table (C1–C15) checked on
the engine's pure rule functions."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from sims import clash
from sims.clash import (
    ARM,
    ATTACK,
    AXE,
    DAGGER,
    DEFEND,
    HAND,
    HIGH,
    LOW,
    MID,
    MOVE,
    NEUTRAL,
    QUICK,
    REACH,
    SHIELD,
    SPEAR,
    STEP,
    STRONG,
    SWORD,
)

V = {v: v - 1 for v in range(1, 6)}  # stamina value -> count index


def counts(*values) -> np.ndarray:
    c = np.zeros(5, dtype=np.int64)
    for v in values:
        c[V[v]] += 1
    return c


def values(c) -> list[int]:
    return sorted(v + 1 for v in range(5) for _ in range(int(c[v])))


STACK_ONLY = clash.DEFAULT_RULES["hit_discard_stack_only"]


def discard(hand, played, action, hit, stack_only=STACK_ONLY):
    out = np.zeros(5, dtype=np.int64)
    left = clash.discard_counts(counts(*hand), counts(*played), action, hit, stack_only, out)
    return values(out), int(left)


# ---- C1 loadouts -------------------------------------------------------------------
def test_loadouts():
    assert len(clash.LOADOUTS) == 27 and len(clash.ALL_LOADOUTS) == 30
    assert len(set(clash.LOADOUTS)) == 27
    for a, b, m in clash.LOADOUTS:
        assert a < b and {a, b} != {SHIELD, SPEAR} and 0 <= m < 3
    assert all({a, b} == {SHIELD, SPEAR} for a, b, _ in clash.ALL_LOADOUTS[27:])
    assert clash.loadout_name(0) == "Axe+Dagger/Armor"
    for i in range(30):
        assert clash.loadout_index(clash.loadout_name(i)) == i
    rules = dict(clash.DEFAULT_RULES)
    assert clash.legal_loadouts(rules) == list(range(27))
    rules["allow_shield_spear"] = True
    assert clash.legal_loadouts(rules) == list(range(30))


def test_illegal_loadout_refused():
    from kernels.contract import Side
    from strategies.clash import encode_strategy

    rules = clash.encode_rules(clash.DEFAULT_RULES)
    with pytest.raises(ValueError, match="not legal"):
        clash.simulate(
            rules,
            encode_strategy({}, Side(loadout=27)),
            encode_strategy({}, Side(loadout=0)),
            1,
            0,
            2,
        )


def test_rules_vector():
    vec = clash.encode_rules(clash.DEFAULT_RULES)
    assert len(vec) == len(clash.RULE_FIELDS)
    assert vec[clash.R_MAX_ROUNDS] == 60 and vec[clash.R_ALLOW_SHIELD_SPEAR] == 0
    assert list(vec[clash.R_STAMINA : clash.R_STAMINA + 5]) == [3] * 5  # 15 stamina cards
    bad = dict(clash.DEFAULT_RULES, **{f"stamina_{v}": 0 for v in range(1, 6)})
    with pytest.raises(ValueError):
        clash.encode_rules(bad)


# ---- C2 the initiative bid -----------------------------------------------------------
KEEP_LAST = clash.DEFAULT_RULES["bid_keeps_last"]


def settle(hand_values, bids, keep_last=KEEP_LAST):
    """Settle one bid from the players' stamina (values) and bids: (result,
    hands left, discards, values kept back)."""
    hand = np.array([counts(*h) for h in hand_values], dtype=np.int64)
    disc = np.zeros((2, 5), dtype=np.int64)
    kept = np.zeros(2, dtype=np.int64)
    r = clash.settle_bid(hand, disc, np.array([counts(*b) for b in bids]), keep_last, kept)
    return r, [values(h) for h in hand], [values(d) for d in disc], list(kept)


def test_bid_example():
    """Ben bids 5+2, Jessica bids 2+1+1: Ben discards his 5 and 2 and gains
    Initiative; Jessica takes her cards back."""
    full = [v for v in range(1, 6) for _ in range(3)]
    r, hands, discs, kept = settle([full, full], [[5, 2], [2, 1, 1]])
    assert r == 0 and discs == [[2, 5], []] and kept == [0, 0]
    assert hands[0] == [1, 1, 1, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5] and hands[1] == full


def test_bid_tie_discards_both():
    """C2: "If there's a tie, both players discard their bid cards, and bid again."""
    r, hands, discs, kept = settle([[1, 2, 3, 4, 5]] * 2, [[4, 3], [5, 2]])
    assert r == -1 and discs == [[3, 4], [2, 5]] and kept == [0, 0]
    assert hands == [[1, 2, 5], [1, 3, 4]]


def test_bid_never_discards_the_last_card():
    """CD4 under C9: "You can't discard your last Stamina card unless you were
    hit" holds in the bid too. A tied bid of every card a player has keeps its
    highest card back; so does a won bid of every card (today's engine: the
    tie emptied the player and ended the game before its first round)."""
    # a tie that would empty seat 0: it keeps its 4; seat 1 discards its bid
    r, hands, discs, kept = settle([[4, 2], [5, 1, 1, 3]], [[4, 2], [5, 1]])
    assert r == -1 and hands == [[4], [1, 3]] and discs == [[2], [1, 5]] and kept == [4, 0]
    # a won bid of every card: the winner keeps its highest
    r, hands, discs, kept = settle([[3, 3], [1, 2, 3]], [[3, 3], [1]])
    assert r == 0 and hands == [[3], [1, 2, 3]] and discs == [[3], []] and kept == [3, 0]
    # both bid their one last card and tie: nothing can be discarded, so
    # bidding again could never change anything (the engine then tosses a coin)
    r, hands, discs, kept = settle([[2], [2]], [[2], [2]])
    assert r == -2 and hands == [[2], [2]] and discs == [[], []] and kept == [2, 2]
    # one last card each, of different values: the higher wins and keeps it
    r, hands, discs, kept = settle([[2], [5]], [[2], [5]])
    assert r == 1 and hands == [[2], [5]] and kept == [0, 5]
    # the old reading (bid_keeps_last = false): the tie empties seat 0
    r, hands, _, _ = settle([[4, 2], [5, 1, 1, 3]], [[4, 2], [5, 1]], keep_last=False)
    assert r == -1 and hands == [[], [1, 3]]


# ---- C9 stamina discards and the last-card rule ---------------------------------------------
def test_discard_example():
    """Jessica holds 2, 4, 5, 5, Defends with 4+2, fails and is hit: she
    discards the 4 and one 5, and keeps the 2 and a 5."""
    out, left = discard(hand=[5, 5], played=[4, 2], action=DEFEND, hit=True)
    assert out == [4, 5] and left == 2


@pytest.mark.parametrize(
    "action,played,expected",
    [
        (ATTACK, [4, 2], [2, 4]),  # Attack: both played
        (DEFEND, [4, 2], [4]),  # Defend: the highest played
        (MOVE, [4, 2], [2]),  # Move: the lowest played
        (ATTACK, [3], [3]),
        (DEFEND, [3], [3]),
        (MOVE, [3], [3]),
    ],
)
def test_discard_per_action(action, played, expected):
    out, left = discard(hand=[1, 5], played=played, action=action, hit=False)
    assert out == expected and left == 2 + len(played) - len(expected)


def test_hit_discards_highest_card_remaining_in_hand():
    """C9 (CD1 corrected): "If a player was hit (their opponent won with an
    Attack), they permanently discard their highest Stamina card remaining in
    their hand." and "you are hit, acquire a Wound, and discard your highest
    Stamina card in your stack." The played cards are on the table, not in the
    hand: the played 5 that a Move would take back is not a candidate. The
    rulebook's trace example: a Move with 5+3 that is hit discards its 3 (the
    lowest played) and the stack's 3, not 5+3."""
    assert STACK_ONLY is True
    assert discard(hand=[1, 2, 3], played=[5, 3], action=MOVE, hit=True) == ([3, 3], 3)
    assert discard(hand=[1, 2], played=[5, 3], action=MOVE, hit=True) == ([2, 3], 2)
    # an empty stack: the 5 that would return is the player's last card, and
    # "You can't discard your last Stamina card unless you were hit (you can
    # repeatedly play your last Stamina so long as you're not hit)": it goes
    assert discard(hand=[], played=[5, 3], action=MOVE, hit=True) == ([3, 5], 0)
    # the old reading (hit_discard_stack_only = false): returning cards count
    assert discard(hand=[1, 2], played=[5, 3], action=MOVE, hit=True, stack_only=False) == (
        [3, 5],
        2,
    )
    assert discard(hand=[], played=[5, 3], action=MOVE, hit=True, stack_only=False) == ([3, 5], 0)


def test_last_card_rule():
    # you can repeatedly play your last stamina card so long as you're not hit
    for action in (ATTACK, DEFEND, MOVE):
        assert discard(hand=[], played=[3], action=action, hit=False) == ([], 1)
    # attacking with the last two cards and not hit: keep the higher one
    assert discard(hand=[], played=[4, 2], action=ATTACK, hit=False) == ([2], 1)
    # hit with the last card: discarded, no stamina left (defeat)
    assert discard(hand=[], played=[3], action=ATTACK, hit=True) == ([3], 0)
    assert discard(hand=[], played=[3, 1], action=ATTACK, hit=True) == ([1, 3], 0)
    assert discard(hand=[], played=[3, 1], action=DEFEND, hit=True) == ([1, 3], 0)
    # not the last card: ordinary discards
    assert discard(hand=[1], played=[4, 2], action=ATTACK, hit=False) == ([2, 4], 1)


# ---- C6 / C7 totals and item modifiers ------------------------------------------------
def _c7(action, item, rng, opp):
    """C7 written out from the rulebook's Items section, independently."""
    if item is None or action == MOVE:
        return 0
    m = 0
    atk, dfn = action == ATTACK, action == DEFEND
    if item == AXE:
        m += 1 if atk and opp == SHIELD else 0
        m += 1 if rng == ARM else 0
    if item == DAGGER:
        m += (2 if atk else 0) if rng == HAND else -1
    if item == SHIELD and dfn:
        m += 1 + (1 if opp == SPEAR else 0)
    if item == SPEAR:
        m += 1 if rng == REACH else 0
        # "+1 Attack against all other weapons outside of Hand Range": an Axe,
        # Dagger or Sword; a Shield is not a weapon (C7), nor another Spear (CD2)
        m += 1 if atk and rng != HAND and opp in (AXE, DAGGER, SWORD) else 0
    if item == SWORD:
        m += 1 if rng == STEP else 0
        m += 1 if atk and opp == AXE else 0
    return m


ITEM_OR_NONE = [None, AXE, DAGGER, SHIELD, SPEAR, SWORD]


@pytest.mark.parametrize("item", ITEM_OR_NONE)
def test_item_modifiers_every_range_and_opponent(item):
    for action, rng, opp in itertools.product((ATTACK, DEFEND, MOVE), range(4), ITEM_OR_NONE):
        got = clash.item_mod(
            action, -1 if item is None else item, rng, -1 if opp is None else opp, 0
        )
        assert got == _c7(action, item, rng, opp), (action, item, rng, opp)


def test_item_modifier_spot_checks():
    im = clash.item_mod
    assert im(ATTACK, AXE, ARM, SHIELD, 0) == 2 and im(DEFEND, AXE, ARM, SHIELD, 0) == 1
    assert im(ATTACK, DAGGER, HAND, -1, 0) == 2 and im(DEFEND, DAGGER, HAND, -1, 0) == 0
    assert im(ATTACK, DAGGER, STEP, -1, 0) == -1 and im(DEFEND, DAGGER, REACH, SWORD, 0) == -1
    assert im(DEFEND, SHIELD, HAND, SPEAR, 0) == 2 and im(ATTACK, SHIELD, HAND, SPEAR, 0) == 0
    assert im(ATTACK, SPEAR, REACH, SWORD, 0) == 2 and im(ATTACK, SPEAR, HAND, SWORD, 0) == 0
    assert im(ATTACK, SPEAR, ARM, -1, 0) == 0  # no item played: nothing to be "other"
    assert im(ATTACK, SPEAR, STEP, SPEAR, 0) == 0 and im(ATTACK, SPEAR, STEP, SPEAR, 1) == 1
    assert im(ATTACK, SWORD, STEP, AXE, 0) == 2 and im(DEFEND, SWORD, STEP, AXE, 0) == 1
    for item in range(5):  # Move has no item modifiers
        assert all(im(MOVE, item, r, o, 0) == 0 for r in range(4) for o in range(-1, 5))


def test_item_table_matches_item_mod():
    t = clash.item_mod_table(clash.encode_rules(clash.DEFAULT_RULES))
    for a, i, r, o in itertools.product(range(3), range(6), range(4), range(6)):
        assert t[a, i, r, o] == clash.item_mod(a, i if i < 5 else -1, r, o if o < 5 else -1, 0)


# ---- C7 corrected: the Spear's bonus counts weapons, not a Shield ---------------------
# The card: "Spear: +1 Attack and Defend in Reach Range, +1 Attack against all
# other weapons outside of Hand Range." A Shield is not a weapon: the Axe's "+1
# Attack vs Shields" names it apart, and the Shield has its own answer ("Shield:
# +1 all Defends, +1 to Defend against Spears"). Ruling C7 (corrected): the
# bonus applies against a played Axe, Dagger or Sword only; not a Shield (key
# spear_vs_shield, default false) and not another Spear (CD2, spear_vs_spear).
def _spear_attack(rng, opp_item, **over):
    """A hand-built round: a Neutral Spear Attack with 4 stamina at ``rng``
    against a Defend with ``opp_item`` on another target, under the defaults
    with ``over``. Returns (the total, the item part of the table the engine
    and the strategies read)."""
    vec = clash.encode_rules(dict(clash.DEFAULT_RULES, **over))
    mods = vec[clash.R_ITEM_MODS : clash.R_ITEM_MODS + clash.N_ITEM_MODS].copy()
    total = clash.action_total(
        ATTACK,
        4,
        NEUTRAL,
        SPEAR,
        opp_item,
        rng,
        HIGH,
        DEFEND,
        LOW,
        0,
        0,
        0,
        int(vec[clash.R_SPEAR_VS_SPEAR]),
        mods,
        int(vec[clash.R_SPEAR_VS_SHIELD]),
    )
    return int(total), int(clash.item_mod_table(vec)[ATTACK, SPEAR, rng, opp_item])


@pytest.mark.parametrize("rng", [ARM, STEP, REACH])
def test_spear_gets_no_bonus_against_a_shield_unless_the_key_says(rng):
    reach = 1 if rng == REACH else 0  # "+1 Attack and Defend in Reach Range"
    assert clash.DEFAULT_RULES["spear_vs_shield"] is False
    # against a played Shield outside Hand: no +1 by default ...
    assert _spear_attack(rng, SHIELD) == (4 + reach, reach)
    # ... and the +1 with spear_vs_shield (the reading before engine 1.3.0)
    assert _spear_attack(rng, SHIELD, spear_vs_shield=True) == (4 + reach + 1, reach + 1)
    # against a weapon (a Sword, an Axe, a Dagger) it applies, key or not
    for weapon in (SWORD, AXE, DAGGER):
        for on in (False, True):
            assert _spear_attack(rng, weapon, spear_vs_shield=on) == (5 + reach, reach + 1)
    # against another Spear it does not (CD2), whatever spear_vs_shield says
    for on in (False, True):
        assert _spear_attack(rng, SPEAR, spear_vs_shield=on) == (4 + reach, reach)
    assert _spear_attack(rng, SPEAR, spear_vs_spear=True) == (5 + reach, reach + 1)


def test_spear_vs_shield_touches_only_a_spear_attack_on_a_shield():
    """The key changes one cell per range outside Hand (a Spear Attack against
    a played Shield) and nothing else: not at Hand ("outside of Hand Range"),
    not a Defend, not the Shield's own "+1 to Defend against Spears"."""
    off = clash.item_mod_table(clash.encode_rules(clash.DEFAULT_RULES))
    on = clash.item_mod_table(clash.encode_rules(dict(clash.DEFAULT_RULES, spear_vs_shield=True)))
    changed = {tuple(int(x) for x in c) for c in np.argwhere(on != off)}
    assert changed == {(ATTACK, SPEAR, r, SHIELD) for r in (ARM, STEP, REACH)}
    assert all(on[c] - off[c] == 1 for c in changed)
    assert _spear_attack(HAND, SHIELD, spear_vs_shield=True) == (4, 0)


def test_spear_vs_shield_variant_restores_the_old_reading():
    from balance import config

    rs = config.resolve_variant("clash", "spear-vs-shield")
    assert rs.rules == dict(clash.DEFAULT_RULES, spear_vs_shield=True)
    vec = clash.encode_rules(rs.rules)
    assert clash.item_mod_table(vec)[ATTACK, SPEAR, STEP, SHIELD] == 1


@pytest.mark.slow
def test_action_total_parts():
    # Strong Sword Attack at Step vs an Axe with 5+2, Torso wound: 7 + 1 + 2 - 1
    assert clash.action_total(ATTACK, 7, STRONG, SWORD, AXE, STEP, HIGH, DEFEND, HIGH, 0, 1, 0) == 9
    # Defend matching the Attack's target: +1; Quick -1; Head wound -1
    assert (
        clash.action_total(DEFEND, 6, QUICK, SHIELD, SPEAR, REACH, MID, ATTACK, MID, 1, 0, 0)
        == 6 - 1 + 2 + 1 - 1
    )
    # no target bonus against a Defend or a Move, or on another target
    assert clash.action_total(DEFEND, 6, NEUTRAL, -1, -1, HAND, MID, DEFEND, MID) == 6
    assert clash.action_total(DEFEND, 6, NEUTRAL, -1, -1, HAND, MID, ATTACK, LOW) == 6
    # Attack never gets the target bonus; Move: only stamina, stance and Legs
    assert clash.action_total(ATTACK, 3, NEUTRAL, -1, -1, HAND, MID, DEFEND, MID) == 3
    assert (
        clash.action_total(MOVE, 3, STRONG, DAGGER, AXE, STEP, LOW, ATTACK, LOW, 1, 1, 1)
        == 3 + 1 - 1
    )
    # totals may be negative
    assert clash.action_total(ATTACK, 1, QUICK, DAGGER, -1, REACH, HIGH, MOVE, HIGH, 0, 1, 0) == -2


def test_round_winner_ties_to_initiative():
    assert clash.round_winner(5, 4, 1) == 0 and clash.round_winner(4, 5, 0) == 1
    assert clash.round_winner(5, 5, 0) == 0 and clash.round_winner(5, 5, 1) == 1


# ---- C8 outcomes -------------------------------------------------------------------------
# (my action, opponent action) -> what happens when I win: (opponent hit, opponent
# disarmed, I move); the loser's fate is the winner's action (C8).
WIN_EFFECT = {
    ATTACK: (True, False, False),
    DEFEND: (False, True, False),
    MOVE: (False, False, True),
}


@pytest.mark.parametrize("a0,a1", list(itertools.product((ATTACK, DEFEND, MOVE), repeat=2)))
@pytest.mark.parametrize("winner", [0, 1])
def test_outcome_table(a0, a1, winner):
    hit, disarmed, mover = clash.resolve(a0, a1, winner)
    loser = 1 - winner
    hits, disarms, moves = WIN_EFFECT[a0 if winner == 0 else a1]
    assert hit == (loser if hits else -1)
    assert disarmed == (loser if disarms else -1)
    assert mover == (winner if moves else -1)


def test_outcome_rulebook_lines():
    r = clash.resolve
    assert r(ATTACK, ATTACK, 1) == (0, -1, -1)  # Attack loses vs Attack: you are hit
    assert r(ATTACK, DEFEND, 1) == (-1, 0, -1)  # Attack loses vs Defend: disarmed
    assert r(ATTACK, MOVE, 1) == (-1, -1, 1)  # Attack loses vs Move: you miss, they move
    assert r(DEFEND, DEFEND, 1) == (-1, 0, -1)  # Defend vs Defend: loser disarmed
    assert r(DEFEND, MOVE, 1) == (-1, -1, 1)  # the enemy changes range
    assert r(MOVE, DEFEND, 1) == (-1, 0, -1)  # Move loses vs Defend: disarmed
    assert r(MOVE, MOVE, 1) == (-1, -1, 1)  # you don't Move
    assert r(MOVE, ATTACK, 1) == (0, -1, -1)  # Move loses vs Attack: hit
    assert r(DEFEND, ATTACK, 1) == (0, -1, -1)  # Defend loses vs Attack: hit


# ---- C11 initiative --------------------------------------------------------------------------
@pytest.mark.parametrize("s0,s1", list(itertools.product((QUICK, NEUTRAL, STRONG), repeat=2)))
@pytest.mark.parametrize("winner", [0, 1])
def test_initiative_table(s0, s1, winner):
    expected = {
        (QUICK, QUICK): winner,
        (NEUTRAL, NEUTRAL): winner,
        (STRONG, STRONG): winner,
        (QUICK, NEUTRAL): 0,
        (QUICK, STRONG): 0,
        (NEUTRAL, QUICK): 1,
        (STRONG, QUICK): 1,
        (NEUTRAL, STRONG): 0,
        (STRONG, NEUTRAL): 1,
    }[(s0, s1)]
    assert clash.next_initiative(s0, s1, winner) == expected
