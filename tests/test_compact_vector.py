"""VectorGame(actions="compact") (cardenvs.compact_vector): alignment with the AEC env in
compact mode, bad input."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from cardenvs.compact_vector import CompactVectorGame
from cardenvs.registry import spec
from cardenvs.vector import VectorGame


@pytest.mark.parametrize("name", ["doudizhu", "paodekuai", "wulong", "niangniang"])
def test_aligned_with_the_aec_env(name):
    """Slot i plays the AEC env's compact game after reset(seed=seeds[i]): the same
    observations, compact legal ids, rewards and completed flat plays."""
    n = 3
    seeds = [5, 6, 7]
    vg = VectorGame(name, n, masks=True, actions="compact")
    assert isinstance(vg, CompactVectorGame)
    vg.reset(seeds=seeds)
    mod = importlib.import_module(f"cardenvs.{spec(name).env_module}")
    envs = [mod.env(actions="compact") for _ in range(n)]
    for e, s in zip(envs, seeds):
        e.reset(seed=s)
    rng = np.random.default_rng(0)
    paid = np.zeros((n, vg.n_players))
    env_paid = np.zeros((n, vg.n_players))
    games = 0
    for step in range(600):
        for i, e in enumerate(envs):
            if not e.agents:  # the slot auto-resets: the env deals its next game
                e.reset()
            u = e.unwrapped
            o = e.observe(e.agent_selection)
            assert np.array_equal(vg.obs[i], o["observation"]), (step, i)
            assert np.array_equal(vg.legal_actions(i), u.legal_actions()), (step, i)
            assert np.array_equal(vg.masks[i], o["action_mask"])
            assert vg.seat[i] == u._index[e.agent_selection]
        acts = np.array([vg.legal[i, rng.integers(vg.n_legal[i])] for i in range(n)])
        rew, done = vg.step(acts)
        paid += rew
        for i, e in enumerate(envs):
            u = e.unwrapped
            h = len(u.history)
            e.step(int(acts[i]))
            if len(u.history) > h:
                assert vg.history_play[i] == u.history[-1]
            r = u.game.rewards(u.state_vec) if len(u.history) > h else np.zeros(vg.n_players)
            env_paid[i] += r
            assert bool(done[i]) == (not u.agents or all(e.terminations.values()))
            if done[i]:
                games += 1
                # finish the env's dead steps
                for a in list(e.agents):
                    e.step(None)
    assert np.allclose(paid, env_paid)
    assert games > 0


def test_bad_compact_action_changes_nothing():
    vg = VectorGame("doudizhu", 2, actions="compact")
    vg.reset(seed=0)
    before = (vg.states.copy(), vg.legal.copy(), vg.obs.copy())
    bad = next(x for x in range(vg.n_actions) if x not in set(vg.legal_actions(1).tolist()))
    with pytest.raises(ValueError, match="game 1 of the batch: illegal compact action"):
        vg.step(np.array([vg.legal[0, 0], bad]))
    with pytest.raises(ValueError, match="outside the compact action space"):
        vg.step(np.array([vg.legal[0, 0], vg.n_actions]))
    assert np.array_equal(before[0], vg.states) and np.array_equal(before[1], vg.legal)
    assert np.array_equal(before[2], vg.obs)


def test_step_random_plays_games():
    vg = VectorGame("paodekuai", 8, actions="compact", observe=False)
    vg.reset(seed=1)
    ended = 0
    for _ in range(400):
        vg.step_random()
        ended += int(vg.done.sum())
    assert ended > 0
    assert "compact" in repr(vg)


def test_bad_actions_option():
    with pytest.raises(ValueError, match="actions='tiny' is not one of"):
        VectorGame("wakeng", 2, actions="tiny")
    with pytest.raises(TypeError, match="actions must be a str"):
        VectorGame("wakeng", 2, actions=None)
    assert type(VectorGame("wakeng", 2)) is VectorGame


@pytest.mark.parametrize("name", ["wakeng", "doudizhu4"])
def test_aligned_no_kicker_game_and_four_players(name):
    """Wakeng (no play has kickers: one decision per play) and 4-player Dou Dizhu, as above."""
    test_aligned_with_the_aec_env(name)


@pytest.mark.parametrize("name", ["doudizhu", "wakeng", "paodekuai", "wulong"])
def test_masks_observations_and_reference_legal_sets(name):
    """Batches with and without masks and observations play the same games from the same
    decisions; the masks mark exactly the legal ids, the observations are the flat engine's
    plus the partial-play fields, and at every first decision the legal ids are the
    distinct first decisions of the flat legal ids (the codec's own Pending)."""
    from cardenvs.core.compact import Pending

    n = 48
    full = VectorGame(name, n, masks=True, actions="compact")
    bare = VectorGame(name, n, observe=False, actions="compact")
    flat = VectorGame(name, n, observe=True)  # replays the completed plays
    for vg in (full, bare, flat):
        vg.reset(seed=11)
    pend = Pending(full.codec)
    rng = np.random.default_rng(3)
    first_checked = kick_checked = plays = 0
    for _ in range(300):
        assert np.array_equal(full.legal, bare.legal) and np.array_equal(full.n_legal,
                                                                         bare.n_legal)
        assert np.array_equal(full.states, flat.states)
        for i in range(n):
            ids = full.legal[i, :full.n_legal[i]]
            assert (full.legal[i, full.n_legal[i]:] == -1).all()
            assert np.array_equal(np.flatnonzero(full.masks[i]), ids)
            assert np.array_equal(full.obs[i, :full.flat_obs_size], flat.obs[i])
            if full._body[i] < 0:
                pend.start(flat.legal[i], int(flat.n_legal[i]))
                assert np.array_equal(ids, pend.legal[:pend.n_legal])
                first_checked += 1
            else:
                kick_checked += 1
        acts = full.step_random(rng).copy()
        bare.step(acts)
        assert np.array_equal(full.completed, bare.completed)
        assert np.array_equal(full.rewards, bare.rewards)
        assert np.array_equal(full.done, bare.done)
        moved = np.flatnonzero(full.completed)
        plays += len(moved)
        flat.step(full.history_play[moved], slots=moved)
        assert np.array_equal(full.history_play, bare.history_play)
    assert first_checked > 1000 and plays > 1000
    if name != "wakeng":
        assert kick_checked > 50
    else:
        assert kick_checked == 0 and full.completed.all()


def test_first_decisions_in_any_order():
    """The compact first decisions of flat legal ids in any order are those of the ids
    ascending (the order every game lists them in, the one-comparison path)."""
    from cardenvs.core.compact import codec_of, first_decisions
    from cardenvs import make_game

    for name in ("doudizhu", "wakeng"):
        c = codec_of(make_game(name))
        vg = VectorGame(name, 64, observe=False)
        vg.reset(seed=5)
        rng = np.random.default_rng(0)
        checked = 0
        for _ in range(40):
            vg.step_random()
            for i in range(vg.n):
                k = int(vg.n_legal[i])
                ids = vg.legal[i:i + 1, :k].copy()
                want = np.unique(c.first[ids[0]])
                for marks in (False, True):
                    shuffled = rng.permutation(ids[0])[None]
                    legal = np.full((1, c.n), -1, np.int64)
                    legal[0, :3] = [0, 1, 2]  # a previous set, replaced
                    n_legal = np.array([3], np.int64)
                    mark = np.zeros((1, c.n), np.int8)
                    mark[0, :3] = 1
                    first_decisions(0, shuffled, np.array([k], np.int64), c.first, marks, mark,
                                    legal, n_legal)
                    assert n_legal[0] == len(want)
                    assert np.array_equal(legal[0, :len(want)], want)
                    assert (legal[0, len(want):] == -1).all()
                    if marks:
                        assert np.array_equal(np.flatnonzero(mark[0]), want)
                checked += 1
        assert checked > 1000


def test_step_random_draws_from_the_generator():
    """step_random takes legal[i, int(u[i] * n_legal[i])] for u = rng.random(n); a finished
    slot (auto_reset=False) is a ValueError and changes nothing."""
    vg = VectorGame("doudizhu", 16, actions="compact", observe=False)
    vg.reset(seed=2)
    for _ in range(30):
        u = np.random.default_rng(7).random(16)
        want = vg.legal[np.arange(16), (u * vg.n_legal).astype(np.int64)]
        got = vg.step_random(np.random.default_rng(7))
        assert np.array_equal(got, want)
    one = VectorGame("wakeng", 2, actions="compact", observe=False, auto_reset=False)
    one.reset(seed=0)
    while one.seat[0] >= 0:
        one.step(one.legal[0, :1], slots=[0])
    assert one.n_legal[0] == 0 and one.n_legal[1] > 0
    before = (one.states.copy(), one.legal.copy())
    with pytest.raises(ValueError, match="game 0 of the batch: action -1 is outside"):
        one.step_random(np.random.default_rng(0))
    assert np.array_equal(before[0], one.states) and np.array_equal(before[1], one.legal)
