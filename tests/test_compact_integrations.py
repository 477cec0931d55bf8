"""The compact action spaces in the libraries' recipes (issue 48): RLlib's ``CardGameEnv`` with
``actions="compact"`` and its ``MaskedMLPRLModule`` (PPO trained two iterations), Tianshou's DQN
recipe on Dou Dizhu for a few steps, and the action mask that Tianshou reads element by element.

The RLlib env is checked against the compact AEC env, decision by decision (the same deal from
the same seed): the same observations, masks and per-seat pay.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import cardenvs
from cardenvs.core.mask import ActionMask, new_mask


def _aec(game: str, **kwargs):
    return getattr(cardenvs, cardenvs.GAMES[game]).env(**kwargs)


# -- the mask ------------------------------------------------------------------------------------


def test_action_mask_iterates_as_python_ints_and_searches_as_bool():
    m = new_mask(1000)
    m[[3, 7, 999]] = 1
    assert type(m) is ActionMask and m.dtype == np.int8
    items = list(m)
    assert len(items) == 1000 and all(type(x) is int for x in items)
    assert [i for i, x in enumerate(items) if x] == [3, 7, 999]
    # Tianshou's PettingZooEnv: [obm == 1 for obm in mask] -> an array of the mask's ones
    assert np.array_equal(np.asarray([x == 1 for x in m]), np.asarray(m) == 1)
    assert np.array_equal(np.flatnonzero(m), [3, 7, 999])
    assert np.array_equal(np.nonzero(m)[0], [3, 7, 999])
    # another view dtype and other shapes keep numpy's behaviour
    assert np.array_equal(np.flatnonzero(m.view(np.uint8)), [3, 7, 999])
    rows = list(np.stack([m, m]).view(ActionMask))
    assert len(rows) == 2 and rows[0].shape == (1000,)


# -- RLlib ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("game", ["doudizhu", "paodekuai"])
def test_rllib_compact_env_plays_the_compact_aec_game(game):
    pytest.importorskip("ray.rllib")
    from cardenvs.rllib import CardGameEnv

    env = CardGameEnv({"game": game, "actions": "compact", "seed": 0, "illegal": "raise"})
    aec = _aec(game, actions="compact", illegal="raise")
    n = aec.unwrapped.codec.n
    assert env.action_spaces[env.possible_agents[0]].n == n
    rng = np.random.default_rng(1)
    repeats = 0
    for seed in range(6):
        obs, _ = env.reset(seed=seed)
        aec.reset(seed=seed)
        while True:
            (agent, o), = obs.items()
            mover = aec.agent_selection
            want = aec.observe(mover)
            np.testing.assert_array_equal(o["action_mask"], want["action_mask"])
            np.testing.assert_array_equal(o["observations"], want["observation"])
            assert env.observation_spaces[agent].contains(o)
            cid = int(rng.choice(np.flatnonzero(o["action_mask"])))
            obs, rew, term, _, _ = env.step({agent: cid})
            aec.step(cid)
            if not term["__all__"] and aec.agent_selection == mover and list(obs) == [agent]:
                if aec.unwrapped._compact.body >= 0:  # a kicker to come: no pay, same agent
                    repeats += 1
                    assert rew[agent] == 0.0 and not any(rew.values())
            if term["__all__"]:
                break
        assert all(aec.terminations.values())
        seat_pay = {f"player_{i}": 0.0 for i in range(len(aec.possible_agents))}
        for i, agents in enumerate(env._acted):
            for a in agents:  # every agent id a seat acted as is paid the seat's pay
                assert rew[a] == aec.rewards[f"player_{i}"]
            seat_pay[f"player_{i}"] = aec.rewards[f"player_{i}"]
        assert sum(seat_pay.values()) == pytest.approx(0.0)
        assert all((o["action_mask"] == 0).all() for o in obs.values())
    assert repeats > 0  # kickers were chosen one decision at a time


def test_rllib_compact_bad_actions_and_config():
    pytest.importorskip("ray.rllib")
    from cardenvs.rllib import CardGameEnv

    env = CardGameEnv({"game": "doudizhu", "actions": "compact", "seed": 0, "illegal": "raise"})
    obs, _ = env.reset(seed=0)
    (agent, o), = obs.items()
    bad = int(np.flatnonzero(o["action_mask"] == 0)[0])
    with pytest.raises(ValueError, match=f"compact id {bad} .* is not offered"):
        env.step({agent: bad})
    with pytest.raises(ValueError, match="outside"):
        env.step({agent: 10_000})
    with pytest.raises(TypeError, match="compact action id"):
        env.step({agent: 1.5})
    good = int(np.flatnonzero(o["action_mask"])[0])
    env.step({agent: good})  # nothing changed before: the offered id still plays
    env = CardGameEnv({"game": "doudizhu", "actions": "compact", "seed": 0})  # illegal="lose"
    obs, _ = env.reset(seed=0)
    (agent, o), = obs.items()
    _, rew, term, _, _ = env.step({agent: bad})
    assert term["__all__"] and rew[agent] == -1.0
    with pytest.raises(ValueError, match="actions='dense' is not one of"):
        CardGameEnv({"game": "doudizhu", "actions": "dense"})


def test_masked_mlp_module_scores_only_offered_ids():
    pytest.importorskip("ray.rllib")
    torch = pytest.importorskip("torch")
    from ray.rllib.core.columns import Columns
    from ray.rllib.utils.torch_utils import FLOAT_MIN

    from cardenvs.rllib import CardGameEnv, LegalActionRLModule, MaskedMLPRLModule, module_spec

    env = CardGameEnv({"game": "doudizhu", "actions": "compact", "seed": 0})
    mod = MaskedMLPRLModule(observation_space=env.observation_spaces["landlord"],
                            action_space=env.action_spaces["landlord"],
                            model_config={"hidden": 32})
    obs, _ = env.reset(seed=0)
    (_, o), = obs.items()
    batch = {Columns.OBS: {k: torch.as_tensor(v)[None] for k, v in o.items()}}
    logits = mod.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
    offered = torch.as_tensor(o["action_mask"] == 1)
    assert logits.shape == (1, env.codec.n)
    assert (logits[0, offered] > -1e30).all() and (logits[0, ~offered] == FLOAT_MIN).all()
    assert mod.compute_values(batch).shape == (1,)
    assert module_spec("doudizhu", 32, "compact").module_class is MaskedMLPRLModule
    assert module_spec("doudizhu", 32).module_class is LegalActionRLModule
    flat = CardGameEnv({"game": "doudizhu", "seed": 0})
    with pytest.raises(ValueError, match="actions='compact'"):
        MaskedMLPRLModule(observation_space=flat.observation_spaces["landlord"],
                          action_space=flat.action_spaces["landlord"], model_config={})


def test_ppo_trains_in_compact_mode():
    ray = pytest.importorskip("ray")
    pytest.importorskip("ray.rllib")
    from cardenvs.rllib import ppo_config

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        config = ppo_config("doudizhu", actions="compact", num_env_runners=0, hidden=32,
                            train_batch_size_per_learner=200, minibatch_size=100, num_epochs=1)
        assert config.env_config["actions"] == "compact"
        algo = config.build_algo()
        try:
            before = algo.get_module("farmer").get_state()
            for _ in range(2):
                result = algo.train()
            after = algo.get_module("farmer").get_state()
        finally:
            algo.stop()
    finally:
        ray.shutdown()
    assert result["env_runners"]["num_env_steps_sampled_lifetime"] >= 400
    assert set(before) >= {"pi.weight", "vf.weight"}
    assert before["pi.weight"].shape[0] == 340
    changed = [k for k in before if not np.allclose(before[k], after[k])]
    assert changed, "PPO did not update the farmer module"


# -- Tianshou ------------------------------------------------------------------------------------


def test_tianshou_dqn_recipe_in_compact_mode():
    """The DQN recipe of docs/tutorials/tianshou.md on Dou Dizhu's compact space, a few
    hundred steps: the DQN's network changes, every action is legal (``illegal="raise"``)."""
    pytest.importorskip("tianshou")
    torch = pytest.importorskip("torch")
    from tianshou.algorithm import DQN
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.multiagent.marl import MultiAgentOffPolicyAlgorithm
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm as Random
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv, PettingZooEnv
    from tianshou.trainer import OffPolicyTrainerParams
    from tianshou.utils.net.common import Net

    def make_compact():
        return PettingZooEnv(cardenvs.doudizhu_v0.env(actions="compact", illegal="raise"))

    torch.manual_seed(0)
    torch.set_num_threads(1)
    env = make_compact()
    assert env.action_space.n == 340
    net = Net(state_shape=env.observation_space["observation"].shape,
              action_shape=env.action_space.n, hidden_sizes=[32, 32])
    dqn = DQN(policy=DiscreteQLearningPolicy(model=net, action_space=env.action_space,
                                             eps_training=0.5),
              optim=AdamOptimizerFactory(lr=1e-3), gamma=1.0, target_update_freq=50)
    algorithm = MultiAgentOffPolicyAlgorithm(
        algorithms=[dqn] + [Random(env.action_space) for _ in env.agents[1:]], env=env)
    before = [p.detach().clone() for p in net.parameters()]
    train = Collector(algorithm, DummyVectorEnv([make_compact] * 2),
                      VectorReplayBuffer(2_000, 2), exploration_noise=True)
    test = Collector(algorithm, DummyVectorEnv([make_compact] * 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Tianshou's notes on object-dtype batches
        result = algorithm.run_training(OffPolicyTrainerParams(
            training_collector=train, test_collector=test, max_epochs=1, epoch_num_steps=120,
            collection_step_num_env_steps=40, update_step_num_gradient_steps_per_sample=0.1,
            batch_size=32, test_step_num_episodes=2, show_progress=False, verbose=False,
            multi_agent_return_reduction=lambda returns: returns[:, 0]))
    assert result.train_step >= 120 and result.update_step >= 3
    assert any(not torch.equal(a, b) for a, b in zip(before, net.parameters()))
    # the greedy DQN plays whole deals on its own mask (an illegal id would raise)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stats = test.collect(n_episode=2, reset_before_collect=True)
    assert stats.n_collected_episodes == 2 and np.asarray(stats.returns).shape == (2, 3)
