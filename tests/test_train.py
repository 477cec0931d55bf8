"""The Deep Monte-Carlo learner (``train/dmc.py``) and the numpy ``trained`` agent.

* the exported weights, run in numpy by :class:`agents.trained.TrainedAgent`, score positions
  like the training code's torch policy (close Q values, the same argmax), float32 and float16;
* the learner's Monte-Carlo targets are the acting seat's later rewards, mid-episode payouts
  included (checked against an independent replay of the same game);
* a short training run completes, writes a checkpoint, weights, logs and the evaluation plot,
  and resumes from the checkpoint; a seeded run is reproducible;
* the trained agent picks only legal actions over random games of every game;
* teacher mode (``--teacher rules``): with no exploration the behaviour is the teacher's
  action (literal bidding positions), the exploration / network-mix switches route decisions
  as documented, a teacher run checkpoints, resumes and hands over to self-play at the end of
  its phase, and a seeded teacher run is reproducible.
"""

from __future__ import annotations

import csv
import importlib
import os

import numpy as np
import pytest
from helpers import random_positions, stop_with_sigterm

torch = pytest.importorskip("torch")

from cardenvs.agents import make_agent  # noqa: E402
from cardenvs.agents.trained import QNetwork, TrainedAgent, save_weights, segment_argmax  # noqa: E402
from cardenvs.api import GAMES, make_game  # noqa: E402
from cardenvs.core.state import BIDS0, CUR  # noqa: E402
from cardenvs.train.dmc import DMC, Config, QNet, TorchPolicy, export_weights, main, summarize  # noqa: E402

ALL_GAMES = sorted(GAMES)


def _random_net(game, hidden=(64, 32), seed=0) -> QNet:
    torch.manual_seed(seed)
    feat = game.action_features(np.zeros(1, np.int64)).shape[1]
    net = QNet(game.layout.size, feat, hidden)
    with torch.no_grad():  # larger weights than the default init: well separated scores
        for p in net.parameters():
            p.mul_(3.0)
    return net.eval()


def test_segment_argmax_literal():
    v = np.array([1.0, 3.0, 3.0, -1.0, 5.0, 0.0, 2.0, 2.0])
    # segments [1,3,3] [-1] [5,0] [2,2]: first maximum of each
    assert segment_argmax(v, np.array([3, 1, 2, 2])).tolist() == [1, 3, 4, 6]


@pytest.mark.parametrize("game_name", ["wakeng", "doudizhu"])
def test_numpy_weights_match_torch_policy(tmp_path, game_name):
    game = make_game(game_name)
    net = _random_net(game)
    policy = TorchPolicy(game, net, torch.device("cpu"))
    path32 = str(tmp_path / "w32.npz")
    export_weights(net, path32, {"game": game_name, "options": {}}, dtype=np.float32)
    agent = TrainedAgent(game, weights=path32)
    positions = random_positions(game, 8, seed=1)
    assert len(positions) > 200
    same = 0
    for obs, ids in positions:
        q_t = policy.scores(obs[None], ids, np.array([len(ids)]))
        q_n = agent.scores(obs, ids)
        np.testing.assert_allclose(q_n, q_t, rtol=1e-4, atol=1e-4)
        top = np.sort(q_t)[-2:]
        if top[1] - top[0] > 1e-3:  # a clear best action: both must pick it
            assert agent.act({"observation": obs}, ids) == int(ids[np.argmax(q_t)])
            same += 1
    assert same > 0.9 * len(positions)
    # the batched numpy path agrees with the one-position path
    obs = np.stack([p[0] for p in positions[:40]])
    masks = np.zeros((40, game.n_actions), np.int8)
    for j, (_, ids) in enumerate(positions[:40]):
        masks[j, ids] = 1
    batch = agent.act_batch(obs, masks)
    single = [agent.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks)]
    assert batch.tolist() == single
    # float16 storage: numpy equals torch run with the same float16-rounded weights
    path16 = str(tmp_path / "w16.npz")
    export_weights(net, path16, {"game": game_name, "options": {}}, dtype=np.float16)
    assert os.path.getsize(path16) < os.path.getsize(path32)
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(p.half().float())
    agent16 = TrainedAgent(game, weights=path16)
    for obs, ids in positions[:100]:
        q_t = policy.scores(obs[None], ids, np.array([len(ids)]))
        np.testing.assert_allclose(agent16.scores(obs, ids), q_t, rtol=1e-4, atol=1e-4)


def test_weight_file_errors(tmp_path):
    game = make_game("wakeng")
    with pytest.raises(ValueError, match="no weight file"):
        QNetwork(str(tmp_path / "missing.npz"))
    np.savez(tmp_path / "junk.npz", a=np.zeros(3))
    with pytest.raises(ValueError, match="not a cardenvs weight file"):
        QNetwork(str(tmp_path / "junk.npz"))
    other = make_game("doudizhu")
    path = str(tmp_path / "ddz.npz")
    export_weights(_random_net(other), path, {"game": "doudizhu", "options": {}})
    with pytest.raises(ValueError, match="for 'doudizhu'"):
        TrainedAgent(game, weights=path)
    w = np.zeros((10, 4), np.float32)
    with pytest.raises(ValueError, match="one output"):
        save_weights(str(tmp_path / "x.npz"), [(w, np.zeros(4))], 6, {})
    with pytest.raises(ValueError, match="obs_dim"):
        save_weights(str(tmp_path / "x.npz"), [(np.zeros((10, 1)), np.zeros(1))], 10, {})


def test_config_errors(tmp_path):
    with pytest.raises(ValueError, match="unknown game"):
        DMC(Config(game="nosuchgame", out=str(tmp_path)))
    with pytest.raises(ValueError, match="envs"):
        DMC(Config(game="wakeng", out=str(tmp_path), envs=0))
    with pytest.raises(ValueError, match="eps"):
        DMC(Config(game="wakeng", out=str(tmp_path), eps=1.5))
    with pytest.raises(ValueError, match="no checkpoint"):
        DMC(Config(game="wakeng", out=str(tmp_path / "empty")), resume=True)
    with pytest.raises(ValueError, match="unknown agent"):
        DMC(Config(game="wakeng", out=str(tmp_path), teacher="nosuchagent"))
    with pytest.raises(ValueError, match="teacher_eps"):
        DMC(Config(game="wakeng", out=str(tmp_path), teacher="rules", teacher_eps=1.5))
    with pytest.raises(ValueError, match="teacher_minutes"):
        DMC(Config(game="wakeng", out=str(tmp_path), teacher="rules", teacher_minutes=-1.0))
    assert main(["wakeng", "--out", str(tmp_path), "--teacher", "nosuchagent"]) == 2
    with pytest.raises(ValueError, match="replay_size"):
        DMC(Config(game="wakeng", out=str(tmp_path), replay=2, replay_size=10))
    with pytest.raises(ValueError, match="teacher_margin"):
        DMC(Config(game="wakeng", out=str(tmp_path), teacher="rules", teacher_margin=-1.0))


def test_summarize_known_case():
    # 4 deals x 2 seats: per-deal means 1, 3, -1, 1 -> mean 1, sd (ddof 1) = sqrt(8/3)
    r = np.array([[2.0, 0.0], [3.0, 3.0], [-1.0, -1.0], [0.0, 2.0]])
    res = summarize(r)
    assert res["score"] == pytest.approx(1.0)
    assert res["score_ci"] == pytest.approx(1.96 * np.sqrt(8 / 3) / 2)
    assert res["win_rate"] == pytest.approx((0.5 + 1 + 0 + 0.5) / 4)
    assert "diff" not in res
    # the opponent's mean returns in the same games: per-deal means 0, -1, 2, -1 -> the
    # differences 1, 4, -3, 2: mean 1, sd (ddof 1) = sqrt(26/3)
    opp = np.array([[-1.0, 1.0], [-1.0, -1.0], [2.0, 2.0], [-2.0, 0.0]])
    res = summarize(r, opp)
    assert res["diff"] == pytest.approx(1.0)
    assert res["diff_ci"] == pytest.approx(1.96 * np.sqrt(26 / 3) / 2)
    assert res["score"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="do not match"):
        summarize(r, opp[:3])


class _PayEveryStep:
    """A game proxy that adds a made-up mid-episode payout (like a match paying each hand)
    to the real rewards, and records every step for an independent replay."""

    def __init__(self, game):
        self._g = game
        self.log = []  # (seat to move, number of legal actions, rewards of the step, done)
        self._buf = np.empty(game.n_actions, np.int64)

    def __getattr__(self, name):
        return getattr(self._g, name)

    def step(self, state, a):
        g = self._g
        seat = g.current(state)
        k = g.legal(state, self._buf)
        g.step(state, a)
        extra = np.zeros(g.n_players)
        extra[len(self.log) % g.n_players] = 0.5 * (1 + len(self.log) % 3)
        self._last = g.rewards(state) + extra
        self.log.append((seat, k, self._last, g.done(state)))

    def rewards(self, state):
        return self._last


def test_targets_are_later_rewards_of_the_acting_seat(tmp_path):
    cfg = Config(game="wakeng", out=str(tmp_path), envs=1, eps=1.0, hidden=(16,), batch=10**6,
                 reward_scale=0.25, eval_deals=0, progress=False)
    t = DMC(cfg)
    proxy = _PayEveryStep(t.game)
    t.game = proxy
    t._start_selfplay()
    while t.counters["games"] < 3:
        t.selfplay_step()
    tgt = np.concatenate(t._q_tgt)
    # replay: each decision with 2+ legal actions is a sample; its target is the sum of the
    # acting seat's rewards from that step to the end of its game, times the scale
    expected, start = [], 0
    ends = [i + 1 for i, entry in enumerate(proxy.log) if entry[3]]
    assert len(ends) == 3
    for end in ends:
        for i in range(start, end):
            seat, k, _, _ = proxy.log[i]
            if k > 1:
                expected.append(0.25 * sum(proxy.log[j][2][seat] for j in range(i, end)))
        start = end
    assert len(expected) == len(tgt)
    np.testing.assert_allclose(tgt, np.array(expected, np.float32), rtol=1e-5, atol=1e-5)
    assert np.abs(tgt).max() > 0


def _short_cfg(out, **kw) -> Config:
    base = dict(game="wakeng", out=str(out), minutes=0.2, envs=16, hidden=(64, 64), batch=128,
                refresh=5, pool_size=3, pool_frac=0.5, eval_agents=("random",), eval_deals=6,
                eval_minutes=0.1, log_seconds=2.0, progress=False, seed=3)
    base.update(kw)
    return Config(**base)


def test_short_training_run_checkpoint_and_resume(tmp_path):
    # bounded by update counts, not by the clock: a starved machine reaches the same counts
    out = tmp_path / "run"
    res = DMC(_short_cfg(out, minutes=10.0, max_updates=10)).run()
    for f in ("checkpoint.pt", "wakeng.npz", "log.csv", "eval.csv", "eval.png", "config.json"):
        assert (out / f).exists(), f
    assert res["updates"] == 10 and res["games"] > 0 and res["decisions"] >= 10 * 128
    with open(out / "eval.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) >= 2 and all(r["opponent"] == "random" for r in rows)
    # resume: counters, pool and evaluation history continue
    t2 = DMC(_short_cfg(out, minutes=10.0, max_updates=16), resume=True)
    assert t2.counters["updates"] == res["updates"] and len(t2.pool) > 0
    n_eval = len(t2.eval_history)
    assert n_eval == len(rows)
    res2 = t2.run()
    assert res2["updates"] == 16 and res2["train_s"] > res["train_s"]
    assert len(t2.eval_history) > n_eval
    # the exported weights play
    agent = TrainedAgent(make_game("wakeng"), weights=str(out / "wakeng.npz"))
    assert agent.net.meta["updates"] == res2["updates"]


def test_seeded_runs_are_reproducible(tmp_path):
    outs = []
    for i in range(2):
        cfg = _short_cfg(tmp_path / f"r{i}", minutes=5.0, max_updates=4, eval_deals=0, envs=8)
        t = DMC(cfg)
        t.run()
        assert t.counters["updates"] == 4
        outs.append([p.detach().clone() for p in t.net.parameters()])
    for a, b in zip(*outs):
        assert torch.equal(a, b)


@pytest.mark.parametrize("game_name", ALL_GAMES)
def test_trained_agent_plays_only_legal_actions(tmp_path, game_name):
    game = make_game(game_name)
    path = str(tmp_path / f"{game_name}.npz")
    export_weights(_random_net(game, seed=5), path, {"game": game_name, "options": {}})
    agents_to_test = [TrainedAgent(game, weights=path)]
    if TrainedAgent.unsupported(game) is None:  # shipped weights too, when present
        agents_to_test.append(TrainedAgent(game))
    env = importlib.import_module(f"cardenvs.{GAMES[game_name]}").env()
    rng = np.random.default_rng(11)
    for agent in agents_to_test:
        for deal in range(4):
            env.reset(seed=deal)
            for name in env.agent_iter():
                _, _, term, trunc, info = env.last()
                if term or trunc:
                    env.step(None)
                    continue
                legal = env.unwrapped.legal_actions()
                obs = env.observe(name)
                a = agent.act(obs, legal)
                assert a in set(legal.tolist())
                assert obs["action_mask"][a] == 1
                if rng.random() < 0.2:  # diversify the positions
                    a = int(legal[rng.integers(len(legal))])
                env.step(a)


# ---------------------------------------------------------------------------------------------
# teacher mode
# ---------------------------------------------------------------------------------------------
# 3-player Dou Dizhu deals (17 cards each, the 3 left over form the kitty), seat 0 bids first.
# The rules agent bids 3 with a hand better than ~90% of dealt hands and passes below ~55%:
# rocket, four 2s, four aces, four kings is as strong as a hand gets (bid 3); a hand with no
# 2, no joker, no bomb, one ace and many loose singles is in the weak half (pass).
STRONG_DEAL = {"hands": ["BR2222AAAAKKKKQQQ", "33445566778899TTJ", "33445566778899TTJ"],
               "first_bidder": 0}
WEAK_DEAL = {"hands": ["3345667899TJJQKKA", "BR2222AAAKKQQQJJT", "33444555667778889"],
             "first_bidder": 0}


def _teacher_trainer(tmp_path, **kw) -> DMC:
    base = dict(game="doudizhu", out=str(tmp_path), envs=2, hidden=(16,), batch=10**6,
                eval_deals=0, progress=False, teacher="rules", teacher_eps=0.0, seed=1)
    base.update(kw)
    t = DMC(Config(**base))
    t._start_selfplay()
    for i, deal in enumerate((STRONG_DEAL, WEAK_DEAL)):
        t.game.custom_deal(t.states[i], deal, seed=i)
        assert t.states[i][CUR] == 0
    return t


def test_teacher_mode_plays_the_teachers_action_without_exploration(tmp_path):
    t = _teacher_trainer(tmp_path)
    T = t.game.pass_id  # bids: T = pass, T + k = bid k
    t.teacher_step()
    assert t.states[0][BIDS0] == 3 and t.states[1][BIDS0] == 0  # seat 0 bid 3 / passed
    assert [p[1] for p in t.pending[0]] == [T + 3] and [p[1] for p in t.pending[1]] == [T]
    assert [p[2] for p in t.pending[0]] == [0]  # the acting seat is recorded with the sample
    assert t.counters["teacher_decisions"] == 2
    # with the large-margin loss on, each teacher decision also stores the alternatives the
    # margin is applied to: the network's greedy action (-1 when it is the teacher's) and one
    # random other legal action
    t = _teacher_trainer(tmp_path / "margin", teacher_margin=0.5)
    t.teacher_step()
    for i, a_t in ((0, T + 3), (1, T)):
        (_, a, _, _, (greedy, other)), = t.pending[i]
        assert a == a_t and other != a_t and T <= other <= T + 3
        assert greedy == -1 or (greedy != a_t and T <= greedy <= T + 3)


def test_teacher_mode_exploration_and_network_mix(tmp_path):
    # eps = 1: every decision is a uniformly random legal action, the teacher is never asked
    t = _teacher_trainer(tmp_path / "eps", teacher_eps=1.0)
    for _ in range(30):
        t.teacher_step()
    assert t.counters["teacher_decisions"] == 0 and t.counters["samples"] + sum(map(len, t.pending)) > 20
    # mix = 1 (eps = 0): every decision is the network's greedy action
    t = _teacher_trainer(tmp_path / "mix", teacher_mix=1.0)
    obs = t.obs[:2].copy()
    for i in range(2):
        t.game.encode(t.states[i], 0, obs[i])
    T = t.game.pass_id
    ids = np.array([T, T + 1, T + 2, T + 3] * 2, np.int64)
    expected = t.policy.choose(obs, ids, np.array([4, 4]))
    t.teacher_step()
    assert t.counters["teacher_decisions"] == 0
    assert [t.pending[i][0][1] for i in range(2)] == expected.tolist()


def test_teacher_run_checkpoint_resume_and_switch_to_selfplay(tmp_path):
    out = tmp_path / "run"
    cfg = _short_cfg(out, minutes=5.0, max_updates=8, teacher="rules", teacher_eps=0.2, eval_deals=4)
    res = DMC(cfg).run()
    assert res["teacher_decisions"] > 500 and res["updates"] == 8
    with open(out / "log.csv") as f:
        modes = [r["mode"] for r in csv.DictReader(f)]
    assert modes and set(modes) == {"teacher"}
    # resume with a teacher phase that ends 3 updates later: self-play / pool mode takes over
    t2 = DMC(_short_cfg(out, minutes=5.0, max_updates=16, teacher="rules", teacher_updates=11,
                        eval_deals=4), resume=True)
    assert t2.counters["teacher_decisions"] == res["teacher_decisions"] and t2.teacher_active()
    res2 = t2.run()
    assert not t2.teacher_active() and res2["updates"] == 16
    assert res2["teacher_decisions"] > res["teacher_decisions"]
    with open(out / "log.csv") as f:
        modes = [r["mode"] for r in csv.DictReader(f)]
    assert modes[-1] == "selfplay"
    assert TrainedAgent(make_game("wakeng"), weights=str(out / "wakeng.npz")).net.meta["teacher"] == "rules"


def test_seeded_teacher_runs_are_reproducible(tmp_path):
    outs = []
    for i in range(2):
        cfg = _short_cfg(tmp_path / f"r{i}", minutes=5.0, max_updates=4, eval_deals=0, envs=8,
                         teacher="rules", teacher_eps=0.3, teacher_mix=0.3, teacher_margin=0.2,
                         replay=2)
        t = DMC(cfg)
        t.run()
        # replay 2: each fresh batch is one update, then one more on a replayed batch
        assert t.counters["updates"] == 4 and t._rb_n == 2 * cfg.batch
        outs.append(([p.detach().clone() for p in t.net.parameters()], t.counters["decisions"]))
    assert outs[0][1] == outs[1][1]
    for a, b in zip(outs[0][0], outs[1][0]):
        assert torch.equal(a, b)


def test_margin_loss_makes_the_greedy_action_the_teachers(tmp_path):
    """On teacher decisions with uninformative returns (all 0), the large-margin loss alone
    must make the network's greedy action the teacher's; the MSE alone does not."""
    game = make_game("wakeng")
    teacher = make_agent("rules", game, seed=0)
    rng = np.random.default_rng(4)
    pos = []  # (observation, legal ids, teacher's action) of rules-agent games
    s = game.new_state()
    buf = np.empty(game.n_actions, np.int64)
    for _ in range(3):
        game.reset(s, int(rng.integers(2**62)))
        while not game.done(s):
            k = game.legal(s, buf)
            a = int(buf[0])
            if k > 1:
                obs = np.zeros(game.layout.size, np.float32)
                game.encode(s, game.current(s), obs)
                a = teacher.act({"observation": obs}, buf[:k].copy())
                pos.append((obs, buf[:k].copy(), a))
            game.step(s, a)
    obs = np.stack([p[0] for p in pos])
    act = np.array([p[2] for p in pos], np.int64)
    agreement = {}
    for margin in (0.0, 0.5):
        t = DMC(Config(game="wakeng", out=str(tmp_path), hidden=(64,), lr=3e-3, batch=len(pos),
                       eval_deals=0, progress=False, teacher="rules", teacher_margin=margin, seed=2,
                       reward_scale=1.0))
        for _ in range(300):
            alt = np.array([[-1, rng.choice(ids[ids != a])] for _, ids, a in pos], np.int64)
            t._push(obs, act, np.zeros(len(pos), np.float32), alt if margin else None)
            t._update()
        ids = np.concatenate([p[1] for p in pos])
        greedy = t.policy.choose(obs, ids, np.array([len(p[1]) for p in pos]))
        agreement[margin] = float((greedy == act).mean())
    assert len(pos) > 50
    assert agreement[0.5] > 0.9 and agreement[0.5] > agreement[0.0] + 0.3, agreement


# -- stopping and resuming a real run (a subprocess, signals) ---------------------------------

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_RUN = ["wakeng", "--minutes", "5", "--envs", "8", "--hidden", "32", "--batch", "64",
        "--eval-deals", "0", "--log-seconds", "0.3", "--no-progress", "--seed", "3"]


def _log_rows(path) -> list[dict]:
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _start_run(out):
    import subprocess
    import sys

    return subprocess.Popen([sys.executable, "-m", "cardenvs.train.dmc", *_RUN, "--out", str(out)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(pred, proc, what: str, timeout: float = 240.0) -> None:
    import time

    t = time.monotonic()
    while not pred():
        if proc.poll() is not None:
            raise AssertionError(f"the run ended (rc {proc.returncode}) before {what}: "
                                 f"{proc.stderr.read()[-2000:]}")
        if time.monotonic() - t > timeout:
            proc.kill()
            raise AssertionError(f"no {what} after {timeout:.0f} s")
        time.sleep(0.2)


def _increasing(rows, key, strict: bool = True) -> bool:
    v = [float(r[key]) for r in rows]
    return all(a < b if strict else a <= b for a, b in zip(v, v[1:]))


def test_sigterm_checkpoints_and_resume_continues(tmp_path):
    out = tmp_path / "run"
    proc = _start_run(out)
    # training under way (a few log rows), long before the 5-minute periodic checkpoint
    _wait_for(lambda: len(_log_rows(out / "log.csv")) >= 3, proc, "three log rows")
    ck = stop_with_sigterm(proc, out)
    rows = _log_rows(out / "log.csv")
    # the checkpoint holds the last logged step: nothing the log shows is lost
    assert int(rows[-1]["decisions"]) == ck["counters"]["decisions"]
    assert (out / "wakeng.npz").exists()
    # resume: counters continue from the checkpoint, the log goes on without repeats
    t2 = DMC(_short_cfg(out, envs=8, hidden=(32,), batch=64, eval_deals=0, log_seconds=0.3,
                        max_updates=ck["counters"]["updates"] + 3), resume=True)
    assert t2.counters == ck["counters"]
    sd = t2.net.state_dict()
    assert all(torch.equal(sd[k].cpu(), v) for k, v in ck["net"].items())
    res = t2.run()
    assert res["updates"] == ck["counters"]["updates"] + 3 and res["stopped"] is None
    rows2 = _log_rows(out / "log.csv")
    assert rows2[:len(rows)] == rows and len(rows2) > len(rows)
    assert _increasing(rows2, "decisions") and _increasing(rows2, "train_s", strict=False)


def test_killed_run_resumes_from_first_checkpoint_and_drops_discarded_log_rows(tmp_path):
    import signal

    out = tmp_path / "run"
    proc = _start_run(out)

    def beyond_checkpoint() -> bool:
        # a checkpoint exists (written after the first update) and the log has gone past it
        if not (out / "checkpoint.pt").exists():
            return False
        try:
            ck = torch.load(out / "checkpoint.pt", map_location="cpu", weights_only=False)
        except Exception:  # being replaced
            return False
        rows = _log_rows(out / "log.csv")
        return len(rows) >= 2 and int(rows[-1]["decisions"]) > ck["counters"]["decisions"]

    _wait_for(beyond_checkpoint, proc, "checkpoint with later log rows")
    proc.send_signal(signal.SIGKILL)  # no chance to save: only the checkpoints written so far
    proc.wait(timeout=60)
    ck = torch.load(out / "checkpoint.pt", map_location="cpu", weights_only=False)
    before = _log_rows(out / "log.csv")
    assert int(before[-1]["decisions"]) > ck["counters"]["decisions"]
    t2 = DMC(_short_cfg(out, envs=8, hidden=(32,), batch=64, eval_deals=0, log_seconds=0.3,
                        max_updates=ck["counters"]["updates"] + 2), resume=True)
    kept = _log_rows(out / "log.csv")
    assert kept == [r for r in before if int(r["decisions"]) <= ck["counters"]["decisions"]]
    t2.run()
    rows = _log_rows(out / "log.csv")
    assert _increasing(rows, "decisions") and _increasing(rows, "train_s", strict=False)


def test_minutes_bound_the_whole_run_evaluations_included(tmp_path):
    import time

    # 200,000 evaluation deals against random at each of 3 seats take far longer than the
    # 0.25-minute budget on any machine: the evaluations are cut to fit it instead of
    # running after it
    cfg = _short_cfg(tmp_path / "run", minutes=0.25, envs=8, hidden=(32,), batch=64,
                     eval_deals=200_000, eval_minutes=10.0)
    t = DMC(cfg)
    t0 = time.perf_counter()
    res = t.run()
    took = time.perf_counter() - t0
    assert took < 15.0 + 4.0, took  # one chunk of deals and the files may run past the budget
    assert res["updates"] > 0
    assert all(0 < r["deals"] < 200_000 for r in t.eval_history)
