"""Clash of Steel's repair targets (balance/games/clash/repair.py): the item
pairs and maneuvers of the loadout matrix."""

from __future__ import annotations

import pytest

from balance import loadouts, repair
from balance.games.clash import repair as clash_repair


@pytest.mark.slow
def test_the_loadout_metrics_are_the_extremes_of_the_choice_tables(tmp_path):
    """The strongest and weakest item pair and maneuver are those of `balance
    clash loadouts`' tables on the same runs, with intervals simultaneous over
    the pairs (or maneuvers): wider than the winner's own."""
    how = repair.Measuring("clash", "counter,aggressive", 20, 4, results=tmp_path)
    (row,), keys = clash_repair.measure(["base"], how)
    runs = loadouts.run_matrix("clash", "base", "counter", "counter", 20, 4, None, tmp_path)
    assert sorted(keys) == sorted(r.key for r in runs)
    table = loadouts.pairing_choice_table("clash", runs)
    for kind, label in clash_repair.KINDS.items():
        part = table[table["kind"] == kind]
        top, bottom = part.loc[part["score"].idxmax()], part.loc[part["score"].idxmin()]
        assert row[f"max_{label}_score"] == top.score
        assert row[f"min_{label}_score"] == bottom.score
        assert row[f"max_{label}_score_lo"] < top.score_lo
        assert row[f"max_{label}_score_hi"] > top.score_hi
    assert row["games"] == sum(r.games for r in runs)


@pytest.mark.slow
def test_the_search_limits_second_wind(tmp_path):
    """The rulebook's Second Wind returns "one of your discarded Stamina card
    of your choice": the highest, and it dominates the maneuvers (about 72%).
    With second_wind_max = 2 (only a 1 or a 2 returns) no maneuver is above
    65%: the search finds it among the two and verifies it on fresh deals."""
    plan = repair.make_plan(
        "clash",
        "base",
        ["max_maneuver_score<=0.65"],
        ["second_wind_max=2,5"],
        "counter",
        trials=2,
        games=20,
        verify_games=100,
        top=1,
    )
    res = repair.repair(plan, results=tmp_path, progress=False)
    unchanged, fixed = res.verified
    assert unchanged["targets"][0]["status"] == repair.NOT_MET, unchanged["targets"]
    assert fixed["moved"] == {"second_wind_max": 2} and fixed["meets_all"], fixed["targets"]
    assert res.best is fixed
