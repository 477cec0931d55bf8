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

State: the shared layout (:mod:`cardenvs.core.state`) plus this game's region from ``EXT`` (the
``X_*`` offsets of :mod:`cardenvs.games.niangniang_layout`): places, the draw's 3-receivers, the 娘娘's dealt / taken / returned
cards, the joker realisation of the pending play and of the play to beat, what each seat's
jokers stood for, match totals, the last hand's scores and places, a ring of recent moves.
``PLAYED`` holds the physical cards each seat played (jokers as ``B``/``R``); the effective
plays are ``PLAYED - jokers + stood-for``.

Modules: :mod:`~cardenvs.games.niangniang_layout` (sizes, phases, the state layout, the options
vector), :mod:`~cardenvs.games.niangniang_moves` (the combination set, the play table, the
legal-action kernels), :mod:`~cardenvs.games.niangniang_rules` (the ``reset`` and ``step``
kernels: the draw, the deal, the exchange, plays, places, scoring, the match),
:mod:`~cardenvs.games.niangniang_obs` (the observation and its kernel); this one holds the game
object :class:`Niangniang` and re-exports the names other modules import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from ..core.combos import ROCKET
from ..core.game import MAX_COUNT, Game, GameInfo
from ..core.options import check_bool, check_choice, check_int
from ..core.state import (
    BID, BIDDER, BIDS0, CUR, LANDLORD, LAST_ROW, LAST_SEAT, NDOUBLE, NPASS, NREDEAL, PHASE,
    P_DONE, P_PLAY, hand_off, kitty_off, played_off,
)
from ..core.validate import StateField
from ..core.wild import WildPlay, find_wild, format_wild, pack_wild_rows, sort_wild, wild_rows
# the game's numbers, kernels and observation are the modules below; the names other modules
# and the tests import from this one (the layout, the kernels, the observation) are re-exported
from .niangniang_layout import (  # noqa: F401
    A_HANDNO, A_JMIN, A_NRET, A_NSTUCK, A_NTAKE, A_NTOP, A_PASSED, A_PENDING, BOTTOM, EXT, FAST,
    FIRST_NN, HAND, HZ_WHEN, JB, JR, N_EXCH, N_OPTS, N_REC, NCARDS, NNAT, NP, NR, O_BOMBSONLY,
    O_DEAD, O_FIRSTNN, O_HZSCOPE, O_HZWHEN, O_JALL, O_JOKER0, O_MATCH, O_MAXHANDS, O_PASS,
    O_RET0, O_REVEAL0, O_REWARD, O_SCORING, O_T, O_TAKE0, O_TARGET, O_THREE, O_WSLOTS, ORDERS,
    P_JOKER, P_RETURN, P_REVEAL, P_TAKE, PHASE_NAMES, SCORINGS, STATE_SIZE, X_LAST, X_LJ,
    X_LPLACE, X_NREC, X_OFFER, X_ORIG, X_PJ, X_PLACE, X_REC, X_RET, X_SCORE, X_STOOD, X_TAKEN,
    X_THREES, X_TOTAL, X_TRUNC,
)
from .niangniang_moves import (  # noqa: F401
    _row_fits, combo_rules, is_legal, legal, legal_wild_rows, play_table,
)
from .niangniang_obs import encode, obs_layout
from .niangniang_rules import hand_scores, huozi, reset, reset_custom, step  # noqa: F401

if TYPE_CHECKING:
    from ..core.infostate import Hidden
    from ..core.render import TableView


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
        pack_wild_rows(o, self.wild, O_JALL, O_WSLOTS, O_T, N_OPTS)
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
