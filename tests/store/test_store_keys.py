"""The store proves each entry (issue 43): an entry's key is recomputed on
every read from the config its manifest records, so a self-consistent run
folder copied or moved under another run's key is damage (reported in one
line, set aside, recomputed), never another seed's figures printed for this
one; no machine path is part of a key (a card set given by a path is named by
its content digest), so a Trisk key does not depend on how ``--results`` or
``--card-set`` is spelled; and the temporary folder a killed writer leaves is
removed by the next run, while a live writer's is never touched.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest

from balance import config, runner
from balance import store as store_mod
from balance.errors import UserError
from balance.store import QUARANTINE, Store, config_hash
from tests import ROOT
from tests.games.trisk.test_trisk_decks import A, B, exchanged
from tests.store.test_store_integrity import SIM, files, lines, run, simulate

SIM6 = (*SIM[:-2], 6, "--json")  # the same match, seed 6
FIGURES = ("games", "a_wins", "b_wins", "draws", "seat_wins")


def _figures(nums: dict) -> dict:
    return {k: nums[k] for k in FIGURES if k in nums}


# ------------------------------------------------------------------ the key is proven on read
@pytest.mark.slow  # three runs of the installed script
@pytest.mark.parametrize("how", ["copied", "moved"])
def test_a_run_under_another_key_is_recomputed_not_reported(tmp_path, how):
    """The survey's case: seed 6's folder copied over seed 5's key was read as
    seed 5's run. Now its manifest's config hashes to seed 6's key, not to the
    folder's: one line, set aside, and seed 5's own figures printed."""
    root = tmp_path / "results"
    five, out5, _ = simulate(root)
    six, out6, _ = simulate(root, sim=SIM6)
    assert SIM6[SIM6.index("--seed") + 1] == 6 and out6["seed"] == 6 and out5["seed"] == 5
    assert _figures(five) != _figures(six)  # else the test could not tell them apart
    folder5, folder6 = Path(out5["store"]), Path(out6["store"])
    assert folder5.parent == folder6.parent and folder5 != folder6
    shutil.rmtree(folder5)
    if how == "copied":
        shutil.copytree(folder6, folder5)
    else:
        os.rename(folder6, folder5)
    planted = files(folder5)

    # a report, which only reads, leaves it out in one line and moves nothing
    page = tmp_path / "page.html"
    p = run("report", root / "tosk", "-o", page, "--results", root)
    assert "Traceback" not in p.stderr, p.stderr
    (bad,) = [x for x in lines(p.stderr) if str(folder5) in x]
    assert f"config hashes to {folder6.name}" in bad, bad
    if how == "copied":  # seed 6's own folder is shown
        assert p.returncode == 0 and bad.endswith("left out") and folder6.name in page.read_text()
    else:  # nothing else to show: one line
        assert p.returncode == 2 and bad.startswith("error: none of the given runs can be used")
    assert files(folder5) == planted and not (root / QUARANTINE).exists()

    nums, out, err = simulate(root)
    (line,) = lines(err)
    assert line.startswith(f"warning: {folder5}: manifest.json's config hashes to {folder6.name}")
    assert "set aside as" in line and line.endswith("recomputing"), line
    assert out["cached"] is False and out["seed"] == 5
    assert nums == five and _figures(nums) != _figures(six)
    (aside,) = sorted((root / QUARANTINE / "tosk").glob(f"{folder5.name}.*"))
    assert files(aside) == planted  # kept, untouched
    # seed 6 is seed 6's run again: read where it was copied from, replayed where moved away
    nums6, out6b, err6 = simulate(root, sim=SIM6)
    assert nums6 == six and out6b["cached"] is (how == "copied") and not lines(err6)


def test_an_analysis_piece_under_another_key_is_damage(tmp_path, capsys):
    """The pieces an analysis keeps (the power test's regression chunks and
    finishes, the Task odds) record what their key hashes (``key_config``):
    checked on read like a run's resolved config, and never stored under
    another key."""
    st = Store(tmp_path)
    c1, c2 = {"kind": "piece", "first": 0}, {"kind": "piece", "first": 8}
    k1, k2 = config_hash(c1), config_hash(c2)
    st.save("trisk", k1, {"key_config": c1}, {"t": pl.DataFrame({"x": [1]})})
    st.save("trisk", k2, {"key_config": c2}, {"t": pl.DataFrame({"x": [2]})})
    with pytest.raises(ValueError, match=f"hashes to {k2} stored as {k1}"):
        st.save("trisk", k1, {"key_config": c2}, {})
    assert st.load("trisk", k1)[1]["t"]["x"][0] == 1
    folder = st.path("trisk", k1)
    shutil.rmtree(folder)
    shutil.copytree(st.path("trisk", k2), folder)
    # a reader that cannot recompute: one line naming it, nothing moved
    with pytest.raises(UserError, match=f"config hashes to {k2}, not to this folder's key"):
        st.load("trisk", k1, recompute=False)
    assert folder.is_dir() and not (tmp_path / QUARANTINE).exists()
    # a writer: one line, set aside, absent (the caller recomputes it)
    assert st.load("trisk", k1) is None
    (line,) = lines(capsys.readouterr().err)
    assert f"hashes to {k2}" in line and "set aside" in line and line.endswith("recomputing")
    assert (tmp_path / QUARANTINE / "trisk" / f"{k1}.1" / "t.parquet").is_file()
    assert st.load("trisk", k2)[1]["t"]["x"][0] == 2  # the original is untouched


def test_an_entry_without_a_recorded_config_is_read_as_before(tmp_path):
    """Pieces stored before keys were proven record no config: read with the
    checksums and the reader's own checks, as entries without checksums are."""
    st = Store(tmp_path)
    st.save("trisk", "k", {"kind": "piece"}, {"t": pl.DataFrame({"x": [1]})})
    assert st.load("trisk", "k")[0] == {"kind": "piece"}


# ------------------------------------------------------------------ no machine path in a key
@pytest.fixture
def designer(tmp_path, monkeypatch):
    """A designer's set (the reference set with Bear and Fox exchanged) at
    ``sets/x.toml``, a folder ``link`` that is a symlink to ``sets``, and the
    working folder at ``tmp_path``."""
    sets = tmp_path / "sets"
    sets.mkdir()
    exchanged(sets / "x.toml", "Bear", "Fox")
    (tmp_path / "link").symlink_to(sets, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _spellings(root: Path, rel: str) -> list[str]:
    return [rel, f"./{rel}", str(root / rel), f"{Path(rel).parts[0]}/../{rel}"]


def _designer_spec(card_set: str, seed: int = 1) -> runner.RunSpec:
    base = config.resolve_variant("trisk", "base")
    rs = replace(base, name="designer", rules={**base.rules, "card_set": card_set})
    a, b = config.load_strategy("trisk", A), config.load_strategy("trisk", B)
    return runner.RunSpec(rs, a, b, 200, seed)


def test_a_card_set_is_keyed_by_its_content_not_its_path(designer):
    root = designer
    spellings = [*_spellings(root, "sets/x.toml"), "link/x.toml", str(root / "link" / "x.toml")]
    specs = [_designer_spec(p) for p in spellings]
    assert len({s.key for s in specs}) == 1
    for s in specs:  # no path in what is hashed: the set by its digest
        text = json.dumps(s.resolved())
        assert str(root) not in text and "x.toml" not in text
        assert s.resolved()["rules"]["card_set"] == "digest:" + s.ruleset.card_set().digest
    # the same content anywhere is the same set; another content is another key
    shutil.copy(root / "sets" / "x.toml", root / "y.toml")
    assert _designer_spec("y.toml").key == specs[0].key
    exchanged(root / "z.toml", "Bear", "Stag")
    assert _designer_spec("z.toml").key != specs[0].key
    # the reference set keeps its name in the key (its stored runs keep their keys)
    ref = config.resolve_variant("trisk", "base")
    assert runner.key_rules(ref) is ref.rules and ref.rules["card_set"] == "reference"
    # the manifest names the file for people, as an absolute path (not hashed)
    for s in specs:
        m = runner.run_manifest(s, 0.0, 1)
        assert Path(m["card_set_path"]).resolve() == (root / "sets" / "x.toml").resolve()
        assert Path(m["card_set_path"]).is_absolute()
        assert config_hash(m["resolved_config"]) == s.key == m["config_hash"]


@pytest.mark.slow  # builds the power test's context and every card run's key (~2 s)
def test_the_power_tests_keys_do_not_depend_on_the_spelling_of_card_set(designer):
    """``balance trisk power --card-set ./x.toml`` and ``--card-set /abs/x.toml``
    (or through a symlinked folder) play the same runs under the same keys."""
    from balance.games.trisk import power

    plan = power.load_plan()
    spellings = [*_spellings(designer, "sets/x.toml"), "link/x.toml"]
    keys = []
    for p in spellings:
        ctx = power.build_context(replace(plan, card_set=p))
        ref, swap = power.calibration_specs(
            ctx, 200
        )  # the reference decks and every card swapped in
        keys.append([s.key for s in ref + swap])
    assert len(keys[0]) > 100 and all(k == keys[0] for k in keys)


@pytest.mark.slow  # writes the calibration set and computes its keys (~2 s)
def test_the_calibration_keys_do_not_depend_on_the_spelling_of_results(designer):
    """The survey's case: the calibration set is written under the store, so
    its runs' keys depended on how ``--results`` was spelled (800 runs played
    again per study). They name the set by its content now."""
    from balance.games.trisk import power

    (designer / "store").mkdir()
    (designer / "alias").symlink_to(designer / "store", target_is_directory=True)
    ctx = power.build_context(power.load_plan())
    keys, paths = [], set()
    for root in (
        "store",
        "alias/../store",
        str(designer / "store"),
        "alias",
        str(designer / "alias"),
    ):
        cctx, cal = power.calibration_context(ctx, Path(root))
        paths.add(str(cctx.cardset.path))
        ref, swap = power.calibration_specs(cctx, 200)
        keys.append([s.key for s in ref + swap])
        assert all(str(designer) not in json.dumps(s.resolved()) for s in swap[:5])
    assert len(paths) == 5  # five spellings of where the set lies
    assert len(cal) > 0 and len(keys[0]) > 100 and all(k == keys[0] for k in keys)
    assert len(list((designer / "store" / "trisk" / "_sets").glob("calibration-*.toml"))) == 1


@pytest.mark.slow  # plays a Trisk run (the engine compiles once per checkout)
def test_a_report_rebuilds_a_run_keyed_by_digest_from_another_folder(designer, monkeypatch):
    """A report reads the set from the manifest's absolute ``card_set_path``,
    wherever it is run from, and finds the run under its key."""
    from balance import pages

    spec = _designer_spec("./sets/x.toml")
    runner.run_many([spec], store=Store(designer / "results"), progress=False)
    elsewhere = designer / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    runs, skipped = pages.load_runs([designer / "results"])
    assert not skipped and [r.key for r in runs] == [spec.key]
    assert Path(runs[0].spec.ruleset.rules["card_set"]) == (designer / "sets" / "x.toml")


# ------------------------------------------------------------------ a killed writer's leftovers
WRITER = """
import sys, time
import polars as pl
from balance import store

def stall(*args, **kwargs):  # inside save: the tables are written, the rename not yet
    print("writing", flush=True)
    time.sleep(120)

store._manifest_digest = stall
store.Store(sys.argv[1]).save("tosk", sys.argv[2], {"x": 1}, {"t": pl.DataFrame({"x": [1]})})
"""


def _writer(root: Path, key: str) -> subprocess.Popen:
    """A process caught inside :meth:`Store.save`, its temporary folder written."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(root), key],
        stdout=subprocess.PIPE,
        env=env,
        text=True,
    )
    assert p.stdout.readline().strip() == "writing"
    return p


def _temps(root: Path) -> list[Path]:
    return sorted(root.rglob(".tmp-*"))


@pytest.mark.slow  # starts a writer process to kill: the first case 1.0 s, whichever runs first
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "SIGINT"])
def test_a_killed_writers_folder_is_removed_a_live_ones_never(tmp_path, sig):
    key = "0123456789abcdef"
    p = _writer(tmp_path, key)
    try:
        (tmp,) = _temps(tmp_path)
        assert tmp.name.startswith(f".tmp-{key}-") and f"-{p.pid}-" in tmp.name
        # its writer runs: the folder is its, whatever its age
        old = time.time() - 10 * store_mod.STALE_TMP_S
        os.utime(tmp, (old, old))
        assert store_mod.stale_reason(tmp) is None
        assert store_mod.sweep_stale(tmp_path / "tosk") == [] and tmp.is_dir()
    finally:
        p.send_signal(sig)
        p.wait(timeout=60)
    assert p.returncode != 0
    assert not (tmp_path / "tosk" / key).exists()
    if sig == signal.SIGINT:  # the writer cleans up after itself
        assert _temps(tmp_path) == []
    else:  # SIGKILL: left behind, until the next run sweeps it
        assert _temps(tmp_path) == [tmp]
        assert f"pid {p.pid}" in store_mod.stale_reason(tmp)
        assert store_mod.sweep_stale(tmp_path / "tosk") == [tmp]
        assert _temps(tmp_path) == [] and (tmp_path / "tosk").is_dir()


def test_temporary_folders_of_another_host_or_version_go_by_age(tmp_path):
    folder = tmp_path / "tosk"
    folder.mkdir()
    other = "0" * 8 if store_mod._host() != "0" * 8 else "1" * 8
    names = {
        "other host": f".tmp-0123456789abcdef-{other}-{os.getpid()}-abc_123",
        "older version": ".tmp-0123456789abcdef-abc_1234",
    }
    made = {}
    for what, name in names.items():
        made[what] = folder / name
        made[what].mkdir()
        (made[what] / "run.parquet").write_bytes(b"x")
    assert store_mod.sweep_stale(folder) == []  # recent: maybe a live writer's
    old = time.time() - 2 * store_mod.STALE_TMP_S
    for d in made.values():
        for p in (d / "run.parquet", d):
            os.utime(p, (old, old))
    # a file written recently keeps its folder
    os.utime(made["other host"] / "run.parquet")
    assert store_mod.sweep_stale(folder) == [made["older version"]]
    assert made["other host"].is_dir()
    os.utime(made["other host"] / "run.parquet", (old, old))
    assert store_mod.sweep_stale(folder) == [made["other host"]]
    assert list(folder.iterdir()) == []


@pytest.mark.slow  # a run of the installed script
def test_the_next_run_removes_a_killed_writers_folder(tmp_path):
    """SIGKILL leaves ``.tmp-<key>-*``; the next command that uses the game's
    folder of the store removes it, without a word."""
    root = tmp_path / "results"
    p = _writer(root, "0123456789abcdef")
    p.kill()
    p.wait(timeout=60)
    (left,) = _temps(root)
    nums, out, err = simulate(root)
    assert _temps(root) == [] and not lines(err) and out["cached"] is False
    assert Path(out["store"]).parent == left.parent
