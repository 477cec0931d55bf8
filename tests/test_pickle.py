"""Agents pickle (for SubprocVecEnv, Ray workers, multiprocessing) and play the same after
unpickling; game names are accepted wherever a Game is."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from cardenvs import agents
import cardenvs
from cardenvs.core.game import Game
from cardenvs.wrappers import SeatEnv

AGENT_NAMES = ["random", "rules", "trained"]


def _env(game: str):
    return getattr(cardenvs, cardenvs.GAMES[game]).env()


def _decisions(env, agent, seed: int, limit: int = 400):
    """Let ``agent`` play every seat of one deal; yields each position's observation and
    legal ids (as the agent saw them) and the action chosen."""
    env.reset(seed=seed)
    u = env.unwrapped
    for name in env.agent_iter(limit):
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        legal = u.legal_actions()
        a = agent.act(obs, legal)
        yield obs, legal, a
        env.step(a)


@pytest.mark.parametrize("game", list(cardenvs.GAMES))
@pytest.mark.parametrize("name", AGENT_NAMES)
def test_agent_pickles_and_plays_the_same(name, game):
    reason = agents.unsupported(name, game)
    if reason is not None:
        pytest.skip(reason)
    agent = agents.make_agent(name, game, seed=3)
    env = _env(game)
    # play a deal first: the agent and its game fill their caches (compiled entry points)
    played = sum(1 for _ in _decisions(env, agent, seed=0))
    assert played > 0
    blob = pickle.dumps(agent)
    clone = pickle.loads(blob)
    assert type(clone) is type(agent) and clone.game.info.name == game
    assert clone.game is agent.game  # rebuilt by name and options: the same object in-process
    # the same positions give the same actions (random agents: the same generator state)
    positions = [(obs, legal) for obs, legal, _ in _decisions(_env(game), agents.make_agent(
        "random", game, seed=1), seed=5)]
    assert len(positions) > 10
    mine = [agent.act(o, lg) for o, lg in positions]
    theirs = [clone.act(o, lg) for o, lg in positions]
    assert mine == theirs
    assert all(int(a) in set(lg.tolist()) for a, (_, lg) in zip(theirs, positions))


@pytest.mark.parametrize("game", list(cardenvs.GAMES))
def test_game_pickles_by_name_and_options(game):
    env = _env(game)
    env.reset(seed=0)  # the kernels' compiled entry points are now cached on the game
    g = env.unwrapped.game
    assert g._direct
    clone = pickle.loads(pickle.dumps(g))
    assert clone.info.name == game and clone.options == g.options
    assert clone is cardenvs.make_game(game)
    assert len(pickle.dumps(g)) < 1000  # the name and options, not the tables


def test_game_with_options_pickles_as_that_game():
    g = cardenvs.make_game("doudizhu", preset="douzero", auction="fixed")
    clone = pickle.loads(pickle.dumps(g))
    assert clone.options == g.options and clone.options["preset"] == "douzero"
    assert clone.n_actions == g.n_actions


def test_seat_env_with_a_rules_opponent_pickles():
    env = SeatEnv("wakeng", 0, opponents=agents.make_agent("rules", "wakeng"))
    obs, info = env.reset(seed=4)
    clone = pickle.loads(pickle.dumps(env))
    for _ in range(200):
        a = int(np.flatnonzero(info["action_mask"])[0])
        obs, r, term, trunc, info = env.step(a)
        obs2, r2, term2, trunc2, info2 = clone.step(a)
        assert np.array_equal(obs, obs2) and r == r2 and term == term2
        if term:
            break
    assert term


def test_game_names_accepted_wherever_a_game_is():
    g = cardenvs.make_game("wakeng")
    for name in AGENT_NAMES:
        by_name, by_game = agents.make_agent(name, "wakeng", seed=0), agents.make_agent(
            name, g, seed=0)
        assert by_name.game is by_game.game is g
        assert agents.unsupported(name, "wakeng") == agents.unsupported(name, g)
        assert agents.agent_class(name).unsupported("wakeng") == agents.agent_class(
            name).unsupported(g)
    assert agents.RandomAgent("wakeng").game is g
    from cardenvs.agents.rules import RulesAgent
    from cardenvs.agents.trained import TrainedAgent

    assert RulesAgent("wakeng").game is g and TrainedAgent("wakeng").game is g
    from cardenvs.core.rollout import random_rollouts

    a, b = random_rollouts("wakeng", 3, seed=1), random_rollouts(g, 3, seed=1)
    assert a["checksum"] == b["checksum"] and a["games"] == 3
    assert isinstance(agents.as_game("doudizhu4"), Game)
    with pytest.raises(ValueError, match="unknown game"):
        agents.make_agent("rules", "poker")
    with pytest.raises(TypeError, match="registry name"):
        agents.make_agent("rules", 3)
