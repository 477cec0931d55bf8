"""The action mask array of the environments' observations: ``int8``, fast to search.

PettingZoo's and gymnasium's convention is an ``int8`` mask (``Discrete.sample(mask=...)``
requires that dtype), and the usual loop picks among ``np.flatnonzero(obs["action_mask"])``.
numpy finds the nonzero entries of a ``bool`` array with a fast byte scan but those of an
``int8`` array one element at a time: on Dou Dizhu's 28,241-entry mask about 10x slower, which
was most of a masked-random loop's time.  :class:`ActionMask` is an ``int8`` array (an
``np.ndarray`` subclass: every numpy, gymnasium and torch use of it is unchanged) whose
``nonzero()`` (what ``np.nonzero`` and ``np.flatnonzero`` call) reads its bytes as ``bool``.

Libraries that read the mask element by element (Tianshou's ``PettingZooEnv`` builds
``[m == 1 for m in mask]`` at every step) iterate it: numpy iterates an ``ndarray`` subclass
about twice as slowly as a plain array, and makes an ``np.int8`` scalar per entry, so a 1-D
:class:`ActionMask` iterates over its entries as Python ints (the same values, 0 and 1).
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np
import numpy.typing as npt

_I8 = np.dtype(np.int8)


class ActionMask(np.ndarray):
    """An ``int8`` 0/1 action mask whose :meth:`nonzero` takes numpy's ``bool`` fast path.

    Make one with :func:`new_mask`; it behaves as the ``int8`` array it is, except that a
    1-D mask iterates over Python ints (see the module docstring).
    """

    def nonzero(self) -> tuple[npt.NDArray[np.intp], ...]:
        """The indexes of the nonzero entries (as ``np.ndarray.nonzero``), found by reading
        the ``int8`` bytes as ``bool`` (any nonzero byte is a nonzero entry either way)."""
        if self.dtype is not _I8 and self.dtype != _I8:  # another dtype: the plain method
            return np.ndarray.nonzero(self.view(np.ndarray))
        return np.ndarray.nonzero(self.view(np.bool_))

    def __iter__(self) -> Iterator[Any]:
        """The entries of a 1-D mask as Python ints; other shapes as ``np.ndarray``."""
        if self.ndim == 1:
            return iter(self.tolist())
        return np.ndarray.__iter__(self)


def new_mask(n: int) -> ActionMask:
    """A zero ``int8`` :class:`ActionMask` of ``n`` entries."""
    return np.zeros(n, np.int8).view(ActionMask)
