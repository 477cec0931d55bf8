"""Observation layout records: one named, documented list of slices per game.

A game declares its observation as a list of :class:`Field` (name, size, description); the
offsets array handed to the numba encoder comes from the same list, and the environment's
docstring table is rendered from it, so the documentation cannot drift from the encoder.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .state import (
    BID, BIDS0, LAST_ROW, LAST_SEAT, MAXLOG, NLOG, hand_off, log_entry, played_off,
)


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


@njit(cache=True)
def put_table(s, seat, tab, n, R, D, size_norm, pass_id, show_beat, recent_from, recent_k,
              o_played, o_sizes, o_beat, o_beat_type, o_beat_seat, o_recent, others, out):
    """Write the public table fields every climbing game shares, relative to ``seat``.

    * ``o_played``: cards played by each relative seat (``n`` blocks of ``R*D``); they are
      also subtracted from ``others`` (the caller's count vector of unseen cards);
    * ``o_sizes``: hand size of each relative seat / ``size_norm``;
    * ``o_beat`` / ``o_beat_type`` / ``o_beat_seat``: the play to beat (cards, family one-hot,
      relative seat) when ``show_beat`` and there is one;
    * ``o_recent``: the last ``recent_k`` actions numbered ``>= recent_from`` (pass the start
      of the play phase, or a number above ``NLOG`` to show none), most recent first, each
      ``R*D`` cards + pass flag + relative seat one-hot.
    """
    C = R * D
    for k in range(n):
        q = (seat + k) % n
        po = played_off(n, q)
        put_cards(out, o_played + k * C, s[po:po + 16], R, D)
        qo = hand_off(q)
        sz = 0
        for r in range(16):
            others[r] -= s[po + r]
            sz += s[qo + r]
        out[o_sizes + k] = sz / size_norm
    prev = s[LAST_ROW]
    if show_beat and prev >= 0:
        put_cards(out, o_beat, tab.counts[prev], R, D)
        out[o_beat_type + tab.family[prev]] = 1.0
        out[o_beat_seat + (s[LAST_SEAT] - seat) % n] = 1.0
    E = C + 1 + n
    i = s[NLOG] - 1
    start = max(recent_from, s[NLOG] - MAXLOG)
    j = 0
    while i >= start and j < recent_k:
        e = log_entry(s, n, i)
        act = e // 8
        base = o_recent + j * E
        if act == pass_id:
            out[base + C] = 1.0
        else:
            put_cards(out, base, tab.counts[act], R, D)
        out[base + C + 1 + (e % 8 - seat) % n] = 1.0
        i -= 1
        j += 1


@njit(cache=True)
def put_auction(s, seat, n, max_bid, o_bid, o_auction, out):
    """Highest bid one-hot (``max_bid + 1``) and each relative seat's last auction action
    (none, pass, bid 1..max_bid) one-hot, from the BID and BIDS0 header fields."""
    out[o_bid + s[BID]] = 1.0
    for k in range(n):
        q = (seat + k) % n
        out[o_auction + k * (max_bid + 2) + s[BIDS0 + q] + 1] = 1.0
