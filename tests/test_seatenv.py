"""SeatEnv: one learner seat (or team) against opponent policies, as a gymnasium.Env."""

from __future__ import annotations

import importlib
import pickle

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import cardenvs
from cardenvs.wrappers import SeatEnv

GAMES = list(cardenvs.GAMES)


def aec_env(name: str, **options):
    return importlib.import_module(f"cardenvs.{cardenvs.GAMES[name]}").env(**options)


def last_legal(observation, legal):
    """A deterministic opponent: the highest legal action id."""
    assert observation["action_mask"][legal].all() and observation["action_mask"].sum() == len(legal)
    return int(legal[-1])


class FirstLegal:
    """An opponent object with the agents package's ``act`` interface."""

    def act(self, observation, legal, info=None):
        return int(legal[0])


@pytest.mark.parametrize("name", GAMES)
def test_check_env(name):
    check_env(SeatEnv(name), skip_render_check=True)


@pytest.mark.parametrize("name,seats", [(g, 0) for g in GAMES] + [("doudizhu", (1, 2)),
                                                                  ("doudizhu4", (0, 2))])
def test_learner_view_equals_aec_env(name, seats):
    """With deterministic opponents, the SeatEnv is the AEC env seen from the learner's seats:
    the same deal for the same seed, the learner's own observations and legal actions, and
    every payment to the learner (team: the mean over its seats) in its step rewards."""
    team = (seats,) if isinstance(seats, int) else seats
    env = SeatEnv(name, seats=seats, opponents=last_legal)
    aec = aec_env(name)
    rng = np.random.default_rng(5)
    seed = 77
    obs, info = env.reset(seed=seed)
    aec.reset(seed=seed)
    episodes = 0
    learner_total = 0.0
    while episodes < 3:
        # drive the AEC env: opponents by the same policy, until a learner seat is to move
        while True:
            agent = aec.agent_selection
            seat = aec.possible_agents.index(agent)
            if aec.terminations[agent]:
                break
            if seat in team:
                break
            aec.step(last_legal(aec.observe(agent), aec.legal_actions()))
        if all(aec.terminations.values()):
            # the deal ended before the learner moved: the SeatEnv skipped it
            assert info["skipped_deals"] >= 1
            aec.reset()
            continue
        agent = aec.agent_selection
        assert info["seat"] == aec.possible_agents.index(agent)
        assert np.array_equal(obs, aec.observe(agent)["observation"])
        assert np.array_equal(env.legal_actions(), aec.legal_actions())
        assert np.array_equal(info["action_mask"], aec.observe(agent)["action_mask"])
        assert "legal_actions" not in info
        assert np.array_equal(env.action_masks(), aec.observe(agent)["action_mask"].astype(bool))
        assert np.array_equal(env.state_vec, aec.state_vec)
        a = int(rng.choice(env.legal_actions()))
        obs, r, term, trunc, info = env.step(a)
        aec.step(a)
        paid = [aec.rewards[ag] for ag in aec.possible_agents]
        # drive the opponents in the AEC env and add what they paid
        while not all(aec.terminations.values()):
            nxt = aec.agent_selection
            if aec.possible_agents.index(nxt) in team:
                break
            aec.step(last_legal(aec.observe(nxt), aec.legal_actions()))
            for k, ag in enumerate(aec.possible_agents):
                paid[k] += aec.rewards[ag]
        want = float(np.mean([paid[s] for s in team]))
        assert not trunc
        assert r == pytest.approx(want)
        learner_total += r
        if term:
            assert all(aec.terminations.values())
            assert np.array_equal(info["final_rewards"],
                                  [aec.rewards[ag] for ag in aec.possible_agents])
            assert not env.action_masks().any() and env.legal_actions().size == 0
            assert not info["action_mask"].any()
            episodes += 1
            obs, info = env.reset()
            aec.reset()
        else:
            assert not any(aec.terminations.values())


def test_reset_seed_deals_like_the_aec_env():
    from cardenvs.core.state import HDR

    for name in ("doudizhu", "wakeng"):
        env = SeatEnv(name)
        aec = aec_env(name)
        env.reset(seed=123)
        aec.reset(seed=123)
        assert env._deal_seed == int(np.random.default_rng(123).integers(0, 2**63 - 1))
        g = env.game
        fresh = g.new_state()
        g.reset(fresh, env._deal_seed)
        assert np.array_equal(fresh, aec.state_vec)
        n = g.n_players
        assert fresh[HDR:HDR + 16 * n].sum() > 0


def test_illegal_actions():
    env = SeatEnv("doudizhu")
    obs, info = env.reset(seed=1)
    legal = set(env.legal_actions().tolist())
    bad = next(a for a in range(env.action_space.n) if a not in legal)
    obs2, r, term, trunc, info2 = env.step(bad)
    assert term and r == -1.0 and info2["illegal_move"]
    assert not env.action_masks().any()
    with pytest.raises(ValueError, match="game is over"):
        env.step(int(next(iter(legal))))
    strict = SeatEnv("doudizhu", illegal="raise", illegal_reward=-3)
    strict.reset(seed=1)
    before = strict.state_vec.copy()
    with pytest.raises(ValueError, match=f"illegal action {bad}"):
        strict.step(bad)
    assert np.array_equal(strict.state_vec, before)
    with pytest.raises(ValueError, match="outside the action space"):
        strict.step(env.action_space.n)
    with pytest.raises(TypeError, match="int action id"):
        strict.step(1.5)
    with pytest.raises(ValueError, match="reset"):
        SeatEnv("wakeng").step(0)


def test_bad_opponents_and_arguments():
    def cheat(observation, legal):
        return int(np.setdiff1d(np.arange(len(observation["action_mask"])), legal)[0])

    env = SeatEnv("wakeng", seats=0, opponents={1: cheat, 2: cheat})
    with pytest.raises(ValueError, match=r"the opponent at seat [12] .* chose the illegal action"):
        env.reset(seed=0)
        env.step(int(env.legal_actions()[0]))
    with pytest.raises(ValueError, match="not a seat"):
        SeatEnv("wakeng", seats=3)
    with pytest.raises(ValueError, match="every seat"):
        SeatEnv("wakeng", seats=(0, 1, 2))
    with pytest.raises(ValueError, match="unknown opponent"):
        SeatEnv("wakeng", opponents="rules-ish")
    with pytest.raises(TypeError, match="opponent"):
        SeatEnv("wakeng", opponents=3)
    with pytest.raises(ValueError, match="no opponent policy"):
        SeatEnv("wakeng", opponents={1: "random"})
    with pytest.raises(ValueError, match="learner"):
        SeatEnv("wakeng", opponents=["random", "random", "random"])
    with pytest.raises(ValueError, match="illegal="):
        SeatEnv("wakeng", illegal="ignore")


def test_opponent_objects_and_set_opponents():
    env = SeatEnv("doudizhu", opponents=FirstLegal())
    env.reset(seed=3)
    twin = SeatEnv("doudizhu", opponents=lambda o, legal: int(legal[0]))
    twin.reset(seed=3)
    for _ in range(200):
        a = int(env.legal_actions()[-1])
        o1, r1, t1, _, _ = env.step(a)
        o2, r2, t2, _, _ = twin.step(a)
        assert np.array_equal(o1, o2) and r1 == r2 and t1 == t2
        if t1:
            env.reset()
            twin.reset()
    env.set_opponents([None, "random", FirstLegal()])
    assert env.opponents[1] == "random"


def test_opponents_by_spec_with_keywords():
    """An opponent named by a spec with keywords is built with them: ``search`` that keeps
    its ``rules`` prior's every move (``margin=inf``) plays as ``rules`` does."""
    env = SeatEnv("doudizhu", opponents="search:margin=inf,prior=rules")
    twin = SeatEnv("doudizhu", opponents="rules")
    built = env.opponents[1]
    assert (built.margin, built.prior_name) == (float("inf"), "rules")
    for e in (env, twin):
        e.reset(seed=5)
    ends = 0
    for _ in range(300):
        a = int(env.legal_actions()[0])
        o1, r1, t1, _, _ = env.step(a)
        o2, r2, t2, _, _ = twin.step(a)
        assert np.array_equal(o1, o2) and r1 == r2 and t1 == t2
        if t1:
            ends += 1
            env.reset()
            twin.reset()
    assert ends >= 3
    with pytest.raises(ValueError, match="unknown keyword 'rollout'"):
        SeatEnv("doudizhu", opponents="search:rollout=8")


def test_pickle_mid_game_continues_identically():
    env = SeatEnv("wakeng", render_mode="ansi")
    env.reset(seed=9)
    for _ in range(3):
        env.step(int(env.legal_actions()[0]))
    clone = pickle.loads(pickle.dumps(env))
    assert clone.render() == env.render()
    for _ in range(300):  # random opponents: their generator travels with the pickle
        a = int(env.legal_actions()[0])
        o1, r1, t1, _, i1 = env.step(a)
        o2, r2, t2, _, i2 = clone.step(a)
        assert np.array_equal(o1, o2) and r1 == r2 and t1 == t2
        if t1:
            o1, _ = env.reset()
            o2, _ = clone.reset()
            assert np.array_equal(o1, o2)


def test_maskable_ppo_on_seatenv_beats_random_play():
    """A short MaskablePPO run on SeatEnv (Wakeng, win/loss reward, random opponents) wins
    clearly more than a random learner on the same evaluation deals."""
    pytest.importorskip("sb3_contrib")
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    torch.set_num_threads(1)

    def make():
        return SeatEnv("wakeng", reward="win_loss")

    venv = DummyVecEnv([make for _ in range(8)])
    venv.seed(0)
    model = MaskablePPO("MlpPolicy", venv, n_steps=128, batch_size=256, n_epochs=4,
                        learning_rate=1e-3, seed=0, device="cpu",
                        policy_kwargs=dict(net_arch=[64, 64]))
    model.learn(8192)

    def evaluate(policy, episodes=600):
        envs = [make() for _ in range(16)]
        obs = np.stack([e.reset(seed=10_000 + i)[0] for i, e in enumerate(envs)])
        rng = np.random.default_rng(0)
        total, done_eps = 0.0, 0
        while done_eps < episodes:
            masks = np.stack([e.action_masks() for e in envs])
            if policy is None:
                acts = [int(rng.choice(np.flatnonzero(m))) for m in masks]
            else:
                acts, _ = policy.predict(obs, action_masks=masks, deterministic=True)
            for i, e in enumerate(envs):
                o, r, term, _, _ = e.step(int(acts[i]))
                if term:
                    total += r
                    done_eps += 1
                    o, _ = e.reset()
                obs[i] = o
        return total / done_eps

    random_score = evaluate(None)
    trained_score = evaluate(model)
    assert trained_score > random_score + 0.3, (trained_score, random_score)


def test_subproc_vec_env_gets_masks_from_seatenv():
    pytest.importorskip("sb3_contrib")
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
    from stable_baselines3.common.vec_env import SubprocVecEnv

    venv = SubprocVecEnv([lambda: SeatEnv("wakeng") for _ in range(2)], start_method="fork")
    try:
        venv.seed(4)
        venv.reset()
        assert is_masking_supported(venv)
        masks = get_action_masks(venv)
        assert masks.shape == (2, 185) and masks.dtype == bool
        ref = SeatEnv("wakeng")
        ref.reset(seed=4)
        assert np.array_equal(masks[0], ref.action_masks())
        venv.step(np.array([np.flatnonzero(m)[0] for m in masks]))
    finally:
        venv.close()


def test_custom_deal_through_reset_options():
    env = SeatEnv("doudizhu", seats=0)
    hands = ["3333444455556666B", "77778888999TTTTJJ", "9JJQQQQKKKKAAAA22"]
    obs, info = env.reset(seed=0, options={"hands": hands, "kitty": "22R", "landlord": 0,
                                           "bid": 3})
    g = env.game
    from cardenvs.core.state import HDR

    # the learner is the landlord: 17 dealt cards plus the kitty, and it leads
    assert np.array_equal(env.state_vec[HDR:HDR + 16], g.deck.parse(hands[0] + "22R"))
    assert info["seat"] == 0 and info["action_mask"].any()
    with pytest.raises(ValueError):
        env.reset(options={"hands": ["333"], "kitty": "22R"})
