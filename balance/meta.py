"""The meta-game and the game's shape, from a round robin's runs.

- ``ratings``: Bradley–Terry (Elo) ratings with 95% CIs per variant, the
  max-entropy Nash mixture of the score matrix and each strategy's Nash
  average (its score minus ½ against that mixture, with a bootstrap CI), and
  which strategies dominate (lower CI above ½ against every other).
- ``cycles``: significant 3-cycles (a beats b beats c beats a, each at 95%).
- ``game_metrics``: Browne/Ludii metrics per variant: seat balance and
  advantage, completion, draws and timeouts, duration, and from the per-round
  HP trace lead changes, drama and decisiveness; every interval clustered by
  deal across the matches that replay it (``balance.tables.per_game_figures``).
- ``pairing``: what duplicate seating bought: paired SE / unpaired SE per
  match.

Game-agnostic: everything is computed from :class:`balance.runner.RunResult`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from balance import stats
from balance.metrics import metrics_table
from balance.tables import per_game_figures, pooled_rounds, variant_runs


def _score_matrix(results, variant: str, strategies: list[str]):
    """Row's mean score vs column (pentanomial), its SE and lower/upper bounds."""
    n = len(strategies)
    idx = {s: i for i, s in enumerate(strategies)}
    score = np.full((n, n), np.nan)
    se = np.full((n, n), np.nan)
    lo = np.full((n, n), np.nan)
    np.fill_diagonal(score, 0.5)
    np.fill_diagonal(se, 0.0)
    games = np.zeros((n, n), dtype=np.int64)
    deals: dict[tuple[int, int], tuple] = {}  # (i, j), i < j: (seed, i's points per deal)
    for (v, a, b), res in results.items():
        if v != variant or a not in idx or b not in idx or a == b:
            continue
        i, j = idx[a], idx[b]
        pen = stats.pentanomial_score(stats.pentanomial_counts(res.pair_points))
        score[i, j], score[j, i] = pen["score"], 1 - pen["score"]
        se[i, j] = se[j, i] = pen["se"]
        lo[i, j], lo[j, i] = pen["lo"], 1 - pen["hi"]
        games[i, j] = games[j, i] = res.games
        pts = res.pair_points.astype(float) / 2.0
        deals[(min(i, j), max(i, j))] = (res.spec.seed, pts if i < j else 2.0 - pts)
    return score, se, lo, games, deals


def ratings_tables(results, variants: list[str], strategies: list[str]) -> dict[str, pd.DataFrame]:
    """Per variant: Bradley–Terry Elo, Nash mixture and average, dominance, 3-cycles."""
    rows, cyc = [], []
    for v in variants:
        present = sorted(
            {s for (vv, a, b) in results if vv == v for s in (a, b)}, key=strategies.index
        )
        if len(present) < 2:
            continue
        score, se, lo, games, deals = _score_matrix(results, v, present)
        n = len(present)
        iu, ju = np.triu_indices(n, 1)
        have = games[iu, ju] > 0
        args = (n, iu[have], ju[have], games[iu, ju][have], (score[iu, ju] * games[iu, ju])[have])
        # errors cluster-robust over deals: a deal's two games share its shuffles,
        # and every match of the round robin replays the same deals
        dp = [deals[(int(i), int(j))] for i, j in zip(iu[have], ju[have], strict=False)]
        bt = stats.bradley_terry(*args, names=present, deal_points=dp)
        if not bt.attrs.get("mle_exists", True):
            # a strategy that never scores has no finite MLE (Ford 1957): one
            # virtual draw per pair gives finite, slightly shrunk ratings
            bt = stats.bradley_terry(*args, names=present, virtual_draws=1.0, deal_points=dp)
        complete = bool(have.all())
        if complete:
            nash = stats.nash_average(score, se, n_boot=200, seed=0)
        dom = set(stats.dominant(lo)) if complete else set()
        for i, s in enumerate(present):
            r = bt.iloc[i]
            row = {
                "variant": v,
                "strategy": s,
                "games": int(games[i].sum()),
                "elo": r["rating"],
                "elo_lo": r["lo"],
                "elo_hi": r["hi"],
                "elo_se": r["se"],
                "dominant": i in dom,
            }
            if complete:
                row.update(
                    {
                        "nash_p": nash["p"][i],
                        "nash_p_lo": nash["p_lo"][i],
                        "nash_p_hi": nash["p_hi"][i],
                        "nash_rating": nash["rating"][i],
                        "nash_lo": nash["rating_lo"][i],
                        "nash_hi": nash["rating_hi"][i],
                        "nash_support": nash["support_share"][i],
                    }
                )
            rows.append(row)
        if complete:
            for i, j, k in stats.three_cycles(lo):
                cyc.append(
                    {
                        "variant": v,
                        "a": present[i],
                        "b": present[j],
                        "c": present[k],
                        "ab_lo": lo[i, j],
                        "bc_lo": lo[j, k],
                        "ca_lo": lo[k, i],
                        "games": int(min(games[i, j], games[j, k], games[k, i])),
                    }
                )
    cols = [
        "variant",
        "strategy",
        "games",
        "elo",
        "elo_lo",
        "elo_hi",
        "elo_se",
        "dominant",
        "nash_p",
        "nash_p_lo",
        "nash_p_hi",
        "nash_rating",
        "nash_lo",
        "nash_hi",
        "nash_support",
    ]
    ratings = pd.DataFrame(rows).reindex(columns=cols)
    cycles = pd.DataFrame(
        cyc, columns=["variant", "a", "b", "c", "ab_lo", "bc_lo", "ca_lo", "games"]
    )
    return {"ratings": ratings, "cycles": cycles}


def game_metrics_table(results, variants: list[str]) -> pd.DataFrame:
    """Browne/Ludii game metrics per variant, all strategy pairs pooled."""

    trace = metrics_table(results, variants)

    rows = []
    for v in variants:
        runs = variant_runs(results, v)
        if not runs:
            continue
        games = sum(r.games for r in runs)
        s0 = sum(int(r.seat_wins[0]) for r in runs)
        s1 = sum(int(r.seat_wins[1]) for r in runs)
        draws = sum(int(r.draws) for r in runs)
        sb = stats.seat_balance(s0, s1, games, draws=draws)
        # every interval from deals: each run keeps per-deal sums (which seat won
        # each game, draws, round-cap games, lengths), pooled by deal across the
        # matches that replay it; no design effect is assumed
        f = per_game_figures(runs)
        hist = pooled_rounds(runs)
        n = len(hist)
        dur = stats.hist_mean_ci(np.arange(n), hist)
        q = stats.quantile_from_hist(np.arange(n), hist, [0.1, 0.5, 0.9])
        row = {
            "variant": v,
            "games": games,
            "deals": f["deals"],
            "balance": sb["balance"],
            "seat_advantage": f["seat_advantage"],
            "seat_adv_lo": f["seat_adv_lo"],
            "seat_adv_hi": f["seat_adv_hi"],
            "seat1_share": f["seat1_share"],
            "seat1_lo": f["seat1_lo"],
            "seat1_hi": f["seat1_hi"],
            "completion": sb["completion"],
            "completion_lo": 1.0 - f["draw_hi"],
            "completion_hi": 1.0 - f["draw_lo"],
            "draw_rate": f["draw_rate"],
            "draw_lo": f["draw_lo"],
            "draw_hi": f["draw_hi"],
            "timeouts": f["timeouts"],
            "timeout_rate": f["cap_share"],
            "timeout_lo": f["cap_lo"],
            "timeout_hi": f["cap_hi"],
            "duration": f["rounds_mean"],
            "duration_lo": f["rounds_lo"],
            "duration_hi": f["rounds_hi"],
            "duration_sd": dur["sd"],
            "duration_p10": float(q[0]),
            "duration_p50": float(q[1]),
            "duration_p90": float(q[2]),
        }
        # an engine's per-game event counts (EVENT_COUNTS): games in which it happened
        from balance.registry import get_game

        eng = get_game(runs[0].spec.game).engine_module()
        for name, (label, _) in getattr(eng, "EVENT_COUNTS", {}).items():
            hs = [None if r.metrics is None else r.metrics.get(name) for r in runs]
            if all(h is not None for h in hs):
                row[f"event: {label}"] = sum(int(np.asarray(h)[1:].sum()) for h in hs)
        if trace is not None and len(trace):
            m = trace[trace["variant"] == v]
            if len(m):
                for k, val in m.iloc[0].items():
                    if k not in ("variant", "games"):
                        row[k] = val
        rows.append(row)
    return pd.DataFrame(rows)


def pairing_table(results) -> pd.DataFrame:
    """Per match: paired (pentanomial) SE of the score / SE if games were independent."""
    rows = []
    for (v, a, b), res in results.items():
        counts = stats.pentanomial_counts(res.pair_points)
        draw = res.draws / res.games if res.games else np.nan
        pen = stats.pentanomial_score(counts)
        rows.append(
            {
                "variant": v,
                "a": a,
                "b": b,
                "games": res.games,
                "paired_se": pen["se"],
                "unpaired_se": stats.unpaired_score_se(counts, draw),
                "ratio": stats.variance_reduction(counts, draw_rate=draw),
            }
        )
    return pd.DataFrame(rows)


def meta_tables(results, variants: list[str], strategies: list[str]) -> dict[str, pd.DataFrame]:
    """Every meta-game and game-shape table of a round robin."""
    out = ratings_tables(results, variants, strategies)
    out["metrics"] = game_metrics_table(results, variants)
    out["pairing"] = pairing_table(results)
    return out
