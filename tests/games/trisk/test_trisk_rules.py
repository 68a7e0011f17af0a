"""Trisk rules: every rulebook example and ruling R3–R7, RD1–RD9 on a hand-built board.

Each test builds a state on the small toy card table of ``tests/games/trisk/trisk_helpers.py``
and drives the engine's own functions (``do_play`` with a built candidate,
``play_candidates``, ``end_of_turn``, ``damage_step``, ``sweep``,
``typed_damage``, ``apply_effect``, ``can_attack``...). Expected values are
worked out by hand from ``rules/trisk.txt`` and ``docs/rulings.md``, never
read back from the engine. The reference set's own Bear, Raven and Stag
(R1 keeps their rulebook facts) are checked the same way at the end.
"""

from __future__ import annotations

import numpy as np
import pytest

from sims.trisk import cards as K
from sims.trisk import engine as E
from tests.games.trisk.trisk_helpers import (
    MUSTER_ONLY,
    TOY,
    TOY_TABLE,
    Game,
    binomial_ok,
    int_rules,
    rules_vector,
    side,
)

N_FLIPS = 2000  # coin frequency checks: 5 standard deviations is about +-5.6 %


def upgrades(g, p):
    return [c for c in g.candidates(p) if c[0] == E.PK_UPGRADE]


def abilities(g, p):
    return [c for c in g.candidates(p) if c[0] == E.PK_ABILITY]


# ---- levels and upgrading ------------------------------------------------------------------
def test_dragonling_to_dragon_to_elder_dragon():
    """Rulebook: a level 7 Dragonling upgraded to a Dragon is level 4; upgraded
    again, a level 1 Elder Dragon. R5: damage and status tokens stay."""
    g = Game()
    s = g.add(0, "Dragonling", level=7, dmg=2, poisoned=1, blinded=2)
    g.give(0, "Dragon", "Elder Dragon")
    # only the Dragon goes onto a Dragonling
    assert [(c[1], c[2]) for c in upgrades(g, 0)] == [("Dragon", s)]
    g.do(0, E.PK_UPGRADE, "Dragon", s)
    assert g.card_at(0, s) == "Dragon" and g.level(0, s) == 4
    assert (g.dmg(0, s), g.tok(0, s, "Poisoned"), g.tok(0, s, "Blinded")) == (2, 1, 2)
    assert g.hand(0) == ["Elder Dragon"]
    assert [(c[1], c[2]) for c in upgrades(g, 0)] == [("Elder Dragon", s)]
    g.do(0, E.PK_UPGRADE, "Elder Dragon", s)
    assert g.card_at(0, s) == "Elder Dragon" and g.level(0, s) == 1
    assert (g.dmg(0, s), g.tok(0, s, "Poisoned"), g.tok(0, s, "Blinded")) == (2, 1, 2)
    assert g.bd[0, s, E.F_STACK] == 3  # the whole stack is one creation
    assert g.pl[0, E.K_HANDN] == 0 and g.pl[0, E.K_UPG] == 2
    assert upgrades(g, 0) == []  # level 1: no more Upgrade (and none in hand)


def test_upgrade_costs_three_levels():
    """Upgrading costs 3 levels, so the creation needs at least level 3."""
    g = Game()
    s = g.add(0, "Dragonling", level=2)
    g.give(0, "Dragon")
    assert upgrades(g, 0) == []
    assert not E.playable_now(g.rules, g.table, g.bd, g.pl, g.hd, g.forb, 0, 0)
    g.bd[0, s, E.F_LEVEL] = 3
    assert [(c[1], c[2]) for c in upgrades(g, 0)] == [("Dragon", s)]
    assert E.playable_now(g.rules, g.table, g.bd, g.pl, g.hd, g.forb, 0, 0)
    g.do(0, E.PK_UPGRADE, "Dragon", s)
    assert g.level(0, s) == 0


def test_upgrade_cost_is_a_rule():
    g = Game(upgrade_cost=5)
    s = g.add(0, "Dragonling", level=4)
    g.give(0, "Dragon")
    assert upgrades(g, 0) == []
    g.bd[0, s, E.F_LEVEL] = 7
    g.do(0, E.PK_UPGRADE, "Dragon", s)
    assert g.level(0, s) == 2


def test_upgrade_at_or_below_its_damage_destroys_it():
    """R4 with R5: the upgraded creation keeps its damage; if that reaches the new
    HP it is destroyed at once, and its whole stack goes to the discard pile (RD8)."""
    for dmg, survives in ((2, True), (3, False), (5, False)):
        g = Game()
        s = g.add(0, "Human", level=3, dmg=dmg)  # Human 6 HP; Shade (its Upgrade) 3 HP
        g.give(0, "Shade")
        g.do(0, E.PK_UPGRADE, "Shade", s)
        if survives:
            assert g.board(0) == ["Shade"] and g.hp_left(0, s) == 1
            assert g.pl[0, E.K_DISC] == 0
        else:
            assert g.board(0) == [] and g.pl[0, E.K_NB] == 1
            assert g.pl[0, E.K_DISC] == 2  # the Human and the Shade


def test_a_created_creation_enters_at_level_0():
    g = Game()
    g.give(0, "Bear", "Golem")
    creates = [c for c in g.candidates(0) if c[0] == E.PK_CREATE]
    assert sorted(c[1] for c in creates) == ["Bear", "Golem"]
    g.do(0, E.PK_CREATE, "Bear")
    assert g.board(0) == ["Bear"] and g.level(0, 1) == 0 and g.dmg(0, 1) == 0
    assert g.hand(0) == ["Golem"] and g.pl[0, E.K_CREATED] == 1


def test_board_limit_rd1():
    """RD1: at most max_board creations; a Create beyond it is not offered, and
    the engine counts it as refused (only for a creation the player may play)."""
    g = Game(max_board=2)
    g.add(0, "Golem")
    g.give(0, "Bear")
    assert any(c[0] == E.PK_CREATE for c in g.candidates(0))
    assert not E.create_refused(g.rules, g.table, g.pl, g.hd, g.forb, 0)
    g.add(0, "Golem")
    assert not any(c[0] == E.PK_CREATE for c in g.candidates(0))
    assert E.create_refused(g.rules, g.table, g.pl, g.hd, g.forb, 0)
    g.forb[TOY["Bear"]] = 1  # restricted play: a forbidden card is never refused
    assert not E.create_refused(g.rules, g.table, g.pl, g.hd, g.forb, 0)


def test_default_board_limit_lets_a_player_create_as_often_as_it_likes_rd1():
    """Rulebook: "Create: Play a creation from your hand ... Do these as often as
    you like." The default limit (40) takes a whole 20-card deck of creations."""
    g = Game()
    assert g.rules[E.R_MAX_BOARD] == E.DEFAULT_RULES["max_board"] == 40
    for _ in range(19):
        g.add(0, "Golem")
    g.give(0, "Bear")
    assert any(c[0] == E.PK_CREATE for c in g.candidates(0))
    g.do(0, E.PK_CREATE, "Bear")
    assert len(g.board(0)) == 20
    assert not E.create_refused(g.rules, g.table, g.pl, g.hd, g.forb, 0)


# ---- damage ---------------------------------------------------------------------------------
def test_bear_survives_3_damage_and_falls_after_4_more():
    """Rulebook: the Bear has 7 HP; with 3 damage tokens it is still in play,
    after 4 more it has 7, equal to its HP, so it is destroyed (R4)."""
    g = Game()
    s = g.add(1, "Bear")
    g.effect(0, K.E_DAMAGE, 3, K.FIRE, 1, s)
    assert g.board(1) == ["Bear"] and g.dmg(1, s) == 3
    g.effect(0, K.E_DAMAGE, 3, K.FIRE, 1, s)
    assert g.board(1) == ["Bear"] and g.hp_left(1, s) == 1
    g.effect(0, K.E_DAMAGE, 1, K.FIRE, 1, s)
    assert g.board(1) == []
    assert g.pl[1, E.K_DISC] == 1  # RD8: it goes to its owner's discard pile
    assert len(g.events(E.EV_DESTROY)) == 1


def test_sweep_destroys_at_hp_not_below():
    g = Game()
    g.add(0, "Bear", dmg=6)
    g.add(0, "Golem", dmg=15)
    g.add(0, "Raven", dmg=9)
    g.add(0, "Wolf", dmg=0)
    g.sweep(0)
    assert g.board(0) == ["Bear", "Wolf"]
    assert g.pl[0, E.K_DISC] == 2


def test_a_bear_with_2_damage_shows_5():
    g = Game()
    s = g.add(0, "Bear")
    g.effect(1, K.E_DAMAGE, 2, K.FROST, 0, s)
    assert g.hp_left(0, s) == 5
    assert E.hp(g.table, g.bd, 0, s) == 7  # inspecting the card shows its full HP


# ---- what a level unlocks -------------------------------------------------------------------
def test_raven_attacks_from_level_3():
    g = Game()
    s = g.add(0, "Raven", level=2)
    assert not g.can_attack(0, s)
    g.bd[0, s, E.F_LEVEL] = 3
    assert g.can_attack(0, s)


def test_bear_level_0_nothing_1_attack_3_hibernate():
    """A level 0 Bear can't do anything yet; at level 1 it can Attack, and at
    level 3 it can Hibernate (offered among the Creation-phase steps)."""
    g = Game()
    g.add(1, "Golem")
    s = g.add(0, "Bear")
    assert not g.can_attack(0, s) and abilities(g, 0) == []
    for lvl in (1, 2):
        g.bd[0, s, E.F_LEVEL] = lvl
        assert g.can_attack(0, s) and abilities(g, 0) == []
    g.bd[0, s, E.F_LEVEL] = 3
    assert g.can_attack(0, s)
    assert abilities(g, 0) == [(E.PK_ABILITY, -1, s, 0, 0, s)]  # Hibernate: on itself
    g.do(0, E.PK_ABILITY, s=s, a=0, tp=0, ts=s)
    assert g.tok(0, s, "Asleep") == 3
    # it used an ability this turn (and is asleep): it can't attack
    assert not g.can_attack(0, s)
    assert abilities(g, 0) == []  # one active ability per creation per turn


def test_an_ability_user_cannot_attack_this_turn():
    g = Game()
    g.add(1, "Golem")
    s = g.add(0, "Raven", level=3)
    assert g.can_attack(0, s)
    g.do(0, E.PK_ABILITY, s=s, a=0, tp=1, ts=1)
    assert g.tok(1, 1, "Blinded") == 1
    assert not g.can_attack(0, s)


def test_silenced_cannot_use_abilities_but_attacks():
    g = Game()
    g.add(1, "Golem")
    s = g.add(0, "Raven", level=3, silenced=1)
    assert abilities(g, 0) == []
    assert g.can_attack(0, s)


def test_primal_attacks_from_level_10():
    g = Game()
    g.bd[0, 0, E.F_LEVEL] = 9
    assert not g.can_attack(0, 0)
    g.bd[0, 0, E.F_LEVEL] = 10
    assert g.can_attack(0, 0)
    g2 = Game(primal_attack_level=8)
    g2.bd[0, 0, E.F_LEVEL] = 8
    assert g2.can_attack(0, 0)


# ---- statuses -------------------------------------------------------------------------------
def test_a_status_on_an_enemy_lasts_through_its_next_turn():
    """Tokens come off only at the end of their owner's turn: a Blind that seat 0
    puts on a seat-1 creation is still there when it attacks in seat 1's turn,
    and gone after seat 1's end of turn."""
    g = Game()
    r = g.add(0, "Raven", level=2)
    b = g.add(1, "Bear", level=1)
    g.do(0, E.PK_ABILITY, s=r, a=0, tp=1, ts=b)
    assert g.tok(1, b, "Blinded") == 1
    assert g.end_turn(0) == 0
    assert g.tok(1, b, "Blinded") == 1  # seat 0's end of turn does not touch it
    # seat 1's turn: the Bear attacks while blinded, so it flips a coin
    g.damage(1, [(b, None)])
    assert len(g.events(E.EV_BLIND)) == 1
    assert g.end_turn(1) == 0
    assert g.tok(1, b, "Blinded") == 0


def test_end_of_turn_removes_one_token_of_each_status_of_own_cards():
    g = Game()
    s = g.add(0, "Golem", dmg=1, feared=2, blinded=1, asleep=3, poisoned=2, silenced=1, flying=2)
    g.bd[0, 0, E.F_TOK + K.SILENCED] = 2
    e = g.add(1, "Golem", feared=2)
    g.end_turn(0)
    assert [g.tok(0, s, st) for st in K.STATUSES] == [1, 0, 2, 1, 0, 1]
    assert g.tok(0, 0, "Silenced") == 1  # the Primal's tokens too
    assert g.tok(1, e, "Feared") == 2  # never the opponent's
    assert g.dmg(0, s) == 1  # poison hurts 1, the sleep token heals 1


def test_poison_hurts_1_untyped_and_sleep_heals_1():
    g = Game()
    k = g.add(0, "Knight", poisoned=3)  # armor 2: poison is untyped
    sl = g.add(0, "Golem", dmg=2, asleep=2)
    g.end_turn(0)
    assert g.dmg(0, k) == 1
    assert g.dmg(0, sl) == 1
    g.end_turn(0)
    assert g.dmg(0, k) == 2 and g.dmg(0, sl) == 0
    g.end_turn(0)  # the last sleep token is gone; healing never goes below 0
    assert g.dmg(0, k) == 3 and g.dmg(0, sl) == 0 and g.tok(0, sl, "Asleep") == 0
    assert g.tok(0, k, "Poisoned") == 0
    g.end_turn(0)
    assert g.dmg(0, k) == 3


def test_poison_reaching_hp_destroys_at_once_regenerate_cannot_save_r4():
    """Rulebook: "When a creation's damage equals or exceeds its HP, it is
    destroyed and leaves play." R4: "A creation is destroyed the moment its
    damage reaches its HP: nothing (a heal, a passive, Regenerate) can save it
    once it has." A poison tick that brings the Troll to its 12 HP destroys it
    before its Regenerate 2 (a passive, RD2) could act."""
    g = Game()
    g.add(0, "Troll", level=2, dmg=11, poisoned=1)  # 12 HP, Regenerate 2 from level 2
    g.end_turn(0)
    assert g.board(0) == []
    assert g.pl[0, E.K_DISC] == 1  # RD8: to the discard pile
    codes = [int(e[2]) for e in g.log[: g.ints[0]]]
    assert codes == [E.EV_POISON, E.EV_DESTROY]  # no Regenerate, no Grow after it


def test_regenerate_heals_a_creation_the_poison_did_not_bring_to_its_hp_rd2():
    """RD2: a creation still in play after its tokens come off gets its
    passives: the poison tick takes the Troll to 11 of 12, Regenerate heals 2."""
    g = Game()
    s = g.add(0, "Troll", level=2, dmg=10, poisoned=1)
    g.end_turn(0)
    assert g.board(0) == ["Troll"] and g.dmg(0, s) == 9


def test_sleep_token_heals_before_the_poison_token_hurts_rd2():
    """RD2: tokens come off in the status table's order (Asleep before
    Poisoned), so a creation one short of its HP with both survives: its damage
    never reaches its HP (14 of 15, healed to 13, poisoned back to 14)."""
    g = Game()
    s = g.add(0, "Golem", dmg=14, asleep=1, poisoned=1)
    g.end_turn(0)
    assert g.board(0) == ["Golem"] and g.dmg(0, s) == 14


def test_a_creation_destroyed_by_poison_does_not_skip_the_next_one_r4():
    """R4 at the end of turn: the creation after a destroyed one (it moves
    into the freed slot) still loses its tokens and gets its passives, once."""
    g = Game()
    g.add(0, "Bear", dmg=6, poisoned=2, feared=3)  # 7 HP: the tick destroys it
    g.add(0, "Troll", level=2, dmg=4, poisoned=1)
    g.add(0, "Golem", dmg=1, poisoned=1)
    g.end_turn(0)
    assert g.board(0) == ["Troll", "Golem"]
    assert (g.dmg(0, 1), g.tok(0, 1, "Poisoned"), g.level(0, 1)) == (3, 0, 5)  # 4+1-2; Grow 3
    assert (g.dmg(0, 2), g.tok(0, 2, "Poisoned")) == (2, 0)
    assert len(g.events(E.EV_DESTROY)) == 1 and len(g.events(E.EV_POISON)) == 3


def test_poison_destroys_a_creation_at_end_of_turn():
    g = Game()
    g.add(0, "Bear", dmg=6, poisoned=1)
    assert g.end_turn(0) == 0
    assert g.board(0) == []


def test_poison_can_kill_a_primal_at_its_owners_end_of_turn():
    g = Game()
    g.bd[1, 0, E.F_DMG] = 9
    g.bd[1, 0, E.F_TOK + K.POISONED] = 1
    assert g.end_turn(0) == 0  # not at the other player's end of turn
    assert g.dmg(1, 0) == 9
    assert g.end_turn(1) == 1
    assert g.dmg(1, 0) == 10


def test_asleep_neither_attacks_nor_blocks():
    g = Game()
    s = g.add(0, "Bear", level=5, asleep=1)
    b = g.add(1, "Golem", asleep=1)
    a = g.add(0, "Wolf", level=1)
    assert not g.can_attack(0, s)
    assert not g.can_block(1, b, 0, a)
    g.bd[1, b, E.F_TOK + K.ASLEEP] = 0
    assert g.can_block(1, b, 0, a)


# ---- combat ---------------------------------------------------------------------------------
def test_flying_attackers_only_blockable_by_flying():
    g = Game()
    raven = g.add(0, "Raven", level=3)
    wolf = g.add(0, "Wolf", level=1)
    golem = g.add(1, "Golem")
    flyer = g.add(1, "Raven")
    blessed = g.add(1, "Golem", flying=1)  # a Flying token (Blessing of Flight)
    assert not g.can_block(1, golem, 0, raven)
    assert g.can_block(1, flyer, 0, raven)
    assert g.can_block(1, blessed, 0, raven)
    for b in (golem, flyer, blessed):  # anyone blocks a creation that does not fly
        assert g.can_block(1, b, 0, wolf)
    assert E.blockers_for(g.table, g.bd, g.pl, 1, 0, raven) == 2
    # a creation given Flying attacks as a flyer
    g.bd[0, wolf, E.F_TOK + K.FLYING] = 1
    assert not g.can_block(1, golem, 0, wolf)


def test_primals_never_block():
    g = Game()
    a = g.add(0, "Wolf", level=1)
    assert not g.can_block(1, 0, 0, a)
    assert E.blockers_for(g.table, g.bd, g.pl, 1, 0, a) == 0
    # the defender's choices hold only "no block"
    assert g.blocks(0, [a], np.ones(E.MAX_SLOTS, np.int64), {"block": {"prevented": 1}}) == [-2]


def test_unblocked_damage_goes_to_the_primal_and_blockers_dont_hit_back():
    g = Game()
    w = g.add(0, "Wolf", level=1)  # 3 AP
    b = g.add(0, "Bear", level=1)  # 4 AP
    blocker = g.add(1, "Golem", level=0)  # 3 AP, never hits back
    assert g.damage(0, [(w, blocker), (b, None)]) == 0
    assert g.dmg(1, blocker) == 3
    assert g.dmg(1, 0) == 4
    assert g.dmg(0, w) == 0 and g.dmg(0, b) == 0 and g.dmg(0, 0) == 0


def test_a_primal_at_10_damage_loses():
    g = Game()
    b = g.add(0, "Bear", level=1)  # 4 AP
    g.bd[1, 0, E.F_DMG] = 5
    assert g.damage(0, [(b, None)]) == 0 and g.dmg(1, 0) == 9
    assert g.damage(0, [(b, None)]) == 1 and g.dmg(1, 0) >= 10
    g2 = Game()
    g2.bd[1, 0, E.F_DMG] = 8
    assert g2.effect(0, K.E_DAMAGE, 2, K.LIGHTNING, 1, 0) == 1  # an ability's damage too


def test_armor_ignores_one_physical_per_shield():
    rules = int_rules()
    t = TOY_TABLE
    knight = TOY["Knight"]  # armor 2
    assert E.typed_damage(rules, t, knight, 4, K.PHYSICAL) == 2
    assert E.typed_damage(rules, t, knight, 2, K.PHYSICAL) == 0
    assert E.typed_damage(rules, t, knight, 1, K.PHYSICAL) == 0  # never negative
    assert E.typed_damage(rules, t, knight, 4, K.FIRE) == 4  # armor is physical only
    assert E.typed_damage(rules, t, knight, 4, K.UNTYPED) == 4
    g = Game()
    k = g.add(1, "Knight")
    b = g.add(0, "Bear", level=1)
    g.damage(0, [(b, k)])
    assert g.dmg(1, k) == 2


def test_resist_halves_weak_doubles_then_armor_r6():
    t = TOY_TABLE
    sal = TOY["Salamander"]  # resists fire and physical, weak to frost, 1 shield
    r = int_rules()
    assert E.typed_damage(r, t, sal, 5, K.FIRE) == 2  # halved, rounded down
    assert E.typed_damage(r, t, sal, 1, K.FIRE) == 0
    assert E.typed_damage(r, t, sal, 3, K.FROST) == 6
    assert E.typed_damage(r, t, sal, 3, K.LIGHTNING) == 3
    assert E.typed_damage(r, t, sal, 5, K.PHYSICAL) == 1  # halved to 2, then armor 1
    assert E.typed_damage(r, t, sal, 3, K.UNTYPED) == 3  # poison: nothing applies
    # resist_rule 1: immune; 2: ignored. weak_rule 1: +1; 2: ignored
    assert E.typed_damage(int_rules(resist_rule=1), t, sal, 5, K.FIRE) == 0
    assert E.typed_damage(int_rules(resist_rule=1), t, sal, 5, K.PHYSICAL) == 0
    assert E.typed_damage(int_rules(resist_rule=2), t, sal, 5, K.FIRE) == 5
    assert E.typed_damage(int_rules(resist_rule=2), t, sal, 5, K.PHYSICAL) == 4
    assert E.typed_damage(int_rules(weak_rule=1), t, sal, 3, K.FROST) == 4
    assert E.typed_damage(int_rules(weak_rule=2), t, sal, 3, K.FROST) == 3


def test_resist_and_weak_to_the_same_type():
    t = np.array([TOY_TABLE[TOY["Cern"]], TOY_TABLE[TOY["Golem"]]])
    t[1, K.C_RESIST] = 1 << K.FIRE
    t[1, K.C_WEAK] = 1 << K.FIRE
    r = E.split_rules(rules_vector(t))[0]
    assert E.typed_damage(r, t, 1, 5, K.FIRE) == 4  # halved to 2, then doubled


def _blind_outcomes(seeds):
    dealt = []
    for seed in seeds:
        g = Game(seed=seed)
        b = g.add(0, "Bear", level=1, blinded=1)
        g.damage(0, [(b, None)])
        dealt.append(g.dmg(1, 0))
    return dealt


def test_blinded_attacker_on_tails_deals_nothing():
    dealt = _blind_outcomes(range(N_FLIPS))
    assert set(dealt) == {0, 4}
    assert binomial_ok(dealt.count(0), N_FLIPS, 0.5)
    # and the coin it flipped is the one in the log: tails, no damage
    for seed in range(20):
        g = Game(seed=seed)
        b = g.add(0, "Bear", level=1, blinded=1)
        g.damage(0, [(b, None)])
        heads = g.events(E.EV_BLIND)[0, 4]
        assert g.dmg(1, 0) == (4 if heads else 0)
    # without Blind it always hits
    g = Game()
    b = g.add(0, "Bear", level=1)
    g.damage(0, [(b, None)])
    assert g.dmg(1, 0) == 4 and len(g.events(E.EV_BLIND)) == 0


def test_feared_creation_on_tails_cannot_block():
    spec = {"block": {"prevented": 1.0}}  # the defender blocks whenever it can
    can = 0
    for seed in range(N_FLIPS // 4):
        g = Game(seed=seed)
        a = g.add(0, "Wolf", level=1)
        f = g.add(1, "Golem", feared=1)
        ok = g.fear_flips(1)
        assert ok[0] == 1
        heads = g.events(E.EV_FEAR)[0, 4]
        assert ok[f] == heads
        assert g.blocks(0, [a], ok, spec) == ([f] if heads else [-2])
        can += int(heads)
    assert binomial_ok(can, N_FLIPS // 4, 0.5)
    # not feared: no flip, it blocks
    g = Game()
    a = g.add(0, "Wolf", level=1)
    f = g.add(1, "Golem")
    ok = g.fear_flips(1)
    assert ok[f] == 1 and len(g.events(E.EV_FEAR)) == 0
    assert g.blocks(0, [a], ok, spec) == [f]


def test_one_blocker_per_attacker_hardest_hitting_first():
    """RD9: blocks are chosen attacker by attacker, hardest-hitting first; a
    creation blocks at most one attacker."""
    g = Game()
    w = g.add(0, "Wolf", level=1)  # 3 AP
    b = g.add(0, "Bear", level=1)  # 4 AP
    golem = g.add(1, "Golem")
    blk = g.blocks(0, [w, b], np.ones(E.MAX_SLOTS, np.int64), {"block": {"prevented": 1.0}})
    assert blk == [-2, golem]


# ---- the start of a game and Muster ---------------------------------------------------------
def _one_turn_each(**rules):
    rv = rules_vector(max_turns=1, **rules)
    deck = ["Golem"] * 5
    a = side(MUSTER_ONLY, "Cern", deck)
    res, log = E.play_game(*E.prepare(rv, a, a), np.uint64(7), 0, 0, True)
    return res, log


def test_second_player_primal_starts_at_level_1_and_hands_start_empty():
    res, log = _one_turn_each()
    first = int(res[E.X_FIRST])
    assert res[E.X_LVL0 + first] == 0 and res[E.X_LVL0 + 1 - first] == 1
    musters = log[log[:, 2] == E.EV_MUSTER]
    for p in (0, 1):
        mine = musters[musters[:, 1] == p]
        assert [int(x) for x in mine[:, 4]] == [1, 2, 3]  # hand sizes after each Muster
    assert res[E.X_TURNS] == 2 and res[E.X_WINNER] == E.DRAW and res[E.X_REASON] == E.END_CAP
    res0, _ = _one_turn_each(second_level=0)
    assert res0[E.X_LVL0] == 0 and res0[E.X_LVL1] == 0


def test_muster_with_full_hand_or_empty_deck_does_nothing():
    rules = int_rules()
    g = Game()
    g.deck(0, "Golem", "Bear")
    g.give(0, *["Wolf"] * 9)
    assert E.draw(rules, g.pl, g.dk, g.hd, 0) == -1
    assert g.pl[0, E.K_HANDN] == 9 and g.pl[0, E.K_POS] == 0
    g2 = Game()
    g2.deck(0, "Golem")
    assert E.draw(rules, g2.pl, g2.dk, g2.hd, 0) == TOY["Golem"]
    assert E.draw(rules, g2.pl, g2.dk, g2.hd, 0) == -1  # empty deck: nothing, no loss
    assert g2.hand(0) == ["Golem"] and g2.pl[0, E.K_POS] == 1


def test_muster_only_game_never_exceeds_the_hand_limit():
    """R3 over a whole game: 12 cards, Muster only, 5 turns each: the hand stops
    at 9 and the remaining Musters do nothing."""
    rv = rules_vector(max_turns=5)
    a = side(MUSTER_ONLY, "Cern", ["Golem"] * 12)
    res, log = E.play_game(*E.prepare(rv, a, a), np.uint64(3), 0, 1, True)
    musters = log[log[:, 2] == E.EV_MUSTER]
    for p in (0, 1):
        mine = musters[musters[:, 1] == p]
        assert len(mine) == 15
        assert [int(x) for x in mine[:, 4]] == list(range(1, 10)) + [9] * 6
        assert (mine[9:, 3] == -1).all()
    assert res[E.X_CONSERVED] == 1 and res[E.X_INVARIANT] == 1


# ---- sorceries never target a Primal (RD3) --------------------------------------------------
def test_sorceries_never_target_a_primal():
    g = Game()
    g.add(0, "Golem")
    g.give(0, "Curse of Bolts", "Curse of Fire")
    assert [c for c in g.candidates(0) if c[0] == E.PK_CAST] == []  # no enemy creation
    e = g.add(1, "Golem")
    casts = [c for c in g.candidates(0) if c[0] == E.PK_CAST]
    assert sorted((c[1], c[4], c[5]) for c in casts) == [
        ("Curse of Bolts", 1, e),
        ("Curse of Fire", 1, e),
    ]


def test_ability_on_enemy_any_may_pick_the_enemy_primal():
    g = Game()
    m = g.add(0, "Mage")
    e = g.add(1, "Golem")
    tg = sorted((c[4], c[5]) for c in abilities(g, 0))
    assert tg == [(1, 0), (1, e)]
    g.do(0, E.PK_ABILITY, s=m, a=0, tp=1, ts=0)
    assert g.dmg(1, 0) == 4  # X = the Mage's own MP (RD7)


# ---- the reference set keeps the rulebook's facts (R1) --------------------------------------
@pytest.fixture(scope="module")
def ref():
    from balance.games.trisk.cards import load_card_set

    return load_card_set("reference")


def _ref_game(ref, primals=("Cern the Grey", "Cern the Grey")):
    g = Game(table=ref.table)
    for p in range(2):
        g.bd[p, 0, E.F_CARD] = ref.row(primals[p])
    return g


def test_reference_bear_raven_levels(ref):
    g = _ref_game(ref)
    g.add(1, ref.row("Clay Golem"))
    bear = g.add(0, ref.row("Bear"))
    raven = g.add(0, ref.row("Raven"))
    assert E.hp(g.table, g.bd, 0, bear) == 7
    assert not g.can_attack(0, bear) and abilities(g, 0) == []
    g.bd[0, bear, E.F_LEVEL] = 1
    assert g.can_attack(0, bear)
    assert [c for c in abilities(g, 0) if c[2] == bear] == []
    g.bd[0, bear, E.F_LEVEL] = 3
    hib = [c for c in abilities(g, 0) if c[2] == bear]
    assert len(hib) == 1 and (hib[0][4], hib[0][5]) == (0, bear)
    g.do(0, E.PK_ABILITY, s=bear, a=hib[0][3], tp=0, ts=bear)
    assert g.tok(0, bear, "Asleep") > 0
    g.bd[0, raven, E.F_LEVEL] = 2
    assert not g.can_attack(0, raven)
    g.bd[0, raven, E.F_LEVEL] = 3
    assert g.can_attack(0, raven)


def test_reference_stag_is_warded(ref):
    """The reference Stag's Warded (a passive at level 3) must stop enemy
    single-target effects (RD4)."""
    g = _ref_game(ref)
    stag = g.add(1, ref.row("Stag"), level=3)
    g.add(0, ref.row("Raven"), level=3)  # Blind: one enemy creation
    assert E.warded(g.table, g.bd, 1, stag)
    assert [c for c in abilities(g, 0) if c[4] == 1 and c[5] == stag] == []


# ---- the Skill Book: every effect (sims.trisk.cards.E_*) ------------------------------------
@pytest.mark.parametrize("status", K.STATUSES)
def test_status_effect_puts_n_tokens(status):
    g = Game()
    e = g.add(1, "Golem")
    g.effect(0, K.E_STATUS, 2, K.STATUSES.index(status), 1, e)
    assert g.tok(1, e, status) == 2
    g.effect(0, K.E_STATUS, 1, K.STATUSES.index(status), 1, e)  # stacks add up
    assert g.tok(1, e, status) == 3
    assert sum(g.tok(1, e, st) for st in K.STATUSES) == 3  # and no other status


def test_status_on_every_enemy_creation_by_a_curse():
    g = Game()
    g.add(0, "Golem")
    e1, e2 = g.add(1, "Golem"), g.add(1, "Bear")
    g.give(0, "Curse of Terror")
    casts = [c for c in g.candidates(0) if c[0] == E.PK_CAST]
    assert casts and all(c[5] == -1 for c in casts)  # mass: slot -1, every enemy creation
    c = casts[0]
    g.do(0, E.PK_CAST, "Curse of Terror", s=c[2], a=0, tp=c[4], ts=c[5])
    assert g.tok(1, e1, "Feared") == 1 and g.tok(1, e2, "Feared") == 1
    assert g.tok(1, 0, "Feared") == 0 and g.tok(0, 1, "Feared") == 0
    assert g.pl[0, E.K_DISC] == 1 and g.pl[0, E.K_SPELLS] == 1  # RD8: spent, discarded


def test_heal_never_below_zero_damage():
    g = Game()
    s = g.add(0, "Golem", dmg=3)
    g.effect(0, K.E_HEAL, 2, -1, 0, s)
    assert g.dmg(0, s) == 1
    g.effect(0, K.E_HEAL, 5, -1, 0, s)
    assert g.dmg(0, s) == 0
    g.bd[0, 0, E.F_DMG] = 4
    g.effect(0, K.E_HEAL, 2, -1, 0, 0)  # an own-Primal heal (Soothe)
    assert g.dmg(0, 0) == 2


@pytest.mark.parametrize(
    "dtype,expected", [(K.PHYSICAL, 1), (K.FIRE, 2), (K.FROST, 10), (K.LIGHTNING, 5), (K.ARCANE, 5)]
)
def test_damage_of_a_type(dtype, expected):
    g = Game()
    s = g.add(1, "Salamander")  # 10 HP; resists fire and physical, 1 shield, weak to frost
    g.effect(0, K.E_DAMAGE, 5, dtype, 1, s)
    if expected < 10:
        assert g.board(1) == ["Salamander"] and g.dmg(1, s) == expected
    else:
        assert g.board(1) == [] and g.pl[1, E.K_DISC] == 1


def test_cleanse_poison_does_not_hurt_sleep_still_heals():
    g = Game()
    s = g.add(0, "Golem", dmg=3, poisoned=2, asleep=2, feared=1, blinded=1, silenced=3, flying=2)
    g.effect(0, K.E_CLEANSE, 1, -1, 0, s)
    assert [g.tok(0, s, st) for st in K.STATUSES] == [0, 0, 1, 1, 2, 2]
    assert g.dmg(0, s) == 2  # poison removed: no damage; sleep removed: heals 1
    g.effect(0, K.E_CLEANSE, 5, -1, 0, s)
    assert [g.tok(0, s, st) for st in K.STATUSES] == [0, 0, 0, 0, 0, 2]  # Flying stays
    assert g.dmg(0, s) == 1
    g2 = Game()
    s2 = g2.add(0, "Golem", asleep=3)
    g2.effect(0, K.E_CLEANSE, 3, -1, 0, s2)
    assert g2.dmg(0, s2) == 0  # healing never below 0


def test_blessing_of_cleansing_by_do_play():
    g = Game()
    s = g.add(0, "Bear", dmg=6, poisoned=1)
    g.give(0, "Blessing of Cleansing")
    g.do(0, E.PK_CAST, "Blessing of Cleansing", s=s, a=0, tp=0, ts=s)
    assert g.tok(0, s, "Poisoned") == 0 and g.dmg(0, s) == 6
    assert g.end_turn(0) == 0 and g.board(0) == ["Bear"]  # the poison is gone


def test_level_effect_max_10():
    g = Game()
    s = g.add(0, "Golem", level=4)
    g.effect(0, K.E_LEVEL, 3, -1, 0, s)
    assert g.level(0, s) == 7
    g.effect(0, K.E_LEVEL, 5, -1, 0, s)
    assert g.level(0, s) == 10


def test_train_and_meditate_cap_at_10():
    """Train adds the Primal's level, Meditate 1, both up to 10 (via whole games:
    invariants hold, levels never pass 10; see test_trisk_engine) and here the
    Primal phase's own candidate features say a capped action is wasted."""
    g = Game()
    g.bd[0, 0, E.F_LEVEL] = 10
    g.add(0, "Golem", level=10)
    feats = np.zeros((E.MAXC, 64))
    n = E.primal_candidates(g.rules, g.table, g.bd, g.pl, g.hd, g.forb, 0, feats)
    assert n == 3  # Meditate, Muster, Train the Golem
    assert feats[0, 11] == 1.0 and feats[2, 11] == 1.0 and feats[2, 3] == 0.0


def test_draw_effect_respects_the_hand_limit():
    g = Game()
    g.deck(0, "Golem", "Golem", "Golem", "Golem")
    s = g.add(0, "Scout")  # draw 3
    g.give(0, *["Wolf"] * 7)
    assert abilities(g, 0) == [(E.PK_ABILITY, -1, s, 0, 0, -1)]
    g.do(0, E.PK_ABILITY, s=s, a=0, tp=0, ts=-1)
    assert g.pl[0, E.K_HANDN] == 9 and g.pl[0, E.K_POS] == 2
    g.effect(0, K.E_DRAW, 3, -1, 0, -1)
    assert g.pl[0, E.K_HANDN] == 9 and g.pl[0, E.K_POS] == 2


def test_regen_heals_at_end_of_turn_once_unlocked():
    g = Game()
    s = g.add(0, "Troll", level=0, dmg=5)  # Regen 2 from level 2, Grow 3 from level 0
    g.end_turn(0)
    assert g.dmg(0, s) == 5 and g.level(0, s) == 3  # regen locked; grew
    g.end_turn(0)
    assert g.dmg(0, s) == 3 and g.level(0, s) == 6
    g.end_turn(0)
    g.end_turn(0)
    assert g.dmg(0, s) == 0 and g.level(0, s) == 10  # never below 0, never above 10
    g.end_turn(1)  # only at its owner's end of turn
    assert g.level(0, s) == 10


def test_grow_and_regen_only_at_owners_end_of_turn():
    g = Game()
    s = g.add(0, "Troll", level=2, dmg=4)
    g.end_turn(1)
    assert g.dmg(0, s) == 4 and g.level(0, s) == 2


def _warded_table(n):
    t = TOY_TABLE.copy()
    r = TOY["Stag"]
    t[r, K.C_ABIL + K.A_N] = n
    return t


def test_ward_stops_enemy_single_target_not_mass_effects():
    """RD4 (with a Ward block of amount 1)."""
    g = Game(table=_warded_table(1))
    stag = g.add(1, "Stag", level=3)
    other = g.add(1, "Golem")
    g.add(0, "Raven", level=2)  # Blind: one enemy creation
    g.add(0, "Mage")  # arcane X on one enemy creation or the Primal
    g.give(0, "Curse of Fire", "Curse of Terror")
    cands = g.candidates(0)
    single = [c for c in cands if c[1] != "Curse of Terror" and c[0] != E.PK_STOP]
    assert single and all(c[5] != stag for c in single if c[4] == 1)
    assert any(c[5] == other for c in single)
    # the mass curse is offered and reaches the Stag
    mass = [c for c in cands if c[1] == "Curse of Terror"]
    assert mass
    c = mass[0]
    g.do(0, E.PK_CAST, "Curse of Terror", s=c[2], a=0, tp=c[4], ts=c[5])
    assert g.tok(1, stag, "Feared") == 1 and g.tok(1, other, "Feared") == 1
    # below its level the Ward is not active
    g.bd[1, stag, E.F_LEVEL] = 2
    assert any(c[5] == stag and c[4] == 1 for c in g.candidates(0))
    # its owner may still target it
    g.bd[1, stag, E.F_LEVEL] = 3
    g.give(1, "Blessing of Growth")
    assert any(c[1] == "Blessing of Growth" and c[5] == stag for c in g.candidates(1))


def test_ward_as_the_card_set_encodes_it():
    """A Ward passive is encoded with amount 0 by balance.games.trisk.cards (the skill
    'Warded' has n = 0: Ward has no amount); it must still ward."""
    g = Game()
    stag = g.add(1, "Stag", level=3)
    g.add(0, "Raven", level=2)
    assert E.warded(g.table, g.bd, 1, stag)
    assert [c for c in abilities(g, 0) if c[4] == 1 and c[5] == stag] == []


def test_pack_adds_ap_per_other_creation_of_its_group():
    g = Game()
    w1 = g.add(0, "Wolf")
    assert E.attack_power(g.table, g.bd, g.pl, 0, w1) == 3
    g.add(0, "Bear")  # not a Wolf
    g.add(1, "Wolf")  # not its owner's
    assert E.attack_power(g.table, g.bd, g.pl, 0, w1) == 3
    w2 = g.add(0, "Wolf")
    w3 = g.add(0, "Wolf")
    for w in (w1, w2, w3):
        assert E.attack_power(g.table, g.bd, g.pl, 0, w) == 5
    b = g.add(1, "Golem")
    g.damage(0, [(w1, b)])
    assert g.dmg(1, b) == 5  # the Pack bonus is in the damage dealt


def _gate_rate(wolves, n):
    wins = 0
    g = Game(seed=wolves + 100)
    for _ in range(wolves):
        g.add(0, "Wolf", level=1)
    g.add(0, "Bear")
    g.add(1, "Wolf")  # the enemy's Wolves never count
    for _ in range(n):
        wins += g.gate(0, "Wolf", 0)
    return wins


def test_coin_one_gate_is_fair():
    g = Game(seed=5)
    wins = sum(g.gate(0, "Gambler", 0) for _ in range(N_FLIPS))
    assert binomial_ok(wins, N_FLIPS, 0.5)
    assert g.gate(0, "Bear", 0)  # no gate: always passes
    assert all(g.gate(0, "Raven", 0) for _ in range(50))


@pytest.mark.parametrize("wolves", [0, 1, 2, 3])
def test_coin_per_group_one_heads_is_enough(wolves):
    """Howl flips a coin per Wolf you control: one heads is enough (P = 1 - 0.5^k);
    with no Wolf there is nothing to flip and it fails (RD7)."""
    wins = _gate_rate(wolves, N_FLIPS)
    if wolves == 0:
        assert wins == 0
    else:
        assert binomial_ok(wins, N_FLIPS, 1 - 0.5**wolves)


def test_howl_by_do_play_feared_on_heads():
    fails = 0
    for seed in range(200):
        g = Game(seed=seed)
        w = g.add(0, "Wolf", level=1)
        e1, e2 = g.add(1, "Golem"), g.add(1, "Bear")
        g.do(0, E.PK_ABILITY, s=w, a=0, tp=1, ts=-1)
        coins = g.events(E.EV_COINS)
        assert len(coins) == 1 and coins[0, 4] == 1  # one Wolf: one coin
        heads = int(coins[0, 5])
        assert g.tok(1, e1, "Feared") == g.tok(1, e2, "Feared") == (1 if heads else 0)
        assert not g.can_attack(0, w)  # it used an ability, whatever the coin
        fails += 1 - (heads > 0)
    assert binomial_ok(fails, 200, 0.5)


def test_x_of_a_blessing_and_a_curse_is_the_own_primals_mp():
    g = Game(primals=("Cern", "Vask"))  # Cern MP 3, Vask MP 2
    s = g.add(0, "Golem")
    e = g.add(1, "Golem")
    g.give(0, "Blessing of Growth", "Curse of Fire")
    g.do(0, E.PK_CAST, "Blessing of Growth", s=s, a=0, tp=0, ts=s)
    assert g.level(0, s) == 3
    g.do(0, E.PK_CAST, "Curse of Fire", s=e, a=0, tp=1, ts=e)
    assert g.dmg(1, e) == 3
    g.give(1, "Curse of Fire")
    g.do(1, E.PK_CAST, "Curse of Fire", s=s, a=0, tp=0, ts=s)
    assert g.dmg(0, s) == 2  # Vask's MP
    casts = g.events(E.EV_CAST)
    assert [int(x) for x in casts[:, 6]] == [3, 3, 2]


def test_ritual_x_is_the_sacrificed_creations_mp_and_it_is_destroyed():
    g = Game()
    bear = g.add(0, "Bear", level=1)  # MP 2
    golem = g.add(0, "Golem", level=1)
    g.give(0, "Ritual of Growth")
    g.pl[0, E.K_NB] = 2  # with the Bear alone there is nothing else to bless
    assert [c for c in g.candidates(0) if c[0] == E.PK_CAST] == []
    g.pl[0, E.K_NB] = 3
    rit = [c for c in g.candidates(0) if c[0] == E.PK_CAST]
    # sacrifice one, bless another: never itself
    assert sorted((c[2], c[5]) for c in rit) == [(bear, golem), (golem, bear)]
    g.do(0, E.PK_CAST, "Ritual of Growth", s=bear, a=0, tp=0, ts=golem)
    assert g.board(0) == ["Golem"] and g.level(0, 1) == 1 + 2
    assert g.pl[0, E.K_DISC] == 2  # the Ritual and the Bear
    assert len(g.events(E.EV_SACRIFICE)) == 1


def test_ritual_on_an_enemy_creation():
    g = Game()
    mage = g.add(0, "Mage")  # MP 4
    e = g.add(1, "Golem")
    g.give(0, "Ritual of Slumber")
    g.do(0, E.PK_CAST, "Ritual of Slumber", s=mage, a=0, tp=1, ts=e)
    assert g.board(0) == [] and g.tok(1, e, "Asleep") == 4


def test_x_of_an_ability_is_the_creations_own_mp():
    g = Game(primals=("Vask", "Cern"))
    m = g.add(0, "Mage")  # MP 4, arcane X
    e = g.add(1, "Golem")
    g.do(0, E.PK_ABILITY, s=m, a=0, tp=1, ts=e)
    assert g.dmg(1, e) == 4


def test_coin_one_ability_by_do_play():
    hits = 0
    for seed in range(200):
        g = Game(seed=seed)
        s = g.add(0, "Gambler")
        e = g.add(1, "Golem")
        g.do(0, E.PK_ABILITY, s=s, a=0, tp=1, ts=e)
        assert g.dmg(1, e) in (0, 4)
        hits += g.dmg(1, e) == 4
    assert binomial_ok(hits, 200, 0.5)


# ---- RD6: summoning and attacking -----------------------------------------------------------
def test_a_new_creation_attacks_only_if_its_attack_is_at_level_0():
    g = Game()
    g.give(0, "Golem", "Bear")  # Golem: Attack at 0; Bear: at 1
    g.do(0, E.PK_CREATE, "Golem")
    g.do(0, E.PK_CREATE, "Bear")
    assert g.board(0) == ["Golem", "Bear"]
    assert g.can_attack(0, 1) and not g.can_attack(0, 2)


def test_attacking_does_not_tap():
    g = Game()
    w = g.add(0, "Wolf", level=1)
    g.damage(0, [(w, None)])
    e = g.add(1, "Wolf", level=1)
    assert g.can_block(0, w, 1, e)


def test_train_adds_the_primals_level_up_to_10():
    """Over whole games (no combat, Golems only): every Train raises its creation
    by the Primal's level at the time, to at most 10; Meditate by 1."""
    spec = {
        "primal": {"muster": 1.0, "train": 1.2, "meditate": 0.9, "level_gain": 0.1},
        "play": {"create": 2.0},
        "attack": {"bias": -50.0},
        "temperature": 0.7,
    }
    a = side(spec, "Cern", ["Golem"] * 8)
    rv = rules_vector(max_turns=12)
    trains = big = 0
    for game in range(6):
        res, log = E.play_game(*E.prepare(rv, a, a), np.uint64(4), game // 2, game % 2, True)
        first = int(log[0, 3])
        plvl = {first: 0, 1 - first: 1}
        lvl = {}
        for ev in log:
            seat, code = int(ev[1]), int(ev[2])
            if code == E.EV_MEDITATE:
                assert ev[3] == min(10, plvl[seat] + 1)
                plvl[seat] = int(ev[3])
            elif code == E.EV_CREATE:
                lvl[seat, int(ev[4])] = 0
            elif code == E.EV_TRAIN:
                key = (seat, int(ev[4]))
                assert ev[5] == min(10, lvl[key] + plvl[seat])
                trains += 1
                big += lvl[key] + plvl[seat] > 10
                lvl[key] = int(ev[5])
            assert code not in (E.EV_ATTACK, E.EV_DESTROY)
        assert res[E.X_INVARIANT] == 1 and res[E.X_CONSERVED] == 1
    assert trains > 10 and big > 0
