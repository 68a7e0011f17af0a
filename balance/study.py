"""The default study: every registered game's study plan, one report.

For each game, ``configs/<game>/study.toml`` names the variants, strategies,
games per strategy pair, seed and the card-value run. The study runs (or
reads from the store) every match, writes the tables (Parquet and CSV) and
charts (SVG and PNG) under ``<out>/<game>/``, one page per game
(``<out>/<game>.html``) and the front page ``<out>/index.html`` linking them.
The final run keys of each game's study are recorded in the store
(``_studies/<game>.json``), so ``balance report`` rebuilds the pages from the
store alone.

Each game's page leads with its verdicts under equilibrium play: the game's
shipped equilibrium population (``strategies/<game>/equilibrium/``, made by
``balance <game> equilibrium``) measured afresh
(:func:`balance.equilibrium.measure_shipped`: its matrix, the verdicts with
both seats drawing from the mixture, and its exploitability re-measured by a
fresh, smaller best-response search). The summary is kept in the record, so
the report rebuilds that section without playing either. A game that ships
no population says so, and names the command that makes one.
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


# The equilibrium check of the study, per game: the keyword arguments of
# balance.equilibrium.measure_shipped. Their defaults are the equilibrium
# module's (a matrix of GAMES per pairing, a fresh best-response search of
# CHECK_BUDGET evaluations, CONFIRM_GAMES per member for its gain, PLAY_GAMES
# per pairing for the verdicts); a study.toml's [equilibrium] table sets any of
# them. Game counts are multiplied by the study's --scale; the search's budget
# (CMA-ES evaluations) is not. Measured on the 2-core machine: the four games
# together take 25 s at these settings with populations of 5-9 members all in
# the support, 80 s with other work running beside them (docs/verdicts.md,
# "Under equilibrium play").
EQUILIBRIUM = ("games", "budget", "search_games", "screen_games", "confirm_games", "play_games")
_EQ_GAMES = ("games", "search_games", "screen_games", "confirm_games", "play_games")


def _eq_defaults() -> dict:
    from balance import equilibrium as eq

    return {
        "games": eq.GAMES,
        "budget": eq.CHECK_BUDGET,
        "search_games": eq.SEARCH_GAMES,
        "screen_games": eq.SCREEN_GAMES,
        "confirm_games": eq.CONFIRM_GAMES,
        "play_games": eq.PLAY_GAMES,
    }


def population_folder(game: str) -> Path:
    """Where the study looks for a game's shipped equilibrium population."""
    from balance import equilibrium

    return equilibrium.default_folder(game)


def equilibrium_settings(game: str, plan: dict, scale: float) -> dict:
    """The equilibrium check's settings of one game's study: the equilibrium
    module's defaults, then the plan's ``[equilibrium]`` table (keys
    :data:`EQUILIBRIUM`); game counts × ``scale`` (even, at least 2)."""
    table = plan.get("equilibrium") or {}
    where = f"configs/{game}/study.toml [equilibrium]"
    if not isinstance(table, dict):
        raise UserError(f"{where}: must be a table of {', '.join(EQUILIBRIUM)}")
    unknown = sorted(set(table) - set(EQUILIBRIUM))
    if unknown:
        raise UserError(f"{where}: unknown key '{unknown[0]}'; allowed: {', '.join(EQUILIBRIUM)}")
    out = _eq_defaults()
    for k, v in table.items():
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise UserError(f"{where}: '{k}' must be a whole number of at least 1, got {v!r}")
        out[k] = v
    for k in _EQ_GAMES:
        out[k] = _scaled(out[k], scale)
    return out


def study_equilibrium(game: str, plan: dict, scale: float, threads, results) -> dict:
    """The game's shipped equilibrium population measured afresh at the study's
    settings (:func:`equilibrium_settings`, the study's seed), as the record
    keeps it; :func:`balance.pages.missing_population` when there is none."""
    from balance import equilibrium

    folder = population_folder(game)
    if not (folder / equilibrium.POPULATION).is_file():
        _step(f"{game}: no shipped equilibrium population in {pages.shown_path(folder)}")
        return pages.missing_population(game, folder)
    kw = equilibrium_settings(game, plan, scale)
    _step(
        f"{game}: the shipped equilibrium population, measured afresh (a best-response "
        f"search of {kw['budget']} evaluations)"
    )
    out = equilibrium.measure_shipped(
        game,
        folder=folder,
        seed=int(plan["seed"]),
        results=results,
        threads=threads,
        progress=True,
        **kw,
    )
    out["shipped"] = pages.shown_path(folder)
    # plain JSON: the record is read back by `balance report`
    return json.loads(json.dumps(out, default=_plain))


def _plain(x):
    import numpy as np

    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    if isinstance(x, set | tuple):
        return sorted(x) if isinstance(x, set) else list(x)
    raise TypeError(f"not JSON: {type(x).__name__}")


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
    t_eq = time.perf_counter()
    eq = study_equilibrium(game, plan, scale, threads, results)
    extra["equilibrium_s"] = round(time.perf_counter() - t_eq, 1)
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
                "equilibrium": eq,
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
    pages.add_equilibrium(page, game, eq, chart_dir=folder / "charts", png=True)
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
    from balance.paths import STUDY, record_written

    record_written(page_path, STUDY, "balance study")
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
    return _own(out, pages_, report.write_index(out, pages_))


def _own(out: Path, pages_: list[dict], index: Path) -> Path:
    """Record the index and every game's page as the study's (``docs/commands.md``):
    a single command's output may then not replace them without ``--force``."""
    from balance.paths import STUDY, record_written

    for g in pages_:
        if g.get("file"):
            record_written(Path(out) / g["file"], STUDY, "balance study")
        for rel in g.get("detail_files") or []:  # the game page's detail pages
            record_written(Path(out) / rel, STUDY, "balance study")
    record_written(index, STUDY, "balance study")
    return index


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
            and isinstance(data.get("equilibrium") or {}, dict)
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
        pages.add_equilibrium(page, game, data.get("equilibrium"))
        home = get_game(game)
        extras = home.hook(home.study_pages)
        # records written before the hooks keep the study's scale in "extra"
        scale = data.get("extras_scale") or (data.get("extra") or {}).get("study_scale")
        if type(scale) in (int, float) and math.isfinite(scale) and scale > 0:
            if extras:
                _add_links(page, extras(out, plan, float(scale), None, results, True))
            _add_repair(page, game, out, plan, float(scale), None, results, True)
        pages_.append(page)
    return _own(out, pages_, report.write_index(out, pages_))
