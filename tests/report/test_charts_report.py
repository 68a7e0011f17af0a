"""Charts and the HTML report, on small synthetic study tables."""

from __future__ import annotations

import math
import re
from itertools import permutations

import numpy as np
import pandas as pd
import pytest

from balance import charts, report

EVIL = "<script>alert(1)</script>"
VARIANTS = ["base", "force"]
STRATEGIES = ["random", "aggressor", EVIL]
RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "J", "Q", "K"]
SUITS = ["♣", "♦", "♥", "♠"]
Z = 1.959963984540054


def _wilson(k, n):
    p = k / n
    d = 1 + Z**2 / n
    c = (p + Z**2 / (2 * n)) / d
    h = Z * math.sqrt(p * (1 - p) / n + Z**2 / (4 * n * n)) / d
    return c - h, c + h


def make_tables(variants=VARIANTS, strategies=STRATEGIES, games=1000, cards=True, seed=7):
    """Synthetic tables following the study's data contract."""
    rng = np.random.default_rng(seed)
    strength = {s: 0.3 + 0.4 * i / max(1, len(strategies) - 1) for i, s in enumerate(strategies)}
    mrows, srows, vrows, drows, rrows, crows, xrows = [], [], [], [], [], [], []
    for vi, v in enumerate(variants):
        shift = 0.02 * vi
        for a, b in permutations(strategies, 2):
            p = min(0.97, max(0.03, 0.5 + strength[a] - strength[b] + rng.normal(0, 0.01)))
            draws = int(games * 0.01)
            wins = int(round((games - draws) * p))
            lo, hi = _wilson(wins, games)
            score = (wins + draws / 2) / games
            slo, shi = _wilson(wins + draws / 2, games)
            mrows.append(
                dict(
                    variant=v,
                    a=a,
                    b=b,
                    games=games,
                    a_wins=wins,
                    b_wins=games - draws - wins,
                    draws=draws,
                    winrate=wins / games,
                    winrate_lo=lo,
                    winrate_hi=hi,
                    score=score,
                    score_lo=slo,
                    score_hi=shi,
                    rounds_mean=12 + vi,
                    rounds_sd=4.0,
                )
            )
        m = pd.DataFrame([r for r in mrows if r["variant"] == v])
        for s in strategies:
            g = m[m.a == s]
            n, w, d = int(g.games.sum()), int(g.a_wins.sum()), int(g.draws.sum())
            lo, hi = _wilson(w, n)
            slo, shi = _wilson(w + d / 2, n)
            srows.append(
                dict(
                    variant=v,
                    strategy=s,
                    games=n,
                    wins=w,
                    draws=d,
                    winrate=w / n,
                    winrate_lo=lo,
                    winrate_hi=hi,
                    score=(w + d / 2) / n,
                    score_lo=slo,
                    score_hi=shi,
                )
            )
            if v != "base":
                diff = shift + rng.normal(0, 0.01)
                p = float(rng.uniform(0.0001, 0.2))
                drows.append(
                    dict(
                        variant=v,
                        strategy=s,
                        n_pairs=games // 2,
                        diff=diff,
                        diff_lo=diff - 0.015,
                        diff_hi=diff + 0.015,
                        p=p,
                        p_holm=min(1.0, 3 * p),
                        significant=3 * p < 0.05,
                    )
                )
        total = int(m.games.sum())
        draws = int(m.draws.sum())
        dlo, dhi = _wilson(draws, total)
        best = strategies[-1]
        vrows.append(
            dict(
                variant=v,
                games=total,
                draws=draws,
                draw_rate=draws / total,
                draw_lo=dlo,
                draw_hi=dhi,
                rounds_mean=12.0 + vi,
                rounds_sd=4.0,
                best_strategy=best,
                luck_skill_winrate=0.78,
                luck_skill_lo=0.75,
                luck_skill_hi=0.81,
                games_needed=7 if vi == 0 else np.nan,
            )
        )
        hist = rng.poisson(12 + vi, size=total)
        for r, c in zip(*np.unique(hist, return_counts=True), strict=False):
            rrows.append(dict(variant=v, rounds=int(r), count=int(c)))
        for s in strategies:
            for rank in RANKS:
                for suit in SUITS:
                    wr = 0.5 + rng.normal(0, 0.03)
                    n = 400
                    lo, hi = _wilson(wr * n, n)
                    gih, gns = wr + 0.02, wr - 0.02
                    crows.append(
                        dict(
                            variant=v,
                            strategy=s,
                            card=f"{rank}{suit}",
                            rank=rank,
                            suit=suit,
                            played_n=n,
                            played_wr=wr,
                            played_lo=lo,
                            played_hi=hi,
                            gih_n=600,
                            gih_wr=gih,
                            gih_lo=gih - 0.04,
                            gih_hi=gih + 0.04,
                            gns_n=300,
                            gns_wr=gns,
                            iwd=gih - gns,
                            iwd_lo=gih - gns - 0.05,
                            iwd_hi=gih - gns + 0.05,
                        )
                    )
                eff = rng.normal(-0.02, 0.02)
                p = float(rng.uniform(0, 0.1))
                xrows.append(
                    dict(
                        variant=v,
                        strategy=s,
                        rank=rank,
                        n_pairs=500,
                        effect=eff,
                        effect_lo=eff - 0.02,
                        effect_hi=eff + 0.02,
                        p=p,
                        p_holm=min(1.0, p * 12),
                    )
                )
    return dict(
        matrix=pd.DataFrame(mrows),
        strategies=pd.DataFrame(srows),
        variants=pd.DataFrame(vrows),
        diffs=pd.DataFrame(drows),
        rounds=pd.DataFrame(rrows),
        cards=pd.DataFrame(crows) if cards else None,
        restricted=pd.DataFrame(xrows) if cards else None,
    )


MANIFEST = dict(
    command="balance study tosk --games 1000 --seed 42",
    seed=42,
    config_hash="abc123def456",
    engine_version="0.1.0",
    date="2025-01-01T00:00:00Z",
    games_total=12000,
    elapsed_s=3.5,
    rulings=["T3 Force: a pair gives +1 to each stat the pair provides"],
    variants=VARIANTS,
)
VERDICT = "Force makes the aggressor stronger by about 2 points."


@pytest.fixture(scope="module")
def tables():
    return make_tables()


@pytest.fixture(scope="module")
def rendered(tables, tmp_path_factory):
    """Every standard chart, rendered once for the whole module."""
    chart_dir = tmp_path_factory.mktemp("report") / "charts"
    return chart_dir, charts.all_charts(tables, chart_dir)


# ----------------------------------------------------------------------------- charts
CHART_FILES = {
    "overview": "overview",
    "diffs": "variant-diffs",
    "rounds": "rounds",
    "matrix:base": "matrix-00-base",
    "matrix:force": "matrix-01-force",
    "cards:random": "cards-00-random",
    "cards:aggressor": "cards-01-aggressor",
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CHART_FILES))
def test_every_chart_renders(rendered, name):
    chart_dir, svgs = rendered
    svg = svgs[name]
    stem = chart_dir / CHART_FILES[name]
    assert svg.startswith("<svg")
    assert "<?xml" not in svg and "<!DOCTYPE" not in svg and "<metadata" not in svg
    assert "<text" in svg  # fonttype 'none' keeps labels as searchable text
    png = stem.with_name(stem.name + ".png")
    assert png.exists() and png.stat().st_size > 1000
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    on_disk = stem.with_name(stem.name + ".svg").read_text(encoding="utf-8")
    assert "<svg" in on_disk and "<dc:date>" not in on_disk


@pytest.mark.slow  # renders every chart, about 6 s
def test_all_charts_names_and_files(rendered):
    chart_dir, svgs = rendered
    assert {"overview", "diffs", "rounds", "matrix:base", "matrix:force"} <= set(svgs)
    assert {f"cards:{s}" for s in STRATEGIES} <= set(svgs)
    files = sorted(p.name for p in chart_dir.iterdir())
    assert len(files) == 2 * len(svgs)  # one .svg and one .png each, no leftovers
    assert all(re.fullmatch(r"[A-Za-z0-9_.-]+", f) for f in files)  # hostile names slugged


@pytest.mark.slow  # shares the module's rendering of every chart (about 6 s)
def test_chart_titles_labels_and_escaping(rendered, tables):
    _, svgs = rendered
    svg = svgs["matrix:base"]
    assert "Head-to-head win rate" in svg and "opponent (column)" in svg
    assert "&lt;script&gt;" in svg and EVIL not in svg
    # the annotated win rate of aggressor vs random appears in percent
    row = tables["matrix"].query("variant == 'base' and a == 'aggressor' and b == 'random'").iloc[0]
    assert f"{row.winrate * 100:.1f}" in svg
    assert "game length (rounds)" in svgs["rounds"]
    assert "percentage points" in svgs["diffs"]
    assert "draw rate (%)" in svgs["overview"]
    for name in svgs:
        assert EVIL not in svgs[name]


@pytest.mark.slow  # shares the module's rendering of every chart (about 6 s)
def test_card_value_ranks_in_order(rendered):
    _, svgs = rendered
    svg = svgs["cards:random"]
    ticks = re.findall(
        r'<text[^>]*text-anchor: middle[^>]*x="([0-9.]+)" y="([0-9.]+)"[^>]*>([^<]+)</text>', svg
    )
    row_y = next(y for x, y, t in ticks if t == "A")
    row = sorted((float(x), t) for x, y, t in ticks if y == row_y)
    assert [t for _, t in row] == RANKS
    assert "Restricted play" in svg and "observational" in svg


@pytest.mark.slow  # measured over 1 s in the fast tier
def test_card_value_without_restricted(tables, tmp_path):
    fig = charts.card_value(tables["cards"], None, variant="force", strategy="aggressor")
    assert len(fig.axes) == 2
    svg = charts.save(fig, tmp_path / "c")
    assert "aggressor, force" in svg and "Restricted play" not in svg


@pytest.mark.slow  # measured over 1 s in the fast tier
def test_save_is_deterministic_and_ids_prefixed(tables, tmp_path):
    a = charts.save(charts.variant_diffs(tables["diffs"]), tmp_path / "a" / "diffs")
    b = charts.save(charts.variant_diffs(tables["diffs"]), tmp_path / "b" / "diffs")
    assert a == b
    assert (tmp_path / "a" / "diffs.png").read_bytes() == (
        tmp_path / "b" / "diffs.png"
    ).read_bytes()
    ids = re.findall(r'\bid="([^"]+)"', a)
    assert ids and all(i.startswith("diffs-") for i in ids)
    refs = re.findall(r"url\(#([^)]+)\)", a) + re.findall(r'href="#([^"]+)"', a)
    assert refs and set(refs) <= set(ids)


def test_empty_inputs_give_a_figure(tmp_path):
    t = make_tables(variants=["base"], cards=False)
    assert t["diffs"].empty
    svg = charts.save(charts.variant_diffs(t["diffs"]), tmp_path / "d")
    assert "no variants other than base" in svg


# ----------------------------------------------------------------------------- formatting
def test_formatting_helpers():
    assert report.fmt_pct_ci(0.523, 0.513, 0.533, 9604) == "52.3% [51.3, 53.3] n=9,604"
    assert report.fmt_pct_ci(0.004, 0.003, 0.006, 1000) == "0.40% [0.30, 0.60] n=1,000"
    assert report.fmt_pct_ci(float("nan"), 0, 1, 10) == "—"
    assert report.fmt_pp_ci(0.012, 0.003, 0.021, 500) == "+1.2 pp [+0.3, +2.1] n=500"
    assert report.fmt_pp_ci(-0.0001, -0.01, 0.01) == "0.0 pp [-1.0, +1.0]"
    assert report.fmt_mean_ci(12.34, 4.0, 10000) == "12.3 [12.3, 12.4] sd 4.0 n=10,000"
    assert report.fmt_p(0.0004) == "<0.001"
    assert report.fmt_p(0.0123) == "0.012"
    assert report.fmt_p(None) == "—"
    assert report.fmt_int(9604) == "9,604"
    assert report.fmt_games_needed(np.nan) == "—"
    assert report.fmt_games_needed(37.0) == "37"
    # every missing value reads as a dash, whatever type a table cell holds
    import pandas as pd

    for missing in (None, float("nan"), np.float32("nan"), np.nan, pd.NA, pd.NaT):
        assert report.fmt_int(missing) == "—", missing
    assert report.fmt_int(np.int64(0)) == "0"


# ----------------------------------------------------------------------------- index
@pytest.fixture(scope="module")
def page(tables, rendered):
    chart_dir, svgs = rendered
    out = chart_dir.parent
    games = [dict(name="Tosk", tables=tables, charts=svgs, manifest=MANIFEST, summary=[VERDICT])]
    path = report.write_page(out / "tosk.html", games)
    return path, path.read_text(encoding="utf-8")


def test_index_and_pages_written_atomically(tables, tmp_path):
    games = [
        dict(
            name="Tosk", game="tosk", tables=tables, charts={}, manifest=MANIFEST, summary=[VERDICT]
        )
    ]
    path = report.write_index(tmp_path, games)
    assert path.name == "index.html"
    # the game page, its detail pages in tosk/ (issue 45: page limits), no temp file left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.html", "tosk", "tosk.html"]
    assert not [p for p in tmp_path.rglob("*") if p.name.startswith(".")]
    assert games[0]["detail_files"] and all(
        (tmp_path / f).is_file() for f in games[0]["detail_files"]
    )
    index = path.read_text(encoding="utf-8")
    assert VERDICT in index and 'href="tosk.html"' in index
    page = (tmp_path / "tosk.html").read_text(encoding="utf-8")
    assert VERDICT in page and 'href="index.html"' in page


@pytest.mark.slow
def test_index_content(page, tables):
    _, html = page
    assert html.lstrip().lower().startswith("<!doctype html>")
    assert VERDICT in html
    assert "<svg" in html
    assert "Tosk" in html
    for s in ["random", "aggressor"]:
        assert re.search(rf"<tr[^>]*>\s*<t[hd][^>]*>\s*{s}\s*</t[hd]>", html), s
    assert re.search(
        r"<tr[^>]*>\s*<t[hd][^>]*>\s*&lt;script&gt;alert\(1\)&lt;/script&gt;\s*</t[hd]>", html
    )
    # numbers carry CI and n
    row = tables["strategies"].query("variant == 'base' and strategy == 'aggressor'").iloc[0]
    assert report.fmt_pct_ci(row.winrate, row.winrate_lo, row.winrate_hi, row.games) in html
    # manifest and rulings
    for key in [
        "balance study tosk --games 1000 --seed 42",
        "abc123def456",
        "0.1.0",
        "2025-01-01T00:00:00Z",
        "T3 Force",
    ]:
        assert key in html
    # one collapsible block per variant in the strategy section
    assert len(re.findall(r"<details[^>]*class=\"variant\"", html)) == len(VARIANTS)


@pytest.mark.slow  # measured over 1 s in the fast tier
def test_index_escapes_hostile_names(page):
    _, html = page
    assert EVIL not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "alert(1)</script>" not in html


@pytest.mark.slow  # the only fast test of the page: its fixture renders every chart (4-5 s)
def test_index_is_self_contained(page):
    _, html = page
    assert not re.search(r"<script[^>]*\bsrc\s*=", html, re.I)
    assert not re.search(r"<link[^>]*\bhref\s*=", html, re.I)
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", html, re.I)
    assert not re.search(r"url\(\s*['\"]?(https?:)?//", html, re.I)
    assert "@import" not in html
    # the only URLs left are XML namespace names, which load nothing
    stripped = re.sub(r'xmlns(:\w+)?="[^"]*"', "", html)
    assert "http://" not in stripped and "https://" not in stripped


def test_index_without_optional_tables(tmp_path):
    t = make_tables(variants=["base"], cards=False)
    games = [dict(name="Tosk", tables=t, charts={}, manifest=MANIFEST, summary=["Only base."])]
    html = report.write_page(tmp_path / "t.html", games).read_text(encoding="utf-8")
    assert "Only base." in html
    assert "No variants other than base" in html
    assert "Card value" not in html
    assert "<svg" not in html


def test_untrusted_chart_svg_refused(tmp_path, tables):
    games = [
        dict(
            name="Tosk",
            tables=tables,
            charts={"x": "<svg><script>alert(1)</script></svg>"},
            manifest=MANIFEST,
            summary=[],
        )
    ]
    with pytest.raises(ValueError):
        report.write_index(tmp_path, games)
    assert list(tmp_path.iterdir()) == []  # nothing written, not even the front page


@pytest.mark.slow
def test_opponent_and_seat_columns(tables, tmp_path):
    """Tables as balance.tables builds them: card rows per opponent, seat share."""
    t = dict(tables)
    t["cards"] = pd.concat(
        [tables["cards"].assign(opponent="random"), tables["cards"].assign(opponent="aggressor")],
        ignore_index=True,
    )
    t["restricted"] = pd.concat(
        [
            tables["restricted"].assign(opponent="random"),
            tables["restricted"].assign(opponent="aggressor"),
        ],
        ignore_index=True,
    )
    t["variants"] = tables["variants"].assign(seat1_share=0.55, seat1_lo=0.54, seat1_hi=0.56)
    fig = charts.card_value(
        t["cards"], t["restricted"], variant="base", strategy="aggressor", opponent="random"
    )
    assert len(fig.axes) == 3
    svg = charts.save(fig, tmp_path / "c")
    assert "aggressor vs random, base" in svg
    key = charts.card_chart_key("aggressor", "random")
    games = [dict(name="Tosk", tables=t, charts={key: svg}, manifest=MANIFEST, summary=[])]
    html = report.write_page(tmp_path / "t.html", games).read_text(encoding="utf-8")
    assert re.search(
        r"<summary>aggressor <span class=\"muted\">vs</span> random</summary>\s*"
        r"<figure class=\"chart\"><div class=\"svg\"><svg",
        html,
    )
    assert "First seat wins" in html and "55.0% [54.0, 56.0]" in html


def test_chart_check_reads_markup_not_text():
    """A hostile name drawn as chart text is data; script or links in the markup are refused."""
    ok = (
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
        '<text>&lt;img src=x onerror="alert(1)"&gt; javascript: x</text>'
        '<use xlink:href="#m1"/><path clip-path="url(#c1)"/></svg>'
    )
    assert "onerror" in str(report.trusted_svg("ok", ok))
    bad = [
        '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
        '<image xlink:href="https://example.org/x.png"/></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg"><a href="javascript:alert(1)"><text>x</text></a></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg"><style>@import "https://e.org/x.css";</style></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg"><foreignObject/></svg>',
        "<div>not svg</div>",
    ]
    for svg in bad:
        with pytest.raises(ValueError, match="not plain SVG"):
            report.trusted_svg("bad", svg)


@pytest.mark.slow  # draws five charts
def test_charts_written_to_files_are_copied_from_the_cache_on_a_rebuild(tmp_path, monkeypatch):
    """A study rebuilt from the same runs draws no chart again: the cache keeps
    each chart's SVG and PNG files with their checksums, and a damaged one is
    drawn again (issue 46)."""
    t = make_tables()
    tables = {"variants": t["variants"], "rounds": t["rounds"]}
    cache = tmp_path / "cache"
    first = charts.all_charts(tables, tmp_path / "a", workers=1, cache_dir=cache)
    drawn = {p.name: p.read_bytes() for p in sorted((tmp_path / "a").iterdir())}
    assert sorted(drawn) == ["overview.png", "overview.svg", "rounds.png", "rounds.svg"]

    def no_drawing(job):
        raise AssertionError(f"drew {job[0]} again")

    with monkeypatch.context() as m:
        m.setattr(charts, "_render", no_drawing)
        again = charts.all_charts(tables, tmp_path / "b", workers=1, cache_dir=cache)
    assert again == first
    assert {p.name: p.read_bytes() for p in sorted((tmp_path / "b").iterdir())} == drawn

    # a damaged PNG in the cache: that chart (only) is drawn again, and the files match
    png = next(p for p in cache.glob("*.png") if not p.name.endswith(".sha256"))
    png.write_bytes(png.read_bytes()[:100])
    calls = []
    real = charts._render
    with monkeypatch.context() as m:
        m.setattr(charts, "_render", lambda job: calls.append(job[0]) or real(job))
        charts.all_charts(tables, tmp_path / "c", workers=1, cache_dir=cache)
    assert len(calls) == 1
    assert {p.name: p.read_bytes() for p in sorted((tmp_path / "c").iterdir())} == drawn


@pytest.mark.slow  # starts two drawing processes
def test_drawing_processes_are_kept_for_the_next_call_and_draw_the_same_charts(tmp_path):
    """Charts drawn in worker processes are the files one process draws, and
    a second call (a report's next experiment) draws in the same processes,
    not fresh ones that import pandas and matplotlib again (issue 46)."""
    t = make_tables()
    tables = {"variants": t["variants"], "rounds": t["rounds"], "matrix": t.get("matrix")}
    alone = charts.all_charts(tables, tmp_path / "one", workers=1)
    files = {p.name: p.read_bytes() for p in sorted((tmp_path / "one").iterdir())}
    assert len(alone) > 2  # more than two charts: drawn in the pool
    charts._shut_pools()
    try:
        first = charts.all_charts(tables, tmp_path / "a", workers=2)
        pool = charts._POOLS[2]
        pids = set(pool._processes)
        second = charts.all_charts(tables, tmp_path / "b", workers=2)
        assert charts._POOLS[2] is pool and set(pool._processes) == pids and len(pids) == 2
    finally:
        charts._shut_pools()
    assert first == second == alone
    for d in ("a", "b"):
        assert {p.name: p.read_bytes() for p in sorted((tmp_path / d).iterdir())} == files
