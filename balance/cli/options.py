"""Command-line options shared by every ``balance`` sub-app (Typer ``Annotated``
types), defined once so that each command file declares them the same way."""

from __future__ import annotations

from typing import Annotated

import typer

from balance.paths import dir_option

JsonOpt = Annotated[bool, typer.Option("--json", help="Print the same data as JSON.")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed: the same seed gives the same deals.")]
ThreadsOpt = Annotated[
    int | None,
    typer.Option(
        "--threads", help="Numba threads (default: all cores). Results do not depend on it."
    ),
]
ResultsOpt = Annotated[
    str | None,
    typer.Option(
        "--results",
        help="Results store (default: $BALANCE_RESULTS or ./results).",
        callback=dir_option("--results"),
    ),
]
VariantOpt = Annotated[
    str,
    typer.Option(
        "--variant",
        "-v",
        help="Rules: base, variants by name or unique prefix, paths to .toml files with a "
        "[rules] table, and key=value overrides, joined by + (e.g. force+./mine.toml).",
    ),
]
RuleOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--rule",
        help="Override one rule, key=value (repeatable; applied to every rule set named). "
        "`balance <game> rules` lists the keys, defaults and bounds.",
    ),
]
BatchOpt = Annotated[int, typer.Option("--batch-size", help="Games per batch (even).")]
PrecisionOpt = Annotated[
    float | None,
    typer.Option(
        "--precision",
        help="Run until every win-rate 95% CI is within ±P (e.g. 0.01 = ±1 point); "
        "-n is then the pilot size.",
    ),
]
MaxGamesOpt = Annotated[
    int, typer.Option("--max-games", help="Upper bound on games per match with --precision.")
]
VerdictOpt = Annotated[
    str | None,
    typer.Option(
        "--verdict-config",
        help="A TOML file of balance-verdict thresholds overriding configs/verdict.toml "
        "and the game's own (docs/verdicts.md lists the keys).",
    ),
]
StrategiesOpt = Annotated[
    str, typer.Option("--strategies", help="Comma-separated strategies, or 'all'.")
]

ExecutorOpt = Annotated[
    str | None,
    typer.Option(
        "--executor",
        help="Where the games are played: local (this process, the default), dask (a "
        "running Dask scheduler: --scheduler or $BALANCE_SCHEDULER, which alone also "
        "chooses dask) or dask-local (a LocalCluster of --workers processes here). "
        "Results do not depend on it.",
    ),
]
SchedulerOpt = Annotated[
    str | None,
    typer.Option(
        "--scheduler",
        help="The Dask scheduler's address for --executor dask, e.g. tcp://host:8786 "
        "(default: $BALANCE_SCHEDULER).",
    ),
]
WorkersOpt = Annotated[
    int | None,
    typer.Option(
        "--workers",
        help="Worker processes for --executor dask-local (default: one per core; "
        "each gets cores/workers numba threads, or --threads).",
    ),
]


def plays_games(fn):
    """Give a command that plays games ``--executor``, ``--scheduler`` and
    ``--workers``, and play its games on that executor
    (:func:`balance.executor.opened`) for the whole command."""
    import functools
    import inspect

    sig = inspect.signature(fn, eval_str=True)
    extra = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=ann)
        for name, ann in (
            ("executor", ExecutorOpt),
            ("scheduler", SchedulerOpt),
            ("workers", WorkersOpt),
        )
    ]

    @functools.wraps(fn)
    def command(*args, executor=None, scheduler=None, workers=None, **kwargs):
        from balance import executor as executors

        with executors.opened(executor, scheduler, workers, kwargs.get("threads")):
            return fn(*args, **kwargs)

    command.__signature__ = sig.replace(parameters=[*sig.parameters.values(), *extra])
    command.__annotations__ = {
        p.name: p.annotation for p in command.__signature__.parameters.values()
    }
    return command
