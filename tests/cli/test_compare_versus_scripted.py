"""``balance <game> compare`` (the scripted field, the default): each ruleset
against base per property of the verdict, with the difference's 95% interval
and "closer to target / further / no change shown", and one line per ruleset
(issue 45, "the designer's answer"); the rule itself is
:func:`balance.versus.versus_base`, its error rate measured in
``tests/core/test_versus.py``."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from typer.testing import CliRunner

from balance import config, design, versus

PROPS = ("seat_fairness", "dominance", "diversity", "length", "draws", "round_cap")


def _invoke(args: list[str]):
    from balance.cli.root import make_app

    return CliRunner().invoke(make_app(), args)


@pytest.mark.slow
def test_a_users_variant_file_against_base_on_tosk(tmp_path, monkeypatch):
    # the example: `balance tosk compare --variants base,force,./mine.toml`
    # mine.toml: more hit points. Tosk's rulebook: "Both players start with 20 hit
    # points (HP)" and "Play continues over a series of rounds until a player's hit
    # points reach zero": 30 HP each takes more rounds to wear down.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.toml").write_text("[rules]\nstart_hp = 30\n")
    args = ["tosk", "compare", "--variants", "base,force,./mine.toml", "-n", "100"]
    args += ["--results", str(tmp_path / "results")]
    res = _invoke(args)
    assert res.exit_code == 0, res.output
    out = res.output
    for name in ("force", "mine.toml"):
        assert f"{name} vs base under the scripted field" in out
        line = next(
            x for x in out.splitlines() if x.startswith(f"{name} vs base (scripted field): ")
        )
        assert "closer on" in line and "further on" in line and "no change shown on" in line
    assert "paired, n=" in out  # the best script's score, differenced deal by deal

    res = _invoke([*args, "--json"])  # read back from the store
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    comps = {c["rules"]: c for c in data["versus_base"]}
    assert set(comps) == {"force", "mine.toml"}
    for c in comps.values():
        assert c["base"] == "base"
        assert [r["property"] for r in c["rows"]] == list(PROPS)
        for r in c["rows"]:
            # every row: both values with their interval and n, the difference's interval
            for k in (
                "base",
                "value",
                "base_lo",
                "base_hi",
                "value_lo",
                "value_hi",
                "diff_lo",
                "diff_hi",
            ):
                assert r[k] is not None and math.isfinite(r[k]), (c["rules"], r["property"], k)
            assert r["base_n"] > 0 and r["value_n"] > 0
            assert r["diff_lo"] <= r["diff"] <= r["diff_hi"]
            assert r["verdict"] in versus.VERDICTS
            assert r["shown"] == (r["diff_lo"] > 0 or r["diff_hi"] < 0)
        assert c["line"].startswith(f"{c['rules']} vs base (scripted field): ")
    length = next(r for r in comps["mine.toml"]["rows"] if r["property"] == "length")
    assert length["diff_lo"] > 0, length  # longer games, shown by the interval


def _assessment(div: dict[str, tuple[float, float, float]]) -> pd.DataFrame:
    rows = []
    for v, (val, lo, hi) in div.items():
        for prop in PROPS:
            x = (val, lo, hi) if prop == "diversity" else (0.5, 0.48, 0.52)
            rows.append(
                {"variant": v, "property": prop, "value": x[0], "lo": x[1], "hi": x[2], "n": 1000}
            )
    return pd.DataFrame(rows)


def test_diversity_changes_only_when_the_bootstrap_ranges_are_apart():
    th = design.load_thresholds("tosk")
    # equal ranges [1, 3] with different point counts: not a shown change
    a = _assessment({"base": (1, 1, 3), "x": (3, 1, 3)})
    (c,) = design.versus_base_scripted({}, ["base", "x"], [], th, assessment=a)
    row = next(r for r in c["rows"] if r["property"] == "diversity")
    assert (row["diff_lo"], row["diff_hi"]) == (-2, 2)
    assert row["verdict"] == "no change shown" and row["interval"] == "ranges"
    # apart: base 1 [1, 1], x 3 [2, 4] against a target of at least 2
    a = _assessment({"base": (1, 1, 1), "x": (3, 2, 4)})
    (c,) = design.versus_base_scripted({}, ["base", "x"], [], th, assessment=a)
    row = next(r for r in c["rows"] if r["property"] == "diversity")
    assert (row["diff_lo"], row["diff_hi"]) == (1, 3)
    assert row["verdict"] == "closer to target"
    assert "closer on strategy diversity" in c["line"]
    # the other properties, no runs to pair: independent intervals
    seat = next(r for r in c["rows"] if r["property"] == "seat_fairness")
    assert seat["interval"] == "independent" and seat["verdict"] == "no change shown"


def test_one_ruleset_has_nothing_to_compare():
    th = design.load_thresholds("tosk")
    a = _assessment({"base": (1, 1, 3)})
    assert design.versus_base_scripted({}, ["base"], [], th, assessment=a) == []


@pytest.mark.slow
def test_a_sweep_answers_against_the_point_with_the_unchanged_rules(tmp_path, monkeypatch):
    # Potent Healing (Tosk T9: "discard up to 2 cards to restore 2 HP each") keeps
    # base's hand capacity; the sweep holds that point, so every other point is
    # compared with it
    monkeypatch.chdir(tmp_path)
    base_cap = config.resolve_variant("tosk", "potent-healing").rules["capacity"]
    args = ["tosk", "sweep", "--variant", "potent-healing", "--strategies", "balanced,turtle"]
    args += ["-n", "60", "--results", str(tmp_path / "results")]
    chart = ["--chart", str(tmp_path / "s.svg")]
    res = _invoke([*args, *chart, "--rule", f"capacity={base_cap},{base_cap + 2}", "--json"])
    assert res.exit_code == 0, res.output
    (c,) = json.loads(res.stdout)["versus_unchanged"]
    assert c["base"] == f"potent-healing+capacity={base_cap}"
    assert c["rules"] == f"potent-healing+capacity={base_cap + 2}"
    assert [r["property"] for r in c["rows"]] == list(PROPS)
    assert all(math.isfinite(r["diff_lo"]) and math.isfinite(r["diff_hi"]) for r in c["rows"])
    # without the unchanged value, one line says so and which value to include
    # (another grid: its own chart, as a chart another sweep wrote is not replaced)
    chart = ["--chart", str(tmp_path / "s2.svg")]
    res = _invoke([*args, *chart, "--rule", f"capacity={base_cap + 1},{base_cap + 2}"])
    assert res.exit_code == 0, res.output
    assert f"include their values (capacity={base_cap})" in res.output
    assert "under the scripted field" not in res.output
