"""Lanxi Wulong's deal: the shuffled deal of the 108 suited cards, a given deal, the dealer and the
first leader (the ♠3 rule), and the suited-card notation of given deals.

The rules and the engine's decisions are in :mod:`cardenvs.games.wulong`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..core.cards import SUITS
from ..core.kernels import rng_below, shuffle
from ..core.state import (
    FIRST, LAST_ROW, LAST_SEAT, RNG, clear_state_unset, hand_off, kitty_off, put_deal,
    start_play_phase,
)
from .wulong_layout import (
    A_DEALER, A_LEADER, A_LOSER, A_PEND, HAND, JB, JR, NAT, NCARDS, NP, O_SUIT0, ORDER,
)


@njit(cache=True)
def _clear(s, seed):
    clear_state_unset(s, seed, (LAST_ROW, LAST_SEAT, FIRST, A_LOSER, A_DEALER, A_LEADER, A_PEND))


@njit(cache=True)
def first_leader(held, dealer, o):
    """The first leader: going round from the seat after ``dealer``, the first holder of a
    card in the search order (rank 3 upwards, suits in ``o``'s order).  ``held[seat*52 +
    rank*4 + suit]`` counts the suited cards dealt."""
    for r in range(NAT):
        for si in range(4):
            suit = o[O_SUIT0 + si]
            for j in range(1, NP + 1):
                q = (dealer + j) % NP
                if held[q * 52 + r * 4 + suit] > 0:
                    return q
    return (dealer + 1) % NP  # unreachable with a full deal


@njit(cache=True)
def _start(s, dealer, leader):
    s[A_DEALER] = dealer
    s[A_LEADER] = leader
    s[FIRST] = leader
    start_play_phase(s, leader)


@njit(cache=True)
def reset(s, seed, tab, o):
    """Shuffle the 108 suited cards from ``seed``, deal 25 to each seat, start the play."""
    _clear(s, seed)
    ids = np.arange(NCARDS).astype(np.int64)
    shuffle(ids, NCARDS, s, RNG)
    held = np.zeros(NP * 52, np.int64)
    ko = kitty_off(NP)
    for i in range(NCARDS):
        c = ids[i]
        if c < 104:
            r = c // 8
            suit = (c % 8) // 2
        else:
            r = JB if c < 106 else JR
            suit = -1
        if i < NP * HAND:
            q = i // HAND
            s[hand_off(q) + r] += 1
            if suit >= 0:
                held[q * 52 + r * 4 + suit] += 1
        else:
            s[ko + r] += 1
    dealer = rng_below(s, RNG, NP)
    _start(s, dealer, first_leader(held, dealer, o))


@njit(cache=True)
def reset_custom(s, seed, o, cards, held, dealer, leader):
    """Start from a given deal: ``cards[i]`` seat i's hand, ``cards[4]`` the unused cards;
    ``held`` as in :func:`first_leader` (zeros for a deal without suits).  ``dealer`` -1 with
    ``leader`` -1: drawn from ``seed``; ``leader`` -1: by the suits."""
    _clear(s, seed)
    put_deal(s, NP, cards)
    if leader < 0:
        if dealer < 0:
            dealer = rng_below(s, RNG, NP)
        leader = first_leader(held, dealer, o)
    _start(s, dealer, leader)


# -- given deals (Python) ---------------------------------------------------------------------


def parse_suited(text: object, what: str) -> list[tuple[str, int]]:
    """``"S3 H3 D4 B R"`` -> ``[(suit, rank), ...]`` (suit ``""`` for jokers); two decks, so a
    card may appear twice (counted over the whole deal by the caller)."""
    if not isinstance(text, str):
        raise TypeError(f"{what} must be a string, got {type(text).__name__}")
    out = []
    for tok in text.replace(",", " ").split():
        if tok in ("B", "R"):
            out.append(("", ORDER.index(tok)))
        elif len(tok) == 2 and tok[0] in SUITS and tok[1] in ORDER[:NAT]:
            out.append((tok[0], ORDER.index(tok[1])))
        else:
            raise ValueError(f"{what} {text!r}: bad suited card {tok!r}; write suit then rank, "
                             f"e.g. 'S3', and jokers as 'B' / 'R'")
    return out
