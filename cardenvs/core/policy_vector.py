"""The rollout policy's parameter vector: its layout, the action kinds and the tuning constants.

:func:`cardenvs.core.policy.policy_params` compiles a game into one ``int64`` vector; the
offsets here (``PP_*``) name its slots, ``K_*`` the kind of each action id, ``REC_*`` the
fields of a packed action record (:func:`cardenvs.core.policy_fast.pack_records`).  The
constants below them tune the ``heuristic`` and ``heuristic0`` card play (see
:mod:`cardenvs.core.policy`).
"""

from __future__ import annotations

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
