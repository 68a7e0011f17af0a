"""``kernels.simd.row_diff``: one vector compare of two rows gives the same
bits as the loop of scalar compares it replaces, for every width and row."""

import numpy as np
import pytest

from kernels.jit import leaf
from kernels.simd import row_diff


@leaf
def _vector(a, b, out):
    for i in range(a.shape[0]):
        for j in range(b.shape[0]):
            out[i, j, 0] = row_diff(a, i, b, j, 11)
            out[i, j, 1] = row_diff(a, i, b, j, 3)
            out[i, j, 2] = row_diff(a, i, b, j, 1)


@leaf
def _scalar(a, b, out):
    for i in range(a.shape[0]):
        for j in range(b.shape[0]):
            for k, width in enumerate((11, 3, 1)):
                c = 0
                for f in range(width):
                    c |= (a[i, f] != b[j, f]) << f
                out[i, j, k] = c


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_row_diff_matches_scalar_compares(seed):
    rng = np.random.default_rng(seed)
    # few distinct values, so that rows often agree in some fields and not others;
    # ``b`` wider than 11 and a view of a 3-d array, as the engines pass them
    a = rng.integers(-2, 2, (13, 11))
    big = rng.integers(-2, 2, (2, 17, 20))
    b = big[1]
    got = np.zeros((13, 17, 3), np.int64)
    want = np.zeros((13, 17, 3), np.int64)
    _vector(a, b, got)
    _scalar(a, b, want)
    assert (got == want).all()
    # the draw covers rows that differ in some fields and agree in others
    assert ((want[:, :, 0] > 0) & (want[:, :, 0] < 2047)).any()
    # equal rows give 0, every field different gives all bits
    same = a.copy()
    other = a + 7
    _vector(a, same, got[:, :13])
    assert (got[np.arange(13), np.arange(13), 0] == 0).all()
    _vector(a, other, got[:, :13])
    assert (got[np.arange(13), np.arange(13)] == [2047, 7, 1]).all()


def test_row_diff_needs_a_literal_width():
    from numba.core.errors import TypingError

    @leaf
    def _bad(a, w):
        return row_diff(a, 0, a, 1, w)

    with pytest.raises(TypingError):
        _bad(np.zeros((2, 4), np.int64), 4)
