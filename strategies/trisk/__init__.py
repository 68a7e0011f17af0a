"""Trisk strategy kernel: scores every legal choice from features.

A strategy is a named weight set (``strategies/trisk/*.toml``). The engine
(``sims.trisk.engine``) enumerates the legal candidates of each decision and
describes each one by a feature vector (the columns: ``strategies.trisk.view``)
computed from what the deciding player may know (its own hand, everything in
play, both Primals; never the opponent's hand or either deck order). This
kernel scores a candidate with the
strategy's weights and plays the best one, or samples the softmax when the
strategy has a temperature, from the seat's own noise stream. Nothing here
decides a rule.

Decisions (TOML section): the three Primal actions ``[primal]``; each step of
the Creation phase (create, upgrade, cast, use an ability, or stop) ``[play]``;
whether each creation attacks ``[attack]``; which creation blocks each
attacker ``[block]``. Scalars: ``temperature`` (softmax of every choice; 0 =
best), ``go_first`` (the toss winner starts when ≥ 0.5).

Side vector (``encode_strategy(spec, side)``, float64; ``side`` a
``kernels.contract.Side`` with the deck, the set's rows and the forbidden rows):
``[primal_row, D, NC, W0, card rows (D), forbidden flags (NC), weights ...]``
with ``W0`` the offset of the weights (``P_*`` are relative to it).
"""

import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from kernels.contract import Side
from kernels.jit import leaf
from kernels.rng import uniform
from strategies.trisk.view import (
    ATTACK_FEATURES,
    BLOCK_FEATURES,
    NAT,
    NBL,
    NPL,
    NPR,
    PLAY_FEATURES,
    PRIMAL_FEATURES,
)
from strategies.weights import weight_vector

P_PRIMAL = 0
P_PLAY = P_PRIMAL + NPR
P_ATTACK = P_PLAY + NPL
P_BLOCK = P_ATTACK + NAT
P_SCALAR = P_BLOCK + NBL
P_TEMP, P_GO_FIRST = P_SCALAR, P_SCALAR + 1
N_PARAMS = P_SCALAR + 2

SECTIONS = {
    "primal": (P_PRIMAL, PRIMAL_FEATURES),
    "play": (P_PLAY, PLAY_FEATURES),
    "attack": (P_ATTACK, ATTACK_FEATURES),
    "block": (P_BLOCK, BLOCK_FEATURES),
}
SCALARS = {
    "temperature": (P_TEMP, "softmax temperature of every choice (0 = always the best)"),
    "go_first": (P_GO_FIRST, "the toss winner chooses to start when >= 0.5 (default 1)"),
}
_DEFAULTS = {P_GO_FIRST: 1.0}

# side-vector header
S_PRIMAL, S_DECK_N, S_NC, S_W0, S_CARDS = 0, 1, 2, 3, 4


def encode_strategy(spec: dict, side: Side) -> np.ndarray:
    """The side vector: the deck header, its card rows, the forbidden flags and
    the strategy's weights (see the module docstring). ``side.deck`` has
    ``primal`` (a row) and ``cards`` (rows), or is None (no deck: a header
    only, for tests of the kernel); ``side.n_cards`` is the rows of its card
    set; ``side.forbidden`` is a bit mask of card rows (restricted play). Trisk
    has no loadouts."""
    if side.loadout:
        raise ValueError("Trisk has no loadouts")
    deck, n_cards, forbidden = side.deck, int(side.n_cards), int(side.forbidden)
    w = weight_vector(spec, N_PARAMS, SECTIONS, SCALARS, _DEFAULTS)
    cards = [] if deck is None else [int(c) for c in deck.cards]
    primal = -1 if deck is None else int(deck.primal)
    forb = [float((forbidden >> r) & 1) for r in range(n_cards)]
    w0 = S_CARDS + len(cards) + n_cards
    head = [float(primal), float(len(cards)), float(n_cards), float(w0)]
    return np.concatenate([np.array(head + [float(c) for c in cards] + forb), w])


# ``score`` keeps a row's nonzero features as the bits of one 64-bit word
if max(NPR, NPL, NAT, NBL) > 64:
    raise ValueError("a decision has more than 64 features: score's bit mask cannot hold them")


@leaf(inline="always")
def score(w, base, feats, k, nf):
    """Weighted sum of row ``k`` of ``feats`` (nf <= 64 features) with weights
    at ``base``, over the nonzero features in column order: a zero feature adds
    nothing, whatever its weight (an infinite weight times 0 would be NaN).
    The same sum, bit for bit, as adding ``w * x if x != 0 else 0.0`` over
    every column (the sum starts at +0.0 and so is never -0.0, and adding
    +0.0 to it changes nothing), but its chain of dependent additions is as
    long as the row's nonzero features (a handful of a play's 27), not ``nf``:
    a bit mask of the nonzero columns first, then one addition per set bit."""
    mask = np.uint64(0)
    for f in range(nf):
        mask |= np.uint64(feats[k, f] != 0.0) << np.uint64(f)
    s = 0.0
    while mask != 0:
        f = trailing_zeros(mask)
        s += w[base + f] * feats[k, f]
        mask &= mask - np.uint64(1)
    return s


@leaf
def pick(scores, n, temp, noise):
    """The index of the chosen one of ``n`` scored candidates: the first best
    when ``temp`` is 0, else a draw from softmax(score / temp) by inverting one
    uniform from the seat's noise stream. Overwrites ``scores``."""
    best = 0
    top = scores[0]  # scores[best], kept in a register: the loop's only dependency
    for i in range(1, n):
        v = scores[i]
        if v > top:
            top = v
            best = i
    if temp > 0.0 and n > 1:
        tot = 0.0
        for i in range(n):
            e = np.exp((scores[i] - top) / temp)
            scores[i] = e
            tot += e
        u = uniform(noise) * tot
        acc = 0.0
        for i in range(n):
            if scores[i] > 0.0:
                acc += scores[i]
                best = i
                if u < acc:
                    break
    return best


@leaf
def yes(s, temp, noise):
    """A yes/no choice whose 'yes' scores ``s`` and 'no' scores 0."""
    if temp > 0.0:
        return uniform(noise) < 1.0 / (1.0 + np.exp(-s / temp))
    return s > 0.0
