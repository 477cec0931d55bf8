"""A compact position's pending partial play (cardenvs.core.partial) through the information
state, determinization and the search agents: the mover's information state gains exactly
the partial play, sampled worlds keep it completable to the same plays, search completes it
legally, and a whole compact deal played by search at every decision is the flat deal."""

from __future__ import annotations

import importlib
import pickle

import numpy as np
import pytest

from cardenvs.agents.search import RolloutAgent, SearchAgent
from cardenvs.core.compact import Pending
from cardenvs.core.infostate import Determinizer, determinize, infostate
from cardenvs.core.partial import PartialPlay, decision_info, partial_play, pending_of
from cardenvs.registry import spec

#: the games whose plays carry kickers (Wakeng's have none: its compact space is its flat one)
KICKER_GAMES = ["doudizhu", "doudizhu4", "paodekuai", "wulong", "niangniang"]
#: games with wild jokers (a partial play's ranks may be a joker's stand-ins)
WILD_GAMES = ("wulong", "niangniang")
#: mid-play positions checked per game
N_POSITIONS = 6


def _env(name: str, **kw):
    return importlib.import_module(f"cardenvs.{spec(name).env_module}").env(**kw)


def _view(info) -> dict:
    """Every accessor of an InfoState but ``pending``, as plain values."""
    out = {}
    for k in ("hand", "hands", "hand_sizes", "played", "played_counts", "piles", "kitty",
              "unknown_counts", "hidden", "known_in", "free_counts", "allowed", "stuck",
              "failed", "declared", "jokers_for"):
        v = getattr(info, k)
        out[k] = v.tolist() if isinstance(v, np.ndarray) else v
    return out


def _mid_play_positions(name: str, n: int, seed: int):
    """Compact envs in the middle of a play (after the body, before its last kicker), each
    with the information states of every seat at the play's first decision: uniform
    decisions, a body with kickers chosen whenever one is offered, then 0 or more kickers."""
    rng = np.random.default_rng(seed)
    out = []
    deal = 0
    while len(out) < n:
        env = _env(name, actions="compact", illegal="raise")
        env.reset(seed=seed * 1000 + deal)
        deal += 1
        u = env.unwrapped
        c = u.codec
        while u.agents and not u.game.done(u.state_vec) and len(out) < n:
            legal = u.legal_actions()
            bodies = [x for x in legal if c.n_other <= x < c.n_other + c.n_bodies
                      and c.ntok[x - c.n_other] > 0]
            if bodies and rng.random() < 0.6:
                before = {q: infostate(u, seat=q) for q in range(u.game.n_players)}
                env.step(int(bodies[rng.integers(len(bodies))]))
                for _ in range(int(rng.integers(0, c.ntok[u._compact.body]))):
                    kick = u.legal_actions()
                    env.step(int(kick[rng.integers(len(kick))]))
                out.append((pickle.loads(pickle.dumps(env)), before))
                while u._compact.body >= 0:  # finish the play, go on with the deal
                    kick = u.legal_actions()
                    env.step(int(kick[rng.integers(len(kick))]))
            else:
                env.step(int(legal[rng.integers(len(legal))]))
    return out


@pytest.fixture(scope="module", params=KICKER_GAMES)
def positions(request):
    return request.param, _mid_play_positions(request.param, N_POSITIONS, seed=5)


def test_the_movers_infostate_gains_exactly_the_partial_play(positions):
    name, cases = positions
    for env, before in cases:
        u = env.unwrapped
        g, c = u.game, u.codec
        mover = g.current(u.state_vec)
        snap = u.get_state()["compact"]
        body, kickers = snap
        for q in range(g.n_players):
            now = infostate(env, seat=q)
            assert _view(now) == _view(before[q]), (name, q)
            assert before[q].pending is None
            if q != mover:
                assert now.pending is None
        pp = infostate(env).pending
        assert isinstance(pp, PartialPlay)
        assert pp.snapshot() == (body, kickers) and pp.body_id == c.n_other + body
        committed = c.body_counts[body].astype(np.int64).copy()
        for x in kickers:
            k = x - c.n_other - c.n_bodies
            committed[c.kick_rank[k]] += c.kick_unit[k]
        np.testing.assert_array_equal(pp.counts, committed)
        assert pp.cards == g.deck.format(committed)
        # the committed cards are still in the mover's hand (effective ranks: a wild joker
        # may stand in for one); the plays take them all
        hand = infostate(env).hand_counts
        if name in WILD_GAMES:
            assert pp.counts.sum() <= hand.sum()
        else:
            assert (pp.counts <= hand).all()
        np.testing.assert_array_equal(pp.plays, np.sort(u.flat_legal_actions()))
        np.testing.assert_array_equal(pp.legal, np.sort(u.legal_actions()))
        assert pp.kickers_left == int(c.ntok[body]) - len(kickers) >= 1
        for f in pp.plays:
            assert (g.tab.counts[f] >= pp.counts).all()
            assert c.parts(int(f))[: 1 + len(kickers)] == [c.n_other + body, *kickers]
        # the mover's observation says the same: the partial-play planes are these cards
        L = g.layout.size
        obs = env.observe(env.agent_selection)["observation"]
        planes = obs[L:L + c.ranks * c.depth].reshape(c.ranks, c.depth)
        np.testing.assert_array_equal((planes > 0.5).sum(1), pp.counts[:c.ranks])
        # the same partial play given by hand, and none given
        assert infostate(g, u.state_vec, mover, pending=snap).pending == pp
        assert infostate(env, pending=None).pending is None
        assert infostate(g, u.state_vec, mover).pending is None  # a game has no env's play


def test_worlds_keep_every_constraint_and_complete_the_partial_play(positions):
    name, cases = positions
    rng = np.random.default_rng(1)
    for env, _ in cases:
        u = env.unwrapped
        g = u.game
        mover = g.current(u.state_vec)
        snap = u.get_state()["compact"]
        pp = infostate(env).pending
        d = Determinizer(env, u.state_vec, mover, check_passes=name != "paodekuai")
        assert d.pending == pp
        worlds = d.batch(rng, 12)
        obs_real = np.empty(g.layout.size, np.float32)
        g.encode(u.state_vec, mover, obs_real)
        obs = np.empty(g.layout.size, np.float32)
        buf = np.zeros(g.n_actions, np.int64)
        for w in worlds:
            g.check_state(w)
            g.encode(w, mover, obs)
            np.testing.assert_array_equal(obs, obs_real)
            n = g.legal(w, buf)
            p = Pending(u.codec)
            p.restore(snap, buf, n)  # legal in the world, still incomplete
            np.testing.assert_array_equal(np.sort(p.cand[:p.nc]), pp.plays)
            np.testing.assert_array_equal(np.sort(p.legal[:p.n_legal]), pp.legal)
        # every other seat samples as from the position before the play
        for q in range(g.n_players):
            if q != mover:
                assert Determinizer(env, u.state_vec, q, check_passes=False).pending is None
        w = determinize(env, u.state_vec, mover, rng, pending=snap)
        assert partial_play(g, w, snap) == pp


def test_search_completes_a_partial_play_it_did_not_choose(positions):
    """A fresh agent (no play of its own remembered) asked at a restored mid-play position
    searches the plays that extend it: its decisions complete a legal whole play."""
    name, cases = positions
    for i, (env, _) in enumerate(cases[:3]):
        u = env.unwrapped
        g = u.game
        plays = set(u.flat_legal_actions().tolist())
        agent = SearchAgent(g, seed=i, rollouts=16, max_candidates=3)
        n_hist = len(u.history)
        mover = env.agent_selection
        while env.agent_selection == mover and len(u.history) == n_hist:
            obs, _, _, _, info = env.last()
            a = agent.act(obs, u.legal_actions(), {**info, **decision_info(env)})
            assert a in set(u.legal_actions().tolist())
            env.step(a)
        assert len(u.history) == n_hist + 1 and u.history[-1] in plays


@pytest.mark.parametrize("name", ["doudizhu", "paodekuai"])
def test_a_compact_deal_searched_at_every_decision_is_the_flat_deal(name):
    """Search (and rollout) agents acting at every compact decision, given the partial play
    (not through CompactAdapter): every decision is legal, every play complete and legal, and
    the deal is the flat deal the same agents play (the play chosen at a body is kept)."""
    def deal(actions: str, seed: int):
        env = _env(name, actions=actions, illegal="raise")
        env.reset(seed=seed)
        u = env.unwrapped
        g = u.game
        lineup = [SearchAgent(g, seed=7, rollouts=16, max_candidates=3), RolloutAgent(g)]
        lineup += [SearchAgent(g, seed=8 + q, rollouts=16, max_candidates=3)
                   for q in range(2, g.n_players)]
        steps = 0
        for agent in env.agent_iter():
            obs, _, term, trunc, info = env.last()
            if term or trunc:
                env.step(None)
                continue
            seat = env.possible_agents.index(agent)
            n_hist = len(u.history)
            state = u.state_vec.copy()
            a = lineup[seat].act(obs, u.legal_actions(), {**info, **decision_info(env)})
            assert a in set(u.legal_actions().tolist())
            env.step(a)
            if len(u.history) > n_hist:
                assert g.is_legal(state, u.history[-1])
            steps += 1
        assert not u.agents or all(u.terminations.values())
        return list(u.history), steps

    kicker_decisions = 0
    for seed in (2, 3, 4):
        flat, n_flat = deal("flat", seed)
        compact, n_compact = deal("compact", seed)
        assert compact == flat
        kicker_decisions += n_compact - n_flat
    assert kicker_decisions > 0  # made by the agents, not an adapter


def test_pending_of_and_decision_info():
    env = _env("doudizhu", actions="compact")
    env.reset(seed=0)
    u = env.unwrapped
    assert pending_of(env) is None and decision_info(env)["compact"] is None
    flat = _env("doudizhu")
    flat.reset(seed=0)
    assert pending_of(flat) is None and "compact" not in decision_info(flat)
    (cenv, _), = _mid_play_positions("doudizhu", 1, seed=3)
    cu = cenv.unwrapped
    snap = cu.get_state()["compact"]
    assert pending_of(cenv) == snap == decision_info(cenv)["compact"]
    assert pending_of(cenv, cu.state_vec) == snap
    assert pending_of(cenv, u.state_vec) is None  # another position: not the env's play
    assert pending_of(cu.game, cu.state_vec) is None


def test_bad_partial_plays_are_refused():
    (env, _), = _mid_play_positions("doudizhu", 1, seed=3)
    u = env.unwrapped
    g, c = u.game, u.codec
    body, kickers = u.get_state()["compact"]
    s = u.state_vec
    with pytest.raises(ValueError, match="'env'"):
        infostate(env, pending="mine")
    with pytest.raises(ValueError, match=r"\(body, \[kicker ids\]\)"):
        infostate(g, s, pending=body)
    with pytest.raises(TypeError, match="must be ints"):
        infostate(g, s, pending=(float(body), []))
    with pytest.raises(ValueError, match="not in"):
        determinize(g, s, 0, np.random.default_rng(0), pending=(c.n_bodies + 5, []))
    other = next(b for b in range(c.n_bodies) if c.ntok[b] > 0 and b != body
                 and not partial_play_ok(g, s, b))
    with pytest.raises(ValueError, match="not legal"):
        infostate(g, s, pending=(other, []))
    full = (body, [*kickers, *c.parts(int(u.flat_legal_actions()[0]))[1 + len(kickers):]])
    with pytest.raises(ValueError, match="complete play"):
        Determinizer(g, s, 0, pending=full)
    agent = RolloutAgent(g)
    with pytest.raises(ValueError, match="not the compact ids"):
        agent.act(None, np.array([0, 1]), {"state": s, "compact": (body, kickers)})
    with pytest.raises(ValueError, match="not legal"):
        agent.act(None, None, {"state": s, "compact": (other, [])})


def partial_play_ok(game, state, body) -> bool:
    try:
        partial_play(game, state, (body, []))
    except ValueError:
        return False
    return True
