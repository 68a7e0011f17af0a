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


def verdict_lines(s: dict) -> list[str]:
    """The answer first: each property under strong play (both seats drawing
    from the equilibrium mixture) against its target, as the study's index
    states it, then one line summing them up (:func:`balance.design.equilibrium_rows`)."""
    from balance import design

    th = design.load_thresholds(s["game"])
    rows = design.equilibrium_rows(s, th).to_dict("records")
    pl = s["play"]
    where = (
        f"{s['rules']} {s['game']} under strong play (both seats drawing from the equilibrium "
        f"mixture, fresh deals, {pl['games']:,} games on {pl['deals']:,} deals):"
    )
    out = [where]
    for r in rows:
        out.append(f"  {r['text']}")
    fails = [r["label"] for r in rows if r["status"] == "fails"]
    unclear = [r["label"] for r in rows if r["status"] == "unclear"]
    if not fails and not unclear:
        word = "every property meets its target"
    else:
        word = "; ".join(
            x
            for x in (
                f"fails {', '.join(fails)}" if fails else "",
                f"unclear on {', '.join(unclear)}" if unclear else "",
            )
            if x
        )
    trust = (
        "an audited equilibrium"
        if s["status"] == "equilibrium" and s.get("audit")
        else "an equilibrium within ε (not audited)"
        if s["status"] == "equilibrium"
        else "a mixture NOT shown to be an equilibrium: read these as the play of this mixture"
    )
    out.append(f"  → {s['rules']} under strong play: {word} ({trust})")
    return out


def exploitability_line(s: dict) -> str:
    """How far the mixture is from an equilibrium: the audit's gain where an
    audit ran (the figure every claim reports), with its budget."""
    g = s["exploitability"]
    eps = 100 * s["epsilon"]
    a = s.get("audit")
    who = (
        f"the audit's best response (an independent search, seed {a['seed']} '{a['tag']}', "
        f"{a['evaluations']:,} evaluations)"
        if a
        else "the best response found (not audited)"
    )
    head = f"{s['game']} under the rules '{s['rules']}', exploitability (ε = {eps:g} points): "
    if s.get("failed"):
        head += (
            f"NOT shown — the search failed (its best fell below the population's best member), "
            f"so nothing is claimed; {who} {_pts(g)}"
        )
    elif s["status"] == "equilibrium":
        head += f"an equilibrium within ε is shown — {who} gains {_pts(g)}"
    else:
        head += f"NOT shown within ε — {who} gains {_pts(g)}"
    return head + f" (fresh deals, n = {g['n']:,} deals, {g['games']:,} games)"


def summary_lines(s: dict) -> None:
    """What the command prints: the answer first (each property under strong
    play against its target), then how exploitable the mixture is (the
    audit's figure), whether one strategy is enough, the mixture, the content
    and the curve."""
    for line in verdict_lines(s):
        typer.echo(line)
    typer.echo(exploitability_line(s))
    typer.echo(
        f"  ({s['status_text']}; a lower bound on the exploitability: searched {s['searched']})"
    )
    typer.echo(f"dominant strategy: {s['dominant']['status']} — {s['dominant']['text']}")
    sp, ef = s["support"], s["effective"]
    typer.echo(
        f"strategic diversity: support {sp['value']} [{sp['lo']}, {sp['hi']}], effective number of "
        f"strategies {ef['value']:.2f} [{ef['lo']:.2f}, {ef['hi']:.2f}] "
        f"({s['resamples']} resamples of the deals)"
    )
    re_ = s.get("remeasured")
    if re_:
        typer.echo(
            f"mixture stability: the matrix re-measured on other deals (seed {re_['seed']}, "
            f"{re_['games']:,} games per pairing) moves a support weight by at most "
            f"{100 * re_['max_move']:.1f} points "
            + ("(holds still: under 10)" if re_["max_move"] < 0.10 else "(MOVES: 10 or more)")
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
            st["response"] + (" (found by the audit)" if st.get("by") == "audit" else ""),
            _pts(st["gain"]),
            f"{st['evaluations']:,}" if st.get("evaluations") else "—",
            st["decision"],
            (
                f"{_pts(st['audit']['gain'])}, {st['audit']['evaluations']:,} evaluations: "
                f"{st['audit']['decision']}"
            )
            if st.get("audit")
            else "—",
        ]
        for st in s["curve"]
    ]
    if rows:
        table(
            "Exploitability curve (each iteration's best response against that iteration's "
            "mixture; the audit: an independent, stronger search before any claim)",
            [
                "iteration",
                "population",
                "support",
                "best response",
                "gain [95% CI]",
                "evaluations",
                "decision",
                "audit",
            ],
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
            int,
            typer.Option(
                "--budget",
                help="CMA-ES evaluations of each restart's first stage (the better half go on "
                "to twice as many, until one is left).",
            ),
        ] = eqm.BUDGET,
        restarts: Annotated[
            int,
            typer.Option("--restarts", help="CMA-ES restarts per search, each from its own start."),
        ] = eqm.RESTARTS,
        responses: Annotated[
            int,
            typer.Option(
                "--responses",
                help="Responses one search may add: its best, and the best of as many other "
                "restarts that beat the mixture by more than ε too (a population grows faster).",
            ),
        ] = 1,
        audit: Annotated[
            int,
            typer.Option(
                "--audit",
                help="Before any claim, audit the mixture with an independent search of this "
                "many times the loop's evaluations (0: no audit, and no claim beyond the loop).",
            ),
        ] = eqm.AUDIT,
        games: Annotated[
            int, typer.Option("--games", help="Games per pairing of the payoff matrix.")
        ] = eqm.GAMES,
        search_games: Annotated[
            int,
            typer.Option(
                "--search-games",
                help="Games of each candidate of a search against the mixture (split by weight).",
            ),
        ] = eqm.SEARCH_GAMES,
        screen_games: Annotated[
            int,
            typer.Option(
                "--screen-games",
                help="Games of each start screened (a content choice with a weight set) against "
                "the mixture (split by weight).",
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
                "--step",
                help="The first restart's first step, a share of each weight's range (the "
                "later restarts' widen to 0.3).",
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
        if not 0 <= audit <= 100:
            raise UserError(
                f"--audit must be between 0 (no audit) and 100 (times the loop's evaluations), "
                f"got {audit}"
            )
        osets = eqm.settings(
            budget=budget,
            restarts=restarts,
            responses=responses,
            search_games=search_games,
            screen_games=screen_games,
            confirm_games=confirm_games,
            step=step,
        )  # every search setting checked here, before any game
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
            audited = (
                f" (the audit, {st.audit['detail'].get('evaluations', 0):,} evaluations: "
                f"{st.audit['response']} gains {_pts(st.audit['gain'])} → {st.audit['decision']})"
                if st.audit is not None
                else ""
            )
            more = (
                "; also "
                + ", ".join(
                    f"{x.name} {_pts(g)}"
                    + ("" if eqm.decide(g, epsilon) == "add" else " (not added)")
                    for x, g in st.detail.get("also", [])
                )
                if st.decision == "add" and st.detail.get("also")
                else ""
            )
            typer.echo(
                f"iteration {st.iteration} of ≤ {iterations}: population {len(st.members)}, support "
                f"{sum(x > eqm.SUPPORT_MIN for x in st.mixture)}; best response {st.response} gains "
                f"{_pts(st.gain)}{audited}{more} → {st.decision}; elapsed {_clock(el)}{eta}",
                err=True,
            )

        with runner.tally() as played:
            eq = eqm.equilibrium(
                game,
                rs,
                first,
                epsilon=epsilon,
                iterations=iterations,
                games=games,
                oracle_settings=osets,
                audit=audit or None,
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


def audit_lines(game: str, rules: str, rec: dict, settings: dict, shipped: list[dict]) -> list[str]:
    """What ``audit`` prints: the gain of the best response found against the
    population's mixture, its interval and budget, then the audits the
    population already records beside it."""
    from balance import oracle

    g = rec["gain_interval"]
    eps = 100 * rec["epsilon"]
    verdict = {
        "equilibrium": f"holds: no response found gains more than ε = {eps:g} points",
        "add": f"BEATEN: a response gains more than ε = {eps:g} points",
        "not shown": "not shown either way: the interval reaches past ε (more confirmation games)",
        "search failed": "not shown: the audit's search failed (its best fell below the "
        "population's best member), so it is no evidence",
    }[rec["decision"]]
    full = oracle.Settings().audit().evaluations
    if rec["evaluations"] < full and rec["decision"] == "equilibrium":
        verdict += (
            f" (a smaller search than the default audit's {full:,} evaluations: weaker "
            "evidence; a search that finds nothing proves only as much as its power)"
        )
    out = [
        f"{game} under the rules '{rules}', the population's mixture audited: {verdict}",
        f"  best response found: {rec['response']}, gain {_pts(g)} (fresh deals, n = "
        f"{g['n']:,} deals, {g['games']:,} games); the search: seed {rec['seed']} "
        f"'{rec['tag']}', {rec['evaluations']:,} CMA-ES evaluations over {settings['restarts']} "
        f"restarts, {settings['member_sets']} member and {settings['random_sets']} random weight "
        f"sets screened with every content choice, {settings['search_games']:,} games per "
        f"candidate, {settings['confirm_games']:,} confirmation games per opponent",
    ]
    for a in shipped:
        out.append(
            f"  recorded audit (seed {a['seed']} '{a.get('tag', '')}', {int(a['evaluations']):,} "
            f"evaluations, {a.get('date', '')}): gain {100 * a['gain']:+.1f} points "
            f"[{100 * a['gain_lo']:+.1f}, {100 * a['gain_hi']:+.1f}], {a.get('decision', '')}"
        )
    if shipped:
        last = shipped[-1]
        agree = not (g["lo"] > last["gain_hi"] or g["hi"] < last["gain_lo"])
        out.append(
            "  this audit and the last recorded one "
            + (
                "agree (their intervals overlap)"
                if agree
                else "DISAGREE (their intervals do not overlap)"
            )
        )
    return out


def add_audit_command(sub: typer.Typer, home: Game, defaults: dict) -> None:
    """``balance <game> audit``."""
    from balance import equilibrium as eqm
    from balance import oracle

    game = home.name

    @sub.command("audit")
    @plays_games
    def audit_cmd(
        population: Annotated[
            Path | None,
            typer.Option(
                "--population",
                help="A population folder (or its population.toml); default: the game's shipped "
                "equilibrium, strategies/<game>/equilibrium.",
            ),
        ] = None,
        factor: Annotated[
            int,
            typer.Option(
                "--audit",
                help="The audit's evaluations, times those of the equilibrium loop's search at "
                "--budget and --restarts.",
            ),
        ] = eqm.AUDIT,
        budget: Annotated[
            int,
            typer.Option("--budget", help="The loop's evaluations per restart the audit scales."),
        ] = eqm.BUDGET,
        restarts: Annotated[
            int,
            typer.Option("--restarts", help="The loop's restarts; the audit runs twice as many."),
        ] = eqm.RESTARTS,
        games: Annotated[
            int, typer.Option("--games", help="Games per pairing of the payoff matrix.")
        ] = eqm.GAMES,
        search_games: Annotated[
            int,
            typer.Option(
                "--search-games",
                help="Games of each candidate against the mixture (split by weight).",
            ),
        ] = eqm.SEARCH_GAMES,
        confirm_games: Annotated[
            int,
            typer.Option(
                "--confirm-games",
                help="The loop's fresh games per opponent; the audit plays four times as many.",
            ),
        ] = eqm.CONFIRM_GAMES,
        seed: SeedOpt = 2,
        record: Annotated[
            bool,
            typer.Option(
                "--record", help="Add this audit to the population file (an [[audit]] table)."
            ),
        ] = False,
        response: Annotated[
            Path | None,
            typer.Option(
                "--response",
                help="Write the best response found to this .toml strategy file (usable "
                "anywhere a strategy is).",
            ),
        ] = None,
        threads: ThreadsOpt = None,
        results: ResultsOpt = None,
        as_json: JsonOpt = False,
    ):
        """Audit an equilibrium population: an independent best-response search (its
        own seed, several times the loop's budget) against the population's
        mixture. Its gain, with its 95% interval, is the mixture's exploitability;
        a search that finds nothing proves nothing, so a failed search says so."""
        from balance import config, runner

        if not 1 <= factor <= 100:
            raise UserError(f"--audit must be between 1 and 100, got {factor}")
        runner.check_seed(seed)
        base = oracle.Settings(
            budget=budget,
            restarts=restarts,
            search_games=search_games,
            confirm_games=confirm_games,
        )
        settings = base.audit(factor)
        members, p, data = eqm.load_population(game, population)
        keep = [i for i, x in enumerate(p) if x > eqm.SUPPORT_MIN]
        members, p = [members[i] for i in keep], p[keep] / p[keep].sum()
        rules = str(data.get("rules", "base"))
        rs = config.resolve_variant(game, rules)
        eps = float(data.get("epsilon", eqm.EPSILON))
        if record:
            from balance.paths import writable_file

            folder = population if population is not None else eqm.default_folder(game)
            writable_file((folder / eqm.POPULATION) if folder.is_dir() else folder, "--population")
        t0 = time.perf_counter()
        with runner.tally() as played:
            _, _, rec = eqm.audit_mixture(
                game,
                rs,
                members,
                p,
                settings,
                epsilon=eps,
                games=games,
                seed=seed,
                results=results,
                threads=threads,
                tag="audit",
            )
        rec["epsilon"] = eps
        found = rec.pop("strategy")
        shipped = eqm.shipped_audits(data)
        if response is not None:
            g = rec["gain_interval"]
            eqm.write_response(
                game,
                found,
                response,
                [
                    f"A best response to the mixture of {', '.join(m.name for m in members)} "
                    f"(weights {', '.join(f'{x:.4f}' for x in p)}), found by `balance {game} audit` "
                    f"(seed {seed}, {rec['evaluations']:,} CMA-ES evaluations) on {rec['date']}",
                    f"command: {eqm.portable_command(runner.command_line())}",
                    f"its gain over ½ against the mixture, fresh deals (n = {g['n']} deals): "
                    f"{100 * g['mean']:+.2f} points [{100 * g['lo']:+.2f}, {100 * g['hi']:+.2f}]",
                ],
            )
        wrote = None
        if record:
            wrote = eqm.append_audit(
                game, population, {k: v for k, v in rec.items() if k in eqm.AUDIT_KEYS}
            )
        what = (
            f"audit of {game}'s population in {_clock(time.perf_counter() - t0)}: " + played.line()
        )
        if as_json:
            echo_json(
                {
                    "game": game,
                    "rules": rules,
                    "audit": {k: v for k, v in rec.items()},
                    "settings": settings.as_dict(),
                    "recorded": shipped,
                    "wrote": str(wrote) if wrote else None,
                }
            )
            done(what, True)
            return
        for line in audit_lines(game, rules, rec, settings.as_dict(), shipped):
            typer.echo(line)
        if wrote is not None:
            typer.echo(f"recorded in {wrote}")
        if response is not None:
            typer.echo(f"wrote the best response found to {response}")
        done(what)
