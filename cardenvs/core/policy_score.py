"""The rollout policy's scorers that read the play table (numba kernels).

:func:`score_choices` scores the decisions outside the card play (bids, choices scored by
the hand they leave, fixed preferences), :func:`score_actions0` is the ``heuristic0``
policy, and :func:`score_actions_reference` the ``heuristic`` card play as first written,
column by column of the table: the reference that the fast scorer
(:func:`cardenvs.core.policy_fast.score_card_play`) is held to.  The helpers read what the
seat to move may know (its view, the unseen cards, sure winners).  See
:mod:`cardenvs.core.policy`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .combos import (AIRPLANE_PAIRS, AIRPLANE_SINGLES, FOUR_TWO_PAIRS, FOUR_TWO_SINGLES, PAIR,
                     ROCKET, SINGLE, TRIO, TRIO_PAIR, TRIO_SINGLE)
from .kernels import cttz
from .policy_plan import (_cost_from, cost_after_row, hand_after, hand_cost, hand_value, masks_of,
                          strength)
from .policy_vector import (ALLY_DELTA, ALLY_ENEMY_MIN, BOMB_ENEMY, BOMB_FINISH, CASH_COST,
                            FOLLOW_SLACK, FOLLOW_THR_FAR, FOLLOW_THR_NEAR, FOLLOW_THR_URGENT,
                            K_AVOID, K_BID, K_EVAL_FIRST, K_EVAL_LAST, K_FIRST, K_LAST, K_PASS,
                            K_PLAY, PP_BIDTH, PP_BIDTH1, PP_BOMBN, PP_COPIES, PP_CTRLFROM,
                            PP_GREEDY, PP_KINDS, PP_LOOSE, PP_NA, PP_NOSINGLE, PP_NP, PP_PASS,
                            PP_R, PP_ROCKET, PP_SOLO, PP_WILD, URGENT_ENEMY)
from .state import CUR, HDR, LANDLORD, LAST_ROW, LAST_SEAT, PHASE, P_DONE

# -- scoring the legal actions --------------------------------------------------------------------


@njit(cache=True)
def _hand_total(s, seat):
    o = HDR + 16 * seat
    t = 0
    for r in range(16):
        t += s[o + r]
    return t


@njit(cache=True)
def _mover_view(s, pp):
    """What both card-play policies read first: the mover's card count, the play to beat
    (row, -1 on a lead) and its owner, and the solo seat (-1 when there is none or it is out)."""
    total = _hand_total(s, s[CUR])
    prev = s[LAST_ROW]
    owner = s[LAST_SEAT] if prev >= 0 else -1
    solo = s[LANDLORD] if pp[PP_SOLO] == 1 else -1
    if solo >= 0 and _hand_total(s, solo) == 0:
        solo = -1  # the solo seat is out: every seat for himself
    return total, prev, owner, solo


@njit(cache=False)  # takes a kernel dispatcher: not cacheable (see core.rollout)
def score_choices(s, legal, k, tab, opts, pp, k_step, tmp, scores, work, full):
    """Score a decision outside the card play (bids, choices scored by the hand they leave,
    fixed preferences) into ``scores[:k]``; returns ``False`` (nothing written) for a card
    play decision (rows, pass, avoided actions).  ``full``: bid by the full strength
    against its own thresholds (``heuristic``; 0: ``heuristic0``)."""
    seat = s[CUR]
    ho = HDR + 16 * seat
    h = s[ho:ho + 16]
    cb = work[16:32]
    inf = np.inf
    # which kinds are offered
    kind0 = -1  # non-play ids come after the play rows: look from the end
    for j in range(k - 1, -1, -1):
        kd = pp[PP_KINDS + legal[j]]
        if kd == K_PASS or kd == K_AVOID:
            continue
        if kd != K_PLAY:
            kind0 = kd
        break
    if kind0 == K_BID:
        st = strength(h, pp, cb, full)
        th = PP_BIDTH1 if full != 0 else PP_BIDTH
        level = 0
        for b in range(3):
            if st * 100.0 >= pp[th + b]:
                level = b + 1
        for j in range(k):
            a = legal[j]
            if pp[PP_KINDS + a] == K_BID:
                b = a - pp[PP_PASS]
                scores[j] = -1.0 * b if b <= level else inf
            else:
                scores[j] = 0.0  # pass
        return True
    if kind0 == K_FIRST or kind0 == K_LAST:
        for j in range(k):
            a = legal[j]
            kd = pp[PP_KINDS + a]
            if kd == kind0:
                scores[j] = a if kind0 == K_FIRST else -a
            else:
                scores[j] = inf
        return True
    if kind0 == K_EVAL_FIRST or kind0 == K_EVAL_LAST:
        na = pp[PP_NA]
        for j in range(k):
            a = legal[j]
            if pp[PP_KINDS + a] != kind0:
                scores[j] = inf
                continue
            for q in range(s.shape[0]):
                tmp[q] = s[q]
            k_step(tmp, a, tab, opts)
            if tmp[PHASE] == P_DONE:
                v = 100.0
            else:
                v = hand_value(tmp[ho:ho + 16], pp, cb, full)
            tie = a / na if kind0 == K_EVAL_FIRST else -a / na
            scores[j] = -v + 1e-6 * tie
        return True
    return False


@njit(cache=False)
def score_actions0(s, legal, k, tab, opts, pp, k_step, tmp, scores, work):
    """The ``heuristic0`` policy's scores of the ``k`` legal actions ``legal[:k]`` of the
    seat to move (lower is better; ``inf`` for an action it never takes while another is
    available): the first heuristic, kept for comparison (see :func:`score_actions`)."""
    if score_choices(s, legal, k, tab, opts, pp, k_step, tmp, scores, work, 0):
        return
    n = pp[PP_NP]
    R = pp[PP_R]
    seat = s[CUR]
    ho = HDR + 16 * seat
    h = s[ho:ho + 16]
    hb = work[0:16]
    cb = work[16:32]
    inf = np.inf
    total, prev, owner, solo = _mover_view(s, pp)
    enemy_min = 1000
    partner_one = False  # the next seat is a partner holding a single card
    for q in range(n):
        if q == seat:
            continue
        hs = _hand_total(s, q)
        if hs == 0:
            continue
        partner = solo >= 0 and seat != solo and q != solo
        if partner:
            if q == (seat + 1) % n and hs == 1:
                partner_one = True
        elif hs < enemy_min:
            enemy_min = hs
    following = prev >= 0
    by_partner = (following and solo >= 0 and seat != solo and owner != solo and owner != seat
                  and owner >= 0)
    owner_size = _hand_total(s, owner) if owner >= 0 else 1000
    if owner_size == 0:
        owner_size = 1000
    plain = pp[PP_WILD] == 0
    m1, m2, m3, m4 = masks_of(h, pp)
    cost_now = 0.0
    if following and not by_partner:  # the lead and a partner's play need no cost of now
        for r in range(16):
            cb[r] = h[r]
        cost_now = _cost_from(m1, m2, m3, m4, 0, 0, h, cb, pp, 0) if plain else hand_cost(h, pp,
                                                                                          cb)
    for j in range(k):
        a = legal[j]
        kd = pp[PP_KINDS + a]
        if kd == K_PASS:
            scores[j] = FOLLOW_SLACK if not by_partner else -1.0
            continue
        if kd != K_PLAY:
            scores[j] = inf if kd == K_AVOID else 50.0
            continue
        if tab.ncards[a] >= total:  # goes out
            scores[j] = -1000.0 - tab.ncards[a]
            continue
        if by_partner:
            scores[j] = inf
            continue
        if plain:
            c_after = cost_after_row(h, total, m1, m2, m3, m4, a, tab, pp, cb)
        else:
            hand_after(h, a, tab, pp, hb)
            c_after = hand_cost(hb, pp, cb)
        key = tab.key[a] / R
        bomb = tab.power[a] > 0 or tab.family[a] == ROCKET
        fam = tab.family[a]
        if not following:
            sc = c_after + 0.4 * key - 0.01 * tab.ncards[a]
            if bomb and c_after > 1.0:
                sc += 2.0
            if fam == SINGLE:
                if enemy_min == 1:
                    sc += 2.0 - key  # lead the highest single, or anything else
                elif partner_one:
                    sc -= 2.0 + key  # lead the lowest single to the partner
            elif fam == PAIR and enemy_min == 2:
                sc += 1.0 - 0.5 * key
            scores[j] = sc
            continue
        sc = c_after - cost_now + 0.4 * key
        urgent = owner_size <= URGENT_ENEMY or enemy_min <= URGENT_ENEMY
        if bomb:
            if owner_size <= BOMB_ENEMY or c_after <= 1.0:
                sc += 0.5
                if urgent:
                    sc -= 5.0
            else:
                sc = inf
        elif urgent:
            sc -= 5.0
        scores[j] = sc
    return

@njit(cache=True)
def _unseen(s, h, pp, out):
    """Cards the seat to move has not seen (the deck less its hand and every played card),
    per rank slot, into ``out``; returns the number of unseen wild jokers."""
    n = pp[PP_NP]
    po = HDR + 16 * n + 16
    wild = pp[PP_WILD]
    nw = 0
    for r in range(16):
        v = pp[PP_COPIES + r] - h[r]
        for q in range(n):
            v -= s[po + 16 * q + r]
        if v < 0:
            v = 0
        out[r] = v
        if (wild >> r) & 1:
            nw += v
    return nw


@njit(cache=True)
def _unseen_bomb(u, nw, pp):
    """Whether the unseen cards ``u`` (``nw`` of them wild jokers) hold a bomb or the
    rocket, as if one player held them all."""
    R = pp[PP_R]
    wild = pp[PP_WILD]
    bn = pp[PP_BOMBN]
    rk = pp[PP_ROCKET]
    if rk != 0:
        whole = True
        for r in range(R):
            if (rk >> r) & 1 and u[r] < 1:
                whole = False
        if whole:
            return True
    for r in range(R):
        if (wild >> r) & 1 or u[r] == 0:
            continue
        if u[r] + nw >= bn:
            return True
    return False


@njit(cache=True)
def _sure(row, tab, u, nw, bomb_out, pp):
    """Whether no play of the unseen cards ``u`` beats ``row`` (a single, pair or trio, with
    or without kickers; other families are never sure), as if one player held them all."""
    fam = tab.family[row]
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
    for r in range(tab.key[row] + 1, R):
        v = u[r]
        if not (wild >> r) & 1 and v > 0:
            v += nw
        if v >= w:
            return False
    return True


@njit(cache=True)
def _dead(hand, pp):
    """Whether the non-empty ``hand`` can make no play at all: every card left is of a rank
    that cannot be played alone, fewer than four of it (Lanxi Wulong's 3s, Da Niangniang's
    lone joker)."""
    nosingle = pp[PP_NOSINGLE]
    left = 0
    for r in range(pp[PP_R]):
        v = hand[r]
        if v <= 0:
            continue
        left += v
        if not (nosingle >> r) & 1 or v >= 4:
            return False
    return left > 0


@njit(cache=True)
def _lowest_rank(h):
    """The lowest rank the hand ``h`` holds a card of (15 when it holds none below 15)."""
    r = 0
    while r < 15 and h[r] == 0:
        r += 1
    return r


@njit(cache=True)
def _bot_lead_score(sc, fam, low, hand_low):
    """A lead's score ``sc`` for a greedy seat (:data:`PP_GREEDY`, a simple rule bot), which
    leads a combination without kickers (family ``fam``) that holds its lowest card (``low``,
    the play's lowest rank; ``hand_low``, the hand's)."""
    if low != hand_low:
        sc += 100.0
    if fam == TRIO_SINGLE or fam == TRIO_PAIR or fam == AIRPLANE_SINGLES or \
            fam == AIRPLANE_PAIRS:
        sc += 50.0
    return sc


@njit(cache=False)
def score_actions_reference(s, legal, k, tab, opts, pp, k_step, tmp, scores, work):
    """The ``heuristic`` policy's scores as first written, column by column of the play table
    (the reference of :func:`score_actions`, which computes the same values from the packed
    action records: the differential tests hold them equal).

    Score each of the ``k`` legal actions ``legal[:k]`` of the seat to move (lower is
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

    ``tmp`` is a scratch state (the size of ``s``), ``work`` a scratch ``int64`` array of at
    least 48.  ``k_step`` is the game's step kernel (used to score choices by the hand they
    leave).
    """
    if score_choices(s, legal, k, tab, opts, pp, k_step, tmp, scores, work, 1):
        return
    n = pp[PP_NP]
    R = pp[PP_R]
    ctrl = pp[PP_CTRLFROM]
    seat = s[CUR]
    ho = HDR + 16 * seat
    h = s[ho:ho + 16]
    hb = work[0:16]
    cb = work[16:32]
    u = work[32:48]
    inf = np.inf
    total, prev, owner, solo = _mover_view(s, pp)
    enemy_min = 99
    partner_min = 99
    for q in range(n):
        if q == seat:
            continue
        hs = _hand_total(s, q)
        if hs == 0:
            continue
        if solo >= 0 and seat != solo and q != solo:
            if hs < partner_min:
                partner_min = hs
        elif hs < enemy_min:
            enemy_min = hs
    can_pass = False
    for j in range(k):
        if pp[PP_KINDS + legal[j]] == K_PASS:
            can_pass = True
    following = prev >= 0 and owner >= 0 and owner != seat and can_pass
    by_partner = following and solo >= 0 and seat != solo and owner != solo
    greedy = ((pp[PP_GREEDY] >> seat) & 1) == 1  # a simple rule bot (PP_GREEDY)
    hand_low = -1  # (a greedy seat's lowest rank)
    if greedy:
        by_partner = False
        hand_low = _lowest_rank(h)
    beater_left = _hand_total(s, owner) if owner >= 0 else 99
    if beater_left == 0:
        beater_left = 99  # the play went out with its owner: no threat from that seat
    plain = pp[PP_WILD] == 0
    m1, m2, m3, m4 = masks_of(h, pp)
    loose = by_partner and pp[PP_LOOSE] == 1 and enemy_min > ALLY_ENEMY_MIN
    cost_now = 0.0
    if not by_partner or loose:  # (over a partner only going out counts)
        for r in range(16):
            cb[r] = h[r]
        if plain:
            cost_now = _cost_from(m1, m2, m3, m4, 0, 0, h, cb, pp, 1)
        else:
            cost_now = hand_cost(h, pp, cb, 1)
    nw = 0
    bomb_out = False
    if not following:
        nw = _unseen(s, h, pp, u)
        bomb_out = _unseen_bomb(u, nw, pp)
    thr = FOLLOW_THR_FAR
    if enemy_min <= 2 or beater_left <= 3:
        thr = FOLLOW_THR_URGENT
    elif enemy_min <= 5:
        thr = FOLLOW_THR_NEAR
    if greedy:
        thr = inf
    bomb_ok = enemy_min <= 3 or beater_left <= 4
    rs0 = PP_KINDS + pp[PP_NA]
    check_dead = pp[PP_NOSINGLE] != 0
    one_play = False  # a lead whose hand is one play: declare first (报牌), then go out
    if not following:
        for j in range(k):
            if pp[PP_KINDS + legal[j]] == K_PLAY and tab.ncards[legal[j]] >= total:
                one_play = True
    feed_partner = 0
    if partner_min <= 2 and enemy_min > 2:
        feed_partner = partner_min  # lead the lowest single (1) or pair (2)
    for j in range(k):
        a = legal[j]
        kd = pp[PP_KINDS + a]
        if kd == K_PASS:
            scores[j] = -1.0 if by_partner and not loose else 10.0
            continue
        if kd != K_PLAY:
            if kd == K_AVOID:
                scores[j] = -2000.0 if one_play else inf
            else:
                scores[j] = 50.0
            continue
        nc = tab.ncards[a]
        if nc >= total:  # goes out (a doubling play first)
            scores[j] = -1000.0 - 10.0 * tab.doubles[a] - 0.01 * nc
            continue
        if by_partner and not loose:  # never over a partner: no need of the cost
            scores[j] = 40.0 + 0.001 * tab.key[a]
            continue
        if plain:
            c_after = cost_after_row(h, total, m1, m2, m3, m4, a, tab, pp, cb, 1)
            if check_dead:
                for r in range(16):
                    hb[r] = h[r] - tab.counts[a, r]
        else:
            hand_after(h, a, tab, pp, hb)
            c_after = hand_cost(hb, pp, cb, 1)
        if check_dead and _dead(hb, pp):
            scores[j] = 900.0  # leaves a hand that can make no play: only if nothing else
            continue
        d = c_after - cost_now
        fam = tab.family[a]
        bomb = tab.power[a] > 0 or fam == ROCKET
        key = tab.key[a]
        rsum = pp[rs0 + a]
        if fam == FOUR_TWO_SINGLES or fam == FOUR_TWO_PAIRS:
            bomb = True  # four of a kind with kickers spends a bomb: played as one
        if by_partner:
            sc = 40.0 + d
            if loose and not bomb and key < ctrl and d <= ALLY_DELTA + 1e-9:
                natural = True  # a loose ally is overtaken with natural cards only
                for r in range(16):
                    cnt = tab.counts[a, r]
                    if cnt > 0 and ((pp[PP_WILD] >> r) & 1 or cnt > h[r]):
                        natural = False
                if natural:
                    sc = d + 0.001 * key + 1e-6 * rsum
            scores[j] = sc
            continue
        if following:
            if bomb:
                if bomb_ok or c_after <= BOMB_FINISH + 1e-9:
                    scores[j] = 5.0 + 0.001 * tab.power[a]
                else:
                    scores[j] = 30.0 + 0.001 * tab.power[a]
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
        low = cttz(tab.lo[a] & 0xFFFF)
        sc = 4.0 * brk + low / R - 0.03 * nc + 0.001 * rsum / R
        if fam == TRIO_PAIR or fam == AIRPLANE_PAIRS:
            sc += 0.05  # single kickers first (the pairs are worth more)
        if control:
            sc += 1.0
        cash = brk < 0.01 and c_after <= CASH_COST + 1e-9
        if bomb:
            sc += 5.0
            if cash and (fam == ROCKET or not bomb_out):
                sc = -19.0  # a sure bomb before the last combination
        elif cash and _sure(a, tab, u, nw, bomb_out, pp):
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
            sc = _bot_lead_score(sc, fam, low, hand_low)
        scores[j] = sc
    return
