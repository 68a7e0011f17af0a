"""Trisk strategy kernel: scores every legal choice from features.

A strategy is a named weight set (``strategies/trisk/*.toml``). The engine
(``sims.trisk.engine``) enumerates the legal candidates of each decision and
describes each one by a feature vector computed from what the deciding player
may know (its own hand, everything in play, both Primals; never the opponent's
hand or either deck order). This kernel scores a candidate with the
strategy's weights and plays the best one, or samples the softmax when the
strategy has a temperature, from the seat's own noise stream. Nothing here
decides a rule.

Decisions (TOML section): the three Primal actions ``[primal]``; each step of
the Creation phase (create, upgrade, cast, use an ability, or stop) ``[play]``;
whether each creation attacks ``[attack]``; which creation blocks each
attacker ``[block]``. Scalars: ``temperature`` (softmax of every choice; 0 =
best), ``go_first`` (the toss winner starts when ≥ 0.5).

Side vector (``encode_strategy(spec, deck, n_cards, forbidden)``, float64):
``[primal_row, D, NC, W0, card rows (D), forbidden flags (NC), weights ...]``
with ``W0`` the offset of the weights (``P_*`` are relative to it).
"""

import numpy as np

from kernels.jit import leaf
from kernels.rng import uniform
from strategies.weights import weight_vector

PRIMAL_FEATURES = (
    ("meditate", "1 for Meditate"),
    ("muster", "1 for Muster"),
    ("train", "1 for Train"),
    ("level_gain", "levels a Train adds to its creation"),
    ("unlock_attack", "the Train unlocks the creation's Attack"),
    ("unlock_ability", "abilities the Train unlocks"),
    ("enables_upgrade", "the Train lets an Upgrade in hand go onto the creation"),
    ("primal_low", "Meditate x levels the Primal still lacks (10 - level)"),
    ("primal_attack", "the Meditate unlocks the Primal's Attack"),
    ("hand_room", "Muster x free hand places / hand limit"),
    ("hand_empty", "Muster with an empty hand"),
    ("wasted", "the action does nothing (full hand or empty deck, level already 10)"),
    ("train_ap", "Train x the creation's AP"),
    ("creations", "Meditate x my creations in play"),
    ("nothing_to_play", "Muster when no card in hand can be played"),
)
PLAY_FEATURES = (
    ("stop", "1 for ending the Creation phase"),
    ("create", "1 for creating a creation"),
    ("upgrade", "1 for an Upgrade"),
    ("blessing", "1 for casting a Blessing"),
    ("curse", "1 for casting a Curse"),
    ("ritual", "1 for casting a Ritual"),
    ("ability", "1 for using an active ability"),
    ("ap_gain", "AP added to my side (a creation's AP; an Upgrade's AP gain)"),
    ("hp_gain", "HP added to my side"),
    ("board_gap", "Create x (enemy creations - my creations)"),
    ("dmg_creature", "expected damage to enemy creations (up to what they have left)"),
    ("kills", "expected enemy creations destroyed"),
    ("dmg_primal", "expected damage to the enemy Primal"),
    ("disable", "expected Feared/Blinded/Asleep tokens on enemy creations that have AP"),
    ("poison", "expected Poisoned tokens on enemy cards"),
    ("silence", "expected Silenced tokens on enemies with active abilities"),
    ("heal", "expected damage healed on my cards"),
    ("levels", "expected levels gained by my cards"),
    ("draw", "expected cards drawn"),
    ("cleanse", "expected status tokens removed from my cards"),
    ("flying", "Flying tokens given to my creations that can attack and lack Flying"),
    ("self_sleep", "Asleep tokens put on my own cards"),
    ("sacrifice", "AP + HP left of the creation a Ritual sacrifices"),
    ("lost_attack", "AP of a creation that could attack this turn and uses an ability"),
    ("target_ap", "AP of the enemy creation targeted"),
    ("wasted", "the play has no effect"),
    ("lethal", "the play is expected to bring the enemy Primal down"),
)
ATTACK_FEATURES = (  # score of attacking (holding back scores 0)
    ("bias", "every attack"),
    ("ap", "the attacker's AP"),
    ("safe", "no enemy creation can block it"),
    ("blockers", "enemy creations that can block it"),
    ("primal", "1 for the Primal"),
    ("lethal", "my unblockable damage reaches the enemy Primal's HP left"),
    ("behind", "(my Primal's damage - the enemy Primal's) / 10"),
)
BLOCK_FEATURES = (
    ("none", "1 for not blocking this attacker"),
    ("prevented", "damage to my Primal the block prevents"),
    ("dies", "the blocker is destroyed"),
    ("blocker_value", "AP + HP left of a blocker that is destroyed"),
    ("danger", "prevented x 1 if the unblocked attacks would bring my Primal down"),
    ("absorb", "damage the blocker takes and survives"),
)
NPR, NPL, NAT, NBL = (
    len(PRIMAL_FEATURES),
    len(PLAY_FEATURES),
    len(ATTACK_FEATURES),
    len(BLOCK_FEATURES),
)

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


def encode_strategy(spec: dict, deck=None, n_cards: int = 0, forbidden: int = 0) -> np.ndarray:
    """The side vector: the deck header, its card rows, the forbidden flags and
    the strategy's weights (see the module docstring). ``deck`` has ``primal``
    (a row) and ``cards`` (rows); ``forbidden`` is a bit mask of card rows."""
    w = weight_vector(spec, N_PARAMS, SECTIONS, SCALARS, _DEFAULTS)
    cards = [] if deck is None else [int(c) for c in deck.cards]
    primal = -1 if deck is None else int(deck.primal)
    forb = [float((int(forbidden) >> r) & 1) for r in range(int(n_cards))]
    w0 = S_CARDS + len(cards) + int(n_cards)
    head = [float(primal), float(len(cards)), float(n_cards), float(w0)]
    return np.concatenate([np.array(head + [float(c) for c in cards] + forb), w])


@leaf
def score(w, base, feats, k, nf):
    """Weighted sum of row ``k`` of ``feats`` (nf features) with weights at ``base``."""
    s = 0.0
    for f in range(nf):
        x = feats[k, f]
        if x != 0.0:
            s += w[base + f] * x
    return s


@leaf
def pick(scores, n, temp, noise):
    """The index of the chosen one of ``n`` scored candidates: the first best
    when ``temp`` is 0, else a draw from softmax(score / temp) by inverting one
    uniform from the seat's noise stream. Overwrites ``scores``."""
    best = 0
    for i in range(1, n):
        if scores[i] > scores[best]:
            best = i
    if temp > 0.0 and n > 1:
        top = scores[best]
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
