"""A fifth game, added from a test: "High Card" (``tests/toygame/``) is
registered at run time and gets, touching no file in ``balance/``, the
conformance suite, every standard command, a study page and a report.

This is the promise of ``balance/games/``: a game's extras live in its own
home and the core reaches it only through the registry and the engine
contract (``kernels/contract.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from balance import pages, report, study
from balance.registry import GAMES, Game, register, unregister
from tests import ROOT, TESTS

HERE = TESTS / "toygame"
TOY = Game(
    name="toy",
    title="High Card",
    summary="the toy race of the tests.",
    engine="tests.toygame.engine",
    strategies="tests.toygame.strategy",
    rulings="X",
    config_dir=HERE / "configs",
    strategy_dir=HERE / "strategies",
    rulings_file=HERE / "RULINGS.md",
    order=5,
)


@pytest.fixture
def toy():
    register(TOY)
    try:
        yield TOY
    finally:
        unregister(TOY.name)


def test_the_toy_lives_outside_balance(toy):
    for module in (toy.engine_module(), toy.strategy_module()):
        assert (ROOT / "balance") not in Path(module.__file__).parents
    assert "toy" in GAMES and list(GAMES)[-1] == "toy"


def test_the_toy_passes_the_conformance_suite(toy):
    from tests.core import test_conformance as conformance

    assert conformance.CHECKS
    for check in conformance.CHECKS:
        check(toy)


def _run(args: list[str]):
    from balance.cli.root import make_app

    res = CliRunner().invoke(make_app(), args, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res.output


@pytest.mark.slow
def test_every_standard_command_plays_the_toy(toy, tmp_path):
    store = str(tmp_path / "results")
    out = _run(["toy", "simulate", "-n", "40", "--a", "bold", "--b", "never", "--results", store])
    assert "High Card base: bold (A) vs never (B), 40 games" in out
    out = _run(["toy", "compare", "--variants", "base,long", "-n", "40", "--results", store])
    assert "long: win rate of row vs column" in out and "cautious" in out
    out = _run(["toy", "trace", "--a", "bold", "--b", "cautious"])
    assert "round 1: seat 1 (bold) shows" in out
    assert "A longer race" in _run(["toy", "variants"])
    assert "Boosts only the smallest cards" in _run(["toy", "strategies"])
    assert "boost_below" in _run(["toy", "features"])
    assert "toy" in _run(["bench", "--help"])
    assert "High Card: the toy race" in _run(["--help"])


@pytest.mark.slow  # a study and a report, about 5 s
def test_the_toy_gets_a_study_page_and_a_report(toy, tmp_path):
    results = tmp_path / "results"
    page = study.study_game("toy", tmp_path / "reports", 1.0, 1, str(results))
    index = report.write_index(tmp_path / "reports", [page])
    html = index.read_text(encoding="utf-8")
    assert "High Card" in html
    game_page = (tmp_path / "reports" / "toy.html").read_text(encoding="utf-8")
    assert 'href="toy.html"' in html
    assert "X1 Boost" in game_page  # the toy's own rulings travel with its runs
    path, skipped = pages.report_from_runs(
        [results / "toy"], tmp_path / "report.html", str(results), None
    )
    assert not skipped and "bold" in Path(path).read_text(encoding="utf-8")
