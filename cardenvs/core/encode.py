"""Observation layout records: one named, documented list of slices per game.

A game declares its observation as a list of :class:`Field` (name, size, description); the
offsets array handed to the numba encoder comes from the same list, and the environment's
docstring table is rendered from it, so the documentation cannot drift from the encoder.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit


@dataclass(frozen=True)
class Field:
    name: str
    size: int
    doc: str


class Layout:
    """Offsets of named observation fields (in declaration order)."""

    def __init__(self, fields: list[Field]):
        self.fields = list(fields)
        self.offsets: dict[str, tuple[int, int]] = {}
        off = 0
        for f in self.fields:
            self.offsets[f.name] = (off, off + f.size)
            off += f.size
        self.size = off

    def start_array(self) -> np.ndarray:
        """Start offsets in declaration order, for the numba encoder."""
        return np.array([self.offsets[f.name][0] for f in self.fields], np.int64)

    def markdown(self) -> str:
        rows = ["| index | name | size | meaning |", "| --- | --- | --- | --- |"]
        for f in self.fields:
            a, b = self.offsets[f.name]
            rows.append(f"| {a}:{b} | `{f.name}` | {f.size} | {f.doc} |")
        return "\n".join(rows)


@njit(cache=True, inline="always")
def put_cards(out, off, counts, n_ranks, depth):
    """Write "at least k copies" planes: ``out[off + r*depth + k-1] = 1`` for k <= count."""
    for r in range(n_ranks):
        c = counts[r]
        for k in range(min(c, depth)):
            out[off + r * depth + k] = 1.0
