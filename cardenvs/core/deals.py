"""Validation of custom deals given through ``reset(options=...)``."""

from __future__ import annotations

import numpy as np

from .cards import SUITS, Deck
from .options import check_int


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
