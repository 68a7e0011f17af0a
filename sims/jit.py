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
