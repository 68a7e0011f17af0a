"""Four-suits RPG commands of the ``balance`` CLI: ``balance suits tasks``
(Task odds, exact and simulated, and as the deck runs down) and ``balance
suits struggle`` (the scripted policies against each other).

The main CLI registers them on its ``suits`` sub-app with :func:`register`.
Heavy imports happen inside command bodies.
"""

from __future__ import annotations

import math
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
from balance.cli.output import bench_played, done, echo_json, records, show_bench, table
from balance.config import with_rules
from balance.errors import UserError

PageOpt = Annotated[
    Path | None,
    typer.Option(
        "--page", help="Also write a self-contained HTML page of the results to this .html file."
    ),
]


def _check_page(page: Path | None) -> None:
    if page is None:
        return
    if page.suffix.lower() not in (".html", ".htm"):
        raise UserError(f"--page must name an .html file, got '{page}'")
    from balance.paths import writable_file

    writable_file(page, "--page")


ForceOpt = Annotated[
    bool, typer.Option("--force", help="Replace a page another experiment wrote there.")
]


def _claim_page(page: Path | None, plan, force: bool) -> str:
    """The experiment ``plan`` is, and a one-line refusal when ``page`` was
    written by another (the study's own page included) and ``force`` is not given."""
    from balance.paths import check_replace, experiment_id

    experiment = experiment_id("suits", repr(plan))
    if page is not None:
        check_replace(page, experiment, "--page", force)
    return experiment


def _page_and_json(
    res, page: Path | None, as_json: bool, tasks=None, struggle=None, experiment: str = ""
) -> bool:
    """Write the page (if asked) and, with ``--json``, print every table; True
    when the JSON was printed (nothing else to show)."""
    from balance.games.suits import analysis as suits

    if page is not None:
        from balance.paths import record_written
        from balance.runner import command_line

        suits.write_page(tasks, struggle, page)
        record_written(page, experiment, command_line())
    if as_json:
        echo_json(
            {k: records(v) for k, v in res.tables().items()}
            | {"manifest": res.manifest, "page": str(page) if page else None}
        )
    return as_json


def tasks(
    variant: VariantOpt = "base",
    rule: RuleOpt = None,
    suit: Annotated[
        str,
        typer.Option(
            "--suit",
            help="The Task's suit: clubs, spades, diamonds or hearts (the odds are the same for every suit).",
        ),
    ] = "clubs",
    n: Annotated[
        int, typer.Option("-n", help="Fresh hands per target (at most 200,000,000).")
    ] = 200_000,
    characters: Annotated[
        int,
        typer.Option(
            "--characters",
            help="Characters run down per target and mode (each attempts the Task until "
            "disabled; at most 20,000,000).",
        ),
    ] = 20_000,
    seed: SeedOpt = 1,
    threads: ThreadsOpt = None,
    results: ResultsOpt = None,
    page: PageOpt = None,
    force: ForceOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Task odds for every target 2–A: in suit, Difficult and either way from a
    fresh hand (exact beside simulated), the cards a Task costs, and how the odds
    fall as the deck runs down; how many attempts and successes a deck lasts."""
    variant = with_rules(variant, rule)
    from balance import fmt
    from balance.games.suits import analysis as suits
    from balance.runner import set_threads

    _check_page(page)
    plan = suits.TasksPlan(variant, n, characters, suit, seed).check()
    experiment = _claim_page(page, plan, force)
    set_threads(threads)
    res = suits.run_tasks(plan, threads=threads, results=results, progress=not as_json)
    from balance.store import results_dir

    where = results_dir(results) / "_suits_tasks"
    what = (
        f"{'read from the store' if res.cached else 'simulated'} {fmt.fmt_int(plan.hands)} "
        f"hands and {fmt.fmt_int(plan.characters)} characters per target "
        f"(13 targets, seed {plan.seed}, {plan.variant}); "
        + (f"store: {where}" if res.cached else f"stored in {where}")
        + (f"; page: {page}" if page else "")
    )
    if _page_and_json(res, page, as_json, tasks=res, experiment=experiment):
        done(what, True)
        return
    rows = []
    for r in res.fresh.itertuples():
        rows.append(
            [
                r.target_name,
                fmt.shorten(r.example, 34),
                fmt.fmt_pct(r.in_suit_exact, 2),
                fmt.fmt_pct_ci(r.in_suit_sim, r.in_suit_lo, r.in_suit_hi),
                fmt.fmt_pct(r.difficult_exact, 2),
                fmt.fmt_pct_ci(r.difficult_sim, r.difficult_lo, r.difficult_hi),
                fmt.fmt_pct(r.either_exact, 2),
                fmt.fmt_pct_ci(r.either_sim, r.either_lo, r.either_hi),
                f"{r.cards_exact:.3f}",
            ]
        )
    table(
        f"{plan.suit.capitalize()} Tasks from a fresh hand: exact odds and simulated "
        f"[95% CI], {fmt.fmt_int(plan.hands)} hands per target ({plan.variant})",
        [
            "target",
            "rulebook example",
            "in suit",
            "simulated",
            "Difficult",
            "simulated",
            "either",
            "simulated",
            "cards",
        ],
        rows,
        left=2,
    )
    rows = []
    for r in res.lasting[res.lasting["mode"] == "either"].itertuples():
        rows.append(
            [
                r.target_name,
                fmt.fmt_pct_ci(r.first_rate, r.first_lo, r.first_hi),
                f"{r.attempts:.1f} [{r.attempts_lo:.1f}, {r.attempts_hi:.1f}]",
                f"{r.successes:.2f} [{r.successes_lo:.2f}, {r.successes_hi:.2f}]",
                f"{r.difficult_successes:.2f}",
                f"{r.cards_per_attempt:.2f}",
                f"{r.cards_per_success:.1f}" if math.isfinite(r.cards_per_success) else "∞",
            ]
        )
    table(
        f"The same Task until disabled (in suit, else Difficult; "
        f"{fmt.fmt_int(plan.characters)} characters per target)",
        [
            "target",
            "first attempt",
            "attempts",
            "successes",
            "of them Difficult",
            "cards/attempt",
            "cards/success",
        ],
        rows,
    )
    worst = float(
        res.fresh[[f"{m}_z" for m in ("in_suit", "difficult", "either")]].abs().max().max()
    )
    typer.echo(
        f"simulation vs exact: largest gap {worst:.2f} standard errors over "
        f"{len(res.fresh) * 3} comparisons"
    )
    done(what)


def struggle(
    variants: Annotated[
        str,
        typer.Option(
            "--variants", help="Comma-separated rule sets, each base or variants joined by +."
        ),
    ] = "base,ties-to-attacker,to-the-death",
    rule: RuleOpt = None,
    policies: Annotated[
        str | None,
        typer.Option(
            "--policies", help="Comma-separated strategies (default: the eight scripted policies)."
        ),
    ] = None,
    n: Annotated[
        int, typer.Option("-n", help="Struggles per policy pairing (seat-swapped pairs).")
    ] = 10_000,
    seed: SeedOpt = 1,
    threads: ThreadsOpt = None,
    results: ResultsOpt = None,
    page: PageOpt = None,
    force: ForceOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Scripted policies against each other: attack with the highest card or the
    lowest likely to win; defend or absorb; damage from the hand or the deck.
    Score against the field, what each choice is worth, how long struggles last
    and the defender's tie advantage."""
    from balance import config, fmt, runner
    from balance.games.suits import analysis as suits
    from balance.runner import check_games, set_threads

    _check_page(page)
    variants = with_rules(variants, rule)
    vs = tuple(v.strip() for v in variants.split(",") if v.strip())
    for v in vs:
        config.resolve_variant("suits", v)
    pols = (
        tuple(p.strip() for p in policies.split(",") if p.strip()) if policies else suits.POLICIES
    )
    for p in pols:
        config.load_strategy("suits", p)
    plan = suits.StrugglePlan(vs, pols, check_games(n), seed).check()
    experiment = _claim_page(page, plan, force)
    set_threads(threads)
    with runner.tally() as played:
        res = suits.run_struggle(plan, threads=threads, results=results, progress=not as_json)
    what = played.line() + (f"; page: {page}" if page else "")
    if _page_and_json(res, page, as_json, struggle=res, experiment=experiment):
        done(what, True)
        return
    table(
        f"Each policy against the field ({fmt.fmt_int(plan.games)} struggles per pairing)",
        ["policy", "rules", "score [95% CI]", "wins", "draws", "games"],
        [
            [
                r.policy,
                r.variant,
                fmt.fmt_pct_ci(r.score, r.lo, r.hi),
                fmt.fmt_int(r.wins),
                fmt.fmt_int(r.draws),
                fmt.fmt_int(r.games),
            ]
            for r in res.policies.itertuples()
        ],
        left=2,
    )
    if not res.factors.empty:
        table(
            "What each choice is worth (paired change in score, every opponent, same deals)",
            ["choice", "rules", "change", "Δ score [95% CI]", "p", "deals"],
            [
                [
                    r.choice,
                    r.variant,
                    f"{r.from_level} → {r.to_level}",
                    fmt.fmt_pp_ci(r.effect, r.lo, r.hi),
                    fmt.fmt_p(r.p),
                    fmt.fmt_int(r.deals),
                ]
                for r in res.factors.itertuples()
            ],
            left=3,
        )
    table(
        "How long struggles last (mirror matches)",
        [
            "policy",
            "rules",
            "attacks [95% CI]",
            "first disabled at",
            "first dead at",
            "disabled",
            "dead",
            "both disabled",
            "round cap",
        ],
        [
            [
                r.policy,
                r.variant,
                f"{r.attacks:.1f} [{r.attacks_lo:.1f}, {r.attacks_hi:.1f}]",
                f"{r.disabled_at:.1f}" if r.disabled_n else "–",
                f"{r.dead_at:.1f}" if r.dead_n else "–",
                fmt.fmt_int(r.disabled),
                fmt.fmt_int(r.dead),
                fmt.fmt_int(r.both_disabled),
                fmt.fmt_int(r.round_cap),
            ]
            for r in res.length.itertuples()
        ],
        left=2,
    )
    if not res.ties.empty:
        table(
            "The defender's tie advantage (mirror matches)",
            [
                "policy",
                "rules",
                "ties per struggle",
                "share of answers tied",
                "first mover wins [95% CI]",
                "attacks",
            ],
            [
                [
                    r.policy,
                    r.variant,
                    f"{r.ties:.2f}",
                    fmt.fmt_pct(r.tie_share) if r.answers else "no answers",
                    fmt.fmt_pct_ci(r.first_wins, r.first_lo, r.first_hi),
                    f"{r.attacks:.1f}",
                ]
                for r in res.ties.itertuples()
            ],
            left=2,
        )
    done(what)


def register(app: typer.Typer) -> None:
    """Add ``tasks`` and ``struggle`` to the ``suits`` sub-app."""
    app.command("tasks")(plays_games(tasks))
    app.command("struggle")(plays_games(struggle))


def register_bench(bench_app: typer.Typer) -> None:
    """``balance bench suits``: its own figures."""
    bench_app.command("suits")(bench_suits)


# the timed Task draws, at most: 100 times the default (about a minute a thread)
MAX_BENCH_TASKS = 400_000_000


def bench_suits(
    n: Annotated[int, typer.Option("-n", help="Struggles for the threaded timings.")] = 400_000,
    tasks_n: Annotated[
        int, typer.Option("--tasks", help="Fresh-hand task draws for the threaded timings.")
    ] = 4_000_000,
    a: Annotated[
        str, typer.Option("--a", help="Strategy A of the timed struggles.")
    ] = "high-defend-hand",
    b: Annotated[
        str, typer.Option("--b", help="Strategy B of the timed struggles.")
    ] = "high-defend-hand",
    as_json: JsonOpt = False,
):
    """Task draws/s and struggles/s at 1 and 2 threads (targets 1,000,000 and 100,000 with
    2 threads), numba vs pure Python, compile time, memory."""
    from balance import bench
    from balance.games.suits import bench as suits_bench

    if not 1 <= tasks_n <= MAX_BENCH_TASKS:
        raise UserError(
            f"--tasks must be a number of draws from 1 to {MAX_BENCH_TASKS:,}, got {tasks_n:,}"
        )
    res = suits_bench.bench_tasks(tasks_n)
    res.update(bench.bench_game("suits", n, a=a, b=b, pure_n=200))
    show_bench(res, as_json, f"{tasks_n:,} Task draws, then " + bench_played(n, f"{a} vs {b}"))
