"""One place for every numba flag used by the simulation kernels.

Kernels import ``njit``, ``leaf`` and ``chunked`` from here so that a flag (caching,
fastmath, error model) changes in one place for every game.
"""

import hashlib
import os
from pathlib import Path

import numba
import numpy as np
from numba import njit as _njit

# LLVM at -O2, not numba's default -O3, unless $NUMBA_OPT says otherwise.
# Measured in one run (best of 3 processes x 3 runs, 1 thread), each engine
# plays as fast at -O2 (games/s over -O3: Tosk 1.005, Clash 1.04, Trisk 0.985,
# the four-suits RPG 0.98; the noise is about 4%) and compiles in less time
# (the RPG 31 -> 15 s, Tosk 21 -> 15 s). Set through the environment, so that
# numba's own re-reading of it keeps the level and child processes share it.
os.environ.setdefault("NUMBA_OPT", "2")
numba.config.reload_config()


def _kernel_sources_key() -> str:
    """A hash of every kernel source (``kernels/``, ``sims/`` and ``strategies/``),
    numba's version and its optimisation level."""
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256(f"{numba.__version__} -O{numba.config.OPT}".encode())
    for d in ("kernels", "sims", "strategies"):
        for f in sorted((root / d).rglob("*.py")):
            h.update(f.relative_to(root).as_posix().encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


# numba's on-disk cache checks only the timestamp of a kernel's own file, so a
# kernel whose callee (a strategy, a helper in another module) changed would be
# loaded stale. Every kernel therefore caches under a folder named by a hash of
# all kernel sources: any change to any of them compiles afresh.
# $NUMBA_CACHE_DIR, if set, is the parent folder (default ~/.cache/balance/numba).
_CACHE_ROOT = os.environ.get("NUMBA_CACHE_DIR") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
    "balance",
    "numba",
)
KERNELS_KEY = _kernel_sources_key()  # a worker that plays with other kernels is refused
numba.config.CACHE_DIR = os.path.join(_CACHE_ROOT, KERNELS_KEY)

_FLAGS = dict(cache=True, nogil=True, error_model="numpy")


def njit(fn=None, **extra):
    """Compile a serial kernel with the project's flags."""
    flags = {**_FLAGS, **extra}
    if fn is None:
        return lambda f: _njit(**flags)(f)
    return _njit(**flags)(fn)


class Chunked:
    """A kernel over independent chunks of work (games, hands), run by threads.

    ``kernel(c0, c1, *args)`` does chunks ``c0 .. c1 - 1``, each writing only
    its own rows of the output; calling the object with ``(n_items, size,
    *args)`` cuts ``n_items`` items (games, hands) into chunks of ``size``
    (:func:`n_chunks_of` of them) and splits those into blocks that
    ``numba.get_num_threads()`` Python threads take in turn (the kernel is
    compiled ``nogil``, so they run at once). Each chunk's result depends on
    its index only, so the output is the same on any thread count.

    Why not numba's ``prange``: a parallel kernel is compiled three times
    over (the loop body as its own function, then the kernel around it, each
    optimising again every callee linked into it). Its loop cost Trisk 12.5 s
    of a 48 s cold compile, Tosk 4.4 s of 24, Clash 3.7 of 35 and the RPG's
    three loops 6 of 24 (a serial kernel: 3.0, 1.1, 1.3 and 1.3 s).
    """

    def __init__(self, fn):
        self.kernel = _njit(**_FLAGS)(fn)
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__

    def __call__(self, n_items: int, size: int, *args) -> None:
        n_chunks = n_chunks_of(n_items, size)
        threads = min(numba.get_num_threads(), n_chunks)
        if threads <= 1:
            self.kernel(0, int(n_chunks), *args)
            return
        # a few blocks per thread: a thread slowed by other work on the
        # machine leaves its later blocks to the others
        cuts = np.linspace(0, n_chunks, min(n_chunks, 4 * threads) + 1).astype(np.int64)
        pool = _pool(threads)
        blocks = zip(cuts[:-1].tolist(), cuts[1:].tolist(), strict=True)
        for f in [pool.submit(self.kernel, a, b, *args) for a, b in blocks]:
            f.result()


def n_chunks_of(n_items: int, size: int) -> int:
    """How many chunks of ``size`` items hold ``n_items`` (the last may be short)."""
    return -(-int(n_items) // int(size))


_POOLS: dict = {}


def _pool(threads: int):
    """One pool of worker threads per thread count, kept for the process (a
    forked child, whose copy of a pool has no threads, makes its own)."""
    key = (os.getpid(), threads)
    if key not in _POOLS:
        from concurrent.futures import ThreadPoolExecutor

        _POOLS[key] = ThreadPoolExecutor(threads, thread_name_prefix="kernel")
    return _POOLS[key]


def chunked(fn) -> Chunked:
    """Compile ``fn(c0, c1, *args)``, a loop over independent chunks, to be
    run by threads (:class:`Chunked`)."""
    return Chunked(fn)


def leaf(fn=None, **extra):
    """Compile a kernel that allocates nothing (rules and strategy helpers).

    Compiled without the runtime's reference counting: a numba function that
    takes arrays otherwise increments and decrements each array's reference
    count, atomically, on every call, which cost a third of Clash's run time.
    Such a kernel may read, write and take views of the arrays it is given
    (a view allocates nothing) but must not create one: numba refuses to
    compile an allocation without its runtime.
    """
    flags = {**_FLAGS, "_nrt": False, **extra}
    if fn is None:
        return lambda f: _njit(**flags)(f)
    if isinstance(fn, str):  # one signature: every call converts to it (one compile)
        return lambda f: _njit(fn, **flags)(f)
    return _njit(**flags)(fn)
