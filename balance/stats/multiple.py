"""Corrections for many tests at once: Holm's step-down procedure (familywise
error rate) and Benjamini-Hochberg's step-up procedure (false discovery
rate), with ``nan`` p-values left out of the family (Holm by hand, BH through
statsmodels);
and a simultaneous interval for the largest (or smallest) of several estimates.

References: Holm, S. (1979), "A simple sequentially rejective multiple test
procedure". Benjamini, Y. & Hochberg, Y. (1995), "Controlling the false
discovery rate".
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from balance.stats.normal import z_crit

# ---------------------------------------------------------------------------
# Multiple comparisons
# ---------------------------------------------------------------------------


def _family(pvals: ArrayLike, alpha: float, correct) -> tuple[np.ndarray, np.ndarray]:
    """``correct(p)`` -> (reject, p_adj) over the non-nan p-values of ``pvals``;
    a nan is left out of the family, comes back nan and is never rejected."""
    z_crit(alpha)
    p = np.asarray(pvals, dtype=float)
    shape = p.shape
    p = p.ravel()
    reject = np.zeros(p.shape, dtype=bool)
    p_adj = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    if np.any(ok):
        reject[ok], p_adj[ok] = correct(p[ok])
    return reject.reshape(shape), p_adj.reshape(shape)


def _multitest(pvals: ArrayLike, alpha: float, method: str) -> tuple[np.ndarray, np.ndarray]:
    def correct(p):
        from statsmodels.stats.multitest import multipletests  # slow to import: here

        r, pa, _, _ = multipletests(p, alpha=alpha, method=method)
        return r, pa

    return _family(pvals, alpha, correct)


def _holm_step_down(p: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(p, kind="mergesort")
    ps = p[order]
    steps = np.arange(ps.size, 0, -1)
    # step-down: reject the smallest p-values up to the first above alpha/(m - i)
    above = np.flatnonzero(ps > alpha / steps)
    k = int(above[0]) if above.size else ps.size
    reject = np.zeros(p.shape, dtype=bool)
    reject[order[:k]] = True
    p_adj = np.empty(p.shape)
    p_adj[order] = np.minimum(np.maximum.accumulate(ps * steps), 1.0)
    return reject, p_adj


def holm(pvals: ArrayLike, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Holm step-down correction (familywise error rate).

    Parameters
    ----------
    pvals : array_like
        Raw p-values; ``nan`` entries are ignored (not counted in the family),
        come back as ``nan`` and are never rejected.
    alpha : float, default 0.05
        Familywise level.

    Returns
    -------
    reject : ndarray of bool
    p_adj : ndarray of float
        Holm-adjusted p-values (as statsmodels ``multipletests(method="holm")``
        gives them, which the tests check).
    """
    # by hand, not through statsmodels: its Holm branch calls gc.collect() on every
    # call, 0.03-0.4 s in a process holding many objects (a study, the test suite),
    # and the toolkit runs Holm per look, per page section and per simulated family
    return _family(pvals, alpha, lambda p: _holm_step_down(p, alpha))


def bh(pvals: ArrayLike, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Benjamini–Hochberg step-up correction (false discovery rate).

    Parameters
    ----------
    pvals : array_like
        Raw p-values; ``nan`` entries are ignored (not counted in the family),
        come back as ``nan`` and are never rejected.
    alpha : float, default 0.05
        False discovery rate.

    Returns
    -------
    reject : ndarray of bool
    p_adj : ndarray of float
        BH-adjusted p-values (statsmodels ``multipletests(method="fdr_bh")``).
    """
    return _multitest(pvals, alpha, "fdr_bh")


def widen(
    value: float,
    lo: float,
    hi: float,
    looks: int,
    alpha: float = 0.05,
    bounds: tuple[float, float] | None = None,
):
    """``(value, lo, hi)``, a two-sided 1 − ``alpha`` interval, widened to
    1 − ``alpha``/``looks`` (Bonferroni over ``looks`` intervals),
    proportionally on each side so an asymmetric interval keeps its shape.

    ``bounds`` (lo, hi): the range the quantity cannot leave (a share or a
    score: (0, 1); a difference of two: (-1, 1)); the widened ends are cut to
    it, which costs no coverage since the truth lies inside. Without it a
    share's widened interval could reach below 0 or above 1."""
    f = z_crit(alpha / looks) / z_crit(alpha)
    w_lo, w_hi = value - (value - lo) * f, value + (hi - value) * f
    if bounds is not None:
        b0, b1 = bounds
        if b0 is not None:
            w_lo = max(float(b0), w_lo)
        if b1 is not None:
            w_hi = min(float(b1), w_hi)
    return value, w_lo, w_hi


def extreme_interval(
    items,
    which: str = "max",
    alpha: float = 0.05,
    bounds: tuple[float, float] | None = None,
) -> tuple[float, float, float]:
    """The largest (``which="max"``) or smallest of K estimates, each given as
    ``(value, lo, hi)`` with its own two-sided 1 − ``alpha`` interval, and an
    interval for the true extreme: each item's interval is widened to
    1 − ``alpha``/K (Bonferroni, proportionally on each side, so an
    asymmetric interval keeps its shape; cut to ``bounds`` where the items
    are shares or scores: :func:`widen`), all K then hold together with
    probability at least 1 − ``alpha``, and the true extreme lies between the
    extremes of the widened ends. The naive interval (the winner's own) misses
    far more often than ``alpha`` (``tests/core/test_repair.py`` measures
    both). Items with a non-finite value are left out; none: all nan."""
    items = [(float(v), float(lo), float(hi)) for v, lo, hi in items if np.isfinite(v)]
    if not items:
        return (float("nan"),) * 3
    wide = [widen(v, lo, hi, len(items), alpha, bounds) for v, lo, hi in items]
    pick = max if which == "max" else min
    return tuple(pick(w[i] for w in wide) for i in range(3))
