"""Observation layout records: one named, documented list of slices per game, and the numba
helpers that write the fields every climbing game shares.

A game declares its observation as a list of :class:`Field` (name, size, description); the
offsets array handed to the numba encoder comes from the same list, and the environment's
docstring table is rendered from it, so the documentation cannot drift from the encoder.

Two families of writers:

* ``put_*`` (:func:`put_cards`, :func:`put_table`, :func:`put_auction`) set only the ones of a
  field and expect ``out`` zeroed beforehand (simple; the reference encoders use them);
* ``set_*`` (:func:`set_cards`, :func:`set_table`, :func:`set_auction`, :func:`zero`) write
  every entry of their fields, zeros included, so a fast encoder that calls one writer per
  field needs no zero-fill of the whole vector.  They are compiled with
  :data:`cardenvs.core.kernels.HOT_INLINE` (no reference counting, inlined into the encoder;
  they never allocate) and write exactly the values of the ``put_*`` twin on a zeroed vector.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .combos import N_FAMILIES
from .kernels import HOT_INLINE, cttz
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
        """The layout as a Markdown table: index range, name, size and meaning of each field."""
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


# -- dense writers (every entry of a field, zeros included; see the module docstring) ---------


# Note: the dense writers index a slice (``dst = out[off:off + size]``) with loop counters
# rather than ``out[off + i]``: numba wraps negative indices around, and with a runtime
# ``off`` LLVM cannot prove ``off + i >= 0``, so every store would carry a select and loops
# would not vectorise (zeroing 384 floats: 160 ns against 20 ns).


@njit(**HOT_INLINE)
def zero(out, a, b):
    """``out[a:b] = 0``."""
    d = out[a:b]
    for i in range(d.shape[0]):
        d[i] = 0.0


#: ``_PLANES[c, k] = 1.0 if k < c`` for ``c`` in 0..8: the planes of a rank holding c cards
_PLANES = np.array([[1.0 if k < c else 0.0 for k in range(8)] for c in range(9)], np.float32)


@njit(**HOT_INLINE)
def set_count(out, b, c, depth):
    """The ``depth`` (<= 8) planes of one rank holding ``c`` cards: ``out[b + k] = (c > k)``
    (``b >= 0``).  Copied from a small table: about 4x faster than converting each
    comparison to a float."""
    c = min(max(c, 0), 8)
    if depth == 4:  # the common depths, unrolled
        out[b] = _PLANES[c, 0]
        out[b + 1] = _PLANES[c, 1]
        out[b + 2] = _PLANES[c, 2]
        out[b + 3] = _PLANES[c, 3]
    elif depth == 8:
        out[b] = _PLANES[c, 0]
        out[b + 1] = _PLANES[c, 1]
        out[b + 2] = _PLANES[c, 2]
        out[b + 3] = _PLANES[c, 3]
        out[b + 4] = _PLANES[c, 4]
        out[b + 5] = _PLANES[c, 5]
        out[b + 6] = _PLANES[c, 6]
        out[b + 7] = _PLANES[c, 7]
    else:
        for k in range(depth):
            out[b + k] = _PLANES[c, k]


@njit(**HOT_INLINE)
def set_cards(out, off, counts, base, n_ranks, depth):
    """Dense :func:`put_cards` of ``counts[base:base + n_ranks]``: ``out[off + r*depth + k]``
    is 1 when ``counts[base + r] > k`` and 0 otherwise, for every ``r < n_ranks, k < depth``."""
    dst = out[off:off + n_ranks * depth]
    src = counts[base:base + n_ranks]
    for r in range(n_ranks):
        set_count(dst, depth * r, src[r], depth)


@njit(**HOT_INLINE)
def set_row(out, off, tab, row, n_ranks, depth):
    """Dense :func:`put_cards` of play-table row ``row``: zero the field, then set one entry
    per set bit of the row's rank planes (``tab.lo`` / ``tab.hi``: bit ``16*(k-1) + r`` for
    at least ``k`` cards of rank ``r``).  A play has few cards, and the planes take 8 bytes a
    row where ``tab.counts`` takes 128, so the rows a game shows stay in the caches."""
    dst = out[off:off + n_ranks * depth]
    for i in range(dst.shape[0]):
        dst[i] = 0.0
    bits = tab.lo[row]
    while bits != 0:
        b = cttz(bits)
        k = b >> 4
        if k < depth:
            dst[depth * (b & 15) + k] = 1.0
        bits &= bits - 1
    if depth > 4:
        bits = tab.hi[row]
        while bits != 0:
            b = cttz(bits)
            k = 4 + (b >> 4)
            if k < depth:
                dst[depth * (b & 15) + k] = 1.0
            bits &= bits - 1


@njit(**HOT_INLINE)
def rel_seat(q, seat, n):
    """``(q - seat) % n`` for seats in ``[0, n)`` (no division)."""
    d = q - seat
    return d + n if d < 0 else d


@njit(**HOT_INLINE)
def set_table(s, seat, tab, n, R, D, size_norm, pass_id, show_beat, recent_from, recent_k,
              o_played, o_sizes, o_beat, o_beat_type, o_beat_seat, o_recent, out):
    """Dense :func:`put_table` (every entry of its fields written; ``to_beat_type`` has
    ``N_FAMILIES`` entries), without the ``others`` bookkeeping: the caller writes the unseen
    cards itself."""
    C = R * D
    for k in range(n):
        q = seat + k
        if q >= n:
            q -= n
        po = played_off(n, q)
        set_cards(out, o_played + k * C, s, po, R, D)
        qo = hand_off(q)
        sz = 0
        for r in range(16):
            sz += s[qo + r]
        out[o_sizes + k] = sz / size_norm
    prev = s[LAST_ROW]
    zero(out, o_beat_type, o_beat_type + N_FAMILIES)
    zero(out, o_beat_seat, o_beat_seat + n)
    if show_beat and prev >= 0:
        set_row(out, o_beat, tab, prev, R, D)
        out[o_beat_type + tab.family[prev]] = 1.0
        out[o_beat_seat + rel_seat(s[LAST_SEAT], seat, n)] = 1.0
    else:
        zero(out, o_beat, o_beat + C)
    E = C + 1 + n
    i = s[NLOG] - 1
    start = max(recent_from, s[NLOG] - MAXLOG)
    j = 0
    while i >= start and j < recent_k:
        e = log_entry(s, n, i)
        act = e // 8
        base = o_recent + j * E
        zero(out, base + C, base + E)
        if act == pass_id:
            zero(out, base, base + C)
            out[base + C] = 1.0
        else:
            set_row(out, base, tab, act, R, D)
        out[base + C + 1 + rel_seat(e % 8, seat, n)] = 1.0
        i -= 1
        j += 1
    zero(out, o_recent + j * E, o_recent + recent_k * E)


@njit(**HOT_INLINE)
def set_auction(s, seat, n, max_bid, o_bid, o_auction, out):
    """Dense :func:`put_auction`."""
    zero(out, o_bid, o_bid + max_bid + 1)
    out[o_bid + s[BID]] = 1.0
    w = max_bid + 2
    for k in range(n):
        q = seat + k
        if q >= n:
            q -= n
        b = o_auction + k * w
        zero(out, b, b + w)
        out[b + s[BIDS0 + q] + 1] = 1.0


# -- field declarations the climbing games share ---------------------------------------------


def planes_doc(n_ranks: int, depth: int) -> str:
    """How a card field of :func:`put_cards` / :func:`set_cards` reads, for a field's doc."""
    return f"{n_ranks} ranks x {depth} planes, bit r*{depth}+k-1 set when holding >= k of rank r"


def table_fields(n: int, C: int, recent: int, hand_max: int, others_doc: str) -> list:
    """The fields :func:`put_table` / :func:`set_table` write (and ``others``, which the game
    fills between them), in their order: ``played``, ``others``, ``hand_sizes``, ``to_beat``,
    ``to_beat_type``, ``to_beat_seat``, ``recent``.  ``C`` is the size of a card field."""
    return [
        Field("played", n * C, "cards played so far by each relative seat, seat 0 first"),
        Field("others", C, others_doc),
        Field("hand_sizes", n, f"cards in hand per relative seat / {hand_max}"),
        Field("to_beat", C, "cards of the play to beat (zeros on a free lead)"),
        Field("to_beat_type", N_FAMILIES,
              "one-hot family of the play to beat (see combos.FAMILY_NAMES)"),
        Field("to_beat_seat", n, "one-hot relative seat of the play to beat"),
        Field("recent", recent * (C + 1 + n),
              f"last {recent} play-phase actions, most recent first; each: cards ({C}), "
              f"pass flag (1), relative seat one-hot ({n}); zeros when absent"),
    ]


def auction_fields(n: int, max_bid: int, bid_doc: str, auction_what: str) -> list:
    """The fields :func:`put_auction` / :func:`set_auction` write: ``bid`` (one-hot, doc
    ``bid_doc``) and ``auction`` (per relative seat one-hot of ``auction_what``)."""
    return [
        Field("bid", max_bid + 1, bid_doc),
        Field("auction", n * (max_bid + 2),
              f"per relative seat one-hot of {auction_what}: none, pass, bid 1..{max_bid}"),
    ]


# -- more writers the games share ----------------------------------------------------------------


@njit(**HOT_INLINE)
def put_seat_or_none(out, at, q, seat, n):
    """One-hot (``n + 1`` slots at ``at``) of seat ``q`` relative to ``seat``; the last slot
    when ``q < 0`` (not decided yet: no landlord, digger, 娘娘...).  Sets only the one."""
    out[at + (rel_seat(q, seat, n) if q >= 0 else n)] = 1.0


@njit(**HOT_INLINE)
def set_seat_or_none(out, at, q, seat, n):
    """:func:`put_seat_or_none` writing all ``n + 1`` slots."""
    zero(out, at, at + n + 1)
    put_seat_or_none(out, at, q, seat, n)


@njit(cache=True)
def deck_less_hand(s, ho, n_natural, copies, joker_copies):
    """Counts per rank index of a deck of ``copies`` cards of each natural rank
    ``0..n_natural-1`` and ``joker_copies`` of each joker (rank indices ``n_natural``,
    ``n_natural + 1``), less the hand at state offset ``ho``: the start of an ``others`` field."""
    others = np.zeros(16, np.int64)
    for r in range(n_natural):
        others[r] = copies
    others[n_natural] = joker_copies
    others[n_natural + 1] = joker_copies
    for r in range(16):
        others[r] -= s[ho + r]
    return others
