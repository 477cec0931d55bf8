"""The flat game state shared by every game, and the play-phase mechanics of climbing games.

A game's whole state is one ``int64`` vector (so cloning is ``state.copy()``, a batch of games
is a 2-D array, and numba kernels need no objects).  Layout::

    [0, HDR)                       header fields below
    [HANDS, HANDS + 16*np)         cards in each seat's hand (counts per rank index)
    [KITTY, KITTY + 16)            kitty / bottom cards
    [PLAYED, PLAYED + 16*np)       cards each seat has played
    [LOG, LOG + MAXLOG)            a ring buffer of the last MAXLOG actions, ``action * 8 + seat``
                                   (action number i is at ``LOG + i % MAXLOG``; NLOG counts all)
    [.., S - 1)                    a game's own region, if any (``Game.base_state_size``)
    S - 1                          the fingerprint of the game and option set that made the state
                                   (written by ``Game.new_state``, kept by every reset; checked by
                                   ``Game.check_state``, never read by a kernel)

Action ids: ``[0, T)`` are rows of the game's play table, ``T`` is pass; games put their
phase-specific blocks (bids, picks, declarations) after it.
"""

from __future__ import annotations

from numba import njit

from .kernels import HOT_INLINE, fits, gen_rows, planes

# header fields
PHASE, CUR, FIRST, LANDLORD, BID, BIDDER, NPASS, LAST_ROW, LAST_SEAT = 0, 1, 2, 3, 4, 5, 6, 7, 8
NDOUBLE, WINNER, NREDEAL, NSTEPS, NLOG, RNG = 9, 10, 11, 12, 13, 14
PLAYS0 = 15  # plays made by each seat (8 slots)
BIDS0 = 23  # each seat's last auction action: -1 none, 0 pass, k = bid k (8 slots)
REW0 = 31  # rewards paid by the last step, per seat (8 slots; zero when it paid nothing)
AUX0 = 39  # game-specific scratch (9 slots)
HDR = 48
MAXLOG = 512
MAXSEATS = 8

# phases
P_AUCTION, P_PLAY, P_DONE = 0, 1, 2


def state_size(n_players: int) -> int:
    """The length of the shared state layout of an ``n_players`` game (the header, every
    seat's hand and played cards, the kitty and the action log), without the fingerprint
    entry that :class:`cardenvs.core.game.Game` adds."""
    return HDR + 16 * (2 * n_players + 1) + MAXLOG


@njit(inline="always", **HOT_INLINE)
def hand_off(seat):
    return HDR + 16 * seat


@njit(inline="always", **HOT_INLINE)
def kitty_off(n):
    return HDR + 16 * n


@njit(inline="always", **HOT_INLINE)
def played_off(n, seat):
    return HDR + 16 * n + 16 + 16 * seat


@njit(inline="always", **HOT_INLINE)
def log_off(n):
    return HDR + 16 * (2 * n + 1)


@njit(**HOT_INLINE)
def log_action(s, n, seat, action):
    k = s[NLOG]
    s[log_off(n) + k % MAXLOG] = action * 8 + seat
    s[NLOG] = k + 1
    s[NSTEPS] += 1


@njit(inline="always", **HOT_INLINE)
def log_entry(s, n, i):
    """Entry ``action * 8 + seat`` of action number ``i`` (one of the last MAXLOG actions)."""
    return s[log_off(n) + i % MAXLOG]


@njit(inline="always", **HOT_INLINE)
def next_seat(seat, n):
    """``(seat + 1) % n`` for a seat in ``[0, n)``, without a division."""
    t = seat + 1
    return 0 if t >= n else t


@njit(**HOT_INLINE)
def hand_size(s, seat):
    o = hand_off(seat)
    t = 0
    for r in range(16):
        t += s[o + r]
    return t


@njit(**HOT_INLINE)
def next_active(s, at, seat, n):
    """The first seat after ``seat`` in turn order (``seat`` itself excluded) that is still in
    the hand, in a game that keeps a per-seat entry ``s[at + q]`` which is 0 while seat ``q``
    is (a status or a place); -1 if no other seat is."""
    for j in range(1, n):
        q = (seat + j) % n
        if s[at + q] == 0:
            return q
    return -1


@njit(**HOT_INLINE)
def n_active(s, at, n):
    """How many of the ``n`` seats are still in the hand (``s[at + q] == 0``, as in
    :func:`next_active`)."""
    k = 0
    for q in range(n):
        if s[at + q] == 0:
            k += 1
    return k


@njit(**HOT_INLINE)
def legal_play_rows(s, tab, out, n_pass_id):
    """Legal actions of the seat to move in the play phase (rows, then pass if following)."""
    seat = s[CUR]
    o = hand_off(seat)
    lo, hi = planes(s[o:o + 16])
    prev = s[LAST_ROW]
    n = gen_rows(lo, hi, prev, tab, out, 0)
    if prev < 0:
        return n
    out[n] = n_pass_id
    return n + 1


@njit(**HOT_INLINE)
def is_legal_play(s, tab, action, pass_id):
    """Whether ``action`` is legal in the play phase (without generating every legal play)."""
    seat = s[CUR]
    prev = s[LAST_ROW]
    if action == pass_id:
        return prev >= 0
    if action < 0 or action >= pass_id:
        return False
    o = hand_off(seat)
    lo, hi = planes(s[o:o + 16])
    return fits(lo, hi, tab.lo[action], tab.hi[action]) and follows(tab, prev, action)


@njit(**HOT_INLINE)
def apply_play(s, n, tab, row):
    """Play row ``row`` for the seat to move; returns True when that seat's hand is empty."""
    seat = s[CUR]
    o = hand_off(seat)
    p = played_off(n, seat)
    left = 0
    for r in range(16):
        c = tab.counts[row, r]
        s[o + r] -= c
        s[p + r] += c
        left += s[o + r]
    s[NDOUBLE] += tab.doubles[row]
    s[LAST_ROW] = row
    s[LAST_SEAT] = seat
    s[NPASS] = 0
    s[PLAYS0 + seat] += 1
    return left == 0


@njit(**HOT_INLINE)
def apply_pass(s, n):
    """A pass in the play phase; ends the trick when every other player has passed.

    Returns the seat to move next (all seats stay active until the deal ends in the
    Dou Dizhu family: the winner of the trick leads).
    """
    s[NPASS] += 1
    if s[NPASS] >= n - 1:
        s[LAST_ROW] = -1
        s[NPASS] = 0
        return s[LAST_SEAT]
    return next_seat(s[CUR], n)


@njit(**HOT_INLINE)
def legal_bids(s, pass_id, max_bid, out):
    """Auction actions: pass (``pass_id``) and every bid above the current one, up to max_bid.

    Bid ``b`` is action ``pass_id + b``.  Returns the count written to ``out``.
    """
    out[0] = pass_id
    k = 1
    for b in range(s[BID] + 1, max_bid + 1):
        out[k] = pass_id + b
        k += 1
    return k


@njit(inline="always", **HOT_INLINE)
def is_legal_bid(s, a, pass_id, max_bid):
    return a == pass_id or (pass_id + s[BID] < a <= pass_id + max_bid)


# -- phases and settlement shared by the one-against-the-rest games ----------------------------

PLAY_START = AUX0  # log index (action number) where the play phase began


@njit(**HOT_INLINE)
def clear_state(s, seed):
    """Zero the whole state for a new deal (all but its last entry, the fingerprint), store the
    deal's generator seed, no winner yet.

    Every game's reset starts here, then sets its own fields that start at -1.
    """
    for i in range(s.shape[0] - 1):
        s[i] = 0
    s[RNG] = seed
    s[WINNER] = -1


@njit(**HOT_INLINE)
def start_play_phase(s, leader):
    """Enter the play phase with ``leader`` on a free lead; remember where it began."""
    s[PHASE] = P_PLAY
    s[CUR] = leader
    s[LAST_ROW] = -1
    s[LAST_SEAT] = -1
    s[NPASS] = 0
    s[PLAY_START] = s[NLOG]


@njit(**HOT_INLINE)
def play_action(s, n, tab, a, pass_id):
    """Apply a legal play-phase action (a play row or pass) for the seat to move.

    Returns True when the mover went out (the caller settles the deal); otherwise the turn
    has passed to the next seat (or, after a trick, to its winner).
    """
    if a == pass_id:
        s[CUR] = apply_pass(s, n)
        return False
    if apply_play(s, n, tab, a):
        return True
    s[CUR] = next_seat(s[CUR], n)
    return False


@njit(**HOT_INLINE)
def settle_one_vs_rest(s, n, solo, solo_wins, unit, win_loss):
    """Terminal rewards of a one-against-the-rest deal: the solo seat (landlord, digger)
    gets ``+-(n-1) * unit`` and every other seat ``-+unit``; with ``win_loss`` +-1 each."""
    sign = 1 if solo_wins else -1
    for i in range(n):
        if win_loss:
            s[REW0 + i] = sign if i == solo else -sign
        else:
            s[REW0 + i] = sign * unit * (n - 1) if i == solo else -sign * unit


# -- bookkeeping every game repeats (deal, auction, trick, legal-move dispatch) ------------------


@njit(**HOT_INLINE)
def deal_in_order(s, n, cards, hand, m):
    """Deal the shuffled rank indices ``cards[:m]``: seat ``i`` gets ``cards[i*hand:(i+1)*hand]``,
    the kitty (bottom) the rest.  Adds to the counts already in the state."""
    for seat in range(n):
        off = hand_off(seat)
        for i in range(seat * hand, (seat + 1) * hand):
            s[off + cards[i]] += 1
    ko = kitty_off(n)
    for i in range(n * hand, m):
        s[ko + cards[i]] += 1


@njit(**HOT_INLINE)
def put_deal(s, n, cards):
    """Write a given deal: ``cards[i]`` (16 counts) is seat ``i``'s hand, ``cards[n]`` the kitty."""
    for i in range(n):
        off = hand_off(i)
        for r in range(16):
            s[off + r] = cards[i, r]
    ko = kitty_off(n)
    for r in range(16):
        s[ko + r] = cards[n, r]


@njit(**HOT_INLINE)
def no_trick(s):
    """No play on the table and no leader yet (after :func:`clear_state`): the trick fields
    and ``FIRST`` start at -1."""
    s[LAST_ROW] = -1
    s[LAST_SEAT] = -1
    s[FIRST] = -1


@njit(**HOT_INLINE)
def open_auction(s):
    """No bid, no bidder, no landlord, no play to beat, every seat's auction action "none"."""
    s[BID] = 0
    s[BIDDER] = -1
    s[LANDLORD] = -1
    s[NPASS] = 0
    s[LAST_ROW] = -1
    s[LAST_SEAT] = -1
    for i in range(MAXSEATS):
        s[BIDS0 + i] = -1


@njit(**HOT_INLINE)
def speak(s, seat, a, pass_id):
    """Record ``seat``'s auction action ``a`` (pass, or bid ``a - pass_id`` above the current
    one): its ``BIDS0`` slot, and for a bid the bid and the bidder.  Returns the bid, 0 for a pass."""
    if a == pass_id:
        s[BIDS0 + seat] = 0
        return 0
    b = a - pass_id
    s[BID] = b
    s[BIDDER] = seat
    s[BIDS0 + seat] = b
    return b


@njit(**HOT_INLINE)
def follows(tab, prev, row):
    """Whether play row ``row`` may be played on row ``prev`` (-1: a free lead, any row): a
    higher play of the same shape class, or a stronger bomb."""
    if prev < 0:
        return True
    g = tab.group[row]
    if tab.fnext[prev] <= g < tab.fend[prev]:
        return True
    return tab.bnext[prev] <= g < tab.g_bomb_end[0]


@njit(**HOT_INLINE)
def legal_play_or_bid(s, tab, out, pass_id, max_bid):
    """Legal actions in the shared phases: the play phase (:func:`legal_play_rows`) and the
    bidding auction (:func:`legal_bids`); 0 in any other phase (the game's own)."""
    ph = s[PHASE]
    if ph == P_PLAY:
        return legal_play_rows(s, tab, out, pass_id)
    if ph == P_AUCTION:
        return legal_bids(s, pass_id, max_bid, out)
    return 0


@njit(**HOT_INLINE)
def is_legal_play_or_bid(s, tab, a, pass_id, max_bid):
    """:func:`legal_play_or_bid` as a test of one action; False in any other phase."""
    ph = s[PHASE]
    if ph == P_PLAY:
        return is_legal_play(s, tab, a, pass_id)
    if ph == P_AUCTION:
        return is_legal_bid(s, a, pass_id, max_bid)
    return False


@njit(**HOT_INLINE)
def two_choices(out, first):
    """Legal actions of a yes/no decision: ids ``first`` and ``first + 1``.  Returns 2."""
    out[0] = first
    out[1] = first + 1
    return 2


@njit(**HOT_INLINE)
def clear_state_unset(s, seed, unset):
    """:func:`clear_state`, then every slot in the tuple ``unset`` starts at -1 (a game's
    "none yet" fields: no play to beat, no leader, no landlord...)."""
    clear_state(s, seed)
    for i in unset:
        s[i] = -1
