"""Trisk's benchmark beyond the standard figures: a full equal-power test, timed."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time


def bench_power(extra: list[str] | None = None) -> dict:
    """Wall time of a full ``balance trisk power`` (reference set, default plan) in a
    fresh process with an empty store (target < 15 minutes on 2 cores)."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [
            sys.executable,
            "-m",
            "balance.cli",
            "trisk",
            "power",
            "--results",
            os.path.join(tmp, "store"),
            "--out",
            os.path.join(tmp, "power.html"),
            *(extra or []),
        ]
        t = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, text=True)
        return {"power_test_wall_s": round(time.perf_counter() - t, 1)}
