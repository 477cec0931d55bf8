"""Tested recipes with the libraries users reach for, on small budgets (seconds each).

* fixed-shape infos in every view (what ``gymnasium.vector`` and Tianshou's ``Collector``
  stack), ``info["action_mask"]`` in the gymnasium views;
* ``gymnasium.make`` / ``gymnasium.make_vec`` ids of the SeatEnv views, ``pettingzoo.make``;
* ``gymnasium.vector.SyncVectorEnv`` and ``AsyncVectorEnv`` over SeatEnv, actions drawn from
  the stacked ``info["action_mask"]``;
* Tianshou's PettingZoo path: ``PettingZooEnv`` + ``DummyVectorEnv`` + ``Collector`` with a
  masked random policy per agent (needs the ``integrations`` extra);
* TorchRL's ``PettingZooWrapper`` (masked random actions, the numeric infos as tensors;
  needs the ``integrations`` extra);
* the cached per-game batched engine (:mod:`cardenvs.core.specialize`).

Masks are shown to be respected by running with ``illegal="raise"`` (an illegal action is a
``ValueError``), next to a check that an unmasked policy does raise.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import gymnasium
import numpy as np
import pytest

import cardenvs
from cardenvs.wrappers import SeatEnv

ROOT = Path(__file__).resolve().parent.parent


def _aec(game: str, **kwargs):
    return getattr(cardenvs, cardenvs.GAMES[game]).env(**kwargs)


def _fixed_shape(value, n_players: int) -> bool:
    """A scalar, a string, or a per-seat list / array (what stacking needs)."""
    if isinstance(value, (bool, int, float, str, np.integer, np.floating, np.bool_)):
        return True
    if isinstance(value, (list, tuple)):
        return len(value) == n_players and all(_fixed_shape(v, n_players) for v in value)
    if isinstance(value, np.ndarray):
        return value.shape == () or value.shape == (n_players,)
    return False


# -- infos ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("game", list(cardenvs.GAMES))
def test_aec_infos_have_a_fixed_shape_by_default(game):
    env = _aec(game)
    n = len(env.possible_agents)
    rng = np.random.default_rng(0)
    keys_seen = set()
    for seed in range(3):
        env.reset(seed=seed)
        for agent in env.agent_iter():
            obs, _, term, trunc, info = env.last()
            keys_seen |= set(info)
            for k, v in info.items():
                assert _fixed_shape(v, n), f"{game}: info[{k!r}] = {v!r}"
            if term or trunc:
                env.step(None)
                continue
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert "legal_actions" not in keys_seen and "phase" in keys_seen
    # asked for: the legal ids of the agent to move, as the mask has them
    env = _aec(game, info_legal_actions=True)
    env.reset(seed=0)
    obs, _, _, _, info = env.last()
    np.testing.assert_array_equal(np.sort(info["legal_actions"]),
                                  np.flatnonzero(obs["action_mask"]))
    with pytest.raises(TypeError, match="info_legal_actions"):
        _aec(game, info_legal_actions="yes")


@pytest.mark.parametrize("game", list(cardenvs.GAMES))
def test_seat_env_info_holds_the_mask(game):
    env = SeatEnv(game, seats=0)
    obs, info = env.reset(seed=1)
    A = env.action_space.n
    for _ in range(300):
        mask = info["action_mask"]
        assert mask.dtype == np.int8 and mask.shape == (A,)
        assert np.array_equal(mask.astype(bool), env.action_masks())
        assert "legal_actions" not in info
        assert all(_fixed_shape(v, env.n_players) for k, v in info.items() if k != "action_mask")
        obs, r, term, trunc, info = env.step(int(np.flatnonzero(mask)[0]))
        if term:
            assert not info["action_mask"].any() and "illegal_move" not in info
            break
    assert term
    env = SeatEnv(game, info_legal_actions=True)
    obs, info = env.reset(seed=1)
    np.testing.assert_array_equal(np.sort(info["legal_actions"]),
                                  np.flatnonzero(info["action_mask"]))


# -- registrations -------------------------------------------------------------------------------


@pytest.mark.parametrize("game", list(cardenvs.GAMES))
def test_gymnasium_ids(game):
    gym_id = cardenvs.GYM_IDS[game]
    env = gymnasium.make(gym_id, seats=1, illegal="raise")
    assert env.unwrapped.game.info.name == game and env.unwrapped.seats == (1,)
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    direct = SeatEnv(game, seats=1)
    obs2, info2 = direct.reset(seed=3)
    assert np.array_equal(obs, obs2) and np.array_equal(info["action_mask"], info2["action_mask"])
    env.close()


def test_gymnasium_id_options_reach_the_game():
    env = gymnasium.make("cardenvs/DouDizhu-Seat-v0", auction="fixed")
    assert env.unwrapped.game.options["auction"] == "fixed"


def test_pettingzoo_make():
    import pettingzoo

    env = pettingzoo.make("aec", "cardenvs/wakeng-v0", info_legal_actions=True)
    env.reset(seed=0)
    assert "legal_actions" in env.infos[env.agent_selection]


def test_old_pettingzoo_is_not_skipped_silently(monkeypatch):
    import pettingzoo

    monkeypatch.delattr(pettingzoo, "register")
    monkeypatch.setattr(pettingzoo, "__version__", "1.26.1")
    with pytest.warns(UserWarning, match=r"PettingZoo 1\.26\.1 has no registry.*>=1\.27"):
        cardenvs._register()


# -- gymnasium.vector ---------------------------------------------------------------------------


def _masked_actions(masks: np.ndarray, rng) -> np.ndarray:
    """A uniform legal action per row (0 for an all-zero row: a finished game, whose next
    step only resets it)."""
    out = np.zeros(len(masks), np.int64)
    for i, m in enumerate(masks):
        legal = np.flatnonzero(m)
        if legal.size:
            out[i] = rng.choice(legal)
    return out


def _run_vector(venv, steps: int, seed: int) -> tuple[int, int]:
    rng = np.random.default_rng(seed)
    obs, info = venv.reset(seed=seed)
    assert info["action_mask"].shape == (venv.num_envs, venv.single_action_space.n)
    decisions = episodes = 0
    for _ in range(steps):
        masks = info["action_mask"]
        acts = _masked_actions(masks, rng)
        decisions += int(masks.any(1).sum())
        obs, rew, term, trunc, info = venv.step(acts)
        assert obs.shape == (venv.num_envs,) + venv.single_observation_space.shape
        assert "illegal_move" not in info
        episodes += int(term.sum())
    return decisions, episodes


def test_gymnasium_sync_vector_env():
    venv = gymnasium.make_vec("cardenvs/Wakeng-Seat-v0", num_envs=3, vectorization_mode="sync",
                              vector_kwargs={}, illegal="raise")
    decisions, episodes = _run_vector(venv, 120, seed=0)
    assert decisions > 200 and episodes >= 3
    venv.close()
    # doudizhu: 28k-entry masks stacked
    venv = gymnasium.vector.SyncVectorEnv([lambda: SeatEnv("doudizhu", illegal="raise")] * 2)
    decisions, episodes = _run_vector(venv, 40, seed=1)
    assert decisions > 50
    # the check can fail: an action outside the mask raises (illegal="raise") ...
    obs, info = venv.reset(seed=2)
    bad = np.array([int(np.flatnonzero(m == 0)[0]) for m in info["action_mask"]])
    with pytest.raises(ValueError, match="illegal action"):
        venv.step(bad)
    venv.close()
    # ... and with the default illegal="lose" ends the game, flagged in the stacked info
    venv = gymnasium.vector.SyncVectorEnv([lambda: SeatEnv("wakeng")] * 2)
    obs, info = venv.reset(seed=2)
    bad = np.array([int(np.flatnonzero(m == 0)[0]) for m in info["action_mask"]])
    obs, rew, term, trunc, info = venv.step(bad)
    assert term.all() and info["illegal_move"].all() and (rew == -1).all()
    venv.close()


def test_gymnasium_async_vector_env():
    venv = gymnasium.vector.AsyncVectorEnv(
        [lambda: gymnasium.make("cardenvs/Wakeng-Seat-v0", illegal="raise")] * 2)
    try:
        decisions, episodes = _run_vector(venv, 80, seed=4)
        assert decisions > 100 and episodes >= 2
        # the workers' envs are the seeded SeatEnvs: the same as in this process
        obs, info = venv.reset(seed=7)
        local = SeatEnv("wakeng").reset(seed=7)
        assert np.array_equal(obs[0], local[0])
        assert np.array_equal(info["action_mask"][0], local[1]["action_mask"])
    finally:
        venv.close()


# -- Tianshou ------------------------------------------------------------------------------------


def _tianshou_collect(game: str, n_episode: int, masked: bool = True, illegal: str = "raise"):
    ts_env = pytest.importorskip("tianshou.env")
    from tianshou.algorithm.multiagent.marl import MultiAgentPolicy
    from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm as Random
    from tianshou.data import Collector

    def make():
        return ts_env.PettingZooEnv(_aec(game, illegal=illegal))

    first = make()
    policy_cls = Random.Policy
    if not masked:
        class Unmasked(Random.Policy):
            def forward(self, batch, state=None, **kwargs):
                batch.obs.mask = np.ones_like(batch.obs.mask)
                return super().forward(batch, state, **kwargs)
        policy_cls = Unmasked
    policy = MultiAgentPolicy({a: policy_cls(first.action_space) for a in first.agents})
    venv = ts_env.DummyVectorEnv([make, make])
    collector = Collector(policy, venv)
    collector.reset()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Tianshou's notes on object-dtype batches
        return collector.collect(n_episode=n_episode, reset_before_collect=True), collector


@pytest.mark.parametrize("game", list(cardenvs.GAMES))
def test_tianshou_pettingzoo_collector(game):
    stats, collector = _tianshou_collect(game, n_episode=3)
    assert stats.n_collected_episodes >= 3 and stats.n_collected_steps > 3 * 10
    n = cardenvs.make_game(game).n_players
    # the returns are per seat (Tianshou's multi-agent reward vector)
    assert np.asarray(stats.returns).shape[-1] == n


def test_tianshou_unmasked_policy_is_caught():
    pytest.importorskip("tianshou")
    with pytest.raises(ValueError, match="illegal action"):
        _tianshou_collect("wakeng", n_episode=2, masked=False)


# -- TorchRL -------------------------------------------------------------------------------------


@pytest.mark.parametrize("game", list(cardenvs.GAMES))
def test_torchrl_pettingzoo_wrapper_plays_a_deal(game):
    pytest.importorskip("torchrl")
    import torch
    from torchrl.envs import PettingZooWrapper

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TorchRL's note on the PettingZoo version it tests
        env = PettingZooWrapper(env=_aec(game, illegal="raise"), use_mask=True,
                                categorical_actions=True, seed=0)
    # masked random actions until the deal ends (an illegal one would raise)
    td = env.rollout(2000, break_when_any_done=True)
    agents = env.possible_agents
    assert td[-1]["next", "done"].item() and not td[0]["next", "done"].item()
    phases = getattr(cardenvs, cardenvs.GAMES[game]).raw_env.PHASES
    # the info of the seat to move at the reset that built the specs, as tensors
    keys = [k for k in td.keys(True, True) if isinstance(k, tuple) and k[-2:-1] == ("info",)]
    assert any(k[-1] == "phase" for k in keys)
    seen = torch.cat([td[k].flatten() for k in keys if k[-1] == "phase"])
    codes = set(seen.tolist())  # (TorchRL keeps them as floats)
    assert phases.index("play") in codes and codes <= set(range(len(phases)))
    assert len(agents) == cardenvs.make_game(game).n_players


# -- the cached batched engine -------------------------------------------------------------------


def test_specialized_engine_matches_the_template(monkeypatch):
    """The generated per-game engine and the generic template play the same batch."""
    import cardenvs.vector as vector

    def play(vg):
        vg.reset(seed=11)
        trace = []
        for _ in range(60):
            acts = vg.step_random().copy()
            trace.append((acts, vg.rewards.copy(), vg.done.copy(), vg.obs.copy()))
        return trace

    fast = vector.VectorGame("wakeng", 6)
    a = play(fast)
    assert fast._entry is not None and len(fast._ehead) == 4  # kernels bound, not passed
    monkeypatch.setattr(vector, "specialize", lambda *args: None)
    slow = vector.VectorGame("wakeng", 6)
    b = play(slow)
    assert len(slow._ehead) == 9  # the template: the five kernels are arguments
    for x, y in zip(a, b):
        for u, v in zip(x, y):
            np.testing.assert_array_equal(u, v)


def test_specialized_engine_module_and_fingerprint(tmp_path):
    from cardenvs.core import specialize as sp
    from cardenvs.vector import _engine

    game = cardenvs.make_game("doudizhu4")
    spec = sp.specialize(_engine, game, "test")
    assert spec is sp.specialize(_engine, cardenvs.make_game("doudizhu"), "test")  # shared
    src = Path(spec.dispatcher.py_func.__code__.co_filename).read_text()
    assert "from cardenvs.games.doudizhu import legal as k_legal" in src
    assert "\n@njit(cache=True)\ndef _engine(op, clear, tab," in src
    f = tmp_path / "x.py"
    f.write_text("a = 1\n")
    one = sp._fingerprint([str(f)])
    f.write_text("a = 2\n")
    assert sp._fingerprint([str(f)]) != one  # a changed source gives a new module text

    class Closure:  # kernels that are not importable by name: the template is used
        k_reset = k_legal = k_is_legal = k_step = k_encode = staticmethod(lambda: 0)
    assert sp.specialize(_engine, Closure(), "test") is None


def _second_process(code: str):
    """Run ``code`` in two fresh processes, one after the other (the first may compile and
    say so); the second's completed process."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=900)
        assert out.returncode == 0, out.stderr
    return out


def test_new_process_loads_the_engine_from_the_cache():
    """A second process finds the compiled engine in the cache and says nothing."""
    code = ("from cardenvs.vector import VectorGame\n"
            "vg = VectorGame('wakeng', 2); vg.reset(seed=0); vg.step_random()\n"
            "from cardenvs.core.specialize import _SPECS\n"
            "d = next(iter(_SPECS.values())).dispatcher\n"
            "print(sum(d.stats.cache_hits.values()), sum(d.stats.cache_misses.values()))\n")
    out = _second_process(code)
    hits, misses = map(int, out.stdout.split())
    assert hits == 1 and misses == 0
    assert "cardenvs: compiling" not in out.stderr


def test_kernel_taking_callees_are_bound_too():
    """A template that hands a kernel down to other functions (the rollout engine -> the
    policy -> the choice scorer -> ``k_step``) gets copies of those callees with the kernel
    bound, so that no dispatcher is passed as an argument (numba cannot cache that)."""
    from cardenvs.core import specialize as sp
    from cardenvs.vector import _rollout_engine

    spec = sp.specialize(_rollout_engine, cardenvs.make_game("niangniang"), "test")
    src = Path(spec.dispatcher.py_func.__code__.co_filename).read_text()
    assert "from cardenvs.games.niangniang_rules import step as k_step" in src
    for name in ("policy_choose", "score_policy", "score_actions", "score_actions0",
                 "score_choices"):
        assert f"\n@njit(cache=True)\ndef _bound_{name}(" in src
    assert "k_step," not in src  # passed down nowhere: every call uses the bound global
    assert "def _rollout_engine(tab, opts, offsets, states," in src


@pytest.mark.parametrize("game", ["doudizhu", "niangniang", "wulong"])
def test_bound_policy_and_rollouts_match_the_templates(game, monkeypatch):
    """The cached copies score, step and roll out exactly as the generic templates (three
    games that cover the bound callees: the auction, the exchange scored by the hand it
    leaves (``k_step`` inside the choice scorer), wild jokers and 报牌; each game costs a
    compilation of the uncached templates)."""
    import cardenvs.core.specialize as sp
    from cardenvs.agents import make_agent
    from cardenvs.vector import VectorGame

    g = cardenvs.make_game(game)
    rng = np.random.default_rng(3)
    states, s, buf = [], g.new_state(), np.zeros(g.n_actions + 1, np.int64)
    for d in range(40):
        g.reset(s, int(rng.integers(2**31)))
        while not g.done(s):
            if rng.random() < 0.15:
                states.append(s.copy())
            k = g.legal(s, buf)
            g.step(s, int(buf[rng.integers(k)]))
    states = np.array(states[:64])

    def run_all():
        agent = make_agent("rollout", g, seed=0)
        scores = [agent.policy_scores(x, agent.legal_of(x)) for x in states]
        vg = VectorGame(g, len(states), observe=True, auto_reset=False)
        vg.reset(seed=0)
        vg.load_states(states)
        obs = vg.obs.copy()
        ret = vg.rollout("heuristic", seed=5, epsilon=0.1)
        return scores, obs, ret, vg.last_rollout_lengths.copy()

    fast = run_all()
    monkeypatch.setattr(sp, "_RUN", {})
    monkeypatch.setattr(sp, "specialize", lambda *args: None)
    slow = run_all()
    for a, b in zip(fast[0], slow[0]):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(fast[1:], slow[1:]):
        np.testing.assert_array_equal(a, b)


def test_new_process_loads_the_search_kernels_from_the_cache():
    """A second process runs `search` without compiling: every specialised function it uses
    (state loader, rollout engine, policy scores, candidates' first steps) is a cache hit."""
    code = ("import numpy as np, cardenvs\n"
            "from cardenvs.agents.search import SearchAgent\n"
            "g = cardenvs.make_game('wakeng'); s = g.new_state(); g.reset(s, 3)\n"
            "from cardenvs.core.state import PHASE, P_PLAY\n"
            "buf = np.zeros(g.n_actions + 1, np.int64)\n"
            "while not (s[PHASE] == P_PLAY and g.legal(s, buf) > 1):\n"
            "    g.step(s, int(buf[g.legal(s, buf) - 1]))\n"
            "a = SearchAgent(g, seed=0, rollouts=40)\n"
            "a.act_state(s)\n"
            "from cardenvs.core.specialize import _SPECS\n"
            "ds = [sp.dispatcher for sp in _SPECS.values()]\n"
            "print(len(ds), sum(sum(d.stats.cache_hits.values()) for d in ds),"
            " sum(sum(d.stats.cache_misses.values()) for d in ds))\n")
    out = _second_process(code)
    n, hits, misses = map(int, out.stdout.split())
    assert n >= 4 and hits == n and misses == 0, out.stdout
    assert "cardenvs: compiling" not in out.stderr


def test_specialize_is_thread_safe(monkeypatch):
    """Threads that ask for the same kernel set at once get one module, fully imported (the web
    server's sessions start agents in worker threads; a thread used to find the module in
    sys.modules half-executed and fail with an AttributeError)."""
    import threading

    from cardenvs.core import specialize as sp
    from cardenvs.vector import _engine

    game = cardenvs.make_game("wakeng")
    first = sp.specialize(_engine, game, "test")
    assert first is not None
    key = next(k for k, v in sp._SPECS.items() if v is first)
    monkeypatch.delitem(sp._SPECS, key)
    modname = first.dispatcher.py_func.__module__
    monkeypatch.delitem(sys.modules, modname)
    real_spec = sp.importlib.util.spec_from_file_location

    def slow_spec(*args, **kwargs):  # widen the window between sys.modules and the module's run
        import time

        spec = real_spec(*args, **kwargs)
        run = spec.loader.exec_module

        def exec_module(module):
            time.sleep(0.2)
            run(module)

        spec.loader.exec_module = exec_module
        return spec

    monkeypatch.setattr(sp.importlib.util, "spec_from_file_location", slow_spec)
    got, errors = [], []

    def ask():
        try:
            got.append(sp.specialize(_engine, game, "test"))
        except Exception as e:  # noqa: BLE001 - the test reports any failure
            errors.append(e)

    threads = [threading.Thread(target=ask) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(got) == 6 and all(g is got[0] for g in got)
    assert hasattr(got[0].dispatcher, "py_func")
