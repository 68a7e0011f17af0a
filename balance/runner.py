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
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import cache, cached_property, lru_cache
from typing import TYPE_CHECKING

import numpy as np

from balance import __version__, phases
from balance.config import Ruleset, Strategy, bind_side
from balance.errors import UserError
from balance.registry import get_game
from balance.store import Damaged, Store, config_hash, parse_parquet, read_files, read_manifest

if TYPE_CHECKING:  # polars is imported where it is used: a cached start stays quick
    import polars as pl

DEFAULT_BATCH = 1 << 15  # games per batch: a few MB of per-game arrays at most

# per-card counters, for each side (A, B) and card
CARD_FIELDS = (
    "gih_n",
    "gih_w",
    "gih_d",
    "played_n",
    "played_w",
    "played_d",
    "gns_n",
    "gns_w",
    "gns_d",
)

# The per-game score-trace metrics (an engine's METRICS, where it has them)
# whose figures the tables show with an interval: kept per deal as well
# (balance.metrics reads them).
DEAL_METRICS = ("lead_changes", "max_deficit", "decided_pct")


def deal_fields(eng) -> dict[str, type]:
    """The per-deal sums a run keeps for ``eng`` (``RunResult.deal_sums``),
    name → dtype; each sums the deal's two games:

    - ``rounds``: their lengths (uint16; uint32 for a run whose games are
      longer than 32,767 rounds);
    - ``draws``, ``round_cap``, ``seat0_wins``: games drawn, stopped at the
      round cap (none for an engine without one), won by the first seat (0..2);
    - for each of :data:`DEAL_METRICS` in the engine's ``METRICS``: ``<name>``,
      the sum of the values defined in the deal's games (a value is -1 where
      undefined, e.g. a draw's deficit; clipped at the histogram's last bin,
      as the histogram is), ``<name>_n`` the games where it is defined and
      ``<name>_pos`` those where it is above 0 (0..2).

    Every per-game figure is then pooled by deal across the matches that
    replay it (``balance.stats.pool_by_deal``): its interval needs no assumed
    design effect. About 15 bytes a deal (Trisk)."""
    out: dict[str, type] = {
        "rounds": np.uint16,
        "draws": np.uint8,
        "round_cap": np.uint8,
        "seat0_wins": np.uint8,
    }
    sizes = getattr(eng, "METRICS", None) or {}
    for name in DEAL_METRICS:
        if name in sizes:
            top = 2 * (int(sizes[name]) - 1)
            out[name] = np.uint8 if top <= 0xFF else np.uint16 if top <= 0xFFFF else np.uint32
            out[f"{name}_n"] = np.uint8
            out[f"{name}_pos"] = np.uint8
    return out


def _narrow_rounds(x: np.ndarray) -> np.ndarray:
    """Per-deal lengths in uint16, or uint32 when a deal's games are longer
    (the dtype depends on the values alone: never on the batches)."""
    return x.astype(np.uint16 if x.size == 0 or int(x.max()) <= 0xFFFF else np.uint32)


def count_deals(eng, out: dict) -> dict[str, np.ndarray]:
    """The per-deal sums (:func:`deal_fields`) of a batch's per-game arrays
    ``out`` (games in seat-swapped pairs: 2d and 2d + 1 are deal d)."""

    def pair(x) -> np.ndarray:
        x = np.asarray(x, np.int64)
        return x[0::2] + x[1::2]

    fields = deal_fields(eng)
    w = np.asarray(out["winner_seat"])
    names = list(eng.END_NAMES)
    cap = (
        np.asarray(out["reason"]) == names.index("round_cap")
        if "round_cap" in names
        else np.zeros(len(w), bool)
    )
    sums = {
        "rounds": _narrow_rounds(pair(out["rounds"])),
        "draws": pair(w == -1).astype(np.uint8),
        "round_cap": pair(cap).astype(np.uint8),
        "seat0_wins": pair(w == 0).astype(np.uint8),
    }
    sizes = getattr(eng, "METRICS", None) or {}
    for name in DEAL_METRICS:
        if name in fields:
            v = np.asarray(out[name], np.int64)
            ok = v >= 0
            c = np.where(ok, np.minimum(v, int(sizes[name]) - 1), 0)
            sums[name] = pair(c).astype(fields[name])
            sums[f"{name}_n"] = pair(ok).astype(np.uint8)
            sums[f"{name}_pos"] = pair(c > 0).astype(np.uint8)
    return sums


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
        """The run's whole config, as its key hashes it and its manifest
        records it: made once per spec (the key and the manifest share it), so
        read it, do not change it."""
        return self._resolved

    @cached_property
    def _resolved(self) -> dict:
        eng = get_game(self.game).engine_module()
        return {
            "game": self.game,
            "engine_version": eng.VERSION,
            "variant": self.ruleset.name,
            "rules": key_rules(self.ruleset),
            **(
                {"card_set_digest": self.ruleset.card_set().digest}
                if get_game(self.game).card_sets
                else {}
            ),
            "a": side_record(self.a),
            "b": side_record(self.b),
            "n_games": self.n_games,
            "seed": self.seed,
            "per_game": self.per_game,
            "store_format": STORE_FORMAT,
            **({"experiment": self.experiment} if self.experiment else {}),
        }

    @cached_property
    def key(self) -> str:
        return config_hash(self.resolved())


DIGEST_PREFIX = "digest:"  # a card set named in a key by its content, not its path


def key_rules(ruleset: Ruleset) -> dict:
    """A ruleset's rules as a key hashes them: a card set given by a path is
    named by its content digest (``digest:<sha256>``), so a key does not
    depend on where the file lies or how its path is spelled (``./x.toml``,
    ``/abs/x.toml``, a symlinked folder, a set written under the store); a
    set the game names (Trisk's ``reference``: its card-set module's
    ``NAMED_SETS``) keeps its name, its digest being in the key beside it."""
    g = get_game(ruleset.game)
    if not g.card_sets or "card_set" not in ruleset.rules:
        return ruleset.rules
    name = ruleset.rules["card_set"]
    if name in getattr(g.card_set_module(), "NAMED_SETS", ()):
        return ruleset.rules
    return {**ruleset.rules, "card_set": DIGEST_PREFIX + ruleset.card_set().digest}


def card_set_path(ruleset: Ruleset) -> str | None:
    """Where the card set of a ruleset that names one by path lies (an
    absolute path: for people, and for a report rebuilding the run), None
    when the key names it (:func:`key_rules`)."""
    rules = key_rules(ruleset)
    if rules is ruleset.rules:
        return None
    return os.path.abspath(ruleset.rules["card_set"])


def side_record(s: Strategy) -> dict:
    out = {"name": s.name, "spec": s.spec, "forbidden": s.forbidden_ranks}
    if s.loadout is not None:  # only games with loadouts: Tosk's run keys are unchanged
        out["loadout"] = s.loadout
    if s.deck is not None:  # only games with decks
        out["deck"] = {
            "name": s.deck.name,
            "primal": int(s.deck.primal),
            "cards": [int(c) for c in s.deck.cards],
        }
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
    # per-deal sums over the deal's two games (:func:`deal_fields` names them):
    # what every per-game figure's deal-clustered interval needs
    deal_sums: dict[str, np.ndarray] | None = None

    @property
    def key(self) -> str:
        return self.spec.key


SEED_MAX = 2**64 - 1


def check_seed(seed: int) -> int:
    """Validate --seed: the RNG takes any 64-bit unsigned seed."""
    if not 0 <= seed <= SEED_MAX:
        raise UserError(f"--seed must be between 0 and 2**64-1, got {seed}")
    return seed


# The most games one run may hold: a run keeps, per seat-swapped deal pair, one
# byte of points (paired comparisons) and its per-deal sums (deal_fields: about
# 15 bytes in Trisk, 5 for an engine without score-trace metrics), so 2e9 games
# are up to about 16 GB of memory and about a day of play.
MAX_GAMES = 2_000_000_000


def check_games(n: int, what: str = "-n") -> int:
    """Validate -n: a positive number of games, rounded up to whole deal pairs."""
    if n <= 0:
        raise UserError(f"{what} must be a positive number of games, got {n}")
    if n > MAX_GAMES:
        raise UserError(
            f"{what} = {n:,} games is more than one run can hold; at most "
            f"{MAX_GAMES:,} (split the work over seeds)"
        )
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
        # rounds in uint32 while the run is played (a batch may hold longer
        # games than the first); narrowed when it is done
        self.deals = {
            name: np.zeros(n_deals, np.uint32 if name == "rounds" else dtype)
            for name, dtype in deal_fields(eng).items()
        }
        self.rounds = np.zeros(int(eng.max_length(spec.ruleset.rules)) + 2, np.int64)
        self.reasons = np.zeros(len(eng.END_NAMES), dtype=np.int64)
        self.seat_wins = np.zeros(2, dtype=np.int64)
        self.wins = np.zeros(3, dtype=np.int64)  # A wins, B wins, draws
        self.n_cards = getattr(eng, "N_CARDS", 0)
        self.cards = (
            np.zeros((2, self.n_cards, len(CARD_FIELDS)), np.int64) if self.n_cards else None
        )
        sizes = getattr(eng, "METRICS", None)
        self.metrics = (
            {name: np.zeros(int(size), np.int64) for name, size in sizes.items()} if sizes else None
        )
        self.games = []

    def _grow_rounds(self, size: int) -> None:
        """Make room for games of up to ``size - 1`` rounds (a run stored
        with a wider histogram, extended): every game is counted, so the
        histogram sums to the games played."""
        if size > len(self.rounds):
            self.rounds = np.concatenate([self.rounds, np.zeros(size - len(self.rounds), np.int64)])

    def merge(self, res: RunResult) -> None:
        """Start from the counts of a finished run over games 0..res.games-1."""
        self.pair_points[: len(res.pair_points)] = res.pair_points
        if res.deal_sums is None or set(res.deal_sums) != set(self.deals):
            raise ValueError("can only extend a run that keeps the same per-deal sums")
        for name, arr in self.deals.items():
            arr[: len(res.deal_sums[name])] = res.deal_sums[name]
        self.wins += [res.a_wins, res.b_wins, res.draws]
        self.seat_wins += res.seat_wins
        self._grow_rounds(len(res.rounds_hist))
        self.rounds[: len(res.rounds_hist)] += res.rounds_hist
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

    def add(self, b: Batch) -> None:
        """Add one batch's counts (where it was played does not matter: every
        count is an integer sum or a slice of its own, so the order in which
        batches arrive changes nothing)."""
        d0 = b.first // 2
        self.pair_points[d0 : d0 + len(b.pair_points)] = b.pair_points
        for name, arr in self.deals.items():
            arr[d0 : d0 + len(b.pair_points)] = b.deal_sums[name]
        self.wins += b.wins
        self.seat_wins += b.seat_wins
        self._grow_rounds(len(b.rounds))
        self.rounds[: len(b.rounds)] += b.rounds
        self.reasons += b.reasons
        if self.cards is not None:
            self.cards += b.cards
        if self.metrics is not None:
            for name, hist in self.metrics.items():
                hist += b.metrics[name]
        if b.games is not None:
            self.games.append((b.first, b.games))

    def result(self) -> RunResult:
        spec = self.spec
        frames = [f for _, f in sorted(self.games, key=lambda x: x[0])]
        return RunResult(
            spec,
            spec.n_games,
            int(self.wins[0]),
            int(self.wins[1]),
            int(self.wins[2]),
            self.seat_wins,
            self.pair_points,
            self.rounds,
            self.reasons,
            self.cards,
            _pl().concat(frames) if frames else None,
            metrics=self.metrics,
            deal_sums={
                name: _narrow_rounds(arr) if name == "rounds" else arr
                for name, arr in self.deals.items()
            },
        )


@dataclass(frozen=True)
class Job:
    """One batch of a run, as only numbers: what a worker needs to play it
    (no config files, no store). ``tag`` is the caller's (which run);
    ``threads`` the numba threads a worker should use (None: its own)."""

    game: str
    rules: np.ndarray
    a: np.ndarray
    b: np.ndarray
    seed: int
    first: int
    n: int
    per_game: bool = False
    tag: int = 0
    threads: int | None = None


@dataclass
class Batch:
    """What one batch of games adds to a run's counts, computed where it was
    played (a Dask worker sends back these few kB, not the per-game arrays).
    ``engine``: the engine version and kernel-sources key it was played with,
    where, and (on an engine's first batch in a process) how long the engine
    took to load or compile."""

    first: int
    pair_points: np.ndarray
    deal_sums: dict[str, np.ndarray]  # per deal (deal_fields), as pair_points
    wins: np.ndarray  # A wins, B wins, draws
    seat_wins: np.ndarray
    rounds: np.ndarray
    reasons: np.ndarray
    cards: np.ndarray | None
    metrics: dict[str, np.ndarray] | None
    games: pl.DataFrame | None
    engine: dict


_SIMULATE = threading.Lock()  # one numba parallel region at a time per process
_LOADED: dict[str, dict] = {}  # engine first use in this process: how it went


def _first_use(game: str, eng, job: Job) -> dict | None:
    """Load (or compile) ``game``'s engine with a two-game warm-up, once per
    process; the note says which, how long, where and from which cache."""
    if game in _LOADED:
        return None
    import numba

    from balance import registry

    compiled_before = game in registry._announced
    t0 = time.perf_counter()
    eng.simulate(job.rules, job.a, job.b, job.seed, 0, 2)
    note = {
        "game": game,
        "seconds": round(time.perf_counter() - t0, 2),
        "compiled": game in registry._announced and not compiled_before,
        "cache": numba.config.CACHE_DIR,
    }
    _LOADED[game] = note
    return note


@cache
def _where() -> str:
    """This process, as a worker's notes name it: host and process id."""
    import socket

    return f"{socket.gethostname()}:{os.getpid()}"


def play_batch(job: Job) -> Batch:
    """Play one batch and count it: the one function every executor runs,
    here or on a worker."""
    from kernels.jit import KERNELS_KEY

    eng = get_game(job.game).engine_module()
    with _SIMULATE:
        note = _first_use(job.game, eng, job)
        if job.threads is not None:
            import numba

            numba.set_num_threads(min(job.threads, numba.config.NUMBA_NUM_THREADS))
        out = eng.simulate(job.rules, job.a, job.b, job.seed, job.first, job.n)
    return count_batch(
        eng,
        job.first,
        out,
        job.per_game,
        {"version": eng.VERSION, "kernels": KERNELS_KEY, "where": _where(), "first_use": note},
    )


def count_batch(eng, first: int, out: dict, per_game: bool = False, engine=None) -> Batch:
    """The counts of one batch's per-game arrays ``out`` (games ``first``
    on), for the engine ``eng``: what :meth:`_Accumulator.add` merges."""
    pts = out["a_points"]
    rounds = np.bincount(out["rounds"])  # the run's histogram grows to fit
    n_cards = getattr(eng, "N_CARDS", 0)
    cards = None
    if n_cards:
        from kernels.aggregate import card_counts

        cards = np.zeros((2, n_cards, len(CARD_FIELDS)), np.int64)
        card_counts(
            n_cards, out["seen_a"], out["played_a"], out["seen_b"], out["played_b"], pts, cards
        )
    sizes = getattr(eng, "METRICS", None)
    metrics = None
    if sizes:
        metrics = {}
        for name, size in sizes.items():
            v = out[name]
            v = np.minimum(v[v >= 0], int(size) - 1)  # -1: undefined (e.g. a draw)
            metrics[name] = np.bincount(v, minlength=int(size)).astype(np.int64)
    games = None
    if per_game:
        cols = dict(out)
        cols["game"] = np.arange(first, first + len(pts))
        games = _pl().DataFrame(cols)
    return Batch(
        first=first,
        pair_points=(pts[0::2] + pts[1::2]).astype(np.uint8),
        deal_sums=count_deals(eng, out),
        wins=np.array([(pts == 2).sum(), (pts == 0).sum(), (pts == 1).sum()], np.int64),
        seat_wins=np.array(
            [(out["winner_seat"] == 0).sum(), (out["winner_seat"] == 1).sum()], np.int64
        ),
        rounds=rounds.astype(np.int64),
        reasons=np.bincount(out["reason"], minlength=len(eng.END_NAMES)).astype(np.int64),
        cards=cards,
        metrics=metrics,
        games=games,
        engine=engine or {},
    )


def command_line() -> str:
    """The command that is running, as a user would type it again."""
    return " ".join(shlex.quote(a) for a in ["balance", *sys.argv[1:]])


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def provenance(game: str) -> dict:
    """What every stored result records about its making: the command, the
    engine and its version, the toolkit's version, the rulings in force and
    the date."""
    g = get_game(game)
    return {
        "command": command_line(),
        "engine": g.engine,
        "engine_version": g.engine_module().VERSION,
        "toolkit_version": __version__,
        "rulings": list(g.ruling_lines()),
        "date": utc_now(),
    }


def run_manifest(spec: RunSpec, elapsed: float, threads: int) -> dict:
    return {
        **provenance(spec.game),
        "config_hash": spec.key,
        "resolved_config": spec.resolved(),
        # the card set's file, when the key names it by digest (not hashed)
        **({"card_set_path": p} if (p := card_set_path(spec.ruleset)) else {}),
        "seed": spec.seed,
        "timings": {"simulate_s": round(elapsed, 3), "threads": threads, **_executor_timing()},
    }


def _executor_timing() -> dict:
    """Where a run was played, when not here (a Dask cluster)."""
    from balance import executor

    ex = executor.current()
    return {} if ex.local else {"executor": ex.describe()}


# 2: one Parquet file per run (run.parquet), plus games.parquet with --per-game;
# 3: run.parquet keeps the per-deal sums (deal_fields). Part of every run's key,
# so a run stored before them is never read for a run of format 3: it lacks
# what the deal-clustered intervals need, and the numbers it does hold are
# the same a replay gives (the games depend on (seed, game) alone), so it is
# simply played again under its new key (docs/architecture.md).
STORE_FORMAT = 3


def _pl():
    """polars, imported on first use: a command that plays games without
    tables (a cached start, ``balance bench``) does not pay for it."""
    import polars

    return polars


def _to_tables(res: RunResult) -> dict:
    """A run's exact aggregates as one single-row table (``run``), with the
    per-deal points and every histogram as list columns: one small file to
    read per run keeps a report over hundreds of runs fast.

    Built as a pyarrow Table (a study writes some 20,000 runs, most of a
    few games, and building the row through polars Series cost more than
    playing them), column by column with ``Table.from_arrays`` and shared
    offsets (:func:`_one_row_offsets`): a third less than ``pa.table`` of a
    dict with fresh offsets, for the same bytes. The per-game table, when
    kept, stays a polars frame."""
    import pyarrow as pa

    i64 = pa.int64()

    def listed(values, typ) -> pa.Array:  # one row holding the list ``values``
        values = _arrow(values, typ)
        return pa.LargeListArray.from_arrays(_one_row_offsets(len(values)), values)

    counts = _arrow(
        [
            res.games,
            res.a_wins,
            res.b_wins,
            res.draws,
            int(res.seat_wins[0]),
            int(res.seat_wins[1]),
        ],
        i64,
    )
    cols = {
        name: counts.slice(k, 1)
        for k, name in enumerate(("games", "a_wins", "b_wins", "draws", "seat0_wins", "seat1_wins"))
    }
    metrics = res.metrics or {}
    cols |= {
        "pair_points": listed(np.asarray(res.pair_points), pa.uint8()),
        "rounds_hist": listed(np.asarray(res.rounds_hist, np.int64), i64),
        "reasons": listed(np.asarray(res.reasons, np.int64), i64),
        "n_cards": pa.nulls(1) if res.cards is None else _arrow([res.cards.shape[1]], i64),
        "cards": listed(
            np.zeros(0, np.int64) if res.cards is None else res.cards.astype(np.int64).ravel(),
            i64,
        ),
        "has_metrics": _arrow([res.metrics is not None], pa.bool_()),
        "metric_names": listed(list(metrics), pa.large_string()),
        "metric_sizes": listed(np.array([len(h) for h in metrics.values()], np.int64), i64),
        "metric_counts": listed(
            np.concatenate(
                [np.asarray(h, np.int64) for h in metrics.values()] + [np.zeros(0, np.int64)]
            ),
            i64,
        ),
        "deal_fields": listed(list(res.deal_sums or {}), pa.large_string()),
    }
    for name, arr in (res.deal_sums or {}).items():  # one list column each, in its own dtype
        cols[f"deal_{name}"] = listed(arr, pa.from_numpy_dtype(_uint(arr.dtype.itemsize)))
    t = {"run": pa.Table.from_arrays(list(cols.values()), names=list(cols))}
    if res.per_game is not None:
        t["games"] = res.per_game
    return t


@lru_cache(maxsize=4096)
def _one_row_offsets(n: int):
    """The offsets of a one-row list column of ``n`` values (shared: pyarrow
    arrays are immutable)."""
    import pyarrow as pa

    return _arrow([0, n], pa.int64())


# Arrays in and out of pyarrow through their buffers. pyarrow's own
# ``pa.array`` and ``Array.to_numpy`` import pandas on first use (to check
# for pandas objects, to set up its converters): 0.35-0.6 s of every process
# that writes or reads a run, most of a small command's start when nothing
# else in it needs pandas. The same arrays, the same Parquet bytes.


def _np_dtype(typ) -> np.dtype:
    """The numpy dtype of a pyarrow integer or floating type."""
    import pyarrow as pa

    if pa.types.is_integer(typ):
        return np.dtype(f"{'i' if pa.types.is_signed_integer(typ) else 'u'}{typ.bit_width // 8}")
    if pa.types.is_floating(typ) and typ.bit_width in (32, 64):
        return np.dtype(f"f{typ.bit_width // 8}")
    raise TypeError(f"a list of {typ}, not of numbers")


def _arrow(values, typ):
    """``values`` as a pyarrow array of type ``typ`` (a number type, bool, or
    large_string for a list of str), built from buffers. Like ``pa.array``,
    a value that ``typ`` cannot hold is an error, never wrapped."""
    import pyarrow as pa

    if pa.types.is_large_string(typ):
        data = [v.encode("utf-8") for v in values]  # a str each, as pa.array requires
        offsets = np.zeros(len(data) + 1, np.int64)
        np.cumsum([len(b) for b in data], out=offsets[1:])
        bufs = [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))]
        return pa.Array.from_buffers(typ, len(data), bufs)
    if pa.types.is_boolean(typ):
        bits = np.packbits(np.asarray(values, bool), bitorder="little")
        return pa.Array.from_buffers(typ, len(values), [None, pa.py_buffer(bits)])
    want = _np_dtype(typ)
    arr = np.asarray(values)
    if arr.dtype != want:
        got = arr.astype(want)
        if arr.size and not np.array_equal(got, arr):
            raise OverflowError(f"values outside {typ}'s range")
        arr = got
    arr = np.ascontiguousarray(arr)
    return pa.Array.from_buffers(typ, len(arr), [None, pa.py_buffer(arr)])


def _numpy(values) -> np.ndarray:
    """A pyarrow array of numbers (a read-only view, as ``to_numpy`` gives)
    or of strings (an object array of str) as numpy; nulls are an error."""
    import pyarrow as pa

    if values.null_count:
        raise ValueError(f"a list of {values.type} holds nulls")
    if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
        return np.array(values.to_pylist(), dtype=object)
    dt = _np_dtype(values.type)
    data = values.buffers()[1]
    if data is None or not len(values):  # an empty list may have no data buffer
        out = np.zeros(0, dt)
    else:
        out = np.frombuffer(data, dt, count=len(values), offset=values.offset * dt.itemsize)
    out.flags.writeable = False
    return out


def _uint(itemsize: int) -> np.dtype:
    """The unsigned integer dtype of ``itemsize`` bytes (1, 2 or 4)."""
    if itemsize not in (1, 2, 4):
        raise KeyError(itemsize)
    return np.dtype(f"u{itemsize}")


def _checked(spec: RunSpec, manifest: dict, scalar, array, per_game) -> RunResult:
    """:func:`_from_row`, then :func:`check_run`: a stored run whose columns
    are missing or of the wrong kind, or whose counts do not add up, is
    :class:`~balance.store.Damaged`."""
    import pyarrow as pa

    try:
        res = _from_row(spec, manifest, scalar, array, per_game)
        eng = get_game(spec.game).engine_module()
        want = deal_fields(eng)
        if res.deal_sums is None or list(res.deal_sums) != list(want):
            raise Damaged(
                f"run.parquet's per-deal sums are {sorted(res.deal_sums or {})}, "
                f"the engine keeps {sorted(want)}"
            )
    except (
        KeyError,
        TypeError,
        ValueError,
        IndexError,
        AttributeError,
        OverflowError,
        pa.ArrowException,
        _pl().exceptions.PolarsError,
    ) as e:
        raise Damaged(f"run.parquet does not hold a run ({type(e).__name__}: {e})"[:200]) from None
    check_run(res)
    # checked in int64; now in the dtypes a run keeps (every value fits: checked)
    res.deal_sums = {
        name: _narrow_rounds(v) if name == "rounds" else v.astype(want[name])
        for name, v in res.deal_sums.items()
    }
    return res


def check_run(res: RunResult) -> None:
    """Raise :class:`~balance.store.Damaged` unless a run's counts add up.

    Game-agnostic: wins and draws make the games, and so do the seat wins
    with the draws, the per-deal points (A's half points), the game-length
    and end-reason histograms; the per-card counters (``card_counts``)
    split the games of each side and card; each score-trace histogram counts
    at most the games; per-game rows, where the run keeps them, agree with
    every count.
    """
    spec, g = res.spec, res.games
    eng = get_game(spec.game).engine_module()

    def fail(what: str):
        raise Damaged(f"run.parquet's counts do not add up ({what})")

    a, b, d = res.a_wins, res.b_wins, res.draws
    if g != spec.n_games:
        fail(f"{g:,} games, the run has {spec.n_games:,}")
    if min(a, b, d) < 0 or a + b + d != g:
        fail(f"{a:,} + {b:,} wins and {d:,} draws of {g:,} games")
    seat = res.seat_wins
    if seat.shape != (2,) or seat.min() < 0 or int(seat.sum()) != a + b:
        fail(f"seat wins {seat.tolist()} for {a + b:,} won games")
    pp = res.pair_points.astype(np.int64)
    if pp.shape != (g // 2,) or (pp.size and (pp.min() < 0 or pp.max() > 4)):
        fail(f"{pp.size:,} deal points for {g // 2:,} deals")
    if int(pp.sum()) != 2 * a + d:
        fail(f"the deal points make {int(pp.sum()):,} half points, the wins {2 * a + d:,}")
    for name, hist, size in (
        ("game lengths", res.rounds_hist, None),
        ("end reasons", res.reasons, len(eng.END_NAMES)),
    ):
        if (
            hist.ndim != 1
            or (size is not None and len(hist) != size)
            or (hist.size and hist.min() < 0)
            or int(hist.sum()) != g
        ):
            fail(f"the {name} count {int(hist.sum()):,} games of {g:,}")
    n_cards = int(getattr(eng, "N_CARDS", 0))
    if (res.cards is None) != (n_cards == 0):
        fail(
            "per-card counters " + ("missing" if res.cards is None else "for a game without cards")
        )
    if res.cards is not None:
        c = res.cards
        if c.shape != (2, n_cards, len(CARD_FIELDS)) or (c.size and c.min() < 0):
            fail(f"per-card counters of shape {c.shape}")
        f = {name: i for i, name in enumerate(CARD_FIELDS)}
        for side, wins in ((0, a), (1, b)):
            s = c[side]
            for cond, what in (
                ((s[:, f["gih_n"]] + s[:, f["gns_n"]] != g), "games with and without a card"),
                ((s[:, f["gih_w"]] + s[:, f["gns_w"]] != wins), "wins with and without a card"),
                ((s[:, f["gih_d"]] + s[:, f["gns_d"]] != d), "draws with and without a card"),
                (
                    (s[:, f["played_w"]] + s[:, f["played_d"]] > s[:, f["played_n"]]),
                    "wins and draws of the games a card was played",
                ),
            ):
                if cond.any():
                    fail(f"side {'AB'[side]}'s {what}")
    if res.metrics is not None:
        names = set(getattr(eng, "METRICS", None) or {})
        if set(res.metrics) != names:
            fail(f"histograms {sorted(res.metrics)}, the engine keeps {sorted(names)}")
        for name, hist in res.metrics.items():
            if hist.ndim != 1 or (hist.size and hist.min() < 0) or int(hist.sum()) > g:
                fail(f"the {name} histogram counts {int(hist.sum()):,} games of {g:,}")
    _check_deal_sums(res, eng)
    if spec.per_game:
        _check_per_game(res)


def _check_deal_sums(res: RunResult, eng) -> None:
    """The per-deal sums (:func:`deal_fields`) agree with the run's totals
    and with its per-deal points, deal by deal where a deal's points say
    something (A's points 2 × wins + draws)."""

    def fail(what: str):
        raise Damaged(f"run.parquet's counts do not add up (per-deal {what})")

    fields = deal_fields(eng)
    if res.deal_sums is None or set(res.deal_sums) != set(fields):
        fail(f"sums {sorted(res.deal_sums or {})}, the engine keeps {sorted(fields)}")
    n = res.games // 2
    x = {k: np.asarray(v).astype(np.int64) for k, v in res.deal_sums.items()}
    for name, v in x.items():
        if v.shape != (n,) or (v.size and v.min() < 0):
            fail(f"{name}: {v.size:,} values for {n:,} deals")
        if name != "rounds" and name not in DEAL_METRICS and v.max(initial=0) > 2:
            fail(f"{name}: more than the deal's two games")
    draws, cap, seat0 = x["draws"], x["round_cap"], x["seat0_wins"]
    pp = res.pair_points.astype(np.int64)
    a_wins2 = pp - draws  # twice A's wins in the deal
    if int(draws.sum()) != res.draws or (a_wins2 % 2).any() or (a_wins2 < 0).any():
        fail("draws")
    if (a_wins2 // 2 > 2 - draws).any():
        fail("draws and A's points")
    names = list(eng.END_NAMES)
    n_cap = int(res.reasons[names.index("round_cap")]) if "round_cap" in names else 0
    if int(cap.sum()) != n_cap or (cap > draws).any():
        fail("round-cap games (each a draw)")
    if int(seat0.sum()) != int(res.seat_wins[0]) or (seat0 > 2 - draws).any():
        fail("first-seat wins")
    h = np.asarray(res.rounds_hist, np.int64)
    if int(x["rounds"].sum()) != int((np.arange(len(h)) * h).sum()):
        fail("game lengths")
    sizes = getattr(eng, "METRICS", None) or {}
    for name in DEAL_METRICS:
        if name not in fields:
            continue
        tot, k, pos = x[name], x[f"{name}_n"], x[f"{name}_pos"]
        if (
            (pos > k).any()
            or (tot > k * (int(sizes[name]) - 1)).any()
            or ((tot > 0) != (pos > 0)).any()
        ):
            fail(f"{name}: values outside the deal's games")
        hist = None if res.metrics is None else res.metrics.get(name)
        if hist is not None:
            hist = np.asarray(hist, np.int64)
            if (
                int(tot.sum()) != int((np.arange(len(hist)) * hist).sum())
                or int(k.sum()) != int(hist.sum())
                or int(pos.sum()) != int(hist[1:].sum())
            ):
                fail(f"{name}: sums that differ from its histogram")


def _check_per_game(res: RunResult) -> None:
    """Per-game rows agree with the run's counts (the outcome columns every
    engine returns: ``a_points``, ``rounds``, ``reason``; and ``game``)."""
    df, g = res.per_game, res.games
    if df is None:
        raise Damaged("games.parquet is missing")

    def fail(what: str):
        raise Damaged(f"games.parquet does not match the run ({what})")

    if df.height != g:
        fail(f"{df.height:,} rows for {g:,} games")
    if sum(df.null_count().row(0)):
        fail("empty cells")
    col = {
        name: df[name].to_numpy()
        for name in ("game", "a_points", "rounds", "reason")
        if name in df.columns
    }
    if len(col) < 4:
        fail(
            "columns "
            + ", ".join(sorted({"game", "a_points", "rounds", "reason"} - set(col)))
            + " missing"
        )
    try:
        if not np.array_equal(col["game"], np.arange(g)):
            fail("game numbers")
        pts = col["a_points"].astype(np.int64)
        if [(pts == 2).sum(), (pts == 0).sum(), (pts == 1).sum()] != [
            res.a_wins,
            res.b_wins,
            res.draws,
        ]:
            fail("wins and draws")
        if not np.array_equal(pts[0::2] + pts[1::2], res.pair_points.astype(np.int64)):
            fail("deal points")
        for name, hist in (("rounds", res.rounds_hist), ("reason", res.reasons)):
            v = col[name].astype(np.int64)
            if v.min(initial=0) < 0 or not np.array_equal(
                np.bincount(v, minlength=len(hist)), hist
            ):
                fail(f"the {name} histogram")
        eng = get_game(res.spec.game).engine_module()
        need = [
            "winner_seat",
            "reason",
            "rounds",
            *(f for f in DEAL_METRICS if f in deal_fields(eng)),
        ]
        if all(c in df.columns for c in need) and res.deal_sums is not None:
            got = count_deals(eng, {c: df[c].to_numpy() for c in need})
            for name, v in got.items():
                if not np.array_equal(
                    v.astype(np.int64), np.asarray(res.deal_sums[name], np.int64)
                ):
                    fail(f"the per-deal {name}")
    except (TypeError, ValueError) as e:
        fail(f"{type(e).__name__}: {e}")


def _from_row(spec: RunSpec, manifest: dict, scalar, array, per_game) -> RunResult:
    """A RunResult from the single-row run table, read through ``scalar(name)``
    and ``array(name)`` (the list columns as numpy)."""
    cards = None
    if scalar("n_cards") is not None:
        cards = array("cards").astype(np.int64).reshape(2, int(scalar("n_cards")), len(CARD_FIELDS))
    metrics = None
    if scalar("has_metrics"):
        counts, sizes = array("metric_counts").astype(np.int64), array("metric_sizes")
        edges = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        metrics = {
            str(name): counts[edges[i] : edges[i + 1]]
            for i, name in enumerate(array("metric_names"))
        }
    # int64 until check_run has seen them (a value too large for its dtype is damage)
    deal_sums = {str(name): array(f"deal_{name}").astype(np.int64) for name in array("deal_fields")}
    return RunResult(
        spec=spec,
        games=int(scalar("games")),
        a_wins=int(scalar("a_wins")),
        b_wins=int(scalar("b_wins")),
        draws=int(scalar("draws")),
        seat_wins=np.array([scalar("seat0_wins"), scalar("seat1_wins")], dtype=np.int64),
        pair_points=array("pair_points").astype(np.uint8),
        rounds_hist=array("rounds_hist").astype(np.int64),
        reasons=array("reasons").astype(np.int64),
        cards=cards,
        per_game=per_game,
        manifest=manifest,
        cached=True,
        metrics=metrics,
        deal_sums=deal_sums,
    )


def progress_mode(wanted: bool = True) -> str:
    """How progress is shown on stderr: ``"bar"`` (a rich bar, on a terminal),
    ``"lines"`` (periodic plain lines: no terminal, e.g. a log file or CI) or
    ``"off"``. ``$BALANCE_PROGRESS`` overrides: ``1``/``bar`` forces the bar,
    ``lines`` the lines (from the start, every 10%), ``0``/``off`` silences both."""
    env = os.environ.get("BALANCE_PROGRESS", "").strip().lower()
    if not wanted or env in ("0", "off", "none"):
        return "off"
    if env in ("1", "bar"):
        return "bar"
    if env == "lines":
        return "lines"
    return "bar" if sys.stderr.isatty() else "lines"


class _Progress:
    """Progress of ``total`` games on stderr, in the way :func:`progress_mode`
    says: a rich bar that appears once the work has run a second, or plain
    lines (``<label>: 120,000 / 1,200,000 games (10%), 12.0 s elapsed, ~1 min
    48 s left``) at every 10% or 30 s, from 2 s on (at once with
    ``$BALANCE_PROGRESS=lines``), and a last one when it is done.

    ``enabled`` is whether the caller wants progress at all (False under
    ``--json`` in some commands); ``clock`` is for the tests."""

    LINE_STEP = 0.10  # a line at every tenth of the work
    LINE_EVERY_S = 30.0  # or after this long without one
    LINE_AFTER_S = 2.0  # nothing for work that is over sooner (automatic mode)

    def __init__(
        self, total: int, label: str, enabled: bool, clock=time.perf_counter, unit: str = "games"
    ):
        self.total = total
        self.label = label
        self.unit = unit
        self.mode = progress_mode(enabled) if total > 0 else "off"
        self.enabled = self.mode != "off"
        self.clock = clock
        self.start = clock()
        self.done = 0
        self.bar = None
        self.task = None
        self.forced = os.environ.get("BALANCE_PROGRESS", "").strip().lower() == "lines"
        self.lines = 0  # lines printed
        self.last_t = self.start
        self.last_step = 0  # tenths reported so far

    def _line(self, now: float, final: bool = False) -> None:
        from balance.fmt import fmt_seconds

        elapsed = now - self.start
        frac = self.done / self.total
        text = (
            f"{self.label}: {self.done:,} / {self.total:,} {self.unit} ({frac:.0%}), "
            f"{fmt_seconds(elapsed)} elapsed"
        )
        if final and self.done >= self.total:
            text = f"{self.label}: {self.done:,} {self.unit} done in {fmt_seconds(elapsed)}"
        elif final:  # stopped early (an error, Ctrl-C)
            text = f"{self.label}: stopped at {self.done:,} / {self.total:,} {self.unit}"
        elif 0 < frac < 1:
            text += f", ~{fmt_seconds(elapsed * (1 - frac) / frac)} left"
        print(text, file=sys.stderr, flush=True)
        self.lines += 1
        self.last_t = now

    def advance(self, n: int) -> None:
        self.done += n
        if self.mode == "lines":
            now = self.clock()
            step = int(self.done / self.total / self.LINE_STEP + 1e-9)
            if (
                step > self.last_step or now - self.last_t >= self.LINE_EVERY_S
            ) and self.done < self.total:
                if self.forced or now - self.start >= self.LINE_AFTER_S:
                    self._line(now)
                self.last_step = step
            return
        if self.mode != "bar":
            return
        if self.bar is None and self.clock() - self.start > 1.0:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
            )

            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn(self.unit),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self.bar.start()
            self.task = self.bar.add_task(self.label, total=self.total)
        if self.bar is not None:
            self.bar.update(self.task, completed=self.done)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
        if self.mode == "lines" and self.lines and self.done:
            self._line(self.clock(), final=True)


def simulate_run(
    spec: RunSpec, batch_size: int = DEFAULT_BATCH, progress=None, start: RunResult | None = None
) -> RunResult:
    """Play one run in batches (no store) on the current executor;
    ``progress`` gets ``advance(n)``.

    With ``start``, a finished run of the same config over fewer games, only
    the games it lacks are played: game i of a seed is the same game at any
    run size, so the merged counts equal a run played from scratch.
    """
    return simulate_runs([spec], batch_size, progress, {0: start} if start is not None else {})[0]


def simulate_runs(
    specs: list[RunSpec], batch_size: int = DEFAULT_BATCH, progress=None, extend=None
) -> list[RunResult]:
    """:func:`simulate_run` for several runs at once (on a cluster, side by
    side), in the order given; ``extend[i]`` continues spec ``i``."""
    done: dict[int, RunResult] = {}
    play_runs(
        specs, batch_size, progress, extend or {}, lambda i, res, _s: done.__setitem__(i, res)
    )
    return [done[i] for i in range(len(specs))]


def play_runs(
    specs: list[RunSpec],
    batch_size: int,
    progress,
    extend: dict,
    finished: Callable[[int, RunResult, float], None],
    threads: int | None = None,
) -> None:
    """Play every spec's batches on the current executor
    (:func:`balance.executor.current`) and call ``finished(i, result,
    seconds)`` as each run completes (in the order runs complete: on a cluster, not the order
    given). ``extend[i]``: a finished smaller run spec ``i`` continues.
    ``threads`` is passed to workers (a local run has set its own)."""
    from balance import executor

    if batch_size <= 0 or batch_size % 2:
        raise UserError(f"--batch-size must be a positive even number, got {batch_size}")
    ex = executor.current()
    accs: dict[int, _Accumulator] = {}
    left: dict[int, int] = {}
    started: dict[int, float] = {}
    jobs: list[Job] = []
    # each rules and side object's kernel vector, made once per call: a call's
    # specs share a few of them (the Trisk power test: a hundred runs, one
    # ruleset, a few decks), and making one reads its card set and encodes it.
    # By id: ``specs`` holds every object for the whole call, so no id is reused
    vectors: dict[int, np.ndarray] = {}

    def vector(obj) -> np.ndarray:
        v = vectors.get(id(obj))
        if v is None:
            v = vectors[id(obj)] = obj.vector()
        return v

    for i, spec in enumerate(specs):
        eng = get_game(spec.game).engine_module()
        acc = accs[i] = _Accumulator(spec, eng)
        begin = 0
        start = extend.get(i)
        if start is not None:
            if replace(start.spec, n_games=spec.n_games) != spec or start.games > spec.n_games:
                raise ValueError("can only extend a smaller run of the same config")
            begin = start.games
            acc.merge(start)
        rules, va, vb = vector(spec.ruleset), vector(spec.a), vector(spec.b)
        firsts = range(begin, spec.n_games, batch_size)
        left[i] = len(firsts)
        jobs += [
            Job(
                spec.game,
                rules,
                va,
                vb,
                spec.seed,
                first,
                min(batch_size, spec.n_games - first),
                spec.per_game,
                i,
                None if ex.local else threads,
            )
            for first in firsts
        ]
    last = time.perf_counter()  # when the previous batch came in

    def finish(i: int) -> None:
        finished(i, accs.pop(i).result(), time.perf_counter() - started.get(i, last))

    for i in [i for i, k in left.items() if k == 0]:  # nothing left to play
        finish(i)
    with phases.phase("simulate"):
        _play_jobs(ex, jobs, accs, left, started, progress, finish)


def _play_jobs(ex, jobs, accs, left, started, progress, finish) -> None:
    last = time.perf_counter()
    for job, batch in ex.play(jobs, play_batch):
        # a run's time starts when its first batch began: here, when the batch
        # before it came in (on a cluster, an upper bound on its own time)
        started.setdefault(job.tag, last)
        last = time.perf_counter()
        accs[job.tag].add(batch)
        if progress is not None:
            progress.advance(job.n)
        left[job.tag] -= 1
        if left[job.tag] == 0:
            finish(job.tag)


@phases.timed("store")
def save_run(store: Store, res: RunResult) -> None:
    """Write a finished run (its manifest set) to the store."""
    store.save(res.spec.game, res.key, res.manifest, _to_tables(res))


def run_many(
    specs: list[RunSpec],
    *,
    store: Store | None = None,
    threads: int | None = None,
    batch_size: int = DEFAULT_BATCH,
    progress: bool = True,
    label: str = "simulating",
    extend: dict | None = None,
    store_only: bool = False,
) -> list[RunResult]:
    """Run (or read from the store) every spec, with one progress bar for all.

    ``extend`` maps a spec's index to a finished smaller run of the same
    config, which the new run continues instead of starting over. With
    ``store_only``, nothing is simulated: a run missing from the store is a
    user error (a report is built from stored runs only).
    """
    extend = extend or {}
    requested = threads
    threads = set_threads(threads)
    results: list[RunResult | None] = [None] * len(specs)
    todo = []
    for i, spec in enumerate(specs):
        # a damaged entry is reported, set aside and simulated again (store_only: an error)
        loaded = (
            store.load(
                spec.game,
                spec.key,
                recompute=not store_only,
                parse=lambda m, t, spec=spec: _from_bytes(spec, m, t),
                raw=True,
            )
            if store is not None
            else None
        )
        if loaded is not None:
            results[i] = loaded
        else:
            todo.append(i)
    if store_only and todo:
        s = specs[todo[0]]
        raise UserError(
            f"{len(todo)} of the {len(specs)} runs this needs are not in the store "
            f"{store.root if store is not None else ''} (first: {s.game} {s.ruleset.name}, "
            f"{s.a.name} vs {s.b.name}, {s.n_games:,} games, seed {s.seed}); "
            "run `balance study` (or the command that makes them) first"
        )
    bar = _Progress(
        sum(specs[i].n_games - (extend[i].games if i in extend else 0) for i in todo),
        label,
        progress,
    )

    def finished(k: int, res: RunResult, elapsed: float) -> None:  # saved once complete
        i = todo[k]
        res.manifest = run_manifest(specs[i], elapsed, threads)
        if store is not None:
            save_run(store, res)
        results[i] = res

    try:
        if todo:
            play_runs(
                [specs[i] for i in todo],
                batch_size,
                bar,
                {k: extend[i] for k, i in enumerate(todo) if i in extend},
                finished,
                threads=requested,
            )
    finally:
        bar.close()
    for i, res in enumerate(results):
        if res is not None:
            played = 0 if res.cached else res.games - (extend[i].games if i in extend else 0)
            for t in _TALLIES:
                t.add(res, played, store)
    return results  # type: ignore[return-value]


# ---- what a command played: a tally of run_many's work ------------------------
_TALLIES: list[Tally] = []


@dataclass
class Tally:
    """The runs :func:`run_many` played or read while the tally was open
    (:func:`tally`): what a command says it did in its last line."""

    simulated_runs: int = 0
    simulated_games: int = 0  # games played now (a run extended: only the new ones)
    read_runs: int = 0
    read_games: int = 0
    seeds: set = field(default_factory=set)
    stores: dict = field(default_factory=dict)  # folder -> True if a run was written there

    def add(self, res: RunResult, played: int, store: Store | None) -> None:
        self.seeds.add(res.spec.seed)
        if res.cached:
            self.read_runs += 1
            self.read_games += res.games
        else:
            self.simulated_runs += 1
            self.simulated_games += played
        if store is not None:
            folder = store.root / res.spec.game
            self.stores[folder] = self.stores.get(folder, False) or not res.cached

    def merge(self, other: Tally) -> None:
        """Add what another process's tally saw (the study's parts run in
        worker processes)."""
        self.simulated_runs += other.simulated_runs
        self.simulated_games += other.simulated_games
        self.read_runs += other.read_runs
        self.read_games += other.read_games
        self.seeds |= other.seeds
        for folder, wrote in other.stores.items():
            self.stores[folder] = self.stores.get(folder, False) or wrote

    @property
    def runs(self) -> int:
        return self.simulated_runs + self.read_runs

    def line(self) -> str:
        """``simulated 300,000 games in 15 runs (seed 1); stored in results/clash``,
        or what was read from the store; "" when nothing was played or read."""
        if not self.runs:
            return ""
        seeds = sorted(self.seeds)
        seed = (
            f"seed {seeds[0]}"
            if len(seeds) == 1
            else f"seeds {', '.join(map(str, seeds))}"
            if len(seeds) <= 3
            else f"{len(seeds):,} seeds"
        )

        def runs(k: int) -> str:
            return f"{k:,} run{'' if k == 1 else 's'}"

        parts = []
        if self.simulated_runs:
            parts.append(f"simulated {self.simulated_games:,} games in {runs(self.simulated_runs)}")
        if self.read_runs:
            parts.append(f"read {runs(self.read_runs)} ({self.read_games:,} games) from the store")
        else:
            parts.append("nothing read from the store")
        text = f"{', '.join(parts)} ({seed})"
        written = [str(f) for f, w in self.stores.items() if w]
        if written:
            text += f"; stored in {', '.join(written)}"
        elif self.stores:
            text += f"; store: {', '.join(str(f) for f in self.stores)}; nothing simulated"
        elif self.simulated_runs:
            text += "; not stored"
        return text


def merge_tally(other: Tally) -> None:
    """Add ``other`` (a worker process's tally) to every tally open here."""
    for t in _TALLIES:
        t.merge(other)


class tally:
    """``with runner.tally() as t: ...; t.line()``: what the runs played
    inside the block did (nested tallies each see every run)."""

    def __enter__(self) -> Tally:
        self.t = Tally()
        _TALLIES.append(self.t)
        return self.t

    def __exit__(self, *exc) -> None:
        _TALLIES.remove(self.t)


def load_run(folder, spec: RunSpec, stored: tuple[dict, dict | None] | None = None) -> RunResult:
    """A stored run from its folder, checked (its files against the
    manifest's checksums, its counts by :func:`check_run`); raises
    :class:`~balance.store.Damaged` when it cannot be trusted. Nothing is
    moved: a report only reads. ``stored``: what
    :func:`~balance.store.read_manifest` gave for the folder, if read already."""
    from pathlib import Path

    folder = Path(folder)
    manifest, files = stored if stored is not None else read_manifest(folder)
    return _from_bytes(spec, manifest, read_files(folder, files))


def _from_bytes(spec: RunSpec, manifest: dict, data: dict[str, bytes]) -> RunResult:
    """A checked RunResult from a stored entry's table files (their bytes, by
    name); raises :class:`~balance.store.Damaged` when they cannot be trusted.
    ``run.parquet`` is read with pyarrow directly: about twice as fast per
    file as through a DataFrame, and a report or a study reads thousands."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if "run" not in data:
        raise Damaged("run.parquet is missing")
    try:
        tb = pq.ParquetFile(pa.BufferReader(data["run"])).read(use_threads=False)
    except Exception:  # noqa: BLE001 (pyarrow raises many kinds on garbage)
        raise Damaged("run.parquet is unreadable (garbage or truncated)") from None
    if tb.num_rows != 1:
        raise Damaged(f"run.parquet holds {tb.num_rows} rows, not one")
    per_game = parse_parquet("games", data["games"]) if "games" in data else None

    def array(name):
        return _numpy(tb.column(name).chunk(0).values)

    return _checked(spec, manifest, lambda name: tb.column(name)[0].as_py(), array, per_game)
