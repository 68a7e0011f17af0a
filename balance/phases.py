"""Where a command's time goes: wall seconds per phase (``balance bench study``).

A phase is opened with ``with phases.phase("store"):`` or the :func:`timed`
decorator. Phases nest, and each second counts once, for the innermost
phase open: a store read inside a best-response search counts as
``store``, the search's own bookkeeping as ``searches``. Seconds outside
every phase are the command's ``other`` (imports, planning, printing).
Only the main thread records (the executor's threads run inside the
``simulate`` phase of the main thread, which counts their wall time).

A process keeps its own totals; a command that works in several
processes (the study's game tasks) adds each worker's :func:`snapshot`
to its own with :func:`merge`, so its phases are seconds summed over its
processes, beside the command's wall time. ``$BALANCE_PHASES``, when set,
names a file the study writes its totals to as JSON when it ends: that is
how ``balance bench study`` reads a study run in a fresh process.

Nothing here is game-specific, and nothing is timed in tests: the figures
are for the benchmark.
"""

from __future__ import annotations

import functools
import json
import os
import threading
import time
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

PHASES = ("compile", "simulate", "store", "tables", "charts", "pages", "searches")
MEANING = {
    "compile": "numba compiling the engines (the warm-up's processes, and any kernel "
    "compiled later in the command's own process)",
    "simulate": "playing games: the engines' kernels and the runner's batches",
    "store": "reading and writing runs in the results store (Parquet, manifests, checksums)",
    "tables": "tables and statistics: intervals, fits, ratings, sequential tests, verdicts",
    "charts": "drawing and saving the charts (SVG, PNG)",
    "pages": "rendering and writing the HTML pages",
    "searches": "searches: best responses, tuning, repairs (their own bookkeeping)",
    "other": "everything outside those: starting up, imports, planning, waiting",
}

_seconds: dict[str, float] = defaultdict(float)
_counts: dict[str, int] = defaultdict(int)
_detail: dict[str, float] = defaultdict(float)  # seconds of a part of a phase (store reads)
_stack: list[list] = []  # [name, since]: the open phases, innermost last


def _main() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextmanager
def phase(name: str):
    """Count the wall time inside the block as ``name`` (minus inner phases)."""
    if not _main():
        yield
        return
    now = time.perf_counter()
    if _stack:
        _seconds[_stack[-1][0]] += now - _stack[-1][1]
    _stack.append([name, now])
    try:
        yield
    finally:
        now = time.perf_counter()
        inner, since = _stack.pop()
        _seconds[inner] += now - since
        if _stack:
            _stack[-1][1] = now


def timed(name: str, part: str | None = None):
    """Decorator: the function's calls count as phase ``name``; with ``part``,
    each call's seconds are also noted under it (:func:`note`: the store's
    reads and writes, one by one)."""

    def wrap(fn):
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            with phase(name):
                if part is None:
                    return fn(*args, **kwargs)
                t = time.perf_counter()
                try:
                    return fn(*args, **kwargs)
                finally:
                    note(part, time.perf_counter() - t)

        return inner

    return wrap


def count(name: str, k: int = 1) -> None:
    """Add ``k`` to the counter ``name`` (store reads and writes, charts drawn)."""
    _counts[name] += k


def note(name: str, seconds: float, k: int = 1) -> None:
    """``seconds`` spent on ``k`` of ``name`` (a part of a phase: the store's
    reads and writes), kept beside the phases for a per-item cost."""
    _detail[name] += seconds
    _counts[name] += k


def move(seconds: float, source: str, target: str) -> None:
    """Re-count ``seconds`` of ``source`` as ``target`` (compiling measured
    inside a run counts as compiling, not as playing)."""
    seconds = min(seconds, _seconds.get(source, 0.0))
    _seconds[source] -= seconds
    _seconds[target] += seconds


def snapshot() -> dict:
    """This process's totals so far: {"seconds": {phase: s}, "counts": {...}}."""
    now = time.perf_counter()
    seconds = dict(_seconds)
    if _stack:  # the open innermost phase, up to now
        seconds[_stack[-1][0]] = seconds.get(_stack[-1][0], 0.0) + now - _stack[-1][1]
    return {"seconds": seconds, "counts": dict(_counts), "detail": dict(_detail)}


def merge(snap: dict) -> None:
    """Add another process's :func:`snapshot` to this one's totals."""
    for k, v in (snap.get("seconds") or {}).items():
        _seconds[k] += float(v)
    for k, v in (snap.get("counts") or {}).items():
        _counts[k] += int(v)
    for k, v in (snap.get("detail") or {}).items():
        _detail[k] += float(v)


def reset() -> None:
    _seconds.clear()
    _counts.clear()
    _detail.clear()
    _stack.clear()


def summary(wall: float, snap: dict | None = None) -> dict:
    """Every phase's seconds (:data:`PHASES`, then ``other``: what the
    processes' wall time leaves) with the store's per-run cost."""
    snap = snap or snapshot()
    sec = snap["seconds"]
    counts = snap["counts"]
    out = {p: round(sec.get(p, 0.0), 2) for p in PHASES}
    detail = snap.get("detail") or {}
    # the processes' working seconds: each worker's tasks, and the main
    # process's wall time less its waiting on them (the phase "_waiting")
    process_s = detail.get("process_wall", 0.0) + wall - sec.get("_waiting", 0.0)
    busy = sum(v for k, v in sec.items() if not k.startswith("_"))
    out["other"] = round(max(0.0, process_s - busy), 2)
    reads, writes = counts.get("store_read", 0), counts.get("store_write", 0)
    store = {
        "reads": reads,
        "writes": writes,
        "read_ms_per_run": round(1000 * detail.get("store_read", 0.0) / reads, 2)
        if reads
        else None,
        "write_ms_per_run": round(1000 * detail.get("store_write", 0.0) / writes, 2)
        if writes
        else None,
    }
    return {
        "wall_s": round(wall, 2),
        "process_s": round(process_s, 2),
        "phases_s": out,
        "store": store,
        "counts": {k: v for k, v in counts.items() if k != "process_wall"},
    }


def dump_if_asked(wall: float) -> None:
    """Write :func:`summary` to ``$BALANCE_PHASES`` if that is set."""
    path = os.environ.get("BALANCE_PHASES")
    if path:
        import resource

        out = summary(wall)
        out["peak_rss_mb"] = {  # the largest process: this one, or one of its workers
            "main": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "largest_child": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024),
        }
        Path(path).write_text(json.dumps(out, indent=1), encoding="utf-8")
