"""Expert iteration (``train/exit.py``) and the ``trained+search`` agent (``agents/exit.py``).

* the loop runs, writes its checkpoint, buffer, log and weights (loadable as ``trained:PATH``),
  and resumes where it stopped; SIGTERM ends a run with a checkpoint;
* a run stopped by SIGTERM (during an iteration's updates, or inside its deals) or killed
  outright after a checkpoint, then resumed, equals the unbroken run: the same iterations,
  log and evaluation rows and weights; ``--resume`` of another game, other settings, a
  damaged checkpoint or a buffer that is not the checkpoint's is refused and writes nothing;
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
    # minutes: a bound no loaded machine reaches (max_iterations ends the runs)
    base = dict(game="wakeng", out=str(out), minutes=60.0, hidden=(32,), rollouts=24,
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
    # resume: counters, network and buffer continue; max_iterations counts the whole run
    t2 = ExIt(_cfg(out, max_iterations=3), resume=True)
    assert t2.counters == t.counters and t2.buffer.n == t.buffer.n
    assert np.array_equal(t2.buffer.obs[:t.buffer.n], t.buffer.obs[:t.buffer.n])
    sd, sd2 = t.net.state_dict(), t2.net.state_dict()
    assert all(torch.equal(sd[k], sd2[k]) for k in sd)
    res2 = t2.run()
    assert res2["iterations"] == 3 and res2["updates"] == 9 and res2["games"] == 3
    assert t2.buffer.n > t.buffer.n
    with pytest.raises(ValueError, match="no checkpoint at"):
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
        [sys.executable, "-m", "cardenvs.train.exit", "wakeng", "--minutes", "60", "--hidden", "32",
         "--rollouts", "24", "--candidates", "3", "--games", "1", "--updates", "2",
         "--batch", "32", "--buffer", "500", "--eval-deals", "0", "--no-progress",
         "--out", str(out)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # a generous bound: the first iteration may compile kernels on a loaded machine
    ck = sigterm_after_first_log(proc, out, timeout=1800)
    n = ck["counters"]["iterations"]
    assert n >= 1 and (out / "wakeng.npz").exists()
    # the command's settings (a resumed run takes its checkpoint's), one iteration more
    t2 = ExIt(_cfg(out, max_iterations=n + 1, buffer=500, batch=32, updates=2,
                   net_candidates=3), resume=True)
    assert t2.counters == ck["counters"]
    assert t2.run()["iterations"] == n + 1


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


# -- a stopped or killed run, resumed, equals the unbroken one --------------------------------
#: the columns of log.csv / eval.csv that are not wall-clock times
_LOG_COLS = ("iteration", "games", "decisions", "updates", "loss")
_EVAL_COLS = ("iterations", "opponent", "diff", "diff_ci", "win_rate", "deals", "decisions")


def _rows(path, cols):
    import csv

    if not path.exists():
        return []
    with open(path, newline="") as f:
        return [tuple(r[c] for c in cols) for r in csv.DictReader(f)]


def _same_run(a, b, iterations):
    """Runs ``a`` and ``b`` (folders) made the same iterations, log and evaluation rows
    (less their times), buffer and weights: the checkpoint's float32 tensors and Adam's
    moments, the random states, and the exported file's layers."""
    ca = torch.load(a / "checkpoint.pt", weights_only=False)
    cb = torch.load(b / "checkpoint.pt", weights_only=False)
    assert ca["counters"]["iterations"] == cb["counters"]["iterations"] == iterations
    assert {k: v for k, v in ca["counters"].items() if k != "train_s"} == \
        {k: v for k, v in cb["counters"].items() if k != "train_s"}
    log_a = _rows(a / "log.csv", _LOG_COLS)
    assert [int(r[0]) for r in log_a] == list(range(1, iterations + 1))
    assert _rows(b / "log.csv", _LOG_COLS) == log_a
    assert _rows(b / "eval.csv", _EVAL_COLS) == _rows(a / "eval.csv", _EVAL_COLS)
    assert [r["diff"] for r in ca["eval_history"]] == [r["diff"] for r in cb["eval_history"]]
    assert ca["rng"] == cb["rng"] and ca["expert_rng"] == cb["expert_rng"]
    for k in ca["net"]:
        assert np.array_equal(ca["net"][k].numpy(), cb["net"][k].numpy()), k
    for i, st in ca["opt"]["state"].items():
        for k in ("exp_avg", "exp_avg_sq"):
            assert np.array_equal(st[k].numpy(), cb["opt"]["state"][i][k].numpy())
    with np.load(a / "buffer.npz") as za, np.load(b / "buffer.npz") as zb:
        assert sorted(za.files) == sorted(zb.files)
        for k in za.files:
            assert np.array_equal(za[k], zb[k]), k
    assert not (a / "buffer.next.npz").exists() and not (b / "buffer.next.npz").exists()
    for (wa, ba), (wb, bb) in zip(QNetwork(str(a / "wakeng.npz")).layer_list(),
                                  QNetwork(str(b / "wakeng.npz")).layer_list()):
        assert np.array_equal(wa, wb) and np.array_equal(ba, bb)


#: two deals an iteration (a stop between them drops the first), evaluations at the start and
#: the end only (their times are the clock's)
_KW = dict(games=2, max_iterations=4, eval_deals=4, eval_agents=("random",),
           eval_minutes=600.0)


@pytest.mark.parametrize("where", ["learn", "deals"])
def test_sigterm_then_resume_equals_the_unbroken_run(tmp_path, monkeypatch, where):
    """SIGTERM (the trainer's own handler, the signal sent to this process) during iteration
    3's updates (it ends the iteration) or between iteration 3's two deals (the first is
    dropped with the iteration, and played again): the run resumed with the same settings
    ends at --max-iterations 4 with the unbroken run's iterations, rows, buffer and weights
    (it used to run 4 more, and a dropped deal moved the random states)."""
    import signal

    ExIt(_cfg(tmp_path / "a", **_KW)).run()
    sent = []
    if where == "learn":
        update = ExIt.update

        def hook(self):
            if self.counters["iterations"] == 2 and not sent:
                sent.append(1)
                os.kill(os.getpid(), signal.SIGTERM)
            return update(self)

        monkeypatch.setattr(ExIt, "update", hook)
    else:
        import cardenvs.train.exit as exit_mod

        play, calls = exit_mod.play_deal, []

        def hook(*args, **kwargs):
            calls.append(1)
            if len(calls) == 6:  # the second deal of iteration 3 (the first is played)
                sent.append(1)
                os.kill(os.getpid(), signal.SIGTERM)
            return play(*args, **kwargs)

        monkeypatch.setattr(exit_mod, "play_deal", hook)
    res = ExIt(_cfg(tmp_path / "b", **_KW)).run()
    assert sent and res["stopped"] == "SIGTERM"
    assert res["iterations"] == (3 if where == "learn" else 2)
    monkeypatch.undo()
    t = ExIt(_cfg(tmp_path / "b", **_KW), resume=True)
    assert t.counters["iterations"] == res["iterations"]
    res = t.run()
    assert res["stopped"] is None and res["iterations"] == 4
    _same_run(tmp_path / "a", tmp_path / "b", 4)


@pytest.mark.parametrize("when", ["before", "after"])
def test_killed_run_resumes_from_its_checkpoint_keeping_its_rows(tmp_path, monkeypatch, when):
    """A run killed outright (no handler runs: here an exception) as it writes iteration 4's
    checkpoint, ``before`` the checkpoint file (the buffer already written aside) or
    ``after`` it (the buffer not yet renamed): --resume starts from iteration 3 or 4 with the
    buffer of that state, keeps the log and evaluation rows up to it (an evaluation after
    every iteration), drops the later ones and ends as the unbroken run.  The clock moves
    0.0999 s a reading, so every logged train_s (rounded to 0.1) is above the unrounded one:
    the rows of the checkpoint's own iteration used to be dropped by that comparison."""
    import time
    from types import SimpleNamespace

    import cardenvs.train.exit as exit_mod

    now = [time.perf_counter()]  # the evaluations' deadlines are read on the real clock

    def clock():
        now[0] += 0.0999
        return now[0]

    monkeypatch.setattr(exit_mod, "time", SimpleNamespace(perf_counter=clock))
    kw = dict(max_iterations=5, eval_deals=2, eval_agents=("random",), eval_minutes=1e-6)
    ExIt(_cfg(tmp_path / "a", **kw)).run()

    class Killed(BaseException):
        pass

    save = exit_mod.save_atomic

    def die(obj, path):
        if obj["counters"]["iterations"] == 4:
            if when == "after":
                save(obj, path)
            raise Killed
        return save(obj, path)

    monkeypatch.setattr(exit_mod, "save_atomic", die)
    with pytest.raises(Killed):
        ExIt(_cfg(tmp_path / "b", **kw)).run()
    monkeypatch.setattr(exit_mod, "save_atomic", save)
    b = tmp_path / "b"
    n = 3 if when == "before" else 4
    ck = torch.load(b / "checkpoint.pt", weights_only=False)
    assert ck["counters"]["iterations"] == n and (b / "buffer.next.npz").exists()
    assert round(ck["counters"]["train_s"], 1) > ck["counters"]["train_s"]
    assert [r[0] for r in _rows(b / "log.csv", _LOG_COLS)] == ["1", "2", "3", "4"]
    assert [r[0] for r in _rows(b / "eval.csv", _EVAL_COLS)] == ["0", "1", "2", "3", "4"]
    t = ExIt(_cfg(b, **kw), resume=True)
    assert t.counters == ck["counters"]
    assert [r[0] for r in _rows(b / "log.csv", _LOG_COLS)] == [str(i) for i in range(1, n + 1)]
    assert [r[0] for r in _rows(b / "eval.csv", _EVAL_COLS)] == [str(i) for i in range(n + 1)]
    assert len(t.eval_history) == n + 1
    assert t.run()["iterations"] == 5
    _same_run(tmp_path / "a", b, 5)


def _files(folder):
    """Every file under ``folder`` with its bytes and modification time."""
    out = {}
    for root, _, names in os.walk(folder):
        for n in names:
            p = os.path.join(root, n)
            with open(p, "rb") as f:
                out[p] = (f.read(), os.stat(p).st_mtime_ns)
    return out


def test_resume_of_another_run_or_a_damaged_checkpoint_is_refused_writing_nothing(tmp_path):
    run = tmp_path / "run"
    ExIt(_cfg(run, max_iterations=1)).run()
    before = _files(run)
    cases = [
        (dict(game="doudizhu"), "is for wakeng {}, not doudizhu {}"),
        (dict(options={"min_straight": 6}),
         r"is for wakeng \{\}, not wakeng \{'min_straight': 6\}"),
        (dict(lr=1e-2), r"written with lr=0.001; this run has lr=0.01: resume with the "
                        r"checkpoint's settings"),
        (dict(games=3, seed=4), r"written with seed=0, games=1; this run has seed=4, games=3"),
        (dict(hidden=(16,)), r"written with hidden=\(32,\); this run has hidden=\(16,\)"),
        (dict(buffer=100), r"written with buffer=2000"),
    ]
    for change, fragment in cases:
        with pytest.raises(ValueError, match=fragment):
            ExIt(_cfg(run, max_iterations=3, **change), resume=True)
        assert _files(run) == before, change
    # the free settings may change
    t = ExIt(_cfg(run, max_iterations=3, minutes=1.0, threads=2, progress=True), resume=True)
    assert t.counters["iterations"] == 1
    before = _files(run)
    # a damaged checkpoint, one cut short, a foreign pickle, fields that do not fit
    ck = run / "checkpoint.pt"
    good = ck.read_bytes()
    old = torch.load(ck, weights_only=False)

    def refused(fragment):
        snap = _files(run)
        with pytest.raises(ValueError, match=fragment):
            ExIt(_cfg(run), resume=True)
        assert _files(run) == snap

    for bad in (b"garbage" * 10, good[: len(good) // 2]):
        ck.write_bytes(bad)
        refused("not a readable checkpoint")
    torch.save({"weights": 1}, ck)
    refused("not a trainer's checkpoint")
    for key, value in (("net", None), ("rng", {"state": 1}), ("expert_rng", None),
                       ("counters", dict(old["counters"], decisions=-1)),
                       ("eval_history", [1]), ("scale", float("nan"))):
        torch.save(dict(old, **{key: value}), ck)
        refused("does not fit this run")
    torch.save({k: v for k, v in old.items() if k != "opt"}, ck)
    refused("does not fit this run")
    # a buffer damaged, missing, or of another state than the checkpoint's
    ck.write_bytes(good)
    buf = run / "buffer.npz"
    good_buf = buf.read_bytes()
    buf.write_bytes(good_buf[: len(good_buf) // 3])
    refused("no buffer in .* fits its checkpoint: .* is not a readable buffer")
    buf.unlink()
    refused("no buffer in .* fits its checkpoint")
    with np.load(io_bytes(good_buf)) as z:
        fields = {k: z[k] for k in z.files}
    np.savez(buf, **dict(fields, stamp_decisions=fields["stamp_decisions"] + 1))
    refused("is the buffer of .*, not of")
    np.savez(buf, **dict(fields, n=np.int64(5000)))
    refused("holds 5000 rows")
    buf.write_bytes(good_buf)
    assert {p: v[0] for p, v in _files(run).items()} == {p: v[0] for p, v in before.items()}
    before = _files(run)
    fresh = tmp_path / "none"
    with pytest.raises(ValueError, match="no checkpoint at"):
        ExIt(_cfg(fresh), resume=True)
    assert not fresh.exists()
    # the command line: one line, exit status 2, nothing written
    r = subprocess.run([sys.executable, "-m", "cardenvs.train.exit", "wakeng", "--out", str(run),
                        "--resume", "--lr", "0.01", "--hidden", "32", "--no-progress"],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    # one line (less the kernel compilation notes of a machine whose caches are cold)
    lines = [x for x in r.stderr.splitlines() if not x.startswith("cardenvs: compil")]
    assert len(lines) == 1 and lines[0].startswith("python -m train.exit: --resume:"), r.stderr
    assert "written with" in lines[0] and "lr=0.001" in lines[0], r.stderr
    assert _files(run) == before


def io_bytes(data: bytes):
    """A file object over ``data``."""
    import io

    return io.BytesIO(data)
