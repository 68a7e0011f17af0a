"""Clash of Steel strategy kernel: scores every legal choice from features.

A strategy is a named weight set (``strategies/clash/*.toml``) plus a loadout.
The engine (``sims.clash``) hands each seat a *view*: a float vector holding
only what that seat may know (its own cards and stamina, the public state,
the opponent's face-up cards and its revealed history; ruling C4), laid out
in ``strategies.clash.view`` with the card enums both sides name. For each
decision this kernel builds a feature vector per candidate, scores it with the
strategy's weights and plays the best one, or samples the softmax when the
strategy has a temperature (Gumbel arg-max on the seat's own noise stream).

Decisions (and their TOML section): the initiative bid ``[bid]``, the
starting range and every Move destination ``[range]``, Wait or Act per card
type for the initiative holder ``[wait]``, the Stance ``[stance]``, Item
``[item]``, Action ``[action]``, Target ``[target]``, the 1–2 Stamina cards
``[stamina]``, and Armor ``[armor]``; Feint and Second Wind are timed by the
scalars ``feint_margin`` and ``second_wind_at``.

Strategy vector (``encode_strategy(spec, side)``, ``side.loadout``): element 0
(``P_LOADOUT``) is the loadout index (``sims.clash.LOADOUTS``); then one block
of weights per section in ``SECTIONS`` order, then the scalars of ``SCALARS``.
Nothing here decides a rule: item modifiers come in the engine's table
``imod[action, item, range, opponent item]`` (index 5 = no item).
"""

import numpy as np

from kernels.contract import Side, refuse
from kernels.jit import leaf
from kernels.rng import gumbel, uniform
from strategies.clash.view import (
    ATTACK,
    DEFEND,
    HEAD,
    LEGS,
    MOVE,
    NO_ITEM,
    NOT_PLAYED,
    QUICK,
    STANCE_MOD,
    STRONG,
    T_ACTION,
    T_ITEM,
    T_STANCE,
    T_TARGET,
    TORSO,
    V_AVG,
    V_EDGE,
    V_HAND,
    V_INIT,
    V_MY_AVAIL,
    V_MY_CARD,
    V_MY_ITEM,
    V_MY_N,
    V_MY_WOUND,
    V_OPP_ACT,
    V_OPP_ATK_TGT,
    V_OPP_AVAIL,
    V_OPP_CARD,
    V_OPP_DEF_TGT,
    V_OPP_ITEM,
    V_OPP_N,
    V_OPP_ROUNDS,
    V_OPP_STAM,
    V_OPP_WOUND,
    V_RANGE,
    V_ROUND,
)
from strategies.weights import weight_vector

# --- features, per section ------------------------------------------------------
BID_FEATURES = (
    ("sum", "total of the bid"),
    ("cards", "cards bid"),
    ("fives", "5s in the bid"),
    ("lows", "1s and 2s in the bid"),
    ("gap", "|sum - bid_target|"),
    ("rebid_sum", "bid total times the number of tied bids so far"),
)
RANGE_FEATURES = (
    ("my_atk", "best Attack modifier of my available items at the range (opponent items averaged)"),
    ("my_def", "best Defend modifier of my available items at the range"),
    ("opp_atk", "best Attack modifier of the opponent's available items at the range"),
    ("opp_def", "best Defend modifier of the opponent's available items at the range"),
    ("edge", "(my_atk + my_def) - (opp_atk + opp_def)"),
    ("hand", "1 for Hand range"),
    ("arm", "1 for Arm range"),
    ("step", "1 for Step range"),
    ("reach", "1 for Reach range"),
)
WAIT_FEATURES = (  # score of Wait (Act scores 0); only the initiative holder decides
    ("bias", "every Wait"),
    ("stance", "Wait on the Stance"),
    ("item", "Wait on the Item"),
    ("action", "Wait on the Action"),
    ("target", "Wait on the Target"),
    ("ahead", "my stamina cards minus the opponent's"),
)
STANCE_FEATURES = (
    ("quick", "1 for Quick"),
    ("strong", "1 for Strong"),
    ("mod", "the stance's modifier to the action (-1, 0, +1)"),
    ("mod_attack", "modifier when the planned action is Attack"),
    ("mod_defend", "modifier when the planned action is Defend"),
    ("init_gain", "chance of holding the initiative next round (C11; 0.5 where the round decides)"),
)
ITEM_FEATURES = (
    ("mod", "item modifier to the planned action (opponent item seen or averaged)"),
    ("atk_mod", "item's Attack modifier"),
    ("def_mod", "item's Defend modifier"),
)
ACTION_FEATURES = (
    ("attack", "1 for Attack"),
    ("defend", "1 for Defend"),
    ("move", "1 for Move"),
    ("mod", "my total modifier for the action (stance, item, wound) as far as played"),
    ("att_vs_att", "Attack x P(opponent attacks)"),
    ("att_vs_def", "Attack x P(opponent defends)"),
    ("att_vs_move", "Attack x P(opponent moves)"),
    ("def_vs_att", "Defend x P(opponent attacks)"),
    ("def_vs_def", "Defend x P(opponent defends)"),
    ("def_vs_move", "Defend x P(opponent moves)"),
    ("move_vs_att", "Move x P(opponent attacks)"),
    ("move_vs_def", "Move x P(opponent defends)"),
    ("move_vs_move", "Move x P(opponent moves)"),
    ("range_gain", "Move x (best other range's edge - this range's edge)"),
    ("retrieve", "Move x 1 if one of my items is disarmed"),
    ("lead_attack", "Attack x (my stamina cards - the opponent's)"),
    ("def_unarmed", "Defend x 1 if the opponent has no item available (nothing to disarm)"),
    ("finish", "Attack x 1 if the opponent has at most 2 stamina cards"),
)
TARGET_FEATURES = (
    ("high", "1 for High"),
    ("mid", "1 for Mid"),
    ("low", "1 for Low"),
    ("def_match", "Defend x P(the opponent attacks this target)"),
    ("att_dodge", "Attack x (1 - P(the opponent defends this target))"),
    ("new_wound", "Attack x 1 if the opponent has no wound of this kind yet"),
)
STAMINA_FEATURES = (
    ("sum", "stamina played"),
    ("cost", "stamina value discarded if not hit (Attack both, Defend highest, Move lowest)"),
    ("cards", "cards played (1 or 2)"),
    ("win_est", "estimated chance of winning the round"),
    ("margin", "my expected total minus the opponent's (clipped to +-6)"),
)
ARMOR_FEATURES = (  # score of using Armor on a new wound (keeping it scores 0)
    ("bias", "every use"),
    ("head", "the wound is Head"),
    ("torso", "the wound is Torso"),
    ("legs", "the wound is Legs"),
)

P_LOADOUT = 0
_sizes = (
    len(BID_FEATURES),
    len(RANGE_FEATURES),
    len(WAIT_FEATURES),
    len(STANCE_FEATURES),
    len(ITEM_FEATURES),
    len(ACTION_FEATURES),
    len(TARGET_FEATURES),
    len(STAMINA_FEATURES),
    len(ARMOR_FEATURES),
)
P_BID = 1
P_RANGE = P_BID + _sizes[0]
P_WAIT = P_RANGE + _sizes[1]
P_STANCE = P_WAIT + _sizes[2]
P_ITEM = P_STANCE + _sizes[3]
P_ACTION = P_ITEM + _sizes[4]
P_TARGET = P_ACTION + _sizes[5]
P_STAMINA = P_TARGET + _sizes[6]
P_ARMOR = P_STAMINA + _sizes[7]
P_SCALAR = P_ARMOR + _sizes[8]
(
    P_TEMP,
    P_BID_TEMP,
    P_WAIT_TEMP,
    P_BID_TARGET,
    P_PRIOR_WEIGHT,
    P_PRIOR_STAMINA,
    P_FEINT_MARGIN,
    P_SECOND_WIND_AT,
    P_WIN_SPREAD,
) = range(P_SCALAR, P_SCALAR + 9)
N_PARAMS = P_SCALAR + 9

SECTIONS = {
    "bid": (P_BID, BID_FEATURES),
    "range": (P_RANGE, RANGE_FEATURES),
    "wait": (P_WAIT, WAIT_FEATURES),
    "stance": (P_STANCE, STANCE_FEATURES),
    "item": (P_ITEM, ITEM_FEATURES),
    "action": (P_ACTION, ACTION_FEATURES),
    "target": (P_TARGET, TARGET_FEATURES),
    "stamina": (P_STAMINA, STAMINA_FEATURES),
    "armor": (P_ARMOR, ARMOR_FEATURES),
}
SCALARS = {
    "temperature": (P_TEMP, "softmax temperature of the card, range and Armor choices (0 = best)"),
    "bid_temperature": (P_BID_TEMP, "softmax temperature of the bid"),
    "wait_temperature": (P_WAIT_TEMP, "softmax temperature of Wait/Act"),
    "bid_target": (P_BID_TARGET, "the bid total the 'gap' feature measures from (default 6)"),
    "prior_weight": (
        P_PRIOR_WEIGHT,
        "rounds' worth of weight on the uniform prior of the opponent model (default 3)",
    ),
    "prior_stamina": (
        P_PRIOR_STAMINA,
        "expected opponent stamina per play before any reveal (default 5)",
    ),
    "feint_margin": (
        P_FEINT_MARGIN,
        "Feint when swapping the Action or Target gains more than this score (default 1e9: never)",
    ),
    "second_wind_at": (
        P_SECOND_WIND_AT,
        "use Second Wind when left with at most this many stamina cards "
        "(0: only to escape defeat; -1: never; default 0)",
    ),
    "win_spread": (P_WIN_SPREAD, "spread of the win estimate's logistic curve (default 1.5)"),
}
_DEFAULTS = {
    P_BID_TARGET: 6.0,
    P_PRIOR_WEIGHT: 3.0,
    P_PRIOR_STAMINA: 5.0,
    P_FEINT_MARGIN: 1e9,
    P_SECOND_WIND_AT: 0.0,
    P_WIN_SPREAD: 1.5,
}

# bid candidates: every multiset of 1..MAX_BID_CARDS stamina values (the
# kernel's own limit; the rules allow any bid of one or more cards)
MAX_BID_CARDS = 3


def _multisets(max_cards):
    out = []

    def rec(start, left, cur):
        if cur:
            out.append(list(cur))
        if left == 0:
            return
        for v in range(start, 5):
            cur.append(v)
            rec(v, left - 1, cur)
            cur.pop()

    rec(0, max_cards, [])
    rows = np.zeros((len(out), 5), dtype=np.int64)
    for i, ms in enumerate(out):
        for v in ms:
            rows[i, v] += 1
    return rows


BID_SETS = _multisets(MAX_BID_CARDS)  # counts of values 1..5 per candidate
STAM_SETS = _multisets(2)  # stamina plays: 5 singles, 15 pairs


def _stamina_table(sets):
    """Per stamina play: its two value indices (the second -1 for a single
    card), cards, sum, highest and lowest value."""
    t = np.zeros((sets.shape[0], 6), dtype=np.int64)
    for k, row in enumerate(sets):
        vals = [v for v in range(5) for _ in range(row[v])]
        t[k] = (
            vals[0],
            vals[1] if len(vals) > 1 else -1,
            len(vals),
            sum(v + 1 for v in vals),
            max(vals) + 1,
            min(vals) + 1,
        )
    return t


STAM_TABLE = _stamina_table(STAM_SETS)


def encode_strategy(spec: dict, side: Side) -> np.ndarray:
    """The kernel's parameter vector for a validated strategy table.

    ``spec`` has optional sections (``SECTIONS``: feature name → weight) and
    scalars (``SCALARS``); ``side.loadout`` is an index into
    ``sims.clash.ALL_LOADOUTS`` and goes to element ``P_LOADOUT`` (0). Clash
    of Steel has no restricted play and no decks. Unknown names are the
    config loader's job to refuse.
    """
    refuse("Clash of Steel", side, "forbidden", "deck", "n_cards")
    p = weight_vector(spec, N_PARAMS, SECTIONS, SCALARS, _DEFAULTS)
    p[P_LOADOUT] = float(int(side.loadout))
    return p


# ---- helpers -----------------------------------------------------------------------
@leaf
def _noisy(s, temp, noise):
    if temp > 0.0:
        return s + temp * gumbel(noise)
    return s


# The scratch row ``sc`` of a seat (float64[SCRATCH]): [0:3] the opponent's
# action probabilities, [8:19] win estimates, then a candidate list: scores at
# SC_SCORE, candidate ids at SC_ID (at most MAX_CANDIDATES each).
SC_SCORE = 32
MAX_CANDIDATES = 64
SC_ID = SC_SCORE + MAX_CANDIDATES
SCRATCH = SC_ID + MAX_CANDIDATES
assert max(BID_SETS.shape[0], STAM_SETS.shape[0], 4) <= MAX_CANDIDATES  # every choice fits


@leaf
def _pick(sc, n, temp, noise):
    """The chosen one of the ``n`` candidates listed in ``sc`` (scores at
    ``SC_SCORE``, ids at ``SC_ID``): the first best score when ``temp`` is 0,
    else a draw from softmax(score / temp) by inversion of one uniform (the
    same distribution as Gumbel arg-max, with one random number instead of
    one per candidate). Returns the candidate's id."""
    best = 0
    for i in range(1, n):
        if sc[SC_SCORE + i] > sc[SC_SCORE + best]:
            best = i
    if temp > 0.0 and n > 1:
        top = sc[SC_SCORE + best]
        tot = 0.0
        for i in range(n):
            w = np.exp((sc[SC_SCORE + i] - top) / temp)
            sc[SC_SCORE + i] = w
            tot += w
        u = uniform(noise) * tot
        acc = 0.0
        for i in range(n):
            w = sc[SC_SCORE + i]
            if w > 0.0:
                acc += w
                best = i
                if u < acc:
                    break
    return int(sc[SC_ID + best])


@leaf(inline="always")
def _coin(s, temp, noise):
    """True with probability logistic(s / temp) (true iff s > 0 when ``temp``
    is 0): a binary choice scoring ``s`` against 0, as ``_pick`` does it."""
    if temp > 0.0:
        return uniform(noise) * (1.0 + np.exp(-s / temp)) < 1.0
    return s > 0.0


@leaf(inline="always")
def _idx(item):
    return NO_ITEM if item < 0 else item


@leaf(inline="always")
def opp_action_probs(p, view, out):
    """P(opponent's action) into ``out[0:3]``: its face-up Action, else its
    history with a uniform prior."""
    a = view[V_OPP_CARD + T_ACTION]
    if a >= 0:
        for k in range(3):
            out[k] = 0.0
        out[int(a)] = 1.0
        return
    pw = p[P_PRIOR_WEIGHT] / 3.0
    tot = 3.0 * pw
    for k in range(3):
        tot += view[V_OPP_ACT + k]
    for k in range(3):
        out[k] = (view[V_OPP_ACT + k] + pw) / tot if tot > 0 else 1.0 / 3.0


@leaf(inline="always")
def _opp_target_p(p, view, base, t):
    """P(the opponent's target is t) from its face-up target or history row ``base``."""
    ot = view[V_OPP_CARD + T_TARGET]
    if ot >= 0:
        return 1.0 if int(ot) == t else 0.0
    pw = p[P_PRIOR_WEIGHT] / 3.0
    tot = 3.0 * pw + view[base] + view[base + 1] + view[base + 2]
    if tot <= 0:
        return 1.0 / 3.0
    return (view[base + t] + pw) / tot


@leaf(inline="always")
def item_mod_vs(view, imod, action, item, rng):
    """Modifier of my ``item`` for ``action`` at ``rng``: against the opponent's
    face-up item, else averaged over its available items (none if disarmed)."""
    oi = view[V_OPP_CARD + T_ITEM]
    ii = _idx(item)
    if oi >= 0:
        return float(imod[action, ii, rng, int(oi)])
    return view[V_AVG + (action * 6 + ii) * 4 + rng]


@leaf
def _avg_vs(view, imod, act, it, rng, ob, oab):
    """``imod[act, it, rng, ·]`` averaged over the items listed at ``ob`` whose
    availability flag at ``oab`` is set (no item available: ``NO_ITEM``)."""
    tot = 0.0
    n = 0
    for j in range(2):
        if view[oab + j] > 0:
            tot += imod[act, it, rng, int(view[ob + j])]
            n += 1
    return tot / n if n > 0 else float(imod[act, it, rng, NO_ITEM])


@leaf
def refresh_view(view, imod):
    """Derived view fields that change only with the items available, for
    every range: each of my items' Attack and Defend modifier averaged over
    the opponent's available items (``V_AVG``; a Move, and no item, is never
    modified: those entries stay 0) and the item edge (``V_EDGE``: my_atk,
    my_def, opp_atk, opp_def, the best available item of each side against the
    other side's available items, averaged). The engine calls it whenever an
    item is disarmed or retrieved."""
    for r in range(4):
        for act in range(2):
            best = -1e9
            for k in range(2):
                it = int(view[V_MY_ITEM + k])
                v = _avg_vs(view, imod, act, it, r, V_OPP_ITEM, V_OPP_AVAIL)
                view[V_AVG + (act * 6 + it) * 4 + r] = v
                if view[V_MY_AVAIL + k] > 0 and v > best:
                    best = v
            view[V_EDGE + 4 * r + act] = best if best > -1e9 else 0.0
            best = -1e9
            for k in range(2):
                if view[V_OPP_AVAIL + k] > 0:
                    v = _avg_vs(
                        view, imod, act, int(view[V_OPP_ITEM + k]), r, V_MY_ITEM, V_MY_AVAIL
                    )
                    if v > best:
                        best = v
            view[V_EDGE + 4 * r + 2 + act] = best if best > -1e9 else 0.0


@leaf(inline="always")
def _edge(view, r):
    b = V_EDGE + 4 * r
    return view[b] + view[b + 1] - view[b + 2] - view[b + 3]


@leaf(inline="always")
def _range_score(p, view, r):
    w = P_RANGE
    b = V_EDGE + 4 * r
    return (
        p[w] * view[b]
        + p[w + 1] * view[b + 1]
        + p[w + 2] * view[b + 2]
        + p[w + 3] * view[b + 3]
        + p[w + 4] * _edge(view, r)
        + p[w + 5 + r]
    )


@leaf
def choose_range(p, view, imod, exclude, noise, sc):
    """A range (0..3) other than ``exclude`` (-1: any): the starting range of the
    initiative winner (C3) or the destination of a winning Move (C8)."""
    n = 0
    for r in range(4):
        if r == exclude:
            continue
        sc[SC_SCORE + n] = _range_score(p, view, r)
        sc[SC_ID + n] = r
        n += 1
    return _pick(sc, n, p[P_TEMP], noise)


@leaf
def choose_retrieve(p, view, imod, rng):
    """Which disarmed item slot (0/1) a winning Move retrieves: the one with the
    larger Attack + Defend modifier at the new range ``rng``."""
    best = -1
    best_s = -np.inf
    for k in range(2):
        if view[V_MY_AVAIL + k] == 0:
            it = int(view[V_MY_ITEM + k])
            s = item_mod_vs(view, imod, ATTACK, it, rng) + item_mod_vs(view, imod, DEFEND, it, rng)
            if s > best_s:
                best_s = s
                best = k
    return best


@leaf
def choose_bid(p, view, noise, sc, out):
    """Write the bid (count of each value 1..5) to ``out``: one or more cards,
    at most ``MAX_BID_CARDS``, keeping one card when holding two or more."""
    n = int(view[V_MY_N])
    for v in range(5):
        out[v] = 0
    if n == 0:
        return
    max_cards = min(MAX_BID_CARDS, n - 1) if n >= 2 else 1
    ties = view[V_ROUND]
    w = P_BID
    m = 0
    for k in range(BID_SETS.shape[0]):
        cards = 0
        ssum = 0
        ok = True
        for v in range(5):
            c = BID_SETS[k, v]
            if c > view[V_HAND + v]:
                ok = False
                break
            cards += c
            ssum += c * (v + 1)
        if not ok or cards > max_cards:
            continue
        s = (
            p[w] * ssum
            + p[w + 1] * cards
            + p[w + 2] * BID_SETS[k, 4]
            + p[w + 3] * (BID_SETS[k, 0] + BID_SETS[k, 1])
            + p[w + 4] * abs(ssum - p[P_BID_TARGET])
            + p[w + 5] * ssum * ties
        )
        sc[SC_SCORE + m] = s
        sc[SC_ID + m] = k
        m += 1
    best = _pick(sc, m, p[P_BID_TEMP], noise)
    for v in range(5):
        out[v] = BID_SETS[best, v]


@leaf
def choose_wait(p, view, t, noise):
    """True if the initiative holder Waits on card type ``t`` (C4)."""
    w = P_WAIT
    s = p[w] + p[w + 1 + t] + p[w + 5] * (view[V_MY_N] - view[V_OPP_N])
    return _coin(s, p[P_WAIT_TEMP], noise)


@leaf(inline="always")
def _my_mod(view, imod, action, stance, item):
    """My known modifier for ``action``: stance (if played), item (if not played
    yet: my best available one), wound (Torso -1 Attack, Head -1 Defend, Legs
    -1 Move)."""
    m = 0.0
    if stance >= 0:
        m += STANCE_MOD[stance]
    rng = int(view[V_RANGE])
    if item >= 0:
        m += item_mod_vs(view, imod, action, item, rng)
    elif item == NOT_PLAYED:
        best = -1e9
        for k in range(2):
            if view[V_MY_AVAIL + k] > 0:
                v = item_mod_vs(view, imod, action, int(view[V_MY_ITEM + k]), rng)
                if v > best:
                    best = v
        if best > -1e9:
            m += best
    if action == ATTACK:
        m -= view[V_MY_WOUND + TORSO]
    elif action == DEFEND:
        m -= view[V_MY_WOUND + HEAD]
    else:
        m -= view[V_MY_WOUND + LEGS]
    return m


@leaf(inline="always")
def action_score(p, view, imod, a, probs):
    """Score of playing action ``a`` (features ``ACTION_FEATURES``) given the
    opponent's action probabilities ``probs[0:3]``."""
    w = P_ACTION
    stance = int(view[V_MY_CARD + T_STANCE])
    item = int(view[V_MY_CARD + T_ITEM])
    s = p[w + a] + p[w + 3] * _my_mod(view, imod, a, stance, item)
    for b in range(3):
        s += p[w + 4 + 3 * a + b] * probs[b]
    if a == MOVE:
        cur = int(view[V_RANGE])
        here = 0.0
        best = -1e9
        for r in range(4):
            e = _edge(view, r)
            if r == cur:
                here = e
            elif e > best:
                best = e
        s += p[w + 13] * (best - here)
        if view[V_MY_AVAIL] == 0 or view[V_MY_AVAIL + 1] == 0:
            s += p[w + 14]
    elif a == ATTACK:
        s += p[w + 15] * (view[V_MY_N] - view[V_OPP_N])
        if view[V_OPP_N] <= 2:
            s += p[w + 17]
    elif view[V_OPP_AVAIL] == 0 and view[V_OPP_AVAIL + 1] == 0:
        s += p[w + 16]
    return s


@leaf
def plan_action(p, view, imod, sc):
    """The action the strategy would play now, without noise (guides Stance and Item)."""
    opp_action_probs(p, view, sc)
    best = 0
    best_s = -np.inf
    for a in range(3):
        s = action_score(p, view, imod, a, sc)
        if s > best_s:
            best_s = s
            best = a
    return best


@leaf(inline="always")
def init_chance(view, st):
    """P(I hold the initiative next round) if I play stance ``st`` (C11)."""
    ost = view[V_OPP_CARD + T_STANCE]
    if ost >= 0:
        o = int(ost)
        if st == o:
            return 0.5
        if st == QUICK:
            return 1.0
        if o == QUICK:
            return 0.0
        return 0.0 if st == STRONG else 1.0
    if st == QUICK:
        return 1.0
    if st == STRONG:
        return 0.0
    return 0.5


@leaf(inline="always")
def target_score(p, view, a, t):
    w = P_TARGET
    s = p[w + t]
    if a == DEFEND:
        # P(opponent attacks) x P(its attack target is t)
        oa = view[V_OPP_CARD + T_ACTION]
        pa = 0.0
        if oa >= 0:
            pa = 1.0 if int(oa) == ATTACK else 0.0
        else:
            pw = p[P_PRIOR_WEIGHT] / 3.0
            tot = 3.0 * pw + view[V_OPP_ACT] + view[V_OPP_ACT + 1] + view[V_OPP_ACT + 2]
            pa = (view[V_OPP_ACT] + pw) / tot if tot > 0 else 1.0 / 3.0
        s += p[w + 3] * pa * _opp_target_p(p, view, V_OPP_ATK_TGT, t)
    elif a == ATTACK:
        oa = view[V_OPP_CARD + T_ACTION]
        if oa >= 0:
            pd = 1.0 if int(oa) == DEFEND else 0.0
        else:
            pw = p[P_PRIOR_WEIGHT] / 3.0
            tot = 3.0 * pw + view[V_OPP_ACT] + view[V_OPP_ACT + 1] + view[V_OPP_ACT + 2]
            pd = (view[V_OPP_ACT + 1] + pw) / tot if tot > 0 else 1.0 / 3.0
        s += p[w + 4] * (1.0 - pd * _opp_target_p(p, view, V_OPP_DEF_TGT, t))
        if view[V_OPP_WOUND + t] == 0:
            s += p[w + 5]
    return s


@leaf
def choose_card(p, view, imod, t, noise, sc):
    """The card of type ``t`` (stance, item, action or target) to play now.

    Returns a stance, an item id (-1 when no item is available, C5), an action
    or a target. Stance and Item follow the action the strategy plans to play
    (``plan_action``); the Action is chosen afresh from what is now visible.
    """
    n = 0
    if t == T_STANCE:
        plan = plan_action(p, view, imod, sc)
        w = P_STANCE
        for st in range(3):
            m = float(STANCE_MOD[st])
            sc[SC_SCORE + n] = (
                p[w] * (st == QUICK)
                + p[w + 1] * (st == STRONG)
                + p[w + 2] * m
                + p[w + 3] * m * (plan == ATTACK)
                + p[w + 4] * m * (plan == DEFEND)
                + p[w + 5] * init_chance(view, st)
            )
            sc[SC_ID + n] = st
            n += 1
    elif t == T_ITEM:
        plan = plan_action(p, view, imod, sc)
        w = P_ITEM
        rng = int(view[V_RANGE])
        for k in range(2):
            if view[V_MY_AVAIL + k] == 0:
                continue
            it = int(view[V_MY_ITEM + k])
            am = item_mod_vs(view, imod, ATTACK, it, rng)
            dm = item_mod_vs(view, imod, DEFEND, it, rng)
            pm = am if plan == ATTACK else (dm if plan == DEFEND else 0.0)
            sc[SC_SCORE + n] = p[w] * pm + p[w + 1] * am + p[w + 2] * dm
            sc[SC_ID + n] = it
            n += 1
        if n == 0:
            return -1
    elif t == T_ACTION:
        opp_action_probs(p, view, sc)
        for a in range(3):
            sc[SC_SCORE + n] = action_score(p, view, imod, a, sc)
            sc[SC_ID + n] = a
            n += 1
    else:
        a = int(view[V_MY_CARD + T_ACTION])
        for tg in range(3):
            sc[SC_SCORE + n] = target_score(p, view, a, tg)
            sc[SC_ID + n] = tg
            n += 1
    return _pick(sc, n, p[P_TEMP], noise)


@leaf
def expected_margin(p, view, imod, sc):
    """My expected total without stamina minus the opponent's expected total
    (its face-up cards exactly, the rest from its history)."""
    a = int(view[V_MY_CARD + T_ACTION])
    rng = int(view[V_RANGE])
    mine = _my_mod(view, imod, a, int(view[V_MY_CARD + T_STANCE]), int(view[V_MY_CARD + T_ITEM]))
    my_t = int(view[V_MY_CARD + T_TARGET])
    oa = view[V_OPP_CARD + T_ACTION]
    ot = view[V_OPP_CARD + T_TARGET]
    if a == DEFEND:  # the target bonus (C6)
        if oa >= 0 and ot >= 0:
            mine += 1.0 if (int(oa) == ATTACK and int(ot) == my_t) else 0.0
        else:
            opp_action_probs(p, view, sc)
            mine += sc[ATTACK] * _opp_target_p(p, view, V_OPP_ATK_TGT, my_t)
    pw = p[P_PRIOR_WEIGHT]
    opp = (
        (p[P_PRIOR_STAMINA] * pw + view[V_OPP_STAM]) / (pw + view[V_OPP_ROUNDS])
        if pw + view[V_OPP_ROUNDS] > 0
        else p[P_PRIOR_STAMINA]
    )
    ost = view[V_OPP_CARD + T_STANCE]
    if ost >= 0:
        opp += STANCE_MOD[int(ost)]
    if oa >= 0:
        o = int(oa)
        oi = view[V_OPP_CARD + T_ITEM]
        my_item = int(view[V_MY_CARD + T_ITEM])
        if oi >= 0:
            opp += imod[o, int(oi), rng, _idx(my_item)]
        if o == ATTACK:
            opp -= view[V_OPP_WOUND + TORSO]
        elif o == DEFEND:
            opp -= view[V_OPP_WOUND + HEAD]
            if a == ATTACK and ot >= 0 and int(ot) == my_t:
                opp += 1.0
        else:
            opp -= view[V_OPP_WOUND + LEGS]
    return mine - opp + (0.5 if view[V_INIT] > 0 else -0.5)


@leaf
def choose_stamina(p, view, imod, noise, sc, out):
    """Write the stamina play (count of each value 1..5, one or two cards) to ``out``."""
    base = expected_margin(p, view, imod, sc)
    a = int(view[V_MY_CARD + T_ACTION])
    n = view[V_MY_N]
    spread = p[P_WIN_SPREAD] if p[P_WIN_SPREAD] > 0 else 1.0
    w = P_STAMINA
    m = 0
    wins = 8  # sc[8 + k]: the win estimate for each stamina sum k = 0..10
    if p[w + 3] != 0.0:
        # logistic((base + k) / spread) for k = 0..10, with two exps
        q = np.exp(-base / spread)
        step = np.exp(-1.0 / spread)
        for k in range(11):
            sc[wins + k] = 1.0 / (1.0 + q)
            q *= step
    for k in range(STAM_TABLE.shape[0]):
        v1 = STAM_TABLE[k, 0]
        v2 = STAM_TABLE[k, 1]
        if v2 < 0:
            if view[V_HAND + v1] < 1:
                continue
        elif v2 == v1:
            if view[V_HAND + v1] < 2:
                continue
        elif view[V_HAND + v1] < 1 or view[V_HAND + v2] < 1:
            continue
        cards = STAM_TABLE[k, 2]
        ssum = STAM_TABLE[k, 3]
        hi = STAM_TABLE[k, 4]
        lo = STAM_TABLE[k, 5]
        if a == ATTACK:
            cost = ssum
            ncost = cards
        elif a == DEFEND:
            cost = hi
            ncost = 1
        else:
            cost = lo
            ncost = 1
        if n - cards + (cards - ncost) == 0:  # the last card is kept unless hit (C9)
            cost -= hi
        margin = base + ssum
        win = sc[wins + ssum] if p[w + 3] != 0.0 else 0.0
        sc[SC_SCORE + m] = (
            p[w] * ssum
            + p[w + 1] * cost
            + p[w + 2] * cards
            + p[w + 3] * win
            + p[w + 4] * min(6.0, max(-6.0, margin))
        )
        sc[SC_ID + m] = k
        m += 1
    best = _pick(sc, m, p[P_TEMP], noise) if m > 0 else 0
    for v in range(5):
        out[v] = STAM_SETS[best, v]


@leaf(inline="always")
def _one_of_3(i, v0, v1, v2):
    """``(v0, v1, v2)[i]`` for ``i`` in 0..2 (2 for any other ``i``)."""
    return v0 if i == 0 else (v1 if i == 1 else v2)


@leaf
def choose_feint(p, view, imod, noise, sc):
    """Feint (C12): 0 none, 1 + a to swap the Action to ``a``, 4 + t to swap
    the Target to ``t``; when the best swap gains more than ``feint_margin``."""
    temp = p[P_TEMP]
    opp_action_probs(p, view, sc)
    a0 = int(view[V_MY_CARD + T_ACTION])
    t0 = int(view[V_MY_CARD + T_TARGET])
    # every action's and target's score first, each scorer inlined once (they
    # draw no noise, so the order they are computed in changes nothing)
    x0 = x1 = x2 = y0 = y1 = y2 = 0.0
    for i in range(3):
        x = action_score(p, view, imod, i, sc)
        y = target_score(p, view, a0, i)
        if i == 0:
            x0, y0 = x, y
        elif i == 1:
            x1, y1 = x, y
        else:
            x2, y2 = x, y
    cur_a = _one_of_3(a0, x0, x1, x2)
    cur_t = _one_of_3(t0, y0, y1, y2)
    best = 0
    best_gain = p[P_FEINT_MARGIN]
    for a in range(3):
        if a == a0:
            continue
        g = _noisy(_one_of_3(a, x0, x1, x2) - cur_a, temp, noise)
        if g > best_gain:
            best_gain = g
            best = 1 + a
    for t in range(3):
        if t == t0:
            continue
        g = _noisy(_one_of_3(t, y0, y1, y2) - cur_t, temp, noise)
        if g > best_gain:
            best_gain = g
            best = 4 + t
    return best


@leaf
def use_armor(p, view, kind, noise):
    """True to spend Armor on a new wound of ``kind`` (C10)."""
    w = P_ARMOR
    return _coin(p[w] + p[w + 1 + kind], p[P_TEMP], noise)


@leaf
def use_second_wind(p, n_left):
    """True to spend Second Wind now (C13), left with ``n_left`` stamina cards."""
    at = p[P_SECOND_WIND_AT]
    return at >= 0 and n_left <= at
