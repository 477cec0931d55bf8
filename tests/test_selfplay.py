"""The self-play data engine (``train/selfplay.py``).

* every sample the engine emits (observation, action, Monte-Carlo target) matches an
  independent replay of the same games with the one-game :class:`Game` API: the recorded
  first state of each deal and the engine's actions, the game's own ``legal``/``encode``/
  ``rewards``; checked on Wakeng and on a Da Niangniang match (it pays at the end of every
  hand, so targets must sum pay over hands);
* the learner-seat (pool) mode records only the learner's decisions;
* the sample store grows when more decisions are in flight than it holds, keeping samples;
* greedy play follows the scores, exploration 1 plays uniformly.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from cardenvs.api import make_game
from cardenvs.train.selfplay import K_NEXP, SelfPlay


def _scorer(seed: int):
    """A fixed pseudo-random linear score of (observation, action features)."""
    rng = np.random.default_rng(seed)
    cache = {}

    def score(obs, feats, owner):
        key = (obs.shape[1], feats.shape[1])
        if key not in cache:
            cache[key] = (rng.normal(size=key[0]).astype(np.float32),
                          rng.normal(size=key[1]).astype(np.float32))
        wo, wf = cache[key]
        return (obs @ wo)[owner] + feats @ wf

    return score


def _play_and_replay(name: str, n: int, steps: int, eps: float, scale: float,
                     pool_frac: float = 0.0, **options):
    game = make_game(name, **options)
    sp = SelfPlay(game, n, seed=11, eps=eps, scale=scale, pool_frac=pool_frac, capacity=16)
    score = _scorer(5)
    opp = _scorer(6) if pool_frac > 0 else None
    starts: dict = {}  # (slot, deal) -> first state of the deal
    actions: dict = {}  # (slot, deal) -> actions played in it
    learner: dict = {}  # (slot, deal) -> learner seat (-1: every seat)
    deal = np.zeros(n, np.int64)
    for i in range(n):
        starts[i, 0] = sp.vg.states[i].copy()
        learner[i, 0] = int(sp.learner_seat[i])
    for _ in range(steps):
        sp.step(score, opp)
        for i in range(n):
            actions.setdefault((i, int(deal[i])), []).append(int(sp.actions[i]))
            if sp.vg.done[i]:
                deal[i] += 1
                starts[i, int(deal[i])] = sp.vg.states[i].copy()
                learner[i, int(deal[i])] = int(sp.learner_seat[i])
    batch = sp.pop()
    assert sp.ready_count == 0 and len(batch) == sp.samples
    # the independent replay of every finished deal
    expected = {}
    buf = np.empty(game.n_actions, np.int64)
    for (i, d), acts in actions.items():
        if d >= deal[i]:
            continue  # unfinished: no samples yet
        s = starts[i, d].copy()
        rows = []  # (seat, obs, action, step index)
        pay = []
        for t, a in enumerate(acts):
            k = game.legal(s, buf)
            assert a in buf[:k]
            c = game.current(s)
            if k > 1 and learner[i, d] in (-1, c):
                o = np.zeros(game.layout.size, np.float32)
                game.encode(s, c, o)
                rows.append((c, o, a, t))
            game.step(s, a)
            pay.append(game.rewards(s))
        assert game.done(s)
        pay = np.array(pay)
        expected[i, d] = [(c, o, a, scale * pay[t:, c].sum()) for c, o, a, t in rows]
    got: dict = {}
    for j in range(len(batch)):
        got.setdefault((int(batch.slot[j]), int(batch.deal[j])), []).append(j)
    assert set(got) == {k for k, v in expected.items() if v}
    for key, rows in expected.items():
        idx = got.get(key, [])
        assert len(idx) == len(rows), key
        for j, (c, o, a, tgt) in zip(idx, rows):
            assert batch.seat[j] == c and batch.act[j] == a
            np.testing.assert_array_equal(batch.obs[j], o)
            assert batch.target[j] == pytest.approx(tgt, rel=1e-5, abs=1e-5)
    return batch, expected, sp


def test_targets_match_an_independent_replay_wakeng():
    batch, expected, sp = _play_and_replay("wakeng", 6, 400, eps=0.3, scale=0.25)
    assert sp.games >= 10 and len(batch) > 300
    assert np.abs(batch.target).max() > 0
    assert len(sp.st_act) > 16  # the store grew from its initial 16 entries


def test_targets_sum_the_pay_of_every_hand_of_a_match():
    batch, expected, sp = _play_and_replay("niangniang", 3, 700, eps=0.2, scale=1.0, match=True,
                                           target_score=6)
    assert sp.games >= 1
    # within a match a seat's target changes between hands: the later pay is summed, not only
    # the final payout
    changes = 0
    for rows in expected.values():
        for seat in range(4):
            t = [r[3] for r in rows if r[0] == seat]
            changes += len(set(np.round(t, 5))) > 1
    assert changes > 0


def test_pool_mode_learns_only_the_learner_seat():
    batch, expected, sp = _play_and_replay("doudizhu", 8, 300, eps=0.1, scale=1.0, pool_frac=0.5)
    seats_per_deal = {}
    for j in range(len(batch)):
        seats_per_deal.setdefault((int(batch.slot[j]), int(batch.deal[j])), set()).add(int(batch.seat[j]))
    single = sum(len(s) == 1 for s in seats_per_deal.values())
    assert single >= 3  # some deals learned one seat only (and the replay agreed on which)


def test_greedy_follows_scores_and_exploration_is_uniform():
    game = make_game("wakeng")
    sp = SelfPlay(game, 32, seed=2, eps=0.0)
    # score = minus the action id: greedy play is the smallest legal id
    first = lambda obs, feats, owner: np.zeros(len(owner), np.float32)  # noqa: E731
    for _ in range(30):
        legal = [sp.vg.legal[i, :sp.vg.n_legal[i]].copy() for i in range(32)]
        sp.step(first)
        # ties go to the first legal action (the engine's lowest index)
        assert [int(sp.actions[i]) for i in range(32)] == [int(x[0]) for x in legal]
    sp2 = SelfPlay(game, 64, seed=3, eps=1.0)
    picks = []
    for _ in range(20):
        k = sp2.vg.n_legal.copy()
        legal = sp2.vg.legal.copy()
        sp2.step(first)
        for i in range(64):
            if k[i] == 3:
                picks.append(int(np.flatnonzero(legal[i, :3] == sp2.actions[i])[0]))
    counts = np.bincount(picks, minlength=3)
    assert len(picks) > 60 and counts.min() > 0.2 * len(picks)


def test_exploring_decisions_are_never_scored():
    """A learner decision that explores is drawn before the network is asked and never
    reaches it: at ``eps = 1`` the scorer is never called; at ``eps = 0.5`` about half the
    decisions explore, they are the samples without alternatives, and every other sample
    plays the scored choice."""
    sp = SelfPlay("wakeng", 32, seed=4, eps=1.0)
    called = []

    def score(obs, feats, owner):
        called.append(len(obs))
        return np.zeros(len(owner), np.float32)

    for _ in range(60):
        sp.step(score)
    assert not called and sp.samples > 200
    sp = SelfPlay("wakeng", 32, seed=4, eps=0.5)
    scored = explored = 0
    for _ in range(200):
        pos = sp.prepare()
        assert pos.n_learner == pos.n  # self-play: every seat learns
        explored += int(sp.cnt[K_NEXP])
        scored += pos.n
        first = pos.ids[pos.seg[:-1]]  # zero scores: the first legal action is the choice
        sp.commit(np.zeros(pos.m, np.float32), np.stack([first, first], 1))
    assert 0.45 < explored / (explored + scored) < 0.55
    b = sp.pop()
    kept = b.alt[:, 0] >= 0
    assert 0.4 < 1 - kept.mean() < 0.6 and len(b) > 1000, (kept.mean(), len(b))
    np.testing.assert_array_equal(b.act[kept], b.alt[kept, 0])
    assert (b.act[~kept] != -1).all() and (b.alt[~kept] == -1).all()


def test_bad_arguments():
    with pytest.raises(ValueError, match="eps"):
        SelfPlay("wakeng", 4, eps=1.5)
    with pytest.raises(ValueError, match="pool_frac"):
        SelfPlay("wakeng", 4, pool_frac=-0.1)
    sp = SelfPlay("wakeng", 4)
    with pytest.raises(ValueError, match="ready"):
        sp.pop(5)


def test_actor_pool_batches_equal_an_in_process_engine():
    """An :class:`ActorPool` actor's batches, handed over in shared memory, are the batches
    of the same engine in this process (same seed, same network, same scorer) in the same
    order, with the decisions and games they took: a slot is not reused before it is read
    (the reader here is slower than the actor, so the actor waits for its slots), nor, lent
    with ``get(copy=False)``, before the next ``get``."""
    torch = pytest.importorskip("torch")
    from cardenvs.train.dmc import QNet
    from cardenvs.train.selfplay import ActorPool, torch_scorer

    game = make_game("wakeng")
    torch.manual_seed(0)
    net = QNet(game.layout.size, game.action_features(np.zeros(1, np.int64)).shape[1], (32,))
    pool = ActorPool("wakeng", {}, net, net, actors=1, n=8, seed=3, eps=0.2, scale=0.5,
                     pool_frac=0.0, batch=64, slots=2)
    try:
        got = []
        while len(got) < 6:
            g = pool.get(timeout=120)
            if g is not None:
                got.append(g)
                time.sleep(0.3)  # a slow reader: the actor fills both slots and waits
        lent = 0
        while lent < 4:  # views of the slot, read after the actor has had time to reuse it
            g = pool.get(timeout=120, copy=False)
            if g is not None:
                lent += 1
                obs = g[2][0]
                assert np.shares_memory(obs, pool.slots[0][0])
                time.sleep(0.3)
                got.append((g[0], g[1], tuple(a.copy() for a in g[2])))
        pool.release()
        pool.release()  # nothing lent: nothing happens
    finally:
        pool.close()
    sp = SelfPlay("wakeng", 8, seed=3 * 1000, eps=0.2, scale=0.5)
    score = torch_scorer(net, game=sp.game)
    for dec, games, (obs, act, tgt) in got:
        while sp.ready_count < 64:
            sp.step(score)
        b = sp.pop(64)
        np.testing.assert_array_equal(obs, b.obs)
        np.testing.assert_array_equal(act, b.act)
        np.testing.assert_array_equal(tgt, b.target)
    # the counts come with the batches; an actor waiting for a slot plays on, so a batch may
    # carry the decisions of the steps after it was made (never fewer than they took)
    dec, games = sum(g[0] for g in got), sum(g[1] for g in got)
    assert dec % 8 == 0 and dec >= sp.decisions and games >= sp.games > 0
    assert len(np.unique([g[2][0][0].sum() for g in got])) == len(got) == 10  # all different
    with pytest.raises(ValueError, match="slots"):
        ActorPool("wakeng", {}, net, net, actors=1, n=4, seed=0, eps=0.0, scale=1.0,
                  pool_frac=0.0, batch=8, slots=0)


def test_actor_pool_publishes_the_weights_at_most_every_sync_seconds():
    """``ActorPool(sync_seconds=S)``: the learner's weights go to the shared network (its
    version counter, which the actors watch, + 1) at the first :meth:`publish` and then only
    once ``S`` seconds have passed, or when forced; a new opponent always; ``S = 0`` (the
    default) publishes every call.  No actor process is started (``actors=0``)."""
    torch = pytest.importorskip("torch")
    from cardenvs.train.dmc import QNet
    from cardenvs.train.selfplay import ActorPool

    game = make_game("wakeng")
    net = QNet(game.layout.size, game.action_features(np.zeros(1, np.int64)).shape[1], (16,))
    kw = dict(actors=0, n=4, seed=0, eps=0.0, scale=1.0, pool_frac=0.0, batch=8)
    slow = ActorPool("wakeng", {}, net, net, sync_seconds=3600.0, **kw)
    with torch.no_grad():
        net.layers[0].weight.add_(1.0)
    slow.publish(net=net)
    assert slow.version.value == 1 and torch.equal(slow.net.layers[0].weight, net.layers[0].weight)
    with torch.no_grad():
        net.layers[0].weight.add_(1.0)
    slow.publish(net=net, opp_net=net)
    assert slow.version.value == 1 and slow.opp_version.value == 1
    assert not torch.equal(slow.net.layers[0].weight, net.layers[0].weight)  # not sent yet
    slow.publish(net=net, force=True)
    assert slow.version.value == 2 and torch.equal(slow.net.layers[0].weight, net.layers[0].weight)
    every = ActorPool("wakeng", {}, net, net, **kw)
    for _ in range(3):
        every.publish(net=net)
    assert every.version.value == 3
    with pytest.raises(ValueError, match="sync_seconds"):
        ActorPool("wakeng", {}, net, net, sync_seconds=-1.0, **kw)
