"""A search that must answer in time (``SearchAgent.deadline``, set per move by the web app):
the same moves while the deadline is not reached, chunks of worlds stopped at it, the prior's
move past it; the kernels the search calls run without the GIL."""

from __future__ import annotations

import importlib
import time
from types import SimpleNamespace

import numpy as np
import pytest

import cardenvs
from cardenvs.agents import search as search_mod
from cardenvs.agents.search import DEADLINE_WORLDS, MIN_WORLDS, RolloutAgent, SearchAgent
from cardenvs.vector import VectorGame
from cardenvs.web.session import GameSession


def env_of(name: str):
    return importlib.import_module(f"cardenvs.{cardenvs.GAMES[name]}").env(illegal="raise")


def positions(name: str, seed: int, n: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``n`` decisions (state, legal ids) with two legal actions or more, of deals played by
    the rollout policy (seeds ``seed``, ``seed + 1``, ...)."""
    env = env_of(name)
    u = env.unwrapped
    pol = RolloutAgent(u.game)
    out: list[tuple[np.ndarray, np.ndarray]] = []
    while len(out) < n:
        env.reset(seed=seed)
        seed += 1
        while env.agents and len(out) < n:
            if env.terminations[env.agent_selection] or env.truncations[env.agent_selection]:
                env.step(None)
                continue
            s, legal = u.state_vec.copy(), u.legal_actions()
            if len(legal) > 1:
                out.append((s, legal))
            env.step(pol.act_state(s, legal))
    return out


@pytest.fixture
def rollout_calls(monkeypatch):
    """The number of slots of each ``VectorGame.rollout`` call."""
    calls: list[int] = []
    real = VectorGame.rollout

    def counted(self, policy="heuristic", seed=0, slots=None, **kw):
        calls.append(self.n if slots is None else len(slots))
        return real(self, policy, seed, slots, **kw)

    monkeypatch.setattr(VectorGame, "rollout", counted)
    return calls


@pytest.mark.parametrize("name", ["doudizhu", "wulong"])
def test_a_deadline_not_reached_plays_the_moves_of_no_deadline(name, rollout_calls):
    """Rollouts in chunks of worlds, all played before a distant deadline: the moves and the
    generator's state are those of the same agent without a deadline."""
    game = cardenvs.make_game(name)
    ps = positions(name, seed=4, n=12)
    free = SearchAgent(game, seed=3, rollouts=64, max_candidates=3)
    timed = SearchAgent(game, seed=3, rollouts=64, max_candidates=3)
    timed.deadline = time.perf_counter() + 3600
    chunked = 0
    for s, legal in ps:
        want = free.act_state(s, legal)
        rollout_calls.clear()
        assert timed.act_state(s, legal) == want
        assert free.rng.bit_generator.state == timed.rng.bit_generator.state
        if rollout_calls:  # chunks of DEADLINE_WORLDS worlds (C candidates), then the rest
            first = rollout_calls[0]
            assert first % DEADLINE_WORLDS == 0
            assert all(c == first for c in rollout_calls[:-1]) and rollout_calls[-1] <= first
            chunked += len(rollout_calls) > 1
    assert chunked >= 3


def test_a_passed_deadline_plays_the_priors_move_without_a_rollout(rollout_calls):
    """Past the deadline before the first rollout: the prior's move (without a prior, the
    rollout policy's), and no rollout is spent."""
    game = cardenvs.make_game("doudizhu")
    a = SearchAgent(game, seed=0)
    bare = SearchAgent(game, seed=0, prior=None)
    policy = RolloutAgent(game)
    ps = positions("doudizhu", seed=2, n=20)
    assert len(ps) == 20
    for s, legal in ps:
        a.deadline = bare.deadline = time.perf_counter() - 1.0
        assert a.act_state(s, legal) == a.prior_action(s, legal)
        assert bare.act_state(s, legal) == policy.act_state(s, legal)
    assert rollout_calls == []


def test_the_rollouts_stop_when_the_next_chunk_would_end_past_the_deadline(monkeypatch,
                                                                            rollout_calls):
    """A clock that moves one second per chunk, a deadline 2.5 s away: two chunks are played
    (the third would end at 3 s), and the move is the one the agent makes from those
    ``2 * DEADLINE_WORLDS`` worlds without a deadline."""
    game = cardenvs.make_game("doudizhu")
    clock = [100.0]
    monkeypatch.setattr(search_mod, "time", SimpleNamespace(perf_counter=lambda: clock[0]))
    real = VectorGame.rollout  # the counting one of rollout_calls

    def tick(self, *args, **kw):
        clock[0] += 1.0
        return real(self, *args, **kw)

    monkeypatch.setattr(VectorGame, "rollout", tick)
    checked = 0
    for s, legal in positions("doudizhu", seed=7, n=15):
        probe = SearchAgent(game, seed=5, rollouts=1000, prior=None)
        cands = probe.candidates(s, legal)
        if len(cands) < 2 or probe.is_bid(legal):  # bids are the policy's, not searched
            continue
        C = len(cands)
        rollout_calls.clear()
        timed = SearchAgent(game, seed=5, rollouts=1000, prior=None)
        timed.deadline = clock[0] + 2.5
        got = timed.act_state(s, legal)
        assert rollout_calls == [DEADLINE_WORLDS * C] * 2
        # the first 2 * DEADLINE_WORLDS worlds of the batch are those a batch of that many
        # draws (one generator, row after row)
        few = SearchAgent(game, seed=5, rollouts=2 * DEADLINE_WORLDS * C, prior=None)
        assert max(MIN_WORLDS, few.rollouts // C) == 2 * DEADLINE_WORLDS
        assert got == few.act_state(s, legal)
        checked += 1
    assert checked >= 5


def test_the_web_session_sets_the_deadline_for_one_move_only():
    s = GameSession("doudizhu", seat=0, agents="search", seed=11)
    bots = [b for _, b in s.bots.values()]
    assert all(isinstance(b, SearchAgent) for b in bots)
    moved = 0
    while not s.done and moved < 6:
        if s.players_turn:
            v = s.view()
            s.act(v["legal"][0]["id"], v["turn"])
            continue
        seat = s.to_move
        bot = s.bots[seat][1]
        env = s.env.unwrapped
        want = bot.prior_action(env.state_vec.copy(), env.legal_actions())
        _, a = s.agent_step(time.perf_counter() - 1.0)  # past: the prior's move, unsearched
        assert a == want
        assert bot.deadline is None
        moved += 1
    assert moved == 6
    with pytest.raises(TypeError, match="deadline"):
        s.agent_step("soon")  # type: ignore[arg-type]


def test_the_kernels_a_search_calls_release_the_gil():
    """The per-game copies the search runs (rollouts, state loading, the candidates' first
    steps) and the samplers are compiled ``nogil``: the web app's sessions search in
    parallel threads."""
    from cardenvs.core.determinizer import _passes_hold
    from cardenvs.core.rollout import apply_candidates
    from cardenvs.core.sampler import _sample
    from cardenvs.core.specialize import specialize
    from cardenvs.vector_kernels import _agent_moves, _load_engine, _rollout_engine

    game = cardenvs.make_game("wakeng")
    for f in (_rollout_engine, _load_engine, _agent_moves, apply_candidates):
        assert f.targetoptions.get("nogil") is True, f
        spec = specialize(f, game, "test")
        assert spec is not None and spec.dispatcher.targetoptions.get("nogil") is True, f
    for f in (_sample, _passes_hold):
        assert f.targetoptions.get("nogil") is True, f
    s, legal = positions("wakeng", seed=1, n=1)[0]
    assert SearchAgent(game, seed=0).act_state(s, legal) in set(legal.tolist())


def test_the_server_gives_each_agent_move_a_deadline(monkeypatch):
    """The app asks each agent move with a deadline :data:`SEARCH_DEADLINE` seconds after the
    move was asked for (the first one after the player's move: from its arrival)."""
    from starlette.testclient import TestClient

    from cardenvs.web import server

    got: list[tuple[float, float]] = []
    real = GameSession.agent_step

    def step(self, deadline=None):
        got.append((time.perf_counter(), deadline))
        return real(self, deadline)

    monkeypatch.setattr(GameSession, "agent_step", step)
    assert 0 < server.SEARCH_DEADLINE < 0.5
    with TestClient(server.create_app(delay=0)) as client:
        with client.websocket_connect("/ws") as ws:
            ws.send_json({"type": "start", "game": "wakeng", "seat": 0, "agents": "search",
                          "seed": 3, "delay": 0})
            acts = 0
            while acts < 3:
                m = ws.receive_json()
                assert m["type"] == "state"
                if m["done"]:
                    break
                if m["to_move"] == 0:
                    ws.send_json({"type": "act", "turn": m["turn"], "id": m["legal"][0]["id"]})
                    acts += 1
    assert len(got) >= 3
    for called, deadline in got:
        assert isinstance(deadline, float)
        assert deadline - called <= server.SEARCH_DEADLINE  # counted from the move's request
        assert deadline > called - 60  # a perf_counter time (one queued for long: past)
