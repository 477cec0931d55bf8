"""打娘娘 Da Niangniang: the state machine's kernels, :func:`reset` and :func:`step`.

The 亮3 draw and the deal, the exchange, plays and passes with the joker follow-up, the
active-player turns, stuck players and places, the end of a hand (scoring with the 活子
penalty, :func:`hand_scores`) and match play.  The rules these kernels follow are in the
docstring of :mod:`cardenvs.games.niangniang`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..core.combos import ROCKET
from ..core.kernels import rng_below, shuffle
from ..core.state import (
    CUR, FIRST, LANDLORD, LAST_ROW, LAST_SEAT, NPASS, NREDEAL, PHASE, PLAYS0, P_DONE, P_PLAY,
    REW0, RNG, WINNER, clear_state_unset, deal_in_order, hand_off, kitty_off, log_action,
    n_active, next_active, no_trick, played_off, put_deal, start_play_phase,
)
from .niangniang_layout import (
    A_HANDNO, A_JMIN, A_NRET, A_NSTUCK, A_NTAKE, A_NTOP, A_PASSED, A_PENDING, FAST, HAND, JB, JR,
    N_EXCH, N_REC, NCARDS, NNAT, NP, NR, O_DEAD, O_FIRSTNN, O_HZSCOPE, O_HZWHEN, O_JOKER0,
    O_MATCH, O_MAXHANDS, O_PASS, O_RET0, O_REVEAL0, O_REWARD, O_SCORING, O_TAKE0, O_TARGET,
    O_THREE, P_JOKER, P_RETURN, P_REVEAL, P_TAKE, X_LAST, X_LJ, X_LPLACE, X_NREC, X_OFFER,
    X_ORIG, X_PJ, X_PLACE, X_REC, X_RET, X_SCORE, X_STOOD, X_TAKEN, X_THREES, X_TOTAL, X_TRUNC,
)
from .niangniang_moves import _vol_mask


# -- seats and the record of recent moves ------------------------------------------------------


@njit(**FAST)
def _active(s, q):
    return s[X_PLACE + q] == 0


@njit(cache=True)
def _record(s, seat, row, j1, j2):
    i = s[X_NREC] % N_REC
    b = X_REC + 4 * i
    s[b] = seat
    s[b + 1] = row
    s[b + 2] = j1
    s[b + 3] = j2
    s[X_NREC] += 1


# -- dealing and the hand's set-up ----------------------------------------------------------------


@njit(cache=True)
def _deck_ranks():
    """The 54 cards as rank indices (13 x 4 naturals, B, R)."""
    d = np.empty(NCARDS, np.int64)
    for r in range(NNAT):
        for k in range(4):
            d[4 * r + k] = r
    d[52] = JB
    d[53] = JR
    return d


@njit(cache=True)
def _clear_hand(s):
    """Zero every per-hand part of the state (hands, bottom, played, per-hand header and region)."""
    for i in range(hand_off(0), kitty_off(NP) + 16 + 16 * NP):
        s[i] = 0
    for i in range(X_PLACE, X_TOTAL):
        s[i] = 0
    for i in range(X_REC, X_LAST):
        s[i] = -1
    s[X_NREC] = 0
    s[X_TRUNC] = 0
    for i in range(8):
        s[PLAYS0 + i] = 0
    s[A_NTAKE] = 0
    s[A_NRET] = 0
    s[A_PASSED] = 0
    s[A_NTOP] = 0
    s[A_NSTUCK] = 0
    s[A_PENDING] = -1
    s[A_JMIN] = 0
    no_trick(s)
    s[NPASS] = 0
    s[WINNER] = -1


@njit(cache=True)
def _start_exchange(s, nn):
    """The 娘娘 ``nn`` sees the bottom and starts taking; his dealt cards are remembered."""
    s[LANDLORD] = nn
    ho = hand_off(nn)
    for r in range(16):
        s[X_ORIG + r] = s[ho + r]
    s[PHASE] = P_TAKE
    s[CUR] = nn


@njit(cache=True)
def _deal_hand(s, nn):
    """Shuffle and deal a hand (10 each, 14 to the bottom) with ``nn`` as 娘娘."""
    _clear_hand(s)
    cards = _deck_ranks()
    shuffle(cards, NCARDS, s, RNG)
    deal_in_order(s, NP, cards, HAND, NCARDS)
    _start_exchange(s, nn)


@njit(cache=True)
def _draw(s, o):
    """The 亮3 draw: a shuffle dealt from a random seat; store the receivers of the four 3s."""
    cards = _deck_ranks()
    shuffle(cards, NCARDS, s, RNG)
    start = rng_below(s, RNG, NP)
    k = 0
    for p in range(NCARDS):
        if cards[p] == o[O_THREE]:
            s[X_THREES + k] = (start + p) % NP
            k += 1
    s[X_OFFER] = 0


@njit(cache=True)
def _clear(s, seed):
    clear_state_unset(s, seed, (LAST_ROW, LAST_SEAT, FIRST, LANDLORD, A_PENDING))
    for i in range(X_REC, X_LAST):
        s[i] = -1


@njit(cache=True)
def reset(s, seed, tab, o):
    """A new episode from ``seed``: choose the first 娘娘, deal, start the exchange."""
    _clear(s, seed)
    mode = o[O_FIRSTNN]
    if mode == 2:
        _deal_hand(s, rng_below(s, RNG, NP))
        return
    _draw(s, o)
    if mode == 0:
        _deal_hand(s, s[X_THREES])
        return
    s[PHASE] = P_REVEAL
    s[CUR] = s[X_THREES]


@njit(cache=True)
def reset_custom(s, seed, tab, o, cards, nn, returned):
    """Start from a given deal: ``cards[i]`` seat i's hand, ``cards[4]`` the bottom.

    ``returned[0] < 0``: the exchange is still to be played.  Otherwise the hands and bottom are
    after the exchange and ``returned`` (4 cards, inside the bottom) are the cards the 娘娘
    returned; the play starts at once.
    """
    _clear(s, seed)
    _clear_hand(s)
    put_deal(s, NP, cards)
    _start_exchange(s, nn)
    if returned[0] >= 0:
        for r in range(16):
            s[X_RET + r] = returned[r]
            s[X_ORIG + r] = 0  # the dealt hand is unknown: only what was returned is given
        s[A_NTAKE] = N_EXCH
        s[A_NRET] = N_EXCH
        _start_play(s, nn)


@njit(cache=True)
def _start_play(s, nn):
    lead = (nn + 1) % NP
    s[FIRST] = lead
    start_play_phase(s, lead)


# -- the end of a hand, scoring, the match -----------------------------------------------------------


@njit(cache=True)
def huozi(s, o):
    """活子 counted for the penalty: non-死子 among the returned cards or the whole bottom."""
    base = X_RET if o[O_HZSCOPE] == 0 else kitty_off(NP)
    n = 0
    for r in range(NNAT):
        if not (o[O_DEAD] >> r) & 1:
            n += s[base + r]
    return n


@njit(cache=True)
def hand_scores(s, o, out):
    """Each seat's score of the finished hand (places in X_PLACE), penalty included."""
    nn = s[LANDLORD]
    p = s[X_PLACE + nn]
    nn_ladder = np.array([6, 3, -3, -6], np.int64)
    cat_ladder = np.array([2, 1, -1, -2], np.int64)
    v = nn_ladder[p - 1]
    mode = o[O_SCORING]
    for q in range(NP):
        if q == nn:
            continue
        pq = s[X_PLACE + q]
        if mode == 2:
            out[q] = -v // 3
        elif mode == 0 and p == 1:
            out[q] = 3 - pq  # places 2, 3, 4 -> +1, 0, -1
        else:
            out[q] = cat_ladder[pq - 1]
    pen = 0
    w = o[O_HZWHEN]
    if w == 0 or (w == 1 and p == 4):
        pen = huozi(s, o)
    out[nn] = v - pen


@njit(cache=True)
def _sign(x):
    return 1 if x > 0 else (-1 if x < 0 else 0)


@njit(cache=True)
def _end_hand(s, o):
    """Score the hand; pay it; end the episode or deal the match's next hand."""
    # the last active player (if any) takes the best place still open
    for q in range(NP):
        if s[X_PLACE + q] == 0:
            s[A_NTOP] += 1
            s[X_PLACE + q] = s[A_NTOP]
    sc = np.zeros(NP, np.int64)
    hand_scores(s, o, sc)
    ko = kitty_off(NP)
    for r in range(16):  # public from now on, also while a match deals its next hand
        s[X_LAST + r] = s[X_TAKEN + r]
        s[X_LAST + 16 + r] = s[X_RET + r]
        s[X_LAST + 32 + r] = s[ko + r]
    for q in range(NP):
        s[X_SCORE + q] = sc[q]
        s[X_LPLACE + q] = s[X_PLACE + q]
        if s[X_PLACE + q] == 1:
            s[WINNER] = q
    s[A_HANDNO] += 1
    win_loss = o[O_REWARD] == 1
    if o[O_MATCH] == 0:
        for q in range(NP):
            s[REW0 + q] = _sign(sc[q]) if win_loss else sc[q]
        s[PHASE] = P_DONE
        return
    best = -(1 << 60)
    for q in range(NP):
        s[X_TOTAL + q] += sc[q]
        s[REW0 + q] = _sign(sc[q]) if win_loss else sc[q]
        if s[X_TOTAL + q] > best:
            best = s[X_TOTAL + q]
    n_best = 0
    top = -1
    for q in range(NP):
        if s[X_TOTAL + q] == best:
            n_best += 1
            top = q
    over = best >= o[O_TARGET] and n_best == 1
    if not over and s[A_HANDNO] >= o[O_MAXHANDS]:
        over = True
        s[X_TRUNC] = 1
    if over:
        s[WINNER] = top if n_best == 1 else -1
        s[PHASE] = P_DONE
        return
    # next 娘娘: the lowest score of this hand, ties to the worse (higher) place
    nn = 0
    for q in range(1, NP):
        if sc[q] < sc[nn] or (sc[q] == sc[nn] and s[X_PLACE + q] > s[X_PLACE + nn]):
            nn = q
    _deal_hand(s, nn)


@njit(cache=True)
def _finalize(s, o, tab, seat, t):
    """Play row ``t`` for ``seat`` with the joker stand-ins in X_PJ; places, turn, hand end."""
    ho = hand_off(seat)
    po = played_off(NP, seat)
    nj = 0
    j1 = -1
    j2 = -1
    for r in range(NR):
        jr = s[X_PJ + r] if r < NNAT else 0
        phys = tab.counts[t, r] - jr
        s[ho + r] -= phys
        s[po + r] += phys
        s[X_LJ + r] = jr
        s[X_STOOD + 16 * seat + r] += jr
        for _ in range(jr):
            if j1 < 0:
                j1 = r
            else:
                j2 = r
        nj += jr
    for _ in range(nj):  # B stands in first (the jokers are interchangeable)
        j = JB if s[ho + JB] > 0 else JR
        s[ho + j] -= 1
        s[po + j] += 1
    for r in range(16):
        s[X_PJ + r] = 0
    s[A_PENDING] = -1
    s[A_JMIN] = 0
    s[PHASE] = P_PLAY
    s[LAST_ROW] = t
    s[LAST_SEAT] = seat
    s[NPASS] = 0
    s[A_PASSED] = 0
    s[PLAYS0 + seat] += 1
    _record(s, seat, t, j1, j2)
    left = 0
    for r in range(NR):
        left += s[ho + r]
    if left == 0:
        s[A_NTOP] += 1
        s[X_PLACE + seat] = s[A_NTOP]
    elif left == 1 and s[ho + JB] + s[ho + JR] == 1:
        s[X_PLACE + seat] = NP - s[A_NSTUCK]  # stuck: from the bottom, earlier = lower
        s[A_NSTUCK] += 1
    if n_active(s, X_PLACE, NP) <= 1:
        _end_hand(s, o)
        return
    s[CUR] = next_active(s, X_PLACE, seat, NP)


@njit(cache=True)
def _pass(s, seat):
    s[NPASS] += 1
    s[A_PASSED] |= 1 << seat
    _record(s, seat, -1, -1, -1)
    last = s[LAST_SEAT]
    waiting = 0
    for q in range(NP):
        if q != last and s[X_PLACE + q] == 0 and not (s[A_PASSED] >> q) & 1:
            waiting += 1
    if waiting == 0:  # the trick is over
        s[LAST_ROW] = -1
        s[NPASS] = 0
        s[A_PASSED] = 0
        for r in range(16):
            s[X_LJ + r] = 0
        s[CUR] = last if _active(s, last) else next_active(s, X_PLACE, last, NP)
    else:
        s[CUR] = next_active(s, X_PLACE, seat, NP)


@njit(cache=True)
def step(s, a, tab, o):
    """Apply legal action ``a`` for the seat to move."""
    seat = s[CUR]
    for q in range(NP):
        s[REW0 + q] = 0
    log_action(s, NP, seat, a)
    ph = s[PHASE]
    if ph == P_PLAY:
        if a == o[O_PASS]:
            _pass(s, seat)
            return
        ho = hand_off(seat)
        for r in range(16):
            s[X_PJ + r] = 0
        if tab.family[a] != ROCKET:
            for r in range(NNAT):
                need = tab.counts[a, r] - s[ho + r]
                if need > 0:
                    s[X_PJ + r] = need
        s[A_PENDING] = a
        s[A_JMIN] = 0
        if _vol_mask(s, o, tab) != 0:
            s[PHASE] = P_JOKER
            return
        _finalize(s, o, tab, seat, a)
        return
    if ph == P_JOKER:
        k = a - o[O_JOKER0]
        t = s[A_PENDING]
        if k < NNAT:
            s[X_PJ + k] += 1
            s[A_JMIN] = k
            if _vol_mask(s, o, tab) != 0:
                return
        _finalize(s, o, tab, seat, t)
        return
    if ph == P_TAKE:
        r = a - o[O_TAKE0]
        s[kitty_off(NP) + r] -= 1
        s[hand_off(seat) + r] += 1
        s[X_TAKEN + r] += 1
        s[A_NTAKE] += 1
        if s[A_NTAKE] >= N_EXCH:
            s[PHASE] = P_RETURN
        return
    if ph == P_RETURN:
        r = a - o[O_RET0]
        s[hand_off(seat) + r] -= 1
        s[kitty_off(NP) + r] += 1
        s[X_RET + r] += 1
        s[A_NRET] += 1
        if s[A_NRET] >= N_EXCH:
            _start_play(s, seat)
        return
    if ph == P_REVEAL:
        if a == o[O_REVEAL0]:  # reveal
            # in the 4th draw (the 3rd redeal) the first receiver of a 3 is 娘娘 whatever
            # anyone chooses: a reveal only ends the choices
            _deal_hand(s, s[X_THREES] if s[NREDEAL] >= 3 else seat)
            return
        s[X_OFFER] += 1
        if s[X_OFFER] < 4:
            s[CUR] = s[X_THREES + s[X_OFFER]]
            return
        if s[NREDEAL] < 3:
            s[NREDEAL] += 1
            _draw(s, o)
            s[CUR] = s[X_THREES]
            return
        _deal_hand(s, s[X_THREES])
