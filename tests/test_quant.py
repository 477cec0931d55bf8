"""int8 scoring for self-play's acting (``train.quant``, ``train.dmc --act-dtype int8``).

* the numba kernels against :func:`train.quant.reference_scores` (the same scheme in plain
  numpy, float64) on random networks of several depths, and on literal rows whose codes are
  worked out by hand;
* ``FactoredScorer(dtype="int8")`` on self-play positions of every game equals the reference
  applied to the float32 first layer, and the fused first layer equals the unfused one;
* the shipped networks (with and without context inputs): scores within 2% of their spread
  of float32's, the same best action in 95% of positions or more;
* the int8 weights follow the learner's (an optimizer step, ``load_state_dict``);
* where int8 cannot score (a plain forward, a GPU), a clear ``ValueError``.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from cardenvs.agents.context import make_context  # noqa: E402
from cardenvs.agents.trained import WEIGHTS_DIR, factored_first_layer  # noqa: E402
from cardenvs import GAMES  # noqa: E402
from cardenvs.train.dmc import FactoredScorer, QNet  # noqa: E402
from cardenvs.train.quant import (EXACT_INPUTS, QMAX, Int8Body, first_layer_codes, int8_matmul,  # noqa: E402
                         onednn_available, prepack, quantize_rows,
                         quantize_weight, reference_scores)
from test_factored import _net, _plain, _positions, _sequential, _shipped_net  # noqa: E402


def _layers(net: QNet) -> list:
    return [(l.weight.detach().numpy(), l.bias.detach().numpy()) for l in net.layers[1:]]


def _spread_close(got, want, frac: float) -> None:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert np.abs(got - want).max() <= frac * max(want.max() - want.min(), 1e-9)


def _equal_to_reference(pairs) -> None:
    """The kernels' scores against the numpy reference's, ``pairs`` of ``(got, want)`` per
    batch: float32 against float64 arithmetic may round a value at a .5 boundary to the
    other code (one step, 1/127 of its row's largest), so, pooled over the batches, 99% of
    the scores agree to 1e-4 of their batch's spread and all to 5e-3 (one flip in a batch of
    57 is 1.8% of that batch)."""
    d = []
    for got, want in pairs:
        got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
        d.append(np.abs(got - want) / max(want.max() - want.min(), 1e-9))
    d = np.concatenate(d)
    assert (d <= 1e-4).mean() >= 0.99 and d.max() <= 5e-3, (d.max(), (d > 1e-4).mean())


def test_rows_are_cut_as_worked_out_by_hand():
    """Row ``[-1, 0, 0.5, 2]``: ReLU -> ``[0, 0, 0.5, 2]``, scale 2/127, codes ``round(v *
    63.5)`` = ``[0, 0, 32, 127]`` (31.75 rounds up); an all-negative row is all zeros with
    scale 1."""
    h = np.array([[-1.0, 0.0, 0.5, 2.0], [-3.0, -0.1, -2.0, -5.0]], np.float32)
    q = np.empty(h.shape, np.int8)
    s = np.empty(2, np.float32)
    quantize_rows(h, q, s)
    assert q.tolist() == [[0, 0, 32, 127], [0, 0, 0, 0]]
    assert s[0] == pytest.approx(2.0 / 127) and s[1] == 1.0
    w = np.array([[0.5, -1.0, 0.25], [0.0, 0.0, 0.0]], np.float32)  # [out=2, in=3]
    wq, ws = quantize_weight(w)
    assert wq.shape == (3, 2) and wq.dtype == np.int8
    assert wq[:, 0].tolist() == [64, -127, 32] and ws[0] == pytest.approx(1.0 / 127)  # 63.5 -> 64
    assert wq[:, 1].tolist() == [0, 0, 0] and ws[1] == 1.0  # an all-zero channel


@pytest.mark.parametrize("hidden", [(24,), (48, 16), (64, 32, 16)])
def test_kernels_equal_the_numpy_reference(hidden):
    """:class:`Int8Body` (numba, ``torch._int_mm``) against :func:`reference_scores` on a
    network of each depth, and both within a few % of the float32 network."""
    rng = np.random.default_rng(len(hidden))
    torch.manual_seed(len(hidden))
    sizes = [40, *hidden, 1]
    net = torch.nn.ModuleList(torch.nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))
    h = rng.normal(0.0, 1.0, (300, 40)).astype(np.float32)
    layers = [(l.weight.detach().numpy(), l.bias.detach().numpy()) for l in net]
    got = Int8Body(net)(h)
    want = reference_scores(h, layers)
    assert got.dtype == np.float32 and got.shape == (300,)
    _equal_to_reference([(got, want)])
    x = torch.relu(torch.from_numpy(h))
    with torch.no_grad():
        for i, l in enumerate(net):
            x = l(x)
            if i < len(net) - 1:
                x = torch.relu(x)
    _spread_close(got, x[:, 0].numpy(), 0.05)
    assert not np.allclose(got, x[:, 0].numpy(), rtol=0, atol=1e-7)  # int8 indeed
    assert Int8Body(net)(h[:0]).shape == (0,)
    # both matmuls give the same products, so the same scores to the bit
    np.testing.assert_array_equal(Int8Body(net, gemm="int_mm")(h), got)
    if onednn_available():
        body = Int8Body(net, gemm="onednn")
        for _ in range(Int8Body.PACK_AFTER + 1):
            np.testing.assert_array_equal(body(h), got)
        assert body.packed  # the weights stayed the same: packed for oneDNN, same scores
        np.testing.assert_array_equal(body(h[:1]), got[:1])  # one row


def test_int8_body_packs_only_weights_that_stay():
    """On oneDNN the weights are packed once they have stayed the same for ``PACK_AFTER``
    calls (packing costs more than a self-play step); a change of weights unpacks them, and
    the scores follow the change the same with or without packing."""
    if not onednn_available():
        pytest.skip("torch's oneDNN int8 linear layer is not available here")
    torch.manual_seed(1)
    net = torch.nn.ModuleList([torch.nn.Linear(32, 16), torch.nn.Linear(16, 8), torch.nn.Linear(8, 1)])
    h = np.random.default_rng(1).normal(size=(70, 32)).astype(np.float32)
    body, plain = Int8Body(net, gemm="onednn"), Int8Body(net, gemm="int_mm")
    for _ in range(Int8Body.PACK_AFTER):
        body(h)
    assert not body.packed
    body(h)
    assert body.packed and all(p is not None for *_, p in body.hidden)
    with torch.no_grad():
        net[1].weight.mul_(-0.5)  # a learner's update
    got = body(h)
    assert not body.packed and all(p is None for *_, p in body.hidden)
    np.testing.assert_array_equal(got, plain(h))
    for _ in range(Int8Body.PACK_AFTER):
        got = body(h)
    assert body.packed
    np.testing.assert_array_equal(got, plain(h))


def test_int8_body_pickles_and_copies_after_use():
    """An :class:`Int8Body` that has scored (its weights packed, on oneDNN opaque tensors)
    pickles and deep-copies, and the copies score the same."""
    import copy
    import pickle

    torch.manual_seed(0)
    net = [torch.nn.Linear(16, 8), torch.nn.Linear(8, 4), torch.nn.Linear(4, 1)]
    body = Int8Body(net)
    h = np.random.default_rng(0).normal(size=(5, 16)).astype(np.float32)
    q = body(h)
    for _ in range(Int8Body.PACK_AFTER + 1):
        body(h)  # packed for oneDNN where it runs
    for other in (pickle.loads(pickle.dumps(body)), copy.deepcopy(body)):
        assert other.gemm == body.gemm and not other.packed
        np.testing.assert_array_equal(other(h), q)
    np.testing.assert_array_equal(body(h), q)  # the original still scores


def test_int8_matmul_is_exact_at_the_extremes():
    """The largest products a layer can have (127 x 127 x ``EXACT_INPUTS``, both signs) come
    back exact from both matmuls; a layer wider than that is refused on oneDNN."""
    x = np.full((3, EXACT_INPUTS), QMAX, np.int8)
    for sign in (1, -1):
        w = np.full((EXACT_INPUTS, 5), sign * QMAX, np.int8)
        w[:, 4] = np.arange(EXACT_INPUTS) % 255 - QMAX  # mixed signs too
        want = x.astype(np.int64) @ w.astype(np.int64)
        got = int8_matmul(torch.from_numpy(x), torch.from_numpy(w))
        assert got.dtype == np.int32 and np.array_equal(got, want)
        if onednn_available():
            got = int8_matmul(torch.from_numpy(x), torch.from_numpy(w), prepack(w))
            assert got.dtype == np.float32 and np.array_equal(got.astype(np.int64), want)
    assert abs(int(want.min())) <= 2**24
    wide = [torch.nn.Linear(EXACT_INPUTS + 1, 4), torch.nn.Linear(4, 1)]
    assert Int8Body(wide).gemm == "int_mm"  # auto: the exact one
    with pytest.raises(ValueError, match="inputs"):
        Int8Body(wide, gemm="onednn")
    with pytest.raises(ValueError, match="gemm"):
        Int8Body(wide, gemm="mkl")


@pytest.mark.parametrize("name", sorted(GAMES))
def test_scorer_int8_on_self_play_positions(name):
    """``FactoredScorer(dtype="int8")``: the fused first layer and cut
    (:func:`first_layer_codes`) equals the float32 first layer cut afterwards, and the scores
    equal :func:`reference_scores` of the float32 first layer, on every game's positions."""
    game, batches = _positions(name)
    net = _net(game, seed=len(name))
    scorer = FactoredScorer(net, game.action_features, game.n_actions, dtype="int8")
    first = scorer.net.layers[0]
    before = {k: v.clone() for k, v in net.state_dict().items()}
    pairs = []
    for obs, feats, owner, ids in batches:
        got = scorer(obs, None, owner, ids)
        assert got.dtype == torch.float32 and got.shape == (len(ids),)
        slots = scorer.rows.take(ids, None)  # every id is cached by the call above
        h = factored_first_layer(obs, scorer._w_obs, scorer._b, owner, scorer.rows.rows, slots)
        q1, s1 = np.empty(h.shape, np.int8), np.empty(len(h), np.float32)
        quantize_rows(h, q1, s1)
        q2, s2 = np.empty(h.shape, np.int8), np.empty(len(h), np.float32)
        first_layer_codes(obs, scorer._w_obs, scorer._b, owner, scorer.rows.rows, slots,
                          np.empty((len(obs), h.shape[1]), np.float32), q2, s2)
        assert np.abs(q1.astype(int) - q2).max() <= 1 and (q1 != q2).mean() < 1e-3
        np.testing.assert_allclose(s1, s2, rtol=1e-6)
        pairs.append((got.numpy(), reference_scores(h, _layers(net))))
        want = _plain(_sequential(net), obs, feats, owner)
        _spread_close(got.numpy(), want, 0.05)
    _equal_to_reference(pairs)
    assert first.weight.dtype == torch.float32
    # scoring in int8 leaves the learner's float32 weights as they were
    assert all(torch.equal(v, before[k]) for k, v in net.state_dict().items())


# shipped networks: without context inputs (as train.dmc self-plays them) and with them
@pytest.mark.parametrize("name,file", [("doudizhu", "doudizhu_rlcard_network.npz"),
                                       ("wakeng", "wakeng_network.npz"),
                                       ("doudizhu4", "doudizhu4_network.npz")])
def test_int8_scores_stay_near_float32(name, file):
    """A trained network's int8 scores within 4% of their spread of float32's, the same best
    action in 90% of positions or more, and where not, a near tie: the action int8 picks
    scores within 3% of the spread of float32's best.  Measured (2026-12-05) over ten
    samples of positions like this one (seeds 0-9) per network: the largest error 1.2-2.7%
    of the spread (the median sample 1.0-1.8%; bfloat16: at most 0.7%), the same best
    action in 3,830 of 3,904 positions (the fewest in a sample: 92.7%), the largest near-tie
    gap 0.7% of the spread."""
    game, batches = _positions(name, steps=(1, 4, 8, 12, 16, 20), n=32)
    net = _shipped_net(os.path.join(WEIGHTS_DIR, file))
    context = make_context(net.context, game) if net.ctx_dim else None
    seq = _sequential(net)
    scorer = FactoredScorer(net, game.action_features, game.n_actions, dtype="int8",
                            context=context)
    same = total = 0
    for obs, feats, owner, ids in batches:
        ctx = None if context is None else context(obs, ids, owner)
        want = _plain(seq, obs, feats, owner, ctx).astype(np.float64)
        got = scorer(obs, None, owner, ids).numpy().astype(np.float64)
        _spread_close(got, want, 0.04)
        spread = want.max() - want.min()
        for p in np.unique(owner):
            k = owner == p
            pick, best = np.argmax(got[k]), np.argmax(want[k])
            same += int(pick == best)
            total += 1
            assert want[k][best] - want[k][pick] <= 0.03 * spread
    assert total > 80 and same / total >= 0.90, (same, total)


def test_int8_weights_follow_the_learner():
    """After an Adam step and after ``load_state_dict`` the int8 scores are the new
    network's (the int8 weights are made again when a layer's version changes)."""
    game, batches = _positions("wakeng", steps=(2,))
    obs, feats, owner, ids = batches[0]
    net = _net(game, seed=3)
    scorer = FactoredScorer(net, game.action_features, game.n_actions, dtype="int8")
    before = scorer(obs, None, owner, ids).numpy().copy()
    opt = torch.optim.Adam(net.parameters(), lr=0.05)
    loss = net(torch.from_numpy(obs), torch.from_numpy(feats), torch.from_numpy(owner)).pow(2).mean()
    loss.backward()
    opt.step()
    after = scorer(obs, None, owner, ids).numpy()
    assert np.abs(after - before).max() > 1e-3
    _spread_close(after, _plain(_sequential(net), obs, feats, owner), 0.05)
    other = _net(game, seed=4)
    net.load_state_dict(other.state_dict())
    _spread_close(scorer(obs, None, owner, ids).numpy(),
                  _plain(_sequential(other), obs, feats, owner), 0.05)


def test_int8_refuses_what_it_cannot_score():
    from cardenvs.train.selfplay import ActorPool, torch_scorer

    game, _ = _positions("wakeng", steps=(0,))
    net = _net(game, seed=1)
    with pytest.raises(ValueError, match="int8.*factored scorer"):
        torch_scorer(net, dtype="int8")  # no game: the plain forward
    with pytest.raises(ValueError, match="int8.*factored scorer"):
        ActorPool("wakeng", {}, net, net, actors=1, n=4, seed=0, eps=0.0, scale=1.0,
                  pool_frac=0.0, batch=8, fast=False, dtype="int8")
    flat = QNet(net.obs_dim, net.feat_dim, ())
    with pytest.raises(ValueError, match="hidden layer"):
        FactoredScorer(flat, game.action_features, game.n_actions, dtype="int8")
    with pytest.raises(ValueError, match="ending in one output"):
        Int8Body([torch.nn.Linear(4, 3)])
    assert QMAX == 127
