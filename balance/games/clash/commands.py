"""Clash of Steel's own commands: ``loadouts`` (the loadout matrix),
``ranges``, ``initiative`` and its benchmark (with the timed loadout matrix)."""

from __future__ import annotations

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
from balance.cli.output import bench_played, done, echo_json, records, show_bench, table
from balance.config import with_rules
from balance.errors import UserError

GAME = "clash"


def register(app: typer.Typer) -> None:
    """Add ``loadouts``, ``ranges`` and ``initiative`` to ``balance clash``."""
    app.command("loadouts")(plays_games(clash_loadouts))
    app.command("ranges")(plays_games(clash_ranges))
    app.command("initiative")(plays_games(clash_initiative))


def register_bench(bench_app: typer.Typer) -> None:
    """``balance bench clash``: the standard figures and the loadout matrix."""
    bench_app.command(GAME)(bench_clash)


LoadoutStrategyOpt = Annotated[
    str, typer.Option("--strategy", help="The strategy playing every (row) loadout.")
]
PairingGamesOpt = Annotated[int, typer.Option("-n", help="Games per loadout pairing.")]


def _record(command: str, variant: str, pairings, n: int, seed: int, results, runs) -> None:
    """Record a loadout-matrix experiment (every pairing's matrix) in the store."""
    from balance import experiments

    first = runs[0][0].spec
    plan = {
        "variant": experiments.ruleset_plan(first.ruleset),
        "pairings": [f"{a}:{b}" for a, b in pairings],
        "n": n,
        "seed": seed,
    }
    experiments.record(results, GAME, command, plan, [r.key for rs in runs for r in rs])


def clash_loadouts(
    strategy: LoadoutStrategyOpt = "counter",
    vs: Annotated[
        str | None,
        typer.Option("--vs", help="The strategy playing the column loadouts (default: the same)."),
    ] = None,
    also: Annotated[
        str | None,
        typer.Option(
            "--also",
            help="More pairings, comma-separated, each 'X' (X vs X) or 'X:Y' (X vs Y): "
            "each plays its own matrix, and the item-pair and maneuver scores are "
            "shown under every pairing.",
        ),
    ] = None,
    variant: VariantOpt = "base",
    rule: RuleOpt = None,
    n: PairingGamesOpt = 2000,
    seed: SeedOpt = 1,
    threads: ThreadsOpt = None,
    results: ResultsOpt = None,
    as_json: JsonOpt = False,
):
    """The loadout matrix, every legal loadout against every one (27 × 27; 30 × 30 with
    allow_shield_spear), seat-swapped: item pairs, maneuvers, each item's marginal
    value, the best response to each loadout and the Nash-averaged strength."""
    variant = with_rules(variant, rule)
    from balance import fmt, loadouts, runner

    pairings = [(strategy, vs or strategy)]
    for item in (also or "").split(","):
        if item.strip():
            x, _, y = item.strip().partition(":")
            pairings.append((x.strip(), (y or x).strip()))
    if len(set(pairings)) != len(pairings):
        raise UserError("a strategy pairing is listed twice (--strategy/--vs and --also)")
    for a, b in pairings:  # every name is checked before the first game is played
        loadouts.loadout_specs(GAME, variant, a, b, 2, seed)
    with runner.tally() as played:
        runs = [
            loadouts.run_matrix(GAME, variant, a, b, n, seed, threads, results) for a, b in pairings
        ]
    _record("loadouts", variant, pairings, n, seed, results, runs)
    t = loadouts.loadout_tables(GAME, runs[0])
    more = len(runs) > 1
    if more:
        t["loadout_pairings"] = loadouts.pairing_choice_table(GAME, sum(runs, []))
    if as_json:
        echo_json({k: records(v) for k, v in t.items()})
        done(played.line(), True)
        return
    games = fmt.fmt_int(int(t["loadout_matrix"]["games"].min()))
    pct = fmt.fmt_pct_ci
    table(
        f"Item pairs: pooled score of the loadouts holding them ({strategy} vs {vs or strategy}, "
        f"{games} games a pairing)",
        ["items", "loadouts", "score [95% CI]", "games"],
        [
            [r.items, r.loadouts, pct(r.score, r.score_lo, r.score_hi), fmt.fmt_int(r.games)]
            for r in t["item_pairs"].itertuples()
        ],
    )
    table(
        "Maneuvers",
        ["maneuver", "loadouts", "score [95% CI]", "games"],
        [
            [r.maneuver, r.loadouts, pct(r.score, r.score_lo, r.score_hi), fmt.fmt_int(r.games)]
            for r in t["maneuvers"].itertuples()
        ],
    )
    table(
        "Each item's marginal value: loadouts with it minus without it",
        ["item", "with", "without", "marginal [95% CI]"],
        [
            [
                r.item,
                fmt.fmt_pct(r.with_item),
                fmt.fmt_pct(r.without_item),
                fmt.fmt_pp_ci(r.marginal, r.marginal_lo, r.marginal_hi),
            ]
            for r in t["items"].itertuples()
        ],
    )
    lo = t["loadouts"].sort_values("score", ascending=False)
    has_nash = "nash_rating" in lo.columns
    table(
        f"Loadouts against the field of all {len(lo)}"
        + (" and their Nash averages" if has_nash else ""),
        ["loadout", "score vs field [95% CI]"]
        + (["Nash weight", "Nash average [95% CI]"] if has_nash else []),
        [
            [r.loadout, pct(r.score, r.score_lo, r.score_hi)]
            + (
                [
                    fmt.fmt_pct_ci(r.nash_p, r.nash_p_lo, r.nash_p_hi),
                    fmt.fmt_pp_ci(r.nash_rating, r.nash_lo, r.nash_hi),
                ]
                if has_nash
                else []
            )
            for r in lo.itertuples()
        ],
    )
    table(
        "Best response to each loadout",
        ["against", "best response", "its score [95% CI]"],
        [
            [r.against, r.best_response, pct(r.score, r.score_lo, r.score_hi)]
            for r in t["best_response"].itertuples()
        ],
    )
    if more:
        lp = t["loadout_pairings"]
        names = list(dict.fromkeys(lp["pairing"]))
        rows = []
        for (kind, choice), g in lp.groupby(["kind", "choice"], sort=False):
            by = {r.pairing: r for r in g.itertuples()}
            rows.append(
                [choice, kind]
                + [
                    pct(by[x].score, by[x].score_lo, by[x].score_hi) if x in by else "—"
                    for x in names
                ]
            )
        table(
            "Item pairs and maneuvers under each strategy pairing (score vs field [95% CI])",
            ["choice", "kind", *names],
            rows,
        )
    done(played.line())


def clash_ranges(
    strategy: LoadoutStrategyOpt = "counter",
    variant: VariantOpt = "base",
    rule: RuleOpt = None,
    n: PairingGamesOpt = 2000,
    seed: SeedOpt = 1,
    threads: ThreadsOpt = None,
    results: ResultsOpt = None,
    as_json: JsonOpt = False,
):
    """Where each loadout wins its rounds: the share of rounds won at each range,
    against the field of all loadouts (the loadout matrix's runs)."""
    variant = with_rules(variant, rule)
    from balance import fmt, loadouts, runner

    with runner.tally() as played:
        runs = loadouts.run_matrix(GAME, variant, strategy, strategy, n, seed, threads, results)
    _record("ranges", variant, [(strategy, strategy)], n, seed, results, [runs])
    t = loadouts.ranges_by_loadout(GAME, runs)
    if as_json:
        echo_json(records(t))
        done(played.line(), True)
        return
    rows = []
    for name, g in t.groupby("loadout", sort=False):
        cells = [name]
        for r in g.itertuples():
            cells.append(
                "—"
                if not r.rounds
                else f"{fmt.fmt_pct_ci(r.share, r.share_lo, r.share_hi)} of {fmt.fmt_int(r.rounds)}"
            )
        rows.append(cells)
    table(
        f"Share of rounds won at each range ({strategy}, every loadout vs every loadout; "
        "rounds of a game are not independent, so the CIs are indicative)",
        ["loadout", "Hand", "Arm", "Step", "Reach"],
        rows,
    )
    done(played.line())


def clash_initiative(
    strategies: Annotated[
        str,
        typer.Option("--strategies", help="Comma-separated strategies: every pairing is played."),
    ] = "random,aggressive,counter,ranger,miser,bluffer",
    variant: VariantOpt = "base",
    rule: RuleOpt = None,
    n: Annotated[int, typer.Option("-n", help="Games per strategy pairing.")] = 20000,
    seed: SeedOpt = 1,
    threads: ThreadsOpt = None,
    results: ResultsOpt = None,
    as_json: JsonOpt = False,
):
    """The value of winning the opening bid, by the size of the winning bid."""
    variant = with_rules(variant, rule)
    from balance import analysis, fmt, loadouts, runner

    with runner.tally() as played:
        _, _, snames, runs = analysis.compare_command(
            GAME,
            variant,
            strategies,
            n,
            seed,
            threads,
            1 << 15,
            results,
            with_tables=False,
            record_as="initiative",
        )
    t = loadouts.initiative_table(list(runs.values()))
    what = f"{len(runs)} pairings of {len(snames)} strategies under {variant}: " + played.line()
    if as_json:
        echo_json(records(t))
        done(what, True)
        return
    table(
        "The opening bid's winner: win rate by the size of its winning bid (all pairings pooled)",
        ["winning bid", "games", "bid winner's win rate [95% CI]", "draws", "score"],
        [
            [
                str(r.bid),
                fmt.fmt_int(r.games),
                fmt.fmt_pct_ci(r.winrate, r.winrate_lo, r.winrate_hi),
                fmt.fmt_int(r.draws),
                fmt.fmt_pct(r.score),
            ]
            for r in t.itertuples()
        ],
    )
    done(what)


# the timed loadout matrix's games a cell, at most: 100 times the default
MAX_MATRIX_GAMES = 1_000_000


def bench_clash(
    n: Annotated[int, typer.Option("-n", help="Games for the threaded timings.")] = 400_000,
    matrix_games: Annotated[
        int,
        typer.Option(
            "--matrix-games",
            help="Games per cell of the timed 27 × 27 loadout matrix "
            "(counter vs counter); 0 skips it.",
        ),
    ] = 10_000,
    as_json: JsonOpt = False,
):
    """Games/s at 1 and 2 threads (counter vs aggressive), numba vs pure Python, compile
    time, memory, and the full loadout matrix end to end (target < 60 s)."""
    from balance import bench

    if matrix_games < 0 or matrix_games % 2:
        raise UserError(f"--matrix-games must be 0 or a positive even number, got {matrix_games}")
    if matrix_games > MAX_MATRIX_GAMES:  # 729 cells: the default's 100 times is hours
        raise UserError(
            f"--matrix-games must be at most {MAX_MATRIX_GAMES:,} games a cell (the matrix "
            f"has 729 cells), got {matrix_games:,}"
        )
    res = bench.bench_game(GAME, n, a="counter", b="aggressive")
    if matrix_games:
        res.update(bench.bench_matrix(GAME, "counter", matrix_games))
    played = bench_played(n, "counter vs aggressive")
    if matrix_games:
        played += (
            f"; the loadout matrix at {matrix_games:,} games a cell in a fresh process, "
            "into a temporary store"
        )
    show_bench(res, as_json, played)
