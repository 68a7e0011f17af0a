"""What a command loads before it answers: a mistake is refused before the
heavy modules (numba and the engines) are imported."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from balance.registry import GAMES

_MISSPELT = r"""
import io, json, sys
from contextlib import redirect_stderr
from balance.cli.root import main
out = {}
for game in sys.argv[1:]:
    sys.argv = ["balance", game, "simulate", "--variant", "nope"]
    err = io.StringIO()
    try:
        with redirect_stderr(err):
            main()
    except SystemExit as e:
        out[game] = [e.code, err.getvalue(), "numba" in sys.modules]
print(json.dumps(out))
"""


@pytest.mark.slow
def test_a_misspelt_variant_is_refused_before_numba_loads():
    """``--variant nope`` used to load the game's engine (numba and its
    kernels: 0.6 s of a 1.1 s answer for Trisk) before it read the name."""
    games = sorted(GAMES)
    out = subprocess.run(
        [sys.executable, "-c", _MISSPELT, *games], capture_output=True, text=True, check=True
    )
    got = json.loads(out.stdout)
    assert sorted(got) == games
    for game, (code, err, numba_loaded) in got.items():
        assert code == 2, (game, err)
        assert err.startswith(f"error: unknown {game} variant 'nope'; allowed: base")
        assert err.count("\n") == 1
        assert numba_loaded is False, game
