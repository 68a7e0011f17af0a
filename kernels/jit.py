"""One place for every numba flag used by the simulation kernels.

Kernels import ``njit`` and ``pnjit`` from here so that a flag (caching,
fastmath, error model) changes in one place for every game.
"""

import hashlib
import os
from pathlib import Path

import numba
from numba import njit as _njit
from numba import prange  # noqa: F401  (re-exported for the kernels)
from numba.core import errors, types

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


def one_copy(dispatcher):
    """Compile ``dispatcher`` once per argument types, not once more for each
    constant a caller passes.

    numba types a constant argument of a call between kernels as a literal
    (``Literal[int](0)``, ``Literal[bool](True)``) and compiles the callee
    afresh for it: ``task_play(..., MODE_IN_SUIT, ...)`` and ``task_play(...,
    mode, ...)`` were four copies of one kernel, and such copies were about a
    tenth of each engine's cold compile. A call is typed here with plain types
    first (the constant converts to them, as a variable of its type would);
    only a callee that cannot compile without the literal (one that indexes a
    tuple with it, say) still gets its literal copy. The compiled code is the
    same in every way but the constant folding, so games do not change
    (``tests/core/test_fingerprint.py``); ``tests/core/test_warmup.py``
    checks that no kernel of any engine has two copies for the same types.
    """
    typed = dispatcher.get_call_template

    def get_call_template(args, kws):
        plain = tuple(types.unliteral(a) for a in args)
        plain_kws = {k: types.unliteral(v) for k, v in kws.items()}
        if plain != tuple(args) or plain_kws != kws:
            try:
                return typed(plain, plain_kws)
            except errors.TypingError:
                pass
        return typed(args, kws)

    dispatcher.get_call_template = get_call_template
    return dispatcher


def njit(fn=None, **extra):
    """Compile a serial kernel with the project's flags."""
    flags = {**_FLAGS, **extra}
    if fn is None:
        return lambda f: one_copy(_njit(**flags)(f))
    return one_copy(_njit(**flags)(fn))


def pnjit(fn):
    """Compile a kernel whose outer ``prange`` runs over independent games."""
    return one_copy(_njit(parallel=True, **_FLAGS)(fn))


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
        return lambda f: one_copy(_njit(**flags)(f))
    if isinstance(fn, str):  # one signature: every call converts to it (one compile)
        return lambda f: _njit(fn, **flags)(f)
    return one_copy(_njit(**flags)(fn))
