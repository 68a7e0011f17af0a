"""Four-suits RPG strategy kernel: scores every legal choice of a Struggle.

A strategy is a named weight set (``strategies/suits/*.toml``). For each
decision the engine (``sims.suits``) lists the legal candidates and writes one
feature row per candidate (what the rules say the candidate would do: its card
value, whether it meets the attack, the damage it would leave); this kernel
scores each row with the strategy's weights and plays the best one, or samples
the softmax when the strategy has a temperature (Gumbel arg-max on the seat's
own noise stream). Nothing here knows a rule.

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

from kernels.jit import leaf
from kernels.rng import gumbel
from strategies.weights import weight_vector

ATTACK_FEATURES = (
    ("value", "card value of the attack / 14 (a Difficult pair: its highest card)"),
    (
        "p_win",
        (
            "chance that the defender's hand holds no card of at least this value "
            "(a Difficult pair: its lower card, which must beat the answer too; from the "
            "cards it has not discarded)"
        ),
    ),
    ("likely", "1 if p_win >= win_at"),
    ("joker", "1 if the play uses a Joker"),
    ("pair", "1 for a Difficult pair (struggle_suits only)"),
    ("decline", "1 for declining to attack this turn (no card is played), 0 for every attack"),
)
DEFEND_FEATURES = (
    ("answer", "1 for an answer with cards, 0 for no answer"),
    (
        "wins",
        (
            "1 if the answer stops the attack (a tie goes to the defender; a Difficult pair "
            "must meet it with both cards)"
        ),
    ),
    ("value", "card value of the answer / 14 (a Difficult pair: its highest card; 0 for none)"),
    ("damage", "damage the answer leaves / 14"),
    ("joker", "1 if the answer uses a Joker"),
    ("pair", "1 for a Difficult pair (struggle_suits only)"),
)
DAMAGE_FEATURES = (  # the score of discarding from the hand; the deck's top card scores 0
    ("hand", "1 (a bias: positive prefers the hand)"),
    ("value", "value of the lowest card in hand / 14"),
    ("hand_n", "cards in hand / hand size"),
    ("deck_n", "cards left in the deck / 54"),
)
INITIATIVE_FEATURES = (
    ("order", "how early the card acts: suit order (Spades, Diamonds, Clubs, Hearts) then value"),
    ("value", "card value / 14"),
    ("joker", "1 for a Joker"),
)
NA, ND, NG, NI = (
    len(ATTACK_FEATURES),
    len(DEFEND_FEATURES),
    len(DAMAGE_FEATURES),
    len(INITIATIVE_FEATURES),
)
NF = max(NA, ND, NG, NI)  # width of the engine's feature rows

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


def encode_strategy(spec: dict, forbidden_ranks: int = 0) -> np.ndarray:
    """Turn a validated strategy table into the kernel's parameter vector.

    The four-suits RPG has no restricted play (no card is special), so
    ``forbidden_ranks`` must be 0.
    """
    if forbidden_ranks:
        raise ValueError("the four-suits RPG has no restricted play")
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
