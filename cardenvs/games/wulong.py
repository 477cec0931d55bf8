"""兰溪乌龙 Lanxi Wulong: 4 players, two decks, wild jokers, 报牌 declarations.

Rules page: ``docs/rules/wulong.md``.  Every player for himself: the first player out
(头家) wins, one player pays.  The combination set is the shared engine's
(:class:`cardenvs.core.combos.ComboRules`) with the wild-joker extensions of
:mod:`cardenvs.core.wild`: rank order ``3 4 5 6 7 8 9 T J Q K A 2 B R`` (rank index 0 = ``3``,
12 = ``2``, 13 = ``B`` 小王, 14 = ``R`` 大王), 108 cards, 25 to each seat, 8 never used.

**Combinations** (one play-table row per *effective* play; a joker standing in is counted as
the rank it stands for): single, pair (``BB`` and ``RR`` are pairs above ``22``; ``BR`` is
not), trio, trio + pair (the pair may be ``BB`` / ``RR``), straight (>= 5 within 3..A), pair
chain (>= 3 pairs within 3..A), trio chain (>= 2 trios within 3..A, at most 8 = 24 cards),
trio chain + as many pairs of distinct other ranks (``BB`` and ``RR`` may both be carried, up
to 5 trios = 25 cards), bombs of 4..12 cards of one natural rank (size first, then rank),
``BBRR`` above every bomb.  3s only inside chains (never a single, pair, trio, bomb or
kicker, natural or wild); 2 and jokers as themselves never in chains; no trio + single.

**Wild jokers.**  A joker played with at least one natural card may stand for any natural
rank the combination needs (a 3 only inside a chain): ``R[2]222`` is the bomb ``2222``.  The
play table lists effective plays only; which physical cards make a row (a *realisation*) is
decided in a follow-up only when there is a real choice:

* a realisation is: how many jokers stand in for each natural rank of the row (``k_r``: the
  row's missing natural cards must be, and further cards may voluntarily be, jokers), and how
  many of those jokers are small (``b``) and big (``q``); jokers the row holds as themselves
  (``444+RR``, ``BBRR``) are always those jokers;
* which joker stands for which rank is written canonically: the jokers standing in are sorted
  by the rank they stand for, small jokers first, so ``B`` takes the lowest stood-for ranks
  and ``R`` the highest (``B[5]`` ``R[7]``, never ``R[5]`` ``B[7]``).  Which joker labels
  which cell never changes the hand that is left nor what the play beats, so the two writings
  are one realisation;
* after choosing a row with several realisations the same seat picks, one action at a time,
  ``B[r]`` / ``R[r]`` ("a small / big joker stands for rank r") in that canonical order and
  then ``done``; only picks that lead to a realisation are legal, and whenever exactly one
  option remains it is applied without a decision (a row with one realisation is played at
  once).  Holding ``55B`` and choosing the pair ``55`` offers ``done`` (two natural 5s) or
  ``B[5]`` (a natural 5 and the small joker); holding ``222R`` and choosing the bomb ``2222``
  plays ``222R[2]`` at once.

**报牌 (declaring).**  At the start of his own turn (not in the middle of picking jokers) a
player holding 10 or fewer cards who has not declared may declare while nobody is out yet
(action ``declare``; he then acts again).  His hand becomes public.  Every play he makes must
then contain his top card: at least one card of the highest rank he holds (jokers by their own
rank, ``R`` > ``B`` > 2 > A > ..., whatever ``joker_order``), as itself or as a wild; with
``declare_must_include="seed"`` all his cards of that rank when he holds four or more of it
(``"one"``: one card always suffices; ``"all"``: every copy always).  A row is legal for him
when at least one realisation satisfies this; the follow-up then offers only such
realisations (this can force a joker into a play, e.g. the top ``R`` as a wild in a straight).

**3s and failing.**  A player whose hand holds only 3s (after one of his plays) has failed: he
is no longer active.  Turns go to the next active seat; a trick ends when every other active
player has passed since the last play; its last player leads again if still active, else the
next active seat after him.  A player alone among the active players leads again after each
of his plays.  When three players have failed before anyone is out, the fourth plays on alone
until he goes out (头家) or fails too (every player failed: the deal is void, reward 0).

**First lead.**  A seeded random dealer; going round from the seat after him, the first seat
holding ``S3`` leads; if neither ♠3 was dealt (2 copies), ♣3, ♥3, ♦3, ♠4, ♣4, ... up to
♦2 (``first_lead="C3"``: ♣ first: ♣3, ♠3, ♥3, ♦3, ♣4, ♠4, ...).  Suits matter for nothing else
and are not kept after the deal.

**End and scoring** (stake 1, zero-sum).  The 头家 is the first player out.  Payers: every
player who declared and is not the 头家 pays the 头家 2; if there is none, the 末家 pays the
头家 1 (2 if the 头家 declared).  The 末家 is the earliest player who failed with only 3s, or
else the last active player.  The hand ends as soon as the 头家 is known and the payer is
fixed (a failed declarer exists, or someone has failed, or only one active player is left);
``play_to_completion=True`` plays on until at most one active player is left (full ranking;
same scoring).  ``reward="win_loss"``: the sign of the score (+1 the 头家, -1 each payer, 0
the others; not zero-sum when several declarers pay).

**Options**: ``wild_jokers="both"|"big_only"|"none"`` (which jokers are wild; they stay
themselves too), ``joker_order="big_over_small"|"first_played"`` (first_played: single ``B``
and single ``R`` are equal, so neither beats the other; pairs ``RR`` > ``BB`` stay),
``first_lead="S3"|"C3"``, ``declare_must_include="seed"|"one"|"all"``,
``play_to_completion=False``, ``reward="score"|"win_loss"``.

**Action space** (default options): ``N = T + 2 + 27`` = 6,068 with T = 6,039 play rows: ``play``
rows, ``pass``, ``declare``, then the ``pick`` block ``B[3]`` .. ``B[2]``, ``R[3]`` ..
``R[2]``, ``done``.  ``wild_jokers="big_only"``: bombs up to 10 cards, no ``B`` picks: T =
6,015, N = 6,031; ``"none"``: bombs up to 8 cards, no pick block: T = 5,991, N = 5,993.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np
from numpy.typing import ArrayLike
from numba import njit

from ..core.cards import SUITS, Deck
from ..core.combos import (
    AIRPLANE, AIRPLANE_PAIRS, BOMB, FAMILY_NAMES, N_FAMILIES, PAIR, PAIR_CHAIN, ROCKET, SINGLE,
    STRAIGHT, TRIO, TRIO_PAIR, ComboRules, enumerate_plays,
)
from ..core.encode import Field, Layout, deck_less_hand, put_cards, put_seat_or_none
from ..core.game import MAX_COUNT, Game, GameInfo
from ..core.kernels import planes, rng_below, shuffle
from ..core.options import check_bool, check_choice, check_int
from ..core.state import (
    clear_state_unset,
    AUX0, BID, BIDDER, BIDS0, CUR, FIRST, LANDLORD, LAST_ROW, LAST_SEAT, NDOUBLE, NPASS,
    NREDEAL, PHASE, PLAYS0, P_DONE, P_PLAY, REW0, RNG, WINNER, hand_off, kitty_off, log_action,
    follows, played_off, put_deal, start_play_phase, state_size,
)
from ..core.table import Table, cached
from ..core.validate import StateField
from ..core.wild import (
    WildRows, find_wild, format_wild, parse_wild, popcount, sort_wild, wild_count, wild_rows,
)

if TYPE_CHECKING:
    from ..core.infostate import Hidden
    from ..core.render import TableView

ORDER = "3456789TJQKA2BR"
NP = 4
NR = 15  # ranks
NAT = 13  # natural ranks 3..2 (indices 0..12)
JB, JR = 13, 14  # rank slots of the small and the big joker
HAND = 25
N_UNUSED = 8
NCARDS = 108
MAX_DECLARE = 10  # 报牌 with at most this many cards
K_REC = 8  # recent play-phase events kept for the observation
NPICK = 2 * NAT + 1  # pick options: B[r], R[r], done

# phases (the core defines P_AUCTION=0 (unused here), P_PLAY=1, P_DONE=2)
P_WILD = 3
PHASE_NAMES = ("deal", "play", "done", "wilds")

# seat status
ST_ACTIVE, ST_OUT, ST_FAILED = 0, 1, 2
STATUS_NAMES = ("active", "out", "failed")

# -- state: header slots of this game (AUX0 is the core's PLAY_START) ------------------------
A_PASSED = AUX0 + 1  # bit q: seat q passed since the last play
A_NOUT = AUX0 + 2  # players out so far
A_NFAIL = AUX0 + 3  # players failed so far
A_LOSER = AUX0 + 4  # 末家 once fixed (-1 before)
A_DEALER = AUX0 + 5  # dealer (-1 unknown: a custom deal without suits)
A_LEADER = AUX0 + 6  # seat that made the first lead
A_NREC = AUX0 + 7  # play-phase events recorded (plays and passes)
A_PEND = AUX0 + 8  # row being realised in the wilds phase (-1 none)

# -- state: this game's region after the shared layout -----------------------------------------
EXT = state_size(NP)
X_PLEN = EXT  # picks made so far for the pending row
X_PSEQ = EXT + 1  # 4 pick codes: kind * 16 + rank (kind 0 = B, 1 = R)
X_DECL = EXT + 8  # 4: declared
X_STATUS = EXT + 12  # 4: ST_*
X_OUTPOS = EXT + 16  # 4: 1.. order of going out (0 = not out)
X_FAILPOS = EXT + 20  # 4: 1.. order of failing (0 = not failed)
X_LB = EXT + 24  # 13: small jokers standing for each rank in the play to beat
X_LR = EXT + 40  # 13: big jokers standing for each rank in the play to beat
X_PB = EXT + 56  # 13: small-joker picks so far for the pending row, per rank
X_PR = EXT + 72  # 13: big-joker picks so far
X_REC = EXT + 88  # K_REC events of EV slots: seat, row (-1 pass), B per rank (13), R per rank (13)
EV = 32
STATE_SIZE = X_REC + K_REC * EV

# -- options vector (read by the kernels) ------------------------------------------------------
(O_PASS, O_DECL, O_PICKB, O_PICKR, O_DONE, O_WB, O_WR, O_MUST, O_COMPLETE, O_REWARD, O_NRANKS,
 O_DEPTH, O_RECENT, O_T, O_JALL, O_WSLOTS, O_SUIT0) = range(17)
O_LK = 21  # where the lookups of gen_rows start
N_OPTS = 22  # then WildRows.wfix, .over, .natmax (T each), then the lookups

MUST_MODES = ("seed", "one", "all")
WILD_MODES = ("both", "big_only", "none")
JOKER_ORDERS = ("big_over_small", "first_played")
#: suit search order of the first lead (indices into SUITS = "SHCD")
FIRST_LEAD_SUITS = {"S3": (0, 2, 1, 3), "C3": (2, 0, 1, 3)}


def combo_rules(wild_jokers: str = "both") -> ComboRules:
    """Lanxi Wulong's combination set; ``wild_jokers`` sets how many wilds the deck holds."""
    wilds = {"both": 4, "big_only": 2, "none": 0}[wild_jokers]
    return ComboRules(
        Deck.standard(ORDER, 2), chain_lo=0, chain_hi=ORDER.index("A"), straight=(5, 12),
        pair_chain=(3, 12), airplane=(2, 8), airplane_singles=None, airplane_pairs=(2, 5),
        trio_single=False, four_two_singles=False, four_two_pairs=False, joker_pairs=True,
        bomb_sizes=tuple(range(4, 9 + wilds)), bomb_order="size_rank",
        rocket=(("B", 2), ("R", 2)), double_min_bomb=99, max_cards=HAND,
        wilds=wilds, chain_only=(0,), pairs_both_joker_pairs=True,
    )


def wild_slots(wild_jokers: str) -> list[int]:
    """Rank slots of the wild jokers under an option value."""
    return {"both": [JB, JR], "big_only": [JR], "none": []}[wild_jokers]


def wulong_plays(rules: ComboRules, joker_order: str = "big_over_small") -> list:
    """Every play; with ``joker_order="first_played"`` single ``R`` takes single ``B``'s key
    (equal singles: neither beats the other)."""
    plays = enumerate_plays(rules)
    if joker_order == "big_over_small":
        return plays
    return [replace(p, key=JB) if p.family == SINGLE and p.key == JR else p for p in plays]


@cached
def play_table(wild_jokers: str = "both", joker_order: str = "big_over_small") -> Table:
    """The (cached) play table of an option set."""
    rules = combo_rules(wild_jokers)
    return Table(rules.deck, wulong_plays(rules, joker_order))


# -- kernels: small helpers ------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _wr(o):
    """The game's :class:`WildRows`, kept in the options vector."""
    T = o[O_T]
    a = N_OPTS
    return WildRows(o[O_JALL], o[O_WSLOTS], o[a:a + T], o[a + T:a + 2 * T], o[a + 2 * T:a + 3 * T])


@njit(cache=True)
def _next_active(s, seat):
    """The next active seat after ``seat`` (``seat`` itself excluded); -1 if none."""
    for j in range(1, NP):
        q = (seat + j) % NP
        if s[X_STATUS + q] == ST_ACTIVE:
            return q
    return -1


@njit(cache=True)
def _n_active(s):
    k = 0
    for q in range(NP):
        if s[X_STATUS + q] == ST_ACTIVE:
            k += 1
    return k


@njit(cache=True)
def top_card(s, seat, o):
    """``(rank, m)``: the seat's highest rank (``R`` > ``B`` > 2 > ...) and how many cards of
    it each play must hold under ``declare_must_include``; ``(-1, 0)`` for an empty hand."""
    ho = hand_off(seat)
    for r in range(NR - 1, -1, -1):
        c = s[ho + r]
        if c > 0:
            mode = o[O_MUST]
            if mode == 1:
                return r, 1
            if mode == 2:
                return r, c
            return r, (c if c >= 4 else 1)
    return -1, 0


@njit(cache=True)
def _declared_row_ok(s, seat, row, tab, o, top, m):
    """Whether a row the hand can make has a realisation holding ``m`` cards of rank ``top``.

    Natural top rank: the row needs ``m`` cells of it (naturals fill them).  A joker: it is in
    the row as itself (``c_j``) or stands in; as many jokers of that kind can stand in as the
    hand has spare, but at least one natural card must stay.
    """
    c = tab.counts[row]
    if top < JB:
        return c[top] >= m
    n_nat = 0
    for r in range(NAT):
        n_nat += c[r]
    ho = hand_off(seat)
    if top == JR:
        j = c[JR]
        wild = o[O_WR] == 1
        spare = s[ho + JR] - c[JR]
    else:
        j = c[JB]
        wild = o[O_WB] == 1
        spare = s[ho + JB] - c[JB]
    extra = 0
    if wild and n_nat >= 1:
        extra = min(spare, n_nat - 1)
    return j + extra >= m


@njit(cache=True)
def _row_fits(s, seat, row, tab, wr):
    """The wild generator's test for one row (see :mod:`cardenvs.core.wild`)."""
    ho = hand_off(seat)
    h = s[ho:ho + 16]
    lo, hi = planes(h)
    w = wild_count(h, wr.wslots)
    mlo = tab.lo[row] & ~lo
    mhi = tab.hi[row] & ~hi
    if ((mlo | mhi) & wr.jall) != 0:
        return False
    d = popcount(mlo) + popcount(mhi)
    if d + wr.wfix[row] > w:
        return False
    if d + wr.over[row] > 0 and wr.natmax[row] - d < 1:
        return False
    return True


# -- fast move generation ------------------------------------------------------------------------
#
# The core's :func:`cardenvs.core.wild.gen_legal_wild` tests every group of the table and then
# every row of a fitting group.  :func:`gen_rows` makes the same rows (the differential tests
# compare the two, order included) from the hand's deficits directly: a body of ``m`` cards of
# each rank of a window misses ``sum max(0, m - h_r)`` cards, which the wild jokers must make
# up (prefix sums over 3..A give every window at once; a longer window misses at least as
# many).  5,587 of the 6,039 rows are trio chains with pairs: for a body that fits, the rows
# of its kicker variants are tested against the hand's per-rank kicker costs (a natural pair
# misses 0, 1 or 2 cards; a joker pair must be held and then is no longer wild) by two
# popcounts of the row's kicker-rank mask, branch-free.  Rows come out in ascending order.

# lookup layout (an int64 array kept in the options vector from o[O_LK]; built by _lookups)
LK_SGL = 0  # count, then (row, rank) pairs in row order: singles
LK_PAIR = LK_SGL + 31
LK_TRIO = LK_PAIR + 31
LK_BOMB = LK_TRIO + 27  # [size 0..12][rank 0..12] -> row or -1
LK_ROCKET = LK_BOMB + 169
LK_CHAIN = LK_ROCKET + 1  # [m - 1][length 0..12][top 0..11] -> row or -1
LK_TP = LK_CHAIN + 3 * 13 * 12  # [trio rank] -> kicker group or -1
LK_AP = LK_TP + 13  # [length 0..12][top 0..11] -> kicker group or -1
LK_KMOFF = LK_AP + 13 * 12  # where the kicker masks start (after the groups)
LK_KG = LK_KMOFF + 1  # kicker groups: first row, number of rows
KG = 2
INF = 99


def _lookups(table: Table) -> np.ndarray:
    """The lookup array of :func:`gen_rows` for a play table (checked against the table)."""
    plays = table.plays
    lk = np.full(LK_KG, -1, np.int64)
    lists: dict[int, list[tuple[int, int]]] = {SINGLE: [], PAIR: [], TRIO: []}  # (row, rank)
    tp_groups: dict[int, list[int]] = {}
    ap_groups: dict[tuple[int, int], list[int]] = {}
    for t, p in enumerate(plays):
        c = p.counts
        if p.family in lists:
            lists[p.family].append((t, int(np.flatnonzero(c)[0])))
        elif p.family == BOMB:
            r = int(np.flatnonzero(c)[0])
            lk[LK_BOMB + 13 * sum(c) + r] = t
        elif p.family == ROCKET:
            lk[LK_ROCKET] = t
        elif p.family in (STRAIGHT, PAIR_CHAIN, AIRPLANE):
            m = {STRAIGHT: 1, PAIR_CHAIN: 2, AIRPLANE: 3}[p.family]
            lk[LK_CHAIN + ((m - 1) * 13 + p.length) * 12 + p.key] = t
        elif p.family == TRIO_PAIR:
            tp_groups.setdefault(p.key, []).append(t)
        elif p.family == AIRPLANE_PAIRS:
            ap_groups.setdefault((p.length, p.key), []).append(t)
        else:
            raise AssertionError(f"unexpected family {FAMILY_NAMES[p.family]}")
    for fam, off, size in ((SINGLE, LK_SGL, 15), (PAIR, LK_PAIR, 15), (TRIO, LK_TRIO, 13)):
        ranked = lists[fam]
        if len(ranked) > size or [r for r, _ in ranked] != sorted(r for r, _ in ranked):
            raise AssertionError("unexpected single/pair/trio rows")
        lk[off] = len(ranked)
        for i, (row, rank) in enumerate(ranked):
            lk[off + 1 + 2 * i], lk[off + 2 + 2 * i] = row, rank
    kg: list[int] = []

    def add_group(rows: list[int]) -> int:
        if rows != list(range(rows[0], rows[0] + len(rows))):
            raise AssertionError("a kicker group's rows are not contiguous")
        kg.extend([rows[0], len(rows)])
        return len(kg) // KG - 1

    for r, rows in sorted(tp_groups.items()):
        lk[LK_TP + r] = add_group(rows)
    for (length, top), rows in sorted(ap_groups.items()):
        lk[LK_AP + length * 12 + top] = add_group(rows)
    # per row: bit r set when the row carries a kicker pair of rank r
    km = np.zeros(len(plays), np.int64)
    for t, p in enumerate(plays):
        if p.family in (TRIO_PAIR, AIRPLANE_PAIRS):
            for kicker in np.flatnonzero(np.array(p.counts) - np.array(p.body)):
                km[t] |= 1 << int(kicker)
    lk[LK_KMOFF] = LK_KG + len(kg)
    return np.concatenate([lk, np.array(kg, np.int64), km])


@njit(cache=True)
def _emit_class(h, w, lk, off, tab, kmin, out, n):
    """Singles, pairs or trios whose rank the hand holds enough of (``lk[off]`` lists them);
    only rows with a key above ``kmin``."""
    for i in range(lk[off]):
        row = lk[off + 1 + 2 * i]
        if tab.key[row] > kmin:
            r = lk[off + 2 + 2 * i]
            need = tab.counts[row, r]
            # a natural rank: the cards short may be wild, but one natural card at least;
            # a joker single / pair: the jokers themselves
            if h[r] >= need or (r < JB and h[r] >= 1 and need - h[r] <= w):
                out[n] = row
                n += 1
    return n


@njit(cache=True)
def _kickers(m1, m2, mi, lk, gi, budget, out, n):
    """Rows of kicker group ``gi`` whose kicker pairs cost at most ``budget`` wilds: each row's
    kicker-rank mask against the hand's masks of ranks whose pair costs >= 1 wild (``m1``),
    2 wilds (``m2``) or cannot be made (``mi``), branch-free."""
    s0 = lk[LK_KG + gi * KG]
    km0 = lk[LK_KMOFF] + s0
    for j in range(lk[LK_KG + gi * KG + 1]):
        km = lk[km0 + j]
        c = popcount(km & m1) + popcount(km & m2)
        out[n] = s0 + j
        n += (c <= budget) & ((km & mi) == 0)
    return n


@njit(cache=True)
def gen_rows(h, prev, tab, o, out):
    """Every row the hand ``h`` (jokers included) can make against ``prev`` (-1: free lead),
    ascending, written to ``out``; returns how many.  The same rows as
    :func:`cardenvs.core.wild.gen_legal_wild` with this game's table."""
    lk = o[o[O_LK]:]
    w = 0
    if o[O_WB] == 1:
        w += h[JB]
    if o[O_WR] == 1:
        w += h[JR]
    pre = np.empty(13, np.int64)  # deficits of the chain windows, as prefix sums
    n = 0
    if prev >= 0:
        fam = tab.family[prev]
        ppow = tab.power[prev]
        pkey = tab.key[prev]
        plen = tab.length[prev]
    else:
        fam = -1
        ppow = 0
        pkey = -1
        plen = 0
    free = prev < 0
    if ppow == 0:
        if free or fam == SINGLE:
            n = _emit_class(h, w, lk, LK_SGL, tab, pkey, out, n)
        if free or fam == PAIR:
            n = _emit_class(h, w, lk, LK_PAIR, tab, pkey, out, n)
        if free or fam == TRIO:
            n = _emit_class(h, w, lk, LK_TRIO, tab, pkey, out, n)
        # kicker ranks whose pair costs >= 1 wild, 2 wilds, or cannot be made: a natural pair
        # misses max(0, 2 - h_r) cards; a joker pair is the jokers themselves (held twice, and
        # then no longer wild)
        m1 = np.int64(0)
        m2 = np.int64(0)
        mi = np.int64(1)  # 3s are never kickers
        if free or fam == TRIO_PAIR or fam == AIRPLANE_PAIRS:
            for r in range(1, NAT):
                if h[r] < 2:
                    m1 |= np.int64(1) << r
                    if h[r] == 0:
                        m2 |= np.int64(1) << r
            for j in range(JB, NR):
                if h[j] < 2:
                    mi |= np.int64(1) << j
                elif (j == JB and o[O_WB] == 1) or (j == JR and o[O_WR] == 1):
                    m1 |= np.int64(1) << j  # the two jokers of the pair are no longer wild
                    m2 |= np.int64(1) << j
        if free or fam == TRIO_PAIR:
            for r in range(1, NAT):
                gi = lk[LK_TP + r]
                # the trio may be all wild (budget <= 1 then: the pair holds a natural card)
                if gi >= 0 and r > pkey:
                    d3 = max(0, 3 - h[r])
                    if d3 <= w:
                        n = _kickers(m1, m2, mi, lk, gi, w - d3, out, n)
        # chains: prefix sums of the deficits of m cards per rank over 3..A
        pre[0] = 0
        for m in range(1, 4):
            cfam = STRAIGHT + m - 1  # STRAIGHT, PAIR_CHAIN, AIRPLANE
            want = free or fam == cfam or (m == 3 and fam == AIRPLANE_PAIRS)
            if not want:
                continue
            for r in range(12):
                pre[r + 1] = pre[r] + max(0, m - h[r])
            for fam2 in range(2):  # the plain chain, then (m == 3) with pairs
                if fam2 == 1 and m != 3:
                    break
                this = cfam if fam2 == 0 else AIRPLANE_PAIRS
                if not (free or fam == this):
                    continue
                for length in range(2, 13):
                    if not free and length != plen:
                        continue
                    any_fit = False
                    for top in range(length - 1, 12):
                        if pre[top + 1] - pre[top + 1 - length] > w:
                            continue
                        any_fit = True
                        if top <= pkey and not free:
                            continue
                        if fam2 == 0:
                            row = lk[LK_CHAIN + ((m - 1) * 13 + length) * 12 + top]
                            if row >= 0:
                                out[n] = row
                                n += 1
                        else:
                            gi = lk[LK_AP + length * 12 + top]
                            if gi >= 0:
                                left = w - (pre[top + 1] - pre[top + 1 - length])
                                n = _kickers(m1, m2, mi, lk, gi, left, out, n)
                    if not any_fit:
                        break  # a longer window misses at least as many cards
    # bombs (size, then rank: ascending rows) and the rocket
    most = 0
    for r in range(1, NAT):
        most = max(most, h[r])
    for size in range(4, min(12, most + w) + 1):
        for r in range(1, NAT):
            if h[r] >= 1 and size - h[r] <= w:
                row = lk[LK_BOMB + 13 * size + r]
                if row >= 0 and tab.power[row] > ppow:
                    out[n] = row
                    n += 1
    row = lk[LK_ROCKET]
    if row >= 0 and h[JB] >= 2 and h[JR] >= 2 and tab.power[row] > ppow:
        out[n] = row
        n += 1
    return n


# -- realisations ---------------------------------------------------------------------------------


@njit(cache=True)
def scan_realisations(s, seat, row, tab, o, plen, pseq, mark, best):
    """Enumerate the realisations of ``row`` from the seat's hand whose canonical pick
    sequence starts with ``pseq[:plen]``; honours the declarer's top-card rule.

    A realisation is ``k`` (jokers standing in per natural rank) and ``b`` (how many of them
    are small jokers); its pick sequence lists the stood-for ranks in ascending order, the
    first ``b`` as ``B`` (code ``r``), the rest as ``R`` (code ``16 + r``).  ``mark`` (NPICK)
    gets the options after the prefix: ``r`` = ``B[r]``, ``13 + r`` = ``R[r]``, ``26`` = done.
    ``best[:13]`` / ``best[13]`` receive ``k`` / ``b`` of the first matching realisation.
    Returns how many realisations match.
    """
    ho = hand_off(seat)
    c = tab.counts[row]
    jb = c[JB]
    jr = c[JR]
    if jb > s[ho + JB] or jr > s[ho + JR]:
        return 0
    ab = s[ho + JB] - jb if o[O_WB] == 1 else 0
    ar = s[ho + JR] - jr if o[O_WR] == 1 else 0
    W = ab + ar
    buf = np.empty(4 * NAT, np.int64)
    lo = buf[0:NAT]
    hi = buf[NAT:2 * NAT]
    pos = buf[2 * NAT:3 * NAT]
    k = buf[3 * NAT:4 * NAT]
    n_nat = 0
    K = 0
    for r in range(NAT):
        lo[r] = max(0, c[r] - s[ho + r])
        hi[r] = c[r]
        n_nat += c[r]
        K += lo[r]
    bmin0 = 0
    qmin0 = 0
    if s[X_DECL + seat] == 1:
        top, m = top_card(s, seat, o)
        if top < JB:
            hi[top] = c[top] - m
        elif top == JB:
            bmin0 = m - jb
        else:
            qmin0 = m - jr
    if K > W:
        return 0
    for r in range(NAT):
        if lo[r] > hi[r]:
            return 0
    npos = 0
    for r in range(NAT):
        k[r] = lo[r]
        if hi[r] > lo[r]:
            pos[npos] = r
            npos += 1
    count = 0
    while True:
        if K == 0 or n_nat - K >= 1:
            bmin = max(bmin0, K - ar, 0)
            bmax = min(ab, K, K - qmin0)
            for b in range(bmin, bmax + 1):
                ok = K >= plen  # a realisation shorter than the prefix does not extend it
                nxt = -1
                i = 0
                for r in range(NAT):
                    for _ in range(k[r]):
                        code = r if i < b else 16 + r
                        if i < plen:
                            if code != pseq[i]:
                                ok = False
                        elif i == plen:
                            nxt = code
                        i += 1
                    if not ok or i > plen:
                        break
                if ok:
                    count += 1
                    if count == 1:
                        for r in range(NAT):
                            best[r] = k[r]
                        best[NAT] = b
                    if K == plen:
                        mark[2 * NAT] = 1
                    elif nxt >= 16:
                        mark[NAT + nxt - 16] = 1
                    else:
                        mark[nxt] = 1
        # next k: an odometer over the ranks with a choice, total at most W
        j = 0
        while j < npos:
            r = pos[j]
            if k[r] < hi[r] and K < W:
                k[r] += 1
                K += 1
                break
            K -= k[r] - lo[r]
            k[r] = lo[r]
            j += 1
        if j == npos:
            break
    return count


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


# -- kernels: deal --------------------------------------------------------------------------------


@njit(cache=True)
def _clear(s, seed):
    clear_state_unset(s, seed, (LAST_ROW, LAST_SEAT, FIRST, A_LOSER, A_DEALER, A_LEADER, A_PEND))


@njit(cache=True)
def first_leader(held, dealer, o):
    """The first leader: going round from the seat after ``dealer``, the first holder of a
    card in the search order (rank 3 upwards, suits in ``o``'s order).  ``held[seat*52 +
    rank*4 + suit]`` counts the suited cards dealt."""
    for r in range(NAT):
        for si in range(4):
            suit = o[O_SUIT0 + si]
            for j in range(1, NP + 1):
                q = (dealer + j) % NP
                if held[q * 52 + r * 4 + suit] > 0:
                    return q
    return (dealer + 1) % NP  # unreachable with a full deal


@njit(cache=True)
def _start(s, dealer, leader):
    s[A_DEALER] = dealer
    s[A_LEADER] = leader
    s[FIRST] = leader
    start_play_phase(s, leader)


@njit(cache=True)
def reset(s, seed, tab, o):
    """Shuffle the 108 suited cards from ``seed``, deal 25 to each seat, start the play."""
    _clear(s, seed)
    ids = np.arange(NCARDS).astype(np.int64)
    shuffle(ids, NCARDS, s, RNG)
    held = np.zeros(NP * 52, np.int64)
    ko = kitty_off(NP)
    for i in range(NCARDS):
        c = ids[i]
        if c < 104:
            r = c // 8
            suit = (c % 8) // 2
        else:
            r = JB if c < 106 else JR
            suit = -1
        if i < NP * HAND:
            q = i // HAND
            s[hand_off(q) + r] += 1
            if suit >= 0:
                held[q * 52 + r * 4 + suit] += 1
        else:
            s[ko + r] += 1
    dealer = rng_below(s, RNG, NP)
    _start(s, dealer, first_leader(held, dealer, o))


@njit(cache=True)
def reset_custom(s, seed, o, cards, held, dealer, leader):
    """Start from a given deal: ``cards[i]`` seat i's hand, ``cards[4]`` the unused cards;
    ``held`` as in :func:`first_leader` (zeros for a deal without suits).  ``dealer`` -1 with
    ``leader`` -1: drawn from ``seed``; ``leader`` -1: by the suits."""
    _clear(s, seed)
    put_deal(s, NP, cards)
    if leader < 0:
        if dealer < 0:
            dealer = rng_below(s, RNG, NP)
        leader = first_leader(held, dealer, o)
    _start(s, dealer, leader)


# -- kernels: play --------------------------------------------------------------------------------


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
            if _declared_row_ok(s, seat, out[i], tab, o, top, m):
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
    if not _row_fits(s, seat, a, tab, _wr(o)):
        return False
    if s[X_DECL + seat] == 1:
        top, m = top_card(s, seat, o)
        return _declared_row_ok(s, seat, a, tab, o, top, m)
    return True


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
    n_act = _n_active(s)
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
    nxt = _next_active(s, seat)
    if nxt < 0:  # alone among the active players: the trick is his, he leads again
        s[LAST_ROW] = -1
        s[A_PASSED] = 0
        s[CUR] = seat
    else:
        s[CUR] = nxt


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
            s[CUR] = _next_active(s, seat)
            return
    # every other active player passed: the trick ends
    s[LAST_ROW] = -1
    s[A_PASSED] = 0
    for r in range(NAT):
        s[X_LB + r] = 0
        s[X_LR + r] = 0
    s[CUR] = last if s[X_STATUS + last] == ST_ACTIVE else _next_active(s, last)


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


# -- observation -----------------------------------------------------------------------------------
(F_HAND, F_DECL_HANDS, F_PLAYED, F_OTHERS, F_SIZES, F_BEAT, F_BEAT_WILDS, F_BEAT_TYPE,
 F_BEAT_SEAT, F_PENDING, F_PENDING_WILDS, F_RECENT, F_DECLARED, F_STATUS, F_HEAD, F_LOSER,
 F_TURN, F_PHASE) = range(18)

WILD_PLANES = NAT * 4  # per natural rank: >=1, >=2 small jokers, >=1, >=2 big jokers stand in


def obs_layout(depth: int = 8, recent: int = K_REC) -> Layout:
    """The observation fields, in order.  Relative seats: 0 = the observer, 1 = next (下家)..."""
    n = NP
    C = NR * depth
    cards = f"{NR} ranks x {depth} planes, bit r*{depth}+k-1 set when holding >= k of rank r"
    wilds = ("13 natural ranks x 4: bit r*4+k-1 set when >= k small jokers (k = 1, 2), "
             "bit r*4+2+k-1 when >= k big jokers stand for rank r")
    E = C + WILD_PLANES + 1 + n
    return Layout([
        Field("hand", C, f"own hand ({cards}; rank 0 = 3 ... 12 = 2, 13 = B, 14 = R)"),
        Field("declared_hands", n * C, "hand of each relative seat that has declared (报牌), "
                                       "zeros for the others"),
        Field("played", n * C, "cards played so far by each relative seat, jokers as jokers"),
        Field("others", C, "cards the observer has not seen: the 108-card deck minus his hand, "
                           "every played card and the declared hands (the 8 unused cards "
                           "included)"),
        Field("hand_sizes", n, f"cards in hand per relative seat / {HAND}"),
        Field("to_beat", C, "effective cards of the play to beat (a joker counted as the rank it "
                            "stands for; zeros on a free lead)"),
        Field("to_beat_wilds", WILD_PLANES,
              f"jokers standing in within the play to beat ({wilds})"),
        Field("to_beat_type", N_FAMILIES,
              "one-hot family of the play to beat (see combos.FAMILY_NAMES)"),
        Field("to_beat_seat", n, "one-hot relative seat of the play to beat"),
        Field("pending", C, "effective cards of the observer's own play being realised (wilds "
                            "phase, the mover only), else zeros"),
        Field("pending_wilds", WILD_PLANES, "jokers picked so far for that play"),
        Field("recent", recent * E,
              f"last {recent} plays and passes, most recent first; each: effective cards ({C}), "
              f"jokers standing in ({WILD_PLANES}), pass flag (1), relative seat one-hot ({n})"),
        Field("declared", n, "per relative seat: 1 when it has declared"),
        Field("status", 3 * n, "per relative seat one-hot: active, out, failed (only 3s left)"),
        Field("head", n + 1, "one-hot relative seat of the 头家 (first out); last slot: none yet"),
        Field("loser", n + 1, "one-hot relative seat of the 末家 once fixed; last slot: not yet"),
        Field("turn", n, "one-hot relative seat to move"),
        Field("phase", 3, "one-hot phase: play, wilds (choosing jokers; every seat but the "
                          "mover sees play), done"),
    ])


@njit(cache=True, inline="always")
def _put_wilds(out, off, kb, kr):
    for r in range(NAT):
        for k in range(min(kb[r], 2)):
            out[off + r * 4 + k] = 1.0
        for k in range(min(kr[r], 2)):
            out[off + r * 4 + 2 + k] = 1.0


@njit(cache=True)
def encode(s, seat, tab, o, off, out):
    """Write ``seat``'s observation into ``out`` (float32, zeroed here)."""
    n = NP
    R = o[O_NRANKS]
    D = o[O_DEPTH]
    C = R * D
    out[:] = 0.0
    ho = hand_off(seat)
    put_cards(out, off[F_HAND], s[ho:ho + 16], R, D)
    others = deck_less_hand(s, ho, NAT, 8, 2)
    for k in range(n):
        q = (seat + k) % n
        qo = hand_off(q)
        po = played_off(n, q)
        put_cards(out, off[F_PLAYED] + k * C, s[po:po + 16], R, D)
        sz = 0
        for r in range(16):
            others[r] -= s[po + r]
            sz += s[qo + r]
        out[off[F_SIZES] + k] = sz / HAND
        if s[X_DECL + q] == 1:
            put_cards(out, off[F_DECL_HANDS] + k * C, s[qo:qo + 16], R, D)
            out[off[F_DECLARED] + k] = 1.0
            if q != seat:
                for r in range(16):
                    others[r] -= s[qo + r]
        out[off[F_STATUS] + 3 * k + s[X_STATUS + q]] = 1.0
    put_cards(out, off[F_OTHERS], others, R, D)
    prev = s[LAST_ROW]
    if prev >= 0 and s[PHASE] != P_DONE:
        put_cards(out, off[F_BEAT], tab.counts[prev], R, D)
        _put_wilds(out, off[F_BEAT_WILDS], s[X_LB:X_LB + NAT], s[X_LR:X_LR + NAT])
        out[off[F_BEAT_TYPE] + tab.family[prev]] = 1.0
        out[off[F_BEAT_SEAT] + (s[LAST_SEAT] - seat) % n] = 1.0
    pend = s[A_PEND]
    mover = seat == s[CUR]
    if s[PHASE] == P_WILD and pend >= 0 and mover:  # the picks are the mover's secret
        put_cards(out, off[F_PENDING], tab.counts[pend], R, D)
        _put_wilds(out, off[F_PENDING_WILDS], s[X_PB:X_PB + NAT], s[X_PR:X_PR + NAT])
    E = C + WILD_PLANES + 1 + n
    nrec = s[A_NREC]
    for j in range(min(o[O_RECENT], nrec, K_REC)):
        e = X_REC + ((nrec - 1 - j) % K_REC) * EV
        base = off[F_RECENT] + j * E
        row = s[e + 1]
        if row < 0:
            out[base + C + WILD_PLANES] = 1.0
        else:
            put_cards(out, base, tab.counts[row], R, D)
            _put_wilds(out, base + C, s[e + 2:e + 2 + NAT], s[e + 2 + NAT:e + 2 + 2 * NAT])
        out[base + C + WILD_PLANES + 1 + (s[e] - seat) % n] = 1.0
    w = s[WINNER]
    put_seat_or_none(out, off[F_HEAD], w, seat, n)
    put_seat_or_none(out, off[F_LOSER], s[A_LOSER], seat, n)
    if s[PHASE] != P_DONE:
        out[off[F_TURN] + (s[CUR] - seat) % n] = 1.0
    ph = s[PHASE]
    if ph == P_WILD and not mover:
        ph = P_PLAY  # every other seat sees the position before the mover chose his play
    out[off[F_PHASE] + (0 if ph == P_PLAY else (1 if ph == P_WILD else 2))] = 1.0


# -- the Python game object ------------------------------------------------------------------------

def _parse_suited(text, what: str) -> list[tuple[str, int]]:
    """``"S3 H3 D4 B R"`` -> ``[(suit, rank), ...]`` (suit ``""`` for jokers); two decks, so a
    card may appear twice (counted over the whole deal by the caller)."""
    if not isinstance(text, str):
        raise TypeError(f"{what} must be a string, got {type(text).__name__}")
    out = []
    for tok in text.replace(",", " ").split():
        if tok in ("B", "R"):
            out.append(("", ORDER.index(tok)))
        elif len(tok) == 2 and tok[0] in SUITS and tok[1] in ORDER[:NAT]:
            out.append((tok[0], ORDER.index(tok[1])))
        else:
            raise ValueError(f"{what} {text!r}: bad suited card {tok!r}; write suit then rank, "
                             f"e.g. 'S3', and jokers as 'B' / 'R'")
    return out


_PICK_RE = re.compile(r"^([BR])\[(.)\]$")


class Wulong(Game):
    """兰溪乌龙 Lanxi Wulong with one option set (see the module docstring).

    Action blocks: ``play`` (one row per effective play), ``pass``, ``declare`` (报牌), and,
    unless ``wild_jokers="none"``, ``pick``: ``B[3]`` .. ``B[2]`` (with ``both``),
    ``R[3]`` .. ``R[2]``, ``done``.
    """

    k_reset = staticmethod(reset)
    k_legal = staticmethod(legal)
    k_is_legal = staticmethod(is_legal)
    k_step = staticmethod(step)
    k_encode = staticmethod(encode)

    deal_keys = ("hands", "leader", "dealer")
    OPTIONS = dict(wild_jokers="both", joker_order="big_over_small", first_lead="S3",
                   declare_must_include="seed", play_to_completion=False, reward="score")

    def __init__(self, *, wild_jokers: str = "both", joker_order: str = "big_over_small",
                 first_lead: str = "S3", declare_must_include: str = "seed",
                 play_to_completion: bool = False, reward: str = "score"):
        check_choice("wild_jokers", wild_jokers, WILD_MODES)
        check_choice("joker_order", joker_order, JOKER_ORDERS)
        check_choice("first_lead", first_lead, tuple(FIRST_LEAD_SUITS))
        check_choice("declare_must_include", declare_must_include, MUST_MODES)
        check_bool("play_to_completion", play_to_completion)
        check_choice("reward", reward, ("score", "win_loss"))
        self.options = dict(wild_jokers=wild_jokers, joker_order=joker_order,
                            first_lead=first_lead, declare_must_include=declare_must_include,
                            play_to_completion=bool(play_to_completion), reward=reward)
        self.info = GameInfo(
            name="wulong", title="Lanxi Wulong", n_players=NP, deck_size=NCARDS,
            zero_sum=reward == "score", teams="every player for himself",
            rules_page="docs/rules/wulong.md", options=dict(self.OPTIONS),
        )
        self.rules = combo_rules(wild_jokers)
        self.table = play_table(wild_jokers, joker_order)
        self.deck = self.table.deck
        self.max_hand = HAND
        self.wild_slots = wild_slots(wild_jokers)
        self.joker_slots = [JB, JR]
        T = len(self.table)
        self.blocks = {"play": (0, T), "pass": (T, T + 1), "declare": (T + 1, T + 2)}
        self.pick_kinds = "".join("BR"[j - JB] for j in self.wild_slots)
        if self.pick_kinds:
            self.blocks["pick"] = (T + 2, T + 2 + NAT * len(self.pick_kinds) + 1)
        depth = 8
        self.layout = obs_layout(depth, K_REC)
        wr = wild_rows(self.table.arrays.counts, self.joker_slots, self.wild_slots)
        lk = _lookups(self.table)
        o = np.zeros(N_OPTS + 3 * T + len(lk), np.int64)
        o[O_LK] = N_OPTS + 3 * T
        o[N_OPTS + 3 * T:] = lk
        o[O_PASS], o[O_DECL] = T, T + 1
        o[O_PICKB] = o[O_PICKR] = o[O_DONE] = -1
        for i, kind in enumerate(self.pick_kinds):
            o[O_PICKB if kind == "B" else O_PICKR] = T + 2 + NAT * i
        if self.pick_kinds:
            o[O_DONE] = T + 2 + NAT * len(self.pick_kinds)
        o[O_WB] = int(JB in self.wild_slots)
        o[O_WR] = int(JR in self.wild_slots)
        o[O_MUST] = MUST_MODES.index(declare_must_include)
        o[O_COMPLETE] = int(play_to_completion)
        o[O_REWARD] = 1 if reward == "win_loss" else 0
        o[O_NRANKS], o[O_DEPTH], o[O_RECENT] = NR, depth, K_REC
        o[O_T] = T
        o[O_JALL], o[O_WSLOTS] = wr.jall, wr.wslots
        o[O_SUIT0:O_SUIT0 + 4] = FIRST_LEAD_SUITS[first_lead]
        o[N_OPTS:N_OPTS + T] = wr.wfix
        o[N_OPTS + T:N_OPTS + 2 * T] = wr.over
        o[N_OPTS + 2 * T:N_OPTS + 3 * T] = wr.natmax
        self.wr = wr
        super().__init__(o)

    base_state_size = STATE_SIZE

    # -- what a valid state is (Game.check_state) ------------------------------------------------
    def state_fields(self) -> list[StateField]:
        """Lanxi Wulong's own state fields and their ranges (:meth:`Game.state_fields`)."""
        T = len(self.table)
        seat = (-1, NP - 1)
        zero = [StateField(name, i, 0, 0) for name, i in (
            ("LANDLORD", LANDLORD), ("BID", BID), ("BIDDER", BIDDER), ("NPASS", NPASS),
            ("NDOUBLE", NDOUBLE), ("NREDEAL", NREDEAL))]
        jokers = []
        for name, at in (("X_LB", X_LB), ("X_LR", X_LR), ("X_PB", X_PB), ("X_PR", X_PR)):
            jokers += [StateField(name, at, 0, 2, NAT), StateField(name, at + NAT, 0, 0, 16 - NAT)]
        rec = []
        for i in range(K_REC):
            e = X_REC + i * EV
            rec += [StateField(f"X_REC[{i}] seat", e, 0, NP - 1),
                    StateField(f"X_REC[{i}] row", e + 1, -1, T - 1),
                    StateField(f"X_REC[{i}] jokers", e + 2, 0, 2, 2 * NAT),
                    StateField(f"X_REC[{i}] unused", e + 2 + 2 * NAT, 0, 0, EV - 2 - 2 * NAT)]
        return [
            StateField("PHASE", PHASE, P_PLAY, P_WILD), *zero,
            StateField("BIDS", BIDS0, 0, 0, 8),
            StateField("A_PASSED", A_PASSED, 0, 2**NP - 1),
            StateField("A_NOUT", A_NOUT, 0, NP), StateField("A_NFAIL", A_NFAIL, 0, NP),
            StateField("A_LOSER", A_LOSER, *seat), StateField("A_DEALER", A_DEALER, *seat),
            StateField("A_LEADER", A_LEADER, *seat), StateField("A_NREC", A_NREC, 0, MAX_COUNT),
            StateField("A_PEND", A_PEND, -1, T - 1),
            StateField("X_PLEN", X_PLEN, 0, 4), StateField("X_PSEQ", X_PSEQ, 0, 16 + NAT - 1, 4),
            StateField("unused", X_PSEQ + 4, 0, 0, X_DECL - X_PSEQ - 4),
            StateField("X_DECL", X_DECL, 0, 1, NP), StateField("X_STATUS", X_STATUS, 0, 2, NP),
            StateField("X_OUTPOS", X_OUTPOS, 0, NP, NP),
            StateField("X_FAILPOS", X_FAILPOS, 0, NP, NP),
            StateField("unused", X_FAILPOS + NP, 0, 0, X_LB - X_FAILPOS - NP),
            *jokers, *rec,
            StateField("A_PEND", A_PEND, 0, T - 1, when=(PHASE, P_WILD, P_WILD)),
        ]

    def log_window(self) -> Optional[tuple[int, int, tuple[int, int, int]]]:
        """``None``: no part of the action log is checked as plays (the observation's recent
        events are ``X_REC``, not the log)."""
        return None

    # -- action strings ------------------------------------------------------------------------
    def _block_string(self, block: str, i: int) -> str:
        if block == "pass":
            return "pass"
        if block == "declare":
            return "declare"
        k = len(self.pick_kinds)
        if i == NAT * k:
            return "done"
        return f"{self.pick_kinds[i // NAT]}[{ORDER[i % NAT]}]"

    def _parse_block_string(self, text: str):
        t, low = self._words(text)
        if low == "pass":
            return self.pass_id
        if low in ("declare", "报牌"):
            return self.pass_id + 1
        if low == "done":
            if "pick" not in self.blocks:
                raise ValueError(f"no 'done' action: wild_jokers={self.options['wild_jokers']!r} "
                                 f"has no joker picks")
            return self.blocks["pick"][1] - 1
        m = _PICK_RE.match(t)
        if m:
            kind, ch = m.groups()
            if kind not in self.pick_kinds:
                raise ValueError(f"bad pick {text!r}: {'B' if kind == 'B' else 'R'} is not wild "
                                 f"with wild_jokers={self.options['wild_jokers']!r}")
            if ch not in ORDER[:NAT]:
                raise ValueError(f"bad pick {text!r}: a joker stands for a natural rank "
                                 f"({' '.join(ORDER[:NAT])})")
            return self.blocks["pick"][0] + NAT * self.pick_kinds.index(kind) + ORDER.index(ch)
        if "[" in t:  # a realisation such as "45R[6]78": the row of its effective cards
            return self.table.find(self.effective(t), what="action")
        return None

    def effective(self, text: str) -> str:
        """The effective cards of a play written with wild jokers: ``"45R[6]78"`` -> ``"45678"``
        (the bracket notation of :func:`cardenvs.core.wild.parse_wild`)."""
        return parse_wild(text, self.deck, self.joker_slots, self.wild_slots).text

    def realisation_string(self, row: int, kb: ArrayLike, kr: ArrayLike) -> str:
        """A play with its jokers: naturals and stand-ins in rank order (``"45R[6]78"``), the
        jokers that are themselves last (``"444RR"``); :func:`cardenvs.core.wild.format_wild`."""
        st = np.zeros((16, 16), np.int64)
        st[JB, :NAT] = np.asarray(kb, np.int64)[:NAT]
        st[JR, :NAT] = np.asarray(kr, np.int64)[:NAT]
        return format_wild(self.deck, self.tab.counts[row], st, self.joker_slots)

    # -- realisations (Python side: tests, legal_moves, render) ------------------------------------
    def realisations(self, state: np.ndarray, row: int) -> list[tuple[tuple, tuple]]:
        """Every realisation ``(kb, kr)`` (small / big jokers standing for each natural rank)
        the seat to move may use for ``row``, in canonical pick order (declarer rule included).
        Empty when the hand cannot make the row."""
        out: list[tuple[tuple, tuple]] = []
        seat = int(state[CUR])
        mark = np.zeros(NPICK, np.int64)
        best = np.zeros(NAT + 1, np.int64)

        def rec(seq: list[int]):
            mark[:] = 0
            pseq = np.zeros(4, np.int64)
            pseq[:len(seq)] = seq
            n = scan_realisations(state, seat, row, self.tab, self.opts, len(seq), pseq, mark,
                                  best)
            if n == 0:
                return
            opts = np.flatnonzero(mark).tolist()
            for i in opts:
                if i == 2 * NAT:
                    kb, kr = [0] * NAT, [0] * NAT
                    for code in seq:
                        if code < 16:
                            kb[code] += 1
                        else:
                            kr[code - 16] += 1
                    out.append((tuple(kb), tuple(kr)))
                else:
                    rec(seq + [i if i < NAT else 16 + i - NAT])

        rec([])
        return out

    # -- positions for analysis and tests ---------------------------------------------------------
    def set_position(self, state: np.ndarray, hands: Sequence[str], to_move: int = 0, *,
                     prev: Optional[str] = None, prev_seat: Optional[int] = None,
                     declared: Sequence[int] = (), winner: Optional[int] = None,
                     seed: int = 0) -> None:
        """Fill ``state`` with a play-phase position (for analysis and tests; hand sizes free).

        ``hands``: four card strings (``""`` = out; only 3s = failed, earlier seats first).
        ``prev``: the play to beat (effective cards or ``"45R[6]78"``; a realisation string
        also fixes which jokers stood in), made by ``prev_seat`` (default: the seat before
        ``to_move``).  ``declared``: seats that have declared.  ``winner``: the 头家 when
        several hands are empty (default: the lowest such seat).

        Everything is checked before ``state`` is written: a bad position raises
        ``TypeError`` / ``ValueError`` and leaves ``state`` as it was.
        """
        self._check_buffer(state)
        if isinstance(hands, str) or not isinstance(hands, (list, tuple)):
            raise TypeError(f"'hands' must be a list of {NP} card strings, got "
                            f"{type(hands).__name__}")
        if len(hands) != NP:
            raise ValueError(f"'hands' must list {NP} hands, got {len(hands)}")
        check_int("to_move", to_move, 0, NP - 1)
        counts = [self.deck.parse(h, what=f"hand of seat {i}") for i, h in enumerate(hands)]
        total = np.sum(counts, axis=0)
        over = np.flatnonzero(total > self.deck.full_counts())
        if over.size:
            raise ValueError(f"impossible position: {int(total[over[0]])} cards of "
                             f"{ORDER[over[0]]!r}; the deck holds {self.deck.copies[over[0]]}")
        check_int("seed", seed, 0, 2**63 - 1)
        s = self.new_state()  # the caller's state is written only once all is checked
        reset_custom(s, np.int64(seed), self.opts, np.zeros((NP + 1, 16), np.int64),
                     np.zeros(NP * 52, np.int64), 0, to_move)
        unused = self.deck.full_counts() - total
        s[kitty_off(NP):kitty_off(NP) + 16] = unused
        for i, c in enumerate(counts):
            s[hand_off(i):hand_off(i) + 16] = c
        for q in declared:
            check_int("declared seat", q, 0, NP - 1)
            s[X_DECL + q] = 1
        empty = [i for i, c in enumerate(counts) if c.sum() == 0]
        if winner is not None and winner not in empty:
            raise ValueError(f"winner={winner} must be a seat with an empty hand")
        order = ([winner] if winner is not None else []) + [i for i in empty if i != winner]
        for k, q in enumerate(order):
            s[X_STATUS + q] = ST_OUT
            s[X_OUTPOS + q] = k + 1
        s[A_NOUT] = len(order)
        if order:
            s[WINNER] = order[0]
        fails = [i for i, c in enumerate(counts) if c.sum() > 0 and c[1:].sum() == 0]
        for k, q in enumerate(fails):
            s[X_STATUS + q] = ST_FAILED
            s[X_FAILPOS + q] = k + 1
        s[A_NFAIL] = len(fails)
        if fails:
            s[A_LOSER] = fails[0]
        if s[X_STATUS + to_move] != ST_ACTIVE:
            raise ValueError(f"to_move={to_move} holds no cards or only 3s: not an active seat")
        if prev is not None:
            if prev_seat is None:
                prev_seat = (to_move - 1) % NP
            check_int("prev_seat", prev_seat, 0, NP - 1)
            row, wp = find_wild(self.table, prev, None, self.joker_slots, self.wild_slots)
            s[LAST_ROW] = row
            s[LAST_SEAT] = prev_seat
            s[X_LB:X_LB + NAT] = wp.stands[JB, :NAT]
            s[X_LR:X_LR + NAT] = wp.stands[JR, :NAT]
        state[:] = self.check_state(s)

    # -- the rules query API hook (cardenvs.legal_moves) ------------------------------------------
    #: keywords of :meth:`query_moves` that :func:`cardenvs.legal_moves` passes on
    query_keywords = ("plain", "declared")

    def query_moves(self, hand: str, prev: Optional[str] = None, prev_type: Optional[str] = None,
                    *, declared: bool = False, plain: bool = False) -> list[str]:
        """Every legal play of ``hand`` against ``prev`` (``None``: free lead).

        Each realisation is written with its jokers: ``"45R[6]78"`` (``R`` stands for a 6),
        ``"444RR"`` (trio + pair of big jokers), ``"444R[4]R[4]"`` (the bomb ``44444``).
        ``plain=True`` lists the distinct effective plays instead (``"45678"``).
        ``declared=True``: the hand has declared (报牌), so every play holds its top card.
        ``prev`` may be written either way (``"45678"`` or ``"45R[6]78"``).  Sorted by size,
        then by rank order (:func:`cardenvs.core.wild.sort_wild`).
        """
        check_bool("declared", declared)
        check_bool("plain", plain)
        counts = self.deck.parse(hand, what="hand")
        if counts.sum() > HAND:
            raise ValueError(f"hand {hand!r} has {int(counts.sum())} cards; at most {HAND} "
                             f"in wulong")
        if counts.sum() == 0:
            raise ValueError("hand is empty")
        prev_row = -1
        if prev is not None:
            prev_row, wp = find_wild(self.table, prev, prev_type, self.joker_slots,
                                     self.wild_slots)
            self._check_position(hand, counts, prev, wp)
        elif prev_type is not None:
            raise ValueError("prev_type given without prev")
        s = self.new_state()
        reset_custom(s, np.int64(0), self.opts, np.zeros((NP + 1, 16), np.int64),
                     np.zeros(NP * 52, np.int64), 0, 0)
        s[hand_off(0):hand_off(0) + 16] = counts
        s[X_DECL] = int(bool(declared))
        s[LAST_ROW] = prev_row
        s[LAST_SEAT] = 3 if prev_row >= 0 else -1
        out = np.empty(self.n_actions, np.int64)
        k = self.legal(s, out)
        rows = [int(a) for a in out[:k] if a < self.pass_id]
        res: list[str] = []
        for row in rows:
            if plain:
                res.append(self.deck.format(self.table.plays[row].counts))
                continue
            for kb, kr in self.realisations(s, row):
                res.append(self.realisation_string(row, kb, kr))
        return sort_wild(res, self.deck)

    legal_moves = query_moves

    def _check_position(self, hand: str, counts: np.ndarray, prev: str, wp) -> None:
        """``ValueError`` when the hand and the play to beat (``wp``, its
        :class:`cardenvs.core.wild.WildPlay`) cannot both come from the decks: more of a joker
        than two decks hold, or more natural cards than the 8 copies plus the wild jokers left
        over can make (jokers written as wilds count as jokers, not naturals)."""
        p = [int(x) for x in wp.physical]
        used = {JB: int(counts[JB]) + p[JB], JR: int(counts[JR]) + p[JR]}
        for j, n in used.items():
            if n > 2:
                raise ValueError(f"impossible position: hand {hand!r} and prev {prev!r} hold "
                                 f"{n} cards of {ORDER[j]!r}; the decks have 2")
        spare = sum(2 - used[j] for j in self.wild_slots)
        excess = sum(max(0, int(counts[r]) + p[r] - 8) for r in range(NAT))
        # the excess must be wild jokers, and a wild joker needs a natural card in its play
        natural_left = sum(p[r] for r in range(NAT)) - excess
        if excess > spare or (excess > 0 and natural_left < 1):
            raise ValueError(f"impossible position: hand {hand!r} and prev {prev!r} hold more "
                             f"natural cards than the decks and the wild jokers left can make "
                             f"(a wild joker stands in only beside a natural card)")

    # -- custom deals ----------------------------------------------------------------------------
    def custom_deal(self, state: np.ndarray, options: dict, seed: int) -> None:
        """Set up ``state`` from a given deal (rules README, convention 8).

        ``{"hands": [h0, h1, h2, h3]}``: 25 cards a hand; the 8 unused cards are the rest of the
        two decks.  Suited hands (``"S3 H3 D4 B R ..."``, jokers without a suit, each suited
        card at most twice in all): the suits decide the first leader, going round from the
        seat after ``dealer`` (default: drawn from the seed).  Unsuited hands (``"334..."``)
        need ``leader`` (the seat the suits would name); ``dealer`` is then only shown.
        """
        from ..core.deals import all_suited, check_deal_keys, deal_rows, hands_list, parse_deal

        check_deal_keys(options, self.deal_keys)
        hands_in = hands_list(options, NP)
        dealer, leader = options.get("dealer"), options.get("leader")
        if dealer is not None:
            check_int("dealer", dealer, 0, NP - 1)
        if leader is not None:
            check_int("leader", leader, 0, NP - 1)
        held = np.zeros(NP * 52, np.int64)
        if all_suited(hands_in, "every hand", ("leader",), options):
            plain = []
            seen: dict[tuple[str, int], int] = {}
            for i, text in enumerate(hands_in):
                cards = _parse_suited(text, f"hand of seat {i}")
                if len(cards) != HAND:
                    raise ValueError(f"hand of seat {i} has {len(cards)} cards; this game deals "
                                     f"{HAND}")
                for suit, r in cards:
                    seen[(suit, r)] = seen.get((suit, r), 0) + 1
                    if seen[(suit, r)] > 2:
                        raise ValueError(f"impossible deal: {suit}{ORDER[r]} given "
                                         f"{seen[(suit, r)]} times; two decks hold 2")
                    if suit:
                        held[i * 52 + r * 4 + SUITS.index(suit)] += 1
                plain.append(self.deck.format(np.bincount([r for _, r in cards],
                                                          minlength=16)))
            opts = {"hands": plain}
        else:
            if leader is None:
                raise ValueError("a deal without suits needs 'leader' (the seat the ♠3 rule "
                                 "would name)")
            opts = {"hands": list(hands_in)}
        hands, unused = parse_deal(self.deck, opts, NP, HAND, N_UNUSED)
        reset_custom(state, np.int64(seed), self.opts, deal_rows(hands, unused), held,
                     -1 if dealer is None else int(dealer), -1 if leader is None else int(leader))

    # -- text ------------------------------------------------------------------------------------
    def play_string(self, state: np.ndarray) -> str:
        """The play to beat with its jokers (``""`` on a free lead)."""
        row = int(state[LAST_ROW])
        if row < 0:
            return ""
        return self.realisation_string(row, state[X_LB:X_LB + NAT], state[X_LR:X_LR + NAT])

    def table_view(self, state: np.ndarray) -> TableView:
        """The table as :class:`cardenvs.core.render.TableView` (read by the text and the
        image renders): the dealer, the first leader, 头家 and 末家 in the header; each seat's
        declaration and status; the unused cards, the play to beat with its reading, the
        jokers being chosen, the last eight actions and the result."""
        from ..core.render import (
            SeatView, TableLine, TableView, log_actions, mark_last, recent_line, rewards_text,
            seat_rewards,
        )

        ph = int(state[PHASE])
        done = ph == P_DONE

        def seat_name(q: int) -> str:
            return f"player_{q}" if q >= 0 else "-"

        facts = [f"phase: {PHASE_NAMES[ph]}", f"dealer: {seat_name(int(state[A_DEALER]))}",
                 f"first lead: {seat_name(int(state[A_LEADER]))}",
                 f"头家: {seat_name(int(state[WINNER]))}",
                 f"末家: {seat_name(int(state[A_LOSER]))}"]
        seats = []
        for q in range(NP):
            tags = []
            if state[X_DECL + q]:
                tags.append("declared")
            st = int(state[X_STATUS + q])
            if st == ST_OUT:
                tags.append(f"out #{int(state[X_OUTPOS + q])}")
            elif st == ST_FAILED:
                tags.append(f"failed #{int(state[X_FAILPOS + q])}")
            seats.append(SeatView(q, " ".join(tags),
                                  self.deck.format(state[hand_off(q):hand_off(q) + 16]),
                                  to_move=not done and q == int(state[CUR])))
        unused = self.deck.format(state[kitty_off(NP):kitty_off(NP) + 16])
        lines = [TableLine("unused", unused, cards=unused)]
        row = int(state[LAST_ROW])
        if row >= 0 and not done:
            play, by = self.play_string(state), f"by player_{int(state[LAST_SEAT])}"
            lines.append(TableLine("to beat", f"{play} ({self.table.reading(row)}) {by}",
                                   cards=play, note=f"({self.table.reading(row)}) {by}"))
        pend = int(state[A_PEND])
        if ph == P_WILD and pend >= 0:
            picks = " ".join(self._block_string("pick", self._pick_offset(int(code)))
                             for code in state[X_PSEQ:X_PSEQ + int(state[X_PLEN])])
            lines.append(TableLine(f"choosing jokers for {self.table.row_string(pend)}",
                                   picks or "(none yet)"))
        acts = log_actions(self, state, 2 * NP + 8)
        lines += recent_line(acts[-8:])
        if done:
            w = int(state[WINNER])
            what = "void deal (every player failed)" if w < 0 else f"头家 player_{w}"
            lines.append(TableLine("result", f"{what}; rewards {rewards_text(state, NP)}"))
        view = TableView(self.info.title, facts, seats, lines, role_width=17, done=done)
        seat_rewards(view, state)
        return mark_last(view, acts)

    def render(self, state: np.ndarray) -> str:
        """The table as text (``render_mode="ansi"``)."""
        from ..core.render import text_of

        return text_of(self.table_view(state))

    def _pick_offset(self, code: int) -> int:
        kind = "B" if code < 16 else "R"
        return NAT * self.pick_kinds.index(kind) + code % 16

    # -- what is hidden from whom (read by cardenvs.core.infostate) ------------------------------
    def hidden(self, state: np.ndarray, seat: int) -> Hidden:
        """What ``seat`` cannot see: the hands of the seats that have not declared (报牌: the
        hand is public) and have not failed (a failed hand is only 3s, of a public size); a
        hidden active hand is not only 3s (it would have failed); the 8 unused cards.  While a
        hidden seat picks its jokers (wilds phase) it must have a real choice."""
        from ..core.infostate import Hidden, NotOnly, Pile, hand_piles

        known = [q for q in range(NP) if state[X_DECL + q] == 1
                 or state[X_STATUS + q] == ST_FAILED]
        h = Hidden(piles=hand_piles(state, NP, seat, skip=known),
                   facts=lambda: dict(
                       declared=[bool(state[X_DECL + q]) for q in range(NP)],
                       failed=[bool(state[X_STATUS + q] == ST_FAILED) for q in range(NP)]))
        h.known_hands = {q: hand_off(q) for q in known}
        for p in h.piles:
            if p.size == 1:
                p.mask &= ~1  # one card, not a 3
            else:
                h.checks.append(NotOnly(p.offset, 1))
        ko = kitty_off(NP)
        h.piles.append(Pile("unused", ko, int(state[ko:ko + 16].sum())))
        cur = int(state[CUR])
        if int(state[PHASE]) == P_WILD and cur != seat and cur not in known:
            h.choice = True
        return h

    # -- helpers for tests and people ------------------------------------------------------------
    def status(self, state: np.ndarray) -> list[str]:
        """Each seat's status: ``active``, ``out`` or ``failed``."""
        return [STATUS_NAMES[int(state[X_STATUS + q])] for q in range(NP)]

    def declared(self, state: np.ndarray) -> list[int]:
        """The seats that declared (报牌: their hands are public)."""
        return [q for q in range(NP) if state[X_DECL + q]]

    def ranking(self, state: np.ndarray) -> list[int]:
        """Seats best first: players out in order, the active ones, then the failed (the
        earliest failure last)."""
        outs = sorted((int(state[X_OUTPOS + q]), q) for q in range(NP) if state[X_OUTPOS + q])
        act = [q for q in range(NP) if state[X_STATUS + q] == ST_ACTIVE]
        fails = sorted(((-int(state[X_FAILPOS + q]), q) for q in range(NP)
                        if state[X_FAILPOS + q]))
        return [q for _, q in outs] + act + [q for _, q in fails]
