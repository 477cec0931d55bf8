"""Lanxi Wulong's play-phase kernels: the legal actions, and the state machine that applies one
(plays and their joker picks, passes and trick ends, 报牌 declarations, going out and failing
with only 3s, the end of the hand and its scoring).

The rules and the engine's decisions are in :mod:`cardenvs.games.wulong`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..core.state import (
    CUR, LAST_ROW, LAST_SEAT, P_DONE, P_PLAY, PHASE, PLAYS0, REW0, WINNER, follows, hand_off,
    log_action, n_active, next_active, played_off,
)
from ..core.wild import wild_rows_at
from .wulong_layout import (
    A_LOSER, A_NFAIL, A_NOUT, A_NREC, A_PASSED, A_PEND, EV, JB, JR, K_REC, MAX_DECLARE, N_OPTS,
    NAT, NP, NPICK, O_COMPLETE, O_DECL, O_DONE, O_JALL, O_PASS, O_PICKB, O_PICKR, O_REWARD, O_T,
    O_WB, O_WR, O_WSLOTS, P_WILD, ST_ACTIVE, ST_FAILED, ST_OUT, X_DECL, X_FAILPOS, X_LB, X_LR,
    X_OUTPOS, X_PB, X_PLEN, X_PR, X_PSEQ, X_REC, X_STATUS,
)
from .wulong_moves import gen_rows, row_fits
from .wulong_wilds import declared_row_ok, scan_realisations, top_card


# -- legal actions --------------------------------------------------------------------------------


@njit(cache=True)
def _can_declare(s, seat):
    if s[PHASE] != P_PLAY or s[X_DECL + seat] == 1 or s[WINNER] >= 0:
        return False
    ho = hand_off(seat)
    n = 0
    for r in range(16):
        n += s[ho + r]
    return n <= MAX_DECLARE


@njit(cache=True)
def _pick_options(s, tab, o, mark, best):
    seat = s[CUR]
    return scan_realisations(s, seat, s[A_PEND], tab, o, s[X_PLEN], s[X_PSEQ:X_PSEQ + 4],
                             mark, best)


@njit(cache=True)
def _pick_id(o, i):
    """Action id of pick option ``i`` (``r``: B[r], ``13 + r``: R[r], 26: done); -1 if none."""
    if i == 2 * NAT:
        return o[O_DONE]
    if i < NAT:
        return o[O_PICKB] + i if o[O_PICKB] >= 0 else -1
    return o[O_PICKR] + i - NAT if o[O_PICKR] >= 0 else -1


@njit(cache=True)
def _pick_index(o, a):
    """Inverse of :func:`_pick_id`; -1 when ``a`` is no pick action."""
    if o[O_DONE] >= 0 and a == o[O_DONE]:
        return 2 * NAT
    if o[O_PICKB] >= 0 and o[O_PICKB] <= a < o[O_PICKB] + NAT:
        return a - o[O_PICKB]
    if o[O_PICKR] >= 0 and o[O_PICKR] <= a < o[O_PICKR] + NAT:
        return NAT + a - o[O_PICKR]
    return -1


@njit(cache=True)
def legal(s, tab, o, out):
    """Legal actions of the seat to move: picks in the wilds phase; otherwise the rows the hand
    can make (a declarer's filtered by his top card), pass when following, declare."""
    ph = s[PHASE]
    if ph == P_WILD:
        mark = np.zeros(NPICK, np.int64)
        best = np.zeros(NAT + 1, np.int64)
        _pick_options(s, tab, o, mark, best)
        n = 0
        for i in range(NPICK):
            if mark[i] == 1:
                out[n] = _pick_id(o, i)
                n += 1
        return n
    if ph != P_PLAY:
        return 0
    seat = s[CUR]
    ho = hand_off(seat)
    prev = s[LAST_ROW]
    n = gen_rows(s[ho:ho + 16], prev, tab, o, out)
    if s[X_DECL + seat] == 1:
        top, m = top_card(s, seat, o)
        k = 0
        for i in range(n):
            if declared_row_ok(s, seat, out[i], tab, o, top, m):
                out[k] = out[i]
                k += 1
        n = k
    if prev >= 0:
        out[n] = o[O_PASS]
        n += 1
    if _can_declare(s, seat):
        out[n] = o[O_DECL]
        n += 1
    return n


@njit(cache=True)
def is_legal(s, a, tab, o):
    ph = s[PHASE]
    if ph == P_WILD:
        i = _pick_index(o, a)
        if i < 0:
            return False
        mark = np.zeros(NPICK, np.int64)
        best = np.zeros(NAT + 1, np.int64)
        _pick_options(s, tab, o, mark, best)
        return mark[i] == 1
    if ph != P_PLAY:
        return False
    seat = s[CUR]
    prev = s[LAST_ROW]
    if a == o[O_PASS]:
        return prev >= 0
    if a == o[O_DECL]:
        return _can_declare(s, seat)
    if a < 0 or a >= o[O_PASS]:
        return False
    if not follows(tab, prev, a):
        return False
    if not row_fits(s, seat, a, tab, wild_rows_at(o, O_JALL, O_WSLOTS, O_T, N_OPTS)):
        return False
    if s[X_DECL + seat] == 1:
        top, m = top_card(s, seat, o)
        return declared_row_ok(s, seat, a, tab, o, top, m)
    return True


# -- applying an action: plays and joker picks, passes, the end of the hand and its scoring -------


@njit(cache=True)
def _record(s, seat, row, kb, kr):
    """Remember a play-phase event (a play with its jokers, or a pass: ``row`` -1)."""
    e = X_REC + (s[A_NREC] % K_REC) * EV
    s[e] = seat
    s[e + 1] = row
    for r in range(NAT):
        s[e + 2 + r] = kb[r] if row >= 0 else 0
        s[e + 2 + NAT + r] = kr[r] if row >= 0 else 0
    s[A_NREC] += 1


@njit(cache=True)
def _settle(s, o):
    """End of the hand: rewards from the 头家, the declarers and the 末家."""
    s[PHASE] = P_DONE
    s[A_PEND] = -1
    for i in range(NP):
        s[REW0 + i] = 0
    w = s[WINNER]
    if w < 0:
        return  # every player failed: void deal
    if s[A_LOSER] < 0:
        for q in range(NP):
            if q != w and s[X_STATUS + q] == ST_ACTIVE:
                s[A_LOSER] = q  # the last active player
    paid = 0
    for q in range(NP):
        if q != w and s[X_DECL + q] == 1:
            s[REW0 + q] = -2
            paid += 2
    if paid == 0:
        loser = s[A_LOSER]
        if loser < 0:
            return  # no payer (only in hand-made positions)
        unit = 2 if s[X_DECL + w] == 1 else 1
        s[REW0 + loser] = -unit
        paid = unit
    s[REW0 + w] = paid
    if o[O_REWARD] == 1:
        for q in range(NP):
            v = s[REW0 + q]
            s[REW0 + q] = 1 if v > 0 else (-1 if v < 0 else 0)


@njit(cache=True)
def _hand_over(s, o):
    """Whether the hand ends now (README: as soon as the 头家 is known and the payer fixed)."""
    n_act = n_active(s, X_STATUS, NP)
    w = s[WINNER]
    if w < 0:
        return n_act == 0  # everyone failed before anyone went out: void
    if n_act <= 1:
        return True
    if o[O_COMPLETE] == 1:
        return False
    for q in range(NP):
        if q != w and s[X_DECL + q] == 1:
            return True  # the failed declarers pay
    return s[A_LOSER] >= 0  # a player failed with only 3s: the 末家


@njit(cache=True)
def _apply(s, o, tab, row):
    """Play ``row`` for the seat to move with the jokers in ``X_PB`` / ``X_PR`` (small / big
    jokers standing for each natural rank)."""
    seat = s[CUR]
    kb = s[X_PB:X_PB + NAT]
    kr = s[X_PR:X_PR + NAT]
    ho = hand_off(seat)
    po = played_off(NP, seat)
    c = tab.counts[row]
    nb = c[JB]
    nr = c[JR]
    for r in range(NAT):
        nat = c[r] - kb[r] - kr[r]
        s[ho + r] -= nat
        s[po + r] += nat
        nb += kb[r]
        nr += kr[r]
        s[X_LB + r] = kb[r]
        s[X_LR + r] = kr[r]
    s[ho + JB] -= nb
    s[po + JB] += nb
    s[ho + JR] -= nr
    s[po + JR] += nr
    s[LAST_ROW] = row
    s[LAST_SEAT] = seat
    s[A_PASSED] = 0
    s[PLAYS0 + seat] += 1
    s[A_PEND] = -1
    s[X_PLEN] = 0
    s[PHASE] = P_PLAY
    _record(s, seat, row, kb, kr)
    # out, failed?
    left = 0
    non3 = 0
    for r in range(16):
        left += s[ho + r]
        if r > 0:
            non3 += s[ho + r]
    if left == 0:
        s[X_STATUS + seat] = ST_OUT
        s[A_NOUT] += 1
        s[X_OUTPOS + seat] = s[A_NOUT]
        if s[WINNER] < 0:
            s[WINNER] = seat
    elif non3 == 0:
        s[X_STATUS + seat] = ST_FAILED
        s[A_NFAIL] += 1
        s[X_FAILPOS + seat] = s[A_NFAIL]
        if s[A_LOSER] < 0:
            s[A_LOSER] = seat
    if _hand_over(s, o):
        _settle(s, o)
        return
    nxt = next_active(s, X_STATUS, seat, NP)
    if nxt < 0:  # alone among the active players: the trick is his, he leads again
        s[LAST_ROW] = -1
        s[A_PASSED] = 0
        s[CUR] = seat
    else:
        s[CUR] = nxt


@njit(cache=True)
def _labels(s, best):
    """Canonical joker labels of a realisation ``(k, b)`` into the pick slots ``X_PB`` /
    ``X_PR``: the first ``b`` stood-for cells in rank order are small jokers, the rest big."""
    b = best[NAT]
    for r in range(NAT):
        s[X_PB + r] = 0
        s[X_PR + r] = 0
        for _ in range(best[r]):
            if b > 0:
                s[X_PB + r] += 1
                b -= 1
            else:
                s[X_PR + r] += 1


@njit(cache=True)
def _apply_best(s, o, tab, row, best):
    _labels(s, best)
    _apply(s, o, tab, row)


@njit(cache=True)
def _add_pick(s, i):
    p = s[X_PLEN]
    if i < NAT:
        s[X_PSEQ + p] = i
        s[X_PB + i] += 1
    else:
        s[X_PSEQ + p] = 16 + i - NAT
        s[X_PR + i - NAT] += 1
    s[X_PLEN] = p + 1


@njit(cache=True)
def _resolve(s, tab, o):
    """Apply forced picks: while exactly one option is left, take it without a decision."""
    buf = np.zeros(NPICK + NAT + 1, np.int64)
    mark = buf[:NPICK]
    best = buf[NPICK:]
    while True:
        mark[:] = 0
        n = _pick_options(s, tab, o, mark, best)
        if n == 1:  # one realisation left: every remaining step is forced
            _apply_best(s, o, tab, s[A_PEND], best)
            return
        n_opt = 0
        opt = -1
        for i in range(NPICK):
            if mark[i] == 1:
                n_opt += 1
                opt = i
        if n_opt != 1 or opt == 2 * NAT:
            return  # a real choice (a lone "done" means n == 1, handled above)
        _add_pick(s, opt)


@njit(cache=True)
def _pass(s):
    seat = s[CUR]
    s[A_PASSED] |= np.int64(1) << seat
    last = s[LAST_SEAT]
    _record(s, seat, -1, s[X_LB:X_LB + NAT], s[X_LR:X_LR + NAT])
    for q in range(NP):
        if q != last and s[X_STATUS + q] == ST_ACTIVE and ((s[A_PASSED] >> q) & 1) == 0:
            s[CUR] = next_active(s, X_STATUS, seat, NP)
            return
    # every other active player passed: the trick ends
    s[LAST_ROW] = -1
    s[A_PASSED] = 0
    for r in range(NAT):
        s[X_LB + r] = 0
        s[X_LR + r] = 0
    s[CUR] = last if s[X_STATUS + last] == ST_ACTIVE else next_active(s, X_STATUS, last, NP)


@njit(cache=True)
def step(s, a, tab, o):
    """Apply legal action ``a`` for the seat to move."""
    seat = s[CUR]
    log_action(s, NP, seat, a)
    if s[PHASE] == P_WILD:
        i = _pick_index(o, a)
        if i == 2 * NAT:
            _apply(s, o, tab, s[A_PEND])
        else:
            _add_pick(s, i)
            _resolve(s, tab, o)
        return
    if a == o[O_DECL]:
        s[X_DECL + seat] = 1
        return
    if a == o[O_PASS]:
        _pass(s)
        return
    for r in range(NAT):
        s[X_PB + r] = 0
        s[X_PR + r] = 0
    ho = hand_off(seat)
    spare = 0  # wild jokers not used as themselves by the row
    if o[O_WB] == 1:
        spare += s[ho + JB] - tab.counts[a, JB]
    if o[O_WR] == 1:
        spare += s[ho + JR] - tab.counts[a, JR]
    if spare == 0:  # all natural (the row is legal): one realisation
        _apply(s, o, tab, a)
        return
    buf = np.zeros(NPICK + NAT + 1, np.int64)
    n = scan_realisations(s, seat, a, tab, o, 0, s[X_PSEQ:X_PSEQ + 4], buf[:NPICK],
                          buf[NPICK:])
    if n == 1:
        _apply_best(s, o, tab, a, buf[NPICK:])
        return
    s[A_PEND] = a
    s[X_PLEN] = 0
    s[PHASE] = P_WILD
    _resolve(s, tab, o)
