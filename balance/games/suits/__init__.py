"""The four-suits RPG: Task odds (exact and simulated), the struggle policies,
their commands, charts and page."""

from balance.registry import Game, register

GAME = register(
    Game(
        name="suits",
        title="The four-suits RPG",
        engine="sims.suits",
        strategies="strategies.suits",
        summary="Task odds and Struggles of one deck against another.",
        rulings="S",
        commands="balance.games.suits.commands",
        study_pages="balance.games.suits.study:pages",
        study_keys=("tasks_hands", "tasks_characters", "struggle_games"),
        order=4,
    )
)
