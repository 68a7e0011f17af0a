"""Where batches of games are played: here, or on a Dask cluster.

Every command that plays games hands its batches (:class:`balance.runner.Job`:
only numbers) to the current executor, with the function that plays one
(:func:`balance.runner.play_batch`: passed in, so this module never imports
the runner that imports it), and merges what comes back
(:class:`balance.runner.Batch`: exact counts). Game *i* of a seed draws from
streams named by (seed, i) alone and every count merges by integer sums, so
the numbers do not depend on where, in what order or in what task size the
batches were played.

- ``local`` (the default): batches one after the other in this process, each
  on all its numba threads.
- ``dask``: a running ``dask.distributed`` scheduler (``--scheduler
  tcp://host:8786`` or ``$BALANCE_SCHEDULER``); its workers need the same
  ``balance`` installed (a worker with other engine code is refused).
- ``dask-local``: a ``LocalCluster`` of ``--workers`` worker processes on this
  machine, started for the command and stopped after it.

Dask re-runs the tasks of a worker that dies (each batch's result is taken
once), and the runner saves each run to the store as soon as its last batch
is in, so an interrupted command, run again, reads the finished runs back.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from functools import partial

from balance.errors import EnvironmentFailure, UserError

EXECUTORS = ("local", "dask", "dask-local")
SCHEDULER_ENV = "BALANCE_SCHEDULER"
CONNECT_TIMEOUT_S = 10


class Local:
    """Batches here, one after the other (each on all numba threads)."""

    local = True
    name = "local"

    def describe(self) -> str:
        return "local"

    def play(self, jobs: Iterable, play: Callable) -> Iterator:
        """``(job, play(job))`` for each job, in order."""
        for job in jobs:
            yield job, play(job)


class Dask:
    """Batches as Dask tasks on ``client``'s cluster; results as they finish."""

    local = False

    def __init__(self, client, name: str, cluster=None):
        self.client = client
        self.name = name
        self.cluster = cluster
        self.announced: set[tuple[str, str]] = set()
        self._label: str | None = None

    def workers(self) -> int:
        return len(self.client.scheduler_info(n_workers=-1)["workers"])

    def describe(self) -> str:
        """What a run's manifest records: asked of the scheduler once, not per run."""
        if self._label is None:
            n = self.workers()
            self._label = (
                f"{self.name} ({n} worker{'' if n == 1 else 's'} at "
                f"{self.client.scheduler.address})"
            )
        return self._label

    def check(self, job, batch) -> None:
        """Refuse a batch played with other engine code; announce, once per
        worker process and game, how its engine was loaded."""
        from balance.registry import get_game
        from kernels.jit import KERNELS_KEY

        e = batch.engine
        if (
            e["kernels"] != KERNELS_KEY
            or e["version"] != get_game(job.game).engine_module().VERSION
        ):
            raise UserError(
                f"the Dask worker {e['where']} plays with other engine code (kernels "
                f"{e['kernels']}, here {KERNELS_KEY}); install the same balance on every "
                "worker (docs/distributed.md)"
            )
        note = e.get("first_use")
        if note is not None and (e["where"], note["game"]) not in self.announced:
            self.announced.add((e["where"], note["game"]))
            how = (
                f"compiled the {note['game']} engine in {note['seconds']:.1f} s (nothing in its "
                f"cache {note['cache']}; a shared $NUMBA_CACHE_DIR saves this)"
                if note["compiled"]
                else f"loaded the {note['game']} engine from its cache in {note['seconds']:.1f} s"
            )
            print(f"dask worker {e['where']} {how}", file=sys.stderr, flush=True)

    SHARED_BYTES = 4096  # a larger vector goes to the cluster once, not with every task

    def _shared(self, jobs: list) -> tuple[list, list, list]:
        """Each job's rules and strategy vectors. One large enough (a card
        set's table in the rules) is sent once, as a task of its own that
        returns it, and the batches name that task: the scheduler holds it,
        so if the worker keeping its result dies it is simply run again
        (data scattered to a worker would be lost with it)."""
        big = {}
        for j in jobs:
            for v in (j.rules, j.a, j.b):
                if v.nbytes > self.SHARED_BYTES and id(v) not in big:
                    big[id(v)] = self.client.submit(_same, v, pure=False)
        return tuple(
            [big.get(id(getattr(j, f)), getattr(j, f)) for j in jobs] for f in ("rules", "a", "b")
        )

    STALL_S = 30.0  # no batch reported finished for this long: ask the scheduler

    def play(self, jobs: Iterable, play: Callable) -> Iterator:
        """``(job, play(job))`` for each job, as the tasks finish; ``play`` must be
        a module-level function (a worker imports it by name).

        The futures are waited on in rounds of :attr:`STALL_S` seconds. A round
        in which none is reported finished asks the scheduler which of them it
        holds in memory, and takes those results from their workers: a client
        can miss the report of a finished task (seen once under heavy load: the
        task in memory on the scheduler, the client's future pending for 20
        minutes), and without this the command would wait for ever."""
        from distributed import KilledWorker, wait

        jobs = list(jobs)
        if not jobs:
            return
        parts = self._shared(jobs)
        futures = self.client.map(
            partial(_play_parts, play),
            [replace(j, rules=None, a=None, b=None) for j in jobs],
            *parts,
            pure=False,
        )
        job_of = {f.key: j for f, j in zip(futures, jobs, strict=True)}
        pending = set(futures)
        try:
            while pending:
                try:
                    done = wait(
                        list(pending), timeout=self.STALL_S, return_when="FIRST_COMPLETED"
                    ).done
                    results = {f.key: _result(f) for f in done}
                except TimeoutError:
                    results = self._missed(pending)
                    done = {f for f in pending if f.key in results}
                for fut in done:
                    pending.discard(fut)
                    batch = results[fut.key]
                    self.check(job_of[fut.key], batch)
                    yield job_of[fut.key], batch
        except KilledWorker as e:  # a batch took workers down with it, again and again
            raise EnvironmentFailure(
                f"a batch was lost with every Dask worker that tried it ({e}); finished runs "
                "are in the store: run the command again to go on"
            ) from None
        finally:
            if pending:  # stopped early (an error, Ctrl-C): free the cluster
                self.client.cancel(list(pending))

    def _missed(self, pending: set) -> dict:
        """The results of the ``pending`` futures that the scheduler holds in
        memory although this client has not been told (each fetched from a
        worker that holds it); {} when none."""
        keys = [f.key for f in pending]
        held = self.client.run_on_scheduler(_held, keys=keys)
        out = {}
        for key, worker in held.items():
            got = self.client.run(_stored, key, workers=[worker])
            if worker in got:
                out[key] = got[worker]
        return out


def _result(fut):
    """A finished future's batch; a cancelled one (the cluster dropped it) is
    an :class:`EnvironmentFailure`, an erred one raises its error."""
    if fut.status == "cancelled":
        raise EnvironmentFailure(
            "the Dask cluster dropped a batch (cancelled); finished runs are in the store: "
            "run the command again to go on"
        )
    return fut.result()


def _held(keys, dask_scheduler=None) -> dict:
    """On the scheduler: for each of ``keys`` it holds in memory, one worker
    that has it."""
    out = {}
    for key in keys:
        ts = dask_scheduler.tasks.get(key)
        if ts is not None and ts.state == "memory" and ts.who_has:
            out[key] = next(iter(ts.who_has)).address
    return out


def _stored(key, dask_worker=None):
    """On a worker: the result it holds under ``key``."""
    return dask_worker.data[key]


def _same(x):
    """A Dask task that returns what it was given (a vector many batches share)."""
    return x


def _play_parts(play, job, rules, a, b):
    """A Dask task: ``play`` the job with its vectors put back (sent on their own)."""
    return play(replace(job, rules=rules, a=a, b=b))


_STACK: list = [Local()]


def current():
    """The executor the runner plays on now."""
    return _STACK[-1]


@contextmanager
def using(ex):
    """Play on ``ex`` inside the block."""
    _STACK.append(ex)
    try:
        yield ex
    finally:
        _STACK.remove(ex)


def choose(name: str | None, scheduler: str | None, workers: int | None) -> str:
    """Which executor the options ask for (checked before anything starts):
    ``--executor`` if given, else ``dask`` when a scheduler is named
    (``--scheduler`` or ``$BALANCE_SCHEDULER``), else ``local``."""
    env = os.environ.get(SCHEDULER_ENV, "").strip()
    if name is None:
        name = "dask" if (scheduler or env) else ("dask-local" if workers else "local")
    name = name.strip().lower()
    if name not in EXECUTORS:
        raise UserError(f"--executor must be one of {', '.join(EXECUTORS)}, got '{name}'")
    if scheduler and name != "dask":
        raise UserError(f"--scheduler is for --executor dask, not {name}")
    if workers is not None and name != "dask-local":
        raise UserError(
            f"--workers is for --executor dask-local (a dask cluster has its own), not {name}"
        )
    if workers is not None and workers < 1:
        raise UserError(f"--workers must be at least 1, got {workers}")
    if name == "dask" and not (scheduler or env):
        raise UserError(
            f"--executor dask needs a scheduler: --scheduler tcp://host:8786 or ${SCHEDULER_ENV}"
        )
    return name


@contextmanager
def opened(
    name: str | None = None,
    scheduler: str | None = None,
    workers: int | None = None,
    threads: int | None = None,
):
    """Play on the executor the options name inside the block: connect to
    the scheduler, or start a ``LocalCluster`` and stop it after."""
    name = choose(name, scheduler, workers)
    if name == "local":
        yield current()
        return
    try:
        from distributed import Client, LocalCluster
    except ImportError:  # pragma: no cover (a dependency)
        raise UserError(
            "the Dask executors need dask.distributed: pip install 'dask[distributed]'"
        ) from None
    cluster = None
    if name == "dask":
        address = scheduler or os.environ[SCHEDULER_ENV].strip()
        try:
            client = Client(address, timeout=f"{CONNECT_TIMEOUT_S}s")
        except (OSError, TimeoutError, ValueError) as e:
            reason = str(e).splitlines()[0][:160] if str(e) else type(e).__name__
            raise UserError(
                f"cannot reach the Dask scheduler at {address} ({reason}); start one with "
                "`dask scheduler` and workers with `dask worker` (docs/distributed.md)"
            ) from None
    else:
        n = workers or os.cpu_count() or 1
        per = threads or max(1, (os.cpu_count() or 1) // n)
        cluster = LocalCluster(
            n_workers=n,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",  # any free port: never a clash
            silence_logs=logging.CRITICAL,  # a worker closing mid-heartbeat is not news
            env={"NUMBA_NUM_THREADS": str(per)},
        )
        client = Client(cluster)
    try:
        with using(Dask(client, name, cluster)) as ex:
            yield ex
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
