"""Game registry: every game, its engine, its strategies and its extras.

A game lives in its own home, ``balance/games/<game>/``, whose package
declares ``GAME = register(Game(...))``: the engine and strategy modules (``sims/`` and
``strategies/``), its config and strategy folders, and optional hooks for the
extras only it has (commands, study pages, a card-set loader). The registry
finds every such package on first use; a test (or a plug-in) may add one with
:func:`register`. The core (CLI, runner, study, pages, report) loops over
:data:`GAMES` and the hooks and never names a game.

Every engine exposes the same surface (written in ``kernels/contract.py``,
checked by ``tests/core/test_conformance.py``), so the
runner, statistics and reports never special-case a game. Engine modules are
imported on first use, keeping ``balance --help`` quick.
"""

from __future__ import annotations

import pkgutil
from dataclasses import dataclass
from functools import cache
from importlib import import_module
from pathlib import Path

from balance import resources
from balance.errors import UserError

ROOT = resources.root()  # the checkout, or site-packages in an installed wheel


@dataclass(frozen=True)
class Game:
    """One game: where its parts live and which extras it has.

    Hooks are module paths (``"balance.games.trisk.commands"``) or
    ``"module:function"``; each is optional.
    """

    name: str
    title: str
    engine: str  # module path of the rules engine (sims/)
    strategies: str  # module path of the strategy kernel (strategies/)
    rulings: str  # prefix of the rulings that apply (e.g. "T")
    summary: str = ""  # one line for ``balance <game> --help``
    # the module of a game whose ruleset names a card set (rules key
    # "card_set"): ``load_card_set(name, rules)``, ``load_decks(card_set)``,
    # ``bind_deck(card_set, deck, where)``
    card_sets: str | None = None
    # the module of the game's own commands: ``register(app)`` adds them to
    # ``balance <game>``; ``register_bench(bench_app)``, if present, replaces
    # the standard ``balance bench <game>``
    commands: str | None = None
    # "module:function" adding the game's own pages to its study page:
    # ``function(out, plan, scale, threads, results, store_only) -> [link]``
    study_pages: str | None = None
    study_keys: tuple[str, ...] = ()  # the keys of study.toml the hook reads
    # "module:function" returning the metrics a repair of this game may target
    # besides the core's: ``{name: balance.repair.GameMetric}``
    repair_metrics: str | None = None
    # "module:function" returning the keys a repair may move besides the rules
    # (a ``balance.repair.GameMoves``: Trisk's card fields)
    repair_moves: str | None = None
    order: int = 100  # place in the study, the index and ``balance --help``
    config_dir: Path | None = None  # default: configs/<name>
    strategy_dir: Path | None = None  # default: strategies/<name>
    rulings_file: Path | None = None  # the rulings' Markdown; default: docs/rulings.md

    @property
    def configs(self) -> Path:
        """The folder of the game's rulesets, variants and plans."""
        from balance import resources

        return self.config_dir or resources.configs() / self.name

    @property
    def strategy_files(self) -> Path:
        """The folder of the game's named strategies (one TOML each)."""
        from balance import resources

        return self.strategy_dir or resources.strategies() / self.name

    def ruling_lines(self) -> tuple[str, ...]:
        """The rulings in force for this game (its prefix in its rulings file)."""
        from balance.rulings import RULINGS_FILE, rulings

        return rulings(self.rulings, self.rulings_file or RULINGS_FILE)

    def strategy_names(self) -> list[str]:
        """The names of the game's named strategies, sorted."""
        return sorted(p.stem for p in self.strategy_files.glob("*.toml"))

    def engine_module(self):
        watch_compiles()  # from the first engine on, a cold compile says so
        return _module(self.engine)

    def owns_module(self, name: str) -> bool:
        """Whether the module ``name`` is part of this game's engine or strategies."""
        return any(name == m or name.startswith(m + ".") for m in (self.engine, self.strategies))

    def strategy_module(self):
        return _module(self.strategies)

    def card_set_module(self):
        return _module(self.card_sets)

    def card_set(self, name: str, rules: dict | None = None):
        """The card set ``name`` (a name or a path) of a game with card sets,
        checked against the ruleset ``rules`` it is played under (when given)."""
        return self.card_set_module().load_card_set(name, rules)

    def commands_module(self):
        return None if self.commands is None else _module(self.commands)

    def hook(self, spec: str | None):
        """The function a ``"module:function"`` hook names (None: no hook)."""
        if spec is None:
            return None
        mod, fn = spec.split(":")
        return getattr(_module(mod), fn)


@cache
def _module(path: str):
    return import_module(path)


GAMES: dict[str, Game] = {}


def register(game: Game) -> Game:
    """Add ``game`` to the registry (keeping :data:`GAMES` in ``order``)."""
    if game.name in GAMES and GAMES[game.name] != game:
        raise ValueError(f"a different game named '{game.name}' is registered already")
    GAMES[game.name] = game
    ordered = sorted(GAMES.values(), key=lambda g: (g.order, g.name))
    GAMES.clear()
    GAMES.update((g.name, g) for g in ordered)
    return game


def unregister(name: str) -> None:
    """Remove a game added by :func:`register` (tests)."""
    GAMES.pop(name, None)


def _discover() -> None:
    """Import every package under ``balance/games/``; each registers its game
    (``GAME = register(Game(...))``). A package being imported right now (the
    one whose import brought the registry in) registers itself when it is done."""
    import balance.games as homes

    for info in pkgutil.iter_modules(homes.__path__):
        if info.ispkg:
            import_module(f"{homes.__name__}.{info.name}")


_discover()


# ---- the compile notice ----------------------------------------------------
# numba compiles a kernel the first time it is called, unless its on-disk cache
# (kernels/jit.py: one folder per hash of the kernel sources) holds it: then it
# is loaded in a fraction of a second. A cold compile of an engine takes up to
# a minute, silent; numba announces it ("numba:compile", fired only on a cache
# miss, never for a cached load), so the notice is printed exactly when the
# game's kernels are not in the cache, before the wait.

_announced: set[str] = set()  # what has been announced in this process
# seconds this process spent compiling kernels, by game ("" for shared kernels):
# the outermost compile only (a kernel's callees compile inside it)
compile_seconds: dict[str, float] = {}
# each kernel's own compile seconds (its callees' compiles left out) and how
# many copies (type signatures) were compiled, by "module.name": where a
# cold start's time goes
kernel_compile_seconds: dict[str, list] = {}


def compile_notice(module: str) -> str | None:
    """The line announcing a cold compile of a kernel of ``module``, or None
    if it was said already in this process (once per game; kernels no game
    owns, the shared ones, once, and only if nothing was announced before)."""
    game = next((g.name for g in GAMES.values() if g.owns_module(module)), None)
    if game is None:
        if _announced:
            return None
        _announced.add("")
        return "compiling the simulation kernels (first run only; about a minute)"
    if game in _announced:
        return None
    _announced.add(game)
    return f"compiling the {game} engine (first run only; about a minute)"


def _owner(dispatcher) -> str:
    module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
    return next((g.name for g in GAMES.values() if g.owns_module(module)), "")


def _on_compile(dispatcher) -> None:
    import sys

    line = compile_notice(getattr(getattr(dispatcher, "py_func", None), "__module__", "") or "")
    if line is not None:
        print(line, file=sys.stderr, flush=True)


@cache
def watch_compiles() -> None:
    """Install (once) numba's compile listener that prints :func:`compile_notice`
    on stderr when a kernel is compiled rather than loaded from the cache."""
    import threading
    import time

    from numba.core import event

    local = threading.local()  # the compiles under way in this thread, outermost first

    class _Notice(event.Listener):
        def on_start(self, ev):
            dispatcher = (ev.data or {}).get("dispatcher")
            _on_compile(dispatcher)
            stack = local.__dict__.setdefault("stack", [])
            fn = getattr(dispatcher, "py_func", None)
            name = f"{fn.__module__}.{fn.__qualname__}" if fn is not None else "?"
            stack.append([_owner(dispatcher), time.perf_counter(), 0.0, name])

        def on_end(self, ev):
            stack = local.__dict__.get("stack")
            if not stack:
                return
            game, t0, callees, name = stack.pop()
            took = time.perf_counter() - t0
            own = kernel_compile_seconds.setdefault(name, [0.0, 0])
            own[0] += took - callees
            own[1] += 1
            if stack:
                stack[-1][2] += took
            else:
                compile_seconds[game] = compile_seconds.get(game, 0.0) + took

    event.register("numba:compile", _Notice())


def get_game(name: str) -> Game:
    try:
        return GAMES[name]
    except KeyError:
        raise UserError(f"unknown game '{name}'; allowed: {', '.join(GAMES)}") from None
