"""Numba kernels shared by every game: rank planes, legal-play generation, a seeded PRNG.

Everything here works on ``int64`` scalars and arrays (63 bits of planes suffice: bit 63 is
rank slot 15 of plane 4 / 8, which no game uses), so no ``uint64`` promotion traps.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .cards import NSLOT

# -- rank planes --------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def planes(counts):
    """Rank planes ``(lo, hi)`` of a count vector (see :mod:`cardenvs.core.table`)."""
    lo = np.int64(0)
    hi = np.int64(0)
    for r in range(NSLOT):
        c = counts[r]
        for k in range(min(c, 4)):
            lo |= np.int64(1) << np.int64(16 * k + r)
        for k in range(4, min(c, 8)):
            hi |= np.int64(1) << np.int64(16 * (k - 4) + r)
    return lo, hi


@njit(cache=True, inline="always")
def fits(lo, hi, plo, phi):
    return ((plo & ~lo) | (phi & ~hi)) == 0


# -- legal plays ----------------------------------------------------------------------------------


@njit(cache=True)
def gen_free(lo, hi, tab, out, n):
    """Append every row the hand (planes lo, hi) can play on a free lead to ``out[n:]``.

    Returns the new count.  Each group's body is tested once; kicker variants only when it fits.
    """
    g_lo = tab.g_lo
    g_hi = tab.g_hi
    r_lo = tab.lo
    r_hi = tab.hi
    g_start = tab.g_start
    g_end = tab.g_end
    for g in range(g_lo.shape[0]):
        if ((g_lo[g] & ~lo) | (g_hi[g] & ~hi)) != 0:
            continue
        a = g_start[g]
        b = g_end[g]
        if b - a == 1 and r_lo[a] == g_lo[g] and r_hi[a] == g_hi[g]:
            out[n] = a  # a lone row that is its own body: already tested
            n += 1
            continue
        for t in range(a, b):
            if ((r_lo[t] & ~lo) | (r_hi[t] & ~hi)) == 0:
                out[n] = t
                n += 1
    return n


@njit(cache=True)
def _scan_groups(lo, hi, tab, g0, g1, out, n):
    g_lo = tab.g_lo
    g_hi = tab.g_hi
    r_lo = tab.lo
    r_hi = tab.hi
    for g in range(g0, g1):
        if ((g_lo[g] & ~lo) | (g_hi[g] & ~hi)) != 0:
            continue
        for t in range(tab.g_start[g], tab.g_end[g]):
            if ((r_lo[t] & ~lo) | (r_hi[t] & ~hi)) == 0:
                out[n] = t
                n += 1
    return n


@njit(cache=True)
def gen_follow(lo, hi, prev, tab, out, n):
    """Append every row that beats row ``prev`` and fits the hand to ``out[n:]``."""
    n = _scan_groups(lo, hi, tab, tab.fnext[prev], tab.fend[prev], out, n)
    n = _scan_groups(lo, hi, tab, tab.bnext[prev], tab.g_bomb_end[0], out, n)
    return n


@njit(cache=True)
def gen_legal(counts, prev, tab, out):
    """Legal plays (rows) of a hand against ``prev`` (-1 = free lead), written to ``out``."""
    lo, hi = planes(counts)
    if prev < 0:
        return gen_free(lo, hi, tab, out, 0)
    return gen_follow(lo, hi, prev, tab, out, 0)


# -- seeded PRNG (splitmix64 on int64 bit patterns) ------------------------------------------------

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


@njit(cache=True, inline="always")
def rng_next(state, idx):
    """Advance the splitmix64 generator stored in ``state[idx]``; return 63 random bits."""
    x = np.uint64(state[idx]) + _GOLDEN
    state[idx] = np.int64(x)
    z = x
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    z = z ^ (z >> np.uint64(31))
    return np.int64(z >> np.uint64(1))


@njit(cache=True, inline="always")
def rng_below(state, idx, n):
    """A uniform integer in ``[0, n)`` (bias below 2**-40 for the small n used here)."""
    return rng_next(state, idx) % n


@njit(cache=True)
def shuffle(arr, m, state, idx):
    """Fisher-Yates shuffle of ``arr[:m]`` with the generator in ``state[idx]``."""
    for i in range(m - 1, 0, -1):
        j = rng_below(state, idx, i + 1)
        t = arr[i]
        arr[i] = arr[j]
        arr[j] = t
