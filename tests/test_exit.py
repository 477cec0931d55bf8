"""The ``trained+search`` agent (``agents/exit.py``): PIMC guided by a ``trained`` network.

* it plays legal moves in the arena, pickles, takes ``trained+search:PATH``;
* in record mode its candidates hold the network's best actions, one value each, and with
  ``margin=None`` it plays the best mean return;
* under a huge margin it never leaves the network's move;
* :func:`train.common.load_numpy_weights` copies a weight file into a torch network of its
  sizes and refuses other sizes.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from cardenvs.agents import make_agent  # noqa: E402
from cardenvs.agents.exit import ExitSearchAgent  # noqa: E402
from cardenvs.agents.trained import QNetwork, TrainedAgent  # noqa: E402
from cardenvs.api import make_game  # noqa: E402
from cardenvs.train.common import game_dims, load_numpy_weights  # noqa: E402
from cardenvs.train.dmc import QNet, export_weights  # noqa: E402


def _network_file(path, game: str = "wakeng", hidden=(32,), seed: int = 0) -> str:
    """A small random network of ``game`` written as a weight file."""
    torch.manual_seed(seed)
    net = QNet(*game_dims(make_game(game)), hidden)
    export_weights(net, str(path), {"game": game, "options": {}, "mode": "network",
                                    "reward_scale": 1.0, "trainer": "test"})
    return str(path)


def test_trained_search_agent_plays_pickles_and_takes_weights(tmp_path):
    from cardenvs.agents.trained import default_weights_path
    from cardenvs.arena import run_arena

    g = make_game("wakeng")
    path = _network_file(tmp_path / "wakeng.npz")
    res = run_arena("wakeng", f"trained+search:{path},random", deals=1, progress=False)
    assert res["agents"] == ["trained+search:wakeng", "random"]
    a = make_agent("trained+search", g, seed=1)  # the shipped weights by default
    assert isinstance(a, ExitSearchAgent) and a.weights == default_weights_path("wakeng")
    b = pickle.loads(pickle.dumps(a))
    assert b.weights == a.weights and b._net_agent.path == a.weights
    # record mode (bids searched): candidates hold the network's
    # best actions, values one per candidate
    ag = ExitSearchAgent(g, seed=0, weights=path, rollouts=24, margin=None, record=True,
                         net_candidates=2, bids=True)
    s = g.new_state()
    g.reset(s, 3)
    buf = np.empty(g.n_actions + 1, np.int64)
    while g.legal(s, buf) < 2:
        g.step(s, int(buf[0]))
    k = g.legal(s, buf)
    legal = buf[:k].copy()
    assert ag.is_bid(legal)  # Wakeng's first choice is a bid
    # by default a bid is not searched: nothing recorded, not even the previous decision's
    plain = ExitSearchAgent(g, seed=0, weights=path, rollouts=24, margin=None, record=True)
    plain.last = (np.array([0]), np.array([0.0]))
    plain.act_state(s.copy(), legal)
    assert plain.last is None
    a1 = ag.act_state(s.copy(), legal)
    cands, vals = ag.last
    net = TrainedAgent(g, weights=path)
    obs = np.zeros(g.layout.size, np.float32)
    g.encode(s, g.current(s), obs)
    top = legal[np.argsort(-net.scores(obs, legal), kind="stable")[:2]]
    assert set(top.tolist()) <= set(cands.tolist()) and len(vals) == len(cands)
    assert a1 == cands[int(np.argmax(vals))]  # margin=None: the best mean return
    with pytest.raises(TypeError, match="prior"):
        ExitSearchAgent(g, weights=path, prior="rules")
    with pytest.raises(ValueError, match="net_candidates"):
        ExitSearchAgent(g, weights=path, net_candidates=-1)
    assert QNetwork(path).meta["game"] == "wakeng"


@pytest.mark.parametrize("game_name", ["doudizhu", "wakeng"])
def test_trained_search_never_leaves_the_network_move_under_a_huge_margin(game_name):
    g = make_game(game_name)
    stubborn = ExitSearchAgent(g, seed=0, margin=1e9, rollouts=48)  # the shipped weights
    net = make_agent("trained", g)
    s = g.new_state()
    g.reset(s, 5)
    buf = np.empty(g.n_actions + 1, np.int64)
    obs = np.zeros(g.layout.size, np.float32)
    for _ in range(15):  # the first decisions of a deal
        k = g.legal(s, buf)
        legal = buf[:k].copy()
        act = stubborn.act(None, legal, {"state": s.copy()})
        g.encode(s, g.current(s), obs)
        mask = np.zeros(g.n_actions, np.int8)
        mask[legal] = 1
        assert act == net.act({"observation": obs, "action_mask": mask}, legal)
        g.step(s, act)
        if g.done(s):
            break


def test_load_numpy_weights_copies_a_file_of_the_same_sizes(tmp_path):
    path = _network_file(tmp_path / "a.npz", hidden=(16, 8), seed=3)
    src = QNet(*game_dims(make_game("wakeng")), (16, 8))
    meta = load_numpy_weights(src, path)
    assert meta["trainer"] == "test" and meta["hidden"] == [16, 8]
    ref = QNetwork(path)
    for m, (w, b) in zip(src.layers, ref.layer_list()):  # the file's float16 values exactly
        assert torch.equal(m.weight.detach(), torch.from_numpy(w).t())
        assert torch.equal(m.bias.detach(), torch.from_numpy(b))
    with pytest.raises(ValueError, match="hidden sizes"):
        load_numpy_weights(QNet(*game_dims(make_game("wakeng")), (32,)), path)
