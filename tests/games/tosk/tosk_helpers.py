"""A brute-force Tosk play oracle in plain Python, independent of the engine.

It reads the rulebook and the rulings directly: pips T2, Force T3, techniques
T4 (each technique boosts at most one action of its suit, or colour with
Advanced Techniques, and an action takes at most one technique), order T5,
Momentum T6, stamina T7. Every technique assignment is tried, including
leaving a technique unassigned, and the outcomes no other assignment beats in
both ATK and DEF are the ones a player would consider. Only the card ids'
layout (``4 * rank index + suit``, documented in ``sims.tosk``) is shared.
"""

from __future__ import annotations

# T2 (ATK, DEF) of A, 2..9; J, Q, K give none. Rank values A=1..9, J=11, Q=12, K=13.
PIPS = [(0, 1), (0, 2), (0, 3), (2, 0), (2, 1), (3, 0), (3, 1), (3, 2), (4, 1)]
VALUES = [1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13]
BLACK = {0, 3}  # ♣ ♠ (suits are ♣ ♦ ♥ ♠)


def pareto(points) -> set[tuple[int, int]]:
    """The points of ``points`` that no other point matches or beats in both
    coordinates while beating it in one."""
    pts = set(points)
    return {p for p in pts if not any(q[0] >= p[0] and q[1] >= p[1] and q != p for q in pts)}


def _assignments(techs, actions, used=0):
    """Every technique assignment: yields the tuple of boosted action indices
    (``None`` for a technique left unassigned). ``techs`` and ``actions`` hold
    each card's group."""
    if not techs:
        yield ()
        return
    g = techs[0]
    for rest in _assignments(techs[1:], actions, used):
        yield (None, *rest)
    for j, ga in enumerate(actions):
        if ga == g and not (used >> j) & 1:
            for rest in _assignments(techs[1:], actions, used | (1 << j)):
                yield (j, *rest)


def play(rules: dict, cards) -> dict:
    """Cost, cards and every (ATK, DEF) of each technique assignment of ``cards``.

    Returns ``cost``, ``cards``, ``outcomes`` (outcome → fewest techniques
    left without an action among the assignments reaching it) and ``front``
    (the undominated outcomes).
    """
    by_colour = bool(rules["technique_by_colour"])

    def group(c):
        s = c % 4
        return (0 if s in BLACK else 1) if by_colour else s

    acts = [c for c in cards if c // 4 < 9]
    techs = [c for c in cards if c // 4 >= 9]
    cost = sum(VALUES[c // 4] for c in acts) + rules["technique_cost"] * len(techs)
    if rules["momentum"]:
        vals = {VALUES[c // 4] for c in acts}
        if rules["momentum_counts_techniques"]:
            vals |= {VALUES[c // 4] for c in techs}
        # each maximal run of L distinct consecutive values saves L - 1: one per adjacent pair
        cost = max(0, cost - sum(1 for v in vals if v + 1 in vals))
    atk = sum(PIPS[c // 4][0] for c in acts)
    dfn = sum(PIPS[c // 4][1] for c in acts)
    bonus_a = bonus_d = 0
    if rules["force"]:  # T3, T5: flat, after doubling, on the stats the rank gives
        for r in range(9):
            k = sum(1 for c in acts if c // 4 == r)
            if k >= 2:
                bonus_a += (k - 1) if PIPS[r][0] else 0
                bonus_d += (k - 1) if PIPS[r][1] else 0
    outcomes: dict[tuple[int, int], int] = {}
    for chosen in _assignments([group(c) for c in techs], [group(c) for c in acts]):
        a = atk + sum(PIPS[acts[j] // 4][0] for j in chosen if j is not None) + bonus_a
        d = dfn + sum(PIPS[acts[j] // 4][1] for j in chosen if j is not None) + bonus_d
        wasted = sum(1 for j in chosen if j is None)
        outcomes[(a, d)] = min(wasted, outcomes.get((a, d), wasted))
    return {"cost": cost, "cards": len(cards), "outcomes": outcomes, "front": pareto(outcomes)}


def legal_plays(rules: dict, hand, forbidden: int = 0) -> dict[int, dict]:
    """:func:`play` of every subset (bit mask over ``hand``) within stamina
    (T7) that plays no rank of the bit mask ``forbidden``."""
    out = {}
    for mask in range(1 << len(hand)):
        cards = [c for i, c in enumerate(hand) if (mask >> i) & 1]
        if any((forbidden >> (c // 4)) & 1 for c in cards):
            continue
        res = play(rules, cards)
        if res["cost"] <= rules["capacity"]:
            out[mask] = res
    return out
