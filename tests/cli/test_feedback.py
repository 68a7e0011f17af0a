"""What a command tells its user while and after it works: the compile
notice, progress with and without a terminal, the last line on what was
played and where it was stored, tables that never cut a name, and
``balance trisk cards``' compact table and legend."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import subprocess
import sys
from typing import NamedTuple

import pytest
from typer.testing import CliRunner

from balance import registry, runner
from balance.cli import output
from tests import ROOT


class Captured(NamedTuple):
    out: str
    err: str


class Streams:
    """stdout and stderr as plain string buffers (no terminal), read and reset
    like pytest's capsys (whose fixture would mark these quick tests slow:
    tests/conftest.py takes its ``_start(`` for a process). Made in the test's
    body: pytest sets its own capture back after the fixtures."""

    def __init__(self, monkeypatch):
        self.monkeypatch = monkeypatch
        self._reset()

    def _reset(self):
        self.o, self.e = io.StringIO(), io.StringIO()
        self.monkeypatch.setattr(sys, "stdout", self.o)
        self.monkeypatch.setattr(sys, "stderr", self.e)

    def readouterr(self) -> Captured:
        got = Captured(self.o.getvalue(), self.e.getvalue())
        self._reset()
        return got


# ---------------------------------------------------------------- the compile notice

KERNEL = """\
from numba import njit


@njit(cache=True)
def add_one(x):
    return x + 1
"""


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow  # a (tiny) real compile
def test_the_notice_is_printed_on_a_cold_compile_and_not_when_cached(tmp_path, monkeypatch):
    """A kernel missing from numba's on-disk cache (an empty cache folder)
    compiles and says so on stderr; the same kernel again, in a fresh
    dispatcher (a new process would make one), loads from the cache: silence."""
    streams = Streams(monkeypatch)
    import numba

    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(registry, "_announced", set())
    registry.watch_compiles()
    (tmp_path / "src").mkdir()
    src = tmp_path / "src" / "fb_kernel.py"
    src.write_text(KERNEL)

    assert _load(src, "fb_kernel_first").add_one(1) == 2
    captured = streams.readouterr()
    assert captured.err == "compiling the simulation kernels (first run only; about a minute)\n"
    assert captured.out == ""
    assert list((tmp_path / "cache").rglob("*.nbi")), "numba wrote its cache index"

    registry._announced.clear()  # as in a new process
    assert _load(src, "fb_kernel_again").add_one(2) == 3
    assert streams.readouterr().err == ""  # loaded from the cache: nothing compiled


def test_the_notice_names_the_game_once(monkeypatch):
    monkeypatch.setattr(registry, "_announced", set())
    tosk = registry.get_game("tosk")
    assert registry.compile_notice(tosk.engine) == (
        "compiling the tosk engine (first run only; about a minute)"
    )
    assert registry.compile_notice(tosk.engine) is None  # said once
    assert registry.compile_notice(tosk.strategies + ".sub") is None  # the same game's
    clash = registry.get_game("clash")
    assert "the clash engine" in registry.compile_notice(clash.strategies)
    # shared kernels compiled inside an engine's compile: already announced
    assert registry.compile_notice("kernels.aggregate") is None


def test_the_listener_prints_the_notice_on_stderr(monkeypatch):
    streams = Streams(monkeypatch)
    monkeypatch.setattr(registry, "_announced", set())

    class FakeDispatcher:
        def py_func(self):
            pass

    d = FakeDispatcher()
    d.py_func.__func__.__module__ = registry.get_game("trisk").engine + ".engine"
    registry._on_compile(d)
    registry._on_compile(d)
    out = streams.readouterr()
    assert out.err == "compiling the trisk engine (first run only; about a minute)\n"
    assert out.out == ""


# ---------------------------------------------------------------- progress


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def _progress(monkeypatch, env: str | None, step_s: float, total=1_000, steps=10, label="x"):
    if env is None:
        monkeypatch.delenv("BALANCE_PROGRESS", raising=False)
    else:
        monkeypatch.setenv("BALANCE_PROGRESS", env)
    clock = Clock()
    bar = runner._Progress(total, label, True, clock=clock)
    for _ in range(steps):
        clock.t += step_s
        bar.advance(total // steps)
    bar.close()
    return bar


def test_without_a_terminal_progress_is_plain_lines_at_every_tenth(monkeypatch):
    streams = Streams(monkeypatch)
    bar = _progress(monkeypatch, None, step_s=3.0, total=1_200_000, label="tosk: 3 matches")
    assert bar.mode == "lines"  # pytest's stderr is no terminal
    lines = streams.readouterr().err.splitlines()
    assert lines[0] == (
        "tosk: 3 matches: 120,000 / 1,200,000 games (10%), 3.0 s elapsed, ~27.0 s left"
    )
    assert len(lines) == 10  # 10% .. 90%, then the last line
    assert "(90%)" in lines[8] and "~3.0 s left" in lines[8]
    assert lines[-1] == "tosk: 3 matches: 1,200,000 games done in 30.0 s"


def test_quick_work_prints_no_progress_and_every_30_s_a_line(monkeypatch):
    streams = Streams(monkeypatch)
    _progress(monkeypatch, None, step_s=0.1)  # over in a second: nothing
    assert streams.readouterr().err == ""
    # slow work: a line every 30 s even between tenths
    monkeypatch.delenv("BALANCE_PROGRESS", raising=False)
    clock = Clock()
    bar = runner._Progress(1_000, "slow", True, clock=clock)
    for _ in range(3):
        clock.t += 31
        bar.advance(1)
    assert len(streams.readouterr().err.splitlines()) == 3
    bar.close()  # stopped before the end (an error, Ctrl-C): says where
    assert streams.readouterr().err == "slow: stopped at 3 / 1,000 games\n"


def test_the_environment_chooses_lines_or_nothing(monkeypatch):
    streams = Streams(monkeypatch)
    _progress(monkeypatch, "lines", step_s=0.01)  # forced: at once, quick or not
    assert len(streams.readouterr().err.splitlines()) == 10
    _progress(monkeypatch, "0", step_s=3.0)
    assert streams.readouterr().err == ""
    monkeypatch.delenv("BALANCE_PROGRESS")
    assert runner._Progress(10, "x", False).mode == "off"  # the caller wants none
    monkeypatch.setenv("BALANCE_PROGRESS", "1")
    assert runner.progress_mode() == "bar"


# ---------------------------------------------------------------- what was played


def _invoke(args, env=None):
    from balance.cli.root import make_app

    res = CliRunner().invoke(make_app(), args, env=env, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res


TOSK_CARDS = ["tosk", "cards", "-n", "2000", "--no-restricted", "--batch-size", "200"]


@pytest.mark.slow  # plays 2,000 games
def test_a_command_says_what_it_played_and_where_it_stored_it(tmp_path):
    store = tmp_path / "results"
    args = [*TOSK_CARDS, "--results", str(store)]
    first = _invoke(args)
    assert first.stdout.splitlines()[-1] == (
        f"simulated 2,000 games in 1 run, nothing read from the store (seed 1); "
        f"stored in {store / 'tosk'}"
    )
    again = _invoke([*args, "--json"], env={"BALANCE_PROGRESS": "lines"})
    json.loads(again.stdout)  # stdout is the JSON alone
    err = again.stderr.splitlines()
    assert err[-1] == (
        f"read 1 run (2,000 games) from the store (seed 1); store: {store / 'tosk'}; "
        "nothing simulated"
    )
    assert not any("games (" in line for line in err)  # nothing played: no progress


@pytest.mark.slow
def test_progress_lines_go_to_stderr_and_the_json_stays_parseable(tmp_path):
    res = _invoke(
        [*TOSK_CARDS, "--results", str(tmp_path / "r"), "--json"],
        env={"BALANCE_PROGRESS": "lines"},
    )
    assert set(json.loads(res.stdout)) == {"by_card", "by_rank", "by_suit"}
    err = res.stderr.splitlines()
    steps = [line for line in err if line.startswith("tosk: card value: ")]
    assert steps[0].startswith("tosk: card value: 200 / 2,000 games (10%), ")
    assert steps[-1].startswith("tosk: card value: 2,000 games done in ")
    assert len(steps) == 10
    assert err[-1].startswith("simulated 2,000 games in 1 run")


def test_the_tally_counts_extended_runs_by_the_games_played_now():
    t = runner.Tally()
    assert t.line() == ""

    class Spec:
        seed, game = 7, "tosk"

    class Res:
        spec, games, cached = Spec(), 4000, False

    t.add(Res(), 1000, None)  # extended from 3,000 games
    assert t.line() == (
        "simulated 1,000 games in 1 run, nothing read from the store (seed 7); not stored"
    )


@pytest.mark.subprocess
def test_without_a_terminal_the_installed_command_prints_progress(tmp_path):
    """The command as a user runs it, its stderr a pipe: lines, not a bar."""
    env = {k: v for k, v in os.environ.items() if k != "BALANCE_PROGRESS"}
    env["PYTHONPATH"] = str(ROOT)
    p = subprocess.run(
        [sys.executable, "-m", "balance.cli", *TOSK_CARDS, "--results", str(tmp_path), "--json"],
        cwd=tmp_path,
        env={**env, "BALANCE_PROGRESS": "lines"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stderr
    json.loads(p.stdout)
    assert "tosk: card value: 1,000 / 2,000 games (50%)" in p.stderr
    assert "\x1b[" not in p.stderr  # no terminal codes in a log


# ---------------------------------------------------------------- tables

LONG = "high-defend-hand-then-absorb-from-deck-x"  # 40 characters


def _table(monkeypatch, width):
    streams = Streams(monkeypatch)
    monkeypatch.setattr(output, "terminal_width", lambda: width)
    output.table(
        "Each policy against the field",
        ["policy", *[f"score vs opponent {i} [95% CI]" for i in range(6)]],
        [[LONG, *["52.3% [51.3, 53.3]"] * 6], ["low", *["47.7% [46.7, 48.7]"] * 6]],
    )
    return streams.readouterr().out


@pytest.mark.parametrize("width", [80, 220, None])
def test_a_table_never_cuts_a_name(monkeypatch, width):
    assert len(LONG) == 40
    out = _table(monkeypatch, width)
    assert LONG in out and "…" not in out
    if width is not None:
        assert max(len(line) for line in out.splitlines()) <= width
    if width in (220, None):  # room enough: every figure whole on its row
        row = next(line for line in out.splitlines() if LONG in line)
        assert row.count("52.3% [51.3, 53.3]") == 6


def test_without_a_terminal_a_table_is_as_wide_as_its_content(monkeypatch):
    out = _table(monkeypatch, None)
    rows = [line for line in out.splitlines() if "[51.3" in line or "[46.7" in line]
    assert len(rows) == 2  # no row wrapped
    assert all(len(line) < 300 for line in out.splitlines())


# ---------------------------------------------------------------- trisk cards


@pytest.mark.slow  # three `trisk cards` runs: 1.1-1.3 s, over the fast tier's second
def test_trisk_cards_is_compact_with_a_legend_and_wide_on_request():
    compact = _invoke(["trisk", "cards"]).stdout
    lines = compact.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 100
    assert "Vask the Ember King" in compact and "Thornback Lizard" in compact
    header = next(line for line in lines if "name" in line and "MIG" in line)
    for col in ("type", "CUN", "WIS", "HP", "AP", "MP", "budget", "Primals"):
        assert col in header
    assert "abilities" not in header
    words = " ".join(compact.split())
    for text in (
        "MIG, CUN, WIS: Might, Cunning and Wisdom",
        "HP: hit points",
        "AP: attack points",
        "MP: magic points",
        "attack: the level from which it may attack",
        "budget: 'on' its target",
        "Primals: how many",
        "--wide",
    ):
        assert text in words, text
    assert "abilities:" not in words  # the legend explains the columns shown

    wide = _invoke(["trisk", "cards", "--wide"]).stdout
    header = next(line for line in wide.splitlines() if "name" in line and "MIG" in line)
    for col in ("kind", "abilities", "points", "target", "primals"):
        assert col in header
    assert "Attack @1; Mentor (active @1): level 2 -> own_creation" in wide  # never cut
    assert "abilities: each with its level" in " ".join(wide.split())
    assert _invoke(["trisk", "cards", "--all"]).stdout == wide


# ---------------------------------------------------------------- the study's steps


@pytest.mark.parametrize("compiled", [{}, {"tosk": 12.4}])
def test_the_study_says_which_game_and_step_it_is_on(monkeypatch, tmp_path, compiled):
    """One line per step on stderr (the games' own work is stubbed: this is
    the study's loop, not its figures); every engine is warmed first, each
    part says when it is done with the elapsed time and the time left, and a
    compile the warm-up missed is said."""
    import re

    streams = Streams(monkeypatch)
    from balance import registry, study, warmup
    from balance.registry import GAMES

    asked = []
    monkeypatch.setattr(warmup, "ensure", lambda games, say=None: asked.append(list(games)) or {})
    monkeypatch.setattr(registry, "compile_seconds", dict(compiled))
    monkeypatch.setattr(
        study, "run_part", lambda g, p, **kw: study._step(f"{g}: {p} …") or {"tables": {}}
    )
    monkeypatch.setattr(study, "assemble", lambda g, out, done: done["main"])
    monkeypatch.setattr(study.report, "write_index", lambda out, pages: out / "index.html")
    assert study.run_study(tmp_path, results=tmp_path / "r", processes=1) == tmp_path / "index.html"
    captured = streams.readouterr()
    assert captured.out == ""
    names = list(GAMES)
    assert asked == [names]  # every engine, once, before the first game
    parts = [(g, p) for g in names for p in study.game_parts(g)]
    lines = captured.err.splitlines()
    started = [
        tuple(m.groups()) for m in map(re.compile(r"study: (\w+): (\w+) …$").match, lines) if m
    ]
    assert sorted(started) == sorted(parts)  # each part once
    ended = [ln for ln in lines if " done in " in ln and " parts" in ln]
    assert len(ended) == len(parts)
    for k, line in enumerate(ended, 1):
        g, p = started[k - 1]
        assert line.startswith(f"study: {g}: {study.PART_NAMES[p]} done in ")
        assert f"; {k} of {len(parts)} parts, " in line
        assert line.endswith("elapsed" if k == len(parts) else "left"), line
    if compiled:
        assert "study: compiled kernels after the warm-up for 12 s" in lines
    assert lines[-2:-1] == ["study: the index page"] and lines[-1].startswith("study: done in ")
