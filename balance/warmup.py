"""The engines' first run: compile every engine a command needs at once, in
parallel processes, before anything is played.

numba compiles a kernel on its first call unless its on-disk cache (one
folder per hash of the kernel sources, ``kernels/jit.py``) holds it. A cold
compile is single-threaded and takes 20–50 s an engine, so a study of four
games compiled one after the other would wait minutes. :func:`ensure` starts
one process per cold engine (as many at a time as there are cores, longest
first), each of which compiles its engine's kernels into the shared cache and
says so with a marker file; the command itself then loads every kernel from
the cache in well under a second and compiles nothing.

An engine is warm when its marker exists for this cache folder, this CPU
and this source tree (numba's cache entries are specific to the CPU model
and its features, and to the path of each kernel's source file). A
stale marker costs nothing but a compile in the command's own process, which
numba does as before. The warm-up plays two games of the game's base rules
and first study strategy through the runner (the engine's ``simulate`` and
the runner's shared counting kernels) and calls the engine's optional
``warm_up(rules, strat)`` for the kernels its own analyses use.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from functools import cache
from pathlib import Path


@cache
def _where() -> str:
    """This CPU and this source tree: numba keeps a kernel's cache entries
    per CPU model and features, and per path of its source file (two clones
    of the same sources share the cache folder, not its entries)."""
    import hashlib

    from llvmlite import binding

    from balance.registry import ROOT

    return hashlib.sha256(
        "|".join(
            (binding.get_host_cpu_name(), binding.get_host_cpu_features().flatten(), str(ROOT))
        ).encode()
    ).hexdigest()[:12]


def marker(game: str) -> Path:
    """The file saying ``game``'s kernels are in the cache for this CPU and
    this source tree."""
    import numba

    import kernels.jit  # noqa: F401  (sets numba's cache folder)

    return Path(numba.config.CACHE_DIR) / "warm" / f"{game}-{_where()}"


def is_warm(game: str) -> bool:
    return marker(game).exists()


def warm_here(game: str) -> float:
    """Compile (or load) ``game``'s kernels in this process and write its
    marker; the seconds it took."""
    from balance import config, runner
    from balance.registry import get_game

    t = time.perf_counter()
    home = get_game(game)
    eng = home.engine_module()
    rules = config.resolve_variant(game, "base")
    plan = config.load_study(game)
    strategy = config.load_strategy(game, plan["strategies"][0])
    runner.simulate_run(runner.RunSpec(rules, strategy, strategy, 2, 1))
    warm_up = getattr(eng, "warm_up", None)
    if warm_up is not None:
        warm_up(rules.vector(), strategy.vector())
    m = marker(game)
    m.parent.mkdir(parents=True, exist_ok=True)
    m.write_text(f"{time.perf_counter() - t:.2f}\n", encoding="utf-8")
    return time.perf_counter() - t


def ensure(games: list[str], say=None) -> dict[str, float]:
    """Compile the cold engines of ``games`` (:func:`compile_in_processes`);
    {} when all are warm."""
    cold = [g for g in games if not is_warm(g)]
    return compile_in_processes(cold, say) if cold else {}


def compile_in_processes(
    games: list[str], say=None, env: dict | None = None, costliest: dict | None = None
) -> dict[str, float]:
    """Compile the engines of ``games`` in parallel processes, as many at a
    time as there are cores, the longest first; the wall seconds each took.
    ``say(line)`` is told what happens; ``env`` adds to the processes'
    environment (a ``NUMBA_CACHE_DIR``); ``costliest``, if given, gets each
    engine's :func:`costliest_kernels`. A warm-up that fails is reported
    and skipped: the command then compiles in its own process."""
    if not games:
        return {}
    workers = max(1, min(len(games), os.cpu_count() or 1))
    if say:
        say(
            f"compiling the {', '.join(games)} engine{'s' if len(games) > 1 else ''} in "
            f"{workers} parallel process{'es' if workers > 1 else ''} (first run only)"
        )
    t0 = time.perf_counter()
    child_env = {**os.environ, **(env or {})}

    def one(game: str) -> tuple[str, float, str]:
        t = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-m", "balance.warmup", game],
            capture_output=True,
            text=True,
            env=child_env,
        )
        err = "" if out.returncode == 0 else (out.stderr.strip().splitlines() or ["?"])[-1]
        if costliest is not None and not err:
            try:
                costliest[game] = json.loads(out.stdout.strip().splitlines()[-1])[
                    "costliest_kernels"
                ]
            except (IndexError, ValueError, KeyError):
                pass
        return game, time.perf_counter() - t, err

    took = {}
    with ThreadPoolExecutor(workers) as pool:
        for done in as_completed([pool.submit(one, g) for g in _longest_first(games)]):
            game, seconds, err = done.result()
            took[game] = seconds
            if say:
                say(
                    f"compiled the {game} engine in {seconds:.0f} s"
                    if not err
                    else f"the {game} engine's warm-up failed ({err}); it compiles on first use"
                )
    if say and len(games) > 1:
        say(f"compiled {len(games)} engines in {time.perf_counter() - t0:.0f} s")
    return took


def _kernel_count(game: str) -> int:
    """How many numba kernels a game's engine and strategy modules define: a
    stand-in for its compile time (each is compiled at least once), so that
    the longest compiles start first. The engines' compile times follow it
    (Trisk 61 kernels, 42 s; Clash 46, 32 s; the RPG 33, 15 s; Tosk 31,
    16 s: the last two about equal since neither compiles a parallel loop),
    which their source sizes do not (Tosk's sources are larger than the
    RPG's)."""
    from balance.errors import UserError
    from balance.registry import get_game

    try:
        home = get_game(game)
    except UserError:
        return 0  # its warm-up fails at once, and says why
    return len(kernels_of(home.engine, home.strategies))


def kernels_of(*modules: str) -> list:
    """The numba dispatchers that ``modules`` (a package: with all its
    submodules) define, each once; a ``kernels.jit.Chunked`` counts as its
    kernel. Kernels they only import from elsewhere are left out."""
    import importlib
    import pkgutil

    from numba.core.dispatcher import Dispatcher

    names = []
    for module in modules:
        mod = importlib.import_module(module)
        names.append(mod.__name__)
        if hasattr(mod, "__path__"):  # a package: its submodules too
            for info in pkgutil.walk_packages(mod.__path__, mod.__name__ + "."):
                importlib.import_module(info.name)
                names.append(info.name)
    found = {}
    for name in names:
        for obj in vars(sys.modules[name]).values():
            obj = getattr(obj, "kernel", obj)  # a kernels.jit.Chunked
            if isinstance(obj, Dispatcher) and obj.py_func.__module__ in names:
                found[id(obj)] = obj
    return list(found.values())


def _longest_first(games: list[str]) -> list[str]:
    return sorted(games, key=_kernel_count, reverse=True)


def costliest_kernels(k: int = 8) -> list[list]:
    """The ``k`` kernels this process spent most seconds compiling, each as
    [module.name, own seconds (callees left out), copies compiled]."""
    from balance.registry import kernel_compile_seconds

    top = sorted(kernel_compile_seconds.items(), key=lambda kv: -kv[1][0])[:k]
    return [[name, round(s, 2), n] for name, (s, n) in top]


if __name__ == "__main__":
    import json

    from balance.registry import watch_compiles

    watch_compiles()
    seconds = warm_here(sys.argv[1])
    print(json.dumps({"seconds": seconds, "costliest_kernels": costliest_kernels()}))
