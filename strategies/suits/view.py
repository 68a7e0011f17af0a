"""What the four-suits RPG engine hands a strategy: the columns of the
feature rows.

For each decision ``sims.suits`` lists the legal candidates and writes one row
per candidate, one column per feature below, in this order (what the rules say
the candidate would do); the kernel (``strategies.suits``) scores the rows with
the weights of the matching TOML section. Both import the tables from here, so
the columns are written once.
"""

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
