"""Validation of state vectors: what :meth:`cardenvs.core.game.Game.check_state` checks.

The kernels trust the state vector they are given: a seat, a play-table row or a log entry
out of range is read (or written) outside its array.  A state that comes from outside the
engine (``set_state``, a batch loaded into :class:`cardenvs.vector.VectorGame`) is therefore
checked first, by one compiled pass over the vector driven by data:

* a closed range ``[lo, hi]`` for every entry: the shared header fields here, each game's own
  fields (its ``AUX`` header slots and its region after the shared layout) declared by the
  game as :class:`StateField` records, card counts within the deck's copies, log entries
  that decode to an action id and a seat;
* card conservation: the card regions that hold the deck at a time (:class:`CardRegion`,
  some counted only while a header field is in a range, e.g. the kitty before the landlord
  takes it) add up to the whole deck, rank by rank;
* the play-phase part of the action log (from ``PLAY_START``, while a header field is in a
  range) holds only play rows and pass, which is what the observation's "recent" field reads;
* orderings between fields (``s[a] <= s[b]``, maybe only while a field is in a range), e.g.
  ``PLAY_START <= NLOG``, or "the seat to move is the digger while he buries" (two of them);
* the fingerprint of the game and option set (the state's last entry, see
  :mod:`cardenvs.core.state`);
* a move to make (:func:`check_can_move`): in a game that is not over, the seat to move has a
  legal action (the game's own ``legal`` kernel), so a loaded state never leaves an env stuck
  or a :class:`cardenvs.vector.VectorGame` slot without a move.

A failure is a ``ValueError`` naming the field, its value and what was expected.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Sequence

import numba
import numpy as np
from numba import njit

from .kernels import cttz

if TYPE_CHECKING:
    from .game import Game
from .state import CUR, MAXLOG, PHASE, P_DONE, hand_off

I64_MIN, I64_MAX = -(2**63), 2**63 - 1

# failure kinds of _scan (code = kind << 32 | index)
K_RANGE, K_CARDS, K_SEAT, K_WINDOW, K_ORDER, K_COND = 1, 2, 3, 4, 5, 6


@dataclass(frozen=True)
class StateField:
    """Entries ``index .. index + count - 1`` of a state, each in ``[lo, hi]`` (inclusive).

    ``when = (field, lo, hi)``: the range applies only while ``lo <= state[field] <= hi``
    (e.g. "the landlord is a seat during the play phase"), on top of the field's
    unconditional range.
    """

    name: str
    index: int
    lo: int
    hi: int
    count: int = 1
    when: Optional[tuple[int, int, int]] = None


@dataclass(frozen=True)
class CardRegion:
    """16 card-count slots at ``index`` that hold part of the deck.

    ``when = (field, lo, hi)``: the region counts toward the deck only while
    ``lo <= state[field] <= hi`` (otherwise it is a record, e.g. the kitty once the landlord
    has taken it); ``None``: always.
    """

    name: str
    index: int
    when: Optional[tuple[int, int, int]] = None


class StateSpec:
    """The compiled checks of one game's state vectors (built once per :class:`Game`)."""

    def __init__(self, size: int, fields: Sequence[StateField], regions: Sequence[CardRegion],
                 deck: np.ndarray, *, n_players: int, log_off: int, nlog: int,
                 window: Optional[tuple[int, int, tuple[int, int, int]]] = None,
                 order: Sequence[tuple] = (),
                 cards_when: Optional[tuple[int, int, int]] = None):
        self.size = size
        self.lo = np.full(size, I64_MIN, np.int64)
        self.hi = np.full(size, I64_MAX, np.int64)
        self.names: list[str] = [f"entry {i}" for i in range(size)]
        cond = []
        for f in fields:  # later declarations override earlier ones
            for k in range(f.count):
                i = f.index + k
                if not 0 <= i < size:
                    raise ValueError(f"state field {f.name} at {i} is outside a {size}-entry state")
                if f.when is not None:
                    cond.append((i, f.lo, f.hi, *f.when))
                    continue
                self.lo[i], self.hi[i] = f.lo, f.hi
                self.names[i] = f.name if f.count == 1 else f"{f.name}[{k}]"
        self.cond = np.array(cond or [(0, 0, 0, 0, 0, 0)], np.int64).reshape(-1, 6)
        self.n_cond = len(cond)
        self.region_names = [r.name for r in regions]
        reg = np.zeros((len(regions), 4), np.int64)
        for j, r in enumerate(regions):
            reg[j] = (r.index, -1, 0, 0) if r.when is None else (r.index, *r.when)
        self.regions = reg
        self.deck = np.asarray(deck, np.int64)
        # conservation applies while lo <= s[field] <= hi (field -1: always)
        self.cards_when = np.array((-1, 0, 0) if cards_when is None else cards_when, np.int64)
        self.n_players = n_players
        self.log_off = log_off
        self.nlog = nlog
        # window: (first action number field, largest allowed action, (field, lo, hi) when)
        self.window = np.array([-1, 0, -1, 0, 0] if window is None
                               else [window[0], window[1], *window[2]], np.int64)
        # (a, b, field, lo, hi): s[a] <= s[b] while lo <= s[field] <= hi (field -1: always)
        rows = [tuple(o) + (-1, 0, 0) if len(o) == 2 else (o[0], o[1], *o[2]) for o in order]
        self.order = np.array(rows or [(0, 0, -1, 0, 0)], np.int64).reshape(-1, 5)
        self.n_order = len(rows)
        self._args = (self.lo, self.hi, self.cond, np.int64(self.n_cond), self.regions,
                      self.deck, self.cards_when, np.int64(n_players), np.int64(log_off),
                      np.int64(nlog), self.window, self.order, np.int64(self.n_order))
        self._entries: dict = {}

    def _call(self, kernel, s: np.ndarray):
        """``kernel(s, *checks)``; after the first call straight through the compiled entry
        point, skipping numba's type dispatch (the argument types never change)."""
        args = self._args
        entry = self._entries.get(kernel)
        if entry is not None:
            return entry(s, *args)
        out = kernel(s, *args)
        cres = kernel.overloads.get(tuple(numba.typeof(a) for a in (s, *args)))
        if cres is not None:
            self._entries[kernel] = cres.entry_point
        return out

    def scan(self, s: np.ndarray) -> int:
        """0 when ``s`` (a 1-D C-contiguous int64 array of the right length) passes, else a
        failure code (see :meth:`describe`)."""
        return self._call(_scan, s)

    def scan_rows(self, states: np.ndarray) -> tuple[int, int]:
        """:meth:`scan` of every row of ``states`` (a 2-D C-contiguous int64 array, rows of
        the right length) in one compiled pass: ``(row, code)`` of the first row that fails,
        or ``(-1, 0)`` when every row passes."""
        r, code = self._call(_scan_rows, states)
        return int(r), int(code)

    def describe(self, s: np.ndarray, code: int, game: str) -> str:
        """The message of the failed check ``code`` (:meth:`scan`'s) on state ``s`` of the
        game named ``game``: the field, its value and its range."""
        kind, i = code >> 32, code & 0xFFFFFFFF
        if kind == K_RANGE:
            return (f"{game} state field {self.names[i]} = {int(s[i])} out of range "
                    f"[{int(self.lo[i])}, {int(self.hi[i])}]")
        if kind == K_COND:
            j, lo, hi, f, flo, fhi = (int(x) for x in self.cond[i])
            return (f"{game} state field {self.names[j]} = {int(s[j])} out of range [{lo}, {hi}] "
                    f"while {self.names[f]} = {int(s[f])}")
        if kind == K_CARDS:
            total = 0
            parts = []
            for j, (off, f, lo, hi) in enumerate(self.regions):
                if f < 0 or lo <= s[f] <= hi:
                    total += int(s[off + i])
                    parts.append(self.region_names[j])
            return (f"{game} state: {total} cards of rank index {i} in {', '.join(parts)}; "
                    f"the deck holds {int(self.deck[i])} (cards are not conserved)")
        if kind == K_SEAT:
            e = int(s[self.log_off + i % MAXLOG])
            return (f"{game} state: log entry of action number {i} = {e} names seat {e % 8}; "
                    f"the game has {self.n_players} seats")
        if kind == K_WINDOW:
            e = int(s[self.log_off + i % MAXLOG])
            return (f"{game} state: log entry of action number {i} (play phase) is action "
                    f"{e // 8}; only play rows and pass ({int(self.window[1])}) are logged there")
        if kind == K_ORDER:
            a, b = (int(x) for x in self.order[i, :2])
            return (f"{game} state field {self.names[a]} = {int(s[a])} must not exceed "
                    f"{self.names[b]} = {int(s[b])}")
        return f"{game} state: check failed (code {code})"  # pragma: no cover


@njit(cache=True)
def _scan(s, lo, hi, cond, n_cond, regions, deck, cards_when, n, log_off, nlog, window, order,
          n_order):
    """The checks of :class:`StateSpec` in one pass; 0 or ``kind << 32 | index``."""
    out = False  # any entry out of its range (a loop without exits: it vectorizes)
    for i in range(s.shape[0]):
        v = s[i]
        out |= (v < lo[i]) | (v > hi[i])
    if out:
        for i in range(s.shape[0]):
            v = s[i]
            if v < lo[i] or v > hi[i]:
                return (1 << 32) | i
    for j in range(n_cond):
        c = s[cond[j, 3]]
        if cond[j, 4] <= c <= cond[j, 5]:
            v = s[cond[j, 0]]
            if v < cond[j, 1] or v > cond[j, 2]:
                return (6 << 32) | j
    cw = cards_when[0]
    if cw < 0 or cards_when[1] <= s[cw] <= cards_when[2]:
        # the regions counted now (a bit each), then every rank's total without branches
        on = 0
        for j in range(regions.shape[0]):
            f = regions[j, 1]
            if f < 0 or (regions[j, 2] <= s[f] <= regions[j, 3]):
                on |= 1 << j
        wrong = 0  # a bit per rank whose total is not the deck's
        for r in range(16):
            t = 0
            for j in range(regions.shape[0]):
                t += s[regions[j, 0] + r] * ((on >> j) & 1)
            wrong |= (t != deck[r]) << r
        if wrong:
            return (2 << 32) | cttz(wrong)
    for j in range(n_order):
        f = order[j, 2]
        if (f < 0 or order[j, 3] <= s[f] <= order[j, 4]) and s[order[j, 0]] > s[order[j, 1]]:
            return (5 << 32) | j
    k = s[nlog]
    first = k - MAXLOG if k > MAXLOG else 0
    for i in range(first, k):
        if s[log_off + i % MAXLOG] % 8 >= n:
            return (3 << 32) | i
    wf = window[0]
    if wf >= 0:
        c = window[2]
        if window[3] <= s[c] <= window[4]:
            start = s[wf] if s[wf] > first else first
            for i in range(start, k):
                if s[log_off + i % MAXLOG] // 8 > window[1]:
                    return (4 << 32) | i
    return 0


@njit(cache=True)
def _scan_rows(states, lo, hi, cond, n_cond, regions, deck, cards_when, n, log_off, nlog, window,
               order, n_order):
    """:func:`_scan` of each row of ``states``: ``(row, code)`` of the first failure, or
    ``(-1, 0)``."""
    for r in range(states.shape[0]):
        code = _scan(states[r], lo, hi, cond, n_cond, regions, deck, cards_when, n, log_off,
                     nlog, window, order, n_order)
        if code:
            return r, code
    return -1, 0


# -- a move to make --------------------------------------------------------------------------------


@njit
def _stuck_row(k_legal, states, tab, opts, out):
    """The first row of ``states`` whose game is not over and whose seat to move has no legal
    action (``k_legal`` finds none), or -1 (a template of :mod:`cardenvs.core.specialize`)."""
    for i in range(states.shape[0]):
        s = states[i]
        if s[PHASE] != P_DONE and k_legal(s, tab, opts, out) <= 0:
            return i
    return -1


def check_can_move(game: Game, states: np.ndarray, slots: Optional[Sequence[int]] = None
                   ) -> None:
    """Raise ``ValueError`` when a state of ``game`` is not over but leaves the seat to move
    no legal action (e.g. his hand moved to his played pile): the env would be stuck, a
    :class:`cardenvs.vector.VectorGame` slot could not be derived.

    Args:
        game: the :class:`cardenvs.core.game.Game` the states belong to.
        states: one state vector (1-D) or one per row (2-D), C-contiguous ``int64``, already
            through the field checks of :class:`StateSpec` (so the seat and the play-table
            rows it holds are in range).
        slots: optional labels of the rows, named in the message as
            :meth:`~cardenvs.core.game.Game.check_states` names them.

    One state is checked with :meth:`Game.legal <cardenvs.core.game.Game.legal>`; a batch in
    one compiled pass of the game's ``legal`` kernel (:func:`cardenvs.core.specialize.run`).
    Nothing is written to ``states``.
    """
    if not states.flags.writeable:  # the kernels' signatures take writeable arrays
        states = states.copy()
    out = np.empty(game.n_actions, np.int64)
    if states.ndim == 1:
        if states[PHASE] == P_DONE or game.legal(states, out) > 0:
            return
        raise ValueError(_stuck_message(game, states))
    from .specialize import run

    row = int(run(_stuck_row, game, f"the state checks for {game.info.name}", game.k_legal,
                  states, game.tab, game.opts, out))
    if row < 0:
        return
    where = f"states[{row}]" if slots is None else f"states[{row}] (for slot {int(slots[row])})"
    raise ValueError(f"{where}: {_stuck_message(game, states[row])}")


def _stuck_message(game, s: np.ndarray) -> str:
    seat = int(s[CUR])
    held = int(s[hand_off(seat):hand_off(seat) + 16].sum())
    return (f"{game.info.name} state: the game is not over (PHASE = {int(s[PHASE])}) but seat "
            f"{seat}, to move, has no legal action (holding {held} cards); a state must leave "
            f"the seat to move a legal action until the game is over")
