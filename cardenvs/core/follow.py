"""Play-phase rules beyond "beat it or pass": constraints on which plays and passes are legal,
and payments made while a deal is on.  Shared machinery for any climbing game that has them
(Pao De Kuai has all of them); every function is a numba kernel of the flat state
(:mod:`cardenvs.core.state`) and the play table (:mod:`cardenvs.core.table`).

Constraints (each off when its argument says so):

* **whole-hand rows** (:func:`is_short`): a row of a kicker family holding fewer cards than
  ``full[family] * length`` (a trio with fewer than its kickers, Pao De Kuai's last-play
  relaxation) is legal only when it is the mover's whole hand.  ``full`` is a per-family
  vector of cards per chain unit (0: the family has no short rows), kept in the game's
  options vector at ``o[full_off:full_off + N_FAMILIES]``.
* **a card the play must hold** (``need``): a rank index the play must contain (the first
  play of a deal holds the lead card), or -1.
* **the highest single** (``top``): a single must be of this rank (报单顶大: the next seat
  holds one card), or -1; other families are free.
* **must beat** (有大必压): a follower may pass only when none of his plays (bombs included)
  beats the play to beat and passes the constraints above.

:func:`legal_rows` and :func:`is_legal_row` are the legal actions and the legality test of
the play phase under these constraints (``legal_play_rows`` / ``is_legal_play`` of
:mod:`cardenvs.core.state` with the filters), :func:`any_beat` the early-exit existence test.
Their slow, obviously correct twins are in :mod:`cardenvs.core.reference`.

Payments: :func:`pay_from_each` (every other seat pays one seat, recorded in per-seat running
totals in the state and, unless withheld for ``win_loss``, in the rewards of the step), and
:func:`settle_cards_left` (each loser pays the winner per card left in hand, doubled for a
seat that never played, free for a one-card hand when asked).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .combos import SINGLE
from .kernels import HOT_INLINE, fits, gen_rows_whole, planes
from .state import CUR, LAST_ROW, PLAYS0, REW0, hand_off, hand_size


@njit(**HOT_INLINE)
def is_short(tab, row, o, full_off):
    """Whether ``row`` holds fewer cards than its family's full size (a whole-hand-only row)."""
    return tab.ncards[row] < o[full_off + tab.family[row]] * tab.length[row]


@njit(**HOT_INLINE)
def row_allowed(tab, row, hand_n, need, top, o, full_off):
    """Whether a row the hand can make passes the constraints (see the module docstring)."""
    if tab.ncards[row] != hand_n and is_short(tab, row, o, full_off):
        return False
    if need >= 0 and (tab.lo[row] >> need) & 1 == 0:  # plane 1: the ranks the row holds
        return False
    if top >= 0 and tab.family[row] == SINGLE and tab.key[row] != top:
        return False
    return True


@njit(**HOT_INLINE)
def top_rank(s, seat):
    """The highest rank index the seat holds (-1 for an empty hand)."""
    o = hand_off(seat)
    for r in range(15, -1, -1):
        if s[o + r] > 0:
            return r
    return -1


@njit(**HOT_INLINE)
def gen_allowed(counts, prev, tab, out, need, top, o, full_off):
    """The rows a hand (``counts``) can play against row ``prev`` (-1: a free lead) that pass
    the constraints, written to ``out``; returns their count.  The scan applies the whole-hand
    rule and ``need`` itself (:func:`cardenvs.core.kernels.gen_rows_whole`); :func:`row_allowed`
    filters its rows only when ``top`` is set."""
    lo, hi = planes(counts)
    hand_n = 0
    for r in range(16):
        hand_n += counts[r]
    req = np.int64(1) << np.int64(need) if need >= 0 else np.int64(0)  # plane 1: rank need
    n = gen_rows_whole(lo, hi, prev, tab, out, 0, o, full_off, hand_n, req)
    if top < 0:  # the scan applied the whole-hand rule and the needed rank
        return n
    k = 0
    for i in range(n):
        row = out[i]
        out[k] = row  # kept only when allowed (no branch)
        k += row_allowed(tab, row, hand_n, need, top, o, full_off)
    return k


@njit(**HOT_INLINE)
def legal_rows(s, tab, out, pass_id, must_beat, need, top, o, full_off):
    """Legal actions of the seat to move in the play phase under the constraints: its plays
    (rows), then pass when following (with ``must_beat``: only when no play is legal)."""
    ho = hand_off(s[CUR])
    prev = s[LAST_ROW]
    k = gen_allowed(s[ho:ho + 16], prev, tab, out, need, top, o, full_off)
    if prev >= 0 and (k == 0 or not must_beat):
        out[k] = pass_id
        k += 1
    return k


@njit(**HOT_INLINE)
def _any_in(lo, hi, tab, g0, g1, hand_n, need, top, o, full_off):
    for g in range(g0, g1):
        if not fits(lo, hi, tab.g_lo[g], tab.g_hi[g]):
            continue
        for t in range(tab.g_start[g], tab.g_end[g]):
            if fits(lo, hi, tab.lo[t], tab.hi[t]) and row_allowed(tab, t, hand_n, need, top,
                                                                   o, full_off):
                return True
    return False


@njit(**HOT_INLINE)
def any_beat(s, tab, need, top, o, full_off):
    """Whether the seat to move holds an allowed play that beats the play to beat."""
    seat = s[CUR]
    prev = s[LAST_ROW]
    ho = hand_off(seat)
    lo, hi = planes(s[ho:ho + 16])
    hand_n = hand_size(s, seat)
    return (_any_in(lo, hi, tab, tab.fnext[prev], tab.fend[prev], hand_n, need, top, o, full_off)
            or _any_in(lo, hi, tab, tab.bnext[prev], tab.g_bomb_end[0], hand_n, need, top, o,
                       full_off))


@njit(**HOT_INLINE)
def is_legal_row(s, tab, a, pass_id, must_beat, need, top, o, full_off):
    """Whether action ``a`` is legal in the play phase under the constraints."""
    prev = s[LAST_ROW]
    if a == pass_id:
        return prev >= 0 and not (must_beat and any_beat(s, tab, need, top, o, full_off))
    if a < 0 or a >= pass_id:
        return False
    seat = s[CUR]
    ho = hand_off(seat)
    lo, hi = planes(s[ho:ho + 16])
    if not fits(lo, hi, tab.lo[a], tab.hi[a]):
        return False
    if prev >= 0:
        g = tab.group[a]
        if not (tab.fnext[prev] <= g < tab.fend[prev] or tab.bnext[prev] <= g < tab.g_bomb_end[0]):
            return False
    return row_allowed(tab, a, hand_size(s, seat), need, top, o, full_off)


# -- payments --------------------------------------------------------------------------------------


@njit(**HOT_INLINE)
def pay_from_each(s, n, seat, amount, total_off, now):
    """Every other seat pays ``amount`` to ``seat``: added to the running totals
    ``s[total_off + i]`` and, when ``now``, to this step's rewards (``REW0``)."""
    for i in range(n):
        d = amount * (n - 1) if i == seat else -amount
        s[total_off + i] += d
        if now:
            s[REW0 + i] += d


@njit(**HOT_INLINE)
def settle_cards_left(s, n, winner, unit, no_play_factor, free_one, total_off, win_loss):
    """Each loser pays ``winner`` ``unit`` per card left in hand (times ``no_play_factor`` when
    he never played, nothing for one card when ``free_one``), into the running totals; the
    rewards of the step get the payments (``win_loss``: every seat's sign of its total)."""
    for i in range(n):
        if i == winner:
            continue
        c = hand_size(s, i)
        if free_one and c == 1:
            continue
        p = unit * c * (no_play_factor if s[PLAYS0 + i] == 0 else 1)
        s[total_off + i] -= p
        s[total_off + winner] += p
        if not win_loss:
            s[REW0 + i] -= p
            s[REW0 + winner] += p
    if win_loss:
        for i in range(n):
            t = s[total_off + i]
            s[REW0 + i] = 1 if t > 0 else (-1 if t < 0 else 0)
