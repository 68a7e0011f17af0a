"""The ``balance`` command line (Typer).

Commands are thin: they parse options, call library functions and print.
Heavy imports (numba, polars, matplotlib) happen inside command bodies so
that ``balance --help`` answers at once. A user mistake prints one line and
exits with code 2; nothing partial is written.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Annotated

import typer

from balance import cli_suits, cli_trisk
from balance.cli_options import JsonOpt, ResultsOpt, SeedOpt, ThreadsOpt, VariantOpt
from balance.errors import UserError
from balance.paths import dir_option, writable_dir, writable_file
from balance.registry import get_game

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    help="Monte Carlo balance analysis for tabletop card games.",
)
tosk_app = typer.Typer(no_args_is_help=True, help="Tosk: the two-player stamina duel.")
bench_app = typer.Typer(no_args_is_help=True, help="Speed and memory benchmarks.")
clash_app = typer.Typer(
    no_args_is_help=True, help="Clash of Steel: the duel of items, stances and stamina bids."
)
trisk_app = typer.Typer(
    no_args_is_help=True, help="Trisk: the card game of Primals, creations and sorceries."
)
app.add_typer(tosk_app, name="tosk")
app.add_typer(clash_app, name="clash")
app.add_typer(trisk_app, name="trisk")
suits_app = typer.Typer(
    no_args_is_help=True,
    help="The four-suits RPG: Task odds and Struggles of one deck against another.",
)
app.add_typer(suits_app, name="suits")
app.add_typer(bench_app, name="bench")

STANDARD = "random,aggressor,turtle,balanced,economist,healer,adaptive"

# ---- shared options ------------------------------------------------------------------
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


def _echo_json(data) -> None:
    typer.echo(json.dumps(_finite(data), indent=2, default=_json_default, allow_nan=False))


# Why a figure can be null in --json output, by field name (first match wins).
_NULL_REASONS = (
    (
        "pair_variance_ratio",
        "every seat-swapped pair scored alike (or every game had the same "
        "result), so an unpaired standard error of 0 leaves the ratio "
        "undefined",
    ),
    ("elo", "a score of 0% or 100% has no finite Elo"),
    ("nash", "the Nash average needs a complete, symmetric matrix"),
    (
        "games_needed",
        "the better side is not ahead, or the games needed are beyond the search limit",
    ),
)
_NULL_DEFAULT = (
    "not computable from these games: a rate, mean or ratio with nothing behind "
    "it (no game of this kind, no decided game, or no variance)"
)


def _null_reason(key: str) -> str:
    for frag, why in _NULL_REASONS:
        if frag in key:
            return why
    return _NULL_DEFAULT


def _finite(o):
    """``o`` with every NaN or infinite float as None (JSON's null), never a crash:
    an object with such a figure says why in ``why_null`` (field → reason)."""
    if isinstance(o, float):
        return o if math.isfinite(o) else None
    if isinstance(o, dict):
        out = {k: _finite(v) for k, v in o.items()}
        why = {
            str(k): _null_reason(str(k))
            for k, v in o.items()
            if isinstance(v, float) and not math.isfinite(v)
        }
        if why:
            out["why_null"] = why
        return out
    if isinstance(o, (list, tuple)):
        return [_finite(v) for v in o]
    return o


def _json_default(o):
    import numpy as np

    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return None if np.isnan(o) else float(o)
    if isinstance(o, np.bool_):
        return bool(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    import pandas as pd

    try:
        if pd.isna(o):  # pandas' missing values (NA, NaT): null
            return None
    except (TypeError, ValueError):
        pass
    return str(o)


def _records(df) -> list[dict]:
    """DataFrame rows for JSON (``_echo_json`` writes NaN as null, with a reason)."""
    return df.to_dict(orient="records")


def _table(title: str, columns: list[str], rows: list[list[str]], left: int = 1) -> None:
    """Print a table; all text is literal (names from configs are never markup)."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    t = Table(title=Text(title), title_justify="left", header_style="bold")
    for i, c in enumerate(columns):
        t.add_column(Text(c), justify="left" if i < left else "right")
    for r in rows:
        t.add_row(*(Text(str(x)) for x in r))
    Console(width=max(120, len(columns) * 14)).print(t)


def _store(results: Path | None):
    from balance.store import Store

    return Store(results)


# ---- tosk play ---------------------------------------------------------------------
@tosk_app.command("play")
def tosk_play(
    cards: Annotated[
        list[str],
        typer.Argument(help="Cards as rank+suit: 3C 9D J♣ (A, 2-9, J, Q, K; C D H S or ♣♦♥♠)."),
    ],
    variant: VariantOpt = "base",
    as_json: JsonOpt = False,
):
    """The rules calculator: cost, ATK, DEF and legality of a play."""
    from balance.config import resolve_variant
    from sims import tosk

    rs = resolve_variant("tosk", variant)
    ids = []
    for code in cards:
        try:
            ids.append(tosk.parse_card(code))
        except ValueError:
            raise UserError(
                f"unknown card '{code}'; a card is a rank (A, 2-9, J, Q, K) and a "
                "suit (C, D, H, S or ♣♦♥♠), e.g. 3C or J♣"
            ) from None
        if ids.count(ids[-1]) > 1:
            raise UserError(f"card '{code}' is played twice; the deck holds one of each card")
    res = tosk.play_cards(rs.vector(), ids)
    out = {"cost": res["cost"], "atk": res["atk"], "def": res["def"], "legal": bool(res["legal"])}
    if as_json:
        _echo_json(out)
        return
    labels = " ".join(tosk.card_label(c) for c in ids)
    typer.echo(
        f"{labels} under {rs.name}: costs {res['cost']} STA for {res['atk']} ATK / {res['def']} DEF"
    )
    if len(res["choices"]) > 1:  # T4, TD6: the player picks which action each technique boosts
        typer.echo(
            "  technique choices (none better in both): "
            + ", ".join(f"{a} ATK / {d} DEF" for a, d in res["choices"])
        )
    if res["wasted_techniques"]:
        typer.echo(
            f"  {res['wasted_techniques']} technique(s) with no action to boost (paid, no effect)"
        )
    if res["legal"]:
        typer.echo(f"  legal: {res['cost']} ≤ capacity {res['capacity']}")
    elif len(ids) > rs.rules["max_hand"]:
        typer.echo(f"  illegal: {len(ids)} cards is more than the hand of {rs.rules['max_hand']}")
    else:
        typer.echo(f"  illegal: {res['cost']} > capacity {res['capacity']}")


# ---- tosk cards --------------------------------------------------------------------------
@tosk_app.command("cards")
def tosk_cards(
    variant: VariantOpt = "base",
    strategy: Annotated[
        str, typer.Option("--strategy", help="The strategy whose cards are valued.")
    ] = "balanced",
    vs: Annotated[str, typer.Option("--vs", help="Its opponent.")] = "balanced",
    n: Annotated[
        int, typer.Option("-n", help="Games per run (one standard run + one per forbidden rank).")
    ] = 20_000,
    seed: SeedOpt = 1,
    threads: ThreadsOpt = None,
    batch_size: BatchOpt = 1 << 15,
    results: ResultsOpt = None,
    restricted: Annotated[
        bool, typer.Option(help="Also measure restricted play (forbid each rank).")
    ] = True,
    charts: Annotated[
        Path | None,
        typer.Option(
            "--charts",
            help="Also write the card-value chart (SVG and PNG) to this folder.",
            callback=dir_option("--charts"),
        ),
    ] = None,
    as_json: JsonOpt = False,
):
    """Card value per rank and suit: played WR, games-in-hand WR, improvement
    when in hand (observational), and the paired effect of forbidding a rank."""
    from balance import analysis, fmt

    t = analysis.cards_command(
        "tosk", variant, strategy, vs, n, seed, threads, batch_size, results, restricted
    )
    if charts is not None:
        from balance import charts as ch

        ch.all_charts(
            {"cards": t["by_card"], "restricted": t.get("restricted")},
            charts,
            card_variant=t["by_card"]["variant"].iloc[0],
        )
    if as_json:
        _echo_json({k: _records(v) for k, v in t.items()})
        return
    for key, label in (("by_rank", "rank"), ("by_suit", "suit")):
        df = t[key]
        _table(
            f"{strategy} vs {vs} ({variant}): value by {label} — observational, biased by game length",
            [
                label,
                "played WR [95% CI]",
                "n",
                "in-hand WR [95% CI]",
                "n",
                "not-seen WR",
                "IWD [95% CI]",
            ],
            [
                [
                    str(r[label]),
                    fmt.fmt_pct_ci(r["played_wr"], r["played_lo"], r["played_hi"]),
                    fmt.fmt_int(r["played_n"]),
                    fmt.fmt_pct_ci(r["gih_wr"], r["gih_lo"], r["gih_hi"]),
                    fmt.fmt_int(r["gih_n"]),
                    fmt.fmt_pct(r["gns_wr"]),
                    fmt.fmt_pp_ci(r["iwd"], r["iwd_lo"], r["iwd_hi"]),
                ]
                for _, r in df.iterrows()
            ],
        )
    if "restricted" in t:
        df = t["restricted"]
        _table(
            f"Restricted play: {strategy}'s score when forbidden to play a rank, minus its "
            "score on the same deals (paired, Holm)",
            ["rank", "pairs", "effect [95% CI]", "p (Holm)", "significant"],
            [
                [
                    r["rank"],
                    fmt.fmt_int(r["n_pairs"]),
                    fmt.fmt_pp_ci(r["effect"], r["effect_lo"], r["effect_hi"]),
                    fmt.fmt_p(r["p_holm"]),
                    "yes" if r["significant"] else "no",
                ]
                for _, r in df.iterrows()
            ],
        )


# ---- commands every game has -------------------------------------------------------------
def _trace(game: str, rs, sa, sb, seed: int, index: int) -> list[dict]:
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


def add_game_commands(
    sub: typer.Typer,
    game: str,
    title: str,
    default_strategy: str,
    standard: str,
    default_variants: str,
) -> None:
    """simulate, compare, trace, variants, strategies, features and sprt for ``game``."""

    @sub.command("simulate")
    def simulate(
        variant: VariantOpt = "base",
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
            _echo_json(row)
            return
        g = row["games"]
        _table(
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
    def compare(
        variants: Annotated[
            str,
            typer.Option(
                "--variants", help="Comma-separated variants, or 'all' (every combination)."
            ),
        ] = default_variants,
        strategies: Annotated[
            str, typer.Option("--strategies", help="Comma-separated strategies, or 'all'.")
        ] = standard,
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
        as_json: JsonOpt = False,
    ):
        """Round-robin matrix per variant, strategy win rates, game length, draws,
        luck vs skill, and each variant's paired difference from base (Holm)."""
        from balance import analysis, fmt

        t, vnames, snames, runs = analysis.compare_command(
            game, variants, strategies, n, seed, threads, batch_size, results, precision, max_games
        )
        if charts is not None:
            from balance import charts as ch

            ch.all_charts(t, charts, matrix_variants=vnames)
        if as_json:
            _echo_json({k: _records(v) for k, v in t.items() if k != "rounds"})
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
            _table(
                f"{v}: win rate of row vs column (%, ± 95% CI half-width), {games} games a cell",
                ["", *snames, "mean win rate [95% CI]"],
                rows,
            )
        vt = t["variants"]
        _table(
            "Variants: game length, draws and luck vs skill",
            [
                "variant",
                "games",
                "rounds mean (sd)",
                "draws [95% CI]",
                "best vs random [95% CI]",
                "games to be 95% ahead",
            ],
            [
                [
                    r.variant,
                    fmt.fmt_int(r.games),
                    f"{r.rounds_mean:.2f} ({r.rounds_sd:.2f})",
                    fmt.fmt_pct_ci(r.draw_rate, r.draw_lo, r.draw_hi),
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
        d = t["diffs"]
        if len(d):
            _table(
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
        rs = config.resolve_variant(game, variant)
        sa, sb = config.load_strategy(game, a), config.load_strategy(game, b)
        events = _trace(game, rs, sa, sb, seed, game_index)
        if as_json:
            _echo_json(events)
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
            rows.append({"variant": v, "description": rs.description.split("; ")[-1]})
        if as_json:
            _echo_json(rows)
            return
        for r in rows[1:]:
            typer.echo(f"{r['variant']:<22} {r['description']}")
        if len(rows) > 1:
            typer.echo(
                f"Combine with +, e.g. {'+'.join(r['variant'] for r in rows[1:3])} "
                f"(all {2 ** (len(rows) - 1)} combinations are valid)."
            )
        else:
            typer.echo(f"{title} has no rule variants yet: only base.")

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
            _echo_json(rows)
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
            _echo_json(rows)
            return
        _table(
            f"{title} strategy TOML keys: "
            + ", ".join(f"[{sec}]" for sec in mod.SECTIONS)
            + " weigh the features of each kind of decision",
            ["section", "key", "meaning"],
            [[r["section"], r["key"], r["meaning"]] for r in rows],
            left=3,
        )

    @sub.command("sprt")
    def sprt(
        vs: Annotated[str, typer.Option("--vs", help="The rules to test (e.g. force).")],
        strategy: Annotated[str, typer.Option("--strategy", help="Whose score is compared.")],
        variant: Annotated[
            str, typer.Option("--variant", "-v", help="The reference rules.")
        ] = "base",
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
        if as_json:
            _echo_json({"verdict": verdict, "steps": steps})
            return
        typer.echo(
            f"verdict: {verdict} (vs {last['variant']}; Δ = "
            f"{fmt.fmt_pp_ci(last['diff'], last['lo'], last['hi'], last['n_pairs'])} pairs; "
            f"α={alpha:g}, β={beta:g}; opponents: {', '.join(last['opponents'])})"
        )


add_game_commands(
    tosk_app,
    "tosk",
    "Tosk",
    "balanced",
    STANDARD,
    "base,battle-weary,potent-healing,force,momentum,advanced-techniques",
)


add_game_commands(
    clash_app,
    "clash",
    "Clash of Steel",
    "counter",
    "random,aggressive,counter,ranger,miser,bluffer",
    "base",
)

add_game_commands(trisk_app, "trisk", "Trisk", "tempo", "random,rush,ramp,control,tempo", "base")
cli_trisk.register(trisk_app)  # cards, skills, decks and the equal-power test

SUITS_POLICIES = (
    "high-defend-hand,high-defend-deck,high-absorb-hand,high-absorb-deck,"
    "low-defend-hand,low-defend-deck,low-absorb-hand,low-absorb-deck"
)
add_game_commands(
    suits_app,
    "suits",
    "The four-suits RPG",
    "high-defend-hand",
    "random," + SUITS_POLICIES,
    "base,ties-to-attacker,to-the-death",
)
cli_suits.register(suits_app)  # Task odds and the struggle policies


LoadoutStrategyOpt = Annotated[
    str, typer.Option("--strategy", help="The strategy playing every (row) loadout.")
]
PairingGamesOpt = Annotated[int, typer.Option("-n", help="Games per loadout pairing.")]


@clash_app.command("loadouts")
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
    n: PairingGamesOpt = 2000,
    seed: SeedOpt = 1,
    threads: ThreadsOpt = None,
    results: ResultsOpt = None,
    as_json: JsonOpt = False,
):
    """The loadout matrix, every legal loadout against every one (27 × 27; 30 × 30 with
    allow_shield_spear), seat-swapped: item pairs, maneuvers, each item's marginal
    value, the best response to each loadout and the Nash-averaged strength."""
    from balance import fmt, loadouts

    pairings = [(strategy, vs or strategy)]
    for item in (also or "").split(","):
        if item.strip():
            x, _, y = item.strip().partition(":")
            pairings.append((x.strip(), (y or x).strip()))
    if len(set(pairings)) != len(pairings):
        raise UserError("a strategy pairing is listed twice (--strategy/--vs and --also)")
    for a, b in pairings:  # every name is checked before the first game is played
        loadouts.loadout_specs("clash", variant, a, b, 2, seed)
    runs = [
        loadouts.run_matrix("clash", variant, a, b, n, seed, threads, results) for a, b in pairings
    ]
    t = loadouts.loadout_tables("clash", runs[0])
    more = len(runs) > 1
    if more:
        t["loadout_pairings"] = loadouts.pairing_choice_table("clash", sum(runs, []))
    if as_json:
        _echo_json({k: _records(v) for k, v in t.items()})
        return
    games = fmt.fmt_int(int(t["loadout_matrix"]["games"].min()))
    pct = fmt.fmt_pct_ci
    _table(
        f"Item pairs: pooled score of the loadouts holding them ({strategy} vs {vs or strategy}, "
        f"{games} games a pairing)",
        ["items", "loadouts", "score [95% CI]", "games"],
        [
            [r.items, r.loadouts, pct(r.score, r.score_lo, r.score_hi), fmt.fmt_int(r.games)]
            for r in t["item_pairs"].itertuples()
        ],
    )
    _table(
        "Maneuvers",
        ["maneuver", "loadouts", "score [95% CI]", "games"],
        [
            [r.maneuver, r.loadouts, pct(r.score, r.score_lo, r.score_hi), fmt.fmt_int(r.games)]
            for r in t["maneuvers"].itertuples()
        ],
    )
    _table(
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
    _table(
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
    _table(
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
        _table(
            "Item pairs and maneuvers under each strategy pairing (score vs field [95% CI])",
            ["choice", "kind", *names],
            rows,
        )


@clash_app.command("ranges")
def clash_ranges(
    strategy: LoadoutStrategyOpt = "counter",
    variant: VariantOpt = "base",
    n: PairingGamesOpt = 2000,
    seed: SeedOpt = 1,
    threads: ThreadsOpt = None,
    results: ResultsOpt = None,
    as_json: JsonOpt = False,
):
    """Where each loadout wins its rounds: the share of rounds won at each range,
    against the field of all loadouts (the loadout matrix's runs)."""
    from balance import fmt, loadouts

    runs = loadouts.run_matrix("clash", variant, strategy, strategy, n, seed, threads, results)
    t = loadouts.ranges_by_loadout("clash", runs)
    if as_json:
        _echo_json(_records(t))
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
    _table(
        f"Share of rounds won at each range ({strategy}, every loadout vs every loadout; "
        "rounds of a game are not independent, so the CIs are indicative)",
        ["loadout", "Hand", "Arm", "Step", "Reach"],
        rows,
    )


@clash_app.command("initiative")
def clash_initiative(
    strategies: Annotated[
        str,
        typer.Option("--strategies", help="Comma-separated strategies: every pairing is played."),
    ] = "random,aggressive,counter,ranger,miser,bluffer",
    variant: VariantOpt = "base",
    n: Annotated[int, typer.Option("-n", help="Games per strategy pairing.")] = 20000,
    seed: SeedOpt = 1,
    threads: ThreadsOpt = None,
    results: ResultsOpt = None,
    as_json: JsonOpt = False,
):
    """The value of winning the opening bid, by the size of the winning bid."""
    from balance import analysis, fmt, loadouts

    _, _, _, runs = analysis.compare_command(
        "clash", variant, strategies, n, seed, threads, 1 << 15, results, with_tables=False
    )
    t = loadouts.initiative_table(list(runs.values()))
    if as_json:
        _echo_json(_records(t))
        return
    _table(
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


# ---- report --------------------------------------------------------------------------------
@app.command("report")
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
    results: ResultsOpt = None,
):
    """Build a self-contained HTML report from stored runs (nothing is simulated)."""
    import gc

    from balance import meta, pages, study, tables  # noqa: F401  (loaded before the freeze)

    # Everything imported so far lives as long as the process: keeping it out
    # of the collector's sight makes the full collections statsmodels'
    # multipletests asks for cheap (0.4 s of a report otherwise).
    gc.freeze()

    if runs:
        out = writable_file(out or Path("reports/report.html"), "--out")
        path, skipped = pages.report_from_runs(list(runs), out, results, title)
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
        path = study.report_study(writable_dir(out or Path("reports"), "--out"), results)
    typer.echo(f"report: {path}")


# ---- study and bench ----------------------------------------------------------------------
# --scale: below 1/1000 of the plan a study's precision targets pass ±50 points and
# decide nothing; above 1000× it is years of play on one machine
SCALE_MIN, SCALE_MAX = 0.001, 1000.0


@app.command("study")
def study_cmd(
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder for the report, tables and charts.")
    ] = Path("reports"),
    scale: Annotated[
        float, typer.Option("--scale", help="Multiply every game count (e.g. 4 halves each CI).")
    ] = 1.0,
    threads: ThreadsOpt = None,
    results: ResultsOpt = None,
):
    """The default study of every game: writes reports/index.html."""
    from balance import study

    if not SCALE_MIN <= scale <= SCALE_MAX:
        raise UserError(
            f"--scale must be between {SCALE_MIN:g} and {SCALE_MAX:g} (1 is the "
            f"default plan, 4 halves every CI), got {scale}"
        )
    writable_dir(out, "--out")
    path = study.run_study(out, scale=scale, threads=threads, results=results)
    typer.echo(f"report: {path}")


def _show_bench(res: dict, as_json: bool) -> None:
    """A bench's figures: JSON, or one aligned line each."""
    if as_json:
        _echo_json(res)
        return
    width = max(map(len, res)) + 2
    for k, v in res.items():
        typer.echo(f"{k:<{width}}{v}")


@bench_app.command("tosk")
def bench_tosk(
    n: Annotated[int, typer.Option("-n", help="Games for the threaded timings.")] = 1_000_000,
    as_json: JsonOpt = False,
):
    """Games/s at 1 and 2 threads, numba vs pure Python, compile time, memory."""
    from balance import bench

    res = bench.bench_game("tosk", n)
    _show_bench(res, as_json)


@bench_app.command("clash")
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
    res = bench.bench_game("clash", n, a="counter", b="aggressive")
    if matrix_games:
        res.update(bench.bench_matrix("clash", "counter", matrix_games))
    _show_bench(res, as_json)


@bench_app.command("trisk")
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

    res = bench.bench_game("trisk", n, a=a, b=b, pure_n=40)
    if power:
        res.update(bench.bench_power())
    _show_bench(res, as_json)


@bench_app.command("suits")
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

    if tasks_n < 1:
        raise UserError(f"--tasks must be a positive number of draws, got {tasks_n}")
    res = bench.bench_tasks(tasks_n)
    res.update(bench.bench_game("suits", n, a=a, b=b, pure_n=200))
    _show_bench(res, as_json)


@bench_app.command("report")
def bench_report_cmd(results: ResultsOpt = None, as_json: JsonOpt = False):
    """Seconds to build the default study's report from the store (target < 10 s)."""
    from balance import bench

    res = bench.bench_report(results)
    _show_bench(res, as_json)


def _click_exceptions():
    """Typer's usage-error classes (vendored click in recent Typer)."""
    try:
        from typer._click import exceptions as cx
    except ImportError:  # older Typer runs on click itself
        from click import exceptions as cx
    return cx


def _one_line(exc: Exception) -> str:
    """An error's message on one line (a message quoting a file may hold newlines)."""
    return " ".join(str(exc).split())


def main() -> None:
    """Entry point: user errors become one line on stderr and exit code 2."""
    cx = _click_exceptions()
    try:
        rc = app(standalone_mode=False)
    except UserError as exc:
        typer.echo(f"error: {_one_line(exc)}", err=True)
        sys.exit(exc.exit_code)
    except OSError as exc:  # the machine refused (a file system, a device): exit 1
        where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
        typer.echo(f"error: {exc.strerror or exc}{where}", err=True)
        sys.exit(1)
    except MemoryError:
        typer.echo(
            "error: out of memory; ask for fewer games per run (-n) or a smaller --batch-size",
            err=True,
        )
        sys.exit(1)
    except cx.NoArgsIsHelpError as exc:
        exc.show()
        sys.exit(0)
    except cx.UsageError as exc:
        typer.echo(f"error: {exc.format_message()}", err=True)
        sys.exit(2)
    except (typer.Abort, KeyboardInterrupt):
        rc = 130
    except typer.Exit as exc:
        rc = exc.exit_code
    # Typer turns Ctrl-C into exit code 130, which it returns rather than raises
    # in this mode: a caller (`balance study && publish`) must see it
    if rc == 130:
        typer.echo(
            "interrupted: nothing partial was stored (finished runs are kept and "
            "a rerun resumes from them)",
            err=True,
        )
        sys.exit(130)
    if isinstance(rc, int) and not isinstance(rc, bool) and rc:
        sys.exit(rc)


if __name__ == "__main__":
    main()
