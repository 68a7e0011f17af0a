"""The tree is ruff-clean and ruff-formatted (the rules are in pyproject.toml:
E, F, W, I, B, UP; `ruff format` owns line length). CI runs the README's test
command, so this is where the lint runs: ``ruff check`` and
``ruff format --check`` over the whole repository."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import ROOT


def _ruff() -> list[str]:
    exe = Path(sys.executable).with_name("ruff")
    if exe.is_file():
        return [str(exe)]
    found = shutil.which("ruff")
    if found is None:
        pytest.fail("ruff is not installed: it is in the test extra (pip install -e '.[test]')")
    return [found]


# --no-cache: a stale .ruff_cache once hid an unsorted import that a fresh
# clone (CI) would have failed on
@pytest.mark.parametrize(
    "args", [["check", "--no-cache", "."], ["format", "--check", "--no-cache", "."]]
)
def test_ruff(args):
    res = subprocess.run(_ruff() + args, cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
