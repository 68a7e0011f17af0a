"""Elo and strategy ratings.

Elo differences implied by a score, Bradley-Terry ratings on the Elo scale
by maximum likelihood (with a covariance that is cluster-robust over deals
when the per-deal points are given), and what the lower bounds of a round
robin's score matrix say: the strategies that beat every other one, and the
intransitive triples (rock-paper-scissors cycles).

References: Bradley, R. A. & Terry, M. E. (1952); Ford, L. R. (1957)
(existence of the MLE).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from balance.stats.clusters import pool_by_deal
from balance.stats.normal import z_crit

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
    z = z_crit(alpha)
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
