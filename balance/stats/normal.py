"""The normal critical value that every interval and test in the package uses.

``z_crit(alpha)`` is the two-sided critical value ``z_{1 - alpha/2}`` of the
standard normal, cached because ``scipy.stats.norm.ppf`` is slow; it also
checks that ``alpha`` lies in (0, 1).
"""

from __future__ import annotations

import functools

from scipy import stats as _sps


@functools.lru_cache(maxsize=64)
def z_crit(alpha: float) -> float:
    """Two-sided normal critical value ``z_{1 - alpha/2}`` (cached: ppf is slow)."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    return float(_sps.norm.ppf(1.0 - alpha / 2.0))
