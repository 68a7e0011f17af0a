"""Loadout analyses for games whose players pick equipment before play
(Clash of Steel: 2 of 5 items and 1 of 3 maneuvers).

An engine with loadouts exposes ``ALL_LOADOUTS`` (a list of ``(item, item,
maneuver)`` index tuples; ``LOADOUTS`` those legal under the printed rules),
``legal_loadouts(rules)`` (the indices a ruleset allows: Clash of Steel's
``allow_shield_spear`` adds three), ``ITEMS`` and ``MANEUVERS`` (names) and
``loadout_name(i)``; a strategy carries its loadout in its vector
(:meth:`balance.config.Strategy.with_loadout`). Every figure here comes from
seat-swapped runs on common seeds and carries its CI and n:

- the loadout matrix: row loadout's score against column loadout;
- each loadout's score against the field of all loadouts, and its Nash
  average (max-entropy Nash of the matrix: clone-proof);
- item pairs and maneuvers: the pooled score of the loadouts that hold them;
- each item's marginal value: loadouts holding it minus those that do not;
- the best response to each loadout.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from balance import config, runner, stats
from balance.registry import get_game
from balance.store import Store

EXPERIMENT = "loadout-matrix"  # the runs' tag: every loadout against every loadout


def loadout_specs(game: str, variant: str, a: str, b: str, n: int, seed: int) -> list:
    """Every run of the loadout matrix of strategy ``a`` (rows) against ``b``
    (columns). With the same strategy on both sides the matrix is
    antisymmetric, so only i ≤ j is played (the diagonal scores ½ exactly and
    is played as a check); otherwise every ordered pair is played."""

    rs = config.resolve_variant(game, variant)
    sa, sb = config.load_strategy(game, a), config.load_strategy(game, b)
    eng = get_game(game).engine_module()
    k = len(eng.legal_loadouts(rs.rules))
    same = sa.name.split("@")[0] == sb.name.split("@")[0]
    specs = []
    for i in range(k):
        for j in range(i if same else 0, k):
            specs.append(
                runner.RunSpec(
                    rs, sa.with_loadout(i), sb.with_loadout(j), n, seed, experiment=EXPERIMENT
                )
            )
    return specs


def legal(game: str, runs: list) -> list:
    """The ``(item, item, maneuver)`` loadouts legal under the rules of ``runs``
    (a loadout matrix is played under one ruleset), in index order."""
    eng = get_game(game).engine_module()
    if not runs:
        return list(eng.LOADOUTS)
    return [eng.ALL_LOADOUTS[i] for i in eng.legal_loadouts(runs[0].spec.ruleset.rules)]


def _mirror(runs: list) -> bool:
    """True when the matrix's runs have the same strategy on both sides (only
    i <= j is played then; the other half follows by antisymmetry)."""
    return bool(runs) and runs[0].spec.a.name.split("@")[0] == runs[0].spec.b.name.split("@")[0]


def _points(res, row_side: int) -> np.ndarray:
    pts = res.pair_points.astype(np.int64)
    return pts if row_side == 0 else 4 - pts


def loadout_matrix(game: str, runs: list) -> tuple[pd.DataFrame, dict]:
    """Long table of the matrix (row, col, score with CI, n) and the per-cell
    (seed, pair points) (row's half-points per deal) for pooling by deal."""
    eng = get_game(game).engine_module()
    cells: dict[tuple[int, int], tuple[int, np.ndarray]] = {}
    same = _mirror(runs)
    for r in runs:
        i, j = r.spec.a.loadout, r.spec.b.loadout
        cells[(i, j)] = (r.spec.seed, _points(r, 0))
        if same and i != j:
            cells[(j, i)] = (r.spec.seed, _points(r, 1))
    rows = []
    for (i, j), (_, pts) in sorted(cells.items()):
        pen = stats.pentanomial_score(stats.pentanomial_counts(pts))
        rows.append(
            {
                "row": eng.loadout_name(i),
                "col": eng.loadout_name(j),
                "i": i,
                "j": j,
                "score": pen["score"],
                "score_lo": pen["lo"],
                "score_hi": pen["hi"],
                "se": pen["se"],
                "games": pen["n_games"],
            }
        )
    df = pd.DataFrame(rows)
    return df, cells


def _pool(cells: dict, keeps) -> np.ndarray:
    """Per-deal (points, games) of the cells each of ``keeps`` selects, summed by
    deal (seed, deal index): rows 2k, 2k+1 are pool k's points and games. Every
    cell of a matrix replays the same deals, so the deal is the cluster."""
    parts = []
    for (i, j), (seed, p) in cells.items():
        sel = [bool(k(i, j)) for k in keeps]
        if not any(sel):
            continue
        v = np.zeros((2 * len(keeps), len(p)))
        for k, on in enumerate(sel):
            if on:
                v[2 * k] = p / 2.0
                v[2 * k + 1] = 2.0
        parts.append((seed, v))
    return stats.pool_by_deal(parts) if parts else np.zeros((2 * len(keeps), 0))


def _pooled(cells: dict, keep) -> dict:
    """Score of the cells ``keep`` selects, pooled, with a cluster-robust CI
    over deals (the cells share their deals: not independent games)."""
    y, m = _pool(cells, [keep])
    if not m.sum():
        return {"score": np.nan, "lo": np.nan, "hi": np.nan, "se": np.nan, "n_games": 0}
    c = stats.cluster_mean(y, m, bounds=(0.0, 1.0))
    return {"score": c["mean"], "lo": c["lo"], "hi": c["hi"], "se": c["se"], "n_games": c["n"]}


def _choice_tables(eng, L: list, cells: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Item pairs and maneuvers, each pooled over the loadouts (``L``) that hold them."""
    pairs = []
    for pair in sorted({(min(a, b), max(a, b)) for a, b, _ in L}):
        members = [i for i, (a, b, _) in enumerate(L) if (min(a, b), max(a, b)) == pair]
        p = _pooled(cells, lambda a, b, m=set(members): a in m)
        pairs.append(
            {
                "items": f"{eng.ITEMS[pair[0]]}+{eng.ITEMS[pair[1]]}",
                "loadouts": len(members),
                "score": p["score"],
                "score_lo": p["lo"],
                "score_hi": p["hi"],
                "games": p["n_games"],
            }
        )
    pairs = pd.DataFrame(pairs).sort_values("score", ascending=False, ignore_index=True)
    mans = []
    for m, mname in enumerate(eng.MANEUVERS):
        members = {i for i, (_, _, mm) in enumerate(L) if mm == m}
        p = _pooled(cells, lambda a, b, s=members: a in s)
        mans.append(
            {
                "maneuver": mname,
                "loadouts": len(members),
                "score": p["score"],
                "score_lo": p["lo"],
                "score_hi": p["hi"],
                "games": p["n_games"],
            }
        )
    mans = pd.DataFrame(mans).sort_values("score", ascending=False, ignore_index=True)
    return pairs, mans


def pairing_name(run) -> str:
    """``'counter vs aggressive'``: the strategies of a loadout-matrix run."""
    return f"{run.spec.a.name.split('@')[0]} vs {run.spec.b.name.split('@')[0]}"


def by_pairing(runs: list) -> dict[str, list]:
    """Loadout-matrix runs grouped by strategy pairing, in order of appearance."""
    out: dict[str, list] = {}
    for r in runs:
        out.setdefault(pairing_name(r), []).append(r)
    return out


def pairing_choice_table(game: str, runs: list) -> pd.DataFrame:
    """Item pairs and maneuvers under each strategy pairing of ``runs``: one
    row per (pairing, kind, choice) with the pooled score, CI and games."""
    eng = get_game(game).engine_module()
    rows = []
    for name, rs in by_pairing(runs).items():
        _, cells = loadout_matrix(game, rs)
        pairs, mans = _choice_tables(eng, legal(game, rs), cells)
        for kind, df, col in (("item pair", pairs, "items"), ("maneuver", mans, "maneuver")):
            for r in df.to_dict("records"):
                rows.append(
                    {
                        "pairing": name,
                        "kind": kind,
                        "choice": r[col],
                        "score": r["score"],
                        "score_lo": r["score_lo"],
                        "score_hi": r["score_hi"],
                        "games": r["games"],
                    }
                )
    return pd.DataFrame(rows)


def loadout_tables(game: str, runs: list) -> dict[str, pd.DataFrame]:
    """Every loadout table from the runs of one strategy pairing."""
    eng = get_game(game).engine_module()
    L = legal(game, runs)
    k = len(L)
    names = [eng.loadout_name(i) for i in range(k)]
    matrix, cells = loadout_matrix(game, runs)
    score = np.full((k, k), np.nan)
    se = np.full((k, k), np.nan)
    for r in matrix.itertuples():
        score[r.i, r.j] = r.score
        se[r.i, r.j] = r.se
    # the field: each loadout against every loadout (itself included), pooled
    field = []
    for i in range(k):
        p = _pooled(cells, lambda a, b, i=i: a == i)
        field.append(
            {
                "loadout": names[i],
                "item1": eng.ITEMS[L[i][0]],
                "item2": eng.ITEMS[L[i][1]],
                "maneuver": eng.MANEUVERS[L[i][2]],
                "score": p["score"],
                "score_lo": p["lo"],
                "score_hi": p["hi"],
                "games": p["n_games"],
            }
        )
    field = pd.DataFrame(field)
    # Nash averaging needs a symmetric game: the same strategy on both sides,
    # where the matrix is antisymmetric by construction (score[j, i] = 1 - score[i, j])
    symmetric = np.isfinite(score).all() and np.allclose(score + score.T, 1.0)
    if symmetric:
        nash = stats.nash_average(score, se, n_boot=200, seed=0)
        field["nash_p"] = nash["p"]
        field["nash_rating"] = nash["rating"]
        field["nash_lo"] = nash["rating_lo"]
        field["nash_hi"] = nash["rating_hi"]
        field["nash_p_lo"] = nash["p_lo"]
        field["nash_p_hi"] = nash["p_hi"]
    # best response to each column loadout
    best = []
    for j in range(k):
        col = score[:, j]
        if not np.isfinite(col).any():
            continue
        i = int(np.nanargmax(col))
        r = matrix[(matrix["i"] == i) & (matrix["j"] == j)].iloc[0]
        best.append(
            {
                "against": names[j],
                "best_response": names[i],
                "score": r.score,
                "score_lo": r.score_lo,
                "score_hi": r.score_hi,
                "games": int(r.games),
            }
        )
    best = pd.DataFrame(best)
    pairs, mans = _choice_tables(eng, L, cells)

    # each item's marginal value: with it minus without it, the two pooled
    # scores on the same deals, so the CI of the difference is cluster-robust
    # over deals (a deal both pools play counts once)
    items = []
    for it, iname in enumerate(eng.ITEMS):
        hold = {i for i, (a, b, _) in enumerate(L) if it in (a, b)}
        if not hold:
            continue
        y1, m1, y2, m2 = _pool(
            cells, [lambda a, b, s=hold: a in s, lambda a, b, s=hold: a not in s]
        )
        if not (m1.sum() and m2.sum()):
            continue
        w, wo = y1.sum() / m1.sum(), y2.sum() / m2.sum()
        d = stats.cluster_mean_diff(y1, m1, y2, m2)
        items.append(
            {
                "item": iname,
                "loadouts": len(hold),
                "with_item": w,
                "without_item": wo,
                "marginal": d["diff"],
                "marginal_lo": d["lo"],
                "marginal_hi": d["hi"],
                "games_with": int(m1.sum()),
                "games_without": int(m2.sum()),
            }
        )
    items = pd.DataFrame(items).sort_values("marginal", ascending=False, ignore_index=True)
    return {
        "loadout_matrix": matrix,
        "loadouts": field,
        "best_response": best,
        "item_pairs": pairs,
        "maneuvers": mans,
        "items": items,
        "ranges_by_loadout": ranges_by_loadout(game, runs),
    }


# ---- initiative and ranges (from the engine's exact histograms) -------------------------
def _hist_sum(runs: list, name: str) -> np.ndarray | None:
    hs = [r.metrics.get(name) for r in runs if r.metrics and name in r.metrics]
    if not hs:
        return None
    n = max(len(h) for h in hs)
    return sum(np.pad(np.asarray(h, np.int64), (0, n - len(h))) for h in hs)


def _total(run, name: str) -> int:
    """The sum over games of a per-game count kept as a histogram (0 if absent)."""
    h = _hist_sum([run], name)
    return 0 if h is None else int((np.arange(len(h)) * h).sum())


def initiative_table(runs: list) -> pd.DataFrame:
    """The value of winning the opening bid, by the winning bid's size.

    From the engine's ``init_bid`` histogram: value = 3 × (the bid winner's
    bid sum) + the bid winner's result (0 loss, 1 draw, 2 win). Each row: bid
    size (a string: the last row is "all"), games, the bid winner's win rate
    (Wilson) and score."""
    h = _hist_sum(runs, "init_bid")
    if h is None:
        return pd.DataFrame(
            columns=[
                "bid",
                "games",
                "wins",
                "draws",
                "winrate",
                "winrate_lo",
                "winrate_hi",
                "score",
            ]
        )
    h = np.pad(h, (0, (-len(h)) % 3)).reshape(-1, 3)
    rows = []
    for size, (loss, draw, win) in enumerate(h):
        games = int(loss + draw + win)
        if not games:
            continue
        lo, hi = stats.wilson(int(win), games)
        rows.append(
            {
                "bid": str(size),
                "games": games,
                "wins": int(win),
                "draws": int(draw),
                "winrate": win / games,
                "winrate_lo": lo,
                "winrate_hi": hi,
                "score": (win + draw / 2) / games,
            }
        )
    tot = h.sum(axis=0)
    games = int(tot.sum())
    if games:
        lo, hi = stats.wilson(int(tot[2]), games)
        rows.append(
            {
                "bid": "all",
                "games": games,
                "wins": int(tot[2]),
                "draws": int(tot[1]),
                "winrate": tot[2] / games,
                "winrate_lo": lo,
                "winrate_hi": hi,
                "score": (tot[2] + tot[1] / 2) / games,
            }
        )
    return pd.DataFrame(rows)


def run_matrix(
    game: str,
    variant: str,
    a: str,
    b: str,
    n: int,
    seed: int,
    threads,
    results,
    batch_size: int = 1 << 15,
    progress: bool = True,
    store_only: bool = False,
) -> list:
    """Play (or read from the store) every run of the loadout matrix (with
    ``store_only``, read only: a missing run is a one-line error)."""

    n = runner.check_games(n)
    runner.check_seed(seed)
    specs = loadout_specs(game, variant, a, b, n, seed)
    return runner.run_many(
        specs,
        store=Store(results),
        threads=threads,
        batch_size=batch_size,
        progress=progress,
        store_only=store_only,
        label=f"{game}: {len(specs)} loadout pairings",
    )


def ranges_by_loadout(game: str, runs: list) -> pd.DataFrame:
    """Per row loadout, pooled over its opponents: rounds fought and the share
    won at each range (Wilson CI)."""
    eng = get_game(game).engine_module()
    k = len(legal(game, runs))
    keys = [x.lower() for x in eng.RANGES]  # the engine's histograms: rounds_<range>, ...
    same = _mirror(runs)
    fought = np.zeros((k, len(keys)), np.int64)
    won = np.zeros_like(fought)
    for r in runs:
        n = [_total(r, f"rounds_{x}") for x in keys]
        sides = [("a", r.spec.a.loadout)]
        if same and r.spec.b.loadout != r.spec.a.loadout:
            sides.append(("b", r.spec.b.loadout))
        for side, i in sides:
            if i is None or not 0 <= i < k:
                continue
            fought[i] += n
            won[i] += [_total(r, f"{side}_wins_{x}") for x in keys]
    rows = []
    for i in range(k):
        for j, rng_name in enumerate(keys):
            n, w = int(fought[i, j]), int(won[i, j])
            lo, hi = stats.wilson(w, n) if n else (np.nan, np.nan)
            rows.append(
                {
                    "loadout": eng.loadout_name(i),
                    "range": rng_name.capitalize(),
                    "rounds": n,
                    "won": w,
                    "share": w / n if n else np.nan,
                    "share_lo": lo,
                    "share_hi": hi,
                }
            )
    return pd.DataFrame(rows)
