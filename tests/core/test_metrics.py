"""Score-trace metrics (lead changes, drama, decisiveness): the engine's per-game
numbers against a plain-Python reference on game logs, the runner's exact
histograms (any batch size, extended runs, the store) and the pooled summary."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from balance import runner
from balance.config import Ruleset, load_strategy, resolve_variant
from balance.metrics import TABLE_COLUMNS, game_metrics, metrics_table
from balance.runner import RunSpec, run_many, simulate_run
from balance.stats import cluster_mean, cluster_wilson
from balance.store import Store, parquet_bytes
from kernels.trace import track_score
from sims import tosk

SEED = 4242


# ---------------------------------------------------------------- reference


def reference(diffs, winner) -> dict:
    """The three metrics from the per-round scores ``hp0 - hp1`` (plain Python).

    Also returns the per-seat raw numbers (largest deficit, last round not
    strictly ahead) that the engine writes into its result row."""
    leader, changes = None, 0
    max_def = [0, 0]
    not_ahead = [0, 0]
    for r, d in enumerate(diffs, start=1):
        now = 0 if d > 0 else 1 if d < 0 else leader
        if leader is not None and now != leader:
            changes += 1
        leader = now
        max_def[0] = max(max_def[0], -d)
        max_def[1] = max(max_def[1], d)
        for s, ahead in ((0, d > 0), (1, d < 0)):
            if not ahead:
                not_ahead[s] = r
    if winner == -1:
        md, pct = -1, -1
    else:
        md, pct = max_def[winner], (100 * not_ahead[winner]) // len(diffs)
    return {
        "lead_changes": changes,
        "max_deficit": md,
        "decided_pct": pct,
        "raw": [changes, max_def[0], max_def[1], not_ahead[0], not_ahead[1]],
    }


HAND_MADE = [
    # diffs (hp0 - hp1 at each round end), winner, lead changes, max deficit, decided %
    ([0, 0, 0], 0, 0, 0, 100),  # never ahead until... the end, in a double KO
    ([1, 2, 3], 0, 0, 0, 0),  # led from the first round
    ([2, -1, 0, 3], 0, 2, 1, 75),  # a tie keeps the leader (seat 1 in round 3)
    ([-5, -3, 4], 0, 1, 5, 66),  # comeback from 5 down
    ([0, 0, -2, 0, 1], 0, 1, 2, 80),  # the first lead is not a change
    ([3, -2], 1, 1, 3, 50),  # seat 1 wins
    ([-1, -1, -1, -1], 1, 0, 0, 0),
    ([2, -1], 0, 1, 1, 100),  # winner behind at the end (double KO / sudden death)
    ([1, -1, 1, -1], -1, 3, -1, -1),  # a draw: lead changes only
    ([0], -1, 0, -1, -1),
]


@pytest.mark.parametrize("diffs, winner, lc, md, pct", HAND_MADE)
def test_reference_on_hand_made_traces(diffs, winner, lc, md, pct):
    ref = reference(diffs, winner)
    assert (ref["lead_changes"], ref["max_deficit"], ref["decided_pct"]) == (lc, md, pct)


@pytest.mark.parametrize("diffs, winner, lc, md, pct", HAND_MADE)
def test_engine_bookkeeping_on_hand_made_traces(diffs, winner, lc, md, pct):
    """``track_score`` (as play_game calls it) and ``outcome_arrays`` agree."""
    pairs = np.zeros((3, 2), np.int64)
    lead, max_def, not_ahead = pairs[0], pairs[1], pairs[2]
    lead[0] = -1
    for r, d in enumerate(diffs, start=1):
        hp = np.array([20 + d, 20], np.int64) if d >= 0 else np.array([20, 20 - d], np.int64)
        track_score.py_func(hp, r, lead, max_def, not_ahead)
    row = np.zeros((2, tosk.N_RESULT), np.int64)  # the same game in both seat orders of A
    row[:, 0], row[:, 1] = winner, len(diffs)
    row[:, tosk.R_LEAD_CHANGES] = lead[1]
    row[:, tosk.R_MAX_DEFICIT : tosk.R_MAX_DEFICIT + 2] = max_def
    row[:, tosk.R_NOT_AHEAD : tosk.R_NOT_AHEAD + 2] = not_ahead
    assert [lead[1], *max_def, *not_ahead] == reference(diffs, winner)["raw"]
    out = tosk.outcome_arrays(row)
    for name, want in (("lead_changes", lc), ("max_deficit", md), ("decided_pct", pct)):
        assert out[name].tolist() == [want, want], name


# ---------------------------------------------------------------- engine vs logs


def _rules(variant, **over):
    rs = resolve_variant("tosk", variant)
    return Ruleset("tosk", variant, (), {**rs.rules, **over}).vector()


MATCHES = [  # (rules, A, B, games): short brawls (double KOs, sudden death), long games, draws
    (("base", {}), "aggressor", "economist", 80),
    (("force+momentum", {}), "balanced", "random", 60),
    (("base", {"max_rounds": 6}), "turtle", "healer", 40),
    (("potent-healing", {}), "adaptive", "turtle", 20),
]


def test_simulate_matches_the_logged_score_trace():
    seen = {"lead_change": 0, "comeback": 0, "draw": 0, "late": 0, "ko": 0, "other_end": 0}
    total = 0
    for (variant, over), a, b, n in MATCHES:
        rv = _rules(variant, **over)
        sa, sb = load_strategy("tosk", a).vector(), load_strategy("tosk", b).vector()
        out = tosk.simulate(rv, sa, sb, SEED, 0, n)
        for g in range(n):
            log, res = tosk.trace_log(rv, sa, sb, SEED, g)
            diffs = (log[:, 0, tosk.L_HP_END] - log[:, 1, tosk.L_HP_END]).tolist()
            ref = reference(diffs, int(res[0]))
            assert res[tosk.R_LEAD_CHANGES : tosk.N_RESULT].tolist() == ref["raw"], (a, b, g)
            for name in tosk.METRICS:
                assert out[name][g] == ref[name], (variant, a, b, g, name)
            total += 1
            seen["lead_change"] += ref["lead_changes"] > 0
            seen["comeback"] += ref["max_deficit"] > 0
            seen["draw"] += ref["max_deficit"] == -1
            seen["late"] += ref["decided_pct"] == 100
            seen["ko" if res[2] == tosk.END_KO else "other_end"] += res[0] != -1
    assert total == 200
    assert all(v > 0 for v in seen.values()), seen  # every kind of trace was checked


def test_metric_ranges():
    rv = _rules("base")
    out = tosk.simulate(
        rv,
        load_strategy("tosk", "aggressor").vector(),
        load_strategy("tosk", "economist").vector(),
        SEED,
        0,
        400,
    )
    draw = out["winner_seat"] == tosk.DRAW
    assert (out["lead_changes"] >= 0).all() and (out["lead_changes"] < out["rounds"]).all()
    assert (out["max_deficit"][draw] == -1).all() and (out["decided_pct"][draw] == -1).all()
    assert (out["max_deficit"][~draw] >= 0).all()
    assert (out["max_deficit"][~draw] < tosk.METRICS["max_deficit"]).all()
    dp = out["decided_pct"][~draw]
    assert ((dp >= 0) & (dp <= 100)).all()
    # a winner that never trailed and led throughout decided the game at 0%
    assert (out["max_deficit"][~draw][dp == 0] == 0).all()


# ---------------------------------------------------------------- runner


def _spec(variant="base", a="aggressor", b="economist", n=400, per_game=False):
    return RunSpec(
        resolve_variant("tosk", variant),
        load_strategy("tosk", a),
        load_strategy("tosk", b),
        n,
        SEED,
        per_game,
    )


def _hist(values, size):
    v = np.asarray(values)
    return np.bincount(np.minimum(v[v >= 0], size - 1), minlength=size)


def _same_metrics(m1, m2):
    assert m1 is not None and m2 is not None and list(m1) == list(m2)
    for name in m1:
        assert m1[name].shape == m2[name].shape and np.array_equal(m1[name], m2[name]), name


def test_runner_histograms_are_exact_at_any_batch_size():
    whole = simulate_run(_spec(per_game=True))
    df = whole.per_game
    assert list(whole.metrics) == list(tosk.METRICS)
    for name, size in tosk.METRICS.items():
        h = whole.metrics[name]
        assert h.dtype == np.int64 and len(h) == size
        assert np.array_equal(h, _hist(df[name].to_numpy(), size)), name
    assert whole.metrics["lead_changes"].sum() == whole.games
    assert whole.metrics["max_deficit"].sum() == whole.games - whole.draws
    assert whole.metrics["decided_pct"].sum() == whole.games - whole.draws
    for batch in (2, 64, runner.DEFAULT_BATCH):
        _same_metrics(simulate_run(_spec(), batch_size=batch).metrics, whole.metrics)


def test_extending_a_run_keeps_exact_histograms():
    small = simulate_run(_spec(variant="force", n=150))
    whole = simulate_run(_spec(variant="force", n=600))
    grown = simulate_run(_spec(variant="force", n=600), batch_size=64, start=small)
    _same_metrics(grown.metrics, whole.metrics)
    assert sum(small.metrics["lead_changes"]) == 150  # the start was not changed


def test_clipping_to_the_last_bin():
    eng = SimpleNamespace(
        END_NAMES=tosk.END_NAMES, METRICS={"lead_changes": 4}, max_length=tosk.max_length
    )
    acc = runner._Accumulator(_spec(n=6), eng)
    acc.add(
        runner.count_batch(
            eng,
            0,
            {
                "a_points": np.array([2, 0, 1, 1, 2, 0]),
                "winner_seat": np.zeros(6, int),
                "rounds": np.ones(6, int),
                "reason": np.zeros(6, int),
                "lead_changes": np.array([0, 3, 4, 9, -1, 1]),
            },
        )
    )
    assert acc.metrics["lead_changes"].tolist() == [1, 1, 0, 3]


def test_engines_without_metrics_still_work(tmp_path, monkeypatch):
    monkeypatch.delattr(tosk, "METRICS")
    res = simulate_run(_spec(n=40))
    assert res.metrics is None and res.games == 40
    assert "metrics" not in runner._to_tables(res)
    (stored,) = run_many([_spec(n=40)], store=Store(tmp_path), progress=False)
    (back,) = run_many([_spec(n=40)], store=Store(tmp_path), progress=False)
    assert back.cached and back.metrics is None and stored.metrics is None
    assert math.isnan(game_metrics([back])["drama"])


def test_extending_a_run_without_metrics_gives_none():
    small = simulate_run(_spec(n=40))
    small.metrics = None  # e.g. stored before the engine had them
    grown = simulate_run(_spec(n=80), start=small)
    assert grown.metrics is None and grown.games == 80


# ---------------------------------------------------------------- store


def test_metrics_round_trip_through_the_store(tmp_path):
    store = Store(tmp_path)
    spec = _spec(variant="momentum", n=200)
    (first,) = run_many([spec], store=store, progress=False)
    assert (store.path("tosk", spec.key) / "run.parquet").is_file()
    (again,) = run_many([spec], store=store, progress=False)
    assert again.cached and not first.cached
    _same_metrics(first.metrics, again.metrics)
    assert all(h.dtype == np.int64 for h in again.metrics.values())
    assert game_metrics([first]) == game_metrics([again])
    # a run without metrics round-trips as None, not as empty histograms
    first.metrics = None
    files = {name: parquet_bytes(t) for name, t in runner._to_tables(first).items()}
    assert runner._from_bytes(spec, {}, files).metrics is None


# ---------------------------------------------------------------- pooled summary


def test_game_metrics_equal_direct_figures():
    runs = [
        simulate_run(_spec(a=a, b=b, n=300, per_game=True))
        for a, b in (("aggressor", "economist"), ("balanced", "random"))
    ]
    m = game_metrics(runs)
    lc = np.concatenate([r.per_game["lead_changes"].to_numpy() for r in runs])
    md = np.concatenate([r.per_game["max_deficit"].to_numpy() for r in runs])
    dp = np.concatenate([r.per_game["decided_pct"].to_numpy() for r in runs])
    md, dp = md[md >= 0], dp[dp >= 0] / 100
    assert m["games"] == 600 and m["decided"] == len(md) == len(dp)
    assert m["lead_changes"] == pytest.approx(lc.mean())
    assert m["lead_changes_sd"] == pytest.approx(lc.std())

    # the intervals cluster by deal: both runs share the seed, so deal d of each
    # (its games 2d and 2d + 1) is one cluster of four games
    def by_deal(col: str, f=lambda v: v):
        v = np.stack([r.per_game[col].to_numpy() for r in runs]).reshape(2, -1, 2)
        ok = v >= 0
        return (np.where(ok, f(v), 0)).sum(axis=(0, 2)), ok.sum(axis=(0, 2))

    y, n = by_deal("lead_changes")
    c = cluster_mean(y, n)
    assert (m["lead_changes_lo"], m["lead_changes_hi"]) == pytest.approx((c["lo"], c["hi"]))
    k = int((lc > 0).sum())
    assert m["lead_change_share"] == pytest.approx(k / 600)
    w = cluster_wilson(by_deal("lead_changes", lambda v: v > 0)[0], n)
    assert (m["lead_change_share_lo"], m["lead_change_share_hi"]) == pytest.approx(
        (w["lo"], w["hi"])
    )
    assert m["drama"] == pytest.approx(md.mean())
    k = int((md > 0).sum())
    assert m["comeback_share"] == pytest.approx(k / len(md))
    y, n = by_deal("max_deficit")
    c = cluster_mean(y, n)
    assert (m["drama_lo"], m["drama_hi"]) == pytest.approx((c["lo"], c["hi"]))
    w = cluster_wilson(by_deal("max_deficit", lambda v: v > 0)[0], n)
    assert (m["comeback_share_lo"], m["comeback_share_hi"]) == pytest.approx((w["lo"], w["hi"]))
    assert m["decisiveness"] == pytest.approx(dp.mean())
    y, n = by_deal("decided_pct")
    c = cluster_mean(y / 100, n)
    assert (m["decisiveness_lo"], m["decisiveness_hi"]) == pytest.approx((c["lo"], c["hi"]))
    assert m["decisiveness_median"] == pytest.approx(np.quantile(dp, 0.5, method="inverted_cdf"))


def test_metrics_table_on_a_round_robin(tmp_path):
    variants = ["base", "force"]
    names = ["aggressor", "turtle", "random"]
    results = {}
    specs, keys = [], []
    for v in variants:
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                specs.append(_spec(variant=v, a=a, b=b, n=200))
                keys.append((v, a, b))
    for key, res in zip(keys, run_many(specs, store=Store(tmp_path), progress=False), strict=False):
        results[key] = res
    t = metrics_table(results, variants + ["missing"])
    assert list(t.columns) == list(TABLE_COLUMNS) and len(t) == 3
    assert t["variant"].tolist() == ["base", "force", "missing"]
    ok = t[t["variant"] != "missing"]
    assert (ok["games"] == 600).all() and (ok["decided"] <= ok["games"]).all()
    assert (ok["decided"] > 0).all()
    for col in ("lead_changes", "lead_change_share", "drama", "comeback_share", "decisiveness"):
        assert (ok[f"{col}_lo"] <= ok[col]).all() and (ok[col] <= ok[f"{col}_hi"]).all(), col
        assert ok[col].notna().all()
    for col in (
        "decisiveness",
        "decisiveness_lo",
        "decisiveness_hi",
        "lead_change_share",
        "comeback_share",
    ):
        assert ((ok[col] >= 0) & (ok[col] <= 1)).all(), col
    assert (ok["lead_changes"] >= 0).all() and (ok["drama"] >= 0).all()
    missing = t[t["variant"] == "missing"].iloc[0]
    assert missing["games"] == 0 and math.isnan(missing["drama"])
    # runs without metrics: NaN, not an error
    for r in results.values():
        r.metrics = None
    t2 = metrics_table(results, variants)
    assert t2["decisiveness"].isna().all() and (t2["games"] == 600).all()
