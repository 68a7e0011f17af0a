"""Clash of Steel through the installed command: simulate, trace, the loadout
matrix, ranges and initiative, and bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from balance import config, loadouts, runner
from balance.errors import UserError
from tests import ROOT

BALANCE = Path(sys.executable).with_name("balance")


def run(*args):
    return subprocess.run(
        [str(BALANCE), *map(str, args)],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "BALANCE_RESULTS"},
    )


def ok(*args):
    p = run(*args)
    assert p.returncode == 0, p.stderr
    return p.stdout


@pytest.mark.slow
def test_simulate_and_trace(tmp_path):
    out = json.loads(
        ok(
            "clash",
            "simulate",
            "--a",
            "counter",
            "--b",
            "aggressive",
            "-n",
            2000,
            "--results",
            tmp_path,
            "--json",
        )
    )
    assert out["games"] == 2000 and out["a_wins"] + out["b_wins"] + out["draws"] == 2000
    assert out["winrate_lo"] <= out["winrate"] <= out["winrate_hi"]
    text = ok("clash", "trace", "--a", "counter", "--b", "ranger", "--seed", 3, "--game", 1)
    assert text.startswith("Clash of Steel base, seed 3, game 1")
    lines = text.strip().splitlines()
    assert "counter" in lines[1] and "ranger" in lines[1]  # both loadouts are shown
    assert "wins after" in lines[-1] or "draw" in lines[-1]


def test_strategy_loadout_key(tmp_path):
    s = config.load_strategy("clash", "counter")
    assert s.loadout is not None and s.vector()[0] == s.loadout
    f = tmp_path / "mine.toml"
    f.write_text('loadout = "sword+shield/armor"\n', encoding="utf-8")
    mine = config.load_strategy("clash", str(f))
    from sims import clash

    assert clash.loadout_name(mine.loadout) == "Shield+Sword/Armor"
    assert mine.name == "mine@Shield+Sword/Armor"
    f.write_text('loadout = "sword+bow/armor"\n', encoding="utf-8")
    with pytest.raises(UserError, match="unknown loadout"):
        config.load_strategy("clash", str(f))


SHIPPED = ["random", "aggressive", "counter", "ranger", "miser", "bluffer"]


def test_every_strategy_plays_its_own_loadout():
    """ "Each player selects two of the five available Items, and one of the
    available Maneuvers": every shipped strategy declares the loadout that
    suits it (before, none did, so all played Axe+Dagger/Armor, and the
    bluffer's Feint, "Once played, Feint allows you to swap out your played
    Action or Target card", never happened); its name says what it plays."""
    import tomllib

    from sims import clash

    root = ROOT / "strategies" / "clash"
    played = set()
    for name in SHIPPED:
        data = tomllib.loads((root / f"{name}.toml").read_text(encoding="utf-8"))
        assert "loadout" in data, name
        st = config.load_strategy("clash", name)
        assert st.name == f"{name}@{clash.loadout_name(st.loadout)}"
        played.add(st.loadout)
    assert len(played) > 1
    bluffer = config.load_strategy("clash", "bluffer")
    assert clash.ALL_LOADOUTS[bluffer.loadout][2] == clash.FEINT
    rs = config.resolve_variant("clash", "base")
    res = runner.simulate_run(
        runner.RunSpec(rs, bluffer, config.load_strategy("clash", "counter"), 400, 3, per_game=True)
    )
    pg = {
        k: res.per_game[k].to_numpy()
        for k in ("a_seat", "maneuver_round_seat0", "maneuver_round_seat1")
    }
    feints = np.where(pg["a_seat"] == 0, pg["maneuver_round_seat0"], pg["maneuver_round_seat1"])
    assert (feints > 0).sum() > 0  # the bluffer's Feint happens


@pytest.mark.slow
def test_a_side_names_its_loadout(tmp_path):
    """``strategy@Item+Item/Maneuver`` wherever a side is named; every table
    and trace shows each side's loadout."""
    out = json.loads(
        ok(
            "clash",
            "simulate",
            "--a",
            "counter@Axe+Sword/Feint",
            "--b",
            "miser",
            "-n",
            200,
            "--results",
            tmp_path,
            "--json",
        )
    )
    assert out["a"] == "counter@Axe+Sword/Feint"
    assert out["b"] == "miser@Dagger+Shield/Second Wind"
    t = json.loads(
        ok(
            "clash",
            "compare",
            "--strategies",
            "counter@sword+axe/feint,counter,random",
            "-n",
            200,
            "--results",
            tmp_path,
            "--json",
        )
    )
    names = {r["strategy"] for r in t["strategies"]}
    assert names == {
        "counter@Axe+Sword/Feint",
        "counter@Shield+Sword/Second Wind",
        "random@Spear+Sword/Second Wind",
    }
    text = ok("clash", "trace", "--a", "ranger@Dagger+Spear/Armor", "--b", "bluffer", "--seed", 2)
    assert "A = ranger@Dagger+Spear/Armor, B = bluffer@Dagger+Spear/Feint" in text
    assert "seat 1 ranger@Dagger+Spear/Armor: Dagger+Spear/Armor" in text
    stored = sorted(tmp_path.glob("clash/*"))
    for bad, what in (
        ("counter@Axe+Bow/Feint", "unknown loadout"),
        ("counter@Shield+Spear/Feint", "not legal"),
    ):
        p = run("clash", "simulate", "--a", bad, "-n", 20, "--results", tmp_path)
        assert p.returncode == 2 and p.stderr.count("\n") == 1 and what in p.stderr, p.stderr
    assert sorted(tmp_path.glob("clash/*")) == stored  # a refused side writes nothing


@pytest.mark.slow
def test_shield_spear_loadouts_under_their_rule(tmp_path):
    """C1: Shield "Can't be used with a Spear" unless ``allow_shield_spear``:
    with the key on (variant shield-spear) there are 30 loadouts everywhere;
    before, the key was silently ignored (27 loadouts, the same numbers)."""
    from sims import clash

    f = tmp_path / "mine.toml"
    f.write_text('loadout = "shield+spear/armor"\n', encoding="utf-8")
    mine = config.load_strategy("clash", str(f))
    assert clash.loadout_name(mine.loadout) == "Shield+Spear/Armor"
    p = run("clash", "simulate", "--a", str(f), "-n", 20, "--results", tmp_path)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "not legal" in p.stderr
    out = json.loads(
        ok(
            "clash",
            "simulate",
            "--a",
            str(f),
            "--variant",
            "shield-spear",
            "-n",
            20,
            "--results",
            tmp_path,
            "--json",
        )
    )
    assert out["a"] == "mine@Shield+Spear/Armor" and out["games"] == 20
    t = json.loads(
        ok(
            "clash",
            "loadouts",
            "--variant",
            "shield-spear",
            "-n",
            2,
            "--seed",
            3,
            "--results",
            tmp_path,
            "--json",
        )
    )
    assert len(t["loadouts"]) == 30 and len(t["loadout_matrix"]) == 30 * 30
    assert "Shield+Spear" in {r["items"] for r in t["item_pairs"]} and len(t["item_pairs"]) == 10
    base = json.loads(
        ok("clash", "loadouts", "-n", 2, "--seed", 3, "--results", tmp_path, "--json")
    )
    assert len(base["loadouts"]) == 27 and len(base["item_pairs"]) == 9
    ranges = json.loads(
        ok(
            "clash",
            "ranges",
            "--variant",
            "shield-spear",
            "-n",
            2,
            "--seed",
            3,
            "--results",
            tmp_path,
            "--json",
        )
    )
    assert len(ranges) == 30 * 4


@pytest.mark.slow
def test_loadout_matrix_is_antisymmetric_with_half_diagonal(tmp_path):
    # 200 games a pairing, not fewer: the Nash averages' bootstrap on 20-game
    # cells (wide intervals) tries hundreds of supports, about 40 s for each of
    # the three tables below, and settles in under a second at 200; the games
    # themselves cost about the same (the runs' overhead dominates)
    runs = loadouts.run_matrix("clash", "base", "counter", "counter", 200, 5, None, tmp_path)
    assert len(runs) == 27 * 28 // 2
    t = loadouts.loadout_tables("clash", runs)
    m = t["loadout_matrix"]
    assert len(m) == 27 * 27
    score = np.full((27, 27), np.nan)
    for r in m.itertuples():
        score[r.i, r.j] = r.score
    np.testing.assert_allclose(np.diag(score), 0.5)  # a loadout against itself: exactly ½
    np.testing.assert_allclose(score + score.T, 1.0)  # X vs Y plus Y vs X is 1
    assert len(t["item_pairs"]) == 9 and len(t["maneuvers"]) == 3 and len(t["items"]) == 5
    assert abs(t["loadouts"]["nash_p"].sum() - 1) < 1e-9
    assert (t["best_response"]["score"] >= 0.5 - 1e-12).all()  # the best row beats ½ or ties
    # the CLI reads the same runs back from the store
    text = ok("clash", "loadouts", "-n", 200, "--seed", 5, "--results", tmp_path)
    assert "Item pairs" in text and "Maneuvers" in text and "Best response" in text
    ranges = json.loads(
        ok("clash", "ranges", "-n", 200, "--seed", 5, "--results", tmp_path, "--json")
    )
    assert len(ranges) == 27 * 4
    assert all(r["won"] <= r["rounds"] for r in ranges)
    # another style of play: counter's matrix is read back, aggressive's is played
    out = json.loads(
        ok(
            "clash",
            "loadouts",
            "-n",
            200,
            "--seed",
            5,
            "--results",
            tmp_path,
            "--also",
            "aggressive",
            "--json",
        )
    )
    lp = out["loadout_pairings"]
    assert {r["pairing"] for r in lp} == {"counter vs counter", "aggressive vs aggressive"}
    assert len(lp) == 2 * (9 + 3)
    mine = {
        (r["kind"], r["choice"]): r["score"] for r in lp if r["pairing"] == "counter vs counter"
    }
    for r in out["item_pairs"]:  # the first pairing's scores are the main tables' scores
        assert mine[("item pair", r["items"])] == pytest.approx(r["score"])
    # every loadout plays the field equally often, so the pooled scores average ½
    for pairing in ("counter vs counter", "aggressive vs aggressive"):
        man = [r["score"] for r in lp if r["pairing"] == pairing and r["kind"] == "maneuver"]
        assert np.mean(man) == pytest.approx(0.5)
    p = run("clash", "loadouts", "-n", 200, "--results", tmp_path, "--also", "counter")
    assert p.returncode == 2 and p.stderr.startswith("error: a strategy pairing is listed twice")


@pytest.mark.slow
def test_initiative_table_counts_every_game(tmp_path):
    rows = json.loads(
        ok(
            "clash",
            "initiative",
            "--strategies",
            "counter,aggressive,miser",
            "-n",
            400,
            "--results",
            tmp_path,
            "--json",
        )
    )
    total = next(r for r in rows if r["bid"] == "all")
    assert total["games"] == sum(r["games"] for r in rows if r["bid"] != "all")
    assert total["games"] <= 3 * 400
    assert all(r["winrate_lo"] <= r["winrate"] <= r["winrate_hi"] for r in rows)


@pytest.mark.slow
def test_round_robin_and_loadout_matrix_runs_stay_apart(tmp_path):
    """Every Clash side is named strategy@loadout now, so the page tells the
    loadout matrix's runs from the round robin's by the runs' experiment tag,
    never by the names."""
    from balance import analysis, pages

    _, _, _, rr = analysis.compare_command(
        "clash", "base", "counter,aggressive", 20, 5, None, 1 << 15, tmp_path, with_tables=False
    )
    lm = loadouts.run_matrix("clash", "base", "counter", "counter", 2, 5, None, tmp_path)
    assert {r.spec.experiment for r in lm} == {loadouts.EXPERIMENT}
    g = pages.organise([*rr.values(), *lm])["clash"]
    assert len(g["matches"]) == 1 and len(g["loadouts"]) == len(lm) == 27 * 28 // 2
    # the tag is part of the stored identity: read back, the runs sort the same way
    runs, skipped = pages.load_runs([tmp_path / "clash"])
    assert not skipped
    g2 = pages.organise(runs)["clash"]
    assert len(g2["matches"]) == 1 and len(g2["loadouts"]) == len(lm)
