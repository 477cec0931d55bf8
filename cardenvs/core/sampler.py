"""The determinization sampler: a declaration compiled into an integer program, run by numba.

:func:`compile_hidden` turns a game's :class:`~cardenvs.core.hidden.Hidden` declaration (and
a user's excluded cards) into an ``int64`` program: the pool of unseen cards, then ``OP_*``
instructions; :func:`_sample` runs it (:func:`_run`) until every check passes, row by row.
The measure the program draws from is :mod:`cardenvs.core.infostate`'s module docstring.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Mapping, Union

import numpy as np
from numba import njit

from .hidden import FirstMarker, Hidden, Linear, NotOnly, Pile, Subset, SuitFirst, mask_of
from .kernels import rng_below, rng_next
from .state import RNG, hand_off

if TYPE_CHECKING:
    from .game import Game

# -- the program ------------------------------------------------------------------------------

OP_END, OP_FILL, OP_SUBSET, OP_LINEAR, OP_MARKER, OP_NOTONLY, OP_FIRST, OP_MASKCHECK = range(8)
OP_DRAWORDER, OP_RNG, OP_SUITFIRST = 8, 9, 10
#: draws of one sample before the kernel gives up (a check no sample can pass)
MAX_TRIES = 200_000


def _laminar(masks: list[int]) -> bool:
    for i, a in enumerate(masks):
        for b in masks[i + 1:]:
            if a & b and (a & b) != a and (a & b) != b:
                return False
    return True


def compile_hidden(game: Game, state: np.ndarray, decl: Hidden,
                   exclude: Union[Mapping[int, str], Iterable[tuple[int, str]]] = ()
                   ) -> np.ndarray:
    """The integer program of a declaration (pool, then ops) for :func:`_sample`.

    The pool is the cards of the hidden piles less the known ones.  Each unit (a pile, or a
    group of piles) is one ``OP_FILL``, the most restricted first when the restrictions are
    nested or disjoint (exact sequential draws); otherwise user restrictions become
    ``OP_MASKCHECK`` rejections.
    """
    full = (1 << game.deck.n_ranks) - 1
    extra_masks: dict[int, int] = {}
    for q, cards in dict(exclude).items():
        if isinstance(q, bool) or not isinstance(q, (int, np.integer)) \
                or not 0 <= int(q) < game.n_players:
            raise ValueError(f"constraint seat {q!r} is out of range 0..{game.n_players - 1}")
        c = game.deck.parse(cards, what=f"excluded cards of seat {q}")
        extra_masks[int(q)] = full & ~mask_of(np.flatnonzero(c))
    pool = [0] * 16
    units: dict[str, list[Pile]] = {}
    for p in decl.piles:
        for r, c in enumerate(state[p.offset:p.offset + 16].tolist()):
            pool[r] += c
        units.setdefault(p.group if p.group is not None else "#" + p.name, []).append(p)
    hidden_seats = {p.seat for p in decl.piles if p.seat >= 0}
    for q, m in extra_masks.items():
        if q not in hidden_seats:
            h = state[hand_off(q):hand_off(q) + 16].tolist()
            if any(h[r] > 0 and not (m >> r) & 1 for r in range(16)):
                raise ValueError(f"constraint excludes cards seat {q} is known to hold")
    fills = []  # (own mask, mask with the user's, piles, known)
    for ps in units.values():
        known = [0] * 16
        mask = full
        for p in ps:
            if p.known is not None:
                for r, c in enumerate(np.asarray(p.known).tolist()):
                    known[r] += int(c)
            mask &= p.mask
        if len(ps) > 1 and mask != full:
            raise ValueError("a group of piles cannot be restricted to some ranks")
        eff = mask
        if len(ps) == 1 and ps[0].seat in extra_masks:
            eff &= extra_masks[ps[0].seat]
        fills.append((mask, eff, ps, known))
    exact = len(fills) < 2 or _laminar([f[1] for f in fills])
    body: list[int] = []
    checks: list[int] = []
    for mask, eff, ps, known in sorted(fills, key=lambda f: bin(f[1] if exact else f[0]).count("1")):
        m = eff if exact else mask
        body += [OP_FILL, -1 if m == full else m, len(ps)] + known  # -1: unrestricted
        for p in ps:
            body += [p.offset, p.size]
            if not exact and p.seat in extra_masks:
                checks += [OP_MASKCHECK, p.offset, extra_masks[p.seat]]
        for r in range(16):
            pool[r] -= known[r]
    body += checks
    for r in decl.records:
        if isinstance(r, Subset):
            body += [OP_SUBSET, r.offset, r.k, r.mask, len(r.sources)] + list(r.sources)
        elif isinstance(r, Linear):
            body += [OP_LINEAR, r.offset, len(r.terms)]
            for sign, off in r.terms:
                body += [sign, off]
        else:  # pragma: no cover - declaration error
            raise TypeError(f"unknown record {r!r}")
    for marker in decl.markers:
        body += [OP_MARKER, marker.slot, marker.rank, len(marker.places)]
        for code, offs in marker.places:
            body += [code, len(offs)] + list(offs)
    for c in decl.checks:
        if isinstance(c, NotOnly):
            body += [OP_NOTONLY, c.offset, c.mask]
        elif isinstance(c, FirstMarker):
            body += [OP_FIRST, c.base, c.expected, c.n, len(c.ranks)] + list(c.ranks)
        elif isinstance(c, SuitFirst):
            body += [OP_SUITFIRST, c.base, c.expected, len(c.ranks)] + list(c.ranks)
            body += [len(c.places)]
            for code, offs in c.places:
                body += [code, len(offs)] + list(offs)
            body += [len(c.marker_places)]
            for code, idx in c.marker_places.items():
                body += [code, len(idx)] + list(idx)
        else:  # pragma: no cover
            raise TypeError(f"unknown check {c!r}")
    for d in decl.draws:
        body += [OP_DRAWORDER, d.base, d.n_known, d.n_cards, d.n_marked, d.n]
    body += [OP_RNG, RNG, OP_END]
    if min(pool) < 0:
        raise ValueError("inconsistent declaration: known cards not in the hidden piles")
    return np.array(pool + body, np.int64)


# -- the kernel ---------------------------------------------------------------------------------


@njit(cache=True)
def _draw_rank(c, mask, total, g):
    """One physical card drawn uniformly from counts ``c`` restricted to ``mask`` (``total``
    cards); its rank (the count is decremented)."""
    u = rng_below(g, 0, total)
    for r in range(16):
        if (mask >> r) & 1:
            k = c[r]
            if u < k:
                c[r] = k - 1
                return r
            u -= k
    return -1


@njit(cache=True)
def _masked_total(c, mask):
    t = 0
    for r in range(16):
        if (mask >> r) & 1:
            t += c[r]
    return t


@njit(cache=True)
def _run(s, prog, g, pool, tmp, pos, deck):
    """Run the program once on ``s`` (a copy of the real state; every region a program writes
    it overwrites whole, so a rejected try needs no fresh copy); False when a check fails.

    Restricted fills draw card by card from the pool counts; the unrestricted ones (sorted
    last) deal from the rest of the pool laid out as an array, by an incremental
    Fisher-Yates shuffle (``deck[0]`` = cards dealt, ``deck[1]`` = cards, from ``deck[2]``).
    """
    for r in range(16):
        pool[r] = prog[r]
    deck[1] = -1
    i = 16
    while True:
        op = prog[i]
        if op == OP_END:
            return True
        if op == OP_FILL:
            mask = prog[i + 1]
            npl = prog[i + 2]
            kn = i + 3
            pl = i + 19
            total = 0
            for j in range(npl):
                total += prog[pl + 2 * j + 1]
            for r in range(16):
                tmp[r] = prog[kn + r]
            free = total
            for r in range(16):
                free -= tmp[r]
            if mask < 0:
                if deck[1] < 0:  # lay out the rest of the pool
                    m = 0
                    for r in range(16):
                        for _ in range(pool[r]):
                            deck[2 + m] = r
                            m += 1
                    deck[0] = 0
                    deck[1] = m
                d0 = deck[0]
                m = deck[1]
                if m - d0 < free:
                    return False
                for t in range(d0, d0 + free):
                    j = t + rng_below(g, 0, m - t)
                    x = deck[2 + j]
                    deck[2 + j] = deck[2 + t]
                    deck[2 + t] = x
                    tmp[x] += 1
                deck[0] = d0 + free
            else:
                avail = _masked_total(pool, mask)
                if avail < free:
                    return False
                for _ in range(free):
                    tmp[_draw_rank(pool, mask, avail, g)] += 1
                    avail -= 1
            # split the unit's cards over its piles uniformly (the last takes the rest)
            left = total
            for j in range(npl):
                off = prog[pl + 2 * j]
                size = prog[pl + 2 * j + 1]
                for r in range(16):
                    s[off + r] = 0
                if j == npl - 1:
                    for r in range(16):
                        s[off + r] = tmp[r]
                else:
                    for _ in range(size):
                        s[off + _draw_rank(tmp, 0xFFFF, left, g)] += 1
                        left -= 1
            i = pl + 2 * npl
        elif op == OP_SUBSET:
            out = prog[i + 1]
            k = prog[i + 2]
            mask = prog[i + 3]
            ns = prog[i + 4]
            for r in range(16):
                tmp[r] = 0
            for j in range(ns):
                so = prog[i + 5 + j]
                for r in range(16):
                    tmp[r] += s[so + r]
            avail = _masked_total(tmp, mask)
            if avail < k:
                return False
            for r in range(16):
                s[out + r] = 0
            for _ in range(k):
                s[out + _draw_rank(tmp, mask, avail, g)] += 1
                avail -= 1
            i += 5 + ns
        elif op == OP_LINEAR:
            out = prog[i + 1]
            nt = prog[i + 2]
            for r in range(16):
                tmp[r] = 0
            for j in range(nt):
                sign = prog[i + 3 + 2 * j]
                so = prog[i + 4 + 2 * j]
                for r in range(16):
                    tmp[r] += sign * s[so + r]
            for r in range(16):
                if tmp[r] < 0:
                    return False
                s[out + r] = tmp[r]
            i += 3 + 2 * nt
        elif op == OP_MARKER:
            slot = prog[i + 1]
            rank = prog[i + 2]
            npl = prog[i + 3]
            j = i + 4
            total = 0
            for _ in range(npl):
                no = prog[j + 1]
                for t in range(no):
                    total += s[prog[j + 2 + t] + rank]
                j += 2 + no
            if total <= 0:
                return False
            u = rng_below(g, 0, total)
            j = i + 4
            for _ in range(npl):
                code = prog[j]
                no = prog[j + 1]
                w = 0
                for t in range(no):
                    w += s[prog[j + 2 + t] + rank]
                if 0 <= u < w:
                    s[slot] = code
                u -= w
                j += 2 + no
            i = j
        elif op == OP_NOTONLY:
            off = prog[i + 1]
            mask = prog[i + 2]
            tot = 0
            outside = 0
            for r in range(16):
                tot += s[off + r]
                if not (mask >> r) & 1:
                    outside += s[off + r]
            if tot > 0 and outside == 0:
                return False
            i += 3
        elif op == OP_MASKCHECK:
            off = prog[i + 1]
            mask = prog[i + 2]
            for r in range(16):
                if s[off + r] > 0 and not (mask >> r) & 1:
                    return False
            i += 3
        elif op == OP_FIRST:
            base = prog[i + 1]
            exp = prog[i + 2]
            n = prog[i + 3]
            nr = prog[i + 4]
            found = -1
            for t in range(nr):
                w = s[base + prog[i + 5 + t]]
                if 0 <= w < n:
                    found = w
                    break
            if found != exp:
                return False
            i += 5 + nr
        elif op == OP_DRAWORDER:
            base = prog[i + 1]
            nk = prog[i + 2]
            ncards = prog[i + 3]
            nm = prog[i + 4]
            n = prog[i + 5]
            ok = False
            for _ in range(100_000):
                start = rng_below(g, 0, n)
                # nm distinct positions, uniformly (a partial Fisher-Yates over the deck)
                for t in range(ncards):
                    pos[t] = t
                for t in range(nm):
                    j = t + rng_below(g, 0, ncards - t)
                    x = pos[t]
                    pos[t] = pos[j]
                    pos[j] = x
                # sort the nm drawn positions (insertion sort)
                for t in range(1, nm):
                    x = pos[t]
                    j = t - 1
                    while j >= 0 and pos[j] > x:
                        pos[j + 1] = pos[j]
                        j -= 1
                    pos[j + 1] = x
                ok = True
                for t in range(nk):
                    if (start + pos[t]) % n != s[base + t]:
                        ok = False
                        break
                if ok:
                    for t in range(nm):
                        s[base + t] = (start + pos[t]) % n
                    break
            if not ok:
                return False
            i += 6
        elif op == OP_RNG:
            s[prog[i + 1]] = rng_next(g, 0)
            i += 2
        elif op == OP_SUITFIRST:
            base = prog[i + 1]
            exp = prog[i + 2]
            nr = prog[i + 3]
            pl0 = i + 5 + nr  # the places
            npl = prog[pl0 - 1]
            # where each place's record starts (pos[0:npl]); then the marker table
            j = pl0
            for t in range(npl):
                pos[t] = j
                j += 2 + prog[j + 1]
            mk0 = j + 1
            nmk = prog[j]
            end = mk0
            for _ in range(nmk):
                end += 2 + prog[end + 1]
            found = -2
            for t in range(nr):
                r = prog[i + 4 + t]
                # deal-time copies of rank r per place (pos[64 + place])
                tot = 0
                for w in range(npl):
                    c = 0
                    a = pos[w]
                    for u in range(prog[a + 1]):
                        c += s[prog[a + 2 + u] + r]
                    pos[64 + w] = c
                    tot += c
                # the marked copy (the diamond) leaves its place
                code = s[base + r]
                m = mk0
                for _ in range(nmk):
                    if prog[m] == code:
                        wt = 0
                        for u in range(prog[m + 1]):
                            wt += pos[64 + prog[m + 2 + u]]
                        if wt <= 0:
                            return False
                        v = rng_below(g, 0, wt)
                        for u in range(prog[m + 1]):
                            w = prog[m + 2 + u]
                            c = pos[64 + w]
                            if v < c:
                                pos[64 + w] = c - 1
                                tot -= 1
                                break
                            v -= c
                        break
                    m += 2 + prog[m + 1]
                if tot <= 0:
                    continue
                # the copy of the rule's suit: uniform among the other copies
                v = rng_below(g, 0, tot)
                holder = -1
                for w in range(npl):
                    if v < pos[64 + w]:
                        holder = prog[pos[w]]
                        break
                    v -= pos[64 + w]
                if holder >= 0:
                    found = holder
                    break
            if found != exp:
                return False
            i = end
        else:
            return False


@njit(cache=True, nogil=True)  # no Python objects: threads sample at once
def _sample(base, prog, seed, out, max_tries):
    """Fill each row of ``out`` with a sample; returns the draws used, or -1 when one row could
    not be drawn in ``max_tries`` draws."""
    g = np.empty(1, np.int64)
    g[0] = seed
    pool = np.zeros(16, np.int64)
    tmp = np.zeros(16, np.int64)
    pos = np.zeros(128, np.int64)
    deck = np.zeros(2 + 16 * 16, np.int64)
    used = 0
    for k in range(out.shape[0]):
        row = out[k]
        ok = False
        for j in range(base.shape[0]):
            row[j] = base[j]
        for _ in range(max_tries):
            used += 1
            if _run(row, prog, g, pool, tmp, pos, deck):
                ok = True
                break
        if not ok:
            return -1
    return used
