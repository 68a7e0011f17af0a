"""Tests for balance.stats: every statistic against a known answer."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats as sps

from balance import stats as st

Z95 = 1.959963984540054


# ---------------------------------------------------------------- Wilson


def _wilson_closed(k: float, n: float, z: float = Z95) -> tuple[float, float]:
    p = k / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    den = 1 + z * z / n
    return (centre - half) / den, (centre + half) / den


def test_wilson_hand_value():
    lo, hi = st.wilson(5, 10)
    assert isinstance(lo, float) and isinstance(hi, float)
    assert lo == pytest.approx(0.2366, abs=5e-5)
    assert hi == pytest.approx(0.7634, abs=5e-5)


@pytest.mark.parametrize("k,n", [(0, 7), (1, 20), (13, 40), (99, 100), (500, 1000), (3, 3)])
def test_wilson_matches_closed_form(k, n):
    lo, hi = st.wilson(k, n)
    elo_, ehi = _wilson_closed(k, n)
    assert lo == pytest.approx(max(elo_, 0.0), abs=1e-12)
    assert hi == pytest.approx(min(ehi, 1.0), abs=1e-12)
    assert 0.0 <= lo <= k / n <= hi <= 1.0


def test_wilson_alpha_changes_width():
    lo90, hi90 = st.wilson(30, 100, alpha=0.10)
    lo95, hi95 = st.wilson(30, 100)
    z90 = sps.norm.ppf(0.95)
    e_lo, e_hi = _wilson_closed(30, 100, z90)
    assert lo90 == pytest.approx(e_lo, abs=1e-12) and hi90 == pytest.approx(e_hi, abs=1e-12)
    assert hi90 - lo90 < hi95 - lo95


def test_wilson_arrays_and_zero_n_no_warning():
    k = np.array([5, 0, 2])
    n = np.array([10, 0, 4])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lo, hi = st.wilson(k, n)
        slo, shi = st.wilson(0, 0)
    assert lo.shape == (3,)
    assert lo[0] == pytest.approx(0.2366, abs=5e-5)
    assert np.isnan(lo[1]) and np.isnan(hi[1])
    assert math.isnan(slo) and math.isnan(shi)
    e_lo, e_hi = _wilson_closed(2, 4)
    assert lo[2] == pytest.approx(e_lo) and hi[2] == pytest.approx(e_hi)


def test_wilson_rejects_k_above_n():
    with pytest.raises(ValueError):
        st.wilson(11, 10)


# ---------------------------------------------------------------- pentanomial


def test_pair_points_table():
    assert st.PAIR_POINTS.tolist() == [0.0, 0.5, 1.0, 1.5, 2.0]


def test_pentanomial_counts():
    c = st.pentanomial_counts(np.array([0, 4, 2, 2, 3, 4, 4]))
    assert c.dtype == np.int64
    assert c.tolist() == [1, 0, 2, 1, 3]
    assert st.pentanomial_counts(np.array([], dtype=int)).tolist() == [0] * 5
    with pytest.raises(ValueError):
        st.pentanomial_counts([0, 5])
    with pytest.raises(ValueError):
        st.pentanomial_counts([-1])


def _union_cp(k: float, n: float) -> tuple[float, float]:
    """Wilson, joined with Clopper-Pearson (statsmodels "beta") where at most 10
    wins or losses."""
    from statsmodels.stats.proportion import proportion_confint

    w = proportion_confint(k, n, method="wilson")
    if min(k, n - k) > 10:
        return w
    cp = proportion_confint(k, n, method="beta")
    return min(w[0], cp[0]), max(w[1], cp[1])


def test_pentanomial_score_hand_example():
    # pairs s = 0, .5, .5, 1: mu = .5, pop var = (.25 + 0 + 0 + .25) / 4 = .125
    r = st.pentanomial_score([1, 0, 2, 0, 1])
    assert r["score"] == pytest.approx(0.5)
    assert r["se"] == pytest.approx(math.sqrt(0.125 / 4))
    # deff = se² / (mu(1-mu) / 8 games) = (0.125 / 4) / (0.25 / 8) = 1: 8
    # effective games, 4 wins: Wilson joined with Clopper-Pearson (few counts)
    assert r["deff"] == pytest.approx(1.0) and r["n_eff"] == pytest.approx(8.0)
    lo, hi = _union_cp(4, 8)
    assert (r["lo"], r["hi"]) == (pytest.approx(lo), pytest.approx(hi))
    assert r["n_pairs"] == 4 and r["n_games"] == 8


def test_pentanomial_score_second_example_stays_in_bounds():
    # pairs s = .25, .75, 1, 1: mu = .75; deviations -.5, 0, .25, .25
    r = st.pentanomial_score([0, 1, 0, 1, 2])
    var = (0.25 + 0 + 0.0625 + 0.0625) / 4
    assert r["score"] == pytest.approx(0.75)
    assert r["se"] == pytest.approx(math.sqrt(var / 4))
    deff = (var / 4) / (0.75 * 0.25 / 8)
    assert r["deff"] == pytest.approx(deff)
    lo, hi = _union_cp(0.75 * 8 / deff, 8 / deff)
    assert (r["lo"], r["hi"]) == (pytest.approx(lo), pytest.approx(hi))
    assert 0.0 < r["lo"] < 0.75 < r["hi"] < 1.0  # no clipping needed: Wald reached 1.05


@pytest.mark.parametrize("code", [0, 4, 2])
def test_pentanomial_score_never_collapses_when_every_deal_scores_alike(code):
    """Every deal scores the same (all 0, all 2 points, all 1): se is 0 and the
    Wald interval was a point. The deal is then the unit (deff 2): the
    interval is Clopper-Pearson / Wilson on the deals."""
    counts = np.zeros(5, dtype=int)
    counts[code] = 300
    r = st.pentanomial_score(counts)
    assert r["se"] == 0.0 and r["deff"] == 2.0 and r["n_eff"] == 300
    mu = code / 4
    lo, hi = _union_cp(mu * 300, 300)
    assert (r["lo"], r["hi"]) == (pytest.approx(lo), pytest.approx(hi))
    assert r["hi"] - r["lo"] > 0.01
    if code == 0:
        assert r["lo"] == 0.0 and 0.01 < r["hi"] < 0.02  # Wilson: 3.84 / (300 + 3.84)


def test_pentanomial_score_is_wald_like_in_the_middle():
    rng = np.random.default_rng(3)
    r = st.pentanomial_score(st.pentanomial_counts(rng.integers(0, 5, size=4000)))
    half = Z95 * r["se"]
    assert r["lo"] == pytest.approx(r["score"] - half, abs=2e-4)
    assert r["hi"] == pytest.approx(r["score"] + half, abs=2e-4)


def test_pentanomial_score_matches_raw_pairs():
    rng = np.random.default_rng(1)
    pts = rng.integers(0, 5, size=1000)
    r = st.pentanomial_score(st.pentanomial_counts(pts))
    s = pts / 4.0
    assert r["score"] == pytest.approx(s.mean())
    assert r["se"] == pytest.approx(s.std(ddof=0) / math.sqrt(s.size))


def test_pentanomial_score_empty():
    r = st.pentanomial_score([0, 0, 0, 0, 0])
    assert math.isnan(r["score"]) and math.isnan(r["se"]) and r["n_pairs"] == 0


# ---------------------------------------------------------------- variance reduction


def test_unpaired_se_hand_value():
    # mu = .5, proven draws (c1 + c3) / 2n = 0 -> per-game var .25 over 8 games
    assert st.unpaired_score_se([1, 0, 2, 0, 1]) == pytest.approx(math.sqrt(0.25 / 8))
    # counts [1, 2, 3, 2, 1]: mu = .5; proven draws 4 of 18 games
    d = 4 / 18
    assert st.unpaired_score_se([1, 2, 3, 2, 1]) == pytest.approx(math.sqrt((0.25 - d / 4) / 18))


def test_variance_reduction_one_for_independent_games():
    # Exact binomial pair shares for independent fair games without draws.
    assert st.variance_reduction([1, 0, 2, 0, 1]) == pytest.approx(1.0)
    # Independent trinomial games with w = d = l = 1/3 (draw share 1/3).
    assert st.variance_reduction([1, 2, 3, 2, 1], draw_rate=1 / 3) == pytest.approx(1.0)


def test_variance_reduction_below_one_when_seat_decides():
    # The deal favours one seat, so A wins one game and loses the other:
    # pair outcomes concentrate on 2 (the two games are negatively correlated
    # for A), which is what duplicate seating cancels.
    vr = st.variance_reduction([5, 0, 90, 0, 5])
    assert vr < 0.5
    assert st.variance_reduction([0, 0, 10, 0, 0]) == 0.0


def test_variance_reduction_above_one_when_pairs_agree():
    # All pairs 0 or 4: A wins or loses both games (positively correlated
    # games of a pair); pairing cannot help and the paired SE is sqrt(2)
    # times the (overly optimistic) independent-games SE.
    vr = st.variance_reduction([50, 0, 0, 0, 50])
    assert vr == pytest.approx(math.sqrt(2))


def test_variance_reduction_nan_when_degenerate():
    assert math.isnan(st.variance_reduction([0, 0, 0, 0, 0]))
    assert math.isnan(st.variance_reduction([0, 0, 0, 0, 7]))  # all won: both SEs 0


# ---------------------------------------------------------------- paired differences


def test_paired_diff_hand_value():
    r = st.paired_diff([1.0, 2.0, 3.0, 4.0])
    sd = math.sqrt(5 / 3)
    se = sd / 2
    assert r["n"] == 4
    assert r["mean"] == pytest.approx(2.5)
    assert r["sd"] == pytest.approx(sd)
    assert r["se"] == pytest.approx(se)
    assert r["lo"] == pytest.approx(2.5 - Z95 * se)
    assert r["hi"] == pytest.approx(2.5 + Z95 * se)
    assert r["p"] == pytest.approx(math.erfc((2.5 / se) / math.sqrt(2)))


def test_paired_diff_degenerate_cases():
    assert st.paired_diff([0.0, 0.0, 0.0])["p"] == 1.0
    assert st.paired_diff([0.5, 0.5])["p"] == 0.0
    r = st.paired_diff([])
    assert r["n"] == 0 and math.isnan(r["mean"]) and math.isnan(r["p"])
    r1 = st.paired_diff([0.3])
    assert r1["mean"] == pytest.approx(0.3) and math.isnan(r1["se"])


def test_paired_diff_symmetric_p_large():
    r = st.paired_diff([-1.0, 1.0, -2.0, 2.0])
    assert r["mean"] == 0.0 and r["p"] == pytest.approx(1.0)


def test_paired_diff_from_points():
    x = np.array([4, 2, 3, 0])
    y = np.array([2, 2, 1, 1])
    r = st.paired_diff_from_points(x, y)
    d = np.array([0.5, 0.0, 0.5, -0.25])
    ref = st.paired_diff(d)
    assert r["mean"] == pytest.approx(0.1875)
    for key in ("mean", "sd", "se", "lo", "hi", "p"):
        assert r[key] == pytest.approx(ref[key])
    with pytest.raises(ValueError):
        st.paired_diff_from_points([1, 2], [1])


# ---------------------------------------------------------------- multiple testing


def test_holm_hand_case():
    p = [0.01, 0.04, 0.03, 0.005]
    # sorted .005*4=.02, .01*3=.03, .03*2=.06, .04*1 -> max(.04, .06)=.06
    reject, p_adj = st.holm(p)
    np.testing.assert_allclose(p_adj, [0.03, 0.06, 0.06, 0.02])
    assert reject.tolist() == [True, False, False, True]


def test_holm_equals_statsmodels_on_random_families(no_gc):
    # Holm is computed by hand (statsmodels' Holm calls gc.collect() on every
    # call); statsmodels stays the reference: the same rejections and adjusted
    # p-values on 400 random families, ties, zeros, ones and nans included.
    # Its gc.collect() is switched off (no_gc): with a test session's heap it
    # cost 27-97 s for the test
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(7)
    for _ in range(400):
        m = int(rng.integers(1, 40))
        p = rng.random(m) ** rng.choice([1.0, 3.0, 8.0])
        p[rng.random(m) < 0.1] = rng.choice([0.0, 1.0, 0.05, 0.01])  # ties and edges
        p[rng.random(m) < 0.1] = np.nan
        alpha = float(rng.choice([0.01, 0.05, 0.1]))
        reject, p_adj = st.holm(p, alpha)
        ok = ~np.isnan(p)
        assert not reject[~ok].any() and np.isnan(p_adj[~ok]).all()
        if ok.any():
            r, pa, _, _ = multipletests(p[ok], alpha=alpha, method="holm")
            assert reject[ok].tolist() == r.tolist()
            np.testing.assert_allclose(p_adj[ok], pa, rtol=0, atol=1e-15)


def test_bh_hand_case():
    p = [0.01, 0.04, 0.03, 0.005]
    # sorted p*m/i: .02, .02, .04, .04 (running min from the top)
    reject, p_adj = st.bh(p)
    np.testing.assert_allclose(p_adj, [0.02, 0.04, 0.04, 0.02])
    assert reject.tolist() == [True, True, True, True]
    reject2, _ = st.bh(p, alpha=0.03)
    assert reject2.tolist() == [True, False, False, True]


def test_multitest_nan_passthrough():
    reject, p_adj = st.holm([0.01, np.nan, 0.04])
    assert np.isnan(p_adj[1]) and not reject[1]
    # nan not counted in the family: m = 2
    np.testing.assert_allclose(p_adj[[0, 2]], [0.02, 0.04])
    reject, p_adj = st.bh([np.nan, np.nan])
    assert np.all(np.isnan(p_adj)) and not reject.any()


# ---------------------------------------------------------------- games needed


def _brute_games_needed(p: float, prob: float = 0.95) -> int:
    n = 1
    while sps.binom.sf(n // 2, n, p) < prob:
        n += 1
    return n


@pytest.mark.parametrize("p", [0.55, 0.6, 0.75])
def test_games_needed_brute_force(p):
    n = st.games_needed(p)
    assert n == _brute_games_needed(p)
    assert sps.binom.sf(n // 2, n, p) >= 0.95
    assert sps.binom.sf((n - 1) // 2, n - 1, p) < 0.95


@pytest.mark.parametrize("p,prob", [(0.7, 0.9), (0.52, 0.8), (0.9, 0.99)])
def test_games_needed_other_prob(p, prob):
    assert st.games_needed(p, prob=prob) == _brute_games_needed(p, prob)


def test_games_needed_edges():
    assert st.games_needed(0.5) is None
    assert st.games_needed(0.3) is None
    assert st.games_needed(0.97) == 1
    assert st.games_needed(1.0) == 1
    assert st.games_needed(0.55, max_n=100) is None
    n = st.games_needed(0.55)
    assert st.games_needed(0.55, max_n=n) == n


# ---------------------------------------------------------------- Elo


def test_elo_values():
    assert st.elo(0.5) == pytest.approx(0.0, abs=1e-12)
    assert st.elo(0.75) == pytest.approx(190.85, abs=0.01)
    assert st.elo(0.25) == pytest.approx(-190.85, abs=0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert st.elo(1.0) == math.inf
        assert st.elo(0.0) == -math.inf
        arr = st.elo(np.array([0.0, 0.5, 1.0]))
    assert arr.tolist() == [-math.inf, 0.0, math.inf]


def test_elo_interval():
    lo, hi = st.elo_interval(0.25, 0.75)
    assert lo == pytest.approx(-400 * math.log10(3))
    assert hi == pytest.approx(400 * math.log10(3))


# ---------------------------------------------------------------- histograms


def test_hist_mean_sd_against_numpy():
    values = np.array([7, 3, 10, 5])
    counts = np.array([4, 1, 2, 0])
    sample = np.repeat(values, counts)
    mean, sd = st.mean_sd_from_hist(values, counts)
    assert mean == pytest.approx(sample.mean())
    assert sd == pytest.approx(sample.std())
    m0, s0 = st.mean_sd_from_hist([1, 2], [0, 0])
    assert math.isnan(m0) and math.isnan(s0)


def test_quantile_from_hist_against_numpy():
    values = np.array([12, 3, 8, 5, 20])
    counts = np.array([3, 2, 0, 4, 1])
    sample = np.repeat(values, counts)
    qs = np.array([0.0, 0.1, 0.2, 0.25, 0.5, 0.6, 0.61, 0.9, 0.95, 1.0])
    got = st.quantile_from_hist(values, counts, qs)
    np.testing.assert_array_equal(got, np.quantile(sample, qs, method="inverted_cdf"))
    assert st.quantile_from_hist(values, counts, 0.5) == 5.0


# ---------------------------------------------------------------- table rows


def test_win_rate_table_row():
    r = st.win_rate_table_row(wins=5, draws=2, games=10)
    assert r["winrate"] == pytest.approx(0.5)
    assert r["winrate_lo"] == pytest.approx(0.2366, abs=5e-5)
    assert r["winrate_hi"] == pytest.approx(0.7634, abs=5e-5)
    d_lo, d_hi = _wilson_closed(2, 10)
    assert r["draw_rate"] == pytest.approx(0.2)
    assert r["draw_lo"] == pytest.approx(d_lo) and r["draw_hi"] == pytest.approx(d_hi)
    assert r["score"] == pytest.approx(0.6)
    assert r["games"] == 10


def test_win_rate_table_row_empty_and_invalid():
    r = st.win_rate_table_row(0, 0, 0)
    assert math.isnan(r["winrate"]) and math.isnan(r["winrate_lo"]) and r["games"] == 0
    with pytest.raises(ValueError):
        st.win_rate_table_row(8, 3, 10)


# ---------------------------------------------------------------- normal


def test_normal_helpers_give_scipy_stats_values_bit_for_bit():
    """``z_crit`` and ``two_sided_p`` use ``scipy.special`` (quick to import)
    in place of ``scipy.stats.norm`` (a second to import); the figures every
    interval and p-value prints must not move by a single bit."""
    from balance.stats.normal import two_sided_p, z_crit

    for alpha in [0.05, 0.01, 0.1, 0.05 / 3, 0.05 / 28, 1e-6, 0.5, 0.999]:
        assert z_crit(alpha) == float(sps.norm.ppf(1.0 - alpha / 2.0))
    rng = np.random.default_rng(3)
    for z in [0.0, 1.96, -1.96, 8.5, -40.0, *rng.normal(scale=3.0, size=500)]:
        assert two_sided_p(z) == float(2.0 * sps.norm.sf(abs(z)))
    assert math.isnan(two_sided_p(math.nan))
    with pytest.raises(ValueError, match="alpha must be in"):
        z_crit(1.0)


def test_importing_the_statistics_leaves_scipy_stats_and_statsmodels_unloaded():
    """A command that only prints intervals does not wait for ``scipy.stats``
    or statsmodels (about a second each to import): they load where used."""
    import subprocess
    import sys

    code = (
        "import sys, balance.stats, balance.analysis; "
        "print(sorted(m for m in ('scipy.stats', 'statsmodels', 'scipy.optimize') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_building_every_command_leaves_scipy_unloaded_until_a_figure_needs_it():
    """``balance --help`` and a mistaken option compute nothing, so they do not
    wait for scipy (a third of a second): the command line is built from
    modules that import ``balance.stats``, whose normal quantiles load
    ``scipy.special`` at their first call. That call gives the same value."""
    import subprocess
    import sys

    code = (
        "import sys; from balance.cli.root import make_app; make_app(); "
        "before = 'scipy' in sys.modules; "
        "from balance.stats.normal import z_crit; z = z_crit(0.05); "
        "print(before, 'scipy.special' in sys.modules, repr(z))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    from scipy.stats import norm

    assert out.stdout.split() == ["False", "True", repr(float(norm.ppf(0.975)))]


# ---------------------------------------------------------------- score intervals


def test_score_wilson_is_wilson_on_the_effective_games():
    # mu .3, variance of the mean twice binomial over 1000 games: deff 2, n_eff 500
    r = st.score_wilson(0.3, 2 * 0.3 * 0.7 / 1000, 1000, 4.0)
    assert r["deff"] == pytest.approx(2.0) and r["n_eff"] == pytest.approx(500)
    lo, hi = _union_cp(150, 500)
    assert (r["lo"], r["hi"]) == (pytest.approx(lo), pytest.approx(hi))
    # above the design's largest deff: cut to it
    assert st.score_wilson(0.3, 10 * 0.3 * 0.7 / 1000, 1000, 4.0)["deff"] == 4.0
    # a variance that cannot estimate deff (0, nan) or a mean at 0 or 1: the largest
    for mu, v in ((0.3, 0.0), (0.3, float("nan")), (0.0, 0.0), (1.0, 0.0)):
        assert st.score_wilson(mu, v, 1000, 2.0)["deff"] == 2.0
    # below 1 is kept (draws, the seat swap): near the Wald interval in the middle
    r = st.score_wilson(0.5, 0.25 / 1000 / 4, 1000, 2.0)
    assert r["deff"] == pytest.approx(0.25)
    assert r["hi"] - r["lo"] == pytest.approx(2 * Z95 * math.sqrt(0.25 / 4000), rel=0.01)


def test_score_wilson_joins_clopper_pearson_at_small_counts():
    from statsmodels.stats.proportion import proportion_confint

    for k in (1, 2, 5, 10):
        r = st.score_wilson(k / 1000, k / 1000 * (1 - k / 1000) / 1000, 1000, 2.0)
        cp = proportion_confint(k, 1000, method="beta")
        w = proportion_confint(k, 1000, method="wilson")
        assert r["lo"] == pytest.approx(min(cp[0], w[0]))
        assert r["hi"] == pytest.approx(max(cp[1], w[1]))
        assert r["lo"] < w[0]  # CP's lower bound is the lower one near 0
    # mirrored at the top, and not joined above 10
    top = st.score_wilson(0.998, 0.998 * 0.002 / 1000, 1000, 2.0)
    assert 1 - top["hi"] == pytest.approx(
        st.score_wilson(0.002, 0.002 * 0.998 / 1000, 1000, 2.0)["lo"]
    )
    r = st.score_wilson(0.05, 0.05 * 0.95 / 1000, 1000, 2.0)
    assert (r["lo"], r["hi"]) == tuple(
        pytest.approx(x) for x in proportion_confint(50, 1000, method="wilson")
    )


def test_score_wilson_binomial_coverage_at_every_p():
    """Exact binomial coverage (no simulation) of the interval the toolkit
    prints for independent games (deff 1) over a grid of p: at least 93% at
    every p for 30, 100 and 1,000 games, where Wilson alone dips to 84%."""
    from scipy.stats import binom

    for n in (30, 100, 1000):
        k = np.arange(n + 1.0)
        mu = k / n
        r = st.score_wilson(mu, mu * (1 - mu) / n, np.full(k.shape, float(n)), 2.0)
        wl, wh = st.wilson(k, np.full(k.shape, n))
        ps = np.r_[np.linspace(0.05 / n, 5 / n, 100), np.linspace(5 / n, 0.5, 300)]
        cov = np.array([binom.pmf(k, n, p)[(r["lo"] <= p) & (p <= r["hi"])].sum() for p in ps])
        cov_w = np.array([binom.pmf(k, n, p)[(wl <= p) & (p <= wh)].sum() for p in ps])
        assert cov.min() >= 0.93, (n, cov.min())
        assert cov_w.min() < 0.88, (n, cov_w.min())
