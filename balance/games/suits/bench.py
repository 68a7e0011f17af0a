"""The four-suits RPG's benchmark beyond the standard figures: Task draws/s
(fresh hands and run-downs) at 1 and 2 threads against pure Python."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

_TASK_CHILD = r"""
import json, sys, time
from balance import config
from sims import suits
n = int(sys.argv[1])
rules = config.resolve_variant("suits", "base").vector()
t = time.perf_counter()
suits.task_fresh(rules, suits.CLUBS, 10, 12345, 0, n)
print(json.dumps({"s": time.perf_counter() - t}))
"""


def bench_tasks(n: int = 4_000_000, characters: int = 20_000) -> dict:
    """Fresh-hand task draws/s (a 5-card hand drawn from a shuffled 54-card
    deck and a target-10 Task resolved in suit, Difficult and either way) at 1
    and 2 threads against the same code in pure Python, and run-down attempts/s
    (characters attempting a Task until disabled)."""
    import numba

    from balance import config, runner
    from sims import suits

    rules = config.resolve_variant("suits", "base").vector()
    suits.task_fresh(rules, suits.CLUBS, 10, 1, 0, 1000)  # compiled (or loaded) first
    suits.task_rundown(rules, suits.CLUBS, 10, suits.MODE_EITHER, 1, 0, 10)
    out = {}
    threads2 = min(2, numba.config.NUMBA_NUM_THREADS)
    rates = {}
    for th in (1, threads2):
        runner.set_threads(th)
        best = float("inf")
        for _ in range(3):
            t = time.perf_counter()
            suits.task_fresh(rules, suits.CLUBS, 10, 12345, 0, n)
            best = min(best, time.perf_counter() - t)
        rates[th] = n / best
    out["task_draws_per_s_1_thread"] = round(rates[1])
    out[f"task_draws_per_s_{threads2}_threads"] = round(rates[threads2])
    out["task_thread_scaling"] = round(rates[threads2] / rates[1], 2)
    pure_n = 4000
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    res = subprocess.run(
        [sys.executable, "-c", _TASK_CHILD, str(pure_n)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    pure = pure_n / json.loads(res.stdout.strip().splitlines()[-1])["s"]
    out["task_draws_per_s_pure_python"] = round(pure)
    out["task_numba_speedup_vs_pure_python_1_thread"] = round(rates[1] / pure)
    best = float("inf")
    for _ in range(2):
        t = time.perf_counter()
        rd = suits.task_rundown(rules, suits.CLUBS, 10, suits.MODE_EITHER, 12345, 0, characters)
        best = min(best, time.perf_counter() - t)
    attempts = int(rd["by_attempt"][suits.RD_ATTEMPTS].sum())
    out[f"rundown_attempts_per_s_{threads2}_threads"] = round(attempts / best)
    return out
