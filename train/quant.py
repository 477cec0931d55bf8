"""int8 scoring of a ``train.dmc.QNet``'s layers after the first, for self-play's acting
(``train.dmc --act-dtype int8``; the learner trains in float32).

The scheme (symmetric, no zero points):

* **activations**: each row (one scored action) after its ReLU is cut to ``round(v / s)``
  with its own scale ``s = max(row) / 127`` (so ``0 <= q <= 127``; an all-zero row has
  ``s = 1``);
* **weights**: each output channel ``o`` of a layer as ``round(W[o] / w_s[o])``,
  ``w_s[o] = max |W[o]| / 127``;
* a layer is one integer matmul ``acc = q_x @ q_W`` (exact: oneDNN's int8 linear layer with
  the weights packed once they stay the same, AMX or VNNI kernels, float32 products; or
  ``torch._int_mm``, int8 x int8 -> int32; on CPUs with AVX512-VNNI about twice the bfloat16
  rate), then, in one numba pass,
  ``relu(acc * s_row * w_s + b)`` cut to int8 again for the next layer; the last hidden
  layer's pass also applies the output layer (``[h] -> 1``) in float32.

The first layer stays float32 (:class:`train.dmc.FactoredScorer`'s observation part over the
nonzero inputs and its cache of action parts): its output is what gets cut first.  On four
shipped networks' self-play positions (ten samples each) the scores are within 1.2-2.7% of
float32's spread (the median sample 1.0-1.8%; bfloat16 at most 0.7%), the best action the
same in 98.1% of positions (3,830 of 3,904), the others near ties (``tests/test_quant.py``);
:func:`reference_scores` is the same arithmetic in plain numpy, for the differential test.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import torch
from numba import njit

from cardenvs.arena import agents_module

_trained = agents_module("trained")
observation_part = _trained.observation_part

#: the largest int8 code an activation or a weight gets
QMAX = 127


@njit(cache=True, fastmath=True, inline="always")
def _row_scale(bits, out_s, j):
    """``out_s[j] = max(row) / 127`` (1 for an all-zero row) of a ReLU'd float32 ``row`` read
    as its int32 bit pattern ``bits``; returns ``127 / max(row)`` (0 for an all-zero row)."""
    # the largest value as the largest int32 bit pattern: a ReLU'd row has no negative
    # entries (a -0.0 reads as negative and loses to 0), and integer max reductions vectorize
    # where float max() stays scalar (0.24 -> 0.02 ms over 940 rows of 512)
    mb = np.int32(0)
    for k in range(bits.shape[0]):
        b = bits[k]
        mb = b if b > mb else mb
    mx = np.int32(mb + 0).view(np.float32)
    if mx > 0:
        out_s[j] = mx / np.float32(QMAX)
        return np.float32(QMAX) / mx
    out_s[j] = np.float32(1.0)
    return np.float32(0.0)


@njit(cache=True, fastmath=True, inline="always")
def _row_codes(row, inv, out_row):
    """``out_row = round(row * inv)`` (``row >= 0``, ``inv = 127 / max(row)``: at most 127
    after rounding, so no clamp) into the int8 codes ``out_row``."""
    for k in range(row.shape[0]):
        out_row[k] = np.int8(np.int32(row[k] * inv + np.float32(0.5)))


@njit(cache=True, fastmath=True)
def quantize_rows(h, out_q, out_s):
    """Each row of ``relu(h)`` (``h [m, H]`` float32 pre-activations) cut to int8 codes
    ``out_q`` with its scale ``out_s`` (the module docstring)."""
    m, H = h.shape
    row = np.empty(H, np.float32)
    bits = row.view(np.int32)
    for j in range(m):
        hj = h[j]
        for k in range(H):
            row[k] = max(hj[k], np.float32(0.0))
        _row_codes(row, _row_scale(bits, out_s, j), out_q[j])


@njit(cache=True, fastmath=True)
def cut_first_layer(pos_buf, owner, act_rows, slots, out_q, out_s):
    """The int8 codes of ``relu(pos_buf[owner[j]] + act_rows[slots[j]])``: the first layer
    from its observation parts (bias included) and action parts, cut as it is made."""
    H = pos_buf.shape[1]
    row = np.empty(H, np.float32)
    bits = row.view(np.int32)
    for j in range(owner.shape[0]):
        a = pos_buf[owner[j]]
        c = act_rows[slots[j]]
        for k in range(H):
            row[k] = max(a[k] + c[k], np.float32(0.0))
        _row_codes(row, _row_scale(bits, out_s, j), out_q[j])


@njit(cache=True, fastmath=True)
def first_layer_codes(obs, w_obs, b, owner, act_rows, slots, pos_buf, out_q, out_s):
    """:func:`agents.trained.first_layer` and :func:`quantize_rows` in one pass: the int8
    codes of ``relu(obs[owner[j]] @ w_obs + b + act_rows[slots[j]])``."""
    observation_part(obs, w_obs, b, pos_buf)
    cut_first_layer(pos_buf, owner, act_rows, slots, out_q, out_s)


@njit(cache=True, fastmath=True)
def requantize(acc, s_row, w_s, b, out_q, out_s):
    """The next layer's int8 input from a layer's products ``acc [m, O]`` (int32, or float32
    holding integers exactly: :func:`int8_matmul`): the rows of ``relu(acc * s_row[:, None]
    * w_s + b)``, each cut with its own scale."""
    m, O = acc.shape
    row = np.empty(O, np.float32)
    bits = row.view(np.int32)
    for j in range(m):
        sr = s_row[j]
        a = acc[j]
        for o in range(O):
            row[o] = max(np.float32(a[o]) * sr * w_s[o] + b[o], np.float32(0.0))
        _row_codes(row, _row_scale(bits, out_s, j), out_q[j])


@njit(cache=True, fastmath=True)
def output_layer(acc, s_row, w_s, b, w_out, b_out, q):
    """``q[j] = relu(acc[j] * s_row[j] * w_s + b) @ w_out + b_out``: the last hidden layer's
    values (from its products, as in :func:`requantize`) through the float32 output layer
    ``[O] -> 1``."""
    m, O = acc.shape
    for j in range(m):
        sr = s_row[j]
        t = b_out
        for o in range(O):
            v = np.float32(acc[j, o]) * sr * w_s[o] + b[o]
            if v > 0:
                t += v * w_out[o]
        q[j] = t


#: the most inputs a layer may have for float32 to hold its int8 products exactly
#: (``127 * 127 * in_features <= 2**24``): :func:`int8_matmul` on oneDNN returns float32
EXACT_INPUTS = (1 << 24) // (QMAX * QMAX)

#: :class:`Int8Body` on oneDNN pads its batches to a multiple of this many rows: oneDNN makes
#: (and caches) a kernel per row count, about 1 ms each, which a step's varying count of scored
#: actions would otherwise pay again and again
ROW_BLOCK = 64

_onednn: Optional[bool] = None


def padded_rows(m: int) -> int:
    """``m`` rounded up to a multiple of :data:`ROW_BLOCK`."""
    return -(-m // ROW_BLOCK) * ROW_BLOCK


def _qlinear(x: torch.Tensor, packed: tuple) -> np.ndarray:
    p, ones, zeros = packed  # unit scales, no zero points, no bias: the plain products
    return torch.ops.onednn.qlinear_pointwise(x.view(torch.uint8), 1.0, 0, p, ones, zeros, None,
                                              1.0, 0, torch.float32, "none", [], "").numpy()


def prepack(wq: np.ndarray) -> tuple:
    """oneDNN's packed form of the int8 weights ``wq [in, out]`` for :func:`int8_matmul`."""
    w = torch.from_numpy(np.ascontiguousarray(wq.T))
    out = wq.shape[1]
    return (torch.ops.onednn.qlinear_prepack(w, None), torch.ones(out, dtype=torch.float32),
            torch.zeros(out, dtype=torch.int64))


def onednn_available() -> bool:
    """Whether torch's oneDNN int8 linear layer (weights packed once for the CPU's AMX or VNNI
    kernels) runs here and returns exact products; checked once per process."""
    global _onednn
    if _onednn is None:
        try:
            rng = np.random.default_rng(0)
            x = rng.integers(0, QMAX + 1, (20, 64)).astype(np.int8)
            w = rng.integers(-QMAX, QMAX + 1, (64, 24)).astype(np.int8)
            x[0], w[:, 0], w[:, 1] = QMAX, QMAX, -QMAX  # the extremes: no saturation on the way
            got = _qlinear(torch.from_numpy(x), prepack(w))
            _onednn = bool(np.array_equal(got, x.astype(np.int64) @ w.astype(np.int64)))
        except Exception:  # an older torch, a build without oneDNN, another CPU architecture
            _onednn = False
    return _onednn


def int8_matmul(x: torch.Tensor, wq: torch.Tensor, packed: Optional[tuple] = None) -> np.ndarray:
    """The exact products ``x @ wq`` of int8 codes ``x [m, in]`` (all ``>= 0``: ReLU'd) and int8
    weights ``wq [in, out]``: with ``packed`` (:func:`prepack`; ``in <= EXACT_INPUTS``) from
    oneDNN's int8 linear layer as float32 (on a CPU with AMX 1.3-1.6x ``torch._int_mm``,
    which packs the weights again on every call), else ``torch._int_mm``'s int32."""
    if packed is not None:
        return _qlinear(x, packed)
    return torch._int_mm(x, wq).numpy()


def quantize_weight(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(q [in, out] int8, w_s [out] float32)`` of a layer's weight ``w [out, in]`` (torch's
    layout): one scale per output channel."""
    w = np.asarray(w, np.float32)
    w_s = np.abs(w).max(axis=1) / QMAX
    w_s = np.where(w_s > 0, w_s, np.float32(1.0)).astype(np.float32)
    q = np.clip(np.rint(w / w_s[:, None]), -QMAX, QMAX).astype(np.int8)
    return np.ascontiguousarray(q.T), w_s


class Int8Body:
    """The layers after the first of a ``QNet`` (``layers``: its ``nn.Linear`` list from the
    second on; the last one ``[h] -> 1``), scored in int8 (the module docstring).  The int8
    weights are made again whenever a layer's weights change (torch's version counter), so
    the scores follow the learner's updates.

    ``gemm="onednn"`` (the default where it runs) packs the weights for oneDNN only once they
    have stayed the same for :attr:`PACK_AFTER` calls, multiplying with ``torch._int_mm``
    until then: packing costs 2.7 ms (this network's three hidden layers), more than a
    self-play step, and an actor of a learning run gets new weights every few steps, where
    a benchmark or an evaluation keeps them.  Either way the products, so the scores, are
    the same to the bit."""

    #: calls with unchanged weights before they are packed for oneDNN (each saves ~0.15 ms)
    PACK_AFTER = 16

    def __init__(self, layers: Sequence[torch.nn.Linear], gemm: str = "auto"):
        self.layers = list(layers)
        if not self.layers or self.layers[-1].out_features != 1:
            raise ValueError("Int8Body needs the layers after the first, ending in one output")
        if gemm not in ("auto", "onednn", "int_mm"):
            raise ValueError(f"gemm must be 'auto', 'onednn' or 'int_mm', got {gemm!r}")
        fits = all(l.in_features <= EXACT_INPUTS for l in self.layers[:-1])
        if gemm == "onednn" and not (fits and onednn_available()):
            raise ValueError("gemm='onednn': " + ("torch's oneDNN int8 linear layer is not available "
                                                  "here" if fits else f"a layer has more than "
                                                  f"{EXACT_INPUTS} inputs (float32 products inexact)"))
        #: how the hidden layers multiply (:func:`int8_matmul`): ``"onednn"`` (weights packed
        #: once they stay the same) where it runs, else ``"int_mm"``
        self.gemm = gemm if gemm != "auto" else ("onednn" if fits and onednn_available() else "int_mm")
        self._key: Optional[tuple] = None
        self._same = 0  # calls since the weights last changed
        self.packed = False  # whether the hidden layers' weights are packed for oneDNN now

    def __getstate__(self) -> dict:
        # oneDNN's packed weights are opaque tensors that neither pickle nor deep-copy: the
        # copy packs its own at its first call
        state = {k: v for k, v in self.__dict__.items() if k not in ("hidden", "w_out", "b_out")}
        state.update(_key=None, _same=0, packed=False)
        return state

    def _prepare(self) -> None:
        # the layers' tensors, read through Module.__getattr__ once per call (not per check)
        tensors = [t for l in self.layers for t in (l.weight, l.bias)]
        key = tuple((t.data_ptr(), t._version) for t in tensors)
        if key == self._key:
            self._same += 1
            if self._same == self.PACK_AFTER and self.gemm == "onednn":
                self.hidden = [(wq, w_s, b, prepack(wq.numpy())) for wq, w_s, b, _ in self.hidden]
                self.packed = True
            return
        self._same, self.packed = 0, False
        self.hidden = []
        for l in self.layers[:-1]:
            q, w_s = quantize_weight(l.weight.detach().cpu().numpy())
            self.hidden.append((torch.from_numpy(q), w_s,
                                l.bias.detach().cpu().numpy().astype(np.float32), None))
        out = self.layers[-1]
        self.w_out = out.weight.detach().cpu().numpy()[0].astype(np.float32)
        self.b_out = np.float32(out.bias.detach().cpu().numpy()[0])
        self._key = key

    def _codes(self, m: int, H: int) -> np.ndarray:
        """Room for ``m`` rows of int8 codes of width ``H``, padded with zero rows to a multiple
        of :data:`ROW_BLOCK` while the weights are packed for oneDNN."""
        if not self.packed:
            return np.empty((m, H), np.int8)
        xq = np.empty((padded_rows(m), H), np.int8)
        xq[m:] = 0
        return xq

    def __call__(self, h: np.ndarray) -> np.ndarray:
        """Scores ``[m]`` float32 of the first layer's pre-activations ``h [m, H]`` float32."""
        h = np.ascontiguousarray(h, np.float32)
        self._prepare()
        xq = self._codes(*h.shape)
        xs = np.empty(h.shape[0], np.float32)
        quantize_rows(h, xq, xs)
        return self._from_codes(xq, xs)

    def first_layer(self, obs, w_obs, b, owner, act_rows, slots=None,
                    pos_buf: Optional[np.ndarray] = None) -> np.ndarray:
        """Scores ``[m]`` with the first layer given factored (the arguments of
        :func:`agents.trained.factored_first_layer`), its values cut as they are made
        (:func:`first_layer_codes`); ``pos_buf``: the observation parts ``obs @ w_obs + b``
        already computed (``[len(obs), H]`` float32, e.g. by
        :func:`agents.trained.observation_part_cached`)."""
        obs, owner, act_rows, slots = _trained.first_layer_inputs(obs, w_obs, b, owner, act_rows, slots)
        m, H = len(owner), len(b)
        self._prepare()
        xq = self._codes(m, H)
        xs = np.empty(m, np.float32)
        if pos_buf is None:
            first_layer_codes(obs, w_obs, b, owner, act_rows, slots,
                              np.empty((len(obs), H), np.float32), xq, xs)
        else:
            if pos_buf.shape != (len(obs), H) or pos_buf.dtype != np.float32:
                raise ValueError(f"pos_buf of shape {pos_buf.shape} {pos_buf.dtype}; expected "
                                 f"({len(obs)}, {H}) float32")
            cut_first_layer(pos_buf, owner, act_rows, slots, xq, xs)
        return self._from_codes(xq, xs)

    def from_codes(self, xq: np.ndarray, xs: np.ndarray) -> np.ndarray:
        """Scores ``[m]`` float32 of the first layer's values already cut: codes ``xq`` int8
        (``[m, H]``, or more rows: padding, ignored) and row scales ``xs [m]``
        (:func:`first_layer_codes`)."""
        self._prepare()
        return self._from_codes(xq, xs)

    def _from_codes(self, xq: np.ndarray, xs: np.ndarray) -> np.ndarray:
        m = len(xs)
        q = np.empty(m, np.float32)
        if m == 0:
            return q
        if not self.hidden:  # one hidden layer: the output layer on the cut first layer
            width = xq.shape[1]
            output_layer(xq[:m].astype(np.int32), xs, np.ones(width, np.float32),
                         np.zeros(width, np.float32), self.w_out, self.b_out, q)
            return q
        x = torch.from_numpy(xq)
        for i, (wq, w_s, b, packed) in enumerate(self.hidden):
            acc = int8_matmul(x, wq, packed)[:m]
            if i == len(self.hidden) - 1:
                output_layer(acc, xs, w_s, b, self.w_out, self.b_out, q)
            else:
                nq = self._codes(m, acc.shape[1])
                ns = np.empty(m, np.float32)
                requantize(acc, xs, w_s, b, nq, ns)
                x, xs = torch.from_numpy(nq), ns
        return q


def _cut(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ``relu``'d values ``v`` cut to int8 codes and their scales (numpy)."""
    mx = v.max(axis=1)
    s = np.where(mx > 0, mx / QMAX, 1.0).astype(np.float32)
    inv = np.where(mx > 0, QMAX / np.where(mx > 0, mx, 1.0), 0.0).astype(np.float32)
    return np.floor(np.minimum(v * inv[:, None] + 0.5, QMAX)).astype(np.int64), s


def reference_scores(h: np.ndarray, layers: Sequence[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """:class:`Int8Body`'s scores in plain numpy (int64 products, float64 elsewhere apart
    from the cuts): ``h [m, H]`` the first layer's pre-activations, ``layers`` ``(W [out,
    in], b)`` of the layers after the first."""
    x, s = _cut(np.maximum(np.asarray(h, np.float64), 0.0))
    *hidden, (w_out, b_out) = layers
    if not hidden:
        return (x * s[:, None]) @ np.asarray(w_out, np.float64)[0] + float(b_out[0])
    for i, (w, b) in enumerate(hidden):
        wq, w_s = quantize_weight(w)
        v = (x @ wq.astype(np.int64)) * s[:, None] * w_s[None, :] + np.asarray(b, np.float64)
        v = np.maximum(v, 0.0)
        if i == len(hidden) - 1:
            return v @ np.asarray(w_out, np.float64)[0] + float(b_out[0])
        x, s = _cut(v)
    raise AssertionError("unreachable")
