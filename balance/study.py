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
import os
import time
from pathlib import Path

from balance import analysis, experiments, pages, phases, report
from balance.config import load_study
from balance.errors import UserError
from balance.registry import GAMES, get_game
from balance.store import Store, chart_cache, results_dir, write_text_atomic


def _scaled(n: int, scale: float) -> int:
    n = max(2, int(math.ceil(n * scale)))
    return n + n % 2


# The equilibrium check of the study, per game: the keyword arguments of
# balance.equilibrium.measure_shipped. A smaller audit than the population's own
# (balance.equilibrium.CHECK: one CMA-ES restart of ``budget`` evaluations, no random
# starts), which still screens every content choice (each loadout, each deck) with the
# members' weights; its matrix of the support at ``games`` per pairing, its gain on
# ``confirm_games`` per member, the verdicts on ``play_games`` per pairing. A
# study.toml's [equilibrium] table sets any of them. Game counts are multiplied by the
# study's --scale; the search's budget (CMA-ES evaluations) is not. The page states the
# check's budget beside its result, and the population's own audit beside it.
EQUILIBRIUM = (
    "games",
    "budget",
    "restarts",
    "search_games",
    "screen_games",
    "confirm_games",
    "play_games",
)
_EQ_GAMES = ("games", "search_games", "screen_games", "confirm_games", "play_games")


def _eq_defaults() -> dict:
    from balance import equilibrium as eq

    return {
        "games": 1000,
        "budget": eq.CHECK["budget"],
        "restarts": eq.CHECK["restarts"],
        "search_games": eq.SEARCH_GAMES,
        "screen_games": 200,
        "confirm_games": 2000,
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
    """Run one game's study plan; write its tables and charts; return its page
    (every part of :func:`game_parts` in turn, in this process)."""
    done = {part: run_part(game, part, out, scale, threads, results) for part in game_parts(game)}
    return assemble(game, out, done)


# A game's study is made of independent parts, which the study runs in
# parallel processes (:func:`run_study`): "main" (the matches, the equilibrium
# check, the record, tables and charts), "extras" (the game's own pages, its
# home's study hook) and "repair" (the worked repair example). Each reads and
# writes its own runs (runs are the same whichever part plays them first: a
# run's games are fixed by its seed), so the pages do not depend on the order.
PARTS = ("main", "extras", "repair")


def game_parts(game: str) -> list[str]:
    """The parts of ``game``'s study (:data:`PARTS`) its plan has."""
    home = get_game(game)
    plan = load_study(game)
    return [
        p
        for p in PARTS
        if p == "main"
        or (p == "extras" and home.study_pages)
        or (p == "repair" and plan.get("repair"))
    ]


def run_part(game: str, part: str, out: Path, scale: float, threads, results):
    """One part of a game's study: the page (main), the links of its own pages
    (extras) or the repair page's link (repair)."""
    out = Path(out)
    plan = load_study(game)
    if part == "main":
        return _main_part(game, out, plan, scale, threads, results)
    if part == "extras":
        home = get_game(game)
        _step(f"{game}: its own pages")
        with phases.phase("tables"):
            return home.hook(home.study_pages)(out, plan, scale, threads, results, False)
    if part == "repair":
        return _repair_link(game, out, plan, scale, threads, results, False)
    raise ValueError(f"no study part {part!r}")


def _main_part(game: str, out: Path, plan: dict, scale: float, threads, results) -> dict:
    t0 = time.perf_counter()
    _step(f"{game}: the matches of configs/{game}/study.toml (scale {scale:g})")
    with phases.phase("simulate"):
        runs, extra = study_runs(game, scale, threads, results)
    t_eq = time.perf_counter()
    with phases.phase("searches"):
        eq = study_equilibrium(game, plan, scale, threads, results)
    extra["equilibrium_s"] = round(time.perf_counter() - t_eq, 1)
    home = get_game(game)
    write_text_atomic(
        _record_path(results, game),
        json.dumps(
            {
                "game": game,
                "scale": scale,
                "extra": extra,
                "runs": [r.key for r in runs],
                "extras_scale": scale if home.study_pages else None,
                "equilibrium": eq,
            },
            indent=1,
        ),
    )
    experiments.record(results, game, "study", recorded_plan(plan, scale), [r.key for r in runs])
    group = pages.organise(runs)[game]
    folder = out / game
    extra["elapsed_s"] = round(time.perf_counter() - t0, 1)
    _step(f"{game}: tables, charts and its page ({len(runs)} runs)")
    with phases.phase("tables"):
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
    return page


def recorded_plan(plan: dict, scale: float) -> dict:
    """The study plan as its experiment record keeps it (and its id hashes it):
    what makes the figures and the scale, not ``seconds``, which only the
    estimate of the time left reads (re-measured on a new machine, it must
    not make the same study another experiment)."""
    return {**{k: v for k, v in plan.items() if k != "seconds"}, "scale": scale}


def assemble(game: str, out: Path, done: dict) -> dict:
    """A game's page from its parts' results (``done[part]``): the links of its
    own pages and of the repair page added; its tables written."""
    page = _joined(done)
    folder = Path(out) / game
    with phases.phase("tables"):
        (folder / "tables").mkdir(parents=True, exist_ok=True)
        for name, df in page["tables"].items():
            df.to_csv(folder / "tables" / f"{name}.csv", index=False)
            df.to_parquet(folder / "tables" / f"{name}.parquet", index=False)
    return page


def _joined(done: dict) -> dict:
    """A game's page (``done["main"]``) with the links its other parts made:
    its own pages' and the repair page's."""
    page = done["main"]
    if "extras" in done:
        _add_links(page, done["extras"])
    if done.get("repair"):
        page.setdefault("links", []).append(done["repair"])
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


def _repair_link(game: str, out: Path, plan: dict, scale, threads, results, store_only):
    """The study's worked repair example (``repair = "<file>"`` in study.toml: a
    repair plan in the game's config folder, ``docs/repair.md``): searched and
    verified at the study's scale (games × scale), its page written beside the
    index; the link to it, with the result in words (None: the plan has none)."""
    name = plan.get("repair")
    if not name:
        return None
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
    with phases.phase("searches"):
        res = rp.repair(rplan, results=results, threads=threads, store_only=store_only)
    title = str(data.get("description") or f"{get_game(game).title}: a balance repair")
    command = f"balance {game} repair --plan configs/{game}/{name}"
    if scale != 1:
        command += f"  (games × {scale:g})"
    with phases.phase("pages"):
        page_path = rp.write_page(res, out / f"{game}-repair.html", title, command)
    from balance.paths import STUDY, record_written

    record_written(page_path, STUDY, "balance study")
    _, headline, _ = rp.outcome(res)
    return {"text": f"{title} (worked example): {headline}", "href": page_path.name}


def run_study(
    out: Path,
    scale: float = 1.0,
    threads=None,
    results=None,
    processes: int | None = None,
    games: list[str] | None = None,
) -> Path:
    """Run every game's default study; write ``<out>/index.html`` and a page per game.

    On a first run, every engine is compiled before anything is played, in
    parallel processes (:func:`balance.warmup.ensure`); the study then loads
    each from numba's cache, and says so if it still had to compile anything.

    The games' parts (:func:`game_parts`) run in ``processes`` worker
    processes at once (default :func:`study_processes`: one per core), the
    longest first, each playing on ``threads`` (:func:`_threads_each`); a part's numbers
    do not depend on which process plays it or when. ``processes=1`` runs
    them one after another in this process. Elapsed time and an estimate of
    the time left are printed as parts finish and every 30 s. ``games``: only
    these (default: every registered game)."""
    from balance import warmup

    t0 = time.perf_counter()
    out = Path(out)
    names = list(games or GAMES)
    with phases.phase("compile"):
        warmup.ensure(names, say=_step)
    tasks = [(g, p) for g in names for p in game_parts(g)]
    procs = study_processes(processes, len(tasks))
    clock = Eta(tasks, scale, results, procs, say=_step)
    done, compiled = run_parts(
        clock, procs, run_part, {"out": str(out), "scale": scale, "results": results}, threads
    )
    if compiled >= 1:
        _step(f"compiled kernels after the warm-up for {compiled:.0f} s")
    pages_ = [assemble(g, out, done[g]) for g in names]
    clock.save()
    _step("the index page")
    with phases.phase("pages"):
        index = report.write_index(out, pages_)
    path = _own(out, pages_, index)
    _step(f"done in {_fmt(time.perf_counter() - t0)}")
    phases.dump_if_asked(time.perf_counter() - t0)
    return path


def run_parts(clock, procs: int, work, kw: dict, threads=None):
    """Run ``work(game, part, threads=..., **kw)`` for every part of
    ``clock.order`` (the longest first): one after another in this process on
    ``threads`` (``procs`` 1), else in ``procs`` spawned worker processes,
    each on its share of them (:func:`_threads_each`; ``work`` a module-level
    function and ``kw`` what a worker can be sent); ``clock`` is told as each
    part begins and ends.
    Returns each game's parts' values (``done[game][part]``) and the seconds
    compiled after the warm-up; each worker's phase seconds and tally of
    runs are merged into this process's."""
    from balance import registry, runner

    done: dict[str, dict] = {}
    compiled = 0.0
    if procs <= 1:
        for g, p in clock.order:
            clock.begin(g, p)
            t = time.perf_counter()
            done.setdefault(g, {})[p] = work(g, p, threads=threads, **kw)
            clock.end(g, p, time.perf_counter() - t)
        compiled = sum(registry.compile_seconds.values())
        phases.move(compiled, "simulate", "compile")
        return done, compiled
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    env = {}
    if runner.progress_mode() == "bar":  # two processes cannot share a bar
        env["BALANCE_PROGRESS"] = "lines"
    per = _threads_each(threads)
    ctx = multiprocessing.get_context("spawn")  # a clean interpreter (no forked threads)
    with (
        ProcessPoolExecutor(
            procs, mp_context=ctx, initializer=_worker_init, initargs=(env,)
        ) as pool,
        phases.phase("_waiting"),
    ):
        futures = {
            pool.submit(_part_in_worker, work, g, p, per, kw): (g, p) for g, p in clock.order
        }
        for g, p in clock.order[:procs]:
            clock.begin(g, p)
        pending = set(futures)
        try:
            while pending:
                finished, pending = wait(pending, timeout=30, return_when=FIRST_COMPLETED)
                for f in sorted(finished, key=lambda f: clock.order.index(futures[f])):
                    value, snap, tally, took, wall = f.result()
                    g, p = futures[f]
                    done.setdefault(g, {})[p] = value
                    phases.merge(snap)
                    phases.note("process_wall", wall)
                    runner.merge_tally(tally)
                    compiled += took
                    clock.end(g, p, wall)
                if not finished:
                    clock.heartbeat()
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    return done, compiled


PROCESSES_ENV = "BALANCE_STUDY_PROCESSES"


def study_processes(processes: int | None, parts: int) -> int:
    """How many worker processes the study's parts run in: ``processes`` if
    given, else ``$BALANCE_STUDY_PROCESSES``, else one per core; 1 (this
    process) on a Dask executor, whose cluster plays the games."""
    from balance import executor

    if processes is None:
        env = os.environ.get(PROCESSES_ENV, "").strip()
        if env:
            try:
                processes = int(env)
            except ValueError:
                processes = 0
            if processes < 1:
                raise UserError(
                    f"${PROCESSES_ENV} must be a whole number of at least 1, got {env!r}"
                )
        else:
            processes = os.cpu_count() or 1
    if processes < 1:
        raise UserError(f"--processes must be at least 1, got {processes}")
    if not executor.current().local:
        return 1
    return max(1, min(processes, parts))


def _threads_each(threads: int | None) -> int:
    """Each worker's threads: all of ``threads`` (default: the cores, or
    fewer where ``$NUMBA_NUM_THREADS`` allows fewer: the workers inherit it,
    and a study the user gave no ``--threads`` must not fail on one). While
    both workers play, the system shares the cores between them; while one
    is busy with tables, charts or pages (one core), the other plays on the
    rest. Measured on the 2-core machine, the study at scale 0.1 took 118 s
    and 161 s with two threads a worker against 143 s and 277 s with one, in
    two of three paired rounds under shifting load (122 s against 160 s in
    the third): the figures do not depend on it (a run's games are fixed by
    its seed)."""
    if threads:
        return threads
    import numba

    return max(1, min(os.cpu_count() or 1, numba.config.NUMBA_NUM_THREADS))


def _worker_init(env: dict) -> None:
    """A study worker: ``env`` set; charts drawn in the worker itself (the
    other workers keep the other cores busy)."""
    from balance import charts

    os.environ.update(env)
    charts.WORKERS = 1


def _part_in_worker(work, game, part, threads, kw):
    """``work(game, part, threads=threads, **kw)`` (:func:`run_part`,
    :func:`report_part`) in a worker process: its value, and what the parent
    adds to its own accounts (phase seconds, the runs played, compile
    seconds, wall)."""
    from balance import registry, runner

    phases.reset()
    before = sum(registry.compile_seconds.values())
    t = time.perf_counter()
    with runner.tally() as played:
        value = work(game, part, threads=threads, **kw)
    wall = time.perf_counter() - t
    took = sum(registry.compile_seconds.values()) - before
    phases.move(took, "simulate", "compile")
    return value, phases.snapshot(), played, took, wall


def _fmt(seconds: float) -> str:
    from balance.fmt import fmt_seconds

    return fmt_seconds(round(seconds))


PART_NAMES = {"main": "matches and page", "extras": "own pages", "repair": "repair example"}
TIMINGS = "_timings.json"  # in the store's _studies/: each part's seconds, for the estimate


def _timings_path(results) -> Path:
    return results_dir(results) / "_studies" / TIMINGS


class Eta:
    """Elapsed time and the time left of a study's parts, said as parts end
    and every 30 s (:meth:`heartbeat`).

    A part's expected seconds come from the last study in this store
    (``_studies/_timings.json``, scaled by the ratio of scales), else from
    its plan (``seconds`` in ``configs/<game>/study.toml``: measured on a
    2-core machine at scale 1), else 60 s; as parts end, every expectation
    is multiplied by how long the finished ones took against theirs. The
    time left is the larger of the remaining work shared by the processes
    and the longest part still to finish. :attr:`order` is the longest
    first (the order parts are started in)."""

    def __init__(
        self, tasks, scale: float, results, procs: int, say=print, clock=time.perf_counter
    ):
        self.scale = scale
        self.results = results
        self.procs = procs
        self.say = say
        self.clock = clock
        self.t0 = clock()
        self._rec = self._recorded()
        self.expected = {t: self._prior(*t) for t in tasks}
        self.order = sorted(tasks, key=lambda t: -self.expected[t])
        self.started: dict = {}
        self.took: dict = {}

    def _recorded(self) -> dict:
        try:
            data = json.loads(_timings_path(self.results).read_text())
            ratio = self.scale / float(data["scale"])
            return {k: float(v) * ratio for k, v in data["seconds"].items()}
        except (OSError, ValueError, KeyError, TypeError, ZeroDivisionError):
            return {}

    def _prior(self, game: str, part: str) -> float:
        if f"{game}:{part}" in self._rec:
            return max(1.0, self._rec[f"{game}:{part}"])
        seconds = load_study(game).get("seconds") or {}
        value = seconds.get(part) if isinstance(seconds, dict) else None
        if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
            return max(1.0, float(value) * self.scale)
        return 60.0

    def begin(self, game: str, part: str) -> None:
        self.started.setdefault((game, part), self.clock())

    def end(self, game: str, part: str, seconds: float) -> None:
        self.took[(game, part)] = seconds
        self.started.pop((game, part), None)
        nxt = [t for t in self.order if t not in self.took and t not in self.started]
        if nxt and len(self.started) < self.procs:
            self.begin(*nxt[0])
        self.say(
            f"{game}: {PART_NAMES.get(part, part)} done in {_fmt(seconds)}; "
            f"{len(self.took)} of {len(self.order)} parts, {self.progress()}"
        )

    def left(self) -> float:
        now = self.clock()
        done = sum(self.expected[t] for t in self.took)
        rate = sum(self.took.values()) / done if done else 1.0
        rest = []
        for t in self.order:
            if t in self.took:
                continue
            ran = now - self.started[t] if t in self.started else 0.0
            rest.append(max(0.0, self.expected[t] * rate - ran))
        if not rest:
            return 0.0
        return max(sum(rest) / self.procs, max(rest))

    def progress(self) -> str:
        elapsed = self.clock() - self.t0
        left = self.left()
        if len(self.took) == len(self.order):
            return f"{_fmt(elapsed)} elapsed"
        return f"{_fmt(elapsed)} elapsed, about {_fmt(max(1.0, left))} left"

    def heartbeat(self) -> None:
        self.say(f"{len(self.took)} of {len(self.order)} parts done, {self.progress()}")

    def save(self) -> None:
        """Keep each part's seconds for the next study's estimate."""
        if len(self.took) != len(self.order):
            return
        path = _timings_path(self.results)
        data = {
            "scale": self.scale,
            "processes": self.procs,
            "seconds": {f"{g}:{p}": round(s, 2) for (g, p), s in self.took.items()},
        }
        try:
            write_text_atomic(path, json.dumps(data, indent=1))
        except OSError:
            pass  # only an estimate is lost


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


def _study_record(game: str, results) -> dict:
    """A game's latest study record in the store (:func:`_read_record`), or a
    one-line error saying there is none."""
    rec = _record_path(results, game)
    if not rec.is_file():
        raise UserError(
            f"no stored study of {game} in {results_dir(results)}; run `balance study` "
            "first (`balance report --game` rebuilds only the games it studied; or name "
            "runs: balance report RUNS -o FILE)"
        )
    return _read_record(rec)


def _record_scale(data: dict) -> float | None:
    """The scale a study record's own pages and repair example were made at
    (records written before the hooks keep it in ``extra``); None if none."""
    scale = data.get("extras_scale") or (data.get("extra") or {}).get("study_scale")
    if type(scale) in (int, float) and math.isfinite(scale) and scale > 0:
        return float(scale)
    return None


def report_parts(game: str, record: dict) -> list[str]:
    """The parts of ``game``'s study that :func:`report_part` rebuilds from its
    study ``record``: its page, and its own pages and repair example where the
    record has a scale."""
    return game_parts(game) if _record_scale(record) else ["main"]


def report_part(game: str, part: str, out: Path, results, threads=None):
    """One part of :func:`report_study`, from the store alone: the game's page
    (main), the links of its own pages (extras) or the repair page's link."""
    out = Path(out)
    data = _study_record(game, results)
    plan = load_study(game)
    if part == "main":
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
                f"the study record {_record_path(results, game)} is damaged (its runs are "
                f"not {game}'s); run `balance study` again"
            )
        page = pages.build_page(
            game,
            group,
            extra_manifest=data.get("extra"),
            cache_dir=chart_cache(results),
            tuned=plan.get("tuned"),
        )
        pages.add_equilibrium(page, game, data.get("equilibrium"))
        return page
    scale = _record_scale(data)
    if part == "extras":
        home = get_game(game)
        return home.hook(home.study_pages)(out, plan, scale, None, results, True)
    if part == "repair":
        return _repair_link(game, out, plan, scale, None, results, True)
    raise ValueError(f"no study part {part!r}")


class _Elapsed(Eta):
    """:class:`Eta` for a report: the same order of parts (the longest first),
    the elapsed time as each part ends, and no estimate of the time left (the
    parts' seconds are a study's, which plays the games too)."""

    def progress(self) -> str:
        return f"{_fmt(self.clock() - self.t0)} elapsed"

    def save(self) -> None:
        pass


def _report_step(line: str) -> None:
    import sys

    print(f"report: {line}", file=sys.stderr, flush=True)


def report_study(
    out: Path, results=None, processes: int | None = 1, games: list[str] | None = None
) -> Path:
    """Rebuild the default study's report from the store alone (nothing is
    simulated): the runs of each game's latest ``balance study``. The games'
    parts (:func:`report_part`) are built as the study builds them, in
    ``processes`` worker processes at once (:func:`study_processes`; None:
    one per core), the longest first; the pages do not depend on it.
    ``games``: only these (default: every registered game)."""

    out = Path(out)
    names = list(games or GAMES)
    # every record is checked before anything is built
    records = {game: _study_record(game, results) for game in names}
    tasks = [(g, p) for g in names for p in report_parts(g, records[g])]
    procs = study_processes(processes, len(tasks))
    clock = _Elapsed(tasks, 1.0, results, procs, say=_report_step)
    done, _ = run_parts(clock, procs, report_part, {"out": str(out), "results": results})
    pages_ = [_joined(done[game]) for game in names]
    return _own(out, pages_, report.write_index(out, pages_))
