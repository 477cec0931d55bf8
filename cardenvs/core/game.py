"""The Python face of a compiled game: metadata, action blocks, strings, kernels.

A :class:`Game` binds one option set of one game to its play table and its numba kernels.
The AEC environment (:mod:`cardenvs.core.aec`), the rules query API and the batched engine
all drive a game through the same five kernels, each a ``numba.njit`` function of the flat
state vector (:mod:`cardenvs.core.state`):

* ``reset(state, seed, tab, opts)`` deals and sets up the first phase;
* ``legal(state, tab, opts, out) -> k`` writes the legal action ids of the seat to move;
* ``is_legal(state, action, tab, opts) -> bool``;
* ``step(state, action, tab, opts)`` applies a legal action (rewards land in the state);
* ``encode(state, seat, tab, opts, offsets, out)`` writes one seat's observation.
"""

from __future__ import annotations

import operator
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence, Union

import numba
import numpy as np

from .cards import Deck
from .combos import N_FAMILIES
from .encode import Layout
from .state import (
    BID, BIDDER, BIDS0, CUR, FIRST, LANDLORD, LAST_ROW, LAST_SEAT, MAXLOG, NDOUBLE, NLOG, NPASS,
    NREDEAL, NSTEPS, P_DONE, P_PLAY, PHASE, PLAY_START, PLAYS0, REW0, WINNER, hand_off,
    kitty_off, log_off, played_off, state_size,
)
from .table import Table
from .validate import CardRegion, StateField, StateSpec, check_can_move

if TYPE_CHECKING:
    from .infostate import Hidden

_I64 = np.dtype(np.int64)
_F32 = np.dtype(np.float32)
_ND = np.ndarray
#: integer types the compiled entry points take as int64 without a conversion
_INTS = (int, np.int64)
_MAX_SEED = 2**63 - 1
#: the largest value of a counter field (NLOG, NSTEPS, PLAY_START...): far beyond any game,
#: far from int64 overflow
MAX_COUNT = 2**40
#: fingerprint -> "game (options)" of every Game built in this process (for error messages)
_FINGERPRINTS: dict[int, str] = {}


def _describe(arr, what: str, dtype: np.dtype, write: bool = True) -> Optional[Exception]:
    """Why ``arr`` is not a 1-D C-contiguous writable array of ``dtype`` (None when it is):
    a ``TypeError`` for the wrong kind of object, a ``ValueError`` for unusable memory."""
    if not isinstance(arr, np.ndarray):
        return TypeError(f"{what} must be a numpy array, got {type(arr).__name__}")
    if arr.dtype != dtype:
        return TypeError(f"{what} must have dtype {dtype}, got {arr.dtype}")
    if arr.ndim != 1:
        return TypeError(f"{what} must be 1-D, got shape {arr.shape}")
    if write and not arr.flags.writeable:
        return ValueError(f"{what} is read-only; the kernels write into it (pass a writable copy)")
    if not arr.flags.c_contiguous:
        return ValueError(f"{what} is a strided view; the kernels need contiguous memory "
                          f"(pass np.ascontiguousarray(...) and copy the result back)")
    return None


def _index(x, what: str) -> int:
    """``x`` as a Python int (an int or numpy integer, not a bool), else ``TypeError``."""
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{what} must be an int, got a bool")
    try:
        return operator.index(x)
    except TypeError:
        raise TypeError(f"{what} must be an int, got {type(x).__name__}") from None


@dataclass(frozen=True)
class GameInfo:
    """Metadata record of a game (OpenSpiel-style)."""

    name: str  # registry name, e.g. "doudizhu"
    title: str  # human title
    n_players: int
    deck_size: int
    zero_sum: bool
    teams: str  # e.g. "1 vs 2"
    rules_page: str  # the rules page in the repository, e.g. "docs/rules/wakeng.md"
    options: dict[str, Any] = field(default_factory=dict)  # defaults


class Game:
    """Base class.  Subclasses set the kernels and fill ``blocks`` and ``layout``.

    The kernel methods (:meth:`reset`, :meth:`legal`, :meth:`is_legal`, :meth:`step`,
    :meth:`encode`) are the engine's fast path: they check the *types* of their arguments
    (a 1-D C-contiguous writable ``int64`` state of this game's length, buffers of the right
    dtype and size, a seat of the game, a legal action for :meth:`step`) and raise
    ``TypeError`` / ``ValueError`` instead of handing the kernel memory it would read or write
    out of bounds.  They trust the *content* of the state: every state made by
    :meth:`new_state` and changed only by these methods is valid; a state from anywhere else
    (edited by hand, loaded, from another game) goes through :meth:`check_state` first, as
    the environments' ``set_state`` does.
    """

    info: GameInfo
    deck: Deck
    table: Table
    layout: Layout
    blocks: dict[str, tuple[int, int]]
    #: keys of ``reset(options=...)`` that describe a custom deal
    deal_keys: tuple[str, ...] = ("hands",)
    #: length of the game's own state layout (None: the shared layout, ``state_size(n)``);
    #: the state vector adds one entry, the fingerprint
    base_state_size: Optional[int] = None
    k_reset: Callable
    k_legal: Callable
    k_is_legal: Callable
    k_step: Callable
    k_encode: Callable
    #: ``hidden(state, seat)``: what ``seat`` does not see (:mod:`cardenvs.core.infostate`);
    #: every game defines it
    hidden: Callable[[np.ndarray, int], Hidden]
    #: ``custom_deal(state, options, seed)``: deal the cards ``reset(options=...)`` names
    #: (:attr:`deal_keys`), checking them first; every game defines it
    custom_deal: Callable[[np.ndarray, dict, int], None]

    def __init__(self, opts: np.ndarray):
        self.opts = opts
        self._direct: dict = {}
        self.tab = self.table.arrays
        self.offsets = self.layout.start_array()
        self.n_players = self.info.n_players
        base = self.base_state_size or state_size(self.n_players)
        self.state_size = base + 1
        self._shape = (self.state_size,)
        self.pass_id = len(self.table)
        self.n_actions = max(b for _, b in self.blocks.values())
        self._spec: Optional[StateSpec] = None
        self.fingerprint = self._fingerprint()

    # -- pickling: by registry name and options --------------------------------------------------
    def __reduce__(self):
        """A game pickles as its registry name and options and unpickles as
        ``cardenvs.make_game(name, **options)`` (the same object within a process): its
        kernels' compiled entry points (:meth:`_call`) cannot be pickled, and its tables are
        rebuilt from the options anyway."""
        return (_remake, (self.info.name, dict(getattr(self, "options", {}))))

    # -- kernels from Python ------------------------------------------------------------------
    def _call(self, name: str, *args):
        """Call kernel ``name``; after the first call, its compiled entry point directly.

        numba's dispatcher spends about 3 us per call working out the types of the play
        table's 18 arrays; the types never change for one game, so the compiled function
        found on the first call is called directly afterwards (1 us).  The arguments always
        go through the guards of the kernel methods below (an int64 state of this game's
        length, contiguous and writable, buffers of the right dtype and size), which is what
        makes skipping numba's type check safe.
        """
        f = self._direct.get(name)
        if f is not None:
            return f(*args)
        kernel = getattr(self, name)
        result = kernel(*args)
        cres = kernel.overloads.get(tuple(numba.typeof(a) for a in args))
        if cres is not None:
            self._direct[name] = cres.entry_point
        return result

    # -- state -------------------------------------------------------------------------------
    def new_state(self) -> np.ndarray:
        """A zero state vector of this game, carrying its fingerprint (deal it with :meth:`reset`)."""
        s = np.zeros(self.state_size, np.int64)
        s[-1] = self.fingerprint
        return s

    def _fingerprint(self) -> int:
        """A 31-bit id of the game and option set (name, options, options vector, play table),
        stored in the last entry of every state; the same in every process."""
        opts = getattr(self, "options", {})
        desc = f"{self.info.name} ({', '.join(f'{k}={v!r}' for k, v in sorted(opts.items()))})"
        h = zlib.crc32(desc.encode())
        h = zlib.crc32(np.ascontiguousarray(self.opts, np.int64).tobytes(), h)
        h = zlib.crc32(np.ascontiguousarray(self.table.arrays.counts, np.int64).tobytes(), h)
        h = zlib.crc32(np.array([self.state_size, self.n_actions], np.int64).tobytes(), h)
        fp = (h & 0x7FFFFFFF) or 1
        _FINGERPRINTS.setdefault(fp, desc)
        return fp

    # -- what a valid state is (see cardenvs.core.validate) -------------------------------------
    def state_fields(self) -> list[StateField]:
        """This game's own state fields and ranges (its ``AUX`` header slots, its region after
        the shared layout, and shared header fields whose range is its own); they override
        the shared defaults of :meth:`state_spec`.  Games override this."""
        return []

    def state_order(self) -> list[tuple]:
        """This game's orderings ``(a, b)`` or ``(a, b, (field, lo, hi))``: ``state[a] <=
        state[b]`` (while ``lo <= state[field] <= hi``); both ways make an equality."""
        return []

    def card_regions(self) -> list[CardRegion]:
        """The regions that hold the deck (default: hands, kitty and played cards, always)."""
        n = self.n_players
        return ([CardRegion(f"hand of seat {i}", hand_off(i)) for i in range(n)]
                + [CardRegion("kitty", kitty_off(n))]
                + [CardRegion(f"played by seat {i}", played_off(n, i)) for i in range(n)])

    #: ``(field, lo, hi)``: the card regions hold the deck only while ``lo <= state[field] <=
    #: hi`` (e.g. not before the deal); None: always
    cards_when: Optional[tuple[int, int, int]] = None

    def log_window(self) -> Optional[tuple[int, int, tuple[int, int, int]]]:
        """Which part of the action log must hold only play rows and pass: ``(first action
        number field, largest action id, (field, lo, hi) while it applies))`` or None.  The
        default is the shared observation's "recent" field: from ``PLAY_START`` in the play
        phase and after."""
        return (PLAY_START, self.pass_id, (PHASE, P_PLAY, P_DONE))

    def state_spec(self) -> StateSpec:
        """The compiled checks of :meth:`check_state` (built on first use)."""
        if self._spec is None:
            self._spec = self._build_spec()
        return self._spec

    def _build_spec(self) -> StateSpec:
        n, T, A = self.n_players, len(self.table), self.n_actions
        deck = self.deck.full_counts()
        big = MAX_COUNT
        f = [StateField("PHASE", PHASE, 0, 2), StateField("CUR", CUR, 0, n - 1),
             StateField("FIRST", FIRST, -1, n - 1), StateField("LANDLORD", LANDLORD, -1, n - 1),
             StateField("BID", BID, 0, 3), StateField("BIDDER", BIDDER, -1, n - 1),
             StateField("NPASS", NPASS, 0, n), StateField("LAST_ROW", LAST_ROW, -1, T - 1),
             StateField("LAST_SEAT", LAST_SEAT, -1, n - 1), StateField("NDOUBLE", NDOUBLE, 0, 62),
             StateField("WINNER", WINNER, -1, n - 1), StateField("NREDEAL", NREDEAL, 0, big),
             StateField("NSTEPS", NSTEPS, 0, big), StateField("NLOG", NLOG, 0, big),
             StateField("PLAYS", PLAYS0, 0, big, n),
             StateField("PLAYS (no seat)", PLAYS0 + n, 0, 0, 8 - n),
             StateField("BIDS", BIDS0, -1, 3, 8),
             StateField("PLAY_START", PLAY_START, 0, big),
             StateField("log entry", log_off(n), 0, 8 * A - 1, MAXLOG),
             # a play to beat has a seat that made it (the trick returns to it)
             StateField("LAST_SEAT", LAST_SEAT, 0, n - 1, when=(LAST_ROW, 0, T - 1)),
             # passes in a row end the auction or the trick before they reach n
             StateField("NPASS", NPASS, 0, n - 1, when=(PHASE, 0, P_PLAY))]
        for region in self.card_regions():
            for r in range(16):
                rank = self.deck.order[r] if r < self.deck.n_ranks else "-"
                f.append(StateField(f"{region.name} [{rank}]", region.index + r, 0, int(deck[r])))
        f += self.state_fields()
        return StateSpec(self.state_size, f, self.card_regions(), deck, n_players=n,
                         log_off=log_off(n), nlog=NLOG, window=self.log_window(),
                         order=[(PLAY_START, NLOG)] + self.state_order(),
                         cards_when=self.cards_when)

    def check_state(self, state: Any, *, inplace: bool = False) -> np.ndarray:
        """``state`` checked as a state vector of this game and option set.

        Returns the validated state as a C-contiguous ``int64`` array: ``state`` itself when
        it already is one, else a contiguous copy (the caller copies it where it keeps it).
        With ``inplace=True`` (a caller about to update ``state`` in place) a read-only
        array or a strided view is a ``ValueError`` instead of a silent copy.

        Raises ``TypeError`` for a non-array or a wrong dtype / rank, ``ValueError`` for a
        wrong length, a state of another game or option set (the fingerprint in its last
        entry), and any field out of range, naming it (``"wakeng state field CUR =
        1000000000 out of range [0, 2]"``): card counts, card conservation against the
        deck, log entries, each game's own fields (:meth:`state_fields`), and, in a game that
        is not over, a legal action for the seat to move
        (:func:`cardenvs.core.validate.check_can_move`).
        """
        name = self.info.name
        if not isinstance(state, np.ndarray):
            raise TypeError(f"a {name} state must be a numpy int64 array (from get_state / "
                            f"new_state), got {type(state).__name__}")
        if state.dtype != _I64 or state.ndim != 1:
            raise TypeError(f"a {name} state must be a 1-D int64 array (from get_state / "
                            f"new_state), got dtype {state.dtype}, shape {state.shape}")
        if state.shape[0] != self.state_size:
            raise ValueError(f"a {name} state has {self.state_size} entries, got {state.shape[0]}")
        if inplace:
            err = _describe(state, f"the {name} state", _I64)
            if err is not None:
                raise err
        s = np.ascontiguousarray(state)
        fp = int(s[-1])
        if fp != self.fingerprint:
            mine = _FINGERPRINTS.get(self.fingerprint, name)
            other = _FINGERPRINTS.get(fp)
            if other is None:
                other = ("no game built in this process" if fp else
                         "no game (a zero fingerprint: make states with new_state())")
            raise ValueError(f"state of another game or option set: its fingerprint {fp} is "
                             f"{other}; this game is {mine} (fingerprint {self.fingerprint})")
        spec = self.state_spec()
        code = spec.scan(s)
        if code:
            raise ValueError(spec.describe(s, code, name))
        check_can_move(self, s)
        return s

    def check_states(self, states: Any, slots: Optional[Sequence[int]] = None) -> np.ndarray:
        """Every row of ``states`` checked as :meth:`check_state` checks one state.

        Args:
            states: an ``(m, state_size)`` ``int64`` array, one state vector per row.
            slots: optional ``m`` labels (e.g. the slots of a
                :class:`cardenvs.vector.VectorGame` the rows are for), named in the error.

        Returns the validated states as a C-contiguous ``int64`` array (``states`` itself
        when it already is one, else a contiguous copy).

        The checks run over all rows at once (the fingerprints compared as one array, the
        field checks in one compiled pass, the legal action of each unfinished game's seat to
        move in another); the first bad row ``j`` raises exactly the
        ``TypeError`` / ``ValueError`` that :meth:`check_state` raises for it, its message
        prefixed ``"states[j]: "`` (``"states[j] (for slot k): "`` with ``slots``).
        """
        name = self.info.name
        if not isinstance(states, np.ndarray):
            raise TypeError(f"{name} states must be a numpy int64 array of shape (m, "
                            f"{self.state_size}), got {type(states).__name__}")
        if states.dtype != _I64 or states.ndim != 2:
            raise TypeError(f"{name} states must be a 2-D int64 array (one state per row), "
                            f"got dtype {states.dtype}, shape {states.shape}")
        s = np.ascontiguousarray(states)
        m = s.shape[0]
        bad = m  # the first row that fails
        if m and s.shape[1] != self.state_size:
            bad = 0  # every row has the wrong length
        elif m:
            wrong = np.flatnonzero(s[:, -1] != self.fingerprint)
            if wrong.size:
                bad = int(wrong[0])
            # the rows before the first wrong fingerprint, in one pass
            r, _ = self.state_spec().scan_rows(s[:bad])
            if r >= 0:
                bad = r
            # the rows before the first bad one: a move to make (one compiled pass)
            check_can_move(self, s[:bad], None if slots is None else slots[:bad])
        if bad == m:
            return s
        try:
            self.check_state(s[bad])  # the row's own error, as check_state words it
        except (TypeError, ValueError) as e:
            where = f"states[{bad}]" if slots is None else \
                f"states[{bad}] (for slot {int(slots[bad])})"
            raise type(e)(f"{where}: {e}") from None
        raise AssertionError(f"row {bad} failed the batched check but passes check_state")

    # -- kernels, guarded --------------------------------------------------------------------
    def _check_buffer(self, state, write: bool = True) -> None:
        """The guard of the kernel methods: ``state`` is a state vector they may use
        (``write=False``: one they only read, which may be read-only)."""
        if type(state) is np.ndarray and state.dtype is _I64 and state.shape == self._shape:
            f = state.flags
            if f.c_contiguous and (f.writeable or not write):
                return
        err = _describe(state, f"the {self.info.name} state", _I64, write)
        if err is None and state.shape != self._shape:
            err = ValueError(f"a {self.info.name} state has {self.state_size} entries, "
                             f"got {state.shape[0]}")
        if err is not None:
            raise err

    def _check_out(self, out, dtype: np.dtype, size: int, what: str) -> None:
        if type(out) is np.ndarray and out.dtype is dtype and out.ndim == 1 and out.size >= size:
            f = out.flags
            if f.c_contiguous and f.writeable:
                return
        err = _describe(out, what, dtype)
        if err is None and out.shape[0] < size:
            err = ValueError(f"{what} has {out.shape[0]} entries; it needs at least {size}")
        if err is not None:
            raise err

    def reset(self, state: np.ndarray, seed: int) -> None:
        """Deal a new game into ``state`` from the 63-bit deal seed ``seed``."""
        self._check_buffer(state)
        seed = _index(seed, "a deal seed")
        if not 0 <= seed <= _MAX_SEED:
            raise ValueError(f"a deal seed must be in [0, 2**63 - 1], got {seed}")
        self._call("k_reset", state, np.int64(seed), self.tab, self.opts)

    # Each kernel method first tries the fast path: the compiled entry point found by an
    # earlier call, after an inline check of the arguments' types (no extra Python call);
    # anything else goes through the full checks (clear errors) and numba's dispatch.

    def legal(self, state: np.ndarray, out: np.ndarray) -> int:
        """Write the legal action ids of the seat to move into ``out`` (int64, at least
        ``n_actions`` entries); returns their count."""
        f = self._direct.get("k_legal")
        if (f is not None and type(state) is _ND and state.dtype is _I64
                and state.shape == self._shape and type(out) is _ND and out.dtype is _I64
                and out.ndim == 1 and out.shape[0] >= self.n_actions
                and state.flags.c_contiguous and out.flags.c_contiguous and out.flags.writeable):
            return f(state, self.tab, self.opts, out)
        self._check_buffer(state, False)
        self._check_out(out, _I64, self.n_actions, "the legal-action buffer")
        return self._call("k_legal", state, self.tab, self.opts, out)

    def is_legal(self, state: np.ndarray, action: int) -> bool:
        """Whether ``action`` is legal for the seat to move (False outside the action space)."""
        f = self._direct.get("k_is_legal")
        if (f is not None and type(state) is _ND and state.dtype is _I64
                and state.shape == self._shape and state.flags.c_contiguous
                and type(action) in _INTS):
            if not 0 <= action < self.n_actions:
                return False
            return bool(f(state, action, self.tab, self.opts))
        self._check_buffer(state, False)
        action = _index(action, "an action")
        if not 0 <= action < self.n_actions:
            return False
        return bool(self._call("k_is_legal", state, np.int64(action), self.tab, self.opts))

    def step(self, state: np.ndarray, action: int) -> None:
        """Apply ``action`` for the seat to move; an illegal one is a ``ValueError`` and
        leaves ``state`` unchanged."""
        self._check_buffer(state)
        if not self.is_legal(state, action):
            raise ValueError(f"illegal action {action} in this {self.info.name} state"
                             + ("" if not self.done(state) else " (the game is over)"))
        f = self._direct.get("k_step")
        if f is not None and type(action) in _INTS:
            f(state, action, self.tab, self.opts)
        else:
            self._call("k_step", state, np.int64(action), self.tab, self.opts)

    def _step_checked(self, state: np.ndarray, action: int) -> None:
        """:meth:`step` for callers that have just checked ``is_legal(state, action)`` on
        their own state vector."""
        self._call("k_step", state, np.int64(action), self.tab, self.opts)

    def entry_points(self) -> Optional[tuple[Callable, Callable, Callable, Callable]]:
        """The compiled ``(is_legal, step, legal, encode)`` entry points, once each kernel
        has been called through its method (``None`` before).

        They take the arguments of the kernels (``state, action, tab, opts``; ``state, action,
        tab, opts``; ``state, tab, opts, out``; ``state, seat, tab, opts, offsets, out``) with
        no check at all: only for a caller that holds a state vector made by
        :meth:`new_state` (or validated by :meth:`check_state` and copied), buffers of the
        right dtype and size, an action id in the action space (a legal one for ``step``)
        and a seat of the game, as the AEC environment does for its own state vector.
        """
        d = self._direct
        fs = (d.get("k_is_legal"), d.get("k_step"), d.get("k_legal"), d.get("k_encode"))
        if fs[0] is None or fs[1] is None or fs[2] is None or fs[3] is None:
            return None
        return fs  # type: ignore[return-value]

    def encode(self, state: np.ndarray, seat: int, out: np.ndarray) -> None:
        """Write ``seat``'s observation of ``state`` into ``out`` (float32, ``layout.size``)."""
        f = self._direct.get("k_encode")
        if (f is not None and type(state) is _ND and state.dtype is _I64
                and state.shape == self._shape and type(out) is _ND and out.dtype is _F32
                and out.ndim == 1 and out.shape[0] >= self.layout.size
                and type(seat) in _INTS and 0 <= seat < self.n_players
                and state.flags.c_contiguous and out.flags.c_contiguous and out.flags.writeable):
            f(state, seat, self.tab, self.opts, self.offsets, out)
            return
        self._check_buffer(state, False)
        seat = _index(seat, "a seat")
        if not 0 <= seat < self.n_players:
            raise ValueError(f"seat {seat} is not a seat of a {self.n_players}-player game")
        self._check_out(out, _F32, self.layout.size, "the observation buffer")
        self._call("k_encode", state, np.int64(seat), self.tab, self.opts, self.offsets, out)

    @staticmethod
    def done(state: np.ndarray) -> bool:
        """Whether the game of ``state`` is over."""
        return state[PHASE] == P_DONE

    @staticmethod
    def current(state: np.ndarray) -> int:
        """The seat to move in ``state``."""
        return int(state[CUR])

    def rewards(self, state: np.ndarray) -> np.ndarray:
        """Rewards paid by the last step, per seat (``REW0..``).

        Contract for every game's ``step`` kernel: the slots are zero after a step that pays
        nothing and hold the payout after a step that pays (the end of the game, or the end of
        each hand of a match: such a game zeroes them at the start of every step).  The AEC env
        and the batched engine read them after each step.
        """
        return state[REW0:REW0 + self.n_players].astype(np.float64)

    def doublings(self, state: np.ndarray) -> int:
        """The number of times the stake has doubled (bombs, rockets ...) in ``state``."""
        return int(state[NDOUBLE])

    # -- actions -----------------------------------------------------------------------------
    def action_features(self, ids: Union[int, Sequence[int], np.ndarray]) -> np.ndarray:
        """Feature rows (float32) of action ids, for agents that score (state, action) pairs.

        Row layout: the play's cards as "at least k copies" planes (``ranks x depth``, depth =
        the most cards of one rank any play holds), a one-hot family (``N_FAMILIES``), chain
        length / 12, key rank / ranks, a bomb flag; then one one-hot slot per action id that
        is not a play (pass, bids, picks, declarations: ``n_actions - T`` slots, in id order).
        The table of every action's features is built on first use and kept.
        """
        feats = getattr(self, "_features", None)
        if feats is None:
            feats = self._features = _action_feature_table(self)
        return feats[np.asarray(ids, np.int64)]

    def block_of(self, action: int) -> str:
        """The name of the action block (``"play"``, ``"bid"`` ...) holding ``action``;
        ``ValueError`` when it is outside the action space."""
        for name, (a, b) in self.blocks.items():
            if a <= action < b:
                return name
        raise ValueError(f"action {action} is outside the action space [0, {self.n_actions})")

    def block_indices(self, ids: Union[int, Sequence[int], np.ndarray]) -> np.ndarray:
        """:meth:`block_of` of many action ids at once: the index of each id's block in
        ``list(self.blocks)`` (int64 array); ``ValueError`` when an id is in no block."""
        ids = np.asarray(ids, np.int64)
        spans = np.array(list(self.blocks.values()), np.int64).reshape(-1, 2)
        order = np.argsort(spans[:, 0], kind="stable")
        pos = np.searchsorted(spans[order, 0], ids, side="right") - 1
        idx = order[np.maximum(pos, 0)]
        bad = (pos < 0) | (ids >= spans[idx, 1])
        if bad.any():
            raise ValueError(f"action {int(ids[bad][0])} is outside the action space "
                             f"[0, {self.n_actions})")
        return idx

    def action_to_string(self, action: int) -> str:
        """The text of an action id (``"33344"``, ``"pass"``, ``"bid 2"`` ...), the inverse
        of :meth:`string_to_action`."""
        action = int(action)
        block = self.block_of(action)
        if block == "play":
            return self.table.row_string(action)
        return self._block_string(block, action - self.blocks[block][0])

    def string_to_action(self, text: str) -> int:
        """The action id of an action's text (:meth:`action_to_string`'s notation; a play as
        its cards or ``body+kickers``); ``ValueError`` naming what is wrong otherwise."""
        if not isinstance(text, str):
            raise TypeError(f"action string must be a str, got {type(text).__name__}")
        t = text.strip()
        a = self._parse_block_string(t)
        if a is not None:
            return a
        return self.table.find(t, what="action")

    def _block_string(self, block: str, i: int) -> str:  # pragma: no cover - per game
        raise NotImplementedError

    def _parse_block_string(self, text: str):  # pragma: no cover - per game
        raise NotImplementedError

    @staticmethod
    def _words(text: str) -> tuple[str, str]:
        """``(t, t.lower())`` with ``t`` the words of ``text`` joined by single spaces."""
        t = " ".join(text.split())
        return t, t.lower()

    def _parse_bid(self, text: str, max_bid: int):
        """Action id of ``"bid b"`` (``text`` as given; any case), bid ``b`` being action
        ``pass_id + b``; ``None`` when ``text`` is not a bid.  ``ValueError`` on a bad bid."""
        t = text.lower()
        if not t.startswith("bid"):
            return None
        try:
            b = int(t[3:])
        except ValueError:
            raise ValueError(f"bad bid {text!r}: write 'bid 1', 'bid 2' or 'bid 3'") from None
        if not 1 <= b <= max_bid:
            raise ValueError(f"bad bid {text!r}: bids are 1..{max_bid}")
        return self.pass_id + b

    def render(self, state: np.ndarray) -> str:  # pragma: no cover - per game
        """The ``render_mode="ansi"`` text of ``state``'s table."""
        raise NotImplementedError


def _remake(name: str, options: dict) -> "Game":
    """The game of a pickle (see :meth:`Game.__reduce__`)."""
    from ..api import make_game

    game = make_game(name)  # the default game's object when the options are the defaults
    return game if getattr(game, "options", {}) == options else make_game(name, **options)


def _action_feature_table(game: "Game") -> np.ndarray:
    """Feature rows of every action id of ``game`` (see :meth:`Game.action_features`)."""
    tab = game.tab
    R = game.deck.n_ranks
    T = len(game.table)
    D = int(max(1, tab.counts[:, :R].max())) if T else 1
    C = R * D
    extra = game.n_actions - T
    out = np.zeros((game.n_actions, C + N_FAMILIES + 3 + extra), np.float32)
    k = np.arange(D)
    out[:T, :C] = (tab.counts[:, :R, None] > k[None, None, :]).reshape(T, C)
    out[np.arange(T), C + tab.family] = 1.0
    out[:T, C + N_FAMILIES] = tab.length / 12.0
    out[:T, C + N_FAMILIES + 1] = np.minimum(tab.key, R) / R
    out[:T, C + N_FAMILIES + 2] = tab.power > 0
    out[np.arange(T, game.n_actions), C + N_FAMILIES + 3 + np.arange(extra)] = 1.0
    return out
