"""cardenvs.rllib: the multi-agent env's turn order, role agent ids and pay, the RLModule's
logits, and PPO trained a few iterations with 2 remote EnvRunners on a local Ray cluster."""

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="ray[rllib] is not installed (pip install 'cardenvs[rllib]')")
pytest.importorskip("ray.rllib", reason="ray is installed without RLlib (pip install 'ray[rllib]')")
torch = pytest.importorskip("torch", reason="torch is not installed")

from cardenvs import make_game  # noqa: E402
from cardenvs.core.state import LANDLORD  # noqa: E402
from cardenvs.rllib import (CardGameEnv, LegalActionRLModule, module_ids, policy_mapping_fn,  # noqa: E402
                            register_envs)


def _play(env, seed, pick):
    obs, _ = env.reset(seed=seed)
    seen, moves = [], 0
    while True:
        assert len(obs) == 1
        (agent, o), = obs.items()
        seen.append(agent)
        n = int((o["legal"] >= 0).sum())
        assert n >= 1 and (o["legal"][n:] == -1).all()
        obs, rew, term, trunc, _ = env.step({agent: pick(n)})
        moves += 1
        if term["__all__"]:
            return seen, obs, rew, moves


def test_role_agents_and_final_pay_match_the_game():
    env = CardGameEnv({"game": "doudizhu", "seed": 0})
    rng = np.random.default_rng(1)
    for seed in range(5):
        seen, obs, rew, _ = _play(env, seed, lambda n: int(rng.integers(n)))
        solo = int(env.state[LANDLORD])
        paid = make_game("doudizhu").rewards(env.state)
        # the auction is played by bidder_<seat>, the play by roles
        first_role = next(i for i, a in enumerate(seen) if not a.startswith("bidder_"))
        assert all(a.startswith("bidder_") for a in seen[:first_role])
        assert seen[first_role] == "landlord"  # the landlord leads
        assert set(seen[first_role:]) <= {"landlord", "farmer_1", "farmer_2"}
        # every agent that moved gets its final observation and its seat's pay
        assert set(obs) == set(seen)
        for a, r in rew.items():
            if a.startswith("bidder_"):
                seat = int(a.split("_")[1])
            elif a == "landlord":
                seat = solo
            else:
                seat = (solo + int(a.split("_")[1])) % 3
            assert r == paid[seat]
        assert rew["landlord"] == -2 * rew["farmer_1"] and rew["farmer_1"] == rew["farmer_2"]
        assert all((o["legal"] == -1).all() for o in obs.values())


def test_seat_ids_and_game_actions_match_the_engine():
    env = CardGameEnv({"game": "wakeng", "agent_ids": "seat", "seed": 0})
    g = make_game("wakeng")
    obs, _ = env.reset(seed=3)
    s = g.new_state()
    out = np.zeros(g.n_actions + 1, np.int64)
    # replay the same deal in the engine: the env plays legal[slot]
    g.reset(s, int(np.random.default_rng(3).integers(0, 2**63 - 1)))
    rng = np.random.default_rng(0)
    while True:
        (agent, o), = obs.items()
        k = g.legal(s, out)
        assert agent == f"player_{g.current(s)}"
        assert list(o["legal"][:k]) == list(out[:k])
        slot = int(rng.integers(k))
        g.step(s, int(out[slot]))
        obs, rew, term, _, _ = env.step({agent: slot})
        if term["__all__"]:
            assert g.done(s)
            assert [rew[f"player_{p}"] for p in range(3)] == list(g.rewards(s))
            break


def test_bad_slots_and_config():
    env = CardGameEnv({"game": "wakeng", "seed": 0, "illegal": "raise"})
    obs, _ = env.reset(seed=0)
    (agent, o), = obs.items()
    n = int((o["legal"] >= 0).sum())
    with pytest.raises(ValueError, match=f"slot {n} of"):
        env.step({agent: n})
    with pytest.raises(TypeError, match="slot index"):
        env.step({agent: 0.5})
    env = CardGameEnv({"game": "wakeng", "seed": 0})  # illegal="lose"
    obs, _ = env.reset(seed=0)
    (agent, _), = obs.items()
    _, rew, term, _, _ = env.step({agent: 127})
    assert term["__all__"] and rew[agent] == -1.0
    with pytest.raises(ValueError, match="unknown CardGameEnv config keys"):
        CardGameEnv({"game": "wakeng", "gmae": 1})
    with pytest.raises(ValueError, match="agent_ids"):
        CardGameEnv({"game": "wakeng", "agent_ids": "team"})
    with pytest.raises(ValueError, match="match play"):
        CardGameEnv({"game": "niangniang", "options": {"match": True}})


def test_module_ids_and_mapping():
    assert module_ids("doudizhu") == ["bidder", "landlord", "farmer"]
    assert module_ids("doudizhu", auction="fixed") == ["landlord", "farmer"]
    assert module_ids("niangniang") == ["niangniang", "catcher"]
    assert module_ids("wulong") == ["player"]
    assert module_ids("wakeng", agent_ids="seat") == ["player"]
    assert [policy_mapping_fn(a) for a in ("farmer_2", "bidder_0", "landlord", "player_3")] == \
        ["farmer", "bidder", "landlord", "player"]
    assert register_envs(["wakeng"]) == ["cardenvs_wakeng"]
    with pytest.raises(ValueError, match="unknown game"):
        register_envs(["chess"])


def test_module_logits_only_on_legal_slots():
    from ray.rllib.core.columns import Columns
    from ray.rllib.utils.torch_utils import FLOAT_MIN

    env = CardGameEnv({"game": "doudizhu", "seed": 0})
    mod = LegalActionRLModule(observation_space=env.observation_spaces["landlord"],
                              action_space=env.action_spaces["landlord"],
                              model_config={"game": "doudizhu", "hidden": 32})
    obs, _ = env.reset(seed=0)
    (agent, o), = obs.items()
    batch = {Columns.OBS: {k: torch.as_tensor(v)[None] for k, v in o.items()}}
    logits = mod.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
    n = int((o["legal"] >= 0).sum())
    assert logits.shape == (1, env.K)
    assert torch.isfinite(logits[0, :n]).all() and (logits[0, :n] > -1e30).all()
    assert (logits[0, n:] == FLOAT_MIN).all()
    assert mod.compute_values(batch).shape == (1,)


def test_ppo_trains_with_two_remote_env_runners():
    from cardenvs.rllib import ppo_config

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        algo = ppo_config("wakeng", num_env_runners=2, hidden=32, train_batch_size_per_learner=200,
                          minibatch_size=100, num_epochs=1).build_algo()
        try:
            before = algo.get_module("digger").get_state()
            for _ in range(2):
                result = algo.train()
            after = algo.get_module("digger").get_state()
        finally:
            algo.stop()
    finally:
        ray.shutdown()
    assert result["env_runners"]["num_env_steps_sampled_lifetime"] >= 400
    assert set(result["learners"]) >= {"bidder", "digger", "farmer"}
    changed = [k for k in before if not np.allclose(before[k], after[k])]
    assert changed, "PPO did not update the digger module"


def test_league_mapping_is_per_episode_and_keeps_bidders_learning():
    import importlib

    sp = importlib.import_module("cardenvs.train.rllib_selfplay")
    mapping = sp.LeagueMapping(["bidder", "landlord", "farmer"], league=2)

    class Ep:
        def __init__(self, i):
            self.id_ = f"episode-{i}"

    kinds = set()
    for i in range(64):
        ep = Ep(i)
        got = {a: mapping(a, ep) for a in ("bidder_0", "landlord", "farmer_1", "farmer_2")}
        assert got["bidder_0"] == "bidder"
        assert got["farmer_1"] == got["farmer_2"]  # one side plays one slot
        frozen = [a for a, m in got.items() if "_snap" in m]
        assert frozen in ([], ["landlord"], ["farmer_1", "farmer_2"])
        assert all(mapping(a, ep) == m for a, m in got.items())  # same answer twice
        kinds.add(tuple(frozen))
    assert len(kinds) == 3
    assert mapping("landlord", None) == "landlord"
