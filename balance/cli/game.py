"""The commands every game has: simulate, compare, trace, variants,
strategies, features and sprt, added to each game's sub-app by
:func:`add_game_commands` with the game's defaults (``configs/<game>/cli.toml``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from balance.cli.options import (
    BatchOpt,
    JsonOpt,
    MaxGamesOpt,
    PrecisionOpt,
    ResultsOpt,
    RuleOpt,
    SeedOpt,
    StrategiesOpt,
    ThreadsOpt,
    VariantOpt,
    VerdictOpt,
    plays_games,
)
from balance.cli.output import done, echo_json, records, save_figure, table
from balance.config import rule_text, with_rules
from balance.errors import UserError
from balance.paths import check_keys, dir_option, load_toml
from balance.registry import Game, get_game


def trace_game(game: str, rs, sa, sb, seed: int, index: int) -> list[dict]:
    """The events of game ``index`` of ``seed``: ``sa`` (A) against ``sb`` (B)."""
    from balance.config import bind_side

    eng = get_game(game).engine_module()
    sa, sb = bind_side(rs, sa), bind_side(rs, sb)  # decks by card name in the ruleset's set
    # name the cards of the ruleset's card set (games with card sets)
    card_names = rs.card_set().names if get_game(game).card_sets else None
    return eng.trace(
        rs.vector(),
        sa.vector(),
        sb.vector(),
        seed,
        index,
        (sa.name, sb.name),
        card_names=card_names,
    )


CLI_KEYS = ("strategy", "variants", "bench")


def print_verdicts(game: str, runs: dict, vnames, snames, t: dict, thresholds: dict):
    """The balance verdict of each ruleset (``balance.design``), in plain words,
    and a warning line for each pairing with more than 5% round-cap draws.
    Returns the assessment (:func:`balance.design.assess`)."""
    from balance import design

    a = design.assess(runs, vnames, snames, thresholds, tables=t)
    for v in vnames:
        lines = design.verdict_lines(a, v)
        if not lines:
            continue
        typer.echo(f"Balance verdict for {lines[0]}")
        for line in lines[1:]:
            typer.echo(f"  {line}")
    for line in design.cap_warnings(runs, thresholds["round_cap_max"]):
        typer.echo(line)
    return a


_PCT_PROPS = ("seat_fairness", "draws", "round_cap", "dominance")


def _sc_value(prop: str, v, lo, hi, n) -> str:
    """A property's value under the scripted field, with its 95% interval and n."""
    from balance import fmt

    nn = f" {fmt.fmt_n(n)}" if n is not None else ""
    if prop in _PCT_PROPS:
        return fmt.fmt_pct_ci(v, lo, hi) + nn
    if prop == "diversity":
        return f"{fmt.fmt_num(v, 0)} [{fmt.fmt_num(lo, 0)}, {fmt.fmt_num(hi, 0)}]{nn}"
    return f"{fmt.fmt_num(v, 2)} [{fmt.fmt_num(lo, 2)}, {fmt.fmt_num(hi, 2)}]{nn}"


def _versus_cell(row: dict, side: str, value) -> str:
    """One ruleset's value in a comparison row (``value`` formats it), with its
    own status against the target (meets / fails / unclear, from its
    interval) where it has one."""
    text = value(
        row["property"],
        row[side],
        row.get(f"{side}_lo"),
        row.get(f"{side}_hi"),
        row.get(f"{side}_n"),
    )
    st = row.get(f"{side}_status")
    return f"{text} ({st})" if st else text


def print_versus(comparisons: list[dict], how: str, value, diff) -> None:
    """Each ruleset against base, per property (``balance.versus`` rows): a
    table each (``how`` says whose play and how the difference's interval is
    built), then its one line."""
    for c in comparisons:
        table(
            f"{c['rules']} vs {c['base']} {how}",
            ["property", c["base"], c["rules"], "difference [95% CI]", "target", "verdict"],
            [
                [
                    r["label"],
                    _versus_cell(r, "base", value),
                    _versus_cell(r, "value", value),
                    diff(r),
                    _eq_target(r["property"], r["target"]),
                    r["verdict"],
                ]
                for r in c["rows"]
            ],
        )
        typer.echo(c["line"])


def _sc_diff(row: dict) -> str:
    from balance import fmt

    prop, d, lo, hi = row["property"], row["diff"], row["diff_lo"], row["diff_hi"]

    def signed(x) -> str:
        return fmt.MISSING if fmt._missing(x) else f"{float(x):+.2f}"

    text = (
        fmt.fmt_pp_ci(d, lo, hi)
        if prop in _PCT_PROPS
        else f"{signed(d)} [{signed(lo)}, {signed(hi)}]"
    )
    if row.get("paired"):
        return f"{text} paired, {fmt.fmt_n(row.get('diff_n'), 'deals')}"
    if row.get("interval") == "ranges":
        return f"{text} from the ranges"
    return text


def print_versus_scripted(comparisons: list[dict]) -> None:
    """Each ruleset against base under the scripted field, per property of the
    verdict, then one line per ruleset (:func:`balance.design.versus_base_scripted`)."""
    print_versus(
        comparisons,
        "under the scripted field (difference's 95% CI: paired by deal where marked, else "
        "from the two intervals)",
        _sc_value,
        _sc_diff,
    )


def verdict_word(assessment, variant: str) -> str:
    """``balanced``, ``not balanced: <failing properties>`` or ``unclear: <…>``."""
    from balance import design

    status = design.overall(assessment, variant)[0]
    sub = assessment[assessment["variant"] == variant]
    if status == "meets":
        return "balanced"
    word = "not balanced" if status == "fails" else "unclear"
    labels = sub.loc[sub["status"] == status, "label"]
    return f"{word}: {', '.join(labels)}" if len(labels) else word


def _eq_value(prop: str, v, lo, hi, n) -> str:
    """A property's value under equilibrium play, with its 95% interval and n."""
    from balance import fmt

    if prop == "dominant":
        return str(v)
    nn = f" {fmt.fmt_n(n)}" if n is not None else ""
    if prop in ("seat_fairness", "draws", "round_cap"):
        return fmt.fmt_pct_ci(v, lo, hi) + nn
    if prop == "exploitability":
        return fmt.fmt_pp_ci(v, lo, hi).replace(" pp", " points") + nn
    if prop == "support":
        return f"{int(v)} [{int(lo)}, {int(hi)}]{nn}"
    return f"{fmt.fmt_num(v, 2)} [{fmt.fmt_num(lo, 2)}, {fmt.fmt_num(hi, 2)}]{nn}"


def _eq_diff(row: dict) -> str:
    from balance import fmt

    prop = row["property"]
    if prop == "dominant":
        return f"{row['base']} → {row['value']}"
    d, lo, hi = row["diff"], row["diff_lo"], row["diff_hi"]
    if prop in ("seat_fairness", "draws", "round_cap"):
        return fmt.fmt_pp_ci(d, lo, hi)
    if prop == "exploitability":
        return fmt.fmt_pp_ci(d, lo, hi).replace(" pp", " points")
    return f"{d:+.2f} [{lo:+.2f}, {hi:+.2f}]"


def _eq_target(prop: str, target) -> str:
    if prop == "dominant":
        return "no"
    if target is None:
        return "shown, not judged"
    lo, hi = target
    pct = prop in _PCT_PROPS

    def f(x):
        return f"{100 * x:g}%" if pct else f"{x:g}"

    if lo is None:
        return f"≤ {f(hi)}"
    if hi is None:
        return f"≥ {f(lo)}"
    return f"{f(lo)}–{f(hi)}"


def compare_at_equilibrium(
    game,
    variants,
    seed,
    results,
    threads,
    epsilon,
    iterations,
    budget,
    thresholds,
    as_json,
    **sizes,
) -> dict:
    """``compare --field equilibrium``: run (or read back) each ruleset's
    equilibrium, printing progress, the time spent and an ETA between
    rulesets, then each property against base and one line per ruleset
    (:func:`balance.analysis.compare_equilibrium_command`)."""
    from balance import analysis, fmt, runner

    def on_step(name, st):
        g = st.gain
        typer.echo(
            f"  {name}, iteration {st.iteration}: {st.response} gains "
            f"{fmt.fmt_pp_ci(g['mean'], g['lo'], g['hi']).replace(' pp', ' points')} "
            f"against a mixture of {len(st.members)} ({st.decision}; {fmt.fmt_seconds(st.seconds)})",
            err=True,
        )

    def on_ruleset(i, total, name, summ, elapsed, eta):
        g = summ["exploitability"]
        left = total - i
        typer.echo(
            f"[{i}/{total}] {name}: {summ['status']}, exploitability "
            f"{fmt.fmt_pp_ci(g['mean'], g['lo'], g['hi']).replace(' pp', ' points')}, support "
            f"{summ['support']['value']} ({fmt.fmt_seconds(summ['seconds'])}); elapsed "
            f"{fmt.fmt_seconds(elapsed)}"
            + (f"; about {fmt.fmt_seconds(eta)} for the {left} left" if left else ""),
            err=True,
        )

    with runner.tally() as played:
        res = analysis.compare_equilibrium_command(
            game,
            variants,
            seed=seed,
            results=results,
            threads=threads,
            epsilon=epsilon,
            iterations=iterations,
            budget=budget,
            thresholds=thresholds,
            on_step=on_step,
            on_ruleset=on_ruleset,
            **sizes,
        )
    what = (
        f"{len(res['rulesets'])} {'equilibrium' if len(res['rulesets']) == 1 else 'equilibria'} ({fmt.fmt_seconds(res['seconds'])}, started from "
        f"{', '.join(res['start'])}): " + played.line()
    )
    if as_json:
        echo_json(res)
        done(what, True)
        return res
    from balance.cli.equilibrium import exploitability_line, verdict_lines

    for s in res["rulesets"]:
        for line in verdict_lines(s):  # the answer first: each property against its target
            typer.echo(line)
    for s in res["rulesets"]:
        mix = ", ".join(
            f"{m['name']} {100 * m['weight']:.0f}% [{100 * m['lo']:.0f}, {100 * m['hi']:.0f}]"
            for m in s["members"]
            if m["weight"] > 1e-6
        )
        typer.echo(f"{exploitability_line(s)}; mixture {mix}; {s['dominant']['text']}")
    if not res["comparisons"]:
        typer.echo(
            f"one ruleset ({res['base']}): nothing to compare it against; name others with "
            "--variants, e.g. --variants base,<variant>"
        )
    print_versus(
        res["comparisons"],
        "under equilibrium play (each ruleset's own equilibrium; difference's 95% CI from "
        "two independent searches)",
        _eq_value,
        _eq_diff,
    )
    if res["comparisons"]:
        typer.echo(
            "n: deals (the independent unit); the exploitability is the search's quality (a lower "
            "bound within the strategy space searched), shown, not judged"
        )
    done(what)
    return res


def cli_defaults(game: Game) -> dict:
    """The defaults of ``game``'s commands: ``configs/<game>/cli.toml`` (the
    strategy of simulate and trace, the variants of compare, ``[bench]``; without
    the file, the first strategy and base) and the game's one default field
    (:func:`balance.config.default_field`, from ``study.toml``), which compare,
    sweep and repair play and the study plays too."""
    from balance import config

    path = game.configs / "cli.toml"
    data = load_toml(path) if path.is_file() else {}
    check_keys(path, "the top level", data, CLI_KEYS)
    data["strategies"] = config.default_field(game.name)
    data["scripted"] = config.scripted_field(game.name)
    if "strategy" not in data:
        names = game.strategy_names()
        data.setdefault("strategy", names[0] if names else "")
    data.setdefault("variants", ["base"])
    return data


def add_game_commands(sub: typer.Typer, home: Game, defaults: dict) -> None:
    """simulate, compare, trace, variants, strategies, features and sprt for
    ``home``, with ``defaults`` (:func:`cli_defaults`)."""
    game, title = home.name, home.title
    default_strategy = str(defaults["strategy"])
    standard = ",".join(defaults["strategies"])
    default_variants = ",".join(defaults["variants"])

    @sub.command("simulate")
    @plays_games
    def simulate(
        variant: VariantOpt = "base",
        rule: RuleOpt = None,
        a: Annotated[
            str, typer.Option("--a", help="Strategy A (name or path to a .toml).")
        ] = default_strategy,
        b: Annotated[
            str, typer.Option("--b", help="Strategy B (name or path to a .toml).")
        ] = default_strategy,
        n: Annotated[
            int, typer.Option("-n", help="Games (rounded up to seat-swapped pairs).")
        ] = 100_000,
        seed: SeedOpt = 1,
        threads: ThreadsOpt = None,
        per_game: Annotated[
            bool, typer.Option("--per-game", help="Also store one row per game.")
        ] = False,
        batch_size: BatchOpt = 1 << 15,
        results: ResultsOpt = None,
        precision: PrecisionOpt = None,
        max_games: MaxGamesOpt = 1_000_000,
        as_json: JsonOpt = False,
    ):
        """Play strategy A against B: wins, draws, win rate with a deal-level CI, rounds."""
        from balance import analysis, fmt

        variant = with_rules(variant, rule)

        row = analysis.simulate_command(
            game,
            variant,
            a,
            b,
            n,
            seed,
            threads,
            per_game,
            batch_size,
            results,
            as_json,
            precision,
            max_games,
        )
        if as_json:
            echo_json(row)
            return
        g = row["games"]
        table(
            f"{title} {row['variant']}: {row['a']} (A) vs {row['b']} (B), {fmt.fmt_int(g)} games, seed {row['seed']}",
            ["", "wins", "win rate [95% CI]", "draws", "score [95% CI, pentanomial]"],
            [
                [
                    f"A {row['a']}",
                    fmt.fmt_int(row["a_wins"]),
                    fmt.fmt_pct_ci(row["winrate"], row["winrate_lo"], row["winrate_hi"]),
                    fmt.fmt_int(row["draws"]),
                    fmt.fmt_pct_ci(row["score"], row["score_lo"], row["score_hi"]),
                ],
                [
                    f"B {row['b']}",
                    fmt.fmt_int(row["b_wins"]),
                    fmt.fmt_pct_ci(row["b_winrate"], row["b_winrate_lo"], row["b_winrate_hi"]),
                    fmt.fmt_int(row["draws"]),
                    fmt.fmt_pct_ci(1 - row["score"], 1 - row["score_hi"], 1 - row["score_lo"]),
                ],
            ],
        )
        typer.echo(
            f"draws {fmt.fmt_pct_ci(row['draw_rate'], row['draw_lo'], row['draw_hi'])} "
            f"(round cap {fmt.fmt_int(row['end_round_cap'])}); rounds mean {row['rounds_mean']:.2f} "
            f"sd {row['rounds_sd']:.2f} (p10 {row['rounds_p10']:.0f}, median "
            f"{row['rounds_p50']:.0f}, p90 {row['rounds_p90']:.0f})"
        )
        ends = ", ".join(
            f"{k[4:].replace('_', ' ')} {fmt.fmt_int(v)}"
            for k, v in row.items()
            if k.startswith("end_")
        )
        typer.echo(
            f"ends: {ends}; seat 1 took "
            f"{fmt.fmt_pct_ci(row['seat1_share_of_wins'], row['seat1_share_lo'], row['seat1_share_hi'])}"
            " of decided games"
        )
        events = getattr(get_game(game).engine_module(), "EVENT_COUNTS", {})
        for name, (label, unit) in events.items():  # e.g. Trisk's refused Creates
            if f"{name}_games" in row:
                typer.echo(
                    f"{label}: in {fmt.fmt_int(row[f'{name}_games'])} of {fmt.fmt_int(g)} "
                    f"games ({fmt.fmt_int(row[f'{name}_total'])} {unit})"
                )
        typer.echo(
            f"pairing: paired SE / unpaired SE = {fmt.fmt_num(row['pair_variance_ratio'], 3)} "
            f"over {fmt.fmt_int(row['pairs'])} seat-swapped pairs"
        )
        how = (
            "read from the store" if row["cached"] else f"{fmt.fmt_int(row['games_per_s'])} games/s"
        )
        typer.echo(f"{how}; {row['elapsed_s']:.2f} s; run {row['config_hash']} in {row['store']}")

    @sub.command("compare")
    @plays_games
    def compare(
        variants: Annotated[
            str,
            typer.Option(
                "--variants", help="Comma-separated variants, or 'all' (every combination)."
            ),
        ] = default_variants,
        rule: RuleOpt = None,
        strategies: StrategiesOpt = standard,
        n: Annotated[int, typer.Option("-n", help="Games per strategy pair and variant.")] = 9604,
        seed: SeedOpt = 1,
        threads: ThreadsOpt = None,
        batch_size: BatchOpt = 1 << 15,
        results: ResultsOpt = None,
        charts: Annotated[
            Path | None,
            typer.Option(
                "--charts",
                help="Also write SVG and PNG charts to this folder.",
                callback=dir_option("--charts"),
            ),
        ] = None,
        precision: PrecisionOpt = None,
        max_games: MaxGamesOpt = 1_000_000,
        verdict_config: VerdictOpt = None,
        field: Annotated[
            str,
            typer.Option(
                "--field",
                help="Whose play the rulesets are judged under: 'scripts' (the round robin of "
                "--strategies) or 'equilibrium' (each ruleset's own equilibrium, grown from the "
                "study's field and the shipped population; docs/equilibrium.md).",
            ),
        ] = "scripts",
        epsilon: Annotated[
            float | None,
            typer.Option(
                "--epsilon",
                help="With --field equilibrium: the largest gain (share of score) a best "
                "response may have at equilibrium (default 0.02).",
            ),
        ] = None,
        iterations: Annotated[
            int | None,
            typer.Option(
                "--iterations",
                help="With --field equilibrium: best-response searches at most per ruleset "
                "(default 8).",
            ),
        ] = None,
        budget: Annotated[
            int | None,
            typer.Option(
                "--budget",
                help="With --field equilibrium: CMA-ES evaluations of each restart's first "
                "stage (default 128; eight restarts, halved each stage: 2,560 per search; the "
                "audit before each claim four times as many).",
            ),
        ] = None,
        restarts: Annotated[
            int | None,
            typer.Option(
                "--restarts",
                help="With --field equilibrium: CMA-ES restarts per search (default 8).",
            ),
        ] = None,
        force: Annotated[
            bool,
            typer.Option(
                "--force", help="With --charts: replace charts another comparison wrote there."
            ),
        ] = False,
        as_json: JsonOpt = False,
    ):
        """Round-robin matrix per variant, strategy win rates, game length, draws,
        luck vs skill, each variant's paired difference from base (Holm), the
        balance verdict, and each ruleset against base per property with its 95%
        interval and "closer to target / further / no change shown".
        With --field equilibrium: each ruleset's own equilibrium, and each property
        against base's with its 95% interval and "closer to target / further / no
        change shown"."""
        from balance import analysis, design, fmt, runner

        field = analysis.check_field(field)
        variants = with_rules(variants, rule)
        thresholds = design.load_thresholds(game, verdict_config)  # checked before any game
        if field == "equilibrium":
            scripted = [
                name
                for name, given in (
                    ("--strategies", strategies != standard),
                    ("-n", n != 9604),
                    ("--charts", charts is not None),
                    ("--precision", precision is not None),
                )
                if given
            ]
            if scripted:
                raise UserError(
                    f"{', '.join(scripted)} applies to --field scripts only; --field "
                    "equilibrium takes --epsilon, --iterations, --budget, --restarts, --seed, "
                    "--results, --threads"
                )
            compare_at_equilibrium(
                game,
                variants,
                seed,
                results,
                threads,
                epsilon,
                iterations,
                budget,
                thresholds,
                as_json,
                **({"restarts": restarts} if restarts is not None else {}),
            )
            return
        given = [
            name
            for name, v in (
                ("--epsilon", epsilon),
                ("--iterations", iterations),
                ("--budget", budget),
                ("--restarts", restarts),
            )
            if v is not None
        ]
        if given:
            raise UserError(f"{', '.join(given)} applies only with --field equilibrium")
        if charts is not None:
            from balance.paths import check_replace_folder, experiment_id

            # the charts' identity: the rulesets, the field, the games and the seed; a
            # folder another comparison filled is not overwritten silently
            experiment = experiment_id(
                "compare", game, variants, strategies, n, precision, max_games, seed
            )
            check_replace_folder(charts, experiment, "--charts", force)
        with runner.tally() as played:
            t, vnames, snames, runs = analysis.compare_command(
                game,
                variants,
                strategies,
                n,
                seed,
                threads,
                batch_size,
                results,
                precision,
                max_games,
            )
        what = (
            f"{len(runs)} matches ({len(snames)} strategies × {len(vnames)} rule sets): "
            + played.line()
        )
        if charts is not None:
            from balance import charts as ch
            from balance.paths import record_folder

            before = {p.name: p.stat().st_mtime_ns for p in charts.glob("*") if p.is_file()}
            ch.all_charts(t, charts, matrix_variants=vnames)
            wrote = [
                p.name
                for p in charts.glob("*")
                if p.suffix in (".svg", ".png") and before.get(p.name) != p.stat().st_mtime_ns
            ]
            record_folder(charts, wrote, experiment, runner.command_line())
        if as_json:
            out = {k: records(v) for k, v in t.items() if k != "rounds"}
            a = design.assess(runs, vnames, snames, thresholds, tables=t)
            out["verdict"] = records(a)
            out["versus_base"] = design.versus_base_scripted(
                runs, vnames, snames, thresholds, assessment=a, tables=t
            )
            out["round_cap_warnings"] = design.cap_warnings(runs, thresholds["round_cap_max"])
            echo_json(out)
            done(what, True)
            return
        m = t["matrix"]
        for v in vnames:
            mv = m[m["variant"] == v]
            rows = []
            for s in snames:
                cells = [s]
                for o in snames:
                    if s == o:
                        cells.append("½")
                        continue
                    r = mv[(mv["a"] == s) & (mv["b"] == o)].iloc[0]
                    cells.append(
                        f"{100 * r.winrate:.1f}±{100 * (r.winrate_hi - r.winrate_lo) / 2:.1f}"
                    )
                st = t["strategies"]
                r = st[(st["variant"] == v) & (st["strategy"] == s)].iloc[0]
                cells.append(fmt.fmt_pct_ci(r.winrate, r.winrate_lo, r.winrate_hi))
                rows.append(cells)
            lo_g, hi_g = int(mv["games"].min()), int(mv["games"].max())
            games = (
                fmt.fmt_int(lo_g) if lo_g == hi_g else f"{fmt.fmt_int(lo_g)}–{fmt.fmt_int(hi_g)}"
            )
            table(
                f"{v}: win rate of row vs column (%, ± 95% CI half-width), {games} games a cell",
                ["", *snames, "mean win rate [95% CI]"],
                rows,
            )
        vt = t["variants"]
        table(
            "Variants: game length, draws and luck vs skill",
            [
                "variant",
                "games",
                "rounds mean (sd)",
                "draws [95% CI]",
                "of which round cap",
                "best vs random [95% CI]",
                "games to be 95% ahead",
            ],
            [
                [
                    r.variant,
                    fmt.fmt_int(r.games),
                    f"{r.rounds_mean:.2f} ({r.rounds_sd:.2f})",
                    fmt.fmt_pct_ci(r.draw_rate, r.draw_lo, r.draw_hi),
                    fmt.fmt_pct_ci(r.timeouts / r.games, r.timeout_lo, r.timeout_hi),
                    (
                        f"{r.best_strategy} "
                        + fmt.fmt_pct_ci(r.luck_skill_winrate, r.luck_skill_lo, r.luck_skill_hi)
                    )
                    if r.best_strategy
                    else "—",
                    fmt.fmt_int(r.games_needed),
                ]
                for r in vt.itertuples()
            ],
        )
        if not vt["best_strategy"].astype(bool).all():
            typer.echo(f"— best vs random: {design.MISSING_REASONS['best_strategy']}.")
        if vt["games_needed"].isna().any():
            typer.echo(f"— games to be 95% ahead: {design.MISSING_REASONS['games_needed']}.")
        d = t["diffs"]
        if len(d):
            table(
                "Difference from base in each strategy's score, paired by seed (Holm-adjusted)",
                [
                    "variant",
                    "strategy",
                    "pairs",
                    "difference [95% CI]",
                    "p",
                    "p (Holm)",
                    "significant",
                ],
                [
                    [
                        r.variant,
                        r.strategy,
                        fmt.fmt_int(r.n_pairs),
                        fmt.fmt_pp_ci(r.diff, r.diff_lo, r.diff_hi),
                        fmt.fmt_p(r.p),
                        fmt.fmt_p(r.p_holm),
                        "yes" if r.significant else "no",
                    ]
                    for r in d.itertuples()
                ],
            )
        a = print_verdicts(game, runs, vnames, snames, t, thresholds)
        print_versus_scripted(
            design.versus_base_scripted(runs, vnames, snames, thresholds, assessment=a, tables=t)
        )
        if charts is not None:
            typer.echo(f"charts: {charts}")
        done(what)

    @sub.command("sweep")
    @plays_games
    def sweep(
        rule: Annotated[
            list[str],
            typer.Option(
                "--rule",
                help="A rule to sweep, key=LO..HI[:STEP] or key=V1,V2,... (repeat for a grid); "
                "a plain key=value holds that rule fixed at every point.",
            ),
        ],
        variant: VariantOpt = "base",
        strategies: StrategiesOpt = standard,
        n: Annotated[int, typer.Option("-n", help="Games per strategy pair and point.")] = 4000,
        seed: SeedOpt = 1,
        threads: ThreadsOpt = None,
        batch_size: BatchOpt = 1 << 15,
        results: ResultsOpt = None,
        chart: Annotated[
            Path | None,
            typer.Option(
                "--chart",
                help="Write the chart here (.svg or .png; default "
                "reports/<game>-sweep-<key>-<first>-<last>.svg, one key after another).",
            ),
        ] = None,
        force: Annotated[
            bool,
            typer.Option("--force", help="Replace a chart another sweep wrote there."),
        ] = False,
        precision: PrecisionOpt = None,
        max_games: MaxGamesOpt = 1_000_000,
        verdict_config: VerdictOpt = None,
        as_json: JsonOpt = False,
    ):
        """Play the field at each value of one or more rules, on the same deals,
        and show every design metric against the value with its 95% CI: seat
        advantage, strategy spread and Nash support, game length, draws and
        round-cap share, lead changes and comebacks; when a point holds the unchanged
        rules, every other point against it per property of the verdict."""
        from balance import config, design, fmt, runner
        from balance import sweep as sw
        from balance.paths import check_replace, experiment_id, record_written, writable_file

        if chart is not None and chart.suffix.lower() not in (".svg", ".png"):
            raise UserError(f"--chart must name an .svg or .png file, got '{chart}'")
        # the grid (its size from the counts) and the chart's path, before any game
        axes = sw.grid(game, variant, rule)[0]
        keys = [a.key for a in axes]
        if chart is None:
            chart = Path("reports") / f"{game}-sweep-{sw.chart_name(axes)}.svg"
        writable_file(chart, "--chart")
        # another variant, field, fixed rule or seed over the same keys and
        # ranges is another experiment: its chart is not replaced silently
        experiment = experiment_id("sweep", game, variant, sorted(rule), strategies, seed)
        check_replace(chart, experiment, "--chart", force)
        thresholds = design.load_thresholds(game, verdict_config)
        with runner.tally() as played:
            res = sw.sweep_command(
                game,
                variant,
                rule,
                strategies,
                n,
                seed,
                threads,
                batch_size,
                results,
                precision,
                max_games,
            )
        what = f"{len(res['runs'])} matches at {len(res['points'])} points: " + played.line()
        df = res["table"]
        verdict = design.assess(
            res["runs"], res["variants"], res["strategies"], thresholds, tables=res["tables"]
        )
        df["verdict"] = [verdict_word(verdict, v) for v in res["variants"]]
        # each point against the unchanged rules, when the grid holds them
        unchanged = config.resolve_variant(game, variant).rules
        ref = next(
            (
                v
                for v, spec in zip(res["variants"], res["specs"], strict=True)
                if config.resolve_variant(game, spec).rules == unchanged
            ),
            None,
        )
        versus_ref = (
            design.versus_base_scripted(
                res["runs"],
                res["variants"],
                res["strategies"],
                thresholds,
                assessment=verdict,
                tables=res["tables"],
                base=ref,
            )
            if ref is not None
            else []
        )
        fig = sw.sweep_chart(
            res,
            f"{title}: design metrics by {', '.join(keys)} ({variant}; "
            f"{', '.join(res['strategies'])}; seed {seed})",
        )
        save_figure(fig, chart)
        record_written(chart, experiment, runner.command_line())
        if as_json:
            echo_json(
                {
                    "axes": {a.key: list(a.values) for a in res["axes"]},
                    "points": records(df),
                    "verdict": records(verdict),
                    "round_cap_warnings": design.cap_warnings(
                        res["runs"], thresholds["round_cap_max"]
                    ),
                    "chart": str(chart),
                    "versus_unchanged": versus_ref,
                }
            )
            done(what, True)
            return
        games = fmt.fmt_int(int(df["games"].iloc[0]))
        table(
            f"{title} sweep of {', '.join(keys)} ({variant}): {len(df)} points, "
            f"{games} games each ({len(res['strategies'])} strategies, round robin, seed {seed}, "
            "the same deals at every point); 95% CIs",
            [
                *keys,
                "seat 1 wins",
                "best strategy",
                "worst strategy",
                "Nash support",
                "rounds",
                "draws",
                "round cap",
                "lead changes",
                "comebacks",
                "verdict",
            ],
            [
                [
                    *(rule_text(r[k]) for k in keys),
                    fmt.fmt_pct_ci(r["seat1_share"], r["seat1_lo"], r["seat1_hi"]),
                    f"{r['best_strategy']} "
                    + fmt.fmt_pct_ci(r["best_score"], r["best_lo"], r["best_hi"]),
                    f"{r['worst_strategy']} "
                    + fmt.fmt_pct_ci(r["worst_score"], r["worst_lo"], r["worst_hi"]),
                    "—" if r["nash_support"] != r["nash_support"] else str(int(r["nash_support"])),
                    f"{r['rounds_mean']:.1f} [{r['rounds_lo']:.1f}, {r['rounds_hi']:.1f}]",
                    fmt.fmt_pct_ci(r["draw_rate"], r["draw_lo"], r["draw_hi"]),
                    fmt.fmt_pct_ci(r["cap_share"], r["cap_lo"], r["cap_hi"]),
                    f"{r['lead_changes']:.2f} [{r['lead_changes_lo']:.2f}, {r['lead_changes_hi']:.2f}]",
                    fmt.fmt_pct_ci(r["comeback_share"], r["comeback_lo"], r["comeback_hi"]),
                    r["verdict"],
                ]
                for r in df.to_dict(orient="records")
            ],
            left=len(keys),
        )
        typer.echo(
            "Seat share, rounds, round cap, lead changes and comebacks: intervals count "
            "a deal's two games as one (conservative); scores and draws cluster by deal."
        )
        for v in res["variants"]:
            typer.echo(f"Balance verdict for {design.overall(verdict, v)[1]}")
        for line in design.cap_warnings(res["runs"], thresholds["round_cap_max"]):
            typer.echo(line)
        if ref is None:
            typer.echo(
                f"each point against the unchanged rules ({variant}): not shown, as they are not "
                "a point of this sweep; include their values ("
                + ", ".join(f"{k}={rule_text(unchanged.get(k))}" for k in keys)
                + ") in the range to see it"
            )
        print_versus_scripted(versus_ref)
        typer.echo(f"chart: {chart}")
        done(what)

    @sub.command("trace")
    def trace(
        seed: SeedOpt = 1,
        game_index: Annotated[
            int,
            typer.Option(
                "--game", help="Game index (game 2d and 2d+1 share deal d, seats swapped)."
            ),
        ] = 0,
        variant: VariantOpt = "base",
        rule: RuleOpt = None,
        a: Annotated[str, typer.Option("--a", help="Strategy A.")] = default_strategy,
        b: Annotated[str, typer.Option("--b", help="Strategy B.")] = default_strategy,
        as_json: JsonOpt = False,
    ):
        """A readable round-by-round log of one game."""
        from balance import config
        from balance.runner import check_seed

        check_seed(seed)
        if not 0 <= game_index < 2**62:
            raise UserError(f"--game must be between 0 and 2**62-1, got {game_index}")
        rs = config.resolve_variant(game, with_rules(variant, rule))
        sa, sb = config.load_strategy(game, a), config.load_strategy(game, b)
        events = trace_game(game, rs, sa, sb, seed, game_index)
        if as_json:
            echo_json(events)
            return
        typer.echo(
            f"{title} {rs.name}, seed {seed}, game {game_index} (deal {game_index // 2}); "
            f"A = {sa.name}, B = {sb.name}"
        )
        for ev in events:
            typer.echo(ev["text"])

    @sub.command("variants")
    def variants(as_json: JsonOpt = False):
        """The rule variants and what each changes."""
        from balance import config

        rows = [{"variant": "base", **config.resolve_variant(game, "base").rules}]
        for v in config.variant_names(game):
            rs = config.resolve_variant(game, v)
            changes = {
                k: x for k, x in rs.rules.items() if rows[0].get(k) != x
            }  # what it sets that base does not
            rows.append(
                {
                    "variant": v,
                    "description": rs.description.split("; ")[-1],
                    "changes": changes,
                }
            )
        ok, bad = config.check_combinations(game)  # every combination resolved, not assumed
        if as_json:
            echo_json(
                {
                    "variants": rows,
                    "combinations": len(ok) + len(bad),
                    "valid": ok,
                    "refused": [{"combination": c, "why": w} for c, w in bad],
                }
            )
            return
        width = max((len(r["variant"]) for r in rows), default=4) + 2
        for r in rows[1:]:
            sets = ", ".join(f"{k} = {config.rule_text(x)}" for k, x in r["changes"].items())
            typer.echo(
                f"{r['variant']:<{width}}{r['description']}" + (f" [{sets}]" if sets else "")
            )
        if len(rows) > 1:
            total = len(ok) + len(bad)
            if bad:
                typer.echo(
                    f"Combine with +, e.g. {ok[-1] if len(ok) > 1 else rows[1]['variant']}: "
                    f"{len(ok)} of the {total} combinations are valid; refused:"
                )
                for combo, why in bad:
                    typer.echo(f"  {combo}: {why}")
            else:
                typer.echo(
                    f"Combine with +, e.g. {'+'.join(r['variant'] for r in rows[1:3])} "
                    f"(all {total} combinations checked: each resolves)."
                )
        else:
            typer.echo(f"{title} has no rule variants yet: only base.")
        typer.echo(
            f"Also: a path to your own .toml ([rules] table) and --rule key=value; "
            f"balance {game} rules lists the keys."
        )

    @sub.command("rules")
    def rules(as_json: JsonOpt = False):
        """Every rule key: its base value, allowed values and meaning (for --rule and
        a variant file's [rules] table)."""
        from balance import config

        eng = get_game(game).engine_module()
        base = config.resolve_variant(game, "base").rules
        rows = []
        for r in eng.RULES:
            if isinstance(r.default, bool):
                allowed = "true, false"
            elif isinstance(r.default, str):
                allowed = "a name or path"
            else:
                lo, hi = eng.RULE_LIMITS.get(r.name, (0, 10**6))
                allowed = f"{lo}..{hi}"
            rows.append(
                {
                    "key": r.name,
                    "base": base[r.name],
                    "allowed": allowed,
                    "meaning": r.doc,
                }
            )
        if as_json:
            echo_json(rows)
            return
        table(
            f"{title} rules: override with --rule key=value, or a file's [rules] table",
            ["key", "base", "allowed", "meaning"],
            [[r["key"], config.rule_text(r["base"]), r["allowed"], r["meaning"]] for r in rows],
            left=4,
            keep=1,  # the key whole; its meaning wraps at spaces on a narrow terminal
        )

    @sub.command("strategies")
    def strategies(as_json: JsonOpt = False):
        """The scripted strategies (TOML weight sets in strategies/<game>/)."""
        from balance import config

        rows = []
        for s in config.strategy_names(game):
            st = config.load_strategy(game, s)
            # a side names what it plays by default: strategy@deck or strategy@loadout
            rows.append(
                {
                    "strategy": s,
                    "plays": st.name.partition("@")[2] or None,
                    "description": st.description,
                }
            )
        if as_json:
            echo_json(rows)
            return
        for r in rows:
            plays = (
                f" (plays {r['plays']}; name another with {r['strategy']}@...)"
                if r["plays"]
                else ""
            )
            typer.echo(f"{r['strategy']:<12} {r['description']}{plays}")

    @sub.command("features")
    def features(as_json: JsonOpt = False):
        """What a strategy TOML can weigh: the features of each decision and the scalars."""
        mod = get_game(game).strategy_module()
        rows = [
            {"section": sec, "key": name, "meaning": text}
            for sec, (_, feats) in mod.SECTIONS.items()
            for name, text in feats
        ]
        rows += [
            {"section": "(top level)", "key": k, "meaning": text}
            for k, (_, text) in mod.SCALARS.items()
        ]
        if as_json:
            echo_json(rows)
            return
        table(
            f"{title} strategy TOML keys: "
            + ", ".join(f"[{sec}]" for sec in mod.SECTIONS)
            + " weigh the features of each kind of decision",
            ["section", "key", "meaning"],
            [[r["section"], r["key"], r["meaning"]] for r in rows],
            left=3,
            keep=2,  # section and key whole; the meaning wraps at spaces
        )

    @sub.command("sprt")
    @plays_games
    def sprt(
        vs: Annotated[str, typer.Option("--vs", help="The rules to test (e.g. force).")],
        strategy: Annotated[str, typer.Option("--strategy", help="Whose score is compared.")],
        variant: Annotated[
            str, typer.Option("--variant", "-v", help="The reference rules.")
        ] = "base",
        rule: RuleOpt = None,
        delta: Annotated[
            float,
            typer.Option(
                "--delta", help="Smallest change worth finding, in points of score (win + ½ draw)."
            ),
        ] = 2.0,
        opponents: Annotated[
            str | None,
            typer.Option(
                "--opponents",
                help="Comma-separated opponents (default: the study's other strategies).",
            ),
        ] = None,
        alpha: Annotated[
            float, typer.Option("--alpha", help="False alarm rate (two-sided).")
        ] = 0.05,
        beta: Annotated[
            float, typer.Option("--beta", help="Miss rate for a change of delta.")
        ] = 0.05,
        batch: Annotated[
            int, typer.Option("--batch", help="Deal pairs per opponent per step.")
        ] = 500,
        max_games: Annotated[
            int, typer.Option("--max-games", help="Stop by this many games per rule set.")
        ] = 1_000_000,
        seed: SeedOpt = 1,
        threads: ThreadsOpt = None,
        results: ResultsOpt = None,
        as_json: JsonOpt = False,
    ):
        """Sequential test: does --vs change the strategy's score by at least
        --delta points against --variant? Plays seat-swapped pairs on the same
        deals in batches, prints the log-likelihood ratios as it goes and stops
        as soon as the answer is known (pentanomial GSPRT, as in Fishtest)."""
        from balance import analysis, fmt

        steps = []
        # --rule applies to both rule sets: the test is of --vs's change alone
        variant, vs = with_rules(variant, rule), with_rules(vs, rule)
        for out in analysis.sprt_command(
            game,
            variant,
            vs,
            strategy,
            opponents,
            delta,
            alpha,
            beta,
            batch,
            max_games,
            seed,
            threads,
            results,
        ):
            steps.append(out)
            if not as_json:
                typer.echo(
                    f"{fmt.fmt_int(out['games']):>10} games each: Δ {fmt.fmt_pp_ci(out['diff'], out['lo'], out['hi'])}"
                    f"  LLR raise {out['llr_up']:+6.2f}  lower {out['llr_down']:+6.2f}"
                    f"  (bounds {out['lower']:+.2f}, {out['upper']:+.2f})"
                )
        last = steps[-1]
        verdict = {
            "raises": f"{last['vs']} raises {last['strategy']}'s score by at least about {delta:g} points",
            "lowers": f"{last['vs']} lowers {last['strategy']}'s score by at least about {delta:g} points",
            "no change": f"{last['vs']} does not change {last['strategy']}'s score by {delta:g} points or more",
            "continue": f"undecided after {fmt.fmt_int(last['games'])} games per rule set (--max-games reached)",
        }[last["decision"]]
        what = (
            f"sequential test of {last['vs']} against {last['variant']}: played "
            f"{fmt.fmt_int(2 * last['games'])} games in {last['runs']} runs (seed {seed}); "
            f"stored in {last['store']}"
        )
        if as_json:
            echo_json({"verdict": verdict, "steps": steps})
            done(what, True)
            return
        typer.echo(
            f"verdict: {verdict} (vs {last['variant']}; Δ = "
            f"{fmt.fmt_pp_ci(last['diff'], last['lo'], last['hi'], last['n_pairs'])} pairs; "
            f"α={alpha:g}, β={beta:g}; opponents: {', '.join(last['opponents'])})"
        )
        done(what)

    add_tune_commands(sub, home, defaults)
    from balance.cli.equilibrium import add_audit_command, add_equilibrium_command
    from balance.cli.repair import add_repair_command

    add_equilibrium_command(sub, home, defaults)
    add_audit_command(sub, home, defaults)
    add_repair_command(sub, home, defaults)


def _opponents(game: str, vs: str, field: list) -> list:
    """``--vs``: strategies (names or .toml paths), or ``field``: the game's
    default field without its tuned strategy (:func:`balance.config.scripted_field`)."""
    from balance import config

    items = [t.strip() for t in vs.split(",") if t.strip()]
    if not items:
        raise UserError("--vs: name at least one opponent (a strategy, a .toml path, or 'field')")
    if "field" in items:
        if len(items) > 1:
            raise UserError("--vs: 'field' cannot be listed with other opponents")
        items = [str(s) for s in field]
    if any(t.endswith("@*") for t in items):  # games with decks: every reference deck
        if not get_game(game).card_sets:
            raise UserError(
                f"--vs: '@*' (every reference deck) needs a game with decks; {game} has none"
            )
        decks = config.reference_deck_names(game)
        items = [
            f"{t[:-2]}@{d}" if t.endswith("@*") else t
            for t in items
            for d in (decks if t.endswith("@*") else [None])
        ]
    return config.parse_strategy_list(game, ",".join(items))


def _search_options(rs, budget, games, seed, results, threads, bounds, top, refine, step) -> dict:
    """The options ``tune`` and ``exploit`` pass on to :func:`balance.tune.tune`."""
    return {
        "ruleset": rs,
        "budget": budget,
        "games": games,
        "seed": seed,
        "results": results,
        "threads": threads,
        "bounds": bounds,
        "top": top,
        "refine": refine,
        "sigma0": step,
    }


def _check_name(name: str) -> str:
    import re

    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,79}", name):
        raise UserError(
            f"--name '{name[:40]}': use 1 to 80 letters, digits, '.', '_' or '-' "
            "(it names the strategy and its file)"
        )
    return name


def _tune_lines(r, out) -> None:
    """What ``tune`` prints: both sides on the same fresh deals, the paired
    difference, the finalists and the cost of the search."""
    from balance import fmt

    t, b, d = r.tuned_score, r.base_score, r.diff
    typer.echo(
        f"Tuned {r.base.name} against {', '.join(o.name for o in r.opponents)} "
        f"({r.game} {r.ruleset.name}): CMA-ES (step {r.sigma0:g}) over {r.space.dim} weights "
        f"(held: {', '.join(r.space.fixed) or 'none'}), {r.budget} evaluations of "
        f"{fmt.fmt_int(r.games)} games per opponent on seed {r.seed}"
    )
    table(
        f"Score (win + ½ draw) on fresh deals: seed {r.fresh_seed}, "
        f"{fmt.fmt_int(r.fresh_games)} games per opponent; 95% CIs clustered by deal",
        ["side", "score [95% CI]", "games", "deals"],
        [
            [
                f"{r.base.name} (base)",
                fmt.fmt_pct_ci(b["score"], b["lo"], b["hi"]),
                fmt.fmt_int(b["games"]),
                fmt.fmt_int(b["deals"]),
            ],
            [
                f"{r.tuned.name} (tuned)",
                fmt.fmt_pct_ci(t["score"], t["lo"], t["hi"]),
                fmt.fmt_int(t["games"]),
                fmt.fmt_int(t["deals"]),
            ],
        ],
    )
    typer.echo(
        f"difference tuned − base: {fmt.fmt_pp_ci(d['mean'], d['lo'], d['hi'])} "
        f"(paired by deal, {fmt.fmt_int(d['n'])} deals, p = {fmt.fmt_p(d['p'])})"
    )
    table(
        f"The {len(r.finalists)} best candidates of the search, played again on the fresh "
        "deals (the screen score is on the search's deals: it carries the winner's curse)",
        ["evaluation", "screen score", "fresh score [95% CI]", "picked"],
        [
            [
                str(f["index"]),
                f"{100 * f['screen']:.1f}%",
                fmt.fmt_pct_ci(f["score"], f["lo"], f["hi"]),
                "yes" if f["index"] == r.pick_index else "",
            ]
            for f in r.finalists
        ],
        left=1,
    )
    sim = r.evaluated
    cost = (
        f"{sim} simulated in {r.search_s:.1f} s ({r.s_per_eval:.2f} s per evaluation)"
        if sim
        else f"none simulated ({r.search_s:.1f} s)"
    )
    typer.echo(
        f"search: {len(r.history)} evaluations (popsize {r.popsize}), {cost}, "
        f"{len(r.history) - sim} read from the store"
    )
    if out is not None:
        typer.echo(f"wrote {out} (a strategy like any other: --a {out})")


BudgetOpt = Annotated[
    int,
    typer.Option("--budget", help="Candidates the search plays (evaluations, base included)."),
]
GamesOpt = Annotated[
    int,
    typer.Option("--games", help="Games per opponent per evaluation (seat-swapped pairs)."),
]
TopOpt = Annotated[
    int,
    typer.Option("--top", help="Best candidates played again on fresh deals."),
]
RefineOpt = Annotated[
    int,
    typer.Option("--refine", help="Games of the fresh re-evaluation, as a multiple of --games."),
]
StepOpt = Annotated[
    float,
    typer.Option(
        "--step",
        help="The search's first step, as a share of each weight's range (small: stay near "
        "the base).",
    ),
]
BoundsOpt = Annotated[
    str | None,
    typer.Option(
        "--bounds",
        help="A tune.toml of bounds and fixed keys (default configs/<game>/tune.toml).",
    ),
]


def add_tune_commands(sub: typer.Typer, home: Game, defaults: dict) -> None:
    """``tune`` and ``exploit`` (:mod:`balance.tune`, ``docs/tuning.md``)."""
    game = home.name
    default_strategy = str(defaults["strategy"])
    field = list(defaults["scripted"])

    @sub.command("tune")
    @plays_games
    def tune_cmd(
        strategy: Annotated[
            str, typer.Option("--strategy", help="The strategy to tune (its weights start here).")
        ] = default_strategy,
        vs: Annotated[
            str,
            typer.Option(
                "--vs", help="Opponents, comma-separated (names or .toml paths), or 'field'."
            ),
        ] = "field",
        variant: VariantOpt = "base",
        rule: RuleOpt = None,
        budget: BudgetOpt = 100,
        games: GamesOpt = 1000,
        seed: SeedOpt = 1,
        out: Annotated[
            Path | None,
            typer.Option("--out", help="Where to write it (default tuned/<game>-<name>.toml)."),
        ] = None,
        name: Annotated[
            str | None, typer.Option("--name", help="The tuned strategy's name.")
        ] = None,
        bounds: BoundsOpt = None,
        top: TopOpt = 3,
        refine: RefineOpt = 4,
        step: StepOpt = 0.01,
        per_deck: Annotated[
            str | None,
            typer.Option(
                "--per-deck",
                help="Games with decks: tune the strategy once per deck ('all': every "
                "reference deck, or names), into one file with a table per Primal.",
            ),
        ] = None,
        force: Annotated[
            bool,
            typer.Option("--force", help="Replace a file another tune (other settings) wrote."),
        ] = False,
        threads: ThreadsOpt = None,
        results: ResultsOpt = None,
        as_json: JsonOpt = False,
    ):
        """Tune a strategy's weights with CMA-ES against --vs: every candidate on the
        same deals, the best few again on fresh deals; writes a strategy TOML."""
        from balance import config, runner
        from balance import tune as tu

        tu.check_options(budget, games, top, refine, step)
        runner.check_seed(seed)
        rs = config.resolve_variant(game, with_rules(variant, rule))
        bases = [config.load_strategy(game, strategy)]
        if per_deck is not None:
            if not home.card_sets:
                raise UserError(f"--per-deck needs a game with decks; {game} has none")
            decks = config.reference_deck_names(game)
            wanted = [t.strip() for t in per_deck.split(",") if t.strip()]
            if wanted != ["all"]:
                wanted = [config.unique_name(t, decks, f"{game} deck") for t in wanted]
                if not wanted or len(set(wanted)) != len(wanted):
                    raise UserError("--per-deck: name each deck once, or 'all'")
            pure = strategy.partition("@")[0]
            bases = [
                config.load_strategy(game, f"{pure}@{d}")
                for d in (decks if wanted == ["all"] else wanted)
            ]
        base = bases[0]
        opponents = _opponents(game, vs, field)
        name = _check_name(name or f"{base.name.partition('@')[0]}-tuned")
        path = tu.check_out(out if out is not None else tu.default_out(game, name))
        from balance.paths import check_replace, experiment_id, record_written

        # the tuned strategy's identity: what it starts from, plays against and
        # on; a rerun with a larger budget refines the same experiment
        experiment = experiment_id(
            "tune",
            game,
            name,
            [b.name for b in bases],
            vs,
            with_rules(variant, rule),
            seed,
            per_deck,
        )
        check_replace(path, experiment, "--out", force)
        opts = _search_options(rs, budget, games, seed, results, threads, bounds, top, refine, step)
        with runner.tally() as played:
            found = [tu.tune(game, b, opponents, name=name, **opts) for b in bases]
        if per_deck is None:
            tu.write_strategy(found[0], path)
        else:
            tu.write_per_primal(found, path)
        record_written(path, experiment, runner.command_line())
        for r in found:
            tu.record(results, r, "tune")
        what = f"tune of {base.name if per_deck is None else f'{len(found)} decks'}: " + (
            played.line()
        )
        if as_json:
            rows = [tu.result_json(r, path) for r in found]
            echo_json(rows[0] if per_deck is None else rows)
            done(what, True)
            return
        for r in found:
            _tune_lines(r, path if r is found[-1] else None)
        done(what)

    @sub.command("exploit")
    @plays_games
    def exploit_cmd(
        target: Annotated[
            str | None,
            typer.Argument(help="The strategy to exploit (a name or a .toml path)."),
        ] = None,
        every: Annotated[
            bool, typer.Option("--all", help="Every named strategy, one after another.")
        ] = False,
        start: Annotated[
            str | None,
            typer.Option(
                "--from",
                help="Start the response here (default: the named strategy that beats "
                "the target most).",
            ),
        ] = None,
        variant: VariantOpt = "base",
        rule: RuleOpt = None,
        budget: BudgetOpt = 100,
        games: GamesOpt = 1000,
        seed: SeedOpt = 1,
        out: Annotated[
            Path,
            typer.Option(
                "--out",
                help="Folder for the responses (<game>-exploit-<strategy>.toml).",
                callback=dir_option("--out"),
            ),
        ] = Path("tuned"),
        bounds: BoundsOpt = None,
        top: TopOpt = 3,
        refine: RefineOpt = 4,
        step: StepOpt = 0.01,
        force: Annotated[
            bool,
            typer.Option("--force", help="Replace a file another exploit (other settings) wrote."),
        ] = False,
        threads: ThreadsOpt = None,
        results: ResultsOpt = None,
        as_json: JsonOpt = False,
    ):
        """How exploitable a strategy is: tune a best response to it and report how far
        it beats it (exploitability = the response's score − 50%, on fresh deals)."""
        from balance import config, fmt, runner
        from balance import tune as tu

        if (target is None) == (not every):
            raise UserError("name one strategy to exploit, or --all (not both)")
        tu.check_options(budget, games, top, refine, step)
        runner.check_seed(seed)
        rs = config.resolve_variant(game, with_rules(variant, rule))
        targets = (
            [config.load_strategy(game, s) for s in config.strategy_names(game)]
            if every
            else [config.load_strategy(game, target)]
        )
        first = config.load_strategy(game, start) if start is not None else None
        from balance.paths import check_replace, experiment_id, record_written

        paths, ids = [], []
        for t in targets:
            name = _check_name(f"exploit-{t.name.partition('@')[0]}")
            paths.append(tu.check_out(out / f"{game}-{name}.toml"))
            # the response's identity: the target, the start, the rules and the seed
            ids.append(
                experiment_id("exploit", game, t.name, start, with_rules(variant, rule), seed)
            )
            check_replace(paths[-1], ids[-1], "--out", force)
        opts = _search_options(rs, budget, games, seed, results, threads, bounds, top, refine, step)
        with runner.tally() as played:
            found = [tu.exploit(game, t, start=first, **opts) for t in targets]
        for e, p, x in zip(found, paths, ids, strict=True):
            tu.write_strategy(e.tune, p)
            record_written(p, x, runner.command_line())
            tu.record(results, e.tune, "exploit", e.screen_keys)
        what = f"exploit of {len(found)} strateg{'y' if len(found) == 1 else 'ies'}: " + (
            played.line()
        )
        rows = [
            {
                "strategy": e.target.name,
                "best_named_response": e.tune.base.name,
                "best_named_score": e.tune.base_score,
                "tuned_score": {k: v for k, v in e.tune.tuned_score.items() if k != "spec"},
                "exploitability": e.exploitability,
                "difference": e.tune.diff,
                "screen": e.screen,
                "out": str(p),
                "s_per_evaluation": e.tune.s_per_eval,
            }
            for e, p in zip(found, paths, strict=True)
        ]
        if as_json:
            echo_json(rows)
            done(what, True)
            return
        r0 = found[0].tune
        table(
            f"{home.title} {rs.name}: how far a tuned best response beats each strategy "
            f"({budget} evaluations of {fmt.fmt_int(games)} games on seed {seed}; scores on "
            f"fresh deals, {fmt.fmt_int(r0.fresh_games)} games each, seed {r0.fresh_seed}; "
            "95% CIs clustered by deal)",
            [
                "strategy",
                "best named response",
                "its score [95% CI]",
                "tuned response [95% CI]",
                "exploitability [95% CI]",
                "written",
            ],
            [
                [
                    e.target.name,
                    e.tune.base.name,
                    fmt.fmt_pct_ci(
                        e.tune.base_score["score"], e.tune.base_score["lo"], e.tune.base_score["hi"]
                    ),
                    fmt.fmt_pct_ci(
                        e.tune.tuned_score["score"],
                        e.tune.tuned_score["lo"],
                        e.tune.tuned_score["hi"],
                    ),
                    fmt.fmt_pp_ci(
                        e.exploitability["mean"], e.exploitability["lo"], e.exploitability["hi"]
                    ),
                    str(p),
                ]
                for e, p in zip(found, paths, strict=True)
            ],
            left=2,
        )
        typer.echo(
            "exploitability = the tuned response's score − 50% (a lower bound at this "
            "budget: a stronger search may find more)"
        )
        done(what)
