"""Game-agnostic statistics for balance analysis.

Every figure the toolkit reports carries its uncertainty (see
``shared/METHODS.md``). This module holds the estimators and intervals used
throughout; it knows nothing about any particular game.

Conventions
-----------
* Scores are per-game scores in ``[0, 1]``: win = 1, draw = 1/2, loss = 0.
* Duplicate seating plays every deal twice with seats swapped. The outcome of
  one deal for side A is stored as an integer ``0..4``: the number of
  half-points A earned over the two games (0, 0.5, 1, 1.5 or 2 points). The
  five-bin histogram of these is the *pentanomial* count vector, as in
  Fishtest.
* Functions never emit numpy warnings for empty inputs; they return ``nan``.

References
----------
Wilson, E. B. (1927), "Probable inference, the law of succession, and
statistical inference", JASA 22.
Holm, S. (1979), "A simple sequentially rejective multiple test procedure".
Benjamini, Y. & Hochberg, Y. (1995), "Controlling the false discovery rate".
Fishtest ``server/fishtest/stats/`` (pentanomial model).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats as _sps
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

__all__ = [
    "PAIR_POINTS",
    "wilson",
    "pentanomial_counts",
    "pentanomial_score",
    "unpaired_score_se",
    "variance_reduction",
    "paired_diff",
    "paired_diff_from_points",
    "holm",
    "bh",
    "games_needed",
    "elo",
    "elo_interval",
    "mean_sd_from_hist",
    "quantile_from_hist",
    "win_rate_table_row",
]

#: Points for side A over a seat-swapped pair, indexed by the stored
#: half-point code 0..4 (0 = lost both, 2 = one win and one loss or two
#: draws, 4 = won both).
PAIR_POINTS: np.ndarray = np.array([0.0, 0.5, 1.0, 1.5, 2.0])

#: Per-game score of a pair (points / 2), indexed by the half-point code.
_PAIR_SCORE: np.ndarray = PAIR_POINTS / 2.0


@functools.lru_cache(maxsize=64)
def _z(alpha: float) -> float:
    """Two-sided normal critical value ``z_{1 - alpha/2}`` (cached: ppf is slow)."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    return float(_sps.norm.ppf(1.0 - alpha / 2.0))


# ---------------------------------------------------------------------------
# Proportions
# ---------------------------------------------------------------------------


def wilson(k: ArrayLike, n: ArrayLike, alpha: float = 0.05) -> tuple[Any, Any]:
    """Wilson score interval for a binomial proportion.

    Parameters
    ----------
    k : int or array_like
        Number of successes.
    n : int or array_like
        Number of trials (broadcast against ``k``).
    alpha : float, default 0.05
        Two-sided level; the interval has nominal coverage ``1 - alpha``.

    Returns
    -------
    lo, hi : float or ndarray
        Interval bounds in ``[0, 1]`` (exactly 0 at ``k == 0`` and exactly 1
        at ``k == n``). Entries with ``n == 0`` are
        ``nan``. Scalars in give floats out; arrays give arrays.

    Notes
    -----
    Computed with ``statsmodels.stats.proportion.proportion_confint``
    (``method="wilson"``). Closed form, with ``z = z_{1-alpha/2}`` and
    ``p = k/n``::

        (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)
    """
    _z(alpha)  # validates alpha
    k_arr = np.asarray(k, dtype=float)
    n_arr = np.asarray(n, dtype=float)
    scalar = k_arr.ndim == 0 and n_arr.ndim == 0
    k_arr, n_arr = np.broadcast_arrays(k_arr, n_arr)
    if np.any(n_arr < 0) or np.any(k_arr < 0) or np.any(k_arr > n_arr):
        raise ValueError("wilson needs 0 <= k <= n")
    lo = np.full(k_arr.shape, np.nan)
    hi = np.full(k_arr.shape, np.nan)
    ok = n_arr > 0
    if np.any(ok):
        l_ok, h_ok = proportion_confint(k_arr[ok], n_arr[ok], alpha=alpha, method="wilson")
        lo[ok] = np.clip(l_ok, 0.0, 1.0)
        hi[ok] = np.clip(h_ok, 0.0, 1.0)
        # exact endpoints of the closed form (statsmodels leaves ~1e-17 residue)
        lo[ok & (k_arr == 0)] = 0.0
        hi[ok & (k_arr == n_arr)] = 1.0
    if scalar:
        return float(lo), float(hi)
    return lo, hi


# ---------------------------------------------------------------------------
# Pentanomial (duplicate-seating) model
# ---------------------------------------------------------------------------


def pentanomial_counts(pair_points: ArrayLike) -> np.ndarray:
    """Histogram of pair outcomes.

    Parameters
    ----------
    pair_points : array_like of int
        Half-point codes ``0..4`` for side A, one per seat-swapped deal.

    Returns
    -------
    ndarray of int64, shape (5,)
        ``counts[j]`` = number of deals where A earned ``j`` half-points.

    Raises
    ------
    ValueError
        If any code is outside ``0..4`` or not an integer.
    """
    a = np.asarray(pair_points).ravel()
    if a.size == 0:
        return np.zeros(5, dtype=np.int64)
    if not np.all(np.isfinite(a)) or np.any(a != np.round(a)):
        raise ValueError("pair_points must be integers 0..4")
    a = a.astype(np.int64)
    if a.min() < 0 or a.max() > 4:
        raise ValueError("pair_points must be integers 0..4")
    return np.bincount(a, minlength=5).astype(np.int64)


def _check_counts(counts: ArrayLike) -> np.ndarray:
    c = np.asarray(counts, dtype=float)
    if c.shape != (5,):
        raise ValueError(f"pentanomial counts must have shape (5,), got {c.shape}")
    if np.any(c < 0):
        raise ValueError("pentanomial counts must be non-negative")
    return c


def pentanomial_score(counts: ArrayLike, alpha: float = 0.05) -> dict[str, float | int]:
    """Mean per-game score and its SE under the pentanomial model.

    Parameters
    ----------
    counts : array_like, shape (5,)
        Pentanomial counts (see :func:`pentanomial_counts`).
    alpha : float, default 0.05
        Two-sided level of the normal interval.

    Returns
    -------
    dict
        ``score``: mean per-game score of side A in ``[0, 1]``;
        ``se``: standard error, ``sd(s) / sqrt(n_pairs)`` where ``s_j =
        points_j / 2`` is the per-pair score and ``sd`` the count-weighted
        population standard deviation (as in Fishtest);
        ``lo``, ``hi``: ``score ± z·se`` clipped to ``[0, 1]``;
        ``n_pairs``; ``n_games`` (``2 * n_pairs``).
        With no pairs, the float entries are ``nan``.
    """
    c = _check_counts(counts)
    z = _z(alpha)
    n = float(c.sum())
    n_pairs = int(round(n))
    if n == 0:
        nan = float("nan")
        return {"score": nan, "se": nan, "lo": nan, "hi": nan, "n_pairs": 0, "n_games": 0}
    w = c / n
    mu = float(np.dot(w, _PAIR_SCORE))
    var = float(np.dot(w, (_PAIR_SCORE - mu) ** 2))
    se = math.sqrt(max(var, 0.0) / n)
    return {
        "score": mu,
        "se": se,
        "lo": max(0.0, mu - z * se),
        "hi": min(1.0, mu + z * se),
        "n_pairs": n_pairs,
        "n_games": 2 * n_pairs,
    }


def unpaired_score_se(counts: ArrayLike, draw_rate: float | None = None) -> float:
    """SE of the mean score if the ``2 * n_pairs`` games were independent.

    Parameters
    ----------
    counts : array_like, shape (5,)
        Pentanomial counts.
    draw_rate : float, optional
        Share of the ``2 * n_pairs`` games that were drawn, when the caller
        knows it. If omitted, the draws that the pair counts *prove* are used:
        every pair with code 1 or 3 holds exactly one draw, and code-2 pairs
        are taken as one win plus one loss, i.e. ``d = (c1 + c3) / (2 n)``.
        This is the fewest draws consistent with the counts (so the largest
        unpaired variance); pass ``draw_rate`` for the exact figure.

    Returns
    -------
    float
        ``sqrt(v / (2 n_pairs))`` with the trinomial per-game variance
        ``v = mu (1 - mu) - d / 4``, where ``mu`` is the mean per-game score
        (identical to the pentanomial mean) and ``d`` the draw share. ``nan``
        when there are no pairs.

    Notes
    -----
    For a game with win, draw and loss shares ``w, d, l`` the score has mean
    ``mu = w + d/2`` and second moment ``w + d/4 = mu - d/4``, hence the
    variance above. If the two games of a pair really are independent, the
    pentanomial SE equals this one; duplicate seating earns its keep when the
    deal favours a seat, which makes the two results of side A negatively
    correlated and the pentanomial SE smaller.
    """
    c = _check_counts(counts)
    n = float(c.sum())
    if n == 0:
        return float("nan")
    mu = float(np.dot(c, _PAIR_SCORE)) / n
    if draw_rate is None:
        d = float(c[1] + c[3]) / (2.0 * n)
    else:
        d = float(draw_rate)
        if not 0.0 <= d <= 1.0:
            raise ValueError(f"draw_rate must be in [0, 1], got {draw_rate!r}")
    v = max(mu * (1.0 - mu) - d / 4.0, 0.0)
    return math.sqrt(v / (2.0 * n))


def variance_reduction(counts: ArrayLike, draw_rate: float | None = None) -> float:
    """Ratio of paired (pentanomial) SE to unpaired SE.

    Parameters
    ----------
    counts : array_like, shape (5,)
        Pentanomial counts.
    draw_rate : float, optional
        Passed to :func:`unpaired_score_se`.

    Returns
    -------
    float
        ``pentanomial_score(counts)["se"] / unpaired_score_se(counts)``.
        Below 1 means duplicate seating reduced the SE; 1 is what independent
        games give; above 1 means the two games of a pair agree more than
        chance (side A wins or loses both). ``nan`` when there are no pairs or
        the unpaired SE is 0 (e.g. every game drawn, or all games won).
    """
    paired = pentanomial_score(counts)["se"]
    unpaired = unpaired_score_se(counts, draw_rate=draw_rate)
    if not (unpaired > 0.0):  # also catches nan
        return float("nan")
    return float(paired) / unpaired


# ---------------------------------------------------------------------------
# Paired differences
# ---------------------------------------------------------------------------


def paired_diff(d: ArrayLike, alpha: float = 0.05) -> dict[str, float | int]:
    """Mean of per-pair differences with a normal interval and test.

    Parameters
    ----------
    d : array_like
        Per-pair differences (e.g. score under a variant minus score under
        the base rules on the same seed).
    alpha : float, default 0.05
        Two-sided level.

    Returns
    -------
    dict
        ``mean``; ``sd`` (sample sd, ``ddof=1``); ``se = sd / sqrt(n)``;
        ``lo``, ``hi`` = ``mean ± z·se`` with ``z = z_{1-alpha/2}``; ``n``;
        ``p``: two-sided normal test of mean 0, ``2·(1 - Φ(|mean| / se))``.
        When ``sd == 0``: ``p = 1`` if ``mean == 0`` else ``p = 0``.
        ``n == 0`` gives ``nan`` everywhere but ``n``; ``n == 1`` gives the
        mean and ``nan`` for sd, se, lo, hi and p.
    """
    z = _z(alpha)
    x = np.asarray(d, dtype=float).ravel()
    n = int(x.size)
    nan = float("nan")
    if n == 0:
        return {"mean": nan, "sd": nan, "se": nan, "lo": nan, "hi": nan, "n": 0, "p": nan}
    mean = float(x.mean())
    if n == 1:
        return {"mean": mean, "sd": nan, "se": nan, "lo": nan, "hi": nan, "n": 1, "p": nan}
    sd = float(x.std(ddof=1))
    se = sd / math.sqrt(n)
    if sd == 0.0:
        p = 1.0 if mean == 0.0 else 0.0
    else:
        p = float(2.0 * _sps.norm.sf(abs(mean) / se))
    return {
        "mean": mean,
        "sd": sd,
        "se": se,
        "lo": mean - z * se,
        "hi": mean + z * se,
        "n": n,
        "p": p,
    }


def paired_diff_from_points(
    points_x: ArrayLike, points_y: ArrayLike, alpha: float = 0.05
) -> dict[str, float | int]:
    """Paired difference of per-game score between two runs on the same deals.

    Parameters
    ----------
    points_x, points_y : array_like of int
        Half-point codes ``0..4`` for the same deals in the same order (e.g.
        variant and base rules under common random numbers).
    alpha : float, default 0.05
        Two-sided level.

    Returns
    -------
    dict
        :func:`paired_diff` of ``(points_x - points_y) / 4``, i.e. the
        per-deal difference in per-game score (a difference of 4 half-points
        over two games is one full score unit).
    """
    x = np.asarray(points_x)
    y = np.asarray(points_y)
    if x.shape != y.shape:
        raise ValueError(f"points_x and points_y differ in shape: {x.shape} vs {y.shape}")
    # validates the codes
    pentanomial_counts(x)
    pentanomial_counts(y)
    return paired_diff((x.astype(float) - y.astype(float)) / 4.0, alpha=alpha)


# ---------------------------------------------------------------------------
# Multiple comparisons
# ---------------------------------------------------------------------------


def _multitest(pvals: ArrayLike, alpha: float, method: str) -> tuple[np.ndarray, np.ndarray]:
    _z(alpha)
    p = np.asarray(pvals, dtype=float)
    shape = p.shape
    p = p.ravel()
    reject = np.zeros(p.shape, dtype=bool)
    p_adj = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    if np.any(ok):
        r, pa, _, _ = multipletests(p[ok], alpha=alpha, method=method)
        reject[ok] = r
        p_adj[ok] = pa
    return reject.reshape(shape), p_adj.reshape(shape)


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
        Holm-adjusted p-values (statsmodels ``multipletests(method="holm")``).
    """
    return _multitest(pvals, alpha, "holm")


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


# ---------------------------------------------------------------------------
# Luck versus skill
# ---------------------------------------------------------------------------


def _p_ahead(n: int, p: float) -> float:
    """P(Bin(n, p) > n/2): strictly more than half the games won."""
    return float(_sps.binom.sf(n // 2, n, p))


def games_needed(p: float, prob: float = 0.95, max_n: int = 10_000_000) -> int | None:
    """Smallest number of games for the stronger side to be ahead.

    Parameters
    ----------
    p : float
        Per-game win probability of the stronger side (draws not modelled).
    prob : float, default 0.95
        Required probability of having won strictly more than half the games.
    max_n : int, default 10_000_000
        Search limit.

    Returns
    -------
    int or None
        Smallest ``n >= 1`` with ``P(Bin(n, p) > n/2) >= prob``; ``None`` when
        ``p <= 0.5`` or no ``n <= max_n`` qualifies.

    Notes
    -----
    ``f(n) = P(Bin(n, p) > n/2)`` is not monotone in ``n``: an even ``n = 2m``
    needs ``m + 1`` wins, the same as ``2m + 1`` games, so
    ``f(2m) <= f(2m - 1)`` (adding a game can only turn a bare majority into
    a tie). Hence the smallest qualifying ``n`` is always odd. Over odd ``n``
    ``f`` increases for ``p > 1/2`` (Condorcet's jury theorem), so the search
    doubles ``m`` in ``n = 2m + 1`` until ``f`` reaches ``prob`` and then
    bisects. The result is exact; ``n - 1`` is checked as a safeguard.
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p!r}")
    if not 0.0 < prob <= 1.0:
        raise ValueError(f"prob must be in (0, 1], got {prob!r}")
    if p <= 0.5 or max_n < 1:
        return None
    if _p_ahead(1, p) >= prob:
        return 1
    max_m = (max_n - 1) // 2  # largest m with 2m + 1 <= max_n
    # bracket: f(2*lo_m + 1) < prob <= f(2*hi_m + 1)
    lo_m, hi_m = 0, 1
    while True:
        if hi_m > max_m:
            hi_m = max_m
            if hi_m <= lo_m or _p_ahead(2 * hi_m + 1, p) < prob:
                return None
            break
        if _p_ahead(2 * hi_m + 1, p) >= prob:
            break
        lo_m, hi_m = hi_m, hi_m * 2
    while hi_m - lo_m > 1:
        mid = (lo_m + hi_m) // 2
        if _p_ahead(2 * mid + 1, p) >= prob:
            hi_m = mid
        else:
            lo_m = mid
    n = 2 * hi_m + 1
    if _p_ahead(n - 1, p) >= prob:  # cannot happen (see Notes); kept for safety
        n -= 1
    return n


# ---------------------------------------------------------------------------
# Elo
# ---------------------------------------------------------------------------


def elo(score: ArrayLike) -> Any:
    """Elo difference implied by a per-game score.

    Parameters
    ----------
    score : float or array_like
        Score ``mu`` in ``[0, 1]``.

    Returns
    -------
    float or ndarray
        ``-400 · log10(1/mu - 1)``; ``-inf`` at 0, ``+inf`` at 1, ``nan`` for
        ``nan``. No numpy warnings are emitted.
    """
    s = np.asarray(score, dtype=float)
    if np.any(s[~np.isnan(s)] < 0) or np.any(s[~np.isnan(s)] > 1):
        raise ValueError("score must be in [0, 1]")
    with np.errstate(divide="ignore", invalid="ignore"):
        out = 400.0 * (np.log10(s) - np.log10(1.0 - s))
    out = np.where(s == 0.0, -np.inf, np.where(s == 1.0, np.inf, out))
    if out.ndim == 0:
        return float(out)
    return out


def elo_interval(lo: ArrayLike, hi: ArrayLike) -> tuple[Any, Any]:
    """Map a score interval to an Elo interval (Elo is increasing in score).

    Parameters
    ----------
    lo, hi : float or array_like
        Score interval bounds in ``[0, 1]``.

    Returns
    -------
    (elo(lo), elo(hi))
    """
    return elo(lo), elo(hi)


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


# ---------------------------------------------------------------------------
# Report rows
# ---------------------------------------------------------------------------


def win_rate_table_row(
    wins: int, draws: int, games: int, alpha: float = 0.05
) -> dict[str, float | int]:
    """Win rate, draw rate and score with Wilson intervals.

    Parameters
    ----------
    wins, draws, games : int
        Counts for one side; ``wins + draws <= games``.
    alpha : float, default 0.05
        Two-sided level of the Wilson intervals.

    Returns
    -------
    dict
        ``winrate``, ``winrate_lo``, ``winrate_hi`` (Wilson on
        ``wins / games``; draws are never folded into wins); ``draw_rate``,
        ``draw_lo``, ``draw_hi`` (Wilson on ``draws / games``);
        ``score = (wins + draws / 2) / games``; ``games``. Rates are ``nan``
        when ``games == 0``.
    """
    if wins < 0 or draws < 0 or wins + draws > games:
        raise ValueError("need wins >= 0, draws >= 0 and wins + draws <= games")
    w_lo, w_hi = wilson(wins, games, alpha)
    d_lo, d_hi = wilson(draws, games, alpha)
    if games == 0:
        wr = dr = sc = float("nan")
    else:
        wr = wins / games
        dr = draws / games
        sc = (wins + draws / 2.0) / games
    return {
        "winrate": wr,
        "winrate_lo": w_lo,
        "winrate_hi": w_hi,
        "draw_rate": dr,
        "draw_lo": d_lo,
        "draw_hi": d_hi,
        "score": sc,
        "games": int(games),
    }
