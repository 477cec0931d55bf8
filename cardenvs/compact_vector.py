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
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import numpy as np
from numba import njit

from .core.compact import codec_of


@njit(cache=True)
def _vfirst(slots, vlegal, vn, first, mark, legal, n_legal, body, jj, nc):
    """A new first decision in each slot of ``slots``: the distinct first decisions of its
    flat legal ids; ``mark[i]`` marks exactly them."""
    C = mark.shape[1]
    for t in range(slots.shape[0]):
        i = slots[t]
        for k in range(n_legal[i]):
            mark[i, legal[i, k]] = 0
            legal[i, k] = -1
        for k in range(vn[i]):
            mark[i, first[vlegal[i, k]]] = 1
        m = 0
        for c in range(C):
            if mark[i, c]:
                legal[i, m] = c
                m += 1
        n_legal[i] = m
        body[i] = -1
        jj[i] = 0
        nc[i] = 0


@njit(cache=True)
def _vchoose(slots, acts, vlegal, vn, first, seq, ntok, body_row, n_other, n_play,
             mark, legal, n_legal, body, jj, prefix, cand, nc, flat):
    """Apply the offered compact decision ``acts[t]`` in slot ``slots[t]``: ``flat[t]`` is
    the flat action it completes, or ``-1`` when kickers remain (the slot's legal ids are
    then the next kicker's)."""
    for t in range(slots.shape[0]):
        i = slots[t]
        a = acts[t]
        flat[t] = -1
        if body[i] < 0:
            if a < n_other:
                flat[t] = n_play + a
                continue
            b = a - n_other
            if ntok[b] == 0:
                flat[t] = body_row[b]
                continue
            body[i] = b
            jj[i] = 0
            m = 0
            for k in range(vn[i]):
                if first[vlegal[i, k]] == a:
                    cand[i, m] = vlegal[i, k]
                    m += 1
            nc[i] = m
        else:
            j = jj[i]
            m = 0
            for k in range(nc[i]):
                if seq[cand[i, k], j] == a:
                    cand[i, m] = cand[i, k]
                    m += 1
            nc[i] = m
            prefix[i, j] = a
            jj[i] = j + 1
            if jj[i] == ntok[body[i]]:
                flat[t] = cand[i, 0]
                continue
        # the next kicker's legal ids
        for k in range(n_legal[i]):
            mark[i, legal[i, k]] = 0
            legal[i, k] = -1
        j = jj[i]
        for k in range(nc[i]):
            mark[i, seq[cand[i, k], j]] = 1
        m = 0
        for c in range(mark.shape[1]):
            if mark[i, c]:
                legal[i, m] = c
                m += 1
        n_legal[i] = m


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


@njit(cache=True)
def _vpost(slots, flat, vlegal, vn, vobs, vrew, vdone, first, mark, legal, n_legal, body, jj,
           prefix, nc, rewards, done, completed, history, obs, masks, observe, use_masks,
           body_counts, body_family, body_unit, ntok, kick_rank, kick_unit, k0, R, D, n_fam,
           max_kick, D0):
    """After a step: the slots whose decision completed a play (``flat[t] >= 0``, the flat
    engine has moved them) get a new first decision, their flat observation, rewards and
    ``done``; every stepped slot its partial-play fields and mask row."""
    C = mark.shape[1]
    P = rewards.shape[1]
    for t in range(slots.shape[0]):
        i = slots[t]
        if flat[t] >= 0:
            completed[i] = True
            history[i] = flat[t]
            for p in range(P):
                rewards[i, p] = vrew[i, p]
            done[i] = vdone[i]
            for k in range(n_legal[i]):
                mark[i, legal[i, k]] = 0
                legal[i, k] = -1
            m = 0
            for k in range(vn[i]):  # distinct first decisions, then sorted (few of them)
                x = first[vlegal[i, k]]
                if mark[i, x] == 0:
                    mark[i, x] = 1
                    legal[i, m] = x
                    m += 1
            for u in range(1, m):  # insertion sort, in place
                x = legal[i, u]
                v = u - 1
                while v >= 0 and legal[i, v] > x:
                    legal[i, v + 1] = legal[i, v]
                    v -= 1
                legal[i, v + 1] = x
            n_legal[i] = m
            body[i] = -1
            jj[i] = 0
            nc[i] = 0
            if observe:
                obs[i, :D0] = vobs[i]
        if use_masks:
            for c in range(C):
                masks[i, c] = mark[i, c]
    if observe:
        _vextras(slots, body, jj, prefix, body_counts, body_family, body_unit, ntok, kick_rank,
                 kick_unit, k0, R, D, n_fam, max_kick, obs, D0)


@njit(cache=True)
def _vcheck(slots, acts, mark):
    """The first ``t`` whose ``acts[t]`` is not offered in slot ``slots[t]`` (``-1``: none)."""
    C = mark.shape[1]
    for t in range(slots.shape[0]):
        a = acts[t]
        if a < 0 or a >= C or mark[slots[t], a] == 0:
            return t
    return -1


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
        self._mark = np.zeros((n, C), np.int8)
        self._body = np.full(n, -1, np.int64)
        self._j = np.zeros(n, np.int64)
        self._prefix = np.full((n, max(c.max_kick, 1)), -1, np.int64)
        self._cand = np.zeros((n, vg.max_legal), np.int64)
        self._nc = np.zeros(n, np.int64)
        self._flat = np.zeros(n, np.int64)
        self._obs = np.zeros((n if self.observe else 1, self.obs_size), np.float32)
        self._masks = np.zeros((n if self.use_masks else 1, C if self.use_masks else 1), np.int8)
        self.rewards = np.zeros_like(vg.rewards)
        self.done = np.zeros(n, np.bool_)
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
        return self._masks if self.use_masks else None

    # -- internals -----------------------------------------------------------------------------------
    def _refresh(self, slots: np.ndarray) -> None:
        """A first decision in ``slots`` (after the flat engine moved them)."""
        vg = self.vg
        c = self.codec
        _vfirst(slots, vg.legal, vg.n_legal, c.first, self._mark, self.legal, self.n_legal,
                self._body, self._j, self._nc)
        self._derive(slots, copy_flat=True)

    def _derive(self, slots: np.ndarray, copy_flat: bool) -> None:
        c = self.codec
        if self.observe:
            if copy_flat:
                flat = self.vg.obs
                assert flat is not None  # the flat engine observes when this one does
                self._obs[slots, : self.flat_obs_size] = flat[slots]
            _vextras(slots, self._body, self._j, self._prefix, c.body_counts, c.body_family,
                     c.body_unit, c.ntok, c.kick_rank, c.kick_unit, c.n_other + c.n_bodies,
                     c.ranks, c.depth, self._fam, c.max_kick, self._obs, self.flat_obs_size)
        if self.use_masks:
            m = self._masks
            m[slots] = self._mark[slots]

    # -- API -----------------------------------------------------------------------------------------
    def reset(self, seed: Optional[int] = None, *,
              seeds: Union[Sequence[int], np.ndarray, None] = None) -> None:
        """:meth:`cardenvs.vector.VectorGame.reset`, every slot at a first decision."""
        self.vg.reset(seed, seeds=seeds)
        self.rewards[:] = 0.0
        self.done[:] = False
        self._refresh(self.vg._all)

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
        if not np.issubdtype(acts.dtype, np.integer):
            raise TypeError(f"actions must be integers, got dtype {acts.dtype}")
        acts = np.ascontiguousarray(acts, np.int64)
        C = self.codec.n
        t = _vcheck(idx, acts, self._mark)
        if t >= 0:
            i, a = int(idx[t]), int(acts[t])
            if a < 0 or a >= C:
                raise ValueError(f"game {i} of the batch: action {a} is outside the compact "
                                 f"action space [0, {C})")
            shown = ", ".join(f"{int(x)} ({self.codec.to_string(int(x))!r})"
                              for x in self.legal[i, : min(int(self.n_legal[i]), 8)])
            raise ValueError(f"game {i} of the batch: illegal compact action {a} "
                             f"({self.codec.to_string(a)!r}); legal: {shown}")
        c = self.codec
        flat = self._flat[: len(idx)]
        _vchoose(idx, acts, vg.legal, vg.n_legal, c.first, c.seq, c.ntok, c.body_row,
                 c.n_other, c.n_play, self._mark, self.legal, self.n_legal, self._body, self._j,
                 self._prefix, self._cand, self._nc, flat)
        self._post(idx, flat)
        return self.rewards, self.done

    def _post(self, idx: np.ndarray, flat: np.ndarray) -> None:
        """Step the flat engine with the completed plays, then :func:`_vpost`."""
        from .vector import OP_STEP

        vg = self.vg
        c = self.codec
        self.rewards[:] = 0.0
        self.done[:] = False
        self.completed[:] = False
        whole = flat >= 0
        if whole.any():  # the slots are distinct and the plays legal: straight to the engine
            vg._run(OP_STEP, np.ascontiguousarray(idx[whole]),
                    np.ascontiguousarray(flat[whole]), clear=True)
        _vpost(idx, flat, vg.legal, vg.n_legal, vg._obs, vg.rewards, vg.done, c.first,
               self._mark, self.legal, self.n_legal, self._body, self._j, self._prefix,
               self._nc, self.rewards, self.done, self.completed, self.history_play,
               self._obs, self._masks, self.observe, self.use_masks, c.body_counts,
               c.body_family, c.body_unit, c.ntok, c.kick_rank, c.kick_unit,
               c.n_other + c.n_bodies, c.ranks, c.depth, self._fam, c.max_kick,
               self.flat_obs_size)

    def step_random(self, rng: Optional[np.random.Generator] = None) -> np.ndarray:
        """Step every slot with a uniformly random offered compact decision (from ``rng``,
        default a generator seeded from the slots' seeds); returns the decisions."""
        if rng is None:
            if self._rng is None:
                self._rng = np.random.default_rng(self.vg.seeds.tolist())
            rng = self._rng
        pick = (rng.random(self.n) * self.n_legal).astype(np.int64)
        acts = self.legal[np.arange(self.n), pick]
        self.step(acts)
        return acts

    def legal_actions(self, i: int) -> np.ndarray:
        """The compact legal ids of slot ``i``'s seat to move (a copy)."""
        self.vg.legal_actions(i)  # the checks of the slot index
        return self.legal[i, : self.n_legal[i]].copy()

    def __len__(self) -> int:
        return self.n

    def __repr__(self) -> str:
        return (f"VectorGame({self.game.info.name!r}, n={self.n}, observe={self.observe}, "
                f"masks={self.use_masks}, actions='compact')")
