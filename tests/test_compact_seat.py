"""Compact action spaces in the single-agent view (SeatEnv(actions="compact"), the gymnasium
ids) and the adapter that feeds whole-play agents to a compact env part by part."""

from __future__ import annotations

import pickle

import gymnasium
import numpy as np
import pytest

import cardenvs  # noqa: F401 - registers the gymnasium ids
from cardenvs.compact_seat import CompactAdapter, CompactSeatEnv
from cardenvs.wrappers import SeatEnv


def _play_random(env, seed, rng):
    obs, info = env.reset(seed=seed)
    total, steps = 0.0, 0
    done = False
    while not done:
        assert env.observation_space.contains(obs)
        legal = np.flatnonzero(env.action_masks())
        assert np.array_equal(legal, np.flatnonzero(info["action_mask"]))
        obs, r, done, trunc, info = env.step(int(legal[rng.integers(len(legal))]))
        total += r
        steps += 1
    return total, steps, info


@pytest.mark.parametrize("name", ["doudizhu", "paodekuai", "wulong"])
def test_seat_env_compact(name):
    env = SeatEnv(name, seats=0, actions="compact")
    assert isinstance(env, CompactSeatEnv)
    c = env.codec
    assert env.action_space.n == c.n
    assert env.observation_space.shape == (env.game.layout.size + c.obs_extra,)
    rng = np.random.default_rng(0)
    for seed in range(3):
        total, steps, info = _play_random(env, seed, rng)
        assert steps > 0 and np.isfinite(total) and "final_rewards" in info
        assert not env.action_masks().any() and env.last_play >= 0
    flat = SeatEnv(name, seats=0)
    a, _ = flat.reset(seed=5)
    b, _ = env.reset(seed=5)
    assert np.array_equal(a, b[: env.game.layout.size])
    assert not b[env.game.layout.size:].any()


def test_seat_env_bad_input():
    env = SeatEnv("doudizhu", actions="compact", illegal="raise")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="outside the compact action space"):
        env.step(env.codec.n)
    with pytest.raises(ValueError, match="actions='x' is not one of"):
        SeatEnv("doudizhu", actions="x")


def test_gymnasium_id_and_pickle():
    env = gymnasium.make("cardenvs/DouDizhu-Seat-v0", actions="compact")
    assert isinstance(env.unwrapped, CompactSeatEnv)
    env.reset(seed=1)
    env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
    u = pickle.loads(pickle.dumps(env.unwrapped))
    assert isinstance(u, CompactSeatEnv)
    assert np.array_equal(u.action_masks(), env.unwrapped.action_masks())
    from gymnasium.utils.env_checker import check_env

    check_env(SeatEnv("wakeng", actions="compact"), skip_render_check=True)


@pytest.mark.parametrize("name", ["doudizhu", "paodekuai", "niangniang"])
def test_adapter_plays_the_flat_game(name):
    """The rules agent fed to a compact AEC env part by part plays the same game as in the
    flat env: the same history and rewards."""
    import importlib

    from cardenvs.agents import make_agent
    from cardenvs.registry import spec

    mod = importlib.import_module(f"cardenvs.{spec(name).env_module}")
    cenv, fenv = mod.env(actions="compact"), mod.env()
    g = cenv.unwrapped.game
    agents = {a: CompactAdapter(make_agent("rules", g, seed=0)) for a in cenv.possible_agents}
    cenv.reset(seed=3)
    for agent in cenv.agent_iter(20000):
        _, _, term, trunc, _ = cenv.last()
        cenv.step(None if term or trunc else agents[agent].act(cenv, agent))
    flat_agents = {a: make_agent("rules", g, seed=0) for a in fenv.possible_agents}
    fenv.reset(seed=3)
    for agent in fenv.agent_iter(20000):
        obs, _, term, trunc, _ = fenv.last()
        fenv.step(None if term or trunc else
                  int(flat_agents[agent].act(obs, fenv.unwrapped.legal_actions())))
    assert cenv.unwrapped.history == fenv.unwrapped.history
    assert cenv.unwrapped._cumulative_rewards == fenv.unwrapped._cumulative_rewards


def test_maskable_ppo_learns_on_compact_seat_env():
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    venv = DummyVecEnv([lambda: SeatEnv("doudizhu", actions="compact")])
    model = MaskablePPO("MlpPolicy", venv, n_steps=64, batch_size=32, n_epochs=1, seed=0)
    model.learn(64)
    assert model.num_timesteps >= 64


def test_seat_vec_env_compact():
    pytest.importorskip("stable_baselines3")
    from cardenvs.sb3 import LegalSlotVecEnv, SeatVecEnv

    venv = SeatVecEnv("doudizhu", 3, seed=4, actions="compact")
    c = venv.codec
    assert venv.action_space.n == c.n
    obs = venv.reset()
    assert obs.shape == (3, venv.observation_space.shape[0])
    # game i deals as slot i of the flat SeatVecEnv (the learner's hand, the observation's
    # first field; the random opponents draw from other streams)
    flat = SeatVecEnv("doudizhu", 3, seed=4)
    fo = flat.reset()
    hand = venv.game.layout.start_array()[1]
    assert np.array_equal(fo[:, :hand], obs[:, :hand])
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(300):
        masks = venv.action_masks()
        assert masks.shape == (3, c.n) and masks.any(1).all()
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, rew, dones, infos = venv.step(acts)
        for i in np.flatnonzero(dones):
            assert "terminal_observation" in infos[i] and "episode" in infos[i]
            ended += 1
        for i in range(3):
            assert np.array_equal(np.flatnonzero(infos[i]["action_mask"]),
                                  np.flatnonzero(venv.action_masks()[i]))
    assert ended > 0
    with pytest.raises(ValueError, match="LegalSlotVecEnv has no compact mode"):
        LegalSlotVecEnv("doudizhu", 2, actions="compact")


def test_maskable_ppo_on_compact_seat_vec_env():
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from cardenvs.sb3 import SeatVecEnv

    venv = SeatVecEnv("paodekuai", 2, seed=0, actions="compact")
    model = MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=32, n_epochs=1, seed=0)
    model.learn(64)
    assert model.num_timesteps >= 64
