"""Tuning a strategy's weights with CMA-ES, and exploitability (``docs/tuning.md``).

Three layers, each usable alone:

* :class:`Space` (:func:`space`): which keys of a strategy's TOML are tuned and
  within which bounds. Every feature weight of every section (the strategy
  module's ``SECTIONS``) and the scalars (``SCALARS``) that have a range: the
  core gives section weights [-10, 10] and temperatures [0, 2]; the game's
  ``configs/<game>/tune.toml`` (optional) declares the other scalars' ranges,
  overrides any bound and lists the keys held ``fixed``. A base value outside
  its bound widens the bound to include it. A weight the base leaves out
  starts at 0 (its kernel value); a scalar it leaves out, at the kernel's
  default.
* :func:`search`: the CMA-ES loop (the ``cma`` library), in coordinates
  scaled to [0, 1] by the bounds, seeded, with the objective injected
  (``evaluate(specs) -> scores``). Candidate ``i`` depends only on the scores
  of earlier generations, so the evaluations of a smaller budget are a prefix
  of a larger one's, and a run that stopped part-way is continued by asking
  for the same search again.
* :func:`tune`: the objective on the game (:class:`Objective`): a candidate's
  score (win + ½ draw) against the opponents, seat-swapped deal pairs on one
  seed for every candidate (common random numbers), every evaluation a stored
  run (so a re-run reads what it evaluated before and gives the same result
  bit for bit); then the winner's curse: the ``top`` best candidates of the
  search and the base are played again on a fresh seed with ``refine`` times
  the games, and the tuned strategy is the best of them there; its score, the
  base's and their paired difference come from those fresh deals only.
  :func:`write_strategy` writes the result as a normal strategy TOML with its
  provenance in comment lines; :func:`exploit` tunes a best response to a
  strategy and reports how far it beats it.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from balance import config, runner, stats, tables
from balance.errors import UserError
from balance.paths import check_keys, load_toml
from balance.registry import get_game
from balance.store import Store, write_text_atomic

WEIGHT_BOUNDS = (-10.0, 10.0)  # a section's feature weight
TEMPERATURE_BOUNDS = (0.0, 2.0)  # any scalar whose name holds "temperature"
DECIMALS = 3  # weights are rounded to this many decimals before they are played
SIGMA0 = 0.01  # CMA-ES's first step, as a share of each key's range (measured: docs/tuning.md)
TOP = 3  # candidates of the search played again on fresh deals
REFINE = 4  # ... with this many times the games per evaluation


# ---- what is tuned ---------------------------------------------------------------
@dataclass(frozen=True)
class Param:
    """One tuned key: ``section.feature`` or a scalar's name."""

    key: str
    lo: float
    hi: float
    start: float


@dataclass(frozen=True)
class Space:
    """The keys tuned (``params``), in a fixed order, and what is held: the
    base's spec for every key not tuned."""

    params: tuple[Param, ...]
    base_spec: dict = field(hash=False)
    fixed: tuple[str, ...] = ()  # keys held at the base's value (or the kernel's default)
    source: str = ""  # where the bounds came from
    widened: tuple[str, ...] = ()  # keys whose bound was widened to hold the base's value

    @property
    def dim(self) -> int:
        return len(self.params)

    def lows(self) -> np.ndarray:
        return np.array([p.lo for p in self.params])

    def highs(self) -> np.ndarray:
        return np.array([p.hi for p in self.params])

    def to_unit(self, values) -> np.ndarray:
        lo, hi = self.lows(), self.highs()
        return (np.asarray(values, float) - lo) / (hi - lo)

    def values(self, unit) -> np.ndarray:
        """Unit coordinates → weights: clipped to the bounds, rounded to
        :data:`DECIMALS`."""
        lo, hi = self.lows(), self.highs()
        v = lo + np.clip(np.asarray(unit, float), 0.0, 1.0) * (hi - lo)
        return np.clip(np.round(v, DECIMALS), lo, hi)

    def spec(self, values) -> dict:
        """The strategy table for ``values`` (one per param): the base's spec
        with every tuned key set."""
        out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in self.base_spec.items()}
        for p, v in zip(self.params, values, strict=True):
            v = float(v) + 0.0  # never -0.0
            if "." in p.key:
                sec, feat = p.key.split(".", 1)
                out.setdefault(sec, {})[feat] = v
            else:
                out[p.key] = v
        return out

    def start(self) -> np.ndarray:
        return np.array([p.start for p in self.params])


def _get(spec: dict, key: str):
    if "." in key:
        sec, feat = key.split(".", 1)
        return spec.get(sec, {}).get(feat)
    return spec.get(key)


def scalar_defaults(base: config.Strategy) -> dict[str, float]:
    """The kernel's value of each scalar a spec leaves out, read by encoding
    the side with and without the scalar set (game-agnostic)."""
    mod = get_game(base.game).strategy_module()
    empty = replace(base, spec={}).vector()
    out = {}
    for key in mod.SCALARS:
        probe = replace(base, spec={key: 12345.625}).vector()
        diff = np.flatnonzero(probe != empty)
        out[key] = float(empty[diff[0]]) if len(diff) == 1 else 0.0
    return out


def _pair(path, key: str, value) -> tuple[float, float]:
    ok = (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(x, int | float) and not isinstance(x, bool) for x in value)
        and all(math.isfinite(x) for x in value)
    )
    if not ok or not value[0] < value[1]:
        raise UserError(f"{path}: '{key}' must be [low, high] with low < high, got {value!r}")
    return float(value[0]), float(value[1])


def bounds_file(game: str) -> Path:
    return get_game(game).configs / "tune.toml"


def space(game: str, base: config.Strategy, bounds: str | Path | None = None) -> Space:
    """The keys of ``base`` that are tuned, with their bounds (module
    docstring). ``bounds``: a tune.toml (default ``configs/<game>/tune.toml``
    where it exists).

    Raises
    ------
    UserError
        A malformed bounds file (unknown key, bad range, a fixed key that is
        not a key), in one line naming the file.
    """
    mod = get_game(game).strategy_module()
    sections = {name: [f[0] for f in feats] for name, (_, feats) in mod.SECTIONS.items()}
    path = Path(bounds) if bounds is not None else bounds_file(game)
    data: dict = {}
    if bounds is not None or path.is_file():
        data = load_toml(path)
    check_keys(path, "the top level", data, ["weights", "fixed", "bounds"])
    weights = _pair(path, "weights", data["weights"]) if "weights" in data else WEIGHT_BOUNDS
    declared: dict[str, tuple[float, float]] = {}
    table = data.get("bounds", {})
    if not isinstance(table, dict):
        raise UserError(f"{path}: 'bounds' must be a table")
    check_keys(path, "[bounds]", table, [*mod.SCALARS, *sections])
    for key, value in table.items():
        if key in sections:
            if not isinstance(value, dict):
                raise UserError(f"{path}: [bounds.{key}] must be a table of [low, high]")
            check_keys(path, f"[bounds.{key}]", value, sections[key])
            for feat, pair in value.items():
                declared[f"{key}.{feat}"] = _pair(path, f"{key}.{feat}", pair)
        else:
            declared[key] = _pair(path, key, value)
    fixed_raw = data.get("fixed", [])
    if not isinstance(fixed_raw, list) or not all(isinstance(f, str) for f in fixed_raw):
        raise UserError(f"{path}: 'fixed' must be a list of keys, e.g. [\"temperature\"]")
    all_keys = [f"{s}.{f}" for s, feats in sections.items() for f in feats] + list(mod.SCALARS)
    fixed: set[str] = set()
    for f in fixed_raw:
        if f in sections:
            fixed.update(f"{f}.{x}" for x in sections[f])
        elif f in all_keys:
            fixed.add(f)
        else:
            raise UserError(
                f"{path}: 'fixed' names '{f}', not a key; allowed: a section "
                f"({', '.join(sections)}), section.feature or a scalar ({', '.join(mod.SCALARS)})"
            )
    defaults = scalar_defaults(base)
    params, widened, held = [], [], []
    for key in all_keys:
        if key in fixed:
            held.append(key)
            continue
        is_scalar = "." not in key
        if key in declared:
            lo, hi = declared[key]
        elif not is_scalar:
            lo, hi = weights
        elif "temperature" in key:
            lo, hi = TEMPERATURE_BOUNDS
        else:  # a scalar without a declared range is held (its meaning sets its range)
            held.append(key)
            continue
        v = _get(base.spec, key)
        start = float(v) if v is not None else (defaults[key] if is_scalar else 0.0)
        if not lo <= start <= hi:
            if min(abs(start - lo), abs(start - hi)) > hi - lo:
                held.append(key)  # far outside (e.g. a 'never' of 1e9): held at the base's value
                continue
            widened.append(key)  # near: the bound widens to hold the base's value
            lo, hi = min(lo, start), max(hi, start)
        params.append(Param(key, lo, hi, start))
    if not params:
        raise UserError(f"{path}: every key is fixed; nothing is left to tune")
    sp = Space(
        tuple(params),
        base.spec,
        tuple(held),
        str(path) if data else "the core's defaults",
        tuple(widened),
    )
    for corner in (sp.lows(), sp.highs()):  # a bound the strategy loader would refuse
        config._validate_strategy(game, path, sp.spec(corner))
    return sp


# ---- the search -------------------------------------------------------------------
@dataclass
class Evaluation:
    """One candidate the search played: its index, weights, spec and score."""

    index: int
    values: np.ndarray
    spec: dict
    score: float
    detail: dict = field(default_factory=dict)


def _cma_seed(seed: int) -> int:
    return int(seed) % (2**31 - 2) + 1  # cma: 0 means "from the clock"


def search(
    sp: Space,
    evaluate: Callable[[list[dict]], list],
    budget: int,
    seed: int,
    *,
    popsize: int | None = None,
    sigma0: float = SIGMA0,
    progress=None,
) -> list[Evaluation]:
    """CMA-ES over ``sp`` for ``budget`` evaluations; higher scores are better.

    ``evaluate(specs)`` scores a list of strategy tables (a float, or a dict
    with ``score``, per spec). The first evaluation is the base itself (the
    search's start); then generation after generation of ``popsize``
    candidates (cma's default, ``4 + 3 ln(dim)``; never set from the budget,
    so a smaller budget's evaluations are a prefix of a larger one's), the
    last one cut to the budget. Deterministic given ``seed`` and the scores:
    cma's samples come from a generator seeded here, not numpy's global state.
    ``progress`` gets ``advance(n)`` after each batch.
    """
    import cma

    if budget < 1:
        raise UserError(f"--budget must be at least 1 evaluation, got {budget}")
    rng = np.random.default_rng(_cma_seed(seed))
    opts = {
        "bounds": [0.0, 1.0],
        "seed": _cma_seed(seed),
        "randn": lambda *shape: rng.standard_normal(shape),
        "verbose": -9,
        "verb_log": 0,
        "verb_disp": 0,
        "tolx": 1e-6,
        "tolfun": 0.0,
        "tolflatfitness": 10**9,
        "tolstagnation": 10**9,
    }
    if popsize is not None:
        opts["popsize"] = int(popsize)
    history: list[Evaluation] = []

    def run(batch: list[np.ndarray]) -> list[float]:
        values = [sp.values(u[: sp.dim]) for u in batch]
        specs = [sp.spec(v) for v in values]
        got = evaluate(specs)
        if len(got) != len(specs):
            raise ValueError("evaluate returned a score count unlike the candidates")
        out = []
        for v, s, g in zip(values, specs, got, strict=True):
            d = g if isinstance(g, dict) else {"score": float(g)}
            history.append(Evaluation(len(history), v, s, float(d["score"]), d))
            out.append(float(d["score"]))
        if progress is not None:
            progress.advance(len(batch))
        return out

    x0 = np.clip(sp.to_unit(sp.start()), 0.0, 1.0)
    if sp.dim == 1:  # cma needs two dimensions: a second one that nothing reads
        x0 = np.array([x0[0], 0.5])
    state = np.random.get_state()  # cma seeds numpy's global generator: put it back
    try:
        run([x0])
        es = cma.CMAEvolutionStrategy(x0, sigma0, opts)
        while len(history) < budget and not es.stop():
            xs = es.ask()
            left = budget - len(history)
            scores = run(xs[:left])
            if len(xs) > left:
                break  # the last generation, cut to the budget: never told
            es.tell(xs, [-s for s in scores])
    finally:
        np.random.set_state(state)
    return history


def best_distinct(history: list[Evaluation], k: int) -> list[Evaluation]:
    """The ``k`` best evaluations with distinct weights (ties: the earlier)."""
    out, seen = [], set()
    for ev in sorted(history, key=lambda e: (-e.score, e.index)):
        key = tuple(np.round(ev.values, DECIMALS))
        if key in seen:
            continue
        seen.add(key)
        out.append(ev)
        if len(out) == k:
            break
    return out


# ---- the objective on the game ---------------------------------------------------------
def fresh_seed(seed: int) -> int:
    """The seed of the re-evaluation: derived from ``seed``, never equal to it."""
    s = int(hashlib.sha256(f"balance-tune-fresh:{seed}".encode()).hexdigest()[:15], 16)
    return s if s != seed else s + 1


@dataclass
class Objective:
    """A candidate's score against ``opponents`` under ``ruleset``: seat-swapped
    deal pairs, ``games`` per opponent on ``seed`` (the same deals for every
    candidate), each match a stored run. ``name`` names the candidate side
    (its deck or loadout: the base's)."""

    ruleset: config.Ruleset
    base: config.Strategy
    opponents: list
    games: int
    seed: int
    name: str
    store: Store | None = None
    threads: int | None = None
    played: list = field(default_factory=list)  # run keys, in order
    # the opponents' weights (a mixture: summing to 1), None: every opponent alike
    weights: tuple | None = None
    # games against each opponent of every evaluation (a mixture's search: stratified by
    # weight, :func:`allot`); None: ``games`` against each
    allot: tuple | None = None

    def side(self, spec: dict) -> config.Strategy:
        suffix = self.base.name.partition("@")[2]
        return replace(self.base, name=self.name + (f"@{suffix}" if suffix else ""), spec=spec)

    def runs(self, sides: list, games, seed: int, progress: bool = False, label: str = "") -> list:
        """Each side against every opponent (``games`` each, or one count per
        opponent): a list (per side) of run lists."""
        counts = list(games) if isinstance(games, tuple | list) else [games] * len(self.opponents)
        specs = [
            runner.RunSpec(self.ruleset, s, o, n, seed)
            for s in sides
            for o, n in zip(self.opponents, counts, strict=True)
        ]
        res = runner.run_many(
            specs,
            store=self.store,
            threads=self.threads,
            progress=progress,
            label=label or "tuning",
        )
        self.played += [r.key for r in res]
        k = len(self.opponents)
        return [res[i * k : (i + 1) * k] for i in range(len(sides))]

    def __call__(self, specs: list[dict]) -> list[dict]:
        out = []
        games = self.allot if self.allot is not None else self.games
        for runs in self.runs([self.side(s) for s in specs], games, self.seed):
            if self.allot is not None:
                row = stratified_score(runs, self.weights)
            else:
                row = score_row(runs, self.weights)
            row["cached"] = all(r.cached for r in runs)
            out.append(row)
        return out


def allot(total: int, weights) -> tuple[int, ...]:
    """``total`` games against a mixture, split by its ``weights`` (stratified
    sampling): each opponent's share rounded to whole seat-swapped pairs, at
    least one pair each."""
    w = np.asarray(weights, float)
    return tuple(int(2 * max(1, round(total * x / 2))) for x in w / w.sum())


def stratified_score(runs, weights, alpha: float = 0.05) -> dict:
    """Side A's score against a mixture from one run per opponent, each of its
    own size (stratified by weight, :func:`allot`): ``Σ w_j · score_j`` with the
    normal interval of a stratified mean, each stratum's variance over its
    deals (a seat-swapped pair, the independent unit; a stratum of one deal
    counts the largest variance a score in [0, 1] can have)."""
    from balance.stats.normal import z_crit

    score, var = 0.0, 0.0
    for w, r in zip(weights, runs, strict=True):
        x = r.pair_points.astype(float) / 4.0
        n = x.size
        v = float(x.var(ddof=1)) if n > 1 else 0.25
        score += float(w) * float(x.mean())
        var += float(w) ** 2 * v / n
    h = z_crit(alpha) * math.sqrt(var)
    return {
        "score": score,
        "lo": max(0.0, score - h),
        "hi": min(1.0, score + h),
        "games": int(sum(r.games for r in runs)),
        "deals": int(sum(r.pair_points.size for r in runs)),
    }


def score_row(runs, weights=None) -> dict:
    """A side's score over its runs (side A of each), pooled by deal.

    ``weights`` (one per run, summing to 1; the runs on one seed): the score
    against a mixture of the opponents, ``Σ w_j · score_j``, its interval
    clustered by deal (every run replays the same deals: a deal's weighted
    points are one cluster)."""
    if weights is not None:
        return mixture_score(runs, weights)
    p = tables.pooled_side([(r, "a") for r in runs])
    return {
        "score": p["score"],
        "lo": p["score_lo"],
        "hi": p["score_hi"],
        "games": p["games"],
        "deals": p["deals"],
    }


def deal_points(runs, weights=None) -> np.ndarray:
    """A side's score on each deal, averaged over its opponents (0..1), or
    weighted by ``weights`` (one per run, summing to 1)."""
    if weights is None:
        weights = [1.0 / len(runs)] * len(runs)
    return (
        sum(float(w) * r.pair_points.astype(float) for w, r in zip(weights, runs, strict=True))
        / 4.0
    )


def mixture_score(runs, weights) -> dict:
    """Side A's score against a mixture of its opponents (``weights``, one per
    run, summing to 1), every run on one seed and of one size: the mean over
    deals of the weighted points, with the design-effect Wilson interval of a
    mean in [0, 1] clustered by deal (:func:`balance.stats.cluster_mean`)."""
    seeds = {r.spec.seed for r in runs}
    sizes = {r.pair_points.size for r in runs}
    if len(seeds) != 1 or len(sizes) != 1:
        raise ValueError("a mixture's score needs every run on one seed and of one size")
    x = deal_points(runs, weights)  # 0..1 per deal
    sc = stats.cluster_mean(2.0 * x, np.full(x.size, 2.0), bounds=(0.0, 1.0))
    return {
        "score": sc["mean"],
        "lo": sc["lo"],
        "hi": sc["hi"],
        "games": int(sum(r.games for r in runs)),
        "deals": int(x.size),
    }


@dataclass
class TuneResult:
    """What :func:`tune` found (every figure on the fresh deals unless named
    ``screen``)."""

    game: str
    name: str
    base: config.Strategy
    tuned: config.Strategy
    opponents: list
    ruleset: config.Ruleset
    space: Space
    budget: int
    games: int
    seed: int
    fresh_seed: int
    fresh_games: int
    history: list[Evaluation]
    finalists: list[dict]  # {index, screen, score, lo, hi, games, spec}
    base_score: dict
    tuned_score: dict
    diff: dict  # tuned - base, paired by deal
    search_s: float
    evaluated: int  # evaluations simulated now (the rest read from the store)
    run_keys: list
    popsize: int
    pick_index: int = -1
    fresh_keys: list = field(default_factory=list)  # the runs of the fresh re-evaluation
    sigma0: float = SIGMA0

    @property
    def s_per_eval(self) -> float:
        return self.search_s / self.evaluated if self.evaluated else float("nan")


def check_options(
    budget: int, games: int, top: int = TOP, refine: int = REFINE, step: float = SIGMA0
) -> int:
    """Validate the tune options before any game; returns games as deal pairs."""
    if not 0 < step <= 0.5:
        raise UserError(f"--step must be above 0 and at most 0.5 (of each key's range), got {step}")
    if budget < 1:
        raise UserError(f"--budget must be at least 1 evaluation, got {budget}")
    if budget > 100_000:
        raise UserError(f"--budget = {budget:,} evaluations is too many; at most 100,000")
    if top < 1:
        raise UserError(f"--top must be at least 1, got {top}")
    if refine < 1:
        raise UserError(f"--refine must be at least 1, got {refine}")
    games = runner.check_games(games, "--games")
    runner.check_games(games * refine, "--games × --refine (the fresh re-evaluation)")
    return games


def tune(
    game: str,
    base: config.Strategy,
    opponents: list,
    *,
    ruleset: config.Ruleset | None = None,
    budget: int = 100,
    games: int = 1000,
    seed: int = 1,
    results=None,
    threads: int | None = None,
    name: str | None = None,
    bounds=None,
    top: int = TOP,
    refine: int = REFINE,
    popsize: int | None = None,
    sigma0: float = SIGMA0,
    progress: bool = True,
    weights=None,
    fresh: int | None = None,
    allot: tuple | None = None,
) -> TuneResult:
    """Tune ``base``'s weights against ``opponents`` (module docstring).

    Every match is a stored run in ``results`` (``None``: the default store),
    so the same call again reads its evaluations back and returns the same
    result; a call with a larger ``budget`` continues a smaller one.
    ``weights`` (one per opponent, summing to 1): score against that mixture
    of the opponents (a best response to it: :mod:`balance.equilibrium`),
    not against each alike. ``fresh``: the seed of the re-evaluation
    (default :func:`fresh_seed` of ``seed``). ``allot`` (one count per
    opponent, with ``weights``): the games of each search evaluation against
    each opponent (stratified by weight: :func:`allot`); the re-evaluation
    still plays ``games × refine`` against each, so its candidates compare
    deal by deal."""
    games = check_options(budget, games, top, refine, sigma0)
    runner.check_seed(seed)
    if not opponents:
        raise UserError("--vs: name at least one opponent")
    ruleset = ruleset or config.resolve_variant(game, "base")
    sp = space(game, base, bounds)
    label = name or f"{base.name.partition('@')[0]}-tuned"
    store = Store(results)
    if weights is not None:
        weights = tuple(float(w) for w in weights)
        if len(weights) != len(opponents) or abs(sum(weights) - 1.0) > 1e-9 or min(weights) < 0:
            raise ValueError("weights: one per opponent, non-negative, summing to 1")
    if allot is not None:
        allot = tuple(int(n) for n in allot)
        if weights is None or len(allot) != len(opponents):
            raise ValueError("allot: one game count per opponent, with the mixture's weights")
        for n in allot:
            runner.check_games(n, "a stratum's games")
    obj = Objective(
        ruleset,
        base,
        list(opponents),
        games,
        seed,
        label,
        store,
        threads,
        weights=weights,
        allot=allot,
    )
    for s in [base, obj.side(sp.spec(sp.start())), *opponents]:  # refused sides: before any game
        runner.RunSpec(ruleset, s, opponents[0], 2, seed)
    bar = runner._Progress(
        budget, f"tuning {base.name} ({sp.dim} weights)", progress, unit="evaluations"
    )
    t0 = time.perf_counter()
    try:
        history = search(sp, obj, budget, seed, popsize=popsize, sigma0=sigma0, progress=bar)
    finally:
        bar.close()
    search_s = time.perf_counter() - t0
    evaluated = sum(not ev.detail.get("cached", False) for ev in history)
    # the winner's curse: the best of the search and the base, on fresh deals
    fresh = fresh_seed(seed) if fresh is None else runner.check_seed(fresh)
    fgames = games * refine
    finalists = best_distinct(history, top)
    # a finalist that plays exactly as the base (its start) shares the base's runs
    same = [np.array_equal(obj.side(ev.spec).vector(), base.vector()) for ev in finalists]
    new = [obj.side(ev.spec) for ev, s in zip(finalists, same, strict=True) if not s]
    n_search = len(obj.played)
    played = iter(obj.runs([base, *new], fgames, fresh, progress=progress, label="fresh deals"))
    base_runs = next(played)
    runs = [base_runs] + [base_runs if s else next(played) for s in same]
    base_row = score_row(runs[0], weights)
    rows = []
    for ev, r in zip(finalists, runs[1:], strict=True):
        rows.append(
            {"index": ev.index, "screen": ev.score, **score_row(r, weights), "spec": ev.spec}
        )
    pick = max(range(len(rows)), key=lambda i: (rows[i]["score"], -rows[i]["index"]))
    diff = stats.paired_diff(deal_points(runs[1 + pick], weights) - deal_points(runs[0], weights))
    import cma

    pop = popsize or int(cma.CMAOptions().eval("popsize", loc={"N": max(sp.dim, 2)}))
    return TuneResult(
        game=game,
        name=label,
        base=base,
        tuned=obj.side(rows[pick]["spec"]),
        opponents=list(opponents),
        ruleset=ruleset,
        space=sp,
        budget=budget,
        games=games,
        seed=seed,
        fresh_seed=fresh,
        fresh_games=fgames,
        history=history,
        finalists=rows,
        base_score=base_row,
        tuned_score=rows[pick],
        diff=diff,
        search_s=search_s,
        evaluated=evaluated,
        run_keys=obj.played,
        fresh_keys=obj.played[n_search:],
        popsize=pop,
        pick_index=rows[pick]["index"],
        sigma0=sigma0,
    )


# ---- the written strategy ----------------------------------------------------------------
def _toml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def _toml_num(v: float) -> str:
    v = float(v) + 0.0
    return repr(int(v)) + ".0" if v.is_integer() and abs(v) < 1e15 else repr(v)


def pct_ci(row: dict) -> str:
    return f"{100 * row['score']:.1f}% [{100 * row['lo']:.1f}%, {100 * row['hi']:.1f}%]"


def diff_text(d: dict) -> str:
    return f"{100 * d['mean']:+.1f} pp [{100 * d['lo']:+.1f}, {100 * d['hi']:+.1f}]"


def provenance(res: TuneResult, command: str | None = None) -> dict:
    """What the written strategy records about its making."""
    import cma

    from balance import __version__

    return {
        "command": command or runner.command_line(),
        "base": res.base.name,
        "rules": res.ruleset.name,
        "opponents": [o.name for o in res.opponents],
        "budget": res.budget,
        "games": res.games,
        "seed": res.seed,
        "fresh_seed": res.fresh_seed,
        "fresh_games_per_opponent": res.fresh_games,
        "score": {k: res.tuned_score[k] for k in ("score", "lo", "hi", "games", "deals")},
        "base_score": {k: res.base_score[k] for k in ("score", "lo", "hi", "games", "deals")},
        "difference": {k: res.diff[k] for k in ("mean", "lo", "hi", "n", "p")},
        "tuned_keys": [p.key for p in res.space.params],
        "fixed_keys": list(res.space.fixed),
        "bounds": res.space.source,
        "optimiser": f"CMA-ES (cma {cma.__version__}), popsize {res.popsize}, step {res.sigma0:g}",
        "date": runner.utc_now(),
        "toolkit_version": __version__,
    }


def strategy_text(res: TuneResult, command: str | None = None) -> str:
    """The tuned strategy as a TOML file ``config.load_strategy`` reads, its
    provenance in comment lines (the loader accepts only strategy keys)."""
    g = get_game(res.game)
    mod = g.strategy_module()
    prov = provenance(res, command)
    t, b, d = res.tuned_score, res.base_score, res.diff
    lines = [
        f"# Tuned by `balance {res.game} tune` (balance {prov['toolkit_version']}) on {prov['date']}",
        f"# command: {prov['command']}",
        f"# base: {res.base.name}; rules: {res.ruleset.name}; opponents: "
        + ", ".join(prov["opponents"]),
        f"# search: {prov['optimiser']}, {res.budget} evaluations of {res.games:,} games "
        f"per opponent (seed {res.seed}); bounds: {res.space.source}",
        f"# tuned keys: {res.space.dim}; fixed: {', '.join(res.space.fixed) or 'none'}",
        f"# score on fresh deals (seed {res.fresh_seed}, {res.fresh_games:,} games per opponent, "
        f"{t['games']:,} games, {t['deals']:,} deals): {pct_ci(t)}",
        f"# the base's score on the same deals: {pct_ci(b)}; difference {diff_text(d)} "
        f"(paired by deal, n = {d['n']:,})",
        "# provenance: " + json.dumps(prov, sort_keys=True, default=str),
        f"name = {_toml_str(res.name)}",
        "description = "
        + _toml_str(
            f"{res.base.name.partition('@')[0]} tuned against {', '.join(prov['opponents'])}: "
            f"{pct_ci(t)} on fresh deals ({res.base.name.partition('@')[0]}: {pct_ci(b)})"
        ),
    ]
    if res.tuned.deck is not None:
        lines.append(f"deck = {_toml_str(res.tuned.deck.name)}")
    if res.tuned.loadout is not None:
        lines.append(f"loadout = {_toml_str(res.tuned.name.partition('@')[2])}")
    lines += _weight_lines(mod, res.tuned.spec)
    return "\n".join(lines) + "\n"


def _weight_lines(mod, spec: dict, table: str = "") -> list[str]:
    """A spec's scalars and sections as TOML lines (under ``[table]`` if given)."""
    lines = [f"[{table}]"] if table else []
    for key in mod.SCALARS:
        if key in spec:
            lines.append(f"{key} = {_toml_num(spec[key])}")
    for sec, (_, feats) in mod.SECTIONS.items():
        if sec not in spec:
            continue
        lines.append(f"[{table}.{sec}]" if table else f"[{sec}]")
        for f, _ in feats:
            if f in spec[sec]:
                lines.append(f"{f} = {_toml_num(spec[sec][f])}")
    return lines


def per_primal_text(found: list[TuneResult], command: str | None = None) -> str:
    """One strategy file of several tunes, one per deck (games with decks): the
    first deck's file as :func:`strategy_text` writes it, then each deck's
    weights as a ``[by_primal."<Primal>"]`` table (:func:`config.primal_specs`),
    each headed by its own provenance."""
    mod = get_game(found[0].game).strategy_module()
    lines = [
        f"# One tuned strategy per deck: {len(found)} tunes, each against the same "
        "opponents; a side plays the table of its deck's Primal (the top level: "
        f"{found[0].tuned.deck.name}'s)",
        strategy_text(found[0], command).rstrip("\n"),
    ]
    for res in found:
        primal = config.deck_primal_name(res.tuned.deck) or res.tuned.deck.name
        t, b, d = res.tuned_score, res.base_score, res.diff
        prov = provenance(res, command)
        lines += [
            "",
            f"# {res.tuned.deck.name}: {res.base.name} tuned against {len(res.opponents)} "
            f"opponents; fresh deals (seed {res.fresh_seed}, {t['games']:,} games): "
            f"{pct_ci(t)}; the base: {pct_ci(b)}; difference {diff_text(d)}",
            "# provenance: " + json.dumps(prov, sort_keys=True, default=str),
            *_weight_lines(mod, res.tuned.spec, f"by_primal.{_toml_str(primal)}"),
        ]
    return "\n".join(lines) + "\n"


def write_per_primal(found: list[TuneResult], path, command: str | None = None) -> Path:
    """Write :func:`per_primal_text` atomically and check that every deck's side
    loads back as the strategy that was played."""
    path = Path(path)
    write_text_atomic(path, per_primal_text(found, command))
    for res in found:
        back = config.load_strategy(res.game, f"{path}@{res.tuned.deck.name}")
        if back.spec != res.tuned.spec:  # pragma: no cover (a writer bug, never the user's)
            raise RuntimeError(f"{path}: {res.tuned.deck.name}'s weights do not read back")
    return path


def default_out(game: str, name: str) -> Path:
    return Path("tuned") / f"{game}-{name}.toml"


def check_out(path) -> Path:
    """``--out`` as a .toml file that can be written (checked before any game)."""
    from balance.paths import writable_file

    p = writable_file(path, "--out")
    if p.suffix.lower() != ".toml":
        raise UserError(f"--out must name a .toml file, got '{p}'")
    return p


def write_strategy(res: TuneResult, path, command: str | None = None) -> Path:
    """Write the tuned strategy atomically to ``path`` and check it loads back
    as the strategy that was played."""
    path = Path(path)
    text = strategy_text(res, command)
    write_text_atomic(path, text)
    back = config.load_strategy(res.game, str(path))
    if back.spec != res.tuned.spec:  # pragma: no cover (a writer bug, never the user's)
        raise RuntimeError(f"{path}: the written weights do not read back as played")
    return path


def result_json(res: TuneResult, out: Path | None = None) -> dict:
    """The figures of a tune as plain data (``--json``)."""
    return {
        "game": res.game,
        "name": res.name,
        "base": res.base.name,
        "rules": res.ruleset.name,
        "opponents": [o.name for o in res.opponents],
        "budget": res.budget,
        "games": res.games,
        "seed": res.seed,
        "fresh_seed": res.fresh_seed,
        "fresh_games_per_opponent": res.fresh_games,
        "popsize": res.popsize,
        "step": res.sigma0,
        "tuned_keys": [p.key for p in res.space.params],
        "fixed_keys": list(res.space.fixed),
        "widened_keys": list(res.space.widened),
        "base_score": res.base_score,
        "tuned_score": {k: v for k, v in res.tuned_score.items() if k != "spec"},
        "difference": res.diff,
        "finalists": [{k: v for k, v in f.items() if k != "spec"} for f in res.finalists],
        "search": [
            {"index": e.index, "score": e.score, "cached": e.detail.get("cached")}
            for e in res.history
        ],
        "search_s": res.search_s,
        "evaluations_simulated": res.evaluated,
        "s_per_evaluation": res.s_per_eval,
        "tuned_spec": res.tuned.spec,
        "out": str(out) if out is not None else None,
    }


def record(results, res: TuneResult, command: str, extra_keys=()) -> None:
    """The experiment record of a tune: its plan and every run it played or
    read (the search's, then the fresh re-evaluation's, whose figures it
    prints; ``extra_keys``: runs played before, e.g. exploit's screen)."""
    from balance import experiments

    plan = {
        "variant": experiments.ruleset_plan(res.ruleset),
        "base": experiments.strategy_plan(res.base),
        "opponents": [experiments.strategy_plan(o) for o in res.opponents],
        "budget": res.budget,
        "games": res.games,
        "seed": res.seed,
        "step": res.sigma0,
        "space": [[p.key, p.lo, p.hi] for p in res.space.params],
    }
    keys = [*extra_keys, *res.run_keys]
    experiments.record(results, res.game, command, plan, keys, view="runs")


# ---- exploitability ----------------------------------------------------------------------
@dataclass
class ExploitResult:
    """A tuned best response to ``target`` and how far it beats it."""

    target: config.Strategy
    screen: list[dict]  # every named response: {name, score, lo, hi}
    tune: TuneResult
    screen_keys: list = field(default_factory=list)  # the runs of the screen

    @property
    def exploitability(self) -> dict:
        t = self.tune.tuned_score
        return {"mean": t["score"] - 0.5, "lo": t["lo"] - 0.5, "hi": t["hi"] - 0.5}


def exploit(
    game: str,
    target: config.Strategy,
    *,
    responders: list | None = None,
    start: config.Strategy | None = None,
    ruleset: config.Ruleset | None = None,
    budget: int = 100,
    games: int = 1000,
    seed: int = 1,
    results=None,
    threads: int | None = None,
    bounds=None,
    top: int = TOP,
    refine: int = REFINE,
    sigma0: float = SIGMA0,
    progress: bool = True,
) -> ExploitResult:
    """Tune a best response to ``target``: from ``start``, else from the named
    strategy (``responders``, default all of the game's) that scores best
    against it on ``seed``; the tuned response's fresh score minus ½ is the
    target's exploitability at this budget (the base's fresh score is the best
    named response's)."""
    games = check_options(budget, games, top, refine, sigma0)
    ruleset = ruleset or config.resolve_variant(game, "base")
    screen, screen_keys = [], []
    if start is None:
        pool = responders or [config.load_strategy(game, s) for s in config.strategy_names(game)]
        specs = [runner.RunSpec(ruleset, s, target, games, seed) for s in pool]
        res = runner.run_many(
            specs, store=Store(results), threads=threads, progress=progress, label="responses"
        )
        screen_keys = [r.key for r in res]
        for s, r in zip(pool, res, strict=True):
            screen.append({"name": s.name, **score_row([r])})
        start = pool[max(range(len(pool)), key=lambda i: (screen[i]["score"], -i))]
    name = f"exploit-{target.name.partition('@')[0]}"
    tr = tune(
        game,
        start,
        [target],
        ruleset=ruleset,
        budget=budget,
        games=games,
        seed=seed,
        results=results,
        threads=threads,
        name=name,
        bounds=bounds,
        top=top,
        refine=refine,
        sigma0=sigma0,
        progress=progress,
    )
    return ExploitResult(target, screen, tr, screen_keys)
