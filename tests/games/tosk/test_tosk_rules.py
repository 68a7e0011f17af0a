"""Tosk rules: every rulebook example and ruling T2–T7 as a scripted play.

Values are worked out by hand from ``rules/tosk.txt`` and ``docs/rulings.md``
(pips T2, Force T3, techniques T4, order T5, Momentum T6, stamina T7), never
read back from the engine. The fast enumerator used by the game loop is then
checked against the one-play reference ``evaluate`` on every subset of many
random hands under every rule combination.
"""

from __future__ import annotations

import numpy as np
import pytest

from balance.config import all_variant_combinations, resolve_variant
from sims import tosk
from tests.games.tosk import tosk_helpers

P = tosk.parse_card


def _rules(variant: str = "base", **over) -> np.ndarray:
    rules = dict(resolve_variant("tosk", variant).rules)
    rules.update(over)
    return tosk.encode_rules(rules)


def play(variant_or_rules, *codes: str) -> dict:
    rules = _rules(variant_or_rules) if isinstance(variant_or_rules, str) else variant_or_rules
    return tosk.play_cards(rules, [P(c) for c in codes])


def stats(res: dict) -> tuple[int, int, int]:
    return res["cost"], res["atk"], res["def"]


def evaluate(rules, codes, mode) -> tuple[int, int, int, int]:
    cards = np.array([P(c) for c in codes], dtype=np.int64)
    out = np.zeros(4, dtype=np.int64)
    tosk.evaluate(rules, cards, len(cards), mode, out)
    return tuple(int(x) for x in out)


@pytest.fixture(scope="module")
def all_rules() -> dict[str, np.ndarray]:
    return {v: resolve_variant("tosk", v).vector() for v in all_variant_combinations("tosk")}


# ---------------------------------------------------------------- cards (T1, T2)


def test_card_codes_round_trip():
    assert [tosk.card_code(c) for c in range(4)] == ["AC", "AD", "AH", "AS"]
    assert tosk.card_code(47) == "KS"
    for c in range(tosk.N_CARDS):
        assert P(tosk.card_code(c)) == c
        assert P(tosk.card_label(c)) == c
    assert P("a♠") == P("AS") == P("1S") == P("1♤")
    assert P(" j♦ ") == P("JD")


@pytest.mark.parametrize("code", ["", "C", "10C", "0C", "3X", "ZZ", "3", "JJ"])
def test_bad_card_codes_are_refused(code):
    with pytest.raises(ValueError):
        P(code)


def test_deck_is_48_cards_without_10s_and_jokers():
    cat = tosk.catalogue()
    assert len(cat) == 48 == tosk.N_CARDS
    ranks = [c["rank"] for c in cat]
    assert sorted(set(ranks)) == sorted(
        ["A", "2", "3", "4", "5", "6", "7", "8", "9", "J", "Q", "K"]
    )
    assert all(ranks.count(r) == 4 for r in set(ranks))
    assert sum(c["technique"] for c in cat) == 12


# T2: A 0/1, 2 0/2, 3 0/3, 4 2/0, 5 2/1, 6 3/0, 7 3/1, 8 3/2, 9 4/1 (ATK/DEF)
PIPS = {
    "A": (1, 0, 1),
    "2": (2, 0, 2),
    "3": (3, 0, 3),
    "4": (4, 2, 0),
    "5": (5, 2, 1),
    "6": (6, 3, 0),
    "7": (7, 3, 1),
    "8": (8, 3, 2),
    "9": (9, 4, 1),
}


@pytest.mark.parametrize("rank", list(PIPS))
@pytest.mark.parametrize("suit", ["C", "D", "H", "S"])
def test_pip_table(rank, suit):
    res = play("base", rank + suit)
    assert stats(res) == PIPS[rank]
    assert res["wasted_techniques"] == 0 and res["legal"]


def test_catalogue_agrees_with_pip_table():
    for c in tosk.catalogue():
        if c["technique"]:
            assert c["cost"] is None and (c["atk"], c["def"]) == (0, 0)
        else:
            assert (c["cost"], c["atk"], c["def"]) == PIPS[c["rank"]]


@pytest.mark.parametrize("code", ["JC", "QD", "KH", "KS"])
def test_lone_technique_is_paid_and_wasted(code):
    res = play("base", code)
    assert stats(res) == (3, 0, 0)
    assert res["wasted_techniques"] == 1 and res["legal"]


def test_empty_play_is_legal():
    res = tosk.play_cards(_rules(), [])
    assert stats(res) == (0, 0, 0) and res["legal"]


# ---------------------------------------------------------------- rulebook examples


def test_example_3c_9d():
    res = play("base", "3C", "9D")
    assert stats(res) == (12, 4, 4) and res["legal"]


def test_example_5c_jc():
    res = play("base", "5C", "JC")
    assert stats(res) == (8, 4, 2) and res["legal"] and res["wasted_techniques"] == 0


def test_example_force_2_2_ruling_t3():
    # the rulebook's "5 ATK" contradicts T2 (a 2 gives DEF): 0 ATK / 5 DEF
    assert stats(play("force", "2C", "2D")) == (4, 0, 5)
    assert stats(play("base", "2C", "2D")) == (4, 0, 4)


def test_example_momentum_2_3_4():
    assert stats(play("momentum", "2C", "3D", "4H")) == (7, 2, 5)
    assert stats(play("base", "2C", "3D", "4H")) == (9, 2, 5)


# ---------------------------------------------------------------- techniques (T4)


def test_technique_of_another_suit_is_wasted_but_paid():
    res = play("base", "5C", "JD")
    assert stats(res) == (8, 2, 1) and res["wasted_techniques"] == 1
    res = play("base", "5C", "JS")  # same colour, other suit: still wasted in base
    assert stats(res) == (8, 2, 1) and res["wasted_techniques"] == 1


@pytest.mark.parametrize(
    "action,tech,boosted",
    [
        ("5C", "JS", True),
        ("5S", "QC", True),
        ("5D", "KH", True),
        ("5H", "JD", True),
        ("5C", "JH", False),
        ("5D", "QS", False),
        ("5C", "JC", True),
    ],
)
def test_advanced_techniques_boost_by_colour(action, tech, boosted):
    res = play("advanced-techniques", action, tech)
    assert stats(res) == ((8, 4, 2) if boosted else (8, 2, 1))
    assert res["wasted_techniques"] == (0 if boosted else 1)


def test_one_technique_per_action():
    res = play("base", "5C", "JC", "QC")
    assert stats(res) == (11, 4, 2) and res["wasted_techniques"] == 1


def test_two_techniques_two_actions():
    res = play("base", "5C", "AC", "JC", "QC")
    # 5♣ 2/1 and A♣ 0/1 both doubled: 4/2 + 0/2
    assert stats(res) == (12, 4, 4) and res["wasted_techniques"] == 0


def test_technique_choice_modes():
    # J♣ may double 9♣ (4/1) or 3♣ (0/3): the player's choice (T4, TD6)
    rules = _rules()
    assert evaluate(rules, ["9C", "3C", "JC"], 0) == (15, 8, 5, 0)  # ATK first
    assert evaluate(rules, ["9C", "3C", "JC"], 1) == (15, 4, 7, 0)  # DEF first
    assert evaluate(rules, ["9C", "3C", "JC"], 2) == (15, 8, 5, 0)  # most ATK+DEF
    res = play("base", "9C", "3C", "JC")  # the calculator takes most ATK+DEF
    assert stats(res) == (15, 8, 5) and not res["legal"]
    # a technique of one suit never boosts another suit's action, whatever the mode
    assert evaluate(rules, ["9D", "3C", "JC"], 0) == (15, 4, 7, 0)


def test_calculator_prefers_most_atk_plus_def():
    # 3♣ (0/3 → +3) beats 4♣ (2/0 → +2) for ATK+DEF; mode 0 would take the 4
    rules = _rules()
    assert evaluate(rules, ["3C", "4C", "JC"], 0) == (10, 4, 3, 0)
    assert evaluate(rules, ["3C", "4C", "JC"], 2) == (10, 2, 6, 0)
    assert stats(play("base", "3C", "4C", "JC")) == (10, 2, 6)


# ---------------------------------------------------------------- Force (T3, T5)


def test_force_applies_after_doubling():
    # 5♣ 5♦ J♣: base 4/2; J♣ doubles 5♣ (+2/+1) → 6/3; Force +1 each stat → 7/4
    assert stats(play("force", "5C", "5D", "JC")) == (13, 7, 4)
    assert stats(play("base", "5C", "5D", "JC")) == (13, 6, 3)


def test_force_after_doubling_two_techniques():
    # 5♣ 5♦ J♣ J♦: both doubled → 8/4; Force +1 → 9/5
    # (doubling a Force bonus would give 10/6)
    assert stats(play("force", "5C", "5D", "JC", "JD")) == (16, 9, 5)


@pytest.mark.parametrize(
    "codes,expected",
    [
        (("2C", "2D", "2H"), (6, 0, 8)),  # 3 × 0/2 = 0/6, +2 DEF only (a 2 gives no ATK)
        (("4C", "4D", "4H"), (12, 8, 0)),  # 3 × 2/0 = 6/0, +2 ATK only
        (("AC", "AD", "AH", "AS"), (4, 0, 7)),  # 4 × 0/1, +3
        (("5C", "5D", "5H"), (15, 8, 5)),  # 6/3, +2 each
        (("5C", "5D", "6C", "6D"), (22, 12, 3)),  # two pairs: 10/2 +1/+1 (5s) +1/0 (6s)
        (("5C", "6D", "7H"), (18, 8, 2)),  # no repeat, no bonus
        (("JC", "JD", "AC"), (7, 0, 2)),  # techniques give no stats: no Force on them
    ],
)
def test_force(codes, expected):
    assert stats(play("force", *codes)) == expected


# ---------------------------------------------------------------- Momentum (T6)


@pytest.mark.parametrize(
    "codes,cost",
    [
        (("AC", "2D", "3H"), 4),  # 6 - 2
        (("JC", "QD", "KH"), 7),  # 9 - 2: techniques count by default
        (("JC", "QD"), 5),
        (("9C", "JD"), 12),  # no 10s: 9 and J are not consecutive
        (("8C", "9D", "JH"), 19),  # 20 - 1: the run 8-9 stops at 9
        (("KC", "AD"), 4),  # no wrap-around
        (("2C", "2D", "3H"), 6),  # a duplicate neither breaks nor extends: 7 - 1
        (("2C", "3D", "3H", "4S"), 10),  # 12 - 2
        (("AC", "2D", "5H", "6S"), 12),  # two runs add up: 14 - 1 - 1
        (("AC", "2D", "3H", "4S"), 7),  # 10 - 3
        (("AC", "3D", "5H"), 9),  # no consecutive ranks
        (("5C",), 5),
    ],
)
def test_momentum_cost(codes, cost):
    res = play("momentum", *codes)
    base = play("base", *codes)
    assert res["cost"] == cost
    assert (res["atk"], res["def"]) == (base["atk"], base["def"])  # Momentum only costs


def test_momentum_without_techniques():
    rules = _rules("momentum", momentum_counts_techniques=False)
    assert tosk.play_cards(rules, [P("JC"), P("QD"), P("KH")])["cost"] == 9
    assert tosk.play_cards(rules, [P("2C"), P("3D"), P("4H")])["cost"] == 7  # actions still do


def test_momentum_cost_never_below_zero():
    rules = _rules("momentum", technique_cost=0)
    assert tosk.play_cards(rules, [P("JC"), P("QD"), P("KH")])["cost"] == 0
    rules = _rules("momentum", technique_cost=1)
    assert tosk.play_cards(rules, [P("JC"), P("QD"), P("KH")])["cost"] == 1  # 3 - 2


def test_force_and_momentum_together():
    # 2 2 3 4: cost 11 - 2 (run 2-3-4) = 9; pips 2/6... 0/2+0/2+0/3+2/0 = 2/7, Force +1 DEF
    assert stats(play("force+momentum", "2C", "2D", "3H", "4S")) == (9, 2, 8)
    # the example, order of names does not matter
    assert stats(play("momentum+force", "2C", "2D")) == (4, 0, 5)


# ---------------------------------------------------------------- stamina (T7)


def test_capacity_limits_legality():
    assert play("base", "9C", "4D")["legal"]  # 13 ≤ 13
    res = play("base", "9C", "5D")
    assert res["cost"] == 14 and not res["legal"]
    assert res["capacity"] == 13


def test_battle_weary_capacity_11():
    res = play("battle-weary", "3C", "9D")
    assert stats(res) == (12, 4, 4) and res["capacity"] == 11 and not res["legal"]
    assert play("battle-weary", "2C", "9D")["legal"]  # 11 ≤ 11


def test_momentum_discount_can_make_a_play_legal():
    codes = ("3C", "4D", "5H", "AS")  # 13 in base; 13 - 2 = 11 with Momentum
    assert not play("battle-weary", *codes)["legal"]
    res = play("battle-weary+momentum", *codes)
    assert res["cost"] == 11 and res["legal"]


def test_more_cards_than_the_hand_is_illegal():
    codes = ("AC", "AD", "AH", "AS", "2C", "2D", "2H")  # cost 10, seven cards
    res = play("base", *codes)
    assert res["cost"] == 10 and not res["legal"]
    assert play("base", *codes[:6])["legal"]
    assert not play("battle-weary", *codes[:6])["legal"]  # hand of 5


# ---------------------------------------------------------------- every technique choice (T4)


def _rule_dict(rules: np.ndarray) -> dict:
    return {k: int(v) for k, v in zip(tosk.RULE_FIELDS, rules, strict=False)}


def _offered(rules, cards, n, forbidden=0) -> dict[int, list[tuple]]:
    """``enumerate_plays`` of ``cards[:n]``: mask → its candidates in order,
    each (ATK, DEF, cost, cards, wasted techniques)."""
    ws, front, cand, c_mask = tosk.workspace(tosk.MAX_HAND)
    hand = np.full(tosk.MAX_HAND, -1, dtype=np.int64)
    hand[:n] = cards[:n]
    k = tosk.enumerate_plays(rules, hand, n, forbidden, ws, front, *cand, c_mask)
    out: dict[int, list[tuple]] = {}
    for i in range(k):
        out.setdefault(int(c_mask[i]), []).append(tuple(int(cand[j, i]) for j in range(5)))
    return out


def test_rulebook_hand_6c_5c_2c_jc_offers_every_choice():
    """ "Techniques (J, Q, K): ... A technique doubles the values of a played
    action of the same suit." (rules/tosk.txt) and T4: "Which action a
    technique boosts is the player's choice."

    6♣ 5♣ 2♣ J♣ costs 16 and gives 5/3; J♣ may double the 6♣ (8/3), the 5♣
    (7/4) or the 2♣ (5/5). None of the three beats another in both ATK and
    DEF, so at capacity 16 a player is offered all three: boosting ATK first
    or DEF first alone never reaches 7/4."""
    rules = _rules(capacity=16)
    codes = ["6C", "5C", "2C", "JC"]
    cards = np.array([P(c) for c in codes], dtype=np.int64)
    offered = _offered(rules, cards, 4)
    assert offered[0b1111] == [(8, 3, 16, 4, 0), (7, 4, 16, 4, 0), (5, 5, 16, 4, 0)]
    assert tosk.technique_choices(rules, cards.tolist()) == [(8, 3), (7, 4), (5, 5)]
    # the calculator takes most ATK+DEF (8/3 and 7/4 tie at 11: more ATK)
    assert stats(play(rules, *codes)) == (16, 8, 3)
    # at the printed capacity the play costs too much to be offered at all
    assert 0b1111 not in _offered(_rules(), cards, 4)
    # 6♣ 5♣ J♣: 8/1 or 7/2; 6♣ J♣: one action, one choice
    assert _offered(rules, cards, 4)[0b1011] == [(8, 1, 14, 3, 0), (7, 2, 14, 3, 0)]
    assert _offered(rules, cards, 4)[0b1001] == [(6, 0, 9, 2, 0)]


def test_calculator_lists_the_technique_choices():
    from typer.testing import CliRunner

    from balance.cli import app

    res = CliRunner().invoke(app, ["tosk", "play", "6C", "5C", "2C", "JC"])
    assert res.exit_code == 0, res.output
    assert (
        "technique choices (none better in both): 8 ATK / 3 DEF, 7 ATK / 4 DEF, 5 ATK / 5 DEF"
    ) in res.output
    res = CliRunner().invoke(app, ["tosk", "play", "5C", "JC"])  # one choice: no such line
    assert res.exit_code == 0 and "choices" not in res.output


def test_every_undominated_assignment_with_two_techniques():
    # 9♣ 8♣ 3♣ J♣ Q♣ (cost 26 at capacity 30): pairs 9+8 → 7/3, 9+3 → 4/4,
    # 8+3 → 3/5 added to 7/6: 14/9, 11/10, 10/11 (all undominated)
    rules = _rules(capacity=30)
    cards = np.array([P(c) for c in ("9C", "8C", "3C", "JC", "QC")], dtype=np.int64)
    assert [c[:2] for c in _offered(rules, cards, 5)[0b11111]] == [(14, 9), (11, 10), (10, 11)]
    # two suits, one technique each: J♣ on 9♣ (+4/1) or 3♣ (+0/3), Q♦ on 6♦
    # (+3/0) or A♦ (+0/1), added to 7/5: four choices, none beaten in both
    cards = np.array([P(c) for c in ("9C", "3C", "JC", "6D", "AD", "QD")], dtype=np.int64)
    assert [c[:2] for c in _offered(rules, cards, 6)[0b111111]] == [
        (14, 6),
        (11, 7),
        (10, 8),
        (7, 9),
    ]


def _check_offered(rules, cards, n, forbidden=0) -> int:
    """The candidates of ``enumerate_plays`` against the brute-force oracle;
    returns the largest number of choices one play had."""
    rd = _rule_dict(rules)
    hand = [int(c) for c in cards[:n]]
    expected = tosk_helpers.legal_plays(rd, hand, forbidden)
    offered = _offered(rules, cards, n, forbidden)
    ctx = (rd, [tosk.card_code(c) for c in hand], forbidden)
    assert offered.keys() == expected.keys(), ctx
    most = 0
    for mask, cands in offered.items():
        ref = expected[mask]
        points = [c[:2] for c in cands]
        assert len(set(points)) == len(points), (ctx, mask)  # one candidate per outcome
        assert set(points) == ref["front"], (ctx, mask, points, ref["front"])
        # ATK-richest first: with two choices, the ATK-first then the DEF-first one
        assert points == sorted(points, reverse=True), (ctx, mask)
        for atk, dfn, cost, ncards, wasted in cands:
            assert (cost, ncards) == (ref["cost"], ref["cards"]), (ctx, mask)
            assert wasted == ref["outcomes"][(atk, dfn)], (ctx, mask)
        most = max(most, len(cands))
    assert 0 in offered  # playing nothing is always legal (TD4)
    return most


def _random_hands(count: int, seed: int) -> list[tuple[np.ndarray, int]]:
    """Hands of 0..8 cards: half uniform, half from few ranks (repeats, runs,
    several techniques of one suit); a quarter with forbidden ranks."""
    g = np.random.default_rng(seed)
    out = []
    for h in range(count):
        n = int(g.integers(0, tosk.MAX_HAND + 1))
        if h % 2:
            ranks = g.choice(12, size=int(g.integers(2, 5)), replace=False)
            pool = np.array([4 * r + s for r in ranks for s in range(4)])
        else:
            pool = np.arange(48)
        n = min(n, len(pool))
        cards = np.full(tosk.MAX_HAND, -1, dtype=np.int64)
        cards[:n] = g.choice(pool, size=n, replace=False)
        forbidden = int(g.integers(1, 1 << 12)) & int(g.integers(0, 1 << 12)) if h % 4 == 3 else 0
        out.append((cards, n, forbidden))
    return out


EXTRA_RULES = {
    "momentum-no-tech": dict(momentum=True, momentum_counts_techniques=False),
    "cheap-tech-all": dict(
        momentum=True, force=True, technique_by_colour=True, technique_cost=0, capacity=30
    ),
    "tight": dict(force=True, momentum=True, capacity=5, technique_cost=4),
    "capacity-16": dict(capacity=16),
}


def _rule_sets():
    out = [(v, None) for v in all_variant_combinations("tosk")]
    return out + [(name, over) for name, over in EXTRA_RULES.items()]


@pytest.fixture(scope="module")
def hands():
    return _random_hands(300, seed=12)


@pytest.mark.parametrize(
    "name,over",
    [  # base in the fast tier, every other rule set in the full run
        pytest.param(n, o, marks=() if n == "base" else pytest.mark.slow, id=n)
        for n, o in _rule_sets()
    ],
)
def test_enumerate_plays_offers_the_pareto_front(name, over, hands):
    """Every legal subset, once per undominated technique assignment (T4), with
    the cost, cards and wasted techniques of the brute-force oracle."""
    rules = _rules(name) if over is None else _rules("base", **over)
    most = max(_check_offered(rules, cards, n, forbidden) for cards, n, forbidden in hands)
    if name in ("base", "force+momentum"):
        assert most == 2  # the hands reach plays with two choices; never three here
    if name == "cheap-tech-all":
        assert most >= 3


def _random_rules(g: np.random.Generator) -> np.ndarray:
    """A legal rules vector: every key within ``RULE_LIMITS`` (small values
    more often, where they bind), every flag either way."""
    rules = {}
    for key, default in tosk.DEFAULT_RULES.items():
        if isinstance(default, bool):
            rules[key] = bool(g.integers(0, 2))
        else:
            lo, hi = tosk.RULE_LIMITS[key]
            small = min(hi, lo + 2 * max(int(default), 1))
            rules[key] = int(g.integers(lo, (small if g.random() < 0.8 else hi) + 1))
    return tosk.encode_rules(rules)


def test_offered_plays_are_the_pareto_front_under_random_rules():
    """Random hands under random legal rule settings (any capacity, hand size,
    technique cost, Force, Momentum, Advanced Techniques): the (ATK, DEF)
    outcomes offered for each play are exactly the undominated ones among all
    technique assignments, and the rules calculator gives the one with the most
    ATK+DEF."""
    g = np.random.default_rng(2013)
    most = 0
    for _ in range(250):
        rules = _random_rules(g)
        n = int(g.integers(0, rules[tosk.R_MAX_HAND] + 1))
        pool = (
            np.arange(48)
            if g.random() < 0.5
            else np.array([4 * r + s for r in g.choice(12, 3, replace=False) for s in range(4)])
        )
        cards = np.full(tosk.MAX_HAND, -1, dtype=np.int64)
        cards[:n] = g.choice(pool, size=n, replace=False)
        forbidden = int(g.integers(0, 1 << 12)) if g.random() < 0.2 else 0
        most = max(most, _check_offered(rules, cards, n, forbidden))
        hand = [int(c) for c in cards[:n]]
        res = tosk.play_cards(rules, hand)
        ref = tosk_helpers.play(_rule_dict(rules), hand)
        assert res["cost"] == ref["cost"]
        assert set(res["choices"]) == ref["front"] and (res["atk"], res["def"]) in ref["front"]
        assert res["atk"] + res["def"] == max(a + d for a, d in ref["front"])
        assert res["wasted_techniques"] == ref["outcomes"][(res["atk"], res["def"])]
    assert most >= 3  # some play had three or more choices
