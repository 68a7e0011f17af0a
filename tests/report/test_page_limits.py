"""Every page a study writes, held to the page limits in headless Chromium.

Issue 45 asks for pages that lead with the answer and stay readable: each page
at most 1 MB; the index and each game page at most 12 screens (12 x 900 px of
document height at 1400 x 900, every ``<details>`` closed as it is by
default); no sideways scroll at 1400 px, neither of the page nor of a table
inside it (every ``<details>`` opened, so what is folded away must fit too);
every chart's text at least 10 px as displayed (the SVG's font size times the
scale at which the browser draws the chart); and no console errors.

A study is built once, at a small scale (the pages have the same sections,
variants and strategies at any scale; only the intervals are wider), and every
``.html`` file it writes is measured: game pages, the detail pages they link
(``<game>/*.html``), the repair and analysis pages, and the index.

The Chromium launcher and the rule that CI never skips are
``tests/report/test_browser.py``'s.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.report.test_browser import BASE_CMD, _run, browser  # noqa: F401  (fixture)

WIDTH, HEIGHT = 1400, 900
MAX_BYTES = 1_000_000
MAX_SCREENS = 12
MIN_TEXT_PX = 10.0
SCALE = "0.001"  # the least `balance study --scale` allows: every section and variant, few games

# Runs in the page (minPx: the least chart text allowed; 0.01 px of rounding is let pass). Height first, as the page opens (every <details> closed); then
# every <details> opened, and the widths and chart text measured with all shown.
MEASURE_JS = """(minPx) => {
  const de = document.documentElement;
  const out = {height: de.scrollHeight};
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  out.scrollWidth = de.scrollWidth;
  out.clientWidth = de.clientWidth;
  const wide = [];
  document.querySelectorAll('body *').forEach(el => {
    const ox = getComputedStyle(el).overflowX;
    if ((ox === 'auto' || ox === 'scroll') && el.scrollWidth > el.clientWidth + 1) {
      const t = el.querySelector('table, svg');
      const what = t ? (t.className && t.className.baseVal !== undefined ? 'svg' : t.tagName)
                     : el.tagName;
      const head = el.closest('details, section');
      const sum = head && head.querySelector('summary, h2, h3');
      wide.push(`${what} in "${sum ? sum.textContent.trim().slice(0, 60) : ''}": `
                + `${el.scrollWidth} px in ${el.clientWidth} px`);
    }
  });
  out.wide = wide;
  const small = [];
  let least = null;
  document.querySelectorAll('svg text').forEach(t => {
    if (!t.textContent.trim()) return;
    const m = t.getScreenCTM();
    if (!m) return;
    const px = parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
    if (least === null || px < least) least = px;
    if (px < minPx - 0.01) small.push(`${px.toFixed(1)} px: ${t.textContent.trim().slice(0, 40)}`);
  });
  out.minText = least;
  out.small = small.slice(0, 10);
  out.nSmall = small.length;
  out.nText = document.querySelectorAll('svg text').length;
  return out;
}"""


def measure(chromium, path: Path) -> dict:
    """Open ``path`` at 1400 x 900 and measure it (see ``MEASURE_JS``); adds the
    file's ``bytes`` and the console ``errors``."""
    context = chromium.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("console", lambda m: m.type == "error" and errors.append(m.text))
        page.on("pageerror", lambda e: errors.append(f"uncaught: {e}"))
        page.goto(Path(path).resolve().as_uri(), wait_until="load")
        m = page.evaluate(MEASURE_JS, MIN_TEXT_PX)
    finally:
        context.close()
    m["bytes"] = Path(path).stat().st_size
    m["errors"] = errors
    return m


def problems(m: dict, screens: bool) -> list[str]:
    """What breaks the limits in a measure ``m`` (empty: the page is within them);
    ``screens``: the page is one that must fit in 12 screens (index, game pages)."""
    out = []
    if m["bytes"] > MAX_BYTES:
        out.append(f"{m['bytes']:,} bytes, above {MAX_BYTES:,}")
    if screens and m["height"] > MAX_SCREENS * HEIGHT:
        out.append(f"{m['height'] / HEIGHT:.1f} screens high, above {MAX_SCREENS}")
    if m["scrollWidth"] > m["clientWidth"]:
        out.append(f"the page scrolls sideways: {m['scrollWidth']} px in {m['clientWidth']} px")
    out += [f"scrolls sideways inside: {w}" for w in m["wide"]]
    if m["nSmall"]:
        out.append(f"{m['nSmall']} chart texts below {MIN_TEXT_PX:g} px, e.g. {m['small']}")
    out += [f"console: {e}" for e in m["errors"]]
    return out


def screens_apply(path: Path, root: Path) -> bool:
    """The 12-screen limit holds for the index and the game pages, the pages in the
    report folder itself; detail pages (``<game>/*.html``) are long by design."""
    return path.parent == root


# ---- the measure can fail --------------------------------------------------------------------
def _synthetic(tmp_path: Path, body: str) -> Path:
    page = tmp_path / "page.html"
    page.write_text(
        f'<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>{body}</body></html>',
        encoding="utf-8",
    )
    return page


@pytest.mark.slow
@pytest.mark.browser
def test_the_measure_finds_each_breach(browser, tmp_path):  # noqa: F811
    ok = _synthetic(
        tmp_path,
        '<p>short</p><svg width="400" height="100" viewBox="0 0 400 100">'
        '<text x="10" y="50" font-size="12">twelve</text></svg>',
    )
    m = measure(browser, ok)
    assert problems(m, screens=True) == [], m
    assert 11.9 < m["minText"] < 12.1

    tall = _synthetic(tmp_path, '<div style="height:20000px">tall</div>')
    assert any("screens high" in p for p in problems(measure(browser, tall), True))
    assert not any("screens high" in p for p in problems(measure(browser, tall), False))

    wide = _synthetic(tmp_path, '<div style="width:2000px">wide</div>')
    assert any("scrolls sideways:" in p for p in problems(measure(browser, wide), True))

    inner = _synthetic(
        tmp_path,
        '<details><summary>t</summary><div style="overflow-x:auto">'
        '<table><tr><td style="min-width:3000px">x</td></tr></table></div></details>',
    )
    assert any("scrolls sideways inside" in p for p in problems(measure(browser, inner), True))

    # a 1000-unit-wide chart drawn 500 px wide halves its 12 px text to 6 px
    shrunk = _synthetic(
        tmp_path,
        '<svg style="width:500px" viewBox="0 0 1000 100">'
        '<text x="10" y="50" style="font-size:12px">halved</text></svg>',
    )
    m = measure(browser, shrunk)
    assert 5.9 < m["minText"] < 6.1 and m["nSmall"] == 1
    assert any("chart texts below" in p for p in problems(m, True))

    big = _synthetic(tmp_path, "<p>" + "x" * (MAX_BYTES + 10) + "</p>")
    assert any("bytes, above" in p for p in problems(measure(browser, big), False))

    broken = _synthetic(tmp_path, "<script>undefinedFunction()</script>")
    assert any("console" in p for p in problems(measure(browser, broken), False))


# ---- every page of a study -------------------------------------------------------------------
@pytest.fixture(scope="module")
def study_reports(tmp_path_factory) -> Path:
    """A whole study at a small scale, played once for this module."""
    folder = tmp_path_factory.mktemp("study")
    out = folder / "reports"
    _run(
        [
            *BASE_CMD,
            "study",
            "--scale",
            SCALE,
            "--out",
            str(out),
            "--results",
            str(folder / "results"),
        ],
        folder,
    )
    return out


@pytest.mark.slow
@pytest.mark.browser
def test_every_study_page_is_within_the_limits(browser, study_reports):  # noqa: F811
    pages = sorted(study_reports.rglob("*.html"))
    names = {p.relative_to(study_reports).as_posix() for p in pages}
    # the study writes a page per game, the index, and the detail pages they link
    for must in ("index.html", "tosk.html", "trisk.html", "clash.html", "suits.html"):
        assert must in names, f"{must} missing from {sorted(names)}"
    assert any(n.startswith("tosk/") for n in names), sorted(names)
    found = {}
    for p in pages:
        bad = problems(measure(browser, p), screens_apply(p, study_reports))
        if bad:
            found[p.relative_to(study_reports).as_posix()] = bad
    assert found == {}, "pages beyond the limits:\n" + "\n".join(
        f"{k}: {v}" for k, v in found.items()
    )


# ---- the parts that keep a page within them --------------------------------------------------
def test_round_cap_warnings_grouped_by_ruleset():
    from balance.report import _cap_warning_groups

    lines = [
        "warning: force, a vs b: 40.0% [30.0, 50.0] of 100 games end at the round cap (draws), above 5%",
        "warning: base, a vs b: 30.0% [20.0, 40.0] of 100 games end at the round cap (draws), above 5%",
        "warning: force, a vs c: 10.0% [5.0, 15.0] of 100 games end at the round cap (draws), above 5%",
    ]
    g = _cap_warning_groups(lines)
    assert g["total"] == 3
    assert [x["variant"] for x in g["groups"]] == ["base", "force"]  # base first
    force = g["groups"][1]
    assert force["lines"] == [lines[0], lines[2]] and force["top"] == "40.0% [30.0, 50.0]"
    assert _cap_warning_groups([]) is None


def test_detail_pages_get_one_file_each():
    from balance.report import _detail_links

    ctx = {"strategies": [{"variant": "a+b"}, {"variant": "a-b"}], "ratings": [{"variant": "c"}]}
    files = _detail_links(ctx, "tosk")["variants"]
    assert set(files) == {"a+b", "a-b", "c"}
    assert len(set(files.values())) == 3 and all(f.startswith("tosk/") for f in files.values())


@pytest.mark.slow
def test_heatmap_marks_the_three_outcomes(tmp_path):
    import pandas as pd

    from balance import charts

    df = pd.DataFrame(
        {
            "variant": ["v1", "v1", "v2"],
            "strategy": ["a", "b", "a"],
            "n_pairs": [400, 400, 600],
            "diff": [0.123, 0.004, -0.031],
            "diff_lo": [0.10, -0.005, -0.08],
            "diff_hi": [0.15, 0.009, 0.02],
            "significant": [True, False, False],
            "equivalent": [False, True, False],
            "margin": [0.01, 0.01, 0.01],
        }
    )
    svg = charts.save(charts.diff_heatmap(df), tmp_path / "h", png=False, write=False)
    assert "+12.3*" in svg  # shown
    assert "≈ +0.4" in svg  # shown within the margin
    assert "−3.1" in svg or "-3.1" in svg  # not shown: no mark
    assert "n = 400–600 paired games per cell" in svg


@pytest.mark.slow
def test_small_chart_text_is_raised(tmp_path):
    import re

    from balance import charts

    for width in (6.0, 16.0):  # natural size; scaled down to the page's column
        with charts.chart_style():
            fig = charts.new_figure(width, 2.0)
            ax = fig.add_subplot()
            ax.text(0.5, 0.5, "tiny", fontsize=4)
        svg = charts.save(fig, tmp_path / "t", png=False, write=False)
        sizes = [float(x) for x in re.findall(r"font-size: ([\d.]+)px", svg)]
        floor = charts.min_font_pt(width)
        assert sizes and min(sizes) >= floor
        shown = min(sizes) * 96 / 72 * min(1.0, charts.PAGE_CHART_PX / (96 * width))
        assert shown >= charts.MIN_TEXT_PX
