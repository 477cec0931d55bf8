"""斗地主 Dou Dizhu: the rules of the 3-player game (and the shared kernels of the 4-player one).

Rules page: ``docs/rules/doudizhu.md`` (3 players).  Everything the Dou Dizhu family
does beyond the shared engine lives here: the combination set (:func:`combo_rules`), the
auction, the kitty, scoring, and the observation.  Rules variants (the ``preset`` option, which
reproduces DouZero's or RLCard's move set) live in :mod:`cardenvs.games.doudizhu_presets`.

Rules-variant statement (defaults first):

* ``auction="bid"``: bids 1/2/3, strictly rising, re-entry allowed; ends after a 3 or after
  ``n-1`` passes in a row following a bid.  ``"fixed"``: seat 0 is landlord at bid 1.
* ``all_pass="void"``: everyone passing ends the deal with 0 for all; ``"redeal"`` deals again
  (new random first bidder) up to ``max_redeals`` times, then void.
* the first bidder is a uniformly random seat (stands for the face-up marker card).
* the kitty goes to the landlord and is public (3 players).
* stake = bid x 2^(bombs + rockets); landlord +2 stake / farmers -stake (or the reverse).
  ``spring=True`` doubles once more for 春天 / 反春.  ``reward="win_loss"`` pays +-1.
* ``preset="seed"`` (the rules page), ``"douzero"``, ``"rlcard"``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numba import njit

from ..core.cards import Deck
from ..core.combos import ComboRules
from ..core.encode import (
    Field, Layout, auction_fields, planes_doc, put_auction, put_cards, put_seat_or_none,
    put_table, rel_seat, set_auction, set_cards, set_count, set_seat_or_none, set_table,
    table_fields, zero,
)
from ..core.game import Game, GameInfo
from ..core.options import check_bool, check_choice, check_int
from ..core.kernels import HOT, HOT_INLINE, rng_below, shuffle
from ..core.state import (
    clear_state,
    BID, BIDDER, BIDS0, CUR, FIRST, HDR, LANDLORD, NDOUBLE, NLOG, NPASS, NREDEAL, PHASE, PLAYS0,
    PLAY_START, P_AUCTION, P_DONE, P_PLAY, REW0, RNG, WINNER, deal_in_order, hand_off,
    is_legal_play_or_bid, kitty_off, legal_play_or_bid, log_action, log_off, open_auction,
    play_action, played_off, put_deal, settle_one_vs_rest, speak, start_play_phase,
)
from ..core.table import Table, cached
from ..core.validate import CardRegion, StateField

if TYPE_CHECKING:
    from ..core.infostate import Hidden
    from ..core.render import TableView

ORDER = "3456789TJQKA2BR"
MAX_BID = 3

# -- options vector (read by the kernels) ------------------------------------------------------
O_NP, O_HAND, O_KITTY, O_AUCTION, O_ALLPASS, O_MAXREDEAL, O_SPRING, O_REWARD = range(8)
O_KITTY_PUBLIC, O_PASS, O_NRANKS, O_DEPTH, O_RECENT, O_FIXED_LL, O_DECKLEN = 8, 9, 10, 11, 12, 13, 14
N_OPTS = 16  # the deck's cards (rank indices) follow at o[N_OPTS:N_OPTS + o[O_DECKLEN]],
# then its count per rank index (16 slots)


def combo_rules(n_players: int = 3) -> ComboRules:
    """The combination set of the rules page for 3 or 4 players."""
    if n_players == 3:
        return ComboRules(Deck.standard(ORDER, 1))
    return ComboRules(
        Deck.standard(ORDER, 2),
        straight=(5, 12), pair_chain=(3, 12), airplane=(2, 11), airplane_singles=None,
        airplane_pairs=(2, 6), trio_single=False, four_two_singles=False, four_two_pairs=False,
        joker_pairs=True, bomb_sizes=(4, 5, 6, 7, 8), bomb_order="size_rank",
        rocket=(("B", 2), ("R", 2)), double_min_bomb=6, max_cards=33,
    )


# -- kernels ---------------------------------------------------------------------------------------


@njit(cache=True, _nrt=True)  # allocates its shuffle buffer
def _deal(s, o):
    n = o[O_NP]
    for i in range(HDR, log_off(n)):
        s[i] = 0
    m = o[O_DECKLEN]
    cards = o[N_OPTS:N_OPTS + m].copy()
    shuffle(cards, m, s, RNG)
    deal_in_order(s, n, cards, o[O_HAND], m)


@njit(**HOT)
def _start_auction(s, o):
    n = o[O_NP]
    s[PHASE] = P_AUCTION
    open_auction(s)
    s[FIRST] = rng_below(s, RNG, n)
    s[CUR] = s[FIRST]


@njit(**HOT)
def start_play(s, o, landlord, bid):
    """Make ``landlord`` the landlord at ``bid``: he takes the kitty and leads."""
    n = o[O_NP]
    s[LANDLORD] = landlord
    s[BID] = bid
    s[BIDDER] = landlord
    ko = kitty_off(n)
    ho = hand_off(landlord)
    for r in range(16):
        s[ho + r] += s[ko + r]
    start_play_phase(s, landlord)


@njit(**HOT)
def _finish(s, o, winner):
    n = o[O_NP]
    s[PHASE] = P_DONE
    s[WINNER] = winner
    ll = s[LANDLORD]
    if winner < 0:  # void deal
        for i in range(n):
            s[REW0 + i] = 0
        return
    ll_wins = winner == ll
    stake = s[BID] << s[NDOUBLE]
    if o[O_SPRING] == 1:
        farmer_plays = 0
        for i in range(n):
            if i != ll:
                farmer_plays += s[PLAYS0 + i]
        if (ll_wins and farmer_plays == 0) or ((not ll_wins) and s[PLAYS0 + ll] == 1):
            stake *= 2
    settle_one_vs_rest(s, n, ll, ll_wins, stake, o[O_REWARD] == 1)


@njit(**HOT)
def _begin(s, o, first_bidder, landlord, bid):
    _start_auction(s, o)
    if first_bidder >= 0:
        s[FIRST] = first_bidder
        s[CUR] = first_bidder
    if landlord >= 0:
        start_play(s, o, landlord, bid)
    elif o[O_AUCTION] == 1:
        start_play(s, o, o[O_FIXED_LL], 1)


@njit(**HOT)
def reset(s, seed, tab, o):
    """Deal a new deal from ``seed`` and start the auction (or the play, ``auction="fixed"``)."""
    clear_state(s, seed)
    _deal(s, o)
    _begin(s, o, -1, -1, 0)


@njit(**HOT)
def reset_custom(s, seed, o, cards, first_bidder, landlord, bid):
    """Start from a given deal: ``cards[i]`` is seat i's hand, ``cards[n]`` the kitty.

    ``first_bidder`` / ``landlord`` of -1 mean "draw from the seed" / "hold the auction".
    """
    clear_state(s, seed)
    put_deal(s, o[O_NP], cards)
    _begin(s, o, first_bidder, landlord, bid)


@njit(**HOT_INLINE)
def legal(s, tab, o, out):
    return legal_play_or_bid(s, tab, out, o[O_PASS], MAX_BID)


@njit(**HOT)
def is_legal(s, a, tab, o):
    return is_legal_play_or_bid(s, tab, a, o[O_PASS], MAX_BID)


@njit(**HOT_INLINE)
def step(s, a, tab, o):
    """Apply legal action ``a`` for the seat to move."""
    n = o[O_NP]
    seat = s[CUR]
    pass_id = o[O_PASS]
    log_action(s, n, seat, a)
    if s[PHASE] == P_AUCTION:
        b = speak(s, seat, a, pass_id)
        if b == 0:
            s[NPASS] += 1
            if s[BID] > 0 and s[NPASS] >= n - 1:
                start_play(s, o, s[BIDDER], s[BID])
            elif s[BID] == 0 and s[NPASS] >= n:
                if o[O_ALLPASS] == 1 and s[NREDEAL] < o[O_MAXREDEAL]:
                    s[NREDEAL] += 1
                    _deal(s, o)
                    _start_auction(s, o)
                else:
                    _finish(s, o, -1)
            else:
                s[CUR] = (seat + 1) % n
        else:
            s[NPASS] = 0
            if b >= MAX_BID:
                start_play(s, o, seat, b)
            else:
                s[CUR] = (seat + 1) % n
        return
    if s[PHASE] == P_PLAY and play_action(s, n, tab, a, pass_id):
        _finish(s, o, seat)


# -- observation -----------------------------------------------------------------------------------
(F_HAND, F_KITTY, F_PLAYED, F_OTHERS, F_SIZES, F_BEAT, F_BEAT_TYPE, F_BEAT_SEAT, F_RECENT,
 F_LANDLORD, F_BID, F_AUCTION, F_DOUBLE, F_TURN, F_PHASE) = range(15)


def obs_layout(n: int, n_ranks: int, depth: int, recent: int, hand_max: int) -> Layout:
    """The observation fields, in order.  Relative seats: 0 = the observer, 1 = next (下家)..."""
    C = n_ranks * depth
    return Layout([
        Field("hand", C, f"own hand ({planes_doc(n_ranks, depth)})"),
        Field("kitty", C, "kitty cards, once known to the observer (after the auction; "
                          "3 players: public, 4 players: landlord only)"),
        *table_fields(n, C, recent, hand_max, "cards not in the observer's hand and not yet "
                      "played (other hands and an undistributed kitty)"),
        Field("landlord", n + 1, "one-hot relative seat of the landlord; last slot: not decided"),
        *auction_fields(n, MAX_BID, "one-hot highest bid so far (0 = none)",
                        "its last auction action"),
        Field("doublings", 1, "bombs/rockets that doubled the stake so far, / 16, clipped to 1"),
        Field("turn", n, "one-hot relative seat to move"),
        Field("phase", 3, "one-hot phase: auction, play, done"),
    ])


@njit(**HOT_INLINE)
def encode(s, seat, tab, o, off, out):
    """Write ``seat``'s observation into ``out`` (float32; every entry is written).

    The values of :func:`encode_reference` (zero-fill, then set the ones), written field by
    field with the dense writers of :mod:`cardenvs.core.encode`: no zero-fill of the whole
    vector, no allocation, no reference counting.
    """
    n = o[O_NP]
    R = o[O_NRANKS]
    D = o[O_DEPTH]
    ph = s[PHASE]
    ho = hand_off(seat)
    set_cards(out, off[F_HAND], s, ho, R, D)
    ll = s[LANDLORD]
    ko = kitty_off(n)
    if ph != P_AUCTION and ll >= 0 and (o[O_KITTY_PUBLIC] == 1 or seat == ll):
        set_cards(out, off[F_KITTY], s, ko, R, D)
    else:
        zero(out, off[F_KITTY], off[F_KITTY] + R * D)
    # unseen cards: the deck minus the own hand minus every seat's played cards
    dc = N_OPTS + o[O_DECKLEN]  # the deck's count per rank (see DouDizhu.__init__)
    dst = out[off[F_OTHERS]:off[F_OTHERS] + R * D]
    p0 = played_off(n, 0)
    for r in range(R):
        c = o[dc + r] - s[ho + r]
        for q in range(n):
            c -= s[p0 + 16 * q + r]
        set_count(dst, D * r, c, D)
    set_table(s, seat, tab, n, R, D, o[O_HAND] + o[O_KITTY], o[O_PASS], True,
              s[PLAY_START] if ph != P_AUCTION else s[NLOG] + 1, o[O_RECENT],
              off[F_PLAYED], off[F_SIZES], off[F_BEAT], off[F_BEAT_TYPE], off[F_BEAT_SEAT],
              off[F_RECENT], out)
    set_seat_or_none(out, off[F_LANDLORD], ll, seat, n)
    set_auction(s, seat, n, MAX_BID, off[F_BID], off[F_AUCTION], out)
    out[off[F_DOUBLE]] = min(s[NDOUBLE], 16) / 16.0
    o_turn = off[F_TURN]
    zero(out, o_turn, o_turn + n)
    if ph != P_DONE:
        out[o_turn + rel_seat(s[CUR], seat, n)] = 1.0
    o_ph = off[F_PHASE]
    zero(out, o_ph, o_ph + 3)
    out[o_ph + min(ph, 2)] = 1.0


@njit(cache=True)
def encode_reference(s, seat, tab, o, off, out):
    """The first encoder, kept as the reference of :func:`encode` (the differential tests):
    zero the whole vector, then set the ones of each field."""
    n = o[O_NP]
    R = o[O_NRANKS]
    D = o[O_DEPTH]
    out[:] = 0.0
    ho = hand_off(seat)
    put_cards(out, off[F_HAND], s[ho:ho + 16], R, D)
    ll = s[LANDLORD]
    ko = kitty_off(n)
    if s[PHASE] != P_AUCTION and ll >= 0 and (o[O_KITTY_PUBLIC] == 1 or seat == ll):
        put_cards(out, off[F_KITTY], s[ko:ko + 16], R, D)
    others = np.zeros(16, np.int64)
    for i in range(o[O_DECKLEN]):
        others[o[N_OPTS + i]] += 1
    for r in range(16):
        others[r] -= s[ho + r]
    put_table(s, seat, tab, n, R, D, o[O_HAND] + o[O_KITTY], o[O_PASS], True,
              s[PLAY_START] if s[PHASE] != P_AUCTION else s[NLOG] + 1, o[O_RECENT],
              off[F_PLAYED], off[F_SIZES], off[F_BEAT], off[F_BEAT_TYPE], off[F_BEAT_SEAT],
              off[F_RECENT], others, out)
    put_cards(out, off[F_OTHERS], others, R, D)
    put_seat_or_none(out, off[F_LANDLORD], ll, seat, n)
    put_auction(s, seat, n, MAX_BID, off[F_BID], off[F_AUCTION], out)
    out[off[F_DOUBLE]] = min(s[NDOUBLE], 16) / 16.0
    if s[PHASE] != P_DONE:
        out[off[F_TURN] + (s[CUR] - seat) % n] = 1.0
    out[off[F_PHASE] + min(s[PHASE], 2)] = 1.0


# -- the Python game object ------------------------------------------------------------------------

PRESETS = ("seed", "douzero", "rlcard")


@cached
def play_table(n_players: int = 3, preset: str = "seed") -> Table:
    """The (cached) play table of an option set."""
    from .doudizhu_presets import preset_plays

    rules = combo_rules(n_players)
    plays, follow = preset_plays(rules, preset, n_players)
    return Table(rules.deck, plays, follow)


class DouDizhu(Game):
    """Dou Dizhu for 3 (``doudizhu``) or 4 players (``doudizhu4``) with one option set.

    Action blocks: ``play`` (one row per canonical play and reading), ``pass`` (auction and
    play), ``bid`` (bid 1, 2, 3).
    """

    k_reset = staticmethod(reset)
    k_legal = staticmethod(legal)
    k_is_legal = staticmethod(is_legal)
    k_step = staticmethod(step)
    k_encode = staticmethod(encode)

    deal_keys = ("hands", "kitty", "landlord", "bid", "first_bidder")
    OPTIONS = dict(auction="bid", all_pass="void", max_redeals=3, spring=False,
                   reward="score", preset="seed")

    def __init__(self, n_players: int = 3, *, auction: str = "bid", all_pass: str = "void",
                 max_redeals: int = 3, spring: bool = False, reward: str = "score",
                 preset: str = "seed"):
        check_choice("auction", auction, ("bid", "fixed"))
        check_choice("all_pass", all_pass, ("void", "redeal"))
        check_choice("reward", reward, ("score", "win_loss"))
        check_choice("preset", preset, PRESETS if n_players == 3 else ("seed",))
        check_int("max_redeals", max_redeals, 0, 10**6)
        check_bool("spring", spring)
        self.options: dict[str, Any] = dict(
            auction=auction, all_pass=all_pass, max_redeals=int(max_redeals),
            spring=bool(spring), reward=reward, preset=preset)
        name = "doudizhu" if n_players == 3 else "doudizhu4"
        self.info = GameInfo(
            name=name,
            title="Dou Dizhu" if n_players == 3 else "Dou Dizhu, 4 players",
            n_players=n_players, deck_size=54 if n_players == 3 else 108,
            zero_sum=True, teams=f"1 vs {n_players - 1}",
            rules_page="docs/rules/doudizhu.md", options=dict(self.OPTIONS),
        )
        self.table = play_table(n_players, preset)
        self.deck = self.table.deck
        T = len(self.table)
        self.blocks = {"play": (0, T), "pass": (T, T + 1), "bid": (T + 1, T + 1 + MAX_BID)}
        hand = 17 if n_players == 3 else 25
        kitty = 3 if n_players == 3 else 8
        depth = 4 if n_players == 3 else 8
        self.hand_cards, self.kitty_cards = hand, kitty
        self.max_hand = hand + kitty
        self.layout = obs_layout(n_players, self.deck.n_ranks, depth, 2 * n_players, hand + kitty)
        deck_cards = np.repeat(np.arange(self.deck.n_ranks), self.deck.copies).astype(np.int64)
        o = np.zeros(N_OPTS + len(deck_cards) + 16, np.int64)
        o[O_NP], o[O_HAND], o[O_KITTY] = n_players, hand, kitty
        o[O_AUCTION] = 1 if auction == "fixed" else 0
        o[O_ALLPASS] = 1 if all_pass == "redeal" else 0
        o[O_MAXREDEAL] = max_redeals
        o[O_SPRING] = int(spring)
        o[O_REWARD] = 1 if reward == "win_loss" else 0
        o[O_KITTY_PUBLIC] = 1 if n_players == 3 else 0
        o[O_PASS] = T
        o[O_NRANKS], o[O_DEPTH], o[O_RECENT] = self.deck.n_ranks, depth, 2 * n_players
        o[O_FIXED_LL] = 0
        o[O_DECKLEN] = len(deck_cards)
        o[N_OPTS:N_OPTS + len(deck_cards)] = deck_cards
        o[N_OPTS + len(deck_cards):N_OPTS + len(deck_cards) + self.deck.n_ranks] = self.deck.copies
        super().__init__(o)

    # -- what a valid state is (Game.check_state) ------------------------------------------------
    def state_fields(self) -> list:
        n = self.n_players
        seat = (0, n - 1)
        return [
            StateField("FIRST", FIRST, *seat),
            StateField("BID", BID, 0, MAX_BID),
            StateField("NREDEAL", NREDEAL, 0, self.options["max_redeals"]),
            StateField("BIDS", BIDS0, -1, MAX_BID, n),
            StateField("BIDS (no seat)", BIDS0 + n, -1, -1, 8 - n),
            StateField("unused", PLAY_START + 1, 0, 0, HDR - PLAY_START - 1),
            # the play phase has a landlord at a bid; the auction has none
            StateField("LANDLORD", LANDLORD, *seat, when=(PHASE, P_PLAY, P_PLAY)),
            StateField("BID", BID, 1, MAX_BID, when=(PHASE, P_PLAY, P_PLAY)),
            StateField("LANDLORD", LANDLORD, -1, -1, when=(PHASE, P_AUCTION, P_AUCTION)),
        ]

    def card_regions(self) -> list:
        n = self.n_players
        # the kitty joins the landlord's hand (and stays as a record of what it was)
        return ([CardRegion(f"hand of seat {i}", hand_off(i)) for i in range(n)]
                + [CardRegion("kitty", kitty_off(n), when=(LANDLORD, -1, -1))]
                + [CardRegion(f"played by seat {i}", played_off(n, i)) for i in range(n)])

    # -- action strings ------------------------------------------------------------------------
    def _block_string(self, block: str, i: int) -> str:
        return "pass" if block == "pass" else f"bid {i + 1}"

    def _parse_block_string(self, text: str):
        t = text.lower()
        if t == "pass":
            return self.pass_id
        return self._parse_bid(text, MAX_BID)

    # -- custom deals ----------------------------------------------------------------------------
    def custom_deal(self, state: np.ndarray, options: dict, seed: int) -> None:
        """Set up ``state`` from ``{"hands": [...], "kitty": "...", "landlord": i, "bid": b}``.

        ``first_bidder`` may also be given; otherwise it is drawn from ``seed``.
        """
        from ..core.deals import check_deal_keys, deal_rows, parse_deal, solo_and_bid

        n = self.n_players
        check_deal_keys(options, self.deal_keys)
        hands, kitty = parse_deal(self.deck, options, n, self.hand_cards, self.kitty_cards)
        ll, bid = solo_and_bid(options, "landlord", n, MAX_BID)
        fb = options.get("first_bidder")
        if fb is not None:
            check_int("first_bidder", fb, 0, n - 1)
        reset_custom(state, np.int64(seed), self.opts, deal_rows(hands, kitty),
                     -1 if fb is None else int(fb), -1 if ll is None else int(ll),
                     0 if bid is None else int(bid))

    # -- what is hidden from whom (read by cardenvs.core.infostate) ------------------------------
    def hidden(self, state: np.ndarray, seat: int) -> Hidden:
        """What ``seat`` cannot see: the other hands; the kitty during the auction; after it
        (3 players) the shown kitty, less what the landlord has played of it, is known to be
        in his hand; (4 players) a farmer does not see the kitty, a uniform 8-card subset of
        the landlord's cards (hand and played)."""
        from ..core.infostate import Hidden, Pile, Subset, hand_piles

        n = self.n_players
        ll = int(state[LANDLORD])
        ko = kitty_off(n)
        h = Hidden(piles=hand_piles(state, n, seat))
        if int(state[PHASE]) == P_AUCTION or ll < 0:
            h.piles.append(Pile("kitty", ko, self.kitty_cards))
            return h
        if self.opts[O_KITTY_PUBLIC] == 1 or seat == ll:
            h.visible["kitty"] = ko
            if seat != ll:
                po = played_off(n, ll)
                known = np.maximum(state[ko:ko + 16] - state[po:po + 16], 0)
                for p in h.piles:
                    if p.seat == ll:
                        p.known = known
        else:
            h.records.append(Subset("kitty", ko, self.kitty_cards,
                                    (hand_off(ll), played_off(n, ll))))
        return h

    # -- features for (state, action) scorers -----------------------------------------------------
    # -- text ------------------------------------------------------------------------------------
    def table_view(self, state: np.ndarray) -> TableView:
        """The table as :class:`cardenvs.core.render.TableView` (read by the text and the
        image renders)."""
        from ..core.render import climbing_view

        return climbing_view(self, state, role_name="landlord")

    def render(self, state: np.ndarray) -> str:
        """The table as text (``render_mode="ansi"``)."""
        from ..core.render import text_of

        return text_of(self.table_view(state))

