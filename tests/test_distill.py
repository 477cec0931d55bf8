"""``train.distill``: teacher-played shards (deterministic, resumable), the imitation fit, and
the network-only agent it writes."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import cardenvs

from cardenvs import agents
from cardenvs.train import distill


def test_collect_is_deterministic_resumable_and_records_the_teachers_moves(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    res = distill.collect("wakeng", "rules", 4, str(a), seed=3, block=2, progress=False)
    assert res["blocks"] == 2 and res["kept"] == 0 and res["decisions"] > 20
    # a larger --deals adds blocks; the ones there are kept, a last block cut short is redone
    again = distill.collect("wakeng", "rules", 5, str(a), seed=3, block=2, progress=False)
    assert again["blocks"] == 1 and again["kept"] == 2
    again = distill.collect("wakeng", "rules", 6, str(a), seed=3, block=2, progress=False)
    assert again["blocks"] == 1 and again["kept"] == 2
    assert json.loads((a / "collect.json").read_text())["deals"] == 6
    with np.load(a / "shard_000002.npz") as z:
        assert set(z["deal"].tolist()) == {4, 5} and int(z["n_deals"]) == 2
    distill.collect("wakeng", "rules", 4, str(b), seed=3, block=2, jobs=2, progress=False)
    for name in ("shard_000000.npz", "shard_000001.npz"):
        with np.load(a / name) as x, np.load(b / name) as y:
            for k in ("obs", "legal", "sizes", "action", "deal", "seat"):
                assert np.array_equal(x[k], y[k]), (name, k)
    # every record is a decision of the deal it names, with the rules agent's move
    with np.load(a / "shard_000001.npz") as z:
        assert set(z["deal"].tolist()) == {2, 3}
    _assert_rules_labels(a / "shard_000001.npz")


def _assert_rules_labels(path):
    """Every record of the shard is a decision with two or more legal actions, labelled with
    the ``rules`` agent's move there (the rules agent decides from the observation alone)."""
    game = cardenvs.make_game("wakeng")
    rules = agents.make_agent("rules", game, seed=None)
    with np.load(path) as z:
        legal, sizes, action, obs = z["legal"], z["sizes"], z["action"], z["obs"]
    start = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    for i in range(len(action)):
        lg = legal[start[i]:start[i] + sizes[i]]
        assert sizes[i] >= 2 and action[i] in lg
        mask = np.zeros(game.n_actions, np.int8)
        mask[lg] = 1
        o = obs[i].astype(np.float32)
        assert rules.act({"observation": o, "action_mask": mask}, lg) == action[i]
    return obs


def test_collect_with_an_opponent_stores_only_the_teachers_seat(tmp_path):
    out = tmp_path / "o"
    distill.collect("wakeng", "rules", 6, str(out), seed=2, block=3, opponent="random",
                    progress=False)
    assert json.loads((out / "collect.json").read_text())["opponent"] == "random"
    deals = []
    for name in ("shard_000000.npz", "shard_000001.npz"):
        with np.load(out / name) as z:
            # deal i: the teacher holds seat i % 3 (every deal has decisions of that seat)
            assert np.array_equal(z["seat"], z["deal"] % 3), (z["seat"], z["deal"])
            deals += z["deal"].tolist()
        _assert_rules_labels(out / name)
    assert set(deals) == set(range(6))
    # with the teacher's own (deterministic) agent as the opponent, the records are exactly
    # the teacher-everywhere collection's decisions of seat i % 3; with random opponents the
    # same deals go elsewhere
    alone, same = tmp_path / "a", tmp_path / "s"
    distill.collect("wakeng", "rules", 3, str(alone), seed=2, block=3, progress=False)
    distill.collect("wakeng", "rules", 3, str(same), seed=2, block=3, opponent="rules",
                    progress=False)
    with np.load(alone / "shard_000000.npz") as x, np.load(same / "shard_000000.npz") as y, \
            np.load(out / "shard_000000.npz") as r:
        mine = x["seat"] == x["deal"] % 3
        assert 0 < mine.sum() < len(mine)
        for k in ("obs", "action", "deal", "seat", "sizes"):
            assert np.array_equal(x[k][mine], y[k]), k
        assert len(r["action"]) != mine.sum() or not np.array_equal(x["obs"][mine], r["obs"])
    with pytest.raises(ValueError, match="opponent 'rlcard' cannot play wakeng"):
        distill.collect("wakeng", "rules", 2, str(tmp_path / "z"), opponent="rlcard",
                        progress=False)


def test_collect_refuses_bad_input(tmp_path):
    with pytest.raises(ValueError, match="teacher 'rlcard' cannot play wakeng"):
        distill.collect("wakeng", "rlcard", 2, str(tmp_path / "x"), progress=False)
    with pytest.raises(ValueError, match="deals must be a positive int"):
        distill.collect("wakeng", "rules", 0, str(tmp_path / "x"), progress=False)
    distill.collect("wakeng", "random", 2, str(tmp_path / "y"), block=2, progress=False)
    with pytest.raises(ValueError, match="use another --out"):
        distill.collect("wakeng", "rules", 2, str(tmp_path / "y"), block=2, progress=False)
    with pytest.raises(ValueError, match="holds wakeng decisions, not doudizhu"):
        distill.fit("doudizhu", str(tmp_path / "y"), progress=False)
    # 0 minutes is no time limit (as 0 epochs is), so both 0 would never end
    with pytest.raises(ValueError, match="both 0"):
        distill.fit("wakeng", str(tmp_path / "y"), minutes=0, epochs=0, progress=False)
    with pytest.raises(ValueError, match="must be >= 0"):
        distill.fit("wakeng", str(tmp_path / "y"), minutes=-1, progress=False)
    assert distill.main(["fit", "wakeng", "--data", str(tmp_path / "none")]) == 2


def test_fit_learns_the_teacher_and_writes_a_network_only_agent(tmp_path):
    data = tmp_path / "d"
    distill.collect("wakeng", "rules", 12, str(data), seed=1, block=3, progress=False)
    res = distill.fit("wakeng", str(data), minutes=2.0, epochs=25, batch=32, holdout=4,
                      eval_deals=0, progress=False)
    hist = res["history"]
    assert res["epochs"] == 25 and res["held_out"] > 0
    # the network comes to play the teacher's move on the decisions it learned from, far
    # above its first epoch (a legal action in ~3 to ~40; the rules agent is deterministic)
    assert hist[-1]["train_agreement"] > 0.85, hist[-1]
    assert hist[-1]["train_agreement"] > hist[0]["train_agreement"] + 0.15, (hist[0], hist[-1])
    game = cardenvs.make_game("wakeng")
    agent = agents.make_agent(f"trained:{res['weights']}", game)
    assert agent.net.meta["mode"] == "network" and agent.net.meta["trainer"] == "distill"
    assert agent.net.meta["teacher"] == "rules"
    # DAgger: the network plays, the teacher labels; both collections fit together
    dag = tmp_path / "dagger"
    distill.collect("wakeng", "rules", 3, str(dag), seed=1, block=3, progress=False,
                    player=f"trained:{res['weights']}", player_share=1.0)
    obs_dag = _assert_rules_labels(dag / "shard_000000.npz")
    with np.load(data / "shard_000000.npz") as z:  # the same deals, other moves played
        assert not np.array_equal(z["obs"], obs_dag)
    both = distill.fit("wakeng", [str(data), str(dag)], str(tmp_path / "both"), epochs=1,
                       minutes=0, batch=32, init=res["weights"], eval_deals=4, progress=False)
    assert both["decisions"] > res["decisions"]
    assert both["epochs"] == 1  # minutes=0: bounded by the epochs alone
    # the evaluation after the epoch: the network against rules on 4 duplicate deals
    (row,) = both["eval"]
    assert row["opponent"] == "rules" and row["deals"] == 4 and row["epoch"] == 1
    assert (tmp_path / "both" / "eval.png").stat().st_size > 0
    assert (tmp_path / "both" / "eval.csv").read_text().count("\n") == 2
    _play_alone(agent, game, 11)


def _play_alone(agent, game, seed):
    """A whole deal of ``game`` with ``agent`` at every seat, through the arena's deal loop
    (its env raises on an illegal move)."""
    from cardenvs.arena import env_for_agents, play_deal

    env, _ = env_for_agents(game.info.name, [], None)
    _, _, decisions = play_deal(env, seed, [agent] * game.n_players)
    assert decisions > 0


def test_sigterm_stops_a_collection_that_the_same_command_continues(tmp_path):
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    out = tmp_path / "c"
    cmd = [sys.executable, "-m", "cardenvs.train.distill", "collect", "wakeng", "--teacher", "rules",
           "--deals", "2000", "--block", "2", "--out", str(out), "--no-progress"]
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.Popen(cmd, cwd=root, stderr=subprocess.PIPE, text=True)
    t0 = time.time()
    while not list(out.glob("shard_*.npz")) and time.time() - t0 < 120:
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "the same command continues" in err
    kept = sorted(p.name for p in out.glob("shard_*.npz"))
    assert kept and not list(out.glob("*.tmp.npz"))
    res = distill.collect("wakeng", "rules", 2 * len(kept) + 2, str(out), block=2,
                          progress=False)
    assert res["kept"] == len(kept) and res["blocks"] == 1


def test_fit_weights_kinds_of_decision_and_logs_each_ones_agreement(tmp_path):
    game = cardenvs.make_game("wakeng")
    names = list(game.blocks)
    data = tmp_path / "d"
    distill.collect("wakeng", "rules", 8, str(data), seed=4, block=2, progress=False)
    kw = dict(epochs=2, batch=32, holdout=2, eval_deals=0, progress=False)
    plain = distill.fit("wakeng", str(data), str(tmp_path / "p"), **kw)
    # a weight on every block alike is the plain fit (the loss is a weighted mean)
    same = distill.fit("wakeng", str(data), str(tmp_path / "s"),
                       weights={b: 3 for b in game.blocks}, **kw)
    bid = distill.fit("wakeng", str(data), str(tmp_path / "b"), weights={"bid": 50}, **kw)
    a, b, c = (agents.make_agent(f"trained:{r['weights']}", game).net for r in (plain, same, bid))
    for x, y, z in zip(a.layers, b.layers, c.layers):
        assert np.allclose(x[0], y[0], atol=1e-4)
    assert not all(np.allclose(x[0], z[0], atol=1e-4) for x, z in zip(a.layers, c.layers))
    assert c.meta["loss_weights"] == {"bid": 50.0} and a.meta["loss_weights"] == {}
    # fit.csv: the held-out agreement of each block, which averages to the overall one
    row = bid["history"][-1]
    held = distill.Decisions(distill.split_shards(str(data), 2)[1])
    counts = np.bincount(game.block_indices(held.action), minlength=len(names))
    per = {n: row[f"holdout_{n}"] for n, c in zip(names, counts) if c}
    assert set(per) >= {"play", "pass", "bid"}
    assert sum(per[n] * c for n, c in zip(names, counts) if c) / counts.sum() == \
        pytest.approx(row["holdout_agreement"], abs=1e-3)
    with pytest.raises(ValueError, match="wakeng has no action block 'take'.*play, pass, bid"):
        distill.fit("wakeng", str(data), str(tmp_path / "x"), weights={"take": 2}, **kw)
    with pytest.raises(ValueError, match="bid=0: the weight must be a positive number"):
        distill.fit("wakeng", str(data), str(tmp_path / "x"), weights={"bid": 0}, **kw)
    assert distill.main(["fit", "wakeng", "--data", str(data), "--weight", "bid=x"]) == 2


def test_play_deal_asks_only_at_real_decisions_and_returns_each_steps_rewards():
    from cardenvs.train.common import StopSignals, play_deal

    g = cardenvs.make_game("niangniang")
    rng = np.random.default_rng(4)
    asked = []

    def choose(t, seat, legal):
        asked.append((t, seat, legal.size))
        return int(legal[rng.integers(legal.size)])

    s = g.new_state()
    out = play_deal(g, s, 77, choose)
    assert g.done(s) and all(k >= 2 for _, _, k in asked) and len(asked) > 10
    # replay the actions by hand: the same deal, the callback's steps and seats, and one
    # reward row per step, the game's rewards() after that step
    r = g.new_state()
    g.reset(r, 77)
    buf = np.empty(g.n_actions + 1, np.int64)
    decisions, paid = [], []
    for t, a in enumerate(out["actions"]):
        k = g.legal(r, buf)
        assert a in buf[:k]
        if k >= 2:
            decisions.append((t, int(g.current(r)), k))
        g.step(r, a)
        paid.append(g.rewards(r))
    assert g.done(r) and decisions == asked
    assert out["rewards"].shape == (len(out["actions"]), g.n_players)
    assert np.array_equal(out["rewards"], np.array(paid)) and np.abs(out["rewards"]).sum() > 0
    # a stop signal abandons the deal at the next step
    stop = StopSignals()
    stop.signum = 15
    assert play_deal(g, s, 77, choose, stop) is None


def _random_network(path, game, seed, hidden=(16, 8)):
    """A network-only weight file of ``game`` with random weights (as a fit writes one)."""
    import torch

    from cardenvs.train.common import game_dims
    from cardenvs.train.dmc import QNet, export_weights

    torch.manual_seed(seed)
    net = QNet(*game_dims(game), hidden)
    export_weights(net, str(path), {"game": game.info.name, "options": {}, "mode": "network",
                                    "trainer": "distill", "teacher": "rules",
                                    "reward_scale": 1.0, "note": f"seed {seed}"})
    return str(path)


def test_average_writes_the_mean_of_the_weights_and_plays(tmp_path):
    game = cardenvs.make_game("wakeng")
    a = _random_network(tmp_path / "a.npz", game, 1)
    b = _random_network(tmp_path / "b.npz", game, 2)
    out = tmp_path / "soup" / "wakeng.npz"
    assert distill.main(["average", "wakeng", a, b, "--out", str(out)]) == 0
    with np.load(a) as za, np.load(b) as zb, np.load(out) as zo:
        keys = sorted(k for k in za.files if k != "meta")
        assert keys == sorted(k for k in zo.files if k != "meta") and len(keys) == 7  # w_obs, w_act, b_0; 16->8; 8->1
        for k in keys:  # the mean of the stored float16 values, rounded to float16
            want = ((za[k].astype(np.float64) + zb[k].astype(np.float64)) / 2).astype(np.float16)
            assert zo[k].dtype == np.float16 and np.array_equal(zo[k], want), k
            assert not np.array_equal(zo[k], za[k])
        meta = json.loads(bytes(zo["meta"]).decode())
    assert meta["averaged"] == [a, b] and [m["note"] for m in meta["sources"]] == ["seed 1", "seed 2"]
    assert meta["mode"] == "network" and meta["game"] == "wakeng" and meta["hidden"] == [16, 8]
    # a file averaged with itself is itself
    same = tmp_path / "same.npz"
    distill.average("wakeng", [a, a], str(same))
    with np.load(a) as za, np.load(same) as zs:
        assert all(np.array_equal(za[k], zs[k]) for k in za.files if k != "meta")
    # the mean plays: a network-only agent whose every move is legal
    agent = agents.make_agent(f"trained:{out}", game)
    assert agent.net.meta["mode"] == "network"
    _play_alone(agent, game, 5)


def test_average_refuses_files_that_do_not_average(tmp_path, capsys):
    wk = cardenvs.make_game("wakeng")
    a = _random_network(tmp_path / "a.npz", wk, 1)
    wide = _random_network(tmp_path / "wide.npz", wk, 2, hidden=(32, 8))
    other = _random_network(tmp_path / "dd.npz", cardenvs.make_game("doudizhu"), 3)
    out = str(tmp_path / "o.npz")
    with pytest.raises(TypeError, match="a list of weight files"):
        distill.average("wakeng", a, out)
    with pytest.raises(ValueError, match="two or more"):
        distill.average("wakeng", [a], out)
    with pytest.raises(ValueError, match="hidden"):
        distill.average("wakeng", [a, wide], out)
    with pytest.raises(ValueError, match="'doudizhu', not 'wakeng'"):
        distill.average("wakeng", [a, other], out)
    with pytest.raises(ValueError, match="no weight file"):
        distill.average("wakeng", [a, str(tmp_path / "missing.npz")], out)
    assert distill.main(["average", "wakeng", a, wide, "--out", out]) == 2
    assert "hidden" in capsys.readouterr().err
    assert not (tmp_path / "o.npz").exists()


def test_relabel_gives_one_kind_of_decision_another_teachers_labels(tmp_path):
    src, out = tmp_path / "src", tmp_path / "rb"
    distill.collect("wakeng", "random", 4, str(src), seed=5, block=2, progress=False)
    res = distill.relabel("wakeng", str(src), str(out), "rules", ["bury"], progress=False)
    g = cardenvs.make_game("wakeng")
    rules = agents.make_agent("rules", g)
    b0, b1 = g.blocks["bury"]
    bury = kept = 0
    for name in ("shard_000000.npz", "shard_000001.npz"):
        with np.load(src / name) as a, np.load(out / name) as b:
            assert np.array_equal(a["obs"], b["obs"]) and np.array_equal(a["legal"], b["legal"])
            start = np.concatenate([[0], np.cumsum(a["sizes"])])
            for i in range(len(a["action"])):
                legal = a["legal"][start[i]:start[i + 1]]
                if ((legal >= b0) & (legal < b1)).all():  # a burial: rules' pick now
                    bury += 1
                    want = rules.act({"observation": a["obs"][i].astype(np.float32)}, legal)
                    assert b["action"][i] == want
                else:  # every other decision keeps random's label
                    kept += 1
                    assert b["action"][i] == a["action"][i]
    # four deals, one digger each, four picks each (with a choice: 20 cards in hand)
    assert bury == res["decisions"] == 16 and kept > 50 and res["shards"] == 2
    assert 0 < res["changed"] <= 16  # random picks rules' card about one time in 20
    meta = json.loads((out / "collect.json").read_text())
    assert meta["teacher"] == "random; bury=rules" and meta["relabelled"]["decisions"] == 16
    # the source and its copy fit together; the weight file names both teachers
    fit = distill.fit("wakeng", [str(src), str(out)], str(tmp_path / "f"), epochs=1, batch=32,
                      hidden=(16,), eval_deals=0, progress=False)
    assert agents.make_agent(f"trained:{fit['weights']}", g).net.meta["teacher"] == \
        "random + random; bury=rules"
    # bad input: a named error, the source untouched
    before = {p.name: p.read_bytes() for p in src.iterdir()}
    with pytest.raises(ValueError, match="blocks are"):
        distill.relabel("wakeng", str(src), str(tmp_path / "x"), "rules", ["burry"])
    with pytest.raises(ValueError, match="needs the game state"):
        distill.relabel("wakeng", str(src), str(tmp_path / "x"), "search", ["bury"])
    with pytest.raises(ValueError, match="another folder"):
        distill.relabel("wakeng", str(src), str(src), "rules", ["bury"])
    with pytest.raises(ValueError, match="holds another collection"):
        distill.relabel("wakeng", str(src), str(out), "random", ["bury"])
    with pytest.raises(ValueError, match="holds wakeng decisions, not doudizhu"):
        distill.relabel("doudizhu", str(src), str(tmp_path / "x"), "rules", ["bury"])
    assert {p.name: p.read_bytes() for p in src.iterdir()} == before
    assert distill.main(["relabel", "wakeng", "--data", str(src), "--out", str(tmp_path / "c"),
                         "--teacher", "rules", "--block", "bury", "--no-progress"]) == 0
    with np.load(tmp_path / "c" / "shard_000001.npz") as z, np.load(out / "shard_000001.npz") as w:
        assert np.array_equal(z["action"], w["action"])


# -- checkpoints and --resume: a stopped or killed fit, resumed, equals the unbroken one -------
#: the columns of fit.csv / eval.csv that are not wall-clock times
_FIT_COLS = ("epoch", "updates", "loss", "train_agreement", "holdout_agreement")
_EVAL_COLS = ("epoch", "updates", "opponent", "diff", "score", "deals")
_KW = dict(minutes=0, epochs=4, batch=32, holdout=3, eval_deals=4, seed=5, progress=False)


@pytest.fixture(scope="module")
def collection(tmp_path_factory):
    data = tmp_path_factory.mktemp("distill") / "d"
    distill.collect("wakeng", "rules", 6, str(data), seed=1, block=2, progress=False)
    return data


@pytest.fixture(scope="module")
def unbroken(collection, tmp_path_factory):
    out = tmp_path_factory.mktemp("distill") / "a"
    res = distill.fit("wakeng", str(collection), str(out), **_KW)
    assert res["epochs"] == 4 and res["stopped"] is None
    return out, res


def _csv_rows(path, cols):
    import csv

    with open(path, newline="") as f:
        return [tuple(r[c] for c in cols) for r in csv.DictReader(f)]


def _same_fit(a, b, epochs=4):
    """Fits ``a`` and ``b`` (folders) of ``epochs`` epochs logged the same rows (less their
    times) and hold the same weights (the checkpoint's float32 tensors, Adam's moments, the
    exported layers)."""
    import torch

    rows = _csv_rows(a / "fit.csv", _FIT_COLS)
    assert [r[0] for r in rows] == [str(e) for e in range(1, epochs + 1)]
    assert _csv_rows(b / "fit.csv", _FIT_COLS) == rows
    assert len(_csv_rows(a / "eval.csv", _EVAL_COLS)) == epochs
    assert _csv_rows(b / "eval.csv", _EVAL_COLS) == _csv_rows(a / "eval.csv", _EVAL_COLS)
    ca = torch.load(a / "checkpoint.pt", weights_only=False)
    cb = torch.load(b / "checkpoint.pt", weights_only=False)
    assert (ca["epoch"], ca["steps"]) == (cb["epoch"], cb["steps"])
    for k in ca["net"]:
        assert np.array_equal(ca["net"][k].numpy(), cb["net"][k].numpy()), k
    for i, st in ca["opt"]["state"].items():
        for k in ("exp_avg", "exp_avg_sq"):
            assert np.array_equal(st[k].numpy(), cb["opt"]["state"][i][k].numpy())
    wa = agents.make_agent(f"trained:{a / 'wakeng.npz'}", cardenvs.make_game("wakeng")).net
    wb = agents.make_agent(f"trained:{b / 'wakeng.npz'}", cardenvs.make_game("wakeng")).net
    for (x, xb), (y, yb) in zip(wa.layer_list(), wb.layer_list()):
        assert np.array_equal(x, y) and np.array_equal(xb, yb)


def test_fit_killed_after_an_epoch_resumes_to_the_unbroken_fits_weights(collection, unbroken,
                                                                          tmp_path, monkeypatch):
    """A fit killed outright after epoch 2 (no handler runs: here an exception where the
    checkpoint of epoch 3 would be written, after its log row and evaluation): ``resume``
    drops epoch 3's rows and ends at epoch 4 with the unbroken fit's rows and weights."""
    from cardenvs.train import distill_resume as dr

    class Killed(BaseException):
        pass

    save = dr.save_fit

    def die(*args, **kw):
        if kw["epoch"] == 3:
            raise Killed
        return save(*args, **kw)

    monkeypatch.setattr(dr, "save_fit", die)
    out = tmp_path / "b"
    with pytest.raises(Killed):
        distill.fit("wakeng", str(collection), str(out), **_KW)
    monkeypatch.setattr(dr, "save_fit", save)
    assert [r[0] for r in _csv_rows(out / "fit.csv", _FIT_COLS)] == ["1", "2", "3"]
    res = distill.fit("wakeng", str(collection), str(out), **_KW, resume=True)
    assert res["epochs"] == 4 and [r["epoch"] for r in res["history"]] == [1, 2, 3, 4]
    _same_fit(unbroken[0], out)


@pytest.mark.parametrize("when", ["inside", "at_the_end"])
def test_fit_stopped_by_sigterm_resumes_to_the_unbroken_fit(collection, unbroken, tmp_path,
                                                            monkeypatch, when):
    """SIGTERM (the fit's own handler, the signal sent to this process) at the second step of
    epoch 2 (the fit stops inside it: the checkpoint holds the epoch's order and position) or
    at its last step (its evaluation is put off to the resumed fit)."""
    import signal

    per_epoch = -(-unbroken[1]["decisions"] // _KW["batch"])
    assert per_epoch >= 3
    at = per_epoch + 2 if when == "inside" else 2 * per_epoch
    calls = []
    sample = distill.sample_batch

    def hook(*args, **kw):
        calls.append(1)
        if len(calls) == at:
            os.kill(os.getpid(), signal.SIGTERM)
        return sample(*args, **kw)

    monkeypatch.setattr(distill, "sample_batch", hook)
    out = tmp_path / "b"
    res = distill.fit("wakeng", str(collection), str(out), **_KW)
    monkeypatch.undo()
    assert res["stopped"] == "SIGTERM" and res["updates"] == at
    import torch

    ck = torch.load(out / "checkpoint.pt", weights_only=False)
    if when == "inside":
        assert ck["epoch"] == 1 and ck["pos"] == 2 * _KW["batch"] and ck["perm"] is not None
        assert res["history"][-1]["epoch"] == round(at / per_epoch, 2)  # the cut-short row
    else:
        assert ck["epoch"] == 2 and ck["perm"] is None and ck["pending_eval"]
        assert len(res["eval"]) == 1  # epoch 1's; epoch 2's is put off
    res = distill.fit("wakeng", str(collection), str(out), **_KW, resume=True)
    assert res["epochs"] == 4 and res["stopped"] is None
    _same_fit(unbroken[0], out)


def _files(*folders):
    """Every file under ``folders`` with its bytes and modification time."""
    out = {}
    for folder in folders:
        for root, _, names in os.walk(folder):
            for n in names:
                p = os.path.join(root, n)
                with open(p, "rb") as f:
                    out[p] = (f.read(), os.stat(p).st_mtime_ns)
    return out


def test_fit_resume_of_other_settings_or_a_damaged_checkpoint_is_refused_writing_nothing(
        collection, unbroken, tmp_path):
    import shutil

    import torch

    out = tmp_path / "run"
    shutil.copytree(unbroken[0], out)
    before = _files(out, collection)
    kw = dict(_KW, epochs=6)
    cases = [({"lr": 1e-2}, r"written with lr=0.001; this run has lr=0.01"),
             ({"batch": 16, "seed": 1}, r"batch=32, seed=5; this run has batch=16, seed=1"),
             ({"hidden": (8,)}, r"hidden=\[512, 256, 128\]"),
             ({"holdout": 2}, "holdout=3"),
             ({"weights": {"bid": 2}}, r"loss_weights=\{\}"),
             ({"eval_agents": ("random",)}, "eval_agents")]
    for change, fragment in cases:
        with pytest.raises(ValueError, match=fragment):
            distill.fit("wakeng", str(collection), str(out), **dict(kw, **change), resume=True)
        assert _files(out, collection) == before, change
    with pytest.raises(ValueError, match="no checkpoint at"):
        distill.fit("wakeng", str(collection), str(tmp_path / "none"), **kw, resume=True)
    assert not (tmp_path / "none").exists()
    # another game's checkpoint; a damaged one; one cut short; the collection grown since
    ck = out / "checkpoint.pt"
    good = ck.read_bytes()
    state = torch.load(ck, weights_only=False)
    state["config"]["game"] = "doudizhu"
    torch.save(state, ck)
    bad = [("is for doudizhu", None), ("not a readable checkpoint", b"\x00junk" * 50),
           ("not a readable checkpoint", good[: len(good) // 3])]
    for fragment, data in bad:
        if data is not None:
            ck.write_bytes(data)
        snap = _files(out, collection)
        with pytest.raises(ValueError, match=fragment):
            distill.fit("wakeng", str(collection), str(out), **kw, resume=True)
        assert _files(out, collection) == snap
    ck.write_bytes(good)
    grown = tmp_path / "grown"
    shutil.copytree(collection, grown)
    distill.collect("wakeng", "rules", 8, str(grown), seed=1, block=2, progress=False)
    moved = tmp_path / "moved"
    shutil.copytree(out, moved)
    state = torch.load(moved / "checkpoint.pt", weights_only=False)
    state["config"]["data"] = [os.path.realpath(grown)]
    torch.save(state, moved / "checkpoint.pt")
    snap = _files(moved)
    with pytest.raises(ValueError, match="the collections now hold"):
        distill.fit("wakeng", str(grown), str(moved), **kw, resume=True)
    assert _files(moved) == snap
    # the command line: one line, exit status 2, nothing written
    import subprocess
    import sys
    from pathlib import Path

    before = _files(out)
    r = subprocess.run([sys.executable, "-m", "cardenvs.train.distill", "fit", "wakeng", "--data",
                        str(collection), "--out", str(out), "--resume", "--lr", "0.5",
                        "--no-progress"], cwd=Path(__file__).resolve().parents[1],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "written with" in r.stderr and r.stderr.count("\n") == 1
    assert _files(out) == before


def test_fit_killed_by_sigkill_resumes_to_the_unbroken_fit(collection, tmp_path):
    """``python -m cardenvs.train.distill fit`` killed outright (SIGKILL: no handler, no
    last write) once its second epoch is logged, then ``fit --resume``: the fit ends at its
    8 epochs with the rows and weights of the fit never killed."""
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    kw = dict(_KW, epochs=8)
    a, b = tmp_path / "a", tmp_path / "b"
    distill.fit("wakeng", str(collection), str(a), **kw)
    cmd = [sys.executable, "-m", "cardenvs.train.distill", "fit", "wakeng", "--data",
           str(collection), "--out", str(b), "--minutes", "0", "--epochs", "8", "--batch", "32",
           "--holdout", "3", "--eval-deals", "4", "--seed", "5", "--no-progress"]
    proc = subprocess.Popen(cmd, cwd=Path(__file__).resolve().parents[1],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    t0 = time.monotonic()
    while not ((b / "fit.csv").exists() and len(_csv_rows(b / "fit.csv", _FIT_COLS)) >= 2):
        assert proc.poll() is None, proc.stderr.read()[-2000:]
        assert time.monotonic() - t0 < 300, "no epoch logged"
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    assert proc.wait(timeout=60) == -signal.SIGKILL
    proc.stderr.close()
    assert len(_csv_rows(b / "fit.csv", _FIT_COLS)) < 8  # killed before the end
    res = distill.fit("wakeng", str(collection), str(b), **kw, resume=True)
    assert res["epochs"] == 8 and [r["epoch"] for r in res["history"]] == list(range(1, 9))
    _same_fit(a, b, epochs=8)


def test_fit_resume_fuzz_damaged_checkpoints_are_value_errors_writing_nothing(collection,
                                                                              unbroken,
                                                                              tmp_path):
    """A checkpoint inside an epoch (a valid one, made by hand) with fields of the wrong
    kind, range or shape, or cut short at seeded places: every ``resume`` is a
    ``ValueError`` and no file of the fit or the collection changes."""
    import shutil

    import torch

    from cardenvs.train import distill_resume as dr

    out = tmp_path / "run"
    shutil.copytree(unbroken[0], out)
    ck = out / "checkpoint.pt"
    state = torch.load(ck, weights_only=False)
    n, batch = state["decisions"], _KW["batch"]
    state.update(perm=np.arange(n)[::-1].copy(), pos=batch, losses=[0.5],
                 steps=state["steps"] + 1)
    dr.check_data(state, str(out), n, state["held_out"], batch)  # consistent: accepted
    torch.save(state, ck)
    good = ck.read_bytes()

    def edit(**kw):
        s = torch.load(ck, weights_only=False)
        s.update(kw)
        return s

    mutations = [
        dict(epoch=-1), dict(epoch=True), dict(steps=state["steps"] + 1), dict(pos=n + 5),
        dict(pos=0), dict(perm=np.arange(n) + 1), dict(perm=np.zeros(n, np.int64)),
        dict(perm=np.arange(n - 1)), dict(perm=np.arange(n) * 0.5), dict(losses=["x"]),
        dict(losses=[]), dict(losses=[float("nan")]), dict(history=[{"updates": 10**9}]),
        dict(history=7), dict(evals=[1]), dict(train_s=float("nan")), dict(train_s="1"),
        dict(np_rng={}), dict(torch_rng=torch.zeros(3, dtype=torch.uint8)), dict(net={}),
        dict(opt={"state": {}, "param_groups": []}), dict(decisions="many"),
        dict(config=dict(state["config"], seed=9)), dict(config=None),
    ]
    rng = np.random.default_rng(1)
    cuts = sorted(rng.integers(0, len(good), 6).tolist())
    kw = dict(_KW, epochs=6)
    for i, case in enumerate([good[:c] for c in cuts] + mutations):
        if isinstance(case, dict):
            ck.write_bytes(good)
            torch.save(edit(**case), ck)
        else:
            ck.write_bytes(case)
        snap = _files(out, collection)
        with pytest.raises(ValueError, match="--resume: |the checkpoint in"):
            distill.fit("wakeng", str(collection), str(out), **kw, resume=True)
            pytest.fail(f"accepted: {case if isinstance(case, dict) else f'cut {i}'}")
        assert _files(out, collection) == snap, case if isinstance(case, dict) else i
    ck.write_bytes(good)  # the intact file resumes inside epoch 5
    res = distill.fit("wakeng", str(collection), str(out), **kw, resume=True)
    assert res["epochs"] == 6 and res["stopped"] is None
