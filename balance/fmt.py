"""Formatting numbers for terminals and pages: every figure with its CI and n.

The one place numbers become text, so the CLI, the verdicts and the report
read the same way: ``fmt_pct_ci(0.523, 0.513, 0.533, 9604) ==
"52.3% [51.3, 53.3] n=9,604"``.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

from balance.stats import wilson

MISSING = "—"
_Z = 1.959963984540054


def _missing(x: Any) -> bool:
    if x is None:
        return True
    if isinstance(x, (float, np.floating)):
        return math.isnan(x)
    pd = sys.modules.get("pandas")  # pd.NA and NaT exist only once pandas is loaded
    if pd is None:
        return False
    try:
        return bool(pd.isna(x))
    except (TypeError, ValueError):
        return False


def fmt_int(n: Any) -> str:
    """``9604 -> "9,604"``; missing -> "—"."""
    if _missing(n):
        return MISSING
    return f"{int(round(float(n))):,}"


def fmt_n(n: Any, label: str = "") -> str:
    """``9604 -> "n=9,604"`` (``label`` appended: ``"n=500 pairs"``); missing -> ""."""
    if _missing(n):
        return ""
    return f"n={fmt_int(n)}" + (f" {label}" if label else "")


def _pct_digits(*values: Any) -> int:
    """Two decimals for small rates (draws, timeouts), one otherwise."""
    vals = [abs(float(v)) for v in values if not _missing(v)]
    return 2 if vals and max(vals) < 0.05 else 1


def _num(v: float, digits: int) -> str:
    s = f"{v:.{digits}f}"
    return s[1:] if s.startswith("-") and float(s) == 0 else s


def fmt_pct(x: Any, digits: int | None = None) -> str:
    """``0.523 -> "52.3%"``; missing -> "—"."""
    if _missing(x):
        return MISSING
    d = _pct_digits(x) if digits is None else digits
    return f"{_num(float(x) * 100, d)}%"


def fmt_pct_ci(x: Any, lo: Any, hi: Any, n: Any = None, digits: int | None = None) -> str:
    """A proportion with its 95% CI and n: ``"52.3% [51.3, 53.3] n=9,604"``."""
    if _missing(x):
        return MISSING
    d = _pct_digits(x, hi) if digits is None else digits
    out = fmt_pct(x, d)
    if not (_missing(lo) or _missing(hi)):
        out += f" [{_num(float(lo) * 100, d)}, {_num(float(hi) * 100, d)}]"
    if not _missing(n):
        out += f" {fmt_n(n)}"
    return out


def _signed(v: float, digits: int) -> str:
    r = round(v, digits)
    return _num(0.0, digits) if r == 0 else f"{r:+.{digits}f}"


def fmt_pp(d: Any, digits: int = 1) -> str:
    """A difference of fractions in percentage points: ``0.012 -> "+1.2 pp"``."""
    if _missing(d):
        return MISSING
    return f"{_signed(float(d) * 100, digits)} pp"


def fmt_pp_ci(d: Any, lo: Any, hi: Any, n: Any = None, digits: int = 1) -> str:
    """``"+1.2 pp [+0.3, +2.1] n=500"`` for a difference of fractions."""
    if _missing(d):
        return MISSING
    out = fmt_pp(d, digits)
    if not (_missing(lo) or _missing(hi)):
        out += f" [{_signed(float(lo) * 100, digits)}, {_signed(float(hi) * 100, digits)}]"
    if not _missing(n):
        out += f" {fmt_n(n)}"
    return out


def mean_ci(mean: Any, sd: Any, n: Any) -> tuple[float, float]:
    """Normal 95% CI of a mean from its sd and n."""
    if _missing(mean) or _missing(sd) or _missing(n) or float(n) <= 0:
        return (math.nan, math.nan)
    h = _Z * float(sd) / math.sqrt(float(n))
    return (float(mean) - h, float(mean) + h)


def fmt_mean_ci(mean: Any, sd: Any, n: Any, digits: int = 1) -> str:
    """A mean with its 95% CI, sd and n: ``"12.3 [12.3, 12.4] sd 4.0 n=10,000"``."""
    if _missing(mean):
        return MISSING
    out = _num(float(mean), digits)
    lo, hi = mean_ci(mean, sd, n)
    if not math.isnan(lo):
        out += f" [{_num(lo, digits)}, {_num(hi, digits)}]"
    if not _missing(sd):
        out += f" sd {_num(float(sd), digits)}"
    if not _missing(n):
        out += f" {fmt_n(n)}"
    return out


def fmt_p(p: Any) -> str:
    """``0.0004 -> "<0.001"``, ``0.0123 -> "0.012"``, ``0.5 -> "0.50"``."""
    if _missing(p):
        return MISSING
    p = float(p)
    if p < 0.001:
        return "<0.001"
    if p < 0.1:
        return f"{p:.3f}"
    return f"{min(p, 1.0):.2f}"


def fmt_games_needed(g: Any) -> str:
    """Games for the stronger side to lead with 95% probability; "—" if not reached."""
    return MISSING if _missing(g) else fmt_int(g)


def fmt_seconds(s: Any) -> str:
    """``3.456 -> "3.5 s"``, ``125 -> "2 min 5 s"``, ``7300 -> "2 h 1 min"``."""
    if _missing(s):
        return MISSING
    s = float(s)
    if s < 60:
        return f"{s:.1f} s"
    if s < 3600:
        return f"{int(s // 60)} min {int(round(s % 60))} s"
    return f"{int(s // 3600)} h {int(round((s % 3600) / 60))} min"


def wilson_ci(k: Any, n: Any) -> tuple[float, float]:
    """95% Wilson score interval for k successes in n trials."""
    if _missing(k) or _missing(n) or float(n) <= 0:
        return (math.nan, math.nan)

    lo, hi = wilson(float(k), float(n))
    return (float(lo), float(hi))


def fmt_num(x: Any, digits: int = 1) -> str:
    """``3.14159 -> "3.1"``; missing -> "—"."""
    return MISSING if _missing(x) else _num(float(x), digits)


def shorten(text: Any, limit: int = 40) -> str:
    """``text`` cut to ``limit`` characters, an ellipsis marking the cut."""
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"
