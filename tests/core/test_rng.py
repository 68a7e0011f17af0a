"""Tests for kernels.rng: the counter-based generator every game draws from.

The oracle is an independent pure-Python splitmix64 + xoshiro256** written
from the published algorithms with explicit 64-bit masking; the kernels must
agree with it bit for bit, jitted or not.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats as sps

from kernels import rng
from tests import ROOT

MASK = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15


# ---------------------------------------------------------------- oracle


def _mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def _key(seed: int, index: int, purpose: int) -> int:
    h = _mix((seed + GAMMA) & MASK)
    h = _mix(h ^ ((index * 0xD1B54A32D192ED03) & MASK))
    return _mix(h ^ ((purpose * 0x8CB92BA72F3D8DD7) & MASK))


def _state(seed: int, index: int, purpose: int) -> list[int]:
    x = _key(seed, index, purpose)
    out = []
    for _ in range(4):
        x = (x + GAMMA) & MASK
        out.append(_mix(x))
    return out


def _rotl(x: int, k: int) -> int:
    return ((x << k) | (x >> (64 - k))) & MASK


def _next(s: list[int]) -> int:
    result = (_rotl((s[1] * 5) & MASK, 7) * 9) & MASK
    t = (s[1] << 17) & MASK
    s[2] ^= s[0]
    s[3] ^= s[1]
    s[1] ^= s[2]
    s[0] ^= s[3]
    s[2] ^= t
    s[3] = _rotl(s[3], 45)
    return result


def _fresh(seed: int, index: int, purpose: int) -> np.ndarray:
    st = np.zeros(4, dtype=np.uint64)
    rng.seed_state(st, seed, index, purpose)
    return st


STREAMS = [
    (0, 0, 0),
    (1, 0, rng.PURPOSE_DEAL),
    (1, 7, rng.PURPOSE_RESHUFFLE),
    (20261130, 12345, rng.PURPOSE_SEAT0 + 1),
    (2**40 + 3, 2**31, rng.PURPOSE_GAME),
]


# ---------------------------------------------------------------- streams


@pytest.mark.parametrize("seed,index,purpose", STREAMS)
def test_stream_matches_reference_implementation(seed, index, purpose):
    assert int(rng.stream_key(seed, index, purpose)) == _key(seed, index, purpose)
    st = _fresh(seed, index, purpose)
    ref = _state(seed, index, purpose)
    assert [int(x) for x in st] == ref
    got = [int(rng.next_u64(st)) for _ in range(20)]
    assert got == [_next(ref) for _ in range(20)]


@pytest.mark.parametrize("seed,index,purpose", STREAMS)
def test_stream_depends_only_on_its_name(seed, index, purpose):
    first = _fresh(seed, index, purpose)
    draws = [int(rng.next_u64(first)) for _ in range(8)]
    # other streams seeded and drawn in between change nothing
    other = _fresh(seed + 1, index, purpose)
    for _ in range(5):
        rng.next_u64(other)
    again = _fresh(seed, index, purpose)
    assert [int(rng.next_u64(again)) for _ in range(8)] == draws
    assert int(rng.stream_key(seed, index, purpose)) == int(rng.stream_key(seed, index, purpose))


def test_every_component_of_the_name_changes_the_stream():
    keys = {}
    for seed in range(4):
        for index in range(8):
            for purpose in (
                rng.PURPOSE_DEAL,
                rng.PURPOSE_RESHUFFLE,
                rng.PURPOSE_SEAT0,
                rng.PURPOSE_SEAT0 + 1,
                rng.PURPOSE_COIN,
                rng.PURPOSE_GAME,
            ):
                keys[(seed, index, purpose)] = int(rng.stream_key(seed, index, purpose))
    assert len(set(keys.values())) == len(keys)
    # and the first outputs of different purposes of one game differ too
    firsts = {p: int(rng.next_u64(_fresh(5, 3, p))) for p in range(1, 20)}
    assert len(set(firsts.values())) == len(firsts)


def test_mix64_is_injective_on_a_sample():
    xs = np.arange(0, 1 << 14, dtype=np.uint64) * np.uint64(0x10001)
    ys = {int(rng.mix64(x)) for x in xs}
    assert len(ys) == len(xs)
    assert int(rng.mix64(np.uint64(12345))) == _mix(12345)


# ---------------------------------------------------------------- distributions


def test_uniform_range_and_mean():
    st = _fresh(3, 1, rng.PURPOSE_GAME)
    u = np.array([rng.uniform(st) for _ in range(20000)])
    assert u.min() >= 0.0 and u.max() < 1.0
    assert abs(u.mean() - 0.5) < 0.01
    # the 53-bit construction: the uniform is the top 53 bits of the next output
    ref = _state(3, 1, rng.PURPOSE_GAME)
    for _ in range(20000):
        _next(ref)
    st2 = st.copy()
    assert rng.uniform(st2) == (_next(ref) >> 11) * 2.0**-53


@pytest.mark.parametrize("n", [1, 2, 6, 48])
def test_randint_range_and_uniformity(n):
    st = _fresh(11, n, rng.PURPOSE_GAME)
    draws = np.array([rng.randint(st, n) for _ in range(12000)])
    assert draws.min() >= 0 and draws.max() <= n - 1
    counts = np.bincount(draws, minlength=n)
    assert len(counts) == n
    if n > 1:
        assert (counts > 0).all()
        _, p = sps.chisquare(counts)
        assert p > 1e-4  # loose: fixed seed, so this never flakes


def test_gumbel_mean_is_euler_gamma():
    st = _fresh(4, 2, rng.PURPOSE_SEAT0)
    g = np.array([rng.gumbel(st) for _ in range(20000)])
    assert np.isfinite(g).all()
    assert abs(g.mean() - np.euler_gamma) < 0.05
    assert abs(g.var() - np.pi**2 / 6) < 0.1


def test_shuffle_is_a_permutation_of_the_first_n():
    st = _fresh(9, 0, rng.PURPOSE_DEAL)
    for n in (0, 1, 2, 5, 48):
        arr = np.arange(60, dtype=np.int64)
        rng.shuffle(st, arr, n)
        assert sorted(arr[:n].tolist()) == list(range(n))
        assert arr[n:].tolist() == list(range(n, 60))  # the rest is untouched
    arr = np.arange(48, dtype=np.int64)
    rng.shuffle(st, arr, 48)
    assert arr.tolist() != list(range(48))


def test_shuffle_is_fisher_yates_with_randint():
    st = _fresh(2, 5, rng.PURPOSE_RESHUFFLE)
    arr = np.arange(10, dtype=np.int64)
    rng.shuffle(st, arr, 10)
    ref = _state(2, 5, rng.PURPOSE_RESHUFFLE)
    exp = list(range(10))
    for i in range(9, 0, -1):
        j = int(((_next(ref) >> 11) * 2.0**-53) * (i + 1))
        exp[i], exp[j] = exp[j], exp[i]
    assert arr.tolist() == exp


def test_shuffle_positions_are_uniform():
    st = _fresh(1, 1, rng.PURPOSE_GAME)
    n, trials = 5, 6000
    where = np.zeros((n, n), dtype=np.int64)  # where[card, position]
    arr = np.zeros(n, dtype=np.int64)
    for _ in range(trials):
        arr[:] = np.arange(n)
        rng.shuffle(st, arr, n)
        where[arr, np.arange(n)] += 1
    for card in range(n):
        _, p = sps.chisquare(where[card])
        assert p > 1e-4


# ---------------------------------------------------------------- jit vs pure Python

_PROBE = """
import json, numpy as np
from kernels import rng
out = {"keys": [], "u64": [], "randint": [], "shuffle": [], "uniform": []}
for seed, index, purpose in %r:
    out["keys"].append(str(int(rng.stream_key(seed, index, purpose))))
    st = np.zeros(4, dtype=np.uint64)
    rng.seed_state(st, seed, index, purpose)
    out["u64"].append([str(int(rng.next_u64(st))) for _ in range(5)])
    out["uniform"].append(repr(rng.uniform(st)))
    out["randint"].append([int(rng.randint(st, n)) for n in (1, 2, 3, 7, 48, 1000)])
    arr = np.arange(48, dtype=np.int64)
    rng.shuffle(st, arr, 48)
    out["shuffle"].append(arr.tolist())
print(json.dumps(out))
"""


def _probe_pure_python() -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NUMBA_DISABLE_JIT": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE % (STREAMS,)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _probe_here() -> dict:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(_PROBE % (STREAMS,), {})
    return json.loads(buf.getvalue())


@pytest.mark.slow  # a pure-Python interpreter of the kernels: 1.5 s in three runs
def test_same_numbers_without_jit():
    pure = _probe_pure_python()
    jitted = _probe_here()
    assert pure == jitted
    assert pure["keys"] == [str(_key(*s)) for s in STREAMS]
    assert len({tuple(s) for s in pure["shuffle"]}) == len(STREAMS)
