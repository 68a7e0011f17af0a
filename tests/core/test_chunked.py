"""``kernels.jit.chunked``: the threads that play an engine's chunks of games."""

import numba
import numpy as np
import pytest

from kernels.jit import chunked


@chunked
def _mark(c0, c1, out, hits):
    """Each chunk c writes its own row: c squared, and counts its visits."""
    for c in range(c0, c1):
        out[c] = c * c
        hits[c] += 1


@chunked
def _fail_at(c0, c1, bad):
    for c in range(c0, c1):
        if c == bad:
            raise ValueError("chunk failed")


def _run(n_chunks, threads):
    before = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        out = np.zeros(max(n_chunks, 1), np.int64)
        hits = np.zeros(max(n_chunks, 1), np.int64)
        _mark(n_chunks, 1, out, hits)
    finally:
        numba.set_num_threads(before)
    return out[:n_chunks], hits[:n_chunks]


@pytest.mark.parametrize("n_chunks", [0, 1, 2, 3, 7, 8, 9, 100, 1001])
def test_every_chunk_runs_exactly_once_on_any_thread_count(n_chunks):
    expect = np.arange(n_chunks, dtype=np.int64) ** 2
    for threads in sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)}):
        out, hits = _run(n_chunks, threads)
        assert (hits == 1).all(), (threads, hits)
        assert np.array_equal(out, expect)


def test_an_error_in_a_chunk_reaches_the_caller():
    before = numba.get_num_threads()
    try:
        for threads in sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)}):
            numba.set_num_threads(threads)
            with pytest.raises(ValueError, match="chunk failed"):
                _fail_at(50, 1, 37)
            _fail_at(50, 1, 99)  # no chunk 99: nothing raised
    finally:
        numba.set_num_threads(before)


def test_no_kernel_compiles_a_parallel_loop():
    """Every registered engine plays through serial kernels run by threads:
    a parallel (``prange``) kernel cost a quarter of a cold compile."""
    from balance.registry import GAMES, get_game
    from balance.warmup import kernels_of

    assert GAMES
    for name in GAMES:
        home = get_game(name)
        found = kernels_of(home.engine, home.strategies)
        assert found, name
        for k in found:
            assert not k.targetoptions.get("parallel"), (name, k.py_func)


def test_a_forked_child_plays_on_threads_of_its_own():
    """A pool's threads do not survive ``fork``: a child that reused its
    parent's pool would wait forever."""
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork on this platform")
    _run(64, min(2, numba.config.NUMBA_NUM_THREADS))  # the parent's pool exists
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    child = ctx.Process(target=_child_runs, args=(q,))
    child.start()
    child.join(60)
    alive = child.is_alive()
    if alive:
        child.kill()
    assert not alive, "the forked child hung on its parent's thread pool"
    assert q.get(timeout=10) == int((np.arange(64) ** 2).sum())


def _child_runs(q):
    out, _ = _run(64, min(2, numba.config.NUMBA_NUM_THREADS))
    q.put(int(out.sum()))
