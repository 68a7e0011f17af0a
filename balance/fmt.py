"""Formatting numbers for terminals and pages: every figure with its CI and n."""

from __future__ import annotations

import math


def _nan(x) -> bool:
    try:
        return x is None or math.isnan(float(x))
    except (TypeError, ValueError):
        return False


def pct(x, digits: int = 1) -> str:
    return "—" if _nan(x) else f"{100 * float(x):.{digits}f}%"


def pct_ci(x, lo, hi, digits: int = 1) -> str:
    """``52.3% [51.3, 53.3]``"""
    if _nan(x):
        return "—"
    return f"{100 * x:.{digits}f}% [{100 * lo:.{digits}f}, {100 * hi:.{digits}f}]"


def pts_ci(x, lo, hi, digits: int = 1) -> str:
    """A difference in percentage points: ``+4.1 pts [3.6, 4.6]``"""
    if _nan(x):
        return "—"
    return f"{100 * x:+.{digits}f} pts [{100 * lo:+.{digits}f}, {100 * hi:+.{digits}f}]"


def num(x, digits: int = 1) -> str:
    return "—" if _nan(x) else f"{x:.{digits}f}"


def count(n) -> str:
    return "—" if _nan(n) else f"{int(n):,}"


def pval(p) -> str:
    if _nan(p):
        return "—"
    return "<1e-300" if p == 0 else (f"{p:.2g}" if p < 0.001 else f"{p:.3f}")
