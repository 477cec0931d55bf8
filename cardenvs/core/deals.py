"""Validation of custom deals given through ``reset(options=...)``."""

from __future__ import annotations

from typing import Sequence

import numpy as np
from numba import njit

from .cards import NSLOT, SUITS, Deck
from .kernels import shuffle
from .options import check_int
from .state import hand_off, kitty_off


def check_deal_keys(options: dict, known) -> None:
    """Raise ``ValueError`` naming the keys of ``options`` that are not in ``known``."""
    known = set(known)
    unknown = set(options) - known
    if unknown:
        raise ValueError(f"unknown deal option(s) {sorted(unknown)}; known: {sorted(known)}")


def hands_list(options: dict, n: int) -> list:
    """``options["hands"]``, checked to be a list (or tuple) of ``n`` entries, one per seat."""
    if "hands" not in options:
        raise ValueError("a custom deal needs 'hands': a list of one card string per seat")
    hands_in = options["hands"]
    if isinstance(hands_in, str) or not isinstance(hands_in, (list, tuple)):
        raise TypeError("'hands' must be a list of card strings, one per seat")
    if len(hands_in) != n:
        raise ValueError(f"'hands' must list {n} hands, got {len(hands_in)}")
    return list(hands_in)


def is_suited(text) -> bool:
    """Whether a card string is written with suits (``"S3 H3 D4"``, not ``"334"``)."""
    return isinstance(text, str) and any(ch in SUITS for ch in text)


def all_suited(texts, what: str = "every hand", keys=(), options: dict | None = None) -> bool:
    """True when every text of ``texts`` has suits, False when none has; ``ValueError`` on a mix.

    ``what`` names the texts in the message.  For a suited deal, each of ``keys`` (the seats
    the suits decide: ``"first_bidder"``, ``"leader"``) found in ``options`` is an error.
    """
    suited = [is_suited(t) for t in texts]
    if any(suited) and not all(suited):
        raise ValueError(f"give {what} with suits ('S3 H3 D4 ...') or every one without suits "
                         f"('334...'), not a mix")
    if suited and all(suited):
        for key in keys:
            if key in (options or {}):
                raise ValueError(f"{key!r} is decided by the suits of a suited deal; give it "
                                 f"only with hands written without suits")
        return True
    return False


def solo_and_bid(options: dict, key: str, n: int, max_bid: int):
    """``(options[key], options["bid"])`` checked (a seat, a bid 1..max_bid), or ``(None, None)``:
    the solo seat and its bid are given together (to skip the auction) or not at all."""
    solo, bid = options.get(key), options.get("bid")
    if (solo is None) != (bid is None):
        raise ValueError(f"give both {key!r} and 'bid' to skip the auction, or neither")
    if solo is not None:
        check_int(key, solo, 0, n - 1)
        check_int("bid", bid, 1, max_bid)
    return solo, bid


def deal_rows(hands: np.ndarray, kitty: np.ndarray) -> np.ndarray:
    """The ``(n + 1, 16)`` int64 matrix of a deal: one row a hand, the kitty last."""
    return np.vstack([np.asarray(hands, np.int64).reshape(-1, 16),
                      np.asarray(kitty, np.int64).reshape(1, 16)])


def parse_deal(deck: Deck, options: dict, n: int, hand_cards: int, kitty_cards: int):
    """Parse ``options["hands"]`` (n strings) and ``options["kitty"]`` into count vectors.

    Raises ``ValueError`` naming the problem: a missing key, a wrong number of hands, a hand
    or kitty of the wrong size, or a card given more often than the deck holds.
    """
    hands_in = hands_list(options, n)
    hands = []
    total = np.zeros(16, np.int64)
    for i, h in enumerate(hands_in):
        c = deck.parse(h, what=f"hand of seat {i}")
        if c.sum() != hand_cards:
            raise ValueError(f"hand of seat {i} has {c.sum()} cards; this game deals {hand_cards}")
        hands.append(c)
        total += c
    if "kitty" in options:
        kitty = deck.parse(options["kitty"], what="kitty")
        if kitty.sum() != kitty_cards:
            raise ValueError(f"kitty has {kitty.sum()} cards; this game's kitty is {kitty_cards}")
    else:
        kitty = deck.full_counts() - total
        if np.any(kitty < 0):
            kitty = np.maximum(kitty, 0)  # reported below
    total = total + kitty
    full = deck.full_counts()
    over = np.flatnonzero(total > full)
    if over.size:
        r = int(over[0])
        raise ValueError(
            f"impossible deal: {int(total[r])} cards of {deck.order[r]!r} given, the deck holds {int(full[r])}"
        )
    if total.sum() != full.sum():
        raise ValueError(f"impossible deal: {int(total.sum())} cards given, the deck has {int(full.sum())}")
    return np.array(hands), kitty


# -- suited one-deck deals (a card that decides who acts first) -------------------------------------
#
# A suited card is the id ``rank * 4 + suit`` (suit index in ``cardenvs.core.cards.SUITS``,
# "SHCD").  A game whose deck leaves cards out (Pao De Kuai's 48 cards) keeps the ids of the
# cards it holds in its options vector and deals them with :func:`deal_suited`.


def suited_ids(deck: Deck, removed: Sequence[str] = ()) -> np.ndarray:
    """The suited card ids of a one-deck deck of ``deck.order`` without the jokers and the
    cards in ``removed`` (``"H2"``, ``"SA"`` ...); checked against ``deck.copies``."""
    out = [i for i in range(4 * deck.n_ranks) if deck.order[i // 4] not in "BR"
           and f"{SUITS[i % 4]}{deck.order[i // 4]}" not in set(removed)]
    got = np.bincount(np.array(out) // 4, minlength=deck.n_ranks)
    if tuple(int(c) for c in got) != tuple(deck.copies):
        raise ValueError(f"the suited cards {got.tolist()} do not make the deck {deck.copies}")
    return np.array(out, np.int64)


def parse_suited_hands(deck: Deck, ids: np.ndarray, hands, n: int, hand_cards: int):
    """Parse ``n`` suited hands (``"S3 H3 D4 ..."``) of ``hand_cards`` cards each, dealt from the
    suited cards ``ids``: ``(counts (n, 16), where)`` with ``where[id]`` the seat holding a
    card (-1: not dealt).  A card outside the deck, given twice, or a hand of the wrong size
    is a ``ValueError`` that names it."""
    hands = hands_list({"hands": hands}, n)
    have = set(int(i) for i in ids)
    where = np.full(4 * NSLOT, -1, np.int64)
    counts = np.zeros((n, NSLOT), np.int64)
    for seat, text in enumerate(hands):
        what = f"hand of seat {seat}"
        cards = deck.parse_suited(text, what=what)
        if len(cards) != hand_cards:
            raise ValueError(f"{what} has {len(cards)} cards; this game deals {hand_cards}")
        for suit, r in cards:
            c = r * 4 + SUITS.index(suit) if suit else -1
            if c not in have:
                raise ValueError(f"{what}: {suit}{deck.order[r]} is not in this game's deck")
            if where[c] >= 0:
                raise ValueError(f"impossible deal: {suit}{deck.order[r]} is in the hand of "
                                 f"seat {where[c]} and in the {what}")
            where[c] = seat
            counts[seat, r] += 1
    return counts, where


@njit(cache=True, _nrt=True)  # allocates the shuffled copy (once a deal)
def deal_suited(s, ids, n, hand_cards, mark, rng_slot):
    """Shuffle the suited cards ``ids`` with the generator in ``s[rng_slot]``, deal
    ``hand_cards`` to each of ``n`` seats (the rest go to the kitty region) and return the
    seat dealt card ``mark`` (-1: nobody)."""
    cards = ids.copy()
    m = cards.shape[0]
    shuffle(cards, m, s, rng_slot)
    who = -1
    for i in range(m):
        seat = i // hand_cards
        off = hand_off(seat) if seat < n else kitty_off(n)
        s[off + cards[i] // 4] += 1
        if cards[i] == mark:
            who = seat if seat < n else -1
    return who


def lead_card_deal(deck: Deck, ids: np.ndarray, options: dict, n: int, hand_cards: int,
                   lead_card: int, lead_name: str, keys: Sequence[str] = ("hands", "leader")):
    """A custom deal of a game whose first leader holds one named card (Pao De Kuai's ♠3):
    ``options["hands"]`` with suited cards (the holder of card id ``lead_card`` leads) or
    without suits plus ``options["leader"]`` (rules README, convention 8).

    Returns ``(counts (n, 16), leader, suited)``; a ``ValueError`` names what is wrong (an
    unknown key, a card outside the deck or given twice, a missing or superfluous leader)."""
    check_deal_keys(options, keys)
    hands = hands_list(options, n)
    suited = all_suited(hands, keys=("leader",), options=options)
    leader = options.get("leader")
    if suited:
        cards, where = parse_suited_hands(deck, ids, hands, n, hand_cards)
        leader = int(where[lead_card])
        if leader < 0:
            raise ValueError(f"the lead card {lead_name} is not dealt")
        return cards, leader, True
    cards, _ = parse_deal(deck, options, n, hand_cards, 0)
    if leader is None:
        raise ValueError(f"a deal without suits needs 'leader' (the seat the {lead_name} rule "
                         f"would name)")
    check_int("leader", leader, 0, n - 1)
    return cards, int(leader), False
