"""The factored scoring of the Q network (``train.dmc.FactoredScorer``, ``agents.trained``'s
numpy ``QNetwork`` with its per-id cache ``ActionRows``) against the plain network: an
``nn.Sequential`` MLP on the concatenation ``[obs; features(a)]`` of every scored action, the
form the factored layer replaces.

* on positions of every registered game met in self-play (a few hundred actions each, every
  kind of decision the first steps of a deal reach): ``QNet.forward``, ``FactoredScorer``
  (with ids: cached action part, cold and warm; with feature rows) and the numpy network
  (``scores_batch``, ``scores_ids``) equal the Sequential's scores to float32 rounding;
* gradients of an MSE loss through ``QNet.forward`` equal the Sequential's (the first layer's
  gradient is the concatenation of the two parts');
* the cache follows the weights: after an Adam step or ``load_state_dict`` the scorer gives
  the new network's scores;
* the shipped weight files (every one made for a game's default options): the agent's cached
  scores, the torch scorer with the same weights and the Sequential agree, and ``act_batch``
  plays the Sequential's argmax;
* ``dtype="bfloat16"``: a shipped network's scores near float32's, the same best moves;
* ``ActionRows``: bad ids are clear errors, eviction at ``max_rows`` keeps scores right, a
  pickled cache comes back empty.
"""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from cardenvs.agents.trained import (WEIGHTS_DIR, ActionRows, QNetwork, TrainedAgent,  # noqa: E402
                            default_weights_path)
from cardenvs import GAMES  # noqa: E402
from cardenvs.agents.context import make_context  # noqa: E402
from cardenvs.train.dmc import FactoredScorer, QNet, TorchPolicy, export_weights  # noqa: E402
from cardenvs.train.selfplay import SelfPlay  # noqa: E402

HIDDEN = (64, 32, 16)


def _positions(name: str, steps=(0, 3, 9, 20), n: int = 24, seed: int = 0):
    """``(obs, feats, owner, ids)`` batches of the positions self-play meets in ``name``."""
    sp = SelfPlay(name, n, seed=seed, eps=0.3)
    rng = np.random.default_rng(seed)
    out = []
    for t in range(max(steps) + 1):
        pos = sp.prepare()
        if t in steps and pos.m:
            out.append((pos.obs.copy(), pos.feats.copy(), pos.owner.copy(), pos.ids.copy()))
        sp.commit(rng.normal(size=pos.m).astype(np.float32))
    assert out
    return sp.game, out


def _net(game, seed: int, hidden=HIDDEN) -> QNet:
    torch.manual_seed(seed)
    net = QNet(game.layout.size, game.action_features(np.zeros(1, np.int64)).shape[1], hidden)
    with torch.no_grad():  # biases and weights away from the default init's small range
        for layer in net.layers:
            layer.bias.uniform_(-0.5, 0.5)
            layer.weight.mul_(3.0)
    return net


def _sequential(net: QNet) -> nn.Sequential:
    """The same MLP as one Linear per layer on the concatenated input, weights copied."""
    mods = []
    for i, layer in enumerate(net.layers):
        if i:
            mods.append(nn.ReLU())
        lin = nn.Linear(layer.in_features, layer.out_features)
        with torch.no_grad():
            lin.weight.copy_(layer.weight)
            lin.bias.copy_(layer.bias)
        mods.append(lin)
    return nn.Sequential(*mods)


def _plain(seq: nn.Sequential, obs, feats, owner, ctx=None) -> np.ndarray:
    parts = [torch.from_numpy(obs)[torch.from_numpy(owner)], torch.from_numpy(feats)]
    if ctx is not None:  # a network's context inputs come last (agents/context.py)
        parts.append(torch.from_numpy(ctx))
    x = torch.cat(parts, dim=1)
    with torch.no_grad():
        return seq(x)[:, 0].numpy()


def _close(got, want) -> None:
    got = np.asarray(got.detach().numpy() if hasattr(got, "detach") else got, np.float64)
    tol = 1e-5 * max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=tol)


@pytest.mark.parametrize("name", sorted(GAMES))
def test_factored_scores_equal_the_plain_mlp(name, tmp_path):
    game, batches = _positions(name)
    net = _net(game, seed=len(name))
    seq = _sequential(net)
    scorer = FactoredScorer(net, game.action_features, game.n_actions)
    uncached = FactoredScorer(net, game.action_features, game.n_actions, cache=False)
    path = str(tmp_path / "w.npz")
    export_weights(net, path, {"game": name}, dtype=np.float32)
    qn = QNetwork(path)
    rows = qn.action_rows(game.n_actions)
    for obs, feats, owner, ids in batches:
        want = _plain(seq, obs, feats, owner).astype(np.float64)
        assert want.std() > 1e-2  # the scores differ between actions: the check can fail
        with torch.no_grad():
            _close(net(torch.from_numpy(obs), torch.from_numpy(feats), torch.from_numpy(owner)), want)
        _close(scorer(obs, feats, owner), want)  # feature rows, no cache
        _close(scorer(obs, None, owner, ids), want)  # cache cold (these ids computed now)
        _close(scorer(obs, None, owner, ids), want)  # warm
        _close(uncached(obs, None, owner, ids), want)
        _close(qn.scores_batch(obs, feats, owner), want)
        _close(qn.scores_ids(obs, ids, owner, rows, game.action_features), want)
        _close(qn.scores_ids(obs, ids, owner, rows, game.action_features), want)
    assert 0 < scorer.rows.used == rows.used <= game.n_actions
    assert scorer.rows.used == len(np.unique(np.concatenate([b[3] for b in batches])))


@pytest.mark.parametrize("name", ["doudizhu", "wakeng", "wulong"])
def test_gradients_through_the_factored_layer_equal_the_plain_mlp(name):
    game, batches = _positions(name, steps=(5,))
    obs, feats, owner, ids = batches[0]
    net = _net(game, seed=3)
    seq = _sequential(net)
    tgt = torch.from_numpy(np.random.default_rng(1).normal(size=len(ids)).astype(np.float32))
    q = net(torch.from_numpy(obs), torch.from_numpy(feats), torch.from_numpy(owner))
    torch.nn.functional.mse_loss(q, tgt).backward()
    x = torch.cat([torch.from_numpy(obs)[torch.from_numpy(owner)], torch.from_numpy(feats)], dim=1)
    torch.nn.functional.mse_loss(seq(x)[:, 0], tgt).backward()
    plain = [m for m in seq if isinstance(m, nn.Linear)]
    for a, b in zip(net.layers, plain):
        for pa, pb in ((a.weight, b.weight), (a.bias, b.bias)):
            assert pb.grad.abs().max() > 0
            scale = float(pb.grad.abs().max())
            np.testing.assert_allclose(pa.grad.numpy(), pb.grad.numpy(), rtol=1e-4, atol=1e-5 * scale)


def test_the_cache_follows_the_weights():
    game, batches = _positions("wakeng", steps=(2, 8))
    net = _net(game, seed=4)
    scorer = FactoredScorer(net, game.action_features, game.n_actions)
    policy = TorchPolicy(game, net, torch.device("cpu"))
    obs, feats, owner, ids = batches[0]
    before = scorer(obs, None, owner, ids).numpy().copy()
    opt = torch.optim.Adam(net.parameters(), lr=0.05)
    q = net(torch.from_numpy(obs), torch.from_numpy(feats), torch.from_numpy(owner))
    q.pow(2).mean().backward()
    opt.step()
    want = _plain(_sequential(net), obs, feats, owner)
    assert np.abs(want - before).max() > 1e-2  # the step changed the scores
    _close(scorer(obs, None, owner, ids), want)
    sizes = np.bincount(owner, minlength=len(obs))
    _close(policy.scores(obs, ids, sizes), want)
    other = _net(game, seed=5)
    net.load_state_dict(other.state_dict())
    _close(scorer(obs, None, owner, ids), _plain(_sequential(other), obs, feats, owner))


@pytest.mark.parametrize("name", ["wakeng", "doudizhu", "wulong"])
def test_keyed_observation_parts_equal_fresh_ones(name):
    """``FactoredScorer(..., keys=)`` updates each key's observation part over the inputs that
    changed since its last position: along self-play (every game and seat a key, deals ending
    and starting under the same key, a key's age passing ``MAX_AGE``), across an optimizer
    step and a ``load_state_dict``, its float32 scores equal the plain MLP's, and its
    bfloat16 and int8 scores the unkeyed scorer's in the same dtype but for rare rounding
    flips."""
    sp = SelfPlay(name, 12, seed=3, eps=0.3)
    game = sp.game
    P = game.n_players
    net = _net(game, seed=6)
    keyed = {dt: FactoredScorer(net, game.action_features, game.n_actions, dtype=dt)
             for dt in ("float32", "bfloat16", "int8")}
    plain = {dt: FactoredScorer(net, game.action_features, game.n_actions, dtype=dt)
             for dt in ("bfloat16", "int8")}
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    rng = np.random.default_rng(0)
    deals = diffs = rows = 0
    flips = {"bfloat16": 0, "int8": 0}
    for t in range(160):
        pos = sp.prepare()
        if t == 70 and pos.n:  # the learner steps: every key's kept part is stale
            q = net(torch.from_numpy(pos.obs.copy()), torch.from_numpy(pos.feats.copy()),
                    torch.from_numpy(pos.owner.copy()))
            q.pow(2).mean().backward()
            opt.step()
        if t == 120:
            net.load_state_dict(_net(game, seed=7).state_dict())
        if pos.n:
            keys = pos.slot * P + sp.vg.seat[pos.slot]
            want = _plain(_sequential(net), pos.obs, pos.feats, pos.owner)
            _close(keyed["float32"](pos.obs, None, pos.owner, pos.ids, keys=keys), want)
            spread = max(want.max() - want.min(), 1e-6)
            for dt in ("bfloat16", "int8"):
                # the same kernels after the first layer, whose values differ only in float
                # rounding: now and then one rounds to the neighbouring bfloat16 value or
                # int8 code
                got = keyed[dt](pos.obs, None, pos.owner, pos.ids, keys=keys).numpy()
                d = np.abs(got - plain[dt](pos.obs, None, pos.owner, pos.ids).numpy()) / spread
                flips[dt] += int((d > 1e-4).sum())
                assert d.max() <= 0.05
            rows += pos.m
            diffs += int((keyed["float32"]._c_age[keys] > 0).sum())
        deals += int(sp.vg.done.sum())
        sp.commit(rng.normal(size=pos.m).astype(np.float32))
    assert deals >= 12 and diffs > 300  # keys were reused across deals, mostly by differences
    assert max(flips.values()) <= 0.05 * rows, (flips, rows)
    assert keyed["float32"]._c_age.max() <= FactoredScorer.MAX_AGE


def test_cached_observation_part_kernel_refreshes_and_is_exact():
    """:func:`agents.trained.observation_part_cached` against :func:`observation_part` on a
    random walk of sparse observations under 3 keys, with ``max_age = 4``: the same values
    (float rounding), a fresh computation every fifth position of a key, and a key marked
    ``-1`` computed afresh."""
    from cardenvs.agents.trained import observation_part, observation_part_cached

    rng = np.random.default_rng(1)
    D, H = 60, 24
    w = rng.normal(size=(D, H)).astype(np.float32)
    b = rng.normal(size=H).astype(np.float32)
    c_obs = np.zeros((3, D), np.float32)
    c_part = np.zeros((3, H), np.float32)
    c_age = np.full(3, -1, np.int64)
    state = np.zeros((3, D), np.float32)
    ages = []
    for t in range(60):
        keys = rng.permutation(3)[:2]
        for k in keys:  # each key's observation drifts: a few entries change
            ch = rng.choice(D, 4, replace=False)
            state[k, ch] = np.where(rng.random(4) < 0.5, 0.0, rng.integers(1, 5, 4) * 0.25)
        obs = state[keys].copy()
        got = np.empty((2, H), np.float32)
        want = np.empty((2, H), np.float32)
        observation_part_cached(obs, w, b, keys.astype(np.int64), c_obs, c_part, c_age, 4, got)
        observation_part(obs, w, b, want)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        ages.append(c_age[keys].copy())
        if t == 30:
            c_part[:] = 99.0  # garbage in every kept part ...
            c_age[:] = -1  # ... is never read once the keys are marked stale
    ages = np.concatenate(ages)
    assert ages.max() == 4 and (ages == 0).sum() >= 12


def test_cached_observation_part_skips_unchanged_blocks_exactly():
    """The block-skipping difference of :func:`agents.trained.observation_part_cached` (16
    entries compared at a time by their bits) finds the same entries in the same order as a
    scan of every entry: the same floats to the bit, over observations whose width is not a
    multiple of the block, with ``-0.0`` entries, changes in the tail and whole blocks
    unchanged."""
    from cardenvs.agents.trained import _add_rows, _entries, observation_part_cached

    def reference(obs, w, b, keys, c_obs, c_part, c_age, max_age, out):
        idx = np.zeros(obs.shape[1] + 4, np.int64)
        val = np.zeros(obs.shape[1] + 4, np.float32)
        for p, key in enumerate(keys):
            fresh = c_age[key] < 0 or c_age[key] >= max_age
            k = _entries(obs[p], c_obs[key], fresh, idx, val)
            out[p] = b if fresh else c_part[key]
            c_age[key] = 0 if fresh else c_age[key] + 1
            _add_rows(out[p], w, idx, val, k)
            c_obs[key], c_part[key] = obs[p], out[p]

    rng = np.random.default_rng(7)
    D, H, K = 87, 40, 5  # 5 full blocks and a tail of 7
    w = rng.normal(size=(D, H)).astype(np.float32)
    b = rng.normal(size=H).astype(np.float32)
    caches = [[np.zeros((K, D), np.float32), np.zeros((K, H), np.float32), np.full(K, -1, np.int64)]
              for _ in range(2)]
    state = np.zeros((K, D), np.float32)
    changed_tail = 0
    for t in range(200):
        keys = rng.choice(K, 3, replace=False).astype(np.int64)
        for k in keys:
            ch = rng.choice(D, int(rng.integers(0, 6)), replace=False)
            changed_tail += int((ch >= 80).sum())
            state[k, ch] = rng.choice(np.float32([0.0, -0.0, 0.05, 0.25, 1.0, 3.0]), len(ch))
        obs = state[keys].copy()
        got, want = np.empty((3, H), np.float32), np.empty((3, H), np.float32)
        observation_part_cached(obs, w, b, keys, *caches[0], 6, got)
        reference(obs, w, b, keys, *caches[1], 6, want)
        np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))
        np.testing.assert_array_equal(caches[0][1].view(np.int32), caches[1][1].view(np.int32))
        assert np.array_equal(caches[0][0], caches[1][0])  # the kept observations: equal values
        np.testing.assert_array_equal(caches[0][2], caches[1][2])
    assert changed_tail > 20 and (caches[0][2] > 0).any()


def test_keyed_scoring_refuses_bad_keys():
    game, batches = _positions("wakeng", steps=(2,))
    obs, feats, owner, ids = batches[0]
    scorer = FactoredScorer(_net(game, seed=1), game.action_features, game.n_actions)
    with pytest.raises(ValueError, match="keys"):
        scorer(obs, None, owner, ids, keys=np.arange(len(obs) + 1))
    with pytest.raises(ValueError, match="must lie in"):
        scorer(obs, None, owner, ids, keys=np.arange(len(obs)) - 1)
    with pytest.raises(ValueError, match="must lie in"):
        scorer(obs, None, owner, ids, keys=np.arange(len(obs)) + FactoredScorer.MAX_KEYS)
    # a key repeated within a call is updated from the position before it: still exact
    same = scorer(obs, None, owner, ids, keys=np.zeros(len(obs), np.int64)).numpy()
    _close(same, scorer(obs, None, owner, ids).numpy())


def _shipped():
    """``(game, path)`` of every shipped weight file made for a game's default options (the
    ``trained`` agents and the other files beside them)."""
    out = []
    for f in sorted(os.listdir(WEIGHTS_DIR)):
        if not f.endswith(".npz"):
            continue
        meta = QNetwork(os.path.join(WEIGHTS_DIR, f)).meta
        if meta["game"] in GAMES and not meta.get("options"):
            out.append((meta["game"], os.path.join(WEIGHTS_DIR, f)))
    assert {default_weights_path(g) for g in GAMES} <= {p for _, p in out}
    return out


def _shipped_net(path: str) -> QNet:
    """A QNet holding a weight file's arrays (float32 of the stored values), as --init loads them."""
    qn = QNetwork(path)
    net = QNet(qn.obs_dim, qn.feat_dim, [len(qn.b0)] + [w.shape[1] for w, _ in qn.layers[:-1]],
               context=qn.context)
    net.load_numpy(qn)
    return net


@pytest.mark.parametrize("name,path", _shipped())
def test_shipped_weights_score_identically(name, path):
    game, batches = _positions(name, steps=(1, 6, 15))
    agent = TrainedAgent(game, weights=path)
    qn = agent.net
    net = _shipped_net(path)
    seq = _sequential(net)
    context = make_context(qn.context, game) if qn.ctx_dim else None
    scorer = FactoredScorer(net, game.action_features, game.n_actions, context=context)
    for obs, feats, owner, ids in batches:
        ctx = None if context is None else context(obs, ids, owner)
        want = _plain(seq, obs, feats, owner, ctx).astype(np.float64)
        _close(scorer(obs, None, owner, ids), want)
        _close(qn.scores_batch(obs, feats, owner, ctx), want)
        for p in np.unique(owner)[:5]:  # one position at a time: the agent's own scores
            _close(agent.scores(obs[p], ids[owner == p]), want[owner == p])
        # act_batch plays the argmax
        masks = np.zeros((len(obs), game.n_actions), np.int8)
        masks[owner, ids] = 1
        order = np.lexsort((ids, owner))  # act_batch scores the ids in mask order
        o_ids, o_owner, o_q = ids[order], owner[order], want[order]
        best = [o_ids[o_owner == p][np.argmax(o_q[o_owner == p])] for p in range(len(obs))]
        gaps = [np.sort(o_q[o_owner == p])[-2:] for p in range(len(obs))]
        clear = np.array([len(g) < 2 or g[1] - g[0] > 1e-4 for g in gaps])
        got = agent.act_batch(obs, masks)
        np.testing.assert_array_equal(got[clear], np.asarray(best)[clear])


def test_action_rows_errors_eviction_and_pickle():
    game, batches = _positions("wakeng", steps=(0, 4, 9))
    net = _net(game, seed=6)
    seq = _sequential(net)
    rows = ActionRows(game.n_actions, HIDDEN[0], max_rows=12)
    scorer = FactoredScorer(net, game.action_features, game.n_actions)
    scorer.rows = rows
    evicted = False
    for obs, feats, owner, ids in batches:
        for p in np.unique(owner):  # one position at a time: the cache fills up and starts again
            keep = owner == p
            sub = np.zeros(int(keep.sum()), np.int64)
            before = rows.used
            _close(scorer(obs[p:p + 1], None, sub, ids[keep]), _plain(seq, obs[p:p + 1], feats[keep], sub))
            evicted |= rows.used < before
            assert rows.used <= 12
        # a call with more distinct ids than max_rows is computed without the cache
        _close(scorer(obs, None, owner, ids), _plain(seq, obs, feats, owner))
    assert evicted
    with pytest.raises(ValueError, match="action ids must lie in"):
        rows.take(np.array([-1]), lambda u: np.zeros((len(u), HIDDEN[0])))
    with pytest.raises(ValueError, match="action ids must lie in"):
        rows.take(np.array([game.n_actions]), lambda u: np.zeros((len(u), HIDDEN[0])))
    with pytest.raises(TypeError, match="integers"):
        rows.take(np.array([0.5]), lambda u: np.zeros((len(u), HIDDEN[0])))
    assert rows.take(np.arange(13), lambda u: np.zeros((len(u), HIDDEN[0]))) is None
    with pytest.raises(ValueError, match="compute returned shape"):
        ActionRows(game.n_actions, 4).take(np.array([1]), lambda u: np.zeros((1, 5)))
    with pytest.raises(ValueError, match="n_actions, width, max_rows"):
        ActionRows(0, 4)
    back = pickle.loads(pickle.dumps(rows))
    assert back.used == 0 and back.max_rows == 12 and (back.slot == -1).all()



# shipped networks without context inputs, as train.dmc's self-play takes them (the
# network-only files of every game take context inputs since 2026-12-03): the Dou Dizhu network
# fitted against RLCard's model (its features are the default action set's)
@pytest.mark.parametrize("name,file", [("doudizhu", "doudizhu_rlcard_network.npz")])
def test_bfloat16_scores_stay_near_float32(name, file):
    """``dtype="bfloat16"`` (``train.dmc --act-dtype``): a trained network's scores within 1% of
    their spread of the float32 Sequential's (measured in Dou Dizhu: 0.3-0.4%), the same best
    action in 95% of positions or more, float32 out; the plain-forward path
    (``torch_scorer`` without a game) under autocast likewise."""
    from cardenvs.train.selfplay import torch_scorer

    game, batches = _positions(name, steps=(1, 6, 15))
    net = _shipped_net(os.path.join(WEIGHTS_DIR, file))
    assert not net.ctx_dim
    seq = _sequential(net)
    half = FactoredScorer(net, game.action_features, game.n_actions, dtype="bfloat16")
    plain_half = torch_scorer(net, dtype="bfloat16")
    same = total = 0
    for obs, feats, owner, ids in batches:
        want = _plain(seq, obs, feats, owner).astype(np.float64)
        for got in (half(obs, None, owner, ids), plain_half(obs, feats, owner)):
            assert got.dtype == torch.float32
            got = got.numpy().astype(np.float64)
            assert np.abs(got - want).max() <= 0.01 * (want.max() - want.min())
            assert np.abs(got - want).max() > 0  # bfloat16 indeed (float32 would be exact)
        got = half(obs, None, owner, ids).numpy()
        for p in np.unique(owner):
            k = owner == p
            same += int(np.argmax(got[k]) == np.argmax(want[k]))
            total += 1
    assert total > 20 and same / total >= 0.95, (same, total)
    with pytest.raises(ValueError, match="act_dtype"):
        FactoredScorer(net, game.action_features, game.n_actions, dtype="float16")
