"""The default study: every registered game's study plan, one report.

For each game, ``configs/<game>/study.toml`` names the variants, strategies,
games per strategy pair, seed and the card-value run. The study runs (or
reads from the store) every match, writes the tables (Parquet and CSV) and
charts (SVG and PNG) under ``<out>/<game>/``, one page per game
(``<out>/<game>.html``) and the front page ``<out>/index.html`` linking them.
The final run keys of each game's study are recorded in the store
(``_studies/<game>.json``), so ``balance report`` rebuilds the pages from the
store alone.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

from balance import analysis, experiments, pages, report
from balance.config import load_study
from balance.errors import UserError
from balance.registry import GAMES, get_game
from balance.store import Store, chart_cache, results_dir, write_text_atomic


def _scaled(n: int, scale: float) -> int:
    n = max(2, int(math.ceil(n * scale)))
    return n + n % 2


def _record_path(results, game: str) -> Path:
    return results_dir(results) / "_studies" / f"{game}.json"


def study_runs(
    game: str, scale: float, threads, results, store_only: bool = False
) -> tuple[list, dict]:
    """Every run of one game's study plan (simulated, extended or read from
    the store); with ``store_only`` nothing is simulated."""
    plan = load_study(game)
    n = _scaled(int(plan["pilot_games"]), scale)
    precision = float(plan["precision"]) / math.sqrt(scale)
    variants = plan["variants"] if isinstance(plan["variants"], str) else ",".join(plan["variants"])
    _, vnames, snames, runs = analysis.compare_command(
        game,
        variants,
        ",".join(plan["strategies"]),
        n,
        int(plan["seed"]),
        threads,
        1 << 15,
        results,
        precision=precision,
        max_games=_scaled(int(plan["max_games_per_pair"]), scale),
        store_only=store_only,
        with_tables=False,
        record_as=None,  # the study records itself (study_game)
    )
    cres = []
    if plan.get("cards_strategy"):  # games with a card catalogue: the card-value runs
        n_cards = _scaled(int(plan.get("cards_games", 20000)), scale)
        cres, _ = analysis.cards_runs(
            game,
            "base",
            plan["cards_strategy"],
            plan["cards_opponent"],
            n_cards,
            int(plan["seed"]),
            threads,
            1 << 15,
            results,
            store_only=store_only,
            record_as=None,
        )
    if plan.get("loadout_strategy"):  # games with loadouts: the loadout matrix
        from balance import loadouts, runner

        # one strategy, or a list: each plays its own mirror matrix; the first
        # one's matrix gets every table on the page
        names = plan["loadout_strategy"]
        names = [names] if isinstance(names, str) else list(names)
        specs = [
            spec
            for s in names
            for spec in loadouts.loadout_specs(
                game,
                "base",
                s,
                s,
                _scaled(int(plan.get("loadout_games", 1000)), scale),
                int(plan["seed"]),
            )
        ]
        cres = [
            *cres,
            *runner.run_many(
                specs,
                store=Store(results),
                threads=threads,
                label=f"{game}: loadout matrix "
                f"({len(names)} strateg{'y' if len(names) == 1 else 'ies'})",
                store_only=store_only,
            ),
        ]
    extra = {
        "precision": precision,
        "study_scale": scale,
        "games_per_pair": f"{min(r.games for r in runs.values()):,}–"
        f"{max(r.games for r in runs.values()):,}",
    }
    return [*runs.values(), *cres], extra


def _step(line: str) -> None:
    """One line on stderr saying which step of the study is running."""
    import sys

    print(f"study: {line}", file=sys.stderr, flush=True)


def study_game(game: str, out: Path, scale: float, threads, results) -> dict:
    """Run one game's study plan; write its tables and charts; return its page."""
    t0 = time.perf_counter()
    _step(f"{game}: the matches of configs/{game}/study.toml (scale {scale:g})")
    runs, extra = study_runs(game, scale, threads, results)
    plan = load_study(game)
    home = get_game(game)
    extras = home.hook(home.study_pages)  # the game's own pages (its home's study hook)
    write_text_atomic(
        _record_path(results, game),
        json.dumps(
            {
                "game": game,
                "scale": scale,
                "extra": extra,
                "runs": [r.key for r in runs],
                "extras_scale": scale if extras else None,
            },
            indent=1,
        ),
    )
    experiments.record(results, game, "study", {**plan, "scale": scale}, [r.key for r in runs])
    group = pages.organise(runs)[game]
    folder = out / game
    extra["elapsed_s"] = round(time.perf_counter() - t0, 1)
    _step(f"{game}: tables, charts and its page ({len(runs)} runs)")
    page = pages.build_page(
        game,
        group,
        chart_dir=folder / "charts",
        png=True,
        extra_manifest=extra,
        cache_dir=chart_cache(results),
        tuned=plan.get("tuned"),
    )
    if extras:
        _step(f"{game}: its own pages")
        _add_links(page, extras(out, plan, scale, threads, results, False))
    _add_repair(page, game, out, plan, scale, threads, results, False)
    (folder / "tables").mkdir(parents=True, exist_ok=True)
    for name, df in page["tables"].items():
        df.to_csv(folder / "tables" / f"{name}.csv", index=False)
        df.to_parquet(folder / "tables" / f"{name}.parquet", index=False)
    return page


def _add_links(page: dict, links: list[dict]) -> None:
    """A game's own pages (its home's ``study_pages`` hook): their links, and the
    verdicts they re-checked under tuned play (a link's ``"checks"``, rows of
    :func:`balance.robust.row`), added to the page's."""
    import pandas as pd

    from balance import robust

    page["links"] = [{k: v for k, v in link.items() if k != "checks"} for link in links]
    rows = [r for link in links for r in link.get("checks") or []]
    if rows:
        old = page.get("robust")
        new = pd.DataFrame(rows, columns=robust.COLUMNS)
        page["robust"] = (
            new if old is None or old.empty else pd.concat([old, new], ignore_index=True)
        )


def _add_repair(page: dict, game: str, out: Path, plan: dict, scale, threads, results, store_only):
    """The study's worked repair example (``repair = "<file>"`` in study.toml: a
    repair plan in the game's config folder, ``docs/repair.md``): searched and
    verified at the study's scale (games × scale), its page written beside the
    index and linked from the game's page with the result in words."""
    name = plan.get("repair")
    if not name:
        return
    from balance import repair as rp

    path = get_game(game).configs / str(name)
    data = rp.load_plan_file(path)

    scaled = {
        key: max(2, int(round(int(data.get(key, getattr(rp.Plan, key))) * scale / 2)) * 2)
        for key in ("games", "verify_games")
    }
    rplan = rp.plan_from(game, {**data, **scaled}, ",".join(plan["strategies"]))
    if not store_only:
        _step(f"{game}: the worked repair example of configs/{game}/{name}")
    res = rp.repair(rplan, results=results, threads=threads, store_only=store_only)
    title = str(data.get("description") or f"{get_game(game).title}: a balance repair")
    command = f"balance {game} repair --plan configs/{game}/{name}"
    if scale != 1:
        command += f"  (games × {scale:g})"
    page_path = rp.write_page(res, out / f"{game}-repair.html", title, command)
    _, headline, _ = rp.outcome(res)
    page.setdefault("links", []).append(
        {"text": f"{title} (worked example): {headline}", "href": page_path.name}
    )


def run_study(out: Path, scale: float = 1.0, threads=None, results=None) -> Path:
    """Run every game's default study; write ``<out>/index.html`` and a page per game.

    On a first run, every engine is compiled before anything is played, in
    parallel processes (:func:`balance.warmup.ensure`); the study then loads
    each from numba's cache, and says so if it still had to compile anything."""
    from balance import registry, warmup

    out = Path(out)
    names = list(GAMES)
    warmup.ensure(names, say=_step)
    pages_ = []
    for i, name in enumerate(names, 1):
        _step(f"game {i} of {len(names)}: {name}")
        pages_.append(study_game(name, out, scale, threads, results))
    compiled = sum(registry.compile_seconds.values())
    if compiled >= 1:
        _step(f"compiled kernels in this process for {compiled:.0f} s after the warm-up")
    _step("the index page")
    return report.write_index(out, pages_)


def _read_record(rec: Path) -> dict:
    """A game's study record, or a one-line error if it is damaged."""
    try:
        data = json.loads(rec.read_bytes().decode("utf-8"))
        ok = (
            isinstance(data, dict)
            and isinstance(data.get("runs"), list)
            and all(
                isinstance(k, str) and k and "/" not in k and "\\" not in k and k not in (".", "..")
                for k in data["runs"]
            )
            and isinstance(data.get("extra") or {}, dict)
            and data["runs"]  # a study plays at least one match
            and all(  # every scale (extras_scale; older records' per-page scales)
                v is None or (type(v) in (int, float) and math.isfinite(v) and v > 0)
                for k, v in data.items()
                if k.endswith("_scale")
            )
        )
    except (UnicodeDecodeError, ValueError):
        ok = False
    if not ok:
        raise UserError(
            f"the study record {rec} is damaged (not the JSON `balance study` "
            "writes); run `balance study` again"
        )
    return data


def report_study(out: Path, results=None) -> Path:
    """Rebuild the default study's report from the store alone (nothing is
    simulated): the runs of each game's latest ``balance study``."""

    out = Path(out)
    pages_ = []
    for game in GAMES:
        rec = _record_path(results, game)
        if not rec.is_file():
            raise UserError(
                f"no stored study of {game} in {results_dir(results)}; "
                "run `balance study` first (or name runs: balance report RUNS -o FILE)"
            )
        data = _read_record(rec)
        store = Store(results)
        runs, skipped = pages.load_runs([store.path(game, k) for k in data["runs"]])
        if len(runs) != len(data["runs"]):
            raise UserError(
                f"the stored study of {game} is incomplete, damaged or was made by "
                f"another engine version ({skipped[0] if skipped else 'runs missing'}"
                "); run `balance study` again"
            )
        group = pages.organise(runs).get(game)
        if group is None:  # the record names runs of another game
            raise UserError(
                f"the study record {rec} is damaged (its runs are not {game}'s); "
                "run `balance study` again"
            )
        plan = load_study(game)
        page = pages.build_page(
            game,
            group,
            extra_manifest=data.get("extra"),
            cache_dir=chart_cache(results),
            tuned=plan.get("tuned"),
        )
        home = get_game(game)
        extras = home.hook(home.study_pages)
        # records written before the hooks keep the study's scale in "extra"
        scale = data.get("extras_scale") or (data.get("extra") or {}).get("study_scale")
        if type(scale) in (int, float) and math.isfinite(scale) and scale > 0:
            if extras:
                _add_links(page, extras(out, plan, float(scale), None, results, True))
            _add_repair(page, game, out, plan, float(scale), None, results, True)
        pages_.append(page)
    return report.write_index(out, pages_)
