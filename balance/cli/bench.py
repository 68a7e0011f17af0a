"""``balance bench``: speed and memory figures of every game's engine and of
the report. A game with figures of its own registers its own ``bench <game>``
(its commands module's ``register_bench``); the others get the standard one,
with the pairing and game count of ``configs/<game>/cli.toml`` ``[bench]``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from balance.cli.options import JsonOpt, ResultsOpt
from balance.cli.output import bench_played, show_bench
from balance.registry import Game


def add_bench(bench_app: typer.Typer, game: Game, defaults: dict) -> None:
    """The standard ``balance bench <game>``."""
    plan = defaults.get("bench", {})
    a = str(plan.get("a", defaults["strategy"]))
    b = str(plan.get("b", defaults["strategy"]))

    @bench_app.command(game.name)
    def bench_cmd(
        n: Annotated[int, typer.Option("-n", help="Games for the threaded timings.")] = int(
            plan.get("games", 1_000_000)
        ),
        as_json: JsonOpt = False,
    ):
        """Games/s at 1 and 2 threads, numba vs pure Python, compile time, memory."""
        from balance import bench

        show_bench(
            bench.bench_game(game.name, n, a=a, b=b), as_json, bench_played(n, f"{a} vs {b}")
        )


def bench_report_cmd(results: ResultsOpt = None, as_json: JsonOpt = False):
    """Seconds to build the default study's report from the store (target < 10 s)."""
    from balance import bench

    show_bench(
        bench.bench_report(results),
        as_json,
        "built the study's report from the store 5 times in fresh processes, into a "
        "temporary folder; nothing simulated or kept",
    )


def bench_scaling_cmd(
    game: Annotated[
        str | None,
        typer.Option("--game", help="The game to time (default: the first registered)."),
    ] = None,
    n: Annotated[int, typer.Option("-n", help="Games per timed run.")] = 1_000_000,
    results: ResultsOpt = None,
    as_json: JsonOpt = False,
):
    """Games/s on the local executor and on 1 and 2 Dask workers here (overhead
    stated; target at most 10% for runs of 10^6 games), and the stored study's
    projected simulation time on N workers."""
    from balance import bench
    from balance.cli.game import cli_defaults
    from balance.registry import GAMES, get_game

    home = get_game(game) if game is not None else next(iter(GAMES.values()))
    defaults = cli_defaults(home)
    plan = defaults.get("bench", {})
    a = str(plan.get("a", defaults["strategy"]))
    b = str(plan.get("b", defaults["strategy"]))
    show_bench(
        bench.bench_scaling(home.name, a, b, n, results),
        as_json,
        f"timed {n:,} games of {home.name} {a} vs {b} twice on each executor (local at 1 and "
        "2 threads, a LocalCluster of 1 and 2 workers), in memory; nothing stored",
    )


def bench_summary_cmd(
    ctx: typer.Context,
    against: Annotated[
        str | None,
        typer.Option(
            "--against",
            help="A git revision of this checkout to time in turn with this one "
            "(e.g. main~5), giving each figure as a ratio measured in the same run.",
        ),
    ] = None,
    games: Annotated[
        list[str] | None,
        typer.Option("--game", help="Time only this game (repeatable; default: every game)."),
    ] = None,
    as_json: JsonOpt = False,
):
    """Speed and memory benchmarks. Without a command: every engine's games/s
    and rounds/s at 1 and 2 threads (with --against, as ratios to an older
    revision timed in the same run), two 1-thread processes side by side (the
    machine's ceiling for thread scaling), where each game's time goes, the
    cold and cached start, and the first command with cached kernels."""
    if ctx.invoked_subcommand is not None:
        return
    from balance import bench
    from balance.registry import GAMES, get_game

    names = [get_game(g).name for g in games] if games else list(GAMES)
    show_bench(
        bench.bench_summary(names, against),
        as_json,
        "timed each engine's [bench] pairing (configs/<game>/cli.toml) in fresh processes, "
        + (
            f"{bench.AGAINST_ROUNDS} rounds, each at 1 and 2 threads in turn with revision "
            f"{against}, then as two 1-thread processes at once"
            if against
            else "twice at each thread count and twice as two 1-thread processes at once"
        )
        + "; compiled every engine into an empty temporary cache; nothing stored",
    )


def bench_study_cmd(
    scale: Annotated[
        float, typer.Option("--scale", help="The study's --scale (1: the README's main job).")
    ] = 1.0,
    against: Annotated[
        str | None,
        typer.Option(
            "--against",
            help="A git revision of this checkout (e.g. main) whose study is timed in turn "
            "with this one: each wall time as a ratio measured in the same run.",
        ),
    ] = None,
    as_json: JsonOpt = False,
):
    """Where the main job's time goes: `balance study` cold (empty store and numba
    cache, as on a fresh clone) and warm (every run stored), by phase: compile,
    simulate, store reads and writes (per run), tables, charts, pages, searches."""
    import sys

    from balance import bench
    from balance.cli.study import SCALE_MAX, SCALE_MIN
    from balance.errors import UserError

    if not SCALE_MIN <= scale <= SCALE_MAX:
        raise UserError(f"--scale must be between {SCALE_MIN:g} and {SCALE_MAX:g}, got {scale}")
    show_bench(
        bench.bench_study(
            scale, against, say=lambda line: print(line, file=sys.stderr, flush=True)
        ),
        as_json,
        f"ran `balance study --scale {scale:g}` in fresh processes, cold (an empty store and "
        "numba cache) then warm (the same store and cache)"
        + (
            f", in turn with revision {against} (warm twice each, in ABBA order: the means)"
            if against
            else ""
        )
        + "; in a temporary folder, nothing kept",
    )


def bench_oracle_cmd(
    population: Annotated[
        list[Path],
        typer.Argument(
            help="Test populations: each a folder with population.toml and known.toml (a known "
            "response found by a long search), e.g. tests/data/oracle/trisk."
        ),
    ],
    seeds: Annotated[int, typer.Option("--seeds", help="Searches per population, seeds 1..N.")] = 5,
    results: ResultsOpt = None,
    as_json: JsonOpt = False,
):
    """The best-response oracle's power: from a weak population that a known response
    beats by far, how often the default oracle finds a response within 2 points of
    it (its miss rate over seeds, with a 95% interval)."""
    from balance import equilibrium as E
    from balance.cli.output import echo_json, table

    if not 1 <= seeds <= 1000:
        from balance.errors import UserError

        raise UserError(f"--seeds must be between 1 and 1000, got {seeds}")
    out = []
    for folder in population:
        res = E.oracle_power(folder, range(1, seeds + 1), results=results, progress=False)
        out.append(res)
        if not as_json:
            table(
                f"{res['game']}: the default oracle against {', '.join(res['population'])} "
                f"(known response {res['known']}; a miss: more than "
                f"{100 * res['margin']:g} points short of it on the same fresh deals)",
                [
                    "seed",
                    "found",
                    "gain [95% CI]",
                    "known's gain",
                    "short by",
                    "evaluations",
                    "seconds",
                    "hit",
                ],
                [
                    [
                        str(r["seed"]),
                        r["found"],
                        f"{100 * r['gain']['mean']:+.1f} [{100 * r['gain']['lo']:+.1f}, "
                        f"{100 * r['gain']['hi']:+.1f}]",
                        f"{100 * r['known_gain']['mean']:+.1f}",
                        f"{100 * r['short']:+.1f}",
                        f"{r['evaluations']:,}",
                        f"{r['seconds']:.0f}",
                        "yes" if r["hit"] else "MISS",
                    ]
                    for r in res["rows"]
                ],
            )
            typer.echo(
                f"{res['game']}: missed {res['misses']} of {len(res['rows'])} "
                f"({100 * res['miss_rate']:.0f}% [{100 * res['miss_lo']:.0f}, "
                f"{100 * res['miss_hi']:.0f}], 95% Clopper–Pearson)"
            )
    if as_json:
        echo_json(out)
