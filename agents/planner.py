"""Hand planning for the rule-based agent: split a hand into the fewest combinations.

The planner works on rank counts and learns what combinations exist from the game's play
table (:class:`PlanRules`, built by :func:`plan_rules`), so it carries over to every climbing
game whose table has the shared families (single, pair, trio, chains, trios with kickers,
bombs, rocket).  Its answer is a *cost* in turns: roughly how many more times the player must
win the lead to empty the hand.

Cost model (lower is better):

* each single, pair, trio, chain (straight, pair chain, airplane) or non-bomb quad is one turn,
  except that a combination made of *control* ranks (ranks that never appear in chains: 2 and
  the jokers in Dou Dizhu, 2 and 3 in Wakeng) counts half a turn: it usually wins its trick;
* a bomb or the rocket counts -1: it sheds its cards and takes the lead back;
* trios and airplanes carry the lowest non-control singles (or pairs) as kickers where the
  table has those families, each carried card saving the turn it would have cost;
* a tiny tie-break (0.01 x how low the combination is) prefers plans with higher combinations;
* a card that no combination can hold outside a chain (Lanxi Wulong's 3s) costs 3.

The search (:func:`plan_cost`) is a depth-first search over the chains the hand can make
(airplanes, then pair chains, then straights; every start and length), each leaf valued by
the greedy grouping of the rest above; a node budget keeps the worst case bounded (two-deck
hands) while ordinary hands are searched completely.

Wild jokers (Da Niangniang, Lanxi Wulong): :func:`plan_cost_wild` and friends try the hand's
jokers as stand-ins for natural ranks over the effective rows of the table (see the section
"wild jokers" below).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from cardenvs.core.combos import (
    AIRPLANE, AIRPLANE_PAIRS, AIRPLANE_SINGLES, BOMB, PAIR, PAIR_CHAIN, ROCKET, SINGLE, STRAIGHT,
    TRIO, TRIO_PAIR, TRIO_SINGLE,
)

NODE_BUDGET = 600
MAX_COMBOS = 64
STUCK_COST = 3.0

# flags slots
F_R, F_CONTROL, F_TRIO1, F_TRIO2, F_AIR1, F_AIR2, F_HAS_ROCKET = range(7)


class PlanRules(NamedTuple):
    """What combinations a table has, as numba-friendly arrays (see :func:`plan_rules`)."""

    flags: np.ndarray  # int64[8]: n_ranks, control_from, trio+single, trio+pair, airplane+singles, airplane+pairs, rocket
    minlen: np.ndarray  # int64[4]: shortest chain of width w (index w = 1..3), 0 = none
    maxlen: np.ndarray  # int64[4]
    chain_ok: np.ndarray  # bool[4, 16]: rank r may be in a chain of width w
    single_ok: np.ndarray  # bool[16]
    pair_ok: np.ndarray  # bool[16]
    trio_ok: np.ndarray  # bool[16]
    bomb_ok: np.ndarray  # bool[16, 17]: k cards of rank r are a bomb
    quad_ok: np.ndarray  # bool[16, 17]: k cards of rank r are a play of their own (not a bomb)
    rocket: np.ndarray  # int64[16]: the rocket's cards (zeros: none)
    kick1_ok: np.ndarray  # bool[16]: rank may be a single kicker
    kick2_ok: np.ndarray  # bool[16]: rank may be a kicker pair


_CHAIN_WIDTH = {STRAIGHT: 1, PAIR_CHAIN: 2, AIRPLANE: 3}


def plan_rules(table, effective: bool = False) -> PlanRules:
    """Derive the planner's view of a play table.

    By default only plain combinations count (rows a hand can hold without wild cards);
    ``effective=True`` keeps the effective rows of a wild-joker game too (Da Niangniang's
    5- and 6-card bombs, Lanxi Wulong's bombs beyond 8 cards), for hands whose jokers have
    been assigned ranks (:func:`plan_cost_wild`)."""
    R = table.deck.n_ranks
    flags = np.zeros(8, np.int64)
    minlen = np.zeros(4, np.int64)
    maxlen = np.zeros(4, np.int64)
    chain_ok = np.zeros((4, 16), np.bool_)
    single_ok = np.zeros(16, np.bool_)
    pair_ok = np.zeros(16, np.bool_)
    trio_ok = np.zeros(16, np.bool_)
    bomb_ok = np.zeros((16, 17), np.bool_)
    quad_ok = np.zeros((16, 17), np.bool_)
    rocket = np.zeros(16, np.int64)
    kick1_ok = np.zeros(16, np.bool_)
    kick2_ok = np.zeros(16, np.bool_)
    copies = table.deck.copies
    for p in table.plays:
        c = p.counts
        ranks = [r for r in range(16) if c[r]]
        natural = all(c[r] <= copies[r] for r in ranks)
        if not natural and not effective:
            continue  # an effective play of a wild game: not a plain combination
        fam = p.family
        if fam in _CHAIN_WIDTH and p.body == p.counts:
            w = _CHAIN_WIDTH[fam]
            L = len(ranks)
            minlen[w] = L if minlen[w] == 0 else min(minlen[w], L)
            maxlen[w] = max(maxlen[w], L)
            for r in ranks:
                chain_ok[w, r] = True
        elif fam == SINGLE and len(ranks) == 1:
            single_ok[ranks[0]] = True
        elif fam == PAIR and len(ranks) == 1:
            pair_ok[ranks[0]] = True
        elif fam == TRIO and len(ranks) == 1:
            trio_ok[ranks[0]] = True
        elif fam == BOMB and len(ranks) == 1 and c[ranks[0]] <= 16:
            if p.bomb_power > 0:
                bomb_ok[ranks[0], c[ranks[0]]] = True
            else:
                quad_ok[ranks[0], c[ranks[0]]] = True
        elif fam == ROCKET:
            rocket[:] = c
            flags[F_HAS_ROCKET] = 1
        elif fam in (TRIO_SINGLE, TRIO_PAIR, AIRPLANE_SINGLES, AIRPLANE_PAIRS):
            kick = [c[r] - p.body[r] for r in range(16)]
            for r in range(16):
                if kick[r]:
                    if fam in (TRIO_SINGLE, AIRPLANE_SINGLES):
                        kick1_ok[r] = True
                    else:
                        kick2_ok[r] = True
            flags[{TRIO_SINGLE: F_TRIO1, TRIO_PAIR: F_TRIO2, AIRPLANE_SINGLES: F_AIR1,
                   AIRPLANE_PAIRS: F_AIR2}[fam]] = 1
    flags[F_R] = R
    in_chain = chain_ok[1:].any(0)
    top = max((r for r in range(R) if in_chain[r]), default=R - 1)
    flags[F_CONTROL] = top + 1
    return PlanRules(flags, minlen, maxlen, chain_ok, single_ok, pair_ok, trio_ok, bomb_ok,
                     quad_ok, rocket, kick1_ok, kick2_ok)


# -- numba search ------------------------------------------------------------------------------
# out_meta columns of a recorded plan: family, key (main rank), length, n_cards
M_FAM, M_KEY, M_LEN, M_N = 0, 1, 2, 3


@njit(cache=True)
def _combo_cost(key, control_from, R):
    """Turn cost of a plain combination whose main rank is ``key``."""
    if key >= control_from:
        return 0.5
    return 1.0 + 0.01 * (control_from - key) / R


@njit(cache=True)
def _put(out_counts, out_meta, n_out, fam, key, length, r, n):
    """Write a one-rank combination (``n`` cards of rank ``r``) as row ``n_out``."""
    if n_out < out_meta.shape[0]:
        for q in range(16):
            out_counts[n_out, q] = 0
        out_counts[n_out, r] = n
        out_meta[n_out, M_FAM] = fam
        out_meta[n_out, M_KEY] = key
        out_meta[n_out, M_LEN] = length
        return n_out + 1
    return n_out


@njit(cache=True)
def _base(c, air_start, air_len, n_air, pr, rec, out_counts, out_meta, n_out):
    """Cost of grouping counts ``c`` (chains already removed) plus the chosen airplanes'
    kickers; with ``rec`` write the combinations (the airplanes with their kickers first)
    from row ``n_out`` on.  Returns (cost, next free row)."""
    R = pr.flags[F_R]
    ctrl = pr.flags[F_CONTROL]
    cost = 0.0
    k = np.zeros(16, np.int64)
    for r in range(16):
        k[r] = c[r]
    if pr.flags[F_HAS_ROCKET] == 1:
        ok = True
        for r in range(16):
            if pr.rocket[r] > k[r]:
                ok = False
                break
        if ok:
            for r in range(16):
                k[r] -= pr.rocket[r]
            cost -= 1.0
            if rec and n_out < out_meta.shape[0]:
                for r in range(16):
                    out_counts[n_out, r] = pr.rocket[r]
                out_meta[n_out, M_FAM] = ROCKET
                out_meta[n_out, M_KEY] = R
                out_meta[n_out, M_LEN] = 0
                n_out += 1
    kind = np.zeros(16, np.int64)  # main group of the rank: 0 none, 1 single, 2 pair, 3 trio
    extra = np.zeros(16, np.int64)  # further single cards of the rank, each its own single
    for r in range(R):
        n = k[r]
        if n == 0:
            continue
        if n >= 4:
            b = 0
            for m in range(min(n, 16), 3, -1):
                if pr.bomb_ok[r, m] or pr.quad_ok[r, m]:
                    b = m
                    break
            if b > 0:
                if pr.bomb_ok[r, b]:
                    cost -= 1.0
                else:
                    cost += _combo_cost(r, ctrl, R)
                if rec:
                    n_out = _put(out_counts, out_meta, n_out, BOMB, r, 0, r, b)
                n -= b
            if n >= 4:
                extra[r] = n - 3
                n = 3
        if n == 0:
            continue
        if n == 3 and not pr.trio_ok[r]:
            n = 2
            extra[r] += 1
        if n == 2 and not pr.pair_ok[r]:
            n = 1
            extra[r] += 1
        if pr.single_ok[r] or n > 1:
            kind[r] = n
        else:
            cost += STUCK_COST
        if not pr.single_ok[r] and extra[r] > 0:
            cost += STUCK_COST * extra[r]
            extra[r] = 0
        if kind[r] > 0:
            cost += _combo_cost(r, ctrl, R)
        cost += extra[r] * _combo_cost(r, ctrl, R)
    # kickers: airplanes first, then trios; the lowest eligible singles (or pairs) first
    owner = np.full(16, -1, np.int64)  # rank of a single / pair group -> carrier taking it
    for i in range(n_air):
        L = air_len[i]
        s0 = air_start[i]
        for want in range(1, 3):
            if (want == 1 and pr.flags[F_AIR1] == 0) or (want == 2 and pr.flags[F_AIR2] == 0):
                continue
            got = 0
            for r in range(ctrl):
                if kind[r] == want and owner[r] < 0 and not (s0 <= r < s0 + L) and (
                        pr.kick1_ok[r] if want == 1 else pr.kick2_ok[r]):
                    got += 1
            if got < L:
                continue
            got = 0
            for r in range(ctrl):
                if got == L:
                    break
                if kind[r] == want and owner[r] < 0 and not (s0 <= r < s0 + L) and (
                        pr.kick1_ok[r] if want == 1 else pr.kick2_ok[r]):
                    owner[r] = i
                    cost -= _combo_cost(r, ctrl, R)
                    got += 1
            break
    for t in range(R):
        if kind[t] != 3:
            continue
        for want in range(1, 3):
            if (want == 1 and pr.flags[F_TRIO1] == 0) or (want == 2 and pr.flags[F_TRIO2] == 0):
                continue
            hit = -1
            for r in range(ctrl):
                if kind[r] == want and owner[r] < 0 and (
                        pr.kick1_ok[r] if want == 1 else pr.kick2_ok[r]):
                    hit = r
                    break
            if hit >= 0:
                owner[hit] = 16 + t
                cost -= _combo_cost(hit, ctrl, R)
                break
    if rec:
        for i in range(n_air):
            if n_out >= out_meta.shape[0]:
                break
            s0 = air_start[i]
            L = air_len[i]
            for r in range(16):
                out_counts[n_out, r] = 0
            for r in range(s0, s0 + L):
                out_counts[n_out, r] = 3
            fam = AIRPLANE
            for r in range(R):
                if owner[r] == i:
                    out_counts[n_out, r] += kind[r]
                    fam = AIRPLANE_SINGLES if kind[r] == 1 else AIRPLANE_PAIRS
            out_meta[n_out, M_FAM] = fam
            out_meta[n_out, M_KEY] = s0 + L - 1
            out_meta[n_out, M_LEN] = L
            n_out += 1
        for t in range(R):
            if kind[t] != 3 or n_out >= out_meta.shape[0]:
                continue
            n_out = _put(out_counts, out_meta, n_out, TRIO, t, 1, t, 3)
            for r in range(R):
                if owner[r] == 16 + t:
                    out_counts[n_out - 1, r] += kind[r]
                    out_meta[n_out - 1, M_FAM] = TRIO_SINGLE if kind[r] == 1 else TRIO_PAIR
        for r in range(R):
            if (kind[r] == 1 or kind[r] == 2) and owner[r] < 0:
                n_out = _put(out_counts, out_meta, n_out, SINGLE if kind[r] == 1 else PAIR,
                             r, 1, r, kind[r])
            for _ in range(extra[r]):
                n_out = _put(out_counts, out_meta, n_out, SINGLE, r, 1, r, 1)
    return cost, n_out


@njit(cache=True)
def _chain_len_max(c, w, s, pr):
    """Longest chain of width ``w`` starting at rank ``s`` that the counts allow."""
    L = 0
    R = pr.flags[F_R]
    while s + L < R and pr.chain_ok[w, s + L] and c[s + L] >= w and L < pr.maxlen[w]:
        L += 1
    return L


@njit(cache=True)
def _first_from(c, pr, w, s, lcap):
    """The first chain candidate at or after ``(w, s)`` in search order (width 3 to 1, start
    rank ascending, length descending), the first start limited to length ``lcap``.
    Returns ``(w, s, L)``, ``w = 0`` when there is none."""
    R = pr.flags[F_R]
    first = True
    while w >= 1:
        if pr.minlen[w] > 0:
            while s < R:
                L = _chain_len_max(c, w, s, pr)
                if first and L > lcap:
                    L = lcap
                first = False
                if L >= pr.minlen[w]:
                    return w, s, L
                s += 1
        first = False
        w -= 1
        s = 0
    return 0, 0, 0


@njit(cache=True)
def _search(counts, pr, budget, best_ch):
    """Best plan cost of ``counts``; ``best_ch`` receives its chains (row 0 col 0 = count,
    then rows (w, s, L)).  Iterative depth-first search (numba's cache cannot hold recursive
    functions): each chain is chosen at or after its parent in search order, so every set of
    chains is visited once."""
    c = counts.copy()
    R = pr.flags[F_R]
    ctrl = pr.flags[F_CONTROL]
    maxd = best_ch.shape[0] - 1
    st = np.zeros((maxd, 3), np.int64)
    cost_at = np.zeros(maxd + 1)
    air_start = np.zeros(maxd + 1, np.int64)
    air_len = np.zeros(maxd + 1, np.int64)
    n_air = 0
    base, _ = _base(c, air_start, air_len, 0, pr, False, best_ch, best_ch, 0)
    best = base
    best_ch[0, 0] = 0
    nodes = 1
    d = 0
    w, s, L = _first_from(c, pr, 3, 0, 99)
    while True:
        if w > 0 and d < maxd and nodes < budget:
            for r in range(s, s + L):
                c[r] -= w
            st[d, 0] = w
            st[d, 1] = s
            st[d, 2] = L
            if w == 3:
                air_start[n_air] = s
                air_len[n_air] = L
                n_air += 1
            cost_at[d + 1] = cost_at[d] + _combo_cost(s + L - 1, ctrl, R)
            d += 1
            nodes += 1
            base, _ = _base(c, air_start, air_len, n_air, pr, False, best_ch, best_ch, 0)
            total = cost_at[d] + base
            if total < best - 1e-9:
                best = total
                best_ch[0, 0] = d
                for i in range(d):
                    best_ch[i + 1, 0] = st[i, 0]
                    best_ch[i + 1, 1] = st[i, 1]
                    best_ch[i + 1, 2] = st[i, 2]
            w, s, L = _first_from(c, pr, w, s, L)
            continue
        if d == 0 or nodes >= budget:
            break
        d -= 1
        w = st[d, 0]
        s = st[d, 1]
        L = st[d, 2]
        for r in range(s, s + L):
            c[r] += w
        if w == 3:
            n_air -= 1
        if L - 1 >= pr.minlen[w]:
            L -= 1
        else:
            w, s, L = _first_from(c, pr, w, s + 1, 99)
    return best


@njit(cache=True)
def plan_cost(counts, pr, budget):
    """The planner's cost of a hand (``int64[16]`` counts)."""
    best_ch = np.zeros((17, 3), np.int64)
    return _search(counts, pr, budget, best_ch)


@njit(cache=True)
def plan_costs_after(hand, rows, tab_counts, pr, budget, out):
    """``out[i]`` = cost of ``hand`` minus the cards of row ``rows[i]`` (0 for an empty hand)."""
    c = np.zeros(16, np.int64)
    for i in range(rows.shape[0]):
        empty = True
        for r in range(16):
            c[r] = hand[r] - tab_counts[rows[i], r]
            if c[r] != 0:
                empty = False
        out[i] = -100.0 if empty else plan_cost(c, pr, budget)


@njit(cache=True)
def plan_combos(counts, pr, budget, out_counts, out_meta):
    """The best plan's combinations: rows of ``out_counts`` (cards) and ``out_meta``
    (family, key, length); returns (cost, number of combinations)."""
    best_ch = np.zeros((17, 3), np.int64)
    cost = _search(counts, pr, budget, best_ch)
    c = counts.copy()
    n = 0
    air_start = np.zeros(16, np.int64)
    air_len = np.zeros(16, np.int64)
    n_air = 0
    for i in range(best_ch[0, 0]):
        w = best_ch[i + 1, 0]
        s = best_ch[i + 1, 1]
        L = best_ch[i + 1, 2]
        for r in range(s, s + L):
            c[r] -= w
        if w == 3:
            air_start[n_air] = s
            air_len[n_air] = L
            n_air += 1
        else:
            for r in range(16):
                out_counts[n, r] = 0
            for r in range(s, s + L):
                out_counts[n, r] = w
            out_meta[n, M_FAM] = STRAIGHT if w == 1 else PAIR_CHAIN
            out_meta[n, M_KEY] = s + L - 1
            out_meta[n, M_LEN] = L
            n += 1
    _, n = _base(c, air_start, air_len, n_air, pr, True, out_counts, out_meta, n)
    for i in range(n):
        t = 0
        for r in range(16):
            t += out_counts[i, r]
        out_meta[i, M_N] = t
    return cost, n


# -- wild jokers ----------------------------------------------------------------------------------
# In the wild-joker games (Da Niangniang, Lanxi Wulong) a joker played with at least one
# natural card stands for any natural rank the combination needs.  The planner values such a
# hand by trying the jokers as stand-ins: up to ``maxw`` of them (the lowest joker slots first,
# so Lanxi Wulong keeps its big joker as itself longest) go to each multiset of *candidate*
# ranks -- ranks the hand holds (a pair, a trio, a bomb one card longer) and empty chain ranks
# next to held ones (a straight's gap) -- and the best plan of the resulting effective counts
# wins.  A joker given an empty rank that ends up as a lone single would be illegal, but that
# assignment never beats giving it a held rank, which costs no more.  A hand that can make no
# play at all scores ``lone`` (Da Niangniang: one lone joker, the player is stuck and ranks
# last; Lanxi Wulong: only 3s, the player has failed and pays); ``lone < 0`` turns this off.
#
# ``wcfg`` (int64[3]) configures it: the number of natural ranks (jokers stand in only for
# those), ``maxw`` (jokers tried as stand-ins at most) and ``wmin``: 0 = a joker may join any
# combination; k > 0 = only ranks held at least k times (Da Niangniang's ``bombs_only``
# scope: jokers only complete bombs).
W_NAT, W_MAXW, W_MIN = 0, 1, 2


@njit(cache=True)
def _wild_best(counts, pr, budget, wild, wcfg, lone, best_c):
    """Lowest plan cost of ``counts`` with its wild jokers (slots ``wild``, lowest first)
    standing in; ``best_c`` receives the effective counts of the best assignment."""
    nat = wcfg[W_NAT]
    maxw = wcfg[W_MAXW]
    wmin = wcfg[W_MIN]
    js = np.zeros(8, np.int64)
    nj = 0
    for i in range(wild.shape[0]):
        for _ in range(counts[wild[i]]):
            if nj < 8:
                js[nj] = wild[i]
                nj += 1
    n_nat = 0
    total = 0
    for r in range(16):
        best_c[r] = counts[r]
        total += counts[r]
        if r < nat:
            n_nat += counts[r]
    if lone >= 0.0 and total > 0:
        dead = True  # no card can be played: one lone joker, only chain-only ranks (3s)
        for r in range(16):
            if counts[r] > 0 and pr.single_ok[r]:
                dead = False
        if dead and pr.flags[F_HAS_ROCKET] == 1:
            rocket = True
            for r in range(16):
                if pr.rocket[r] > counts[r]:
                    rocket = False
            dead = not rocket
        if dead:
            return lone
    best = plan_cost(counts, pr, budget)
    if nj == 0 or n_nat == 0:
        return best
    cand = np.zeros(16, np.int64)
    nc = 0
    for r in range(nat):
        ok = counts[r] > 0 if wmin == 0 else counts[r] >= wmin
        if wmin == 0 and not ok and (pr.chain_ok[1, r] or pr.chain_ok[2, r] or pr.chain_ok[3, r]):
            for q in range(max(0, r - 2), min(nat, r + 3)):
                if q != r and counts[q] > 0:
                    ok = True
        if ok:
            cand[nc] = r
            nc += 1
    if nc == 0:
        return best
    c = np.zeros(16, np.int64)
    idx = np.zeros(8, np.int64)
    for k in range(1, min(nj, maxw) + 1):
        for i in range(k):
            idx[i] = 0
        while True:
            for r in range(16):
                c[r] = counts[r]
            for i in range(k):
                c[js[i]] -= 1
                c[cand[idx[i]]] += 1
            v = plan_cost(c, pr, budget)
            if v < best - 1e-9:
                best = v
                for r in range(16):
                    best_c[r] = c[r]
            i = k - 1
            while i >= 0 and idx[i] == nc - 1:
                i -= 1
            if i < 0:
                break
            idx[i] += 1
            for j in range(i + 1, k):
                idx[j] = idx[i]
    return best


@njit(cache=True)
def plan_cost_wild(counts, pr, budget, wild, wcfg, lone):
    """The planner's cost of a hand whose jokers in slots ``wild`` are wild (see above)."""
    best_c = np.zeros(16, np.int64)
    return _wild_best(counts, pr, budget, wild, wcfg, lone, best_c)


@njit(cache=True)
def play_remainder(hand, row_counts, wild, nat, out):
    """The physical cards left after playing an effective row with no voluntary stand-in:
    natural cards where the hand has them, wild jokers (lowest slot first) for the rest,
    jokers the row holds as themselves.  Returns the cards left."""
    d = 0
    left = 0
    for r in range(16):
        out[r] = hand[r]
    for r in range(nat):
        use = min(row_counts[r], hand[r])
        out[r] -= use
        d += row_counts[r] - use
    for r in range(nat, 16):
        out[r] -= row_counts[r]
    for i in range(wild.shape[0]):
        j = wild[i]
        take = min(d, out[j])
        out[j] -= take
        d -= take
    for r in range(16):
        left += out[r]
    return left


@njit(cache=True)
def plan_costs_after_wild(hand, rows, tab_counts, pr, budget, wild, wcfg, lone, out):
    """:func:`plan_costs_after` for a wild-joker game (rows are effective plays).

    The remainder is the one without voluntary stand-ins, except when it would hold jokers
    only: then one or two jokers may stand in for natural cards of the play instead (keeping
    at least one natural card in it), and the best of those remainders counts -- the
    follow-up decision can always realise it."""
    nat = wcfg[W_NAT]
    c = np.zeros(16, np.int64)
    c2 = np.zeros(16, np.int64)
    best_c = np.zeros(16, np.int64)
    for i in range(rows.shape[0]):
        t = rows[i]
        left = play_remainder(hand, tab_counts[t], wild, nat, c)
        if left == 0:
            out[i] = -100.0
            continue
        best = _wild_best(c, pr, budget, wild, wcfg, lone, best_c)
        n_nat = 0
        used = 0
        for r in range(nat):
            n_nat += c[r]
            used += hand[r] - c[r]
        if n_nat == 0 and used >= 2 and wcfg[W_MIN] == 0:
            # jokers left alone: put one (or two) in the play for natural cards of it
            for r1 in range(nat):
                if hand[r1] - c[r1] < 1:
                    continue
                for r2 in range(r1, nat + 1):
                    if r2 < nat and (left < 2 or used < 3 or hand[r2] - c[r2] < 1 + (r2 == r1)):
                        continue
                    for q in range(16):
                        c2[q] = c[q]
                    c2[r1] += 1
                    if r2 < nat:
                        c2[r2] += 1
                    k = 2 if r2 < nat else 1
                    for w in range(wild.shape[0]):
                        take = min(k, c2[wild[w]])
                        c2[wild[w]] -= take
                        k -= take
                    v = _wild_best(c2, pr, budget, wild, wcfg, lone, best_c)
                    if v < best:
                        best = v
        out[i] = best


@njit(cache=True)
def plan_combos_wild(counts, pr, budget, wild, wcfg, lone, out_counts, out_meta):
    """:func:`plan_combos` of the best joker assignment: the combinations are effective
    plays (a joker counted as the rank it stands for)."""
    best_c = np.zeros(16, np.int64)
    _wild_best(counts, pr, budget, wild, wcfg, lone, best_c)
    return plan_combos(best_c, pr, budget, out_counts, out_meta)
