"""Paired differences: the mean of per-deal differences between two runs on
the same deals (e.g. a variant against the base rules under common random
numbers), with a normal interval and a two-sided test.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from balance.stats.normal import two_sided_p, z_crit
from balance.stats.pentanomial import pentanomial_counts

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
    z = z_crit(alpha)
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
        p = two_sided_p(mean / se)
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
