"""The four-suits RPG: every rulebook statement and ruling (S1–S5, SD1–SD11 in
``docs/rulings.md``) checked on the engine's rule functions and on hand-built
struggle states played through ``sims.suits._turn``.

Expected values are worked out by hand from ``rules/four-suits-rpg.txt`` and
the rulings, or by an independent enumeration in pure Python (the exact
oracle ``sims.suits_oracle`` against every 2- and 3-card hand), never read
back from the engine.
"""

from __future__ import annotations

import itertools
import json
import math
import tomllib
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import norm
from statsmodels.stats.proportion import proportion_confint

from balance.config import load_strategy, resolve_variant
from kernels import rng
from sims import suits as S
from sims.suits import (
    CLUBS,
    DIAMONDS,
    HEARTS,
    MODE_DIFFICULT,
    MODE_EITHER,
    MODE_IN_SUIT,
    SPADES,
    TASK_DIFFICULT,
    TASK_FAIL,
    TASK_IN_SUIT,
)
from sims.suits_oracle import task_odds
from tests import ROOT

C = S.card_id
JK, JK2 = 52, 53  # the two Jokers
NAMES = [
    f"{a}-{d}-{g}" for a in ("high", "low") for d in ("defend", "absorb") for g in ("hand", "deck")
] + ["random"]


def rules_of(spec: str = "base", **over) -> np.ndarray:
    rs = resolve_variant("suits", spec)
    if not over:
        return rs.vector()
    return S.encode_rules({**rs.rules, **over})


BASE = rules_of()
STRAT = {n: load_strategy("suits", n).vector() for n in NAMES}


def ids(cards) -> np.ndarray:
    return np.array(
        [c if isinstance(c, (int, np.integer)) else C(c) for c in cards], dtype=np.int64
    )


def task(cards, suit, target, mode=MODE_EITHER, jv=14):
    """(kind, names of the cards played) for a Task from ``cards``."""
    h = ids(cards)
    out = np.full(2, 7, dtype=np.int64)
    kind = S.task_play(h, len(h), suit, target, mode, jv, out)
    return int(kind), sorted(S.card_name(h[i]) for i in out if i >= 0)


def fail(cards, n, jv=14):
    h = ids(cards)
    out = np.full(2, 7, dtype=np.int64)
    S.fail_play(h, len(h), n, jv, out)
    return [S.card_name(h[i]) for i in out if i >= 0]


# ---------------------------------------------------------------- hand-built struggles
class Table:
    """Two characters with chosen hands and decks (deck[0] is the top card)."""

    def __init__(self, hand0, deck0, hand1, deck1, seed=11):
        (
            self.rngs,
            self.decks,
            self.hands,
            self.ints,
            self.seen,
            self.feats,
            self.ci,
            self.cj,
            self.sc,
            self.odds,
        ) = S._work()
        for s, (h, d) in enumerate(((hand0, deck0), (hand1, deck1))):
            d, h = ids(d), ids(h)
            self.decks[s, : len(d)] = d
            self.hands[s, : len(h)] = h
            self.ints[s, S.I_DTOT] = len(d)
            self.ints[s, S.I_DPOS] = 0
            self.ints[s, S.I_HN] = len(h)
            rng.seed_state(self.rngs[2 + s], np.uint64(seed), 0, rng.PURPOSE_SEAT0 + s)

    def turn(self, rules, a, strat_a, strat_d):
        """Seat ``a`` attacks; returns (acted, log row, result row)."""
        log = np.full(S.LOG_WIDTH, -99, dtype=np.int64)
        res = np.zeros(S.N_RESULT, dtype=np.int64)
        acted = S._turn(
            rules,
            a,
            STRAT[strat_a],
            STRAT[strat_d],
            self.rngs[2 + a],
            self.rngs[3 - a],
            self.decks,
            self.hands,
            self.ints,
            self.seen,
            self.feats,
            self.ci,
            self.cj,
            self.odds,
            log,
            res,
        )
        return int(acted), log, res

    def hand(self, s) -> list[str]:
        return [S.card_name(c) for c in self.hands[s, : self.ints[s, S.I_HN]]]

    def deck(self, s) -> list[str]:
        return [
            S.card_name(c) for c in self.decks[s, self.ints[s, S.I_DPOS] : self.ints[s, S.I_DTOT]]
        ]

    def left(self, s) -> int:
        return int(self.ints[s, S.I_DTOT] - self.ints[s, S.I_DPOS] + self.ints[s, S.I_HN])


def names(*cards) -> list[str]:
    return [S.card_name(C(c)) if isinstance(c, str) else S.card_name(c) for c in cards]


FILLER = [
    "2S",
    "3S",
    "4S",
    "5S",
    "6S",
    "7S",
    "8S",
    "9S",
    "10S",
    "2D",
    "3D",
    "4D",
    "5D",
    "6D",
    "7D",
    "8D",
    "9D",
    "10D",
    "2C",
    "3C",
]


# ------------------------------------------------------------------------------ S1
def test_s1_deck_of_54():
    cat = S.catalogue()
    assert len(cat) == 54 and [c["id"] for c in cat] == list(range(54))
    naturals = [c for c in cat if c["suit"] != "wild"]
    jokers = [c for c in cat if c["suit"] == "wild"]
    assert len(naturals) == 52 and len(jokers) == 2
    assert all(c["value"] == 14 and c["label"] == "Joker" for c in jokers)
    for suit in S.SUITS:
        assert sorted(c["value"] for c in naturals if c["suit"] == suit) == list(range(2, 15))
    assert [c["purpose"] for c in cat[::13][:4]] == [
        "finesse",
        "intellect",
        "brute force",
        "fortitude",
    ]


def test_s1_card_ids_values_and_suits():
    for suit, letter in enumerate("SDCH"):
        for v, rank in zip(
            range(2, 15), [*map(str, range(2, 11)), "J", "Q", "K", "A"], strict=False
        ):
            c = C(rank + letter)
            assert c == suit * 13 + v - 2
            assert S.card_value(c, 14) == v and S.card_suit(c) == suit
            assert C(S.card_name(c)) == c and C((rank + letter).lower()) == c
    for j in (JK, JK2):
        assert S.card_value(j, 14) == 14 and S.card_suit(j) == -1
        assert S.card_value(j, 9) == 9  # a Joker's value is the rule's
    assert C("joker") == JK and S.card_name(JK2) == "Joker"
    assert (S.SPADES, S.DIAMONDS, S.CLUBS, S.HEARTS) == (0, 1, 2, 3)


@pytest.mark.parametrize("bad", ["1S", "11S", "QX", "Z", "10", "AJ", "jokers"])
def test_s1_bad_card_names_are_refused(bad):
    with pytest.raises(ValueError, match="unknown card"):
        C(bad)


@pytest.mark.parametrize("bad", ["", "  "])
def test_s1_empty_card_name_is_refused_cleanly(bad):
    with pytest.raises(ValueError, match="unknown card"):
        C(bad)


def test_rules_vectors_of_base_and_variants():
    assert list(BASE) == list(S.encode_rules(S.DEFAULT_RULES))
    assert list(BASE) == [5, 2, 14, 1, 0, 2, 3, 0, 0, 0, 0, 200, 1, 0]
    diff = {
        "ties-to-attacker": {S.R_TIES_ATTACKER: 1, S.R_MIN_DAMAGE: 1},
        "to-the-death": {S.R_END: 1},
        "refill-after-damage": {S.R_REFILL_DAMAGE: 1},
        "suited-struggles": {S.R_SUITS: 1},
    }
    for v, fields in diff.items():
        vec = rules_of(v)
        changed = {i: int(vec[i]) for i in range(len(vec)) if vec[i] != BASE[i]}
        assert changed == fields, v
    combo = rules_of("to-the-death+suited-struggles")
    assert combo[S.R_END] == 1 and combo[S.R_SUITS] == 1


# ------------------------------------------------------------------- S2 / SD9: Tasks
def test_s2_in_suit_lowest_natural_that_meets():
    hand = ["5C", "QC", "9C", "7C", "2S"]
    assert task(hand, CLUBS, 7) == (TASK_IN_SUIT, ["7♣"])  # meet or beat: a tie succeeds
    assert task(hand, CLUBS, 8) == (TASK_IN_SUIT, ["9♣"])
    assert task(hand, CLUBS, 12) == (TASK_IN_SUIT, ["Q♣"])
    assert task(hand, CLUBS, 13) == (TASK_FAIL, [])
    assert task(hand, SPADES, 2) == (TASK_IN_SUIT, ["2♠"])
    assert task(hand, SPADES, 3, MODE_IN_SUIT)[0] == TASK_FAIL  # 2♠ is below 3 ...
    assert task(hand, SPADES, 3) == (TASK_DIFFICULT, ["5♣", "7♣"])  # ... Clubs pair instead
    assert task(hand, DIAMONDS, 13)[0] == TASK_FAIL


def test_sd9_joker_in_suit_only_when_no_natural_meets():
    hand = ["JOKER", "9C", "3S", "4D", "AH"]
    assert task(hand, CLUBS, 9) == (TASK_IN_SUIT, ["9♣"])
    assert task(hand, CLUBS, 10) == (TASK_IN_SUIT, ["Joker"])
    assert task(hand, CLUBS, 14) == (TASK_IN_SUIT, ["Joker"])
    assert task(hand, HEARTS, 14) == (TASK_IN_SUIT, ["A♥"])  # the natural Ace before the Joker
    # a Joker of value 10 cannot meet 12: neither in suit nor in a pair
    assert task(hand, CLUBS, 12, jv=10)[0] == TASK_FAIL
    assert task(["JOKER", "QS", "2C", "3D", "4H"], CLUBS, 12, jv=10)[0] == TASK_FAIL
    assert task(["JOKER", "QS", "2C", "3D", "4H"], CLUBS, 12, jv=12) == (TASK_IN_SUIT, ["Joker"])


def test_s2_difficult_pair_of_one_other_suit():
    hand = ["9S", "JS", "3C", "4H", "5D"]
    assert task(hand, CLUBS, 9) == (TASK_DIFFICULT, ["9♠", "J♠"])
    assert task(hand, CLUBS, 10)[0] == TASK_FAIL  # 9♠ is below the target: both must meet it
    assert task(hand, CLUBS, 9, MODE_IN_SUIT)[0] == TASK_FAIL  # in-suit mode never pairs
    # a pair of the task's own suit is not Difficult (it is in suit: one card is enough)
    own = ["9C", "JC", "2S", "3D", "4H"]
    assert task(own, CLUBS, 9, MODE_DIFFICULT)[0] == TASK_FAIL
    assert task(own, CLUBS, 9) == (TASK_IN_SUIT, ["9♣"])
    # two cards of different other suits fail
    assert task(["9S", "JD", "2C", "3H", "4H"], CLUBS, 9)[0] == TASK_FAIL
    assert task(["9S", "JD", "QH", "KC"], CLUBS, 9, MODE_DIFFICULT)[0] == TASK_FAIL


def test_s2_joker_pairs_and_two_jokers():
    # a Joker pairs with any card of another suit
    assert task(["JOKER", "10H", "2C", "3S", "4D"], CLUBS, 10, MODE_DIFFICULT) == (
        TASK_DIFFICULT,
        ["10♥", "Joker"],
    )
    # ... but not with a card of the task's suit (that pair would be in suit)
    assert task(["JOKER", "10C", "2S", "3D", "4H"], CLUBS, 10, MODE_DIFFICULT)[0] == TASK_FAIL
    # two Jokers form a pair
    assert task([JK, JK2, "2S", "3D", "4H"], CLUBS, 14, MODE_DIFFICULT) == (
        TASK_DIFFICULT,
        ["Joker", "Joker"],
    )
    # fewest Jokers: a natural with one Joker beats two Jokers
    kind, played = task([JK, JK2, "AS", "2D", "3H"], CLUBS, 14, MODE_DIFFICULT)
    assert kind == TASK_DIFFICULT and played == ["A♠", "Joker"]


def test_sd9_cheapest_pair():
    # the lowest two of a suit
    assert task(["KS", "9S", "QS", "2C", "3H"], CLUBS, 9) == (TASK_DIFFICULT, ["9♠", "Q♠"])
    # the lowest pair over the other suits
    assert task(["10S", "QS", "9D", "JD", "KH"], CLUBS, 9) == (TASK_DIFFICULT, ["9♦", "J♦"])
    # no Joker when a natural pair will do, even a higher one
    assert task(["JOKER", "9S", "AD", "KD", "2C"], CLUBS, 9, MODE_DIFFICULT) == (
        TASK_DIFFICULT,
        ["A♦", "K♦"],
    )


def test_modes_in_suit_and_difficult_only():
    hand = ["KC", "QS", "JS", "2D", "3H"]
    assert task(hand, CLUBS, 9, MODE_IN_SUIT) == (TASK_IN_SUIT, ["K♣"])
    assert task(hand, CLUBS, 9, MODE_DIFFICULT) == (TASK_DIFFICULT, ["J♠", "Q♠"])
    assert task(hand, CLUBS, 9, MODE_EITHER) == (TASK_IN_SUIT, ["K♣"])  # one card before two
    assert task(["KC", "2S", "3D", "4H", "5S"], CLUBS, 9, MODE_DIFFICULT)[0] == TASK_FAIL
    assert task(["JOKER", "2S"], CLUBS, 9, MODE_DIFFICULT)[0] == TASK_FAIL  # a lone Joker
    assert task(["JOKER", "9S"], CLUBS, 9, MODE_DIFFICULT) == (TASK_DIFFICULT, ["9♠", "Joker"])
    assert task(["9S", "JS"], CLUBS, 9, MODE_IN_SUIT)[0] == TASK_FAIL


def test_sd1_failed_task_plays_the_lowest_card_joker_last():
    assert fail(["JOKER", "5D", "3S", "3H", "AS"], 1) == ["3♠"]
    assert fail(["JOKER", "5D", "3S", "3H", "AS"], 2) == ["3♠", "3♥"]
    assert fail(["JOKER", "AS", "KH"], 2) == ["K♥", "A♠"]
    assert fail(["JOKER", "AS"], 1) == ["A♠"]  # an Ace before a Joker
    assert fail(["JOKER"], 1) == ["Joker"]
    assert fail(["JOKER"], 2) == ["Joker"]  # no more cards than the hand holds
    assert fail([JK, JK2], 2) == ["Joker", "Joker"]


def _ref_task(hand, suit, target, mode, jv):
    """Pure-Python S2/SD9: (kind, Jokers used, values played) of the best play."""
    nat = [(c // 13, c % 13 + 2) for c in hand if c < 52]
    jok = sum(c >= 52 for c in hand) if jv >= target else 0
    if mode != MODE_DIFFICULT:
        ins = sorted(v for s, v in nat if s == suit and v >= target)
        if ins:
            return TASK_IN_SUIT, 0, (ins[0],)
        if jok:
            return TASK_IN_SUIT, 1, (jv,)
        if mode == MODE_IN_SUIT:
            return TASK_FAIL, 0, ()
    options = []
    for s in range(4):
        vs = sorted(v for ss, v in nat if ss == s and v >= target)
        if s == suit:
            continue
        if len(vs) >= 2:
            options.append((0, vs[0] + vs[1]))
        elif len(vs) == 1 and jok >= 1:
            options.append((1, vs[0] + jv))
    if jok >= 2:
        options.append((2, 2 * jv))
    if options:
        j, total = min(options)
        return TASK_DIFFICULT, j, total
    return TASK_FAIL, 0, ()


def test_task_play_agrees_with_reference_on_random_hands():
    """Random hands of 2..7 cards, every target, suit and mode: the engine
    makes a legal play of the reference's kind, Joker count and total value,
    and a failure's card is the lowest (a Joker last)."""
    gen = np.random.default_rng(20240611)
    out = np.zeros(2, dtype=np.int64)
    checked = {TASK_FAIL: 0, TASK_IN_SUIT: 0, TASK_DIFFICULT: 0}
    for _ in range(700):
        hn = int(gen.integers(2, 8))
        hand = gen.choice(54, size=hn, replace=False).astype(np.int64)
        suit = int(gen.integers(0, 4))
        jv = 14 if gen.random() < 0.8 else int(gen.integers(2, 14))
        for target in range(2, 15):
            for mode in (MODE_IN_SUIT, MODE_DIFFICULT, MODE_EITHER):
                kind = S.task_play(hand, hn, suit, target, mode, jv, out)
                ref = _ref_task(list(hand), suit, target, mode, jv)
                played = [int(hand[i]) for i in out if i >= 0]
                assert kind == ref[0], (hand, suit, target, mode)
                checked[kind] += 1
                jokers = sum(c >= 52 for c in played)
                vals = [S.card_value(c, jv) for c in played]
                assert all(v >= target for v in vals)
                if kind == TASK_IN_SUIT:
                    assert len(played) == 1 and (jokers or played[0] // 13 == suit)
                    assert (jokers, tuple(vals)) == ref[1:]
                elif kind == TASK_DIFFICULT:
                    assert len(played) == 2 and out[0] != out[1]
                    su = {c // 13 for c in played if c < 52}
                    assert len(su) <= 1 and suit not in su
                    assert (jokers, sum(vals)) == ref[1:]
                else:
                    assert played == []
                    S.fail_play(hand, hn, 1, jv, out)
                    low = int(hand[out[0]])
                    key = [(c >= 52, S.card_value(c, jv)) for c in hand]  # a Joker last
                    assert (low >= 52, S.card_value(low, jv)) == min(key)
    assert min(checked.values()) > 1000


# --------------------------------------------------- the rulebook's example Tasks (S2)
def test_rulebook_example_tasks_get_harder_with_the_target():
    with open(ROOT / "configs" / "suits" / "tasks.toml", "rb") as fh:
        examples = tomllib.load(fh)
    ranks = [*map(str, range(2, 11)), "Jack", "Queen", "King", "Ace"]
    assert set(examples) == {"clubs", "spades", "diamonds", "hearts"}
    for suit, table in examples.items():
        assert list(table) == ranks, suit  # one example per target, 2 .. Ace
    assert examples["clubs"]["2"].startswith("Hurl a heavy object")
    assert examples["clubs"]["Ace"] == "Topple a stone tower."
    odds = {t: task_odds(t) for t in range(2, 15)}
    for t in range(2, 14):
        assert odds[t]["in_suit"] > odds[t + 1]["in_suit"]
        assert odds[t]["either"] >= odds[t + 1]["either"]
        assert odds[t]["difficult"] >= odds[t + 1]["difficult"]
    assert odds[2]["either"] == 1  # pigeonhole: 5 cards, 4 suits
    assert odds[3]["either"] < 1
    assert odds[14]["difficult_only"] == 0  # a pair at 14 needs a Joker, played in suit
    assert odds[13]["difficult_only"] > 0
    # only the task suit's Ace and the two Jokers meet 14
    assert odds[14]["in_suit"] == 1 - Fraction(51 * 50 * 49 * 48 * 47, 54 * 53 * 52 * 51 * 50)


# ---------------------------------------------- the exact oracle by brute force (S2)
def _enumerate(hand_size, target, jokers=2, jv=14, failed=1, suit=CLUBS):
    out = np.zeros(2, dtype=np.int64)
    cnt = {"in_suit": 0, "difficult": 0, "either": 0, "difficult_only": 0, "cards": 0, "joker": 0}
    n = 0
    for combo in itertools.combinations(range(52 + jokers), hand_size):
        h = np.array(combo, dtype=np.int64)
        a = S.task_play(h, hand_size, suit, target, MODE_IN_SUIT, jv, out) == TASK_IN_SUIT
        d = S.task_play(h, hand_size, suit, target, MODE_DIFFICULT, jv, out) == TASK_DIFFICULT
        kind = S.task_play(h, hand_size, suit, target, MODE_EITHER, jv, out)
        if kind == TASK_FAIL:
            S.fail_play(h, hand_size, failed, jv, out)
        n += 1
        cnt["in_suit"] += a
        cnt["difficult"] += d
        cnt["either"] += kind != TASK_FAIL
        cnt["difficult_only"] += d and not a
        cnt["cards"] += int((out >= 0).sum())
        cnt["joker"] += combo[-1] >= 52
        assert (kind == TASK_IN_SUIT) == a and (kind != TASK_FAIL) == (a or d)
    return {k: Fraction(v, n) for k, v in cnt.items()}


@pytest.mark.parametrize("target", range(2, 15))
def test_oracle_equals_enumeration_of_every_2_and_3_card_hand(target):
    assert _enumerate(2, target) == task_odds(target, hand_size=2)
    assert _enumerate(3, target, suit=target % 4) == task_odds(target, hand_size=3)


@pytest.mark.parametrize(
    "jokers,jv,failed,target",
    [
        (0, 14, 1, 9),
        (1, 14, 2, 12),
        (3, 14, 1, 14),
        (4, 14, 2, 7),
        (2, 10, 1, 11),
        (2, 10, 2, 10),
        (2, 6, 1, 4),
    ],
)
def test_oracle_equals_enumeration_with_other_decks(jokers, jv, failed, target):
    expect = task_odds(target, hand_size=2, jokers=jokers, joker_value=jv, failed_task_cards=failed)
    assert _enumerate(2, target, jokers, jv, failed, suit=HEARTS) == expect


# ------------------------------------------------------------------------------ S3
def test_s3_refill_and_disabled_when_deck_empty_after_drawing():
    deck = np.zeros(S.MAX_DECK, dtype=np.int64)
    deck[:7] = ids(["2S", "3S", "4S", "5S", "6S", "7S", "8S"])
    hand = np.zeros(S.MAX_HAND, dtype=np.int64)
    st = np.zeros(S.N_INTS, dtype=np.int64)
    st[S.I_DTOT] = 7
    assert not S._refill(deck, st, hand, 5)
    assert st[S.I_HN] == 5 and st[S.I_DPOS] == 5 and names(*hand[:5]) == names(*deck[:5])
    st[S.I_HN] = 4  # one card played
    assert not S._refill(deck, st, hand, 5) and st[S.I_DPOS] == 6
    st[S.I_HN] = 3  # two played: the deck's last card is drawn
    assert S._refill(deck, st, hand, 5)
    assert st[S.I_HN] == 4 and st[S.I_DPOS] == 7


def _damage(hand, deck, d, strat="high-defend-hand"):
    st = np.zeros(S.N_INTS, dtype=np.int64)
    dk = np.zeros(S.MAX_DECK, dtype=np.int64)
    hd = np.zeros(S.MAX_HAND, dtype=np.int64)
    dk[: len(deck)] = ids(deck)
    hd[: len(hand)] = ids(hand)
    st[S.I_DTOT], st[S.I_HN] = len(deck), len(hand)
    seen = np.zeros(16, dtype=np.int64)
    noise = np.zeros(4, dtype=np.uint64)
    rng.seed_state(noise, np.uint64(3), 0, rng.PURPOSE_SEAT0)
    fh, fd, dead = S._take_damage(BASE, STRAT[strat], noise, dk, hd, st, seen, d)
    left_hand = [S.card_name(c) for c in hd[: st[S.I_HN]]]
    return (int(fh), int(fd), int(dead)), left_hand, int(st[S.I_DPOS]), seen


def test_s3_damage_from_hand_discards_the_lowest_ace_before_joker():
    (fh, fd, dead), hand, dpos, seen = _damage(["JOKER", "AS", "5D", "9C", "5H"], ["2S"] * 3, 3)
    assert (fh, fd, dead) == (3, 0, 0) and dpos == 0
    assert sorted(hand) == ["A♠", "Joker"]
    assert seen[5] == 2 and seen[9] == 1 and seen.sum() == 3  # discards are face up (SD8)
    (fh, fd, dead), hand, _, _ = _damage(["JOKER", "AS"], [], 1)
    assert (fh, fd, dead) == (1, 0, 0) and hand == ["Joker"]


def test_s3_deck_policy_takes_the_top_of_the_deck():
    (fh, fd, dead), hand, dpos, seen = _damage(
        ["2S", "3S"], ["KH", "QH", "JH"], 2, "high-defend-deck"
    )
    assert (fh, fd, dead) == (0, 2, 0) and hand == ["2♠", "3♠"] and dpos == 2
    assert seen[13] == 1 and seen[12] == 1


def test_s3_preferred_source_empty_uses_the_other():
    # the deck policy with an empty deck takes from the hand ...
    r, hand, _, _ = _damage(["2S", "3S", "9D"], [], 2, "high-absorb-deck")
    assert r == (2, 0, 0) and hand == ["9♦"]
    # ... and the hand policy with an empty hand from the deck
    r, _, dpos, _ = _damage([], ["KH", "QH", "JH"], 2, "high-absorb-hand")
    assert r == (0, 2, 0) and dpos == 2
    # the hand policy runs out of hand, then takes the deck
    r, hand, dpos, _ = _damage(["2S", "3S"], ["KH", "QH", "JH"], 4, "high-absorb-hand")
    assert r == (2, 2, 0) and hand == [] and dpos == 2


def test_s3_dead_when_forced_to_discard_with_nothing_left():
    assert _damage([], [], 1)[0] == (0, 0, 1)
    assert _damage(["2S"], ["3S"], 3)[0] == (1, 1, 1)
    assert _damage(["2S", "3S"], ["4S"], 5, "high-absorb-deck")[0] == (2, 1, 1)


@pytest.mark.parametrize("strat", ["high-absorb-hand", "high-absorb-deck"])
def test_s3_damage_equal_to_the_cards_left_kills(strat):
    """Rulebook: "If a player is forced to discard every card (deck and hand
    both) then they're dead." Damage equal to the cards left (deck + hand)
    discards every card: dead, whichever source the damage comes from; one
    point less leaves it alive with one card."""
    assert _damage(["2S"], ["3S"], 2, strat)[0] == (1, 1, 1)
    (fh, fd, dead), hand, dpos, _ = _damage(["2S", "3S", "9D"], ["4S", "5S"], 5, strat)
    assert (fh, fd, dead) == (3, 2, 1) and hand == [] and dpos == 2
    (fh, fd, dead), hand, dpos, _ = _damage(["2S", "3S", "9D"], ["4S", "5S"], 4, strat)
    assert dead == 0 and fh + fd == 4 and len(hand) + 2 - dpos == 1
    assert _damage(["2S", "3S"], [], 2, strat)[0] == (2, 0, 1)  # a hand alone
    assert _damage([], ["4S", "5S"], 2, strat)[0] == (0, 2, 1)  # a deck alone
    assert _damage(["2S"], ["3S"], 0, strat)[0] == (0, 0, 0)  # no damage, no discard


def test_s3_exact_damage_kills_in_a_struggle_and_ends_it_as_a_death():
    """The struggle through ``_turn``: an absorber with 3 cards in hand and 2
    in its deck takes a 5 (from the deck first, then the hand): it has
    discarded every card, so it is dead at once (S3) and the attacker wins by
    a death (SD5), under both struggle ends; before, it lived on with no card."""
    for variant in ("base", "to-the-death"):
        rv = rules_of(variant)
        t = Table(["5C", "2D", "3D", "4D", "2H"], FILLER, ["6H", "7H", "8H"], ["2S", "3S"])
        acted, log, _ = t.turn(rv, 0, "high-absorb-hand", "high-absorb-deck")
        assert acted and log[S.L_CVA] == 5 and log[S.L_DAMAGE] == 5
        assert (log[S.L_FROM_DECK], log[S.L_FROM_HAND]) == (2, 3) and t.left(1) == 0
        assert log[S.L_DEAD_D] == 1 and t.ints[1, S.I_DEAD] == 1
        assert S._over(rv, t.ints) == 0
        # a 4 leaves it one card: alive, and the struggle goes on
        t = Table(["4C", "2D", "3D", "2C", "2H"], FILLER, ["6H", "7H", "8H"], ["2S", "3S"])
        _, log, _ = t.turn(rv, 0, "high-absorb-hand", "high-absorb-deck")
        assert log[S.L_DAMAGE] == 4 and t.left(1) == 1 and t.ints[1, S.I_DEAD] == 0
        assert S._over(rv, t.ints) == -2


def test_s3_sd8_deck_emptied_by_damage_disables_at_the_next_draw():
    t = Table(["AS", "2D", "3D", "4D", "5D"], FILLER, ["6H", "7H", "8H", "9H", "10H"], ["2H", "3H"])
    acted, log, _ = t.turn(BASE, 0, "high-absorb-hand", "high-absorb-deck")
    assert acted and log[S.L_CVA] == 14 and log[S.L_CVD] == 0 and log[S.L_DAMAGE] == 14
    # two from the deck, then 5 from the hand, then nothing left: dead
    assert (log[S.L_FROM_DECK], log[S.L_FROM_HAND], log[S.L_DEAD_D]) == (2, 5, 1)
    t = Table(["4C", "2D", "3D", "4D", "5D"], FILLER, ["6H", "7H", "8H", "9H", "10H"], ["2H", "3H"])
    acted, log, _ = t.turn(BASE, 0, "high-absorb-hand", "high-absorb-deck")
    assert log[S.L_DAMAGE] == 5 and (log[S.L_FROM_DECK], log[S.L_FROM_HAND]) == (2, 3)
    assert log[S.L_DIS_D] == 0 and log[S.L_DEAD_D] == 0 and t.ints[1, S.I_DIS] == 0
    assert S._over(BASE, t.ints) == -2  # the struggle goes on
    # its next play draws from the empty deck: now it is disabled
    acted, log, _ = t.turn(BASE, 1, "high-absorb-deck", "high-absorb-hand")
    assert acted and log[S.L_DIS_A] == 1 and t.ints[1, S.I_DIS] == 1
    assert S._over(BASE, t.ints) == 0


# ------------------------------------------------------------------------------ S4
def test_s4_high_attacks_with_its_highest_card():
    t = Table(
        ["3S", "KD", "7C", "2H", "9S"], ["4S", "5S", "6S"], ["2C", "3C", "4C", "5C", "6C"], FILLER
    )
    acted, log, res = t.turn(BASE, 0, "high-defend-hand", "high-absorb-deck")
    assert acted == 1 and log[S.L_A1] == C("KD") and log[S.L_A2] == -1
    assert log[S.L_CVA] == 13
    # absorb: no answer, so the attack meets 0 and deals its whole value (from the deck)
    assert log[S.L_D1] == -1 and log[S.L_CVD] == 0 and log[S.L_DAMAGE] == 13
    assert (log[S.L_FROM_HAND], log[S.L_FROM_DECK]) == (0, 13)
    assert t.hand(1) == names("2C", "3C", "4C", "5C", "6C")
    assert t.hand(0) == names("3S", "7C", "2H", "9S", "4S")  # refilled from the deck top
    assert res[S.X_HITS0] == 1 and res[S.X_DMG0] == 13 and res[S.X_ANSWERS] == 0
    assert log[S.L_LEFT_A] == 7 and log[S.L_LEFT_D] == t.left(1) == 25 - 13


def test_s4_tie_goes_to_the_defender_and_defend_plays_the_lowest_that_meets():
    t = Table(["3S", "KD", "7C", "2H", "9S"], FILLER, ["QS", "AS", "KH", "4D", "5C"], FILLER)
    _, log, res = t.turn(BASE, 0, "high-absorb-hand", "high-defend-hand")
    assert log[S.L_D1] == C("KH") and log[S.L_CVD] == 13  # K♥ meets K♦ (A♠ would too)
    assert log[S.L_DAMAGE] == 0 and t.left(1) == 24 and res[S.X_TIES] == 1
    assert res[S.X_HITS0] == 0 and res[S.X_ANSWERS] == 1
    assert len(t.hand(1)) == 5 and "K♥" not in t.hand(1)  # answered, then refilled


def test_s4_higher_card_wins_and_deals_the_difference():
    # the defender cannot meet the Ace: its highest card cuts the damage
    t = Table(
        ["AS", "2D", "3D", "4D", "5D"],
        FILLER,
        ["2S", "5D", "9C", "JH", "QS"],
        ["KH", "KD", "KC", "2C"],
    )
    _, log, _ = t.turn(BASE, 0, "high-absorb-hand", "high-defend-deck")
    assert log[S.L_D1] == C("QS") and log[S.L_CVA] == 14 and log[S.L_CVD] == 12
    assert log[S.L_DAMAGE] == 2 and (log[S.L_FROM_HAND], log[S.L_FROM_DECK]) == (0, 2)
    assert t.deck(1) == ["2♣"]  # K♥ refilled the hand, K♦ and K♣ went as damage
    # the defender's higher card stops the attack
    t = Table(["9S", "2D", "3D", "4D", "5D"], FILLER, ["10S", "QH", "3C", "2D", "8H"], FILLER)
    _, log, res = t.turn(BASE, 0, "high-absorb-hand", "high-defend-hand")
    assert log[S.L_D1] == C("10S") and log[S.L_CVD] == 10 and log[S.L_DAMAGE] == 0
    assert res[S.X_HITS0] == 0 and res[S.X_TIES] == 0


def test_s4_ties_to_attacker_variant_costs_a_card():
    tta = rules_of("ties-to-attacker")
    t = Table(["KD", "2D", "3D", "4D", "5D"], FILLER, ["KH", "2S", "3D", "4C", "5H"], FILLER)
    _, log, res = t.turn(tta, 0, "high-absorb-hand", "high-defend-hand")
    assert log[S.L_D1] == C("KH") and log[S.L_CVD] == 13  # its best answer: a tie
    assert log[S.L_DAMAGE] == 1 and log[S.L_FROM_HAND] == 1 and res[S.X_HITS0] == 1
    # with a card above, "defend" now answers with it: a tie no longer holds
    t = Table(["KD", "2D", "3D", "4D", "5D"], FILLER, ["QS", "AS", "KH", "4D", "5C"], FILLER)
    _, log, _ = t.turn(tta, 0, "high-absorb-hand", "high-defend-hand")
    assert log[S.L_D1] == C("AS") and log[S.L_DAMAGE] == 0
    # the same tie under the base rules: no damage
    t = Table(["KD", "2D", "3D", "4D", "5D"], FILLER, ["KH", "2S", "3D", "4C", "5H"], FILLER)
    _, log, _ = t.turn(BASE, 0, "high-absorb-hand", "high-defend-hand")
    assert log[S.L_D1] == C("KH") and log[S.L_DAMAGE] == 0


def _plays(rules, cards, suit_req, with_none):
    h = np.zeros(S.MAX_HAND, dtype=np.int64)
    h[: len(cards)] = ids(cards)
    ci = np.zeros(S.MAXC, dtype=np.int64)
    cj = np.zeros(S.MAXC, dtype=np.int64)
    n = S._plays(rules, h, len(cards), suit_req, with_none, ci, cj)
    return sorted(
        tuple(sorted(S.card_name(h[i]) for i in (ci[k], cj[k]) if i >= 0)) for k in range(n)
    )


def test_s4_suits_do_not_matter_by_default():
    hand = ["2S", "3D", "4C", "5H", "JOKER"]
    assert _plays(BASE, hand, CLUBS, False) == sorted((n,) for n in names(*hand))
    assert _plays(BASE, hand, HEARTS, True) == sorted([()] + [(n,) for n in names(*hand)])


def test_sd2_suited_struggles_legal_plays():
    suited = rules_of("suited-struggles")
    hand = ["2S", "3D", "4C", "5H", "JOKER"]
    assert _plays(suited, hand, CLUBS, False) == sorted(
        [("4♣",), ("Joker",), ("2♠", "Joker"), ("3♦", "Joker"), ("5♥", "Joker")]
    )
    assert _plays(suited, hand, HEARTS, True) == sorted(
        [(), ("5♥",), ("Joker",), ("2♠", "Joker"), ("3♦", "Joker"), ("4♣", "Joker")]
    )
    assert _plays(suited, ["KS", "9S", "3H", "4D", "5H"], CLUBS, False) == sorted(
        [("9♠", "K♠"), ("3♥", "5♥")]
    )
    assert _plays(suited, [JK, JK2], CLUBS, False) == sorted(
        [("Joker",), ("Joker",), ("Joker", "Joker")]
    )
    assert _plays(suited, ["2S", "3D", "4H"], CLUBS, False) == []  # nothing legal


def test_sd2_pair_value_is_its_highest_card_and_both_must_meet():
    """Rulebook: "Difficult actions require you to play two cards of the same
    suit and both must beat the minimum target number. Only the highest counts
    for determining the value of the card played." and "Unless a special
    ability is used only the highest card is counted, determining the Card
    Value of the action." In a struggle the minimum is the opposing card
    value ("This must meet or beat ... the opponent's Card Value")."""
    suited = rules_of("suited-struggles")
    assert suited[S.R_PAIR_VALUE] == S.PAIR_HIGHEST  # the default
    # K♠+9♠ is worth its K (13), not its 9: the highest attack; the Club pair
    # 10♣+Q♣ cannot answer it (its 10 does not meet 13) and 8♥ cuts the damage to 5
    t = Table(["KS", "9S", "3H", "4D", "5H"], FILLER, ["10C", "8H", "2S", "3D", "QC"], FILLER)
    acted, log, _ = t.turn(suited, 0, "high-absorb-hand", "high-defend-hand")
    assert acted and {log[S.L_A1], log[S.L_A2]} == {C("KS"), C("9S")} and log[S.L_CVA] == 13
    assert log[S.L_D1] == C("8H") and log[S.L_D2] == -1 and log[S.L_CVD] == 8
    assert log[S.L_DAMAGE] == 5 and log[S.L_VOID] == 0
    # both attacking cards must beat the answer: 10♥ stops K♠+9♠ (9 does not beat 10)
    t = Table(["KS", "9S", "3H", "4D", "5H"], FILLER, ["10H", "2S", "3D", "4C", "6C"], FILLER)
    _, log, res = t.turn(suited, 0, "high-absorb-hand", "high-defend-hand")
    assert log[S.L_CVA] == 13 and log[S.L_D1] == C("10H") and log[S.L_DAMAGE] == 0
    assert res[S.X_HITS0] == 0
    # a Difficult answer whose lower card falls short counts for nothing, so the
    # defending policy does not pay two cards for it: it takes the J♣'s 11
    t = Table(["JC", "2D", "3D", "4D", "5H"], FILLER, ["10S", "KS", "2D", "3C", "4C"], FILLER)
    _, log, _ = t.turn(suited, 0, "high-absorb-hand", "high-defend-hand")
    assert log[S.L_CVA] == 11 and log[S.L_D1] == -1 and log[S.L_DAMAGE] == 11
    # a pair both of whose cards meet the attack holds it (Q♠ 12 and K♠ 13 against J♣ 11)
    t = Table(["JC", "2D", "3D", "4D", "5H"], FILLER, ["QS", "KS", "2D", "3C", "4C"], FILLER)
    _, log, res = t.turn(suited, 0, "high-absorb-hand", "high-defend-hand")
    assert {log[S.L_D1], log[S.L_D2]} == {C("QS"), C("KS")} and log[S.L_CVD] == 13
    assert log[S.L_DAMAGE] == 0 and res[S.X_ANSWERS] == 1 and res[S.X_TIES] == 0


@pytest.mark.parametrize(
    "pair_value, tta, a, d, d_pair, answered, expected",
    [
        # single cards: the higher value wins, a tie to the defender, damage the difference
        (0, 0, (9, 9), (7, 7), False, True, (True, 2, True, False)),
        (0, 0, (9, 9), (9, 9), False, True, (False, 0, True, True)),
        (0, 1, (9, 9), (9, 9), False, True, (True, 1, True, True)),  # min_damage 1 with tta
        (0, 0, (9, 9), (0, 0), False, False, (True, 9, False, False)),
        # pair_value 0: an attack pair is worth its highest card; its lower card must beat too
        (0, 0, (5, 13), (4, 4), False, True, (True, 9, True, False)),
        (0, 0, (5, 13), (5, 5), False, True, (False, 0, True, True)),
        (0, 0, (5, 13), (8, 8), False, True, (False, 0, True, False)),
        (0, 1, (5, 13), (5, 5), False, True, (True, 8, True, True)),
        # ... an answer pair holds when both cards meet the attack; else it counts for nothing
        (0, 0, (10, 10), (10, 12), True, True, (False, 0, True, True)),
        (0, 0, (10, 10), (9, 14), True, True, (True, 10, False, False)),
        (0, 0, (10, 10), (3, 7), True, True, (True, 10, False, False)),
        (0, 1, (10, 10), (10, 12), True, True, (True, 10, False, True)),
        (0, 0, (5, 13), (11, 12), True, True, (True, 13, False, False)),
        (0, 0, (5, 13), (13, 14), True, True, (False, 0, True, True)),
        # pair_value 1 (the lower card) and 2 (the highest alone)
        (1, 0, (5, 13), (4, 4), False, True, (True, 1, True, False)),
        (1, 0, (10, 10), (9, 14), True, True, (True, 1, True, False)),
        (2, 0, (5, 13), (8, 8), False, True, (True, 5, True, False)),
        (2, 0, (10, 10), (9, 14), True, True, (False, 0, True, False)),
    ],
)
def test_sd2_resolution_table(pair_value, tta, a, d, d_pair, answered, expected):
    """``_resolve`` against outcomes worked out by hand (hit, damage, whether
    the answer counted, whether equal values met)."""
    rv = rules_of(
        "suited-struggles", pair_value=pair_value, ties_to_attacker=bool(tta), min_damage=tta
    )
    got = S._resolve(rv, a[0], a[1], d[0], d[1], d_pair, answered)
    assert tuple(bool(x) if i != 1 else int(x) for i, x in enumerate(got)) == expected


def test_sd2_pair_value_keys_lowest_and_highest_alone():
    """``pair_value = 1``: the toolkit's earlier reading, a pair worth its lower
    card; ``2``: worth its highest card with no condition on the other."""
    lowest = rules_of("suited-struggles", pair_value=1)
    t = Table(["KS", "9S", "3H", "4D", "5H"], FILLER, ["10C", "8H", "2S", "3D", "QC"], FILLER)
    _, log, _ = t.turn(lowest, 0, "high-absorb-hand", "high-defend-hand")
    assert {log[S.L_A1], log[S.L_A2]} == {C("KS"), C("9S")} and log[S.L_CVA] == 9
    # Hearts answer singly (8♥ < 9); the Club pair answers at its lower card, 10
    assert {log[S.L_D1], log[S.L_D2]} == {C("10C"), C("QC")} and log[S.L_CVD] == 10
    assert log[S.L_DAMAGE] == 0
    alone = rules_of("suited-struggles", pair_value=2)
    t = Table(["KS", "9S", "3H", "4D", "5H"], FILLER, ["10H", "2S", "3D", "4C", "6C"], FILLER)
    _, log, _ = t.turn(alone, 0, "high-absorb-hand", "high-defend-hand")
    assert log[S.L_CVA] == 13 and log[S.L_D1] == C("10H") and log[S.L_DAMAGE] == 3


def test_sd10_no_legal_attack_passes_and_draws_back_up_to_a_full_hand():
    """Rulebook: "once you've played your card(s) you need to draw enough to
    bring yourself back up to 5." SD10's pass discards a card like any play,
    so it draws back up to a full hand (here three cards: the hand had lost
    two to damage), not one card; docs/rulings.md says so."""
    suited = rules_of("suited-struggles")
    # no Club, no Joker, no pair of one other suit: no legal attack, a pass; SD10 (the
    # default): the pass discards the lowest card and refills the hand from the deck
    t = Table(["2S", "3D", "4H"], FILLER, ["10C", "8H", "2S", "3D", "QC"], FILLER)
    acted, log, res = t.turn(suited, 0, "high-absorb-hand", "high-defend-hand")
    assert acted == S.TURN_PASS and log[S.L_PASS] == C("2S") and log[S.L_DECLINED] == 0
    assert t.hand(0) == ["3♦", "4♥", "2♠", "3♠", "4♠"] and t.left(1) == 25
    assert t.left(0) == 3 + len(FILLER) - 1 and t.ints[0, S.I_DISC] == 1
    assert t.seen[0, 2] == 1  # the discarded 2♠ is face up
    assert res[S.X_DECLINES] == 0
    from balance.rulings import rulings

    sd10 = next(r for r in rulings("S") if r.startswith("SD10 "))
    assert "back up to a full hand" in sd10 and "drawing one" not in sd10
    # with pass_cycles = false the pass changes nothing
    still = suited.copy()
    still[S.R_PASS_CYCLES] = 0
    t = Table(["2S", "3D", "4H"], FILLER, ["10C", "8H", "2S", "3D", "QC"], FILLER)
    acted, log, _res = t.turn(still, 0, "high-absorb-hand", "high-defend-hand")
    assert acted == 0 and t.hand(0) == ["2♠", "3♦", "4♥"] and t.left(1) == 25
    # in the base rules the same hand attacks with its highest card
    t = Table(["2S", "3D", "4H"], FILLER, ["10C", "8H", "2S", "3D", "QC"], FILLER)
    acted, log, _ = t.turn(BASE, 0, "high-absorb-hand", "high-defend-hand")
    assert acted == 1 and log[S.L_A1] == C("4H")


# ------------------------------------------------------------- SD11: declining to attack
def _decliner(weight=2.0):
    """A strategy that attacks like high-defend-hand but scores declining at ``weight``."""
    from kernels.contract import Side
    from strategies.suits import encode_strategy

    return encode_strategy(
        {
            "attack": {"value": 1.0, "decline": weight},
            "defend": {"wins": 10.0, "value": -1.0, "damage": -2.0},
            "damage": {"hand": 10.0},
            "initiative": {"value": -1.0},
        },
        Side(),
    )


def test_sd11_a_character_may_decline_to_attack():
    """Rulebook: "During your character's turn you may take one action that
    requires playing a card (an attack for instance or a Task)": may, so a
    character can hold back. Declining plays no card and draws none; the
    other character is untouched."""
    t = Table(["3S", "KD", "7C", "2H", "9S"], ["4S", "5S"], ["2C", "3C", "4C", "5C", "6C"], FILLER)
    log = np.full(S.LOG_WIDTH, -99, dtype=np.int64)
    res = np.zeros(S.N_RESULT, dtype=np.int64)
    acted = S._turn(
        BASE,
        0,
        _decliner(),
        STRAT["high-defend-hand"],
        t.rngs[2],
        t.rngs[3],
        t.decks,
        t.hands,
        t.ints,
        t.seen,
        t.feats,
        t.ci,
        t.cj,
        t.odds,
        log,
        res,
    )
    assert acted == S.TURN_DECLINE and log[S.L_DECLINED] == 1 and log[S.L_A1] == -1
    assert t.hand(0) == names("3S", "KD", "7C", "2H", "9S") and t.deck(0) == ["4♠", "5♠"]
    assert t.hand(1) == names("2C", "3C", "4C", "5C", "6C") and t.left(1) == 25
    assert res[S.X_DECLINES] == 1 and res[S.X_ANSWERS] == 0 and t.seen.sum() == 0
    # a decline weight below the best attack's score: it attacks (with its K)
    t = Table(["3S", "KD", "7C", "2H", "9S"], ["4S", "5S"], ["2C", "3C", "4C", "5C", "6C"], FILLER)
    acted = S._turn(
        BASE,
        0,
        _decliner(0.5),
        STRAT["high-defend-hand"],
        t.rngs[2],
        t.rngs[3],
        t.decks,
        t.hands,
        t.ints,
        t.seen,
        t.feats,
        t.ci,
        t.cj,
        t.odds,
        log,
        res,
    )
    assert acted == S.TURN_ATTACK and log[S.L_A1] == C("KD") and log[S.L_DECLINED] == 0


def test_sd11_two_decliners_reach_the_round_cap_and_the_scripted_policies_never_decline():
    """Two characters that always decline never change a card: the round cap
    ends the struggle, a draw. Every scripted policy weighs ``decline = -10``
    and never declines; ``random`` declines as often as it picks any attack."""
    rv = rules_of("base", max_rounds=30)
    o = S.simulate(rv, _decliner(), _decliner(), 5, 0, 20)
    assert np.all(o["reason"] == S.END_CAP) and np.all(o["winner_seat"] == -1)
    assert np.all(o["rounds"] == 30) and np.all(o["declines"] == 60)
    assert np.all(o["exchanges"] == 0) and np.all(o["passes"] == 0)
    for name in NAMES[:-1]:
        spec = tomllib.loads((ROOT / "strategies" / "suits" / f"{name}.toml").read_text())
        assert spec["attack"]["decline"] == -10.0, name
        o = S.simulate(BASE, STRAT[name], STRAT["random"], 5, 0, 40)
        assert not np.any(o["reason"] == S.END_CAP)
        # a decliner against a policy that always attacks: the attacker still ends it
        o = S.simulate(BASE, STRAT[name], _decliner(), 5, 0, 40)
        assert not np.any(o["reason"] == S.END_CAP) and np.all(o["declines"] > 0)
    o = S.simulate(BASE, STRAT["random"], STRAT["random"], 5, 0, 200)
    assert o["declines"].sum() > 0 and not np.any(o["reason"] == S.END_CAP)


def test_sd11_decline_is_a_strategy_feature_and_the_cli_lists_it(tmp_path):
    from strategies.suits import ATTACK_FEATURES, P_ATTACK, SECTIONS
    from tests.cli.test_cli import run_cli

    names_ = [f[0] for f in ATTACK_FEATURES]
    assert names_[-1] == "decline" and SECTIONS["attack"][0] == P_ATTACK
    assert load_strategy("suits", "high-defend-hand").vector()[P_ATTACK + 5] == -10.0
    res = run_cli(["suits", "features", "--json"], tmp_path)
    assert res.returncode == 0, res.stderr
    rows = json.loads(res.stdout)
    assert {"section": "attack", "key": "decline"}.items() <= next(
        r for r in rows if r["key"] == "decline"
    ).items()


# ---------------------------------------------------------------- the scripted policies
def test_low_attacks_with_the_lowest_card_likely_to_win():
    """The defender has shown all Aces, Jokers and Kings: an attack of 13 or
    more cannot be met, one of 12 wins with probability C(40,5)/C(44,5) =
    0.606 >= 0.5, one of 11 with C(36,5)/C(44,5) = 0.347."""

    def table():
        t = Table(
            ["4S", "QD", "JC", "8H", "KS"], FILLER, ["2C", "3C", "4C", "5C", "6C"], list(range(39))
        )
        t.ints[1, S.I_DTOT] = 54
        t.ints[1, S.I_DPOS] = 15  # 10 cards discarded, 5 in hand, 39 in the deck
        t.decks[1, 15:54] = np.arange(39)
        t.seen[1, 14] = 6
        t.seen[1, 13] = 4
        t.ints[1, S.I_DISC] = 10
        return t

    _, log, _ = table().turn(BASE, 0, "low-absorb-hand", "high-absorb-hand")
    assert log[S.L_A1] == C("QD") and log[S.L_CVA] == 12
    _, log, _ = table().turn(BASE, 0, "high-absorb-hand", "high-absorb-hand")
    assert log[S.L_A1] == C("KS")
    # against a fresh opponent only an Ace (or Joker) is likely to win (a King: C(44,5) /
    # C(54,5) = 0.343); without one, the lowest card
    t = Table(
        ["9S", "QD", "JC", "8H", "KS"], FILLER, ["2C", "3C", "4C", "5C", "6C"], list(range(49))
    )
    _, log, _ = t.turn(BASE, 0, "low-absorb-hand", "high-absorb-hand")
    assert log[S.L_A1] == C("8H")
    t = Table(
        ["9S", "QD", "AC", "8H", "KS"], FILLER, ["2C", "3C", "4C", "5C", "6C"], list(range(49))
    )
    _, log, _ = t.turn(BASE, 0, "low-absorb-hand", "high-absorb-hand")
    assert log[S.L_A1] == C("AC")  # C(48,5)/C(54,5) = 0.541 >= 0.5


@pytest.mark.parametrize(
    "policy", ["high-absorb-hand", "high-absorb-deck", "low-absorb-hand", "low-absorb-deck"]
)
def test_absorb_never_answers(policy):
    t = Table(["9S", "2D", "3D", "4D", "5D"], FILLER, ["AS", "KH", "10C", "JOKER", "QD"], FILLER)
    _, log, res = t.turn(BASE, 0, "high-absorb-hand", policy)
    assert log[S.L_D1] == -1 and log[S.L_CVD] == 0 and log[S.L_DAMAGE] == 9
    assert res[S.X_ANSWERS] == 0
    fh, fd = (9, 0) if policy.endswith("hand") else (0, 9)
    if fh:  # only 5 in hand: the rest comes from the deck
        fh, fd = 5, 4
    assert (log[S.L_FROM_HAND], log[S.L_FROM_DECK]) == (fh, fd)


@pytest.mark.parametrize(
    "policy", ["high-defend-hand", "high-defend-deck", "low-defend-hand", "low-defend-deck"]
)
def test_defend_answers_lowest_meeting_else_highest(policy):
    t = Table(["JS", "2D", "3D", "4D", "5D"], FILLER, ["AS", "KH", "10C", "JOKER", "QD"], FILLER)
    _, log, _ = t.turn(BASE, 0, "high-absorb-hand", policy)
    assert log[S.L_D1] == C("QD") and log[S.L_DAMAGE] == 0
    t = Table(["JOKER", "2D", "3D", "4D", "5D"], FILLER, ["2S", "KH", "10C", "3D", "QD"], FILLER)
    _, log, _ = t.turn(BASE, 0, "high-absorb-hand", policy)
    assert log[S.L_D1] == C("KH") and log[S.L_DAMAGE] == 1


# ------------------------------------------------------------------------------ SD4
@pytest.mark.parametrize("variant,hand_after", [("base", 2), ("refill-after-damage", 5)])
def test_sd4_damage_discards_refill_at_the_next_play(variant, hand_after):
    t = Table(
        ["3S", "2D", "2C", "2H", "2S"], FILLER, ["6C", "7C", "8C", "9C", "10C"], ["AH", "KH", "QH"]
    )
    _, log, _ = t.turn(rules_of(variant), 0, "high-absorb-hand", "high-absorb-hand")
    assert log[S.L_DAMAGE] == 3 and log[S.L_FROM_HAND] == 3
    assert len(t.hand(1)) == hand_after
    assert t.hand(1)[:2] == ["9♣", "10♣"]  # the lowest went
    if hand_after == 5:
        assert t.hand(1)[2:] == ["A♥", "K♥", "Q♥"] and t.ints[1, S.I_DIS] == 1  # deck drawn out
        assert log[S.L_DIS_D] == 1
    else:
        assert t.ints[1, S.I_DIS] == 0
        # its next play refills the hand
        _, log, _ = t.turn(rules_of(variant), 1, "high-absorb-hand", "high-absorb-hand")
        assert log[S.L_A1] == C("10C") and t.hand(1) == ["9♣", "A♥", "K♥", "Q♥"]
        assert log[S.L_DIS_A] == 1


# ------------------------------------------------------------------------------ SD5
def test_sd5_over():
    ints = np.zeros((2, S.N_INTS), dtype=np.int64)
    death = rules_of("to-the-death")

    def over(rules, dis0, dis1, dead0=0, dead1=0):
        ints[0, S.I_DIS], ints[1, S.I_DIS], ints[0, S.I_DEAD], ints[1, S.I_DEAD] = (
            dis0,
            dis1,
            dead0,
            dead1,
        )
        return S._over(rules, ints)

    assert over(BASE, 0, 0) == -2
    assert over(BASE, 1, 0) == 1 and over(BASE, 0, 1) == 0 and over(BASE, 1, 1) == -1
    assert over(BASE, 0, 0, 1, 0) == 1
    assert over(death, 1, 0) == -2 and over(death, 0, 1) == -2  # fight on
    assert over(death, 1, 0, 1, 0) == 1 and over(death, 0, 0, 0, 1) == 0
    assert over(death, 1, 1) == -1  # both lie disabled: nobody can act
    assert over(death, 1, 1, 1, 1) == -1


def test_sd5_disabled_character_does_not_answer_and_dies_from_its_hand():
    death = rules_of("to-the-death")
    t = Table(["10S", "2D", "3D", "4D", "5D"], FILLER, ["AS", "KS", "2D"], [])
    t.ints[1, S.I_DIS] = 1
    _, log, res = t.turn(death, 0, "high-absorb-hand", "high-defend-hand")
    assert log[S.L_D1] == -1 and log[S.L_CVD] == 0 and res[S.X_ANSWERS] == 0
    assert log[S.L_DAMAGE] == 10 and log[S.L_FROM_HAND] == 3 and log[S.L_DEAD_D] == 1
    assert S._over(death, t.ints) == 0
    # damage equal to its cards left discards every card: dead (S3)
    t = Table(["3S", "2D", "2C", "2H", "2S"], FILLER, ["AS", "KS", "2D"], [])
    t.ints[1, S.I_DIS] = 1
    _, log, _ = t.turn(death, 0, "high-absorb-hand", "high-defend-hand")
    assert log[S.L_D1] == -1 and log[S.L_FROM_HAND] == 3 and log[S.L_DEAD_D] == 1
    assert t.hand(1) == [] and S._over(death, t.ints) == 0
    # one point less and it survives, one card short of death
    t = Table(["2S", "2D", "2C", "2H", "2S"], FILLER, ["AS", "KS", "2D"], [])
    t.ints[1, S.I_DIS] = 1
    _, log, _ = t.turn(death, 0, "high-absorb-hand", "high-defend-hand")
    assert log[S.L_D1] == -1 and log[S.L_FROM_HAND] == 2 and log[S.L_DEAD_D] == 0
    assert t.hand(1) == ["A♠"] and S._over(death, t.ints) == -2


def _sim(variant, a, b, n=400, seed=7):
    return S.simulate(rules_of(variant), STRAT[a], STRAT[b], seed, 0, n)


def test_sd5_base_ends_at_the_first_disabled_and_to_the_death_at_a_death():
    base = _sim("base", "high-defend-deck", "low-absorb-hand")
    death = _sim("to-the-death", "high-defend-deck", "low-absorb-hand")
    assert set(np.unique(base["reason"])) <= {S.END_DISABLED, S.END_DEAD, S.END_BOTH}
    assert (base["reason"] == S.END_DISABLED).mean() > 0.5
    assert set(np.unique(death["reason"])) <= {S.END_DEAD, S.END_BOTH}
    assert (death["reason"] == S.END_DEAD).mean() > 0.5
    for o in (base, death):
        won = o["winner_seat"] >= 0
        w = o["winner_seat"][won]
        loser_dead = np.where(w == 0, o["dead_seat1"][won], o["dead_seat0"][won])
        loser_dis = np.where(w == 0, o["disabled_seat1"][won], o["disabled_seat0"][won])
        assert np.array_equal(loser_dead == 1, o["reason"][won] == S.END_DEAD)
        assert np.all((loser_dead == 1) | (loser_dis == 1))
    # to the death, the loser always died and the fight went on past the first disabling
    dw = death["winner_seat"] >= 0
    assert np.all(death["dead_at"][dw] >= death["disabled_at"][dw])
    assert np.any(death["dead_at"][dw] > death["disabled_at"][dw])
    assert death["rounds"].mean() > base["rounds"].mean()


# ------------------------------------------------------------------------------ SD6
def test_sd6_empty_hand_draws_before_acting_and_answering():
    t = Table(
        [],
        ["2S", "9D", "4C", "5H", "6S", "7S", "8S"],
        [],
        ["3C", "10H", "JD", "2H", "4S", "5S", "6S"],
    )
    acted, log, _ = t.turn(BASE, 0, "high-defend-hand", "high-defend-hand")
    assert acted and log[S.L_A1] == C("9D")  # the highest of the first five
    assert log[S.L_D1] == C("10H") and log[S.L_DAMAGE] == 0  # drew five, then answered
    assert t.hand(0) == names("2S", "4C", "5H", "6S", "7S")
    assert t.hand(1) == names("3C", "JD", "2H", "4S", "5S")
    assert t.ints[0, S.I_DIS] == 0 and t.ints[1, S.I_DIS] == 0


def test_sd6_defender_disabled_by_its_draw_does_not_answer():
    t = Table(["9S", "2D", "3D", "4D", "5D"], FILLER, [], ["AS", "KH", "3C"])
    _, log, _ = t.turn(BASE, 0, "high-absorb-hand", "high-defend-hand")
    assert t.ints[1, S.I_DIS] == 1 and log[S.L_D1] == -1 and log[S.L_DAMAGE] == 9


@pytest.mark.parametrize("variant", ["base", "to-the-death"])
def test_sd6_attacker_disabled_by_its_draw_does_not_attack(variant):
    """Seat 0's hand is empty and its deck holds its last 3 cards: drawing
    them disables it (SD6, S3), so it must not attack, as a defender
    disabled by its draw does not answer (previous test)."""
    t = Table([], ["2S", "3S", "AS"], ["2D", "3D", "4D", "5D", "6D"], FILLER)
    acted, _log, _ = t.turn(rules_of(variant), 0, "high-defend-hand", "high-absorb-deck")
    assert t.ints[0, S.I_DIS] == 1  # drew its deck's last card
    assert t.left(1) == 25, "the disabled attacker dealt damage"
    assert t.hand(0) == ["2♠", "3♠", "A♠"] and acted == 0


# ------------------------------------------------------------------------------ SD7
def initiative(c: int) -> tuple[int, int]:
    """SD7 by hand: Spades, Diamonds, Clubs, Hearts, then the higher value; a
    Joker is a Spade of value 14. Larger acts earlier."""
    if c >= 52:
        return (3, 14)
    return (3 - c // 13, c % 13 + 2)


def test_sd7_initiative_key_order():
    key = {c: S._initiative_key(c, 14) for c in range(54)}
    for a in range(52):
        for b in range(52):
            sa, sb, va, vb = a // 13, b // 13, a % 13, b % 13
            earlier = sa < sb or (sa == sb and va > vb)
            assert (key[a] > key[b]) == earlier, (S.card_name(a), S.card_name(b))
    assert key[JK] == key[JK2] == key[C("AS")]
    assert key[C("2S")] > key[C("AD")] > key[C("2D")] > key[C("AC")] > key[C("2C")] > key[C("AH")]
    assert S._initiative_key(JK, 9) == S._initiative_key(C("9S"), 9)


def _first_hand(seed, deal, seat):
    state = np.zeros(4, dtype=np.uint64)
    rng.seed_state(state, np.uint64(seed), deal, rng.PURPOSE_GAME + seat)
    deck = np.zeros(S.MAX_DECK, dtype=np.int64)
    assert S._deal(deck, 2, state) == 54
    assert sorted(deck[:54]) == list(range(54))
    return [int(c) for c in deck[:5]]


def test_sd7_traces_first_mover_has_the_better_initiative_card():
    seed, strat = 99, STRAT["high-defend-hand"]
    ties = 0
    for game in range(0, 40, 2):
        events = S.trace(BASE, strat, STRAT["low-absorb-deck"], seed, game)
        ini = events[0]
        assert ini["kind"] == "initiative"
        cards = [C(c) if c != "Joker" else JK for c in ini["cards"]]
        # the scripted policies play their lowest card (SD7); the deal is seat-by-seat
        for s in range(2):
            hand = _first_hand(seed, game // 2, s)
            assert S.card_value(cards[s], 14) == min(S.card_value(c, 14) for c in hand)
            assert S.card_name(cards[s]) in [S.card_name(c) for c in hand]
        k0, k1 = (initiative(c) for c in cards)
        first = ini["first_seat"]
        if k0 != k1:
            assert first == (1 if k0 > k1 else 2)
        else:
            ties += 1
        assert events[1]["kind"] == "attack" and events[1]["seat"] == first
        assert events[1]["round"] == 1
    assert ties < 20


# ------------------------------------------------------- SD8: counting the unseen cards
@pytest.mark.parametrize("strict", [False, True])
def test_sd8_p_win_counts_the_cards_not_yet_shown(strict):
    """``odds[v]``: the chance that a hand of h cards drawn from the n cards
    the opponent has not shown holds no card of at least v (strict: above v,
    when ties go to the attacker), computed here with binomials."""
    seen = np.zeros(16, dtype=np.int64)
    seen[14], seen[13], seen[9], seen[2] = 3, 4, 2, 1
    st = np.zeros(S.N_INTS, dtype=np.int64)
    st[S.I_DTOT], st[S.I_DPOS], st[S.I_HN] = 54, 14, 4  # 10 shown: 40 + 4 unseen, a hand of 4
    odds = np.full(16, -1.0)
    S._no_answer_odds(seen, st, strict, 2, 14, odds)
    unseen = {u: 4 + (2 if u == 14 else 0) - seen[u] for u in range(2, 15)}
    n, h = 44, 4
    assert sum(unseen.values()) == n
    for v in range(2, 15):
        g = sum(c for u, c in unseen.items() if (u > v if strict else u >= v))
        assert odds[v] == pytest.approx(math.comb(n - g, h) / math.comb(n, h), abs=1e-12), v
    if strict:  # nothing beats 14; the three unseen 14s beat 13 and 12 alike (no 13 left)
        assert odds[14] == 1.0 and odds[13] == odds[12] < 1.0
    else:  # every unseen card meets 2
        assert odds[2] == 0.0 and odds[13] == odds[14] < 1.0


def test_random_policy_plays_uniformly():
    """``random``: every attack card and declining (SD11, ``-1`` below), every
    answer (or none) equally likely."""
    attacks, answers, sources = {}, {}, [0, 0]
    n = 2400
    for trial in range(n):
        t = Table(
            ["2S", "5D", "9C", "JH", "KS"],
            FILLER,
            ["3S", "6D", "10C", "QH", "AS"],
            FILLER,
            seed=1000 + trial,
        )
        _, log, _ = t.turn(BASE, 0, "random", "random")
        attacks[int(log[S.L_A1])] = attacks.get(int(log[S.L_A1]), 0) + 1
        assert (log[S.L_A1] < 0) == (log[S.L_DECLINED] == 1)
        if log[S.L_A1] >= 0:
            answers[int(log[S.L_D1])] = answers.get(int(log[S.L_D1]), 0) + 1
        sources[0] += int(log[S.L_FROM_HAND])
        sources[1] += int(log[S.L_FROM_DECK])

    def fair(count, p, n):  # Wilson interval at z = 4.5
        lo, hi = proportion_confint(count, n, alpha=2 * norm.sf(4.5), method="wilson")
        return lo <= p <= hi

    assert sorted(attacks) == sorted([-1, *ids(["2S", "5D", "9C", "JH", "KS"])])
    assert all(fair(c, 1 / 6, n) for c in attacks.values()), attacks
    m = n - attacks[-1]
    assert sorted(answers) == sorted([-1, *ids(["3S", "6D", "10C", "QH", "AS"])])
    assert all(fair(c, 1 / 6, m) for c in answers.values()), answers
    assert min(sources) > 0.3 * sum(sources)  # both damage sources are chosen
