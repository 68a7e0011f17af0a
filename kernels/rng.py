"""Counter-based random numbers shared by every game.

A stream is named by ``(seed, index, purpose)``: splitmix64 mixes the three
into the 256-bit state of a xoshiro256** generator. Game ``i`` of seed ``s``
therefore depends on ``(s, i)`` alone, whatever the batch size, the thread
count or the machine split, and each purpose (the deal, the reshuffles, each
seat's strategy noise) has its own stream, so a rule change that draws more
numbers from one purpose never desynchronises another.

State is a ``uint64[4]`` array owned by the caller; all arithmetic is kept in
``uint64`` (numba silently turns mixed signed/unsigned integer arithmetic into
floats, so every constant here is a ``np.uint64``).
"""

import warnings

import numpy as np

from kernels.jit import leaf

# Under NUMBA_DISABLE_JIT the same code runs on numpy scalars, which warn on the
# uint64 wrap-around that the generator relies on.
warnings.filterwarnings("ignore", message="overflow encountered", category=RuntimeWarning)

# Purposes: one stream each. Games may define more from PURPOSE_GAME upwards.
PURPOSE_DEAL = 1
PURPOSE_RESHUFFLE = 2
PURPOSE_SEAT0 = 3  # strategy noise of seat 0; seat k uses PURPOSE_SEAT0 + k
PURPOSE_COIN = 5
PURPOSE_GAME = 16

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_K_INDEX = np.uint64(0xD1B54A32D192ED03)
_K_PURPOSE = np.uint64(0x8CB92BA72F3D8DD7)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S17 = np.uint64(17)
_S45 = np.uint64(45)
_S23 = np.uint64(23)
_S7 = np.uint64(7)
_S57 = np.uint64(57)
_S11 = np.uint64(11)
_S64 = np.uint64(64)
_FIVE = np.uint64(5)
_NINE = np.uint64(9)
_INV53 = 1.0 / 9007199254740992.0  # 2**-53


@leaf
def mix64(z):
    """The splitmix64 finaliser: a bijection of uint64."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@leaf
def stream_key(seed, index, purpose):
    """A 64-bit key for the stream ``(seed, index, purpose)``."""
    h = mix64(np.uint64(seed) + _GAMMA)
    h = mix64(h ^ (np.uint64(index) * _K_INDEX))
    h = mix64(h ^ (np.uint64(purpose) * _K_PURPOSE))
    return h


@leaf
def seed_state(state, seed, index, purpose):
    """Fill ``state`` (uint64[4]) for the stream ``(seed, index, purpose)``."""
    x = stream_key(seed, index, purpose)
    for k in range(4):
        x = x + _GAMMA
        state[k] = mix64(x)


@leaf
def _rotl(x, k):
    return (x << k) | (x >> (_S64 - k))


@leaf
def next_u64(state):
    """Next output of xoshiro256** (advances ``state`` in place)."""
    result = _rotl(state[1] * _FIVE, _S7) * _NINE
    t = state[1] << _S17
    state[2] ^= state[0]
    state[3] ^= state[1]
    state[1] ^= state[2]
    state[0] ^= state[3]
    state[2] ^= t
    state[3] = _rotl(state[3], _S45)
    return result


@leaf
def uniform(state):
    """A double in [0, 1) with 53 random bits."""
    return float(next_u64(state) >> _S11) * _INV53


@leaf
def randint(state, n):
    """An integer in [0, n) (n ≥ 1), by scaling a 53-bit uniform."""
    return int(uniform(state) * n)


@leaf
def gumbel(state):
    """A standard Gumbel variate, for sampling a softmax by arg-max."""
    u = (float(next_u64(state) >> _S11) + 0.5) * _INV53
    return -np.log(-np.log(u))


@leaf
def shuffle(state, arr, n):
    """Fisher–Yates shuffle of the first ``n`` entries of ``arr`` in place."""
    for i in range(n - 1, 0, -1):
        j = randint(state, i + 1)
        tmp = arr[i]
        arr[i] = arr[j]
        arr[j] = tmp
