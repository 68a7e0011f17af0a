"""Trisk: the rules engine (rulebook ``rules/trisk.txt``, rulings R1–R7).

State is plain numpy arrays; the card set arrives as an int64 table
(``sims.trisk.cards``) inside the rules vector, so the engine knows no card by
name. ``simulate`` plays deals in parallel, each twice with the sides in
swapped seats, and returns per-game outcome arrays.

Board: ``bd[seat, slot, F_*]``; slot 0 is the seat's Primal, slots 1.. its
creations in the order they entered play. Every card in play (Primal or
creation) has a level, damage tokens and a stack of tokens per status.

Randomness (R7, METHODS): each side's deck is shuffled from its own stream
``(seed, deal, PURPOSE_DECK + side)``, so a deck that differs in one slot is
shuffled into the same order everywhere else (swap-in is paired); the toss
is played out by the pair itself (RD5): seat 0 is the toss winner, so side A
wins it in game 2d and side B in game 2d + 1 (both outcomes of the fair coin,
once each: antithetic, and "seat 0" then means the player who won the toss,
the one who starts unless its strategy chooses otherwise); the coins of play
(Feared, Blinded, coin-gated abilities) come from ``(seed, 2·deal + swap,
PURPOSE_PLAY_COINS)`` and each side's strategy noise from its own stream.

Rules vector: ``RULES`` below, one ``Rule`` per key (its default, bounds and
meaning), in vector order; ``card_set`` is not in the int vector: its table is.

R4: a creation is destroyed the moment its damage reaches its HP, wherever
the damage comes from (``sweep`` after every effect, Upgrade and Damage step;
at the end of turn right after the poison tick), so nothing heals it after.

RD1: "Create ... as often as you like": the board limit ``max_board`` (40)
exceeds what a 20-card deck can put in play; a Create it withholds is
counted (``refused_seat*``, ``creates_refused``).

Decided points (documented in docs/rulings.md as RD1–RD10): token removal,
card by card in the status table's order, then passives (regen, grow) of the
creations still in play at the end of the owner's turn; Sorceries never
target a Primal (a Ritual's effect neither); Ward stops enemy single-target
effects, not mass ones; the toss winner chooses by its strategy's
``go_first``; a creation that attacked may block on the next turn; a coin
gate with no coins (no Wolf to count) fails; destroyed creations and spent
Sorceries go to the discard pile, an Upgrade's whole stack with it.
"""

import numpy as np

from kernels import rng
from kernels.aggregate import pair_outcomes
from kernels.contract import Rule, rule_tables
from kernels.jit import chunked, leaf, njit
from kernels.simd import row_diff
from kernels.trace import track_score
from sims.trisk.cards import (
    A_COINS,
    A_EFFECT,
    A_GROUP,
    A_LEVEL,
    A_N,
    A_PARAM,
    A_SHAPE,
    A_TARGET,
    A_W,
    ASLEEP,
    BLESSING,
    BLINDED,
    C_ABIL,
    C_AP,
    C_ARMOR,
    C_ATTACK_LEVEL,
    C_FLYING,
    C_GROUP,
    C_HP,
    C_KIND,
    C_MP,
    C_N_ABIL,
    C_ONTO,
    C_RESIST,
    C_TYPE,
    C_WEAK,
    CARD_W,
    COIN_ONE,
    COIN_PER_GROUP,
    CREATION,
    CURSE,
    E_CLEANSE,
    E_DAMAGE,
    E_DRAW,
    E_GROW,
    E_HEAL,
    E_LEVEL,
    E_PACK,
    E_REGEN,
    E_STATUS,
    E_WARD,
    FEARED,
    FLYING,
    MAX_ABIL,
    MAX_LEVEL,
    N_STATUS,
    PHYSICAL,
    POISONED,
    RITUAL,
    SHAPE_ACTIVE,
    SHAPE_PASSIVE,
    SILENCED,
    SORCERY,
    T_ALL_ENEMY_CREATIONS,
    T_ENEMY_ANY,
    T_ENEMY_CREATION,
    T_ENEMY_PRIMAL,
    T_OWN_CREATION,
    T_OWN_PRIMAL,
    T_PLAYER,
    T_SELF,
    UPGRADE,
    X_AMOUNT,
)
from strategies.trisk import (
    N_PARAMS,
    P_ATTACK,
    P_BLOCK,
    P_GO_FIRST,
    P_PLAY,
    P_PRIMAL,
    P_TEMP,
    S_CARDS,
    S_DECK_N,
    S_NC,
    S_PRIMAL,
    S_W0,
    pick,
    score,
    yes,
)
from strategies.trisk.view import (
    NAT,
    NBL,
    NPL,
    NPR,
    PF_ABILITY,
    PF_AP_GAIN,
    PF_BLESSING,
    PF_BOARD_GAP,
    PF_CLEANSE,
    PF_CREATE,
    PF_CURSE,
    PF_DISABLE,
    PF_DMG_CREATURE,
    PF_DMG_PRIMAL,
    PF_DRAW,
    PF_FLYING,
    PF_HEAL,
    PF_HP_GAIN,
    PF_KILLS,
    PF_LETHAL,
    PF_LEVELS,
    PF_LOST_ATTACK,
    PF_POISON,
    PF_RITUAL,
    PF_SACRIFICE,
    PF_SELF_SLEEP,
    PF_SILENCE,
    PF_STOP,
    PF_TARGET_AP,
    PF_UPGRADE,
    PF_WASTED,
)

GAME = "trisk"
VERSION = "1.2.0"  # bump whenever simulated behaviour changes

# Every rules key, once: its default, bounds and meaning, in vector order.
RULES = (
    Rule("max_turns", 60, 1, 1000, "R3: a game not decided after this many turns each is a draw"),
    Rule(
        "hand_limit",
        9,
        1,
        16,
        "R3: the most cards in hand; Muster does nothing at the limit",
    ),
    Rule("actions", 3, 1, 9, "Primal actions per turn"),
    Rule("upgrade_cost", 3, 0, 10, "the levels of the creation an Upgrade costs"),
    Rule("second_level", 1, 0, 10, "the level of the second player's Primal at the start"),
    Rule("primal_attack_level", 10, 0, 11, "the level at which a Primal's Attack unlocks"),
    Rule(
        "resist_rule",
        0,
        0,
        2,
        "R6: resisted damage is 0 halved (rounded down), 1 ignored entirely, 2 unchanged",
    ),
    Rule("weak_rule", 0, 0, 2, "R6: weak damage is 0 doubled, 1 +1, 2 unchanged"),
    Rule(
        "max_board",
        40,
        1,
        40,
        '[decided, RD1] creations in play per player, at most: "create as often as '
        'you like", and 40 never binds with the reference decks (20 cards); a Create '
        "it withholds is counted",
    ),
    Rule(
        "allow_draw_effects",
        False,
        None,
        None,
        "R3: Muster is the only way to draw, so a card set whose cards draw is "
        "refused; true lets a designer's set draw (effect draw)",
    ),
    Rule(
        "card_set",
        "reference",
        None,
        None,
        "the card set: reference (configs/trisk/cards.toml) or a path to a "
        "designer's set; not in the int vector: its card table is",
    ),
)
RULE_FIELDS, DEFAULT_RULES, RULE_LIMITS = rule_tables(RULES)
INT_FIELDS = RULE_FIELDS[:-1]  # allow_draw_effects travels as 0/1
(
    R_MAX_TURNS,
    R_HAND_LIMIT,
    R_ACTIONS,
    R_UPGRADE_COST,
    R_SECOND_LEVEL,
    R_PRIMAL_ATTACK,
    R_RESIST,
    R_WEAK,
    R_MAX_BOARD,
    R_ALLOW_DRAW,
) = range(len(INT_FIELDS))
R_NC = len(INT_FIELDS)  # then the card table, NC rows of CARD_W
MAX_HAND = 16
MAX_SLOTS = 41  # the Primal and up to 40 creations (RULE_LIMITS max_board)

PURPOSE_DECK = rng.PURPOSE_GAME  # + side (0 = A, 1 = B)
PURPOSE_PLAY_COINS = rng.PURPOSE_GAME + 2
PURPOSE_NOISE = rng.PURPOSE_SEAT0  # + side


def draw_rows(table: np.ndarray) -> list[int]:
    """Rows of the card table with an ability or spell whose effect draws."""
    table = np.asarray(table, np.int64)
    return [
        r
        for r in range(table.shape[0])
        if any(
            table[r, C_ABIL + i * A_W + A_EFFECT] == E_DRAW for i in range(int(table[r, C_N_ABIL]))
        )
    ]


def max_length(rules: dict) -> int:
    """The most turns (both players' together) a game can last under
    ``rules`` (rules keys; missing ones take their defaults): ``max_turns``
    each. The width of the runner's game-length histogram."""
    return 2 * int({**DEFAULT_RULES, **rules}["max_turns"])


def encode_rules(cfg: dict, table=None) -> np.ndarray:
    """The int64 rules vector: the integer fields, NC, then the card table
    (``table``, the int64 table of the ruleset's card set: required).

    Raises ValueError without a table, and for a table that draws under
    ``allow_draw_effects`` false (R3; the card-set loader names the card
    first, see ``balance.games.trisk.cards``)."""
    if table is None:
        raise ValueError("Trisk's rules vector carries its card set: pass the set's card table")
    table = np.asarray(table, np.int64)
    if table.ndim != 2 or table.shape[1] != CARD_W:
        raise ValueError(f"the card table must have {CARD_W} columns")
    if not cfg["allow_draw_effects"] and draw_rows(table):
        raise ValueError(
            f"card rows {draw_rows(table)} draw, and allow_draw_effects is false "
            "(R3: Muster is the only way to draw)"
        )
    head = [int(cfg[name]) for name in INT_FIELDS]
    return np.concatenate([np.array(head + [table.shape[0]], np.int64), table.ravel()])


def split_rules(rules: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(int fields, card table) of a rules vector."""
    rules = np.asarray(rules, np.int64)
    nc = int(rules[R_NC])
    return rules[: R_NC + 1].copy(), rules[R_NC + 1 : R_NC + 1 + nc * CARD_W].reshape(
        nc, CARD_W
    ).copy()


# each side's streams (its deck shuffle, its noise) follow it into the other seat, so a
# deck that differs in one card is shuffled alike elsewhere; the pair plays both outcomes
# of the toss (RD5) (kernels.contract.Engine.PAIR_STREAMS)
PAIR_STREAMS = "side"

# ---- outcomes ---------------------------------------------------------------------------
DRAW = -1
END_PRIMAL, END_CAP = 0, 1
END_NAMES = ("primal_falls", "round_cap")  # round_cap: the turn cap (R3)
METRICS = {"lead_changes": 64, "max_deficit": 11, "decided_pct": 101, "creates_refused": 121}
# per-game counts the reports show as the games in which it happened (and the total),
# name -> (label, unit); each is also a METRICS histogram, so every stored run keeps it
EVENT_COUNTS = {"creates_refused": ("Create refused by the board limit (RD1)", "turns")}

(
    X_WINNER,
    X_TURNS,
    X_REASON,
    X_FIRST,
    X_DMG0,
    X_DMG1,
    X_LVL0,
    X_LVL1,
    X_CREATED0,
    X_CREATED1,
    X_SPELLS0,
    X_SPELLS1,
    X_ABIL0,
    X_ABIL1,
    X_UPG0,
    X_UPG1,
    X_BOARD0,
    X_BOARD1,
    X_CONSERVED,
    X_INVARIANT,
    X_LEAD,
    X_MAXDEF0,
    X_MAXDEF1,
    X_NOTAHEAD0,
    X_NOTAHEAD1,
    X_TOSS,
    X_EVENTS,
    X_REFUSED0,
    X_REFUSED1,
    X_PEAK0,
    X_PEAK1,
    X_DRAWN0,
    X_DRAWN1,
    X_MUSTERED0,
    X_MUSTERED1,
    N_RESULT,
) = range(36)

# board slot fields
F_CARD, F_LEVEL, F_DMG, F_USED, F_STACK, F_TOK = 0, 1, 2, 3, 4, 5
BF = F_TOK + N_STATUS
# per-seat counters
(
    K_POS,
    K_DECKN,
    K_HANDN,
    K_DISC,
    K_NB,
    K_CREATED,
    K_SPELLS,
    K_ABIL,
    K_UPG,
    K_BAD,
    K_REFUSED,
    K_PEAK,
    K_MUSTERED,
) = range(13)
KW = 13  # K_REFUSED: turns a Create was refused by max_board; K_PEAK: most creations in
#          play at once; K_MUSTERED: cards drawn by Muster (K_POS: cards drawn in all)

# candidate kinds in the Creation phase and their columns
PK_STOP, PK_CREATE, PK_UPGRADE, PK_CAST, PK_ABILITY = 0, 1, 2, 3, 4
CK, CH, CS, CA, CTP, CTS = 0, 1, 2, 3, 4, 5
CW = 6
MAXC = 512

# trace events: [turn, seat, code, a, b, c, d, e]
(
    EV_TOSS,
    EV_MEDITATE,
    EV_TRAIN,
    EV_MUSTER,
    EV_CREATE,
    EV_UPGRADE,
    EV_CAST,
    EV_ABILITY,
    EV_COINS,
    EV_ATTACK,
    EV_BLOCK,
    EV_DAMAGE,
    EV_DESTROY,
    EV_TOKENS_OFF,
    EV_POISON,
    EV_SLEEP_HEAL,
    EV_REGEN,
    EV_GROW,
    EV_FEAR,
    EV_BLIND,
    EV_EFFECT,
    EV_END,
    EV_SACRIFICE,
) = range(23)
LOG_W = 8
MAX_LOG = 6000


# ---- small rules helpers ------------------------------------------------------------------
# One signature: the call sites pass many integer types, and each would
# otherwise compile a copy of its own (33 of them, 6 s of a cold compile).
@leaf(
    "void(int64[:, :], int64[:], boolean, int64, int64, int64, int64, int64, int64, int64, int64)"
)
def _log(log, ints, do_log, turn, seat, code, a, b, c, d, e):
    if not do_log:
        return
    n = ints[0]
    if n < log.shape[0]:
        log[n, 0] = turn
        log[n, 1] = seat
        log[n, 2] = code
        log[n, 3] = a
        log[n, 4] = b
        log[n, 5] = c
        log[n, 6] = d
        log[n, 7] = e
        ints[0] = n + 1


@leaf(inline="always")
def _ab(table, card, i, field):
    return table[card, C_ABIL + i * A_W + field]


@leaf("int64(int64[:, ::1], int64, int64, int64)")  # one copy (the effect is a constant)
def passive_amount(table, card, level, effect):
    """Sum of the amounts of ``card``'s unlocked passive abilities of ``effect``."""
    tot = 0
    for i in range(table[card, C_N_ABIL]):
        if (
            _ab(table, card, i, A_SHAPE) == SHAPE_PASSIVE
            and _ab(table, card, i, A_EFFECT) == effect
            and level >= _ab(table, card, i, A_LEVEL)
        ):
            n = _ab(table, card, i, A_N)
            tot += table[card, C_MP] if n == X_AMOUNT else n
    return tot


@leaf(inline="always")
def has_active(table, card):
    for i in range(table[card, C_N_ABIL]):
        if _ab(table, card, i, A_SHAPE) == SHAPE_ACTIVE:
            return True
    return False


@leaf(inline="always")
def flying(table, bd, p, s):
    return table[bd[p, s, F_CARD], C_FLYING] > 0 or bd[p, s, F_TOK + FLYING] > 0


@leaf(inline="always")
def hp(table, bd, p, s):
    return table[bd[p, s, F_CARD], C_HP]


@leaf(inline="always")
def warded(table, bd, p, s):
    """A creation with an unlocked Ward passive (Ward has no amount)."""
    if s == 0:
        return False
    card = bd[p, s, F_CARD]
    for i in range(table[card, C_N_ABIL]):
        if (
            _ab(table, card, i, A_SHAPE) == SHAPE_PASSIVE
            and _ab(table, card, i, A_EFFECT) == E_WARD
            and bd[p, s, F_LEVEL] >= _ab(table, card, i, A_LEVEL)
        ):
            return True
    return False


@leaf(inline="always")
def group_count(table, bd, pl, p, group, skip):
    """Creations of seat ``p`` in ``group`` (other than slot ``skip``)."""
    n = 0
    if group < 0:
        return 0
    for s in range(1, pl[p, K_NB]):
        if s != skip and table[bd[p, s, F_CARD], C_GROUP] == group:
            n += 1
    return n


@leaf(inline="always")
def attack_power(table, bd, pl, p, s):
    """AP of slot ``s`` including Pack bonuses."""
    card = bd[p, s, F_CARD]
    ap = table[card, C_AP]
    if s > 0:  # Pack: +N per other creation of the ability's group
        for i in range(table[card, C_N_ABIL]):
            if (
                _ab(table, card, i, A_SHAPE) == SHAPE_PASSIVE
                and _ab(table, card, i, A_EFFECT) == E_PACK
                and bd[p, s, F_LEVEL] >= _ab(table, card, i, A_LEVEL)
            ):
                n = _ab(table, card, i, A_N)
                if n == X_AMOUNT:
                    n = table[card, C_MP]
                ap += n * group_count(table, bd, pl, p, _ab(table, card, i, A_GROUP), s)
    return ap


@leaf(inline="always")
def can_attack(rules, table, bd, p, s):
    """Slot ``s`` may be declared an attacker (its Attack unlocked, not asleep,
    no ability used this turn; a Primal from ``primal_attack_level``)."""
    if bd[p, s, F_TOK + ASLEEP] > 0:
        return False
    if s == 0:
        return bd[p, 0, F_LEVEL] >= rules[R_PRIMAL_ATTACK]
    lvl = table[bd[p, s, F_CARD], C_ATTACK_LEVEL]
    return lvl >= 0 and bd[p, s, F_LEVEL] >= lvl and bd[p, s, F_USED] == 0


@leaf(inline="always")
def typed_damage(rules, table, card, amount, dtype):
    """Damage a card takes from ``amount`` of ``dtype`` (R6): resist, weak, then
    Armor (1 per shield against physical). UNTYPED (poison) is never changed."""
    if dtype < 0 or amount <= 0:
        return max(amount, 0)
    a = amount
    if (table[card, C_RESIST] >> dtype) & 1:
        if rules[R_RESIST] == 0:
            a = a // 2
        elif rules[R_RESIST] == 1:
            a = 0
    if (table[card, C_WEAK] >> dtype) & 1:
        if rules[R_WEAK] == 0:
            a = a * 2
        elif rules[R_WEAK] == 1:
            a = a + 1
    if dtype == PHYSICAL:
        a = max(0, a - table[card, C_ARMOR])
    return a


# The Combat phase's kernels call these two as one compiled copy each: every
# inlined copy of a helper is compiled again with its caller, and the combat
# (about 5% of a game's time) inlined a dozen of them: about 10 s of compiling.
@leaf("int64(int64[:, ::1], int64[:, :, ::1], int64[:, ::1], int64, int64)")
def attack_power_of(table, bd, pl, p, s):
    """``attack_power``, compiled once."""
    return attack_power(table, bd, pl, p, s)


@leaf("int64(int64[::1], int64[:, ::1], int64, int64, int64)")
def typed_damage_of(rules, table, card, amount, dtype):
    """``typed_damage``, compiled once."""
    return typed_damage(rules, table, card, amount, dtype)


@leaf("void(int64[:, :, ::1], int64[:, ::1], int64, int64)")  # one copy (a constant slot)
def destroy(bd, pl, p, s):
    """Slot ``s`` (a creation) leaves play: its stack goes to the discard pile."""
    pl[p, K_DISC] += bd[p, s, F_STACK]
    nb = pl[p, K_NB]
    for t in range(s, nb - 1):
        for f in range(BF):
            bd[p, t, f] = bd[p, t + 1, f]
    for f in range(BF):
        bd[p, nb - 1, f] = 0
    pl[p, K_NB] = nb - 1


@leaf
def sweep(table, bd, pl, p, log, ints, do_log, turn):
    """Destroy every creation of seat ``p`` whose damage reached its HP (R4)."""
    s = pl[p, K_NB] - 1
    while s >= 1:
        if bd[p, s, F_DMG] >= hp(table, bd, p, s):
            _log(log, ints, do_log, turn, p, EV_DESTROY, bd[p, s, F_CARD], s, 0, 0, 0)
            destroy(bd, pl, p, s)
        s -= 1


@leaf
def draw(rules, pl, dk, hd, p):
    """Draw one card (R3: nothing with an empty deck or a full hand); the card or -1."""
    if pl[p, K_HANDN] >= rules[R_HAND_LIMIT] or pl[p, K_POS] >= pl[p, K_DECKN]:
        return -1
    c = dk[p, pl[p, K_POS]]
    pl[p, K_POS] += 1
    hd[p, pl[p, K_HANDN]] = c
    pl[p, K_HANDN] += 1
    return c


@leaf
def remove_from_hand(pl, hd, p, h):
    n = pl[p, K_HANDN]
    for i in range(h, n - 1):
        hd[p, i] = hd[p, i + 1]
    hd[p, n - 1] = -1
    pl[p, K_HANDN] = n - 1


@leaf
def coin(rngs):
    """A fair coin from the coins-of-play stream: True is heads."""
    return rng.uniform(rngs[2]) < 0.5


@leaf(inline="always")
def gate_prob(table, bd, pl, p, card, i):
    """Chance that ability ``i`` of ``card`` (owned by ``p``) passes its coin gate."""
    c = _ab(table, card, i, A_COINS)
    if c == COIN_ONE:
        return 0.5
    if c == COIN_PER_GROUP:
        k = group_count(table, bd, pl, p, _ab(table, card, i, A_GROUP), -1)
        return 1.0 - 0.5**k
    return 1.0


@leaf(
    "boolean(int64[:, ::1], int64[:, :, ::1], int64[:, ::1], int64, int64, int64, uint64[:, ::1],"
    " int64[:, ::1], int64[::1], boolean, int64)"
)  # one copy (the ability and do_log are constants at some call sites)
def gate_flip(table, bd, pl, p, card, i, rngs, log, ints, do_log, turn):
    """Flip the coins of ability ``i``'s gate: one heads is enough."""
    c = _ab(table, card, i, A_COINS)
    k = 0
    if c == COIN_ONE:
        k = 1
    elif c == COIN_PER_GROUP:
        k = group_count(table, bd, pl, p, _ab(table, card, i, A_GROUP), -1)
    else:
        return True
    heads = 0
    for _ in range(k):
        if coin(rngs):
            heads += 1
    _log(log, ints, do_log, turn, p, EV_COINS, card, k, heads, 0, 0)
    return heads > 0


@leaf(inline="always")
def amount(table, bd, p, card, i, x):
    n = _ab(table, card, i, A_N)
    return x if n == X_AMOUNT else n


# ---- effects ------------------------------------------------------------------------------
@leaf
def apply_one(rules, table, bd, pl, dk, hd, p, effect, n, param, tp, ts, log, ints, do_log, turn):
    """Apply ``effect`` of size ``n`` by seat ``p`` to slot ``ts`` of seat ``tp``
    (``ts`` -1: the player ``tp``). Destruction is left to ``sweep``; returns 1
    if a Primal fell."""
    if effect == E_DRAW:
        got = 0
        for _ in range(n):
            if draw(rules, pl, dk, hd, tp) >= 0:
                got += 1
        _log(log, ints, do_log, turn, p, EV_EFFECT, effect, tp, -1, got, 0)
        return 0
    card = bd[tp, ts, F_CARD]
    if effect == E_STATUS:
        bd[tp, ts, F_TOK + param] += n
        _log(log, ints, do_log, turn, p, EV_EFFECT, effect, tp, card, n, param)
    elif effect == E_HEAL:
        h = min(n, bd[tp, ts, F_DMG])
        bd[tp, ts, F_DMG] -= h
        _log(log, ints, do_log, turn, p, EV_EFFECT, effect, tp, card, h, 0)
    elif effect == E_DAMAGE:
        d = typed_damage(rules, table, card, n, param)
        bd[tp, ts, F_DMG] += d
        _log(log, ints, do_log, turn, p, EV_DAMAGE, -1, tp, card, d, param)
        if ts == 0 and bd[tp, 0, F_DMG] >= hp(table, bd, tp, 0):
            return 1
    elif effect == E_CLEANSE:
        # Blessing of Cleansing: poison removed this way does no damage, but
        # each sleep token removed still heals 1
        removed = 0
        for st in range(N_STATUS):
            if st == FLYING:
                continue
            k = min(n, bd[tp, ts, F_TOK + st])
            bd[tp, ts, F_TOK + st] -= k
            removed += k
            if st == ASLEEP:
                bd[tp, ts, F_DMG] = max(0, bd[tp, ts, F_DMG] - k)
        _log(log, ints, do_log, turn, p, EV_EFFECT, effect, tp, card, removed, 0)
    elif effect == E_LEVEL:
        old = bd[tp, ts, F_LEVEL]
        bd[tp, ts, F_LEVEL] = min(MAX_LEVEL, old + n)
        _log(log, ints, do_log, turn, p, EV_EFFECT, effect, tp, card, bd[tp, ts, F_LEVEL] - old, 0)
    return 0


@leaf
def apply_effect(
    rules, table, bd, pl, dk, hd, p, effect, n, param, tp, ts, log, ints, do_log, turn
):
    """Apply an effect to its target(s); ``ts`` -1 with an enemy ``tp`` means
    every enemy creation (mass effects). Returns 1 if a Primal fell."""
    fell = 0
    if ts == -1 and effect != E_DRAW:
        for s in range(1, pl[tp, K_NB]):
            apply_one(
                rules, table, bd, pl, dk, hd, p, effect, n, param, tp, s, log, ints, do_log, turn
            )
    else:
        fell = apply_one(
            rules, table, bd, pl, dk, hd, p, effect, n, param, tp, ts, log, ints, do_log, turn
        )
    sweep(table, bd, pl, tp, log, ints, do_log, turn)
    return fell


@leaf
def targets(table, bd, pl, p, code, self_slot, exclude, spell, tg):
    """The targets ``(seat, slot)`` an effect with target ``code`` may take,
    written to ``tg``; returns how many. ``self_slot`` stands for T_SELF;
    ``exclude`` is a slot of ``p`` that cannot be chosen (a Ritual's
    sacrifice); a ``spell`` never targets a Primal. Slot -1: every enemy
    creation (T_ALL_ENEMY_CREATIONS) or the player (T_PLAYER)."""
    q = 1 - p
    n = 0
    if code == T_SELF:
        if self_slot >= 0:
            tg[0, 0] = p
            tg[0, 1] = self_slot
            n = 1
    elif code == T_OWN_CREATION:
        for s in range(1, pl[p, K_NB]):
            if s != exclude:
                tg[n, 0] = p
                tg[n, 1] = s
                n += 1
    elif code == T_ENEMY_CREATION or code == T_ENEMY_ANY:
        for s in range(1, pl[q, K_NB]):
            if not warded(table, bd, q, s):
                tg[n, 0] = q
                tg[n, 1] = s
                n += 1
        if code == T_ENEMY_ANY and not spell:
            tg[n, 0] = q
            tg[n, 1] = 0
            n += 1
    elif code == T_ENEMY_PRIMAL:
        if not spell:
            tg[0, 0] = q
            tg[0, 1] = 0
            n = 1
    elif code == T_OWN_PRIMAL:
        if not spell:
            tg[0, 0] = p
            tg[0, 1] = 0
            n = 1
    elif code == T_ALL_ENEMY_CREATIONS:
        tg[0, 0] = q
        tg[0, 1] = -1
        n = 1
    elif code == T_PLAYER:
        tg[0, 0] = p
        tg[0, 1] = -1
        n = 1
    return n


@leaf
def effect_features(rules, table, bd, pl, p, effect, n, param, tp, ts, q, feats, k):
    """Add the expected value of an effect (passing its coin gate with
    probability ``q``) to the features of candidate ``k``."""
    if effect == E_DRAW:
        room = min(rules[R_HAND_LIMIT] - pl[tp, K_HANDN], pl[tp, K_DECKN] - pl[tp, K_POS])
        feats[k, PF_DRAW] += q * max(0, min(n, room))
        return
    if ts == -1:
        for s in range(1, pl[tp, K_NB]):
            effect_features(rules, table, bd, pl, p, effect, n, param, tp, s, q, feats, k)
        return
    card = bd[tp, ts, F_CARD]
    enemy = tp != p
    if enemy and ts > 0:
        feats[k, PF_TARGET_AP] += attack_power(table, bd, pl, tp, ts)
    if effect == E_STATUS:
        if enemy:
            if param == FEARED or param == BLINDED or param == ASLEEP:
                if ts > 0 and attack_power(table, bd, pl, tp, ts) > 0:
                    feats[k, PF_DISABLE] += q * n
            elif param == POISONED:
                feats[k, PF_POISON] += q * n
            elif param == SILENCED:
                if has_active(table, card):
                    feats[k, PF_SILENCE] += q * n
        else:
            if param == ASLEEP:
                feats[k, PF_SELF_SLEEP] += q * n
                feats[k, PF_HEAL] += q * min(n, bd[tp, ts, F_DMG])
            elif param == FLYING:
                if (
                    ts > 0
                    and not flying(table, bd, tp, ts)
                    and can_attack(rules, table, bd, tp, ts)
                ):
                    feats[k, PF_FLYING] += q * n
    elif effect == E_HEAL:
        if not enemy:
            feats[k, PF_HEAL] += q * min(n, bd[tp, ts, F_DMG])
    elif effect == E_DAMAGE:
        if enemy:
            d = typed_damage(rules, table, card, n, param)
            left = hp(table, bd, tp, ts) - bd[tp, ts, F_DMG]
            if ts == 0:
                feats[k, PF_DMG_PRIMAL] += q * min(d, left)
                if d >= left:
                    feats[k, PF_LETHAL] += q
            else:
                feats[k, PF_DMG_CREATURE] += q * min(d, left)
                if d >= left:
                    feats[k, PF_KILLS] += q
    elif effect == E_CLEANSE:
        if not enemy:
            for st in range(N_STATUS):
                if st != FLYING:
                    feats[k, PF_CLEANSE] += q * min(n, bd[tp, ts, F_TOK + st])
    elif effect == E_LEVEL:
        if not enemy:
            feats[k, PF_LEVELS] += q * (
                min(MAX_LEVEL, bd[tp, ts, F_LEVEL] + n) - bd[tp, ts, F_LEVEL]
            )


@leaf(inline="always")
def _any_effect(feats, k):
    for f in range(PF_AP_GAIN, PF_LETHAL + 1):
        if (
            f != PF_TARGET_AP
            and f != PF_LOST_ATTACK
            and f != PF_SACRIFICE
            and f != PF_SELF_SLEEP
            and f != PF_BOARD_GAP
            and feats[k, f] != 0.0
        ):
            return True
    return False


@leaf(inline="always")
def _clear(feats, k, nf):
    for f in range(nf):
        feats[k, f] = 0.0


@leaf
def playable_now(rules, table, bd, pl, hd, forb, p, h):
    """Card ``h`` of the hand could be played this Creation phase."""
    c = hd[p, h]
    if forb[c]:
        return False
    t = table[c, C_TYPE]
    if t == CREATION:
        return pl[p, K_NB] - 1 < rules[R_MAX_BOARD]
    if t == UPGRADE:
        for s in range(1, pl[p, K_NB]):
            if (
                table[bd[p, s, F_CARD], C_KIND] == table[c, C_ONTO]
                and bd[p, s, F_LEVEL] >= rules[R_UPGRADE_COST]
            ):
                return True
        return False
    if t == SORCERY:
        if table[c, C_KIND] == CURSE:
            return pl[1 - p, K_NB] > 1
        return pl[p, K_NB] > 1
    return False


@leaf
def create_refused(rules, table, pl, hd, forb, p):
    """A Create the board limit (RD1 ``max_board``) withholds now: the board is
    full and the hand holds a creation the player may play."""
    if pl[p, K_NB] - 1 < rules[R_MAX_BOARD]:
        return False
    for h in range(pl[p, K_HANDN]):
        c = hd[p, h]
        if not forb[c] and table[c, C_TYPE] == CREATION:
            return True
    return False


# ---- the Primal phase ------------------------------------------------------------------------
@leaf
def primal_candidates(rules, table, bd, pl, hd, forb, p, feats):
    """Features of Meditate (0), Muster (1) and Train of each creation (2 + i)."""
    n = 1 + pl[p, K_NB]
    for k in range(n):
        _clear(feats, k, NPR)
    plvl = bd[p, 0, F_LEVEL]
    # Meditate
    feats[0, 0] = 1.0
    if plvl >= MAX_LEVEL:
        feats[0, 11] = 1.0
    feats[0, 7] = MAX_LEVEL - plvl
    if plvl + 1 == rules[R_PRIMAL_ATTACK]:
        feats[0, 8] = 1.0
    feats[0, 13] = pl[p, K_NB] - 1
    # Muster
    feats[1, 1] = 1.0
    room = rules[R_HAND_LIMIT] - pl[p, K_HANDN]
    if room <= 0 or pl[p, K_POS] >= pl[p, K_DECKN]:
        feats[1, 11] = 1.0
    else:
        feats[1, 9] = room / rules[R_HAND_LIMIT]
    if pl[p, K_HANDN] == 0:
        feats[1, 10] = 1.0
    any_play = False
    for h in range(pl[p, K_HANDN]):
        if playable_now(rules, table, bd, pl, hd, forb, p, h):
            any_play = True
            break
    if not any_play:
        feats[1, 14] = 1.0
    # Train each creation
    for s in range(1, pl[p, K_NB]):
        k = 1 + s
        card = bd[p, s, F_CARD]
        lvl = bd[p, s, F_LEVEL]
        new = min(MAX_LEVEL, lvl + plvl)
        feats[k, 2] = 1.0
        feats[k, 3] = new - lvl
        if new == lvl:
            feats[k, 11] = 1.0
        al = table[card, C_ATTACK_LEVEL]
        if al >= 0 and lvl < al <= new:
            feats[k, 4] = 1.0
        for i in range(table[card, C_N_ABIL]):
            L = _ab(table, card, i, A_LEVEL)
            if lvl < L <= new:
                feats[k, 5] += 1.0
        cost = rules[R_UPGRADE_COST]
        if lvl < cost <= new:
            for h in range(pl[p, K_HANDN]):
                c = hd[p, h]
                if (
                    not forb[c]
                    and table[c, C_TYPE] == UPGRADE
                    and table[c, C_ONTO] == table[card, C_KIND]
                ):
                    feats[k, 6] = 1.0
                    break
        feats[k, 12] = attack_power(table, bd, pl, p, s)
    return n


# ---- the Creation phase ------------------------------------------------------------------------
@leaf(inline="always")
def _add(cand, n, kind, h, s, a, tp, ts):
    cand[n, CK] = kind
    cand[n, CH] = h
    cand[n, CS] = s
    cand[n, CA] = a
    cand[n, CTP] = tp
    cand[n, CTS] = ts


@leaf
def _effect_candidate(
    rules,
    table,
    bd,
    pl,
    p,
    cand,
    feats,
    n,
    kind,
    h,
    s,
    a,
    tp,
    ts,
    eff,
    nn,
    param,
    gate,
    flag,
    sacrifice,
):
    """Add one cast or ability candidate (its kind flag, a Ritual's sacrifice
    value and the effect's expected features) as number ``n``; returns the
    new count (unchanged when the candidate list is full)."""
    if n >= MAXC:
        return n
    _clear(feats, n, NPL)
    _add(cand, n, kind, h, s, a, tp, ts)
    feats[n, flag] = 1.0
    feats[n, PF_SACRIFICE] = sacrifice
    effect_features(rules, table, bd, pl, p, eff, nn, param, tp, ts, gate, feats, n)
    if not _any_effect(feats, n):
        feats[n, PF_WASTED] = 1.0
    return n + 1


@leaf
def play_candidates(rules, table, bd, pl, hd, forb, p, cand, feats, tg):
    """Every legal step of the Creation phase (0: stop), with its features: the
    reference that each step of ``creation_phase`` (what ``play`` uses) must match."""
    q = 1 - p
    n = 0
    _clear(feats, 0, NPL)
    _add(cand, 0, PK_STOP, -1, -1, -1, -1, -1)
    feats[0, PF_STOP] = 1.0
    n = 1
    mine = pl[p, K_NB] - 1
    theirs = pl[q, K_NB] - 1
    cost = rules[R_UPGRADE_COST]
    for h in range(pl[p, K_HANDN]):
        c = hd[p, h]
        if forb[c]:
            continue
        t = table[c, C_TYPE]
        if t == CREATION:
            if mine < rules[R_MAX_BOARD] and n < MAXC:
                _clear(feats, n, NPL)
                _add(cand, n, PK_CREATE, h, -1, -1, -1, -1)
                feats[n, PF_CREATE] = 1.0
                feats[n, PF_AP_GAIN] = table[c, C_AP]
                feats[n, PF_HP_GAIN] = table[c, C_HP]
                feats[n, PF_BOARD_GAP] = theirs - mine
                n += 1
        elif t == UPGRADE:
            for s in range(1, pl[p, K_NB]):
                old = bd[p, s, F_CARD]
                if (
                    table[old, C_KIND] == table[c, C_ONTO]
                    and bd[p, s, F_LEVEL] >= cost
                    and n < MAXC
                ):
                    _clear(feats, n, NPL)
                    _add(cand, n, PK_UPGRADE, h, s, -1, -1, -1)
                    feats[n, PF_UPGRADE] = 1.0
                    feats[n, PF_AP_GAIN] = table[c, C_AP] - table[old, C_AP]
                    feats[n, PF_HP_GAIN] = table[c, C_HP] - table[old, C_HP]
                    if bd[p, s, F_DMG] >= table[c, C_HP]:
                        feats[n, PF_WASTED] = 1.0
                    n += 1
        elif t == SORCERY:
            kind = table[c, C_KIND]
            eff = _ab(table, c, 0, A_EFFECT)
            code = _ab(table, c, 0, A_TARGET)
            param = _ab(table, c, 0, A_PARAM)
            gate = gate_prob(table, bd, pl, p, c, 0)
            if kind == CURSE:
                for s in range(1, pl[q, K_NB]):
                    if warded(table, bd, q, s):
                        continue
                    x = table[bd[p, 0, F_CARD], C_MP]
                    nn = amount(table, bd, p, c, 0, x)
                    m = 1
                    if code == T_ENEMY_CREATION or code == T_SELF or code == T_ENEMY_ANY:
                        tg[0, 0] = q
                        tg[0, 1] = s
                    else:
                        m = targets(table, bd, pl, p, code, -1, -1, True, tg)
                    for j in range(m):
                        n = _effect_candidate(
                            rules,
                            table,
                            bd,
                            pl,
                            p,
                            cand,
                            feats,
                            n,
                            PK_CAST,
                            h,
                            s,
                            0,
                            tg[j, 0],
                            tg[j, 1],
                            eff,
                            nn,
                            param,
                            gate,
                            PF_CURSE,
                            0.0,
                        )
            else:
                for s in range(1, pl[p, K_NB]):
                    if kind == RITUAL:
                        x = table[bd[p, s, F_CARD], C_MP]
                    else:
                        x = table[bd[p, 0, F_CARD], C_MP]
                    nn = amount(table, bd, p, c, 0, x)
                    m = 1
                    if kind == BLESSING and (code == T_OWN_CREATION or code == T_SELF):
                        tg[0, 0] = p
                        tg[0, 1] = s
                    else:
                        m = targets(
                            table,
                            bd,
                            pl,
                            p,
                            code,
                            s if kind == BLESSING else -1,
                            s if kind == RITUAL else -1,
                            True,
                            tg,
                        )
                    sacrifice = 0.0
                    if kind == RITUAL:
                        sacrifice = (
                            attack_power(table, bd, pl, p, s)
                            + table[bd[p, s, F_CARD], C_HP]
                            - bd[p, s, F_DMG]
                        )
                    for j in range(m):
                        n = _effect_candidate(
                            rules,
                            table,
                            bd,
                            pl,
                            p,
                            cand,
                            feats,
                            n,
                            PK_CAST,
                            h,
                            s,
                            0,
                            tg[j, 0],
                            tg[j, 1],
                            eff,
                            nn,
                            param,
                            gate,
                            PF_RITUAL if kind == RITUAL else PF_BLESSING,
                            sacrifice,
                        )
    # active abilities: one per creation per turn
    for s in range(1, pl[p, K_NB]):
        if bd[p, s, F_USED] or bd[p, s, F_TOK + SILENCED] > 0:
            continue
        card = bd[p, s, F_CARD]
        lvl = bd[p, s, F_LEVEL]
        could_attack = can_attack(rules, table, bd, p, s)
        for i in range(table[card, C_N_ABIL]):
            if _ab(table, card, i, A_SHAPE) != SHAPE_ACTIVE or lvl < _ab(table, card, i, A_LEVEL):
                continue
            eff = _ab(table, card, i, A_EFFECT)
            param = _ab(table, card, i, A_PARAM)
            nn = amount(table, bd, p, card, i, table[card, C_MP])
            gate = gate_prob(table, bd, pl, p, card, i)
            if eff == E_DAMAGE and bd[p, s, F_TOK + BLINDED] > 0:
                gate *= 0.5
            m = targets(table, bd, pl, p, _ab(table, card, i, A_TARGET), s, -1, False, tg)
            lost = attack_power(table, bd, pl, p, s) if could_attack else 0.0
            for j in range(m):
                k = n
                n = _effect_candidate(
                    rules,
                    table,
                    bd,
                    pl,
                    p,
                    cand,
                    feats,
                    n,
                    PK_ABILITY,
                    -1,
                    s,
                    i,
                    tg[j, 0],
                    tg[j, 1],
                    eff,
                    nn,
                    param,
                    gate,
                    PF_ABILITY,
                    0.0,
                )
                if n > k:
                    feats[k, PF_LOST_ATTACK] = lost
    return n


# ---- the Creation phase, scored in one pass (what ``play`` uses) ------------------------------
# ``play_candidates`` with ``score`` of every row is the reference: a step of ``creation_phase``
# writes the same rows in the same order with the same scores (the features by the same float
# operations; tests/games/trisk/test_trisk_fast.py compares them), cheaper: the attack power
# and Ward of every card in play are read from a table (``sl``, what ``slot_table`` computes)
# instead of computed per candidate, and only a slot whose card or level changed (or a card
# of its seat) is computed again (``_note_changes``), a card held twice copies the rows of its
# first copy (a hand card's rows depend on the card, never on its place in the hand), each
# row is scored as soon as it is complete, and an ability row whose inputs did not change
# since it was computed keeps its score (incremental scoring, below).
#
# Incremental scoring of the ability rows. The features of the row "slot ``s`` of the deciding
# seat ``p`` uses its ability ``i`` on target ``(tp, ts)``", and so its score, are a function of
#   * the rules, the card table, ``p`` and the weights (fixed for a seat within a game);
#   * the source slot: its fields ``bd[p, s, :]`` (card, level, Used, tokens) and its attack
#     power ``sl[p, s, SL_AP]`` (the lost attack); and the coin-gate chance ``gate`` (which
#     reads group counts of the whole board: it is compared itself);
#   * the target: for a Draw effect the seat's hand size, deck size and deck position
#     (``pl[tp, K_HANDN/K_DECKN/K_POS]``); for a mass effect (``ts`` -1) the number of
#     creations of ``tp`` and the fields and attack power of every one of them; else the
#     fields and attack power of slot ``ts`` of ``tp``.
# ``_note_changes`` compares, at every step, each slot's fields and attack power, each seat's
# creation count and draw counters with a copy taken at the seat's previous step (``inc``),
# whatever changed them (a creation moved down by a destroy, damage, a token, a level). A row
# reads only some of a slot's fields, so it counts a change only to those: ``SRC_READS`` for
# its source slot, the reads of its effect's group (``_target_group``) for its target (a Fear
# token on the target of Damage changes nothing the row reads). So each slot keeps, per group
# of fields, the stamp of the last step at which one of them changed (and each seat the same
# over all its creations and its creation count, for mass effects, and for its draw counters).
# A row's score is kept (``cs``) when it was computed (``ct`` holds that step's stamp) at or
# after the last change to anything it reads: its source's reads, its target's, and its
# gate, whose last change is stamped per (s, i) when a step finds it a different float. So
# a row computed in an earlier turn is kept if nothing it reads changed since, even when its
# source was Used in between (its rows not listed); every other row is computed as before.
# Each seat keeps its own state (``play`` passes
# ``inc[p]``, ``cs[p]``, ``ct[p]``), carried from one of its Creation phases to the next (its
# ``p`` and weights are the same for the whole game; what the other seat's turn changed is
# found by the comparison); the seat's first step of a game (``fresh``) computes every row
# and starts an epoch: no row computed before it is kept.
# Kept rows leave their ``feats`` row unwritten: ``play`` reads only ``cand`` and ``scores``.


# A slot's changes, as bits: one per field (``1 << f``), ``CHG_AP`` for its attack power,
# ``CHG_COUNT`` (per seat) for its number of creations; ``CHG_ALL`` for a slot newly filled.
CHG_AP, CHG_COUNT = 1 << BF, 1 << (BF + 1)
CHG_ALL = (1 << (BF + 1)) - 1


def _bits(*fields):
    b = 0
    for f in fields:
        b |= 1 << f
    return b


# What an ability row reads of its source slot (beyond its gate, compared itself): the card
# (its ability, amount and attack level), the level (the ability unlocked, can attack), an
# Asleep token (can attack) and the attack power (the attack it gives up). Used and Silenced
# are 0 on every slot whose rows are listed.
SRC_READS = _bits(F_CARD, F_LEVEL, F_TOK + ASLEEP) | CHG_AP
# What ``_effect_one_sl`` reads of its target, by group (``_target_group``): always the card
# and the attack power (G_BASE: an enemy's status but Flying, a heal, cleanse or level on
# an enemy, a status on an own card but Asleep and Flying), and its damage (G_DMG: Damage
# on an enemy, a heal or Asleep on an own card), what Flying reads (G_FLY: can it attack, is
# it flying), the tokens a Cleanse removes (G_CLEANSE), the level (G_LEVEL); G_ALL for an
# effect without a group of its own (every field)
_T_BASE = _bits(F_CARD) | CHG_AP
G_SRC, G_BASE, G_DMG, G_FLY, G_CLEANSE, G_LEVEL, G_ALL = 0, 1, 2, 3, 4, 5, 6
NG = 7
G_READS = (
    SRC_READS,
    _T_BASE,
    _T_BASE | _bits(F_DMG),
    _T_BASE | _bits(F_LEVEL, F_USED, F_TOK + ASLEEP, F_TOK + FLYING),
    _T_BASE | _bits(*(F_TOK + st for st in range(N_STATUS) if st != FLYING)),
    _T_BASE | _bits(F_LEVEL),
    CHG_ALL,
)

# Per seat: ``inc`` (int64, shape (2, MAX_SLOTS + 1, INCW)): rows ``0 .. MAX_SLOTS - 1`` of a
# seat hold a slot's fields (BF), its attack power (IC_AP), its Ward (IC_WARD, 0/1) and per
# group ``g`` the stamp of its last change (``IC_G + g``); row MAX_SLOTS the seat's counters,
# the stamp of their last change (IS_DRAWT), per group the stamp of the last change to any creation or to their
# number (``IS_MASS + g``); ``inc[0, MAX_SLOTS, IS_STAMP]`` the step stamp, ``IS_EPOCH`` the
# stamp of the seat's first step of the game.
IC_AP, IC_WARD, IC_G = BF, BF + 1, BF + 2
INCW = BF + 2 + NG
# ``sl`` (what ``slot_table`` computes, what the rows read): a slot's attack power and Ward at
# ``IC_AP`` and ``IC_WARD`` of a seat's rows, as in ``inc``: a step reads them from the
# deciding seat's copy itself (``inc`` is its ``sl``), which ``_note_changes`` keeps current
SL_AP, SL_WARD = IC_AP, IC_WARD
IS_NB, IS_HANDN, IS_DECKN, IS_POS, IS_DRAWT, IS_STAMP, IS_EPOCH, IS_MASS = 0, 1, 2, 3, 4, 5, 6, 7
# ``cs`` (float64, (MAX_SLOTS, MAX_ABIL, 2, MAX_SLOTS + 2)): the score of row (s, i, tp, ts)
# at index ts + 1, the gate of (s, i) at index CS_GATE of tp 0; ``ct`` (int64, the same
# shape): the stamp of the step that computed that score, and at CS_GATE of tp 0 the stamp
# of the last step that found the gate of (s, i) changed.
CS_GATE = MAX_SLOTS + 1
if IS_MASS + NG > INCW:
    raise ValueError("inc's seat row is too narrow for its counters")


# What a slot's attack power and Ward read of it (beyond its seat's cards, for a Pack)
_AP_READS = _bits(F_CARD, F_LEVEL)


@leaf(inline="always")
def _note_seat(table, bd, pl, q, b, iq, stamp, fresh):
    """``_note_changes`` for seat ``q`` (``b``, ``iq``: its rows of ``bd`` and
    ``inc``)."""
    nb = pl[q, K_NB]
    onb = iq[MAX_SLOTS, IS_NB]
    mass = CHG_COUNT if nb != onb else 0
    cards = fresh or nb != onb
    if not cards:
        for s in range(1, nb):
            if b[s, F_CARD] != iq[s, F_CARD]:
                cards = True
                break
    for s in range(nb):
        c = CHG_ALL
        if s < onb:
            c = row_diff(b, s, iq, s, BF)
        if cards or c & _AP_READS:
            ap = attack_power(table, bd, pl, q, s)
            ward = 1 if warded(table, bd, q, s) else 0
            if ap != iq[s, IC_AP]:
                c |= CHG_AP
            iq[s, IC_AP] = ap  # else the copy's are still this slot's
            iq[s, IC_WARD] = ward
        if c != 0:
            for f in range(BF):
                iq[s, f] = b[s, f]
            for g in range(NG):
                if c & G_READS[g]:
                    iq[s, IC_G + g] = stamp
            if s > 0:
                mass |= c
    iq[MAX_SLOTS, IS_NB] = nb
    if mass != 0:
        for g in range(NG):
            if mass & (G_READS[g] | CHG_COUNT):
                iq[MAX_SLOTS, IS_MASS + g] = stamp
    if (
        pl[q, K_HANDN] != iq[MAX_SLOTS, IS_HANDN]
        or pl[q, K_DECKN] != iq[MAX_SLOTS, IS_DECKN]
        or pl[q, K_POS] != iq[MAX_SLOTS, IS_POS]
    ):
        iq[MAX_SLOTS, IS_DRAWT] = stamp
    iq[MAX_SLOTS, IS_HANDN] = pl[q, K_HANDN]
    iq[MAX_SLOTS, IS_DECKN] = pl[q, K_DECKN]
    iq[MAX_SLOTS, IS_POS] = pl[q, K_POS]


@leaf
def _note_changes(table, bd, pl, inc, stamp, fresh):
    """Keep the attack power and Ward of every card in play current in ``inc``
    (at ``SL_AP`` and ``SL_WARD``: what ``slot_table`` computes), stamp in ``inc`` what changed
    since the previous call (see the section's comment) and take the new copy:
    per slot and group of fields (``IC_G``), per seat and group over its
    creations and their number (``IS_MASS``), per seat its draw counters
    (``IS_DRAWT``). A slot's attack power and Ward are computed again only
    when its card or level changed, or a card of its seat or their number
    (a Pack counts its group), or ``fresh``; else the copy's are still theirs."""
    for q in range(2):  # a seat's rows as 2-d views: fewer strides to keep in registers
        _note_seat(table, bd, pl, q, bd[q], inc[q], stamp, fresh)


@leaf(inline="always")
def _target_group(eff, param, enemy):
    """The group of target fields that ``_effect_one_sl`` reads for ``eff`` with
    ``param`` on an enemy's card or an own card."""
    if eff == E_STATUS:
        if enemy:
            return G_BASE
        if param == ASLEEP:
            return G_DMG
        if param == FLYING:
            return G_FLY
        return G_BASE
    if eff == E_HEAL:
        return G_BASE if enemy else G_DMG
    if eff == E_DAMAGE:
        return G_DMG if enemy else G_BASE
    if eff == E_CLEANSE:
        return G_BASE if enemy else G_CLEANSE
    if eff == E_LEVEL:
        return G_BASE if enemy else G_LEVEL
    return G_ALL


@leaf(inline="always")
def _target_stamp(inc, g, tp, ts):
    """The stamp of the last change to what the features of an effect on target
    ``(tp, ts)`` read: of its group ``g`` (``_target_group``), or, ``g`` -1 (a
    Draw), of its seat's draw counters."""
    u = np.uint64(tp)  # unsigned: no negative-index fix-up
    if g < 0:
        return inc[u, MAX_SLOTS, IS_DRAWT]
    if ts == -1:
        return inc[u, MAX_SLOTS, np.uint64(IS_MASS + g)]
    return inc[u, np.uint64(ts), np.uint64(IC_G + g)]


@leaf
def slot_table(table, bd, pl, sl):
    """``sl[seat, slot]``: the ``attack_power`` and ``warded`` (0/1) of every card in play."""
    for q in range(2):
        for s in range(pl[q, K_NB]):
            sl[q, s, SL_AP] = attack_power(table, bd, pl, q, s)
            sl[q, s, SL_WARD] = 1 if warded(table, bd, q, s) else 0


@leaf(inline="always")
def targets_sl(bd, pl, sl, p, code, self_slot, exclude, spell, tg):
    """``targets`` with Ward read from ``sl`` (``slot_table``)."""
    q = 1 - p
    n = 0
    if code == T_SELF:
        if self_slot >= 0:
            tg[0, 0] = p
            tg[0, 1] = self_slot
            n = 1
    elif code == T_OWN_CREATION:
        for s in range(1, pl[p, K_NB]):
            if s != exclude:
                tg[n, 0] = p
                tg[n, 1] = s
                n += 1
    elif code == T_ENEMY_CREATION or code == T_ENEMY_ANY:
        for s in range(1, pl[q, K_NB]):
            if sl[q, s, SL_WARD] == 0:
                tg[n, 0] = q
                tg[n, 1] = s
                n += 1
        if code == T_ENEMY_ANY and not spell:
            tg[n, 0] = q
            tg[n, 1] = 0
            n += 1
    elif code == T_ENEMY_PRIMAL:
        if not spell:
            tg[0, 0] = q
            tg[0, 1] = 0
            n = 1
    elif code == T_OWN_PRIMAL:
        if not spell:
            tg[0, 0] = p
            tg[0, 1] = 0
            n = 1
    elif code == T_ALL_ENEMY_CREATIONS:
        tg[0, 0] = q
        tg[0, 1] = -1
        n = 1
    elif code == T_PLAYER:
        tg[0, 0] = p
        tg[0, 1] = -1
        n = 1
    return n


# Rows other than the ability rows (Stop, Create, Upgrade, casts: a few a
# step) call these as one compiled copy each, not inlined at every site.
@leaf(
    "int64(int64[:, :, ::1], int64[:, ::1], int64[:, :, ::1], int64, int64, int64, int64, boolean, int64[:, ::1])"
)
def targets_sl_of(bd, pl, sl, p, code, self_slot, exclude, spell, tg):
    """``targets_sl``, compiled once."""
    return targets_sl(bd, pl, sl, p, code, self_slot, exclude, spell, tg)


@leaf("float64(float64[::1], int64, float64[:, ::1], int64, int64)")
def score_of(w, base, feats, k, nf):
    """``score``, compiled once."""
    return score(w, base, feats, k, nf)


@leaf
def effect_features_sl(rules, table, bd, pl, sl, p, effect, n, param, tp, ts, q, feats, k):
    """``effect_features`` with attack powers read from ``sl`` (``slot_table``),
    compiled once: the rows of casts call it."""
    _effect_features_sl(rules, table, bd, pl, sl, p, effect, n, param, tp, ts, q, feats, k)


# The ability rows (the hot loop) inline it: a call passes its six arrays as
# about 60 words on the stack, which a perf profile of the Creation phase
# showed as several percent of a game.
@leaf(inline="always")
def _effect_features_sl(rules, table, bd, pl, sl, p, effect, n, param, tp, ts, q, feats, k):
    """The body of ``effect_features_sl``."""
    if effect == E_DRAW:
        room = min(rules[R_HAND_LIMIT] - pl[tp, K_HANDN], pl[tp, K_DECKN] - pl[tp, K_POS])
        feats[k, PF_DRAW] += q * max(0, min(n, room))
        return
    lo, hi = ts, ts + 1  # one card, or every creation of seat tp (one inlined copy)
    if ts == -1:
        lo, hi = 1, pl[tp, K_NB]
    for s in range(lo, hi):
        _effect_one_sl(rules, table, bd, pl, sl, p, effect, n, param, tp, s, q, feats, k)


@leaf(inline="always")
def _effect_one_sl(rules, table, bd, pl, sl, p, effect, n, param, tp, ts, q, feats, k):
    """``effect_features_sl`` on one card in play (slot ``ts`` of seat ``tp``)."""
    u_p, u_s = np.uint64(tp), np.uint64(ts)  # unsigned: no negative-index fix-up
    card = np.uint64(bd[u_p, u_s, F_CARD])
    enemy = tp != p
    if enemy and ts > 0:
        feats[k, PF_TARGET_AP] += sl[u_p, u_s, SL_AP]
    if effect == E_STATUS:
        if enemy:
            if param == FEARED or param == BLINDED or param == ASLEEP:
                if ts > 0 and sl[u_p, u_s, SL_AP] > 0:
                    feats[k, PF_DISABLE] += q * n
            elif param == POISONED:
                feats[k, PF_POISON] += q * n
            elif param == SILENCED:
                if has_active(table, card):
                    feats[k, PF_SILENCE] += q * n
        else:
            if param == ASLEEP:
                feats[k, PF_SELF_SLEEP] += q * n
                feats[k, PF_HEAL] += q * min(n, bd[u_p, u_s, F_DMG])
            elif param == FLYING:
                if (
                    ts > 0
                    and not flying(table, bd, tp, ts)
                    and can_attack(rules, table, bd, tp, ts)
                ):
                    feats[k, PF_FLYING] += q * n
    elif effect == E_HEAL:
        if not enemy:
            feats[k, PF_HEAL] += q * min(n, bd[u_p, u_s, F_DMG])
    elif effect == E_DAMAGE:
        if enemy:
            d = typed_damage(rules, table, card, n, param)
            left = hp(table, bd, tp, ts) - bd[u_p, u_s, F_DMG]
            if ts == 0:
                feats[k, PF_DMG_PRIMAL] += q * min(d, left)
                if d >= left:
                    feats[k, PF_LETHAL] += q
            else:
                feats[k, PF_DMG_CREATURE] += q * min(d, left)
                if d >= left:
                    feats[k, PF_KILLS] += q
    elif effect == E_CLEANSE:
        if not enemy:
            for st in range(N_STATUS):
                if st != FLYING:
                    feats[k, PF_CLEANSE] += q * min(n, bd[u_p, u_s, F_TOK + st])
    elif effect == E_LEVEL:
        if not enemy:
            feats[k, PF_LEVELS] += q * (
                min(MAX_LEVEL, bd[u_p, u_s, F_LEVEL] + n) - bd[u_p, u_s, F_LEVEL]
            )


@leaf(inline="always")
def _effect_row(
    rules,
    table,
    bd,
    pl,
    sl,
    p,
    cand,
    feats,
    n,
    kind,
    h,
    s,
    a,
    tp,
    ts,
    eff,
    nn,
    param,
    gate,
    flag,
    sacrifice,
):
    """``_effect_candidate`` with ``effect_features_sl`` (the row is not scored)."""
    if n >= MAXC:
        return n
    _row_open(cand, feats, n, kind, h, s, a, tp, ts, flag, sacrifice)
    effect_features_sl(rules, table, bd, pl, sl, p, eff, nn, param, tp, ts, gate, feats, n)
    _row_close(feats, n)
    return n + 1


@leaf(inline="always")
def _row_open(cand, feats, n, kind, h, s, a, tp, ts, flag, sacrifice):
    """Row ``n`` of an effect: its candidate, its flag and sacrifice features."""
    _clear(feats, n, NPL)
    _add(cand, n, kind, h, s, a, tp, ts)
    feats[n, flag] = 1.0
    feats[n, PF_SACRIFICE] = sacrifice


@leaf(inline="always")
def _row_close(feats, n):
    """An effect row whose effect does nothing is wasted."""
    if not _any_effect(feats, n):
        feats[n, PF_WASTED] = 1.0


@leaf
def creation_phase(
    rules,
    table,
    bd,
    pl,
    dk,
    hd,
    forb,
    p,
    side,
    w,
    noise,
    rngs,
    cand,
    feats,
    scores,
    tg,
    hr,
    inc,
    cs,
    ct,
    log,
    ints,
    do_log,
    turn,
    rec,
    rec_u,
    rec_meta,
    rec_n,
    probe,
):
    """Seat ``p``'s Creation phase: each step lists the candidates, scores them
    (``scores``), chooses one (``pick``) and carries it out (``do_play``), until
    Stop or a Primal falls; returns 1 if one fell. With rows in ``rec_meta``,
    each step is recorded (``snapshot``).

    A step's rows and scores are those of ``play_candidates`` and ``score``, in
    one pass (see the section's comment); ``hr`` is a work array, ``inc``,
    ``cs`` and ``ct`` the incremental state of seat ``p`` (``inc`` also holds
    the attack power and Ward of every card in play: the rows' ``sl``). The seat's
    first step of a game computes every row; a later step keeps the score of
    an ability row computed by an earlier step of the game when nothing it
    reads changed since, and leaves its ``feats`` row unwritten.

    ``probe`` 0 or 1 (profiling and tests): only list and score the rows of
    the current state, as a step does, computing every row if ``probe`` is 1
    (a call whose ``p`` or ``w`` may differ from the previous call with this
    state), and return their number; ``dk``, ``rngs``, ``log`` and the
    recording arrays are then not touched. The game passes -1. One function,
    not a phase calling a step function: a call passes its 24 arrays as about
    220 words, once a phase instead of once a step (4% of a game), and numba's
    inlining of a step function doubled this kernel's compile time."""
    recording = rec_meta.shape[0] > 0
    sl = inc  # SL_AP and SL_WARD of each slot, kept current by _note_changes
    fell = 0
    refused = False
    for step in range(64):
        if probe < 0:
            refused = refused or create_refused(rules, table, pl, hd, forb, p)
        r = -1
        if recording and probe < 0:
            r = snapshot(rec, rec_u, rec_meta, rec_n, 1, p, side, turn, bd, pl, hd, dk, rngs)
        # every row computed afresh at the seat's first step of the game
        fresh = probe == 1 if probe >= 0 else step == 0 and turn <= 2
        q = 1 - p
        stamp = inc[0, MAX_SLOTS, IS_STAMP] + 1
        inc[0, MAX_SLOTS, IS_STAMP] = stamp
        if fresh:
            inc[0, MAX_SLOTS, IS_EPOCH] = stamp
        epoch = inc[0, MAX_SLOTS, IS_EPOCH]
        _note_changes(table, bd, pl, inc, stamp, fresh)
        n = 0
        _clear(feats, 0, NPL)
        _add(cand, 0, PK_STOP, -1, -1, -1, -1, -1)
        feats[0, PF_STOP] = 1.0
        scores[0] = score_of(w, P_PLAY, feats, 0, NPL)
        # not the constant 1: numba would compile a second effect_features_sl for it
        n = np.int64(1)
        mine = pl[p, K_NB] - 1
        theirs = pl[q, K_NB] - 1
        cost = rules[R_UPGRADE_COST]
        for h in range(pl[p, K_HANDN]):
            c = hd[p, h]
            hr[h, 0] = n
            hr[h, 1] = n
            if forb[c]:
                continue
            twin = -1
            for h2 in range(h):
                if hd[p, h2] == c:
                    twin = h2
                    break
            if twin >= 0:  # the same card earlier in the hand: the same rows
                for j in range(hr[twin, 0], hr[twin, 1]):
                    if n < MAXC:
                        for f in range(CW):
                            cand[n, f] = cand[j, f]
                        cand[n, CH] = h
                        for f in range(NPL):
                            feats[n, f] = feats[j, f]
                        scores[n] = scores[j]
                        n += 1
                hr[h, 1] = n
                continue
            t = table[c, C_TYPE]
            if t == CREATION:
                if mine < rules[R_MAX_BOARD] and n < MAXC:
                    _clear(feats, n, NPL)
                    _add(cand, n, PK_CREATE, h, -1, -1, -1, -1)
                    feats[n, PF_CREATE] = 1.0
                    feats[n, PF_AP_GAIN] = table[c, C_AP]
                    feats[n, PF_HP_GAIN] = table[c, C_HP]
                    feats[n, PF_BOARD_GAP] = theirs - mine
                    scores[n] = score_of(w, P_PLAY, feats, n, NPL)
                    n += 1
            elif t == UPGRADE:
                for s in range(1, pl[p, K_NB]):
                    old = bd[p, s, F_CARD]
                    if (
                        table[old, C_KIND] == table[c, C_ONTO]
                        and bd[p, s, F_LEVEL] >= cost
                        and n < MAXC
                    ):
                        _clear(feats, n, NPL)
                        _add(cand, n, PK_UPGRADE, h, s, -1, -1, -1)
                        feats[n, PF_UPGRADE] = 1.0
                        feats[n, PF_AP_GAIN] = table[c, C_AP] - table[old, C_AP]
                        feats[n, PF_HP_GAIN] = table[c, C_HP] - table[old, C_HP]
                        if bd[p, s, F_DMG] >= table[c, C_HP]:
                            feats[n, PF_WASTED] = 1.0
                        scores[n] = score_of(w, P_PLAY, feats, n, NPL)
                        n += 1
            elif t == SORCERY:
                kind = table[c, C_KIND]
                eff = _ab(table, c, 0, A_EFFECT)
                code = _ab(table, c, 0, A_TARGET)
                param = _ab(table, c, 0, A_PARAM)
                gate = gate_prob(table, bd, pl, p, c, 0)
                if kind == CURSE:
                    x = table[bd[p, 0, F_CARD], C_MP]
                    nn = amount(table, bd, p, c, 0, x)
                    for s in range(1, pl[q, K_NB]):
                        if sl[q, s, SL_WARD]:
                            continue
                        m = 1
                        if code == T_ENEMY_CREATION or code == T_SELF or code == T_ENEMY_ANY:
                            tg[0, 0] = q
                            tg[0, 1] = s
                        else:
                            m = targets_sl_of(bd, pl, sl, p, code, -1, -1, True, tg)
                        for j in range(m):
                            k = n
                            n = _effect_row(
                                rules,
                                table,
                                bd,
                                pl,
                                sl,
                                p,
                                cand,
                                feats,
                                n,
                                PK_CAST,
                                h,
                                s,
                                0,
                                tg[j, 0],
                                tg[j, 1],
                                eff,
                                nn,
                                param,
                                gate,
                                PF_CURSE,
                                0.0,
                            )
                            if n > k:
                                scores[k] = score_of(w, P_PLAY, feats, k, NPL)
                else:
                    for s in range(1, pl[p, K_NB]):
                        if kind == RITUAL:
                            x = table[bd[p, s, F_CARD], C_MP]
                        else:
                            x = table[bd[p, 0, F_CARD], C_MP]
                        nn = amount(table, bd, p, c, 0, x)
                        m = 1
                        if kind == BLESSING and (code == T_OWN_CREATION or code == T_SELF):
                            tg[0, 0] = p
                            tg[0, 1] = s
                        else:
                            m = targets_sl_of(
                                bd,
                                pl,
                                sl,
                                p,
                                code,
                                s if kind == BLESSING else -1,
                                s if kind == RITUAL else -1,
                                True,
                                tg,
                            )
                        sacrifice = 0.0
                        if kind == RITUAL:
                            sacrifice = (
                                sl[p, s, SL_AP] + table[bd[p, s, F_CARD], C_HP] - bd[p, s, F_DMG]
                            )
                        for j in range(m):
                            k = n
                            n = _effect_row(
                                rules,
                                table,
                                bd,
                                pl,
                                sl,
                                p,
                                cand,
                                feats,
                                n,
                                PK_CAST,
                                h,
                                s,
                                0,
                                tg[j, 0],
                                tg[j, 1],
                                eff,
                                nn,
                                param,
                                gate,
                                PF_RITUAL if kind == RITUAL else PF_BLESSING,
                                sacrifice,
                            )
                            if n > k:
                                scores[k] = score_of(w, P_PLAY, feats, k, NPL)
            hr[h, 1] = n
        # active abilities: one per creation per turn
        for s in range(1, pl[p, K_NB]):
            if bd[p, s, F_USED] or bd[p, s, F_TOK + SILENCED] > 0:
                continue
            card = np.uint64(bd[p, s, F_CARD])  # unsigned: no negative-index fix-up
            lvl = bd[p, s, F_LEVEL]
            could_attack = can_attack(rules, table, bd, p, s)
            src_t = max(epoch, inc[p, s, IC_G + G_SRC])
            for i in range(table[card, C_N_ABIL]):
                if _ab(table, card, i, A_SHAPE) != SHAPE_ACTIVE or lvl < _ab(
                    table, card, i, A_LEVEL
                ):
                    continue
                eff = _ab(table, card, i, A_EFFECT)
                param = _ab(table, card, i, A_PARAM)
                nn = amount(table, bd, p, card, i, table[card, C_MP])
                gate = gate_prob(table, bd, pl, p, card, i)
                if eff == E_DAMAGE and bd[p, s, F_TOK + BLINDED] > 0:
                    gate *= 0.5
                csi = cs[s, i]  # the rows of (s, i) as 2-d views: fewer strides per row
                cti = ct[s, i]
                if csi[0, CS_GATE] != gate:
                    csi[0, CS_GATE] = gate
                    cti[0, CS_GATE] = stamp
                since = max(src_t, cti[0, CS_GATE])
                g_own, g_enemy = -1, -1  # a Draw's stamp is its seat's draw counters'
                if eff != E_DRAW:
                    g_own = _target_group(eff, param, False)
                    g_enemy = _target_group(eff, param, True)
                m = targets_sl(bd, pl, sl, p, _ab(table, card, i, A_TARGET), s, -1, False, tg)
                lost = sl[p, s, SL_AP] if could_attack else 0.0
                for j in range(m):
                    if n >= MAXC:
                        break
                    tp = tg[j, 0]
                    ts = tg[j, 1]
                    # unsigned indices (all are >= 0): numba adds no negative-index fix-up
                    up, ut, un = np.uint64(tp), np.uint64(ts + 1), np.uint64(n)
                    t = cti[up, ut]
                    if t >= since and t >= _target_stamp(
                        inc, g_own if tp == p else g_enemy, tp, ts
                    ):
                        _add(cand, un, PK_ABILITY, -1, s, i, tp, ts)
                        scores[un] = csi[up, ut]
                    else:  # as _effect_row, with the features inlined
                        _row_open(cand, feats, un, PK_ABILITY, -1, s, i, tp, ts, PF_ABILITY, 0.0)
                        _effect_features_sl(
                            rules, table, bd, pl, sl, p, eff, nn, param, tp, ts, gate, feats, un
                        )
                        _row_close(feats, un)
                        feats[un, PF_LOST_ATTACK] = lost
                        scores[un] = score(w, P_PLAY, feats, un, NPL)
                        csi[up, ut] = scores[un]
                        cti[up, ut] = stamp
                    n += 1
        if probe >= 0:
            return n
        k = pick(scores, n, w[P_TEMP], noise)
        if r >= 0:
            rec_meta[r, 2] = k
        if k == 0:
            break
        fell = do_play(rules, table, bd, pl, dk, hd, p, cand, k, rngs, log, ints, do_log, turn)
        if fell:
            break
    if refused:
        pl[p, K_REFUSED] += 1
    return fell


@leaf
def do_play(rules, table, bd, pl, dk, hd, p, cand, k, rngs, log, ints, do_log, turn):
    """Carry out Creation-phase candidate ``k``; returns 1 if a Primal fell."""
    kind = cand[k, CK]
    h = cand[k, CH]
    s = cand[k, CS]
    if kind == PK_CREATE:
        c = hd[p, h]
        remove_from_hand(pl, hd, p, h)
        nb = pl[p, K_NB]
        for f in range(BF):
            bd[p, nb, f] = 0
        bd[p, nb, F_CARD] = c
        bd[p, nb, F_STACK] = 1
        pl[p, K_NB] = nb + 1
        pl[p, K_CREATED] += 1
        pl[p, K_PEAK] = max(pl[p, K_PEAK], nb)
        _log(log, ints, do_log, turn, p, EV_CREATE, c, nb, 0, 0, 0)
        return 0
    if kind == PK_UPGRADE:
        c = hd[p, h]
        remove_from_hand(pl, hd, p, h)
        old = bd[p, s, F_CARD]
        bd[p, s, F_CARD] = c
        bd[p, s, F_LEVEL] -= rules[R_UPGRADE_COST]
        bd[p, s, F_STACK] += 1  # R5: damage and status tokens stay
        pl[p, K_UPG] += 1
        _log(log, ints, do_log, turn, p, EV_UPGRADE, old, c, bd[p, s, F_LEVEL], s, 0)
        sweep(table, bd, pl, p, log, ints, do_log, turn)
        return 0
    tp = cand[k, CTP]
    ts = cand[k, CTS]
    if kind == PK_CAST:
        c = hd[p, h]
        remove_from_hand(pl, hd, p, h)
        pl[p, K_DISC] += 1
        pl[p, K_SPELLS] += 1
        sk = table[c, C_KIND]
        if sk == RITUAL:
            x = table[bd[p, s, F_CARD], C_MP]
            _log(log, ints, do_log, turn, p, EV_CAST, c, p, bd[p, s, F_CARD], x, tp)
            _log(log, ints, do_log, turn, p, EV_SACRIFICE, bd[p, s, F_CARD], s, 0, 0, 0)
            destroy(bd, pl, p, s)
            if tp == p and ts > s:
                ts -= 1
        else:
            x = table[bd[p, 0, F_CARD], C_MP]
            on = 1 - p if sk == CURSE else p
            _log(log, ints, do_log, turn, p, EV_CAST, c, on, bd[on, s, F_CARD], x, tp)
        if not gate_flip(table, bd, pl, p, c, 0, rngs, log, ints, do_log, turn):
            return 0
        return apply_effect(
            rules,
            table,
            bd,
            pl,
            dk,
            hd,
            p,
            _ab(table, c, 0, A_EFFECT),
            amount(table, bd, p, c, 0, x),
            _ab(table, c, 0, A_PARAM),
            tp,
            ts,
            log,
            ints,
            do_log,
            turn,
        )
    # an active ability
    card = bd[p, s, F_CARD]
    i = cand[k, CA]
    bd[p, s, F_USED] = 1
    pl[p, K_ABIL] += 1
    _log(
        log,
        ints,
        do_log,
        turn,
        p,
        EV_ABILITY,
        card,
        i,
        tp,
        bd[tp, ts, F_CARD] if ts >= 0 else -1,
        s,
    )
    if not gate_flip(table, bd, pl, p, card, i, rngs, log, ints, do_log, turn):
        return 0
    if _ab(table, card, i, A_EFFECT) == E_DAMAGE and bd[p, s, F_TOK + BLINDED] > 0:
        # Blinded: "when it would deal damage, flip the coin: on tails it deals none"
        heads = coin(rngs)
        _log(log, ints, do_log, turn, p, EV_BLIND, card, 1 if heads else 0, 0, 0, 0)
        if not heads:
            return 0
    return apply_effect(
        rules,
        table,
        bd,
        pl,
        dk,
        hd,
        p,
        _ab(table, card, i, A_EFFECT),
        amount(table, bd, p, card, i, table[card, C_MP]),
        _ab(table, card, i, A_PARAM),
        tp,
        ts,
        log,
        ints,
        do_log,
        turn,
    )


# ---- combat ------------------------------------------------------------------------------------
@leaf
def can_block(table, bd, q, b, attacker_flies):
    if b == 0 or bd[q, b, F_TOK + ASLEEP] > 0:
        return False  # Primals don't block; asleep creations can't
    return (not attacker_flies) or flying(table, bd, q, b)


@leaf
def attackers(rules, table, bd, pl, w, p, noise, atk, blk, feats, log, ints, do_log, turn):
    """Seat ``p`` declares its attackers (slots into ``atk``); returns how many."""
    q = 1 - p
    behind = (bd[p, 0, F_DMG] - bd[q, 0, F_DMG]) / 10.0
    left = hp(table, bd, q, 0) - bd[q, 0, F_DMG]
    sure = 0  # damage no enemy creation can block
    for s in range(pl[p, K_NB]):
        if can_attack(rules, table, bd, p, s) and blockers_for(table, bd, pl, q, p, s) == 0:
            sure += typed_damage_of(
                rules, table, bd[q, 0, F_CARD], attack_power_of(table, bd, pl, p, s), PHYSICAL
            )
    na = 0
    for s in range(pl[p, K_NB]):
        if not can_attack(rules, table, bd, p, s):
            continue
        nblk = blockers_for(table, bd, pl, q, p, s)
        _clear(feats, 0, NAT)
        feats[0, 0] = 1.0
        feats[0, 1] = attack_power_of(table, bd, pl, p, s)
        feats[0, 2] = 1.0 if nblk == 0 else 0.0
        feats[0, 3] = nblk
        feats[0, 4] = 1.0 if s == 0 else 0.0
        feats[0, 5] = 1.0 if sure >= left else 0.0
        feats[0, 6] = behind
        if yes(score(w, P_ATTACK, feats, 0, NAT), w[P_TEMP], noise):
            atk[na] = s
            blk[na] = -1
            na += 1
            _log(log, ints, do_log, turn, p, EV_ATTACK, bd[p, s, F_CARD], s, 0, 0, 0)
    return na


@leaf
def blockers_for(table, bd, pl, q, p, s):
    """Creations of seat ``q`` able to block attacker ``s`` of seat ``p``."""
    fl = flying(table, bd, p, s)
    n = 0
    for b in range(1, pl[q, K_NB]):
        if can_block(table, bd, q, b, fl):
            n += 1
    return n


@leaf
def fear_flips(bd, pl, q, rngs, fear_ok, log, ints, do_log, turn):
    """When the Defenders step starts each feared creation flips: tails, it
    cannot block this combat."""
    for b in range(pl[q, K_NB]):
        fear_ok[b] = 1
        if b > 0 and bd[q, b, F_TOK + FEARED] > 0:
            heads = coin(rngs)
            fear_ok[b] = 1 if heads else 0
            _log(log, ints, do_log, turn, q, EV_FEAR, bd[q, b, F_CARD], 1 if heads else 0, 0, 0, 0)


@leaf
def blocks(
    rules,
    table,
    bd,
    pl,
    wq,
    p,
    atk,
    blk,
    na,
    fear_ok,
    feats,
    scores,
    slots,
    noise_q,
    used,
    log,
    ints,
    do_log,
    turn,
):
    """The defender (seat ``1 - p``) assigns at most one blocker to each
    attacker, hardest-hitting attacker first; ``blk[i]`` becomes the blocking
    slot or -2 (unblocked)."""
    q = 1 - p
    for b in range(pl[q, K_NB]):
        used[b] = 0
    pcard = bd[q, 0, F_CARD]
    incoming = 0
    for i in range(na):
        incoming += typed_damage_of(
            rules, table, pcard, attack_power_of(table, bd, pl, p, atk[i]), PHYSICAL
        )
    hp_left = hp(table, bd, q, 0) - bd[q, 0, F_DMG]
    for _ in range(na):
        i = -1
        bap = -1
        for j in range(na):
            if blk[j] == -1:
                a = attack_power_of(table, bd, pl, p, atk[j])
                if a > bap:
                    bap = a
                    i = j
        s = atk[i]
        fl = flying(table, bd, p, s)
        ap = attack_power_of(table, bd, pl, p, s)
        blind = 0.5 if bd[p, s, F_TOK + BLINDED] > 0 else 1.0
        full = typed_damage_of(rules, table, pcard, ap, PHYSICAL)
        prevented = blind * full
        danger = 1.0 if incoming >= hp_left else 0.0
        _clear(feats, 0, NBL)
        feats[0, 0] = 1.0
        slots[0] = -2
        n = 1
        for b in range(1, pl[q, K_NB]):
            if used[b] or not fear_ok[b] or not can_block(table, bd, q, b, fl):
                continue
            bc = bd[q, b, F_CARD]
            d = typed_damage_of(rules, table, bc, ap, PHYSICAL)
            rem = table[bc, C_HP] - bd[q, b, F_DMG]
            _clear(feats, n, NBL)
            feats[n, 1] = prevented
            if d >= rem:
                feats[n, 2] = blind
                feats[n, 3] = blind * (attack_power_of(table, bd, pl, q, b) + rem)
            else:
                feats[n, 5] = blind * d
            feats[n, 4] = prevented * danger
            slots[n] = b
            n += 1
        for k in range(n):
            scores[k] = score(wq, P_BLOCK, feats, k, NBL)
        k = pick(scores, n, wq[P_TEMP], noise_q)
        blk[i] = slots[k]
        if k > 0:
            used[slots[k]] = 1
            incoming -= full
            _log(
                log,
                ints,
                do_log,
                turn,
                q,
                EV_BLOCK,
                bd[p, s, F_CARD],
                bd[q, slots[k], F_CARD],
                slots[k],
                s,
                0,
            )


@leaf
def damage_step(rules, table, bd, pl, p, atk, blk, na, rngs, log, ints, do_log, turn):
    """Every attacker deals its damage (a blinded one flips first: tails, none);
    blockers don't hit back. Returns 1 if the defending Primal fell."""
    q = 1 - p
    for i in range(na):
        s = atk[i]
        if bd[p, s, F_TOK + BLINDED] > 0:
            heads = coin(rngs)
            _log(log, ints, do_log, turn, p, EV_BLIND, bd[p, s, F_CARD], 1 if heads else 0, 0, 0, 0)
            if not heads:
                continue
        ap = attack_power_of(table, bd, pl, p, s)
        b = blk[i] if blk[i] >= 0 else 0
        d = typed_damage_of(rules, table, bd[q, b, F_CARD], ap, PHYSICAL)
        bd[q, b, F_DMG] += d
        _log(
            log,
            ints,
            do_log,
            turn,
            p,
            EV_DAMAGE,
            bd[p, s, F_CARD],
            q,
            bd[q, b, F_CARD],
            d,
            PHYSICAL,
        )
        if b == 0 and bd[q, 0, F_DMG] >= hp(table, bd, q, 0):
            sweep(table, bd, pl, q, log, ints, do_log, turn)  # R4 holds to the last turn
            return 1
    # R4: a blocker whose damage reached its HP is destroyed at once; sweeping
    # after the last attacker is the same moment, since nothing in the Damage
    # step heals, and a creation blocks one attacker only (slots stay put for blk)
    sweep(table, bd, pl, q, log, ints, do_log, turn)
    return 0


@leaf
def end_of_turn(table, bd, pl, p, log, ints, do_log, turn):
    """End of ``p``'s turn (RD2), card by card: one token of each status comes
    off, in the status table's order (a sleep token heals 1 before a poison
    token hurts 1); a creation whose damage reaches its HP is destroyed that
    moment (R4), so no later step (Regenerate, a sleep token) can save it;
    then the passives of a creation still in play act (Regenerate, Grow).
    Returns 1 if ``p``'s own Primal fell (to poison)."""
    s = 0
    while s < pl[p, K_NB]:
        gone = False
        for st in range(N_STATUS):
            if bd[p, s, F_TOK + st] == 0:
                continue
            bd[p, s, F_TOK + st] -= 1
            if st == ASLEEP and bd[p, s, F_DMG] > 0:
                bd[p, s, F_DMG] -= 1
                _log(log, ints, do_log, turn, p, EV_SLEEP_HEAL, bd[p, s, F_CARD], s, 1, 0, 0)
            elif st == POISONED:
                bd[p, s, F_DMG] += 1
                _log(log, ints, do_log, turn, p, EV_POISON, bd[p, s, F_CARD], s, 1, 0, 0)
                if bd[p, s, F_DMG] >= hp(table, bd, p, s):
                    if s == 0:
                        return 1  # "a Primal killed by its own poison loses then"
                    # R4: destroyed at once, its other tokens and passives with it
                    _log(log, ints, do_log, turn, p, EV_DESTROY, bd[p, s, F_CARD], s, 0, 0, 0)
                    destroy(bd, pl, p, s)
                    gone = True
                    break
        if gone:
            continue  # the next creation has moved into slot s
        if s > 0:
            card = bd[p, s, F_CARD]
            lvl = bd[p, s, F_LEVEL]
            r = passive_amount(table, card, lvl, E_REGEN)
            if r > 0 and bd[p, s, F_DMG] > 0:
                h = min(r, bd[p, s, F_DMG])
                bd[p, s, F_DMG] -= h
                _log(log, ints, do_log, turn, p, EV_REGEN, card, s, h, 0, 0)
            g = passive_amount(table, card, lvl, E_GROW)
            if g > 0 and lvl < MAX_LEVEL:
                bd[p, s, F_LEVEL] = min(MAX_LEVEL, lvl + g)
                _log(log, ints, do_log, turn, p, EV_GROW, card, s, bd[p, s, F_LEVEL] - lvl, 0, 0)
        s += 1
    return 0


# ---- one game -------------------------------------------------------------------------------------
# One signature each (as ``_log``): the call sites pass the seat, the effect or the
# decision kind as constants, and each constant would otherwise compile a copy of its own.
@leaf("int64(int64[::1], int64[:, ::1], int64[:, :, ::1], int64[:, ::1], int64)")
def check_invariants(rules, table, bd, pl, p):
    """0 if any invariant is broken: levels within 0..10, hand within its limit,
    token and damage counts never negative, no creation in play whose damage
    has reached its HP (R4: it is destroyed that moment)."""
    if pl[p, K_HANDN] < 0 or pl[p, K_HANDN] > rules[R_HAND_LIMIT]:
        return 0
    for s in range(pl[p, K_NB]):
        if bd[p, s, F_LEVEL] < 0 or bd[p, s, F_LEVEL] > MAX_LEVEL or bd[p, s, F_DMG] < 0:
            return 0
        if s > 0 and bd[p, s, F_DMG] >= hp(table, bd, p, s):
            return 0
        for st in range(N_STATUS):
            if bd[p, s, F_TOK + st] < 0:
                return 0
    return 1


@leaf
def start_game(sides, deck_n, primals, seed, deal, swap, rngs, bd, pl, dk, hd):
    """Set up game ``2·deal + swap``: side ``swap`` sits in seat 0."""
    for k in range(2):
        side = k  # rngs 0/1: the deck streams of sides A and B
        rng.seed_state(rngs[k], seed, deal, PURPOSE_DECK + side)
    rng.seed_state(rngs[2], seed, 2 * deal + swap, PURPOSE_PLAY_COINS)
    for k in range(2):
        rng.seed_state(rngs[4 + k], seed, deal, PURPOSE_NOISE + k)
    for p in range(2):
        side = p ^ swap
        for f in range(KW):
            pl[p, f] = 0
        for s in range(MAX_SLOTS):
            for f in range(BF):
                bd[p, s, f] = 0
        bd[p, 0, F_CARD] = primals[side]
        bd[p, 0, F_STACK] = 1
        pl[p, K_NB] = 1
        n = deck_n[side]
        for i in range(n):
            dk[p, i] = sides[side, i]
        rng.shuffle(rngs[side], dk[p], n)
        pl[p, K_DECKN] = n
        for h in range(hd.shape[1]):
            hd[p, h] = -1


@leaf(
    "int64(int64[::1], uint64[:, :, ::1], int64[:, ::1], int64[::1], int64, int64, int64, int64,"
    " int64[:, :, ::1], int64[:, ::1], int64[:, ::1], int64[:, ::1], uint64[:, ::1])"
)  # one copy (the kind is a constant)
def snapshot(rec, rec_u, rec_meta, rec_n, kind, p, side, turn, bd, pl, hd, dk, rngs):
    """Record the state of a decision (``kind`` 0: a Primal action, 1: a
    Creation-phase step, 2: the start of the Combat phase) for ``sims.trisk.profiling``: row ``rec_n[0]`` of
    ``rec_meta`` gets ``[offset, kind, choice (-1 until made), p, side, turn,
    creations in play + 1 of each seat]``; ``rec`` (from ``rec_n[1]``) the used
    board slots, the counters, the hands and the decks; ``rec_u`` the streams.
    When the buffers are full it records nothing and sets ``rec_n[2]`` to 1
    (``rec_meta`` has no rows when nothing is recorded). Returns the row, or -1."""
    i = rec_n[0]
    nb0 = pl[0, K_NB]
    nb1 = pl[1, K_NB]
    size = (nb0 + nb1) * BF + 2 * KW + 2 * MAX_HAND + 2 * dk.shape[1]
    if i >= rec_meta.shape[0] or rec_n[1] + size > rec.shape[0]:
        rec_n[2] = 1
        return -1
    o = rec_n[1]
    rec_meta[i, 0] = o
    rec_meta[i, 1] = kind
    rec_meta[i, 2] = -1
    rec_meta[i, 3] = p
    rec_meta[i, 4] = side
    rec_meta[i, 5] = turn
    rec_meta[i, 6] = nb0
    rec_meta[i, 7] = nb1
    for q in range(2):
        for s in range(pl[q, K_NB]):
            for f in range(BF):
                rec[o] = bd[q, s, f]
                o += 1
    for q in range(2):
        for f in range(KW):
            rec[o] = pl[q, f]
            o += 1
        for h in range(MAX_HAND):
            rec[o] = hd[q, h]
            o += 1
        for j in range(dk.shape[1]):
            rec[o] = dk[q, j]
            o += 1
    for r in range(6):
        for j in range(4):
            rec_u[i, r, j] = rngs[r, j]
    rec_n[0] = i + 1
    rec_n[1] = o
    return i


@leaf
def play(
    rules,
    table,
    ws,
    forbs,
    swap,
    rngs,
    bd,
    pl,
    dk,
    hd,
    cand,
    feats,
    scores,
    slots,
    tg,
    atk,
    blk,
    fear_ok,
    used,
    trk,
    log,
    ints,
    do_log,
    result,
    rec,
    rec_u,
    rec_meta,
    rec_n,
    hr,
    inc,
    cs,
    ct,
):
    """Play one set-up game to its end; fills ``result``. With rows in
    ``rec_meta``, every decision of the Primal and Creation phases and the
    start of every Combat phase is recorded (``snapshot``) for
    ``sims.trisk.profiling``."""
    recording = rec_meta.shape[0] > 0
    # the toss (RD5): seat 0 wins it, each side once per seat-swapped pair;
    # the winner chooses who starts
    toss = 0
    w_toss = ws[toss ^ swap]
    first = toss if w_toss[P_GO_FIRST] >= 0.5 else 1 - toss
    bd[1 - first, 0, F_LEVEL] = rules[R_SECOND_LEVEL]
    _log(log, ints, do_log, 0, toss, EV_TOSS, first, 0, 0, 0, 0)
    winner = DRAW
    reason = END_CAP
    turn = 0
    inv = 1
    # score trace (METRICS): the damage each seat has dealt to the other Primal
    for i in range(8):
        trk[i] = 0
    trk[0] = -1
    lead = trk[0:2]
    max_def = trk[2:4]
    not_ahead = trk[4:6]
    score_v = trk[6:8]
    max_turns = 2 * rules[R_MAX_TURNS]
    while turn < max_turns:
        p = (first + turn) % 2
        q = 1 - p
        side = p ^ swap
        w = ws[side]
        forb = forbs[side]
        noise = rngs[4 + side]
        turn += 1
        fell = 0
        for s in range(pl[p, K_NB]):
            bd[p, s, F_USED] = 0
        # ---- Primal phase: three actions
        for _ in range(rules[R_ACTIONS]):
            r = -1
            if recording:
                r = snapshot(rec, rec_u, rec_meta, rec_n, 0, p, side, turn, bd, pl, hd, dk, rngs)
            n = primal_candidates(rules, table, bd, pl, hd, forb, p, feats)
            for k in range(n):
                scores[k] = score(w, P_PRIMAL, feats, k, NPR)
            k = pick(scores, n, w[P_TEMP], noise)
            if r >= 0:
                rec_meta[r, 2] = k
            if k == 0:
                old = bd[p, 0, F_LEVEL]
                bd[p, 0, F_LEVEL] = min(MAX_LEVEL, old + 1)
                _log(log, ints, do_log, turn, p, EV_MEDITATE, bd[p, 0, F_LEVEL], 0, 0, 0, 0)
            elif k == 1:
                c = draw(rules, pl, dk, hd, p)
                if c >= 0:
                    pl[p, K_MUSTERED] += 1
                _log(log, ints, do_log, turn, p, EV_MUSTER, c, pl[p, K_HANDN], 0, 0, 0)
            else:
                s = k - 1
                old = bd[p, s, F_LEVEL]
                bd[p, s, F_LEVEL] = min(MAX_LEVEL, old + bd[p, 0, F_LEVEL])
                _log(
                    log,
                    ints,
                    do_log,
                    turn,
                    p,
                    EV_TRAIN,
                    bd[p, s, F_CARD],
                    s,
                    bd[p, s, F_LEVEL],
                    0,
                    0,
                )
        # ---- Creation phase
        fell = creation_phase(
            rules,
            table,
            bd,
            pl,
            dk,
            hd,
            forb,
            p,
            side,
            w,
            noise,
            rngs,
            cand,
            feats,
            scores,
            tg,
            hr,
            inc[p],
            cs[p],
            ct[p],
            log,
            ints,
            do_log,
            turn,
            rec,
            rec_u,
            rec_meta,
            rec_n,
            -1,
        )
        if fell:
            winner = p
            reason = END_PRIMAL
            break
        # ---- Combat phase
        if recording:
            snapshot(rec, rec_u, rec_meta, rec_n, 2, p, side, turn, bd, pl, hd, dk, rngs)
        na = attackers(rules, table, bd, pl, w, p, noise, atk, blk, feats, log, ints, do_log, turn)
        if na > 0:
            fear_flips(bd, pl, q, rngs, fear_ok, log, ints, do_log, turn)
            blocks(
                rules,
                table,
                bd,
                pl,
                ws[q ^ swap],
                p,
                atk,
                blk,
                na,
                fear_ok,
                feats,
                scores,
                slots,
                rngs[4 + (q ^ swap)],
                used,
                log,
                ints,
                do_log,
                turn,
            )
            if damage_step(rules, table, bd, pl, p, atk, blk, na, rngs, log, ints, do_log, turn):
                winner = p
                reason = END_PRIMAL
                break
        # ---- End of turn
        if end_of_turn(table, bd, pl, p, log, ints, do_log, turn):
            winner = q
            reason = END_PRIMAL
            break
        inv = (
            inv
            & check_invariants(rules, table, bd, pl, 0)
            & check_invariants(rules, table, bd, pl, 1)
        )
        score_v[0] = bd[1, 0, F_DMG]
        score_v[1] = bd[0, 0, F_DMG]
        track_score(score_v, turn, lead, max_def, not_ahead)
    inv = (
        inv & check_invariants(rules, table, bd, pl, 0) & check_invariants(rules, table, bd, pl, 1)
    )
    score_v[0] = bd[1, 0, F_DMG]
    score_v[1] = bd[0, 0, F_DMG]
    if reason == END_PRIMAL:
        track_score(score_v, turn, lead, max_def, not_ahead)
    _log(log, ints, do_log, turn, winner, EV_END, reason, 0, 0, 0, 0)
    result[X_WINNER] = winner
    result[X_TURNS] = turn
    result[X_REASON] = reason
    result[X_FIRST] = first
    result[X_TOSS] = toss
    ok = 1
    for p in range(2):
        result[X_DMG0 + p] = bd[p, 0, F_DMG]
        result[X_LVL0 + p] = bd[p, 0, F_LEVEL]
        result[X_CREATED0 + p] = pl[p, K_CREATED]
        result[X_SPELLS0 + p] = pl[p, K_SPELLS]
        result[X_ABIL0 + p] = pl[p, K_ABIL]
        result[X_UPG0 + p] = pl[p, K_UPG]
        result[X_BOARD0 + p] = pl[p, K_NB] - 1
        result[X_REFUSED0 + p] = pl[p, K_REFUSED]
        result[X_PEAK0 + p] = pl[p, K_PEAK]
        result[X_DRAWN0 + p] = pl[p, K_POS]
        result[X_MUSTERED0 + p] = pl[p, K_MUSTERED]
        stacks = 0
        for s in range(1, pl[p, K_NB]):
            stacks += bd[p, s, F_STACK]
        if (pl[p, K_DECKN] - pl[p, K_POS]) + pl[p, K_HANDN] + stacks + pl[p, K_DISC] != pl[
            p, K_DECKN
        ]:
            ok = 0
    result[X_CONSERVED] = ok
    result[X_INVARIANT] = inv
    result[X_LEAD] = lead[1]
    result[X_MAXDEF0] = max_def[0]
    result[X_MAXDEF1] = max_def[1]
    result[X_NOTAHEAD0] = not_ahead[0]
    result[X_NOTAHEAD1] = not_ahead[1]
    result[X_EVENTS] = ints[0]


@njit
def _work(dmax, with_log):
    return (
        np.zeros((6, 4), np.uint64),
        np.zeros((2, MAX_SLOTS, BF), np.int64),
        np.zeros((2, KW), np.int64),
        np.zeros((2, max(dmax, 1)), np.int64),
        np.zeros((2, MAX_HAND), np.int64),
        np.zeros((MAXC, CW), np.int64),
        np.zeros((MAXC, NPL + 1), np.float64),
        np.zeros(MAXC, np.float64),
        np.zeros(MAX_SLOTS + 1, np.int64),
        np.zeros((MAXC, 2), np.int64),
        np.zeros(MAX_SLOTS, np.int64),
        np.zeros(MAX_SLOTS, np.int64),
        np.zeros(MAX_SLOTS, np.int64),
        np.zeros(MAX_SLOTS, np.int64),
        np.zeros(8, np.int64),
        np.zeros((MAX_LOG if with_log else 1, LOG_W), np.int64),
        np.zeros(4, np.int64),
        np.zeros(N_RESULT, np.int64),
        np.zeros(0, np.int64),
        np.zeros((0, 6, 4), np.uint64),
        np.zeros((0, 8), np.int64),
        np.zeros(3, np.int64),
        np.zeros((MAX_HAND, 2), np.int64),
        np.zeros((2, 2, MAX_SLOTS + 1, INCW), np.int64),
        np.zeros((2, MAX_SLOTS, MAX_ABIL, 2, MAX_SLOTS + 2), np.float64),
        np.full((2, MAX_SLOTS, MAX_ABIL, 2, MAX_SLOTS + 2), -1, np.int64),
    )


@njit
def play_game(rules, table, sides, deck_n, primals, ws, forbs, seed, deal, swap, do_log):
    """Game ``2·deal + swap`` with its event log: ``(result, log)``."""
    (
        rngs,
        bd,
        pl,
        dk,
        hd,
        cand,
        feats,
        scores,
        slots,
        tg,
        atk,
        blk,
        fear_ok,
        used,
        trk,
        log,
        ints,
        res,
        rec,
        rec_u,
        rec_meta,
        rec_n,
        hr,
        inc,
        cs,
        ct,
    ) = _work(sides.shape[1], do_log)
    start_game(sides, deck_n, primals, seed, deal, swap, rngs, bd, pl, dk, hd)
    play(
        rules,
        table,
        ws,
        forbs,
        swap,
        rngs,
        bd,
        pl,
        dk,
        hd,
        cand,
        feats,
        scores,
        slots,
        tg,
        atk,
        blk,
        fear_ok,
        used,
        trk,
        log,
        ints,
        do_log,
        res,
        rec,
        rec_u,
        rec_meta,
        rec_n,
        hr,
        inc,
        cs,
        ct,
    )
    return res, log[: ints[0]].copy()


CHUNK = 32  # games per parallel task: each task allocates its work arrays once


@chunked
def _simulate(
    c0, c1, rules, table, sides, deck_n, primals, ws, forbs, seed, first_deal, n_deals, out
):
    """Kernel: deal d is played as game 2d (side A in seat 0) and 2d+1 (A in seat 1);
    chunks ``c0 .. c1 - 1`` of ``CHUNK`` games here."""
    n_games = 2 * n_deals
    for c in range(c0, c1):
        (
            rngs,
            bd,
            pl,
            dk,
            hd,
            cand,
            feats,
            scores,
            slots,
            tg,
            atk,
            blk,
            fear_ok,
            used,
            trk,
            log,
            ints,
            res,
            rec,
            rec_u,
            rec_meta,
            rec_n,
            hr,
            inc,
            cs,
            ct,
        ) = _work(sides.shape[1], False)
        for g in range(c * CHUNK, min(n_games, (c + 1) * CHUNK)):
            deal = first_deal + g // 2
            swap = g % 2
            start_game(sides, deck_n, primals, seed, deal, swap, rngs, bd, pl, dk, hd)
            play(
                rules,
                table,
                ws,
                forbs,
                swap,
                rngs,
                bd,
                pl,
                dk,
                hd,
                cand,
                feats,
                scores,
                slots,
                tg,
                atk,
                blk,
                fear_ok,
                used,
                trk,
                log,
                ints,
                False,
                res,
                rec,
                rec_u,
                rec_meta,
                rec_n,
                hr,
                inc,
                cs,
                ct,
            )
            for k in range(N_RESULT):
                out[g, k] = res[k]


def prepare(rules, strat_a, strat_b):
    """Split the rules vector and the two side vectors into the kernel's arrays."""
    ints, table = split_rules(rules)
    nc = table.shape[0]
    sv = [np.asarray(strat_a, np.float64), np.asarray(strat_b, np.float64)]
    d = [int(v[S_DECK_N]) for v in sv]
    sides = np.zeros((2, max(max(d), 1)), np.int64)
    forbs = np.zeros((2, nc), np.int64)
    ws = np.zeros((2, N_PARAMS), np.float64)
    primals = np.zeros(2, np.int64)
    for k, v in enumerate(sv):
        if int(v[S_NC]) != nc:
            raise ValueError(
                f"side {'AB'[k]} was built for a card set of {int(v[S_NC])} cards, "
                f"the rules carry {nc}"
            )
        primals[k] = int(v[S_PRIMAL])
        if not 0 <= primals[k] < nc or table[primals[k], C_TYPE] != 0:
            raise ValueError(f"side {'AB'[k]}: card row {primals[k]} is not a Primal")
        rows = v[S_CARDS : S_CARDS + d[k]].astype(np.int64)
        if len(rows) and (rows.min() < 0 or rows.max() >= nc):
            raise ValueError(f"side {'AB'[k]}: a deck card is not in the card set")
        sides[k, : d[k]] = rows
        forbs[k] = v[S_CARDS + d[k] : S_CARDS + d[k] + nc].astype(np.int64)
        w0 = int(v[S_W0])
        ws[k] = v[w0 : w0 + N_PARAMS]
    return ints, table, sides, np.array(d, np.int64), primals, ws, forbs


def simulate(rules, strat_a, strat_b, seed, first_game, n_games):
    """Play games ``first_game .. first_game + n_games`` of seed ``seed``.

    Games come in seat-swapped pairs (game ``2d`` puts side A in seat 0, game
    ``2d + 1`` in seat 1, with the same deck shuffles and toss), so
    ``first_game`` and ``n_games`` must be even. Returns a dict of int64
    arrays, one entry per game: ``winner_seat`` (-1 draw), ``a_seat``,
    ``a_points`` (A's half points: 2 win, 1 draw, 0 loss), ``rounds`` (turns
    played, both players'), ``reason`` (index into ``END_NAMES``),
    ``first_seat`` (who started), ``a_first`` (1 if A started), per seat
    ``damage_seat{0,1}`` (damage on its Primal), ``level_seat{0,1}`` (its
    Primal's level), ``created_seat*``, ``spells_seat*``, ``abilities_seat*``,
    ``upgrades_seat*``, ``board_seat*`` (creations in play at the end),
    ``peak_seat*`` (most creations in play at once), ``refused_seat*`` (turns
    in which the board limit withheld a Create, RD1), ``drawn_seat*`` (cards
    drawn from the deck) and ``mustered_seat*`` (of those, drawn by Muster),
    the score-trace metrics ``lead_changes``, ``max_deficit``, ``decided_pct``,
    ``creates_refused`` (``refused_seat0 + refused_seat1``; also a METRICS
    histogram, so every stored run counts it) and the invariant flags ``conserved`` (every card in deck, hand, play or
    discard) and ``invariants`` (levels 0–10, hands within the limit, no
    negative tokens or damage, after every turn).
    """
    if first_game % 2 or n_games % 2:
        raise ValueError("first_game and n_games must be even (seat-swapped pairs)")
    ints, table, sides, deck_n, primals, ws, forbs = prepare(rules, strat_a, strat_b)
    out = np.zeros((n_games, N_RESULT), dtype=np.int64)
    _simulate(
        n_games,
        CHUNK,
        ints,
        table,
        sides,
        deck_n,
        primals,
        ws,
        forbs,
        np.uint64(seed),
        first_game // 2,
        n_games // 2,
        out,
    )
    return outcome_arrays(out)


def outcome_arrays(out: np.ndarray) -> dict:
    """Per-game dict of arrays from the raw kernel rows (see ``simulate``)."""
    res = pair_outcomes(
        out[:, X_WINNER],
        out[:, X_TURNS],
        out[:, X_LEAD],
        out[:, X_MAXDEF0],
        out[:, X_MAXDEF1],
        out[:, X_NOTAHEAD0],
        out[:, X_NOTAHEAD1],
    )
    res.update(
        {
            "rounds": out[:, X_TURNS],
            "reason": out[:, X_REASON],
            "first_seat": out[:, X_FIRST],
            "a_first": (out[:, X_FIRST] == res["a_seat"]).astype(np.int64),
            "conserved": out[:, X_CONSERVED],
            "invariants": out[:, X_INVARIANT],
            "creates_refused": out[:, X_REFUSED0] + out[:, X_REFUSED1],
        }
    )
    for s in range(2):
        for name, col in (
            ("damage", X_DMG0),
            ("level", X_LVL0),
            ("created", X_CREATED0),
            ("spells", X_SPELLS0),
            ("abilities", X_ABIL0),
            ("upgrades", X_UPG0),
            ("board", X_BOARD0),
            ("refused", X_REFUSED0),
            ("peak", X_PEAK0),
            ("drawn", X_DRAWN0),
            ("mustered", X_MUSTERED0),
        ):
            res[f"{name}_seat{s}"] = out[:, col + s]
    return res
