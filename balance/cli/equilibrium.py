"""``balance <game> equilibrium``: the meta-game's equilibrium, grown by best
responses (:mod:`balance.equilibrium`, ``docs/equilibrium.md``)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from balance.cli.options import (
    JsonOpt,
    ResultsOpt,
    RuleOpt,
    SeedOpt,
    ThreadsOpt,
    VariantOpt,
    plays_games,
)
from balance.cli.output import done, echo_json, table
from balance.config import with_rules
from balance.errors import UserError
from balance.registry import Game


def _clock(s: float) -> str:
    s = max(0, int(round(s)))
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


def _pts(g: dict) -> str:
    return f"{100 * g['mean']:+.1f} points [{100 * g['lo']:+.1f}, {100 * g['hi']:+.1f}]"


def _pct(d: dict, digits: int = 1) -> str:
    return (
        f"{100 * d['mean']:.{digits}f}% [{100 * d['lo']:.{digits}f}%, {100 * d['hi']:.{digits}f}%]"
    )


def summary_lines(s: dict) -> None:
    """What the command prints: the answer first (is it an equilibrium, how
    exploitable, is one strategy enough, the verdicts under equilibrium play),
    then the mixture, the content and the curve."""
    g = s["exploitability"]
    eps = 100 * s["epsilon"]
    head = f"{s['game']} under the rules '{s['rules']}', at equilibrium (ε = {eps:g} points): "
    if s["status"] == "equilibrium" and g["hi"] < 0:
        head += (
            "an equilibrium within ε is shown — no response found beats the mixture: the "
            f"best the search found loses to it, {_pts(g)}"
        )
    elif s["status"] == "equilibrium":
        head += f"an equilibrium within ε is shown — the best response found gains {_pts(g)}"
    else:
        head += f"NOT shown within ε — the best response found still gains {_pts(g)}"
    typer.echo(head + f" (fresh deals, n = {g['n']:,} deals, {g['games']:,} games)")
    typer.echo(
        f"  ({s['status_text']}; a lower bound on the exploitability: searched {s['searched']})"
    )
    typer.echo(f"dominant strategy: {s['dominant']['status']} — {s['dominant']['text']}")
    pl = s["play"]
    typer.echo(
        "under equilibrium play (both seats drawing from the mixture, fresh deals, "
        f"{pl['games']:,} games on {pl['deals']:,} deals): first seat {_pct(pl['seat_share'])} "
        f"of decided games; {pl['rounds']['mean']:.1f} rounds [{pl['rounds']['lo']:.1f}, "
        f"{pl['rounds']['hi']:.1f}]; draws {_pct(pl['draws'])}; round cap {_pct(pl['round_cap'])}"
    )
    sp, ef = s["support"], s["effective"]
    typer.echo(
        f"strategic diversity: support {sp['value']} [{sp['lo']}, {sp['hi']}], effective number of "
        f"strategies {ef['value']:.2f} [{ef['lo']:.2f}, {ef['hi']:.2f}] "
        f"({s['resamples']} resamples of the deals)"
    )
    rows = []
    for m in s["members"]:
        w = m["worst"]
        rows.append(
            [
                m["name"],
                f"{100 * m['weight']:.1f}% [{100 * m['lo']:.1f}, {100 * m['hi']:.1f}]",
                f"{100 * m['in_support']:.0f}%",
                m["from"],
                f"{100 * w['score']:.1f}% [{100 * w['lo']:.1f}, {100 * w['hi']:.1f}] vs {w['opponent']}"
                if w
                else "—",
            ]
        )
    table(
        "The mixture (weights: the max-entropy Nash; ranges: resampled deals)",
        ["member", "weight [95% range]", "in support", "from", "worst pairing (score [95% CI])"],
        rows,
    )
    c = s["content"]
    if c["kind"]:
        used = [r for r in c["rows"] if r["status"] == "used"]
        dead = [r["content"] for r in c["rows"] if r["status"] == "dead"]
        typer.echo(
            f"{c['kind']}s at equilibrium: "
            + "; ".join(f"{r['content']} {100 * r['weight']:.1f}%" for r in used)
        )
        typer.echo(
            f"dead {c['kind']}s (unused, and losing to the mixture at 95%): "
            + (", ".join(dead) if dead else "none shown")
        )
        parts = {}
        for r in c["parts"]:
            parts.setdefault(r["kind"], []).append(r)
        for kind, rs in parts.items():
            if kind == "card":
                unused = [r["name"] for r in rs if r["status"] != "used"]
                typer.echo(
                    f"cards in no equilibrium deck: {len(unused)} of {len(rs)}"
                    + (
                        f" ({', '.join(unused[:12])}{', …' if len(unused) > 12 else ''})"
                        if unused
                        else ""
                    )
                )
                continue
            typer.echo(
                f"{kind}s: "
                + "; ".join(
                    f"{r['name']} {100 * r['weight']:.1f}%{' (dead)' if r['status'] == 'dead' else ''}"
                    for r in rs
                )
            )
    else:
        typer.echo("content: the sides choose no content in this game (only how they play)")
    rows = [
        [
            str(st["iteration"]),
            str(st["size"]),
            str(st["support"]),
            st["response"],
            _pts(st["gain"]),
            st["decision"],
        ]
        for st in s["curve"]
    ]
    if rows:
        table(
            "Exploitability curve (each iteration's best response against that iteration's mixture)",
            ["iteration", "population", "support", "best response", "gain [95% CI]", "decision"],
            rows,
        )


def add_equilibrium_command(sub: typer.Typer, home: Game, defaults: dict) -> None:
    """``balance <game> equilibrium``."""
    from balance import equilibrium as eqm

    game = home.name

    @sub.command("equilibrium")
    @plays_games
    def equilibrium_cmd(
        variant: VariantOpt = "base",
        rule: RuleOpt = None,
        start: Annotated[
            str,
            typer.Option(
                "--from",
                help="The starting population: 'field' (the study's strategies, tuned included), "
                "'shipped' (the game's shipped equilibrium), names or .toml paths, comma-separated.",
            ),
        ] = "field",
        epsilon: Annotated[
            float,
            typer.Option(
                "--epsilon",
                help="Stop when no response gains more than this (a share: 0.02 = 2 points).",
            ),
        ] = eqm.EPSILON,
        iterations: Annotated[
            int, typer.Option("--iterations", help="Best-response searches at most.")
        ] = eqm.ITERATIONS,
        budget: Annotated[
            int, typer.Option("--budget", help="CMA-ES evaluations per search.")
        ] = eqm.BUDGET,
        games: Annotated[
            int, typer.Option("--games", help="Games per pairing of the payoff matrix.")
        ] = eqm.GAMES,
        search_games: Annotated[
            int,
            typer.Option("--search-games", help="Games per opponent per candidate of a search."),
        ] = eqm.SEARCH_GAMES,
        screen_games: Annotated[
            int,
            typer.Option(
                "--screen-games",
                help="Games per opponent per content choice screened (loadouts, decks).",
            ),
        ] = eqm.SCREEN_GAMES,
        confirm_games: Annotated[
            int,
            typer.Option(
                "--confirm-games", help="Fresh games per opponent that measure a response's gain."
            ),
        ] = eqm.CONFIRM_GAMES,
        step: Annotated[
            float,
            typer.Option(
                "--step", help="The searches' first step, a share of each weight's range."
            ),
        ] = eqm.STEP,
        seed: SeedOpt = 1,
        out: Annotated[
            Path | None,
            typer.Option(
                "--out",
                help="Folder to write the population to (one strategy file per member and "
                "population.toml); the game's shipped one is strategies/<game>/equilibrium.",
            ),
        ] = None,
        force: Annotated[
            bool,
            typer.Option(
                "--force", help="Replace a population another search (other settings) wrote."
            ),
        ] = False,
        threads: ThreadsOpt = None,
        results: ResultsOpt = None,
        as_json: JsonOpt = False,
    ):
        """The equilibrium of the strategy space: grow a population by best responses
        to its max-entropy Nash mixture until none gains more than ε; then the
        verdicts under equilibrium play, the dominant-strategy question and the
        content the equilibrium uses."""
        from balance import config, experiments, runner
        from balance.paths import check_replace, experiment_id, record_written, writable_file

        if not 0 < epsilon < 0.5:
            raise UserError(
                f"--epsilon must be above 0 and below 0.5 (0.02 = 2 points), got {epsilon}"
            )
        if not 1 <= iterations <= 1000:
            raise UserError(f"--iterations must be between 1 and 1000, got {iterations}")
        if not 1 <= budget <= 100_000:
            raise UserError(f"--budget must be between 1 and 100000 evaluations, got {budget}")
        if not 0 < step <= 1:
            raise UserError(f"--step must be above 0 and at most 1, got {step}")
        runner.check_seed(seed)
        rs = config.resolve_variant(game, with_rules(variant, rule))
        first = eqm.start_population(game, start)
        # the population's identity: its rules, start and seed (a rerun with a larger
        # budget refines the same search; other rules or another start are another)
        experiment = experiment_id(
            "equilibrium", game, with_rules(variant, rule), [m.name for m in first], seed
        )
        if out is not None:
            writable_file(out / eqm.POPULATION, "--out")
            check_replace(out / eqm.POPULATION, experiment, "--out", force)
        t0 = time.perf_counter()

        def on_step(st) -> None:
            el = time.perf_counter() - t0
            left = iterations - st.iteration
            eta = (
                ""
                if st.decision != "add" or left <= 0
                else f"; at most {left} more iteration{'s' if left > 1 else ''}, "
                f"ETA ≤ {_clock(el / st.iteration * left)}"
            )
            typer.echo(
                f"iteration {st.iteration} of ≤ {iterations}: population {len(st.members)}, support "
                f"{sum(x > eqm.SUPPORT_MIN for x in st.mixture)}; best response {st.response} gains "
                f"{_pts(st.gain)} → {st.decision}; elapsed {_clock(el)}{eta}",
                err=True,
            )

        with runner.tally() as played:
            eq = eqm.equilibrium(
                game,
                rs,
                first,
                epsilon=epsilon,
                iterations=iterations,
                budget=budget,
                games=games,
                search_games=search_games,
                screen_games=screen_games,
                confirm_games=confirm_games,
                step=step,
                seed=seed,
                results=results,
                threads=threads,
                on_step=on_step,
            )
            s = eqm.summary(eq)
        wrote = None
        if out is not None:
            wrote = eqm.write_population(eq, s, out)
            record_written(wrote, experiment, runner.command_line())
        plan = {
            "variant": experiments.ruleset_plan(rs),
            "start": [experiments.strategy_plan(m) for m in first],
            "settings": s["settings"],
            "epsilon": epsilon,
            "iterations": iterations,
        }
        experiments.record(results, game, "equilibrium", plan, [*eq.arena.keys], view="runs")
        what = (
            f"equilibrium of {game} under '{rs.name}' in {_clock(time.perf_counter() - t0)}: "
            + played.line()
        )
        if as_json:
            echo_json({**s, "out": str(wrote) if wrote else None})
            done(what, True)
            return
        summary_lines(s)
        if wrote is not None:
            typer.echo(f"wrote {wrote} and {len(eq.members)} member files beside it")
        done(what)
