"""Equivalence tests: two one-sided tests (TOST) of whether a true mean lies
within a margin of zero, from an estimate and its standard error or from
raw paired differences.

Reference: Schuirmann, D. J. (1987), two one-sided tests for equivalence.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

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
    from scipy import stats as _sps  # here, not at import: scipy.stats is slow to import

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
