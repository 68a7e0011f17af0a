"""Tests for the methods in balance.stats added for METHODS.md.

Each test checks a function against a known answer: a hand computation, a
closed form, an independent numerical solution (scipy.optimize), or
statsmodels.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import optimize
from scipy import stats as sps
from statsmodels.stats.weightstats import ttost_paired

from balance import stats as st

Z95 = 1.959963984540054
ELO = 400.0 / math.log(10.0)


@pytest.fixture(autouse=True)
def _no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# ---------------------------------------------------------------- GSPRT


def _kl_slsqp(counts, values, mu):
    """KL(p_hat || p_mu) with p_mu the constrained MLE, by SLSQP on the simplex."""
    c = np.asarray(counts, float)
    v = np.asarray(values, float)
    ph = c / c.sum()
    obs = ph > 0

    def negll(p):
        return -np.sum(ph[obs] * np.log(p[obs]))

    cons = [
        {"type": "eq", "fun": lambda p: p.sum() - 1.0},
        {"type": "eq", "fun": lambda p: p @ v - mu},
    ]
    bounds = [(1e-15 if o else 0.0, 1.0) for o in obs]
    best = None
    for x0 in (np.full(v.size, 1.0 / v.size), (ph + 0.01) / (ph + 0.01).sum()):
        r = optimize.minimize(
            negll,
            x0,
            method="SLSQP",
            bounds=bounds,
            constraints=cons,
            options={"ftol": 1e-15, "maxiter": 2000},
        )
        if best is None or r.fun < best.fun:
            best = r
    return best.fun + np.sum(ph[obs] * np.log(ph[obs]))


def _fishtest_llr(counts, s0, s1, eps=1e-3):
    """Fishtest's LLR_logistic algorithm (regularise, secular equation, MLE)."""
    res = [x if x > 0 else eps for x in counts]
    n = sum(res)
    k = len(res)
    pdf = [(i / (k - 1), r / n) for i, r in enumerate(res)]

    def mle(s):
        a = [ai - s for ai, _ in pdf]
        lo, hi = -1 / max(a), -1 / min(a)

        def f(x):
            return sum(p * ai / (1 + x * ai) for ai, (_, p) in zip(a, pdf, strict=False))

        x = optimize.brentq(f, lo + 1e-9, hi - 1e-9)
        return [p / (1 + x * ai) for ai, (_, p) in zip(a, pdf, strict=False)]

    p0, p1 = mle(s0), mle(s1)
    return n * sum(
        p * (math.log(q1) - math.log(q0)) for (_, p), q0, q1 in zip(pdf, p0, p1, strict=False)
    )


PENTA = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
TRI = np.array([0.0, 0.5, 1.0])


@pytest.mark.parametrize(
    "counts,values,mu0,mu1",
    [
        ([10, 40, 100, 45, 12], PENTA, 0.5, 0.53),
        ([3, 17, 60, 31, 9], PENTA, 0.52, 0.47),
        ([120, 70, 210], TRI, 0.5, 0.55),
        # mu1 above every observed value: the MLE needs the empty top bins
        ([0, 3, 10, 2, 0], PENTA, 0.5, 0.6),
        ([0, 0, 5, 7, 0], PENTA, 0.45, 0.7),
        # a single observed bin
        ([0, 0, 5, 0, 0], PENTA, 0.5, 0.55),
        ([0, 0, 0, 9, 30, 4, 0, 0, 0], st.PAIR_DIFF_VALUES, 0.0, 0.02),
    ],
)
def test_gsprt_llr_matches_numerical_mle(counts, values, mu0, mu1):
    n = sum(counts)
    expect = n * (_kl_slsqp(counts, values, mu0) - _kl_slsqp(counts, values, mu1))
    assert st.gsprt_llr(counts, values, mu0, mu1) == pytest.approx(expect, rel=1e-6, abs=1e-8)


def test_gsprt_llr_two_point_is_classic_sprt():
    # values {0, 1}: the only distribution with mean mu is Bernoulli(mu)
    k, n, p0, p1 = 37, 60, 0.5, 0.6
    expect = k * math.log(p1 / p0) + (n - k) * math.log((1 - p1) / (1 - p0))
    assert st.gsprt_llr([n - k, k], [0.0, 1.0], p0, p1) == pytest.approx(expect, rel=1e-12)


def test_gsprt_llr_matches_fishtest_when_no_bin_is_empty():
    counts = [1, 60, 500, 1200, 600]
    s0, s1 = 0.5, 0.503
    assert st.gsprt_llr(counts, PENTA, s0, s1) == pytest.approx(
        _fishtest_llr(counts, s0, s1), rel=1e-8
    )


def test_gsprt_llr_is_limit_of_fishtest_regularisation():
    counts = [0, 3, 10, 2, 0]
    mine = st.gsprt_llr(counts, PENTA, 0.5, 0.6)
    assert _fishtest_llr(counts, 0.5, 0.6, eps=1e-7) == pytest.approx(mine, rel=1e-5)


def test_gsprt_llr_near_normal_approximation():
    # Fishtest LLR_alt2: N (s1 - s0)(2 s - s0 - s1) / (2 var), good for small s1 - s0
    counts = np.array([30, 400, 1500, 450, 40])
    n = counts.sum()
    w = counts / n
    s = w @ PENTA
    var = w @ (PENTA - s) ** 2
    s0, s1 = 0.5, 0.505
    approx = n * (s1 - s0) * (2 * s - s0 - s1) / var / 2
    assert st.gsprt_llr(counts, PENTA, s0, s1) == pytest.approx(approx, rel=0.01)


def test_gsprt_llr_sign_and_edge_cases():
    counts = [5, 20, 50, 30, 10]  # mean 62.5 / 115 = 0.5435
    mean = np.dot(counts, PENTA) / sum(counts)
    assert mean == pytest.approx(62.5 / 115)
    assert st.gsprt_llr(counts, PENTA, 0.5, 0.53) > 0  # data near mu1
    assert st.gsprt_llr(counts, PENTA, 0.53, 0.5) < 0
    assert st.gsprt_llr(counts, PENTA, 0.5, 0.6) < 0  # data nearer mu0
    # antisymmetric in (mu0, mu1); linear in N for fixed shares
    a = st.gsprt_llr(counts, PENTA, 0.5, 0.56)
    assert st.gsprt_llr(counts, PENTA, 0.56, 0.5) == pytest.approx(-a, rel=1e-12)
    assert st.gsprt_llr(np.array(counts) * 7, PENTA, 0.5, 0.56) == pytest.approx(7 * a, rel=1e-10)
    assert st.gsprt_llr([0, 0, 0, 0, 0], PENTA, 0.5, 0.55) == 0.0
    assert st.gsprt_llr([], [], 0.5, 0.55) == 0.0
    assert st.gsprt_llr(counts, PENTA, 0.5, 0.5) == 0.0
    with pytest.raises(ValueError):
        st.gsprt_llr(counts, PENTA, 0.5, 1.0)
    with pytest.raises(ValueError):
        st.gsprt_llr(counts, PENTA, -0.1, 0.5)


def test_gsprt_llr_all_draws_single_bin_hand_value():
    # every pair difference 0: KL(0) = 0, and the MLE with mean delta puts
    # 1 - delta on 0 and delta on the (empty) top bin +1, so LLR = N log(1 - delta)
    n, delta = 40, 0.02
    c = np.zeros(9)
    c[4] = n
    assert st.gsprt_llr(c, st.PAIR_DIFF_VALUES, 0.0, delta) == pytest.approx(
        n * math.log(1 - delta), rel=1e-12
    )


# ---------------------------------------------------------------- SPRT bounds


def test_sprt_bounds():
    lo, hi = st.sprt_bounds()
    assert lo == pytest.approx(-2.944438979166440, abs=1e-12)
    assert hi == pytest.approx(2.944438979166440, abs=1e-12)
    lo, hi = st.sprt_bounds(0.05, 0.10)
    assert lo == pytest.approx(math.log(0.10 / 0.95))
    assert hi == pytest.approx(math.log(0.90 / 0.05))
    with pytest.raises(ValueError):
        st.sprt_bounds(0.0, 0.05)


# ---------------------------------------------------------------- paired differences


def test_pair_diff_counts_hand_case():
    a = [0, 2, 4, 2, 3, 1]
    b = [4, 2, 0, 3, 3, 2]  # diffs 4, 0, -4, 1, 0, 1
    c = st.pair_diff_counts(a, b)
    assert c.dtype == np.int64
    assert c.tolist() == [1, 0, 0, 0, 2, 2, 0, 0, 1]
    assert st.PAIR_DIFF_VALUES.tolist() == [-1, -0.75, -0.5, -0.25, 0, 0.25, 0.5, 0.75, 1]
    # mean of the histogram = mean per-game difference B - A
    assert np.dot(c, st.PAIR_DIFF_VALUES) / c.sum() == pytest.approx(2 / 4 / 6)
    assert st.pair_diff_counts([], []).tolist() == [0] * 9
    with pytest.raises(ValueError):
        st.pair_diff_counts([0, 1], [0])
    with pytest.raises(ValueError):
        st.pair_diff_counts([0, 5], [0, 1])


def _sequential(rng, probs, delta, step=100, max_pairs=20000):
    """Run sprt_pair_diff on simulated diff codes -2..2, checking every `step` pairs."""
    counts = np.zeros(9, dtype=np.int64)
    res = None
    while counts.sum() < max_pairs:
        k = rng.choice(np.arange(-2, 3), size=step, p=probs)
        counts += np.bincount(k + 4, minlength=9)
        res = st.sprt_pair_diff(counts, delta)
        if res["decision"] != "continue":
            break
    return res


NULL_P = [0.05, 0.15, 0.60, 0.15, 0.05]  # mean code diff 0
UP_P = [0.03, 0.12, 0.59, 0.18, 0.08]  # mean code diff 0.16 = score diff 0.04


def test_sprt_pair_diff_bounds_and_estimates():
    a = np.array([0, 2, 4, 2, 3, 1, 2, 2, 1, 3])
    b = np.array([1, 2, 3, 3, 3, 2, 2, 4, 1, 3])
    res = st.sprt_pair_diff(st.pair_diff_counts(a, b), 0.02)
    assert res["lower"] == pytest.approx(math.log(0.05 / 0.975))  # -2.9704
    assert res["upper"] == pytest.approx(math.log(0.95 / 0.025))  # 3.6376
    ref = st.paired_diff_from_points(b, a)
    for key in ("se", "lo", "hi"):
        assert res[key] == pytest.approx(ref[key], rel=1e-12)
    assert res["diff"] == pytest.approx(ref["mean"], rel=1e-12)
    assert res["n_pairs"] == 10
    c = st.pair_diff_counts(a, b)
    assert res["llr_up"] == st.gsprt_llr(c, st.PAIR_DIFF_VALUES, 0.0, 0.02)
    assert res["llr_down"] == st.gsprt_llr(c, st.PAIR_DIFF_VALUES, 0.0, -0.02)


def test_sprt_pair_diff_decisions_on_simulated_data():
    delta = 0.02
    rng = np.random.default_rng(20240611)
    assert _sequential(rng, NULL_P, delta)["decision"] == "no change"
    up = _sequential(rng, UP_P, delta)
    assert up["decision"] == "raises"
    assert up["diff"] > 0 and up["llr_up"] >= up["upper"]
    down = _sequential(rng, UP_P[::-1], delta)
    assert down["decision"] == "lowers"
    assert down["diff"] < 0 and down["llr_down"] >= down["upper"]


def test_sprt_pair_diff_error_rates():
    # Wald: false alarm <= alpha (checks every 100 pairs make it conservative);
    # at a true change of 2 delta the power is well above 1 - beta.
    delta = 0.02
    rng = np.random.default_rng(7)
    null = [_sequential(rng, NULL_P, delta)["decision"] for _ in range(30)]
    alt = [_sequential(rng, UP_P, delta)["decision"] for _ in range(30)]
    assert sum(d in ("raises", "lowers") for d in null) <= 4  # expected <= 1.5
    assert sum(d == "raises" for d in alt) >= 27


def test_sprt_pair_diff_empty():
    res = st.sprt_pair_diff(np.zeros(9), 0.02)
    assert res["decision"] == "continue"
    assert res["llr_up"] == 0.0 and res["llr_down"] == 0.0
    assert res["n_pairs"] == 0 and math.isnan(res["diff"]) and math.isnan(res["se"])


# ---------------------------------------------------------------- pentanomial SPRT


def test_sprt_pentanomial():
    counts = [1, 60, 500, 1200, 600]
    res = st.sprt_pentanomial(counts, 0.5, 0.503)
    assert res["llr"] == pytest.approx(_fishtest_llr(counts, 0.5, 0.503), rel=1e-8)
    assert res["decision"] == "H1"  # score 0.7154, far above s1
    assert res["score"] == pytest.approx(st.pentanomial_score(counts)["score"])
    assert res["n_pairs"] == 2361
    assert (res["lower"], res["upper"]) == st.sprt_bounds()
    # a balanced sample accepts H0 ("no gain of 10%")
    res0 = st.sprt_pentanomial([100, 200, 400, 200, 100], 0.5, 0.6)
    assert res0["decision"] == "H0" and res0["llr"] < res0["lower"]
    res_c = st.sprt_pentanomial([1, 2, 4, 2, 1], 0.5, 0.51)
    assert res_c["decision"] == "continue"
    empty = st.sprt_pentanomial([0] * 5, 0.5, 0.51)
    assert empty["llr"] == 0.0 and empty["decision"] == "continue"
    assert math.isnan(empty["score"])


# ---------------------------------------------------------------- TOST


@pytest.mark.parametrize("seed,shift", [(0, 0.0), (1, 0.015), (2, -0.03), (3, 0.004)])
def test_tost_paired_matches_statsmodels(seed, shift):
    rng = np.random.default_rng(seed)
    d = rng.normal(shift, 0.1, size=300)
    margin = 0.02
    res = st.tost_paired(d, margin)
    p, (t1, pv1, df1), (t2, pv2, df2) = ttost_paired(d, np.zeros_like(d), -margin, margin)
    assert res["p"] == pytest.approx(float(p), abs=1e-10)
    assert res["p_lower"] == pytest.approx(float(pv1), abs=1e-10)
    assert res["p_upper"] == pytest.approx(float(pv2), abs=1e-10)
    assert res["n"] == 300 and df1 == 299
    # the TOST rejects exactly when the 90% CI lies inside the margin
    assert res["equivalent"] == (-margin < res["lo90"] and res["hi90"] < margin)


def test_tost_normal_hand_value():
    res = st.tost(0.01, 0.005, 0.02)
    assert res["p_upper"] == pytest.approx(sps.norm.cdf(-2.0), rel=1e-12)  # 0.02275
    assert res["p_lower"] == pytest.approx(sps.norm.sf(6.0), rel=1e-12)
    assert res["p"] == pytest.approx(0.022750131948179, rel=1e-10)
    assert res["equivalent"] is True
    assert res["lo90"] == pytest.approx(0.01 - 1.6448536269514722 * 0.005, rel=1e-12)
    assert res["hi90"] == pytest.approx(0.01 + 1.6448536269514722 * 0.005, rel=1e-12)
    # t reference: wider, bigger p
    t = st.tost(0.01, 0.005, 0.02, df=10)
    assert t["p"] == pytest.approx(sps.t.cdf(-2.0, 10), rel=1e-12)
    # not equivalent when the estimate sits at the margin
    assert st.tost(0.02, 0.005, 0.02)["p"] == pytest.approx(0.5)
    assert st.tost(0.02, 0.005, 0.02)["equivalent"] is False


def test_tost_edge_cases():
    assert st.tost(0.0, 0.0, 0.02)["p"] == 0.0
    assert st.tost(0.05, 0.0, 0.02)["p"] == 1.0
    r = st.tost(float("nan"), 0.01, 0.02)
    assert math.isnan(r["p"]) and r["equivalent"] is False
    for d in ([], [0.1]):
        r = st.tost_paired(d, 0.02)
        assert math.isnan(r["p"]) and r["equivalent"] is False and r["n"] == len(d)
    with pytest.raises(ValueError):
        st.tost(0.0, 0.01, 0.0)


# ---------------------------------------------------------------- Bradley-Terry


def test_bradley_terry_two_players():
    n, p = 400, 0.75
    df = st.bradley_terry(2, [0], [1], [n], [p * n], names=["a", "b"])
    assert list(df.columns) == ["player", "rating", "se", "lo", "hi", "games"]
    assert df["player"].tolist() == ["a", "b"]
    diff = df["rating"][0] - df["rating"][1]
    assert diff == pytest.approx(400 * math.log10(3), rel=1e-8)  # 190.85
    assert df["rating"].sum() == pytest.approx(0.0, abs=1e-9)
    # SE of the logit difference is 1/sqrt(n p (1-p)); each centred rating has half
    se_diff = ELO / math.sqrt(n * p * (1 - p))
    assert df["se"][0] == pytest.approx(se_diff / 2, rel=1e-6)
    cov = np.array(df.attrs["cov"])
    var_diff = cov[0, 0] + cov[1, 1] - 2 * cov[0, 1]
    assert math.sqrt(var_diff) == pytest.approx(se_diff, rel=1e-6)
    assert df["lo"][0] == pytest.approx(df["rating"][0] - Z95 * df["se"][0])
    assert df["games"].tolist() == [n, n]
    assert df.attrs["mle_exists"] is True


def _expected(r_i, r_j):
    return 1.0 / (1.0 + 10 ** ((r_j - r_i) / 400.0))


def test_bradley_terry_recovers_generating_ratings():
    true = np.array([-120.0, 20.0, 100.0])
    i, j = [0, 0, 1], [1, 2, 2]
    g = [200, 300, 250]
    s = [gg * _expected(true[a], true[b]) for a, b, gg in zip(i, j, g, strict=False)]
    df = st.bradley_terry(3, i, j, g, s)
    assert df["rating"].to_numpy() == pytest.approx(true, abs=1e-6)
    assert df["player"].tolist() == [0, 1, 2]


def test_bradley_terry_covariance_is_pinv_of_information():
    # independent check: MLE by direct optimisation, covariance of the
    # sum-to-zero estimates = pseudo-inverse of the Fisher information
    i = np.array([0, 0, 1, 1, 2, 3])
    j = np.array([1, 2, 2, 3, 3, 0])
    g = np.array([50, 40, 60, 30, 45, 55], float)
    s = np.array([31, 18.5, 40, 12, 25, 20])
    df = st.bradley_terry(4, i, j, g, s)

    def nll(th):
        eta = th[i] - th[j]
        return -np.sum(s * eta - g * np.logaddexp(0, eta))

    r = optimize.minimize(nll, np.zeros(4), method="BFGS", options={"gtol": 1e-10})
    th = r.x - r.x.mean()
    assert df["rating"].to_numpy() == pytest.approx(ELO * th, abs=1e-4)
    pr = 1 / (1 + np.exp(-(th[i] - th[j])))
    info = np.zeros((4, 4))
    for a, b, w in zip(i, j, g * pr * (1 - pr), strict=False):
        x = np.zeros(4)
        x[a], x[b] = 1, -1
        info += w * np.outer(x, x)
    cov = ELO**2 * np.linalg.pinv(info)
    assert np.array(df.attrs["cov"]) == pytest.approx(cov, rel=1e-5, abs=1e-6)
    assert df["se"].to_numpy() == pytest.approx(np.sqrt(np.diag(cov)), rel=1e-5)


def test_bradley_terry_missing_player_and_nonexistent_mle():
    df = st.bradley_terry(3, [0], [2], [10], [6])
    assert math.isnan(df["rating"][1]) and df["games"][1] == 0
    assert df["rating"][0] - df["rating"][2] == pytest.approx(400 * math.log10(1.5))
    # player 2 loses every game: the MLE does not exist (rating -> -inf)
    i, j, g, s = [0, 0, 1], [1, 2, 2], [10, 10, 10], [6, 10, 10]
    df = st.bradley_terry(3, i, j, g, s)
    assert df.attrs["mle_exists"] is False and df["rating"].isna().all()
    df = st.bradley_terry(3, i, j, g, s, virtual_draws=1.0)
    assert df.attrs["mle_exists"] is True
    r = df["rating"].to_numpy()
    assert np.all(np.isfinite(r)) and r[0] > r[1] > r[2]
    empty = st.bradley_terry(2, [], [], [], [])
    assert empty["rating"].isna().all() and len(empty) == 2


# ---------------------------------------------------------------- dominance and cycles


RPS_LO = np.array([[np.nan, 0.6, 0.3], [0.3, np.nan, 0.6], [0.6, 0.3, np.nan]])


def test_dominant():
    assert st.dominant(RPS_LO) == []
    lo = np.array([[0.5, 0.55, 0.7], [0.4, 0.5, 0.52], [0.2, 0.45, 0.5]])
    assert st.dominant(lo) == [0]
    lo[0, 2] = np.nan  # unknown -> not shown dominant
    assert st.dominant(lo) == []
    lo[0, 2] = 0.5  # a bound exactly at 1/2 is not enough
    assert st.dominant(lo) == []
    assert st.dominant(np.zeros((0, 0))) == [] and st.dominant([[0.5]]) == []


def test_three_cycles():
    assert st.three_cycles(RPS_LO) == [(0, 1, 2)]
    # reversed orientation: 0 beats 2 beats 1 beats 0
    assert st.three_cycles(RPS_LO.T) == [(0, 2, 1)]
    # 4 strategies: rock, paper, scissors and a "paper" clone 3
    lo = np.full((4, 4), 0.3)
    for a, b in [(0, 2), (1, 0), (2, 1), (3, 0), (2, 3)]:
        lo[a, b] = 0.6
    assert st.three_cycles(lo) == [(0, 2, 1), (0, 2, 3)]
    lo[2, 3] = np.nan
    assert st.three_cycles(lo) == [(0, 2, 1)]
    assert st.three_cycles(np.zeros((2, 2))) == []


# ---------------------------------------------------------------- Nash


RPS = np.array([[0.0, 1.0, -1.0], [-1.0, 0.0, 1.0], [1.0, -1.0, 0.0]])


def _clone(a, k):
    idx = list(range(len(a))) + [k]
    return a[np.ix_(idx, idx)]


def test_nash_maxent_known_equilibria():
    assert st.nash_maxent(RPS) == pytest.approx([1 / 3] * 3, abs=1e-9)
    # weighted RPS [[0, a, -b], [-a, 0, c], [b, -c, 0]]: p = (c, b, a) / (a + b + c)
    a, b, c = 1.0, 2.0, 3.0
    w = np.array([[0, a, -b], [-a, 0, c], [b, -c, 0]])
    assert st.nash_maxent(w) == pytest.approx([c / 6, b / 6, a / 6], abs=1e-9)
    # cloned rock: equilibria put 1/3 on {rock, clone} in any split; max-entropy halves it
    assert st.nash_maxent(_clone(RPS, 0)) == pytest.approx([1 / 6, 1 / 3, 1 / 3, 1 / 6], abs=1e-9)
    # two tied strategies that both beat a third
    tie = np.array([[0.0, 0.0, 1.0], [0.0, 0.0, 1.0], [-1.0, -1.0, 0.0]])
    assert st.nash_maxent(tie) == pytest.approx([0.5, 0.5, 0.0], abs=1e-9)
    # all ties: uniform
    assert st.nash_maxent(np.zeros((4, 4))) == pytest.approx([0.25] * 4, abs=1e-12)
    assert st.nash_maxent(np.zeros((0, 0))).shape == (0,)
    assert st.nash_maxent([[0.0]]).tolist() == [1.0]


def test_nash_maxent_inequality_active_outside_support():
    # 0 and 1 tie; 2 beats 0 by 1 and loses to 1 by 0.5. Mixtures (a, 1-a, 0) are
    # equilibria for a <= 1/3 (2 earns 1.5 a - 0.5 <= 0); the max-entropy one is a = 1/3.
    a = np.array([[0.0, 0.0, -1.0], [0.0, 0.0, 0.5], [1.0, -0.5, 0.0]])
    p = st.nash_maxent(a)
    assert p == pytest.approx([1 / 3, 2 / 3, 0.0], abs=1e-8)


def test_nash_maxent_matches_lp_for_generic_games():
    # a generic antisymmetric matrix has a unique equilibrium: the LP's
    rng = np.random.default_rng(3)
    for _ in range(20):
        n = int(rng.integers(2, 9))
        x = rng.normal(size=(n, n))
        a = (x - x.T) / 2
        lp = optimize.linprog(
            np.r_[np.zeros(n), -1.0],
            A_ub=np.c_[-a.T, np.ones(n)],
            b_ub=np.zeros(n),
            A_eq=np.r_[np.ones(n), 0.0][None],
            b_eq=[1.0],
            bounds=[(0, None)] * n + [(None, None)],
            method="highs",
        )
        assert lp.x[-1] == pytest.approx(0.0, abs=1e-9)  # value of the game
        p = st.nash_maxent(a)
        assert p == pytest.approx(lp.x[:n], abs=1e-6)
        assert np.max(a @ p) < 1e-8 and p.sum() == pytest.approx(1.0)


def test_nash_maxent_validates():
    with pytest.raises(ValueError):
        st.nash_maxent(np.ones((2, 3)))
    with pytest.raises(ValueError):
        st.nash_maxent([[0.0, 1.0], [1.0, 0.0]])


def _score_from_payoff(a):
    return 0.5 + a


def test_nash_average_rps_and_dominant():
    res = st.nash_average(_score_from_payoff(0.2 * RPS))
    assert res["p"] == pytest.approx([1 / 3] * 3, abs=1e-9)
    assert res["rating"] == pytest.approx([0, 0, 0], abs=1e-9)
    assert np.isnan(res["rating_lo"]).all() and np.isnan(res["support_share"]).all()
    score = np.array([[0.5, 0.7, 0.6], [0.3, 0.5, 0.55], [0.4, 0.45, 0.5]])
    res = st.nash_average(score)
    assert res["p"] == pytest.approx([1, 0, 0], abs=1e-9)
    # transitive: ratings = score against the pure Nash strategy minus 1/2
    assert res["rating"] == pytest.approx([0.0, -0.2, -0.1], abs=1e-9)


def test_nash_average_transitive_hand_computed():
    # 0 beats 1 (0.6) but loses to 2 (0.45); 1 beats 2 (0.6): a cycle with weights
    # A = [[0, .1, -.05], [-.1, 0, .1], [.05, -.1, 0]] -> p = (c, b, a)/(a+b+c)
    # with a = .1, b = .05, c = .1: p = (.4, .2, .4)
    score = np.array([[0.5, 0.6, 0.45], [0.4, 0.5, 0.6], [0.55, 0.4, 0.5]])
    res = st.nash_average(score)
    assert res["p"] == pytest.approx([0.4, 0.2, 0.4], abs=1e-9)
    assert res["rating"] == pytest.approx([0, 0, 0], abs=1e-9)


def test_nash_average_clone_invariance():
    base = np.array(
        [
            [0.0, 0.1, -0.2, 0.1],
            [-0.1, 0.0, 0.3, 0.2],
            [0.2, -0.3, 0.0, -0.05],
            [-0.1, -0.2, 0.05, 0.0],
        ]
    )
    r0 = st.nash_average(_score_from_payoff(base))
    assert r0["p"][3] == pytest.approx(0.0, abs=1e-9)  # 4th is beaten by the mixture
    assert r0["rating"][3] < -1e-3
    for k in range(4):
        r1 = st.nash_average(_score_from_payoff(_clone(base, k)))
        assert r1["rating"][:4] == pytest.approx(r0["rating"], abs=1e-8)
        assert r1["rating"][4] == pytest.approx(r0["rating"][k], abs=1e-8)
        assert r1["p"][k] + r1["p"][4] == pytest.approx(r0["p"][k], abs=1e-8)
        others = [x for x in range(4) if x != k]
        assert r1["p"][others] == pytest.approx(r0["p"][others], abs=1e-8)


def test_nash_average_bootstrap():
    base = np.array(
        [
            [0.0, 0.1, -0.2, 0.1],
            [-0.1, 0.0, 0.3, 0.2],
            [0.2, -0.3, 0.0, -0.05],
            [-0.1, -0.2, 0.05, 0.0],
        ]
    )
    score = _score_from_payoff(base)
    se = np.full((4, 4), 0.01)
    r = st.nash_average(score, se=se, n_boot=40, seed=1)
    assert r["support_share"][:3] == pytest.approx([1, 1, 1])
    assert r["support_share"][3] == pytest.approx(0.0)
    assert np.all(r["p_lo"][:3] < r["p"][:3]) and np.all(r["p"][:3] < r["p_hi"][:3])
    assert r["rating_lo"][3] < r["rating"][3] < r["rating_hi"][3]
    assert r["rating_hi"][:3] == pytest.approx([0, 0, 0], abs=1e-8)
    again = st.nash_average(score, se=se, n_boot=40, seed=1)
    assert np.array_equal(again["rating_lo"], r["rating_lo"])
    assert st.nash_average(np.zeros((0, 0)))["p"].shape == (0,)


def _nash_boot_reference(score, se, n_boot, seed):
    """nash_average's bootstrap as first written: one exact nash_maxent per draw."""
    S = np.array(score, dtype=float)
    n = S.shape[0]
    np.fill_diagonal(S, 0.5)
    A = S - 0.5
    A = (A - A.T) / 2.0
    E = np.nan_to_num(np.asarray(se, dtype=float), nan=0.0)
    iu = np.triu_indices(n, k=1)
    rng = np.random.default_rng(seed)
    As, P, R = np.empty((n_boot, n, n)), np.empty((n_boot, n)), np.empty((n_boot, n))
    for b in range(n_boot):
        Ab = np.zeros((n, n))
        Ab[iu] = A[iu] + rng.normal(0.0, 1.0, size=iu[0].size) * E[iu]
        Ab = Ab - Ab.T
        As[b] = Ab
        P[b] = st.nash_maxent(Ab)
        R[b] = Ab @ P[b]
    return A, As, P, R


def _random_score(rng, n, cycle):
    """Transitive strengths plus intransitive noise of size ``cycle``, as a score matrix."""
    strength = rng.normal(0.0, 0.08, n)
    x = rng.normal(0.0, cycle, (n, n))
    S = np.clip(0.5 + strength[:, None] - strength[None, :] + (x - x.T) / 2, 0.01, 0.99)
    S = np.triu(S, 1)
    S = S + np.tril(1.0 - S.T, -1)
    np.fill_diagonal(S, 0.5)
    return S


def _realistic_7():
    """7 strategies: a transitive ladder with a few strong intransitivities."""
    strength = np.array([0.08, 0.05, 0.04, 0.0, -0.02, -0.06, -0.1])
    S = 0.5 + strength[:, None] - strength[None, :]
    for i, j, d in [(0, 2, -0.18), (2, 4, -0.15), (1, 3, -0.12), (3, 0, 0.14), (5, 1, 0.16)]:
        S[i, j] += d
        S[j, i] -= d
    return S, np.full((7, 7), 0.005)


@pytest.mark.slow
@pytest.mark.parametrize("n, n_draws", [(7, 8), (27, 3)])
def test_nash_maxent_many_matches_exact_solver(n, n_draws, monkeypatch):
    # the batched, support-certifying solver used by the bootstrap against one
    # exact nash_maxent per game, on 50 noisy random matrices of each size
    exact = st.nash_maxent
    calls = []
    # nash_maxent is called from balance.stats.nash, so the patch goes there
    monkeypatch.setattr(
        st.nash, "nash_maxent", lambda a, tol=1e-10: calls.append(1) or exact(a, tol)
    )
    rng = np.random.default_rng(100 + n)
    n_games = n_lp = 0
    for c in range(50):
        score = _random_score(rng, n, cycle=[0.02, 0.1, 0.3][c % 3])
        se = np.full((n, n), [0.002, 0.005, 0.03][c % 3])
        A, As, P_ref, R_ref = _nash_boot_reference(score, se, n_draws, seed=c)
        before = len(calls)
        P, R = st._nash_maxent_many(As, hint=exact(A) > 0)
        n_lp += len(calls) - before
        assert P == pytest.approx(P_ref, abs=1e-8)
        assert R == pytest.approx(R_ref, abs=1e-8)
        assert np.array_equal(P > 1e-6, P_ref > 1e-6)
        n_games += n_draws
    # nearly all games are solved without the LP
    assert n_lp < 0.15 * n_games


@pytest.mark.parametrize(
    "case",
    ["realistic", "tie", "dominant", "clone", "clone_se0_pair", "inequality", "zeros", "n1", "n2"],
)
@pytest.mark.slow  # measured over 1 s in the fast tier
@pytest.mark.parametrize("se_kind", ["noise", "zero", "nan"])
def test_nash_average_matches_per_draw_reference(case, se_kind):
    # nash_average's fast bootstrap = the per-draw exact solver on the same RNG
    # stream, including degenerate games (ties, a dominant strategy, clones)
    tie = np.array([[0.0, 0.0, 1.0], [0.0, 0.0, 1.0], [-1.0, -1.0, 0.0]])
    ineq = np.array([[0.0, 0.0, -1.0], [0.0, 0.0, 0.5], [1.0, -0.5, 0.0]])
    score = {
        "realistic": _realistic_7()[0],
        "tie": _score_from_payoff(0.2 * tie),
        "dominant": np.array([[0.5, 0.7, 0.6], [0.3, 0.5, 0.55], [0.4, 0.45, 0.5]]),
        "clone": _score_from_payoff(0.2 * _clone(RPS, 0)),
        "clone_se0_pair": _score_from_payoff(0.2 * _clone(RPS, 0)),
        "inequality": _score_from_payoff(0.1 * ineq),
        "zeros": np.full((4, 4), 0.5),
        "n1": np.array([[0.5]]),
        "n2": np.array([[0.5, 0.6], [0.4, 0.5]]),
    }[case]
    n = score.shape[0]
    se = np.full((n, n), {"noise": 0.005, "zero": 0.0, "nan": np.nan}[se_kind])
    if case == "clone_se0_pair":
        se[0, 3] = se[3, 0] = 0.0  # the clone pair's score is known exactly
    n_boot = 40
    res = st.nash_average(score, se=se, n_boot=n_boot, seed=7)
    A, _, P, R = _nash_boot_reference(score, se, n_boot, seed=7)
    assert res["p"] == pytest.approx(st.nash_maxent(A), abs=1e-12)
    for key, ref in [
        ("rating_lo", np.percentile(R, 2.5, axis=0)),
        ("rating_hi", np.percentile(R, 97.5, axis=0)),
        ("p_lo", np.percentile(P, 2.5, axis=0)),
        ("p_hi", np.percentile(P, 97.5, axis=0)),
    ]:
        assert res[key] == pytest.approx(ref, abs=1e-8), key
    assert np.array_equal(res["support_share"], (P > 1e-6).mean(axis=0))


@pytest.mark.slow
def test_noisy_draws_of_their_own_supports_stop_the_neighbour_search(monkeypatch):
    # small cells (20 games a pairing of 28 loadouts): nearly every draw has a
    # support of its own, so the search one pivot away certifies nothing; after
    # a few such searches the solver goes straight to the LP, with the same answers
    rng = np.random.default_rng(3)
    score = _random_score(rng, 28, cycle=0.3)
    se = np.full((28, 28), np.sqrt(0.25 / 20))
    A, As, P_ref, R_ref = _nash_boot_reference(score, se, 60, seed=5)
    searched = []
    real = st.nash._solve_on_supports
    monkeypatch.setattr(
        st.nash, "_solve_on_supports", lambda *a: searched.append(len(a[1])) or real(*a)
    )
    P, R = st._nash_maxent_many(As, hint=st.nash_maxent(A) > 0)
    assert P == pytest.approx(P_ref, abs=1e-8) and R == pytest.approx(R_ref, abs=1e-8)
    # searching every draw tries each of the hint's neighbour groups on it: 5 here
    groups = len(st.nash._neighbour_supports(np.flatnonzero(st.nash_maxent(A) > 0), 28))
    assert groups == 5
    assert len(searched) < 2 * 60  # the search stopped: fewer than two batches a draw
    monkeypatch.setattr(st.nash, "_NEIGHBOUR_MISSES", 10**9)  # never stop searching
    searched.clear()
    again = st._nash_maxent_many(As, hint=st.nash_maxent(A) > 0)
    assert again[0] == pytest.approx(P, abs=1e-8)
    assert len(searched) > 3 * 60


def test_nash_average_bootstrap_needs_few_lp_solves(monkeypatch):
    # the 200-draw bootstrap of a realistic 7x7 matrix solves (almost) every draw
    # from the point estimate's support, not with one LP per draw
    score, se = _realistic_7()
    exact = st.nash_maxent
    calls = []
    # nash_maxent is called from balance.stats.nash, so the patch goes there
    monkeypatch.setattr(
        st.nash, "nash_maxent", lambda a, tol=1e-10: calls.append(1) or exact(a, tol)
    )
    res = st.nash_average(score, se=se, n_boot=200, seed=0)
    assert 1 <= len(calls) <= 5  # the point estimate plus at most a few fallbacks
    assert np.all(res["p_lo"] <= res["p"] + 1e-12) and np.all(res["p"] <= res["p_hi"] + 1e-12)


# ---------------------------------------------------------------- game metrics


def test_seat_balance_hand_values():
    r = st.seat_balance(550, 430, 1000)
    assert r["balance"] == pytest.approx(0.88)
    assert r["seat_advantage"] == pytest.approx(0.12)
    # multinomial: Var(X0 - X1) = n (w0(1-w0) + w1(1-w1) + 2 w0 w1)
    w0, w1 = 0.55, 0.43
    se = math.sqrt((w0 * (1 - w0) + w1 * (1 - w1) + 2 * w0 * w1) / 1000)
    assert se == pytest.approx(0.0310741, abs=1e-7)
    assert r["adv_lo"] == pytest.approx(0.12 - Z95 * se, rel=1e-12)
    assert r["adv_hi"] == pytest.approx(0.12 + Z95 * se, rel=1e-12)
    assert r["completion"] == pytest.approx(0.98)
    assert (r["completion_lo"], r["completion_hi"]) == st.wilson(980, 1000)
    assert r["draw_rate"] == pytest.approx(0.02)
    assert (r["draw_lo"], r["draw_hi"]) == st.wilson(20, 1000)
    assert r["games"] == 1000
    r2 = st.seat_balance(550, 430, 1000, draws=5)  # 15 timeouts
    assert r2["draw_rate"] == pytest.approx(0.005) and r2["completion"] == pytest.approx(0.98)
    e = st.seat_balance(0, 0, 0)
    assert math.isnan(e["balance"]) and math.isnan(e["completion_lo"]) and e["games"] == 0
    with pytest.raises(ValueError):
        st.seat_balance(6, 5, 10)


def test_hist_mean_ci():
    values = [3, 4, 5, 7]
    counts = [2, 5, 4, 1]
    x = np.repeat(values, counts)
    r = st.hist_mean_ci(values, counts)
    assert r["n"] == 12
    assert r["mean"] == pytest.approx(x.mean(), rel=1e-12)
    assert r["sd"] == pytest.approx(x.std(ddof=1), rel=1e-12)
    half = Z95 * x.std(ddof=1) / math.sqrt(12)
    assert r["lo"] == pytest.approx(x.mean() - half, rel=1e-12)
    assert r["hi"] == pytest.approx(x.mean() + half, rel=1e-12)
    assert math.isnan(st.hist_mean_ci([], [])["mean"])
    e = st.hist_mean_ci([1, 2], [0, 0])
    assert math.isnan(e["mean"]) and math.isnan(e["lo"]) and e["n"] == 0
    one = st.hist_mean_ci([1, 2], [0, 1])
    assert one["mean"] == 2.0 and math.isnan(one["sd"])


def test_wilson_closed_form_matches_statsmodels():
    from statsmodels.stats.proportion import proportion_confint

    rng = np.random.default_rng(7)
    n = rng.integers(1, 100_000, 500)
    k = rng.integers(0, n + 1)
    for alpha in (0.05, 0.01, 0.2):
        lo, hi = st.wilson(k, n, alpha)
        slo, shi = proportion_confint(k, n, alpha=alpha, method="wilson")
        np.testing.assert_allclose(lo, np.clip(slo, 0, 1), rtol=0, atol=1e-12)
        np.testing.assert_allclose(hi, np.clip(shi, 0, 1), rtol=0, atol=1e-12)
    assert st.wilson(0, 10)[0] == 0.0 and st.wilson(10, 10)[1] == 1.0
