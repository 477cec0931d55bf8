"""Large action spaces: LegalActionNet, the SB3 slot view LegalSlotVecEnv and the
MaskablePPO policy LegalActionPolicy."""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (the train extra)")
pytest.importorskip("sb3_contrib", reason="sb3-contrib is not installed (the train extra)")

from cardenvs import make_game  # noqa: E402
from cardenvs.sb3 import LegalActionPolicy, LegalSlotVecEnv, SeatVecEnv, play_episodes  # noqa: E402
from cardenvs.torch_policy import LegalActionNet, trim_legal, trim_legal_tensor  # noqa: E402


@pytest.fixture(scope="module")
def net():
    torch.manual_seed(0)
    return LegalActionNet("doudizhu", hidden=32)


def test_net_scores_each_legal_id_independently_of_padding_and_order(net):
    g = make_game("doudizhu")
    obs = torch.rand(2, g.layout.size)
    legal = torch.tensor([[5, 17, 28240, -1, -1], [3, -1, -1, -1, -1]])
    logits, value = net(obs, legal)
    assert logits.shape == (2, 5) and value.shape == (2,)
    assert torch.isinf(logits[0, 3:]).all() and torch.isinf(logits[1, 1:]).all()
    assert torch.isfinite(logits[0, :3]).all()
    # the score of an id depends on (observation, id) only: wider padding, other order
    wide = torch.cat([legal, torch.full((2, 7), -1)], dim=1)
    assert torch.allclose(net.logits(obs, wide)[:, :5], logits)
    perm = torch.tensor([[28240, 5, 17, -1, -1], [3, -1, -1, -1, -1]])
    lp = net.logits(obs, perm)
    assert torch.allclose(lp[0, :3], logits[0, [2, 0, 1]])
    # the features are Game.action_features rows
    assert torch.equal(net.action_table[17], torch.as_tensor(g.action_features([17])[0]))
    # float ids (SB3 stores observations as float32) give the same scores
    assert torch.allclose(net.logits(obs, legal.float()), logits)
    # a row without legal ids keeps a defined distribution
    empty = net.logits(obs[:1], torch.full((1, 3), -1))
    assert empty[0, 0] == 0 and torch.isinf(empty[0, 1:]).all()
    d = net.distribution(obs, legal)
    assert torch.allclose(d.probs.sum(1), torch.ones(2)) and (d.probs[0, 3:] == 0).all()


def test_net_bad_input(net):
    with pytest.raises(ValueError, match="obs must have shape"):
        net(torch.zeros(2, 5), torch.zeros(2, 3, dtype=torch.long))
    with pytest.raises(ValueError, match="legal must have shape"):
        net(torch.zeros(2, net.obs_size), torch.zeros(3, 3, dtype=torch.long))
    with pytest.raises(ValueError, match="legal ids must be < 28241"):
        net(torch.zeros(1, net.obs_size), torch.tensor([[28241]]))
    with pytest.raises(ValueError, match="hidden"):
        LegalActionNet("wakeng", hidden=0)
    with pytest.raises(TypeError, match="registry name"):
        LegalActionNet(3)


def test_trim_legal():
    legal = np.array([[4, 2, -1, -1], [7, -1, -1, -1]])
    assert trim_legal(legal).tolist() == [[4, 2], [7, -1]]
    assert trim_legal_tensor(torch.as_tensor(legal)).tolist() == [[4, 2], [7, -1]]
    assert trim_legal(np.full((2, 3), -1)).shape == (2, 1)


def test_slot_view_plays_the_ids_of_its_slots():
    n = 8
    slot_env = LegalSlotVecEnv("wakeng", n, seed=3, illegal="raise")
    id_env = SeatVecEnv("wakeng", n, seed=3, illegal="raise")
    obs = slot_env.reset()
    ref = id_env.reset()
    assert slot_env.action_space.n == 128
    rng = np.random.default_rng(0)
    for _ in range(300):
        legal = obs["legal"]
        k = (legal >= 0).sum(1)
        assert np.array_equal(obs["observation"], ref)
        assert all(sorted(legal[i, :k[i]]) == sorted(id_env.legal_actions(i)) for i in range(n))
        masks = slot_env.action_masks()
        assert np.array_equal(masks, legal >= 0)
        assert np.array_equal(np.stack(slot_env.env_method("action_masks")), masks)
        slots = (rng.random(n) * k).astype(np.int64)
        obs, r1, d1, i1 = slot_env.step(slots)
        ref, r2, d2, i2 = id_env.step(legal[np.arange(n), slots])
        assert np.array_equal(r1, r2) and np.array_equal(d1, d2)
        for i in np.flatnonzero(d1):
            t = i1[i]["terminal_observation"]
            assert np.array_equal(t["observation"], i2[i]["terminal_observation"])
            assert (t["legal"] == -1).all()
            assert i1[i]["episode"] == i2[i]["episode"]


def test_slot_view_bad_slots():
    env = LegalSlotVecEnv("wakeng", 2, seed=0, illegal="raise")
    obs = env.reset()
    k = int((obs["legal"][1] >= 0).sum())
    with pytest.raises(ValueError, match=f"game 1 of the batch: slot {k} holds no legal action"):
        env.step(np.array([0, k]))
    with pytest.raises(ValueError, match="slot indices"):
        env.step(np.array([0.5, 1.0]))
    lose = LegalSlotVecEnv("wakeng", 2, seed=0, illegal="lose", illegal_reward=-3.0)
    lose.reset()
    _, rew, done, _ = lose.step(np.array([0, 127]))
    assert done.tolist() == [False, True] and rew[1] == -3.0


def test_policy_log_probs_are_recomputed_exactly_at_update_time():
    from sb3_contrib import MaskablePPO

    torch.manual_seed(0)
    venv = LegalSlotVecEnv("doudizhu", 6, seed=1, illegal="raise")
    model = MaskablePPO(LegalActionPolicy, venv, policy_kwargs={**venv.policy_kwargs, "hidden": 32},
                        n_steps=8, batch_size=16, n_epochs=1, seed=0)
    pol = model.policy
    obs = venv.reset()
    obs_t, _ = pol.obs_to_tensor(obs)
    with torch.no_grad():
        actions, values, logp = pol(obs_t)
        v2, logp2, ent = pol.evaluate_actions(obs_t, actions)
    k = (obs["legal"] >= 0).sum(1)
    assert (actions.numpy() < k).all()
    assert torch.allclose(logp, logp2) and torch.allclose(values, v2)
    # the same numbers over the full padded width (nothing depends on the trimming)
    full = pol.net.logits(obs_t["observation"], obs_t["legal"])
    ref = torch.distributions.Categorical(logits=full)
    assert torch.allclose(ref.log_prob(actions), logp, atol=1e-6)
    assert torch.allclose(ref.entropy(), ent, atol=1e-5)
    assert values.shape == (6, 1) and pol.predict_values(obs_t).shape == (6, 1)
    with pytest.raises(TypeError, match="needs the game"):
        MaskablePPO(LegalActionPolicy, venv)


def test_maskable_ppo_learns_and_never_plays_an_illegal_slot(tmp_path):
    from sb3_contrib import MaskablePPO

    venv = LegalSlotVecEnv("wakeng", 8, seed=0, illegal="raise")  # an illegal slot raises
    model = MaskablePPO(LegalActionPolicy, venv, policy_kwargs={**venv.policy_kwargs, "hidden": 32},
                        n_steps=32, batch_size=64, n_epochs=2, seed=0)
    before = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(512)
    assert any(not torch.equal(a, b) for a, b in zip(before, model.policy.parameters()))
    # save / load keeps the game and the weights
    model.save(tmp_path / "m.zip")
    loaded = MaskablePPO.load(tmp_path / "m.zip", env=venv)
    obs = venv.reset()
    a1, _ = model.predict(obs, deterministic=True)
    a2, _ = loaded.predict(obs, deterministic=True)
    assert np.array_equal(a1, a2)
    rets = play_episodes(loaded, venv, 10, seed=5)
    base = play_episodes(None, venv, 10, seed=5)
    assert rets.shape == base.shape == (10,) and (base != 0).any()
    with pytest.raises(ValueError, match="n_games"):
        play_episodes(None, venv, 0)
