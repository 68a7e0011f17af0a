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
