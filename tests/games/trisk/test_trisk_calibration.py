"""Budget points in the equal-power test (issue 42): per-stat calibration
curves that may bend at 0, each card's effect in budget points with Fieller's
interval, and the detectable deviation with its interval.

The rulebook: "Every card is built to be equal in power." The budget
(configs/trisk/BUDGET.md) prices that claim in points ("hp 1", "ap 2" a
point of AP); the test measures score. The fast tests drive the conversion
on simulated per-deal data with known rates and measure its coverage; the
slow one plays a designer's set on the engine.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from balance.games.trisk import power as tp
from balance.games.trisk.cards import REFERENCE_SET, load_card_set

Z = tp._Z95


# ----------------------------------------------------------------------------- Fieller
def test_fieller_is_bounded_exactly_when_the_rates_interval_excludes_zero():
    # den 0.5 with sd 0.2: its interval excludes 0 -> a finite interval around 2
    f = tp.fieller(1.0, 0.5, 0.04, 0.04)
    assert f["kind"] == "interval" and f["bounded"]
    assert f["lo"] < 2.0 < f["hi"] and f["value"] == pytest.approx(2.0)
    # the ends solve |num - θ den| = z sd(num - θ den)
    for t in (f["lo"], f["hi"]):
        assert abs(1.0 - t * 0.5) == pytest.approx(Z * math.sqrt(0.04 + t * t * 0.04))
    # den 0.3 with sd 0.2: its interval reaches 0 -> unbounded, and it says so
    g = tp.fieller(1.0, 0.3, 0.0001, 0.04)
    assert g["kind"] in ("outside", "all") and not g["bounded"]
    assert g["lo"] == -math.inf and g["hi"] == math.inf
    assert "unbounded" in tp.fmt_budget(g) and "inf" not in tp.fmt_budget(g)
    h = tp.fieller(0.01, 0.3, 0.04, 0.04)  # neither measured: every value
    assert h["kind"] == "all"
    # a rate shown below 0 (more of the stat scored less): bounded, and marked
    neg = tp.fieller(-1.0, -0.5, 0.04, 0.01)
    assert neg["bounded"] and neg["falling"] and neg["lo"] < 2 < neg["hi"]
    assert "falling" in tp.fmt_budget(neg) and not f["falling"]
    # a perfectly correlated numerator: the ratio is known exactly
    k = tp.fieller(1.0, 0.5, 0.04, 0.01, cov=0.02)
    assert k["lo"] == pytest.approx(2.0) and k["hi"] == pytest.approx(2.0)


def test_fieller_with_a_constant_numerator_is_the_rate_interval_inverted():
    f = tp.fieller(0.01, 0.005, 0.0, 0.001**2)
    lo, hi = 0.005 - Z * 0.001, 0.005 + Z * 0.001
    assert f["lo"] == pytest.approx(0.01 / hi) and f["hi"] == pytest.approx(0.01 / lo)


def test_fieller_covers_a_known_ratio_95_percent_of_the_time():
    """Exact for normal estimates: 95% whether the rate is well measured or
    not (then many sets are unbounded, never a fake finite one)."""
    rng = np.random.default_rng(1)
    for rate, sd_rate in ((0.5, 0.08), (0.2, 0.12)):
        truth, sd_e, rho = 3.0, 0.3, 0.4
        cov = rho * sd_e * sd_rate
        ch = np.linalg.cholesky([[sd_e**2, cov], [cov, sd_rate**2]])
        hits = unbounded = 0
        n = 4000
        for _ in range(n):
            e, r = np.array([truth * rate, rate]) + ch @ rng.standard_normal(2)
            f = tp.fieller(e, r, sd_e**2, sd_rate**2, cov)
            unbounded += not f["bounded"]
            if f["kind"] == "outside":
                hits += not (f["gap_lo"] < truth < f["gap_hi"])
            else:
                hits += f["lo"] <= truth <= f["hi"]
        assert 0.935 <= hits / n <= 0.965, (rate, hits / n)
        if sd_rate > rate / 2:
            assert unbounded > n / 10  # a rate within 2 SE of 0 often gives no bound


# ----------------------------------------------------------------------------- the curves
def _points():
    return [
        {"name": "ap+1", "stat": "ap", "budget": 2.0},
        {"name": "ap+2", "stat": "ap", "budget": 4.0},
        {"name": "ap-1", "stat": "ap", "budget": -2.0},
        {"name": "hp-4", "stat": "hp", "budget": -4.0},
        {"name": "hp+4", "stat": "hp", "budget": 4.0},
    ]


def _const(v: float) -> tp.Est:
    return tp.Est(v, np.zeros(10))


def test_secant_reads_each_stats_curve_on_its_own_side():
    ests = {"ap+1": _const(0.002), "ap+2": _const(0.03), "ap-1": _const(-0.02)}
    ests |= {"hp-4": _const(-0.016), "hp+4": _const(0.012)}
    pts = _points()
    # at a calibration card: exactly its effect / its budget
    assert tp.secant("ap", 2.0, pts, ests).mean == pytest.approx(0.001)
    assert tp.secant("ap", 4.0, pts, ests).mean == pytest.approx(0.0075)
    # between two cards: straight between them (g(3) = (0.002 + 0.03)/2)
    assert tp.secant("ap", 3.0, pts, ests).mean == pytest.approx(0.016 / 3)
    # nearer the origin / beyond the farthest: that card's line through 0
    assert tp.secant("ap", 1.0, pts, ests).mean == pytest.approx(0.001)
    assert tp.secant("ap", 8.0, pts, ests).mean == pytest.approx(0.0075)
    # below the budget: only the cards below (a positive rate from negative effects)
    assert tp.secant("ap", -4.0, pts, ests).mean == pytest.approx(0.01)
    assert tp.secant("armor", 2.0, pts, ests) is None
    rates = tp.side_rates(pts, ests)
    assert rates["ap+"]["rate"] == pytest.approx((2 * 0.002 + 4 * 0.03) / 20)
    assert rates["pooled-"]["rate"] == pytest.approx((2 * 0.02 + 4 * 0.016) / 20)
    # one stat: that curve; abilities ("other"): the pooled curve of their side
    r, w = tp.card_rate({"ap": 2.0}, rates, pts, ests)
    assert w == {"ap@+2": 1.0} and r.mean == pytest.approx(0.001)
    r, w = tp.card_rate({"hp": -4.0, "other": 4.0}, rates, pts, ests)
    assert w == {"hp@-4": 0.5, "pooled+": 0.5}
    assert r.mean == pytest.approx(0.5 * 0.004 + 0.5 * rates["pooled+"]["rate"])
    assert tp.card_rate({}, rates, pts, ests) == (None, {})


def test_budget_components_split_a_cards_price_by_stat():
    cs = load_card_set(REFERENCE_SET)
    neutral = cs.cards[cs.neutral]
    bear = cs.cards[cs.row("Bear")]
    # BUDGET.md: "points = hp·HP + ap·AP + mp·MP + armor·Armor + ..." with hp 1,
    # ap 2, mp 1, armor 2; the unlock discount 0.5 a level. Bear 7 HP, AP 4, MP 2,
    # Armor 1, Attack at 1 against the neutral's 15, 3, 0, 0, at 2.
    comp = tp.budget_components(bear, neutral, cs.skills, cs.budget)
    assert comp["hp"] == -8 and comp["ap"] == 2 and comp["mp"] == 2 and comp["armor"] == 2
    assert comp["attack"] == 0.5 and comp["other"] > 0  # Hibernate
    assert sum(comp.values()) == pytest.approx(cs.points(cs.row("Bear")) - cs.points(cs.neutral))
    plus = {**neutral, "ap": neutral["ap"] + 1}
    assert tp.budget_components(plus, neutral, cs.skills, cs.budget) == {"ap": 2.0}
    curse = cs.cards[cs.row("Curse of Dread")]
    assert tp.budget_components(curse, neutral, cs.skills, cs.budget) == {
        "other": cs.points(cs.row("Curse of Dread")) - cs.points(cs.neutral)
    }


def test_calibration_cards_move_each_stat_both_ways_where_the_neutral_can():
    cs = load_card_set(REFERENCE_SET)
    cal = tp.calibration_cards(cs)
    sides = {(c["stat"], c["budget"] > 0) for c in cal}
    for stat in ("hp", "ap", "attack"):
        assert (stat, True) in sides and (stat, False) in sides
    for stat in ("mp", "armor", "flying"):  # the neutral has none: only up
        assert (stat, True) in sides
    by = {c["name"]: c for c in cal}
    assert by["Clay Golem +1 AP"]["budget"] == 2.0  # "ap = 2.0  # per AP"
    assert by["Clay Golem Flying"]["card"]["flying"] is True
    assert by["Clay Golem Flying"]["budget"] == 3.0  # "flying = 3.0"
    assert by["Clay Golem Attack at 4"]["budget"] == -1.0  # 0.5 a level later
    assert len({c["name"] for c in cal}) == len(cal)


# ----------------------------------------------------------------------------- coverage
def _simulate(rng, strata, deals, effects, sd=0.6, ref_sd=0.4):
    """Per-deal differences (swap − reference) of several swapped decks on
    the same deals: each deck's own noise plus the reference deck's, shared
    by all (what makes the calibration cards and the cards correlated)."""
    ref = rng.normal(0, ref_sd, (strata, deals))
    return {
        k: [rng.normal(mu, sd, deals) - ref[s] for s in range(strata)] for k, mu in effects.items()
    }


@pytest.mark.parametrize("weak", [False, True])
def test_conversion_covers_the_true_budget_points_95_percent(weak):
    """The whole conversion step (per-deal influences, the curves, a card's
    mix of them, the covariance, Fieller) against known rates: a designer's
    +1 AP card (2 budget points on the AP curve) and a mixed card (−8 HP,
    +2 AP, +1.5 of abilities) whose true budget points are its true effect
    over its true rate. Its effect is measured on the first half of the
    calibration's deals (the cards' runs are shorter), so the covariance is
    partial. With a weak AP rate many intervals are unbounded."""
    rng = np.random.default_rng(7 if weak else 3)
    ap_up = 0.002 if weak else 0.02  # per budget point
    sd, ref_sd = (0.6, 0.4) if weak else (0.15, 0.1)
    truth = {
        "ap+1": 2 * ap_up,
        "ap+2": 4 * ap_up * 1.5,  # convex: +2 AP worth more per point
        "hp-8": -8 * 0.004,
        "hp-4": -4 * 0.003,
        "fl+3": 3 * 0.02,
    }
    pts = [
        {"name": "ap+1", "stat": "ap", "budget": 2.0},
        {"name": "ap+2", "stat": "ap", "budget": 4.0},
        {"name": "hp-8", "stat": "hp", "budget": -8.0},
        {"name": "hp-4", "stat": "hp", "budget": -4.0},
        {"name": "fl+3", "stat": "flying", "budget": 3.0},
    ]
    mix = {"hp": -8.0, "ap": 2.0, "other": 1.5}
    pooled_up = (2 * truth["ap+1"] + 4 * truth["ap+2"] + 3 * truth["fl+3"]) / (4 + 16 + 9)
    mix_rate = (8 * 0.004 + 2 * ap_up + 1.5 * pooled_up) / 11.5
    n_budget = {"plus": 2.0, "mix": 3.0}  # the truth: what the conversion should find
    cards = {"plus": 2 * ap_up, "mix": 3.0 * mix_rate}
    hits = {k: 0 for k in cards}
    unbounded = 0
    reps, strata, deals = 600, 4, 160
    for _ in range(reps):
        data = _simulate(rng, strata, deals, {**truth, **cards}, sd, ref_sd)
        ests = {p["name"]: tp.est_of(data[p["name"]]) for p in pts}
        rates = tp.side_rates(pts, ests)
        for k, comp in (("plus", {"ap": 2.0}), ("mix", mix)):
            eff = tp.est_of([d[: deals // 2] for d in data[k]])
            rate, _ = tp.card_rate(comp, rates, pts, ests)
            f = tp.to_budget(eff, rate)
            unbounded += not f["bounded"]
            if f["kind"] == "outside":
                hits[k] += not (f["gap_lo"] < n_budget[k] < f["gap_hi"])
            else:
                hits[k] += f["lo"] <= n_budget[k] <= f["hi"]
    for k in cards:
        assert 0.93 <= hits[k] / reps <= 0.97, (k, hits[k] / reps)
    if weak:
        assert unbounded > reps / 10
    else:
        assert unbounded < reps / 50


def test_a_rate_from_several_cards_has_the_sandwich_se_of_the_sum():
    """Calibration cards share the reference deck's games: a rate's SE that
    treated them as independent would be wrong. The sandwich SE of the fitted
    rate matches its spread over replications."""
    rng = np.random.default_rng(11)
    pts = [
        {"name": "a", "stat": "hp", "budget": 4.0},
        {"name": "b", "stat": "hp", "budget": 8.0},
    ]
    rates, ses = [], []
    for _ in range(800):
        data = _simulate(rng, 3, 100, {"a": 0.01, "b": 0.03}, sd=0.3, ref_sd=0.6)
        ests = {k: tp.est_of(v) for k, v in data.items()}
        r = tp.side_rates(pts, ests)["hp+"]
        rates.append(r["rate"])
        ses.append(r["se"])
    assert np.mean(rates) == pytest.approx((4 * 0.01 + 8 * 0.03) / 80, rel=0.03)
    assert np.std(rates) == pytest.approx(np.mean(ses), rel=0.08)


def test_est_of_matches_pool_strata():
    rng = np.random.default_rng(2)
    diffs = [rng.normal(0.01, 0.4, 50) for _ in range(5)] + [rng.normal(0, 0.4, 30)]
    e, p = tp.est_of(diffs), tp.pool_strata(diffs)
    assert e.mean == pytest.approx(p["mean"]) and e.se == pytest.approx(p["se"])


def test_json_of_an_unbounded_interval_has_no_infinities():
    import json

    f = tp.fieller(1.0, 0.1, 0.0, 0.04)
    out = tp._finite({"x": [f, np.float64(1.5)]})
    text = json.dumps(out, allow_nan=False)
    assert '"kind": "all"' in text or '"kind": "outside"' in text
    assert out["x"][0]["lo"] is None and out["x"][1] == 1.5


# ----------------------------------------------------------------------------- the engine
def _engine_ready() -> bool:
    try:
        from sims.trisk import engine  # noqa: F401

        return REFERENCE_SET.is_file()
    except Exception:  # noqa: BLE001
        return False


def _designer_set(tmp_path: Path) -> Path:
    """The reference set plus two of a designer's cards: the neutral card with
    AP +1 (2 budget points over: "ap = 2.0  # per AP") and with AP −1."""
    text = REFERENCE_SET.read_text(encoding="utf-8").rstrip("\n") + "\n"
    for i, (name, ap) in enumerate((("Golem Plus", 4), ("Golem Minus", 2))):
        text += (
            f'\n[[card]]\nid = {900 + i}\nname = "{name}"\nset = "Basic"\n'
            f'finishes = ["Common"]\ntype = "Creation"\nkind = "Construct"\n'
            f'hp = 15\nap = {ap}\nattack = 2\ntext = "A designer\'s card."\n'
        )
    path = tmp_path / "designer.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.slow
@pytest.mark.skipif(not _engine_ready(), reason="Trisk engine or reference set not ready")
def test_a_designers_plus_one_ap_card_is_reported_near_its_two_budget_points(tmp_path):
    """On the engine, a small plan (the cards at 20 games a run, the
    calibration at 40: 2,000 and 4,000 games of each, every Primal against
    every field deck): the +1 AP card's interval covers its printed +2 budget
    points and the −1 AP card's its −2, each read on its own AP curve (one
    stat: exactly that stat's curve). The cards' runs are half the
    calibration's, so the card and the calibration card are not the same
    games."""
    cs_path = _designer_set(tmp_path)
    plan = replace(
        tp.load_plan(),
        card_set=str(cs_path),
        cards=("Golem Plus", "Golem Minus"),
        games=20,
        max_games=20,
        calibration_games=40,
        restricted_games=20,
        check_strategy=None,
        seed=5,
    )
    res = tp.run_power(
        plan, results=tmp_path / "store", progress=False, regression=False, finishes=False
    )
    conv = {c["card"]: c for c in res.calibration["cards"]}
    for name, printed in (("Golem Plus", 2.0), ("Golem Minus", -2.0)):
        c = conv[name]
        assert c["components"] == {"ap": printed}
        assert list(c["weights"]) == [f"ap@{printed:+g}"]
        f = c["budget"]
        if f["kind"] == "outside":
            assert not f["gap_lo"] < printed < f["gap_hi"]
        else:
            assert f["lo"] <= printed <= f["hi"], (name, f)
    # below the budget AP is measured at this size: a finite interval
    assert conv["Golem Minus"]["budget"]["bounded"]
    row = res.cards.set_index("card").loc["Golem Minus"]
    assert row["budget_interval"] == "interval" and row["budget_lo"] <= -2 <= row["budget_hi"]
    # the page and the JSON carry them; an unbounded end is never a number
    html = tp.render_power_page(res)
    assert "Each card in budget points" in html and "Budget points [95% CI]" in html
    data = tp.result_json(res)
    import json

    json.dumps(data["calibration"], allow_nan=False)
    assert {"hp+", "hp-", "ap+", "ap-", "pooled+", "pooled-"} <= set(data["calibration"]["rates"])
