"""Charts for balance reports (matplotlib, Agg, no pyplot).

Every chart function takes the study's tables (pandas DataFrames, see
``balance.report`` for the data contract) and returns a
:class:`matplotlib.figure.Figure`. :func:`save` writes it as SVG and PNG and
returns the SVG text ready to inline in an HTML page.

Output is deterministic: figures are built without pyplot (no global state),
SVG ids are derived from a fixed hash salt and the file stem, and no date is
written into the metadata. Text is kept as text in the SVG
(``svg.fonttype='none'``), so the charts stay small and searchable.

Conventions: win rates and score differences are stored as fractions and
shown as percent / percentage points; every interval is a 95% CI (Wilson for
proportions, normal for means and paired differences); every chart names its n.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from balance import phases
from balance.stats import wilson

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "RANK_ORDER",
    "save",
    "matrix_heatmap",
    "variant_diffs",
    "diff_heatmap",
    "rounds_distribution",
    "card_value",
    "variant_overview",
    "ratings_chart",
    "exploitability_chart",
    "all_charts",
    "card_chart_key",
    "slug",
]

#: Rank order used on every per-rank axis (10 kept for decks that use it).
RANK_ORDER: tuple[str, ...] = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")

_Z = 1.959963984540054  # two-sided 95% normal quantile

# Palette: blue = better than even / positive, red = worse / negative.
POS = "#2b6ca3"
NEG = "#c0392b"
NEUTRAL = "#7f7f7f"
INK = "#222222"
MUTED = "#555555"
GRID = "#e3e3e3"
BAND = "#f4f6f8"
_HIGHLIGHT = "#fff4d6"

_STYLE: dict = {
    "svg.hashsalt": "balance",
    "svg.fonttype": "none",
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Arial", "Helvetica", "sans-serif"],
    "font.size": 9.5,
    "axes.titlesize": 10,
    "axes.labelsize": 9.5,
    "axes.edgecolor": "#888888",
    "axes.labelcolor": INK,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.axisbelow": True,
    "xtick.color": INK,
    "ytick.color": INK,
    "xtick.labelsize": 8.5,
    "ytick.labelsize": 8.5,
    "legend.fontsize": 8.5,
    "legend.frameon": False,
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
    "path.simplify": True,
}

PNG_DPI = 110
# Processes :func:`all_charts` draws in when not told (None: one per core); a
# study's worker process sets 1, as the other workers keep the other cores busy.
WORKERS: int | None = None

#: Every chart's text is at least this large as a page displays it (issue 45).
MIN_TEXT_PX = 10.0
#: The widest a chart is drawn on a page (``_style.css``: the page's column at
#: 1400 px, less a nested ``<details>``); a wider chart is scaled down to it.
PAGE_CHART_PX = 1240.0


# --------------------------------------------------------------------------- helpers
@contextmanager
def chart_style() -> Iterator[None]:
    import matplotlib

    with matplotlib.rc_context(_STYLE):
        yield


def new_figure(width: float, height: float) -> Figure:
    """A new Agg-backed figure, independent of pyplot's global state."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def wrap_label(text: object) -> str:
    """A config-supplied name made safe for matplotlib text (no mathtext)."""
    return str(text).replace("$", r"\$")


def slug(text: object) -> str:
    """A file-name and id-safe version of a (possibly hostile) name."""
    s = re.sub(r"[^A-Za-z0-9_.-]+", "-", str(text)).strip("-.")
    return s or "x"


def _wrap(text: str, width_in: float, fontsize: float) -> str:
    import textwrap

    chars = max(24, int(width_in * 72 / (fontsize * 0.6)))
    return "\n".join(textwrap.wrap(text, chars)) if len(text) > chars else text


def set_titles(
    fig: Figure, title: str, subtitle: str | None = None, ax: Axes | None = None
) -> None:
    """Bold left-aligned title; the explanatory subtitle goes under it (as the
    axes title) for single-panel charts, or as a caption below multi-panel ones.
    Call last, once every other artist is in place: wrapping uses the laid-out
    axes width."""
    width = fig.get_figwidth()
    fig.suptitle(
        _wrap(wrap_label(title), width, 11.5),
        x=0.01,
        ha="left",
        fontsize=11.5,
        fontweight="bold",
        color=INK,
    )
    if not subtitle:
        return
    if ax is not None:
        _lay_out(fig)  # to learn the axes' real width
        ax_w = width * ax.get_position().width
        ax.set_title(_wrap(wrap_label(subtitle), ax_w, 8.5), loc="left", fontsize=8.5, color=MUTED)
    else:
        fig.supxlabel(
            _wrap(wrap_label(subtitle), width, 8.5), x=0.01, ha="left", fontsize=8.5, color=MUTED
        )


def panel_title(ax: Axes, text: str, fig_width: float) -> None:
    ax.set_title(_wrap(wrap_label(text), fig_width - 1.3, 9), loc="left", fontsize=9, color=MUTED)


def _variant_label(name: object, width: int = 36) -> str:
    """A variant name for an axis: '+'-joined rule options wrapped onto lines."""
    text = wrap_label(name)
    if len(text) <= width or "+" not in text:
        return text
    lines, line = [], ""
    for part in text.split("+"):
        piece = part if not line else "+" + part
        if line and len(line) + len(piece) > width:
            lines.append(line)
            line = "+" + part
        else:
            line += piece
    lines.append(line)
    return "\n".join(lines)


def _fmt_n(n: float) -> str:
    return f"{int(round(n)):,}"


def n_range(values: Iterable[float]) -> str:
    arr = np.asarray([v for v in values if pd.notna(v)], dtype=float)
    if arr.size == 0:
        return "?"
    lo, hi = arr.min(), arr.max()
    return _fmt_n(lo) if lo == hi else f"{_fmt_n(lo)}–{_fmt_n(hi)}"


def _variant_sort_key(name: str) -> tuple[int, str]:
    """base first, then single rule options, then pairs, ... alphabetically."""
    if name == "base":
        return (0, "")
    return (1 + str(name).count("+"), str(name))


def palette(n: int) -> list:
    import matplotlib

    cmap = matplotlib.colormaps["tab10" if n <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(n)]


def _empty(fig: Figure, ax: Axes, message: str) -> Figure:
    ax.set_axis_off()
    ax.text(0.5, 0.5, message, ha="center", va="center", color=MUTED, transform=ax.transAxes)
    return fig


def placeholder(title: str, message: str, width: float = 6, height: float = 2) -> Figure:
    """A small titled figure that says why there is nothing to draw."""
    fig = new_figure(width, height)
    ax = fig.add_subplot()
    set_titles(fig, title)
    return _empty(fig, ax, message)


# --------------------------------------------------------------------------- save
_PROLOG = re.compile(r"^\s*(<\?xml[^>]*\?>\s*)?(<!DOCTYPE[^>]*>\s*)?", re.S)
_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.S)
_ID = re.compile(r'\bid="([^"]+)"')
_REF = re.compile(r'(url\(#|href="#)([^)"]+)')


def _inline_svg(svg: str, prefix: str) -> str:
    """SVG text fit for inlining: no prolog/doctype/metadata, ids prefixed.

    Several charts live in one HTML page; matplotlib's ids (``patch_1``,
    clip paths, markers) would collide between them, so each is prefixed.
    """
    svg = _PROLOG.sub("", svg, count=1)
    svg = _METADATA.sub("", svg, count=1)
    svg = _ID.sub(lambda m: f'id="{prefix}-{m.group(1)}"', svg)
    svg = _REF.sub(lambda m: f"{m.group(1)}{prefix}-{m.group(2)}", svg)
    return svg.strip() + "\n"


@phases.timed("charts")
def save(fig: Figure, stem: Path, png: bool = True, write: bool = True) -> str:
    """Write ``stem.svg`` (and ``stem.png`` with ``png``), close the figure,
    return inline SVG text; with ``write=False`` nothing is written and only
    the inline SVG is made (a report page needs no files).

    The returned text starts with ``<svg`` (no XML prolog or doctype), has
    its ids prefixed with the stem name so several charts can share a page,
    and carries no date. The files on disk are standard standalone SVG/PNG.
    """
    import io

    stem = Path(stem)
    legible(fig)
    svg_path = stem.with_name(stem.name + ".svg")
    png_path = stem.with_name(stem.name + ".png")
    try:
        with chart_style():
            # Solve the layout once, here, and save with no engine at all: with
            # one set, savefig draws the figure once more, unrendered, before it
            # renders it (the SVG's layout then measured with the SVG renderer's
            # text metrics, a pixel or so off Agg's). Tosk's 68 charts, SVG and
            # PNG: 6-14% less CPU (three runs of both side by side).
            _lay_out(fig)
            fig.set_layout_engine(None)
            if write:
                stem.parent.mkdir(parents=True, exist_ok=True)
                atomic_savefig(fig, svg_path, format="svg", metadata={"Date": None})
                svg = svg_path.read_text(encoding="utf-8")
            else:
                buf = io.StringIO()
                fig.savefig(buf, format="svg", metadata={"Date": None})
                svg = buf.getvalue()
            if write and png:
                # the layout is resolution-independent: the PNG keeps the same one
                atomic_savefig(
                    fig, png_path, format="png", dpi=PNG_DPI, metadata={"Software": None}
                )
    finally:
        _close(fig)
    return _inline_svg(svg, slug(stem.name))


def min_font_pt(width_in: float) -> float:
    """The least font size (points) that a chart ``width_in`` inches wide
    shows at :data:`MIN_TEXT_PX` or more on a page: an SVG point is 4/3 CSS
    px at its natural size, and a chart wider than :data:`PAGE_CHART_PX` is
    scaled down to it."""
    scale = min(1.0, PAGE_CHART_PX / (96.0 * width_in))
    return MIN_TEXT_PX * 0.75 / scale


def _lay_out(fig: Figure) -> None:
    """Place the axes as the figure's layout engine will when it is drawn
    (only the layout, not a draw: a draw costs as much again)."""
    engine = fig.get_layout_engine()
    if engine is not None:
        with chart_style():
            engine.execute(fig)


def legible(fig: Figure) -> None:
    """Raise every text of ``fig`` smaller than :func:`min_font_pt` to it.

    Tick labels are made when a figure is drawn; each axis's are made here
    (without a draw, which would cost as much as the save) and a size too
    small is raised in the axis's tick parameters, which every tick label it
    makes later takes too. The layout is solved, with the larger text, when
    the figure is saved."""
    from matplotlib.text import Text

    floor = min_font_pt(float(fig.get_figwidth())) + 0.01
    with chart_style():
        for ax in fig.axes:
            for axis in (ax.xaxis, ax.yaxis):
                for which in ("major", "minor"):
                    labels = axis.get_ticklabels(which=which)
                    if any(t.get_text() and t.get_fontsize() < floor for t in labels):
                        axis.set_tick_params(which=which, labelsize=floor)
    for t in fig.findobj(Text):
        if t.get_text() and t.get_fontsize() < floor:
            t.set_fontsize(floor)


def atomic_savefig(fig: Figure, path: Path, **kwargs) -> None:
    import os

    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fig.savefig(fh, **kwargs)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def _close(fig: Figure) -> None:
    import sys

    plt = sys.modules.get("matplotlib.pyplot")
    if plt is not None:
        plt.close(fig)
    fig.clear()


# --------------------------------------------------------------------------- matrix
def _diverging(values: np.ndarray, floor: float):
    """Colour scale centred on 50% for shares in ``values``: (norm, cmap, spread),
    the spread rounded up to 5 points, at least ``floor`` and at most 50%."""
    import matplotlib
    from matplotlib.colors import TwoSlopeNorm

    spread = np.nanmax(np.abs(values - 0.5)) if np.isfinite(values).any() else 0.1
    spread = min(0.5, max(floor, math.ceil(spread * 20) / 20))
    norm = TwoSlopeNorm(vcenter=0.5, vmin=0.5 - spread, vmax=0.5 + spread)
    return norm, matplotlib.colormaps["RdBu"].with_extremes(bad="#e6e6e6"), spread


def _pct_colorbar(fig: Figure, im, ax: Axes, label: str, shrink: float) -> None:
    """A colour bar in percent beside a heatmap whose spines are hidden."""
    import matplotlib

    for spine in ax.spines.values():
        spine.set_visible(False)
    cbar = fig.colorbar(im, ax=ax, shrink=shrink, pad=0.02)
    cbar.set_label(label)
    cbar.ax.yaxis.set_major_formatter(
        matplotlib.ticker.FuncFormatter(lambda v, _: f"{v * 100:.0f}")
    )
    cbar.outline.set_visible(False)


def matrix_heatmap(
    matrix_df: pd.DataFrame,
    variant: str,
    order: Sequence[str] | None = None,
    what: str = "win rate",
    subtitle: str | None = None,
) -> Figure:
    """Head-to-head win-rate matrix of one variant.

    Cell (row a, column b) is a's win rate against b in percent, with the 95%
    Wilson half-width below it. Diverging colours centred on 50%; the diagonal
    is grey. Strategies are ordered by mean win rate (strongest first) unless
    ``order`` is given. ``what`` and ``subtitle`` name another quantity in the
    same columns (e.g. a score with draws as half).
    """

    df = matrix_df[matrix_df["variant"] == variant]
    with chart_style():
        if df.empty:
            return placeholder(
                f"Head-to-head {what} — {variant}", "no games for this variant", width=5
            )

        if order is None:
            strength = df.groupby("a")["winrate"].mean()
            names = sorted(
                set(df["a"]) | set(df["b"]), key=lambda s: (-strength.get(s, 0.0), str(s))
            )
        else:
            names = list(order)
        idx = {s: i for i, s in enumerate(names)}
        k = len(names)
        win = np.full((k, k), np.nan)
        half = np.full((k, k), np.nan)
        for row in df.itertuples(index=False):
            if row.a in idx and row.b in idx and row.a != row.b:
                i, j = idx[row.a], idx[row.b]
                win[i, j] = row.winrate
                half[i, j] = (row.winrate_hi - row.winrate_lo) / 2

        norm, cmap, spread = _diverging(win, 0.1)

        side = max(3.2, 0.85 * k + 1.6)
        fig = new_figure(side + 1.4, side + 0.9)
        ax = fig.add_subplot()
        edges = np.arange(k + 1) - 0.5
        im = ax.pcolormesh(edges, edges, np.ma.masked_invalid(win), cmap=cmap, norm=norm)
        ax.set_facecolor("#e6e6e6")
        ax.set_aspect("equal")
        ax.set_xlim(-0.5, k - 0.5)
        ax.set_ylim(k - 0.5, -0.5)

        small = k > 8
        for i in range(k):
            for j in range(k):
                if i == j:
                    ax.text(j, i, "—", ha="center", va="center", color=MUTED, fontsize=9)
                    continue
                w = win[i, j]
                if not np.isfinite(w):
                    ax.text(j, i, "n/a", ha="center", va="center", color=MUTED, fontsize=7.5)
                    continue
                dark = abs(w - 0.5) > 0.6 * spread
                ax.text(
                    j,
                    i,
                    f"{w * 100:.1f}\n±{half[i, j] * 100:.1f}",
                    ha="center",
                    va="center",
                    fontsize=7 if small else 8.5,
                    linespacing=1.15,
                    color="white" if dark else INK,
                )

        labels = [wrap_label(s) for s in names]
        ax.set_xticks(range(k), labels, rotation=35, ha="right", rotation_mode="anchor")
        ax.set_yticks(range(k), labels)
        ax.set_xlabel("opponent (column)")
        ax.set_ylabel("strategy (row)")
        ax.set_xticks(np.arange(-0.5, k, 1), minor=True)
        ax.set_yticks(np.arange(-0.5, k, 1), minor=True)
        ax.grid(which="minor", color="white", linewidth=1.5)
        ax.tick_params(which="minor", length=0)
        ax.tick_params(which="major", length=0)
        _pct_colorbar(fig, im, ax, f"row's {what} vs column (%)", 0.8)

        set_titles(
            fig,
            f"Head-to-head {what} — {variant}",
            subtitle
            or f"% of games the row strategy wins (draws not counted as wins); "
            f"± = 95% Wilson half-width; n = {n_range(df['games'])} games per pair",
            ax=ax,
        )
    return fig


# --------------------------------------------------------------------------- variant diffs
def diff_heatmap(diffs_df: pd.DataFrame) -> Figure:
    """Variant x strategy heatmap of the paired change in score vs base.

    One row per variant (in the tables' order: base's neighbours first), one
    column per strategy. The colour is the change in percentage points (blue
    up, red down, on a scale symmetric about 0). Each cell says which of the
    three outcomes its 95% interval shows: the change in bold with ``*``
    (shown: Holm p < 0.05), ``≈`` and the change (shown within the
    equivalence margin, TOST), or the change in grey, its colour faded (no
    change shown either way). The subtitle names the pairs behind each cell.
    """
    import matplotlib
    from matplotlib.colors import TwoSlopeNorm

    df = diffs_df
    with chart_style():
        if df is None or df.empty:
            return placeholder(
                "Change in strategy score vs base", "no variants other than base to compare"
            )
        variants = list(dict.fromkeys(df["variant"]))
        strats = list(dict.fromkeys(df["strategy"]))
        nv, ns = len(variants), len(strats)
        vals = np.full((nv, ns), np.nan)
        cells: dict[tuple[int, int], dict] = {}
        for r in df.to_dict("records"):
            i, j = variants.index(r["variant"]), strats.index(r["strategy"])
            vals[i, j] = 100 * float(r["diff"])
            cells[(i, j)] = r
        spread = np.nanmax(np.abs(vals)) if np.isfinite(vals).any() else 1.0
        spread = max(1.0, math.ceil(spread))
        norm = TwoSlopeNorm(vcenter=0.0, vmin=-spread, vmax=spread)
        cmap = matplotlib.colormaps["RdBu"].with_extremes(bad="#e6e6e6")

        width = min(12.5, max(7.0, 2.6 + 0.95 * ns))
        fig = new_figure(width, max(2.6, 0.27 * nv + 1.9))
        ax = fig.add_subplot()
        rgba = cmap(norm(np.nan_to_num(vals, nan=0.0)))
        faded = np.zeros((nv, ns), dtype=bool)
        for (i, j), r in cells.items():
            sig = bool(r.get("significant")) if pd.notna(r.get("significant")) else False
            faded[i, j] = not sig
        # no change shown: the colour kept but faded, so only shown changes stand out
        rgba[faded] = 0.35 * rgba[faded] + 0.65
        rgba[~np.isfinite(vals)] = (0.9, 0.9, 0.9, 1.0)
        ax.imshow(rgba, aspect="auto", interpolation="nearest")
        for (i, j), r in cells.items():
            v = vals[i, j]
            if not np.isfinite(v):
                ax.text(j, i, "—", ha="center", va="center", color=MUTED)
                continue
            v = v if round(v, 1) != 0 else 0.0  # no "−0.0"
            sig = not faded[i, j]
            eq = bool(r.get("equivalent")) if pd.notna(r.get("equivalent")) else False
            if sig:
                dark = abs(norm(v) - 0.5) > 0.3
                ax.text(
                    j,
                    i,
                    f"{v:+.1f}*",
                    ha="center",
                    va="center",
                    fontweight="bold",
                    color="white" if dark else INK,
                )
            else:
                ax.text(
                    j,
                    i,
                    ("≈ " if eq else "") + (f"{v:+.1f}" if v else "0.0"),
                    ha="center",
                    va="center",
                    color=INK if eq else MUTED,
                )
        ax.set_xticks(
            range(ns),
            [wrap_label(x) for x in strats],
            rotation=30,
            ha="right",
            rotation_mode="anchor",
        )
        ax.set_yticks(range(nv), [wrap_label(v) for v in variants])
        ax.tick_params(length=0)
        for side in ("left", "bottom"):
            ax.spines[side].set_visible(False)
        n = pd.to_numeric(df["n_pairs"], errors="coerce").dropna() if "n_pairs" in df else None
        n_text = ""
        if n is not None and len(n):
            lo, hi = int(n.min()), int(n.max())
            n_text = (
                f"n = {_fmt_n(lo)} paired games per cell"
                if lo == hi
                else (f"n = {_fmt_n(lo)}–{_fmt_n(hi)} paired games per cell")
            )
        margin = df["margin"].dropna() if "margin" in df else pd.Series(dtype=float)
        m_text = f"±{100 * float(margin.iloc[0]):g} pt" if len(margin) else "the margin"
        im = matplotlib.cm.ScalarMappable(norm=norm, cmap=cmap)
        cb = fig.colorbar(im, ax=ax, shrink=min(0.8, 8 / max(nv, 1)), pad=0.01)
        cb.set_label("points vs base")
        set_titles(
            fig,
            "Change in each strategy's score vs base (percentage points)",
            f"bold *: change shown (Holm p < 0.05); ≈: shown within {m_text} (TOST); "
            f"grey, faded: no change shown. {n_text}",
            ax,
        )
        return fig


def variant_diffs(diffs_df: pd.DataFrame, strategies: Sequence[str] | None = None) -> Figure:
    """Forest plot: each variant's paired change in each strategy's score vs base.

    One row band per variant (largest mean shift on top), one coloured
    point per strategy with its 95% CI; filled points are significant after
    Holm correction, hollow ones are not. Values in percentage points.
    """
    from matplotlib.lines import Line2D

    df = diffs_df
    if strategies is not None:
        df = df[df["strategy"].isin(list(strategies))]
    with chart_style():
        if df.empty:
            return placeholder(
                "Change in strategy score vs base", "no variants other than base to compare"
            )

        strat_names = list(dict.fromkeys(strategies if strategies is not None else df["strategy"]))
        strat_names = [s for s in strat_names if (df["strategy"] == s).any()]
        mean_shift = df.groupby("variant")["diff"].mean()
        variants = sorted(mean_shift.index, key=lambda v: (-mean_shift[v], str(v)))
        nv, ns = len(variants), len(strat_names)
        ypos = {v: i for i, v in enumerate(variants)}
        offsets = np.linspace(-0.32, 0.32, ns) if ns > 1 else np.zeros(1)
        colors = dict(zip(strat_names, palette(ns), strict=False))

        wrapped = any("\n" in _variant_label(v) for v in variants)
        band = max(0.42 if wrapped else 0.3, 0.085 * ns + 0.1)
        fig = new_figure(9.0, max(2.8, band * nv + 1.6))
        ax = fig.add_subplot()
        for i in range(nv):
            if i % 2 == 0:
                ax.axhspan(i - 0.5, i + 0.5, color=BAND, zorder=0, linewidth=0)
        ax.axvline(0, color=INK, linewidth=0.9, zorder=1)

        for j, s in enumerate(strat_names):
            sub = df[df["strategy"] == s]
            y = sub["variant"].map(ypos).to_numpy(dtype=float) + offsets[j]
            x = sub["diff"].to_numpy(dtype=float) * 100
            lo = sub["diff_lo"].to_numpy(dtype=float) * 100
            hi = sub["diff_hi"].to_numpy(dtype=float) * 100
            sig = np.array(
                [bool(v) if pd.notna(v) else False for v in sub["significant"]], dtype=bool
            )
            c = colors[s]
            ax.errorbar(
                x,
                y,
                xerr=np.vstack([x - lo, hi - x]),
                fmt="none",
                ecolor=c,
                elinewidth=1.2,
                capsize=0,
                zorder=2,
            )
            ms = 26 if ns > 4 else 34
            ax.scatter(x[sig], y[sig], s=ms, color=c, edgecolor=c, zorder=3, linewidth=1)
            ax.scatter(
                x[~sig], y[~sig], s=ms, facecolor="white", edgecolor=c, zorder=3, linewidth=1.2
            )

        ax.set_yticks(range(nv), [_variant_label(v) for v in variants])
        ax.set_ylim(nv - 0.5, -0.5)
        ax.tick_params(axis="y", length=0)
        ax.spines["left"].set_visible(False)
        ax.grid(axis="x", color=GRID, linewidth=0.8)
        ax.set_xlabel("change in score vs base (percentage points, 95% CI)")

        handles = [
            Line2D([], [], color=colors[s], marker="o", linestyle="-", label=wrap_label(s))
            for s in strat_names
        ]
        handles += [
            Line2D([], [], color=INK, marker="o", linestyle="", label="significant (Holm)"),
            Line2D(
                [],
                [],
                color=INK,
                marker="o",
                markerfacecolor="white",
                linestyle="",
                label="not significant",
            ),
        ]
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)

        set_titles(
            fig,
            "How each variant changes each strategy's score vs base",
            f"score = win + ½ draw; paired by seed, n = {n_range(df['n_pairs'])} pairs per point; "
            "filled = significant after Holm correction",
            ax=ax,
        )
    return fig


# --------------------------------------------------------------------------- rounds
def _pick_round_variants(rounds_df: pd.DataFrame, limit: int = 5) -> list[str]:
    counts = rounds_df.groupby("variant")["count"].sum()
    weighted = (rounds_df["rounds"] * rounds_df["count"]).groupby(rounds_df["variant"]).sum()
    mean = (weighted / counts.replace(0, np.nan)).dropna()
    names = sorted(mean.index, key=_variant_sort_key)
    if len(names) <= limit:
        return names
    picked: list[str] = []
    for v in (["base"] if "base" in mean.index else []) + [mean.idxmin(), mean.idxmax()]:
        if v not in picked:
            picked.append(v)
    for v in names:
        if len(picked) >= limit:
            break
        if v not in picked:
            picked.append(v)
    return picked


def rounds_distribution(rounds_df: pd.DataFrame, variants: Sequence[str] | None = None) -> Figure:
    """Distribution of game length (rounds), a few variants overlaid as step lines.

    With ``variants=None``: all variants if there are at most five, else
    base, the shortest and the longest game by mean rounds, and others up to five.
    """
    with chart_style():
        fig = new_figure(9.0, 4.0)
        ax = fig.add_subplot()
        if rounds_df.empty:
            set_titles(fig, "Game length")
            return _empty(fig, ax, "no games")
        chosen = list(variants) if variants is not None else _pick_round_variants(rounds_df)
        colors = palette(len(chosen))
        lo_r, hi_r = int(rounds_df["rounds"].min()), int(rounds_df["rounds"].max())
        full = np.arange(lo_r, hi_r + 1)
        total_games = 0
        for c, v in zip(colors, chosen, strict=False):
            sub = rounds_df[rounds_df["variant"] == v].groupby("rounds")["count"].sum()
            n = float(sub.sum())
            if n <= 0:
                continue
            total_games += n
            share = sub.reindex(full, fill_value=0).to_numpy(dtype=float) / n * 100
            mean = float((sub.index.to_numpy() * sub.to_numpy()).sum() / n)
            lw = 2.0 if v == "base" else 1.4
            ax.step(
                full,
                share,
                where="mid",
                color=c,
                linewidth=lw,
                label=f"{_variant_label(v, 34)}\nmean {mean:.1f} rounds, n={_fmt_n(n)}",
            )
            ax.axvline(mean, color=c, linewidth=0.8, linestyle=":", ymax=0.97)
        ax.set_xlabel("game length (rounds)")
        ax.set_ylabel("share of games (%)")
        ax.set_ylim(bottom=0)
        ax.set_xlim(lo_r - 0.5, hi_r + 0.5)
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.grid(axis="y", color=GRID, linewidth=0.8)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, labelspacing=0.9)
        set_titles(
            fig,
            "Game length distribution",
            "share of games ending after each number of rounds; dotted lines = means",
            ax=ax,
        )
    return fig


# --------------------------------------------------------------------------- cards
def _rank_order(ranks: Iterable[str]) -> list[str]:
    present = list(dict.fromkeys(str(r) for r in ranks))
    known = [r for r in RANK_ORDER if r in present]
    return known + sorted(r for r in present if r not in RANK_ORDER)


def _pool_ranks(cards: pd.DataFrame) -> pd.DataFrame:
    """Pool per-card rows (one per suit) into one row per rank.

    Played WR: Wilson interval on the pooled wins. IWD: pooled GIH WR minus
    pooled GNS WR with a normal-approximation interval. Where a rank has a
    single card its own figures are kept as given.
    """

    rows = []
    for rank, g in cards.groupby(cards["rank"].astype(str), sort=False):
        if len(g) == 1:
            r = g.iloc[0]
            rows.append(
                dict(
                    rank=rank,
                    played_n=r.played_n,
                    played_wr=r.played_wr,
                    played_lo=r.played_lo,
                    played_hi=r.played_hi,
                    gih_n=r.gih_n,
                    iwd=r.iwd,
                    iwd_lo=r.iwd_lo,
                    iwd_hi=r.iwd_hi,
                )
            )
            continue
        pn = float(g["played_n"].sum())
        pw = float((g["played_wr"].fillna(0) * g["played_n"]).sum())
        plo, phi = wilson(np.array([pw]), np.array([pn]))
        gn = float(g["gih_n"].sum())
        nn = float(g["gns_n"].sum())
        gwr = float((g["gih_wr"].fillna(0) * g["gih_n"]).sum() / gn) if gn else np.nan
        nwr = float((g["gns_wr"].fillna(0) * g["gns_n"]).sum() / nn) if nn else np.nan
        iwd = gwr - nwr
        se = math.sqrt(gwr * (1 - gwr) / gn + nwr * (1 - nwr) / nn) if gn and nn else np.nan
        rows.append(
            dict(
                rank=rank,
                played_n=pn,
                played_wr=pw / pn if pn else np.nan,
                played_lo=plo[0],
                played_hi=phi[0],
                gih_n=gn,
                iwd=iwd,
                iwd_lo=iwd - _Z * se,
                iwd_hi=iwd + _Z * se,
            )
        )
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    order = _rank_order(out["rank"])
    return out.set_index("rank").loc[order].reset_index()


def _bars(ax: Axes, x, value, lo, hi, base: float, strong=None) -> None:
    """Bars from a reference line (``base``) with 95% CI whiskers; weak ones faded."""
    from matplotlib.colors import to_rgba

    value = np.asarray(value, dtype=float)
    alpha = (
        np.ones(len(value))
        if strong is None
        else np.where(np.asarray(strong, dtype=bool), 1.0, 0.45)
    )
    colors = [to_rgba(POS if v >= base else NEG, a) for v, a in zip(value, alpha, strict=False)]
    ax.bar(x, value - base, bottom=base, width=0.68, color=colors, zorder=2)
    yerr = np.vstack([value - np.asarray(lo, dtype=float), np.asarray(hi, dtype=float) - value])
    ax.errorbar(x, value, yerr=yerr, fmt="none", ecolor=INK, elinewidth=1.0, capsize=2.5, zorder=3)
    ax.axhline(base, color=INK, linewidth=0.9, zorder=1)
    ax.grid(axis="y", color=GRID, linewidth=0.8)


def card_chart_key(strategy: object, opponent: object = None) -> str:
    """The ``charts`` dict key of a card-value chart (shared with the report)."""
    return f"cards:{strategy}" if opponent is None else f"cards:{strategy}:vs:{opponent}"


def _select(df: pd.DataFrame, variant: str, strategy: object, opponent: object) -> pd.DataFrame:
    out = df[(df["variant"] == variant) & (df["strategy"] == strategy)]
    if opponent is not None and "opponent" in out.columns:
        out = out[out["opponent"] == opponent]
    return out


def card_value(
    cards_df: pd.DataFrame,
    restricted_df: pd.DataFrame | None = None,
    variant: str = "base",
    strategy: str | None = None,
    opponent: str | None = None,
) -> Figure:
    """Per-rank card value for one strategy in one variant.

    Panels (ranks A–9, J, Q, K in order, suits pooled): played win rate, IWD
    (win rate when in hand minus when not seen), both observational; and, when
    ``restricted_df`` is given, the causal effect on the strategy's score of
    forbidding it to play that rank (paired by seed). Error bars are 95% CIs.
    ``strategy=None`` takes the first strategy in the table for that variant.
    Where the tables have an ``opponent`` column, ``opponent`` selects one
    match-up; with ``opponent=None`` card counts are pooled over opponents and
    the restricted panel is shown only if it has a single opponent.
    """
    cards = cards_df[cards_df["variant"] == variant]
    if strategy is None and not cards.empty:
        strategy = str(cards["strategy"].iloc[0])
    cards = _select(cards_df, variant, strategy, opponent)
    restr = None
    if restricted_df is not None and not restricted_df.empty:
        restr = _select(restricted_df, variant, strategy, opponent)
        if restr.empty or restr["rank"].duplicated().any():
            restr = None

    with chart_style():
        pooled = _pool_ranks(cards) if not cards.empty else pd.DataFrame()
        panels = 2 + (restr is not None)
        fig = new_figure(7.6, 1.2 + 2.35 * panels)
        axes = fig.subplots(panels, 1, sharex=True)
        versus = f" vs {opponent}" if opponent is not None else ""
        title = f"Card value by rank — {strategy}{versus}, {variant}"
        if pooled.empty:
            set_titles(fig, title)
            for ax in axes:
                _empty(fig, ax, "no card data")
            return fig

        ranks = _rank_order(
            list(pooled["rank"]) + ([] if restr is None else list(restr["rank"].astype(str)))
        )
        xpos = {r: i for i, r in enumerate(ranks)}
        x = pooled["rank"].map(xpos).to_numpy()

        ax = axes[0]
        _bars(
            ax,
            x,
            pooled["played_wr"] * 100,
            pooled["played_lo"] * 100,
            pooled["played_hi"] * 100,
            50.0,
        )
        ax.set_ylabel("win rate when\nplayed (%)")
        panel_title(
            ax,
            f"Played win rate (observational), n = {n_range(pooled['played_n'])} plays per rank",
            fig.get_figwidth(),
        )

        ax = axes[1]
        _bars(ax, x, pooled["iwd"] * 100, pooled["iwd_lo"] * 100, pooled["iwd_hi"] * 100, 0.0)
        ax.set_ylabel("IWD\n(pp)")
        panel_title(
            ax,
            "Improvement when drawn, IWD = GIH WR − GNS WR (observational), "
            f"n = {n_range(pooled['gih_n'])} games in hand per rank",
            fig.get_figwidth(),
        )

        if restr is not None:
            ax = axes[2]
            rx = restr["rank"].astype(str).map(xpos).to_numpy()
            if "significant" in restr:
                sig = np.array(
                    [bool(v) if pd.notna(v) else False for v in restr["significant"]], dtype=bool
                )
            elif "p_holm" in restr:
                sig = (restr["p_holm"] < 0.05).to_numpy()
            else:
                sig = None
            _bars(
                ax,
                rx,
                restr["effect"] * 100,
                restr["effect_lo"] * 100,
                restr["effect_hi"] * 100,
                0.0,
                strong=sig,
            )
            ax.set_ylabel("Δ score when\nforbidden (pp)")
            panel_title(
                ax,
                "Restricted play (causal, paired): score change when this rank may not be "
                f"played, n = {n_range(restr['n_pairs'])} pairs; faded = not significant (Holm)",
                fig.get_figwidth(),
            )

        axes[-1].set_xticks(range(len(ranks)), [wrap_label(r) for r in ranks])
        axes[-1].set_xlabel("rank (suits pooled)")
        axes[-1].set_xlim(-0.6, len(ranks) - 0.4)
        set_titles(
            fig,
            title,
            "bars = estimate, whiskers = 95% CI; blue above / red below the reference line",
        )
    return fig


# --------------------------------------------------------------------------- overview
def variant_overview(variants_df: pd.DataFrame) -> Figure:
    """All variants side by side: mean game length, draw rate, luck vs skill.

    One row per variant (base on top and highlighted, then by number of rule
    options); each panel shows the estimate with its 95% CI. The luck-vs-skill
    panel is the best strategy's win rate against random play, annotated with
    the games needed for it to be ahead with 95% probability.
    """
    with chart_style():
        if variants_df.empty:
            return placeholder("Variants at a glance", "no variants")

        df = variants_df.copy()
        df["_key"] = df["variant"].map(_variant_sort_key)
        df = df.sort_values("_key").reset_index(drop=True)
        nv = len(df)
        y = np.arange(nv)
        has_luck = "luck_skill_winrate" in df and df["luck_skill_winrate"].notna().any()
        panels = 3 if has_luck else 2
        wrapped = any("\n" in _variant_label(v) for v in df["variant"])
        fig = new_figure(3.0 * panels + 2.4, max(2.4, (0.36 if wrapped else 0.26) * nv + 1.5))
        axes = fig.subplots(1, panels, sharey=True)

        games = df["games"].to_numpy(dtype=float)
        rm = df["rounds_mean"].to_numpy(dtype=float)
        if "rounds_lo" in df:  # the deal-clustered interval (tables.variant_table)
            r_lo, r_hi = df["rounds_lo"].to_numpy(float), df["rounds_hi"].to_numpy(float)
        else:
            half = _Z * df["rounds_sd"].to_numpy(dtype=float) / np.sqrt(np.maximum(games, 1))
            r_lo, r_hi = rm - half, rm + half
        specs = [
            (rm, r_lo, r_hi, None, "mean game length (rounds)", "Game length"),
            (
                df["draw_rate"].to_numpy(float) * 100,
                df["draw_lo"].to_numpy(float) * 100,
                df["draw_hi"].to_numpy(float) * 100,
                None,
                "draw rate (%)",
                "Draws",
            ),
        ]
        if has_luck:
            specs.append(
                (
                    df["luck_skill_winrate"].to_numpy(float) * 100,
                    df["luck_skill_lo"].to_numpy(float) * 100,
                    df["luck_skill_hi"].to_numpy(float) * 100,
                    50.0,
                    "best vs random: win rate (%)",
                    "Luck vs skill",
                )
            )

        base_rows = np.flatnonzero(df["variant"].to_numpy() == "base")
        for ax, (val, lo, hi, ref, xlabel, head) in zip(axes, specs, strict=False):
            for i in range(nv):
                if i % 2 == 0:
                    ax.axhspan(i - 0.5, i + 0.5, color=BAND, zorder=0, linewidth=0)
            for i in base_rows:
                ax.axhspan(i - 0.5, i + 0.5, color=_HIGHLIGHT, zorder=0, linewidth=0)
            ok = np.isfinite(val)
            ax.errorbar(
                val[ok],
                y[ok],
                xerr=np.vstack([val[ok] - lo[ok], hi[ok] - val[ok]]),
                fmt="o",
                color=POS,
                ecolor=POS,
                markersize=4,
                elinewidth=1.3,
                capsize=0,
                zorder=3,
            )
            if ref is not None:
                ax.axvline(ref, color=INK, linewidth=0.9, linestyle="--", zorder=1)
            ax.set_xlabel(xlabel)
            ax.set_title(head, loc="left", fontsize=9.5, fontweight="bold", color=INK)
            ax.grid(axis="x", color=GRID, linewidth=0.8)
            ax.tick_params(axis="y", length=0)
            ax.spines["left"].set_visible(False)
        axes[1].set_xlim(left=0)

        if has_luck and "games_needed" in df:
            ax = axes[2]
            hi = df["luck_skill_hi"].to_numpy(float) * 100
            for i, (g, h) in enumerate(zip(df["games_needed"], hi, strict=False)):
                if pd.notna(g) and np.isfinite(h):
                    ax.annotate(
                        f"{_fmt_n(g)} game{'' if g == 1 else 's'}",
                        (h, i),
                        xytext=(4, 0),
                        textcoords="offset points",
                        va="center",
                        fontsize=7.5,
                        color=MUTED,
                    )
            lo_x, hi_x = ax.get_xlim()
            ax.set_xlim(lo_x, hi_x + (hi_x - lo_x) * 0.22)

        axes[0].set_yticks(y, [_variant_label(v) for v in df["variant"]])
        axes[0].set_ylim(nv - 0.5, -0.5)
        set_titles(
            fig,
            "Variants at a glance",
            f"95% CIs; n = {n_range(df['games'])} games per variant; "
            "luck vs skill annotated with games needed for the better side to lead with 95% probability",
        )
    return fig


# --------------------------------------------------------------------------- all at once
def ratings_chart(ratings_df: pd.DataFrame, variant: str = "base") -> Figure:
    """Bradley–Terry Elo of each strategy with its 95% CI, and its weight in
    the max-entropy Nash mixture (with bootstrap CI) beside it."""
    df = ratings_df[ratings_df["variant"] == variant].sort_values("elo", ascending=True)
    with chart_style():
        if df.empty:
            return placeholder(
                f"Strategy ratings ({wrap_label(variant)})", "no round robin to rate"
            )
        has_nash = df["nash_p"].notna().any()
        n = len(df)
        fig = new_figure(9.0, max(2.4, 0.34 * n + 1.5))
        axes = (
            fig.subplots(1, 2, sharey=True, width_ratios=[3, 2])
            if has_nash
            else [fig.add_subplot()]
        )
        ax = axes[0]
        y = np.arange(n)
        elo, lo, hi = (df[c].to_numpy(dtype=float) for c in ("elo", "elo_lo", "elo_hi"))
        colors = ci_colors(lo, hi, 0)
        ax.axvline(0, color=INK, linewidth=0.9)
        ax.errorbar(
            elo, y, xerr=np.vstack([elo - lo, hi - elo]), fmt="none", ecolor=colors, elinewidth=1.4
        )
        ax.scatter(elo, y, color=colors, s=30, zorder=3)
        ax.set_yticks(y, [wrap_label(s) for s in df["strategy"]])
        ax.tick_params(axis="y", length=0)
        ax.grid(axis="x", color=GRID, linewidth=0.8)
        ax.set_xlabel("Elo vs field average (Bradley–Terry, 95% CI)")
        if has_nash:
            ax2 = axes[1]
            p = df["nash_p"].to_numpy(dtype=float) * 100
            plo = df["nash_p_lo"].to_numpy(dtype=float) * 100
            phi = df["nash_p_hi"].to_numpy(dtype=float) * 100
            ax2.barh(y, p, color=POS, height=0.6)
            ok = np.isfinite(plo) & np.isfinite(phi)
            ax2.errorbar(
                p[ok],
                y[ok],
                xerr=np.vstack([np.clip(p - plo, 0, None)[ok], np.clip(phi - p, 0, None)[ok]]),
                fmt="none",
                ecolor=INK,
                elinewidth=1,
            )
            ax2.set_xlim(0, 100)
            ax2.grid(axis="x", color=GRID, linewidth=0.8)
            ax2.set_xlabel("weight in the Nash mixture (%, bootstrap 95% CI)")
            ax2.tick_params(axis="y", length=0)
        games = df["games"].to_numpy(dtype=float) / 2
        set_titles(
            fig,
            f"Strategy ratings and the Nash mixture ({wrap_label(variant)})",
            f"round robin of {n} strategies, n = {n_range(games)} games per strategy; "
            "blue / red: reliably above / below the field average",
        )
    return fig


# --------------------------------------------------------------------------- loadouts
def loadout_matrix_chart(matrix_df: pd.DataFrame) -> Figure:
    """The loadout matrix as a heatmap: the row loadout's score against the
    column loadout (win + ½ draw), loadouts ordered by their score against the
    field (strongest first); cells whose 95% CI excludes ½ are dotted."""

    with chart_style():
        if matrix_df is None or matrix_df.empty:
            return placeholder("Loadout matrix", "no loadout runs")
        field = matrix_df.groupby("row")["score"].mean()
        names = sorted(field.index, key=lambda s: (-field[s], s))
        idx = {s: i for i, s in enumerate(names)}
        k = len(names)
        score = np.full((k, k), np.nan)
        sig = np.zeros((k, k), bool)
        for r in matrix_df.itertuples(index=False):
            i, j = idx[r.row], idx[r.col]
            score[i, j] = r.score
            sig[i, j] = r.score_lo > 0.5 or r.score_hi < 0.5
        norm, cmap, _ = _diverging(score, 0.05)
        side = 0.26 * k + 3.2
        fig = new_figure(side + 1.2, side + 0.6)
        ax = fig.add_subplot()
        edges = np.arange(k + 1) - 0.5
        im = ax.pcolormesh(edges, edges, np.ma.masked_invalid(score), cmap=cmap, norm=norm)
        ii, jj = np.nonzero(sig)
        ax.scatter(jj, ii, s=3, color=INK, linewidths=0)
        ax.set_aspect("equal")
        ax.set_xlim(-0.5, k - 0.5)
        ax.set_ylim(k - 0.5, -0.5)
        labels = [wrap_label(s) for s in names]
        ax.set_xticks(
            range(k), labels, rotation=60, ha="right", rotation_mode="anchor", fontsize=6.5
        )
        ax.set_yticks(range(k), labels, fontsize=6.5)
        ax.set_xlabel("opponent's loadout (column)")
        ax.set_ylabel("loadout (row)")
        ax.tick_params(length=0)
        _pct_colorbar(fig, im, ax, "row's score vs column (%)", 0.7)
        set_titles(
            fig,
            "Loadout against loadout",
            f"row's score (win + ½ draw) vs column, seat-swapped; dot: 95% CI excludes 50%; "
            f"n = {n_range(matrix_df['games'])} games per pairing",
            ax=ax,
        )
    return fig


def ci_colors(lo, hi, ref: float) -> list[str]:
    """Blue where the interval lies above ``ref``, red below, grey across it."""
    return [POS if a > ref else (NEG if b < ref else NEUTRAL) for a, b in zip(lo, hi, strict=True)]


def draw_cis(
    ax: Axes, value, y, lo, hi, colors, labels, size: float, fontsize: float | None = None
) -> None:
    """Points at ``value`` on rows ``y`` with their intervals ``lo``..``hi``,
    coloured ``colors``, each row labelled."""
    ax.errorbar(
        value,
        y,
        xerr=np.vstack([value - lo, hi - value]),
        fmt="none",
        ecolor=colors,
        elinewidth=1.4,
    )
    ax.scatter(value, y, color=colors, s=size, zorder=3)
    ticks = [wrap_label(s) for s in labels]
    if fontsize is None:
        ax.set_yticks(y, ticks)
    else:
        ax.set_yticks(y, ticks, fontsize=fontsize)
    ax.tick_params(axis="y", length=0)


def _forest(ax: Axes, labels, value, lo, hi, ref: float, scale: float = 100.0) -> None:
    """Points with CI bars, one row each (top = first), blue above / red below ``ref``."""
    value, lo, hi = (np.asarray(x, dtype=float) * scale for x in (value, lo, hi))
    y = np.arange(len(value))[::-1]
    ref = ref * scale
    ax.axvline(ref, color=INK, linewidth=0.9)
    draw_cis(ax, value, y, lo, hi, ci_colors(lo, hi, ref), labels, size=26)
    ax.grid(axis="x", color=GRID, linewidth=0.8)


def loadout_values_chart(
    pairs: pd.DataFrame, maneuvers: pd.DataFrame, items: pd.DataFrame
) -> Figure:
    """Item pairs and maneuvers (pooled score against the field) and each
    item's marginal value, each with its 95% CI."""
    with chart_style():
        if pairs is None or pairs.empty:
            return placeholder("Item pairs, maneuvers and items", "no loadout runs")
        fig = new_figure(10.0, max(3.0, 0.3 * len(pairs) + 1.9))
        axes = fig.subplots(1, 3, width_ratios=[1.2, 1, 1])
        _forest(axes[0], pairs["items"], pairs["score"], pairs["score_lo"], pairs["score_hi"], 0.5)
        axes[0].set_xlabel("score vs field (%)")
        axes[0].set_title("Item pairs", fontsize=10, loc="left")
        _forest(
            axes[1],
            maneuvers["maneuver"],
            maneuvers["score"],
            maneuvers["score_lo"],
            maneuvers["score_hi"],
            0.5,
        )
        axes[1].set_xlabel("score vs field (%)")
        axes[1].set_title("Maneuvers", fontsize=10, loc="left")
        _forest(
            axes[2],
            items["item"],
            items["marginal"],
            items["marginal_lo"],
            items["marginal_hi"],
            0.0,
        )
        axes[2].set_xlabel("with − without (points)")
        axes[2].set_title("Each item's marginal value", fontsize=10, loc="left")
        games = pd.concat([pairs["games"], maneuvers["games"]])
        set_titles(
            fig,
            "What the loadout choices are worth",
            f"pooled over the loadout matrix, 95% CI; blue / red: reliably above / below "
            f"even; n = {n_range(games)} games per row",
        )
    return fig


def ranges_chart(ranges_df: pd.DataFrame) -> Figure:
    """Share of the rounds fought at each range that each loadout wins."""

    with chart_style():
        if ranges_df is None or ranges_df.empty or not (ranges_df["rounds"] > 0).any():
            return placeholder("Where each loadout wins its rounds", "no rounds recorded")
        order = list(dict.fromkeys(ranges_df["range"]))
        names = list(dict.fromkeys(ranges_df["loadout"]))
        share = np.full((len(names), len(order)), np.nan)
        half = np.full_like(share, np.nan)
        for r in ranges_df.itertuples(index=False):
            if r.rounds > 0:
                i, j = names.index(r.loadout), order.index(r.range)
                share[i, j] = r.share
                half[i, j] = (r.share_hi - r.share_lo) / 2
        norm, cmap, spread = _diverging(share, 0.05)
        k = len(names)
        fig = new_figure(6.4, 0.27 * k + 1.9)
        ax = fig.add_subplot()
        im = ax.imshow(np.ma.masked_invalid(share), cmap=cmap, norm=norm, aspect="auto")
        for i in range(k):
            for j in range(len(order)):
                if np.isfinite(share[i, j]):
                    dark = abs(share[i, j] - 0.5) > 0.6 * spread
                    ax.text(
                        j,
                        i,
                        f"{share[i, j] * 100:.0f} ±{half[i, j] * 100:.0f}",
                        ha="center",
                        va="center",
                        fontsize=6.5,
                        color="white" if dark else INK,
                    )
        ax.set_xticks(range(len(order)), order)
        ax.xaxis.tick_top()
        ax.set_yticks(range(k), [wrap_label(s) for s in names], fontsize=6.5)
        ax.tick_params(length=0)
        _pct_colorbar(fig, im, ax, "share of rounds there won (%)", 0.6)
        set_titles(
            fig,
            "Where each loadout wins its rounds",
            f"% of the rounds fought at each range that the loadout wins, ± 95% Wilson "
            f"half-width; n = {n_range(ranges_df['rounds'][ranges_df['rounds'] > 0])} rounds "
            f"per cell",
            ax=ax,
        )
    return fig


def initiative_chart(init_df: pd.DataFrame) -> Figure:
    """The opening bid's winner's win rate by the size of its winning bid."""
    with chart_style():
        df = init_df[init_df["bid"] != "all"] if init_df is not None else None
        if df is None or df.empty:
            return placeholder("The value of the opening bid", "no bids recorded")
        fig = new_figure(6.4, 3.2)
        ax = fig.add_subplot()
        x = df["bid"].astype(int).to_numpy()
        w, lo, hi = (
            df[c].to_numpy(dtype=float) * 100 for c in ("winrate", "winrate_lo", "winrate_hi")
        )
        colors = ci_colors(lo, hi, 50)
        ax.axhline(50, color=INK, linewidth=0.9)
        ax.errorbar(
            x, w, yerr=np.vstack([w - lo, hi - w]), fmt="none", ecolor=colors, elinewidth=1.4
        )
        ax.scatter(x, w, color=colors, s=26, zorder=3)
        for xi, wi, g in zip(x, hi, df["games"], strict=False):
            ax.text(xi, wi + 1, _fmt_n(g), ha="center", va="bottom", fontsize=6.5, color=MUTED)
        ax.set_xticks(x)
        ax.set_xlabel("sum of the winning opening bid")
        ax.set_ylabel("bid winner's win rate (%)")
        ax.grid(axis="y", color=GRID, linewidth=0.8)
        allrow = init_df[init_df["bid"] == "all"]
        sub = ""
        if not allrow.empty:
            a = allrow.iloc[0]
            sub = (
                f"all bids: the winner wins {a['winrate'] * 100:.1f}% "
                f"[{a['winrate_lo'] * 100:.1f}, {a['winrate_hi'] * 100:.1f}] of "
                f"{_fmt_n(a['games'])} games; "
            )
        set_titles(
            fig,
            "The value of the opening bid",
            sub + "95% Wilson CI; the figure above each point is its number of games",
            ax=ax,
        )
    return fig


def exploitability_chart(
    curve: Sequence[Mapping],
    epsilon: float,
    check: Mapping | None = None,
    audits: Sequence[Mapping] = (),
) -> Figure:
    """The exploitability curve of an equilibrium search: per iteration the
    best response's gain over ½ against that iteration's mixture (points,
    with its 95% interval on fresh deals), ε drawn as a line; the final
    mixture's recorded ``audits`` (independent, stronger searches: ``label``,
    ``mean``, ``lo``, ``hi``) and ``check`` (the study's re-measure) as last
    points of their own."""
    with chart_style():
        pts = []
        for st in curve or []:
            g = st.get("gain") or {}
            if g.get("mean") is None:
                continue
            pts.append((str(int(st["iteration"])), g["mean"], g.get("lo"), g.get("hi"), POS))
        for a in audits or ():
            if a.get("mean") is not None:
                pts.append((str(a["label"]), a["mean"], a.get("lo"), a.get("hi"), NEG))
        if check and check.get("mean") is not None:
            pts.append(("re-measured", check["mean"], check.get("lo"), check.get("hi"), INK))
        if not pts:
            return placeholder("Exploitability over the search", "no gain measured")
        fig = new_figure(6.4, 3.0)
        ax = fig.add_subplot()
        x = np.arange(len(pts))
        mean = np.array([100 * float(p[1]) for p in pts])
        lo = np.array([100 * float(p[2] if p[2] is not None else p[1]) for p in pts])
        hi = np.array([100 * float(p[3] if p[3] is not None else p[1]) for p in pts])
        colors = [p[4] for p in pts]
        ax.axhline(0, color=MUTED, linewidth=0.8)
        ax.axhline(100 * epsilon, color=NEG, linewidth=1.1, linestyle="--")
        ax.text(
            x[-1] + 0.45,
            100 * epsilon,
            f"ε = {100 * epsilon:g}",
            color=NEG,
            va="bottom",
            ha="right",
            fontsize=8.5,
        )
        ax.errorbar(
            x,
            mean,
            yerr=np.vstack([mean - lo, hi - mean]),
            fmt="none",
            ecolor=colors,
            elinewidth=1.4,
        )
        if len(curve or []) > 1:
            k = sum(1 for p in pts if p[4] == POS)
            ax.plot(x[:k], mean[:k], color=POS, linewidth=0.9, alpha=0.6)
        ax.scatter(x, mean, color=colors, s=26, zorder=3)
        ax.set_xticks(x, [p[0] for p in pts])
        ax.set_xlim(-0.5, len(pts) - 0.5)
        ax.set_xlabel(
            "iteration of the search; audits of the final mixture; re-measured: the study's check"
        )
        ax.set_ylabel("best response's gain (points)")
        ax.grid(axis="y", color=GRID, linewidth=0.8)
        set_titles(
            fig,
            "Exploitability over the search",
            "the best response found against each iteration's mixture, gain over ½ in "
            "points with its 95% interval on fresh deals; the mixture is an equilibrium "
            "when the interval's top is at most ε (dashed)",
            ax=ax,
        )
    return fig


def _matchups(df: pd.DataFrame) -> list[tuple[object, object]]:
    """(strategy, opponent) pairs in table order; opponent None if not recorded."""
    if "opponent" in df.columns:
        return list(dict.fromkeys(zip(df["strategy"], df["opponent"], strict=False)))
    return [(s, None) for s in dict.fromkeys(df["strategy"])]


_POOLS: dict[int, object] = {}


def _drawing_pool(workers: int):
    """The process pool that draws charts in ``workers`` processes, made on
    first use and kept for this process's life (shut down at its exit).

    A report draws each experiment's charts in turn: a pool made per call
    started fresh workers each time, every one importing pandas and
    matplotlib again (2 to 3 s of a core each; a report of eleven commands
    started sixteen). Spawned, not forked: a clean interpreter, no forked
    numba threads. A worker drew several charts one after another before
    too (``chunksize=1``), as a process without workers draws them all: a
    chart is the same file whichever process draws it, and after whichever
    chart. A pool that broke (a worker killed) is dropped: the next call
    makes a new one."""
    pool = _POOLS.get(workers)
    if pool is None or getattr(pool, "_broken", False):
        import atexit
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        pool = ProcessPoolExecutor(
            max_workers=workers, mp_context=multiprocessing.get_context("spawn")
        )
        if not _POOLS:
            atexit.register(_shut_pools)
        _POOLS[workers] = pool
    return pool


def _shut_pools() -> None:
    for pool in _POOLS.values():
        pool.shutdown(wait=True, cancel_futures=True)
    _POOLS.clear()


def _render(job: tuple) -> str:
    """Draw and save one chart (runs in a worker process): (function name,
    positional args, keyword args, stem, png, write) -> inline SVG."""
    name, args, kwargs, stem, png, write = job
    return save(globals()[name](*args, **kwargs), stem, png=png, write=write)


@functools.lru_cache(maxsize=1)
def _code_hash() -> bytes:
    import hashlib

    return hashlib.sha256(Path(__file__).read_bytes()).digest()


def _fingerprint(job: tuple) -> str:
    """A hash of a chart job's kind, data and name, and of this module's code."""
    import hashlib

    name, args, kwargs, stem = job
    h = hashlib.sha256(_code_hash())
    h.update(repr((name, Path(stem).name, sorted(kwargs.items()))).encode())
    for a in args:
        if isinstance(a, pd.DataFrame):
            h.update(repr((list(a.columns), [str(t) for t in a.dtypes], a.shape)).encode())
            for col in a.columns:
                v = a[col].to_numpy()
                if v.dtype.kind in "biuf":
                    h.update(np.ascontiguousarray(v).tobytes())
                else:
                    h.update("\x1f".join(map(repr, v.tolist())).encode())
        else:
            h.update(repr(a).encode())
    return h.hexdigest()[:32]


@phases.timed("charts")
def all_charts(
    tables: Mapping[str, pd.DataFrame | None],
    chart_dir: Path,
    card_variant: str = "base",
    matrix_variants: Sequence[str] | None = None,
    workers: int | None = None,
    png: bool = True,
    cache_dir: Path | None = None,
) -> dict[str, str]:
    """Render every standard chart for one game's tables into ``chart_dir``.

    Returns ``{name: inline SVG}`` using the names :func:`balance.report.write_index`
    places on the page: ``overview``, ``diffs``, ``rounds``,
    ``matrix:<variant>`` (one per variant) and :func:`card_chart_key`
    (card value in ``card_variant``, one per strategy or per strategy and
    opponent, when card tables exist) and ``ratings:<variant>``. Charts are
    drawn in ``workers`` processes (default: one per core) when there are
    several.

    With ``chart_dir=None`` no files are written (the page's inline SVG
    only). With ``cache_dir``, each chart's inline SVG is kept there under a
    hash of its data, its kind and this module's code, so a report rebuilt
    from the same runs draws nothing again.
    """
    import os

    write = chart_dir is not None
    chart_dir = Path(chart_dir) if write else Path("chart")
    jobs: list[tuple[str, tuple]] = []  # (page name, job)

    variants = tables.get("variants")
    if variants is not None and not variants.empty:
        jobs.append(("overview", ("variant_overview", (variants,), {}, chart_dir / "overview")))
    diffs = tables.get("diffs")
    if diffs is not None and not diffs.empty:
        jobs.append(("diffs", ("diff_heatmap", (diffs,), {}, chart_dir / "variant-diffs")))
    rounds = tables.get("rounds")
    if rounds is not None and not rounds.empty:
        jobs.append(("rounds", ("rounds_distribution", (rounds,), {}, chart_dir / "rounds")))
    matrix = tables.get("matrix")
    if matrix is not None and not matrix.empty:
        names = (
            list(matrix_variants)
            if matrix_variants is not None
            else sorted(matrix["variant"].unique(), key=_variant_sort_key)
        )
        for i, v in enumerate(names):
            jobs.append(
                (
                    f"matrix:{v}",
                    (
                        "matrix_heatmap",
                        (matrix[matrix["variant"] == v], v),
                        {},
                        chart_dir / f"matrix-{i:02d}-{slug(v)}",
                    ),
                )
            )
    ratings = tables.get("ratings")
    if ratings is not None and not ratings.empty:
        names = (
            list(matrix_variants)
            if matrix_variants is not None
            else sorted(ratings["variant"].unique(), key=_variant_sort_key)
        )
        for i, v in enumerate(names):
            if (ratings["variant"] == v).any():
                jobs.append(
                    (
                        f"ratings:{v}",
                        (
                            "ratings_chart",
                            (ratings[ratings["variant"] == v], v),
                            {},
                            chart_dir / f"ratings-{i:02d}-{slug(v)}",
                        ),
                    )
                )
    cards = tables.get("cards")
    if cards is not None and not cards.empty:
        sub = cards[cards["variant"] == card_variant]
        for i, (s, o) in enumerate(_matchups(sub)):
            stem = f"cards-{i:02d}-{slug(s)}" + ("" if o is None else f"-vs-{slug(o)}")
            jobs.append(
                (
                    card_chart_key(s, o),
                    (
                        "card_value",
                        (cards, tables.get("restricted")),
                        {"variant": card_variant, "strategy": s, "opponent": o},
                        chart_dir / stem,
                    ),
                )
            )
    lm = tables.get("loadout_matrix")
    if lm is not None and not lm.empty:
        jobs.append(
            ("loadout_matrix", ("loadout_matrix_chart", (lm,), {}, chart_dir / "loadout-matrix"))
        )
        jobs.append(
            (
                "loadout_values",
                (
                    "loadout_values_chart",
                    (tables.get("item_pairs"), tables.get("maneuvers"), tables.get("items")),
                    {},
                    chart_dir / "loadout-values",
                ),
            )
        )
    rb = tables.get("ranges_by_loadout")
    if rb is not None and not rb.empty:
        jobs.append(("ranges", ("ranges_chart", (rb,), {}, chart_dir / "ranges")))
    ini = tables.get("initiative")
    if ini is not None and not ini.empty:
        jobs.append(("initiative", ("initiative_chart", (ini,), {}, chart_dir / "initiative")))
    keys = [_fingerprint(job) for _, job in jobs] if cache_dir is not None else [None] * len(jobs)
    svgs: list[str | None] = [None] * len(jobs)
    if cache_dir is not None:
        for i, k in enumerate(keys):
            svg = _cached_chart(Path(cache_dir) / f"{k}.svg")
            if svg is not None and (
                not write or _files_from_cache(cache_dir, k, jobs[i][1][3], png)
            ):
                svgs[i] = svg
    todo = [i for i, v in enumerate(svgs) if v is None]
    work = [(*jobs[i][1], png, write) for i in todo]
    workers = workers or WORKERS or os.cpu_count() or 1
    if workers > 1 and len(work) > 2:
        done = list(_drawing_pool(workers).map(_render, work, chunksize=1))
    else:
        done = [_render(job) for job in work]
    for i, svg in zip(todo, done, strict=False):
        svgs[i] = svg
        if cache_dir is not None:
            from balance.store import write_text_atomic

            if write:
                _files_to_cache(cache_dir, keys[i], jobs[i][1][3], png)
            write_text_atomic(Path(cache_dir) / f"{keys[i]}.svg", _sealed(svg))
    return {name: svg for (name, _), svg in zip(jobs, svgs, strict=False)}


# A chart written to files is cached with them: its SVG and PNG files as drawn
# (``<key>.file.svg``, ``<key>.png``), each beside its SHA-256
# (``<name>.sha256``), so a study rebuilt from the same runs copies them
# instead of drawing again. A missing or damaged file means the chart is drawn.
_FILE_EXTS = (".svg", ".png")


def _cache_name(key: str, ext: str) -> str:
    return f"{key}.file.svg" if ext == ".svg" else f"{key}{ext}"


def _files_to_cache(cache_dir: Path, key: str, stem: Path, png: bool) -> None:
    import hashlib

    from balance.store import write_bytes_atomic, write_text_atomic

    for ext in _FILE_EXTS[: 2 if png else 1]:
        try:
            data = Path(stem).with_name(Path(stem).name + ext).read_bytes()
        except OSError:
            return
        name = _cache_name(key, ext)
        write_bytes_atomic(Path(cache_dir) / name, data)
        write_text_atomic(Path(cache_dir) / f"{name}.sha256", hashlib.sha256(data).hexdigest())


def _files_from_cache(cache_dir: Path, key: str, stem: Path, png: bool) -> bool:
    """Write a cached chart's files at ``stem``; False (draw it) if any is
    missing or fails its checksum."""
    import hashlib

    from balance.store import write_bytes_atomic

    found = {}
    for ext in _FILE_EXTS[: 2 if png else 1]:
        name = _cache_name(key, ext)
        try:
            data = (Path(cache_dir) / name).read_bytes()
            digest = (Path(cache_dir) / f"{name}.sha256").read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return False
        if hashlib.sha256(data).hexdigest() != digest:
            return False
        found[ext] = data
    for ext, data in found.items():
        write_bytes_atomic(Path(stem).with_name(Path(stem).name + ext), data)
    return True


_SEAL = "<!-- balance chart cache sha256 "


def _sealed(svg: str) -> str:
    """A chart as the cache keeps it: its SVG, then a comment with the SHA-256
    of that SVG, so a damaged entry is never put on a page."""
    import hashlib

    return f"{svg}{_SEAL}{hashlib.sha256(svg.encode()).hexdigest()} -->\n"


def _cached_chart(path: Path) -> str | None:
    """A cached chart's SVG, or None (draw it again): absent, written before
    the cache kept checksums, or damaged (said in one line on stderr; the
    entry is drawn again and overwritten)."""
    import hashlib

    try:
        raw = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    svg, seal, tail = raw.decode("utf-8", errors="replace").rpartition(_SEAL)
    if not seal:
        text = raw.strip()
        if text.startswith(b"<svg") and text.endswith(b"</svg>"):
            return None  # a whole chart cached before the checksums: drawn again, quietly
        tail = None  # not a whole chart: damaged
    if tail != f"{hashlib.sha256(svg.encode()).hexdigest()} -->\n":
        from balance.store import warn

        warn(f"{path}: chart cache entry is damaged; drawn again")
        return None
    return svg
