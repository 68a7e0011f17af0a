"""The runner and the results store: a run is simulated once, stored
atomically under the hash of its resolved config, and read back identically."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace

import numpy as np
import polars as pl
import pytest

from balance import runner
from balance import store as store_mod
from balance.config import STRATEGY_DIR, load_strategy, resolve_variant
from balance.errors import UserError
from balance.runner import RunSpec, run_many, simulate_run
from balance.store import Store, config_hash, results_dir, write_text_atomic
from sims import tosk

SEED = 77
N = 200


def _spec(variant="base", a="aggressor", b="turtle", n=N, seed=SEED, per_game=False) -> RunSpec:
    sa = a if not isinstance(a, str) else load_strategy("tosk", a)
    sb = b if not isinstance(b, str) else load_strategy("tosk", b)
    return RunSpec(resolve_variant("tosk", variant), sa, sb, n, seed, per_game)


def _assert_same(r1, r2):
    assert r1.key == r2.key
    assert (r1.games, r1.a_wins, r1.b_wins, r1.draws) == (r2.games, r2.a_wins, r2.b_wins, r2.draws)
    for f in ("seat_wins", "pair_points", "rounds_hist", "reasons", "cards"):
        x, y = getattr(r1, f), getattr(r2, f)
        assert x.shape == y.shape and np.array_equal(x, y), f
    assert r1.pair_points.dtype == r2.pair_points.dtype == np.uint8
    assert r1.deal_sums.keys() == r2.deal_sums.keys()
    for k, v in r1.deal_sums.items():
        assert v.dtype == r2.deal_sums[k].dtype and np.array_equal(v, r2.deal_sums[k]), k
    if r1.per_game is None:
        assert r2.per_game is None
    else:
        assert r1.per_game.equals(r2.per_game)


def _leftovers(root) -> list[str]:
    return [p.name for p in root.rglob(".tmp-*")]


# ---------------------------------------------------------------- store and read back


def test_run_is_stored_once_and_read_back(tmp_path):
    store = Store(tmp_path)
    spec = _spec()
    assert not store.has("tosk", spec.key) and store.load("tosk", spec.key) is None
    (first,) = run_many([spec], store=store, progress=False)
    assert not first.cached
    assert store.has("tosk", spec.key)
    folder = store.path("tosk", spec.key)
    assert folder == tmp_path / "tosk" / spec.key
    assert {p.name for p in folder.iterdir()} == {"manifest.json", "run.parquet"}
    stamp = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    (second,) = run_many([spec], store=store, progress=False)
    assert second.cached
    _assert_same(first, second)
    assert second.manifest == json.loads(json.dumps(first.manifest, default=str))
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == stamp  # not rewritten
    assert _leftovers(tmp_path) == []
    # what was stored is what a fresh simulation gives
    _assert_same(simulate_run(spec), second)
    assert first.games == N == first.a_wins + first.b_wins + first.draws


def test_manifest_records_the_run(tmp_path):
    spec = _spec("force+momentum")
    (res,) = run_many([spec], store=Store(tmp_path), progress=False)
    m = json.loads((Store(tmp_path).path("tosk", spec.key) / "manifest.json").read_text())
    assert m["config_hash"] == spec.key == config_hash(spec.resolved())
    assert m["seed"] == SEED and m["engine_version"] == tosk.VERSION
    rc = m["resolved_config"]
    assert rc["variant"] == "force+momentum" and rc["rules"]["force"] is True
    assert rc["n_games"] == N and rc["a"]["name"] == "aggressor" and rc["b"]["name"] == "turtle"
    ids = [r["id"] if isinstance(r, dict) else str(r) for r in m["rulings"]]
    assert any(i.startswith("T3 ") for i in ids) and any(i.startswith("T11 ") for i in ids)
    assert m["timings"]["threads"] >= 1


def test_mixed_batch_reads_what_is_stored_and_simulates_the_rest(tmp_path):
    store = Store(tmp_path)
    s1, s2 = _spec(seed=1), _spec(seed=2)
    run_many([s1], store=store, progress=False)
    r1, r2 = run_many([s1, s2], store=store, progress=False)
    assert r1.cached and not r2.cached
    assert store.has("tosk", s2.key)
    assert not np.array_equal(r1.pair_points, r2.pair_points)


# ---------------------------------------------------------------- keys


def test_key_is_a_stable_hash_of_the_resolved_config():
    k = _spec().key
    assert len(k) == 16 and int(k, 16) >= 0
    assert _spec().key == k  # fresh objects, same key
    assert config_hash(_spec().resolved()) == k


@pytest.mark.parametrize(
    "change",
    [
        dict(seed=SEED + 1),
        dict(n=N + 2),
        dict(variant="force"),
        dict(variant="battle-weary"),
        dict(a="balanced"),
        dict(b="random"),
        dict(per_game=True),
    ],
)
def test_anything_that_changes_the_numbers_changes_the_key(change):
    assert _spec(**change).key != _spec().key


def test_swapping_a_and_b_changes_the_key():
    assert _spec(a="turtle", b="aggressor").key != _spec().key


def test_variant_order_does_not_change_the_key():
    assert _spec("force+momentum").key == _spec("momentum+force").key
    assert _spec("force+momentum+battle-weary").key == _spec("battle-weary+momentum+force").key


def test_forbidden_rank_changes_the_key():
    s = load_strategy("tosk", "aggressor")
    assert _spec(a=s.restricted(8, "9")).key != _spec(a=s).key


def test_same_name_other_weights_changes_the_key(tmp_path):
    text = (STRATEGY_DIR / "tosk" / "aggressor.toml").read_text()
    own = tmp_path / "aggressor.toml"
    own.write_text(text.replace("lethal = 10.0", "lethal = 9.0"))
    theirs = load_strategy("tosk", str(own))
    assert theirs.name == "aggressor"
    assert _spec(a=theirs).key != _spec().key
    same = tmp_path / "copy" / "aggressor.toml"
    same.parent.mkdir()
    same.write_text(text)
    assert _spec(a=load_strategy("tosk", str(same))).key == _spec().key


def test_engine_version_is_part_of_the_key(monkeypatch):
    k = _spec().key
    monkeypatch.setattr(tosk, "VERSION", tosk.VERSION + "-changed")
    assert _spec().key != k


# ---------------------------------------------------------------- atomic writes


def test_failed_save_leaves_nothing(tmp_path, monkeypatch):
    store = Store(tmp_path)
    spec = replace(_spec(), per_game=True)  # two files: run.parquet and games.parquet
    real = store_mod.parquet_bytes
    calls = []

    def flaky(table):
        calls.append(table)
        if len(calls) == 2:  # fail midway, with a file already written
            raise OSError("disk full")
        return real(table)

    monkeypatch.setattr(store_mod, "parquet_bytes", flaky)
    with pytest.raises(OSError, match="disk full"):
        run_many([spec], store=store, progress=False)
    assert len(calls) == 2
    assert not store.has("tosk", spec.key) and store.load("tosk", spec.key) is None
    assert not store.path("tosk", spec.key).exists()
    assert _leftovers(tmp_path) == []
    assert list((tmp_path / "tosk").iterdir()) == []
    # once the disk is back, the run is simulated and stored as usual
    monkeypatch.setattr(store_mod, "parquet_bytes", real)
    (res,) = run_many([spec], store=store, progress=False)
    assert not res.cached and store.has("tosk", spec.key)
    (again,) = run_many([spec], store=store, progress=False)
    assert again.cached
    _assert_same(res, again)


def test_failed_manifest_write_leaves_nothing(tmp_path, monkeypatch):
    store = Store(tmp_path)
    table = {"summary": pl.DataFrame({"games": [2]})}

    def boom(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(json, "dumps", boom)
    with pytest.raises(KeyboardInterrupt):
        store.save("tosk", "abc", {"x": 1}, table)
    monkeypatch.undo()
    assert not store.has("tosk", "abc") and _leftovers(tmp_path) == []


def test_second_writer_of_the_same_run_keeps_the_first(tmp_path):
    store = Store(tmp_path)
    store.save("tosk", "k1", {"who": "first"}, {"t": pl.DataFrame({"x": [1]})})
    store.save("tosk", "k1", {"who": "second"}, {"t": pl.DataFrame({"x": [2]})})
    manifest, tables = store.load("tosk", "k1")
    assert manifest == {"who": "first"} and tables["t"]["x"].to_list() == [1]
    assert _leftovers(tmp_path) == []


def test_store_root(tmp_path, monkeypatch):
    monkeypatch.setenv("BALANCE_RESULTS", str(tmp_path / "env"))
    assert results_dir() == tmp_path / "env" and Store().root == tmp_path / "env"
    assert results_dir(tmp_path / "arg") == tmp_path / "arg"
    monkeypatch.delenv("BALANCE_RESULTS")
    assert str(results_dir()) == "results"


def test_write_text_atomic(tmp_path):
    target = tmp_path / "deep" / "report.html"
    write_text_atomic(target, "one")
    write_text_atomic(target, "two")
    assert target.read_text() == "two"
    assert [p.name for p in target.parent.iterdir()] == ["report.html"]


# ---------------------------------------------------------------- per-game rows


def test_per_game_rows(tmp_path):
    store = Store(tmp_path)
    spec = _spec("momentum", per_game=True, n=N)
    (res,) = run_many([spec], store=store, batch_size=64, progress=False)
    df = res.per_game
    assert df is not None and df.height == N
    assert df["game"].to_list() == list(range(N))
    assert (store.path("tosk", spec.key) / "games.parquet").is_file()
    # rows agree with the engine and with the aggregates
    out = tosk.simulate(spec.ruleset.vector(), spec.a.vector(), spec.b.vector(), SEED, 0, N)
    for k, v in out.items():
        assert df[k].to_list() == v.tolist(), k
    pts = df["a_points"].to_numpy()
    assert (pts == 2).sum() == res.a_wins and (pts == 0).sum() == res.b_wins
    assert (pts == 1).sum() == res.draws
    assert np.array_equal(pts[0::2] + pts[1::2], res.pair_points)
    hist = np.bincount(df["rounds"].to_numpy(), minlength=len(res.rounds_hist))
    assert np.array_equal(hist, res.rounds_hist)
    (back,) = run_many([spec], store=store, progress=False)
    assert back.cached
    _assert_same(res, back)
    # without per_game there are no rows
    (plain,) = run_many([_spec("momentum", n=N)], store=store, progress=False)
    assert plain.per_game is None
    assert np.array_equal(plain.pair_points, res.pair_points)


# ---------------------------------------------------------------- runner checks


def test_check_games():
    assert runner.check_games(1) == 2 and runner.check_games(400) == 400
    for bad in (0, -2):
        with pytest.raises(UserError, match="-n"):
            runner.check_games(bad)


@pytest.mark.parametrize("bad", [0, 3, -2])
def test_bad_batch_size(bad):
    with pytest.raises(UserError, match="batch"):
        simulate_run(_spec(n=4), batch_size=bad)


def test_card_counters_are_consistent():
    res = simulate_run(_spec("advanced-techniques", n=N))
    cards = res.cards
    f = {name: i for i, name in enumerate(runner.CARD_FIELDS)}
    assert cards.shape == (2, tosk.N_CARDS, len(runner.CARD_FIELDS))
    # every card is either seen or not seen in each game
    assert (cards[:, :, f["gih_n"]] + cards[:, :, f["gns_n"]] == N).all()
    assert (cards[:, :, f["played_n"]] <= cards[:, :, f["gih_n"]]).all()
    assert (cards[:, :, f["played_w"]] <= cards[:, :, f["played_n"]]).all()
    assert (cards[0, :, f["gih_w"]] + cards[0, :, f["gns_w"]] == res.a_wins).all()
    assert (cards[1, :, f["gih_w"]] + cards[1, :, f["gns_w"]] == res.b_wins).all()
    assert (cards[0, :, f["gih_d"]] + cards[0, :, f["gns_d"]] == res.draws).all()
    # each game's opening hand is 6 cards per side
    assert cards[0, :, f["gih_n"]].sum() >= 6 * N


def test_store_is_not_touched_without_a_store(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (res,) = run_many([_spec(n=4)], store=None, progress=False)
    assert not res.cached and list(tmp_path.iterdir()) == []


def test_copying_a_run_folder_keeps_it_readable(tmp_path):
    a, b = Store(tmp_path / "a"), Store(tmp_path / "b")
    spec = _spec(n=20)
    (res,) = run_many([spec], store=a, progress=False)
    shutil.copytree(a.root, b.root)
    (back,) = run_many([spec], store=b, progress=False)
    assert back.cached
    _assert_same(res, back)


# ---------------------------------------------------------------- extending and precision
def test_extending_a_run_equals_running_it_from_scratch():
    small = simulate_run(_spec(variant="force", n=300))
    whole = simulate_run(_spec(variant="force", n=900))
    grown = simulate_run(_spec(variant="force", n=900), batch_size=128, start=small)
    assert grown.key == whole.key
    _assert_same(grown, whole)


def test_only_a_smaller_run_of_the_same_config_can_be_extended():
    small = simulate_run(_spec(n=300))
    with pytest.raises(ValueError):
        simulate_run(_spec(n=900, seed=SEED + 1), start=small)
    with pytest.raises(ValueError):
        simulate_run(_spec(n=200), start=small)


def test_needed_games_matches_the_wilson_half_width():
    from balance.analysis import needed_games
    from balance.stats import wilson

    # a 50% match needs the classic 9,604 games for ±1 point
    assert needed_games(5000, 10000, 0.01) == 9604
    # a lopsided match needs far fewer, and at that size its CI is within ±1 point
    n = int(needed_games(30, 1000, 0.01))
    assert n < 2000
    lo, hi = wilson(round(0.03 * n), n)
    assert (hi - lo) / 2 <= 0.01 + 1e-4


def test_precision_targeted_round_robin(tmp_path):
    from balance.analysis import compare_command

    t, vnames, snames, runs = compare_command(
        "tosk",
        "base,force",
        "random,aggressor,turtle",
        200,
        SEED,
        None,
        1 << 15,
        tmp_path,
        precision=0.03,
        max_games=20000,
    )
    m = t["matrix"]
    half = (m["winrate_hi"] - m["winrate_lo"]) / 2
    assert (half <= 0.03).all()
    # lopsided matches stop early, even ones run on
    sizes = {k: r.games for k, r in runs.items()}
    assert min(sizes.values()) < max(sizes.values())
    assert all(n % 2 == 0 and n >= 200 for n in sizes.values())
    # variant differences pair the deals both runs played
    d = t["diffs"]
    assert len(d) == 3 and (d["n_pairs"] > 0).all()


def test_card_counter_kernel_matches_a_numpy_reference():
    """The numba card counters equal a plain numpy count over the same games."""
    rs = resolve_variant("tosk", "force")
    a, b = load_strategy("tosk", "aggressor"), load_strategy("tosk", "random")
    spec = RunSpec(rs, a, b, 600, SEED)
    out = tosk.simulate(rs.vector(), a.vector(), b.vector(), SEED, 0, 600)
    acc = runner._Accumulator(spec, tosk)
    acc.add(runner.count_batch(tosk, 0, out))
    pts = out["a_points"]
    bits = np.arange(tosk.N_CARDS)
    ref = np.zeros_like(acc.cards)
    for side, (seen, played, win_pts) in enumerate(
        ((out["seen_a"], out["played_a"], 2), (out["seen_b"], out["played_b"], 0))
    ):
        win, draw = (pts == win_pts)[:, None], (pts == 1)[:, None]
        s = ((seen[:, None] >> bits) & 1).astype(bool)
        p = ((played[:, None] >> bits) & 1).astype(bool)
        for j, m in enumerate((s, p, ~s)):
            ref[side, :, 3 * j] += m.sum(0)
            ref[side, :, 3 * j + 1] += (m & win).sum(0)
            ref[side, :, 3 * j + 2] += (m & draw).sum(0)
    assert ref.sum() > 0 and np.array_equal(ref, acc.cards)


def test_a_run_stored_in_the_earlier_layout_reads_back_the_same(tmp_path):
    """Runs were written through polars until issue 46, which stored every
    list column as a fixed-size list; they are now written with pyarrow as
    plain lists. A store of the earlier layout reads back the same run."""
    import pyarrow as pa

    spec = replace(_spec(), per_game=True)
    res = simulate_run(spec)
    res.manifest = runner.run_manifest(spec, 0.1, 1)
    new = runner._to_tables(res)
    row = new["run"]
    cols = {}
    for name in row.column_names:
        col = row.column(name).combine_chunks()
        if pa.types.is_large_list(col.type):  # the earlier layout: a fixed-size list
            col = pa.FixedSizeListArray.from_arrays(col.values, len(col.values))
        cols[name] = col
    old = pa.table(cols)
    assert any(pa.types.is_fixed_size_list(t) for t in old.schema.types)
    store = Store(tmp_path)
    store.save("tosk", spec.key, res.manifest, {"run": old, "games": new["games"]})
    (back,) = run_many([spec], store=store, progress=False)
    assert back.cached
    _assert_same(res, back)


def test_the_run_table_has_the_arrays_pyarrow_would_build():
    """The run's one-row table is built from buffers (:func:`runner._arrow`),
    not by ``pa.array``, which imports pandas: the same arrays, and a value
    its type cannot hold is refused as ``pa.array`` refuses it."""
    import pyarrow as pa

    for values, typ in (
        (np.array([0, 3, 255], np.uint8), pa.uint8()),
        (np.array([7, 0, 2**40], np.int64), pa.int64()),
        (np.array([1, 65535], np.int64), pa.uint16()),  # another dtype, every value fits
        ([3, 1, 4], pa.int64()),
        (np.zeros(0, np.int64), pa.int64()),
        ([], pa.uint32()),
        (["rounds", "draws", "ünï"], pa.large_string()),
        ([], pa.large_string()),
        ([True], pa.bool_()),
        ([False, True, True], pa.bool_()),
    ):
        got = runner._arrow(values, typ)
        want = pa.array(values, typ)
        assert got.type == typ and got.equals(want), (values, typ)
    for values, typ in (
        (np.array([256], np.int64), pa.uint8()),
        (np.array([-1], np.int64), pa.uint16()),
        (np.array([1.5]), pa.int64()),
    ):
        with pytest.raises(pa.ArrowInvalid):
            pa.array(values, typ)
        with pytest.raises(OverflowError):
            runner._arrow(values, typ)


def test_a_stored_runs_lists_read_as_pyarrow_reads_them_and_a_null_is_damage(tmp_path):
    """:func:`runner._numpy` reads every list column of a stored run as
    ``to_numpy`` does (a read-only view of the numbers, str objects), without
    pandas; a list that holds a null is damage, reported as such."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    res = simulate_run(_spec())
    res.manifest = runner.run_manifest(res.spec, 0.1, 1)
    row = runner._to_tables(res)["run"]
    stored = pq.ParquetFile(pa.BufferReader(store_mod.parquet_bytes(row))).read()
    for table in (row, stored):
        for name in table.column_names:
            col = table.column(name)
            if not pa.types.is_large_list(col.type):
                continue
            values = col.chunk(0).values
            got, want = runner._numpy(values), values.to_numpy(zero_copy_only=False)
            assert got.dtype == want.dtype and np.array_equal(got, want), name
            assert got.flags.writeable == want.flags.writeable, name
    cols = {name: row.column(name) for name in row.column_names}
    holed = pa.array([[1, None, 0]], pa.large_list(pa.uint8()))
    cols["pair_points"] = pa.chunked_array([holed])
    data = {"run": store_mod.parquet_bytes(pa.table(cols))}
    with pytest.raises(store_mod.Damaged, match="holds nulls"):
        runner._from_bytes(res.spec, res.manifest, data)


@pytest.mark.slow  # a process of its own: about 2 s
def test_playing_storing_and_reading_a_run_never_imports_pandas(tmp_path):
    """pyarrow's ``pa.array`` and ``to_numpy`` import pandas, 0.35-0.6 s of
    a small command's start; the runs go in and out of the store without
    them (issue 46, round 7)."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from balance.config import load_strategy, resolve_variant\n"
        "from balance.runner import RunSpec, run_many\n"
        "from balance.store import Store\n"
        "s = lambda n: load_strategy('tosk', n)\n"
        "spec = RunSpec(resolve_variant('tosk', 'base'), s('aggressor'), s('turtle'), 20, 5)\n"
        f"store = Store({str(tmp_path)!r})\n"
        "(played,) = run_many([spec], store=store, progress=False)\n"
        "(back,) = run_many([spec], store=store, progress=False)\n"
        "assert not played.cached and back.cached and back.a_wins == played.a_wins\n"
        "print(sorted(m for m in ('pandas', 'polars') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"
