"""A repair under faults (issue 43): every check before the study exists, one
line for every refusal and for Ctrl-C, a search killed (SIGKILL or SIGINT)
and resumed that ends bit for bit where an uninterrupted one ends, damaged
study databases set aside, and one repair of a plan at a time on a store."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from balance import repair
from balance.errors import EnvironmentFailure, UserError
from tests.cli.test_tune_cli import cli

ROOT = Path(__file__).resolve().parents[2]

# the survey's commands (issue 43), each a regression test
ONE_STRATEGY = [
    "tosk",
    "repair",
    "--strategies",
    "balanced",
    "--target",
    "draws<=0.02",
    "--move",
    "capacity=13..14",
    "--trials",
    2,
    "--games",
    20,
    "--verify-games",
    20,
]
# the survey's resume command, at a smaller budget (6 trials, 200 games a match);
# rounds 20 ± 6, not the survey's ± 8: in this field the unchanged rules play
# about 12 rounds, on the survey's bound, and rules that fail no target, shown,
# are not searched (issue 45)
RESUMED = [
    "tosk",
    "repair",
    "--variant",
    "potent-healing",
    "--target",
    "draws<=0.02",
    "--target",
    "rounds=20±6",
    "--move",
    "capacity=13..16",
    "--move",
    "heal_cards=1..3",
    "--strategies",
    "balanced,aggressor",
    "--trials",
    6,
    "--games",
    200,
    "--verify-games",
    200,
    "--top",
    2,
    "--seed",
    1,
    "--json",
]


def _lines(text: str) -> list[str]:
    return [x for x in text.strip().splitlines() if x.strip()]


def _nothing_written(folder: Path) -> bool:
    return not any((folder / d).exists() for d in ("results", "repairs", "reports"))


# --------------------------------------------------------------------------- refusals
@pytest.mark.slow
def test_a_one_strategy_field_is_refused_before_the_study_exists(tmp_path):
    p = cli(ONE_STRATEGY, tmp_path)
    assert p.returncode == 2, p.stderr
    assert len(_lines(p.stderr)) == 1, p.stderr
    assert "at least two strategies" in p.stderr and "Traceback" not in p.stderr
    assert _nothing_written(tmp_path)


@pytest.mark.slow
def test_an_impossible_target_is_refused_before_the_search(tmp_path):
    args = [*ONE_STRATEGY[:-6], "--trials", 2, "--games", 20, "--verify-games", 20]
    args[3] = "balanced,aggressor"
    args[5] = "draws<=-0.1"
    p = cli(args, tmp_path)
    assert p.returncode == 2, p.stderr
    assert len(_lines(p.stderr)) == 1, p.stderr
    assert "no rules can meet it" in p.stderr and "draws<=-0.1" in p.stderr
    assert _nothing_written(tmp_path)


@pytest.mark.parametrize(
    "target, feasible",
    [
        ("draws>=-0.5", True),  # (a share above 1 is refused as a percent first)
        ("draws<=-0.1", False),
        ("draws>=100%", True),  # exactly 1 can be met
        ("draws<=0", True),
        ("seat_advantage>=101", False),  # points of a share: at most 100
        ("rounds<=-1", False),
        ("rounds>=500", True),  # no upper bound known
        ("nash_support>=3", False),  # a field of two strategies
        ("nash_support=1..2", True),
        ("max_strategy_score=100%..100%", True),
        ("min_strategy_score<=-1%", False),
    ],
)
def test_a_target_no_value_can_meet_is_infeasible(target, feasible):
    t = repair.parse_target(target)
    if feasible:
        repair.check_feasible(t, 2)
    else:
        with pytest.raises(UserError, match="no rules can meet it"):
            repair.check_feasible(t, 2)


# --------------------------------------------------------------------------- faults
def _start(folder: Path, args) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("BALANCE_RESULTS",)}
    env.update(PYTHONPATH=str(ROOT), BALANCE_RESULTS=str(folder / "results"))
    env["BALANCE_PROGRESS"] = "off"
    return subprocess.Popen(
        [sys.executable, "-m", "balance.cli", *map(str, args)],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _trials_stored(folder: Path) -> int:
    dbs = list((folder / "results" / "tosk" / "_repair").glob("*.db"))
    if not dbs:
        return 0
    try:
        con = sqlite3.connect(f"file:{dbs[0]}?mode=ro", uri=True, timeout=0.1)
        try:
            return con.execute("SELECT count(*) FROM trials").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0  # being created or written


def _interrupt(folder: Path, sig: int, after: int) -> subprocess.CompletedProcess:
    """Start the resumable repair, send ``sig`` once ``after`` trials are
    stored (the next is being played), and wait for it."""
    proc = _start(folder, RESUMED)
    deadline = time.monotonic() + 120
    while _trials_stored(folder) < after and proc.poll() is None:
        assert time.monotonic() < deadline, "the repair stored no trial in 2 minutes"
        time.sleep(0.02)
    assert proc.poll() is None, "the search ended before it could be interrupted"
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _result(p) -> dict:
    """What a repair's answer is: every trial, the front and the verified
    table (not where its study lies or how long it took)."""
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    keep = ("trials", "front", "verified", "fresh_seed", "best", "none_meets", "files")
    return {k: data[k] for k in keep}


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("whole")
    p = cli(RESUMED, folder)
    data = _result(p)
    assert len(data["trials"]) == 6 and len(data["verified"]) >= 2
    return data


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_a_killed_repair_resumes_to_the_uninterrupted_answer(tmp_path, uninterrupted, sig):
    p = _interrupt(tmp_path, sig, after=2)
    if sig == signal.SIGKILL:
        assert p.returncode == -signal.SIGKILL
    else:  # Ctrl-C: one line, exit 130, none of Optuna's warnings or tracebacks
        assert p.returncode == 130, p.stderr
        assert _lines(p.stderr) == [_lines(p.stderr)[-1]], p.stderr
        assert _lines(p.stderr)[0].startswith("interrupted:")
    stored = _trials_stored(tmp_path)
    assert 2 <= stored < 6  # only complete trials are stored
    again = cli(RESUMED, tmp_path)
    assert "Traceback" not in again.stderr and "set aside" not in again.stderr, again.stderr
    assert _result(again) == uninterrupted
    assert json.loads(again.stdout)["trials_played_now"] == 6 - stored


# --------------------------------------------------------------------------- damaged studies
def _plan(**kw):
    args = dict(trials=3, games=60, verify_games=200, top=1, seed=3) | kw
    return repair.make_plan(
        "tosk",
        "potent-healing",
        ["draws<=0.02"],
        ["heal_per_card=1..2", "capacity=13..14"],
        "balanced,turtle",
        **args,
    )


def _truncate(db: Path):
    db.write_bytes(db.read_bytes()[: db.stat().st_size // 2])


def _garbage(db: Path):
    db.write_bytes(b"not a database, but someone's notes\n" * 200)


def _folder(db: Path):
    db.unlink()
    db.mkdir()
    (db / "x").write_text("x")


def _edited_values(db: Path):
    con = sqlite3.connect(db)
    con.execute("UPDATE trial_values SET value = 0")
    con.commit()
    con.close()


def _dropped_table(db: Path):
    con = sqlite3.connect(db)
    con.execute("DROP TABLE trial_user_attributes")
    con.commit()
    con.close()


def _trial_removed(db: Path):
    # a trial missing from the middle: trial 2 is no longer trial 2
    con = sqlite3.connect(db)
    for table in ("trial_values", "trial_params", "trial_user_attributes"):
        con.execute(f"DELETE FROM {table} WHERE trial_id = 1")  # noqa: S608 (a fixed name)
    con.execute("DELETE FROM trials WHERE trial_id = 1")
    con.commit()
    con.close()


@pytest.mark.slow
@pytest.mark.parametrize(
    "damage", [_truncate, _garbage, _folder, _edited_values, _dropped_table, _trial_removed]
)
def test_a_damaged_study_is_set_aside_and_searched_again(tmp_path, capsys, damage):
    first = repair.repair(_plan(), results=tmp_path, progress=False)
    capsys.readouterr()
    damage(first.db)
    again = repair.repair(_plan(), results=tmp_path, progress=False)
    err = capsys.readouterr().err
    assert len(_lines(err)) == 1 and "set aside" in err, err
    moved = tmp_path / "_quarantine" / "_repair" / f"{first.db.name}.1"
    assert moved.exists() and str(moved) in err
    # the new study is the same search: its trials read back from the store
    assert again.evaluated == 3 and again.db.is_file()
    cols = ["trial", "heal_per_card", "capacity", "violation", "size", "draws"]
    assert again.trials[cols].equals(first.trials[cols])
    assert again.verified == first.verified
    # and it is sound: a third call plays nothing and sets nothing aside
    third = repair.repair(_plan(), results=tmp_path, progress=False)
    assert third.evaluated == 0 and "set aside" not in capsys.readouterr().err


@pytest.mark.slow
def test_a_damaged_study_is_one_line_when_only_read(tmp_path):
    first = repair.repair(_plan(), results=tmp_path, progress=False)
    _edited_values(first.db)
    with pytest.raises(UserError, match="stored values are not those its runs give"):
        repair.repair(_plan(), results=tmp_path, progress=False, store_only=True)
    assert first.db.is_file()  # a reader leaves it where it is


# --------------------------------------------------------------------------- one at a time
def _held(db: Path):
    db.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(db.with_suffix(".lock"), os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fd


def test_a_second_repair_of_the_same_plan_is_refused(tmp_path):
    plan = _plan()
    db = repair._study_paths(plan, tmp_path)[1]
    fd = _held(db)  # another repair of this plan holds the study
    try:
        with pytest.raises(EnvironmentFailure, match="another repair of this plan is running"):
            repair.repair(plan, results=tmp_path, progress=False)
        assert not db.exists()
    finally:
        os.close(fd)


@pytest.mark.slow
def test_a_second_repair_on_the_command_line_is_one_line(tmp_path):
    args = [a for a in RESUMED if a != "--json"]
    plan = repair.plan_from(
        "tosk",
        {
            "variant": "potent-healing",
            "targets": ["draws<=0.02", "rounds=20±6"],
            "moves": ["capacity=13..16", "heal_cards=1..3"],
            "strategies": "balanced,aggressor",
            "trials": 6,
            "games": 200,
            "verify_games": 200,
            "top": 2,
            "seed": 1,
        },
        "balanced",
    )
    fd = _held(repair._study_paths(plan, tmp_path / "results")[1])
    try:
        p = cli(args, tmp_path)
    finally:
        os.close(fd)
    assert p.returncode == 1, p.stderr
    assert len(_lines(p.stderr)) == 1 and "another repair of this plan" in p.stderr
    assert "Traceback" not in p.stderr
