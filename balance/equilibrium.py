"""Equilibrium play: the meta-game's equilibrium, grown by best responses
(``docs/equilibrium.md``).

A verdict measured against a hand-picked field of scripts is a verdict about
the field. Players of a released game find the strong lines and answer them,
so the verdicts about the rules are measured here at the equilibrium of the
strategy space (empirical game-theoretic analysis; PSRO / double oracle,
Lanctot et al. 2017):

1. a population of strategies (the named ones and ``tuned`` to start) plays
   every pairing, seat-swapped on common deals: the payoff matrix;
2. the matrix's maximum-entropy Nash mixture (:func:`balance.stats.nash_maxent`:
   unique, so the answer does not depend on the solver);
3. a best response to the mixture: every content choice the game offers (a
   loadout, a deck) screened with the best member's weights, then CMA-ES
   over the weights (:func:`balance.tune.tune`, scoring a candidate against the
   mixture, weighted), its finalists replayed on fresh deals (the winner's
   curse), and the response's gain over ½ measured again on deals no search
   saw;
4. the rule (:func:`decide`): the mixture is an equilibrium when the gain's
   95% upper bound is at most ε (default 2 points); otherwise the response
   joins the population and the loop goes on, until the iteration budget ends
   (then the gap is reported, never hidden).

The exploitability reported is the last response's gain: a lower bound on the
mixture's true exploitability (the oracle may miss a better response), within
the strategy space searched (:func:`searched_text`).

:func:`double_oracle` is the loop alone, with the payoffs and the oracle
injected: the matrix toys of the tests and the games go through the same
solver and stopping rule. :class:`GameArena` is the game's side (every
evaluation a stored run: a re-run reads them back and gives the same
population bit for bit; runs go through :func:`balance.runner.run_many`, so
they play on whichever executor is configured, Dask included).
:func:`play` measures the verdicts under equilibrium play (both seats drawing
from the mixture, fresh deals), :func:`stability` the mixture's stability
(bootstrap over deals), :func:`content_table` which content the equilibrium
uses and which loses to it. The core names no game: content comes from the
engine's loadouts or the game's decks, read generically.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from balance import config, runner, stats, tune
from balance.errors import UserError
from balance.registry import get_game
from balance.store import Store, write_text_atomic

EPSILON = 0.02  # the largest gain (points of score) a best response may have at equilibrium
ITERATIONS = 30  # best-response searches at most
BUDGET = 48  # CMA-ES evaluations per search
GAMES = 1000  # games per pairing of the payoff matrix
SEARCH_GAMES = 400  # games per opponent for each candidate of a search
SCREEN_GAMES = 400  # games per opponent for each content choice screened
CONFIRM_GAMES = 4000  # games per opponent that measure a response's gain (fresh deals)
PLAY_GAMES = 2000  # games per pairing of the verdicts under equilibrium play
STEP = 0.05  # CMA-ES's first step, a share of each weight's range (wider than tune's: a
# best response may lie far from every member)
BOOTSTRAP = 200  # resamples of the deals for the mixture's stability
SUPPORT_MIN = 1e-6  # weights below this are outside the mixture's support
PREFIX = "eq"  # a response found at iteration k is named eq<k>
STARTS = 2  # searches per iteration, each from its own member (a restart)
WIDE_STEP = 0.3  # the restarts' first step: wide, to cross the plateaus where weights
# change no decision (a small step from a member can stay on its member's plateau)
CHECK_BUDGET = 24  # evaluations of the smaller search that re-measures a shipped mixture

DECISIONS = {
    "equilibrium": "the best response found gains at most ε (95% upper bound): an equilibrium",
    "add": "the best response found beats the mixture: it joins the population",
    "budget": "the best response found beats the mixture, but the iteration budget is spent",
    "not shown": "no response beats the mixture on average, but the interval reaches past ε",
}


def derive_seed(seed: int, *parts) -> int:
    """A seed for one step of the search, derived from ``seed`` and the step's
    name (never equal to ``seed``): each search and each measurement plays
    its own deals."""
    text = "balance-equilibrium:" + ":".join(str(p) for p in (seed, *parts))
    s = int(hashlib.sha256(text.encode()).hexdigest()[:15], 16)
    return s if s != seed else s + 1


def decide(gain: dict, epsilon: float = EPSILON) -> str:
    """The stopping rule on a best response's gain over ½ (``mean``, ``hi``:
    its 95% interval's upper end, measured on fresh deals):

    - ``"equilibrium"``: ``hi <= epsilon``: no response found beats the
      mixture by more than ε;
    - ``"add"``: otherwise, when the response gains on average (``mean > 0``):
      it joins the population (a gain between 0 and ε whose interval reaches
      past ε joins too: ≤ ε is not shown, and a larger population never makes
      the mixture more exploitable within it);
    - ``"not shown"``: no gain on average, but ``hi > epsilon``: the figure is
      too loose to say (more confirmation games settle it).

    A mixture truly ε + 3 SE exploitable is declared an equilibrium only when
    its estimate falls 4.96 SE low: about 4e-7 of runs (measured in
    ``tests/core/test_equilibrium.py``).
    """
    hi, mean = float(gain["hi"]), float(gain["mean"])
    if not (math.isfinite(hi) and math.isfinite(mean)):
        return "not shown"
    if hi <= epsilon:
        return "equilibrium"
    return "add" if mean > 0 else "not shown"


@dataclass
class Step:
    """One iteration of :func:`double_oracle`: the population it solved, the
    mixture, the best response found and its gain, and what was decided."""

    iteration: int
    members: list[str]
    mixture: list[float]
    response: str
    gain: dict  # mean, lo, hi, se, n: the response's score against the mixture − ½
    decision: str
    seconds: float
    detail: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {
            "iteration": self.iteration,
            "members": list(self.members),
            "size": len(self.members),
            "mixture": [float(x) for x in self.mixture],
            "support": int(sum(x > SUPPORT_MIN for x in self.mixture)),
            "response": self.response,
            "gain": {k: _num(v) for k, v in self.gain.items()},
            "decision": self.decision,
            "seconds": round(self.seconds, 3),
        }


def _num(v):
    if isinstance(v, float | np.floating):
        return float(v) if math.isfinite(float(v)) else None
    if isinstance(v, np.integer):
        return int(v)
    return v


def _name(m) -> str:
    return str(getattr(m, "name", m))


@dataclass
class Loop:
    """What :func:`double_oracle` returns: the population the final mixture is
    over, the mixture, the matrix and every step (the exploitability curve)."""

    members: list
    mixture: np.ndarray
    matrix: np.ndarray
    steps: list[Step]
    status: str  # "equilibrium", "budget" or "not shown"

    @property
    def exploitability(self) -> dict:
        """The last response's gain against the final mixture (fresh deals)."""
        return dict(self.steps[-1].gain)


def double_oracle(
    start: list,
    payoffs: Callable[[list], np.ndarray],
    respond: Callable[[list, np.ndarray, int], tuple],
    *,
    epsilon: float = EPSILON,
    iterations: int = ITERATIONS,
    on_step: Callable[[Step], None] | None = None,
) -> Loop:
    """Grow ``start`` by best responses until the mixture is an equilibrium
    within ``epsilon`` or ``iterations`` searches are spent.

    Parameters
    ----------
    start : list
        The first population (any objects; ``.name`` or ``str`` names them).
    payoffs : callable
        ``payoffs(members) -> A``: the antisymmetric matrix of each row's score
        against each column, minus ½.
    respond : callable
        ``respond(members, mixture, k) -> (response, gain, detail)``: the best
        response found to the mixture at iteration ``k`` (1-based), its gain
        over ½ on fresh deals (``mean``, ``lo``, ``hi``, ...) and anything to
        keep (``detail``).
    epsilon, iterations :
        The stopping rule's ε (:func:`decide`) and the search budget.
    on_step : callable, optional
        Called with each :class:`Step` as it ends (progress, ETA).

    Returns
    -------
    Loop
        The final mixture is the one the last response was measured against,
        so the exploitability reported is always the final mixture's.
    """
    if iterations < 1:
        raise UserError(f"--iterations must be at least 1, got {iterations}")
    if not 0 < epsilon < 0.5:
        raise UserError(
            f"--epsilon must be above 0 and below 0.5 (a share of score), got {epsilon}"
        )
    if not start:
        raise UserError("the equilibrium search needs at least one strategy to start from")
    members = list(start)
    steps: list[Step] = []
    while True:
        t0 = time.perf_counter()
        k = len(steps) + 1
        A = np.asarray(payoffs(members), float)
        p = stats.nash_maxent(A)
        response, gain, detail = respond(members, p, k)
        decision = decide(gain, epsilon)
        if decision == "add" and k >= iterations:
            decision = "budget"
        step = Step(
            k,
            [_name(m) for m in members],
            [float(x) for x in p],
            _name(response),
            dict(gain),
            decision,
            time.perf_counter() - t0,
            detail or {},
        )
        steps.append(step)
        if on_step is not None:
            on_step(step)
        if decision != "add":
            status = "equilibrium" if decision == "equilibrium" else decision
            return Loop(members, p, A, steps, status)
        members.append(response)


# ---- the game's side -------------------------------------------------------------------
def content_choices(ruleset: config.Ruleset) -> tuple[str, list]:
    """The content a side chooses before play, as ``(kind, [(name, apply)])``:
    an engine with loadouts gives every loadout the rules allow, a game with
    decks every deck of the ruleset's card set; ``apply(strategy)`` is the
    strategy playing it. ``("", [])`` for a game where the sides choose none."""
    g = get_game(ruleset.game)
    eng = g.engine_module()
    if hasattr(eng, "legal_loadouts"):
        return "loadout", [
            (eng.loadout_name(i), lambda s, i=i: s.with_loadout(i))
            for i in eng.legal_loadouts(ruleset.rules)
        ]
    if g.card_sets:
        cs = ruleset.card_set()
        decks = g.card_set_module().load_decks(cs)
        return "deck", [
            (name, lambda s, d=d: replace(s.with_deck(d, cs.n_cards), by_primal=()))
            for name, d in decks.items()
        ]
    return "", []


def content_of(st: config.Strategy) -> str:
    """The content a side plays (its loadout or deck: the part of its name
    after '@'), "" where the game has none."""
    return st.name.partition("@")[2]


def content_parts(ruleset: config.Ruleset, name: str) -> dict[str, list[str]]:
    """What a content choice is made of, by kind: a loadout's items and
    maneuver (the engine's ``ALL_LOADOUTS``, ``ITEMS``, ``MANEUVERS``), a
    deck's Primal and cards (its names in the ruleset's card set)."""
    g = get_game(ruleset.game)
    eng = g.engine_module()
    if hasattr(eng, "ALL_LOADOUTS"):
        names = [eng.loadout_name(i) for i in range(len(eng.ALL_LOADOUTS))]
        if name in names:
            a, b, m = eng.ALL_LOADOUTS[names.index(name)]
            return {"item": sorted({eng.ITEMS[a], eng.ITEMS[b]}), "maneuver": [eng.MANEUVERS[m]]}
    if g.card_sets:
        decks = g.card_set_module().load_decks(ruleset.card_set())
        if name in decks:
            d = decks[name]
            return {"Primal": [d.primal_name or name], "card": sorted(set(d.names or ()))}
    return {}


def _weights(p: np.ndarray) -> tuple[list[int], list[float]]:
    idx = [i for i, x in enumerate(p) if x > SUPPORT_MIN]
    w = np.array([p[i] for i in idx], float)
    w = w / w.sum()
    return idx, [float(x) for x in w]


@dataclass
class GameArena:
    """The payoffs and the best-response oracle of :func:`double_oracle` on a
    game: every evaluation a stored run (:func:`balance.runner.run_many`)."""

    game: str
    ruleset: config.Ruleset
    seed: int
    games: int = GAMES
    budget: int = BUDGET
    search_games: int = SEARCH_GAMES
    screen_games: int = SCREEN_GAMES
    confirm_games: int = CONFIRM_GAMES
    store: Store | None = None
    threads: int | None = None
    progress: bool = True
    bounds: object = None
    step: float = STEP
    prefix: str = PREFIX
    starts: int = STARTS
    offset: int = 0  # response k is named prefix<k + offset> (after the start's own eq<N>)
    points: dict = field(default_factory=dict)  # (name_i, name_j) -> per-deal points of i (0..4)
    keys: list = field(default_factory=list)  # every run this search played or read
    screens: list = field(default_factory=list)  # per iteration: the content screen's rows
    _cache: dict = field(default_factory=dict)
    _matrices: dict = field(default_factory=dict)  # member names -> their payoff matrix

    def __post_init__(self):
        # every search and every re-measure is checked here, before any game
        for n, what in (
            (self.games, "--games"),
            (self.search_games, "--search-games"),
            (self.screen_games, "--screen-games"),
            (self.confirm_games, "--confirm-games"),
        ):
            runner.check_games(n, what)
            if n % 2:
                raise UserError(f"{what} must be even (seat-swapped pairs), got {n}")
        if self.budget < 1:
            raise UserError(f"--budget must be at least 1 evaluation, got {self.budget}")

    def run(self, specs: list, label: str) -> list:
        """The runs of ``specs`` (read from memory, the store, or played)."""
        todo = [s for s in specs if s.key not in self._cache]
        uniq = list({s.key: s for s in todo}.values())
        if uniq:
            res = runner.run_many(
                uniq, store=self.store, threads=self.threads, progress=self.progress, label=label
            )
            for r in res:
                self._cache[r.key] = r
        out = [self._cache[s.key] for s in specs]
        self.keys += [s.key for s in specs]
        return out

    def payoffs(self, members: list) -> np.ndarray:
        """Every pairing i < j on the matrix seed (the diagonal: ½ by symmetry),
        computed once per population (the oracle reads it again)."""
        names = tuple(m.name for m in members)
        if names in self._matrices:
            return self._matrices[names].copy()
        n = len(members)
        pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
        specs = [
            runner.RunSpec(self.ruleset, members[i], members[j], self.games, self.seed)
            for i, j in pairs
        ]
        A = np.zeros((n, n))
        for (i, j), r in zip(pairs, self.run(specs, "payoff matrix"), strict=True):
            pp = r.pair_points.astype(np.int64)
            self.points[(members[i].name, members[j].name)] = pp
            A[i, j] = float(pp.mean()) / 4.0 - 0.5
            A[j, i] = -A[i, j]
        self._matrices[names] = A
        return A.copy()

    def _starts(self, members: list, p: np.ndarray) -> list[config.Strategy]:
        """Where the searches start: the ``starts`` members scoring best
        against the mixture (ties: the heavier, then the earlier), read off the
        matrix, each with weights of its own (a second start is a restart
        elsewhere in the space: a search from the mixture's own member alone
        stays near it)."""
        A = self.payoffs(members)
        v = A @ p
        order = sorted(range(len(members)), key=lambda i: (-round(float(v[i]), 9), -float(p[i]), i))
        out, seen = [], []
        for i in order:
            st = members[i]
            st = replace(st, by_primal=()) if st.by_primal else st
            if any(st.spec == s.spec for s in seen):
                continue
            seen.append(st)
            out.append(st)
            if len(out) == self.starts:
                break
        return out

    def screen(
        self, start: config.Strategy, opponents: list, w: list, k, members: list = ()
    ) -> list[dict]:
        """Every content choice played against the mixture (``opponents``,
        ``w``) with ``start``'s weights, and with the weights of every member
        that has a table per content choice (a strategy with weights per deck's
        Primal plays each deck with its own); a row per choice, its best
        showing (``weights_of`` names whose weights gave it)."""
        kind, choices = content_choices(self.ruleset)
        if not choices:
            return []
        seed = derive_seed(self.seed, "screen", k)
        sets = [start] + [m for m in members if m.by_primal]
        sides = [
            (
                c,
                st.name.partition("@")[0],
                replace(apply(st), name=f"{self.prefix}{k}-screen{i or ''}@{c}"),
            )
            for i, st in enumerate(sets)
            for c, apply in choices
        ]
        specs = [
            runner.RunSpec(self.ruleset, side, o, self.screen_games, seed)
            for _, _, side in sides
            for o in opponents
        ]
        res = self.run(specs, f"screening {len(choices)} {kind}s")
        best: dict[str, dict] = {}
        for i, (c, whose, side) in enumerate(sides):
            runs = res[i * len(opponents) : (i + 1) * len(opponents)]
            sc = tune.mixture_score(runs, w)
            if c not in best or sc["score"] > best[c]["score"]:
                best[c] = {"content": c, "weights_of": whose, **sc, "side": side}
        return [best[c] for c, _ in choices]

    def respond(self, members: list, p: np.ndarray, k: int) -> tuple:
        """The best response found to the mixture ``p`` at iteration ``k``: a
        search from each start (:meth:`_starts`; each screening every content
        choice first), the best of them on the searches' fresh deals, its gain
        measured again on deals none of them saw (:meth:`gain`)."""
        idx, w = _weights(p)
        opponents = [members[i] for i in idx]
        name = f"{self.prefix}{k + self.offset}"
        found, details = [], []
        for j, start in enumerate(self._starts(members, p)):
            rows = self.screen(start, opponents, w, k if j == 0 else f"{k}.{j}", members)
            if j == 0:  # the first start's screen: what dead content is judged by
                self.screens.append([{x: v for x, v in r.items() if x != "side"} for r in rows])
            if rows:
                best = max(range(len(rows)), key=lambda c: (rows[c]["score"], -c))
                start = replace(
                    rows[best]["side"],
                    name=start.name.partition("@")[0] + "@" + rows[best]["content"],
                )
            tr = tune.tune(
                self.game,
                start,
                opponents,
                ruleset=self.ruleset,
                budget=self.budget,
                games=self.search_games,
                seed=derive_seed(self.seed, "search", k, *([j] if j else [])),
                results=self.store.root if self.store is not None else None,
                threads=self.threads,
                name=name if j == 0 else f"{name}-{j}",
                bounds=self.bounds,
                sigma0=self.step if j == 0 else max(self.step, WIDE_STEP),
                progress=self.progress,
                weights=w,
                fresh=derive_seed(self.seed, "fresh", k),
            )
            self.keys += tr.run_keys
            found.append(tr)
            details.append(
                {
                    "start": start.name,
                    "screened": len(rows),
                    "fresh_score": {x: tr.tuned_score[x] for x in ("score", "lo", "hi", "games")},
                }
            )
        # every search's finalists, scored on the same fresh deals; a finalist
        # that plays exactly as a member of the population is passed over while
        # another is left: a member's gain against a mixture it belongs to says
        # nothing about the responses the search tried (a mirror scores ½ on
        # every deal)
        known = [m.vector() for m in members]
        finalists = [
            (row["score"], -j, -row["index"], replace(tr.tuned, spec=row["spec"]), j)
            for j, tr in enumerate(found)
            for row in tr.finalists
        ]
        new = [f for f in finalists if not any(np.array_equal(f[3].vector(), v) for v in known)]
        score, _, _, tuned, pick = max(new or finalists, key=lambda f: f[:3])
        response = replace(
            tuned, name=name + "@" + content_of(tuned) if content_of(tuned) else name, by_primal=()
        )
        gain = self.gain(response, opponents, w, k)
        detail = {"searches": details, "picked": pick, "evaluations": self.budget}
        detail["a member"] = not new
        return response, gain, detail

    def gain(self, side: config.Strategy, opponents: list, w: list, k) -> dict:
        """``side``'s score against the mixture − ½, on deals no search saw
        (:func:`gain_interval`)."""
        seed = derive_seed(self.seed, "confirm", k)
        specs = [runner.RunSpec(self.ruleset, side, o, self.confirm_games, seed) for o in opponents]
        runs = self.run(specs, "fresh deals")
        sc = tune.mixture_score(runs, w)
        return {**gain_interval(tune.deal_points(runs, w)), "games": sc["games"], "seed": seed}


FEW = 10  # at most this many deals off ½: the ends are Clopper–Pearson's (gain_interval)


def gain_interval(x, alpha: float = 0.05) -> dict:
    """A response's gain over ½ from its per-deal scores ``x`` (0..1, one per
    deal, weighted over the mixture): the mean − ½, its SE over deals, and
    the design-effect Wilson interval of a mean in [0, 1] over deals
    (:func:`balance.stats.cluster_mean` with bounds, the toolkit's interval
    for a score) − ½, except where at most :data:`FEW` deals score other
    than ½ (nearly all drawn, say, where the SE is 0): a deal scores at most ½
    above ½, so the gain is at most ½ · P(a deal scores above ½) and at least
    −½ · P(below), and the ends are ½ · the Clopper–Pearson upper bounds of
    those shares. The interval never collapses to a point (coverage:
    ``tests/core/test_equilibrium_gain.py``)."""
    from balance.stats.proportions import _clopper_pearson

    x = np.asarray(x, float)
    d = stats.paired_diff(x - 0.5, alpha)
    n = int(x.size)
    up, down = int((x > 0.5 + 1e-12).sum()), int((x < 0.5 - 1e-12).sum())
    if n and up + down <= FEW:
        hi = 0.5 * float(_clopper_pearson(up, n, alpha)[1])
        lo = -0.5 * float(_clopper_pearson(down, n, alpha)[1])
    else:
        sc = stats.cluster_mean(2.0 * x, np.full(n, 2.0), alpha, bounds=(0.0, 1.0))
        lo, hi = sc["lo"] - 0.5, sc["hi"] - 0.5
    return {"mean": d["mean"], "lo": lo, "hi": hi, "se": d["se"], "n": n}


def start_population(game: str, spec: str = "field") -> list:
    """The strategies a search starts from, as ``--from`` names them,
    comma-separated: ``field`` (the game's study field,
    ``configs/<game>/study.toml``: the named strategies and ``tuned``),
    ``shipped`` (the members of the game's shipped population), strategy
    names or .toml paths; a name met twice is kept once (the first)."""

    out, names = [], set()
    items = [t.strip() for t in spec.split(",") if t.strip()]
    if not items:
        raise UserError("--from: name at least one strategy, 'field' or 'shipped'")
    for t in items:
        if t == "field":
            got = [
                config.load_strategy(game, str(s)) for s in config.load_study(game)["strategies"]
            ]
        elif t == "shipped":
            got = load_population(game)[0]
        else:
            got = [config.load_strategy(game, t)]
        for s in got:
            if s.name not in names:
                names.add(s.name)
                out.append(s)
    return out


# ---- the result ----------------------------------------------------------------------
@dataclass
class Equilibrium:
    """An equilibrium search's result (:func:`equilibrium`)."""

    game: str
    ruleset: config.Ruleset
    loop: Loop
    arena: GameArena
    epsilon: float
    iterations: int
    seconds: float
    start: list

    @property
    def members(self) -> list:
        return self.loop.members

    @property
    def mixture(self) -> np.ndarray:
        return self.loop.mixture

    @property
    def exploitability(self) -> dict:
        return self.loop.exploitability


def equilibrium(
    game: str,
    ruleset: config.Ruleset,
    start: list,
    *,
    epsilon: float = EPSILON,
    iterations: int = ITERATIONS,
    budget: int = BUDGET,
    games: int = GAMES,
    search_games: int = SEARCH_GAMES,
    screen_games: int = SCREEN_GAMES,
    confirm_games: int = CONFIRM_GAMES,
    seed: int = 1,
    results=None,
    threads: int | None = None,
    bounds=None,
    step: float = STEP,
    starts: int = STARTS,
    progress: bool = True,
    on_step: Callable[[Step], None] | None = None,
) -> Equilibrium:
    """The equilibrium of ``game`` under ``ruleset``, grown from ``start`` (the
    module docstring). Every run is stored in ``results``: the same call again
    reads them back and returns the same population, bit for bit; a call
    stopped part-way resumes where it stopped."""
    runner.check_seed(seed)
    names = [s.name for s in start]
    dup = next((x for x in names if names.count(x) > 1), None)
    if dup is not None:
        raise UserError(f"the starting population names '{dup}' twice; give each a different name")
    arena = GameArena(
        game,
        ruleset,
        seed,
        games=games,
        budget=budget,
        search_games=search_games,
        screen_games=screen_games,
        confirm_games=confirm_games,
        store=Store(results),
        threads=threads,
        progress=progress,
        bounds=bounds,
        step=step,
        starts=starts,
        offset=max(
            [
                int(m.group(1))
                for s in start
                if (m := re.fullmatch(rf"{PREFIX}(\d+)", s.name.partition("@")[0]))
            ],
            default=0,
        ),
    )
    for s in start:  # refused sides: before any game
        runner.RunSpec(ruleset, s, start[0], 2, seed)
    t0 = time.perf_counter()
    loop = double_oracle(
        list(start),
        arena.payoffs,
        arena.respond,
        epsilon=epsilon,
        iterations=iterations,
        on_step=on_step,
    )
    return Equilibrium(
        game, ruleset, loop, arena, epsilon, iterations, time.perf_counter() - t0, list(start)
    )


# ---- what the equilibrium says ---------------------------------------------------------
def stability(
    members: list, mixture: np.ndarray, points: dict, B: int = BOOTSTRAP, seed: int = 0
) -> dict:
    """The mixture's stability: the matrix re-estimated on deals resampled
    with replacement (every pairing replays the same deals: one draw of deal
    indices serves them all) and solved again, ``B`` times.

    Returns per member its weight's 2.5–97.5% range and the share of
    resamples where it is in the support; the support size's and the
    effective number of strategies' (``exp(entropy)``) ranges."""
    n = len(members)
    names = [m.name for m in members]
    if n == 1:
        one = {"lo": 1.0, "hi": 1.0}
        return {
            "weights": [{"name": names[0], **one, "in_support": 1.0}],
            "support": {"value": 1, "lo": 1, "hi": 1},
            "effective": {"value": 1.0, "lo": 1.0, "hi": 1.0},
            "resamples": 0,
        }
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    P = np.stack([points[(names[i], names[j])] for i, j in pairs]).astype(float)
    D = P.shape[1]
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, D, size=(B, D))
    means = np.stack([P[:, row].mean(axis=1) for row in idx]) / 4.0 - 0.5  # (B, pairs)
    As = np.zeros((B, n, n))
    for c, (i, j) in enumerate(pairs):
        As[:, i, j] = means[:, c]
        As[:, j, i] = -means[:, c]
    Ps, _ = stats.nash_maxent_many(As, hint=np.asarray(mixture) > SUPPORT_MIN)
    sup = (Ps > SUPPORT_MIN).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = -np.nansum(np.where(Ps > 0, Ps * np.log(Ps), 0.0), axis=1)
    p = np.asarray(mixture)
    h = -float(np.sum(p[p > 0] * np.log(p[p > 0])))
    return {
        "weights": [
            {
                "name": names[i],
                "lo": float(np.quantile(Ps[:, i], 0.025)),
                "hi": float(np.quantile(Ps[:, i], 0.975)),
                "in_support": float(np.mean(Ps[:, i] > SUPPORT_MIN)),
            }
            for i in range(n)
        ],
        "support": {
            "value": int((p > SUPPORT_MIN).sum()),
            "lo": int(np.quantile(sup, 0.025)),
            "hi": int(np.quantile(sup, 0.975)),
        },
        "effective": {
            "value": math.exp(h),
            "lo": float(np.quantile(np.exp(ent), 0.025)),
            "hi": float(np.quantile(np.exp(ent), 0.975)),
        },
        "resamples": B,
    }


def matchups(members: list, points: dict) -> list[dict]:
    """Each member's worst pairing in the population: the opponent it scores
    least against, that score with its 95% interval (paired deals) and n."""
    out = []
    for a in members:
        worst = None
        for b in members:
            if a.name == b.name:
                continue
            if (a.name, b.name) in points:
                pts = points[(a.name, b.name)] / 4.0
            else:
                pts = 1.0 - points[(b.name, a.name)] / 4.0
            d = stats.cluster_mean(2.0 * pts, np.full(pts.size, 2.0), bounds=(0.0, 1.0))
            row = {
                "opponent": b.name,
                "score": d["mean"],
                "lo": d["lo"],
                "hi": d["hi"],
                "deals": int(pts.size),
            }
            if worst is None or row["score"] < worst["score"]:
                worst = row
        out.append({"name": a.name, "worst": worst})
    return out


def dominant(
    members: list, mixture, gain: dict, status: str, epsilon: float, worst: list[dict]
) -> dict:
    """Whether one strategy is an equilibrium by itself (the rules collapse to
    one way of playing): ``"yes"`` when the mixture has one member and no
    response found beats it by more than ε (95% upper bound: ``status`` is
    ``"equilibrium"``); ``"no"`` when every member of the population is shown
    to lose to another (95% interval wholly below ½), so none is unbeatable;
    else ``"not shown"``. ``strategy`` names the single equilibrium, or the
    member whose worst pairing is the best."""
    p = np.asarray(mixture)
    best = max(worst, key=lambda r: r["worst"]["score"] if r["worst"] else 1.0)
    if int((p > SUPPORT_MIN).sum()) == 1 and status == "equilibrium":
        who = members[int(np.argmax(p))].name
        out, text = (
            "yes",
            f"{who} is an equilibrium by itself: no response found beats it by more than "
            f"{100 * epsilon:g} points (gain {_pts(gain)})",
        )
    elif all(r["worst"] is not None and r["worst"]["hi"] < 0.5 for r in worst):
        who, w = best["name"], best["worst"]
        out, text = (
            "no",
            "no single strategy is an equilibrium: every strategy of the population loses to "
            f"another; the sturdiest, {who}, scores {_pct(w)} against {w['opponent']}",
        )
    else:
        who, w = best["name"], best["worst"]
        out = "not shown"
        text = (
            f"not shown either way: {who}'s worst pairing is {_pct(w)} against {w['opponent']}"
            if w
            else "not shown: a population of one, and the search did not settle it"
        )
    return {"status": out, "strategy": who, "text": text}


def _pct(r: dict) -> str:
    return f"{100 * r['score']:.1f}% [{100 * r['lo']:.1f}%, {100 * r['hi']:.1f}%]"


def _pts(g: dict) -> str:
    return f"{100 * g['mean']:+.1f} points [{100 * g['lo']:+.1f}, {100 * g['hi']:+.1f}]"


def play(
    ruleset: config.Ruleset,
    members: list,
    mixture: np.ndarray,
    *,
    games: int = PLAY_GAMES,
    seed: int = 1,
    store: Store | None = None,
    threads: int | None = None,
    progress: bool = True,
    run=None,
) -> dict:
    """The verdicts under equilibrium play: both seats draw from the mixture
    (every pairing of the support, mirrors included, on fresh deals, weighted
    ``p_i·p_j``); each figure is a mean over deals of the weighted per-deal
    sums, its interval clustered by deal (the deals are common to every
    pairing, so a deal is the independent unit): the first seat's share of
    decided games, game length, draws and round-cap games, with the games
    played and the deals."""
    idx, w = _weights(np.asarray(mixture))
    sup = [members[i] for i in idx]
    pairs = [(a, b) for a in range(len(sup)) for b in range(a, len(sup))]
    specs = [runner.RunSpec(ruleset, sup[a], sup[b], games, seed) for a, b in pairs]
    if run is not None:
        res = run(specs, "equilibrium play")
    else:
        res = runner.run_many(
            specs, store=store, threads=threads, progress=progress, label="equilibrium play"
        )
    wt = [w[a] * w[b] * (1.0 if a == b else 2.0) for a, b in pairs]

    def total(name: str) -> np.ndarray:
        return sum(x * r.deal_sums[name].astype(float) for x, r in zip(wt, res, strict=True))

    seat0, draws, cap, rounds = (total(n) for n in ("seat0_wins", "draws", "round_cap", "rounds"))
    two = np.full(seat0.size, 2.0)
    out = {
        "seat_share": stats.cluster_mean(seat0, two - draws, bounds=(0.0, 1.0)),
        "draws": stats.cluster_mean(draws, two, bounds=(0.0, 1.0)),
        "round_cap": stats.cluster_mean(cap, two, bounds=(0.0, 1.0)),
        "rounds": stats.cluster_mean(rounds, two),
    }
    out = {k: {x: _num(v) for x, v in d.items()} for k, d in out.items()}
    out["games"] = int(sum(r.games for r in res))
    out["deals"] = int(seat0.size)
    out["pairings"] = len(pairs)
    out["seed"] = seed
    out["keys"] = [r.key for r in res]
    return out


def content_table(
    eq_ruleset: config.Ruleset, members: list, mixture, screen: list[dict], weights=None
) -> dict:
    """Which content the equilibrium uses, with what weight, and which loses to
    it (dead content). ``screen``: the last content screen (every choice with
    the search start's weights, and with each member's own table for it where
    a member has one per choice, against the final mixture). A choice is
    ``"used"`` (weight > 0), ``"dead"`` (unused, and its screen score's 95%
    interval lies wholly below ½: it loses to the mixture) or ``"unused"``
    (unused, not shown to lose). Parts (items, maneuvers; Primals, cards)
    pool the weights of the choices holding them; a part is dead when every
    choice holding it is."""
    kind, choices = content_choices(eq_ruleset)
    if not choices:
        return {"kind": "", "rows": [], "parts": []}
    p = np.asarray(mixture)
    used: dict[str, float] = {}
    for m, x in zip(members, p, strict=True):
        c = content_of(m)
        used[c] = used.get(c, 0.0) + float(x)
    scr = {r["content"]: r for r in screen}
    rows = []
    for name, _ in choices:
        wgt = used.get(name, 0.0)
        s = scr.get(name)
        if wgt > SUPPORT_MIN:
            status = "used"
        elif s is not None and s["hi"] < 0.5:
            status = "dead"
        else:
            status = "unused"
        rows.append(
            {
                "content": name,
                "weight": wgt,
                "status": status,
                "parts": content_parts(eq_ruleset, name),
                **(
                    {
                        "screen_weights_of": s.get("weights_of"),
                        "screen": s["score"],
                        "screen_lo": s["lo"],
                        "screen_hi": s["hi"],
                        "screen_games": s["games"],
                    }
                    if s is not None
                    else {}
                ),
            }
        )
    parts: dict[tuple[str, str], dict] = {}
    for r in rows:
        for k, names in r["parts"].items():
            for n in names:
                e = parts.setdefault(
                    (k, n), {"kind": k, "name": n, "weight": 0.0, "statuses": set()}
                )
                e["weight"] += r["weight"]
                e["statuses"].add(r["status"])
    part_rows = []
    for e in parts.values():
        st = (
            "used"
            if e["weight"] > SUPPORT_MIN
            else "dead"
            if e["statuses"] == {"dead"}
            else "unused"
        )
        part_rows.append(
            {"kind": e["kind"], "name": e["name"], "weight": e["weight"], "status": st}
        )
    part_rows.sort(key=lambda r: (r["kind"], -r["weight"], r["name"]))
    rows.sort(key=lambda r: (-r["weight"], r["content"]))
    return {"kind": kind, "rows": rows, "parts": part_rows}


def searched_text(game: str, ruleset: config.Ruleset) -> str:
    """The strategy space the oracle searched, in words."""
    mod = get_game(game).strategy_module()
    kind, choices = content_choices(ruleset)
    n = sum(len(f) for _, f in mod.SECTIONS.values())
    text = f"the weights of the {game} strategy kernel ({n} feature weights in {len(mod.SECTIONS)} sections and its tuned scalars)"
    if choices:
        text += f", and every one of the {len(choices)} {kind}s the rules allow (screened each iteration)"
    return text


def describe(
    game: str,
    ruleset: config.Ruleset,
    arena: GameArena,
    members: list,
    mixture,
    *,
    gain: dict,
    status: str,
    epsilon: float,
    curve: list[dict],
    start_names: set,
    settings: dict,
    seconds: float,
    play_games: int = PLAY_GAMES,
    bootstrap: int = BOOTSTRAP,
) -> dict:
    """Everything the command, the pages and ``--json`` show about a mixture
    over ``members`` (whose matrix ``arena`` has played), as plain data: the
    population and its mixture (with stability), the exploitability and its
    curve, the verdicts under equilibrium play, the dominant-strategy question
    and the content at equilibrium."""
    p = np.asarray(mixture, float)
    stab = stability(members, p, arena.points, bootstrap, seed=arena.seed)
    worst = matchups(members, arena.points)
    pl = play(
        ruleset, members, p, games=play_games, seed=derive_seed(arena.seed, "play"), run=arena.run
    )
    screen = arena.screens[-1] if arena.screens else []
    return {
        "game": game,
        "rules": ruleset.name,
        "epsilon": epsilon,
        "status": status,
        "status_text": STATUSES[status],
        "exploitability": {k: _num(v) for k, v in gain.items()},
        "curve": curve,
        "members": [
            {
                "name": m.name,
                "weight": float(x),
                "content": content_of(m),
                "from": "start" if m.name in start_names else "best response",
                **{k: v for k, v in sw.items() if k != "name"},
                "worst": w["worst"],
            }
            for m, x, sw, w in zip(members, p, stab["weights"], worst, strict=True)
        ],
        "support": stab["support"],
        "effective": stab["effective"],
        "resamples": stab["resamples"],
        "dominant": dominant(members, p, gain, status, epsilon, worst),
        "play": {k: v for k, v in pl.items() if k != "keys"},
        "content": _plain(content_table(ruleset, members, p, screen)),
        "searched": searched_text(game, ruleset),
        "settings": {**settings, "play_games": play_games, "bootstrap": bootstrap},
        "seconds": round(seconds, 1),
        "runs": len(set(arena.keys) | set(pl["keys"])),
    }


STATUSES = {
    "equilibrium": "the best response found gains at most ε (95% upper bound)",
    "budget": "the iteration budget was spent while the best response found still beat the "
    "mixture by more than ε: the gap is the exploitability shown",
    "gap": "a best response found beats the mixture by more than ε: the gap is the "
    "exploitability shown",
    "not shown": "the best response found does not beat the mixture on average, but its "
    "interval reaches past ε: more confirmation games would settle it",
}


def _settings(arena: GameArena, **extra) -> dict:
    return {
        "seed": arena.seed,
        "budget": arena.budget,
        "games": arena.games,
        "search_games": arena.search_games,
        "screen_games": arena.screen_games,
        "confirm_games": arena.confirm_games,
        "step": arena.step,
        "starts": arena.starts,
        **extra,
    }


def summary(eq: Equilibrium, *, play_games: int = PLAY_GAMES, bootstrap: int = BOOTSTRAP) -> dict:
    """:func:`describe` of an equilibrium search's final mixture."""
    return describe(
        eq.game,
        eq.ruleset,
        eq.arena,
        eq.members,
        eq.mixture,
        gain=eq.exploitability,
        status=eq.loop.status,
        epsilon=eq.epsilon,
        curve=[s.as_dict() for s in eq.loop.steps],
        start_names={s.name for s in eq.start},
        settings=_settings(eq.arena, iterations=eq.iterations),
        seconds=eq.seconds,
        play_games=play_games,
        bootstrap=bootstrap,
    )


def measure(
    game: str,
    ruleset: config.Ruleset,
    members: list,
    mixture,
    *,
    epsilon: float = EPSILON,
    budget: int = CHECK_BUDGET,
    games: int = GAMES,
    search_games: int = SEARCH_GAMES,
    screen_games: int = SCREEN_GAMES,
    confirm_games: int = CONFIRM_GAMES,
    play_games: int = PLAY_GAMES,
    seed: int = 1,
    results=None,
    threads: int | None = None,
    step: float = STEP,
    progress: bool = True,
    curve: list[dict] | None = None,
    start_names: set | None = None,
) -> dict:
    """A given mixture (e.g. a shipped population's) measured afresh: its
    matrix, its verdicts under equilibrium play, and its exploitability
    re-measured with a fresh best-response search of ``budget`` evaluations
    (its own seeds: deals the population's search never saw). ``curve``: the
    search's curve, as shipped (shown, not re-measured)."""
    t0 = time.perf_counter()
    arena = GameArena(
        game,
        ruleset,
        seed,
        games=games,
        budget=budget,
        search_games=search_games,
        screen_games=screen_games,
        confirm_games=confirm_games,
        store=Store(results),
        threads=threads,
        progress=progress,
        step=step,
        prefix="check",
    )
    p = np.asarray(mixture, float)
    arena.payoffs(members)
    _, gain, _ = arena.respond(members, p, 1)
    decision = decide(gain, epsilon)
    status = (
        "equilibrium" if decision == "equilibrium" else "gap" if decision == "add" else "not shown"
    )
    return describe(
        game,
        ruleset,
        arena,
        members,
        p,
        gain=gain,
        status=status,
        epsilon=epsilon,
        curve=curve or [],
        start_names=start_names or set(),
        settings=_settings(arena, check=True),
        seconds=time.perf_counter() - t0,
        play_games=play_games,
    )


def _plain(x):
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_plain(v) for v in x]
    if isinstance(x, set):
        return sorted(x)
    return _num(x)


# ---- the shipped population --------------------------------------------------------------
POPULATION = "population.toml"
STEP_KEYS = [  # a [[step]] of population.toml: one iteration of the curve
    "iteration",
    "members",
    "support",
    "response",
    "gain",
    "gain_lo",
    "gain_hi",
    "deals",
    "decision",
]


def default_folder(game: str) -> Path:
    """Where a game's shipped base-rules equilibrium lives."""
    return get_game(game).strategy_files / "equilibrium"


def _member_text(game: str, m: config.Strategy, weight: float, origin: str) -> str:
    mod = get_game(game).strategy_module()
    base = m.name.partition("@")[0]
    lines = [
        f"# An equilibrium member of {game}: {origin}; its weight in the mixture {weight:.4f}",
        f"name = {json.dumps(base)}",
        f"description = {json.dumps(f'equilibrium member ({origin})')}",
    ]
    if m.loadout is not None:
        lines.append(f"loadout = {json.dumps(content_of(m))}")
    if m.deck is not None:
        lines.append(f"deck = {json.dumps(m.deck.name)}")
    lines += tune._weight_lines(mod, m.spec)
    return "\n".join(lines) + "\n"


def write_population(eq: Equilibrium, summ: dict, folder, command: str | None = None) -> Path:
    """Write the population (one strategy file per member, in the usual
    format) and ``population.toml`` (the members and their mixture weights;
    provenance and the exploitability in comment lines), atomically, and
    check that every member loads back as it was played."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    from balance import __version__

    files = []
    start = {s.name for s in eq.start}
    for i, (m, x) in enumerate(zip(eq.members, eq.mixture, strict=True)):
        origin = "a starting strategy" if m.name in start else "a best response found by the search"
        fname = f"{i + 1:02d}-{m.name.partition('@')[0]}.toml"
        write_text_atomic(folder / fname, _member_text(eq.game, m, float(x), origin))
        files.append((fname, float(x), m))
    g = summ["exploitability"]
    prov = {
        "command": command or runner.command_line(),
        "rules": eq.ruleset.name,
        "date": runner.utc_now(),
        "toolkit_version": __version__,
        "status": summ["status"],
        "exploitability": g,
        "settings": summ["settings"],
        "searched": summ["searched"],
    }
    lines = [
        f"# The equilibrium population of {eq.game} under the rules '{eq.ruleset.name}', made by "
        f"`balance {eq.game} equilibrium` (balance {__version__}) on {prov['date']}",
        f"# command: {prov['command']}",
        f"# status: {summ['status']} ({summ['status_text']})",
        f"# exploitability (the last best response's gain, fresh deals, n = {g['n']} deals): "
        f"{100 * g['mean']:+.2f} points [{100 * g['lo']:+.2f}, {100 * g['hi']:+.2f}]; ε = "
        f"{100 * eq.epsilon:g} points; a lower bound on the true exploitability, within "
        f"{summ['searched']}",
        "# provenance: " + json.dumps(prov, sort_keys=True, default=str),
        f"game = {json.dumps(eq.game)}",
        f"rules = {json.dumps(eq.ruleset.name)}",
        f"epsilon = {eq.epsilon!r}",
        f"seed = {eq.arena.seed}",
    ]
    for fname, x, m in files:
        lines += [
            "",
            "[[member]]",
            f"file = {json.dumps(fname)}",
            f"name = {json.dumps(m.name)}",
            f"weight = {x!r}",
        ]
    for st in summ["curve"]:  # the exploitability curve, as the search measured it
        gn = st["gain"]
        lines += [
            "",
            "[[step]]",
            f"iteration = {int(st['iteration'])}",
            f"members = {int(st['size'])}",
            f"support = {int(st['support'])}",
            f"response = {json.dumps(st['response'])}",
            f"gain = {float(gn['mean'])!r}",
            f"gain_lo = {float(gn['lo'])!r}",
            f"gain_hi = {float(gn['hi'])!r}",
            f"deals = {int(gn['n'])}",
            f"decision = {json.dumps(st['decision'])}",
        ]
    write_text_atomic(folder / POPULATION, "\n".join(lines) + "\n")
    back, weights, _ = load_population(eq.game, folder)
    for a, b in zip(back, eq.members, strict=True):
        if a.name != b.name or a.vector().tolist() != b.vector().tolist():  # pragma: no cover
            raise RuntimeError(f"{folder}: member {b.name} does not load back as played")
    return folder / POPULATION


def load_population(game: str, folder=None) -> tuple[list, np.ndarray, dict]:
    """A population written by :func:`write_population` (default: the game's
    shipped one): its members, their weights and the file's other keys.

    Raises
    ------
    UserError
        A missing or malformed population file, in one line.
    """
    from balance.paths import check_keys, load_toml

    folder = Path(folder) if folder is not None else default_folder(game)
    path = folder / POPULATION if folder.is_dir() else folder
    if not path.is_file():
        raise UserError(
            f"{path}: no equilibrium population here; make one with `balance {game} equilibrium --out {folder}`"
        )
    data = load_toml(path)
    check_keys(path, "the top level", data, ["game", "rules", "epsilon", "seed", "member", "step"])
    if data.get("game") != game:
        raise UserError(f"{path}: a population of '{data.get('game')}', not of {game}")
    rows = data.get("member")
    if not isinstance(rows, list) or not rows:
        raise UserError(f"{path}: no [[member]] tables")
    members, weights = [], []
    for r in rows:
        if not isinstance(r, dict):
            raise UserError(f"{path}: each [[member]] must be a table")
        check_keys(path, "[[member]]", r, ["file", "name", "weight"])
        w = r.get("weight")
        if not isinstance(w, int | float) or isinstance(w, bool) or not 0 <= w <= 1:
            raise UserError(f"{path}: a member's weight must be a number in [0, 1], got {w!r}")
        f = r.get("file")
        if not isinstance(f, str) or "/" in f or "\\" in f or not f.endswith(".toml"):
            raise UserError(
                f"{path}: a member's file must be a .toml file name in its folder, got {f!r}"
            )
        members.append(config.load_strategy(game, str(path.parent / f)))
        weights.append(float(w))
    steps = data.get("step", [])
    if not isinstance(steps, list) or not all(isinstance(st, dict) for st in steps):
        raise UserError(f"{path}: 'step' must be [[step]] tables")
    for st in steps:  # the curve shipped_curve reads: every key there, no other
        check_keys(path, "[[step]]", st, STEP_KEYS)
        missing = [k for k in STEP_KEYS if k not in st]
        if missing:
            raise UserError(
                f"{path}: a [[step]] lacks {', '.join(missing)}; each has {', '.join(STEP_KEYS)}"
            )
    p = np.array(weights)
    if abs(p.sum() - 1.0) > 1e-6:
        raise UserError(f"{path}: the members' weights sum to {p.sum():.6f}, not 1")
    return members, p / p.sum(), data


def shipped_curve(data: dict) -> list[dict]:
    """The exploitability curve a population file records (``[[step]]``)."""
    out = []
    for st in data.get("step", []) or []:
        out.append(
            {
                "iteration": int(st["iteration"]),
                "size": int(st["members"]),
                "support": int(st["support"]),
                "response": str(st["response"]),
                "gain": {
                    "mean": st["gain"],
                    "lo": st["gain_lo"],
                    "hi": st["gain_hi"],
                    "n": st["deals"],
                },
                "decision": str(st["decision"]),
            }
        )
    return out


def measure_shipped(game: str, folder=None, **kw) -> dict:
    """The shipped population of ``game`` (:func:`default_folder`) measured
    afresh (:func:`measure`): what the study shows. Its support is played
    (the members the mixture weighs); the stability bootstrap then re-solves
    the mixture among them. ``kw`` go to :func:`measure` (seed, budget,
    games, results, threads, progress)."""
    members, p, data = load_population(game, folder)
    # the support alone is played: a member outside it carries no weight in
    # the mixture measured (and a 36-member population's whole matrix is 630
    # pairings where its support's is a few dozen)
    keep = [i for i, x in enumerate(p) if x > SUPPORT_MIN]
    members, p = [members[i] for i in keep], p[keep] / p[keep].sum()
    ruleset = config.resolve_variant(game, str(data.get("rules", "base")))
    start = {m.name for m in members if not re.fullmatch(rf"{PREFIX}\d+", m.name.partition("@")[0])}
    kw.setdefault("epsilon", float(data.get("epsilon", EPSILON)))
    out = measure(game, ruleset, members, p, curve=shipped_curve(data), start_names=start, **kw)
    out["shipped"] = str(Path(folder) if folder is not None else default_folder(game))
    return out
