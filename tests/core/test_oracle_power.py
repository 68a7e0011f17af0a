"""The best-response oracle's power, measured on every real engine.

A search that finds nothing proves nothing: before the equilibrium search's
silence is trusted, its oracle must be shown to find what is there. Each game
keeps a deliberately weak population under ``tests/data/oracle/<game>/``
(``population.toml``: scripted strategies, or the tuned one beside a script,
at equal weights) and the response a long search found once against it
(``known.toml``: ``balance <game> audit --population tests/data/oracle/<game>
--seed 1000 --response .../known.toml``, the audit's search: four times the
default oracle's evaluations, twice its restarts and weight sets; its command
and gain in its comment lines). The test runs the *default* oracle (``balance.oracle.Settings()``,
what ``balance <game> equilibrium`` searches with) once, on seed 1, and asserts:

- the known response beats the population by at least 10 points (on the
  test's own fresh deals): the population is weak, there is much to find;
- the oracle's response gains within 2 points of the known one's, on the same
  fresh deals (``balance.equilibrium.oracle_power``).

The miss rate over more seeds (``balance bench oracle tests/data/oracle/<game>
--seeds 5``) is in docs/methods.md, "The oracle's power".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from balance import equilibrium as E
from balance import oracle

DATA = Path(__file__).resolve().parents[1] / "data" / "oracle"


@pytest.mark.slow  # the default oracle once per engine: 20-90 s each on 2 cores
@pytest.mark.parametrize("game", ["tosk", "suits", "trisk", "clash"])
def test_the_default_oracle_finds_the_known_response(game, tmp_path):
    res = E.oracle_power(DATA / game, [1], results=tmp_path)
    row = res["rows"][0]
    print(
        f"{game}: found {row['found']} {100 * row['gain']['mean']:+.1f} points, the known "
        f"response {100 * row['known_gain']['mean']:+.1f}; {row['evaluations']} evaluations, "
        f"{row['seconds']} s"
    )
    assert res["settings"] == oracle.Settings().as_dict()  # the default oracle
    assert row["known_gain"]["lo"] >= 0.10  # a weak population: 10 points or more to find
    assert row["hit"], (
        f"the oracle fell {100 * row['short']:.1f} points short of the known response"
    )
    assert not row["failed"]
