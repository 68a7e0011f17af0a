"""The HTML report: one self-contained page per study (``index.html``).

Input, per game, is a dict with

``name``
    the game's display name, e.g. ``"Tosk"``;
``tables``
    the study's pandas DataFrames (rates and differences as fractions, not
    percent; every ``*_lo``/``*_hi`` pair is a 95% CI):

    - ``matrix``: variant, a, b, games, a_wins, b_wins, draws, winrate(_lo/_hi)
      (a's win rate vs b, Wilson), score(_lo/_hi), rounds_mean, rounds_sd;
    - ``strategies``: variant, strategy, games, wins, draws, winrate(_lo/_hi),
      score(_lo/_hi);
    - ``variants``: variant, games, draws, draw_rate, draw_lo, draw_hi,
      rounds_mean, rounds_sd, best_strategy, luck_skill_winrate(_lo/_hi),
      games_needed (NaN when not reached); optional ``timeouts`` (count) and
      ``seat1_share``/``seat1_lo``/``seat1_hi`` (first seat's share of decided games);
    - ``diffs``: variant, strategy, n_pairs, diff(_lo/_hi), p, p_holm, significant;
    - ``rounds``: variant, rounds, count;
    - ``cards`` (optional, ``None`` or absent): variant, strategy, [opponent], card, rank,
      suit, played_n, played_wr(_lo/_hi), gih_n, gih_wr(_lo/_hi), gns_n,
      gns_wr, iwd(_lo/_hi);
    - ``restricted`` (optional): variant, strategy, [opponent], rank, n_pairs,
      effect(_lo/_hi), p, p_holm, [significant];
``charts``
    ``{name: SVG text}`` as returned by :func:`balance.charts.save` (see
    :func:`balance.charts.all_charts`). Names the page knows: ``overview``,
    ``rounds``, ``diffs``, ``matrix:<variant>`` (shown in that variant's
    block), ``cards:<strategy>`` or ``cards:<strategy>:vs:<opponent>``
    (:func:`balance.charts.card_chart_key`, shown in that card block); any
    other name is shown under "More charts";
``manifest``
    command, seed, config_hash, engine_version, date, games_total,
    elapsed_s, rulings (list of strings), variants (list);
``summary``
    plain-language verdict strings, shown at the top of the scripted field;
``equilibrium`` (a study's pages; :func:`balance.pages.add_equilibrium`)
    the verdicts under equilibrium play: the page and the index lead with them
    (:func:`_equilibrium_section`), and the scripted field follows under the
    heading :data:`EQ_BASELINE`; its chart is ``charts["equilibrium"]``.

The page has inline CSS, inline SVG charts and a few lines of inline script
(click a column header to sort); it loads nothing from the network. All text
goes through Jinja2 autoescaping; only chart SVG made by our own chart code
is marked safe, and only after a check that it carries no script.

The ``fmt_*`` helpers are the one place numbers are turned into text, so
tables, verdicts and the CLI all read the same way:
``fmt_pct_ci(0.523, 0.513, 0.533, 9604) == "52.3% [51.3, 53.3] n=9,604"``.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from balance import phases, resources

__all__ = [
    "fmt_int",
    "fmt_n",
    "fmt_pct",
    "fmt_pct_ci",
    "fmt_pp",
    "fmt_pp_ci",
    "fmt_mean_ci",
    "fmt_p",
    "fmt_games_needed",
    "fmt_seconds",
    "wilson_ci",
    "render_index",
    "write_index",
]

TEMPLATE_DIR = resources.templates()


# --------------------------------------------------------------------------- formatting
from balance.fmt import (  # noqa: E402  (re-exported: the report's public helpers)
    MISSING,
    _missing,
    _num,
    fmt_games_needed,
    fmt_int,
    fmt_mean_ci,
    fmt_n,
    fmt_p,
    fmt_pct,
    fmt_pct_ci,
    fmt_pp,
    fmt_pp_ci,
    fmt_seconds,
    wilson_ci,
)

# --------------------------------------------------------------------------- page model
MISSING_TITLE = "not measured in these runs (see the note at the foot of the page)"


def table_cell(text: str, sort: Any = None, cls: str = "", title: str = ""):
    """A table cell as escaped HTML: display text, a numeric sort key
    (``data-v``), an optional class and tooltip. Built here rather than in a
    template macro: a study page has tens of thousands of cells."""
    from markupsafe import Markup, escape

    v = (
        ""
        if _missing(sort)
        else (f"{float(sort):.10g}" if isinstance(sort, (int, float, np.number)) else str(sort))
    )
    attrs = f' data-v="{escape(v)}"'
    if not title and MISSING in str(text):
        title = MISSING_TITLE  # a dash always says why it is there
    if cls:
        attrs += f' class="{escape(cls)}"'
    if title:
        attrs += f' title="{escape(title)}"'
    return Markup(f"<td{attrs}>{escape(text)}</td>")


def _side(lo: Any, hi: Any, ref: float = 0.5) -> str:
    """CSS class for an interval that lies wholly above ("pos") or below ("neg") ``ref``."""
    if _missing(lo) or _missing(hi):
        return ""
    return "pos" if float(lo) > ref else ("neg" if float(hi) < ref else "")


def _variant_key(name: Any) -> tuple[int, str]:
    name = str(name)
    return (0, "") if name == "base" else (1 + name.count("+"), name)


def _slug(text: Any) -> str:
    s = re.sub(r"[^A-Za-z0-9_-]+", "-", str(text)).strip("-")
    return s or "x"


_PROLOG = re.compile(r"^\s*(<\?xml[^>]*\?>\s*)?(<!DOCTYPE[^>]*>\s*)?", re.S)
_UNSAFE_TAGS = {
    "script",
    "foreignobject",
    "iframe",
    "object",
    "embed",
    "animate",
    "set",
    "handler",
    "listener",
}
_UNSAFE_VALUE = re.compile(r"javascript:|@import|url\(\s*['\"]?\s*(?!#)", re.I)


def _svg_problem(text: str) -> str | None:
    """Why an SVG is not plain chart markup (None if it is).

    The check walks the parsed elements and attributes, so a name drawn as
    text (``&lt;img onerror=…&gt;`` inside a ``<text>``) is data, not markup."""
    import xml.etree.ElementTree as ET

    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        return f"not well-formed ({exc})"
    for el in root.iter():
        tag = str(el.tag).rsplit("}", 1)[-1].lower()
        if tag in _UNSAFE_TAGS:
            return f"<{tag}> element"
        for name, value in el.attrib.items():
            local = name.rsplit("}", 1)[-1].lower()
            if local.startswith("on"):
                return f"event attribute {local}"
            if local in ("href", "src") and not (
                value.startswith("#") or re.match(r"data:image/(png|jpeg);base64,", value)
            ):
                return f"link {value[:40]!r}"
            if _UNSAFE_VALUE.search(value):
                return f"attribute {local} loads or runs something"
        if tag == "style" and el.text and _UNSAFE_VALUE.search(el.text):
            return "stylesheet loads something"
    return None


def trusted_svg(name: str, svg: str):
    """Mark chart SVG safe after checking it is plain SVG from our chart code."""
    from markupsafe import Markup

    text = _PROLOG.sub("", str(svg), count=1).strip()
    problem = "no <svg> root" if not text.startswith("<svg") else _svg_problem(text)
    if problem:
        raise ValueError(f"chart {name!r} is not plain SVG from balance.charts ({problem})")
    return Markup(text)


def _table(tables: Mapping[str, Any], key: str) -> pd.DataFrame | None:
    df = tables.get(key)
    if df is None or not isinstance(df, pd.DataFrame) or df.empty:
        return None
    return df


_CHART_INFO = {
    "overview": (
        "Variants at a glance",
        "Mean game length, draw rate and the best strategy's win rate against random play, "
        "per variant, with 95% confidence intervals.",
    ),
    "rounds": (
        "Game length distribution",
        "Share of games ending after each number of rounds, for a few contrasting variants.",
    ),
    "diffs": (
        "Change in each strategy's score vs base",
        "Each cell: a strategy's score under the variant minus its score in base, on the same "
        "deals (paired by seed), in percentage points; the colour is the change. Bold with *: the "
        "change is shown (Holm p < 0.05); ≈: it is shown to lie within the equivalence margin "
        "(TOST); grey and faded: no change is shown either way. The chart's subtitle gives the "
        "paired games behind each cell; the tables below give every interval.",
    ),
}


def _rounds_text(r: Mapping[str, Any]) -> str:
    """Mean rounds with its 95% interval, sd and n: the deal-clustered interval
    of the variant table (``rounds_lo``/``rounds_hi``) where it has one."""
    games = r.get("games")
    if "rounds_lo" not in r or _missing(r.get("rounds_mean")):
        return fmt_mean_ci(r.get("rounds_mean"), r.get("rounds_sd"), games)
    out = f"{r['rounds_mean']:.1f}"
    if not (_missing(r["rounds_lo"]) or _missing(r["rounds_hi"])):
        out += f" [{r['rounds_lo']:.1f}, {r['rounds_hi']:.1f}]"
    if not _missing(r.get("rounds_sd")):
        out += f" sd {r['rounds_sd']:.1f}"
    return out + (f" {fmt_n(games)}" if not _missing(games) else "")


def _variants_section(tables: Mapping[str, Any]) -> dict | None:
    v = _table(tables, "variants")
    if v is None:
        return None
    matrix = _table(tables, "matrix")
    has_timeouts = "timeouts" in v.columns
    has_seat = "seat1_share" in v.columns
    rows = []
    for r in sorted(v.to_dict("records"), key=lambda r: _variant_key(r["variant"])):
        games = r.get("games")
        cells = [
            table_cell(fmt_int(games), games),
            table_cell(_rounds_text(r), r.get("rounds_mean")),
            table_cell(fmt_int(r.get("draws")), r.get("draws")),
            table_cell(
                fmt_pct_ci(r.get("draw_rate"), r.get("draw_lo"), r.get("draw_hi"), games),
                r.get("draw_rate"),
            ),
        ]
        if has_seat:
            cells.append(
                table_cell(
                    fmt_pct_ci(r.get("seat1_share"), r.get("seat1_lo"), r.get("seat1_hi")),
                    r.get("seat1_share"),
                    cls=_side(r.get("seat1_lo"), r.get("seat1_hi")),
                )
            )
        if has_timeouts:
            t = r.get("timeouts")
            # deal-clustered where the table has it (tables.variant_table)
            tlo, thi = (
                (r["timeout_lo"], r["timeout_hi"]) if "timeout_lo" in r else wilson_ci(t, games)
            )
            rate = None if _missing(t) or _missing(games) or not games else float(t) / float(games)
            cells.append(table_cell(f"{fmt_int(t)} · {fmt_pct_ci(rate, tlo, thi)}", rate))
        best = r.get("best_strategy")
        ls_n = None
        if matrix is not None and not _missing(best):
            # the baseline is "random", or "random@<deck or loadout>" in games with them
            vs_random = matrix["b"].astype(str).str.split("@").str[0] == "random"
            m = matrix[(matrix["variant"] == r["variant"]) & (matrix["a"] == best) & vs_random]
            if len(m):
                ls_n = m["games"].iloc[0]
        cells += [
            table_cell(
                MISSING if _missing(best) else str(best),
                None if _missing(best) else str(best),
                cls="txt",
                title="no strategy played the random baseline" if _missing(best) else "",
            ),
            table_cell(
                fmt_pct_ci(
                    r.get("luck_skill_winrate"),
                    r.get("luck_skill_lo"),
                    r.get("luck_skill_hi"),
                    ls_n,
                ),
                r.get("luck_skill_winrate"),
            ),
            table_cell(
                fmt_games_needed(r.get("games_needed")),
                r.get("games_needed"),
                title=""
                if not _missing(r.get("games_needed"))
                else "not reached: the better side is not ahead, or beyond the search limit",
            ),
        ]
        rows.append({"name": str(r["variant"]), "base": r["variant"] == "base", "cells": cells})
    return {"rows": rows, "has_timeouts": has_timeouts, "has_seat": has_seat}


def _matrix_table(records: list[dict], order: Sequence[str]) -> dict | None:
    """The head-to-head table of one variant from its matrix rows."""
    if not records:
        return None
    by = {(r["a"], r["b"]): r for r in records}
    rows = []
    for a in order:
        cells = []
        for b in order:
            r = by.get((a, b))
            if a == b or r is None:
                cells.append(
                    table_cell(
                        MISSING,
                        None,
                        cls="diag",
                        title="a strategy against itself is not played (it scores ½ by symmetry)"
                        if a == b
                        else "this pairing was not played",
                    )
                )
                continue
            w, lo, hi = r["winrate"], r["winrate_lo"], r["winrate_hi"]
            cells.append(
                table_cell(
                    f"{fmt_pct(w)} ±{_num((hi - lo) / 2 * 100, 1)}",
                    w,
                    cls=_side(r.get("score_lo"), r.get("score_hi")),
                    title=(
                        f"wins {fmt_pct_ci(w, lo, hi, r['games'])}; draws {fmt_int(r['draws'])}; "
                        f"score {fmt_pct_ci(r.get('score'), r.get('score_lo'), r.get('score_hi'))}"
                    ),
                )
            )
        rows.append({"name": str(a), "cells": cells})
    n = [r["games"] for r in records]
    n_text = fmt_int(min(n)) if min(n) == max(n) else f"{fmt_int(min(n))}–{fmt_int(max(n))}"
    return {"columns": [str(s) for s in order], "rows": rows, "n": n_text}


def _strategies_section(tables: Mapping[str, Any], charts: Mapping[str, Any]) -> list[dict]:
    s = _table(tables, "strategies")
    if s is None:
        return []
    matrix = _table(tables, "matrix")
    by_variant: dict[Any, list[dict]] = {}
    for r in matrix.to_dict("records") if matrix is not None else []:
        by_variant.setdefault(r["variant"], []).append(r)
    strat_rows: dict[Any, list[dict]] = {}
    for r in s.to_dict("records"):
        strat_rows.setdefault(r["variant"], []).append(r)
    out = []
    names = sorted(strat_rows, key=_variant_key)
    for i, v in enumerate(names):
        recs = sorted(strat_rows[v], key=lambda r: (-r["score"], str(r["strategy"])))
        rows = []
        for r in recs:
            games, wins, draws = r["games"], r["wins"], r["draws"]
            losses = None if _missing(games) else games - wins - draws
            rows.append(
                {
                    "name": str(r["strategy"]),
                    "cells": [
                        table_cell(fmt_int(games), games),
                        table_cell(f"{fmt_int(wins)} / {fmt_int(draws)} / {fmt_int(losses)}", wins),
                        table_cell(
                            fmt_pct_ci(r["winrate"], r["winrate_lo"], r["winrate_hi"], games),
                            r["winrate"],
                        ),
                        table_cell(
                            fmt_pct_ci(r["score"], r["score_lo"], r["score_hi"], games),
                            r["score"],
                            cls=_side(r["score_lo"], r["score_hi"]),
                        ),
                    ],
                }
            )
        order = [str(r["strategy"]) for r in recs]
        mt = _matrix_table(by_variant.get(v, []), [r["strategy"] for r in recs])
        chart = charts.get(f"matrix:{v}")
        out.append(
            {
                "variant": str(v),
                "open": i == 0,
                "rows": rows,
                "order": order,
                "leader": order[0] if order else "",
                "matrix": mt,
                "chart": chart,
            }
        )
    return out


def _diff_rows(df: pd.DataFrame) -> list[dict]:
    rows = []
    for r in df.to_dict("records"):
        sig = bool(r.get("significant")) if not _missing(r.get("significant")) else False
        cls = ("pos" if r["diff"] > 0 else "neg") if sig else ""
        rows.append(
            {
                "name": str(r["variant"]),
                "cells": [
                    table_cell(str(r["strategy"]), str(r["strategy"]), cls="txt"),
                    table_cell(
                        fmt_pp_ci(r["diff"], r["diff_lo"], r["diff_hi"], r["n_pairs"]),
                        r["diff"],
                        cls=cls,
                    ),
                    table_cell(fmt_p(r.get("p")), r.get("p")),
                    table_cell(fmt_p(r.get("p_holm")), r.get("p_holm")),
                    table_cell(fmt_p(r.get("p_bh")), r.get("p_bh")),
                    table_cell("yes" if sig else "no", int(sig), cls="sig" if sig else "muted"),
                    table_cell(
                        _equiv_text(r),
                        r.get("tost_p"),
                        cls="sig" if r.get("equivalent") is True else "muted",
                    ),
                ],
            }
        )
    return rows


def _equiv_text(r: Mapping[str, Any]) -> str:
    if _missing(r.get("tost_p")):
        return MISSING
    m = _num(100 * float(r.get("margin", 0.01)), 1)
    return (
        f"yes, within ±{m} pt" if r.get("equivalent") else "not shown"
    ) + f" (TOST p={fmt_p(r['tost_p'])})"


def _diffs_section(tables: Mapping[str, Any]) -> dict:
    d = _table(tables, "diffs")
    if d is None:
        return {"all": [], "significant": [], "n_tests": 0}
    d = d.assign(_k=d["variant"].map(_variant_key)).sort_values(["_k", "strategy"])
    sig_mask = d["significant"].map(lambda v: bool(v) if not _missing(v) else False).astype(bool)
    sig = d[sig_mask].assign(_a=lambda x: -x["diff"].abs()).sort_values(["_a", "_k", "strategy"])
    return {"all": _diff_rows(d), "significant": _diff_rows(sig), "n_tests": len(d)}


_RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")


def _rank_key(rank: Any) -> tuple[int, str]:
    r = str(rank)
    return (_RANKS.index(r), "") if r in _RANKS else (len(_RANKS), r)


def _cards_section(tables: Mapping[str, Any], charts: Mapping[str, Any]) -> dict | None:
    cards = _table(tables, "cards")
    restricted = _table(tables, "restricted")
    if cards is None and restricted is None:
        return None
    from .charts import _matchups, _select, card_chart_key

    pool = cards if cards is not None else restricted
    variants = sorted(pool["variant"].unique(), key=_variant_key)
    variant = "base" if "base" in variants else variants[0]
    blocks = []
    for s, o in _matchups(pool[pool["variant"] == variant]):
        crow = []
        if cards is not None:
            sub = _select(cards, variant, s, o)
            sub = sub.assign(_k=sub["rank"].map(_rank_key)).sort_values(["_k", "suit"])
            for r in sub.to_dict("records"):
                crow.append(
                    {
                        "name": str(r["card"]),
                        "cells": [
                            table_cell(
                                fmt_pct_ci(
                                    r["played_wr"], r["played_lo"], r["played_hi"], r["played_n"]
                                ),
                                r["played_wr"],
                            ),
                            table_cell(
                                fmt_pct_ci(r["gih_wr"], r["gih_lo"], r["gih_hi"], r["gih_n"]),
                                r["gih_wr"],
                            ),
                            table_cell(f"{fmt_pct(r['gns_wr'])} {fmt_n(r['gns_n'])}", r["gns_wr"]),
                            table_cell(fmt_pp_ci(r["iwd"], r["iwd_lo"], r["iwd_hi"]), r["iwd"]),
                        ],
                    }
                )
        rrow = []
        if restricted is not None:
            sub = _select(restricted, variant, s, o)
            sub = sub.assign(_k=sub["rank"].map(_rank_key)).sort_values("_k")
            for r in sub.to_dict("records"):
                if "significant" in r and not _missing(r["significant"]):
                    sig = bool(r["significant"])
                else:
                    sig = not _missing(r.get("p_holm")) and r["p_holm"] < 0.05
                rrow.append(
                    {
                        "name": str(r["rank"]),
                        "cells": [
                            table_cell(
                                fmt_pp_ci(
                                    r["effect"], r["effect_lo"], r["effect_hi"], r["n_pairs"]
                                ),
                                r["effect"],
                                cls=("pos" if r["effect"] > 0 else "neg") if sig else "",
                            ),
                            table_cell(fmt_p(r.get("p")), r.get("p")),
                            table_cell(fmt_p(r.get("p_holm")), r.get("p_holm")),
                        ],
                    }
                )
        blocks.append(
            {
                "strategy": str(s),
                "opponent": None if o is None else str(o),
                "cards": crow,
                "restricted": rrow,
                "chart": charts.get(card_chart_key(s, o)),
            }
        )
    return {"variant": str(variant), "blocks": blocks, "other_variants": len(variants) - 1}


def _ratings_section(tables: Mapping[str, Any], charts: Mapping[str, Any]) -> list[dict]:
    rt = _table(tables, "ratings")
    if rt is None:
        return []
    cy = _table(tables, "cycles")
    out = []
    for i, v in enumerate(sorted(rt["variant"].unique(), key=_variant_key)):
        sub = rt[rt["variant"] == v].sort_values(["elo", "strategy"], ascending=[False, True])
        has_nash = sub["nash_p"].notna().any()
        rows = []
        for r in sub.to_dict("records"):
            cells = [
                table_cell(fmt_int(r["games"]), r["games"]),
                table_cell(
                    f"{_num(r['elo'], 0)} [{_num(r['elo_lo'], 0)}, {_num(r['elo_hi'], 0)}]",
                    r["elo"],
                    cls="pos" if r["elo_lo"] > 0 else ("neg" if r["elo_hi"] < 0 else ""),
                ),
            ]
            if has_nash:
                cells += [
                    table_cell(
                        fmt_pct_ci(r["nash_p"], r["nash_p_lo"], r["nash_p_hi"]), r["nash_p"]
                    ),
                    table_cell(
                        fmt_pp_ci(r["nash_rating"], r["nash_lo"], r["nash_hi"]),
                        r["nash_rating"],
                        cls="neg" if r["nash_hi"] < -1e-9 else "",
                    ),
                    table_cell(fmt_pct(r["nash_support"]), r["nash_support"]),
                ]
            dom = bool(r["dominant"])
            cells.append(
                table_cell("yes" if dom else "no", int(dom), cls="sig" if dom else "muted")
            )
            rows.append({"name": str(r["strategy"]), "cells": cells})
        cycles = []
        if cy is not None:
            for r in cy[cy["variant"] == v].to_dict("records"):
                cycles.append(
                    {
                        "name": f"{r['a']} → {r['b']} → {r['c']} → {r['a']}",
                        "cells": [
                            table_cell(
                                f"{fmt_pct(r['ab_lo'])} / {fmt_pct(r['bc_lo'])} / {fmt_pct(r['ca_lo'])}",
                                min(r["ab_lo"], r["bc_lo"], r["ca_lo"]),
                            ),
                            table_cell(fmt_int(r["games"]), r["games"]),
                        ],
                    }
                )
        out.append(
            {
                "variant": str(v),
                "open": i == 0,
                "rows": rows,
                "has_nash": bool(has_nash),
                "cycles": cycles,
                "chart": charts.get(f"ratings:{v}"),
            }
        )
    return out


def _records(tables: Mapping[str, Any], key: str) -> list[dict]:
    df = _table(tables, key)
    return [] if df is None else df.to_dict("records")


def _initiative_section(tables: Mapping[str, Any], charts: Mapping[str, str]) -> dict | None:
    """The value of winning the opening bid, by the winning bid's size."""
    ini = _table(tables, "initiative")
    if ini is None:
        return None
    rows = []
    for r in ini.to_dict("records"):
        rows.append(
            {
                "name": str(r["bid"]),
                "cells": [
                    table_cell(fmt_int(r["games"]), r["games"]),
                    table_cell(
                        fmt_pct_ci(r["winrate"], r["winrate_lo"], r["winrate_hi"], r["games"]),
                        r["winrate"],
                        cls=_side(r["winrate_lo"], r["winrate_hi"]),
                    ),
                    table_cell(
                        fmt_pct(r["draws"] / r["games"] if r["games"] else None),
                        r["draws"] / r["games"] if r["games"] else None,
                    ),
                    table_cell(fmt_pct(r["score"]), r["score"]),
                ],
            }
        )
    chart = charts.get("initiative")
    return {
        "rows": rows,
        "chart": {"title": "The value of the opening bid", "caption": "", "svg": chart}
        if chart
        else None,
    }


def _ranges_rows(tables: Mapping[str, Any]) -> tuple[list[str], list[dict]]:
    """Per loadout: the share of the rounds at each range that it wins, and
    its best range (the highest share among ranges with rounds)."""
    rb = _table(tables, "ranges_by_loadout")
    if rb is None:
        return [], []
    order = list(dict.fromkeys(rb["range"]))
    rows = []
    for name, sub in rb.groupby("loadout", sort=False):
        by = {r["range"]: r for r in sub.to_dict("records")}
        cells = []
        for x in order:
            r = by.get(x)
            if r is None or not r["rounds"]:
                cells.append(table_cell(MISSING, title="no rounds were fought at this range"))
                continue
            cells.append(
                table_cell(
                    fmt_pct_ci(r["share"], r["share_lo"], r["share_hi"], r["rounds"]),
                    r["share"],
                    cls=_side(r["share_lo"], r["share_hi"]),
                )
            )
        fought = [r for r in by.values() if r["rounds"]]
        best = max(fought, key=lambda r: r["share"])["range"] if fought else MISSING
        rows.append(
            {"name": str(name), "cells": [table_cell(str(best), str(best), cls="txt"), *cells]}
        )
    return order, rows


def _pairing_rows(tables: Mapping[str, Any]) -> tuple[list[str], list[dict]]:
    """Item pairs and maneuvers (rows) under each strategy pairing (columns)."""
    lp = _table(tables, "loadout_pairings")
    if lp is None:
        return [], []
    names = list(dict.fromkeys(lp["pairing"]))
    rows = []
    for (kind, choice), sub in lp.groupby(["kind", "choice"], sort=False):
        by = {r["pairing"]: r for r in sub.to_dict("records")}
        cells = [table_cell(kind, kind, cls="txt")]
        for n in names:
            r = by.get(n)
            cells.append(
                table_cell(MISSING, title="not played under this strategy pairing")
                if r is None
                else table_cell(
                    fmt_pct_ci(r["score"], r["score_lo"], r["score_hi"], r["games"]),
                    r["score"],
                    cls=_side(r["score_lo"], r["score_hi"]),
                )
            )
        rows.append({"name": str(choice), "cells": cells})
    return names, rows


def _loadouts_section(tables: Mapping[str, Any], charts: Mapping[str, str]) -> dict | None:
    """Loadout analyses (games with loadouts): item pairs, maneuvers, items,
    loadouts against the field with Nash averages, best responses, ranges."""
    lo = _table(tables, "loadouts")
    if lo is None:
        return None

    def score_cells(r, n_key="games"):
        return [
            table_cell(
                fmt_pct_ci(r["score"], r["score_lo"], r["score_hi"], r.get(n_key)),
                r["score"],
                cls=_side(r["score_lo"], r["score_hi"]),
            )
        ]

    out: dict[str, Any] = {
        "pairs": [],
        "maneuvers": [],
        "item_rows": [],
        "loadouts": [],
        "best": [],
    }
    for r in _records(tables, "item_pairs"):
        out["pairs"].append(
            {
                "name": str(r["items"]),
                "cells": [table_cell(fmt_int(r["loadouts"]), r["loadouts"]), *score_cells(r)],
            }
        )
    for r in _records(tables, "maneuvers"):
        out["maneuvers"].append(
            {
                "name": str(r["maneuver"]),
                "cells": [table_cell(fmt_int(r["loadouts"]), r["loadouts"]), *score_cells(r)],
            }
        )
    for r in _records(tables, "items"):
        out["item_rows"].append(
            {
                "name": str(r["item"]),
                "cells": [
                    table_cell(fmt_pct(r["with_item"]), r["with_item"]),
                    table_cell(fmt_pct(r["without_item"]), r["without_item"]),
                    table_cell(
                        fmt_pp_ci(r["marginal"], r["marginal_lo"], r["marginal_hi"]),
                        r["marginal"],
                        cls=_side(r["marginal_lo"], r["marginal_hi"], 0.0),
                    ),
                ],
            }
        )
    has_nash = "nash_p" in lo.columns
    for r in lo.sort_values("score", ascending=False).to_dict("records"):
        cells = score_cells(r)
        if has_nash:
            cells += [
                table_cell(fmt_pct_ci(r["nash_p"], r["nash_p_lo"], r["nash_p_hi"]), r["nash_p"]),
                table_cell(
                    fmt_pp_ci(r["nash_rating"], r["nash_lo"], r["nash_hi"]),
                    r["nash_rating"],
                    cls="neg" if r["nash_hi"] < -1e-9 else "",
                ),
            ]
        out["loadouts"].append({"name": str(r["loadout"]), "cells": cells})
    for r in _records(tables, "best_response"):
        out["best"].append(
            {
                "name": str(r["against"]),
                "cells": [
                    table_cell(str(r["best_response"]), str(r["best_response"]), cls="txt"),
                    *score_cells(r),
                ],
            }
        )
    m = _table(tables, "loadout_matrix")
    out["n"] = fmt_int(int(m["games"].min())) if m is not None else MISSING
    out["has_nash"] = has_nash
    out["k"] = len(lo)
    out["range_names"], out["ranges"] = _ranges_rows(tables)
    out["pairing_names"], out["pairings"] = _pairing_rows(tables)
    for key in ("loadout_matrix", "loadout_values", "ranges"):
        out[f"chart_{key}"] = charts.get(key)
    return out


def _metrics_section(tables: Mapping[str, Any]) -> dict | None:
    m = _table(tables, "metrics")
    if m is None:
        return None
    has_trace = "lead_changes" in m.columns and m["lead_changes"].notna().any()
    events = [c for c in m.columns if str(c).startswith("event: ")]  # meta: EVENT_COUNTS
    rows = []
    for r in sorted(m.to_dict("records"), key=lambda r: _variant_key(r["variant"])):
        g = r["games"]
        cells = [
            table_cell(fmt_int(g), g),
            table_cell(_num(r["balance"], 3), r["balance"]),
            table_cell(
                fmt_pp_ci(r["seat_advantage"], r["seat_adv_lo"], r["seat_adv_hi"]),
                r["seat_advantage"],
                cls=_side(r["seat_adv_lo"], r["seat_adv_hi"], 0.0),
            ),
            table_cell(
                fmt_pct_ci(r["completion"], r["completion_lo"], r["completion_hi"]), r["completion"]
            ),
            table_cell(fmt_pct_ci(r["draw_rate"], r["draw_lo"], r["draw_hi"]), r["draw_rate"]),
            table_cell(
                f"{fmt_int(r['timeouts'])} · {fmt_pct_ci(r['timeout_rate'], r['timeout_lo'], r['timeout_hi'])}",
                r["timeout_rate"],
            ),
            table_cell(
                f"{_num(r['duration'], 1)} [{_num(r['duration_lo'], 1)}, {_num(r['duration_hi'], 1)}]",
                r["duration"],
            ),
            table_cell(
                f"{_num(r['duration_p50'], 0)} ({_num(r['duration_p10'], 0)}–{_num(r['duration_p90'], 0)})",
                r["duration_p50"],
            ),
        ]
        if has_trace:
            cells += [
                table_cell(
                    f"{_num(r['lead_changes'], 2)} [{_num(r['lead_changes_lo'], 2)}, {_num(r['lead_changes_hi'], 2)}]",
                    r["lead_changes"],
                ),
                table_cell(
                    fmt_pct_ci(r["comeback_share"], r["comeback_share_lo"], r["comeback_share_hi"]),
                    r["comeback_share"],
                ),
                table_cell(
                    f"{_num(r['drama'], 2)} [{_num(r['drama_lo'], 2)}, {_num(r['drama_hi'], 2)}]",
                    r["drama"],
                ),
                table_cell(
                    fmt_pct_ci(r["decisiveness"], r["decisiveness_lo"], r["decisiveness_hi"]),
                    r["decisiveness"],
                ),
            ]
        for c in events:
            k = r[c]
            lo, hi = wilson_ci(k, g)
            cells.append(
                table_cell(
                    MISSING if _missing(k) else f"{fmt_int(k)} · {fmt_pct_ci(k / g, lo, hi)}",
                    None if _missing(k) else k / g,
                )
            )
        rows.append({"name": str(r["variant"]), "base": r["variant"] == "base", "cells": cells})
    return {
        "rows": rows,
        "has_trace": bool(has_trace),
        "events": [str(c)[len("event: ") :] for c in events],
    }


def _pairing_summary(tables: Mapping[str, Any]) -> dict | None:
    p = _table(tables, "pairing")
    if p is None:
        return None
    ratio = p["ratio"].dropna()
    if ratio.empty:
        return None
    return {
        "median": _num(ratio.median(), 3),
        "lo": _num(ratio.min(), 3),
        "hi": _num(ratio.max(), 3),
        "matches": fmt_int(len(ratio)),
        "games": fmt_int(p["games"].sum()),
        "saving": _num(100 * (1 - ratio.median() ** 2), 0),
    }


def _runs_table(tables: Mapping[str, Any]) -> list[dict]:
    r = _table(tables, "runs")
    if r is None:
        return []
    rows = []
    for x in r.sort_values(["variant", "a", "b"], key=lambda c: c.map(str)).to_dict("records"):
        rows.append(
            {
                "name": str(x["variant"]),
                "cells": [
                    table_cell(str(x["a"]), str(x["a"]), cls="txt"),
                    table_cell(str(x["b"]), str(x["b"]), cls="txt"),
                    table_cell(fmt_int(x["games"]), x["games"]),
                    table_cell(str(x["seed"]), x["seed"]),
                    table_cell(str(x["config_hash"]), str(x["config_hash"]), cls="code"),
                    table_cell(str(x["date"]), str(x["date"]), cls="txt"),
                ],
            }
        )
    return rows


METHODS = [
    (
        "Experimental design",
        "Counter-based randomness (splitmix64 seeding xoshiro256**): game i of a seed draws only "
        "from streams named by (seed, i, purpose), so results are bit-identical for any thread count "
        "or batch size, and the same seed deals the same cards under every variant and strategy "
        "pair (common random numbers). Every deal is played twice with seats swapped (duplicate "
        "seating).",
    ),
    (
        "Win rates",
        "From deals, not games: the two games of a seat-swapped deal share its "
        "shuffles (in Trisk side A's two results correlate about +0.65), so a win rate's 95% "
        "interval is the Wilson interval on the effective number of games, games / deff, where the "
        "design effect deff is the deal-level (cluster-robust) variance of the rate over the "
        "variance if games were independent (Kish; 1 + the correlation of a deal's two games). "
        "Each deal's wins (0, 1 or 2) are exact from its pair points and the run's draws. A table "
        "pooling several matches (a strategy against the field, a variant's draws) clusters on the "
        "deal across all of them, since matches on one seed replay the same deals. --precision "
        "extends a match until these intervals are within ±P. Draws are counted apart, never folded "
        "into wins; score = win + ½ draw. Every per-game figure (game length, draws, timeouts, "
        "the first seat's share, lead changes, comebacks) is clustered by deal the same way: a run "
        "keeps, per deal, the sums over its two games, pooled by deal across the matches.",
    ),
    (
        "Scores of seat-swapped pairs",
        "Pentanomial model (Fishtest): each deal pair scores 0, ½, 1, "
        "1½ or 2 points; the score's SE is the SD of pair scores / √pairs. Pooled over matches (a "
        "strategy's or a loadout's score against the field, item pairs, maneuvers, an item's "
        "marginal value), the SE is cluster-robust over the deal across every match pooled (CR1, "
        "as statsmodels' OLS with cov_type='cluster'). The 95% interval is the Wilson interval of "
        "the score on games / deff effective games, deff = SE² / (score(1 − score) / games), with "
        "deff at its largest (the deal as the unit) where every deal scored alike, and joined "
        "with Clopper–Pearson at 10 or fewer effective wins or losses: it does not collapse to a "
        "point at 0% or 100% as score ± 1.96·SE did.",
    ),
    (
        "Paired differences",
        "Variant minus base on the same deals: mean of per-pair differences "
        "with a cluster-robust SE over the deal across the strategy's matches (they replay the "
        "same deals), two-sided z test; Holm's method across every "
        "variant × strategy comparison on the page, and Benjamini–Hochberg q-values (false "
        "discovery rate) for the same family. Equivalence: two one-sided tests (TOST) of "
        "|change| < 1 point. Restricted play (Jaffe et al. 2012) is paired the "
        "same way and Holm-corrected across ranks.",
    ),
    (
        "Strategy ratings",
        "Bradley–Terry model fitted by maximum likelihood (statsmodels GLM, "
        "binomial) on each variant's round-robin scores, shown on the Elo scale "
        "(400·log10 odds) centred on the field average, with 95% Wald intervals from the "
        "cluster-robust (sandwich) covariance over deals: the two games of a deal and the matches "
        "that replay it are not independent. "
        "A strategy is dominant when the lower 95% bound of its score is above 50% against every "
        "other; a significant 3-cycle has each of its three edges above 50% at 95%.",
    ),
    (
        "Nash averaging",
        "Max-entropy Nash equilibrium of the antisymmetric matrix A = score − ½ "
        "(Balduzzi et al. 2018, as in OpenSpiel); a strategy's Nash average is its expected "
        "score − ½ against the Nash mixture (0 for strategies in the support, negative outside). "
        "Adding a clone of a strategy does not change anyone's Nash average. Intervals come from a "
        "parametric bootstrap of the matrix (200 draws from each cell's pentanomial SE).",
    ),
    (
        "Game metrics (Browne / Ludii)",
        "Balance = 1 − |w₁ − w₂| from the two seats' win rates; "
        "seat advantage w₁ − w₂ with a multinomial 95% CI over games; completion = decided share "
        "and draws, with deal-level intervals; draws and "
        "timeouts (draws at the round cap) apart; duration = rounds per game (mean ± 1.96·SD/√n, "
        "median and 10th–90th percentiles). From the per-round score trace (HP difference at the end "
        "of each round): lead changes = times the leading seat changes (a tied round keeps the "
        "previous leader); comeback share = decided games in which the eventual winner trailed at "
        "the end of some round; drama = the winner's largest HP deficit, averaged over decided games; "
        "decisiveness = the share of the game played before the winner took the lead for good "
        "(0% = led from the first round).",
    ),
    (
        "Luck vs skill",
        "The strongest scripted strategy's win rate p against random play, and the "
        "smallest n with P(Bin(n, p) > n/2) ≥ 0.95: the games it needs to be ahead with 95% "
        "probability.",
    ),
    (
        "Card value",
        "Observational (17lands style): played, games-in-hand and not-seen win rates "
        "and IWD, biased by game length and shown as association only. Causal: restricted play on "
        "the same deals.",
    ),
    (
        "Sequential test",
        "From the command line: a pentanomial GSPRT "
        "(balance <game> sprt) stops as soon as the log-likelihood ratio crosses ln(β/(1−α)) or "
        "ln((1−β)/α); its two-sided question (a change of at least δ either way) runs two "
        "one-sided tests at α/2 each.",
    ),
]


def _manifest_items(manifest: Mapping[str, Any]) -> list[tuple[str, str, bool]]:
    """(label, value, is_code) rows for the reproducibility block."""
    known = [
        ("command", "Command", True),
        ("seed", "Seed", True),
        ("config_hash", "Config hash", True),
        ("engine_version", "Engine version", True),
        ("date", "Date", False),
        ("games_total", "Games simulated", False),
        ("runs", "Stored runs", False),
        ("elapsed_s", "Elapsed", False),
    ]
    items = []
    for key, label, code in known:
        if key not in manifest:
            continue
        val = manifest[key]
        if key in ("games_total", "runs"):
            text = fmt_int(val)
        elif key == "elapsed_s":
            text = fmt_seconds(val)
        else:
            text = MISSING if _missing(val) else str(val)
        items.append((label, text, code))
    variants = manifest.get("variants")
    if variants:
        items.append(("Variants", ", ".join(str(v) for v in variants), False))
    skip = {k for k, _, _ in known} | {"variants", "rulings"}
    for key in sorted(k for k in manifest if k not in skip):
        items.append((str(key).replace("_", " ").capitalize(), str(manifest[key]), False))
    return items


def _facts(tables: Mapping[str, Any], manifest: Mapping[str, Any]) -> list[str]:
    facts = []
    games_total = manifest.get("games_total")
    if games_total is None and _table(tables, "variants") is not None:
        games_total = tables["variants"]["games"].sum()
    if not _missing(games_total):
        facts.append(f"{fmt_int(games_total)} games simulated")
    v = _table(tables, "variants")
    if v is not None:
        facts.append(f"{len(v)} variant{'s' if len(v) != 1 else ''}")
    s = _table(tables, "strategies")
    if s is not None:
        n = s["strategy"].nunique()
        facts.append(f"{n} strateg{'ies' if n != 1 else 'y'}")
    if not _missing(manifest.get("seed")):
        facts.append(f"seed {manifest['seed']}")
    return facts


def _links(game: Mapping[str, Any]) -> list[dict]:
    """Further pages of a game (e.g. Trisk's equal-power test): ``game["links"]``
    as ``{"text", "href"}`` (relative hrefs only: the pages stay self-contained)."""
    out = []
    for link in game.get("links") or []:
        href = str(link.get("href", ""))
        if href and "://" not in href and not href.startswith(("/", "javascript:")):
            out.append({"text": str(link.get("text", href)), "href": href})
    return out


def _game_context(game: Mapping[str, Any], index: int) -> dict:
    name = str(game.get("name", f"Game {index + 1}"))
    tables = game.get("tables") or {}
    manifest = game.get("manifest") or {}
    raw_charts = game.get("charts") or {}
    charts = {str(k): trusted_svg(str(k), v) for k, v in raw_charts.items() if v}

    placed = {"overview", "rounds", "diffs"}
    placed |= {k for k in charts if k.split(":")[0] in ("matrix", "cards", "ratings")}
    placed |= {"loadout_matrix", "loadout_values", "ranges", "initiative", "equilibrium"}
    extra = [{"title": k, "caption": "", "svg": charts[k]} for k in charts if k not in placed]

    def chart(key: str) -> dict | None:
        if key not in charts:
            return None
        title, caption = _CHART_INFO.get(key, (key, ""))
        return {"title": title, "caption": caption, "svg": charts[key]}

    anchor = f"game-{index}-{_slug(name)}"
    return {
        "name": name,
        "anchor": anchor,
        "equilibrium": _equilibrium_section(game, anchor),
        "verdict": _verdict_section(game, anchor),
        "cap_warnings": _cap_warning_groups(game.get("cap_warnings") or []),
        "robust": _robust_section(game),
        "summary": [str(s) for s in (game.get("summary") or [])],
        "facts": _facts(tables, manifest),
        "links": _links(game),
        "variants": _variants_section(tables),
        "strategies": _strategies_section(tables, charts),
        "diffs": _diffs_section(tables),
        "cards": _cards_section(tables, charts),
        "chart_overview": chart("overview"),
        "chart_rounds": chart("rounds"),
        "chart_diffs": chart("diffs"),
        "extra_charts": extra,
        "ratings": _ratings_section(tables, charts),
        "metrics": _metrics_section(tables),
        "loadouts": _loadouts_section(tables, charts),
        "initiative": _initiative_section(tables, charts),
        "pairing": _pairing_summary(tables),
        "runs": _runs_table(tables),
        "methods": [
            (k, v)
            for k, v in METHODS
            if (k != "Card value" or _cards_section(tables, charts) is not None)
            and (
                k not in ("Strategy ratings", "Nash averaging")
                or _table(tables, "ratings") is not None
            )
        ],
        "rulings": [str(r) for r in (manifest.get("rulings") or [])],
        "manifest": _manifest_items(manifest),
        "file": str(game.get("file", "")),
        "details": None,
    }


_CAP_LINE = re.compile(r"^warning: (?P<variant>.+?), (?P<pair>.+? vs .+?): (?P<rest>.+)$")


def _cap_warning_groups(lines: Sequence[Any]) -> dict | None:
    """The round-cap warnings (``design.cap_warnings``' lines, largest share
    first) grouped by ruleset: each group its pairings' lines without the
    ruleset's name, and ``top``, the largest share's interval. A page shows a
    line per ruleset, not one per pairing (a study has hundreds)."""
    groups: dict[str, dict] = {}
    for line in map(str, lines):
        m = _CAP_LINE.match(line)
        variant = m["variant"] if m else "other"
        g = groups.setdefault(variant, {"variant": variant, "lines": [], "top": ""})
        if not g["lines"] and m:
            g["top"] = m["rest"].split(" of ")[0]
        g["lines"].append(line)
    if not groups:
        return None
    ordered = sorted(groups.values(), key=lambda g: _variant_key(g["variant"]))
    return {"total": sum(len(g["lines"]) for g in ordered), "groups": ordered}


# --------------------------------------------------------------------------- balance verdict
_STATUS_CLS = {"meets": "meets", "fails": "fails", "unclear": "unclear"}
_STATUS_WORD = {"meets": "meets", "fails": "fails", "unclear": "unclear"}
# where the evidence of each property is on the page (a section's anchor suffix)
_EVIDENCE = {
    "seat_fairness": ("metrics", "Game shape"),
    "dominance": ("strategies", "Strategies"),
    "diversity": ("ratings", "Ratings"),
    "length": ("metrics", "Game shape"),
    "draws": ("variants", "Variants"),
    "round_cap": ("round-cap", "Round-cap warnings"),
}


def verdict_anchor(game_anchor: str, variant: Any, prop: str) -> str:
    """The id of one property's row in a page's verdict table."""
    return f"{game_anchor}-verdict-{_slug(variant)}-{_slug(prop)}"


def _value_text(r: Mapping[str, Any]) -> str:
    prop, v, lo, hi = r["property"], r["value"], r["lo"], r["hi"]
    if _missing(v):
        return MISSING
    if prop == "length":
        return f"{_num(v, 1)} [{_num(lo, 1)}, {_num(hi, 1)}] rounds"
    if prop == "diversity":
        return f"{_num(v, 0)} [{_num(lo, 0)}, {_num(hi, 0)}] strategies"
    return fmt_pct_ci(v, lo, hi)


def _robust_section(game: Mapping[str, Any]) -> dict | None:
    """The headline verdicts re-checked under tuned play (``game["robust"]``,
    :func:`balance.robust.checks` and the game's own rows): one row each, the
    verdict under the named strategies beside the same measure under tuned
    play, and its status."""
    from balance import robust

    df = game.get("robust")
    if not isinstance(df, pd.DataFrame) or df.empty:
        return None
    order = {
        s: i for i, s in enumerate((robust.DEPENDS, robust.UNCLEAR, robust.NO_CHANGE, robust.HOLDS))
    }
    rows = [
        {
            "variant": str(r.variant),
            "check": str(r.check),
            "claim": str(r.claim),
            "named": str(r.named),
            "tuned": str(r.tuned),
            "status": str(r.status),
            "why": str(r.why),
            "cls": {robust.HOLDS: "meets", robust.DEPENDS: "fails"}.get(str(r.status), "unclear"),
        }
        for r in df.itertuples()
    ]
    # the first rule set's checks first, in their own order; then the rest, the
    # verdicts that depend on the strategy first
    first = rows[0]["variant"]
    rows = [r for r in rows if r["variant"] == first] + sorted(
        (r for r in rows if r["variant"] != first), key=lambda r: order.get(r["status"], 9)
    )
    return {"summary": robust.summary(df), "tuned": str(game.get("tuned") or ""), "rows": rows}


# --------------------------------------------------------------------------- equilibrium play
EQ_BASELINE = "Scripted field (a baseline: hand-written scripts and the tuned strategy)"
_EQ_STATUS = {
    "equilibrium": "shown",
    "budget": "not shown",
    "gap": "not shown",
    "not shown": "not shown",
}


def _pts_ci(g: Mapping[str, Any]) -> str:
    """A gain over ½ in points with its interval: ``+1.2 points [-0.3, +2.7]``."""
    if _missing(g.get("mean")):
        return MISSING
    out = f"{100 * float(g['mean']):+.1f} points"
    if not (_missing(g.get("lo")) or _missing(g.get("hi"))):
        out += f" [{100 * float(g['lo']):+.1f}, {100 * float(g['hi']):+.1f}]"
    return out


def _audit_text(a: Mapping[str, Any]) -> str:
    """One recorded audit: its search (seed, evaluations), gain and date."""
    g = {"mean": a.get("gain"), "lo": a.get("gain_lo"), "hi": a.get("gain_hi")}
    date = str(a.get("date") or "")[:10]
    return (
        f"an independent search (seed {a.get('seed')} '{a.get('tag', '')}', "
        f"{fmt_int(a.get('evaluations'))} CMA-ES evaluations{', ' + date if date else ''}) "
        f"whose best response gains {_pts_ci(g)} (n = {fmt_int(a.get('deals'))} deals)"
    )


def equilibrium_status(summ: Mapping[str, Any]) -> str:
    """The section's status sentence: whether an equilibrium within ε is shown,
    with the exploitability's 95% interval and n (deals, games), and the
    search that measured it (its budget)."""
    eps = 100 * float(summ.get("epsilon") or 0.0)
    g = summ.get("exploitability") or {}
    n = f"n = {fmt_int(g.get('n'))} deals"
    if not _missing(g.get("games")):
        n += f", {fmt_int(g.get('games'))} games"
    a = summ.get("audit") or {}
    if a:
        n += f"; {fmt_int(a.get('evaluations'))} CMA-ES evaluations"
    st = str(summ.get("status"))
    if summ.get("failed"):
        return (
            f"An equilibrium within ε = {eps:g} points is not shown: the search failed (its "
            f"best fell below the population's best member), so it is no evidence ({_pts_ci(g)}, "
            f"{n})."
        )
    if st == "gap":
        who = (
            f"the population's recorded audit (an independent search, seed {a.get('seed')}) "
            "found a response that beats"
            if a and summ.get("audits") and a != summ.get("check")
            else "a response found beats"
        )
        return (
            f"An equilibrium within ε = {eps:g} points is not shown: {who} the mixture by "
            f"{_pts_ci(g)} ({n})."
        )
    if st == "not shown" and summ.get("shipped") and not summ.get("audits"):
        return (
            f"An equilibrium within ε = {eps:g} points is not shown: the population records no "
            f"audit (an independent, stronger search), and the study's smaller re-check alone "
            f"claims nothing; its best response gains {_pts_ci(g)} ({n})."
        )
    if st == "equilibrium":
        return (
            f"An equilibrium within ε = {eps:g} points is shown: the best response found "
            f"gains {_pts_ci(g)} against the mixture ({n}; its 95% upper bound is at most ε)."
        )
    if st == "not shown":
        return (
            f"An equilibrium within ε = {eps:g} points is not shown: the best response found "
            f"gains {_pts_ci(g)} ({n}); no gain on average, but the interval reaches past ε."
        )
    return (
        f"An equilibrium within ε = {eps:g} points is not shown: the gap at the budget "
        f"spent is {_pts_ci(g)} ({n})."
    )


def _range(d: Mapping[str, Any] | None, digits: int = 0) -> str:
    if not d or _missing(d.get("value")):
        return MISSING
    v = f"{float(d['value']):.{digits}f}"
    if _missing(d.get("lo")) or _missing(d.get("hi")):
        return v
    return f"{v} [{float(d['lo']):.{digits}f}, {float(d['hi']):.{digits}f}]"


def _eq_status_cell(st: str):
    return table_cell(_STATUS_WORD[st], st, cls=_STATUS_CLS[st])


def _equilibrium_section(game: Mapping[str, Any], anchor: str) -> dict | None:
    """The section a study's game page leads with: the verdicts under
    equilibrium play (``game["equilibrium"]``, :func:`balance.pages.add_equilibrium`).
    None on pages that carry no equilibrium (a report of chosen runs)."""

    eq = game.get("equilibrium")
    if not isinstance(eq, Mapping):
        return None
    sec: dict[str, Any] = {"id": f"{anchor}-equilibrium", "baseline": EQ_BASELINE, "absent": ""}
    if eq.get("absent") == "record":
        sec["absent"] = (
            "Not measured: this study record was made before the study measured equilibrium "
            "play; run `balance study` again."
        )
        return sec
    if eq.get("absent") == "population":
        sec["absent"] = (
            f"No equilibrium population is shipped for this game ({eq.get('folder')}): "
            f"make one with `{eq.get('command')}`."
        )
        return sec
    summ = eq["summary"]
    a = eq.get("assessment")
    st = summ.get("settings") or {}
    pl = summ.get("play") or {}
    members = summ.get("members") or []
    sec["status"] = str(summ.get("status"))
    sec["shown"] = _EQ_STATUS.get(str(summ.get("status")), "not shown")
    sec["status_sentence"] = equilibrium_status(summ)
    sec["status_text"] = str(summ.get("status_text") or "")
    sec["bound"] = (
        "The exploitability is a lower bound: the best response found; a stronger one the "
        f"search missed would raise it. It holds within the strategy space searched: "
        f"{summ.get('searched')}."
    )
    chk = summ.get("check") or summ.get("audit") or {}
    kind = (summ.get("content") or {}).get("kind")
    audits = [x for x in summ.get("audits") or [] if isinstance(x, Mapping)]
    recorded = (
        " The claim rests on the population's own audit"
        + ("s" if len(audits) > 1 else "")
        + ": "
        + "; ".join(_audit_text(x) for x in audits)
        + "."
        if audits
        else " The population file records no audit of its own, so no equilibrium is claimed."
    )
    check_gain = {"mean": chk.get("gain"), "lo": chk.get("gain_lo"), "hi": chk.get("gain_hi")}
    what = (
        f"The shipped population ({summ.get('shipped')}, {len(members)} member"
        f"{'s' if len(members) != 1 else ''} in its support) measured afresh: its payoff matrix "
        f"({fmt_int(st.get('games'))} games per pairing); the study's smaller re-check, a "
        f"best-response search of {fmt_int(chk.get('evaluations') or st.get('evaluations'))} "
        f"CMA-ES evaluations"
        + (f" after every {kind} was screened with the members' weights" if kind else "")
        + f", whose best response gains {_pts_ci(check_gain)} "
        f"(n = {fmt_int(chk.get('deals'))} deals); and the "
        f"verdicts with both seats drawing from the mixture ({fmt_int(pl.get('games'))} games "
        f"on {fmt_int(pl.get('deals'))} deals; seed {st.get('seed')})." + recorded
        if summ.get("shipped")
        else f"The equilibrium search's final mixture ({len(members)} members)."
    )
    sec["what"] = what
    rows = []
    if isinstance(a, pd.DataFrame):
        for r in a.to_dict("records"):
            rows.append(
                {
                    "name": str(r["label"]),
                    "text": str(r["text"]),
                    "status": str(r["status"]),
                    "cells": [
                        _eq_status_cell(str(r["status"])),
                        table_cell(_value_text(r), r["value"]),
                        table_cell(
                            f"{fmt_int(pl.get('games'))} games / {fmt_int(pl.get('deals'))} deals",
                            r["n"],
                        ),
                        table_cell(str(r["target"]), str(r["target"]), cls="txt"),
                    ],
                }
            )
    sec["rows"] = rows
    fails = [r["name"] for r in rows if r["status"] == "fails"]
    unclear = [r["name"] for r in rows if r["status"] == "unclear"]
    rules = str(summ.get("rules") or "base")
    if not rows:
        sec["overall"] = ""
    elif not fails and not unclear:
        sec["overall"] = f"{rules} under equilibrium play: every property meets its target."
    else:
        sec["overall"] = (
            f"{rules} under equilibrium play: "
            + "; ".join(
                x
                for x in (
                    f"fails {', '.join(fails)}" if fails else "",
                    f"unclear: {', '.join(unclear)}" if unclear else "",
                )
                if x
            )
            + "."
        )
    n_boot = int(summ.get("resamples") or 0)
    sec["diversity"] = (
        f"Support: {_range(summ.get('support'))} strategies; effective number of strategies "
        f"(exp of the mixture's entropy): {_range(summ.get('effective'), 2)} "
        + (
            f"(ranges: 2.5–97.5% of {fmt_int(n_boot)} bootstrap resamples of the deals)."
            if n_boot
            else "(one strategy: no resampling can change it)."
        )
    )
    re_ = summ.get("remeasured") or {}
    if not _missing(re_.get("max_move")):
        sec["diversity"] += (
            f" Re-measured on other deals (the whole population's matrix played again, "
            f"{fmt_int(re_.get('games'))} games per pairing, seed {re_.get('seed')}) and solved "
            f"again, no weight of the support moved more than "
            f"{100 * float(re_['max_move']):.1f} points"
            + (
                " (under the 10-point target)."
                if float(re_["max_move"]) < 0.10
                else " — more than the 10-point target: read each weight with its range."
            )
        )

    dom = summ.get("dominant") or {}
    word, text = str(dom.get("status", "not shown")), str(dom.get("text", ""))
    sec["dominant"] = {
        "status": word,
        "text": text,
        # the answer first (yes / no / not shown), then the summary's sentence
        "line": "A dominant strategy (one strategy an equilibrium by itself): "
        + (text if text.startswith(word) else f"{word} — {text}")
        + ".",
    }
    # the content column only where a member's name does not already say it (name@content)
    with_content = any(
        m.get("content") and not str(m.get("name", "")).endswith(f"@{m['content']}")
        for m in members
    )
    sec["mixture_content"] = with_content
    mix = []
    for m in sorted(members, key=lambda m: -float(m.get("weight") or 0.0)):
        w = m.get("worst")
        worst = (
            f"{w['opponent']}: {fmt_pct_ci(w.get('score'), w.get('lo'), w.get('hi'))}"
            f" (n = {fmt_int(w.get('deals'))} deals)"
            if w
            else MISSING
        )
        mix.append(
            [
                table_cell(str(m.get("name")), str(m.get("name")), cls="txt"),
                table_cell(fmt_pct(m.get("weight"), 1), m.get("weight")),
                table_cell(f"[{fmt_pct(m.get('lo'), 1)}, {fmt_pct(m.get('hi'), 1)}]", m.get("lo")),
                table_cell(fmt_pct(m.get("in_support"), 0), m.get("in_support")),
                table_cell(str(m.get("from", "")), str(m.get("from", "")), cls="txt"),
                *(
                    [
                        table_cell(
                            str(m.get("content") or MISSING), str(m.get("content") or ""), cls="txt"
                        )
                    ]
                    if with_content
                    else []
                ),
                table_cell(worst, w.get("score") if w else None, cls="txt"),
            ]
        )
    sec["mixture"] = mix
    con = summ.get("content") or {}
    if con.get("kind"):
        kind = str(con["kind"])
        sec["content"] = {
            "kind": kind,
            "rows": [
                [
                    table_cell(str(r["content"]), str(r["content"]), cls="txt"),
                    table_cell(fmt_pct(r.get("weight"), 1), r.get("weight")),
                    table_cell(
                        str(r["status"]),
                        str(r["status"]),
                        cls={"used": "meets", "dead": "fails"}.get(str(r["status"]), "unclear"),
                    ),
                    table_cell(
                        fmt_pct_ci(r.get("screen"), r.get("screen_lo"), r.get("screen_hi"))
                        + (
                            f" (n = {fmt_int(r.get('screen_games'))} games)"
                            if not _missing(r.get("screen_games"))
                            else ""
                        ),
                        r.get("screen"),
                    ),
                ]
                for r in con.get("rows") or []
            ],
            "parts": [
                [
                    table_cell(str(r["kind"]), str(r["kind"]), cls="txt"),
                    table_cell(str(r["name"]), str(r["name"]), cls="txt"),
                    table_cell(fmt_pct(r.get("weight"), 1), r.get("weight")),
                    table_cell(
                        str(r["status"]),
                        str(r["status"]),
                        cls={"used": "meets", "dead": "fails"}.get(str(r["status"]), "unclear"),
                    ),
                ]
                for r in con.get("parts") or []
            ],
            "dead": [str(r["content"]) for r in con.get("rows") or [] if r["status"] == "dead"],
            "dead_parts": [
                f"{r['name']} ({r['kind']})"
                for r in con.get("parts") or []
                if r["status"] == "dead"
            ],
        }
    else:
        sec["content"] = None
    charts = game.get("charts") or {}
    svg = charts.get("equilibrium")
    sec["chart"] = (
        {
            "title": "Exploitability over the search",
            "caption": "Per iteration of the shipped population's search, the best response's "
            "gain over ½ against that iteration's mixture, with its 95% interval on fresh deals; "
            "the dashed line is ε; then the population's recorded audits of its final mixture "
            "(independent, stronger searches, each by its seed: the claim rests on them) and, "
            "last, the study's smaller re-check.",
            "svg": trusted_svg("equilibrium", svg),
        }
        if svg
        else None
    )
    sec["curve_note"] = (
        ""
        if summ.get("curve")
        else "The population file records no curve of its search: only the study's re-measure "
        "is drawn."
    )
    return sec


def _index_equilibrium(game: Mapping[str, Any]) -> dict | None:
    """The index's lead line per game: the status under equilibrium play, the
    exploitability, whether one strategy is an equilibrium by itself, and the
    seat-fairness and length verdicts."""
    sec = _equilibrium_section(game, "x")
    if sec is None:
        return None
    if sec["absent"]:
        return {"absent": sec["absent"]}
    by = {r["name"]: r for r in sec["rows"]}
    from balance import design

    verdicts = [
        {"status": by[design.LABELS[p]]["status"], "text": by[design.LABELS[p]]["text"]}
        for p in design.EQUILIBRIUM_PROPERTIES
        if design.LABELS[p] in by
    ]
    return {
        "absent": "",
        "status": sec["status_sentence"],
        "shown": sec["shown"],
        "dominant": sec["dominant"]["line"],
        "verdicts": verdicts,
    }


def _verdict_section(game: Mapping[str, Any], anchor: str) -> dict | None:
    """The balance verdict per ruleset: an overview (one row per variant, one
    column per property) and each variant's properties with value, CI, n and
    target. ``game["assessment"]`` is :func:`balance.design.assess`'s table."""
    from balance import design

    a = game.get("assessment")
    if not isinstance(a, pd.DataFrame) or a.empty:
        return None
    props = [p for p in design.PROPERTIES if (a["property"] == p).any()]
    overview, blocks = [], []
    for i, v in enumerate(sorted(a["variant"].unique(), key=_variant_key)):
        sub = a[a["variant"] == v]
        st, line = design.overall(a, v)
        by = {r["property"]: r for r in sub.to_dict("records")}
        word = {"meets": "balanced", "fails": "not balanced", "unclear": "not shown"}[st]
        cells = [table_cell(word, word, cls=_STATUS_CLS[st], title=line)]
        for prop in props:
            r = by.get(prop)
            if r is None:
                cells.append(table_cell(MISSING, title=design.MISSING_REASONS["default"]))
                continue
            cells.append(
                table_cell(
                    f"{_STATUS_WORD[r['status']]}: {_value_text(r)}",
                    {"fails": 0, "unclear": 1, "meets": 2}[r["status"]],
                    cls=_STATUS_CLS[r["status"]],
                    title=str(r["text"]),
                )
            )
        overview.append({"name": str(v), "base": v == "base", "cells": cells})
        rows = []
        for prop in props:
            r = by.get(prop)
            if r is None:
                continue
            sec, sec_name = _EVIDENCE.get(prop, ("variants", "Variants"))
            rows.append(
                {
                    "name": str(r["label"]),
                    "id": verdict_anchor(anchor, v, prop),
                    "status": r["status"],
                    "text": str(r["text"]),
                    "cells": [
                        table_cell(
                            _STATUS_WORD[r["status"]],
                            r["status"],
                            cls=_STATUS_CLS[r["status"]],
                        ),
                        table_cell(
                            _value_text(r),
                            r["value"],
                            title="" if not _missing(r["value"]) else str(r["text"]),
                        ),
                        table_cell(fmt_int(r["n"]), r["n"]),
                        table_cell(str(r["target"]), str(r["target"]), cls="txt"),
                    ],
                    "evidence": {"href": f"#{anchor}-{sec}", "text": sec_name},
                }
            )
        blocks.append(
            {
                "variant": str(v),
                "open": i == 0 or st == "fails" and v == "base",
                "overall": line.removeprefix(f"{v}: "),
                "status": st,
                "rows": rows,
            }
        )
    return {
        "labels": [design.LABELS[p] for p in props],
        "overview": overview,
        "blocks": blocks,
        "field": str(a["field"].iloc[0]),
    }


#: The three outcomes of a margin, in the index's words (docs/methods.md)
_SHOWN_WORD = {"meets": "shown within", "fails": "shown outside", "unclear": "not shown"}
_SHOWN_LIST = {
    "fails": "shown outside the target",
    "unclear": "not shown either way",
    "meets": "shown within the target",
}
EQ_FIELD = "equilibrium play"


def _eq_frame(game: Mapping[str, Any]) -> pd.DataFrame | None:
    """The verdicts under equilibrium play (:func:`balance.design.equilibrium_rows`)."""
    eq = game.get("equilibrium")
    a = eq.get("assessment") if isinstance(eq, Mapping) else None
    return a if isinstance(a, pd.DataFrame) and len(a) else None


def _figure(r: Mapping[str, Any]) -> str:
    """A verdict row's figure with its target: ``99.6 [99.4, 99.9] rounds (target 6–40
    rounds on average)``."""
    return f"{r['label']} {_value_text(r)} (target {r['target']})"


def index_lead(game: Mapping[str, Any]) -> dict | None:
    """The index's first line per game: are the base rules balanced, under
    equilibrium play? From the study record's equilibrium summary and its
    verdicts (``game["equilibrium"]``): the answer ("yes", "no", "not shown"),
    then which targets are shown within, shown outside and not shown, each with
    its value, 95% interval and target, and the n behind them. The answer is
    "yes" or "no" only where the equilibrium is shown; where it is not, the
    sentence says so and gives the figures at the best mixture found. None on
    pages that carry no equilibrium."""
    eq = game.get("equilibrium")
    if not isinstance(eq, Mapping):
        return None
    q = "Are the base rules balanced?"
    sec = _equilibrium_section(game, "x")
    if sec is None or sec["absent"]:
        text = sec["absent"] if sec else ""
        return {
            "question": q,
            "answer": "Not measured",
            "status": "unclear",
            "rest": f", under equilibrium play: {text}",
        }
    summ = eq["summary"]
    pl = summ.get("play") or {}
    rules = str(summ.get("rules") or "base")
    if rules != "base":
        q = f"Are the {rules} rules balanced?"
    a = _eq_frame(game)
    recs = a.to_dict("records") if a is not None else []
    by = {
        st: [_figure(r) for r in recs if r["status"] == st] for st in ("fails", "unclear", "meets")
    }
    n = f"n = {fmt_int(pl.get('games'))} games on {fmt_int(pl.get('deals'))} deals"
    lists = "; ".join(
        f"{_SHOWN_LIST[st]}: " + ", ".join(by[st]) for st in ("fails", "unclear", "meets") if by[st]
    )
    shown = sec["shown"] == "shown"
    where = "under equilibrium play (both seats drawing from the equilibrium mixture)"
    if not recs:
        answer, status = "not shown", "unclear"
        rest = f", {where}: no verdict was measured. {sec['status_sentence']}"
    elif not shown:
        answer, status = "not shown", "unclear"
        rest = (
            f", {where}. {sec['status_sentence']} At the best mixture found, which is not shown "
            f"to be an equilibrium: {lists} ({n})."
        )
    else:
        status = "fails" if by["fails"] else "unclear" if by["unclear"] else "meets"
        answer = {"fails": "no", "unclear": "not shown", "meets": "yes"}[status]
        rest = f", {where}: {lists} ({n}). {sec['status_sentence']}"
    return {"question": q, "answer": answer.capitalize(), "status": status, "rest": rest}


def index_baseline(game: Mapping[str, Any], base: str = "base") -> dict | None:
    """The base rules' verdict on the scripted field (:func:`balance.design.overall`),
    for the index, where it is labelled a baseline. None without a verdict of base."""
    from balance import design

    a = game.get("assessment")
    if not isinstance(a, pd.DataFrame) or a.empty or not (a["variant"] == base).any():
        return None
    st, line = design.overall(a, base)
    return {"status": st, "text": f"the {base} rules: {line.removeprefix(f'{base}: ')}"}


def _problems(
    game: Mapping[str, Any], file: str, anchor: str, limit: int = 5
) -> dict[str, list[dict]]:
    """The game's largest problems, ranked on one scale
    (:func:`balance.design.problems`: the distance past the target in
    multiples of the 95% interval's half-width, the distance in the
    property's unit beside it), under equilibrium play and on the scripted
    field together: ``{"base": [...], "variants": [...]}``, at most ``limit``
    each, each linking to its evidence on the game's page."""
    from balance import design

    frames = [
        f
        for f in (_eq_frame(game), game.get("assessment"))
        if isinstance(f, pd.DataFrame) and not f.empty
    ]
    out: dict[str, list[dict]] = {"base": [], "variants": []}
    if not frames:
        return out
    eq = game.get("equilibrium") or {}
    pl = (eq.get("summary") or {}).get("play") or {} if isinstance(eq, Mapping) else {}
    a = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    for r in design.problems(a, limit).to_dict("records"):
        on_eq = r["field"] == EQ_FIELD
        n = (
            f"n = {fmt_int(pl.get('games'))} games on {fmt_int(pl.get('deals'))} deals"
            if on_eq
            else f"n = {fmt_int(r['n'])} "
            + ("decided games" if r["property"] == "seat_fairness" else "games")
        )
        how = (
            f"{r['beyond_text']}, {r['multiple_text']}" if r["multiple_text"] else r["beyond_text"]
        )
        out[str(r["group"])].append(
            {
                "variant": str(r["variant"]),
                "label": str(r["label"]),
                # the label of the best script's score already names its field
                "field": "under equilibrium play"
                if on_eq
                else ""
                if "scripted field" in str(r["label"])
                else "scripted field",
                "status": str(r["status"]),
                "detail": f"{_SHOWN_WORD[r['status']]} — {_value_text(r)} ({n}; target "
                f"{r['target']}): {how}",
                "href": f"{file}#{anchor}-equilibrium"
                if on_eq
                else f"{file}#{verdict_anchor(anchor, r['variant'], r['property'])}",
            }
        )
    return out


_HEADLINE = ("overview", "ratings:base", "matrix:base")


def _headline_chart(game: Mapping[str, Any]) -> dict | None:
    """The index's chart of a game: the variant overview when the page has one,
    else the base ratings or head-to-head chart."""
    charts = game.get("charts") or {}
    variants = game.get("variants") or []
    # one ruleset: its strategies' ratings say more than a one-row overview
    first = _HEADLINE if len(variants) != 1 else (*_HEADLINE[1:], _HEADLINE[0])
    keys = [*first, *sorted(k for k in charts if k.startswith(("ratings:", "matrix:")))]
    for key in keys:
        if charts.get(key):
            title, caption = _CHART_INFO.get(key, (key.replace(":", ", "), ""))
            return {"title": title, "caption": caption, "svg": trusted_svg(key, charts[key])}
    return None


# --------------------------------------------------------------------------- rendering
def environment(*template_dirs: Path):
    """The Jinja environment of every page: ``template_dirs`` (a game's own
    templates) are searched before the shared ones (``balance/templates``)."""
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    return Environment(
        loader=FileSystemLoader([str(d) for d in (*template_dirs, TEMPLATE_DIR)]),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def _page_title(games: Sequence[Mapping[str, Any]]) -> str:
    titles = {str(g.get("title")) for g in games if g.get("title")}
    if titles:
        return titles.pop()
    names = [str(g.get("name", "")) for g in games]
    return "Balance report" + (f" — {names[0]}" if len(names) == 1 else "")


def _date(games: Sequence[Mapping[str, Any]]) -> str:
    """The page's date, readable: 2026-11-30 16:28 UTC."""
    from datetime import UTC, datetime

    dates = [
        str(g.get("manifest", {}).get("date")) for g in games if g.get("manifest", {}).get("date")
    ]
    if not dates:
        return ""
    try:
        d = datetime.fromisoformat(dates[0].replace("Z", "+00:00")).astimezone(UTC)
        return d.strftime("%Y-%m-%d %H:%M UTC")
    except ValueError:
        return dates[0]


@phases.timed("pages")
def render_page(games: Sequence[Mapping[str, Any]], index_link: str | None = None) -> str:
    """A full report page for one or more games (see the module docstring)."""
    contexts = [_game_context(g, i) for i, g in enumerate(games)]
    return _render_contexts(games, contexts, index_link)


def _render_contexts(
    games: Sequence[Mapping[str, Any]], contexts: list[dict], index_link: str | None
) -> str:
    return (
        environment()
        .get_template("page.html.j2")
        .render(title=_page_title(games), games=contexts, date=_date(games), index_link=index_link)
    )


def _detail_links(ctx: Mapping[str, Any], folder: str) -> dict:
    """Where a game page's detail pages go, relative to the page: one per
    variant (its strategies, head-to-head table and ratings), every comparison
    with base, and the stored runs, in ``<folder>/``."""
    names = [v["variant"] for v in ctx["strategies"]]
    names += [v["variant"] for v in ctx["ratings"] if v["variant"] not in names]
    files: dict[str, str] = {}
    for v in names:  # two names with one slug ("a+b", "a-b") get two files
        stem = f"variant-{_slug(v)}"
        taken = {f.lower() for f in files.values()}
        k = 1
        while f"{folder}/{stem}.html".lower() in taken:
            k += 1
            stem = f"variant-{_slug(v)}-{k}"
        files[v] = f"{folder}/{stem}.html"
    return {
        "folder": folder,
        "variants": files,
        "comparisons": f"{folder}/comparisons.html",
        "runs": f"{folder}/runs.html",
    }


@phases.timed("pages")
def render_details(game: Mapping[str, Any], ctx: Mapping[str, Any]) -> dict[str, str]:
    """The detail pages of a game page whose context ``ctx`` has ``details``
    (:func:`_detail_links`): ``{path relative to the game page: html}``. They
    hold what would make the game page too long or too large (issue 45: a page
    at most 1 MB and 12 screens), each linking back to the game page."""
    d = ctx.get("details")
    if not d:
        return {}
    tmpl = environment().get_template("detail.html.j2")
    base = {
        "game": ctx["name"],
        "back": "../" + (ctx.get("file") or f"{d['folder']}.html"),
        "date": _date([game]),
    }
    title = _page_title([game])
    strategies = {v["variant"]: v for v in ctx["strategies"]}
    ratings = {v["variant"]: v for v in ctx["ratings"]}
    out = {}
    for v, href in d["variants"].items():
        out[href] = tmpl.render(
            **base,
            kind="variant",
            title=f"{title}: strategies and ratings under {v}",
            variant=v,
            strategies=strategies.get(v),
            ratings=ratings.get(v),
        )
    if ctx["diffs"]["all"]:
        out[d["comparisons"]] = tmpl.render(
            **base,
            kind="comparisons",
            title=f"{title}: every variant against base",
            diffs=ctx["diffs"],
        )
    if ctx["runs"]:
        out[d["runs"]] = tmpl.render(
            **base, kind="runs", title=f"{title}: the stored runs", runs=ctx["runs"]
        )
    return out


def _index_verdicts(game: Mapping[str, Any]) -> list[dict]:
    """One line per ruleset of a game: its overall balance verdict."""
    from balance import design

    a = game.get("assessment")
    if not isinstance(a, pd.DataFrame) or a.empty:
        return []
    return [
        dict(zip(("status", "text"), design.overall(a, v), strict=True))
        for v in sorted(a["variant"].unique(), key=_variant_key)
    ]


@phases.timed("pages")
def render_index(games: Sequence[Mapping[str, Any]]) -> str:
    """The study's front page: per game the answer for the base rules under
    equilibrium play (:func:`index_lead`), the scripted field's verdict of
    base as a baseline (:func:`index_baseline`), the largest problems, base's
    then the variants', on one scale (:func:`_problems`, each linking to the
    evidence on the game's page, ``game["file"]`` relative to the index), the
    equilibrium's detail, a headline chart, each ruleset's verdict, then the
    page's summary sentences and facts. A game's page is rendered alone, so its anchors are
    those of game 0."""
    contexts = [
        {
            "name": str(g.get("name")),
            "file": str(g.get("file", "")),
            "anchor": f"game-{i}-{_slug(g.get('name'))}",
            "lead": index_lead(g),
            "baseline_verdict": index_baseline(g),
            "problems": _problems(g, str(g.get("file", "")), f"game-0-{_slug(g.get('name'))}"),
            "chart": _headline_chart(g),
            "verdicts": _index_verdicts(g),
            "equilibrium": _index_equilibrium(g),
            "equilibrium_href": f"{g.get('file', '')}#game-0-{_slug(g.get('name'))}-equilibrium",
            "n_warnings": len(g.get("cap_warnings") or []),
            "robust": _robust_section(g),
            "robust_href": f"{g.get('file', '')}#game-0-{_slug(g.get('name'))}-tuned",
            "warnings_href": f"{g.get('file', '')}#game-0-{_slug(g.get('name'))}-round-cap",
            "summary": [str(x) for x in g.get("summary") or []],
            "facts": _facts(g.get("tables") or {}, g.get("manifest") or {}),
            "manifest": _manifest_items(g.get("manifest") or {}),
            "links": _links(g),
        }
        for i, g in enumerate(games)
    ]
    return (
        environment()
        .get_template("index.html.j2")
        .render(title="Balance study", games=contexts, date=_date(games), baseline=EQ_BASELINE)
    )


def write_html(target: Path, html: str) -> Path:
    """Write ``html`` to ``target`` atomically (a temporary sibling, then a rename)."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.stem}.", suffix=".html.tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(html)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return target


def write_page(path: Path, games: list[dict]) -> Path:
    """Render one self-contained page for ``games`` and write it atomically."""
    return write_html(Path(path), render_page(games))


def write_index(out_dir: Path, games: list[dict]) -> Path:
    """Write one page per game (``<out>/<game>.html``) and the front page
    ``<out>/index.html`` linking them; returns the index's path. Each game
    page links detail pages written beside it in ``<out>/<game>/``
    (:func:`render_details`); their paths, relative to ``out``, are set as
    ``detail_files`` on each dict of ``games`` so the caller can record them.

    Every page is rendered fully in memory before anything is written, and
    each file is written atomically, so an interrupted run never leaves a
    half-written report.
    """
    out_dir = Path(out_dir)
    pages = []
    for i, g in enumerate(games):
        g = dict(g)
        g.setdefault("file", f"{_slug(g.get('game') or g.get('name') or i).lower()}.html")
        ctx = _game_context(g, 0)  # a game's page is rendered alone: its anchors are game 0's
        ctx["details"] = _detail_links(ctx, Path(g["file"]).stem)
        details = render_details(g, ctx)
        pages.append((g, _render_contexts([g], [ctx], "index.html"), details))
        if isinstance(games[i], dict):  # the caller records what was written (study._own)
            games[i]["detail_files"] = sorted(details)
    index = render_index([g for g, _, _ in pages])
    for g, html, details in pages:
        for rel, text in details.items():
            write_html(out_dir / rel, text)
        write_html(out_dir / g["file"], html)
    return write_html(out_dir / "index.html", index)
