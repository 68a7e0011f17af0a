"""Luck versus skill: how many games the stronger side needs to be ahead
with a given probability (:func:`games_needed`).
"""

from __future__ import annotations

# ---------------------------------------------------------------------------
# Luck versus skill
# ---------------------------------------------------------------------------


def _p_ahead(n: int, p: float) -> float:
    """P(Bin(n, p) > n/2): strictly more than half the games won."""
    from scipy import stats as _sps  # here, not at import: scipy.stats is slow to import

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
