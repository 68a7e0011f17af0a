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
