"""Statistics of a histogram (values and how often each was seen) without
expanding it: mean and standard deviation, quantiles, and the mean with a
normal confidence interval.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from balance.stats.normal import z_crit

# ---------------------------------------------------------------------------
# Histograms
# ---------------------------------------------------------------------------


def _hist(values: ArrayLike, counts: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    v = np.asarray(values, dtype=float).ravel()
    c = np.asarray(counts, dtype=float).ravel()
    if v.shape != c.shape:
        raise ValueError(f"values and counts differ in length: {v.size} vs {c.size}")
    if np.any(c < 0):
        raise ValueError("histogram counts must be non-negative")
    return v, c


def mean_sd_from_hist(values: ArrayLike, counts: ArrayLike) -> tuple[float, float]:
    """Weighted mean and population standard deviation of a histogram.

    Parameters
    ----------
    values : array_like
        Bin values (e.g. game length in rounds).
    counts : array_like
        Number of observations at each value.

    Returns
    -------
    mean, sd : float
        Equal to ``np.mean`` and ``np.std`` (``ddof=0``) of the expanded
        sample; ``nan`` for an empty histogram.
    """
    v, c = _hist(values, counts)
    total = c.sum()
    if total == 0:
        return float("nan"), float("nan")
    mean = float(np.dot(c, v) / total)
    var = float(np.dot(c, (v - mean) ** 2) / total)
    return mean, math.sqrt(max(var, 0.0))


def quantile_from_hist(values: ArrayLike, counts: ArrayLike, q: ArrayLike) -> Any:
    """Quantile of a histogram (inverted empirical CDF).

    Parameters
    ----------
    values : array_like
        Bin values, any order.
    counts : array_like
        Number of observations at each value.
    q : float or array_like
        Probabilities in ``[0, 1]``.

    Returns
    -------
    float or ndarray
        The smallest value ``v`` whose cumulative share ``F(v) >= q`` (for
        ``q == 0`` the smallest observed value), which is
        ``np.quantile(expanded, q, method="inverted_cdf")``. ``nan`` for an
        empty histogram.
    """
    v, c = _hist(values, counts)
    qa = np.asarray(q, dtype=float)
    if np.any(qa < 0) or np.any(qa > 1):
        raise ValueError("q must be in [0, 1]")
    keep = c > 0
    v, c = v[keep], c[keep]
    if c.size == 0:
        out = np.full(qa.shape, np.nan)
    else:
        order = np.argsort(v, kind="stable")
        v, c = v[order], c[order]
        cum = np.cumsum(c)
        total = cum[-1]
        # smallest index i with cum[i] >= q * total; q == 0 -> first bin
        idx = np.searchsorted(cum, qa * total, side="left")
        idx = np.clip(idx, 0, v.size - 1)
        out = v[idx]
    if out.ndim == 0:
        return float(out)
    return out


def hist_mean_ci(values: ArrayLike, counts: ArrayLike, alpha: float = 0.05) -> dict[str, Any]:
    """Mean of a histogram with a normal confidence interval.

    Parameters
    ----------
    values, counts : array_like
        Bin values and the number of observations at each.
    alpha : float, default 0.05
        Two-sided level.

    Returns
    -------
    dict
        ``mean``; ``sd`` (sample sd, ``ddof=1``, of the expanded sample);
        ``lo``, ``hi`` = ``mean ± z·sd/sqrt(n)``; ``n`` (total count). ``nan``
        when empty; ``sd``, ``lo``, ``hi`` are ``nan`` when ``n <= 1``.
    """
    z = z_crit(alpha)
    mean, sd0 = mean_sd_from_hist(values, counts)
    n_f = float(np.asarray(counts, dtype=float).sum())
    n: float | int = int(n_f) if n_f == int(n_f) else n_f
    nan = float("nan")
    if n_f <= 1.0:
        return {"mean": mean, "sd": nan, "lo": nan, "hi": nan, "n": n}
    sd = sd0 * math.sqrt(n_f / (n_f - 1.0))
    half = z * sd / math.sqrt(n_f)
    return {"mean": mean, "sd": sd, "lo": mean - half, "hi": mean + half, "n": n}
