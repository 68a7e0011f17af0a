"""Tosk's own commands: ``balance tosk play`` (the rules calculator) and
``balance tosk cards`` (card value by rank and suit, and restricted play)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from balance.cli.options import (
    BatchOpt,
    JsonOpt,
    ResultsOpt,
    RuleOpt,
    SeedOpt,
    ThreadsOpt,
    VariantOpt,
    plays_games,
)
from balance.cli.output import done, echo_json, records, table
from balance.config import with_rules
from balance.errors import UserError
from balance.paths import dir_option


def register(app: typer.Typer) -> None:
    """Add ``play`` and ``cards`` to ``balance tosk``."""
    app.command("play")(tosk_play)
    app.command("cards")(plays_games(tosk_cards))


def tosk_play(
    cards: Annotated[
        list[str],
        typer.Argument(help="Cards as rank+suit: 3C 9D J♣ (A, 2-9, J, Q, K; C D H S or ♣♦♥♠)."),
    ],
    variant: VariantOpt = "base",
    rule: RuleOpt = None,
    as_json: JsonOpt = False,
):
    """The rules calculator: cost, ATK, DEF and legality of a play."""
    variant = with_rules(variant, rule)
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
        echo_json(out)
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


# ---- cards --------------------------------------------------------------------------
def tosk_cards(
    variant: VariantOpt = "base",
    rule: RuleOpt = None,
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
    variant = with_rules(variant, rule)
    from balance import analysis, fmt, runner

    with runner.tally() as played:
        t = analysis.cards_command(
            "tosk", variant, strategy, vs, n, seed, threads, batch_size, results, restricted
        )
    what = played.line()
    if charts is not None:
        from balance import charts as ch

        ch.all_charts(
            {"cards": t["by_card"], "restricted": t.get("restricted")},
            charts,
            card_variant=t["by_card"]["variant"].iloc[0],
        )
        what += f"; charts in {charts}"
    if as_json:
        echo_json({k: records(v) for k, v in t.items()})
        done(what, True)
        return
    for key, label in (("by_rank", "rank"), ("by_suit", "suit")):
        df = t[key]
        table(
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
        table(
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
    done(what)
