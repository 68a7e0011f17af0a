"""Every store a command can write, ``balance report`` can read.

Small instances of every command that plays games (a designer's own rules
and a sweep among them) run into ONE store through the installed ``balance``
script in a fresh process; then ``balance report <store>`` exits 0 with no traceback, names each
experiment in its own section, and ``--list`` lists them.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from tests import ROOT
from tests.cli.test_cli import BASE_CMD

# (command, the experiment's command name)
COMMANDS = [
    (["tosk", "simulate", "-n", "200"], "simulate"),
    (  # a designer's own rules: a file, a shipped variant and an override
        ["tosk", "simulate", "-n", "200", "-v", "force+{tmp}/hand7.toml", "--rule", "capacity=12"],
        "simulate",
    ),
    (
        ["tosk", "sweep", "--rule", "capacity=11,13", "--strategies", "balanced,random"]
        + ["-n", "100", "--chart", "{tmp}/sweep.svg"],
        "sweep",
    ),
    (
        ["tosk", "compare", "--variants", "base,force", "--strategies", "aggressor,turtle"]
        + ["-n", "200"],
        "compare",
    ),
    (
        ["tosk", "sprt", "--vs", "force", "--strategy", "turtle", "--opponents", "aggressor"]
        + ["--batch", "50", "--max-games", "200"],
        "sprt",
    ),
    (["tosk", "cards", "-n", "200"], "cards"),
    (
        ["trisk", "compare", "--variants", "base", "--strategies", "tempo,control", "-n", "40"],
        "compare",
    ),
    (
        ["trisk", "power", "--cards", "Bear", "--games", "20", "--max-games", "40"]
        + ["--scale", "0.05", "--no-regression", "--out", "{tmp}/power.html"],
        "power",
    ),
    # 200 games a pairing, not 2: the Nash averages' bootstrap on 2-game cells
    # searches many supports (about 15 s a table, here and twice in the report);
    # the games cost about the same either way
    (["clash", "loadouts", "-n", "200"], "loadouts"),
    (["clash", "ranges", "-n", "2"], "ranges"),
    (["clash", "initiative", "--strategies", "random,counter", "-n", "200"], "initiative"),
    (["suits", "tasks", "-n", "200", "--characters", "20"], "tasks"),
    (
        ["suits", "struggle", "--policies", "high-defend-hand,low-absorb-deck", "-n", "100"],
        "struggle",
    ),
]


def _cli(args: list[str], tmp) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*BASE_CMD, *args, "--results", str(tmp / "results")],  # the installed script
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow  # eleven commands and a report of all of them: about 3 minutes
def test_a_store_of_every_command_makes_a_report(tmp_path):
    (tmp_path / "hand7.toml").write_text("[rules]\nmax_hand = 7\n")
    for args, _ in COMMANDS:
        res = _cli([a.replace("{tmp}", str(tmp_path)) for a in args], tmp_path)
        assert res.returncode == 0, (args, res.stderr[-2000:])
    store = tmp_path / "results"
    recs = {
        (p.parent.parent.name, json.loads(p.read_text())["command"])
        for p in store.glob("*/_experiments/*.json")
    }
    want = {(args[0], name) for args, name in COMMANDS}
    assert want <= recs, want - recs

    listed = _cli(["report", "--list"], tmp_path)
    assert listed.returncode == 0 and "Traceback" not in listed.stderr, listed.stderr
    for _, name in COMMANDS:
        assert name in listed.stdout

    out = tmp_path / "report.html"
    rep = _cli(["report", str(store), "-o", str(out)], tmp_path)
    assert rep.returncode == 0, rep.stderr[-3000:]
    assert "Traceback" not in rep.stderr and "skipped" not in rep.stderr
    html = out.read_text(encoding="utf-8")
    ids = [json.loads(p.read_text()) for p in store.glob("*/_experiments/*.json")]
    for rec in ids:
        if rec["runs"]:  # the Task analysis keeps tables, not runs: listed, no section
            assert f"{rec['command']} {rec['id'][:8]}</h2>" in html, rec["command_line"]
    assert "pools the runs" not in html

    # a filter picks one experiment's section; a bad key is one line, exit 2
    # (its own file: a page another experiment wrote is not replaced without --force)
    out = tmp_path / "one.html"
    one = _cli(
        ["report", str(store / "trisk"), "--where", "command=trisk power", "-o", str(out)],
        tmp_path,
    )
    assert one.returncode == 0, one.stderr[-2000:]
    html = out.read_text(encoding="utf-8")
    assert html.count("<h2>Trisk: ") == 1 and "<h2>Trisk: power " in html
    bad = _cli(
        ["report", str(store), "--where", "colour=red", "-o", str(tmp_path / "bad.html")], tmp_path
    )
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert bad.stderr.strip().count("\n") == 0 and "the keys are game, variant" in bad.stderr
