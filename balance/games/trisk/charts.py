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


def trisk_calibration_chart(points: pd.DataFrame, rate: Mapping, delta: float) -> Figure:
    """Off-budget copies of the neutral card: effect (95% CI) against budget
    points off, the fitted rate through the origin with its band, and the
    equivalence band ±δ."""
    title = "What a budget point is worth"
    with chart_style():
        if points is None or points.empty or not np.isfinite(rate.get("rate", np.nan)):
            return placeholder(title, "no calibration")
        fig = new_figure(6.4, 3.6)
        ax = fig.add_subplot()
        x = points["budget"].to_numpy(float)
        v, lo, hi = (points[c].to_numpy(float) * 100 for c in ("effect", "lo", "hi"))
        span = max(abs(x).max(), 1.0) * 1.15
        ax.axhspan(-delta * 100, delta * 100, color=BAND, zorder=0)
        ax.axhline(0, color=INK, linewidth=0.8)
        ax.axvline(0, color=MUTED, linewidth=0.6)
        xs = np.linspace(-span, span, 50)
        ax.fill_between(
            xs,
            np.minimum(rate["lo"] * xs, rate["hi"] * xs) * 100,
            np.maximum(rate["lo"] * xs, rate["hi"] * xs) * 100,
            color=GRID,
            zorder=1,
        )
        ax.plot(xs, rate["rate"] * xs * 100, color=MUTED, linewidth=1.2, zorder=2)
        ax.errorbar(
            x,
            v,
            yerr=np.vstack([v - lo, hi - v]),
            fmt="o",
            color=POS,
            ecolor=POS,
            markersize=4,
            elinewidth=1.2,
            zorder=3,
        )
        for xi, vi, name in zip(x, v, points["name"], strict=False):
            ax.annotate(
                wrap_label(str(name).split(" ", 2)[-1]),
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
        set_titles(
            fig,
            title,
            f"Off-budget copies of the neutral card, 95% CI; line: "
            f"{rate['rate'] * 100:.2f} points per budget point (band: its 95% CI, the cards "
            f"as units); shaded: ±δ = ±{delta * 100:g} points",
            ax=ax,
        )
    return fig
