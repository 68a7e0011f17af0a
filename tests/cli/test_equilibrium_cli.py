"""``balance <game> equilibrium`` as a user runs it (a subprocess of this tree
in a scratch folder): the answer comes first, ``--json`` carries every figure
with its interval and n, ``--out`` writes a population that loads back as it
was played, the same command again reads everything from the store and says
the same thing bit for bit, and every mistake is one line, exit 2."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.cli.test_tune_cli import cli

SMALL = [
    "--iterations",
    2,
    "--budget",
    4,
    "--games",
    200,
    "--search-games",
    100,
    "--screen-games",
    100,
    "--confirm-games",
    400,
    "--restarts",
    2,
    "--audit",
    2,
    "--seed",
    3,
]


@pytest.mark.slow
def test_equilibrium_answers_first_writes_a_population_and_replays_bit_for_bit(tmp_path):
    from balance import equilibrium as eqm

    out = tmp_path / "eq"
    p = cli(["suits", "equilibrium", *SMALL, "--out", out], tmp_path)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    # the answer first: each property under strong play against its target, summed up
    assert lines[0].startswith("base suits under strong play (both seats drawing from the ")
    for i, prop in enumerate(("seat fairness", "game length", "draws", "round-cap draws")):
        assert lines[1 + i].startswith(f"  {prop}: ") and "target" in lines[1 + i]
    assert lines[5].startswith("  → base under strong play: ")
    # then the exploitability: the audit's figure, with its budget
    assert lines[6].startswith("suits under the rules 'base', exploitability (ε = 2 points): ")
    assert "points [" in lines[6] and "deals" in lines[6]
    assert "the audit's best response" in lines[6] or "search failed" in lines[6]
    assert lines[8].startswith("dominant strategy: ")
    assert "iteration 1 of ≤ 2:" in p.stderr and "elapsed" in p.stderr
    members, w, data = eqm.load_population("suits", out)
    assert abs(w.sum() - 1) < 1e-9 and len(members) == len(list(out.glob("[0-9][0-9]-*.toml")))
    assert data["rules"] == "base" and data["step"]
    text = (out / eqm.POPULATION).read_text()
    assert "# exploitability (the audit's gain (an independent search, seed 3" in text
    assert data["audit"] and data["audit"][-1]["seed"] == 3 and "stability" in data
    assert "/" not in text.split("# command: ")[1].split("\n")[0].replace("--out eq", "")

    j1 = cli(["suits", "equilibrium", *SMALL, "--json"], tmp_path)
    assert j1.returncode == 0, j1.stderr
    assert (
        "nothing simulated" in j1.stderr or "simulated" not in j1.stderr.split("equilibrium of")[-1]
    )
    s1 = json.loads(j1.stdout)
    for key in ("seat_share", "draws", "round_cap", "rounds"):
        fig = s1["play"][key]
        assert fig["lo"] <= fig["mean"] <= fig["hi"] and fig["n"] > 0
    assert s1["play"]["games"] > 0 and s1["play"]["deals"] > 0
    g = s1["exploitability"]
    assert g["lo"] <= g["mean"] <= g["hi"]
    if s1["audit"]:  # the audit's figure: four times the confirmation games
        assert g["n"] == 800 and s1["audit"]["gain"] == g["mean"]
    assert len(s1["curve"]) in (1, 2) and s1["status"] in ("equilibrium", "budget")
    assert np.isclose(sum(m["weight"] for m in s1["members"]), 1.0)
    j2 = cli(["suits", "equilibrium", *SMALL, "--json"], tmp_path)
    s2 = json.loads(j2.stdout)
    for s in (s1, s2):
        s.pop("seconds")
        s.pop("out")
        for st in s["curve"]:
            st.pop("seconds")  # wall time and the audit's date: all a replay may change
        (s.get("audit") or {}).pop("date", None)
    assert s1 == s2


@pytest.mark.slow
@pytest.mark.parametrize(
    "args, words",
    [
        (["--epsilon", "2"], "--epsilon must be above 0 and below 0.5"),
        (["--iterations", "0"], "--iterations must be between 1 and 1000"),
        (["--budget", "0"], "--budget must be between 1 and 100000"),
        (["--step", "0"], "--step must be above 0"),
        (["--from", "nosuch"], "nosuch"),
        (["--from", ","], "--from: name at least one strategy"),
        (["--games", "7"], "--games"),
    ],
)
def test_equilibrium_mistakes_are_one_line(tmp_path, args, words):
    p = cli(["tosk", "equilibrium", *args], tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and words in lines[0], p.stderr
    assert "Traceback" not in p.stderr
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").rglob("*.parquet"))


@pytest.mark.slow
def test_audit_checks_a_population_records_itself_and_writes_its_response(tmp_path):
    """``balance <game> audit``: an independent search against a population's
    mixture (here the oracle test's weak four-suits population, copied),
    its gain with interval, budget and seed; ``--record`` appends an [[audit]]
    table that loads back, a second audit with another seed prints both and
    whether they agree; ``--response`` writes a strategy file any command
    takes. Its mistakes are one line."""
    import shutil
    from pathlib import Path

    from balance import config
    from balance import equilibrium as eqm

    src = Path(__file__).resolve().parents[1] / "data" / "oracle" / "suits"
    pop = tmp_path / "pop"
    shutil.copytree(src, pop)
    small = ["--budget", 4, "--restarts", 1, "--audit", 2, "--games", 200, "--confirm-games", 200]
    p = cli(
        [
            "suits",
            "audit",
            "--population",
            pop,
            *small,
            "--seed",
            5,
            "--record",
            "--response",
            tmp_path / "r.toml",
        ],
        tmp_path,
    )
    assert p.returncode == 0, p.stderr
    first = p.stdout.splitlines()[0]
    assert first.startswith("suits under the rules 'base', the population's mixture audited: ")
    assert "seed 5 'audit:1'" in p.stdout and "CMA-ES evaluations over 2 restarts" in p.stdout
    # the tuned strategy (a weight set every search screens) beats this weak population;
    # a search this small that found nothing would be weak evidence, and say so
    assert ("BEATEN" in first) != ("a smaller search than the default audit's" in first)
    _, _, data = eqm.load_population("suits", pop)
    (rec,) = eqm.shipped_audits(data)
    assert rec["seed"] == 5 and rec["gain_lo"] <= rec["gain"] <= rec["gain_hi"]
    side = config.load_strategy("suits", str(tmp_path / "r.toml"))
    assert (
        side.spec and "# its gain over ½ against the mixture" in (tmp_path / "r.toml").read_text()
    )
    j = cli(["suits", "audit", "--population", pop, *small, "--seed", 6, "--json"], tmp_path)
    out = json.loads(j.stdout)
    assert out["audit"]["seed"] == 6 and out["recorded"][0]["seed"] == 5
    p2 = cli(["suits", "audit", "--population", pop, *small, "--seed", 6], tmp_path)
    assert "this audit and the last recorded one" in p2.stdout
    for args, words in (
        (["--audit", "0"], "--audit must be between 1 and 100"),
        (["--population", tmp_path / "none"], "no equilibrium population here"),
        (["--restarts", "0"], "--restarts"),
    ):
        bad = cli(["suits", "audit", *args], tmp_path)
        assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
        assert words in bad.stderr
