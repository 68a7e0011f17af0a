"""A hostile user against the installed ``balance`` script.

Every case is a user mistake or an operating-system refusal, for every game and
command: bad names, bad numbers, junk option values, bad config files (a folder,
invalid UTF-8, malformed TOML, unknown keys), output paths that cannot be made,
hostile strings. Each must print exactly one line on stderr, starting with
``error:``, exit with code 2 (1 for an environment failure), never print a
traceback, and write nothing: no result, no page, no chart. Ctrl-C exits 130
with one line and leaves nothing half-written.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

BALANCE = Path(sys.executable).with_name("balance")
GAMES = {"tosk": "balanced", "clash": "counter", "trisk": "tempo", "suits": "high-defend-hand"}
BIG = "9" * 25
JUNK_INT = {
    "-n": ["0", "-2", "1e3", "nan", "", "0x10", BIG],
    "--seed": ["-2", "1e3", "nan", "", "0x10", BIG],
    "--threads": ["0", "-2", "1e3", "", BIG],
    "--batch-size": ["0", "-2", "3", "nan", ""],
    "--max-games": ["0", "-2", "nan", "", BIG],
}
JUNK_FLOAT = ["nan", "inf", "-inf", "0", "-1", "1e309", "x"]
HOSTILE = ["<script>alert(1)</script>", "a\nb", "../../etc/passwd", "x" * 300, "’; DROP"]


def _cases() -> list[tuple[str, list[str]]]:
    """(id, arguments); ``{F}`` stands for the folder of prepared bad files."""
    out: list[tuple[str, list[str]]] = []

    def c(*args: str) -> None:
        out.append((" ".join(args)[:90], list(args)))

    for g, strat in GAMES.items():
        c(g, "simulate", "--variant", "nope")
        c(g, "simulate", "--a", "nope")
        c(g, "simulate", "--b", HOSTILE[0])
        c(g, "simulate", "-n", "-2")
        c(g, "simulate", "-n", str(10**12))
        c(g, "simulate", "--seed", "-1")
        c(g, "simulate", "--precision", "0", "-n", "20")
        c(g, "simulate", "--precision", "nan", "-n", "20")
        c(g, "simulate", "--max-games", "0", "--precision", "0.05", "-n", "20")
        c(g, "simulate", "--threads", "0", "-n", "20")
        c(g, "simulate", "--batch-size", "3", "-n", "20")
        for bad in (
            "dir.toml",
            "badutf8.toml",
            "malformed.toml",
            "unknown.toml",
            "wrongtype.toml",
            "longname.toml",
            "missing.toml",
        ):
            c(g, "simulate", "--a", "{F}/" + bad, "-n", "20")
        c(g, "simulate", "-n", "20", "--results", "")
        c(g, "simulate", "-n", "20", "--results", "{F}/afile/sub")
        c(g, "simulate", "-n", "20", "--results", "{F}/afile")
        c(g, "compare", "--strategies", "nope", "-n", "20")
        c(g, "compare", "--strategies", strat, "-n", "20")
        c(g, "compare", "--variants", "base,nope", "-n", "20")
        c(g, "compare", "--strategies", f"{strat},{strat}", "-n", "20")
        c(g, "compare", "-n", "20", "--charts", "{F}/afile/sub")
        c(g, "compare", "--precision", "0.7", "-n", "20")
        c(g, "trace", "--game", "-1")
        c(g, "trace", "--a", "nope")
        c(g, "trace", "--variant", "nope")
        c(g, "sprt", "--vs", "nope", "--strategy", strat)
        c(g, "sprt", "--vs", "base", "--strategy", "nope")
        c(g, "sprt", "--vs", "base", "--strategy", strat, "--delta", "0")
        c(g, "sprt", "--vs", "base", "--strategy", strat, "--alpha", "2")
        for cmd in ("variants", "strategies", "features"):
            c(g, cmd, "--nope")
    for opt, values in JUNK_INT.items():
        for v in values:
            extra = ["--precision", "0.05", "-n", "20"] if opt == "--max-games" else []
            c("tosk", "simulate", opt, v, *extra)
    for v in JUNK_FLOAT:
        c("suits", "simulate", "--precision", v, "-n", "20")
        c("study", "--scale", v)
    for s in HOSTILE:
        c("trisk", "simulate", "--a", s)
        c("clash", "compare", "--strategies", f"counter,{s}", "-n", "20")
    # the commands of each game
    c("tosk", "play", "ZZ")
    c("tosk", "play", "3C", "3C")
    c("tosk", "play")
    c("tosk", "play", "3C", "--variant", "nope")
    c("tosk", "cards", "--strategy", "nope", "-n", "20")
    c("tosk", "cards", "--vs", "nope", "-n", "20")
    c("tosk", "cards", "-n", "0")
    c("tosk", "cards", "-n", "20", "--charts", "{F}/afile/x")
    c("clash", "loadouts", "--also", "nope", "-n", "2")
    c("clash", "loadouts", "--also", "counter", "-n", "2")
    c("clash", "loadouts", "--strategy", "nope", "-n", "2")
    c("clash", "loadouts", "--vs", "nope", "-n", "2")
    c("clash", "loadouts", "-n", "0")
    c("clash", "loadouts", "--variant", "nope", "-n", "2")
    c("clash", "ranges", "-n", "0")
    c("clash", "ranges", "--strategy", "nope")
    c("clash", "initiative", "--strategies", "nope")
    c("clash", "initiative", "-n", "0")
    c("clash", "simulate", "--a", "counter@Axe+Bow/Feint", "-n", "20")
    c("clash", "simulate", "--a", "counter@Shield+Spear/Feint", "-n", "20")
    c("clash", "simulate", "--a", "counter@", "-n", "20")
    c("trisk", "simulate", "--a", "tempo@", "-n", "20")
    c("trisk", "simulate", "--a", "tempo@Nope", "-n", "20")
    c("trisk", "power", "--cards", "Bear,Bear", "--scale", "0.01")
    c("trisk", "power", "--cards", "Nope", "--scale", "0.01")
    c("trisk", "power", "--scale", "inf")
    c("trisk", "power", "--scale", "0")
    c("trisk", "power", "--card-set", "{F}/badutf8.toml")
    c("trisk", "power", "--out", "{F}/afile/x.html", "--scale", "0.01")
    c("trisk", "cards", "--variant", "nope")
    c("trisk", "decks", "--variant", "nope")
    c("trisk", "skills", "--nope")
    c("suits", "tasks", "--suit", "nope")
    c("suits", "tasks", "-n", "0")
    c("suits", "tasks", "--page", "{F}/afile/x.html")
    c("suits", "struggle", "-n", "0")
    c("suits", "struggle", "--variants", "nope")
    c("suits", "trace", "--a", "nope")
    # the generic commands
    c("study", "--scale", "1e-9")
    c("study", "-o", "{F}/afile")
    c("study", "--results", "{F}/afile/sub")
    c("report", "/nonexistent/x")
    c("report", "-o", "x.html")
    c("report", "{F}", "-o", "{F}/afile/x.html")
    c("report")
    c("bench", "clash", "--matrix-games", "3", "-n", "2")
    c("bench", "suits", "--tasks", "0", "-n", "2")
    c("bench", "tosk", "--nope")
    c("nope")
    # issue 43, the hostile survey: each used to hang, crash or be read wrongly
    c(
        "tosk",
        "sweep",
        "--rule",
        "capacity=1..200",
        "--rule",
        "start_hp=1..1000",
        "--rule",
        "max_rounds=1..10000",
    )  # the grid was built before its size was checked
    c("tosk", "sweep", "--rule", f"capacity=1..{BIG}")
    c("tosk", "sweep", "--rule", "capacity=12,,13", "-n", "20")
    c("tosk", "sweep", "--rule", "capacity=12,13", "-n", "20", "--chart", "{F}/afile/x.svg")
    c("trisk", "simulate", "--rule", "card_set=/dev/zero", "-n", "20")  # read forever
    c("trisk", "simulate", "--rule", "card_set={F}/fifo.toml", "-n", "20")  # open blocked
    c("trisk", "simulate", "--rule", "card_set={F}/big.toml", "-n", "20")
    c("trisk", "power", "--plan", "/dev/zero", "--scale", "0.01")
    c("trisk", "power", "--games", str(10**12))
    c("trisk", "power", "--vs-card", "", "--scale", "0.01")  # read as absent: a whole test ran
    c("suits", "tasks", "-n", str(10**12))  # ran on
    c("suits", "tasks", "--characters", str(10**12))
    c("clash", "simulate", *[f"--rule=stamina_{v}=0" for v in range(1, 6)], "-n", "20")
    c("tosk", "simulate", "--variant", "b", "-n", "20")  # was battle-weary, base shares 'b'
    c("tosk", "simulate", "--variant", "base++base", "-n", "20")
    c("tosk", "simulate", "--variant", "base+base", "-n", "20")
    c("tosk", "simulate", "--variant", "{F}/novariant.toml", "-n", "20")  # played base
    c("tosk", "simulate", "--variant", "{F}/desconly.toml", "-n", "20")
    c("tosk", "simulate", "--variant", "/dev/zero", "-n", "20")
    c("tosk", "simulate", "--a", "{F}/fifo.toml", "-n", "20")
    c("tosk", "simulate", "--a", "{F}/big.toml", "-n", "20")
    c("tosk", "simulate", "-n", "20", "--precision", "0.05", "--max-games", "10")
    c("tosk", "compare", "--variants", "base,,force", "-n", "20")
    c("tosk", "compare", "--strategies", "balanced,random,", "-n", "20")
    c("tosk", "compare", "-n", "20", "--verdict-config", "/dev/zero")
    for g in GAMES:
        c(g, "compare", "--field", "nash")
    for eps in JUNK_FLOAT:
        c("tosk", "compare", "--field", "equilibrium", "--epsilon", eps)
    c("tosk", "compare", "--field", "equilibrium", "--epsilon", "0.5")
    c("tosk", "compare", "--field", "equilibrium", "--iterations", "0")
    c("tosk", "compare", "--field", "equilibrium", "--budget", "-1")
    c("tosk", "compare", "--field", "equilibrium", "--variants", "base,force,base")
    c("tosk", "compare", "--field", "equilibrium", "--variants", "base,nope")
    c("tosk", "compare", "--field", "equilibrium", "-n", "20")
    c("tosk", "compare", "--field", "equilibrium", "--seed", "-1")
    c("tosk", "compare", "--epsilon", "0.01", "-n", "20")
    c("tosk", "sprt", "--vs", "force", "--strategy", "balanced", "--batch", str(10**12))
    c("tosk", "tune", "--name", "")
    c("tosk", "simulate", "--variant=", "-n", "20")
    c("clash", "simulate", "--rule", "", "-n", "20")
    c("bench", "clash", "--matrix-games", str(10**12), "-n", "2")
    c("bench", "suits", "--tasks", str(10**12), "-n", "2")
    return out


CASES = _cases()
# the commands that take --results (each case gets its own store)
STORE_COMMANDS = {
    ("tosk", "cards"),
    ("trisk", "power"),
    ("suits", "tasks"),
    ("suits", "struggle"),
    ("clash", "loadouts"),
    ("clash", "ranges"),
    ("clash", "initiative"),
} | {(g, c) for g in GAMES for c in ("simulate", "compare", "sprt", "sweep")}


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory) -> Path:
    """The prepared bad inputs: a folder named like a TOML, invalid UTF-8,
    malformed TOML, unknown and mistyped keys, an over-long name, a regular
    file where a folder is needed, a FIFO, a file over the TOML size cap, and
    variant files that set no rule."""
    f = tmp_path_factory.mktemp("bad")
    (f / "dir.toml").mkdir()
    (f / "badutf8.toml").write_bytes(b'description = "\xff\xfe bad"\n')
    (f / "malformed.toml").write_text("a = 1\n[bid\n", encoding="utf-8")
    (f / "unknown.toml").write_text("unknown_key = 3\n", encoding="utf-8")
    (f / "wrongtype.toml").write_text('temperature = "hot"\n', encoding="utf-8")
    (f / "longname.toml").write_text(f'name = "{"n" * 200}"\n', encoding="utf-8")
    (f / "afile").write_text("a file, not a folder\n", encoding="utf-8")
    os.mkfifo(f / "fifo.toml")  # opening it would block until a writer came
    with open(f / "big.toml", "wb") as fh:  # sparse: over the 4 MB TOML cap at no cost
        fh.truncate(5 * 1024 * 1024)
    (f / "novariant.toml").write_text("", encoding="utf-8")
    (f / "desconly.toml").write_text('description = "no rules"\n[rules]\n', encoding="utf-8")
    return f


def _args(args: list[str], bad: Path, work: Path) -> list[str]:
    """A case's arguments with the bad files' folder filled in and its own store."""
    args = [a.replace("{F}", str(bad)) for a in args]
    takes_results = tuple(args[:2]) in STORE_COMMANDS or args[0] in ("study", "report")
    if takes_results and "--results" not in args:
        args += ["--results", str(work / "results")]
    return args


def _written(work: Path) -> list[str]:
    return sorted(str(x.relative_to(work)) for x in work.rglob("*") if x.is_file())


def _check(args: list[str], rc, err: str, written: list[str]) -> None:
    what = shlex.join(args)
    assert "Traceback" not in err, f"{what}: a traceback\n{err}"
    lines = err.strip().splitlines()
    assert rc == 2, f"{what}: exit {rc}, stderr {err!r}"
    assert len(lines) == 1 and lines[0].startswith("error: "), f"{what}: stderr {err!r}"
    assert not written, f"{what}: wrote {written[:5]}"


@pytest.mark.slow  # 299 cases in process, about 45 s on a shared 2-core machine
@pytest.mark.parametrize("i", range(len(CASES)), ids=[c[0] for c in CASES])
def test_a_mistake_is_one_line_and_writes_nothing(i, bad_files, tmp_path, monkeypatch, capsys):
    """Every case through the command's entry point, in this process (fast): any
    exception other than the clean exit fails the test with its traceback."""
    from balance import cli

    work = tmp_path / "work"
    work.mkdir()
    args = _args(CASES[i][1], bad_files, work)
    monkeypatch.chdir(work)
    for var in ("BALANCE_RESULTS", "BALANCE_CHART_CACHE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(sys, "argv", ["balance", *args])
    with pytest.raises(SystemExit) as exc:
        cli.main()
    _check(args, exc.value.code, capsys.readouterr().err, _written(work))


# every sixth case again through the installed script, three at a time
SCRIPT_CASES = CASES[::6]


@pytest.fixture(scope="module")
def script_outcomes(bad_files, tmp_path_factory) -> dict:
    def one(i):
        work = tmp_path_factory.mktemp(f"script{i}")
        args = _args(SCRIPT_CASES[i][1], bad_files, work)
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("BALANCE_RESULTS", "BALANCE_CHART_CACHE")
        }
        p = subprocess.run(
            [str(BALANCE), *args],
            capture_output=True,
            text=True,
            cwd=work,
            env=env,
            timeout=600,
            check=False,
        )
        return i, (args, p.returncode, p.stderr, _written(work))

    with ThreadPoolExecutor(3) as ex:
        return dict(ex.map(one, range(len(SCRIPT_CASES))))


@pytest.mark.slow
@pytest.mark.parametrize("i", range(len(SCRIPT_CASES)), ids=[c[0] for c in SCRIPT_CASES])
def test_the_installed_script_agrees(i, script_outcomes):
    _check(*script_outcomes[i])


def test_the_suite_covers_every_game_and_command():
    seen = {(a[0], a[1]) for _, a in CASES if len(a) > 1 and a[0] in GAMES}
    for g in GAMES:
        for cmd in ("simulate", "compare", "trace", "sprt", "variants", "strategies", "features"):
            assert (g, cmd) in seen, (g, cmd)
    extra = {
        ("tosk", "play"),
        ("tosk", "cards"),
        ("clash", "loadouts"),
        ("clash", "ranges"),
        ("clash", "initiative"),
        ("trisk", "power"),
        ("trisk", "cards"),
        ("trisk", "decks"),
        ("trisk", "skills"),
        ("suits", "tasks"),
        ("suits", "struggle"),
        ("suits", "trace"),
    }
    assert extra <= seen
    assert {a[0] for _, a in CASES} >= {"study", "report", "bench"}


def test_a_read_only_store_is_refused_before_any_work(tmp_path, monkeypatch, capsys):
    """A store the process may not write is found before the first game (it
    used to be found after the work was done): one line, exit 1 (the machine,
    not the user), nothing written. Tests run as root, whom permissions do not
    stop, so the refusal is simulated at ``os.access``."""
    from balance import cli, paths

    store = tmp_path / "store"
    store.mkdir()
    real = os.access
    monkeypatch.setattr(
        paths.os, "access", lambda p, mode: False if Path(p) == store else real(p, mode)
    )
    monkeypatch.setattr(
        sys, "argv", ["balance", "tosk", "simulate", "-n", "20", "--results", str(store / "sub")]
    )
    with pytest.raises(SystemExit) as exc:
        cli.main()
    err = capsys.readouterr().err
    assert exc.value.code == 1 and err.count("\n") == 1 and "read-only" in err
    assert not any(store.rglob("*"))


@pytest.mark.slow
def test_ctrl_c_exits_130_and_leaves_nothing_half_written(tmp_path):
    """An interrupted command exits 130 with one line (``balance study &&
    publish`` must stop), and the store holds no partial run."""
    p = subprocess.Popen(
        [
            str(BALANCE),
            "tosk",
            "simulate",
            "-n",
            "100000000",
            "--results",
            str(tmp_path / "results"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    time.sleep(6)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 130, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert err.startswith("interrupted")
    left = [x for x in (tmp_path / "results").rglob("*")] if (tmp_path / "results").exists() else []
    assert not [x for x in left if x.name.startswith(".tmp")]  # no half-written folder
    assert not [x for x in left if x.name == "run.parquet"]  # the long run never finished


@pytest.mark.slow
def test_a_figure_that_cannot_be_computed_is_null_with_a_reason(tmp_path):
    """``--json`` used to crash on NaN after the run was stored: a figure that
    cannot be computed is null, and ``why_null`` says why."""
    import json

    p = subprocess.run(
        [
            str(BALANCE),
            "tosk",
            "simulate",
            "--a",
            "random",
            "--b",
            "adaptive",
            "-n",
            "20",
            "--seed",
            "1",
            "--json",
            "--results",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode == 0, p.stderr
    row = json.loads(p.stdout)
    nulls = [k for k, v in row.items() if v is None]
    assert nulls, "this run has a figure that cannot be computed"
    assert set(nulls) <= set(row["why_null"]) and all(row["why_null"][k] for k in nulls)
    assert row["a_wins"] + row["b_wins"] + row["draws"] == row["games"] == 20
