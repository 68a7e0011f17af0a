"""Shared test configuration: the markers that make a fast inner loop.

- ``browser``: drives headless Chromium (tests/report/test_browser.py).
- ``subprocess``: starts the installed ``balance`` command in a fresh process
  (a cold start each: imports, the numba cache).
- ``slow``: everything above, plus the tests that play many games, simulate
  a procedure many times or build whole studies (marked where they are
  written).

``pytest -m "not slow"`` is the inner loop; ``.ci/run`` runs everything.

Parallel by default: with pytest-xdist installed and no ``-n`` given, the run
uses ``-n auto`` (one worker per core, at most :data:`MAX_WORKERS`) and
``--dist loadfile`` (a test file's tests all go to one worker, so its module
fixtures, often a store played through the command, are built once).
``-n 0`` or ``-p no:xdist`` runs in this one process, ``--pdb`` too. The
controller compiles every engine into the shared numba cache before the
workers start (:func:`balance.warmup.ensure`), one process per engine, so
that two workers never compile the same kernels at once on a cold cache; and
the workers take the costliest files first (:data:`COSTLIEST`) so that no
long file starts last while the other worker idles.
"""

from __future__ import annotations

import functools
import inspect
import os

import pytest

MAX_WORKERS = 4  # more workers than this rebuild more module fixtures than they save


def _xdist(config: pytest.Config) -> bool:
    return config.pluginmanager.hasplugin("xdist") and hasattr(config.option, "numprocesses")


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """``-n auto --dist loadfile`` unless ``-n`` (or ``--dist``, or ``--pdb``,
    or ``--collect-only``) says otherwise; a worker leaves its options alone."""
    if not _xdist(config) or hasattr(config, "workerinput"):
        return
    o = config.option
    if o.numprocesses is None and not o.usepdb and not o.collectonly and o.dist == "no":
        o.numprocesses = "auto"
        o.dist = "loadfile"
        # xdist hands out the files with the most tests first; ours go costliest
        # first (:func:`_costliest_first`), so keep the order the workers collected
        o.loadscopereorder = False


@pytest.hookimpl(optionalhook=True)  # a hook of xdist: unknown under -p no:xdist
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """One worker per core, at most :data:`MAX_WORKERS` (and at least one)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_WORKERS))


_PYC_PREFIX: list[str] = []  # the session's bytecode folder, removed at its end
_PYC_ENV = "BALANCE_TESTS_PYC"  # names it to the session's processes


def pytest_configure(config: pytest.Config) -> None:
    """Where ``$PYTHONDONTWRITEBYTECODE`` is set (as on our CI's machines), every
    process the tests start (the hundreds of ``balance`` commands) compiles
    every module it imports from source, the toolkit's own included: 0.2 s
    of a 1.5 s command that stops at a user mistake. In the controller of the
    session, before any worker starts: a bytecode folder of this session's
    own, removed when the session ends, which the processes that run tests
    hand to the processes they start (:func:`_share_bytecode`). A prefix the
    user set is left alone, and so is the checkout (nothing is written
    beside the sources)."""
    if hasattr(config, "workerinput") or not os.environ.get("PYTHONDONTWRITEBYTECODE"):
        return
    if os.environ.get("PYTHONPYCACHEPREFIX"):
        return
    import tempfile

    _PYC_PREFIX.append(tempfile.mkdtemp(prefix="balance-tests-pyc-"))
    os.environ[_PYC_ENV] = _PYC_PREFIX[0]


def _share_bytecode(config: pytest.Config) -> None:
    """In a process that runs tests (a worker, or the one process of ``-n 0``):
    the processes it starts write and read compiled modules in the session's
    folder (``$PYTHONPYCACHEPREFIX``). Not the workers themselves: a prefix
    is the only place Python then looks, and a worker that started with one
    compiled numpy, pandas, scipy and the rest from source where pip's
    compiled files lay unused (the fast tier took 40-45 s, not 14-18)."""
    folder = os.environ.get(_PYC_ENV)
    if folder and not config.pluginmanager.has_plugin("dsession"):  # dsession: the controller
        os.environ["PYTHONPYCACHEPREFIX"] = folder
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def pytest_unconfigure(config: pytest.Config) -> None:
    if _PYC_PREFIX:
        import shutil

        shutil.rmtree(_PYC_PREFIX.pop(), ignore_errors=True)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """In a process that runs tests: :func:`_share_bytecode`. In the controller
    of a parallel run, before its workers start: compile every cold engine
    once, in parallel processes, into the shared cache (on a warm cache this
    only checks the markers)."""
    config = session.config
    _share_bytecode(config)
    if not _xdist(config) or hasattr(config, "workerinput"):
        return
    if not config.option.numprocesses or config.option.collectonly:
        return
    from balance import warmup
    from balance.registry import GAMES

    tr = config.pluginmanager.get_plugin("terminalreporter")
    warmup.ensure(list(GAMES), say=tr.write_line if tr else None)


# The files that take longest in a full run (seconds each: setup, call and
# teardown summed per file). Issue 46 round 4: from ``pytest --durations=0`` on
# a 2-core VM (numba cache warm, little else running), the two files that need
# Chromium run the same way on their own: 2,035 s in all on that VM, which
# ran the study 1.58 times as long as round 3's (CI ran round 3's suite in
# 756 s). A worker of a parallel run takes them first, longest first: the
# last files to start are then short ones, and neither worker waits long for
# the other at the end. A stale figure costs only balance, never a test.
COSTLIEST = {
    "tests/core/test_oracle_power.py": 240,  # the default oracle once on each engine
    "tests/report/test_page_limits.py": 152,
    "tests/core/test_study_parallel.py": 141,  # five small studies, two benches
    "tests/games/trisk/test_trisk_power.py": 139,  # builds tiny_power_local
    "tests/report/test_report_pipeline.py": 127,
    "tests/report/test_report_every_command.py": 114,
    "tests/store/test_store_integrity.py": 102,
    "tests/games/trisk/test_trisk_power_errors.py": 86,
    "tests/cli/test_cli_fuzz.py": 83,
    "tests/stats/test_score_coverage.py": 83,
    "tests/core/test_overwrite.py": 72,
    "tests/report/test_browser.py": 63,
    "tests/games/trisk/test_trisk_decks.py": 58,
    "tests/games/trisk/test_trisk_fast.py": 57,
    "tests/games/clash/test_clash_cli.py": 56,
    "tests/core/test_wheel.py": 47,
    "tests/core/test_repair_faults.py": 42,
    "tests/core/test_equilibrium.py": 42,
    "tests/store/test_store_keys.py": 40,
    "tests/cli/test_cli.py": 39,
    "tests/core/test_warmup.py": 36,
}


def _costliest_first(items: list[pytest.Item]) -> None:
    """Reorder ``items`` file by file, the costliest files first (a stable sort:
    the tests of a file keep their order, the other files theirs)."""
    from tests import ROOT

    def cost(item: pytest.Item) -> float:
        try:
            rel = item.path.resolve().relative_to(ROOT).as_posix()
        except ValueError:
            return 0.0
        return COSTLIEST.get(rel, 0.0)

    items.sort(key=lambda item: -cost(item))


_SUBPROCESS_CALLS = ("run_cli(", " cli(", "subprocess.run(", "subprocess.Popen(", "_start(", " ok(")


@functools.cache
def _source(fn) -> str:
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):
        return ""


def _starts_a_process(item: pytest.Item) -> bool:
    """The test, or a fixture it uses, starts a process (a fixture that runs
    the command once for a module's tests counts for each of them)."""
    fn = getattr(item, "function", None)
    if fn is None:
        return False
    sources = [_source(fn)]
    info = getattr(item, "_fixtureinfo", None)
    for defs in info.name2fixturedefs.values() if info else ():
        sources += [_source(d.func) for d in defs]
    return any(call in src for src in sources for call in _SUBPROCESS_CALLS)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if hasattr(config, "workerinput"):  # a worker of a parallel run; -n 0 keeps the order
        _costliest_first(items)
    for item in items:
        if item.module is not None and item.module.__name__.endswith("test_browser"):
            item.add_marker(pytest.mark.browser)
        if _starts_a_process(item):
            item.add_marker(pytest.mark.subprocess)
        if item.get_closest_marker("browser") or item.get_closest_marker("subprocess"):
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def no_gc(monkeypatch):
    """``gc.collect()`` does nothing for the test. statsmodels' ``multipletests``
    (Holm) calls it on every call: 0.05-0.25 s with a test session's heap, and
    it changes no number. For tests that call it hundreds of times."""
    import gc

    monkeypatch.setattr(gc, "collect", lambda *args: 0)


@pytest.fixture(scope="module")
def toy():
    """High Card, the toy fifth game (``tests/toygame``), registered for a
    module's tests and unregistered after them."""
    from balance.registry import register, unregister
    from tests.core.test_toy_game import TOY

    register(TOY)
    try:
        yield TOY
    finally:
        unregister(TOY.name)


@pytest.fixture(scope="module")
def dask_cluster():
    """A Dask ``LocalCluster`` for a module's tests, and its client: two
    worker processes, one numba thread each (what ``--executor dask-local
    --workers 2`` starts on a 2-core machine)."""
    import logging

    from distributed import Client, LocalCluster

    c = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",  # any free port: never a clash
        silence_logs=logging.ERROR,
        env={"NUMBA_NUM_THREADS": "1"},
    )
    client = Client(c)
    yield c, client
    client.close()
    c.close()


@pytest.fixture
def on_dask(dask_cluster):
    """Play on :func:`dask_cluster` inside the test (both workers up)."""
    from balance import executor

    c, client = dask_cluster
    client.wait_for_workers(2, timeout=60)
    with executor.using(executor.Dask(client, "dask-local", c)) as ex:
        yield ex
