"""Clash of Steel's repair keys: one rules key per printed item modifier (C7)
and ``second_wind_max`` (C13). Each is an ordinary rules key (listed by
``balance clash rules``, set by ``--rule`` or a variant file's ``[rules]``);
the defaults are the printed values and play exactly as before.

The rulebook's Items section (``rules/clash-of-steel.txt``):

    • Axe: +1 Attack vs Shields, +1 Attack and Defend in Arm Range
    • Dagger: +2 Attack in Hand Range, -1 Attack and Defend in all other Ranges
    • Shield: +1 all Defends, +1 to Defend against Spears. [...]
    • Spear: +1 Attack and Defend in Reach Range, +1 Attack against all other
      weapons outside of Hand Range. [...]
    • Sword: +1 Attack and Defend in Step Range, +1 Attack vs Axe.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from balance import config
from balance.errors import UserError
from kernels.contract import Side
from sims import clash
from sims.clash import (
    ARM,
    ATTACK,
    AXE,
    DAGGER,
    DEFEND,
    HAND,
    HIGH,
    MID,
    MOVE,
    NEUTRAL,
    REACH,
    SHIELD,
    SPEAR,
    STEP,
    SWORD,
)
from strategies.clash import encode_strategy
from tests.games.clash.test_clash_engine import _replay, lo, strat

BALANCE = Path(sys.executable).with_name("balance")
DEFAULT = clash.DEFAULT_RULES
ALL_CELLS = list(itertools.product(range(3), range(6), range(4), range(6)))

# key -> (the card text it prices, the cells (action, item, range, opponent's
# item; 5 = none) it is added to), written from the card text, independently
# of item_mod
NAMED = {
    "axe_vs_shield": (
        "Axe: +1 Attack vs Shields",
        lambda a, i, r, o: i == AXE and a == ATTACK and o == SHIELD,
    ),
    "axe_arm": (
        "Axe: +1 Attack and Defend in Arm Range",
        lambda a, i, r, o: i == AXE and a in (ATTACK, DEFEND) and r == ARM,
    ),
    "dagger_hand": (
        "Dagger: +2 Attack in Hand Range",
        lambda a, i, r, o: i == DAGGER and a == ATTACK and r == HAND,
    ),
    "dagger_elsewhere": (
        "Dagger: -1 Attack and Defend in all other Ranges",
        lambda a, i, r, o: i == DAGGER and a in (ATTACK, DEFEND) and r != HAND,
    ),
    "shield_defend": (
        "Shield: +1 all Defends",
        lambda a, i, r, o: i == SHIELD and a == DEFEND,
    ),
    "shield_vs_spear": (
        "Shield: +1 to Defend against Spears",
        lambda a, i, r, o: i == SHIELD and a == DEFEND and o == SPEAR,
    ),
    "spear_reach": (
        "Spear: +1 Attack and Defend in Reach Range",
        lambda a, i, r, o: i == SPEAR and a in (ATTACK, DEFEND) and r == REACH,
    ),
    "spear_vs_items": (
        "Spear: +1 Attack against all other weapons outside of Hand Range",
        # "other weapons": a played Axe, Dagger or Sword (spear_vs_spear and
        # spear_vs_shield false: not a Spear, CD2, nor a Shield, C7)
        lambda a, i, r, o: i == SPEAR and a == ATTACK and r != HAND and o in (AXE, DAGGER, SWORD),
    ),
    "sword_step": (
        "Sword: +1 Attack and Defend in Step Range",
        lambda a, i, r, o: i == SWORD and a in (ATTACK, DEFEND) and r == STEP,
    ),
    "sword_vs_axe": (
        "Sword: +1 Attack vs Axe",
        lambda a, i, r, o: i == SWORD and a == ATTACK and o == AXE,
    ),
}


def rules(**over) -> np.ndarray:
    return clash.encode_rules(dict(DEFAULT, **over))


def mods_of(vec) -> np.ndarray:
    return vec[clash.R_ITEM_MODS : clash.R_ITEM_MODS + clash.N_ITEM_MODS].copy()


# ------------------------------------------------------------------- the keys
def test_the_keys_are_ordinary_rules_keys_appended_at_the_end():
    """The ten modifiers in card order, then second_wind_max, after every older
    key (whose vector indices keep their meaning), then spear_vs_shield;
    defaults are the printed values."""
    assert clash.ITEM_MOD_KEYS == tuple(NAMED)
    assert clash.RULE_FIELDS[-12:] == (*NAMED, "second_wind_max", "spear_vs_shield")
    assert clash.R_BID_KEEPS_LAST == 10 and clash.R_ITEM_MODS == 11
    assert clash.R_SECOND_WIND_MAX == len(clash.RULE_FIELDS) - 2 == 21
    assert clash.R_SPEAR_VS_SHIELD == 22
    printed = {k: int(text.split(": ")[1].split()[0]) for k, (text, _) in NAMED.items()}
    assert {k: DEFAULT[k] for k in NAMED} == printed
    assert list(clash.PRINTED_ITEM_MODS) == list(printed.values())
    for k in NAMED:
        assert clash.RULE_LIMITS[k] == ((-3, 4) if k == "dagger_hand" else (-3, 3))
        doc = next(r.doc for r in clash.RULES if r.name == k)
        assert NAMED[k][0].split(": ")[1] in doc  # the meaning quotes the card
    assert DEFAULT["second_wind_max"] == 5 and clash.RULE_LIMITS["second_wind_max"] == (1, 5)


def test_a_variant_file_and_rule_override_set_them(tmp_path):
    f = tmp_path / "long-dagger.toml"
    f.write_text('description = "A longer dagger"\n[rules]\ndagger_hand = 3\nsword_step = 0\n')
    rs = config.resolve_variant("clash", f"{f}+second_wind_max=2")
    assert rs.rules == {**DEFAULT, "dagger_hand": 3, "sword_step": 0, "second_wind_max": 2}
    vec = clash.encode_rules(rs.rules)
    assert vec[clash.R_ITEM_MODS + clash.M_DAGGER_HAND] == 3
    assert vec[clash.R_SECOND_WIND_MAX] == 2
    with pytest.raises(UserError, match="out of range"):
        config.resolve_variant("clash", "dagger_hand=5")
    with pytest.raises(UserError, match="out of range"):
        config.resolve_variant("clash", "second_wind_max=0")


# ------------------------------------------------------- each key, its own cells
@pytest.mark.parametrize("key", list(NAMED))
def test_each_modifier_key_moves_only_the_totals_its_card_names(key):
    """Setting one key to another value changes the modifier by the difference
    exactly on the (action, item, range, opponent's item) its card text names,
    and nowhere else; Move is never modified ("Move has no item modifiers")."""
    text, named = NAMED[key]
    base = clash.item_mod_table(rules())
    for value in (-3, 0, 3):
        delta = value - DEFAULT[key]
        t = clash.item_mod_table(rules(**{key: value}))
        for a, i, r, o in ALL_CELLS:
            want = base[a, i, r, o] + (delta if named(a, i, r, o) else 0)
            assert t[a, i, r, o] == want, (text, value, a, i, r, o)
        assert (t[MOVE] == 0).all()


def test_dagger_hand_3_makes_a_hand_attack_plus_3():
    """ "Dagger: +2 Attack in Hand Range" priced at 3: a Dagger Attack at Hand
    is +3; a Dagger Defend at Hand stays +0 and the other ranges keep "-1
    Attack and Defend in all other Ranges"."""
    m = mods_of(rules(dagger_hand=3))

    def total(action, rng, mods=m):
        return clash.action_total(
            action, 5, NEUTRAL, DAGGER, SWORD, rng, HIGH, DEFEND, MID, 0, 0, 0, 0, mods
        )

    assert total(ATTACK, HAND) == 5 + 3
    assert total(DEFEND, HAND) == 5
    for rng in (ARM, STEP, REACH):
        assert total(ATTACK, rng) == total(DEFEND, rng) == 5 - 1
    # the defaults are the printed values
    assert clash.action_total(ATTACK, 5, NEUTRAL, DAGGER, SWORD, HAND, HIGH, DEFEND, MID) == 7
    assert total(ATTACK, HAND, mods_of(rules())) == 7


def test_dagger_elsewhere_0_removes_the_penalty():
    """ "-1 Attack and Defend in all other Ranges" priced at 0: a Dagger at Arm,
    Step or Reach adds nothing; at Hand the "+2 Attack" is untouched."""
    m = mods_of(rules(dagger_elsewhere=0))
    for action, rng in itertools.product((ATTACK, DEFEND), (ARM, STEP, REACH)):
        assert clash.item_mod(action, DAGGER, rng, AXE, 0, m) == 0
        assert clash.item_mod(action, DAGGER, rng, AXE, 0) == -1  # as printed
    assert clash.item_mod(ATTACK, DAGGER, HAND, AXE, 0, m) == 2


def test_shield_vs_spear_stacks_on_shield_defend():
    """ "Shield: +1 all Defends, +1 to Defend against Spears": against a played
    Spear both apply; shield_vs_spear = 0 leaves only "+1 all Defends"."""
    m = mods_of(rules(shield_vs_spear=0))
    assert clash.item_mod(DEFEND, SHIELD, REACH, SPEAR, 0) == 2
    assert clash.item_mod(DEFEND, SHIELD, REACH, SPEAR, 0, m) == 1
    m = mods_of(rules(shield_defend=3))
    assert clash.item_mod(DEFEND, SHIELD, REACH, SPEAR, 0, m) == 4
    assert clash.item_mod(DEFEND, SHIELD, REACH, -1, 0, m) == 3
    assert clash.item_mod(ATTACK, SHIELD, REACH, SPEAR, 0, m) == 0


def test_spear_vs_items_against_a_spear_only_with_spear_vs_spear():
    """ "+1 Attack against all other weapons outside of Hand Range": the key
    prices it; against a played Spear it applies only with spear_vs_spear."""
    m = mods_of(rules(spear_vs_items=3))
    assert clash.item_mod(ATTACK, SPEAR, STEP, SWORD, 0, m) == 3
    assert clash.item_mod(ATTACK, SPEAR, STEP, SPEAR, 0, m) == 0
    assert clash.item_mod(ATTACK, SPEAR, STEP, SPEAR, 1, m) == 3
    assert clash.item_mod(ATTACK, SPEAR, HAND, SWORD, 0, m) == 0
    assert clash.item_mod(ATTACK, SPEAR, STEP, -1, 0, m) == 0  # no item played
    t = clash.item_mod_table(rules(spear_vs_items=3, spear_vs_spear=True))
    assert t[ATTACK, SPEAR, STEP, SPEAR] == 3


@pytest.mark.parametrize("seed", range(4))
def test_the_table_equals_item_mod_for_any_modifiers(seed):
    """``item_mod_table`` (what the strategies and the totals read) is
    ``item_mod`` with the rules' values, for modifiers drawn within bounds."""
    rs = np.random.default_rng(seed)
    over = {k: int(rs.integers(lo_, hi + 1)) for k, (lo_, hi) in clash.RULE_LIMITS.items()}
    over = {k: v for k, v in over.items() if k in NAMED}
    vs_spear, vs_shield = seed % 2, seed // 2
    vec = rules(**over, spear_vs_spear=bool(vs_spear), spear_vs_shield=bool(vs_shield))
    m = mods_of(vec)
    assert list(m) == [over[k] for k in NAMED]
    t = clash.item_mod_table(vec)
    for a, i, r, o in ALL_CELLS:
        item, opp = (i if i < 5 else -1), (o if o < 5 else -1)
        want = clash.item_mod(a, item, r, opp, vs_spear, m, vs_shield)
        assert t[a, i, r, o] == want
        # action_total's item part is the same value
        got = clash.action_total(
            a, 0, NEUTRAL, item, opp, r, HIGH, MOVE, HIGH, 0, 0, 0, vs_spear, m, vs_shield
        )
        assert got == want


# ----------------------------------------------------------------------- games
def test_defaults_play_as_printed():
    """The defaults are the printed values: the table is the one of
    ``item_mod`` without modifiers, and a game with every key at its default
    written out is the same game."""
    vec = rules()
    t = clash.item_mod_table(vec)
    for a, i, r, o in ALL_CELLS:
        assert t[a, i, r, o] == clash.item_mod(a, i if i < 5 else -1, r, o if o < 5 else -1, 0)
    explicit = rules(**{k: DEFAULT[k] for k in (*NAMED, "second_wind_max")})
    assert (explicit == vec).all()


def test_a_changed_modifier_changes_games_and_they_still_obey_the_rules():
    """``dagger_hand = 3`` moves the counter (Shield+Sword) against aggressive
    (Dagger+Spear) match; every game still conserves each player's stamina
    cards and ends by a defeat or the round cap."""
    a = strat("counter", lo("Shield+Sword/Second Wind"))
    b = strat("aggressive", lo("Dagger+Spear/Second Wind"))
    base = clash.simulate(rules(), a, b, 3, 0, 200)
    new = clash.simulate(rules(dagger_hand=3), a, b, 3, 0, 200)
    assert not np.array_equal(base["a_points"], new["a_points"])
    assert new["a_points"].sum() < base["a_points"].sum()  # the Dagger side gains
    for out in (base, new):
        assert (out["conserved"] == 1).all() and (out["cards_seat0"] == 15).all()
        assert np.isin(out["reason"], (clash.END_DEFEAT, clash.END_CAP)).all()
        assert ((out["rounds"] >= 1) & (out["rounds"] <= DEFAULT["max_rounds"])).all()


def test_spear_vs_shield_changes_games_of_a_spear_against_a_shield():
    """ "+1 Attack against all other weapons outside of Hand Range" (C7
    corrected: not against a Shield): with the key on, the Spear side
    (aggressive, Dagger+Spear) gains against the Shield side (miser,
    Dagger+Shield), and every game still obeys the rules."""
    a = strat("aggressive", lo("Dagger+Spear/Second Wind"))
    b = strat("miser", lo("Dagger+Shield/Second Wind"))
    base = clash.simulate(rules(), a, b, 3, 0, 200)
    old = clash.simulate(rules(spear_vs_shield=True), a, b, 3, 0, 200)
    assert not np.array_equal(base["a_points"], old["a_points"])
    assert old["a_points"].sum() > base["a_points"].sum()
    for out in (base, old):
        assert (out["conserved"] == 1).all() and (out["cards_seat0"] == 15).all()


@pytest.mark.slow
def test_replay_under_changed_keys():
    """Random play with every repair key moved: each logged total is the one of
    the rules' modifiers (the replay oracle reads them from the rules vector),
    Second Wind returns the highest discarded card it may, and the cards are
    conserved."""
    seen: dict = {}
    for over in (
        {k: (DEFAULT[k] + 2 if DEFAULT[k] <= 1 else -2) for k in NAMED} | {"second_wind_max": 3},
        {
            "dagger_hand": 4,
            "dagger_elsewhere": -3,
            "spear_vs_spear": True,
            "spear_vs_shield": True,
            "second_wind_max": 1,
        },
    ):
        vec = rules(**over)
        for g in range(120):
            la, lb = g % 27, (7 * g + 3) % 27
            log, bids, res = clash.trace_log(vec, strat("random", la), strat("random", lb), 5, g)
            loads = (la, lb) if g % 2 == 0 else (lb, la)
            for k, v in _replay(vec, log, bids, res, loads).items():
                seen[k] = seen.get(k, 0) + v
    assert seen["second_wind"] > 0 and seen["rounds"] > 1000


# ------------------------------------------------------------------ Second Wind
SW_LOADOUT = lo("Axe+Dagger/Second Wind")
# uses Second Wind at the first chance (at most 15 cards left), bids a single 5
# and plays its highest cards, so its 1s are discarded last
EAGER = encode_strategy(
    {
        "action": {"attack": 5.0},
        "stamina": {"sum": 1.0},
        "second_wind_at": 15,
        "bid": {"gap": -10.0, "cards": -1.0},
        "bid_target": 5,
    },
    Side(loadout=SW_LOADOUT),
)
OPP = encode_strategy({"action": {"defend": 5.0}}, Side(loadout=lo("Shield+Sword/Armor")))


def _sw_events(vec, games=40):
    """Per game: (round used or 0, value returned, 1s discarded before that
    round's Second Wind, each round) for the Second Wind seat."""
    out = []
    for g in range(games):
        log, bids, res = clash.trace_log(vec, EAGER, OPP, 2, g)
        s = g % 2  # EAGER is A: seat 0 in even games
        b = clash.SEAT0 + s * clash.SEAT_W
        deck = vec[clash.R_STAMINA : clash.R_STAMINA + 5]
        disc_before = []
        used, value = 0, 0
        for r in range(log.shape[0]):
            # the discard pile once this round's cards are discarded
            pile = deck - log[r, b + clash.S_HAND : b + clash.S_HAND + 5]
            pile = pile + log[r, b + clash.S_DISC : b + clash.S_DISC + 5]
            disc_before.append(pile.copy())
            if log[r, b + clash.S_SW]:
                used, value = r + 1, int(log[r, b + clash.S_SW])
                break
        assert res[clash.X_MAN_ROUND + s] == used
        loads = (SW_LOADOUT, lo("Shield+Sword/Armor"))
        _replay(vec, log, bids, res, loads if s == 0 else loads[::-1])
        out.append((used, value, disc_before))
    return out


def test_second_wind_max_1_returns_only_a_1():
    """second_wind_max = 1: Second Wind returns a 1, and only once a 1 is in
    the discard pile; before, it is not used (the maneuver stays), though this
    player would spend it at the first chance."""
    events = _sw_events(rules(second_wind_max=1))
    assert sum(1 for used, _, _ in events if used) >= 10
    deferred = 0
    for used, value, piles in events:
        if used:
            assert value == 1 and piles[-1][0] >= 1
            deferred += used > 1
            assert all(p[0] == 0 and p.sum() >= 1 for p in piles[:-1])  # no 1 to take
        else:
            assert all(p[0] == 0 for p in piles)
    assert deferred > 0


def test_second_wind_max_5_is_the_printed_rule():
    """second_wind_max = 5 (the default, "returning one of your discarded
    Stamina card of your choice"): the highest discarded card, at the first
    discard step with a card in the pile; the same games as without the key."""
    events = _sw_events(rules(second_wind_max=5))
    for used, value, piles in events:
        assert used == 1 and value == max(v + 1 for v in range(5) if piles[-1][v])
    assert any(value > 1 for _, value, _ in events)
    assert all(value == 5 for _, value, _ in events)  # it plays its 5s first
    a = clash.simulate(rules(), EAGER, OPP, 2, 0, 40)
    b = clash.simulate(rules(second_wind_max=5), EAGER, OPP, 2, 0, 40)
    assert all(np.array_equal(a[k], b[k]) for k in a)


def test_second_wind_max_changes_games():
    """A lower cap gives back a lower card, so the games differ."""
    a = clash.simulate(rules(), EAGER, OPP, 2, 0, 40)
    b = clash.simulate(rules(second_wind_max=2), EAGER, OPP, 2, 0, 40)
    assert not all(np.array_equal(a[k], b[k]) for k in a)
    assert (b["conserved"] == 1).all()


# ------------------------------------------------------------------------ CLI
def run(*args):
    return subprocess.run(
        [str(BALANCE), *map(str, args)],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "BALANCE_RESULTS"},
    )


@pytest.mark.slow
def test_cli_rule_keys(tmp_path):
    p = run("clash", "rules")
    assert p.returncode == 0, p.stderr
    for k in (*NAMED, "second_wind_max"):
        assert k in p.stdout
    p = run(
        "clash", "simulate", "--rule", "dagger_hand=3", "-n", 200, "--results", tmp_path, "--json"
    )
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["games"] == 200 and out["a_wins"] + out["b_wins"] + out["draws"] == 200
    for bad, what in (("dagger_hand=9", "-3..4"), ("second_wind_max=6", "1..5")):
        p = run("clash", "simulate", "--rule", bad, "-n", 200, "--results", tmp_path)
        assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
        assert "out of range" in p.stderr and what in p.stderr
