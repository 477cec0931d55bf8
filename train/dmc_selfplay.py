"""Self-play of :mod:`train.dmc`: the behaviour policies that make the learner's samples, as
:class:`SelfPlayer`, a part of :class:`train.dmc.DMC`.  Self-play runs on the data engine
(:class:`train.selfplay.SelfPlay`, in this process or in ``--actors`` processes / Ray actors)
or, with ``--engine lockstep``, game by game from Python (the comparison baseline); in teacher
mode (``--teacher``) a registered agent plays every seat.  :func:`exploration_rates`: the
Ape-X-style exploration rate of each game slot."""

from __future__ import annotations

import sys
import time
from typing import Any

import numpy as np

from cardenvs.arena import agents_module
from .common import _SEED_MAX
from .dmc_config import SYNC_SECONDS, Config
from .selfplay import _as_numpy

# the agents package beside this one: ``agents`` in a checkout, ``cardenvs.agents`` installed
segment_argmax = agents_module("trained").segment_argmax


def exploration_rates(eps: float, alpha: float, n: int) -> np.ndarray:
    """Ape-X-style exploration rates of ``n`` game slots: slot ``i`` explores with
    ``eps ** (1 + alpha * i / (n - 1))`` (a few games explore a lot, most barely), so that
    decisions a greedy policy stops trying (e.g. bidding, when every seat passing is worth
    0) keep being played out."""
    if n == 1 or alpha == 0:
        return np.full(n, eps)
    return eps ** (1.0 + alpha * np.arange(n) / (n - 1))


class SelfPlayer:
    """The self-play half of :class:`train.dmc.DMC` (which sets the attributes annotated here
    in its ``__init__``, and whose :class:`train.dmc_learner.Learner` provides ``_push``):
    :meth:`step` advances every game by one decision with the behaviour policy of the
    moment (the teacher while its phase lasts, else self-play against the network and its
    pool) and pushes the finished samples."""

    cfg: Config
    game: Any
    device: Any
    rng: np.random.Generator
    net: Any
    opp_net: Any
    policy: Any
    opp_policy: Any
    pool: list[dict]
    counters: dict
    teacher: Any
    scale: float

    def _new_game(self, i: int) -> None:
        g, cfg, rng = self.game, self.cfg, self.rng
        g.reset(self.states[i], int(rng.integers(_SEED_MAX)))
        self.cum[i] = 0.0
        self.pending[i] = []
        if self._teaching:  # the teacher plays every seat; every seat's decisions are learned
            self.learner_seat[i] = -1
        elif self.pool and rng.random() < cfg.pool_frac:
            self.learner_seat[i] = int(rng.integers(g.n_players))
        else:
            self.learner_seat[i] = -1

    def _finish_game(self, i: int) -> None:
        pend = self.pending[i]
        if pend:
            obs = np.stack([p[0] for p in pend])
            act = np.array([p[1] for p in pend], np.int64)
            tgt = np.array([self.cum[i, p[2]] - p[3] for p in pend], np.float32) * self.scale
            alt = None
            if self._margin_on:
                alt = np.array([p[4] if len(p) > 4 else (-1, -1) for p in pend], np.int64).reshape(-1, 2)
            self._push(obs, act, tgt, alt)
            self.counters["samples"] += len(pend)
        self.counters["games"] += 1

    def _observe(self, i: int, moves: np.ndarray) -> tuple[int, int]:
        """``(k, seat)`` of lockstep game ``i``: its ``k`` legal actions are in
        ``self._buf[:k]``; with one (``seat`` -1) it is put in ``moves[i]``, otherwise the
        observation of the seat to move is written to ``self.obs[i]``."""
        g, s = self.game, self.states[i]
        k = g.legal(s, self._buf)
        if k == 1:
            moves[i] = self._buf[0]
            return 1, -1
        c = g.current(s)
        g.encode(s, c, self.obs[i])
        return k, c

    def _advance(self, i: int, a: int) -> None:
        """Play ``a`` in lockstep game ``i``; a finished game is learned from and dealt anew."""
        g, s = self.game, self.states[i]
        g.step(s, a)
        self.cum[i] += g.rewards(s)
        if g.done(s):
            self._finish_game(i)
            self._new_game(i)

    def _start_selfplay(self) -> None:
        g, N = self.game, self.cfg.envs
        self.states = np.stack([g.new_state() for _ in range(N)])
        self.cum = np.zeros((N, g.n_players))
        self.pending: list[list] = [[] for _ in range(N)]
        self.learner_seat = np.full(N, -1, np.int64)
        self.obs = np.zeros((N, self.obs_dim), np.float32)
        self.eps_slot = exploration_rates(self.cfg.eps, self.cfg.eps_alpha, N)
        self._buf = np.empty(g.n_actions, np.int64)
        self._mask = np.zeros(g.n_actions, np.int8)
        self._teaching = self.teacher_active()
        for i in range(N):
            self._new_game(i)
        self._stop_engine()
        self._engine = None  # started by the first engine_step (after any teacher phase)

    def _start_engine(self) -> None:
        """The self-play data engine (in this process, or ``--actors`` processes)."""
        from .selfplay import ActorPool, SelfPlay, torch_scorer

        cfg = self.cfg
        seed = int(self.rng.integers(_SEED_MAX))
        if cfg.actors:
            kw = dict(actors=cfg.actors, n=cfg.envs, seed=seed % 2**31, eps=self.eps_slot,
                      scale=self.scale, pool_frac=cfg.pool_frac, batch=cfg.batch,
                      dtype=cfg.act_dtype)
            kw["sync_seconds"] = float(cfg.sync_seconds if cfg.sync_seconds is not None
                                       else SYNC_SECONDS[cfg.backend])
            if cfg.backend == "ray":
                from .ray_actors import RayActorPool

                self._actors = RayActorPool(cfg.game, cfg.options, self.net, self.opp_net,
                                            address=cfg.ray_address, **kw)
            else:
                self._actors = ActorPool(cfg.game, cfg.options, self.net, self.opp_net, threads=1, **kw)
            if self.pool:
                self._actors.publish(opp_net=self.opp_net)
            return
        self._engine = SelfPlay(self.game, cfg.envs, seed=seed, eps=self.eps_slot, scale=self.scale,
                                pool_frac=cfg.pool_frac)
        self._score = torch_scorer(self.net, self.device, game=self.game, dtype=cfg.act_dtype)
        self._opp_score = torch_scorer(self.opp_net, self.device, game=self.game,
                                       dtype=cfg.act_dtype)

    def _stop_engine(self) -> None:
        if getattr(self, "_actors", None) is not None:
            self._actors.close()
            self._actors = None

    def engine_step(self) -> None:
        """Self-play on the data engine: one decision in every game (in this process), or
        the next batch of the actor processes; finished samples join the training queue."""
        if self._engine is None and self._actors is None:
            self._start_engine()
        if self._actors is not None:
            pool = self._actors
            lends = hasattr(pool, "release")  # ActorPool lends its slots (Ray's pool copies)
            if lends and self._q_n:
                # samples left from a lent slot (an update limit stopped them): copies of them,
                # since the next get hands the slot back to its actor
                self._q_obs, self._q_act, self._q_tgt = ([np.concatenate(q)] for q in
                                                         (self._q_obs, self._q_act, self._q_tgt))
            # the batch as views of the actor's shared slot (the update reads them in place)
            got = pool.get(timeout=0.5, copy=False) if lends else pool.get(timeout=0.5)
            if got is None:
                return
            dec, games, (obs, act, tgt) = got
            self._push(obs, act, tgt)
            self.counters["decisions"] += int(dec)
            self.counters["games"] += int(games)
            self.counters["samples"] += len(act)
            return
        sp = self._engine
        games0 = sp.games
        sp.eps[:] = self.eps_slot
        sp.step(self._score, self._opp_score if self.pool else None)
        if sp.ready_count:
            b = sp.pop()
            self._push(b.obs, b.act, b.target)
            self.counters["samples"] += len(b)
        self.counters["games"] += sp.games - games0
        self.counters["decisions"] += sp.n

    def teacher_active(self) -> bool:
        """Whether the behaviour policy is the teacher now (``--teacher`` and its phase)."""
        cfg = self.cfg
        if self.teacher is None:
            return False
        if cfg.teacher_minutes is not None and self.counters["train_s"] >= 60.0 * cfg.teacher_minutes:
            return False
        return not (cfg.teacher_updates and self.counters["updates"] >= cfg.teacher_updates)

    def step(self) -> None:
        """One decision in every game, in teacher mode while its phase lasts, else self-play."""
        teaching = self.teacher_active()
        if teaching != self._teaching:
            self._teaching = teaching
            print(f"[dmc] {'teacher' if teaching else 'self-play'} mode from "
                  f"{self.counters['train_s'] / 60:.1f} min, {self.counters['updates']} updates",
                  file=sys.stderr, flush=True)
        if teaching and self.cfg.engine == "vector" and not self.cfg.actors:
            self.engine_teacher_step()
        elif teaching:
            self.teacher_step()
        elif self.cfg.engine == "vector":
            self.engine_step()
        else:
            self.selfplay_step()

    def teacher_actions(self, obs: np.ndarray, ids: list[np.ndarray]) -> np.ndarray:
        """The teacher's action in each position (``obs [B, D]``, legal ids per position): one
        ``act_batch`` call when the teacher's class vectorises it, else one ``act`` per
        position (the legal ids given, the mask filled in a reused buffer)."""
        Agent = agents_module("base").Agent

        t0 = time.perf_counter()
        agent, B = self.teacher, len(ids)
        if type(agent).act_batch is not Agent.act_batch:
            masks = np.zeros((B, self.game.n_actions), np.int8)
            for j, legal in enumerate(ids):
                masks[j, legal] = 1
            out = np.asarray(agent.act_batch(obs, masks), np.int64)
        else:
            out = np.empty(B, np.int64)
            mask = self._mask
            for j, legal in enumerate(ids):
                mask[legal] = 1
                out[j] = agent.act({"observation": obs[j], "action_mask": mask}, legal)
                mask[legal] = 0
        for j, legal in enumerate(ids):
            if not (legal == out[j]).any():
                raise RuntimeError(f"teacher {agent!r} chose the illegal action {int(out[j])}")
        self._teacher_s += time.perf_counter() - t0
        return out

    def engine_teacher_step(self) -> None:
        """Teacher mode on the data engine (the same behaviour and samples as
        :meth:`teacher_step`): every position with 2+ legal actions is the learner's; the
        teacher's batched choice (or, with probability ``teacher_mix``, the network's greedy
        action) is played, or a uniform legal action with probability ``teacher_eps`` (drawn
        in the engine, which then records no alternatives); with the margin loss on, the
        teacher's decisions keep the network's greedy action (when it differs) and one random
        other legal action beside the sample."""
        if self._engine is None:
            self._start_engine()
        rng, cfg, sp = self.rng, self.cfg, self._engine
        sp.eps[:] = cfg.teacher_eps
        games0 = sp.games
        pos = sp.prepare()
        n, sizes = pos.n, pos.sizes()
        alt = None
        if n:
            seg = pos.seg
            t_act = self.teacher_actions(pos.obs, [pos.ids[seg[p]:seg[p + 1]] for p in range(n)])
            hit = np.flatnonzero(pos.ids == t_act[pos.owner])  # one per position (checked legal)
            chosen = t_act.copy()
            mixed = np.zeros(n, np.bool_)
            if cfg.teacher_mix > 0.0:
                mixed = rng.random(n) < cfg.teacher_mix
            if mixed.any() or self._margin_on:
                q_net = _as_numpy(self._score(pos.obs, pos.feats, pos.owner))
                greedy = pos.ids[segment_argmax(q_net, sizes)]
                chosen[mixed] = greedy[mixed]
                if self._margin_on:
                    j_t = hit - pos.seg[:-1]
                    r = (rng.random(n) * (sizes - 1)).astype(np.int64)
                    r += r >= j_t
                    alt = np.stack([np.where(greedy != t_act, greedy, -1), pos.ids[pos.seg[:-1] + r]], 1)
                    alt[mixed] = -1
            q = (pos.ids == chosen[pos.owner]).astype(np.float32)
            sp.commit(q, alt)
            self.counters["teacher_decisions"] += int(
                (~mixed & (sp.actions[pos.slot] == t_act)).sum())
        else:
            sp.commit(np.zeros(0, np.float32))
        if sp.ready_count:
            b = sp.pop()
            self._push(b.obs, b.act, b.target, b.alt if self._margin_on else None)
            self.counters["samples"] += len(b)
        self.counters["games"] += sp.games - games0
        self.counters["decisions"] += sp.n

    def teacher_step(self) -> None:
        """Advance every game by one decision with the teacher as behaviour policy.

        At each decision with 2+ legal actions the acting seat plays a uniformly random legal
        action with probability ``teacher_eps``, otherwise the network's greedy action with
        probability ``teacher_mix``, otherwise the teacher's action; every such decision is a
        sample (its target: the acting seat's Monte-Carlo return)."""
        rng, cfg = self.rng, self.cfg
        N, buf, obs = cfg.envs, self._buf, self.obs
        eps, mix = cfg.teacher_eps, cfg.teacher_mix
        moves = np.empty(N, np.int64)
        learn = np.zeros(N, np.bool_)
        t_games, t_ids, n_games, n_ids = [], [], [], []
        for i in range(N):
            k, c = self._observe(i, moves)
            if k == 1:
                continue
            self.pending[i].append((obs[i].copy(), 0, c, self.cum[i, c]))
            learn[i] = True
            if rng.random() < eps:
                moves[i] = buf[rng.integers(k)]
            elif mix > 0.0 and rng.random() < mix:
                n_games.append(i)
                n_ids.append(buf[:k].copy())
            else:
                t_games.append(i)
                t_ids.append(buf[:k].copy())
        alts = {}
        if t_games:
            moves[t_games] = self.teacher_actions(obs[t_games], t_ids)
            self.counters["teacher_decisions"] += len(t_games)
        if self._margin_on and t_games:  # the network's greedy action on the teacher's decisions too
            n_games, n_ids, nt = n_games + t_games, n_ids + t_ids, len(n_games)
        else:
            nt = len(n_games)
        if n_games:
            greedy = self.policy.choose(obs[n_games], np.concatenate(n_ids),
                                        np.array([len(x) for x in n_ids]))
            moves[n_games[:nt]] = greedy[:nt]
            for j, i in enumerate(n_games[nt:]):
                ids, a_t = n_ids[nt + j], moves[i]
                others = ids[ids != a_t]
                alts[i] = (int(greedy[nt + j]) if greedy[nt + j] != a_t else -1,
                           int(others[rng.integers(len(others))]))
        for i in range(N):
            a = int(moves[i])
            if learn[i]:
                o, _, c, base = self.pending[i][-1]
                self.pending[i][-1] = (o, a, c, base, alts[i]) if i in alts else (o, a, c, base)
            self._advance(i, a)
        self.counters["decisions"] += N

    def selfplay_step(self) -> None:
        """Advance every game by one decision (batched forwards), collect finished samples."""
        rng, eps = self.rng, self.eps_slot
        N, buf, obs = self.cfg.envs, self._buf, self.obs
        moves = np.empty(N, np.int64)
        groups = ([], [], [], []), ([], [], [], [])  # (games, ids, sizes, explore) per network
        for i in range(N):
            k, c = self._observe(i, moves)
            if k == 1:
                continue
            ls = self.learner_seat[i]
            learner = ls < 0 or ls == c
            gi, gids, gsz, gex = groups[0 if learner else 1]
            gi.append(i)
            gids.append(buf[:k].copy())
            gsz.append(k)
            if learner:
                explore = rng.random() < eps[i]
                gex.append(explore)
                self.pending[i].append((obs[i].copy(), 0, c, self.cum[i, c]))
        for which, policy in ((0, self.policy), (1, self.opp_policy)):
            gi, gids, gsz, gex = groups[which]
            if not gi:
                continue
            ids = np.concatenate(gids)
            chosen = policy.choose(obs[gi], ids, np.asarray(gsz))
            for j, i in enumerate(gi):
                a = int(chosen[j])
                if which == 0:
                    if gex[j]:
                        a = int(gids[j][rng.integers(gsz[j])])
                    o, _, c, base = self.pending[i][-1]
                    self.pending[i][-1] = (o, a, c, base)
                moves[i] = a
        for i in range(N):
            self._advance(i, int(moves[i]))
        self.counters["decisions"] += N
