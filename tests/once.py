"""Build an expensive test input once per test session, for every worker.

A session fixture of a parallel run (pytest-xdist) is built once per worker,
and with ``--dist loadfile`` two files that need the same input may land on
the two workers. :func:`built_once` builds it in a folder both workers see,
under a file lock: the first worker to ask builds it, the other waits for the
lock and then reads what was built. The folder is the session's own (the
parent of the workers' base folders), so nothing carries over from an earlier
run; a run in one process (``-n 0``) uses its own base folder.
"""

from __future__ import annotations

import fcntl
import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


def session_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder every worker of this session shares (in one process: its base
    folder; the parent of that would hold other sessions' folders too)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def built_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], Any]
) -> tuple[Path, Any]:
    """``(folder, value)``: ``build(folder)`` run once in this session, in a
    folder of its own named ``name``; its return value is pickled beside it and
    read back by every later caller, in this worker or another.

    A build that fails leaves nothing behind, so the next caller tries again
    (and fails the same way, with the same traceback)."""
    root = session_folder(tmp_path_factory) / f"once-{name}"
    root.mkdir(parents=True, exist_ok=True)
    done = root / "value.pickle"
    with open(root / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.exists():
            folder = root / "built"
            if folder.exists():  # a build that failed half way
                import shutil

                shutil.rmtree(folder)
            folder.mkdir()
            value = build(folder)
            tmp = root / "value.tmp"
            tmp.write_bytes(pickle.dumps(value))
            tmp.replace(done)  # whole or absent: never half written
        return root / "built", pickle.loads(done.read_bytes())
