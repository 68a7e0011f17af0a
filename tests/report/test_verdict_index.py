"""The index that shows: per game a headline chart and the largest balance
problems, ranked, each linking to its row of the verdict on the game's page."""

from __future__ import annotations

import re

import pandas as pd

from balance import design, report

SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="5" height="5"/></svg>'


def _row(variant, prop, value, lo, hi, status, t_lo=None, t_hi=None, n=1000, field="x, y"):
    return {
        "variant": variant,
        "property": prop,
        "value": value,
        "lo": lo,
        "hi": hi,
        "n": n,
        "target": "t",
        "status": status,
        "text": f"{design.LABELS[prop]}: {status} — {variant} {prop} {100 * value:.1f}% "
        f"[{100 * lo:.1f}, {100 * hi:.1f}]",
        "label": design.LABELS[prop],
        "excess": 0.0,
        "field": field,
        "target_lo": t_lo,
        "target_hi": t_hi,
    }


SEAT, DOM, LEN = (0.47, 0.53), (None, 0.65), (6, 40)
DRAWS, CAP = (None, 0.10), (None, 0.05)


def assessment() -> pd.DataFrame:
    """Each failing row's multiple (distance past the target / the interval's
    half-width facing it) in its comment."""
    rows = [
        _row("base", "seat_fairness", 0.60, 0.59, 0.61, "fails", *SEAT),  # 7 pp / 1 pp = 7
        _row("base", "dominance", 0.73, 0.72, 0.74, "fails", *DOM),  # 8 pp / 1 pp = 8
        _row("base", "draws", 0.01, 0.0, 0.02, "meets", *DRAWS),  # shown within: never listed
        _row("heal", "draws", 0.50, 0.48, 0.52, "fails", *DRAWS),  # 40 / 2 = 20
        _row("heal", "round_cap", 0.30, 0.28, 0.32, "fails", *CAP),  # 25 / 2 = 12.5
        _row("heal", "seat_fairness", 0.52, 0.44, 0.60, "unclear", *SEAT),  # -1 / 8: not shown
        _row("fast", "length", 2.0, 1.5, 2.5, "fails", *LEN),  # 4 rounds / 0.5 = 8
        _row("fast", "dominance", 0.66, 0.655, 0.67, "fails", *DOM),  # 1 / 0.5 = 2
        _row("fast", "draws", 0.12, 0.115, 0.125, "fails", *DRAWS),  # 2 / 0.5 = 4
    ]
    return pd.DataFrame(rows, columns=design.COLUMNS)


def _game():
    return {
        "name": "Tosk",
        "game": "tosk",
        "tables": {},
        "charts": {"overview": SVG, "rounds": SVG},
        "manifest": {},
        "summary": ["A sentence of the old summary."],
        "assessment": assessment(),
        "cap_warnings": ["warning: heal, x vs y: 30.0% [28.0, 32.0] of 1,000 games ..."],
        "variants": ["base", "heal", "fast"],
    }


def _pairs(p: pd.DataFrame) -> list[tuple[str, str]]:
    return list(zip(p["variant"], p["property"], strict=True))


def test_problems_rank_base_first_then_variants_by_multiples_of_the_interval():
    p = design.problems(assessment())
    # base's own problems first, though every variant's lies further out;
    # then the variants', capped at five (heal's unshown seat fairness is sixth)
    assert _pairs(p) == [
        ("base", "dominance"),
        ("base", "seat_fairness"),
        ("heal", "draws"),
        ("heal", "round_cap"),
        ("fast", "length"),
        ("fast", "draws"),
        ("fast", "dominance"),
    ]
    assert list(p["group"]) == ["base"] * 2 + ["variants"] * 5
    assert [round(m, 6) for m in p["multiple"]] == [8, 7, 20, 12.5, 8, 4, 2]
    # a property shown within its target is never listed
    assert ("base", "draws") not in _pairs(design.problems(assessment(), limit=50))
    assert design.problems(assessment(), limit=1)["variant"].tolist() == ["base", "heal"]


def test_one_scale_across_units():
    """A property 2 half-widths past its target ranks above one 1.5 half-widths
    past, whatever the units: 30 rounds past the 40-round bound is the larger
    distance in its unit (and 75% of the bound, the old ranking's measure), yet
    3 pp past 53% with a 1-pp half-width is further in multiples of the CI."""
    a = pd.DataFrame(
        [
            _row("base", "length", 70.0, 50.0, 90.0, "fails", *LEN),
            _row("base", "seat_fairness", 0.56, 0.55, 0.57, "fails", *SEAT),
            _row("base", "diversity", 1.0, 1.0, 1.0, "fails", 2, None),
        ],
        columns=design.COLUMNS,
    )
    p = design.problems(a).set_index("property")
    assert list(p.index) == ["seat_fairness", "diversity", "length"]
    # the distance in the property's own unit, as its metric declares it
    assert design.unit("length") == ("rounds", 1.0) and design.unit("draws")[0] == "share"
    assert p.loc["seat_fairness", "beyond_text"] == "3.0 pp above the 53% bound"
    assert p.loc["seat_fairness", "multiple_text"] == "3.0 × its 95% CI half-width (1.00 pp)"
    assert p.loc["length", "beyond_text"] == "30.0 rounds above the 40-round bound"
    assert p.loc["length", "multiple"] == 1.5 and p.loc["length", "beyond"] == 30.0
    # a count of strategies: its zero-width interval read as half a strategy each side
    assert p.loc["diversity", "beyond_text"] == "1 strategy below the 2-strategy bound"
    assert p.loc["diversity", "multiple"] == 2.0


def test_not_shown_is_listed_and_labelled_as_not_shown(tmp_path):
    p = design.problems(assessment(), limit=50)
    r = p[(p["variant"] == "heal") & (p["property"] == "seat_fairness")].iloc[0]
    assert r["status"] == "unclear" and -1 < r["multiple"] < 0
    assert r["beyond_text"] == "1.0 pp inside the 53% bound"
    g = _game()
    g["assessment"] = pd.DataFrame(
        [_row("base", "seat_fairness", 0.52, 0.44, 0.60, "unclear", *SEAT)], columns=design.COLUMNS
    )
    html = report.render_index([g])
    item = re.search(r'<ol class="problems">(.*?)</ol>', html, re.S).group(1)
    assert "not shown — 52.0% [44.0, 60.0]" in item and "shown outside" not in item


def test_the_base_rules_failure_comes_first_tosk_case(tmp_path):
    """Issue 45: Tosk's index listed five game-length failures of 4-5-variant
    combinations and not base's own failure. Base's comes first, however much
    further out the combinations' lie."""
    combos = ["a+b+c+d", "a+b+c+e", "a+b+d+e", "a+c+d+e", "a+b+c+d+e"]
    rows = [_row("base", "dominance", 0.66, 0.655, 0.665, "fails", *DOM)]  # 2 half-widths
    rows += [_row(v, "length", 73.2, 72.8, 73.6, "fails", *LEN) for v in combos]  # 83
    g = _game()
    g["assessment"] = pd.DataFrame(rows, columns=design.COLUMNS)
    g["variants"] = ["base", *combos]
    html = report.render_index([g])
    lists = re.findall(r'<ol class="problems">(.*?)</ol>', html, re.S)
    assert len(lists) == 2
    first = re.findall(r'<a href="[^"]+">([^<]+)</a>', lists[0])
    assert first == ["base, best script&#39;s score (scripted field)"]
    assert html.index("<h4>Base rules</h4>") < html.index("<h4>Variants</h4>")
    assert "1.0 pp above the 65% bound, 2.0 × its 95% CI half-width" in lists[0]
    assert "33.2 rounds above the 40-round bound" in lists[1]


def test_index_shows_chart_and_ranked_problems_linking_to_the_evidence(tmp_path):
    index = report.write_index(tmp_path, [_game()])
    html = index.read_text(encoding="utf-8")
    page = (tmp_path / "tosk.html").read_text(encoding="utf-8")
    # the headline chart is on the index
    assert "<svg" in html and "Variants at a glance" in html
    # the problems, in order, each linking to a row that exists on the page
    problems = "".join(re.findall(r'<ol class="problems">(.*?)</ol>', html, re.S))
    links = re.findall(r'<a href="([^"]+)">([^<]+)</a>', problems)
    assert [t for _, t in links] == [
        "base, best script&#39;s score (scripted field)",
        "base, seat fairness",
        "heal, draws",
        "heal, round-cap draws",
        "fast, game length",
        "fast, draws",
        "fast, best script&#39;s score (scripted field)",
    ]
    for href, _ in links:
        file, anchor = href.split("#")
        assert file == "tosk.html"
        assert f'id="{anchor}"' in page, anchor
    assert links[2][0] == "tosk.html#game-0-Tosk-verdict-heal-draws"
    # the figure with its CI, n and the distance on both scales; the old sentences lower down
    assert "50.0% [48.0, 52.0] (n = 1,000 games; target t): 40.0 pp above the 10% bound" in problems
    assert "20.0 × its 95% CI half-width (2.00 pp)" in problems
    assert html.index('class="problems"') < html.index("A sentence of the old summary.")
    # the base rules' verdict on the scripted field leads, labelled a baseline
    lead = html.index(report.EQ_BASELINE.replace("'", "&#39;"))
    assert lead < html.index('class="problems"')
    assert "the base rules: not balanced — fails" in html[lead:]
    # the round-cap warnings are counted, linked and listed on the page
    assert 'href="tosk.html#game-0-Tosk-round-cap"' in html
    assert 'id="game-0-Tosk-round-cap"' in page and "warning: heal, x vs y" in page


def test_page_shows_the_verdict_table_per_ruleset(tmp_path):
    html = report.write_page(tmp_path / "t.html", [_game()]).read_text(encoding="utf-8")
    assert html.index("Balance verdict per ruleset") < html.index("Variants at a glance")
    assert "not balanced" in html
    # every property row says status, value [CI], n and target
    row = re.search(r'<tr id="game-0-Tosk-verdict-base-dominance".*?</tr>', html, re.S).group(0)
    assert "fails" in row and "73.0% [72.0, 74.0]" in row and "1,000" in row


def test_missing_cells_carry_a_reason():
    cell = str(report.table_cell("—"))
    assert 'title="not measured' in cell
    assert "title" not in str(report.table_cell("12.0%", 0.12))


def test_index_without_an_assessment_still_renders(tmp_path):
    g = _game()
    g.pop("assessment")
    html = report.render_index([g])
    assert "No balance verdict" in html and "A sentence of the old summary." in html


# --------------------------------------------------------------------------- the lead sentence
def _eq_game(play: dict | None = None, status: str | None = None, game: str = "tosk") -> dict:
    """A game whose study record carries an equilibrium summary (the small
    development population's, ``tests/report/data``), its play figures
    replaced by ``play``; the verdicts judged against Tosk's targets."""
    import json
    from pathlib import Path

    s = json.loads(
        (Path(__file__).parent / "data" / f"equilibrium-{game}.json").read_text(encoding="utf-8")
    )
    for key, fig in (play or {}).items():
        s["play"][key] = {**s["play"][key], **fig}
    if status:
        s["status"] = status
    g = _game()
    th = design.load_thresholds("tosk")
    g["equilibrium"] = {"summary": s, "assessment": design.equilibrium_rows(s, th)}
    return g


MEETS = {
    "seat_share": {"mean": 0.50, "lo": 0.48, "hi": 0.52},
    "rounds": {"mean": 20.0, "lo": 19.0, "hi": 21.0},
    "draws": {"mean": 0.01, "lo": 0.0, "hi": 0.02},
    "round_cap": {"mean": 0.0, "lo": 0.0, "hi": 0.01},
}


def _lead(g: dict) -> str:
    x = report.index_lead(g)
    return f"{x['question']} {x['answer']}{x['rest']}"


def test_lead_says_yes_when_every_target_is_shown_met_at_an_equilibrium():
    g = _eq_game(MEETS)
    x = report.index_lead(g)
    assert (x["answer"], x["status"]) == ("Yes", "meets")
    text = _lead(g)
    assert text.startswith(
        "Are the base rules balanced? Yes, under equilibrium play (both seats drawing from "
        "the equilibrium mixture): shown within the target: seat fairness 50.0% [48.0, 52.0] "
        "(target 47–53% of decided games), game length 20.0 [19.0, 21.0] rounds"
    )
    assert "(n = 1,000 games on 500 deals)" in text and "not shown either way" not in text
    assert "An equilibrium within ε = 2 points is shown" in text


def test_lead_says_no_when_a_target_is_shown_missed():
    # the development population's own figures: games stall at the round cap
    g = _eq_game({"seat_share": MEETS["seat_share"]})
    x = report.index_lead(g)
    assert (x["answer"], x["status"]) == ("No", "fails")
    text = _lead(g)
    assert "No, under equilibrium play" in text
    assert "shown outside the target: game length 99.3 [98.8, 99.8] rounds (target 6–40" in text
    assert "shown within the target: seat fairness 50.0% [48.0, 52.0]" in text


def test_lead_says_not_shown_when_a_target_is_neither_met_nor_missed():
    g = _eq_game({**MEETS, "seat_share": {"mean": 0.52, "lo": 0.49, "hi": 0.55}})
    x = report.index_lead(g)
    assert (x["answer"], x["status"]) == ("Not shown", "unclear")
    text = _lead(g)
    assert "not shown either way: seat fairness 52.0% [49.0, 55.0] (target 47–53%" in text
    assert "shown outside" not in text


def test_lead_says_not_shown_when_the_equilibrium_is_not_shown():
    # Clash's development population: its search stopped at the budget with a gap
    g = _eq_game(MEETS, game="clash")
    x = report.index_lead(g)
    assert (x["answer"], x["status"]) == ("Not shown", "unclear")
    text = _lead(g)
    assert "An equilibrium within ε = 2 points is not shown" in text
    # the figures at the mixture found, said to be that, not an equilibrium's
    assert (
        "At the best mixture found, which is not shown to be an equilibrium: shown within" in text
    )


def test_lead_of_a_game_without_a_population_says_not_measured():
    g = _game()
    g["equilibrium"] = {"absent": "record"}
    x = report.index_lead(g)
    assert x["answer"] == "Not measured" and "made before the study measured" in x["rest"]
    assert report.index_lead(_game()) is None  # a report of chosen runs: no lead


def test_the_index_leads_with_the_answer_then_the_baseline_then_the_problems():
    html = report.render_index([_eq_game(MEETS)])
    answer = html.index("Are the base rules balanced?")
    baseline = html.index(report.EQ_BASELINE.replace("'", "&#39;"))
    assert answer < baseline < html.index('<ol class="problems">')
    assert html.index('<ol class="problems">') < html.index("Variants at a glance")
