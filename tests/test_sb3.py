"""SeatVecEnv: the SB3 VecEnv over the batched engine (needs the train extra)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")
pytest.importorskip("sb3_contrib")

import cardenvs  # noqa: E402
from cardenvs.sb3 import SeatVecEnv  # noqa: E402
from cardenvs.wrappers import SeatEnv  # noqa: E402

GAMES = list(cardenvs.GAMES)


def last_legal(observation, legal):
    return int(legal[-1])


class LastLegalBatch:
    """The same policy through the agents package's batched interface."""

    def act_batch(self, observations, masks):
        assert observations.ndim == 2 and masks.ndim == 2 and len(observations) == len(masks)
        return (masks.shape[1] - 1 - np.argmax(masks[:, ::-1], axis=1)).astype(np.int64)


@pytest.mark.parametrize("name,seats,opponent", [(g, 1, last_legal) for g in GAMES] + [
    ("doudizhu", (1, 2), LastLegalBatch()), ("wakeng", 2, LastLegalBatch())])
def test_vecenv_equals_seatenv(name, seats, opponent):
    """Game i of the VecEnv is SeatEnv.reset(seed=seeds[i]) played with the same actions:
    observations, masks, rewards, dones, terminal observations and final payouts."""
    n = 3
    venv = SeatVecEnv(name, n, seats=seats, opponents=opponent, seed=0)
    obs = venv.reset()
    envs = [SeatEnv(name, seats=seats, opponents=last_legal) for _ in range(n)]
    outs = [e.reset(seed=int(venv.vg.seeds[i])) for i, e in enumerate(envs)]
    rng = np.random.default_rng(1)
    finished = np.zeros(n, np.int64)
    steps = 0
    while finished.min() < 2:
        steps += 1
        assert steps < 3000
        masks = venv.action_masks()
        for i in range(n):
            assert np.array_equal(outs[i][0], obs[i])
            assert np.array_equal(envs[i].action_masks(), masks[i])
            assert venv.seat[i] == outs[i][1]["seat"]
        acts = np.array([rng.choice(envs[i].legal_actions()) for i in range(n)])
        obs, rew, done, infos = venv.step(acts)
        assert obs.dtype == np.float32 and rew.dtype == np.float32 and done.dtype == bool
        for i in range(n):
            o, r, term, trunc, info = envs[i].step(int(acts[i]))
            assert r == pytest.approx(float(rew[i])) and term == done[i]
            if term:
                finished[i] += 1
                assert np.array_equal(o, infos[i]["terminal_observation"])
                assert np.array_equal(info["final_rewards"], infos[i]["final_rewards"])
                o, info = envs[i].reset()
            else:
                assert set(infos[i]) == {"action_mask"}
            # the mask of the game the returned observation shows (the next one after an end)
            assert infos[i]["action_mask"].dtype == np.int8
            assert np.array_equal(infos[i]["action_mask"], info["action_mask"])
            outs[i] = (o, info)


def test_random_opponents_in_numba_bookkeeping():
    """Random opponents run inside numba: the learner is always to move, masks are its legal
    actions, and each episode's reported return is the sum of its step rewards."""
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

    venv = SeatVecEnv("doudizhu", 32, seats=2, seed=3)
    obs = venv.reset()
    assert is_masking_supported(venv)
    g = venv.game
    running = np.zeros(32)
    lengths = np.zeros(32, np.int64)
    episodes = 0
    rng = np.random.default_rng(0)
    enc = np.empty(g.layout.size, np.float32)
    for _ in range(150):
        masks = get_action_masks(venv)
        assert masks.shape == (32, g.n_actions)
        assert np.array_equal(masks, venv.action_masks())
        assert (venv.seat == 2).all()
        for i in range(0, 32, 7):
            assert np.array_equal(np.flatnonzero(masks[i]), np.sort(venv.legal_actions(i)))
            g.encode(venv.vg.states[i], 2, enc)
            assert np.array_equal(obs[i], enc)
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, rew, done, infos = venv.step(acts)
        running += rew
        lengths += 1
        for i in np.flatnonzero(done):
            ep = infos[i]["episode"]
            assert ep["r"] == pytest.approx(running[i]) and ep["l"] == lengths[i]
            assert ep["r"] == infos[i]["final_rewards"][2]
            running[i] = 0.0
            lengths[i] = 0
            episodes += 1
    assert episodes > 20


def test_seed_method_and_reproducibility():
    def trace(seed_call):
        venv = SeatVecEnv("wakeng", 8)
        venv.seed(seed_call)
        obs = [venv.reset().ravel()]
        assert np.array_equal(venv.vg.seeds, seed_call + np.arange(8))
        rng = np.random.default_rng(0)
        for _ in range(50):
            m = venv.action_masks()
            o, r, d, _ = venv.step(np.array([rng.choice(np.flatnonzero(x)) for x in m]))
            obs.append(o.ravel())
            obs.append(r)
        return np.concatenate(obs)

    assert np.array_equal(trace(10), trace(10))
    assert not np.array_equal(trace(10), trace(11))


def test_illegal_learner_actions():
    venv = SeatVecEnv("wakeng", 4, seed=1, illegal="raise")
    venv.reset()
    masks = venv.action_masks()
    acts = np.array([np.flatnonzero(m)[0] for m in masks])
    bad = acts.copy()
    bad[1] = np.flatnonzero(~masks[1])[0]
    before = venv.vg.states.copy()
    with pytest.raises(ValueError, match=rf"game 1 of the batch: illegal action {bad[1]}"):
        venv.step(bad)
    assert np.array_equal(venv.vg.states, before)
    lose = SeatVecEnv("wakeng", 4, seed=1, illegal_reward=-5)  # "lose" is the default
    lose.reset()
    obs, rew, done, infos = lose.step(bad)
    assert done[1] and rew[1] == -5.0 and infos[1]["episode"]["r"] == -5.0
    assert infos[1]["illegal_move"] and not any("illegal_move" in infos[i] for i in (0, 2, 3))
    assert not done[[0, 2, 3]].any()
    with pytest.raises(ValueError, match="actions must be 4 integers"):
        venv.step(acts[:2])


def test_env_method_and_attributes():
    venv = SeatVecEnv("wakeng", 3, seed=2)
    venv.reset()
    rows = venv.env_method("action_masks")
    assert len(rows) == 3 and np.array_equal(np.stack(rows), venv.action_masks())
    assert len(venv.env_method("action_masks", indices=[2])) == 1
    assert venv.get_attr("seats") == [(0,)] * 3
    assert venv.env_is_wrapped(object) == [False] * 3
    venv.set_opponents("random")
    assert venv.env_method("legal_actions", 0)[0].size > 0


def test_maskable_ppo_on_vecenv_beats_random_play():
    """MaskablePPO trains on 32 batched Wakeng games (win/loss reward, random opponents) and
    then wins clearly more than a random learner on the same evaluation deals."""
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    venv = SeatVecEnv("wakeng", 32, seed=0, reward="win_loss")
    model = MaskablePPO("MlpPolicy", venv, n_steps=64, batch_size=512, n_epochs=4,
                        learning_rate=1e-3, seed=0, device="cpu",
                        policy_kwargs=dict(net_arch=[64, 64]))
    model.learn(8192)

    def evaluate(policy, episodes=1000):
        ev = SeatVecEnv("wakeng", 100, seed=123, reward="win_loss")
        obs = ev.reset()
        rng = np.random.default_rng(0)
        returns = []
        while len(returns) < episodes:
            m = ev.action_masks()
            if policy is None:
                n = m.sum(1)
                pick = (rng.random(len(m)) * n).astype(np.int64)
                acts = np.argmax(np.cumsum(m, 1) > pick[:, None], 1)
            else:
                acts, _ = policy.predict(obs, action_masks=m, deterministic=True)
            obs, rew, done, infos = ev.step(acts)
            returns += [infos[i]["episode"]["r"] for i in np.flatnonzero(done)]
        return float(np.mean(returns[:episodes]))

    random_score = evaluate(None)
    trained_score = evaluate(model)
    assert trained_score > random_score + 0.3, (trained_score, random_score)
