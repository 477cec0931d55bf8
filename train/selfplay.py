"""The self-play data engine: ``N`` games on :class:`cardenvs.vector.VectorGame`, everything but
the network in numba.

One :meth:`SelfPlay.step` advances every game by one decision (:meth:`SelfPlay.prepare` then
:meth:`SelfPlay.commit`, for callers that choose actions themselves, e.g. a teacher agent):

1. numba gathers the positions that need the network (slots whose seat to move has 2+ legal
   actions) into preallocated arrays: the observation of each position (``VectorGame.obs``,
   written by the game's encode kernel) and the feature row of each legal action
   (:meth:`cardenvs.core.game.Game.action_features`' table), the learner's positions first;
   a learner position that explores this step (its slot's rate) draws its uniform legal
   action there and is left out, so the network never scores a decision it will not take;
2. the policy function scores them (``policy_fn(obs [n, D], feats [m, F], owner [m]) -> q
   [m]``: the only Python/torch step; an opponent function scores the opponents' positions;
   a scorer with ``takes_keys`` also gets each position's key ``slot * players + seat``,
   which ``train.dmc.FactoredScorer`` uses to update the observation part of the seat's
   previous decision instead of computing it afresh);
3. numba picks each game's action (the best score, or the exploring draw) and records every
   learner decision (observation, action, seat, and the seat's pay so far) in a sample store;
4. the batched engine applies the actions (``VectorGame.step``), and numba adds the pay to
   each seat's running total; when a game ends, the Monte-Carlo target of each of its recorded
   decisions (the acting seat's pay from that decision's step to the end of the game, times
   ``scale``) is written and the samples join the ready queue, oldest game first.

:meth:`SelfPlay.pop` hands out ready samples as a :class:`Batch` (copies);
:meth:`SelfPlay.batches` is the generator form.  A decision with one legal action is played
without the network and is not a sample.  No Python runs per game or per decision.

Which seats learn: a game slot is either self-play (every seat is the learner: ``policy_fn``
plays and learns at every seat) or, with ``opp_fn`` given and ``pool_frac > 0``, a share
``pool_frac`` of the deals (drawn per deal) seat the learner at one random seat and
``opp_fn`` at the others (only the learner's decisions are samples).

Example (any scoring function works; ``train.dmc`` passes a ``train.dmc.FactoredScorer`` of
its torch ``QNet``, which also gets the action ids: a scorer with ``takes_ids = True`` is
called ``policy_fn(obs, feats, owner, ids)``)::

    sp = SelfPlay("wakeng", 256, seed=0, eps=0.1)
    score = lambda obs, feats, owner: feats.sum(axis=1)      # a stand-in network
    for batch in sp.batches(score, 512, max_steps=1000):
        learn(batch.obs, batch.act, batch.feats(), batch.target)

:class:`ActorPool` runs ``SelfPlay`` engines in separate processes (one torch thread each)
playing with shared-memory copies of the learner's network, so the learner and the actors
use different cores; :mod:`train.ray_actors` does the same on Ray actors.
"""

from __future__ import annotations

import os
import queue as _queue
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional, Union

import numpy as np
from numba import njit

from cardenvs.core.kernels import rng_below, rng_next
from cardenvs.vector import VectorGame

#: learner decisions kept per game in flight before :meth:`SelfPlay.step` raises
MAX_EPISODE = 4096

# counters (int64 array ``cnt`` shared by the kernels)
(K_NPOS_L, K_NPOS, K_M_L, K_M, K_FREE, K_RHEAD, K_RLEN, K_GAMES, K_SAMPLES, K_NEED,
 K_NEXP) = range(11)
N_CNT = 11

PolicyFn = Callable[[np.ndarray, np.ndarray, np.ndarray], Any]


# ---------------------------------------------------------------------------------------------
# the kernels
# ---------------------------------------------------------------------------------------------
@njit(cache=True)
def _gather(n_legal, legal, seat, obs, learner_seat, feat_table, eps, rng, explore, pos_slot,
            pos_obs, feats, owner, ids, seg_start, cnt):
    """Lay out the positions needing the network: learner positions ``[0, cnt[K_NPOS_L])``,
    then opponent positions up to ``cnt[K_NPOS]``; their legal actions' feature rows in
    ``feats`` (learner rows ``[0, cnt[K_M_L])``, all ``[0, cnt[K_M])``), ``owner`` = position
    of each row, ``ids`` = its action id.  A learner position that explores this step (its
    slot's rate ``eps[slot]``, drawn here) is not laid out: ``explore[slot]`` = the index of
    its uniform legal action (``-1`` for every other slot; ``cnt[K_NEXP]`` of them), so the
    network never scores a decision it will not take.  Returns 0, or the feature rows needed
    when ``feats`` is too small (then nothing is drawn)."""
    n = n_legal.shape[0]
    need = 0
    for i in range(n):
        if n_legal[i] > 1:
            need += n_legal[i]
    if need > feats.shape[0]:
        return need
    n_exp = 0
    for i in range(n):
        explore[i] = -1
        k = n_legal[i]
        if k > 1 and eps[i] > 0.0:
            ls = learner_seat[i]
            if (ls < 0 or ls == seat[i]) and \
                    (rng_next(rng, i) >> 11) * (1.0 / 4503599627370496.0) < eps[i]:
                explore[i] = rng_below(rng, i, k)
                n_exp += 1
    cnt[K_NEXP] = n_exp
    D = obs.shape[1]
    F = feat_table.shape[1]
    p = 0
    m = 0
    for group in range(2):
        for i in range(n):
            k = n_legal[i]
            if k <= 1 or explore[i] >= 0:
                continue
            ls = learner_seat[i]
            is_learner = ls < 0 or ls == seat[i]
            if is_learner != (group == 0):
                continue
            pos_slot[p] = i
            for d in range(D):
                pos_obs[p, d] = obs[i, d]
            seg_start[p] = m
            for q in range(k):
                a = legal[i, q]
                for f in range(F):
                    feats[m, f] = feat_table[a, f]
                owner[m] = p
                ids[m] = a
                m += 1
            p += 1
        if group == 0:
            cnt[K_NPOS_L] = p
            cnt[K_M_L] = m
    seg_start[p] = m
    cnt[K_NPOS] = p
    cnt[K_M] = m
    return 0


@njit(cache=True)
def _record(i, a, obs_row, explored, alt_row, st_obs, st_act, st_alt, st_seat, st_base, st_slot,
            st_deal, seat, cum, deal_no, free, ep_idx, ep_len, cnt):
    """Slot ``i``'s learner decision ``a`` (observation ``obs_row``) into the sample store."""
    cnt[K_FREE] -= 1
    f = free[cnt[K_FREE]]
    for d in range(obs_row.shape[0]):
        st_obs[f, d] = obs_row[d]
    s = seat[i]
    st_act[f] = a
    st_alt[f, 0] = -1 if explored else alt_row[0]
    st_alt[f, 1] = -1 if explored else alt_row[1]
    st_seat[f] = s
    st_base[f] = cum[i, s]
    st_slot[f] = i
    st_deal[f] = deal_no[i]
    ep_idx[i, ep_len[i]] = f
    ep_len[i] += 1


@njit(cache=True)
def _choose(q, legal, n_legal, seat, obs, explore, pos_slot, pos_obs, seg_start, cum, actions,
            alt, st_obs, st_act, st_alt, st_seat, st_base, st_slot, st_deal, deal_no, free, ep_idx,
            ep_len, cnt):
    """Every slot's action: the forced one, the exploring learner positions' uniform legal
    action (``explore``, drawn by :func:`_gather`), else the best-scored legal action;
    learner decisions go to the sample store with their two ``alt`` ids (``-1, -1`` for a
    decision that explored).
    Returns 0; 1 when the store has too few free entries (``cnt[K_NEED]``: how many are
    needed; nothing changed); 2 when a game exceeds ``ep_idx``'s width."""
    n = n_legal.shape[0]
    n_l = cnt[K_NPOS_L]
    if n_l + cnt[K_NEXP] > cnt[K_FREE]:
        cnt[K_NEED] = n_l + cnt[K_NEXP]
        return 1
    for i in range(n):
        if n_legal[i] == 1:
            actions[i] = legal[i, 0]
        if n_legal[i] > 1 and ep_len[i] >= ep_idx.shape[1]:
            return 2
    for p in range(cnt[K_NPOS]):
        i = pos_slot[p]
        a0 = seg_start[p]
        k = seg_start[p + 1] - a0
        best = 0
        for j in range(1, k):
            if q[a0 + j] > q[a0 + best]:
                best = j
        a = legal[i, best]
        if p < n_l:
            _record(i, a, pos_obs[p], False, alt[p], st_obs, st_act, st_alt, st_seat, st_base,
                    st_slot, st_deal, seat, cum, deal_no, free, ep_idx, ep_len, cnt)
        actions[i] = a
    if cnt[K_NEXP]:
        for i in range(n):
            if explore[i] >= 0:
                a = legal[i, explore[i]]
                _record(i, a, obs[i], True, alt[0], st_obs, st_act, st_alt, st_seat, st_base,
                        st_slot, st_deal, seat, cum, deal_no, free, ep_idx, ep_len, cnt)
                actions[i] = a
    return 0


@njit(cache=True)
def _settle(rewards, done, cum, ep_idx, ep_len, st_seat, st_base, st_tgt, ready, deal_no,
            learner_seat, pool_frac, rng, scale, cnt):
    """Add the step's pay to each seat's running total; a finished game's decisions get
    their targets and join the ready queue; its slot draws the next deal's learner seat."""
    n, P = rewards.shape
    cap = ready.shape[0]
    for i in range(n):
        for s in range(P):
            cum[i, s] += rewards[i, s]
        if not done[i]:
            continue
        for j in range(ep_len[i]):
            f = ep_idx[i, j]
            st_tgt[f] = np.float32((cum[i, st_seat[f]] - st_base[f]) * scale)
            ready[(cnt[K_RHEAD] + cnt[K_RLEN]) % cap] = f
            cnt[K_RLEN] += 1
        cnt[K_SAMPLES] += ep_len[i]
        cnt[K_GAMES] += 1
        ep_len[i] = 0
        for s in range(P):
            cum[i, s] = 0.0
        deal_no[i] += 1
        learner_seat[i] = -1
        if pool_frac > 0.0 and (rng_next(rng, i) >> 11) * (1.0 / 4503599627370496.0) < pool_frac:
            learner_seat[i] = rng_below(rng, i, P)


@njit(cache=True)
def _pop(B, ready, free, st_obs, st_act, st_alt, st_tgt, st_seat, st_slot, st_deal, out_obs,
         out_act, out_alt, out_tgt, out_seat, out_slot, out_deal, cnt):
    """Copy the ``B`` oldest ready samples out and free their store entries."""
    cap = ready.shape[0]
    D = st_obs.shape[1]
    for b in range(B):
        f = ready[cnt[K_RHEAD]]
        cnt[K_RHEAD] = (cnt[K_RHEAD] + 1) % cap
        for d in range(D):
            out_obs[b, d] = st_obs[f, d]
        out_act[b] = st_act[f]
        out_alt[b, 0] = st_alt[f, 0]
        out_alt[b, 1] = st_alt[f, 1]
        out_tgt[b] = st_tgt[f]
        out_seat[b] = st_seat[f]
        out_slot[b] = st_slot[f]
        out_deal[b] = st_deal[f]
        free[cnt[K_FREE]] = f
        cnt[K_FREE] += 1
    cnt[K_RLEN] -= B


# ---------------------------------------------------------------------------------------------
# the Python side
# ---------------------------------------------------------------------------------------------
@dataclass
class Batch:
    """Samples of finished games: ``obs [B, D]`` float32 (the acting seat's observation),
    ``act [B]`` int64 (the action played), ``target [B]`` float32 (the Monte-Carlo return,
    scaled), ``seat``, ``slot`` and ``deal`` (the slot's deal number, from 0) int64, ``alt``
    ``[B, 2]`` int64 (the alternative ids :meth:`SelfPlay.commit` was given; ``-1`` none)."""

    obs: np.ndarray
    act: np.ndarray
    target: np.ndarray
    seat: np.ndarray
    slot: np.ndarray
    deal: np.ndarray
    feat_table: np.ndarray
    alt: np.ndarray

    def __len__(self) -> int:
        return len(self.act)

    def feats(self) -> np.ndarray:
        """Feature rows of the actions played (``[B, F]`` float32)."""
        return self.feat_table[self.act]


@dataclass
class Positions:
    """The positions of a step awaiting decisions (:meth:`SelfPlay.prepare`): ``n`` of them,
    the first ``n_learner`` the learner's; ``obs [n, D]``; their legal actions laid end to
    end: ``feats [m, F]``, ``owner [m]`` (position of each), ``ids [m]`` (action ids), the
    learner's first (``m_learner``); ``seg [n + 1]`` (position ``p``'s actions are
    ``seg[p]:seg[p + 1]``); ``slot [n]`` (the game of each).  Views into the engine's buffers."""

    n_learner: int
    n: int
    m_learner: int
    m: int
    obs: np.ndarray
    feats: np.ndarray
    owner: np.ndarray
    ids: np.ndarray
    seg: np.ndarray
    slot: np.ndarray

    def sizes(self) -> np.ndarray:
        return np.diff(self.seg)


def _rates(eps, n: int) -> np.ndarray:
    e = np.broadcast_to(np.asarray(eps, np.float64), (n,)).copy()
    if not ((e >= 0) & (e <= 1)).all():
        raise ValueError(f"eps must lie in [0, 1], got {eps!r}")
    return e


class SelfPlay:
    """``n`` games of ``game`` producing DMC samples (see the module docstring).

    Args:
        game: a registry name or a compiled Game.
        n: games stepped together.
        seed: seeds the deals (``VectorGame.reset(seed=...)``) and the exploration streams.
        eps: exploration rate, one number or one per slot (a learner position plays a
            uniform legal action with this probability).
        scale: factor applied to the returns (the targets).
        pool_frac: share of deals seating the learner at one random seat against ``opp_fn``
            (used only when :meth:`step` gets an ``opp_fn``).
        capacity: initial sample-store size (grows when needed).
        **options: game options (with a registry name).
    """

    def __init__(self, game: Union[str, Any], n: int, *, seed: int = 0, eps=0.0,
                 scale: float = 1.0, pool_frac: float = 0.0, capacity: Optional[int] = None,
                 **options: Any):
        self.vg = VectorGame(game, n, observe=True, **options)
        self.game = self.vg.game
        self.n = n
        if not 0.0 <= float(pool_frac) <= 1.0:
            raise ValueError(f"pool_frac must lie in [0, 1], got {pool_frac!r}")
        if not float(scale) > 0:
            raise ValueError(f"scale must be > 0, got {scale!r}")
        self.eps = _rates(eps, n)
        self.scale, self.pool_frac = float(scale), float(pool_frac)
        g = self.game
        self.feat_table = np.ascontiguousarray(g.action_features(np.arange(g.n_actions)))
        self.obs_dim, self.feat_dim = int(g.layout.size), int(self.feat_table.shape[1])
        P, D = int(g.n_players), self.obs_dim
        self.cnt = np.zeros(N_CNT, np.int64)
        self.cum = np.zeros((n, P), np.float64)
        self.learner_seat = np.full(n, -1, np.int64)
        self.deal_no = np.zeros(n, np.int64)
        self.ep_idx = np.zeros((n, MAX_EPISODE), np.int64)
        self.ep_len = np.zeros(n, np.int64)
        self.actions = np.zeros(n, np.int64)
        self.pos_slot = np.zeros(n, np.int64)
        self.explore = np.full(n, -1, np.int64)
        self.pos_obs = np.zeros((n, D), np.float32)
        self.seg_start = np.zeros(n + 1, np.int64)
        self.feats = np.zeros((max(64, 8 * n), self.feat_dim), np.float32)
        self.owner = np.zeros(len(self.feats), np.int64)
        self.ids = np.zeros(len(self.feats), np.int64)
        self.alt = np.full((n, 2), -1, np.int64)
        self._no_alt = np.full((n, 2), -1, np.int64)
        self._alloc_store(capacity or 64 * n)
        st = np.random.SeedSequence([int(seed), 0x5E1F]).generate_state(n, np.uint64) >> np.uint64(1)
        self.rng = st.astype(np.int64)
        self.vg.reset(seed=int(seed))
        self.decisions = 0

    # -- the sample store -------------------------------------------------------------------------
    def _alloc_store(self, cap: int) -> None:
        D = self.obs_dim
        self.st_obs = np.zeros((cap, D), np.float32)
        self.st_act = np.zeros(cap, np.int64)
        self.st_alt = np.full((cap, 2), -1, np.int64)
        self.st_tgt = np.zeros(cap, np.float32)
        self.st_base = np.zeros(cap, np.float64)
        self.st_seat = np.zeros(cap, np.int64)
        self.st_slot = np.zeros(cap, np.int64)
        self.st_deal = np.zeros(cap, np.int64)
        self.free = np.arange(cap - 1, -1, -1, dtype=np.int64)
        self.ready = np.zeros(cap, np.int64)
        self.cnt[K_FREE] = cap
        self.cnt[K_RHEAD] = self.cnt[K_RLEN] = 0

    def _grow(self, need: int) -> None:
        """Enlarge the store (entries keep their indices; the ready queue is laid out anew)."""
        old = len(self.st_act)
        cap = max(2 * old, old + need)
        for name in ("st_obs", "st_act", "st_alt", "st_tgt", "st_base", "st_seat", "st_slot", "st_deal"):
            a = getattr(self, name)
            b = np.zeros((cap, *a.shape[1:]), a.dtype)
            b[:old] = a
            setattr(self, name, b)
        nf, head, rl = (int(x) for x in self.cnt[[K_FREE, K_RHEAD, K_RLEN]])
        free = np.empty(cap, np.int64)
        free[:nf] = self.free[:nf]
        free[nf:nf + cap - old] = np.arange(cap - 1, old - 1, -1)
        ready = np.zeros(cap, np.int64)
        ready[:rl] = self.ready[(head + np.arange(rl)) % old]
        self.free, self.ready = free, ready
        self.cnt[K_FREE] = nf + cap - old
        self.cnt[K_RHEAD] = 0

    # -- stepping ---------------------------------------------------------------------------------
    @property
    def ready_count(self) -> int:
        """Samples of finished games waiting for :meth:`pop`."""
        return int(self.cnt[K_RLEN])

    @property
    def games(self) -> int:
        return int(self.cnt[K_GAMES])

    @property
    def samples(self) -> int:
        return int(self.cnt[K_SAMPLES])

    def prepare(self) -> "Positions":
        """Phase 1 of a step: lay out the positions that need a decision by the network
        (learner positions first) and return views of them (valid until :meth:`commit`).
        The learner positions that explore this step are not among them: their uniform
        legal action is drawn here (``explore[slot]``, its index among the legal actions;
        ``cnt[K_NEXP]`` of them) and played by :meth:`commit`, which records them without
        alternatives; so each call draws (call :meth:`commit` once after each)."""
        vg, cnt = self.vg, self.cnt
        while True:
            need = _gather(vg.n_legal, vg.legal, vg.seat, vg.obs, self.learner_seat,
                           self.feat_table, self.eps, self.rng, self.explore, self.pos_slot,
                           self.pos_obs, self.feats, self.owner, self.ids, self.seg_start, cnt)
            if need == 0:
                break
            self.feats = np.zeros((2 * need, self.feat_dim), np.float32)
            self.owner = np.zeros(2 * need, np.int64)
            self.ids = np.zeros(2 * need, np.int64)
        npl, npos, ml, m = (int(x) for x in cnt[[K_NPOS_L, K_NPOS, K_M_L, K_M]])
        return Positions(npl, npos, ml, m, self.pos_obs[:npos], self.feats[:m], self.owner[:m],
                         self.ids[:m], self.seg_start[:npos + 1], self.pos_slot[:npos])

    def commit(self, q, alt: Optional[np.ndarray] = None, pool: bool = False) -> int:
        """Phase 2: play the best-``q`` action of each prepared position (learner positions
        explore), record the learner decisions (with ``alt [learner positions, 2]``, ids kept
        beside each sample, e.g. for a large-margin loss), step the games, settle the pay;
        ``pool``: the finished deals draw learner seats (``pool_frac``).  Returns ``n``."""
        vg, cnt = self.vg, self.cnt
        q = np.ascontiguousarray(_as_numpy(q), np.float32)
        if q.shape != (int(cnt[K_M]),):
            raise ValueError(f"commit: {int(cnt[K_M])} scores needed, got shape {q.shape}")
        a = self._no_alt
        if alt is not None:
            a = self.alt
            a[:] = -1
            a[:len(alt)] = alt
        while True:
            code = _choose(q, vg.legal, vg.n_legal, vg.seat, vg.obs, self.explore, self.pos_slot,
                           self.pos_obs, self.seg_start, self.cum, self.actions, a,
                           self.st_obs, self.st_act, self.st_alt, self.st_seat, self.st_base,
                           self.st_slot, self.st_deal, self.deal_no, self.free, self.ep_idx,
                           self.ep_len, cnt)
            if code == 0:
                break
            if code == 2:
                raise RuntimeError(f"a {self.game.info.name} game went past {MAX_EPISODE} learner "
                                   f"decisions")
            self._grow(int(cnt[K_NEED]))
        vg.step(self.actions)
        _settle(vg.rewards, vg.done, self.cum, self.ep_idx, self.ep_len, self.st_seat, self.st_base,
                self.st_tgt, self.ready, self.deal_no, self.learner_seat,
                self.pool_frac if pool else 0.0, self.rng, self.scale, cnt)
        self.decisions += self.n
        return self.n

    def step(self, policy_fn: PolicyFn, opp_fn: Optional[PolicyFn] = None) -> int:
        """One decision in every game (see the module docstring); returns ``n``.

        ``policy_fn(obs, feats, owner)`` scores the learner's positions (``obs [p, D]``
        float32, ``feats [m, F]`` float32, ``owner [m]`` int64 = the row of ``obs`` each
        action belongs to) and returns ``m`` scores (numpy or torch); ``opp_fn`` the same for
        the opponents' positions (only with ``pool_frac > 0``; default ``policy_fn``).
        """
        pos = self.prepare()
        q = np.empty(pos.m, np.float32)
        npl, ml = pos.n_learner, pos.m_learner
        keys = None
        if getattr(policy_fn, "takes_keys", False) or getattr(opp_fn, "takes_keys", False):
            keys = pos.slot * self.game.n_players + self.vg.seat[pos.slot]  # game and seat
        if ml:
            q[:ml] = _score(policy_fn, pos.obs[:npl], pos.feats[:ml], pos.owner[:ml], pos.ids[:ml],
                            None if keys is None else keys[:npl])
        if pos.m > ml:
            fn = opp_fn if opp_fn is not None else policy_fn
            q[ml:] = _score(fn, pos.obs[npl:], pos.feats[ml:], pos.owner[ml:] - npl, pos.ids[ml:],
                            None if keys is None else keys[npl:])
        return self.commit(q, pool=opp_fn is not None)

    def pop(self, B: Optional[int] = None, into: Optional[tuple] = None) -> Batch:
        """The ``B`` oldest ready samples (default: all of them) as a :class:`Batch` of copies;
        ``into``: ``(obs [B, D] float32, act [B] int64, target [B] float32)`` arrays to write
        those three into (e.g. a shared-memory slot) instead of new ones."""
        rl = self.ready_count
        B = rl if B is None else int(B)
        if not 0 <= B <= rl:
            raise ValueError(f"pop({B}): {rl} samples are ready")
        if into is None:
            into = (np.empty((B, self.obs_dim), np.float32), np.empty(B, np.int64),
                    np.empty(B, np.float32))
        else:
            want = (((B, self.obs_dim), np.float32), ((B,), np.int64), ((B,), np.float32))
            if len(into) != 3 or any(not isinstance(a, np.ndarray) or a.shape != sh or a.dtype != dt
                                     or not a.flags.c_contiguous for a, (sh, dt) in zip(into, want)):
                raise ValueError(f"pop: into= needs contiguous arrays of shapes and dtypes {want}")
        obs, act, tgt = into
        out = Batch(obs, act, tgt, np.empty(B, np.int64), np.empty(B, np.int64),
                    np.empty(B, np.int64), self.feat_table, np.empty((B, 2), np.int64))
        _pop(B, self.ready, self.free, self.st_obs, self.st_act, self.st_alt, self.st_tgt,
             self.st_seat, self.st_slot, self.st_deal, out.obs, out.act, out.alt, out.target,
             out.seat, out.slot, out.deal, self.cnt)
        return out

    def batches(self, policy_fn: PolicyFn, B: int, opp_fn: Optional[PolicyFn] = None,
                max_steps: Optional[int] = None) -> Iterator[Batch]:
        """Step the games and yield a :class:`Batch` of ``B`` samples whenever that many are
        ready (forever, or for ``max_steps`` steps)."""
        steps = 0
        while max_steps is None or steps < max_steps:
            self.step(policy_fn, opp_fn)
            steps += 1
            while self.ready_count >= B:
                yield self.pop(B)


def _as_numpy(q) -> np.ndarray:
    if isinstance(q, np.ndarray):
        return q
    return q.detach().cpu().numpy()  # a torch tensor


def _score(fn: PolicyFn, obs: np.ndarray, feats: np.ndarray, owner: np.ndarray, ids: np.ndarray,
           keys: Optional[np.ndarray] = None) -> np.ndarray:
    """``fn``'s scores as numpy; a scorer with ``takes_ids`` (``train.dmc.FactoredScorer``) also
    gets the ids, and one with ``takes_keys`` each position's key (``slot * players + seat``:
    it may keep per-key state such as the observation part of the seat's last decision)."""
    if getattr(fn, "takes_keys", False) and keys is not None:
        return _as_numpy(fn(obs, feats, owner, ids, keys=keys))
    if getattr(fn, "takes_ids", False):
        return _as_numpy(fn(obs, feats, owner, ids))
    return _as_numpy(fn(obs, feats, owner))


def check_sync_seconds(value: Any, allow_none: bool = False) -> None:
    """``ValueError`` unless ``value`` is a number >= 0 (or ``None`` with ``allow_none``): how
    often at most an actor pool sends the learner's weights (:class:`ActorPool`,
    ``train.ray_actors.RayActorPool``, ``train.dmc --sync-seconds``)."""
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise ValueError(f"sync_seconds must be {'None or ' if allow_none else ''}a number >= 0, "
                         f"got {value!r}")


def scoring_dtype(dtype: str, factored: bool, why: str = ""):
    """The torch dtype self-play scores in (:func:`train.dmc.act_dtype`), checked against the
    scorer it will have: ``"int8"`` needs the factored scorer on the CPU (``factored``;
    ``why``: what decided it, for the message)."""
    import torch

    from .dmc import act_dtype

    dt = act_dtype(dtype)
    if dt == torch.int8 and not factored:
        raise ValueError(f"act_dtype 'int8' needs the factored scorer on the CPU{why}")
    return dt


def torch_scorer(net, device=None, game=None, dtype: str = "float32") -> PolicyFn:
    """A ``policy_fn`` scoring with a ``train.dmc.QNet`` (no gradients): with ``game`` (and
    on CPU) a ``train.dmc.FactoredScorer`` (per-id cache of the first layer's action part,
    fused layers; same scores up to float rounding), else ``net(obs, feats, owner)``.
    ``dtype``: ``"float32"``, or ``"bfloat16"`` for the layers after the first (the factored
    scorer) or under ``torch.autocast`` (the plain forward), or ``"int8"`` (the factored
    scorer only, :mod:`train.quant`): :func:`train.dmc.act_dtype`."""
    import contextlib

    import torch

    dev = device if device is not None else next(net.parameters()).device
    factored = game is not None and torch.device(dev).type == "cpu"
    dt = scoring_dtype(dtype, factored, f" (a game and a CPU device; got game="
                                        f"{'given' if game is not None else None}, "
                                        f"device={torch.device(dev)})")
    if factored:
        from .dmc import FactoredScorer

        return FactoredScorer(net, game.action_features, game.n_actions, dtype=dtype)

    def score(obs, feats, owner):
        cast = (torch.autocast(torch.device(dev).type, dtype=dt) if dt != torch.float32
                else contextlib.nullcontext())
        with torch.no_grad(), cast:
            return net(torch.from_numpy(obs).to(dev), torch.from_numpy(feats).to(dev),
                       torch.from_numpy(owner).to(dev)).float()

    return score


# ---------------------------------------------------------------------------------------------
# actors in separate processes
# ---------------------------------------------------------------------------------------------
def _actor_main(idx: int, game: str, options: dict, n: int, seed: int, eps, scale: float,
                pool_frac: float, batch: int, net, opp_net, version, opp_version, out_q, stop,
                threads: int, fast: bool = True, dtype: str = "float32", slots=None,
                free_q=None) -> None:
    """Body of an :class:`ActorPool` process: play with the shared networks, write batches
    into the shared-memory ``slots`` (``obs, act, target`` tensors ``[S, batch, ...]``) and
    announce each by its slot number; ``free_q`` hands the slots back once read."""
    import copy

    import torch

    torch.set_num_threads(threads)
    torch.set_flush_denormal(True)
    try:
        os.nice(0)
    except OSError:  # pragma: no cover
        pass
    sp = SelfPlay(game, n, seed=seed, eps=eps, scale=scale, pool_frac=pool_frac, **options)
    local, local_opp = copy.deepcopy(net).eval(), copy.deepcopy(opp_net).eval()
    seen, seen_opp = -1, -1
    g = sp.game if fast else None
    score = torch_scorer(local, game=g, dtype=dtype)
    opp_score = torch_scorer(local_opp, game=g, dtype=dtype)
    s_obs, s_act, s_tgt = (t.numpy() for t in slots)
    while not stop.is_set():
        if version.value != seen:
            seen = version.value
            local.load_state_dict(net.state_dict())
        if opp_version.value != seen_opp:
            seen_opp = opp_version.value
            local_opp.load_state_dict(opp_net.state_dict())
        sp.step(score, opp_score if opp_version.value > 0 else None)
        while sp.ready_count >= batch and not stop.is_set():
            try:
                k = free_q.get_nowait()
            except _queue.Empty:
                if sp.ready_count < 4 * batch:
                    break  # keep playing a little while the learner catches up
                try:
                    k = free_q.get(timeout=0.05)
                except _queue.Empty:
                    continue
            sp.pop(batch, into=(s_obs[k], s_act[k], s_tgt[k]))
            out_q.put((idx, k, sp.decisions, sp.games))
            sp.decisions, sp.cnt[K_GAMES] = 0, 0
    out_q.cancel_join_thread()


class ActorPool:
    """``actors`` processes, each a :class:`SelfPlay` of ``n`` games playing with a
    shared-memory copy of the learner's network (and of its opponent network for pool games);
    :meth:`get` returns ``(obs, act, target)`` batches, :meth:`publish` hands new weights to
    the actors.  Processes are started with ``spawn`` (no state forked from the learner).
    ``fast``: the actors score with ``train.dmc.FactoredScorer`` (else ``net(...)``);
    ``dtype``: the dtype they score in (:func:`torch_scorer`).

    The batches travel through shared memory: each actor has ``slots`` buffers of one batch
    (observations, actions, targets); only a slot's number goes through the queue, and
    :meth:`get` copies the batch out and hands the slot back (pickling the observations
    through a pipe took 30% of a core at 100k decisions/s), or, with ``copy=False``, returns
    views of the slot and keeps it until the next :meth:`get` or :meth:`release` (reading
    180k decisions/s took 7.5% of a core with the copy, 3.4% without).  An actor whose slots are all
    waiting plays on until ``4 * batch`` samples are ready, then waits for one."""

    def __init__(self, game: str, options: dict, net, opp_net, *, actors: int, n: int, seed: int,
                 eps, scale: float, pool_frac: float, batch: int, threads: int = 1, fast: bool = True,
                 dtype: str = "float32", slots: int = 4, sync_seconds: float = 0.0):
        import copy

        import torch
        import torch.multiprocessing as mp

        # the actors' torch_scorer would refuse it, but only in their processes
        scoring_dtype(dtype, fast, " (fast=True)")
        if not isinstance(slots, int) or slots < 1:
            raise ValueError(f"slots must be an int >= 1, got {slots!r}")
        check_sync_seconds(sync_seconds)
        self.sync_seconds = float(sync_seconds)
        self._last_sync = -float("inf")
        ctx = mp.get_context("spawn")
        self.net = copy.deepcopy(net).cpu().share_memory()
        self.opp_net = copy.deepcopy(opp_net).cpu().share_memory()
        self.version = ctx.Value("q", 0, lock=False)
        self.opp_version = ctx.Value("q", 0, lock=False)
        self.queue = ctx.Queue()
        self.stop = ctx.Event()
        self.procs = []
        self.slots, self.free = [], []
        self._held: Optional[tuple] = None  # (actor, slot) lent out by get(copy=False)
        D = int(net.obs_dim)
        for i in range(actors):
            bufs = (torch.zeros((slots, batch, D), dtype=torch.float32).share_memory_(),
                    torch.zeros((slots, batch), dtype=torch.int64).share_memory_(),
                    torch.zeros((slots, batch), dtype=torch.float32).share_memory_())
            free = ctx.Queue()
            for k in range(slots):
                free.put(k)
            self.slots.append(tuple(t.numpy() for t in bufs))
            self.free.append(free)
            p = ctx.Process(target=_actor_main, daemon=True,
                            args=(i, game, options, n, seed * 1000 + i, eps, scale, pool_frac, batch,
                                  self.net, self.opp_net, self.version, self.opp_version,
                                  self.queue, self.stop, threads, fast, dtype, bufs, free))
            p.start()
            self.procs.append(p)

    def publish(self, net=None, opp_net=None, force: bool = False) -> None:
        """Copy the learner's weights into the shared network (at most every
        :attr:`sync_seconds` unless ``force``; 0: every call), and a new opponent (always)."""
        import torch

        with torch.no_grad():
            now = time.perf_counter()
            if net is not None and (force or now - self._last_sync >= self.sync_seconds):
                for a, b in zip(self.net.parameters(), net.parameters()):
                    a.copy_(b.detach().cpu())
                self.version.value += 1
                self._last_sync = now
            if opp_net is not None:
                for a, b in zip(self.opp_net.parameters(), opp_net.parameters()):
                    a.copy_(b.detach().cpu())
                self.opp_version.value += 1

    def get(self, timeout: float = 1.0, copy: bool = True):
        """``(decisions, games, (obs, act, target))`` of the next batch, or ``None`` after
        ``timeout`` seconds without one; a dead actor is a ``RuntimeError``.

        ``copy=False``: the three arrays are views of the shared slot, valid until
        the next :meth:`get` or :meth:`release` (which hand the slot back to its actor; keep
        a copy of anything needed longer)."""
        self.release()
        try:
            idx, k, dec, games = self.queue.get(timeout=timeout)
        except _queue.Empty:
            dead = [p for p in self.procs if not p.is_alive()]
            if dead:
                raise RuntimeError(f"self-play actor process exited with code {dead[0].exitcode}")
            return None
        if copy:
            obs, act, tgt = (a[k].copy() for a in self.slots[idx])
            self.free[idx].put(k)
        else:
            obs, act, tgt = (a[k] for a in self.slots[idx])
            self._held = (idx, k)
        return dec, games, (obs, act, tgt)

    def release(self) -> None:
        """Hand back the slot lent by ``get(copy=False)`` (its arrays then change under
        whoever still reads them); nothing when none is lent."""
        if self._held is not None:
            idx, k = self._held
            self._held = None
            self.free[idx].put(k)

    def close(self) -> None:
        self.stop.set()
        for p in self.procs:
            p.join(timeout=5)
            if p.is_alive():
                p.terminate()
                p.join(timeout=5)
        self.procs = []
