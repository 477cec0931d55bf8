"""打娘娘 Da Niangniang: the combination set, the play table and the legal-action kernels.

The play table lists *effective* plays (jokers counted as the rank they stand for);
:func:`legal_wild_rows` finds which of them a hand can make with its wild jokers (with
``joker_wild_scope="bombs_only"``, jokers stand in only inside bombs).  :func:`legal` and
:func:`is_legal` answer for every phase: the 亮3 reveal choice, the exchange's takes and
returns, plays and passes, and the joker follow-up (:func:`_vol_mask`: where one more joker may
voluntarily stand in).
"""

from __future__ import annotations

from numba import njit

from ..core.cards import Deck
from ..core.combos import ComboRules, enumerate_plays
from ..core.kernels import fits, planes
from ..core.state import CUR, LAST_ROW, PHASE, P_PLAY, follows, hand_off, kitty_off, two_choices
from ..core.table import Table, cached
from ..core.wild import gen_legal_wild, wild_rows_at
from .niangniang_layout import (
    A_JMIN, A_PENDING, FAST, HAND, JB, JR, N_OPTS, NNAT, NP, NR, O_BOMBSONLY, O_JALL, O_JOKER0,
    O_PASS, O_RET0, O_REVEAL0, O_T, O_TAKE0, O_WSLOTS, ORDERS, P_JOKER, P_RETURN, P_REVEAL,
    P_TAKE, X_ORIG, X_PJ, X_RET,
)


def combo_rules(rank_order: str = "standard", *, allow_trio_single: bool = False,
                min_pair_chain: int = 2) -> ComboRules:
    """Da Niangniang's combination set (effective plays with two wild jokers)."""
    order = ORDERS[rank_order]
    return ComboRules(
        deck=Deck.standard(order, 1), chain_lo=0, chain_hi=order.index("A"),
        straight=(5, 12), pair_chain=(min_pair_chain, 12), airplane=None,
        airplane_singles=None, airplane_pairs=None, trio_single=allow_trio_single,
        trio_pair=True, four_two_singles=False, four_two_pairs=False,
        bomb_sizes=(4, 5, 6), bomb_order="size_rank", rocket=(("B", 1), ("R", 1)),
        rocket_low=True, wilds=2, joker_singles=False, max_cards=HAND)


@cached
def play_table(rank_order: str = "standard", allow_trio_single: bool = False,
               min_pair_chain: int = 2) -> Table:
    """The (cached) play table of an option set."""
    rules = combo_rules(rank_order, allow_trio_single=allow_trio_single,
                        min_pair_chain=min_pair_chain)
    return Table(rules.deck, enumerate_plays(rules))


# -- what a hand can play ------------------------------------------------------------------------


@njit(**FAST)
def _row_fits(h, t, tab, o):
    """Whether hand ``h`` can make effective row ``t`` with its jokers (scope rules included)."""
    w = h[JB] + h[JR]
    if tab.counts[t, JB] > h[JB] or tab.counts[t, JR] > h[JR]:
        return False
    d = 0
    for r in range(NNAT):
        need = tab.counts[t, r]
        if need > h[r]:
            d += need - h[r]
    jself = tab.counts[t, JB] + tab.counts[t, JR]
    if d + jself > w:
        return False
    if d > 0:
        if tab.ncards[t] - jself - d < 1:
            return False
        if o[O_BOMBSONLY] == 1 and tab.power[t] == 0:
            return False
    return True


@njit(**FAST)
def legal_wild_rows(h, prev, tab, o, out):
    """Legal play rows of hand ``h`` against row ``prev`` (-1 = free lead); returns the count."""
    k = gen_legal_wild(h, prev, tab, wild_rows_at(o, O_JALL, O_WSLOTS, O_T, N_OPTS), out)
    if o[O_BOMBSONLY] == 1:
        lo, hi = planes(h)
        m = 0
        for i in range(k):
            t = out[i]
            if tab.power[t] > 0 or fits(lo, hi, tab.lo[t], tab.hi[t]):
                out[m] = t
                m += 1
        k = m
    return k


@njit(**FAST)
def _vol_mask(s, o, tab):
    """Bit r set when one more joker may voluntarily stand in for a card of rank ``r`` of the
    pending play: a joker left in hand, a natural card of ``r`` in the play to replace, another
    natural card left in the play, ``r`` not below the last voluntary rank, and (bombs_only) a
    bomb.  Computed once per decision: helpers taking the play table cost a reference count
    per table array at every call."""
    t = s[A_PENDING]
    if o[O_BOMBSONLY] == 1 and tab.power[t] == 0:
        return 0
    ho = hand_off(s[CUR])
    used = 0
    for q in range(NNAT):
        used += s[X_PJ + q]
    if used >= s[ho + JB] + s[ho + JR] or tab.ncards[t] - used - 1 < 1:
        return 0
    m = 0
    for r in range(s[A_JMIN], NNAT):
        if tab.counts[t, r] - s[X_PJ + r] >= 1:
            m |= 1 << r
    return m


# -- legal actions ---------------------------------------------------------------------------------


@njit(**FAST)
def legal(s, tab, o, out):
    ph = s[PHASE]
    seat = s[CUR]
    if ph == P_PLAY:
        h = s[hand_off(seat):hand_off(seat) + 16]
        prev = s[LAST_ROW]
        k = legal_wild_rows(h, prev, tab, o, out)
        if prev >= 0:
            out[k] = o[O_PASS]
            k += 1
        return k
    if ph == P_JOKER:
        k = 0
        m = _vol_mask(s, o, tab)
        for r in range(NNAT):
            if (m >> r) & 1:
                out[k] = o[O_JOKER0] + r
                k += 1
        out[k] = o[O_JOKER0] + NNAT
        return k + 1
    if ph == P_TAKE:
        k = 0
        ko = kitty_off(NP)
        for r in range(NR):
            if s[ko + r] > 0:
                out[k] = o[O_TAKE0] + r
                k += 1
        return k
    if ph == P_RETURN:
        k = 0
        for r in range(NNAT):
            if s[X_ORIG + r] - s[X_RET + r] > 0:
                out[k] = o[O_RET0] + r
                k += 1
        return k
    if ph == P_REVEAL:
        return two_choices(out, o[O_REVEAL0])
    return 0


@njit(**FAST)
def is_legal(s, a, tab, o):
    ph = s[PHASE]
    if ph == P_PLAY:
        prev = s[LAST_ROW]
        if a == o[O_PASS]:
            return prev >= 0
        if a < 0 or a >= o[O_PASS]:
            return False
        seat = s[CUR]
        return _row_fits(s[hand_off(seat):hand_off(seat) + 16], a, tab, o) and follows(tab, prev, a)
    if ph == P_JOKER:
        k = a - o[O_JOKER0]
        if k == NNAT:
            return True
        return 0 <= k < NNAT and (_vol_mask(s, o, tab) >> k) & 1 == 1
    if ph == P_TAKE:
        k = a - o[O_TAKE0]
        return 0 <= k < NR and s[kitty_off(NP) + k] > 0
    if ph == P_RETURN:
        k = a - o[O_RET0]
        return 0 <= k < NNAT and s[X_ORIG + k] - s[X_RET + k] > 0
    if ph == P_REVEAL:
        return o[O_REVEAL0] <= a < o[O_REVEAL0] + 2
    return False
