"""The meta-game: Nash averaging of a round robin.

The maximum-entropy Nash equilibrium of a symmetric zero-sum game, a fast
solver for many related games (the bootstrap), and Nash averaging of a score
matrix with a parametric bootstrap.

Reference: Balduzzi, D. et al. (2018), "Re-evaluating evaluation", NeurIPS.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

# ---------------------------------------------------------------------------
# Meta-game: Nash averaging
# ---------------------------------------------------------------------------


def _check_antisym(A: ArrayLike) -> np.ndarray:
    m = np.asarray(A, dtype=float)
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise ValueError(f"payoff matrix must be square, got shape {m.shape}")
    if not np.all(np.isfinite(m)):
        raise ValueError("payoff matrix must be finite")
    if m.size and np.max(np.abs(m + m.T)) > 1e-9:
        raise ValueError("payoff matrix must be antisymmetric (A = -A.T within 1e-9)")
    return m


def nash_maxent(A: ArrayLike, tol: float = 1e-10) -> np.ndarray:
    """Maximum-entropy Nash equilibrium of a symmetric zero-sum game.

    Parameters
    ----------
    A : array_like, shape (n, n)
        Antisymmetric payoff matrix: ``A[i, j]`` is row strategy ``i``'s payoff
        against column ``j`` (``A = -A.T`` within 1e-9). The game's value is 0.
    tol : float, default 1e-10
        Constraint slack; strategies whose largest equilibrium weight is below
        ``1e3·tol`` are treated as outside the support.

    Returns
    -------
    ndarray, shape (n,)
        The mixture ``p`` of maximal entropy among the equilibria
        ``{p in simplex : p' A e_j >= 0 for all j}`` (equivalently
        ``A p <= 0``). Unique; equals the equilibrium itself when that is
        unique. Empty for ``n == 0``.

    Notes
    -----
    Balduzzi et al. (2018). Step 1, one LP (scipy ``linprog``/HiGHS):
    maximise ``t`` over equilibria with ``p_i - (A p)_i >= t`` for all ``i``.
    By strict complementarity (Goldman-Tucker) the optimum has, for each
    ``i``, either ``p_i > 0`` (``i`` is in the support of some equilibrium,
    hence of the max-entropy one) or ``(A p)_i < 0``; this fixes the support
    ``S``. Step 2: maximise entropy over ``p`` on ``S``. Every equilibrium has
    ``(A p)_j = 0`` for ``j`` in ``S``, so first solve the equality-constrained
    problem through its smooth dual ``min_nu log sum_{i in S} exp((A_SS nu)_i)``
    (damped Newton), ``p_S ∝ exp(A_SS nu)``. If that point satisfies
    ``A p <= max(10·tol, 1e-9)`` for the strategies outside ``S`` too, it is
    optimal (KKT with zero multipliers). Otherwise those rows enter as
    inequalities ``(A p)_j <= tol`` with multipliers ``mu_j >= 0`` and the dual
    is solved with L-BFGS-B. Accuracy is about 1e-9 in ``p``.
    """
    M = _check_antisym(A)
    n = M.shape[0]
    if n == 0:
        return np.zeros(0)
    if n == 1:
        return np.ones(1)
    # --- step 1: support of the max-entropy equilibrium (one LP) ---
    # variables x = (p_1..p_n, t); maximise t
    c = np.zeros(n + 1)
    c[-1] = -1.0
    A_ub = np.vstack(
        [
            np.hstack([M, np.zeros((n, 1))]),  # A p <= 0
            np.hstack([M - np.eye(n), np.ones((n, 1))]),  # t - p_i + (A p)_i <= 0
        ]
    )
    b_ub = np.zeros(2 * n)
    A_eq = np.hstack([np.ones((1, n)), np.zeros((1, 1))])
    bounds = [(0.0, None)] * n + [(None, 1.0)]
    from scipy import optimize as _spo  # here, not at import: slow to import

    lp = _spo.linprog(
        c,
        A_ub=A_ub,
        b_ub=b_ub,
        A_eq=A_eq,
        b_eq=[1.0],
        bounds=bounds,
        method="highs",
        options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},
    )
    if lp.status != 0:  # cannot happen for an antisymmetric matrix
        raise RuntimeError(f"Nash LP failed: {lp.message}")
    p_lp = np.clip(lp.x[:n], 0.0, None)
    slack = -(M @ p_lp)
    S = (p_lp > slack) & (p_lp > 1e3 * tol)
    if not np.any(S):
        S[np.argmax(p_lp)] = True
    idx = np.flatnonzero(S)
    if idx.size == 1:
        p = np.zeros(n)
        p[idx[0]] = 1.0
        return p
    # --- step 2: maximise entropy on S via the dual ---
    # Equality form first: (A p)_j = 0 for j in S holds on every equilibrium.
    # Dual: min_nu LSE(C nu) with C = A[S, S], p_S = softmax(C nu) (Newton).
    C = M[np.ix_(idx, idx)]
    nu = _lse_newton(C)
    p = np.zeros(n)
    p[idx] = _softmax(C @ nu)
    if np.max(M @ p) <= max(10.0 * tol, 1e-9):
        return p  # KKT holds with zero multipliers for the rows outside S
    # General form: rows outside S as inequalities (A p)_j <= tol, mu_j >= 0.
    B = M[idx, :]
    free = np.zeros(n, dtype=bool)
    free[idx] = True
    w = np.where(free, 0.0, tol)

    def fun(mu: np.ndarray) -> tuple[float, np.ndarray]:
        zz = B @ mu
        zmax = zz.max()
        e = np.exp(zz - zmax)
        tot = e.sum()
        return float(zmax + math.log(tot) + w @ mu), B.T @ (e / tot) + w

    mu0 = np.zeros(n)
    mu0[idx] = nu
    from scipy import optimize as _spo

    res = _spo.minimize(
        fun,
        mu0,
        jac=True,
        method="L-BFGS-B",
        bounds=[(None, None) if f else (0.0, None) for f in free],
        options={"ftol": 1e-16, "gtol": 1e-13, "maxiter": 20000, "maxcor": 30},
    )
    p = np.zeros(n)
    p[idx] = _softmax(B @ res.x)
    if np.max(M @ p) > 1e-7:  # did not converge: fall back to the LP point
        p = p_lp / p_lp.sum()
    return p


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max())
    return e / e.sum()


def _lse_newton(C: np.ndarray, max_iter: int = 200) -> np.ndarray:
    """Minimise ``log sum exp(C nu)`` over free ``nu`` (damped Newton, pseudo-inverse)."""
    k = C.shape[1]
    nu = np.zeros(k)

    def f(x: np.ndarray) -> float:
        z = C @ x
        zmax = z.max()
        return float(zmax + math.log(np.exp(z - zmax).sum()))

    fx = f(nu)
    for _ in range(max_iter):
        q = _softmax(C @ nu)
        g = C.T @ q
        if np.max(np.abs(g)) < 1e-14:
            break
        Cq = C * np.sqrt(q)[:, None]
        H = Cq.T @ Cq - np.outer(g, g)
        step = -np.linalg.lstsq(H, g, rcond=1e-13)[0]
        slope = float(g @ step)
        if not slope < 0.0:
            step, slope = -g, -float(g @ g)
        t = 1.0
        while t > 1e-12:
            fn = f(nu + t * step)
            if fn <= fx + 1e-4 * t * slope:
                break
            t *= 0.5
        else:
            break
        nu = nu + t * step
        if fx - fn < 1e-16 * max(1.0, abs(fx)) and t < 1.0:
            fx = fn
            break
        fx = fn
    return nu


# Fast path for many related games (the bootstrap of nash_average). A candidate
# support S is *certified* for a game A when the max-entropy mixture p on S
# under the equalities (A p)_S = 0 is strictly complementary: p_i > m for i in
# S and (A p)_j < -m for j outside S, with m = _FAST_MARGIN (and |(A p)_S| <=
# 1e-10). Then p is an equilibrium, and no equilibrium q puts weight on any j
# outside S (q' A p = 0 would force (A p)_j = 0), so S is the support of the
# max-entropy equilibrium and p is that equilibrium. The margin also makes
# nash_maxent's LP find the same S (its optimum t* >= min(p_S, -(A p)_out) > m,
# far above its 1e3*tol cut-off), after which it solves the same equality-form
# problem, so both return the same p up to nash_maxent's own accuracy (~1e-9).
_FAST_MARGIN = 1e-6
# Relative gap sigma_{k-1} / sigma_1 of C = A[S, S] above which the null space
# of C is one-dimensional and well conditioned, so the equilibrium on S is
# unique and read off the SVD (error ~1e-16 / gap); below it, damped Newton.
_FAST_GAP = 1e-4


def _solve_on_supports(
    Ms: np.ndarray, idx: np.ndarray, margin: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Certified max-entropy equilibria of games ``Ms`` (B, n, n) on supports ``idx`` (B, k).

    Returns ``(ok, P, R)``: ``ok`` (B,) marks the rows certified (see
    ``_FAST_MARGIN``); for those, ``P[b]`` is the equilibrium and
    ``R[b] = Ms[b] @ P[b]``. Other rows are meaningless.
    """
    B, n, _ = Ms.shape
    k = idx.shape[1]
    rows = np.arange(B)[:, None]
    if k == 1:
        pS = np.ones((B, 1))
    else:
        C = Ms[rows[:, :, None], idx[:, :, None], idx[:, None, :]]
        s = np.linalg.svd(C, compute_uv=False)
        scale = s[:, 0]
        unique = s[:, -2] > _FAST_GAP * scale  # null space of C at most 1-dim
        has_null = s[:, -1] <= 1e-9 * scale  # ... and at least 1-dim
        pS = np.full((B, k), np.nan)
        gen = np.flatnonzero(unique & has_null)
        if gen.size:
            v = np.linalg.svd(C[gen])[2][:, -1, :]
            with np.errstate(divide="ignore", invalid="ignore"):
                pS[gen] = v / v.sum(axis=1, keepdims=True)
        # several equilibria on S (clones, ties): maximise entropy as nash_maxent does
        for b in np.flatnonzero(~unique & has_null):
            pS[b] = _softmax(C[b] @ _lse_newton(C[b]))
    P = np.zeros((B, n))
    P[rows, idx] = pS
    R = np.einsum("bij,bj->bi", Ms, P)
    inS = np.zeros((B, n), dtype=bool)
    inS[rows, idx] = True
    with np.errstate(invalid="ignore"):
        ok = np.all(pS > margin, axis=1)
        ok &= np.max(np.where(inS, np.abs(R), 0.0), axis=1) <= 1e-10
        ok &= np.max(np.where(inS, -np.inf, R), axis=1) < -margin
    return ok, P, R


def _neighbour_supports(S: np.ndarray, n: int) -> list[np.ndarray]:
    """Supports one pivot away from ``S`` (sorted int array): swap one strategy,
    add or drop one (``S`` degenerate), add or drop two (a generic support has
    odd size). Returned as groups of equal size, as (m, k) int arrays."""
    inside = [int(i) for i in S]
    outside = [j for j in range(n) if j not in set(inside)]
    groups = []
    swaps = [sorted(set(inside) - {i} | {j}) for i in inside for j in outside]
    add1 = [sorted(inside + [j]) for j in outside]
    drop1 = [[x for x in inside if x != i] for i in inside]
    add2 = [sorted(inside + [j, m]) for a, j in enumerate(outside) for m in outside[a + 1 :]]
    drop2 = [
        [x for x in inside if x not in (i, m)]
        for a, i in enumerate(inside)
        for m in inside[a + 1 :]
    ]
    for g in (swaps, add1, drop1, add2, drop2):
        g = [x for x in g if x]
        if g:
            groups.append(np.array(g, dtype=np.intp))
    return groups


# Failed neighbour searches in a row after which nash_maxent_many stops searching.
_NEIGHBOUR_MISSES = 3


def nash_maxent_many(
    As: np.ndarray, hint: np.ndarray | None = None, tol: float = 1e-10
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`nash_maxent` for a stack of antisymmetric games ``As`` (B, n, n).

    Returns ``(P, R)``: ``P[b]`` equals ``nash_maxent(As[b], tol)`` up to that
    function's accuracy (~1e-9), and ``R[b] = As[b] @ P[b]``. A candidate
    support (first the boolean mask ``hint``) is tried on all unsolved games
    at once and accepted where certified (see ``_FAST_MARGIN``). The first
    game left is then tried on every support one pivot away from ``hint``
    (:func:`_neighbour_supports`), and only if none is certified handed to
    :func:`nash_maxent`; the support found becomes the next candidate. After
    :data:`_NEIGHBOUR_MISSES` searches in a row that certify nothing (noisy
    games, each of its own support: small cells), the search is skipped and
    the rest go straight to :func:`nash_maxent`, which costs a fifth as much
    as a failed search.
    """
    B, n, _ = As.shape
    P = np.zeros((B, n))
    R = np.zeros((B, n))
    if B == 0 or n == 0:
        return P, R
    # identical games (e.g. se = 0 everywhere) are solved once
    flat = np.ascontiguousarray(As).reshape(B, -1)
    uniq, first, inverse = np.unique(flat, axis=0, return_index=True, return_inverse=True)
    if uniq.shape[0] < B:
        Pu, Ru = nash_maxent_many(As[np.sort(first)], hint, tol)
        order = np.argsort(np.argsort(first))  # unique row -> position in sorted(first)
        sel = order[inverse.reshape(-1)]
        return Pu[sel], Ru[sel]
    margin = max(_FAST_MARGIN, 1e4 * tol)
    pending = np.arange(B)
    tried: set[bytes] = set()
    hint_idx = None if hint is None else np.flatnonzero(np.asarray(hint, dtype=bool))
    neighbours = None
    misses = 0  # neighbour searches in a row that certified nothing
    cand = hint_idx
    while pending.size:
        if cand is not None and cand.size and cand.tobytes() not in tried:
            tried.add(cand.tobytes())
            idx = np.broadcast_to(cand, (pending.size, cand.size))
            ok, Pc, Rc = _solve_on_supports(As[pending], idx, margin)
            P[pending[ok]] = Pc[ok]
            R[pending[ok]] = Rc[ok]
            pending = pending[~ok]
            cand = None
            continue
        b = pending[0]
        cand = None
        if hint_idx is not None and hint_idx.size and misses < _NEIGHBOUR_MISSES:
            if neighbours is None:
                neighbours = _neighbour_supports(hint_idx, n)
            for g in neighbours:
                ok = _solve_on_supports(np.broadcast_to(As[b], (len(g), n, n)), g, margin)[0]
                hit = np.flatnonzero(ok)
                if hit.size:
                    cand = g[hit[0]]
                    break
            misses = 0 if cand is not None else misses + 1
        if cand is None:
            P[b] = nash_maxent(As[b], tol)
            R[b] = As[b] @ P[b]
            pending = pending[1:]
            cand = np.flatnonzero(P[b] > 0.0)
    return P, R


def nash_average(
    score: ArrayLike, se: ArrayLike | None = None, n_boot: int = 200, seed: int = 0
) -> dict[str, np.ndarray]:
    """Nash averaging of a round-robin score matrix, with a parametric bootstrap.

    Parameters
    ----------
    score : array_like, shape (n, n)
        ``score[i, j]``: mean per-game score of row ``i`` against column ``j``
        (``score[j, i]`` should be ``1 - score[i, j]``; the diagonal is
        ignored). No ``nan`` off the diagonal.
    se : array_like, shape (n, n), optional
        Standard errors of the scores; the upper triangle is used (``nan``
        counts as 0).
    n_boot : int, default 200
        Bootstrap draws when ``se`` is given.
    seed : int, default 0
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    dict of ndarray
        ``p``: max-entropy Nash mixture (:func:`nash_maxent`) of
        ``A = (S - S')/2`` with ``S = score - 1/2``; ``rating = A @ p``: each
        strategy's expected score minus 1/2 against the Nash mixture (0 in the
        support, negative outside it); ``rating_lo``, ``rating_hi``, ``p_lo``,
        ``p_hi``: 2.5% / 97.5% bootstrap percentiles; ``support_share``: share
        of draws with ``p_i > 1e-6``. The bootstrap entries are ``nan`` when
        ``se`` is None.

    Notes
    -----
    The bootstrap draws ``score[i, j] + N(0, se[i, j]²)`` independently for
    ``i < j``, sets the lower triangle antisymmetrically and recomputes.
    Ratings are invariant to adding copies of a strategy (Balduzzi et al.
    2018); ``p`` is split between the copies, which sum to the original's
    weight when the equilibrium of the original game is unique.
    """
    S = np.array(score, dtype=float)
    if S.ndim != 2 or S.shape[0] != S.shape[1]:
        raise ValueError(f"score must be a square matrix, got shape {S.shape}")
    n = S.shape[0]
    np.fill_diagonal(S, 0.5)
    if not np.all(np.isfinite(S)):
        raise ValueError("score must be finite off the diagonal")
    A = S - 0.5
    A = (A - A.T) / 2.0
    p = nash_maxent(A)
    rating = A @ p
    nan_vec = np.full(n, np.nan)
    out = {
        "p": p,
        "rating": rating,
        "rating_lo": nan_vec.copy(),
        "rating_hi": nan_vec.copy(),
        "p_lo": nan_vec.copy(),
        "p_hi": nan_vec.copy(),
        "support_share": nan_vec.copy(),
    }
    if se is None or n == 0 or n_boot < 1:
        return out
    E = np.nan_to_num(np.asarray(se, dtype=float), nan=0.0)
    if E.shape != S.shape:
        raise ValueError("se must have the same shape as score")
    if np.any(E < 0):
        raise ValueError("se must be non-negative")
    iu = np.triu_indices(n, k=1)
    rng = np.random.default_rng(seed)
    # one call draws the same stream as n_boot calls of size len(iu[0])
    Z = rng.normal(0.0, 1.0, size=(n_boot, iu[0].size))
    As = np.zeros((n_boot, n, n))
    As[:, iu[0], iu[1]] = A[iu] + Z * E[iu]
    As = As - As.transpose(0, 2, 1)
    P, R = nash_maxent_many(As, hint=p > 0.0)
    out["rating_lo"], out["rating_hi"] = np.percentile(R, [2.5, 97.5], axis=0)
    out["p_lo"], out["p_hi"] = np.percentile(P, [2.5, 97.5], axis=0)
    out["support_share"] = (P > 1e-6).mean(axis=0)
    return out
