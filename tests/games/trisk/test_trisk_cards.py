"""Trisk card set and decks: the reference set keeps the rulebook's facts (R1, R2),
sits on the point budget, encodes per sims/trisk/cards.py, and every malformed
set or deck is refused with one line naming the file, the card and the field."""

from __future__ import annotations

import numpy as np
import pytest

from balance.errors import UserError
from balance.games.trisk.cards import (
    REFERENCE_SET,
    card_rows,
    check_deck,
    load_card_set,
    load_decks,
    make_deck,
    random_deck,
    skill_rows,
)
from sims.trisk import cards as C


@pytest.fixture(scope="module")
def cs():
    return load_card_set()


@pytest.fixture(scope="module")
def ref_text():
    return REFERENCE_SET.read_text()


def row_of(cs, name):
    return cs.table[cs.row(name)]


def block(cs, name, i):
    return row_of(cs, name)[C.C_ABIL + i * C.A_W : C.C_ABIL + (i + 1) * C.A_W]


# ---- the reference set: rulebook facts ----------------------------------------------
def test_reference_loads(cs):
    assert cs.table.shape == (len(cs.cards), C.CARD_W)
    assert cs.table.dtype == np.int64
    assert 45 <= len(cs.cards) <= 60
    assert "reconstructed" in cs.description.lower() and "R1" in cs.description
    assert len(cs.digest) == 64
    assert cs.names[cs.neutral] == "Clay Golem"


R2 = {"900", "090", "009", "540", "504", "450", "405", "054", "045"}


def test_primals_r1_r2(cs):
    assert len(cs.primals) == 10
    codes = {}
    for p in cs.primals:
        c = cs.cards[p]
        assert (c["hp"], c["ap"], c["mp"], c["attack"], c["abilities"]) == (10, 1, 1, None, [])
        codes[f"{c['mig']}{c['cun']}{c['wis']}"] = c["set"]
        # a Primal's Attack level is the rules key primal_attack_level, not its card's
        assert cs.table[p, C.C_TYPE] == C.PRIMAL and cs.table[p, C.C_ATTACK_LEVEL] == -1
    assert {k for k, s in codes.items() if s == "Primals"} == R2
    cern = cs.cards[cs.row("cern the grey")]
    assert (cern["mig"], cern["cun"], cern["wis"], cern["set"]) == (3, 3, 3, "Jager")


def test_bear(cs):
    bear = row_of(cs, "Bear")
    assert bear[C.C_HP] == 7 and bear[C.C_ATTACK_LEVEL] == 1
    assert cs.cards[cs.row("Bear")]["kind"] == "Animal"
    hib = block(cs, "Bear", 0)
    assert cs.cards[cs.row("Bear")]["abilities"][0]["skill"] == "Hibernate"
    assert hib[C.A_SHAPE] == C.SHAPE_ACTIVE and hib[C.A_LEVEL] == 3
    assert (hib[C.A_EFFECT], hib[C.A_TARGET], hib[C.A_PARAM]) == (C.E_STATUS, C.T_SELF, C.ASLEEP)


def test_raven(cs):
    raven = row_of(cs, "Raven")
    assert raven[C.C_ATTACK_LEVEL] == 3
    blind = block(cs, "Raven", 0)
    assert blind[C.A_SHAPE] == C.SHAPE_ACTIVE
    assert (blind[C.A_EFFECT], blind[C.A_PARAM], blind[C.A_TARGET]) == (
        C.E_STATUS,
        C.BLINDED,
        C.T_ENEMY_CREATION,
    )


def test_wolf_howl(cs):
    wolf = cs.cards[cs.row("Wolf")]
    assert wolf["kind"] == "Animal" and wolf["group"] == "Wolf"
    i = [a["skill"] for a in wolf["abilities"]].index("Howl")
    howl = block(cs, "Wolf", i)
    assert howl[C.A_COINS] == C.COIN_PER_GROUP
    assert howl[C.A_GROUP] == cs.groups.index("Wolf") == row_of(cs, "Wolf")[C.C_GROUP]


def test_upgrade_chains(cs):
    kinds = cs.kinds
    assert cs.cards[cs.row("Dragonling")]["kind"] == "Dragonling"
    dragon, elder = row_of(cs, "Dragon"), row_of(cs, "Elder Dragon")
    assert dragon[C.C_TYPE] == C.UPGRADE and dragon[C.C_ONTO] == kinds.index("Dragonling")
    assert dragon[C.C_KIND] == kinds.index("Dragon")
    assert elder[C.C_TYPE] == C.UPGRADE and elder[C.C_ONTO] == kinds.index("Dragon")
    assert cs.cards[cs.row("Human")]["kind"] == "Human"
    warrior = row_of(cs, "Warrior")
    assert warrior[C.C_TYPE] == C.UPGRADE and warrior[C.C_ONTO] == kinds.index("Human")
    assert warrior[C.C_MIG] == 5
    assert cs.budget_target(cs.row("Elder Dragon")) == cs.budget_target(cs.row("Dragon")) + 8


def test_named_cards_and_sets(cs):
    jager = [
        "Stag",
        "Druid",
        "Nymph",
        "Bear Spirit",
        "Wolf Spirit",
        "Snake Spirit",
        "Raven Spirit",
        "Owl Spirit",
        "Cern the Grey",
    ]
    for name in jager:
        assert cs.cards[cs.row(name)]["set"] == "Jager"
    for c in cs.cards:
        assert c["finishes"] and set(c["finishes"]) <= {"Common", "Radiant", "Signed"}
        if c["type"] not in ("Primal",) and c["name"] not in jager:
            assert c["set"] == "Basic"


def test_sorceries(cs):
    flight = cs.skills[cs.cards[cs.row("Blessing of Flight")]["spell"]]
    assert (flight["effect"], flight["status"], flight["n"]) == ("status", "Flying", "X")
    cleansing = cs.skills[cs.cards[cs.row("Blessing of Cleansing")]["spell"]]
    assert (cleansing["effect"], cleansing["n"]) == ("cleanse", "X")
    for kind in ("Curse", "Ritual"):
        applied = {
            cs.skills[c["spell"]]["status"]
            for c in cs.cards
            if c["type"] == "Sorcery" and c["kind"] == kind
        }
        assert applied >= {"Feared", "Blinded", "Asleep", "Poisoned", "Silenced"}
    for c in cs.cards:
        if c["type"] == "Sorcery":
            r = cs.row(c["name"])
            assert cs.table[r, C.C_MIG : C.C_WIS + 1].tolist() == [0, 0, 0]
            assert cs.table[r, C.C_N_ABIL] == 1
            assert cs.table[r, C.C_ABIL + C.A_SHAPE] == C.SHAPE_SPELL
            if c["kind"] == "Ritual":  # X = the sacrificed creation's MP
                assert cs.table[r, C.C_ABIL + C.A_N] == C.X_AMOUNT


def test_every_card_on_budget(cs):
    assert cs.off_budget() == []
    for p in cs.primals:
        assert cs.budget_target(p) is None


def test_neutral_filler(cs):
    c = cs.cards[cs.neutral]
    assert c["type"] == "Creation" and (c["mig"], c["cun"], c["wis"]) == (0, 0, 0)
    assert c["abilities"] == [] and cs.points(cs.neutral) == cs.budget["creation"]
    for p in cs.primals:
        assert cs.neutral in cs.playable(p)


def test_every_primal_has_eight_playable_creations(cs):
    for p in cs.primals:
        bodies = [r for r in cs.playable(p) if cs.type_of(r) != "Sorcery"]
        assert len(bodies) >= 8, cs.names[p]
        for r in cs.playable(p):
            assert all(cs.cards[r][s] <= cs.cards[p][s] for s in ("mig", "cun", "wis"))


def test_every_skill_book_effect_used(cs):
    """Every effect of the engine's vocabulary but ``draw`` (R3) is on a card."""
    used = [cs.skills[c["spell"]] for c in cs.cards if c["type"] == "Sorcery"]
    used += [cs.skills[a["skill"]] for c in cs.cards for a in c["abilities"]]
    assert {s["effect"] for s in used} == set(C.EFFECT_NAMES) - {"draw"}
    assert {s["status"] for s in used if s["effect"] == "status"} == set(C.STATUSES)
    assert {s["coins"] for s in used} == {"none", "one", "per_group"}
    assert any(s["effect"] == "damage" and s["damage"] != "physical" for s in used)
    assert any(
        s["effect"] == "status" and s["status"] == "Asleep" and s["target"] == "self" for s in used
    )
    assert set(cs.skills) == {s["name"] for s in used}  # no unused Skill Book entry


def test_no_reference_card_draws_r3(cs):
    """Rulebook: "Muster: Draw a card. This is the only way to draw (maximum
    hand size 9)." R3: no card of the reference set may draw."""
    from sims.trisk.engine import draw_rows

    for c in cs.cards:
        skills = ([c["spell"]] if c["spell"] else []) + [a["skill"] for a in c["abilities"]]
        assert all(cs.skills[k]["effect"] != "draw" for k in skills), c["name"]
    assert not [k for k, v in cs.skills.items() if v["effect"] == "draw"]
    assert draw_rows(cs.table) == []  # nor in the engine's table
    assert C.E_DRAW not in {
        int(cs.table[r, C.C_ABIL + i * C.A_W + C.A_EFFECT])
        for r in range(cs.n_cards)
        for i in range(cs.table[r, C.C_N_ABIL])
    }


def test_foresight_replaced_by_mentor_on_budget(cs):
    """Human, Fox, Owl Spirit and Oracle drew a card (Foresight, 2 points); they
    carry Mentor instead (2 levels on one of your creations, 2 points), at the
    same level, so each stays on the creation budget."""
    assert "Foresight" not in cs.skills
    mentor = cs.skills["Mentor"]
    assert (mentor["effect"], mentor["target"], mentor["n"]) == ("level", "own_creation", 2)
    for name, level in (("Human", 1), ("Fox", 1), ("Owl Spirit", 2), ("Oracle", 1)):
        c = cs.cards[cs.row(name)]
        assert {"skill": "Mentor", "shape": "active", "level": level} in c["abilities"], name
        assert cs.points(cs.row(name)) == cs.budget_target(cs.row(name)) == 24.0


FORESIGHT = (
    '[skills.Foresight]\neffect = "draw"\ntarget = "player"\nn = 1\ntext = "Draw a card."\n\n'
)
HUMAN_ABILITY = 'abilities = [{ skill = "Mentor", shape = "active", level = 1 }]'


def _drawing_set(ref_text, tmp_path, ritual: bool = False):
    """The reference set with the Human drawing a card again (or, ``ritual``, a
    Ritual of Plague that draws)."""
    text = ref_text.replace("[skills.Mentor]", FORESIGHT + "[skills.Mentor]", 1)
    assert text.count(HUMAN_ABILITY) == 1
    if ritual:
        text = text.replace('spell = "Plague"', 'spell = "Foresight"', 1)
    else:
        text = text.replace(HUMAN_ABILITY, HUMAN_ABILITY.replace("Mentor", "Foresight"), 1)
    path = tmp_path / ("ritual_draws.toml" if ritual else "human_draws.toml")
    path.write_text(text)
    return path


def test_a_card_that_draws_is_refused_unless_the_rules_allow_it(ref_text, tmp_path):
    """R3: the loader refuses a set whose card draws, in one line naming the card
    and the effect; ``allow_draw_effects = true`` lets a designer's set draw."""
    from dataclasses import replace

    from balance import config

    for ritual, where in (
        (False, "card 'Human': ability 'Foresight'"),
        (True, "card 'Ritual of Plague': spell 'Foresight'"),
    ):
        path = _drawing_set(ref_text, tmp_path, ritual)
        with pytest.raises(UserError) as exc:
            load_card_set(path)
        msg = str(exc.value)
        assert "\n" not in msg and msg.startswith(str(path)), msg
        for frag in (
            where,
            "effect 'draw'",
            "Muster is the only way to draw",
            "allow_draw_effects = true",
        ):
            assert frag in msg, (frag, msg)
        with pytest.raises(UserError, match=where):
            load_card_set(path, {"allow_draw_effects": False})
        allowed = load_card_set(path, {"allow_draw_effects": True})
        assert allowed.skills["Foresight"]["effect"] == "draw"
        # played through a ruleset: refused under the base rules, played with the key on
        base = config.resolve_variant("trisk", "base")
        rs = replace(base, rules={**base.rules, "card_set": str(path)})
        with pytest.raises(UserError, match=where):
            rs.vector()
        on = replace(rs, rules={**rs.rules, "allow_draw_effects": True})
        assert on.vector()[0] == base.rules["max_turns"]


def test_engine_refuses_a_drawing_table_without_the_key(cs):
    """A hand-built table that draws cannot bypass the loader: ``encode_rules``
    refuses it unless allow_draw_effects is on (R3)."""
    from sims.trisk import engine as E

    table = cs.table.copy()
    r = cs.row("Human")
    table[r, C.C_ABIL + C.A_EFFECT] = C.E_DRAW
    table[r, C.C_ABIL + C.A_TARGET] = C.T_PLAYER
    with pytest.raises(ValueError, match=rf"card rows \[{r}\] draw"):
        E.encode_rules(dict(E.DEFAULT_RULES), table)
    assert len(E.encode_rules({**E.DEFAULT_RULES, "allow_draw_effects": True}, table)) > 0


def test_cli_refuses_a_drawing_set_in_one_line(ref_text, tmp_path, monkeypatch, capsys):
    from balance import cli

    path = _drawing_set(ref_text, tmp_path)
    monkeypatch.setattr("sys.argv", ["balance", "trisk", "cards", "--card-set", str(path)])
    with pytest.raises(SystemExit) as exc:
        cli.main()
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "card 'Human'" in err and "effect 'draw'" in err, err


def test_card_and_skill_rows(cs):
    rows = card_rows(cs)
    assert len(rows) == len(cs.cards)
    bear = rows[cs.row("Bear")]
    assert bear["HP"] == 7 and "Hibernate" in bear["abilities"] and bear["points"] == 24
    assert "Cern the Grey" in bear["primals"]
    assert "Meru the Still Water" not in rows[cs.row("Warrior")]["primals"]
    skills = {s["skill"]: s for s in skill_rows(cs)}
    assert "Wolf (active @1)" in skills["Howl"]["cards"]
    assert skills["Howl"]["coins"] == "per_group"


def test_row_lookup(cs):
    assert cs.row("bEaR") == cs.row("Bear")
    with pytest.raises(UserError, match="did you mean .*'Bear'"):
        cs.row("Baer")


# ---- finishes are cosmetic ----------------------------------------------------------
def test_finishes_not_in_table_or_digest(cs, ref_text, tmp_path):
    swapped = ref_text.replace('["Common", "Radiant", "Signed"]', '["Signed"]').replace(
        '["Common", "Radiant"]', '["Radiant", "Common"]'
    )
    assert swapped != ref_text
    path = tmp_path / "cards.toml"
    path.write_text(swapped)
    other = load_card_set(path)
    assert other.cards[cs.row("Bear")]["finishes"] == ["Signed"]
    assert np.array_equal(other.table, cs.table)
    assert other.digest == cs.digest
    # a rules change does change the digest
    path.write_text(ref_text.replace("hp = 7\n", "hp = 8\n", 1))
    assert load_card_set(path).digest != cs.digest


# ---- decks --------------------------------------------------------------------------
def test_reference_decks(cs):
    decks = load_decks(cs)
    assert {d.primal for d in decks.values()} == set(cs.primals)
    for name, d in decks.items():
        assert cs.names[d.primal] == name and d.size == 20
        assert d.cards[:4] == (cs.neutral,) * 4
        assert d.cards.count(cs.neutral) == 4
        check_deck(cs, d.primal, d.cards)
        n_sorc = sum(cs.type_of(r) == "Sorcery" for r in d.cards)
        assert 2 <= n_sorc <= 4


def test_swap_in(cs):
    d = load_decks(cs)["Cern the Grey"]
    s = d.swap_in(cs.row("Bear"))
    assert s.cards[0] == cs.row("Bear") and s.cards[1:] == d.cards[1:]
    assert s.name == "Cern the Grey+Bear" and s.size == d.size
    assert s.swap_in(cs.row("Wolf")).cards[:2] == (cs.row("Bear"), cs.row("Wolf"))


def test_check_deck_refuses(cs):
    meru = cs.row("Meru the Still Water")
    with pytest.raises(UserError, match=r"cannot play 'Warrior' \(MIG 5 > 0\)"):
        check_deck(cs, meru, [cs.neutral, cs.row("Warrior")])
    with pytest.raises(UserError, match="exactly one Primal"):
        check_deck(cs, meru, [cs.neutral, cs.row("Cern the Grey")])
    with pytest.raises(UserError, match="unknown card"):
        check_deck(cs, meru, [999])
    with pytest.raises(UserError, match="not a Primal"):
        check_deck(cs, cs.row("Bear"), [cs.neutral])


def test_make_deck_order(cs):
    cern = cs.row("Cern the Grey")
    d = make_deck(cs, "x", cern, [cs.row("Wolf"), cs.neutral, cs.row("Bear"), cs.neutral])
    assert d.cards == (cs.neutral, cs.neutral, cs.row("Bear"), cs.row("Wolf"))


def test_bad_decks_file(cs, tmp_path):
    path = tmp_path / "decks.toml"
    cases = {
        '[deck."Meru the Still Water"]\ncards = { "Clay Golem" = 4, "Warrior" = 1 }\n': "cannot play 'Warrior' (MIG 5 > 0)",
        '[deck."Meru the Still Water"]\ncards = { "Clay Golem" = 4, "Cern the Grey" = 1 }\n': "exactly one Primal",
        '[deck."Meru the Still Water"]\ncards = { "Clay Golem" = 4, "Beer" = 1 }\n': "unknown Trisk card 'Beer'",
        '[deck."Meru the Still Water"]\ncards = { "Clay Golem" = 3, "Oracle" = 1 }\n': "at least 4 neutral",
        '[deck."Bear"]\ncards = { "Clay Golem" = 4 }\n': "is not a Primal",
    }
    for text, expected in cases.items():
        path.write_text(text)
        with pytest.raises(UserError) as exc:
            load_decks(cs, path)
        msg = str(exc.value)
        assert expected in msg and "\n" not in msg and "decks.toml" in msg
        assert "deck 'Meru the Still Water'" in msg or "deck 'Bear'" in msg


def test_random_deck(cs):
    rng = np.random.default_rng(5)
    for p in cs.primals:
        rows = random_deck(cs, p, 20, rng)
        assert len(rows) == 20
        check_deck(cs, p, rows)
    a = random_deck(cs, cs.primals[0], 30, np.random.default_rng(1))
    assert a == random_deck(cs, cs.primals[0], 30, np.random.default_rng(1))


# ---- malformed sets: one line naming the file, the card and the field ---------------------
OWL_LAST = '  { skill = "Warded", shape = "passive", level = 4 },\n]'
BAD_SETS = [
    # (replace old, by new, expected fragments of the message)
    ('name = "Bear"\n', 'name = "Bear"\ncolour = "red"\n', ["card 'Bear'", "'colour'"]),
    (
        '[skills.Hibernate]\neffect = "status"',
        '[skills.Hibernate]\neffect = "nap"',
        ["skill 'Hibernate'", "'effect'", "'nap'"],
    ),
    (
        'skill = "Hibernate", shape = "active", level = 3',
        'skill = "Hibernat", shape = "active", level = 3',
        ["card 'Bear'", "'abilities'", "Hibernat", "'Hibernate'"],
    ),
    (
        'status = "Asleep"\ntarget = "self"',
        'status = "Sleepy"\ntarget = "self"',
        ["skill 'Hibernate'", "'status'", "'Sleepy'"],
    ),
    (
        '[skills.Ember]\neffect = "damage"\ndamage = "fire"',
        '[skills.Ember]\neffect = "damage"\ndamage = "plasma"',
        ["skill 'Ember'", "'damage'"],
    ),
    (
        'status = "Blinded"\ntarget = "enemy_creation"\nn = 2\ntext = "An enemy',
        'status = "Blinded"\ntarget = "everyone"\nn = 2\ntext = "An enemy',
        ["skill 'Blind'", "'target'", "'everyone'"],
    ),
    (
        '[skills.Mend]\neffect = "heal"\ntarget = "own_creation"',
        '[skills.Mend]\neffect = "heal"\ntarget = "enemy_creation"',
        ["skill 'Mend'", "'target'", "not allowed for effect 'heal'"],
    ),
    ('onto = "Dragonling"', 'onto = "Wyrm"', ["card 'Dragon'", "'onto'", "'Wyrm'"]),
    ("hp = 7\n", "hp = 0\n", ["card 'Bear'", "'hp'", "out of range", "1..20"]),
    ("mig = 3\nhp = 7", "mig = 10\nhp = 7", ["card 'Bear'", "'mig'", "0..9"]),
    ("id = 19\n", "id = 18\n", ["card 'Bear'", "'id'", "card 'Boar'"]),
    ('name = "Boar"\n', 'name = "bear"\n', ["card 'Bear'", "'name'", "'bear'"]),
    (
        'spell = "Flight"\n',
        'spell = "Flight"\nmig = 1\n',
        ["card 'Blessing of Flight'", "'mig'", "Sorcery"],
    ),
    (
        'spell = "Flight"\n',
        'spell = "Flite"\n',
        ["card 'Blessing of Flight'", "'spell'", "'Flight'"],
    ),
    (
        'spell = "Slumber"\n',
        'spell = "Mend"\n',
        ["card 'Curse of Slumber'", "'spell'", "enemy_creation"],
    ),
    (
        '{ skill = "Warded", shape = "passive", level = 3 }]',
        '{ skill = "Warded", shape = "active", level = 3 }]',
        ["card 'Stag'", "'abilities'", "passive effect 'ward'"],
    ),
    (
        '{ skill = "Roar", shape = "active", level = 1 }]\n\n[[card]]\nid = 19',
        '{ skill = "Roar", shape = "passive", level = 1 }]\n\n[[card]]\nid = 19',
        ["card 'Boar'", "'abilities'", "active effect 'status'"],
    ),
    (
        OWL_LAST,
        OWL_LAST[:-1] + '  { skill = "Mend", shape = "active", level = 1 },\n]',
        ["card 'Owl Spirit'", "'abilities'", "at most 3"],
    ),
    (
        'neutral = "Clay Golem"',
        'neutral = "Clay Gollem"',
        ["top level", "'neutral'", "'Clay Golem'"],
    ),
    (
        'kind = "Construct"\nhp = 15',
        'kind = "Construct"\nmig = 1\nhp = 15',
        ["card 'Clay Golem'", "'mig'", "000"],
    ),
    (
        'kind = "Construct"\nhp = 15',
        'kind = "Construct"\nhp = 15\nabilities = [{ skill = '
        '"Mend", shape = "active", level = 0 }]',
        ["card 'Clay Golem'", "vanilla"],
    ),
    ('kind = "Construct"\nhp = 15', 'kind = "Construct"\nhp = 16', ["card 'Clay Golem'", "budget"]),
    (
        'group = "Wolf"\ncun = 2\nhp = 11',
        'group = "Wolves"\ncun = 2\nhp = 11',
        ["card 'Wolf'", "'group'", "'Wolves'"],
    ),
    (
        'resist = ["fire"]\nweak = ["frost"]\nattack = 1',
        'resist = ["fire"]\nweak = ["ice"]\nattack = 1',
        ["card 'Dragonling'", "'weak'", "'ice'"],
    ),
    ('coins = "per_group"', 'coins = "two"', ["skill 'Howl'", "'coins'", "per_group"]),
    ("ritual_sacrifice = 2.0", "ritual_sacrifce = 2.0", ["[budget]", "'ritual_sacrifce'"]),
]


def _messages(ref_text, tmp_path):
    for i, (old, new, expected) in enumerate(BAD_SETS):
        assert old in ref_text, old
        path = tmp_path / f"bad{i}.toml"
        path.write_text(ref_text.replace(old, new, 1))
        yield path, expected


def test_malformed_sets_refused_in_one_line(ref_text, tmp_path):
    n = 0
    for path, expected in _messages(ref_text, tmp_path):
        with pytest.raises(UserError) as exc:
            load_card_set(path)
        msg = str(exc.value)
        assert "\n" not in msg, msg
        assert msg.startswith(str(path)), msg
        for frag in expected:
            assert frag in msg, (frag, msg)
        n += 1
    assert n == len(BAD_SETS)


# ---- read it or refuse it: what a Primal card may carry -------------------------------
VASK = 'name = "Vask the Ember King"'


def _vask_with(ref_text, tmp_path, line):
    """The reference set with ``line`` added to Vask the Ember King's card."""
    head, tail = ref_text.split(VASK, 1)
    card, rest = tail.split("\n\n", 1)
    path = tmp_path / "vask.toml"
    path.write_text(f"{head}{VASK}{card}\n{line}\n\n{rest}")
    return path


@pytest.mark.parametrize("value", [1, 10])
def test_a_primal_attack_field_is_refused(ref_text, tmp_path, value):
    """Rulebook, "Your Primal": "At level 10 its Attack unlocks and it can join
    your attacks"; "Combat": "Your Primal can attack once it reaches level 10".
    One level for every Primal: the rules key primal_attack_level (10), which
    the engine reads for every Primal; a Primal card's own attack would change
    nothing (a set with Vask's attack 1 played exactly as one with 10), so the
    loader refuses it in one line naming the card and what a Primal allows."""
    path = _vask_with(ref_text, tmp_path, f"attack = {value}")
    with pytest.raises(UserError) as exc:
        load_card_set(path)
    msg = str(exc.value)
    assert "\n" not in msg and msg.startswith(str(path)), msg
    for frag in (
        "card 'Vask the Ember King'",
        "field 'attack' is not allowed on a Primal",
        "primal_attack_level",
        "a Primal allows: mig, cun, wis, hp, ap, mp, armor, flying, resist, weak",
    ):
        assert frag in msg, (frag, msg)


@pytest.mark.parametrize(
    "line, why",
    [
        ('abilities = [{ skill = "Mend", shape = "active", level = 0 }]', "only creations"),
        ('group = "Wolf"', "a group counts creations only"),
    ],
)
def test_a_primal_field_play_never_reads_is_refused(ref_text, tmp_path, line, why):
    """Abilities are used by creations ("Use one active ability on each
    creation") and a group counts the creations you control ("Howl flips one
    coin for every Wolf you control"): the engine reads neither on a Primal."""
    path = _vask_with(ref_text, tmp_path, line)
    with pytest.raises(UserError, match=why) as exc:
        load_card_set(path)
    assert "card 'Vask the Ember King'" in str(exc.value) and "\n" not in str(exc.value)


def test_every_card_field_is_identity_or_read_by_some_type():
    """The loader's fields are a card's identity plus the fields play reads
    (C.READ_FIELDS), so none of them is there for nothing."""
    from balance.games.trisk import cards as loader

    read = {f for fields in C.READ_FIELDS.values() for f in fields}
    assert set(loader.CARD_KEYS) == set(loader.IDENTITY_KEYS) | read
    assert not set(loader.IDENTITY_KEYS) & read
    assert set(C.READ_FIELDS) == set(C.TYPES)
    assert "attack" not in C.READ_FIELDS["Primal"] and "attack" in C.READ_FIELDS["Creation"]


def test_upgrade_onto_kind_no_card_has(ref_text, tmp_path):
    text = ref_text.replace('kinds = ["Construct",', 'kinds = ["Wyrm", "Construct",', 1).replace(
        'onto = "Dragonling"', 'onto = "Wyrm"', 1
    )
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(UserError, match=r"card 'Dragon': field 'onto' = 'Wyrm': no Creation"):
        load_card_set(path)


def test_no_primal_refused(ref_text, tmp_path):
    head = ref_text.split("# ---- the Primals")[0]
    golem = ref_text[ref_text.index("[[card]]\nid = 11") : ref_text.index("[[card]]\nid = 12")]
    path = tmp_path / "noprimal.toml"
    path.write_text(head + golem)
    with pytest.raises(UserError, match="no Primal; at least 1"):
        load_card_set(path)


def test_syntax_error_and_missing_file(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text("name = \n")
    with pytest.raises(UserError, match="malformed TOML"):
        load_card_set(path)
    with pytest.raises(UserError, match="no such file"):
        load_card_set(tmp_path / "nope.toml")


def test_upgrade_loop_refused(ref_text, tmp_path):
    loop = (
        '\n[[card]]\nid = 99\nname = "Ouroboros"\nset = "Basic"\nfinishes = ["Common"]\n'
        'type = "Upgrade"\nkind = "Wyrm"\nonto = "Wyrm"\nhp = 10\n'
    )
    text = ref_text.replace('kinds = ["Construct",', 'kinds = ["Wyrm", "Construct",', 1)
    path = tmp_path / "loop.toml"
    path.write_text(text + loop)
    with pytest.raises(UserError, match=r"card 'Ouroboros': field 'onto' = 'Wyrm': .*loops"):
        load_card_set(path)


# ---- `balance trisk cards`: budget points against the target, off-budget flagged --------
BEAR_STATS = "mig = 3\nhp = 7\nap = 4\n"
HUMAN_STATS = 'kind = "Human"\nhp = 12\nap = 2\n'


def _tester_set(ref_text, tmp_path):
    """The issue's two tester cards: Bear with its attack doubled (AP 4 -> 8) and
    Human with 20 HP and 6 AP (12 and 2 before)."""
    assert ref_text.count(BEAR_STATS) == 1 and ref_text.count(HUMAN_STATS) == 1
    text = ref_text.replace(BEAR_STATS, "mig = 3\nhp = 7\nap = 8\n")
    text = text.replace(HUMAN_STATS, 'kind = "Human"\nhp = 20\nap = 6\n')
    path = tmp_path / "testers.toml"
    path.write_text(text)
    return path


def _cards_cli(args, monkeypatch, capsys):
    from balance import cli

    monkeypatch.setattr("sys.argv", ["balance", "trisk", "cards", *args])
    monkeypatch.setenv("COLUMNS", "400")
    try:
        cli.main()
    except SystemExit as e:
        assert e.code in (0, None), capsys.readouterr().err
    return capsys.readouterr().out


def test_card_rows_carry_the_budget_target_and_the_distance_from_it(cs, ref_text, tmp_path):
    rows = card_rows(cs)
    for r in rows:
        if r["type"] == "Primal":
            assert r["target"] is None and r["off_by"] is None and r["off_budget"] is None
            assert set(r["why_null"]) == {"target", "off_by", "off_budget"}
        else:
            assert r["off_by"] == pytest.approx(r["points"] - r["target"])
            assert r["off_budget"] is False  # the reference set is on budget
    off = load_card_set(_tester_set(ref_text, tmp_path))
    by = {r["name"]: r for r in card_rows(off)}
    # AP costs 2 points and HP 1 (configs/trisk/cards.toml [budget])
    assert (by["Bear"]["points"], by["Bear"]["target"], by["Bear"]["off_by"]) == (32, 24, 8)
    assert (by["Human"]["points"], by["Human"]["off_by"]) == (40, 16)
    assert by["Bear"]["off_budget"] and by["Human"]["off_budget"]
    assert [r["name"] for r in by.values() if r["off_budget"]] == ["Human", "Bear"]


def test_cards_command_flags_off_budget_cards(ref_text, tmp_path, monkeypatch, capsys):
    """Issue 15 item 6: `trisk cards` shows each card's points against its target
    and flags the cards off it (the power page said it did; it did not)."""
    import json

    out = _cards_cli(["--wide"], monkeypatch, capsys)
    assert "target" in out and "budget" in out
    assert "Budget: all 45 non-Primal cards are exactly on their target." in out
    # the columns explained (the legend wraps: compare its words)
    words = " ".join(out.split())
    assert "AP: attack points" in words and "MIG, CUN, WIS" in words
    path = _tester_set(ref_text, tmp_path)
    out = _cards_cli(["--card-set", str(path)], monkeypatch, capsys)
    assert "OFF +8" in out and "OFF +16" in out
    assert (
        "Budget: 2 of 45 non-Primal cards are OFF their target: Human +16 (40 vs 24); "
        "Bear +8 (32 vs 24)."
    ) in out
    rows = json.loads(_cards_cli(["--card-set", str(path), "--json"], monkeypatch, capsys))
    bear = next(r for r in rows if r["name"] == "Bear")
    assert bear["off_budget"] is True and bear["off_by"] == 8 and bear["target"] == 24
    primal = next(r for r in rows if r["type"] == "Primal")
    assert primal["off_budget"] is None and "exempt" in primal["why_null"]["target"]
