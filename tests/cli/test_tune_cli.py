"""``balance <game> tune`` and ``balance <game> exploit`` as a user runs them:
``python -m balance.cli`` of this tree in a subprocess, in a scratch folder.
A tiny budget runs end to end and writes a strategy every command accepts;
every mistake is one line, exit 2, and nothing written."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests import ROOT


def cli(args, folder, **extra):
    env = {k: v for k, v in os.environ.items() if k not in ("BALANCE_RESULTS", "BALANCE_PROGRESS")}
    env.update(extra)
    env["PYTHONPATH"] = str(ROOT)
    env["BALANCE_RESULTS"] = str(folder / "results")
    return subprocess.run(
        [sys.executable, "-m", "balance.cli", *map(str, args)],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
def test_tune_writes_a_strategy_every_command_accepts(tmp_path):
    args = ["tosk", "tune", "--strategy", "balanced", "--vs", "aggressor,turtle"]
    p = cli([*args, "--budget", 6, "--games", 100, "--seed", 3], tmp_path, BALANCE_PROGRESS="lines")
    assert p.returncode == 0, p.stderr
    out = tmp_path / "tuned" / "tosk-balanced-tuned.toml"
    assert out.is_file()
    assert "balanced (base)" in p.stdout and "balanced-tuned (tuned)" in p.stdout
    assert "difference tuned − base:" in p.stdout
    assert "s per evaluation" in p.stdout
    assert f"wrote {out.relative_to(tmp_path)}" in p.stdout
    assert p.stdout.strip().splitlines()[-1].startswith("tune of balanced: simulated ")
    # without a terminal, progress comes as lines on stderr
    assert "tuning balanced (27 weights): 6 evaluations done in" in p.stderr
    assert "Traceback" not in p.stderr
    text = out.read_text(encoding="utf-8")
    assert "# provenance: " in text and "# command: balance tosk tune" in text
    # every evaluation is a stored run, and the experiment record names them all
    store = tmp_path / "results" / "tosk"
    runs = {d.name for d in store.iterdir() if not d.name.startswith("_")}
    (rec,) = [json.loads(f.read_text()) for f in (store / "_experiments").glob("*.json")]
    assert rec["command"] == "tune" and set(rec["runs"]) == runs
    assert len(runs) >= 2 * 6  # two opponents per evaluation (the base's fresh runs besides)
    # the same tune again reads every evaluation from the store, and says the same
    q = cli([*args, "--budget", 6, "--games", 100, "--seed", 3, "--json"], tmp_path)
    assert q.returncode == 0, q.stderr
    data = json.loads(q.stdout)
    assert data["evaluations_simulated"] == 0 and len(data["search"]) == 6
    assert data["out"] == str(out.relative_to(tmp_path))
    t = data["tuned_score"]
    assert t["lo"] <= t["score"] <= t["hi"] and t["games"] == 2 * 400
    assert f"{100 * t['score']:.1f}%" in p.stdout
    # a path strategy like any other
    s = cli(["tosk", "simulate", "--a", "tuned/tosk-balanced-tuned.toml", "-n", 100], tmp_path)
    assert s.returncode == 0, s.stderr
    assert "A balanced-tuned" in s.stdout


@pytest.mark.slow
def test_exploit_reports_exploitability(tmp_path):
    p = cli(["tosk", "exploit", "random", "--budget", 4, "--games", 100, "--json"], tmp_path)
    assert p.returncode == 0, p.stderr
    (row,) = json.loads(p.stdout)
    assert row["strategy"] == "random"
    from balance import config

    # every named strategy tried as the start (the shipped tuned one included)
    assert len(row["screen"]) == len(config.strategy_names("tosk")) == 8
    best = max(row["screen"], key=lambda r: r["score"])
    assert row["best_named_response"] == best["name"]
    e, t = row["exploitability"], row["tuned_score"]
    assert e["mean"] == pytest.approx(t["score"] - 0.5) and e["lo"] == pytest.approx(t["lo"] - 0.5)
    assert e["lo"] > 0.3  # random is very exploitable
    assert (tmp_path / "tuned" / "tosk-exploit-random.toml").is_file()


# each starts the command in a fresh process (0.6-1.6 s in the fast tier, 17 of them)
@pytest.mark.subprocess
@pytest.mark.parametrize(
    "args, words",
    [
        (["tosk", "tune", "--budget", 0], "--budget"),
        (["tosk", "tune", "--games", -2], "--games"),
        (["tosk", "tune", "--seed", -1], "--seed"),
        (["tosk", "tune", "--vs", "nope"], "nope"),
        (["tosk", "tune", "--vs", "field,random"], "field"),
        (["tosk", "tune", "--strategy", "nope"], "nope"),
        (["tosk", "tune", "--out", "x.txt"], ".toml"),
        (["tosk", "tune", "--out", "afolder"], "folder"),
        (["tosk", "tune", "--name", "a/b"], "--name"),
        (["tosk", "tune", "--bounds", "bad.toml"], "bad.toml"),
        (["tosk", "tune", "--top", 0], "--top"),
        (["trisk", "tune", "--strategy", "tempo@nodeck"], "nodeck"),
        (["tosk", "exploit"], "--all"),
        (["tosk", "exploit", "random", "--all"], "--all"),
        (["tosk", "exploit", "nope"], "nope"),
        (["tosk", "exploit", "random", "--from", "nope"], "nope"),
        (["clash", "tune", "--vs", "counter@Sword+Sword/Nope"], "loadout"),
    ],
)
def test_tune_bad_input_is_one_line_and_writes_nothing(tmp_path, args, words):
    (tmp_path / "afolder").mkdir()
    (tmp_path / "bad.toml").write_text("nope = 1\n", encoding="utf-8")
    p = cli(args, tmp_path)
    assert p.returncode == 2, (p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0], p.stderr
    assert sorted(x.name for x in tmp_path.iterdir()) == ["afolder", "bad.toml"]
