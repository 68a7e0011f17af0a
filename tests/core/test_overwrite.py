"""Nothing overwritten silently (issue 45, item 3): output files are named per
experiment, a file another experiment wrote is replaced only with ``--force``,
and every folder the commands write by default is ignored by git."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from balance import paths, sweep
from balance.errors import UserError
from tests.cli.test_tune_cli import cli

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "path",
    [
        "repairs/tosk-repair-0123abcd-1.toml",
        "reports/trisk-power.html",
        "reports/tosk-sweep-capacity-9-15.svg",
        "results/x/manifest.json",
        "tuned/tosk-mine.toml",
        "charts/seat.svg",
        "reports/.balance-writers.json",
    ],
)
def test_generated_folders_are_ignored_by_git(path):
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    r = subprocess.run(["git", "check-ignore", "-q", path], cwd=ROOT)
    assert r.returncode == 0, f"{path} is not ignored by .gitignore"


def test_the_default_folders_are_the_ignored_ones():
    # the defaults the commands declare: a new default folder must be ignored too
    text = (ROOT / ".gitignore").read_text(encoding="utf-8").split()
    for folder in ("results/", "repairs/", "tuned/", "charts/"):
        assert folder in text
    assert "reports/*" in text


def test_another_experiments_file_is_refused_in_one_line(tmp_path):
    page = tmp_path / "reports" / "page.html"
    page.parent.mkdir()
    page.write_text("first")
    paths.record_written(page, "aaaa", "balance tosk repair --target draws<=0.02")
    # the same experiment replaces its own file; a file with no record is anyone's
    assert paths.check_replace(page, "aaaa", "--page") == page
    assert paths.check_replace(tmp_path / "reports" / "new.html", "bbbb", "--page")
    with pytest.raises(UserError) as e:
        paths.check_replace(page, "bbbb", "--page")
    msg = str(e.value)
    assert "\n" not in msg and str(page) in msg
    assert "balance tosk repair --target draws<=0.02" in msg  # which experiment wrote it
    assert "--page <other>" in msg and "--force" in msg  # the two ways out
    assert paths.check_replace(page, "bbbb", "--page", force=True) == page
    # the ledger is per folder and keeps every file's writer
    (tmp_path / "reports" / "b.svg").write_text("<svg/>")
    paths.record_written(tmp_path / "reports" / "b.svg", "bbbb", "sweep")
    assert paths.written_by(page)["experiment"] == "aaaa"
    assert paths.written_by(tmp_path / "reports" / "b.svg")["experiment"] == "bbbb"
    page.unlink()
    assert paths.written_by(page) is None  # a removed file is no one's


def test_sweep_charts_are_named_by_keys_and_ranges():
    a = sweep.grid("tosk", "base", ["capacity=9..15"])[0]
    b = sweep.grid("tosk", "base", ["capacity=9..11"])[0]
    c = sweep.grid("tosk", "base", ["heal_per_card=1..2"])[0]
    names = {sweep.chart_name(x) for x in (a, b, c)}
    assert len(names) == 3
    assert sweep.chart_name(a) == "capacity-9-15"


@pytest.mark.slow
def test_two_sweeps_of_different_keys_write_two_charts(tmp_path):
    common = ["--strategies", "balanced,turtle", "-n", 20, "--json"]
    one = cli(["tosk", "sweep", "--rule", "capacity=9,10", *common], tmp_path)
    assert one.returncode == 0, one.stderr
    two = cli(["tosk", "sweep", "--rule", "heal_per_card=1,2", *common], tmp_path)
    assert two.returncode == 0, two.stderr
    c1, c2 = json.loads(one.stdout)["chart"], json.loads(two.stdout)["chart"]
    assert c1 != c2 and (tmp_path / c1).is_file() and (tmp_path / c2).is_file()
    # the same keys and ranges on another seed is another experiment: refused, then forced
    first = (tmp_path / c1).read_bytes()
    again = cli(["tosk", "sweep", "--rule", "capacity=9,10", "--seed", 2, *common], tmp_path)
    assert again.returncode != 0 and "--force" in again.stderr
    assert (tmp_path / c1).read_bytes() == first
    forced = cli(
        ["tosk", "sweep", "--rule", "capacity=9,10", "--seed", 2, "--force", *common], tmp_path
    )
    assert forced.returncode == 0, forced.stderr


@pytest.mark.slow
def test_a_few_cards_never_touch_the_study_power_page(tmp_path):
    # the study's page, as `balance study` leaves it (its ledger says "study")
    study_page = tmp_path / "reports" / "trisk-power.html"
    study_page.parent.mkdir()
    study_page.write_text("<html>the study's equal-power test</html>")
    paths.record_written(study_page, paths.STUDY, "balance study")
    tiny = ["trisk", "power", "--cards", "Bear", "--scale", "0.05", "--no-regression"]
    # named at it, the command is refused in one line before any game
    r = cli([*tiny, "--out", "reports/trisk-power.html"], tmp_path)
    assert r.returncode != 0
    line = r.stderr.strip().splitlines()[-1]
    assert "reports/trisk-power.html' was written by another experiment (balance study)" in line
    assert "--out <other>" in line and "--force" in line
    # by default it writes a page of its own
    p = cli([*tiny, "--json"], tmp_path)
    assert p.returncode == 0, p.stderr
    page = json.loads(p.stdout)["page"]
    assert page.startswith("reports/trisk-power-") and (tmp_path / page).is_file()
    assert study_page.read_text() == "<html>the study's equal-power test</html>"


def test_a_tuned_file_of_other_settings_is_refused(tmp_path):
    # a strategy file another tune wrote (other settings): refused before any game
    mine = tmp_path / "tuned" / "tosk-mine.toml"
    mine.parent.mkdir()
    mine.write_text("# another tune's strategy\n")
    paths.record_written(mine, "another", "balance tosk tune --name mine --seed 9")
    r = cli(["tosk", "tune", "--name", "mine", "--budget", 2, "--games", 10], tmp_path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    line = r.stderr.strip().splitlines()[-1]
    assert "tuned/tosk-mine.toml' was written by another experiment" in line
    assert "--out <other>" in line and "--force" in line
    assert mine.read_text() == "# another tune's strategy\n"
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").rglob("*.parquet"))


def test_a_report_of_chosen_runs_never_replaces_a_study_page(tmp_path):
    page = tmp_path / "reports" / "tosk.html"
    page.parent.mkdir()
    page.write_text("<html>the study's Tosk page</html>")
    paths.record_written(page, paths.STUDY, "balance study")
    (tmp_path / "results" / "tosk").mkdir(parents=True)
    r = cli(["report", "results/tosk", "-o", "reports/tosk.html"], tmp_path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    line = r.stderr.strip().splitlines()[-1]
    assert "reports/tosk.html' was written by another experiment (balance study)" in line
    assert page.read_text() == "<html>the study's Tosk page</html>"


def test_repairs_of_two_plans_name_their_files_apart(tmp_path):
    from balance import repair

    def plan(target):
        return repair.plan_from(
            "tosk",
            {"variant": "potent-healing", "targets": [target], "moves": ["heal_per_card=1..2"]},
            "balanced,turtle",
        )

    a, b = plan("draws<=0.02"), plan("draws<=0.03")
    assert repair.variant_path(tmp_path, a, 1) == repair.variant_path(
        tmp_path, plan("draws<=2%"), 1
    )
    assert repair.variant_path(tmp_path, a, 1) != repair.variant_path(tmp_path, b, 1)
    assert repair.variant_path(tmp_path, a, 1).name.startswith("tosk-repair-")


@pytest.mark.slow  # a process per command, refused before any game
@pytest.mark.parametrize(
    "args, target, option",
    [
        (
            ["tosk", "equilibrium", "--out", "pop", "--iterations", 1],
            "pop/population.toml",
            "--out",
        ),
        (
            ["tosk", "exploit", "turtle", "--budget", 2, "--games", 10],
            "tuned/tosk-exploit-turtle.toml",
            "--out",
        ),
        (
            ["tosk", "compare", "--variants", "base", "-n", 10, "--charts", "charts"],
            "charts/overview.svg",
            "--charts",
        ),
        (
            [
                "suits",
                "tasks",
                "-n",
                100,
                "--characters",
                10,
                "--page",
                "reports/suits-analysis.html",
            ],
            "reports/suits-analysis.html",
            "--page",
        ),
        (
            ["suits", "struggle", "-n", 10, "--page", "reports/suits-analysis.html"],
            "reports/suits-analysis.html",
            "--page",
        ),
    ],
    ids=[
        "equilibrium --out",
        "exploit --out",
        "compare --charts",
        "suits tasks --page",
        "suits struggle --page",
    ],
)
def test_every_other_written_file_is_refused_when_another_experiment_wrote_it(
    tmp_path, args, target, option
):
    # issue 45: "every written file (repair variants, pages, charts, tuned files) is
    # named per experiment or refuses to replace another experiment's file without --force"
    mine = tmp_path / target
    mine.parent.mkdir(parents=True)
    mine.write_text("another experiment's output\n")
    paths.record_written(mine, paths.STUDY, "balance study")
    r = cli(args, tmp_path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    line = r.stderr.strip().splitlines()[-1]
    assert f"{target}' was written by another experiment (balance study)" in line
    assert f"{option} <other>" in line and "--force" in line
    assert mine.read_text() == "another experiment's output\n"
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").rglob("*.parquet"))


@pytest.mark.slow  # plays a few games and writes the charts twice
def test_compare_charts_of_the_same_comparison_replace_their_own(tmp_path):
    args = ["tosk", "compare", "--variants", "base", "--strategies", "random,turtle", "-n", 20]
    first = cli([*args, "--charts", "charts"], tmp_path)
    assert first.returncode == 0, first.stderr
    written = paths.written_by(tmp_path / "charts" / "overview.svg")
    assert written is not None and "compare" in written["command"]
    again = cli([*args, "--charts", "charts"], tmp_path)  # the same experiment: its own files
    assert again.returncode == 0, again.stderr
    other = cli([*args, "--seed", 2, "--charts", "charts"], tmp_path)
    assert other.returncode == 2 and "--force" in other.stderr.strip().splitlines()[-1]
    forced = cli([*args, "--seed", 2, "--charts", "charts", "--force"], tmp_path)
    assert forced.returncode == 0, forced.stderr
