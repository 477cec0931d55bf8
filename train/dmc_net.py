"""The Q network of :mod:`train.dmc` and how it scores: :class:`QNet` (the trained module),
:class:`FactoredScorer` (inference-only scoring for self-play and evaluation),
:class:`TorchPolicy` (greedy batched action choice) and :func:`export_weights` (the numpy
weight file of :mod:`agents.trained`)."""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from cardenvs.arena import agents_module
from .dmc_config import act_dtype
from .quant import padded_rows
from .selfplay import _as_numpy

# the agents package beside this one: ``agents`` in a checkout, ``cardenvs.agents`` installed
_trained = agents_module("trained")
save_weights, segment_argmax = _trained.save_weights, _trained.segment_argmax


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

