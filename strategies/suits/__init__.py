"""Four-suits RPG strategy kernel: scores every legal choice of a Struggle.

A strategy is a named weight set (``strategies/suits/*.toml``). For each
decision the engine (``sims.suits``) lists the legal candidates and writes one
feature row per candidate (what the rules say the candidate would do: its card
value, whether it meets the attack, the damage it would leave; the columns are
``strategies.suits.view``); this kernel scores each row with the strategy's
weights and plays the best one, or samples the softmax when the strategy has
a temperature (Gumbel arg-max on the seat's own noise stream). Nothing here
knows a rule.

Decisions (and their TOML section):

- ``[attack]``: which card (or, with ``struggle_suits``, which Difficult pair)
  to attack with, or whether to decline to attack this turn (S4: "you may
  take one action"; the ``decline`` feature is 1 on the one candidate that
  plays nothing, 0 on every attack; SD11);
- ``[defend]``: how to answer an attack: with a card, a pair, or not at all
  (the ``answer`` feature is 0 for "no answer": the attack then meets a card
  value of 0);
- ``[damage]``: for each point of damage, whether to discard the lowest card
  of the hand (score of the hand) or the top card of the deck (score 0);
- ``[initiative]``: which card to play as the initiative card.

The scripted policies of the issue are weight sets: "attack with the highest
card" is ``value = 1``; "the lowest that wins" is ``likely = 10, value = -1``
(the lowest card whose chance of beating the answer is at least ``win_at``,
else the lowest card); "defend" is ``wins = 10, value = -1, damage = -2``
(the lowest card that meets the attack, else the highest, to cut the damage);
"absorb" is ``answer = -10``; damage "from the hand" is ``hand = 10``, "from
the deck" ``hand = -10``. Every scripted policy sets ``decline = -10``: it
never declines (a hand that is not played is never refilled, so a character
that declined once would face the same choice again; two that always decline
only reach the round cap, a draw). ``random`` declines as often as it picks
any one attack.
"""

import numpy as np

from kernels.contract import Side, refuse
from kernels.jit import leaf
from kernels.rng import gumbel
from strategies.suits.view import (
    ATTACK_FEATURES,
    DAMAGE_FEATURES,
    DEFEND_FEATURES,
    INITIATIVE_FEATURES,
    NA,
    ND,
    NG,
    NI,
)
from strategies.weights import weight_vector

P_ATTACK = 0
P_DEFEND = P_ATTACK + NA
P_DAMAGE = P_DEFEND + ND
P_INITIATIVE = P_DAMAGE + NG
P_TEMP = P_INITIATIVE + NI
P_WIN_AT = P_TEMP + 1
N_PARAMS = P_WIN_AT + 1

SCALARS = {
    "temperature": (P_TEMP, "softmax temperature of every choice (0 = always the best score)"),
    "win_at": (P_WIN_AT, "the chance of winning an attack must reach to count as likely"),
}
SECTIONS = {
    "attack": (P_ATTACK, ATTACK_FEATURES),
    "defend": (P_DEFEND, DEFEND_FEATURES),
    "damage": (P_DAMAGE, DAMAGE_FEATURES),
    "initiative": (P_INITIATIVE, INITIATIVE_FEATURES),
}


def encode_strategy(spec: dict, side: Side) -> np.ndarray:
    """Turn a validated strategy table into the kernel's parameter vector.

    The four-suits RPG has no restricted play (no card is special), no
    loadouts and no decks: ``side`` must be blank (``Side()``).
    """
    refuse("the four-suits RPG", side, "forbidden", "loadout", "deck", "n_cards")
    return weight_vector(spec, N_PARAMS, SECTIONS, SCALARS, {P_WIN_AT: 0.5})


@leaf
def pick(params, base, nf, feats, n, noise):
    """Index of the best of the ``n`` candidate rows of ``feats`` (``nf``
    features each) under the weights at ``params[base:]``; ties go to the
    first row. With a temperature, each score gets ``temperature × Gumbel``
    noise from the seat's stream (a softmax sample)."""
    temp = params[P_TEMP]
    best = 0
    best_s = -np.inf
    for i in range(n):
        s = 0.0
        for k in range(nf):
            s += params[base + k] * feats[i, k]
        if temp > 0.0:
            s += temp * gumbel(noise)
        if s > best_s:
            best_s = s
            best = i
    return best


@leaf
def uses_odds(params):
    """True when the attack weighs ``p_win`` or ``likely``: only then does the
    engine work the odds out."""
    return params[P_ATTACK + 1] != 0.0 or params[P_ATTACK + 2] != 0.0


@leaf
def damage_from_hand(params, lowest, hand_n, hand_size, deck_n, noise):
    """True to discard the lowest card in hand for one point of damage, False
    to discard the top card of the deck (both sources must be non-empty)."""
    s = (
        params[P_DAMAGE]
        + params[P_DAMAGE + 1] * lowest * (1.0 / 14.0)
        + params[P_DAMAGE + 2] * hand_n / hand_size
        + params[P_DAMAGE + 3] * deck_n * (1.0 / 54.0)
    )
    temp = params[P_TEMP]
    if temp > 0.0:
        s += temp * (gumbel(noise) - gumbel(noise))
    return s > 0.0
