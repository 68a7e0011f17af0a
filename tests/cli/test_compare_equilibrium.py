"""``balance <game> compare --field equilibrium`` on the toy game (High Card,
``tests/toygame``, registered from the test as in ``tests/core/test_toy_game.py``):
each ruleset's own equilibrium, the per-property lines against base, one line
per ruleset, ``--json``, a resumed run, and a bad ``--field`` in one line."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

SMALL = ["--iterations", "2", "--budget", "4", "--restarts", "2", "--seed", "5"]


def _invoke(args: list[str]):
    from balance.cli.root import make_app

    return CliRunner().invoke(make_app(), args)


@pytest.mark.slow
def test_compare_at_equilibrium_on_the_toy(toy, tmp_path):
    store = str(tmp_path / "results")
    args = ["toy", "compare", "--field", "equilibrium", "--variants", "base,long", *SMALL]
    res = _invoke([*args, "--results", store])
    assert res.exit_code == 0, res.output
    out = res.output
    assert "long vs base under equilibrium play (each ruleset's own equilibrium" in out
    for label in (
        "seat fairness",
        "game length",
        "draws",
        "round-cap share",
        "support size",
        "effective strategies",
        "single-strategy equilibrium",
        "exploitability reached",
    ):
        assert label in out
    line = next(x for x in out.splitlines() if x.startswith("long vs base under equilibrium play:"))
    assert "closer on" in line and "further on" in line and "no change shown on" in line
    # the toy's `long` variant: "A longer race: 8 points to win" (its variant file;
    # RULINGS X2: "the first to `target` points wins"): its games last longer at
    # equilibrium too, shown by the interval, both lengths within the target 3..40
    assert "changed, both within target on game length" in line
    assert "[1/2] base:" in out and "[2/2] long:" in out  # progress, elapsed, ETA
    assert "about" in out.split("[1/2] base:")[1].splitlines()[0]

    again = _invoke([*args, "--results", store, "--json"])
    assert again.exit_code == 0, again.output
    text = again.stdout
    data = json.loads(text[text.index("{") :])
    assert [s["rules"] for s in data["rulesets"]] == ["base", "long"]
    assert data["base"] == "base"
    (cmp,) = data["comparisons"]
    assert cmp["rules"] == "long" and cmp["line"] == line
    props = [r["property"] for r in cmp["rows"]]
    assert props == [
        "seat_fairness",
        "length",
        "draws",
        "round_cap",
        "support",
        "effective",
        "dominant",
        "exploitability",
    ]
    length = cmp["rows"][1]
    assert length["diff_lo"] > 0 and length["value_status"] == "meets"
    # resumable: the second run read every run back from the store
    assert "nothing simulated" in again.output


def test_a_bad_field_is_one_line(toy, tmp_path):
    from balance.errors import UserError

    res = _invoke(["toy", "compare", "--field", "nash", "--results", str(tmp_path)])
    assert isinstance(res.exception, UserError)  # main() prints it as one line, exit 2
    assert str(res.exception) == "--field must be one of scripts, equilibrium; got 'nash'"
    assert not (tmp_path / "toy").exists()  # refused before anything is written


@pytest.mark.slow
def test_a_bad_field_from_the_installed_command(tmp_path):
    from tests.cli.test_cli import run_cli

    res = run_cli(["tosk", "compare", "--field", "nash"], tmp_path)
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.strip() == "error: --field must be one of scripts, equilibrium; got 'nash'"
    assert not (tmp_path / "results").exists()


def test_options_of_the_other_field_are_refused(toy, tmp_path):
    res = _invoke(["toy", "compare", "--epsilon", "0.01", "--results", str(tmp_path)])
    assert str(res.exception) == "--epsilon applies only with --field equilibrium"
    res = _invoke(
        ["toy", "compare", "--field", "equilibrium", "-n", "40", "--results", str(tmp_path)]
    )
    assert str(res.exception).startswith("-n applies to --field scripts only")


def test_the_warm_start_adds_the_shipped_population(toy, tmp_path, monkeypatch):
    from balance import analysis
    from balance import equilibrium as eqm

    assert [s.name for s in analysis.equilibrium_start("toy")] == ["bold", "cautious", "never"]
    folder = tmp_path / "equilibrium"
    folder.mkdir()
    (folder / "01-bold.toml").write_text('name = "bold"\nboost_below = 5\n')
    (folder / "02-eq1.toml").write_text('name = "eq1"\nboost_below = 3\n')
    (folder / "population.toml").write_text(
        'game = "toy"\nrules = "base"\nepsilon = 0.02\nseed = 1\n'
        '[[member]]\nfile = "01-bold.toml"\nname = "bold"\nweight = 0.5\n'
        '[[member]]\nfile = "02-eq1.toml"\nname = "eq1"\nweight = 0.5\n'
    )
    monkeypatch.setattr(eqm, "default_folder", lambda game: folder)
    start = analysis.equilibrium_start("toy")
    # the study's field first; a member it already names (bold) is left out
    assert [s.name for s in start] == ["bold", "cautious", "never", "eq1"]
    assert start[0].spec["boost_below"] == 6 and start[3].spec["boost_below"] == 3


def test_base_is_the_ruleset_named_base_else_the_first():
    from balance import analysis

    assert analysis.base_index(["force", "base"]) == 1
    assert analysis.base_index(["force", "momentum"]) == 0
