"""Information states and determinization, one implementation for every game.

Each game declares what is hidden from whom in a small method, ``Game.hidden(state, seat)``,
that returns a :class:`Hidden` record: the piles of cards the seat cannot see (other hands, the
kitty, buried or returned cards, unused cards: each a 16-count region of the state vector with
its size), cards known to be inside a pile (the 3-player kitty in the landlord's hand, an open
hand's dealt cards in the digger's hand or burial), ranks a pile cannot hold (a stuck seat holds
one joker, a failed seat only 3s), *records* the state keeps about how the piles arose (the
娘娘's taken and returned cards, the Wakeng kitty and the digger's dealt cards), *markers* (where
one card of a rank is: the Wakeng diamonds) and the consistency checks a sampled state must pass
(the ♦ first-lead rule, a hidden seat's hand is not only 3s, a pending choice is a real one).
The game writes no sampling code: :class:`InfoState` reads the declaration for the accessors and
:func:`determinize` compiles it into a small integer program run by one numba kernel.

The sampling measure (what "uniform over the consistent deals" means here, exactly):

* every physical arrangement of the cards the seat has not seen over the places it cannot see
  is equally likely, pile sizes fixed (the cards of a rank are told apart, as by their suits; a
  multivariate hypergeometric law per pile), subject to the declared constraints: cards known to
  be in a pile (or in one of a group of piles) are placed there, the rest are dealt uniformly
  into the remaining slots; a group of piles (the digger's hand and his burial) is then split
  uniformly; a pile restricted to some ranks draws its cards uniformly among the unseen cards
  of those ranks.  With nested or disjoint restrictions (the only ones the games declare) the
  sequential draw -- most restricted pile first -- is exactly the conditioned uniform law: the
  number of completions after each draw does not depend on which cards it took.
* records are then drawn uniformly given the arrangement (a record of k cards is a uniform
  k-subset of the physical cards it may have come from); a marker of rank r (the diamond) is one
  physical card of rank r chosen uniformly among the places it may be.
* checks are exact by rejection: the kernel draws again until every check passes (a uniform
  proposal conditioned on acceptance is uniform on the accepted set).
* the deal generator slot of the state is redrawn (the future deals of a redeal or of a match's
  next hand are unknown to everyone).

What the seat's own history tells beyond its observation is kept (a seat knows what it buried).
Played cards are seen cards (as at a real table); the state keeps ranks only, so a card the
landlord plays of a rank he took from the shown kitty counts as the kitty's copy.  Suit rules
that name a seat are checks on suits drawn uniformly per rank: Wakeng's first bidder (♠3 ...)
and first leader (♦3 ..., through the diamond markers).  The measure ignores what opponents'
decisions reveal (no opponent model), as determinization does, except what a rule forces on
them: in a must-beat game (``Hidden.legal_passes``, Pao De Kuai) a pass says the passer held no
beating play then, a check by rejection (:class:`PassChecks`); and Lanxi Wulong's first leader
(the first ♠3 holder after the dealer): its state cannot tell a dealt position from one whose
leader was given (``set_position``, unsuited custom deals), so that weak information about the
3s is not used.

User constraints (``constraint=``): a mapping ``{seat: "cards"}`` of ranks that seat's hidden
hand may not hold (e.g. ``{2: "BR"}``: seat 2 holds no joker), applied as pile restrictions
(exact sequential draws when nested or disjoint with the game's own, otherwise by rejection),
and/or a callable ``accept(state) -> bool`` (rejection; it must accept the states it wants with
positive probability).  Pass both as ``Constraint(exclude=..., accept=...)``.

Modules, by responsibility (every name stays importable from this one):
:mod:`cardenvs.core.hidden` (the declaration records, user constraints, the entry checks),
:mod:`cardenvs.core.sampler` (the integer program and its numba kernels),
:mod:`cardenvs.core.determinizer` (:class:`Determinizer`, :func:`determinize` and the
checks that need Python), :mod:`cardenvs.core.partial` (a compact position's pending partial
play: what the mover knows of it, read from a compact environment); this one holds
:class:`InfoState` and :func:`infostate`.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .determinizer import (
    Determinizer, PassChecks, determinizations_per_second, determinize, determinize_batch,
    determinize_benchmark,
)
from .hidden import (
    ALL, Constraint, ConstraintLike, DrawOrder, FirstMarker, GameLike, Hidden, Linear, Marker,
    NotOnly, Pile, Subset, SuitFirst, _as_constraint, _check, _game_of, hand_piles,
    holder_of_card, mask_of,
)
from .sampler import (
    MAX_TRIES, OP_DRAWORDER, OP_END, OP_FILL, OP_FIRST, OP_LINEAR, OP_MARKER, OP_MASKCHECK,
    OP_NOTONLY, OP_RNG, OP_SUBSET, OP_SUITFIRST, compile_hidden,
)
from .partial import PartialPlay, PendingLike, mover_partial, pending_of
from .state import CUR, hand_off, played_off


# -- the information state ---------------------------------------------------------------------


class InfoState:
    """What ``seat`` knows in ``state``: accessors over the game's :class:`Hidden` declaration.

    Card sets are card strings in the game's notation (``"3345BR"``); ``*_counts`` accessors
    give ``int64[16]`` count vectors (rank index order of the game's deck).

    ``pending``: the partial play of a compact position (``(body, [kicker ids])`` as
    ``env.unwrapped.get_state()["compact"]`` writes it; ``None``: none), checked legal in
    ``state``.  The mover's information state holds it (:attr:`pending`); every other seat's
    is the position before the play, as their observations are.
    """

    def __init__(self, game: GameLike, state: np.ndarray, seat: int,
                 pending: PendingLike = None) -> None:
        game = _game_of(game)
        state, seat = _check(game, state, seat)
        self.game = game
        self.seat = seat
        self._state = state.copy()
        #: the seat's own pending partial play (:class:`cardenvs.core.partial.PartialPlay`):
        #: set for the mover of a compact position between the decisions of one play (its
        #: cards are still in :attr:`hand`), ``None`` otherwise
        self.pending: Optional[PartialPlay] = mover_partial(
            game, self._state, seat, pending_of(game, None, pending))
        self.n_players = game.n_players
        self.decl: Hidden = game.hidden(self._state, seat)
        self._hidden_hands = {p.seat: p for p in self.decl.piles if p.seat >= 0}

    def _fmt(self, counts) -> str:
        return self.game.deck.format(np.asarray(counts, np.int64))

    def _counts(self, off: int) -> np.ndarray:
        return self._state[off:off + 16].copy()

    # -- own and public cards --------------------------------------------------------------
    @property
    def hand(self) -> str:
        """The seat's own hand."""
        return self._fmt(self._counts(hand_off(self.seat)))

    @property
    def hand_counts(self) -> np.ndarray:
        """The seat's own hand as counts, one per rank slot (a copy)."""
        return self._counts(hand_off(self.seat))

    @property
    def hands(self) -> list[Optional[str]]:
        """Every seat's hand as far as the seat knows it: a card string for its own and every
        known hand (declared, failed, empty), ``None`` for a hand it cannot see."""
        out: list[Optional[str]] = []
        for q in range(self.n_players):
            if q in self._hidden_hands:
                out.append(None)
            else:
                out.append(self._fmt(self._counts(hand_off(q))))
        return out

    @property
    def hand_sizes(self) -> np.ndarray:
        """Cards in each seat's hand (public)."""
        return np.array([int(self._state[hand_off(q):hand_off(q) + 16].sum())
                         for q in range(self.n_players)], np.int64)

    @property
    def played(self) -> list[str]:
        """The cards each seat has played so far (as the state keeps them: physical cards)."""
        n = self.n_players
        return [self._fmt(self._counts(played_off(n, q))) for q in range(n)]

    @property
    def played_counts(self) -> np.ndarray:
        """Every seat's played cards as counts, one row per seat (a copy)."""
        n = self.n_players
        return np.stack([self._counts(played_off(n, q)) for q in range(n)])

    @property
    def piles(self) -> dict[str, str]:
        """Piles the seat sees (kitty, bottom, buried, taken, returned, open hand ...)."""
        return {k: self._fmt(self._counts(o)) for k, o in self.decl.visible.items()}

    @property
    def kitty(self) -> Optional[str]:
        """The kitty / bottom if the seat sees it, else ``None``."""
        for k in ("kitty", "bottom"):
            if k in self.decl.visible:
                return self._fmt(self._counts(self.decl.visible[k]))
        return None

    # -- what is hidden ----------------------------------------------------------------------
    @property
    def unknown_counts(self) -> np.ndarray:
        """Counts of the cards the seat cannot see (in the hidden piles, wherever they are)."""
        t = np.zeros(16, np.int64)
        for p in self.decl.piles:
            t += self._state[p.offset:p.offset + 16]
        return t

    @property
    def unknown(self) -> str:
        """The cards the seat cannot see, as one card string."""
        return self._fmt(self.unknown_counts)

    @property
    def hidden(self) -> dict[str, int]:
        """Where unknown cards may be: hidden pile name (``"hand 1"``, ``"kitty"`` ...) -> its
        number of cards."""
        return {p.name: p.size for p in self.decl.piles}

    @property
    def known_in(self) -> dict[str, str]:
        """Cards known to be in a hidden pile (or group of piles, named ``"a|b"``)."""
        out = {}
        groups: dict[str, list[str]] = {}
        for p in self.decl.piles:
            if p.group is not None:
                groups.setdefault(p.group, []).append(p.name)
        for p in self.decl.piles:
            if p.known is not None and int(np.sum(p.known)):
                name = "|".join(groups[p.group]) if p.group is not None else p.name
                out[name] = self._fmt(p.known)
        return out

    @property
    def free_counts(self) -> np.ndarray:
        """Unknown cards minus the ones known to be in a given pile: the cards that are dealt
        uniformly at random into the free slots."""
        t = self.unknown_counts
        for p in self.decl.piles:
            if p.known is not None:
                t -= np.asarray(p.known, np.int64)
        return t

    @property
    def allowed(self) -> dict[str, str]:
        """Hidden piles restricted to some ranks: name -> the ranks they may hold."""
        order = self.game.deck.order
        return {p.name: "".join(order[r] for r in range(len(order)) if (p.mask >> r) & 1)
                for p in self.decl.piles if p.mask & mask_of(range(len(order))) !=
                mask_of(range(len(order)))}

    def may_hold(self, place: str) -> str:
        """The unknown ranks that may be in hidden pile ``place`` (a card string of the
        unknown cards of those ranks, known ones included)."""
        for p in self.decl.piles:
            if p.name == place:
                u = self.unknown_counts
                keep = np.array([(p.mask >> r) & 1 for r in range(16)], np.int64)
                return self._fmt(u * keep)
        raise ValueError(f"no hidden pile {place!r}; hidden: {sorted(self.hidden)}")

    # -- public facts --------------------------------------------------------------------------
    def fact(self, name: str, default: Any = None) -> Any:
        """The public fact ``name`` of the game's declaration (``stuck``, ``failed``,
        ``declared``, ``jokers_for`` ...), or ``default`` when the game has no such fact."""
        if self.decl.facts is None:
            return default
        if not hasattr(self, "_facts"):
            self._facts = self.decl.facts()
        return self._facts.get(name, default)

    @property
    def stuck(self) -> Optional[list[bool]]:
        """Da Niangniang: per seat, stuck (only one joker left); ``None`` in other games."""
        return self.fact("stuck")

    @property
    def failed(self) -> Optional[list[bool]]:
        """Lanxi Wulong: per seat, failed (only 3s left); ``None`` in other games."""
        return self.fact("failed")

    @property
    def declared(self) -> Optional[list[bool]]:
        """Lanxi Wulong: per seat, declared (报牌: the hand is public); ``None`` elsewhere."""
        return self.fact("declared")

    @property
    def jokers_for(self) -> Optional[list[str]]:
        """Wild-joker games: per seat, the ranks its played jokers stood for (card string)."""
        return self.fact("jokers_for")

    def __repr__(self) -> str:
        pending = "" if self.pending is None else f", pending={self.pending.text!r}"
        return (f"InfoState({self.game.info.name}, seat={self.seat}, hand={self.hand!r}, "
                f"hidden={self.hidden}, known_in={self.known_in}{pending})")


def infostate(game_or_env: GameLike, state: Optional[np.ndarray] = None, seat: Optional[int] = None,
              pending: PendingLike = "env") -> InfoState:
    """The information state of ``seat`` in ``state`` (:class:`InfoState`).

    ``game_or_env``: a :class:`cardenvs.core.game.Game`, a game name or an environment; with an
    environment, ``state`` defaults to its current state and ``seat`` to the seat to move.
    ``pending``: the partial play of a compact position (``"env"``: a compact environment's
    own when ``state`` is its current state, :func:`cardenvs.core.partial.pending_of`; a
    ``(body, [kicker ids])`` snapshot; ``None``): the mover's information state holds it.
    """
    game = _game_of(game_or_env)
    snap = pending_of(game_or_env, state, pending)
    if state is None:
        state = getattr(getattr(game_or_env, "unwrapped", game_or_env), "state_vec", None)
        if state is None:
            raise TypeError("state is required with a Game")
    if seat is None:
        seat = int(state[CUR])
    return InfoState(game, state, seat, snap)
