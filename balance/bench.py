"""Benchmarks (``balance bench``): speed and memory, never asserted in tests.

Figures are measured in one run and reported as ratios where possible:
numba against the same code under ``NUMBA_DISABLE_JIT=1``, 2 threads against
1. Compile time and peak memory are measured in fresh subprocesses so that
what this process already loaded does not count.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
from balance import config, runner
game, variant, a, b, n, threads = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
runner.set_threads(threads)
spec = runner.RunSpec(config.resolve_variant(game, variant), config.load_strategy(game, a),
                      config.load_strategy(game, b), n, 12345)
t1 = time.perf_counter()
res = runner.simulate_run(spec)
t2 = time.perf_counter()
print(json.dumps({"start_s": t1 - t0, "first_run_s": t2 - t1, "total_s": t2 - t0,
                  "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "a_wins": res.a_wins}))
"""


def _child(args: list[str], env_extra: dict | None = None) -> dict:
    env = dict(os.environ)
    env.update(env_extra or {})
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, *map(str, args)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _rate(game, variant, a, b, n, threads) -> tuple[float, float]:
    from balance import config, runner

    runner.set_threads(threads)
    spec = runner.RunSpec(
        config.resolve_variant(game, variant),
        config.load_strategy(game, a),
        config.load_strategy(game, b),
        n,
        12345,
    )
    runner.simulate_run(runner.RunSpec(spec.ruleset, spec.a, spec.b, 2, 1))  # warm
    best = float("inf")
    for _ in range(2):
        t = time.perf_counter()
        res = runner.simulate_run(spec)
        best = min(best, time.perf_counter() - t)
    rounds = (res.rounds_hist * range(len(res.rounds_hist))).sum() / res.games
    return n / best, float(rounds)


def bench_game(
    game: str,
    n: int = 1_000_000,
    variant: str = "base",
    a: str = "balanced",
    b: str = "balanced",
    pure_n: int = 200,
) -> dict:
    """Every figure of ``balance bench <game>`` (targets: docs/benchmarks.md)."""
    import numba

    from balance.runner import check_games

    n = check_games(n)
    out = {
        "game": game,
        "variant": variant,
        "strategies": f"{a} vs {b}",
        "cores": os.cpu_count(),
        "numba_threads_max": numba.config.NUMBA_NUM_THREADS,
    }
    r1, rounds = _rate(game, variant, a, b, n, 1)
    threads2 = min(2, numba.config.NUMBA_NUM_THREADS)
    r2, _ = _rate(game, variant, a, b, n, threads2)
    out["mean_rounds_per_game"] = round(rounds, 2)
    out["games_per_s_1_thread"] = round(r1)
    out[f"games_per_s_{threads2}_threads"] = round(r2)
    out["thread_scaling"] = round(r2 / r1, 2)
    out[f"rounds_per_s_{threads2}_threads"] = round(r2 * rounds)
    out[f"seconds_per_million_games_{threads2}_threads"] = round(1e6 / r2, 2)
    pure = _child([game, variant, a, b, pure_n, 1], {"NUMBA_DISABLE_JIT": "1"})
    pure_rate = pure_n / pure["first_run_s"]
    out["games_per_s_pure_python"] = round(pure_rate, 1)
    out["numba_speedup_vs_pure_python_1_thread"] = round(r1 / pure_rate)
    with tempfile.TemporaryDirectory() as cache:
        env = {"NUMBA_CACHE_DIR": cache}
        cold = _child([game, variant, a, b, 2, 1], env)
        warm = _child([game, variant, a, b, 2, 1], env)
    out["start_cold_s (compile)"] = round(cold["total_s"], 2)
    out["start_cached_s"] = round(warm["total_s"], 2)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "balance.cli", "--help"], capture_output=True, check=True)
    out["cli_help_s"] = round(time.perf_counter() - t, 2)
    _child([game, variant, a, b, 2, 1])  # the default cache is warm: no compile in the figures
    for m in (100_000, 1_000_000):
        out[f"peak_rss_mb_{m:.0e}_games".replace("+0", "")] = round(
            _child([game, variant, a, b, m, threads2])["maxrss_mb"], 1
        )
    return out


def bench_matrix(game: str, strategy: str, n: int, threads: int = 2) -> dict:
    """Seconds for ``balance <game> loadouts`` (the full loadout matrix, ``n``
    games per cell) end to end in a fresh process, into an empty store: the
    simulation, the store writes and every table."""
    from balance.registry import get_game

    k = len(get_game(game).engine_module().LOADOUTS)
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "balance.cli",
                game,
                "loadouts",
                "--strategy",
                strategy,
                "-n",
                str(n),
                "--threads",
                str(threads),
                "--results",
                tmp,
                "--json",
            ],
            capture_output=True,
            check=True,
            text=True,
        )
        dt = time.perf_counter() - t
    runs = k * (k + 1) // 2  # the same strategy on both sides: i <= j only (antisymmetry)
    return {
        f"loadout_matrix_{k}x{k}_s ({strategy} vs {strategy}, {n:,} games per cell, "
        f"{threads} threads)": round(dt, 1),
        "loadout_matrix_runs_played": runs,
        "loadout_matrix_games_per_s": round(runs * n / dt),
    }


def bench_report(results=None) -> dict:
    """``balance bench report``: seconds to build the default study's report
    from the store, end to end in a fresh process as a user runs it
    (``balance report``), with the chart cache warm and cold."""
    import shutil

    from balance.registry import GAMES
    from balance.store import results_dir

    root = results_dir(results)
    for game in GAMES:
        if not (root / "_studies" / f"{game}.json").is_file():
            from balance.errors import UserError

            raise UserError(f"no stored study of {game} in {root}; run `balance study` first")
    out = {"results": str(root), "cores": os.cpu_count()}
    cli = [sys.executable, "-m", "balance.cli", "report", "--results", str(root)]
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([*cli, "-o", tmp], capture_output=True, check=True, text=True)  # warm
        times = []
        for _ in range(3):
            t = time.perf_counter()
            subprocess.run([*cli, "-o", tmp], capture_output=True, check=True, text=True)
            times.append(time.perf_counter() - t)
        out["report_s_warm_chart_cache (best of 3)"] = round(min(times), 2)
        out["report_s_warm_chart_cache (worst of 3)"] = round(max(times), 2)
        cold = os.path.join(tmp, "cold-cache")
        t = time.perf_counter()
        subprocess.run(
            [*cli, "-o", tmp],
            capture_output=True,
            check=True,
            text=True,
            env={**os.environ, "BALANCE_CHART_CACHE": cold},
        )
        out["report_s_cold_chart_cache (draws every chart)"] = round(time.perf_counter() - t, 2)
        shutil.rmtree(cold, ignore_errors=True)
        pages = sorted(p for p in os.listdir(tmp) if p.endswith(".html"))
        out["pages"] = ", ".join(pages)
        out["page_kb"] = {p: round(os.path.getsize(os.path.join(tmp, p)) / 1024) for p in pages}
        out["runs_read"] = sum(
            len(json.loads((root / "_studies" / f"{g}.json").read_text())["runs"]) for g in GAMES
        )
    return out


def _executor_rates(spec, rounds: int = 2) -> dict[str, float]:
    """Games/s of ``spec`` on the local executor at 1 and 2 numba threads and
    on two ``LocalCluster``s, of 1 and 2 worker processes of one thread
    each: the best of ``rounds`` timings each, taken in turn (local, Dask,
    local, Dask, ...) so that a slow spell of a shared machine does not fall
    on one executor only. Every worker loads the engine before the clock."""
    import numba

    from balance import executor, runner

    rates = dict.fromkeys(("local_1", "dask_1", "local_2", "dask_2"), 0.0)
    with (
        executor.opened("dask-local", workers=1, threads=1) as one,
        executor.opened("dask-local", workers=2, threads=1) as two,
    ):
        where = {
            "local_1": executor.Local(),
            "dask_1": one,
            "local_2": executor.Local(),
            "dask_2": two,
        }
        for ex in where.values():
            with executor.using(ex):
                warm = runner.RunSpec(spec.ruleset, spec.a, spec.b, 8, 1)
                runner.simulate_run(warm, batch_size=2)
        for _ in range(rounds):
            for key, ex in where.items():
                if ex.local:
                    runner.set_threads(min(int(key[-1]), numba.config.NUMBA_NUM_THREADS))
                with executor.using(ex):
                    t = time.perf_counter()
                    runner.simulate_run(spec)
                    rates[key] = max(rates[key], spec.n_games / (time.perf_counter() - t))
    return rates


def study_seconds(results=None) -> dict[str, float]:
    """Seconds each game's stored runs took to simulate (their manifests'
    ``simulate_s``), from the store a ``balance study`` wrote; {} if none."""
    from balance.registry import GAMES
    from balance.store import results_dir

    root = results_dir(results)
    out = {}
    for game in GAMES:
        if not (root / "_studies" / f"{game}.json").is_file():
            continue
        total = 0.0
        for m in (root / game).glob("*/manifest.json"):
            try:
                total += float(json.loads(m.read_text())["timings"]["simulate_s"])
            except (KeyError, TypeError, ValueError, OSError):
                continue  # an analysis's own piece, or unreadable: not a timed run
        out[game] = round(total, 1)
    return out


def bench_scaling(game: str, a: str, b: str, n: int, results=None) -> dict:
    """``balance bench scaling``: games/s of one run of ``n`` games on the
    local executor (1 and 2 numba threads) and on Dask (``dask-local``: 1 and
    2 worker processes of one thread each) on this machine, the Dask
    overhead, and the projected simulation time of the stored study on N
    workers from the measured per-worker rate."""
    from balance import config, runner

    n = runner.check_games(n)
    spec = runner.RunSpec(
        config.resolve_variant(game, "base"),
        config.load_strategy(game, a),
        config.load_strategy(game, b),
        n,
        12345,
    )
    r = _executor_rates(spec)
    local1, local2, dask1, dask2 = r["local_1"], r["local_2"], r["dask_1"], r["dask_2"]
    out = {
        "game": game,
        "strategies": f"{a} vs {b}",
        "games_per_run": n,
        "batch_size": runner.DEFAULT_BATCH,
        "cores": os.cpu_count(),
        "games_per_s_local_1_thread": round(local1),
        "games_per_s_local_2_threads": round(local2),
        "games_per_s_dask_1_worker": round(dask1),
        "games_per_s_dask_2_workers": round(dask2),
        "dask_overhead_1_worker_vs_local_1_thread_pct": round(100 * (local1 / dask1 - 1), 1),
        "dask_overhead_2_workers_vs_local_2_threads_pct": round(100 * (local2 / dask2 - 1), 1),
        "dask_scaling_2_vs_1_workers": round(dask2 / dask1, 2),
    }
    sim = study_seconds(results)
    if sim:
        total = sum(sim.values())
        # the stored runs were played on the local executor at 2 threads: in one
        # worker's time that is total * local2 / dask1
        worker_s = total * local2 / dask1
        out["study_simulation_s_local_2_threads (stored runs)"] = round(total)
        for k in (1, 2, 8, 32, 128):
            out[f"study_simulation_s_projected_{k}_workers"] = round(worker_s / k, 1)
    else:
        out["study_simulation_s (no stored study: run `balance study` first)"] = None
    return out


# ---- balance bench (no subcommand): the speed summary -----------------------

_RATE_CHILD = r"""
import json, sys, time
from balance import config, runner
game, a, b, n, threads = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
runner.set_threads(threads)
def spec(n, seed):
    return runner.RunSpec(config.resolve_variant(game, "base"), config.load_strategy(game, a),
                          config.load_strategy(game, b), n, seed)
runner.simulate_run(spec(2, 1))  # loaded (or compiled) before the clock
best, cpu, res = float("inf"), float("inf"), None
for _ in range(2):
    t, c = time.perf_counter(), time.process_time()
    res = runner.simulate_run(spec(n, 12345))
    best = min(best, time.perf_counter() - t)
    cpu = min(cpu, time.process_time() - c)
print(json.dumps({"games_per_s": n / best, "cpu_us_per_game": 1e6 * cpu / n,
                  "rounds": float((res.rounds_hist * range(len(res.rounds_hist))).sum() / res.games)}))
"""


def _rate_in(tree: str, game: str, a: str, b: str, n: int, threads: int) -> dict:
    """Games/s (best of two runs of ``n`` games), the process's CPU
    microseconds a game (all threads; less swayed by other load than wall
    time) and mean rounds a game of the code in ``tree`` (a source folder:
    this one, or an older revision's), in a fresh process at ``threads``
    numba threads."""
    env = dict(os.environ, PYTHONPATH=tree)
    env.pop("NUMBA_DISABLE_JIT", None)
    out = subprocess.run(
        [sys.executable, "-c", _RATE_CHILD, game, a, b, str(n), str(threads)],
        env=env,
        cwd=tree,
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        raise RuntimeError((out.stderr.strip().splitlines() or ["?"])[-1])
    return json.loads(out.stdout.strip().splitlines()[-1])


def _rates_side_by_side(tree: str, game: str, a: str, b: str, n: int, k: int) -> list[dict]:
    """:func:`_rate_in` at 1 thread in ``k`` processes at once: what ``k``
    cores give ``k`` independent copies of the work, with nothing shared
    but the machine (caches, memory, the host's other guests). Their total
    over one process alone is the most ``k`` threads could scale here."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(k) as pool:
        return list(pool.map(lambda _: _rate_in(tree, game, a, b, n, 1), range(k)))


def _revision_tree(rev: str, dest: str) -> str:
    """The sources of git revision ``rev`` of this checkout, unpacked into ``dest``."""
    from balance.errors import UserError
    from balance.registry import ROOT

    try:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", "--format=tar", rev],
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        why = getattr(e, "stderr", b"") or b""
        raise UserError(
            f"--against {rev}: not a revision of this git checkout "
            f"({why.decode(errors='replace').strip().splitlines()[-1:] or e})"
        ) from None
    import io
    import tarfile

    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")
    return dest


def bench_plan(game: str) -> tuple[str, str, int]:
    """The pairing and game count ``balance bench`` times for ``game``:
    ``configs/<game>/cli.toml`` ``[bench]`` (``a``, ``b``, ``summary_games``),
    else the game's default strategy on both sides."""
    from balance.cli.game import cli_defaults
    from balance.registry import get_game

    defaults = cli_defaults(get_game(game))
    plan = defaults.get("bench", {})
    a = str(plan.get("a", defaults["strategy"]))
    b = str(plan.get("b", defaults["strategy"]))
    return a, b, int(plan.get("summary_games", 100_000))


def cold_start(games: list[str]) -> dict:
    """A first run in a fresh, empty numba cache, as on a fresh clone: the
    wall seconds to compile every engine of ``games`` (in parallel processes,
    :func:`balance.warmup.ensure`, as ``balance study`` does), then each
    engine's cached start (a fresh process: imports, every kernel loaded from
    the cache, two games played)."""
    from balance import warmup

    out: dict = {}
    with tempfile.TemporaryDirectory() as cache:
        env = {"NUMBA_CACHE_DIR": cache}
        t = time.perf_counter()
        costliest: dict = {}
        took = warmup.compile_in_processes(games, env=env, costliest=costliest)
        out["compile_all_engines_s (parallel processes, fresh cache)"] = round(
            time.perf_counter() - t, 1
        )
        out["compile_s_by_engine (each in its own process)"] = {
            g: round(s, 1) for g, s in took.items()
        }
        out["compile_processes"] = min(len(games), os.cpu_count() or 1)
        out["costliest_kernels_by_engine (module.name, own compile s, copies)"] = costliest
        starts = {}
        for g in games:
            a, b, _ = bench_plan(g)
            starts[g] = round(_child([g, "base", a, b, 2, 1], env)["total_s"], 2)
        out["cached_start_s_by_engine"] = starts
        out["cli_first_command_s_by_engine (simulate -n 2, then read back)"] = {
            g: _cli_start(g, env) for g in games
        }
    return out


def _cli_start(game: str, env_extra: dict) -> dict:
    """What a user waits for once the kernels are cached: the wall seconds of
    ``balance <game> simulate -n 2`` in a fresh process (imports, kernels
    loaded, two games played and stored, the table printed), and of the same
    command again (the run read back from the store, no kernel loaded)."""
    env = dict(os.environ)
    env.update(env_extra)
    cmd = [sys.executable, "-c", "from balance.cli import main; main()", game, "simulate"]
    out = {}
    with tempfile.TemporaryDirectory() as results:
        for label in ("simulated", "read_back"):
            t = time.perf_counter()
            subprocess.run(
                [*cmd, "-n", "2", "--results", results],
                env=env,
                capture_output=True,
                check=True,
            )
            out[label] = round(time.perf_counter() - t, 2)
    return out


AGAINST_ROUNDS = 3  # rounds of (now, then) timings with --against: the paired ratio's median


def bench_summary(games: list[str], against: str | None = None, profile: bool = True) -> dict:
    """``balance bench``: every engine's speed at 1 and 2 threads (and the
    same at revision ``against``, timed in turn with it, as ratios: of the
    best timings, and the median and range of each round's paired ratio), where
    each engine's time goes (its ``profile`` hook), and the cold and cached
    start. Every timing runs in a fresh process; nothing is stored."""
    import numba

    import kernels.jit  # noqa: F401  (the project's numba settings: the LLVM level)
    from balance import config
    from balance.registry import ROOT, get_game

    threads2 = min(2, numba.config.NUMBA_NUM_THREADS)
    out: dict = {
        "cores": os.cpu_count(),
        "numba_threads_max": numba.config.NUMBA_NUM_THREADS,
        "llvm_opt_level": int(numba.config.OPT),
        "load_average_at_start": round(os.getloadavg()[0], 2),
        "against": against,
        "games": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        old = _revision_tree(against, tmp) if against else None
        for game in games:
            a, b, n = bench_plan(game)
            row: dict = {"strategies": f"{a} vs {b}", "games_per_timing": n}
            best: dict = {}
            cpu: dict = {}  # the least CPU time a game, apart from the best wall time
            side = 0.0  # the best total games/s of threads2 1-thread processes at once
            paired: dict = {}  # per thread count: now over then, one ratio per round
            for rnd in range(AGAINST_ROUNDS if old is not None else 2):
                # this tree and the old one in turn: a slow spell hits both;
                # which goes first alternates from round to round, so neither
                # always follows the other (or a 1-thread timing)
                trees = ((str(ROOT), "now"), (old, "then"))
                for th in sorted({1, threads2}):
                    pair_rates = {}
                    for tree, tag in trees if rnd % 2 == 0 else trees[::-1]:
                        if tree is None:
                            continue
                        r = _rate_in(tree, game, a, b, n, th)
                        pair_rates[tag] = r["games_per_s"] * r["rounds"]
                        key = (tag, th)
                        cpu[key] = min(cpu.get(key, float("inf")), r["cpu_us_per_game"])
                        if r["games_per_s"] > best.get(key, {}).get("games_per_s", 0):
                            best[key] = r
                    if "then" in pair_rates:
                        paired.setdefault(th, []).append(pair_rates["now"] / pair_rates["then"])
                if threads2 > 1:
                    pair = _rates_side_by_side(str(ROOT), game, a, b, n, threads2)
                    side = max(side, sum(r["games_per_s"] for r in pair))
            now1, now2 = best[("now", 1)], best[("now", threads2)]
            row["mean_rounds_per_game"] = round(now1["rounds"], 2)
            row["games_per_s_1_thread"] = round(now1["games_per_s"])
            row["cpu_us_per_game_1_thread"] = round(cpu[("now", 1)], 2)
            row[f"games_per_s_{threads2}_threads"] = round(now2["games_per_s"])
            row[f"rounds_per_s_{threads2}_threads"] = round(now2["games_per_s"] * now2["rounds"])
            row["thread_scaling"] = round(now2["games_per_s"] / now1["games_per_s"], 2)
            if side:
                # the machine's ceiling for thread_scaling: independent processes
                # slow each other down too when they share a host
                row[f"side_by_side_scaling ({threads2} 1-thread processes at once)"] = round(
                    side / now1["games_per_s"], 2
                )
            if old is not None:
                then2 = best[("then", threads2)]
                row[f"then_games_per_s_{threads2}_threads"] = round(then2["games_per_s"])
                row[f"then_rounds_per_s_{threads2}_threads"] = round(
                    then2["games_per_s"] * then2["rounds"]
                )
                row["then_thread_scaling"] = round(
                    then2["games_per_s"] / best[("then", 1)]["games_per_s"], 2
                )
                row[f"speedup_rounds_per_s_{threads2}_threads_vs_then"] = round(
                    (now2["games_per_s"] * now2["rounds"])
                    / (then2["games_per_s"] * then2["rounds"]),
                    2,
                )
                row["speedup_cpu_per_game_1_thread_vs_then"] = round(
                    cpu[("then", 1)] / cpu[("now", 1)], 2
                )
                for th, ratios in sorted(paired.items()):
                    # each round's two timings back to back: a slow spell of
                    # the host that outlasts a pair cancels in its ratio
                    ratios = sorted(ratios)
                    row[f"paired_speedup_rounds_per_s_{th}_thread{'s' * (th > 1)}_vs_then"] = {
                        "median": round(statistics.median(ratios), 2),
                        "min": round(ratios[0], 2),
                        "max": round(ratios[-1], 2),
                        "rounds": len(ratios),
                    }
                row["same_mean_rounds_as_then"] = bool(abs(now2["rounds"] - then2["rounds"]) < 1e-9)
            eng = get_game(game).engine_module()
            if profile and hasattr(eng, "profile"):
                spec_a = config.load_strategy(game, a)
                spec_b = config.load_strategy(game, b)
                rules = config.resolve_variant(game, "base")
                parts = eng.profile(
                    rules.vector(), spec_a.vector(), spec_b.vector(), 12345, min(n, 2_000)
                )
                total = parts.get("total") or sum(parts.values())
                row["profile_share_of_a_game"] = {
                    k: round(v / total, 3) for k, v in parts.items() if k != "total"
                }
                row["profile_us_per_game"] = round(1e6 * total, 1)
            out["games"][game] = row
    out["start"] = cold_start(games)
    return out


# ---------------------------------------------------------------- the main job
_STUDY = "from balance.cli import main; main()"


def _study_in(tree: str, work: Path, scale: float, cache: str, log, games=None) -> dict:
    """``balance study`` of the sources in ``tree`` in a fresh process, with its
    results store, report folder and numba cache under ``work``/``cache``: its
    wall seconds, peak memory and (where the tree records them) phases."""
    phases_file = work / f"phases-{time.monotonic_ns()}.json"
    env = {
        **os.environ,
        "PYTHONPATH": tree,
        "NUMBA_CACHE_DIR": cache,
        "BALANCE_PHASES": str(phases_file),
        "BALANCE_PROGRESS": "lines",
    }
    env.pop("BALANCE_RESULTS", None)
    cmd = [sys.executable, "-c", _STUDY, "study", "--scale", repr(scale)]
    cmd += ["--out", str(work / "reports"), "--results", str(work / "results")]
    for g in games or ():
        cmd += ["--game", g]
    t = time.perf_counter()
    out = subprocess.run(cmd, cwd=tree, env=env, stdout=log, stderr=log)
    wall = time.perf_counter() - t
    if out.returncode != 0:
        from balance.errors import EnvironmentFailure

        log.flush()
        lines = Path(log.name).read_text(encoding="utf-8", errors="replace").splitlines()
        raise EnvironmentFailure(
            f"balance study in {tree} failed (exit {out.returncode}): "
            f"{lines[-1].strip() if lines else 'no output'}"
        )
    row: dict = {"wall_s": round(wall, 1)}
    if phases_file.is_file():  # a tree that records its phases
        got = json.loads(phases_file.read_text(encoding="utf-8"))
        for k in ("process_s", "phases_s", "store", "peak_rss_mb"):
            row[k] = got.get(k)
    return row


def _mean_rows(rows: list[dict]) -> dict:
    """One row of :func:`_study_in` from several of the same study: the mean
    of each time (wall, process, phase; the store's ms per run), the most
    memory, the counts of the first (the same store: the same counts), and
    ``wall_s_each``, every wall time in the order it was measured."""
    if len(rows) == 1:
        return rows[0]

    def mean(values):
        got = [v for v in values if v is not None]
        return round(sum(got) / len(got), 2) if got else None

    out = dict(rows[0])
    out["wall_s"] = round(sum(r["wall_s"] for r in rows) / len(rows), 1)
    out["wall_s_each"] = [r["wall_s"] for r in rows]
    if all(r.get("process_s") is not None for r in rows):
        out["process_s"] = mean(r["process_s"] for r in rows)
    if all(r.get("phases_s") for r in rows):
        out["phases_s"] = {k: mean(r["phases_s"].get(k) for r in rows) for k in rows[0]["phases_s"]}
    if all(r.get("store") for r in rows):
        out["store"] = dict(rows[0]["store"])
        for k in ("read_ms_per_run", "write_ms_per_run"):
            out["store"][k] = mean(r["store"].get(k) for r in rows)
    if all(r.get("peak_rss_mb") for r in rows):
        out["peak_rss_mb"] = {
            k: max(r["peak_rss_mb"].get(k) or 0 for r in rows) for k in rows[0]["peak_rss_mb"]
        }
    return out


def bench_study(
    scale: float = 1.0,
    against: str | None = None,
    fresh_cache: bool = True,
    say=None,
    games: list[str] | None = None,
) -> dict:
    """``balance bench study``: the main job (``balance study``) timed as a new
    user meets it, cold (an empty results store and, with ``fresh_cache``, an
    empty numba cache: every engine compiled), then warm (every run in the
    store, every kernel cached), each in a fresh process; where its time goes
    by phase (:mod:`balance.phases`) with the store's cost per run (``games``:
    only these games' study). With
    ``against``, the same for that git revision of this checkout, run in turn
    with this one, and each wall time as a ratio (then / now). The cold
    stage runs each once (now, then); the warm stage runs each twice, in
    ABBA order (now, then, then, now), and reports the means
    (:func:`_mean_rows`): four warm studies of one store, timed one after
    another, fell with time whichever code ran (issue 46, round 6), so the
    revision timed first came out slower. Nothing is kept."""
    import numba

    from balance.registry import ROOT

    say = say or (lambda line: None)
    out: dict = {
        "scale": scale,
        "cores": os.cpu_count(),
        "load_average_at_start": round(os.getloadavg()[0], 2),
        "numba_cache": "fresh (every engine compiled)" if fresh_cache else "this machine's",
        "against": against,
        "games": games or "every game",
    }
    with tempfile.TemporaryDirectory() as tmp:
        trees = [("now", str(ROOT))]
        if against:
            trees.append(("then", _revision_tree(against, str(Path(tmp) / "then-src"))))
        log_path = Path(tmp) / "study.log"
        order = {"cold": trees, "warm": trees + trees[::-1] if against else trees}
        with open(log_path, "w", encoding="utf-8") as log:
            for stage in ("cold", "warm"):
                rows: dict[str, list[dict]] = {}
                for tag, tree in order[stage]:
                    work = Path(tmp) / tag
                    work.mkdir(exist_ok=True)
                    cache = str(work / "numba") if fresh_cache else numba.config.CACHE_DIR
                    say(f"bench study: {tag} ({tree}), {stage}")
                    row = _study_in(tree, work, scale, cache, log, games)
                    say(f"bench study: {tag}, {stage}: {row['wall_s']:.0f} s")
                    rows.setdefault(tag, []).append(row)
                for tag, got in rows.items():
                    out.setdefault(tag, {})[stage] = _mean_rows(got)
    if against:
        out["ratio_then_over_now"] = {
            stage: round(out["then"][stage]["wall_s"] / out["now"][stage]["wall_s"], 2)
            for stage in ("cold", "warm")
        }
    return out
