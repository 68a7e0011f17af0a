"""Trisk game logs: the engine's event rows turned into readable lines."""

import numpy as np

from sims.trisk import engine as E
from sims.trisk.cards import DAMAGE_TYPES, E_STATUS, EFFECT_NAMES, STATUSES, TYPES


def trace_log(rules, strat_a, strat_b, seed, game):
    """Replay game ``game`` (``2d``: A in seat 0, ``2d + 1``: A in seat 1)
    with its event log: ``(result row, events int64[n, LOG_W])``."""
    ints, table, sides, deck_n, primals, ws, forbs = E.prepare(rules, strat_a, strat_b)
    return E.play_game(
        ints, table, sides, deck_n, primals, ws, forbs, np.uint64(seed), game // 2, game % 2, True
    )


def _event_text(ev, name, who, second_level=1) -> str:
    turn, seat, code, a, b, c, d, e = (int(x) for x in ev)
    me = f"seat {seat + 1} ({who[seat]})" if seat >= 0 else "nobody"
    if code == E.EV_TOSS:
        return (
            f"{me} wins the toss; seat {a + 1} ({who[a]}) starts, "
            f"seat {2 - a} starts with its Primal at level {second_level}"
        )
    if code == E.EV_MEDITATE:
        return f"{me} meditates: its Primal is level {a}"
    if code == E.EV_TRAIN:
        return f"{me} trains {name(a)} to level {c}"
    if code == E.EV_MUSTER:
        return (
            f"{me} musters {'a card' if a >= 0 else 'nothing (empty deck or full hand)'}"
            f" ({b} in hand)" + (f": {name(a)}" if a >= 0 else "")
        )
    if code == E.EV_CREATE:
        return f"{me} creates {name(a)} (level 0)"
    if code == E.EV_UPGRADE:
        return f"{me} upgrades {name(a)} into {name(b)}, now level {c}"
    if code == E.EV_CAST:
        return f"{me} casts {name(a)} on {name(c)} of seat {b + 1} (X = {d})"
    if code == E.EV_SACRIFICE:
        return f"{me} sacrifices {name(a)}"
    if code == E.EV_ABILITY:
        tgt = name(d) if d >= 0 else "itself / its player"
        return f"{me}: {name(a)} uses ability {b + 1} on {tgt} of seat {c + 1}"
    if code == E.EV_COINS:
        return f"{me} flips {b} coin(s) for {name(a)}: {c} heads, " + (
            "it works" if c > 0 else "it fails"
        )
    if code == E.EV_ATTACK:
        return f"{me} attacks with {name(a)}"
    if code == E.EV_BLOCK:
        return f"{me} blocks {name(a)} with {name(b)}"
    if code == E.EV_DAMAGE:
        src = name(a) if a >= 0 else "an effect"
        kind = DAMAGE_TYPES[e] if 0 <= e < len(DAMAGE_TYPES) else "untyped"
        return f"{src} deals {d} {kind} damage to {name(c)} of seat {b + 1}"
    if code == E.EV_DESTROY:
        return f"{me}: {name(a)} is destroyed"
    if code == E.EV_POISON:
        return f"{me}: poison deals 1 damage to {name(a)}"
    if code == E.EV_SLEEP_HEAL:
        return f"{me}: a sleep token comes off {name(a)} and heals 1"
    if code == E.EV_REGEN:
        return f"{me}: {name(a)} regenerates {c}"
    if code == E.EV_GROW:
        return f"{me}: {name(a)} grows {c} level(s)"
    if code == E.EV_FEAR:
        return f"{me}: feared {name(a)} flips " + (
            "heads and may block" if b else "tails and is too afraid to block"
        )
    if code == E.EV_BLIND:
        return f"{me}: blinded {name(a)} flips " + ("heads and hits" if b else "tails and misses")
    if code == E.EV_EFFECT:
        eff = EFFECT_NAMES[a]
        if a == E_STATUS:
            return f"{me}: {name(c)} of seat {b + 1} gets {d} {STATUSES[e]} token(s)"
        if c < 0:
            return f"{me}: {eff} {d}"
        return f"{me}: {eff} {d} on {name(c)} of seat {b + 1}"
    if code == E.EV_END:
        if seat < 0:
            return f"draw: the turn cap is reached after {turn} turns"
        return f"seat {seat + 1} ({who[seat]}) wins on turn {turn}: the enemy Primal falls"
    return f"event {code}"


def trace(rules, strat_a, strat_b, seed, game, names=("A", "B"), card_names=None):
    """The events of one game, in order, each a dict with a readable ``text``
    (``card_names`` label the card rows; without them cards show as ``#row``).
    The last event (the end, or the notice of a truncated log) also carries
    how the game ended: ``winner_seat`` (1 or 2, None for a draw), ``rounds``
    (turns, both players') and ``reason`` (a name of ``END_NAMES``)."""
    res, log = trace_log(rules, strat_a, strat_b, seed, game)
    second = int(np.asarray(rules)[E.R_SECOND_LEVEL])
    who = (names[0], names[1]) if game % 2 == 0 else (names[1], names[0])

    def name(row):
        row = int(row)
        if row < 0:
            return "-"
        return card_names[row] if card_names is not None and row < len(card_names) else f"#{row}"

    events = []
    for ev in log:
        events.append(
            {
                "turn": int(ev[0]),
                "seat": int(ev[1]) + 1,
                "code": int(ev[2]),
                "args": [int(x) for x in ev[3:]],
                "text": f"turn {int(ev[0]):>3} | " + _event_text(ev, name, who, second),
            }
        )
    if res[E.X_EVENTS] >= E.MAX_LOG:
        events.append(
            {
                "turn": -1,
                "seat": 0,
                "code": -1,
                "args": [],
                "text": f"(log truncated at {E.MAX_LOG} events)",
            }
        )
    winner = int(res[E.X_WINNER])
    events[-1].update(
        winner_seat=winner + 1 if winner != E.DRAW else None,
        rounds=int(res[E.X_TURNS]),
        reason=E.END_NAMES[int(res[E.X_REASON])],
    )
    return events


def catalogue() -> list[dict]:
    """The card types (the cards themselves are data: ``balance trisk cards``)."""
    return [{"id": i, "name": t} for i, t in enumerate(TYPES)]
