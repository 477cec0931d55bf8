"""挖坑 Wakeng: 3 players, 52 cards, one digger (坑主) against two farmers.

Rules page: ``docs/rules/wakeng.md``.  The combination set is the shared engine's
(:class:`cardenvs.core.combos.ComboRules`) with Wakeng's parameters: rank order
``4 5 6 7 8 9 T J Q K A 2 3`` (rank index 0 = ``4``, 12 = ``3``), one deck of 52 cards, no
jokers, no kickers of any kind, chains within 4..A, no rocket.  This module adds what the
game needs beyond that: the suited deal (♠3 first bidder, ♦3 first leader), the one-round
auction, the kitty and the burying, the open hand (明牌), scoring and the observation.

Rules-variant statement (defaults first):

* ``first_bidder="S3"``: the holder of ♠3 bids first; if ♠3 is in the kitty, the holder of ♠4,
  then ♠5, ... ♠K, ♠A, ♠2.  ``"lowest_heart"`` / ``"lowest_club"``: the holder of the lowest
  heart / club not in the kitty, in the game's rank order 4, 5, ... K, A, 2, 3.
* auction: one round in turn order from the first bidder; each seat speaks once (pass or a bid
  strictly above the current one, 1..3); a 3 ends it at once; if all pass, the first bidder
  digs at bid 1.
* the digger takes the 4 kitty cards (20 in hand) and buries 4 of them, one pick per turn.
  Picks are by rank with the diamond apart: ``bury 7`` buries a 7 that is not ♦7, ``bury D7``
  buries ♦7.  After the auction a card's suit matters only for the ♦ first-lead rule, so
  which of ♠7 / ♥7 / ♣7 goes is not tracked (the state keeps, per rank, where the diamond is).  Buried cards are out of play and known to the digger only; ``reveal_kitty=True`` shows
  the 4 kitty cards to everyone once the digger has taken them (the burial stays secret).
* first lead after burying: the holder of ♦3, then ♦4, ♦5, ... ♦A, ♦2 skipping buried ones;
  this may be a farmer.
* ``open_hand=False``; when on, a player who bids 3 decides at once (before taking the kitty)
  whether to play open: his 16 dealt cards become part of every observation, and the stake
  doubles.
* ``bombs=True``: four of a kind is a bomb (beats every non-bomb; higher rank wins; 3333 is
  the highest).  ``bombs=False``: four of a kind is a type of its own (family ``bomb`` with no
  bomb power), beaten only by a higher four of a kind, and it never doubles the stake.
* ``min_straight=5`` (3..11), ``min_pair_chain=3`` (2..8), ``min_airplane=2`` (2..5).  Plays
  never exceed 16 cards (the hand size in the play phase).
* unit = bid x 2^(bombs played) x (2 if open) x 2^floor(max(n, 8) / 8), n = cards held by the
  losing side; digger +-2 unit, each farmer -+unit.  ``reward="win_loss"`` pays +-1.
"""

from __future__ import annotations

from dataclasses import replace

from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from ..core.cards import SUITS, Deck
from ..core.deals import is_suited as _is_suited  # noqa: F401  (its old name here)
from ..core.combos import BOMB, ComboRules, enumerate_plays
from ..core.encode import (
    Field, Layout, auction_fields, planes_doc, put_auction, put_cards, put_seat_or_none,
    put_table, rel_seat, set_auction, set_cards, set_count, set_seat_or_none, set_table,
    table_fields, zero,
)
from ..core.game import Game, GameInfo
from ..core.kernels import HOT, HOT_INLINE, shuffle
from ..core.state import (
    clear_state_unset,
    AUX0, BID, BIDDER, BIDS0, CUR, FIRST, HDR, LANDLORD, NDOUBLE, NLOG, NREDEAL, PHASE,
    PLAY_START, P_AUCTION, P_DONE, P_PLAY, RNG, WINNER, hand_off, is_legal_play_or_bid,
    kitty_off, legal_play_or_bid, log_action, open_auction, play_action, played_off, put_deal,
    settle_one_vs_rest, speak, start_play_phase, state_size, two_choices,
)
from ..core.table import Table, cached
from ..core.validate import CardRegion, StateField
from ..core.options import check_bool, check_choice, check_int

if TYPE_CHECKING:
    from ..core.infostate import Hidden
    from ..core.render import TableView

ORDER = "456789TJQKA23"
NP = 3
NR = 13  # ranks
HAND = 16
KITTY = 4
N_BURY = 4
MAX_BID = 3
NCARDS = 52
DIAMOND = 3  # suit index of ♦ in SUITS = "SHCD" (card id = rank * 4 + suit)

# extra phases (the core defines P_AUCTION=0, P_PLAY=1, P_DONE=2)
P_OPEN, P_BURY = 3, 4
PHASE_NAMES = ("auction", "play", "done", "open", "bury")

# -- state: header slots of this game (AUX0..AUX0+8) ----------------------------------------
A_SPOKEN = AUX0 + 1  # seats that have spoken in the auction
A_NBURIED = AUX0 + 2  # cards buried so far
A_OPEN = AUX0 + 3  # open-hand decision: -1 none, 0 closed, 1 open
A_TAKEN = AUX0 + 4  # 1 once the digger has taken the kitty
A_LEADER_FIXED = AUX0 + 5  # first leader fixed by a custom unsuited deal, -1 = by diamonds
A_LEADER = AUX0 + 6  # the seat that made the first lead (-1 before the play)

# -- state: this game's region after the shared layout -----------------------------------------
EXT = state_size(NP)  # = HDR + 16 * 7 + MAXLOG
DIAM = EXT  # 13 slots: where ♦ of each rank is: seat 0..2, 3 kitty, 4 buried, -1 unknown
DEALT = EXT + 16  # 16 slots: the digger's 16 dealt cards (what an open hand shows)
BURIED = EXT + 32  # 16 slots: the buried cards
STATE_SIZE = EXT + 48
LOC_KITTY, LOC_BURIED = 3, 4

# -- options vector (read by the kernels) ------------------------------------------------------
O_PASS, O_BURY0, O_OPEN0, O_OPENHAND, O_REVEAL, O_REWARD, O_FB_SUIT, O_FB_START = range(8)
O_RECENT, O_NRANKS, O_DEPTH = 8, 9, 10
N_OPTS = 11


def combo_rules(*, min_straight: int = 5, min_pair_chain: int = 3,
                min_airplane: int = 2) -> ComboRules:
    """Wakeng's combination set (bombs are post-processed by :func:`wakeng_plays`)."""
    a = ORDER.index("A")
    return ComboRules(
        Deck.standard(ORDER, 1), chain_lo=0, chain_hi=a,
        straight=(min_straight, a + 1), pair_chain=(min_pair_chain, a + 1),
        airplane=(min_airplane, a + 1), airplane_singles=None, airplane_pairs=None,
        trio_single=False, trio_pair=False, four_two_singles=False, four_two_pairs=False,
        bomb_sizes=(4,), bomb_order="rank", rocket=None, double_min_bomb=4, max_cards=HAND,
    )


def wakeng_plays(rules: ComboRules, bombs: bool = True) -> list:
    """Every play; with ``bombs=False`` four of a kind loses its bomb power (own shape class)."""
    plays = enumerate_plays(rules)
    if bombs:
        return plays
    return [replace(p, bomb_power=0, doubles=0) if p.family == BOMB else p for p in plays]


@cached
def play_table(bombs: bool = True, min_straight: int = 5, min_pair_chain: int = 3,
               min_airplane: int = 2) -> Table:
    """The (cached) play table of an option set."""
    rules = combo_rules(min_straight=min_straight, min_pair_chain=min_pair_chain,
                        min_airplane=min_airplane)
    return Table(rules.deck, wakeng_plays(rules, bombs))


# -- scoring ---------------------------------------------------------------------------------------


@njit(**HOT_INLINE)
def stake_unit(bid, bombs, open_hand, n_left):
    """unit = bid x 2^bombs x (2 if open) x 2^floor(max(n_left, 8) / 8)."""
    u = np.int64(bid) << np.int64(bombs)
    if open_hand:
        u *= 2
    return u << np.int64(max(n_left, 8) // 8)


# -- kernels ---------------------------------------------------------------------------------------


@njit(**HOT)
def _clear(s, seed):
    clear_state_unset(s, seed, (A_OPEN, A_LEADER_FIXED, A_LEADER))
    open_auction(s)
    for r in range(NR):
        s[DIAM + r] = -1


@njit(**HOT)
def place(s, o, loc):
    """Deal by card location: ``loc[rank * 4 + suit]`` is seat 0..2 or 3 (kitty).

    Fills the hands, the kitty, the diamonds' places and the first bidder (``o[O_FB_SUIT]``
    searched from rank ``o[O_FB_START]`` upwards, skipping the kitty).
    """
    ko = kitty_off(NP)
    for c in range(NCARDS):
        r = c // 4
        w = loc[c]
        if w == LOC_KITTY:
            s[ko + r] += 1
        else:
            s[hand_off(w) + r] += 1
        if c % 4 == DIAMOND:
            s[DIAM + r] = w
    fs = o[O_FB_SUIT]
    for i in range(NR):
        r = (o[O_FB_START] + i) % NR
        w = loc[r * 4 + fs]
        if w != LOC_KITTY:
            s[FIRST] = w
            break


@njit(**HOT)
def _take_kitty(s, o):
    """The digger takes the kitty and starts burying."""
    d = s[LANDLORD]
    ho = hand_off(d)
    ko = kitty_off(NP)
    for r in range(16):
        s[DEALT + r] = s[ho + r]
        s[ho + r] += s[ko + r]
    for r in range(NR):
        if s[DIAM + r] == LOC_KITTY:
            s[DIAM + r] = d
    s[A_TAKEN] = 1
    s[A_NBURIED] = 0
    s[PHASE] = P_BURY
    s[CUR] = d


@njit(**HOT)
def _set_digger(s, o, digger, bid):
    s[LANDLORD] = digger
    s[BIDDER] = digger
    s[BID] = bid
    if bid == MAX_BID and o[O_OPENHAND] == 1:
        s[PHASE] = P_OPEN
        s[CUR] = digger
    else:
        _take_kitty(s, o)


@njit(**HOT_INLINE)
def first_leader(s):
    """The seat that leads after burying: ♦3's holder, else ♦4, ♦5, ... ♦A, ♦2."""
    if s[A_LEADER_FIXED] >= 0:
        return s[A_LEADER_FIXED]
    for i in range(NR):
        w = s[DIAM + (NR - 1 + i) % NR]
        if 0 <= w < NP:
            return w
    return s[LANDLORD]  # unreachable with a full suited deal


@njit(**HOT)
def _start_play(s):
    lead = first_leader(s)
    s[A_LEADER] = lead
    start_play_phase(s, lead)


@njit(**HOT)
def _finish(s, o, winner):
    s[PHASE] = P_DONE
    s[WINNER] = winner
    d = s[LANDLORD]
    d_wins = winner == d
    n_left = 0
    for i in range(NP):
        if (i == d) != d_wins:  # the losing side
            ho = hand_off(i)
            for r in range(16):
                n_left += s[ho + r]
    u = stake_unit(s[BID], s[NDOUBLE], s[A_OPEN] == 1, n_left)
    settle_one_vs_rest(s, NP, d, d_wins, u, o[O_REWARD] == 1)


@njit(**HOT)
def _begin(s, o, digger, bid):
    if digger >= 0:
        _set_digger(s, o, digger, bid)
    else:
        s[PHASE] = P_AUCTION
        s[CUR] = s[FIRST]


@njit(cache=True, _nrt=True)  # allocates its shuffle buffers (once a deal)
def reset(s, seed, tab, o):
    """Shuffle the 52 suited cards from ``seed`` and start the auction."""
    _clear(s, seed)
    ids = np.arange(NCARDS).astype(np.int64)
    shuffle(ids, NCARDS, s, RNG)
    loc = np.empty(NCARDS, np.int64)
    for i in range(NCARDS):
        loc[ids[i]] = min(i // HAND, LOC_KITTY)
    place(s, o, loc)
    _begin(s, o, -1, 0)


@njit(**HOT)
def reset_suited(s, seed, o, loc, digger, bid):
    """Start from a suited deal (``loc`` as in :func:`place`); ``digger`` -1 = hold the auction."""
    _clear(s, seed)
    place(s, o, loc)
    _begin(s, o, digger, bid)


@njit(**HOT)
def reset_unsuited(s, seed, o, cards, first_bidder, leader, digger, bid):
    """Start from rank counts: ``cards[i]`` seat i's hand, ``cards[3]`` the kitty; the seats
    the suits would decide are given (``first_bidder`` may be -1 when ``digger`` is given)."""
    _clear(s, seed)
    put_deal(s, NP, cards)
    s[FIRST] = first_bidder if first_bidder >= 0 else digger
    s[A_LEADER_FIXED] = leader
    _begin(s, o, digger, bid)


@njit(**HOT_INLINE)
def _bury_ok(s, k):
    """Whether bury pick ``k`` (0..12 plain rank, 13..25 the diamond of rank k-13) is legal."""
    d = s[LANDLORD]
    ho = hand_off(d)
    if k < NR:
        own_d = 1 if s[DIAM + k] == d else 0
        return s[ho + k] - own_d > 0
    return s[DIAM + k - NR] == d


@njit(**HOT_INLINE)
def legal(s, tab, o, out):
    ph = s[PHASE]
    if ph == P_BURY:
        k = 0
        for j in range(2 * NR):
            if _bury_ok(s, j):
                out[k] = o[O_BURY0] + j
                k += 1
        return k
    if ph == P_OPEN:
        return two_choices(out, o[O_OPEN0])
    return legal_play_or_bid(s, tab, out, o[O_PASS], MAX_BID)


@njit(**HOT)
def is_legal(s, a, tab, o):
    ph = s[PHASE]
    if ph == P_BURY:
        k = a - o[O_BURY0]
        return 0 <= k < 2 * NR and _bury_ok(s, k)
    if ph == P_OPEN:
        return o[O_OPEN0] <= a < o[O_OPEN0] + 2
    return is_legal_play_or_bid(s, tab, a, o[O_PASS], MAX_BID)


@njit(**HOT_INLINE)
def step(s, a, tab, o):
    """Apply legal action ``a`` for the seat to move."""
    seat = s[CUR]
    pass_id = o[O_PASS]
    log_action(s, NP, seat, a)
    ph = s[PHASE]
    if ph == P_AUCTION:
        speak(s, seat, a, pass_id)
        s[A_SPOKEN] += 1
        if s[BID] == MAX_BID or s[A_SPOKEN] >= NP:
            if s[BID] == 0:
                _set_digger(s, o, s[FIRST], 1)
            else:
                _set_digger(s, o, s[BIDDER], s[BID])
        else:
            s[CUR] = (seat + 1) % NP
        return
    if ph == P_OPEN:
        s[A_OPEN] = a - o[O_OPEN0]
        _take_kitty(s, o)
        return
    if ph == P_BURY:
        k = a - o[O_BURY0]
        r = k % NR
        if k >= NR:
            s[DIAM + r] = LOC_BURIED
        s[hand_off(seat) + r] -= 1
        s[BURIED + r] += 1
        s[A_NBURIED] += 1
        if s[A_NBURIED] >= N_BURY:
            _start_play(s)
        return
    if ph == P_PLAY and play_action(s, NP, tab, a, pass_id):
        _finish(s, o, seat)


# -- observation -----------------------------------------------------------------------------------
(F_HAND, F_DIAMONDS, F_KITTY, F_BURIED, F_OPEN_CARDS, F_PLAYED, F_OTHERS, F_SIZES, F_BEAT,
 F_BEAT_TYPE, F_BEAT_SEAT, F_RECENT, F_DIGGER, F_FIRST, F_BID, F_AUCTION, F_OPEN, F_BOMBS,
 F_NBURIED, F_TURN, F_PHASE) = range(21)


def obs_layout(n_ranks: int = NR, depth: int = 4, recent: int = 2 * NP) -> Layout:
    """The observation fields, in order.  Relative seats: 0 = the observer, 1 = next (下家)..."""
    n = NP
    C = n_ranks * depth
    return Layout([
        Field("hand", C, f"own hand ({planes_doc(n_ranks, depth)}; rank 0 = 4 ... 12 = 3)"),
        Field("diamonds", n_ranks, "own diamonds: bit r set when holding the diamond of rank r "
                                   "(zeros in a deal given without suits)"),
        Field("kitty", C, "the 4 kitty cards: digger only, once he has taken them "
                          "(everyone with reveal_kitty)"),
        Field("buried", C, "the 4 buried cards: digger only"),
        Field("open_cards", C, "the open player's 16 dealt cards (open hand, 明牌), to everyone"),
        *table_fields(n, C, recent, HAND + KITTY, "cards not in the observer's hand, not "
                      "played and (for the digger) not buried: other hands, the kitty, for "
                      "farmers the buried cards"),
        Field("digger", n + 1, "one-hot relative seat of the digger; last slot: not decided"),
        Field("first_bidder", n, "one-hot relative seat of the first bidder"),
        *auction_fields(n, MAX_BID, "one-hot bid (0 = none yet)", "its auction action"),
        Field("open", 2, "open-hand decision one-hot: not open, open (zeros before it is made "
                         "or when no one bid 3)"),
        Field("bombs", 1, "bombs played so far, / 16, clipped to 1"),
        Field("n_buried", 1, "cards buried so far / 4"),
        Field("turn", n, "one-hot relative seat to move"),
        Field("phase", len(PHASE_NAMES), "one-hot phase: " + ", ".join(PHASE_NAMES)),
    ])


@njit(**HOT_INLINE)
def encode(s, seat, tab, o, off, out):
    """Write ``seat``'s observation into ``out``: every entry, the values of
    :func:`encode_reference`, one dense ``set_*`` writer of :mod:`cardenvs.core.encode` a field
    (no zero-fill, no allocation)."""
    n = NP
    R = o[O_NRANKS]
    D = o[O_DEPTH]
    C = R * D
    ph = s[PHASE]
    ho = hand_off(seat)
    set_cards(out, off[F_HAND], s, ho, R, D)
    dst = out[off[F_DIAMONDS]:off[F_DIAMONDS] + NR]
    for r in range(NR):
        dst[r] = 1.0 if s[DIAM + r] == seat else 0.0
    d = s[LANDLORD]
    digger = seat == d
    if s[A_TAKEN] == 1 and (digger or o[O_REVEAL] == 1):
        set_cards(out, off[F_KITTY], s, kitty_off(n), R, D)
    else:
        zero(out, off[F_KITTY], off[F_KITTY] + C)
    if digger:
        set_cards(out, off[F_BURIED], s, BURIED, R, D)
    else:
        zero(out, off[F_BURIED], off[F_BURIED] + C)
    if s[A_OPEN] == 1:
        set_cards(out, off[F_OPEN_CARDS], s, DEALT, R, D)
    else:
        zero(out, off[F_OPEN_CARDS], off[F_OPEN_CARDS] + C)
    # unseen cards: 4 of each rank minus the own hand, the own burial and the played cards
    dst = out[off[F_OTHERS]:off[F_OTHERS] + C]
    p0 = played_off(n, 0)
    for r in range(R):
        c = 4 - s[ho + r] if r < NR else 0
        if digger and r < NR:
            c -= s[BURIED + r]
        for q in range(n):
            c -= s[p0 + 16 * q + r]
        set_count(dst, D * r, c, D)
    playing = ph == P_PLAY or ph == P_DONE
    set_table(s, seat, tab, n, R, D, HAND + KITTY, o[O_PASS], ph == P_PLAY,
              s[PLAY_START] if playing else s[NLOG] + 1, o[O_RECENT],
              off[F_PLAYED], off[F_SIZES], off[F_BEAT], off[F_BEAT_TYPE], off[F_BEAT_SEAT],
              off[F_RECENT], out)
    set_seat_or_none(out, off[F_DIGGER], d, seat, n)
    o_f = off[F_FIRST]
    zero(out, o_f, o_f + n)
    out[o_f + rel_seat(s[FIRST], seat, n)] = 1.0
    set_auction(s, seat, n, MAX_BID, off[F_BID], off[F_AUCTION], out)
    o_op = off[F_OPEN]
    zero(out, o_op, o_op + 2)
    if s[A_OPEN] >= 0:
        out[o_op + s[A_OPEN]] = 1.0
    out[off[F_BOMBS]] = min(s[NDOUBLE], 16) / 16.0
    out[off[F_NBURIED]] = s[A_NBURIED] / N_BURY
    o_t = off[F_TURN]
    zero(out, o_t, o_t + n)
    if ph != P_DONE:
        out[o_t + rel_seat(s[CUR], seat, n)] = 1.0
    o_ph = off[F_PHASE]
    zero(out, o_ph, o_ph + len(PHASE_NAMES))
    out[o_ph + ph] = 1.0


@njit(cache=True)
def encode_reference(s, seat, tab, o, off, out):
    """The first encoder, kept as the reference of :func:`encode` (the differential tests):
    zero the whole vector, then set the ones of each field."""
    n = NP
    R = o[O_NRANKS]
    D = o[O_DEPTH]
    out[:] = 0.0
    ho = hand_off(seat)
    put_cards(out, off[F_HAND], s[ho:ho + 16], R, D)
    for r in range(NR):
        if s[DIAM + r] == seat:
            out[off[F_DIAMONDS] + r] = 1.0
    d = s[LANDLORD]
    taken = s[A_TAKEN] == 1
    if taken and (seat == d or o[O_REVEAL] == 1):
        ko = kitty_off(n)
        put_cards(out, off[F_KITTY], s[ko:ko + 16], R, D)
    if seat == d:
        put_cards(out, off[F_BURIED], s[BURIED:BURIED + 16], R, D)
    if s[A_OPEN] == 1:
        put_cards(out, off[F_OPEN_CARDS], s[DEALT:DEALT + 16], R, D)
    others = np.zeros(16, np.int64)
    for r in range(NR):
        others[r] = 4 - s[ho + r]
        if seat == d:
            others[r] -= s[BURIED + r]
    playing = s[PHASE] == P_PLAY or s[PHASE] == P_DONE
    put_table(s, seat, tab, n, R, D, HAND + KITTY, o[O_PASS], s[PHASE] == P_PLAY,
              s[PLAY_START] if playing else s[NLOG] + 1, o[O_RECENT],
              off[F_PLAYED], off[F_SIZES], off[F_BEAT], off[F_BEAT_TYPE], off[F_BEAT_SEAT],
              off[F_RECENT], others, out)
    put_cards(out, off[F_OTHERS], others, R, D)
    put_seat_or_none(out, off[F_DIGGER], d, seat, n)
    out[off[F_FIRST] + (s[FIRST] - seat) % n] = 1.0
    put_auction(s, seat, n, MAX_BID, off[F_BID], off[F_AUCTION], out)
    if s[A_OPEN] >= 0:
        out[off[F_OPEN] + s[A_OPEN]] = 1.0
    out[off[F_BOMBS]] = min(s[NDOUBLE], 16) / 16.0
    out[off[F_NBURIED]] = s[A_NBURIED] / N_BURY
    if s[PHASE] != P_DONE:
        out[off[F_TURN] + (s[CUR] - seat) % n] = 1.0
    out[off[F_PHASE] + s[PHASE]] = 1.0


# -- the Python game object ------------------------------------------------------------------------

FIRST_BIDDER_RULES = {"S3": (0, NR - 1), "lowest_heart": (1, 0), "lowest_club": (2, 0)}


class Wakeng(Game):
    """挖坑 Wakeng with one option set.

    Action blocks: ``play`` (one row per canonical play), ``pass`` (auction and play),
    ``bid`` (bid 1, 2, 3), ``bury`` (``bury 4`` ... ``bury 3``, then ``bury D4`` ...
    ``bury D3``), ``open`` (``not open``, ``open``; used only with ``open_hand=True``).
    """

    #: the heuristic rollout policy's bidding (:mod:`cardenvs.core.policy`): quantiles of
    #: dealt-hand strength for bids 1, 2, 3 (above 1: never).  As the ``rules`` agent found,
    #: the score is proportional to the bid and the auction has one round, so bids 1 and 2
    #: never pay and a 3 pays with nearly every hand: dig with the strongest 95%
    policy_bid_quantiles = (2.0, 2.0, 0.05)

    k_reset = staticmethod(reset)
    k_legal = staticmethod(legal)
    k_is_legal = staticmethod(is_legal)
    k_step = staticmethod(step)
    k_encode = staticmethod(encode)

    deal_keys = ("hands", "kitty", "first_bidder", "leader", "digger", "bid")
    OPTIONS = dict(bombs=True, min_straight=5, min_pair_chain=3, min_airplane=2,
                   first_bidder="S3", open_hand=False, reveal_kitty=False, reward="score")

    def __init__(self, *, bombs: bool = True, min_straight: int = 5, min_pair_chain: int = 3,
                 min_airplane: int = 2, first_bidder: str = "S3", open_hand: bool = False,
                 reveal_kitty: bool = False, reward: str = "score"):
        check_bool("bombs", bombs)
        check_bool("open_hand", open_hand)
        check_bool("reveal_kitty", reveal_kitty)
        check_int("min_straight", min_straight, 3, 11)
        check_int("min_pair_chain", min_pair_chain, 2, 8)
        check_int("min_airplane", min_airplane, 2, 5)
        check_choice("first_bidder", first_bidder, tuple(FIRST_BIDDER_RULES))
        check_choice("reward", reward, ("score", "win_loss"))
        self.options = dict(bombs=bool(bombs), min_straight=int(min_straight),
                            min_pair_chain=int(min_pair_chain), min_airplane=int(min_airplane),
                            first_bidder=first_bidder, open_hand=bool(open_hand),
                            reveal_kitty=bool(reveal_kitty), reward=reward)
        self.info = GameInfo(
            name="wakeng", title="Wakeng", n_players=NP, deck_size=NCARDS, zero_sum=True,
            teams="1 vs 2", rules_page="docs/rules/wakeng.md", options=dict(self.OPTIONS),
        )
        self.table = play_table(bool(bombs), int(min_straight), int(min_pair_chain),
                                int(min_airplane))
        self.deck = self.table.deck
        T = len(self.table)
        self.blocks = {
            "play": (0, T), "pass": (T, T + 1), "bid": (T + 1, T + 1 + MAX_BID),
            "bury": (T + 1 + MAX_BID, T + 1 + MAX_BID + 2 * NR),
            "open": (T + 1 + MAX_BID + 2 * NR, T + 3 + MAX_BID + 2 * NR),
        }
        depth = 4
        self.layout = obs_layout(NR, depth, 2 * NP)
        o = np.zeros(N_OPTS, np.int64)
        o[O_PASS] = T
        o[O_BURY0] = self.blocks["bury"][0]
        o[O_OPEN0] = self.blocks["open"][0]
        o[O_OPENHAND] = int(open_hand)
        o[O_REVEAL] = int(reveal_kitty)
        o[O_REWARD] = 1 if reward == "win_loss" else 0
        o[O_FB_SUIT], o[O_FB_START] = FIRST_BIDDER_RULES[first_bidder]
        o[O_RECENT], o[O_NRANKS], o[O_DEPTH] = 2 * NP, NR, depth
        super().__init__(o)

    base_state_size = STATE_SIZE

    # -- what a valid state is (Game.check_state) ------------------------------------------------
    def state_fields(self) -> list:
        seat = (0, NP - 1)
        copies = [4] * NR + [0] * (16 - NR)
        played = (P_PLAY, P_DONE)
        return [
            StateField("PHASE", PHASE, 0, len(PHASE_NAMES) - 1),
            StateField("FIRST", FIRST, *seat),
            StateField("BID", BID, 0, MAX_BID),
            StateField("NREDEAL", NREDEAL, 0, 0),
            StateField("BIDS", BIDS0, -1, MAX_BID, NP),
            StateField("BIDS (no seat)", BIDS0 + NP, -1, -1, 8 - NP),
            StateField("A_SPOKEN", A_SPOKEN, 0, NP),
            StateField("A_NBURIED", A_NBURIED, 0, N_BURY),
            StateField("A_OPEN", A_OPEN, -1, 1),
            StateField("A_TAKEN", A_TAKEN, 0, 1),
            StateField("A_LEADER_FIXED", A_LEADER_FIXED, -1, NP - 1),
            StateField("A_LEADER", A_LEADER, -1, NP - 1),
            StateField("unused", A_LEADER + 1, 0, 0, HDR - A_LEADER - 1),
            StateField("DIAM", DIAM, -1, LOC_BURIED, NR),
            StateField("DIAM (no rank)", DIAM + NR, 0, 0, 16 - NR),
            *(StateField(f"DEALT [{ORDER[r] if r < NR else '-'}]", DEALT + r, 0, copies[r])
              for r in range(16)),
            *(StateField(f"BURIED [{ORDER[r] if r < NR else '-'}]", BURIED + r, 0, copies[r])
              for r in range(16)),
            # after the auction there is a digger; after the open decision he holds the kitty
            StateField("LANDLORD", LANDLORD, *seat, when=(PHASE, P_PLAY, P_BURY)),
            StateField("LANDLORD", LANDLORD, -1, -1, when=(PHASE, P_AUCTION, P_AUCTION)),
            StateField("BID", BID, 1, MAX_BID, when=(PHASE, P_PLAY, P_BURY)),
            StateField("A_TAKEN", A_TAKEN, 1, 1, when=(PHASE, *played)),
            StateField("A_TAKEN", A_TAKEN, 1, 1, when=(PHASE, P_BURY, P_BURY)),
            StateField("A_TAKEN", A_TAKEN, 0, 0, when=(PHASE, P_AUCTION, P_AUCTION)),
            StateField("A_TAKEN", A_TAKEN, 0, 0, when=(PHASE, P_OPEN, P_OPEN)),
            StateField("A_NBURIED", A_NBURIED, N_BURY, N_BURY, when=(PHASE, *played)),
            StateField("A_LEADER", A_LEADER, *seat, when=(PHASE, *played)),
            # counters of a phase that is still on are below the count that ends it
            StateField("A_SPOKEN", A_SPOKEN, 0, NP - 1, when=(PHASE, P_AUCTION, P_AUCTION)),
            StateField("A_NBURIED", A_NBURIED, 0, N_BURY - 1, when=(PHASE, P_BURY, P_BURY)),
        ]

    def state_order(self) -> list:
        # the digger makes the open decision and buries
        when = (PHASE, P_OPEN, P_BURY)
        return [(CUR, LANDLORD, when), (LANDLORD, CUR, when)]

    def card_regions(self) -> list:
        # the kitty joins the digger's hand (and stays as a record); buried cards leave it
        return ([CardRegion(f"hand of seat {i}", hand_off(i)) for i in range(NP)]
                + [CardRegion("kitty", kitty_off(NP), when=(A_TAKEN, 0, 0)),
                   CardRegion("buried", BURIED)]
                + [CardRegion(f"played by seat {i}", played_off(NP, i)) for i in range(NP)])

    # -- action strings ------------------------------------------------------------------------
    def _block_string(self, block: str, i: int) -> str:
        if block == "pass":
            return "pass"
        if block == "bid":
            return f"bid {i + 1}"
        if block == "bury":
            return f"bury D{ORDER[i - NR]}" if i >= NR else f"bury {ORDER[i]}"
        return "open" if i == 1 else "not open"

    def _parse_block_string(self, text: str):
        t, low = self._words(text)
        if low == "pass":
            return self.pass_id
        if low == "open":
            return self.blocks["open"][0] + 1
        if low == "not open":
            return self.blocks["open"][0]
        if low.startswith("bid"):
            return self._parse_bid(text, MAX_BID)
        if low.startswith("bury"):
            card = t[4:].strip().upper()
            diamond = len(card) == 2 and card[0] == "D"
            ch = card[1:] if diamond else card
            if len(ch) != 1 or ch not in ORDER:
                raise ValueError(f"bad pick {text!r}: write 'bury 7' (a 7 that is not the "
                                 f"diamond) or 'bury D7' (the 7 of diamonds)")
            return self.blocks["bury"][0] + ORDER.index(ch) + (NR if diamond else 0)
        return None

    # -- custom deals ----------------------------------------------------------------------------
    def custom_deal(self, state: np.ndarray, options: dict, seed: int) -> None:
        """Set up ``state`` from a given deal (rules README, convention 8).

        ``{"hands": [h0, h1, h2], "kitty": k}`` with suited cards (``"S3 H3 D4 ..."``): the
        suits decide the first bidder and the first leader.  With unsuited hands
        (``"33344..."``) give ``first_bidder`` and ``leader`` (the seat that leads after the
        burying).  ``digger`` and ``bid`` together skip the auction (then ``first_bidder`` is
        not needed).  The kitty defaults to the rest of the deck.
        """
        from ..core.deals import (
            all_suited, check_deal_keys, deal_rows, hands_list, parse_deal, solo_and_bid,
        )

        check_deal_keys(options, self.deal_keys)
        hands_in = hands_list(options, NP)
        digger, bid = solo_and_bid(options, "digger", NP, MAX_BID)
        texts = hands_in + ([options["kitty"]] if "kitty" in options else [])
        d, b = (-1, 0) if digger is None else (int(digger), int(bid))
        if all_suited(texts, "every hand (and the kitty)", ("first_bidder", "leader"), options):
            loc = self._suited_locations(options)
            reset_suited(state, np.int64(seed), self.opts, loc, d, b)
            return
        hands, kitty = parse_deal(self.deck, options, NP, HAND, KITTY)
        fb, lead = options.get("first_bidder"), options.get("leader")
        if fb is None and digger is None:
            raise ValueError("a deal without suits needs 'first_bidder' (the seat the ♠3 rule "
                             "would name), or 'digger' and 'bid' to skip the auction")
        if lead is None:
            raise ValueError("a deal without suits needs 'leader' (the seat the ♦3 rule would "
                             "name after the burying)")
        if fb is not None:
            check_int("first_bidder", fb, 0, NP - 1)
        check_int("leader", lead, 0, NP - 1)
        reset_unsuited(state, np.int64(seed), self.opts, deal_rows(hands, kitty),
                       -1 if fb is None else int(fb), int(lead), d, b)

    def _suited_locations(self, options: dict) -> np.ndarray:
        loc = np.full(NCARDS, -1, np.int64)
        where = [f"hand of seat {i}" for i in range(NP)]
        parts = [(where[i], options["hands"][i], i, HAND) for i in range(NP)]
        if "kitty" in options:
            parts.append(("kitty", options["kitty"], LOC_KITTY, KITTY))
        for what, text, w, size in parts:
            cards = self.deck.parse_suited(text, what=what)
            if len(cards) != size:
                raise ValueError(f"{what} has {len(cards)} cards; this game's {what.split()[0]} "
                                 f"holds {size}")
            for suit, r in cards:
                c = r * 4 + SUITS.index(suit)
                if loc[c] >= 0:
                    other = "kitty" if loc[c] == LOC_KITTY else f"hand of seat {loc[c]}"
                    raise ValueError(f"impossible deal: {suit}{ORDER[r]} is in the {other} "
                                     f"and in the {what}")
                loc[c] = w
        loc[loc < 0] = LOC_KITTY  # the rest of the deck (only when no kitty was given)
        return loc

    # -- what is hidden from whom (read by cardenvs.core.infostate) ------------------------------
    def hidden(self, state: np.ndarray, seat: int) -> Hidden:
        """What ``seat`` cannot see.  Before the digger takes the kitty: the other hands and
        the kitty.  After: the digger sees the kitty, his burial and his dealt cards; a farmer
        sees the kitty only with ``reveal_kitty`` and the digger's 16 dealt cards only when he
        plays open; the digger's hand and his burial are one group (the revealed kitty and the
        open cards, less what the digger played, are known to be in it).  Records: the kitty
        (unrevealed: a uniform 4-card subset of the digger's cards) and the dealt cards (the
        rest).  Markers: where each diamond the seat does not hold is; once the play began,
        the ♦ first-lead rule must name the seat that led; in a suited deal the first-bidder
        suit rule (♠3 ...) must name the first bidder."""
        from ..core.infostate import (
            FirstMarker, Hidden, Linear, Marker, Pile, Subset, SuitFirst, hand_piles,
        )

        d = int(state[LANDLORD])
        ko = kitty_off(NP)
        taken = int(state[A_TAKEN]) == 1
        is_open = int(state[A_OPEN]) == 1
        h = Hidden(piles=hand_piles(state, NP, seat))
        if taken and is_open:
            h.visible["open_hand"] = DEALT
        others = [q for q in range(NP) if q != seat]
        places: list[tuple[int, tuple[int, ...]]]  # (seat or location, state offsets)
        if not taken:
            h.piles.append(Pile("kitty", ko, KITTY))
            places = [(q, (hand_off(q),)) for q in others] + [(LOC_KITTY, (ko,))]
        elif seat == d:
            h.visible.update(kitty=ko, buried=BURIED, dealt=DEALT)
            places = [(q, (hand_off(q), played_off(NP, q))) for q in others]
        else:
            reveal = self.opts[O_REVEAL] == 1
            if reveal:
                h.visible["kitty"] = ko
            hd, pd = hand_off(d), played_off(NP, d)
            known = np.zeros(16, np.int64)
            if reveal:
                known += state[ko:ko + 16]
            if is_open:
                known += state[DEALT:DEALT + 16]
            known = np.maximum(known - state[pd:pd + 16], 0)
            for p in h.piles:
                if p.seat == d:
                    p.group, p.known = "digger", known
            h.piles.append(Pile("buried", BURIED, int(state[BURIED:BURIED + 16].sum()),
                                group="digger"))
            held = [(1, hd), (1, BURIED), (1, pd)]
            if not reveal:
                if is_open:
                    h.records.append(Linear("kitty", ko, held + [(-1, DEALT)]))
                else:
                    h.records.append(Subset("kitty", ko, KITTY, (hd, BURIED, pd)))
            if not is_open:
                h.records.append(Linear("dealt", DEALT, held + [(-1, ko)]))
            places = [(q, (hand_off(q), played_off(NP, q))) for q in others] + \
                [(LOC_BURIED, (BURIED,))]
        for r in range(NR):
            w = int(state[DIAM + r])
            if w < 0 or w == seat or (seat == d and w == LOC_BURIED):
                continue  # no suits in the deal, or the seat knows where this diamond is
            h.markers.append(Marker(DIAM + r, r, places))
        if h.markers and int(state[A_LEADER]) >= 0 and int(state[A_LEADER_FIXED]) < 0:
            h.checks.append(FirstMarker(DIAM, [NR - 1] + list(range(NR - 1)), NP,
                                        int(state[A_LEADER])))
        if int(state[DIAM + NR - 1]) >= 0:  # a suited deal: the first bidder's suit rule
            # deal-time places: each seat's dealt cards (the digger's: DEALT) and the kitty
            places = []
            for q in range(NP):
                offs = (DEALT,) if (taken and q == d) else (hand_off(q), played_off(NP, q))
                places.append((q, offs))
            places.append((-1, (ko,)))
            mk = {q: [q] for q in range(NP)}
            mk[LOC_KITTY] = [NP]
            if taken:  # the kitty's diamonds went to the digger; buried ones came from both
                mk[d] = [d, NP]
                mk[LOC_BURIED] = [d, NP]
            start = int(self.opts[O_FB_START])  # the rule's suit is never the diamond
            h.checks.append(SuitFirst(DIAM, [(start + i) % NR for i in range(NR)], places, mk,
                                      int(state[FIRST])))
        return h

    # -- text ------------------------------------------------------------------------------------
    def table_view(self, state: np.ndarray) -> TableView:
        """The table as :class:`cardenvs.core.render.TableView` (read by the text and the
        image renders): bombs, the open hand and the first bidder in the header; the buried
        cards, the first leader and the diamonds' holders after the kitty."""
        from ..core.render import TableLine, climbing_view

        view = climbing_view(self, state, role_name="digger")
        ph = int(state[PHASE])
        open_ = {-1: "-", 0: "no", 1: "yes"}[int(state[A_OPEN])]
        view.facts = [f"phase: {PHASE_NAMES[ph]}", f"bid: {int(state[BID])}",
                      f"bombs: {int(state[NDOUBLE])}", f"open: {open_}",
                      f"first bidder: player_{int(state[FIRST])}"]
        extra = []
        if int(state[A_TAKEN]):
            buried = self.deck.format(state[BURIED:BURIED + 16])
            extra.append(TableLine("buried", buried, cards=buried))
        if int(state[A_LEADER]) >= 0:
            extra.append(TableLine("first lead", f"player_{int(state[A_LEADER])}"))
        diam = "".join(ORDER[r] for r in range(NR) if state[DIAM + r] >= 0)
        if diam:
            own = " ".join(f"p{w}:" + "".join(ORDER[r] for r in range(NR) if state[DIAM + r] == w)
                           for w in range(NP))
            extra.append(TableLine("diamonds", own))
        view.lines = view.lines[:1] + extra + view.lines[1:]  # after the kitty
        return view

    def render(self, state: np.ndarray) -> str:
        """The table as text (``render_mode="ansi"``)."""
        from ..core.render import text_of

        return text_of(self.table_view(state))

    # -- helpers for tests and people ------------------------------------------------------------
    def buried(self, state: np.ndarray) -> str:
        return self.deck.format(state[BURIED:BURIED + 16])

    def first_leader(self, state: np.ndarray) -> int:
        """The seat that leads (or would lead) after the burying."""
        return int(first_leader(state))
