"""Trisk's repair targets (balance/games/trisk/repair.py): every Primal's
reference deck against every reference deck."""

from __future__ import annotations

from pathlib import Path

import pytest

from balance import config, repair, sweep
from balance.errors import UserError
from balance.games.trisk import cards
from balance.games.trisk import repair as trisk_repair


def test_every_primal_is_a_repair_target():
    table = repair.metric_table("trisk")
    assert {"max_primal_score", "min_primal_score"} <= set(table)
    t = repair.parse_target("min_primal_score >= 45%", table)
    assert (t.lo, t.unit) == (0.45, "share")


@pytest.mark.slow  # measured over 1 s in the fast tier
def test_the_primal_metrics_bound_every_reference_deck(tmp_path):
    """The strongest and weakest Primal are the extremes of the decks' scores
    in the reference decks' round robin, each interval simultaneous over the
    ten Primals: it holds every deck's own value, and is wider than the
    winning deck's own interval."""
    decks = config.reference_deck_names("trisk")
    field = trisk_repair.deck_field(repair.Measuring("trisk", "tempo,control", 20, 3))
    assert field.split(",") == [f"tempo@{d}" for d in decks]
    rows, keys = trisk_repair.measure(
        ["base"], repair.Measuring("trisk", "tempo", 20, 3, results=tmp_path)
    )
    (row,) = rows
    n = len(decks)
    assert len(keys) == n * (n - 1) // 2  # every pair of different decks, once
    res = sweep.evaluate("trisk", ["base"], field, 20, 3, None, 1 << 15, tmp_path, progress=False)
    st = res["tables"]["strategies"]
    assert row["games"] == sum(r.games for r in res["runs"].values()) == 45 * 20
    top, bottom = st.loc[st["score"].idxmax()], st.loc[st["score"].idxmin()]
    assert row["max_primal_score"] == top.score and row["min_primal_score"] == bottom.score
    assert row["max_primal_score_lo"] < top.score_lo and row["max_primal_score_hi"] > top.score_hi
    assert row["min_primal_score_lo"] < bottom.score_lo
    assert (st["score_lo"] <= row["max_primal_score_hi"]).all()


# --------------------------------------------------------------------------- card moves
def _base_rules():
    return config.resolve_variant("trisk", "base").rules


@pytest.mark.parametrize(
    "text, key, base, values",
    [
        ("card:Meru.hp=6..10:2", "card:Meru the Still Water.hp", 10, (6, 8, 10)),
        ("card:bear.Hibernate=2,4", "card:Bear.Hibernate", 3, (2, 4)),
        ("card:Tamsin.cun=4..6", "card:Tamsin the Fox Queen.cun", 5, (4, 5, 6)),
        ("skill:Dread.n=1..3", "skill:Dread.n", 2, (1, 2, 3)),
    ],
)
def test_card_fields_are_moves(text, key, base, values):
    m = repair.parse_move("trisk", text, _base_rules())
    assert (m.key, m.base, m.values, m.game) == (key, base, values, True)
    # anything else is a rules key, as before
    assert repair.parse_move("trisk", "actions=2..4", _base_rules()).game is False


@pytest.mark.parametrize(
    "text, words",
    [
        ("card:Nobody.hp=1..3", "unknown card 'Nobody'"),
        ("card:Bear.speed=1..3", "field or ability of card 'Bear'"),
        ("card:Bear.hp=0..3", "0 is out of range; allowed 1..20"),
        ("card:Bear.hp=a,b", "takes integers"),
        ("card:Bear.hp=5", "at least two values"),
        ("card:Bear=5..6", "write card:NAME.FIELD"),
        ("skill:Dread.target=1..2", "movable field is n"),
        ("skill:Flight.n=1..2", "only a number can move"),
    ],
)
def test_a_bad_card_move_is_one_line(text, words):
    with pytest.raises(UserError, match=words.replace("(", r"\(").replace(")", r"\)")) as e:
        repair.parse_move("trisk", text, _base_rules())
    assert "\n" not in str(e.value)


# the numeric card fields of a card set (what a card move could change)
NUMERIC = ("mig", "cun", "wis", "hp", "ap", "mp", "armor", "attack")


def test_a_primal_attack_is_not_a_move():
    """Rulebook: "At level 10 its Attack unlocks and it can join your attacks":
    one level for every Primal, the rules key primal_attack_level, so a Primal
    card's attack is a field play never reads. A repair does not offer it (it
    would play the same games at every value); the key itself is a move."""
    with pytest.raises(UserError) as e:
        repair.parse_move("trisk", "card:Vask.attack=5..9", _base_rules())
    msg = str(e.value)
    assert "\n" not in msg and "play never reads 'attack' on a Primal" in msg
    assert "card 'Vask the Ember King'" in msg
    assert "a Primal's moves: mig, cun, wis, hp, ap, mp, armor" in msg
    m = repair.parse_move("trisk", "primal_attack_level=8..10", _base_rules())
    assert (m.key, m.game, m.values) == ("primal_attack_level", False, (8, 9, 10))


@pytest.mark.slow  # measured over 1 s in the fast tier
def test_card_moves_are_the_fields_play_reads_for_the_type():
    """The card fields a move may change come from the declaration of what play
    reads per card type (sims.trisk.cards.READ_FIELDS): on a card of each type,
    a numeric field is a move exactly when the type's fields list it."""
    from sims.trisk import cards as K

    assert trisk_repair.MOVABLE_FIELDS == {
        t: tuple(f for f in K.READ_FIELDS[t] if f in NUMERIC) for t in K.TYPES
    }
    assert set(trisk_repair.CARD_FIELDS) == set(NUMERIC)
    for name, ctype in (
        ("Vask", "Primal"),
        ("Bear", "Creation"),
        ("Dragon", "Upgrade"),
        ("Blessing of Growth", "Sorcery"),
    ):
        for fld in NUMERIC:
            text = f"card:{name}.{fld}=1..2"
            if fld in K.READ_FIELDS[ctype]:
                try:
                    m = repair.parse_move("trisk", text, _base_rules())
                    assert m.game and m.key.endswith(f".{fld}")
                except UserError as e:  # a field the card's TOML leaves out
                    assert "has no field" in str(e), str(e)
            else:
                with pytest.raises(UserError, match=f"play never reads '{fld}' on a {ctype}"):
                    repair.parse_move("trisk", text, _base_rules())
    # an ability's level moves only where abilities are read
    assert repair.parse_move("trisk", "card:Bear.Hibernate=2..4", _base_rules()).game


def test_a_card_move_plays_a_derived_set_kept_beside_its_variant(tmp_path):
    """The candidate's card set is the original with the one field changed
    (every comment kept), loads as a set, and the variant file written for it
    reads back to the same engine table."""
    rules = _base_rules()
    text = trisk_repair.derived_text(rules, {"card:Bear.hp": 9})
    original = cards.REFERENCE_SET.read_text(encoding="utf-8")
    assert text.count("\n#") == original.count("\n#")
    (override,) = trisk_repair.apply("trisk", rules, {"card:Bear.hp": 9}, tmp_path)
    path = override.removeprefix("card_set=")
    cs = cards.load_card_set(path)
    ref = cards.load_card_set("reference")
    differ = [r for r in range(len(ref.cards)) if ref.cards[r] != cs.cards[r]]
    assert [cs.cards[r]["name"] for r in differ] == ["Bear"] and cs.cards[differ[0]]["hp"] == 9
    out = trisk_repair.export("trisk", {**rules, "card_set": path}, tmp_path / "x" / "v")
    assert out == {"card_set": str(tmp_path / "x" / "v-cards.toml")}
    assert (tmp_path / "x" / "v-cards.toml").read_text() == Path(path).read_text()


@pytest.mark.slow
def test_the_search_restores_a_planted_card_fault(tmp_path):
    """A designer's set where Tamsin the Fox Queen has 1 HP instead of the
    rulebook's "Every Primal has 10 HP, 1 AP and 1 MP" (as the reference set
    keeps it): her deck falls from about 39% against the field to about 28%,
    the weakest. The search over her HP finds 10, verifies it on fresh deals
    (at 800 games a pair both figures are decided against 33%, with the
    interval simultaneous over the ten Primals), and writes a variant, with
    its card set beside it, that every command accepts."""
    rules = _base_rules()
    bad = tmp_path / "crippled.toml"
    bad.write_text(trisk_repair.derived_text(rules, {"card:Tamsin the Fox Queen.hp": 1}))
    variant = tmp_path / "crippled-rules.toml"
    variant.write_text(f'[rules]\ncard_set = "{bad}"\n')
    plan = repair.make_plan(
        "trisk",
        str(variant),
        ["min_primal_score>=0.33"],
        ["card:Tamsin.hp=1,10"],
        "tempo",
        trials=2,
        games=100,
        verify_games=800,
        top=1,
    )
    res = repair.repair(plan, results=tmp_path / "store", progress=False)
    unchanged, fixed = res.verified
    assert unchanged["targets"][0]["status"] == repair.NOT_MET, unchanged["targets"]
    assert fixed["moved"] == {"card:Tamsin the Fox Queen.hp": 10}
    assert fixed["meets_all"], fixed["targets"]
    assert res.best is fixed
    (path,) = repair.write_variants(res, tmp_path / "out", "test")
    back = config.resolve_variant("trisk", str(path))
    tamsin = next(c for c in back.card_set().cards if c["name"].startswith("Tamsin"))
    assert tamsin["hp"] == 10 and Path(back.rules["card_set"]).parent == tmp_path / "out"


# --------------------------------------------------------------------------- card effects
@pytest.mark.slow
def test_card_effects_are_the_power_tests_first_look(tmp_path):
    """A repair's card effects are the equal-power test's own: for two cards
    at one look (games = max games), the same effect and standard error."""
    from dataclasses import replace

    from balance.games.trisk import power as tp
    from tests.games.trisk.test_trisk_power import _two_cards

    cards = _two_cards()
    plan = replace(
        tp.load_plan(cards=cards, games=20, max_games=20, seed=11),
        restricted_games=20,
        check_strategy=None,
        calibration_games=0,
    )
    full = tp.run_power(plan, results=tmp_path, progress=False, regression=False, finishes=False)
    table, keys = tp.card_effects(plan, results=tmp_path, progress=False)
    got = table.set_index("card").loc[list(full.cards["card"])]
    assert list(got["effect"]) == list(full.cards["effect"])
    assert list(got["se"]) == list(full.cards["se"])
    assert (got["lo"] < got["effect"]).all() and (got["effect"] < got["hi"]).all()
    assert keys


@pytest.mark.slow
def test_the_sorcery_targets_bound_every_sorcery(tmp_path, monkeypatch):
    """``min_sorcery_effect`` and ``max_sorcery_effect`` are the extremes of
    the Sorceries' effects (only the Sorceries are played), each with an
    interval simultaneous over them."""
    from balance.games.trisk import power as tp

    table = repair.metric_table("trisk")
    assert {"min_card_effect", "max_upgrade_effect", "min_sorcery_effect"} <= set(table)
    asked = []
    real = tp.card_effects

    def spy(plan, **kw):
        asked.append(plan.cards)
        return real(plan, **kw)

    monkeypatch.setattr(tp, "card_effects", spy)
    how = repair.Measuring("trisk", "tempo", 4, 2, results=tmp_path, wanted=("min_sorcery_effect",))
    (row,), _ = trisk_repair.measure_cards(["base"], how)
    cs = cards.load_card_set("reference")
    sorceries = [c["name"] for c in cs.cards if c["type"] == "Sorcery"]
    assert list(asked[0]) == sorceries
    assert "min_card_effect" not in row and "max_sorcery_effect" in row
    assert row["min_sorcery_effect_lo"] < row["min_sorcery_effect"] < row["max_sorcery_effect"]
