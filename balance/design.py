"""A balance verdict per ruleset, in a designer's sense, from named properties.

Each ruleset (variant) of a round robin is judged on six properties, each a
figure the tables already compute (``balance.tables``, ``balance.meta``) with
its 95% interval, its sample size and a target a designer can edit:

``seat_fairness``
    the first seat's share of decided games; target ``seat_share_min`` –
    ``seat_share_max``.
``dominance`` (shown as "best script's score (scripted field)")
    the best strategy's score against the other strategies of the scripted
    field (baselines such as random play left out: ``baselines``); target at
    most ``best_score_max``. It says how far the best of the hand-written
    scripts (and the tuned strategy) outplays the others: a statement about
    the field, not about the rules (whether the rules collapse to one way of
    playing is measured at the equilibrium: :func:`equilibrium_rows` and
    :mod:`balance.equilibrium`).
``diversity``
    the number of strategies in the max-entropy Nash mixture of the round
    robin; target at least ``nash_support_min``.
``length``
    mean rounds per game; target ``rounds_min`` – ``rounds_max``.
``draws``
    the draw rate; target at most ``draw_rate_max``.
``round_cap``
    the share of games stopped at the round cap; target at most
    ``round_cap_max``.

A property's status is three-valued, from its interval: ``meets`` (the
interval lies inside the target), ``fails`` (it lies outside) or ``unclear``
(it straddles a bound: more games are needed). A ruleset is "balanced" only
when every property meets its target.

Thresholds: the core defaults in ``configs/verdict.toml``, overridden per game
by ``configs/<game>/verdict.toml`` (same keys, any subset) and by a file the
user names (``--verdict-config``). See ``docs/verdicts.md``.

Game-agnostic: everything comes from :class:`balance.runner.RunResult` and the
engine's ``END_NAMES``.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from balance import resources
from balance.errors import UserError
from balance.fmt import fmt_int
from balance.paths import check_keys, load_toml
from balance.registry import get_game
from balance.units import METRICS
from balance.versus import status  # noqa: F401 (one rule, kept in balance.versus)

DEFAULTS = resources.configs() / "verdict.toml"
FILE_NAME = "verdict.toml"

# key -> kind (its unit): "rate" (a share 0..1, written 0.05 or "5%"), "rounds"
# (a whole number >= 1), "count" (a whole number >= 1), "names" (a list of
# strategy names)
KEYS = {
    "seat_share_min": "rate",
    "seat_share_max": "rate",
    "best_score_max": "rate",
    "baselines": "names",
    "nash_support_min": "count",
    "rounds_min": "rounds",
    "rounds_max": "rounds",
    "draw_rate_max": "rate",
    "round_cap_max": "rate",
}
# (low key, high key): the low bound may not exceed the high one
_PAIRS = (("seat_share_min", "seat_share_max"), ("rounds_min", "rounds_max"))

PROPERTIES = ("seat_fairness", "dominance", "diversity", "length", "draws", "round_cap")
LABELS = {
    "seat_fairness": "seat fairness",
    # the key stays "dominance" (stored records, --json); people read what it shows
    "dominance": "best script's score (scripted field)",
    "diversity": "strategy diversity",
    "length": "game length",
    "draws": "draws",
    "round_cap": "round-cap draws",
}
STATUSES = ("meets", "fails", "unclear")
COLUMNS = [
    "variant",
    "property",
    "value",
    "lo",
    "hi",
    "n",
    "target",
    "status",
    "text",
    "label",
    "excess",
    "field",
    "target_lo",
    "target_hi",
]
# Why a figure of the compare table or a page can be missing ("—")
MISSING_REASONS = {
    "best_strategy": "no scripted strategy played the random baseline in this round robin",
    "luck_skill": "no scripted strategy played the random baseline in this round robin",
    "games_needed": "not reached: the better side is never ahead with 95% probability "
    "(or only beyond 10 million games)",
    "diagonal": "a strategy against itself is not played (it scores ½ by symmetry)",
    "nash": "the round robin is incomplete: the Nash mixture needs every pairing",
    "metrics": "the engine keeps no per-round score trace for these runs",
    "default": "not measured in these runs",
}
_NAN = float("nan")
_DIVERSITY_POINTS = 10.0  # rank weight of a strategy missing from the Nash mixture


# --------------------------------------------------------------------------- thresholds
def _check_value(shown: str, key: str, value):
    kind = KEYS[key]
    if kind == "names":
        if not isinstance(value, list) or not all(isinstance(x, str) and x for x in value):
            raise UserError(
                f"{shown}: key '{key}' must be a list of strategy names, e.g. [\"random\"], "
                f"got {value!r}"
            )
        return list(value)
    if kind in ("rounds", "count"):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise UserError(
                f"{shown}: key '{key}' must be a whole number of at least 1, got {value!r}"
            )
        return int(value)
    # a share: 0.53, or the string "53%" (TOML has no percent literal); a
    # plain number above 1 is a percent missing its sign, refused as one
    if isinstance(value, str) and value.strip().endswith("%"):
        try:
            pct = float(value.strip()[:-1])
        except ValueError:
            pct = math.nan
        if not (math.isfinite(pct) and 0.0 <= pct <= 100.0):
            raise UserError(
                f"{shown}: key '{key}' must be a share between 0 and 1 (0.05, or \"5%\"), "
                f"got {value!r}"
            )
        return pct / 100
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UserError(
            f"{shown}: key '{key}' must be a number between 0 and 1 (or a percent "
            f'string like "5%"), got {value!r}'
        )
    if math.isfinite(value) and 1.0 < value <= 100.0:
        raise UserError(
            f"{shown}: key '{key}' = {value!r} looks like a percent: write {value / 100:g} "
            f'or "{value:g}%" ({key} is a share, 0 to 1)'
        )
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise UserError(
            f"{shown}: key '{key}' must be a share between 0 and 1 (e.g. 0.05 for 5%), "
            f"got {value!r}"
        )
    return float(value)


def _read(path: Path, shown: str, partial: bool) -> dict:
    data = load_toml(path, shown)
    check_keys(shown, "the top level", data, KEYS)
    if not partial:
        missing = [k for k in KEYS if k not in data]
        if missing:
            raise UserError(
                f"{shown}: missing key{'s' if len(missing) > 1 else ''} {', '.join(missing)}"
            )
    return {k: _check_value(shown, k, v) for k, v in data.items()}


def load_thresholds(game: str, path=None) -> dict:
    """The verdict thresholds of ``game``: the core defaults
    (``configs/verdict.toml``), then the game's own (``configs/<game>/verdict.toml``,
    if any), then the file at ``path`` (if given); later files set only the
    keys they name. A bad file is one line (:class:`UserError`)."""
    core = resources.shown(DEFAULTS)  # configs/verdict.toml, wherever installed
    out = _read(DEFAULTS, core, partial=False)
    where = dict.fromkeys(out, core)
    sources = [(get_game(game).configs / FILE_NAME, False)]
    if path is not None:
        if str(path).strip() == "":
            raise UserError("--verdict-config: the path is empty; give a TOML file")
        sources.append((Path(path), True))
    for p, required in sources:
        if not required and not p.is_file():
            continue
        name = str(p) if required else resources.shown(p)  # the user's path as given
        part = _read(p, name, partial=True)
        out.update(part)
        where.update(dict.fromkeys(part, name))
    for lo, hi in _PAIRS:
        if out[lo] > out[hi]:
            raise UserError(
                f"{where[hi] if where[hi] != core else where[lo]}: "
                f"{lo} ({out[lo]}) is above {hi} ({out[hi]})"
            )
    return out


# --------------------------------------------------------------------------- statuses
def _excess(value, lo_target=None, hi_target=None, scale: float = 1.0) -> float:
    """How far ``value`` lies beyond its target, in points (rates) or per cent
    of the bound (``scale`` = the bound): 0 inside it."""
    if value is None or not np.isfinite(value):
        return 0.0
    out = 0.0
    if lo_target is not None and value < lo_target:
        out = lo_target - value
    if hi_target is not None and value > hi_target:
        out = value - hi_target
    return 100.0 * out / scale


def _pct(x) -> str:
    return "—" if x is None or not np.isfinite(x) else f"{100 * x:.1f}"


def _pct_ci(v, lo, hi) -> str:
    return f"{_pct(v)}% [{_pct(lo)}, {_pct(hi)}]"


def _range_text(lo, hi, pct=True) -> str:
    if pct:
        return f"{100 * lo:g}–{100 * hi:g}%"
    return f"{lo:g}–{hi:g}"


def _row(
    variant, prop, value, lo, hi, n, target, st, detail, excess, field, target_lo, target_hi
) -> dict:
    word = {"meets": "meets", "fails": "fails", "unclear": "unclear (more games needed)"}[st]
    return {
        "variant": variant,
        "property": prop,
        "value": value,
        "lo": lo,
        "hi": hi,
        "n": n,
        "target": target,
        "status": st,
        "text": f"{LABELS[prop]}: {word} — {detail}",
        "label": LABELS[prop],
        "excess": excess if st == "fails" else 0.0,
        "field": field,
        # the target's bounds as numbers (None: no bound on that side), for problems()
        "target_lo": target_lo,
        "target_hi": target_hi,
    }


def _is_baseline(name: str, baselines) -> bool:
    return name in baselines or name.split("@", 1)[0] in baselines


def _first(df, variant: str):
    if df is None or not len(df) or "variant" not in df:
        return None
    sub = df[df["variant"] == variant]
    return None if not len(sub) else sub.iloc[0]


def _end_index(res, name: str = "round_cap") -> int | None:
    names = list(get_game(res.spec.game).engine_module().END_NAMES)
    return names.index(name) if name in names else None


def _cap_count(runs) -> int:
    total = 0
    for r in runs:
        i = _end_index(r)
        if i is not None and i < len(r.reasons):
            total += int(r.reasons[i])
    return total


# --------------------------------------------------------------------------- the verdict
def assess(
    runs: dict,
    variants: list[str],
    strategies: list[str],
    thresholds: dict,
    tables: dict | None = None,
) -> pd.DataFrame:
    """One row per (variant, property): value, its 95% interval (lo, hi), n,
    the target in words, the status (meets / fails / unclear) and a line of
    plain text. ``runs`` maps (variant, a, b) to RunResults, as
    :func:`balance.analysis.compare_command` returns them; ``tables`` may hold
    tables already computed from them (``compare_tables``, ``meta_tables``)."""
    from balance import meta
    from balance import tables as tmod

    th = thresholds
    t = dict(tables or {})
    if t.get("variants") is None:
        t["variants"] = tmod.variant_table(runs, variants)
    m = t.get("metrics")
    if m is None or "duration" not in getattr(m, "columns", []):
        t["metrics"] = meta.game_metrics_table(runs, variants)
    if t.get("ratings") is None:
        t.update(meta.ratings_tables(runs, variants, strategies))
    played = [s for s in strategies if any(s in (a, b) for (_, a, b) in runs)]
    field = [s for s in played if not _is_baseline(s, th["baselines"])]
    if len(field) < 2:
        field = played
    if field == played and t.get("strategies") is not None:
        st = t["strategies"]
    else:
        sub = {k: r for k, r in runs.items() if k[1] in field and k[2] in field}
        st = tmod.strategy_table(sub, variants, field)
    field_text = ", ".join(field)

    rows = []
    for v in variants:
        vruns = [r for (vv, _, _), r in runs.items() if vv == v]
        if not vruns:
            continue
        games = sum(r.games for r in vruns)
        # every per-game figure with its interval clustered by deal across the
        # matches that replay it (no design effect assumed)
        f = tmod.per_game_figures(vruns)

        # seat fairness: the first seat's share of decided games
        decided = f["decided"]
        lo_t, hi_t = th["seat_share_min"], th["seat_share_max"]
        target = f"{_range_text(lo_t, hi_t)} of decided games"
        if decided:
            share, lo, hi = f["seat1_share"], f["seat1_lo"], f["seat1_hi"]
            s = status(lo, hi, lo_t, hi_t)
            detail = (
                f"the first seat wins {_pct_ci(share, lo, hi)} of {fmt_int(decided)} decided "
                f"games, a seat advantage of {200 * share - 100:+.1f} points "
                f"(target {_range_text(lo_t, hi_t)})"
            )
        else:
            share = lo = hi = _NAN
            s = "unclear"
            detail = "no decided games: every game was drawn"
        rows.append(
            _row(
                v,
                "seat_fairness",
                share,
                lo,
                hi,
                decided,
                target,
                s,
                detail,
                _excess(share, lo_t, hi_t),
                field_text,
                lo_t,
                hi_t,
            )
        )

        # dominance: the best strategy's score against the rest of the field
        mx = th["best_score_max"]
        target = f"best script's score against the other scripts at most {100 * mx:g}%"
        sv = st[st["variant"] == v] if len(st) else st
        if len(sv):
            best = sv.sort_values("score", ascending=False).iloc[0]
            val, lo, hi, n = best.score, best.score_lo, best.score_hi, int(best.games)
            s = status(lo, hi, None, mx)
            dom = ""
            rt = t.get("ratings")
            if rt is not None and len(rt):
                rr = rt[(rt["variant"] == v) & (rt["strategy"] == best.strategy)]
                if len(rr) and bool(rr["dominant"].iloc[0]):
                    dom = "; it beats every other strategy at 95%"
            detail = (
                f"{best.strategy} scores {_pct_ci(val, lo, hi)} against "
                f"{'the other strategies' if len(field) > 1 else 'the field'} "
                f"(n={fmt_int(n)} games; target at most {100 * mx:g}%){dom}"
            )
        else:
            val = lo = hi = _NAN
            n, s = 0, "unclear"
            detail = "not measured: no match between two strategies of the field"
        rows.append(
            _row(
                v,
                "dominance",
                val,
                lo,
                hi,
                n,
                target,
                s,
                detail,
                _excess(val, None, mx),
                field_text,
                None,
                mx,
            )
        )

        # diversity: strategies in the Nash mixture (bootstrap bounds)
        k_min = th["nash_support_min"]
        target = f"at least {k_min} strategies in the Nash mixture"
        rt = t.get("ratings")
        rv = rt[rt["variant"] == v] if rt is not None and len(rt) else None
        if rv is not None and len(rv) and rv["nash_p"].notna().all():
            p = rv["nash_p"].to_numpy(float)
            share = rv["nash_support"].to_numpy(float)
            val = float((p > 1e-6).sum())
            if np.isfinite(share).all():
                # a mixture has at least one strategy, whatever the bootstrap says
                lo = max(1.0, float((share >= 0.975).sum()))
                hi = max(lo, float((share > 0.025).sum()))
            else:
                lo = hi = _NAN
            s = status(lo, hi, k_min, None)
            supp = rv[p > 1e-6].sort_values("nash_p", ascending=False)
            parts = ", ".join(f"{r.strategy} {100 * r.nash_p:.0f}%" for r in supp.itertuples())
            eff = 1.0 / float(np.sum(p**2))
            detail = (
                f"{int(val)} strateg{'y' if val == 1 else 'ies'} in the Nash mixture "
                f"[{_num(lo)}, {_num(hi)}] ({parts}; effective number {eff:.1f}; "
                f"n={fmt_int(games)} games; target at least {k_min})"
            )
        else:
            val = lo = hi = _NAN
            s = "unclear"
            detail = f"not measured: {MISSING_REASONS['nash']}"
        rows.append(
            _row(
                v,
                "diversity",
                val,
                lo,
                hi,
                games,
                target,
                s,
                detail,
                _DIVERSITY_POINTS * max(0.0, k_min - val) if np.isfinite(val) else 0.0,
                field_text,
                k_min,
                None,
            )
        )

        # length: mean rounds per game
        r_lo, r_hi = th["rounds_min"], th["rounds_max"]
        target = f"{r_lo}–{r_hi} rounds on average"
        mr = _first(t["metrics"], v)
        if mr is not None and np.isfinite(mr["duration"]):
            val = float(mr["duration"])
            lo, hi = float(mr["duration_lo"]), float(mr["duration_hi"])
            s = status(lo, hi, r_lo, r_hi)
            bound = r_lo if val < r_lo else r_hi
            detail = (
                f"games last {val:.1f} rounds [{lo:.1f}, {hi:.1f}] on average "
                f"(n={fmt_int(games)} games; target {r_lo}–{r_hi})"
            )
            ex = _excess(val, r_lo, r_hi, scale=bound)
        else:
            val = lo = hi = _NAN
            s, ex = "unclear", 0.0
            detail = "not measured: no game lengths in these runs"
        rows.append(
            _row(v, "length", val, lo, hi, games, target, s, detail, ex, field_text, r_lo, r_hi)
        )

        # draws
        mx = th["draw_rate_max"]
        vr = _first(t["variants"], v)
        draws = sum(int(r.draws) for r in vruns)
        val = draws / games if games else _NAN
        lo, hi = (float(vr["draw_lo"]), float(vr["draw_hi"])) if vr is not None else (_NAN, _NAN)
        s = status(lo, hi, None, mx)
        detail = (
            f"{_pct_ci(val, lo, hi)} of {fmt_int(games)} games are drawn "
            f"(target at most {100 * mx:g}%)"
        )
        rows.append(
            _row(
                v,
                "draws",
                val,
                lo,
                hi,
                games,
                f"at most {100 * mx:g}% of games",
                s,
                detail,
                _excess(val, None, mx),
                field_text,
                None,
                mx,
            )
        )

        # round cap
        mx = th["round_cap_max"]
        k = _cap_count(vruns)
        val = k / games if games else _NAN
        lo, hi = f["cap_lo"], f["cap_hi"]
        s = status(lo, hi, None, mx)
        detail = (
            f"{_pct_ci(val, lo, hi)} of {fmt_int(games)} games end at the round cap "
            f"({fmt_int(k)} games; target at most {100 * mx:g}%)"
        )
        rows.append(
            _row(
                v,
                "round_cap",
                val,
                lo,
                hi,
                games,
                f"at most {100 * mx:g}% of games",
                s,
                detail,
                _excess(val, None, mx),
                field_text,
                None,
                mx,
            )
        )
    return pd.DataFrame(rows, columns=COLUMNS)


def _num(x) -> str:
    return "—" if x is None or not np.isfinite(x) else f"{x:.0f}"


def overall(assessment: pd.DataFrame, variant: str) -> tuple[str, str]:
    """(status, line) of one variant: "balanced", "not balanced" or "not shown"."""
    sub = assessment[assessment["variant"] == variant]
    if not len(sub):
        return "unclear", f"{variant}: no verdict (no runs of this ruleset)"
    field = str(sub["field"].iloc[0])
    n = (
        int(sub.loc[sub["property"] == "draws", "n"].max())
        if (sub["property"] == "draws").any()
        else 0
    )
    under = f"under the strategies {field}; {fmt_int(n)} games"
    fails = list(sub.loc[sub["status"] == "fails", "label"])
    unclear = list(sub.loc[sub["status"] == "unclear", "label"])
    if not fails and not unclear:
        return "meets", f"{variant}: balanced — every property meets its target ({under})"
    if fails:
        text = f"{variant}: not balanced — fails {', '.join(fails)}"
        if unclear:
            text += f"; unclear: {', '.join(unclear)}"
        return "fails", text + f" ({under})"
    return (
        "unclear",
        f"{variant}: not shown balanced — unclear: {', '.join(unclear)}; more games needed "
        f"({under})",
    )


def verdict_lines(assessment: pd.DataFrame, variant: str) -> list[str]:
    """The overall line of ``variant``, then one line per property."""
    sub = assessment[assessment["variant"] == variant]
    return [overall(assessment, variant)[1], *(str(x) for x in sub["text"])]


def cap_warnings(runs: dict, limit: float = 0.05) -> list[str]:
    """One line per pairing (variant, a, b) whose share of games stopped at
    the round cap is above ``limit``, largest first, with its 95% interval
    (deal-level: the run's round-cap games per deal) and its games."""
    from balance.tables import per_game_figures

    found = []
    for (v, a, b), res in runs.items():
        if not res.games:
            continue
        i = _end_index(res)
        if i is None or i >= len(res.reasons):
            continue
        k = int(res.reasons[i])
        share = k / res.games
        if share > limit:
            f = per_game_figures([res])
            lo, hi = f["cap_lo"], f["cap_hi"]
            found.append(
                (
                    -share,
                    f"warning: {v}, {a} vs {b}: {_pct_ci(share, lo, hi)} of "
                    f"{fmt_int(res.games)} games end at the round cap (draws), above "
                    f"{100 * limit:g}%",
                )
            )
    return [line for _, line in sorted(found, key=lambda x: x[0])]


#: Each property's metric in :data:`balance.units.METRICS`, whose declared
#: unit (share, rounds, strategies) and scale of one unit of violation the
#: ranking of problems reads (one table of units, kept there).
PROPERTY_METRICS = {
    "seat_fairness": "seat_share",
    "dominance": "max_strategy_score",
    "diversity": "nash_support",
    "length": "rounds",
    "draws": "draws",
    "round_cap": "round_cap",
}
PROBLEM_COLUMNS = [
    *COLUMNS,
    "unit",
    "bound",
    "side",
    "beyond",
    "half",
    "multiple",
    "beyond_text",
    "multiple_text",
    "group",
]


def unit(prop: str) -> tuple[str, float]:
    """(unit, scale of one unit of violation) of a property, as its metric
    declares them in :data:`balance.units.METRICS`."""
    m = METRICS[PROPERTY_METRICS[prop]]
    return str(m[4]), float(m[3])


def _amount(x: float, kind: str, digits: int = 1) -> str:
    """A size in a unit: points of a share (``3.2 pp``), rounds, strategies."""
    if kind in ("share", "score points"):
        return f"{100 * x:.{digits}f} pp"
    if kind == "strategies":
        k = f"{x:.0f}" if float(x).is_integer() else f"{x:.1f}"
        return f"{k} strateg{'y' if k == '1' else 'ies'}"
    if kind == "rounds":
        return f"{x:.{digits}f} rounds"
    return f"{x:.{digits}f} {kind}"


def _bound_text(b: float, kind: str) -> str:
    if kind in ("share", "score points"):
        return f"{100 * b:g}%"
    if kind == "strategies":
        return f"{b:g}-strategy"
    if kind == "rounds":
        return f"{b:g}-round"
    return f"{b:g} {kind}"


def beyond(row) -> dict:
    """How far a verdict row's value lies beyond its target, on two scales.

    The bound is the target's end the value is past (or, inside the target,
    the end its interval reaches past). ``beyond`` is the distance from that
    bound, in the property's own unit (:func:`unit`): positive past it,
    negative inside. ``half`` is the 95% interval's half-width on the
    bound's side (the distance from the value to the interval's end facing
    the bound: intervals here can be asymmetric), and ``multiple`` is
    ``beyond / half``. So a property shown outside its target has a multiple
    above 1, one not shown lies between -1 and 1, one shown inside below -1;
    a zero-width interval past the bound gives an infinite multiple. A count
    of strategies is a whole number: its half-width is at least half a
    strategy (the interval [1, 1] read as [0.5, 1.5])."""
    prop = str(row["property"])
    kind, scale = unit(prop)
    v, lo, hi = (
        float("nan") if row.get(k) is None else float(row[k]) for k in ("value", "lo", "hi")
    )
    t_lo, t_hi = row.get("target_lo"), row.get("target_hi")
    t_lo = None if t_lo is None or not np.isfinite(float(t_lo)) else float(t_lo)
    t_hi = None if t_hi is None or not np.isfinite(float(t_hi)) else float(t_hi)
    out = {"unit": kind, "bound": _NAN, "side": "", "beyond": _NAN, "half": _NAN}
    out.update(multiple=_NAN, beyond_text="not measured", multiple_text="", scale=scale)
    if not np.isfinite(v) or (t_lo is None and t_hi is None):
        return out
    # the bound the value is past; inside the target, the one its interval reaches past
    if t_hi is not None and v > t_hi:
        side = "hi"
    elif t_lo is not None and v < t_lo:
        side = "lo"
    elif t_hi is not None and np.isfinite(hi) and hi > t_hi:
        side = "hi"
    elif t_lo is not None and np.isfinite(lo) and lo < t_lo:
        side = "lo"
    elif t_lo is None or t_hi is None:
        side = "hi" if t_lo is None else "lo"
    else:
        side = "hi" if t_hi - v < v - t_lo else "lo"
    b = t_hi if side == "hi" else t_lo
    d = v - b if side == "hi" else b - v
    # the interval's half facing the bound: past it, the end back toward it; inside, the end past it
    if side == "hi":
        half = v - lo if d > 0 else hi - v
    else:
        half = hi - v if d > 0 else v - lo
    half = float(half) if np.isfinite(half) else _NAN
    if kind == "strategies" and np.isfinite(half):
        # a whole-number count: its interval [1, 1] stands for [0.5, 1.5], so the
        # half-width is at least half a strategy (a bootstrap's percentile ends of a
        # count often coincide, which would make every such failure infinitely far)
        half = max(half, 0.5)
    if not np.isfinite(half):
        mult = _NAN
    elif half > 0:
        mult = d / half
    else:
        mult = math.copysign(math.inf, d) if d else 0.0
    where = ("above" if side == "hi" else "below") if d >= 0 else "inside"
    text = f"{_amount(abs(d), kind)} {where} the {_bound_text(b, kind)} bound"
    if not np.isfinite(mult) and np.isfinite(half):
        mtext = "its 95% interval has no width"
    elif np.isfinite(mult):
        mtext = f"{abs(mult):.1f} × its 95% CI half-width ({_amount(half, kind, 2)})"
    else:
        mtext = "no interval"
    out.update(side=side, bound=b, beyond=d, half=half, multiple=mult)
    out.update(beyond_text=text, multiple_text=mtext)
    return out


def problems(assessment: pd.DataFrame, limit: int = 5, base: str = "base") -> pd.DataFrame:
    """The largest problems, ranked on one scale: every property not shown
    within its target (``fails`` or ``unclear``), base's first, then the
    variants', at most ``limit`` of each group.

    Within a group the rows are ranked by :func:`beyond`'s ``multiple``, the
    distance past the target in multiples of the 95% interval's half-width on
    the target's side, whatever the property's unit: a property 2 half-widths
    beyond ranks above one 1 half-width beyond. Ties (an infinite multiple: a
    zero-width interval) fall back to the distance in units of violation
    (:data:`balance.units.METRICS`' scale). A property not measured ranks
    last. Each row keeps the distance in the property's own unit
    (``beyond``, ``beyond_text``) and the multiple (``multiple``,
    ``multiple_text``); ``group`` is "base" or "variants". The ``assessment``
    may mix fields (:func:`assess`'s scripted field with
    :func:`equilibrium_rows`): its ``field`` column says which."""
    if assessment is None or not len(assessment):
        return pd.DataFrame(columns=PROBLEM_COLUMNS)
    f = assessment[assessment["status"].isin(["fails", "unclear"])]
    rows = []
    for r in f.to_dict("records"):
        b = beyond(r)
        scale = b.pop("scale")
        # not measured (nan) ranks last
        key = -math.inf if np.isnan(b["multiple"]) else b["multiple"]
        units = b["beyond"] / scale if np.isfinite(b["beyond"]) else -math.inf
        group = "base" if r["variant"] == base else "variants"
        rows.append({**r, **b, "group": group, "_k": key, "_u": units})
    if not rows:
        return pd.DataFrame(columns=PROBLEM_COLUMNS)
    df = pd.DataFrame(rows)
    df["_g"] = (df["group"] != "base").astype(int)
    df = df.sort_values(
        ["_g", "_k", "_u", "variant", "property"], ascending=[True, False, False, True, True]
    )
    df = df.groupby("_g", sort=True).head(limit)
    return df[PROBLEM_COLUMNS].reset_index(drop=True)


# --------------------------------------------------------------------------- equilibrium play
EQUILIBRIUM_PROPERTIES = ("seat_fairness", "length", "draws", "round_cap")


def equilibrium_rows(summary: dict, thresholds: dict) -> pd.DataFrame:
    """The verdicts under equilibrium play against the game's targets: one row
    per property of :data:`EQUILIBRIUM_PROPERTIES` (the columns of
    :func:`assess`), from ``summary["play"]`` (:func:`balance.equilibrium.play`:
    both seats drawing from the equilibrium mixture, each figure's 95%
    interval clustered by deal). The status is :func:`status`'s three
    outcomes, the same rule as the scripted field's verdicts."""
    th = thresholds
    pl = summary.get("play") or {}
    games, deals = int(pl.get("games") or 0), int(pl.get("deals") or 0)
    rules = str(summary.get("rules") or "base")
    field = "equilibrium play"
    n_text = f"n={fmt_int(games)} games on {fmt_int(deals)} deals"

    def fig(key: str) -> tuple[float, float, float]:
        d = pl.get(key) or {}
        vals = [d.get("mean"), d.get("lo"), d.get("hi")]
        return tuple(_NAN if v is None else float(v) for v in vals)  # type: ignore[return-value]

    rows = []
    lo_t, hi_t = th["seat_share_min"], th["seat_share_max"]
    v, lo, hi = fig("seat_share")
    s = status(lo, hi, lo_t, hi_t)
    # the share is of decided games: say how many there were (Tosk's equilibrium draws
    # 99% of its games, so its seat share rests on a few dozen, not on every game)
    drawn = (pl.get("draws") or {}).get("mean")
    seat_n = (
        f"{n_text}, about {fmt_int(round(games * (1 - float(drawn))))} of them decided"
        if drawn is not None and np.isfinite(float(drawn))
        else n_text
    )
    detail = (
        f"the first seat wins {_pct_ci(v, lo, hi)} of decided games, a seat advantage of "
        f"{200 * v - 100:+.1f} points ({seat_n}; target {_range_text(lo_t, hi_t)})"
        if np.isfinite(v)
        else f"not measured: no decided games ({n_text})"
    )
    rows.append(
        _row(
            rules,
            "seat_fairness",
            v,
            lo,
            hi,
            games,
            f"{_range_text(lo_t, hi_t)} of decided games",
            s,
            detail,
            _excess(v, lo_t, hi_t),
            field,
            lo_t,
            hi_t,
        )
    )
    r_lo, r_hi = th["rounds_min"], th["rounds_max"]
    v, lo, hi = fig("rounds")
    s = status(lo, hi, r_lo, r_hi)
    detail = (
        f"games last {v:.1f} rounds [{lo:.1f}, {hi:.1f}] on average ({n_text}; target "
        f"{r_lo}–{r_hi})"
        if np.isfinite(v)
        else f"not measured: no game lengths ({n_text})"
    )
    bound = r_lo if np.isfinite(v) and v < r_lo else r_hi
    rows.append(
        _row(
            rules,
            "length",
            v,
            lo,
            hi,
            games,
            f"{r_lo}–{r_hi} rounds on average",
            s,
            detail,
            _excess(v, r_lo, r_hi, scale=bound),
            field,
            r_lo,
            r_hi,
        )
    )
    for prop, key, what, mxk in (
        ("draws", "draws", "are drawn", "draw_rate_max"),
        ("round_cap", "round_cap", "end at the round cap", "round_cap_max"),
    ):
        mx = th[mxk]
        v, lo, hi = fig(key)
        s = status(lo, hi, None, mx)
        detail = f"{_pct_ci(v, lo, hi)} of games {what} ({n_text}; target at most {100 * mx:g}%)"
        rows.append(
            _row(
                rules,
                prop,
                v,
                lo,
                hi,
                games,
                f"at most {100 * mx:g}% of games",
                s,
                detail,
                _excess(v, None, mx),
                field,
                None,
                mx,
            )
        )
    return pd.DataFrame(rows, columns=COLUMNS)


def field_strategies(runs: dict, strategies: list[str], thresholds: dict) -> list[str]:
    """The scripted field the verdict judges (:func:`assess`): the strategies
    played, less the baselines (``random``), unless fewer than two remain."""
    played = [s for s in strategies if any(s in (a, b) for (_, a, b) in runs)]
    field = [s for s in played if not _is_baseline(s, thresholds["baselines"])]
    return field if len(field) >= 2 else played


def _best_script(runs: dict, variant: str, field: list[str]) -> str | None:
    from balance import tables as tmod

    sub = {k: r for k, r in runs.items() if k[0] == variant and k[1] in field and k[2] in field}
    st = tmod.strategy_table(sub, [variant], field)
    if not len(st):
        return None
    return str(st.sort_values("score", ascending=False).iloc[0]["strategy"])


def versus_base_scripted(
    runs: dict,
    variants: list[str],
    strategies: list[str],
    thresholds: dict,
    assessment: pd.DataFrame | None = None,
    tables: dict | None = None,
    base: str | None = None,
) -> list[dict]:
    """Each ruleset against base under the scripted field, property by property
    of the verdict (:func:`assess`), by :func:`balance.versus.versus_base`.

    The best script's score (``dominance``) is differenced *paired* on the
    same deals when the same script is best under both rulesets: its score
    under the ruleset minus under base, deal by deal over the matches of the
    field (:func:`balance.tables.variant_diffs`, cluster-robust by deal). Every
    other property but diversity (and a best script that changed) takes
    ``SE = sqrt(se_base² + se_other²)`` from the two intervals; both rulesets
    play the same seeds, so the results are positively correlated and this
    SE is the larger, conservative one. Diversity (a count of strategies with
    bootstrap bounds) takes the interval of every difference the two ranges
    allow, ``[lo_other − hi_base, hi_other − lo_base]``: a change is shown only
    when the ranges are apart (it covers whenever both ranges do: at least
    90% by the union bound).

    Returns ``[{"rules", "base", "rows", "line"}...]``, one per ruleset other
    than ``base`` (by default :func:`balance.versus.base_index`; a sweep
    names the point with the unchanged rules), ``rows`` as
    :func:`balance.versus.versus_base` gives them plus ``label``, ``paired``,
    ``interval`` (``"paired"``, ``"independent"`` or ``"ranges"``) and ``strategy`` (the best script under base and under the ruleset)."""
    from balance import tables as tmod
    from balance import versus
    from balance.versus import base_index

    th = thresholds
    a = assessment if assessment is not None else assess(runs, variants, strategies, th, tables)
    names = [v for v in variants if (a["variant"] == v).any()]
    if len(names) < 2:
        return []
    if base is None:
        base = names[base_index(names)]
    elif base not in names:
        return []
    field = field_strategies(runs, strategies, th)
    targets = {
        "seat_fairness": (th["seat_share_min"], th["seat_share_max"]),
        "dominance": (None, th["best_score_max"]),
        "diversity": (th["nash_support_min"], None),
        "length": (th["rounds_min"], th["rounds_max"]),
        "draws": (None, th["draw_rate_max"]),
        "round_cap": (None, th["round_cap_max"]),
    }

    def figure(v: str, prop: str) -> dict | None:
        r = a[(a["variant"] == v) & (a["property"] == prop)]
        if not len(r):
            return None
        r = r.iloc[0]
        return {
            "value": float(r["value"]),
            "lo": float(r["lo"]),
            "hi": float(r["hi"]),
            "n": int(r["n"]),
        }

    best_base = _best_script(runs, base, field)
    out = []
    for v in names:
        if v == base:
            continue
        best = _best_script(runs, v, field)
        rows = []
        for prop, target in targets.items():
            fb, fo = figure(base, prop), figure(v, prop)
            if fb is None or fo is None:
                continue
            diff = None
            if prop == "dominance" and best is not None and best == best_base:
                sub = {
                    k: r
                    for k, r in runs.items()
                    if k[0] in (base, v) and k[1] in field and k[2] in field
                }
                d = tmod.variant_diffs(sub, [base, v], [best], base=base)
                if len(d) and np.isfinite(d["diff_lo"].iloc[0]):
                    x = d.iloc[0]
                    diff = {
                        "mean": float(x["diff"]),
                        "lo": float(x["diff_lo"]),
                        "hi": float(x["diff_hi"]),
                    }
                    diff_n = int(x["n_pairs"])
            how = "paired" if diff is not None else "independent"
            if prop == "diversity" and all(np.isfinite([fb["lo"], fb["hi"], fo["lo"], fo["hi"]])):
                # a count with bootstrap bounds, not a mean: the normal SE of a
                # range of whole numbers would call two equal ranges different.
                # Interval arithmetic instead: shown only when the ranges are apart
                diff = {
                    "mean": fo["value"] - fb["value"],
                    "lo": fo["lo"] - fb["hi"],
                    "hi": fo["hi"] - fb["lo"],
                }
                how = "ranges"
            r = versus.versus_base(prop, fb, fo, target, diff=diff)
            r.update(label=LABELS[prop], paired=how == "paired", interval=how)
            if how == "paired":
                r["diff_n"] = diff_n
            if prop == "dominance":
                r["strategy"] = [best_base, best]
            rows.append(r)
        out.append(
            {
                "rules": v,
                "base": base,
                "rows": rows,
                "line": versus.ruleset_line(v, rows, base, "(scripted field)"),
            }
        )
    return out
