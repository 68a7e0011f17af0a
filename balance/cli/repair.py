"""``balance <game> repair``: the smallest rules change that meets the
designer's targets (:mod:`balance.repair`, ``docs/repair.md``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from balance.cli.options import JsonOpt, ResultsOpt, SeedOpt, StrategiesOpt, ThreadsOpt, plays_games
from balance.cli.output import done, echo_json, save_figure, table
from balance.errors import UserError
from balance.registry import Game


def add_repair_command(sub: typer.Typer, home: Game, defaults: dict) -> None:
    game = home.name
    standard = ",".join(defaults["strategies"])

    @sub.command("repair")
    @plays_games
    def repair_cmd(
        target: Annotated[
            list[str] | None,
            typer.Option(
                "--target",
                help="A target, e.g. 'draws<=0.02', 'seat_advantage<=1', 'rounds=12±2', "
                "'max_strategy_score<=0.65' (repeatable).",
            ),
        ] = None,
        move: Annotated[
            list[str] | None,
            typer.Option(
                "--move",
                help="A rule that may change and its values: key=LO..HI[:STEP] or "
                "key=V1,V2 (repeatable).",
            ),
        ] = None,
        plan_file: Annotated[
            Path | None,
            typer.Option("--plan", help="A repair plan TOML (targets, moves and the options)."),
        ] = None,
        variant: Annotated[
            str | None, typer.Option("--variant", help="The rules to repair (default base).")
        ] = None,
        strategies: StrategiesOpt = None,
        trials: Annotated[
            int | None, typer.Option("--trials", help="Candidates the search plays (default 40).")
        ] = None,
        games: Annotated[
            int | None,
            typer.Option("--games", help="Games per strategy pair and candidate (default 400)."),
        ] = None,
        verify_games: Annotated[
            int | None,
            typer.Option(
                "--verify-games",
                help="Games per strategy pair on the fresh deals of the verification "
                "(default 2000).",
            ),
        ] = None,
        top: Annotated[
            int | None,
            typer.Option("--top", help="Best candidates of the front verified (default 3)."),
        ] = None,
        seed: SeedOpt = None,
        out: Annotated[
            Path,
            typer.Option("--out", help="Folder for the candidates' variant files."),
        ] = Path("repairs"),
        chart: Annotated[
            Path | None,
            typer.Option(
                "--chart", help="The Pareto chart (.svg/.png; default reports/<game>-repair.svg)."
            ),
        ] = None,
        page: Annotated[
            Path | None,
            typer.Option(
                "--page",
                help="The repair's HTML page (default reports/<game>-repair.html).",
            ),
        ] = None,
        force: Annotated[
            bool,
            typer.Option(
                "--force", help="Replace files another experiment (another plan) wrote there."
            ),
        ] = False,
        threads: ThreadsOpt = None,
        results: ResultsOpt = None,
        as_json: JsonOpt = False,
    ):
        """Search the moves for the smallest change of the rules that meets every
        target (Optuna NSGA-II, resumable from the store), then verify the best
        candidates on fresh deals: each target with its 95% CI, met or not."""
        from balance import repair as rp
        from balance import runner
        from balance.paths import check_replace, record_written, writable_file

        data = rp.load_plan_file(plan_file) if plan_file is not None else {}

        if chart is not None and chart.suffix.lower() not in (".svg", ".png"):
            raise UserError(f"--chart must name an .svg or .png file, got '{chart}'")
        if page is not None and page.suffix.lower() not in (".html", ".htm"):
            raise UserError(f"--page must name an .html file, got '{page}'")
        if out.exists() and not out.is_dir():
            raise UserError(f"--out '{out}' is a file; name a folder")
        flags = {
            "variant": variant,
            "strategies": strategies,
            "trials": trials,
            "games": games,
            "verify_games": verify_games,
            "top": top,
            "seed": seed,
        }
        plan = rp.plan_from(
            game,
            {
                **data,
                **{k: v for k, v in flags.items() if v is not None},
                "targets": [*data.get("targets", []), *(target or [])],
                "moves": [*data.get("moves", []), *(move or [])],
            },
            standard,
        )
        # Files are named per experiment (the plan's identity), so a repair of
        # another plan writes beside this one's instead of over it; a file an
        # explicit path would replace is refused if another experiment wrote it.
        experiment = rp.experiment_tag(plan)
        if chart is None:
            chart = Path("reports") / f"{game}-repair-{experiment}.svg"
        if page is None:
            page = Path("reports") / f"{game}-repair-{experiment}.html"
        writable_file(chart, "--chart")
        writable_file(page, "--page")
        targets = [
            (chart, "--chart"),
            (page, "--page"),
            *((rp.variant_path(out, plan, k), "--out") for k in range(1, plan.top + 1)),
        ]
        for path, option in targets:
            check_replace(path, experiment, option, force)
        with runner.tally() as played:
            res = rp.repair(plan, results=results, threads=threads)
        command = runner.command_line()
        # nothing searched (the unchanged rules fail no target): no variant, no chart
        paths = rp.write_variants(res, out, command) if res.searched else []
        title = str(
            data.get("description")
            or f"{home.title} repair of {plan.variant}: {', '.join(t.text for t in plan.targets)}"
        )
        if res.searched:
            save_figure(rp.front_chart(res, title), chart)
        else:
            chart = None
        rp.write_page(res, page, title, command)
        for path in [*paths, *([chart] if chart else []), page]:
            record_written(path, experiment, command)
        what = f"repair of {plan.variant}: " + played.line()
        if as_json:
            echo_json(rp.result_json(res, paths, chart) | {"page": str(page)})
            done(what, True)
            return
        _print(res, paths, chart, home.title)
        typer.echo(f"page: {page}")
        done(what)


def _print(res, paths, chart, title: str) -> None:
    from balance import config, fmt
    from balance import repair as rp

    plan = res.plan
    keys = [m.key for m in plan.moves]
    if res.searched:
        table(
            f"{title} repair of {plan.variant}: the Pareto front of {len(res.trials)} candidates "
            f"({plan.games:,} games per strategy pair on seed {plan.seed}; these figures only "
            "rank)",
            [*keys, "violation", "change size", *(t.metric for t in plan.targets)],
            [
                [
                    *(config.rule_text(r[k]) for k in keys),
                    f"{r['violation']:.2f}",
                    f"{r['size']:.2f}",
                    *(rp.fmt_value(t, r[t.metric]) for t in plan.targets),
                ]
                for r in res.front.to_dict(orient="records")
            ],
            left=len(keys),
        )
    rows = []
    for k, cand in enumerate(res.verified):
        name = "unchanged" if k == 0 else f"#{k}"
        rows.append(
            [
                name,
                ", ".join(f"{m}={config.rule_text(cand['moved'][m])}" for m in keys),
                *(f"{rp.fmt_check(c)} {c['status']}" for c in cand["targets"]),
                "yes" if cand["meets_all"] else "no",
            ]
        )
    table(
        f"Verified on fresh deals (seed {res.fresh_seed}, {plan.verify_games:,} games per "
        "strategy pair); 95% CIs: met = inside the target, not met = wholly outside",
        ["candidate", "rules", *(t.text for t in plan.targets), "meets every target"],
        rows,
        left=2,
        keep=1,  # the candidate's name whole; its rules wrap at spaces
    )
    _, headline, lines = rp.outcome(res)
    typer.echo(" ".join([headline, *lines]))
    if not res.searched:
        typer.echo("no variant written: no change is proposed")
        return
    typer.echo(
        f"search: {len(res.trials)} trials, {res.evaluated} played now in "
        f"{fmt.fmt_seconds(res.search_s)}; study {res.db} (resumes with the same command)"
    )
    for p in paths:
        typer.echo(f"wrote {p} (a variant like any other: --variant {p})")
    typer.echo(f"chart: {chart}")
