"""Shared test configuration: the markers that make a fast inner loop.

- ``browser``: drives headless Chromium (tests/report/test_browser.py).
- ``subprocess``: starts the installed ``balance`` command in a fresh process
  (a cold start each: imports, the numba cache).
- ``slow``: everything above, plus the tests that play many games, simulate
  a procedure many times or build whole studies (marked where they are
  written).

``pytest -m "not slow"`` is the inner loop; ``.ci/run`` runs everything.
"""

from __future__ import annotations

import functools
import inspect

import pytest

_SUBPROCESS_CALLS = ("run_cli(", "subprocess.run(", "subprocess.Popen(", "_start(", " ok(")


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
    for item in items:
        if item.module is not None and item.module.__name__.endswith("test_browser"):
            item.add_marker(pytest.mark.browser)
        if _starts_a_process(item):
            item.add_marker(pytest.mark.subprocess)
        if item.get_closest_marker("browser") or item.get_closest_marker("subprocess"):
            item.add_marker(pytest.mark.slow)


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
