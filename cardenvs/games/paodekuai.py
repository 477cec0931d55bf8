"""跑得快 Pao De Kuai: 3 players, 48 cards (or 45), each for himself; first out wins.

Rules page: ``docs/rules/paodekuai.md``.  Everything is the shared engine's: the combination set
(:class:`~cardenvs.core.combos.ComboRules`, ``trio_kicker_plays``, ``quad_kicker_plays``), the
suited deal (:mod:`cardenvs.core.deals`), the play rules and payments (:mod:`cardenvs.core.follow`),
the observation writers (:mod:`cardenvs.core.encode`).  Where the page is silent:

* trio + 2 is family ``trio_pair``, an airplane ``airplane_pairs`` whatever the kickers, four + 3
  ``four_two_singles``; kickers are any cards of other ranks, up to four of one rank; a trio is
  never bare except as the last play (``short_finish``); with ``aaa_bomb`` AAA is a bomb only;
* the first play holds a card of the lead card's rank (suits never matter after the deal); in a
  deal given without suits the ``leader`` plays anything when he holds no 3;
* a bomb that ends the deal has won its trick and is paid; ``reward="win_loss"``: nothing before
  the end, then the sign of each seat's whole score of the deal (cards and bombs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from ..core.cards import Deck
from ..core.combos import (
    AIRPLANE_PAIRS, BOMB, FOUR_TWO_SINGLES, N_FAMILIES, TRIO, TRIO_PAIR, ComboRules, Play,
    enumerate_plays, quad_kicker_plays, trio_kicker_plays, _vec,
)
from ..core.deals import deal_suited, lead_card_deal, suited_ids
from ..core.encode import Field, Layout, put_cards, put_table, rel_seat, set_cards, set_count, set_table, zero
from ..core.follow import (
    gen_allowed, is_legal_row, legal_rows, pay_from_each, settle_cards_left, top_rank,
)
from ..core.game import Game, GameInfo
from ..core.kernels import HOT, HOT_INLINE
from ..core.options import checked_options
from ..core.state import (
    AUX0, CUR, LANDLORD, LAST_ROW, LAST_SEAT, NDOUBLE, NLOG, PHASE, PLAYS0, PLAY_START, P_DONE, REW0,
    RNG, WINNER, clear_state, hand_off, hand_size, next_seat, play_action, played_off,
    start_play_phase, log_action,
)
from ..core.table import Table, cached
from ..core.validate import StateField

if TYPE_CHECKING:
    from ..core.infostate import Hidden
    from ..core.render import TableView

ORDER = "3456789TJQKA2"
NP, NR = 3, 13
A_TOTAL = AUX0 + 1  # 3 slots: each seat's score so far (bombs, then the settlement)
A_LEADER = AUX0 + 4  # the first leader (the lead card's holder); the determinizer's marker
A_SUITED = AUX0 + 5  # 1: a suited deal (the first leader held the lead card)
A_BOMBS = AUX0 + 6  # 3 slots: bombs each seat won (paid or not)
O_PASS, O_HAND, O_LEADRANK, O_HOLD, O_MUST, O_TOP, O_PAY, O_WL, O_FREE1, O_LEAD, O_NIDS = range(11)
O_FULL = 16  # N_FAMILIES slots: cards per chain unit of each family (core.follow.is_short)
O_IDS = O_FULL + N_FAMILIES  # the suited card ids of the deck
REMOVED = {"16": ("H2", "C2", "D2", "SA"), "15": ("H2", "C2", "D2", "SA", "HK", "CK", "DK")}
HAND = {"16": 16, "15": 15}  # cards dealt a seat: the largest hand, so the longest play row


def deck_of(deck: str = "16") -> Deck:
    copies = [4] * NR
    for card in REMOVED[deck]:
        copies[ORDER.index(card[1])] -= 1
    return Deck(ORDER, tuple(copies))


@cached
def play_table(deck: str = "16", aaa_bomb: bool = False, four_with_three: bool = False,
               short_finish: bool = True) -> Table:
    """Singles, pairs, pair chains (2+), straights (5+), trio + 2, airplanes with 2 kickers a
    trio, bombs (``AAA`` with ``aaa_bomb``), four + 3 (``four_with_three``), short rows."""
    a = ORDER.index("A")
    rules = ComboRules(deck_of(deck), chain_lo=0, chain_hi=a, straight=(5, a + 1),
                       pair_chain=(2, 8), airplane=None, airplane_singles=None,
                       airplane_pairs=None, trio_single=False, trio_pair=False,
                       four_two_singles=False, four_two_pairs=False, rocket=None,
                       single_kicker_max_same=4, max_cards=HAND[deck])
    skip = (a,) if aaa_bomb else ()
    plays = [p for p in enumerate_plays(rules) if p.family != TRIO]  # trios carry kickers
    plays += trio_kicker_plays(rules, TRIO_PAIR, (1, 1), 2, short_finish, skip)
    plays += trio_kicker_plays(rules, AIRPLANE_PAIRS, (2, 5), 2, short_finish, skip)
    if aaa_bomb:
        power = max(p.bomb_power for p in plays) + 1
        plays.append(Play(_vec([(a, 3)]), BOMB, 0, power, _vec([(a, 3)]), power, 1))
    if four_with_three:
        plays += quad_kicker_plays(rules, FOUR_TWO_SINGLES, 3)
    return Table(rules.deck, plays)


# -- kernels ---------------------------------------------------------------------------------------


@njit(**HOT_INLINE)
def _context(s, o):
    """``(need, top)`` of :mod:`cardenvs.core.follow` for the seat to move."""
    seat = s[CUR]
    lr = o[O_LEADRANK]
    need = lr if o[O_HOLD] == 1 and s[NLOG] == s[PLAY_START] and s[hand_off(seat) + lr] > 0 else -1
    top = top_rank(s, seat) if o[O_TOP] == 1 and hand_size(s, next_seat(seat, NP)) == 1 else -1
    return need, top


@njit(**HOT)
def _begin(s, leader, suited):
    s[LANDLORD] = -1
    s[A_SUITED], s[A_LEADER] = suited, leader
    start_play_phase(s, leader)


@njit(cache=True, _nrt=True)  # deal_suited allocates its shuffle buffer
def reset(s, seed, tab, o):
    """Shuffle the suited deck from ``seed``; the lead card's holder leads."""
    clear_state(s, seed)
    _begin(s, deal_suited(s, o[O_IDS:O_IDS + o[O_NIDS]], NP, o[O_HAND], o[O_LEAD], RNG), 1)


@njit(cache=True, _nrt=True)  # slice assignments need the runtime (a cold path)
def reset_custom(s, seed, o, cards, leader, suited):
    clear_state(s, seed)
    for i in range(NP):
        s[hand_off(i):hand_off(i) + 16] = cards[i]
    _begin(s, leader, suited)


@njit(**HOT_INLINE)
def legal(s, tab, o, out):
    if s[PHASE] == P_DONE:
        return 0
    need, top = _context(s, o)
    return legal_rows(s, tab, out, o[O_PASS], o[O_MUST] == 1, need, top, o, O_FULL)


@njit(**HOT)
def is_legal(s, a, tab, o):
    if s[PHASE] == P_DONE:
        return False
    need, top = _context(s, o)
    return is_legal_row(s, tab, a, o[O_PASS], o[O_MUST] == 1, need, top, o, O_FULL)


@njit(**HOT_INLINE)
def gen_rows(counts, prev, tab, o, out):
    """Legal plays of a hand against ``prev`` (-1: free lead), no first-play / top-single rule."""
    return gen_allowed(counts, prev, tab, out, -1, -1, o, O_FULL)


@njit(**HOT_INLINE)
def _bomb_won(s, o, seat):
    s[A_BOMBS + seat] += 1
    pay_from_each(s, NP, seat, o[O_PAY], A_TOTAL, o[O_WL] == 0)


@njit(**HOT_INLINE)
def step(s, a, tab, o):
    """Apply legal action ``a``; a bomb that wins its trick is paid at once."""
    for i in range(NP):
        s[REW0 + i] = 0
    seat = s[CUR]
    prev, last = s[LAST_ROW], s[LAST_SEAT]
    log_action(s, NP, seat, a)
    if play_action(s, NP, tab, a, o[O_PASS]):
        if tab.power[a] > 0:
            _bomb_won(s, o, seat)
        s[PHASE] = P_DONE
        s[WINNER] = seat
        settle_cards_left(s, NP, seat, 1, 2, o[O_FREE1] == 1, A_TOTAL, o[O_WL] == 1)
    elif s[LAST_ROW] < 0 and tab.power[prev] > 0:  # a pass ended the trick of a bomb
        _bomb_won(s, o, last)


# -- observation -----------------------------------------------------------------------------------
(F_HAND, F_PLAYED, F_OTHERS, F_SIZES, F_BEAT, F_BEAT_TYPE, F_BEAT_SEAT, F_RECENT, F_LEADER,
 F_NOPLAY, F_BOMBS, F_TURN) = range(12)
D = 4
RECENT = 2 * NP


def obs_layout() -> Layout:
    """The observation fields, in order.  Relative seats: 0 = the observer, 1 = next (下家)..."""
    n, C = NP, NR * D
    return Layout([
        Field("hand", C, f"own hand ({NR} ranks x {D} planes, bit r*{D}+k-1 set when holding "
                         f">= k of rank r; rank 0 = 3 ... 12 = 2)"),
        Field("played", n * C, "cards played so far by each relative seat, seat 0 first"),
        Field("others", C, "cards not in the observer's hand and not yet played"),
        Field("hand_sizes", n, "cards in hand per relative seat / 16"),
        Field("to_beat", C, "cards of the play to beat (zeros on a free lead)"),
        Field("to_beat_type", N_FAMILIES, "one-hot family of the play to beat (see combos.FAMILY_NAMES)"),
        Field("to_beat_seat", n, "one-hot relative seat of the play to beat"),
        Field("recent", RECENT * (C + 1 + n),
              f"last {RECENT} actions, most recent first; each: cards ({C}), pass flag (1), "
              f"relative seat one-hot ({n}); zeros when absent"),
        Field("leader", n, "one-hot relative seat of the first leader (the lead card's holder)"),
        Field("no_play", n, "per relative seat: 1 while it has made no play (被关 if the deal ends)"),
        Field("bombs", n, "per relative seat: bombs that won their trick / 4, clipped to 1"),
        Field("turn", n, "one-hot relative seat to move (zeros once the deal is over)"),
    ])


@njit(**HOT_INLINE)
def encode(s, seat, tab, o, off, out):
    """Write ``seat``'s observation (every entry; the values of :func:`encode_reference`)."""
    set_cards(out, off[F_HAND], s, hand_off(seat), NR, D)
    dst = out[off[F_OTHERS]:off[F_OTHERS] + NR * D]
    for r in range(NR):
        c = o[O_IDS + o[O_NIDS] + r] - s[hand_off(seat) + r]
        for q in range(NP):
            c -= s[played_off(NP, q) + r]
        set_count(dst, D * r, c, D)
    set_table(s, seat, tab, NP, NR, D, 16, o[O_PASS], True, s[PLAY_START], RECENT,
              off[F_PLAYED], off[F_SIZES], off[F_BEAT], off[F_BEAT_TYPE], off[F_BEAT_SEAT],
              off[F_RECENT], out)
    zero(out, off[F_LEADER], off[F_BOMBS] + NP)
    zero(out, off[F_TURN], off[F_TURN] + NP)
    out[off[F_LEADER] + rel_seat(s[A_LEADER], seat, NP)] = 1.0
    for q in range(NP):
        k = rel_seat(q, seat, NP)
        out[off[F_NOPLAY] + k] = 1.0 if s[PLAYS0 + q] == 0 else 0.0
        out[off[F_BOMBS] + k] = min(s[A_BOMBS + q], 4) / 4.0
    if s[PHASE] != P_DONE:
        out[off[F_TURN] + rel_seat(s[CUR], seat, NP)] = 1.0


@njit(cache=True)
def encode_reference(s, seat, tab, o, off, out):
    """The plain encoder (zero everything, then set the ones): the reference of :func:`encode`."""
    out[:] = 0.0
    ho = hand_off(seat)
    put_cards(out, off[F_HAND], s[ho:ho + 16], NR, D)
    others = np.zeros(16, np.int64)
    for r in range(NR):
        others[r] = o[O_IDS + o[O_NIDS] + r] - s[ho + r]
    put_table(s, seat, tab, NP, NR, D, 16, o[O_PASS], True, s[PLAY_START], RECENT,
              off[F_PLAYED], off[F_SIZES], off[F_BEAT], off[F_BEAT_TYPE], off[F_BEAT_SEAT],
              off[F_RECENT], others, out)
    put_cards(out, off[F_OTHERS], others, NR, D)
    out[off[F_LEADER] + (s[A_LEADER] - seat) % NP] = 1.0
    for q in range(NP):
        out[off[F_NOPLAY] + (q - seat) % NP] = 1.0 if s[PLAYS0 + q] == 0 else 0.0
        out[off[F_BOMBS] + (q - seat) % NP] = min(s[A_BOMBS + q], 4) / 4.0
    if s[PHASE] != P_DONE:
        out[off[F_TURN] + (s[CUR] - seat) % NP] = 1.0


# -- the Python game object ------------------------------------------------------------------------


class PaoDeKuai(Game):
    """跑得快 Pao De Kuai with one option set.  Action blocks: ``play``, ``pass``."""

    k_reset = staticmethod(reset)
    k_legal = staticmethod(legal)
    k_is_legal = staticmethod(is_legal)
    k_step = staticmethod(step)
    k_encode = staticmethod(encode)

    deal_keys = ("hands", "leader")
    OPTIONS = dict(deck="16", first_lead="S3", first_play_has_lead_card=True, aaa_bomb=False,
                   four_with_three=False, short_finish=True, must_beat=True,
                   top_single_on_last_card=True, one_card_free=False, bomb_pay=10,
                   reward="score")

    def __init__(self, *, deck: str = "16", first_lead: str = "S3",
                 first_play_has_lead_card: bool = True, aaa_bomb: bool = False,
                 four_with_three: bool = False, short_finish: bool = True,
                 must_beat: bool = True, top_single_on_last_card: bool = True,
                 one_card_free: bool = False, bomb_pay: int = 10, reward: str = "score"):
        self.options = checked_options(locals(), self.OPTIONS, dict(
            deck=("16", "15"), first_lead=("S3", "H3"), bomb_pay=(0, 10**6),
            reward=("score", "win_loss")))
        deck = self.options["deck"]
        self.hand_cards = self.max_hand = HAND[deck]
        self.info = GameInfo(name="paodekuai", title="Pao De Kuai", n_players=NP,
                             deck_size=3 * self.hand_cards, zero_sum=True, teams="each for himself",
                             rules_page="docs/rules/paodekuai.md", options=dict(self.OPTIONS))
        self.table = play_table(deck, bool(aaa_bomb), bool(four_with_three), bool(short_finish))
        self.deck = self.table.deck
        T = len(self.table)
        self.blocks = {"play": (0, T), "pass": (T, T + 1)}
        self.layout = obs_layout()
        self.ids = suited_ids(self.deck, REMOVED[deck])
        o = np.zeros(O_IDS + len(self.ids) + 16, np.int64)
        o[O_PASS], o[O_HAND], o[O_LEADRANK] = T, self.hand_cards, 0
        o[O_HOLD], o[O_MUST] = int(first_play_has_lead_card), int(must_beat)
        o[O_TOP], o[O_PAY] = int(top_single_on_last_card), bomb_pay
        o[O_WL], o[O_FREE1] = int(reward == "win_loss"), int(one_card_free)
        o[O_LEAD] = 0 if first_lead == "S3" else 1  # card id rank * 4 + suit: ♠3 0, ♥3 1
        o[O_NIDS] = len(self.ids)
        o[O_FULL + TRIO_PAIR] = o[O_FULL + AIRPLANE_PAIRS] = 5 if short_finish else 0
        o[O_IDS:O_IDS + len(self.ids)] = self.ids
        o[O_IDS + len(self.ids):O_IDS + len(self.ids) + NR] = self.deck.copies
        super().__init__(o)

    def state_fields(self) -> list:
        big = 10**12
        return [StateField("PHASE", PHASE, 1, 2), StateField("A_TOTAL", A_TOTAL, -big, big, NP),
                StateField("A_LEADER", A_LEADER, 0, NP - 1), StateField("A_SUITED", A_SUITED, 0, 1),
                StateField("A_BOMBS", A_BOMBS, 0, 16, NP), StateField("NDOUBLE", NDOUBLE, 0, 16),
                StateField("LANDLORD", LANDLORD, -1, -1)]

    def _block_string(self, block: str, i: int) -> str:
        return "pass"

    def _parse_block_string(self, text: str):
        return self.pass_id if text.lower() == "pass" else None

    def custom_deal(self, state: np.ndarray, options: dict, seed: int) -> None:
        """Set up ``state`` from ``{"hands": [h0, h1, h2]}`` with suited cards (the lead card
        names the leader) or unsuited ones plus ``"leader"`` (rules README, convention 8)."""
        cards, leader, suited = lead_card_deal(self.deck, self.ids, options, NP, self.hand_cards,
                                               int(self.opts[O_LEAD]), self.options["first_lead"])
        reset_custom(state, np.int64(seed), self.opts, np.ascontiguousarray(cards, np.int64),
                     leader, int(suited))

    def hidden(self, state: np.ndarray, seat: int) -> Hidden:
        """The other two hands; in a suited deal the first leader held the lead card; under
        ``must_beat`` a pass says the passer could not beat (``Hidden.legal_passes``)."""
        from ..core.infostate import Hidden, hand_piles, holder_of_card

        h = Hidden(piles=hand_piles(state, NP, seat), legal_passes=bool(self.opts[O_MUST]))
        if int(state[A_SUITED]) == 1:
            holder_of_card(h, NP, seat, int(state[A_LEADER]), int(self.opts[O_LEADRANK]), A_LEADER)
        return h

    def public_facts(self, state: np.ndarray) -> dict:
        """What a replay shows besides the cards: the first leader, bombs won, scores so far."""
        return {"leader": int(state[A_LEADER]), "bombs": state[A_BOMBS:A_BOMBS + NP].tolist(),
                "scores": state[A_TOTAL:A_TOTAL + NP].tolist()}

    def table_view(self, state: np.ndarray) -> TableView:
        """The table as :class:`cardenvs.core.render.TableView` (read by the text and the
        image renders): the first leader, the bombs won and the scores in the header; no
        kitty (the unused cards stay hidden)."""
        from ..core.render import climbing_view

        view = climbing_view(self, state, role_name="")
        f = self.public_facts(state)
        view.facts = [f"leader: player_{f['leader']}", f"bombs won: {f['bombs']}",
                      f"scores: {f['scores']}"]
        view.lines = [ln for ln in view.lines if ln.label != "kitty"]
        return view

    def render(self, state: np.ndarray) -> str:
        """The table as text (``render_mode="ansi"``)."""
        from ..core.render import text_of

        return text_of(self.table_view(state))
