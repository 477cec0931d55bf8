"""The rollout policy's hand plan: how many turns a hand still needs (numba kernels).

:func:`hand_cost` (rank masks; :func:`hand_cost_reference` rank by rank, its reference),
the cost of a hand after a play (:func:`cost_after_row`, :func:`hand_after`), of hands of at
most four cards a rank from their rank masks alone (:func:`cost_of_masks`), and what the
bids and choices read: :func:`hand_value`, :func:`strength`.  The parameter vector's slots
they read are :mod:`cardenvs.core.policy_vector`'s; the policy is described in
:mod:`cardenvs.core.policy`.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from .kernels import cttz
from .policy_vector import (PP_BOMBN, PP_BONUS, PP_CTRL, PP_CTRLFROM, PP_KICK, PP_MINP, PP_MINS,
                            PP_NOSINGLE, PP_PAIRS, PP_R, PP_ROCKET, PP_STRAIGHT, PP_WILD,
                            STUCK_COST)

# -- the hand plan -----------------------------------------------------------------------------


@njit(cache=True)
def hand_cost_reference(h, pp, c, full=0):
    """:func:`hand_cost` written rank by rank (the reference of the differential tests)."""
    R = pp[PP_R]
    wild = pp[PP_WILD]
    nosingle = pp[PP_NOSINGLE]
    jokers = 0
    naturals = 0
    for r in range(16):
        v = h[r] if r < R else 0
        if v < 0:
            v = 0
        if (wild >> r) & 1:
            jokers += v
            c[r] = 0
        else:
            c[r] = v
            naturals += v
    cost = 0.0
    ctrl = pp[PP_CTRLFROM] if full != 0 else 99
    if full != 0:
        # the rocket, then bombs: each takes a lead back (-1), kept out of every chain
        rk = pp[PP_ROCKET]
        if rk != 0:
            have = True
            for r in range(R):
                if (rk >> r) & 1 and c[r] < 1:
                    have = False
            if have:
                for r in range(R):
                    if (rk >> r) & 1:
                        c[r] -= 1
                cost -= 1.0
        for r in range(R):
            if c[r] > 0 and c[r] >= pp[PP_BOMBN]:
                c[r] = 0
                cost -= 1.0
    # straights: runs of ranks allowed in straights holding a card (greedy, twice)
    mins = pp[PP_MINS]
    if mins > 0:
        for _rep in range(2):
            best_a = -1
            best_b = -1
            best_gain = 0
            r = 0
            while r < R:
                if not ((pp[PP_STRAIGHT] >> r) & 1) or c[r] < 1:
                    r += 1
                    continue
                a = r
                while r < R and ((pp[PP_STRAIGHT] >> r) & 1) and c[r] >= 1:
                    r += 1
                b = r  # run [a, b)
                # trim ends that would break pairs or better
                while b - a > mins and c[a] >= 2:
                    a += 1
                while b - a > mins and c[b - 1] >= 2:
                    b -= 1
                if b - a >= mins:
                    gain = 0
                    for q in range(a, b):
                        if c[q] == 1:
                            gain += 1
                    gain -= 1
                    if gain > best_gain:
                        best_gain = gain
                        best_a = a
                        best_b = b
            if best_a < 0:
                break
            for q in range(best_a, best_b):
                c[q] -= 1
            cost += 1.0
    minp = pp[PP_MINP]
    if minp > 0:
        r = 0
        while r < R:
            if not ((pp[PP_PAIRS] >> r) & 1) or c[r] != 2:
                r += 1
                continue
            a = r
            while r < R and ((pp[PP_PAIRS] >> r) & 1) and c[r] == 2:
                r += 1
            if r - a >= minp:
                for q in range(a, r):
                    c[q] = 0
                cost += 1.0
    n1 = 0
    n2 = 0
    n3 = 0
    k12 = 0  # singles and pairs below the control ranks: the kickers the full cost uses
    for r in range(R):
        v = c[r]
        if v == 0:
            continue
        if (nosingle >> r) & 1 and v < 4:
            cost += STUCK_COST
            continue
        if v == 1:
            n1 += 1
        elif v == 2:
            n2 += 1
        elif v == 3:
            n3 += 1
        if v <= 2 and r < ctrl:
            k12 += 1
        cost += 0.5 if r >= ctrl else 1.0
    if pp[PP_KICK] != 0:
        cost -= min(n3, n1 + n2 if full == 0 else k12)
    if jokers > 0:
        for r in range(R):
            if (wild >> r) & 1 and h[r] > 0:
                if (nosingle >> r) & 1:
                    if naturals == 0:
                        cost += STUCK_COST * h[r]
                else:
                    cost += 0.25 * h[r]
    return cost


@intrinsic
def _popc(typingctx, x):
    """Set bits of a non-negative ``int64`` mask (LLVM ``ctpop``: one instruction)."""
    if not isinstance(x, types.Integer):
        return None
    sig = types.int64(types.int64)

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return sig, codegen


@intrinsic
def _ctlz(typingctx, x):
    """Leading zero bits of a nonzero ``int64`` (LLVM ``ctlz``)."""
    if not isinstance(x, types.Integer):
        return None
    sig = types.int64(types.int64)

    def codegen(context, builder, signature, args):
        return builder.ctlz(args[0], ir.Constant(ir.IntType(1), 1))

    return sig, codegen


@njit(inline="always", cache=True)
def _top_bit(x):
    """The highest set bit of a nonzero non-negative mask."""
    return np.int64(1) << (63 - _ctlz(x))


@njit(cache=True)
def hand_cost(h, pp, c, full=0):
    """Turns the hand ``h`` (counts per rank slot) still needs: its combinations, after
    greedy straights (the run that saves most singles, twice) and pair chains, with trios
    carrying kickers, a combination that cannot be played alone costing
    :data:`STUCK_COST`.  ``c`` is a scratch array of 16 (overwritten).  Rank masks
    instead of rank loops; the same value as :func:`hand_cost_reference`.

    ``full=1`` is the cost of the ``heuristic`` policy, closer to the ``rules`` agent's
    planner: the rocket and each bomb count -1 (they take a lead back) and are kept out of
    the chains, a combination of control ranks (above every chain rank) counts half, and
    only singles and pairs below the controls are kickers.  ``full=0`` (``heuristic0``):
    every combination counts 1."""
    R = pp[PP_R]
    wild = pp[PP_WILD]
    jokers = 0
    naturals = 0
    m1 = np.int64(0)
    m2 = np.int64(0)
    m3 = np.int64(0)
    m4 = np.int64(0)
    for r in range(R):
        v = h[r]
        c[r] = 0
        if v <= 0:
            continue
        if (wild >> r) & 1:
            jokers += v
            continue
        c[r] = v
        naturals += v
        bit = np.int64(1) << r
        m1 |= bit
        if v >= 2:
            m2 |= bit
            if v >= 3:
                m3 |= bit
                if v >= 4:
                    m4 |= bit
    return _cost_from(m1, m2, m3, m4, jokers, naturals, h, c, pp, full)


@njit(inline="always", cache=True)
def _set_count(bit, v, m1, m2, m3, m4):
    """The masks with ``v`` cards (at most 4 counted) at the rank ``bit``."""
    m1 &= ~bit
    m2 &= ~bit
    m3 &= ~bit
    m4 &= ~bit
    if v >= 1:
        m1 |= bit
        if v >= 2:
            m2 |= bit
            if v >= 3:
                m3 |= bit
                if v >= 4:
                    m4 |= bit
    return m1, m2, m3, m4


@njit(inline="always", cache=True)
def _take_one(c, r, bit, m1, m2, m3, m4):
    """One card less of rank ``r`` (``bit``) in the counts ``c`` and the masks."""
    v = c[r] - 1
    c[r] = v
    if v < 1:
        m1 &= ~bit
    if v < 2:
        m2 &= ~bit
    if v < 3:
        m3 &= ~bit
    if v < 4:
        m4 &= ~bit
    return m1, m2, m3, m4


@njit(inline="always", cache=True)
def _best_run(m1, m2, smask, mins):
    """The straight the plan takes next (a run of ``m1 & smask`` of at least ``mins`` ranks,
    its ends trimmed off pairs, saving the most singles; 0: none worth it)."""
    x = m1 & smask
    best_gain = 0
    best_run = np.int64(0)
    while x != 0:
        low = x & -x
        run = x & ~(x + low)
        x &= ~run
        L = _popc(run)
        if L < mins:
            continue
        while L > mins and (run & -run) & m2:
            run &= run - 1
            L -= 1
        while L > mins and _top_bit(run) & m2:
            run &= ~_top_bit(run)
            L -= 1
        gain = _popc(run & ~m2) - 1
        if gain > best_gain:
            best_gain = gain
            best_run = run
    return best_run


@njit(inline="always", cache=True)
def _pair_chains(m1, m2, m3, pairs, minp, cost):
    """The plan's pair chains (runs of exact pairs of ``pairs`` ranks, ``minp`` long or
    more), each one more combination: the masks without them and the cost."""
    x = m2 & ~m3 & pairs
    while x != 0:
        low = x & -x
        run = x & ~(x + low)
        x &= ~run
        if _popc(run) >= minp:
            m1 &= ~run
            m2 &= ~run
            cost += 1.0
    return m1, m2, cost


@njit(inline="always", cache=True)
def _tally(m1, m2, m3, m4, nosingle, cm, kick, full, cost):
    """The cost plus the groups left in the masks (see :func:`hand_cost`)."""
    stuck = m1 & ~m4 & nosingle
    n3 = _popc(m3 & ~m4 & ~nosingle)
    if full == 0:
        n1 = _popc(m1 & ~m2 & ~nosingle)
        n2 = _popc(m2 & ~m3 & ~nosingle)
        cost += n1 + n2 + n3 + _popc(m4) + STUCK_COST * _popc(stuck)
        if kick != 0:
            cost -= min(n3, n1 + n2)
    else:
        groups = (m1 & ~m4 & ~nosingle) | m4
        cost += (_popc(groups & ~cm) + 0.5 * _popc(groups & cm)
                 + STUCK_COST * _popc(stuck))
        if kick != 0:
            cost -= min(n3, _popc(m1 & ~m3 & ~nosingle & ~cm))
    return cost


@njit(cache=True)
def _cost_from(m1, m2, m3, m4, jokers, naturals, h, c, pp, full):
    """:func:`hand_cost` from the hand's rank masks (``m_k``: ranks with at least ``k``
    natural cards), its joker and natural card counts, ``h`` (for the jokers) and ``c``, a
    copy of its natural counts (changed)."""
    R = pp[PP_R]
    wild = pp[PP_WILD]
    nosingle = pp[PP_NOSINGLE]
    cost = 0.0
    cm = np.int64(0)  # control ranks (full cost)
    if full != 0:
        cm = ((np.int64(1) << R) - 1) & ~((np.int64(1) << min(pp[PP_CTRLFROM], R)) - 1)
        rk = pp[PP_ROCKET]
        if rk != 0 and (m1 & rk) == rk:
            cost -= 1.0
            y = rk
            while y != 0:
                bit = y & -y
                y &= y - 1
                m1, m2, m3, m4 = _take_one(c, cttz(bit), bit, m1, m2, m3, m4)
        bn = pp[PP_BOMBN]
        y = m4 if bn >= 4 else m1
        while y != 0:
            bit = y & -y
            y &= y - 1
            r = cttz(bit)
            if c[r] >= bn:
                c[r] = 0
                m1 &= ~bit
                m2 &= ~bit
                m3 &= ~bit
                m4 &= ~bit
                cost -= 1.0
    mins = pp[PP_MINS]
    if mins > 0:
        for _rep in range(2):
            best_run = _best_run(m1, m2, pp[PP_STRAIGHT], mins)
            if best_run == 0:
                break
            cost += 1.0
            y = best_run
            while y != 0:
                bit = y & -y
                y &= y - 1
                m1, m2, m3, m4 = _take_one(c, cttz(bit), bit, m1, m2, m3, m4)
    minp = pp[PP_MINP]
    if minp > 0:
        m1, m2, cost = _pair_chains(m1, m2, m3, pp[PP_PAIRS], minp, cost)
    cost = _tally(m1, m2, m3, m4, nosingle, cm, pp[PP_KICK], full, cost)
    if jokers > 0:
        for r in range(R):
            if (wild >> r) & 1 and h[r] > 0:
                if (nosingle >> r) & 1:
                    if naturals == 0:
                        cost += STUCK_COST * h[r]
                else:
                    cost += 0.25 * h[r]
    return cost


@njit(inline="always", cache=True)
def _take_top(bit, m1, m2, m3, m4):
    """One card less of the rank ``bit`` in the masks alone (exact while it holds at most 4)."""
    if m4 & bit:
        m4 &= ~bit
    elif m3 & bit:
        m3 &= ~bit
    elif m2 & bit:
        m2 &= ~bit
    else:
        m1 &= ~bit
    return m1, m2, m3, m4


@njit(cache=True)
def cost_of_masks(m1, m2, m3, m4, pp):
    """The full plan cost (:func:`hand_cost` with ``full=1``) of a hand without wild cards
    holding at most four cards of each rank, from its rank masks alone (``m_k``: ranks with
    at least ``k`` cards, which then are its counts): :func:`_cost_from`'s steps on the masks,
    the same value (every term is a multiple of 0.5: exact in any order)."""
    R = pp[PP_R]
    nosingle = pp[PP_NOSINGLE]
    cost = 0.0
    cm = ((np.int64(1) << R) - 1) & ~((np.int64(1) << min(pp[PP_CTRLFROM], R)) - 1)
    rk = pp[PP_ROCKET]
    if rk != 0 and (m1 & rk) == rk:
        cost -= 1.0
        y = rk
        while y != 0:
            bit = y & -y
            y &= y - 1
            m1, m2, m3, m4 = _take_top(bit, m1, m2, m3, m4)
    bn = pp[PP_BOMBN]
    if bn <= 4:
        bombs = m4 if bn == 4 else (m3 if bn == 3 else (m2 if bn == 2 else m1))
        if bombs != 0:
            cost -= _popc(bombs)
            m1 &= ~bombs
            m2 &= ~bombs
            m3 &= ~bombs
            m4 &= ~bombs
    mins = pp[PP_MINS]
    if mins > 0:
        for _rep in range(2):
            best_run = _best_run(m1, m2, pp[PP_STRAIGHT], mins)
            if best_run == 0:
                break
            cost += 1.0
            # one card less of each rank of the run: the ranks of m4 (m3, m2) in the run
            # drop to m3 (m2, m1) level, the singles leave m1
            m4n = m4 & ~best_run
            m3n = (m3 & ~best_run) | (m4 & best_run)
            m2n = (m2 & ~best_run) | (m3 & best_run)
            m1 = (m1 & ~best_run) | (m2 & best_run)
            m2 = m2n
            m3 = m3n
            m4 = m4n
    minp = pp[PP_MINP]
    if minp > 0:
        m1, m2, cost = _pair_chains(m1, m2, m3, pp[PP_PAIRS], minp, cost)
    return _tally(m1, m2, m3, m4, nosingle, cm, pp[PP_KICK], 1, cost)


@njit(inline="always", cache=True)
def _masks_after(h, m1, m2, m3, m4, lo):
    """The rank masks of ``h`` (masks ``m1..m4``) less a row of planes ``lo`` holding at
    most four cards of each rank."""
    ranks = lo & 0xFFFF
    while ranks != 0:
        bit = ranks & -ranks
        ranks &= ranks - 1
        r = cttz(bit)
        v = h[r] - (((lo >> r) & 1) + ((lo >> (r + 16)) & 1) + ((lo >> (r + 32)) & 1) +
                    ((lo >> (r + 48)) & 1))
        m1, m2, m3, m4 = _set_count(bit, v, m1, m2, m3, m4)
    return m1, m2, m3, m4


@njit(cache=True)
def hand_after(h, row, tab, pp, out):
    """The hand left after playing ``row`` (wild jokers fill the natural cards it lacks)."""
    R = pp[PP_R]
    wild = pp[PP_WILD]
    need = 0
    for r in range(16):
        v = h[r]
        c = tab.counts[row, r]
        if (wild >> r) & 1:
            out[r] = v - c
        else:
            use = min(c, v)
            need += c - use
            out[r] = v - use
    if need > 0:
        for r in range(R):
            if (wild >> r) & 1 and out[r] > 0:
                t = min(need, out[r])
                out[r] -= t
                need -= t
    for r in range(16):
        if out[r] < 0:
            out[r] = 0


@njit(cache=True)
def masks_of(h, pp):
    """Rank masks ``(m1, m2, m3, m4)`` of the natural cards of ``h`` (see :func:`_cost_from`)."""
    wild = pp[PP_WILD]
    m1 = np.int64(0)
    m2 = np.int64(0)
    m3 = np.int64(0)
    m4 = np.int64(0)
    for r in range(pp[PP_R]):
        v = h[r]
        if v <= 0 or (wild >> r) & 1:
            continue
        bit = np.int64(1) << r
        m1 |= bit
        if v >= 2:
            m2 |= bit
            if v >= 3:
                m3 |= bit
                if v >= 4:
                    m4 |= bit
    return m1, m2, m3, m4


@njit(cache=True)
def cost_after_row(h, total, m1, m2, m3, m4, row, tab, pp, c, full=0):
    """``hand_cost`` of the hand left after ``row`` in a game without wild cards, updating
    the hand's masks ``m1..m4`` only at the row's ranks (``total``: cards in ``h``)."""
    for r in range(16):
        c[r] = h[r]
    ranks = tab.lo[row] & 0xFFFF
    while ranks != 0:
        bit = ranks & -ranks
        ranks &= ranks - 1
        r = cttz(bit)
        v = h[r] - tab.counts[row, r]
        c[r] = v
        m1, m2, m3, m4 = _set_count(bit, v, m1, m2, m3, m4)
    return _cost_from(m1, m2, m3, m4, 0, total - tab.ncards[row], c, c, pp, full)


@njit(cache=True)
def hand_value(h, pp, c, full=0):
    """Exchange / burying value of a hand: minus its plan cost (:func:`hand_cost`), plus a
    bonus for top cards."""
    v = -hand_cost(h, pp, c, full)
    for r in range(pp[PP_R]):
        v += 0.01 * pp[PP_BONUS + r] * h[r]
    return v


@njit(cache=True)
def strength(h, pp, c, full=0):
    """Bidding strength of a hand: controls and bombs (with ``full=1`` the rocket too, as
    the ``rules`` agent counts it), minus half its plan cost (:func:`hand_cost`)."""
    s = 0.0
    R = pp[PP_R]
    rocket = pp[PP_ROCKET] != 0 and full != 0
    for r in range(R):
        s += 0.01 * pp[PP_CTRL + r] * h[r]
        if h[r] >= 4 and not ((pp[PP_WILD] >> r) & 1):
            s += 2.0 + 0.5 * (h[r] - 4)
        if (pp[PP_ROCKET] >> r) & 1 and h[r] < 1:
            rocket = False
    if rocket:
        s += 2.0
    return s - 0.5 * hand_cost(h, pp, c, full)
