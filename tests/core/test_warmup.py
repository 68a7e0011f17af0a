"""The first run (issue 21): engines compiled in parallel processes before
anything is played, and the speed summary ``balance bench``.

The warm-up must cover every kernel a run needs: after it, a fresh process
playing the game compiles nothing (numba fires its compile event only on a
cache miss, and the registry counts the seconds of each).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from balance import bench, warmup
from balance.errors import UserError
from balance.registry import ROOT

_AFTER = r"""
import json, sys
from balance import config, registry, runner, warmup
game = sys.argv[1]
first = warmup.ensure([game])
again = warmup.ensure([game])
runner.set_threads(1)
s = config.load_strategy(game, config.load_study(game)["strategies"][0])
runner.simulate_run(runner.RunSpec(config.resolve_variant(game, "base"), s, s, 50, 7))
print(json.dumps({"first": first, "again": again, "marker": warmup.is_warm(game),
                  "compiled_after": registry.compile_seconds}))
"""


@pytest.mark.slow
def test_after_the_warm_up_a_run_compiles_nothing(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", _AFTER, "suits"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert list(got["first"]) == ["suits"] and got["first"]["suits"] > 0  # compiled in a child
    assert got["again"] == {}  # warm now: nothing started
    assert got["marker"] is True
    assert got["compiled_after"] == {}, "the run compiled kernels the warm-up missed"


def test_the_longest_compiles_start_first():
    games = ["tosk", "clash", "trisk", "suits"]
    order = warmup._longest_first(games)
    assert sorted(order) == sorted(games)
    counts = [warmup._kernel_count(g) for g in order]
    assert counts == sorted(counts, reverse=True)
    assert min(counts) > 10  # every engine's kernels are found, its strategy modules' too
    assert warmup._kernel_count("no-such-game") == 0


@pytest.mark.slow  # a warm-up process starts and fails: 1.3 s
def test_a_failed_warm_up_is_reported_and_the_command_goes_on(monkeypatch):
    said = []
    took = warmup.compile_in_processes(["no-such-game"], say=said.append)
    assert set(took) == {"no-such-game"}
    assert any("warm-up failed" in line and "compiles on first use" in line for line in said)


def test_against_an_unknown_revision_is_one_line():
    with pytest.raises(UserError, match="--against no-such-rev: not a revision"):
        bench._revision_tree("no-such-rev", "/tmp/unused")


def test_the_summary_times_now_and_then_in_turn_and_gives_ratios(monkeypatch):
    calls = []

    def fake_rate(tree, game, a, b, n, threads):
        then = tree != str(ROOT)
        calls.append(("then" if then else "now", threads))
        # now: 3000 games/s at 1 thread, 5700 at 2 (rounds 10); then: 1000 / 1800 (rounds 10)
        base = 1000 if then else 3000
        rate = base * (1.0 if threads == 1 else 1.9)
        # CPU a game: 1e6 / games/s at 1 thread, a little more on 2 threads
        return {"games_per_s": rate, "rounds": 10.0, "cpu_us_per_game": 1.05e6 * threads / rate}

    def fake_side_by_side(tree, game, a, b, n, k):
        calls.append(("side by side", k))
        return [{"games_per_s": 2550.0}] * k  # two processes at once: 85% of 3000 each

    monkeypatch.setattr(bench, "_rate_in", fake_rate)
    monkeypatch.setattr(bench, "_rates_side_by_side", fake_side_by_side)
    monkeypatch.setattr(bench, "_revision_tree", lambda rev, dest: dest)
    monkeypatch.setattr(bench, "cold_start", lambda games: {"stub": True})
    monkeypatch.setattr("numba.config.NUMBA_NUM_THREADS", 2)
    out = bench.bench_summary(["tosk"], against="HEAD", profile=False)
    row = out["games"]["tosk"]
    assert row["games_per_s_1_thread"] == 3000 and row["games_per_s_2_threads"] == 5700
    assert row["thread_scaling"] == 1.9
    assert row["side_by_side_scaling (2 1-thread processes at once)"] == 1.7
    assert row["rounds_per_s_2_threads"] == 57000
    assert row["speedup_rounds_per_s_2_threads_vs_then"] == 3.0
    assert row["same_mean_rounds_as_then"] is True
    assert row["cpu_us_per_game_1_thread"] == 350.0
    assert row["speedup_cpu_per_game_1_thread_vs_then"] == 3.0
    assert out["load_average_at_start"] >= 0
    # each round's pair gives one ratio: 3000 / 1000 at 1 thread, 5700 / 1900 at 2
    assert row["paired_speedup_rounds_per_s_1_thread_vs_then"] == {
        "median": 3.0,
        "min": 3.0,
        "max": 3.0,
        "rounds": bench.AGAINST_ROUNDS,
    }
    assert row["paired_speedup_rounds_per_s_2_threads_vs_then"]["median"] == 3.0
    # interleaved: at each thread count this tree and the old one back to back,
    # which goes first alternating from round to round, then two 1-thread
    # processes of this tree at once
    even = [("now", 1), ("then", 1), ("now", 2), ("then", 2), ("side by side", 2)]
    odd = [("then", 1), ("now", 1), ("then", 2), ("now", 2), ("side by side", 2)]
    rounds = [even if r % 2 == 0 else odd for r in range(bench.AGAINST_ROUNDS)]
    assert bench.AGAINST_ROUNDS >= 2 and calls == [c for r in rounds for c in r]


def test_the_paired_ratio_is_the_median_of_the_rounds(monkeypatch):
    """A slow spell that hits one round's pair moves that round's ratio, not
    the median; the best-of figure and the range still show it."""
    now_rates = iter([3000.0, 6000.0, 1500.0, 3000.0, 3000.0, 6000.0])  # round 2: half speed
    then_rates = iter([1000.0, 2000.0, 1000.0, 2000.0, 1000.0, 2000.0])

    def fake_rate(tree, game, a, b, n, threads):
        rate = next(then_rates if tree != str(ROOT) else now_rates)
        return {"games_per_s": rate, "rounds": 10.0, "cpu_us_per_game": 1e6 / rate}

    monkeypatch.setattr(bench, "_rate_in", fake_rate)
    monkeypatch.setattr(bench, "_rates_side_by_side", lambda *a: [{"games_per_s": 1.0}] * 2)
    monkeypatch.setattr(bench, "_revision_tree", lambda rev, dest: dest)
    monkeypatch.setattr(bench, "cold_start", lambda games: {"stub": True})
    monkeypatch.setattr("numba.config.NUMBA_NUM_THREADS", 2)
    monkeypatch.setattr(bench, "AGAINST_ROUNDS", 3)
    row = bench.bench_summary(["tosk"], against="HEAD", profile=False)["games"]["tosk"]
    one = row["paired_speedup_rounds_per_s_1_thread_vs_then"]
    assert one == {"median": 3.0, "min": 1.5, "max": 3.0, "rounds": 3}
    two = row["paired_speedup_rounds_per_s_2_threads_vs_then"]
    assert two == {"median": 3.0, "min": 1.5, "max": 3.0, "rounds": 3}


def test_costliest_kernels_count_each_kernels_own_compile_seconds():
    """A cold start's profile: a kernel's own seconds leave out its callees'
    compiles, and every compiled signature counts as a copy."""
    import numba

    from balance import registry

    registry.watch_compiles()

    @numba.njit
    def callee(x):
        return x + 1

    @numba.njit
    def caller(x):
        return callee(x) * 2

    assert caller(1) == 4 and caller(1.5) == 5.0  # two signatures of each
    seconds = registry.kernel_compile_seconds
    name = f"{__name__}.test_costliest_kernels_count_each_kernels_own_compile_seconds.<locals>."
    own_caller, n_caller = seconds[name + "caller"]
    own_callee, n_callee = seconds[name + "callee"]
    assert n_caller == 2 and n_callee == 2
    assert own_caller > 0 and own_callee > 0
    top = warmup.costliest_kernels(k=len(seconds))
    assert [row[1] for row in top] == sorted((row[1] for row in top), reverse=True)
    assert {row[0] for row in top} >= {name + "caller", name + "callee"}
    # own seconds split the outermost compiles' seconds exactly: nothing counted twice
    assert sum(s for s, _ in seconds.values()) == pytest.approx(
        sum(registry.compile_seconds.values()), rel=1e-9, abs=1e-6
    )


@pytest.mark.slow
def test_bench_times_the_first_command_played_then_read_back():
    """``balance bench``'s first-command figure runs the real command twice
    (played, then read back from the store) in fresh processes, in a
    temporary results folder, and leaves nothing behind."""
    before = set(os.listdir(ROOT))
    out = bench._cli_start("tosk", {})
    assert set(out) == {"simulated", "read_back"}
    assert all(0.0 < s < 600.0 for s in out.values())
    assert set(os.listdir(ROOT)) == before
