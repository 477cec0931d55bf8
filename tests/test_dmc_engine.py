"""train.dmc on the self-play data engine (``--engine vector``, the default):

* a few seconds of training (200 updates) make the network beat uniform random play clearly,
  from an untrained network that loses to it (duplicate deals, the same deals before/after);
* ``--actors 1`` (a separate self-play process) feeds the learner;
* ``--init`` warm-starts from a weight file: the network scores exactly like the file's numpy
  agent, and files of another shape or with a rules prior are refused;
* the lockstep baseline still runs (``--engine lockstep``);
* teacher mode on the engine plays the teacher's moves and keeps the margin alternatives;
* the shipped network-only weights (``agents/weights/GAME[_NAME]_network.npz``) load as network-only
  agents, fit in 5 MB and pick legal actions in every kind of decision.
"""

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from cardenvs.agents.trained import WEIGHTS_DIR, QNetwork, TrainedAgent  # noqa: E402
from cardenvs.api import make_game  # noqa: E402
from cardenvs.train.dmc import DMC, Config, duplicate_returns, make_eval_agent, summarize  # noqa: E402


def _cfg(out, **kw) -> Config:
    base = dict(game="doudizhu", out=str(out), minutes=5.0, envs=64, hidden=(64, 64), batch=256,
                lr=1e-3, eval_deals=0, progress=False, seed=0)
    base.update(kw)
    return Config(**base)


@pytest.mark.parametrize("train_dtype", ["float32", "bfloat16"])
def test_a_few_seconds_of_training_beat_random(tmp_path, train_dtype):
    # bfloat16: the learner's forward under torch.autocast (--train-dtype), the weights float32
    t = DMC(_cfg(tmp_path, max_updates=200, train_dtype=train_dtype))
    rand, _ = make_eval_agent("random", t.game, seed=1)
    seeds = np.random.default_rng(9).integers(2**62, size=60)
    before = summarize(duplicate_returns(t.game, t.policy, rand, seeds))
    res = t.run()
    after = summarize(duplicate_returns(t.game, t.policy, rand, seeds))
    assert res["updates"] == 200 and res["games"] > 500
    assert before["score"] < 0 < after["score"] - after["score_ci"]
    assert after["score"] - before["score"] > before["score_ci"] + after["score_ci"]
    assert all(p.dtype == torch.float32 for p in t.net.parameters())


def test_learner_dtype_and_sync_seconds_are_checked(tmp_path):
    with pytest.raises(ValueError, match="train_dtype must be one of float32, bfloat16, got 'float16'"):
        DMC(_cfg(tmp_path, train_dtype="float16"))
    with pytest.raises(ValueError, match="sync_seconds must be None or a number >= 0, got -1"):
        DMC(_cfg(tmp_path, sync_seconds=-1))


def test_fused_adam_bumps_versions_and_matches_the_plain_one():
    """``train.common.make_adam``: the fused kernel's steps bump the parameters' version
    counters (the scorers' caches are keyed on them: without it they would keep scoring with
    the old weights), and land where the per-tensor Adam does, float32 rounding aside."""
    from cardenvs.train.common import make_adam

    torch.manual_seed(0)
    nets = [torch.nn.Sequential(torch.nn.Linear(30, 40), torch.nn.ReLU(), torch.nn.Linear(40, 1))
            for _ in range(2)]
    nets[1].load_state_dict(nets[0].state_dict())
    opts = [make_adam(nets[0].parameters(), 1e-2), torch.optim.Adam(nets[1].parameters(), lr=1e-2)]
    assert opts[0].defaults.get("fused") is True  # this torch fuses Adam on the CPU
    x, y = torch.randn(64, 30), torch.randn(64, 1)
    start = [p.detach().clone() for p in nets[0].parameters()]
    for _ in range(50):
        before = [p._version for p in nets[0].parameters()]
        for net, opt in zip(nets, opts):
            opt.zero_grad()
            ((net(x) - y) ** 2).mean().backward()
            opt.step()
        assert all(p._version > v for p, v in zip(nets[0].parameters(), before))
    for a, b, a0 in zip(nets[0].parameters(), nets[1].parameters(), start):
        assert (a - a0).abs().max() > 0.01  # 50 steps of 1e-2 moved them
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
    # a checkpoint of the plain Adam (an older run's) resumes into the fused one, still fused
    from cardenvs.train.common import load_optimizer_state

    load_optimizer_state(opts[0], opts[1].state_dict())
    assert opts[0].param_groups[0]["fused"] is True
    assert opts[0].state_dict()["state"][0]["step"] == 50


def test_duplicate_returns_match_a_game_by_game_replay(tmp_path):
    """The lockstep evaluation's returns, the network's and the opponent's, equal those of
    each game played alone, move by move; in Da Niangniang, whose scores do not sum to zero,
    the paired difference is not a multiple of the network's own score."""
    t = DMC(_cfg(tmp_path, game="niangniang", max_updates=0, hidden=(32,)))
    g = t.game
    n = g.n_players
    rules, _ = make_eval_agent("rules", g, seed=3)
    seeds = np.random.default_rng(4).integers(2**62, size=3)
    net, opp = duplicate_returns(g, t.policy, rules, seeds, with_opponent=True)
    assert np.array_equal(net, duplicate_returns(g, t.policy, rules, seeds))
    buf = np.empty(g.n_actions, np.int64)
    obs = np.zeros((1, g.layout.size), np.float32)
    for d, sd in enumerate(seeds):
        for seat in range(n):
            s = g.new_state()
            g.reset(s, int(sd))
            ret = np.zeros(n)
            while not g.done(s):
                k = g.legal(s, buf)
                c = g.current(s)
                if k == 1:
                    a = int(buf[0])
                else:
                    g.encode(s, c, obs[0])
                    if c == seat:
                        a = int(t.policy.choose(obs, buf[:k].copy(), np.array([k]))[0])
                    else:
                        mask = np.zeros((1, g.n_actions), np.int8)
                        mask[0, buf[:k]] = 1
                        a = int(rules.act_batch(obs, mask)[0])
                g.step(s, a)
                ret += g.rewards(s)
            assert net[d, seat] == ret[seat]
            assert opp[d, seat] == pytest.approx(np.delete(ret, seat).mean())
    res = summarize(net, opp)
    assert res["diff"] == pytest.approx(np.mean(net.mean(1) - opp.mean(1)))
    assert not np.allclose(net + (n - 1) * opp, 0)  # not zero-sum: diff is its own number


@pytest.mark.parametrize("act_dtype", ["float32", "bfloat16", "int8"])
def test_actor_process_feeds_the_learner(tmp_path, act_dtype):
    t = DMC(_cfg(tmp_path, game="wakeng", max_updates=5, envs=16, hidden=(32,), batch=128, actors=1,
                 act_dtype=act_dtype))
    res = t.run()
    assert res["updates"] == 5 and res["samples"] >= 5 * 128 and res["games"] > 0
    assert t._actors is None  # closed at the end of the run


class _LendingPool:
    """A stand-in for ``ActorPool`` lending its one slot: ``get(copy=False)`` returns views of
    it and refills it with the next batch (as an actor would once it is handed back)."""

    def __init__(self, B: int, D: int):
        self.obs, self.act = np.zeros((B, D), np.float32), np.zeros(B, np.int64)
        self.tgt = np.zeros(B, np.float32)
        self.k = 0

    def get(self, timeout: float = 1.0, copy: bool = True):
        assert not copy
        self.k += 1
        self.obs[:], self.act[:], self.tgt[:] = self.k, self.k, self.k
        return 10, 1, (self.obs, self.act, self.tgt)

    def release(self):
        pass

    def close(self):
        pass


def test_learner_reads_a_lent_slot_in_place_and_copies_what_it_keeps(tmp_path):
    """With actor processes the learner updates on the batch in the actor's shared slot (no
    copy); samples still queued when the next batch is fetched (an update limit stopped
    them) are copied first, so the slot's reuse cannot change them."""
    t = DMC(_cfg(tmp_path, game="wakeng", max_updates=0, batch=8, hidden=(32,)))
    pool = t._actors = _LendingPool(8, t.obs_dim)
    t.engine_step()
    obs, act, tgt = t._pop_batch(8)
    assert np.shares_memory(obs, pool.obs) and np.shares_memory(act, pool.act)
    assert t._q_n == 0 and t._q_obs == [] and (act == 1).all()
    t.engine_step()  # batch 2 queued, not trained on
    t.engine_step()  # the slot refilled with batch 3: batch 2 must survive
    assert t._q_n == 16 and t.counters["decisions"] == 30
    obs, act, tgt = t._pop_batch(8)
    assert (act == 2).all() and (obs == 2).all() and (tgt == 2).all()
    obs, act, tgt = t._pop_batch(8)
    assert (act == 3).all() and (obs == 3).all()
    t._actors = None


def test_init_warm_starts_from_a_weight_file(tmp_path):
    src = DMC(_cfg(tmp_path / "a", game="wakeng", max_updates=3))
    src.run()
    path = src.export(str(tmp_path / "w.npz"), dtype=np.float32)
    t = DMC(_cfg(tmp_path / "b", game="wakeng", init=path, max_updates=0))
    agent = TrainedAgent(make_game("wakeng"), weights=path)
    obs = np.random.default_rng(0).random((5, t.obs_dim)).astype(np.float32)
    ids = np.arange(40)
    q_file = np.concatenate([agent.scores(o, ids) for o in obs])
    q_net = t.policy.scores(obs, np.tile(ids, 5), np.full(5, 40))
    np.testing.assert_allclose(q_net, q_file, rtol=1e-5, atol=1e-5)
    assert t.scale == pytest.approx(src.scale)
    with pytest.raises(ValueError, match="hidden sizes"):
        DMC(_cfg(tmp_path / "c", game="wakeng", init=path, hidden=(32,)))
    override = _override_file(tmp_path / "override.npz")  # rules + a learned override
    with pytest.raises(ValueError, match="override file"):
        DMC(_cfg(tmp_path / "d", init=override, hidden=(512, 256, 128)))


def _override_file(path) -> str:
    """The shipped Dou Dizhu network as an override file of an earlier version (its metadata
    names the prior agent ``rules`` and margins), which the loader refuses."""
    from cardenvs.agents.trained import save_weights

    net = QNetwork(os.path.join(WEIGHTS_DIR, "doudizhu_network.npz"))
    meta = dict(net.meta, mode="prior", prior="rules", prior_margins={"play": 0.0})
    save_weights(str(path), net.layer_list(), net.obs_dim, meta, ctx_dim=net.ctx_dim)
    return str(path)


def test_lockstep_baseline_still_trains(tmp_path):
    res = DMC(_cfg(tmp_path, game="wakeng", engine="lockstep", max_updates=3, envs=16)).run()
    assert res["updates"] == 3 and res["games"] > 0


def test_max_updates_is_exact_when_one_step_fills_several_batches(tmp_path):
    # 64 games and batches of 16: a self-play step queues far more than one batch, and the
    # learner still stops at exactly max_updates (a resumed run relies on it)
    for n in (1, 4):
        t = DMC(_cfg(tmp_path / str(n), game="wakeng", max_updates=n, envs=64, hidden=(16,), batch=16))
        res = t.run()
        assert res["updates"] == n and t._q_n >= 16


def test_dmc_weights_make_a_network_only_agent(tmp_path):
    t = DMC(_cfg(tmp_path, game="wakeng", max_updates=1, envs=8, hidden=(16,), batch=64))
    t.run()
    agent = TrainedAgent(make_game("wakeng"), weights=str(tmp_path / "wakeng.npz"))
    assert agent.net.meta["mode"] == "network"
    with pytest.raises(ValueError, match="names the prior agent 'rules': an override file"):
        TrainedAgent(make_game("doudizhu"), weights=_override_file(tmp_path / "o.npz"))


def _run_with_eval_log(tmp_path, name: str, text: str):
    run = tmp_path / name
    run.mkdir()
    (run / "eval.csv").write_text(text)
    return run


def _is_png(path) -> bool:
    return path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_learning_curves_png(tmp_path):
    from cardenvs.train.curves import main as curves_main

    run = _run_with_eval_log(
        tmp_path, "run", "deals,score,score_ci,win_rate,win_ci,opponent,train_s,decisions,updates\n"
        "50,-1.0,0.5,0.3,0.1,rules,0.0,0,0\n50,0.5,0.4,0.5,0.1,rules,120.0,9,3\n"
        "50,2.0,0.3,0.7,0.1,random,120.0,9,3\n")
    out = tmp_path / "c.png"
    assert curves_main([f"{run}:engine:25", "--out", str(out)]) == 0 and _is_png(out)
    assert curves_main([str(run), "--opponent", "search", "--out", str(out)]) == 2
    # a run that logged the opponent under another name: the fourth field names it
    assert curves_main([f"{run}:as-random::random", "--opponent", "search", "--out", str(out)]) == 0
    assert curves_main([f"{run}:x::nobody", "--out", str(out)]) == 2


def test_curves_plot_the_paired_difference_when_logged(tmp_path):
    from cardenvs.train.common import eval_metric
    from cardenvs.train.curves import main as curves_main, read_eval

    run = _run_with_eval_log(
        tmp_path, "run", "deals,score,score_ci,win_rate,win_ci,diff,diff_ci,opponent,train_s\n"
        "50,0.3,0.1,0.5,0.1,-0.2,0.1,rules,0.0\n50,0.4,0.1,0.5,0.1,0.1,0.1,rules,60.0\n")
    rows = read_eval(str(run), "rules")
    assert [r["diff"] for r in rows] == [-0.2, 0.1]
    assert eval_metric(rows)[0] == "diff"
    # a log from before the difference was logged (or one such row) plots the network's score
    assert eval_metric(rows + [{"score": 1.0, "diff": ""}])[0] == "score"
    assert eval_metric([{"score": 1.0}])[0] == "score"
    out = tmp_path / "c.png"
    assert curves_main([str(run), "--out", str(out)]) == 0 and _is_png(out)


def _spy_teacher(t):
    """Record every (legal ids, action) of the teacher (the rules agent acts one position at a time)."""
    calls = []
    inner = t.teacher.act

    def act(observation, legal=None, info=None):
        a = inner(observation, legal, info)
        calls.append((np.asarray(legal).copy(), int(a)))
        return a

    t.teacher.act = act
    return calls


def test_teacher_mode_on_the_engine_plays_the_teacher_and_keeps_alternatives(tmp_path):
    t = DMC(_cfg(tmp_path, game="doudizhu", envs=16, teacher="rules", teacher_eps=0.0,
                 teacher_margin=0.2))
    t._start_selfplay()
    calls = _spy_teacher(t)
    t.step()  # starts the engine
    for _ in range(80):
        sp = t._engine
        shown = [sp.vg.legal[i, :sp.vg.n_legal[i]].copy() for i in range(16)]
        before = len(calls)
        t.step()
        step_calls = calls[before:]
        slots = sp.pos_slot[:len(step_calls)]
        # the teacher saw each game with 2+ legal actions once, with its legal ids, and every
        # such game's move is the teacher's (no exploration, no network mix)
        assert sorted(slots.tolist()) == [i for i in range(16) if len(shown[i]) > 1]
        for (legal, _), i in zip(step_calls, slots):
            assert sorted(legal.tolist()) == sorted(shown[i].tolist())
        assert sp.actions[slots].tolist() == [a for _, a in step_calls]
    assert t.counters["teacher_decisions"] == len(calls)
    act = np.concatenate(t._q_act)
    alt = np.concatenate(t._q_alt)
    assert len(act) > 100 and len(alt) == len(act)
    # the random alternative is always there and is another action than the teacher's; the
    # network's greedy action is kept only where it differs from the teacher's
    assert (alt[:, 1] >= 0).all() and (alt[:, 1] != act).all() and (alt[:, 0] != act).all()
    # the samples' actions and alternatives were legal at their positions: the samples come
    # in finished-game order, so compare as multisets of (action, alternative) legality
    legal_of = {}
    for legal, a in calls:
        legal_of.setdefault(a, []).append(set(legal.tolist()))
    assert all(any(alt[j, 1] in s for s in legal_of[int(act[j])]) for j in range(len(act)))


def test_teacher_mode_engine_explores_at_the_teacher_rate(tmp_path):
    from cardenvs.train.selfplay import K_NEXP

    t = DMC(_cfg(tmp_path, game="doudizhu", envs=32, teacher="rules", teacher_eps=0.5))
    t._start_selfplay()
    calls = _spy_teacher(t)
    same = total = explored = 0
    for _ in range(60):
        before = len(calls)
        t.step()
        step_calls = calls[before:]
        played = t._engine.actions[t._engine.pos_slot[:len(step_calls)]]
        same += int((played == np.array([a for _, a in step_calls])).sum())
        total += len(step_calls)
        explored += int(t._engine.cnt[K_NEXP])
    # the engine draws the exploring decisions before the teacher is asked (it is not asked
    # about them): every decision it is asked about plays its move, and about half of all
    # decisions explore (binomial: 0.5 +- 0.02 over ~1,300 decisions)
    assert total > 300 and same == total
    assert 0.42 < explored / (explored + total) < 0.58


NETWORK_FILES = sorted(f for f in os.listdir(WEIGHTS_DIR) if f.endswith("_network.npz"))


@pytest.mark.parametrize("name", NETWORK_FILES)
def test_shipped_network_only_weights_play_every_decision(name):
    from helpers import random_decisions

    path = os.path.join(WEIGHTS_DIR, name)
    assert os.path.getsize(path) <= 5 * 2**20
    meta = QNetwork(path).meta  # the game and options the network was fitted on
    assert name.startswith(meta["game"] + "_")
    game = make_game(meta["game"], **meta.get("options", {}))
    agent = TrainedAgent(game, weights=path)
    assert agent.net.meta["mode"] == "network"
    obs = np.zeros(game.layout.size, np.float32)
    kinds, offered = set(), set()
    for s, legal, _ in random_decisions(game, 3, seed=4):
        if len(legal) > 1:
            game.encode(s, game.current(s), obs)
            a = agent.act({"observation": obs}, legal.copy())
            assert a in legal
            kinds.add(game.block_of(a))
            offered.update(game.block_of(int(x)) for x in legal)
    # card play and, where the game has them, the other decisions (bids, ...)
    assert "play" in kinds and len(kinds) >= min(2, len(offered)), (kinds, offered)


@pytest.mark.parametrize("dtype", ["bfloat16", "int8"])
def test_act_dtype_plays_and_bad_values_are_refused(tmp_path, dtype):
    t = DMC(_cfg(tmp_path / "a", game="wakeng", max_updates=2, envs=8, hidden=(16,), batch=64,
                 act_dtype=dtype))
    res = t.run()
    assert res["updates"] == 2 and res["games"] > 0
    want = getattr(torch, dtype)
    assert t._score.dtype == want and t._opp_score.dtype == want
    assert (t._score.body is not None) == (dtype == "int8")
    assert next(t.net.parameters()).dtype == torch.float32  # the learner stays float32
    with pytest.raises(ValueError, match="act_dtype must be one of"):
        DMC(_cfg(tmp_path / "b", act_dtype="float16"))
    with pytest.raises(ValueError, match="needs the vector engine"):
        DMC(_cfg(tmp_path / "c", act_dtype=dtype, engine="lockstep"))


def test_curves_from_arena_results(tmp_path):
    """``--arena RESULT:MINUTES``: a recipe's curve drawn from arena results, the paired
    difference against the opponent read with its sign and 95% interval."""
    from cardenvs.arena import run_arena, write_results
    from cardenvs.train.curves import arena_curves, main as curves_main, read_arena

    res = run_arena("doudizhu", "rules,random", deals=6, seed=3, progress=False)
    out = tmp_path / "ar"
    write_results(res, out)
    spd = res["score_per_deal"]
    d = np.asarray(spd["rules"], float) - np.asarray(spd["random"], float)
    half = 1.959963984540054 * d.std(ddof=1) / np.sqrt(d.size)
    row = read_arena(str(out), "random")  # the directory: its one arena_*.json
    assert row["deals"] == 6 and row["diff"] == pytest.approx(d.mean())
    assert row["diff_ci"] == pytest.approx(half)
    # the opponent named first in the pairing: the difference turns sign
    assert read_arena(str(out), "rules")["diff"] == pytest.approx(-d.mean())
    # points sorted by minutes, one curve per label
    curves = arena_curves([f"{out}:30", f"{out}:10", f"{out}:5:other"], "random", "recipe")
    assert [(c[0], [r["train_s"] for r in c[1]]) for c in curves] == [
        ("recipe", [600.0, 1800.0]), ("other", [300.0])]
    png = tmp_path / "c.png"
    assert curves_main(["--arena", f"{out}:7.5", "--arena", f"{out}:20", "--opponent", "random",
                        "--out", str(png)]) == 0 and _is_png(png)
    # clear errors: no such opponent, a bad MINUTES, no arena result
    with pytest.raises(ValueError, match="no pairing against 'search'"):
        read_arena(str(out), "search")
    with pytest.raises(ValueError, match="MINUTES must be a number"):
        arena_curves([f"{out}:soon"], "random")
    with pytest.raises(ValueError, match="0 arena results"):
        read_arena(str(tmp_path), "random")
    assert curves_main(["--arena", f"{out}:1", "--opponent", "search", "--out", str(png)]) == 2
