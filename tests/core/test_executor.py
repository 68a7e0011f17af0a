"""The Dask executors: the same numbers as the local one, bit for bit, on a
``LocalCluster`` of two worker processes; a worker killed mid-run loses
nothing; an interrupted command, run again, resumes from the store."""

from __future__ import annotations

import json
import os
import signal

import numpy as np
import pytest
from typer.testing import CliRunner

from balance import config, executor, runner
from balance.errors import UserError

pytestmark = pytest.mark.slow  # starts worker processes


def _spec(n: int = 4000, seed: int = 5, variant: str = "base") -> runner.RunSpec:
    s = config.load_strategy("tosk", "balanced")
    o = config.load_strategy("tosk", "aggressor")
    return runner.RunSpec(config.resolve_variant("tosk", variant), s, o, n, seed)


def _same(x: runner.RunResult, y: runner.RunResult) -> None:
    """Every count of two runs is equal, bit for bit."""
    assert (x.games, x.a_wins, x.b_wins, x.draws) == (y.games, y.a_wins, y.b_wins, y.draws)
    for name in ("seat_wins", "pair_points", "rounds_hist", "reasons", "cards"):
        a, b = getattr(x, name), getattr(y, name)
        assert (a is None and b is None) or (a.dtype == b.dtype and np.array_equal(a, b)), name
    assert set(x.metrics) == set(y.metrics)
    for k in x.metrics:
        assert np.array_equal(x.metrics[k], y.metrics[k]), k
    assert x.deal_sums.keys() == y.deal_sums.keys()
    for k, v in x.deal_sums.items():
        assert v.dtype == y.deal_sums[k].dtype and np.array_equal(v, y.deal_sums[k]), k


def test_a_run_on_dask_equals_the_local_run_whatever_the_task_size(on_dask):
    with executor.using(executor.Local()):
        here = runner.simulate_run(_spec(), batch_size=4000)
    for batch in (4000, 1000, 250, 64):
        there = runner.simulate_run(_spec(), batch_size=batch)
        _same(there, here)
    # per-game rows arrive out of order and are put back in game order
    with executor.using(executor.Local()):
        rows = runner.simulate_run(
            runner.RunSpec(*_args(_spec(600)), per_game=True), batch_size=100
        ).per_game
    far = runner.simulate_run(runner.RunSpec(*_args(_spec(600)), per_game=True), batch_size=100)
    assert far.per_game.equals(rows)


def _args(spec: runner.RunSpec) -> tuple:
    return spec.ruleset, spec.a, spec.b, spec.n_games, spec.seed


def test_extending_a_run_on_dask_equals_the_whole_run(on_dask):
    small = runner.simulate_run(_spec(1000), batch_size=200)
    grown = runner.simulate_run(_spec(4000), batch_size=300, start=small)
    with executor.using(executor.Local()):
        whole = runner.simulate_run(_spec(4000))
    _same(grown, whole)


def test_a_finished_batch_the_client_was_not_told_of_is_taken_from_its_worker(on_dask, monkeypatch):
    # once, under heavy load, a client missed the report of a finished task: the
    # scheduler held it in memory, the client's future stayed pending, and
    # `as_completed` waited for ever. Here every wait "times out" with nothing
    # reported, so every batch must come through the scheduler and its worker.
    import distributed

    real = distributed.wait
    missed = []

    def nothing_reported(fs, timeout=None, return_when=None):
        real(fs, return_when="ALL_COMPLETED")  # finished on the cluster ...
        missed.append(len(fs))
        raise TimeoutError  # ... but, as far as this client can tell, not yet

    monkeypatch.setattr(distributed, "wait", nothing_reported)
    monkeypatch.setattr(executor.Dask, "STALL_S", 0.01)
    spec = _spec(2000, seed=3)
    there = runner.simulate_run(spec, batch_size=250)
    assert missed and missed[0] == 8  # every batch's report was "missed"
    with executor.using(executor.Local()):
        here = runner.simulate_run(spec)
    _same(there, here)


class _KillOne:
    """A progress object that kills one busy worker process (SIGKILL, as
    the out-of-memory killer or a lost node would) after ``after`` batches."""

    def __init__(self, client, after: int):
        self.client, self.after = client, after
        self.batches = 0
        self.killed = None  # (worker address, games done when it was killed)
        self.done = 0

    def advance(self, n: int) -> None:
        self.batches += 1
        self.done += n
        if self.killed is None and self.batches == self.after:
            busy = [w for w, keys in self.client.processing().items() if keys]
            assert busy, "no worker had work left: the run is too short for this test"
            pids = self.client.run(os.getpid, workers=[busy[0]])
            os.kill(pids[busy[0]], signal.SIGKILL)
            self.killed = (busy[0], self.done)


def test_a_worker_killed_mid_run_loses_nothing(on_dask, dask_cluster):
    _, client = dask_cluster
    spec = _spec(24_000, seed=9)
    with executor.using(executor.Local()):
        here = runner.simulate_run(spec)
    kill = _KillOne(client, after=4)
    there = runner.simulate_run(spec, batch_size=400, progress=kill)
    assert kill.killed is not None and kill.killed[1] < spec.n_games  # mid-run
    assert kill.done == spec.n_games  # each batch counted once: 60 batches, no more
    runner.check_run(there)
    _same(there, here)


def test_an_interrupted_command_resumes_from_the_store(on_dask, tmp_path, monkeypatch):
    specs = [_spec(2000, seed=s) for s in (1, 2, 3, 4)]
    with executor.using(executor.Local()):
        here = runner.run_many(specs, progress=False)
    saved = []
    real_save = runner.save_run

    def save_then_stop(store, res):  # Ctrl-C right after the first run is stored
        real_save(store, res)
        saved.append(res.key)
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "save_run", save_then_stop)
    store = runner.Store(tmp_path / "results")
    with pytest.raises(KeyboardInterrupt):
        runner.run_many(specs, store=store, progress=False, batch_size=500)
    monkeypatch.setattr(runner, "save_run", real_save)
    assert len(saved) == 1
    with runner.tally() as t:
        again = runner.run_many(specs, store=store, progress=False, batch_size=500)
    assert t.read_runs == 1 and t.simulated_runs == 3
    assert [r.cached for r in again].count(True) == 1
    for x, y in zip(again, here, strict=True):
        _same(x, y)
    manifest = next(r for r in again if not r.cached).manifest
    assert manifest["timings"]["executor"].startswith("dask-local (2 workers")


def _cli(args: list[str]) -> tuple[dict, str]:
    from balance.cli.root import make_app

    res = CliRunner().invoke(make_app(), args, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout), res.stderr


COMPARE = ["tosk", "compare", "-n", "2000", "--strategies", "balanced,aggressor", "--json"]


def test_compare_on_a_dask_scheduler_equals_the_local_compare(dask_cluster, tmp_path):
    c, client = dask_cluster
    client.wait_for_workers(2, timeout=60)
    here, _ = _cli([*COMPARE, "--results", str(tmp_path / "a")])
    there, err = _cli(
        [*COMPARE, "--results", str(tmp_path / "b"), "--scheduler", c.scheduler_address]
    )
    assert there == here
    assert here["matrix"] and all(m["games"] == 2000 for m in here["matrix"])


def test_dask_local_starts_its_own_cluster_and_says_how_workers_loaded_the_engine(tmp_path):
    here, _ = _cli([*COMPARE, "--results", str(tmp_path / "a"), "--variants", "base,force"])
    there, err = _cli(
        [
            *COMPARE,
            "--results",
            str(tmp_path / "b"),
            "--variants",
            "base,force",
            "--executor",
            "dask-local",
            "--workers",
            "2",
        ]
    )
    assert there == here
    notes = [line for line in err.splitlines() if line.startswith("dask worker ")]
    assert 1 <= len(notes) <= 2, err  # once per worker process that played a batch
    assert all(
        "loaded the tosk engine from its cache" in n or "compiled the tosk engine" in n
        for n in notes
    )


def test_a_worker_with_other_engine_code_is_refused(dask_cluster):
    c, client = dask_cluster
    ex = executor.Dask(client, "dask", c)
    job = runner.Job("tosk", np.zeros(1), np.zeros(1), np.zeros(1), 1, 0, 2)
    batch = runner.count_batch(
        type("E", (), {"END_NAMES": ("a",), "METRICS": None})(),
        0,
        {
            "a_points": np.array([2, 0]),
            "winner_seat": np.array([0, 1]),
            "rounds": np.array([3, 4]),
            "reason": np.array([0, 0]),
        },
        engine={"version": 0, "kernels": "0123456789abcdef", "where": "elsewhere:1"},
    )
    with pytest.raises(UserError, match="elsewhere:1 plays with other engine code"):
        ex.check(job, batch)


@pytest.mark.parametrize(
    ("args", "env", "error"),
    [
        (("nope", None, None), {}, "--executor must be one of local, dask, dask-local"),
        (("dask", None, None), {}, "--executor dask needs a scheduler"),
        (("local", "tcp://h:1", None), {}, "--scheduler is for --executor dask"),
        (("dask", "tcp://h:1", 2), {}, "--workers is for --executor dask-local"),
        (("dask-local", None, 0), {}, "--workers must be at least 1"),
    ],
)
def test_executor_options_are_checked_before_anything_starts(monkeypatch, args, env, error):
    monkeypatch.delenv(executor.SCHEDULER_ENV, raising=False)
    with pytest.raises(UserError, match=error):
        executor.choose(*args)


def test_which_executor_the_options_and_the_environment_choose(monkeypatch):
    monkeypatch.delenv(executor.SCHEDULER_ENV, raising=False)
    assert executor.choose(None, None, None) == "local"
    assert executor.choose(None, "tcp://h:1", None) == "dask"
    assert executor.choose(None, None, 3) == "dask-local"
    monkeypatch.setenv(executor.SCHEDULER_ENV, "tcp://h:1")
    assert executor.choose(None, None, None) == "dask"  # the variable alone chooses dask
    assert executor.choose("local", None, None) == "local"  # unless told otherwise


def test_an_unreachable_scheduler_is_one_line(monkeypatch):
    monkeypatch.setattr(executor, "CONNECT_TIMEOUT_S", 1)
    with (
        pytest.raises(UserError, match=r"cannot reach the Dask scheduler at tcp://127\.0\.0\.1:9"),
        executor.opened("dask", "tcp://127.0.0.1:9"),
    ):
        pass


def test_bench_scaling_reports_every_executor_and_projects_the_stored_study(tmp_path):
    from balance import bench

    store = tmp_path / "results"
    (store / "_studies").mkdir(parents=True)
    (store / "_studies" / "tosk.json").write_text("{}")
    res = runner.run_many([_spec(200)], store=runner.Store(store), progress=False)[0]
    spent = res.manifest["timings"]["simulate_s"]
    out = bench.bench_scaling("tosk", "balanced", "aggressor", 2000, store)
    rates = {k: v for k, v in out.items() if k.startswith("games_per_s_")}
    assert len(rates) == 4 and all(v > 0 for v in rates.values())
    for key, local, dask in (
        ("dask_overhead_1_worker_vs_local_1_thread_pct", "local_1_thread", "dask_1_worker"),
        ("dask_overhead_2_workers_vs_local_2_threads_pct", "local_2_threads", "dask_2_workers"),
    ):
        ratio = out[f"games_per_s_{local}"] / out[f"games_per_s_{dask}"]
        assert out[key] == pytest.approx(100 * (ratio - 1), abs=1)  # rates rounded for the table
    assert out["study_simulation_s_local_2_threads (stored runs)"] == round(spent)
    one, eight = (out[f"study_simulation_s_projected_{k}_workers"] for k in (1, 8))
    assert one == pytest.approx(8 * eight, rel=0.02, abs=0.2)
