"""cardenvs.multiagent's turn-based bookkeeping on literal sequences, and a short run of
train/cleanrl_ppo.py."""

import numpy as np
import pytest

from cardenvs.multiagent import agent_name, agent_names, file_by_seat, role_of, seat_gae


def _rollout():
    # game column 0: three seats; step 4 ends the game paying [2, -1, -1]; a new game starts
    #   at step 5, where seat 0 (not yet moved in it) is paid 1 (dropped) and seat 2 0.5
    # game column 1: two seats alternate; step 3 pays seat 0 +0.5 mid-game (a hand of a match)
    seats = np.array([[0, 0], [1, 1], [2, 0], [0, 1], [1, 0], [2, 1], [0, 0]])
    rewards = np.zeros((7, 2, 3))
    rewards[4, 0] = [2, -1, -1]
    rewards[5, 0] = [1, 0, 0.5]
    rewards[3, 1] = [0.5, 0, 0]
    dones = np.zeros((7, 2), bool)
    dones[4, 0] = True
    return seats, rewards, dones


def test_file_by_seat_literal():
    f = file_by_seat(*_rollout())
    assert f["reward"][:, 0].tolist() == [0, 0, -1, 2, -1, 0.5, 0]
    assert f["done"][:, 0].tolist() == [False, False, True, True, True, False, False]
    assert f["next"][:, 0].tolist() == [3, 4, -1, -1, -1, -1, -1]
    assert f["valid"][:, 0].tolist() == [True] * 5 + [False, False]
    assert f["reward"][:, 1].tolist() == [0, 0, 0.5, 0, 0, 0, 0]
    assert f["next"][:, 1].tolist() == [2, 3, 4, 5, 6, -1, -1]
    assert not f["done"][:, 1].any()
    assert f["valid"][:, 1].tolist() == [True] * 5 + [False, False]


def test_seat_gae_literal():
    filed = file_by_seat(*_rollout())
    v = np.array([[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]] * 2).T
    adv, ret = seat_gae(v, filed, gamma=1.0, lam=1.0)
    # lam = 1: Monte-Carlo returns of each seat's moves (game 0: seat 0 got 2, seats 1 and 2 -1)
    assert np.allclose(ret[:5, 0], [2, -1, -1, 2, -1])
    assert np.allclose(adv[:, 0], [1.9, -1.2, -1.3, 1.6, -1.5, 0, 0])
    # game 1 is still running: seat 0's moves bootstrap from its last move at 6 (0.7), seat
    # 1's from its move at 5 (0.6); seat 0 was paid 0.5 after its move at 2
    assert np.allclose(adv[:5, 1], [0.5 + 0.7 - 0.1, 0.6 - 0.2, 0.5 + 0.7 - 0.3,
                                    0.6 - 0.4, 0.7 - 0.5])
    assert (adv[5:] == 0).all() and (ret[5:] == 0).all()
    # lam = 0: one-step TD errors
    adv0, _ = seat_gae(v, filed, gamma=1.0, lam=0.0)
    assert np.allclose(adv0[:5, 0], [0.4 - 0.1, 0.5 - 0.2, -1.3, 1.6, -1.5])
    # gamma discounts per own move of the seat
    adv9, _ = seat_gae(v, filed, gamma=0.5, lam=1.0)
    assert np.isclose(adv9[0, 0], 0.5 * 2 - 0.1)


def test_file_by_seat_bad_input():
    seats, rewards, dones = _rollout()
    with pytest.raises(ValueError, match="rewards must be"):
        file_by_seat(seats, rewards[:, :1], dones)
    with pytest.raises(ValueError, match="seats must be integers"):
        file_by_seat(seats + 3, rewards, dones)
    with pytest.raises(ValueError, match="values must have shape"):
        seat_gae(np.zeros((3, 2)), file_by_seat(seats, rewards, dones))


def test_agent_names_by_role():
    from cardenvs import make_game
    from cardenvs.core.state import LANDLORD

    g = make_game("doudizhu")
    s = g.new_state()
    g.reset(s, 0)
    assert int(s[LANDLORD]) < 0
    assert agent_name(g, s, 1) == "bidder_1"
    s[LANDLORD] = 2
    assert [agent_name(g, s, p) for p in range(3)] == ["farmer_1", "farmer_2", "landlord"]
    assert agent_name(g, s, 0, "seat") == "player_0"
    assert set(agent_names(g)) == {"bidder_0", "bidder_1", "bidder_2", "landlord", "farmer_1",
                                   "farmer_2"}
    assert agent_names(make_game("wulong")) == [f"player_{p}" for p in range(4)]
    assert role_of("catcher_3") == "catcher" and role_of("niangniang") == "niangniang"


def test_cleanrl_ppo_runs():
    pytest.importorskip("torch", reason="torch is not installed (the train extra)")
    import importlib

    mod = importlib.import_module("cardenvs.train.cleanrl_ppo")
    lines = []
    net = mod.train("wakeng", n_envs=8, n_steps=16, updates=2, hidden=32, log=lines.append)
    assert len(lines) == 2 and "256 steps" in lines[1]
    rew = mod.evaluate(net, "wakeng", {}, 16, seed=1, n_envs=8)
    assert rew.shape == (16,) and np.all(np.isfinite(rew)) and (rew != 0).any()
    assert mod.parse_options(["reward=win_loss", "max_hands=3"]) == {"reward": "win_loss",
                                                                     "max_hands": 3}
