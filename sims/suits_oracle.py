"""Exact odds of a four-suits RPG Task from a fresh hand (rulings S1, S2, SD1, SD9).

A fresh hand is ``hand_size`` cards drawn without replacement from a
character's deck of 52 cards and ``jokers`` Jokers. For a Task of target
``t`` in one suit, only a few facts about the hand matter: how many Jokers it
holds (wild, value ``joker_value``: useful when that meets ``t``), how many
cards of the task's suit meet ``t``, how many of each other suit meet it, and
how many cards are useless. Each of those is a multivariate hypergeometric
count, so the probability of every outcome is a finite sum of products of
binomial coefficients, computed here in exact rational arithmetic
(``fractions.Fraction``): no simulation, no rounding, independent of the
engine's kernels (plain Python: nothing here is compiled). The tests hold the engine's simulated frequencies to these
values, and the report prints them beside the simulated ones.
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache
from itertools import product
from math import comb


@cache
def task_odds(
    target: int,
    hand_size: int = 5,
    jokers: int = 2,
    joker_value: int = 14,
    failed_task_cards: int = 1,
) -> dict[str, Fraction]:
    """Exact probabilities for a Task of ``target`` from a fresh hand.

    Returns ``in_suit`` (a card of the task's suit or a Joker meets the
    target), ``difficult`` (two cards of one other suit both meet it, a Joker
    being any suit), ``either`` (one or the other), ``difficult_only`` (a
    Difficult pair but no in-suit card: the hands that need the Difficult
    rule), ``joker`` (the hand holds a Joker) and ``cards`` (the expected
    cards the best play costs: 1 in suit, 2 Difficult, ``failed_task_cards``
    on a failure, SD1)."""
    if not 2 <= target <= 14:
        raise ValueError(f"target {target} is not 2..14")
    high = 15 - target  # cards of one suit with value >= target
    wild = jokers if joker_value >= target else 0
    low = 4 * (13 - high) + (jokers - wild)  # cards that cannot meet the target
    total = comb(52 + jokers, hand_size)
    acc = {"in_suit": 0, "difficult": 0, "either": 0, "difficult_only": 0, "cards": 0}
    for j in range(min(wild, hand_size) + 1):
        for a, b1, b2, b3 in product(range(min(high, hand_size) + 1), repeat=4):
            rest = hand_size - j - a - b1 - b2 - b3
            if rest < 0:
                continue
            ways = (
                comb(wild, j)
                * comb(high, a)
                * comb(high, b1)
                * comb(high, b2)
                * comb(high, b3)
                * comb(low, rest)
            )
            if not ways:
                continue
            best_other = max(b1, b2, b3)
            in_suit = a >= 1 or j >= 1
            difficult = best_other + j >= 2
            if in_suit:
                acc["in_suit"] += ways
            if difficult:
                acc["difficult"] += ways
            if in_suit or difficult:
                acc["either"] += ways
            if difficult and not in_suit:
                acc["difficult_only"] += ways
            acc["cards"] += ways * (
                1 if in_suit else 2 if difficult else min(failed_task_cards, hand_size)
            )
    out = {k: Fraction(v, total) for k, v in acc.items()}
    out["joker"] = 1 - Fraction(comb(52, hand_size), total)  # 0 without Jokers
    return out
