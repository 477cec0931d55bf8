"""The learner of :mod:`train.dmc`: the training queue of finished samples, the update (mean
squared error on Monte-Carlo targets, plus DQfD's large-margin loss in teacher mode), the
replay buffer (``--replay``) and the opponent pool's snapshots (``--refresh``), as
:class:`Learner`, a part of :class:`train.dmc.DMC`; :func:`random_return_scale` (the targets'
``auto`` scale)."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
import torch
from torch.nn import functional as F

from .common import _SEED_MAX, learner_autocast, optimizer_step
from .dmc_config import Config


def random_return_scale(game, rng: np.random.Generator, n_games: int = 200) -> float:
    """One over the mean absolute per-seat return of uniform-random play (a target scale)."""
    s = game.new_state()
    buf = np.empty(game.n_actions, np.int64)
    total, count = 0.0, 0
    for _ in range(n_games):
        game.reset(s, int(rng.integers(_SEED_MAX)))
        ret = np.zeros(game.n_players)
        while not game.done(s):
            k = game.legal(s, buf)
            game.step(s, int(buf[rng.integers(k)]))
            ret += game.rewards(s)
        total += np.abs(ret).sum()
        count += game.n_players
    mean = total / max(count, 1)
    return float(1.0 / mean) if mean > 0 else 1.0


def _only_writable(q: list) -> np.ndarray:
    """The one array of ``q``, copied only when it is read-only."""
    return q[0] if q[0].flags.writeable else q[0].copy()


class Learner:
    """The learning half of :class:`train.dmc.DMC` (which sets the attributes annotated here
    and the queue's ``_q_*`` lists in its ``__init__``): self-play pushes finished samples
    with :meth:`_push`, and :meth:`_update` pops a batch of ``cfg.batch`` and takes one
    optimizer step (or ``cfg.replay`` of them), snapshotting the network into the opponent
    pool every ``cfg.refresh`` updates."""

    cfg: Config
    game: Any
    device: torch.device
    rng: np.random.Generator
    net: Any
    opp_net: Any
    pool: list[dict]
    opp_index: int
    counters: dict

    def _refresh_pool(self) -> None:
        """A frozen copy of the network joins the pool (the oldest leaves past ``cfg.pool_size``)
        and the active opponent is redrawn from it (the actors get it too)."""
        self.pool.append({k: v.detach().clone() for k, v in self.net.state_dict().items()})
        if len(self.pool) > self.cfg.pool_size:
            self.pool.pop(0)
        self.opp_index = int(self.rng.integers(len(self.pool)))
        self.opp_net.load_state_dict(self.pool[self.opp_index])
        if getattr(self, "_actors", None) is not None:
            self._actors.publish(opp_net=self.opp_net)

    def _push(self, obs: np.ndarray, act: np.ndarray, tgt: np.ndarray,
              alt: Optional[np.ndarray] = None) -> None:
        if self._margin_on:
            self._q_alt.append(np.full((len(act), 2), -1, np.int64) if alt is None else alt)
        self._q_obs.append(obs)
        self._q_act.append(act)
        self._q_tgt.append(tgt)
        self._q_n += len(act)

    def _pop_batch(self, B: int):
        # one queued array (an actor's batch of exactly ``batch``) is used as it is, no copy,
        # unless it is read-only (Ray's object store): torch wants arrays it may write
        cat = _only_writable if len(self._q_obs) == 1 else np.concatenate
        obs, act, tgt = cat(self._q_obs), cat(self._q_act), cat(self._q_tgt)
        rest = len(act) > B  # an empty rest left queued would make the next pop concatenate
        self._q_obs, self._q_act, self._q_tgt = (([x[B:]] if rest else []) for x in (obs, act, tgt))
        self._q_n -= B
        return obs[:B], act[:B], tgt[:B]

    def _pop_alt(self, B: int) -> np.ndarray:
        alt = np.concatenate(self._q_alt)
        self._q_alt = [alt[B:]]
        return alt[:B]

    def _update(self) -> None:
        cfg, B = self.cfg, self.cfg.batch
        if self._margin_on or cfg.replay > 1:
            alt = self._pop_alt(B) if self._margin_on else np.full((B, 2), -1, np.int64)
            batch = (*self._pop_batch(B), alt)
            self._update_batch(*batch)
            if cfg.replay > 1:
                self._replay_add(*batch)
                for _ in range(cfg.replay - 1):
                    self._update_batch(*self._replay_sample(B))
            return
        obs, act, tgt = self._pop_batch(B)
        dev = self.device
        feats = torch.from_numpy(self.game.action_features(act)).to(dev)
        o = torch.from_numpy(obs).to(dev)
        t = torch.from_numpy(tgt).to(dev)
        with learner_autocast(dev, self.cfg.train_dtype):
            q = self.net(o, feats, torch.arange(len(act), device=dev)).float()
        loss = F.mse_loss(q, t)
        optimizer_step(self, loss, self.cfg.grad_clip)
        self._loss_sum += float(loss.detach())
        self._q_sum += float(q.detach().mean())
        self._loss_n += 1
        if self.counters["updates"] % self.cfg.refresh == 0:
            self._refresh_pool()

    def _replay_add(self, obs: np.ndarray, act: np.ndarray, tgt: np.ndarray, alt: np.ndarray) -> None:
        """Store a fresh batch in the replay ring buffer (observations as float16)."""
        cap, B = self.cfg.replay_size, len(act)
        if self._rb is None:
            self._rb = (np.zeros((cap, obs.shape[1]), np.float16), np.zeros(cap, np.int64),
                        np.zeros(cap, np.float32), np.full((cap, 2), -1, np.int64))
            self._rb_pos = self._rb_n = 0
        idx = (self._rb_pos + np.arange(B)) % cap
        for buf, x in zip(self._rb, (obs, act, tgt, alt)):
            buf[idx] = x
        self._rb_pos = int((self._rb_pos + B) % cap)
        self._rb_n = min(cap, self._rb_n + B)

    def _replay_sample(self, B: int):
        """A uniform batch (with replacement) from the replay buffer."""
        idx = self.rng.integers(self._rb_n, size=B)
        obs, act, tgt, alt = (buf[idx] for buf in self._rb)
        return obs.astype(np.float32), act, tgt, alt

    def _update_batch(self, obs: np.ndarray, act: np.ndarray, tgt: np.ndarray, alt: np.ndarray) -> None:
        """An update with the teacher's large-margin loss (as in DQfD) added to the MSE: for a
        sample whose action was the teacher's, ``relu(Q(s, b) + margin - Q(s, teacher))`` for
        its stored alternatives ``b`` (the network's greedy action when it differed, and one
        random other legal action), times ``teacher_margin_weight``.  An action the teacher
        did not take then scores below the teacher's unless the Monte-Carlo returns of the
        explored decisions say it is better, so the greedy policy leaves the teacher only
        where the data supports it."""
        cfg, dev, B = self.cfg, self.device, len(act)
        rows, cols = np.nonzero(alt >= 0)
        ids = np.concatenate([act, alt[rows, cols]])
        owner = np.concatenate([np.arange(B), rows])
        feats = torch.from_numpy(self.game.action_features(ids)).to(dev)
        with learner_autocast(dev, cfg.train_dtype):
            q_all = self.net(torch.from_numpy(obs).to(dev), feats,
                             torch.from_numpy(owner).to(dev)).float()
        q = q_all[:B]
        mse = F.mse_loss(q, torch.from_numpy(tgt).to(dev))
        loss = mse
        if len(rows):
            hinge = torch.relu(q_all[B:] + cfg.teacher_margin - q[torch.from_numpy(rows).to(dev)])
            loss = mse + cfg.teacher_margin_weight * hinge.mean()
            self._margin_sum += float(hinge.detach().mean())
        optimizer_step(self, loss, cfg.grad_clip)
        self._loss_sum += float(mse.detach())
        self._q_sum += float(q.detach().mean())
        self._loss_n += 1
        if self.counters["updates"] % cfg.refresh == 0:
            self._refresh_pool()
