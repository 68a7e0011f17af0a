"""The four-suits RPG analyses (``balance.games.suits.analysis``): the Task tables against the
exact oracle, the struggle round robin's tables, the page, the commands and
their user errors. The engine's own rules and invariants are tested in
``test_suits_rules.py`` and ``test_suits_engine.py``."""

from __future__ import annotations

import json
import re
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from balance.errors import UserError
from balance.games.suits import analysis as suits
from sims.suits_oracle import task_odds
from tests import ROOT
from tests.cli.test_cli import run_cli

SMALL_TASKS = suits.TasksPlan(hands=20_000, characters=300, seed=5)
SMALL_STRUGGLE = suits.StrugglePlan(variants=("base", "ties-to-attacker"), games=400, seed=5)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return tmp_path_factory.mktemp("suits-store")


@pytest.fixture(scope="module")
def tasks(store):
    return suits.run_tasks(SMALL_TASKS, threads=1, results=store)


@pytest.fixture(scope="module")
def struggle(store):
    return suits.run_struggle(SMALL_STRUGGLE, threads=1, results=store, progress=False)


# ---- the rulebook's example tasks ---------------------------------------------------------
def test_examples_are_the_rulebooks_lists():
    ex = suits.examples()
    assert list(ex) == ["spades", "diamonds", "clubs", "hearts"]
    assert all(len(v) == 13 for v in ex.values())
    assert ex["clubs"][0] == "Hurl a heavy object (50+ pounds)."
    assert ex["clubs"][12] == "Topple a stone tower."
    assert ex["spades"][12] == "Impersonate a god."
    assert ex["hearts"][9] == "Chug a mug of hemlock."  # Jack = 11


def test_a_malformed_example_file_is_one_line(tmp_path):
    good = (ROOT / "configs" / "suits" / "tasks.toml").read_text()
    bad = tmp_path / "tasks.toml"
    bad.write_text(good.replace('"Ace" = "Topple a stone tower."', ""))
    with pytest.raises(UserError, match=r"\[clubs\] lacks the targets A$"):
        suits.examples(bad)
    bad.write_text(good.replace('"Ace" = "Topple', '"Joker" = "Topple'))
    with pytest.raises(UserError, match="key 'Joker' must be a rank"):
        suits.examples(bad)


def test_parse_suit():
    assert suits.parse_suit("Clubs") == 2 and suits.parse_suit("♠") == 0
    assert suits.parse_suit("h") == 3 and suits.parse_suit("diamond") == 1
    with pytest.raises(UserError, match="unknown suit 'purple'; allowed: spades"):
        suits.parse_suit("purple")


# ---- tasks ---------------------------------------------------------------------------------
def test_fresh_table_is_the_oracle_beside_the_simulation(tasks):
    f = tasks.fresh
    assert list(f["target"]) == list(range(2, 15))
    for r in f.itertuples():
        exact = task_odds(r.target)
        for mode in ("in_suit", "difficult", "either", "difficult_only"):
            assert getattr(r, f"{mode}_exact") == float(exact[mode])
            assert abs(getattr(r, f"{mode}_z")) < 4.5, (r.target, mode)
            assert getattr(r, f"{mode}_lo") <= getattr(r, f"{mode}_sim") <= getattr(r, f"{mode}_hi")
        # the simulated "only Difficult" hands are the either-way ones that fail in suit
        assert r.difficult_only_k == r.either_k - r.in_suit_k
        assert r.hands == SMALL_TASKS.hands
        assert r.cards_lo <= r.cards_exact <= r.cards_hi or abs(r.cards_sim - r.cards_exact) < 0.01
    # every hand meets a target of 2 one way or the other (4 suits, 5 cards)
    assert f.loc[f["target"] == 2, "either_sim"].item() == 1.0


def test_the_oracle_sums_to_one_and_orders_the_modes():
    for t in range(2, 15):
        o = task_odds(t)
        assert isinstance(o["in_suit"], Fraction)
        assert o["difficult_only"] == o["either"] - o["in_suit"]
        assert max(o["in_suit"], o["difficult"]) <= o["either"] <= 1
        assert o["cards"] == o["in_suit"] + 2 * o["difficult_only"] + (1 - o["either"])
    # no Jokers, hand of one card: a single in-suit card meeting the target
    assert task_odds(10, hand_size=1, jokers=0)["in_suit"] == Fraction(5, 52)
    assert task_odds(10, hand_size=1, jokers=0)["difficult"] == 0
    with pytest.raises(ValueError):
        task_odds(15)


def test_rundown_tables(tasks):
    la = tasks.lasting
    assert set(la["mode"]) == {"in_suit", "difficult", "either"} and len(la) == 39
    hand = 5
    for r in la.itertuples():
        # a deck of 49 undealt cards lasts at most 49 attempts (one card each) and at
        # least 25 (two cards each)
        assert 24.5 <= r.attempts_lo <= r.attempts <= r.attempts_hi <= 54 - hand
        assert r.successes <= r.attempts
        assert 1.0 <= r.cards_per_attempt <= 2.0
        # the first attempt is a fresh hand: the exact odds of its mode
        exact = float(task_odds(r.target)[r.mode])
        assert r.first_lo - 0.06 <= exact <= r.first_hi + 0.06
    either = la[la["mode"] == "either"].set_index("target")
    # harder targets succeed less often over a whole deck
    assert (np.diff(either["successes"].to_numpy()) < 0).all()
    ba = tasks.by_attempt
    first = ba[(ba["attempt"] == 1)]
    assert (first["n"] == SMALL_TASKS.characters).all()
    bd = tasks.by_deck
    assert (bd["lo"] <= bd["rate"]).all() and (bd["rate"] <= bd["hi"]).all()
    assert bd["deck_left"].max() == 54 - hand


def test_tasks_are_stored_and_read_back(tasks, store):
    again = suits.run_tasks(SMALL_TASKS, threads=2, results=store)
    assert again.cached and not tasks.cached
    for a, b in zip(tasks.tables().values(), again.tables().values(), strict=False):
        pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True))
    with pytest.raises(UserError, match="not in the store"):
        suits.run_tasks(
            suits.TasksPlan(hands=1000, characters=10, seed=99), results=store, store_only=True
        )


def test_tasks_plan_checks():
    for plan, msg in (
        (suits.TasksPlan(hands=0), "-n must be a number of hands from 1"),
        (suits.TasksPlan(hands=10**12), "-n must be a number of hands from 1 to 200,000,000"),
        (suits.TasksPlan(characters=10**12), "--characters must be from 1 to 20,000,000"),
        (suits.TasksPlan(characters=0), "--characters must be from 1 to"),
        (suits.TasksPlan(suit="stars"), "unknown suit"),
        (suits.TasksPlan(seed=-1), "--seed"),
    ):
        with pytest.raises(UserError, match=msg):
            plan.check()


# ---- struggles -----------------------------------------------------------------------------
@pytest.mark.slow
def test_struggle_tables(struggle):
    pols = list(suits.POLICIES)
    p = struggle.policies
    assert len(p) == 2 * len(pols) and set(p["variant"]) == {"base", "ties-to-attacker"}
    assert ((p["lo"] <= p["score"]) & (p["score"] <= p["hi"])).all()
    assert (p["games"] == (len(pols) - 1) * SMALL_STRUGGLE.games).all()
    m = struggle.matrix[struggle.matrix["variant"] == "base"].set_index(["policy", "opponent"])
    for a in pols:
        assert m.loc[(a, a), "score"] == 0.5  # a policy against itself, seats swapped
        for b in pols:
            assert m.loc[(a, b), "score"] + m.loc[(b, a), "score"] == pytest.approx(1.0)
    f = struggle.factors
    assert len(f) == 6 and set(f["choice"]) == {"attack", "defence", "damage"}
    # each effect is the mean of its 4 policy pairs x 8 opponents
    assert (f["comparisons"] == 32).all() and (f["deals"] == SMALL_STRUGGLE.games // 2).all()
    # the field's mean score is one half: every game gives out one point
    for v in ("base", "ties-to-attacker"):
        mm = struggle.matrix[struggle.matrix["variant"] == v]
        assert mm["score"].mean() == pytest.approx(0.5)
    ln = struggle.length
    assert len(ln) == 2 * len(pols)
    ends = ln[["disabled", "dead", "both_disabled", "round_cap"]].sum(axis=1)
    assert (ends == ln["games"]).all()
    assert (ln["round_cap"] == 0).all()
    t = struggle.ties
    assert len(t) == 2 * len(pols)
    absorb = t[t["policy"].str.contains("absorb")]
    assert (absorb["answers"] == 0).all() and (absorb["ties"] == 0).all()
    assert len(struggle.tie_effect) == len(pols)


def test_factor_effect_equals_the_hand_computed_paired_difference(struggle):
    """The attack effect under base, recomputed from the stored per-deal points."""
    by = {(r.spec.ruleset.name, r.spec.a.name, r.spec.b.name): r for r in struggle.runs}
    diffs = []
    for p in suits.POLICIES:
        if not p.startswith("high-"):
            continue
        q = "low-" + p[len("high-") :]
        for x in suits.POLICIES:
            diffs.append(suits._points(by, "base", q, x) - suits._points(by, "base", p, x))
    want = float(np.mean(np.mean(diffs, axis=0) / 4.0))
    got = struggle.factors.query("variant == 'base' and choice == 'attack'")["effect"].item()
    assert got == pytest.approx(want)


def test_struggle_plan_checks():
    with pytest.raises(UserError, match="at least two policies"):
        suits.StrugglePlan(policies=("random",)).check()
    with pytest.raises(UserError, match="names a policy twice"):
        suits.StrugglePlan(policies=("random", "random")).check()
    with pytest.raises(UserError, match="-n must be a positive"):
        suits.StrugglePlan(games=0).check()


# ---- the page --------------------------------------------------------------------------------
@pytest.mark.slow
def test_page_is_self_contained_and_complete(tasks, struggle, tmp_path):
    path = suits.write_page(tasks, struggle, tmp_path / "suits.html")
    html = path.read_text(encoding="utf-8")
    assert html.count("<svg") == 4  # the ladder, the run-down, the policies, the matrix
    assert not re.search(r"""(src|href)=["']?(https?:)?//|<link|<script src""", html)
    for name, _ in suits.OPEN:
        assert name.replace("'", "&#39;") in html
    assert "Topple a stone tower." in html and "Impersonate a god" not in html  # Clubs only
    assert "S5 What the text leaves for later" in html
    assert all(p in html for p in suits.POLICIES)
    # every figure's sample size is on the page
    assert f"{SMALL_TASKS.hands:,}" in html and f"{SMALL_STRUGGLE.games:,}" in html
    # findings name the numbers of the tables
    f = tasks.fresh.set_index("target")
    assert f"{f.loc[10, 'in_suit_exact'] * 100:.1f}%" in html


@pytest.mark.slow  # 1.2-1.5 s on a 2-core VM (issue 46, round 5)
def test_page_with_one_half_only(tasks, tmp_path):
    html = suits.write_page(tasks, None, tmp_path / "t.html").read_text(encoding="utf-8")
    assert "Tasks from a fresh hand" in html and "Struggles: scripted policies" not in html
    assert "What the rules leave open" in html


# ---- the commands ----------------------------------------------------------------------------
@pytest.mark.slow
def test_cli_tasks_and_struggle(tmp_path):
    res = run_cli(
        [
            "suits",
            "tasks",
            "-n",
            "2000",
            "--characters",
            "50",
            "--seed",
            "3",
            "--page",
            str(tmp_path / "t.html"),
            "--json",
        ],
        tmp_path,
    )
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert len(data["tasks_fresh"]) == 13 and data["tasks_fresh"][0]["target_name"] == "2"
    assert data["manifest"]["rulings"][0].startswith("S1 ")
    assert (tmp_path / "t.html").is_file()
    res = run_cli(
        [
            "suits",
            "struggle",
            "-n",
            "100",
            "--variants",
            "base",
            "--policies",
            "high-defend-hand,low-absorb-deck,random",
        ],
        tmp_path,
    )
    assert res.returncode == 0, res.stderr
    assert "Each policy against the field" in res.stdout and "low-absorb-deck" in res.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    "args, message",
    [
        (["tasks", "--suit", "stars"], "unknown suit 'stars'"),
        (["tasks", "-n", "0"], "-n must be a number of hands from 1 to"),
        (["tasks", "--page", "out.txt"], "--page must name an .html file"),
        (["tasks", "--variant", "nope"], "unknown suits variant 'nope'"),
        (["struggle", "--policies", "high-defend-hand,nope"], "nope"),
        (["struggle", "--variants", "base,nope"], "unknown suits variant 'nope'"),
        (["struggle", "-n", "0"], "-n must be a positive"),
        (["struggle", "--policies", "random"], "at least two policies"),
    ],
)
def test_cli_user_errors_are_one_line_and_write_nothing(tmp_path, args, message):
    res = run_cli(["suits", *args], tmp_path)
    assert res.returncode == 2, (res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], res.stderr
    assert "Traceback" not in res.stderr
    assert not (tmp_path / "results").exists() and not (tmp_path / "out.txt").exists()
