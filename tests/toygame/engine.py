"""High Card: each player has a deck of the cards 1..``cards``, shuffled. Each
round both reveal their next card (a deck that runs out is turned over);
a player may *boost* a revealed card by 3, ``boosts`` times a game, choosing
without seeing the other's card. The higher total scores a point, a tie
scores none. The first to ``target`` points wins; a game not decided after
``max_rounds`` rounds is a draw.

Seat-swapped pairs as in every engine: game ``2d`` has strategy A in seat 0,
game ``2d + 1`` in seat 1, on the same deal ``d`` (seat 0's and seat 1's
shuffles drawn from ``(seed, d)``)."""

from __future__ import annotations

import numpy as np

from kernels.aggregate import pair_outcomes
from kernels.contract import Rule, rule_tables

GAME = "toy"
VERSION = "1.0.0"
RULES = (
    Rule("cards", 9, 3, 20, "cards in each player's deck, valued 1..cards"),
    Rule("target", 5, 1, 50, "points that win the game"),
    Rule("boosts", 2, 0, 5, "times a game a player may add 3 to a revealed card"),
    Rule("max_rounds", 30, 1, 1000, "a game not decided after this many rounds is a draw"),
)
RULE_FIELDS, DEFAULT_RULES, RULE_LIMITS = rule_tables(RULES)
END_NAMES = ("target", "round_cap")
PAIR_STREAMS = "seat"  # the deal fixes each seat's deck: a mirror scores exactly 1/2
BOOST = 3


def max_length(rules: dict) -> int:
    return int({**DEFAULT_RULES, **rules}["max_rounds"])


def encode_rules(cfg: dict, table=None) -> np.ndarray:
    if table is not None:
        raise ValueError("High Card has no card sets")
    return np.array([int(cfg[name]) for name in RULE_FIELDS], dtype=np.int64)


def catalogue() -> list[dict]:
    return [{"card": v, "value": v} for v in range(1, DEFAULT_RULES["cards"] + 1)]


def _deal(rules, seed: int, deal: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng([int(seed), int(deal)])
    n = int(rules[0])
    return rng.permutation(n) + 1, rng.permutation(n) + 1


def _play(rules, sides, seed: int, game: int, log: list | None = None) -> tuple:
    """One game: (winner seat or -1, rounds, end reason, score trace)."""
    cards, target, boosts, max_rounds = (int(x) for x in rules[:4])
    decks = _deal(rules, seed, game // 2)
    left = [boosts, boosts]
    score = [0, 0]
    trace = []
    for r in range(max_rounds):
        totals = []
        for seat in (0, 1):
            card = int(decks[seat][r % cards])
            boost = left[seat] > 0 and card <= sides[seat][0]
            left[seat] -= boost
            totals.append(card + BOOST * boost)
            if log is not None:
                log.append((r, seat, card, bool(boost)))
        if totals[0] != totals[1]:
            score[int(totals[1] > totals[0])] += 1
        trace.append(score[0] - score[1])
        if max(score) >= target:
            return int(score[1] > score[0]), r + 1, 0, trace
    return -1, max_rounds, 1, trace


def _trace_metrics(trace: list[int], winner: int) -> tuple[int, int, int, int, int]:
    """Lead changes, each seat's largest deficit and rounds not ahead for good."""
    lead = maxdef0 = maxdef1 = 0
    prev = 0
    for s in trace:
        if s and prev and (s > 0) != (prev > 0):
            lead += 1
        if s:
            prev = s
        maxdef0, maxdef1 = max(maxdef0, -s), max(maxdef1, s)
    ahead = [i for i, s in enumerate(trace) if (s > 0 if winner == 0 else s < 0)]
    settled = len(trace)
    for i in range(len(trace) - 1, -1, -1):
        if i not in ahead:
            break
        settled = i
    return lead, maxdef0, maxdef1, settled, settled


def simulate(rules, strat_a, strat_b, seed, first_game, n_games):
    if first_game % 2 or n_games % 2:
        raise ValueError("first_game and n_games must be even (seat-swapped pairs)")
    rules = np.asarray(rules, np.int64)
    cols = np.zeros((n_games, 7), np.int64)
    for i in range(n_games):
        g = first_game + i
        sides = (strat_a, strat_b) if g % 2 == 0 else (strat_b, strat_a)
        winner, rounds, reason, trace = _play(rules, sides, seed, g)
        cols[i] = (winner, rounds, reason, *_trace_metrics(trace, winner)[:4])
    out = pair_outcomes(
        cols[:, 0], cols[:, 1], cols[:, 3], cols[:, 4], cols[:, 5], cols[:, 6], cols[:, 6]
    )
    out.update({"rounds": cols[:, 1], "reason": cols[:, 2]})
    return out


def trace(rules, strat_a, strat_b, seed, game, names=("A", "B"), card_names=None):
    rules = np.asarray(rules, np.int64)
    sides = (strat_a, strat_b) if game % 2 == 0 else (strat_b, strat_a)
    who = names if game % 2 == 0 else names[::-1]
    log: list = []
    winner, rounds, reason, _ = _play(rules, sides, seed, game, log)
    events = [
        {
            "kind": "reveal",
            "round": r + 1,
            "seat": seat + 1,
            "text": f"round {r + 1}: seat {seat + 1} ({who[seat]}) shows {card}"
            + (" and boosts it" if boost else ""),
        }
        for r, seat, card, boost in log
    ]
    end = "draw at the round cap" if winner < 0 else f"seat {winner + 1} ({who[winner]}) wins"
    events.append(
        {
            "kind": "end",
            "winner_seat": winner + 1 if winner >= 0 else None,  # seats are numbered 1 and 2
            "rounds": rounds,
            "reason": END_NAMES[reason],
            "text": f"{end} after {rounds} rounds",
        }
    )
    return events
