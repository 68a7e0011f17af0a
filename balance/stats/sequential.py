"""Sequential tests: the generalized SPRT as in Fishtest.

The log-likelihood ratio of a discrete outcome distribution between two
means, Wald's stopping bounds, the histogram of paired half-point
differences between two conditions, the two-sided test of whether a
condition moves the score, and the one-sided test on pentanomial counts.

References: Fishtest ``server/fishtest/stats/`` (GSPRT). Wald, A. (1945),
"Sequential tests of statistical hypotheses".
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from balance.stats.normal import z_crit
from balance.stats.pentanomial import PAIR_SCORE, check_counts, pentanomial_counts

# ---------------------------------------------------------------------------
# Sequential tests (generalized SPRT, as in Fishtest)
# ---------------------------------------------------------------------------


def _max_dual(phat: np.ndarray, d: np.ndarray) -> float:
    """``KL(phat || p_mu)`` for the MLE ``p_mu`` with mean ``mu`` (``d = values - mu``).

    Maximises the concave dual ``g(lam) = sum_obs phat_i log(1 + lam d_i)`` over
    the ``lam`` that keep ``1 + lam d_j >= 0`` for *every* bin ``j`` (observed or
    not). Needs ``min(d) < 0 < max(d)``.
    """
    dmin, dmax = float(d.min()), float(d.max())
    lo, hi = -1.0 / dmax, -1.0 / dmin
    obs = phat > 0
    po, do = phat[obs], d[obs]

    def gp(lam: float) -> float:  # g'(lam), strictly decreasing
        return float((po * do / (1.0 + lam * do)).sum())

    lo_open = bool(do.max() == dmax)  # an observed bin sits at the boundary: g' -> +inf
    hi_open = bool(do.min() == dmin)  # g' -> -inf
    if not lo_open and gp(lo) <= 0.0:
        lam = lo  # optimum on the boundary: the MLE puts mass on the empty top bin
    elif not hi_open and gp(hi) >= 0.0:
        lam = hi
    else:
        width = hi - lo
        a, b = lo, hi
        if lo_open:
            for t in 10.0 ** -np.arange(2, 17, 2):
                a = lo + t * width
                if gp(a) > 0.0:
                    break
        if hi_open:
            for t in 10.0 ** -np.arange(2, 17, 2):
                b = hi - t * width
                if gp(b) < 0.0:
                    break
        fa, fb = gp(a), gp(b)
        if fa <= 0.0:
            lam = a
        elif fb >= 0.0:
            lam = b
        else:
            from scipy import optimize as _spo  # here, not at import: slow to import

            lam = _spo.brentq(gp, a, b, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)
    return float(np.sum(po * np.log1p(lam * do)))


def gsprt_llr(counts: ArrayLike, values: ArrayLike, mu0: float, mu1: float) -> float:
    """Generalized SPRT log-likelihood ratio for a discrete outcome distribution.

    Parameters
    ----------
    counts : array_like
        Number of observations in each bin (non-negative, may be fractional).
    values : array_like
        Value of each bin (same length as ``counts``); the support of the model.
    mu0, mu1 : float
        Means under H0 and H1; each must lie strictly between ``min(values)``
        and ``max(values)``.

    Returns
    -------
    float
        ``N · sum_i p̂_i log(p1_i / p0_i)`` where ``p̂ = counts / N`` and ``p_k``
        is the maximum-likelihood distribution on ``values`` with mean
        ``mu_k``. Positive favours H1. ``0.0`` when ``N == 0``.

    Notes
    -----
    As Fishtest's ``LLRcalc``: ``p_i = p̂_i / (1 + λ(values_i − mu))`` with ``λ``
    the root (brentq) of ``sum p̂_i (values_i − mu) / (1 + λ(values_i − mu)) = 0``.
    The valid interval for ``λ`` keeps ``1 + λ(values_j − mu) >= 0`` for every
    bin, empty ones included. When ``mu`` lies outside the range of the
    *observed* values (e.g. only one bin seen so far) the root falls outside
    that interval; the MLE then puts the missing mass on the empty extreme bin
    and ``λ`` sits on the boundary. This is the exact constrained MLE over all
    bins, i.e. the limit of Fishtest's regularisation (empty bins set to
    ``1e-3``) as the pseudo-count goes to 0. A ``mu`` on or outside
    ``[min(values), max(values)]`` raises ``ValueError`` (no distribution on the
    support has that mean, or only a point mass).
    """
    c = np.asarray(counts, dtype=float).ravel()
    v = np.asarray(values, dtype=float).ravel()
    if c.shape != v.shape:
        raise ValueError(f"counts and values differ in length: {c.size} vs {v.size}")
    if np.any(c < 0) or not np.all(np.isfinite(c)) or not np.all(np.isfinite(v)):
        raise ValueError("counts must be finite and non-negative, values finite")
    if v.size == 0:
        return 0.0
    vmin, vmax = float(v.min()), float(v.max())
    for mu in (mu0, mu1):
        if not vmin < mu < vmax:
            raise ValueError(f"mu={mu!r} must lie strictly inside ({vmin}, {vmax})")
    n = float(c.sum())
    if n == 0.0 or mu0 == mu1:
        return 0.0
    phat = c / n
    kl0 = _max_dual(phat, v - mu0)
    kl1 = _max_dual(phat, v - mu1)
    return n * (kl0 - kl1)


def sprt_bounds(alpha: float = 0.05, beta: float = 0.05) -> tuple[float, float]:
    """Wald's stopping bounds for the log-likelihood ratio.

    Parameters
    ----------
    alpha, beta : float, default 0.05
        Type I and type II error rates, each in ``(0, 1)``.

    Returns
    -------
    lower, upper : float
        ``(ln(beta / (1 - alpha)), ln((1 - beta) / alpha))``; ``±2.944`` at
        ``alpha = beta = 0.05``. Accept H0 at or below ``lower``, H1 at or
        above ``upper``.
    """
    if not (0.0 < alpha < 1.0 and 0.0 < beta < 1.0):
        raise ValueError(f"alpha and beta must be in (0, 1), got {alpha!r}, {beta!r}")
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


#: Per-game score difference B − A of a seat-swapped pair, indexed by
#: ``(points_b − points_a) + 4`` (half-point codes), i.e. ``-1, -0.75, ..., 1``.
PAIR_DIFF_VALUES: np.ndarray = np.arange(-4, 5) / 4.0


def pair_diff_counts(points_a: ArrayLike, points_b: ArrayLike) -> np.ndarray:
    """Histogram of paired half-point differences between two conditions.

    Parameters
    ----------
    points_a, points_b : array_like of int
        Half-point codes ``0..4`` of the same deals, in the same order, under
        condition A and condition B.

    Returns
    -------
    ndarray of int64, shape (9,)
        ``counts[k]`` = number of deals with ``points_b − points_a == k − 4``;
        the matching per-game score difference is ``PAIR_DIFF_VALUES[k]``.
    """
    a = np.asarray(points_a)
    b = np.asarray(points_b)
    if a.shape != b.shape:
        raise ValueError(f"points_a and points_b differ in shape: {a.shape} vs {b.shape}")
    pentanomial_counts(a)  # validates the codes
    pentanomial_counts(b)
    if a.size == 0:
        return np.zeros(9, dtype=np.int64)
    k = b.ravel().astype(np.int64) - a.ravel().astype(np.int64) + 4
    return np.bincount(k, minlength=9).astype(np.int64)


def sprt_pair_diff(
    counts9: ArrayLike, delta: float, alpha: float = 0.05, beta: float = 0.05
) -> dict[str, Any]:
    """Two-sided sequential test: does B move the per-game score by at least ``delta``?

    Parameters
    ----------
    counts9 : array_like, shape (9,)
        Paired difference counts from :func:`pair_diff_counts`.
    delta : float
        Smallest change worth detecting, as a per-game score fraction in
        ``(0, 1)`` (0.02 = two percentage points).
    alpha, beta : float, default 0.05
        Overall type I error (split ``alpha / 2`` per side) and type II error.

    Returns
    -------
    dict
        ``llr_up`` = :func:`gsprt_llr` of H0 "mean 0" vs H1 "mean +delta";
        ``llr_down`` likewise for ``-delta``; ``lower``, ``upper`` =
        ``sprt_bounds(alpha / 2, beta)``; ``decision``: ``"raises"`` if
        ``llr_up >= upper``, ``"lowers"`` if ``llr_down >= upper``,
        ``"no change"`` if both ``<= lower``, else ``"continue"``;
        ``n_pairs``; ``diff`` (mean per-game difference B − A), ``se``
        (sample sd with ``ddof=1`` over ``sqrt(n)``), ``lo``, ``hi`` (normal
        95% interval). With no pairs: LLRs 0, ``"continue"``, ``nan`` estimates.

    Notes
    -----
    ``"raises"`` and ``"lowers"`` cannot both hold: the KL divergence to the
    mean-``mu`` family is convex in ``mu``, so ``KL(0)`` cannot exceed both
    ``KL(+delta)`` and ``KL(-delta)``.
    """
    c = np.asarray(counts9, dtype=float)
    if c.shape != (9,):
        raise ValueError(f"paired difference counts must have shape (9,), got {c.shape}")
    if np.any(c < 0):
        raise ValueError("counts must be non-negative")
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    lower, upper = sprt_bounds(alpha / 2.0, beta)
    llr_up = gsprt_llr(c, PAIR_DIFF_VALUES, 0.0, delta)
    llr_down = gsprt_llr(c, PAIR_DIFF_VALUES, 0.0, -delta)
    if llr_up >= upper:
        decision = "raises"
    elif llr_down >= upper:
        decision = "lowers"
    elif llr_up <= lower and llr_down <= lower:
        decision = "no change"
    else:
        decision = "continue"
    n = float(c.sum())
    nan = float("nan")
    diff = se = lo = hi = nan
    if n > 0:
        diff = float(np.dot(c, PAIR_DIFF_VALUES) / n)
        if n > 1:
            ss = float(np.dot(c, (PAIR_DIFF_VALUES - diff) ** 2))
            se = math.sqrt(max(ss, 0.0) / (n - 1.0) / n)
            z = z_crit(0.05)
            lo, hi = diff - z * se, diff + z * se
    return {
        "llr_up": llr_up,
        "llr_down": llr_down,
        "lower": lower,
        "upper": upper,
        "decision": decision,
        "n_pairs": int(round(n)),
        "diff": diff,
        "se": se,
        "lo": lo,
        "hi": hi,
    }


def sprt_pentanomial(
    counts5: ArrayLike, s0: float, s1: float, alpha: float = 0.05, beta: float = 0.05
) -> dict[str, Any]:
    """One-sided GSPRT on pentanomial pair counts (Fishtest).

    Parameters
    ----------
    counts5 : array_like, shape (5,)
        Pentanomial counts (see :func:`pentanomial_counts`).
    s0, s1 : float
        Per-game score of side A under H0 and H1, each in ``(0, 1)``
        (convert from Elo with the logistic curve if needed).
    alpha, beta : float, default 0.05
        Type I and type II error rates.

    Returns
    -------
    dict
        ``llr`` (:func:`gsprt_llr` on the pair scores ``PAIR_POINTS / 2``),
        ``lower``, ``upper`` (:func:`sprt_bounds`), ``decision``: ``"H1"`` if
        ``llr >= upper``, ``"H0"`` if ``llr <= lower``, else ``"continue"``;
        ``n_pairs``; ``score`` (mean per-game score, ``nan`` with no pairs).
    """
    c = check_counts(counts5)
    lower, upper = sprt_bounds(alpha, beta)
    llr = gsprt_llr(c, PAIR_SCORE, s0, s1)
    if llr >= upper:
        decision = "H1"
    elif llr <= lower:
        decision = "H0"
    else:
        decision = "continue"
    n = float(c.sum())
    score = float(np.dot(c, PAIR_SCORE) / n) if n > 0 else float("nan")
    return {
        "llr": llr,
        "lower": lower,
        "upper": upper,
        "decision": decision,
        "n_pairs": int(round(n)),
        "score": score,
    }
