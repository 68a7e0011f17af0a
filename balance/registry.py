"""Game registry: maps game names to their engine and strategy modules.

Every engine exposes the same surface (``GAME``, ``VERSION``, ``RULE_FIELDS``,
``DEFAULT_RULES``, ``RULE_LIMITS``, ``encode_rules``, ``simulate``, ``trace``,
``catalogue``, ``max_length``; written in ``kernels/contract.py``,
checked by ``tests/test_conformance.py``),
so the runner, statistics and reports never special-case a game. Modules are imported on first use, keeping ``balance --help`` instant.
"""

from dataclasses import dataclass
from functools import cache
from importlib import import_module

from balance.errors import UserError


@dataclass(frozen=True)
class Game:
    name: str
    title: str
    engine: str  # module path of the rules engine
    strategies: str  # module path of the strategy kernel
    rulings: str  # prefix of the rulings that apply (e.g. "T")
    # games whose ruleset names a card set (rules key "card_set"): "module:function"
    # that loads it by name or path (an object with ``.table`` and ``.digest``)
    card_sets: str | None = None

    def engine_module(self):
        return _module(self.engine)

    def strategy_module(self):
        return _module(self.strategies)

    def card_set(self, name: str, rules: dict | None = None):
        """The card set ``name`` (a name or a path) of a game with card sets,
        checked against the ruleset ``rules`` it is played under (when given)."""
        mod, fn = self.card_sets.split(":")
        return getattr(_module(mod), fn)(name, rules)


@cache
def _module(path: str):
    return import_module(path)


GAMES = {
    "tosk": Game("tosk", "Tosk", "sims.tosk", "strategies.tosk", "T"),
    "clash": Game("clash", "Clash of Steel", "sims.clash", "strategies.clash", "C"),
    "trisk": Game(
        "trisk", "Trisk", "sims.trisk", "strategies.trisk", "R", "balance.trisk_cards:load_card_set"
    ),
    "suits": Game("suits", "The four-suits RPG", "sims.suits", "strategies.suits", "S"),
}


def get_game(name: str) -> Game:
    try:
        return GAMES[name]
    except KeyError:
        raise UserError(f"unknown game '{name}'; allowed: {', '.join(GAMES)}") from None
