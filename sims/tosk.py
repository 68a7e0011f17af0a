"""Tosk: the rules engine (rulebook ``rules/tosk.txt``, rulings T1–T12).

State is plain numpy arrays; the rules are an int64 vector (``RULES``: each
key's default, bounds and meaning; ``kernels.contract`` is the surface);
``simulate`` plays deals in parallel, each twice with seats swapped, and
returns per-game outcome arrays. Only numbers cross this boundary.

Cards (T1): 48 ids ``c = 4 * rank_index + suit``; rank indices 0..11 are
A, 2..9, J, Q, K (rank values 1..9, 11, 12, 13: no 10s, so 9 and J are never
consecutive); suits 0..3 are ♣ ♦ ♥ ♠ (♣♠ black, ♦♥ red).

Technique choices (T4, TD6): which action a technique boosts is the
player's, so ``enumerate_plays`` offers a strategy each legal subset of its
hand once for every technique assignment that no other assignment of the same
cards beats in both ATK and DEF (the Pareto front, ATK-richest first), under
any rules the vector can hold. Under the printed capacities no play has more
than two such choices (boost ATK first or DEF first), and games there are the
same as before engine 1.2.0, which offered only those two; a larger capacity
or cheaper techniques offer more (6♣ 5♣ 2♣ J♣ at capacity 16: 8/3, 7/4, 5/5).

Game length: a game is capped at ``max_rounds`` rounds (T11, default 100) and
is then a draw; a round has two simultaneous plays, so a game log never has
more than ``max_rounds`` rows.
"""

import time

import numpy as np

from kernels import rng
from kernels.contract import Rule, rule_tables
from kernels.jit import chunked, leaf, njit
from kernels.trace import track_score
from strategies.tosk import (
    P_FORBIDDEN,
    P_TEMP_HEAL,
    P_TEMP_PLAY,
    choose_heal,
    keep_value,
    play_context,
    play_score,
)
from strategies.tosk.view import (
    I_CAPACITY,
    I_DECK,
    I_DISCARD,
    I_HEAL_CARDS,
    I_HEAL_PER_CARD,
    I_MAX_HAND,
    I_MY_HAND,
    I_MY_HP,
    I_OPP_ATK_SUM,
    I_OPP_DEF_SUM,
    I_OPP_HAND,
    I_OPP_HP,
    I_OPP_LAST_ATK,
    I_OPP_LAST_DEF,
    I_OPP_REVEALS,
    I_ROUND,
    I_START_HP,
    N_INFO,
)

GAME = "tosk"
VERSION = "1.2.0"  # bump whenever simulated behaviour changes (1.1.0: score-trace metrics;
# 1.2.0: every undominated technique assignment is offered, TD6)

N_CARDS = 48
N_RANKS = 12
RANK_NAMES = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "J", "Q", "K")
SUIT_NAMES = ("C", "D", "H", "S")
SUIT_SYMBOLS = ("♣", "♦", "♥", "♠")
RANK_VALUE = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13], dtype=np.int64)
# T2: ATK = pips in one outer column, DEF = pips in the centre column.
PIP_ATK = np.array([0, 0, 0, 2, 2, 3, 3, 3, 4, 0, 0, 0], dtype=np.int64)
PIP_DEF = np.array([1, 2, 3, 0, 1, 0, 1, 2, 1, 0, 0, 0], dtype=np.int64)
FIRST_TECHNIQUE = 9  # rank indices 9, 10, 11 are J, Q, K

# ---- rules vector ------------------------------------------------------------
# Every rules key, once: its default, bounds and meaning, in vector order.
RULES = (
    Rule("capacity", 13, 0, 200, "stamina capacity per round (T7; Battle-weary 11)"),
    Rule("max_hand", 6, 1, 8, "maximum hand size (T9; Battle-weary 5)"),
    Rule("start_hp", 20, 1, 1000, "starting and maximum HP (T9)"),
    Rule(
        "heal_cards",
        3,
        0,
        8,
        "hand cards that may be discarded to heal (T9; Potent Healing 2)",
    ),
    Rule("heal_per_card", 1, 0, 100, "HP restored per heal card (T9; Potent Healing 2)"),
    Rule("force", False, None, None, "Force: +1 per matching rank beyond the first (T3, T5)"),
    Rule("momentum", False, None, None, "Momentum: runs of consecutive ranks cost less (T6)"),
    Rule(
        "technique_by_colour",
        False,
        None,
        None,
        "Advanced Techniques: a technique boosts by colour, not suit (T4)",
    ),
    Rule("max_rounds", 100, 1, 10000, "round cap; an undecided game is a draw (T11)"),
    Rule("momentum_counts_techniques", True, None, None, "J, Q, K may form Momentum runs (T6)"),
    Rule("technique_cost", 3, 0, 50, "stamina cost of a technique"),
    Rule(
        "heal_needs_loss",
        True,
        None,
        None,
        "TD2: a heal card may only be discarded while it restores lost HP",
    ),
)
RULE_FIELDS, DEFAULT_RULES, RULE_LIMITS = rule_tables(RULES)
(
    R_CAPACITY,
    R_MAX_HAND,
    R_START_HP,
    R_HEAL_CARDS,
    R_HEAL_PER_CARD,
    R_FORCE,
    R_MOMENTUM,
    R_BY_COLOUR,
    R_MAX_ROUNDS,
    R_MOMENTUM_TECH,
    R_TECH_COST,
    R_HEAL_NEEDS_LOSS,
) = range(len(RULE_FIELDS))
MAX_HAND = 8  # array width for hands; max_hand is validated against it

# ---- workspace rows for enumerate_plays (per card, then per subset mask) ------
(
    W_COST,
    W_ATK,
    W_DEF,
    W_GRP,
    W_TECH,
    W_RUNBIT,
    W_RANKBIT,
    W_FORB,
    W_PACK,
    W_FPACK,
    W_FLAG,
    W_GACT,
    W_M_PACK,
    W_M_FLAGS,
    W_MEMO,
    W_DP0,
    W_DP1,
    W_LIST,
    W_SUMS,
    W_STAMP,
) = range(20)
# W_GACT: per group, its actions' bit mask; W_DP0/1: see _front; W_LIST: legal masks,
# W_SUMS their sums; W_MEMO: the fronts memoised per decision, W_STAMP (column 0) its
# stamp (_new_memo)
W_ROWS = 20
W_WIDTH = 32  # fewest columns of a workspace: _front's rows index extra ATK (≤ 4 · 4)
_LOWBIT = np.array(
    [0] + [(m & -m).bit_length() - 1 for m in range(1, 1 << MAX_HAND)], dtype=np.int64
)
# Most undominated technique assignments of one play (T4): at most MAX_HAND // 2
# actions are boosted (each by its own technique), each adding at most 4 ATK and
# 3 DEF, and the assignments offered differ in both extra ATK and extra DEF, so
# there are at most 1 + 3 · 4 of them.
_MAX_PIP_ATK = int(PIP_ATK.max())  # an action's most ATK pips
MAX_FRONT = 1 + int(min(PIP_ATK.max(), PIP_DEF.max())) * (MAX_HAND // 2)

# every stream is keyed by the seat: the two games of a deal are one game with the
# strategies swapped (kernels.contract.Engine.PAIR_STREAMS)
PAIR_STREAMS = "seat"

# ---- outcome codes -----------------------------------------------------------
DRAW = -1
END_KO = 0  # one player at <= 0 HP
END_DOUBLE_KO = 1  # both fell, the one who dealt more damage wins (T10)
END_SUDDEN_DEATH = 2  # decided in sudden death (T10)
END_CAP = 3  # round cap reached: a draw (T11)
END_NAMES = ("ko", "double_ko", "sudden_death", "round_cap")

# ---- trace log columns (one row per round and seat) ---------------------------
L_HAND = 0  # MAX_HAND columns: hand before the play (card ids, -1 = empty)
L_PLAYED = MAX_HAND  # bit mask over the hand columns: cards played
L_COST = L_PLAYED + 1
L_ATK = L_COST + 1
L_DEF = L_ATK + 1
L_DMG_TAKEN = L_DEF + 1
L_HP_COMBAT = L_DMG_TAKEN + 1  # HP after combat
L_HEALED = L_HP_COMBAT + 1  # bit mask over the hand columns: cards discarded to heal
L_HP_END = L_HEALED + 1  # HP after healing
L_DRAWN = L_HP_END + 1
L_RESHUFFLES = L_DRAWN + 1
L_SUDDEN = L_RESHUFFLES + 1  # 1 if this round was played in sudden death
LOG_WIDTH = L_SUDDEN + 1

# ---- per-game score-trace metrics (histogram sizes for the runner) ---------------
# The score of a round is hp[0] - hp[1] at the end of the round (after healing;
# in the deciding round, after combat). Values >= size are counted in the last
# bin; -1 (not defined, e.g. for a draw) is not counted. See ``outcome_arrays``.
METRICS = {"lead_changes": 256, "max_deficit": 128, "decided_pct": 101}
# their columns in play_game's result row (seat 0, then seat 1 for the pairs)
R_LEAD_CHANGES = 10
R_MAX_DEFICIT = 11  # 11, 12
R_NOT_AHEAD = 13  # 13, 14


def max_length(rules: dict) -> int:
    """The most rounds a game can last under ``rules`` (rules keys; missing
    ones take their defaults): the width of the runner's game-length
    histogram."""
    return int({**DEFAULT_RULES, **rules}["max_rounds"])


def check_rules(cfg: dict) -> list[str]:
    """What is wrong with a whole ruleset whose every key is within its bounds
    (empty: nothing). Setup: "Shuffle the deck and deal cards to each player up
    to the maximum hand size", so both full hands must fit the deck of
    ``N_CARDS`` cards (the engine's hands are ``MAX_HAND`` wide)."""
    out = []
    hand = int(cfg["max_hand"])
    if hand > MAX_HAND:
        out.append(f"max_hand = {hand} is wider than the engine's hands; at most {MAX_HAND}")
    if 2 * hand > N_CARDS:
        out.append(
            f"two hands of max_hand = {hand} cards do not fit the {N_CARDS}-card deck; "
            f"at most {N_CARDS // 2}"
        )
    return out


def encode_rules(cfg: dict, table=None) -> np.ndarray:
    """The int64 rules vector for a resolved ruleset (``RULE_FIELDS`` order).
    Tosk has no card sets: ``table`` must be None."""
    if table is not None:
        raise ValueError("Tosk has no card sets: encode_rules takes no card table")
    return np.array([int(cfg[name]) for name in RULE_FIELDS], dtype=np.int64)


def card_code(card: int) -> str:
    """``'5C'`` style code of a card id."""
    return RANK_NAMES[card // 4] + SUIT_NAMES[card % 4]


def card_label(card: int) -> str:
    """``'5♣'`` style label of a card id."""
    return RANK_NAMES[card // 4] + SUIT_SYMBOLS[card % 4]


def catalogue() -> list[dict]:
    """Every card of the deck with its cost and pips (for tables and docs)."""
    out = []
    for c in range(N_CARDS):
        r = c // 4
        tech = r >= FIRST_TECHNIQUE
        out.append(
            {
                "id": c,
                "code": card_code(c),
                "label": card_label(c),
                "rank": RANK_NAMES[r],
                "suit": SUIT_SYMBOLS[c % 4],
                "technique": tech,
                "cost": None if tech else int(RANK_VALUE[r]),
                "atk": int(PIP_ATK[r]),
                "def": int(PIP_DEF[r]),
            }
        )
    return out


# ---- rules kernels -------------------------------------------------------------
@njit
def workspace(max_hand):
    """Fresh arrays for :func:`enumerate_plays` of hands up to ``max_hand`` cards.

    Returns ``(ws, front, cand, c_mask)``: the workspace, the pool of
    technique fronts, the candidates' five rows (ATK, DEF, cost, cards, wasted
    techniques) and their masks, sized for every hand of ``max_hand`` cards
    (each subset with up to MAX_FRONT assignments), so they are allocated
    once for a run of decisions and no decision allocates (the game loop's
    ``choose_from_hand`` needs only the first two: ``_work``). Only the
    memo's row and stamp are initialised (see :func:`_new_memo`): every other
    entry is written before it is read.
    """
    n_masks = 1 << max_hand
    ws = np.empty((W_ROWS, max(n_masks, W_WIDTH)), dtype=np.int64)
    ws[W_MEMO] = 0  # no entry holds a stamp yet
    ws[W_STAMP] = 0
    return (
        ws,
        np.empty(n_masks * MAX_FRONT, dtype=np.int64),
        np.empty((5, n_masks * MAX_FRONT), dtype=np.float64),
        np.empty(n_masks * MAX_FRONT, dtype=np.int64),
    )


@njit(inline="always")
def card_cost(rules, card):
    r = card // 4
    if r >= FIRST_TECHNIQUE:
        return rules[R_TECH_COST]
    return RANK_VALUE[r]


@njit(inline="always")
def group_of(rules, card):
    """Technique group: the suit, or with Advanced Techniques the colour."""
    s = card % 4
    if rules[R_BY_COLOUR] != 0:
        return 1 if (s == 1 or s == 2) else 0
    return s


@njit
def _boost(n, mask, c_atk, c_def, c_grp, c_tech, mode):
    """Technique assignment (T4) for the cards of ``mask``.

    Each technique boosts a distinct, not yet boosted action of its group
    (suit, or colour with Advanced Techniques); ``mode`` picks which actions
    first: 0 the highest ATK, 1 the highest DEF, 2 the highest ATK+DEF.
    Returns (extra ATK, extra DEF, wasted techniques).
    """
    extra_a = 0
    extra_d = 0
    wasted = 0
    taken = 0  # bit mask of boosted hand positions
    for i in range(n):
        if (mask >> i) & 1 and c_tech[i]:
            g = c_grp[i]
            best = -1
            best_key = -1
            for j in range(n):
                if (mask >> j) & 1 and not c_tech[j] and c_grp[j] == g and not (taken >> j) & 1:
                    a = c_atk[j]
                    d = c_def[j]
                    if mode == 0:
                        key = a * 64 + d
                    elif mode == 1:
                        key = d * 64 + a
                    else:
                        key = (a + d) * 64 + a
                    if key > best_key:
                        best_key = key
                        best = j
            if best < 0:
                wasted += 1
            else:
                taken |= 1 << best
                extra_a += c_atk[best]
                extra_d += c_def[best]
    return extra_a, extra_d, wasted


@njit(inline="always")
def _popcount(x):
    k = 0
    while x:
        x &= x - 1
        k += 1
    return k


@njit(inline="always")
def _card_tables(rules, cards, n, forbidden, ws):
    """Per-card cost, pips, group, flags of ``cards[:n]`` into the workspace."""
    mom_tech = rules[R_MOMENTUM_TECH] != 0
    for i in range(n):
        c = cards[i]
        r = c // 4
        tech = r >= FIRST_TECHNIQUE
        ws[W_COST, i] = card_cost(rules, c)
        ws[W_ATK, i] = PIP_ATK[r]
        ws[W_DEF, i] = PIP_DEF[r]
        ws[W_GRP, i] = group_of(rules, c)
        ws[W_TECH, i] = 1 if tech else 0
        ws[W_RUNBIT, i] = (1 << RANK_VALUE[r]) if (not tech or mom_tech) else 0
        ws[W_RANKBIT, i] = 0 if tech else (1 << r)
        ws[W_FORB, i] = (forbidden >> r) & 1


@njit(inline="always")  # inlined: a call here costs the decision loop about 10%
def _front(rel, tg_packed, ws, front, start):
    """Every undominated technique assignment (T4) of the cards of ``rel``.

    ``tg_packed`` counts the techniques per group (4 bits a group) and row
    W_GACT holds each group's actions. In a group with ``t`` techniques and
    ``m`` actions, the techniques boost ``min(t, m)`` distinct actions (an
    unboosted action left beside a technique is always worse) and the rest
    are wasted; groups add up. Writes the Pareto front, packed
    ``extra ATK | extra DEF << 16`` and ordered by ATK descending (so the first
    is the ATK-first assignment and the last the DEF-first one), to
    ``front[start:]``; returns (count, wasted techniques).

    Row W_M_PACK must hold the packed sums (see ``enumerate_plays``) of each
    group's actions in ``rel``: ``enumerate_plays`` (and ``choose_from_hand``)
    has visited every such subset of a legal play before the play, or built
    every subset's sums first. A group with ``t >= m`` has one
    choice (boost every action). When at most
    one group has a choice and it holds one technique, the front is that of
    its single actions, shifted by the other groups' boosts: row W_DP0 holds
    the most DEF per ATK of those actions. Otherwise :func:`_front_dp` builds
    it group by group.
    """
    sa0 = 0  # boosts of the groups with one choice
    sd0 = 0
    wasted = 0
    n_choice = 0  # groups with t < m
    choice_am = 0
    choice_t = 0
    x = tg_packed
    g = 0
    while x:
        t = x & 15
        if t:
            am = rel & ws[W_GACT, g]
            pa = ws[W_M_PACK, am]  # the group's actions: their count and pips
            m = (pa >> _F_N) & 15
            if t >= m:
                wasted += t - m
                sa0 += (pa >> _F_ATK) & 255
                sd0 += (pa >> _F_DEF) & 255
            else:
                n_choice += 1
                choice_am = am
                choice_t = t
        x >>= 4
        g += 1
    if n_choice == 0:
        front[start] = sa0 | (sd0 << 16)
        return 1, wasted
    if n_choice > 1 or choice_t > 1:
        return _front_dp(rel, tg_packed, ws, front, start)
    for a in range(_MAX_PIP_ATK + 1):
        ws[W_DP0, a] = -1
    y = choice_am
    while y:
        j = _LOWBIT[y]
        if ws[W_DEF, j] > ws[W_DP0, ws[W_ATK, j]]:
            ws[W_DP0, ws[W_ATK, j]] = ws[W_DEF, j]
        y &= y - 1
    count = 0
    best = -1
    for a in range(_MAX_PIP_ATK, -1, -1):  # ATK descending; keep each step up in DEF
        v = ws[W_DP0, a]
        if v > best:
            front[start + count] = (a + sa0) | ((v + sd0) << 16)
            count += 1
            best = v
    return count, wasted


@leaf  # called, not inlined: rare under most rules, and inlined it slows the decision loop
def _front_dp(rel, tg_packed, ws, front, start):
    """:func:`_front` in general: rows W_DP0/W_DP1 hold, for each extra ATK,
    the most extra DEF some assignment reaches (-1: none), built group by
    group over every choice of boosted actions."""
    cur = W_DP0
    nxt = W_DP1
    ws[cur, 0] = 0
    hi = 0  # highest extra ATK reached; columns above it are stale
    wasted = 0
    g = 0
    while tg_packed:
        t = tg_packed & 15
        if t:
            am = rel & ws[W_GACT, g]
            m = _popcount(am)
            if t >= m:  # every action of the group is boosted: one choice
                wasted += t - m
                sa = 0
                sd = 0
                x = am
                while x:
                    j = _LOWBIT[x]
                    sa += ws[W_ATK, j]
                    sd += ws[W_DEF, j]
                    x &= x - 1
                for a in range(hi, -1, -1):  # shift by (sa, sd), top down
                    v = ws[cur, a]
                    ws[cur, a + sa] = v + sd if v >= 0 else -1
                for a in range(sa):
                    ws[cur, a] = -1
                hi += sa
            else:  # choose t of the m actions: every such subset
                for a in range(hi + 4 * t + 1):
                    ws[nxt, a] = -1
                top = 0
                sub = am
                while sub:
                    if _popcount(sub) == t:
                        sa = 0
                        sd = 0
                        x = sub
                        while x:
                            j = _LOWBIT[x]
                            sa += ws[W_ATK, j]
                            sd += ws[W_DEF, j]
                            x &= x - 1
                        top = max(top, sa)
                        for a in range(hi + 1):
                            v = ws[cur, a]
                            if v >= 0 and v + sd > ws[nxt, a + sa]:
                                ws[nxt, a + sa] = v + sd
                    sub = (sub - 1) & am
                hi += top
                cur, nxt = nxt, cur
        tg_packed >>= 4
        g += 1
    count = 0
    best = -1
    for a in range(hi, -1, -1):  # ATK descending; keep each step up in DEF
        v = ws[cur, a]
        if v > best:
            front[start + count] = a | (v << 16)
            count += 1
            best = v
    return count, wasted


# A memo entry (row W_MEMO, one per subset of the relevant cards): the first of
# its front's points in ``front`` | their count << 24 | wasted techniques << 32 |
# the decision's stamp << 40. An entry of another stamp is stale, so a decision
# starts with a new stamp instead of clearing the row.
_MAX_STAMP = (1 << 23) - 1


@njit(inline="always")
def _new_memo(ws):
    """A new stamp for the memo row of ``ws``: every entry written before is
    stale. Once in 2^23 - 1 decisions the row is cleared and stamps restart."""
    stamp = ws[W_STAMP, 0] + 1
    if stamp > _MAX_STAMP:
        for j in range(ws.shape[1]):
            ws[W_MEMO, j] = 0
        stamp = 1
    ws[W_STAMP, 0] = stamp
    return stamp


@njit(inline="always")
def _memo_front(ws, front, n_front, rel, tg, stamp):
    """The memo entry of the relevant cards ``rel`` (``tg`` their techniques'
    groups), computing its front (:func:`_front`, into ``front`` from
    ``n_front``) if this decision has not: returns (entry, points in use)."""
    v = ws[W_MEMO, rel]
    if (v >> 40) != stamp:
        count, wasted = _front(rel, tg, ws, front, n_front)
        v = n_front | (count << 24) | (wasted << 32) | (stamp << 40)
        ws[W_MEMO, rel] = v
        n_front += count
    return v, n_front


# Packed per-subset sums for enumerate_plays: one add builds a subset's totals
# from the subset without its lowest card. Field widths hold any legal hand
# (≤ 8 cards: cost ≤ 8·50, pips ≤ 32, Force bonus ≤ 7, techniques ≤ 8 a group).
_F_COST, _F_ATK, _F_DEF, _F_FATK, _F_FDEF, _F_N, _F_TG = 0, 12, 20, 28, 32, 36, 40
# OR-ed flags: ranks present (bits 0-11), a forbidden rank (bit 12), Momentum
# rank values present (bits 16-29).
_G_FORB, _G_RUNS = 12, 16


@njit(inline="always")
def _put(c_atk, c_def, c_cost, c_cards, c_wasted, c_mask, k, atk, dfn, cost, ncards, wasted, mask):
    """Write candidate ``k``."""
    c_atk[k] = atk
    c_def[k] = dfn
    c_cost[k] = cost
    c_cards[k] = ncards
    c_wasted[k] = wasted
    c_mask[k] = mask


@leaf
def enumerate_plays(
    rules, cards, n, forbidden, ws, front, c_atk, c_def, c_cost, c_cards, c_wasted, c_mask
):
    """Every legal play of ``cards[:n]`` (T4–T7), written to the ``c_*`` arrays.

    Subsets are visited in ascending mask order and built incrementally (each
    mask from the mask without its lowest card, with packed sums), so cost,
    pips, Momentum runs and Force repeats cost O(1) per subset; where no card
    can lower a play's cost, the supersets that follow an illegal subset are
    skipped. A subset holding a technique is offered
    once for each of its undominated technique assignments (T4: the player
    chooses; TD6), ATK-richest first (see :func:`_front`); the fronts are
    memoised in ``front`` on the part of the subset they depend on. Ranks in
    the bit mask ``forbidden`` may not be played (restricted play). The arrays
    come from :func:`workspace`. Returns the number of candidates.
    """
    _card_tables(rules, cards, n, forbidden, ws)
    tech_groups = 0
    for i in range(n):
        if ws[W_TECH, i]:
            tech_groups |= 1 << ws[W_GRP, i]
    relevant = 0
    if tech_groups:
        # The assignments depend only on the techniques and the actions of
        # groups that hold a technique: memoise them on that part of the mask.
        for g in range(4):
            ws[W_GACT, g] = 0
        for i in range(n):
            g = ws[W_GRP, i]
            if (tech_groups >> g) & 1:
                relevant |= 1 << i
                if ws[W_TECH, i] == 0:
                    ws[W_GACT, g] |= 1 << i
    stamp = _new_memo(ws)
    n_front = 0  # points of ``front`` in use
    cap = rules[R_CAPACITY]
    momentum = rules[R_MOMENTUM] != 0
    force = rules[R_FORCE] != 0
    # per-card packed contributions
    for i in range(n):
        ws[W_PACK, i] = (
            (ws[W_COST, i] << _F_COST)
            | (ws[W_ATK, i] << _F_ATK)
            | (ws[W_DEF, i] << _F_DEF)
            | (1 << _F_N)
            | (ws[W_TECH, i] << (_F_TG + 4 * ws[W_GRP, i]))
        )
        ws[W_FPACK, i] = ((1 if ws[W_ATK, i] > 0 else 0) << _F_FATK) | (
            (1 if ws[W_DEF, i] > 0 else 0) << _F_FDEF
        )
        ws[W_FLAG, i] = ws[W_RANKBIT, i] | (ws[W_FORB, i] << _G_FORB) | (ws[W_RUNBIT, i] << _G_RUNS)
    ws[W_M_PACK, 0] = 0
    ws[W_M_FLAGS, 0] = 0
    # A card never lowers a play's cost unless Momentum can join a technique
    # costing under 2 to two runs; then a play too dear, or with a forbidden
    # rank, has only such supersets among the masks that follow it up to
    # mask + lowbit(mask) (the same mask with any lower cards added), which
    # are skipped. Every mask visited still has its mask-without-lowest-card
    # visited before it.
    monotone = not (momentum and rules[R_MOMENTUM_TECH] != 0 and rules[R_TECH_COST] < 2)
    n_cand = 0
    end = 1 << n
    mask = -1
    while True:
        mask += 1
        if mask >= end:
            break
        if mask:
            i = _LOWBIT[mask]
            prev = mask & (mask - 1)
            pk = ws[W_M_PACK, prev] + ws[W_PACK, i]
            if ws[W_M_FLAGS, prev] & ws[W_RANKBIT, i]:
                pk += ws[W_FPACK, i]  # Force (T3): a repeat adds +1 to each stat it gives
            ws[W_M_PACK, mask] = pk
            ws[W_M_FLAGS, mask] = ws[W_M_FLAGS, prev] | ws[W_FLAG, i]
        pk = ws[W_M_PACK, mask]
        fl = ws[W_M_FLAGS, mask]
        if (fl >> _G_FORB) & 1:
            if monotone and mask:
                mask += (mask & -mask) - 1
            continue
        cost = (pk >> _F_COST) & 4095
        if momentum:
            runs = fl >> _G_RUNS
            cost = max(0, cost - _popcount(runs & (runs >> 1)))
        if cost > cap:
            if monotone and mask:
                mask += (mask & -mask) - 1
            continue
        atk = (pk >> _F_ATK) & 255
        dfn = (pk >> _F_DEF) & 255
        if force:
            atk += (pk >> _F_FATK) & 15
            dfn += (pk >> _F_FDEF) & 15
        ncards = (pk >> _F_N) & 15
        tg = pk >> _F_TG
        if tg == 0:
            _put(
                c_atk,
                c_def,
                c_cost,
                c_cards,
                c_wasted,
                c_mask,
                n_cand,
                atk,
                dfn,
                cost,
                ncards,
                0,
                mask,
            )
            n_cand += 1
            continue
        # T5: doubling is on base pips, before the flat Force bonus
        v, n_front = _memo_front(ws, front, n_front, mask & relevant, tg, stamp)
        first = v & 0xFFFFFF
        wasted = (v >> 32) & 255
        for k in range(first, first + ((v >> 24) & 255)):
            pt = front[k]
            _put(
                c_atk,
                c_def,
                c_cost,
                c_cards,
                c_wasted,
                c_mask,
                n_cand,
                atk + (pt & 65535),
                dfn + (pt >> 16),
                cost,
                ncards,
                wasted,
                mask,
            )
            n_cand += 1
    return n_cand


# ---- the game loop's play decision: per-game card tables, legal plays listed, then scored
# rows of a seat's card table (``card_table``): one column per card id
T_PACK, T_FPACK, T_FLAG, T_ATK, T_DEF, T_GBIT, T_ABIT, T_TBIT, T_RANKBIT = range(9)
N_T = 9


@leaf
def card_table(rules, forbidden, tab):
    """Every card's rows for :func:`choose_from_hand` into ``tab`` (int64[N_T,
    N_CARDS]): its packed contribution to a subset's sums (``T_PACK``, the
    fields of ``enumerate_plays``), its Force bonus (``T_FPACK``), its flags
    (rank, forbidden rank in the bit mask ``forbidden``, Momentum rank value:
    ``T_FLAG``), pips, group (``T_GBIT``: bit ``8 * group``; ``T_ABIT``: the
    same for an action, 0 for a technique; ``T_TBIT``: bit ``group`` for a
    technique, else 0) and rank bit. They depend on the
    rules and the strategy's forbidden ranks only, so a game fills them once
    per seat (what ``enumerate_plays`` computes per decision)."""
    mom_tech = rules[R_MOMENTUM_TECH] != 0
    for c in range(N_CARDS):
        r = c // 4
        tech = r >= FIRST_TECHNIQUE
        t = 1 if tech else 0
        grp = group_of(rules, c)
        atk = PIP_ATK[r]
        dfn = PIP_DEF[r]
        runbit = (1 << RANK_VALUE[r]) if (not tech or mom_tech) else 0
        rankbit = 0 if tech else (1 << r)
        tab[T_PACK, c] = (
            (card_cost(rules, c) << _F_COST)
            | (atk << _F_ATK)
            | (dfn << _F_DEF)
            | (1 << _F_N)
            | (t << (_F_TG + 4 * grp))
        )
        tab[T_FPACK, c] = ((1 if atk > 0 else 0) << _F_FATK) | ((1 if dfn > 0 else 0) << _F_FDEF)
        tab[T_FLAG, c] = rankbit | (((forbidden >> r) & 1) << _G_FORB) | (runbit << _G_RUNS)
        tab[T_ATK, c] = atk
        tab[T_DEF, c] = dfn
        tab[T_GBIT, c] = 1 << (8 * grp)
        tab[T_ABIT, c] = (1 - t) << (8 * grp)
        tab[T_TBIT, c] = t << grp
        tab[T_RANKBIT, c] = rankbit


@leaf(inline="always")
def _score_play(
    strat,
    ctx,
    noise,
    ws,
    front,
    n_front,
    relevant,
    stamp,
    mask,
    tg,
    atk,
    dfn,
    cost,
    ncards,
    best_score,
    b_mask,
    b_cost,
    b_atk,
    b_def,
):
    """Score the play ``mask`` (its sums ``atk``, ``dfn``, ``cost``, ``ncards``;
    ``tg`` its techniques' groups) in :func:`choose_from_hand`, once per
    technique assignment of its front (memoised on the relevant cards), against
    the best so far: the new ``(best_score, b_mask, b_cost, b_atk, b_def,
    n_front)``: ``choose_from_hand``'s one scoring loop, for both ways it lists plays."""
    if tg == 0:
        s = play_score(strat, ctx, float(atk), float(dfn), float(cost), float(ncards), 0.0, noise)
        if s > best_score:
            return s, mask, cost, atk, dfn, n_front
        return best_score, b_mask, b_cost, b_atk, b_def, n_front
    v, n_front = _memo_front(ws, front, n_front, mask & relevant, tg, stamp)
    first = v & 0xFFFFFF
    wasted = float((v >> 32) & 255)
    for k in range(first, first + ((v >> 24) & 255)):
        pt = front[k]
        a = atk + (pt & 65535)
        d = dfn + (pt >> 16)
        s = play_score(strat, ctx, float(a), float(d), float(cost), float(ncards), wasted, noise)
        if s > best_score:
            best_score = s
            b_mask = mask
            b_cost = cost
            b_atk = a
            b_def = d
    return best_score, b_mask, b_cost, b_atk, b_def, n_front


@leaf(inline="always")  # in _play: a call passed nine arrays, some 60 words, a decision
def choose_from_hand(rules, tab, cards, n, ws, front, strat, info, noise):
    """The play the strategy ``strat`` chooses from ``cards[:n]``: what
    ``choose_play`` picks among the candidates of ``enumerate_plays`` (its
    reference; the two are compared on random hands, rules and views), without
    storing the candidates.

    The legal plays are visited in ``enumerate_plays``' order (ascending mask,
    each subset with a technique once per undominated assignment, ATK-richest
    first), with the same sums, skips and fronts, and each is scored with
    ``play_score`` in that order (so a strategy with a temperature draws its
    noise in the same order); the first best wins. The per-card rows come
    from the seat's ``card_table`` (``tab``, which holds the strategy's
    forbidden ranks). When the rules have neither Force nor Momentum and the
    hand has no forbidden card, no flags are needed: every subset's sums are
    built first (all of them, so no skipping) and the legal masks listed
    without a branch; otherwise the subsets are visited as in
    ``enumerate_plays``. Either way the legal masks are listed first, with
    their sums, and one loop scores them in ascending order (one copy of the
    scoring: the function is inlined in the game loop, and each copy costs
    compile time). Returns the chosen play's (mask, cost, ATK, DEF); the
    empty play is always legal.
    """
    # one pass over the cards, without a branch: the packed rows, the pips
    # _front reads, and per group (8 bits each) the hand positions of its
    # cards and of its actions
    tech_groups = 0
    fl_or = 0
    g_all = 0
    g_act = 0
    for i in range(n):
        c = cards[i]
        ws[W_PACK, i] = tab[T_PACK, c]
        ws[W_ATK, i] = tab[T_ATK, c]
        ws[W_DEF, i] = tab[T_DEF, c]
        fl_or |= tab[T_FLAG, c]
        tech_groups |= tab[T_TBIT, c]
        g_all |= tab[T_GBIT, c] << i
        g_act |= tab[T_ABIT, c] << i
    cap = rules[R_CAPACITY]
    momentum = rules[R_MOMENTUM] != 0
    force = rules[R_FORCE] != 0
    flags = momentum or force or (fl_or >> _G_FORB) & 1 != 0
    if flags:  # the rows of the subsets' flags (see enumerate_plays)
        for i in range(n):
            c = cards[i]
            ws[W_FLAG, i] = tab[T_FLAG, c]
            ws[W_FPACK, i] = tab[T_FPACK, c]
            ws[W_RANKBIT, i] = tab[T_RANKBIT, c]
    relevant = 0
    if tech_groups:  # as in enumerate_plays: fronts memoised on the relevant cards
        for g in range(4):
            ws[W_GACT, g] = (g_act >> (8 * g)) & 255
            relevant |= (g_all >> (8 * g)) & 255 & -((tech_groups >> g) & 1)
    stamp = _new_memo(ws)
    monotone = not (momentum and rules[R_MOMENTUM_TECH] != 0 and rules[R_TECH_COST] < 2)
    ctx = play_context(strat, info)
    # the empty play: candidate 0, the choice unless another scores higher
    best_score = play_score(strat, ctx, 0.0, 0.0, 0.0, 0.0, 0.0, noise)
    if not best_score > -np.inf:
        best_score = -np.inf
    b_mask = 0
    b_cost = 0
    b_atk = 0
    b_def = 0
    ws[W_M_PACK, 0] = 0
    ws[W_M_FLAGS, 0] = 0
    n_front = 0
    end = 1 << n
    # the legal plays (masks ascending) into row W_LIST and their sums,
    # Force and Momentum applied, into row W_SUMS; then one loop scores them
    lst = ws[W_LIST]
    sums = ws[W_SUMS]
    n_legal = 0
    if not flags:
        # Without flags a subset's sums are its cards' packed rows added up:
        # every subset's, built a card at a time (mask | 1 << i from mask, a loop
        # the compiler vectorises), then the legal masks listed without a branch.
        pks = ws[W_M_PACK]
        half = 1
        for i in range(n):
            p = ws[W_PACK, i]
            for j in range(half):
                pks[half + j] = pks[j] + p
            half += half
        for m in range(1, end):
            pk = pks[m]
            lst[n_legal] = m
            sums[n_legal] = pk
            n_legal += 1 if (pk >> _F_COST) & 4095 <= cap else 0
    else:
        # with flags (Force, Momentum, forbidden ranks): a subset's sums from
        # the subset less its lowest card, as in enumerate_plays
        mask = 1
        while mask < end:
            low = mask & -mask
            prev = mask - low
            i = _LOWBIT[mask]
            pk = ws[W_M_PACK, prev] + ws[W_PACK, i]
            fp = ws[W_M_FLAGS, prev]
            if fp & ws[W_RANKBIT, i]:
                pk += ws[W_FPACK, i]  # Force (T3): a repeat adds +1 to each stat it gives
            fl = fp | ws[W_FLAG, i]
            ws[W_M_FLAGS, mask] = fl
            ws[W_M_PACK, mask] = pk
            if (fl >> _G_FORB) & 1:
                mask += low if monotone else 1
                continue
            cost = (pk >> _F_COST) & 4095
            if momentum:
                runs = fl >> _G_RUNS
                cost = max(0, cost - _popcount(runs & (runs >> 1)))
            if cost > cap:
                mask += low if monotone else 1
                continue
            # the play's sums as the scoring loop reads them: the cost after
            # Momentum, the Force bonus added to ATK and DEF
            pk += (cost - ((pk >> _F_COST) & 4095)) << _F_COST
            if force:
                pk += (((pk >> _F_FATK) & 15) << _F_ATK) + (((pk >> _F_FDEF) & 15) << _F_DEF)
            lst[n_legal] = mask
            sums[n_legal] = pk
            n_legal += 1
            mask += 1
    for q in range(n_legal):
        mask = lst[q]
        pk = sums[q]
        best_score, b_mask, b_cost, b_atk, b_def, n_front = _score_play(
            strat,
            ctx,
            noise,
            ws,
            front,
            n_front,
            relevant,
            stamp,
            mask,
            pk >> _F_TG,
            (pk >> _F_ATK) & 255,
            (pk >> _F_DEF) & 255,
            (pk >> _F_COST) & 4095,
            (pk >> _F_N) & 15,
            best_score,
            b_mask,
            b_cost,
            b_atk,
            b_def,
        )
    return b_mask, b_cost, b_atk, b_def


@njit
def evaluate(rules, cards, n, mode, out):
    """Cost, ATK, DEF and wasted techniques of playing all of ``cards[:n]``.

    The reference for one play (the rules calculator, the rulebook tests):
    ``mode`` is the technique assignment of :func:`_boost` (modes 0 and 1
    give the two ends of the choices ``enumerate_plays`` offers, mode 2 the
    calculator's). Writes ``out[0..3]``.
    """
    ws = np.zeros((W_ROWS, max(n, 1)), dtype=np.int64)
    _card_tables(rules, cards, n, 0, ws)
    cost = 0
    atk = 0
    dfn = 0
    runs = 0
    counts = np.zeros(N_RANKS, dtype=np.int64)
    for i in range(n):
        cost += ws[W_COST, i]
        atk += ws[W_ATK, i]
        dfn += ws[W_DEF, i]
        runs |= ws[W_RUNBIT, i]
        counts[cards[i] // 4] += 1
    if rules[R_MOMENTUM] != 0:
        cost = max(0, cost - _popcount(runs & (runs >> 1)))
    ea, ed, wasted = _boost(n, (1 << n) - 1, ws[W_ATK], ws[W_DEF], ws[W_GRP], ws[W_TECH], mode)
    atk += ea
    dfn += ed
    if rules[R_FORCE] != 0:
        for r in range(FIRST_TECHNIQUE):
            if counts[r] >= 2:
                if PIP_ATK[r] > 0:
                    atk += counts[r] - 1
                if PIP_DEF[r] > 0:
                    dfn += counts[r] - 1
    out[0] = cost
    out[1] = atk
    out[2] = dfn
    out[3] = wasted


@leaf(inline="always")  # inlined in _play: a call passes eleven arguments for a few cards
def _draw(rules, seat, k, hand, hand_n, deck, deck_n, disc, disc_n, seen, reshuffle_rng):
    """Draw up to ``k`` cards; re-form an empty deck from the discard (T9).

    Returns (drawn, reshuffles). ``deck_n``/``disc_n`` are 1-element arrays.
    """
    drawn = 0
    resh = 0
    for _ in range(k):
        if deck_n[0] == 0:
            if disc_n[0] == 0:
                break
            for j in range(disc_n[0]):
                deck[j] = disc[j]
            deck_n[0] = disc_n[0]
            disc_n[0] = 0
            rng.shuffle(reshuffle_rng, deck, deck_n[0])
            resh += 1
        deck_n[0] -= 1
        c = deck[deck_n[0]]
        hand[seat, hand_n[seat]] = c
        hand_n[seat] += 1
        seen[seat] |= np.int64(1) << c
        drawn += 1
    return drawn, resh


@njit
def play_game(rules, strat0, strat1, seed, deal, log, do_log, result):
    """Play one game of deal ``deal``; ``strat0`` sits in seat 0.

    ``result`` (int64[N_RESULT]) receives: winner seat (-1 draw), rounds, end
    reason, HP of seat 0 and 1, the cards seen by seat 0 and 1 and the cards
    played by seat 0 and 1 (48-bit masks), the number of cards in deck,
    discard and hands (48 when cards are conserved), and the score trace:
    lead changes, each seat's largest deficit, each seat's last round not
    ahead (``R_LEAD_CHANGES`` etc.). The score of a round is ``hp[0] - hp[1]``
    at its end (after healing; in the deciding round, after combat); the
    leader is the seat strictly ahead, a tied round keeps the previous leader,
    and a lead change is a switch of leader from one seat to the other (the
    first lead is not a change). A seat's deficit in a round is the
    opponent's HP minus its own (at least 0). With ``do_log`` each round is
    written to ``log``.
    """
    rec = np.zeros((0, 2, REC_WIDTH), dtype=np.float64)
    _record_game(rules, strat0, strat1, seed, deal, log, do_log, rec, result)


@njit
def _record_game(rules, strat0, strat1, seed, deal, log, do_log, rec, result):
    """:func:`play_game`, also writing each round's decision inputs to
    ``rec`` (``REC_*`` columns) when ``do_log`` and ``rec`` has rows."""
    rngs, piles, ints, flt, ws, front, tabs, kvs = _work(rules[R_MAX_HAND])
    card_table(rules, np.int64(strat0[P_FORBIDDEN]), tabs[0])
    card_table(rules, np.int64(strat1[P_FORBIDDEN]), tabs[1])
    keep_table(rules, strat0, kvs[0])
    keep_table(rules, strat1, kvs[1])
    _start(seed, deal, rngs, piles, ints, flt, result)
    _play(
        rules,
        strat0,
        strat1,
        tabs[0],
        tabs[1],
        kvs[0],
        kvs[1],
        rngs,
        piles,
        ints,
        flt,
        ws,
        front,
        log,
        do_log,
        rec,
        result,
    )


# ---- decision inputs recorded for ``profile`` (one row per round and seat) -----
REC_INFO = 0  # N_INFO columns: the view the play was chosen from
REC_HEAL_INFO = N_INFO  # N_INFO columns: the view the heal was chosen from
REC_UNSPENT = 2 * N_INFO  # stamina left after the play
REC_HEAL_MAX = REC_UNSPENT + 1  # most heal cards allowed (0: no heal choice made)
REC_WIDTH = REC_HEAL_MAX + 1

# rows of a game's integer work array (``_work``): hands, scratch, per-seat counters
I_HAND = 0  # rows 0, 1: the hands (card ids, -1 = empty)
I_ORDER = 2  # hand position before the play of each card left (for the log)
I_IDX = 3  # hand positions sorted by keep value
I_PAIRS = 4  # 14 rows of per-seat counters (see ``_play``), in columns 0 and 1
N_IROWS = I_PAIRS + 14
# rows of a game's float work array
F_INFO = 0  # the view handed to the strategy (N_INFO columns)
F_KEEP = 1  # keep values of the hand cards
F_KS = 2  # keep values, ascending
F_SEAT = 3  # rows 3, 4: per seat: rounds revealed, ATK sum, DEF sum, last ATK, last DEF


@njit
def _work(max_hand):
    """The work arrays of one game, allocated once for game after game (see
    ``_start``): the four random streams, the deck and discard pile, the
    integer and float state (``I_*`` and ``F_*`` rows), the workspace and
    front pool of :func:`choose_from_hand` (:func:`workspace`'s first two)
    and room for two card tables and two keep tables (:func:`card_table`,
    :func:`keep_table`; the caller fills them, one per seat or strategy)."""
    ws, front, _, _ = workspace(max_hand)
    return (
        np.empty((4, 4), dtype=np.uint64),
        np.empty((2, N_CARDS), dtype=np.int64),
        np.empty((N_IROWS, MAX_HAND), dtype=np.int64),
        np.empty((F_SEAT + 2, N_INFO), dtype=np.float64),
        ws,
        front,
        np.empty((2, N_T, N_CARDS), dtype=np.int64),
        np.empty((2, N_CARDS), dtype=np.float64),
    )


@leaf
def _start(seed, deal, rngs, piles, ints, flt, result):
    """Seed deal ``deal``'s streams (deal, reshuffles, seat 0 and seat 1
    noise), shuffle the deck and reset the state and the result row, so one
    set of work arrays serves game after game."""
    rng.seed_state(rngs[0], seed, deal, rng.PURPOSE_DEAL)
    rng.seed_state(rngs[1], seed, deal, rng.PURPOSE_RESHUFFLE)
    rng.seed_state(rngs[2], seed, deal, rng.PURPOSE_SEAT0)
    rng.seed_state(rngs[3], seed, deal, rng.PURPOSE_SEAT0 + 1)
    deck = piles[0]
    for i in range(N_CARDS):
        deck[i] = i
    rng.shuffle(rngs[0], deck, N_CARDS)
    ints[:] = 0
    ints[I_HAND : I_HAND + 2] = -1
    flt[:] = 0.0
    result[:] = 0


@leaf
def keep_table(rules, strat, kv):
    """The strategy's keep value of every card into ``kv`` (float64[N_CARDS]):
    a game computes them once per seat, not at every heal decision."""
    for c in range(N_CARDS):
        r = c // 4
        kv[c] = keep_value(
            strat,
            PIP_ATK[r],
            PIP_DEF[r],
            1.0 if r >= FIRST_TECHNIQUE else 0.0,
            card_cost(rules, c),
        )


@leaf(inline="always")  # in _play: a call cost a third of a heal decision
def _heal_order(kv, hand, m, h_max, keeps, idx, ks):
    """Keep values of ``hand[:m]`` (from the seat's ``keep_table``) into
    ``keeps``; the ``h_max`` least wanted hand positions, in ascending keep
    value, into ``idx[:h_max]`` (the first ``h_max`` steps of a selection
    sort: the lowest value, the first of equals, is swapped to the front of
    what is left) and their values into ``ks[:h_max]``: healing discards
    the least wanted first, at most ``h_max`` (<= ``m``) of them."""
    for i in range(m):
        keeps[i] = kv[hand[i]]
    for a in range(m):
        idx[a] = a
    for a in range(h_max):
        lo = a
        lo_v = keeps[idx[a]]
        for b in range(a + 1, m):
            v = keeps[idx[b]]
            take = v < lo_v
            lo = b if take else lo
            lo_v = v if take else lo_v
        t = idx[a]
        idx[a] = idx[lo]
        idx[lo] = t
        ks[a] = lo_v


@leaf
def _play(
    rules,
    strat0,
    strat1,
    tab0,
    tab1,
    kv0,
    kv1,
    rngs,
    piles,
    ints,
    flt,
    ws,
    front,
    log,
    do_log,
    rec,
    result,
):
    """The game itself (see :func:`play_game`) on the work arrays of
    :func:`_work`, reset and seeded by :func:`_start`, with each seat's card
    table (:func:`card_table` for its strategy): a leaf kernel, so no array
    it touches is reference counted."""
    cap = rules[R_CAPACITY]
    max_hand = rules[R_MAX_HAND]
    start_hp = rules[R_START_HP]
    do_rec = do_log and rec.shape[0] > 0
    resh_rng = rngs[1]
    noise0 = rngs[2]
    noise1 = rngs[3]
    deck = piles[0]
    disc = piles[1]
    hand = ints[I_HAND : I_HAND + 2]
    hand0 = hand[0]
    hand1 = hand[1]
    order = ints[I_ORDER]
    idx = ints[I_IDX]
    pairs = ints[I_PAIRS : I_PAIRS + 14, :2]  # one row per per-seat counter
    hand_n = pairs[0]
    hp = pairs[1]
    hp_combat = pairs[2]
    seen = pairs[3]
    played_mask = pairs[4]
    chosen_mask = pairs[5]
    p_cost = pairs[6]
    p_atk = pairs[7]
    p_def = pairs[8]
    deck_n = pairs[9]  # deck_n[0], disc_n[0] are used
    disc_n = pairs[10]
    lead = pairs[11]  # leader seat (-1: nobody yet), lead changes
    max_def = pairs[12]  # largest deficit per seat
    not_ahead = pairs[13]  # last round (1-based) not strictly ahead, per seat
    lead[0] = -1
    deck_n[0] = N_CARDS
    hp[0] = start_hp
    hp[1] = start_hp
    info = flt[F_INFO]
    # the view's fields that hold the rules, for every decision of the game
    info[I_START_HP] = start_hp
    info[I_CAPACITY] = cap
    info[I_MAX_HAND] = max_hand
    info[I_HEAL_CARDS] = rules[R_HEAL_CARDS]
    info[I_HEAL_PER_CARD] = rules[R_HEAL_PER_CARD]
    keeps = flt[F_KEEP, :MAX_HAND]
    ks = flt[F_KS, :MAX_HAND]
    reveals = flt[F_SEAT : F_SEAT + 2, :3]  # rounds revealed, ATK sum, DEF sum
    last = flt[F_SEAT : F_SEAT + 2, 3:5]  # last revealed ATK, DEF

    # deal alternately, seat 0 first, up to the maximum hand size
    for _ in range(max_hand):
        for s in range(2):
            _draw(rules, s, 1, hand, hand_n, deck, deck_n, disc, disc_n, seen, resh_rng)

    winner = DRAW
    reason = END_CAP
    sudden = False
    rounds = 0
    for rnd in range(rules[R_MAX_ROUNDS]):
        rounds = rnd + 1
        # ---- 1. strategy: both choose at once from what they can see (T12)
        for s in range(2):
            strat = strat0 if s == 0 else strat1
            noise = noise0 if s == 0 else noise1
            o = 1 - s
            n = hand_n[s]
            info[I_MY_HP] = hp[s]
            info[I_OPP_HP] = hp[o]
            info[I_MY_HAND] = n
            info[I_OPP_HAND] = hand_n[o]
            info[I_DECK] = deck_n[0]
            info[I_DISCARD] = disc_n[0]
            info[I_ROUND] = rnd
            info[I_OPP_REVEALS] = reveals[o, 0]
            info[I_OPP_ATK_SUM] = reveals[o, 1]
            info[I_OPP_DEF_SUM] = reveals[o, 2]
            info[I_OPP_LAST_ATK] = last[o, 0]
            info[I_OPP_LAST_DEF] = last[o, 1]
            if do_rec:
                for j in range(N_INFO):
                    rec[rnd, s, REC_INFO + j] = info[j]
            chosen_mask[s], p_cost[s], p_atk[s], p_def[s] = choose_from_hand(
                rules,
                tab0 if s == 0 else tab1,
                hand0 if s == 0 else hand1,
                n,
                ws,
                front,
                strat,
                info,
                noise,
            )
            if do_log:
                for i in range(MAX_HAND):
                    log[rnd, s, L_HAND + i] = hand[s, i] if i < n else -1
                log[rnd, s, L_PLAYED] = chosen_mask[s]
                log[rnd, s, L_COST] = p_cost[s]
                log[rnd, s, L_ATK] = p_atk[s]
                log[rnd, s, L_DEF] = p_def[s]
                log[rnd, s, L_SUDDEN] = 1 if sudden else 0

        # ---- 2. combat: simultaneous (T8)
        dmg0 = max(0, p_atk[1] - p_def[0])  # taken by seat 0
        dmg1 = max(0, p_atk[0] - p_def[1])
        hp[0] -= dmg0
        hp[1] -= dmg1
        for s in range(2):
            reveals[s, 0] += 1.0
            reveals[s, 1] += p_atk[s]
            reveals[s, 2] += p_def[s]
            last[s, 0] = p_atk[s]
            last[s, 1] = p_def[s]
        if do_log:
            log[rnd, 0, L_DMG_TAKEN] = dmg0
            log[rnd, 1, L_DMG_TAKEN] = dmg1
            log[rnd, 0, L_HP_COMBAT] = hp[0]
            log[rnd, 1, L_HP_COMBAT] = hp[1]
        # ---- end of game (T10)
        if sudden:
            if dmg0 != dmg1:
                winner = 0 if dmg1 > dmg0 else 1
                reason = END_SUDDEN_DEATH
        elif hp[0] <= 0 and hp[1] <= 0:
            if dmg0 != dmg1:
                winner = 0 if dmg1 > dmg0 else 1
                reason = END_DOUBLE_KO
            else:
                sudden = True
        elif hp[0] <= 0:
            winner = 1
            reason = END_KO
        elif hp[1] <= 0:
            winner = 0
            reason = END_KO
        # played cards still count as played in a deciding round
        for s in range(2):
            cm = chosen_mask[s]
            pm = played_mask[s]
            for i in range(hand_n[s]):
                pm |= ((cm >> i) & 1) << hand[s, i]
            played_mask[s] = pm
        if winner != DRAW:
            if do_log:
                for s in range(2):
                    log[rnd, s, L_HP_END] = hp[s]
            track_score(hp, rounds, lead, max_def, not_ahead)
            break

        # ---- 3. recover: discard plays, heal, draw (T9)
        hp_combat[0] = hp[0]
        hp_combat[1] = hp[1]
        for s in range(2):
            strat = strat0 if s == 0 else strat1
            noise = noise0 if s == 0 else noise1
            n = hand_n[s]
            m = 0
            cm = chosen_mask[s]
            dn = disc_n[0]
            for i in range(n):  # without a branch: each card written to both, one kept
                c = hand[s, i]
                played = (cm >> i) & 1
                disc[dn] = c
                dn += played
                hand[s, m] = c
                order[m] = i  # index in the hand before the play (for the log)
                m += 1 - played
            disc_n[0] = dn
            for i in range(m, MAX_HAND):
                hand[s, i] = -1
            hand_n[s] = m
            # heal: the h least wanted cards; only lost HP can be restored
            lost = start_hp - hp[s]
            h_max = 0
            if rules[R_HEAL_PER_CARD] > 0 and (lost > 0 or rules[R_HEAL_NEEDS_LOSS] == 0):
                h_max = min(rules[R_HEAL_CARDS], m)
                if rules[R_HEAL_NEEDS_LOSS] != 0:  # TD2: every heal card restores HP
                    h_max = min(
                        h_max, (lost + rules[R_HEAL_PER_CARD] - 1) // rules[R_HEAL_PER_CARD]
                    )
            healed_log = 0
            if h_max > 0:
                _heal_order(
                    kv0 if s == 0 else kv1, hand0 if s == 0 else hand1, m, h_max, keeps, idx, ks
                )
                info[I_MY_HP] = hp[s]
                info[I_OPP_HP] = hp_combat[1 - s]  # heals are simultaneous
                if do_rec:
                    for j in range(N_INFO):
                        rec[rnd, s, REC_HEAL_INFO + j] = info[j]
                    rec[rnd, s, REC_UNSPENT] = cap - p_cost[s]
                    rec[rnd, s, REC_HEAL_MAX] = h_max
                h = choose_heal(strat, info, m, cap - p_cost[s], ks, h_max, noise)
                if h > 0:
                    drop = 0  # bit mask of the hand positions discarded to heal
                    for a in range(h):
                        drop |= 1 << idx[a]
                        healed_log |= 1 << order[idx[a]]
                    m2 = 0
                    dn = disc_n[0]
                    for i in range(m):  # without a branch, as the play's discards
                        c = hand[s, i]
                        dropped = (drop >> i) & 1
                        disc[dn] = c
                        dn += dropped
                        hand[s, m2] = c
                        m2 += 1 - dropped
                    disc_n[0] = dn
                    for i in range(m2, MAX_HAND):
                        hand[s, i] = -1
                    hand_n[s] = m2
                    hp[s] = min(start_hp, hp[s] + h * rules[R_HEAL_PER_CARD])
            if do_log:
                log[rnd, s, L_HEALED] = healed_log
                log[rnd, s, L_HP_END] = hp[s]
        track_score(hp, rounds, lead, max_def, not_ahead)
        for s in range(2):
            k = min(cap - p_cost[s], max_hand - hand_n[s])
            drawn, resh = _draw(
                rules, s, k, hand, hand_n, deck, deck_n, disc, disc_n, seen, resh_rng
            )
            if do_log:
                log[rnd, s, L_DRAWN] = drawn
                log[rnd, s, L_RESHUFFLES] = resh

    result[0] = winner
    result[1] = rounds
    result[2] = reason
    result[3] = hp[0]
    result[4] = hp[1]
    result[5] = seen[0]
    result[6] = seen[1]
    result[7] = played_mask[0]
    result[8] = played_mask[1]
    result[9] = deck_n[0] + disc_n[0] + hand_n[0] + hand_n[1]  # conservation check
    result[R_LEAD_CHANGES] = lead[1]
    result[R_MAX_DEFICIT] = max_def[0]
    result[R_MAX_DEFICIT + 1] = max_def[1]
    result[R_NOT_AHEAD] = not_ahead[0]
    result[R_NOT_AHEAD + 1] = not_ahead[1]


N_RESULT = 15


CHUNK = 32  # games per parallel task: each task allocates its work arrays once


@njit
def _play_games(rules, strat_a, strat_b, seed, first_deal, g0, g1, out):
    """Games ``g0 .. g1`` (rows of ``out``) one after another on one set of
    work arrays: game g is deal ``first_deal + g // 2``, A in seat ``g % 2``."""
    log = np.zeros((1, 2, LOG_WIDTH), dtype=np.int64)
    rec = np.zeros((0, 2, REC_WIDTH), dtype=np.float64)
    res = np.zeros(N_RESULT, dtype=np.int64)
    rngs, piles, ints, flt, ws, front, tabs, kvs = _work(rules[R_MAX_HAND])
    tab_a = tabs[0]
    tab_b = tabs[1]
    kv_a = kvs[0]
    kv_b = kvs[1]
    card_table(rules, np.int64(strat_a[P_FORBIDDEN]), tab_a)
    card_table(rules, np.int64(strat_b[P_FORBIDDEN]), tab_b)
    keep_table(rules, strat_a, kv_a)
    keep_table(rules, strat_b, kv_b)
    for g in range(g0, g1):
        _start(seed, first_deal + g // 2, rngs, piles, ints, flt, res)
        if g % 2 == 0:
            _play(
                rules,
                strat_a,
                strat_b,
                tab_a,
                tab_b,
                kv_a,
                kv_b,
                rngs,
                piles,
                ints,
                flt,
                ws,
                front,
                log,
                False,
                rec,
                res,
            )
        else:
            _play(
                rules,
                strat_b,
                strat_a,
                tab_b,
                tab_a,
                kv_b,
                kv_a,
                rngs,
                piles,
                ints,
                flt,
                ws,
                front,
                log,
                False,
                rec,
                res,
            )
        for k in range(N_RESULT):
            out[g, k] = res[k]


@chunked
def _simulate(c0, c1, rules, strat_a, strat_b, seed, first_deal, n_deals, out):
    """Kernel: deal d is played as game 2d (A in seat 0) and 2d+1 (A in seat 1),
    in tasks of ``CHUNK`` games (chunks ``c0 .. c1 - 1`` here)."""
    n_games = 2 * n_deals
    for c in range(c0, c1):
        _play_games(
            rules, strat_a, strat_b, seed, first_deal, c * CHUNK, min(n_games, (c + 1) * CHUNK), out
        )


def simulate(rules, strat_a, strat_b, seed, first_game, n_games):
    """Play games ``first_game .. first_game + n_games`` of seed ``seed``.

    Games come in seat-swapped pairs: game ``2d`` puts strategy A in seat 0 on
    deal ``d`` and game ``2d + 1`` puts it in seat 1 on the same deal, so
    ``first_game`` and ``n_games`` must be even. Returns a dict of arrays, one
    entry per game, from A's point of view where it matters:

    ``winner_seat`` (-1 draw), ``a_seat``, ``a_result`` (1 win, 0 loss, -1 draw
    — see ``a_points``), ``a_points`` (half points 0/1/2), ``rounds``,
    ``reason``, ``hp_seat0``, ``hp_seat1``, ``seen_a``/``seen_b`` and
    ``played_a``/``played_b`` (48-bit card masks), ``cards_total``, and the
    score-trace metrics (see ``outcome_arrays``): ``lead_changes``,
    ``max_deficit``, ``decided_pct``.
    """
    if first_game % 2 or n_games % 2:
        raise ValueError("first_game and n_games must be even (seat-swapped pairs)")
    out = np.zeros((n_games, N_RESULT), dtype=np.int64)
    _simulate(
        n_games,
        CHUNK,
        np.asarray(rules, np.int64),
        np.asarray(strat_a, np.float64),
        np.asarray(strat_b, np.float64),
        np.uint64(seed),
        first_game // 2,
        n_games // 2,
        out,
    )
    return outcome_arrays(out)


def outcome_arrays(out: np.ndarray) -> dict:
    """Per-game dict of arrays from the raw kernel rows (A's point of view).

    Score-trace metrics (the score is ``hp[0] - hp[1]`` at each round's end,
    see ``play_game``), each sized by ``METRICS`` for the runner's histograms:

    - ``lead_changes``: how often the lead passed from one seat to the other;
    - ``max_deficit``: the eventual winner's largest deficit over the game's
      rounds (0: never behind at a round end); -1 for a draw;
    - ``decided_pct``: ``(100 * r) // rounds`` where ``r`` is the last round
      at whose end the winner was not strictly ahead (0 if it was ahead at
      every round end): the share of the game, in whole percent, played
      before the winner took the lead for good; -1 for a draw.
    """
    n = out.shape[0]
    a_seat = np.arange(n) % 2
    winner = out[:, 0]
    a_points = np.where(winner == -1, 1, np.where(winner == a_seat, 2, 0))
    sa = np.where(a_seat == 0, out[:, 5], out[:, 6])
    sb = np.where(a_seat == 0, out[:, 6], out[:, 5])
    pa = np.where(a_seat == 0, out[:, 7], out[:, 8])
    pb = np.where(a_seat == 0, out[:, 8], out[:, 7])
    decided = winner != DRAW
    return {
        "winner_seat": winner,
        "a_seat": a_seat,
        "a_points": a_points,
        "rounds": out[:, 1],
        "reason": out[:, 2],
        "hp_seat0": out[:, 3],
        "hp_seat1": out[:, 4],
        "seen_a": sa,
        "seen_b": sb,
        "played_a": pa,
        "played_b": pb,
        "cards_total": out[:, 9],
        "lead_changes": out[:, R_LEAD_CHANGES],
        "max_deficit": np.where(
            decided, np.where(winner == 0, out[:, R_MAX_DEFICIT], out[:, R_MAX_DEFICIT + 1]), -1
        ),
        "decided_pct": np.where(
            decided,
            (100 * np.where(winner == 0, out[:, R_NOT_AHEAD], out[:, R_NOT_AHEAD + 1]))
            // np.maximum(out[:, 1], 1),
            -1,
        ),
    }


def trace_log(rules, strat_a, strat_b, seed, game):
    """Replay game ``game`` of seed ``seed`` with a round-by-round log.

    Returns ``(log, result)``: ``log`` is int64[rounds, 2, LOG_WIDTH] (seat 0,
    seat 1) and ``result`` the kernel's result row. Game ``2d`` has A in seat
    0 on deal ``d``, game ``2d + 1`` has A in seat 1 (as in ``simulate``).
    """
    rules = np.asarray(rules, np.int64)
    log = np.zeros((int(rules[R_MAX_ROUNDS]), 2, LOG_WIDTH), dtype=np.int64)
    res = np.zeros(N_RESULT, dtype=np.int64)
    sa, sb = np.asarray(strat_a, np.float64), np.asarray(strat_b, np.float64)
    if game % 2 == 0:
        play_game(rules, sa, sb, np.uint64(seed), game // 2, log, True, res)
    else:
        play_game(rules, sb, sa, np.uint64(seed), game // 2, log, True, res)
    return log[: res[1]], res


# ---- profile: where a game's time goes ------------------------------------------
@leaf
def _replay_play(rules, tabs, strats, who, hands, hand_n, infos, ws, front, noise, chosen):
    """``choose_from_hand`` of every recorded play decision, in order; row
    ``d`` of ``chosen`` receives its (mask, cost, ATK, DEF)."""
    for d in range(hands.shape[0]):
        w = who[d]
        m, c, a, f = choose_from_hand(
            rules, tabs[w], hands[d], hand_n[d], ws, front, strats[w], infos[d], noise
        )
        chosen[d, 0] = m
        chosen[d, 1] = c
        chosen[d, 2] = a
        chosen[d, 3] = f


@leaf
def _replay_heal(kvs, strats, who, hands, hand_n, infos, unspent, h_max, flt, idx, noise, chosen):
    """The heal choice of every recorded heal decision: keep values (from
    each strategy's ``keep_table``), their order (``_heal_order``) and
    ``choose_heal``."""
    keeps = flt[0]
    ks = flt[1]
    for d in range(hands.shape[0]):
        st = strats[who[d]]
        m = hand_n[d]
        _heal_order(kvs[who[d]], hands[d], m, h_max[d], keeps, idx, ks)
        chosen[d] = choose_heal(st, infos[d], m, unspent[d], ks, h_max[d], noise)


def _clock(fns: dict, repeat: int) -> dict[str, float]:
    """Least CPU seconds of this thread of each call in ``fns`` (name → call,
    one of them ``total``), timed in turn for ``repeat`` rounds, and for up
    to ``4 * repeat`` while the parts still add up to more than ``total`` (on
    a busy machine a slow spell can fall on one call)."""
    best = dict.fromkeys(fns, float("inf"))
    for r in range(4 * max(repeat, 1)):
        for name, fn in fns.items():
            t = time.thread_time()
            fn()
            best[name] = min(best[name], time.thread_time() - t)
        parts = sum(v for k, v in best.items() if k != "total")
        if r + 1 >= repeat and best["total"] > parts:
            break
    return best


def profile(rules, strat_a, strat_b, seed, n_games, repeat=3) -> dict[str, float]:
    """Where a game's time goes: CPU seconds per game of each part of the
    engine, and ``total``, for games ``0 .. n_games`` of seed ``seed`` (even).

    Method: ``total`` is the least CPU time (this thread's, over the timing
    rounds below) to play the games one after another in one thread, as a
    parallel task of ``simulate`` plays its chunk. The games are then played again
    with every decision's inputs recorded (the hand and the strategy's view
    before each play, the hand, view, stamina left and heal limit before each
    heal choice), and those inputs are replayed, in game order, through each
    hot kernel alone, timed the same way (the total and the parts in turn,
    each round; more rounds, up to four times ``repeat``, while noise leaves
    the parts above the total):

    - ``enumerate and choose play``: ``choose_from_hand`` of every play
      decision (the legal plays of the hand listed, then each scored by the
      strategy in order: the game loop enumerates and chooses in one call,
      inlined in ``_play``; replayed here through the same function);
    - ``choose heal``: the hand's keep values (from the strategies' keep
      tables), their order and ``choose_heal`` of every heal decision;
    - ``state, draws and RNG``: ``total`` minus the parts above (dealing,
      drawing and reshuffles, the strategy views, combat, the end of game and
      the score trace).

    A replayed part runs in a tight loop, so it may run a little faster than
    amid a game; what it saves shows in the last part. The replayed choices
    are checked against the recorded game for strategies without noise
    (those with a temperature draw their noise from a fresh stream in the
    replay, the same number of draws). Every decision's inputs are kept in
    memory (some 45 kB a game), so a few thousand games are plenty.
    Returns seconds per game.
    """
    if n_games <= 0 or n_games % 2:
        raise ValueError("n_games must be positive and even (seat-swapped pairs)")
    rules = np.asarray(rules, np.int64)
    sa, sb = np.asarray(strat_a, np.float64), np.asarray(strat_b, np.float64)
    seed = np.uint64(seed)
    out = np.zeros((n_games, N_RESULT), dtype=np.int64)
    _play_games(rules, sa, sb, seed, 0, 0, 2, out)  # compile outside the clock
    _play_games(rules, sa, sb, seed, 0, 0, n_games, out)

    # record every decision's inputs (a game plays the same rounds again)
    rounds = out[:, 1]
    first = np.concatenate(([0], np.cumsum(rounds)))
    log = np.zeros((int(first[-1]), 2, LOG_WIDTH), dtype=np.int64)
    rec = np.zeros((int(first[-1]), 2, REC_WIDTH), dtype=np.float64)
    res = np.zeros(N_RESULT, dtype=np.int64)
    for g in range(n_games):
        s0, s1 = (sa, sb) if g % 2 == 0 else (sb, sa)
        a, b = first[g], first[g + 1]
        _record_game(rules, s0, s1, seed, g // 2, log[a:b], True, rec[a:b], res)
        assert res[1] == rounds[g]
    strats = np.stack([sa, sb])
    # the strategy of each row (round and seat): 0 for A, in seat 0 of even games
    game_of = np.repeat(np.arange(n_games), rounds)
    who = (np.arange(2)[None, :] != (game_of % 2)[:, None]).astype(np.int64).reshape(-1)
    log = log.reshape(-1, LOG_WIDTH)
    rec = rec.reshape(-1, REC_WIDTH)
    hands = np.ascontiguousarray(log[:, L_HAND : L_HAND + MAX_HAND])
    hand_n = (hands >= 0).sum(axis=1).astype(np.int64)
    infos = np.ascontiguousarray(rec[:, REC_INFO : REC_INFO + N_INFO])

    ws, front, _, _ = workspace(int(rules[R_MAX_HAND]))
    tabs = np.zeros((2, N_T, N_CARDS), dtype=np.int64)
    for w in range(2):
        card_table(rules, np.int64(strats[w, P_FORBIDDEN]), tabs[w])
    noise = np.zeros(4, dtype=np.uint64)
    chosen = np.zeros((len(hands), 4), dtype=np.int64)

    def play_choice():
        rng.seed_state(noise, seed, 0, rng.PURPOSE_GAME)
        _replay_play(rules, tabs, strats, who, hands, hand_n, infos, ws, front, noise, chosen)

    play_choice()
    exact = strats[who, P_TEMP_PLAY] <= 0.0
    same = (chosen[:, 0] == log[:, L_PLAYED]) & (chosen[:, 1] == log[:, L_COST])
    same &= (chosen[:, 2] == log[:, L_ATK]) & (chosen[:, 3] == log[:, L_DEF])
    if not same[exact].all():
        raise RuntimeError("profile: a replayed play choice differs from the game's")

    heal = rec[:, REC_HEAL_MAX] > 0
    played = log[heal, L_PLAYED]
    hands_after = np.full((int(heal.sum()), MAX_HAND), -1, dtype=np.int64)
    for d, (row, mask) in enumerate(zip(hands[heal], played, strict=True)):
        kept = [c for i, c in enumerate(row) if c >= 0 and not (mask >> i) & 1]
        hands_after[d, : len(kept)] = kept
    h_n = (hands_after >= 0).sum(axis=1).astype(np.int64)
    h_infos = np.ascontiguousarray(rec[heal, REC_HEAL_INFO : REC_HEAL_INFO + N_INFO])
    unspent = rec[heal, REC_UNSPENT].astype(np.int64)
    h_max = rec[heal, REC_HEAL_MAX].astype(np.int64)
    flt = np.zeros((2, MAX_HAND), dtype=np.float64)
    idx = np.zeros(MAX_HAND, dtype=np.int64)
    h_chosen = np.zeros(len(h_n), dtype=np.int64)
    h_who = who[heal]

    kvs = np.zeros((2, N_CARDS), dtype=np.float64)
    for w in range(2):
        keep_table(rules, strats[w], kvs[w])

    def heal_choice():
        rng.seed_state(noise, seed, 0, rng.PURPOSE_GAME)
        _replay_heal(
            kvs,
            strats,
            h_who,
            hands_after,
            h_n,
            h_infos,
            unspent,
            h_max,
            flt,
            idx,
            noise,
            h_chosen,
        )

    heal_choice()
    healed = np.array([bin(int(x)).count("1") for x in log[heal, L_HEALED]], dtype=np.int64)
    exact = strats[h_who, P_TEMP_HEAL] <= 0.0
    if not (h_chosen == healed)[exact].all():
        raise RuntimeError("profile: a replayed heal choice differs from the game's")

    best = _clock(
        {
            "total": lambda: _play_games(rules, sa, sb, seed, 0, 0, n_games, out),
            "enumerate and choose play": play_choice,
            "choose heal": heal_choice,
        },
        repeat,
    )
    parts = {k: best[k] for k in ("enumerate and choose play", "choose heal")}
    parts["state, draws and RNG"] = best["total"] - sum(parts.values())
    parts["total"] = best["total"]
    return {k: v / n_games for k, v in parts.items()}


def _cards_of(row, mask):
    return [
        card_label(int(row[L_HAND + i]))
        for i in range(MAX_HAND)
        if row[L_HAND + i] >= 0 and (mask >> i) & 1
    ]


def trace(rules, strat_a, strat_b, seed, game, names=("A", "B"), card_names=None):
    """The events of one game, in order, each a dict with a readable ``text``.

    ``names`` label strategy A and B; seats are numbered 1 and 2 as in the
    rulebook. The last event (kind ``end``) says who won and why. Tosk has no
    card sets: ``card_names`` is ignored (the contract's signature).
    """
    log, res = trace_log(rules, strat_a, strat_b, seed, game)
    who = (names[0], names[1]) if game % 2 == 0 else (names[1], names[0])
    events = []
    for r in range(log.shape[0]):
        for s in range(2):
            row = log[r, s]
            hand = [card_label(int(c)) for c in row[L_HAND : L_HAND + MAX_HAND] if c >= 0]
            played = _cards_of(row, row[L_PLAYED])
            healed = _cards_of(row, row[L_HEALED])
            ev = {
                "kind": "round",
                "round": r + 1,
                "seat": s + 1,
                "player": who[s],
                "hand": hand,
                "played": played,
                "cost": int(row[L_COST]),
                "atk": int(row[L_ATK]),
                "def": int(row[L_DEF]),
                "damage_taken": int(row[L_DMG_TAKEN]),
                "hp_after_combat": int(row[L_HP_COMBAT]),
                "healed_with": healed,
                "hp_end": int(row[L_HP_END]),
                "drawn": int(row[L_DRAWN]),
                "reshuffles": int(row[L_RESHUFFLES]),
                "sudden_death": bool(row[L_SUDDEN]),
            }
            text = (
                f"round {r + 1:>3} seat {s + 1} {who[s]:<10} hand [{' '.join(hand)}] "
                f"plays [{' '.join(played) or '-'}] cost {ev['cost']} -> "
                f"{ev['atk']} ATK / {ev['def']} DEF; takes {ev['damage_taken']} -> "
                f"{ev['hp_after_combat']} HP"
            )
            if healed:
                text += f"; heals with [{' '.join(healed)}] -> {ev['hp_end']} HP"
            if r < log.shape[0] - 1 or res[0] == DRAW:
                text += f"; draws {ev['drawn']}"
            if ev["reshuffles"]:
                text += " (deck re-formed from the discard pile)"
            if ev["sudden_death"]:
                text += " [sudden death]"
            ev["text"] = text
            events.append(ev)
    winner = int(res[0])
    reason = END_NAMES[int(res[2])]
    if winner == DRAW:
        text = f"draw after {int(res[1])} rounds ({reason})"
    else:
        text = (
            f"seat {winner + 1} ({who[winner]}) wins after {int(res[1])} rounds "
            f"({reason}); HP {int(res[3])} : {int(res[4])}"
        )
    events.append(
        {
            "kind": "end",
            "winner_seat": winner + 1 if winner != DRAW else None,
            "winner": who[winner] if winner != DRAW else None,
            "reason": reason,
            "rounds": int(res[1]),
            "hp": [int(res[3]), int(res[4])],
            "text": text,
        }
    )
    return events


_SUIT_ALIASES = {
    "C": 0,
    "D": 1,
    "H": 2,
    "S": 3,
    "♣": 0,
    "♦": 1,
    "♥": 2,
    "♠": 3,
    "♧": 0,
    "♢": 1,
    "♡": 2,
    "♤": 3,
}


def parse_card(code: str) -> int:
    """Card id of a code such as ``3C``, ``J♣`` or ``a♠`` (rank then suit)."""
    text = code.strip().upper()
    if len(text) < 2:
        raise ValueError(f"bad card '{code}'")
    rank, suit = text[:-1], text[-1]
    if rank == "1":
        rank = "A"
    if rank not in RANK_NAMES or suit not in _SUIT_ALIASES:
        raise ValueError(f"bad card '{code}'")
    return 4 * RANK_NAMES.index(rank) + _SUIT_ALIASES[suit]


def technique_choices(rules, cards) -> list[tuple[int, int]]:
    """The (ATK, DEF) of each undominated technique assignment of playing all
    of ``cards`` (at most ``MAX_HAND``), ATK-richest first: what a strategy is
    offered for this play (T4, TD6), whatever its cost."""
    rules = np.array(rules, np.int64)
    rules[R_CAPACITY] = 1 << 40  # every subset, legal or not
    n = len(cards)
    if n > MAX_HAND:
        raise ValueError(f"at most {MAX_HAND} cards")
    hand = np.full(MAX_HAND, -1, dtype=np.int64)
    hand[:n] = cards
    ws, front, cand, c_mask = workspace(MAX_HAND)
    k = enumerate_plays(
        rules, hand, n, 0, ws, front, cand[0], cand[1], cand[2], cand[3], cand[4], c_mask
    )
    return [(int(cand[0, i]), int(cand[1, i])) for i in range(k) if c_mask[i] == (1 << n) - 1]


def play_cards(rules, cards) -> dict:
    """Rules calculator: cost, ATK, DEF and legality of playing ``cards``.

    Techniques boost the actions that give the most ATK+DEF (the player's best
    assignment; more ATK on a tie); ``choices`` lists the (ATK, DEF) of every
    undominated assignment (``technique_choices``; empty for more than
    ``MAX_HAND`` cards, which is never legal).
    """
    rules = np.asarray(rules, np.int64)
    n = len(cards)
    ev = np.zeros(4, dtype=np.int64)
    evaluate(rules, np.asarray(cards, np.int64), n, 2, ev)
    cost, atk, dfn, wasted = (int(x) for x in ev)
    return {
        "cost": cost,
        "atk": atk,
        "def": dfn,
        "wasted_techniques": wasted,
        "choices": technique_choices(rules, cards) if n <= MAX_HAND else [],
        "capacity": int(rules[R_CAPACITY]),
        "legal": cost <= rules[R_CAPACITY] and n <= rules[R_MAX_HAND],
    }
