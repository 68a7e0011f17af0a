"""Trisk: its card sets and decks (``cards``), the equal-power test
(``power``), their commands, charts and page."""

from balance.registry import Game, register

GAME = register(
    Game(
        name="trisk",
        title="Trisk",
        engine="sims.trisk",
        strategies="strategies.trisk",
        summary="the card game of Primals, creations and sorceries.",
        rulings="R",
        card_sets="balance.games.trisk.cards",
        commands="balance.games.trisk.commands",
        study_pages="balance.games.trisk.study:pages",
        study_keys=("power_scale", "power_check_strategy"),
        repair_metrics="balance.games.trisk.repair:repair_metrics",
        repair_moves="balance.games.trisk.repair:repair_moves",
        order=3,
    )
)
