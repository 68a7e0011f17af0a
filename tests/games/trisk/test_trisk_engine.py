"""Trisk engine invariants over many random games, the toss, decks, finishes and the trace.
What every engine must do (same seed same games, thread and batch invariance,
trace = simulate) is tests/core/test_conformance.py.

Games are played with the reference set and decks (``configs/trisk``) under the
TOML strategies, and on the toy table of ``tests/games/trisk/trisk_helpers.py`` (which has
Upgrade chains, Rituals, mass Curses and coin gates in every deck). Counts are
small: these check structure, not balance.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from balance import config
from balance.errors import UserError
from sims import trisk
from sims.trisk import cards as K
from sims.trisk import engine as E
from sims.trisk.trace import trace, trace_log
from tests.games.trisk.trisk_helpers import (
    MUSTER_ONLY,
    TOY,
    TOY_NAMES,
    TOY_TABLE,
    rules_vector,
    side,
)

N = 64  # games per run (32 seat-swapped pairs)

TOY_DECK = ["Golem"] * 3 + [
    "Bear",
    "Raven",
    "Wolf",
    "Wolf",
    "Wolf",
    "Dragonling",
    "Dragon",
    "Elder Dragon",
    "Human",
    "Shade",
    "Knight",
    "Salamander",
    "Stag",
    "Troll",
    "Mage",
    "Gambler",
    "Scout",
    "Blessing of Growth",
    "Curse of Fire",
    "Curse of Terror",
    "Curse of Bolts",
    "Ritual of Growth",
    "Ritual of Slumber",
    "Blessing of Cleansing",
]
GREEDY = {
    "primal": {
        "muster": 1.0,
        "hand_room": 1.0,
        "train": 1.0,
        "level_gain": 0.3,
        "unlock_attack": 2,
        "wasted": -5,
        "meditate": 0.5,
        "primal_low": 0.05,
    },
    "play": {
        "create": 2,
        "upgrade": 3,
        "ap_gain": 0.3,
        "curse": 0.5,
        "ritual": 0.2,
        "ability": 0.2,
        "wasted": -5,
        "dmg_creature": 1,
        "kills": 2,
        "dmg_primal": 1,
        "disable": 0.5,
        "poison": 0.5,
        "heal": 0.5,
        "sacrifice": -0.2,
        "lost_attack": -0.5,
        "self_sleep": -0.3,
        "lethal": 10,
    },
    "attack": {"bias": 1},
    "block": {"prevented": 0.5, "dies": -1, "danger": 2, "absorb": 0.1},
}


def check_outcomes(out: dict, max_turns: int = 60, max_board: int = 40) -> None:
    """Every structural invariant of a batch of games."""
    n = len(out["winner_seat"])
    assert (out["conserved"] == 1).all(), "a card left deck + hand + play + discard"
    assert (out["invariants"] == 1).all(), "a level, hand size, token or damage out of range"
    assert (out["a_seat"] == np.arange(n) % 2).all()
    w = out["winner_seat"]
    assert set(np.unique(w)) <= {-1, 0, 1}
    assert ((out["rounds"] >= 1) & (out["rounds"] <= 2 * max_turns)).all()
    draw = w == E.DRAW
    # a draw only at the turn cap, and the cap only as a draw
    assert (out["reason"][draw] == E.END_CAP).all()
    assert (out["rounds"][draw] == 2 * max_turns).all()
    assert (out["reason"][~draw] == E.END_PRIMAL).all()
    # points: 2 win, 1 draw, 0 loss, from A's seat
    exp = np.where(draw, 1, np.where(w == out["a_seat"], 2, 0))
    assert (out["a_points"] == exp).all()
    # the loser's Primal has fallen (10 HP), the winner's has not
    for g in np.flatnonzero(~draw):
        assert out[f"damage_seat{1 - w[g]}"][g] >= 10
        assert out[f"damage_seat{w[g]}"][g] < 10
    for s in (0, 1):
        assert ((out[f"level_seat{s}"] >= 0) & (out[f"level_seat{s}"] <= 10)).all()
        assert ((out[f"board_seat{s}"] >= 0) & (out[f"board_seat{s}"] <= max_board)).all()
        assert (out[f"board_seat{s}"] <= out[f"created_seat{s}"]).all()
        assert (out[f"board_seat{s}"] <= out[f"peak_seat{s}"]).all()
        assert (out[f"peak_seat{s}"] <= np.minimum(max_board, out[f"created_seat{s}"])).all()
        # a Create is refused only on a full board, at most once per own turn
        assert (out[f"refused_seat{s}"] <= (out["rounds"] + 1) // 2).all()
        assert ((out[f"refused_seat{s}"] == 0) | (out[f"peak_seat{s}"] == max_board)).all()
        assert (out[f"mustered_seat{s}"] <= out[f"drawn_seat{s}"]).all()
        assert (out[f"upgrades_seat{s}"] >= 0).all()
    assert (out["creates_refused"] == out["refused_seat0"] + out["refused_seat1"]).all()
    # the same deal twice: the same seat starts, so A starts in exactly one game of it
    # (both sides here choose alike when they win the toss)
    assert (out["first_seat"][0::2] == out["first_seat"][1::2]).all()
    assert (out["a_first"][0::2] + out["a_first"][1::2] == 1).all()


# ---- the reference set, decks and strategies ------------------------------------------------
@pytest.fixture(scope="module")
def rs():
    return config.resolve_variant("trisk", "base")


REF_PAIRS = [
    ("random@Vask the Ember King", "random@Meru the Still Water"),
    ("rush@Ysolde of the Thorns", "control@Cern the Grey"),
    ("ramp@Brannoc Boarhide", "tempo@Halvard Stormbrow"),
    ("tempo@Tamsin the Fox Queen", "rush@Orla of the Lantern"),
    ("control@Sefa of the Hollow Moon", "ramp@Quill the Dreamweaver"),
    ("random@Cern the Grey", "random@Cern the Grey"),
]


@pytest.mark.parametrize("a,b", REF_PAIRS)
def test_reference_games_keep_every_invariant(rs, a, b):
    sa, sb = config.load_strategy("trisk", a), config.load_strategy("trisk", b)
    out = trisk.simulate(rs.vector(), sa.vector(), sb.vector(), 11, 0, N)
    check_outcomes(out)
    assert (out["created_seat0"] + out["created_seat1"]).sum() > 0


def test_every_reference_deck_plays(rs):
    from balance.games.trisk.cards import load_decks

    cs = rs.card_set()
    st = config.load_strategy("trisk", "tempo")
    decks = list(load_decks(cs).values())
    assert len(decks) == 10
    for i, d in enumerate(decks):
        sa = st.with_deck(d, cs.n_cards)
        sb = st.with_deck(decks[(i + 1) % len(decks)], cs.n_cards)
        out = trisk.simulate(rs.vector(), sa.vector(), sb.vector(), 3, 0, 16)
        check_outcomes(out)


def test_only_muster_draws_in_reference_games(rs):
    """Rulebook: "Muster: Draw a card. This is the only way to draw (maximum hand
    size 9)." R3: no card of the reference set may draw. Over reference games
    (each shipped strategy with every reference deck, and tempo on random legal
    decks of the reference set) every card that left a deck was drawn by Muster."""
    out = _reference_sample(rs, deals=4, deck_seed=13, first_seed=40)
    games = len(out["winner_seat"])
    drawn = 0
    for s in (0, 1):
        extra = out[f"drawn_seat{s}"] - out[f"mustered_seat{s}"]
        assert (extra == 0).all(), f"{extra.sum()} cards drawn, not by Muster"
        drawn += int(out[f"drawn_seat{s}"].sum())
    assert (
        games == 8 * (len(config.strategy_names("trisk")) * 10 + 20) and drawn > 10 * games
    )  # Muster drew every one


def _reference_sample(rs, deals: int = 4, deck_seed: int = 17, first_seed: int = 60):
    """Each shipped strategy with every reference deck (against the next deck)
    and tempo on 20 pairs of random legal decks of the reference set (drawn
    with ``deck_seed``): the games' outcomes under ``rs``, pair k on seed
    ``first_seed + k``."""
    from balance.games.trisk.cards import load_decks, make_deck, random_deck

    cs = rs.card_set()
    rv = rs.vector()
    decks = list(load_decks(cs).values())
    pairs = []
    for k, name in enumerate(config.strategy_names("trisk")):
        st = config.load_strategy("trisk", name)
        pairs += [
            (st.with_deck(d, cs.n_cards), st.with_deck(decks[(i + k + 1) % 10], cs.n_cards))
            for i, d in enumerate(decks)
        ]
    g = np.random.default_rng(deck_seed)
    tempo = config.load_strategy("trisk", "tempo")
    for k in range(20):
        ps = [int(g.choice(cs.primals)) for _ in "ab"]
        pairs.append(
            tuple(
                tempo.with_deck(make_deck(cs, f"r{k}{i}", p, random_deck(cs, p, 20, g)), cs.n_cards)
                for i, p in enumerate(ps)
            )
        )
    outs = [
        trisk.simulate(rv, sa.vector(), sb.vector(), first_seed + k, 0, 2 * deals)
        for k, (sa, sb) in enumerate(pairs)
    ]
    return {key: np.concatenate([o[key] for o in outs]) for key in outs[0]}


@pytest.mark.slow  # measured over 1 s in the fast tier
def test_default_board_limit_never_binds_in_reference_games(rs):
    """Rulebook, Creation phase: "Create: Play a creation from your hand ... Do
    these as often as you like." RD1's limit (max_board) must never refuse a
    Create under the shipped strategies with the reference set: over 640 games (8 per pairing)
    none is refused, and no side ever holds more than its 20-card deck allows.
    The limit of engine 1.1.0 (12) bound in this very sample."""
    from dataclasses import replace

    out = _reference_sample(rs)
    assert len(out["winner_seat"]) == 8 * (len(config.strategy_names("trisk")) * 10 + 20)
    check_outcomes(out, max_board=rs.rules["max_board"])
    assert rs.rules["max_board"] == E.DEFAULT_RULES["max_board"] >= 20
    assert out["creates_refused"].sum() == 0
    peak = np.maximum(out["peak_seat0"], out["peak_seat1"])
    assert 12 <= peak.max() <= 20  # boards grew past the old limit, never to the new one
    old = _reference_sample(replace(rs, rules={**rs.rules, "max_board": 12}))
    assert (old["creates_refused"] > 0).sum() > 0


def test_a_refused_create_is_counted_under_a_small_board(rs):
    """RD1 with max_board = 3: Creates are refused and counted per game (turns
    with a creation in hand and a full board), in the engine's outcome, in a
    stored run's histogram and in ``balance trisk simulate``'s row."""
    from dataclasses import replace

    from balance import runner, tables

    small = replace(rs, rules={**rs.rules, "max_board": 3})
    out = _reference_sample(small, deals=1)
    check_outcomes(out, max_board=3)
    refused = out["creates_refused"]
    assert (refused > 0).mean() > 0.5 and (
        np.maximum(out["peak_seat0"], out["peak_seat1"]) <= 3
    ).all()
    sa = config.load_strategy("trisk", "rush@Ysolde of the Thorns")
    sb = config.load_strategy("trisk", "control@Meru the Still Water")
    for ruleset, binds in ((small, True), (rs, False)):
        res = runner.simulate_run(runner.RunSpec(ruleset, sa, sb, 64, 3))
        o = trisk.simulate(ruleset.vector(), sa.vector(), sb.vector(), 3, 0, 64)
        h = res.metrics["creates_refused"]
        assert (h == np.bincount(o["creates_refused"], minlength=len(h))).all()
        row = tables.run_row(res)
        assert row["creates_refused_games"] == (o["creates_refused"] > 0).sum()
        assert row["creates_refused_total"] == o["creates_refused"].sum()
        assert (row["creates_refused_games"] > 0) == binds


def test_short_games_end_in_draws_at_the_cap(rs):
    sa = config.load_strategy("trisk", "ramp@Meru the Still Water")
    rules = dict(rs.rules, max_turns=3)
    rv = E.encode_rules(rules, rs.card_set().table)
    out = trisk.simulate(rv, sa.vector(), sa.vector(), 5, 0, N)
    check_outcomes(out, max_turns=3)
    assert (out["winner_seat"] == E.DRAW).all() and (out["rounds"] == 6).all()


# ---- toy decks: Upgrades, Rituals, coins, Ward everywhere -----------------------------------
@pytest.mark.parametrize("temp", [0.0, 0.5, 3.0])
def test_toy_games_keep_every_invariant(temp):
    spec = dict(GREEDY, temperature=temp)
    a = side(spec, "Cern", TOY_DECK)
    b = side(spec, "Vask", TOY_DECK[::-1])
    out = trisk.simulate(rules_vector(), a, b, 21, 0, N)
    check_outcomes(out)
    for s in (0, 1):
        assert out[f"created_seat{s}"].sum() > 0 and out[f"spells_seat{s}"].sum() > 0
        assert out[f"abilities_seat{s}"].sum() > 0
    if temp > 0:  # the greedy order at temperature 0 happens to Train no Upgrade in
        assert (out["upgrades_seat0"] + out["upgrades_seat1"]).sum() > 0


@pytest.mark.parametrize(
    "over",
    [
        dict(hand_limit=2),
        dict(max_board=1),
        dict(actions=1),
        dict(upgrade_cost=0),
        dict(resist_rule=1, weak_rule=1),
        dict(second_level=10, primal_attack_level=0),
    ],
)
def test_toy_games_under_rule_variants(over):
    spec = dict(GREEDY, temperature=1.0)
    a = side(spec, "Cern", TOY_DECK)
    out = trisk.simulate(rules_vector(**over), a, a, 8, 0, 32)
    check_outcomes(out, max_board=over.get("max_board", 40))
    if "max_board" in over:
        assert (out["board_seat0"] <= 1).all() and (out["board_seat1"] <= 1).all()
        assert out["creates_refused"].sum() > 0


def test_empty_deck_games_end_at_the_cap():
    """No cards at all: no loss for an empty deck (R3); Primals reach level 10 and
    attack each other, or the game is a draw at the cap."""
    a = side({"primal": {"meditate": 1.0}, "attack": {"bias": 1.0}}, "Cern", [])
    out = trisk.simulate(rules_vector(), a, a, 1, 0, 8)
    check_outcomes(out)
    assert (out["created_seat0"] == 0).all()


def test_a_forbidden_card_is_drawn_never_played():
    spec = dict(GREEDY, temperature=1.0)
    creations = [r for r in range(len(TOY_TABLE)) if TOY_TABLE[r, 0] == 1]
    mask = sum(1 << r for r in creations)
    a = side(spec, "Cern", TOY_DECK, forbidden=mask)
    b = side(spec, "Cern", TOY_DECK)
    out = trisk.simulate(rules_vector(), a, b, 4, 0, N)
    check_outcomes(out)
    a_created = np.where(out["a_seat"] == 0, out["created_seat0"], out["created_seat1"])
    b_created = np.where(out["a_seat"] == 0, out["created_seat1"], out["created_seat0"])
    assert (a_created == 0).all() and b_created.sum() > 0


# ---- determinism and how games are split ----------------------------------------------------
def _toy_pair():
    spec = dict(GREEDY, temperature=1.0)
    return rules_vector(), side(spec, "Cern", TOY_DECK), side(spec, "Vask", TOY_DECK[::-1])


def _same(x: dict, y: dict) -> None:
    assert x.keys() == y.keys()
    for k in x:
        assert np.array_equal(x[k], y[k]), k


# ---- what play reads of a Primal card (sims.trisk.cards.READ_FIELDS) --------------------------
# a Primal's table column per field, and a value other than the toy Primals'
PRIMAL_FIELD = {
    "hp": (K.C_HP, 14),
    "ap": (K.C_AP, 4),
    "mp": (K.C_MP, 1),
    "armor": (K.C_ARMOR, 2),
    "attack": (K.C_ATTACK_LEVEL, 1),
}


@pytest.mark.slow
@pytest.mark.parametrize("field", list(PRIMAL_FIELD))
def test_the_engine_reads_a_primals_fields_as_declared(field):
    """Rulebook, "Your Primal": "Every Primal has 10 HP, 1 AP and 1 MP" and "At
    level 10 its Attack unlocks and it can join your attacks": one level for
    every Primal, the rules key primal_attack_level. A Primal card's HP, AP,
    MP and Armor change the games (READ_FIELDS lists them, so the loader takes
    them and a repair may move them); its Attack level does not (a Primal
    with Attack at 1 plays exactly as one at 10), so the loader refuses it and
    a repair never offers it."""
    col, value = PRIMAL_FIELD[field]
    spec = dict(GREEDY, temperature=1.0)
    spec["primal"] = dict(spec["primal"], meditate=3.0)  # Primals reach 10 and attack

    def play(table):
        a = side(spec, "Cern", TOY_DECK, table=table)
        b = side(spec, "Vask", TOY_DECK[::-1], table=table)
        return trisk.simulate(rules_vector(table), a, b, 8, 0, N)

    changed = TOY_TABLE.copy()
    for primal in ("Cern", "Vask"):
        changed[TOY[primal], col] = value
    base, moved = play(TOY_TABLE), play(changed)
    check_outcomes(base)  # (its Primal HP check holds for the toy Primals' 10)
    assert (base["level_seat0"] == 10).any()  # a Primal could attack
    if field in K.READ_FIELDS["Primal"]:
        assert any(not np.array_equal(base[k], moved[k]) for k in base), field
    else:
        _same(base, moved)


def test_each_side_wins_the_toss_once_per_pair():
    """RD5: the pair plays both outcomes of the toss: seat 0 wins it, which is
    side A in game 2d and side B in game 2d + 1; with the default choice the
    toss winner starts."""
    rv, a, b = _toy_pair()
    for d in range(40):
        r0, _ = trace_log(rv, a, b, 2, 2 * d)
        r1, _ = trace_log(rv, a, b, 2, 2 * d + 1)
        assert r0[E.X_TOSS] == r1[E.X_TOSS] == 0
        assert r0[E.X_FIRST] == r1[E.X_FIRST] == 0


def test_toss_winner_chooses_by_go_first():
    rv = rules_vector()
    starts = side(dict(GREEDY, go_first=1.0), "Cern", TOY_DECK)
    waits = side(dict(GREEDY, go_first=0.0), "Cern", TOY_DECK)
    for d in range(10):
        for swap in (0, 1):
            res, _ = trace_log(rv, starts, waits, 6, 2 * d + swap)
            toss = int(res[E.X_TOSS])
            toss_side = toss ^ swap  # 0: A (starts), 1: B (waits)
            exp_first = toss if toss_side == 0 else 1 - toss
            assert res[E.X_FIRST] == exp_first


def test_play_game_matches_simulate():
    rv, a, b = _toy_pair()
    out = trisk.simulate(rv, a, b, 14, 0, 8)
    for g in range(8):
        res, log = trace_log(rv, a, b, 14, g)
        assert res[E.X_WINNER] == out["winner_seat"][g]
        assert res[E.X_TURNS] == out["rounds"][g]
        assert res[E.X_DMG0] == out["damage_seat0"][g]
        assert res[E.X_EVENTS] == len(log) or res[E.X_EVENTS] >= E.MAX_LOG


def test_swap_in_of_the_neutral_itself_changes_nothing(rs):
    from balance.games.trisk.cards import load_decks

    cs = rs.card_set()
    deck = load_decks(cs)["Vask the Ember King"]
    st = config.load_strategy("trisk", "tempo")
    other = config.load_strategy("trisk", "tempo@Meru the Still Water")
    same = deck.swap_in(cs.neutral)
    assert same.cards == deck.cards
    x = trisk.simulate(
        rs.vector(), st.with_deck(deck, cs.n_cards).vector(), other.vector(), 15, 0, 16
    )
    y = trisk.simulate(
        rs.vector(), st.with_deck(same, cs.n_cards).vector(), other.vector(), 15, 0, 16
    )
    _same(x, y)


# ---- decks and sides that are refused -------------------------------------------------------
def test_prepare_refuses_a_primal_row_that_is_not_a_primal():
    rv = rules_vector()
    good = side(GREEDY, "Cern", TOY_DECK)
    bad = side(GREEDY, TOY["Bear"], TOY_DECK)
    with pytest.raises(ValueError, match="not a Primal"):
        E.prepare(rv, good, bad)
    with pytest.raises(ValueError, match="not a Primal"):
        trisk.simulate(rv, bad, good, 1, 0, 2)
    wrong_set = side(GREEDY, "Cern", TOY_DECK, table=TOY_TABLE[:-1])
    with pytest.raises(ValueError):
        E.prepare(rv, good, wrong_set)
    unknown = side(GREEDY, "Cern", [len(TOY_TABLE) + 3])
    with pytest.raises(ValueError):
        E.prepare(rv, good, unknown)


def _one_line(exc) -> str:
    msg = str(exc.value)
    assert "\n" not in msg
    return msg


def test_check_deck_refuses_illegal_decks(rs):
    from balance.games.trisk.cards import check_deck

    cs = rs.card_set()
    vask = cs.row("Vask the Ember King")  # 900
    check_deck(cs, vask, [cs.row("Bear"), cs.row("Clay Golem")])
    with pytest.raises(UserError) as e:
        check_deck(cs, vask, [cs.row("Bear"), cs.row("Fox")])
    msg = _one_line(e)
    assert "Fox" in msg and "CUN" in msg
    with pytest.raises(UserError) as e:
        check_deck(cs, vask, [cs.row("Bear"), cs.row("Meru the Still Water")])
    assert "Primal" in _one_line(e)
    with pytest.raises(UserError) as e:
        check_deck(cs, cs.row("Bear"), [cs.row("Bear")])
    assert "not a Primal" in _one_line(e)
    # the Warrior has MIG 5: a Primal with at least 5 Might
    warrior = cs.row("Warrior")
    check_deck(cs, cs.row("Brannoc Boarhide"), [warrior])  # 540
    with pytest.raises(UserError) as e:
        check_deck(cs, cs.row("Tamsin the Fox Queen"), [warrior])  # 450
    assert "MIG 5" in _one_line(e)


def test_decks_file_with_an_illegal_deck_is_refused(rs, tmp_path):
    from balance.games.trisk.cards import load_decks

    p = tmp_path / "decks.toml"
    p.write_text('[deck."Vask the Ember King"]\ncards = { "Clay Golem" = 4, "Fox" = 2 }\n')
    with pytest.raises(UserError) as e:
        load_decks(rs.card_set(), p)
    msg = _one_line(e)
    assert str(p.name) in msg and "Fox" in msg


# ---- finishes are cosmetic ------------------------------------------------------------------
def test_finishes_change_nothing(rs, tmp_path):
    from balance.games.trisk.cards import REFERENCE_SET, load_card_set, load_decks

    text = REFERENCE_SET.read_text()
    new, n = re.subn(r"(?m)^finishes\s*=\s*\[[^\]]*\]", 'finishes = ["Signed"]', text)
    assert n >= 50
    alt = tmp_path / "cards.toml"
    alt.write_text(new.replace('"Signed"', '"Radiant", "Signed"', 7))
    ref, other = load_card_set("reference"), load_card_set(alt)
    assert [c["finishes"] for c in other.cards] != [c["finishes"] for c in ref.cards]
    assert np.array_equal(ref.table, other.table)
    assert ref.digest == other.digest
    st = config.load_strategy("trisk", "tempo")
    outs = []
    for cs in (ref, other):
        decks = load_decks(cs)
        rv = E.encode_rules(rs.rules, cs.table)
        a = st.with_deck(decks["Vask the Ember King"], cs.n_cards).vector()
        b = st.with_deck(decks["Quill the Dreamweaver"], cs.n_cards).vector()
        outs.append(trisk.simulate(rv, a, b, 17, 0, 32))
    _same(*outs)


# ---- the trace ------------------------------------------------------------------------------
def test_trace_tells_the_game():
    rv, a, b = _toy_pair()
    for g in range(20):
        events = trace(rv, a, b, 3, g, names=("Alpha", "Beta"), card_names=TOY_NAMES)
        if events[-1]["code"] == E.EV_END and events[-1]["seat"] > 0:
            break
    texts = [e["text"] for e in events]
    assert "toss" in texts[0] and ("Alpha" in texts[0] or "Beta" in texts[0])
    assert any("creates" in t for t in texts)
    assert any("attacks with" in t for t in texts)
    assert "wins" in texts[-1] and "Primal falls" in texts[-1]
    assert any(name in " ".join(texts) for name in ("Bear", "Wolf", "Golem", "Raven"))
    # the log is the game: replaying it gives the same outcome as simulate
    out = trisk.simulate(rv, a, b, 3, 2 * (g // 2), 2)
    assert out["winner_seat"][g % 2] == events[-1]["seat"] - 1
    assert all(t.startswith("turn") for t in texts)


def test_trace_without_card_names():
    rv, a, b = _toy_pair()
    events = trace(rv, a, b, 3, 0)
    assert any("#" in e["text"] for e in events)


def test_cli_trace_prints_a_readable_log():
    from typer.testing import CliRunner

    from balance.cli import app

    res = CliRunner().invoke(
        app,
        [
            "trisk",
            "trace",
            "--seed",
            "2",
            "--game",
            "1",
            "--a",
            "rush@Vask the Ember King",
            "--b",
            "control@Meru the Still Water",
        ],
    )
    assert res.exit_code == 0, res.output
    out = res.output
    assert "toss" in out and "creates" in out
    assert "Clay Golem" in out or "Bear" in out or "Human" in out
    assert "wins on turn" in out or "draw" in out
    assert "#" not in out.split("\n", 1)[1]  # cards are named, not rows
    res = CliRunner().invoke(app, ["trisk", "trace", "--seed", "2", "--json"])
    assert res.exit_code == 0, res.output


# ---- paired shuffles (METHODS: swap-in is paired) -------------------------------------------
def _draws(rv, a, b, seed, game, seat):
    """The cards seat ``seat`` musters in game ``game`` (sides that only Muster)."""
    _, log = trace_log(rv, a, b, seed, game)
    m = log[(log[:, 2] == E.EV_MUSTER) & (log[:, 1] == seat)]
    return [int(c) for c in m[:, 3]]


def test_each_sides_deck_is_shuffled_alike_in_both_seats_and_swap_in_is_paired():
    rv = rules_vector(max_turns=4)
    names = [
        "Golem",
        "Bear",
        "Raven",
        "Wolf",
        "Dragonling",
        "Human",
        "Knight",
        "Salamander",
        "Stag",
        "Troll",
        "Mage",
        "Gambler",
    ]
    a = side(MUSTER_ONLY, "Cern", names)
    b = side(MUSTER_ONLY, "Cern", names)
    a2 = side(MUSTER_ONLY, "Cern", ["Scout"] + names[1:])  # the Golem swapped for a Scout
    for d in range(5):
        seq0 = _draws(rv, a, b, 8, 2 * d, 0)
        seq1 = _draws(rv, a, b, 8, 2 * d + 1, 1)
        assert len(seq0) == 12 and seq0 == seq1  # A's deck, the same order in both seats
        assert seq0 != _draws(rv, a, b, 8, 2 * d, 1)  # B's own stream shuffles it otherwise
        swapped = _draws(rv, a2, b, 8, 2 * d, 0)
        diff = [i for i in range(12) if seq0[i] != swapped[i]]
        assert len(diff) == 1
        assert seq0[diff[0]] == TOY["Golem"] and swapped[diff[0]] == TOY["Scout"]


def test_trace_toss_text_follows_the_second_level_rule():
    """The toss line names the second player's starting level; under
    second_level = 0 it must not say level 1."""
    spec = dict(GREEDY, temperature=1.0)
    a = side(spec, "Cern", TOY_DECK)
    events = trace(rules_vector(second_level=0), a, a, 3, 0, card_names=TOY_NAMES)
    assert "toss" in events[0]["text"]
    assert "level 1" not in events[0]["text"]
    events = trace(rules_vector(second_level=3), a, a, 3, 0, card_names=TOY_NAMES)
    assert "level 1" not in events[0]["text"]
