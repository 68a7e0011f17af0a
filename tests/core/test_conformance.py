"""One conformance suite for every registered engine: the written contract
(``kernels.contract``) and the properties every engine must have.

Each check is a plain function of a ``balance.registry.Game`` (``check_mirror(game)``,
...; ``CHECKS`` lists them, ``check_all`` runs them), so a test can run them
on a game it registers itself; the tests below are thin wrappers,
parametrised over ``GAMES`` at collection time (a game added to the registry
gets every check without a line here). Games are played under the base rules
with the game's strategies (A: the first by name; B: ``random`` where the game
has it, else the last), and few of them: these check structure, not balance.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, replace
from functools import cache

import numba
import numpy as np
import pytest

from balance.config import Ruleset, bind_side, load_strategy, resolve_variant, strategy_names
from balance.registry import GAMES, Game
from balance.runner import RunResult, RunSpec, simulate_run
from kernels.contract import PAIR_STREAMS, Engine, Rule, StrategyModule, rule_tables

SEED = 20250611
# games per check: 67 seat-swapped pairs, an odd count that is no multiple of a
# parallel chunk (Trisk plays 32 games a task, the four-suits RPG 64)
N = 134
SPLIT = 2 * 37  # a batch boundary after an odd count of pairs
TRACED = (0, 1, 10, 11, N - 1)  # the games whose traces are checked


@dataclass(frozen=True)
class Bench:
    """What the checks play: the base rules and two bound sides."""

    game: Game
    eng: Engine
    ruleset: Ruleset
    rules: np.ndarray
    a: object  # balance.config.Strategy, bound to the ruleset
    b: object
    card_names: tuple | None

    def simulate(self, first=0, n=N, seed=SEED, a=None, b=None) -> dict:
        va = (self.a if a is None else a).vector()
        vb = (self.b if b is None else b).vector()
        return self.eng.simulate(self.rules, va, vb, seed, first, n)

    def run(self, batch_size: int, n=N, seed=SEED) -> RunResult:
        return simulate_run(RunSpec(self.ruleset, self.a, self.b, n, seed), batch_size=batch_size)


@cache
def bench(game: Game) -> Bench:
    rs = resolve_variant(game.name, "base")
    names = strategy_names(game.name)
    assert names, f"{game.name} has no strategies"
    b = "random" if "random" in names[1:] else names[-1]
    sa, sb = (bind_side(rs, load_strategy(game.name, s)) for s in (names[0], b))
    card_names = tuple(rs.card_set().names) if game.card_sets else None
    return Bench(game, game.engine_module(), rs, rs.vector(), sa, sb, card_names)


def _same(x: dict, y: dict, what: str) -> None:
    assert x.keys() == y.keys(), what
    for k in x:
        assert np.array_equal(x[k], y[k]), f"{what}: {k}"


def _same_run(r: RunResult, s: RunResult, what: str) -> None:
    assert (r.games, r.a_wins, r.b_wins, r.draws) == (s.games, s.a_wins, s.b_wins, s.draws), what
    for f in ("seat_wins", "pair_points", "rounds_hist", "reasons"):
        assert np.array_equal(getattr(r, f), getattr(s, f)), f"{what}: {f}"
    assert (r.cards is None) == (s.cards is None), what
    if r.cards is not None:
        assert np.array_equal(r.cards, s.cards), f"{what}: cards"
    assert (r.metrics or {}).keys() == (s.metrics or {}).keys(), what
    for k, v in (r.metrics or {}).items():
        assert np.array_equal(v, s.metrics[k]), f"{what}: metric {k}"
    assert r.deal_sums.keys() == s.deal_sums.keys(), what
    for k, v in r.deal_sums.items():
        w = s.deal_sums[k]
        assert v.dtype == w.dtype and np.array_equal(v, w), f"{what}: per-deal {k}"


def _params(fn) -> list[tuple]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


# ---------------------------------------------------------------------------- the checks
def check_surface(game: Game) -> None:
    """The engine and strategy modules expose ``kernels.contract``'s surface,
    with the contract's exact signatures."""
    eng, mod = game.engine_module(), game.strategy_module()
    assert isinstance(eng, Engine), f"{game.name}'s engine lacks part of the contract"
    assert isinstance(mod, StrategyModule), f"{game.name}'s strategies lack part of the contract"
    for proto, module in ((Engine, eng), (StrategyModule, mod)):
        for name, fn in vars(proto).items():
            if inspect.isfunction(fn) and not name.startswith("_"):
                want = _params(fn)[1:]  # without self
                assert _params(getattr(module, name)) == want, f"{game.name}: {name} signature"
    assert eng.GAME == game.name
    assert isinstance(eng.VERSION, str) and eng.VERSION
    assert eng.PAIR_STREAMS in PAIR_STREAMS
    assert eng.END_NAMES and all(isinstance(n, str) for n in eng.END_NAMES)
    cat = eng.catalogue()
    assert isinstance(cat, list) and all(isinstance(row, dict) for row in cat)
    for name, (base, feats) in mod.SECTIONS.items():
        assert isinstance(base, int) and feats and all(len(f) == 2 for f in feats), name
    rules = bench(game).ruleset.rules
    if game.card_sets:  # the card table travels in the rules vector: it is required
        with pytest.raises(ValueError):
            eng.encode_rules(rules)
    else:  # no card sets: no table
        assert np.array_equal(eng.encode_rules(rules, None), eng.encode_rules(rules))
        with pytest.raises(ValueError):
            eng.encode_rules(rules, np.zeros((1, 1), np.int64))


def check_rules(game: Game) -> None:
    """``RULES`` declares every rules key once, well formed: names unique,
    docs written, defaults within bounds, in the order of the rules vector
    (``RULE_FIELDS``, ``DEFAULT_RULES`` and ``RULE_LIMITS`` derive from it),
    and the base ruleset holds every key."""
    eng = game.engine_module()
    rules = eng.RULES
    assert isinstance(rules, tuple) and rules and all(isinstance(r, Rule) for r in rules)
    names = [r.name for r in rules]
    assert len(set(names)) == len(names), "a rule is declared twice"
    assert (eng.RULE_FIELDS, eng.DEFAULT_RULES, eng.RULE_LIMITS) == rule_tables(rules)
    numeric = []
    for r in rules:
        assert r.name.isidentifier(), r.name
        assert isinstance(r.doc, str) and r.doc.strip(), f"{r.name}: no doc"
        if isinstance(r.default, bool | str):
            assert r.lo is None and r.hi is None, f"{r.name}: a bool or string has no bounds"
            assert r.default != "", r.name
        else:
            assert isinstance(r.default, int), r.name
            assert isinstance(r.lo, int) and isinstance(r.hi, int), f"{r.name}: unbounded"
            assert r.lo <= r.default <= r.hi, f"{r.name}: default out of bounds"
        if not isinstance(r.default, str):
            numeric.append(r)
    # strings (names, e.g. a card set) are not in the int vector: they come last
    assert names[: len(numeric)] == [r.name for r in numeric], "a string rule before a number"
    b = bench(game)
    assert set(b.ruleset.rules) == set(names)
    base = dict(b.ruleset.rules)
    vec = replace(b.ruleset, rules=base).vector()
    assert [int(v) for v in vec[: len(numeric)]] == [int(base[r.name]) for r in numeric]
    for i, r in enumerate(numeric):  # each rule moves its own entry of the vector, only it
        other = (
            (not r.default)
            if isinstance(r.default, bool)
            else (r.hi if r.lo == r.default else r.lo)
        )
        changed = replace(b.ruleset, rules={**base, r.name: other}).vector()
        diff = np.flatnonzero(changed[: len(vec)] != vec)
        assert diff.tolist() == [i], f"{r.name}: moves entries {diff.tolist()}"


def check_mirror(game: Game, n: int = N) -> None:
    """Each strategy of the game against itself scores 1/2. Where the pair's
    streams follow the seat, exactly, pair by pair: the two games of a deal
    are one game with the seats' strategies swapped (same winner seat, length
    and end). Where they follow the side (``PAIR_STREAMS == "side"``), in
    expectation: the pooled score is within 4.5 standard errors of 1/2."""
    b = bench(game)
    pairs = []
    for name in strategy_names(game.name):
        s = bind_side(b.ruleset, load_strategy(game.name, name))
        out = b.simulate(a=s, b=s, n=n)
        pts = out["a_points"][0::2] + out["a_points"][1::2]
        if b.eng.PAIR_STREAMS == "seat":
            assert (pts == 2).all(), f"{name}: a mirror pair does not score 1/2"
            for k in ("winner_seat", "rounds", "reason"):
                assert np.array_equal(out[k][0::2], out[k][1::2]), f"{name}: {k}"
        pairs.append(pts / 4.0)
    pooled = np.concatenate(pairs)
    se = max(pooled.std(), 0.05) / np.sqrt(len(pooled))
    assert abs(pooled.mean() - 0.5) <= 4.5 * se, f"mirror score {pooled.mean():.3f}"


def check_threads(game: Game, n: int = N) -> None:
    """1 and 2 numba threads play the same games (``simulate`` and the
    runner's counts)."""
    b = bench(game)
    before = numba.get_num_threads()
    outs = []
    try:
        for t in sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)}):
            numba.set_num_threads(t)
            outs.append((b.simulate(n=n), b.run(batch_size=38, n=n)))
    finally:
        numba.set_num_threads(before)
    for out, run in outs[1:]:
        _same(out, outs[0][0], "threads")
        _same_run(run, outs[0][1], "threads")


def check_batches(game: Game, n: int = N) -> None:
    """Game *i* depends on the seed and *i* alone: one batch equals the same
    games split after an odd count of pairs, a slice from the middle equals
    those games of the whole, and the runner's counts do not depend on its
    batch size. An odd first game or count is refused (pairs)."""
    b = bench(game)
    whole = b.simulate(n=n)
    first, second = b.simulate(0, SPLIT), b.simulate(SPLIT, n - SPLIT)
    _same(whole, {k: np.concatenate([first[k], second[k]]) for k in whole}, "split")
    mid = b.simulate(10, 6)
    _same(mid, {k: v[10:16] for k, v in whole.items()}, "slice")
    for first_game, count in ((1, 4), (0, 3)):
        with pytest.raises(ValueError):
            b.simulate(first_game, count)
    runs = [b.run(batch_size=s, n=n) for s in (2, SPLIT, 1 << 15)]
    for r in runs[1:]:
        _same_run(r, runs[0], "batch size")
    assert runs[0].games == n and len(runs[0].pair_points) == n // 2


def check_seeds(game: Game, n: int = N) -> None:
    """The same seed plays the same games; another seed plays others."""
    b = bench(game)
    x = b.simulate(n=n)
    _same(x, b.simulate(n=n), "same seed")
    y = b.simulate(n=n, seed=SEED + 1)
    assert any(not np.array_equal(x[k], y[k]) for k in x), "the seed changes nothing"


def check_trace(game: Game) -> None:
    """``trace`` tells the game ``simulate`` plays: its last event has the
    game's winner seat, length and end; every event has a text, and the
    names label the sides."""
    b = bench(game)
    out = b.simulate()
    names = ("Alpha", "Beta")
    for g in TRACED:
        ev = b.eng.trace(
            b.rules, b.a.vector(), b.b.vector(), SEED, g, names, card_names=b.card_names
        )
        assert ev and all(isinstance(e.get("text"), str) and e["text"] for e in ev), g
        end = ev[-1]
        w = int(out["winner_seat"][g])
        assert end["winner_seat"] == (w + 1 if w >= 0 else None), g
        assert end["rounds"] == out["rounds"][g], g
        assert end["reason"] == b.eng.END_NAMES[out["reason"][g]], g
        text = "\n".join(e["text"] for e in ev)
        assert names[0] in text and names[1] in text, g


def check_max_length(game: Game) -> None:
    """``max_length(rules)`` bounds every game: under the base rules, and
    under the rules that shorten it most (one integer rule at its bound),
    where games reach it and none passes it. The runner's game-length
    histogram is exactly that wide."""
    b = bench(game)
    eng, base = b.eng, b.ruleset.rules
    cap = eng.max_length(base)
    assert isinstance(cap, int) and 0 < cap < 100_000
    out = b.simulate()
    assert ((out["rounds"] >= 0) & (out["rounds"] <= cap)).all()
    run = b.run(batch_size=1 << 15)
    assert len(run.rounds_hist) == cap + 2 and run.rounds_hist.sum() == run.games
    # the rule and bound that make the game shortest (a round or turn cap)
    short = min(
        (
            (eng.max_length({**base, r.name: v}), r.name, v)
            for r in eng.RULES
            if r.lo is not None
            for v in (r.lo, r.hi)
        ),
    )
    if short[0] < cap:
        rules = {**base, short[1]: short[2]}
        rv = replace(b.ruleset, rules=rules).vector()
        o = eng.simulate(rv, b.a.vector(), b.b.vector(), SEED, 0, N)
        assert o["rounds"].max() == short[0], f"{short[1]} = {short[2]}"


CHECKS = (
    check_surface,
    check_rules,
    check_mirror,
    check_threads,
    check_batches,
    check_seeds,
    check_trace,
    check_max_length,
)


def check_all(game: Game) -> None:
    """Every check, on one game (e.g. one a test registers itself)."""
    for check in CHECKS:
        check(game)


# ---------------------------------------------------------------------------- the tests
@pytest.fixture(params=sorted(GAMES), ids=str)
def game(request) -> Game:
    return GAMES[request.param]


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__.removeprefix("check_"))
def test_conformance(check, game):
    check(game)
