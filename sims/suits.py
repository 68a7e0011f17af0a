"""The four-suits RPG: the rules engine (rulebook ``rules/four-suits-rpg.txt``,
rulings S1–S5 and the decided points SD1–SD11 in ``docs/rulings.md``).

Each character owns a deck of 54 playing cards (S1): values 2–10, J 11, Q 12,
K 13, A 14 in four suits, and two Jokers, wild: any suit, value 14. Card ids
0..51 are ``suit * 13 + value - 2`` with the suits in initiative order
(Spades 0, Diamonds 1, Clubs 2, Hearts 3: Spades act first); ids 52.. are the
Jokers. A character holds a hand of 5 and refills it after every play; its
deck is its life (S3).

Two kinds of play, two kernels:

- **Tasks** (S2) are unopposed: a suit and a target 2–14. ``task_play`` finds
  the play a sensible character makes from a hand: one card of the task's
  suit meeting the target (the lowest such natural card, a Joker only when no
  natural card will do), else (Difficult) two cards of one other suit both
  meeting it (the cheapest pair), else the attempt fails and the character
  still plays ``failed_task_cards`` cards, its lowest (SD1: "the PC must play
  one or more cards"). ``task_fresh`` counts successes over fresh 5-card hands
  (the exact oracle in ``sims.suits_oracle`` gives the same probabilities);
  ``task_rundown`` lets characters attempt the same task over and over until
  disabled and counts, per attempt, what happened.
- **Struggles** (S4) are opposed: ``simulate`` plays one character against
  another (two strategies, ``strategies.suits``) in seat-swapped pairs over
  the same pair of decks, per the engine contract (``kernels.contract``).

Rules vector: ``RULES`` below, one ``Rule`` per key (its default, bounds and
meaning), in vector order.

Other decided points (not knobs), each in docs/rulings.md: SD6 a character
whose hand is empty at its turn or when it is attacked first draws up to a
full hand (else it could never play again); SD7 the initiative card is chosen
by the strategy, a Joker counts as the Ace of Spades' equal (value 14, Spades),
equal cards are settled by a fair coin (rock-paper-scissors), and no strategy
replaces its initiative card later; SD8 a deck emptied by damage disables its
character at its next draw (S3: "empty after drawing"), and every discard is
public, so a strategy may count the cards its opponent has left; S3 a
character forced to discard every card it has left (damage at least its deck
and hand together) is dead, whichever source it takes the damage from; SD11 a
character may decline to attack on its turn (S4: "you may take one action"):
the strategy scores declining beside its attacks (the ``decline`` feature).
Declining plays no card, so nothing is drawn; two characters that always
decline reach the round cap, a draw. The scripted policies never decline.
"""

import numpy as np

from kernels import rng
from kernels.aggregate import pair_outcomes
from kernels.contract import Rule, rule_tables
from kernels.jit import chunked, leaf, n_chunks_of, njit
from kernels.trace import track_score
from strategies.suits import (
    P_ATTACK,
    P_DEFEND,
    P_INITIATIVE,
    P_WIN_AT,
    damage_from_hand,
    pick,
    uses_odds,
)
from strategies.suits.view import NF

GAME = "suits"
VERSION = "1.1.0"  # bump whenever simulated behaviour changes
# 1.1.0 (issue 13): a Difficult pair is worth its highest card and both cards must meet
# the opposing value (SD2, pair_value); damage at least the cards left kills (S3); a
# character may decline to attack (SD11, the strategies' decline feature)

SUITS = ("Spades", "Diamonds", "Clubs", "Hearts")  # initiative order (rulebook)
SUIT_SYMBOLS = ("♠", "♦", "♣", "♥")
SUIT_PURPOSE = ("finesse", "intellect", "brute force", "fortitude")
SPADES, DIAMONDS, CLUBS, HEARTS = 0, 1, 2, 3
VALUE_NAMES = {11: "J", 12: "Q", 13: "K", 14: "A"}
N_NATURAL = 52
MAX_DECK = 56  # 52 + up to 4 Jokers
MAX_HAND = 13

# ---- rules vector ------------------------------------------------------------
# Every rules key, once: its default, bounds and meaning, in vector order.
RULES = (
    Rule("hand_size", 5, 2, MAX_HAND, "S2: cards in a full hand, refilled after every play"),
    Rule("jokers", 2, 0, 4, "S1: Jokers in a deck (54 cards: two Jokers)"),
    Rule("joker_value", 14, 2, 14, "S1: a Joker is wild, of this card value"),
    Rule(
        "failed_task_cards",
        1,
        1,
        2,
        "[SD1] cards a failed Task attempt still plays (its lowest)",
    ),
    Rule(
        "struggle_suits",
        False,
        None,
        None,
        "S4: suits do not matter in struggles; true: an attack must be of "
        "attack_suit and an answer of defend_suit (Jokers wild), else a Difficult "
        "pair of one other suit [SD2]",
    ),
    Rule(
        "attack_suit",
        CLUBS,
        0,
        3,
        "[SD2] (only with struggle_suits) the suit of an attack: Clubs, brute force "
        "(0 Spades, 1 Diamonds, 2 Clubs, 3 Hearts)",
    ),
    Rule(
        "defend_suit",
        HEARTS,
        0,
        3,
        "[SD2] (only with struggle_suits) the suit of an answer: Hearts, fortitude",
    ),
    Rule("ties_to_attacker", False, None, None, "S4: false, a tie goes to the defender"),
    Rule(
        "min_damage",
        0,
        0,
        3,
        "[SD3] a winning attack deals at least this much (0: exactly the difference, S4)",
    ),
    Rule(
        "refill_after_damage",
        False,
        None,
        None,
        "[SD4] false: cards discarded from the hand as damage are replaced only at "
        'the next play (the text refills "once you\'ve played your card(s)")',
    ),
    Rule(
        "struggle_end",
        0,
        0,
        1,
        "[SD5] 0: a struggle ends when a character is disabled; 1: it goes on until "
        "one is dead (a disabled character neither acts nor answers)",
    ),
    Rule(
        "max_rounds",
        200,
        1,
        10000,
        "round cap: a struggle not decided after this many rounds is a draw (round_cap)",
    ),
    Rule(
        "pass_cycles",
        True,
        None,
        None,
        "[SD10] a character with no legal attack (only with struggle_suits) "
        "discards its lowest card and draws back up to a full hand (as after any "
        "play), instead of doing nothing",
    ),
    Rule(
        "pair_value",
        0,
        0,
        2,
        "[SD2] (only with struggle_suits) what a Difficult pair is worth in a "
        "struggle: 0 its highest card, and it succeeds only if both cards meet the "
        'opposing card value (rulebook: "both must beat the minimum target number. '
        'Only the highest counts"; an answer pair that fails counts for nothing); '
        "1 its lower card (the toolkit's reading before 1.1.0); 2 its highest card "
        "alone (the lower card need not meet anything)",
    ),
)
RULE_FIELDS, DEFAULT_RULES, RULE_LIMITS = rule_tables(RULES)
(
    R_HAND,
    R_JOKERS,
    R_JOKER_VALUE,
    R_FAILED,
    R_SUITS,
    R_ATTACK_SUIT,
    R_DEFEND_SUIT,
    R_TIES_ATTACKER,
    R_MIN_DAMAGE,
    R_REFILL_DAMAGE,
    R_END,
    R_MAX_ROUNDS,
    R_PASS_CYCLES,
    R_PAIR_VALUE,
) = range(len(RULE_FIELDS))
# pair_value codes (SD2): what a Difficult pair played in a struggle is worth
PAIR_HIGHEST, PAIR_LOWEST, PAIR_HIGHEST_ALONE = 0, 1, 2


def max_length(rules: dict) -> int:
    """The most rounds a game can last under ``rules`` (rules keys; missing
    ones take their defaults): the width of the runner's game-length
    histogram."""
    return int({**DEFAULT_RULES, **rules}["max_rounds"])


def check_rules(cfg: dict) -> list[str]:
    """What is wrong with a whole ruleset whose every key is within its bounds
    (empty: nothing). "Each player has a full deck of playing cards, jokers
    included"; "they each draw a hand of 5"; "Once a player draws their entire
    deck then they become disabled": a hand of the whole deck (or more) would
    disable a character before it plays, so a hand must be smaller than its
    deck of ``N_NATURAL`` + ``jokers`` cards."""
    deck = N_NATURAL + int(cfg["jokers"])
    hand = int(cfg["hand_size"])
    if hand >= deck:
        return [
            f"a hand of hand_size = {hand} cards is the whole {deck}-card deck "
            "(a character would be disabled before it plays); it must be smaller"
        ]
    return []


def encode_rules(cfg: dict, table=None) -> np.ndarray:
    """The int64 rules vector for a resolved ruleset (``RULE_FIELDS`` order).
    The four-suits RPG has no card sets: ``table`` must be None."""
    if table is not None:
        raise ValueError("the four-suits RPG has no card sets: encode_rules takes no card table")
    return np.array([int(cfg[name]) for name in RULE_FIELDS], dtype=np.int64)


# every stream is keyed by the seat: the two games of a deal are one game with the
# strategies swapped (kernels.contract.Engine.PAIR_STREAMS)
PAIR_STREAMS = "seat"

# ---- outcome codes -----------------------------------------------------------
DRAW = -1
END_DISABLED = 0  # the loser drew its last card (S3)
END_DEAD = 1  # the loser was forced to discard every card it had left, deck and hand (S3)
END_BOTH = (
    2  # both were disabled in the same exchange (or, fighting to the death, both lie disabled)
)
END_CAP = 3  # round cap: a draw
END_NAMES = ("disabled", "dead", "both_disabled", "round_cap")

# task outcomes and modes
TASK_FAIL, TASK_IN_SUIT, TASK_DIFFICULT = 0, 1, 2
MODE_IN_SUIT, MODE_DIFFICULT, MODE_EITHER = 0, 1, 2
MODES = ("in_suit", "difficult", "either")

# ---- per-game score-trace metrics (histogram sizes for the runner) -------------
# The score of a round is seat 0's cards left (deck + hand) minus seat 1's.
METRICS = {
    "lead_changes": 64,
    "max_deficit": 55,
    "decided_pct": 101,
    "exchanges": 402,  # attacks made (answered or not)
    "answers": 402,  # attacks answered with a card
    "ties": 64,  # attacks answered with an equal card value
    "first_result": 3,  # the first mover's result: 0 loss, 1 draw, 2 win
    "disabled_at": 402,  # the attack after which a character was first disabled
    "dead_at": 402,  # ... first dead (-1: never, not counted)
    "declines": 402,
}  # turns a character declined to attack (SD11)

# ---- result row ----------------------------------------------------------------
(
    X_WINNER,
    X_ROUNDS,
    X_REASON,
    X_LEFT0,
    X_LEFT1,
    X_LEAD,
    X_MAXDEF0,
    X_MAXDEF1,
    X_NOTAHEAD0,
    X_NOTAHEAD1,
    X_EXCH,
    X_TIES,
    X_FIRST,
    X_HITS0,
    X_HITS1,
    X_DMG0,
    X_DMG1,
    X_DISABLED_AT,
    X_DIS0,
    X_DIS1,
    X_DEAD0,
    X_DEAD1,
    X_CONSERVED,
    X_MAX_HAND,
    X_PASSES,
    X_ANSWERS,
    X_DEAD_AT,
    X_ICARD0,
    X_ICARD1,
    X_DECLINES,
) = range(30)
N_RESULT = 30

# ---- trace log: one row per turn ------------------------------------------------
# (a turn without an attack, a pass, has ``L_A1 = -1``; ``L_PASS`` is the card
# it traded under SD10, -1 none; ``L_DECLINED`` is 1 when it chose not to
# attack (SD11). ``L_CVA``/``L_CVD`` are the attack's and the answer's card
# values; ``L_VOID`` is 1 when the answer was a Difficult pair whose lower card
# did not meet the attack, so it counted for nothing (SD2))
(
    L_ROUND,
    L_SEAT,
    L_A1,
    L_A2,
    L_CVA,
    L_D1,
    L_D2,
    L_CVD,
    L_DAMAGE,
    L_FROM_HAND,
    L_FROM_DECK,
    L_LEFT_A,
    L_LEFT_D,
    L_DIS_A,
    L_DIS_D,
    L_DEAD_D,
    L_PASS,
    L_DECLINED,
    L_VOID,
) = range(19)
LOG_WIDTH = 19

# ---- per-seat integer state (``ints[seat, k]``) -----------------------------------
I_DPOS, I_DTOT, I_HN, I_INIT, I_DIS, I_DEAD, I_DISC = range(7)
N_INTS = 7

# what a turn was (``_turn``): an attack, a pass (no legal attack, SD10, or
# disabled by its SD6 draw) or a decline (SD11)
TURN_PASS, TURN_ATTACK, TURN_DECLINE = 0, 1, 2

INV14 = 1.0 / 14.0
MAXC = 1 + MAX_HAND + MAX_HAND * (MAX_HAND - 1) // 2  # candidates: none + singles + pairs


# ---- cards ---------------------------------------------------------------------
@leaf
def card_value(c, joker_value):
    """S1: 2–10, J 11, Q 12, K 13, A 14; a Joker is ``joker_value``."""
    if c >= N_NATURAL:
        return joker_value
    return c % 13 + 2


@leaf
def card_suit(c):
    """Suit index (Spades 0 … Hearts 3); -1 for a Joker (wild)."""
    if c >= N_NATURAL:
        return -1
    return c // 13


def card_id(text: str) -> int:
    """``'Q♣'``/``'QC'``/``'10h'``/``'joker'`` → card id (for tests and traces)."""
    t = text.strip().upper()
    if t in ("JOKER", "JK", "★"):
        return N_NATURAL
    sym = {"♠": 0, "S": 0, "♦": 1, "D": 1, "♣": 2, "C": 2, "♥": 3, "H": 3}
    suit = sym.get(t[-1]) if t else None
    rank = t[:-1]
    values = {"J": 11, "Q": 12, "K": 13, "A": 14}
    if suit is None or not (rank in values or (rank.isdigit() and 2 <= int(rank) <= 10)):
        raise ValueError(
            f"unknown card '{text}'; a card is a rank 2-10/J/Q/K/A and a suit "
            "S/D/C/H (or ♠♦♣♥), or 'joker'"
        )
    v = values[rank] if rank in values else int(rank)
    return suit * 13 + v - 2


def card_name(c: int) -> str:
    """``'Q♣'``; Jokers are ``'Joker'``."""
    c = int(c)
    if c >= N_NATURAL:
        return "Joker"
    v = c % 13 + 2
    return f"{VALUE_NAMES.get(v, str(v))}{SUIT_SYMBOLS[c // 13]}"


def value_name(v: int) -> str:
    return VALUE_NAMES.get(int(v), str(int(v)))


# ---- tasks (S2) ----------------------------------------------------------------
@leaf
def task_play(hand, hn, suit, target, mode, joker_value, out):
    """The play a character makes for a Task of ``suit`` and ``target`` from
    ``hand[:hn]``: writes the hand indices of the cards it plays to
    ``out[0]``, ``out[1]`` (-1: none) and returns ``TASK_IN_SUIT``,
    ``TASK_DIFFICULT`` or ``TASK_FAIL``.

    ``mode``: ``MODE_IN_SUIT`` tries only the task's suit, ``MODE_DIFFICULT``
    only a Difficult pair (a character acting out of its suit), and
    ``MODE_EITHER`` the suit first, then a pair. In suit, the lowest natural
    card that meets the target is played, a Joker only when no natural card
    will do. A Difficult pair is two cards of one other suit (a Joker is any
    suit) that both meet the target: the pair using the fewest Jokers, then
    the lowest total. A failed attempt writes nothing here (``fail_play``
    picks what it costs)."""
    out[0] = -1
    out[1] = -1
    if mode != MODE_DIFFICULT:
        best = -1
        best_v = 99
        joker = -1
        for i in range(hn):
            c = hand[i]
            if c >= N_NATURAL:
                if joker < 0 and joker_value >= target:
                    joker = i
            elif c // 13 == suit:
                v = c % 13 + 2
                if v >= target and v < best_v:
                    best_v = v
                    best = i
        if best >= 0:
            out[0] = best
            return TASK_IN_SUIT
        if joker >= 0:
            out[0] = joker
            return TASK_IN_SUIT
    if mode == MODE_IN_SUIT:
        return TASK_FAIL
    # Difficult: per other suit, its two lowest natural cards meeting the target
    j1 = -1
    j2 = -1
    for i in range(hn):
        if hand[i] >= N_NATURAL and joker_value >= target:
            if j1 < 0:
                j1 = i
            elif j2 < 0:
                j2 = i
    best_cost = 1 << 30
    for s in range(4):
        if s == suit:
            continue
        lo1 = -1
        lo2 = -1
        for i in range(hn):
            c = hand[i]
            if c < N_NATURAL and c // 13 == s and c % 13 + 2 >= target:
                if lo1 < 0 or c < hand[lo1]:
                    lo2 = lo1
                    lo1 = i
                elif lo2 < 0 or c < hand[lo2]:
                    lo2 = i
        # cost: 100 per Joker used, then the values played
        if lo2 >= 0:
            cost = (hand[lo1] % 13 + 2) + (hand[lo2] % 13 + 2)
            if cost < best_cost:
                best_cost = cost
                out[0] = lo1
                out[1] = lo2
        elif lo1 >= 0 and j1 >= 0:
            cost = 100 + (hand[lo1] % 13 + 2) + joker_value
            if cost < best_cost:
                best_cost = cost
                out[0] = lo1
                out[1] = j1
    if out[0] < 0 and j2 >= 0:
        out[0] = j1
        out[1] = j2
    if out[0] >= 0:
        return TASK_DIFFICULT
    return TASK_FAIL


@leaf
def fail_play(hand, hn, n_cards, joker_value, out):
    """SD1: a failed Task still plays ``n_cards`` cards: the lowest in hand
    (a Joker last). Writes their hand indices to ``out[0]``, ``out[1]``."""
    out[0] = -1
    out[1] = -1
    for k in range(min(n_cards, hn)):
        best = -1
        best_v = 99
        for i in range(hn):
            if i == out[0]:
                continue
            c = hand[i]
            v = card_value(c, joker_value) + (20 if c >= N_NATURAL else 0)
            if v < best_v:
                best_v = v
                best = i
        out[k] = best


@leaf
def _remove2(hand, hn, i, j):
    """Remove hand indices ``i`` and ``j`` (-1: none) keeping the order; the new size."""
    m = 0
    for k in range(hn):
        if k != i and k != j:
            hand[m] = hand[k]
            m += 1
    return m


@leaf
def _deal(deck, jokers, state):
    """A shuffled character deck (52 cards and ``jokers`` Jokers); its size."""
    n = N_NATURAL + jokers
    for c in range(n):
        deck[c] = c
    rng.shuffle(state, deck, n)
    return n


@leaf
def _refill(deck, st, hand, hand_size):
    """Draw up to ``hand_size`` from ``deck``; ``st`` is the seat's integer
    state (``I_DPOS``, ``I_DTOT``, ``I_HN``). Returns True when the deck is
    empty after drawing: the character is disabled (S3)."""
    while st[I_HN] < hand_size and st[I_DPOS] < st[I_DTOT]:
        hand[st[I_HN]] = deck[st[I_DPOS]]
        st[I_HN] += 1
        st[I_DPOS] += 1
    return st[I_DPOS] >= st[I_DTOT]


@leaf
def _partial_hand(deck, n, hand_size, state, hand, swaps):
    """A fresh hand: the first ``hand_size`` cards of a Fisher–Yates shuffle
    of ``deck[:n]`` (only as many swaps as cards drawn). ``deck`` must hold
    ``0..n-1``; the swaps are undone afterwards, so every hand depends on its
    own stream alone."""
    for k in range(hand_size):
        j = k + rng.randint(state, n - k)
        swaps[k] = j
        t = deck[k]
        deck[k] = deck[j]
        deck[j] = t
        hand[k] = deck[k]
    for k in range(hand_size - 1, -1, -1):
        j = swaps[k]
        t = deck[k]
        deck[k] = deck[j]
        deck[j] = t


@njit
def task_fresh_counts(rules, suit, target, seed, first, n, out):
    """Fresh 5-card hands ``first .. first + n - 1`` of ``seed`` (stream
    ``(seed, i, PURPOSE_DEAL)``) for a Task of ``suit`` and ``target``: adds
    to ``out`` (int64[6]) the successes in suit, Difficult and either way,
    then the cards the either-way play costs, the hands with a Joker, and the
    hands counted."""
    state = np.zeros(4, dtype=np.uint64)
    deck = np.empty(MAX_DECK, dtype=np.int64)
    hand = np.empty(MAX_HAND, dtype=np.int64)
    swaps = np.empty(MAX_HAND, dtype=np.int64)
    pl = np.empty(2, dtype=np.int64)
    hs = rules[R_HAND]
    jv = rules[R_JOKER_VALUE]
    nd = N_NATURAL + rules[R_JOKERS]
    for c in range(nd):
        deck[c] = c
    for i in range(first, first + n):
        rng.seed_state(state, seed, i, rng.PURPOSE_DEAL)
        _partial_hand(deck, nd, hs, state, hand, swaps)
        if task_play(hand, hs, suit, target, MODE_IN_SUIT, jv, pl) == TASK_IN_SUIT:
            out[0] += 1
        if task_play(hand, hs, suit, target, MODE_DIFFICULT, jv, pl) == TASK_DIFFICULT:
            out[1] += 1
        kind = task_play(hand, hs, suit, target, MODE_EITHER, jv, pl)
        if kind != TASK_FAIL:
            out[2] += 1
            out[3] += 1 if kind == TASK_IN_SUIT else 2
        else:
            out[3] += min(rules[R_FAILED], hs)
        for k in range(hs):
            if hand[k] >= N_NATURAL:
                out[4] += 1
                break
        out[5] += 1


TASK_CHUNK = 4096


@chunked
def _task_fresh(c0, c1, rules, suit, target, seed, first, n, out):
    for c in range(c0, c1):
        lo = first + c * TASK_CHUNK
        task_fresh_counts(rules, suit, target, seed, lo, min(TASK_CHUNK, first + n - lo), out[c])


def task_fresh(rules, suit: int, target: int, seed: int, first: int, n: int) -> np.ndarray:
    """Counts over fresh hands (see ``task_fresh_counts``): int64[6]. The
    result depends on ``(seed, first, n)`` only, never on the thread count."""
    rules = np.asarray(rules, np.int64)
    n_chunks = max(1, n_chunks_of(n, TASK_CHUNK))
    out = np.zeros((n_chunks, 6), dtype=np.int64)
    _task_fresh(
        n,
        TASK_CHUNK,
        rules,
        int(suit),
        int(target),
        np.uint64(seed),
        int(first),
        int(n),
        out,
    )
    return out.sum(axis=0)


# run-down counters (``task_rundown``): per attempt k < max_k, then per deck size
RD_ATTEMPTS, RD_SUCCESS, RD_DIFFICULT, RD_CARDS = range(4)  # rows of by_attempt / by_deck


@leaf
def _rundown(
    rules, suit, target, mode, seed, i, max_k, by_attempt, by_deck, state, deck, hand, st, pl
):
    """Character ``i`` (stream ``(seed, i, PURPOSE_DEAL)``) attempts the same
    Task again and again until it is disabled (S3). Adds, for its k-th attempt
    (k < max_k; later ones pool into the last column) and for the deck size
    before the attempt: attempts, successes, Difficult successes and cards
    played. Returns (attempts, successes); the other arrays are work space."""
    hs = rules[R_HAND]
    jv = rules[R_JOKER_VALUE]
    rng.seed_state(state, seed, i, rng.PURPOSE_DEAL)
    st[I_DTOT] = _deal(deck, rules[R_JOKERS], state)
    st[I_DPOS] = 0
    st[I_HN] = 0
    disabled = _refill(deck, st, hand, hs)
    k = 0
    wins = 0
    while not disabled and st[I_HN] > 0:
        left = st[I_DTOT] - st[I_DPOS]
        kind = task_play(hand, st[I_HN], suit, target, mode, jv, pl)
        if kind == TASK_FAIL:
            fail_play(hand, st[I_HN], rules[R_FAILED], jv, pl)
        cards = (1 if pl[0] >= 0 else 0) + (1 if pl[1] >= 0 else 0)
        st[I_HN] = _remove2(hand, st[I_HN], pl[0], pl[1])
        kk = min(k, max_k - 1)
        by_attempt[RD_ATTEMPTS, kk] += 1
        by_deck[RD_ATTEMPTS, left] += 1
        by_attempt[RD_CARDS, kk] += cards
        by_deck[RD_CARDS, left] += cards
        if kind != TASK_FAIL:
            wins += 1
            by_attempt[RD_SUCCESS, kk] += 1
            by_deck[RD_SUCCESS, left] += 1
            if kind == TASK_DIFFICULT:
                by_attempt[RD_DIFFICULT, kk] += 1
                by_deck[RD_DIFFICULT, left] += 1
        k += 1
        disabled = _refill(deck, st, hand, hs)
    return k, wins


RUNDOWN_CHUNK = 256
MAX_ATTEMPTS = 64  # attempt columns kept (a deck lasts at most 54 - hand_size attempts)


@chunked
def _task_rundown(c0, c1, rules, suit, target, mode, seed, first, n, by_attempt, by_deck, hist):
    for c in range(c0, c1):
        state = np.zeros(4, dtype=np.uint64)
        deck = np.empty(MAX_DECK, dtype=np.int64)
        hand = np.empty(MAX_HAND, dtype=np.int64)
        st = np.zeros(N_INTS, dtype=np.int64)
        pl = np.empty(2, dtype=np.int64)
        for i in range(first + c * RUNDOWN_CHUNK, min(first + n, first + (c + 1) * RUNDOWN_CHUNK)):
            k, w = _rundown(
                rules,
                suit,
                target,
                mode,
                seed,
                i,
                MAX_ATTEMPTS,
                by_attempt[c],
                by_deck[c],
                state,
                deck,
                hand,
                st,
                pl,
            )
            hist[c, 0, min(k, MAX_ATTEMPTS - 1)] += 1
            hist[c, 1, min(w, MAX_ATTEMPTS - 1)] += 1


def task_rundown(rules, suit: int, target: int, mode: int, seed: int, first: int, n: int) -> dict:
    """Characters ``first .. first + n - 1`` each attempt the same Task until
    disabled. Returns int64 arrays: ``by_attempt[4, MAX_ATTEMPTS]`` and
    ``by_deck[4, MAX_DECK]`` (rows ``RD_ATTEMPTS``, ``RD_SUCCESS``,
    ``RD_DIFFICULT``, ``RD_CARDS``; columns the attempt's index, or the cards
    left in the deck before it), ``attempts_hist`` and ``successes_hist``
    (characters by attempts made, by successes, before being disabled)."""
    rules = np.asarray(rules, np.int64)
    n_chunks = max(1, n_chunks_of(n, RUNDOWN_CHUNK))
    by_attempt = np.zeros((n_chunks, 4, MAX_ATTEMPTS), dtype=np.int64)
    by_deck = np.zeros((n_chunks, 4, MAX_DECK), dtype=np.int64)
    hist = np.zeros((n_chunks, 2, MAX_ATTEMPTS), dtype=np.int64)
    _task_rundown(
        n,
        RUNDOWN_CHUNK,
        rules,
        int(suit),
        int(target),
        int(mode),
        np.uint64(seed),
        int(first),
        int(n),
        by_attempt,
        by_deck,
        hist,
    )
    h = hist.sum(axis=0)
    return {
        "by_attempt": by_attempt.sum(axis=0),
        "by_deck": by_deck.sum(axis=0),
        "attempts_hist": h[0],
        "successes_hist": h[1],
    }


# ---- struggles (S3, S4) ---------------------------------------------------------
@leaf
def _play_range(hand, i, j, joker_value):
    """The lower and the higher card value of a play (hand indices ``i``,
    ``j``; ``j = -1``: one card, both are its value)."""
    lo = card_value(hand[i], joker_value)
    hi = lo
    if j >= 0:
        w = card_value(hand[j], joker_value)
        if w < lo:
            lo = w
        else:
            hi = w
    return lo, hi


@leaf
def _card_value_of(rules, lo, hi):
    """SD2: the card value of a play whose cards run ``lo``..``hi``: "Only the
    highest counts for determining the value of the card played", or the
    lower card with ``pair_value = 1``."""
    return lo if rules[R_PAIR_VALUE] == PAIR_LOWEST else hi


@leaf
def _floor_of(rules, lo, hi):
    """SD2: the value that must beat (meet, for an answer) the opposing card
    value for a play to succeed: "both must beat the minimum target number",
    so a Difficult pair's lower card; its card value with ``pair_value`` 1
    or 2 (a single card: its value)."""
    return hi if rules[R_PAIR_VALUE] == PAIR_HIGHEST_ALONE else lo


@leaf
def _resolve(rules, a_lo, a_hi, d_lo, d_hi, d_pair, answered):
    """S4, SD2, SD3: an attack whose cards' values run ``a_lo``..``a_hi``
    meets an answer ``d_lo``..``d_hi`` (``d_pair``: a Difficult pair;
    ``answered`` False: no answer). Returns ``(hit, damage, counted, tie)``.

    The higher card value wins, a tie to the defender (to the attacker with
    ``ties_to_attacker``); a winning attack deals the difference (at least
    ``min_damage``). With ``pair_value = 0`` a Difficult play must have both
    cards meet the opposing card value, its "minimum target number": an
    attack pair hits only if its lower card beats the answer's value, and an
    answer pair whose lower card does not meet the attack's value fails and
    counts for nothing (``counted`` False: the attack meets 0, as with no
    answer). ``tie``: the tie rule decided the exchange (equal values met)."""
    tta = rules[R_TIES_ATTACKER] != 0
    cva = _card_value_of(rules, a_lo, a_hi)
    floor_a = _floor_of(rules, a_lo, a_hi)
    counted = answered
    tie = False
    cvd = 0
    if answered:
        if d_pair and rules[R_PAIR_VALUE] == PAIR_HIGHEST:
            if d_lo == cva:
                tie = True
            if d_lo < cva or (tta and d_lo == cva):
                counted = False
        if counted:
            cvd = _card_value_of(rules, d_lo, d_hi)
            if floor_a == cvd:
                tie = True
    hit = floor_a > cvd or (tta and floor_a == cvd)
    damage = 0
    if hit:
        damage = max(cva - cvd, rules[R_MIN_DAMAGE])
    return hit, damage, counted, tie


@leaf
def _plays(rules, hand, hn, suit_req, with_none, ci, cj):
    """The legal plays from ``hand[:hn]`` as hand indices ``(ci[k], cj[k])``
    (``cj = -1``: one card; ``ci = -1``: no answer, first when ``with_none``).
    Without ``struggle_suits`` every card is a play (S4); with it, a card of
    ``suit_req`` or a Joker, or a Difficult pair of one other suit (SD2)."""
    n = 0
    if with_none:
        ci[0] = -1
        cj[0] = -1
        n = 1
    suits = rules[R_SUITS]
    for i in range(hn):
        su = card_suit(hand[i])
        if not suits or su < 0 or su == suit_req:
            ci[n] = i
            cj[n] = -1
            n += 1
    if suits:
        for i in range(hn):
            si = card_suit(hand[i])
            if si == suit_req:
                continue
            for j in range(i + 1, hn):
                sj = card_suit(hand[j])
                if sj == suit_req:
                    continue
                if si < 0 or sj < 0 or si == sj:
                    ci[n] = i
                    cj[n] = j
                    n += 1
    return n


@leaf
def _initiative_key(c, joker_value):
    """How early a card acts (SD7): suit order (Spades first), then value; a
    Joker is a Spade of value ``joker_value``."""
    if c >= N_NATURAL:
        return 3 * 16 + joker_value
    return (3 - c // 13) * 16 + c % 13 + 2


@leaf
def _discard(hand, seen, st, i, j, joker_value):
    """Discard hand cards ``i`` and ``j`` (-1: none) face up."""
    seen[card_value(hand[i], joker_value)] += 1
    st[I_DISC] += 1
    if j >= 0:
        seen[card_value(hand[j], joker_value)] += 1
        st[I_DISC] += 1
    st[I_HN] = _remove2(hand, st[I_HN], i, j)


@leaf
def _no_answer_odds(seen_opp, st_opp, strict, jokers, joker_value, odds):
    """``odds[v]`` (v = 2..14): the chance that the opponent's hand, a random
    draw from the cards it has not shown (SD8), holds no card of at least
    ``v`` (``strict``: above ``v``): C(n - g, h) / C(n, h), with ``g`` those
    cards among the ``n`` unseen and ``h`` the hand's size."""
    n = st_opp[I_DTOT] - st_opp[I_DPOS] + st_opp[I_HN]
    h = st_opp[I_HN]
    den = 1.0
    for k in range(h):
        den *= n - k
    inv = 1.0 / den if den > 0 else 0.0
    g = 0
    for v in range(14, 1, -1):
        if not strict:
            g += 4 + (jokers if v == joker_value else 0) - seen_opp[v]
        num = 1.0
        for k in range(h):
            num *= max(n - g - k, 0)
        odds[v] = num * inv
        if strict:
            g += 4 + (jokers if v == joker_value else 0) - seen_opp[v]


@leaf
def _take_damage(rules, params, noise, deck, hand, st, seen, d):
    """S3: discard ``d`` cards, each from the hand (its lowest card) or the top
    of the deck, the strategy's choice where both are possible. Returns the
    cards taken from the hand and from the deck, and 1 if the character died:
    "If a player is forced to discard every card (deck and hand both) then
    they're dead", so damage of at least its cards left kills, whichever
    source each point comes from (every card goes either way)."""
    jv = rules[R_JOKER_VALUE]
    hs = rules[R_HAND]
    from_hand = 0
    from_deck = 0
    if d <= 0:
        return 0, 0, 0
    low = -1  # the hand's lowest card (an Ace before a Joker), found when needed
    for _ in range(d):
        has_hand = st[I_HN] > 0
        left = st[I_DTOT] - st[I_DPOS]
        if not has_hand and left == 0:
            break  # nothing left to discard
        if has_hand and low < 0:
            low_key = 99
            for i in range(st[I_HN]):
                key = 2 * card_value(hand[i], jv) + (1 if hand[i] >= N_NATURAL else 0)
                if key < low_key:
                    low_key = key
                    low = i
        use_hand = has_hand
        if has_hand and left > 0:
            use_hand = damage_from_hand(
                params, card_value(hand[low], jv), st[I_HN], hs, left, noise
            )
        if use_hand:
            _discard(hand, seen, st, low, -1, jv)
            low = -1
            from_hand += 1
        else:
            seen[card_value(deck[st[I_DPOS]], jv)] += 1
            st[I_DPOS] += 1
            st[I_DISC] += 1
            from_deck += 1
    dead = 1 if st[I_HN] == 0 and st[I_DPOS] >= st[I_DTOT] else 0  # every card is gone
    return from_hand, from_deck, dead


@leaf
def _left(st):
    """Cards a character has left: deck and hand."""
    return st[I_DTOT] - st[I_DPOS] + st[I_HN]


@leaf
def _turn(
    rules,
    a,
    strat_a,
    strat_d,
    noise_a,
    noise_d,
    decks,
    hands,
    ints,
    seen,
    feats,
    ci,
    cj,
    odds,
    log_row,
    result,
):
    """Seat ``a`` takes its turn (S4): it attacks the other, or it declines
    (SD11), or it has no legal attack and passes (SD10). Returns
    ``TURN_ATTACK``, ``TURN_DECLINE`` or ``TURN_PASS``."""
    o = 1 - a
    jv = rules[R_JOKER_VALUE]
    hs = rules[R_HAND]
    tta = rules[R_TIES_ATTACKER] != 0
    sta = ints[a]
    std = ints[o]
    hand_a = hands[a]
    hand_d = hands[o]
    log_row[L_SEAT] = a
    for k in (L_A1, L_A2, L_D1, L_D2, L_PASS):
        log_row[k] = -1
    for k in (L_CVA, L_CVD, L_DAMAGE, L_FROM_HAND, L_FROM_DECK, L_DECLINED, L_VOID):
        log_row[k] = 0
    if sta[I_HN] == 0 and _refill(decks[a], sta, hand_a, hs):  # SD6
        sta[I_DIS] = 1
        _log_state(log_row, sta, std)
        return TURN_PASS  # disabled by that draw: it no longer acts (SD5)
    n = _plays(rules, hand_a, sta[I_HN], rules[R_ATTACK_SUIT], False, ci, cj)
    if n == 0:  # no legal attack (struggle_suits): a pass
        if rules[R_PASS_CYCLES] and sta[I_HN] > 0:  # SD10: it trades its lowest card
            fail_play(hand_a, sta[I_HN], 1, jv, ci)
            log_row[L_PASS] = hand_a[ci[0]]
            _discard(hand_a, seen[a], sta, ci[0], -1, jv)
            if _refill(decks[a], sta, hand_a, hs):  # back up to a full hand, as after any play
                sta[I_DIS] = 1
        _log_state(log_row, sta, std)
        return TURN_PASS
    win_at = strat_a[P_WIN_AT]
    weigh = uses_odds(strat_a)
    if weigh:  # only strategies that weigh the odds pay for them
        _no_answer_odds(seen[o], std, tta, rules[R_JOKERS], jv, odds)
    for k in range(n):
        lo, hi = _play_range(hand_a, ci[k], cj[k], jv)
        # the odds that the answer cannot stop it: its lower card must beat the answer (SD2)
        p = odds[_floor_of(rules, lo, hi)] if weigh else 0.0
        feats[k, 0] = _card_value_of(rules, lo, hi) * INV14
        feats[k, 1] = p
        feats[k, 2] = 1.0 if p >= win_at else 0.0
        feats[k, 3] = (
            1.0
            if (hand_a[ci[k]] >= N_NATURAL or (cj[k] >= 0 and hand_a[cj[k]] >= N_NATURAL))
            else 0.0
        )
        feats[k, 4] = 1.0 if cj[k] >= 0 else 0.0
        feats[k, 5] = 0.0
    # SD11: "you may take one action": declining is the last candidate (ties go to an attack)
    for f in range(5):
        feats[n, f] = 0.0
    feats[n, 5] = 1.0
    k = pick(strat_a, P_ATTACK, 6, feats, n + 1, noise_a)
    if k == n:  # it declines: no card is played, so none is drawn
        log_row[L_DECLINED] = 1
        result[X_DECLINES] += 1
        _log_state(log_row, sta, std)
        return TURN_DECLINE
    a_lo, a_hi = _play_range(hand_a, ci[k], cj[k], jv)
    cva = _card_value_of(rules, a_lo, a_hi)
    log_row[L_A1] = hand_a[ci[k]]
    log_row[L_A2] = hand_a[cj[k]] if cj[k] >= 0 else -1
    _discard(hand_a, seen[a], sta, ci[k], cj[k], jv)
    if _refill(decks[a], sta, hand_a, hs):
        sta[I_DIS] = 1
    # the answer
    d_lo = 0
    d_hi = 0
    d_pair = False
    answered = False
    log_row[L_D1] = -1
    log_row[L_D2] = -1
    if std[I_DIS] == 0 and std[I_HN] == 0 and _refill(decks[o], std, hand_d, hs):  # SD6
        std[I_DIS] = 1
    if std[I_DIS] == 0:
        n = _plays(rules, hand_d, std[I_HN], rules[R_DEFEND_SUIT], True, ci, cj)
        for k in range(n):
            if ci[k] < 0:
                hit, dmg, _c, _t = _resolve(rules, a_lo, a_hi, 0, 0, False, False)
                feats[k, 0] = 0.0
                feats[k, 2] = 0.0
                feats[k, 4] = 0.0
                feats[k, 5] = 0.0
            else:
                lo, hi = _play_range(hand_d, ci[k], cj[k], jv)
                hit, dmg, _c, _t = _resolve(rules, a_lo, a_hi, lo, hi, cj[k] >= 0, True)
                feats[k, 0] = 1.0
                feats[k, 2] = _card_value_of(rules, lo, hi) * INV14
                feats[k, 4] = (
                    1.0
                    if (hand_d[ci[k]] >= N_NATURAL or (cj[k] >= 0 and hand_d[cj[k]] >= N_NATURAL))
                    else 0.0
                )
                feats[k, 5] = 1.0 if cj[k] >= 0 else 0.0
            feats[k, 1] = 0.0 if hit else 1.0
            feats[k, 3] = dmg * INV14
        k = pick(strat_d, P_DEFEND, 6, feats, n, noise_d)
        if ci[k] >= 0:
            answered = True
            d_pair = cj[k] >= 0
            d_lo, d_hi = _play_range(hand_d, ci[k], cj[k], jv)
            log_row[L_D1] = hand_d[ci[k]]
            log_row[L_D2] = hand_d[cj[k]] if cj[k] >= 0 else -1
            _discard(hand_d, seen[o], std, ci[k], cj[k], jv)
            result[X_ANSWERS] += 1
            if _refill(decks[o], std, hand_d, hs):
                std[I_DIS] = 1
    hit, d, counted, tie = _resolve(rules, a_lo, a_hi, d_lo, d_hi, d_pair, answered)
    if answered and tie:
        result[X_TIES] += 1
    log_row[L_CVA] = cva
    log_row[L_CVD] = _card_value_of(rules, d_lo, d_hi) if answered else 0
    log_row[L_VOID] = 1 if answered and not counted else 0
    if hit:
        fh, fd, dead = _take_damage(rules, strat_d, noise_d, decks[o], hand_d, std, seen[o], d)
        result[X_HITS0 + a] += 1
        result[X_DMG0 + a] += fh + fd
        log_row[L_DAMAGE] = d
        log_row[L_FROM_HAND] = fh
        log_row[L_FROM_DECK] = fd
        if dead:
            std[I_DEAD] = 1
        elif rules[R_REFILL_DAMAGE] and std[I_DIS] == 0 and _refill(decks[o], std, hand_d, hs):
            std[I_DIS] = 1
    _log_state(log_row, sta, std)
    return TURN_ATTACK


@leaf
def _log_state(log_row, sta, std):
    """The end of a turn in its log row: cards left, disabled, dead."""
    log_row[L_LEFT_A] = _left(sta)
    log_row[L_LEFT_D] = _left(std)
    log_row[L_DIS_A] = sta[I_DIS]
    log_row[L_DIS_D] = std[I_DIS]
    log_row[L_DEAD_D] = std[I_DEAD]


@leaf
def _over(rules, ints):
    """-2 while the struggle goes on; else the winning seat, or -1 for a draw.
    ``struggle_end`` 0: the first character disabled (or dead) loses; 1: the
    first one dead loses (SD5)."""
    out0 = ints[0, I_DEAD] != 0 or (rules[R_END] == 0 and ints[0, I_DIS] != 0)
    out1 = ints[1, I_DEAD] != 0 or (rules[R_END] == 0 and ints[1, I_DIS] != 0)
    if out0 and out1:
        return -1
    if out0:
        return 1
    if out1:
        return 0
    if ints[0, I_DIS] != 0 and ints[1, I_DIS] != 0:  # both lie disabled: nobody can act
        return -1
    return -2


@leaf
def _start(rules, seed, deal, rngs, decks, hands, ints, seen, result):
    for s in range(2):
        rng.seed_state(rngs[s], seed, deal, rng.PURPOSE_GAME + s)  # seat s's deck
        rng.seed_state(rngs[2 + s], seed, deal, rng.PURPOSE_SEAT0 + s)  # seat s's noise
    rng.seed_state(rngs[4], seed, deal, rng.PURPOSE_COIN)
    for s in range(2):
        for k in range(N_INTS):
            ints[s, k] = 0
        for v in range(16):
            seen[s, v] = 0
        ints[s, I_DTOT] = _deal(decks[s], rules[R_JOKERS], rngs[s])
        ints[s, I_INIT] = -1
        if _refill(decks[s], ints[s], hands[s], rules[R_HAND]):
            ints[s, I_DIS] = 1
    for k in range(N_RESULT):
        result[k] = 0


@leaf
def _play(
    rules,
    strat0,
    strat1,
    rngs,
    decks,
    hands,
    ints,
    seen,
    feats,
    ci,
    cj,
    sc,
    odds,
    log,
    do_log,
    result,
):
    jv = rules[R_JOKER_VALUE]
    hs = rules[R_HAND]
    # initiative (SD7): each plays a card; Spades, Diamonds, Clubs, Hearts, then value
    keys = sc[6:8]
    for s in range(2):
        st = ints[s]
        if st[I_HN] == 0:
            keys[s] = -1
            result[X_ICARD0 + s] = -1
            continue
        strat = strat0 if s == 0 else strat1
        n = st[I_HN]
        for k in range(n):
            c = hands[s, k]
            feats[k, 0] = (_initiative_key(c, jv) - 2) / 60.0
            feats[k, 1] = card_value(c, jv) / 14.0
            feats[k, 2] = 1.0 if c >= N_NATURAL else 0.0
        k = pick(strat, P_INITIATIVE, 3, feats, n, rngs[2 + s])
        c = hands[s, k]
        keys[s] = _initiative_key(c, jv)
        st[I_INIT] = c
        result[X_ICARD0 + s] = c
        seen[s, card_value(c, jv)] += 1  # face up on the table
        st[I_HN] = _remove2(hands[s], st[I_HN], k, -1)
        if _refill(decks[s], st, hands[s], hs):
            st[I_DIS] = 1
    if keys[0] > keys[1]:
        first = 0
    elif keys[1] > keys[0]:
        first = 1
    else:  # rock-paper-scissors
        first = 0 if rng.uniform(rngs[4]) < 0.5 else 1
    result[X_FIRST] = first
    lead = sc[0:2]
    max_def = sc[2:4]
    not_ahead = sc[4:6]
    lead[0] = -1
    lead[1] = 0
    max_def[0] = 0
    max_def[1] = 0
    not_ahead[0] = 0
    not_ahead[1] = 0
    hp = sc[8:10]
    winner = _over(rules, ints)
    rounds = 0
    row = 0
    exch = 0
    while winner == -2 and rounds < rules[R_MAX_ROUNDS]:
        rounds += 1
        for t in range(2):
            s = first if t == 0 else 1 - first
            if ints[s, I_DIS] != 0 or ints[s, I_DEAD] != 0:
                continue
            strat_a = strat0 if s == 0 else strat1
            strat_d = strat1 if s == 0 else strat0
            r = min(row, log.shape[0] - 1)
            log[r, L_ROUND] = rounds
            acted = _turn(
                rules,
                s,
                strat_a,
                strat_d,
                rngs[2 + s],
                rngs[3 - s],
                decks,
                hands,
                ints,
                seen,
                feats,
                ci,
                cj,
                odds,
                log[r],
                result,
            )
            if do_log:
                row += 1  # every turn, passes too
            if acted == TURN_ATTACK:
                exch += 1
                if result[X_DISABLED_AT] == 0 and (ints[0, I_DIS] or ints[1, I_DIS]):
                    result[X_DISABLED_AT] = exch
                if result[X_DEAD_AT] == 0 and (ints[0, I_DEAD] or ints[1, I_DEAD]):
                    result[X_DEAD_AT] = exch
            elif acted == TURN_PASS:
                result[X_PASSES] += 1
            for s2 in range(2):
                result[X_MAX_HAND] = max(result[X_MAX_HAND], ints[s2, I_HN])
            winner = _over(rules, ints)
            if winner != -2:
                break
        hp[0] = _left(ints[0])
        hp[1] = _left(ints[1])
        track_score(hp, rounds, lead, max_def, not_ahead)
    if winner == -2:
        result[X_WINNER] = DRAW
        result[X_REASON] = END_CAP
    else:
        result[X_WINNER] = winner
        if winner == DRAW:
            result[X_REASON] = END_BOTH
        elif ints[1 - winner, I_DEAD] != 0:
            result[X_REASON] = END_DEAD
        else:
            result[X_REASON] = END_DISABLED
    result[X_ROUNDS] = rounds
    result[X_EXCH] = exch
    result[X_LEFT0] = _left(ints[0])
    result[X_LEFT1] = _left(ints[1])
    result[X_LEAD] = lead[1]
    result[X_MAXDEF0] = max_def[0]
    result[X_MAXDEF1] = max_def[1]
    result[X_NOTAHEAD0] = not_ahead[0]
    result[X_NOTAHEAD1] = not_ahead[1]
    ok = 1
    for s in range(2):
        result[X_DIS0 + s] = ints[s, I_DIS]
        result[X_DEAD0 + s] = ints[s, I_DEAD]
        held = 1 if ints[s, I_INIT] >= 0 else 0
        if _left(ints[s]) + ints[s, I_DISC] + held != ints[s, I_DTOT] or ints[s, I_HN] > hs:
            ok = 0
    result[X_CONSERVED] = ok
    return row


@njit
def _work():
    rngs = np.zeros((5, 4), dtype=np.uint64)
    decks = np.zeros((2, MAX_DECK), dtype=np.int64)
    hands = np.zeros((2, MAX_HAND), dtype=np.int64)
    ints = np.zeros((2, N_INTS), dtype=np.int64)
    seen = np.zeros((2, 16), dtype=np.int64)
    feats = np.zeros((MAXC, NF), dtype=np.float64)
    ci = np.zeros(MAXC, dtype=np.int64)
    cj = np.zeros(MAXC, dtype=np.int64)
    sc = np.zeros(10, dtype=np.int64)
    odds = np.zeros(16, dtype=np.float64)
    return rngs, decks, hands, ints, seen, feats, ci, cj, sc, odds


@njit
def play_game(rules, strat0, strat1, seed, deal, log, do_log, result):
    """Play one struggle of deal ``deal``; ``strat0`` sits in seat 0. With
    ``do_log``, one row per turn goes to ``log``; returns the rows written."""
    rngs, decks, hands, ints, seen, feats, ci, cj, sc, odds = _work()
    _start(rules, seed, deal, rngs, decks, hands, ints, seen, result)
    return _play(
        rules,
        strat0,
        strat1,
        rngs,
        decks,
        hands,
        ints,
        seen,
        feats,
        ci,
        cj,
        sc,
        odds,
        log,
        do_log,
        result,
    )


CHUNK = 64  # games per parallel task: each task allocates its work arrays once


@chunked
def _simulate(c0, c1, rules, strat_a, strat_b, seed, first_deal, n_deals, out):
    """Kernel: deal d is played as game 2d (A in seat 0) and 2d+1 (A in seat 1);
    chunks ``c0 .. c1 - 1`` of ``CHUNK`` games here."""
    n_games = 2 * n_deals
    for c in range(c0, c1):
        log = np.zeros((1, LOG_WIDTH), dtype=np.int64)
        res = np.zeros(N_RESULT, dtype=np.int64)
        rngs, decks, hands, ints, seen, feats, ci, cj, sc, odds = _work()
        for g in range(c * CHUNK, min(n_games, (c + 1) * CHUNK)):
            deal = first_deal + g // 2
            _start(rules, seed, deal, rngs, decks, hands, ints, seen, res)
            if g % 2 == 0:
                _play(
                    rules,
                    strat_a,
                    strat_b,
                    rngs,
                    decks,
                    hands,
                    ints,
                    seen,
                    feats,
                    ci,
                    cj,
                    sc,
                    odds,
                    log,
                    False,
                    res,
                )
            else:
                _play(
                    rules,
                    strat_b,
                    strat_a,
                    rngs,
                    decks,
                    hands,
                    ints,
                    seen,
                    feats,
                    ci,
                    cj,
                    sc,
                    odds,
                    log,
                    False,
                    res,
                )
            for k in range(N_RESULT):
                out[g, k] = res[k]


def warm_up(rules, strat) -> None:
    """Compile (or load) the kernels of the Task analyses as well as the
    struggle (``balance.warmup``): a few fresh hands and run-downs."""
    task_fresh(rules, CLUBS, 10, 1, 0, 8)
    task_rundown(rules, CLUBS, 10, MODE_EITHER, 1, 0, 2)


def simulate(rules, strat_a, strat_b, seed, first_game, n_games):
    """Play struggles ``first_game .. first_game + n_games`` of seed ``seed``.

    Games come in seat-swapped pairs over the same two decks: game ``2d``
    puts strategy A in seat 0 and game ``2d + 1`` puts it in seat 1, so each
    strategy plays each deck of the deal once; ``first_game`` and ``n_games``
    must be even. Returns a dict of int64 arrays, one entry per game:

    - ``winner_seat`` (-1 draw), ``a_seat``, ``a_points`` (A's half points),
      ``rounds`` (struggle rounds), ``reason`` (index into ``END_NAMES``);
    - ``left_seat0/1``: cards left (deck + hand) at the end;
    - score-trace metrics (score = seat 0's cards left minus seat 1's at each
      round's end): ``lead_changes``, ``max_deficit``, ``decided_pct``;
    - ``exchanges`` (attacks made), ``answers`` (attacks answered with a
      card), ``ties`` (answered with an equal card value: with ties to the
      defender, each one a save), ``passes`` (turns with no legal attack),
      ``declines`` (turns a character chose not to attack, SD11),
      ``first_seat`` (who acted first), ``first_result`` (its result: 0 loss,
      1 draw, 2 win), ``hits_seat0/1`` (attacks won), ``damage_seat0/1``
      (cards the seat's attacks discarded), ``disabled_at`` and ``dead_at``
      (the attack after which a character was first disabled, dead; -1 never),
      ``disabled_seat0/1``, ``dead_seat0/1``, ``initiative_card_seat0/1``,
      ``max_hand`` and ``conserved`` (1 when every card of both decks is in a
      deck, a hand, the discards or on the table as an initiative card).
    """
    if first_game % 2 or n_games % 2:
        raise ValueError("first_game and n_games must be even (seat-swapped pairs)")
    rules = np.asarray(rules, np.int64)
    sa, sb = np.asarray(strat_a, np.float64), np.asarray(strat_b, np.float64)
    out = np.zeros((n_games, N_RESULT), dtype=np.int64)
    _simulate(n_games, CHUNK, rules, sa, sb, np.uint64(seed), first_game // 2, n_games // 2, out)
    return outcome_arrays(out)


def outcome_arrays(out: np.ndarray) -> dict:
    """Per-game dict of arrays from the raw kernel rows (see ``simulate``)."""
    winner = out[:, X_WINNER]
    res = pair_outcomes(
        winner,
        out[:, X_ROUNDS],
        out[:, X_LEAD],
        out[:, X_MAXDEF0],
        out[:, X_MAXDEF1],
        out[:, X_NOTAHEAD0],
        out[:, X_NOTAHEAD1],
    )
    first = out[:, X_FIRST]
    res.update(
        {
            "rounds": out[:, X_ROUNDS],
            "reason": out[:, X_REASON],
            "left_seat0": out[:, X_LEFT0],
            "left_seat1": out[:, X_LEFT1],
            "exchanges": out[:, X_EXCH],
            "answers": out[:, X_ANSWERS],
            "ties": out[:, X_TIES],
            "passes": out[:, X_PASSES],
            "declines": out[:, X_DECLINES],
            "first_seat": first,
            "first_result": np.where(winner == DRAW, 1, np.where(winner == first, 2, 0)),
            "hits_seat0": out[:, X_HITS0],
            "hits_seat1": out[:, X_HITS1],
            "damage_seat0": out[:, X_DMG0],
            "damage_seat1": out[:, X_DMG1],
            "disabled_at": np.where(out[:, X_DISABLED_AT] > 0, out[:, X_DISABLED_AT], -1),
            "dead_at": np.where(out[:, X_DEAD_AT] > 0, out[:, X_DEAD_AT], -1),
            "disabled_seat0": out[:, X_DIS0],
            "disabled_seat1": out[:, X_DIS1],
            "dead_seat0": out[:, X_DEAD0],
            "dead_seat1": out[:, X_DEAD1],
            "initiative_card_seat0": out[:, X_ICARD0],
            "initiative_card_seat1": out[:, X_ICARD1],
            "max_hand": out[:, X_MAX_HAND],
            "conserved": out[:, X_CONSERVED],
        }
    )
    return res


def trace_log(rules, strat_a, strat_b, seed, game):
    """Replay struggle ``game`` with a turn-by-turn log: ``(log, result)``,
    ``log`` int64[turns, LOG_WIDTH], one row per turn taken (passes too). Game ``2d`` has A in seat 0, ``2d + 1``
    has A in seat 1 (as in ``simulate``)."""
    rules = np.asarray(rules, np.int64)
    sa, sb = np.asarray(strat_a, np.float64), np.asarray(strat_b, np.float64)
    log = np.zeros((2 * int(rules[R_MAX_ROUNDS]) + 1, LOG_WIDTH), dtype=np.int64)
    res = np.zeros(N_RESULT, dtype=np.int64)
    if game % 2 == 0:
        rows = play_game(rules, sa, sb, np.uint64(seed), game // 2, log, True, res)
    else:
        rows = play_game(rules, sb, sa, np.uint64(seed), game // 2, log, True, res)
    return log[:rows], res


def _cards(*ids) -> str:
    return "+".join(card_name(c) for c in ids if c >= 0) or "nothing"


def trace(rules, strat_a, strat_b, seed, game, names=("A", "B"), card_names=None):
    """The events of one struggle, in order, each a dict with a readable
    ``text``: the initiative, one per attack (``kind`` "attack"), turn
    without a legal attack ("pass") or turn its character declined to attack
    ("decline"), and the end. The four-suits RPG has no card sets:
    ``card_names`` is ignored."""
    log, res = trace_log(rules, strat_a, strat_b, seed, game)
    who = (names[0], names[1]) if game % 2 == 0 else (names[1], names[0])
    first = int(res[X_FIRST])
    ic = [int(res[X_ICARD0]), int(res[X_ICARD1])]
    events = [
        {
            "kind": "initiative",
            "cards": [card_name(c) if c >= 0 else None for c in ic],
            "first_seat": first + 1,
            "text": f"initiative: seat 1 {who[0]} plays {_cards(ic[0])}, seat 2 {who[1]} "
            f"plays {_cards(ic[1])}: seat {first + 1} ({who[first]}) acts first",
        }
    ]
    for row in log:
        a = int(row[L_SEAT])
        o = 1 - a
        left = [0, 0]
        left[a] = int(row[L_LEFT_A])
        left[o] = int(row[L_LEFT_D])
        if row[L_A1] < 0:  # a turn without an attack
            if row[L_DECLINED]:
                what = "declines to attack (SD11)"
            elif row[L_PASS] >= 0:
                what = (
                    f"has no legal attack: discards {card_name(row[L_PASS])} and draws back "
                    "up to a full hand (SD10)"
                )
            elif row[L_DIS_A]:
                what = "draws its deck's last cards and is disabled (SD6)"
            else:
                what = "has no legal attack and passes"
            events.append(
                {
                    "kind": "decline" if row[L_DECLINED] else "pass",
                    "round": int(row[L_ROUND]),
                    "seat": a + 1,
                    "discarded": card_name(row[L_PASS]) if row[L_PASS] >= 0 else None,
                    "disabled": bool(row[L_DIS_A]),
                    "left": left,
                    "text": f"round {int(row[L_ROUND])}: seat {a + 1} ({who[a]}) {what}; "
                    f"cards left (seat 1 : seat 2) {left[0]} : {left[1]}",
                }
            )
            continue
        if row[L_D1] >= 0:
            ans = f"seat {o + 1} answers {_cards(row[L_D1], row[L_D2])} = {int(row[L_CVD])}"
            if row[L_VOID]:
                ans += (
                    " (a Difficult pair whose lower card does not meet the attack: it counts "
                    "for nothing, SD2)"
                )
        else:
            ans = f"seat {o + 1} does not answer"
        if row[L_DAMAGE] > 0:
            out = (
                f"hit for {int(row[L_DAMAGE])}: seat {o + 1} discards "
                f"{int(row[L_FROM_HAND])} from its hand and {int(row[L_FROM_DECK])} from "
                "its deck"
            )
        elif row[L_D1] >= 0 and not row[L_VOID] and row[L_CVD] == row[L_CVA]:
            out = "a tie: the defender holds"
        elif row[L_A2] >= 0 and row[L_CVA] > row[L_CVD] and (row[L_VOID] == 0 and row[L_D1] >= 0):
            out = "the attack fails: its lower card does not beat the answer (SD2)"
        else:
            out = "the attack fails"
        tail = []
        if row[L_DIS_A]:
            tail.append(f"seat {a + 1} is disabled")
        if row[L_DEAD_D]:
            tail.append(f"seat {o + 1} is dead")
        elif row[L_DIS_D]:
            tail.append(f"seat {o + 1} is disabled")
        text = (
            f"round {int(row[L_ROUND])}: seat {a + 1} ({who[a]}) attacks with "
            f"{_cards(row[L_A1], row[L_A2])} = {int(row[L_CVA])}; {ans}; {out}; cards left "
            f"(seat 1 : seat 2) {left[0]} : {left[1]}" + ("; " + ", ".join(tail) if tail else "")
        )
        events.append(
            {
                "kind": "attack",
                "round": int(row[L_ROUND]),
                "seat": a + 1,
                "attack": [card_name(c) for c in row[L_A1 : L_A2 + 1] if c >= 0],
                "attack_value": int(row[L_CVA]),
                "answer": [card_name(c) for c in row[L_D1 : L_D2 + 1] if c >= 0],
                "answer_value": int(row[L_CVD]),
                "answer_counts": not row[L_VOID],
                "damage": int(row[L_DAMAGE]),
                "from_hand": int(row[L_FROM_HAND]),
                "from_deck": int(row[L_FROM_DECK]),
                "left": left,
                "text": text,
            }
        )
    winner = int(res[X_WINNER])
    reason = END_NAMES[int(res[X_REASON])]
    left = [int(res[X_LEFT0]), int(res[X_LEFT1])]
    if winner == DRAW:
        text = (
            f"draw after {int(res[X_ROUNDS])} rounds ({reason}); cards left {left[0]} : {left[1]}"
        )
    else:
        text = (
            f"seat {winner + 1} ({who[winner]}) wins after {int(res[X_ROUNDS])} rounds and "
            f"{int(res[X_EXCH])} attacks ({reason}); cards left {left[0]} : {left[1]}"
        )
    events.append(
        {
            "kind": "end",
            "winner_seat": winner + 1 if winner != DRAW else None,
            "winner": who[winner] if winner != DRAW else None,
            "reason": reason,
            "rounds": int(res[X_ROUNDS]),
            "exchanges": int(res[X_EXCH]),
            "left": left,
            "text": text,
        }
    )
    return events


def catalogue() -> list[dict]:
    """The 54 cards of a character deck with their suit, value and purpose."""
    out = []
    for c in range(N_NATURAL + 2):
        su = card_suit(c)
        out.append(
            {
                "id": c,
                "label": card_name(c),
                "rank": value_name(card_value(c, 14)) if c < N_NATURAL else "Joker",
                "suit": SUITS[su] if su >= 0 else "wild",
                "value": int(card_value(c, 14)),
                "purpose": SUIT_PURPOSE[su] if su >= 0 else "any",
            }
        )
    return out
