"""Rule sweeps: the field played at each value of one or more rules.

``balance <game> sweep --rule capacity=9..15`` resolves one ruleset per point
of the grid (the product of every swept key's values, on top of
``--variant``), plays the round robin of the strategy field under each on the
same seed (common random numbers: game *i* of every point is dealt from the
same shuffles, so differences between points are not deal luck), and
summarises every design metric per point with its 95% interval and its
sample size.

Intervals. Every figure's interval clusters by deal: the two seat-swapped
games of a deal, and the deal's replays in every match of the point's round
robin, are one independent unit. Win rates and scores come from
:mod:`balance.tables`; the per-game figures (seat share of decided games,
game length, draws, round-cap share, lead changes, comebacks) from each run's
per-deal sums pooled by deal (:func:`balance.tables.per_game_figures`,
:func:`balance.metrics.game_metrics`), so no design effect is assumed.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from balance import config, meta, metrics, stats, tables
from balance.errors import UserError
from balance.registry import get_game

MAX_POINTS = 64  # a grid larger than this is almost surely a typo


@dataclass(frozen=True)
class Axis:
    """One swept rule: its key and the values, typed and checked."""

    key: str
    values: tuple


def chart_name(axes: list[Axis]) -> str:
    """A sweep chart's name from its keys and ranges: ``<key>-<first>-<last>``
    per axis (``hand_size-3-7``), so sweeps of other keys or ranges write
    other files. Characters other than letters, digits, ``.`` and ``_`` become ``_``."""
    parts = []
    for a in axes:
        for x in (a.key, config.rule_text(a.values[0]), config.rule_text(a.values[-1])):
            parts.append(re.sub(r"[^A-Za-z0-9._]", "_", str(x)))
    return "-".join(parts)


def parse_axis(game: str, text: str, option: str = "--rule") -> Axis:
    """``key=9..15``, ``key=9..15:2`` (a step), ``key=9,11,13`` or
    ``key=true,false``: each value typed and bounds-checked like ``--rule``
    (``option`` names the option in an error)."""
    key, eq, spec = str(text).partition("=")
    key, spec = key.strip(), spec.strip()
    where = f"{option} {text}"
    if not eq or not key or not spec:
        raise UserError(f"{where}: write key=LO..HI, key=LO..HI:STEP or key=V1,V2,...")
    raw = value_texts(spec, where)
    values = tuple(config.parse_rule_value(game, key, v, where) for v in raw)
    return Axis(key, distinct_values(values, where))


def value_count(spec: str, where: str) -> int:
    """How many values ``spec`` names, counted without listing them (a range
    ``1..10000`` is one subtraction), so that a grid's size is known before any
    point is built."""
    if ".." in spec:
        lo, hi, step = _range(spec, where)
        return (hi - lo) // step + 1
    return len(config.split_list(spec, where.partition("=")[0]))


def _range(spec: str, where: str) -> tuple[int, int, int]:
    lo_t, _, rest = spec.partition("..")
    hi_t, _, step_t = rest.partition(":")
    try:
        lo, hi, step = int(lo_t), int(hi_t), int(step_t) if step_t.strip() else 1
    except ValueError:
        raise UserError(f"{where}: a range is LO..HI or LO..HI:STEP in integers") from None
    if step <= 0 or hi < lo:
        raise UserError(f"{where}: a range needs LO ≤ HI and a positive step")
    return lo, hi, step


def value_texts(spec: str, where: str) -> list[str]:
    """The values of ``LO..HI``, ``LO..HI:STEP`` (integers) or ``V1,V2,...``, as
    text; more than :data:`MAX_POINTS` is refused before they are listed, and
    an empty item (``12,,13``) is refused, not dropped."""
    n = value_count(spec, where)
    if n > MAX_POINTS:
        raise UserError(
            f"{where}: {n:,} values; a sweep has at most {MAX_POINTS} points (sweep fewer values)"
        )
    if ".." in spec:
        lo, hi, step = _range(spec, where)
        return [str(v) for v in range(lo, hi + 1, step)]
    return config.split_list(spec, where.partition("=")[0])


def distinct_values(values: tuple, where: str) -> tuple:
    """``values`` checked: no value twice, at least two."""
    if len(set(values)) != len(values):
        raise UserError(f"{where}: a value is listed twice")
    if len(values) < 2:
        raise UserError(f"{where}: give at least two values (key=LO..HI or key=V1,V2)")
    return values


def grid(game: str, base: str, rules: list[str]) -> tuple[list[Axis], list[dict], list[str]]:
    """The swept axes, the grid points (key → value) and each point's rules spec
    (``base`` with the point's overrides; fixed ``key=value`` rules apply to all)."""
    axes, fixed = [], []
    swept = []
    for text in rules:
        _, _, spec = str(text).partition("=")
        if ".." in spec or "," in spec:
            swept.append(text)
        else:
            fixed.append(text)
    # the grid's size from the counts of values, before any value is parsed
    counts = [value_count(str(t).partition("=")[2].strip(), f"--rule {t}") for t in swept]
    if len(counts) == 1 and counts[0] > MAX_POINTS:
        raise UserError(
            f"--rule {swept[0]}: {counts[0]:,} values; a sweep has at most {MAX_POINTS} "
            "points (sweep fewer values)"
        )
    if math.prod(counts) > MAX_POINTS:
        raise UserError(
            f"the grid has {' × '.join(f'{c:,}' for c in counts)} = {math.prod(counts):,} "
            f"points; at most {MAX_POINTS} (sweep fewer values)"
        )
    axes = [parse_axis(game, t) for t in swept]
    if not axes:
        raise UserError(
            "sweep needs at least one --rule with several values: key=LO..HI or key=V1,V2"
        )
    keys = [a.key for a in axes]
    dup = next((k for k in keys if keys.count(k) > 1), None)
    if dup:
        raise UserError(f"--rule {dup} is swept twice")
    for text in fixed:
        key = text.partition("=")[0].strip()
        if key in keys:
            raise UserError(f"--rule {key} is both swept and fixed")
    points = [
        dict(zip(keys, combo, strict=True))
        for combo in itertools.product(*(a.values for a in axes))
    ]
    specs = []
    for p in points:
        over = [*fixed, *(f"{k}={config.rule_text(v)}" for k, v in p.items())]
        specs.append(config.with_rules(base, over))
    return axes, points, specs


def point_row(runs: dict, variant: str, strategies: list[str], t: dict) -> dict:
    """Every design metric of one grid point (``variant``): value, lo, hi, n."""
    mine = tables.variant_runs(runs, variant)
    games = int(sum(r.games for r in mine))
    row: dict = {"variant": variant, "games": games, "deals": games // 2, "matches": len(mine)}
    f = tables.per_game_figures(mine)
    for k in ("seat1_share", "seat1_lo", "seat1_hi", "decided"):
        row[k] = f[k]
    st = t["strategies"]
    st = st[st["variant"] == variant].sort_values("score", ascending=False)
    best, worst = st.iloc[0], st.iloc[-1]
    row.update(
        best_strategy=best.strategy,
        best_score=best.score,
        best_lo=best.score_lo,
        best_hi=best.score_hi,
        worst_strategy=worst.strategy,
        worst_score=worst.score,
        worst_lo=worst.score_lo,
        worst_hi=worst.score_hi,
        spread=best.score - worst.score,
    )
    # the best and worst of several estimates: intervals simultaneous over the
    # field (the winner's own interval is biased by its selection)
    items = list(zip(st["score"], st["score_lo"], st["score_hi"], strict=True))
    for which, name in (("max", "best"), ("min", "worst")):
        _, row[f"{name}_sim_lo"], row[f"{name}_sim_hi"] = stats.extreme_interval(
            items, which, bounds=(0.0, 1.0)
        )
    rt = t.get("ratings")
    if rt is not None and len(rt) and rt["nash_p"].notna().any():
        r = rt[(rt["variant"] == variant) & (rt["nash_p"] > 1e-6)]
        row["nash_support"] = len(r)
        row["nash_strategies"] = ", ".join(
            f"{x.strategy} {100 * x.nash_p:.0f}%"
            for x in r.sort_values("nash_p", ascending=False).itertuples()
        )
    else:
        row["nash_support"], row["nash_strategies"] = math.nan, ""
    for k in ("rounds_mean", "rounds_lo", "rounds_hi", "draw_rate", "draw_lo", "draw_hi"):
        row[k] = f[k]
    row["round_cap"] = f["timeouts"]
    row["cap_share"], row["cap_lo"], row["cap_hi"] = f["cap_share"], f["cap_lo"], f["cap_hi"]
    m = metrics.game_metrics(mine)
    row["lead_changes"] = m["lead_changes"]
    row["lead_changes_lo"], row["lead_changes_hi"] = m["lead_changes_lo"], m["lead_changes_hi"]
    row["comeback_share"] = m["comeback_share"]
    row["comeback_lo"], row["comeback_hi"] = m["comeback_share_lo"], m["comeback_share_hi"]
    return row


def sweep_command(
    game: str,
    variant: str,
    rules: list[str],
    strategies: str,
    n: int,
    seed: int,
    threads,
    batch_size: int,
    results,
    precision: float | None = None,
    max_games: int = 1_000_000,
) -> dict:
    """Play the field at every grid point on one seed; returns the axes, the
    points, one row per point (``point_row``), the runs and the compare tables."""
    get_game(game)
    axes, points, specs = grid(game, variant, rules)
    res = evaluate(
        game,
        specs,
        strategies,
        n,
        seed,
        threads,
        batch_size,
        results,
        precision,
        max_games,
        record_as="sweep",  # the store's experiment record: one per sweep
    )
    res["table"] = pd.DataFrame([{**p, **r} for p, r in zip(points, res["rows"], strict=True)])
    return {"axes": axes, "points": points, "specs": specs, **res}


def evaluate(
    game: str,
    specs: list[str],
    strategies: str,
    n: int,
    seed: int,
    threads,
    batch_size: int,
    results,
    precision: float | None = None,
    max_games: int = 1_000_000,
    record_as: str | None = None,
    progress: bool = True,
    store_only: bool = False,
) -> dict:
    """Play the field's round robin under each rules spec on one seed (common
    random numbers) and measure every design metric of each (:func:`point_row`).
    Every spec is resolved before the first game. Returns ``rows`` (one per
    spec, in order), ``variants`` (their names), ``strategies``, ``runs`` and
    the compare ``tables``."""
    from balance import analysis

    for s in specs:
        config.resolve_variant(game, s)
    t, vnames, snames, runs = analysis.compare_command(
        game,
        ",".join(specs),
        strategies,
        n,
        seed,
        threads,
        batch_size,
        results,
        precision,
        max_games,
        store_only=store_only,
        reference=False,
        record_as=record_as,
        progress=progress,
    )
    t.update(meta.meta_tables(runs, vnames, snames))
    return {
        "rows": [point_row(runs, v, snames, t) for v in vnames],
        "variants": vnames,
        "strategies": snames,
        "runs": runs,
        "tables": t,
    }


# (label, value column, lo column, hi column, scale, unit)
METRICS = (
    ("seat 1 share of decided games", "seat1_share", "seat1_lo", "seat1_hi", 100, "%"),
    ("best strategy's score", "best_score", "best_lo", "best_hi", 100, "%"),
    ("worst strategy's score", "worst_score", "worst_lo", "worst_hi", 100, "%"),
    ("game length (rounds)", "rounds_mean", "rounds_lo", "rounds_hi", 1, ""),
    ("draws", "draw_rate", "draw_lo", "draw_hi", 100, "%"),
    ("round-cap share", "cap_share", "cap_lo", "cap_hi", 100, "%"),
    ("lead changes per game", "lead_changes", "lead_changes_lo", "lead_changes_hi", 1, ""),
    ("comebacks (winner trailed)", "comeback_share", "comeback_lo", "comeback_hi", 100, "%"),
)


def sweep_chart(res: dict, title: str):
    """One panel per design metric against the first swept key (a line per
    combination of the other keys), each point with its 95% interval."""
    from balance import charts

    df = res["table"]
    axes = res["axes"]
    x_key = axes[0].key
    others = [a.key for a in axes[1:]]
    groups = [((), df)] if not others else list(df.groupby(others, sort=False))
    panels = [m for m in METRICS if df[m[1]].notna().any()] + [("Nash support (strategies)",)]
    ncol = 3
    nrow = math.ceil(len(panels) / ncol)
    fig = charts.new_figure(11, 2.8 * nrow + 0.6)
    colours = charts.palette(max(len(groups), 1))
    numeric = all(
        isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in axes[0].values
    )
    xs_all = list(axes[0].values)
    for i, panel in enumerate(panels):
        ax = fig.add_subplot(nrow, ncol, i + 1)
        for (gkey, g), colour in zip(groups, colours, strict=False):
            x = list(g[x_key]) if numeric else [xs_all.index(v) for v in g[x_key]]
            label = ", ".join(
                f"{k}={config.rule_text(v)}"
                for k, v in zip(others, gkey if isinstance(gkey, tuple) else (gkey,), strict=False)
            )
            if len(panel) == 1:
                ax.plot(x, g["nash_support"], marker="o", color=colour, label=label or None)
                continue
            _, col, lo, hi, scale, _ = panel
            y = g[col].to_numpy(float) * scale
            err = np.vstack([y - g[lo].to_numpy(float) * scale, g[hi].to_numpy(float) * scale - y])
            ax.errorbar(
                x,
                y,
                yerr=np.nan_to_num(err),
                marker="o",
                capsize=3,
                color=colour,
                label=label or None,
            )
        ax.set_title(
            panel[0] + (f" ({panel[5]})" if len(panel) > 1 and panel[5] else ""), fontsize=9
        )
        ax.set_xlabel(x_key, fontsize=8)
        if not numeric:
            ax.set_xticks(range(len(xs_all)), [config.rule_text(v) for v in xs_all])
        if others and i == 0:
            ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    return fig
