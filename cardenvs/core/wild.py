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

**The bracket notation** of a realisation (one way to make an effective play with physical
cards), shared by every wild-joker game's rules queries and action strings: a wild joker
standing in is written as the joker followed by the rank it stands for in brackets, any other
character is a card as itself: ``"45R[6]78"`` is the straight ``45678`` made with the big
joker as its 6, ``"444R[4]R[4]"`` the bomb ``44444``, ``"444RR"`` a trio with a pair of big
jokers as themselves.  :func:`parse_wild` reads it (:class:`WildPlay`: effective cards, which
joker stands for which rank, the physical cards), :func:`format_wild` writes it canonically
(natural ranks in rank order, each rank's naturals then its stand-ins, jokers by slot; jokers
as themselves last), :func:`find_wild` finds the play-table row of a play written either way
and :func:`sort_wild` orders query answers.
"""

from __future__ import annotations

import itertools
import re
from functools import lru_cache
from typing import Iterable, NamedTuple, Optional, Sequence

import numpy as np
from numba import njit

from .cards import NSLOT, SUITS, Deck
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


def pack_wild_rows(o: np.ndarray, wr: WildRows, jall_at: int, wslots_at: int, t_at: int,
                   rows_at: int) -> None:
    """Write ``wr`` into a game's options vector ``o``, where :func:`wild_rows_at` reads it:
    ``jall``, ``wslots`` and the number of rows T at ``o[jall_at]``, ``o[wslots_at]``,
    ``o[t_at]``, then ``wfix``, ``over`` and ``natmax`` (T each) from ``o[rows_at]`` on."""
    T = len(wr.wfix)
    if len(o) < rows_at + 3 * T:
        raise ValueError(f"the options vector ({len(o)} entries) has no room for {T} rows of "
                         f"WildRows from entry {rows_at} on")
    o[jall_at], o[wslots_at], o[t_at] = wr.jall, wr.wslots, T
    o[rows_at:rows_at + T] = wr.wfix
    o[rows_at + T:rows_at + 2 * T] = wr.over
    o[rows_at + 2 * T:rows_at + 3 * T] = wr.natmax


# -- numba kernels ----------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def wild_rows_at(o, jall_at, wslots_at, t_at, rows_at):
    """The :class:`WildRows` that :func:`pack_wild_rows` wrote into the options vector ``o``
    at these entries (views of ``o``; a game passes its layout's constants)."""
    T = o[t_at]
    a = rows_at
    return WildRows(o[jall_at], o[wslots_at], o[a:a + T], o[a + T:a + 2 * T],
                    o[a + 2 * T:a + 3 * T])


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


# -- the bracket notation (rules queries, action strings) --------------------------------------------


class WildPlay(NamedTuple):
    """A play written in the bracket notation, as read by :func:`parse_wild`.

    effective: int64[16] effective cards: a joker standing in counts as the rank it stands
        for; a joker as itself counts in its own slot.
    stands: int64[16, 16]: ``stands[j, r]`` jokers of slot ``j`` standing for rank ``r``.
    text: the writing with each ``J[x]`` replaced by ``x`` (other characters kept, so the
        ``body+kickers`` notation of :meth:`cardenvs.core.table.Table.find` still works).
    """

    effective: np.ndarray
    stands: np.ndarray
    text: str

    @property
    def physical(self) -> np.ndarray:
        """The cards actually played: naturals, jokers as themselves and jokers standing in."""
        return self.effective - self.stands.sum(0) + self.stands.sum(1)

    @property
    def stood_for(self) -> np.ndarray:
        """int64[16]: how many jokers stand for each rank."""
        return self.stands.sum(0)

    @property
    def n_stand(self) -> int:
        """Jokers standing in."""
        return int(self.stands.sum())


@lru_cache(maxsize=64)
def _natural_ranks_cached(deck: Deck, joker_slots: tuple[int, ...]) -> tuple[int, ...]:
    js = set(joker_slots)
    return tuple(r for r in range(deck.n_ranks) if r not in js)


def _natural_ranks(deck: Deck, joker_slots: Sequence[int]) -> tuple[int, ...]:
    return _natural_ranks_cached(deck, tuple(int(j) for j in joker_slots))


#: a joker standing in, ``J[x]``: group 1 is the stood-for rank (keys of :func:`sort_wild`)
_STAND_RE = re.compile(r".\[(.)\]")


def parse_wild(text: str, deck: Deck, joker_slots: Sequence[int], wild_slots: Sequence[int],
               *, what: str = "play") -> WildPlay:
    """Read a play written in the bracket notation (``"45R[6]78"``; ``"45678"`` is plain).

    ``joker_slots``: rank indices of the deck's jokers; ``wild_slots``: those that may stand
    in.  Spaces, commas and ``+`` are skipped (they are kept in :attr:`WildPlay.text`).
    Raises ``ValueError`` naming the problem: an unknown card, a bracket after a card that is
    no wild joker, a joker standing for a joker or for nothing, an unclosed bracket, more
    physical copies of a card than the deck holds, or jokers standing in with no natural card
    in the play (a joker never stands in alone).  A writing with no bracket is *plain*: its
    natural cards are the effective ones, jokers may have stood in for some of them, so only
    its jokers are held to the deck's copies; a writing with brackets names every physical
    card.  Whether the effective cards are a play of the game is :func:`find_wild`'s
    question.
    """
    if not isinstance(text, str):
        raise TypeError(f"{what} must be a string, got {type(text).__name__}")
    js, ws = set(joker_slots), set(wild_slots)
    naturals = _natural_ranks(deck, joker_slots)
    nat_names = " ".join(deck.order[r] for r in naturals)
    eff = [0] * NSLOT
    stand_list: list[tuple[int, int]] = []
    plain: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in " ,+":
            plain.append(ch)
            i += 1
            continue
        if ch == "[":
            after = repr(text[i - 1]) if i > 0 else "nothing"
            raise ValueError(f"{what} {text!r}: '[' after {after}: only a wild joker takes a "
                             f"bracket with the rank it stands for, e.g. "
                             f"'{deck.order[min(ws) if ws else min(js)]}[5]'")
        if ch == "]":
            raise ValueError(f"{what} {text!r}: ']' without an opening '['")
        if ch in SUITS:
            raise ValueError(f"{what} {text!r}: suit letter {ch!r} is not used here; write "
                             f"ranks only ({' '.join(deck.order)})")
        r = deck.order.find(ch)
        if r < 0:
            raise ValueError(f"{what} {text!r}: unknown card {ch!r}; this game's ranks are "
                             f"{' '.join(deck.order)}")
        if i + 1 < n and text[i + 1] == "[":
            if r not in js:
                raise ValueError(f"{what} {text!r}: '[' after {ch!r}, which is no joker: only "
                                 f"a wild joker takes a bracket with the rank it stands for")
            if r not in ws:
                raise ValueError(f"{what} {text!r}: {ch} is not wild in this game (with these "
                                 f"options); it plays only as itself")
            close = text.find("]", i + 2)
            if close < 0:
                raise ValueError(f"{what} {text!r}: unclosed '[' after {ch!r}")
            inner = text[i + 2:close]
            t = deck.order.find(inner) if len(inner) == 1 else -1
            if t < 0 or t in js:
                raise ValueError(f"{what} {text!r}: {ch}[{inner}] must stand for one natural "
                                 f"rank ({nat_names})")
            stand_list.append((r, t))
            eff[t] += 1
            plain.append(inner)
            i = close + 1
            continue
        eff[r] += 1
        plain.append(ch)
        i += 1
    stands = np.zeros((NSLOT, NSLOT), np.int64)
    phys = list(eff)
    for j, t in stand_list:
        stands[j, t] += 1
        phys[j] += 1
        phys[t] -= 1
    wp = WildPlay(np.array(eff, np.int64), stands, "".join(plain))
    for r in range(deck.n_ranks):
        # a plain writing ("44444") may hide jokers standing in: only its jokers are exact
        if phys[r] > deck.copies[r] and (r in js or stand_list):
            raise ValueError(f"{what} {text!r}: too many {deck.order[r]!r} (the deck holds "
                             f"{deck.copies[r]})")
    if stand_list and not any(phys[r] for r in naturals):
        raise ValueError(f"{what} {text!r}: a joker stands in only in a play holding at least "
                         f"one natural card")
    return wp


def format_wild(deck: Deck, effective: Sequence[int], stands: np.ndarray,
                joker_slots: Sequence[int]) -> str:
    """Write a realisation canonically: for each natural rank in rank order its natural cards,
    then the jokers standing for it (by joker slot: ``B[5]`` before ``R[5]``); then the jokers
    as themselves (``"45R[6]78"``, ``"444R[4]R[4]"``, ``"444RR"``).

    ``effective``: the effective cards (int64[16]); ``stands[j, r]``: jokers of slot ``j``
    standing for rank ``r``.  :func:`parse_wild` reads the result back to the same arrays.
    """
    eff = effective.tolist() if isinstance(effective, np.ndarray) else [int(x) for x in effective]
    order = deck.order
    js = sorted(joker_slots)
    sarr = np.asarray(stands, np.int64)[js]
    st = sarr.tolist()  # per joker slot: stand-ins per rank
    tot = sarr.sum(0).tolist()
    parts = []
    for r in _natural_ranks(deck, joker_slots):
        k = tot[r]
        if k > eff[r]:
            raise ValueError(f"{k} jokers stand for {order[r]!r} but the play holds only "
                             f"{eff[r]} of it")
        if eff[r]:
            parts.append(order[r] * (eff[r] - k))
        if k:
            for i, j in enumerate(js):
                if st[i][r]:
                    parts.append(f"{order[j]}[{order[r]}]" * st[i][r])
    for j in js:
        parts.append(order[j] * eff[j])
    return "".join(parts)


def find_wild(table, text: str, family: Optional[str], joker_slots: Sequence[int],
              wild_slots: Sequence[int], *, strict: bool = True,
              what: str = "prev") -> tuple[int, WildPlay]:
    """The play-table row of a play written plainly (``"45678"``) or with its jokers
    (``"45R[6]78"``), and the parsed :class:`WildPlay`.

    ``family`` / ``strict`` as in :meth:`cardenvs.core.table.Table.find`.  A ``ValueError``
    says when the effective cards are no play of the game (e.g. a joker standing for a rank
    the combination cannot use, ``"5B[7]"``), and hints at the bracket notation when a wild
    joker is written bare (``"555B"``).
    """
    wp = parse_wild(text, table.deck, joker_slots, wild_slots, what=what)
    try:
        row = table.find(wp.text, family, strict=strict, what=what)
    except ValueError as e:
        if wp.n_stand:
            raise ValueError(f"{what} {text!r} reads {wp.text!r} with its jokers standing "
                             f"in: {e}") from None
        bare = [table.deck.order[j] for j in wild_slots if wp.effective[j]]
        if bare:
            raise ValueError(f"{e}; a wild joker standing in is written with the rank it "
                             f"stands for in brackets, e.g. '{bare[0]}[5]'") from None
        raise
    return row, wp


def sort_wild(texts: Iterable[str], deck: Deck) -> list[str]:
    """Distinct plays (plain or bracket notation) sorted as rules queries list them: by the
    number of effective cards, then by their ranks (lowest first, rank by rank), then by the
    writing (``"33"`` before ``"3B[3]"``).  The texts are not validated (write them with
    :func:`format_wild`, or check them with :func:`parse_wild`)."""
    idx = {ch: i for i, ch in enumerate(deck.order)}
    keyed = {}
    for t in texts:
        if t not in keyed:
            plain = _STAND_RE.sub(r"\1", t)
            ranks = sorted(idx[ch] for ch in plain if ch in idx)
            keyed[t] = (len(ranks), ranks, t)
    return sorted(keyed, key=keyed.__getitem__)
