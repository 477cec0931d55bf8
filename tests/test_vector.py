"""The batched engine (cardenvs.vector) against the AEC environment, game by game."""

from __future__ import annotations

import importlib
import pickle

import numpy as np
import pytest

import cardenvs
from cardenvs.core.state import CUR, PHASE, P_DONE, REW0
from cardenvs.vector import DEFAULT_MAX_LEGAL, VectorGame, slot_seeds

GAMES = list(cardenvs.GAMES)


def aec_env(name: str, **options):
    return importlib.import_module(f"cardenvs.{cardenvs.GAMES[name]}").env(**options)


def check_slot_against_env(vg: VectorGame, i: int, env) -> None:
    """Slot ``i`` shows exactly what the AEC env shows its agent to move."""
    agent = env.agent_selection
    seat = env.possible_agents.index(agent)
    assert vg.seat[i] == seat
    assert np.array_equal(vg.states[i], env.state_vec)
    ob = env.observe(agent)
    assert np.array_equal(vg.obs[i], ob["observation"])
    assert np.array_equal(vg.masks[i], ob["action_mask"])
    legal = env.legal_actions()
    assert vg.n_legal[i] == len(legal)
    assert np.array_equal(vg.legal[i, :vg.n_legal[i]], legal)
    assert (vg.legal[i, vg.n_legal[i]:] == -1).all()


@pytest.mark.parametrize("name", GAMES)
def test_batch_equals_aec_env(name):
    """Every slot replays the AEC env from reset(seed=seeds[i]) then reset() per later deal:
    the same observations, masks, legal ids, seats and rewards, across automatic resets."""
    n = 3
    vg = VectorGame(name, n, masks=True, keep_final=True)
    vg.reset(seed=2024)
    assert np.array_equal(vg.seeds, slot_seeds(2024, n))
    envs = [aec_env(name) for _ in range(n)]
    for i, env in enumerate(envs):
        env.reset(seed=int(vg.seeds[i]))
        check_slot_against_env(vg, i, env)
    finished = np.zeros(n, np.int64)
    steps = 0
    while finished.min() < 2:
        steps += 1
        assert steps < 5000, "games never finished"
        acts = vg.random_actions()
        for i in range(n):
            assert acts[i] in vg.legal_actions(i)
        rewards, done = vg.step(acts)
        for i, env in enumerate(envs):
            env.step(int(acts[i]))
            if done[i]:
                finished[i] += 1
                assert all(env.terminations.values())
                paid = [env.rewards[a] for a in env.possible_agents]
                assert np.array_equal(rewards[i], np.array(paid, np.float32))
                assert np.array_equal(vg.final_states[i], env.state_vec)
                env.reset()
                assert vg.deals[i] == finished[i] + 1
            else:
                assert not any(env.terminations.values())
                paid = [env.rewards[a] for a in env.possible_agents]
                assert np.array_equal(rewards[i], np.array(paid, np.float32))
            check_slot_against_env(vg, i, env)


def test_final_observation_is_last_movers_view():
    vg = VectorGame("wakeng", 4, keep_final=True)
    vg.reset(seed=7)
    g = vg.game
    seen = 0
    while seen < 6:
        movers = vg.seat.copy()
        vg.step_random()
        for i in np.flatnonzero(vg.done):
            obs = np.empty(g.layout.size, np.float32)
            g.encode(vg.final_states[i], int(movers[i]), obs)
            assert np.array_equal(vg.final_obs[i], obs)
            assert vg.final_states[i][PHASE] == P_DONE
            # the reward contract: the final payout is what the last step paid
            assert np.array_equal(vg.rewards[i], vg.final_states[i][REW0:REW0 + 3].astype(np.float32))
            seen += 1


def test_no_auto_reset_and_reset_slots():
    vg = VectorGame("doudizhu", 2, auto_reset=False)
    vg.reset(seeds=[11, 12])
    env = aec_env("doudizhu")
    env.reset(seed=11)
    while not vg.done[0]:
        acts = vg.random_actions()
        if vg.seat[1] < 0:  # slot 1 finished first: step slot 0 alone
            vg.step(acts[:1], slots=[0])
        else:
            vg.step(acts)
        env.step(int(acts[0]))
    assert vg.seat[0] == -1 and vg.n_legal[0] == 0 and (vg.legal[0] == -1).all()
    assert not vg.obs[0].any()
    assert vg.states[0][PHASE] == P_DONE
    with pytest.raises(ValueError, match="game 0 of the batch is over"):
        vg.step(np.array([0]), slots=[0])
    vg.reset_slots([0])
    env.reset()  # the next deal of the same generator
    assert np.array_equal(vg.states[0], env.state_vec)
    assert vg.deals[0] == 2


def test_reset_without_seed_continues_each_slot_generator():
    vg = VectorGame("wakeng", 2)
    vg.reset(seeds=[5, 6])
    for _ in range(7):
        vg.step_random()
    vg.reset()
    env = aec_env("wakeng")
    env.reset(seed=6)
    for _ in range(int(vg.deals[1]) - 1):
        env.reset()
    assert np.array_equal(vg.states[1], env.state_vec)


def test_reproducible_and_seed_dependent():
    def run(seed):
        vg = VectorGame("doudizhu", 16, masks=True)
        vg.reset(seed=seed)
        trace = []
        for _ in range(300):
            trace.append(vg.step_random().copy())
        return vg, np.array(trace)

    a, ta = run(1)
    b, tb = run(1)
    c, tc = run(2)
    assert np.array_equal(ta, tb)
    for x in ("states", "legal", "n_legal", "seat", "rewards", "done", "deals"):
        assert np.array_equal(getattr(a, x), getattr(b, x)), x
    assert np.array_equal(a.obs, b.obs) and np.array_equal(a.masks, b.masks)
    assert not np.array_equal(ta, tc)
    # explicit seeds equal to the derived ones give the same batch
    d = VectorGame("doudizhu", 16, masks=True)
    d.reset(seeds=slot_seeds(1, 16))
    td = np.array([d.step_random().copy() for _ in range(300)])
    assert np.array_equal(ta, td)
    # slot seeds from different seeds share no slot
    assert not set(slot_seeds(1, 64)) & set(slot_seeds(2, 64))


def test_outputs_consistent_over_random_play():
    """obs / masks / legal ids always describe the seat to move; padding stays -1."""
    vg = VectorGame("doudizhu4", 5, masks=True)
    vg.reset(seed=3)
    g = vg.game
    buf = np.zeros(g.n_actions + 1, np.int64)
    obs = np.empty(g.layout.size, np.float32)
    for _ in range(400):
        vg.step_random()
        for i in range(vg.n):
            s = vg.states[i]
            assert vg.seat[i] == s[CUR]
            k = g.legal(s, buf)
            assert vg.n_legal[i] == k
            assert np.array_equal(vg.legal[i, :k], buf[:k])
            assert (vg.legal[i, k:] == -1).all()
            assert vg.masks[i].sum() == k and vg.masks[i][buf[:k]].all()
            g.encode(s, int(s[CUR]), obs)
            assert np.array_equal(vg.obs[i], obs)


def test_partial_step_leaves_other_slots_alone():
    vg = VectorGame("wakeng", 4)
    vg.reset(seed=9)
    for _ in range(5):
        vg.step_random()
    before = vg.states.copy()
    acts = vg.random_actions()
    vg.step(acts[[1, 3]], slots=[1, 3])
    assert np.array_equal(vg.states[[0, 2]], before[[0, 2]])
    assert not np.array_equal(vg.states[1], before[1])
    assert not vg.rewards[[0, 2]].any() and not vg.done[[0, 2]].any()


def test_bad_actions_are_clear_errors_and_change_nothing():
    vg = VectorGame("doudizhu", 4, masks=True)
    with pytest.raises(ValueError, match="reset"):
        vg.step(np.zeros(4, np.int64))
    vg.reset(seed=1)
    for _ in range(3):
        vg.step_random()
    snapshot = {x: getattr(vg, x).copy() for x in ("states", "legal", "n_legal", "masks", "obs")}
    acts = vg.random_actions()
    bad = acts.copy()
    legal2 = set(vg.legal_actions(2).tolist())
    bad[2] = next(a for a in range(vg.n_actions) if a not in legal2)
    with pytest.raises(ValueError, match=rf"game 2 of the batch: illegal action {bad[2]}"):
        vg.step(bad)
    bad[2] = vg.n_actions
    with pytest.raises(ValueError, match=rf"game 2 of the batch: action {vg.n_actions} is outside"):
        vg.step(bad)
    bad[2] = -1
    with pytest.raises(ValueError, match="game 2 of the batch: action -1"):
        vg.step(bad)
    for x, v in snapshot.items():
        assert np.array_equal(getattr(vg, x), v), x
    with pytest.raises(ValueError, match="shape"):
        vg.step(acts[:3])
    with pytest.raises(TypeError, match="integers"):
        vg.step(acts.astype(np.float64))
    with pytest.raises(ValueError, match="slot indices"):
        vg.step(acts[:1], slots=[4])
    vg.step(acts)  # the good actions still work


def test_legal_width_overflow_is_an_error_never_a_truncation():
    vg = VectorGame("doudizhu", 2, max_legal=3)  # the auction offers pass + 3 bids
    with pytest.raises(RuntimeError, match="4 legal actions, more than max_legal=3"):
        vg.reset(seed=0)
    with pytest.raises(RuntimeError, match="inconsistent"):
        vg.step_random()
    assert VectorGame("wakeng", 1).max_legal == min(185, DEFAULT_MAX_LEGAL) == 185
    assert VectorGame("doudizhu", 1).max_legal == DEFAULT_MAX_LEGAL
    with pytest.raises(ValueError, match="max_legal"):
        VectorGame("wakeng", 1, max_legal=186)
    with pytest.raises(ValueError, match="n must be"):
        VectorGame("wakeng", 0)
    with pytest.raises(ValueError, match="unknown game"):
        VectorGame("nosuchgame", 2)
    with pytest.raises(ValueError, match="seeds must be"):
        VectorGame("wakeng", 2).reset(seeds=[1])
    with pytest.raises(ValueError, match="seed must be >= 0"):
        VectorGame("wakeng", 2).reset(seed=-1)


def test_options_reach_the_game():
    vg = VectorGame("doudizhu", 8, reward="win_loss")
    vg.reset(seed=4)
    paid = []
    for _ in range(400):
        vg.step_random()
        paid.extend(vg.rewards[vg.done].ravel().tolist())
    assert paid and set(paid) <= {-1.0, 0.0, 1.0}


def test_pickle_round_trip_continues_identically():
    vg = VectorGame("wakeng", 6, masks=True)
    vg.reset(seed=8)
    for _ in range(20):
        vg.step_random()
    clone = pickle.loads(pickle.dumps(vg))
    for _ in range(200):  # past refills of the deal-seed buffers
        a = vg.step_random().copy()
        b = clone.step_random().copy()
        assert np.array_equal(a, b)
    assert np.array_equal(vg.states, clone.states) and np.array_equal(vg.masks, clone.masks)
    assert np.array_equal(vg.deals, clone.deals)
