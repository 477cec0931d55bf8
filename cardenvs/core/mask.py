"""The action mask array of the environments' observations: ``int8``, fast to search.

PettingZoo's and gymnasium's convention is an ``int8`` mask (``Discrete.sample(mask=...)``
requires that dtype), and the usual loop picks among ``np.flatnonzero(obs["action_mask"])``.
numpy finds the nonzero entries of a ``bool`` array with a fast byte scan but those of an
``int8`` array one element at a time: on Dou Dizhu's 28,241-entry mask about 10x slower, which
was most of a masked-random loop's time.  :class:`ActionMask` is an ``int8`` array (an
``np.ndarray`` subclass: every numpy, gymnasium and torch use of it is unchanged) whose
``nonzero()`` (what ``np.nonzero`` and ``np.flatnonzero`` call) finds them with a compiled scan
that skips 256 zero bytes at a time (an action mask is mostly zeros: about 2x faster than
numpy's ``bool`` scan, which is itself about 10x faster than its ``int8`` one).

Libraries that read the mask element by element (Tianshou's ``PettingZooEnv`` builds
``[m == 1 for m in mask]`` at every step) iterate it: numpy iterates an ``ndarray`` subclass
about twice as slowly as a plain array, and makes an ``np.int8`` scalar per entry, so a 1-D
:class:`ActionMask` iterates over its entries as Python ints (the same values, 0 and 1).
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

import numba
import numpy as np
import numpy.typing as npt

_I8 = np.dtype(np.int8)
#: how many indexes :func:`_nonzero_i8` keeps in its first pass (a second pass fills an array
#: of the exact count when there are more)
_CAP = 256


@numba.njit(cache=True, nogil=True)
def _bytes_nonzero(m: np.ndarray, lo: int, hi: int, out: np.ndarray, k: int) -> int:
    """Append the indexes in ``[lo, hi)`` of ``m``'s nonzero bytes to ``out[k:]`` (as far as
    it goes); returns ``k`` plus their count."""
    for t in range(lo, hi):
        if m[t] != 0:
            if k < out.shape[0]:
                out[k] = t
            k += 1
    return k


@numba.njit(cache=True, nogil=True)
def _nonzero_i8(m: np.ndarray) -> np.ndarray:
    """The indexes of the nonzero entries of the 1-D contiguous ``int8`` array ``m``, in
    order (``intp``): its aligned 8-byte words or-ed 32 at a time, so that a zero stretch
    costs a load per word; the bytes of a nonzero word are read one by one."""
    n = m.shape[0]
    out = np.empty(_CAP, np.intp)
    head = min((-m.ctypes.data) % 8, n)  # the bytes before the first aligned word
    nb = (n - head) // 256
    w = m[head:head + nb * 256].view(np.uint64).reshape(nb, 32)
    k = _bytes_nonzero(m, 0, head, out, 0)
    for b in range(nb):
        acc = np.uint64(0)
        for x in w[b]:
            acc |= x
        if acc != 0:
            for j in range(32):
                if w[b, j] != 0:
                    t0 = head + (b * 32 + j) * 8
                    k = _bytes_nonzero(m, t0, t0 + 8, out, k)
    k = _bytes_nonzero(m, head + nb * 256, n, out, k)
    if k <= _CAP:
        return out[:k].copy()
    out = np.empty(k, np.intp)
    _bytes_nonzero(m, 0, n, out, 0)
    return out


#: the compiled entry point of :func:`_nonzero_i8` (found on its first call): called with no
#: type check, only on a 1-D ``int8`` array with unit stride
_entry: list = []


def _nonzero_fast(m: np.ndarray) -> np.ndarray:
    """:func:`_nonzero_i8` of ``m`` (a 1-D ``int8`` array with unit stride)."""
    if _entry:
        return _entry[0](m)
    plain = m.view(np.ndarray)
    out = _nonzero_i8(plain)
    cres = _nonzero_i8.overloads.get((numba.typeof(plain),))
    if cres is not None:
        _entry.append(cres.entry_point)
    return out


class ActionMask(np.ndarray):
    """An ``int8`` 0/1 action mask whose :meth:`nonzero` takes numpy's ``bool`` fast path.

    Make one with :func:`new_mask`; it behaves as the ``int8`` array it is, except that a
    1-D mask iterates over Python ints (see the module docstring).
    """

    def nonzero(self) -> tuple[npt.NDArray[np.intp], ...]:
        """The indexes of the nonzero entries (as ``np.ndarray.nonzero``): a 1-D mask with
        unit stride by a compiled scan of its bytes, another ``int8`` one by reading its bytes
        as ``bool`` (any nonzero byte is a nonzero entry either way)."""
        if self.dtype is not _I8 and self.dtype != _I8:  # another dtype: the plain method
            return np.ndarray.nonzero(self.view(np.ndarray))
        if self.ndim == 1 and self.strides[0] == 1:
            return (_nonzero_fast(self),)
        return np.ndarray.nonzero(self.view(np.bool_))

    def __iter__(self) -> Iterator[Any]:
        """The entries of a 1-D mask as Python ints; other shapes as ``np.ndarray``."""
        if self.ndim == 1:
            return iter(self.tolist())
        return np.ndarray.__iter__(self)


def new_mask(n: int) -> ActionMask:
    """A zero ``int8`` :class:`ActionMask` of ``n`` entries."""
    return np.zeros(n, np.int8).view(ActionMask)


@numba.njit(cache=True, nogil=True)
def _set_ones(m: np.ndarray, ids: np.ndarray, k: int) -> int:
    """``m[ids[:k]] = 1``; ``-1``, or the position of the first id out of ``m``'s range
    (that id and those after it not written)."""
    n = m.shape[0]
    for i in range(k):
        a = ids[i]
        if a < 0 or a >= n:
            return i
        m[a] = 1
    return -1


#: the compiled entry point of :func:`_set_ones` (found on its first call)
_ones_entry: list = []


def ones_writer() -> Callable[[np.ndarray, np.ndarray, int], int]:
    """The compiled entry point of ``_set_ones(m, ids, k)``: ``m[ids[:k]] = 1`` for a 1-D
    contiguous ``int8`` ``m`` and a 1-D contiguous ``int64`` ``ids`` of at least ``k`` ids,
    ``-1``, or the position of the first id outside ``m`` (not written).  It takes its
    arguments with no type check: for callers that own those arrays (the AEC environment's
    masks of its legal-id buffer)."""
    if not _ones_entry:
        m, ids = np.zeros(1, np.int8), np.zeros(1, np.int64)
        _set_ones(m, ids, 1)
        cres = _set_ones.overloads[(numba.typeof(m), numba.typeof(ids), numba.typeof(1))]
        _ones_entry.append(cres.entry_point)
    return _ones_entry[0]

