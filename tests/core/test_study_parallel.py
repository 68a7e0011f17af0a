"""The study's parts in parallel processes: the same pages as one after
another; where the time goes (balance.phases); the time-left estimate."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from balance import phases, study


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


# ---------------------------------------------------------------- phases


def test_each_second_counts_once_for_the_innermost_phase(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(phases.time, "perf_counter", clock)
    phases.reset()
    with phases.phase("searches"):
        clock.t += 2  # the search's own bookkeeping
        with phases.phase("simulate"):
            clock.t += 5
            with phases.phase("store"):
                clock.t += 1
            clock.t += 3
        clock.t += 4
    clock.t += 10  # outside every phase: "other"
    got = phases.summary(wall=clock.t)
    assert got["phases_s"]["searches"] == 6
    assert got["phases_s"]["simulate"] == 8
    assert got["phases_s"]["store"] == 1
    assert got["phases_s"]["other"] == 10
    assert sum(got["phases_s"].values()) == got["wall_s"] == 25


def test_a_workers_phases_and_store_costs_add_to_the_parents(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(phases.time, "perf_counter", clock)
    phases.reset()
    with phases.phase("store"):
        clock.t += 3
    phases.note("store_read", 3.0, k=1000)
    worker = phases.snapshot()
    phases.reset()
    with phases.phase("_waiting"):  # the parent waits on its workers
        clock.t += 7
    phases.merge(worker)
    phases.note("process_wall", 7.0)  # the worker's task took 7 s, 3 of them in the store
    got = phases.summary(wall=7.0)
    assert got["phases_s"]["store"] == 3
    assert got["phases_s"]["other"] == 4  # the worker's 7 s less its 3 s in the store
    assert got["process_s"] == 7
    assert got["store"] == {
        "reads": 1000,
        "writes": 0,
        "read_ms_per_run": 3.0,
        "write_ms_per_run": None,
    }


def test_other_threads_do_not_record(monkeypatch):
    import threading

    phases.reset()
    t = threading.Thread(target=lambda: phases.phase("charts").__enter__())
    t.start()
    t.join()
    assert phases.snapshot()["seconds"] == {}


# ---------------------------------------------------------------- the estimate


def _eta(tmp_path, recorded=None, procs=2, scale=1.0):
    res = tmp_path / "results"
    if recorded is not None:
        (res / "_studies").mkdir(parents=True)
        (res / "_studies" / study.TIMINGS).write_text(json.dumps(recorded))
    said = []
    clock = Clock()
    tasks = [("a", "main"), ("a", "repair"), ("b", "main")]
    eta = study.Eta.__new__(study.Eta)
    eta.scale, eta.results, eta.procs, eta.say, eta.clock = scale, res, procs, said.append, clock
    eta.t0 = 0.0
    eta.expected = {t: eta._recorded().get(f"{t[0]}:{t[1]}", 60.0) for t in tasks}
    eta.order = sorted(tasks, key=lambda t: -eta.expected[t])
    eta.started, eta.took = {}, {}
    return eta, clock, said


def test_the_estimate_starts_the_longest_parts_first_and_learns_the_machines_pace(tmp_path):
    rec = {"scale": 2.0, "seconds": {"a:main": 200, "a:repair": 20, "b:main": 100}}
    eta, clock, said = _eta(tmp_path, rec, procs=2, scale=1.0)
    # the last study ran at scale 2: half of each part's seconds expected now
    assert eta.expected == {("a", "main"): 100, ("a", "repair"): 10, ("b", "main"): 50}
    assert eta.order == [("a", "main"), ("b", "main"), ("a", "repair")]
    for t in eta.order[:2]:
        eta.begin(*t)
    # nothing done: the longest part (100 s) bounds the time left
    assert eta.left() == 100
    clock.t = 100.0  # b:main took twice its expectation: every part is expected to
    eta.end("b", "main", 100.0)
    assert said[-1].startswith("b: matches and page done in 1 min 40 s; 1 of 3 parts, 1 min 40 s")
    # a:main: 2 × 100 expected, 100 s run -> 100 s left; a:repair, 2 × 10, just begun
    assert eta.left() == pytest.approx(100)
    clock.t = 130.0
    eta.end("a", "repair", 20.0)
    assert eta.left() == pytest.approx(70)
    eta.heartbeat()
    assert said[-1] == "2 of 3 parts done, 2 min 10 s elapsed, about 1 min 10 s left"
    clock.t = 200.0
    eta.end("a", "main", 200.0)
    assert said[-1].endswith("3 of 3 parts, 3 min 20 s elapsed")
    eta.save()
    kept = json.loads((eta.results / "_studies" / study.TIMINGS).read_text())
    assert kept["seconds"] == {"b:main": 100.0, "a:repair": 20.0, "a:main": 200.0}


def test_without_a_record_each_part_is_expected_from_its_plan(tmp_path):
    from balance.config import load_study
    from balance.registry import GAMES

    eta = study.Eta(
        [(g, p) for g in GAMES for p in study.game_parts(g)], 0.5, tmp_path, 2, say=print
    )
    for (g, p), s in eta.expected.items():
        planned = (load_study(g).get("seconds") or {}).get(p)
        assert s == (max(1.0, planned * 0.5) if planned else 60.0)


def test_a_damaged_timings_file_is_only_a_lost_estimate(tmp_path):
    (tmp_path / "_studies").mkdir()
    (tmp_path / "_studies" / study.TIMINGS).write_text("{not json")
    eta = study.Eta([("tosk", "main")], 1.0, tmp_path, 2, say=print)
    assert eta.expected[("tosk", "main")] > 0


def test_the_processes_option_is_checked(monkeypatch):
    from balance.errors import UserError

    with pytest.raises(UserError, match="--processes must be at least 1"):
        study.study_processes(0, 5)
    for bad in ("two", "0", "-1"):  # the setting at fault is named, not --processes
        monkeypatch.setenv(study.PROCESSES_ENV, bad)
        with pytest.raises(UserError, match="BALANCE_STUDY_PROCESSES must be a whole number"):
            study.study_processes(None, 5)
    monkeypatch.setenv(study.PROCESSES_ENV, "8")
    assert study.study_processes(None, 5) == 5  # never more than the parts


# ---------------------------------------------------------------- the same pages


def _tables(out: Path) -> dict[str, str]:
    import pandas as pd

    got = {}
    for p in sorted(out.rglob("tables/*.csv")):
        df = pd.read_csv(p)
        got[str(p.relative_to(out))] = df.drop(columns=["date"], errors="ignore").to_csv()
    return got


def _records(results: Path) -> dict:
    out = {}
    for p in sorted((results / "_studies").glob("*.json")):
        if p.name == study.TIMINGS:
            continue
        data = json.loads(p.read_text())
        for k in ("elapsed_s", "equilibrium_s"):
            data["extra"].pop(k, None)  # seconds, not figures
        eq = data.get("equilibrium") or {}
        eq.pop("seconds", None)
        for rec in (eq.get("audit"), eq.get("check")):
            (rec or {}).pop("date", None)  # when the check ran, as each table's date
        out[p.name] = data
    return out


@pytest.mark.slow
def test_parts_in_two_processes_make_the_same_study_as_one_after_another(tmp_path):
    """Every table (but the date each run was played) and the study record
    (but the seconds it keeps) are the same whether a game's parts run in two
    worker processes or one after another in this process: the four-suits
    RPG, whose three parts (matches and page, its own pages, the repair
    example) make the smallest study."""
    pages = {}
    for procs in (1, 2):
        out, res = tmp_path / f"out{procs}", tmp_path / f"res{procs}"
        study.run_study(out, scale=0.001, results=res, processes=procs, games=["suits"])
        pages[procs] = (_tables(out), _records(res))
    assert len(study.game_parts("suits")) == 3
    assert pages[1][0] and pages[1][1]
    assert pages[2] == pages[1]
    # `balance report` rebuilds the pages from the store the same way: its parts
    # in two processes or in this one give the same pages, and nothing is played
    res = tmp_path / "res1"
    runs_before = sorted(p.name for p in (res / "suits").iterdir())
    html = {}
    for procs in (1, 2):
        index = study.report_study(
            tmp_path / f"report{procs}", results=res, processes=procs, games=["suits"]
        )
        html[procs] = {
            p.relative_to(index.parent).as_posix(): _undated(p.read_text(encoding="utf-8"))
            for p in sorted(index.parent.rglob("*.html"))
        }
    assert {"index.html", "suits.html", "suits-analysis.html", "suits-repair.html"} <= set(html[1])
    assert html[2] == html[1]
    assert sorted(p.name for p in (res / "suits").iterdir()) == runs_before


def _undated(html: str) -> str:
    """A page without what differs between two builds of it: dates, the command
    line and the seconds a step took (``Time``, ``Struggles: Time``, ``Elapsed``)."""
    html = re.sub(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d)?(\+00:00|Z| UTC)?", "DATE", html)
    html = re.sub(r"<dt>[^<]*\bCommand</dt><dd><code>[^<]*</code>", "", html)
    html = re.sub(r"of them now, in [\d.]+ s\.", "of them now.", html)  # a repair's search
    return re.sub(r"<dt>[^<]*\b(Time|Elapsed)</dt><dd>[^<]*</dd>", "", html)


# ---------------------------------------------------------------- balance bench study


@pytest.mark.slow
def test_bench_study_times_the_main_job_cold_and_warm_by_phase_and_against_a_revision():
    """``balance bench study``: each study in a fresh process, cold (empty
    store) then warm (every run stored), its phases adding up to the
    processes' seconds, the store's writes only when cold; ``--against`` a
    revision (HEAD: this commit's own sources, from git) timed in turn."""
    from balance import bench

    got = bench.bench_study(scale=0.001, against="HEAD", fresh_cache=False, games=["suits"])
    assert got["games"] == ["suits"]
    for tag in ("now", "then"):
        for stage in ("cold", "warm"):
            assert got[tag][stage]["wall_s"] > 0
    now = got["now"]
    for stage in ("cold", "warm"):
        row = now[stage]
        assert list(row["phases_s"]) == [*phases.PHASES, "other"]
        assert sum(row["phases_s"].values()) == pytest.approx(row["process_s"], abs=0.1)
        assert row["process_s"] >= row["wall_s"] * 0.5  # the study's own seconds, summed
    assert now["cold"]["store"]["writes"] > 0 and now["cold"]["phases_s"]["simulate"] > 0
    assert now["warm"]["store"]["writes"] == 0  # every run read back from the store
    assert now["warm"]["store"]["reads"] >= now["cold"]["store"]["writes"]
    assert now["warm"]["store"]["read_ms_per_run"] > 0
    assert set(got["ratio_then_over_now"]) == {"cold", "warm"}
    # warm: each revision twice, in ABBA order, its wall time the mean of both
    for tag in ("now", "then"):
        each = got[tag]["warm"]["wall_s_each"]
        assert len(each) == 2 and all(w > 0 for w in each)
        assert got[tag]["warm"]["wall_s"] == pytest.approx(sum(each) / 2, abs=0.06)
        assert "wall_s_each" not in got[tag]["cold"]  # cold: once each
    assert got["ratio_then_over_now"]["warm"] == pytest.approx(
        got["then"]["warm"]["wall_s"] / now["warm"]["wall_s"], abs=0.006
    )


def test_the_mean_of_several_bench_rows_keeps_its_counts_and_averages_its_times():
    from balance import bench

    def row(wall, read_ms, rss):
        return {
            "wall_s": wall,
            "process_s": 2 * wall,
            "phases_s": {"simulate": wall, "store": wall, "other": 0.0},
            "store": {
                "reads": 7,
                "writes": 0,
                "read_ms_per_run": read_ms,
                "write_ms_per_run": None,
            },
            "peak_rss_mb": {"main": rss, "largest_child": 1},
        }

    one = row(3.0, 1.0, 100)
    assert bench._mean_rows([one]) is one  # a single run is reported as measured
    got = bench._mean_rows([row(3.0, 1.0, 100), row(5.0, 2.0, 90)])
    assert got["wall_s"] == 4.0 and got["wall_s_each"] == [3.0, 5.0]
    assert got["process_s"] == 8.0
    assert got["phases_s"] == {"simulate": 4.0, "store": 4.0, "other": 0.0}
    assert sum(got["phases_s"].values()) == got["process_s"]
    assert got["store"] == {
        "reads": 7,
        "writes": 0,
        "read_ms_per_run": 1.5,
        "write_ms_per_run": None,
    }
    assert got["peak_rss_mb"] == {"main": 100, "largest_child": 1}


def test_bench_study_refuses_a_bad_scale_in_one_line(monkeypatch, capsys):
    from balance.cli.root import main

    monkeypatch.setattr("sys.argv", ["balance", "bench", "study", "--scale", "0"])
    with pytest.raises(SystemExit) as e:
        main()
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --scale must be between 0.001 and 1000, got 0")
    assert err.count("\n") == 1


def test_the_parts_seconds_are_not_part_of_the_study_experiment():
    """A plan's ``seconds`` (the estimate's priors, measured again on another
    machine) leave the study's experiment record, and so its id, unchanged;
    every setting that makes the figures stays in it."""
    from balance import experiments
    from balance.config import load_study

    plan = load_study("tosk")
    kept = study.recorded_plan(plan, 1.0)
    assert "seconds" in plan and "seconds" not in kept
    assert kept == {**{k: v for k, v in plan.items() if k != "seconds"}, "scale": 1.0}
    other = study.recorded_plan({**plan, "seconds": {"main": 1}}, 1.0)
    assert experiments.experiment_id("tosk", "study", other) == experiments.experiment_id(
        "tosk", "study", kept
    )
    assert study.recorded_plan({**plan, "precision": 0.02}, 1.0) != kept


def test_a_worker_plays_on_no_more_threads_than_numba_allows(monkeypatch):
    """With ``$NUMBA_NUM_THREADS=1`` on a 2-core machine, ``balance study``
    (no ``--threads``) gave each worker the 2 cores and every worker then
    refused them ("--threads must be between 1 and 1 on this machine, got
    2"). A worker now plays on the cores numba allows; a ``--threads`` the
    user gave is passed on as given (and refused, in one line, if too many)."""
    import numba

    monkeypatch.setattr(study.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", 1)
    assert study._threads_each(None) == 1
    assert study._threads_each(2) == 2
    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", 2)
    assert study._threads_each(None) == 2
    monkeypatch.setattr(study.os, "cpu_count", lambda: None)
    assert study._threads_each(None) == 1
