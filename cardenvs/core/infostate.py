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
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import (
    TYPE_CHECKING, Any, Callable, Container, Iterable, Mapping, Optional, Sequence, Union,
)

import numpy as np
from numba import njit

from .kernels import rng_below, rng_next
from .state import CUR, PHASE, P_DONE, RNG, hand_off, played_off

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


# -- the information state ---------------------------------------------------------------------


class InfoState:
    """What ``seat`` knows in ``state``: accessors over the game's :class:`Hidden` declaration.

    Card sets are card strings in the game's notation (``"3345BR"``); ``*_counts`` accessors
    give ``int64[16]`` count vectors (rank index order of the game's deck).
    """

    def __init__(self, game: GameLike, state: np.ndarray, seat: int) -> None:
        game = _game_of(game)
        state, seat = _check(game, state, seat)
        self.game = game
        self.seat = seat
        self._state = state.copy()
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
        return (f"InfoState({self.game.info.name}, seat={self.seat}, hand={self.hand!r}, "
                f"hidden={self.hidden}, known_in={self.known_in})")


def infostate(game_or_env: GameLike, state: Optional[np.ndarray] = None, seat: Optional[int] = None
              ) -> InfoState:
    """The information state of ``seat`` in ``state`` (:class:`InfoState`).

    ``game_or_env``: a :class:`cardenvs.core.game.Game`, a game name or an environment; with an
    environment, ``state`` defaults to its current state and ``seat`` to the seat to move.
    """
    game = _game_of(game_or_env)
    if state is None:
        state = getattr(getattr(game_or_env, "unwrapped", game_or_env), "state_vec", None)
        if state is None:
            raise TypeError("state is required with a Game")
    if seat is None:
        seat = int(state[CUR])
    return InfoState(game, state, seat)


# -- the program ------------------------------------------------------------------------------

OP_END, OP_FILL, OP_SUBSET, OP_LINEAR, OP_MARKER, OP_NOTONLY, OP_FIRST, OP_MASKCHECK = range(8)
OP_DRAWORDER, OP_RNG, OP_SUITFIRST = 8, 9, 10
#: draws of one sample before the kernel gives up (a check no sample can pass)
MAX_TRIES = 200_000


def _laminar(masks: list[int]) -> bool:
    for i, a in enumerate(masks):
        for b in masks[i + 1:]:
            if a & b and (a & b) != a and (a & b) != b:
                return False
    return True


def compile_hidden(game: Game, state: np.ndarray, decl: Hidden,
                   exclude: Union[Mapping[int, str], Iterable[tuple[int, str]]] = ()
                   ) -> np.ndarray:
    """The integer program of a declaration (pool, then ops) for :func:`_sample`.

    The pool is the cards of the hidden piles less the known ones.  Each unit (a pile, or a
    group of piles) is one ``OP_FILL``, the most restricted first when the restrictions are
    nested or disjoint (exact sequential draws); otherwise user restrictions become
    ``OP_MASKCHECK`` rejections.
    """
    full = (1 << game.deck.n_ranks) - 1
    extra_masks: dict[int, int] = {}
    for q, cards in dict(exclude).items():
        if isinstance(q, bool) or not isinstance(q, (int, np.integer)) \
                or not 0 <= int(q) < game.n_players:
            raise ValueError(f"constraint seat {q!r} is out of range 0..{game.n_players - 1}")
        c = game.deck.parse(cards, what=f"excluded cards of seat {q}")
        extra_masks[int(q)] = full & ~mask_of(np.flatnonzero(c))
    pool = [0] * 16
    units: dict[str, list[Pile]] = {}
    for p in decl.piles:
        for r, c in enumerate(state[p.offset:p.offset + 16].tolist()):
            pool[r] += c
        units.setdefault(p.group if p.group is not None else "#" + p.name, []).append(p)
    hidden_seats = {p.seat for p in decl.piles if p.seat >= 0}
    for q, m in extra_masks.items():
        if q not in hidden_seats:
            h = state[hand_off(q):hand_off(q) + 16].tolist()
            if any(h[r] > 0 and not (m >> r) & 1 for r in range(16)):
                raise ValueError(f"constraint excludes cards seat {q} is known to hold")
    fills = []  # (own mask, mask with the user's, piles, known)
    for ps in units.values():
        known = [0] * 16
        mask = full
        for p in ps:
            if p.known is not None:
                for r, c in enumerate(np.asarray(p.known).tolist()):
                    known[r] += int(c)
            mask &= p.mask
        if len(ps) > 1 and mask != full:
            raise ValueError("a group of piles cannot be restricted to some ranks")
        eff = mask
        if len(ps) == 1 and ps[0].seat in extra_masks:
            eff &= extra_masks[ps[0].seat]
        fills.append((mask, eff, ps, known))
    exact = len(fills) < 2 or _laminar([f[1] for f in fills])
    body: list[int] = []
    checks: list[int] = []
    for mask, eff, ps, known in sorted(fills, key=lambda f: bin(f[1] if exact else f[0]).count("1")):
        m = eff if exact else mask
        body += [OP_FILL, -1 if m == full else m, len(ps)] + known  # -1: unrestricted
        for p in ps:
            body += [p.offset, p.size]
            if not exact and p.seat in extra_masks:
                checks += [OP_MASKCHECK, p.offset, extra_masks[p.seat]]
        for r in range(16):
            pool[r] -= known[r]
    body += checks
    for r in decl.records:
        if isinstance(r, Subset):
            body += [OP_SUBSET, r.offset, r.k, r.mask, len(r.sources)] + list(r.sources)
        elif isinstance(r, Linear):
            body += [OP_LINEAR, r.offset, len(r.terms)]
            for sign, off in r.terms:
                body += [sign, off]
        else:  # pragma: no cover - declaration error
            raise TypeError(f"unknown record {r!r}")
    for marker in decl.markers:
        body += [OP_MARKER, marker.slot, marker.rank, len(marker.places)]
        for code, offs in marker.places:
            body += [code, len(offs)] + list(offs)
    for c in decl.checks:
        if isinstance(c, NotOnly):
            body += [OP_NOTONLY, c.offset, c.mask]
        elif isinstance(c, FirstMarker):
            body += [OP_FIRST, c.base, c.expected, c.n, len(c.ranks)] + list(c.ranks)
        elif isinstance(c, SuitFirst):
            body += [OP_SUITFIRST, c.base, c.expected, len(c.ranks)] + list(c.ranks)
            body += [len(c.places)]
            for code, offs in c.places:
                body += [code, len(offs)] + list(offs)
            body += [len(c.marker_places)]
            for code, idx in c.marker_places.items():
                body += [code, len(idx)] + list(idx)
        else:  # pragma: no cover
            raise TypeError(f"unknown check {c!r}")
    for d in decl.draws:
        body += [OP_DRAWORDER, d.base, d.n_known, d.n_cards, d.n_marked, d.n]
    body += [OP_RNG, RNG, OP_END]
    if min(pool) < 0:
        raise ValueError("inconsistent declaration: known cards not in the hidden piles")
    return np.array(pool + body, np.int64)


# -- the kernel ---------------------------------------------------------------------------------


@njit(cache=True)
def _draw_rank(c, mask, total, g):
    """One physical card drawn uniformly from counts ``c`` restricted to ``mask`` (``total``
    cards); its rank (the count is decremented)."""
    u = rng_below(g, 0, total)
    for r in range(16):
        if (mask >> r) & 1:
            k = c[r]
            if u < k:
                c[r] = k - 1
                return r
            u -= k
    return -1


@njit(cache=True)
def _masked_total(c, mask):
    t = 0
    for r in range(16):
        if (mask >> r) & 1:
            t += c[r]
    return t


@njit(cache=True)
def _run(s, prog, g, pool, tmp, pos, deck):
    """Run the program once on ``s`` (a copy of the real state; every region a program writes
    it overwrites whole, so a rejected try needs no fresh copy); False when a check fails.

    Restricted fills draw card by card from the pool counts; the unrestricted ones (sorted
    last) deal from the rest of the pool laid out as an array, by an incremental
    Fisher-Yates shuffle (``deck[0]`` = cards dealt, ``deck[1]`` = cards, from ``deck[2]``).
    """
    for r in range(16):
        pool[r] = prog[r]
    deck[1] = -1
    i = 16
    while True:
        op = prog[i]
        if op == OP_END:
            return True
        if op == OP_FILL:
            mask = prog[i + 1]
            npl = prog[i + 2]
            kn = i + 3
            pl = i + 19
            total = 0
            for j in range(npl):
                total += prog[pl + 2 * j + 1]
            for r in range(16):
                tmp[r] = prog[kn + r]
            free = total
            for r in range(16):
                free -= tmp[r]
            if mask < 0:
                if deck[1] < 0:  # lay out the rest of the pool
                    m = 0
                    for r in range(16):
                        for _ in range(pool[r]):
                            deck[2 + m] = r
                            m += 1
                    deck[0] = 0
                    deck[1] = m
                d0 = deck[0]
                m = deck[1]
                if m - d0 < free:
                    return False
                for t in range(d0, d0 + free):
                    j = t + rng_below(g, 0, m - t)
                    x = deck[2 + j]
                    deck[2 + j] = deck[2 + t]
                    deck[2 + t] = x
                    tmp[x] += 1
                deck[0] = d0 + free
            else:
                avail = _masked_total(pool, mask)
                if avail < free:
                    return False
                for _ in range(free):
                    tmp[_draw_rank(pool, mask, avail, g)] += 1
                    avail -= 1
            # split the unit's cards over its piles uniformly (the last takes the rest)
            left = total
            for j in range(npl):
                off = prog[pl + 2 * j]
                size = prog[pl + 2 * j + 1]
                for r in range(16):
                    s[off + r] = 0
                if j == npl - 1:
                    for r in range(16):
                        s[off + r] = tmp[r]
                else:
                    for _ in range(size):
                        s[off + _draw_rank(tmp, 0xFFFF, left, g)] += 1
                        left -= 1
            i = pl + 2 * npl
        elif op == OP_SUBSET:
            out = prog[i + 1]
            k = prog[i + 2]
            mask = prog[i + 3]
            ns = prog[i + 4]
            for r in range(16):
                tmp[r] = 0
            for j in range(ns):
                so = prog[i + 5 + j]
                for r in range(16):
                    tmp[r] += s[so + r]
            avail = _masked_total(tmp, mask)
            if avail < k:
                return False
            for r in range(16):
                s[out + r] = 0
            for _ in range(k):
                s[out + _draw_rank(tmp, mask, avail, g)] += 1
                avail -= 1
            i += 5 + ns
        elif op == OP_LINEAR:
            out = prog[i + 1]
            nt = prog[i + 2]
            for r in range(16):
                tmp[r] = 0
            for j in range(nt):
                sign = prog[i + 3 + 2 * j]
                so = prog[i + 4 + 2 * j]
                for r in range(16):
                    tmp[r] += sign * s[so + r]
            for r in range(16):
                if tmp[r] < 0:
                    return False
                s[out + r] = tmp[r]
            i += 3 + 2 * nt
        elif op == OP_MARKER:
            slot = prog[i + 1]
            rank = prog[i + 2]
            npl = prog[i + 3]
            j = i + 4
            total = 0
            for _ in range(npl):
                no = prog[j + 1]
                for t in range(no):
                    total += s[prog[j + 2 + t] + rank]
                j += 2 + no
            if total <= 0:
                return False
            u = rng_below(g, 0, total)
            j = i + 4
            for _ in range(npl):
                code = prog[j]
                no = prog[j + 1]
                w = 0
                for t in range(no):
                    w += s[prog[j + 2 + t] + rank]
                if 0 <= u < w:
                    s[slot] = code
                u -= w
                j += 2 + no
            i = j
        elif op == OP_NOTONLY:
            off = prog[i + 1]
            mask = prog[i + 2]
            tot = 0
            outside = 0
            for r in range(16):
                tot += s[off + r]
                if not (mask >> r) & 1:
                    outside += s[off + r]
            if tot > 0 and outside == 0:
                return False
            i += 3
        elif op == OP_MASKCHECK:
            off = prog[i + 1]
            mask = prog[i + 2]
            for r in range(16):
                if s[off + r] > 0 and not (mask >> r) & 1:
                    return False
            i += 3
        elif op == OP_FIRST:
            base = prog[i + 1]
            exp = prog[i + 2]
            n = prog[i + 3]
            nr = prog[i + 4]
            found = -1
            for t in range(nr):
                w = s[base + prog[i + 5 + t]]
                if 0 <= w < n:
                    found = w
                    break
            if found != exp:
                return False
            i += 5 + nr
        elif op == OP_DRAWORDER:
            base = prog[i + 1]
            nk = prog[i + 2]
            ncards = prog[i + 3]
            nm = prog[i + 4]
            n = prog[i + 5]
            ok = False
            for _ in range(100_000):
                start = rng_below(g, 0, n)
                # nm distinct positions, uniformly (a partial Fisher-Yates over the deck)
                for t in range(ncards):
                    pos[t] = t
                for t in range(nm):
                    j = t + rng_below(g, 0, ncards - t)
                    x = pos[t]
                    pos[t] = pos[j]
                    pos[j] = x
                # sort the nm drawn positions (insertion sort)
                for t in range(1, nm):
                    x = pos[t]
                    j = t - 1
                    while j >= 0 and pos[j] > x:
                        pos[j + 1] = pos[j]
                        j -= 1
                    pos[j + 1] = x
                ok = True
                for t in range(nk):
                    if (start + pos[t]) % n != s[base + t]:
                        ok = False
                        break
                if ok:
                    for t in range(nm):
                        s[base + t] = (start + pos[t]) % n
                    break
            if not ok:
                return False
            i += 6
        elif op == OP_RNG:
            s[prog[i + 1]] = rng_next(g, 0)
            i += 2
        elif op == OP_SUITFIRST:
            base = prog[i + 1]
            exp = prog[i + 2]
            nr = prog[i + 3]
            pl0 = i + 5 + nr  # the places
            npl = prog[pl0 - 1]
            # where each place's record starts (pos[0:npl]); then the marker table
            j = pl0
            for t in range(npl):
                pos[t] = j
                j += 2 + prog[j + 1]
            mk0 = j + 1
            nmk = prog[j]
            end = mk0
            for _ in range(nmk):
                end += 2 + prog[end + 1]
            found = -2
            for t in range(nr):
                r = prog[i + 4 + t]
                # deal-time copies of rank r per place (pos[64 + place])
                tot = 0
                for w in range(npl):
                    c = 0
                    a = pos[w]
                    for u in range(prog[a + 1]):
                        c += s[prog[a + 2 + u] + r]
                    pos[64 + w] = c
                    tot += c
                # the marked copy (the diamond) leaves its place
                code = s[base + r]
                m = mk0
                for _ in range(nmk):
                    if prog[m] == code:
                        wt = 0
                        for u in range(prog[m + 1]):
                            wt += pos[64 + prog[m + 2 + u]]
                        if wt <= 0:
                            return False
                        v = rng_below(g, 0, wt)
                        for u in range(prog[m + 1]):
                            w = prog[m + 2 + u]
                            c = pos[64 + w]
                            if v < c:
                                pos[64 + w] = c - 1
                                tot -= 1
                                break
                            v -= c
                        break
                    m += 2 + prog[m + 1]
                if tot <= 0:
                    continue
                # the copy of the rule's suit: uniform among the other copies
                v = rng_below(g, 0, tot)
                holder = -1
                for w in range(npl):
                    if v < pos[64 + w]:
                        holder = prog[pos[w]]
                        break
                    v -= pos[64 + w]
                if holder >= 0:
                    found = holder
                    break
            if found != exp:
                return False
            i = end
        else:
            return False


@njit(cache=True)
def _sample(base, prog, seed, out, max_tries):
    """Fill each row of ``out`` with a sample; returns the draws used, or -1 when one row could
    not be drawn in ``max_tries`` draws."""
    g = np.empty(1, np.int64)
    g[0] = seed
    pool = np.zeros(16, np.int64)
    tmp = np.zeros(16, np.int64)
    pos = np.zeros(128, np.int64)
    deck = np.zeros(2 + 16 * 16, np.int64)
    used = 0
    for k in range(out.shape[0]):
        row = out[k]
        ok = False
        for j in range(base.shape[0]):
            row[j] = base[j]
        for _ in range(max_tries):
            used += 1
            if _run(row, prog, g, pool, tmp, pos, deck):
                ok = True
                break
        if not ok:
            return -1
    return used


# -- the Python face ----------------------------------------------------------------------------


def _seed_of(rng) -> int:
    if not isinstance(rng, np.random.Generator):
        raise TypeError("rng must be a numpy Generator (np.random.default_rng(seed)), got "
                        f"{type(rng).__name__}")
    return int(rng.integers(-2**63, 2**63 - 1, dtype=np.int64))


class PassChecks:
    """What the logged passes of the hidden seats tell, for a must-beat game
    (``Hidden.legal_passes``): at each such pass the seat held no play that beat the play to
    beat (under every rule of the game: ``game.is_legal`` of the pass), so a sampled state is
    consistent only when each pass stays legal with the sampled hand.

    The position of a pass is rebuilt from the sample (:meth:`ok`): every hand plus the cards
    its seat played after the pass (public, from the action log), the seat to move, the play
    to beat, the passes before it in the trick and the action count as they were then (the
    trick is replayed from the log with the rules of :func:`cardenvs.core.state.play_action`:
    a play sets the play to beat, ``n - 1`` passes end the trick).  Only these fields, the
    hands and the played cards are rewound: a game declaring ``legal_passes`` must decide a
    pass's legality from them (Pao De Kuai: the hands, the trick, the seat to move and the
    action count, which tells the first play of the deal).  Passes of the observer and of seats
    whose hand it knows tell nothing new and are not checked; a log longer than its ring
    buffer (``MAXLOG``) keeps only the passes it still holds.
    """

    def __init__(self, game: Game, state: np.ndarray, seat: int, piles: Sequence[Pile]) -> None:
        from .state import LAST_ROW, LAST_SEAT, MAXLOG, NLOG, NPASS, PLAYS0, log_entry
        from .state import PLAY_START

        n = game.n_players
        self.game = game
        self.pass_id = int(game.pass_id)
        self.hidden = sorted({p.seat for p in piles if p.seat >= 0})
        start, end = int(state[PLAY_START]), int(state[NLOG])
        if end - start > MAXLOG:  # the oldest actions are gone: begin at the first whole trick
            start = end - MAXLOG
        counts = game.table.arrays.counts
        log = [(int(log_entry(state, n, i)) // 8, int(log_entry(state, n, i)) % 8)
               for i in range(start, end)]
        # the trick before each action, forward
        events = []
        last_row, last_seat, npass = -1, -1, 0
        known = start == int(state[PLAY_START])  # the trick state is known from here on
        for j, (a, q) in enumerate(log):
            if a == self.pass_id:
                if known and q in self.hidden and last_row >= 0:
                    events.append((start + j, q, last_row, last_seat, npass))
                npass += 1
                if npass >= n - 1:
                    last_row, npass, known = -1, 0, True
            elif a < self.pass_id:
                last_row, last_seat, npass = a, q, 0
            else:  # a bid or another non-play action: not a play phase we can rewind
                known = False
        # the positions, backward: each seat's cards played after the pass
        self.templates: list[tuple[np.ndarray, np.ndarray]] = []
        after = np.zeros((n, 16), np.int64)
        plays = np.zeros(n, np.int64)
        k = len(events) - 1
        for j in range(end - 1, start - 1, -1):
            while k >= 0 and events[k][0] == j:
                _, q, last_row, last_seat, npass = events[k]
                t = state.copy()
                for p in range(n):
                    t[hand_off(p):hand_off(p) + 16] += after[p]
                    t[played_off(n, p):played_off(n, p) + 16] -= after[p]
                    t[PLAYS0 + p] -= plays[p]
                t[CUR], t[LAST_ROW], t[LAST_SEAT], t[NPASS], t[NLOG] = q, last_row, last_seat, npass, j
                self.templates.append((t, after[self.hidden].copy()))
                k -= 1
            a, q = log[j - start]
            if a < self.pass_id:
                after[q] += counts[a]
                plays[q] += 1

        m = len(self.templates)
        self._work = np.array([t for t, _ in self.templates], np.int64).reshape(m, len(state))
        self._after = np.array([a for _, a in self.templates], np.int64).reshape(
            m, len(self.hidden), 16)
        self._offs = np.array([hand_off(p) for p in self.hidden], np.int64)

    def __len__(self) -> int:
        return len(self.templates)

    def ok(self, row: np.ndarray) -> bool:
        """Whether every checked pass stays legal with the hidden hands of sample ``row``
        (plain Python; :meth:`ok_batch` is the kernel)."""
        for t, after in self.templates:
            x = t.copy()
            for i, p in enumerate(self.hidden):
                o = hand_off(p)
                x[o:o + 16] = row[o:o + 16] + after[i]
            if not self.game.is_legal(x, self.pass_id):
                return False
        return True

    def ok_batch(self, rows: np.ndarray) -> np.ndarray:
        """:meth:`ok` of every row of ``rows`` (bool array), in one numba call with the game's
        own ``is_legal`` kernel (compiled for it on first use in a process)."""
        out = np.zeros(rows.shape[0], np.bool_)
        g = self.game
        _passes_hold(rows, self._work, self._offs, self._after, g.k_is_legal, g.tab, g.opts,
                     np.int64(self.pass_id), out)
        return out


@njit(cache=False)  # specialised on the game's is_legal dispatcher (cannot be cached)
def _passes_hold(rows, work, offs, after, is_legal, tab, opts, pass_id, out):
    """``out[k]``: every pass position ``work[t]`` with row ``k``'s hidden hands (``offs``) plus
    the cards played since (``after[t]``) keeps the pass legal.  ``work`` is scratch: only its
    hidden hands are rewritten."""
    for k in range(rows.shape[0]):
        row = rows[k]
        ok = True
        for t in range(work.shape[0]):
            x = work[t]
            for i in range(offs.shape[0]):
                o = offs[i]
                for r in range(16):
                    x[o + r] = row[o + r] + after[t, i, r]
            if not is_legal(x, pass_id, tab, opts):
                ok = False
                break
        out[k] = ok


class Determinizer:
    """Samples full states consistent with what ``seat`` has observed in ``state``.

    Build it once per decision and call :meth:`sample` / :meth:`batch` as often as needed (the
    declaration is read and compiled once).  See :func:`determinize` for the measure.
    """

    def __init__(self, game_or_env: GameLike, state: np.ndarray, seat: int,
                 constraint: ConstraintLike = None) -> None:
        game = _game_of(game_or_env)
        state, seat = _check(game, state, seat)
        self.game = game
        self.seat = seat
        self.state = state.copy()
        self.constraint = _as_constraint(constraint)
        self.decl = game.hidden(self.state, seat)
        self.program = compile_hidden(game, self.state, self.decl, self.constraint.exclude)
        self.passes = (PassChecks(game, self.state, seat, self.decl.piles)
                       if self.decl.legal_passes else None)
        if self.passes is not None and not len(self.passes):
            self.passes = None
        self._python = (self.decl.choice or self.decl.repair is not None
                        or self.constraint.accept is not None or self.passes is not None)
        self._buf = np.zeros(game.n_actions + 1, np.int64)

    def _accept(self, row: np.ndarray) -> bool:
        return self._reject(row) is None

    def _reject(self, row: np.ndarray) -> Optional[str]:
        """The Python check a proposal fails (``"repair"``, ``"choice"``, ``"accept"``), or
        ``None`` when it passes them all."""
        if self.decl.repair is not None and not self.decl.repair(row):
            return "repair"
        if self.decl.choice and self.game.legal(row, self._buf) < 2:
            return "choice"
        if self.constraint.accept is not None and not self.constraint.accept(row):
            return "accept"
        return None

    def batch(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``(n, S)`` int64 array of ``n`` independent samples."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ValueError(f"n must be an int >= 0, got {n!r}")
        out = np.empty((int(n), self.state.shape[0]), np.int64)
        if not self._python:
            if _sample(self.state, self.program, _seed_of(rng), out, MAX_TRIES) < 0:
                raise RuntimeError(self._fail())
            return out
        # Python checks: proposals from the kernel in chunks, each checked in turn (rejection)
        chunk = np.empty((64, self.state.shape[0]), np.int64)
        k = 0
        tried = 0
        rejected = dict.fromkeys(("passes", "repair", "choice", "accept"), 0)
        while k < n:
            if tried >= MAX_TRIES:
                raise RuntimeError(self._fail(rejected))
            if _sample(self.state, self.program, _seed_of(rng), chunk, MAX_TRIES) < 0:
                raise RuntimeError(self._fail())
            passes = self.passes.ok_batch(chunk) if self.passes is not None else None
            for i, row in enumerate(chunk):
                tried += 1
                why = "passes" if passes is not None and not passes[i] else self._reject(row)
                if why is None:
                    out[k] = row
                    k += 1
                    tried = 0
                    rejected = dict.fromkeys(rejected, 0)
                    if k == n:
                        break
                else:
                    rejected[why] += 1
        return out

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """One sampled state (a new int64 vector)."""
        return self.batch(rng, 1)[0]

    def _fail(self, rejected: Optional[dict] = None) -> str:
        """Why sampling gave up: the constraint no draw met, named.  ``rejected``: the Python
        checks' rejection counts (``None``: the kernel's own checks failed every draw)."""
        g = self.game
        head = (f"cannot determinize the {g.info.name} state for seat {self.seat}: no "
                f"{MAX_TRIES:,} draws of the cards it has not seen met ")
        if rejected is not None and any(rejected.values()):
            worst = max(rejected, key=lambda name: rejected[name])
            what = {
                "passes": f"the logged passes of seats {self.passes.hidden if self.passes else []}"
                          f" (a seat that passed held no play that beat; "
                          f"{len(self.passes) if self.passes else 0} passes checked)",
                "repair": "the game's consistency check of the fields derived from the hidden "
                          "hands (Hidden.repair)",
                "choice": f"the pending choice of seat {int(self.state[CUR])} (the sample must "
                          f"give it two legal actions or more)",
                "accept": "the constraint's accept function",
            }[worst]
            return (head + what + f" ({rejected[worst]:,} of the last draws failed it); "
                    f"the state may be unreachable, or the constraint impossible")
        return head + self._kernel_culprit() + "; the state may be unreachable, or the " \
            "constraint impossible"

    def _describe(self, item) -> str:
        """One kernel check or user exclusion in words."""
        names = {p.offset: p.name for p in self.decl.piles}
        ranks = self.game.deck.order

        def of(mask: int) -> str:
            return "".join(ranks[r] for r in range(len(ranks)) if (mask >> r) & 1)

        if isinstance(item, tuple):  # ("exclude", seat, cards)
            return f"the constraint that seat {item[1]} holds none of {item[2]!r}"
        if isinstance(item, NotOnly):
            return (f"the check that {names.get(item.offset, f'state[{item.offset}]')} holds "
                    f"a card outside {of(item.mask)!r} (NotOnly)")
        if isinstance(item, FirstMarker):
            return (f"the check that seat {item.expected} holds the first marked card of ranks "
                    f"{of(mask_of(item.ranks))!r} (FirstMarker)")
        if isinstance(item, SuitFirst):
            return (f"the suit rule that seat {item.expected} holds the first card of its suit "
                    f"in ranks {of(mask_of(item.ranks))!r} (SuitFirst)")
        return repr(item)  # pragma: no cover

    def _kernel_culprit(self) -> str:
        """The kernel check or user exclusion without which sampling succeeds (tried one at a
        time, with a few draws each), else every one in effect."""
        from dataclasses import replace

        items: list = [("exclude", q, c) for q, c in dict(self.constraint.exclude).items()]
        items += list(self.decl.checks)
        probe = np.empty((1, self.state.shape[0]), np.int64)
        for item in items:
            exclude: Mapping[int, str]
            if isinstance(item, tuple):
                exclude = {q: c for q, c in dict(self.constraint.exclude).items() if q != item[1]}
                decl = self.decl
            else:
                exclude = self.constraint.exclude
                decl = replace(self.decl, checks=[c for c in self.decl.checks if c is not item])
            try:
                prog = compile_hidden(self.game, self.state, decl, exclude)
            except ValueError:
                continue
            if _sample(self.state, prog, 12345, probe, 20_000) >= 0:
                return self._describe(item)
        if not items:
            return ("the hidden piles' own restrictions (the ranks a pile may hold, the cards "
                    "known in it)")
        return "these together: " + "; ".join(self._describe(x) for x in items)


def determinize(game_or_env: GameLike, state: np.ndarray, seat: int, rng: np.random.Generator,
                constraint: ConstraintLike = None) -> np.ndarray:
    """A full state consistent with everything ``seat`` has observed in ``state``.

    Uniform over the consistent deals as defined in :mod:`cardenvs.core.infostate`: every
    arrangement of the unseen physical cards over the unseen places (pile sizes fixed, cards
    known to be somewhere left there) is equally likely; records of how the piles arose are
    drawn uniformly given the arrangement; declared checks by rejection.  ``seat``'s
    observation (``game.encode``) of the result equals its observation of ``state``.

    Args:
        game_or_env: a :class:`cardenvs.core.game.Game`, a game name or an environment.
        state: the real state (int64 vector; ``game.check_state`` validates it).
        seat: the observer.
        rng: a ``numpy.random.Generator`` (the only source of randomness).
        constraint: ``None``; a mapping ``{seat: "cards"}`` of ranks a hidden hand may not
            hold; a callable ``state -> bool`` (rejection); or a :class:`Constraint`.

    Raises:
        TypeError / ValueError for a bad game, state, seat or constraint, or a finished state;
        RuntimeError when no sample passes the constraints.
    """
    return Determinizer(game_or_env, state, seat, constraint).sample(rng)


def determinize_batch(game_or_env: GameLike, state: np.ndarray, seat: int,
                      rng: np.random.Generator, n: int, constraint: ConstraintLike = None
                      ) -> np.ndarray:
    """``n`` independent :func:`determinize` samples as an ``(n, S)`` int64 array."""
    return Determinizer(game_or_env, state, seat, constraint).batch(rng, n)


def determinizations_per_second(game_or_env: GameLike, state: np.ndarray, seat: int,
                                n: int = 10_000, seed: int = 0) -> float:
    """Throughput of :func:`determinize_batch` on one position (for ``benchmarks/``): samples
    per second of one batch of ``n`` (after a warm-up call that compiles the kernel)."""
    import time

    d = Determinizer(game_or_env, state, seat)
    rng = np.random.default_rng(seed)
    d.batch(rng, 2)
    t0 = time.perf_counter()
    d.batch(rng, n)
    return n / (time.perf_counter() - t0)


def determinize_benchmark(game_or_env: GameLike, n_positions: int = 50,
                          n_samples: int = 2_000, seed: int = 0) -> dict:
    """Determinization speed over random positions of a game (for ``benchmarks/``).

    Positions are decisions of uniformly random games (every phase, a random observer);
    returns ``{"game", "positions", "samples_per_s"`` (all samples over all batch time),
    ``"median_per_s"``, ``"min_per_s"`` (per position), ``"build_us"`` (mean cost of
    building a :class:`Determinizer`: reading and compiling the declaration)``}``.
    """
    import time

    game = _game_of(game_or_env)
    rng = np.random.default_rng(seed)
    s = game.new_state()
    buf = np.empty(game.n_actions + 1, np.int64)
    pos: list[tuple[np.ndarray, int]] = []
    while len(pos) < n_positions:
        game.reset(s, int(rng.integers(2**62)))
        k_stop = int(rng.integers(1, 200))
        for _ in range(k_stop):
            if game.done(s):
                break
            game.step(s, int(buf[rng.integers(game.legal(s, buf))]))
        if not game.done(s):
            pos.append((s.copy(), int(rng.integers(game.n_players))))
    Determinizer(game, *pos[0]).batch(rng, 2)  # compile / load the kernel
    rates, total, build = [], 0.0, 0.0
    for st, seat in pos:
        t0 = time.perf_counter()
        d = Determinizer(game, st, seat)
        t1 = time.perf_counter()
        d.batch(rng, n_samples)
        t2 = time.perf_counter()
        build += t1 - t0
        total += t2 - t1
        rates.append(n_samples / (t2 - t1))
    return {"game": game.info.name, "positions": len(pos),
            "samples_per_s": len(pos) * n_samples / total,
            "median_per_s": float(np.median(rates)), "min_per_s": float(min(rates)),
            "build_us": 1e6 * build / len(pos)}


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
