"""Trisk commands of the ``balance`` CLI: the card set, the reference decks
and the equal-power test (``balance trisk cards|skills|decks|power``).

The main CLI registers them on its ``trisk`` sub-app with :func:`register`.
Heavy imports (numba, polars, matplotlib) happen inside command bodies.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from balance.cli.options import JsonOpt, plays_games
from balance.cli.output import bench_played, echo_json, show_bench, table, terminal_width
from balance.errors import UserError

CardSetOpt = Annotated[
    str,
    typer.Option(
        "--card-set",
        help="'reference' (configs/trisk/cards.toml) or a path to a designer's set "
        "(checked under the base rules: balance trisk variants).",
    ),
]


def _base_rules() -> dict:
    """The base ruleset's rules: a listed set is checked as it would be played
    (a card that draws is refused unless allow_draw_effects is true, R3)."""
    from balance import config

    return config.resolve_variant("trisk", "base").rules


def _show(rows: list[dict], title: str, columns: list[str], as_json: bool) -> None:
    if as_json:
        echo_json(rows)
        return
    table(
        title,
        columns,
        [[("" if r.get(c) is None else r.get(c)) for c in columns] for r in rows],
        left=len(columns),  # text columns: left-aligned
        keep=1,  # the name is never cut; long text wraps on a narrow terminal
    )


#: What every column of ``balance trisk cards`` means (the rulebook's Stats
#: table, /work/shared/rules/trisk.txt, and the point budget); the legend under
#: the table explains the columns it shows, in this order.
CARD_COLUMNS = {
    "name": None,
    "type": "type: Primal, Creation, Upgrade or Sorcery",
    "kind": "kind: the creature it is (an Upgrade goes onto the kind its type line names)",
    "MIG": "MIG, CUN, WIS: Might, Cunning and Wisdom, the Red, Green and Blue shades "
    "(0-9); a Primal may play a card only if none of the three is above its own, so "
    "they decide who plays a card, not its power",
    "CUN": None,
    "WIS": None,
    "HP": "HP: hit points, the damage it can take before it is destroyed",
    "AP": "AP: attack points, the damage it deals when it attacks",
    "MP": "MP: magic points, the X of Blessings and Curses (the Primal's MP) or of a "
    "Ritual (the sacrificed creation's)",
    "attack": "attack: the level from which it may attack",
    "abilities": "abilities: each with its level (@) and what it does (balance trisk skills)",
    "points": "points: its value under the set's point budget (configs/trisk/BUDGET.md)",
    "target": "target: the points its type must have (Creation, Upgrade by chain depth, "
    "Sorcery; Primals are exempt)",
    "budget": "budget: 'on' its target, 'OFF' by how many points, or 'exempt' (Primals)",
    "Primals": "Primals: how many of the set's Primals may play it (--wide names them)",
    "primals": "primals: the Primals that may play it",
}
#: The default table's columns (fits 100 columns); --wide shows WIDE_COLUMNS.
COMPACT_COLUMNS = [
    "name",
    "type",
    "MIG",
    "CUN",
    "WIS",
    "HP",
    "AP",
    "MP",
    "attack",
    "budget",
    "Primals",
]
WIDE_COLUMNS = [
    "name",
    "type",
    "kind",
    "MIG",
    "CUN",
    "WIS",
    "HP",
    "AP",
    "MP",
    "attack",
    "abilities",
    "points",
    "target",
    "budget",
    "primals",
]


def card_legend(columns: list[str], width: int = 100) -> str:
    """The legend explaining every abbreviation and column among ``columns``,
    wrapped at ``width``."""
    import textwrap

    text = "Columns: " + "; ".join(CARD_COLUMNS[c] for c in columns if CARD_COLUMNS.get(c)) + "."
    return textwrap.fill(text, width=width, break_on_hyphens=False)


def _count(names: str) -> str:
    """How many names a comma-separated list holds."""
    return str(len([n for n in names.split(",") if n.strip()]))


def _budget_cell(r: dict) -> str:
    if r.get("off_budget") is None:
        return "exempt"
    return f"OFF {r['off_by']:+g}" if r["off_budget"] else "on"


def budget_summary(rows: list[dict]) -> str:
    """One line: which cards are off their budget target, by how much, or that none is."""
    priced = [r for r in rows if r.get("off_budget") is not None]
    off = [r for r in priced if r["off_budget"]]
    if not off:
        return f"Budget: all {len(priced)} non-Primal cards are exactly on their target."
    parts = [f"{r['name']} {r['off_by']:+g} ({r['points']:g} vs {r['target']:g})" for r in off]
    return (
        f"Budget: {len(off)} of {len(priced)} non-Primal cards are OFF their target: "
        + "; ".join(parts)
        + "."
    )


def cards(
    card_set: CardSetOpt = "reference",
    wide: Annotated[
        bool,
        typer.Option(
            "--wide",
            "--all",
            help="Every column: kind, abilities, budget points and target, and the "
            "Primals that may play each card (wide: about 200 columns or more).",
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """The card set: every card's stats and whether it is on its point budget,
    with a legend of the columns; --wide adds its kind, abilities, points,
    budget target and the Primals that may play it.

    MIG, CUN, WIS: Might, Cunning and Wisdom (0-9), which Primals may play the
    card; HP: hit points; AP: attack points; MP: magic points (X of Blessings,
    Curses and Rituals); points and target: the point budget of
    configs/trisk/BUDGET.md. With --json (every field, whatever --wide) each
    card also has off_by (points - target) and off_budget."""
    from balance.games.trisk import cards as trisk_cards

    cs = trisk_cards.load_card_set(card_set, _base_rules())
    rows = trisk_cards.card_rows(cs)
    if as_json:
        _show(rows, "", [], True)
        return
    title = f"Trisk card set '{cs.name}' ({len(rows)} cards, digest {cs.digest[:12]})"
    if wide:
        shown = [
            {**r, "target": "" if r["target"] is None else r["target"], "budget": _budget_cell(r)}
            for r in rows
        ]
        _show(shown, title, WIDE_COLUMNS, False)
        columns = WIDE_COLUMNS
    else:
        columns = COMPACT_COLUMNS
        table(
            title,
            columns,
            [
                [r["name"], r["type"]]
                + [str(r[c]) for c in ("MIG", "CUN", "WIS", "HP", "AP", "MP", "attack")]
                + [_budget_cell(r), "" if r["type"] == "Primal" else _count(r["primals"])]
                for r in rows
            ],
            left=2,
        )
    typer.echo(budget_summary(rows))
    typer.echo(card_legend(columns, min(100, terminal_width() or 100)))
    if not wide:
        typer.echo("More columns (kind, abilities, points, target, primals): --wide.")


def skills(card_set: CardSetOpt = "reference", as_json: JsonOpt = False) -> None:
    """The Skill Book: every skill's effect and the cards that carry it."""
    from balance.games.trisk import cards as trisk_cards

    cs = trisk_cards.load_card_set(card_set, _base_rules())
    rows = trisk_cards.skill_rows(cs)
    _show(
        rows,
        f"Trisk Skill Book ({len(rows)} skills)",
        ["skill", "effect", "param", "target", "amount", "coins", "text", "cards"],
        as_json,
    )


def decks(card_set: CardSetOpt = "reference", as_json: JsonOpt = False) -> None:
    """The reference decks: one per Primal, with their neutral swap-in slots."""
    from balance.games.trisk import cards as trisk_cards

    cs = trisk_cards.load_card_set(card_set, _base_rules())
    rows = []
    for name, d in trisk_cards.load_decks(cs).items():
        counts: dict[str, int] = {}
        for r in d.cards:
            counts[cs.names[r]] = counts.get(cs.names[r], 0) + 1
        rows.append(
            {
                "deck": name,
                "primal": cs.names[d.primal],
                "size": d.size,
                "neutral": d.cards.count(cs.neutral),
                "strategy": d.strategy or "",
                "cards": ", ".join(f"{k} x{v}" for k, v in counts.items()),
                "card_counts": counts,
            }
        )
    if as_json:
        echo_json(rows)
        return
    _show(rows, "Trisk reference decks", ["deck", "primal", "size", "neutral", "cards"], False)


def _parse_cards(text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise UserError(
            "--cards names no card; give card names separated by commas, e.g. Bear,Raven"
        )
    lower = [t.lower() for t in items]
    twice = next((t for t, k in zip(items, lower, strict=False) if lower.count(k) > 1), None)
    if twice is not None:
        raise UserError(f"--cards names '{twice}' twice; name each card once")
    return tuple(items)


def power(
    delta: Annotated[
        float | None,
        typer.Option(
            "--delta",
            help="Equivalence margin in points of score per game of the deck holding "
            "the card's copies (default from power.toml: 1).",
        ),
    ] = None,
    alpha: Annotated[
        float | None, typer.Option("--alpha", help="Level of each test (default 0.05).")
    ] = None,
    games: Annotated[
        int | None,
        typer.Option(
            "--games", help="Games per run at the start (one card, Primal and field opponent)."
        ),
    ] = None,
    max_games: Annotated[
        int | None,
        typer.Option(
            "--max-games",
            help="Most games per run a card not yet shown inside or outside the margin "
            "is extended to.",
        ),
    ] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Seed: the same seed gives the same deals.")
    ] = None,
    threads: Annotated[
        int | None,
        typer.Option(
            "--threads", help="Numba threads (default: all cores). Results do not depend on it."
        ),
    ] = None,
    results: Annotated[
        Path | None,
        typer.Option("--results", help="Results store (default: $BALANCE_RESULTS or ./results)."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="The HTML page to write (default reports/trisk-power-<experiment>.html; "
            "reports/trisk-power.html is the study's).",
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option("--force", help="Replace a page another experiment (or the study) wrote."),
    ] = False,
    cards_: Annotated[
        str | None,
        typer.Option("--cards", help="Test only these cards (comma-separated names)."),
    ] = None,
    scale: Annotated[
        float,
        typer.Option("--scale", help="Multiply every game count (e.g. 0.1 for a quick look)."),
    ] = 1.0,
    plan_file: Annotated[
        Path | None, typer.Option("--plan", help="The plan (default configs/trisk/power.toml).")
    ] = None,
    no_regression: Annotated[
        bool, typer.Option("--no-regression", help="Skip the regression on random decks.")
    ] = False,
    card_set: Annotated[
        str | None,
        typer.Option("--card-set", help="Test a designer's set (a path) instead of the variant's."),
    ] = None,
    decks_file: Annotated[
        Path | None,
        typer.Option("--decks", help="Its reference decks (default configs/trisk/decks.toml)."),
    ] = None,
    copies: Annotated[
        int | None,
        typer.Option(
            "--copies",
            help="Neutral copies of each reference deck replaced by the card (default 4: "
            "every neutral slot).",
        ),
    ] = None,
    vs_card: Annotated[
        str | None,
        typer.Option(
            "--vs-card",
            help="Compare every card with this card (swapped in the same way) instead "
            "of the deck as is.",
        ),
    ] = None,
    check_strategy: Annotated[
        str | None,
        typer.Option(
            "--check-strategy",
            help="Each card's effect again under this strategy (default from "
            "power.toml: control; 'none' to skip).",
        ),
    ] = None,
    strategy: Annotated[
        str | None,
        typer.Option(
            "--strategy",
            help="Who plays the card's deck: strategies, comma-separated (default from "
            "power.toml: tempo; 'tuned' plays each deck's tuned weights).",
        ),
    ] = None,
    field_: Annotated[
        str | None,
        typer.Option(
            "--field",
            help="Who plays the field's reference decks, comma-separated (default from "
            "power.toml: tempo).",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """The equal-power test: is every card within ±δ of a neutral card?
    Swap-in and restricted play on common seeds; each card and Primal shown
    inside ±δ (TOST), shown outside it (Holm), or not shown, with the games that
    would settle it; a regression on random decks and the finishes check;
    writes a page. Runs go through the store: an interrupted test continues
    where it stopped."""
    import sys
    import time

    from balance import fmt
    from balance.games.trisk import power as trisk_power

    if out is not None and out.suffix.lower() not in (".html", ".htm"):
        raise UserError(f"--out must name an .html file, got '{out}'")
    from balance.paths import check_replace, experiment_id, record_written, writable_file

    if out is not None:
        writable_file(out, "--out")
    if games is not None and max_games is None and games > 3200:
        max_games = games
    plan = trisk_power.load_plan(
        plan_file,
        delta=delta,
        alpha=alpha,
        games=games,
        max_games=max_games,
        seed=seed,
        cards=_parse_cards(cards_),
        copies=copies,
        vs_card=vs_card.strip() if vs_card else None,
    )
    for opt, key, text in (("--strategy", "strategies", strategy), ("--field", "field", field_)):
        if text is not None:
            from dataclasses import replace as _replace

            names = tuple(t.strip() for t in text.split(",") if t.strip())
            if not names or len(set(names)) != len(names):
                raise UserError(f"{opt}: name each strategy once, e.g. tempo or tuned,control")
            plan = _replace(plan, **{key: names})
    if check_strategy is not None:
        from dataclasses import replace as _replace

        plan = _replace(
            plan,
            check_strategy=None
            if check_strategy.strip().lower() in ("none", "")
            else check_strategy.strip(),
        )
    if card_set or decks_file:
        from dataclasses import replace

        plan = replace(
            plan,
            card_set=card_set or plan.card_set,
            decks=str(decks_file) if decks_file else plan.decks,
        )
    plan = trisk_power.check_plan(plan.scaled(scale) if scale != 1.0 else plan, "command line")
    # The page is named by the experiment (the whole plan), so a run of a few
    # cards never replaces the study's reports/trisk-power.html or another run's page.
    experiment = experiment_id("trisk power", repr(plan), no_regression)
    if out is None:
        out = writable_file(Path("reports") / f"trisk-power-{experiment}.html", "--out")
    check_replace(out, experiment, "--out", force)
    from balance.runner import command_line, set_threads

    set_threads(threads)  # a bad --threads is refused before any work

    def log(line: str) -> None:
        if not as_json:
            typer.echo(line, err=True)

    t0 = time.perf_counter()
    res = trisk_power.run_power(
        plan,
        results=results,
        threads=threads,
        progress=not as_json,
        log=log,
        regression=not no_regression,
    )
    page = trisk_power.write_power_page(res, out)
    record_written(page, experiment, command_line())
    elapsed = time.perf_counter() - t0
    if as_json:
        data = trisk_power.result_json(res)
        data["page"] = str(page)
        data["seconds"] = round(elapsed, 2)
        echo_json(data)
        return
    check = "effect2" in res.cards.columns
    in_budget = "budget_text" in res.cards.columns
    rows = []
    for r in res.cards.itertuples():
        row = [
            r.card,
            r.n_primals,
            fmt.fmt_pp_ci(r.effect, r.lo, r.hi),
            fmt.fmt_int(r.games),
            r.label,
        ]
        if check:
            row += [
                fmt.fmt_pp_ci(r.effect2, r.lo2, r.hi2),
                r.label2,
                f"yes: {r.strategy_why}" if r.depends_on_strategy else "",
            ]
        if in_budget:
            text = getattr(r, "budget_text", None)
            row.append(text if isinstance(text, str) else "—")
        rows.append(row)
    vs = f" vs {res.vs_card}" if res.vs_card else ""
    cols = ["card", "Primals", f"effect{vs} [95% CI]", "games", "verdict"]
    if check:
        cols += [f"under {plan.check_strategy}", "verdict", "depends on strategy (shown)"]
    if in_budget:
        cols.append("budget points [95% CI]")
    table(
        f"Equal power at ±{plan.delta * 100:g} pt ({plan.copies} copies swapped in{vs}, "
        f"α = {plan.alpha:g} over ≤{res.looks} looks, Holm over {len(rows)} cards; "
        f"our side: {', '.join(plan.strategies)})",
        cols,
        rows,
    )
    prow = [
        [
            r.primal,
            fmt.fmt_pct_ci(0.5 + r.effect, 0.5 + r.lo, 0.5 + r.hi),
            fmt.fmt_int(r.games),
            r.label,
        ]
        for r in res.primals.itertuples()
    ]
    table(
        "Primals: reference deck against the field",
        ["Primal", "score [95% CI]", "games", "verdict"],
        prow,
    )
    typer.echo(res.header)
    typer.echo(f"Cards: {res.claim['text']}")
    typer.echo(f"Primals: {res.primal_claim['text']}")
    if res.calibration:
        for line in trisk_power.calibration_lines(res.calibration, plan):
            typer.echo(line)
    if res.finishes:
        typer.echo(f"Finishes: {res.finishes['text']}")
    from balance.store import results_dir

    typer.echo(
        f"{res.runs_simulated:,} runs simulated, {res.runs_read:,} read from the store "
        f"{results_dir(results)} (seed {plan.seed}); {fmt.fmt_seconds(elapsed)}. Page: {page}"
    )
    sys.stdout.flush()


def register(app: typer.Typer) -> None:
    """Add ``cards``, ``skills``, ``decks`` and ``power`` to the ``trisk`` sub-app."""
    app.command("cards")(cards)
    app.command("skills")(skills)
    app.command("decks")(decks)
    app.command("power")(plays_games(power))


def register_bench(bench_app: typer.Typer) -> None:
    """``balance bench trisk``: its own figures."""
    bench_app.command("trisk")(bench_trisk)


def bench_trisk(
    n: Annotated[int, typer.Option("-n", help="Games for the threaded timings.")] = 200_000,
    a: Annotated[str, typer.Option("--a", help="Side A: strategy@deck.")] = "tempo",
    b: Annotated[str, typer.Option("--b", help="Side B: strategy@deck.")] = "rush",
    power: Annotated[
        bool,
        typer.Option(
            "--power/--no-power",
            help="Also time a full `balance trisk power` on the reference "
            "set in a fresh process (target < 15 min; long).",
        ),
    ] = False,
    as_json: JsonOpt = False,
):
    """Games/s at 1 and 2 threads on reference decks (target 10,000 with 2 threads), numba
    vs pure Python, compile time, memory; with --power the equal-power test end to end."""
    from balance import bench
    from balance.games.trisk import bench as trisk_bench

    res = bench.bench_game("trisk", n, a=a, b=b, pure_n=40)
    if power:
        res.update(trisk_bench.bench_power())
    played = bench_played(n, f"{a} vs {b}")
    if power:
        played += "; the equal-power test in a fresh process, into a temporary store"
    show_bench(res, as_json, played)
