"""Game registry: maps game names to their engine and strategy modules.

Every engine exposes the same surface (``GAME``, ``VERSION``, ``RULE_FIELDS``,
``DEFAULT_RULES``, ``RULE_LIMITS``, ``encode_rules``, ``simulate``, ``trace``,
``catalogue``), so the runner, statistics and reports never special-case a
game. Modules are imported on first use, keeping ``balance --help`` instant.
"""

from dataclasses import dataclass
from functools import lru_cache
from importlib import import_module

from balance.errors import UserError


@dataclass(frozen=True)
class Game:
    name: str
    title: str
    engine: str  # module path of the rules engine
    strategies: str  # module path of the strategy kernel
    rulings: str  # prefix of the rulings that apply (e.g. "T")

    def engine_module(self):
        return _module(self.engine)

    def strategy_module(self):
        return _module(self.strategies)


@lru_cache(maxsize=None)
def _module(path: str):
    return import_module(path)


GAMES = {
    "tosk": Game("tosk", "Tosk", "sims.tosk", "strategies.tosk", "T"),
    "clash": Game("clash", "Clash of Steel", "sims.clash", "strategies.clash", "C"),
}


def get_game(name: str) -> Game:
    try:
        return GAMES[name]
    except KeyError:
        raise UserError(f"unknown game '{name}'; allowed: {', '.join(GAMES)}") from None
