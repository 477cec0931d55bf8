"""Expert iteration (``train/exit.py``) and the ``trained+search`` agent (``agents/exit.py``).

* the loop runs, writes its checkpoint, buffer, log and weights (loadable as ``trained:PATH``),
  and resumes where it stopped; SIGTERM ends a run with a checkpoint;
* the value targets are the seat's later rewards, checked against a replay of the deal;
* the policy targets are the search's candidates and values, the network's best actions
  among the candidates;
* a few seconds of training make the network alone beat its random initialisation against
  the random agent;
* ``trained+search`` plays legal moves in the arena, pickles, takes ``trained+search:PATH``.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
from helpers import sigterm_after_first_log

torch = pytest.importorskip("torch")

from cardenvs.agents import make_agent  # noqa: E402
from cardenvs.agents.exit import ExitSearchAgent  # noqa: E402
from cardenvs.agents.trained import QNetwork, TrainedAgent  # noqa: E402
from cardenvs.api import make_game  # noqa: E402
from cardenvs.train.dmc import TorchPolicy, duplicate_returns  # noqa: E402
from cardenvs.train.exit import ExIt, ExitConfig  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _cfg(out, **kw):
    base = dict(game="wakeng", out=str(out), minutes=5.0, hidden=(32,), rollouts=24,
                candidates=3, net_candidates=2, games=1, updates=3, batch=64, buffer=2000,
                eval_deals=0, max_iterations=2, progress=False)
    base.update(kw)
    return ExitConfig(**base)


def test_loop_runs_checkpoints_and_resumes(tmp_path):
    out = tmp_path / "run"
    t = ExIt(_cfg(out))
    res = t.run()
    assert res["iterations"] == 2 and res["stopped"] is None and res["updates"] == 6
    assert res["games"] == 2 and t.buffer.n == res["decisions"] > 0
    for f in ("checkpoint.pt", "buffer.npz", "log.csv", "wakeng.npz"):
        assert (out / f).exists(), f
    agent = make_agent(f"trained:{out / 'wakeng.npz'}", make_game("wakeng"))
    assert agent.net.meta["trainer"] == "exit" and agent.net.meta["iterations"] == 2
    # resume: counters, network and buffer continue
    t2 = ExIt(_cfg(out, max_iterations=1), resume=True)
    assert t2.counters == t.counters and t2.buffer.n == t.buffer.n
    assert np.array_equal(t2.buffer.obs[:t.buffer.n], t.buffer.obs[:t.buffer.n])
    sd, sd2 = t.net.state_dict(), t2.net.state_dict()
    assert all(torch.equal(sd[k], sd2[k]) for k in sd)
    res2 = t2.run()
    assert res2["iterations"] == 3 and res2["updates"] == 9 and res2["games"] == 3
    assert t2.buffer.n > t.buffer.n
    with pytest.raises(ValueError, match="nothing to resume"):
        ExIt(_cfg(tmp_path / "empty"), resume=True)


def test_targets_match_a_replay_of_the_deal(tmp_path):
    t = ExIt(_cfg(tmp_path / "run"))
    n = t.play_game()
    assert n > 0 and t.buffer.n == n
    last = t.last_game
    g = make_game("wakeng")
    s = g.new_state()
    g.reset(s, last["seed"])
    paid = []
    legal_buf = np.empty(g.n_actions + 1, np.int64)
    for a in last["actions"]:
        k = g.legal(s, legal_buf)
        assert a in legal_buf[:k]
        g.step(s, a)
        paid.append(np.array(g.rewards(s), np.float64))
    assert g.done(s)
    paid = np.array(paid)
    for row, (step, seat) in enumerate(zip(last["steps"], last["seats"])):
        want = paid[step:, seat].sum() * t.scale
        assert t.buffer.ret[row] == pytest.approx(want, rel=1e-5, abs=1e-5)
        c = t.buffer.cands[row]
        c = c[c >= 0]
        assert len(c) >= 2 and len(set(c.tolist())) == len(c)  # searched candidates, distinct
        assert t.buffer.played[row] == last["actions"][step]
        assert t.buffer.neg[row] not in c


def test_short_training_improves_on_random(tmp_path):
    # Dou Dizhu (Wakeng's scores, up to x16 a deal, need many more deals to tell apart)
    cfg = _cfg(tmp_path / "run", game="doudizhu", hidden=(64,), games=2, updates=40,
               max_iterations=5, lr=3e-3, rollouts=48, buffer=5000)
    t = ExIt(cfg)
    g = t.game
    seeds = np.arange(40)
    rnd = make_agent("random", g, seed=0)
    before = duplicate_returns(g, TorchPolicy(g, t.net, torch.device("cpu")), rnd, seeds).mean()
    t.run()
    after = duplicate_returns(g, TorchPolicy(g, t.net, torch.device("cpu")), rnd, seeds).mean()
    assert after > before + 2.0 and after > 1.0, (before, after)


def test_sigterm_checkpoints_then_resume(tmp_path):
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-m", "cardenvs.train.exit", "wakeng", "--minutes", "5", "--hidden", "32",
         "--rollouts", "24", "--candidates", "3", "--games", "1", "--updates", "2",
         "--batch", "32", "--buffer", "500", "--eval-deals", "0", "--no-progress",
         "--out", str(out)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ck = sigterm_after_first_log(proc, out)
    assert ck["counters"]["iterations"] >= 1 and (out / "wakeng.npz").exists()
    t2 = ExIt(_cfg(out, max_iterations=1, buffer=500, batch=32, updates=2), resume=True)
    assert t2.counters == ck["counters"]
    assert t2.run()["iterations"] == ck["counters"]["iterations"] + 1


def test_trained_search_agent_plays_pickles_and_takes_weights(tmp_path):
    from cardenvs.agents.trained import default_weights_path
    from cardenvs.arena import run_arena

    g = make_game("wakeng")
    t = ExIt(_cfg(tmp_path / "run"))
    path = t.export()
    res = run_arena("wakeng", f"trained+search:{path},random", deals=1, progress=False)
    assert res["agents"] == ["trained+search:wakeng", "random"]
    a = make_agent("trained+search", g, seed=1)  # the shipped weights by default
    assert isinstance(a, ExitSearchAgent) and a.weights == default_weights_path("wakeng")
    b = pickle.loads(pickle.dumps(a))
    assert b.weights == a.weights and b._net_agent.path == a.weights
    # record mode (bids searched, as the trainer's expert): candidates hold the network's
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


def test_init_from_a_weight_file(tmp_path):
    t = ExIt(_cfg(tmp_path / "a", hidden=(16, 8)))
    path = t.export()
    t2 = ExIt(_cfg(tmp_path / "b", hidden=(16, 8), init=path))
    assert t2.scale == pytest.approx(t.scale)
    for m1, m2 in zip(t.net.layers, t2.net.layers):  # float16 storage
        assert torch.allclose(m1.weight, m2.weight, atol=2e-3)
        assert torch.allclose(m1.bias, m2.bias, atol=2e-3)
    with pytest.raises(ValueError, match="hidden sizes"):
        ExIt(_cfg(tmp_path / "c", hidden=(32,), init=path))
