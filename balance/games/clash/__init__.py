"""Clash of Steel: the loadout matrix, ranges and initiative commands, and the
engine benchmark with its loadout matrix."""

from balance.registry import Game, register

GAME = register(
    Game(
        name="clash",
        title="Clash of Steel",
        engine="sims.clash",
        strategies="strategies.clash",
        summary="the duel of items, stances and stamina bids.",
        rulings="C",
        commands="balance.games.clash.commands",
        repair_metrics="balance.games.clash.repair:repair_metrics",
        order=2,
    )
)
