"""The batched engine: ``N`` games of one game stepped together by numba, no Python per game.

:class:`VectorGame` holds ``N`` independent games ("slots") of one registered game (any name
of :data:`cardenvs.GAMES`, with one option set) in a 2-D ``int64`` state array, and drives
them all through the game's own five kernels (:mod:`cardenvs.core.game`) inside one numba
function (:mod:`cardenvs.vector_kernels` holds it and its siblings), exactly as
:func:`cardenvs.core.rollout.random_rollouts` does for one game: the kernels' dispatchers are
parameters (``k_*``), so the same code serves every game, and a game added to the registry
needs nothing here.  numba cannot cache a function with dispatcher arguments, so
:mod:`cardenvs.core.specialize` generates one copy of it per game's kernel set with the
kernels bound as globals, compiled with ``cache=True``: the first use on a machine compiles it
(15-60 s, said on stderr), later processes load it from the cache (3- and 4-player Dou Dizhu
share one).

Outputs live in preallocated arrays, updated in place by every call (read them, copy what you
keep):

========================  ===================  =================================================
attribute                 shape, dtype         meaning
========================  ===================  =================================================
``obs``                   ``(N, D)`` float32   observation of the seat to move (``observe=True``;
                                               else ``None``); zeros in a finished slot
``legal``                 ``(N, K)`` int64     legal action ids of the seat to move, padded
                                               with ``-1`` after ``n_legal[i]`` entries
``n_legal``               ``(N,)`` int64       how many of ``legal[i]`` are legal ids
``masks``                 ``(N, A)`` int8      dense legal-action masks (``masks=True``; else
                                               ``None``): a 26k-entry mask costs more than a move
``seat``                  ``(N,)`` int64       seat to move (``-1`` in a finished slot)
``rewards``               ``(N, P)`` float32   what the last :meth:`step` paid each seat
``done``                  ``(N,)`` bool        the last :meth:`step` finished the slot's game
``states``                ``(N, S)`` int64     the games' state vectors (:mod:`cardenvs.core.state`),
                                               a read-only view (writing would leave the
                                               other outputs stale)
``seeds``                 ``(N,)`` int64       each slot's seed (see *Seeds* below)
``deals``                 ``(N,)`` int64       deals started in each slot since :meth:`reset`
``final_states``          ``(N, S)`` int64     with ``keep_final=True``: the finished game's
                                               state when ``done[i]``
``final_obs``             ``(N, D)`` float32   with ``keep_final=True`` and ``observe=True``: the
                                               finished game's observation from the seat that
                                               made its last move
========================  ===================  =================================================

**Rewards** follow the reward contract of :meth:`cardenvs.core.game.Game.rewards`: after each
step the game's ``REW`` slots hold what that step paid (zero after a step that pays nothing;
the final payout after the step that ends the game; games with matches also pay when a hand
ends).  ``rewards[i]`` is that, per seat, for slot ``i``'s step of the last call.

**Automatic reset** (``auto_reset=True``, the default): on the step that finishes slot ``i``'s
game, ``done[i]`` is True and ``rewards[i]`` holds the finished game's final payout, while
``obs``, ``legal``, ``n_legal``, ``masks``, ``seat`` and ``states[i]`` already show the *next*
game's first decision (its deal drawn as described below).  ``final_states`` /
``final_obs`` keep the finished game when asked for.  With ``auto_reset=False`` a finished slot
stays finished (``seat[i] == -1``, ``n_legal[i] == 0``) until :meth:`reset_slots`; stepping
it is a ``ValueError``.

**Seeds** (the link to the AEC environment).  Slot ``i`` owns a
``numpy.random.default_rng(seeds[i])`` generator that draws each of its deals' 63-bit deal
seed exactly as :meth:`cardenvs.core.aec.CardEnv.reset` does, so slot ``i``'s games are the
AEC env's games after ``env.reset(seed=int(seeds[i]))`` followed by one ``env.reset()`` per
later deal: the ``d``-th deal of the slot (``deals[i] == d + 1`` while it is played, ``d``
counted from 0) is the env's deal after ``reset(seed=seeds[i])`` and ``d`` further
``reset()`` calls, and the same actions give the same game, observations, legal actions and
rewards.  :meth:`reset` takes ``seeds`` (one per slot, used as given) or ``seed`` (one int:
the slot seeds are ``SeedSequence(seed).generate_state(N, uint64) >> 1``, so batches from
different seeds do not share slots) or neither (slots continue their own generators: the
AEC env's ``reset()`` without a seed; fresh entropy on the very first reset).  Random actions
(:meth:`step_random`, :meth:`random_actions`) come from a separate splitmix64 stream per slot
seeded from ``seeds[i]``, so they never disturb the deals.

**Legal-action width** ``K`` (``max_legal``): the padded width of ``legal``.  The default is
``min(A, 4096)`` (``A`` = the action-space size).  The largest legal counts found by a
hill-climbing search over free-lead hands are 521 (3-player Dou Dizhu, 20 cards), 1,845
(4-player Dou Dizhu, 33 cards), 1,766 (Lanxi Wulong, 25 cards with wild jokers) and 75
(Wakeng); Da Niangniang's whole action space is 349.  A position with more than ``K`` legal
actions is never truncated: the call stops with a ``RuntimeError`` naming the slot and the
count (the batch must then be :meth:`reset`); pass a larger ``max_legal`` (up to ``A``).

**Bad actions**: :meth:`step` checks every action before applying any; an action outside
``[0, A)`` or illegal for its slot's seat to move is a ``ValueError`` naming the slot, the
action and the legal ids, and leaves every game untouched.  This raw engine has no player to
penalise, so it always raises; the views over the games (the AEC env, SeatEnv, SeatVecEnv)
default to ``illegal="lose"`` (PettingZoo's convention: the mover's game ends with
``illegal_reward``) and take ``illegal="raise"`` for this behaviour.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, Union, cast

import numba
import numpy as np
from numpy.typing import ArrayLike

from .core.options import check_seed
from .core.specialize import specialize
from .core.policy import PP_GREEDY, greedy_mask, policy_code, policy_params
from .core.state import CUR
from .vector_kernels import (  # noqa: F401 - OP_ADVANCE: cardenvs.sb3's
    C_AUTO_RESET, C_K, C_KEEP_FINAL, C_LOSE, C_MASKS, C_NA, C_NP, C_OBSERVE, C_SEEDBUF,
    E_ACTION, E_CODE, E_COUNT, E_REFILL, E_SKIPPED, E_SLOT, ERR_FINISHED, ERR_ILLEGAL,
    ERR_NO_LEGAL, ERR_NONE, ERR_OVER_K, ERR_RANGE, ERR_STUCK, IV_DEALS, IV_FLEN, IV_NLEGAL,
    IV_PTR, IV_RNG, IV_SEAT, IV_VIEW, MAX_DECISIONS, N_CONFIG, N_ERR, N_IV, OP_ADVANCE,
    OP_RANDOM_ACTIONS, OP_RANDOM_STEP, OP_RESET, OP_STEP, _agent_moves, _engine, _load_engine,
    _rollout_engine,
)

#: default cap on the padded legal-action width ``K``
DEFAULT_MAX_LEGAL = 4096
#: deal seeds drawn ahead per slot (refilled from the slot's generator when used up)
SEED_BUFFER = 16
_MAX_SEED = 2**63 - 1  # as in cardenvs.core.aec: deal seeds are integers(0, 2**63 - 1)

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_SALT = np.uint64(0xD1B54A32D192ED03)


def _as_game(game, options: dict):
    """A compiled :class:`cardenvs.core.game.Game` from a registry name (or a Game itself)."""
    from .api import make_game

    if isinstance(game, str):
        return make_game(game, **options)
    for name in ("k_reset", "k_legal", "k_is_legal", "k_step", "k_encode", "info"):
        if not hasattr(game, name):
            raise TypeError(f"game must be a registry name (one of cardenvs.GAMES) or a cardenvs "
                            f"Game; {type(game).__name__} has no {name}")
    if options:
        raise TypeError("options are given with a game name, not with a Game object")
    return game


def _check_count(name: str, value, lo: int, hi: Optional[int] = None) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < lo or (hi is not None and value > hi):
        rng = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
        raise ValueError(f"{name} must be {rng}, got {value}")
    return int(value)


def slot_seeds(seed: int, n: int) -> np.ndarray:
    """The ``n`` slot seeds :meth:`VectorGame.reset` derives from one int ``seed``:
    ``SeedSequence(seed).generate_state(n, uint64) >> 1`` (non-negative ``int64``)."""
    st = np.random.SeedSequence(seed).generate_state(n, np.uint64)
    return (st >> np.uint64(1)).astype(np.int64)


def rollout_streams(seed: int, m: int) -> np.ndarray:
    """The ``m`` splitmix64 generator states :meth:`VectorGame.rollout` gives the played slots
    for ``seed`` (``SeedSequence([seed mod 2**64, "ROLL"])``; one stream per played slot, in
    the order of ``slots``)."""
    return np.random.SeedSequence([int(seed) % 2**64, 0x524F4C4C]).generate_state(
        m, np.uint64).view(np.int64)


class VectorGame:
    """``n`` games of one game, stepped together in numba (see the module docstring).

    Args:
        game: a registry name (``"doudizhu"``, ``"wakeng"``, ... any of ``cardenvs.GAMES``)
            or a compiled Game (``cardenvs.make_game(name, **options)``).
        n: number of slots (independent games), ``>= 1``.
        observe: keep ``obs`` (the observation of each slot's seat to move) up to date.
        masks: keep dense ``(n, A)`` int8 masks of the legal actions.
        max_legal: padded width ``K`` of ``legal`` (default ``min(A, 4096)``; see the
            module docstring).
        auto_reset: restart finished games at once (default) or leave them finished.
        keep_final: keep each finished game's state (and observation) in ``final_states`` /
            ``final_obs`` on the step that finishes it.
        actions: ``"flat"`` (default) or ``"compact"`` (a
            :class:`cardenvs.compact_vector.CompactVectorGame`: bodies and kickers decided one
            at a time).
        **options: the game's options (with a registry name).

    Example::

        vg = VectorGame("doudizhu", 1024)
        vg.reset(seed=0)
        for _ in range(100):
            vg.step_random()          # or vg.step(actions) with actions[i] in vg.legal[i]
            finished = vg.done.nonzero()[0]; paid = vg.rewards[finished]
    """

    def __new__(cls, game: Union[str, Any] = None, n: int = 1, *, actions: str = "flat",
                **kwargs: Any):
        """``actions="compact"`` makes a :class:`cardenvs.compact_vector.CompactVectorGame`
        (the compact action space of :mod:`cardenvs.core.compact`, the same outputs)."""
        from .core.compact import check_actions

        if check_actions(actions) == "compact":
            from .compact_vector import CompactVectorGame

            return CompactVectorGame(game, n, **kwargs)
        return super().__new__(cls)

    def __init__(self, game: Union[str, Any], n: int, *, observe: bool = True,
                 masks: bool = False, max_legal: Optional[int] = None, auto_reset: bool = True,
                 keep_final: bool = False, actions: str = "flat", **options: Any):
        self.game = _as_game(game, options)
        self._spec = (self.game.info.name, dict(getattr(self.game, "options", {})))
        self.n = _check_count("n", n, 1)
        for name, v in (("observe", observe), ("masks", masks), ("auto_reset", auto_reset),
                        ("keep_final", keep_final)):
            if not isinstance(v, (bool, np.bool_)):
                raise TypeError(f"{name} must be a bool, got {type(v).__name__}")
        g = self.game
        self.n_players = int(g.n_players)
        self.n_actions = int(g.n_actions)
        self.obs_size = int(g.layout.size)
        self.state_size = int(g.state_size)
        A = self.n_actions
        self.max_legal = (min(A, DEFAULT_MAX_LEGAL) if max_legal is None
                          else _check_count("max_legal", max_legal, 1, A))
        self.observe, self.use_masks = bool(observe), bool(masks)
        self.auto_reset, self.keep_final = bool(auto_reset), bool(keep_final)
        self._alloc()
        self._started = False
        #: deals that ended before a learner seat moved (only with learner seats: cardenvs.sb3)
        self.skipped_deals = 0
        self._broken: Optional[str] = None
        self._gens: list = []

    # -- buffers ---------------------------------------------------------------------------------
    def _alloc(self) -> None:
        n, P, A, D, S, K = (self.n, self.n_players, self.n_actions, self.obs_size,
                            self.state_size, self.max_legal)
        self._states = np.zeros((n, S), np.int64)
        self._states[:, -1] = self.game.fingerprint  # as Game.new_state: kept by every reset
        self._obs = np.zeros((n if self.observe else 1, D), np.float32)
        self._masks = np.zeros((n if self.use_masks else 1, A if self.use_masks else 1), np.int8)
        self.legal = np.full((n, K), -1, np.int64)
        self.rewards = np.zeros((n, P), np.float32)
        self.done = np.zeros(n, np.bool_)
        kf = self.keep_final
        self._final_states = np.zeros((n if kf else 1, S), np.int64)
        self._final_obs = np.zeros((n if kf and self.observe else 1, D), np.float32)
        self.seeds = np.zeros(n, np.int64)
        self._seed_buf = np.zeros((n, SEED_BUFFER), np.int64)
        self._iv = np.zeros((N_IV, n), np.int64)
        self._iv[IV_SEAT] = -1
        self._iv[IV_VIEW] = -1
        self._fv = np.zeros((2, n), np.float64)
        self._fpar = np.zeros(P + 1, np.float64)
        self._cfg = np.zeros(N_CONFIG + P, np.int64)
        c = self._cfg
        c[C_OBSERVE], c[C_MASKS] = self.observe, self.use_masks
        c[C_AUTO_RESET], c[C_KEEP_FINAL] = self.auto_reset, self.keep_final
        c[C_K], c[C_NP], c[C_NA], c[C_SEEDBUF] = K, P, A, SEED_BUFFER
        self._scratch = np.zeros(A + 1, np.int64)
        self._bad = np.zeros(n, np.bool_)
        self._err = np.zeros(N_ERR, np.int64)
        self._all = np.arange(n, dtype=np.int64)
        self._actions = np.zeros(n, np.int64)
        # a compact batch's arrays (cardenvs.compact_vector sets them): first map, marks,
        # compact legal ids and their counts; empty: a flat batch
        self._cx = (np.zeros(0, np.int64), np.zeros((1, 1), np.int8), np.zeros((1, 1), np.int64),
                    np.zeros(1, np.int64))
        self._bind()

    def _bind(self) -> None:
        """Row views of the packed arrays, and the kernel's fixed arguments."""
        iv = self._iv
        self.n_legal, self.seat, self.deals = iv[IV_NLEGAL], iv[IV_SEAT], iv[IV_DEALS]
        self._seed_ptr, self._view_seat = iv[IV_PTR], iv[IV_VIEW]
        self._final_len = iv[IV_FLEN]
        self._acc, self._carry = self._fv[0], self._fv[1]
        g = self.game
        self._head = (g.k_reset, g.k_legal, g.k_is_legal, g.k_step, g.k_encode, g.tab, g.opts,
                      g.offsets, self._states)
        self._tail = (self._seed_buf, iv, self.legal, self._obs, self._masks, self.rewards,
                      self.done, self._final_states, self._final_obs, self._fv, self._fpar,
                      self._bad, self._scratch, self._cfg, self._err, *self._cx)
        self._entry = None
        # compiled entry points of _fast_call: (entry point, indices of the arguments it takes)
        self._entries: dict[Callable[..., Any], tuple[Callable[..., Any], tuple[int, ...]]] = {}

    def _fast_call(self, engine, label: str, *args):
        """``engine(*args)`` through its cached per-game copy (:mod:`cardenvs.core.specialize`:
        the kernels bound as globals, so a new process loads it from numba's cache instead of
        compiling it); from the second call on straight through its compiled entry point,
        skipping numba's type dispatch (which types every argument: tens of microseconds; the
        argument types of each call site never change).  ``label`` names it in the one-off
        "compiling ..." notice."""
        hit = self._entries.get(engine)
        if hit is not None:
            entry, keep = hit
            return entry(*[args[i] for i in keep])
        spec = specialize(engine, self.game, f"{label} for {self.game.info.name}")
        if spec is None:  # kernels not importable by name: the generic template
            d, keep = engine, tuple(range(len(args)))
            out = engine(*args)
        else:
            d = spec.dispatcher
            keep = tuple(i for i, k in enumerate(spec.keep[:len(args)]) if k)
            out = spec.call(tuple(args[i] for i in keep))
        cres = d.overloads.get(tuple(numba.typeof(args[i]) for i in keep))
        if cres is not None:
            self._entries[engine] = (cres.entry_point, keep)
        return out

    def _set_learner(self, seats: Sequence[int], lose: bool, illegal_reward: float) -> None:
        """Make ``seats`` the learner's (used by :mod:`cardenvs.sb3`): their pay accumulates
        in ``_acc`` (mean over the seats), ``OP_ADVANCE`` plays the other seats, and with
        ``lose`` an illegal learner action ends its game paying ``illegal_reward``."""
        P = self.n_players
        self._cfg[N_CONFIG:] = 0
        self._cfg[[N_CONFIG + s for s in seats]] = 1
        self._fpar[:P] = 0.0
        self._fpar[list(seats)] = 1.0 / len(seats)
        self._fpar[P] = float(illegal_reward)
        self._cfg[C_LOSE] = int(bool(lose))

    @property
    def states(self) -> np.ndarray:
        """The games' state vectors, ``(N, S)`` int64, as a read-only view: a write would
        leave ``seat``, ``legal``, ``obs`` and ``masks`` stale (load states through the
        engine instead); copy a row to keep or change it."""
        v = self._states.view()
        v.flags.writeable = False
        return v

    @property
    def obs(self) -> Optional[np.ndarray]:
        """``(N, D)`` float32 observations of the slots' seats to move (``None`` unless
        ``observe``)."""
        return self._obs if self.observe else None

    @property
    def masks(self) -> Optional[np.ndarray]:
        """``(N, A)`` int8 legal-action masks (``None`` unless ``masks=True``)."""
        return self._masks if self.use_masks else None

    @property
    def final_states(self) -> Optional[np.ndarray]:
        """``(N, S)`` int64: the game each slot finished on the last step (``None`` unless
        ``keep_final``)."""
        return self._final_states if self.keep_final else None

    @property
    def final_obs(self) -> Optional[np.ndarray]:
        """``(N, D)`` float32: the finished games' last observations (``None`` unless
        ``keep_final`` and ``observe``)."""
        return self._final_obs if self.keep_final and self.observe else None

    # -- the kernel call --------------------------------------------------------------------------
    def _run(self, op: int, slots: np.ndarray, actions: np.ndarray, clear: bool) -> None:
        if self._broken is not None:
            raise RuntimeError(f"the batch is in an inconsistent state after an error "
                               f"({self._broken}); call reset()")
        entry = self._entry
        if entry is not None:
            status = entry(op, int(clear), *self._ehead, slots, actions, *self._tail)
        else:
            args = (np.int64(op), np.int64(clear), *self._head, slots, actions, *self._tail)
            engine, head = _engine, self._head
            spec = specialize(_engine, self.game, f"the batched engine for {self.game.info.name}")
            if spec is not None:  # the per-game cached copy, kernels bound as globals
                engine, args, head = spec.dispatcher, spec.args(args), spec.args((0, 0, *head))[2:]
                status = spec.call(args)
            else:
                status = _engine(*args)
            # later calls skip numba's type dispatch (the argument types never change)
            cres = engine.overloads.get(tuple(numba.typeof(a) for a in args))
            if cres is not None:
                self._entry, self._ehead = cres.entry_point, head
        if status:
            err = self._err
            self.skipped_deals += int(err[E_SKIPPED])
            if err[E_REFILL]:
                self._refill()
            if err[E_CODE] != ERR_NONE:
                self._raise(op)

    def _refill(self) -> None:
        """Top up the deal-seed buffers that are half used, keeping the generators' order."""
        for i in np.flatnonzero(self._seed_ptr >= SEED_BUFFER // 2):
            p = int(self._seed_ptr[i])
            buf = self._seed_buf[i]
            buf[:SEED_BUFFER - p] = buf[p:].copy()
            buf[SEED_BUFFER - p:] = self._gens[i].integers(0, _MAX_SEED, size=p)
            self._seed_ptr[i] = 0

    def _raise(self, op: int) -> None:
        code, i, a, k = (int(x) for x in self._err[[E_CODE, E_SLOT, E_ACTION, E_COUNT]])
        g = self.game
        name = g.info.name
        if code in (ERR_RANGE, ERR_ILLEGAL, ERR_FINISHED):  # checked before any change
            if code == ERR_RANGE:
                raise ValueError(f"game {i} of the batch: action {a} is outside the action "
                                 f"space [0, {self.n_actions})")
            if code == ERR_FINISHED:
                raise ValueError(f"game {i} of the batch is over (auto_reset=False); call "
                                 f"reset_slots([{i}]) before stepping it")
            ids = self.legal[i, :self.n_legal[i]]
            shown = ", ".join(f"{int(x)} ({g.action_to_string(int(x))!r})" for x in ids[:8])
            more = "" if len(ids) <= 8 else f", ... ({len(ids)} in all)"
            raise ValueError(f"game {i} of the batch: illegal action {a} "
                             f"({g.action_to_string(a)!r}) for seat {int(self.seat[i])}; "
                             f"legal: {shown}{more}")
        if code == ERR_OVER_K:
            self._broken = (f"{name} slot {i} has {k} legal actions, more than "
                            f"max_legal={self.max_legal}")
            raise RuntimeError(f"game {i} of the batch: {k} legal actions, more than "
                               f"max_legal={self.max_legal}; nothing was truncated, but the batch "
                               f"must be reset; create the VectorGame with max_legal >= {k} "
                               f"(at most {self.n_actions})")
        if code == ERR_NO_LEGAL:
            self._broken = f"{name} slot {i} has no legal action"
            raise RuntimeError(f"{name}: game {i} of the batch has no legal action in an "
                               f"unfinished deal")
        if code == ERR_STUCK:
            self._broken = f"{name} slot {i} stuck"
            raise RuntimeError(f"{name}: game {i} of the batch never reached a learner seat "
                               f"({MAX_DECISIONS} decisions or {SEED_BUFFER // 2} deals in one "
                               f"call)")
        raise RuntimeError(f"engine error code {code} at slot {i}")  # pragma: no cover

    # -- API ---------------------------------------------------------------------------------------
    def reset(self, seed: Optional[int] = None, *,
              seeds: Union[Sequence[int], np.ndarray, None] = None) -> None:
        """Start a new deal in every slot (see *Seeds* in the module docstring).

        Args:
            seed: one non-negative int from which the slot seeds are derived
                (:func:`slot_seeds`).
            seeds: one non-negative int per slot, used as the slots' seeds.
            With neither, every slot continues its own generator (fresh entropy the first
            time).
        """
        n = self.n
        if seed is not None and seeds is not None:
            raise ValueError("give seed or seeds, not both")
        if seeds is not None:
            arr = np.asarray(seeds)
            if arr.shape != (n,) or not np.issubdtype(arr.dtype, np.integer):
                raise ValueError(f"seeds must be {n} integers (one per slot), got shape "
                                 f"{arr.shape} dtype {arr.dtype}")
            if (arr < 0).any() or (arr > _MAX_SEED).any():
                raise ValueError("seeds must be in [0, 2**63 - 1]")
            new = arr.astype(np.int64)
        elif seed is not None:
            new = slot_seeds(check_seed(seed), n)
        elif not self._gens:
            # a SeedSequence made without entropy draws an int
            new = slot_seeds(cast(int, np.random.SeedSequence().entropy), n)
        else:
            new = None
        if new is not None:
            self.seeds[:] = new
            self._gens = [np.random.default_rng(int(s)) for s in new]
            for i, gen in enumerate(self._gens):
                self._seed_buf[i] = gen.integers(0, _MAX_SEED, size=SEED_BUFFER)
            self._seed_ptr[:] = 0
            self.deals[:] = 0
            x = (new.astype(np.uint64) ^ _SALT) * _GOLDEN
            self._iv[IV_RNG] = x.view(np.int64)
        self._broken = None
        self._started = True
        self._run(OP_RESET, self._all, self._actions, clear=True)

    def reset_slots(self, slots: ArrayLike) -> None:
        """Start the next deal (from each slot's own generator) in the given slots."""
        self._check_started()
        idx = self._slots(slots)
        self._run(OP_RESET, idx, np.zeros(len(idx), np.int64), clear=False)

    def step(self, actions: ArrayLike, slots: Optional[ArrayLike] = None
             ) -> tuple[np.ndarray, np.ndarray]:
        """Apply one action per slot (for its seat to move); returns ``(rewards, done)``.

        Args:
            actions: ``(n,)`` integer action ids, or ``(len(slots),)`` with ``slots``.
            slots: optional slot indices to step (the others are left as they are and get
                zero rewards and ``done`` False).

        Every action is checked before any is applied: a bad one is a ``ValueError`` naming
        the slot and the action, and no game changes.  ``rewards`` and ``done`` are this
        object's arrays (overwritten by the next call).
        """
        self._check_started()
        idx = self._all if slots is None else self._slots(slots)
        acts = np.asarray(actions)
        if acts.shape != (len(idx),):
            raise ValueError(f"actions must have shape ({len(idx)},), got {acts.shape}")
        if acts.dtype != np.int64:
            if not np.issubdtype(acts.dtype, np.integer):
                raise TypeError(f"actions must be integers, got dtype {acts.dtype}")
            acts = acts.astype(np.int64)
        self._run(OP_STEP, idx, np.ascontiguousarray(acts), clear=True)
        return self.rewards, self.done

    def step_random(self, slots: Optional[ArrayLike] = None) -> np.ndarray:
        """Step every slot (or ``slots``) with a uniformly random legal action, drawn inside
        numba from each slot's own stream; returns the actions taken (this object's array)."""
        self._check_started()
        idx = self._all if slots is None else self._slots(slots)
        acts = self._actions if slots is None else np.zeros(len(idx), np.int64)
        self._run(OP_RANDOM_STEP, idx, acts, clear=True)
        return acts

    def random_actions(self) -> np.ndarray:
        """A uniformly random legal action per slot (``-1`` for finished slots), without
        stepping (a fresh array)."""
        self._check_started()
        acts = np.zeros(self.n, np.int64)
        self._run(OP_RANDOM_ACTIONS, self._all, acts, clear=False)
        return acts

    def legal_actions(self, i: int) -> np.ndarray:
        """The legal action ids of slot ``i``'s seat to move (a copy)."""
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"slot index must be an int, got {type(i).__name__}")
        if not 0 <= i < self.n:
            raise ValueError(f"slot index {i} is outside [0, {self.n})")
        return self.legal[i, :self.n_legal[i]].copy()

    # -- loaded positions and rollouts ----------------------------------------------------------
    def load_states(self, states: np.ndarray, slots: Optional[ArrayLike] = None) -> None:
        """Load state vectors into slots and recompute everything derived from them.

        Args:
            states: ``(m, S)`` int64 array of this game's state vectors (from
                ``Game.new_state`` / ``env.unwrapped.state_vec`` / ``final_states`` /
                a determinization), one per slot.
            slots: the ``m`` distinct slot indices to load into (default: every slot, in
                order; then ``m`` must be ``n``).

        The rows are validated first, all at once (:meth:`cardenvs.core.game.Game.check_states`:
        the first bad row is the ``ValueError`` / ``TypeError`` of
        :meth:`~cardenvs.core.game.Game.check_state`, naming the row and its slot, and nothing
        is loaded; a game not over whose seat to move has no legal action is such a row,
        refused before the batch changes); then seat,
        legal ids, their count, observation and mask are recomputed from the state, and the
        slots' ``rewards`` / ``done`` are cleared.  A finished state loads as a finished slot
        (``seat == -1``).  The slots keep their deal-seed generators (a batch never reset
        first is reset with ``seed=0``), so with ``auto_reset`` a loaded game that finishes
        under :meth:`step` is followed by the slot's next deal.
        """
        if not self._started:
            self.reset(seed=0)
        idx = self._all if slots is None else self._slots(slots)
        arr = states
        if not isinstance(arr, np.ndarray):
            raise TypeError(f"states must be a numpy int64 array of shape (m, "
                            f"{self.state_size}), got {type(states).__name__}")
        if arr.ndim == 1:
            arr = arr[None]
        if arr.ndim != 2 or arr.shape[0] != len(idx):
            raise ValueError(f"states must have shape ({len(idx)}, {self.state_size}) (one row "
                             f"per slot), got {states.shape}")
        if arr.dtype != np.int64:
            raise TypeError(f"states must be int64 state vectors, got dtype {arr.dtype}")
        checked = self.game.check_states(arr, idx)
        self._head[8][idx] = checked  # the engine's state array
        self._broken = None
        self._derive(idx)

    def _derive(self, idx: np.ndarray) -> None:
        """Recompute seat, legal ids, observation and mask of the slots ``idx``."""
        g = self.game
        st = self._fast_call(_load_engine, "the state loader",
                             g.k_legal, g.k_encode, g.tab, g.opts, g.offsets,
                             self._head[8], idx, self._iv, self.legal, self._obs, self._masks,
                             self.rewards, self.done, self._scratch, self._cfg, self._err)
        if st:
            self._raise(OP_RESET)

    def rollout(self, policy: str = "heuristic", seed: int = 0,
                slots: Optional[ArrayLike] = None, *, epsilon: float = 0.0,
                greedy_seats: Sequence[int] = (), agent: Optional[object] = None,
                agent_seats: Sequence[int] = ()) -> np.ndarray:
        """Play the slots' games to the end with a rollout policy, all inside numba (or with
        an agent at some seats, batched across the slots).

        Args:
            policy: ``"heuristic"`` (:mod:`cardenvs.core.policy`: the ``rules`` agent's card
                play on a fast plan cost: goes out when it can, leads from a short plan,
                cashes sure winners, beats opponents by how close they are to going out,
                never beats a partner; simple bids / burying / exchange / stand-ins),
                ``"random"`` (uniform legal) or ``"heuristic0"`` (the former heuristic).
            seed: seeds the policy's random choices (slot ``j`` of the call draws from its
                own splitmix64 stream): the same states, policy and seed give the same games.
            slots: the slots to play (default: all).
            epsilon: with ``"heuristic"``, the chance of a uniformly random legal action at
                each of the policy's decisions (0: deterministic).
            greedy_seats: with ``"heuristic"``, seats whose card play follows greedily: they
                beat a play whenever a plain play does, a partner's too, with the lowest
                one, and lead a combination without kickers holding their lowest card (an
                opponent model of simple rule bots; ``cardenvs.core.policy.PP_GREEDY``).
            agent: an agent (:class:`agents.base.Agent`, e.g. ``trained``) that makes the
                decisions of ``agent_seats`` with two or more legal actions instead of the
                policy: the policy plays every game, in numba, until it waits on one of
                those seats; the agent then decides for every waiting game in one
                ``act_batch(observations, masks)`` call (with ``states=`` for an agent that
                ``needs_state``; with ``slots=`` and ``seats=``, the waiting games' slot
                indices and the seats to move, for one that ``needs_slots``, e.g. a learner
                that keeps what each game's seats did), and so on until every game has
                ended: one call per decision of the agent's seats, not per game.  The same states, seed and a
                deterministic agent give the same games.
            agent_seats: the seats ``agent`` plays.

        Returns:
            ``(m, P)`` float64: what each seat was paid from the loaded position to the end
            of the episode (the sum of every step's pay), one row per played slot.  The
            slots are left finished (``seat == -1``; :meth:`reset_slots` or
            :meth:`load_states` to reuse them); ``last_rollout_lengths`` holds the decisions
            each game took, ``last_agent_decisions`` how many of them ``agent`` made.
        """
        self._check_started()
        kind = policy_code(policy)
        if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
            raise TypeError(f"seed must be an int, got {type(seed).__name__}")
        if isinstance(epsilon, (bool, np.bool_)) or not isinstance(epsilon, (int, float)) \
                or not 0.0 <= float(epsilon) <= 1.0:
            raise ValueError(f"epsilon must be a number in [0, 1], got {epsilon!r}")
        if self._broken is not None:
            raise RuntimeError(f"the batch is in an inconsistent state after an error "
                               f"({self._broken}); call reset()")
        idx = self._all if slots is None else self._slots(slots)
        m = len(idx)
        g = self.game
        if isinstance(greedy_seats, (int, np.integer)):
            raise TypeError("greedy_seats is a sequence of seat indices, e.g. (1, 2)")
        greedy = tuple(greedy_seats)
        if greedy and policy != "heuristic":
            raise ValueError(f"greedy_seats model the heuristic policy's card play; "
                             f"policy={policy!r} has no such model")
        stop = self._agent_seats(agent, agent_seats)
        if not greedy:
            pp = policy_params(g)
        else:  # one private copy of the parameters per batch; only its mask changes
            cached: Optional[np.ndarray] = getattr(self, "_greedy_pp", None)
            if cached is None:
                cached = self._greedy_pp = policy_params(g).copy()
            pp = cached
            pp[PP_GREEDY] = greedy_mask(g, greedy)
        rng = rollout_streams(int(seed), m)
        returns = np.zeros((m, self.n_players), np.float64)
        lengths = np.zeros(m, np.int64)
        waiting = np.zeros(m, np.int64)
        rows = 0 if agent is None else m  # the agent's positions: one row per slot
        obs = np.zeros((rows, self.obs_size), np.float32)
        masks = np.zeros((rows, self.n_actions), np.int8)
        ws = self._rollout_work()
        made = 0
        while True:
            st = self._fast_call(_rollout_engine, "the rollout engine",
                                 g.k_legal, g.k_step, g.k_encode, g.tab, g.opts, g.offsets,
                                 self._head[8], idx, pp, np.int64(kind), float(epsilon), rng,
                                 returns, lengths, *ws, np.int64(MAX_DECISIONS), self._err, stop,
                                 waiting, obs, masks)
            if st:
                self._rollout_failed(idx)
            ask = np.flatnonzero(waiting)
            if agent is None or not ask.size:
                break
            try:
                acts = self._agent_actions(agent, obs[ask], masks[ask], idx[ask])
            except BaseException:
                self._derive(idx)  # the slots' fields agree with their (unfinished) states
                raise
            self._fast_call(_agent_moves, "the rollout engine's agent moves", g.k_step, g.tab,
                            g.opts, self._head[8], idx, ask, acts, returns, lengths)
            made += len(ask)
        self.last_rollout_lengths = lengths
        self.last_agent_decisions = made
        self._derive(idx)
        return returns

    def _agent_seats(self, agent, agent_seats) -> np.ndarray:
        """``int64 [P]``: 1 at the seats ``agent`` plays in :meth:`rollout` (checked)."""
        stop = np.zeros(self.n_players, np.int64)
        if isinstance(agent_seats, (int, np.integer)):
            raise TypeError("agent_seats is a sequence of seat indices, e.g. (0,)")
        seats = tuple(agent_seats)
        if agent is None:
            if seats:
                raise ValueError("agent_seats without an agent: pass agent= too")
            return stop
        if not callable(getattr(agent, "act_batch", None)):
            raise TypeError(f"agent must have act_batch(observations, masks), got "
                            f"{type(agent).__name__}")
        if not seats:
            raise ValueError("an agent needs agent_seats: the seats it plays, e.g. (0,)")
        for q in seats:
            if isinstance(q, (bool, np.bool_)) or not isinstance(q, (int, np.integer)) \
                    or not 0 <= q < self.n_players:
                raise ValueError(f"agent_seats must be seats in [0, {self.n_players}), got "
                                 f"{seats!r}")
            stop[q] = 1
        return stop

    def _agent_actions(self, agent, obs: np.ndarray, masks: np.ndarray,
                       slots: np.ndarray) -> np.ndarray:
        """The agent's actions in the waiting games of :meth:`rollout`, checked legal."""
        kw = {}
        if getattr(agent, "needs_state", False):
            kw["states"] = self._head[8][slots].copy()
        if getattr(agent, "needs_slots", False):
            kw["slots"] = np.array(slots, np.int64)
            kw["seats"] = self._head[8][slots, CUR].copy()
        acts = np.asarray(agent.act_batch(obs, masks, **kw))
        if acts.shape != (len(obs),) or not np.issubdtype(acts.dtype, np.integer):
            raise ValueError(f"agent {getattr(agent, 'name', agent)!r}: act_batch returned "
                             f"{acts.shape} {acts.dtype} for {len(obs)} positions; expected "
                             f"({len(obs)},) integer actions")
        acts = acts.astype(np.int64)
        bad = (acts < 0) | (acts >= self.n_actions)
        bad[~bad] = masks[np.flatnonzero(~bad), acts[~bad]] == 0
        if bad.any():
            t = int(np.flatnonzero(bad)[0])
            raise ValueError(f"agent {getattr(agent, 'name', agent)!r} chose action "
                             f"{int(acts[t])}, not legal in the rollout of slot {int(slots[t])}")
        return acts

    def _rollout_failed(self, idx: np.ndarray) -> None:
        """Raise the error the rollout engine reported (the slots' fields derived first)."""
        g = self.game
        i = int(self._err[E_SLOT])
        self._derive(idx)
        if self._err[E_CODE] == ERR_STUCK:
            raise RuntimeError(f"{g.info.name}: the rollout of game {i} of the batch ran "
                               f"past {MAX_DECISIONS} decisions")
        raise RuntimeError(f"{g.info.name}: game {i} of the batch has no legal action in an "
                           f"unfinished deal")

    def _rollout_work(self):
        ws = getattr(self, "_rws", None)
        if ws is None:
            ws = self._rws = (np.zeros(self.n_actions + 1, np.int64),
                              np.zeros(self.state_size, np.int64),
                              np.zeros(self.n_actions + 1, np.float64),
                              np.zeros(64, np.int64))
        return ws

    def _check_started(self) -> None:
        if not self._started:
            raise ValueError("call reset() before stepping the batch")

    def _slots(self, slots: ArrayLike) -> np.ndarray:
        idx = np.asarray(slots)
        if idx.ndim != 1 or not (np.issubdtype(idx.dtype, np.integer) or idx.size == 0):
            raise ValueError("slots must be a 1-D array of slot indices")
        idx = idx.astype(np.int64)
        if idx.size and (idx.min() < 0 or idx.max() >= self.n):
            raise ValueError(f"slot indices must be in [0, {self.n})")
        if np.unique(idx).size != idx.size:
            raise ValueError("slot indices must be distinct")
        return np.ascontiguousarray(idx)

    def __len__(self) -> int:
        return self.n

    def __repr__(self) -> str:
        return (f"VectorGame({self.game.info.name!r}, n={self.n}, observe={self.observe}, "
                f"masks={self.use_masks}, max_legal={self.max_legal})")

    # -- pickling: the compiled game is rebuilt from its registry name and options ---------------
    _VIEWS = ("game", "n_legal", "seat", "deals", "_seed_ptr", "_view_seat", "_final_len", "_acc",
              "_carry", "_head", "_tail", "_entry", "_ehead", "_entries")

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k not in self._VIEWS}

    def __setstate__(self, d):
        from .api import make_game

        self.__dict__.update(d)
        name, options = d["_spec"]
        self.game = make_game(name, **options)
        self._bind()
