"""One place for every numba flag used by the simulation kernels.

Kernels import ``njit`` and ``pnjit`` from here so that a flag (caching,
fastmath, error model) changes in one place for every game.
"""

from numba import njit as _njit
from numba import prange  # noqa: F401  (re-exported for the kernels)

_FLAGS = dict(cache=True, nogil=True, error_model="numpy")


def njit(fn=None, **extra):
    """Compile a serial kernel with the project's flags."""
    flags = {**_FLAGS, **extra}
    if fn is None:
        return lambda f: _njit(**flags)(f)
    return _njit(**flags)(fn)


def pnjit(fn):
    """Compile a kernel whose outer ``prange`` runs over independent games."""
    return _njit(parallel=True, **_FLAGS)(fn)


def leaf(fn):
    """Compile a kernel that allocates nothing (rules and strategy helpers).

    Compiled without the runtime's reference counting: a numba function that
    takes arrays otherwise increments and decrements each array's reference
    count, atomically, on every call, which cost a third of Clash's run time.
    Such a kernel may read and write the arrays it is given but must not
    create, slice or return one (numba refuses to compile an allocation).
    """
    return _njit(_nrt=False, **_FLAGS)(fn)
