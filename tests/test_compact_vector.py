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
