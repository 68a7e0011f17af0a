"""Rates of games with Wilson intervals.

The Wilson score interval of one binomial proportion (:func:`wilson`), and
the report rows built from it: a side's win rate, draw rate and score
(:func:`win_rate_table_row`), and a game's seat balance, seat advantage,
completion and draw rate (:func:`seat_balance`, after Browne and Ludii).

References: Wilson, E. B. (1927), "Probable inference, the law of
succession, and statistical inference", JASA 22. Browne, C. (2008),
"Automatic generation and evaluation of recombination games".
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from balance.stats.normal import z_crit

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
    z_crit(alpha)  # validates alpha
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
        z = z_crit(alpha)
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


#: At most this many effective wins (or losses), :func:`score_wilson` joins the
#: Clopper-Pearson interval to Wilson's.
SMALL_COUNT = 10.0


def _clopper_pearson(k: np.ndarray, n: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Clopper-Pearson bounds for (possibly fractional) ``k`` successes of
    ``n``: the Beta quantiles, 0 at ``k = 0`` and 1 at ``k = n``."""
    from scipy import special as spc

    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = np.where(k > 0, spc.betaincinv(np.maximum(k, 1e-12), n - k + 1.0, alpha / 2), 0.0)
        hi = np.where(
            k < n, spc.betaincinv(k + 1.0, np.maximum(n - k, 1e-12), 1.0 - alpha / 2), 1.0
        )
    return lo, hi


def score_wilson(
    mean: ArrayLike, var: ArrayLike, n: ArrayLike, dmax: ArrayLike, alpha: float = 0.05
) -> dict[str, Any]:
    """A design-effect Wilson interval for a mean per game in ``[0, 1]``.

    Parameters
    ----------
    mean : float or array_like
        The mean per-game score (or share) in ``[0, 1]``.
    var : float or array_like
        Its estimated variance (the square of the standard error the data
        give: pentanomial, cluster-robust); ``nan`` where it cannot be
        estimated.
    n : float or array_like
        Games behind the mean.
    dmax : float or array_like
        The largest design effect the design allows: ``Σm²/N`` for clusters of
        ``m`` games (2 for seat-swapped deals: the deal as the unit).
    alpha : float, default 0.05
        Two-sided level.

    Returns
    -------
    dict
        ``lo``, ``hi``: the Wilson interval of ``mean`` on ``n_eff = n /
        deff`` effective games (joined with Clopper-Pearson at small counts,
        below); ``deff``; ``n_eff``. Floats in, floats out; ``nan`` where
        ``n`` is 0 or the mean is not finite.

    Notes
    -----
    A per-game score ``x`` in ``[0, 1]`` has variance at most ``μ(1-μ)``
    (equality when every game is won or lost), so the variance of a mean over
    ``n`` games is ``deff · μ(1-μ)/n`` with the design effect ``deff`` (Kish):
    the estimated variance over the binomial one. The Wilson interval of
    ``μ`` on ``n / deff`` effective games is then the score-type interval with
    that variance, which keeps Wilson's behaviour near 0 and 1 where the
    normal (Wald) interval ``μ ± z·se`` collapses: a run in which every deal
    scores 0 (or every deal 2) has ``se = 0`` and a Wald interval ``[0, 0]``.
    Where the effective wins ``k = μ·n_eff`` or losses ``n_eff - k`` are at
    most :data:`SMALL_COUNT` (10), the interval is widened to hold the
    Clopper-Pearson interval of ``k`` of ``n_eff`` too: Wilson's own coverage
    dips there (to about 84% with 0.2 expected events; Brown, L. D., Cai,
    T. T. & DasGupta, A. (2001), "Interval estimation for a binomial
    proportion", Statistical Science 16, who correct its lower bound with the
    Poisson one for 1-3 events), and with the join the exact binomial
    coverage stays at or above 93% at every p for 30, 100 and 1,000 trials
    (``tests/stats/test_stats.py``).
    Where the data cannot estimate ``deff`` (``var`` is 0 or ``nan``, or
    ``μ`` is 0 or 1) it is ``dmax``, the largest the design allows (every
    game of a cluster alike: the cluster is the unit); an estimate above
    ``dmax`` (the CR1 factor can give one) is cut to it. No lower limit: the
    seat swap can make a deal's two results negatively correlated, and draws
    make a game's variance smaller than ``μ(1-μ)``, so ``deff`` below 1 is
    real; the interval is then close to the Wald one, which is sound in the
    middle of ``[0, 1]``. This is the design-effect adjusted Wilson interval
    of survey sampling (Korn, E. L. & Graubard, B. I. (1998), "Confidence
    intervals for proportions with small expected number of positive counts
    estimated from survey data", Survey Methodology 24) applied to a mean in
    ``[0, 1]``; its coverage on the engines is measured in
    ``tests/stats/test_score_coverage.py``.
    """
    mu, v, nn, dm = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (mean, var, n, dmax)))
    scalar = mu.ndim == 0
    with np.errstate(invalid="ignore", divide="ignore"):
        binom = mu * (1.0 - mu) / nn
        est = v / binom
        ok = np.isfinite(est) & (est > 0) & (binom > 0)
        deff = np.where(ok, np.minimum(est, dm), dm)
        n_eff = np.where(nn > 0, nn / deff, 0.0)
        k = np.clip(np.where(nn > 0, mu * n_eff, 0.0), 0.0, n_eff)
    lo, hi = wilson(np.nan_to_num(k), np.nan_to_num(n_eff), alpha)
    lo, hi = np.atleast_1d(np.asarray(lo, dtype=float)), np.atleast_1d(np.asarray(hi, dtype=float))
    k, n_eff = np.atleast_1d(k), np.atleast_1d(n_eff)
    # few effective wins or losses: Wilson's coverage dips (to 84% at about
    # 0.2 expected events); the Clopper-Pearson interval on the same counts
    # is joined to it there
    few = (np.minimum(k, n_eff - k) <= SMALL_COUNT) & (n_eff > 0)
    if np.any(few):
        cp_lo, cp_hi = _clopper_pearson(k[few], n_eff[few], alpha)
        lo[few] = np.minimum(lo[few], cp_lo)
        hi[few] = np.maximum(hi[few], cp_hi)
    lo, hi, n_eff = lo.reshape(mu.shape), hi.reshape(mu.shape), n_eff.reshape(mu.shape)
    bad = ~np.isfinite(mu) | ~(nn > 0)
    lo, hi = np.where(bad, np.nan, lo), np.where(bad, np.nan, hi)
    out = {"lo": lo, "hi": hi, "deff": np.where(bad, np.nan, deff), "n_eff": n_eff}
    if scalar:
        return {k_: float(x) for k_, x in out.items()}
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
    z = z_crit(alpha)
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
