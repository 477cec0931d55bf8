"""int8 scoring of a ``train.dmc.QNet``'s layers after the first, for self-play's acting
(``train.dmc --act-dtype int8``; the learner trains in float32).

The scheme (symmetric, no zero points):

* **activations**: each row (one scored action) after its ReLU is cut to ``round(v / s)``
  with its own scale ``s = max(row) / 127`` (so ``0 <= q <= 127``; an all-zero row has
  ``s = 1``);
* **weights**: each output channel ``o`` of a layer as ``round(W[o] / w_s[o])``,
  ``w_s[o] = max |W[o]| / 127``;
* a layer is one integer matmul ``acc = q_x @ q_W`` (``torch._int_mm``: int8 x int8 -> int32,
  exact; on CPUs with AVX512-VNNI about twice the bfloat16 rate), then, in one numba pass,
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


@njit(cache=True, fastmath=True)
def _cut_row(row, out_q, out_s, j):
    """``out_q[j] = round(row / out_s[j])`` with ``out_s[j] = max(row) / 127`` (1 for an
    all-zero row): ``row`` float32, already through the ReLU."""
    # the largest value as the largest int32 bit pattern: a ReLU'd row has no negative
    # entries (a -0.0 reads as negative and loses to 0), and integer max reductions vectorize
    # where float max() stays scalar (0.24 -> 0.02 ms over 940 rows of 512)
    bits = row.view(np.int32)
    mb = np.int32(0)
    for k in range(bits.shape[0]):
        b = bits[k]
        mb = b if b > mb else mb
    mx = np.int32(mb + 0).view(np.float32)
    if mx > 0:
        inv = np.float32(QMAX) / mx
        out_s[j] = mx / np.float32(QMAX)
    else:
        inv = np.float32(0.0)
        out_s[j] = np.float32(1.0)
    for k in range(row.shape[0]):
        out_q[j, k] = np.int32(min(row[k] * inv + np.float32(0.5), np.float32(QMAX)))


@njit(cache=True, fastmath=True)
def quantize_rows(h, out_q, out_s):
    """Each row of ``relu(h)`` (``h [m, H]`` float32 pre-activations) cut to int8 codes
    ``out_q`` with its scale ``out_s`` (the module docstring)."""
    m, H = h.shape
    row = np.empty(H, np.float32)
    for j in range(m):
        for k in range(H):
            row[k] = max(h[j, k], np.float32(0.0))
        _cut_row(row, out_q, out_s, j)


@njit(cache=True, fastmath=True)
def cut_first_layer(pos_buf, owner, act_rows, slots, out_q, out_s):
    """The int8 codes of ``relu(pos_buf[owner[j]] + act_rows[slots[j]])``: the first layer
    from its observation parts (bias included) and action parts, cut as it is made."""
    H = pos_buf.shape[1]
    row = np.empty(H, np.float32)
    for j in range(owner.shape[0]):
        p = owner[j]
        r = slots[j]
        for k in range(H):
            row[k] = max(pos_buf[p, k] + act_rows[r, k], np.float32(0.0))
        _cut_row(row, out_q, out_s, j)


@njit(cache=True, fastmath=True)
def first_layer_codes(obs, w_obs, b, owner, act_rows, slots, pos_buf, out_q, out_s):
    """:func:`agents.trained.first_layer` and :func:`quantize_rows` in one pass: the int8
    codes of ``relu(obs[owner[j]] @ w_obs + b + act_rows[slots[j]])``."""
    observation_part(obs, w_obs, b, pos_buf)
    cut_first_layer(pos_buf, owner, act_rows, slots, out_q, out_s)


@njit(cache=True, fastmath=True)
def requantize(acc, s_row, w_s, b, out_q, out_s):
    """The next layer's int8 input from a layer's int32 products ``acc [m, O]``: the rows of
    ``relu(acc * s_row[:, None] * w_s + b)``, each cut with its own scale."""
    m, O = acc.shape
    row = np.empty(O, np.float32)
    for j in range(m):
        sr = s_row[j]
        for o in range(O):
            row[o] = max(np.float32(acc[j, o]) * sr * w_s[o] + b[o], np.float32(0.0))
        _cut_row(row, out_q, out_s, j)


@njit(cache=True, fastmath=True)
def output_layer(acc, s_row, w_s, b, w_out, b_out, q):
    """``q[j] = relu(acc[j] * s_row[j] * w_s + b) @ w_out + b_out``: the last hidden layer's
    values (from its int32 products) through the float32 output layer ``[O] -> 1``."""
    m, O = acc.shape
    for j in range(m):
        sr = s_row[j]
        t = b_out
        for o in range(O):
            v = np.float32(acc[j, o]) * sr * w_s[o] + b[o]
            if v > 0:
                t += v * w_out[o]
        q[j] = t


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
    the scores follow the learner's updates."""

    def __init__(self, layers: Sequence[torch.nn.Linear]):
        self.layers = list(layers)
        if not self.layers or self.layers[-1].out_features != 1:
            raise ValueError("Int8Body needs the layers after the first, ending in one output")
        self._key: Optional[tuple] = None

    def _prepare(self) -> None:
        # the layers' tensors, read through Module.__getattr__ once per call (not per check)
        tensors = [t for l in self.layers for t in (l.weight, l.bias)]
        key = tuple((t.data_ptr(), t._version) for t in tensors)
        if key == self._key:
            return
        self.hidden = []
        for l in self.layers[:-1]:
            q, w_s = quantize_weight(l.weight.detach().cpu().numpy())
            self.hidden.append((torch.from_numpy(q), w_s,
                                l.bias.detach().cpu().numpy().astype(np.float32)))
        out = self.layers[-1]
        self.w_out = out.weight.detach().cpu().numpy()[0].astype(np.float32)
        self.b_out = np.float32(out.bias.detach().cpu().numpy()[0])
        self._key = key

    def __call__(self, h: np.ndarray) -> np.ndarray:
        """Scores ``[m]`` float32 of the first layer's pre-activations ``h [m, H]`` float32."""
        h = np.ascontiguousarray(h, np.float32)
        xq = np.empty(h.shape, np.int8)
        xs = np.empty(h.shape[0], np.float32)
        quantize_rows(h, xq, xs)
        return self.from_codes(xq, xs)

    def first_layer(self, obs, w_obs, b, owner, act_rows, slots=None,
                    pos_buf: Optional[np.ndarray] = None) -> np.ndarray:
        """Scores ``[m]`` with the first layer given factored (the arguments of
        :func:`agents.trained.factored_first_layer`), its values cut as they are made
        (:func:`first_layer_codes`); ``pos_buf``: the observation parts ``obs @ w_obs + b``
        already computed (``[len(obs), H]`` float32, e.g. by
        :func:`agents.trained.observation_part_cached`)."""
        obs, owner, act_rows, slots = _trained.first_layer_inputs(obs, w_obs, b, owner, act_rows, slots)
        m, H = len(owner), len(b)
        xq = np.empty((m, H), np.int8)
        xs = np.empty(m, np.float32)
        if pos_buf is None:
            first_layer_codes(obs, w_obs, b, owner, act_rows, slots,
                              np.empty((len(obs), H), np.float32), xq, xs)
        else:
            if pos_buf.shape != (len(obs), H) or pos_buf.dtype != np.float32:
                raise ValueError(f"pos_buf of shape {pos_buf.shape} {pos_buf.dtype}; expected "
                                 f"({len(obs)}, {H}) float32")
            cut_first_layer(pos_buf, owner, act_rows, slots, xq, xs)
        return self.from_codes(xq, xs)

    def from_codes(self, xq: np.ndarray, xs: np.ndarray) -> np.ndarray:
        """Scores ``[m]`` float32 of the first layer's values already cut: codes ``xq [m, H]``
        int8 and row scales ``xs [m]`` (:func:`first_layer_codes`)."""
        self._prepare()
        m = xq.shape[0]
        q = np.empty(m, np.float32)
        if m == 0:
            return q
        if not self.hidden:  # one hidden layer: the output layer on the cut first layer
            width = xq.shape[1]
            output_layer(xq.astype(np.int32), xs, np.ones(width, np.float32),
                         np.zeros(width, np.float32), self.w_out, self.b_out, q)
            return q
        x = torch.from_numpy(xq)
        for i, (wq, w_s, b) in enumerate(self.hidden):
            acc = torch._int_mm(x, wq).numpy()
            if i == len(self.hidden) - 1:
                output_layer(acc, xs, w_s, b, self.w_out, self.b_out, q)
            else:
                nq = np.empty(acc.shape, np.int8)
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
