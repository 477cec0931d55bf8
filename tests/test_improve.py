"""Rollout policy improvement (``train/improve.py``) and the ``trained`` agent with a prior.

* :func:`agents.trained.choose_with_prior` on literal score vectors: the prior's move unless the
  best score is more than the margin above it;
* a weight file naming a prior plays exactly the prior with huge margins and exactly the
  network's argmax with a negative one, in ``act`` and ``act_batch``;
* the learner's targets: the teacher's return from the decision and, for every alternative,
  the return of an independent replay of the same deal (teacher to the decision, the
  alternative, teacher to the end), for a 3-player and a wild-joker 4-player game;
* the network's own favourite is among the rolled-out alternatives once it has been trained;
* the margins of a weight file apply per decision kind (card play or other);
* a short run writes the weights with the chosen margins, and they play legal moves.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import random_positions, stop_with_sigterm

torch = pytest.importorskip("torch")

from cardenvs.agents import make_agent  # noqa: E402
from cardenvs.agents.trained import (  # noqa: E402
    TrainedAgent, action_margins, choose_with_prior, prior_margins,
)
from cardenvs.api import make_game  # noqa: E402
from cardenvs.train.dmc import QNet, export_weights  # noqa: E402
from cardenvs.train.improve import Improve, ImproveConfig, main  # noqa: E402


def test_choose_with_prior_literal():
    # two positions: ids [5, 7, 9] with scores [0.0, 1.0, 0.5], then ids [2, 4] with [0.3, 0.2]
    q = np.array([0.0, 1.0, 0.5, 0.3, 0.2])
    ids = np.array([5, 7, 9, 2, 4])
    sizes = np.array([3, 2])
    # prior plays 9 and 4: best 7 is 0.5 above 9; best 2 is 0.1 above 4
    assert choose_with_prior(q, ids, sizes, np.array([9, 4]), 0.0).tolist() == [7, 2]
    assert choose_with_prior(q, ids, sizes, np.array([9, 4]), 0.2).tolist() == [7, 4]
    assert choose_with_prior(q, ids, sizes, np.array([9, 4]), 0.5).tolist() == [9, 4]  # not more than
    assert choose_with_prior(q, ids, sizes, np.array([7, 2]), 0.0).tolist() == [7, 2]  # prior is best
    # one margin per action; inf never deviates to that action
    per_action = np.array([np.inf, np.inf, np.inf, 0.0, 0.0])
    assert choose_with_prior(q, ids, sizes, np.array([9, 4]), per_action).tolist() == [9, 2]
    # the action of best q - margin is compared with the prior, not the action of best q
    per_action = np.array([0.0, 0.8, 0.0, 0.0, 0.0])  # 7: 1.0 - 0.8 = 0.2 < 0.5 of the prior 9
    assert choose_with_prior(q, ids, sizes, np.array([9, 4]), per_action).tolist() == [9, 2]
    # prior 5 (0.0): 7 gains 1.0 - 0.8 = 0.2, 9 gains 0.5 - 0 = 0.5: 9, though 7 scores more
    assert choose_with_prior(q, ids, sizes, np.array([5, 4]), per_action).tolist() == [9, 2]
    with pytest.raises(ValueError, match="not among the legal actions"):
        choose_with_prior(q, ids, sizes, np.array([2, 4]), 0.0)


def test_action_margins_and_meta():
    # pass_id 10: position 0 offers plays 3 and 7 and the pass, position 1 only the pass and
    # bid 11, position 2 a play, the pass and a declaration 11 (Lanxi Wulong's 报牌)
    ids = np.array([3, 7, 10, 10, 11, 5, 10, 11])
    m = action_margins(ids, np.array([3, 2, 3]), 10, (0.5, 0.1))
    assert m.tolist() == [0.5, 0.5, 0.5, 0.1, 0.1, 0.5, 0.5, 0.1]
    # the pass margin applies to card plays (and the pass) where the prior's move is the pass
    base = np.array([10, 11, 5])
    m = action_margins(ids, np.array([3, 2, 3]), 10, (0.5, 0.1, 0.3), base)
    assert m.tolist() == [0.3, 0.3, 0.3, 0.1, 0.1, 0.5, 0.5, 0.1]
    assert prior_margins({"prior_margins": {"play": None, "other": 0.25}}) == (np.inf, 0.25, np.inf)
    assert prior_margins({"prior_margins": {"play": 0.5, "other": None, "pass": 0.2}}) == (0.5, np.inf, 0.2)
    assert prior_margins({}) == (0.0, 0.0, 0.0)


def _prior_weights(tmp_path, game, margins: dict, name: str, seed: int = 1) -> str:
    """A small random network naming ``rules`` as its prior with ``margins`` (meta form)."""
    torch.manual_seed(seed)
    feat = game.action_features(np.zeros(1, np.int64)).shape[1]
    net = QNet(game.layout.size, feat, (32,))
    path = str(tmp_path / f"{name}.npz")
    export_weights(net, path, {"game": game.info.name, "options": {}, "reward_scale": 1.0,
                               "prior": "rules", "prior_margins": margins}, dtype=np.float32)
    return path


@pytest.mark.parametrize("game_name", ["doudizhu", "niangniang"])
def test_prior_margin_switches_between_prior_and_network(tmp_path, game_name):
    game = make_game(game_name)
    rules = make_agent("rules", game, seed=0)
    keep = TrainedAgent(game, weights=_prior_weights(tmp_path, game, {"play": 1e9, "other": 1e9}, "keep"))
    free = TrainedAgent(game, weights=_prior_weights(tmp_path, game, {"play": -1e9, "other": -1e9}, "free"))
    assert keep.prior is not None and keep.margins == (1e9, 1e9, 1e9)
    pos = random_positions(game, 3, seed=5)
    differ = 0
    for obs, legal in pos:
        r = rules.act(obs, legal)
        assert keep.act(obs, legal) == r
        net_best = int(legal[int(np.argmax(free.scores(obs, legal)))])
        assert free.act(obs, legal) == net_best
        differ += net_best != r
    assert differ > 0  # the two extremes are different policies on these positions
    obs = np.stack([o for o, _ in pos])
    masks = np.zeros((len(pos), game.n_actions), np.int8)
    for i, (_, legal) in enumerate(pos):
        masks[i, legal] = 1
    assert keep.act_batch(obs, masks).tolist() == [rules.act(o, l) for o, l in pos]
    assert free.act_batch(obs, masks).tolist() == [free.act(o, l) for o, l in pos]


def _replay_return(game, teacher, seed: int, j: int, alt: int) -> tuple[int, float]:
    """Teacher everywhere in deal ``seed``, except ``alt`` at the ``j``-th decision with 2+
    legal actions; returns (that decision's seat, its rewards from the decision on)."""
    s = game.new_state()
    game.reset(s, seed)
    buf = np.empty(game.n_actions, np.int64)
    obs = np.zeros(game.layout.size, np.float32)
    seen, seat, total = -1, -1, 0.0
    while not game.done(s):
        k = game.legal(s, buf)
        a = int(buf[0])
        if k > 1:
            seen += 1
            c = game.current(s)
            game.encode(s, c, obs)
            a = int(teacher.act(obs, buf[:k]))
            if seen == j:
                seat, a = c, alt
        game.step(s, a)
        if seat >= 0:
            total += float(game.rewards(s)[seat])
    return seat, total


@pytest.mark.parametrize("game_name", ["doudizhu", "wakeng", "niangniang"])
def test_targets_are_replays_of_the_same_deal(tmp_path, game_name):
    cfg = ImproveConfig(game=game_name, out=str(tmp_path), alts=2, buffer=2048, reward_scale=1.0,
                        progress=False)
    tr = Improve(cfg)
    n = tr.collect_deal(seed=12345)
    assert n == tr.buf.n > 0
    teacher = make_agent("rules", tr.game, seed=0)  # the rules agent is deterministic
    checked = 0
    for j in range(n):
        acts, rets = tr.buf.act[j], tr.buf.ret[j]
        seat, g_teacher = _replay_return(tr.game, teacher, 12345, j, int(acts[0]))
        assert rets[0] == pytest.approx(g_teacher)
        assert len(set(acts[acts >= 0].tolist())) == (acts >= 0).sum()  # distinct actions
        for b, r in zip(acts[1:], rets[1:]):
            if b < 0:
                continue
            _, g_alt = _replay_return(tr.game, teacher, 12345, j, int(b))
            assert r == pytest.approx(g_alt)
            checked += 1
    assert checked >= n  # at least one alternative per decision on average


def test_favourite_is_rolled_out_and_short_run_exports_margin(tmp_path):
    out = tmp_path / "run"
    rc = main(["wakeng", "--minutes", "0.3", "--out", str(out), "--batch", "32", "--buffer", "256",
               "--hidden", "32,16", "--select-deals", "3", "--margins", "0,0.5", "--no-progress",
               "--seed", "3"])
    assert rc == 0
    tr = Improve(ImproveConfig(game="wakeng", out=str(out), batch=32, buffer=256, hidden=(32, 16),
                               progress=False), resume=True)
    assert tr.counters["updates"] > 0 and tr.counters["deviations_proposed"] > 0
    before = tr.buf.n
    tr.collect_deal(seed=99)
    # every decision whose favourite differs from the teacher's move has it as first alternative
    g = tr.game
    s = g.new_state()
    g.reset(s, 99)
    buf = np.empty(g.n_actions, np.int64)
    obs = np.zeros(g.layout.size, np.float32)
    i = before
    while not g.done(s):
        k = g.legal(s, buf)
        a = int(buf[0])
        if k > 1:
            g.encode(s, g.current(s), obs)
            a = int(tr.teacher.act(obs, buf[:k]))
            f = int(tr._favourites(obs[None].copy(), [buf[:k].copy()])[0])
            assert tr.buf.act[i, 0] == a
            if f != a:
                assert tr.buf.act[i, 1] == f
            i += 1
        g.step(s, a)
    assert i == tr.buf.n
    meta = json.loads(bytes(np.load(out / "wakeng.npz")["meta"]).decode())
    assert meta["prior"] == "rules"
    assert set(meta["prior_margins"]) == {"play", "other", "pass"}
    assert all(m in (None, 0.0, 0.5) for m in meta["prior_margins"].values())
    agent = TrainedAgent(g, weights=str(out / "wakeng.npz"))
    assert agent.margins == prior_margins(meta)
    for obs, legal in random_positions(g, 2, seed=8):
        assert agent.act(obs, legal) in legal
    with open(out / "margins.csv") as f:
        # header + three sweeps (the "other", "pass" and "play" margins) of two margins each
        assert len(f.read().strip().splitlines()) == 7
    assert (out / "margins.png").exists()


def test_config_errors(tmp_path):
    with pytest.raises(ValueError, match="alts"):
        Improve(ImproveConfig(game="wakeng", out=str(tmp_path), alts=0))
    with pytest.raises(ValueError, match="buffer"):
        Improve(ImproveConfig(game="wakeng", out=str(tmp_path), buffer=10))
    with pytest.raises(ValueError, match="margins"):
        Improve(ImproveConfig(game="wakeng", out=str(tmp_path), margins=(-1.0,)))
    with pytest.raises(ValueError, match="no checkpoint"):
        Improve(ImproveConfig(game="wakeng", out=str(tmp_path / "none")), resume=True)


def test_other_decisions_mode_keeps_only_decisions_without_card_plays(tmp_path):
    cfg = ImproveConfig(game="doudizhu", out=str(tmp_path), alts=3, buffer=2048, decisions="other",
                        progress=False)
    tr = Improve(cfg)
    for seed in range(5):
        tr.collect_deal(seed=seed)
    acts = tr.buf.act[:tr.buf.n]
    assert tr.buf.n >= 5  # every deal opens with at least one bid decision
    assert (acts[acts >= 0] >= tr.game.pass_id).all()  # passes and bids only
    # an auction decision offers pass and at least one bid: at least one alternative
    assert ((acts >= 0).sum(axis=1) >= 2).all()
    with pytest.raises(ValueError, match="decisions"):
        Improve(ImproveConfig(game="wakeng", out=str(tmp_path), decisions="plays"))


def test_margins_apply_per_decision_kind(tmp_path):
    """play margin inf (never), other margin -inf-like: the prior's card play, the network's bids."""
    game = make_game("doudizhu")
    rules = make_agent("rules", game, seed=0)
    path = _prior_weights(tmp_path, game, {"play": None, "other": -1e9}, "mixed", seed=2)
    agent = TrainedAgent(game, weights=path)
    assert agent.margins == (np.inf, -1e9, np.inf)
    pos = random_positions(game, 6, seed=9)
    expect = []
    kinds = set()
    for obs, legal in pos:
        bid = legal.min() >= game.pass_id
        kinds.add(bool(bid))
        want = int(legal[int(np.argmax(agent.scores(obs, legal)))]) if bid else rules.act(obs, legal)
        assert agent.act(obs, legal) == want
        expect.append(want)
    assert kinds == {True, False}
    obs = np.stack([o for o, _ in pos])
    masks = np.zeros((len(pos), game.n_actions), np.int8)
    for i, (_, legal) in enumerate(pos):
        masks[i, legal] = 1
    assert agent.act_batch(obs, masks).tolist() == expect


def test_pass_decisions_mode_keeps_the_teachers_passes(tmp_path):
    """--decisions pass: only positions where the teacher passes with a card play legal; the
    alternatives rolled out are card plays."""
    cfg = ImproveConfig(game="doudizhu", out=str(tmp_path), alts=2, buffer=2048, decisions="pass",
                        progress=False)
    tr = Improve(cfg)
    for seed in range(6):
        tr.collect_deal(seed=seed)
    P = tr.game.pass_id
    acts = tr.buf.act[:tr.buf.n]
    assert tr.buf.n >= 3
    assert (acts[:, 0] == P).all()
    alts = acts[:, 1:]
    assert ((alts >= 0).sum(axis=1) >= 1).all()
    assert (alts[alts >= 0] < P).all()


def test_wulong_declaration_is_an_other_decision(tmp_path):
    """Lanxi Wulong offers 报牌 beside the card plays: --decisions other rolls out the
    declaration where the teacher plays a card, and an agent with play margin inf and a very
    low other margin plays the rules agent's card play but declares wherever it may."""
    game = make_game("wulong")
    P = game.pass_id
    declare = game.blocks["declare"][0]
    cfg = ImproveConfig(game="wulong", out=str(tmp_path / "run"), alts=2, buffer=2048,
                        decisions="other", progress=False)
    tr = Improve(cfg)
    for seed in range(3):
        tr.collect_deal(seed=seed)
    acts = tr.buf.act[:tr.buf.n]
    mixed = acts[:, 0] <= P  # the teacher played a card (or passed) where 报牌 was offered
    assert mixed.any()
    assert (acts[mixed][:, 1] == declare).all() and (acts[mixed][:, 2] == -1).all()
    assert (acts[:, 1:][acts[:, 1:] >= 0] > P).all()  # alternatives: declarations and picks

    rules = make_agent("rules", game, seed=0)
    path = _prior_weights(tmp_path, game, {"play": None, "other": -1e9, "pass": None}, "declarer",
                          seed=3)
    agent = TrainedAgent(game, weights=path)
    seen = set()
    pos = random_positions(game, 3, seed=4)
    expect = []
    for obs, legal in pos:
        want = rules.act(obs, legal)
        if declare in legal and legal.min() < P:  # beside card plays: always 报牌
            want = declare
            seen.add("declare")
        elif legal.min() >= P:  # no card play (pass or 报牌, joker picks): the network's favourite
            want = int(legal[int(np.argmax(agent.scores(obs, legal)))])
        else:
            seen.add("play")
        assert agent.act(obs, legal) == want
        expect.append(want)
    assert seen == {"declare", "play"}
    masks = np.zeros((len(pos), game.n_actions), np.int8)
    for i, (_, legal) in enumerate(pos):
        masks[i, legal] = 1
    assert agent.act_batch(np.stack([o for o, _ in pos]), masks).tolist() == expect


def test_minutes_bound_the_margin_selection_too(tmp_path):
    import time

    # 400 selection deals x 3 seats x 7 margin triples (the teacher's own included) take minutes: the run must still end
    # near its 0.2-minute budget (the selection timed first, its deals cut to fit)
    cfg = ImproveConfig(game="wakeng", out=str(tmp_path / "run"), minutes=0.2, batch=32,
                        buffer=256, hidden=(32, 16), select_deals=400, margins=(0.0, 0.5),
                        progress=False, seed=3)
    tr = Improve(cfg)
    t0 = time.perf_counter()
    res = tr.run()
    took = time.perf_counter() - t0
    assert took < 12.0 + 5.0, took
    assert res["stopped"] is None
    assert len(res["margins"]) == 6 and 0 < res["margins"][0]["deals"] < 400


def test_sigterm_checkpoints_and_resume_drops_discarded_log_rows(tmp_path):
    import csv
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-m", "cardenvs.train.improve", "wakeng", "--minutes", "5", "--out", str(out),
         "--batch", "32", "--buffer", "256", "--hidden", "32,16", "--select-deals", "3",
         "--no-progress", "--seed", "3"],
        cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    import time

    time_limit = 240.0
    t = time.monotonic()
    while not (out / "checkpoint.pt").exists():  # written after the first update
        assert proc.poll() is None, proc.stderr.read()[-2000:]
        assert time.monotonic() - t < time_limit, "no checkpoint"
        time.sleep(0.2)
    time.sleep(1.0)
    ck = stop_with_sigterm(proc, out)
    # a log row of work after the checkpoint (as a SIGKILL would leave) is dropped on resume
    with open(out / "log.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert int(rows[-1]["decisions"]) == ck["counters"]["decisions"]
    with open(out / "log.csv", "a", newline="") as f:
        late = dict(rows[-1], decisions=str(ck["counters"]["decisions"] + 5))
        csv.DictWriter(f, fieldnames=list(rows[0])).writerow(late)
    tr = Improve(ImproveConfig(game="wakeng", out=str(out), batch=32, buffer=256, hidden=(32, 16),
                               progress=False), resume=True)
    assert tr.counters == ck["counters"]
    with open(out / "log.csv", newline="") as f:
        assert list(csv.DictReader(f)) == rows


def test_selection_sweeps_only_the_kinds_the_deals_offered(tmp_path):
    """Pao De Kuai has no bids (no ``other`` decision) and under must-beat the teacher never
    passes beside a card play: the margin selection sweeps the ``play`` margin alone and
    leaves the other two ``inf``; with ``must_beat=False`` the teacher's passes come up and
    the ``pass`` margin is swept too (one sweep of one margin per kind here)."""
    for must, swept in ((True, ("play",)), (False, ("pass", "play"))):
        tr = Improve(ImproveConfig(game="paodekuai", out=str(tmp_path / str(must)), batch=32,
                                   buffer=256, hidden=(32, 16), progress=False, alts=1,
                                   options={"must_beat": must}, select_deals=1,
                                   margins=(0.0,)))
        assert tr._swept_kinds() == ("other", "pass", "play")  # no deal yet: all of them
        for seed in range(6):
            tr.collect_deal(seed=seed)
        assert tr.counters["offered_other"] == 0
        assert (tr.counters["offered_pass"] > 0) == (not must)
        assert tr._swept_kinds() == swept
        assert tr._sweep_triples() == 1 + len(swept)
        margins, rows = tr.select_margin()
        assert len(rows) == len(swept)
        assert margins[1] == float("inf")  # never swept
        if must:
            assert margins[2] == float("inf")
        assert all(r["other"] == float("inf") for r in rows)
