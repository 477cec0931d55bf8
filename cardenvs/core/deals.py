"""Validation of custom deals given through ``reset(options=...)``."""

from __future__ import annotations

import numpy as np

from .cards import Deck


def parse_deal(deck: Deck, options: dict, n: int, hand_cards: int, kitty_cards: int):
    """Parse ``options["hands"]`` (n strings) and ``options["kitty"]`` into count vectors.

    Raises ``ValueError`` naming the problem: a missing key, a wrong number of hands, a hand
    or kitty of the wrong size, or a card given more often than the deck holds.
    """
    if "hands" not in options:
        raise ValueError("a custom deal needs 'hands': a list of one card string per seat")
    hands_in = options["hands"]
    if isinstance(hands_in, str) or not isinstance(hands_in, (list, tuple)):
        raise TypeError("'hands' must be a list of card strings, one per seat")
    if len(hands_in) != n:
        raise ValueError(f"'hands' must list {n} hands, got {len(hands_in)}")
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
