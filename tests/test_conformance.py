"""One PettingZoo conformance suite, run over every game in ``cardenvs.GAMES``.

Each test is parametrized by game name (ids are the names), and every game is found the way a
user finds it: ``importlib.import_module("cardenvs." + module)`` and ``module.env``.  A game
added to the registry is therefore checked here without touching this file.

What is checked (the shared conventions of ``cardenvs.core.aec`` and PettingZoo's AEC API):
PettingZoo's own ``api_test`` / ``seed_test`` / ``render_test``; the registry entry; pickling
mid-deal; ``get_state`` / ``set_state``; action strings; masks vs ``legal_actions()`` and
``infos["legal_actions"]`` (``info_legal_actions=True``);
terminal rewards through dead steps; determinism; observation spaces; illegal actions under
``illegal="lose"`` and ``illegal="raise"``.
"""

from __future__ import annotations

import importlib
import pickle
import re
import warnings

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, render_test, seed_test

import cardenvs

NAMES = sorted(cardenvs.GAMES)


def module_of(name: str):
    return importlib.import_module("cardenvs." + cardenvs.GAMES[name])


@pytest.fixture(params=NAMES, ids=NAMES)
def name(request) -> str:
    """The registry name of one game."""
    return request.param


@pytest.fixture
def mod(name):
    """The environment module of that game."""
    return module_of(name)


# -- helpers ---------------------------------------------------------------------------------------


def legal_ids(env) -> np.ndarray:
    """Legal ids of the agent to move."""
    return env.unwrapped.legal_actions()


def mask_ids(obs: dict) -> np.ndarray:
    return np.flatnonzero(obs["action_mask"])


def live(env) -> bool:
    a = env.agent_selection
    return bool(env.agents) and not (env.terminations[a] or env.truncations[a])


def step_random(env, rng) -> int:
    """Step one uniformly random legal action of the agent to move; returns it."""
    ids = legal_ids(env)
    a = int(ids[rng.integers(len(ids))])
    env.step(a)
    return a


def advance(env, rng, n_moves: int) -> list[int]:
    """Play ``n_moves`` random legal actions (fewer if the deal ends); returns them."""
    acts = []
    while len(acts) < n_moves and live(env):
        acts.append(step_random(env, rng))
    return acts


def mid_deal_env(mod, n_moves: int = 10, **kwargs):
    """A fresh env reset with some seed and advanced ``n_moves`` random actions, still running."""
    for seed in range(100):
        env = mod.env(**kwargs)
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        advance(env, rng, n_moves)
        if live(env):
            return env, rng
    raise AssertionError("no seed gave a deal lasting n_moves actions")


def finish(env, rng, actions=None) -> tuple[list[int], dict[str, float]]:
    """Run the deal to the very end (dead steps included).

    Returns the live actions taken and the total reward each agent saw through ``last()``.
    With ``actions`` given, replays those instead of random ones.
    """
    taken: list[int] = []
    totals = {a: 0.0 for a in env.agents}
    it = iter(actions) if actions is not None else None
    for agent in env.agent_iter(100_000):
        _, reward, term, trunc, _ = env.last()
        totals[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        if it is not None:
            a = next(it)
            env.step(a)
        else:
            a = step_random(env, rng)
        taken.append(a)
    assert not env.agents
    return taken, totals


def assert_same_info(i1: dict, i2: dict) -> None:
    assert set(i1) == set(i2)
    for k in i1:
        if isinstance(i1[k], np.ndarray):
            np.testing.assert_array_equal(i1[k], i2[k])
        else:
            assert i1[k] == i2[k], k


def assert_same_position(e1, e2) -> None:
    """Two envs are in the same position: state, mover, legal ids, every agent's view."""
    np.testing.assert_array_equal(e1.unwrapped.state_vec, e2.unwrapped.state_vec)
    assert e1.agents == e2.agents
    assert e1.agent_selection == e2.agent_selection
    np.testing.assert_array_equal(e1.unwrapped.legal_actions(), e2.unwrapped.legal_actions())
    assert e1.unwrapped.history == e2.unwrapped.history
    assert e1.rewards == e2.rewards
    assert e1._cumulative_rewards == e2._cumulative_rewards
    assert e1.terminations == e2.terminations
    assert e1.truncations == e2.truncations
    for a in e1.agents:
        assert_same_info(e1.infos[a], e2.infos[a])
        o1, o2 = e1.observe(a), e2.observe(a)
        np.testing.assert_array_equal(o1["observation"], o2["observation"])
        np.testing.assert_array_equal(o1["action_mask"], o2["action_mask"])


# -- PettingZoo's own tests ------------------------------------------------------------------------


def test_api_test(mod):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # api_test's advice on Dict spaces, ignored reset options
        api_test(mod.env(), num_cycles=200)


def test_seed_test(mod):
    seed_test(mod.env, num_cycles=200)


def test_render_test(mod):
    render_test(mod.env, custom_tests={"ansi": lambda s: isinstance(s, str) and len(s) > 0})


def test_render_text_before_reset_and_without_mode(mod):
    env = mod.env(render_mode="ansi")
    assert isinstance(env.render(), str)
    env = mod.env()
    env.reset(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert env.render() is None


def test_registry_make(mod, name):
    env = pettingzoo.make("aec", f"cardenvs/{name}-v0")
    assert type(env.unwrapped) is type(mod.env().unwrapped)
    env = pettingzoo.make("aec", f"cardenvs/{name}-v0", render_mode="ansi")
    env.reset(seed=1)
    assert isinstance(env.render(), str)


def test_metadata(mod, name):
    env = mod.env()
    assert env.metadata["name"] == cardenvs.GAMES[name]
    assert env.metadata["is_parallelizable"] is False
    assert env.possible_agents == [f"player_{i}" for i in range(len(env.possible_agents))]
    info = env.unwrapped.game.info
    assert info.name == name
    assert info.n_players == len(env.possible_agents)


# -- pickling and cloning --------------------------------------------------------------------------


def test_pickle_round_trip_mid_deal(mod):
    env, rng = mid_deal_env(mod, 10, render_mode="ansi", illegal="raise")
    clone = pickle.loads(pickle.dumps(env))
    assert clone.illegal == "raise" and clone.render_mode == "ansi"
    assert_same_position(env, clone)
    assert clone.render() == env.render()
    # continuing both copies with the same actions gives the same game
    while live(env):
        ids = legal_ids(env)
        np.testing.assert_array_equal(ids, legal_ids(clone))
        a = int(ids[rng.integers(len(ids))])
        env.step(a)
        clone.step(a)
        assert_same_position(env, clone)
    _, t1 = finish(env, rng)
    _, t2 = finish(clone, rng)
    assert t1 == t2
    # the generator travelled too: the next unseeded deal is the same
    env.reset()
    clone.reset()
    assert_same_position(env, clone)


def test_pickle_fresh_and_finished(mod):
    env = mod.env()
    clone = pickle.loads(pickle.dumps(env))
    assert clone.agents == []
    with pytest.raises(ValueError, match="reset"):
        clone.step(0)
    env.reset(seed=5)
    rng = np.random.default_rng(5)
    finish(env, rng)
    clone = pickle.loads(pickle.dumps(env))
    assert clone.agents == []
    clone.reset(seed=5)
    env.reset(seed=5)
    assert_same_position(env, clone)


def test_get_state_set_state_clone(mod):
    env, rng = mid_deal_env(mod, 8)
    snap = env.unwrapped.get_state()
    frozen = snap["state"].copy()
    views = {a: env.observe(a)["observation"] for a in env.agents}
    mover, legal = env.agent_selection, legal_ids(env).copy()
    actions, totals = finish(env, rng)
    np.testing.assert_array_equal(snap["state"], frozen)  # the snapshot is not aliased
    end_state = env.unwrapped.state_vec.copy()

    env.unwrapped.set_state(snap)
    assert env.agent_selection == mover
    np.testing.assert_array_equal(legal_ids(env), legal)
    np.testing.assert_array_equal(env.unwrapped.legal_actions(), legal)
    for a, v in views.items():
        np.testing.assert_array_equal(env.observe(a)["observation"], v)
    actions2, totals2 = finish(env, rng, actions)
    assert actions2 == actions and totals2 == totals
    np.testing.assert_array_equal(env.unwrapped.state_vec, end_state)

    # restoring into another env (e.g. a search worker) gives the same position
    other = mod.env()
    other.reset(seed=12345)
    other.unwrapped.set_state(snap)
    env.unwrapped.set_state(snap)
    assert_same_position(env, other)
    _, totals3 = finish(other, rng, actions)
    assert totals3 == totals


# -- actions -----------------------------------------------------------------------------------------


def test_action_strings_round_trip(mod):
    env = mod.env()
    n = env.action_space("player_0").n
    strings = [env.unwrapped.action_to_string(a) for a in range(n)]
    assert all(isinstance(s, str) and s for s in strings)
    assert len(set(strings)) == n, "two actions print the same"
    back = [env.unwrapped.string_to_action(s) for s in strings]
    assert back == list(range(n))
    assert env.unwrapped.action_to_string(np.int64(n - 1)) == strings[-1]


def test_block_indices_match_block_of(name):
    """The vectorized block lookup against the scalar one, over every action id."""
    game = cardenvs.make_game(name)
    names = list(game.blocks)
    ids = np.arange(game.n_actions)
    assert [names[b] for b in game.block_indices(ids)] == [game.block_of(int(a)) for a in ids]
    for bad in (-1, game.n_actions):
        with pytest.raises(ValueError, match=f"action {bad} is outside the action space"):
            game.block_of(bad)
        with pytest.raises(ValueError, match=f"action {bad} is outside the action space"):
            game.block_indices([0, bad])


def test_mask_equals_legal_actions(mod):
    """Over random deals: the mask of the agent ``last()`` reports equals its legal ids
    (``info_legal_actions=True``: also those of its info)."""
    env = mod.env(info_legal_actions=True)
    g = env.unwrapped.game
    n = g.n_actions
    for seed in range(4):
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        for agent in env.agent_iter(100_000):
            obs, _, term, trunc, info = env.last()
            mask = obs["action_mask"]
            assert mask.dtype == np.int8 and mask.shape == (n,)
            if term or trunc:
                assert not mask.any(), "a done agent's mask must be all zeros"
                env.step(None)
                continue
            ids = np.asarray(info["legal_actions"])
            assert ids.dtype == np.int64 and len(ids) > 0
            assert len(np.unique(ids)) == len(ids)
            np.testing.assert_array_equal(mask_ids(obs), np.sort(ids))
            np.testing.assert_array_equal(env.unwrapped.legal_actions(), ids)
            for other in env.agents:
                if other != agent:
                    assert not env.observe(other)["action_mask"].any()
            # the fast legality check used by step() agrees with the generator
            s = env.unwrapped.state_vec
            assert all(g.is_legal(s, int(a)) for a in ids)
            probe = rng.integers(0, n, 30)
            for a in probe[~np.isin(probe, ids)]:
                assert not g.is_legal(s, int(a))
            env.step(int(ids[rng.integers(len(ids))]))


def test_done_agent_info_lists_no_legal_actions(mod):
    """At a dead step ``last()`` must not offer legal actions the mask (all zeros) denies.

    Checked after a normal end of the deal and after an illegal move (``illegal="lose"``).
    """
    env = mod.env(info_legal_actions=True)
    for seed in range(2):
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        if seed == 1:
            advance(env, rng, 6)
            env.step(some_illegal(env, rng))
        for agent in env.agent_iter(100_000):
            obs, _, term, trunc, info = env.last()
            if term or trunc:
                assert not obs["action_mask"].any()
                assert len(info.get("legal_actions", ())) == 0, (
                    f"done agent {agent}: info['legal_actions'] = {info.get('legal_actions')}"
                )
                env.step(None)
            else:
                step_random(env, rng)


# -- rewards and determinism -----------------------------------------------------------------------


def test_terminal_rewards_through_dead_steps(mod):
    env = mod.env()
    g = env.unwrapped.game
    nonzero = 0
    for seed in range(12):
        env.reset(seed=seed)
        rng = np.random.default_rng(100 + seed)
        while live(env):
            step_random(env, rng)
        # the deal is over: every agent is still listed until its dead step
        assert env.agents == env.possible_agents
        assert all(env.terminations.values())
        expected = g.rewards(env.unwrapped.state_vec)
        dead = []
        for agent in env.agent_iter():
            _, reward, term, trunc, _ = env.last()
            assert term and not trunc
            assert reward == pytest.approx(expected[env.possible_agents.index(agent)])
            dead.append(agent)
            env.step(None)
        assert sorted(dead) == sorted(env.possible_agents)
        assert env.agents == [] and env.rewards == {} and env.terminations == {}
        with pytest.raises(ValueError, match="over"):
            env.step(0)
        if g.info.zero_sum:
            assert expected.sum() == pytest.approx(0.0)
        nonzero += bool(np.any(expected != 0))
    assert nonzero >= 6, "too few decided deals to check rewards"


def test_same_seed_same_actions_same_game(mod):
    e1, e2 = mod.env(), mod.env()
    for seed in (3, 4):
        e1.reset(seed=seed)
        e2.reset(seed=seed)
        r1, r2 = np.random.default_rng(seed), np.random.default_rng(seed)
        a1, t1 = finish(e1, r1)
        a2, t2 = finish(e2, r2)
        assert a1 == a2 and t1 == t2
        assert e1.unwrapped.history == e2.unwrapped.history == a1
        np.testing.assert_array_equal(e1.unwrapped.state_vec, e2.unwrapped.state_vec)
    # reseeding the same env repeats the deal; unseeded resets continue the generator
    e1.reset(seed=9)
    first = e1.unwrapped.state_vec.copy()
    e1.reset()
    e1.reset(seed=9)
    np.testing.assert_array_equal(e1.unwrapped.state_vec, first)


def test_different_seeds_different_deals(mod):
    env = mod.env()
    views = set()
    for seed in range(12):
        env.reset(seed=seed)
        views.add(b"".join(env.observe(a)["observation"].tobytes() for a in env.agents))
    assert len(views) == 12
    # unseeded resets of one env deal different games too
    env.reset(seed=0)
    views = set()
    for _ in range(6):
        env.reset()
        views.add(env.observe("player_0")["observation"].tobytes())
    assert len(views) == 6


def test_observations_in_space_same_shape_every_seat(mod):
    env = mod.env()
    env.reset(seed=21)
    rng = np.random.default_rng(21)
    space = env.observation_space("player_0")
    shape = space["observation"].shape
    for agent in env.possible_agents:
        assert env.observation_space(agent) == space
    for agent in env.agent_iter(100_000):
        for a in env.agents:
            obs = env.observe(a)
            assert set(obs) == {"observation", "action_mask"}
            assert obs["observation"].dtype == np.float32
            assert obs["observation"].shape == shape
            assert space.contains(obs), a
        if not live(env):
            env.step(None)
        else:
            step_random(env, rng)


# -- illegal actions -------------------------------------------------------------------------------


def some_illegal(env, rng) -> int:
    n = env.unwrapped.game.n_actions
    ok = set(legal_ids(env).tolist())
    while True:
        a = int(rng.integers(n))
        if a not in ok:
            return a


@pytest.mark.parametrize("n_moves", [0, 9], ids=["first_move", "mid_deal"])
def test_illegal_action_default_loses(mod, n_moves):
    env, rng = mid_deal_env(mod, n_moves)
    assert env.unwrapped.illegal == "lose"
    mover = env.agent_selection
    bad = some_illegal(env, rng)
    env.step(bad)
    assert env.rewards == {a: (-1.0 if a == mover else 0.0) for a in env.possible_agents}
    assert all(env.terminations.values()) and not any(env.truncations.values())
    assert env.infos[mover].get("illegal_move") is True
    assert not any(env.infos[a].get("illegal_move") for a in env.agents if a != mover)
    seen = {}
    for agent in env.agent_iter():
        obs, reward, term, _, _ = env.last()
        assert term and not obs["action_mask"].any()
        seen[agent] = reward
        env.step(None)
    assert seen == {a: (-1.0 if a == mover else 0.0) for a in env.possible_agents}


def test_illegal_reward_option(mod):
    env, rng = mid_deal_env(mod, 3, illegal_reward=-7)
    mover = env.agent_selection
    env.step(some_illegal(env, rng))
    assert env.rewards[mover] == -7.0
    assert sum(env.rewards.values()) == -7.0


@pytest.mark.parametrize("n_moves", [0, 9], ids=["first_move", "mid_deal"])
def test_illegal_action_raise_leaves_game_unchanged(mod, n_moves):
    env, rng = mid_deal_env(mod, n_moves, illegal="raise")
    ref, _ = mid_deal_env(mod, n_moves, illegal="raise")
    before = env.unwrapped.state_vec.copy()
    for _ in range(3):
        bad = some_illegal(env, rng)
        text = env.unwrapped.action_to_string(bad)
        with pytest.raises(ValueError, match=rf"illegal action {bad}\b.*{re.escape(repr(text))}"):
            env.step(bad)
        np.testing.assert_array_equal(env.unwrapped.state_vec, before)
        assert_same_position(env, ref)
        assert not any(env.terminations.values())
    # the game goes on normally afterwards, identically to the untouched copy
    while live(env):
        a = step_random(env, rng)
        ref.step(a)
    assert_same_position(env, ref)
    _, t1 = finish(env, rng)
    _, t2 = finish(ref, rng)
    assert t1 == t2
