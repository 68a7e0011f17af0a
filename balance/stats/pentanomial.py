"""The pentanomial model of duplicate seating.

Every deal is played twice with the seats swapped; side A's half-points over
the two games (a code 0..4) are counted in five bins, as in Fishtest. This
module holds the code table (``PAIR_POINTS``, ``PAIR_SCORE``), the counts,
the mean score and its standard error under that model, the standard error
the same games would have if they were independent, and the ratio of the two.

Reference: Fishtest ``server/fishtest/stats/`` (pentanomial model).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from balance.stats.normal import z_crit
from balance.stats.proportions import score_wilson

#: Points for side A over a seat-swapped pair, indexed by the stored
#: half-point code 0..4 (0 = lost both, 2 = one win and one loss or two
#: draws, 4 = won both).
PAIR_POINTS: np.ndarray = np.array([0.0, 0.5, 1.0, 1.5, 2.0])

#: Per-game score of a pair (points / 2), indexed by the half-point code.
PAIR_SCORE: np.ndarray = PAIR_POINTS / 2.0


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


def check_counts(counts: ArrayLike) -> np.ndarray:
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
        Two-sided level of the interval.

    Returns
    -------
    dict
        ``score``: mean per-game score of side A in ``[0, 1]``;
        ``se``: standard error, ``sd(s) / sqrt(n_pairs)`` where ``s_j =
        points_j / 2`` is the per-pair score and ``sd`` the count-weighted
        population standard deviation (as in Fishtest): the figure the tests
        (SPRT, z tests, Holm) use, unchanged;
        ``lo``, ``hi``: the design-effect Wilson interval
        (:func:`balance.stats.proportions.score_wilson`) of the score on
        ``n_eff = n_games / deff`` effective games, ``deff = se² /
        (score(1-score) / n_games)``; where ``se`` is 0 (every deal scored
        the same: all 0, all 2) or the score is 0 or 1, ``deff`` = 2, the
        deal as the unit (``n_eff = n_pairs``);
        ``deff``, ``n_eff``; ``n_pairs``; ``n_games`` (``2 * n_pairs``).
        With no pairs, the float entries are ``nan``.

    Notes
    -----
    The normal interval ``score ± z·se`` this used to print collapses where
    the score is near 0 or 1: with every deal scoring 0, ``se`` is 0 and the
    interval ``[0, 0]``, and near 0.1% it covered the true score in about a
    quarter of runs. Away from the ends the Wilson interval on ``n_eff`` is
    the normal one to within a small fraction of its width. Coverage on the
    engines: ``tests/stats/test_score_coverage.py``.
    """
    c = check_counts(counts)
    z_crit(alpha)  # validates alpha
    n = float(c.sum())
    n_pairs = int(round(n))
    if n == 0:
        nan = float("nan")
        return {
            "score": nan,
            "se": nan,
            "lo": nan,
            "hi": nan,
            "deff": nan,
            "n_eff": 0.0,
            "n_pairs": 0,
            "n_games": 0,
        }
    w = c / n
    mu = float(np.dot(w, PAIR_SCORE))
    var = float(np.dot(w, (PAIR_SCORE - mu) ** 2))
    se = math.sqrt(max(var, 0.0) / n)
    # a deal is two games: deff is at most 2 (both games of every deal alike)
    ci = score_wilson(mu, se * se, 2.0 * n, 2.0, alpha)
    return {
        "score": mu,
        "se": se,
        "lo": ci["lo"],
        "hi": ci["hi"],
        "deff": ci["deff"],
        "n_eff": ci["n_eff"],
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
    c = check_counts(counts)
    n = float(c.sum())
    if n == 0:
        return float("nan")
    mu = float(np.dot(c, PAIR_SCORE)) / n
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
