"""The ``heuristic`` policy's fast path: packed action records and the card-play scorer.

:func:`pack_records` writes two words per action id into the parameter vector
(:data:`~cardenvs.core.policy_vector.PP_RECS`: its planes and its fields), and
:func:`score_card_play` scores a card-play decision from them without the play table (the
same values as :func:`cardenvs.core.policy_score.score_actions_reference`);
:func:`score_actions` is the ``heuristic`` policy's scorer of every decision.  The inlined
twins (``*_i``) are the helpers compiled into their caller.  See :mod:`cardenvs.core.policy`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .combos import (AIRPLANE_PAIRS, FOUR_TWO_PAIRS, FOUR_TWO_SINGLES, PAIR, ROCKET, SINGLE, TRIO,
                     TRIO_PAIR, TRIO_SINGLE)
from .kernels import cttz
from .policy_plan import _cost_from, _masks_after, _set_count, cost_of_masks, hand_cost, masks_of
from .policy_score import (_bot_lead_score, _dead, _hand_total, _lowest_rank, _mover_view,
                           _unseen, _unseen_bomb, score_choices)
from .policy_vector import (ALLY_DELTA, ALLY_ENEMY_MIN, BOMB_FINISH, CASH_COST, FOLLOW_THR_FAR,
                            FOLLOW_THR_NEAR, FOLLOW_THR_URGENT, K_AVOID, K_PASS, K_PLAY,
                            PP_CTRLFROM, PP_GREEDY, PP_LOOSE, PP_NOSINGLE, PP_NP, PP_R, PP_RECS,
                            PP_WILD, REC_BIG, REC_DOUBLES, REC_FAMILY, REC_KEY, REC_KIND,
                            REC_NCARDS, REC_POWER, REC_RSUM)
from .state import CUR, HDR

# -- the packed action records (the fast path of the heuristic policy) ---------------------------

# inlined twins of the helpers the card-play scorer calls per decision or per candidate: a
# numba call that takes arrays increfs and decrefs each of them (a few ns each, dozens per
# decision); the same Python functions, compiled into the caller
_cost_from_i = njit(inline="always", cache=True)(_cost_from.py_func)
cost_of_masks_i = njit(inline="always", cache=True)(cost_of_masks.py_func)
masks_of_i = njit(inline="always", cache=True)(masks_of.py_func)
_hand_total_i = njit(inline="always", cache=True)(_hand_total.py_func)
_mover_view_i = njit(inline="always", cache=True)(_mover_view.py_func)
_unseen_i = njit(inline="always", cache=True)(_unseen.py_func)
_unseen_bomb_i = njit(inline="always", cache=True)(_unseen_bomb.py_func)
_hand_cost_i = njit(inline="always", cache=True)(hand_cost.py_func)
_dead_i = njit(inline="always", cache=True)(_dead.py_func)
_lowest_rank_i = njit(inline="always", cache=True)(_lowest_rank.py_func)
_bot_lead_score_i = njit(inline="always", cache=True)(_bot_lead_score.py_func)


_REC_FIELDS = ("kind", "ncards", "family", "key", "power", "doubles", "rsum", "big")


def pack_records(tab, kinds: np.ndarray, rsum: np.ndarray, n_actions: int) -> np.ndarray:
    """The packed action records of :data:`PP_RECS`: ``(n_actions, 2)`` ``int64``, word 0 the
    row's planes (``tab.lo``; 0 for a non-play action), word 1 its kind and fields at the
    ``REC_*`` (shift, bits).  Raises ``ValueError`` when a value does not fit its field."""
    T = len(tab.ncards)
    A = int(n_actions)
    rec = np.zeros((A, 2), np.int64)
    big = np.zeros(A, np.int64)
    cols = {"kind": np.asarray(kinds[:A], np.int64)}
    for name in ("ncards", "family", "key", "power", "doubles"):
        col = np.zeros(A, np.int64)
        col[:T] = getattr(tab, name)[:T]
        cols[name] = col
    col = np.zeros(A, np.int64)
    col[:T] = rsum[:T]
    cols["rsum"] = col
    big[:T] = (np.asarray(tab.counts)[:T, :16] > 4).any(1)
    cols["big"] = big
    rec[:T, 0] = tab.lo[:T]
    specs = (REC_KIND, REC_NCARDS, REC_FAMILY, REC_KEY, REC_POWER, REC_DOUBLES, REC_RSUM,
             REC_BIG)
    for name, (shift, bits) in zip(_REC_FIELDS, specs):
        v = cols[name]
        if v.size and (v.min() < 0 or v.max() >= (1 << bits)):
            raise ValueError(f"the rollout policy's action records hold {name} in {bits} bits; "
                             f"this table's values run {v.min()}..{v.max()}")
        rec[:, 1] |= v << shift
    return rec


@njit(inline="always", cache=True)
def _rec_kind(w):
    return w & 7


@njit(inline="always", cache=True)
def _rec_ncards(w):
    return (w >> 3) & 63


@njit(inline="always", cache=True)
def _rec_family(w):
    return (w >> 9) & 31


@njit(inline="always", cache=True)
def _rec_key(w):
    return (w >> 14) & 511


@njit(inline="always", cache=True)
def _rec_power(w):
    return (w >> 23) & 511


@njit(inline="always", cache=True)
def _rec_doubles(w):
    return (w >> 32) & 15


@njit(inline="always", cache=True)
def _rec_rsum(w):
    return (w >> 36) & 1023


@njit(inline="always", cache=True)
def _rec_count(lo, w, counts, row, r):
    """Cards of rank slot ``r`` in play row ``row`` (planes ``lo``, record word ``w``;
    ``counts``: the table's, read only for a row holding more than four of a rank)."""
    if (w >> 46) & 1:
        return counts[row, r]
    return ((lo >> r) & 1) + ((lo >> (r + 16)) & 1) + ((lo >> (r + 32)) & 1) + \
        ((lo >> (r + 48)) & 1)


@njit(inline="always", cache=True)
def _cost_after_rec(h, total, m1, m2, m3, m4, row, lo, w, counts, pp, c):
    """:func:`cost_after_row` (``full=1``) from the row's packed record."""
    for r in range(16):
        c[r] = h[r]
    ranks = lo & 0xFFFF
    while ranks != 0:
        bit = ranks & -ranks
        ranks &= ranks - 1
        r = cttz(bit)
        v = h[r] - _rec_count(lo, w, counts, row, r)
        c[r] = v
        m1, m2, m3, m4 = _set_count(bit, v, m1, m2, m3, m4)
    return _cost_from_i(m1, m2, m3, m4, 0, total - _rec_ncards(w), c, c, pp, 1)


@njit(cache=True)
def _hand_after_rec(h, row, lo, w, counts, pp, out):
    """:func:`hand_after` from the row's packed record."""
    R = pp[PP_R]
    wild = pp[PP_WILD]
    need = 0
    for r in range(16):
        v = h[r]
        c = _rec_count(lo, w, counts, row, r)
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


_hand_after_rec_i = njit(inline="always", cache=True)(_hand_after_rec.py_func)


@njit(inline="always", cache=True)
def _sure_rec(fam, key, u, nw, bomb_out, pp):
    """:func:`_sure` of a row of family ``fam`` and key ``key``."""
    if fam == SINGLE:
        w = 1
    elif fam == PAIR:
        w = 2
    elif fam == TRIO or fam == TRIO_SINGLE or fam == TRIO_PAIR:
        w = 3
    else:
        return False
    if bomb_out:
        return False
    R = pp[PP_R]
    wild = pp[PP_WILD]
    for r in range(key + 1, R):
        v = u[r]
        if not (wild >> r) & 1 and v > 0:
            v += nw
        if v >= w:
            return False
    return True


@njit(cache=False)
def score_actions(s, legal, k, tab, opts, pp, k_step, tmp, scores, work):
    """Score each of the ``k`` legal actions ``legal[:k]`` of the seat to move (lower is
    better; ``inf`` for an action the policy never takes while another is available).

    The ``heuristic`` policy: the card play of the ``rules`` agent on the full plan cost
    (:func:`hand_cost` with ``full=1``): go out when a legal play empties the hand; lead
    the plan's combinations (plays that do not raise the cost beyond their own), low first,
    controls and bombs last, sure winners first when at most one other combination is left,
    the lowest single (pair) to a partner holding one (two) cards, no single (pair) into an
    opponent holding one (two); follow an opponent with the play that raises the plan cost
    least while it stays within a threshold set by how close the opponents are to going out
    (:data:`FOLLOW_THR_URGENT` ...), a bomb only when no plain play does and an opponent is
    close to going out or the bomb nearly finishes the hand; never beat a partner's play
    unless going out, except a loose ally's (:data:`PP_LOOSE`) with a cheap natural play
    while the solo seat is far from going out; never a play that leaves a hand able to
    make no play (:func:`_dead`) while anything else is legal; an avoided action
    (``K_AVOID``: 报牌) only on a lead whose hand is one play (declare, then go out).  The
    other decisions are :func:`score_choices`'.

    The same values, operation for operation, as :func:`score_actions_reference`: the card
    play is :func:`score_card_play`'s.

    ``tmp`` is a scratch state (the size of ``s``), ``work`` a scratch ``int64`` array of at
    least 48.  ``k_step`` is the game's step kernel (used to score choices by the hand they
    leave).
    """
    if score_choices(s, legal, k, tab, opts, pp, k_step, tmp, scores, work, 1):
        return
    score_card_play(s, legal, k, tab.counts, pp, scores, work)


@njit(cache=True)
def is_card_play(legal, k, pp):
    """Whether the decision of legal ids ``legal[:k]`` is card play (rows, pass, avoided
    actions): :func:`score_choices` leaves it to the card-play scorer."""
    rb = pp[PP_RECS]
    for j in range(k - 1, -1, -1):
        kd = _rec_kind(pp[rb + 2 * legal[j] + 1])  # (the record the scorer reads next)
        if kd == K_PASS or kd == K_AVOID:
            continue
        return kd == K_PLAY
    return True


@njit(cache=True)
def score_card_play(s, legal, k, counts, pp, scores, work):
    """The ``heuristic`` policy's scores of a card-play decision (see :func:`score_actions`)
    into ``scores[:k]``, from the packed action records (:data:`PP_RECS`); ``counts`` is the
    play table's (read only for rows holding more than four cards of a rank).

    It takes no play table and calls no kernel: a numba function that passes the play table
    (a tuple of some twenty arrays) on to another function increfs and decrefs every array
    of it on each call, about 0.2 us, which was most of a decision's time.  The records put
    what a candidate needs in one cache line."""
    n = pp[PP_NP]
    R = pp[PP_R]
    ctrl = pp[PP_CTRLFROM]
    rb = pp[PP_RECS]
    seat = s[CUR]
    ho = HDR + 16 * seat
    h = s[ho:ho + 16]
    hb = work[0:16]
    cb = work[16:32]
    u = work[32:48]
    inf = np.inf
    total, prev, owner, solo = _mover_view_i(s, pp)
    enemy_min = 99
    partner_min = 99
    for q in range(n):
        if q == seat:
            continue
        hs = _hand_total_i(s, q)
        if hs == 0:
            continue
        if solo >= 0 and seat != solo and q != solo:
            if hs < partner_min:
                partner_min = hs
        elif hs < enemy_min:
            enemy_min = hs
    can_pass = False
    one_play = False  # a lead whose hand is one play: declare first (报牌), then go out
    for j in range(k):
        w = pp[rb + 2 * legal[j] + 1]
        kd = _rec_kind(w)
        if kd == K_PASS:
            can_pass = True
        elif kd == K_PLAY and _rec_ncards(w) >= total:
            one_play = True
    following = prev >= 0 and owner >= 0 and owner != seat and can_pass
    if following:
        one_play = False
    by_partner = following and solo >= 0 and seat != solo and owner != solo
    greedy = ((pp[PP_GREEDY] >> seat) & 1) == 1  # a simple rule bot (PP_GREEDY)
    hand_low = -1  # (a greedy seat's lowest rank)
    if greedy:
        by_partner = False
        hand_low = _lowest_rank_i(h)
    beater_left = _hand_total_i(s, owner) if owner >= 0 else 99
    if beater_left == 0:
        beater_left = 99  # the play went out with its owner: no threat from that seat
    plain = pp[PP_WILD] == 0
    m1, m2, m3, m4 = masks_of_i(h, pp)
    small = plain  # at most four cards of a rank: the plan costs from the masks alone
    for r in range(16):
        if h[r] > 4:
            small = False
    loose = by_partner and pp[PP_LOOSE] == 1 and enemy_min > ALLY_ENEMY_MIN
    cost_now = 0.0
    if not by_partner or loose:  # (over a partner only going out counts)
        if small:
            cost_now = cost_of_masks_i(m1, m2, m3, m4, pp)
        else:
            for r in range(16):
                cb[r] = h[r]
            if plain:
                cost_now = _cost_from_i(m1, m2, m3, m4, 0, 0, h, cb, pp, 1)
            else:
                cost_now = _hand_cost_i(h, pp, cb, 1)
    # the unseen cards (``u``, ``nw`` wild, ``bomb_out``) matter only to a lead that cashes:
    # counted on the first such candidate
    nw = 0
    bomb_out = False
    have_unseen = False
    thr = FOLLOW_THR_FAR
    if enemy_min <= 2 or beater_left <= 3:
        thr = FOLLOW_THR_URGENT
    elif enemy_min <= 5:
        thr = FOLLOW_THR_NEAR
    if greedy:
        thr = inf
    bomb_ok = enemy_min <= 3 or beater_left <= 4
    check_dead = pp[PP_NOSINGLE] != 0
    feed_partner = 0
    if partner_min <= 2 and enemy_min > 2:
        feed_partner = partner_min  # lead the lowest single (1) or pair (2)
    for j in range(k):
        a = legal[j]
        lo = pp[rb + 2 * a]
        w = pp[rb + 2 * a + 1]
        kd = _rec_kind(w)
        if kd == K_PASS:
            scores[j] = -1.0 if by_partner and not loose else 10.0
            continue
        if kd != K_PLAY:
            if kd == K_AVOID:
                scores[j] = -2000.0 if one_play else inf
            else:
                scores[j] = 50.0
            continue
        nc = _rec_ncards(w)
        if nc >= total:  # goes out (a doubling play first)
            scores[j] = -1000.0 - 10.0 * _rec_doubles(w) - 0.01 * nc
            continue
        key = _rec_key(w)
        if by_partner and not loose:  # never over a partner: no need of the cost
            scores[j] = 40.0 + 0.001 * key
            continue
        fam = _rec_family(w)
        power = _rec_power(w)
        bomb = power > 0 or fam == ROCKET or fam == FOUR_TWO_SINGLES or fam == FOUR_TWO_PAIRS
        if following and bomb and bomb_ok and not check_dead and not by_partner:
            scores[j] = 5.0 + 0.001 * power  # (the cost does not matter then)
            continue
        if small and not (w >> 46) & 1:
            a1, a2, a3, a4 = _masks_after(h, m1, m2, m3, m4, lo)
            c_after = cost_of_masks_i(a1, a2, a3, a4, pp)
            if check_dead:
                for r in range(16):
                    hb[r] = h[r] - _rec_count(lo, w, counts, a, r)
        elif plain:
            c_after = _cost_after_rec(h, total, m1, m2, m3, m4, a, lo, w, counts, pp, cb)
            if check_dead:
                for r in range(16):
                    hb[r] = h[r] - _rec_count(lo, w, counts, a, r)
        else:
            _hand_after_rec_i(h, a, lo, w, counts, pp, hb)
            c_after = _hand_cost_i(hb, pp, cb, 1)
        if check_dead and _dead_i(hb, pp):
            scores[j] = 900.0  # leaves a hand that can make no play: only if nothing else
            continue
        d = c_after - cost_now
        rsum = _rec_rsum(w)
        if by_partner:
            sc = 40.0 + d
            if loose and not bomb and key < ctrl and d <= ALLY_DELTA + 1e-9:
                natural = True  # a loose ally is overtaken with natural cards only
                for r in range(16):
                    cnt = _rec_count(lo, w, counts, a, r)
                    if cnt > 0 and ((pp[PP_WILD] >> r) & 1 or cnt > h[r]):
                        natural = False
                if natural:
                    sc = d + 0.001 * key + 1e-6 * rsum
            scores[j] = sc
            continue
        if following:
            if bomb:
                if bomb_ok or c_after <= BOMB_FINISH + 1e-9:
                    scores[j] = 5.0 + 0.001 * power
                else:
                    scores[j] = 30.0 + 0.001 * power
            elif greedy:  # the lowest play that beats, kickers lowest (plan cost aside)
                scores[j] = 0.001 * key + 1e-6 * rsum
            elif d <= thr + 1e-9:
                scores[j] = d + 0.001 * key + 1e-6 * rsum
            else:
                scores[j] = 20.0 + d
            continue
        # a lead: the plan's combinations first (a play that costs the plan more than the
        # combination it is breaks it), low first, controls and bombs last
        one = fam == SINGLE or fam == PAIR or fam == TRIO or fam == TRIO_SINGLE or \
            fam == TRIO_PAIR
        control = one and key >= ctrl
        if bomb:
            own = -1.0
        elif control:
            own = 0.5
        else:
            own = 1.0
        brk = d + own
        if brk < 0.0:
            brk = 0.0
        low = cttz(lo & 0xFFFF)
        sc = 4.0 * brk + low / R - 0.03 * nc + 0.001 * rsum / R
        if fam == TRIO_PAIR or fam == AIRPLANE_PAIRS:
            sc += 0.05  # single kickers first (the pairs are worth more)
        if control:
            sc += 1.0
        cash = brk < 0.01 and c_after <= CASH_COST + 1e-9
        if cash and not have_unseen:
            nw = _unseen_i(s, h, pp, u)
            bomb_out = _unseen_bomb_i(u, nw, pp)
            have_unseen = True
        if bomb:
            sc += 5.0
            if cash and (fam == ROCKET or not bomb_out):
                sc = -19.0  # a sure bomb before the last combination
        elif cash and _sure_rec(fam, key, u, nw, bomb_out, pp):
            sc = -20.0 - 0.1 * nc + 0.01 * low  # cash a sure winner, the biggest first
        if feed_partner == 1 and fam == SINGLE:
            sc = -10.0 + key / R
        elif feed_partner == 2 and fam == PAIR:
            sc = -10.0 + key / R
        elif enemy_min == 1 and nc == 1 and sc > -19.0:
            sc = 8.0 - key / R  # not into a last card; if only singles, the highest
        elif enemy_min == 2 and fam == PAIR and sc > -19.0:
            sc += 2.5
        if greedy:
            sc = _bot_lead_score_i(sc, fam, low, hand_low)
        scores[j] = sc
    return
