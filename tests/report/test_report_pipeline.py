"""From stored runs to report pages: `balance report`, the study's record,
precision-targeted simulate and the sequential test, through the installed
command and in-process."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from balance import pages, runner, stats, study
from balance.errors import UserError
from balance.games.trisk import power as tp

BALANCE = Path(sys.executable).with_name("balance")


def run(*args, env=None):
    return subprocess.run(
        [str(BALANCE), *map(str, args)],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )


def ok(*args, env=None):
    p = run(*args, env=env)
    assert p.returncode == 0, p.stderr
    return p.stdout


def one_line_error(p) -> str:
    assert p.returncode == 2, (p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), p.stderr
    assert "Traceback" not in p.stderr
    return lines[0]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    d = tmp_path_factory.mktemp("report")
    res = d / "results"
    # a pilot and its extension: the report keeps the larger run of each match
    for n in (200, 400):
        ok(
            "tosk",
            "compare",
            "--variants",
            "base,force",
            "--strategies",
            "random,aggressor,balanced",
            "-n",
            n,
            "--seed",
            3,
            "--results",
            res,
        )
    return d


@pytest.fixture(scope="module")
def page(store):
    out = store / "page.html"
    text = ok("report", store / "results" / "tosk", "-o", out, "--results", store / "results")
    assert f"report: {out}" in text
    return out.read_text(encoding="utf-8")


@pytest.mark.slow
def test_report_from_runs_has_every_section(page):
    for heading in (
        "Summary",
        "Game shape (Browne / Ludii metrics)",
        "Strategies, per variant",
        "Ratings and the meta-game",
        "What each variant changes, compared with base",
        "Methods",
        "Rulings in force",
        "Reproducibility",
    ):
        assert heading in page, heading
    for method in (
        "Wilson",
        "Pentanomial",
        "Holm",
        "Bradley–Terry",
        "Max-entropy Nash",
        "Lead changes",
        "paired SE / unpaired SE",
    ):
        assert method.lower() in page.lower(), method
    assert page.count("<svg") >= 5  # overview, rounds, diffs, a matrix and ratings per variant
    assert "T3" in page  # rulings in force


def test_report_keeps_the_largest_run_of_each_match(store):
    runs, skipped = pages.load_runs([store / "results" / "tosk"])
    assert not skipped
    assert len(runs) == 12  # 2 variants x 3 pairs x 2 sizes
    group = pages.organise(runs)["tosk"]
    assert len(group["matches"]) == 6
    assert {r.games for r in group["matches"].values()} == {400}


def test_report_numbers_match_the_runs(store, page):
    runs, _ = pages.load_runs([store / "results" / "tosk"])
    r = next(
        r
        for r in runs
        if r.games == 400
        and r.spec.ruleset.name == "base"
        and r.spec.a.name == "aggressor"
        and r.spec.b.name == "balanced"
    )
    # the matrix cell shows balanced's win rate vs aggressor with its deal-level
    # CI half-width (a deal's two games are not independent), here unlike the
    # plain Wilson one on the games
    w = stats.deal_wilson(
        stats.deal_outcomes(stats.pentanomial_counts(r.pair_points), r.draws)["b_wins"]
    )
    lo, hi = stats.wilson(r.b_wins, r.games)
    cell = f"{100 * r.b_wins / r.games:.1f}% ±{100 * (w['hi'] - w['lo']) / 2:.1f}"
    assert cell != f"{100 * r.b_wins / r.games:.1f}% ±{100 * (hi - lo) / 2:.1f}"
    assert cell in page
    assert f"n={r.games:,}" in page
    assert r.key in page  # each run's config hash is listed for reproducibility


def test_report_never_simulates(store, tmp_path, monkeypatch):
    def boom(*a, **k):
        raise AssertionError("the report simulated a game")

    monkeypatch.setattr(runner, "play_batch", boom)  # every game is played there
    path, skipped = pages.report_from_runs(
        [store / "results"], tmp_path / "r.html", store / "results"
    )
    assert path.is_file() and not skipped


@pytest.mark.slow
def test_report_bad_input_is_one_line_and_writes_nothing(store, tmp_path):
    out = tmp_path / "x.html"
    msg = one_line_error(run("report", tmp_path / "missing", "-o", out))
    assert "no such run or folder" in msg
    msg = one_line_error(run("report", tmp_path, "-o", out))
    assert "holds no stored runs" in msg
    msg = one_line_error(run("report", store / "results" / "tosk", "-o", tmp_path / "x.txt"))
    assert ".html" in msg
    msg = one_line_error(run("report", "-o", tmp_path / "folder", "--results", tmp_path / "empty"))
    assert "balance study" in msg
    assert not out.exists() and not (tmp_path / "folder").exists()


def test_store_only_refuses_to_simulate(store):
    from balance import config
    from balance.store import Store

    spec = runner.RunSpec(
        config.resolve_variant("tosk", "momentum"),
        config.load_strategy("tosk", "random"),
        config.load_strategy("tosk", "turtle"),
        100,
        3,
    )
    with pytest.raises(UserError, match="not in the store"):
        runner.run_many([spec], store=Store(store / "results"), store_only=True)


TINY_PLAN = {
    "variants": "base,force",
    "strategies": ["random", "aggressor", "balanced"],
    "precision": 0.2,
    "pilot_games": 100,
    "max_games_per_pair": 200,
    "seed": 11,
    "cards_strategy": "balanced",
    "cards_opponent": "balanced",
    "cards_games": 100,
}
FOUR = ("Stag", "Fox", "Dragon", "Curse of Venom")  # two Creations, an Upgrade, a Sorcery
TINY_PLANS = {
    "tosk": TINY_PLAN,
    "clash": {
        "variants": "base",
        "strategies": ["random", "counter", "aggressive"],
        "precision": 0.2,
        "pilot_games": 100,
        "max_games_per_pair": 200,
        "seed": 11,
        "loadout_strategy": "counter",
        # 200, not fewer: on 20-game cells the Nash averages' bootstrap takes
        # about 40 s a table (the games cost about the same either way)
        "loadout_games": 200,
    },
    "trisk": {
        "variants": "base",
        "strategies": ["random", "rush", "tempo"],
        "precision": 0.2,
        "pilot_games": 100,
        "max_games_per_pair": 200,
        "seed": 11,
        "power_scale": 0.01,
    },
    "suits": {
        "variants": "base",
        "strategies": ["random", "high-defend-hand", "low-absorb-deck"],
        "precision": 0.2,
        "pilot_games": 100,
        "max_games_per_pair": 200,
        "seed": 11,
        "tasks_hands": 1000,
        "tasks_characters": 200,
        "struggle_games": 200,
    },
}


def _population(folder: Path, game: str, weights: dict) -> Path:
    """A population file over named strategies (copies of their files), in
    the format ``balance.equilibrium.write_population`` writes."""
    from tests import ROOT

    folder.mkdir(parents=True)
    lines = [f'game = "{game}"', 'rules = "base"', "epsilon = 0.02", "seed = 1"]
    for i, (name, w) in enumerate(weights.items(), 1):
        f = f"{i:02d}-{name}.toml"
        body = (ROOT / "strategies" / game / f"{name}.toml").read_text(encoding="utf-8")
        (folder / f).write_text(f"name = {json.dumps(name)}\n{body}", encoding="utf-8")
        lines += ["", "[[member]]", f'file = "{f}"', f'name = "{name}"', f"weight = {w!r}"]
    (folder / "population.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def _strip_dates(html: str) -> str:
    html = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\+00:00|Z)?", "DATE", html)
    html = re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", "DATE", html)
    return re.sub(r"<dt>Command</dt><dd><code>[^<]*</code>", "", html)


@pytest.mark.slow
def test_study_record_rebuilds_the_same_page(tmp_path, monkeypatch):
    # Tosk's worked repair example, small: a plan file like configs/tosk/repair.toml
    repair_plan = tmp_path / "repair.toml"
    repair_plan.write_text(
        'description = "Tosk: a small repair"\nvariant = "potent-healing"\n'
        'targets = ["draws <= 0.02"]\nmoves = ["heal_per_card=1..2"]\n'
        'strategies = "balanced,turtle"\ntrials = 2\ngames = 100\nverify_games = 400\ntop = 1\n'
    )
    # Tosk ships a small equilibrium population (two named strategies, mixed
    # half and half); the other games ship none, and their pages say so
    pop = _population(tmp_path / "pop" / "tosk", "tosk", {"balanced": 0.5, "turtle": 0.5})
    monkeypatch.setattr(
        study, "population_folder", lambda g: pop if g == "tosk" else tmp_path / "none" / g
    )
    eq_small = {
        "games": 100,
        "budget": 2,
        "search_games": 50,
        "screen_games": 50,
        "confirm_games": 200,
        "play_games": 200,
    }
    tosk_plan = {**TINY_PLAN, "repair": str(repair_plan), "equilibrium": eq_small}
    plans = {**TINY_PLANS, "tosk": tosk_plan}
    monkeypatch.setattr(study, "load_study", lambda game: dict(plans[game]))
    # Trisk's equal-power test on four of its cards: its page, tables and
    # verdicts are built as for all 44, in a tenth of the runs (at this scale a
    # run's cost is the run, not its games: the whole test took 97 s with all)
    plan_of = tp.load_plan
    monkeypatch.setattr(tp, "load_plan", lambda path=None, **kw: plan_of(path, cards=FOUR, **kw))
    res = tmp_path / "results"
    # one process: the plans and the population above are patched into this one
    index = study.run_study(tmp_path / "study", results=res, processes=1)
    assert index.name == "index.html"
    assert sorted(p.name for p in index.parent.glob("*.html")) == [
        "clash.html",
        "index.html",
        "suits-analysis.html",
        "suits.html",
        "tosk-repair.html",
        "tosk.html",
        "trisk-power.html",
        "trisk.html",
    ]
    front = index.read_text(encoding="utf-8")
    assert 'href="tosk.html"' in front and 'href="clash.html"' in front
    assert 'href="trisk.html"' in front and 'href="trisk-power.html"' in front
    rec = json.loads((res / "_studies" / "tosk.json").read_text())
    from sims.tosk import RANK_NAMES

    # the matches, the card run and one restricted run per rank
    assert len(rec["runs"]) == 2 * 3 + 1 + len(RANK_NAMES)
    # the shipped population measured at the plan's settings, kept in the record
    eq = rec["equilibrium"]
    assert eq["shipped"] == str(pop) and [m["name"] for m in eq["members"]] == [
        "balanced",
        "turtle",
    ]
    assert eq["settings"]["seed"] == TINY_PLAN["seed"] and eq["settings"]["budget"] == 2
    assert eq["play"]["games"] == 3 * 200  # the three pairings of a two-member support
    clash_rec = json.loads((res / "_studies" / "clash.json").read_text())
    assert clash_rec["equilibrium"]["missing"] is True

    def boom(*a, **k):
        raise AssertionError("the report simulated a game")

    monkeypatch.setattr(runner, "play_batch", boom)  # every game is played there
    again = study.report_study(tmp_path / "again", results=res)
    a = _strip_dates((tmp_path / "study" / "tosk.html").read_text(encoding="utf-8"))
    b = _strip_dates((again.parent / "tosk.html").read_text(encoding="utf-8"))
    # only the elapsed time of the study differs between the two pages
    a = re.sub(r"<dt>Elapsed</dt><dd>[^<]*</dd>\n?", "", a)
    b = re.sub(r"<dt>Elapsed</dt><dd>[^<]*</dd>\n?", "", b)
    assert a == b
    assert "Card value" in b and "Restricted play" in b
    # the page leads with equilibrium play, rebuilt from the record alone
    assert b.index('<section class="equilibrium"') < b.index("<h2>Summary</h2>")
    g = eq["exploitability"]
    assert f"{100 * g['mean']:+.1f} points [{100 * g['lo']:+.1f}, {100 * g['hi']:+.1f}]" in b
    assert "Exploitability over the search" in b
    assert "No equilibrium population is shipped for this game" in (
        again.parent / "clash.html"
    ).read_text(encoding="utf-8")
    assert again.read_text(encoding="utf-8").count("Are the base rules balanced?") == 4
    # the worked repair example: linked with its result, rebuilt from the store alone
    assert 'href="tosk-repair.html"' in b and "Smallest verified repair (#1)" in b
    r1 = (tmp_path / "study" / "tosk-repair.html").read_text(encoding="utf-8")
    r2 = (again.parent / "tosk-repair.html").read_text(encoding="utf-8")
    verified = re.compile(r'<section id="verified">.*?</section>', re.S)
    assert verified.search(r1).group(0) == verified.search(r2).group(0)
    assert "heal_per_card 2 → 1" in r2
    # Clash: the loadout matrix, its charts, the ranges and the opening bid
    c = (again.parent / "clash.html").read_text(encoding="utf-8")
    for anchor in ("-loadouts", "-ranges", "-initiative"):
        assert re.search(f'<h3 id="game-0-[A-Za-z-]+{anchor}"', c), anchor
    heads = {m.group(1): m.start() for m in re.finditer(r'<h3 id="game-0-[A-Za-z-]+?(-[a-z]+)"', c)}
    for section, end in (
        ("-loadouts", "-ranges"),
        ("-ranges", "-initiative"),
        ("-initiative", "-diffs"),
    ):
        body = c[heads[section] : heads[end]]
        assert "<svg" in body, section  # each section draws its chart
    assert "Item pairs" in c and "Best range" in c and "Bid winner wins" in c
    # Trisk: its page links the equal-power test, rebuilt from the store too
    t = (again.parent / "trisk.html").read_text(encoding="utf-8")
    assert 'href="trisk-power.html"' in t
    p1 = (tmp_path / "study" / "trisk-power.html").read_text(encoding="utf-8")
    p2 = (again.parent / "trisk-power.html").read_text(encoding="utf-8")
    assert "Trisk: are all cards equal in power?" in p2
    strip = re.compile(r"\d+(\.\d+)? ?(s|min)\b|\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d)?\S*")
    assert strip.sub("", p1).count("not equal") == strip.sub("", p2).count("not equal")
    # the four-suits RPG: its page links the analysis page, rebuilt from the store alone
    assert 'href="suits-analysis.html"' in (again.parent / "suits.html").read_text(encoding="utf-8")
    s1 = (tmp_path / "study" / "suits-analysis.html").read_text(encoding="utf-8")
    s2 = (again.parent / "suits-analysis.html").read_text(encoding="utf-8")
    assert "What the rules leave open" in s2 and "Topple a stone tower" in s2
    assert strip.sub("", s1) == strip.sub("", s2)


@pytest.mark.slow
def test_simulate_precision_reaches_its_target(tmp_path):
    out = json.loads(
        ok(
            "tosk",
            "simulate",
            "--a",
            "aggressor",
            "--b",
            "turtle",
            "-n",
            100,
            "--precision",
            0.04,
            "--seed",
            5,
            "--results",
            tmp_path,
            "--json",
        )
    )
    assert out["games"] > 100
    for side in ("", "b_"):
        half = (out[f"{side}winrate_hi"] - out[f"{side}winrate_lo"]) / 2
        assert half <= 0.04
    capped = json.loads(
        ok(
            "tosk",
            "simulate",
            "--a",
            "aggressor",
            "--b",
            "turtle",
            "-n",
            100,
            "--precision",
            0.001,
            "--max-games",
            300,
            "--seed",
            5,
            "--results",
            tmp_path,
            "--json",
        )
    )
    assert capped["games"] == 300
    msg = one_line_error(run("tosk", "simulate", "--precision", 0.7, "--results", tmp_path))
    assert "--precision" in msg


@pytest.mark.slow
def test_sprt_stops_when_the_answer_is_known(tmp_path):
    # potent healing against base for the healer: a large change, found fast
    text = ok(
        "tosk",
        "sprt",
        "--vs",
        "potent-healing",
        "--strategy",
        "healer",
        "--opponents",
        "aggressor",
        "--delta",
        3,
        "--batch",
        200,
        "--seed",
        2,
        "--results",
        tmp_path,
        "--max-games",
        20000,
    )
    lines = text.strip().splitlines()
    assert lines[-2].startswith("verdict: ")
    assert lines[-1].startswith("sequential test of potent-healing against base: played ")
    assert "LLR" in lines[0]
    out = json.loads(
        ok(
            "tosk",
            "sprt",
            "--vs",
            "potent-healing",
            "--strategy",
            "healer",
            "--opponents",
            "aggressor",
            "--delta",
            3,
            "--batch",
            200,
            "--seed",
            2,
            "--results",
            tmp_path,
            "--max-games",
            20000,
            "--json",
        )
    )
    last = out["steps"][-1]
    assert last["decision"] in ("raises", "lowers", "no change")
    assert last["games"] < 20000  # it stopped early
    hit = max(last["llr_up"], last["llr_down"])
    assert hit >= last["upper"] or (
        last["llr_up"] <= last["lower"] and last["llr_down"] <= last["lower"]
    )
    # the LLR printed is the one the library computes from the stored runs' pairs
    runs, _ = pages.load_runs([tmp_path / "tosk"])
    base = np.concatenate([r.pair_points for r in runs if r.spec.ruleset.name == "base"])
    ph = np.concatenate([r.pair_points for r in runs if r.spec.ruleset.name == "potent-healing"])
    again = stats.sprt_pair_diff(stats.pair_diff_counts(base, ph), 0.03)
    assert again["llr_up"] == pytest.approx(last["llr_up"], abs=1e-9)
    assert again["decision"] == last["decision"]


@pytest.mark.slow
def test_sprt_bad_input(tmp_path):
    msg = one_line_error(
        run(
            "tosk",
            "sprt",
            "--vs",
            "force",
            "--strategy",
            "aggressor",
            "--delta",
            0,
            "--results",
            tmp_path,
        )
    )
    assert "--delta" in msg
    msg = one_line_error(
        run("tosk", "sprt", "--vs", "base", "--strategy", "aggressor", "--results", tmp_path)
    )
    assert "same rules" in msg
    msg = one_line_error(
        run("tosk", "sprt", "--vs", "nope", "--strategy", "aggressor", "--results", tmp_path)
    )
    assert "nope" in msg
    assert not any(tmp_path.iterdir())


def test_diffs_carry_holm_bh_and_tost(store, page):
    from statsmodels.stats.multitest import multipletests

    runs, _ = pages.load_runs([store / "results" / "tosk"])
    t, _, _ = pages.game_tables("tosk", pages.organise(runs)["tosk"])
    d = t["diffs"]
    assert len(d) == 3  # force vs base, for each of the 3 strategies
    np.testing.assert_allclose(d["p_bh"], multipletests(d["p"], method="fdr_bh")[1])
    np.testing.assert_allclose(d["p_holm"], multipletests(d["p"], method="holm")[1])
    for r in d.itertuples():
        se = (r.diff_hi - r.diff_lo) / (2 * 1.959963984540054)
        eq = stats.tost(r.diff, se, 0.01)
        assert r.tost_p == pytest.approx(eq["p"], rel=1e-9)
        assert r.equivalent == eq["equivalent"]
    assert "BH q" in page and "Equivalent (TOST)" in page
