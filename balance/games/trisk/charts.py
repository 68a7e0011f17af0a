"""Trisk's charts: the equal-power test's ranked effects and its calibration."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from balance.charts import (
    BAND,
    GRID,
    INK,
    MUTED,
    NEG,
    NEUTRAL,
    POS,
    chart_style,
    draw_cis,
    n_range,
    new_figure,
    placeholder,
    set_titles,
    wrap_label,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure


# --------------------------------------------------------------------------- trisk power
def trisk_power_chart(df: pd.DataFrame, delta: float, title: str, xlabel: str) -> Figure:
    """Effects ranked, each with its 95% CI, and the equivalence band ±δ.

    ``df`` has ``name``, ``effect``, ``lo``, ``hi`` (fractions), ``games`` and
    ``verdict`` (:data:`balance.games.trisk.power.VERDICTS`). Blue: shown
    inside ±δ (TOST), red: shown outside it (Holm), grey: not shown ("not
    shown equal" or "inconclusive").
    """
    with chart_style():
        if df is None or df.empty:
            return placeholder(title, "nothing tested")
        d = df.sort_values("effect", ascending=False, kind="stable")
        k = len(d)
        fig = new_figure(7.2, max(2.6, 0.22 * k + 1.6))
        ax = fig.add_subplot()
        value, lo, hi = (d[c].to_numpy(dtype=float) * 100 for c in ("effect", "lo", "hi"))
        y = np.arange(k)[::-1]
        colors = [
            {"equal": POS, "equal within margin": POS, "not equal": NEG}.get(v, NEUTRAL)
            for v in d["verdict"]
        ]
        ax.axvspan(-delta * 100, delta * 100, color=BAND, zorder=0)
        for x in (-delta * 100, delta * 100):
            ax.axvline(x, color=MUTED, linewidth=0.8, linestyle="--")
        ax.axvline(0, color=INK, linewidth=0.9)
        draw_cis(ax, value, y, lo, hi, colors, d["name"], size=22, fontsize=7.5 if k > 30 else 8.5)
        ax.set_ylim(-0.8, k - 0.2)
        ax.grid(axis="x", color=GRID, linewidth=0.8)
        ax.set_xlabel(xlabel)
        set_titles(
            fig,
            title,
            f"95% CI; shaded: the equivalence band ±{delta * 100:g} points. Blue: shown equal "
            f"(TOST; within the margin even when a difference is detected), red: shown "
            f"beyond the margin (Holm), grey: neither shown; "
            f"n = {n_range(d['games'])} games per row",
            ax=ax,
        )
    return fig


# the calibration's stats as the page names them (the power test reads them too)
CAL_LABEL = {
    "hp": "HP",
    "ap": "AP",
    "mp": "MP",
    "armor": "Armor",
    "flying": "Flying",
    "attack": "Attack level",
    "other": "abilities and the rest",
}


def trisk_calibration_chart(
    points: pd.DataFrame, rate: Mapping, delta: float, curves: Mapping | None = None
) -> Figure:
    """Off-budget copies of the neutral card: effect (95% CI) against budget
    points off, each stat's calibration curve (through the origin and its
    copies), the pooled rate above and below the budget with its band
    (``curves``: ``pooled+`` / ``pooled-`` of the calibration's rates; without
    them the one rate ``rate``), and the equivalence band ±δ."""
    import matplotlib as mpl

    title = "What a budget point is worth"
    with chart_style():
        if points is None or points.empty or not np.isfinite(rate.get("rate", np.nan)):
            return placeholder(title, "no calibration")
        fig = new_figure(6.4, 3.9)
        ax = fig.add_subplot()
        x = points["budget"].to_numpy(float)
        v, lo, hi = (points[c].to_numpy(float) * 100 for c in ("effect", "lo", "hi"))
        span = max(abs(x).max(), 1.0) * 1.15
        ax.axhspan(-delta * 100, delta * 100, color=BAND, zorder=0)
        ax.axhline(0, color=INK, linewidth=0.8)
        ax.axvline(0, color=MUTED, linewidth=0.6)
        for side, xs in (("+", np.linspace(0, span, 25)), ("-", np.linspace(-span, 0, 25))):
            r = (curves or {}).get(f"pooled{side}", rate)
            if not np.isfinite(r.get("rate", np.nan)):
                continue
            ax.fill_between(
                xs,
                np.minimum(r["lo"] * xs, r["hi"] * xs) * 100,
                np.maximum(r["lo"] * xs, r["hi"] * xs) * 100,
                color=GRID,
                zorder=1,
            )
            ax.plot(xs, r["rate"] * xs * 100, color=MUTED, linewidth=1.2, zorder=2)
        stats = (
            list(dict.fromkeys(points["stat"].fillna("several"))) if "stat" in points else ["all"]
        )
        palette = mpl.colormaps["tab10"]
        for i, stat in enumerate(stats):
            sel = (
                (points["stat"].fillna("several") == stat).to_numpy()
                if "stat" in points
                else np.ones(len(points), bool)
            )
            colour = palette(i % 10)
            order = np.argsort(x[sel])
            xs, ys = x[sel][order], v[sel][order]
            for part in (xs < 0, xs > 0):  # each side of the curve runs from the origin
                if part.any():
                    ax.plot(
                        np.r_[0, xs[part] if xs[part][0] > 0 else xs[part][::-1]],
                        np.r_[0, ys[part] if xs[part][0] > 0 else ys[part][::-1]],
                        color=colour,
                        linewidth=0.9,
                        zorder=2,
                    )
            ax.errorbar(
                x[sel],
                v[sel],
                yerr=np.vstack([v[sel] - lo[sel], hi[sel] - v[sel]]),
                fmt="o",
                color=colour,
                ecolor=colour,
                markersize=4,
                elinewidth=1.2,
                zorder=3,
                label=CAL_LABEL.get(str(stat), str(stat)),
            )
        names = points["change"] if "change" in points else points["name"]
        for xi, vi, name in zip(x, v, names, strict=False):
            ax.annotate(
                wrap_label(str(name)),
                (xi, vi),
                textcoords="offset points",
                xytext=(4, 3),
                fontsize=7,
                color=MUTED,
            )
        ax.set_xlim(-span, span)
        ax.set_xlabel("budget points off the neutral card")
        ax.set_ylabel("effect (points per game)")
        ax.grid(color=GRID, linewidth=0.6)
        if len(stats) > 1:
            ax.legend(fontsize=7, frameon=False, loc="upper left")
        set_titles(
            fig,
            title,
            "Off-budget copies of the neutral card, 95% CI; coloured lines: each stat's "
            "curve; grey: the pooled rate above and below the budget (band: its 95% CI); "
            f"shaded: ±δ = ±{delta * 100:g} points",
            ax=ax,
        )
    return fig
