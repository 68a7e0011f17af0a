"""Intervals at the level of the deal, the unit that is really independent.

Per-deal outcomes and values of a run; rates and means pooled over deals, or
over clusters of deals, with cluster-robust (CR1) variances and
design-effect adjusted Wilson intervals; the difference of two pooled means
over the same clusters; and the sum of several runs' per-deal values by
deal. The notes below the imports say why the deal is the unit and give the
formulas.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from balance.stats.normal import two_sided_p, z_crit
from balance.stats.pentanomial import check_counts, pentanomial_counts
from balance.stats.proportions import score_wilson, wilson

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
    c = check_counts(counts).astype(np.int64)
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
    is checked by simulation in ``tests/stats/test_stats_deals.py``.
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
        Every unit's value lies within these (a score per game: (0, 1)): the
        interval is then the design-effect Wilson interval of the mean
        rescaled to [0, 1] (:func:`balance.stats.proportions.score_wilson`),
        which stays within the bounds and does not collapse where the mean
        sits at one of them.

    Returns
    -------
    dict
        ``mean`` = Σy / Σm; ``se``: CR1 cluster-robust, ``sqrt(G/(G-1) ·
        Σ_c (y_c - mean·m_c)²) / Σm`` (statsmodels OLS with
        ``cov_type="cluster"``); ``lo``, ``hi`` = ``mean ± z·se``, or with
        ``bounds`` the design-effect Wilson interval on ``Σm / deff``
        effective units, ``deff = se² / (q(1-q)·w² / Σm)`` with ``q`` the
        mean rescaled to [0, 1] and ``w`` the bounds' width, kept at most
        ``Σm²/Σm`` (the cluster as the unit) and taken as that where ``se``
        is 0 or cannot be estimated; ``p``: two-sided z test of mean 0 (1 if
        mean and se are 0, 0 if only se is), from ``se`` whatever the
        interval; ``n`` (units), ``clusters``; with ``bounds`` also
        ``deff`` and ``n_eff``. Fewer than 2 clusters: se and p are ``nan``,
        and so are lo and hi unless ``bounds`` gives them (at the largest
        design effect).

    Notes
    -----
    The normal interval with bounds merely clipped collapsed near a bound: a
    strategy's score pooled over 10-30 deals near 3% has se 0 whenever no
    deal scores, and such intervals covered the true score in 41-84% of
    runs. Coverage: ``tests/stats/test_score_coverage.py``.
    """
    z = z_crit(alpha)
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
        if se == 0.0:
            p = 1.0 if mean == 0.0 else 0.0
        else:
            p = two_sided_p(mean / se)
    out = {"mean": mean, "se": se, "lo": lo, "hi": hi, "p": p, "n": round(n), "clusters": g}
    if bounds is not None:
        b0, b1 = float(bounds[0]), float(bounds[1])
        if not b1 > b0:
            raise ValueError(f"bounds must be (lo, hi) with lo < hi, got {bounds!r}")
        w = b1 - b0
        q = min(max((mean - b0) / w, 0.0), 1.0)
        ci = score_wilson(q, se * se / (w * w), n, float((ma * ma).sum()) / n, alpha)
        out.update(lo=b0 + w * ci["lo"], hi=b0 + w * ci["hi"], deff=ci["deff"], n_eff=ci["n_eff"])
    return out


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
    z = z_crit(alpha)
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
    p = (1.0 if d == 0 else 0.0) if se == 0 else two_sided_p(d / se)
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
