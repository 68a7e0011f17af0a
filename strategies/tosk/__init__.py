"""Tosk strategy kernel: scores every legal play and heal from features.

A strategy is a named weight set (``strategies/tosk/*.toml``). The engine
offers the legal candidates (every subset of the hand within stamina, once for
each technique assignment no other beats in both ATK and DEF: ruling TD6) and
the observable state (ruling T12; its layout is ``strategies.tosk.view``); this
kernel turns
each candidate into a feature vector, scores it with the strategy's weights and
picks the best, or samples a softmax when the strategy has a temperature (the
noise comes from the seat's own random stream). Nothing here knows the rules:
the costs, attack and defence of each candidate come from the engine.
"""

import numpy as np

from kernels.contract import Side, refuse
from kernels.jit import leaf, njit
from kernels.rng import gumbel
from strategies.tosk.view import (
    I_CAPACITY,
    I_HEAL_PER_CARD,
    I_MAX_HAND,
    I_MY_HAND,
    I_MY_HP,
    I_OPP_ATK_SUM,
    I_OPP_DEF_SUM,
    I_OPP_HP,
    I_OPP_REVEALS,
    I_START_HP,
)
from strategies.weights import weight_vector

# --- features of a play candidate -----------------------------------------
PLAY_FEATURES = (
    ("atk", "attack of the play"),
    ("def", "defence of the play"),
    ("cost", "stamina spent"),
    ("unspent", "stamina left unspent (cards drawn next recover)"),
    ("cards", "cards played"),
    ("draw", "cards this play lets you draw (unspent stamina, hand room)"),
    ("dmg_est", "expected damage: max(0, ATK - expected opponent DEF)"),
    ("block_est", "expected damage blocked: min(DEF, expected opponent ATK)"),
    ("lethal", "1 if the expected damage reaches the opponent's HP"),
    ("hurt_def", "DEF scaled by how hurt you are (1 - HP/start)"),
    ("press_atk", "ATK scaled by how hurt the opponent is (1 - HP/start)"),
    ("wasted", "techniques played with no action to boost"),
    ("empty", "1 for playing nothing"),
    ("exposed", "expected damage taken: max(0, expected opponent ATK - DEF)"),
)
NF = len(PLAY_FEATURES)

# --- features of a heal candidate (discard h hand cards to heal) -------------
HEAL_FEATURES = (
    ("gain", "HP restored"),
    ("cards", "cards discarded to heal"),
    ("hand_loss", "cards fewer in hand after the draw than without healing"),
    ("urgent_gain", "HP restored scaled by the share of HP lost"),
    ("keep_lost", "keep value of the discarded cards"),
)
NH = len(HEAL_FEATURES)

# --- how much a strategy wants to keep a card (chooses heal discards) --------
KEEP_FEATURES = (
    ("atk", "the card's ATK pips"),
    ("def", "the card's DEF pips"),
    ("technique", "1 for a technique (J, Q, K)"),
    ("cost", "the card's stamina cost"),
)
NK = len(KEEP_FEATURES)

# --- parameter vector layout -------------------------------------------------
P_PLAY = 0
P_HEAL = P_PLAY + NF
P_KEEP = P_HEAL + NH
P_TEMP_PLAY = P_KEEP + NK
P_TEMP_HEAL = P_TEMP_PLAY + 1
P_PRIOR_ATK = P_TEMP_HEAL + 1
P_PRIOR_DEF = P_PRIOR_ATK + 1
P_PRIOR_WEIGHT = P_PRIOR_DEF + 1
P_FORBIDDEN = P_PRIOR_WEIGHT + 1  # bit mask of rank indices the strategy may not play
N_PARAMS = P_FORBIDDEN + 1

SCALARS = {
    "temperature": (P_TEMP_PLAY, "softmax temperature of the play choice (0 = best play)"),
    "heal_temperature": (P_TEMP_HEAL, "softmax temperature of the heal choice"),
    "prior_atk": (P_PRIOR_ATK, "expected opponent ATK before any reveal"),
    "prior_def": (P_PRIOR_DEF, "expected opponent DEF before any reveal"),
    "prior_weight": (
        P_PRIOR_WEIGHT,
        "rounds' worth of weight on the prior; small = adapts to the opponent's reveals",
    ),
}
SECTIONS = {
    "play": (P_PLAY, PLAY_FEATURES),
    "heal": (P_HEAL, HEAL_FEATURES),
    "keep": (P_KEEP, KEEP_FEATURES),
}


def encode_strategy(spec: dict, side: Side) -> np.ndarray:
    """Turn a validated strategy table into the kernel's parameter vector.

    ``spec`` has optional sections ``play``, ``heal``, ``keep`` (feature name →
    weight) and the scalars in :data:`SCALARS`; unknown names are the config
    loader's job to refuse. ``side.forbidden`` is a bit mask of rank indices
    (restricted play); Tosk has no loadouts or decks.
    """
    refuse("Tosk", side, "loadout", "deck", "n_cards")
    p = weight_vector(
        spec, N_PARAMS, SECTIONS, SCALARS, {P_PRIOR_ATK: 3.0, P_PRIOR_DEF: 2.0, P_PRIOR_WEIGHT: 1e9}
    )
    p[P_FORBIDDEN] = float(side.forbidden)
    return p


@leaf
def keep_value(params, atk, dfn, is_tech, cost):
    """How much the strategy wants to keep a card in hand."""
    return (
        params[P_KEEP] * atk
        + params[P_KEEP + 1] * dfn
        + params[P_KEEP + 2] * is_tech
        + params[P_KEEP + 3] * cost
    )


@njit(inline="always")
def play_context(w, info):
    """The per-decision constants of the play score (``play_score``), from
    the strategy ``w`` and the observable state ``info``: expected opponent
    ATK and DEF, how hurt each side is, hand room, temperature, capacity,
    the opponent's HP, and whether to add each term ``play_score`` may skip."""
    start = info[I_START_HP]
    pw = w[P_PRIOR_WEIGHT]
    nrev = info[I_OPP_REVEALS]
    opp_atk = (w[P_PRIOR_ATK] * pw + info[I_OPP_ATK_SUM]) / (pw + nrev)
    opp_def = (w[P_PRIOR_DEF] * pw + info[I_OPP_DEF_SUM]) / (pw + nrev)
    hurt = 1.0 - info[I_MY_HP] / start
    opp_hurt = 1.0 - info[I_OPP_HP] / start
    room = info[I_MAX_HAND] - info[I_MY_HAND]
    # A term whose weight is 0 adds a zero when its feature is finite, which
    # every feature is when these are: play_score then skips the term (the
    # score is the same but for the sign of a zero, which no comparison
    # sees). The costlier terms only; a strategy leaves most weights at 0.
    finite = np.isfinite(opp_atk + opp_def + hurt + opp_hurt)
    return (
        opp_atk,
        opp_def,
        hurt,
        opp_hurt,
        room,
        w[P_TEMP_PLAY],
        info[I_CAPACITY],
        info[I_OPP_HP],
        w[9] != 0.0 or not finite,
        w[10] != 0.0 or not finite,
        w[13] != 0.0 or not finite,
        w[3] != 0.0 or w[4] != 0.0 or not finite,
    )


# ``min``/``max`` of two numbers as Python defines them (the first unless the
# second is strictly smaller / larger), written out. numba 0.68 left the
# builtins inside play_score as calls to out-of-line functions (seen in a perf
# profile of the decision loop: each call spills the live floats), which cost
# the decisions about 7% (245 -> 228 ns a decision replayed, the same choices).
@njit(inline="always")
def fmin(a, b):
    return b if b < a else a


@njit(inline="always")
def fmax(a, b):
    return b if b > a else a


@njit(inline="always")
def play_score(w, ctx, atk, dfn, cost, cards, wasted, noise):
    """The score of one candidate play (``atk``, ``dfn``, ``cost``, ``cards``,
    ``wasted`` as floats) under the context of :func:`play_context` (which
    says which zero-weight terms to skip); with a positive temperature it
    adds the candidate's Gumbel noise, one draw from ``noise``. Candidates
    must be scored in the order they are offered."""
    opp_atk, opp_def, hurt, opp_hurt, room, temp, cap, opp_hp, u9, u10, u13, u34 = ctx
    unspent = cap - cost
    draw = fmin(unspent, room + cards)
    dmg = fmax(0.0, atk - opp_def)
    s = w[0] * atk + w[1] * dfn + w[2] * cost
    if u34:
        s = s + w[3] * unspent + w[4] * cards
    s = s + w[5] * draw + w[6] * dmg + w[7] * fmin(dfn, opp_atk)
    if u9:
        s += w[9] * dfn * hurt
    if u10:
        s += w[10] * atk * opp_hurt
    s += w[11] * wasted
    if u13:
        s += w[13] * fmax(0.0, opp_atk - dfn)
    if dmg >= opp_hp:
        s += w[8]
    if cards == 0:
        s += w[12]
    if temp > 0.0:
        s += temp * gumbel(noise)
    return s


@leaf
def choose_play(params, info, c_atk, c_def, c_cost, c_cards, c_wasted, n_cand, noise):
    """Index of the chosen candidate play among the first ``n_cand``.

    ``c_*`` describe each legal candidate (computed by the engine); ``info`` is
    the observable state. Each candidate is scored by :func:`play_score`; with
    a positive temperature the choice samples the softmax of the scores
    (Gumbel arg-max on the seat's ``noise`` stream); otherwise the first best
    candidate wins. The engine's game loop scores its candidates as it
    enumerates them (``sims.tosk.choose_from_hand``, the same scores in the
    same order); this is its reference.
    """
    ctx = play_context(params, info)
    best = 0
    best_score = -np.inf
    for k in range(n_cand):
        s = play_score(params, ctx, c_atk[k], c_def[k], c_cost[k], c_cards[k], c_wasted[k], noise)
        if s > best_score:
            best_score = s
            best = k
    return best


@leaf
def choose_heal(params, info, hand_after, unspent, keep_sorted, h_max, noise):
    """How many hand cards to discard for healing (0..h_max).

    ``keep_sorted`` holds the keep values of the hand cards in ascending order:
    healing discards the h least wanted. ``hand_after`` is the hand size after
    the play, ``unspent`` the stamina left for the draw.
    """
    w = params
    lost = info[I_START_HP] - info[I_MY_HP]
    lost_share = lost / info[I_START_HP]
    per = info[I_HEAL_PER_CARD]
    temp = w[P_TEMP_HEAL]
    room0 = info[I_MAX_HAND] - hand_after
    kept0 = hand_after + min(unspent, room0)
    best = 0
    best_score = -np.inf
    keep_lost = 0.0
    for h in range(h_max + 1):
        if h > 0:
            keep_lost += keep_sorted[h - 1]
        gain = fmin(h * per, lost)
        kept = hand_after - h + fmin(unspent, room0 + h)
        s = (
            w[P_HEAL] * gain
            + w[P_HEAL + 1] * h
            + w[P_HEAL + 2] * (kept0 - kept)
            + w[P_HEAL + 3] * gain * lost_share
            + w[P_HEAL + 4] * keep_lost
        )
        if temp > 0.0:
            s += temp * gumbel(noise)
        if s > best_score:
            best_score = s
            best = h
    return best
