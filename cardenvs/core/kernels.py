"""Numba kernels shared by every game: rank planes, legal-play generation, a seeded PRNG.

Everything here works on ``int64`` scalars and arrays (63 bits of planes suffice: bit 63 is
rank slot 15 of plane 4 / 8, which no game uses), so no ``uint64`` promotion traps.

Speed notes (the raw engine spends most of its time here):

* The hot kernels are compiled with :data:`HOT` options: ``_nrt=False`` (numba's switch for
  its reference-counting runtime: these kernels never allocate, and without it every array
  argument, every ``tab.field`` and every slice costs an atomic increment and decrement; a
  ``PlayTable`` argument alone is 18 arrays) and, through :data:`HOT_INLINE`,
  ``forceinline=True`` (LLVM inlines them into their caller, so the ``PlayTable`` is not
  copied onto the stack at every call level).  A function with ``_nrt=False`` cannot allocate
  (numba refuses to compile it); callers with the runtime on may call these freely.
* Legal plays are generated per *segment* of the play table (see
  :mod:`cardenvs.core.table`): a run of groups whose bodies are the same run of ``L``
  consecutive ranks of exactly ``m`` cards each, shifted one rank per group.  A body fits
  exactly when the hand's plane ``m`` has ``L`` consecutive bits from the body's first rank,
  so one AND-shift run mask per segment tells which groups fit, and only their set bits are
  visited: singles, pairs, trios, bombs of a size, chains of a length and the bodies of the
  kicker families cost one mask each instead of one test per group.  Irregular segments (a
  rocket, a preset's odd rows) fall back to testing each group's body.  Rows of a fitting
  group are tested branch-free.  When no body of a segment fits, the segments of longer
  chains after it cannot fit either and are skipped (``SEG_SKIP``).  A large group whose rows
  are every kicker vector of a box (a trio chain carrying any cards of other ranks: Pao De
  Kuai's airplanes, thousands of rows of which a hand makes a few) has a *kicker index*
  (:func:`cardenvs.core.table.kicker_index`): its rows are computed from the hand's own
  kickers (:func:`_emit_kick`), in row order, instead of tested.  A middle-sized group (a
  trio carrying two cards: 90 rows) has a *row-bit index*
  (:func:`cardenvs.core.table.row_bits`): for each plane bit its rows need beyond the body,
  the set of those rows as up to four 64-bit words, so the rows the hand makes are the words
  with the rows of its missing bits cleared (one AND-NOT per missing bit and word), read out
  with ``cttz`` (:func:`_emit_bits`).  The plain per-group scan (:func:`gen_legal_scan`) stays
  as the reference for the differential tests.
* *Whole-hand rows* (a play rule of :mod:`cardenvs.core.follow`: a row of fewer cards than its
  family's full size is legal only as the mover's whole hand) are applied in the scan when the
  caller asks (:func:`gen_rows_whole`): per segment (one family and length) the fewest cards a
  row must hold, ``min(full, hand size)``, compared with each row's card count as it is
  emitted (a kicker index starts counting at the matching number of kickers).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from .cards import NSLOT

#: numba options of the hot kernels (see the module docstring)
HOT = dict(cache=True, _nrt=False)
#: ... and of the small ones that should always be inlined into their callers
HOT_INLINE = dict(cache=True, _nrt=False, forceinline=True)

# segment columns (``PlayTable.seg``; built by :class:`cardenvs.core.table.Table`)
SEG_G0, SEG_G1, SEG_M, SEG_LEN, SEG_S0, SEG_LONE, SEG_SKIP, SEG_FL = 0, 1, 2, 3, 4, 5, 6, 7
SEG_COLS = 8

# -- bit helpers -------------------------------------------------------------------------------


def _int64_op(x, emit):
    """Typing and code of an ``int64 -> int64`` LLVM bit intrinsic (``emit(builder, value)``)."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return emit(builder, args[0])

    return types.int64(types.int64), codegen


@intrinsic
def cttz(typingctx, x):
    """Count of trailing zero bits of a nonzero ``int64`` (LLVM ``cttz``)."""
    return _int64_op(x, lambda b, v: b.cttz(v, ir.Constant(ir.IntType(1), 1)))


@intrinsic
def ctpop(typingctx, x):
    """Count of set bits of an ``int64`` (LLVM ``ctpop``)."""
    return _int64_op(x, lambda b, v: b.ctpop(v))


# -- rank planes --------------------------------------------------------------------------------

# planes contributed by c cards of rank 0 (c clipped to 0..8): bits 16*(k-1) for k <= c
_PLANE_LO = np.array([sum(1 << (16 * k) for k in range(min(c, 4))) for c in range(9)], np.int64)
_PLANE_HI = np.array([sum(1 << (16 * (k - 4)) for k in range(4, min(c, 8))) for c in range(9)],
                     np.int64)


@njit(inline="always", **HOT_INLINE)
def planes(counts):
    """Rank planes ``(lo, hi)`` of a count vector (see :mod:`cardenvs.core.table`)."""
    lo = np.int64(0)
    hi = np.int64(0)
    for r in range(NSLOT):
        c = min(max(counts[r], 0), 8)
        lo |= _PLANE_LO[c] << np.int64(r)
        hi |= _PLANE_HI[c] << np.int64(r)
    return lo, hi


@njit(inline="always", **HOT_INLINE)
def fits(lo, hi, plo, phi):
    return ((plo & ~lo) | (phi & ~hi)) == 0


@njit(**HOT_INLINE)
def plane_bits(lo, hi, m):
    """The 16 rank bits of plane ``m`` (1..8: ranks with at least ``m`` cards)."""
    if m <= 4:
        return (lo >> np.int64(16 * (m - 1))) & np.int64(0xFFFF)
    return (hi >> np.int64(16 * (m - 5))) & np.int64(0xFFFF)


# -- legal plays ----------------------------------------------------------------------------------


@njit(**HOT_INLINE)
def _kick_part(kk, row, pre, x):
    """Rows of the kicker vectors below ``x`` cards of a rank after ``pre`` kickers on the ranks
    below it (``row``: the index's count-table row of the next rank)."""
    return kk[row + pre + x] - kk[row + pre]


@njit(**HOT)
def _emit_kick(lo, hi, kk, d, base, kmin, out, n):
    """Append the rows of a kicker group (first row ``base``, its body fits) that the hand can
    make and that carry at least ``kmin`` kickers (at least the index's own minimum), from the
    group's kicker index ``kk[d:]`` (:func:`cardenvs.core.table.kicker_index`): the hand's
    kicker vectors in lexicographic order (the rows' order), each row computed from the index,
    none tested.

    Position ``p`` is the ``p``-th rank (lowest first) the hand can add kickers of; nibble
    ``p`` of ``R`` and ``A`` holds its rank and its cap (the hand's cards of it, at most the
    index's).  The vectors are a tree walked depth first without recursion: a node is a vector,
    its children add kickers on one position right of its rightmost nonzero one, and in
    lexicographic order a node comes first, then its children by position from the right and,
    for one position, by count.  Nibble ``k`` of ``P`` / ``V`` is the position / count chosen at
    depth ``k`` (at most ``kmax`` nonzero positions); the row is ``g_start`` plus the sum over
    the chosen positions of the vectors below them (:func:`_kick_part`)."""
    kmax = kk[d + 1]
    W = kmax + 1
    cb = d + 2 + NSLOT + W  # count-table row of the rank after rank 0
    A = np.int64(0)
    R = np.int64(0)
    m = np.int64(0)
    for r in range(NSLOT):
        u = kk[d + 2 + r]
        a = np.int64(0)
        while a < u and (plane_bits(lo, hi, a + 1) >> np.int64(r)) & 1:
            a += 1
        if a > 0:
            A |= a << (4 * m)
            R |= np.int64(r) << (4 * m)
            m += 1
    P = np.int64(0)
    V = np.int64(0)
    k = np.int64(0)
    last = np.int64(-1)  # the rightmost chosen position
    s = np.int64(0)
    idx = np.int64(0)
    while True:
        out[n] = base + idx
        n += s >= kmin
        if s < kmax and last < m - 1:  # first child: one kicker on the last position
            last = m - 1
            idx += _kick_part(kk, cb + ((R >> (4 * last)) & 15) * W, s, 1)
            s += 1
            k += 1
            P = (P & ~(np.int64(15) << (4 * k))) | (last << (4 * k))
            V = (V & ~(np.int64(15) << (4 * k))) | (np.int64(1) << (4 * k))
            continue
        while True:  # the next sibling, going up as needed
            if k == 0:
                return n
            p = (P >> (4 * k)) & 15
            v = (V >> (4 * k)) & 15
            s -= v
            row = cb + ((R >> (4 * p)) & 15) * W
            idx -= _kick_part(kk, row, s, v)
            if v < ((A >> (4 * p)) & 15) and s + v < kmax:  # one more of the same rank
                v += 1
                V += np.int64(1) << (4 * k)
                idx += _kick_part(kk, row, s, v)
                s += v
                last = p
                break
            up = (P >> (4 * (k - 1))) & 15 if k > 1 else np.int64(-1)
            if p - 1 > up:  # one kicker on the position left of it
                p -= 1
                P -= np.int64(1) << (4 * k)
                V = (V & ~(np.int64(15) << (4 * k))) | (np.int64(1) << (4 * k))
                idx += _kick_part(kk, cb + ((R >> (4 * p)) & 15) * W, s, 1)
                s += 1
                last = p
                break
            k -= 1


@njit(**HOT_INLINE)
def _ones(k):
    """A word of ``k`` low bits set (0..64 bits: ``k`` clipped)."""
    if k >= 64:
        return np.int64(-1)
    return (np.int64(1) << k) - 1 if k > 0 else np.int64(0)


@njit(**HOT_INLINE)
def _and_words(bits, j, W, m0, m1, m2, m3, flip):
    """``m[w] &= bits[j + w] ^ flip`` for the ``W`` (1..4) words of a row set (``flip = -1``:
    clear the rows of ``bits[j:j + W]``, 0: keep only them)."""
    m0 &= bits[j] ^ flip
    if W > 1:
        m1 &= bits[j + 1] ^ flip
        if W > 2:
            m2 &= bits[j + 2] ^ flip
            if W > 3:
                m3 &= bits[j + 3] ^ flip
    return m0, m1, m2, m3


@njit(**HOT)
def _emit_bits(lo, hi, bits, d, base, cmin, req, out, n):
    """Append the rows of a group with a row-bit index ``bits[d:]`` (first row ``base``, its body
    fits) that the hand makes, that hold at least ``cmin`` cards and, when ``req`` (one plane-1
    bit the body lacks) is nonzero, a card of its rank, in row order.

    The index (:func:`cardenvs.core.table.row_bits`) is ``R, W, used_lo, used_hi, c0, nc``, then
    for each used plane bit (``used_lo``'s bits from the lowest, then ``used_hi``'s) ``W``
    words: bit ``j`` of word ``w`` is set when row ``base + 64 * w + j`` needs that bit; then
    for each card count ``c0 .. c0 + nc - 1`` the ``W`` words of the rows of that many cards.
    The rows the hand makes are the group's ``R`` rows minus those of the bits it lacks, and
    the rows of fewer than ``cmin`` cards go the same way."""
    R = bits[d]
    W = bits[d + 1]
    ul = bits[d + 2]
    uh = bits[d + 3]
    c0 = bits[d + 4]
    b0 = d + 6
    m0 = _ones(R)  # the group's rows, 64 a word
    m1 = _ones(R - 64)
    m2 = _ones(R - 128)
    m3 = _ones(R - 192)
    if req != 0:  # only the rows that need the bit: its slot's words
        if (ul & req) == 0:
            return n
        j = b0 + ctpop(ul & (req - 1)) * W
        m0, m1, m2, m3 = _and_words(bits, j, W, m0, m1, m2, m3, np.int64(0))
    nl = ctpop(ul)
    for part in range(2):
        x = ul & ~lo if part == 0 else uh & ~hi
        u = ul if part == 0 else uh
        first = 0 if part == 0 else nl
        while x != 0:
            b = np.int64(cttz(x))
            j = b0 + (first + ctpop(u & ((np.int64(1) << b) - 1))) * W
            m0, m1, m2, m3 = _and_words(bits, j, W, m0, m1, m2, m3, np.int64(-1))
            x &= x - 1
    if cmin > c0:  # clear the rows of c0 .. cmin - 1 cards
        j = b0 + (nl + ctpop(uh)) * W
        for c in range(c0, min(cmin, c0 + bits[d + 5])):
            m0, m1, m2, m3 = _and_words(bits, j, W, m0, m1, m2, m3, np.int64(-1))
            j += W
    for w in range(W):
        m = m0 if w == 0 else (m1 if w == 1 else (m2 if w == 2 else m3))
        a = base + 64 * w
        while m != 0:
            out[n] = a + cttz(m)
            n += 1
            m &= m - 1
    return n


@njit(**HOT_INLINE)
def _emit_rows(lo, hi, tab, g, lone, cmin, req, out, n):
    """Append the rows of group ``g`` (whose body fits) that fit, hold at least ``cmin`` cards
    and have the plane-1 bit ``req`` (a card of one rank; 0: any row); ``lone``: the group is
    one row equal to its body (already tested).  A group with a kicker index or a row-bit
    index gets its rows from it (:func:`_emit_kick`, :func:`_emit_bits`)."""
    a = tab.g_start[g]
    if req != 0 and (tab.g_lo[g] & req) == req:  # the body has it: so has every row
        req = np.int64(0)
    if lone:
        if req != 0:
            return n
        out[n] = a
        if cmin > 0:
            return n + (tab.ncards[a] >= cmin)
        return n + 1
    d = tab.g_kick[g]
    if d >= 0:
        kk = tab.kick
        kmin = kk[d]
        if cmin > 0:  # a row's kickers: its cards less the body's (one bit a card)
            kmin = max(kmin, cmin - ctpop(tab.g_lo[g]) - ctpop(tab.g_hi[g]))
            if kmin > kk[d + 1]:
                return n
        if req == 0:
            return _emit_kick(lo, hi, kk, d, a, kmin, out, n)
        n0 = n
        n1 = _emit_kick(lo, hi, kk, d, a, kmin, out, n)
        r_lo = tab.lo
        for i in range(n0, n1):
            t = out[i]
            out[n] = t
            n += (r_lo[t] & req) == req
        return n
    d = tab.g_bits[g]
    if d >= 0:
        return _emit_bits(lo, hi, tab.bits, d, a, cmin, req, out, n)
    r_lo = tab.lo
    r_hi = tab.hi
    if cmin > 0 or req != 0:
        nc = tab.ncards
        for t in range(a, tab.g_end[g]):
            out[n] = t
            n += ((((r_lo[t] & ~lo) | (r_hi[t] & ~hi)) == 0) & (nc[t] >= cmin)
                  & ((r_lo[t] & req) == req))
        return n
    for t in range(a, tab.g_end[g]):
        out[n] = t  # written always, kept only when the row fits (no branch to mispredict)
        n += ((r_lo[t] & ~lo) | (r_hi[t] & ~hi)) == 0
    return n


@njit(**HOT_INLINE)
def scan_ranges(lo, hi, tab, ga, gb, gc, gd, out, n):
    """Append the fitting rows of groups ``[ga, gb)`` and then ``[gc, gd)`` to ``out[n:]``, in
    row order; returns the new count.  The same rows as testing every group's body, then every
    row of a fitting group (:func:`gen_legal_scan`)."""
    return scan_whole(lo, hi, tab, ga, gb, gc, gd, out, n, tab.key, -1, 0, 0)


@njit(**HOT_INLINE)
def scan_whole(lo, hi, tab, ga, gb, gc, gd, out, n, full, full_off, hand_n, req):
    """:func:`scan_ranges` keeping only the rows that hold at least ``min(full[full_off + f] *
    length, hand_n)`` cards, ``f`` and ``length`` the row's family and chain length (with
    ``full_off < 0``: every row).  For a fitting row (``ncards <= hand_n``) that is the
    whole-hand rule of :func:`cardenvs.core.follow.is_short`: a short row only as the whole
    hand.  With ``req`` (one plane-1 bit, 0: none) only the rows holding a card of its rank are
    kept (a card the play must hold).  A segment is one family and length
    (:func:`cardenvs.core.table._segments`)."""
    seg = tab.seg
    g_lo = tab.g_lo
    g_hi = tab.g_hi
    nseg = seg.shape[0]
    cm = np.int64(0)  # plane of the cached run mask
    cl = np.int64(0)  # its run length
    plane = np.int64(0)
    run = np.int64(0)
    for part in range(2):
        if part == 1:
            ga = gc
            gb = gd
        if ga >= gb:
            continue
        i = tab.g_seg[ga]
        while i < nseg and seg[i, SEG_G0] < gb:
            g0 = seg[i, SEG_G0]
            j0 = max(ga, g0)
            g1 = min(seg[i, SEG_G1], gb)
            lone = seg[i, SEG_LONE] != 0
            m = seg[i, SEG_M]
            cmin = np.int64(0)
            if full_off >= 0:  # the segment's family * 64 + chain length
                fl = seg[i, SEG_FL]
                cmin = min(full[full_off + (fl >> 6)] * (fl & 63), hand_n)
            if m == 0:  # irregular: test each body
                for g in range(j0, g1):
                    if ((g_lo[g] & ~lo) | (g_hi[g] & ~hi)) == 0:
                        n = _emit_rows(lo, hi, tab, g, lone, cmin, req, out, n)
            else:
                L = seg[i, SEG_LEN]
                if m != cm or L < cl:
                    cm = m
                    plane = plane_bits(lo, hi, m)
                    run = plane
                    cl = 1
                while cl < L:  # bit r of run: ranks r .. r+cl-1 all have >= m cards
                    run &= plane >> cl
                    cl += 1
                bodies = (run >> seg[i, SEG_S0]) & ((np.int64(1) << (seg[i, SEG_G1] - g0)) - 1)
                if bodies == 0:  # no body of this segment fits, nor of the longer chains after it
                    i = seg[i, SEG_SKIP]
                    continue
                bits = (bodies >> (j0 - g0)) & ((np.int64(1) << (g1 - j0)) - 1)
                if not lone:
                    while bits != 0:
                        n = _emit_rows(lo, hi, tab, j0 + cttz(bits), lone, cmin, req, out, n)
                        bits &= bits - 1
                    i += 1
                    continue
                # one row a group, rows in group order: group g0 + j is row g_start[g0] + j
                if req != 0:  # only the bodies holding the rank: j <= q <= j + L - 1
                    q = np.int64(cttz(req)) - seg[i, SEG_S0]
                    if q < 0:
                        bits = np.int64(0)
                    else:
                        j1 = max(q - L + 1, np.int64(0))
                        bits &= (((np.int64(1) << (q - j1 + 1)) - 1) << j1) >> (j0 - g0)
                t0 = tab.g_start[g0] + (j0 - g0)
                if cmin > 0:
                    nc = tab.ncards
                    while bits != 0:
                        t = t0 + cttz(bits)
                        out[n] = t
                        n += nc[t] >= cmin
                        bits &= bits - 1
                else:
                    while bits != 0:
                        out[n] = t0 + cttz(bits)
                        n += 1
                        bits &= bits - 1
            i += 1
    return n


@njit(**HOT_INLINE)
def gen_free(lo, hi, tab, out, n):
    """Append every row the hand (planes lo, hi) can play on a free lead to ``out[n:]``.

    Returns the new count.
    """
    return scan_ranges(lo, hi, tab, 0, tab.g_lo.shape[0], 0, 0, out, n)


@njit(**HOT_INLINE)
def gen_follow(lo, hi, prev, tab, out, n):
    """Append every row that beats row ``prev`` and fits the hand to ``out[n:]``."""
    return scan_ranges(lo, hi, tab, tab.fnext[prev], tab.fend[prev], tab.bnext[prev],
                       tab.g_bomb_end[0], out, n)


@njit(**HOT_INLINE)
def gen_rows(lo, hi, prev, tab, out, n):
    """:func:`gen_free` when ``prev < 0``, else :func:`gen_follow` (one inlined scan)."""
    return gen_rows_whole(lo, hi, prev, tab, out, n, tab.key, -1, 0, 0)


@njit(**HOT_INLINE)
def gen_rows_whole(lo, hi, prev, tab, out, n, full, full_off, hand_n, req):
    """:func:`gen_rows` keeping only the rows allowed by the whole-hand rule and holding the
    rank of ``req`` (see :func:`scan_whole`; ``full_off < 0``, ``req = 0``: every row)."""
    if prev < 0:
        ga = np.int64(0)
        gb = np.int64(tab.g_lo.shape[0])
        gc = np.int64(0)
        gd = np.int64(0)
    else:
        ga = tab.fnext[prev]
        gb = tab.fend[prev]
        gc = tab.bnext[prev]
        gd = tab.g_bomb_end[0]
    return scan_whole(lo, hi, tab, ga, gb, gc, gd, out, n, full, full_off, hand_n, req)


@njit(**HOT_INLINE)
def gen_legal(counts, prev, tab, out):
    """Legal plays (rows) of a hand against ``prev`` (-1 = free lead), written to ``out``."""
    lo, hi = planes(counts)
    return gen_rows(lo, hi, prev, tab, out, 0)


# -- the plain scans (reference for the differential tests of the segment scan) -----------------


@njit(**HOT)
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


@njit(**HOT)
def gen_legal_scan(counts, prev, tab, out):
    """:func:`gen_legal` by testing every group of the ranges one by one (slower; tests)."""
    lo = np.int64(0)
    hi = np.int64(0)
    for r in range(NSLOT):
        for k in range(min(counts[r], 8)):
            if k < 4:
                lo |= np.int64(1) << np.int64(16 * k + r)
            else:
                hi |= np.int64(1) << np.int64(16 * (k - 4) + r)
    if prev < 0:
        return _scan_groups(lo, hi, tab, 0, tab.g_lo.shape[0], out, 0)
    n = _scan_groups(lo, hi, tab, tab.fnext[prev], tab.fend[prev], out, 0)
    return _scan_groups(lo, hi, tab, tab.bnext[prev], tab.g_bomb_end[0], out, n)


# -- seeded PRNG (splitmix64 on int64 bit patterns) ------------------------------------------------

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


@njit(inline="always", **HOT_INLINE)
def rng_next(state, idx):
    """Advance the splitmix64 generator stored in ``state[idx]``; return 63 random bits."""
    x = np.uint64(state[idx]) + _GOLDEN
    state[idx] = np.int64(x)
    z = x
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    z = z ^ (z >> np.uint64(31))
    return np.int64(z >> np.uint64(1))


@njit(inline="always", **HOT_INLINE)
def rng_below(state, idx, n):
    """A uniform integer in ``[0, n)`` (bias below 2**-40 for the small n used here)."""
    return rng_next(state, idx) % n


@njit(**HOT)
def shuffle(arr, m, state, idx):
    """Fisher-Yates shuffle of ``arr[:m]`` with the generator in ``state[idx]``."""
    for i in range(m - 1, 0, -1):
        j = rng_below(state, idx, i + 1)
        t = arr[i]
        arr[i] = arr[j]
        arr[j] = t
