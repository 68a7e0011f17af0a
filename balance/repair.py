"""Balance repair: the smallest change of the rules that meets a designer's
targets, with its confidence stated (``docs/repair.md``).

A repair has three parts, each usable alone:

* **Targets** (:func:`parse_target`): bounds on the design metrics the
  toolkit already measures for a rule set (:func:`balance.sweep.point_row`),
  written ``metric <= v``, ``metric >= v``, ``metric = c ± t`` or
  ``metric = lo..hi``; :data:`METRICS` lists them, each with its unit and the
  scale a violation is measured in.
* **Moves** (:func:`parse_move`): the rule keys that may change and the values
  each may take (``capacity=9..15``, ``force=true,false``), typed and
  bounds-checked like ``--rule``.
* **The search** (:func:`repair`): Optuna's NSGA-II over the moves, two
  objectives, both minimised: the targets' total violation (each metric's
  distance outside its target, in its own scale, summed) and the size of the
  change (keys moved, plus each move's distance as a share of its range).
  Every candidate plays the strategy field's round robin on one seed (common
  random numbers: candidates differ by their rules, not their deals), every
  match is a stored run, and the Optuna study lives in an SQLite database
  inside the results store (``<store>/<game>/_repair/<id>.db``), so a search
  that stopped is continued by asking for it again, and it can be opened with
  Optuna's own tools (``optuna-dashboard sqlite:///...``).

Then **verification**: the best few candidates of the Pareto front (least
violation first, then smallest change) and the unchanged rules are played
again on a fresh seed with more games; each target is judged from its 95%
interval (:func:`balance.design.status`): **met** (inside the target),
**not met** (wholly outside) or **unclear**. Only those figures are printed
as the result; the search's own figures only rank. Each verified candidate
is written as a variant file every command accepts.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from balance import config, design, experiments, phases, sweep
from balance.errors import EnvironmentFailure, UserError
from balance.paths import check_keys, load_toml
from balance.registry import get_game
from balance.store import results_dir, write_text_atomic

# the core metrics and every unit a metric may declare (METRICS, UNITS,
# PERCENT_UNITS) live in balance.units: balance.design ranks its problems by
# the same units, and repair imports design
from balance.units import METRICS, PERCENT_UNITS, UNITS

MET, NOT_MET, UNCLEAR = "met", "not met", "unclear"
MAX_TRIALS = 10_000
# part of every study's identity: raised when what a trial records changes
# (2: strategy-score intervals simultaneous over the field; game metrics;
# 3: every per-game figure's interval clustered by deal, no assumed design effect;
# 4: trials written complete, numbered by slot, first trials kept in the study)
IDENT_VERSION = 4


# --------------------------------------------------------------------------- game metrics
@dataclass(frozen=True)
class GameMetric:
    """A metric a game adds to :data:`METRICS` (its home's ``repair_metrics``
    hook returns ``{name: GameMetric}``).

    ``measure(specs, how)`` (``how`` a :class:`Measuring`) plays what the
    metric needs under each rules spec, on ``how.seed`` (common random
    numbers across specs), and returns one dict per spec, holding ``name``,
    ``name_lo`` and ``name_hi`` (a 95% interval, simultaneous where the metric
    is a maximum or minimum over several items: :func:`extreme`) for every
    metric it measures, and ``games``; and the keys of the runs it played.
    ``how.wanted`` names the targeted metrics it measures (it may measure only
    what they need); with ``how.store_only`` it plays nothing (every run must
    be stored). Metrics that share one
    ``measure`` are measured together, once per candidate."""

    scale: float  # one unit of violation
    unit: str  # "share" (shown as %), "score points" (a share of a point, shown x100), ...
    meaning: str
    measure: object


def game_metrics(game: str) -> dict[str, GameMetric]:
    """The metrics the game's home adds (none without a ``repair_metrics`` hook)."""
    home = get_game(game)
    fn = home.hook(home.repair_metrics)
    return {} if fn is None else dict(fn())


def metric_table(game: str) -> dict:
    """Every metric a repair of ``game`` may target, in :data:`METRICS`'s shape
    (value, lo and hi columns, scale, unit, meaning)."""
    out = dict(METRICS)
    for name, gm in game_metrics(game).items():
        out[name] = (*game_columns(name), gm.scale, gm.unit, gm.meaning)
    return out


#: The range a core metric cannot leave, by its unit ("strategies": 1 to
#: the field's size, filled in by :func:`check_feasible`).
METRIC_RANGES = {
    "share": (0.0, 1.0),
    "score points": (-1.0, 1.0),
    "points": (0.0, 100.0),
    "rounds": (0.0, math.inf),
    "per game": (0.0, math.inf),
}


def check_feasible(target: Target, field_size: int) -> None:
    """Refuse, in one line, a target that no value of its metric's range can
    meet (``draws>=2``: a share is at most 1), so no search is spent on it."""
    if target.unit == "strategies":
        lo, hi = 1.0, float(field_size)
    elif target.unit in METRIC_RANGES:
        lo, hi = METRIC_RANGES[target.unit]
    else:
        return  # a game's own unit: its range is not known here
    if (target.lo is not None and target.lo > hi) or (target.hi is not None and target.hi < lo):
        what = {"share": "a share (write 2% or 0.02 for two percent)"}.get(
            target.unit, f"a value in {target.unit}"
        )
        span = f"{lo:g}..{hi:g}".replace("inf", "∞")
        raise UserError(
            f"--target '{target.text}': no rules can meet it: {target.metric} is "
            f"{what}, always within {span}"
        )


def game_columns(name: str) -> tuple[str, str, str]:
    """The row columns of a game metric: its value and 95% interval."""
    return name, f"{name}_lo", f"{name}_hi"


#: The bounds a widened interval is cut to, by unit: a share or a score in
#: [0, 1], a difference of two scores ("score points") in [-1, 1] (the
#: ranges of :data:`METRIC_RANGES` that bind a widened interval).
UNIT_BOUNDS = {unit: METRIC_RANGES[unit] for unit in ("share", "score points")}


def extreme(
    name: str,
    items: list[tuple[float, float, float]],
    which: str = "max",
    bounds: tuple[float, float] | None = None,
) -> dict:
    """The largest (or smallest) of several estimates, each ``(value, lo,
    hi)`` with its own 95% interval, as a metric row (``name``, ``name_lo``,
    ``name_hi``) with a simultaneous interval
    (:func:`balance.stats.extreme_interval`; ``bounds``: the range the items
    cannot leave, e.g. (0, 1) for scores). "Every item pair within
    45–55%" is ``max_… <= 0.55`` and ``min_… >= 0.45`` judged from these."""
    from balance.stats import extreme_interval

    v, lo, hi = extreme_interval(items, which, bounds=bounds)
    return {name: v, f"{name}_lo": lo, f"{name}_hi": hi}


def extremes(
    stem: str,
    items: list[tuple[float, float, float]],
    bounds: tuple[float, float] | None = None,
) -> dict:
    """Both ends of several estimates as metric rows: ``max_<stem>`` and
    ``min_<stem>`` (:func:`extreme`)."""
    return extreme(f"max_{stem}", items, "max", bounds) | extreme(
        f"min_{stem}", items, "min", bounds
    )


# --------------------------------------------------------------------------- targets
@dataclass(frozen=True)
class Target:
    """``lo <= metric <= hi`` (either bound may be None: unbounded)."""

    metric: str
    lo: float | None
    hi: float | None
    text: str
    scale: float = 1.0  # one unit of violation, in the metric's own terms
    unit: str = ""

    def violation(self, value: float) -> float:
        """How far ``value`` lies outside the target, in the metric's scale
        (0 inside); an unmeasured value (nan) counts as 100 units."""
        if value is None or not math.isfinite(value):
            return 100.0
        scale = self.scale
        out = 0.0
        if self.lo is not None and value < self.lo:
            out = self.lo - value
        if self.hi is not None and value > self.hi:
            out = value - self.hi
        return out / scale

    def status(self, value: float, lo: float, hi: float) -> str:
        """met / not met / unclear from the value's 95% interval (a metric with
        no interval is judged from its value)."""
        if not (math.isfinite(lo) and math.isfinite(hi)):
            lo = hi = value
        if not math.isfinite(value):
            return UNCLEAR
        st = design.status(lo, hi, self.lo, self.hi)
        return {"meets": MET, "fails": NOT_MET}.get(st, UNCLEAR)


_TARGET = re.compile(r"^\s*([a-z_]+)\s*(<=|>=|=)\s*(.+?)\s*$")


def _number(text: str, where: str, metric: str = "", unit: str = "share") -> float:
    """A number of a target in its metric's unit (:data:`UNITS`): ``65%`` is
    0.65 on a unit of :data:`PERCENT_UNITS`, and a plain number beyond ±1
    there is refused as a percent missing its sign; ``%`` on any other unit
    is refused."""
    written = text.strip()
    percent = written.endswith("%")
    t = written[:-1].strip() if percent else written
    try:
        v = float(t)
    except ValueError:
        raise UserError(f"{where}: '{text}' is not a number") from None
    if not math.isfinite(v):
        raise UserError(f"{where}: '{text}' is not a finite number")
    what = UNITS.get(unit, unit)
    if percent and unit not in PERCENT_UNITS:
        raise UserError(
            f"{where}: '%' is only for shares; {metric} is in {unit} ({what}): write {t}"
        )
    if percent:
        return v / 100
    if unit in PERCENT_UNITS and abs(v) > 1:
        raise UserError(
            f"{where}: {t} looks like a percent: write {v / 100:g} or {t}% ({metric} is {what})"
        )
    return v


def parse_target(text: str, metrics: dict | None = None) -> Target:
    """``metric <= v``, ``metric >= v``, ``metric = c ± t`` (or ``c +- t``) or
    ``metric = lo..hi``; a share may be written ``2%``, and a share written
    above 1 is refused as a percent missing its sign (:func:`_number`). ``metrics`` is the
    game's table (:func:`metric_table`; default the core's). A mistake is one line."""
    metrics = METRICS if metrics is None else metrics
    where = f"--target '{text}'"
    m = _TARGET.match(str(text))
    if not m:
        raise UserError(
            f"{where}: write metric<=V, metric>=V, metric=C±T or metric=LO..HI; "
            f"metrics: {', '.join(metrics)}"
        )
    metric, op, rest = m.groups()
    if metric not in metrics:
        raise UserError(f"{where}: unknown metric '{metric}'; metrics: {', '.join(metrics)}")
    scale, unit = metrics[metric][3], metrics[metric][4]

    def number(x: str) -> float:
        return _number(x, where, metric, unit)

    if op == "<=":
        lo, hi = None, number(rest)
    elif op == ">=":
        lo, hi = number(rest), None
    elif ".." in rest:
        a, _, b = rest.partition("..")
        lo, hi = number(a), number(b)
    else:
        parts = re.split(r"±|\+-|\+/-", rest)
        if len(parts) != 2:
            raise UserError(f"{where}: '=' takes C±T or LO..HI (e.g. rounds = 12 ± 2)")
        c, t = number(parts[0]), number(parts[1])
        if t < 0:
            raise UserError(f"{where}: the tolerance must be ≥ 0")
        lo, hi = c - t, c + t
    if lo is not None and hi is not None and lo > hi:
        raise UserError(f"{where}: the lower bound is above the upper one")
    return Target(metric, lo, hi, " ".join(str(text).split()), scale, unit)


def metric_value(row: dict, metric: str) -> tuple[float, float, float]:
    """A metric's value and 95% interval from a :func:`balance.sweep.point_row`
    row (nan where it has no interval)."""
    nan = float("nan")
    if metric == "seat_advantage":
        s, lo, hi = (row.get(k, nan) for k in ("seat1_share", "seat1_lo", "seat1_hi"))
        v, a, b = (abs(200 * x - 100) if math.isfinite(x) else nan for x in (s, lo, hi))
        if math.isfinite(lo) and math.isfinite(hi) and lo <= 0.5 <= hi:
            return v, 0.0, max(a, b)
        return v, min(a, b), max(a, b)
    col, lo_c, hi_c = METRICS[metric][:3] if metric in METRICS else game_columns(metric)
    v = row.get(col, nan)
    v = float(v) if v is not None else nan
    if lo_c is None:
        return v, nan, nan
    return v, float(row.get(lo_c, nan)), float(row.get(hi_c, nan))


# --------------------------------------------------------------------------- moves
@dataclass(frozen=True)
class Move:
    """A key that may change, the values it may take and its base value: a
    rules key, or (``game=True``) a key of the game's own moves hook
    (:class:`GameMoves`: Trisk's card fields), which changes the rules
    through the overrides the hook gives."""

    key: str
    values: tuple
    base: object
    game: bool = False

    @property
    def numeric(self) -> bool:
        return all(isinstance(v, int) and not isinstance(v, bool) for v in self.values)

    @property
    def step(self) -> int | None:
        """The step of an evenly spaced integer range (searched as an integer),
        else None (searched as categories, by their rule text)."""
        if not self.numeric:
            return None
        vals = sorted(self.values)
        steps = {b - a for a, b in zip(vals, vals[1:], strict=False)}
        return steps.pop() if len(steps) == 1 else None

    def distance(self, value) -> float:
        """How far ``value`` is from the base, as a share of the move's range
        (booleans and strings: 1 if different)."""
        if value == self.base:
            return 0.0
        if self.numeric and isinstance(self.base, int) and not isinstance(self.base, bool):
            span = max(max(self.values), self.base) - min(min(self.values), self.base)
            return abs(value - self.base) / span if span else 0.0
        return 1.0


@dataclass(frozen=True)
class GameMoves:
    """Keys a game lets a repair move besides its rules (its home's
    ``repair_moves`` hook returns one), e.g. Trisk's card fields.

    * ``parse(game, text, base_rules)``: the :class:`Move` (``game=True``) of a
      ``--move`` written in the game's syntax, or None when ``text`` is not one
      (it is then read as a rules key);
    * ``apply(game, base_rules, changes, folder)``: the ``key=value`` rule
      overrides that play ``changes`` ({move key: value}), writing whatever
      they need (a derived card set) into ``folder``;
    * ``export(game, rules, stem)``: a candidate's rules as a variant file
      beside ``stem`` should hold them (copying what the overrides point to
      next to it): {rules key: value} to write instead.
    """

    syntax: str  # for help and errors, e.g. "card:NAME.FIELD=LO..HI"
    parse: object
    apply: object
    export: object


def game_moves(game: str) -> GameMoves | None:
    """The game's moves hook (None without one)."""
    home = get_game(game)
    fn = home.hook(home.repair_moves)
    return None if fn is None else fn()


def parse_move(game: str, text: str, base_rules: dict) -> Move:
    """``key=LO..HI[:STEP]`` or ``key=V1,V2,...`` (values typed like
    ``--rule``), or a move of the game's own (:class:`GameMoves`); the base
    value is the searched rule set's own."""
    hook = game_moves(game)
    if hook is not None:
        m = hook.parse(game, str(text), base_rules)
        if m is not None:
            return m
    axis = sweep.parse_axis(game, str(text), "--move")
    if axis.key not in base_rules:  # pragma: no cover (parse_axis refuses it first)
        raise UserError(f"--move {text}: unknown rule key '{axis.key}'")
    return Move(axis.key, axis.values, base_rules[axis.key])


def change_size(point: dict, moves: list[Move]) -> float:
    """Keys moved off their base value, plus each move's distance (0..1)."""
    return float(sum((point[m.key] != m.base) + m.distance(point[m.key]) for m in moves))


# --------------------------------------------------------------------------- the plan
@dataclass
class Plan:
    """What a repair searches: the rules it starts from, the targets, the
    moves, the field, and how many trials and games."""

    game: str
    variant: str
    targets: list[Target]
    moves: list[Move]
    strategies: str
    trials: int = 40
    games: int = 400
    verify_games: int = 2000
    top: int = 3
    seed: int = 1
    work: Path | None = None  # where a game's moves write what they derive (repair() sets it)

    def check(self) -> Plan:
        from balance import runner

        if not self.targets:
            raise UserError("repair needs at least one --target (e.g. --target 'draws<=0.02')")
        if not self.moves:
            raise UserError("repair needs at least one --move (e.g. --move capacity=9..15)")
        keys = [m.key for m in self.moves]
        dup = next((k for k in keys if keys.count(k) > 1), None)
        if dup:
            raise UserError(f"--move {dup} is given twice")
        if not 1 <= self.trials <= MAX_TRIALS:
            raise UserError(f"--trials must be 1..{MAX_TRIALS:,}, got {self.trials}")
        if self.top < 1:
            raise UserError(f"--top must be at least 1, got {self.top}")
        self.games = runner.check_games(self.games, "--games")
        self.verify_games = runner.check_games(self.verify_games, "--verify-games")
        runner.check_seed(self.seed)
        # every check the search would meet in its first trial is made here,
        # before the study's database exists
        field = config.parse_strategy_list(self.game, self.strategies)
        if len(field) < 2 and any(t.metric in METRICS for t in self.targets):
            raise UserError(
                f"--strategies '{self.strategies}': the targets "
                f"({', '.join(t.text for t in self.targets if t.metric in METRICS)}) are "
                "measured on the field's round robin, which needs at least two strategies"
            )
        for t in self.targets:
            check_feasible(t, len(field))
        return self

    def ident(self) -> str:
        """The study's identity: the same plan continues the same study."""
        rs = config.resolve_variant(self.game, self.variant)
        blob = {
            "version": IDENT_VERSION,
            "game": self.game,
            "rules": rs.rules,
            "targets": [[t.metric, t.lo, t.hi] for t in self.targets],
            "moves": [[m.key, [config.rule_text(v) for v in m.values]] for m in self.moves],
            "strategies": [
                experiments.strategy_plan(s)
                for s in config.parse_strategy_list(self.game, self.strategies)
            ],
            "games": self.games,
            "seed": self.seed,
        }
        return hashlib.sha256(json.dumps(blob, sort_keys=True).encode()).hexdigest()[:16]


PLAN_KEYS = [
    "description",
    "variant",
    "targets",
    "moves",
    "strategies",
    "trials",
    "games",
    "verify_games",
    "top",
    "seed",
]


def load_plan_file(path) -> dict:
    """A repair plan TOML (``--plan``): any of :data:`PLAN_KEYS`; ``targets`` and
    ``moves`` are lists of strings written as on the command line."""
    p = Path(path)
    data = load_toml(p)
    check_keys(p, "the top level", data, PLAN_KEYS)
    for key in ("targets", "moves"):
        if key in data and (
            not isinstance(data[key], list) or not all(isinstance(x, str) for x in data[key])
        ):
            raise UserError(f"{p}: '{key}' must be a list of strings like \"draws <= 0.02\"")
    return data


def make_plan(
    game: str,
    variant: str,
    targets: list[str],
    moves: list[str],
    strategies: str,
    **kw,
) -> Plan:
    rs = config.resolve_variant(game, variant)
    table = metric_table(game)
    return Plan(
        game,
        variant,
        [parse_target(t, table) for t in targets],
        [parse_move(game, m, rs.rules) for m in moves],
        strategies,
        **kw,
    ).check()


def plan_from(game: str, data: dict, strategies: str) -> Plan:
    """The plan a plan file's data (:data:`PLAN_KEYS`; None: not given) asks
    for; ``strategies`` is the field when it names none, and every option it
    leaves out takes :class:`Plan`'s default."""
    given = {k: v for k, v in data.items() if v is not None}
    options = {
        k: int(given[k]) for k in ("trials", "games", "verify_games", "top", "seed") if k in given
    }
    return make_plan(
        game,
        str(given.get("variant", "base")),
        list(given.get("targets", [])),
        list(given.get("moves", [])),
        str(given.get("strategies") or strategies),
        **options,
    )


# --------------------------------------------------------------------------- evaluation
def spec_of(plan: Plan, point: dict) -> str:
    """The rules spec of a candidate: the plan's rules with the moved keys set
    (a game's own moves through its hook's overrides, written under
    ``plan.work``)."""
    changed = {m.key: m.game for m in plan.moves if point[m.key] != m.base}
    moved = [f"{k}={config.rule_text(point[k])}" for k, game in changed.items() if not game]
    changes = {k: point[k] for k, game in changed.items() if game}
    if changes:
        if plan.work is None:  # pragma: no cover (repair() sets it first)
            raise RuntimeError("spec_of: a game move needs plan.work")
        base = config.resolve_variant(plan.game, plan.variant).rules
        moved += game_moves(plan.game).apply(plan.game, base, changes, plan.work)
    return config.with_rules(plan.variant, moved)


def _plain(x):
    """A value read back from a table as the Python value it was (numpy scalars unwrapped)."""
    return x.item() if isinstance(x, np.generic) else x


@dataclass(frozen=True)
class Measuring:
    """How a measurement plays: the field, games per match, the seed (common
    to every spec measured together), threads and batch, the store (read only
    with ``store_only``), and, for a game metric, the targeted names it
    measures (``wanted``)."""

    game: str
    strategies: str
    games: int
    seed: int
    threads: object = None
    batch_size: int = 1 << 15
    results: object = None
    progress: bool = False
    store_only: bool = False
    wanted: tuple = ()

    def first_strategy(self) -> str:
        """The field's first strategy, without any deck or loadout (``all``:
        the game's first named strategy)."""
        names = [t.strip() for t in self.strategies.split(",") if t.strip()]
        name = config.strategy_names(self.game)[0] if names == ["all"] else names[0]
        return name.split("@")[0]

    def evaluate(self, specs: list[str], strategies: str | None = None) -> dict:
        """The round robin of ``strategies`` (default the field) under each spec
        (:func:`balance.sweep.evaluate`)."""
        return sweep.evaluate(
            self.game,
            specs,
            strategies or self.strategies,
            self.games,
            self.seed,
            self.threads,
            self.batch_size,
            self.results,
            record_as=None,
            progress=self.progress,
            store_only=self.store_only,
        )


def measure(plan: Plan, specs: list[str], how: Measuring) -> tuple[list[dict], list]:
    """Every targeted metric under each rules spec, on one seed: the field's
    round robin (:func:`balance.sweep.evaluate`) when a core metric is
    targeted, and each game metric's own measurement (:class:`GameMetric`),
    once per measurement. One row per spec, and the keys of the runs played."""
    rows: list[dict] = [{"games": 0} for _ in specs]
    keys: list = []
    if any(t.metric in METRICS for t in plan.targets):
        res = how.evaluate(specs)
        rows = [dict(r) for r in res["rows"]]
        keys += [r.key for r in res["runs"].values()]
    extra = game_metrics(plan.game)
    by_measure: dict = {}
    for t in plan.targets:
        if t.metric in extra:
            by_measure.setdefault(extra[t.metric].measure, []).append(t.metric)
    for fn, names in by_measure.items():
        got, k = fn(specs, replace(how, wanted=tuple(names)))
        for row, g in zip(rows, got, strict=True):
            row.update({c: v for c, v in g.items() if c != "games"})
            row["games"] = int(row.get("games", 0)) + int(g.get("games", 0))
        keys += list(k)
    return rows, keys


def score_point(plan: Plan, row: dict) -> tuple[float, list[float]]:
    """Total violation and each target's, from a candidate's measured row."""
    each = [t.violation(metric_value(row, t.metric)[0]) for t in plan.targets]
    return float(sum(each)), each


def _study_paths(plan: Plan, results) -> tuple[str, Path]:
    """The study's name (the plan's identity) and its database (nothing is
    created here)."""
    name = plan.ident()
    return name, results_dir(results) / plan.game / "_repair" / f"{name}.db"


#: The tables of an Optuna RDB study (checked when a study is opened).
STUDY_TABLES = frozenset(
    {
        "studies",
        "study_directions",
        "study_user_attributes",
        "trials",
        "trial_params",
        "trial_values",
        "trial_user_attributes",
        "version_info",
    }
)


class _Damaged(Exception):
    """A study database that cannot be trusted (the message says why)."""


def _quiet_optuna():
    """Optuna, its own log lines and warnings off: a repair's errors are our
    one-line errors (the search never runs inside ``study.optimize``)."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    optuna.logging.disable_default_handler()
    return optuna


@contextmanager
def _locked(db: Path, shared: bool):
    """Hold ``<id>.lock`` beside the study while it is used: one repair of a
    plan at a time on a store (a second is refused in one line; a report
    rebuilt from the store shares the lock with other readers)."""
    import fcntl

    path = db.with_suffix(".lock")
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        if not shared:
            raise
        fd = None  # a read-only store: nobody can be writing the study there
    try:
        if fd is not None:
            try:
                fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
            except BlockingIOError:
                raise EnvironmentFailure(
                    f"another repair of this plan is running on this store (it holds {path}); "
                    "run this again when it has finished: it continues that search"
                ) from None
        yield
    finally:
        if fd is not None:
            os.close(fd)  # releases the lock


def _check_db(db: Path) -> str | None:
    """What is wrong with an existing study database (None: nothing found):
    not a file, not SQLite, SQLite's integrity check failing, or not Optuna's
    schema."""
    import sqlite3

    if not db.is_file():
        return "not a file"
    try:
        con = sqlite3.connect(f"file:{db}?mode=rw", uri=True)
        try:
            ok = con.execute("PRAGMA integrity_check").fetchall()
            tables = {
                r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")
            }
        finally:
            con.close()
    except sqlite3.Error as e:
        return f"not a readable SQLite database ({e})"
    if ok != [("ok",)]:
        return "SQLite's integrity check fails (" + "; ".join(str(r[0]) for r in ok[:2]) + ")"
    missing = STUDY_TABLES - tables
    if missing:
        return f"not an Optuna study (no table {', '.join(sorted(missing))})"
    return None


def _set_aside(results, db: Path, reason: str) -> None:
    """Move a damaged study database (and its journal) into the store's
    ``_quarantine/`` (:meth:`balance.store.Store.set_aside`); the search then
    starts a new study, its trials' runs read back from the store."""
    from balance.store import Store

    dest = Store(results).set_aside(db, reason)
    journal = db.with_name(db.name + "-journal")
    if dest is not None and journal.exists():
        os.replace(journal, dest.with_name(dest.name + "-journal"))
    if db.exists():  # it could not be moved: never search on top of it
        raise EnvironmentFailure(f"{db}: {reason}, and it could not be set aside; move it away")


def _open_study(plan: Plan, name: str, db: Path, store_only: bool):
    """The stored study of the plan, checked: (storage, study, the trials it
    starts from, its completed trials as dicts). Raises :class:`_Damaged`."""
    optuna = _quiet_optuna()
    if db.exists():
        problem = _check_db(db)
        if problem:
            raise _Damaged(problem)
    storage = None
    try:
        storage = optuna.storages.RDBStorage(f"sqlite:///{db}")
        if store_only:
            study = optuna.load_study(study_name=name, storage=storage)
        else:
            study = optuna.create_study(
                study_name=name,
                storage=storage,
                directions=["minimize", "minimize"],
                load_if_exists=True,
            )
        trials = study.get_trials(deepcopy=False)
        first = study.user_attrs.get("first")
    except Exception as e:  # sqlalchemy's, sqlite's or Optuna's own: the file is not a study
        _close(storage)
        raise _Damaged(
            f"Optuna cannot read it ({type(e).__name__}: {' '.join(str(e).split())[:160]})"
        ) from None
    keys = sorted(m.key for m in plan.moves)
    if first is None and not trials and not store_only:
        first = first_trials(plan)  # fixed at the study's start: a later budget continues it
        study.set_user_attr("first", first)
    if not isinstance(first, list) or any(
        not isinstance(p, dict) or sorted(p) != keys for p in first
    ):
        _close(storage)
        raise _Damaged("its list of first trials is missing or not this plan's")
    stored = []
    for k, t in enumerate(sorted(trials, key=lambda t: t.number)):
        ok = (
            t.number == k
            and t.state == optuna.trial.TrialState.COMPLETE
            and t.user_attrs.get("slot") == k
            and sorted(t.params) == keys
            and t.values is not None
            and len(t.values) == 2
        )
        if not ok:
            _close(storage)
            raise _Damaged(f"trial {t.number} is not a completed trial of this plan's search")
        stored.append({"params": dict(t.params), "values": list(t.values), "attrs": t.user_attrs})
    return storage, study, first, stored


def _close(storage) -> None:
    if storage is not None:
        storage.engine.dispose()


def _same(a, b) -> bool:
    """Whether two values read the same as the study stores them (JSON; nan
    equals nan there)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


@dataclass
class RepairResult:
    plan: Plan
    trials: pd.DataFrame  # every completed trial: its values, violations and change size
    front: pd.DataFrame  # the Pareto front of the search
    verified: list[dict]  # the verified candidates (the unchanged rules first)
    db: Path
    search_s: float
    evaluated: int  # trials played now (the rest continued from the study)
    fresh_seed: int
    verify_keys: list = field(default_factory=list)  # the runs of the verification
    # False: the unchanged rules, verified first, showed no target not met, so
    # nothing was searched (:func:`unchanged_enough`); ``verified`` holds them alone
    searched: bool = True

    @property
    def best(self) -> dict | None:
        """The verified candidate that meets every target with the smallest
        change, or None."""
        ok = [v for v in self.verified[1:] if v["meets_all"]]
        return min(ok, key=lambda v: (v["size"], v["violation"])) if ok else None


def _suggest(trial, m: Move):
    if m.step is not None:
        return trial.suggest_int(m.key, min(m.values), max(m.values), step=m.step)
    labels = [config.rule_text(v) for v in m.values]
    pick = trial.suggest_categorical(m.key, labels)
    return m.values[labels.index(pick)]


def repair(
    plan: Plan,
    *,
    results=None,
    threads=None,
    batch_size: int = 1 << 15,
    progress: bool = True,
    store_only: bool = False,
) -> RepairResult:
    """Search, then verify (module doc). A second call with the same plan
    continues the same Optuna study; every evaluation is read from the store.
    With ``store_only`` nothing is played: the study and every run must be
    stored already (a report rebuilt from a study), else a one-line error.

    Trial k is a pure function of the plan and k: its parameters come from
    an NSGA-II sampler seeded by ``plan.seed`` that is replayed over trials
    0..k-1 (their values recomputed from their stored runs), and a trial is
    written to the study only once it is complete. So a search that stopped
    (Ctrl-C, a crash, a kill) plays the trial it lost again under its number,
    and ends where an uninterrupted one ends, bit for bit. A study database
    that fails its checks (:func:`_check_db`, a stored trial that is not the
    search's, or values its runs do not give) is set aside into the store's
    ``_quarantine/`` and the search starts again, its runs read back."""
    import warnings

    optuna = _quiet_optuna()
    from balance import tune

    name, db = _study_paths(plan, results)
    plan.work = (db.parent / "sets").resolve()
    search = Measuring(
        plan.game, plan.strategies, plan.games, plan.seed, threads, batch_size, results
    )
    fresh = tune.fresh_seed(plan.seed)
    checking = replace(
        search, games=plan.verify_games, seed=fresh, progress=progress, store_only=store_only
    )
    # The unchanged rules are verified first: if they show no target not met,
    # no change is searched for (nor proposed). This is the verification's own
    # measurement of them (same spec, fresh seed, games), so when the search
    # goes on, the verification at the end reads these runs back from the store.
    missing = f"no stored repair of {plan.game} for this plan ({db}); run `balance study` again"
    try:
        unchanged, base_keys = verify(plan, pd.DataFrame(), checking)
    except UserError:
        if store_only and not db.is_file():
            raise UserError(missing) from None
        raise
    if unchanged_enough(unchanged[0]):
        if not store_only:
            experiments.record(results, plan.game, "repair", plan_record(plan), base_keys)
        return RepairResult(
            plan,
            pd.DataFrame(),
            pd.DataFrame(),
            unchanged,
            db,
            0.0,
            0,
            fresh,
            base_keys,
            searched=False,
        )
    if store_only and not db.is_file():
        raise UserError(missing)
    db.parent.mkdir(parents=True, exist_ok=True)
    with _locked(db, shared=store_only), warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        for attempt in (1, 2):
            storage = None
            try:
                storage, study, first, stored = _open_study(plan, name, db, store_only)
                if store_only and len(stored) < plan.trials:
                    raise UserError(
                        f"the stored repair of {plan.game} has {len(stored)} of its "
                        f"{plan.trials} trials; run `balance study` again"
                    )
                if not store_only:
                    study.set_user_attr("plan", plan_record(plan))
                t0 = time.perf_counter()
                records, evaluated = _search(plan, study, first, stored, search, progress)
                search_s = time.perf_counter() - t0
                break
            except _Damaged as e:
                _close(storage)
                storage = None
                if store_only:
                    raise UserError(
                        f"{db}: {e}; run `balance study` (or the repair) to recompute it"
                    ) from None
                if attempt == 2:  # pragma: no cover (a new study is never damaged)
                    raise EnvironmentFailure(f"{db}: {e} in a study just made") from None
                _set_aside(results, db, str(e))
            finally:
                _close(storage)
    trials = trials_table(plan, records)
    front = pareto(trials)
    verified, keys = verify(plan, finalists(trials, front, plan.top), checking)
    if not store_only:
        experiments.record(results, plan.game, "repair", plan_record(plan), keys)
    return RepairResult(plan, trials, front, verified, db, search_s, evaluated, fresh, keys)


def unchanged_enough(unchanged: dict) -> bool:
    """Whether the verified unchanged rules (:func:`verify`'s first entry)
    show no target not met: every target met (no change needed), or some
    not shown either way and none shown not met (more games, not a change,
    settle it). Then :func:`repair` searches nothing."""
    return all(c["status"] != NOT_MET for c in unchanged["targets"])


def games_to_settle(c: dict, games: int) -> int | None:
    """About how many games per strategy pair would settle an unclear target
    (a verified check ``c`` played at ``games`` a pair): the interval's
    half-width toward the bound it straddles shrinks as 1/√games, so it stops
    straddling once ``games × (half-width / distance to the bound)²`` games
    are played, if the value stays where it is. None when the value sits on
    the bound (no number of games settles it) or has no interval."""
    v, lo, hi = c["value"], c["lo"], c["hi"]
    if not all(math.isfinite(x) for x in (v, lo, hi)):
        return None
    bounds = [b for b in (c.get("target_lo"), c.get("target_hi")) if b is not None]
    straddled = [b for b in bounds if lo < b < hi] or bounds
    if not straddled:
        return None
    b = min(straddled, key=lambda b: abs(v - b))
    d = abs(v - b)
    w = (hi - v) if b > v else (v - lo)
    if d <= 0 or w <= 0:
        return None
    need = games * (w / d) ** 2
    step = 10 ** max(2, int(math.floor(math.log10(need))) - 1)  # two figures, rounded up
    return int(math.ceil(need / step - 1e-9) * step)  # (1e-9: the figures' rounding)


def _search(plan: Plan, study, first: list, stored: list, search: Measuring, progress: bool):
    """Trials 0..max(budget, stored)-1 in order (:func:`repair`): a stored
    trial is checked against its recomputed values, a new one is played and
    added to ``study`` complete. Returns the trials as dicts and how many
    were played now."""
    from balance import runner

    optuna = _quiet_optuna()
    # the sampler lives in memory and is fed the trials in order, so what it
    # asks for trial k depends only on the plan and trials 0..k-1
    mem = optuna.create_study(
        directions=["minimize", "minimize"],
        sampler=optuna.samplers.NSGAIISampler(seed=plan.seed % (2**32)),
    )
    for params in first:
        mem.enqueue_trial(params)
    total = max(plan.trials, len(stored))
    bar = runner._Progress(
        total, f"{plan.game} repair ({len(plan.moves)} keys)", progress, unit="trials"
    )
    records, evaluated = [], 0
    try:
        for k in range(total):
            trial = mem.ask()
            point = {m.key: _suggest(trial, m) for m in plan.moves}
            old = stored[k] if k < len(stored) else None
            if old is not None and not _same(old["params"], trial.params):
                raise _Damaged(f"trial {k}'s moves are not the ones this plan's search asks for")
            spec = spec_of(plan, point)
            rows, keys = measure(plan, [spec], search)
            row = rows[0]
            total_v, each = score_point(plan, row)
            values = [total_v, change_size(point, plan.moves)]
            attrs = {"slot": k, "spec": spec, "violations": each, "games": int(row["games"])}
            for t in plan.targets:
                v, lo, hi = metric_value(row, t.metric)
                attrs[f"value:{t.metric}"] = v
                attrs[f"ci:{t.metric}"] = [lo, hi]
            attrs["runs"] = [str(x) for x in keys]
            if old is not None:
                if not (_same(old["values"], values) and _same(old["attrs"], attrs)):
                    raise _Damaged(
                        f"trial {k}'s stored values are not those its runs give "
                        f"({old['values']} stored, {values} from the runs)"
                    )
            else:
                study.add_trial(
                    optuna.trial.create_trial(
                        params=trial.params,
                        distributions=trial.distributions,
                        values=values,
                        user_attrs=attrs,
                    )
                )
                evaluated += 1
            mem.tell(trial, values)
            records.append(
                {"number": k, "params": dict(trial.params), "values": values, "attrs": attrs}
            )
            bar.advance(1)
    finally:
        bar.close()
    return records, evaluated


def first_trials(plan: Plan) -> list[dict]:
    """The trials a new study plays first. When the budget covers the whole
    space, every candidate, smallest change first (an exhaustive search, which
    can show that no candidate meets the targets: :func:`none_meets`).
    Otherwise the unchanged rules, then every one-key change (each key at each
    of its values, the others unchanged), nearest the base first, as many as
    half the budget allows: the smallest repairs are tried for certain, and
    NSGA-II then searches the combinations."""
    if space_size(plan) <= plan.trials:  # a small space: every candidate, smallest first
        import itertools

        combos = [
            dict(zip([m.key for m in plan.moves], vals, strict=True))
            for vals in itertools.product(*(m.values for m in plan.moves))
        ]
        combos.sort(key=lambda p: change_size(p, plan.moves))
        return [{m.key: _param(m, p[m.key]) for m in plan.moves} for p in combos]
    off = [m.key for m in plan.moves if m.base not in m.values]  # a key that must move
    base = {m.key: _param(m, m.base) for m in plan.moves if m.base in m.values}
    out = [] if off else [base]
    singles = []
    for m in plan.moves:
        if [k for k in off if k != m.key]:
            continue  # another key must move too: no change of this key alone is possible
        for v in m.values:
            if v != m.base:
                singles.append((m.distance(v), len(singles), {**base, m.key: _param(m, v)}))
    out += [p for _, _, p in sorted(singles, key=lambda x: x[:2])]
    return out[: max(1, plan.trials // 2)]


def _param(m: Move, v):
    """A value as the Optuna parameter of :func:`_suggest` holds it."""
    return int(v) if m.step is not None else config.rule_text(v)


def trials_table(plan: Plan, records: list[dict]) -> pd.DataFrame:
    """Every trial of the search (:func:`_search`'s dicts): its moved values,
    rules spec, total violation, change size and each target's value on the
    search's deals."""
    rows = []
    for t in records:
        point = {m.key: _value(m, t["params"][m.key]) for m in plan.moves}
        attrs = t["attrs"]
        row = {
            "trial": t["number"],
            **point,
            "spec": attrs.get("spec", spec_of(plan, point)),
            "violation": t["values"][0],
            "size": t["values"][1],
        }
        for tg in plan.targets:
            v = attrs.get(f"value:{tg.metric}")
            row[tg.metric] = float("nan") if v is None else float(v)
            ci = attrs.get(f"ci:{tg.metric}") or [float("nan")] * 2
            row[f"{tg.metric}_lo"], row[f"{tg.metric}_hi"] = (
                float("nan") if x is None else float(x) for x in ci
            )
        rows.append(row)
    return pd.DataFrame(rows)


def space_size(plan: Plan) -> int:
    """How many candidates the moves allow (every combination of their values)."""
    return int(np.prod([len(m.values) for m in plan.moves]))


def none_meets(res: RepairResult) -> dict | None:
    """Whether the search shows that no candidate of the allowed space meets
    every target: every combination of the moves was played, and in each, some
    target's interval, widened for as many looks as candidates (Bonferroni:
    each at 95% / M, so all M hold together with 95% confidence), lies wholly
    outside its target. None when that is not shown."""
    from balance.stats.multiple import widen

    plan, t = res.plan, res.trials.drop_duplicates("spec") if not res.trials.empty else None
    m = space_size(plan)
    if t is None or len(t) < m:
        return None
    for r in t.to_dict(orient="records"):
        out = False
        for tg in plan.targets:
            v, lo, hi = r[tg.metric], r[f"{tg.metric}_lo"], r[f"{tg.metric}_hi"]
            if not (math.isfinite(lo) and math.isfinite(hi)):
                lo = hi = v
            _, lo, hi = widen(v, lo, hi, m, bounds=UNIT_BOUNDS.get(tg.unit))
            if tg.status(v, lo, hi) == NOT_MET:
                out = True
                break
        if not out:
            return None
    best = t.sort_values(["violation", "size"]).iloc[0]
    return {"candidates": m, "closest": best["spec"], "violation": float(best["violation"])}


def _value(m: Move, raw):
    """The rule value of an Optuna parameter (the inverse of :func:`_param`)."""
    if m.step is not None:
        return int(raw)
    return m.values[[config.rule_text(v) for v in m.values].index(raw)]


def pareto(trials: pd.DataFrame) -> pd.DataFrame:
    """The non-dominated trials (violation, size), one per rules spec, sorted
    by violation then size."""
    if trials.empty:
        return trials
    t = trials.drop_duplicates("spec").reset_index(drop=True)
    v, s = t["violation"].to_numpy(float), t["size"].to_numpy(float)
    keep = [
        not np.any((v <= v[i]) & (s <= s[i]) & ((v < v[i]) | (s < s[i]))) for i in range(len(t))
    ]
    return t[keep].sort_values(["violation", "size", "trial"]).reset_index(drop=True)


def finalists(trials: pd.DataFrame, front: pd.DataFrame, top: int) -> pd.DataFrame:
    """The candidates verified: the Pareto front's best ``top`` (least violation,
    then smallest change); when the front is shorter, the next best distinct
    candidates of the search fill the places (its figures are noisy: a
    candidate just off the front may be the one that meets the targets)."""
    if trials.empty:
        return front
    rest = trials.drop_duplicates("spec").sort_values(["violation", "size", "trial"])
    rest = rest[~rest["spec"].isin(front["spec"])]
    return pd.concat([front, rest]).head(top).reset_index(drop=True)


def verify(plan: Plan, picks_df: pd.DataFrame, how: Measuring) -> tuple[list, list]:
    """The unchanged rules and the finalists (:func:`finalists`), measured as
    ``how`` says (fresh deals, ``verify_games`` a match): each target's value,
    interval and status; and the keys of the runs played."""
    picks = [] if picks_df.empty else picks_df.to_dict(orient="records")
    base = {m.key: m.base for m in plan.moves}
    base_spec = spec_of(plan, base)
    moved = {base_spec: base} | {
        p["spec"]: {m.key: _plain(p[m.key]) for m in plan.moves} for p in picks
    }
    specs = [base_spec] + [p["spec"] for p in picks if p["spec"] != base_spec]
    rows, keys = measure(plan, specs, how)
    out = []
    sizes = {p["spec"]: p["size"] for p in picks}
    for spec, row in zip(specs, rows, strict=True):
        checks = []
        for t in plan.targets:
            v, lo, hi = metric_value(row, t.metric)
            checks.append(
                {
                    "target": t.text,
                    "metric": t.metric,
                    "unit": t.unit,
                    "value": v,
                    "lo": lo,
                    "hi": hi,
                    "status": t.status(v, lo, hi),
                    "violation": t.violation(v),
                    "target_lo": t.lo,
                    "target_hi": t.hi,
                }
            )
        out.append(
            {
                "spec": spec,
                "rules": config.resolve_variant(plan.game, spec).rules,
                "moved": moved[spec],
                "size": sizes.get(spec, 0.0),
                "games": int(row["games"]),
                "targets": checks,
                "violation": float(sum(c["violation"] for c in checks)),
                "meets_all": all(c["status"] == MET for c in checks),
            }
        )
    return out, keys


# --------------------------------------------------------------------------- output
def plan_record(plan: Plan) -> dict:
    return {
        "game": plan.game,
        "variant": plan.variant,
        "targets": [t.text for t in plan.targets],
        "moves": [f"{m.key}={','.join(config.rule_text(v) for v in m.values)}" for m in plan.moves],
        "strategies": plan.strategies,
        "trials": plan.trials,
        "games": plan.games,
        "verify_games": plan.verify_games,
        "top": plan.top,
        "seed": plan.seed,
    }


def variant_text(
    res: RepairResult, cand: dict, rank: int, command: str, rules: dict | None = None
) -> str:
    """A verified candidate as a variant file: every rule that differs from the
    engine's base rules, so ``--variant FILE`` alone plays it; its provenance
    and verification in comment lines."""
    from balance import __version__, runner

    plan = res.plan
    eng = get_game(plan.game).engine_module()
    defaults = dict(eng.DEFAULT_RULES)
    lines = [
        f"# Found by `balance {plan.game} repair` (balance {__version__}) on {runner.utc_now()}",
        f"# command: {command}",
        f"# from: {plan.variant}; moved: "
        + (
            ", ".join(
                f"{m.key} {config.rule_text(m.base)} -> {config.rule_text(cand['moved'][m.key])}"
                for m in plan.moves
                if cand["moved"][m.key] != m.base
            )
            or "nothing"
        ),
        f"# verified on fresh deals (seed {res.fresh_seed}, {plan.verify_games:,} games per "
        f"match, {cand['games']:,} games): "
        + ("meets every target" if cand["meets_all"] else "does NOT meet every target"),
    ]
    for c in cand["targets"]:
        lines.append(f"#   {c['target']}: {_fmt(c)} -> {c['status']}")
    lines.append("# plan: " + json.dumps(plan_record(plan), sort_keys=True))
    desc = f"repair {rank} of {plan.variant}: " + (
        ", ".join(f"{k}={config.rule_text(v)}" for k, v in cand["moved"].items())
    )
    lines.append(f"description = {json.dumps(desc, ensure_ascii=False)}")
    lines.append("[rules]")
    for key, value in {**cand["rules"], **(rules or {})}.items():
        if key in defaults and value != defaults[key]:
            lines.append(f"{key} = {_toml_value(value)}")
    return "\n".join(lines) + "\n"


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    return json.dumps(str(v), ensure_ascii=False)


def _fmt(c: dict) -> str:
    kind = c.get("unit", METRICS.get(c["metric"], ("",) * 5)[4])
    scale = 100 if kind in ("share", "score points") else 1
    unit = {"share": "%", "score points": " points"}.get(kind, "")
    v = c["value"] * scale
    if math.isfinite(c["lo"]) and math.isfinite(c["hi"]):
        return f"{v:.2f}{unit} [{c['lo'] * scale:.2f}, {c['hi'] * scale:.2f}]"
    return f"{v:.4g}{unit}" if math.isfinite(v) else "—"


def fmt_check(c: dict) -> str:
    """A verified target's value with its 95% interval, in the metric's unit."""
    return _fmt(c)


def fmt_value(target: Target, v: float) -> str:
    """A search figure (no interval), in the target metric's unit."""
    nan = float("nan")
    return _fmt({"metric": target.metric, "unit": target.unit, "value": v, "lo": nan, "hi": nan})


def experiment_tag(plan: Plan) -> str:
    """The short name of a repair experiment in its files' names: the first
    eight characters of the plan's identity (:meth:`Plan.ident`)."""
    return plan.ident()[:8]


def variant_path(out: Path, plan: Plan, k: int) -> Path:
    """Where candidate ``k`` of ``plan`` is written:
    ``<out>/<game>-repair-<experiment>-<k>.toml``."""
    return Path(out) / f"{plan.game}-repair-{experiment_tag(plan)}-{k}.toml"


def write_variants(res: RepairResult, out: Path, command: str) -> list[Path]:
    """Write each verified candidate (not the unchanged rules) as
    ``<out>/<game>-repair-<experiment>-<k>.toml`` (:func:`variant_path`) and
    check each loads back as played."""
    paths = []
    game = res.plan.game
    hook = game_moves(game) if any(m.game for m in res.plan.moves) else None
    for k, cand in enumerate(res.verified[1:], 1):
        path = variant_path(out, res.plan, k)
        extra = hook.export(game, cand["rules"], path.with_suffix("")) if hook else {}
        write_text_atomic(path, variant_text(res, cand, k, command, extra))
        back = config.resolve_variant(game, str(path))
        played = config.resolve_variant(game, cand["spec"])
        same = {**back.rules, **dict.fromkeys(extra)} == {**played.rules, **dict.fromkeys(extra)}
        if not (same and np.array_equal(back.vector(), played.vector())):  # pragma: no cover
            raise RuntimeError(f"{path}: the written rules do not read back as played")
        paths.append(path)
    return paths


def front_chart(res: RepairResult, title: str):
    """Change size against remaining violation: every trial, the Pareto front,
    and the verified candidates labelled."""
    from balance import charts

    fig = charts.new_figure(7.5, 4.8)
    ax = fig.add_subplot(1, 1, 1)
    t, f = res.trials, res.front
    if not t.empty:
        ax.scatter(t["size"], t["violation"], s=14, color="#bbbbbb", label="trial")
    if not f.empty:
        g = f.sort_values("size")
        ax.plot(
            g["size"], g["violation"], marker="o", color=charts.palette(1)[0], label="Pareto front"
        )
    for k, cand in enumerate(res.verified[1:], 1):
        hit = t[t["spec"] == cand["spec"]] if not t.empty else t
        if len(hit):
            ax.annotate(
                f"#{k} {'meets' if cand['meets_all'] else 'does not meet'} (verified)",
                (hit["size"].iloc[0], hit["violation"].iloc[0]),
                textcoords="offset points",
                xytext=(4, 4),
                fontsize=8,
            )
    ax.set_xlabel("size of the change (keys moved + distance moved)")
    ax.set_ylabel("targets' total violation (search deals)")
    ax.legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    return fig


def result_json(res: RepairResult, paths: list[Path], chart: Path | None = None) -> dict:
    """A repair as plain data (``--json``)."""
    from balance.experiments import _clean

    return _clean(
        {
            "plan": plan_record(res.plan),
            "study": str(res.db),
            "trials": res.trials.drop(columns=["spec"], errors="ignore").to_dict(orient="records"),
            "front": res.front.to_dict(orient="records"),
            "verified": [{k: v for k, v in c.items() if k != "rules"} for c in res.verified],
            "fresh_seed": res.fresh_seed,
            "searched": res.searched,
            "outcome": outcome(res)[0],
            "best": None if res.best is None else res.best["spec"],
            "space": space_size(res.plan),
            "none_meets": none_meets(res),
            "files": [str(p) for p in paths],
            "chart": str(chart) if chart is not None else None,
            "search_s": res.search_s,
            "trials_played_now": res.evaluated,
        }
    )


# --------------------------------------------------------------------------- the page
def outcome(res: RepairResult) -> tuple[str, str, list[str]]:
    """The result in words: (status, headline, more lines); status is
    ``holds`` (a verified candidate meets every target), ``does-not-hold``
    (no candidate of the space does, shown), ``undecided``, or, when nothing
    was searched (:func:`unchanged_enough`), ``no-change`` (the unchanged
    rules meet every target, shown) or ``unchanged-unclear`` (they fail no
    target, shown, but some are not shown either way)."""
    plan = res.plan
    if not res.searched:
        base = res.verified[0]
        where = (
            f"on fresh deals (seed {res.fresh_seed}, {plan.verify_games:,} games per "
            f"strategy pair, {base['games']:,} games)"
        )
        figures = [f"{c['target']}: {fmt_check(c)} ({c['status']})" for c in base["targets"]]
        if base["meets_all"]:
            return (
                "no-change",
                "No change needed: the unchanged rules meet every target "
                f"{where}; no change is proposed and nothing was searched.",
                figures,
            )
        more = []
        for c in base["targets"]:
            if c["status"] != UNCLEAR:
                continue
            n = games_to_settle(c, plan.verify_games)
            more.append(
                f"{c['target']}: about --verify-games {n:,} would settle it, if its value "
                "stays where it is"
                if n is not None
                else f"{c['target']}: its value sits on the bound; no number of games settles it"
            )
        return (
            "unchanged-unclear",
            "Not shown whether a change is needed: the unchanged rules fail no target "
            f"{where}, but {len(more)} of the {len(base['targets'])} target"
            f"{'s' if len(base['targets']) != 1 else ''} {'is' if len(more) == 1 else 'are'} "
            "unclear (not shown either way); no change is proposed and nothing was searched.",
            figures + more,
        )
    best = res.best
    if best is not None:
        moved = ", ".join(
            f"{m.key} {config.rule_text(m.base)} → {config.rule_text(best['moved'][m.key])}"
            for m in plan.moves
            if best["moved"][m.key] != m.base
        )
        k = res.verified.index(best)
        return (
            "holds",
            f"Smallest verified repair (#{k}): {moved}; it meets every target on fresh deals.",
            [f"{c['target']}: {fmt_check(c)} ({c['status']})" for c in best["targets"]],
        )
    shown = none_meets(res)
    if shown is not None:
        return (
            "does-not-hold",
            f"No candidate of the allowed space meets every target: all {shown['candidates']:,} "
            "were played, and in each some target's interval, widened for that many looks "
            "(Bonferroni; 95% for all together), lies wholly outside it.",
            [f"Closest: {shown['closest']} (violation {shown['violation']:.2f})."],
        )
    played = len(res.trials.drop_duplicates("spec")) if not res.trials.empty else 0
    return (
        "undecided",
        "No verified candidate meets every target at this budget, and the search does not "
        "show that none can.",
        [
            "An unclear target needs more --verify-games; a target not met needs other moves "
            f"or more --trials ({played:,} of the space's {space_size(plan):,} candidates "
            "were played)."
        ],
    )


def page_context(res: RepairResult, title: str, command: str, chart_svg: str) -> dict:
    """What the page template shows (:func:`render_page`)."""
    from balance.report import table_cell, trusted_svg

    plan = res.plan
    keys = [m.key for m in plan.moves]
    status, headline, lines = outcome(res)
    vrows = []
    for k, cand in enumerate(res.verified):
        cells = [table_cell(", ".join(f"{m}={config.rule_text(cand['moved'][m])}" for m in keys))]
        for c in cand["targets"]:
            cells.append(
                table_cell(
                    f"{fmt_check(c)} {c['status']}", c["value"], c["status"].replace(" ", "-")
                )
            )
        cells.append(table_cell("yes" if cand["meets_all"] else "no"))
        cells.append(table_cell(f"{cand['games']:,}", cand["games"]))
        vrows.append({"name": "unchanged" if k == 0 else f"#{k}", "cells": cells})
    frows = []
    for r in res.front.to_dict(orient="records"):
        cells = [table_cell(config.rule_text(r[k])) for k in keys[1:]]
        cells += [
            table_cell(f"{r['violation']:.2f}", r["violation"]),
            table_cell(f"{r['size']:.2f}", r["size"]),
        ]
        cells += [table_cell(fmt_value(t, r[t.metric]), r[t.metric]) for t in plan.targets]
        frows.append({"name": config.rule_text(r[keys[0]]), "cells": cells})
    n = len(res.trials)
    return {
        "status": status,
        "headline": headline,
        "lines": lines,
        "lede": f"The smallest change of {plan.variant} that meets every target, searched "
        f"over {len(plan.moves)} key{'s' if len(plan.moves) != 1 else ''} "
        f"({space_size(plan):,} candidates) and verified on fresh deals."
        if res.searched
        else f"The unchanged rules of {plan.variant}, verified on fresh deals before any "
        "search: they fail no target, so no change was searched for.",
        "targets": [t.text for t in plan.targets],
        "moves": [
            f"{m.key} ∈ {{{', '.join(config.rule_text(v) for v in m.values)}}} "
            f"(now {config.rule_text(m.base)})"
            for m in plan.moves
        ],
        "strategies": plan.strategies,
        "top": plan.top,
        "fresh_seed": res.fresh_seed,
        "verify_games": f"{plan.verify_games:,}",
        "verified_cols": [
            "candidate",
            ", ".join(keys),
            *(t.text for t in plan.targets),
            "meets every target",
            "games",
        ],
        "verified_rows": vrows,
        "front_cols": [*keys, "violation", "change size", *(t.metric for t in plan.targets)],
        "front_rows": frows,
        "searched": res.searched,
        "search_note": f"{n:,} candidates played with {plan.games:,} games per match on seed "
        f"{plan.seed} (common random numbers), {res.evaluated:,} of them now, in "
        f"{res.search_s:.1f} s. Grey: every candidate; line: the Pareto front.",
        "chart": trusted_svg(f"{plan.game}-repair", chart_svg) if chart_svg else "",
        "manifest": [
            ("Command", command),
            ("Plan", json.dumps(plan_record(plan), sort_keys=True)),
            ("Optuna study", str(res.db)),
            ("Fresh seed", str(res.fresh_seed)),
        ],
    }


@phases.timed("pages")
def render_page(res: RepairResult, title: str, command: str, chart_svg: str) -> str:
    """The repair as a self-contained HTML page."""
    from balance.report import environment

    return (
        environment()
        .get_template("repair.html.j2")
        .render(title=title, r=page_context(res, title, command, chart_svg))
    )


def write_page(res: RepairResult, path: Path, title: str, command: str) -> Path:
    """Render the page (its chart inline) and write it atomically."""
    from balance import charts
    from balance.report import write_html

    svg = (
        charts.save(front_chart(res, title), Path(f"{res.plan.game}-repair"), write=False)
        if res.searched
        else ""  # nothing was searched: no front to draw
    )
    return write_html(Path(path), render_page(res, title, command, svg))
