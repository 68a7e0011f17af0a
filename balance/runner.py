"""The experiment runner: batches, threads, progress, exact aggregates.

A run is (game, ruleset, strategy A, strategy B, seed, number of games). The
runner cuts it into batches of seat-swapped deal pairs, plays each batch on
numba threads, and merges exact counts. Because every game draws from streams
named by (seed, deal) alone, the result never depends on the batch size or the
thread count. Finished runs go to the store; asking for the same run again
reads it back instead of simulating.
"""

from __future__ import annotations

import os
import shlex
import sys
import time
from dataclasses import dataclass, field, replace
from functools import cached_property
from datetime import datetime, timezone

import numpy as np
import polars as pl

from balance import __version__
from balance.config import Ruleset, Strategy, bind_side
from balance.errors import UserError
from balance.registry import get_game
from balance.rulings import rulings
from balance.store import Store, config_hash

DEFAULT_BATCH = 1 << 15  # games per batch: a few MB of per-game arrays at most

# per-card counters, for each side (A, B) and card
CARD_FIELDS = ("gih_n", "gih_w", "gih_d", "played_n", "played_w", "played_d",
               "gns_n", "gns_w", "gns_d")


@dataclass(frozen=True)
class RunSpec:
    """Everything that determines a run's numbers."""

    ruleset: Ruleset
    a: Strategy
    b: Strategy
    n_games: int
    seed: int
    per_game: bool = False
    # what experiment the run belongs to, when the sides alone do not say
    # ("loadout-matrix": every loadout against every loadout); part of its identity
    experiment: str = ""

    def __post_init__(self):
        check_seed(self.seed)
        if self.n_games <= 0 or self.n_games % 2:
            raise UserError(f"a run needs a positive even number of games, got {self.n_games}")
        # the sides meet the rules here: a deck is looked up by name in the
        # ruleset's card set and checked there (frozen: set through object)
        object.__setattr__(self, "a", bind_side(self.ruleset, self.a))
        object.__setattr__(self, "b", bind_side(self.ruleset, self.b))

    @property
    def game(self) -> str:
        return self.ruleset.game

    def resolved(self) -> dict:
        eng = get_game(self.game).engine_module()
        return {
            "game": self.game, "engine_version": eng.VERSION, "variant": self.ruleset.name,
            "rules": self.ruleset.rules,
            **({"card_set_digest": self.ruleset.card_set().digest}
               if get_game(self.game).card_sets else {}),
            "a": _side(self.a), "b": _side(self.b),
            "n_games": self.n_games, "seed": self.seed, "per_game": self.per_game,
            "store_format": STORE_FORMAT,
            **({"experiment": self.experiment} if self.experiment else {}),
        }

    @cached_property
    def key(self) -> str:
        return config_hash(self.resolved())


def _side(s: Strategy) -> dict:
    out = {"name": s.name, "spec": s.spec, "forbidden": s.forbidden_ranks}
    if s.loadout is not None:  # only games with loadouts: Tosk's run keys are unchanged
        out["loadout"] = s.loadout
    if s.deck is not None:  # only games with decks
        out["deck"] = {"name": s.deck.name, "primal": int(s.deck.primal),
                       "cards": [int(c) for c in s.deck.cards]}
        names = getattr(s.deck, "names", None)
        if names is not None and getattr(s.deck, "primal_name", None) is not None:
            # by name too: a report rebinds the deck to the run's own card set by name
            out["deck"]["primal_name"] = s.deck.primal_name
            out["deck"]["names"] = list(names)
    return out


@dataclass
class RunResult:
    """Exact aggregates of one run (A's point of view)."""

    spec: RunSpec
    games: int
    a_wins: int
    b_wins: int
    draws: int
    seat_wins: np.ndarray  # wins of seat 0 and seat 1
    pair_points: np.ndarray  # uint8 per deal: A's half points over its two games (0..4)
    rounds_hist: np.ndarray  # count of games by length
    reasons: np.ndarray  # count of games by end reason
    cards: np.ndarray | None  # int64[2 sides, n_cards, len(CARD_FIELDS)]
    per_game: pl.DataFrame | None = None
    manifest: dict = field(default_factory=dict)
    cached: bool = False
    # per-game score-trace metrics: histogram (count of games by value) per name
    # of the engine's METRICS; None when the engine has none
    metrics: dict[str, np.ndarray] | None = None

    @property
    def key(self) -> str:
        return self.spec.key


SEED_MAX = 2**64 - 1


def check_seed(seed: int) -> int:
    """Validate --seed: the RNG takes any 64-bit unsigned seed."""
    if not 0 <= seed <= SEED_MAX:
        raise UserError(f"--seed must be between 0 and 2**64-1, got {seed}")
    return seed


# The most games one run may hold: a run keeps one byte per seat-swapped deal pair
# (paired comparisons), so 2e9 games are 1 GB of memory and about a day of play.
MAX_GAMES = 2_000_000_000


def check_games(n: int, what: str = "-n") -> int:
    """Validate -n: a positive number of games, rounded up to whole deal pairs."""
    if n <= 0:
        raise UserError(f"{what} must be a positive number of games, got {n}")
    if n > MAX_GAMES:
        raise UserError(f"{what} = {n:,} games is more than one run can hold; at most "
                        f"{MAX_GAMES:,} (split the work over seeds)")
    return n + (n % 2)


def set_threads(threads: int | None) -> int:
    """Use ``threads`` numba threads (None: all cores); returns the count used."""
    import numba

    limit = numba.config.NUMBA_NUM_THREADS
    if threads is None:
        threads = limit
    if not 1 <= threads <= limit:
        raise UserError(f"--threads must be between 1 and {limit} on this machine, got {threads}")
    numba.set_num_threads(threads)
    return threads


class _Accumulator:
    """Merges batch outcomes into exact counts."""

    def __init__(self, spec: RunSpec, eng):
        self.spec = spec
        n_deals = spec.n_games // 2
        self.pair_points = np.zeros(n_deals, dtype=np.uint8)
        self.rounds = np.zeros(int(spec.ruleset.rules.get("max_rounds", 1000)) + 2, np.int64)
        self.reasons = np.zeros(len(eng.END_NAMES), dtype=np.int64)
        self.seat_wins = np.zeros(2, dtype=np.int64)
        self.wins = np.zeros(3, dtype=np.int64)  # A wins, B wins, draws
        self.n_cards = getattr(eng, "N_CARDS", 0)
        self.cards = np.zeros((2, self.n_cards, len(CARD_FIELDS)), np.int64) if self.n_cards else None
        sizes = getattr(eng, "METRICS", None)
        self.metrics = ({name: np.zeros(int(size), np.int64) for name, size in sizes.items()}
                        if sizes else None)
        self.games = []

    def merge(self, res: "RunResult") -> None:
        """Start from the counts of a finished run over games 0..res.games-1."""
        self.pair_points[: len(res.pair_points)] = res.pair_points
        self.wins += [res.a_wins, res.b_wins, res.draws]
        self.seat_wins += res.seat_wins
        k = min(len(self.rounds), len(res.rounds_hist))
        self.rounds[:k] += res.rounds_hist[:k]
        self.reasons += res.reasons
        if self.cards is not None and res.cards is not None:
            self.cards += res.cards
        if self.metrics is not None:
            if res.metrics is None or set(res.metrics) != set(self.metrics):
                self.metrics = None  # the earlier games lack them: no partial histograms
            else:
                for name, hist in self.metrics.items():
                    k = min(len(hist), len(res.metrics[name]))
                    hist[:k] += res.metrics[name][:k]
        if res.per_game is not None:
            self.games.append(res.per_game)

    def add(self, first_game: int, out: dict) -> None:
        pts = out["a_points"]
        d0 = first_game // 2
        self.pair_points[d0:d0 + len(pts) // 2] = pts[0::2] + pts[1::2]
        self.wins += [(pts == 2).sum(), (pts == 0).sum(), (pts == 1).sum()]
        self.seat_wins += [(out["winner_seat"] == 0).sum(), (out["winner_seat"] == 1).sum()]
        self.rounds += np.bincount(out["rounds"], minlength=len(self.rounds))[: len(self.rounds)]
        self.reasons += np.bincount(out["reason"], minlength=len(self.reasons))
        if self.cards is not None:
            from sims.aggregate import card_counts

            card_counts(self.n_cards, out["seen_a"], out["played_a"], out["seen_b"],
                        out["played_b"], pts, self.cards)
        if self.metrics is not None:
            for name, hist in self.metrics.items():
                v = out[name]
                v = np.minimum(v[v >= 0], len(hist) - 1)  # -1: undefined (e.g. a draw)
                hist += np.bincount(v, minlength=len(hist))
        if self.spec.per_game:
            cols = {k: v for k, v in out.items()}
            cols["game"] = np.arange(first_game, first_game + len(pts))
            self.games.append(pl.DataFrame(cols))


def command_line() -> str:
    """The command that is running, as a user would type it again."""
    return " ".join(shlex.quote(a) for a in ["balance", *sys.argv[1:]])


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def provenance(game: str) -> dict:
    """What every stored result records about its making: the command, the
    engine and its version, the toolkit's version, the rulings in force and
    the date."""
    g = get_game(game)
    return {"command": command_line(), "engine": g.engine,
            "engine_version": g.engine_module().VERSION, "toolkit_version": __version__,
            "rulings": list(rulings(g.rulings)), "date": utc_now()}


def _manifest(spec: RunSpec, elapsed: float, threads: int) -> dict:
    return {
        **provenance(spec.game),
        "config_hash": spec.key,
        "resolved_config": spec.resolved(),
        "seed": spec.seed,
        "timings": {"simulate_s": round(elapsed, 3), "threads": threads},
    }


STORE_FORMAT = 2  # one Parquet file per run (run.parquet), plus games.parquet with --per-game


def _to_tables(res: RunResult) -> dict[str, pl.DataFrame]:
    """A run's exact aggregates as one single-row table (``run``), with the
    per-deal points and every histogram as list columns: one small file to
    read per run keeps a report over hundreds of runs fast."""
    i64 = pl.List(pl.Int64)
    metrics = res.metrics or {}
    cols = {
        "games": [res.games], "a_wins": [res.a_wins], "b_wins": [res.b_wins],
        "draws": [res.draws], "seat0_wins": [int(res.seat_wins[0])],
        "seat1_wins": [int(res.seat_wins[1])],
        "pair_points": pl.Series([res.pair_points], dtype=pl.List(pl.UInt8)),
        "rounds_hist": pl.Series([np.asarray(res.rounds_hist, np.int64)], dtype=i64),
        "reasons": pl.Series([np.asarray(res.reasons, np.int64)], dtype=i64),
        "n_cards": [None if res.cards is None else int(res.cards.shape[1])],
        "cards": pl.Series([np.zeros(0, np.int64) if res.cards is None
                            else res.cards.astype(np.int64).ravel()], dtype=i64),
        "has_metrics": [res.metrics is not None],
        "metric_names": pl.Series([list(metrics)], dtype=pl.List(pl.Utf8)),
        "metric_sizes": pl.Series([np.array([len(h) for h in metrics.values()], np.int64)],
                                  dtype=i64),
        "metric_counts": pl.Series([np.concatenate(
            [np.asarray(h, np.int64) for h in metrics.values()] + [np.zeros(0, np.int64)])],
            dtype=i64),
    }
    t = {"run": pl.DataFrame(cols)}
    if res.per_game is not None:
        t["games"] = res.per_game
    return t


def _from_tables(spec: RunSpec, manifest: dict, t: dict[str, pl.DataFrame]) -> RunResult:
    run = t["run"]
    return _from_row(spec, manifest, lambda name: run[name][0],
                     lambda name: run[name][0].to_numpy(), t.get("games"))


def _from_row(spec: RunSpec, manifest: dict, scalar, array, per_game) -> RunResult:
    """A RunResult from the single-row run table, read through ``scalar(name)``
    and ``array(name)`` (the list columns as numpy)."""
    cards = None
    if scalar("n_cards") is not None:
        cards = array("cards").astype(np.int64).reshape(2, int(scalar("n_cards")),
                                                        len(CARD_FIELDS))
    metrics = None
    if scalar("has_metrics"):
        counts, sizes = array("metric_counts").astype(np.int64), array("metric_sizes")
        edges = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        metrics = {str(name): counts[edges[i]:edges[i + 1]]
                   for i, name in enumerate(array("metric_names"))}
    return RunResult(
        spec=spec, games=int(scalar("games")), a_wins=int(scalar("a_wins")),
        b_wins=int(scalar("b_wins")), draws=int(scalar("draws")),
        seat_wins=np.array([scalar("seat0_wins"), scalar("seat1_wins")], dtype=np.int64),
        pair_points=array("pair_points").astype(np.uint8),
        rounds_hist=array("rounds_hist").astype(np.int64),
        reasons=array("reasons").astype(np.int64), cards=cards, per_game=per_game,
        manifest=manifest, cached=True, metrics=metrics,
    )


class _Progress:
    """A rich progress bar that appears only once the work has run a second."""

    def __init__(self, total: int, label: str, enabled: bool):
        self.total = total
        self.label = label
        self.enabled = enabled and total > 0
        self.start = time.perf_counter()
        self.done = 0
        self.bar = None
        self.task = None

    def advance(self, n: int) -> None:
        self.done += n
        if not self.enabled:
            return
        if self.bar is None and time.perf_counter() - self.start > 1.0:
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress,
                                       TextColumn, TimeRemainingColumn)

            self.bar = Progress(TextColumn("{task.description}"), BarColumn(),
                                MofNCompleteColumn(), TextColumn("games"),
                                TimeRemainingColumn(), console=Console(stderr=True),
                                transient=True)
            self.bar.start()
            self.task = self.bar.add_task(self.label, total=self.total)
        if self.bar is not None:
            self.bar.update(self.task, completed=self.done)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def simulate_run(spec: RunSpec, batch_size: int = DEFAULT_BATCH, progress=None,
                 start: RunResult | None = None) -> RunResult:
    """Play one run in batches (no store); ``progress`` gets ``advance(n)``.

    With ``start``, a finished run of the same config over fewer games, only
    the games it lacks are played: game i of a seed is the same game at any
    run size, so the merged counts equal a run played from scratch.
    """
    eng = get_game(spec.game).engine_module()
    rules = spec.ruleset.vector()
    va, vb = spec.a.vector(), spec.b.vector()
    if batch_size <= 0 or batch_size % 2:
        raise UserError(f"--batch-size must be a positive even number, got {batch_size}")
    acc = _Accumulator(spec, eng)
    begin = 0
    if start is not None:
        if replace(start.spec, n_games=spec.n_games) != spec or start.games > spec.n_games:
            raise ValueError("can only extend a smaller run of the same config")
        begin = start.games
        acc.merge(start)
    for first in range(begin, spec.n_games, batch_size):
        n = min(batch_size, spec.n_games - first)
        out = eng.simulate(rules, va, vb, spec.seed, first, n)
        acc.add(first, out)
        if progress is not None:
            progress.advance(n)
    per_game = pl.concat(acc.games) if acc.games else None
    return RunResult(spec, spec.n_games, int(acc.wins[0]), int(acc.wins[1]), int(acc.wins[2]),
                     acc.seat_wins, acc.pair_points, acc.rounds, acc.reasons, acc.cards,
                     per_game, metrics=acc.metrics)


def save_run(store: Store, res: RunResult) -> None:
    """Write a finished run (its manifest set) to the store."""
    store.save(res.spec.game, res.key, res.manifest, _to_tables(res))


def run_many(specs: list[RunSpec], *, store: Store | None = None, threads: int | None = None,
             batch_size: int = DEFAULT_BATCH, progress: bool = True,
             label: str = "simulating", extend: dict | None = None,
             store_only: bool = False) -> list[RunResult]:
    """Run (or read from the store) every spec, with one progress bar for all.

    ``extend`` maps a spec's index to a finished smaller run of the same
    config, which the new run continues instead of starting over. With
    ``store_only``, nothing is simulated: a run missing from the store is a
    user error (a report is built from stored runs only).
    """
    extend = extend or {}
    threads = set_threads(threads)
    results: list[RunResult | None] = [None] * len(specs)
    todo = []
    for i, spec in enumerate(specs):
        loaded = store.load(spec.game, spec.key) if store is not None else None
        if loaded is not None:
            results[i] = _from_tables(spec, *loaded)
        else:
            todo.append(i)
    if store_only and todo:
        s = specs[todo[0]]
        raise UserError(
            f"{len(todo)} of the {len(specs)} runs this needs are not in the store "
            f"{store.root if store is not None else ''} (first: {s.game} {s.ruleset.name}, "
            f"{s.a.name} vs {s.b.name}, {s.n_games:,} games, seed {s.seed}); "
            "run `balance study` (or the command that makes them) first")
    bar = _Progress(sum(specs[i].n_games - (extend[i].games if i in extend else 0)
                        for i in todo), label,
                    progress and sys.stderr.isatty() or os.environ.get("BALANCE_PROGRESS") == "1")
    try:
        for i in todo:
            t0 = time.perf_counter()
            res = simulate_run(specs[i], batch_size, bar, extend.get(i))
            res.manifest = _manifest(specs[i], time.perf_counter() - t0, threads)
            if store is not None:
                save_run(store, res)
            results[i] = res
    finally:
        bar.close()
    return results  # type: ignore[return-value]


def load_run(folder, spec: RunSpec, manifest: dict | None = None) -> RunResult | None:
    """A stored run from its folder (None if its files are not this format).

    Reads ``run.parquet`` with pyarrow directly: a report reads hundreds of
    runs, and this is about twice as fast per file as going through a
    DataFrame."""
    import json
    from pathlib import Path

    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = Path(folder)
    try:
        if manifest is None:
            manifest = json.loads((folder / "manifest.json").read_text())
        tb = pq.ParquetFile(folder / "run.parquet").read(use_threads=False)
        games = folder / "games.parquet"
        per_game = pl.read_parquet(games) if games.is_file() else None

        def array(name):
            return tb.column(name).chunk(0).values.to_numpy(zero_copy_only=False)

        return _from_row(spec, manifest, lambda name: tb.column(name)[0].as_py(), array,
                         per_game)
    except (OSError, KeyError, ValueError, IndexError, pa.ArrowException,
            pl.exceptions.PolarsError):
        return None
