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

import json
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from balance import config, oracle, runner, stats, tune
from balance.errors import UserError
from balance.oracle import _weights, content_choices, derive_seed
from balance.registry import get_game
from balance.store import Store, write_text_atomic

EPSILON = 0.02  # the largest gain (points of score) a best response may have at equilibrium
ITERATIONS = 30  # best-response searches at most
GAMES = 4000  # games per pairing of the payoff matrix (sized so the support's weights hold
# still: docs/equilibrium.md, "Mixtures that hold still")
PLAY_GAMES = 2000  # games per pairing of the verdicts under equilibrium play
BOOTSTRAP = 200  # resamples of the deals for the mixture's stability
PREFIX = "eq"  # a response found at iteration k is named eq<k>
# the oracle's settings (balance/oracle.py): its defaults, re-exported
BUDGET = oracle.BUDGET  # CMA-ES evaluations per restart
RESTARTS = oracle.RESTARTS  # CMA-ES runs per search
AUDIT = oracle.AUDIT_FACTOR  # the audit's evaluations, times the loop's search's
SEARCH_GAMES = oracle.SEARCH_GAMES
SCREEN_GAMES = oracle.SCREEN_GAMES
CONFIRM_GAMES = oracle.CONFIRM_GAMES
STEP = oracle.STEP
WIDE_STEP = oracle.WIDE_STEP
SUPPORT_MIN = oracle.SUPPORT_MIN
# The study's re-check of a shipped population: a smaller audit that still screens every
# content choice with the members' weights (balance.study, measure_shipped)
CHECK = {"budget": 24, "restarts": 1, "random_sets": 0, "escalations": 0}

DECISIONS = {
    "equilibrium": "the best response found gains at most ε (95% upper bound): an equilibrium",
    "add": "the best response found beats the mixture: it joins the population",
    "budget": "the best response found beats the mixture, but the iteration budget is spent",
    "not shown": "no response beats the mixture on average, but the interval reaches past ε",
    "search failed": "the search's best fell below the population's best member (beyond "
    "noise): a failed search is no evidence, so nothing is claimed",
}


def decide(
    gain: dict, epsilon: float = EPSILON, *, failed: bool = False, member: bool = False
) -> str:
    """The stopping rule on a best response's gain over ½ (``mean``, ``hi``:
    its 95% interval's upper end, measured on fresh deals):

    - ``"search failed"``: the search's best fell below the population's best
      member beyond noise (``failed``, :func:`balance.oracle.failed`): a failed
      search is never evidence, whatever its interval says;
    - ``"equilibrium"``: ``hi <= epsilon``: no response found beats the
      mixture by more than ε;
    - ``"add"``: otherwise, when the response gains on average (``mean > 0``)
      and is not already a member: it joins the population (a gain between 0
      and ε whose interval reaches past ε joins too: ≤ ε is not shown, and a
      larger population never makes the mixture more exploitable within it);
    - ``"not shown"``: no gain on average (or the best found is a member),
      but ``hi > epsilon``: the figure is too loose to say.

    A mixture truly ε + 3 SE exploitable is declared an equilibrium only when
    its estimate falls 4.96 SE low: about 4e-7 of runs (measured in
    ``tests/core/test_equilibrium.py``).
    """
    if failed:
        return "search failed"
    hi, mean = float(gain["hi"]), float(gain["mean"])
    if not (math.isfinite(hi) and math.isfinite(mean)):
        return "not shown"
    if hi <= epsilon:
        return "equilibrium"
    return "add" if mean > 0 and not member else "not shown"


def _decision(gain: dict, detail: dict | None, epsilon: float) -> str:
    d = detail or {}
    return decide(gain, epsilon, failed=bool(d.get("failed")), member=bool(d.get("member")))


@dataclass
class Step:
    """One iteration of :func:`double_oracle`: the population it solved, the
    mixture, the best response found and its gain, what was decided and, when
    the loop's search found no response past ε, the audit (an independent,
    stronger search against the same mixture) whose verdict stands."""

    iteration: int
    members: list[str]
    mixture: list[float]
    response: str
    gain: dict  # mean, lo, hi, se, n: the response's score against the mixture − ½
    decision: str
    seconds: float
    detail: dict = field(default_factory=dict)
    audit: dict | None = None  # response, gain, decision, detail: the audit's result

    def as_dict(self) -> dict:
        out = {
            "iteration": self.iteration,
            "members": list(self.members),
            "size": len(self.members),
            "mixture": [float(x) for x in self.mixture],
            "support": int(sum(x > SUPPORT_MIN for x in self.mixture)),
            "response": self.response,
            "gain": {k: _num(v) for k, v in self.gain.items()},
            "decision": self.decision,
            "seconds": round(self.seconds, 3),
            "evaluations": self.detail.get("evaluations"),
            "by": self.detail.get("by", "search"),
        }
        also = [
            {"response": _name(x), "gain": {k: _num(v) for k, v in g.items()}}
            for x, g in self.detail.get("also", [])
        ]
        if also and self.decision == "add":
            out["also"] = also
        if self.audit is not None:
            out["audit"] = {
                "response": self.audit["response"],
                "gain": {k: _num(v) for k, v in self.audit["gain"].items()},
                "decision": self.audit["decision"],
                "evaluations": self.audit["detail"].get("evaluations"),
            }
        return out


_num = oracle.plain


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
        """The final mixture's exploitability: the audit's gain where the last
        step was audited (the audit's verdict stands), else the last
        response's gain (fresh deals)."""
        last = self.steps[-1]
        if last.audit is not None:
            return dict(last.audit["gain"])
        return dict(last.gain)

    @property
    def audit(self) -> dict | None:
        """The last step's audit, if it ran."""
        return self.steps[-1].audit


def double_oracle(
    start: list,
    payoffs: Callable[[list], np.ndarray],
    respond: Callable[[list, np.ndarray, int], tuple],
    *,
    epsilon: float = EPSILON,
    iterations: int = ITERATIONS,
    on_step: Callable[[Step], None] | None = None,
    audit: Callable[[list, np.ndarray, int], tuple] | None = None,
    overruled: Callable[[], None] | None = None,
) -> Loop:
    """Grow ``start`` by best responses until the mixture is an equilibrium
    within ``epsilon`` (confirmed by the audit, when one is given) or
    ``iterations`` searches are spent.

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
        keep (``detail``; ``detail["failed"]``: the search failed, its best
        below the population's best member; ``detail["member"]``: the best
        found is a member already).
    epsilon, iterations :
        The stopping rule's ε (:func:`decide`) and the search budget.
    on_step : callable, optional
        Called with each :class:`Step` as it ends (progress, ETA).
    audit : callable, optional
        Like ``respond``: an independent, stronger search, called whenever the
        loop's search finds no response past ε (the loop would end "equilibrium"
        or "not shown"; never to rescue a failed search), and once more on the final
        mixture when the budget runs out (its gain is then the gap shown,
        the loop's last gain beside it in the curve). Its verdict stands: a
        response it finds past ε joins the population and the loop goes on; a
        failed or unsettled audit ends the loop "not shown"; only an audit
        within ε ends it "equilibrium", and its gain is the exploitability.
    overruled : callable, optional
        Called when the audit finds a response past ε that the loop's search
        missed: evidence that the loop's oracle lacks power (the game's arena
        then doubles its budget, :meth:`GameArena.grow`).

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
        detail = dict(detail or {})
        decision = _decision(gain, detail, epsilon)
        checked = None
        last = decision == "add" and k >= iterations
        if (decision in ("equilibrium", "not shown") or last) and audit is not None:
            # the audit checks every claim of an equilibrium, every unsettled
            # end, and the final mixture when the budget runs out: the gap
            # shown is then always the stronger search's
            a_resp, a_gain, a_detail = audit(members, p, k)
            a_detail = dict(a_detail or {})
            a_dec = _decision(a_gain, a_detail, epsilon)
            checked = {
                "response": _name(a_resp),
                "gain": dict(a_gain),
                "decision": a_dec,
                "detail": a_detail,
            }
            # out of iterations, nothing more joins: the audit only measures the gap
            if a_dec == "add" and not last:  # the audit beat ε: its response joins
                detail = {**a_detail, "by": "audit", "search_gain": dict(gain)}
                response, gain, decision = a_resp, a_gain, "add"
                if overruled is not None:
                    overruled()
            elif not last:
                decision = a_dec  # the audit's verdict stands, claim or not
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
            detail,
            checked,
        )
        steps.append(step)
        if on_step is not None:
            on_step(step)
        if decision != "add":
            status = decision if decision in ("equilibrium", "budget") else "not shown"
            return Loop(members, p, A, steps, status)
        members.append(response)
        for extra, g in detail.get("also", []):  # more responses of the same search
            if decide(g, epsilon) == "add":
                members.append(extra)


# ---- the game's side -------------------------------------------------------------------
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


@dataclass
class GameArena:
    """The payoffs, the best-response oracle and the audit of
    :func:`double_oracle` on a game: every evaluation a stored run
    (:func:`balance.runner.run_many`). ``oracle``: the loop's search
    (:class:`balance.oracle.Settings`); ``auditor``: the audit's (``None``: no
    audit)."""

    game: str
    ruleset: config.Ruleset
    seed: int
    games: int = GAMES
    oracle: oracle.Settings = field(default_factory=oracle.Settings)
    auditor: oracle.Settings | None = None
    store: Store | None = None
    threads: int | None = None
    progress: bool = True
    bounds: object = None
    prefix: str = PREFIX
    offset: int = 0  # response k is named prefix<k + offset> (after the start's own eq<N>)
    points: dict = field(default_factory=dict)  # (name_i, name_j) -> per-deal points of i (0..4)
    keys: list = field(default_factory=list)  # every run this search played or read
    screens: list = field(default_factory=list)  # per search: each content choice's best screen row
    grown: int = 0  # times the audit overruled the loop's search (its oracle doubled each time)
    _cache: dict = field(default_factory=dict)
    _matrices: dict = field(default_factory=dict)  # member names -> their payoff matrix

    def __post_init__(self):
        # every search and every re-measure is checked here, before any game
        runner.check_games(self.games, "--games")
        if self.games % 2:
            raise UserError(f"--games must be even (seat-swapped pairs), got {self.games}")

    # the oracle's settings, by their old names (pages and records read them)
    @property
    def budget(self) -> int:
        return self.oracle.budget

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

    def grow(self) -> None:
        """The audit found what the loop's search missed: the loop's oracle
        searches twice as long from now on (its first-stage budget and random
        sets doubled), never beyond the audit's own."""
        a = self.auditor or self.oracle.audit()
        self.oracle = replace(
            self.oracle,
            budget=min(2 * self.oracle.budget, a.budget),
            random_sets=min(2 * max(self.oracle.random_sets, 1), a.random_sets),
        )
        self.grown += 1

    def _respond(self, members, p, k, settings: oracle.Settings, tag: str, label: str):
        name = f"{self.prefix}{k + self.offset}"
        r = oracle.best_response(self, members, p, settings, tag=tag, name=name, label=label)
        detail = {**r.detail, "failed": r.failed, "member": r.member}
        return r.strategy, r.gain, detail

    def respond(self, members: list, p: np.ndarray, k: int) -> tuple:
        """The best response found to the mixture ``p`` at iteration ``k``
        (:func:`balance.oracle.best_response` at the loop's settings)."""
        return self._respond(
            members, p, k, self.oracle, f"search:{k}", f"{self.prefix}{k + self.offset}"
        )

    def audit(self, members: list, p: np.ndarray, k: int) -> tuple:
        """The audit of the mixture ``p`` at iteration ``k``: the same oracle
        at the audit's settings (:meth:`balance.oracle.Settings.audit`), on
        seeds of its own."""
        return self._respond(
            members,
            p,
            k,
            self.auditor or self.oracle.audit(),
            f"audit:{k}",
            f"audit{k + self.offset}",
        )


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


ORACLE_SIZES = ("search_games", "screen_games", "confirm_games")


def settings(
    *,
    budget: int = BUDGET,
    restarts: int = RESTARTS,
    responses: int = 1,
    search_games: int = SEARCH_GAMES,
    screen_games: int = SCREEN_GAMES,
    confirm_games: int = CONFIRM_GAMES,
    step: float = STEP,
    **more,
) -> oracle.Settings:
    """The oracle's settings from the command's options (checked here, before
    any game)."""
    return oracle.Settings(
        budget=budget,
        restarts=restarts,
        responses=responses,
        search_games=search_games,
        screen_games=screen_games,
        confirm_games=confirm_games,
        step=step,
        **more,
    )


def equilibrium(
    game: str,
    ruleset: config.Ruleset,
    start: list,
    *,
    epsilon: float = EPSILON,
    iterations: int = ITERATIONS,
    budget: int = BUDGET,
    restarts: int = RESTARTS,
    games: int = GAMES,
    search_games: int = SEARCH_GAMES,
    screen_games: int = SCREEN_GAMES,
    confirm_games: int = CONFIRM_GAMES,
    seed: int = 1,
    results=None,
    threads: int | None = None,
    bounds=None,
    step: float = STEP,
    audit: int | None = AUDIT,
    oracle_settings: oracle.Settings | None = None,
    progress: bool = True,
    on_step: Callable[[Step], None] | None = None,
) -> Equilibrium:
    """The equilibrium of ``game`` under ``ruleset``, grown from ``start`` (the
    module docstring). The loop's oracle searches at ``budget`` evaluations
    per restart, ``restarts`` restarts (or ``oracle_settings``); before any
    claim, an audit at ``audit`` times its evaluations
    (:meth:`balance.oracle.Settings.audit`; ``None``: no audit, and no claim
    beyond the loop's own search). Every run is stored in ``results``: the
    same call again reads them back and returns the same population, bit for
    bit; a call stopped part-way resumes where it stopped."""
    runner.check_seed(seed)
    names = [s.name for s in start]
    dup = next((x for x in names if names.count(x) > 1), None)
    if dup is not None:
        raise UserError(f"the starting population names '{dup}' twice; give each a different name")
    osets = oracle_settings or settings(
        budget=budget,
        restarts=restarts,
        search_games=search_games,
        screen_games=screen_games,
        confirm_games=confirm_games,
        step=step,
    )
    if audit is not None and not 1 <= audit <= 100:
        raise UserError(
            f"--audit must be between 1 and 100 (times the search's evaluations), got {audit}"
        )
    arena = GameArena(
        game,
        ruleset,
        seed,
        games=games,
        oracle=osets,
        auditor=osets.audit(audit) if audit is not None else None,
        store=Store(results),
        threads=threads,
        progress=progress,
        bounds=bounds,
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
        audit=arena.audit if audit is not None else None,
        overruled=arena.grow,
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


STILL = 0.10  # the support's weights should move less than this when re-measured


def remeasure(arena: GameArena, members: list, mixture, games: int | None = None) -> dict:
    """The mixture's stability on other deals: the whole population's matrix
    played again on a seed of its own (``games`` per pairing, default the
    matrix's), solved again; each member's weight there and how far it moved.
    ``max_move`` is the largest move over the members in either support; the
    cells are sized well when it is below :data:`STILL` (10 points)."""
    games = int(games or arena.games)
    seed = derive_seed(arena.seed, "remeasure")
    n = len(members)
    p = np.asarray(mixture, float)
    if n == 1:
        return {"seed": seed, "games": games, "weights": [1.0], "moves": [0.0], "max_move": 0.0}
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    specs = [runner.RunSpec(arena.ruleset, members[i], members[j], games, seed) for i, j in pairs]
    A = np.zeros((n, n))
    for (i, j), r in zip(pairs, arena.run(specs, "the matrix again, other deals"), strict=True):
        A[i, j] = float(r.pair_points.astype(np.int64).mean()) / 4.0 - 0.5
        A[j, i] = -A[i, j]
    q = stats.nash_maxent(A)
    moves = np.abs(q - p)
    either = (p > SUPPORT_MIN) | (q > SUPPORT_MIN)
    return {
        "seed": seed,
        "games": games,
        "weights": [float(x) for x in q],
        "moves": [float(x) for x in moves],
        "max_move": float(moves[either].max()) if either.any() else 0.0,
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
    it (dead content). ``screen``: the last search's content screen (each
    choice's best row over the members' own weight sets — a member with a
    table per choice playing its own — against the final mixture). A choice is
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
    audit: dict | None = None,
    failed: bool = False,
) -> dict:
    """Everything the command, the pages and ``--json`` show about a mixture
    over ``members`` (whose matrix ``arena`` has played), as plain data: the
    population and its mixture (with stability), the exploitability (the
    audit's gain, ``audit``, where one ran) and its curve, the verdicts under
    equilibrium play, the dominant-strategy question and the content at
    equilibrium. ``failed``: the last search failed (nothing is claimed)."""
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
        "status_text": STATUSES["search failed" if failed else status],
        "failed": bool(failed),
        "audit": audit,
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
    "search failed": "the search's best fell below the population's best member beyond noise, "
    "even escalated: a failed search is no evidence, so no equilibrium is claimed",
    "audited gap": "the population's recorded audit (an independent, stronger search) found a "
    "response that beats the mixture by more than ε: the gap is the exploitability shown",
    "not audited": "the population records no audit (an independent, stronger search): the "
    "study's smaller re-check alone is no claim of an equilibrium",
}


def _settings(arena: GameArena, **extra) -> dict:
    o = arena.oracle
    out = {
        "seed": arena.seed,
        "games": arena.games,
        **o.as_dict(),
        "grown": arena.grown,
        **extra,
    }
    if arena.auditor is not None:
        out["audit"] = arena.auditor.as_dict()
    return out


def _status(decision: str) -> str:
    return {"equilibrium": "equilibrium", "add": "gap", "budget": "budget"}.get(
        decision, "not shown"
    )


def summary(
    eq: Equilibrium,
    *,
    play_games: int = PLAY_GAMES,
    bootstrap: int = BOOTSTRAP,
    still: bool = True,
) -> dict:
    """:func:`describe` of an equilibrium search's final mixture; ``still``:
    with the matrix re-measured on other deals (:func:`remeasure`)."""
    last = eq.loop.steps[-1]
    out = describe(
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
        audit=audit_record(last.audit, eq.arena.auditor, eq.arena.seed, last.iteration)
        if last.audit is not None
        else None,
        failed=last.decision == "search failed",
    )
    if still:
        out["remeasured"] = remeasure(eq.arena, eq.members, eq.mixture)
    return out


def audit_record(audit: dict, settings: oracle.Settings | None, seed: int, k) -> dict:
    """An audit as a population file and the pages keep it: its seed (the
    search's seed and the step it audited), budget, gain and interval, decision
    and date."""
    g = audit["gain"]
    d = audit.get("detail", {})
    return {
        "seed": int(seed),
        "tag": d.get("tag", f"audit:{k}"),
        "evaluations": int(d.get("evaluations") or (settings.evaluations if settings else 0)),
        "restarts": int(settings.restarts) if settings else None,
        "confirm_games": int(settings.confirm_games) if settings else None,
        "gain": _num(g["mean"]),
        "gain_lo": _num(g["lo"]),
        "gain_hi": _num(g["hi"]),
        "deals": int(g["n"]),
        "decision": audit["decision"],
        "response": audit["response"],
        "date": runner.utc_now(),
    }


def audit_mixture(
    game: str,
    ruleset: config.Ruleset,
    members: list,
    mixture,
    settings: oracle.Settings,
    *,
    epsilon: float = EPSILON,
    games: int = GAMES,
    seed: int = 1,
    results=None,
    threads: int | None = None,
    progress: bool = True,
    tag: str = "audit",
) -> tuple:
    """An independent best-response search against a given mixture (its matrix
    first, the oracle at ``settings`` on seeds from ``seed`` and ``tag``):
    ``(arena, mixture, record)``, the record as :func:`audit_record` keeps it
    plus the gain's whole interval (``gain_interval``)."""
    arena = GameArena(
        game,
        ruleset,
        seed,
        games=games,
        oracle=settings,
        store=Store(results),
        threads=threads,
        progress=progress,
        prefix=tag,
    )
    p = np.asarray(mixture, float)
    arena.payoffs(members)
    resp, gain, detail = arena._respond(members, p, 1, settings, f"{tag}:1", tag)
    decision = _decision(gain, detail, epsilon)
    record = audit_record(
        {"response": resp.name, "gain": gain, "decision": decision, "detail": detail},
        settings,
        seed,
        1,
    )
    record["gain_interval"] = dict(gain)
    record["failed"] = bool(detail.get("failed"))
    record["member"] = bool(detail.get("member"))
    record["strategy"] = resp
    return arena, p, record


def measure(
    game: str,
    ruleset: config.Ruleset,
    members: list,
    mixture,
    *,
    epsilon: float = EPSILON,
    oracle_settings: oracle.Settings | None = None,
    games: int = GAMES,
    play_games: int = PLAY_GAMES,
    seed: int = 1,
    results=None,
    threads: int | None = None,
    progress: bool = True,
    curve: list[dict] | None = None,
    start_names: set | None = None,
    tag: str = "check",
) -> dict:
    """A given mixture (e.g. a shipped population's) measured afresh: its
    matrix, its verdicts under equilibrium play, and its exploitability
    re-measured with an independent best-response search at
    ``oracle_settings`` (default: the study's smaller audit, :data:`CHECK`;
    its own seeds, from ``seed`` and ``tag``: deals the population's search
    never saw). ``curve``: the search's curve, as shipped (shown, not
    re-measured)."""
    t0 = time.perf_counter()
    osets = oracle_settings or oracle.Settings(**CHECK)
    arena, p, record = audit_mixture(
        game,
        ruleset,
        members,
        mixture,
        osets,
        epsilon=epsilon,
        games=games,
        seed=seed,
        results=results,
        threads=threads,
        progress=progress,
        tag=tag,
    )
    gain, decision = record["gain_interval"], record["decision"]
    return describe(
        game,
        ruleset,
        arena,
        members,
        p,
        gain=gain,
        status=_status(decision),
        epsilon=epsilon,
        curve=curve or [],
        start_names=start_names or set(),
        settings=_settings(arena, check=True),
        seconds=time.perf_counter() - t0,
        play_games=play_games,
        audit={k: v for k, v in record.items() if k in AUDIT_KEYS},
        failed=decision == "search failed",
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
AUDIT_KEYS = [  # an [[audit]] of population.toml: an independent search against the mixture
    "seed",
    "tag",
    "evaluations",
    "restarts",
    "confirm_games",
    "gain",
    "gain_lo",
    "gain_hi",
    "deals",
    "decision",
    "response",
    "date",
]
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


def strategy_text(game: str, st: config.Strategy, comment: list[str], description: str) -> str:
    """A strategy found by a search as a strategy file's text: ``comment``
    lines, its name (the part before '@'), its deck or loadout, its weights."""
    mod = get_game(game).strategy_module()
    lines = [f"# {_comment(c)}" for c in comment]
    lines += [
        f"name = {json.dumps(st.name.partition('@')[0])}",
        f"description = {json.dumps(description)}",
    ]
    if st.loadout is not None:
        lines.append(f"loadout = {json.dumps(content_of(st))}")
    if st.deck is not None:
        lines.append(f"deck = {json.dumps(st.deck.name)}")
    lines += tune._weight_lines(mod, st.spec)
    return "\n".join(lines) + "\n"


def write_response(game: str, st: config.Strategy, path, comment: list[str]) -> Path:
    """A response found by a search as a strategy file (its weights, its deck or
    loadout), ``comment`` lines first, written atomically; it must load back
    as it was played."""
    path = Path(path)
    write_text_atomic(path, strategy_text(game, st, comment, "a best response found by a search"))
    back = config.load_strategy(game, str(path))
    if back.spec != st.spec:  # pragma: no cover (a writer bug, never the user's)
        raise RuntimeError(f"{path}: the written weights do not read back as played")
    return path


def _member_text(game: str, m: config.Strategy, weight: float, origin: str) -> str:
    return strategy_text(
        game,
        m,
        [f"An equilibrium member of {game}: {origin}; its weight in the mixture {weight:.4f}"],
        f"equilibrium member ({origin})",
    )


def write_population(eq: Equilibrium, summ: dict, folder, command: str | None = None) -> Path:
    """Write the population (one strategy file per member, in the usual
    format) and ``population.toml`` (the members and their mixture weights;
    provenance and the exploitability in comment lines), atomically, and
    check that every member loads back as it was played. Member files of an
    earlier population in the folder (``NN-name.toml``) that this one does
    not name are removed."""
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
    cmd = portable_command(command or runner.command_line())
    prov = {
        "command": cmd,
        "rules": eq.ruleset.name,
        "date": runner.utc_now(),
        "toolkit_version": __version__,
        "status": summ["status"],
        "exploitability": g,
        "settings": summ["settings"],
        "searched": summ["searched"],
    }
    audited = summ.get("audit")
    what = (
        f"the audit's gain (an independent search, seed {audited['seed']} '{audited['tag']}', "
        f"{audited['evaluations']:,} evaluations), fresh deals, n = {g['n']} deals"
        if audited
        else f"the last best response's gain, fresh deals, n = {g['n']} deals; not audited"
    )
    lines = [
        f"# The equilibrium population of {eq.game} under the rules '{eq.ruleset.name}', made by "
        f"`balance {eq.game} equilibrium` (balance {__version__}) on {prov['date']}",
        f"# command: {_comment(cmd)}",
        f"# status: {summ['status']} ({summ['status_text']})",
        f"# exploitability ({what}): "
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
    re_ = summ.get("remeasured")
    if re_:
        lines += [
            "",
            "# the matrix re-measured on other deals and solved again: each member's weight there",
            "[stability]",
            f"seed = {int(re_['seed'])}",
            f"games = {int(re_['games'])}",
            f"max_move = {float(re_['max_move'])!r}",
            "weights = [" + ", ".join(repr(float(x)) for x in re_["weights"]) + "]",
        ]
    for a in [audited] if audited else []:
        lines += ["", *audit_lines(a)]
    write_text_atomic(folder / POPULATION, "\n".join(lines) + "\n")
    kept = {f for f, _, _ in files}
    for old in folder.glob("[0-9][0-9]-*.toml"):  # members of an earlier population here
        if old.name not in kept:
            old.unlink()
    back, weights, _ = load_population(eq.game, folder)
    for a, b in zip(back, eq.members, strict=True):
        if a.name != b.name or a.vector().tolist() != b.vector().tolist():  # pragma: no cover
            raise RuntimeError(f"{folder}: member {b.name} does not load back as played")
    return folder / POPULATION


def audit_lines(a: dict) -> list[str]:
    """An audit as an ``[[audit]]`` table of population.toml."""
    out = ["[[audit]]"]
    for k in AUDIT_KEYS:
        v = a.get(k)
        if v is None:
            continue
        out.append(f"{k} = {json.dumps(v) if isinstance(v, str) else repr(v)}")
    return out


def _comment(text: str) -> str:
    """``text`` on one comment line: a line break in it (a path, say) would end
    the comment and be read as TOML."""
    return " ".join(str(text).splitlines())


def portable_command(command: str) -> str:
    """The command that made a file, without this machine's paths: the store
    (``--results``: where runs are kept, not what they are) left out, and an
    absolute path shown relative to the working folder when it lies under it,
    else by its name alone."""
    import os
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        return _comment(command)
    out, skip = [], False
    cwd = os.getcwd()
    for w in words:
        if skip:
            skip = False
            continue
        if w == "--results":
            skip = True
            continue
        if w.startswith("--results="):
            continue
        flag, eq_, val = w.partition("=") if w.startswith("--") else ("", "", w)
        if os.path.isabs(val):
            rel = os.path.relpath(val, cwd)
            val = rel if not rel.startswith("..") else os.path.basename(val.rstrip("/")) or val
        out.append(f"{flag}{eq_}{val}" if flag else val)
    return _comment(shlex.join(out))


def append_audit(game: str, folder, record: dict) -> Path:
    """Add an audit (:func:`audit_record`) to a population file, atomically,
    after its last table; the file must load back with it."""
    folder = Path(folder) if folder is not None else default_folder(game)
    path = folder / POPULATION if folder.is_dir() else folder
    load_population(game, folder)
    text = path.read_text(encoding="utf-8").rstrip("\n")
    write_text_atomic(path, text + "\n\n" + "\n".join(audit_lines(record)) + "\n")
    load_population(game, folder)
    return path


def shipped_audits(data: dict) -> list[dict]:
    """The audits a population file records (``[[audit]]``), oldest first."""
    return [dict(a) for a in data.get("audit", []) or []]


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
    check_keys(
        path,
        "the top level",
        data,
        ["game", "rules", "epsilon", "seed", "member", "step", "audit", "stability"],
    )
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
    st_ = data.get("stability", {})
    if not isinstance(st_, dict):
        raise UserError(f"{path}: 'stability' must be a table")
    check_keys(path, "[stability]", st_, ["seed", "games", "max_move", "weights"])
    audits = data.get("audit", [])
    if not isinstance(audits, list) or not all(isinstance(a, dict) for a in audits):
        raise UserError(f"{path}: 'audit' must be [[audit]] tables")
    for a in audits:
        check_keys(path, "[[audit]]", a, AUDIT_KEYS)
        missing = [
            k for k in ("seed", "evaluations", "gain", "gain_lo", "gain_hi", "deals") if k not in a
        ]
        if missing:
            raise UserError(f"{path}: an [[audit]] lacks {', '.join(missing)}")
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


_ORACLE_KEYS = ("budget", "restarts", "search_games", "screen_games", "confirm_games")


def measure_shipped(game: str, folder=None, **kw) -> dict:
    """The shipped population of ``game`` (:func:`default_folder`) measured
    afresh (:func:`measure`): what the study shows. Its support is played
    (the members the mixture weighs); the stability bootstrap then re-solves
    the mixture among them. ``kw`` go to :func:`measure` (seed, games,
    results, threads, progress, play_games) or to the check's oracle settings
    (budget, restarts, search_games, screen_games, confirm_games: the study's
    smaller audit, :data:`CHECK`)."""
    members, p, data = load_population(game, folder)
    okw = {k: kw.pop(k) for k in list(kw) if k in _ORACLE_KEYS}
    if okw or "oracle_settings" not in kw:
        kw["oracle_settings"] = oracle.Settings(**{**CHECK, **okw})
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
    if data.get("stability"):  # the population's own re-measure, on its whole population
        out["remeasured"] = dict(data["stability"])
    return with_audits(out, shipped_audits(data))


def with_audits(out: dict, audits: list[dict]) -> dict:
    """A shipped population's standing: its own recorded audits (``audits``,
    the strong searches: the claim) beside the study's smaller re-check
    (``out["audit"]``, now ``out["check"]``). An equilibrium is claimed only
    when the last recorded audit found none past ε and the re-check finds
    none either; where either beats ε it is a gap, the larger gain the
    figure; a population without an audit claims nothing ("not shown")."""
    out = dict(out)
    out["check"] = out.get("audit")
    out["audits"] = list(audits)
    last = audits[-1] if audits else None
    beaten = last is not None and last.get("decision") == "add"  # the audit beat ε
    if out.get("failed"):
        return out  # the re-check's search failed: nothing is claimed
    if out["status"] in ("gap", "budget") and not (
        beaten and last["gain"] > out["exploitability"]["mean"]
    ):
        return out  # the re-check beat ε (by more than any audit did): that is the figure
    if last is None:
        out["status"] = "not shown"
        out["status_text"] = STATUSES["not audited"]
        return out
    if beaten:  # the recorded audit beat ε: the gap it found is the figure
        out["status"] = "gap"
        out["status_text"] = STATUSES["audited gap"]
    elif last.get("decision") != "equilibrium":
        out["status"] = "not shown"
        out["status_text"] = STATUSES.get(str(last.get("decision")), STATUSES["not shown"])
    else:
        out["status"] = "equilibrium"
        out["status_text"] = STATUSES["equilibrium"]
    out["audit"] = {k: last.get(k) for k in AUDIT_KEYS}
    out["exploitability"] = {
        "mean": last["gain"],
        "lo": last["gain_lo"],
        "hi": last["gain_hi"],
        "n": int(last["deals"]),
        "games": None,
        "seed": last.get("seed"),
    }
    return out


# ---- the oracle's power ---------------------------------------------------------------------
MARGIN = 0.02  # a search finds the known response when its gain is within this of the known's
KNOWN = "known.toml"  # the known response beside a test population


def oracle_power(
    folder,
    seeds,
    settings: oracle.Settings | None = None,
    *,
    margin: float = MARGIN,
    results=None,
    threads: int | None = None,
    progress: bool = False,
) -> dict:
    """The oracle's power on one engine, measured: from a deliberately weak
    population (``folder``: a population file, as the equilibrium search
    writes one) that a known response (``folder/known.toml``, found once by a
    long search) beats by far, the oracle at ``settings`` (default: the loop's)
    searches once per seed; each search finds the response when its gain is
    within ``margin`` of the known response's, both measured on the same fresh
    deals. Returns each seed's row and the miss rate with its Clopper–Pearson
    interval."""
    import time

    from balance.paths import load_toml
    from balance.stats.proportions import _clopper_pearson
    from balance.store import Store

    folder = Path(folder)
    game = str(load_toml(folder / POPULATION).get("game"))
    members, p, data = load_population(game, folder)
    keep = [i for i, x in enumerate(p) if x > SUPPORT_MIN]
    members, p = [members[i] for i in keep], p[keep] / p[keep].sum()
    known_path = folder / KNOWN
    if not known_path.is_file():
        raise UserError(f"{known_path}: no known response beside the population")
    known = config.load_strategy(game, str(known_path))
    ruleset = config.resolve_variant(game, str(data.get("rules", "base")))
    s = settings or oracle.Settings()
    rows = []
    for seed in seeds:
        t0 = time.perf_counter()
        arena = GameArena(
            game,
            ruleset,
            int(seed),
            oracle=s,
            store=Store(results),
            threads=threads,
            progress=progress,
            prefix="power",
        )
        tag = f"power:{seed}"
        r = oracle.best_response(arena, members, p, s, tag=tag, name="found")
        idx, w = _weights(p)
        opponents = [members[i] for i in idx]
        kg = oracle.measure_gain(arena, replace(known, name="known"), opponents, w, s, tag)
        rows.append(
            {
                "seed": int(seed),
                "found": r.strategy.name,
                "gain": r.gain,
                "known_gain": kg,
                "short": float(kg["mean"] - r.gain["mean"]),
                "hit": bool(r.gain["mean"] >= kg["mean"] - margin),
                "failed": r.failed,
                "evaluations": r.detail["evaluations"],
                "seconds": round(time.perf_counter() - t0, 1),
            }
        )
    misses = sum(not x["hit"] for x in rows)
    lo, hi = _clopper_pearson(misses, len(rows), 0.05) if rows else (float("nan"),) * 2
    return {
        "game": game,
        "population": [m.name for m in members],
        "weights": [float(x) for x in p],
        "known": known.name,
        "settings": s.as_dict(),
        "margin": margin,
        "rows": rows,
        "misses": misses,
        "miss_rate": misses / len(rows) if rows else float("nan"),
        "miss_lo": float(lo),
        "miss_hi": float(hi),
    }
