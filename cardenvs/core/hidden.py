"""What is hidden from whom: the declaration a game returns (``Game.hidden``), user constraints.

A game's ``hidden(state, seat)`` returns a :class:`Hidden` record made of the dataclasses
here (piles, records, markers, checks); :class:`Constraint` holds a user's constraints on a
determinization.  The entry checks of a (game, state, seat) are shared by
:class:`cardenvs.core.infostate.InfoState` and :class:`cardenvs.core.determinizer.Determinizer`.
What the declaration means for sampling is :mod:`cardenvs.core.infostate`'s module docstring.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import (
    TYPE_CHECKING, Any, Callable, Container, Iterable, Mapping, Optional, Sequence, Union,
)

import numpy as np

from .state import PHASE, P_DONE, hand_off, played_off

if TYPE_CHECKING:
    from .game import Game

ALL = (1 << 16) - 1  # every rank slot

# -- the declaration ------------------------------------------------------------------------------


@dataclass
class Pile:
    """A place the seat cannot see: ``size`` cards at ``state[offset:offset + 16]``.

    ``known``: counts known to be in it (or, with ``group``, in one of the piles of its group;
    give them on the group's first pile).  ``mask``: bit r set when it may hold rank r.
    ``seat``: the seat whose hand it is (-1 for a pile).
    """

    name: str
    offset: int
    size: int
    seat: int = -1
    known: Optional[np.ndarray] = None
    mask: int = ALL
    group: Optional[str] = None


@dataclass
class Subset:
    """Record ``state[offset:+16]`` = a uniform ``k``-card subset of the cards of ``sources``
    (state offsets, summed) of the ranks in ``mask``."""

    name: str
    offset: int
    k: int
    sources: Sequence[int]
    mask: int = ALL


@dataclass
class Linear:
    """Record ``state[offset:+16]`` = sum of ``sign * state[off:+16]`` over ``terms``."""

    name: str
    offset: int
    terms: Sequence[tuple[int, int]]


@dataclass
class Marker:
    """``state[slot]`` = code of the place of one physical card of rank ``rank``, chosen
    uniformly: place ``(code, offsets)`` weighs the count of ``rank`` over its offsets."""

    slot: int
    rank: int
    places: Sequence[tuple[int, Sequence[int]]]


@dataclass
class NotOnly:
    """Check: the pile at ``offset`` is empty or holds a rank outside ``mask``."""

    offset: int
    mask: int


@dataclass
class FirstMarker:
    """Check: scanning ``ranks`` in order, the first marker slot ``base + r`` holding a seat
    (``0 <= code < n``) holds ``expected``."""

    base: int
    ranks: Sequence[int]
    n: int
    expected: int


@dataclass
class SuitFirst:
    """Check: the seat a suit rule names (who holds the first card of one suit, scanning
    ``ranks`` in order, skipping copies in non-seat places) is ``expected``.

    Suits are not in the state: each physical card of a scanned rank gets a suit uniformly,
    one copy of each of four suits, one of which (the diamond) is already placed by the marker
    slot ``base + r``.  ``places``: ``(code, offsets)`` deal-time places (codes ``>= 0`` are
    seats, ``-1`` a pile); ``marker_places``: marker code -> the indices (into ``places``) of
    the deal-time places the marked card may have come from (chosen by their counts).
    """

    base: int
    ranks: Sequence[int]
    places: Sequence[tuple[int, Sequence[int]]]
    marker_places: Mapping[int, Sequence[int]]
    expected: int


@dataclass
class DrawOrder:
    """Record: the seats receiving ``n_marked`` marked cards of a ``n_cards``-card deck dealt
    one at a time round ``n`` seats from a uniform start seat, in deal order, at
    ``state[base:base + n_marked]``; the first ``n_known`` are public."""

    base: int
    n_known: int
    n_cards: int
    n_marked: int
    n: int


@dataclass
class Hidden:
    """What ``seat`` cannot see in one state (the return value of ``Game.hidden``).

    Attributes:
        piles: the places it cannot see (each other hand it does not know, hidden piles).
        visible: the piles it sees, name -> state offset of their counts (own hand excluded).
        known_hands: seat -> state offset of a hand it knows (declared, failed, open).
        records: :class:`Subset` / :class:`Linear` records, redrawn in order.
        markers: :class:`Marker` slots, redrawn.
        checks: :class:`NotOnly` / :class:`FirstMarker` / :class:`SuitFirst` checks.
        draws: :class:`DrawOrder` records.
        choice: the seat to move is hidden and in a follow-up decision that is offered only on
            a real choice: a sampled state must give it at least two legal actions.
        repair: a Python function ``(state) -> bool`` that recomputes fields derived from the
            hidden hand by the game's own rule (returns False when the sample is inconsistent).
        facts: a function returning public facts for :class:`InfoState` (``stuck``,
            ``failed``, ``declared``, ``jokers_for`` ...), name -> value (called only there).
        legal_passes: a play-phase pass is legal only when the seat holds no play that may
            beat (must beat, 有大必压): a sampled state must keep every logged pass of a seat
            in ``piles`` legal at the moment it was made (:class:`PassChecks`).
    """

    piles: list[Pile] = field(default_factory=list)
    visible: dict[str, int] = field(default_factory=dict)
    known_hands: dict[int, int] = field(default_factory=dict)
    records: list = field(default_factory=list)
    markers: list[Marker] = field(default_factory=list)
    checks: list = field(default_factory=list)
    draws: list[DrawOrder] = field(default_factory=list)
    choice: bool = False
    repair: Optional[Callable[[np.ndarray], bool]] = None
    facts: Optional[Callable[[], dict]] = None
    legal_passes: bool = False


def mask_of(ranks: Iterable[int]) -> int:
    """Bit mask of rank indices."""
    m = 0
    for r in ranks:
        m |= 1 << int(r)
    return m


def hand_piles(state: np.ndarray, n: int, seat: int, skip: Container[int] = ()) -> list[Pile]:
    """One :class:`Pile` per other seat's non-empty hand (seats in ``skip`` are known)."""
    out = []
    for q in range(n):
        if q == seat or q in skip:
            continue
        o = hand_off(q)
        size = sum(state[o:o + 16].tolist())
        if size:
            out.append(Pile(f"hand {q}", o, size, seat=q))
    return out


# -- constraints ------------------------------------------------------------------------------


@dataclass
class Constraint:
    """User constraints on a determinization.

    Attributes:
        exclude: seat -> cards (a card string, e.g. ``"BR"``) whose ranks that seat's hidden
            hand may not hold.
        accept: ``state -> bool``; samples it rejects are drawn again.
    """

    exclude: Mapping[int, str] = field(default_factory=dict)
    accept: Optional[Callable[[np.ndarray], bool]] = None


#: a :class:`cardenvs.core.game.Game`, a registry name, or an environment (AEC, ``SeatEnv``
#: ...) whose ``unwrapped.game`` is a Game
GameLike = Union["Game", str, Any]
ConstraintLike = Union[None, Constraint, Mapping[int, str], Callable[[np.ndarray], bool]]


def _as_constraint(constraint: ConstraintLike) -> Constraint:
    if constraint is None:
        return Constraint()
    if isinstance(constraint, Constraint):
        return constraint
    if callable(constraint):
        return Constraint(accept=constraint)
    if isinstance(constraint, Mapping):
        return Constraint(exclude=constraint)
    raise TypeError("constraint must be None, a Constraint, a {seat: cards} mapping of excluded "
                    f"cards or a callable state -> bool, got {type(constraint).__name__}")


# -- entry checks ----------------------------------------------------------------------------------


def _game_of(game_or_env: GameLike) -> Game:
    from .game import Game

    if isinstance(game_or_env, Game):
        return game_or_env
    if isinstance(game_or_env, str):
        from ..api import make_game

        return make_game(game_or_env)
    inner = getattr(game_or_env, "unwrapped", game_or_env)
    g = getattr(inner, "game", None)
    if isinstance(g, Game):
        return g
    raise TypeError("expected a cardenvs Game (cardenvs.make_game(...)), a game name or a "
                    f"cardenvs environment, got {type(game_or_env).__name__}")


def _check(game, state, seat) -> tuple:
    state = game.check_state(state)
    if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)):
        raise TypeError(f"seat must be an int, got {type(seat).__name__}")
    seat = int(seat)
    if not 0 <= seat < game.n_players:
        raise ValueError(f"seat {seat} is out of range: {game.info.name} has seats "
                         f"0..{game.n_players - 1}")
    if int(state[PHASE]) == P_DONE:
        raise ValueError("the state is finished (phase done): nothing is hidden any more")
    if not hasattr(game, "hidden"):
        raise TypeError(f"{type(game).__name__} declares no hidden information (Game.hidden)")
    return state, seat


def holder_of_card(h: Hidden, n: int, seat: int, holder: int, rank: int, slot: int) -> Hidden:
    """Declare that seat ``holder`` was dealt one particular card of rank ``rank`` (a named
    suited card: Pao De Kuai's ♠3 names the first leader), as seen by ``seat``: a
    :class:`Marker` in ``state[slot]`` picks one of the unseen seats' dealt cards of that rank
    (hand and played, by their counts) and a :class:`FirstMarker` check keeps samples where it
    is the holder's, so his count of the rank follows its exact posterior.  ``state[slot]``
    must hold ``holder`` in the real state (the marker writes it back)."""
    if holder != seat:
        places = [(q, (hand_off(q), played_off(n, q))) for q in range(n) if q != seat]
        h.markers.append(Marker(slot, rank, places))
        h.checks.append(FirstMarker(slot - rank, [rank], n, holder))
    return h
