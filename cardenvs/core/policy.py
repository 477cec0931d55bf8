"""A fast heuristic rollout policy for every game, in numba, driven by small declarations.

The policy chooses one legal action of the seat to move from the state vector, reading only
what that seat may know (its own hand, every seat's hand size, every card played, the play
to beat and who made it, the solo seat), so it can play out determinized positions in a
search and also act as an agent.  One implementation serves every game: what differs
between games is data, compiled once per game into an ``int64`` parameter vector by
:func:`policy_params`:

* **the hand plan** (from the play table): which ranks may form straights and pair chains
  and their minimum lengths, whether trios carry kickers, which ranks cannot be played alone
  (Lanxi Wulong's 3s, Da Niangniang's jokers), which rank slots are wild jokers;
* **teams** (from ``game.info.teams``): in a ``"1 vs k"`` game the seat in the ``LANDLORD``
  slot (landlord, digger, 娘娘) plays against the others, who are partners while the solo
  seat still holds cards; otherwise every seat is for himself;
* **the kind of every non-play action block** (:data:`BLOCK_KINDS`, overridable by a game's
  ``policy_blocks`` attribute): bids, a choice scored by the hand it leaves (burying, the
  exchange, joker stand-ins), a fixed preference (first or last id), or an action to avoid
  while anything else is legal (报牌).

Card play (lower scores are better), policy ``"heuristic"`` (:func:`score_actions`): the card
play of the ``rules`` agent (``agents/rules.py``) on a fast plan cost, :func:`hand_cost` with
``full=1`` (greedy straights and pair chains; the rocket and bombs -1, they take a lead back;
a combination of control ranks half; trios carry the lowest non-control singles):

* go out when a legal play empties the hand (报牌 first where it is offered);
* lead the plan's combinations (a play that costs the plan more than itself breaks it), low
  cards first, controls and bombs last; with at most one other combination left, the sure
  winners first (no play of the unseen cards beats them); the lowest single (pair) to a
  partner holding one (two) cards; no single (pair) into an opponent holding one (two);
* follow an opponent with the play that raises the plan cost least, if at most a threshold
  set by how close the opponents are to going out (:data:`FOLLOW_THR_URGENT` ...); a bomb
  (or four of a kind with kickers) only when no plain play does and an opponent is close to
  going out or the bomb nearly finishes the hand; otherwise pass;
* never beat a partner's play unless going out (a loose ally's cheaply, :data:`PP_LOOSE`);
  never a play that leaves a hand able to make no play while anything else is legal.

Policy ``"heuristic0"`` (:func:`score_actions0`), the first heuristic, kept for comparison:
the plan cost with every combination counted 1 (``full=0``), the cheapest play within
:data:`FOLLOW_SLACK`, bombs against an opponent holding :data:`BOMB_ENEMY` cards or fewer.

Speed: the rollout engines (``cardenvs.vector``) call :func:`policy_choose_play` first,
which scores card play (:func:`score_card_play`) from packed action records in the
parameter vector (:data:`PP_RECS`: a row's planes and fields in two words, one cache line
per candidate) without the play table: a numba function that passes the table (a tuple of
some twenty arrays) on to another function increfs and decrefs each of its arrays per call,
which was most of a decision's time.  Hands of at most four cards a rank are costed from
their rank masks alone (:func:`cost_of_masks`).  The other decisions (bids, choices,
``heuristic0``) go through :func:`policy_choose` as before.  :func:`score_actions_reference`
is the card play as first written, column by column of the table; the tests hold both
scorers to the same value at every legal action of thousands of positions of every game.

Bids: the hand's strength (controls, bombs, minus half its plan cost) against quantiles of
the strength of random dealt hands (:func:`bid_thresholds`): the 55%, 75% and 90% quantiles
for bids 1, 2, 3 (:data:`BID_QUANTILES`), or a game's ``policy_bid_quantiles`` (Wakeng: a 3
with the strongest 95%, as the ``rules`` agent's bidding).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Optional

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from .combos import (AIRPLANE, AIRPLANE_PAIRS, AIRPLANE_SINGLES, BOMB, FOUR_TWO_PAIRS,
                     FOUR_TWO_SINGLES, PAIR, PAIR_CHAIN, ROCKET, SINGLE, STRAIGHT, TRIO,
                     TRIO_PAIR, TRIO_SINGLE)
from .kernels import cttz, rng_below
from .state import CUR, HDR, LANDLORD, LAST_ROW, LAST_SEAT, PHASE, P_DONE

if TYPE_CHECKING:
    from .game import Game

# -- the parameter vector ------------------------------------------------------------------------
(PP_R, PP_NAT, PP_WILD, PP_NOSINGLE, PP_STRAIGHT, PP_MINS, PP_PAIRS, PP_MINP, PP_KICK,
 PP_SOLO, PP_NP, PP_PASS, PP_T, PP_NA, PP_STATE) = range(15)
#: seats (a bit mask) whose card play follows greedily (0 by default: none), an opponent
#: model for a search against simple rule bots: such a seat beats a play whenever a plain
#: (non-bomb) play does, a partner's too, with the lowest one (lowest key, then lowest
#: kickers) whatever it costs its plan, and leads a combination without kickers that holds
#: its lowest card (the plan's choice among those); going out comes first, as for every
#: seat (:func:`greedy_params`).  In 3-player Dou Dizhu with ``preset="rlcard"`` it makes
#: RLCard's rule model's move at 98.7-99.6% of its follows and 87-95% of its leads
#: (``benchmarks/opponent_model.py``)
PP_GREEDY = 15
PP_BONUS = 16  # 16 slots: value of keeping a card of each rank, in hundredths of a combination
PP_CTRL = 32  # 16 slots: bidding strength of each rank, in hundredths
PP_BIDTH = 48  # 3 slots: strength thresholds of bids 1, 2, 3, in hundredths (heuristic0)
PP_BIDTH1 = 56  # 3 slots: the same for the heuristic policy (full strength)
#: the full plan cost's data: the lowest control rank (above every chain rank), the fewest
#: cards of one rank that are a bomb (99: none), the rocket's ranks (a mask; 0: none)
PP_CTRLFROM, PP_BOMBN, PP_ROCKET = 51, 52, 53
#: 1 where the solo seat's opponents are a loose alliance (``game.info.teams`` says so: each
#: is also scored by his own place): a partner's play may be overtaken cheaply
PP_LOOSE = 54
#: ... while every opponent holds more than this many cards, by a natural non-bomb,
#: non-control play that raises the plan cost by at most :data:`ALLY_DELTA` (the ``rules``
#: agent's Da Niangniang values)
ALLY_ENEMY_MIN = 2
ALLY_DELTA = 0.0
#: offset in the vector of the packed action records (:func:`pack_records`): two words per
#: action id, its planes (``tab.lo``) and its fields packed (``REC_*``), so that scoring a
#: candidate reads one cache line instead of one per table column
PP_RECS = 59
PP_COPIES = 64  # 16 slots: copies of each rank in the deck
PP_KINDS = 80  # then one kind per action id (K_*), then each play row's rank sum (sum of
#: rank index x cards: the tie-break that keeps high kickers; at ``PP_KINDS + n_actions``)

# action kinds
K_PLAY, K_PASS, K_BID, K_EVAL_FIRST, K_EVAL_LAST, K_FIRST, K_LAST, K_AVOID = range(8)

#: the fields of a packed action record's second word: (shift, bits) of the action's kind
#: (``K_*``), and of a play row's card count, family, key, bomb power, doublings, rank sum,
#: and a flag for a row holding more than four cards of a rank (its counts are read from
#: ``tab.counts``; its planes cannot hold them)
REC_KIND, REC_NCARDS, REC_FAMILY, REC_KEY, REC_POWER, REC_DOUBLES, REC_RSUM, REC_BIG = (
    (0, 3), (3, 6), (9, 5), (14, 9), (23, 9), (32, 4), (36, 10), (46, 1))
KIND_NAMES = {"bid": K_BID, "eval_first": K_EVAL_FIRST, "eval_last": K_EVAL_LAST,
              "first": K_FIRST, "last": K_LAST, "avoid": K_AVOID}

#: default kind of each non-play action block, by block name (a game may override any of them
#: with a ``policy_blocks`` dict attribute)
BLOCK_KINDS = {
    "bid": "bid",  # Dou Dizhu, Wakeng: by hand strength
    "open": "first",  # Wakeng 明牌: play closed
    "bury": "eval_first",  # Wakeng: bury what hurts the hand least
    "reveal": "first",  # Da Niangniang 亮3: reveal
    "take": "eval_first",  # Da Niangniang exchange: take what helps most
    "return": "eval_first",  # ... and return what hurts least
    "joker": "eval_last",  # joker stand-ins: the cheapest hand; ties keep the joker
    "pick": "eval_last",  # Lanxi Wulong's stand-ins, the same
    "declare": "avoid",  # 报牌: never (unless it is the only action)
}

#: a combination that cannot be played alone costs this many turns
STUCK_COST = 3.0
#: a follow may raise the plan cost by this much (rank term included) and still be made
FOLLOW_SLACK = 0.6
#: an opponent with this many cards or fewer is worth a bomb
BOMB_ENEMY = 4
#: ... and with this many or fewer is beaten with anything
URGENT_ENEMY = 2
#: bidding quantiles of random-hand strength for bids 1, 2, 3
BID_QUANTILES = (0.55, 0.75, 0.90)

#: policy names, in the order of their kernel codes: ``heuristic`` (the card play of the
#: ``rules`` agent on the full plan cost), ``random`` (uniform), ``heuristic0`` (the first
#: heuristic, kept for comparison)
POLICIES = ("heuristic", "random", "heuristic0")
#: kernel codes of the policies
KIND_HEURISTIC, KIND_RANDOM, KIND_HEURISTIC0 = 0, 1, 2


# -- the hand plan -----------------------------------------------------------------------------


@njit(cache=True)
def hand_cost_reference(h, pp, c, full=0):
    """:func:`hand_cost` written rank by rank (the reference of the differential tests)."""
    R = pp[PP_R]
    wild = pp[PP_WILD]
    nosingle = pp[PP_NOSINGLE]
    jokers = 0
    naturals = 0
    for r in range(16):
        v = h[r] if r < R else 0
        if v < 0:
            v = 0
        if (wild >> r) & 1:
            jokers += v
            c[r] = 0
        else:
            c[r] = v
            naturals += v
    cost = 0.0
    ctrl = pp[PP_CTRLFROM] if full != 0 else 99
    if full != 0:
        # the rocket, then bombs: each takes a lead back (-1), kept out of every chain
        rk = pp[PP_ROCKET]
        if rk != 0:
            have = True
            for r in range(R):
                if (rk >> r) & 1 and c[r] < 1:
                    have = False
            if have:
                for r in range(R):
                    if (rk >> r) & 1:
                        c[r] -= 1
                cost -= 1.0
        for r in range(R):
            if c[r] > 0 and c[r] >= pp[PP_BOMBN]:
                c[r] = 0
                cost -= 1.0
    # straights: runs of ranks allowed in straights holding a card (greedy, twice)
    mins = pp[PP_MINS]
    if mins > 0:
        for _rep in range(2):
            best_a = -1
            best_b = -1
            best_gain = 0
            r = 0
            while r < R:
                if not ((pp[PP_STRAIGHT] >> r) & 1) or c[r] < 1:
                    r += 1
                    continue
                a = r
                while r < R and ((pp[PP_STRAIGHT] >> r) & 1) and c[r] >= 1:
                    r += 1
                b = r  # run [a, b)
                # trim ends that would break pairs or better
                while b - a > mins and c[a] >= 2:
                    a += 1
                while b - a > mins and c[b - 1] >= 2:
                    b -= 1
                if b - a >= mins:
                    gain = 0
                    for q in range(a, b):
                        if c[q] == 1:
                            gain += 1
                    gain -= 1
                    if gain > best_gain:
                        best_gain = gain
                        best_a = a
                        best_b = b
            if best_a < 0:
                break
            for q in range(best_a, best_b):
                c[q] -= 1
            cost += 1.0
    minp = pp[PP_MINP]
    if minp > 0:
        r = 0
        while r < R:
            if not ((pp[PP_PAIRS] >> r) & 1) or c[r] != 2:
                r += 1
                continue
            a = r
            while r < R and ((pp[PP_PAIRS] >> r) & 1) and c[r] == 2:
                r += 1
            if r - a >= minp:
                for q in range(a, r):
                    c[q] = 0
                cost += 1.0
    n1 = 0
    n2 = 0
    n3 = 0
    k12 = 0  # singles and pairs below the control ranks: the kickers the full cost uses
    for r in range(R):
        v = c[r]
        if v == 0:
            continue
        if (nosingle >> r) & 1 and v < 4:
            cost += STUCK_COST
            continue
        if v == 1:
            n1 += 1
        elif v == 2:
            n2 += 1
        elif v == 3:
            n3 += 1
        if v <= 2 and r < ctrl:
            k12 += 1
        cost += 0.5 if r >= ctrl else 1.0
    if pp[PP_KICK] != 0:
        cost -= min(n3, n1 + n2 if full == 0 else k12)
    if jokers > 0:
        for r in range(R):
            if (wild >> r) & 1 and h[r] > 0:
                if (nosingle >> r) & 1:
                    if naturals == 0:
                        cost += STUCK_COST * h[r]
                else:
                    cost += 0.25 * h[r]
    return cost


@intrinsic
def _popc(typingctx, x):
    """Set bits of a non-negative ``int64`` mask (LLVM ``ctpop``: one instruction)."""
    if not isinstance(x, types.Integer):
        return None
    sig = types.int64(types.int64)

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return sig, codegen


@intrinsic
def _ctlz(typingctx, x):
    """Leading zero bits of a nonzero ``int64`` (LLVM ``ctlz``)."""
    if not isinstance(x, types.Integer):
        return None
    sig = types.int64(types.int64)

    def codegen(context, builder, signature, args):
        return builder.ctlz(args[0], ir.Constant(ir.IntType(1), 1))

    return sig, codegen


@njit(inline="always", cache=True)
def _top_bit(x):
    """The highest set bit of a nonzero non-negative mask."""
    return np.int64(1) << (63 - _ctlz(x))


@njit(cache=True)
def hand_cost(h, pp, c, full=0):
    """Turns the hand ``h`` (counts per rank slot) still needs: its combinations, after
    greedy straights (the run that saves most singles, twice) and pair chains, with trios
    carrying kickers, a combination that cannot be played alone costing
    :data:`STUCK_COST`.  ``c`` is a scratch array of 16 (overwritten).  Rank masks
    instead of rank loops; the same value as :func:`hand_cost_reference`.

    ``full=1`` is the cost of the ``heuristic`` policy, closer to the ``rules`` agent's
    planner: the rocket and each bomb count -1 (they take a lead back) and are kept out of
    the chains, a combination of control ranks (above every chain rank) counts half, and
    only singles and pairs below the controls are kickers.  ``full=0`` (``heuristic0``):
    every combination counts 1."""
    R = pp[PP_R]
    wild = pp[PP_WILD]
    jokers = 0
    naturals = 0
    m1 = np.int64(0)
    m2 = np.int64(0)
    m3 = np.int64(0)
    m4 = np.int64(0)
    for r in range(R):
        v = h[r]
        c[r] = 0
        if v <= 0:
            continue
        if (wild >> r) & 1:
            jokers += v
            continue
        c[r] = v
        naturals += v
        bit = np.int64(1) << r
        m1 |= bit
        if v >= 2:
            m2 |= bit
            if v >= 3:
                m3 |= bit
                if v >= 4:
                    m4 |= bit
    return _cost_from(m1, m2, m3, m4, jokers, naturals, h, c, pp, full)


@njit(inline="always", cache=True)
def _set_count(bit, v, m1, m2, m3, m4):
    """The masks with ``v`` cards (at most 4 counted) at the rank ``bit``."""
    m1 &= ~bit
    m2 &= ~bit
    m3 &= ~bit
    m4 &= ~bit
    if v >= 1:
        m1 |= bit
        if v >= 2:
            m2 |= bit
            if v >= 3:
                m3 |= bit
                if v >= 4:
                    m4 |= bit
    return m1, m2, m3, m4


@njit(inline="always", cache=True)
def _take_one(c, r, bit, m1, m2, m3, m4):
    """One card less of rank ``r`` (``bit``) in the counts ``c`` and the masks."""
    v = c[r] - 1
    c[r] = v
    if v < 1:
        m1 &= ~bit
    if v < 2:
        m2 &= ~bit
    if v < 3:
        m3 &= ~bit
    if v < 4:
        m4 &= ~bit
    return m1, m2, m3, m4


@njit(inline="always", cache=True)
def _best_run(m1, m2, smask, mins):
    """The straight the plan takes next (a run of ``m1 & smask`` of at least ``mins`` ranks,
    its ends trimmed off pairs, saving the most singles; 0: none worth it)."""
    x = m1 & smask
    best_gain = 0
    best_run = np.int64(0)
    while x != 0:
        low = x & -x
        run = x & ~(x + low)
        x &= ~run
        L = _popc(run)
        if L < mins:
            continue
        while L > mins and (run & -run) & m2:
            run &= run - 1
            L -= 1
        while L > mins and _top_bit(run) & m2:
            run &= ~_top_bit(run)
            L -= 1
        gain = _popc(run & ~m2) - 1
        if gain > best_gain:
            best_gain = gain
            best_run = run
    return best_run


@njit(inline="always", cache=True)
def _pair_chains(m1, m2, m3, pairs, minp, cost):
    """The plan's pair chains (runs of exact pairs of ``pairs`` ranks, ``minp`` long or
    more), each one more combination: the masks without them and the cost."""
    x = m2 & ~m3 & pairs
    while x != 0:
        low = x & -x
        run = x & ~(x + low)
        x &= ~run
        if _popc(run) >= minp:
            m1 &= ~run
            m2 &= ~run
            cost += 1.0
    return m1, m2, cost


@njit(inline="always", cache=True)
def _tally(m1, m2, m3, m4, nosingle, cm, kick, full, cost):
    """The cost plus the groups left in the masks (see :func:`hand_cost`)."""
    stuck = m1 & ~m4 & nosingle
    n3 = _popc(m3 & ~m4 & ~nosingle)
    if full == 0:
        n1 = _popc(m1 & ~m2 & ~nosingle)
        n2 = _popc(m2 & ~m3 & ~nosingle)
        cost += n1 + n2 + n3 + _popc(m4) + STUCK_COST * _popc(stuck)
        if kick != 0:
            cost -= min(n3, n1 + n2)
    else:
        groups = (m1 & ~m4 & ~nosingle) | m4
        cost += (_popc(groups & ~cm) + 0.5 * _popc(groups & cm)
                 + STUCK_COST * _popc(stuck))
        if kick != 0:
            cost -= min(n3, _popc(m1 & ~m3 & ~nosingle & ~cm))
    return cost


@njit(cache=True)
def _cost_from(m1, m2, m3, m4, jokers, naturals, h, c, pp, full):
    """:func:`hand_cost` from the hand's rank masks (``m_k``: ranks with at least ``k``
    natural cards), its joker and natural card counts, ``h`` (for the jokers) and ``c``, a
    copy of its natural counts (changed)."""
    R = pp[PP_R]
    wild = pp[PP_WILD]
    nosingle = pp[PP_NOSINGLE]
    cost = 0.0
    cm = np.int64(0)  # control ranks (full cost)
    if full != 0:
        cm = ((np.int64(1) << R) - 1) & ~((np.int64(1) << min(pp[PP_CTRLFROM], R)) - 1)
        rk = pp[PP_ROCKET]
        if rk != 0 and (m1 & rk) == rk:
            cost -= 1.0
            y = rk
            while y != 0:
                bit = y & -y
                y &= y - 1
                m1, m2, m3, m4 = _take_one(c, cttz(bit), bit, m1, m2, m3, m4)
        bn = pp[PP_BOMBN]
        y = m4 if bn >= 4 else m1
        while y != 0:
            bit = y & -y
            y &= y - 1
            r = cttz(bit)
            if c[r] >= bn:
                c[r] = 0
                m1 &= ~bit
                m2 &= ~bit
                m3 &= ~bit
                m4 &= ~bit
                cost -= 1.0
    mins = pp[PP_MINS]
    if mins > 0:
        for _rep in range(2):
            best_run = _best_run(m1, m2, pp[PP_STRAIGHT], mins)
            if best_run == 0:
                break
            cost += 1.0
            y = best_run
            while y != 0:
                bit = y & -y
                y &= y - 1
                m1, m2, m3, m4 = _take_one(c, cttz(bit), bit, m1, m2, m3, m4)
    minp = pp[PP_MINP]
    if minp > 0:
        m1, m2, cost = _pair_chains(m1, m2, m3, pp[PP_PAIRS], minp, cost)
    cost = _tally(m1, m2, m3, m4, nosingle, cm, pp[PP_KICK], full, cost)
    if jokers > 0:
        for r in range(R):
            if (wild >> r) & 1 and h[r] > 0:
                if (nosingle >> r) & 1:
                    if naturals == 0:
                        cost += STUCK_COST * h[r]
                else:
                    cost += 0.25 * h[r]
    return cost


@njit(inline="always", cache=True)
def _take_top(bit, m1, m2, m3, m4):
    """One card less of the rank ``bit`` in the masks alone (exact while it holds at most 4)."""
    if m4 & bit:
        m4 &= ~bit
    elif m3 & bit:
        m3 &= ~bit
    elif m2 & bit:
        m2 &= ~bit
    else:
        m1 &= ~bit
    return m1, m2, m3, m4


@njit(cache=True)
def cost_of_masks(m1, m2, m3, m4, pp):
    """The full plan cost (:func:`hand_cost` with ``full=1``) of a hand without wild cards
    holding at most four cards of each rank, from its rank masks alone (``m_k``: ranks with
    at least ``k`` cards, which then are its counts): :func:`_cost_from`'s steps on the masks,
    the same value (every term is a multiple of 0.5: exact in any order)."""
    R = pp[PP_R]
    nosingle = pp[PP_NOSINGLE]
    cost = 0.0
    cm = ((np.int64(1) << R) - 1) & ~((np.int64(1) << min(pp[PP_CTRLFROM], R)) - 1)
    rk = pp[PP_ROCKET]
    if rk != 0 and (m1 & rk) == rk:
        cost -= 1.0
        y = rk
        while y != 0:
            bit = y & -y
            y &= y - 1
            m1, m2, m3, m4 = _take_top(bit, m1, m2, m3, m4)
    bn = pp[PP_BOMBN]
    if bn <= 4:
        bombs = m4 if bn == 4 else (m3 if bn == 3 else (m2 if bn == 2 else m1))
        if bombs != 0:
            cost -= _popc(bombs)
            m1 &= ~bombs
            m2 &= ~bombs
            m3 &= ~bombs
            m4 &= ~bombs
    mins = pp[PP_MINS]
    if mins > 0:
        for _rep in range(2):
            best_run = _best_run(m1, m2, pp[PP_STRAIGHT], mins)
            if best_run == 0:
                break
            cost += 1.0
            # one card less of each rank of the run: the ranks of m4 (m3, m2) in the run
            # drop to m3 (m2, m1) level, the singles leave m1
            m4n = m4 & ~best_run
            m3n = (m3 & ~best_run) | (m4 & best_run)
            m2n = (m2 & ~best_run) | (m3 & best_run)
            m1 = (m1 & ~best_run) | (m2 & best_run)
            m2 = m2n
            m3 = m3n
            m4 = m4n
    minp = pp[PP_MINP]
    if minp > 0:
        m1, m2, cost = _pair_chains(m1, m2, m3, pp[PP_PAIRS], minp, cost)
    return _tally(m1, m2, m3, m4, nosingle, cm, pp[PP_KICK], 1, cost)


@njit(inline="always", cache=True)
def _masks_after(h, m1, m2, m3, m4, lo):
    """The rank masks of ``h`` (masks ``m1..m4``) less a row of planes ``lo`` holding at
    most four cards of each rank."""
    ranks = lo & 0xFFFF
    while ranks != 0:
        bit = ranks & -ranks
        ranks &= ranks - 1
        r = cttz(bit)
        v = h[r] - (((lo >> r) & 1) + ((lo >> (r + 16)) & 1) + ((lo >> (r + 32)) & 1) +
                    ((lo >> (r + 48)) & 1))
        m1, m2, m3, m4 = _set_count(bit, v, m1, m2, m3, m4)
    return m1, m2, m3, m4


@njit(cache=True)
def hand_after(h, row, tab, pp, out):
    """The hand left after playing ``row`` (wild jokers fill the natural cards it lacks)."""
    R = pp[PP_R]
    wild = pp[PP_WILD]
    need = 0
    for r in range(16):
        v = h[r]
        c = tab.counts[row, r]
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


@njit(cache=True)
def masks_of(h, pp):
    """Rank masks ``(m1, m2, m3, m4)`` of the natural cards of ``h`` (see :func:`_cost_from`)."""
    wild = pp[PP_WILD]
    m1 = np.int64(0)
    m2 = np.int64(0)
    m3 = np.int64(0)
    m4 = np.int64(0)
    for r in range(pp[PP_R]):
        v = h[r]
        if v <= 0 or (wild >> r) & 1:
            continue
        bit = np.int64(1) << r
        m1 |= bit
        if v >= 2:
            m2 |= bit
            if v >= 3:
                m3 |= bit
                if v >= 4:
                    m4 |= bit
    return m1, m2, m3, m4


@njit(cache=True)
def cost_after_row(h, total, m1, m2, m3, m4, row, tab, pp, c, full=0):
    """``hand_cost`` of the hand left after ``row`` in a game without wild cards, updating
    the hand's masks ``m1..m4`` only at the row's ranks (``total``: cards in ``h``)."""
    for r in range(16):
        c[r] = h[r]
    ranks = tab.lo[row] & 0xFFFF
    while ranks != 0:
        bit = ranks & -ranks
        ranks &= ranks - 1
        r = cttz(bit)
        v = h[r] - tab.counts[row, r]
        c[r] = v
        m1, m2, m3, m4 = _set_count(bit, v, m1, m2, m3, m4)
    return _cost_from(m1, m2, m3, m4, 0, total - tab.ncards[row], c, c, pp, full)


@njit(cache=True)
def hand_value(h, pp, c, full=0):
    """Exchange / burying value of a hand: minus its plan cost (:func:`hand_cost`), plus a
    bonus for top cards."""
    v = -hand_cost(h, pp, c, full)
    for r in range(pp[PP_R]):
        v += 0.01 * pp[PP_BONUS + r] * h[r]
    return v


@njit(cache=True)
def strength(h, pp, c, full=0):
    """Bidding strength of a hand: controls and bombs (with ``full=1`` the rocket too, as
    the ``rules`` agent counts it), minus half its plan cost (:func:`hand_cost`)."""
    s = 0.0
    R = pp[PP_R]
    rocket = pp[PP_ROCKET] != 0 and full != 0
    for r in range(R):
        s += 0.01 * pp[PP_CTRL + r] * h[r]
        if h[r] >= 4 and not ((pp[PP_WILD] >> r) & 1):
            s += 2.0 + 0.5 * (h[r] - 4)
        if (pp[PP_ROCKET] >> r) & 1 and h[r] < 1:
            rocket = False
    if rocket:
        s += 2.0
    return s - 0.5 * hand_cost(h, pp, c, full)


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

#: the ``heuristic`` policy's follow thresholds (the ``rules`` agent's): an opponent's play is
#: beaten by a non-bomb play that raises the plan cost by at most this much, by how close
#: the opponents are to going out (an opponent with at most 2 cards or the play's owner with
#: at most 3: anything; an opponent with at most 5: a little; otherwise only plays that fit)
FOLLOW_THR_URGENT, FOLLOW_THR_NEAR, FOLLOW_THR_FAR = 2.5, 0.6, -0.4
#: ... and a bomb only when an opponent holds at most 3 cards, the play's owner at most 4,
#: or the bomb leaves a hand of at most this plan cost
BOMB_FINISH = 1.6
#: a lead that leaves a hand of at most this plan cost cashes its sure winners first
CASH_COST = 1.0


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


@njit(cache=False)
def score_policy(s, legal, k, tab, opts, pp, k_step, tmp, scores, work, kind):
    """The scores of policy ``kind`` (:data:`KIND_HEURISTIC` or :data:`KIND_HEURISTIC0`)."""
    if kind == KIND_HEURISTIC0:
        score_actions0(s, legal, k, tab, opts, pp, k_step, tmp, scores, work)
    else:
        score_actions(s, legal, k, tab, opts, pp, k_step, tmp, scores, work)



@njit(cache=True)
def pick(scores, k, rng, slot, eps):
    """Index of the best score (first on ties); with probability ``eps`` a uniform one."""
    if eps > 0.0:
        u = rng_below(rng, slot, 1 << 30) / float(1 << 30)
        if u < eps:
            return rng_below(rng, slot, k)
    best = 0
    for j in range(1, k):
        if scores[j] < scores[best]:
            best = j
    return best


# inlined twins of the scorer and its neighbours in the rollouts' per-decision entry point
# (see above: the arrays a numba call takes are increfed and decrefed on each call)
_score_card_play_i = njit(inline="always", cache=True)(score_card_play.py_func)
_is_card_play_i = njit(inline="always", cache=True)(is_card_play.py_func)
_pick_i = njit(inline="always", cache=True)(pick.py_func)


@njit(cache=True)
def policy_choose_play(s, legal, k, counts, pp, scores, work, kind, rng, slot, eps):
    """:func:`policy_choose` of the decisions that need no play table: one legal action, the
    random policy, the ``heuristic`` policy's card play (:func:`score_card_play`); -1 for
    the others (``heuristic0``, bids and choices), drawing nothing from ``rng`` then.  The
    rollout engines call it first, and :func:`policy_choose` where it says -1 (a function
    passing the play table on pays for it on every call: see :func:`score_card_play`)."""
    if k == 1:
        return 0
    if kind == KIND_RANDOM:
        return rng_below(rng, slot, k)
    if kind != KIND_HEURISTIC or not _is_card_play_i(legal, k, pp):
        return -1
    _score_card_play_i(s, legal, k, counts, pp, scores, work)
    return _pick_i(scores, k, rng, slot, eps)


@njit(cache=False)
def policy_choose(s, legal, k, tab, opts, pp, k_step, tmp, scores, work, kind, rng, slot, eps):
    """Index into ``legal[:k]`` of the policy's action: ``kind`` 0 heuristic, 1 random,
    2 heuristic0."""
    if k == 1:
        return 0
    if kind == KIND_RANDOM:
        return rng_below(rng, slot, k)
    score_policy(s, legal, k, tab, opts, pp, k_step, tmp, scores, work, kind)
    return pick(scores, k, rng, slot, eps)


# -- the parameters of a game -----------------------------------------------------------------------


def _mask(ranks) -> int:
    m = 0
    for r in ranks:
        m |= 1 << int(r)
    return m


def greedy_mask(game: Game, seats: Iterable[int]) -> int:
    """The :data:`PP_GREEDY` value that makes the card play of ``seats`` (seat indices)
    follow greedily."""
    n = int(game.n_players)
    mask = 0
    for q in seats:
        if isinstance(q, (bool, np.bool_)) or not isinstance(q, (int, np.integer)) \
                or not 0 <= q < n:
            raise ValueError(f"greedy seats must be seat indices 0..{n - 1}, got {q!r}")
        mask |= 1 << int(q)
    return mask


def greedy_params(game: Game, seats: Iterable[int]) -> np.ndarray:
    """A copy of the rollout policy's parameter vector (:func:`policy_params`) in which the
    card play of ``seats`` (seat indices) follows greedily (:data:`PP_GREEDY`)."""
    pp = policy_params(game).copy()
    pp[PP_GREEDY] = greedy_mask(game, seats)
    return pp


def policy_params(game: Game) -> np.ndarray:
    """The rollout policy's ``int64`` parameter vector of a compiled game (cached on it)."""
    pp = getattr(game, "_policy_params", None)
    if pp is not None:
        return pp
    tab = game.tab
    R = int(game.deck.n_ranks)
    T = int(game.pass_id)
    A = int(game.n_actions)
    pp = np.zeros(PP_KINDS + 4 * A, np.int64)
    fam = tab.family
    counts = tab.counts
    wild = tuple(getattr(game, "wild_slots", ()) or
                 (getattr(game, "joker_slots", ()) if hasattr(game, "wild") else ()))
    nat = R - len(wild)

    def ranks_of(f):
        rows = np.flatnonzero(fam == f)
        if rows.size == 0:
            return [], 0
        present = np.flatnonzero(counts[rows, :R].sum(0) > 0)
        return present, int(tab.length[rows].min())

    singles = np.flatnonzero(fam == SINGLE)
    single_ranks = set(np.flatnonzero(counts[singles, :R].sum(0) > 0).tolist())
    st_ranks, st_min = ranks_of(STRAIGHT)
    pc_ranks, pc_min = ranks_of(PAIR_CHAIN)
    pp[PP_R], pp[PP_NAT] = R, nat
    pp[PP_WILD] = _mask(wild)
    pp[PP_NOSINGLE] = _mask(r for r in range(R) if r not in single_ranks)
    pp[PP_STRAIGHT], pp[PP_MINS] = _mask(st_ranks), st_min
    pp[PP_PAIRS], pp[PP_MINP] = _mask(pc_ranks), pc_min
    pp[PP_KICK] = int(bool(((fam == TRIO_SINGLE) | (fam == TRIO_PAIR)).any()))
    pp[PP_SOLO] = int(game.info.teams.startswith("1 vs"))
    pp[PP_LOOSE] = int("loose alliance" in game.info.teams)
    pp[PP_NP] = int(game.n_players)
    pp[PP_PASS] = T
    pp[PP_T] = T
    pp[PP_NA] = A
    pp[PP_STATE] = int(game.state_size)
    chains = np.flatnonzero(np.isin(fam, (STRAIGHT, PAIR_CHAIN, AIRPLANE)))
    chain_ranks = np.flatnonzero(counts[chains, :R].sum(0) > 0) if chains.size else np.zeros(0)
    pp[PP_CTRLFROM] = int(max(chain_ranks)) + 1 if len(chain_ranks) else R
    bombs = [int(counts[t, :R].max()) for t in np.flatnonzero((fam == BOMB) & (tab.power > 0))
             if int((counts[t, :R] > 0).sum()) == 1]
    pp[PP_BOMBN] = min(bombs) if bombs else 99
    rockets = np.flatnonzero(fam == ROCKET)
    if rockets.size and int(counts[rockets[0], :R].max()) == 1:
        pp[PP_ROCKET] = _mask(np.flatnonzero(counts[rockets[0], :R] > 0))
    copies = np.asarray(game.deck.copies, np.int64)
    pp[PP_COPIES:PP_COPIES + len(copies)] = copies
    pp[PP_KINDS + A:PP_KINDS + A + T] = counts[:T, :16] @ np.arange(16, dtype=np.int64)
    # keeping / bidding values: the top three natural ranks and the jokers
    for i, v in enumerate((100, 60, 20)):
        if nat - 1 - i >= 0:
            pp[PP_BONUS + nat - 1 - i] = v
    for r in wild:
        pp[PP_BONUS + r] = 50
    ctrl = [r for r in range(R) if r not in set(st_ranks.tolist() if len(st_ranks) else [])]
    ctrl = [r for r in ctrl if r >= (max(st_ranks) if len(st_ranks) else R - 3)]
    for r in ctrl:
        pp[PP_CTRL + r] = int(100 + 50 * min(2, r - ctrl[0]))
    for r in wild:
        pp[PP_CTRL + r] = 150
    kinds = pp[PP_KINDS:]
    kinds[:T] = K_PLAY
    blocks = dict(BLOCK_KINDS)
    blocks.update(getattr(game, "policy_blocks", {}) or {})
    for name, (a, b) in game.blocks.items():
        if name == "play":
            continue
        if name == "pass":
            kinds[a:b] = K_PASS
            continue
        kd = blocks.get(name)
        if kd is None:
            raise ValueError(f"{game.info.name}: the rollout policy has no kind for the action "
                             f"block {name!r}; give the game a policy_blocks entry "
                             f"(one of {sorted(KIND_NAMES)})")
        kinds[a:b] = KIND_NAMES[kd]
    pp[PP_RECS] = PP_KINDS + 2 * A
    pp[PP_KINDS + 2 * A:] = pack_records(tab, pp[PP_KINDS:PP_KINDS + A],
                                         pp[PP_KINDS + A:PP_KINDS + 2 * A], A).ravel()
    if "bid" in game.blocks:
        pp[PP_BIDTH:PP_BIDTH + 3] = np.round(100 * bid_thresholds(game, pp)).astype(np.int64)
        q = getattr(game, "policy_bid_quantiles", None) or BID_QUANTILES
        pp[PP_BIDTH1:PP_BIDTH1 + 3] = np.round(
            100 * bid_thresholds(game, pp, full=1, quantiles=q)).astype(np.int64)
    setattr(game, "_policy_params", pp)  # the cache (an attribute of no Game class)
    return pp


@njit(cache=False)
def _auction_strengths(k_reset, k_legal, tab, opts, pp, state, buf, n, seed, out, full):
    c = np.zeros(16, np.int64)
    m = 0
    for i in range(n):
        k_reset(state, seed + i, tab, opts)
        seat = state[CUR]
        ho = HDR + 16 * seat
        out[m] = strength(state[ho:ho + 16], pp, c, full)
        m += 1
    return m


def bid_thresholds(game, pp: np.ndarray, n: int = 4000, seed: int = 12345, full: int = 0,
                   quantiles=BID_QUANTILES) -> np.ndarray:
    """Strength quantiles (``quantiles``, default :data:`BID_QUANTILES`; one above 1 means
    "never": a threshold no hand reaches) of the first bidder's hand in ``n`` random deals of
    ``game`` (fixed seed); ``full`` as in :func:`strength`."""
    state = game.new_state()
    buf = np.zeros(game.n_actions + 1, np.int64)
    out = np.zeros(n, np.float64)
    from .specialize import run as run_specialized

    m = run_specialized(_auction_strengths, game, f"the bid thresholds of {game.info.name}",
                        game.k_reset, game.k_legal, game.tab, game.opts, pp, state, buf,
                        np.int64(n), np.int64(seed), out, np.int64(full))
    return np.array([np.quantile(out[:m], q) if q <= 1 else 1e6 for q in quantiles])


def policy_code(policy: str) -> int:
    """The kernel's code of a policy name (:data:`POLICIES`)."""
    if not isinstance(policy, str):
        raise TypeError(f"policy must be a string, got {type(policy).__name__}")
    if policy not in POLICIES:
        raise ValueError(f"unknown rollout policy {policy!r}; choose from {', '.join(POLICIES)}")
    return POLICIES.index(policy)
