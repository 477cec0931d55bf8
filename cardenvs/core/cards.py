"""Card notation: parsing and formatting of card strings (rules README, "Card notation").

A set of cards is a string of rank characters (``3 4 5 6 7 8 9 T J Q K A 2 B R``), order
free on input, sorted by the game's own rank order on output.  Internally a set of cards is a
vector of counts per *rank index*, where rank index 0 is the game's lowest rank.  Every game
uses at most 16 rank slots so that a plane of the bitmask representation fits 16 bits.

Suited cards (``"S3"``, ``"D3"``) are only accepted by :func:`parse_suited`, for the games whose
rules name a suit (who bids or leads first).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

#: Number of rank slots in every count vector / bit plane.
NSLOT = 16
SUITS = "SHCD"
ALL_RANK_CHARS = "3456789TJQKA2BR"


@dataclass(frozen=True)
class Deck:
    """A game's ranks and how many copies of each the deck holds.

    Attributes:
        order: rank characters, lowest first, e.g. ``"3456789TJQKA2BR"``.
        copies: copies of each rank in the whole deck (same length as ``order``).
    """

    order: str
    copies: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.order) != len(self.copies) or len(self.order) > NSLOT:
            raise ValueError("a deck needs one copy count per rank and at most 16 ranks")
        if len(set(self.order)) != len(self.order):
            raise ValueError(f"duplicate rank in order {self.order!r}")

    @staticmethod
    def standard(order: str, n_decks: int = 1) -> "Deck":
        """A deck of ``n_decks`` packs: 4 copies of each natural rank, 1 of each joker per pack."""
        return Deck(order, tuple((1 if c in "BR" else 4) * n_decks for c in order))

    @property
    def n_ranks(self) -> int:
        """The number of ranks (:attr:`order`'s length)."""
        return len(self.order)

    @property
    def size(self) -> int:
        """The number of cards in the deck."""
        return sum(self.copies)

    def index(self, ch: str) -> int:
        """The rank index of the card letter ``ch``; ``ValueError`` for a letter of no rank."""
        i = self.order.find(ch)
        if i < 0 or ch == "":
            raise ValueError(f"unknown card {ch!r}: this game's ranks are {' '.join(self.order)}")
        return i

    def full_counts(self) -> np.ndarray:
        """Counts of the whole deck as an ``int64[16]`` vector."""
        out = np.zeros(NSLOT, np.int64)
        out[: self.n_ranks] = self.copies
        return out

    # -- parsing -------------------------------------------------------------------------------
    def parse(self, cards: str, *, what: str = "cards") -> np.ndarray:
        """Parse a card string into an ``int64[16]`` count vector.

        Spaces and commas are ignored.  Raises ``ValueError`` naming the bad card for an
        unknown character or more copies of a rank than the deck holds.
        """
        if not isinstance(cards, str):
            raise TypeError(f"{what} must be a string of rank characters, got {type(cards).__name__}")
        out = np.zeros(NSLOT, np.int64)
        for ch in cards:
            if ch in " ,":
                continue
            if ch in SUITS:
                raise ValueError(
                    f"{what} {cards!r}: suit letter {ch!r} is not used here; write ranks only "
                    f"({' '.join(self.order)})"
                )
            i = self.order.find(ch)
            if i < 0:
                raise ValueError(
                    f"{what} {cards!r}: unknown card {ch!r}; this game's ranks are "
                    f"{' '.join(self.order)}"
                )
            out[i] += 1
            if out[i] > self.copies[i]:
                raise ValueError(
                    f"{what} {cards!r}: too many {ch!r} (the deck holds {self.copies[i]})"
                )
        return out

    def parse_suited(self, cards: str, *, what: str = "cards") -> list[tuple[str, int]]:
        """Parse ``"S3 H3 D4 B"`` into ``[(suit, rank_index), ...]`` (suit ``""`` for jokers).

        Every natural card must carry a suit letter; jokers carry none.  One deck only: a
        suited card may appear once.
        """
        if not isinstance(cards, str):
            raise TypeError(f"{what} must be a string, got {type(cards).__name__}")
        out: list[tuple[str, int]] = []
        seen: set[tuple[str, int]] = set()
        toks = cards.replace(",", " ").split()
        for tok in toks:
            if tok in ("B", "R"):
                suit, ch = "", tok
            elif len(tok) == 2 and tok[0] in SUITS:
                suit, ch = tok[0], tok[1]
            else:
                raise ValueError(
                    f"{what} {cards!r}: bad suited card {tok!r}; write suit then rank, e.g. 'S3'"
                )
            i = self.order.find(ch)
            if i < 0:
                raise ValueError(f"{what} {cards!r}: unknown card {tok!r}")
            if (suit, i) in seen and self.copies[i] <= 4:
                raise ValueError(f"{what} {cards!r}: card {tok!r} appears twice")
            seen.add((suit, i))
            out.append((suit, i))
        return out

    # -- formatting ----------------------------------------------------------------------------
    def format(self, counts: Sequence[int] | np.ndarray) -> str:
        """Format a count vector as a sorted card string (lowest rank first)."""
        return "".join(self.order[i] * int(counts[i]) for i in range(self.n_ranks))


def counts_leq(a: np.ndarray, b: np.ndarray) -> bool:
    """True when multiset ``a`` is contained in multiset ``b``."""
    return bool(np.all(a <= b))
