"""打娘娘 Da Niangniang: 4 players, 54 cards, one 娘娘 (defender) against three catchers.

Rules page: ``docs/rules/niangniang.md``.  The combination set is the shared engine's
(:class:`cardenvs.core.combos.ComboRules`) with wild jokers (:mod:`cardenvs.core.wild`): the play
table lists *effective* plays (``5B`` is the pair ``55``, ``333B`` the bomb ``3333``, ``55BR`` the
bomb ``5555``), and :func:`cardenvs.core.wild.gen_legal_wild` finds which of them a hand can make
with its jokers.  This module adds what the game needs beyond that: choosing the 娘娘 (the 亮3
draw), the deal and the 14-card bottom, the exchange (赏赐), the joker realisation of a play,
stuck players and the active-player turn rules, places, scoring with the 活子 penalty, and
match play.

Rules-variant statement (defaults first; where the rules page is silent the choice is ours):

* ``rank_order="standard"``: 3 < 4 < ... < A < 2 (rank index 0 = ``3``, 12 = ``2``, 13 = ``B``,
  14 = ``R``); chains within 3..A.  ``"three_high"``: 4 < ... < A < 2 < 3 (index 0 = ``4``,
  11 = ``2``, 12 = ``3``), chains within 4..A.  死子 are always the cards 3, 2 and the jokers.
* combinations: single (a natural card), pair, trio, trio + pair (a pair of another rank),
  straight (5..10 ranks within the chain bounds), pair chain (``min_pair_chain=2`` .. 5 pairs),
  bombs of 4, 5 and 6 cards of one rank (jokers standing in; by size, then rank), the joker bomb
  ``BR`` below every bomb.  No airplanes, no four + two; ``allow_trio_single=False``.  A joker
  is never played alone and never makes a pair or trio with the other joker only: a play with
  a joker standing in holds at least one natural card.  ``joker_wild_scope="any_combo"``;
  ``"bombs_only"``: jokers stand in only inside bombs (``BR`` stays a bomb).
* choosing the first 娘娘 (``first_niangniang``): the draw is one seeded shuffle of the 54 cards
  dealt one at a time in turn order from a seeded random seat, through the whole deck (so all
  four 3s are dealt).  ``"first_three"``: the receiver of the first 3 is 娘娘.
  ``"reveal_choice"``: each receiver of a 3, in the order the 3s are dealt, chooses ``reveal``
  or ``hide``; the first reveal makes him 娘娘; a draw with no reveal is redone (a new shuffle
  and start seat), at most 3 times.  In the 4th draw (the 3rd redeal) the receiver of its first
  3 is 娘娘 whatever the choices: they are still offered in the same order, a reveal (by
  anyone) ends them, and so does the last hide.  ``"random_seat"``: a seeded random seat.  The real deal is
  a new shuffle.  Later hands of a match: the lowest score of the previous hand (penalty
  included), ties to the tied player with the worse place.
* deal: 10 cards to each seat, 14 to the bottom.  Exchange: the 娘娘 takes 4 bottom cards
  (``take r``, one per turn, jokers allowed), then returns 4 cards (``return r``) of his 10
  dealt cards: a rank may be returned at most as often as it was dealt to him, never a joker.
  Which 4 were taken and returned is known only to the 娘娘 until the hand ends.
* play: the 娘娘's next seat leads.  README convention 4: turns go to the next *active* seat
  (holding cards and not stuck); a trick ends when every other active player has passed since
  the last play; its last player leads next if still active, else the next active seat after
  him.  A player whose only card is one joker is *stuck*: he ranks below every player who goes
  out, several stuck players by when they got stuck (earlier = lower).  Play goes on until at
  most one active player remains; he takes the best place still open.
* joker realisation (the follow-up decision): a play action names an effective row.  Jokers
  that must stand in (the row needs more of a rank than the hand holds) are assigned
  automatically.  When the hand could also spend a joker where it holds naturals (holding
  ``55B``, the pair ``55`` can be ``55`` or ``5B``), the same seat then picks ``joker as r``
  (one more joker stands in for a card of rank r of the play) or ``no more jokers``, repeatedly,
  with ranks in non-decreasing order (each realisation is reached one way) and at least one
  natural card left in the play.  The follow-up is offered only when there is a real choice.
  ``B`` and ``R`` are interchangeable wild cards (both 死子, neither plays alone), so which one
  stands in is canonical: ``B`` first if held.  The played cards and what each joker stood for
  are public (state, observation, render).
* scoring (``scoring="seed"``): the 娘娘 +6/+3/-3/-6 by place; catchers +2/+1/-1/-2 by overall
  place, but +1/0/-1 in their order when the 娘娘 is 1st.  ``"positional"``: catchers always by
  overall place.  ``"zero_sum"``: each catcher -1/3 of the 娘娘's ladder value.
* 活子 penalty: the 娘娘 loses 1 per 活子 (a card other than 3, 2, B, R) among the 4 returned
  cards (``huozi_scope="returned"``) or among the 14 bottom cards after the exchange
  (``"bottom"``), every hand (``huozi_when="always"``), only when he is last (``"last"``) or
  never (``"never"``).  Deducted, paid to no one.
* ``reward="score"`` pays the scores above; ``"win_loss"`` pays the sign of each of them (+1,
  0, -1; 0 e.g. for the middle catcher), in a match hand by hand like the scores (the match
  winner is in ``info``, not in the rewards).
* match (``match=False``): with ``match=True`` hands are played until a total reaches
  ``target_score`` (40) after a hand; the highest total wins; an exact tie for the highest
  total plays another hand; ``max_hands`` (100) ends the match (truncation).  Each hand's
  scores are paid as rewards when the hand ends (``REW`` slots, zeroed at every step).

State: the shared layout (:mod:`cardenvs.core.state`) plus this game's region from ``EXT`` (see
the ``X_*`` offsets): places, the draw's 3-receivers, the 娘娘's dealt / taken / returned
cards, the joker realisation of the pending play and of the play to beat, what each seat's
jokers stood for, match totals, the last hand's scores and places, a ring of recent moves.
``PLAYED`` holds the physical cards each seat played (jokers as ``B``/``R``); the effective
plays are ``PLAYED - jokers + stood-for``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import numpy as np
from numba import njit

from ..core.cards import Deck
from ..core.combos import N_FAMILIES, ROCKET, ComboRules, enumerate_plays
from ..core.encode import Field, Layout, deck_less_hand, put_cards, put_seat_or_none
from ..core.game import MAX_COUNT, Game, GameInfo
from ..core.kernels import fits, planes, rng_below, shuffle
from ..core.options import check_bool, check_choice, check_int
from ..core.state import (
    clear_state_unset,
    BID, BIDDER, BIDS0, CUR, FIRST, LANDLORD, LAST_ROW, LAST_SEAT, NDOUBLE, NPASS, NREDEAL,
    PHASE, PLAYS0, P_DONE, P_PLAY, REW0, RNG, WINNER, deal_in_order, follows, hand_off,
    kitty_off, log_action, no_trick, played_off, put_deal, start_play_phase, state_size,
    two_choices, AUX0,
)
from ..core.table import Table, cached
from ..core.validate import StateField
from ..core.wild import (
    WildPlay, WildRows, find_wild, format_wild, gen_legal_wild, sort_wild, wild_rows,
)

if TYPE_CHECKING:
    from ..core.infostate import Hidden
    from ..core.render import TableView

NP = 4
NR = 15  # rank slots: 13 naturals, B, R
NNAT = 13
JB, JR = 13, 14  # joker slots
HAND = 10
BOTTOM = 14
N_EXCH = 4
NCARDS = 54
ORDERS = {"standard": "3456789TJQKA2BR", "three_high": "456789TJQKA23BR"}

# phases (core: 0 = auction (here: the 亮3 reveal choice), 1 = play, 2 = done)
P_REVEAL, P_TAKE, P_RETURN, P_JOKER = 0, 3, 4, 5
PHASE_NAMES = ("reveal", "play", "done", "take", "return", "joker")

# -- header slots of this game (AUX0 is PLAY_START) ------------------------------------------
A_NTAKE = AUX0 + 1  # cards taken in the exchange
A_NRET = AUX0 + 2  # cards returned
A_PASSED = AUX0 + 3  # bit mask of seats that passed since the last play
A_NTOP = AUX0 + 4  # places filled from the top (players out)
A_NSTUCK = AUX0 + 5  # places filled from the bottom (stuck players)
A_PENDING = AUX0 + 6  # row of the play awaiting its joker realisation, -1 none
A_JMIN = AUX0 + 7  # lowest rank the next voluntary joker may stand for
A_HANDNO = AUX0 + 8  # hands finished in this episode (match)
# NREDEAL: draws redone in the reveal choice; FIRST: the seat that led the hand first

# -- this game's state region after the shared layout --------------------------------------------
EXT = state_size(NP)
X_PLACE = EXT  # 4: place of each seat (0 = still active, 1..4)
X_THREES = EXT + 4  # 4: seats receiving the four 3s of the draw, in deal order
X_OFFER = EXT + 8  # which of the four 3s is offered now (reveal_choice)
X_TRUNC = EXT + 9  # 1 when a match ended by max_hands
X_NREC = EXT + 10  # moves recorded this hand (recent ring)
X_ORIG = EXT + 16  # 16: the 娘娘's 10 dealt cards
X_TAKEN = EXT + 32  # 16: cards he took from the bottom
X_RET = EXT + 48  # 16: cards he returned
X_PJ = EXT + 64  # 16: ranks the jokers of the pending play stand for (counts)
X_LJ = EXT + 80  # 16: the same for the play to beat
X_STOOD = EXT + 96  # 4 x 16: ranks each seat's played jokers stood for
X_TOTAL = EXT + 160  # 4: match totals
X_SCORE = EXT + 164  # 4: scores of the last finished hand
X_LPLACE = EXT + 168  # 4: places of the last finished hand
N_REC = 8
X_REC = EXT + 176  # N_REC x 4: (seat, row or -1 for pass, stood-for rank 1, rank 2) ring
X_LAST = X_REC + 4 * N_REC  # 3 x 16: taken, returned and bottom of the last finished hand
STATE_SIZE = X_LAST + 48

# -- options vector ---------------------------------------------------------------------------
(O_PASS, O_REVEAL0, O_TAKE0, O_RET0, O_JOKER0, O_FIRSTNN, O_BOMBSONLY, O_SCORING, O_HZSCOPE,
 O_HZWHEN, O_MATCH, O_TARGET, O_MAXHANDS, O_REWARD, O_THREE, O_DEAD, O_JALL, O_WSLOTS,
 O_T) = range(19)
N_OPTS = 20  # then wfix[T], over[T], natmax[T] (cardenvs.core.wild.WildRows)
FIRST_NN = ("first_three", "reveal_choice", "random_seat")
SCORINGS = ("seed", "positional", "zero_sum")
HZ_WHEN = ("always", "last", "never")


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


#: numba options of the kernels that never allocate: without numba's reference-counting runtime
#: a call does not pay an atomic increment and decrement for each of the play table's arrays
FAST = dict(cache=True, _nrt=False)


# -- small kernels ---------------------------------------------------------------------------------


@njit(**FAST, inline="always")
def _wr(tab, o):
    T = o[O_T]
    a = N_OPTS
    return WildRows(o[O_JALL], o[O_WSLOTS], o[a:a + T], o[a + T:a + 2 * T], o[a + 2 * T:a + 3 * T])


@njit(**FAST)
def _active(s, q):
    return s[X_PLACE + q] == 0


@njit(**FAST)
def _next_active(s, seat):
    for k in range(1, NP + 1):
        q = (seat + k) % NP
        if s[X_PLACE + q] == 0:
            return q
    return -1


@njit(**FAST)
def _is_stuck(s, q):
    """Placed while holding one joker only (the last active player is never in that state)."""
    if s[X_PLACE + q] == 0:
        return False
    ho = hand_off(q)
    left = 0
    for r in range(16):
        left += s[ho + r]
    return left == 1 and s[ho + JB] + s[ho + JR] == 1


@njit(**FAST)
def _n_active(s):
    k = 0
    for q in range(NP):
        if s[X_PLACE + q] == 0:
            k += 1
    return k


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
    k = gen_legal_wild(h, prev, tab, _wr(tab, o), out)
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
    if _n_active(s) <= 1:
        _end_hand(s, o)
        return
    s[CUR] = _next_active(s, seat)


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
        s[CUR] = last if _active(s, last) else _next_active(s, last)
    else:
        s[CUR] = _next_active(s, seat)


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


# -- observation -----------------------------------------------------------------------------------
(F_HAND, F_TAKEN, F_RETURNED, F_BOTTOM, F_PLAYED, F_JOKERS, F_OTHERS, F_SIZES, F_BEAT,
 F_BEAT_TYPE, F_BEAT_SEAT, F_BEAT_JOKERS, F_RECENT, F_NN, F_PLACE, F_STUCK, F_EXCH, F_PENDING,
 F_PENDING_J, F_REVEAL, F_TOTALS, F_LAST, F_HANDS, F_TURN, F_PHASE) = range(25)
D = 4  # planes of a card set (a hand holds at most 4 of a rank)
E = 6  # planes of an effective play (bombs of up to 6 cards)
DJ = 2  # planes of joker stand-ins (two jokers)
REC_SIZE = NR * E + NNAT * DJ + 1 + NP


def obs_layout() -> Layout:
    """The observation fields, in order.  Relative seats: 0 = the observer, 1 = next (下家)..."""
    n = NP
    C = NR * D
    CE = NR * E
    CJ = NNAT * DJ
    cards = f"{NR} ranks x {D} planes, bit r*{D}+k-1 set when holding >= k of rank r"
    eff = f"{NR} ranks x {E} planes (an effective play: jokers counted as the rank they stand for)"
    jk = f"{NNAT} natural ranks x {DJ} planes: how many jokers stood for each rank"
    return Layout([
        Field("hand", C, f"own hand ({cards}; rank index 0 = the lowest rank, 13 = B, 14 = R)"),
        Field("taken", C, "cards the 娘娘 took from the bottom: the 娘娘 of this hand; every other "
                          "seat sees the last finished hand's (zeros before a hand is over)"),
        Field("returned", C, "cards the 娘娘 returned: likewise"),
        Field("bottom", C, "the bottom (14 cards): the 娘娘 of this hand from the exchange on; every "
                           "other seat the last finished hand's"),
        Field("played", n * C, "physical cards played so far this hand by each relative seat "
                               "(jokers as B / R)"),
        Field("jokers_for", n * CJ, f"per relative seat, the ranks its played jokers stood for ({jk})"),
        Field("others", C, "cards the observer has not seen: not in his hand, not played, and "
                           "for the 娘娘 not in the bottom"),
        Field("hand_sizes", n, "cards in hand per relative seat / 14"),
        Field("to_beat", CE, f"the play to beat ({eff}); zeros on a free lead"),
        Field("to_beat_type", N_FAMILIES, "one-hot family of the play to beat (combos.FAMILY_NAMES)"),
        Field("to_beat_seat", n, "one-hot relative seat of the play to beat"),
        Field("to_beat_jokers", CJ, f"what the jokers of the play to beat stood for ({jk})"),
        Field("recent", N_REC * REC_SIZE,
              f"last {N_REC} moves of the hand, most recent first; each: effective cards ({CE}), "
              f"joker stand-ins ({CJ}), pass flag (1), relative seat one-hot ({n}); zeros when absent"),
        Field("niangniang", n + 1, "one-hot relative seat of the 娘娘; last slot: not decided yet"),
        Field("place", n * (n + 1), "per relative seat one-hot place: active, 1st, 2nd, 3rd, 4th"),
        Field("stuck", n, "per relative seat: 1 when stuck (only one joker left)"),
        Field("exchange", 2, "cards taken / 4, cards returned / 4"),
        Field("pending", CE, "the observer's own play awaiting its joker choice (effective cards)"),
        Field("pending_jokers", CJ, "the stand-ins chosen so far for that play"),
        Field("reveal", 5, "亮3 draw: draw number one-hot (4), 3s offered so far in it / 4"),
        Field("totals", n, "match totals per relative seat, (total + target) / (2 target), clipped"),
        Field("last_scores", n, "scores of the last finished hand per relative seat, (s + 24) / 48, clipped"),
        Field("hands_played", 1, "finished hands / max_hands"),
        Field("turn", n, "one-hot relative seat to move"),
        Field("phase", len(PHASE_NAMES), "one-hot phase: " + ", ".join(PHASE_NAMES)
              + " (the joker follow-up is seen as the play phase by every seat but the mover)"),
    ])


@njit(cache=True)
def _put_effective(out, off, tab, t):
    put_cards(out, off, tab.counts[t], NR, E)


@njit(cache=True)
def _put_jokers(out, off, s, base):
    put_cards(out, off, s[base:base + 16], NNAT, DJ)


@njit(cache=True)
def _clip01(x):
    return min(1.0, max(0.0, x))


@njit(cache=True)
def encode(s, seat, tab, o, off, out):
    """Write ``seat``'s observation into ``out`` (float32, zeroed here)."""
    n = NP
    out[:] = 0.0
    ho = hand_off(seat)
    ko = kitty_off(n)
    put_cards(out, off[F_HAND], s[ho:ho + 16], NR, D)
    nn = s[LANDLORD]
    ph = s[PHASE]
    over = ph == P_DONE
    is_nn = seat == nn and nn >= 0
    if is_nn and ph != P_REVEAL and not over:  # his own exchange of this hand
        put_cards(out, off[F_TAKEN], s[X_TAKEN:X_TAKEN + 16], NR, D)
        put_cards(out, off[F_RETURNED], s[X_RET:X_RET + 16], NR, D)
        put_cards(out, off[F_BOTTOM], s[ko:ko + 16], NR, D)
    elif s[A_HANDNO] > 0:  # public once a hand is over: the last finished hand's
        put_cards(out, off[F_TAKEN], s[X_LAST:X_LAST + 16], NR, D)
        put_cards(out, off[F_RETURNED], s[X_LAST + 16:X_LAST + 32], NR, D)
        put_cards(out, off[F_BOTTOM], s[X_LAST + 32:X_LAST + 48], NR, D)
    others = deck_less_hand(s, ho, NNAT, 4, 1)
    if is_nn and ph != P_REVEAL:
        for r in range(16):
            others[r] -= s[ko + r]
    C = NR * D
    CJ = NNAT * DJ
    for k in range(n):
        q = (seat + k) % n
        po = played_off(n, q)
        put_cards(out, off[F_PLAYED] + k * C, s[po:po + 16], NR, D)
        _put_jokers(out, off[F_JOKERS] + k * CJ, s, X_STOOD + 16 * q)
        sz = 0
        for r in range(16):
            others[r] -= s[po + r]
            sz += s[hand_off(q) + r]
        out[off[F_SIZES] + k] = sz / 14.0
        pl = s[X_PLACE + q]
        out[off[F_PLACE] + k * (n + 1) + pl] = 1.0
        if _is_stuck(s, q):
            out[off[F_STUCK] + k] = 1.0
    for r in range(16):
        others[r] = max(others[r], 0)
    put_cards(out, off[F_OTHERS], others, NR, D)
    prev = s[LAST_ROW]
    if (ph == P_PLAY or ph == P_JOKER) and prev >= 0:
        _put_effective(out, off[F_BEAT], tab, prev)
        out[off[F_BEAT_TYPE] + tab.family[prev]] = 1.0
        out[off[F_BEAT_SEAT] + (s[LAST_SEAT] - seat) % n] = 1.0
        _put_jokers(out, off[F_BEAT_JOKERS], s, X_LJ)
    m = s[X_NREC]
    for j in range(min(m, N_REC)):
        i = (m - 1 - j) % N_REC
        b = X_REC + 4 * i
        base = off[F_RECENT] + j * REC_SIZE
        row = s[b + 1]
        if row < 0:
            out[base + NR * E + CJ] = 1.0
        else:
            _put_effective(out, base, tab, row)
            for jj in range(2):
                jr = s[b + 2 + jj]
                if jr >= 0:
                    out[base + NR * E + jr * DJ + jj] = 1.0
        out[base + NR * E + CJ + 1 + (s[b] - seat) % n] = 1.0
    put_seat_or_none(out, off[F_NN], nn, seat, n)
    out[off[F_EXCH]] = s[A_NTAKE] / N_EXCH
    out[off[F_EXCH] + 1] = s[A_NRET] / N_EXCH
    if ph == P_JOKER and seat == s[CUR]:
        _put_effective(out, off[F_PENDING], tab, s[A_PENDING])
        _put_jokers(out, off[F_PENDING_J], s, X_PJ)
    if ph == P_REVEAL:
        out[off[F_REVEAL] + min(s[NREDEAL], 3)] = 1.0
        out[off[F_REVEAL] + 4] = s[X_OFFER] / 4.0
    tg = o[O_TARGET]
    for k in range(n):
        q = (seat + k) % n
        out[off[F_TOTALS] + k] = _clip01((s[X_TOTAL + q] + tg) / (2.0 * tg))
        if s[A_HANDNO] > 0:
            out[off[F_LAST] + k] = _clip01((s[X_SCORE + q] + 24) / 48.0)
    out[off[F_HANDS]] = _clip01(s[A_HANDNO] / o[O_MAXHANDS])
    if ph != P_DONE:
        out[off[F_TURN] + (s[CUR] - seat) % n] = 1.0
    if ph == P_JOKER and seat != s[CUR]:
        # the follow-up is the mover's secret: every other seat sees the play phase (the
        # position before he chose his play) until the play goes down with its stand-ins
        ph = P_PLAY
    out[off[F_PHASE] + ph] = 1.0


# -- the Python game object ------------------------------------------------------------------------

JOKER_NONE = "no more jokers"


class Niangniang(Game):
    """打娘娘 Da Niangniang with one option set.

    Action blocks: ``play`` (one row per effective play), ``pass``, ``reveal`` (``reveal``,
    ``hide``; only with ``first_niangniang="reveal_choice"``), ``take`` (``take 3`` ..
    ``take R``, 15), ``return`` (``return 3`` .. ``return 2``, 13 naturals), ``joker``
    (``joker as 3`` .. ``joker as 2``, then ``no more jokers``).
    """

    k_reset = staticmethod(reset)
    k_legal = staticmethod(legal)
    k_is_legal = staticmethod(is_legal)
    k_step = staticmethod(step)
    k_encode = staticmethod(encode)

    deal_keys = ("hands", "bottom", "niangniang", "returned")
    OPTIONS = dict(rank_order="standard", first_niangniang="first_three",
                   joker_wild_scope="any_combo", scoring="seed", huozi_scope="returned",
                   huozi_when="always", match=False, target_score=40, max_hands=100,
                   reward="score", allow_trio_single=False, min_pair_chain=2)
    max_hand = HAND

    def __init__(self, *, rank_order: str = "standard", first_niangniang: str = "first_three",
                 joker_wild_scope: str = "any_combo", scoring: str = "seed",
                 huozi_scope: str = "returned", huozi_when: str = "always", match: bool = False,
                 target_score: int = 40, max_hands: int = 100, reward: str = "score",
                 allow_trio_single: bool = False, min_pair_chain: int = 2):
        check_choice("rank_order", rank_order, tuple(ORDERS))
        check_choice("first_niangniang", first_niangniang, FIRST_NN)
        check_choice("joker_wild_scope", joker_wild_scope, ("any_combo", "bombs_only"))
        check_choice("scoring", scoring, SCORINGS)
        check_choice("huozi_scope", huozi_scope, ("returned", "bottom"))
        check_choice("huozi_when", huozi_when, HZ_WHEN)
        check_bool("match", match)
        check_int("target_score", target_score, 1, 10**6)
        check_int("max_hands", max_hands, 1, 10**6)
        check_choice("reward", reward, ("score", "win_loss"))
        check_bool("allow_trio_single", allow_trio_single)
        check_int("min_pair_chain", min_pair_chain, 2, 5)
        self.options: dict[str, Any] = dict(
            rank_order=rank_order, first_niangniang=first_niangniang,
            joker_wild_scope=joker_wild_scope, scoring=scoring, huozi_scope=huozi_scope,
            huozi_when=huozi_when, match=bool(match), target_score=int(target_score),
            max_hands=int(max_hands), reward=reward, allow_trio_single=bool(allow_trio_single),
            min_pair_chain=int(min_pair_chain))
        zero_sum = scoring == "zero_sum" and huozi_when == "never" and reward == "score"
        self.info = GameInfo(
            name="niangniang", title="Da Niangniang", n_players=NP, deck_size=NCARDS,
            zero_sum=zero_sum, teams="1 vs 3 (loose alliance)",
            rules_page="docs/rules/niangniang.md", options=dict(self.OPTIONS),
        )
        self.rules = combo_rules(rank_order, allow_trio_single=bool(allow_trio_single),
                                 min_pair_chain=int(min_pair_chain))
        self.table = play_table(rank_order, bool(allow_trio_single), int(min_pair_chain))
        self.deck = self.table.deck
        self.order = ORDERS[rank_order]
        T = len(self.table)
        blocks = {"play": (0, T), "pass": (T, T + 1)}
        a = T + 1
        if first_niangniang == "reveal_choice":
            blocks["reveal"] = (a, a + 2)
            a += 2
        blocks["take"] = (a, a + NR)
        a += NR
        blocks["return"] = (a, a + NNAT)
        a += NNAT
        blocks["joker"] = (a, a + NNAT + 1)
        self.blocks = blocks
        self.layout = obs_layout()
        self.joker_slots = (JB, JR)
        self.wild = wild_rows(self.table.arrays.counts, self.joker_slots, self.joker_slots)
        o = np.zeros(N_OPTS + 3 * T, np.int64)
        o[O_PASS] = T
        o[O_REVEAL0] = blocks["reveal"][0] if "reveal" in blocks else -1
        o[O_TAKE0] = blocks["take"][0]
        o[O_RET0] = blocks["return"][0]
        o[O_JOKER0] = blocks["joker"][0]
        o[O_FIRSTNN] = FIRST_NN.index(first_niangniang)
        o[O_BOMBSONLY] = int(joker_wild_scope == "bombs_only")
        o[O_SCORING] = SCORINGS.index(scoring)
        o[O_HZSCOPE] = int(huozi_scope == "bottom")
        o[O_HZWHEN] = HZ_WHEN.index(huozi_when)
        o[O_MATCH] = int(match)
        o[O_TARGET] = target_score
        o[O_MAXHANDS] = max_hands
        o[O_REWARD] = int(reward == "win_loss")
        o[O_THREE] = self.order.index("3")
        o[O_DEAD] = sum(1 << self.order.index(c) for c in "32BR")
        o[O_JALL] = self.wild.jall
        o[O_WSLOTS] = self.wild.wslots
        o[O_T] = T
        o[N_OPTS:N_OPTS + T] = self.wild.wfix
        o[N_OPTS + T:N_OPTS + 2 * T] = self.wild.over
        o[N_OPTS + 2 * T:] = self.wild.natmax
        super().__init__(o)

    base_state_size = STATE_SIZE
    # before the deal (the 亮3 reveal choice) the hands are empty
    cards_when = (PHASE, P_PLAY, P_JOKER)

    # -- what a valid state is (Game.check_state) ------------------------------------------------
    def state_fields(self) -> list[StateField]:
        """Da Niangniang's own state fields and their ranges (:meth:`Game.state_fields`)."""
        T = len(self.table)
        seat = (0, NP - 1)
        dealt = (P_PLAY, P_JOKER)
        copies = [int(c) for c in self.deck.full_counts()]

        def counts(name, at):
            return [StateField(f"{name} [{self.deck.order[r] if r < NR else '-'}]", at + r, 0,
                               copies[r]) for r in range(16)]

        empty = [StateField(f"{name} (before the deal)", at, 0, 0, 16, when=(PHASE, P_REVEAL,
                                                                              P_REVEAL))
                 for name, at in [(f"hand of seat {i}", hand_off(i)) for i in range(NP)]
                 + [("bottom", kitty_off(NP))]
                 + [(f"played by seat {i}", played_off(NP, i)) for i in range(NP)]]
        reveal = self.options["first_niangniang"] == "reveal_choice"
        return [
            # the reveal phase (亮3) exists only with first_niangniang="reveal_choice"
            StateField("PHASE", PHASE, P_REVEAL if reveal else P_PLAY, len(PHASE_NAMES) - 1),
            *empty,
            StateField("BID", BID, 0, 0), StateField("BIDDER", BIDDER, 0, 0),
            StateField("NDOUBLE", NDOUBLE, 0, 0), StateField("NREDEAL", NREDEAL, 0, 3),
            StateField("BIDS", BIDS0, 0, 0, 8),
            StateField("A_NTAKE", A_NTAKE, 0, N_EXCH), StateField("A_NRET", A_NRET, 0, N_EXCH),
            StateField("A_PASSED", A_PASSED, 0, 2**NP - 1),
            StateField("A_NTOP", A_NTOP, 0, NP), StateField("A_NSTUCK", A_NSTUCK, 0, NP),
            StateField("A_PENDING", A_PENDING, -1, T - 1),
            StateField("A_JMIN", A_JMIN, 0, NNAT),
            StateField("A_HANDNO", A_HANDNO, 0, self.options["max_hands"]),
            StateField("X_PLACE", X_PLACE, 0, NP, NP),
            StateField("X_THREES", X_THREES, *seat, NP),
            StateField("X_OFFER", X_OFFER, 0, 3), StateField("X_TRUNC", X_TRUNC, 0, 1),
            StateField("X_NREC", X_NREC, 0, MAX_COUNT),
            StateField("unused", X_NREC + 1, 0, 0, X_ORIG - X_NREC - 1),
            *counts("X_ORIG", X_ORIG), *counts("X_TAKEN", X_TAKEN), *counts("X_RET", X_RET),
            StateField("X_PJ", X_PJ, 0, 2, 16), StateField("X_LJ", X_LJ, 0, 2, 16),
            StateField("X_STOOD", X_STOOD, 0, 2, 16 * NP),
            StateField("X_LPLACE", X_LPLACE, 0, NP, NP),
            StateField("unused", X_LPLACE + NP, 0, 0, X_REC - X_LPLACE - NP),
            *(f for i in range(N_REC) for f in (
                StateField(f"X_REC[{i}] seat", X_REC + 4 * i, -1, NP - 1),
                StateField(f"X_REC[{i}] row", X_REC + 4 * i + 1, -1, T - 1),
                StateField(f"X_REC[{i}] jokers", X_REC + 4 * i + 2, -1, NNAT - 1, 2))),
            # after the reveal choice there is a 娘娘; the joker phase has a pending row
            StateField("LANDLORD", LANDLORD, *seat, when=(PHASE, *dealt)),
            StateField("A_PENDING", A_PENDING, 0, T - 1, when=(PHASE, P_JOKER, P_JOKER)),
            # counters of a phase that is still on are below the count that ends it; the play
            # ends when at most one active player is left
            *(StateField(name, at, 0, NP - 2, when=(PHASE, ph, ph))
              for name, at in (("A_NTOP", A_NTOP), ("A_NSTUCK", A_NSTUCK), ("NPASS", NPASS))
              for ph in (P_PLAY, P_JOKER)),
            StateField("A_NTAKE", A_NTAKE, 0, N_EXCH - 1, when=(PHASE, P_TAKE, P_TAKE)),
            StateField("A_NTAKE", A_NTAKE, N_EXCH, N_EXCH, when=(PHASE, P_RETURN, P_RETURN)),
            StateField("A_NRET", A_NRET, 0, N_EXCH - 1, when=(PHASE, P_RETURN, P_RETURN)),
        ]

    def state_order(self) -> list[tuple]:
        """Da Niangniang's state orderings (:meth:`Game.state_order`): the seat to move is
        the 娘娘 while she takes and returns cards."""
        # the 娘娘 takes and returns
        when = (PHASE, P_TAKE, P_RETURN)
        return [(CUR, LANDLORD, when), (LANDLORD, CUR, when)]

    def log_window(self) -> Optional[tuple[int, int, tuple[int, int, int]]]:
        """``None``: no part of the action log is checked as plays (the observation's recent
        moves are ``X_REC``, not the log)."""
        return None

    # -- the rules query API ------------------------------------------------------------------------
    #: keywords of :meth:`query_moves` that :func:`cardenvs.legal_moves` passes on
    query_keywords = ("plain",)

    def query_moves(self, hand: str, prev: Optional[str] = None, prev_type: Optional[str] = None,
                    *, plain: bool = False) -> list[str]:
        """Every legal play of ``hand`` against ``prev`` (``None``: free lead), the hook of
        :func:`cardenvs.legal_moves`.

        Each realisation the game's joker decisions can produce is listed (:meth:`realisations`),
        a joker standing in written with the rank it stands for in brackets
        (:mod:`cardenvs.core.wild`): holding ``333B``, ``"33"`` and ``"3B[3]"`` are two ways to
        play the pair ``33``, ``"333B[3]"`` is the bomb ``3333``; the joker bomb is ``"BR"``.
        ``plain=True`` lists the distinct effective plays instead (``"33"``, ``"3333"``).
        ``prev`` may be written plainly (``"5555"``: jokers may have stood in) or with its
        jokers (``"555B[5]"``).  Sorted by size, then by rank order, then by the writing.
        """
        check_bool("plain", plain)
        counts = self.deck.parse(hand, what="hand")
        if counts.sum() > HAND:
            raise ValueError(f"hand {hand!r} has {int(counts.sum())} cards; at most {HAND} "
                             f"in niangniang")
        prev_row = -1
        if prev is not None:
            prev_row, wp = find_wild(self.table, prev, prev_type, self.joker_slots,
                                     self.joker_slots)
            self._check_prev(hand, counts, prev, prev_row, wp)
        elif prev_type is not None:
            raise ValueError("prev_type given without prev")
        out = np.empty(len(self.table), np.int64)
        k = self.legal_rows(counts, prev_row, out)
        res: list[str] = []
        for t in out[:k].tolist():
            eff = self.tab.counts[t]
            if plain:
                res.append(self.deck.format(eff))
                continue
            for st in self.realisations(counts, t):
                res.append(format_wild(self.deck, eff, st, self.joker_slots))
        return sort_wild(res, self.deck)

    legal_moves = query_moves

    def realisations(self, counts: np.ndarray, row: int) -> list[np.ndarray]:
        """Every way the hand ``counts`` may make the legal play ``row`` under the game's joker
        decisions (module docstring, "joker realisation"): ``stands[j, r]`` jokers of slot ``j``
        standing for rank ``r`` (int64[16, 16] each).

        The jokers the row needs beyond the hand's naturals stand in (forced); then any
        multiset of further stand-ins, at most one per natural card of the row beyond the
        forced ones, while jokers are left in hand and at least one natural card stays in the
        play; none outside bombs with ``joker_wild_scope="bombs_only"``.  The physical jokers
        are canonical: ``B`` first if held (``B`` and ``R`` are interchangeable); written with
        ``B`` taking the lowest stood-for ranks.  The joker bomb ``BR`` has one realisation
        with no stand-ins.
        """
        h = [int(x) for x in counts]
        c = [int(x) for x in self.tab.counts[row]]
        w = h[JB] + h[JR]
        forced = [max(0, c[r] - h[r]) for r in range(NNAT)]
        nf = sum(forced)
        room = [c[r] - forced[r] for r in range(NNAT)]
        budget = min(w, int(self.tab.ncards[row]) - 1) - nf
        if self.opts[O_BOMBSONLY] == 1 and self.tab.power[row] == 0:
            budget = 0
        if int(self.tab.family[row]) == ROCKET:
            budget = 0
        extras: list[list[int]] = []

        def rec(r: int, left: int, cur: list[int]) -> None:
            if r == NNAT:
                extras.append(list(cur))
                return
            for v in range(min(room[r], left) + 1):
                cur[r] = v
                rec(r + 1, left - v, cur)
            cur[r] = 0

        rec(0, max(budget, 0), [0] * NNAT)
        out = []
        for v in extras:
            ranks = [r for r in range(NNAT) for _ in range(forced[r] + v[r])]
            st = np.zeros((16, 16), np.int64)
            for i, r in enumerate(ranks):
                st[JB if i < h[JB] else JR, r] += 1
            out.append(st)
        return out

    def _check_prev(self, hand: str, counts: np.ndarray, prev: str, prev_row: int,
                    wp: WildPlay) -> None:
        """``ValueError`` unless the hand and the play to beat can be held together.  A plain
        ``prev`` may have had jokers standing in (:meth:`check_position`); one written with
        its jokers fixes its physical cards (and, with ``joker_wild_scope="bombs_only"``,
        jokers stand in only inside bombs)."""
        if wp.n_stand == 0:
            self.check_position(counts, prev_row)
            return
        if self.opts[O_BOMBSONLY] == 1 and self.tab.power[prev_row] == 0:
            raise ValueError(f"prev {prev!r}: with joker_wild_scope='bombs_only' a joker stands "
                             f"in only inside a bomb")
        both = counts + wp.physical
        over = np.flatnonzero(both > self.deck.full_counts())
        if over.size:
            r = int(over[0])
            raise ValueError(f"impossible position: hand {hand!r} and prev {prev!r} hold "
                             f"{int(both[r])} cards of {self.deck.order[r]!r}; the deck has "
                             f"{self.deck.copies[r]}")

    def legal_rows(self, counts: np.ndarray, prev_row: int, out: np.ndarray) -> int:
        """Legal play rows of a hand (jokers as wild cards) against ``prev_row`` (-1: free lead),
        written to ``out``; returns how many (used by :meth:`query_moves`)."""
        return int(legal_wild_rows(np.asarray(counts, np.int64), np.int64(prev_row), self.tab,
                            self.opts, out))

    def check_position(self, counts: np.ndarray, prev_row: int) -> None:
        """``ValueError`` unless a hand ``counts`` and the effective play ``prev_row`` can be held
        together from one deck (the play's extra cards stood in for by jokers the hand lacks);
        :meth:`query_moves` with a plain ``prev``."""
        prev = self.tab.counts[prev_row]
        full = self.deck.full_counts()
        jokers_left = int(full[JB] + full[JR] - counts[JB] - counts[JR] - prev[JB] - prev[JR])
        if prev[JB] > full[JB] - counts[JB] or prev[JR] > full[JR] - counts[JR]:
            raise ValueError("impossible position: the hand and the play to beat both hold a joker")
        need = int(sum(max(0, int(counts[r]) + int(prev[r]) - int(full[r])) for r in range(NNAT)))
        if need > jokers_left or (need and int(prev[:NNAT].sum()) - need < 1):
            over = [self.deck.order[r] for r in range(NNAT) if counts[r] + prev[r] > full[r]]
            raise ValueError(
                f"impossible position: the hand and the play to beat hold too many "
                f"{', '.join(map(repr, over))} for one deck, even with jokers standing in")

    # -- action strings ------------------------------------------------------------------------
    def _block_string(self, block: str, i: int) -> str:
        if block == "pass":
            return "pass"
        if block == "reveal":
            return "reveal" if i == 0 else "hide"
        if block == "take":
            return f"take {self.order[i]}"
        if block == "return":
            return f"return {self.order[i]}"
        return JOKER_NONE if i == NNAT else f"joker as {self.order[i]}"

    def _parse_block_string(self, text: str):
        t, low = self._words(text)
        if low == "pass":
            return self.pass_id
        if low in ("reveal", "hide"):
            if "reveal" not in self.blocks:
                raise ValueError(f"{text!r}: the reveal choice exists only with "
                                 f"first_niangniang='reveal_choice'")
            return self.blocks["reveal"][0] + (low == "hide")
        if low == JOKER_NONE:
            return self.blocks["joker"][0] + NNAT
        for prefix, block, n in (("take ", "take", NR), ("return ", "return", NNAT),
                                 ("joker as ", "joker", NNAT)):
            if low.startswith(prefix):
                ch = t[len(prefix):].strip().upper()
                i = self.order.find(ch)
                if len(ch) != 1 or i < 0 or i >= n:
                    allowed = " ".join(self.order[:n])
                    raise ValueError(f"bad pick {text!r}: write '{prefix}X' with X one of {allowed}")
                return self.blocks[block][0] + i
        return None

    # -- custom deals ----------------------------------------------------------------------------
    def custom_deal(self, state: np.ndarray, options: dict, seed: int) -> None:
        """Set up ``state`` from a given deal (rules README, convention 8).

        ``{"hands": [h0, h1, h2, h3], "bottom": b, "niangniang": seat}``: 10 cards a hand, 14 in
        the bottom (default: the rest of the deck); the 娘娘's seat is required (the draw of the
        first 3 would decide it).  The 娘娘 then plays the exchange.  With ``"returned": "…"``
        (4 cards of the bottom, no joker) the hands and bottom are *after* the exchange, those
        are the cards he returned, and the play starts at once.
        """
        from ..core.deals import check_deal_keys, parse_deal

        check_deal_keys(options, self.deal_keys)
        if "niangniang" not in options:
            raise ValueError("a custom deal needs 'niangniang': the seat of the 娘娘 (the draw "
                             "of the first 3 would decide it)")
        nn = options["niangniang"]
        check_int("niangniang", nn, 0, NP - 1)
        deal = {"hands": options.get("hands")} if "hands" in options else {}
        if "bottom" in options:
            deal["kitty"] = options["bottom"]
        try:
            hands, bottom = parse_deal(self.deck, deal, NP, HAND, BOTTOM)
        except ValueError as e:
            raise ValueError(str(e).replace("kitty", "bottom")) from None
        returned = np.full(16, -1, np.int64)
        if "returned" in options:
            ret = self.deck.parse(options["returned"], what="returned")
            if ret.sum() != N_EXCH:
                raise ValueError(f"'returned' has {int(ret.sum())} cards; the 娘娘 returns {N_EXCH}")
            if ret[JB] or ret[JR]:
                raise ValueError("'returned' holds a joker: jokers can never be returned")
            if np.any(ret > bottom):
                r = int(np.flatnonzero(ret > bottom)[0])
                raise ValueError(f"'returned' card {self.deck.order[r]!r} is not in the bottom")
            returned = ret
        cards = np.zeros((NP + 1, 16), np.int64)
        cards[:NP] = hands
        cards[NP] = bottom
        reset_custom(state, np.int64(seed), self.tab, self.opts, cards, np.int64(nn), returned)

    # -- what is hidden from whom (read by cardenvs.core.infostate) ------------------------------
    def hidden(self, state: np.ndarray, seat: int) -> Hidden:
        """What ``seat`` cannot see.  In the 亮3 draw: who receives the 3s not yet offered.
        Then the other hands (a stuck seat holds one joker; an active seat with one card holds
        no joker, or it would be stuck) and, for a catcher, the bottom and the 娘娘's exchange:
        the cards he took (a uniform subset of his cards, hand and played), the cards he
        returned (a uniform subset of the bottom's natural cards) and his dealt cards (the
        rest).  While a hidden seat chooses its joker stand-ins, its forced stand-ins follow
        from its sampled hand and it must have a real choice."""
        from ..core.infostate import (
            DrawOrder, Hidden, Linear, Pile, Subset, hand_piles, mask_of,
        )

        def facts():
            return dict(stuck=self.stuck(state),
                        jokers_for=[self.stand_ins(state, X_STOOD + 16 * q) for q in range(NP)])

        ph = int(state[PHASE])
        if ph == P_REVEAL:  # nothing dealt yet
            return Hidden(draws=[DrawOrder(X_THREES, int(state[X_OFFER]) + 1, NCARDS, 4, NP)],
                          facts=facts)
        h = Hidden(piles=hand_piles(state, NP, seat), facts=facts)
        jokers = mask_of((JB, JR))
        naturals = mask_of(range(NNAT))
        for p in h.piles:
            if p.size == 1:
                p.mask = jokers if state[X_PLACE + p.seat] != 0 else naturals
        nn = int(state[LANDLORD])
        ko = kitty_off(NP)
        if seat == nn:
            h.visible.update(bottom=ko, taken=X_TAKEN, returned=X_RET, dealt=X_ORIG)
        else:
            h.piles.append(Pile("bottom", ko, int(state[ko:ko + 16].sum())))
            hn, pn = hand_off(nn), played_off(NP, nn)
            custom = int(state[X_ORIG:X_ORIG + 16].sum()) == 0  # dealt after the exchange
            if not custom:
                h.records.append(Subset("taken", X_TAKEN, int(state[A_NTAKE]), (hn, pn)))
            h.records.append(Subset("returned", X_RET, int(state[A_NRET]), (ko,), naturals))
            if not custom:
                h.records.append(Linear("dealt", X_ORIG, [(1, hn), (1, pn), (1, X_RET),
                                                          (-1, X_TAKEN)]))
        if ph == P_JOKER and int(state[CUR]) != seat:
            h.choice = True
            h.repair = self._forced_stand_ins
        return h

    def _forced_stand_ins(self, s: np.ndarray) -> bool:
        """The pending play's forced joker stand-ins from the mover's hand (``step``'s rule),
        no voluntary one chosen yet; False when the hand cannot make the play."""
        t = int(s[A_PENDING])
        ho = hand_off(int(s[CUR]))
        if not _row_fits(s[ho:ho + 16], t, self.tab, self.opts):
            return False
        s[X_PJ:X_PJ + 16] = 0
        if int(self.tab.family[t]) != ROCKET:
            need = self.tab.counts[t, :NNAT] - s[ho:ho + NNAT]
            s[X_PJ:X_PJ + NNAT] = np.maximum(need, 0)
        s[A_JMIN] = 0
        return True

    # -- helpers for tests and people ------------------------------------------------------------
    def places(self, state: np.ndarray) -> list[int]:
        """Place of each seat (0 = still active, 1..4)."""
        return state[X_PLACE:X_PLACE + NP].tolist()

    def stuck(self, state: np.ndarray) -> list[bool]:
        """Whether each seat is stuck (placed while holding one joker only)."""
        out = []
        for q, pl in enumerate(state[X_PLACE:X_PLACE + NP].tolist()):
            if pl == 0:
                out.append(False)
                continue
            h = state[hand_off(q):hand_off(q) + 16].tolist()
            out.append(sum(h) == 1 and h[JB] + h[JR] == 1)
        return out

    def totals(self, state: np.ndarray) -> list[int]:
        """Each seat's match total."""
        return [int(x) for x in state[X_TOTAL:X_TOTAL + NP]]

    def last_scores(self, state: np.ndarray) -> list[int]:
        """Each seat's score in the last finished hand."""
        return [int(x) for x in state[X_SCORE:X_SCORE + NP]]

    def last_places(self, state: np.ndarray) -> list[int]:
        """Each seat's place in the last finished hand."""
        return [int(x) for x in state[X_LPLACE:X_LPLACE + NP]]

    def truncated(self, state: np.ndarray) -> bool:
        """Whether the match ended by ``max_hands`` (truncated rather than decided)."""
        return bool(state[X_TRUNC])

    def hands_played(self, state: np.ndarray) -> int:
        """The hands finished in this episode (a match plays several)."""
        return int(state[A_HANDNO])

    def cards(self, state: np.ndarray, what: str) -> str:
        """Card strings of state regions: ``hand0``..``hand3``, ``bottom``, ``taken``,
        ``returned``, ``dealt`` (the 娘娘's 10 dealt cards), ``played0``..``played3``."""
        if what.startswith("hand"):
            q = int(what[4:])
            return self.deck.format(state[hand_off(q):hand_off(q) + 16])
        if what.startswith("played"):
            q = int(what[6:])
            return self.deck.format(state[played_off(NP, q):played_off(NP, q) + 16])
        base = {"bottom": kitty_off(NP), "taken": X_TAKEN, "returned": X_RET, "dealt": X_ORIG}[what]
        return self.deck.format(state[base:base + 16])

    def stand_ins(self, state: np.ndarray, base: int) -> str:
        """The ranks jokers stand for, as a card string, from the rank counts at
        ``state[base:]`` (the pending play's, or a seat's played jokers')."""
        return "".join(self.order[r] * int(state[base + r]) for r in range(NNAT))

    def play_string(self, state: np.ndarray, row: int, j1: int, j2: int) -> str:
        """A play as written in the render: effective cards, then ``(B=5)`` for stand-ins."""
        s = self.table.row_string(row)
        js = [r for r in (j1, j2) if r >= 0]
        if js:
            s += " (" + " ".join(f"joker={self.order[r]}" for r in js) + ")"
        return s

    def table_view(self, state: np.ndarray) -> TableView:
        """The table as :class:`cardenvs.core.render.TableView` (read by the text and the
        image renders): the 娘娘 and the hand number in the header, the match totals above
        the seats, each seat's place (and whether it is stuck), the bottom, the cards taken
        and returned, the 亮3 draw, the play to beat with its stand-ins, the jokers being
        chosen, the last six plays and the result."""
        from ..core.render import (
            SeatView, TableLine, TableView, mark_last, recent_line, rewards_text, seat_rewards,
        )

        s = state
        ph = int(s[PHASE])
        nn = int(s[LANDLORD])
        done = ph == P_DONE
        facts = [f"phase: {PHASE_NAMES[ph]}", f"娘娘: {'-' if nn < 0 else f'player_{nn}'}",
                 f"hand {int(s[A_HANDNO]) + (ph != P_DONE)}"]
        head = []
        if self.options["match"]:
            totals = " ".join(f"{int(x):+d}" for x in s[X_TOTAL:X_TOTAL + NP])
            head.append(TableLine("totals", f"{totals} (target {self.options['target_score']})"))
        seats = []
        for q in range(NP):
            role = "娘娘" if q == nn else ("catcher" if nn >= 0 else "")
            pl = int(s[X_PLACE + q])
            tag = ""
            if pl:
                tag = f"place {pl}" + (" (stuck)" if self.stuck(s)[q] else "")
            seats.append(SeatView(q, role, self.cards(s, f"hand{q}"), tag,
                                  to_move=not done and q == int(s[CUR])))
        bottom = self.cards(s, "bottom")
        lines = [TableLine("bottom", bottom, cards=bottom)]
        if nn >= 0 and int(s[A_NTAKE]):
            ret = self.cards(s, "returned")
            live = sum(ch not in "32BR" for ch in ret)
            lines.append(TableLine("taken", f"{self.cards(s, 'taken')} | returned: {ret or '-'} "
                                            f"({live} 活子)"))
        if ph == P_REVEAL:
            lines.append(TableLine(f"亮3 draw {int(s[NREDEAL]) + 1}", "3s go to "
                                   + " ".join(f"p{int(x)}" for x in s[X_THREES:X_THREES + 4])
                                   + f"; offered: 3 no. {int(s[X_OFFER]) + 1}"))
        prev = int(s[LAST_ROW])
        if prev >= 0 and ph in (P_PLAY, P_JOKER):
            js = [r for r in range(NNAT) for _ in range(int(s[X_LJ + r]))] + [-1, -1]
            play = self.play_string(s, prev, js[0], js[1])
            by = f"by player_{int(s[LAST_SEAT])}"
            row = self.table.row_string(prev)
            lines.append(TableLine("to beat", f"{play} {by}", cards=row,
                                   note=(play[len(row):] + " " + by).strip()))
        if ph == P_JOKER:
            lines.append(TableLine("choosing jokers for",
                                   f"{self.table.row_string(int(s[A_PENDING]))}; "
                                   f"stand-ins so far: {self.stand_ins(s, X_PJ) or '-'}"))
        m = int(s[X_NREC])
        acts = []
        for j in range(max(0, m - N_REC), m):
            b = X_REC + 4 * (j % N_REC)
            rec_row = int(s[b + 1])
            txt = ("pass" if rec_row < 0
                   else self.play_string(s, rec_row, int(s[b + 2]), int(s[b + 3])))
            acts.append((int(s[b]), txt))
        lines += recent_line(acts[-6:])
        if done:
            res = rewards_text(s, NP)
            sc = " ".join(f"{int(x):+d}" for x in s[X_SCORE:X_SCORE + NP])
            pls = " ".join(str(int(x)) for x in s[X_LPLACE:X_LPLACE + NP])
            lines.append(TableLine("result", f"places {pls}; scores {sc}; rewards {res}"
                                   + (" (match truncated)" if s[X_TRUNC] else "")))
        view = TableView(self.info.title, facts, seats, lines, head=head, role_width=7,
                         done=done)
        seat_rewards(view, s)
        return mark_last(view, acts)

    def render(self, state: np.ndarray) -> str:
        """The table as text (``render_mode="ansi"``)."""
        from ..core.render import text_of

        return text_of(self.table_view(state))
