"""The batched engine in compact mode: :class:`CompactVectorGame`
(``VectorGame(game, n, actions="compact")``).

``n`` games of one game as :class:`cardenvs.vector.VectorGame` runs them, with every slot's
decisions in the compact action space of :mod:`cardenvs.core.compact`: a body with kickers
and every kicker but the last change only the slot's pending partial play (kept here, per
slot, in numba arrays); the decision that completes a play steps the flat engine with the
play's flat id.  Slot ``i`` plays exactly the AEC env's game in compact mode after
``env.reset(seed=seeds[i])`` (the same deals, observations, compact legal ids and rewards).

Outputs, as :class:`~cardenvs.vector.VectorGame`'s (read them, copy what you keep):
``legal`` ``(N, C)`` compact legal ids padded with ``-1`` (``C`` = the compact size),
``n_legal``, ``obs`` ``(N, D + E)`` (the flat observation and the partial-play fields),
``masks`` ``(N, C)`` int8 (``masks=True``), ``rewards`` / ``done`` (zero / False for a slot
whose decision did not complete a play), ``seat``, ``states``, ``seeds``, ``deals``;
:attr:`completed` says which slots' last decision completed a play and :attr:`history_play`
holds each slot's last completed flat id (``-1`` before one).

A step is one kernel call before the flat engine and the engine call itself: :func:`_vdecide`
checks and applies the decisions (the offered ids come ascending: a binary search checks
one) and gathers the completed plays; the engine steps them without checking them again
(``OP_STEP_LEGAL``), writes their next compact first decisions while their flat legal ids are
at hand (:func:`cardenvs.core.compact.first_decisions`) and encodes their observations
straight into this batch's wider rows; ``rewards`` and ``done`` are the engine's own arrays.
Nothing is copied or allocated per step.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import numpy as np
from numba import njit

from .core.compact import clear_ids, close_ids, codec_of, insert_distinct
from .vector_kernels import C_CMARKS, OP_STEP_LEGAL


@njit(cache=True)
def _vdecide(slots, acts, u, vlegal, vn, first, seq, ntok, body_row, n_other, n_play, marks,
             mark, legal, n_legal, body, jj, prefix, cand, nc, completed, history, wslots,
             wflat):
    """Check, then apply, one compact decision per slot of ``slots``.

    ``acts[t]`` is slot ``slots[t]``'s decision; with ``u`` non-empty it is drawn here:
    ``legal[i, int(u[t] * n_legal[i])]`` (a uniform offered decision for uniforms ``u[t]`` in
    ``[0, 1)``).  Every decision is checked before any applies (a binary search of the
    slot's ascending legal ids): the first ``t`` whose decision is not offered returns
    ``-(t + 1)`` and nothing changes.  Otherwise ``completed[i]`` says whether slot ``i``'s
    decision completed a play (every slot's flag is cleared first), ``history[i]`` is then
    the play's flat id and the slot has no partial play left (the flat engine writes its next
    first decisions); a slot with kickers left gets the next kicker's legal ids (and marks,
    with ``marks``).  The completed plays are gathered, in order, as ``(wslots[:m],
    wflat[:m])`` for the flat engine; returns ``m``."""
    T = slots.shape[0]
    for t in range(T):
        i = slots[t]
        n = n_legal[i]
        if u.shape[0] > 0:
            if n == 0:  # a finished slot (auto_reset=False)
                acts[t] = -1
                return -(t + 1)
            acts[t] = legal[i, int(u[t] * n)]
            continue
        a = acts[t]
        lo = 0
        hi = n
        while lo < hi:
            mid = (lo + hi) >> 1
            if legal[i, mid] < a:
                lo = mid + 1
            else:
                hi = mid
        if lo == n or legal[i, lo] != a:
            return -(t + 1)
    for i in range(completed.shape[0]):
        completed[i] = False
    m = 0
    for t in range(T):
        i = slots[t]
        a = acts[t]
        f = -1
        if body[i] < 0:
            if a < n_other:
                f = n_play + a
            else:
                b = a - n_other
                if ntok[b] == 0:
                    f = body_row[b]
                else:
                    body[i] = b
                    jj[i] = 0
                    k2 = 0
                    for k in range(vn[i]):
                        if first[vlegal[i, k]] == a:
                            cand[i, k2] = vlegal[i, k]
                            k2 += 1
                    nc[i] = k2
        else:
            j = jj[i]
            k2 = 0
            for k in range(nc[i]):
                if seq[cand[i, k], j] == a:
                    cand[i, k2] = cand[i, k]
                    k2 += 1
            nc[i] = k2
            prefix[i, j] = a
            jj[i] = j + 1
            if jj[i] == ntok[body[i]]:
                f = cand[i, 0]
        if f >= 0:
            completed[i] = True
            history[i] = f
            body[i] = -1
            jj[i] = 0
            nc[i] = 0
            wslots[m] = i
            wflat[m] = f
            m += 1
            continue
        # the next kicker's legal ids: the distinct ones among the candidates, ascending
        n_old = clear_ids(i, marks, mark, legal, n_legal)
        j = jj[i]
        k2 = 0
        for k in range(nc[i]):
            k2 = insert_distinct(legal, i, k2, seq[cand[i, k], j])
        close_ids(i, k2, n_old, marks, mark, legal, n_legal)
    return m


@njit(cache=True)
def _vextras(slots, body, jj, prefix, body_counts, body_family, body_unit, ntok, kick_rank,
             kick_unit, k0, R, D, n_fam, max_kick, out, off):
    """The partial-play fields (:meth:`cardenvs.core.compact.Codec.encode`) of each slot."""
    E = R * D + n_fam + 3
    c = np.zeros(16, np.int64)
    for t in range(slots.shape[0]):
        i = slots[t]
        for e in range(E):
            out[i, off + e] = 0.0
        b = body[i]
        if b < 0:
            continue
        for r in range(16):
            c[r] = body_counts[b, r]
        for k in range(jj[i]):
            x = prefix[i, k] - k0
            c[kick_rank[x]] += kick_unit[x]
        for r in range(R):
            for d in range(D):
                if c[r] > d:
                    out[i, off + r * D + d] = 1.0
        o = off + R * D
        out[i, o + body_family[b]] = 1.0
        o += n_fam
        out[i, o] = 1.0 if body_unit[b] == 2 else 0.0
        out[i, o + 1] = (ntok[b] - jj[i]) / max(1, max_kick)
        out[i, o + 2] = 1.0


class CompactVectorGame:
    """``n`` games in compact mode (see the module docstring); the arguments are
    :class:`cardenvs.vector.VectorGame`'s."""

    def __init__(self, game: Union[str, Any], n: int, *, observe: bool = True,
                 masks: bool = False, max_legal: Optional[int] = None, auto_reset: bool = True,
                 keep_final: bool = False, **options: Any):
        from .core.combos import N_FAMILIES
        from .vector import VectorGame

        self.vg = VectorGame(game, n, observe=observe, masks=False, max_legal=max_legal,
                             auto_reset=auto_reset, keep_final=keep_final, **options)
        vg = self.vg
        self.game = vg.game
        self.actions = "compact"
        c = self.codec = codec_of(self.game)
        self.n = vg.n
        self.n_players = vg.n_players
        self.n_actions = c.n
        self.flat_obs_size = vg.obs_size
        self.obs_size = vg.obs_size + c.obs_extra
        self.observe, self.use_masks = vg.observe, bool(masks)
        C = c.n
        self.legal = np.full((n, C), -1, np.int64)
        self.n_legal = np.zeros(n, np.int64)
        #: 1 at the offered compact ids of each slot (kept with masks=True: the masks)
        self._mark = np.zeros((n if self.use_masks else 1, C if self.use_masks else 1), np.int8)
        self._body = np.full(n, -1, np.int64)
        self._j = np.zeros(n, np.int64)
        self._prefix = np.full((n, max(c.max_kick, 1)), -1, np.int64)
        self._cand = np.zeros((n, vg.max_legal), np.int64)
        self._nc = np.zeros(n, np.int64)
        self._wslots = np.zeros(n, np.int64)  # the completed plays, for the flat engine
        self._wflat = np.zeros(n, np.int64)
        self._acts = np.zeros(n, np.int64)  # step_random's decisions
        self._u = np.zeros(n, np.float64)  # and its uniforms
        self._no_u = np.zeros(0, np.float64)
        self._obs = np.zeros((n if self.observe else 1, self.obs_size), np.float32)
        # The flat engine writes the compact first decisions of every slot it moves
        # (core.compact.first_decisions) and, observing, encodes straight into the first D
        # columns of the wider rows (its encoders write exactly those; a zero-fill of a whole
        # row is followed by the partial-play fields of every stepped slot): no copy per step.
        # Its rewards and done are this batch's: a decision that completes no play moves no
        # game, so its slot reads zero and False after the engine's clear.
        vg._cx = (c.first, self._mark, self.legal, self.n_legal)
        vg._cfg[C_CMARKS] = int(self.use_masks)
        if self.observe:
            vg._obs = self._obs
        vg._bind()
        self.rewards = vg.rewards
        self.done = vg.done
        self.history_play = np.full(n, -1, np.int64)
        #: whether each slot's decision in the last :meth:`step` completed a play (stepped the
        #: flat engine)
        self.completed = np.zeros(n, np.bool_)
        self._fam = N_FAMILIES
        self._rng: Optional[np.random.Generator] = None

    # -- views of the flat engine -------------------------------------------------------------------
    @property
    def seat(self) -> np.ndarray:
        return self.vg.seat

    @property
    def states(self) -> np.ndarray:
        return self.vg.states

    @property
    def seeds(self) -> np.ndarray:
        return self.vg.seeds

    @property
    def deals(self) -> np.ndarray:
        return self.vg.deals

    @property
    def obs(self) -> Optional[np.ndarray]:
        return self._obs if self.observe else None

    @property
    def masks(self) -> Optional[np.ndarray]:
        return self._mark if self.use_masks else None

    # -- internals -----------------------------------------------------------------------------------
    def _extras(self, slots: np.ndarray) -> None:
        """The partial-play fields of ``slots`` (:func:`_vextras`)."""
        c = self.codec
        _vextras(slots, self._body, self._j, self._prefix, c.body_counts, c.body_family,
                 c.body_unit, c.ntok, c.kick_rank, c.kick_unit, c.n_other + c.n_bodies, c.ranks,
                 c.depth, self._fam, c.max_kick, self._obs, self.flat_obs_size)

    # -- API -----------------------------------------------------------------------------------------
    def reset(self, seed: Optional[int] = None, *,
              seeds: Union[Sequence[int], np.ndarray, None] = None) -> None:
        """:meth:`cardenvs.vector.VectorGame.reset`, every slot at a first decision."""
        self._body[:] = -1
        self._j[:] = 0
        self._nc[:] = 0
        self.vg.reset(seed, seeds=seeds)  # the compact first decisions too
        if self.observe:
            self._extras(self.vg._all)

    def step(self, actions, slots=None) -> tuple[np.ndarray, np.ndarray]:
        """One compact decision per slot (or per slot of ``slots``); returns ``(rewards,
        done)``.  Every action is checked first: one outside the compact space or not offered
        is a ``ValueError`` naming the slot, and no game changes."""
        vg = self.vg
        vg._check_started()
        idx = vg._all if slots is None else vg._slots(slots)
        acts = np.asarray(actions)
        if acts.shape != (len(idx),):
            raise ValueError(f"actions must have shape ({len(idx)},), got {acts.shape}")
        if acts.dtype != np.int64:
            if not np.issubdtype(acts.dtype, np.integer):
                raise TypeError(f"actions must be integers, got dtype {acts.dtype}")
            acts = acts.astype(np.int64)
        self._decide(idx, np.ascontiguousarray(acts), self._no_u)
        return self.rewards, self.done

    def _decide(self, idx: np.ndarray, acts: np.ndarray, u: np.ndarray) -> None:
        """:func:`_vdecide` (a ``ValueError`` naming the first slot whose decision is not
        offered), the flat engine on the completed plays (every slot's ``rewards`` and
        ``done`` cleared), then the partial-play fields."""
        vg = self.vg
        c = self.codec
        m = _vdecide(idx, acts, u, vg.legal, vg.n_legal, c.first, c.seq, c.ntok, c.body_row,
                     c.n_other, c.n_play, self.use_masks, self._mark, self.legal, self.n_legal,
                     self._body, self._j, self._prefix, self._cand, self._nc, self.completed,
                     self.history_play, self._wslots, self._wflat)
        if m < 0:
            self._bad_action(int(idx[-m - 1]), int(acts[-m - 1]))
        # the plays come from the slots' flat legal ids: no second check
        vg._run(OP_STEP_LEGAL, self._wslots[:m], self._wflat[:m], clear=True)
        if self.observe:
            self._extras(idx)

    def _bad_action(self, i: int, a: int) -> None:
        """The ``ValueError`` for compact decision ``a``, not offered in slot ``i``."""
        C = self.codec.n
        if a < 0 or a >= C:
            raise ValueError(f"game {i} of the batch: action {a} is outside the compact "
                             f"action space [0, {C})")
        shown = ", ".join(f"{int(x)} ({self.codec.to_string(int(x))!r})"
                          for x in self.legal[i, : min(int(self.n_legal[i]), 8)])
        raise ValueError(f"game {i} of the batch: illegal compact action {a} "
                         f"({self.codec.to_string(a)!r}); legal: {shown}")

    def step_random(self, rng: Optional[np.random.Generator] = None) -> np.ndarray:
        """Step every slot with a uniformly random offered compact decision (from ``rng``,
        default a generator seeded from the slots' seeds); returns the decisions (this
        object's array: copy what you keep).  Slot ``i`` takes ``legal[i, int(u[i] *
        n_legal[i])]`` for ``u = rng.random(n)``, drawn inside the step's kernel."""
        self.vg._check_started()
        if rng is None:
            if self._rng is None:
                self._rng = np.random.default_rng(self.vg.seeds.tolist())
            rng = self._rng
        rng.random(out=self._u)
        self._decide(self.vg._all, self._acts, self._u)
        return self._acts

    def legal_actions(self, i: int) -> np.ndarray:
        """The compact legal ids of slot ``i``'s seat to move (a copy)."""
        self.vg.legal_actions(i)  # the checks of the slot index
        return self.legal[i, : self.n_legal[i]].copy()

    def __len__(self) -> int:
        return self.n

    def __repr__(self) -> str:
        return (f"VectorGame({self.game.info.name!r}, n={self.n}, observe={self.observe}, "
                f"masks={self.use_masks}, actions='compact')")
