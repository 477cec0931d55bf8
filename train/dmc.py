"""Deep Monte-Carlo (DouZero-style) self-play learner for every cardenvs game.

The learner fits ``Q(observation, action) ~ return of the acting seat`` with mean squared error
on Monte-Carlo targets, and plays epsilon-greedy on Q.  Nothing in this file knows a game: it
drives any :class:`cardenvs.core.game.Game` through its methods (``new_state``, ``reset``,
``legal``, ``step``, ``encode``, ``rewards``, ``done``, ``current``, ``action_features``).

* **Network**: an MLP over ``[observation of the seat to move, feature row of one action]``
  (:meth:`Game.action_features`).  Its first layer is applied split: the observation part once
  per position, the action part once per legal action (the same function as one linear layer
  over the concatenation, far cheaper when a position has hundreds of legal plays).
* **Self-play** (``--engine vector``, the default): ``--envs`` games on the self-play data
  engine :class:`train.selfplay.SelfPlay` (the batched numba engine ``VectorGame``; the
  observations, action features, exploration, per-seat returns and targets in numba): each
  step scores every game's legal actions in one batched forward pass per network (positions
  with one legal action are played without the network and not learned from).  With
  ``--actors K`` the self-play runs in ``K`` separate processes (:class:`train.selfplay.ActorPool`,
  shared-memory copies of the network refreshed at most every ``--sync-seconds``: 0.1 s,
  0 for after every update) and this process only learns; the run is then not
  bit-reproducible (the batches' order depends on timing).
  ``--backend ray`` runs the actors as Ray core actors instead (:mod:`train.ray_actors`: one
  machine or a cluster, ``--ray-address``).  ``--engine lockstep`` is the former path, kept as
  the comparison baseline: the games stepped one by one from Python
  (``Game.legal``/``step``/``encode`` per game).  ``--act-dtype bfloat16`` scores self-play's
  moves with the layers after the first in bfloat16 (:class:`FactoredScorer`; the learner's
  dtype is ``--train-dtype``): on CPUs with bfloat16 dot products (AVX512-BF16, AMX) the
  matmuls run about 3x as fast (``benchmarks/selfplay.md``); on others it is slower.
  ``--act-dtype int8`` scores them with integer matmuls (:mod:`train.quant`: int8 activations with a scale per
  scored action, int8 weights with a scale per output channel; CPU only): about twice
  bfloat16's matmul rate with AVX512-VNNI, scores within 3% of float32's spread (the most
  measured on shipped networks: 2.7%).  ``--train-dtype bfloat16`` runs the learner's
  forward under ``torch.autocast`` (the weights, Adam and the loss stay float32): an update
  took 7.8 ms instead of 16.4 on a CPU with AMX.  Adam is fused (``train.common.make_adam``).
* **Warm start** (``--init FILE``): the network starts from the weights of a ``train.dmc``
  weight file of the same shape (e.g. a shipped network-only agent) and trains with its
  reward scale; the exported file's ``train_minutes`` counts this run only.
* **Exploration**: epsilon-greedy with Ape-X-style rates per game slot
  (``eps ** (1 + eps_alpha * i / (envs - 1))``: from ``eps`` down to ``eps ** (1 + eps_alpha)``).
* **Targets**: the acting seat's return from its decision on (the sum of the rewards it is paid
  by that step and every later one, so a match paying each hand mid-episode is handled), times
  ``reward_scale`` (``auto``: one over the mean absolute return of random play).
* **Teacher mode** (``--teacher NAME``, any registered agent, e.g. ``rules``): every seat is
  played by the teacher agent, except that at each decision the acting seat takes a uniformly
  random legal action with probability ``--teacher-eps`` and (``--teacher-mix p``) the
  network's greedy action with probability ``p`` of the rest.  Every decision with 2+ legal
  actions is learned from with the same Monte-Carlo targets, so the network estimates ``Q`` of
  the (slightly randomised) teacher policy and its greedy policy is one step of policy
  improvement over the teacher.  The teacher phase lasts the whole run, or until
  ``--teacher-minutes`` of training time / ``--teacher-updates`` updates (counted over every
  session of the run); then the normal self-play / pool mode continues from the learned
  network.  ``--resume`` takes the teacher settings from the command line, so a run also
  switches mode by being resumed with other flags.  The teacher is called batched
  (``act_batch``) when its class vectorises it, else once per game.  Greedy-over-Q alone
  overrates the actions the teacher rarely takes (the teacher bids 3 only with strong hands,
  so "bid 3" looks good); ``--teacher-margin m`` adds the large-margin loss of DQfD on the
  teacher's decisions (``relu(Q(s, b) + m - Q(s, teacher))`` for the network's greedy action
  and one random other action ``b``, weighted by ``--teacher-margin-weight``), so the greedy
  policy keeps the teacher's action unless the returns of explored actions say otherwise.
* **Replay** (``--replay R``, off by default): each fresh batch is followed by ``R - 1``
  updates on batches drawn from a buffer of the latest ``--replay-size`` samples, for runs
  whose samples cost more than an update (teacher mode).
* **Opponent pool**: every ``--refresh`` updates a frozen snapshot of the network joins a pool
  (at most ``--pool-size``) and the active opponent is redrawn from it; a ``--pool-frac``
  share of the games seat the learner at one random seat and the active snapshot at the others
  (only the learner's decisions are learned from).  The other games are pure self-play.
* **Evaluation**: every ``--eval-minutes`` the greedy network plays ``--eval-deals`` deals
  against each agent of ``--eval-agents`` duplicate-style (each deal once per seat, the
  network at that seat, the agent at the others); the mean score and win rate with 95%
  confidence intervals go to ``eval.csv`` and ``eval.png``.
* **Output dir** (``--out``): ``checkpoint.pt`` (network, optimizer, pool, RNG states, counters,
  evaluation history; ``--resume`` continues from it; games in flight are not saved, the
  resumed run deals fresh ones), ``log.csv``, ``eval.csv``, ``eval.png``, TensorBoard events
  when ``tensorboard`` is installed, and ``GAME.npz``: the numpy weights of
  :mod:`agents.trained` (copy to ``agents/weights/GAME.npz`` to ship them).

* **Time and stopping**: ``--minutes`` is the wall-clock budget of the session, everything
  included (evaluations are played in chunks up to the deadline, and the loop stops early
  enough for the final one); SIGTERM or Ctrl-C ends the session with a checkpoint (exit status
  128 + the signal), as does the first update of a session; ``--resume`` drops the rows of
  ``log.csv`` / ``eval.csv`` logged after the checkpoint it continues from.

Run ``python -m train.dmc GAME --minutes 10 --out runs/GAME``; ``--help`` lists every option.
"""

from __future__ import annotations

import argparse
import copy
import math
import os
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Optional, Sequence

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from cardenvs.arena import agents_module, import_agents
from .common import (
    TRAIN_DTYPES, SessionBar, StopSignals, append_csv, check_common, check_train_dtype,
    eval_interval_s, evaluate_network, finish, game_dims, learner_autocast, load_checkpoint,
    load_optimizer_state, make_adam, optimizer_step, parse_hidden, parse_names, parse_scale,
    print_stopped, run_parser, run_session, save_atomic, torch_device, truncate_csv,
    write_config,
)
from .quant import padded_rows
from .selfplay import _as_numpy, check_sync_seconds

# the agents package beside this one: ``agents`` in a checkout, ``cardenvs.agents`` installed
_trained = agents_module("trained")
save_weights, segment_argmax = _trained.save_weights, _trained.segment_argmax

_SEED_MAX = 2**62


# ---------------------------------------------------------------------------------------------
# configuration
# ---------------------------------------------------------------------------------------------
#: how often the actors get the learner's weights at most (``--sync-seconds``), per backend:
#: local processes every 0.1 s (after every update, 81 a second, wakeng 3 min, 2 int8 actors,
#: bfloat16 learner: 14,258 updates; every 0.1 s: 17,423, the copy and the actors' new int8
#: weights no longer every step), Ray every second (a ``ray.put`` and a message per actor)
SYNC_SECONDS = {"process": 0.1, "ray": 1.0}

#: the values of ``Config.act_dtype`` / ``--act-dtype``: the dtype self-play scores in
ACT_DTYPES = ("float32", "bfloat16", "int8")


def act_dtype(name: str):
    """The torch dtype of an :data:`ACT_DTYPES` name (``ValueError`` for another); ``"int8"``
    is :class:`FactoredScorer`'s on a CPU only (:mod:`train.quant`)."""
    if name not in ACT_DTYPES:
        raise ValueError(f"act_dtype must be one of {', '.join(ACT_DTYPES)}, got {name!r}")
    return getattr(torch, name)


@dataclass
class Config:
    """Every setting of a run (stored in the checkpoint)."""

    game: str
    options: dict = field(default_factory=dict)
    out: str = "runs/dmc"
    minutes: float = 10.0
    seed: int = 0
    envs: int = 64
    hidden: tuple = (512, 256, 256, 128)
    lr: float = 3e-4
    batch: int = 512
    grad_clip: float = 10.0
    eps: float = 0.4
    eps_alpha: float = 7.0
    pool_size: int = 8
    pool_frac: float = 0.25
    refresh: int = 250
    reward_scale: Any = "auto"
    eval_agents: tuple = ("rules", "random")
    eval_deals: int = 100
    eval_minutes: Optional[float] = None
    log_seconds: float = 10.0
    ckpt_minutes: float = 5.0
    device: str = "auto"
    threads: int = 1
    max_updates: int = 0
    progress: bool = True
    teacher: Optional[str] = None
    teacher_eps: float = 0.1
    teacher_mix: float = 0.0
    teacher_minutes: Optional[float] = None
    teacher_updates: int = 0
    teacher_margin: float = 0.0
    teacher_margin_weight: float = 1.0
    replay: int = 1
    replay_size: int = 65536
    engine: str = "vector"
    actors: int = 0
    init: Optional[str] = None
    backend: str = "process"
    ray_address: Optional[str] = None
    act_dtype: str = "float32"
    train_dtype: str = "float32"
    sync_seconds: Optional[float] = None

    def eval_interval_s(self) -> float:
        return eval_interval_s(self.minutes, self.eval_minutes, 6.0)


def _check_config(cfg: Config) -> None:
    check_common(cfg)
    for name in ("envs", "batch", "pool_size", "refresh"):
        v = getattr(cfg, name)
        if not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be a positive int, got {v!r}")
    if not 0.0 <= cfg.eps <= 1.0 or not 0.0 <= cfg.pool_frac <= 1.0:
        raise ValueError("eps and pool_frac must lie in [0, 1]")
    if cfg.eps_alpha < 0:
        raise ValueError(f"eps_alpha must be >= 0, got {cfg.eps_alpha!r}")
    if cfg.minutes < 0 or cfg.lr <= 0 or cfg.eval_deals < 0:
        raise ValueError("minutes and eval_deals must be >= 0 and lr > 0")
    if cfg.teacher is not None and not isinstance(cfg.teacher, str):
        raise TypeError(f"teacher must be an agent name (str) or None, got {type(cfg.teacher).__name__}")
    if not 0.0 <= cfg.teacher_eps <= 1.0 or not 0.0 <= cfg.teacher_mix <= 1.0:
        raise ValueError(f"teacher_eps and teacher_mix must lie in [0, 1], got {cfg.teacher_eps!r}, "
                         f"{cfg.teacher_mix!r}")
    if cfg.teacher_minutes is not None and not cfg.teacher_minutes >= 0:
        raise ValueError(f"teacher_minutes must be >= 0 or None, got {cfg.teacher_minutes!r}")
    if not cfg.teacher_margin >= 0 or not cfg.teacher_margin_weight >= 0:
        raise ValueError(f"teacher_margin and teacher_margin_weight must be >= 0, got "
                         f"{cfg.teacher_margin!r}, {cfg.teacher_margin_weight!r}")
    if not isinstance(cfg.replay, int) or cfg.replay < 1:
        raise ValueError(f"replay must be an int >= 1, got {cfg.replay!r}")
    if cfg.replay > 1 and (not isinstance(cfg.replay_size, int) or cfg.replay_size < cfg.batch):
        raise ValueError(f"replay_size must be an int >= batch ({cfg.batch}), got {cfg.replay_size!r}")
    if cfg.engine not in ("vector", "lockstep"):
        raise ValueError(f"engine must be 'vector' or 'lockstep', got {cfg.engine!r}")
    if not isinstance(cfg.actors, int) or cfg.actors < 0:
        raise ValueError(f"actors must be an int >= 0, got {cfg.actors!r}")
    act_dtype(cfg.act_dtype)
    check_train_dtype(cfg.train_dtype)
    check_sync_seconds(cfg.sync_seconds, allow_none=True)
    if cfg.act_dtype != "float32" and cfg.engine != "vector":
        raise ValueError(f"act_dtype {cfg.act_dtype!r} needs the vector engine (--engine vector)")
    if cfg.backend not in ("process", "ray"):
        raise ValueError(f"backend must be 'process' or 'ray', got {cfg.backend!r}")
    if cfg.actors and cfg.engine != "vector":
        raise ValueError("actors need the vector engine (--engine vector)")
    if not isinstance(cfg.teacher_updates, int) or cfg.teacher_updates < 0:
        raise ValueError(f"teacher_updates must be an int >= 0, got {cfg.teacher_updates!r}")


# ---------------------------------------------------------------------------------------------
# the network
# ---------------------------------------------------------------------------------------------
class QNet(nn.Module):
    """MLP ``Q(obs, action features)``; the first layer is split into obs and action parts.

    ``forward(obs [n, O], feats [m, F], owner [m])`` scores ``m`` actions, action ``j`` in
    position ``owner[j]``.
    """

    def __init__(self, obs_dim: int, feat_dim: int, hidden: Sequence[int],
                 context: Optional[str] = None):
        super().__init__()
        context_dim = agents_module("context").context_dim

        self.obs_dim, self.feat_dim, self.hidden = int(obs_dim), int(feat_dim), tuple(int(h) for h in hidden)
        #: the context inputs (:mod:`agents.context`): their name and number (``None``, 0: none)
        self.context = context or None
        self.ctx_dim = context_dim(self.context)
        sizes = [self.obs_dim + self.feat_dim + self.ctx_dim, *self.hidden, 1]
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))

    def forward(self, obs: torch.Tensor, feats: torch.Tensor, owner: torch.Tensor,
                ctx: Optional[torch.Tensor] = None) -> torch.Tensor:
        """Scores ``[m]``; ``ctx [m, ctx_dim]``: the context inputs, for a network with them."""
        first = self.layers[0]
        D, DF = self.obs_dim, self.obs_dim + self.feat_dim
        h = F.linear(obs, first.weight[:, :D], first.bias)[owner]
        h = h + F.linear(feats, first.weight[:, D:DF])
        if self.ctx_dim:
            if ctx is None:
                raise ValueError(f"this network takes {self.ctx_dim} context inputs "
                                 f"({self.context!r}) per action: pass ctx")
            h = h + F.linear(ctx, first.weight[:, DF:])
        for layer in self.layers[1:]:
            h = layer(torch.relu(h))
        return h[:, 0]

    def numpy_layers(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """``(W [in, out], b)`` per layer, float32, for :func:`agents.trained.save_weights`."""
        return [(l.weight.detach().cpu().numpy().T.copy(), l.bias.detach().cpu().numpy().copy())
                for l in self.layers]

    def load_numpy(self, qn) -> None:
        """Copy the layers of an :class:`agents.trained.QNetwork` (a weight file read back)
        into this network, which must have its sizes: the inverse of :meth:`numpy_layers`.
        A file without context inputs fills a network with them, and one of a context that
        this network's extends (``"plan"`` for ``"plan_picks"``) fills its leading ones: the
        other context weights are set to zero."""
        layers = qn.layer_list()
        extra = self.ctx_dim - qn.ctx_dim
        if extra > 0:
            w0, b0 = layers[0]
            layers[0] = (np.concatenate([w0, np.zeros((extra, w0.shape[1]), w0.dtype)]), b0)
        with torch.no_grad():
            for m, (w, b) in zip(self.layers, layers):
                m.weight.copy_(torch.from_numpy(np.ascontiguousarray(w.T)))
                m.bias.copy_(torch.from_numpy(b))


class FactoredScorer:
    """Inference-only scoring with a :class:`QNet`: the outputs of ``net(obs, feats, owner)``
    (equal up to float rounding), for self-play and evaluation.

    * the first layer's observation part ``obs @ W_obs + b`` once per position, broadcast to
      its actions (as :meth:`QNet.forward`), over the observation's nonzero entries only
      (numba, :func:`agents.trained.first_layer`; 5-10% of the entries are nonzero); with
      ``keys`` (self-play passes each position's game and seat) from the key's previous
      part over the entries that changed (about a quarter of the nonzero ones), computed
      afresh every :attr:`MAX_AGE` positions and whenever the weights change;
    * with ``ids`` (the actions' ids), its action part ``features(id) @ W_act`` comes from a
      per-id cache (:class:`agents.trained.ActionRows`, rows of the ids met), computed once
      per id while the weights stay the same: the cache is emptied whenever the first
      layer's weight changes (an optimizer step, ``load_state_dict``: torch's version counter
      of that tensor), so the scores always follow the current weights;
    * ``torch.inference_mode``, fused bias (``addmm``) and in-place ReLU, one batched
      matmul per layer over every action of the call.

    On a GPU the first layer is the two matmuls of :meth:`QNet.forward` (no cache).  A network
    with context inputs (:attr:`QNet.ctx_dim`) needs ``context`` (``context(obs, ids, owner)
    -> [m, ctx_dim]``, :func:`agents.context.make_context`) and the ids at every call.

    Args:
        net: the network (its current weights are used at every call).
        features: ``features(ids) -> [k, feat_dim]`` float32 (``game.action_features``).
        n_actions: the game's action count.
        cache: keep the per-id cache (CPU only; otherwise the action part is ``feats @ W_act``).
        dtype: :data:`ACT_DTYPES`: the layers after the first in ``"float32"`` (the default),
            in ``"bfloat16"`` (weights cast at every call, so they follow the learner's):
            on a CPU with bfloat16 dot products (AVX512-BF16, AMX) about 3x the matmul rate
            (``benchmarks/selfplay.md``), scores within about 1% of float32's, slower where the
            CPU lacks them; or in ``"int8"`` (:class:`train.quant.Int8Body`: integer matmuls,
            about twice bfloat16's rate with AVX512-VNNI; CPU only).  For acting only: the
            learner trains in float32.
    """

    #: :meth:`train.selfplay.SelfPlay.step` passes the action ids
    takes_ids = True
    #: ... and each position's key (its game and seat): :func:`agents.trained.observation_part_cached`
    takes_keys = True
    #: differences in a row from a key's kept observation part before it is computed afresh
    MAX_AGE = 32
    #: position keys accepted (each keeps an observation and a part: 5.5 KB in Wakeng)
    MAX_KEYS = 1 << 16

    def __init__(self, net: QNet, features, n_actions: int, cache: bool = True,
                 dtype: str = "float32", context=None):
        self.dtype = act_dtype(dtype)
        self.body = None
        if self.dtype == torch.int8:
            if net.layers[0].weight.device.type != "cpu":
                raise ValueError(f"act_dtype 'int8' scores on the CPU; this network is on "
                                 f"{net.layers[0].weight.device}: use float32 or bfloat16")
            if len(net.layers) < 2:
                raise ValueError("act_dtype 'int8' needs a network with a hidden layer")
            from .quant import Int8Body

            self.body = Int8Body(net.layers[1:])
        if getattr(net, "ctx_dim", 0) and context is None:
            raise ValueError(f"the network takes the context {net.context!r}: give context=")
        self.net, self.features, self.context = net, features, context
        self.rows = _trained.ActionRows(n_actions, net.layers[0].out_features) if cache else None
        self._key: Optional[tuple] = None  # the first layer's weights the copies below are of
        self._w_obs = self._w_act_t = self._b = None
        # per position key: the last observation, its observation part, differences since a
        # fresh one (-1: none kept); emptied with the action rows when the weights change
        self._c_obs = np.zeros((0, net.obs_dim), np.float32)
        self._c_part = np.zeros((0, net.layers[0].out_features), np.float32)
        self._c_age = np.zeros(0, np.int64)

    def _refresh(self) -> None:
        """Empty the cache and copy the first layer anew when its weights changed."""
        first = self.net.layers[0]
        w = first.weight
        # torch bumps a tensor's version counter at every in-place change (optimizer steps,
        # load_state_dict, copy_); data_ptr tells a replaced tensor
        key = (w.data_ptr(), w._version, first.bias.data_ptr(), first.bias._version)
        if key != self._key:
            if self.rows is not None:
                self.rows.clear()
            D, DF = self.net.obs_dim, self.net.obs_dim + self.net.feat_dim
            self._w_obs = w[:, :D].detach().t().contiguous().numpy()  # [D, H]
            self._w_act_t = w[:, D:DF].detach().t()
            self._w_ctx_t = w[:, DF:].detach().t()
            self._b = first.bias.detach().numpy()
            self._c_age[:] = -1
            self._key = key

    def _observation_parts(self, obs: np.ndarray, keys) -> np.ndarray:
        """``obs @ W_obs + b`` per position from the parts kept per key (module
        :func:`agents.trained.observation_part_cached`); ``keys [n]`` ints in ``[0,
        MAX_KEYS)`` (a repeated key is updated again from the position before it)."""
        keys = np.ascontiguousarray(keys, np.int64)
        n = len(obs)
        if keys.shape != (n,):
            raise ValueError(f"{n} positions need {n} keys, got shape {keys.shape}")
        if n == 0:
            return np.zeros((0, len(self._b)), np.float32)
        lo, hi = int(keys.min()), int(keys.max())
        if lo < 0 or hi >= self.MAX_KEYS:
            raise ValueError(f"position keys must lie in [0, {self.MAX_KEYS}), got "
                             f"{lo if lo < 0 else hi} (one kept observation and part per key)")
        if hi >= len(self._c_age):
            size = max(hi + 1, 2 * len(self._c_age))
            c_obs = np.zeros((size, self._c_obs.shape[1]), np.float32)
            c_part = np.zeros((size, self._c_part.shape[1]), np.float32)
            c_age = np.full(size, -1, np.int64)
            old = len(self._c_age)
            c_obs[:old], c_part[:old], c_age[:old] = self._c_obs, self._c_part, self._c_age
            self._c_obs, self._c_part, self._c_age = c_obs, c_part, c_age
        out = np.empty((n, len(self._b)), np.float32)
        _trained.observation_part_cached(obs, self._w_obs, self._b, keys, self._c_obs, self._c_part,
                                         self._c_age, self.MAX_AGE, out)
        return out

    def __call__(self, obs, feats, owner, ids: Optional[np.ndarray] = None,
                 ctx: Optional[np.ndarray] = None, keys: Optional[np.ndarray] = None) -> torch.Tensor:
        """Scores ``[m]`` of the ``m`` actions (``feats [m, F]``, or ``ids [m]``; ``owner [m]`` =
        the row of ``obs [n, O]`` each belongs to), as :meth:`QNet.forward`; ``ctx [m,
        ctx_dim]``: the actions' context inputs when already computed (else computed here from
        the ids, for a network that takes them); ``keys [n]`` (CPU): an int per position
        naming whose it is (in self-play its game and seat): the observation part
        is then updated from that key's previous one over the inputs that changed (about a
        quarter of the nonzero ones), the same values up to float rounding."""
        net = self.net
        first, D = net.layers[0], net.obs_dim
        DF = D + net.feat_dim
        dev = first.weight.device
        if not getattr(net, "ctx_dim", 0):
            ctx = None
        elif ctx is None:
            if ids is None:
                raise ValueError("a network with context inputs is scored by action ids")
            ctx = self.context(_as_numpy(obs), np.asarray(ids), _as_numpy(owner))
        if ctx is not None:
            ctx = torch.from_numpy(np.ascontiguousarray(ctx, np.float32))
        with torch.inference_mode():
            if dev.type != "cpu":
                w = first.weight
                if feats is None:
                    feats = np.ascontiguousarray(self.features(np.asarray(ids)), np.float32)
                h = torch.as_tensor(feats, device=dev) @ w[:, D:DF].t()
                o = torch.as_tensor(obs, device=dev)
                h += torch.addmm(first.bias, o, w[:, :D].t()).index_select(0, torch.as_tensor(owner, device=dev))
                if ctx is not None:
                    h += ctx.to(dev) @ w[:, DF:].t()
            else:
                self._refresh()

                def compute(u):
                    f = torch.from_numpy(np.ascontiguousarray(self.features(u), np.float32))
                    return (f @ self._w_act_t).numpy()

                slots = None
                if ids is not None and self.rows is not None:
                    slots = self.rows.take(np.asarray(ids), compute)
                if slots is not None:
                    act = self.rows.rows
                elif ids is not None:
                    act = compute(np.asarray(ids))
                else:
                    act = (torch.as_tensor(feats) @ self._w_act_t).numpy()
                obs_np, owner_np = _as_numpy(obs), _as_numpy(owner)
                part = None
                if keys is not None:  # checked once here, before the kept parts are touched
                    obs_np, owner_np, act, slots = _trained.first_layer_inputs(
                        obs_np, self._w_obs, self._b, owner_np, act, slots)
                    part = self._observation_parts(obs_np, keys)
                if self.body is not None and ctx is None:  # int8: cut in the same pass
                    return torch.from_numpy(self.body.first_layer(
                        obs_np, self._w_obs, self._b, owner_np, act, slots, pos_buf=part))
                if part is None:
                    h = torch.from_numpy(_trained.factored_first_layer(
                        obs_np, self._w_obs, self._b, owner_np, act, slots))
                else:
                    h = torch.from_numpy(np.empty((len(owner_np), len(self._b)), np.float32))
                    _trained.broadcast_part(part, owner_np, act, slots, h.numpy())
                if ctx is not None:
                    h += ctx @ self._w_ctx_t
            if self.body is not None:
                return torch.from_numpy(self.body(h.numpy()))
            if self.dtype == torch.float32:
                for layer in net.layers[1:]:
                    h = torch.addmm(layer.bias, h.relu_(), layer.weight.t())
                return h[:, 0]
            dt, m = self.dtype, h.shape[0]
            # rows padded to a multiple of ROW_BLOCK: oneDNN's bfloat16 matmuls make a kernel per
            # row count (2.6 ms a new count, 0.3 ms a seen one, 1,000 x 512 x 256 on AMX)
            hb = torch.zeros((padded_rows(m), h.shape[1]), dtype=dt, device=h.device)
            hb[:m] = h.relu_()
            h = hb
            for i, layer in enumerate(net.layers[1:], 2):
                h = torch.addmm(layer.bias.to(dt), h, layer.weight.t().to(dt))
                if i < len(net.layers):
                    h = h.relu_()
            return h[:m, 0].float()


def export_weights(net: QNet, path: str, meta: dict, dtype=np.float16) -> None:
    """Write ``net`` as an :mod:`agents.trained` weight file."""
    if net.ctx_dim:
        meta = dict(meta, context=net.context)
    save_weights(path, net.numpy_layers(), net.obs_dim, meta, dtype=dtype, ctx_dim=net.ctx_dim)


class TorchPolicy:
    """Greedy (or epsilon-greedy) batched action choice with a :class:`QNet`; ``fast``: score
    with a :class:`FactoredScorer` (same scores up to float rounding), else ``net(...)``."""

    def __init__(self, game, net: QNet, device: torch.device, fast: bool = True):
        self.game, self.net, self.device = game, net, device
        #: the network's context inputs (:mod:`agents.context`), ``None`` without them
        self.context = None
        if getattr(net, "ctx_dim", 0):
            self.context = agents_module("context").make_context(net.context, game)
        self.scorer = (FactoredScorer(net, game.action_features, game.n_actions,
                                      context=self.context) if fast else None)

    @torch.no_grad()
    def scores(self, obs: np.ndarray, ids: np.ndarray, sizes: np.ndarray,
               ctx: Optional[np.ndarray] = None) -> np.ndarray:
        """Q of the concatenated legal ids ``ids`` of positions ``obs`` (``sizes`` per
        position); ``ctx``: their context inputs when already computed (else computed here for
        a network that takes them)."""
        dev = self.device
        owner = np.repeat(np.arange(len(sizes)), sizes)
        if self.scorer is not None and next(self.net.parameters()).device.type == "cpu":
            return _as_numpy(self.scorer(obs, None, owner, ids, ctx)).astype(np.float32, copy=False)
        if self.context is not None and ctx is None:
            ctx = self.context(obs, ids, owner)
        feats = torch.from_numpy(self.game.action_features(ids)).to(dev)
        c = None if ctx is None else torch.from_numpy(np.asarray(ctx, np.float32)).to(dev)
        q = self.net(torch.from_numpy(obs).to(dev), feats, torch.from_numpy(owner).to(dev), c)
        return q.float().cpu().numpy()

    def choose(self, obs: np.ndarray, ids: np.ndarray, sizes: np.ndarray,
               ctx: Optional[np.ndarray] = None) -> np.ndarray:
        """The argmax-Q action id of each position (``ctx`` as in :meth:`scores`)."""
        return ids[segment_argmax(self.scores(obs, ids, sizes, ctx), sizes)]


# ---------------------------------------------------------------------------------------------
# opponents for evaluation
# ---------------------------------------------------------------------------------------------
def make_eval_agent(name: str, game, seed: int):
    """An evaluation opponent from the agents registry (``agents.make_agent``), or ``None``
    (with the reason) when that agent is not available or cannot play ``game``."""
    agents = import_agents()
    try:
        reason = agents.unsupported(name, game)
        if reason is None:
            return agents.make_agent(name, game, seed=seed), None
    except ValueError as e:
        reason = str(e)
    return None, reason


def duplicate_returns(game, policy: TorchPolicy, agent, seeds: Sequence[int], *,
                      with_opponent: bool = False):
    """Returns ``[len(seeds), n]``: entry ``(d, s)`` is the network's return in deal ``d``
    playing seat ``s`` with ``agent`` at every other seat (all games stepped in lockstep; the
    agent's moves of one step go through one ``agent.act_batch`` call).

    With ``with_opponent``, a pair ``(network, opponent)`` of such arrays: ``opponent[d, s]``
    is the mean return of ``agent``'s seats in that same game, for the paired difference
    of :func:`summarize` (games whose scores do not sum to zero need it)."""
    n = game.n_players
    G = len(seeds) * n
    states = np.stack([game.new_state() for _ in range(G)])
    net_seat = np.tile(np.arange(n), len(seeds))
    for i, sd in enumerate(np.repeat(np.asarray(seeds, np.int64), n)):
        game.reset(states[i], int(sd))
    ret = np.zeros((G, n))
    live = [g for g in range(G) if not game.done(states[g])]
    buf = np.empty(game.n_actions, np.int64)
    obs = np.zeros((G, game.layout.size), np.float32)
    while live:
        net_g, net_ids, net_sizes, opp_g, opp_ids = [], [], [], [], []
        moves = {}
        for g in live:
            s = states[g]
            k = game.legal(s, buf)
            c = game.current(s)
            if k == 1:
                moves[g] = int(buf[0])
                continue
            game.encode(s, c, obs[g])
            if c == net_seat[g]:
                net_g.append(g)
                net_ids.append(buf[:k].copy())
                net_sizes.append(k)
            else:
                opp_g.append(g)
                opp_ids.append(buf[:k].copy())
        if net_g:
            chosen = policy.choose(obs[net_g], np.concatenate(net_ids), np.array(net_sizes))
            moves.update(zip(net_g, chosen.tolist()))
        if opp_g:
            masks = np.zeros((len(opp_g), game.n_actions), np.int8)
            for j, ids in enumerate(opp_ids):
                masks[j, ids] = 1
            chosen = agent.act_batch(obs[opp_g], masks)
            for j, g in enumerate(opp_g):
                a = int(chosen[j])
                if not masks[j, a]:
                    raise RuntimeError(f"evaluation agent {agent!r} chose the illegal action {a}")
                moves[g] = a
        still = []
        for g in live:
            s = states[g]
            game.step(s, moves[g])
            ret[g] += game.rewards(s)
            if not game.done(s):
                still.append(g)
        live = still
    own = ret[np.arange(G), net_seat]
    net = own.reshape(len(seeds), n)
    if not with_opponent:
        return net
    return net, ((ret.sum(axis=1) - own) / (n - 1)).reshape(len(seeds), n)


def summarize(returns: np.ndarray, opponent: Optional[np.ndarray] = None) -> dict:
    """Mean score and win rate per deal (averaged over seats) with 95% CIs (normal approx.).

    With ``opponent`` (the opponent's mean return in the same games, as
    ``duplicate_returns(..., with_opponent=True)`` gives it) also ``diff`` and ``diff_ci``:
    the paired difference per deal, network minus opponent, as the arena's pairwise line
    computes it over these lineups (one network seat, the opponent at the others)."""
    per_deal = returns.mean(axis=1)
    wins = (returns > 0).mean(axis=1)
    D = len(per_deal)

    def ci(x):
        return float(1.96 * x.std(ddof=1) / math.sqrt(D)) if D > 1 else float("nan")

    row = {"deals": D, "score": float(per_deal.mean()), "score_ci": ci(per_deal),
           "win_rate": float(wins.mean()), "win_ci": ci(wins)}
    if opponent is not None:
        if opponent.shape != returns.shape:
            raise ValueError(f"opponent returns of shape {opponent.shape} do not match the "
                             f"network's {returns.shape}")
        diff = per_deal - opponent.mean(axis=1)
        row.update(diff=float(diff.mean()), diff_ci=ci(diff))
    return row


def evaluate_against(game, policy: TorchPolicy, names: Sequence[str], seeds: np.ndarray, *,
                     seed: int, chunk: int, deadline: Optional[float] = None,
                     skipped: Optional[set] = None, tag: str = "dmc") -> list[dict]:
    """``policy`` against each agent of ``names`` over the duplicate deals ``seeds``: one
    :func:`summarize` row per agent with its ``opponent`` name (``diff``: the paired
    difference per deal, network minus that agent).

    The deals are played in chunks of ``chunk``, and an agent's evaluation stops at the first
    chunk boundary past ``deadline`` (a ``time.perf_counter()`` value; no row when not one
    chunk fitted).  An agent that cannot play the game is left out with a line on stderr (once
    per name when a ``skipped`` set is given: the names already reported)."""
    rows = []
    for name in names:
        agent, reason = make_eval_agent(name, game, seed=seed)
        if agent is None:
            if skipped is None or name not in skipped:
                print(f"[{tag}] evaluation against {name!r} skipped: {reason}", file=sys.stderr)
                if skipped is not None:
                    skipped.add(name)
            continue
        parts = []
        for i in range(0, len(seeds), chunk):
            if deadline is not None and time.perf_counter() >= deadline:
                break
            parts.append(duplicate_returns(game, policy, agent, seeds[i:i + chunk],
                                           with_opponent=True))
        if parts:
            net, opp = (np.concatenate(x) for x in zip(*parts))
            rows.append({**summarize(net, opp), "opponent": name})
    return rows


# ---------------------------------------------------------------------------------------------
# the learner
# ---------------------------------------------------------------------------------------------
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


def exploration_rates(eps: float, alpha: float, n: int) -> np.ndarray:
    """Ape-X-style exploration rates of ``n`` game slots: slot ``i`` explores with
    ``eps ** (1 + alpha * i / (n - 1))`` (a few games explore a lot, most barely), so that
    decisions a greedy policy stops trying (e.g. bidding, when every seat passing is worth
    0) keep being played out."""
    if n == 1 or alpha == 0:
        return np.full(n, eps)
    return eps ** (1.0 + alpha * np.arange(n) / (n - 1))


def _only_writable(q: list) -> np.ndarray:
    """The one array of ``q``, copied only when it is read-only."""
    return q[0] if q[0].flags.writeable else q[0].copy()


class DMC:
    """One training run (see the module docstring); :meth:`run` trains for the time budget."""

    def __init__(self, cfg: Config, resume: bool = False):
        from cardenvs.api import make_game

        if resume:
            ckpt = load_checkpoint(cfg.out, cfg.game, cfg.options)
            # the network's shape comes from the checkpoint
            cfg.hidden = tuple(ckpt["config"]["hidden"])
        else:
            ckpt = None
        _check_config(cfg)
        self.cfg = cfg
        self.game = make_game(cfg.game, **cfg.options)
        g = self.game
        self.device = torch_device(cfg.device, cfg.threads)
        self.rng = np.random.default_rng(cfg.seed)
        torch.manual_seed(cfg.seed)
        self.obs_dim, self.feat_dim = game_dims(g)
        self.net = QNet(self.obs_dim, self.feat_dim, cfg.hidden).to(self.device)
        self.opp_net = copy.deepcopy(self.net).eval()
        self.opt = make_adam(self.net.parameters(), cfg.lr)
        self.pool: list[dict] = []
        self.opp_index = -1
        self.counters = {"decisions": 0, "samples": 0, "games": 0, "updates": 0, "train_s": 0.0,
                         "teacher_decisions": 0}
        self.eval_history: list[dict] = []
        self._eval_skipped: set = set()  # evaluation agents reported as unable to play
        self.teacher = None
        if cfg.teacher is not None:
            self.teacher, reason = make_eval_agent(cfg.teacher, g, seed=cfg.seed + 31)
            if self.teacher is None:
                raise ValueError(f"teacher {cfg.teacher!r} cannot be used: {reason}")
        self._eval_s = 0.0  # seconds of the latest evaluation (reserved at the end of a run)
        if ckpt is not None:
            self._load(ckpt)
            # rows logged after the checkpoint describe work this run discards
            for name in ("log.csv", "eval.csv"):
                truncate_csv(os.path.join(cfg.out, name), "decisions", self.counters["decisions"])
        elif cfg.init is not None:
            self.scale = self._load_init(cfg.init)
        else:
            self.scale = (random_return_scale(g, self.rng) if cfg.reward_scale == "auto"
                          else float(cfg.reward_scale))
        self.policy = TorchPolicy(g, self.net, self.device)
        self.opp_policy = TorchPolicy(g, self.opp_net, self.device)
        # training queue: lists of finished samples
        self._q_obs: list[np.ndarray] = []
        self._q_act: list[np.ndarray] = []
        self._q_tgt: list[np.ndarray] = []
        self._q_alt: list[np.ndarray] = []  # teacher margin: 2 alternative actions per sample
        self._margin_on = cfg.teacher is not None and cfg.teacher_margin > 0
        self._rb = None  # replay buffer (--replay > 1; not checkpointed, refilled on resume)
        self._q_n = 0
        self._loss_sum, self._loss_n, self._q_sum = 0.0, 0, 0.0
        self._teacher_s, self._teaching, self._margin_sum = 0.0, False, 0.0
        self._tb = None
        self._stop: Optional[StopSignals] = None
        self._engine = self._actors = None

    # -- checkpoints ---------------------------------------------------------------------------
    def _load_init(self, path: str) -> float:
        """Warm start (``--init``): the network's weights from an :mod:`agents.trained` file of
        the same shape; returns the reward scale to train with (the file's, unless
        ``--reward-scale`` is a number).  A file with a ``prior`` (a rules override network)
        is refused: its scores are advantages over the prior, not Q values."""
        net = _trained.QNetwork(path)
        reason = _trained._mismatch(net, self.game)
        if reason is not None:
            raise ValueError(f"--init {path!r}: {reason}")
        if net.meta.get("prior"):
            raise ValueError(f"--init {path!r}: the file overrides the {net.meta['prior']!r} agent "
                             f"(its scores are advantages over it, not Q values)")
        if net.ctx_dim:
            raise ValueError(f"--init {path!r}: the network takes the context {net.context!r} "
                             f"(agents/context.py), which train.dmc's self-play does not compute")
        if list(net.meta.get("hidden", [])) != list(self.cfg.hidden):
            raise ValueError(f"--init {path!r}: hidden sizes {net.meta.get('hidden')} differ from "
                             f"--hidden {list(self.cfg.hidden)}")
        self.net.load_numpy(net)
        self.opp_net.load_state_dict(self.net.state_dict())
        if self.cfg.reward_scale != "auto":
            return float(self.cfg.reward_scale)
        return float(net.meta.get("reward_scale", 1.0))

    def _load(self, ckpt: dict) -> None:
        self.net.load_state_dict(ckpt["net"])
        load_optimizer_state(self.opt, ckpt["optimizer"])
        self.pool = [{k: v.to(self.device) for k, v in sd.items()} for sd in ckpt["pool"]]
        self.opp_index = ckpt["opp_index"]
        if self.opp_index >= 0:
            self.opp_net.load_state_dict(self.pool[self.opp_index])
        self.rng.bit_generator.state = ckpt["np_rng"]
        torch.set_rng_state(ckpt["torch_rng"])
        self.counters = {"teacher_decisions": 0, **ckpt["counters"]}
        rng_state = ckpt.get("teacher_rng")
        if rng_state is not None and isinstance(getattr(self.teacher, "rng", None), np.random.Generator):
            self.teacher.rng.bit_generator.state = rng_state
        self.eval_history = list(ckpt["eval_history"])
        self.scale = float(ckpt["reward_scale"])
        self._eval_s = float(ckpt.get("eval_s", 0.0))

    def save_checkpoint(self) -> str:
        """Write ``checkpoint.pt`` atomically; returns its path."""
        os.makedirs(self.cfg.out, exist_ok=True)
        path = os.path.join(self.cfg.out, "checkpoint.pt")
        ckpt = {
            "config": asdict(self.cfg), "net": self.net.state_dict(), "optimizer": self.opt.state_dict(),
            "pool": [{k: v.cpu() for k, v in sd.items()} for sd in self.pool],
            "opp_index": self.opp_index, "np_rng": self.rng.bit_generator.state,
            "torch_rng": torch.get_rng_state(), "counters": dict(self.counters),
            "eval_history": list(self.eval_history), "reward_scale": self.scale,
            "eval_s": self._eval_s,
        }
        trng = getattr(self.teacher, "rng", None)
        if isinstance(trng, np.random.Generator):
            ckpt["teacher_rng"] = trng.bit_generator.state
        return save_atomic(ckpt, path)

    def meta(self) -> dict:
        """Metadata stored in the exported weights."""
        return {"game": self.cfg.game, "options": self.cfg.options, "reward_scale": self.scale,
                "trainer": "dmc", "mode": "network", "decisions": self.counters["decisions"],
                "updates": self.counters["updates"], "train_minutes": round(self.counters["train_s"] / 60, 2),
                "seed": self.cfg.seed, "teacher": self.cfg.teacher, "init": self.cfg.init,
                "teacher_decisions": self.counters["teacher_decisions"]}

    def export(self, path: Optional[str] = None, dtype=np.float16) -> str:
        path = path or os.path.join(self.cfg.out, f"{self.cfg.game}.npz")
        export_weights(self.net, path, self.meta(), dtype=dtype)
        return path

    # -- opponent pool -------------------------------------------------------------------------
    def _refresh_pool(self) -> None:
        self.pool.append({k: v.detach().clone() for k, v in self.net.state_dict().items()})
        if len(self.pool) > self.cfg.pool_size:
            self.pool.pop(0)
        self.opp_index = int(self.rng.integers(len(self.pool)))
        self.opp_net.load_state_dict(self.pool[self.opp_index])
        if getattr(self, "_actors", None) is not None:
            self._actors.publish(opp_net=self.opp_net)

    # -- learning ------------------------------------------------------------------------------
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

    # -- self-play -----------------------------------------------------------------------------
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

    # -- evaluation ----------------------------------------------------------------------------
    def evaluate(self, deadline: Optional[float] = None) -> list[dict]:
        """Play the evaluation deals against each ``--eval-agents`` agent; record and return.

        With a ``deadline`` (a ``time.perf_counter()`` value) the deals are played in chunks
        and the evaluation stops at the first chunk boundary past it (each row says how many
        deals it has; none when not one chunk fitted).  A stop signal during it discards the
        evaluation (returns ``[]``)."""
        n = self.cfg.eval_deals
        rows = evaluate_network(self, deadline, n if deadline is None else max(1, min(25, n // 4)),
                                ("decisions", "updates"), self.cfg.game, skipped=self._eval_skipped)
        if self._tb is not None:
            for r in rows:
                self._tb.add_scalar(f"eval/score_vs_{r['opponent']}", r["score"], self.counters["decisions"])
                self._tb.add_scalar(f"eval/diff_vs_{r['opponent']}", r["diff"], self.counters["decisions"])
        return rows

    # -- main loop -----------------------------------------------------------------------------
    def run(self) -> dict:
        """Train within ``cfg.minutes`` of wall-clock time for this session, everything
        included: the first evaluation, training (with periodic evaluations and checkpoints),
        and the final evaluation, checkpoint and export (the training loop stops early enough
        for the final evaluation, timed by the latest one, to fit).

        SIGTERM / SIGINT end the session cleanly: the current step finishes (an evaluation in
        progress is dropped), then the checkpoint and the weights are written and ``run``
        returns with ``"stopped"`` set to the signal's name; ``--resume`` continues from there.
        A checkpoint is also written right after the session's first update, so a run killed
        outright (SIGKILL) loses at most the minutes since its latest checkpoint.
        """
        return run_session(self, cleanup=self._stop_engine)

    def _run(self, stop: StopSignals) -> dict:
        cfg = self.cfg
        t_start = time.perf_counter()
        deadline = t_start + 60.0 * cfg.minutes
        write_config(cfg)
        self._tb = _tensorboard(cfg.out)
        budget = 60.0 * cfg.minutes
        self._start_selfplay()
        if not self.eval_history:  # at most a quarter of the budget
            self._print_eval(self.evaluate(deadline=t_start + 0.25 * budget))
        evaluated_at = self.counters["updates"]
        t0 = time.perf_counter()
        base_s = self.counters["train_s"]
        updates0 = self.counters["updates"]
        saved = False
        last_log = last_eval = last_ckpt = t0
        log_dec, log_t = self.counters["decisions"], t0
        self._log_t, self._teacher_s = t0, 0.0
        bar = SessionBar(cfg.progress, budget, f"dmc {cfg.game}", t_start)
        while stop.signum is None:
            now = time.perf_counter()
            self.counters["train_s"] = base_s + (now - t0)
            # what the end of the session needs: the final evaluation and the files
            reserve = 1.2 * self._eval_s + 1.0
            if now >= deadline - reserve or (cfg.max_updates and self.counters["updates"] >= cfg.max_updates):
                break
            self.step()
            updated = False
            # one step can fill several batches; max_updates is an exact bound
            while self._q_n >= cfg.batch and not (cfg.max_updates and self.counters["updates"] >= cfg.max_updates):
                self._update()
                updated = True
            if updated and self._actors is not None:
                self._actors.publish(net=self.net)
            if not saved and self.counters["updates"] > updates0:
                # the first learning step of the session: from now on there is work to lose
                self.save_checkpoint()
                saved, last_ckpt = True, time.perf_counter()
            if now - last_log >= cfg.log_seconds:
                rate = (self.counters["decisions"] - log_dec) / max(now - log_t, 1e-9)
                row = self._log_row(rate)
                log_dec, log_t, last_log = self.counters["decisions"], now, now
                bar.postfix(dec_s=f"{rate:.0f}", loss=f"{row['loss']:.4f}", upd=row["updates"])
            bar.tick()
            # a periodic evaluation only when the final one still fits after it
            if (now - last_eval >= cfg.eval_interval_s()
                    and time.perf_counter() + 2 * reserve < deadline):
                self._print_eval(self.evaluate(deadline=deadline - reserve))
                last_eval, evaluated_at = time.perf_counter(), self.counters["updates"]
            if now - last_ckpt >= 60.0 * cfg.ckpt_minutes:
                self.save_checkpoint()
                last_ckpt = time.perf_counter()
        bar.close()
        self.counters["train_s"] = base_s + (time.perf_counter() - t0)
        elapsed = time.perf_counter() - t0
        rate = (self.counters["decisions"] - log_dec) / max(time.perf_counter() - log_t, 1e-9)
        self._log_row(rate)
        final = []  # the network after its last update, unless that was evaluated already
        if stop.signum is None and self.counters["updates"] != evaluated_at:
            final = self.evaluate(deadline=deadline - 1.0)
        self._print_eval(final)
        ckpt = self.save_checkpoint()
        weights = self.export()
        if self._tb is not None:
            self._tb.close()
        if stop.signum is not None:
            print_stopped("dmc", stop, f"{self.counters['updates']} updates",
                          f"checkpoint {ckpt}, weights {weights}")
        return {"checkpoint": ckpt, "weights": weights, "eval": final, "session_s": elapsed,
                "stopped": stop.name, **self.counters}

    def _log_row(self, rate: float) -> dict:
        now = time.perf_counter()
        span = now - getattr(self, "_log_t", now)
        teacher_frac = self._teacher_s / span if span > 0 else 0.0
        self._log_t, self._teacher_s = now, 0.0
        n = max(self._loss_n, 1)
        row = {"train_s": round(self.counters["train_s"], 1), **{k: v for k, v in self.counters.items()
                                                                 if k != "train_s"},
               "dec_per_s": round(rate, 1), "loss": self._loss_sum / n if self._loss_n else float("nan"),
               "q_mean": self._q_sum / n if self._loss_n else float("nan"),
               "pool": len(self.pool), "opponent": self.opp_index,
               "mode": "teacher" if self._teaching else "selfplay", "teacher_frac": round(teacher_frac, 3),
               "margin_loss": self._margin_sum / n if self._loss_n else float("nan")}
        self._margin_sum = 0.0
        self._loss_sum, self._loss_n, self._q_sum = 0.0, 0, 0.0
        append_csv(os.path.join(self.cfg.out, "log.csv"), [row])
        if self._tb is not None:
            for k in ("loss", "q_mean", "dec_per_s", "teacher_frac"):
                if not math.isnan(row[k]):
                    self._tb.add_scalar(f"train/{k}", row[k], self.counters["decisions"])
        return row

    def _print_eval(self, rows: list[dict]) -> None:
        for r in rows:
            msg = (f"[dmc] eval vs {r['opponent']} after {r['train_s'] / 60:.1f} min: score "
                   f"{r['score']:+.3f} ± {r['score_ci']:.3f}, difference {r['diff']:+.3f} ± "
                   f"{r['diff_ci']:.3f}, win rate {r['win_rate']:.3f} ± {r['win_ci']:.3f}")
            print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# files
# ---------------------------------------------------------------------------------------------
def _tensorboard(out: str):
    try:
        from torch.utils.tensorboard import SummaryWriter
    except Exception:  # tensorboard not installed: CSV only
        return None
    return SummaryWriter(os.path.join(out, "tb"))


# ---------------------------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    d = Config(game="")
    p = run_parser("dmc", __doc__, d.minutes, d.seed,
                   covers="the first and final evaluations, training with its periodic "
                          "evaluations and checkpoints, the final checkpoint and export")
    p.add_argument("--envs", type=int, default=d.envs, help="games stepped in lockstep")
    p.add_argument("--hidden", default=",".join(map(str, d.hidden)), help="hidden layer sizes")
    p.add_argument("--lr", type=float, default=d.lr)
    p.add_argument("--batch", type=int, default=d.batch)
    p.add_argument("--eps", type=float, default=d.eps,
                   help="exploration: game slot i of N explores with eps^(1 + alpha i/(N-1))")
    p.add_argument("--eps-alpha", type=float, default=d.eps_alpha,
                   help="spread of the per-slot exploration rates (0: every slot uses --eps)")
    p.add_argument("--pool-size", type=int, default=d.pool_size)
    p.add_argument("--pool-frac", type=float, default=d.pool_frac, help="share of games vs a snapshot")
    p.add_argument("--refresh", type=int, default=d.refresh, help="updates between pool snapshots")
    p.add_argument("--reward-scale", default="auto")
    p.add_argument("--eval-agents", default=",".join(d.eval_agents))
    p.add_argument("--eval-deals", type=int, default=d.eval_deals)
    p.add_argument("--eval-minutes", type=float, default=None, help="default: budget/6 in [0.5, 15]")
    p.add_argument("--ckpt-minutes", type=float, default=d.ckpt_minutes)
    p.add_argument("--log-seconds", type=float, default=d.log_seconds, help="seconds between log rows")
    p.add_argument("--device", default=d.device, help="auto (CUDA when present), cpu, cuda")
    p.add_argument("--threads", type=int, default=d.threads,
                   help="torch threads (0: torch's default; 1 is fastest on a shared 2-core machine)")
    p.add_argument("--max-updates", type=int, default=0, help="stop after this many updates (0: none)")
    p.add_argument("--teacher", default=None,
                   help="behaviour policy at every seat: this registered agent (e.g. rules); "
                        "'none' for self-play")
    p.add_argument("--teacher-eps", type=float, default=d.teacher_eps,
                   help="teacher mode: chance of a uniformly random legal action at a decision")
    p.add_argument("--teacher-mix", type=float, default=d.teacher_mix,
                   help="teacher mode: chance (of the non-random decisions) of the network's greedy action")
    p.add_argument("--teacher-minutes", type=float, default=None,
                   help="teacher mode for the first M training minutes of the run, then self-play")
    p.add_argument("--teacher-updates", type=int, default=0,
                   help="teacher mode for the first U updates of the run, then self-play (0: no limit)")
    p.add_argument("--teacher-margin", type=float, default=d.teacher_margin,
                   help="teacher mode: large-margin loss (DQfD) keeping the teacher's action this much "
                        "above the alternatives unless the returns say otherwise (0: off)")
    p.add_argument("--teacher-margin-weight", type=float, default=d.teacher_margin_weight,
                   help="weight of the large-margin loss")
    p.add_argument("--replay", type=int, default=d.replay,
                   help="updates per fresh batch: R > 1 adds R-1 updates on batches drawn from a "
                        "replay buffer of the latest samples (for costly samples, e.g. teacher mode)")
    p.add_argument("--replay-size", type=int, default=d.replay_size, help="replay buffer size (samples)")
    p.add_argument("--engine", default=d.engine, choices=("vector", "lockstep"),
                   help="self-play on the data engine (train.selfplay, default) or the former "
                        "per-game Python loop (the comparison baseline)")
    p.add_argument("--act-dtype", default=d.act_dtype, choices=ACT_DTYPES,
                   help="dtype self-play scores in: float32, or bfloat16 for the layers after "
                        "the first (about 3x the matmul rate on CPUs with AVX512-BF16 or AMX, "
                        "slower on others), or int8 (integer matmuls, train.quant: about 2x "
                        "bfloat16's rate with AVX512-VNNI; CPU only); the learner: --train-dtype")
    p.add_argument("--train-dtype", default=d.train_dtype, choices=TRAIN_DTYPES,
                   help="the learner's forward matmuls: float32, or bfloat16 (torch.autocast; the "
                        "weights, Adam and the loss stay float32): about 2x the update rate on "
                        "CPUs with AMX or AVX512-BF16, slower on others")
    p.add_argument("--actors", type=int, default=d.actors,
                   help="self-play in this many separate processes (0: in this process)")
    p.add_argument("--sync-seconds", type=float, default=d.sync_seconds,
                   help="the actors get the learner's weights at most every this many seconds "
                        "(0: after every update; default: 0.1 with --backend process, 1 with ray)")
    p.add_argument("--backend", default=d.backend, choices=("process", "ray"),
                   help="where the --actors run: local processes, or Ray actors (train.ray_actors: "
                        "one machine or a cluster)")
    p.add_argument("--ray-address", default=None,
                   help="with --backend ray: the cluster to join (e.g. auto after `ray start`); "
                        "default: a local Ray instance")
    p.add_argument("--init", default=None, metavar="NPZ",
                   help="warm start: the network's weights (and reward scale) from a weight file "
                        "of train.dmc (e.g. agents/weights/wakeng.npz)")
    p.add_argument("--export", default=None, help="also write the final weights here")
    p.add_argument("--no-progress", action="store_true")
    return p


def config_from_args(a: argparse.Namespace) -> Config:
    return Config(
        game=a.game, options=dict(a.option), out=a.out or os.path.join("runs", f"dmc_{a.game}"),
        minutes=a.minutes, seed=a.seed, envs=a.envs,
        hidden=parse_hidden(a.hidden), lr=a.lr, batch=a.batch,
        eps=a.eps, eps_alpha=a.eps_alpha, pool_size=a.pool_size, pool_frac=a.pool_frac, refresh=a.refresh,
        reward_scale=parse_scale(a.reward_scale), eval_agents=parse_names(a.eval_agents),
        eval_deals=a.eval_deals, eval_minutes=a.eval_minutes, ckpt_minutes=a.ckpt_minutes, log_seconds=a.log_seconds,
        device=a.device, threads=a.threads, max_updates=a.max_updates, progress=not a.no_progress,
        teacher=None if a.teacher in (None, "", "none") else a.teacher, teacher_eps=a.teacher_eps,
        teacher_mix=a.teacher_mix, teacher_minutes=a.teacher_minutes, teacher_updates=a.teacher_updates,
        teacher_margin=a.teacher_margin, teacher_margin_weight=a.teacher_margin_weight,
        replay=a.replay, replay_size=a.replay_size, engine=a.engine, actors=a.actors, init=a.init,
        backend=a.backend, ray_address=a.ray_address, act_dtype=a.act_dtype,
        train_dtype=a.train_dtype, sync_seconds=a.sync_seconds)


def main(argv: Optional[Sequence[str]] = None) -> int:
    a = build_parser().parse_args(argv)
    try:
        cfg = config_from_args(a)
        trainer = DMC(cfg, resume=a.resume)
    except (ValueError, TypeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    res = trainer.run()
    if a.export:
        trainer.export(a.export)
    return finish(res, "eval")


if __name__ == "__main__":
    sys.exit(main())
