"""Game-level score-trace metrics (Browne; Ludii): lead changes, drama, decisiveness.

The engine measures, for every game, a score at the end of each round (in
Tosk the HP difference ``hp[0] - hp[1]``, after healing; in the deciding
round, after combat) and returns three numbers per game, which the runner
keeps as exact histograms (``RunResult.metrics``):

- ``lead_changes``: how often the lead (the seat strictly ahead; a tied round
  keeps the previous leader) passed from one seat to the other; the first
  lead is not a change. Counted for every game, draws included.
- ``max_deficit``: the eventual winner's largest deficit (opponent's score
  minus its own, at least 0) at any round end. Decided games only.
- ``decided_pct``: ``(100 * r) // rounds``, where ``r`` is the last round at
  whose end the winner was not strictly ahead (0 if it led at every round
  end): the share of the game, in whole percent, played before the winner
  took the lead for good. Decided games only.

This module pools several runs of one game and variant and summarises them
with intervals. The values come from the pooled histograms; the intervals
from the runs' per-deal sums (``RunResult.deal_sums``), added up by deal
across every match that replays it (``balance.tables.pooled_deals``): a
deal's two games, and its replays in the other matches of a round robin, are
one cluster. Means carry the cluster-robust normal 95% interval
(``balance.stats.cluster_mean``), shares the design-effect Wilson interval
(``balance.stats.cluster_wilson``); no design effect is assumed.
"""

from __future__ import annotations

import numpy as np

from balance.runner import DEAL_METRICS
from balance.stats import cluster_mean, cluster_wilson, mean_sd_from_hist, quantile_from_hist

NAMES = DEAL_METRICS
TABLE_COLUMNS = (
    "variant",
    "games",
    "decided",
    "lead_changes",
    "lead_changes_lo",
    "lead_changes_hi",
    "lead_change_share",
    "lead_change_share_lo",
    "lead_change_share_hi",
    "drama",
    "drama_lo",
    "drama_hi",
    "comeback_share",
    "comeback_share_lo",
    "comeback_share_hi",
    "decisiveness",
    "decisiveness_lo",
    "decisiveness_hi",
)
_NAN = float("nan")


def pooled_histograms(runs) -> dict[str, np.ndarray] | None:
    """Sum of the runs' metric histograms by name; None if any run lacks them
    (a partial pool would describe other games than the win rates do)."""
    if not runs or any(r.metrics is None for r in runs):
        return None
    out: dict[str, np.ndarray] = {}
    for r in runs:
        for name, h in r.metrics.items():
            h = np.asarray(h, np.int64)
            cur = out.get(name)
            if cur is None:
                out[name] = h.copy()
            else:
                n = max(len(cur), len(h))
                out[name] = np.pad(cur, (0, n - len(cur))) + np.pad(h, (0, n - len(h)))
    return out


def _mean_ci(
    values: np.ndarray, counts: np.ndarray, y, m, scale: float = 1.0
) -> tuple[float, float, float, float]:
    """Mean and SD of a histogram, with the deal-clustered 95% interval of the
    mean from per-cluster sums ``y`` (in the histogram's bins, times
    ``scale``) over ``m`` games (None: no interval)."""
    n = int(counts.sum())
    if n == 0:
        return _NAN, _NAN, _NAN, _NAN
    mean, sd = mean_sd_from_hist(values, counts)
    if y is None:
        return mean, sd, _NAN, _NAN
    c = cluster_mean(np.asarray(y) * scale, m)
    return mean, sd, c["lo"], c["hi"]


def _share(k: int, n: int, y, m) -> tuple[float, float, float]:
    """A share ``k / n`` with the design-effect Wilson interval of per-cluster
    counts ``y`` of ``m`` games (None: no interval)."""
    if n == 0:
        return _NAN, _NAN, _NAN
    if y is None:
        return k / n, _NAN, _NAN
    w = cluster_wilson(y, m)
    return k / n, w["lo"], w["hi"]


def game_metrics(runs: list) -> dict:
    """Score-trace metrics pooled over ``runs`` (RunResults of one game/variant).

    Returns a dict: ``games`` (all games of the runs), ``decided`` (games with
    a winner, as counted by the metric histograms), ``lead_changes`` (mean per
    game) with ``_sd``, ``_lo``, ``_hi``; ``lead_change_share`` (games with at
    least one lead change) with a Wilson ``_lo``/``_hi``; ``drama`` (mean of the
    winner's largest deficit, in score points, over decided games) with
    ``_sd``/``_lo``/``_hi``; ``comeback_share`` (decided games whose winner
    trailed at some round end, i.e. ``max_deficit > 0``) with Wilson bounds;
    ``decisiveness`` (mean of ``decided_pct / 100`` over decided games: 0 =
    the winner led from the first round on, near 1 = decided in the last
    round) with ``_sd``/``_lo``/``_hi`` and ``decisiveness_median``. Metric
    values are NaN when a run has no metrics (or no game qualifies).
    Histogram bins are clipped at their size − 1 (``METRICS`` of the engine),
    which no realistic game reaches.
    """
    games = int(sum(r.games for r in runs))
    out: dict = {"games": games, "decided": games - int(sum(r.draws for r in runs))}
    hists = pooled_histograms(runs)
    if hists is None or any(name not in hists for name in NAMES):
        for key in ("lead_changes", "lead_change_share", "drama", "comeback_share", "decisiveness"):
            out[key] = out[f"{key}_lo"] = out[f"{key}_hi"] = _NAN
        for key in ("lead_changes_sd", "drama_sd", "decisiveness_sd", "decisiveness_median"):
            out[key] = _NAN
        return out

    from balance.tables import pooled_deals

    c = pooled_deals(runs)
    if c is not None and any(name not in c for name in NAMES):
        c = None

    def sums(name: str, part: str = ""):
        return None if c is None else c[name + part]

    lc = hists["lead_changes"]
    n_lc = int(lc.sum())
    out["lead_changes"], out["lead_changes_sd"], out["lead_changes_lo"], out["lead_changes_hi"] = (
        _mean_ci(np.arange(len(lc)), lc, sums("lead_changes"), sums("lead_changes", "_n"))
    )
    out["lead_change_share"], out["lead_change_share_lo"], out["lead_change_share_hi"] = _share(
        n_lc - int(lc[0]) if len(lc) else 0,
        n_lc,
        sums("lead_changes", "_pos"),
        sums("lead_changes", "_n"),
    )

    md = hists["max_deficit"]
    decided = int(md.sum())
    out["decided"] = decided
    out["drama"], out["drama_sd"], out["drama_lo"], out["drama_hi"] = _mean_ci(
        np.arange(len(md)), md, sums("max_deficit"), sums("max_deficit", "_n")
    )
    out["comeback_share"], out["comeback_share_lo"], out["comeback_share_hi"] = _share(
        decided - int(md[0]) if len(md) else 0,
        decided,
        sums("max_deficit", "_pos"),
        sums("max_deficit", "_n"),
    )

    dp = hists["decided_pct"]
    values = np.arange(len(dp)) / 100.0
    out["decisiveness"], out["decisiveness_sd"], out["decisiveness_lo"], out["decisiveness_hi"] = (
        _mean_ci(values, dp, sums("decided_pct"), sums("decided_pct", "_n"), scale=0.01)
    )
    out["decisiveness_median"] = float(quantile_from_hist(values, dp, 0.5)) if dp.sum() else _NAN
    return out


def metrics_table(results: dict, variants: list[str]):
    """One row per variant pooling all its runs (every strategy pair).

    ``results`` maps ``(variant, a, b)`` to a RunResult. Columns:
    ``TABLE_COLUMNS``; a variant without runs or without metrics gets NaN
    metric values (``games``/``decided`` count what there is).
    """
    import pandas as pd

    rows = []
    for v in variants:
        runs = [r for key, r in results.items() if key[0] == v]
        m = game_metrics(runs)
        rows.append({"variant": v, **{c: m[c] for c in TABLE_COLUMNS[1:]}})
    return pd.DataFrame(rows, columns=list(TABLE_COLUMNS))
