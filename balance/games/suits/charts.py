"""The four-suits RPG's charts: Task odds by target, as the deck runs down, and the struggle policies."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from balance.charts import (
    GRID,
    INK,
    NEG,
    POS,
    chart_style,
    ci_colors,
    draw_cis,
    n_range,
    new_figure,
    palette,
    panel_title,
    set_titles,
    wrap_label,
)
from balance.fmt import shorten
from sims.suits import value_name

if TYPE_CHECKING:
    from matplotlib.figure import Figure


# --------------------------------------------------------------------------- four-suits RPG
def suits_ladder_chart(
    fresh: pd.DataFrame, examples: Mapping[str, Sequence[str]], suit: str
) -> Figure:
    """The difficulty ladder: a fresh hand's chance of success at each target,
    exact (lines) and simulated (points with 95% Wilson intervals), in suit,
    Difficult and either way, with the rulebook's example Task of each target
    on the axis."""

    with chart_style():
        fig = new_figure(7.6, 5.6)
        ax = fig.add_subplot()
        x = fresh["target"].to_numpy()
        styles = (
            ("in_suit", "in suit (one card of the suit or a Joker)", POS, "-"),
            ("difficult", "Difficult (two cards of one other suit)", NEG, "--"),
            ("either", "either way (the best play)", INK, ":"),
        )
        for mode, label, color, ls in styles:
            ex = fresh[f"{mode}_exact"].to_numpy() * 100
            sim = fresh[f"{mode}_sim"].to_numpy() * 100
            lo = fresh[f"{mode}_lo"].to_numpy() * 100
            hi = fresh[f"{mode}_hi"].to_numpy() * 100
            ax.plot(x, ex, ls, color=color, linewidth=1.6, label=f"{label}: exact")
            ax.errorbar(
                x,
                sim,
                yerr=np.vstack([sim - lo, hi - sim]),
                fmt="o",
                color=color,
                markersize=3.2,
                elinewidth=1.0,
                capsize=0,
            )
        texts = list(examples.get(suit, []))
        labels = [
            f"{name}: {shorten(str(texts[t - 2]).rstrip('.'), 34) if texts else ''}"
            for t, name in zip(x, fresh["target_name"], strict=False)
        ]
        ax.set_xticks(
            x,
            [wrap_label(s) for s in labels],
            rotation=55,
            ha="right",
            rotation_mode="anchor",
            fontsize=7.2,
        )
        ax.set_ylim(0, 102)
        ax.set_ylabel("chance of success from a fresh hand (%)")
        ax.grid(axis="y", color=GRID, linewidth=0.8)
        ax.legend(loc="lower left")
        set_titles(
            fig,
            f"The difficulty ladder: {suit.capitalize()} Tasks by target",
            f"Lines: exact odds of a fresh 5-card hand; points: simulated with 95% Wilson "
            f"intervals (n = {n_range(fresh['hands'])} hands per target). Axis: the "
            f"rulebook's example {suit.capitalize()} Task at each target.",
            ax=ax,
        )
    return fig


def suits_rundown_chart(by_deck: pd.DataFrame, suit: str, targets=(4, 7, 10, 13)) -> Figure:
    """As the deck runs down: the chance that a character who attempts the
    same Task again and again succeeds, by the cards left in its deck, for a
    few targets, in suit and either way (95% Wilson bands)."""

    with chart_style():
        fig = new_figure(7.6, 3.8)
        axes = fig.subplots(1, 2, sharey=True)
        colors = palette(len(targets))
        for ax, mode, title in zip(
            axes, ("in_suit", "either"), ("in suit only", "in suit, else Difficult"), strict=False
        ):
            d = by_deck[by_deck["mode"] == mode]
            for t, color in zip(targets, colors, strict=False):
                e = d[(d["target"] == t) & (d["n"] >= 50)].sort_values("deck_left")
                if e.empty:
                    continue
                xx = e["deck_left"].to_numpy()
                ax.fill_between(
                    xx, e["lo"] * 100, e["hi"] * 100, color=color, alpha=0.18, linewidth=0
                )
                ax.plot(
                    xx, e["rate"] * 100, color=color, linewidth=1.5, label=f"target {value_name(t)}"
                )
            ax.invert_xaxis()
            ax.set_xlabel("cards left in the deck before the attempt")
            panel_title(ax, title, 3.8)
            ax.grid(color=GRID, linewidth=0.8)
        axes[0].set_ylabel("chance of success (%)")
        axes[0].set_ylim(0, 100)
        axes[1].legend(loc="lower left")
        n = by_deck.groupby(["mode", "target"])["n"].max()
        set_titles(
            fig,
            f"As the deck runs down: the same {suit.capitalize()} Task again and again",
            f"Each character attempts one Task until disabled (its deck empty after drawing); "
            f"95% Wilson bands; n = {n_range(n)} characters per target.",
        )
    return fig


def suits_policy_chart(policies: pd.DataFrame) -> Figure:
    """Each struggle policy's score against the field (95% CI), per variant."""
    with chart_style():
        variants = list(dict.fromkeys(policies["variant"]))
        fig = new_figure(7.6, 0.9 + 0.28 * len(policies) + 0.3 * len(variants))
        ax = fig.add_subplot()
        rows = []
        for v in variants:
            d = policies[policies["variant"] == v].sort_values("score", ascending=False)
            for r in d.itertuples():
                rows.append((f"{v}: {r.policy}", r.score, r.lo, r.hi))
        k = len(rows)
        y = np.arange(k)[::-1]
        value = np.array([r[1] for r in rows]) * 100
        lo = np.array([r[2] for r in rows]) * 100
        hi = np.array([r[3] for r in rows]) * 100
        ax.axvline(50, color=INK, linewidth=0.9)
        draw_cis(ax, value, y, lo, hi, ci_colors(lo, hi, 50), [r[0] for r in rows], 20, 7.8)
        ax.grid(axis="x", color=GRID, linewidth=0.8)
        ax.set_xlabel("score against the other policies (%; win + ½ draw)")
        set_titles(
            fig,
            "Struggle policies against the field",
            f"Mean over the other policies, paired by deal; 95% CI; n = "
            f"{n_range(policies['games'])} games per policy",
            ax=ax,
        )
    return fig
