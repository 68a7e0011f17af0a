"""The section a study's game page leads with: the verdicts under equilibrium
play (``balance.pages.add_equilibrium``, ``balance.report._equilibrium_section``),
and the index's lead line per game.

The summaries are ``balance.equilibrium.measure_shipped``'s dicts as the study
keeps them in its record (``tests/report/data/``: Clash's and Tosk's small
development populations measured at the study's settings; the Clash file's
two-step curve is written in by hand, as a population file records one,
because the development population recorded none)."""

from __future__ import annotations

import html as htmllib
import json
import re
from pathlib import Path

import pytest

from balance import design, pages, report, verdicts
from tests.report.test_verdict_index import _game

DATA = Path(__file__).parent / "data"


def _summary(game: str) -> dict:
    return json.loads((DATA / f"equilibrium-{game}.json").read_text(encoding="utf-8"))


def _page(game: str = "clash", summary: dict | None = None) -> dict:
    g = _game()
    g["name"], g["game"] = game.capitalize(), game
    pages.add_equilibrium(g, game, _summary(game) if summary is None else summary)
    return g


def _text(html: str) -> str:
    """The page's text, tags dropped and entities decoded, spaces folded."""
    return " ".join(htmllib.unescape(re.sub(r"<[^>]+>", " ", html)).split())


def _section(html: str) -> str:
    return re.search(r'<section class="equilibrium".*?</section>', html, re.S).group(0)


@pytest.mark.slow
def test_the_equilibrium_section_comes_first(tmp_path):
    html = report.write_page(tmp_path / "c.html", [_page()]).read_text(encoding="utf-8")
    first = html.index('<section class="equilibrium"')
    assert first < html.index("<h2>Summary</h2>") < html.index("Balance verdict per ruleset")
    # nothing of the game's own content comes before it: only the page's header
    assert "<table" not in html[:first] and "<svg" not in html[:first]
    base = html.index(report.EQ_BASELINE.replace("'", "&#39;"))
    assert html.index("</section>", first) < base < html.index("<h2>Summary</h2>")
    assert "<h2>Under equilibrium play</h2>" in html


@pytest.mark.slow
def test_the_section_shows_the_summary_numbers(tmp_path):
    s = _summary("clash")
    g = _page("clash", s)
    sec = _text(_section(report.write_page(tmp_path / "c.html", [g]).read_text(encoding="utf-8")))
    e = s["exploitability"]
    # status: not shown, with the gap, its interval and n
    gap = f"{100 * e['mean']:+.1f} points [{100 * e['lo']:+.1f}, {100 * e['hi']:+.1f}]"
    assert s["status"] == "budget"
    assert (
        f"An equilibrium within ε = 2 points is not shown: the gap at the budget spent is {gap} "
        f"(n = {e['n']:,} deals, {e['games']:,} games)" in sec
    )
    assert "a lower bound" in sec and s["searched"] in sec
    # the verdicts: the value, interval and n of each play figure, and the status
    # the design rule gives against the game's targets
    th = design.load_thresholds("clash")
    pl = s["play"]
    seat = pl["seat_share"]
    assert f"{100 * seat['mean']:.1f}% [{100 * seat['lo']:.1f}, {100 * seat['hi']:.1f}]" in sec
    want = design.status(seat["lo"], seat["hi"], th["seat_share_min"], th["seat_share_max"])
    assert f"seat fairness: {want}" in sec
    r = pl["rounds"]
    assert f"{r['mean']:.1f} [{r['lo']:.1f}, {r['hi']:.1f}] rounds" in sec
    assert (
        f"game length: {design.status(r['lo'], r['hi'], th['rounds_min'], th['rounds_max'])}" in sec
    )
    assert f"{pl['games']:,} games / {pl['deals']:,} deals" in sec
    # diversity, the dominant-strategy answer, the mixture
    assert f"Support: {s['support']['value']} [{s['support']['lo']}, {s['support']['hi']}]" in sec
    assert f"{s['effective']['value']:.2f} [{s['effective']['lo']:.2f}" in sec
    assert s["dominant"]["text"] in sec
    mix = re.search(r'<table class="sortable eq-mixture">.*?</table>', g_html(g, tmp_path), re.S)
    body = re.search(r"<tbody>(.*?)</tbody>", mix.group(0), re.S).group(1)
    rows = re.findall(r"<tr>(.*?)</tr>", body, re.S)
    assert len(rows) == len(s["members"])
    top = max(s["members"], key=lambda m: m["weight"])
    assert top["name"] in rows[0] and f"{100 * top['weight']:.1f}%" in rows[0]
    # content: every dead loadout and part named, and the chart drawn
    dead = [r["content"] for r in s["content"]["rows"] if r["status"] == "dead"]
    dead += [f"{p['name']} ({p['kind']})" for p in s["content"]["parts"] if p["status"] == "dead"]
    assert dead and f"Dead content: {', '.join(dead)}." in sec
    assert "the sides choose no content" not in sec.lower()
    assert "<svg" in _section(g_html(g, tmp_path))
    assert "Exploitability over the search" in sec


def g_html(g: dict, tmp_path: Path) -> str:
    return report.render_page([g])


@pytest.mark.slow
def test_a_game_without_content_says_so_in_one_line():
    sec = _text(_section(report.render_page([_page("tosk")])))
    assert "The sides choose no content in this game." in sec
    assert "An equilibrium within ε = 2 points is shown" in sec


@pytest.mark.slow
def test_a_game_without_a_shipped_population_says_so(tmp_path):
    folder = tmp_path / "strategies" / "tosk" / "equilibrium"
    g = _page("tosk", pages.missing_population("tosk", folder))
    index = report.write_index(tmp_path / "out", [g])
    page = (tmp_path / "out" / "tosk.html").read_text(encoding="utf-8")
    sec = _text(_section(page))
    line = (
        f"No equilibrium population is shipped for this game ({folder}): make one with "
        f"`balance tosk equilibrium --out {folder}`."
    )
    assert sec == f"Under equilibrium play {line}"
    assert line in _text(index.read_text(encoding="utf-8"))
    # a study record made before equilibrium play says that instead
    g2 = _game()
    pages.add_equilibrium(g2, "tosk", None)
    assert "this study record was made before" in _text(report.render_page([g2]))


@pytest.mark.slow
def test_the_index_leads_with_the_equilibrium_verdicts(tmp_path):
    s = _summary("clash")
    index = report.write_index(tmp_path, [_page("clash", s)]).read_text(encoding="utf-8")
    card = _text(index)
    lead = card.index("Are the base rules balanced? Not shown , under equilibrium play")
    assert lead < card.index("Scripted field (a baseline") < card.index("Largest problems")
    assert "An equilibrium within ε = 2 points is not shown" in card[lead:]
    # the detail one click away: the dominant-strategy line and each verdict's sentence
    assert "A dominant strategy (one strategy an equilibrium by itself): not shown" in card
    detail = card.index("Equilibrium play in detail")
    assert detail < card.index("seat fairness: ") and detail < card.index("game length: ")
    assert 'href="clash.html#game-0-Clash-equilibrium"' in index
    assert 'id="game-0-Clash-equilibrium"' in (tmp_path / "clash.html").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("seat", "want"),
    [
        ({"mean": 0.50, "lo": 0.48, "hi": 0.52}, "meets"),  # inside 47–53%
        ({"mean": 0.60, "lo": 0.58, "hi": 0.62}, "fails"),  # wholly above
        ({"mean": 0.52, "lo": 0.49, "hi": 0.55}, "unclear"),  # straddles 53%
    ],
)
def test_equilibrium_verdicts_use_the_three_outcome_rule(seat, want):
    th = {**design.load_thresholds("tosk"), "seat_share_min": 0.47, "seat_share_max": 0.53}
    s = _summary("tosk")
    s["play"]["seat_share"] = {**s["play"]["seat_share"], **seat}
    a = design.equilibrium_rows(s, th)
    assert list(a["property"]) == list(design.EQUILIBRIUM_PROPERTIES)
    row = a[a["property"] == "seat_fairness"].iloc[0]
    assert row.status == want == design.status(seat["lo"], seat["hi"], 0.47, 0.53)
    assert row.field == "equilibrium play" and row.n == s["play"]["games"]


def test_the_scripted_dominance_is_named_for_what_it_shows():
    assert design.LABELS["dominance"] == "best script's score (scripted field)"
    # the ratings sentence never says "no strategy dominates" beside a failing
    # best-script's-score verdict
    import pandas as pd

    rt = pd.DataFrame(
        {
            "variant": ["base", "base"],
            "strategy": ["a", "b"],
            "elo": [100.0, -100.0],
            "elo_lo": [90.0, -110.0],
            "elo_hi": [110.0, -90.0],
            "games": [1000, 1000],
            "dominant": [False, False],
            "nash_p": [1.0, 0.0],
        }
    )
    lines = " ".join(verdicts._ratings({"ratings": rt}))
    assert "dominates" not in lines.lower() and "scripted field" in lines


def test_the_study_settings_of_the_equilibrium_check():
    from balance import equilibrium, study
    from balance.errors import UserError

    kw = study.equilibrium_settings("tosk", {"equilibrium": {"budget": 6, "games": 300}}, 0.5)
    # the study's smaller audit by default; game counts x scale (even), the budget as set
    assert kw["budget"] == 6 and kw["games"] == 150
    assert kw["confirm_games"] == study._eq_defaults()["confirm_games"] // 2
    full = study.equilibrium_settings("tosk", {}, 1.0)
    assert full["budget"] == equilibrium.CHECK["budget"]
    assert full["restarts"] == equilibrium.CHECK["restarts"] == 1
    for bad, word in (
        ({"budgets": 3}, "unknown key 'budgets'"),
        ({"games": 0}, "'games' must be a whole number"),
        ({"games": 2.5}, "'games' must be a whole number"),
        ("fast", "must be a table"),
    ):
        with pytest.raises(UserError, match=word) as e:
            study.equilibrium_settings("tosk", {"equilibrium": bad}, 1.0)
        assert "\n" not in str(e.value)


@pytest.mark.parametrize("resamples", [0, 200])
def test_the_diversity_sentence_never_cites_zero_resamples(resamples):
    # a one-strategy equilibrium (Tosk's) has nothing to resample: its ranges are
    # exact, and "2.5–97.5% of 0 bootstrap resamples" said something untrue
    s = _summary("tosk")
    s["resamples"] = resamples
    sec = report._equilibrium_section(_page("tosk", s), "x")
    text = sec["diversity"]
    assert "of 0 bootstrap" not in text
    if resamples:
        assert "2.5–97.5% of 200 bootstrap resamples of the deals" in text
    else:
        assert "one strategy: no resampling can change it" in text
