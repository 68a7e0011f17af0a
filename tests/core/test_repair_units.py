"""Targets in the right unit (issue 45, item 2): every repair metric declares
its unit; a share written above 1 is refused as a percent missing its sign,
"65%" is 0.65; the same for the share keys of a verdict file; and a repair
whose unchanged rules already fail no target proposes no change."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from balance import design, repair
from balance.errors import UserError
from balance.registry import GAMES
from tests.cli.test_tune_cli import cli


# --------------------------------------------------------------------------- units
@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_metric_declares_a_known_unit(game):
    for name, row in repair.metric_table(game).items():
        assert row[4] in repair.UNITS, (game, name, row[4])


def test_a_share_written_above_one_is_refused_as_a_percent():
    with pytest.raises(UserError) as e:
        repair.parse_target("max_strategy_score<=65")
    msg = str(e.value)
    assert "'max_strategy_score<=65': 65 looks like a percent: write 0.65 or 65%" in msg
    assert "max_strategy_score is a share" in msg and "\n" not in msg


@pytest.mark.parametrize(
    "text",
    [
        "draws>=2",  # 2%, not "every game drawn twice"
        "seat_share=50..53",
        "seat_share=0.5±3",  # the tolerance is a share too
        "comebacks>=-5",
    ],
)
def test_every_number_of_a_share_target_is_checked(text):
    with pytest.raises(UserError, match="looks like a percent"):
        repair.parse_target(text)


def test_a_percent_is_a_share():
    t = repair.parse_target("max_strategy_score<=65%")
    assert t.hi == 0.65 and t.hi == repair.parse_target("max_strategy_score<=0.65").hi
    assert repair.parse_target("seat_share = 50% ± 3%").lo == pytest.approx(0.47)
    assert repair.parse_target("draws<=1").hi == 1.0  # exactly 1 is a share


def test_a_game_score_difference_takes_percents_too():
    table = repair.metric_table("trisk")
    assert repair.parse_target("min_sorcery_effect>=-10%", table).lo == pytest.approx(-0.10)
    with pytest.raises(UserError, match=r"-10 looks like a percent: write -0.1 or -10%"):
        repair.parse_target("min_sorcery_effect>=-10", table)


def test_a_target_in_rounds_is_not_a_share():
    t = repair.parse_target("rounds<=65")
    assert (t.lo, t.hi, t.unit) == (None, 65.0, "rounds")
    assert repair.parse_target("seat_advantage<=4").hi == 4.0  # points, 0 to 100
    with pytest.raises(UserError, match="'%' is only for shares; rounds is in rounds"):
        repair.parse_target("rounds<=65%")


@pytest.mark.slow
def test_a_percent_target_is_refused_in_one_line_before_any_game(tmp_path):
    p = cli(
        [
            "tosk",
            "repair",
            "--target",
            "max_strategy_score<=65",
            "--move",
            "start_hp=19..21",
            "--strategies",
            "balanced,turtle",
        ],
        tmp_path,
    )
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr
    assert "65 looks like a percent: write 0.65 or 65%" in p.stderr
    assert not (tmp_path / "results").exists() and not (tmp_path / "repairs").exists()


# --------------------------------------------------------------------------- verdict files
def test_a_verdict_share_above_one_is_a_percent(tmp_path):
    f = tmp_path / "mine.toml"
    f.write_text("seat_share_max = 53\n", encoding="utf-8")
    with pytest.raises(UserError) as e:
        design.load_thresholds("tosk", f)
    msg = str(e.value)
    assert "'seat_share_max' = 53 looks like a percent: write 0.53 or \"53%\"" in msg
    assert str(f) in msg and "\n" not in msg


def test_a_verdict_share_may_be_a_percent_string(tmp_path):
    f = tmp_path / "mine.toml"
    f.write_text('seat_share_max = "53%"\ndraw_rate_max = "2.5%"\n', encoding="utf-8")
    th = design.load_thresholds("tosk", f)
    assert th["seat_share_max"] == 0.53 and th["draw_rate_max"] == 0.025
    for bad in ('"150%"', '"x%"', '"-1%"'):
        f.write_text(f"draw_rate_max = {bad}\n", encoding="utf-8")
        with pytest.raises(UserError, match="must be a share between 0 and 1"):
            design.load_thresholds("tosk", f)
    f.write_text('rounds_max = "40%"\n', encoding="utf-8")  # not a share: no percent
    with pytest.raises(UserError, match="'rounds_max' must be a whole number"):
        design.load_thresholds("tosk", f)


# --------------------------------------------------------------------------- no change needed
def _check(status, value, lo, hi, target_lo=None, target_hi=None, text="draws<=0.10"):
    return {
        "target": text,
        "metric": "draws",
        "unit": "share",
        "value": value,
        "lo": lo,
        "hi": hi,
        "status": status,
        "violation": 0.0,
        "target_lo": target_lo,
        "target_hi": target_hi,
    }


def test_the_games_that_would_settle_an_unclear_target():
    # 9% [7%, 11%] against at most 10%: the half-width (2 points) must shrink
    # to the distance (1 point): four times the games
    c = _check(repair.UNCLEAR, 0.09, 0.07, 0.11, target_hi=0.10)
    assert repair.games_to_settle(c, 2000) == 8000
    # from outside: 11% [9.5, 12.5]: (1.5 / 1)² = 2.25 times
    c = _check(repair.UNCLEAR, 0.11, 0.095, 0.125, target_hi=0.10)
    assert repair.games_to_settle(c, 2000) == 4500
    assert repair.games_to_settle(_check(repair.UNCLEAR, 0.1, 0.09, 0.11, None, 0.1), 2000) is None


def _unchanged_result(checks) -> repair.RepairResult:
    plan = repair.make_plan(
        "tosk", "base", ["draws<=0.10"], ["start_hp=19..21"], "balanced,turtle", verify_games=2000
    )
    base = {
        "spec": "base",
        "rules": {},
        "moved": {"start_hp": 20},
        "size": 0.0,
        "games": 4000,
        "targets": checks,
        "violation": 0.0,
        "meets_all": all(c["status"] == repair.MET for c in checks),
    }
    return repair.RepairResult(
        plan, pd.DataFrame(), pd.DataFrame(), [base], None, 0.0, 0, 7, [], searched=False
    )


def test_an_unclear_unchanged_target_says_what_would_settle_it():
    res = _unchanged_result([_check(repair.UNCLEAR, 0.09, 0.07, 0.11, target_hi=0.10)])
    assert repair.unchanged_enough(res.verified[0])
    status, headline, lines = repair.outcome(res)
    assert status == "unchanged-unclear" and res.best is None
    assert headline.startswith("Not shown whether a change is needed")
    assert "no change is proposed" in headline
    assert any("--verify-games 8,000 would settle it" in x for x in lines), lines
    assert any("9.00% [7.00, 11.00] (unclear)" in x for x in lines), lines
    # a target shown not met is what a search is for
    assert not repair.unchanged_enough(
        {"targets": [_check(repair.NOT_MET, 0.2, 0.18, 0.22, target_hi=0.1)]}
    )


@pytest.mark.slow
def test_rules_that_already_meet_every_target_are_not_changed(tmp_path):
    """Tosk's base rules draw far fewer than 90% of games: the repair says so
    from the unchanged rules' verification alone, searches nothing and writes
    no variant file."""
    args = [
        "tosk",
        "repair",
        "--target",
        "draws<=0.9",
        "--target",
        "rounds>=1",
        "--move",
        "start_hp=19..21",
        "--strategies",
        "balanced,turtle",
        "--trials",
        3,
        "--games",
        20,
        "--verify-games",
        200,
    ]
    p = cli(args, tmp_path)
    assert p.returncode == 0, p.stderr
    assert "No change needed: the unchanged rules meet every target" in p.stdout
    assert "no variant written" in p.stdout and "(met)" in p.stdout
    assert not (tmp_path / "repairs").exists()
    assert not list((tmp_path / "results").rglob("*.db"))  # no study was opened
    (page,) = (tmp_path / "reports").glob("tosk-repair-*.html")
    html = page.read_text(encoding="utf-8")
    assert "No change needed" in html and "<svg" not in html
    q = cli([*args, "--json"], tmp_path)
    data = json.loads(q.stdout)
    assert data["searched"] is False and data["outcome"] == "no-change"
    assert data["files"] == [] and data["best"] is None and data["chart"] is None
    (base,) = data["verified"]
    assert all(c["status"] == "met" and c["hi"] <= 0.9 for c in base["targets"][:1])
    assert math.isfinite(base["targets"][0]["lo"])


@pytest.mark.slow
def test_a_study_page_rebuilt_from_the_store_says_no_change_too(tmp_path):
    """The study rebuilds a repair's page from the store alone (``store_only``):
    rules that needed no change need no study database there."""
    plan = repair.make_plan(
        "tosk",
        "base",
        ["draws<=0.9"],
        ["start_hp=19..21"],
        "balanced,turtle",
        trials=3,
        games=20,
        verify_games=200,
    )
    with pytest.raises(UserError, match="no stored repair of tosk"):
        repair.repair(plan, results=tmp_path / "empty", progress=False, store_only=True)
    first = repair.repair(plan, results=tmp_path, progress=False)
    again = repair.repair(plan, results=tmp_path, progress=False, store_only=True)
    assert not first.searched and not again.searched and again.trials.empty
    assert repair.outcome(again) == repair.outcome(first)
    assert repair.outcome(first)[0] == "no-change"
