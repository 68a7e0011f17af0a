"""The index that shows: per game a headline chart and the largest balance
problems, ranked, each linking to its row of the verdict on the game's page."""

from __future__ import annotations

import re

import pandas as pd

from balance import design, report

SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="5" height="5"/></svg>'


def _row(variant, prop, value, lo, hi, status, excess, n=1000):
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
        "excess": excess,
        "field": "x, y",
    }


def assessment() -> pd.DataFrame:
    rows = [
        _row("base", "seat_fairness", 0.60, 0.59, 0.61, "fails", 5.0),
        _row("base", "dominance", 0.73, 0.72, 0.74, "fails", 8.0),
        _row("base", "draws", 0.01, 0.0, 0.02, "meets", 0.0),
        _row("heal", "draws", 0.50, 0.48, 0.52, "fails", 40.0),
        _row("heal", "round_cap", 0.30, 0.28, 0.32, "fails", 25.0),
        _row("heal", "seat_fairness", 0.52, 0.44, 0.60, "unclear", 0.0),
        _row("fast", "length", 2.0, 1.8, 2.2, "fails", 1.0),
        _row("fast", "dominance", 0.66, 0.655, 0.67, "fails", 1.0),
        _row("fast", "draws", 0.12, 0.11, 0.13, "fails", 2.0),
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


def test_problems_are_ranked_by_effect_and_capped_at_five():
    p = design.problems(assessment())
    assert list(zip(p["variant"], p["property"], strict=True)) == [
        ("heal", "draws"),
        ("heal", "round_cap"),
        ("base", "dominance"),
        ("base", "seat_fairness"),
        ("fast", "draws"),
    ]


def test_index_shows_chart_and_ranked_problems_linking_to_the_evidence(tmp_path):
    index = report.write_index(tmp_path, [_game()])
    html = index.read_text(encoding="utf-8")
    page = (tmp_path / "tosk.html").read_text(encoding="utf-8")
    # the headline chart is on the index
    assert "<svg" in html and "Variants at a glance" in html
    # the problems, in order, each linking to a row that exists on the page
    problems = re.search(r'<ol class="problems">(.*?)</ol>', html, re.S).group(1)
    links = re.findall(r'<a href="([^"]+)">([^<]+)</a>', problems)
    assert [t for _, t in links] == [
        "heal, draws",
        "heal, round-cap draws",
        "base, best script&#39;s score (scripted field)",
        "base, seat fairness",
        "fast, draws",
    ]
    for href, _ in links:
        file, anchor = href.split("#")
        assert file == "tosk.html"
        assert f'id="{anchor}"' in page, anchor
    assert links[0][0] == "tosk.html#game-0-Tosk-verdict-heal-draws"
    # the figure with its CI and the old sentences, lower down
    assert "50.0% [48.0, 52.0]" in problems
    assert html.index('class="problems"') < html.index("A sentence of the old summary.")
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
