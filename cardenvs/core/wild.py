"""Wild jokers: which effective plays a hand can make when its jokers may stand for ranks.

In Da Niangniang and Lanxi Wulong a joker played with at least one natural card stands for any
natural rank the combination needs.  The play table of such a game lists *effective* plays
(``ComboRules.wilds`` lets a natural rank appear more often than the deck holds it); a row may
also hold jokers *as themselves* (``BR``, ``RR``, ``444RR``, ``BBRR``).  A hand can make row ``t``
when

* it holds every joker the row uses as itself,
* the missing natural cards, ``deficit = sum_r max(0, need_r - have_r)``, are at most the wild
  jokers left over, and
* if any joker stands in (``deficit > 0``) at least one card of the play is natural.

With rank planes ("at least k copies" bits, :mod:`cardenvs.core.table`) the deficit is one
popcount: a cell (plane k, rank r) is missing exactly when the row needs more than k cards of
``r`` and the hand has at most k, so ``deficit = popcount(row_lo & ~hand_lo) + popcount(row_hi
& ~hand_hi)`` (+ the cells beyond plane 8, which a hand never has: ``over``).  Groups whose body
already misses more cells than the hand has wilds are skipped whole, as in the plain
generator.

Which jokers stand in, and whether to spend a joker where naturals exist, are the game's
choices (secondary decisions); this module answers only "can the hand make this effective
play", plus :func:`min_wilds` and a slow reference (:func:`classify_wild`,
:func:`reference_legal_wild`) for the differential tests.
"""

from __future__ import annotations

import itertools
from typing import Iterable, NamedTuple, Optional, Sequence

import numpy as np
from numba import njit

from .cards import NSLOT
from .kernels import planes
from .reference import Reading, beats, classify, submultisets


class WildRows(NamedTuple):
    """Per-row facts the wild generator needs (numba-friendly; build with :func:`wild_rows`).

    jall: plane mask of every joker slot (a row's joker cells are jokers *as themselves*: a
        missing one can never be stood in for).
    wslots: bit ``r`` set for each wild joker's rank slot (to count the hand's wilds).
    wfix: (T,) wilds the row consumes whatever the hand: wild jokers used as themselves plus
        the cells beyond plane 8 (a hand never holds them, so wilds must stand in).
    over: (T,) the cells beyond plane 8 alone.
    natmax: (T,) natural cards of the row when no cell below plane 8 is missing
        (``ncards - jokers as themselves - over``).
    """

    jall: np.int64
    wslots: np.int64
    wfix: np.ndarray
    over: np.ndarray
    natmax: np.ndarray


def plane_mask(slots: Iterable[int]) -> int:
    """The bits of rank slots ``slots`` in all four planes of a plane word."""
    m = 0
    for r in slots:
        for k in range(4):
            m |= 1 << (16 * k + r)
    return m


def wild_rows(counts: np.ndarray, joker_slots: Sequence[int], wild_slots: Sequence[int]) -> WildRows:
    """Build :class:`WildRows` for a table's ``counts`` (T, 16).

    ``joker_slots``: rank indices of every joker of the deck; ``wild_slots``: those that are
    wild (e.g. both ``B`` and ``R``, or only ``R`` under Lanxi Wulong's ``wild_jokers=
    "big_only"``).
    """
    counts = np.asarray(counts, np.int64)
    js, ws = list(joker_slots), list(wild_slots)
    if not set(ws) <= set(js):
        raise ValueError(f"wild slots {ws} must be joker slots {js}")
    zero = np.zeros(len(counts), np.int64)
    jok_all = counts[:, js].sum(1) if js else zero
    jok_wild = counts[:, ws].sum(1) if ws else zero
    over = np.maximum(counts - 8, 0).sum(1)
    natmax = counts.sum(1) - jok_all - over
    wbits = 0
    for r in ws:
        wbits |= 1 << r
    return WildRows(np.int64(plane_mask(js)), np.int64(wbits),
                    (jok_wild + over).astype(np.int64), over.astype(np.int64),
                    natmax.astype(np.int64))


# -- numba kernels ----------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def popcount(x):
    """Set bits of a non-negative int64."""
    x = x - ((x >> 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    return (x * 0x0101010101010101) >> 56


@njit(cache=True)
def _scan_wild(lo, hi, w, wr, tab, g0, g1, out, n):
    g_lo = tab.g_lo
    g_hi = tab.g_hi
    r_lo = tab.lo
    r_hi = tab.hi
    jm = wr.jall
    wfix = wr.wfix
    over = wr.over
    natmax = wr.natmax
    for g in range(g0, g1):
        mlo = g_lo[g] & ~lo
        mhi = g_hi[g] & ~hi
        if ((mlo | mhi) & jm) != 0 or popcount(mlo) + popcount(mhi) > w:
            continue
        for t in range(tab.g_start[g], tab.g_end[g]):
            mlo = r_lo[t] & ~lo
            mhi = r_hi[t] & ~hi
            if ((mlo | mhi) & jm) != 0:
                continue
            d = popcount(mlo) + popcount(mhi)
            if d + wfix[t] > w:
                continue  # not enough wilds
            if d + over[t] > 0 and natmax[t] - d < 1:
                continue  # wilds stand in but no natural card is played
            out[n] = t
            n += 1
    return n


@njit(cache=True)
def wild_count(counts, wslots):
    """Wild jokers in a hand (``wslots`` from :class:`WildRows`)."""
    w = 0
    for r in range(NSLOT):
        if (wslots >> r) & 1:
            w += counts[r]
    return w


@njit(cache=True)
def gen_legal_wild(counts, prev, tab, wr, out):
    """Legal rows of a hand with wild jokers against row ``prev`` (-1 = free lead).

    ``counts`` is the hand (jokers included); ``wr`` the game's :class:`WildRows`.  Rows are
    written to ``out``; returns how many.
    """
    lo, hi = planes(counts)
    w = wild_count(counts, wr.wslots)
    if prev < 0:
        return _scan_wild(lo, hi, w, wr, tab, 0, tab.g_lo.shape[0], out, 0)
    n = _scan_wild(lo, hi, w, wr, tab, tab.fnext[prev], tab.fend[prev], out, 0)
    return _scan_wild(lo, hi, w, wr, tab, tab.bnext[prev], tab.g_bomb_end[0], out, n)


def min_wilds(hand: Sequence[int], row: Sequence[int], joker_slots: Sequence[int]) -> int:
    """Fewest wild jokers that must stand in for the hand to make the effective play ``row``."""
    js = set(joker_slots)
    return sum(max(0, int(row[r]) - int(hand[r])) for r in range(NSLOT) if r not in js)


# -- slow reference (tests only) --------------------------------------------------------------------


class WildReading(NamedTuple):
    """One way to read a set of cards with wild jokers: the effective counts and the reading."""

    effective: tuple[int, ...]
    reading: Reading


def classify_wild(cards: Sequence[int], rules, joker_slots: Sequence[int],
                  wild_slots: Sequence[int]) -> set[WildReading]:
    """Every (effective play, reading) the card multiset ``cards`` can be played as.

    Straight from the rules pages: each wild joker among the cards is either itself or stands
    for one natural rank; if any stands in, at least one card is natural; the resulting
    multiset is classified by :func:`cardenvs.core.reference.classify` (whose rules put the
    3s of Lanxi Wulong inside chains only, jokers alone as singles or not, and so on).
    """
    c = [int(x) for x in cards] + [0] * (NSLOT - len(cards))
    js = set(joker_slots)
    naturals = [r for r in range(rules.n_ranks) if r not in js]
    has_natural = any(c[r] for r in naturals)
    per_slot = []
    for j in wild_slots:
        opts = [-1] + (naturals if has_natural else [])  # -1: the joker is itself
        per_slot.append([(j, combo) for combo in
                         itertools.combinations_with_replacement(opts, c[j])])
    out: set[WildReading] = set()
    for choice in itertools.product(*per_slot):
        e = list(c)
        for j, combo in choice:
            for target in combo:
                if target >= 0:
                    e[j] -= 1
                    e[target] += 1
        if any(e[r] > rules.limit(r) for r in range(NSLOT)):
            continue
        et = tuple(e)
        for rd in classify(et, rules):
            out.add(WildReading(et, rd))
    return out


def reference_legal_wild(hand: Sequence[int], prev: Optional[Reading], rules,
                         joker_slots: Sequence[int], wild_slots: Sequence[int],
                         sizes: Optional[set[int]] = None) -> set[WildReading]:
    """Every (effective play, reading) a hand can play on a free lead (``prev=None``) or that
    beats the reading ``prev`` (README convention 3), by enumerating every sub-multiset of the
    hand (optionally only of the given ``sizes``) and classifying it with its wilds.

    Exponential in the hand: fine up to ~12 cards.
    """
    out: set[WildReading] = set()
    for sub in submultisets(hand, sizes):
        for wr in classify_wild(sub, rules, joker_slots, wild_slots):
            if prev is None or beats(wr.reading, prev):
                out.add(wr)
    return out
