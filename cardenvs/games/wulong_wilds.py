"""Lanxi Wulong's realisations: which physical cards (how many small and big jokers standing
for each natural rank) can make a play-table row from a hand, and the 报牌 declarer's top-card
rule that every realisation he plays must meet.

The rules and the engine's decisions are in :mod:`cardenvs.games.wulong`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..core.state import hand_off
from .wulong_layout import JB, JR, NAT, NR, O_MUST, O_WB, O_WR, X_DECL


# -- the declarer's top card --------------------------------------------------------------------


@njit(cache=True)
def top_card(s, seat, o):
    """``(rank, m)``: the seat's highest rank (``R`` > ``B`` > 2 > ...) and how many cards of
    it each play must hold under ``declare_must_include``; ``(-1, 0)`` for an empty hand."""
    ho = hand_off(seat)
    for r in range(NR - 1, -1, -1):
        c = s[ho + r]
        if c > 0:
            mode = o[O_MUST]
            if mode == 1:
                return r, 1
            if mode == 2:
                return r, c
            return r, (c if c >= 4 else 1)
    return -1, 0


@njit(cache=True)
def declared_row_ok(s, seat, row, tab, o, top, m):
    """Whether a row the hand can make has a realisation holding ``m`` cards of rank ``top``.

    Natural top rank: the row needs ``m`` cells of it (naturals fill them).  A joker: it is in
    the row as itself (``c_j``) or stands in; as many jokers of that kind can stand in as the
    hand has spare, but at least one natural card must stay.
    """
    c = tab.counts[row]
    if top < JB:
        return c[top] >= m
    n_nat = 0
    for r in range(NAT):
        n_nat += c[r]
    ho = hand_off(seat)
    if top == JR:
        j = c[JR]
        wild = o[O_WR] == 1
        spare = s[ho + JR] - c[JR]
    else:
        j = c[JB]
        wild = o[O_WB] == 1
        spare = s[ho + JB] - c[JB]
    extra = 0
    if wild and n_nat >= 1:
        extra = min(spare, n_nat - 1)
    return j + extra >= m


# -- realisations ---------------------------------------------------------------------------------


@njit(cache=True)
def scan_realisations(s, seat, row, tab, o, plen, pseq, mark, best):
    """Enumerate the realisations of ``row`` from the seat's hand whose canonical pick
    sequence starts with ``pseq[:plen]``; honours the declarer's top-card rule.

    A realisation is ``k`` (jokers standing in per natural rank) and ``b`` (how many of them
    are small jokers); its pick sequence lists the stood-for ranks in ascending order, the
    first ``b`` as ``B`` (code ``r``), the rest as ``R`` (code ``16 + r``).  ``mark`` (NPICK)
    gets the options after the prefix: ``r`` = ``B[r]``, ``13 + r`` = ``R[r]``, ``26`` = done.
    ``best[:13]`` / ``best[13]`` receive ``k`` / ``b`` of the first matching realisation.
    Returns how many realisations match.
    """
    ho = hand_off(seat)
    c = tab.counts[row]
    jb = c[JB]
    jr = c[JR]
    if jb > s[ho + JB] or jr > s[ho + JR]:
        return 0
    ab = s[ho + JB] - jb if o[O_WB] == 1 else 0
    ar = s[ho + JR] - jr if o[O_WR] == 1 else 0
    W = ab + ar
    buf = np.empty(4 * NAT, np.int64)
    lo = buf[0:NAT]
    hi = buf[NAT:2 * NAT]
    pos = buf[2 * NAT:3 * NAT]
    k = buf[3 * NAT:4 * NAT]
    n_nat = 0
    K = 0
    for r in range(NAT):
        lo[r] = max(0, c[r] - s[ho + r])
        hi[r] = c[r]
        n_nat += c[r]
        K += lo[r]
    bmin0 = 0
    qmin0 = 0
    if s[X_DECL + seat] == 1:
        top, m = top_card(s, seat, o)
        if top < JB:
            hi[top] = c[top] - m
        elif top == JB:
            bmin0 = m - jb
        else:
            qmin0 = m - jr
    if K > W:
        return 0
    for r in range(NAT):
        if lo[r] > hi[r]:
            return 0
    npos = 0
    for r in range(NAT):
        k[r] = lo[r]
        if hi[r] > lo[r]:
            pos[npos] = r
            npos += 1
    count = 0
    while True:
        if K == 0 or n_nat - K >= 1:
            bmin = max(bmin0, K - ar, 0)
            bmax = min(ab, K, K - qmin0)
            for b in range(bmin, bmax + 1):
                ok = K >= plen  # a realisation shorter than the prefix does not extend it
                nxt = -1
                i = 0
                for r in range(NAT):
                    for _ in range(k[r]):
                        code = r if i < b else 16 + r
                        if i < plen:
                            if code != pseq[i]:
                                ok = False
                        elif i == plen:
                            nxt = code
                        i += 1
                    if not ok or i > plen:
                        break
                if ok:
                    count += 1
                    if count == 1:
                        for r in range(NAT):
                            best[r] = k[r]
                        best[NAT] = b
                    if K == plen:
                        mark[2 * NAT] = 1
                    elif nxt >= 16:
                        mark[NAT + nxt - 16] = 1
                    else:
                        mark[nxt] = 1
        # next k: an odometer over the ranks with a choice, total at most W
        j = 0
        while j < npos:
            r = pos[j]
            if k[r] < hi[r] and K < W:
                k[r] += 1
                K += 1
                break
            K -= k[r] - lo[r]
            k[r] = lo[r]
            j += 1
        if j == npos:
            break
    return count
