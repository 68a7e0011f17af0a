"""Experiments in the store, and reports that never pool them silently.

Each command that plays games records its experiment (command, plan, run
keys) in ``<store>/<game>/_experiments``; ``balance report`` builds a section
per experiment, pools only when asked (and then says so), never puts two
designs under one label, and filters with ``--where``.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace

import pandas as pd
import pytest

from balance import analysis, config, experiments, pages, runner
from balance.errors import UserError
from balance.store import Store

GAME = "tosk"
STRATS = "aggressor,turtle,balanced"


@pytest.fixture(autouse=True)
def no_charts(monkeypatch):
    """These tests are about which runs go where: the charts (drawn and tested
    in test_charts_report) are left out, which makes a page 20× faster."""
    monkeypatch.setattr(pages.charts, "all_charts", lambda *a, **k: {})


def _compare(results, n: int, variants: str = "base,force"):
    return analysis.compare_command(GAME, variants, STRATS, n, 1, 1, 1 << 15, str(results))


@pytest.fixture(scope="module")
def two_compares(tmp_path_factory):
    """A store holding two compares of the same strategies, -n 200 and -n 400."""
    root = tmp_path_factory.mktemp("exp") / "results"
    small = _compare(root, 200)
    large = _compare(root, 400)
    return root, small, large


def _sections(paths, where=None, pool=False):
    runs, _, where_from = pages._load_runs(paths)
    return pages._sections(runs, where_from, pages.parse_where(where), pool)[0]


@pytest.mark.slow
def test_each_compare_records_its_experiment(two_compares):
    root, small, large = two_compares
    recs, bad = experiments.read_folder(root / GAME)
    assert not bad and len(recs) == 2
    by_n = {rec["plan"]["n"]: rec for rec in recs}
    assert set(by_n) == {200, 400}
    for n, res in ((200, small), (400, large)):
        rec = by_n[n]
        assert rec["command"] == "compare" and rec["game"] == GAME
        assert sorted(rec["runs"]) == sorted(r.key for r in res[3].values())
        assert [v["name"] for v in rec["plan"]["variants"]] == ["base", "force"]
        assert [s["name"] for s in rec["plan"]["strategies"]] == STRATS.split(",")
    # the same command again is the same experiment: its record is rewritten, not doubled
    _compare(root, 200)
    assert len(experiments.read_folder(root / GAME)[0]) == 2


@pytest.mark.slow
def test_the_report_keeps_two_compares_apart_and_each_matches_its_compare(two_compares, tmp_path):
    root, small, large = two_compares
    sections = _sections([root / GAME])
    assert len(sections) == 2
    for sec, (t, _, _, runs) in zip(
        sorted(sections, key=lambda s: s.records[0]["plan"]["n"]), (small, large), strict=True
    ):
        assert {r.key for r in sec.runs} == {r.key for r in runs.values()}
        page = pages.section_page(sec)
        cols = ["variant", "strategy", "winrate", "winrate_lo", "winrate_hi", "games"]
        got = page["tables"]["strategies"][cols].sort_values(["variant", "strategy"])
        want = t["strategies"][cols].sort_values(["variant", "strategy"])
        pd.testing.assert_frame_equal(got.reset_index(drop=True), want.reset_index(drop=True))
        d_got = page["tables"]["diffs"].set_index(["variant", "strategy"])["diff"].sort_index()
        d_want = t["diffs"].set_index(["variant", "strategy"])["diff"].sort_index()
        pd.testing.assert_series_equal(d_got, d_want)
        assert any(sec.records[0]["id"] in line for line in page["summary"])
    path, skipped = pages.report_from_runs([root / GAME], tmp_path / "r.html", str(root))
    html = path.read_text(encoding="utf-8")
    assert not skipped
    assert html.count("Tosk: compare ") >= 2  # one section per experiment
    assert "pools" not in html


def test_pooling_says_which_experiments_it_pools(two_compares, tmp_path):
    root, _, _ = two_compares
    (sec,) = _sections([root / GAME], pool=True)
    assert len(sec.records) == 2
    page = pages.section_page(sec, pool=True)
    assert "pools the runs of 2 experiments" in page["summary"][0]
    assert all(rec["id"][:12] in page["summary"][0] for rec in sec.records)
    # run folders named one by one pool too, and say so when they span experiments
    keys = [rec["runs"][0] for rec in sec.records]
    path, _ = pages.report_from_runs([root / GAME / k for k in keys], tmp_path / "p.html", root)
    assert "pools the runs of 2 experiments" in path.read_text(encoding="utf-8")


def test_where_filters_runs_and_experiments(two_compares):
    root, small, _ = two_compares
    sections = _sections([root / GAME], where=["variant=base", "strategy=turtle"])
    assert len(sections) == 2
    for sec in sections:
        assert {r.spec.ruleset.name for r in sec.runs} == {"base"}
        assert all("turtle" in (r.spec.a.name, r.spec.b.name) for r in sec.runs)
        assert len(sec.runs) == 2
    eid = next(
        rec["id"] for rec in experiments.read_folder(root / GAME)[0] if rec["plan"]["n"] == 200
    )
    (one,) = _sections([root / GAME], where=[f"experiment={eid[:6]}"])
    assert {r.key for r in one.runs} == {r.key for r in small[3].values()}
    assert len(_sections([root / GAME], where=["command=compare", "seed=1"])) == 2
    assert len(_sections([root / GAME], where=["command=tosk compare"])) == 2
    with pytest.raises(UserError, match="no stored run matches --where command=sprt"):
        _sections([root / GAME], where=["command=sprt"])


@pytest.mark.parametrize(
    ("item", "msg"),
    [
        ("colour=red", "unknown key 'colour'; the keys are game, variant, strategy"),
        ("variant", "takes key=value"),
        ("seed=one", "whole number"),
    ],
)
def test_a_bad_where_is_one_line(item, msg):
    with pytest.raises(UserError, match=msg):
        pages.parse_where([item])


def test_runs_without_a_record_are_grouped_by_their_command(two_compares, tmp_path):
    root, _, _ = two_compares
    old = tmp_path / "results"
    shutil.copytree(root, old)
    shutil.rmtree(old / GAME / experiments.FOLDER)
    sections = _sections([old / GAME])
    # both compares ran in this test process: one command line, so one group;
    # within it each matchup shows one run (the larger), as before the records
    assert len(sections) == 1 and sections[0].records[0].get("legacy")
    page = pages.section_page(sections[0])
    assert page["summary"][0].startswith("Runs without an experiment record, made by `")
    assert "runs without an experiment record" in page["name"]


def _other_rules(rs):
    return replace(rs, rules={**rs.rules, "capacity": rs.rules["capacity"] + 2})


def test_one_variant_label_with_two_rule_sets_is_never_one_cell(tmp_path):
    results = tmp_path / "results"
    rs = config.resolve_variant(GAME, "base")
    a, b = config.load_strategy(GAME, "aggressor"), config.load_strategy(GAME, "turtle")
    store = Store(results)
    keys = []
    for rules in (rs, _other_rules(rs)):  # both called "base"
        (res,) = runner.run_many([runner.RunSpec(rules, a, b, 200, 1)], store=store, threads=1)
        plan = {"variant": experiments.ruleset_plan(rules), "n": 200}
        experiments.record(results, GAME, "simulate", plan, [res.key])
        keys.append(res.key)
    # apart: each experiment its own section, under its own label
    assert len(_sections([results / GAME])) == 2
    # pooled: one section, the two rule sets under two labels, each run kept whole
    (sec,) = _sections([results / GAME], pool=True)
    labels = {r.spec.ruleset.name for r in sec.runs}
    assert len(labels) == 2 and all(x.startswith("base (rules ") for x in labels)
    assert {r.key for r in sec.runs} == set(keys)  # the stored keys stay
    page = pages.section_page(sec, pool=True)
    assert set(page["tables"]["strategies"]["variant"]) == labels
    assert any("name" in n and "different rules" in n for n in page["summary"])


def test_one_strategy_name_with_two_specs_is_refused_when_pooled(tmp_path):
    results = tmp_path / "results"
    rs = config.resolve_variant(GAME, "base")
    a, b = config.load_strategy(GAME, "aggressor"), config.load_strategy(GAME, "turtle")
    spec = json.loads(json.dumps(b.spec))
    spec["play"]["def"] = -spec["play"]["def"]
    b2 = replace(b, spec=spec)  # still called "turtle"
    store = Store(results)
    for side in (b, b2):
        (res,) = runner.run_many([runner.RunSpec(rs, a, side, 200, 1)], store=store, threads=1)
        plan = {"b": experiments.strategy_plan(side), "n": 200}
        experiments.record(results, GAME, "simulate", plan, [res.key])
    assert len(_sections([results / GAME])) == 2  # apart: fine
    with pytest.raises(UserError, match="cannot pool: strategy 'turtle' has 2 different specs"):
        pages.report_from_runs([results / GAME], tmp_path / "x.html", results, pool=True)
    assert not (tmp_path / "x.html").exists()


def _list_rows(paths) -> list[dict]:
    return sorted(pages.list_experiments(paths), key=lambda r: r["id"])


@pytest.mark.slow
def test_the_list_counts_what_a_full_read_counts_and_leaves_damaged_files_out(
    two_compares, tmp_path
):
    """``report --list`` checks each run's files against their checksums
    without parsing them: the rows are the ones a full read gives (runs and
    games per experiment), and a run whose table is truncated or edited is
    not counted, as the report leaves it out."""
    root, _, _ = two_compares
    store = tmp_path / "results"
    shutil.copytree(root, store)

    def full_rows():  # the experiments counted from every run read in full
        runs, _, where_from = pages._load_runs([store])
        sections, _ = pages.experiment_sections(runs, where_from)
        return sorted(
            ({"id": s.records[0]["id"], "runs": len(s.runs), "games": s.games} for s in sections),
            key=lambda r: r["id"],
        )

    def listed():
        return [
            {k: r[k] for k in ("id", "runs", "games")} for r in _list_rows([store]) if r["runs"]
        ]

    assert listed() == full_rows() and len(full_rows()) == 2
    runs_before = {r["id"]: r["runs"] for r in listed()}
    # one run's table truncated, another's edited in place (same size): both fail
    # their checksums, so neither is counted, by the list or by a full read
    folders = sorted(p for p in (store / GAME).iterdir() if len(p.name) == 16)
    for folder, damage in zip(folders[:2], ("truncate", "edit"), strict=True):
        table = folder / "run.parquet"
        data = table.read_bytes()
        if damage == "truncate":
            table.write_bytes(data[: len(data) // 2])
        else:
            table.write_bytes(data[:-20] + bytes(b ^ 0xFF for b in data[-20:]))
    after = listed()
    assert after == full_rows()
    assert sum(r["runs"] for r in after) < sum(runs_before.values())
    assert sum(runs_before.values()) - sum(r["runs"] for r in after) >= 2
