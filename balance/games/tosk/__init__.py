"""Tosk, the two-player stamina duel: the rules calculator (``balance tosk
play``) and the card-value command (``balance tosk cards``)."""

from balance.registry import Game, register

GAME = register(
    Game(
        name="tosk",
        title="Tosk",
        engine="sims.tosk",
        strategies="strategies.tosk",
        summary="the two-player stamina duel.",
        rulings="T",
        commands="balance.games.tosk.commands",
        order=1,
    )
)
