"""Context inputs (``agents/context.py``): the hand planner's view of each play as network
inputs, their values on literal positions, the weight format that carries them, numpy against
torch scoring, and a distillation fit that uses them."""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest
import torch

import cardenvs.agents.rules
from cardenvs import agents
import cardenvs
from cardenvs.agents.context import PICKS_DIM, PLAN_DIM, PlanContext, context_dim, make_context
from cardenvs.agents.trained import QNetwork, TrainedAgent, save_weights
from helpers import random_positions
from cardenvs.train import distill
from cardenvs.train.dmc import QNet, TorchPolicy, export_weights
from cardenvs.train.common import load_numpy_weights


def _dims(g):
    return g.layout.size, g.action_features(np.zeros(1, np.int64)).shape[1]


def _rows(g, *plays):
    return np.array([g.table.find(p) for p in plays], np.int64)


def test_plan_features_of_literal_dou_dizhu_plays():
    g = cardenvs.make_game("doudizhu")
    ctx = PlanContext(g)
    d = g.deck
    hand = d.parse("33K")
    # every card but the hand is unseen: the 2s and jokers beat a K
    others = d.full_counts() - hand
    f = ctx.features(hand, others, _rows(g, "K", "3", "33"))
    # "33K" is two turns (the pair, the K); the K leaves the pair (one turn): about -1 turn
    assert f[0, 0] == pytest.approx(-0.25, abs=0.02)
    # one 3 leaves "3K", two turns: no change
    assert f[1, 0] == pytest.approx(0.0, abs=0.02)
    assert f[2, 0] == pytest.approx(-0.25, abs=0.02)
    assert f[:, 1].tolist() == [0, 0, 0]  # none of them empties the hand
    assert f[:, 2].tolist() == [0, 0, 0]  # no wild jokers in Dou Dizhu
    assert f[:, 3].tolist() == [0, 0, 0]  # no dead hands in Dou Dizhu
    assert f[:, 4].tolist() == [0, 0, 0]  # a 2 or a joker is unseen: nothing is sure
    # the plan before: about 2 turns (of 20), after: about 1, 2 and 1
    assert f[:, 5] == pytest.approx([0.1] * 3, abs=0.01)
    assert f[:, 6] == pytest.approx([0.05, 0.1, 0.05], abs=0.01)
    # the whole hand as one play: goes out (change 0, cost left 0); the rocket with nothing
    # unseen above it is a sure winner
    hand = d.parse("BR")
    f = ctx.features(hand, d.full_counts() - hand, _rows(g, "BR", "R"))
    assert f[0, 1] == 1 and f[0, 0] == 0 and f[0, 6] == 0 and f[0, 4] == 1
    assert f[1, 1] == 0 and f[1, 4] == 0  # the red joker: the unseen bombs beat it
    f = ctx.features(hand, d.parse("3456"), _rows(g, "R"))
    assert f[0, 4] == 1  # ... and with no bomb unseen nothing does
    # with only a 3 unseen a 2 is a sure winner, with a 2 unseen not
    hand = d.parse("2")
    assert ctx.features(hand, d.parse("3"), _rows(g, "2"))[0, 4] == 1
    assert ctx.features(hand, d.parse("B"), _rows(g, "2"))[0, 4] == 0


def test_plan_features_in_lanxi_wulong_count_jokers_and_dead_hands():
    g = cardenvs.make_game("wulong")
    ctx = PlanContext(g)
    d = g.deck
    hand = d.parse("33B")  # two 3s (only in chains) and a small joker
    others = d.full_counts() - hand
    rows = _rows(g, "B")
    f = ctx.features(hand, others, rows)
    # the joker played as itself: one joker taken, and the hand left (only 3s) can make no play
    assert f[0, 2] == pytest.approx(0.25)
    assert f[0, 3] == 1
    # a play that does not empty the hand never reads as going out
    assert f[0, 1] == 0


@pytest.mark.parametrize("name", ["doudizhu", "wulong", "niangniang", "wakeng"])
def test_plan_features_on_random_positions(name):
    """Only card plays get features; going out agrees with the hand's size; the change of
    the plan is the difference of the two costs where neither is clipped."""
    g = cardenvs.make_game(name)
    ctx = make_context("plan", g)
    reader = ctx.agent.part
    n = 0
    for obs, legal in random_positions(g, 3, seed=5):
        f = ctx(obs[None, :], legal, np.zeros(len(legal), np.int64))
        assert f.shape == (len(legal), PLAN_DIM) and f.dtype == np.float32
        play = legal < g.pass_id
        assert not f[~play].any()
        hand_size = int(reader.hand(obs).sum())
        out = g.tab.ncards[legal[play]] == hand_size
        assert np.array_equal(f[play, 1], out.astype(np.float32))
        ok = play.copy()
        ok[play] = ~out
        now, after = f[ok, 5] * 20, f[ok, 6] * 20
        plain = (after > 0) & (after < 20) & (now < 20) & (np.abs(after - now) < 4)
        assert np.allclose(f[ok, 0][plain] * 4, (after - now)[plain], atol=1e-4)
        n += int(plain.sum())
    assert n > 20


@pytest.mark.parametrize("name", sorted(agents.rules.PARTS))
@pytest.mark.parametrize("context", ["plan", "plan_picks"])
def test_batched_context_equals_the_position_by_position_reference(name, context):
    """The batched path (``ctx(obs, ids, owner)``: the planner's costs and the sure winners of
    every position in one numba pass) gives exactly what :meth:`position` gives position by
    position, the readable reference over the rules agent's methods, on the decisions of
    random games of every game with a rules part, positions shuffled in one batch."""
    g = cardenvs.make_game(name)
    ctx = make_context(context, g)
    pos = random_positions(g, 4, seed=11)
    assert len(pos) > 50
    rng = np.random.default_rng(0)
    order = rng.permutation(len(pos))
    obs = np.stack([pos[i][0] for i in order])
    ids = np.concatenate([pos[i][1] for i in order])
    owner = np.repeat(np.arange(len(order)), [len(pos[i][1]) for i in order])
    mix = rng.permutation(len(ids))  # actions of one position need not be adjacent
    got = ctx(obs, ids[mix], owner[mix])
    want = np.concatenate([ctx.position(pos[i][0], pos[i][1]) for i in order])[mix]
    assert got.dtype == np.float32 and got.shape == (len(ids), ctx.dim)
    assert np.array_equal(got, want)
    # the columns are not all zero: the test compares values, not empty arrays
    assert (got[:, 4] == 1).any() and (got[:, 0] != 0).any() and (got[:, 5] > 0).any()
    if context == "plan_picks" and name == "wakeng":
        assert (got[:, PICKS_DIM - 1] == 1).any()  # burials were met and valued


def test_context_registry_and_errors():
    assert context_dim(None) == 0 and context_dim("plan") == PLAN_DIM
    with pytest.raises(ValueError, match="unknown context 'nope'"):
        context_dim("nope")
    g = cardenvs.make_game("doudizhu")
    ctx = make_context("plan", g)
    with pytest.raises(ValueError, match="ids .* and owner"):
        ctx(np.zeros((1, g.layout.size), np.float32), np.zeros(2, np.int64), np.zeros(1, np.int64))
    with pytest.raises(ValueError, match="action ids must lie"):
        ctx(np.zeros((1, g.layout.size), np.float32), np.array([g.n_actions]), np.zeros(1, np.int64))
    d = g.deck
    with pytest.raises(ValueError, match="play-table rows"):
        ctx.features(d.parse("33"), d.parse("44"), np.array([g.pass_id]))
    back = pickle.loads(pickle.dumps(ctx))
    assert back.game.info.name == "doudizhu" and back.dim == PLAN_DIM


def _context_net(g, seed=0):
    torch.manual_seed(seed)
    obs_dim, feat_dim = _dims(g)
    net = QNet(obs_dim, feat_dim, (32, 16), context="plan")
    with torch.no_grad():
        net.layers[0].weight[:, -PLAN_DIM:].normal_(0, 1.0)
    return net


def test_numpy_agent_scores_equal_torch_with_context(tmp_path):
    g = cardenvs.make_game("wulong")
    net = _context_net(g)
    path = str(tmp_path / "ctx.npz")
    export_weights(net, path, {"game": "wulong", "options": {}, "mode": "network",
                               "reward_scale": 1.0}, dtype=np.float32)
    qn = QNetwork(path)
    assert qn.ctx_dim == PLAN_DIM and qn.context == "plan" and qn.meta["feat_dim"] == _dims(g)[1]
    agent = TrainedAgent(g, weights=path)
    policy = TorchPolicy(g, net, torch.device("cpu"))
    decisions = random_positions(g, 2, seed=3)[:60]
    obs = np.stack([o for o, _ in decisions]).astype(np.float32)
    sizes = np.array([len(lg) for _, lg in decisions])
    ids = np.concatenate([lg for _, lg in decisions])
    q_torch = policy.scores(obs, ids, sizes)
    owner = np.repeat(np.arange(len(sizes)), sizes)
    with torch.no_grad():  # the plain forward with the context computed apart
        ctx = make_context("plan", g)(obs, ids, owner)
        q_plain = net(torch.from_numpy(obs), torch.from_numpy(g.action_features(ids)),
                      torch.from_numpy(owner), torch.from_numpy(ctx)).numpy()
    q_np = np.concatenate([agent.scores(obs[i], ids[owner == i]) for i in range(len(sizes))])
    assert np.abs(q_torch - q_plain).max() < 1e-4
    assert np.abs(q_np - q_torch).max() < 1e-3 * max(1.0, np.abs(q_torch).max())
    # the context changes the scores (the test would pass without it otherwise)
    q_none = qn.scores_batch(obs, g.action_features(ids), owner, np.zeros_like(ctx))
    assert np.abs(q_none - q_np).max() > 1e-2
    masks = np.zeros((len(sizes), g.n_actions), np.int8)
    masks[owner, ids] = 1
    assert np.array_equal(agent.act_batch(obs, masks), policy.choose(obs, ids, sizes))
    assert pickle.loads(pickle.dumps(agent)).context.name == "plan"
    with pytest.raises(ValueError, match="pass ctx"):
        qn.scores_batch(obs, g.action_features(ids), owner)


def test_weight_format_with_context_and_its_errors(tmp_path):
    g = cardenvs.make_game("doudizhu")
    net = _context_net(g)
    layers = net.numpy_layers()
    with pytest.raises(ValueError, match="context name"):
        save_weights(str(tmp_path / "x.npz"), layers, net.obs_dim, {"game": "doudizhu"},
                     ctx_dim=PLAN_DIM)
    path = str(tmp_path / "c.npz")
    export_weights(net, path, {"game": "doudizhu", "options": {}, "mode": "network",
                               "reward_scale": 1.0})
    # an unknown context name in the file: the agent refuses it with the reason
    bad = str(tmp_path / "bad.npz")
    save_weights(bad, layers, net.obs_dim, {"game": "doudizhu", "context": "other"},
                 ctx_dim=PLAN_DIM)
    with pytest.raises(ValueError, match="context 'other', unknown"):
        TrainedAgent(g, weights=bad)
    # train.dmc's self-play does not compute contexts: --init refuses such a file
    from cardenvs.train.dmc import DMC, Config

    with pytest.raises(ValueError, match="context 'plan'"):
        DMC(Config(game="doudizhu", out=str(tmp_path / "dmc"), init=path, eval_deals=0,
                   progress=False))
    # a network without context cannot take this file; one with it can
    plain = QNet(net.obs_dim, net.feat_dim, (32, 16))
    with pytest.raises(ValueError, match="takes 7 inputs of context 'plan'"):
        load_numpy_weights(plain, path)
    again = QNet(net.obs_dim, net.feat_dim, (32, 16), context="plan")
    load_numpy_weights(again, path)
    assert torch.allclose(again.layers[0].weight, net.layers[0].weight.half().float())


def test_a_file_without_context_starts_a_context_network_with_the_same_scores(tmp_path):
    # the shipped network fitted against RLCard's model takes no context inputs
    g = cardenvs.make_game("doudizhu", preset="rlcard", auction="fixed")
    path = os.path.join(agents.trained.WEIGHTS_DIR, "doudizhu_rlcard_network.npz")
    base = TrainedAgent(g, weights=path)
    assert base.context is None
    obs_dim, feat_dim = _dims(g)
    net = QNet(obs_dim, feat_dim, tuple(base.net.meta["hidden"]), context="plan")
    load_numpy_weights(net, path)
    assert not net.layers[0].weight[:, -PLAN_DIM:].any()
    policy = TorchPolicy(g, net, torch.device("cpu"))
    decisions = random_positions(g, 1, seed=8)[:30]
    for obs, legal in decisions:
        q = policy.scores(obs[None, :].astype(np.float32), legal, np.array([len(legal)]))
        assert np.abs(q - base.scores(obs, legal)).max() < 1e-3


def test_fit_with_context_writes_a_context_network_that_plays(tmp_path):
    data = tmp_path / "d"
    distill.collect("doudizhu", "rules", 4, str(data), seed=2, block=2, progress=False)
    res = distill.fit("doudizhu", str(data), str(tmp_path / "f"), epochs=2, batch=32,
                      hidden=(32, 16), holdout=2, eval_deals=2, context="plan", progress=False)
    # the context inputs were computed once per shard and kept beside it
    kept = sorted(p.name for p in data.glob("*.ctx_plan.npy"))
    assert kept == ["shard_000000.ctx_plan.npy", "shard_000001.ctx_plan.npy"]
    with np.load(data / "shard_000000.npz") as z:
        ctx = np.load(data / kept[0])
        assert ctx.shape == (len(z["legal"]), PLAN_DIM)
        owner = np.repeat(np.arange(len(z["sizes"])), z["sizes"])
        g = cardenvs.make_game("doudizhu")
        fresh = make_context("plan", g)(z["obs"].astype(np.float32), z["legal"], owner)
        assert np.allclose(ctx, fresh, atol=2e-3)
    agent = agents.make_agent(f"trained:{res['weights']}", cardenvs.make_game("doudizhu"))
    assert agent.net.context == "plan"
    assert agent.net.meta["context"] == "plan" and res["eval"][0]["deals"] == 2
    # a later fit from this file keeps its context; another context is refused
    res2 = distill.fit("doudizhu", str(data), str(tmp_path / "g"), epochs=1, batch=32,
                       init=res["weights"], eval_deals=0, progress=False)
    assert agents.make_agent(f"trained:{res2['weights']}", g).net.context == "plan"
    # averaging keeps the context
    avg = distill.average("doudizhu", [res["weights"], res2["weights"]], str(tmp_path / "a.npz"))
    assert QNetwork(avg["weights"]).context == "plan"


# -- "plan_picks": the planner's view of picks that take a card out of the hand -----------------
def test_pick_features_of_literal_wakeng_burials():
    from cardenvs.games.wakeng import ORDER

    g = cardenvs.make_game("wakeng")
    ctx = make_context("plan_picks", g)
    assert ctx.dim == PICKS_DIM == PLAN_DIM + 5 and context_dim("plan_picks") == PICKS_DIM
    hand = g.deck.parse("4QQQ3")
    four, queen, three = ORDER.index("4"), ORDER.index("Q"), ORDER.index("3")
    # columns: cost change / 4, cost before / 20, cost after / 20, strength change / 4, pick
    f = ctx.pick_features(hand, np.array([four, queen, three]))
    assert f.shape == (3, 5) and f[:, 4].tolist() == [1, 1, 1]
    # the lone 4 is one turn of the plan: burying it saves a turn (-1/4) and adds half a turn
    # to the strength (+0.5/4)
    assert f[0, 0] == pytest.approx(-0.25, abs=0.01) and f[0, 3] == pytest.approx(0.125, abs=0.01)
    # a trio less one card is a pair: the same turns, the same strength
    assert f[1, 0] == pytest.approx(0.0, abs=0.01) and f[1, 3] == pytest.approx(0.0, abs=0.01)
    # the 3, the top control, counts half a turn in the plan and 1.5 in the strength
    assert f[2, 0] == pytest.approx(-0.125, abs=0.01)
    assert f[2, 3] == pytest.approx((-1.5 + 0.25) / 4, abs=0.01)
    # before: about 2.5 turns of 20 for every pick; after: 1.5, 2.5 and 2
    assert f[:, 1] == pytest.approx([2.5 / 20] * 3, abs=0.002)
    assert f[:, 2] == pytest.approx([1.5 / 20, 2.5 / 20, 2.0 / 20], abs=0.002)
    with pytest.raises(ValueError, match="does not hold them all"):
        ctx.pick_features(hand, np.array([ORDER.index("5")]))


def test_plan_picks_equals_plan_on_plays_and_the_state_reference_on_burials():
    from cardenvs.core.state import hand_off
    from cardenvs.games.wakeng import PHASE, P_BURY

    g = cardenvs.make_game("wakeng")
    picks, plan = make_context("plan_picks", g), make_context("plan", g)
    rules = agents.rules.RulesAgent(g)
    buf = np.zeros(g.n_actions + 1, np.int64)
    obs = np.zeros(g.layout.size, np.float32)
    b0, b1 = g.blocks["bury"]
    R = g.deck.n_ranks
    seen = {"bury": 0, "other": 0}
    for deal in range(6):
        s = g.new_state()
        g.reset(s, 40 + deal)
        while not g.done(s):
            legal = buf[:g.legal(s, buf)].copy()
            seat = g.current(s)
            g.encode(s, seat, obs)
            f = picks(obs[None], legal, np.zeros(len(legal), np.int64))
            if s[PHASE] == P_BURY:
                seen["bury"] += 1
                assert ((legal >= b0) & (legal < b1)).all()
                # the reference: the hand read from the state, one card of the rank removed
                hand = np.array(s[hand_off(seat):hand_off(seat) + R], np.int64)
                for j, a in enumerate(legal):
                    r = int(a - b0) % R
                    h = hand.copy()
                    h[r] -= 1
                    want_cost = rules.cost(h) - rules.cost(hand)
                    want_str = rules.strength(h) - rules.strength(hand)
                    assert f[j, 7] == pytest.approx(np.clip(want_cost, -4, 4) / 4, abs=1e-6)
                    assert f[j, 10] == pytest.approx(np.clip(want_str, -4, 4) / 4, abs=1e-6)
                    assert f[j, 11] == 1
                # plan's own columns stay 0 for a pick: a plan network scores it as before
                assert not f[:, :PLAN_DIM].any()
            else:
                seen["other"] += 1
                # bids and card plays: plan's seven columns, the pick columns 0
                assert np.array_equal(f[:, :PLAN_DIM],
                                      plan(obs[None], legal, np.zeros(len(legal), np.int64)))
                assert not f[:, PLAN_DIM:].any()
            g.step(s, rules.act({"observation": obs.copy()}, legal.copy()))
    assert seen["bury"] == 6 * 4 and seen["other"] > 100


def test_removed_ranks_names_the_buried_rank_and_nothing_else():
    g = cardenvs.make_game("wakeng")
    part = agents.rules.RulesAgent(g).part
    b0, b1 = g.blocks["bury"]
    ids = np.arange(g.n_actions)
    got = part.removed_ranks(ids)
    assert (got[:b0] == -1).all() and (got[b1:] == -1).all()
    # 13 ranks, then the same 13 as the rank's diamond
    assert got[b0:b1].tolist() == list(range(13)) * 2
    other = agents.rules.RulesAgent(cardenvs.make_game("doudizhu")).part
    assert (other.removed_ranks(np.arange(10)) == -1).all()


def test_a_plan_file_starts_a_plan_picks_network_with_the_same_scores(tmp_path):
    from cardenvs.agents.context import extends

    assert extends("plan_picks", "plan") and extends("plan", "plan")
    assert not extends("plan", "plan_picks") and not extends(None, "plan")
    g = cardenvs.make_game("wakeng")
    path = str(tmp_path / "plan.npz")
    export_weights(_context_net(g), path, {"game": "wakeng", "options": {}, "mode": "network",
                                           "reward_scale": 1.0}, dtype=np.float32)
    base = TrainedAgent(g, weights=path)
    obs_dim, feat_dim = _dims(g)
    net = QNet(obs_dim, feat_dim, (32, 16), context="plan_picks")
    load_numpy_weights(net, path)
    w = net.layers[0].weight
    assert not w[:, -(PICKS_DIM - PLAN_DIM):].any() and w[:, -PICKS_DIM:-5].any()
    policy = TorchPolicy(g, net, torch.device("cpu"))
    for obs, legal in random_positions(g, 2, seed=5)[:40]:
        q = policy.scores(obs[None, :].astype(np.float32), legal, np.array([len(legal)]))
        assert np.abs(q - base.scores(obs, legal)).max() < 1e-3
    # the other way round is refused: a plan network cannot take a plan_picks file
    big = str(tmp_path / "picks.npz")
    export_weights(net, big, {"game": "wakeng", "options": {}, "mode": "network",
                              "reward_scale": 1.0})
    with pytest.raises(ValueError, match="takes 12 inputs of context 'plan_picks'"):
        load_numpy_weights(QNet(obs_dim, feat_dim, (32, 16), context="plan"), big)
