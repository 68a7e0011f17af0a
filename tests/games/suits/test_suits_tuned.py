"""The four-suits policy choices re-checked under tuned play (the study's
``suits`` hook, balance/games/suits/study.py)."""

from __future__ import annotations

from balance import robust
from balance.games.suits import analysis as suits
from balance.games.suits import study


def test_each_policy_choice_is_measured_against_the_tuned_strategy(tmp_path):
    st = suits.run_struggle(
        suits.StrugglePlan(variants=("base",), games=400, seed=3),
        results=tmp_path,
        progress=False,
    )
    rows = study.policy_checks(st, "tuned", None, tmp_path)
    assert [r["check"] for r in rows] == [f"policy choice: {n}" for n, _ in suits.FACTORS]
    for r in rows:
        assert set(r) == set(robust.COLUMNS) and r["status"] in robust.STATUSES
        assert "deals against the named policies" in r["named"]
        assert "deals against tuned" in r["tuned"] and "[" in r["tuned"]
    # never answering an attack (absorb) loses against the named policies and
    # against the tuned one alike (measured: about -50 and -23 points at this size)
    defence = rows[1]
    assert defence["claim"].startswith("defence defend → absorb lowers")
    assert defence["status"] == robust.HOLDS
