"""The ``balance`` command line, run as a user runs it: the installed console
script in a subprocess, in a scratch folder, with the store in
``$BALANCE_RESULTS``. User mistakes must give exit code 2, one line on stderr
naming what is wrong, no traceback, and nothing written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from balance.config import load_strategy, resolve_variant
from sims import tosk

SCRIPT = Path(sys.executable).with_name("balance")
BASE_CMD = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "balance.cli"]

MY_STRATEGY = """\
description = "A designer's own: attack when healthy, block when hurt"
temperature = 0.0
[play]
atk = 1.0
def = 0.5
hurt_def = 2.0
lethal = 6.0
[heal]
gain = 1.0
hand_loss = -0.4
"""


def _env(folder: Path) -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("NUMBA_DISABLE_JIT", "BALANCE_PROGRESS", "BALANCE_RESULTS")
    }
    env["BALANCE_RESULTS"] = str(folder / "results")
    return env


def _start(args: list[str], folder: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [*BASE_CMD, *args],
        cwd=folder,
        env=_env(folder),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )


def run_cli(args: list[str], folder: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    proc = _start(args, folder)
    out, err = proc.communicate(timeout=timeout)
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


def _ok(res: subprocess.CompletedProcess) -> str:
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    return res.stdout


def _runs(folder: Path) -> list[Path]:
    root = folder / "results" / "tosk"
    # run folders only: not the store's records (``_experiments``) nor temporary folders
    return sorted(p for p in root.iterdir() if p.name[0] not in "_.") if root.exists() else []


# ---------------------------------------------------------------- tosk play


@pytest.mark.slow
def test_play_json_rulebook_example(tmp_path):
    out = json.loads(_ok(run_cli(["tosk", "play", "3C", "9D", "--json"], tmp_path)))
    assert out == {"cost": 12, "atk": 4, "def": 4, "legal": True}
    assert not (tmp_path / "results").exists()


@pytest.mark.slow
def test_play_accepts_suit_symbols(tmp_path):
    out = json.loads(_ok(run_cli(["tosk", "play", "5♣", "J♣", "--json"], tmp_path)))
    assert out == {"cost": 8, "atk": 4, "def": 2, "legal": True}
    out = json.loads(
        _ok(run_cli(["tosk", "play", "3♥", "9♠", "-v", "battle-weary", "--json"], tmp_path))
    )
    assert out == {"cost": 12, "atk": 4, "def": 4, "legal": False}


@pytest.mark.slow
def test_play_text(tmp_path):
    out = _ok(run_cli(["tosk", "play", "3C", "9d", "J♥", "-v", "momentum+force"], tmp_path))
    assert "3♣ 9♦ J♥ under force+momentum: costs 15 STA for 4 ATK / 4 DEF" in out
    assert "1 technique(s) with no action to boost" in out
    assert "illegal: 15 > capacity 13" in out


# ---------------------------------------------------------------- simulate, compare, cards


@pytest.mark.slow
def test_simulate_json_and_store(tmp_path):
    args = ["tosk", "simulate", "-n", "2000", "--json"]
    row = json.loads(_ok(run_cli(args, tmp_path)))
    assert row["games"] == 2000 and row["pairs"] == 1000
    assert row["a_wins"] + row["b_wins"] + row["draws"] == row["games"]
    assert sum(row[f"end_{name}"] for name in tosk.END_NAMES) == row["games"]
    assert row["end_round_cap"] == row["draws"]
    assert row["winrate_lo"] <= row["winrate"] <= row["winrate_hi"]
    assert 0 <= row["draw_lo"] <= row["draw_rate"] <= row["draw_hi"] <= 1
    assert row["rounds_p10"] <= row["rounds_p50"] <= row["rounds_p90"] <= 100
    # balanced against itself with seats swapped scores exactly one half
    assert row["a"] == row["b"] == "balanced" and row["variant"] == "base"
    assert row["score"] == 0.5 and row["a_wins"] == row["b_wins"]
    assert row["cached"] is False and row["seed"] == 1
    runs = _runs(tmp_path)
    assert [p.name for p in runs] == [row["config_hash"]]
    assert Path(row["store"]).resolve() == runs[0].resolve()
    again = json.loads(_ok(run_cli(args, tmp_path)))
    assert again["cached"] is True
    for k in ("a_wins", "b_wins", "draws", "score", "rounds_mean", "config_hash"):
        assert again[k] == row[k], k
    assert _runs(tmp_path) == runs


@pytest.mark.slow
def test_compare_json(tmp_path):
    args = [
        "tosk",
        "compare",
        "--variants",
        "base,force",
        "--strategies",
        "random,balanced",
        "-n",
        "400",
        "--json",
    ]
    t = json.loads(_ok(run_cli(args, tmp_path)))
    assert {"matrix", "strategies", "variants", "diffs"} <= set(t)
    m = t["matrix"]
    assert len(m) == 4  # 2 variants x 2 ordered pairs
    assert {r["variant"] for r in m} == {"base", "force"}
    for r in m:
        assert r["games"] == 400 and r["a_wins"] + r["b_wins"] + r["draws"] == 400
        mirror = next(x for x in m if x["variant"] == r["variant"] and x["a"] == r["b"])
        assert (mirror["a_wins"], mirror["b_wins"]) == (r["b_wins"], r["a_wins"])
        assert r["winrate_lo"] <= r["winrate"] <= r["winrate_hi"]
    assert {r["variant"] for r in t["variants"]} == {"base", "force"}
    assert {(r["variant"], r["strategy"]) for r in t["strategies"]} == {
        (v, s) for v in ("base", "force") for s in ("random", "balanced")
    }
    assert {r["variant"] for r in t["diffs"]} <= {"force"}
    assert len(_runs(tmp_path)) == 2  # one stored run per variant and pair


@pytest.mark.slow
def test_cards_json(tmp_path):
    t = json.loads(_ok(run_cli(["tosk", "cards", "-n", "400", "--json"], tmp_path)))
    assert len(t["by_card"]) == 48 and len(t["by_rank"]) == 12 and len(t["by_suit"]) == 4
    assert [r["rank"] for r in t["by_rank"]] == list(tosk.RANK_NAMES)
    assert len(t["restricted"]) == 12
    assert all(r["n_pairs"] == 200 for r in t["restricted"])
    for r in t["by_card"]:
        assert r["gih_n"] + r["gns_n"] == 400 and r["played_n"] <= r["gih_n"]
    assert len(_runs(tmp_path)) == 13  # the standard run and one per forbidden rank


# ---------------------------------------------------------------- trace


@pytest.mark.slow
def test_trace(tmp_path):
    out = _ok(run_cli(["tosk", "trace", "--seed", "3", "--game", "1"], tmp_path))
    lines = out.strip("\n").split("\n")
    assert lines[0] == "Tosk base, seed 3, game 1 (deal 0); A = balanced, B = balanced"
    v = load_strategy("tosk", "balanced").vector()
    events = tosk.trace(
        resolve_variant("tosk", "base").vector(), v, v, 3, 1, ("balanced", "balanced")
    )
    assert lines[1:] == [e["text"] for e in events]
    assert lines[1].startswith("round   1 seat 1")
    assert " wins after " in lines[-1] or lines[-1].startswith("draw after")
    assert len(lines) == 2 + 2 * events[-1]["rounds"]
    assert not (tmp_path / "results").exists()


@pytest.mark.slow
def test_trace_json(tmp_path):
    events = json.loads(
        _ok(
            run_cli(
                ["tosk", "trace", "--seed", "3", "--game", "1", "-v", "force", "--json"], tmp_path
            )
        )
    )
    assert events[-1]["kind"] == "end"
    assert all(e["kind"] == "round" for e in events[:-1])
    assert len(events) == 1 + 2 * events[-1]["rounds"]


# ---------------------------------------------------------------- a designer's strategy


@pytest.mark.slow
def test_own_strategy_file(tmp_path):
    (tmp_path / "mine.toml").write_text(MY_STRATEGY)
    row = json.loads(
        _ok(
            run_cli(
                ["tosk", "simulate", "--a", "mine.toml", "--b", "turtle", "-n", "200", "--json"],
                tmp_path,
            )
        )
    )
    assert row["a"] == "mine" and row["b"] == "turtle" and row["games"] == 200
    assert row["a_wins"] + row["b_wins"] + row["draws"] == 200
    out = _ok(
        run_cli(["tosk", "trace", "--a", str(tmp_path / "mine.toml"), "--b", "random"], tmp_path)
    )
    assert "A = mine, B = random" in out.splitlines()[0]
    assert " mine " in out


# ---------------------------------------------------------------- user mistakes

BAD_TOML_KEY = "[play]\natk = 1.0\nbogus_weight = 2.0\n"
BAD_TOML_SYNTAX = "[play\natk = 1.0\n"

# (id, arguments, the name the one error line must contain)
MISTAKES = [
    ("unknown-variant", ["tosk", "simulate", "-v", "nightmare", "-n", "2"], "nightmare"),
    ("unknown-variant-play", ["tosk", "play", "3C", "-v", "nightmare"], "nightmare"),
    ("unknown-strategy", ["tosk", "simulate", "--a", "berserker", "-n", "2"], "berserker"),
    ("unknown-strategy-trace", ["tosk", "trace", "--b", "berserker"], "berserker"),
    (
        "one-strategy-compare",
        ["tosk", "compare", "--strategies", "random", "-n", "2"],
        "--strategies",
    ),
    (
        "missing-strategy-file",
        ["tosk", "simulate", "--a", "nothere.toml", "-n", "2"],
        "nothere.toml",
    ),
    ("unknown-card", ["tosk", "play", "3C", "10X"], "10X"),
    ("repeated-card", ["tosk", "play", "3C", "9D", "3♣"], "3♣"),
    ("zero-games", ["tosk", "simulate", "-n", "0"], "-n"),
    ("not-a-number", ["tosk", "simulate", "-n", "many"], "-n"),
    ("toml-unknown-key", ["tosk", "simulate", "--a", "keys.toml", "-n", "2"], "bogus_weight"),
    ("toml-malformed", ["tosk", "simulate", "--b", "broken.toml", "-n", "2"], "broken.toml"),
    ("unknown-option", ["tosk", "simulate", "--bogus", "-n", "2"], "--bogus"),
    ("unknown-command", ["tosk", "simulte"], "simulte"),
    ("negative-game", ["tosk", "trace", "--game", "-1"], "--game"),
]
# numbers out of the range the engine takes
RANGE_MISTAKES = [
    ("negative-seed", ["tosk", "simulate", "--seed", "-1", "-n", "2"], "-1"),
    ("huge-seed-trace", ["tosk", "trace", "--seed", str(2**64)], str(2**64)),
    ("huge-game", ["tosk", "trace", "--game", str(10**20)], str(10**20)),
]


@pytest.fixture(scope="module")
def mistakes(tmp_path_factory) -> dict:
    """Every mistake at once (they are independent processes), each in its own folder."""
    started = {}
    for name, args, *_ in MISTAKES + RANGE_MISTAKES:
        folder = tmp_path_factory.mktemp(name)
        (folder / "keys.toml").write_text(BAD_TOML_KEY)
        (folder / "broken.toml").write_text(BAD_TOML_SYNTAX)
        started[name] = (folder, _start(args, folder))
    done = {}
    for name, (folder, proc) in started.items():
        out, err = proc.communicate(timeout=300)
        done[name] = (folder, proc.returncode, out, err)
    return done


def _check_mistake(mistakes, name, offending):
    folder, rc, out, err = mistakes[name]
    assert "Traceback" not in err and "Traceback" not in out
    assert rc == 2, err
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ") and offending in lines[0]
    assert out == ""
    assert sorted(p.name for p in folder.iterdir()) == ["broken.toml", "keys.toml"]


@pytest.mark.slow
@pytest.mark.parametrize("name,args,offending", MISTAKES, ids=[m[0] for m in MISTAKES])
@pytest.mark.subprocess  # the mistakes fixture starts one process per mistake
def test_user_mistake(name, args, offending, mistakes):
    _check_mistake(mistakes, name, offending)


@pytest.mark.parametrize("name,args,offending", RANGE_MISTAKES, ids=[m[0] for m in RANGE_MISTAKES])
@pytest.mark.subprocess
def test_out_of_range_number_is_a_user_mistake(name, args, offending, mistakes):
    _check_mistake(mistakes, name, offending)


def test_no_arguments_prints_help(tmp_path):
    res = run_cli([], tmp_path)
    assert res.returncode == 0 and "tosk" in res.stdout and "Traceback" not in res.stderr


@pytest.mark.slow
def test_names_from_files_print_literally(tmp_path):
    """A strategy file named like terminal markup shows as written."""
    (tmp_path / "[bold]odd.toml").write_text(MY_STRATEGY)
    out = _ok(run_cli(["tosk", "simulate", "-n", "40", "--a", "[bold]odd.toml"], tmp_path))
    assert "[bold]odd" in out


@pytest.mark.slow
def test_features_lists_every_strategy_key(tmp_path):
    from strategies import tosk as kernel

    rows = json.loads(_ok(run_cli(["tosk", "features", "--json"], tmp_path)))
    keys = {(r["section"], r["key"]) for r in rows}
    for section, (_, feats) in kernel.SECTIONS.items():
        assert {(section, name) for name, _ in feats} <= keys
    assert {k for s, k in keys if s == "(top level)"} == set(kernel.SCALARS)
    assert "[play]" in _ok(run_cli(["tosk", "features"], tmp_path))
