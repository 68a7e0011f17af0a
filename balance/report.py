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
    plain-language verdict strings, shown at the top.

The page has inline CSS, inline SVG charts and a few lines of inline script
(click a column header to sort); it loads nothing from the network. All text
goes through Jinja2 autoescaping; only chart SVG made by our own chart code
is marked safe, and only after a check that it carries no script.

The ``fmt_*`` helpers are the one place numbers are turned into text, so
tables, verdicts and the CLI all read the same way:
``fmt_pct_ci(0.523, 0.513, 0.533, 9604) == "52.3% [51.3, 53.3] n=9,604"``.
"""

from __future__ import annotations

import math
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

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

TEMPLATE_DIR = Path(__file__).parent / "templates"


# --------------------------------------------------------------------------- formatting
from balance.fmt import (  # noqa: E402  (re-exported: the report's public helpers)
    MISSING, _missing, _num, fmt_games_needed, fmt_int, fmt_mean_ci, fmt_n, fmt_p, fmt_pct,
    fmt_pct_ci, fmt_pp, fmt_pp_ci, fmt_seconds, mean_ci, wilson_ci,
)


# --------------------------------------------------------------------------- page model
def _cell(text: str, sort: Any = None, cls: str = "", title: str = "") -> dict:
    """A table cell: display text, a numeric sort key, an optional class/tooltip."""
    v = "" if _missing(sort) else (f"{float(sort):.10g}" if isinstance(sort, (int, float, np.number)) else str(sort))
    return {"t": text, "v": v, "cls": cls, "title": title}


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


_UNSAFE_SVG = re.compile(
    r"<\s*(?:script|foreignObject|iframe|object|embed)\b|\son[a-z]+\s*=|javascript:"
    r"|(?:href|src)\s*=\s*[\"']?\s*(?:https?:)?//|@import",
    re.I,
)
_PROLOG = re.compile(r"^\s*(<\?xml[^>]*\?>\s*)?(<!DOCTYPE[^>]*>\s*)?", re.S)


def _trusted_svg(name: str, svg: str):
    """Mark chart SVG safe after checking it is plain SVG from our chart code."""
    from markupsafe import Markup

    text = _PROLOG.sub("", str(svg), count=1).strip()
    if not text.startswith("<svg") or _UNSAFE_SVG.search(text):
        raise ValueError(
            f"chart {name!r} is not plain SVG from balance.charts (script, external link or no <svg>)"
        )
    return Markup(text)


def _table(tables: Mapping[str, Any], key: str) -> pd.DataFrame | None:
    df = tables.get(key)
    if df is None or not isinstance(df, pd.DataFrame) or df.empty:
        return None
    return df


_CHART_INFO = {
    "overview": ("Variants at a glance",
                 "Mean game length, draw rate and the best strategy's win rate against random play, "
                 "per variant, with 95% confidence intervals."),
    "rounds": ("Game length distribution",
               "Share of games ending after each number of rounds, for a few contrasting variants."),
    "diffs": ("Change in each strategy's score vs base",
              "Paired by seed (same deals under each variant). Filled points are significant "
              "after Holm correction."),
}


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
        lo, hi = mean_ci(r.get("rounds_mean"), r.get("rounds_sd"), games)
        cells = [
            _cell(fmt_int(games), games),
            _cell(fmt_mean_ci(r.get("rounds_mean"), r.get("rounds_sd"), games), r.get("rounds_mean")),
            _cell(fmt_int(r.get("draws")), r.get("draws")),
            _cell(fmt_pct_ci(r.get("draw_rate"), r.get("draw_lo"), r.get("draw_hi"), games), r.get("draw_rate")),
        ]
        if has_seat:
            cells.append(_cell(fmt_pct_ci(r.get("seat1_share"), r.get("seat1_lo"), r.get("seat1_hi")),
                               r.get("seat1_share"), cls=_side(r.get("seat1_lo"), r.get("seat1_hi"))))
        if has_timeouts:
            t = r.get("timeouts")
            tlo, thi = wilson_ci(t, games)
            rate = None if _missing(t) or _missing(games) or not games else float(t) / float(games)
            cells.append(_cell(f"{fmt_int(t)} · {fmt_pct_ci(rate, tlo, thi)}", rate))
        best = r.get("best_strategy")
        ls_n = None
        if matrix is not None and not _missing(best):
            m = matrix[(matrix["variant"] == r["variant"]) & (matrix["a"] == best) & (matrix["b"] == "random")]
            if len(m):
                ls_n = m["games"].iloc[0]
        cells += [
            _cell(MISSING if _missing(best) else str(best), None if _missing(best) else str(best)),
            _cell(fmt_pct_ci(r.get("luck_skill_winrate"), r.get("luck_skill_lo"), r.get("luck_skill_hi"), ls_n),
                  r.get("luck_skill_winrate")),
            _cell(fmt_games_needed(r.get("games_needed")), r.get("games_needed"),
                  title="" if not _missing(r.get("games_needed")) else "not reached: the better side is not ahead, or beyond the search limit"),
        ]
        rows.append({"name": str(r["variant"]), "base": r["variant"] == "base", "cells": cells})
    return {"rows": rows, "has_timeouts": has_timeouts, "has_seat": has_seat}


def _matrix_table(matrix: pd.DataFrame, variant: str, order: Sequence[str]) -> dict | None:
    m = matrix[matrix["variant"] == variant]
    if m.empty:
        return None
    by = {(r["a"], r["b"]): r for r in m.to_dict("records")}
    rows = []
    for a in order:
        cells = []
        for b in order:
            r = by.get((a, b))
            if a == b or r is None:
                cells.append(_cell(MISSING, None, cls="diag"))
                continue
            w, lo, hi = r["winrate"], r["winrate_lo"], r["winrate_hi"]
            cells.append(_cell(
                f"{fmt_pct(w)} ±{_num((hi - lo) / 2 * 100, 1)}", w,
                cls=_side(r.get("score_lo"), r.get("score_hi")),
                title=(f"wins {fmt_pct_ci(w, lo, hi, r['games'])}; draws {fmt_int(r['draws'])}; "
                       f"score {fmt_pct_ci(r.get('score'), r.get('score_lo'), r.get('score_hi'))}"),
            ))
        rows.append({"name": str(a), "cells": cells})
    n = m["games"]
    n_text = fmt_int(n.min()) if n.min() == n.max() else f"{fmt_int(n.min())}–{fmt_int(n.max())}"
    return {"columns": [str(s) for s in order], "rows": rows, "n": n_text}


def _strategies_section(tables: Mapping[str, Any], charts: Mapping[str, Any]) -> list[dict]:
    s = _table(tables, "strategies")
    if s is None:
        return []
    matrix = _table(tables, "matrix")
    out = []
    names = sorted(s["variant"].unique(), key=_variant_key)
    for i, v in enumerate(names):
        sub = s[s["variant"] == v].sort_values(["score", "strategy"], ascending=[False, True])
        rows = []
        for r in sub.to_dict("records"):
            games, wins, draws = r["games"], r["wins"], r["draws"]
            losses = None if _missing(games) else games - wins - draws
            rows.append({"name": str(r["strategy"]), "cells": [
                _cell(fmt_int(games), games),
                _cell(f"{fmt_int(wins)} / {fmt_int(draws)} / {fmt_int(losses)}", wins),
                _cell(fmt_pct_ci(r["winrate"], r["winrate_lo"], r["winrate_hi"], games), r["winrate"]),
                _cell(fmt_pct_ci(r["score"], r["score_lo"], r["score_hi"], games), r["score"],
                      cls=_side(r["score_lo"], r["score_hi"])),
            ]})
        order = [str(x) for x in sub["strategy"]]
        mt = _matrix_table(matrix, v, list(sub["strategy"])) if matrix is not None else None
        chart = charts.get(f"matrix:{v}")
        out.append({
            "variant": str(v), "open": i == 0, "rows": rows, "order": order,
            "leader": order[0] if order else "",
            "matrix": mt, "chart": chart,
        })
    return out


def _diff_rows(df: pd.DataFrame) -> list[dict]:
    rows = []
    for r in df.to_dict("records"):
        sig = bool(r.get("significant")) if not _missing(r.get("significant")) else False
        cls = ("pos" if r["diff"] > 0 else "neg") if sig else ""
        rows.append({"name": str(r["variant"]), "cells": [
            _cell(str(r["strategy"]), str(r["strategy"])),
            _cell(fmt_pp_ci(r["diff"], r["diff_lo"], r["diff_hi"], r["n_pairs"]), r["diff"], cls=cls),
            _cell(fmt_p(r.get("p")), r.get("p")),
            _cell(fmt_p(r.get("p_holm")), r.get("p_holm")),
            _cell("yes" if sig else "no", int(sig), cls="sig" if sig else "muted"),
        ]})
    return rows


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
                crow.append({"name": str(r["card"]), "cells": [
                    _cell(fmt_pct_ci(r["played_wr"], r["played_lo"], r["played_hi"], r["played_n"]), r["played_wr"]),
                    _cell(fmt_pct_ci(r["gih_wr"], r["gih_lo"], r["gih_hi"], r["gih_n"]), r["gih_wr"]),
                    _cell(f"{fmt_pct(r['gns_wr'])} {fmt_n(r['gns_n'])}", r["gns_wr"]),
                    _cell(fmt_pp_ci(r["iwd"], r["iwd_lo"], r["iwd_hi"]), r["iwd"]),
                ]})
        rrow = []
        if restricted is not None:
            sub = _select(restricted, variant, s, o)
            sub = sub.assign(_k=sub["rank"].map(_rank_key)).sort_values("_k")
            for r in sub.to_dict("records"):
                if "significant" in r and not _missing(r["significant"]):
                    sig = bool(r["significant"])
                else:
                    sig = not _missing(r.get("p_holm")) and r["p_holm"] < 0.05
                rrow.append({"name": str(r["rank"]), "cells": [
                    _cell(fmt_pp_ci(r["effect"], r["effect_lo"], r["effect_hi"], r["n_pairs"]), r["effect"],
                          cls=("pos" if r["effect"] > 0 else "neg") if sig else ""),
                    _cell(fmt_p(r.get("p")), r.get("p")),
                    _cell(fmt_p(r.get("p_holm")), r.get("p_holm")),
                ]})
        blocks.append({"strategy": str(s), "opponent": None if o is None else str(o),
                       "cards": crow, "restricted": rrow, "chart": charts.get(card_chart_key(s, o))})
    return {"variant": str(variant), "blocks": blocks, "other_variants": len(variants) - 1}


def _manifest_items(manifest: Mapping[str, Any]) -> list[tuple[str, str, bool]]:
    """(label, value, is_code) rows for the reproducibility block."""
    known = [
        ("command", "Command", True), ("seed", "Seed", True), ("config_hash", "Config hash", True),
        ("engine_version", "Engine version", True), ("date", "Date", False),
        ("games_total", "Games simulated", False), ("elapsed_s", "Elapsed", False),
    ]
    items = []
    for key, label, code in known:
        if key not in manifest:
            continue
        val = manifest[key]
        if key == "games_total":
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


def _game_context(game: Mapping[str, Any], index: int) -> dict:
    name = str(game.get("name", f"Game {index + 1}"))
    tables = game.get("tables") or {}
    manifest = game.get("manifest") or {}
    raw_charts = game.get("charts") or {}
    charts = {str(k): _trusted_svg(str(k), v) for k, v in raw_charts.items() if v}

    placed = {"overview", "rounds", "diffs"}
    placed |= {k for k in charts if k.startswith("matrix:") or k.startswith("cards:")}
    extra = [
        {"title": k, "caption": "", "svg": charts[k]} for k in charts if k not in placed
    ]

    def chart(key: str) -> dict | None:
        if key not in charts:
            return None
        title, caption = _CHART_INFO.get(key, (key, ""))
        return {"title": title, "caption": caption, "svg": charts[key]}

    return {
        "name": name,
        "anchor": f"game-{index}-{_slug(name)}",
        "summary": [str(s) for s in (game.get("summary") or [])],
        "facts": _facts(tables, manifest),
        "variants": _variants_section(tables),
        "strategies": _strategies_section(tables, charts),
        "diffs": _diffs_section(tables),
        "cards": _cards_section(tables, charts),
        "chart_overview": chart("overview"),
        "chart_rounds": chart("rounds"),
        "chart_diffs": chart("diffs"),
        "extra_charts": extra,
        "rulings": [str(r) for r in (manifest.get("rulings") or [])],
        "manifest": _manifest_items(manifest),
    }


# --------------------------------------------------------------------------- rendering
def _environment():
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    return Environment(
        loader=FileSystemLoader(str(TEMPLATE_DIR)),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render_index(games: Sequence[Mapping[str, Any]]) -> str:
    """The report page as a string (see the module docstring for ``games``)."""
    contexts = [_game_context(g, i) for i, g in enumerate(games)]
    names = [c["name"] for c in contexts]
    title = "Balance report" + (f" — {names[0]}" if len(names) == 1 else "")
    dates = [str(g.get("manifest", {}).get("date")) for g in games if g.get("manifest", {}).get("date")]
    return _environment().get_template("index.html.j2").render(
        title=title, games=contexts, date=dates[0] if dates else "",
    )


def write_index(out_dir: Path, games: list[dict]) -> Path:
    """Write ``out_dir/index.html`` atomically and return its path.

    The page is rendered fully in memory first, then written to a temporary
    file in the same folder and renamed over ``index.html``, so an
    interrupted run never leaves a half-written report.
    """
    out_dir = Path(out_dir)
    html = render_index(games)
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / "index.html"
    fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=".index.", suffix=".html.tmp")
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
