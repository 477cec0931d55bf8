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

from dataclasses import dataclass, field
from typing import Any, Callable

import numba
import numpy as np

from .cards import Deck
from .combos import N_FAMILIES
from .encode import Layout
from .state import CUR, NDOUBLE, P_DONE, PHASE, REW0, state_size
from .table import Table


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
    """Base class.  Subclasses set the kernels and fill ``blocks`` and ``layout``."""

    info: GameInfo
    deck: Deck
    table: Table
    layout: Layout
    blocks: dict[str, tuple[int, int]]
    #: keys of ``reset(options=...)`` that describe a custom deal
    deal_keys: tuple[str, ...] = ("hands",)
    k_reset: Callable
    k_legal: Callable
    k_is_legal: Callable
    k_step: Callable
    k_encode: Callable

    def __init__(self, opts: np.ndarray):
        self.opts = opts
        self._direct: dict = {}
        self.tab = self.table.arrays
        self.offsets = self.layout.start_array()
        self.n_players = self.info.n_players
        self.state_size = state_size(self.n_players)
        self.pass_id = len(self.table)
        self.n_actions = max(b for _, b in self.blocks.values())

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
        come from this class (int64 state vectors from :meth:`new_state`, float32 buffers),
        which is what makes skipping the type check safe.
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
        return np.zeros(self.state_size, np.int64)

    def check_state(self, state) -> np.ndarray:
        """``state`` as this game's state vector, or ``TypeError``/``ValueError``."""
        if not isinstance(state, np.ndarray) or state.dtype != np.int64 or state.ndim != 1:
            raise TypeError("a state must be a 1-D int64 numpy array (from get_state / new_state)")
        if state.shape[0] != self.state_size:
            raise ValueError(f"a {self.info.name} state has {self.state_size} entries, got {state.shape[0]}")
        return np.ascontiguousarray(state)

    def reset(self, state: np.ndarray, seed: int) -> None:
        self._call("k_reset", state, np.int64(seed), self.tab, self.opts)

    def legal(self, state: np.ndarray, out: np.ndarray) -> int:
        return self._call("k_legal", state, self.tab, self.opts, out)

    def is_legal(self, state: np.ndarray, action: int) -> bool:
        return bool(self._call("k_is_legal", state, np.int64(action), self.tab, self.opts))

    def step(self, state: np.ndarray, action: int) -> None:
        self._call("k_step", state, np.int64(action), self.tab, self.opts)

    def encode(self, state: np.ndarray, seat: int, out: np.ndarray) -> None:
        self._call("k_encode", state, np.int64(seat), self.tab, self.opts, self.offsets, out)

    @staticmethod
    def done(state: np.ndarray) -> bool:
        return state[PHASE] == P_DONE

    @staticmethod
    def current(state: np.ndarray) -> int:
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
        return int(state[NDOUBLE])

    # -- actions -----------------------------------------------------------------------------
    def action_features(self, ids) -> np.ndarray:
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
        for name, (a, b) in self.blocks.items():
            if a <= action < b:
                return name
        raise ValueError(f"action {action} is outside the action space [0, {self.n_actions})")

    def action_to_string(self, action: int) -> str:
        action = int(action)
        block = self.block_of(action)
        if block == "play":
            return self.table.row_string(action)
        return self._block_string(block, action - self.blocks[block][0])

    def string_to_action(self, text: str) -> int:
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

    def render(self, state: np.ndarray) -> str:  # pragma: no cover - per game
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
