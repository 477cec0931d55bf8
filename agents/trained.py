"""The ``trained`` agent: a Q network over (state, action) pairs, run in numpy only.

The network is the one the Deep Monte-Carlo learner (``train/dmc.py``) and the distiller
(``train/distill.py``, ``cardenvs train``) train: an MLP scoring the pair (observation of the seat to
move, feature row of one legal action) with the seat's expected return.  The agent plays the
legal action of highest score at every decision (bids, digs, burying, the exchange, joker
picks, 报牌, card play), with no rules fallback; ``trained:PATH`` loads another weight file.
Playing needs numpy and the shipped weight file only (no torch import anywhere in this
module).

Weight file format (``.npz``, written by :func:`save_weights`, read by :func:`load_weights`):

* ``w_obs`` ``[obs_dim, h0]``, ``w_act`` ``[feat_dim, h0]``, ``b_0`` ``[h0]``: the first layer,
  split into its observation and action parts (``h0 = obs @ w_obs + feat @ w_act + b_0``, the
  same as one linear layer over the concatenation, but the observation part is computed once
  per position instead of once per legal action);
* ``w_1, b_1, ..., w_L, b_L``: the following layers (ReLU between layers, none after the last;
  ``w_L`` has one output column, the score);
* optional ``w_ctx`` ``[ctx_dim, h0]``: the first layer's rows of the *context* inputs, values
  that depend on the position and the action together (``meta["context"]`` names them, an
  entry of :data:`agents.context.CONTEXTS`, e.g. ``"plan"``: the hand planner's cost of what
  each play leaves); ``h0`` then adds ``ctx @ w_ctx``, computed per (position, action) pair;
* ``meta``: UTF-8 JSON (as ``uint8``): ``game``, ``options``, ``obs_dim``, ``feat_dim``, ``ctx_dim``,
  ``hidden``, ``reward_scale`` (scores are returns times this), ``format`` (= 1) and training
  notes.  Arrays may be stored as float16; they are computed in float32.  A file whose
  ``meta`` names a ``prior`` agent (an override file of an earlier version: a network scoring
  deviations from that agent's moves) is refused.

Inference: the observation part of the first layer is computed once per position over the
observation's nonzero entries (:func:`first_layer`, numba), the action part once per action id
(:class:`ActionRows`, the ids met so far; the agent's weights never change), then the other
layers on every legal action in one matmul each.  ``train.dmc.FactoredScorer`` does the same
in torch during training (its cache follows the changing weights).

Weights for game ``G`` (default options) ship as ``agents/weights/G_network.npz``
(network-only), the file the game's registry record names (``GameSpec.trained_weights``;
``agents/weights/G.npz`` for a game that names none).  The network-only files
of 3- and 4-player Dou Dizhu, Pao De Kuai, Lanxi Wulong and Da Niangniang take the ``"plan"``
context inputs, Wakeng's the ``"plan_picks"`` ones (:mod:`agents.context`), which the agent computes at
every decision.
"""

from __future__ import annotations

import json
import os
import threading
import zipfile
from typing import Any, Optional

import numpy as np
from numba import njit

from .base import Agent, as_game, legal_ids, obs_vector

FORMAT = 1
WEIGHTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "weights")


def default_weights_path(game: str) -> str:
    """Where the shipped weights of the ``trained`` agent of ``game`` live:
    ``agents/weights/<game>.npz``, or the file its registry record names
    (:attr:`cardenvs.registry.GameSpec.trained_weights`)."""
    from cardenvs.registry import REGISTRY

    spec = REGISTRY.get(game)
    name = spec.trained_weights if spec is not None and spec.trained_weights else f"{game}.npz"
    return os.path.join(WEIGHTS_DIR, name)


def save_weights(path: str, layers: list[tuple[np.ndarray, np.ndarray]], obs_dim: int,
                 meta: dict[str, Any], dtype=np.float16, ctx_dim: int = 0) -> None:
    """Write an MLP as a weight file.

    Args:
        path: the ``.npz`` file to write (its directory is created).
        layers: ``(W, b)`` per linear layer, ``W`` of shape ``[in, out]``; the first layer's
            input is the observation (first ``obs_dim`` rows of ``W``), then the action
            features, then ``ctx_dim`` context inputs (last rows).
        obs_dim: the observation size.
        meta: JSON-serialisable metadata (``game``, ``options``, ``reward_scale``...; with
            ``ctx_dim``, ``context``: the context's name).
        dtype: storage dtype of the arrays (float16 halves the file).
        ctx_dim: the number of context inputs (module docstring; 0: none).
    """
    if not layers:
        raise ValueError("an MLP needs at least one layer")
    w0, b0 = layers[0]
    ctx_dim = int(ctx_dim)
    if ctx_dim < 0 or (ctx_dim and not meta.get("context")):
        raise ValueError(f"ctx_dim={ctx_dim}: context inputs need a context name in meta['context']")
    if not 0 < obs_dim < w0.shape[0] - ctx_dim:
        raise ValueError(f"obs_dim={obs_dim} and ctx_dim={ctx_dim} must split the first layer's "
                         f"{w0.shape[0]} inputs")
    if layers[-1][0].shape[1] != 1:
        raise ValueError("the last layer must have one output (the score)")
    n_in = w0.shape[0]
    arrays = {
        "w_obs": np.asarray(w0[:obs_dim], dtype),
        "w_act": np.asarray(w0[obs_dim:n_in - ctx_dim], dtype),
        "b_0": np.asarray(b0, dtype),
    }
    if ctx_dim:
        arrays["w_ctx"] = np.asarray(w0[n_in - ctx_dim:], dtype)
    for i, (w, b) in enumerate(layers[1:], 1):
        arrays[f"w_{i}"] = np.asarray(w, dtype)
        arrays[f"b_{i}"] = np.asarray(b, dtype)
    meta = dict(meta)
    meta.update(format=FORMAT, obs_dim=int(obs_dim), feat_dim=int(n_in - obs_dim - ctx_dim),
                hidden=[int(w.shape[1]) for w, _ in layers[:-1]])
    if ctx_dim:
        meta["ctx_dim"] = ctx_dim
    else:
        meta.pop("ctx_dim", None)
        meta.pop("context", None)
    arrays["meta"] = np.frombuffer(json.dumps(meta, sort_keys=True).encode(), np.uint8)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp.npz"
    np.savez_compressed(tmp, **arrays)
    os.replace(tmp, path)


@njit(cache=True, fastmath={"contract"})
def _add_rows(out, w_obs, idx, val, k):
    """``out += sum(val[i] * w_obs[idx[i]] for i < k)``, four rows a pass over ``out`` (a
    quarter of the loads and stores of the running sum); pads ``idx, val`` (room for ``k + 3``)
    to a multiple of four with zero weights on row 0."""
    while k % 4:
        idx[k] = 0
        val[k] = 0.0
        k += 1
    H = out.shape[0]
    for i in range(0, k, 4):
        r0, r1, r2, r3 = w_obs[idx[i]], w_obs[idx[i + 1]], w_obs[idx[i + 2]], w_obs[idx[i + 3]]
        v0, v1, v2, v3 = val[i], val[i + 1], val[i + 2], val[i + 3]
        for h in range(H):
            out[h] += (v0 * r0[h] + v1 * r1[h]) + (v2 * r2[h] + v3 * r3[h])


@njit(cache=True)
def _entries(o, prev, fresh, idx, val):
    """The nonzero entries of ``o`` (``fresh``) or of ``o - prev`` into ``idx, val``; their count."""
    k = 0
    for d in range(o.shape[0]):
        v = o[d] if fresh else o[d] - prev[d]
        if v != 0.0:
            idx[k] = d
            val[k] = v
            k += 1
    return k


#: entries :func:`_changed_entries` compares at a time
_BLOCK = 16


@njit(cache=True, inline="always")
def _diff_span(o, prev, lo, hi, idx, val, k):
    """The nonzero entries of ``o[lo:hi] - prev[lo:hi]`` appended to ``idx, val`` after the
    first ``k``; ``prev[lo:hi]`` brought up to ``o``'s; the new count."""
    for d in range(lo, hi):
        v = o[d] - prev[d]
        if v != 0.0:
            idx[k] = d
            val[k] = v
            k += 1
        prev[d] = o[d]
    return k


@njit(cache=True)
def _changed_entries(o, prev, ob, pb, idx, val):
    """The nonzero entries of ``o - prev`` into ``idx, val`` (their count), and ``prev``
    brought up to ``o`` (``ob``, ``pb``: the two as int32 bit patterns).  A block of
    :data:`_BLOCK` entries whose bits all equal ``prev``'s is skipped after one vectorized
    comparison: a seat's observation changes in about 14 of 55 blocks between its decisions in
    Wakeng.  The same entries, in the same order, as :func:`_entries` (a block with ``-0.0``
    against ``0.0`` is looked at; its difference is 0, so no entry)."""
    D = o.shape[0]
    full = D - D % _BLOCK
    k = 0
    for s in range(0, full, _BLOCK):
        x = np.int32(0)
        for j in range(_BLOCK):  # a fixed trip count: vectorized
            x |= ob[s + j] ^ pb[s + j]
        if x != 0:
            k = _diff_span(o, prev, s, s + _BLOCK, idx, val, k)
    return _diff_span(o, prev, full, D, idx, val, k)


@njit(cache=True)
def observation_part(obs, w_obs, b, pos_buf):
    """``pos_buf[p] = obs[p] @ w_obs + b`` over the observation's nonzero entries only (5-10%
    of them in every game): a sum of rows of ``w_obs`` (``obs [n, D]``, ``w_obs [D, H]``;
    :func:`_add_rows`: 0.69 -> 0.44 ms for 176 Wakeng positions x 84 nonzero inputs x 512)."""
    n, D = obs.shape
    H = b.shape[0]
    idx = np.zeros(D + 4, np.int64)
    val = np.zeros(D + 4, np.float32)
    for p in range(n):
        k = _entries(obs[p], obs[p], True, idx, val)
        out = pos_buf[p]
        for h in range(H):
            out[h] = b[h]
        _add_rows(out, w_obs, idx, val, k)


@njit(cache=True)
def observation_part_cached(obs, w_obs, b, keys, c_obs, c_part, c_age, max_age, pos_buf):
    """:func:`observation_part` from each position's previous one: position ``p`` is the
    latest of its key ``keys[p]`` (in self-play: its game and seat), whose last observation
    ``c_obs[key]`` and observation part ``c_part[key]`` are kept, so ``pos_buf[p] =
    c_part[key] + (obs[p] - c_obs[key]) @ w_obs`` over the entries that changed (about 20 of
    the 82 nonzero between two decisions of a seat in Wakeng and Dou Dizhu); then the cache
    holds ``p``'s.  Exact for any earlier entry of the key (another deal is a larger
    difference); a key without one (``c_age[key] < 0``: never seen, or the weights changed)
    or after ``max_age`` differences in a row is computed afresh, so float rounding never
    builds up."""
    n, D = obs.shape
    H = b.shape[0]
    idx = np.zeros(D + 4, np.int64)
    val = np.zeros(D + 4, np.float32)
    obits = obs.view(np.int32)
    cbits = c_obs.view(np.int32)
    for p in range(n):
        key = keys[p]
        co = c_obs[key]
        cp = c_part[key]
        out = pos_buf[p]
        o = obs[p]
        fresh = c_age[key] < 0 or c_age[key] >= max_age
        if fresh:
            k = _entries(o, co, True, idx, val)
            for d in range(D):
                co[d] = o[d]
        else:
            k = _changed_entries(o, co, obits[p], cbits[key], idx, val)
        start = b if fresh else cp
        for h in range(H):
            out[h] = start[h]
        c_age[key] = 0 if fresh else c_age[key] + 1
        _add_rows(out, w_obs, idx, val, k)
        for h in range(H):
            cp[h] = out[h]


@njit(cache=True)
def broadcast_part(pos_buf, owner, act_rows, slots, out):
    """``out[j] = pos_buf[owner[j]] + act_rows[slots[j]]``: the first layer before its ReLU
    from the observation parts (bias included) and the action parts."""
    H = pos_buf.shape[1]
    for j in range(owner.shape[0]):
        p = owner[j]
        r = slots[j]
        for h in range(H):
            out[j, h] = pos_buf[p, h] + act_rows[r, h]


@njit(cache=True)
def first_layer(obs, w_obs, b, owner, act_rows, slots, pos_buf, out):
    """The first layer before its ReLU, ``out[j] = obs[owner[j]] @ w_obs + b + act_rows[slots[j]]``
    (``obs [n, D]``, ``w_obs [D, H]``, ``act_rows [R, H]``: the action parts; ``pos_buf [n, H]``
    scratch).  The observation part is computed once per position
    (:func:`observation_part`)."""
    observation_part(obs, w_obs, b, pos_buf)
    broadcast_part(pos_buf, owner, act_rows, slots, out)


def factored_first_layer(obs: np.ndarray, w_obs: np.ndarray, b: np.ndarray, owner: np.ndarray,
                         act_rows: np.ndarray, slots: Optional[np.ndarray] = None) -> np.ndarray:
    """:func:`first_layer` with its checks: ``float32 [m, H]`` first-layer values of ``m``
    actions (``slots``: row of ``act_rows`` per action, default ``0..m-1``)."""
    obs, owner, act_rows, slots = first_layer_inputs(obs, w_obs, b, owner, act_rows, slots)
    out = np.empty((len(owner), len(b)), np.float32)
    first_layer(obs, w_obs, b, owner, act_rows, slots, np.empty((len(obs), len(b)), np.float32), out)
    return out


def first_layer_inputs(obs, w_obs, b, owner, act_rows, slots=None) -> tuple:
    """The checked, contiguous ``(obs, owner, act_rows, slots)`` of :func:`first_layer`
    (``ValueError`` for shapes or indices that do not fit)."""
    obs = np.ascontiguousarray(obs, np.float32)
    owner = np.ascontiguousarray(owner, np.int64)
    m = len(owner)
    slots = np.arange(m, dtype=np.int64) if slots is None else np.ascontiguousarray(slots, np.int64)
    if obs.ndim != 2 or obs.shape[1] != w_obs.shape[0]:
        raise ValueError(f"observations of shape {obs.shape}; expected (n, {w_obs.shape[0]})")
    if slots.shape != (m,) or act_rows.ndim != 2 or act_rows.shape[1] != len(b):
        raise ValueError(f"{m} actions need {m} action rows of width {len(b)}")
    if m and (owner.min() < 0 or owner.max() >= len(obs) or slots.min() < 0 or slots.max() >= len(act_rows)):
        raise ValueError("owner / action rows out of range")
    return obs, owner, np.ascontiguousarray(act_rows, np.float32), slots


class WeightFileError(ValueError):
    """A weight file that is missing, damaged or not a Q network of this format; the message
    names the file and what is wrong."""


class QNetwork:
    """The numpy Q network of a weight file (float32 compute); a file that cannot be read or
    does not hold one is a :class:`WeightFileError` (a ``ValueError``) naming it and why.

    Args:
        path: a ``.npz`` written by :func:`save_weights`.
    """

    def __init__(self, path: str):
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"weights path must be a str or path, got {type(path).__name__}")
        if not os.path.exists(path):
            raise WeightFileError(f"no weight file at {path!r} (train one with `cardenvs "
                                  f"train GAME` or `python -m train.dmc GAME`)")
        try:
            self._read(path)
        except WeightFileError:
            raise
        except (OSError, EOFError, KeyError, ValueError, TypeError, AttributeError,
                zipfile.BadZipFile, UnicodeDecodeError) as e:
            raise WeightFileError(f"{path!r} is not a readable cardenvs weight file "
                                  f"({type(e).__name__}: {e})") from None

    def _read(self, path) -> None:
        """Load and check the arrays and metadata (``WeightFileError`` naming what is wrong)."""
        def bad(what: str) -> WeightFileError:
            return WeightFileError(f"{path!r} is not a cardenvs weight file: {what}")

        if os.path.isdir(path):
            raise bad("it is a folder")
        if os.path.getsize(path) == 0:
            raise bad("the file is empty")
        if not zipfile.is_zipfile(path):
            raise bad("not a .npz archive (a zip file of arrays, as save_weights writes)")
        with np.load(path, allow_pickle=False) as z:
            if "meta" not in z.files:
                raise WeightFileError(f"{path!r} is not a cardenvs weight file (no 'meta' entry)")
            self.meta: dict = json.loads(bytes(z["meta"]).decode())
            if not isinstance(self.meta, dict):
                raise bad(f"its 'meta' entry is a JSON {type(self.meta).__name__}, not an "
                          f"object")
            if self.meta.get("format") != FORMAT:
                raise WeightFileError(f"{path!r} has weight format {self.meta.get('format')}, "
                                      f"expected {FORMAT}")
            for key in ("w_obs", "w_act", "b_0"):
                if key not in z.files:
                    raise bad(f"no {key!r} array")

            def array(key: str, ndim: int) -> np.ndarray:
                a = z[key]
                if a.ndim != ndim or not np.issubdtype(a.dtype, np.number):
                    raise bad(f"{key!r} is a {a.ndim}-d {a.dtype} array; expected {ndim}-d "
                              f"numbers")
                a = a.astype(np.float32)
                if not np.isfinite(a).all():
                    raise bad(f"{key!r} holds NaN or infinite values")
                return a

            self.w_obs = array("w_obs", 2)
            self.w_act = array("w_act", 2)
            self.b0 = array("b_0", 1)
            self.w_ctx = (array("w_ctx", 2) if "w_ctx" in z.files
                          else np.zeros((0, self.b0.shape[0]), np.float32))
            width = self.b0.shape[0]
            for key in ("w_obs", "w_act", "w_ctx"):
                if getattr(self, key).shape[1] != width:
                    raise bad(f"{key!r} has {getattr(self, key).shape[1]} columns where 'b_0' "
                              f"has {width} entries")
            self.layers = []
            i = 1
            while f"w_{i}" in z.files:
                if f"b_{i}" not in z.files:
                    raise bad(f"'w_{i}' without 'b_{i}'")
                w, b = array(f"w_{i}", 2), array(f"b_{i}", 1)
                if w.shape[0] != width or b.shape[0] != w.shape[1]:
                    raise bad(f"layer {i} is {w.shape[0]} x {w.shape[1]} with {b.shape[0]} "
                              f"biases after a layer of {width} outputs")
                self.layers.append((w, b))
                width = w.shape[1]
                i += 1
            if width != 1:
                raise bad(f"the last layer has {width} outputs; a Q network has one (the score)")
        if self.w_obs.shape[0] == 0 or self.w_act.shape[0] == 0:
            raise bad("no observation or action-feature inputs")
        if self.meta.get("prior") is not None:
            raise WeightFileError(f"{path!r} names the prior agent {self.meta['prior']!r}: an "
                                  f"override file (a network scoring deviations from that "
                                  f"agent's moves), which this version no longer plays; give "
                                  f"a network-only file (every decision the network's)")
        self.obs_dim = self.w_obs.shape[0]
        self.feat_dim = self.w_act.shape[0]
        #: the number of context inputs and the context's name (0 and ``None``: none)
        self.ctx_dim = self.w_ctx.shape[0]
        self.context: Optional[str] = self.meta.get("context") if self.ctx_dim else None
        if self.ctx_dim and (not self.context or self.meta.get("ctx_dim") != self.ctx_dim):
            raise WeightFileError(f"{path!r} has {self.ctx_dim} context inputs but its metadata "
                                  f"names context {self.meta.get('context')!r} of "
                                  f"{self.meta.get('ctx_dim')}")

    def first_weight(self) -> np.ndarray:
        """The first layer's whole weight ``[obs_dim + feat_dim + ctx_dim, h0]`` (the inputs'
        order of :func:`save_weights`)."""
        return np.concatenate([self.w_obs, self.w_act, self.w_ctx])

    def layer_list(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """``(W [in, out], b)`` per layer, as :func:`save_weights` takes them."""
        return [(self.first_weight(), self.b0), *self.layers]

    def _ctx_part(self, ctx: Optional[np.ndarray], m: int) -> Optional[np.ndarray]:
        """``ctx @ w_ctx`` for ``m`` actions (``None`` without context inputs)."""
        if not self.ctx_dim:
            return None
        if ctx is None:
            raise ValueError(f"this network takes {self.ctx_dim} context inputs "
                             f"({self.context!r}) per action: pass ctx")
        ctx = np.asarray(ctx, np.float32)
        if ctx.shape != (m, self.ctx_dim):
            raise ValueError(f"ctx of shape {ctx.shape}; expected ({m}, {self.ctx_dim})")
        return ctx @ self.w_ctx

    def scores(self, obs: np.ndarray, feats: np.ndarray, ctx: Optional[np.ndarray] = None) -> np.ndarray:
        """Scores (float32 ``[k]``) of ``k`` actions (``feats [k, feat_dim]``; ``ctx [k,
        ctx_dim]`` for a network with context inputs) in one position."""
        h = np.asarray(obs, np.float32) @ self.w_obs + self.b0
        h = h[None, :] + np.asarray(feats, np.float32) @ self.w_act
        c = self._ctx_part(ctx, len(h))
        return self._body(h if c is None else h + c)

    def scores_batch(self, obs: np.ndarray, feats: np.ndarray, owner: np.ndarray,
                     ctx: Optional[np.ndarray] = None) -> np.ndarray:
        """Scores of many positions' actions: ``obs [n, obs_dim]``, ``feats [m, feat_dim]``,
        ``owner [m]`` = the position (row of ``obs``) each action belongs to (``ctx`` as in
        :meth:`scores`)."""
        h = np.asarray(obs, np.float32) @ self.w_obs + self.b0
        h = h[owner] + np.asarray(feats, np.float32) @ self.w_act
        c = self._ctx_part(ctx, len(h))
        return self._body(h if c is None else h + c)

    def scores_ids(self, obs: np.ndarray, ids: np.ndarray, owner: np.ndarray, rows: "ActionRows",
                   features, ctx: Optional[np.ndarray] = None) -> np.ndarray:
        """:meth:`scores_batch` of the actions ``ids`` (``owner`` and ``ctx`` as there), the
        first layer's action part ``features(id) @ w_act`` taken from the per-id cache
        ``rows`` (computed for the ids not in it yet; ``features(ids) -> [k, feat_dim]``, e.g.
        ``game.action_features``).  Equal to :meth:`scores_batch` up to float rounding."""
        c = self._ctx_part(ctx, len(ids))
        compute = lambda u: np.asarray(features(u), np.float32) @ self.w_act  # noqa: E731
        slots = rows.take(ids, compute)
        if slots is None:  # more distinct ids than the cache holds
            h = factored_first_layer(obs, self.w_obs, self.b0, owner, compute(ids))
        else:
            h = factored_first_layer(obs, self.w_obs, self.b0, owner, rows.rows, slots)
        if c is not None:
            h += c
        return self._body(h)

    def action_rows(self, n_actions: int) -> "ActionRows":
        """An empty per-id cache of this network's first-layer action part (for :meth:`scores_ids`)."""
        return ActionRows(n_actions, self.w_act.shape[1])

    def _body(self, h: np.ndarray) -> np.ndarray:
        for w, b in self.layers:
            np.maximum(h, 0.0, out=h)
            h = h @ w + b
        return h[:, 0]


#: the networks :func:`shared_network` has read, by file (path, size, modification time)
_SHARED: dict = {}
_SHARED_LOCK = threading.Lock()
_SHARED_MAX = 32


def shared_network(path: str) -> QNetwork:
    """The :class:`QNetwork` of ``path``, read once and shared by every agent that plays it
    (an agent never changes its network): a server that starts many games (``cardenvs
    serve``) reads and checks each weight file once.  A file written again since (another
    size or modification time) is read again; errors as :class:`QNetwork`'s."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"weights path must be a str or path, got {type(path).__name__}")
    try:
        st = os.stat(path)
    except OSError:
        return QNetwork(path)  # its error names the file and why
    key = (os.path.realpath(path), st.st_size, st.st_mtime_ns, st.st_ino)
    with _SHARED_LOCK:
        net = _SHARED.get(key)
    if net is None:
        net = QNetwork(path)
        with _SHARED_LOCK:
            net = _SHARED.setdefault(key, net)
            while len(_SHARED) > _SHARED_MAX:
                del _SHARED[next(iter(_SHARED))]
    return net


class ActionRows:
    """Cache of a network's first-layer action part, one row ``features(id) @ W_act`` per
    action id, filled lazily with the ids met (not all ``n_actions``: Pao De Kuai has ~90k ids,
    a full table of 512-wide rows would be 184 MB).

    The first layer of the Q network on ``[obs; features(a)]`` is ``obs @ W_obs + features(a)
    @ W_act + b``: the observation part is computed once per position, and the action part
    depends on the action id alone, so it is computed once per id while the weights stay
    the same (the owner calls :meth:`clear` when they change).  At most ``max_rows`` rows are
    kept (then the cache starts again empty), float32.

    Args:
        n_actions: the game's action count (ids ``0 .. n_actions - 1``).
        width: the first layer's width.
        max_rows: most rows kept (default 32768: 64 MB at width 512).
    """

    def __init__(self, n_actions: int, width: int, max_rows: int = 32768):
        if int(n_actions) < 1 or int(width) < 1 or int(max_rows) < 1:
            raise ValueError(f"ActionRows needs n_actions, width, max_rows >= 1, got "
                             f"{n_actions!r}, {width!r}, {max_rows!r}")
        self.n_actions, self.width, self.max_rows = int(n_actions), int(width), int(max_rows)
        self.slot = np.full(self.n_actions, -1, np.int64)  # row of each id, -1: not computed
        self.rows = np.zeros((min(256, self.max_rows), self.width), np.float32)
        self.row_id = np.zeros(len(self.rows), np.int64)
        self.used = 0

    def __getstate__(self) -> dict:  # pickles empty (the rows are recomputed on demand)
        return {"n_actions": self.n_actions, "width": self.width, "max_rows": self.max_rows}

    def __setstate__(self, state: dict) -> None:
        self.__init__(**state)

    def clear(self) -> None:
        """Forget every row (the weights changed)."""
        self.slot[self.row_id[:self.used]] = -1
        self.used = 0

    def lookup(self, ids: np.ndarray, compute) -> np.ndarray:
        """The rows of ``ids`` (a new ``[len(ids), width]`` float32 array), computing the
        missing ones with ``compute(unique_ids) -> [k, width]`` (more distinct ids than
        ``max_rows``: ``compute(ids)``, nothing kept)."""
        slots = self.take(ids, compute)
        if slots is None:
            return np.asarray(compute(np.asarray(ids)), np.float32)
        return self.rows[slots]

    def take(self, ids: np.ndarray, compute) -> Optional[np.ndarray]:
        """Row index (into :attr:`rows`) of each of ``ids``, computing the missing ones with
        ``compute(unique_ids) -> [k, width]`` first; ``None`` when the call has more distinct
        ids than ``max_rows``."""
        ids = np.asarray(ids)
        if ids.dtype.kind not in "iu":
            raise TypeError(f"action ids must be integers, got dtype {ids.dtype}")
        if ids.size and (ids.min() < 0 or ids.max() >= self.n_actions):
            raise ValueError(f"action ids must lie in [0, {self.n_actions}), got "
                             f"{int(ids.min())}..{int(ids.max())}")
        s = self.slot[ids]
        miss = s < 0
        if not miss.any():
            return s
        new = np.unique(ids[miss])
        k = len(new)
        if k > self.max_rows:
            return None
        if self.used + k > self.max_rows:
            self.clear()
            return self.take(ids, compute)
        if self.used + k > len(self.rows):
            cap = min(self.max_rows, max(2 * len(self.rows), self.used + k))
            rows = np.zeros((cap, self.width), np.float32)
            rows[:self.used] = self.rows[:self.used]
            row_id = np.zeros(cap, np.int64)
            row_id[:self.used] = self.row_id[:self.used]
            self.rows, self.row_id = rows, row_id
        r = np.asarray(compute(new), np.float32)
        if r.shape != (k, self.width):
            raise ValueError(f"compute returned shape {r.shape}, expected {(k, self.width)}")
        end = self.used + k
        self.rows[self.used:end] = r
        self.row_id[self.used:end] = new
        self.slot[new] = np.arange(self.used, end)
        self.used = end
        return self.slot[ids]


class TrainedAgent(Agent):
    """Plays the legal action of highest Q score under a shipped (or given) weight file
    (module docstring).

    Args:
        game: the compiled game (``env.unwrapped.game``; a registry name is accepted too).
        seed: unused (the agent is deterministic); accepted for the uniform agent signature.
        weights: path of the ``.npz``; default :func:`default_weights_path`
            (``agents/weights/<game>.npz``, or the file the game's registry record names).

    The weights must have been trained on a game with the same observation and action-feature
    sizes (the default options of the game, unless trained otherwise).
    """

    name = "trained"

    def __init__(self, game, seed: Optional[int] = None, weights: Optional[str] = None):
        game = as_game(game)
        self.game = game
        self.rng = np.random.default_rng(seed)
        name = game.info.name
        self.path = weights if weights is not None else default_weights_path(name)
        self.net = shared_network(self.path)
        reason = _mismatch(self.net, game)
        if reason is not None:
            raise ValueError(f"agent 'trained' cannot play {name} with {self.path!r}: {reason}")
        self._obs = np.zeros(game.layout.size, np.float32)
        self._rows = self.net.action_rows(game.n_actions)  # the weights never change: kept
        #: the network's context inputs (:mod:`agents.context`), ``None`` when it takes none
        self.context = None
        if self.net.ctx_dim:
            from .context import make_context

            self.context = make_context(self.net.context, game)

    @classmethod
    def unsupported(cls, game) -> Optional[str]:
        """Why the shipped weights cannot play ``game`` (``None`` when they can)."""
        game = as_game(game)
        path = default_weights_path(game.info.name)
        if not os.path.exists(path):
            return f"no trained weights shipped for {game.info.name} ({path})"
        try:
            net = shared_network(path)
        except ValueError as e:
            return str(e)
        return _mismatch(net, game)

    def scores(self, obs: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """Q scores of the ``legal`` action ids in the position ``obs``."""
        legal = np.asarray(legal)
        obs = np.asarray(obs, np.float32)[None, :]
        owner = np.zeros(len(legal), np.int64)
        return self.net.scores_ids(obs, legal, owner, self._rows, self.game.action_features,
                                   self._ctx(obs, legal, owner))

    def _ctx(self, obs: np.ndarray, ids: np.ndarray, owner: np.ndarray) -> Optional[np.ndarray]:
        """The context inputs of the actions (``None`` for a network without them)."""
        return None if self.context is None else self.context(obs, ids, owner)

    def act(self, observation: dict, legal: Optional[np.ndarray] = None,
            info: Optional[dict] = None) -> int:
        """The best-scored legal action (``legal``, or the mask's set entries when None)."""
        legal = legal_ids(observation, legal)
        if len(legal) == 1:
            return int(legal[0])
        obs = np.asarray(obs_vector(observation), np.float32)
        if obs.shape != (self.net.obs_dim,):
            raise ValueError(f"observation of shape {obs.shape}; expected ({self.net.obs_dim},)")
        return int(legal[int(np.argmax(self.scores(obs, legal)))])

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Actions for a batch (``observations`` (B, D), ``masks`` (B, N)), one scoring pass."""
        observations = np.asarray(observations, np.float32)
        masks = np.asarray(masks)
        if observations.ndim != 2 or masks.ndim != 2 or len(observations) != len(masks):
            raise ValueError("act_batch needs observations (B, D) and masks (B, N) of one batch size")
        rows, ids = np.nonzero(masks)
        sizes = np.bincount(rows, minlength=len(masks))
        if (sizes == 0).any():
            raise ValueError("no legal action to choose from in some row of the batch")
        q = self.net.scores_ids(observations, ids, rows, self._rows, self.game.action_features,
                                self._ctx(observations, ids, rows))
        return ids[segment_argmax(q, sizes)].astype(np.int64)

    def __repr__(self) -> str:
        return f"TrainedAgent({self.game.info.name}, {os.path.basename(self.path)})"


def _mismatch(net: QNetwork, game) -> Optional[str]:
    """Why ``net`` does not fit ``game`` (``None`` when it does)."""
    trained_for = net.meta.get("game")
    if trained_for is not None and trained_for != game.info.name:
        return f"the weights are for {trained_for!r}"
    size = game.layout.size
    feat = game.action_features(np.zeros(1, np.int64)).shape[1]
    if (net.obs_dim, net.feat_dim) != (size, feat):
        return (f"the weights expect observations of {net.obs_dim} and action features of "
                f"{net.feat_dim}; this game has {size} and {feat}")
    if net.ctx_dim:
        from .context import CONTEXTS

        if net.context not in CONTEXTS:
            return (f"the weights take the context {net.context!r}, unknown here (known: "
                    f"{', '.join(sorted(CONTEXTS))})")
        if CONTEXTS[net.context].dim != net.ctx_dim:
            return (f"the weights take {net.ctx_dim} inputs of context {net.context!r}, which "
                    f"has {CONTEXTS[net.context].dim}")
    return None


def segment_starts(sizes: np.ndarray) -> np.ndarray:
    """Where each consecutive segment of ``sizes`` begins in the concatenated array."""
    return np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)


def segment_argmax(values: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Index (into ``values``) of the first maximum of each consecutive segment of ``sizes``."""
    sizes = np.asarray(sizes, np.int64)
    starts = segment_starts(sizes)
    width = int(sizes.max())
    padded = np.full((len(sizes), width), -np.inf, np.float64)
    owner = np.repeat(np.arange(len(sizes)), sizes)
    col = np.arange(len(values)) - np.repeat(starts, sizes)
    padded[owner, col] = values
    return starts + padded.argmax(axis=1)
