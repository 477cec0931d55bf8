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

**Modules.**  This module is the game object (:class:`Wulong`: options, action strings,
positions, the rules queries, custom deals, text and what each seat sees) and the name the
registry and users import; the parts it assembles live beside it:
:mod:`~cardenvs.games.wulong_layout` (constants, the state and options vectors),
:mod:`~cardenvs.games.wulong_moves` (combination set, play table, move generator),
:mod:`~cardenvs.games.wulong_wilds` (realisations and the declarer's top-card rule),
:mod:`~cardenvs.games.wulong_deal` (the deal and the first leader),
:mod:`~cardenvs.games.wulong_play` (legal actions and the play-phase state machine) and
:mod:`~cardenvs.games.wulong_obs` (the observation).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np
from numpy.typing import ArrayLike

from ..core.cards import SUITS
from ..core.game import MAX_COUNT, Game, GameInfo
from ..core.options import check_bool, check_choice, check_int
from ..core.state import (
    BID, BIDDER, BIDS0, CUR, LANDLORD, LAST_ROW, LAST_SEAT, NDOUBLE, NPASS, NREDEAL, P_DONE,
    P_PLAY, PHASE, WINNER, hand_off, kitty_off,
)
from ..core.validate import StateField
from ..core.wild import find_wild, format_wild, pack_wild_rows, parse_wild, sort_wild, wild_rows
from .wulong_deal import parse_suited, reset, reset_custom
from .wulong_layout import (
    A_DEALER, A_LEADER, A_LOSER, A_NFAIL, A_NOUT, A_NREC, A_PASSED, A_PEND, EV, FIRST_LEAD_SUITS,
    HAND, JB, JOKER_ORDERS, JR, K_REC, MUST_MODES, N_OPTS, N_UNUSED, NAT, NCARDS, NP, NPICK, NR,
    O_COMPLETE, O_DECL, O_DEPTH, O_DONE, O_JALL, O_LK, O_MUST, O_NRANKS, O_PASS, O_PICKB,
    O_PICKR, O_RECENT, O_REWARD, O_SUIT0, O_T, O_WB, O_WR, O_WSLOTS, ORDER, P_WILD, PHASE_NAMES,
    ST_ACTIVE, ST_FAILED, ST_OUT, STATE_SIZE, STATUS_NAMES, WILD_MODES, X_DECL, X_FAILPOS,
    X_LB, X_LR, X_OUTPOS, X_PB, X_PLEN, X_PR, X_PSEQ, X_REC, X_STATUS,
)
from .wulong_moves import combo_rules, lookups, play_table, wild_slots
from .wulong_obs import encode, obs_layout
from .wulong_play import is_legal, legal, step
from .wulong_wilds import scan_realisations

# names other modules import from here, this module being the game's (the registry's move
# generator, the tests' kernels and state offsets)
from ..core.state import played_off  # noqa: F401
from .wulong_deal import first_leader  # noqa: F401
from .wulong_moves import gen_rows, wulong_plays  # noqa: F401
from .wulong_wilds import top_card  # noqa: F401

if TYPE_CHECKING:
    from ..core.infostate import Hidden
    from ..core.render import TableView


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
        lk = lookups(self.table)
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
        o[O_SUIT0:O_SUIT0 + 4] = FIRST_LEAD_SUITS[first_lead]
        pack_wild_rows(o, wr, O_JALL, O_WSLOTS, O_T, N_OPTS)
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
                cards = parse_suited(text, f"hand of seat {i}")
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
