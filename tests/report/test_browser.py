"""The HTML report in a real browser: headless Chromium (Debian's ``chromium``)
driven by Playwright.

A tiny round robin is run with the installed ``balance`` command in a scratch
folder and turned into a report page with ``balance report``. The page is
opened from a ``file://``
URL and must run without console errors, load nothing from the network, show
every chart at a non-zero size, have rows in every table and sort a column
when its header is clicked. A second report, built from strategies whose
display names are HTML, must show those names as text and run none of them.

Without ``/usr/bin/chromium`` or the ``playwright`` package these tests are
skipped, except under CI (``$CI`` set), where that is a failure: CI installs
Chromium (see ``.ci/run``) and must never skip them silently.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path

import pytest

from balance.errors import UserError
from tests import ROOT

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCRIPT = Path(sys.executable).with_name("balance")
BASE_CMD = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "balance.cli"]
VARIANTS = "base,force"  # the plain report: two variants, so it has differences from base
GAMES = 200  # per strategy pair and variant: enough for every table, quick to run

EVIL_SCRIPT = "<script>window.__pwned=1</script>"
EVIL_IMG = '<img src=x onerror="window.__pwned=2">'


# ---- skipping: never under CI ----------------------------------------------------------
def _under_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _unavailable(reason: str):
    if _under_ci():
        pytest.fail(f"{reason}; CI must run the browser tests (see .ci/run)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        _unavailable(f"{CHROMIUM} is missing (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is missing (pip install -e '.[test]')")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


# ---- building a report -------------------------------------------------------------------
def _env(folder: Path) -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("NUMBA_DISABLE_JIT", "BALANCE_PROGRESS", "BALANCE_RESULTS")
    }
    env["BALANCE_RESULTS"] = str(folder / "results")
    return env


def _run(cmd: list[str], folder: Path) -> str:
    res = subprocess.run(
        cmd,
        cwd=folder,
        env=_env(folder),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=600,
    )
    assert res.returncode == 0, f"{' '.join(cmd)} failed:\n{res.stderr}"
    assert "Traceback" not in res.stderr, res.stderr
    return res.stdout


def build_report(
    folder: Path,
    variants: str,
    strategies: str,
    played: threading.Event | None = None,
    after: threading.Event | None = None,
) -> Path:
    """Run a tiny round robin with the CLI and build its report page; returns the page.

    ``after``: wait for this before playing (one engine compile, not two at once,
    on a machine with a cold numba cache); ``played``: set once the games are stored.
    """
    folder.mkdir(parents=True, exist_ok=True)
    results = folder / "results"
    if after is not None:
        after.wait(timeout=600)
    try:
        _run(
            [
                *BASE_CMD,
                "tosk",
                "compare",
                "--variants",
                variants,
                "--strategies",
                strategies,
                "-n",
                str(GAMES),
                "--seed",
                "1",
                "--results",
                str(results),
            ],
            folder,
        )
    finally:
        if played is not None:
            played.set()
    page = folder / "report.html"
    # the runs are in the store now: the report reads them, it does not play again
    _run(
        [*BASE_CMD, "report", str(results / "tosk"), "-o", str(page), "--results", str(results)],
        folder,
    )
    assert page.is_file(), f"no report at {page}"
    return page


def _hostile_strategies(folder: Path) -> str:
    """Two strategy files whose display names are HTML; returns the --strategies list."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for stem, name, source in (
        ("evil-script", EVIL_SCRIPT, "aggressor"),
        ("evil-img", EVIL_IMG, "turtle"),
    ):
        weights = (ROOT / "strategies" / "tosk" / f"{source}.toml").read_text(encoding="utf-8")
        path = folder / f"{stem}.toml"
        path.write_text(f"name = {json.dumps(name)}\n{weights}", encoding="utf-8")
        paths.append(str(path))
    return ",".join(["random", *paths])


@pytest.fixture(scope="module")
def builds(browser, tmp_path_factory):
    """Both reports, built side by side (most of this file's time is spent here): the
    hostile games are played once the plain ones are, while the plain page renders.
    The hostile report has base rules only, to save time; its names still reach every
    table, chart and verdict that names strategies."""
    plain = tmp_path_factory.mktemp("report")
    hostile = tmp_path_factory.mktemp("hostile")
    played = threading.Event()
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {
            "plain": pool.submit(
                build_report, plain, VARIANTS, "random,aggressor,balanced", played=played
            ),
            "hostile": pool.submit(
                build_report, hostile, "base", _hostile_strategies(hostile), after=played
            ),
        }
        # wait for both here: a failure is raised by the fixture of the test that needs it
        wait(futures.values())
    return futures


@pytest.fixture(scope="module")
def report_page(builds) -> Path:
    return builds["plain"].result()


@pytest.fixture(scope="module")
def hostile_page(builds) -> Path:
    return builds["hostile"].result()


# ---- a page in the browser ------------------------------------------------------------------
class Opened:
    """A page loaded from a file, with everything it reported while loading."""

    def __init__(self, browser, path: Path):
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.page = self.context.new_page()
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(f"uncaught: {e}"))
        self.page.on("request", self._request)
        self.page.on("dialog", self._dialog)
        self.url = path.resolve().as_uri()
        self.page.goto(self.url, wait_until="load")
        # show what is folded away (closed <details>), so every chart and name is rendered
        self.page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")

    def _request(self, req):
        if not req.url.startswith(("data:", "about:", "blob:")) and req.url != self.url:
            self.requests.append(req.url)

    def _dialog(self, dialog):
        self.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    def close(self):
        self.context.close()


@pytest.fixture(scope="module")
def opened(browser, report_page):
    o = Opened(browser, report_page)
    yield o
    o.close()


@pytest.mark.slow
def test_page_loads_without_errors_or_network(opened):
    assert opened.page.title(), "the page has no title"
    assert opened.errors == [], f"console errors: {opened.errors}"
    assert opened.requests == [], f"the page is not self-contained; it requested {opened.requests}"
    assert opened.dialogs == []


# Charts are SVG (or images) in <figure> elements; a chart SVG is never nested in another.
CHARTS = "figure svg:not(svg svg), img"


@pytest.mark.slow
def test_every_chart_is_visible_with_a_size(opened):
    charts = opened.page.locator(CHARTS)
    n = charts.count()
    # overview, rounds, variant differences and one matrix per variant (base, force)
    assert n >= 5, f"expected at least 5 charts, found {n}"
    for i in range(n):
        chart = charts.nth(i)
        chart.scroll_into_view_if_needed()
        what = chart.evaluate("e => e.outerHTML.slice(0, 80)")
        assert chart.is_visible(), f"chart {i} ({what}) is hidden"
        box = chart.bounding_box()
        assert box and box["width"] > 50 and box["height"] > 50, f"chart {i} has size {box}"
    broken = opened.page.evaluate(
        "Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0).length"
    )
    assert broken == 0, f"{broken} image(s) did not load"


def test_every_table_has_rows(opened):
    # [first header cell, body rows] per table
    tables = opened.page.evaluate("""() => Array.from(document.querySelectorAll('table'))
      .map(t => [(t.rows.length ? t.rows[0].textContent : '').trim().slice(0, 60),
                 t.tBodies.length ? Array.from(t.tBodies).reduce((n, b) => n + b.rows.length, 0)
                                  : t.rows.length - (t.tHead ? t.tHead.rows.length : 0)])""")
    assert len(tables) >= 3, f"expected variants, strategies and comparison tables: {tables}"
    empty = [head for head, rows in tables if rows < 1]
    assert not empty, f"tables without rows: {empty}"


# The first visible sortable table with a numeric column (data-v keys) of distinct values.
FIND_SORTABLE = """() => {
  const tables = Array.from(document.querySelectorAll('table.sortable, table[data-sortable]'));
  for (let t = 0; t < tables.length; t++) {
    const table = tables[t], rows = table.tBodies.length ? Array.from(table.tBodies[0].rows) : [];
    if (rows.length < 3 || !table.getClientRects().length) continue;
    const heads = table.tHead ? Array.from(table.tHead.rows[0].cells) : [];
    for (let c = 1; c < heads.length; c++) {
      const vals = rows.map(r => r.cells[c] && r.cells[c].getAttribute('data-v'));
      const nums = vals.filter(v => v !== null && v !== '' && !isNaN(parseFloat(v)));
      if (nums.length >= 3 && new Set(nums).size >= 3) return [t, c];
    }
  }
  return null;
}"""
COLUMN = """([t, c]) => {
  const table = Array.from(document.querySelectorAll('table.sortable, table[data-sortable]'))[t];
  return Array.from(table.tBodies[0].rows).map(r => r.cells[c].getAttribute('data-v'))
    .filter(v => v !== null && v !== '' && !isNaN(parseFloat(v))).map(parseFloat);
}"""


def test_clicking_a_header_sorts_the_column(opened):
    page = opened.page
    found = page.evaluate(FIND_SORTABLE)
    assert found, "no visible sortable table with a numeric column of distinct values"
    t, c = found
    header = (
        page.locator("table.sortable, table[data-sortable]")
        .nth(t)
        .locator("thead tr")
        .first.locator("th, td")
        .nth(c)
    )
    before = page.evaluate(COLUMN, found)
    header.click()
    first = page.evaluate(COLUMN, found)
    assert sorted(first) == sorted(before), "sorting lost or changed values"
    assert first in (sorted(first), sorted(first, reverse=True)), f"not sorted: {first}"
    header.click()
    second = page.evaluate(COLUMN, found)
    assert second == first[::-1], f"a second click did not reverse the order: {first} -> {second}"
    assert opened.errors == [], f"console errors while sorting: {opened.errors}"


@pytest.mark.slow
def test_full_page_screenshot(opened, tmp_path_factory):
    shot = tmp_path_factory.mktemp("screenshots") / "report.png"
    opened.page.screenshot(path=str(shot), full_page=True)
    assert shot.is_file() and shot.stat().st_size > 10_000, "screenshot missing or blank"
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ---- hostile names -------------------------------------------------------------------------
@pytest.mark.slow
def test_hostile_names_are_text_not_markup(browser, hostile_page):
    html = hostile_page.read_text(encoding="utf-8")
    assert "<script>window.__pwned" not in html
    assert "<img src=x" not in html
    o = Opened(browser, hostile_page)
    try:
        page = o.page
        assert page.evaluate("typeof window.__pwned") == "undefined", "a name ran as script"
        assert o.dialogs == [], f"dialogs opened: {o.dialogs}"
        assert page.evaluate("document.querySelectorAll('[onerror]').length") == 0
        text = page.inner_text("body")
        assert EVIL_SCRIPT in text and EVIL_IMG in text, "the names are not shown as text"
        assert o.errors == [], f"console errors: {o.errors}"
        assert o.requests == [], f"requests: {o.requests}"
        # sorting must not re-parse names as markup either
        for th in page.locator("table.sortable thead th").all():
            if th.is_visible():
                th.click()
        assert page.evaluate("typeof window.__pwned") == "undefined"
        assert o.dialogs == []
    finally:
        o.close()


# ---- the strategy display name ---------------------------------------------------------------
def _strategy_file(tmp_path: Path, name_line: str) -> str:
    weights = (ROOT / "strategies" / "tosk" / "aggressor.toml").read_text(encoding="utf-8")
    path = tmp_path / "mine.toml"
    path.write_text(f"{name_line}\n{weights}", encoding="utf-8")
    return str(path)


def test_strategy_name_key_sets_the_display_name(tmp_path):
    from balance.config import load_strategy

    s = load_strategy("tosk", _strategy_file(tmp_path, 'name = "All in"'))
    assert s.name == "All in"
    assert load_strategy("tosk", _strategy_file(tmp_path, "")).name == "mine"
    assert load_strategy("tosk", "aggressor").name == "aggressor"


@pytest.mark.parametrize(
    "line",
    [
        'name = ""',
        'name = "   "',
        f'name = "{"x" * 81}"',
        "name = 3",
        "name = true",
        'name = ["a"]',
    ],
)
def test_bad_strategy_name_is_one_line_user_error(tmp_path, line):
    from balance.config import load_strategy

    with pytest.raises(UserError) as exc:
        load_strategy("tosk", _strategy_file(tmp_path, line))
    msg = str(exc.value)
    assert "'name'" in msg and "\n" not in msg and len(msg) < 300, msg


# ---- the four-suits RPG's analysis page ----------------------------------------------------
@pytest.fixture(scope="module")
def suits_page(browser, tmp_path_factory):
    from balance.games.suits import analysis as suits

    folder = tmp_path_factory.mktemp("suits")
    tasks = suits.run_tasks(
        suits.TasksPlan(hands=5000, characters=200, seed=2), results=folder / "results"
    )
    struggle = suits.run_struggle(
        suits.StrugglePlan(games=200, seed=2), results=folder / "results", progress=False
    )
    return suits.write_page(tasks, struggle, folder / "suits-analysis.html")


@pytest.mark.slow
def test_suits_page_in_the_browser(browser, suits_page):
    o = Opened(browser, suits_page)
    try:
        page = o.page
        assert page.title() == "The four-suits RPG: Task odds and Struggles"
        assert o.errors == [] and o.requests == [] and o.dialogs == []
        charts = page.locator(CHARTS)
        assert charts.count() == 4  # the ladder, the run-down, the policies, the matrix
        for i in range(charts.count()):
            chart = charts.nth(i)
            chart.scroll_into_view_if_needed()
            box = chart.bounding_box()
            assert chart.is_visible() and box and box["width"] > 50 and box["height"] > 50
        rows = page.evaluate("""() => Array.from(document.querySelectorAll('table'))
          .map(t => t.tBodies.length ? t.tBodies[0].rows.length : 0)""")
        assert len(rows) >= 7 and min(rows) >= 1, rows
        text = page.inner_text("body")
        assert "Topple a stone tower." in text and "The GM's deck" in text
        found = page.evaluate(FIND_SORTABLE)
        assert found, "no sortable numeric column"
        t, c = found
        header = (
            page.locator("table.sortable").nth(t).locator("thead tr").first.locator("th, td").nth(c)
        )
        header.click()
        first = page.evaluate(COLUMN, found)
        assert first in (sorted(first), sorted(first, reverse=True))
        assert o.errors == []
    finally:
        o.close()


# ---- a repair's page -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def repair_page(browser, tmp_path_factory):
    from balance import repair

    folder = tmp_path_factory.mktemp("repair")
    plan = repair.make_plan(
        "tosk",
        "potent-healing",
        ["draws<=0.02"],
        ["heal_per_card=1..2", "capacity=13..14"],
        "balanced,turtle",
        trials=4,
        games=100,
        verify_games=400,
        top=3,
    )
    res = repair.repair(plan, results=folder / "results", progress=False)
    return repair.write_page(res, folder / "tosk-repair.html", "Tosk repair", "test")


@pytest.mark.slow
def test_repair_page_in_the_browser(browser, repair_page):
    """The repair page opens with no error or request, its chart is drawn,
    its tables have rows and sort."""
    o = Opened(browser, repair_page)
    try:
        page = o.page
        assert page.title() == "Tosk repair"
        assert o.errors == [] and o.requests == [] and o.dialogs == []
        chart = page.locator(CHARTS)
        assert chart.count() == 1
        box = chart.first.bounding_box()
        assert chart.first.is_visible() and box and box["width"] > 50 and box["height"] > 50
        rows = page.evaluate("""() => Array.from(document.querySelectorAll('table'))
          .map(t => t.tBodies.length ? t.tBodies[0].rows.length : 0)""")
        assert len(rows) == 2 and rows[0] == 3 and rows[1] >= 1, rows  # unchanged + 2; the front
        text = page.inner_text("body")
        assert "Verified on fresh deals" in text and "draws<=0.02" in text
        # the verified table's target column (its draws) sorts by value
        page.locator("table.sortable").first.locator("thead th").nth(2).click()
        first = page.evaluate(COLUMN, [0, 2])
        assert len(first) == 3 and first in (sorted(first), sorted(first, reverse=True))
        assert o.errors == []
    finally:
        o.close()


# ---- a study page that leads with equilibrium play -----------------------------------------
@pytest.fixture(scope="module")
def equilibrium_pages(report_page, tmp_path_factory):
    """The plain report's Tosk runs as a study page with Tosk's equilibrium
    summary (tests/report/data), and Clash's summary (content, a wider mixture
    table) on a page of its own; written like the study's pages and index."""
    from balance import pages, report
    from tests.report.test_equilibrium_page import _page, _summary

    runs, _ = pages.load_runs([report_page.parent / "results" / "tosk"])
    tosk = pages.build_page("tosk", pages.organise(runs)["tosk"])
    pages.add_equilibrium(tosk, "tosk", _summary("tosk"))
    out = tmp_path_factory.mktemp("eqpages")
    index = report.write_index(out, [tosk, _page("clash")])
    return [index, out / "tosk.html", out / "clash.html"]


@pytest.mark.slow
def test_equilibrium_section_in_the_browser(browser, equilibrium_pages):
    """Each page opens with no error or request; on a game page the section
    comes first, its chart is drawn, and nothing in it needs sideways
    scrolling at 1400 px."""
    for path in equilibrium_pages:
        o = Opened(browser, path)
        try:
            page = o.page
            page.set_viewport_size({"width": 1400, "height": 900})
            assert o.errors == [] and o.requests == [] and o.dialogs == [], path.name
            sec = page.locator("section.equilibrium, .eq-lead").first
            assert sec.is_visible(), path.name
            wide = page.evaluate("""() => {
              const s = document.querySelector('section.equilibrium, .eq-lead');
              const out = [];
              if (s.scrollWidth > s.clientWidth + 1) out.push('section');
              s.querySelectorAll('.scroll').forEach(d => {
                if (d.scrollWidth > d.clientWidth + 1) out.push(d.firstElementChild.className);
              });
              return out;
            }""")
            assert wide == [], f"{path.name}: scrolls sideways at 1400 px: {wide}"
            if path.name == "index.html":
                continue
            top = sec.bounding_box()["y"]
            summary = page.locator("section.summary").bounding_box()["y"]
            assert top < summary, path.name
            chart = sec.locator(CHARTS).first
            chart.scroll_into_view_if_needed()
            box = chart.bounding_box()
            assert chart.is_visible() and box["width"] > 50 and box["height"] > 50, path.name
        finally:
            o.close()
