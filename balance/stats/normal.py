"""The normal critical value that every interval and test in the package uses.

``z_crit(alpha)`` is the two-sided critical value ``z_{1 - alpha/2}`` of the
standard normal, cached; it also checks that ``alpha`` lies in (0, 1).
``two_sided_p(z)`` is the two-sided normal p-value ``2 P(Z > |z|)``.

Both use ``scipy.special`` (``ndtri``, ``ndtr``), whose values are the very
ones ``scipy.stats.norm.ppf`` and ``.sf`` return (they call them), and which
imports in a fifth of the time ``scipy.stats`` takes: a command that only
prints intervals does not wait a second for the whole of ``scipy.stats``.
Even that fifth (a third of a second) is paid at the first figure, not when
``balance.stats`` is imported: every command's options are built from modules
that import it, and ``balance --help`` or a mistaken option computes nothing.
"""

from __future__ import annotations

import functools
import math


@functools.lru_cache(maxsize=64)
def z_crit(alpha: float) -> float:
    """Two-sided normal critical value ``z_{1 - alpha/2}`` (cached: ppf is slow)."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    from scipy import special as spc  # here, not at import (see the module's docstring)

    return float(spc.ndtri(1.0 - alpha / 2.0))


def two_sided_p(z: float) -> float:
    """Two-sided normal p-value ``2 P(Z > |z|)`` (``nan`` for ``nan``)."""
    if math.isnan(z):
        return math.nan
    from scipy import special as spc

    return float(2.0 * spc.ndtr(-abs(z)))
