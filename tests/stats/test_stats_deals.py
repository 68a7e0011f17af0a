"""Deal-level intervals: the two games of a seat-swapped deal share its shuffles,
and the matches of a round robin replay the same deals, so the deal is the unit
an interval is computed from. Exactness on hand-built deals, agreement with
statsmodels' cluster-robust OLS, and coverage measured by simulation (the
independent-games intervals the tables used before are run on the same data
and must cover clearly less)."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import pytest
import statsmodels.api as sm
from scipy.stats import norm

from balance import stats, tables
from balance.analysis import needed_games, refine_to_precision

# ---------------------------------------------------------------------------
# Synthetic seat-swapped deals with a latent per-deal strength
# ---------------------------------------------------------------------------
#
# Game g of deal d in match j: latent x = sqrt(r_deal)·z_d + sqrt(r_match − r_deal)·w_jd
# + sqrt(1 − r_match)·e_jdg (all standard normal), so P(win) and P(draw) are known
# exactly whatever the correlation; z_d is shared by every match on the seed (the
# deal's shuffles), w_jd by the two games of one match's deal. r_match = 0.85 gives
# a within-deal correlation of the results of about +0.65, as measured on Trisk.


def _play(rng, reps, deals, p_win, p_draw, r_match, r_deal=0.0):
    """Half points (0 loss, 1 draw, 2 win) of the side under study, shape
    (reps, matches, deals, 2); ``p_win``, ``p_draw``: one entry per match."""
    p_win = np.atleast_1d(np.asarray(p_win, dtype=float))
    p_draw = np.broadcast_to(np.asarray(p_draw, dtype=float), p_win.shape)
    k = p_win.size
    z = rng.standard_normal((reps, 1, deals, 1))
    w = rng.standard_normal((reps, k, deals, 1))
    e = rng.standard_normal((reps, k, deals, 2))
    x = np.sqrt(r_deal) * z + np.sqrt(r_match - r_deal) * w + np.sqrt(1 - r_match) * e
    t_win = norm.ppf(1 - p_win)[None, :, None, None]
    t_loss = norm.ppf(1 - p_win - p_draw)[None, :, None, None]
    return np.where(x > t_win, 2, np.where(x > t_loss, 1, 0)).astype(np.int64)


def _run(codes, draws, seed=7):
    """A stand-in for RunResult with what the deal-level code reads."""
    codes = np.asarray(codes, dtype=np.int64)
    return SimpleNamespace(
        spec=SimpleNamespace(seed=seed), pair_points=codes, draws=int(draws), games=2 * codes.size
    )


def _within_deal_corr(g):
    """Correlation of a deal's two games' half points (pooled over reps/matches)."""
    a, b = g[..., 0].ravel().astype(float), g[..., 1].ravel().astype(float)
    return float(np.corrcoef(a, b)[0, 1])


# ---------------------------------------------------------------------------
# (a) exactness on hand-built deals
# ---------------------------------------------------------------------------


def test_deal_outcomes_counts_each_deal_exactly():
    # deals (A's games): WW, WD, WL, LW, DD, DL, LL  -> codes 4, 3, 2, 2, 2, 1, 0
    codes = [4, 3, 2, 2, 2, 1, 0]
    counts = stats.pentanomial_counts(codes)
    out = stats.deal_outcomes(counts, draws=4)  # WD, DD (2), DL
    # A wins: 0 in DD, DL, LL; 1 in WD, WL, LW; 2 in WW
    assert out["a_wins"].tolist() == [3, 3, 1]
    # B wins: 0 in WW, WD, DD; 1 in WL, LW, DL; 2 in LL
    assert out["b_wins"].tolist() == [3, 3, 1]
    # draws: 0 in WW, WL, LW, LL; 1 in WD, DL; 2 in DD
    assert out["draws"].tolist() == [4, 2, 1]
    for h in out.values():
        assert h.sum() == len(codes)
    # events per game agree with the game counts (A won 5 games, B 5, 4 draws)
    assert out["a_wins"] @ [0, 1, 2] == 5 and out["draws"] @ [0, 1, 2] == 4


def test_deal_outcomes_rejects_impossible_draw_counts():
    counts = stats.pentanomial_counts([3, 2, 0])  # at least one draw (the code 3)
    with pytest.raises(ValueError, match="draws"):
        stats.deal_outcomes(counts, draws=0)
    with pytest.raises(ValueError, match="draws"):
        stats.deal_outcomes(counts, draws=2)  # the code-2 deal holds 0 or 2 draws
    assert stats.deal_outcomes(counts, draws=3)["draws"].tolist() == [1, 1, 1]


def test_deal_values_exact_without_ambiguity_and_expected_with_it():
    codes = np.array([4, 3, 2, 2, 1, 0])
    v = stats.deal_values(codes, draws=2)  # no code-2 deal is DD: draws are WD and DL
    assert v["points"].tolist() == [2.0, 1.5, 1.0, 1.0, 0.5, 0.0]
    assert v["wins"].tolist() == [2.0, 1.0, 1.0, 1.0, 0.0, 0.0]
    assert v["draws"].tolist() == [0.0, 1.0, 0.0, 0.0, 1.0, 0.0]
    assert not v["wins_var"].any() and not v["draws_var"].any()
    b = stats.deal_values(codes, draws=2, side="b")
    assert b["points"].tolist() == [0.0, 0.5, 1.0, 1.0, 1.5, 2.0]
    assert b["wins"].tolist() == [0.0, 0.0, 1.0, 1.0, 1.0, 2.0]
    # 4 draws: one of the two code-2 deals was DD; which one the codes cannot tell
    v = stats.deal_values(codes, draws=4)
    assert v["wins"][2:4].tolist() == [0.5, 0.5] and v["draws"][2:4].tolist() == [1.0, 1.0]
    assert v["wins_var"][2:4].tolist() == [0.25, 0.25]
    assert v["draws_var"][2:4].tolist() == [1.0, 1.0]
    assert v["wins"].sum() == 4 and v["draws"].sum() == 4  # the run's totals (WW, WD, a WL)
    with pytest.raises(ValueError, match="side"):
        stats.deal_values(codes, draws=2, side="c")


def test_pool_by_deal_adds_runs_on_one_seed_by_deal_index():
    a = np.array([[1.0, 2.0, 3.0]])
    b = np.array([[10.0, 20.0]])  # a shorter run on the same seed: its deals 0, 1
    c = np.array([[5.0]])  # another seed: another deal
    out = stats.pool_by_deal([(1, a), (1, b), (2, c)])
    assert out.tolist() == [[11.0, 22.0, 3.0, 5.0]]
    with pytest.raises(ValueError):
        stats.pool_by_deal([(1, a), (1, np.ones((2, 3)))])


# ---------------------------------------------------------------------------
# (b) the cluster-robust SE is statsmodels' OLS with cov_type="cluster"
# ---------------------------------------------------------------------------


def _ols_cluster_se(values, groups):
    X = np.ones((len(values), 1))
    fit = sm.OLS(np.asarray(values, dtype=float), X).fit(
        cov_type="cluster", cov_kwds={"groups": np.asarray(groups)}
    )
    return float(fit.params[0]), float(fit.bse[0])


def test_cluster_mean_and_cluster_wilson_se_match_statsmodels():
    rng = np.random.default_rng(11)
    m = rng.integers(1, 9, size=60)  # unequal cluster sizes
    groups = np.repeat(np.arange(m.size), m)
    strength = rng.uniform(0.1, 0.9, size=m.size)[groups]
    unit = (rng.uniform(size=groups.size) < strength).astype(float)  # 0/1 outcomes
    y = np.bincount(groups, weights=unit)
    mean, se = _ols_cluster_se(unit, groups)
    c = stats.cluster_mean(y, m)
    assert c["mean"] == pytest.approx(mean, rel=1e-12)
    assert c["se"] == pytest.approx(se, rel=1e-10)
    assert (c["n"], c["clusters"]) == (groups.size, m.size)
    w = stats.cluster_wilson(y, m)
    assert w["rate"] == pytest.approx(mean, rel=1e-12)
    assert w["se"] == pytest.approx(se, rel=1e-10)
    # the deff is the CR1 variance over the binomial one, and n_eff = n / deff
    assert w["deff"] == pytest.approx(se**2 / (mean * (1 - mean) / groups.size), rel=1e-10)
    assert w["n_eff"] == pytest.approx(groups.size / w["deff"], rel=1e-12)
    # continuous values too (a score per game)
    score = rng.choice([0.0, 0.5, 1.0], size=groups.size)
    mean, se = _ols_cluster_se(score, groups)
    c = stats.cluster_mean(np.bincount(groups, weights=score), m)
    assert (c["mean"], c["se"]) == pytest.approx((mean, se), rel=1e-10)


def test_deal_wilson_se_is_the_cluster_se_of_the_deals_games():
    rng = np.random.default_rng(5)
    g = _play(rng, 1, 150, [0.55], 0.0, 0.85)[0, 0]  # (deals, 2)
    wins = (g == 2).astype(float)
    hist = np.bincount(wins.sum(axis=1).astype(int), minlength=3)
    mean, se = _ols_cluster_se(wins.ravel(), np.repeat(np.arange(150), 2))
    d = stats.deal_wilson(hist)
    assert d["rate"] == pytest.approx(mean) and d["se"] == pytest.approx(se, rel=1e-10)
    assert (d["deals"], d["games"]) == (150, 300)
    assert 1.4 < d["deff"] < 1.9  # 1 + the within-deal correlation (about 0.65)
    assert d["lo"] < mean < d["hi"]
    # the same rate with the deal's two games independent (every deal 0/1/2 as
    # a binomial) has a design effect near 1
    hist_ind = np.bincount(rng.binomial(2, 0.55, size=150), minlength=3)
    assert 0.75 < stats.deal_wilson(hist_ind)["deff"] < 1.25


def test_cluster_mean_diff_matches_statsmodels_on_shared_clusters():
    # two pools over the same deals: their difference, clustered by deal, is the
    # OLS coefficient of a pool dummy with cluster-robust SE (both pools sized alike)
    rng = np.random.default_rng(3)
    G = 80
    base = rng.normal(size=G)
    y1 = base + 0.3 + rng.normal(scale=0.5, size=G)
    y2 = base + rng.normal(scale=0.5, size=G)
    d = stats.cluster_mean_diff(y1, np.ones(G), y2, np.ones(G))
    vals = np.concatenate([y1, y2])
    X = sm.add_constant(np.concatenate([np.ones(G), np.zeros(G)]))
    fit = sm.OLS(vals, X).fit(
        cov_type="cluster", cov_kwds={"groups": np.tile(np.arange(G), 2), "use_correction": False}
    )
    assert d["diff"] == pytest.approx(fit.params[1])
    # statsmodels without its small-sample factor, times CR1's G/(G-1)
    assert d["se"] == pytest.approx(fit.bse[1] * np.sqrt(G / (G - 1)), rel=1e-10)
    # sharing the deals cancels their common part: far smaller than independent pools
    assert d["se"] < 0.5 * np.hypot(y1.std(ddof=1), y2.std(ddof=1)) / np.sqrt(G)


def test_bradley_terry_deal_sandwich_matches_statsmodels_glm_cluster():
    rng = np.random.default_rng(21)
    n_players, deals, seed = 3, 120, 4
    pairs = [(0, 1), (0, 2), (1, 2)]
    p_win = [0.6, 0.7, 0.55]
    g = _play(rng, 1, deals, p_win, 0.0, 0.85, r_deal=0.4)[0]  # (3 matches, deals, 2)
    pts = g.sum(axis=2) / 2.0  # i's points per deal, 0..2
    ia = np.array([i for i, _ in pairs])
    ja = np.array([j for _, j in pairs])
    games = np.full(3, 2.0 * deals)
    s = pts.sum(axis=1)
    bt = stats.bradley_terry(
        n_players, ia, ja, games, s, deal_points=[(seed, pts[r]) for r in range(3)]
    )
    assert bt.attrs["robust"]
    # statsmodels: one row per game, clustered on the deal (shared by the 3 matches)
    rows, y, grp = [], [], []
    for r, (i, j) in enumerate(pairs):
        x = np.zeros(n_players)
        x[i], x[j] = 1.0, -1.0
        for d in range(deals):
            for k in range(2):
                rows.append(x[1:])
                y.append(g[r, d, k] / 2.0)
                grp.append(d)
    fit = sm.GLM(np.array(y), np.array(rows), family=sm.families.Binomial()).fit(
        cov_type="cluster", cov_kwds={"groups": np.array(grp), "use_correction": False}
    )
    cov = np.array(bt.attrs["cov"])
    elo = 400.0 / np.log(10.0)
    for i in (1, 2):  # r_i − r_0 is elo · beta_i whatever the centring
        var = cov[i, i] + cov[0, 0] - 2 * cov[i, 0]
        assert var == pytest.approx(elo**2 * fit.bse[i - 1] ** 2 * deals / (deals - 1), rel=1e-6)
    naive = stats.bradley_terry(n_players, ia, ja, games, s)
    assert not naive.attrs["robust"]
    assert (bt["se"] > naive["se"]).all()  # the games of a deal are positively correlated


# ---------------------------------------------------------------------------
# (c) coverage measured by simulation
# ---------------------------------------------------------------------------


def _per_rep_counts(codes):
    """Pentanomial counts per replication: codes (reps, deals) -> (reps, 5)."""
    reps = codes.shape[0]
    flat = codes + 5 * np.arange(reps)[:, None]
    return np.bincount(flat.ravel(), minlength=5 * reps).reshape(reps, 5)


def test_deal_wilson_covers_at_the_engines_correlation_and_plain_wilson_does_not():
    rng = np.random.default_rng(2026)
    reps, deals, p_win, p_draw = 2000, 200, 0.55, 0.04
    g = _play(rng, reps, deals, [p_win], p_draw, r_match=0.85)[:, 0]  # (reps, deals, 2)
    rho = _within_deal_corr(g == 2)
    assert 0.58 < rho < 0.72  # the regime measured on Trisk (+0.63..+0.70)
    codes = g.sum(axis=2)
    draws = (g == 1).sum(axis=(1, 2))
    a_wins = (g == 2).sum(axis=(1, 2))
    counts = _per_rep_counts(codes)
    hist = np.array(
        [stats.deal_outcomes(c, d)["a_wins"] for c, d in zip(counts, draws, strict=False)]
    )
    assert (hist @ [0, 1, 2] == a_wins).all()  # exact per deal, from codes and draws
    dw = stats.deal_wilson(hist)
    cover = np.mean((dw["lo"] <= p_win) & (p_win <= dw["hi"]))
    lo, hi = stats.wilson(a_wins, 2 * deals)  # the interval the tables printed before
    cover_plain = np.mean((lo <= p_win) & (p_win <= hi))
    assert cover >= 0.93, cover
    assert cover_plain < 0.91, cover_plain
    # and the draws' deal-level interval covers too
    dh = np.array([stats.deal_outcomes(c, d)["draws"] for c, d in zip(counts, draws, strict=False)])
    dd = stats.deal_wilson(dh)
    assert np.mean((dd["lo"] <= p_draw) & (p_draw <= dd["hi"])) >= 0.93


@pytest.mark.slow
def test_pooled_side_covers_when_matches_share_deals_and_the_naive_pool_does_not():
    # a strategy plays four opponents on one seed: deal d is the same shuffle in
    # every match (r_deal), its two games of one match closer still (r_match)
    rng = np.random.default_rng(77)
    reps, deals = 2000, 100
    p_win = np.array([0.45, 0.55, 0.6, 0.7])
    p_draw = 0.04
    sides = ["a", "b", "a", "b"]  # the strategy is side A in two matches, B in two
    g = _play(rng, reps, deals, p_win, p_draw, r_match=0.85, r_deal=0.5)
    true_win = p_win.mean()
    true_score = (p_win + p_draw / 2).mean()
    codes = g.sum(axis=3)  # the strategy's half points per deal (reps, 4, deals)
    n_draws = (g == 1).sum(axis=(2, 3))
    n_wins = (g == 2).sum(axis=(1, 2, 3))
    hit = np.zeros((2, 2), dtype=int)  # [new, naive] x [win rate, score]
    for r in range(reps):
        runs = []
        for j, side in enumerate(sides):
            a_codes = codes[r, j] if side == "a" else 4 - codes[r, j]
            runs.append((_run(a_codes, n_draws[r, j]), side))
        p = tables.pooled_side(runs)
        hit[0, 0] += p["winrate_lo"] <= true_win <= p["winrate_hi"]
        hit[0, 1] += p["score_lo"] <= true_score <= p["score_hi"]
        # before: Wilson on the pooled games, pentanomial SE on the pooled deals
        lo, hi = stats.wilson(n_wins[r], 2 * deals * len(sides))
        pen = stats.pentanomial_score(stats.pentanomial_counts(codes[r].ravel()))
        hit[1, 0] += lo <= true_win <= hi
        hit[1, 1] += pen["lo"] <= true_score <= pen["hi"]
    cover = hit / reps
    assert (cover[0] >= 0.93).all(), cover
    assert (cover[1] < 0.91).all(), cover


def test_strategy_table_uses_the_deal_level_pool():
    rng = np.random.default_rng(8)
    g = _play(rng, 1, 150, [0.4, 0.6, 0.65], 0.05, r_match=0.85, r_deal=0.5)[0]
    # strategy "s" against x (s is A), y (s is B), z (s is A), all on seed 7
    results = {}
    for (a, b), gj in zip([("s", "x"), ("y", "s"), ("s", "z")], g, strict=False):
        s_codes = gj.sum(axis=1)
        a_codes = s_codes if a == "s" else 4 - s_codes
        r = _run(a_codes, (gj == 1).sum())
        s_wins, s_losses = int((gj == 2).sum()), int((gj == 0).sum())
        r.a_wins, r.b_wins = (s_wins, s_losses) if a == "s" else (s_losses, s_wins)
        results[("base", a, b)] = r
    t = tables.strategy_table(results, ["base"], ["s"]).iloc[0]
    p = tables.pooled_side(
        [
            (results[("base", "s", "x")], "a"),
            (results[("base", "y", "s")], "b"),
            (results[("base", "s", "z")], "a"),
        ]
    )
    assert t["games"] == 900 and t["deals"] == 150  # 3 matches on one seed: 150 deals
    assert t["wins"] == int((g == 2).sum())
    assert (t["winrate_lo"], t["winrate_hi"]) == (p["winrate_lo"], p["winrate_hi"])
    assert (t["score_lo"], t["score_hi"]) == (p["score_lo"], p["score_hi"])
    lo, hi = stats.wilson(t["wins"], t["games"])
    assert t["winrate_hi"] - t["winrate_lo"] > 1.2 * (hi - lo)  # wider than independent games


# ---------------------------------------------------------------------------
# (d) --precision delivers the deal-level half-width it promises
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Spec:
    n_games: int
    seed: int = 7


def _stream(rng, deals, p_win, p_draw):
    g = _play(rng, 1, deals, [p_win], p_draw, r_match=0.85)[0, 0]  # (deals, 2)
    return g


def _synthetic_run(stream):
    def result(spec):
        g = stream[: spec.n_games // 2]  # game i of a seed is the same at any size
        r = _run(g.sum(axis=1), (g == 1).sum())
        r.spec = spec
        r.a_wins, r.b_wins = int((g == 2).sum()), int((g == 0).sum())
        return r

    def run(specs, extend=None):
        return [result(s) for s in specs]

    return result, run


def _half_widths(r):
    deals = stats.deal_outcomes(stats.pentanomial_counts(r.pair_points), r.draws)
    return [
        (w["hi"] - w["lo"]) / 2
        for w in (stats.deal_wilson(deals["a_wins"]), stats.deal_wilson(deals["b_wins"]))
    ]


@pytest.mark.parametrize("p_win", [0.5, 0.3])
def test_refine_to_precision_reaches_the_deal_level_half_width(p_win):
    precision = 0.02
    stream = _stream(np.random.default_rng(int(p_win * 100)), 20_000, p_win, 0.03)
    result, run = _synthetic_run(stream)
    pilot = result(_Spec(400))
    res = refine_to_precision([_Spec(400)], [pilot], precision, 40_000, run)[0]
    assert res.games > 400
    assert max(_half_widths(res)) <= precision, _half_widths(res)
    # the old target (independent games, deff = 1) stops short: its deal-level
    # half-width is about sqrt(1.65) times too wide
    n_old = (
        int(
            needed_games(np.array([pilot.a_wins, pilot.b_wins]), pilot.games, precision).max()
            * 1.02
        )
        + 2
    )  # as refine_to_precision did
    old = result(_Spec(n_old + n_old % 2))
    assert max(_half_widths(old)) > 1.1 * precision, _half_widths(old)


def test_needed_games_scales_with_the_design_effect():
    z = 1.959963984540054
    assert needed_games(5000, 10000, 0.01) == 9604  # deff 1: the binomial size
    assert needed_games(5000, 10000, 0.01, deff=1.65) == np.ceil(z * z * 0.25 * 1.65 / 1e-4)
    wins, games = np.array([[30, 500]]), np.array([[1000]])
    n = needed_games(wins, games, 0.01, np.array([[1.6, 1.7]]))
    assert n.shape == (1, 2) and (n > needed_games(wins, games, 0.01)).all()


# ---------------------------------------------------------------------------
# (e) coverage of the round robin's ratings (Elo) and Nash intervals
# ---------------------------------------------------------------------------


@pytest.mark.slow
def test_bradley_terry_elo_intervals_cover_with_shared_deals():
    """A round robin of four strategies with Bradley-Terry ratings -150, -30,
    60, 120 (sum 0, the scale the fit reports), every match on one seed (deal
    d shared, r_deal 0.5) and a deal's two games correlated as on Trisk:
    the printed Elo intervals (``lo``, ``hi``: the deal sandwich) cover each
    true rating; the model-based (binomial) ones, which treat games as
    independent, do not. 500 round robins of 150 deals a match."""
    rng = np.random.default_rng(31)
    true = np.array([-150.0, -30.0, 60.0, 120.0])
    iu, ju = np.triu_indices(4, 1)
    p_win = 1.0 / (1.0 + 10 ** ((true[ju] - true[iu]) / 400.0))
    reps, deals = 500, 150
    g = _play(rng, reps, deals, p_win, 0.0, r_match=0.85, r_deal=0.5)  # (reps, 6, deals, 2)
    hit = np.zeros((2, 4))
    for r in range(reps):
        pts = g[r].sum(axis=2) / 2.0  # i's points per deal (0..2), one row per match
        games = np.full(iu.size, 2 * deals)
        score = pts.sum(axis=1)
        dp = [(7, pts[k]) for k in range(iu.size)]
        bt = stats.bradley_terry(4, iu, ju, games, score, deal_points=dp)
        naive = stats.bradley_terry(4, iu, ju, games, score)
        hit[0] += (bt["lo"].to_numpy() <= true) & (true <= bt["hi"].to_numpy())
        hit[1] += (naive["lo"].to_numpy() <= true) & (true <= naive["hi"].to_numpy())
    cover = hit / reps
    print("Elo coverage per strategy, deal sandwich:", cover[0], "binomial:", cover[1])
    assert (cover[0] >= 0.93).all(), cover
    assert (cover[1] < 0.9).any(), cover


@pytest.mark.slow
def test_nash_bootstrap_intervals_cover_an_interior_equilibrium():
    """Nash weights and Nash-average ratings (``nash_average``: a parametric
    bootstrap of the score matrix, 200 draws): a biased rock-paper-scissors
    among three strategies (the true max-entropy mixture of the matrix below
    is 2/7, 2/7, 3/7) plus a fourth outside the support (weight 0, Nash
    rating -0.154), each score measured with the standard error of 1,000
    games. Measured over 300 matrices: the weights' 2.5-97.5% percentile
    intervals cover 94.0%, 96.3% and 91.7% (the last below nominal: the
    weight is a non-smooth function of the matrix), the outside strategy's
    weight 100% and its rating 94.0%; the support's ratings are 0 by
    construction and always covered."""
    from balance.stats import nash_maxent

    # expected score of row vs column; 0.5 on the diagonal
    S = np.array(
        [
            [0.50, 0.65, 0.40, 0.70],
            [0.35, 0.50, 0.60, 0.66],
            [0.60, 0.40, 0.50, 0.62],
            [0.30, 0.34, 0.38, 0.50],
        ]
    )
    A = (S - 0.5 - (S - 0.5).T) / 2
    p_true = nash_maxent(A)
    r_true = A @ p_true
    rng = np.random.default_rng(41)
    se = np.sqrt(S * (1 - S) / 1000)
    np.fill_diagonal(se, 0.0)
    reps = 300
    hit_p = np.zeros(4)
    hit_r = np.zeros(4)
    iu, ju = np.triu_indices(4, 1)
    for _ in range(reps):
        m = S.copy()
        m[iu, ju] = S[iu, ju] + se[iu, ju] * rng.standard_normal(iu.size)
        m[ju, iu] = 1 - m[iu, ju]
        out = stats.nash_average(m, se, n_boot=200, seed=int(rng.integers(1 << 30)))
        hit_p += (out["p_lo"] - 1e-9 <= p_true) & (p_true <= out["p_hi"] + 1e-9)
        hit_r += (out["rating_lo"] - 1e-9 <= r_true) & (r_true <= out["rating_hi"] + 1e-9)
    print("Nash truth", p_true, r_true, "coverage p:", hit_p / reps, "rating:", hit_r / reps)
    assert (hit_p / reps >= 0.89).all(), hit_p / reps
    assert hit_r[3] / reps >= 0.9, hit_r / reps
