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
Fishtest ``server/fishtest/stats/`` (pentanomial model, GSPRT).
Wald, A. (1945), "Sequential tests of statistical hypotheses".
Schuirmann, D. J. (1987), two one-sided tests (TOST) for equivalence.
Bradley, R. A. & Terry, M. E. (1952); Ford, L. R. (1957) (existence of the MLE).
Balduzzi, D. et al. (2018), "Re-evaluating evaluation", NeurIPS (Nash averaging).
Browne, C. (2008), "Automatic generation and evaluation of recombination games".
"""

from __future__ import annotations

import functools
import math
import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize as _spo
from scipy import stats as _sps
from statsmodels.stats.multitest import multipletests

__all__ = [
    "PAIR_POINTS",
    "wilson",
    "pentanomial_counts",
    "pentanomial_score",
    "unpaired_score_se",
    "variance_reduction",
    "deal_outcomes",
    "deal_values",
    "deal_wilson",
    "cluster_wilson",
    "cluster_mean",
    "cluster_mean_diff",
    "pool_by_deal",
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
    "gsprt_llr",
    "sprt_bounds",
    "PAIR_DIFF_VALUES",
    "pair_diff_counts",
    "sprt_pair_diff",
    "sprt_pentanomial",
    "tost",
    "tost_paired",
    "bradley_terry",
    "dominant",
    "three_cycles",
    "nash_maxent",
    "nash_average",
    "seat_balance",
    "hist_mean_ci",
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
    The closed form, with ``z = z_{1-alpha/2}`` and ``p = k/n``::

        (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)

    — the formula of ``statsmodels.stats.proportion.proportion_confint``
    (``method="wilson"``), to which the tests compare it; written out here
    because a report computes thousands of them and statsmodels' per-call
    overhead dominated building one.
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
        z = _z(alpha)
        kk, nn = k_arr[ok], n_arr[ok]
        p = kk / nn
        denom = 1.0 + z * z / nn
        centre = (p + z * z / (2 * nn)) / denom
        half = z * np.sqrt(p * (1 - p) / nn + z * z / (4 * nn * nn)) / denom
        l_ok, h_ok = centre - half, centre + half
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
# Deal-level (cluster) intervals
# ---------------------------------------------------------------------------
#
# The two games of a seat-swapped deal share the deal's shuffles, so they are
# not independent (in Trisk side A's two results correlate about +0.65), and
# the matches of a round robin replay the same deals (same seed, same deal
# index), so the deal is the independent unit of everything pooled over them.
# Rates and means below are ratio estimators over clusters (a deal, or a deal
# across every match pooled) with the cluster-robust (CR1) variance
#
#     V = G/(G-1) · Σ_c (y_c - p·m_c)² / N²,     N = Σ_c m_c,
#
# the variance statsmodels' OLS gives a mean with cov_type="cluster" (the tests
# compare them). A rate keeps Wilson's behaviour near 0 and 1 through the
# design effect deff = V / (p(1-p)/N): the Wilson interval of the same rate on
# N/deff effective games (Kish's effective sample size; the "design-effect
# adjusted Wilson" of survey sampling, e.g. Korn & Graubard 1998). deff is
# kept within [N/Σm², Σm²/N]: Σm²/N is its largest possible value (every game
# of a cluster alike), used when the data cannot estimate it (a rate of 0 or
# 1, or a single cluster).


def _deal_codes(pair_points: ArrayLike) -> np.ndarray:
    a = np.asarray(pair_points).ravel()
    pentanomial_counts(a)  # validates the codes
    return a.astype(np.int64)


def _double_draws(counts: np.ndarray, draws: int) -> int:
    """Deals of code 2 that were two draws (the rest of code 2 are a win and a
    loss): every code-1 or code-3 deal holds exactly one draw, so the run's
    draw count fixes how many code-2 deals hold two."""
    c = np.asarray(counts, dtype=np.int64)
    extra = int(draws) - int(c[1] + c[3])
    if extra < 0 or extra % 2 or extra // 2 > c[2]:
        raise ValueError(
            f"{draws} draws cannot come from pair counts {c.tolist()}: every "
            "code 1 or 3 deal holds one draw and a code-2 deal none or two"
        )
    return extra // 2


def deal_outcomes(counts: ArrayLike, draws: int) -> dict[str, np.ndarray]:
    """Per-deal histograms of A's wins, B's wins and draws (0, 1 or 2 a deal).

    Parameters
    ----------
    counts : array_like, shape (5,)
        Pentanomial counts of A's half points per deal.
    draws : int
        The run's drawn games (``RunResult.draws``).

    Returns
    -------
    dict
        ``a_wins``, ``b_wins``, ``draws``: int64 arrays of shape (3,), the
        number of deals in which the event happened 0, 1 and 2 times. Exact:
        a code-1 deal is a draw and a loss, code 3 a win and a draw, and the
        run's draws say how many code-2 deals were two draws rather than a
        win and a loss.
    """
    c = _check_counts(counts).astype(np.int64)
    dd = _double_draws(c, draws)
    wl = int(c[2]) - dd
    return {
        "a_wins": np.array([c[0] + c[1] + dd, wl + c[3], c[4]], dtype=np.int64),
        "b_wins": np.array([c[3] + c[4] + dd, wl + c[1], c[0]], dtype=np.int64),
        "draws": np.array([c[0] + c[4] + wl, c[1] + c[3], dd], dtype=np.int64),
    }


def deal_values(pair_points: ArrayLike, draws: int, side: str = "a") -> dict[str, np.ndarray]:
    """Per-deal values of one side of a run, for pooling runs by deal.

    Parameters
    ----------
    pair_points : array_like of int
        A's half-point codes ``0..4``, one per deal (``RunResult.pair_points``).
    draws : int
        The run's drawn games.
    side : {"a", "b"}
        Whose values: A's, or B's (``4 - code``).

    Returns
    -------
    dict of float arrays, one entry per deal
        ``points``: the side's points over the deal's two games (0..2);
        ``wins``, ``draws``: its wins and the deal's draws (0..2), where a
        code-2 deal (a win and a loss, or two draws: the codes cannot tell)
        carries their expectation given the run's draw count;
        ``wins_var``, ``draws_var``: the variance of that guess (0 where the
        code says it all). Added to a pooled sum of squares they make a
        single run's variance exact (law of total variance); without draws
        everything is exact.
    """
    if side not in ("a", "b"):
        raise ValueError(f"side must be 'a' or 'b', got {side!r}")
    codes = _deal_codes(pair_points)
    c = np.bincount(codes, minlength=5)
    dd = _double_draws(c, draws)
    q = (c[2] - dd) / c[2] if c[2] else 1.0  # P(a code-2 deal is a win and a loss)
    pts = codes if side == "a" else 4 - codes
    is2 = (codes == 2).astype(float)
    wins = np.array([0.0, 0.0, q, 1.0, 2.0])[pts]
    return {
        "points": pts / 2.0,
        "wins": wins,
        "wins_var": is2 * q * (1.0 - q),
        "draws": np.array([0.0, 1.0, 2.0 * (1.0 - q), 1.0, 0.0])[codes],
        "draws_var": is2 * 4.0 * q * (1.0 - q),
    }


def _eff_wilson(y_sum, n, ss, n_clusters, m2, alpha):
    """Cluster-adjusted Wilson interval from sufficient statistics (vectorised).

    ``y_sum`` successes in ``n`` trials over ``n_clusters`` clusters whose
    sizes' squares sum to ``m2``; ``ss`` = Σ_c (y_c - p·m_c)². Returns rate,
    lo, hi, se (the CR1 standard error), deff and n_eff."""
    y_sum, n, ss, g, m2 = np.broadcast_arrays(
        *(np.asarray(x, dtype=float) for x in (y_sum, n, ss, n_clusters, m2))
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(n > 0, y_sum / n, np.nan)
        v = np.where(g >= 2, g / (g - 1.0) * ss / (n * n), np.nan)
        binom = p * (1.0 - p) / n
        dmax = m2 / n
        deff = np.where((binom > 0) & np.isfinite(v), v / binom, dmax)
        deff = np.clip(deff, 1.0 / dmax, dmax)
        n_eff = np.where(n > 0, n / deff, 0.0)
    lo, hi = wilson(np.where(n > 0, p * n_eff, 0.0), n_eff, alpha)
    return {
        "rate": p,
        "lo": lo,
        "hi": hi,
        "se": np.sqrt(v),
        "deff": np.where(n > 0, deff, np.nan),
        "n_eff": n_eff,
    }


def deal_wilson(hist: ArrayLike, alpha: float = 0.05) -> dict[str, Any]:
    """Per-game rate of an event that happens 0, 1 or 2 times a deal, with a
    deal-level (cluster-adjusted Wilson) interval.

    Parameters
    ----------
    hist : array_like, shape (..., 3)
        Deals in which the event happened 0, 1 and 2 times (e.g. an entry of
        :func:`deal_outcomes`); leading axes are independent rates.
    alpha : float, default 0.05
        Two-sided level.

    Returns
    -------
    dict
        ``rate`` (events / games), ``lo``, ``hi`` (Wilson on ``games / deff``
        effective games), ``se`` (deal-level, CR1), ``deff`` (the design
        effect: the deal-level variance over the variance if the games were
        independent; 1 + the within-deal correlation), ``n_eff``, ``deals``,
        ``games``. Floats for one histogram, arrays for several. No deals:
        ``nan``.

    Notes
    -----
    With ``G`` deals, ``N = 2G`` games and ``p`` the rate, the deal-level
    variance is ``G/(G-1) · Σ_d (y_d - 2p)² / N²``; ``deff`` is kept within
    [½, 2] (2: both games of every deal alike), and is 2 where the rate is 0
    or 1. The coverage of this interval at the engine's measured correlation
    is checked by simulation in ``tests/test_stats_deals.py``.
    """
    h = np.asarray(hist, dtype=float)
    if h.shape[-1:] != (3,) or np.any(h < 0):
        raise ValueError(f"hist needs non-negative counts of shape (..., 3), got {h.shape}")
    g = h.sum(axis=-1)
    n = 2.0 * g
    y = h[..., 1] + 2.0 * h[..., 2]
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(n > 0, y / n, 0.0)
    k = np.arange(3.0)
    ss = (h * (k - 2.0 * p[..., None]) ** 2).sum(axis=-1)
    out = _eff_wilson(y, n, ss, g, 4.0 * g, alpha)
    out["deals"] = g.astype(np.int64)
    out["games"] = n.astype(np.int64)
    if h.ndim == 1:
        return {k_: (int(v) if k_ in ("deals", "games") else float(v)) for k_, v in out.items()}
    return out


def _clusters(y: ArrayLike, m: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster sums and sizes as float arrays, empty clusters dropped."""
    ya = np.asarray(y, dtype=float).ravel()
    ma = np.asarray(m, dtype=float).ravel()
    if ya.shape != ma.shape:
        raise ValueError("y and m must have one entry per cluster")
    keep = ma > 0
    return ya[keep], ma[keep]


def cluster_wilson(
    y: ArrayLike, m: ArrayLike, extra_ss: float = 0.0, alpha: float = 0.05
) -> dict[str, float]:
    """A rate pooled over clusters (e.g. deals across matches that share them)
    with a cluster-adjusted Wilson interval.

    Parameters
    ----------
    y, m : array_like, one entry per cluster
        Events and games in each cluster (``y`` may be fractional: an
        expected count, see :func:`deal_values`).
    extra_ss : float, default 0
        Added to the sum of squares: the variance of guessed ``y``.
    alpha : float, default 0.05
        Two-sided level.

    Returns
    -------
    dict
        ``rate``, ``lo``, ``hi``, ``se`` (CR1), ``deff``, ``n_eff``,
        ``clusters``, ``games``; see the module notes above.
    """
    ya, ma = _clusters(y, m)
    n = float(ma.sum())
    p = float(ya.sum()) / n if n else 0.0
    ss = float(((ya - p * ma) ** 2).sum()) + float(extra_ss)
    out = _eff_wilson(ya.sum(), n, ss, ya.size, float((ma * ma).sum()), alpha)
    res = {k: float(v) for k, v in out.items()}
    res["clusters"] = int(ya.size)
    res["games"] = round(n)
    return res


def cluster_mean(
    y: ArrayLike, m: ArrayLike, alpha: float = 0.05, bounds: tuple[float, float] | None = None
) -> dict[str, float | int]:
    """Mean per unit pooled over clusters, with a cluster-robust normal interval.

    Parameters
    ----------
    y : array_like, one entry per cluster
        Sum of the units' values in each cluster (e.g. a strategy's points
        in one deal over every match it plays).
    m : array_like
        Units in each cluster (games, or deal pairs for a paired difference).
    alpha : float, default 0.05
        Two-sided level.
    bounds : (lo, hi), optional
        Clip the interval to these (a score: (0, 1)).

    Returns
    -------
    dict
        ``mean`` = Σy / Σm; ``se``: CR1 cluster-robust, ``sqrt(G/(G-1) ·
        Σ_c (y_c - mean·m_c)²) / Σm`` (statsmodels OLS with
        ``cov_type="cluster"``); ``lo``, ``hi`` = ``mean ± z·se``; ``p``:
        two-sided z test of mean 0 (1 if mean and se are 0, 0 if only se
        is); ``n`` (units), ``clusters``. Fewer than 2 clusters: se, lo, hi
        and p are ``nan``.
    """
    z = _z(alpha)
    ya, ma = _clusters(y, m)
    g, n = int(ya.size), float(ma.sum())
    nan = float("nan")
    if n == 0:
        return {"mean": nan, "se": nan, "lo": nan, "hi": nan, "p": nan, "n": 0, "clusters": 0}
    mean = float(ya.sum()) / n
    if g < 2:
        se = lo = hi = p = nan
    else:
        se = math.sqrt(g / (g - 1.0) * float(((ya - mean * ma) ** 2).sum())) / n
        lo, hi = mean - z * se, mean + z * se
        if bounds is not None:
            lo, hi = max(bounds[0], lo), min(bounds[1], hi)
        if se == 0.0:
            p = 1.0 if mean == 0.0 else 0.0
        else:
            p = float(2.0 * _sps.norm.sf(abs(mean) / se))
    return {"mean": mean, "se": se, "lo": lo, "hi": hi, "p": p, "n": round(n), "clusters": g}


def cluster_mean_diff(
    y1: ArrayLike, m1: ArrayLike, y2: ArrayLike, m2: ArrayLike, alpha: float = 0.05
) -> dict[str, float | int]:
    """Difference of two pooled means over the same clusters (e.g. loadouts
    with an item minus those without it, on the same deals), cluster-robust.

    Parameters
    ----------
    y1, m1, y2, m2 : array_like, one entry per cluster (aligned)
        Sums and units of the two pools in each cluster (0 where a pool has
        none there).
    alpha : float, default 0.05
        Two-sided level.

    Returns
    -------
    dict
        ``diff`` = Σy1/Σm1 − Σy2/Σm2; ``se`` from the linearised per-cluster
        residuals ``(y1 - μ1·m1)/Σm1 − (y2 - μ2·m2)/Σm2`` with the CR1 factor
        G/(G-1), so that a deal both pools share counts once; ``lo``, ``hi``,
        ``p`` (two-sided z test), ``clusters``.
    """
    z = _z(alpha)
    a = [np.asarray(x, dtype=float).ravel() for x in (y1, m1, y2, m2)]
    if len({x.shape for x in a}) != 1:
        raise ValueError("y1, m1, y2 and m2 must have one entry per cluster")
    y1a, m1a, y2a, m2a = a
    keep = (m1a > 0) | (m2a > 0)
    y1a, m1a, y2a, m2a = y1a[keep], m1a[keep], y2a[keep], m2a[keep]
    n1, n2, g = float(m1a.sum()), float(m2a.sum()), int(keep.sum())
    nan = float("nan")
    if n1 == 0 or n2 == 0 or g < 2:
        return {"diff": nan, "se": nan, "lo": nan, "hi": nan, "p": nan, "clusters": g}
    mu1, mu2 = float(y1a.sum()) / n1, float(y2a.sum()) / n2
    e = (y1a - mu1 * m1a) / n1 - (y2a - mu2 * m2a) / n2
    se = math.sqrt(g / (g - 1.0) * float((e * e).sum()))
    d = mu1 - mu2
    p = (1.0 if d == 0 else 0.0) if se == 0 else float(2.0 * _sps.norm.sf(abs(d) / se))
    return {"diff": d, "se": se, "lo": d - z * se, "hi": d + z * se, "p": p, "clusters": g}


def pool_by_deal(parts) -> np.ndarray:
    """Sum per-deal values of several runs by deal: ``(seed, deal)`` is the cluster.

    Parameters
    ----------
    parts : iterable of (seed, values)
        ``values`` a 2-D array (quantities × the run's deals), e.g. a side's
        points, wins and games per deal. Runs on the same seed play the same
        deal at the same index at any run size, so their values add up there.

    Returns
    -------
    ndarray, shape (quantities, clusters)
        The sums, one column per (seed, deal) some run played, seeds in order
        of first appearance.
    """
    by_seed: dict = {}
    k = None
    for seed, values in parts:
        v = np.atleast_2d(np.asarray(values, dtype=float))
        if k is None:
            k = v.shape[0]
        elif v.shape[0] != k:
            raise ValueError("every part needs the same quantities")
        cur = by_seed.get(seed)
        if cur is None or cur.shape[1] < v.shape[1]:
            grown = np.zeros((k, v.shape[1]))
            if cur is not None:
                grown[:, : cur.shape[1]] = cur
            cur = grown
        cur[:, : v.shape[1]] += v
        by_seed[seed] = cur
    if not by_seed:
        return np.zeros((0, 0))
    return np.concatenate(list(by_seed.values()), axis=1)


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
            z = _z(0.05)
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
    c = _check_counts(counts5)
    lower, upper = sprt_bounds(alpha, beta)
    llr = gsprt_llr(c, _PAIR_SCORE, s0, s1)
    if llr >= upper:
        decision = "H1"
    elif llr <= lower:
        decision = "H0"
    else:
        decision = "continue"
    n = float(c.sum())
    score = float(np.dot(c, _PAIR_SCORE) / n) if n > 0 else float("nan")
    return {
        "llr": llr,
        "lower": lower,
        "upper": upper,
        "decision": decision,
        "n_pairs": int(round(n)),
        "score": score,
    }


# ---------------------------------------------------------------------------
# Equivalence (TOST)
# ---------------------------------------------------------------------------


def tost(
    mean: float, se: float, margin: float, df: float | None = None, alpha: float = 0.05
) -> dict[str, Any]:
    """Two one-sided tests of ``|true mean| < margin`` (equivalence).

    Parameters
    ----------
    mean, se : float
        Estimate and its standard error.
    margin : float
        Equivalence margin ``> 0`` (same units as ``mean``).
    df : float, optional
        Degrees of freedom of a t reference distribution; normal if omitted.
    alpha : float, default 0.05
        Level of each one-sided test (and of the TOST).

    Returns
    -------
    dict
        ``p_lower``: p-value of H0 ``mean <= -margin`` (``sf((mean + margin)/se)``);
        ``p_upper``: of H0 ``mean >= margin`` (``cdf((mean - margin)/se)``);
        ``p = max(p_lower, p_upper)``; ``equivalent = p < alpha``; ``lo90``,
        ``hi90``: the ``1 - 2·alpha`` interval ``mean ± q_{1-alpha}·se``
        (equivalence holds iff it lies inside ``(-margin, margin)``). ``nan``
        inputs give ``nan`` outputs and ``equivalent = False``; ``se == 0``
        gives p-values 0 or 1.
    """
    if not margin > 0:
        raise ValueError(f"margin must be > 0, got {margin!r}")
    if not 0.0 < alpha < 0.5:
        raise ValueError(f"alpha must be in (0, 0.5), got {alpha!r}")
    nan = float("nan")
    mean = float(mean)
    se = float(se)
    if math.isnan(mean) or math.isnan(se) or (df is not None and not df > 0):
        return {
            "p": nan,
            "p_lower": nan,
            "p_upper": nan,
            "equivalent": False,
            "lo90": nan,
            "hi90": nan,
        }
    if se < 0:
        raise ValueError(f"se must be >= 0, got {se!r}")
    dist = _sps.norm if df is None else _sps.t(df)
    q = float(dist.ppf(1.0 - alpha))
    if se == 0.0:
        p_lower = 0.0 if mean > -margin else 1.0
        p_upper = 0.0 if mean < margin else 1.0
    else:
        p_lower = float(dist.sf((mean + margin) / se))
        p_upper = float(dist.cdf((mean - margin) / se))
    p = max(p_lower, p_upper)
    return {
        "p": p,
        "p_lower": p_lower,
        "p_upper": p_upper,
        "equivalent": bool(p < alpha),
        "lo90": mean - q * se,
        "hi90": mean + q * se,
    }


def tost_paired(d: ArrayLike, margin: float, alpha: float = 0.05) -> dict[str, Any]:
    """Paired TOST on raw per-pair differences (t test, ``df = n - 1``).

    Parameters
    ----------
    d : array_like
        Per-pair differences (e.g. score with a card minus score without it).
    margin : float
        Equivalence margin ``> 0``.
    alpha : float, default 0.05
        Level.

    Returns
    -------
    dict
        :func:`tost` of ``mean(d)``, ``sd(d, ddof=1) / sqrt(n)`` with
        ``df = n - 1``, plus ``mean``, ``se``, ``n``. Matches
        ``statsmodels.stats.weightstats.ttost_paired``. Fewer than 2 values
        give ``nan`` statistics and ``equivalent = False``.
    """
    x = np.asarray(d, dtype=float).ravel()
    n = int(x.size)
    nan = float("nan")
    mean = float(x.mean()) if n > 0 else nan
    se = float(x.std(ddof=1) / math.sqrt(n)) if n > 1 else nan
    out = tost(mean, se, margin, df=(n - 1) if n > 1 else None, alpha=alpha)
    out.update({"mean": mean, "se": se, "n": n})
    return out


# ---------------------------------------------------------------------------
# Strategy ratings: Bradley-Terry, dominance, intransitivity
# ---------------------------------------------------------------------------

#: Elo points per unit of Bradley-Terry log-strength.
_ELO_PER_NAT = 400.0 / math.log(10.0)


def bradley_terry(
    n_players: int,
    i: ArrayLike,
    j: ArrayLike,
    games: ArrayLike,
    score_i: ArrayLike,
    names: Any = None,
    *,
    virtual_draws: float = 0.0,
    alpha: float = 0.05,
    deal_points: Any = None,
) -> Any:
    """Bradley-Terry (Elo-scale) ratings by maximum likelihood.

    Parameters
    ----------
    n_players : int
        Number of players; indices run ``0..n_players-1``.
    i, j : array_like of int
        The two players of each match record (``i != j``).
    games : array_like
        Games played in each record.
    score_i : array_like
        Points of player ``i`` in each record (wins + draws / 2), in
        ``[0, games]``.
    names : sequence, optional
        Player labels for the ``player`` column (default: the indices).
    virtual_draws : float, default 0
        Extra drawn games added to every pair that played (a weak prior that
        keeps ratings finite when the MLE does not exist).
    alpha : float, default 0.05
        Two-sided level of ``lo``/``hi``.
    deal_points : sequence, optional
        One entry per record: ``(seed, points)`` with player ``i``'s points
        over each seat-swapped deal of the record (0..2 a deal; ``games`` must
        be twice the deals), or None. Given, the covariance is the
        cluster-robust sandwich over deals ``(seed, deal index)``: the two
        games of a deal are not independent, and records on the same seed
        replay the same deals. Without it, the model-based (binomial)
        covariance, which treats every game as independent.

    Returns
    -------
    pandas.DataFrame
        One row per player: ``player``, ``rating`` (``400/ln 10`` × log-strength,
        centred so the rated players sum to zero), ``se``, ``lo``, ``hi``
        (``rating ∓ z·se``), ``games`` (real games played). ``df.attrs`` holds
        ``cov`` (covariance of the ratings, Elo², list of lists; use it for a
        difference: ``var(r_a - r_b) = c_aa + c_bb - 2 c_ab``), ``mle_exists``
        ``virtual_draws`` and ``robust`` (True when the sandwich was used).

    Notes
    -----
    ``P(i beats j) = 1 / (1 + 10^((r_j - r_i)/400))``. Fitted with statsmodels
    GLM (Binomial, logit) on ``score_i / games`` with ``var_weights = games``,
    design ``+1`` for ``i`` and ``-1`` for ``j``, the first rated player as
    reference; the sum-to-zero ratings are the linear map
    ``(I - 11'/k) M beta`` of the reference-coded ``beta`` and their covariance
    is mapped the same way. Players with no games get ``nan``. The MLE exists
    only if every group of players scored some points against the rest
    (Ford 1957: the "scored against" digraph is strongly connected); when it
    does not, or the comparison graph is disconnected, every rating is ``nan``
    and ``attrs["mle_exists"]`` is False (pass ``virtual_draws`` > 0 to get
    finite, shrunken ratings).
    """
    import pandas as pd
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components
    from statsmodels.genmod import families
    from statsmodels.genmod.generalized_linear_model import GLM
    from statsmodels.tools.sm_exceptions import PerfectSeparationWarning

    n_players = int(n_players)
    if n_players < 0:
        raise ValueError("n_players must be >= 0")
    ia = np.asarray(i, dtype=np.int64).ravel()
    ja = np.asarray(j, dtype=np.int64).ravel()
    g = np.asarray(games, dtype=float).ravel()
    s = np.asarray(score_i, dtype=float).ravel()
    if not (ia.shape == ja.shape == g.shape == s.shape):
        raise ValueError("i, j, games and score_i must have the same length")
    if ia.size and (ia.min() < 0 or ja.min() < 0 or max(ia.max(), ja.max()) >= n_players):
        raise ValueError("player index out of range")
    if np.any(ia == ja):
        raise ValueError("a player cannot play itself (i == j)")
    if np.any(g < 0) or np.any(s < 0) or np.any(s > g) or not np.all(np.isfinite(s)):
        raise ValueError("need 0 <= score_i <= games")
    if virtual_draws < 0:
        raise ValueError("virtual_draws must be >= 0")
    z = _z(alpha)
    if names is None:
        labels = list(range(n_players))
    else:
        labels = list(names)
        if len(labels) != n_players:
            raise ValueError("names must have n_players entries")

    if deal_points is not None and len(deal_points) != ia.size:
        raise ValueError("deal_points needs one entry per record")
    keep = g > 0
    ia, ja, g, s = ia[keep], ja[keep], g[keep], s[keep]
    n_real = int(ia.size)
    played = np.zeros(n_players, dtype=float)
    np.add.at(played, ia, g)
    np.add.at(played, ja, g)
    rated = np.flatnonzero(played > 0)
    k = rated.size
    nan_col = np.full(n_players, np.nan)
    rating, se = nan_col.copy(), nan_col.copy()
    cov_full = np.full((n_players, n_players), np.nan)
    exists = False
    robust = False

    if k >= 2:
        pos = np.full(n_players, -1, dtype=np.int64)
        pos[rated] = np.arange(k)
        pi, pj = pos[ia], pos[ja]
        ones = np.ones(pi.size)
        undirected = csr_matrix((ones, (pi, pj)), shape=(k, k))
        n_comp, _ = connected_components(undirected, directed=False)
        if virtual_draws > 0:
            pairs = np.unique(np.sort(np.column_stack([pi, pj]), axis=1), axis=0)
            pi = np.concatenate([pi, pairs[:, 0]])
            pj = np.concatenate([pj, pairs[:, 1]])
            g = np.concatenate([g, np.full(len(pairs), float(virtual_draws))])
            s = np.concatenate([s, np.full(len(pairs), virtual_draws / 2.0)])
        # edge a -> b when a scored against b
        src = np.concatenate([pi[s > 0], pj[s < g]])
        dst = np.concatenate([pj[s > 0], pi[s < g]])
        scored = csr_matrix((np.ones(src.size), (src, dst)), shape=(k, k))
        n_strong, _ = connected_components(scored, directed=True, connection="strong")
        exists = n_comp == 1 and n_strong == 1
        if exists:
            X = np.zeros((pi.size, k))
            X[np.arange(pi.size), pi] = 1.0
            X[np.arange(pi.size), pj] = -1.0
            X = X[:, 1:]  # first rated player is the reference
            # Existence was checked above, so statsmodels' separation warning can
            # only mean an exact fit (data exactly consistent with BT); the scale
            # is fixed at 1, so its 0/0 residual-scale estimate is irrelevant.
            with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
                warnings.simplefilter("ignore", PerfectSeparationWarning)
                res = GLM(s / g, X, family=families.Binomial(), var_weights=g).fit()
            beta = np.asarray(res.params, dtype=float)
            cov_b = np.asarray(res.cov_params(), dtype=float)
            if deal_points is not None:
                meat = _bt_meat(
                    X[:n_real],
                    beta,
                    g[:n_real],
                    [dp for dp, k_ in zip(deal_points, keep, strict=False) if k_],
                )
                if meat is not None:
                    cov_b = cov_b @ meat @ cov_b
                    robust = True
            M = np.vstack([np.zeros((1, k - 1)), np.eye(k - 1)])
            T = (np.eye(k) - 1.0 / k) @ M * _ELO_PER_NAT
            theta = T @ beta
            cov = T @ cov_b @ T.T
            rating[rated] = theta
            se[rated] = np.sqrt(np.clip(np.diag(cov), 0.0, None))
            cov_full[np.ix_(rated, rated)] = cov

    df = pd.DataFrame(
        {
            "player": labels,
            "rating": rating,
            "se": se,
            "lo": rating - z * se,
            "hi": rating + z * se,
            "games": played,
        }
    )
    df.attrs["cov"] = cov_full.tolist()
    df.attrs["mle_exists"] = bool(exists)
    df.attrs["virtual_draws"] = float(virtual_draws)
    df.attrs["robust"] = robust
    return df


def _bt_meat(X: np.ndarray, beta: np.ndarray, games: np.ndarray, deal_points) -> np.ndarray | None:
    """Σ_c u_c u_cᵀ · G/(G−1) of the Bradley–Terry score over deal clusters.

    Record r's score contribution is ``x_r (s_r − g_r π_r)``, a sum over its
    deals of ``x_r (s_rd − 2 π_r)``; summed by deal (seed, index) across
    records, these are the cluster scores u_c. None when a record has no deal
    data (or they do not match its games) or there are fewer than 2 clusters."""
    pi = 1.0 / (1.0 + np.exp(-(X @ beta)))
    parts = []
    for r, dp in enumerate(deal_points):
        if dp is None:
            return None
        seed, pts = dp
        pts = np.asarray(pts, dtype=float).ravel()
        if 2 * pts.size != games[r]:
            return None
        parts.append((seed, np.outer(X[r], pts - 2.0 * pi[r])))
    if not parts:
        return None
    u = pool_by_deal(parts)
    g = u.shape[1]
    if g < 2:
        return None
    return g / (g - 1.0) * (u @ u.T)


def _beats(lo: ArrayLike) -> np.ndarray:
    m = np.asarray(lo, dtype=float)
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise ValueError(f"lo must be a square matrix, got shape {m.shape}")
    gt = np.nan_to_num(m, nan=-np.inf) > 0.5
    np.fill_diagonal(gt, False)
    return gt


def dominant(lo: ArrayLike) -> list[int]:
    """Strategies whose lower bound beats 1/2 against every other strategy.

    Parameters
    ----------
    lo : array_like, shape (n, n)
        ``lo[i, j]``: lower 95% bound of row ``i``'s score against column ``j``.
        The diagonal is ignored; ``nan`` means unknown and counts as not beaten.

    Returns
    -------
    list of int
        Indices ``i`` with ``lo[i, j] > 0.5`` for every ``j != i``, ascending.
        Empty when ``n < 2`` (nothing to dominate).
    """
    gt = _beats(lo)
    n = gt.shape[0]
    if n < 2:
        return []
    np.fill_diagonal(gt, True)
    return [int(x) for x in np.flatnonzero(gt.all(axis=1))]


def three_cycles(lo: ArrayLike) -> list[tuple[int, int, int]]:
    """Significant intransitive triples (rock-paper-scissors cycles).

    Parameters
    ----------
    lo : array_like, shape (n, n)
        As in :func:`dominant`.

    Returns
    -------
    list of tuple of int
        Every ``(i, j, k)`` with ``lo[i, j] > .5``, ``lo[j, k] > .5`` and
        ``lo[k, i] > .5`` (i beats j beats k beats i), each cycle once, rotated
        so the smallest index comes first; sorted.
    """
    gt = _beats(lo)
    n = gt.shape[0]
    if n < 3:
        return []
    # cyc[i, j, k] = gt[i, j] & gt[j, k] & gt[k, i]
    cyc = gt[:, :, None] & gt[None, :, :] & gt.T[:, None, :]
    out = []
    for a, b, c in zip(*np.nonzero(cyc), strict=False):
        if a < b and a < c:
            out.append((int(a), int(b), int(c)))
    return sorted(out)


# ---------------------------------------------------------------------------
# Meta-game: Nash averaging
# ---------------------------------------------------------------------------


def _check_antisym(A: ArrayLike) -> np.ndarray:
    m = np.asarray(A, dtype=float)
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise ValueError(f"payoff matrix must be square, got shape {m.shape}")
    if not np.all(np.isfinite(m)):
        raise ValueError("payoff matrix must be finite")
    if m.size and np.max(np.abs(m + m.T)) > 1e-9:
        raise ValueError("payoff matrix must be antisymmetric (A = -A.T within 1e-9)")
    return m


def nash_maxent(A: ArrayLike, tol: float = 1e-10) -> np.ndarray:
    """Maximum-entropy Nash equilibrium of a symmetric zero-sum game.

    Parameters
    ----------
    A : array_like, shape (n, n)
        Antisymmetric payoff matrix: ``A[i, j]`` is row strategy ``i``'s payoff
        against column ``j`` (``A = -A.T`` within 1e-9). The game's value is 0.
    tol : float, default 1e-10
        Constraint slack; strategies whose largest equilibrium weight is below
        ``1e3·tol`` are treated as outside the support.

    Returns
    -------
    ndarray, shape (n,)
        The mixture ``p`` of maximal entropy among the equilibria
        ``{p in simplex : p' A e_j >= 0 for all j}`` (equivalently
        ``A p <= 0``). Unique; equals the equilibrium itself when that is
        unique. Empty for ``n == 0``.

    Notes
    -----
    Balduzzi et al. (2018). Step 1, one LP (scipy ``linprog``/HiGHS):
    maximise ``t`` over equilibria with ``p_i - (A p)_i >= t`` for all ``i``.
    By strict complementarity (Goldman-Tucker) the optimum has, for each
    ``i``, either ``p_i > 0`` (``i`` is in the support of some equilibrium,
    hence of the max-entropy one) or ``(A p)_i < 0``; this fixes the support
    ``S``. Step 2: maximise entropy over ``p`` on ``S``. Every equilibrium has
    ``(A p)_j = 0`` for ``j`` in ``S``, so first solve the equality-constrained
    problem through its smooth dual ``min_nu log sum_{i in S} exp((A_SS nu)_i)``
    (damped Newton), ``p_S ∝ exp(A_SS nu)``. If that point satisfies
    ``A p <= max(10·tol, 1e-9)`` for the strategies outside ``S`` too, it is
    optimal (KKT with zero multipliers). Otherwise those rows enter as
    inequalities ``(A p)_j <= tol`` with multipliers ``mu_j >= 0`` and the dual
    is solved with L-BFGS-B. Accuracy is about 1e-9 in ``p``.
    """
    M = _check_antisym(A)
    n = M.shape[0]
    if n == 0:
        return np.zeros(0)
    if n == 1:
        return np.ones(1)
    # --- step 1: support of the max-entropy equilibrium (one LP) ---
    # variables x = (p_1..p_n, t); maximise t
    c = np.zeros(n + 1)
    c[-1] = -1.0
    A_ub = np.vstack(
        [
            np.hstack([M, np.zeros((n, 1))]),  # A p <= 0
            np.hstack([M - np.eye(n), np.ones((n, 1))]),  # t - p_i + (A p)_i <= 0
        ]
    )
    b_ub = np.zeros(2 * n)
    A_eq = np.hstack([np.ones((1, n)), np.zeros((1, 1))])
    bounds = [(0.0, None)] * n + [(None, 1.0)]
    lp = _spo.linprog(
        c,
        A_ub=A_ub,
        b_ub=b_ub,
        A_eq=A_eq,
        b_eq=[1.0],
        bounds=bounds,
        method="highs",
        options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},
    )
    if lp.status != 0:  # cannot happen for an antisymmetric matrix
        raise RuntimeError(f"Nash LP failed: {lp.message}")
    p_lp = np.clip(lp.x[:n], 0.0, None)
    slack = -(M @ p_lp)
    S = (p_lp > slack) & (p_lp > 1e3 * tol)
    if not np.any(S):
        S[np.argmax(p_lp)] = True
    idx = np.flatnonzero(S)
    if idx.size == 1:
        p = np.zeros(n)
        p[idx[0]] = 1.0
        return p
    # --- step 2: maximise entropy on S via the dual ---
    # Equality form first: (A p)_j = 0 for j in S holds on every equilibrium.
    # Dual: min_nu LSE(C nu) with C = A[S, S], p_S = softmax(C nu) (Newton).
    C = M[np.ix_(idx, idx)]
    nu = _lse_newton(C)
    p = np.zeros(n)
    p[idx] = _softmax(C @ nu)
    if np.max(M @ p) <= max(10.0 * tol, 1e-9):
        return p  # KKT holds with zero multipliers for the rows outside S
    # General form: rows outside S as inequalities (A p)_j <= tol, mu_j >= 0.
    B = M[idx, :]
    free = np.zeros(n, dtype=bool)
    free[idx] = True
    w = np.where(free, 0.0, tol)

    def fun(mu: np.ndarray) -> tuple[float, np.ndarray]:
        zz = B @ mu
        zmax = zz.max()
        e = np.exp(zz - zmax)
        tot = e.sum()
        return float(zmax + math.log(tot) + w @ mu), B.T @ (e / tot) + w

    mu0 = np.zeros(n)
    mu0[idx] = nu
    res = _spo.minimize(
        fun,
        mu0,
        jac=True,
        method="L-BFGS-B",
        bounds=[(None, None) if f else (0.0, None) for f in free],
        options={"ftol": 1e-16, "gtol": 1e-13, "maxiter": 20000, "maxcor": 30},
    )
    p = np.zeros(n)
    p[idx] = _softmax(B @ res.x)
    if np.max(M @ p) > 1e-7:  # did not converge: fall back to the LP point
        p = p_lp / p_lp.sum()
    return p


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max())
    return e / e.sum()


def _lse_newton(C: np.ndarray, max_iter: int = 200) -> np.ndarray:
    """Minimise ``log sum exp(C nu)`` over free ``nu`` (damped Newton, pseudo-inverse)."""
    k = C.shape[1]
    nu = np.zeros(k)

    def f(x: np.ndarray) -> float:
        z = C @ x
        zmax = z.max()
        return float(zmax + math.log(np.exp(z - zmax).sum()))

    fx = f(nu)
    for _ in range(max_iter):
        q = _softmax(C @ nu)
        g = C.T @ q
        if np.max(np.abs(g)) < 1e-14:
            break
        Cq = C * np.sqrt(q)[:, None]
        H = Cq.T @ Cq - np.outer(g, g)
        step = -np.linalg.lstsq(H, g, rcond=1e-13)[0]
        slope = float(g @ step)
        if not slope < 0.0:
            step, slope = -g, -float(g @ g)
        t = 1.0
        while t > 1e-12:
            fn = f(nu + t * step)
            if fn <= fx + 1e-4 * t * slope:
                break
            t *= 0.5
        else:
            break
        nu = nu + t * step
        if fx - fn < 1e-16 * max(1.0, abs(fx)) and t < 1.0:
            fx = fn
            break
        fx = fn
    return nu


# Fast path for many related games (the bootstrap of nash_average). A candidate
# support S is *certified* for a game A when the max-entropy mixture p on S
# under the equalities (A p)_S = 0 is strictly complementary: p_i > m for i in
# S and (A p)_j < -m for j outside S, with m = _FAST_MARGIN (and |(A p)_S| <=
# 1e-10). Then p is an equilibrium, and no equilibrium q puts weight on any j
# outside S (q' A p = 0 would force (A p)_j = 0), so S is the support of the
# max-entropy equilibrium and p is that equilibrium. The margin also makes
# nash_maxent's LP find the same S (its optimum t* >= min(p_S, -(A p)_out) > m,
# far above its 1e3*tol cut-off), after which it solves the same equality-form
# problem, so both return the same p up to nash_maxent's own accuracy (~1e-9).
_FAST_MARGIN = 1e-6
# Relative gap sigma_{k-1} / sigma_1 of C = A[S, S] above which the null space
# of C is one-dimensional and well conditioned, so the equilibrium on S is
# unique and read off the SVD (error ~1e-16 / gap); below it, damped Newton.
_FAST_GAP = 1e-4


def _solve_on_supports(
    Ms: np.ndarray, idx: np.ndarray, margin: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Certified max-entropy equilibria of games ``Ms`` (B, n, n) on supports ``idx`` (B, k).

    Returns ``(ok, P, R)``: ``ok`` (B,) marks the rows certified (see
    ``_FAST_MARGIN``); for those, ``P[b]`` is the equilibrium and
    ``R[b] = Ms[b] @ P[b]``. Other rows are meaningless.
    """
    B, n, _ = Ms.shape
    k = idx.shape[1]
    rows = np.arange(B)[:, None]
    if k == 1:
        pS = np.ones((B, 1))
    else:
        C = Ms[rows[:, :, None], idx[:, :, None], idx[:, None, :]]
        s = np.linalg.svd(C, compute_uv=False)
        scale = s[:, 0]
        unique = s[:, -2] > _FAST_GAP * scale  # null space of C at most 1-dim
        has_null = s[:, -1] <= 1e-9 * scale  # ... and at least 1-dim
        pS = np.full((B, k), np.nan)
        gen = np.flatnonzero(unique & has_null)
        if gen.size:
            v = np.linalg.svd(C[gen])[2][:, -1, :]
            with np.errstate(divide="ignore", invalid="ignore"):
                pS[gen] = v / v.sum(axis=1, keepdims=True)
        # several equilibria on S (clones, ties): maximise entropy as nash_maxent does
        for b in np.flatnonzero(~unique & has_null):
            pS[b] = _softmax(C[b] @ _lse_newton(C[b]))
    P = np.zeros((B, n))
    P[rows, idx] = pS
    R = np.einsum("bij,bj->bi", Ms, P)
    inS = np.zeros((B, n), dtype=bool)
    inS[rows, idx] = True
    with np.errstate(invalid="ignore"):
        ok = np.all(pS > margin, axis=1)
        ok &= np.max(np.where(inS, np.abs(R), 0.0), axis=1) <= 1e-10
        ok &= np.max(np.where(inS, -np.inf, R), axis=1) < -margin
    return ok, P, R


def _neighbour_supports(S: np.ndarray, n: int) -> list[np.ndarray]:
    """Supports one pivot away from ``S`` (sorted int array): swap one strategy,
    add or drop one (``S`` degenerate), add or drop two (a generic support has
    odd size). Returned as groups of equal size, as (m, k) int arrays."""
    inside = [int(i) for i in S]
    outside = [j for j in range(n) if j not in set(inside)]
    groups = []
    swaps = [sorted(set(inside) - {i} | {j}) for i in inside for j in outside]
    add1 = [sorted(inside + [j]) for j in outside]
    drop1 = [[x for x in inside if x != i] for i in inside]
    add2 = [sorted(inside + [j, m]) for a, j in enumerate(outside) for m in outside[a + 1 :]]
    drop2 = [
        [x for x in inside if x not in (i, m)]
        for a, i in enumerate(inside)
        for m in inside[a + 1 :]
    ]
    for g in (swaps, add1, drop1, add2, drop2):
        g = [x for x in g if x]
        if g:
            groups.append(np.array(g, dtype=np.intp))
    return groups


def _nash_maxent_many(
    As: np.ndarray, hint: np.ndarray | None = None, tol: float = 1e-10
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`nash_maxent` for a stack of antisymmetric games ``As`` (B, n, n).

    Returns ``(P, R)``: ``P[b]`` equals ``nash_maxent(As[b], tol)`` up to that
    function's accuracy (~1e-9), and ``R[b] = As[b] @ P[b]``. A candidate
    support (first the boolean mask ``hint``) is tried on all unsolved games
    at once and accepted where certified (see ``_FAST_MARGIN``). The first
    game left is then tried on every support one pivot away from ``hint``
    (:func:`_neighbour_supports`), and only if none is certified handed to
    :func:`nash_maxent`; the support found becomes the next candidate.
    """
    B, n, _ = As.shape
    P = np.zeros((B, n))
    R = np.zeros((B, n))
    if B == 0 or n == 0:
        return P, R
    # identical games (e.g. se = 0 everywhere) are solved once
    flat = np.ascontiguousarray(As).reshape(B, -1)
    uniq, first, inverse = np.unique(flat, axis=0, return_index=True, return_inverse=True)
    if uniq.shape[0] < B:
        Pu, Ru = _nash_maxent_many(As[np.sort(first)], hint, tol)
        order = np.argsort(np.argsort(first))  # unique row -> position in sorted(first)
        sel = order[inverse.reshape(-1)]
        return Pu[sel], Ru[sel]
    margin = max(_FAST_MARGIN, 1e4 * tol)
    pending = np.arange(B)
    tried: set[bytes] = set()
    hint_idx = None if hint is None else np.flatnonzero(np.asarray(hint, dtype=bool))
    neighbours = None
    cand = hint_idx
    while pending.size:
        if cand is not None and cand.size and cand.tobytes() not in tried:
            tried.add(cand.tobytes())
            idx = np.broadcast_to(cand, (pending.size, cand.size))
            ok, Pc, Rc = _solve_on_supports(As[pending], idx, margin)
            P[pending[ok]] = Pc[ok]
            R[pending[ok]] = Rc[ok]
            pending = pending[~ok]
            cand = None
            continue
        b = pending[0]
        cand = None
        if hint_idx is not None and hint_idx.size:
            if neighbours is None:
                neighbours = _neighbour_supports(hint_idx, n)
            for g in neighbours:
                ok = _solve_on_supports(np.broadcast_to(As[b], (len(g), n, n)), g, margin)[0]
                hit = np.flatnonzero(ok)
                if hit.size:
                    cand = g[hit[0]]
                    break
        if cand is None:
            P[b] = nash_maxent(As[b], tol)
            R[b] = As[b] @ P[b]
            pending = pending[1:]
            cand = np.flatnonzero(P[b] > 0.0)
    return P, R


def nash_average(
    score: ArrayLike, se: ArrayLike | None = None, n_boot: int = 200, seed: int = 0
) -> dict[str, np.ndarray]:
    """Nash averaging of a round-robin score matrix, with a parametric bootstrap.

    Parameters
    ----------
    score : array_like, shape (n, n)
        ``score[i, j]``: mean per-game score of row ``i`` against column ``j``
        (``score[j, i]`` should be ``1 - score[i, j]``; the diagonal is
        ignored). No ``nan`` off the diagonal.
    se : array_like, shape (n, n), optional
        Standard errors of the scores; the upper triangle is used (``nan``
        counts as 0).
    n_boot : int, default 200
        Bootstrap draws when ``se`` is given.
    seed : int, default 0
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    dict of ndarray
        ``p``: max-entropy Nash mixture (:func:`nash_maxent`) of
        ``A = (S - S')/2`` with ``S = score - 1/2``; ``rating = A @ p``: each
        strategy's expected score minus 1/2 against the Nash mixture (0 in the
        support, negative outside it); ``rating_lo``, ``rating_hi``, ``p_lo``,
        ``p_hi``: 2.5% / 97.5% bootstrap percentiles; ``support_share``: share
        of draws with ``p_i > 1e-6``. The bootstrap entries are ``nan`` when
        ``se`` is None.

    Notes
    -----
    The bootstrap draws ``score[i, j] + N(0, se[i, j]²)`` independently for
    ``i < j``, sets the lower triangle antisymmetrically and recomputes.
    Ratings are invariant to adding copies of a strategy (Balduzzi et al.
    2018); ``p`` is split between the copies, which sum to the original's
    weight when the equilibrium of the original game is unique.
    """
    S = np.array(score, dtype=float)
    if S.ndim != 2 or S.shape[0] != S.shape[1]:
        raise ValueError(f"score must be a square matrix, got shape {S.shape}")
    n = S.shape[0]
    np.fill_diagonal(S, 0.5)
    if not np.all(np.isfinite(S)):
        raise ValueError("score must be finite off the diagonal")
    A = S - 0.5
    A = (A - A.T) / 2.0
    p = nash_maxent(A)
    rating = A @ p
    nan_vec = np.full(n, np.nan)
    out = {
        "p": p,
        "rating": rating,
        "rating_lo": nan_vec.copy(),
        "rating_hi": nan_vec.copy(),
        "p_lo": nan_vec.copy(),
        "p_hi": nan_vec.copy(),
        "support_share": nan_vec.copy(),
    }
    if se is None or n == 0 or n_boot < 1:
        return out
    E = np.nan_to_num(np.asarray(se, dtype=float), nan=0.0)
    if E.shape != S.shape:
        raise ValueError("se must have the same shape as score")
    if np.any(E < 0):
        raise ValueError("se must be non-negative")
    iu = np.triu_indices(n, k=1)
    rng = np.random.default_rng(seed)
    # one call draws the same stream as n_boot calls of size len(iu[0])
    Z = rng.normal(0.0, 1.0, size=(n_boot, iu[0].size))
    As = np.zeros((n_boot, n, n))
    As[:, iu[0], iu[1]] = A[iu] + Z * E[iu]
    As = As - As.transpose(0, 2, 1)
    P, R = _nash_maxent_many(As, hint=p > 0.0)
    out["rating_lo"], out["rating_hi"] = np.percentile(R, [2.5, 97.5], axis=0)
    out["p_lo"], out["p_hi"] = np.percentile(P, [2.5, 97.5], axis=0)
    out["support_share"] = (P > 1e-6).mean(axis=0)
    return out


# ---------------------------------------------------------------------------
# Game-level metrics
# ---------------------------------------------------------------------------


def seat_balance(
    seat0_wins: int,
    seat1_wins: int,
    games: int,
    draws: int | None = None,
    alpha: float = 0.05,
) -> dict[str, float | int]:
    """Seat balance, seat advantage, completion and draw rate (Browne / Ludii).

    Parameters
    ----------
    seat0_wins, seat1_wins : int
        Games won by the player in seat 0 / seat 1.
    games : int
        Games played.
    draws : int, optional
        Drawn games; by default every undecided game (``games - wins``) counts
        as a draw. Pass it when timeouts are counted separately.
    alpha : float, default 0.05
        Two-sided level of the intervals.

    Returns
    -------
    dict
        With ``w0, w1`` the seat win shares: ``balance = 1 - |w0 - w1|``;
        ``seat_advantage = w0 - w1`` with ``adv_lo``, ``adv_hi`` = ``± z·sqrt(
        (w0 + w1 - (w0 - w1)²) / games)`` (multinomial variance), clipped to
        ``[-1, 1]``; ``completion`` = decided share with Wilson ``completion_lo``,
        ``completion_hi``; ``draw_rate`` with Wilson ``draw_lo``, ``draw_hi``;
        ``games``. All rates ``nan`` when ``games == 0``.
    """
    decided = seat0_wins + seat1_wins
    if draws is None:
        draws = games - decided
    if min(seat0_wins, seat1_wins, draws) < 0 or decided + draws > games:
        raise ValueError("need non-negative counts with seat0_wins + seat1_wins + draws <= games")
    z = _z(alpha)
    c_lo, c_hi = wilson(decided, games, alpha)
    d_lo, d_hi = wilson(draws, games, alpha)
    nan = float("nan")
    if games == 0:
        bal = adv = a_lo = a_hi = comp = dr = nan
    else:
        w0, w1 = seat0_wins / games, seat1_wins / games
        adv = w0 - w1
        bal = 1.0 - abs(adv)
        half = z * math.sqrt(max(w0 + w1 - adv * adv, 0.0) / games)
        a_lo, a_hi = max(-1.0, adv - half), min(1.0, adv + half)
        comp = decided / games
        dr = draws / games
    return {
        "balance": bal,
        "seat_advantage": adv,
        "adv_lo": a_lo,
        "adv_hi": a_hi,
        "completion": comp,
        "completion_lo": c_lo,
        "completion_hi": c_hi,
        "draw_rate": dr,
        "draw_lo": d_lo,
        "draw_hi": d_hi,
        "games": int(games),
    }


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
    z = _z(alpha)
    mean, sd0 = mean_sd_from_hist(values, counts)
    n_f = float(np.asarray(counts, dtype=float).sum())
    n: float | int = int(n_f) if n_f == int(n_f) else n_f
    nan = float("nan")
    if n_f <= 1.0:
        return {"mean": mean, "sd": nan, "lo": nan, "hi": nan, "n": n}
    sd = sd0 * math.sqrt(n_f / (n_f - 1.0))
    half = z * sd / math.sqrt(n_f)
    return {"mean": mean, "sd": sd, "lo": mean - half, "hi": mean + half, "n": n}
