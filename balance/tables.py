"""Tables: turning run aggregates into DataFrames with n and CI on every figure.

Game-agnostic: everything here reads :class:`balance.runner.RunResult`s and
the engine's catalogue, never a game's rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from balance import stats
from balance.registry import get_game
from balance.runner import CARD_FIELDS, RunResult

if TYPE_CHECKING:  # pandas is imported where a table is built: `simulate` prints without it
    import pandas as pd


def _rounds(res: RunResult) -> tuple[float, float]:
    h = res.rounds_hist
    return stats.mean_sd_from_hist(np.arange(len(h)), h)


def run_row(res: RunResult) -> dict:
    """One run: both sides' win rates, draws, score, length, end reasons."""
    eng = get_game(res.spec.game).engine_module()
    counts = stats.pentanomial_counts(res.pair_points)
    deals = stats.deal_outcomes(counts, res.draws)
    a = _deal_rates(deals["a_wins"], res.a_wins, res.games)
    b = _deal_rates(deals["b_wins"], res.b_wins, res.games)
    d = _deal_rates(deals["draws"], res.draws, res.games)
    pen = stats.pentanomial_score(counts)
    mean, sd = _rounds(res)
    h = res.rounds_hist
    decided = res.a_wins + res.b_wins
    f = per_game_figures([res])  # deal-level: a deal's two games share its shuffles
    row = {
        "variant": res.spec.ruleset.name,
        "a": res.spec.a.name,
        "b": res.spec.b.name,
        "games": res.games,
        "a_wins": res.a_wins,
        "b_wins": res.b_wins,
        "draws": res.draws,
        "winrate": a["winrate"],
        "winrate_lo": a["winrate_lo"],
        "winrate_hi": a["winrate_hi"],
        "b_winrate": b["winrate"],
        "b_winrate_lo": b["winrate_lo"],
        "b_winrate_hi": b["winrate_hi"],
        "draw_rate": d["winrate"],
        "draw_lo": d["winrate_lo"],
        "draw_hi": d["winrate_hi"],
        "score": pen["score"],
        "score_lo": pen["lo"],
        "score_hi": pen["hi"],
        "pairs": pen["n_pairs"],
        "pair_variance_ratio": stats.variance_reduction(counts, draw_rate=d["winrate"]),
        "winrate_deff": a["deff"],
        "b_winrate_deff": b["deff"],
        "rounds_mean": mean,
        "rounds_lo": f["rounds_lo"],
        "rounds_hi": f["rounds_hi"],
        "rounds_sd": sd,
        "rounds_p10": float(stats.quantile_from_hist(np.arange(len(h)), h, 0.1)),
        "rounds_p50": float(stats.quantile_from_hist(np.arange(len(h)), h, 0.5)),
        "rounds_p90": float(stats.quantile_from_hist(np.arange(len(h)), h, 0.9)),
        "seat1_share_of_wins": res.seat_wins[0] / decided if decided else np.nan,
        "seat1_share_lo": f["seat1_lo"],
        "seat1_share_hi": f["seat1_hi"],
        "seed": res.spec.seed,
        "config_hash": res.key,
    }
    for name, count in zip(eng.END_NAMES, res.reasons, strict=False):
        row[f"end_{name}"] = int(count)
    # per-game event counts an engine declares (Trisk: Creates refused by the
    # board limit), kept as METRICS histograms: games where it happened, total
    for name in getattr(eng, "EVENT_COUNTS", {}):
        h = None if res.metrics is None else res.metrics.get(name)
        if h is not None:
            h = np.asarray(h, np.int64)
            row[f"{name}_games"] = int(h[1:].sum())
            row[f"{name}_total"] = int((np.arange(len(h)) * h).sum())
    return row


def _deal_rates(hist: np.ndarray, k: int, games: int) -> dict:
    """A run's rate of an event (a side's wins, the draws) with its deal-level
    interval (:func:`balance.stats.deal_wilson`) and design effect."""
    w = stats.deal_wilson(hist)
    return {
        "winrate": k / games if games else np.nan,
        "winrate_lo": w["lo"],
        "winrate_hi": w["hi"],
        "deff": w["deff"],
    }


def _side_points(res: RunResult, strategy: str) -> np.ndarray:
    """Per-deal half points (0..4) of ``strategy`` in a run where it plays."""
    pts = res.pair_points.astype(np.int64)
    return pts if res.spec.a.name == strategy else 4 - pts


_MATRIX_COLS = [
    "variant",
    "a",
    "b",
    "games",
    "a_wins",
    "b_wins",
    "draws",
    "winrate",
    "winrate_lo",
    "winrate_hi",
    "score",
    "score_lo",
    "score_hi",
    "rounds_mean",
    "rounds_sd",
]


def matrix(results: dict[tuple[str, str, str], RunResult]) -> pd.DataFrame:
    """Round-robin matrix: one row per ordered pair (a, b), a ≠ b, per variant.

    ``results`` maps (variant, a, b) to the run of a (side A) against b. Both
    directions of a match come from its one run: b's wins, b's deal-level
    interval and b's pentanomial score (4 − A's pair points). Win-rate
    intervals are deal-level (:func:`balance.stats.deal_wilson`): the two
    games of a seat-swapped deal are not independent.
    """
    import pandas as pd

    keys = list(results)
    if not keys:
        return pd.DataFrame(columns=_MATRIX_COLS)
    runs = [results[k] for k in keys]
    games = np.array([r.games for r in runs], dtype=np.int64)
    aw = np.array([r.a_wins for r in runs], dtype=np.int64)
    bw = np.array([r.b_wins for r in runs], dtype=np.int64)
    draws = np.array([r.draws for r in runs], dtype=np.int64)
    # deal-level intervals: the two games of a deal share its shuffles
    counts = [stats.pentanomial_counts(r.pair_points) for r in runs]
    deals = [stats.deal_outcomes(c, r.draws) for c, r in zip(counts, runs, strict=False)]
    wa = stats.deal_wilson(np.array([d["a_wins"] for d in deals]).reshape(-1, 3))
    wb = stats.deal_wilson(np.array([d["b_wins"] for d in deals]).reshape(-1, 3))
    a_lo, a_hi, b_lo, b_hi = wa["lo"], wa["hi"], wb["lo"], wb["hi"]
    pa = [stats.pentanomial_score(c) for c in counts]
    rounds = [_rounds(r) for r in runs]
    rows = []
    for i, (variant, a, b) in enumerate(keys):
        mean, sd = rounds[i]
        p = pa[i]
        common = {
            "variant": variant,
            "games": int(games[i]),
            "draws": int(draws[i]),
            "rounds_mean": mean,
            "rounds_sd": sd,
        }
        rows.append(
            {
                **common,
                "a": a,
                "b": b,
                "a_wins": int(aw[i]),
                "b_wins": int(bw[i]),
                "winrate": aw[i] / games[i],
                "winrate_lo": a_lo[i],
                "winrate_hi": a_hi[i],
                "score": p["score"],
                "score_lo": p["lo"],
                "score_hi": p["hi"],
            }
        )
        # B's pair points are 4 - A's: its score is 1 - A's, its interval mirrored
        rows.append(
            {
                **common,
                "a": b,
                "b": a,
                "a_wins": int(bw[i]),
                "b_wins": int(aw[i]),
                "winrate": bw[i] / games[i],
                "winrate_lo": b_lo[i],
                "winrate_hi": b_hi[i],
                "score": 1 - p["score"],
                "score_lo": 1 - p["hi"],
                "score_hi": 1 - p["lo"],
            }
        )
    return pd.DataFrame(rows)[_MATRIX_COLS]


def _deal_parts(res: RunResult, side: str) -> np.ndarray:
    """Per-deal values of one side of a run for :func:`balance.stats.pool_by_deal`:
    rows points, wins, wins_var, draws, draws_var, games (2 per deal). Exact
    from the run's per-deal draws where it keeps them; else a deal of two
    draws and one of a win and a loss (the same points) are told apart in
    expectation (:func:`balance.stats.deal_values`)."""
    v = stats.deal_values(res.pair_points, res.draws, side)
    sums = getattr(res, "deal_sums", None)
    if sums is not None:
        draws = np.asarray(sums["draws"], float)
        pts = res.pair_points.astype(float) if side == "a" else 4.0 - res.pair_points
        v["wins"], v["draws"] = (pts - draws) / 2.0, draws
        v["wins_var"] = v["draws_var"] = np.zeros(len(draws))
    return np.vstack(
        [
            v["points"],
            v["wins"],
            v["wins_var"],
            v["draws"],
            v["draws_var"],
            np.full(len(v["points"]), 2.0),
        ]
    )


def pooled_side(runs: list[tuple[RunResult, str]]) -> dict:
    """A side's win rate, draw rate and score pooled over several runs.

    ``runs`` lists (run, side) with side "a" or "b". Runs on one seed replay
    the same deals, so the cluster is the deal (seed, deal index) across every
    run pooled: the win rate gets a cluster-adjusted Wilson interval and the
    score the design-effect Wilson interval of a mean in [0, 1] from its
    cluster-robust SE (:func:`balance.stats.cluster_wilson`,
    :func:`balance.stats.cluster_mean` with ``bounds=(0, 1)``), never the
    intervals of independent games.
    """
    sums = stats.pool_by_deal((r.spec.seed, _deal_parts(r, side)) for r, side in runs)
    if sums.size == 0:
        nan = float("nan")
        return {
            "games": 0,
            "winrate_lo": nan,
            "winrate_hi": nan,
            "score": nan,
            "score_lo": nan,
            "score_hi": nan,
            "draw_lo": nan,
            "draw_hi": nan,
            "deals": 0,
        }
    pts, wins, wvar, draws, dvar, games = sums
    w = stats.cluster_wilson(wins, games, extra_ss=float(wvar.sum()))
    d = stats.cluster_wilson(draws, games, extra_ss=float(dvar.sum()))
    sc = stats.cluster_mean(pts, games, bounds=(0.0, 1.0))
    return {
        "games": int(games.sum()),
        "winrate_lo": w["lo"],
        "winrate_hi": w["hi"],
        "winrate_deff": w["deff"],
        "score": sc["mean"],
        "score_lo": sc["lo"],
        "score_hi": sc["hi"],
        "score_se": sc["se"],
        "draw_lo": d["lo"],
        "draw_hi": d["hi"],
        "deals": w["clusters"],
    }


def strategy_table(results, variants, strategies) -> pd.DataFrame:
    """Each strategy's pooled win rate and score over all its opponents.

    Its matches share the study's seed, so deal d of one match and deal d of
    another are the same shuffles: intervals treat the deal across all the
    strategy's matches as the independent unit (:func:`pooled_side`)."""
    import pandas as pd

    rows = []
    for v in variants:
        for s in strategies:
            wins = draws = 0
            runs = []
            for (variant, a, b), res in results.items():
                if variant != v or s not in (a, b):
                    continue
                wins += res.a_wins if a == s else res.b_wins
                draws += res.draws
                runs.append((res, "a" if a == s else "b"))
            if not runs:
                continue
            p = pooled_side(runs)
            games = p["games"]
            rows.append(
                {
                    "variant": v,
                    "strategy": s,
                    "games": games,
                    "wins": wins,
                    "draws": draws,
                    "winrate": wins / games,
                    "winrate_lo": p["winrate_lo"],
                    "winrate_hi": p["winrate_hi"],
                    "score": p["score"],
                    "score_lo": p["score_lo"],
                    "score_hi": p["score_hi"],
                    "deals": p["deals"],
                }
            )
    return pd.DataFrame(rows)


def luck_vs_skill(results, variant: str, baseline: str = "random") -> dict:
    """The strongest scripted strategy against ``baseline`` (METHODS: luck vs
    skill): its win rate and the games it needs to be ahead with 95%
    probability. "Strongest" is the best pooled score over the round robin,
    the baseline's own games excluded."""
    pooled: dict[str, list[float]] = {}
    vs_base: dict[str, tuple[int, int, np.ndarray]] = {}

    def is_base(name: str) -> bool:  # "random", or "random@<deck>" in a game with decks
        return name == baseline or name.split("@", 1)[0] == baseline

    for (v, a, b), res in results.items():
        if v != variant or a == b:
            continue
        deals = None
        for side, other, wins, key in ((a, b, res.a_wins, "a_wins"), (b, a, res.b_wins, "b_wins")):
            if is_base(side):
                continue
            if is_base(other):
                if deals is None:
                    deals = stats.deal_outcomes(
                        stats.pentanomial_counts(res.pair_points), res.draws
                    )
                vs_base[side] = (wins, res.games, deals[key])
            else:
                acc = pooled.setdefault(side, [0.0, 0])
                acc[0] += wins + res.draws / 2
                acc[1] += res.games
    candidates = [s for s in vs_base if s in pooled] or list(vs_base)
    if not candidates:
        return {
            "best_strategy": None,
            "luck_skill_winrate": np.nan,
            "luck_skill_lo": np.nan,
            "luck_skill_hi": np.nan,
            "games_needed": np.nan,
        }
    name = max(
        candidates,
        key=lambda s: (
            (pooled[s][0] / pooled[s][1]) if s in pooled else vs_base[s][0] / vs_base[s][1]
        ),
    )
    wins, games, hist = vs_base[name]
    p = wins / games
    w = stats.deal_wilson(hist)  # deal-level: a deal's two games share its shuffles
    lo, hi = w["lo"], w["hi"]
    need = stats.games_needed(p)
    return {
        "best_strategy": name,
        "luck_skill_winrate": p,
        "luck_skill_lo": lo,
        "luck_skill_hi": hi,
        "games_needed": np.nan if need is None else need,
    }


def timeouts(runs: list[RunResult]) -> int:
    """Games of ``runs`` stopped at the round cap (0 for an engine without one)."""
    if not runs:
        return 0
    names = list(get_game(runs[0].spec.game).engine_module().END_NAMES)
    return (
        sum(int(r.reasons[names.index("round_cap")]) for r in runs) if "round_cap" in names else 0
    )


def pooled_deals(runs: list[RunResult]) -> dict[str, np.ndarray] | None:
    """The runs' per-deal sums (``RunResult.deal_sums``) added up by deal.

    Runs on one seed replay the same deals, so the cluster is the deal (seed,
    deal index) across every run pooled (:func:`balance.stats.pool_by_deal`):
    its two games in each match, and every match that plays it. Returns one
    float array per quantity, a value per cluster, with ``games`` (2 per
    deal and match) and ``decided`` (games − draws) added; None without runs
    or when a run lacks the sums (nothing then is shown as deal-clustered)."""
    if not runs or any(getattr(r, "deal_sums", None) is None for r in runs):
        return None
    names = [n for n in runs[0].deal_sums if all(n in r.deal_sums for r in runs)]
    parts = []
    for r in runs:
        d = r.deal_sums
        k = len(d["draws"])
        parts.append(
            (r.spec.seed, np.vstack([np.asarray(d[n], float) for n in names] + [np.full(k, 2.0)]))
        )
    sums = stats.pool_by_deal(parts)
    out = dict(zip([*names, "games"], sums, strict=True))
    out["decided"] = out["games"] - out["draws"]
    return out


def per_game_figures(runs: list[RunResult]) -> dict:
    """Every per-game figure of ``runs`` pooled (one variant: a round robin's
    matches, or one run), each with its deal-clustered 95% interval: rates with
    the design-effect Wilson interval (:func:`balance.stats.cluster_wilson`),
    means with the cluster-robust one (:func:`balance.stats.cluster_mean`),
    the cluster the deal (seed, deal index) across every match that replays it
    (:func:`pooled_deals`). No design effect is assumed: a deal's two games may
    agree (game length) or disagree (which seat wins) and its matches agree.

    Returns ``games``, ``deals`` (clusters), ``decided``; ``rounds_mean``,
    ``rounds_lo``, ``rounds_hi``; ``draw_rate``/``draw_lo``/``draw_hi``;
    ``timeouts`` (round-cap games), ``cap_share``/``cap_lo``/``cap_hi``;
    ``seat1_share`` (the first seat's share of decided games) with
    ``seat1_lo``/``seat1_hi``; ``seat_advantage`` (first seat's wins minus
    second seat's, per game) with ``seat_adv_lo``/``seat_adv_hi``. Intervals
    are nan when the runs keep no per-deal sums."""
    nan = float("nan")
    games = int(sum(r.games for r in runs))
    draws = int(sum(r.draws for r in runs))
    seat0 = int(sum(int(r.seat_wins[0]) for r in runs))
    decided = int(sum(int(np.sum(r.seat_wins)) for r in runs))
    n_cap = timeouts(runs)
    hist = pooled_rounds(runs) if runs else np.zeros(1)
    mean, _ = stats.mean_sd_from_hist(np.arange(len(hist)), hist)
    out = {
        "games": games,
        "deals": 0,
        "decided": decided,
        "rounds_mean": mean,
        "draw_rate": draws / games if games else nan,
        "timeouts": n_cap,
        "cap_share": n_cap / games if games else nan,
        "seat1_share": seat0 / decided if decided else nan,
        "seat_advantage": (2 * seat0 - decided) / games if games else nan,
    }
    for k in ("rounds", "draw", "cap", "seat1", "seat_adv"):
        out[f"{k}_lo"] = out[f"{k}_hi"] = nan
    c = pooled_deals(runs)
    if c is None or not games:
        return out
    out["deals"] = int(c["games"].size)
    r = stats.cluster_mean(c["rounds"], c["games"])
    out["rounds_lo"], out["rounds_hi"] = r["lo"], r["hi"]
    for key, y, m in (
        ("draw", c["draws"], c["games"]),
        ("cap", c["round_cap"], c["games"]),
        ("seat1", c["seat0_wins"], c["decided"]),
    ):
        if m.sum() > 0:
            w = stats.cluster_wilson(y, m)
            out[f"{key}_lo"], out[f"{key}_hi"] = w["lo"], w["hi"]
    a = stats.cluster_mean(2 * c["seat0_wins"] - c["decided"], c["games"], bounds=(-1.0, 1.0))
    out["seat_adv_lo"], out["seat_adv_hi"] = a["lo"], a["hi"]
    return out


def variant_runs(results, v) -> list[RunResult]:
    return [r for (vv, _, _), r in results.items() if vv == v]


def pooled_rounds(runs: list[RunResult]) -> np.ndarray:
    """Game-length histogram of several runs added up."""
    n = max(len(r.rounds_hist) for r in runs)
    return sum(np.pad(r.rounds_hist, (0, n - len(r.rounds_hist))) for r in runs)


def variant_table(results, variants) -> pd.DataFrame:
    """Per variant: games, draws, round-cap games, game length and the first
    seat's share of decided games, each with its deal-clustered interval
    (every match's deals pooled by deal: :func:`per_game_figures`), and luck
    vs skill."""
    import pandas as pd

    rows = []
    for v in variants:
        runs = variant_runs(results, v)
        if not runs:
            continue
        f = per_game_figures(runs)
        hist = pooled_rounds(runs)
        _, sd = stats.mean_sd_from_hist(np.arange(len(hist)), hist)
        rows.append(
            {
                "variant": v,
                "games": f["games"],
                "draws": sum(r.draws for r in runs),
                "timeouts": f["timeouts"],
                "timeout_lo": f["cap_lo"],
                "timeout_hi": f["cap_hi"],
                "draw_rate": f["draw_rate"],
                "draw_lo": f["draw_lo"],
                "draw_hi": f["draw_hi"],
                "rounds_mean": f["rounds_mean"],
                "rounds_lo": f["rounds_lo"],
                "rounds_hi": f["rounds_hi"],
                "rounds_sd": sd,
                "seat1_share": f["seat1_share"],
                "seat1_lo": f["seat1_lo"],
                "seat1_hi": f["seat1_hi"],
                "deals": f["deals"],
                **luck_vs_skill(results, v),
            }
        )
    return pd.DataFrame(rows)


def rounds_table(results, variants) -> pd.DataFrame:
    """Histogram of game length per variant (all strategy pairs pooled)."""
    import pandas as pd

    rows = []
    for v in variants:
        runs = variant_runs(results, v)
        if not runs:
            continue
        hist = pooled_rounds(runs)
        for k in np.nonzero(hist)[0]:
            rows.append({"variant": v, "rounds": int(k), "count": int(hist[k])})
    return pd.DataFrame(rows)


EQUIVALENCE_MARGIN = 0.01  # ±1 point of score: "no practical change" in the diffs table


def variant_diffs(
    results, variants, strategies, base: str = "base", margin: float = EQUIVALENCE_MARGIN
) -> pd.DataFrame:
    """Each variant's paired difference from ``base`` in each strategy's score.

    For strategy s, every deal of every match of s is a pair: its score under
    the variant minus its score under base on the same seed. The matches of s
    replay the same deals, so the standard error is cluster-robust over the
    deal (seed, deal index) across all of them (:func:`balance.stats.cluster_mean`),
    not that of independent pairs. Holm adjusts the
    whole family (all variants × strategies) for familywise error, and
    Benjamini–Hochberg gives the false-discovery-rate view of the same family
    (``p_bh``). TOST asks the opposite question, whether the change is within
    ±``margin`` (``tost_p``, ``equivalent``): failing to find a difference is
    not the same as finding none.
    """
    import pandas as pd

    rows = []
    for v in variants:
        if v == base:
            continue
        for s in strategies:
            d = []
            for (vv, a, b), res in results.items():
                if vv != v or s not in (a, b) or a == b:
                    continue
                ref = results.get((base, a, b))
                if ref is None or ref.spec.seed != res.spec.seed:
                    continue
                # the same seed deals the same cards at any run size: pair the
                # deals both runs played
                k = min(len(res.pair_points), len(ref.pair_points))
                diff = (_side_points(res, s)[:k] - _side_points(ref, s)[:k]) / 4.0
                d.append((res.spec.seed, np.vstack([diff, np.ones(k)])))
            if not d:
                continue
            y, m = stats.pool_by_deal(d)
            pdiff = stats.cluster_mean(y, m)
            eq = stats.tost(pdiff["mean"], pdiff["se"], margin)
            rows.append(
                {
                    "variant": v,
                    "strategy": s,
                    "n_pairs": pdiff["n"],
                    "diff": pdiff["mean"],
                    "diff_lo": pdiff["lo"],
                    "diff_hi": pdiff["hi"],
                    "p": pdiff["p"],
                    "tost_p": eq["p"],
                    "equivalent": bool(eq["equivalent"]),
                    "margin": margin,
                }
            )
    df = pd.DataFrame(
        rows,
        columns=[
            "variant",
            "strategy",
            "n_pairs",
            "diff",
            "diff_lo",
            "diff_hi",
            "p",
            "tost_p",
            "equivalent",
            "margin",
        ],
    )
    if len(df):
        reject, padj = stats.holm(df["p"].to_numpy())
        df["p_holm"] = padj
        df["significant"] = reject
        df["p_bh"] = stats.bh(df["p"].to_numpy())[1]
    else:
        df["p_holm"] = []
        df["significant"] = []
        df["p_bh"] = []
    return df


def compare_tables(results, variants, strategies) -> dict[str, pd.DataFrame]:
    """Every table of a variant comparison."""
    return {
        "matrix": matrix(results),
        "strategies": strategy_table(results, variants, strategies),
        "variants": variant_table(results, variants),
        "diffs": variant_diffs(results, variants, strategies),
        "rounds": rounds_table(results, variants),
    }


# ---- card value ------------------------------------------------------------------
def _diff_ci(p1, n1, p2, n2, z=1.959963984540054):
    se = np.sqrt(p1 * (1 - p1) / np.maximum(n1, 1) + p2 * (1 - p2) / np.maximum(n2, 1))
    return p1 - p2 - z * se, p1 - p2 + z * se


def card_table(res: RunResult, group: str = "card") -> pd.DataFrame:
    """Observational card value for side A (17lands style; biased by game
    length, labelled as observational): played WR, games-in-hand WR, not-seen
    WR and improvement when in hand (IWD = GIH WR − GNS WR), by card, rank or
    suit."""
    import pandas as pd

    eng = get_game(res.spec.game).engine_module()
    cat = pd.DataFrame(eng.catalogue())
    c = pd.DataFrame(res.cards[0], columns=CARD_FIELDS)
    c["card"] = cat["label"]
    c["rank"] = cat["rank"]
    c["suit"] = cat["suit"]
    keys = {"card": ["card", "rank", "suit"], "rank": ["rank"], "suit": ["suit"]}[group]
    order = {
        "card": list(cat["label"]),
        "rank": list(dict.fromkeys(cat["rank"])),
        "suit": list(dict.fromkeys(cat["suit"])),
    }[group]
    g = c.groupby(keys, sort=False)[list(CARD_FIELDS)].sum().reset_index()
    g["_o"] = g[group].map({k: i for i, k in enumerate(order)})
    g = g.sort_values("_o").drop(columns="_o").reset_index(drop=True)
    out = g[keys].copy()
    out.insert(0, "variant", res.spec.ruleset.name)
    out.insert(1, "strategy", res.spec.a.name)
    out.insert(2, "opponent", res.spec.b.name)
    for kind in ("played", "gih", "gns"):
        n = g[f"{kind}_n"].to_numpy()
        w = g[f"{kind}_w"].to_numpy()
        with np.errstate(invalid="ignore", divide="ignore"):
            wr = np.where(n > 0, w / np.maximum(n, 1), np.nan)
        lo, hi = stats.wilson(w, n)
        out[f"{kind}_n"] = n
        out[f"{kind}_wr"] = wr
        out[f"{kind}_lo"] = lo
        out[f"{kind}_hi"] = hi
    out["iwd"] = out["gih_wr"] - out["gns_wr"]
    out["iwd_lo"], out["iwd_hi"] = _diff_ci(
        out["gih_wr"], out["gih_n"], out["gns_wr"], out["gns_n"]
    )
    return out


def restricted_table(base: RunResult, restricted: dict[str, RunResult]) -> pd.DataFrame:
    """Paired effect on A's score of forbidding it to play each rank
    (restricted play, Jaffe et al. 2012): restricted minus standard on the same
    deals; Holm across the ranks."""
    import pandas as pd

    rows = []
    for rank, res in restricted.items():
        d = stats.paired_diff_from_points(res.pair_points.astype(int), base.pair_points.astype(int))
        rows.append(
            {
                "variant": base.spec.ruleset.name,
                "strategy": base.spec.a.name,
                "opponent": base.spec.b.name,
                "rank": rank,
                "n_pairs": d["n"],
                "effect": d["mean"],
                "effect_lo": d["lo"],
                "effect_hi": d["hi"],
                "p": d["p"],
            }
        )
    df = pd.DataFrame(rows)
    if len(df):
        reject, padj = stats.holm(df["p"].to_numpy())
        df["p_holm"] = padj
        df["significant"] = reject
    return df
