"""Lanxi Wulong's plays: the combination set and its play table, and the move generator that
lists the rows a hand (wild jokers included) can make against the play to beat.

The rules and the engine's decisions are in :mod:`cardenvs.games.wulong`.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from numba import njit

from ..core.cards import Deck
from ..core.combos import (
    AIRPLANE, AIRPLANE_PAIRS, BOMB, FAMILY_NAMES, PAIR, PAIR_CHAIN, ROCKET, SINGLE, STRAIGHT, TRIO,
    TRIO_PAIR, ComboRules, enumerate_plays,
)
from ..core.kernels import planes
from ..core.state import hand_off
from ..core.table import Table, cached
from ..core.wild import popcount, wild_count
from .wulong_layout import HAND, JB, JR, NAT, NR, O_LK, O_WB, O_WR, ORDER


def combo_rules(wild_jokers: str = "both") -> ComboRules:
    """Lanxi Wulong's combination set; ``wild_jokers`` sets how many wilds the deck holds."""
    wilds = {"both": 4, "big_only": 2, "none": 0}[wild_jokers]
    return ComboRules(
        Deck.standard(ORDER, 2), chain_lo=0, chain_hi=ORDER.index("A"), straight=(5, 12),
        pair_chain=(3, 12), airplane=(2, 8), airplane_singles=None, airplane_pairs=(2, 5),
        trio_single=False, four_two_singles=False, four_two_pairs=False, joker_pairs=True,
        bomb_sizes=tuple(range(4, 9 + wilds)), bomb_order="size_rank",
        rocket=(("B", 2), ("R", 2)), double_min_bomb=99, max_cards=HAND,
        wilds=wilds, chain_only=(0,), pairs_both_joker_pairs=True,
    )


def wild_slots(wild_jokers: str) -> list[int]:
    """Rank slots of the wild jokers under an option value."""
    return {"both": [JB, JR], "big_only": [JR], "none": []}[wild_jokers]


def wulong_plays(rules: ComboRules, joker_order: str = "big_over_small") -> list:
    """Every play; with ``joker_order="first_played"`` single ``R`` takes single ``B``'s key
    (equal singles: neither beats the other)."""
    plays = enumerate_plays(rules)
    if joker_order == "big_over_small":
        return plays
    return [replace(p, key=JB) if p.family == SINGLE and p.key == JR else p for p in plays]


@cached
def play_table(wild_jokers: str = "both", joker_order: str = "big_over_small") -> Table:
    """The (cached) play table of an option set."""
    rules = combo_rules(wild_jokers)
    return Table(rules.deck, wulong_plays(rules, joker_order))


# -- kernels: which rows fit a hand -----------------------------------------------------------


@njit(cache=True)
def row_fits(s, seat, row, tab, wr):
    """The wild generator's test for one row (see :mod:`cardenvs.core.wild`)."""
    ho = hand_off(seat)
    h = s[ho:ho + 16]
    lo, hi = planes(h)
    w = wild_count(h, wr.wslots)
    mlo = tab.lo[row] & ~lo
    mhi = tab.hi[row] & ~hi
    if ((mlo | mhi) & wr.jall) != 0:
        return False
    d = popcount(mlo) + popcount(mhi)
    if d + wr.wfix[row] > w:
        return False
    if d + wr.over[row] > 0 and wr.natmax[row] - d < 1:
        return False
    return True


# -- fast move generation ------------------------------------------------------------------------
#
# The core's :func:`cardenvs.core.wild.gen_legal_wild` tests every group of the table and then
# every row of a fitting group.  :func:`gen_rows` makes the same rows (the differential tests
# compare the two, order included) from the hand's deficits directly: a body of ``m`` cards of
# each rank of a window misses ``sum max(0, m - h_r)`` cards, which the wild jokers must make
# up (prefix sums over 3..A give every window at once; a longer window misses at least as
# many).  5,587 of the 6,039 rows are trio chains with pairs: for a body that fits, the rows
# of its kicker variants are tested against the hand's per-rank kicker costs (a natural pair
# misses 0, 1 or 2 cards; a joker pair must be held and then is no longer wild) by two
# popcounts of the row's kicker-rank mask, branch-free.  Rows come out in ascending order.

# lookup layout (an int64 array kept in the options vector from o[O_LK]; built by :func:`lookups`)
LK_SGL = 0  # count, then (row, rank) pairs in row order: singles
LK_PAIR = LK_SGL + 31
LK_TRIO = LK_PAIR + 31
LK_BOMB = LK_TRIO + 27  # [size 0..12][rank 0..12] -> row or -1
LK_ROCKET = LK_BOMB + 169
LK_CHAIN = LK_ROCKET + 1  # [m - 1][length 0..12][top 0..11] -> row or -1
LK_TP = LK_CHAIN + 3 * 13 * 12  # [trio rank] -> kicker group or -1
LK_AP = LK_TP + 13  # [length 0..12][top 0..11] -> kicker group or -1
LK_KMOFF = LK_AP + 13 * 12  # where the kicker masks start (after the groups)
LK_KG = LK_KMOFF + 1  # kicker groups: first row, number of rows
KG = 2


def lookups(table: Table) -> np.ndarray:
    """The lookup array of :func:`gen_rows` for a play table (checked against the table)."""
    plays = table.plays
    lk = np.full(LK_KG, -1, np.int64)
    lists: dict[int, list[tuple[int, int]]] = {SINGLE: [], PAIR: [], TRIO: []}  # (row, rank)
    tp_groups: dict[int, list[int]] = {}
    ap_groups: dict[tuple[int, int], list[int]] = {}
    for t, p in enumerate(plays):
        c = p.counts
        if p.family in lists:
            lists[p.family].append((t, int(np.flatnonzero(c)[0])))
        elif p.family == BOMB:
            r = int(np.flatnonzero(c)[0])
            lk[LK_BOMB + 13 * sum(c) + r] = t
        elif p.family == ROCKET:
            lk[LK_ROCKET] = t
        elif p.family in (STRAIGHT, PAIR_CHAIN, AIRPLANE):
            m = {STRAIGHT: 1, PAIR_CHAIN: 2, AIRPLANE: 3}[p.family]
            lk[LK_CHAIN + ((m - 1) * 13 + p.length) * 12 + p.key] = t
        elif p.family == TRIO_PAIR:
            tp_groups.setdefault(p.key, []).append(t)
        elif p.family == AIRPLANE_PAIRS:
            ap_groups.setdefault((p.length, p.key), []).append(t)
        else:
            raise AssertionError(f"unexpected family {FAMILY_NAMES[p.family]}")
    for fam, off, size in ((SINGLE, LK_SGL, 15), (PAIR, LK_PAIR, 15), (TRIO, LK_TRIO, 13)):
        ranked = lists[fam]
        if len(ranked) > size or [r for r, _ in ranked] != sorted(r for r, _ in ranked):
            raise AssertionError("unexpected single/pair/trio rows")
        lk[off] = len(ranked)
        for i, (row, rank) in enumerate(ranked):
            lk[off + 1 + 2 * i], lk[off + 2 + 2 * i] = row, rank
    kg: list[int] = []

    def add_group(rows: list[int]) -> int:
        if rows != list(range(rows[0], rows[0] + len(rows))):
            raise AssertionError("a kicker group's rows are not contiguous")
        kg.extend([rows[0], len(rows)])
        return len(kg) // KG - 1

    for r, rows in sorted(tp_groups.items()):
        lk[LK_TP + r] = add_group(rows)
    for (length, top), rows in sorted(ap_groups.items()):
        lk[LK_AP + length * 12 + top] = add_group(rows)
    # per row: bit r set when the row carries a kicker pair of rank r
    km = np.zeros(len(plays), np.int64)
    for t, p in enumerate(plays):
        if p.family in (TRIO_PAIR, AIRPLANE_PAIRS):
            for kicker in np.flatnonzero(np.array(p.counts) - np.array(p.body)):
                km[t] |= 1 << int(kicker)
    lk[LK_KMOFF] = LK_KG + len(kg)
    return np.concatenate([lk, np.array(kg, np.int64), km])


@njit(cache=True)
def _emit_class(h, w, lk, off, tab, kmin, out, n):
    """Singles, pairs or trios whose rank the hand holds enough of (``lk[off]`` lists them);
    only rows with a key above ``kmin``."""
    for i in range(lk[off]):
        row = lk[off + 1 + 2 * i]
        if tab.key[row] > kmin:
            r = lk[off + 2 + 2 * i]
            need = tab.counts[row, r]
            # a natural rank: the cards short may be wild, but one natural card at least;
            # a joker single / pair: the jokers themselves
            if h[r] >= need or (r < JB and h[r] >= 1 and need - h[r] <= w):
                out[n] = row
                n += 1
    return n


@njit(cache=True)
def _kickers(m1, m2, mi, lk, gi, budget, out, n):
    """Rows of kicker group ``gi`` whose kicker pairs cost at most ``budget`` wilds: each row's
    kicker-rank mask against the hand's masks of ranks whose pair costs >= 1 wild (``m1``),
    2 wilds (``m2``) or cannot be made (``mi``), branch-free."""
    s0 = lk[LK_KG + gi * KG]
    km0 = lk[LK_KMOFF] + s0
    for j in range(lk[LK_KG + gi * KG + 1]):
        km = lk[km0 + j]
        c = popcount(km & m1) + popcount(km & m2)
        out[n] = s0 + j
        n += (c <= budget) & ((km & mi) == 0)
    return n


@njit(cache=True)
def gen_rows(h, prev, tab, o, out):
    """Every row the hand ``h`` (jokers included) can make against ``prev`` (-1: free lead),
    ascending, written to ``out``; returns how many.  The same rows as
    :func:`cardenvs.core.wild.gen_legal_wild` with this game's table."""
    lk = o[o[O_LK]:]
    w = 0
    if o[O_WB] == 1:
        w += h[JB]
    if o[O_WR] == 1:
        w += h[JR]
    pre = np.empty(13, np.int64)  # deficits of the chain windows, as prefix sums
    n = 0
    if prev >= 0:
        fam = tab.family[prev]
        ppow = tab.power[prev]
        pkey = tab.key[prev]
        plen = tab.length[prev]
    else:
        fam = -1
        ppow = 0
        pkey = -1
        plen = 0
    free = prev < 0
    if ppow == 0:
        if free or fam == SINGLE:
            n = _emit_class(h, w, lk, LK_SGL, tab, pkey, out, n)
        if free or fam == PAIR:
            n = _emit_class(h, w, lk, LK_PAIR, tab, pkey, out, n)
        if free or fam == TRIO:
            n = _emit_class(h, w, lk, LK_TRIO, tab, pkey, out, n)
        # kicker ranks whose pair costs >= 1 wild, 2 wilds, or cannot be made: a natural pair
        # misses max(0, 2 - h_r) cards; a joker pair is the jokers themselves (held twice, and
        # then no longer wild)
        m1 = np.int64(0)
        m2 = np.int64(0)
        mi = np.int64(1)  # 3s are never kickers
        if free or fam == TRIO_PAIR or fam == AIRPLANE_PAIRS:
            for r in range(1, NAT):
                if h[r] < 2:
                    m1 |= np.int64(1) << r
                    if h[r] == 0:
                        m2 |= np.int64(1) << r
            for j in range(JB, NR):
                if h[j] < 2:
                    mi |= np.int64(1) << j
                elif (j == JB and o[O_WB] == 1) or (j == JR and o[O_WR] == 1):
                    m1 |= np.int64(1) << j  # the two jokers of the pair are no longer wild
                    m2 |= np.int64(1) << j
        if free or fam == TRIO_PAIR:
            for r in range(1, NAT):
                gi = lk[LK_TP + r]
                # the trio may be all wild (budget <= 1 then: the pair holds a natural card)
                if gi >= 0 and r > pkey:
                    d3 = max(0, 3 - h[r])
                    if d3 <= w:
                        n = _kickers(m1, m2, mi, lk, gi, w - d3, out, n)
        # chains: prefix sums of the deficits of m cards per rank over 3..A
        pre[0] = 0
        for m in range(1, 4):
            cfam = STRAIGHT + m - 1  # STRAIGHT, PAIR_CHAIN, AIRPLANE
            want = free or fam == cfam or (m == 3 and fam == AIRPLANE_PAIRS)
            if not want:
                continue
            for r in range(12):
                pre[r + 1] = pre[r] + max(0, m - h[r])
            for fam2 in range(2):  # the plain chain, then (m == 3) with pairs
                if fam2 == 1 and m != 3:
                    break
                this = cfam if fam2 == 0 else AIRPLANE_PAIRS
                if not (free or fam == this):
                    continue
                for length in range(2, 13):
                    if not free and length != plen:
                        continue
                    any_fit = False
                    for top in range(length - 1, 12):
                        if pre[top + 1] - pre[top + 1 - length] > w:
                            continue
                        any_fit = True
                        if top <= pkey and not free:
                            continue
                        if fam2 == 0:
                            row = lk[LK_CHAIN + ((m - 1) * 13 + length) * 12 + top]
                            if row >= 0:
                                out[n] = row
                                n += 1
                        else:
                            gi = lk[LK_AP + length * 12 + top]
                            if gi >= 0:
                                left = w - (pre[top + 1] - pre[top + 1 - length])
                                n = _kickers(m1, m2, mi, lk, gi, left, out, n)
                    if not any_fit:
                        break  # a longer window misses at least as many cards
    # bombs (size, then rank: ascending rows) and the rocket
    most = 0
    for r in range(1, NAT):
        most = max(most, h[r])
    for size in range(4, min(12, most + w) + 1):
        for r in range(1, NAT):
            if h[r] >= 1 and size - h[r] <= w:
                row = lk[LK_BOMB + 13 * size + r]
                if row >= 0 and tab.power[row] > ppow:
                    out[n] = row
                    n += 1
    row = lk[LK_ROCKET]
    if row >= 0 and h[JB] >= 2 and h[JR] >= 2 and tab.power[row] > ppow:
        out[n] = row
        n += 1
    return n
