"""The test session's own set-up (``tests/conftest.py``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import ROOT


@pytest.mark.slow
def test_the_sessions_processes_share_compiled_modules_outside_the_checkout():
    """Where ``$PYTHONDONTWRITEBYTECODE`` is set, the session hands its
    processes a bytecode folder of its own (``$PYTHONPYCACHEPREFIX``): a
    module one process compiled, the next one loads, and nothing is written
    beside the sources. The process running the tests itself reads the
    installed compiled modules (pip's), not the session's folder: with a
    prefix, Python looks nowhere else."""
    prefix = os.environ.get("PYTHONPYCACHEPREFIX", "")
    if "balance-tests-pyc-" not in prefix:
        pytest.skip("no bytecode folder of the session's: $PYTHONDONTWRITEBYTECODE is unset here")
    assert "PYTHONDONTWRITEBYTECODE" not in os.environ
    assert sys.pycache_prefix is None
    code = "import importlib.util, balance.fmt as m; print(importlib.util.cache_from_source(m.__file__))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    pyc = Path(out.stdout.strip())
    assert pyc.is_file(), pyc
    assert pyc.is_relative_to(prefix) and not pyc.is_relative_to(ROOT)
