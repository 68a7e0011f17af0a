"""``balance study`` (the default study of every game) and ``balance report``
(pages from stored runs, nothing simulated)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from balance.cli.options import ResultsOpt, ThreadsOpt, plays_games
from balance.errors import UserError
from balance.paths import writable_dir, writable_file


def register(app: typer.Typer) -> None:
    app.command("report")(report_cmd)
    app.command("study")(plays_games(study_cmd))


def report_cmd(
    runs: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Stored run folders, or folders holding runs (e.g. results/tosk). Default: the latest `balance study`."
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="With RUNS: the .html file to write (default reports/report.html). Without: the report folder (default reports/).",
        ),
    ] = None,
    title: Annotated[str | None, typer.Option("--title", help="Page title (with RUNS).")] = None,
    where: Annotated[
        list[str] | None,
        typer.Option(
            "--where",
            help="Only runs where KEY=VALUE (repeatable; one key's values are "
            "alternatives, different keys must all hold). Keys: game, variant, "
            "strategy, command, experiment (an id prefix), seed.",
        ),
    ] = None,
    pool: Annotated[
        bool,
        typer.Option(
            "--pool",
            help="One section pooling the runs of every experiment (the page names "
            "them; a strategy name with different specs is refused).",
        ),
    ] = False,
    list_: Annotated[
        bool,
        typer.Option(
            "--list",
            "--experiments",
            help="Print the experiments in the store (or RUNS): id, command, date, "
            "runs, games; write nothing. A run is counted when its files match their "
            "checksums (a report also checks that its counts add up).",
        ),
    ] = False,
    force: Annotated[
        bool,
        typer.Option("--force", help="With RUNS: replace a page another experiment wrote."),
    ] = False,
    results: ResultsOpt = None,
    games: Annotated[
        list[str] | None,
        typer.Option(
            "--game",
            help="Without RUNS: only this game's study pages (repeatable; default: every "
            "game), e.g. after `balance study --game`.",
        ),
    ] = None,
):
    """Build a self-contained HTML report from stored runs (nothing is simulated).

    Given a store folder (e.g. results/tosk), the page has one section per
    experiment (the command and plan that made the runs, recorded in the
    store), never pooling runs of different experiments; --pool, or run
    folders named one by one, pool them into one section that says so.
    Without RUNS: the latest `balance study` (with --where, --pool or --list:
    the whole store)."""
    import gc

    from balance import meta, pages, study, tables  # noqa: F401  (loaded before the freeze)

    # Everything imported so far lives as long as the process: keeping it out
    # of the collector's sight makes the full collections statsmodels'
    # multipletests asks for cheap (0.4 s of a report otherwise).
    gc.freeze()

    if games and (runs or where or pool or list_):
        raise UserError(
            "--game picks the study's games (without RUNS); for stored runs use --where game=NAME"
        )
    if not runs and (where or pool or list_):
        from balance.store import results_dir

        root = results_dir(results)
        if not root.is_dir():
            raise UserError(f"no results store at '{root}'; run a command first (or name RUNS)")
        runs = [root]
    if list_:
        _list_experiments(list(runs))
        return
    if runs:
        from balance.paths import check_replace, experiment_id, record_written
        from balance.runner import command_line

        out = writable_file(out or Path("reports/report.html"), "--out")
        # a page of chosen runs is its own experiment: it never replaces a
        # study page (reports/index.html, reports/tosk.html) or another report
        experiment = experiment_id(
            "report", sorted(map(str, runs)), sorted(where or []), pool, title
        )
        check_replace(out, experiment, "--out", force)
        path, skipped = pages.report_from_runs(
            list(runs), out, results, title, where=where, pool=pool
        )
        record_written(path, experiment, command_line())
        if skipped:
            typer.echo(
                f"skipped {len(skipped)} run(s) (damaged, or made by another version), "
                f"e.g. {skipped[0]}",
                err=True,
            )
    else:
        if out is not None and out.suffix.lower() in (".html", ".htm"):
            raise UserError(
                "without RUNS the report is the study's folder of pages; "
                "give -o a folder (e.g. reports), or name runs to write one file"
            )
        from balance.registry import get_game

        names = list(dict.fromkeys(get_game(g).name for g in games)) if games else None
        # the games' parts side by side, one process per core, as the study builds them
        path = study.report_study(
            writable_dir(out or Path("reports"), "--out"), results, processes=None, games=names
        )
    from balance.store import results_dir

    typer.echo(f"report: {path} (from the store {results_dir(results)}; nothing simulated)")


def _list_experiments(paths: list[Path]) -> None:
    from balance import fmt, pages
    from balance.cli.output import table

    rows = pages.list_experiments(paths)
    if not rows:
        raise UserError(f"no stored runs or experiments under {', '.join(map(str, paths))}")
    table(
        "Experiments in the store (balance report --where experiment=ID shows one)",
        ["id", "game", "command", "date", "runs", "games", "command line"],
        [
            [
                r["id"] if not r["id"].startswith("cmd-") else f"{r['id']} (no record)",
                r["game"],
                r["command"],
                r["date"][:16].replace("T", " "),
                fmt.fmt_int(r["runs"])
                + (
                    f" of {fmt.fmt_int(r['recorded'])}"
                    if r["recorded"] not in (0, r["runs"])
                    else ""
                ),
                fmt.fmt_int(r["games"]),
                r["command_line"],
            ]
            for r in rows
        ],
    )


# --scale: below 1/1000 of the plan a study's precision targets pass ±50 points and
# decide nothing; above 1000× it is years of play on one machine
SCALE_MIN, SCALE_MAX = 0.001, 1000.0


def study_cmd(
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder for the report, tables and charts.")
    ] = Path("reports"),
    scale: Annotated[
        float, typer.Option("--scale", help="Multiply every game count (e.g. 4 halves each CI).")
    ] = 1.0,
    threads: ThreadsOpt = None,
    results: ResultsOpt = None,
    processes: Annotated[
        int | None,
        typer.Option(
            "--processes",
            help="Worker processes the games' parts run in at once (default: one per "
            "core, or $BALANCE_STUDY_PROCESSES); 1 runs them one after another here.",
        ),
    ] = None,
    games: Annotated[
        list[str] | None,
        typer.Option("--game", help="Study only this game (repeatable; default: every game)."),
    ] = None,
):
    """The default study of every game: writes reports/index.html."""
    from balance import runner, study
    from balance.registry import get_game

    if not SCALE_MIN <= scale <= SCALE_MAX:
        raise UserError(
            f"--scale must be between {SCALE_MIN:g} and {SCALE_MAX:g} (1 is the "
            f"default plan, 4 halves every CI), got {scale}"
        )
    names = list(dict.fromkeys(get_game(g).name for g in games)) if games else None
    study.study_processes(processes, 1)  # a bad --processes is refused before anything runs
    writable_dir(out, "--out")
    with runner.tally() as played:
        path = study.run_study(
            out, scale=scale, threads=threads, results=results, processes=processes, games=names
        )
    typer.echo(f"played: {played.line()}")
    typer.echo(f"report: {path} (tables and charts under {out}/<game>/)")
