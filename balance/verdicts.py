"""Plain-language verdicts from a page's tables, each with its CI, n and test.

The summary at the top of every report page. Every sentence names the size of
the effect with its 95% interval, the number of games or deal pairs behind it
and, for comparisons, the multiplicity correction that was applied.
"""

from __future__ import annotations

import pandas as pd

from balance.fmt import fmt_p, fmt_pct_ci


def _p_text(p) -> str:
    text = fmt_p(p)
    return f"p{text}" if text.startswith("<") else f"p={text}"


def _table(t: dict, key: str) -> pd.DataFrame | None:
    df = t.get(key)
    return df if isinstance(df, pd.DataFrame) and len(df) else None


def _strategies(title: str, t: dict) -> list[str]:
    st = _table(t, "strategies")
    if st is None:
        return []
    v0 = "base" if (st["variant"] == "base").any() else st["variant"].iloc[0]
    sub = st[st["variant"] == v0].sort_values("score", ascending=False)
    if len(sub) < 2:
        return []
    r, w = sub.iloc[0], sub.iloc[-1]
    return [
        f"{title}, {v0}: the strongest scripted strategy is {r.strategy}, winning "
        f"{fmt_pct_ci(r.winrate, r.winrate_lo, r.winrate_hi, r.games)} of its games; the "
        f"weakest is {w.strategy} at {fmt_pct_ci(w.winrate, w.winrate_lo, w.winrate_hi, w.games)}."
    ]


def _ratings(t: dict) -> list[str]:
    rt = _table(t, "ratings")
    if rt is None:
        return []
    v0 = "base" if (rt["variant"] == "base").any() else rt["variant"].iloc[0]
    sub = rt[rt["variant"] == v0].sort_values("elo", ascending=False)
    out = []
    top = sub.iloc[0]
    out.append(
        f"Ratings ({v0}, Bradley–Terry): {top.strategy} leads at Elo {top.elo:+.0f} "
        f"[{top.elo_lo:+.0f}, {top.elo_hi:+.0f}] relative to the field average "
        f"(n={int(sub['games'].sum()) // 2:,} games)."
    )
    dom = list(sub.loc[sub["dominant"].astype(bool), "strategy"])
    if dom:
        out.append(
            f"{', '.join(dom)} {'beats' if len(dom) == 1 else 'beat'} every other strategy of "
            f"the scripted field under {v0}: the lower 95% bound of the score is above 50% "
            "against each."
        )
    else:
        # not "no strategy dominates": the field's best script may still fail the
        # best-script's-score target (design.py), and whether the rules have a
        # dominant strategy is asked at the equilibrium, not of the scripts
        out.append(
            f"No strategy of the scripted field beats every other under {v0} at 95%: each "
            "has at least one opponent it does not reliably beat."
        )
    if sub["nash_p"].notna().any():
        supp = sub[sub["nash_p"] > 1e-6].sort_values("nash_p", ascending=False)
        parts = [f"{r.strategy} {100 * r.nash_p:.0f}%" for r in supp.itertuples()]
        out.append(
            f"Nash mixture ({v0}, max-entropy): {', '.join(parts)}; a strategy outside it "
            "loses on average against the mixture, so clones of a strategy cannot move "
            "this ranking."
        )
    cy = _table(t, "cycles")
    if cy is not None:
        c0 = cy[cy["variant"] == v0]
        if len(c0):
            r = c0.iloc[0]
            out.append(
                f"{len(c0)} significant 3-cycle{'s' if len(c0) != 1 else ''} under {v0} "
                f"(intransitive play, each edge at 95%), e.g. {r.a} beats {r.b} beats "
                f"{r.c} beats {r.a}."
            )
        out.append(f"{len(cy)} significant 3-cycles across all variants.")
    elif "nash_p" in rt and rt["nash_p"].notna().any():
        out.append("No significant 3-cycles: the strategies' strengths are transitive at 95%.")
    return out


def _luck(t: dict) -> list[str]:
    vt = _table(t, "variants")
    if vt is None:
        return []
    b = vt[vt["variant"] == "base"] if (vt["variant"] == "base").any() else vt.iloc[:1]
    r = b.iloc[0]
    if not r.best_strategy:
        return []
    need = r.games_needed
    return [
        f"Luck vs skill ({r.variant}): the strongest strategy, {r.best_strategy}, beats random "
        f"{fmt_pct_ci(r.luck_skill_winrate, r.luck_skill_lo, r.luck_skill_hi)}; "
        + (
            f"it needs {int(need):,} game{'s' if need != 1 else ''} to be ahead with 95% "
            "probability."
            if not pd.isna(need)
            else "it is not reliably ahead at any game count."
        )
    ]


def _diffs(t: dict) -> list[str]:
    d = _table(t, "diffs")
    if d is None:
        return []
    out = []
    sig = d[d["significant"].astype(bool)].copy()
    if len(sig):
        sig["abs"] = sig["diff"].abs()
        for r in sig.sort_values("abs", ascending=False).head(5).itertuples():
            verb = "raises" if r.diff > 0 else "lowers"
            size, lo, hi = (
                (r.diff, r.diff_lo, r.diff_hi) if r.diff > 0 else (-r.diff, -r.diff_hi, -r.diff_lo)
            )
            out.append(
                f"{r.variant} {verb} {r.strategy}'s score by {100 * size:.1f} points "
                f"[{100 * lo:.1f}, {100 * hi:.1f}] (n={r.n_pairs:,} seat-swapped deal pairs, "
                f"paired with base on the same deals), significant after Holm "
                f"({_p_text(r.p_holm)})."
            )
        out.append(
            f"{len(sig)} of {len(d)} variant-by-strategy differences from base are "
            "significant after Holm."
        )
    else:
        out.append(
            f"No variant changes any strategy's score significantly after Holm "
            f"({len(d)} comparisons)."
        )
    return out


def _shape(t: dict) -> list[str]:
    m = _table(t, "metrics")
    if m is None:
        return []
    out = []
    lo = m.loc[m["duration"].idxmin()]
    hi = m.loc[m["duration"].idxmax()]
    # every interval of the metrics table is clustered by deal across the
    # matches that replay it (balance.tables.per_game_figures)
    if lo.variant == hi.variant:  # one ruleset: one figure, not "x under base and x under base"
        out.append(
            f"Games last {lo.duration:.1f} rounds [{lo.duration_lo:.1f}, {lo.duration_hi:.1f}] "
            f"on average under {lo.variant} (n={int(lo.games):,} games)."
        )
    else:
        out.append(
            f"Games last {lo.duration:.1f} rounds [{lo.duration_lo:.1f}, {lo.duration_hi:.1f}] "
            f"on average under {lo.variant} (n={int(lo.games):,} games), the shortest, and "
            f"{hi.duration:.1f} [{hi.duration_lo:.1f}, {hi.duration_hi:.1f}] under {hi.variant} "
            f"(n={int(hi.games):,} games), the longest."
        )
    dr = m.loc[m["draw_rate"].idxmax()]
    out.append(
        f"Draws: at most {fmt_pct_ci(dr.draw_rate, dr.draw_lo, dr.draw_hi, dr.games)} "
        f"(under {dr.variant}), of which {int(dr.timeouts):,} at the round cap; draws are "
        "counted apart, never as wins."
    )
    b = m[m["variant"] == "base"]
    if len(b):
        r = b.iloc[0]
        adv = (
            f"seat advantage {100 * r.seat_advantage:+.1f} points [{100 * r.seat_adv_lo:+.1f}, "
            f"{100 * r.seat_adv_hi:+.1f}]"
        )
        text = f"Base: seat balance {r.balance:.3f} ({adv}, n={int(r.games):,} games)"
        if "lead_changes" in r and not pd.isna(r.get("lead_changes")):
            text += (
                f"; {r.lead_changes:.2f} lead changes a game "
                f"[{r.lead_changes_lo:.2f}, {r.lead_changes_hi:.2f}]"
            )
        if "comeback_share" in r and not pd.isna(r.get("comeback_share")):
            text += (
                f"; the winner trailed at some point in "
                f"{fmt_pct_ci(r.comeback_share, r.comeback_share_lo, r.comeback_share_hi)}"
                " of decided games"
            )
        if "decisiveness" in r and not pd.isna(r.get("decisiveness")):
            text += (
                f"; the winner took the lead for good after {100 * r.decisiveness:.1f}% "
                f"[{100 * r.decisiveness_lo:.1f}, {100 * r.decisiveness_hi:.1f}] of the game"
            )
        out.append(text + ".")
    return out


def _cards(t: dict) -> list[str]:
    rt = _table(t, "restricted")
    if rt is None or "significant" not in rt:
        return []
    sig = rt[rt["significant"].astype(bool)]
    if not len(sig):
        return [
            f"Restricted play: forbidding any single rank changes no score significantly "
            f"after Holm ({len(rt)} ranks)."
        ]
    r = sig.loc[sig["effect"].idxmin()]
    return [
        f"Restricted play: forbidding {r.strategy} to play {r['rank']} costs it "
        f"{-100 * r.effect:.1f} points [{-100 * r.effect_hi:.1f}, {-100 * r.effect_lo:.1f}] "
        f"(n={int(r.n_pairs):,} pairs, Holm {_p_text(r.p_holm)}); {len(sig)} of {len(rt)} "
        "ranks matter significantly."
    ]


def verdicts(title: str, t: dict) -> list[str]:
    """Plain-language verdicts, most important first."""
    return [*_strategies(title, t), *_ratings(t), *_diffs(t), *_luck(t), *_shape(t), *_cards(t)]
