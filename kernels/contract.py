"""The engine contract, written down: what every engine module
(``sims.<game>``) and every strategy module (``strategies.<game>``) exposes,
with the same names and signatures in every game.

The Python side (``balance``) reaches a game only through this surface (via
``balance.registry``), so the runner, the store, the statistics and the pages
never special-case a game. ``tests/core/test_conformance.py`` checks it, and the
properties every engine must have, for each registered game.

Numbers only cross into numba: a rules vector (``encode_rules``), two strategy
vectors (``encode_strategy``) and ``(seed, first_game, n_games)``; per-game
arrays come back. Nothing here is compiled; it is plain Python below
``sims`` and ``strategies``.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np


class Rule(NamedTuple):
    """One rules key of a game: its name, default, bounds and meaning.

    An engine declares its rules once, as ``RULES``: a tuple of ``Rule`` in
    the order of its rules vector. ``lo``/``hi`` bound an integer rule (both
    inclusive; the config loader refuses values outside them); they are None
    for a bool and for a string (e.g. Trisk's ``card_set``, a name that is
    not in the int vector). ``doc`` says what the rule means and which ruling
    decides it; ``balance <game> variants --json`` lists the base values."""

    name: str
    default: int | bool | str
    lo: int | None
    hi: int | None
    doc: str


def rule_tables(rules: tuple[Rule, ...]) -> tuple[tuple[str, ...], dict, dict]:
    """``(RULE_FIELDS, DEFAULT_RULES, RULE_LIMITS)`` derived from ``RULES``:
    the names in vector order, name → default, and name → (lo, hi) for every
    integer rule."""
    fields = tuple(r.name for r in rules)
    defaults = {r.name: r.default for r in rules}
    limits = {r.name: (r.lo, r.hi) for r in rules if r.lo is not None}
    return fields, defaults, limits


class Side(NamedTuple):
    """What one seat plays besides its strategy's weights.

    ``forbidden``: restricted play, a bit mask the game defines (Tosk: rank
    indices; Trisk: card rows of the set), drawn but never played;
    ``loadout``: games with loadouts (Clash of Steel), an index into the
    engine's ``ALL_LOADOUTS``; ``deck``: games with decks (Trisk), an object
    with ``primal`` (a card row) and ``cards`` (card rows); ``n_cards``: the
    rows of the card set the deck comes from. A game reads the fields it has
    and refuses a field it cannot play (e.g. ``forbidden`` in the four-suits
    RPG)."""

    forbidden: int = 0
    loadout: int = 0
    deck: object = None
    n_cards: int = 0


_WHAT = {
    "forbidden": "restricted play",
    "loadout": "loadouts",
    "deck": "decks",
    "n_cards": "card sets",
}


def refuse(game: str, side: Side, *fields: str) -> None:
    """Raise ValueError if ``side`` sets any of ``fields`` (a game names the
    fields it does not have): ``"<game> has no restricted play"``."""
    for f in fields:
        value = getattr(side, f)
        if (value is not None) if f == "deck" else int(value) != 0:
            raise ValueError(f"{game} has no {_WHAT[f]}")


PAIR_STREAMS = ("seat", "side")  # the values an engine's PAIR_STREAMS may take


@runtime_checkable
class Engine(Protocol):
    """The module surface of an engine (``sims.<game>``); the methods below
    are module-level functions, written here with ``self`` only because a
    Protocol needs it.

    Optional, used where present: ``check_rules(cfg) -> list[str]`` (what is
    wrong with a whole ruleset whose every key is within its bounds, one
    sentence each, empty when nothing is: e.g. a combination that leaves a deck
    empty; :func:`balance.config.resolve_variant` refuses a ruleset it
    faults, before any game), ``METRICS`` (name → histogram size of a
    per-game score-trace metric ``simulate`` returns, kept exactly by the
    runner), ``EVENT_COUNTS`` (name → (label, unit) of a per-game count the
    pages show), ``N_CARDS`` (per-card counters: ``simulate`` then returns
    ``seen_a``/``seen_b``/``played_a``/``played_b`` card masks)."""

    GAME: str  # the registry's name of the game
    VERSION: str  # bumped whenever simulated play changes (a run key includes it)
    RULES: tuple[Rule, ...]  # every rules key, once, in vector order
    RULE_FIELDS: tuple[str, ...]  # rule_tables(RULES)[0]
    DEFAULT_RULES: dict  # rule_tables(RULES)[1]: the base ruleset
    RULE_LIMITS: dict  # rule_tables(RULES)[2]
    # the names of simulate's ``reason`` codes; a game stopped by the length
    # cap (a draw) ends with "round_cap", which the tables count as such
    END_NAMES: tuple[str, ...]
    # Where the random streams of a seat-swapped pair follow a strategy:
    # "seat": the two games of deal d are one game played twice with the
    # strategies swapped (every stream is keyed by the seat), so a strategy
    # against itself scores exactly 1/2 in every pair; "side": each side's
    # streams follow it into the other seat (Trisk: a deck is shuffled alike in
    # both seats, so a deck that differs in one card is paired card by card),
    # so a strategy against itself scores 1/2 in expectation only.
    PAIR_STREAMS: str

    def encode_rules(self, cfg: dict, table=None) -> np.ndarray:
        """The int64 rules vector of a resolved ruleset (``RULE_FIELDS``
        order). ``table``: a game with card sets takes the set's card table
        (it travels in the vector) and refuses None; any other game refuses a
        table."""

    def simulate(self, rules, strat_a, strat_b, seed, first_game, n_games) -> dict:
        """Play games ``first_game .. first_game + n_games`` of ``seed``, in
        seat-swapped pairs (game ``2d``: A in seat 0 on deal ``d``; ``2d + 1``:
        A in seat 1), so both counts must be even (ValueError otherwise).
        Game *i* depends on ``(seed, i)`` alone: not on the batch or threads.
        Returns int arrays, one entry per game, at least ``winner_seat`` (-1
        a draw), ``a_seat``, ``a_points`` (A's half points: 2 win, 1 draw, 0
        loss), ``rounds`` (the game's length, at most ``max_length``) and
        ``reason`` (an index into ``END_NAMES``)."""

    def trace(
        self, rules, strat_a, strat_b, seed, game, names=("A", "B"), card_names=None
    ) -> list[dict]:
        """The events of game ``game`` (the same game ``simulate`` plays),
        each a dict with a readable ``text``. ``names`` label A and B;
        ``card_names`` label the rows of the card set (games with card sets;
        others ignore it). The last event says how the game ended:
        ``winner_seat`` (1 or 2, None for a draw), ``rounds`` and ``reason``
        as ``simulate`` has them (``reason`` by name)."""

    def max_length(self, rules: dict) -> int:
        """The longest game under ``rules`` (rules keys; missing ones take
        their defaults): the width of the runner's game-length histogram."""

    def catalogue(self) -> list[dict]:
        """The game's pieces (cards, loadouts, ...), one dict each, for
        tables and docs."""


@runtime_checkable
class StrategyModule(Protocol):
    """The module surface of a strategy kernel (``strategies.<game>``).

    ``SECTIONS``: TOML section → (first index in the weights, ((feature,
    help), ...)); ``SCALARS``: TOML key → (index, help). The config loader
    checks a strategy file against them."""

    SECTIONS: dict
    SCALARS: dict

    def encode_strategy(self, spec: dict, side: Side) -> np.ndarray:
        """The float64 strategy vector the engine reads: the weights of a
        validated strategy table ``spec`` and what ``side`` plays."""
