"""The store does not trust its files: every stored run carries checksums
(of its table files and of its manifest) and its counts must add up when it
is read back. A damaged entry (a truncated, garbage, deleted or edited file)
is reported in one line, set aside under ``_quarantine`` (never deleted) and
recomputed, bit for bit the run it was; ``balance report``, which never
simulates, says so and leaves it out; a damaged chart-cache entry is drawn
again; a damaged study record is one line, not a traceback.

The command-line cases drive the installed script, as a user would.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from balance import runner
from balance.config import load_strategy, resolve_variant
from balance.store import INTEGRITY, QUARANTINE, Damaged, Store

BALANCE = Path(sys.executable).with_name("balance")
SIM = ("tosk", "simulate", "--a", "aggressor", "--b", "turtle", "-n", 200, "--seed", 5, "--json")
OTHER = ("tosk", "simulate", "--a", "random", "--b", "aggressor", "-n", 200, "--seed", 5, "--json")
TIMING = ("elapsed_s", "games_per_s", "cached", "store")


def run(*args):
    env = {
        k: v for k, v in os.environ.items() if k not in ("BALANCE_RESULTS", "BALANCE_CHART_CACHE")
    }
    return subprocess.run(
        [str(BALANCE), *map(str, args)], capture_output=True, text=True, env=env, check=False
    )


def lines(text: str) -> list[str]:
    return [x for x in text.splitlines() if x.strip()]


def simulate(results: Path, *args, sim=SIM) -> tuple[dict, dict, str]:
    """Run the command; its numbers (no timings), the whole JSON and stderr."""
    p = run(*sim, *args, "--results", results)
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
    out = json.loads(p.stdout)
    return {k: v for k, v in out.items() if k not in TIMING}, out, p.stderr


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def data(folder: Path) -> dict:
    """A run folder's data: its table files' bytes and the checksums its
    manifest records (the manifest's command, date and timings differ)."""
    out: dict = {k: v for k, v in files(folder).items() if k != "manifest.json"}
    out["checksums"] = json.loads((folder / "manifest.json").read_text())[INTEGRITY]["files"]
    return out


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """A store holding three runs: a plain one, another match, and a
    per-game one; with their numbers and files as first written."""
    root = tmp_path_factory.mktemp("template") / "results"
    plain, plain_json, _ = simulate(root)
    other, other_json, _ = simulate(root, sim=OTHER)
    per_game, pg_json, _ = simulate(root, "--per-game")
    runs = {}
    for name, nums, out in (
        ("plain", plain, plain_json),
        ("other", other, other_json),
        ("per_game", per_game, pg_json),
    ):
        folder = Path(out["store"])
        runs[name] = {"numbers": nums, "key": out["config_hash"], "data": data(folder)}
    assert set(runs["per_game"]["data"]) == {"checksums", "run.parquet", "games.parquet"}
    return root, runs


@pytest.fixture
def store(template, tmp_path):
    root, runs = template
    shutil.copytree(root, tmp_path / "results")
    return tmp_path / "results", runs


# ------------------------------------------------------------------ ways to damage a run
def _edit_run(folder: Path, **change):
    df = pl.read_parquet(folder / "run.parquet")
    df = df.with_columns(**{k: pl.lit(v(df[k][0]), dtype=df[k].dtype) for k, v in change.items()})
    df.write_parquet(folder / "run.parquet")


def _legacy(folder: Path):
    """Make the entry look written before the store kept checksums."""
    m = json.loads((folder / "manifest.json").read_text())
    m.pop(INTEGRITY)
    (folder / "manifest.json").write_text(json.dumps(m, indent=2))


def _manifest_edit(folder: Path):
    m = json.loads((folder / "manifest.json").read_text())
    m["resolved_config"]["seed"] = 6  # another run's numbers would be claimed
    (folder / "manifest.json").write_text(json.dumps(m, indent=2))


def _checksum_edit(folder: Path):
    m = json.loads((folder / "manifest.json").read_text())
    m[INTEGRITY]["files"]["run.parquet"] = "0" * 64
    (folder / "manifest.json").write_text(json.dumps(m, indent=2))


def _truncate(path: Path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


DAMAGE = {
    # what is done to the run folder -> words the one-line report must hold
    "truncated run.parquet": (
        lambda f: _truncate(f / "run.parquet"),
        "run.parquet fails its checksum",
    ),
    "garbage run.parquet": (
        lambda f: (f / "run.parquet").write_bytes(b"\x07garbage" * 64),
        "run.parquet fails its checksum",
    ),
    "empty run.parquet": (
        lambda f: (f / "run.parquet").write_bytes(b""),
        "run.parquet fails its checksum",
    ),
    "deleted run.parquet": (lambda f: (f / "run.parquet").unlink(), "run.parquet is missing"),
    # the case: a_wins 998 -> 1999 read back and reported
    "edited a_wins": (
        lambda f: _edit_run(f, a_wins=lambda a: a + 1001),
        "run.parquet fails its checksum",
    ),
    "edited wins that still add up": (
        lambda f: _edit_run(f, a_wins=lambda a: a + 10, b_wins=lambda b: b - 10),
        "run.parquet fails its checksum",
    ),
    "garbage manifest": (
        lambda f: (f / "manifest.json").write_bytes(b"{\x00not json"),
        "manifest.json is not valid JSON",
    ),
    "truncated manifest": (
        lambda f: _truncate(f / "manifest.json"),
        "manifest.json is not valid JSON",
    ),
    "deleted manifest": (lambda f: (f / "manifest.json").unlink(), "manifest.json is missing"),
    "edited manifest": (_manifest_edit, "manifest.json fails its checksum"),
    "edited checksum": (_checksum_edit, "manifest.json fails its checksum"),
    # runs written before the checksums: their counts must add up
    "old run, edited a_wins": (
        lambda f: (_legacy(f), _edit_run(f, a_wins=lambda a: a + 1001)),
        "counts do not add up",
    ),
    "old run, edited wins that still add up": (
        lambda f: (_legacy(f), _edit_run(f, a_wins=lambda a: a + 10, b_wins=lambda b: b - 10)),
        "counts do not add up (the deal points",
    ),
    "old run, edited game count": (
        lambda f: (_legacy(f), _edit_run(f, games=lambda g: g + 2, a_wins=lambda a: a + 2)),
        "counts do not add up",
    ),
    "old run, edited end reasons": (
        lambda f: (_legacy(f), _edit_run(f, reasons=lambda r: [r[0] + 1, *r[1:]])),
        "counts do not add up (the end reasons",
    ),
    "old run, truncated run.parquet": (
        lambda f: (_legacy(f), _truncate(f / "run.parquet")),
        "run.parquet is unreadable",
    ),
    "old run, garbage run.parquet": (
        lambda f: (_legacy(f), (f / "run.parquet").write_bytes(b"PAR1" + b"\xff" * 300)),
        "run.parquet is unreadable",
    ),
}


def _quarantined(root: Path, key: str) -> list[Path]:
    return sorted((root / QUARANTINE / "tosk").glob(f"{key}.*"))


@pytest.mark.slow
@pytest.mark.parametrize("kind", list(DAMAGE))
def test_a_damaged_run_is_reported_set_aside_and_recomputed(store, kind, capfd):
    root, runs = store
    orig = runs["plain"]
    folder = root / "tosk" / orig["key"]
    damage, words = DAMAGE[kind]
    damage(folder)
    damaged = files(folder)

    nums, out, err = simulate(root)
    # one line, naming the entry, what is wrong and what was done
    (line,) = lines(err)
    assert line.startswith(f"warning: {folder}: ") and words in line, line
    assert "set aside as" in line and line.endswith("recomputing")
    # recomputed, not read: every number is the undamaged run's
    assert out["cached"] is False
    assert nums == orig["numbers"]
    # the store holds the run again, bit for bit as first written
    assert data(folder) == orig["data"]
    # the damaged entry is kept, untouched, under _quarantine
    (aside,) = _quarantined(root, orig["key"])
    assert files(aside) == damaged
    # and the repaired run is read back from now on, without a word
    (back,) = runner.run_many([_spec()], store=Store(root), progress=False, store_only=True)
    assert back.cached and back.key == orig["key"] and back.a_wins == nums["a_wins"]
    assert not capfd.readouterr().err


@pytest.mark.slow
def test_an_edited_count_is_never_reported(store):
    """The issue's case: a_wins edited 998 -> 1999 in a run of 2000 games was
    read back and reported. Whatever is edited, the command reports the
    run's true numbers."""
    root, runs = store
    orig = runs["plain"]
    folder = root / "tosk" / orig["key"]
    for legacy in (False, True):
        if legacy:
            _legacy(folder)
        _edit_run(folder, a_wins=lambda a: 1999)
        _, out, _ = simulate(root)
        assert out["a_wins"] == orig["numbers"]["a_wins"] != 1999
        assert out["a_wins"] + out["b_wins"] + out["draws"] == out["games"] == 200
    assert len(_quarantined(root, orig["key"])) == 2  # .1 and .2: nothing overwritten


@pytest.mark.slow
def test_an_old_run_that_adds_up_is_still_read(store):
    """Runs written before the checksums are accepted when their counts add
    up (their numbers are checked, not recomputed)."""
    root, runs = store
    folder = root / "tosk" / runs["plain"]["key"]
    _legacy(folder)
    nums, out, err = simulate(root)
    assert out["cached"] is True and nums == runs["plain"]["numbers"] and not lines(err)


@pytest.mark.slow
@pytest.mark.parametrize("legacy", [False, True], ids=["checksummed", "old run"])
def test_a_per_game_rerun_rebuilds_a_deleted_games_file(store, legacy):
    root, runs = store
    orig = runs["per_game"]
    folder = root / "tosk" / orig["key"]
    if legacy:
        _legacy(folder)
    (folder / "games.parquet").unlink()
    nums, out, err = simulate(root, "--per-game")
    (line,) = lines(err)
    assert "games.parquet is missing" in line and "set aside" in line
    assert out["cached"] is False and nums == orig["numbers"]
    assert data(folder) == orig["data"]  # games.parquet is back, bit for bit


@pytest.mark.slow
def test_per_game_rows_that_disagree_with_the_counts_are_damage(store):
    root, runs = store
    orig = runs["per_game"]
    folder = root / "tosk" / orig["key"]
    _legacy(folder)
    df = pl.read_parquet(folder / "games.parquet")
    pts = df["a_points"].to_numpy().copy()
    pts[0] = 2 - pts[0] if pts[0] != 1 else 0  # one game's result flipped
    df.with_columns(a_points=pl.Series(pts, dtype=df["a_points"].dtype)).write_parquet(
        folder / "games.parquet"
    )
    nums, _, err = simulate(root, "--per-game")
    (line,) = lines(err)
    assert "games.parquet does not match the run" in line
    assert nums == orig["numbers"] and data(folder) == orig["data"]


# ------------------------------------------------------------------ balance report
@pytest.mark.slow
def test_report_leaves_a_damaged_run_out_in_one_line(store, tmp_path):
    root, runs = store
    folder = root / "tosk" / runs["plain"]["key"]
    _truncate(folder / "run.parquet")
    page = tmp_path / "page.html"
    p = run("report", root / "tosk", "-o", page, "--results", root)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    damaged = [x for x in lines(p.stderr) if str(folder) in x]
    assert len(damaged) == 1 and "run.parquet fails its checksum" in damaged[0]
    assert "another format" not in p.stderr
    text = page.read_text()
    assert runs["other"]["key"] in text and runs["plain"]["key"] not in text
    # a report only reads: the damaged run stays where it is, for the next
    # command that can recompute it
    assert (folder / "run.parquet").is_file() and not (root / QUARANTINE).exists()


@pytest.mark.slow
def test_report_of_only_damaged_runs_is_one_line(store, tmp_path):
    root, runs = store
    for name in ("plain", "other", "per_game"):
        (root / "tosk" / runs[name]["key"] / "run.parquet").write_bytes(b"garbage")
    page = tmp_path / "page.html"
    p = run("report", root / "tosk", "-o", page, "--results", root)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    (line,) = lines(p.stderr)
    assert line.startswith("error: none of the given runs can be used") and "checksum" in line
    assert not page.exists()


@pytest.mark.slow
def test_report_does_not_read_the_runs_set_aside(store, tmp_path):
    root, runs = store
    _truncate(root / "tosk" / runs["plain"]["key"] / "run.parquet")
    simulate(root)  # sets it aside and recomputes it
    assert _quarantined(root, runs["plain"]["key"])
    p = run("report", root, "-o", tmp_path / "page.html", "--results", root)
    assert p.returncode == 0 and not [x for x in lines(p.stderr) if QUARANTINE in x], p.stderr


@pytest.mark.slow
def test_a_damaged_study_record_is_one_line(store, tmp_path):
    root, _ = store
    rec = root / "_studies" / "tosk.json"
    rec.parent.mkdir()
    out = tmp_path / "pages"
    for text in (
        b"\x00\xffgarbage",
        b'{"runs": ["ab',
        b'{"runs": ["../../x"]}',
        b'{"runs": [], "power_scale": "lots"}',
    ):
        rec.write_bytes(text)
        p = run("report", "-o", out, "--results", root)
        assert p.returncode == 2 and "Traceback" not in p.stderr, (text, p.stderr)
        (line,) = lines(p.stderr)
        assert "study record" in line and "damaged" in line and "balance study` again" in line
        assert not out.exists()


@pytest.mark.slow
def test_a_study_record_naming_a_damaged_run_is_one_line(store, tmp_path):
    root, runs = store
    rec = root / "_studies" / "tosk.json"
    rec.parent.mkdir()
    rec.write_text(json.dumps({"runs": [runs["plain"]["key"]]}))
    (root / "tosk" / runs["plain"]["key"] / "run.parquet").write_bytes(b"garbage")
    # the store holds Tosk's study alone: every game's is asked for, and --game picks
    p = run("report", "-o", tmp_path / "pages", "--results", root)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    (line,) = lines(p.stderr)
    assert "no stored study of clash" in line and "balance report --game" in line
    p = run("report", "-o", tmp_path / "pages", "--results", root, "--game", "tosk")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    (line,) = lines(p.stderr)
    assert "run.parquet fails its checksum" in line and "balance study` again" in line
    assert not (tmp_path / "pages" / "index.html").exists()
    p = run("report", root / "tosk", "-o", tmp_path / "p.html", "--game", "tosk")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    (line,) = lines(p.stderr)
    assert "--where game=NAME" in line


@pytest.mark.slow
def test_a_damaged_chart_cache_entry_is_drawn_again(store, tmp_path):
    root, runs = store
    args = (
        "report",
        root / "tosk" / runs["plain"]["key"],
        "-o",
        tmp_path / "page.html",
        "--results",
        root,
    )
    p = run(*args)
    assert p.returncode == 0, p.stderr
    cache = {f.name: f.read_bytes() for f in (root / "_charts").glob("*.svg")}
    assert len(cache) >= 2
    first, second = sorted(cache)[:2]
    (root / "_charts" / first).write_bytes(b"\xff\xfe not a chart")
    (root / "_charts" / second).write_bytes(cache[second][: len(cache[second]) // 2])
    p = run(*args)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    warned = lines(p.stderr)
    assert len(warned) == 2 and all(
        "chart cache entry is damaged; drawn again" in x for x in warned
    )
    # drawn again: the cache holds what it held, bit for bit
    assert {f.name: f.read_bytes() for f in (root / "_charts").glob("*.svg")} == cache


# ------------------------------------------------------------------ in process
def _spec(n=200, per_game=False):
    return runner.RunSpec(
        resolve_variant("tosk", "base"),
        load_strategy("tosk", "aggressor"),
        load_strategy("tosk", "turtle"),
        n,
        5,
        per_game,
    )


MUTATIONS = {
    "games": lambda r: replace(r, games=r.games + 2, a_wins=r.a_wins + 2),
    "a_wins": lambda r: replace(r, a_wins=r.a_wins + 1),
    "wins swapped": lambda r: replace(r, a_wins=r.b_wins, b_wins=r.a_wins),
    "draws": lambda r: replace(r, draws=-1, a_wins=r.a_wins + 1),
    "seat wins": lambda r: replace(r, seat_wins=r.seat_wins + [1, -2]),
    "pair points length": lambda r: replace(r, pair_points=r.pair_points[:-1]),
    "pair points value": lambda r: replace(
        r,
        pair_points=np.where(np.arange(len(r.pair_points)) == 0, 9, r.pair_points).astype(np.uint8),
    ),
    "rounds": lambda r: replace(
        r, rounds_hist=r.rounds_hist + (np.arange(len(r.rounds_hist)) == 3)
    ),
    "reasons": lambda r: replace(r, reasons=r.reasons[:-1]),
    "card counters": lambda r: replace(
        r, cards=r.cards + (np.arange(r.cards.size) == 7).reshape(r.cards.shape)
    ),
    "no card counters": lambda r: replace(r, cards=None),
    "metric": lambda r: replace(
        r, metrics={**r.metrics, "lead_changes": r.metrics["lead_changes"] * 2}
    ),
    "metric names": lambda r: replace(r, metrics={"lead_changes": r.metrics["lead_changes"]}),
    "no per-deal sums": lambda r: replace(r, deal_sums=None),
    "per-deal rounds": lambda r: _deal_edit(r, "rounds", {0: 1}),
    "per-deal draws": lambda r: _deal_edit(r, "draws", {0: 2}),
    "per-deal lead changes": lambda r: _deal_edit(r, "lead_changes", {0: 1}),
    # the total kept, one deal's two games given three first-seat wins
    "per-deal seat wins": lambda r: _deal_edit(
        r,
        "seat0_wins",
        {
            int(np.flatnonzero(r.deal_sums["seat0_wins"] == 2)[0]): 1,
            int(np.flatnonzero(r.deal_sums["seat0_wins"] == 1)[0]): -1,
        },
    ),
}


def _deal_edit(r, name: str, add: dict):
    """``r`` with ``add[d]`` added to deal d's per-deal ``name``."""
    v = r.deal_sums[name].astype(np.int64)
    for d, k in add.items():
        v[d] += k
    return replace(r, deal_sums={**r.deal_sums, name: v})


@pytest.mark.parametrize("what", list(MUTATIONS))
def test_check_run_refuses_counts_that_do_not_add_up(what):
    res = runner.simulate_run(_spec())
    runner.check_run(res)  # the real run passes
    with pytest.raises(Damaged, match="counts do not add up"):
        runner.check_run(MUTATIONS[what](res))


def test_check_run_compares_per_game_rows_with_the_counts():
    res = runner.simulate_run(_spec(per_game=True))
    runner.check_run(res)
    with pytest.raises(Damaged, match="games.parquet is missing"):
        runner.check_run(replace(res, per_game=None))
    with pytest.raises(Damaged, match="rows for"):
        runner.check_run(replace(res, per_game=res.per_game.head(10)))
    rounds = res.per_game["rounds"].to_numpy().copy()
    rounds[3] += 1
    with pytest.raises(Damaged, match="rounds histogram"):
        runner.check_run(
            replace(
                res,
                per_game=res.per_game.with_columns(
                    rounds=pl.Series(rounds, dtype=res.per_game["rounds"].dtype)
                ),
            )
        )


def test_long_games_are_counted_in_the_length_histogram():
    """A game longer than the histogram's default width is counted, not
    dropped, so the histogram sums to the games (Trisk's turns are not capped
    by a ``max_rounds`` rule)."""
    from sims import tosk

    spec = _spec(n=20)
    out = tosk.simulate(spec.ruleset.vector(), spec.a.vector(), spec.b.vector(), 5, 0, 20)
    out = {**out, "rounds": out["rounds"].copy()}
    acc = runner._Accumulator(spec, tosk)
    width = len(acc.rounds)
    out["rounds"][0] = width + 5
    acc.add(runner.count_batch(tosk, 0, out))
    assert len(acc.rounds) == width + 6 and acc.rounds.sum() == 20 and acc.rounds[width + 5] == 1


def test_a_damaged_entry_of_any_kind_is_set_aside_never_deleted(tmp_path, capsys):
    """The power test's and the four-suits analyses' pieces go through the
    same store: checksummed, and set aside when damaged."""
    store = Store(tmp_path)
    table = {"regression": pl.DataFrame({"x": [1, 2, 3]})}
    store.save("trisk", "k1", {"kind": "piece"}, table)
    manifest, tables = store.load("trisk", "k1")
    assert manifest == {"kind": "piece"} and tables["regression"].equals(table["regression"])
    folder = store.path("trisk", "k1")
    (folder / "regression.parquet").write_bytes(b"junk")
    assert store.load("trisk", "k1") is None
    (line,) = lines(capsys.readouterr().err)
    assert "regression.parquet fails its checksum" in line and line.endswith("recomputing")
    assert not folder.exists()
    assert (tmp_path / QUARANTINE / "trisk" / "k1.1" / "regression.parquet").read_bytes() == b"junk"
    # an entry lacking what its reader needs is damaged too
    store.save("trisk", "k1", {"kind": "piece"}, {})

    def needs(manifest, tables):
        if "regression" not in tables:
            raise Damaged("regression.parquet is missing")
        return manifest, tables

    assert store.load("trisk", "k1", parse=needs) is None
    (line,) = lines(capsys.readouterr().err)
    assert "regression.parquet is missing" in line and "set aside" in line
    assert (tmp_path / QUARANTINE / "trisk" / "k1.2" / "manifest.json").is_file()


def test_a_reader_of_the_store_gets_one_line_and_moves_nothing(tmp_path, capsys):
    """A command that only reads the store (a report) cannot recompute: a
    damaged entry is a one-line error naming it, and stays where it is."""
    from balance.errors import UserError

    store = Store(tmp_path)
    store.save("_suits_tasks", "k", {"kind": "tasks"}, {"t": pl.DataFrame({"x": [1]})})
    folder = store.path("_suits_tasks", "k")
    _truncate(folder / "t.parquet")
    with pytest.raises(UserError, match=r"t\.parquet fails its checksum; run `balance study`"):
        store.load("_suits_tasks", "k", recompute=False)
    assert (folder / "t.parquet").is_file() and not (tmp_path / QUARANTINE).exists()
    assert not capsys.readouterr().err


def test_a_folder_replaced_since_it_was_read_is_not_set_aside(tmp_path, capsys):
    """A concurrent writer may store a good copy after this process read the
    damaged one: the good copy stays."""
    store = Store(tmp_path)
    store.save("tosk", "k", {"x": 1}, {"t": pl.DataFrame({"x": [1]})})
    folder = store.path("tosk", "k")
    assert store.set_aside(folder, "stale", ident=folder.stat().st_ino + 1) is None
    assert folder.is_dir() and store.load("tosk", "k") is not None
    assert not capsys.readouterr().err


@pytest.mark.slow  # builds a store of real runs, about 10 s
def test_a_run_in_the_store_only_mode_is_not_recomputed(store):
    """A command that only reads the store (the study's report) names the
    damaged run in its one-line error and leaves it where it is."""
    from balance.errors import UserError

    root, runs = store
    (root / "tosk" / runs["plain"]["key"] / "run.parquet").write_bytes(b"garbage")
    spec = runner.RunSpec(
        resolve_variant("tosk", "base"),
        load_strategy("tosk", "aggressor"),
        load_strategy("tosk", "turtle"),
        200,
        5,
    )
    assert spec.key == runs["plain"]["key"]
    with pytest.raises(UserError, match="run.parquet fails its checksum"):
        runner.run_many([spec], store=Store(root), store_only=True, progress=False)
    assert not _quarantined(root, spec.key)
    assert (root / "tosk" / spec.key / "run.parquet").read_bytes() == b"garbage"
