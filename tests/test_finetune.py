"""Policy-gradient fine-tuning (``train/finetune.py``) and the rollout's ``needs_slots`` hook.

* the pieces on literal numbers: leave-one-out advantages, the segment softmax and draws,
  the lineups;
* one update moves probability toward an action with a positive advantage and away from one
  with a negative advantage;
* a run writes its weights (loadable as ``trained:PATH``), log, evaluation and checkpoint;
  the same seed gives the same weights; a stopped and resumed run equals an unbroken one;
  SIGTERM ends a run with a checkpoint;
* a file with context inputs (the shipped Wakeng network) fine-tunes;
* network opponents (``--opponents``): a lineup against one equals an independent game loop
  asking each seat's agent; ``self`` is the latest snapshot; evaluations log a row per
  opponent; the bfloat16 learner moves the weights as the float32 one does;
* a run stopped by SIGTERM (after an update, or inside an iteration's games) or killed
  outright after its periodic checkpoint, then resumed, equals the unbroken run: the same
  iterations, log and evaluation rows and weights; ``--resume`` of another game, other
  settings or a damaged checkpoint is refused and writes nothing;
* bad settings are ``ValueError`` naming what is wrong.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from helpers import sigterm_after_first_log

torch = pytest.importorskip("torch")

from cardenvs.agents.trained import QNetwork, TrainedAgent  # noqa: E402
from cardenvs.api import make_game  # noqa: E402
from cardenvs.vector import VectorGame  # noqa: E402
from cardenvs.train.dmc import QNet, export_weights  # noqa: E402
from cardenvs.train.finetune import (  # noqa: E402
    Finetune, FinetuneConfig, NetworkSampler, arena_seat_sets, leave_one_out, lineups, new_deals,
    opponent_list, play_lineup, sample_segments, segment_log_softmax,
)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _tiny_file(path, game="wakeng", seed=0):
    """A small random network-only file (no context inputs)."""
    g = make_game(game)
    torch.manual_seed(seed)
    net = QNet(g.layout.size, g.action_features(np.zeros(1, np.int64)).shape[1], (16,))
    export_weights(net, str(path), {"game": game, "options": {}, "mode": "network",
                                    "hidden": [16], "reward_scale": 1.0})
    return str(path)


def _cfg(tmp, init, **kw):
    base = dict(game="wakeng", init=init, out=str(tmp), minutes=5, deals=2, group=2,
                eval_deals=4, eval_every=1, max_iterations=2, progress=False)
    base.update(kw)
    return FinetuneConfig(**base)


def test_leave_one_out_literal():
    r = np.array([[1.0, 3.0, 5.0, 7.0], [2.0, 2.0, 2.0, 2.0]])[:, :, None]
    adv = leave_one_out(r)[:, :, 0]
    # copy 0: 1 - (3 + 5 + 7) / 3 = -4; copy 1: 3 - 13/3; copy 2: 5 - 11/3; copy 3: 7 - 3
    np.testing.assert_allclose(adv[0], [-4.0, 3 - 13 / 3, 5 - 11 / 3, 4.0])
    np.testing.assert_allclose(adv[1], 0.0)


def test_segment_softmax_and_draws_literal():
    q = np.array([0.0, np.log(4.0), 5.0, 0.0, np.log(2.0), np.log(2.0)])
    sizes = np.array([2, 1, 3])
    p = np.exp(segment_log_softmax(q, sizes))
    np.testing.assert_allclose(p, [0.2, 0.8, 1.0, 0.2, 0.4, 0.4])
    # segment 0: cumulative 0.2, 1.0; segment 2: 0.2, 0.6, 1.0
    np.testing.assert_array_equal(sample_segments(p, sizes, np.array([0.19, 0.5, 0.19])), [0, 0, 0])
    np.testing.assert_array_equal(sample_segments(p, sizes, np.array([0.21, 0.99, 0.61])), [1, 0, 2])
    np.testing.assert_array_equal(sample_segments(p, sizes, np.array([0.999999, 0.0, 0.5])), [1, 0, 1])


def test_lineups_literal():
    assert lineups(3, "single") == [(0,), (1,), (2,)]
    # the arena's six lineups of two agents at three seats, from the first agent's side
    assert lineups(3, "all") == [(0,), (1,), (2,), (1, 2), (0, 2), (0, 1)]
    assert lineups(4, "all") == [(0,), (1,), (2,), (3,), (0, 2), (1, 3)]


def test_evaluation_plays_the_arenas_lineups():
    # Wakeng: the six rotate lineups of two agents at three seats
    g = make_game("wakeng")
    assert sorted(arena_seat_sets(g, new_deals(g, 1, 0)[0])) == [(0,), (0, 1), (0, 2), (1,), (1, 2), (2,)]
    # four seats: the two alternating lineups
    g = make_game("doudizhu4")
    assert sorted(arena_seat_sets(g, new_deals(g, 1, 0)[0])) == [(0, 2), (1, 3)]
    # the landlord fixed before the play: solo lineups, the network as landlord, then as farmers
    g = make_game("doudizhu", auction="fixed")
    st = new_deals(g, 1, 0)[0]
    from cardenvs.core.state import LANDLORD

    solo = int(st[LANDLORD])
    assert arena_seat_sets(g, st) == [(solo,), tuple(s for s in range(3) if s != solo)]


def test_update_follows_the_advantage(tmp_path):
    """Two decisions of one position: the action with the positive advantage gains
    probability, the one with the negative advantage loses it."""
    init = _tiny_file(tmp_path / "init.npz")
    ft = Finetune(_cfg(tmp_path / "run", init, epochs=1, lr=1e-2))
    g = ft.game
    vg = VectorGame(g, 1)
    vg.reset(seed=3)
    obs = vg.obs[:1].astype(np.float32)
    ids = vg.legal[0][: int(vg.n_legal[0])][:2].astype(np.int64)
    assert len(ids) == 2

    def probs():
        with torch.no_grad():
            q = ft.net(torch.from_numpy(obs), torch.from_numpy(g.action_features(ids)),
                       torch.zeros(2, dtype=torch.int64))
        return torch.softmax(q, 0).numpy()

    p0 = probs()
    lp = np.log(p0)
    data = {"obs": np.repeat(obs, 2, 0).astype(np.float16), "ids": np.concatenate([ids, ids]),
            "sizes": np.array([2, 2]), "ctx": None, "choice": np.array([0, 1]),
            "logp": np.array([lp[0], lp[1]]), "adv": np.array([1.0, -1.0])}
    ft.learn(1, data)
    p1 = probs()
    assert p1[0] > p0[0] + 1e-4 and p1[1] < p0[1] - 1e-4


def test_run_files_determinism_and_resume(tmp_path):
    init = _tiny_file(tmp_path / "init.npz")
    res = Finetune(_cfg(tmp_path / "a", init)).run()
    assert res["iterations"] == 2 and res["stopped"] is None and res["decisions"] > 0
    for name in ("wakeng.npz", "log.csv", "eval.csv", "eval.png", "checkpoint.pt", "config.json",
                 "snapshots/wakeng_it1.npz", "snapshots/wakeng_it2.npz"):
        assert (tmp_path / "a" / name).exists(), name
    with open(tmp_path / "a" / "eval.csv") as f:
        assert len(f.read().strip().splitlines()) == 1 + 3  # before, after 1, after 2
    out = QNetwork(str(tmp_path / "a" / "wakeng.npz"))
    start = QNetwork(init)
    assert out.meta["trainer"] == "finetune" and out.meta["iterations"] == 2
    assert not np.allclose(out.layer_list()[0][0], start.layer_list()[0][0])
    agent = TrainedAgent(make_game("wakeng"), weights=str(tmp_path / "a" / "wakeng.npz"))
    vg = VectorGame("wakeng", 4, masks=True)
    vg.reset(seed=1)
    acts = agent.act_batch(vg.obs, vg.masks)
    assert all(vg.masks[i, a] for i, a in enumerate(acts))

    # the same seed: the same weights; a different seed: others
    Finetune(_cfg(tmp_path / "b", init, eval_deals=0)).run()
    Finetune(_cfg(tmp_path / "c", init, eval_deals=0, seed=1)).run()
    a = torch.load(tmp_path / "a" / "checkpoint.pt", weights_only=False)["net"]
    b = torch.load(tmp_path / "b" / "checkpoint.pt", weights_only=False)["net"]
    c = torch.load(tmp_path / "c" / "checkpoint.pt", weights_only=False)["net"]
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a)

    # one iteration, then one more on --resume (max_iterations counts the whole run): the
    # unbroken run's weights
    Finetune(_cfg(tmp_path / "d", init, eval_deals=0, max_iterations=1)).run()
    t = Finetune(_cfg(tmp_path / "d", init, eval_deals=0, max_iterations=2), resume=True)
    assert t.counters["iterations"] == 1
    assert t.run()["iterations"] == 2
    d = torch.load(tmp_path / "d" / "checkpoint.pt", weights_only=False)["net"]
    assert all(torch.equal(a[k], d[k]) for k in a)


def test_context_file_fine_tunes(tmp_path):
    """The shipped Wakeng network takes context inputs (plan_picks): they are computed for
    every sampled decision and the fine-tuned file keeps the context."""
    init = os.path.join(ROOT, "agents", "weights", "wakeng_network.npz")
    res = Finetune(_cfg(tmp_path, init, deals=1, max_iterations=1, eval_deals=2)).run()
    assert res["iterations"] == 1 and res["decisions"] > 0
    out = QNetwork(str(tmp_path / "wakeng.npz"))
    assert out.context == QNetwork(init).context and out.ctx_dim > 0
    assert out.meta["init"] == init


def test_sigterm_keeps_a_checkpoint(tmp_path):
    init = _tiny_file(tmp_path / "init.npz")
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-m", "cardenvs.train.finetune", "wakeng", "--init", init, "--minutes", "5",
         "--deals", "2", "--group", "2", "--eval-deals", "0", "--no-progress", "--out", str(out)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ck = sigterm_after_first_log(proc, out)
    assert ck["counters"]["iterations"] >= 1 and (out / "wakeng.npz").exists()
    n = ck["counters"]["iterations"]
    # the command's settings (a resumed run takes its checkpoint's), one iteration more
    t = Finetune(_cfg(out, init, eval_deals=0, eval_every=25, max_iterations=n + 1), resume=True)
    assert t.counters == ck["counters"]
    assert t.run()["iterations"] == ck["counters"]["iterations"] + 1


@pytest.mark.parametrize("change, fragment", [
    ({"group": 1}, "group must be an int >= 2"),
    ({"deals": 0}, "deals must be an int >= 1"),
    ({"lineups": "pairs"}, "lineups must be one of"),
    ({"lr": 0.0}, "lr must be a number > 0"),
    ({"temperature": -1.0}, "temperature must be a number > 0"),
    ({"eval_deals": 1}, "eval_deals must be 0"),
    ({"game": "chess"}, "unknown game 'chess'"),
    ({"init": "no/such/file.npz"}, "no weight file at 'no/such/file.npz'"),
    ({"opponents": "heuristic,rules"}, "'rules' is none of heuristic, init, self"),
    ({"opponents": "no/such/file.npz"}, "no weight file"),
    ({"train_dtype": "float16"}, "train_dtype must be one of"),
])
def test_bad_settings(tmp_path, change, fragment):
    change = dict(change)
    init = change.pop("init", None) or _tiny_file(tmp_path / "init.npz")
    with pytest.raises(ValueError, match=fragment):
        Finetune(_cfg(tmp_path / "run", init, **change))


def test_file_of_another_game_is_refused(tmp_path):
    init = _tiny_file(tmp_path / "ddz.npz", game="doudizhu")
    with pytest.raises(ValueError, match="does not fit wakeng"):
        Finetune(_cfg(tmp_path / "run", init))
    # an opponent file of another game: refused when the run is made, not at its turn
    with pytest.raises(ValueError, match="cannot play wakeng"):
        Finetune(_cfg(tmp_path / "run", _tiny_file(tmp_path / "wk.npz"),
                      opponents=f"heuristic,{init}"))


def test_cli_reports_bad_input(tmp_path):
    r = subprocess.run([sys.executable, "-m", "cardenvs.train.finetune", "wakeng", "--init",
                        str(tmp_path / "missing.npz"), "--out", str(tmp_path / "o")],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 2 and "no weight file at" in r.stderr and "Traceback" not in r.stderr


def test_rollout_passes_slots_and_seats_to_an_agent_that_needs_them():
    seen = []

    class Recorder:
        needs_slots = True

        def act_batch(self, obs, masks, slots=None, seats=None):
            seen.append((np.array(slots), np.array(seats)))
            return np.array([int(np.flatnonzero(m)[0]) for m in masks], np.int64)

    vg = VectorGame("wakeng", 6)
    vg.reset(seed=2)
    vg.rollout("heuristic", seed=0, slots=[1, 3, 5], agent=Recorder(), agent_seats=(1,))
    assert seen
    for slots, seats in seen:
        assert set(slots.tolist()) <= {1, 3, 5} and (seats == 1).all()


def test_opponent_list_literal(tmp_path):
    f = _tiny_file(tmp_path / "x.npz")
    assert opponent_list("heuristic") == ["heuristic"]
    assert opponent_list(f"heuristic, init,self,{f}") == ["heuristic", "init", "self", f]
    with pytest.raises(TypeError, match="opponents must be a str"):
        opponent_list(["heuristic"])


def test_network_opponent_lineup_equals_an_independent_loop(tmp_path):
    """The learner (greedy, file a) at seat 1 and a ``trained`` agent of file b at seats 0
    and 2, played by ``play_lineup`` through the rollout engine, against the same deals
    played one ``VectorGame.step`` at a time, each seat's agent asked (a lone legal action
    played as it is)."""
    a, b = _tiny_file(tmp_path / "a.npz", seed=0), _tiny_file(tmp_path / "b.npz", seed=1)
    g = make_game("wakeng")
    D = 8
    states = new_deals(g, D, 5)
    ft = Finetune(_cfg(tmp_path / "run", a))
    learner = NetworkSampler(ft.net, g, None, greedy=True)
    vg = VectorGame(g, D, observe=True, auto_reset=False)
    vg.reset(seed=0)
    got = play_lineup(vg, states, learner, (1,), 1, 0, opponent=TrainedAgent(g, weights=b))

    A, B = TrainedAgent(g, weights=a), TrainedAgent(g, weights=b)
    ref = VectorGame(g, D, masks=True, auto_reset=False)
    ref.reset(seed=0)
    ref.load_states(states)
    total = np.zeros((D, 3))
    live = np.arange(D)
    steps = 0
    while live.size:
        acts = np.array([(A if ref.seat[i] == 1 else B).act_batch(ref.obs[i:i + 1],
                                                                  ref.masks[i:i + 1])[0]
                         for i in live], np.int64)
        r, d = ref.step(acts, slots=live)
        total[live] += r[live]
        live = live[~d[live]]
        steps += 1
    assert steps > 20
    np.testing.assert_allclose(got, total)
    assert (np.abs(got).sum(1) > 0).all()  # every deal paid someone
    # the same deals against the rollout policy are other games
    vg.reset(seed=0)
    assert not np.allclose(play_lineup(vg, states, learner, (1,), 1, 0), got)


def test_self_opponent_is_the_latest_snapshot_and_evaluations_per_opponent(tmp_path):
    init = _tiny_file(tmp_path / "init.npz")
    ft = Finetune(_cfg(tmp_path / "run", init, opponents="heuristic,self,init", eval_every=2,
                       max_iterations=3, eval_deals=4))
    assert ft.opponent_path("self") == init and ft.opponent_path("heuristic") is None
    assert ft.eval_opponents() == ["heuristic", "init"]
    res = ft.run()
    assert res["iterations"] == 3
    snap = tmp_path / "run" / "snapshots" / "wakeng_it2.npz"
    assert ft.opponent_path("self") == str(snap)  # iterations 3 -> the snapshot of 2
    assert QNetwork(str(snap)).meta["iterations"] == 2
    with open(tmp_path / "run" / "eval.csv") as f:
        opp = [line.split(",")[5] for line in f.read().strip().splitlines()[1:]]
    assert opp == ["heuristic", "init"] * 3  # before, after 2, at the end (3)
    assert QNetwork(str(tmp_path / "run" / "wakeng.npz")).meta["opponent"] == "heuristic,self,init"
    # the evaluation against the starting file before any update: the same network at every
    # seat, so every lineup plays the same game and the difference is exactly 0
    assert ft.eval_history[1]["opponent"] == "init" and ft.eval_history[1]["diff"] == 0.0


def test_bfloat16_learner_moves_the_weights_like_float32(tmp_path):
    init = _tiny_file(tmp_path / "init.npz")
    deltas = []
    for dtype in ("float32", "bfloat16"):
        ft = Finetune(_cfg(tmp_path / dtype, init, train_dtype=dtype, deals=4, epochs=1))
        ft.opt = torch.optim.SGD(ft.net.parameters(), lr=1e-3)  # the step is the gradient
        before = [p.detach().clone() for p in ft.net.parameters()]
        data = ft.collect(1)
        ft.learn(1, data)
        deltas.append(torch.cat([(p.detach() - q).flatten()
                                 for p, q in zip(ft.net.parameters(), before)]))
    f32, b16 = deltas
    assert f32.norm() > 0 and not torch.equal(f32, b16)
    cos = float(f32 @ b16 / (f32.norm() * b16.norm()))
    assert cos > 0.98, cos


def test_lineup_split_groups_and_signs(tmp_path):
    """``benchmarks.lineup_split``: an agent against itself is level in each group; the first
    agent alone at one seat is the second at the other two, so the groups swap with the sign
    turned when the agents swap."""
    from benchmarks.lineup_split import lineup_split

    a, b = _tiny_file(tmp_path / "a.npz", seed=0), _tiny_file(tmp_path / "b.npz", seed=1)
    same = lineup_split("wakeng", f"trained:{a}", f"trained:{a}", deals=6)
    # (one lineup alone is the deal's luck: its seats against the others)
    assert len(same["lineups"]) == 6 and any(m != 0.0 for _, m in same["lineups"])
    assert same["groups"][1][0] == pytest.approx(0.0, abs=1e-12)
    assert same["groups"][2][0] == pytest.approx(0.0, abs=1e-12)
    ab = lineup_split("wakeng", f"trained:{a}", f"trained:{b}", deals=20)
    ba = lineup_split("wakeng", f"trained:{b}", f"trained:{a}", deals=20)
    assert ab["groups"][1][0] != 0.0
    assert ab["groups"][1][0] == pytest.approx(-ba["groups"][2][0])
    assert ab["groups"][2][0] == pytest.approx(-ba["groups"][1][0])
    assert ab["all"][0] == pytest.approx((ab["groups"][1][0] + ab["groups"][2][0]) / 2)
    with pytest.raises(ValueError, match="deals must be >= 2"):
        lineup_split("wakeng", f"trained:{a}", f"trained:{b}", deals=1)


# -- a stopped or killed run, resumed, equals the unbroken one --------------------------------
#: the columns of log.csv / eval.csv that are not wall-clock times
_LOG_COLS = ("iteration", "games", "decisions", "updates", "loss")
_EVAL_COLS = ("iterations", "opponent", "diff", "diff_ci", "win_rate", "games", "decisions")


def _rows(path, cols):
    import csv

    with open(path, newline="") as f:
        return [tuple(r[c] for c in cols) for r in csv.DictReader(f)]


def _same_run(a, b, iterations):
    """Runs ``a`` and ``b`` (folders) made the same iterations, log and evaluation rows
    (less their times) and weights: the checkpoint's float32 tensors and Adam's moments, and
    the exported file's layers."""
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
    for k in ca["net"]:
        assert np.array_equal(ca["net"][k].numpy(), cb["net"][k].numpy()), k
    for i, st in ca["opt"]["state"].items():
        for k in ("exp_avg", "exp_avg_sq"):
            assert np.array_equal(st[k].numpy(), cb["opt"]["state"][i][k].numpy())
    for (wa, ba), (wb, bb) in zip(QNetwork(str(a / "wakeng.npz")).layer_list(),
                                  QNetwork(str(b / "wakeng.npz")).layer_list()):
        assert np.array_equal(wa, wb) and np.array_equal(ba, bb)


@pytest.mark.parametrize("where", ["learn", "games"])
def test_sigterm_then_resume_equals_the_unbroken_run(tmp_path, monkeypatch, where):
    """SIGTERM (the trainer's own handler, the signal sent to this process) during iteration
    3's update (it ends the iteration) or during iteration 4's games (dropped, redone): the
    run resumed with the same settings ends at --max-iterations 6 with the unbroken run's
    iterations, rows and weights (it used to run 6 more)."""
    import signal

    import cardenvs.train.finetune as ft_mod

    init = _tiny_file(tmp_path / "init.npz")
    kw = dict(max_iterations=6, eval_every=2)
    Finetune(_cfg(tmp_path / "a", init, **kw)).run()
    sent = []
    if where == "learn":
        learn = Finetune.learn

        def hook(self, it, data):
            if it == 3 and not sent:
                sent.append(it)
                os.kill(os.getpid(), signal.SIGTERM)
            return learn(self, it, data)

        monkeypatch.setattr(Finetune, "learn", hook)
    else:
        play = ft_mod.play_lineup

        def hook(vg, states, agent, seats, copies, seed, opponent=None):
            if seed == 4 * 7 + 0 and not sent:  # the first lineup of iteration 4
                sent.append(seed)
                os.kill(os.getpid(), signal.SIGTERM)
            return play(vg, states, agent, seats, copies, seed, opponent)

        monkeypatch.setattr(ft_mod, "play_lineup", hook)
    res = Finetune(_cfg(tmp_path / "b", init, **kw)).run()
    assert sent and res["stopped"] == "SIGTERM" and res["iterations"] == 3
    monkeypatch.undo()
    t = Finetune(_cfg(tmp_path / "b", init, **kw), resume=True)
    assert t.counters["iterations"] == 3
    res = t.run()
    assert res["stopped"] is None and res["iterations"] == 6
    _same_run(tmp_path / "a", tmp_path / "b", 6)


def test_killed_run_resumes_from_its_periodic_checkpoint_keeping_its_rows(tmp_path,
                                                                            monkeypatch):
    """A run killed outright in iteration 4 (no handler runs: here an exception out of the
    update) after the checkpoint of iteration 2: --resume keeps the log and evaluation rows
    of iteration 2 and drops iteration 3's.  The clock moves 0.0999 s a reading, so every
    logged train_s (rounded to 0.1) is above the unrounded one: the rows of the checkpoint's
    own iteration used to be dropped by that comparison."""
    from types import SimpleNamespace

    import cardenvs.train.finetune as ft_mod

    now = [1000.0]

    def clock():
        now[0] += 0.0999
        return now[0]

    monkeypatch.setattr(ft_mod, "time", SimpleNamespace(perf_counter=clock))
    init = _tiny_file(tmp_path / "init.npz")
    kw = dict(max_iterations=6, eval_every=2)
    Finetune(_cfg(tmp_path / "a", init, **kw)).run()

    class Killed(BaseException):
        pass

    learn = Finetune.learn

    def die(self, it, data):
        if it == 4:
            raise Killed
        return learn(self, it, data)

    monkeypatch.setattr(Finetune, "learn", die)
    with pytest.raises(Killed):
        Finetune(_cfg(tmp_path / "b", init, **kw)).run()
    monkeypatch.setattr(Finetune, "learn", learn)
    b = tmp_path / "b"
    ck = torch.load(b / "checkpoint.pt", weights_only=False)
    assert ck["counters"]["iterations"] == 2
    assert round(ck["counters"]["train_s"], 1) > ck["counters"]["train_s"]
    assert [r[0] for r in _rows(b / "log.csv", _LOG_COLS)] == ["1", "2", "3"]
    t = Finetune(_cfg(b, init, **kw), resume=True)
    assert [r[0] for r in _rows(b / "log.csv", _LOG_COLS)] == ["1", "2"]
    assert [r[0] for r in _rows(b / "eval.csv", _EVAL_COLS)] == ["0", "2"]
    assert t.run()["iterations"] == 6
    _same_run(tmp_path / "a", b, 6)


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
    init = _tiny_file(tmp_path / "init.npz")
    run = tmp_path / "run"
    Finetune(_cfg(run, init, eval_deals=0, max_iterations=1)).run()
    ddz = _tiny_file(tmp_path / "ddz.npz", game="doudizhu")
    before = _files(run)
    cases = [
        (dict(game="doudizhu", init=ddz), "is for wakeng {}, not doudizhu {}"),
        (dict(options={"min_straight": 6}),
         r"is for wakeng \{\}, not wakeng \{'min_straight': 6\}"),
        (dict(lr=1e-3), r"written with lr=0.0001; this run has lr=0.001: resume with the "
                        r"checkpoint's settings"),
        (dict(deals=3, seed=4), r"written with seed=0, deals=2; this run has seed=4, deals=3"),
        (dict(init=_tiny_file(tmp_path / "other.npz", seed=1)), r"written with init="),
    ]
    for change, fragment in cases:
        kw = dict(eval_deals=0, max_iterations=3)
        init_ = change.pop("init", init)
        with pytest.raises(ValueError, match=fragment):
            Finetune(_cfg(run, init_, **kw, **change), resume=True)
        assert _files(run) == before, change
    # the same file named otherwise is the same setting; the free settings may change
    rel = os.path.relpath(init)
    Finetune(_cfg(run, rel, eval_deals=0, max_iterations=3, minutes=1, threads=2), resume=True)
    assert _files(run) == before
    # a damaged checkpoint, one cut short, a foreign pickle, none
    ck = run / "checkpoint.pt"
    good = ck.read_bytes()
    for bad, fragment in ((b"garbage" * 10, "not a readable checkpoint"),
                          (good[: len(good) // 2], "not a readable checkpoint")):
        ck.write_bytes(bad)
        snap = _files(run)
        with pytest.raises(ValueError, match=fragment):
            Finetune(_cfg(run, init, eval_deals=0), resume=True)
        assert _files(run) == snap
    torch.save({"weights": 1}, ck)
    with pytest.raises(ValueError, match="not a trainer's checkpoint"):
        Finetune(_cfg(run, init, eval_deals=0), resume=True)
    ck.write_bytes(good)
    cfg = torch.load(ck, weights_only=False)
    del cfg["net"]
    torch.save(cfg, ck)
    with pytest.raises(ValueError, match="does not fit this run"):
        Finetune(_cfg(run, init, eval_deals=0), resume=True)
    fresh = tmp_path / "none"
    with pytest.raises(ValueError, match="no checkpoint at"):
        Finetune(_cfg(fresh, init, eval_deals=0), resume=True)
    assert not fresh.exists()
    # the command line: one line, exit status 2, nothing written
    ck.write_bytes(good)
    before = _files(run)
    r = subprocess.run([sys.executable, "-m", "cardenvs.train.finetune", "wakeng", "--init", init,
                        "--out", str(run), "--resume", "--lr", "0.01", "--deals", "2",
                        "--group", "2", "--eval-deals", "0", "--no-progress"],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "written with lr=0.0001" in r.stderr and r.stderr.count("\n") == 1
    assert _files(run) == before


def test_resume_fuzz_damaged_checkpoints_are_value_errors_writing_nothing(tmp_path):
    """Checkpoints cut short at seeded places and with fields of the wrong kind, range or
    shape: every ``--resume`` is a ``ValueError`` and no file of the run changes."""
    init = _tiny_file(tmp_path / "init.npz")
    run = tmp_path / "run"
    Finetune(_cfg(run, init, eval_deals=4, max_iterations=1)).run()
    ck = run / "checkpoint.pt"
    good = ck.read_bytes()

    def edit(fn):
        ck.write_bytes(good)
        state = torch.load(ck, weights_only=False)
        out = fn(state)
        return state if out is None else out

    mutations = [
        lambda c: [c], lambda c: {"net": c["net"]}, lambda c: c.update(config="wakeng"),
        lambda c: c["config"].update(seed=3), lambda c: c["config"].pop("game"),
        lambda c: c["counters"].update(iterations=-1),
        lambda c: c["counters"].update(train_s=float("nan")),
        lambda c: c["counters"].update(games="many"), lambda c: c["counters"].pop("updates"),
        lambda c: c["counters"].update(decisions=float("inf")),
        lambda c: c.update(eval_history=7), lambda c: c.update(eval_history=[1]),
        lambda c: c.update(rng={"bit_generator": "MT19937"}), lambda c: c.update(rng=None),
        lambda c: c.update(net={}), lambda c: c.update(opt={"state": {}, "param_groups": []}),
        lambda c: c.pop("opt"),
    ]
    rng = np.random.default_rng(0)
    cuts = sorted(rng.integers(0, len(good), 8).tolist())
    cases = [good[:n] for n in cuts] + [None] * len(mutations)
    for i, case in enumerate(cases):
        if case is None:
            torch.save(edit(mutations[i - len(cuts)]), ck)
        else:
            ck.write_bytes(case)
        snap = _files(run)
        with pytest.raises(ValueError, match="--resume: |the checkpoint in"):
            Finetune(_cfg(run, init, eval_deals=4, max_iterations=2), resume=True)
            pytest.fail(f"accepted: case {i}")
        assert _files(run) == snap, i
    ck.write_bytes(good)  # the intact file still resumes
    assert Finetune(_cfg(run, init, eval_deals=4, max_iterations=2), resume=True).run()[
        "iterations"] == 2
