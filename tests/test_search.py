"""The ``search`` agent (PIMC over the rollout policy) and the ``rollout`` agent: legal moves
in every game and decision kind, replays under one seed, pickling, bad input."""

from __future__ import annotations

import importlib
import pickle

import numpy as np
import pytest

import cardenvs
from cardenvs.core.state import CUR, LANDLORD, PHASE, P_DONE, P_PLAY

from cardenvs import agents
from cardenvs.agents.search import DEFAULT_MARGIN, DEFAULT_Z, RolloutAgent, SearchAgent

GAMES = list(cardenvs.GAMES)


def env_of(name: str):
    return importlib.import_module(f"cardenvs.{cardenvs.GAMES[name]}").env(illegal="raise")


def play(name: str, lineup, seed: int):
    """One deal through the AEC env with ``lineup[seat]`` acting (given the state in info);
    returns the actions and the blocks they came from; every action is checked legal."""
    env = env_of(name)
    game = env.unwrapped.game
    env.reset(seed=seed)
    actions, blocks = [], set()
    for agent in env.agent_iter():
        obs, r, term, trunc, info = env.last()
        if term or trunc:
            env.step(None)
            continue
        seat = env.possible_agents.index(agent)
        s = env.unwrapped.state_vec
        a = lineup[seat].act(obs, env.unwrapped.legal_actions(), {**info, "state": s})
        assert game.is_legal(s, a)
        actions.append(a)
        blocks.add(game.block_of(a))
        env.step(a)
    return actions, blocks


@pytest.mark.parametrize("name", GAMES)
def test_search_plays_legal_moves_and_replays_under_one_seed(name):
    game = cardenvs.make_game(name)
    runs = []
    for _ in range(2):
        s = SearchAgent(game, seed=3, rollouts=24, max_candidates=3)
        r = RolloutAgent(game)
        runs.append(play(name, [s, r] + [r] * (game.n_players - 2), seed=5))
    assert runs[0][0] == runs[1][0]
    assert "play" in runs[0][1]


@pytest.mark.parametrize("name", ["wakeng", "niangniang", "wulong"])
def test_search_covers_every_decision_kind(name):
    """Search at every seat over a few deals: the decision blocks of the game (bids, burying,
    the exchange, stand-ins) are all decided by it, legally."""
    game = cardenvs.make_game(name)
    s = SearchAgent(game, seed=0, rollouts=16, max_candidates=3)
    seen = set()
    for seed in range(3):
        seen |= play(name, [s] * game.n_players, seed=seed)[1]
    want = {"bid", "bury", "take", "return"} & set(game.blocks)
    assert want <= seen, want - seen


def test_search_pickles_and_continues_identically():
    game = cardenvs.make_game("doudizhu")
    a = SearchAgent(game, seed=1, rollouts=20, max_candidates=3)
    env = env_of("doudizhu")
    env.reset(seed=2)
    states = []
    for _ in range(12):  # a few decisions in, to move the agent's generator
        if env.unwrapped.game.done(env.unwrapped.state_vec):
            break
        info = env.infos[env.agent_selection]
        s = env.unwrapped.state_vec
        states.append(s.copy())
        env.step(a.act(None, env.unwrapped.legal_actions(), {"state": s}))
    b = pickle.loads(pickle.dumps(a))
    assert b.game.info.name == "doudizhu" and b.rollouts == 20
    for st in states:
        assert a.act_state(st) == b.act_state(st)
    r = pickle.loads(pickle.dumps(RolloutAgent(game)))
    assert r.act_state(states[-1]) == RolloutAgent(game).act_state(states[-1])


def test_registered_and_made_by_name():
    game = cardenvs.make_game("wakeng")
    assert isinstance(agents.make_agent("search", game, seed=0), SearchAgent)
    assert isinstance(agents.make_agent("rollout", game, seed=0), RolloutAgent)


def test_bad_input_is_refused():
    game = cardenvs.make_game("doudizhu")
    other = cardenvs.make_game("niangniang")
    a = SearchAgent(game, seed=0, rollouts=16)
    env = env_of("doudizhu")
    env.reset(seed=0)
    info = env.infos[env.agent_selection]
    s = env.unwrapped.state_vec.copy()
    with pytest.raises(ValueError, match="info\\['state'\\]"):
        a.act(env.observe(env.agent_selection), env.unwrapped.legal_actions(), info)
    with pytest.raises(ValueError, match="entries"):
        a.act(None, None, {"state": other.new_state()})
    with pytest.raises(TypeError, match="int64"):
        a.act(None, None, {"state": s.astype(np.int32)})
    with pytest.raises(ValueError, match="not those of info"):
        a.act(None, np.array([0]), {"state": s})
    fin = s.copy()
    fin[PHASE] = P_DONE
    with pytest.raises(ValueError, match="finished"):
        a.act(None, None, {"state": fin})
    with pytest.raises(ValueError, match="rollouts or ms"):
        SearchAgent(game, rollouts=10, ms=5)
    with pytest.raises(ValueError, match="rollouts"):
        SearchAgent(game, rollouts=0)
    with pytest.raises(ValueError, match="unknown rollout policy"):
        SearchAgent(game, policy="greedy")
    with pytest.raises(ValueError, match="states="):
        a.act_batch(np.zeros((1, 3)), np.zeros((1, 3)))
    bad = s.copy()
    bad[CUR] = 5  # a seat out of range
    with pytest.raises(ValueError):
        a.act_state(bad)


def test_time_budget_runs():
    game = cardenvs.make_game("wakeng")
    a = SearchAgent(game, seed=0, ms=5)
    env = env_of("wakeng")
    env.reset(seed=1)
    info = env.infos[env.agent_selection]
    act = a.act(None, env.unwrapped.legal_actions(), {"state": env.unwrapped.state_vec})
    assert act in env.unwrapped.legal_actions()


def test_search_gets_the_state_in_the_arena_seatenv_and_seatvecenv():
    """The arena, SeatEnv and SeatVecEnv hand a read-only copy of the state to agents that
    declare ``needs_state`` (and only to them), so ``search`` plays through each of them."""
    from cardenvs.arena import run_arena
    from cardenvs.sb3 import SeatVecEnv
    from cardenvs.wrappers import SeatEnv, policy_info

    res = run_arena("wakeng", "search,random", deals=1, seed=0, progress=False)
    assert res["decisions"] > 0 and set(res["per_agent"]) == {"search", "random"}

    game = cardenvs.make_game("wakeng")
    seen = []

    class Spy(SearchAgent):
        def act(self, observation, legal=None, info=None):
            seen.append(info["state"])
            return super().act(observation, legal, info)

    spy = Spy(game, seed=0, rollouts=16, max_candidates=2)
    env = SeatEnv("wakeng", 0, opponents=spy)
    obs, info = env.reset(seed=0)
    done = False
    while not done:
        obs, reward, done, _, info = env.step(int(env.legal_actions()[0]))
    assert seen and all(not s.flags.writeable for s in seen)
    venv = SeatVecEnv("wakeng", n_envs=2, seats=0, opponents=Spy(game, seed=0, rollouts=16,
                                                                  max_candidates=2), seed=0)
    venv.reset()
    n_before = len(seen)
    venv.step(np.array([venv.vg.legal_actions(i)[0] for i in range(2)]))
    assert len(seen) >= n_before  # act_batch path: states passed (no error raised)
    # a policy without needs_state gets its info unchanged
    plain = {"a": 1}
    assert policy_info(object(), plain, game.new_state()) is plain


def decisions(name: str, seed: int, n: int = 400):
    """Up to ``n`` (observation, legal, state) decisions of a deal played by ``rules``."""
    env = env_of(name)
    rules = agents.make_agent("rules", env.unwrapped.game, seed=0)
    env.reset(seed=seed)
    out = []
    for agent in env.agent_iter():
        obs, r, term, trunc, info = env.last()
        if term or trunc:
            env.step(None)
            continue
        legal = env.unwrapped.legal_actions()
        out.append((obs, legal, env.unwrapped.state_vec.copy()))
        if len(out) >= n:
            break
        env.step(rules.act(obs, legal, info))
    return out


def test_bids_are_the_priors_unless_searched():
    """By default a bid is the trained prior's (the rollouts misjudge bids); ``bids=True``
    searches them (and then may differ from the prior somewhere)."""
    game = cardenvs.make_game("doudizhu")
    kept = SearchAgent(game, seed=0, rollouts=64)
    searched = SearchAgent(game, seed=0, rollouts=64, bids=True, margin=0.0, z=0.0)
    prior = agents.make_agent("trained", game, seed=0)
    n_bids = differ = 0
    for seed in range(12):
        obs, legal, s = decisions("doudizhu", seed, n=1)[0]
        assert kept.is_bid(legal)
        n_bids += 1
        want = prior.act(obs, legal)
        assert kept.act(obs, legal, {"state": s}) == want
        differ += searched.act(obs, legal, {"state": s}) != want
    assert n_bids == 12 and differ > 0


def test_infinite_margin_plays_the_prior_without_searching():
    """``margin=inf``: every move is the prior's, and no rollout is spent."""
    game = cardenvs.make_game("doudizhu4")
    assert SearchAgent(game, seed=0).margin == DEFAULT_MARGIN  # no per-game default
    a = SearchAgent(game, seed=0, margin=float("inf"))
    assert a.margin == float("inf")
    prior = agents.make_agent("trained", game, seed=0)
    ds = decisions("doudizhu4", seed=2)
    assert len(ds) > 30
    for obs, legal, s in ds:
        assert a.act(obs, legal, {"state": s}) == prior.act(obs, legal)
    assert a._vg is None  # no rollout was spent
    assert SearchAgent(game, margin=0.5).margin == 0.5


def test_per_game_defaults_and_explicit_settings():
    """``GAME_SETTINGS`` gives 3-player Dou Dizhu under ``preset="rlcard"`` margin 0 / z 0.5;
    the rules pages' Dou Dizhu, its other presets and the other games take
    :data:`DEFAULT_MARGIN` / :data:`DEFAULT_Z`; explicit arguments win over both."""
    from cardenvs.agents.search import default_settings

    rl = cardenvs.make_game("doudizhu", preset="rlcard")
    a = SearchAgent(rl, seed=0)
    assert (a.margin, a.z) == (0.0, 0.5)
    assert default_settings(rl) == {"margin": 0.0, "z": 0.5}
    b = SearchAgent(rl, seed=0, margin=0.25, z=2.0)
    assert (b.margin, b.z) == (0.25, 2.0)
    assert SearchAgent(rl, seed=0, z=1.0).margin == 0.0  # one given, the other by default
    assert (DEFAULT_MARGIN, DEFAULT_Z) == (0.25, 2.0)
    for game in (cardenvs.make_game("doudizhu"), cardenvs.make_game("doudizhu", preset="douzero"),
                 cardenvs.make_game("wakeng"), "doudizhu4"):
        s = SearchAgent(game, seed=0)
        assert (s.margin, s.z) == (0.25, 2.0)
        assert default_settings(game) == {"margin": 0.25, "z": 2.0}
    assert SearchAgent("doudizhu", seed=0, margin=0.0).z == 2.0


def test_bad_search_options_are_refused():
    game = cardenvs.make_game("doudizhu")
    with pytest.raises(TypeError, match="bids"):
        SearchAgent(game, bids="yes")
    with pytest.raises(ValueError, match="margin"):
        SearchAgent(game, margin=-1.0)
    with pytest.raises(ValueError, match="margin"):
        SearchAgent(game, margin=float("nan"))


def test_search_benchmark_times_a_given_spec_with_options(capsys):
    """``benchmarks.search --search-only SPEC --option K=V`` times that agent in that game."""
    import os

    saved = dict(os.environ)  # the benchmark pins thread counts and its process to one core
    cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    try:
        from benchmarks import search as bench

        med, p90, n = bench.search_ms("doudizhu", 1, "search:rollouts=16,max_candidates=2",
                                      {"preset": "rlcard"})
        assert n > 0 and 0 < med <= p90
        bench.main(["--games", "doudizhu", "--search-only", "search:margin=inf", "--deals", "1",
                    "--option", "reward=win_loss"])
        out = capsys.readouterr().out
        assert "doudizhu {'reward': 'win_loss'} search:margin=inf:" in out and "ms median" in out
        with pytest.raises(SystemExit, match="--option goes with --search-only"):
            bench.main(["--games", "doudizhu", "--option", "reward=win_loss"])
    finally:
        os.environ.clear()
        os.environ.update(saved)
        if cpus is not None:
            os.sched_setaffinity(0, cpus)


def test_win_objective_chooses_as_the_win_loss_reward_does():
    """``objective="win"`` values a rollout by whether it wins: under the score reward it makes
    the choices the default objective makes under ``reward="win_loss"`` (margin 0; no void
    deals once the landlord is known), and not those of the score."""
    score = cardenvs.make_game("doudizhu")
    wl = cardenvs.make_game("doudizhu", reward="win_loss")
    kw = dict(rollouts=96, max_candidates=4, margin=0.0, z=0.5, prior="rules")
    as_win = SearchAgent(score, seed=3, objective="win", **kw)
    as_wl = SearchAgent(wl, seed=3, **kw)
    as_score = SearchAgent(score, seed=3, **kw)
    same_as_score = n = 0
    for seed in range(10):
        for _, legal, s in decisions("doudizhu", seed):
            if s[PHASE] != P_PLAY or len(legal) < 2:  # card play
                continue
            t = s.copy()
            t[-1] = wl.fingerprint  # the same position in the win_loss game
            a = as_win.act_state(s.copy(), legal)
            assert a == as_wl.act_state(t, legal)
            same_as_score += a == as_score.act_state(s.copy(), legal)
            n += 1
    assert n > 100 and same_as_score < n
    with pytest.raises(ValueError, match="objective must be one of 'reward', 'win'"):
        SearchAgent(score, objective="wins")


def test_greedy_opponent_model():
    """``opponents="greedy"``: the rollouts play the mover's opponents as greedy followers
    (the solo seat for a partner, every other seat for the solo seat or where no seat is
    solo); it changes some choices, replays under its seed, and refuses what it cannot
    model."""
    g = cardenvs.make_game("doudizhu")
    kw = dict(rollouts=96, max_candidates=4, prior=None)
    model = SearchAgent(g, seed=4, opponents="greedy", **kw)
    again = SearchAgent(g, seed=4, opponents="greedy", **kw)
    plain = SearchAgent(g, seed=4, **kw)
    differ = n = 0
    for seed in range(10):
        for _, legal, s in decisions("doudizhu", seed):
            if s[PHASE] != P_PLAY or len(legal) < 2:
                continue
            solo, seat = int(s[LANDLORD]), int(s[CUR])
            expect = (solo,) if seat != solo else tuple(q for q in range(3) if q != seat)
            assert model.opponents_of(s) == expect
            a = model.act_state(s.copy(), legal)
            assert a == again.act_state(s.copy(), legal) and a in legal
            differ += a != plain.act_state(s.copy(), legal)
            n += 1
    assert n > 50 and differ > 0, (n, differ)
    auction = decisions("doudizhu", 0, n=1)[0][2]
    assert auction[LANDLORD] < 0 and model.opponents_of(auction) == (1, 2)
    w = SearchAgent(cardenvs.make_game("wulong"), seed=0, opponents="greedy")
    state = decisions("wulong", 0, n=1)[0][2]
    assert w.opponents_of(state) == tuple(q for q in range(4) if q != int(state[CUR]))
    with pytest.raises(ValueError, match="opponents must be one of"):
        SearchAgent(g, opponents="smart")
    with pytest.raises(ValueError, match="models the heuristic policy"):
        SearchAgent(g, opponents="greedy", policy="random")
    from cardenvs.vector import VectorGame

    vg = VectorGame(g, 4, observe=False, auto_reset=False)
    vg.reset(seed=0)
    with pytest.raises(ValueError, match="seat indices 0..2, got 3"):
        vg.rollout(greedy_seats=(3,))
    with pytest.raises(TypeError, match="a sequence of seat indices"):
        vg.rollout(greedy_seats=1)
    with pytest.raises(ValueError, match="model the heuristic policy"):
        vg.rollout("random", greedy_seats=(1,))


def test_own_moves_in_the_rollouts_by_the_prior_or_a_named_agent():
    """``own="prior"``: the mover's own later decisions in the rollouts are the prior
    network's, batched across the worlds (the rollouts stop for it); the agent still plays
    legal moves, replays under its seed, pickles and continues identically; ``own`` names
    any agent that plays the game; a bad ``own`` is refused when the agent is made."""
    game = cardenvs.make_game("doudizhu")
    ds = decisions("doudizhu", seed=4)
    runs = []
    for _ in range(2):
        a = agents.make_agent("search:own=prior,rollouts=60", game, seed=2)
        assert a.own == "prior" and a.own_agent() is a.prior_agent()
        runs.append([a.act(obs, legal, {"state": s}) for obs, legal, s in ds[:25]])
    assert runs[0] == runs[1]
    assert all(game.is_legal(s, x) for (obs, legal, s), x in zip(ds, runs[0]))
    assert a._vg is not None and a._vg.last_agent_decisions > 0
    b = pickle.loads(pickle.dumps(a))
    assert b.own == "prior" and b.own_agent() is b.prior_agent()
    for obs, legal, s in ds[25:35]:
        assert a.act(obs, legal, {"state": s}) == b.act(obs, legal, {"state": s})
    r = SearchAgent(game, seed=0, rollouts=30, own="rules")
    assert r.own_agent().name == "rules"
    assert game.is_legal(ds[3][2], r.act(*ds[3][:2], {"state": ds[3][2]}))
    t = agents.make_agent("trained+search:own=prior,rollouts=30", game, seed=0)
    assert t.own_agent() is t.prior_agent() is t._net_agent
    with pytest.raises(ValueError, match="own='prior' needs a prior"):
        SearchAgent(game, prior=None, own="prior")
    with pytest.raises(ValueError, match="unknown agent|no agent|nope"):
        SearchAgent(game, own="nope")
    with pytest.raises(TypeError, match="own must be"):
        SearchAgent(game, own=3)


def test_worlds_without_the_pass_checks_when_the_passes_leave_too_few(monkeypatch):
    """A must-beat game's logged passes can leave too few deals for rejection sampling (seen in
    a Pao De Kuai arena: 'no 200,000 draws ... met the logged passes'); search then samples the
    worlds from the other observations alone and plays on, counting such decisions, instead of
    stopping the game.  Other sampling failures still stop it with the agent named."""
    from cardenvs.agents import search as S

    real = S.determinize_batch
    calls = []

    def picky(game, state, seat, rng, n, constraint=None, check_passes=True):
        calls.append(check_passes)
        if check_passes:
            raise RuntimeError("no 200,000 draws met the logged passes")
        return real(game, state, seat, rng, n, constraint, check_passes=False)

    monkeypatch.setattr(S, "determinize_batch", picky)
    game = cardenvs.make_game("paodekuai")
    agent = SearchAgent(game, seed=1, rollouts=24, max_candidates=3)
    actions, _ = play("paodekuai", [agent, RolloutAgent(game), RolloutAgent(game)], seed=2)
    assert actions and agent.relaxed_decisions > 0
    assert False in calls and calls.count(False) == agent.relaxed_decisions

    def broken(*args, **kwargs):
        raise RuntimeError("the state may be unreachable")

    monkeypatch.setattr(S, "determinize_batch", broken)
    with pytest.raises(RuntimeError, match="agent 'search' cannot sample worlds"):
        play("paodekuai", [SearchAgent(game, seed=1, rollouts=24, max_candidates=3),
                           RolloutAgent(game), RolloutAgent(game)], seed=2)


def test_check_passes_off_leaves_the_pass_checks_out():
    """``check_passes=False`` builds a sampler without the logged passes' checks (it samples
    the same kind of batch); a non-bool is refused."""
    from cardenvs.core.infostate import Determinizer

    env = env_of("paodekuai")
    env.reset(seed=4)
    rng = np.random.default_rng(0)
    for agent in env.agent_iter():  # play until some seat has passed a few times
        obs, r, term, trunc, info = env.last()
        if term or trunc:
            break
        legal = env.unwrapped.legal_actions()
        env.step(int(legal[-1]) if len(legal) > 1 and rng.random() < 0.5 else int(legal[0]))
        if len(env.unwrapped.history) > 12:
            break
    s = env.unwrapped.state_vec.copy()
    seat = int(s[CUR])
    strict = Determinizer(env, s, seat)
    loose = Determinizer(env, s, seat, check_passes=False)
    assert strict.passes is not None and loose.passes is None
    a = strict.batch(np.random.default_rng(1), 50)
    b = loose.batch(np.random.default_rng(1), 50)
    assert a.shape == b.shape == (50, len(s))
    with pytest.raises(TypeError, match="check_passes must be a bool"):
        Determinizer(env, s, seat, check_passes=1)
