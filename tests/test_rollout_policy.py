"""The numba rollout policy (cardenvs.core.policy) and rollouts from loaded positions
(VectorGame.load_states / VectorGame.rollout), every game."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import cardenvs
from cardenvs.core.kernels import rng_below
from cardenvs.core.policy import (
    PP_WILD, cost_after_row, hand_after, hand_cost, hand_cost_reference, masks_of,
    policy_params,
)
from cardenvs.core.state import CUR, PHASE, P_DONE, REW0
from cardenvs.vector import VectorGame, rollout_streams

from cardenvs.agents.search import RolloutAgent
from helpers import random_decisions

GAMES = list(cardenvs.GAMES)


def positions(game, n_games: int, seed: int, every: int = 7):
    """Mid-game states of random games (every ``every``-th decision, all phases)."""
    return np.array([s.copy() for s, _, d in random_decisions(game, n_games, seed)
                     if d % every == 0])


def replay(game, state, choose):
    """Play ``state`` to the end with ``choose(state, legal) -> action`` through Game.step,
    checking every action with is_legal; returns (per-seat returns, decisions)."""
    s = state.copy()
    buf = np.empty(game.n_actions, np.int64)
    ret = np.zeros(game.n_players)
    d = 0
    while not game.done(s):
        k = game.legal(s, buf)
        a = int(choose(s, buf[:k].copy()))
        assert game.is_legal(s, a), f"illegal {a} ({game.action_to_string(a)})"
        game.step(s, a)
        ret += s[REW0:REW0 + game.n_players]
        d += 1
    return ret, d


@pytest.mark.parametrize("name", GAMES)
def test_heuristic_rollouts_equal_an_independent_replay(name):
    """Rollouts from loaded positions return what stepping the same states one action at a
    time through Game.step with the policy's choices returns; every action is legal."""
    game = cardenvs.make_game(name)
    states = positions(game, 6, seed=1)[:40]
    vg = VectorGame(game, len(states), observe=False)
    vg.load_states(states)
    ret = vg.rollout("heuristic", seed=3)
    lengths = vg.last_rollout_lengths.copy()
    agent = RolloutAgent(game)
    for j, st in enumerate(states):
        r, d = replay(game, st, agent.act_state)
        assert d == lengths[j]
        assert np.array_equal(r, ret[j]), (j, r, ret[j])
    assert (vg.seat == -1).all() and (vg.n_legal == 0).all()
    assert all(vg.states[i, PHASE] == P_DONE for i in range(len(states)))


@pytest.mark.parametrize("name", GAMES)
def test_random_rollouts_equal_an_independent_replay(name):
    """The random policy draws slot j's actions from stream j of rollout_streams(seed), one
    draw per decision with two or more legal actions."""
    game = cardenvs.make_game(name)
    states = positions(game, 4, seed=2)[:20]
    vg = VectorGame(game, 32, observe=False)
    slots = np.arange(3, 3 + len(states))
    vg.load_states(states, slots)
    ret = vg.rollout("random", seed=11, slots=slots)
    streams = rollout_streams(11, len(states))
    for j, st in enumerate(states):
        rng = streams[j:j + 1].copy()
        r, _ = replay(game, st, lambda s, legal: legal[rng_below(rng, 0, len(legal))]
                      if len(legal) > 1 else legal[0])
        assert np.array_equal(r, ret[j])


@pytest.mark.parametrize("name", GAMES)
def test_policy_is_legal_in_many_games(name):
    """Whole games from the deal (every phase: bids, burying, the exchange, stand-ins, 报牌)
    with the heuristic at every seat, each action checked with is_legal."""
    game = cardenvs.make_game(name)
    agent = RolloutAgent(game)
    rng = np.random.default_rng(5)
    s = game.new_state()
    kinds = set()
    for _ in range(30):
        game.reset(s, int(rng.integers(2**62)))
        buf = np.empty(game.n_actions, np.int64)
        while not game.done(s):
            k = game.legal(s, buf)
            a = agent.act_state(s, buf[:k].copy())
            assert game.is_legal(s, a)
            kinds.add(game.block_of(a))
            game.step(s, a)
    assert "play" in kinds and "pass" in kinds
    for block in ("bid", "bury", "take", "return"):
        if block in game.blocks:
            assert block in kinds, f"{block} never chosen"


def test_rollouts_are_deterministic_per_seed():
    game = cardenvs.make_game("wakeng")
    states = positions(game, 3, seed=4)[:16]
    vg = VectorGame(game, 16, observe=False)
    out = []
    for seed in (7, 7, 8):
        vg.load_states(states)
        out.append(vg.rollout("heuristic", seed=seed, epsilon=0.3).copy())
    assert np.array_equal(out[0], out[1])
    assert not np.array_equal(out[0], out[2])


@pytest.mark.parametrize("name", ["doudizhu", "niangniang"])
def test_load_states_recomputes_derived_fields(name):
    """After load_states a slot shows what the AEC env shows at that position: seat, legal
    ids, observation, mask; rewards and done cleared."""
    env = importlib.import_module(f"cardenvs.{cardenvs.GAMES[name]}").env()
    game = env.unwrapped.game
    vg = VectorGame(game, 4, masks=True)
    vg.reset(seed=0)
    vg.step_random()
    rng = np.random.default_rng(0)
    env.reset(seed=9)
    for step in range(30):
        agent = env.agent_selection
        legal = env.unwrapped.legal_actions()
        if step % 6 == 5:
            vg.load_states(env.unwrapped.state_vec[None].copy(), [2])
            ob = env.observe(agent)
            assert vg.seat[2] == env.possible_agents.index(agent)
            assert np.array_equal(vg.legal[2, :vg.n_legal[2]], legal)
            assert (vg.legal[2, vg.n_legal[2]:] == -1).all()
            assert np.array_equal(vg.obs[2], ob["observation"])
            assert np.array_equal(vg.masks[2], ob["action_mask"])
            assert not vg.done[2] and (vg.rewards[2] == 0).all()
            # the slot steps on like the env
            a = int(legal[rng.integers(len(legal))])
            vg.step(np.array([a]), slots=[2])
            env.step(a)
            assert np.array_equal(vg.states[2], env.unwrapped.state_vec)
            continue
        env.step(int(legal[rng.integers(len(legal))]))


def test_load_finished_state_is_a_finished_slot():
    game = cardenvs.make_game("doudizhu")
    s = positions(game, 1, seed=0)[0]
    vg = VectorGame(game, 2, auto_reset=False)
    vg.load_states(np.stack([s, s]))
    vg.rollout(slots=[0])
    fin = vg.states[0].copy()
    vg.load_states(fin[None], [1])
    assert vg.seat[1] == -1 and vg.n_legal[1] == 0 and (vg.obs[1] == 0).all()
    assert (vg.rollout(slots=[1]) == 0).all()


def test_bad_loaded_states_are_refused():
    game = cardenvs.make_game("doudizhu")
    other = cardenvs.make_game("niangniang")
    vg = VectorGame(game, 3)
    vg.reset(seed=0)
    before = vg.states.copy()
    good = positions(game, 1, seed=0)[:3]
    with pytest.raises(ValueError, match=r"shape \(3, "):
        vg.load_states(good[:2])
    with pytest.raises(TypeError, match="int64"):
        vg.load_states(good.astype(np.int32))
    with pytest.raises(TypeError, match="numpy"):
        vg.load_states(good.tolist())
    bad = np.zeros((3, other.state_size), np.int64)
    with pytest.raises(ValueError, match=r"states\[0\].*entries"):
        vg.load_states(bad)
    with pytest.raises(ValueError, match="slot indices"):
        vg.load_states(good[:1], [5])
    assert np.array_equal(vg.states, before)  # nothing was loaded
    with pytest.raises(ValueError, match="unknown rollout policy"):
        vg.rollout("greedy")
    with pytest.raises(ValueError, match="epsilon"):
        vg.rollout(epsilon=2.0)


def test_bad_field_named_by_the_validator():
    """A state whose header field is out of range is refused, the row and the field named,
    and nothing is loaded."""
    game = cardenvs.make_game("doudizhu")
    s = positions(game, 1, seed=0)[3].copy()
    s[CUR] = 7
    vg = VectorGame(game, 1)
    vg.reset(seed=0)
    before = vg.states.copy()
    with pytest.raises(ValueError, match=r"states\[0\].*CUR = 7"):
        vg.load_states(s[None])
    np.testing.assert_array_equal(vg.states, before)


@pytest.mark.parametrize("name", GAMES)
def test_hand_cost_counts_combinations(name):
    """The plan cost of literal hands: one card per combination, chains and kickers
    counted."""
    game = cardenvs.make_game(name)
    pp = policy_params(game)
    c = np.zeros(16, np.int64)
    h = np.zeros(16, np.int64)
    assert hand_cost(h, pp, c) == 0
    h[5] = 2
    assert hand_cost(h, pp, c) == 1  # a pair
    h[7] = 1
    assert hand_cost(h, pp, c) == 2  # a pair and a single
    if game.info.name in ("doudizhu", "doudizhu4", "wakeng"):
        st = np.zeros(16, np.int64)
        st[1:6] = 1  # five consecutive ranks, all in straights
        assert hand_cost(st, pp, c) == 1


@pytest.mark.parametrize("name", GAMES)
def test_hand_cost_equals_its_reference(name):
    """The rank-mask plan cost equals the rank-by-rank reference on random hands of every
    size drawn from the game's deck (and on the hands of random positions)."""
    game = cardenvs.make_game(name)
    pp = policy_params(game)
    c = np.zeros(16, np.int64)
    rng = np.random.default_rng(0)
    deck = np.repeat(np.arange(game.deck.n_ranks), game.deck.copies)
    hands = []
    for _ in range(3000):
        m = int(rng.integers(0, min(len(deck), 34)))
        hands.append(np.bincount(rng.choice(deck, m, replace=False), minlength=16))
    for s in positions(game, 3, seed=6, every=3):
        for q in range(game.n_players):
            hands.append(s[48 + 16 * q:64 + 16 * q].copy())
    for h in hands:
        h = np.ascontiguousarray(h, np.int64)
        assert hand_cost(h, pp, c) == hand_cost_reference(h, pp, c), h


def _check_cost_after_row(game, pp, full, n_games, seed, every) -> int:
    """Assert the incremental cost after every legal row (``full``: which plan cost) equals
    the cost of the hand the row leaves, at positions of ``n_games`` random games; the
    number of rows checked."""
    c = np.zeros(16, np.int64)
    left = np.zeros(16, np.int64)
    buf = np.empty(game.n_actions, np.int64)
    n = 0
    for s in positions(game, n_games, seed=seed, every=every):
        if s[PHASE] == P_DONE:
            continue
        h = s[48 + 16 * s[CUR]:64 + 16 * s[CUR]].copy()
        m = masks_of(h, pp)
        for a in buf[:game.legal(s, buf)]:
            if a >= game.pass_id:
                continue
            hand_after(h, a, game.tab, pp, left)
            assert cost_after_row(h, int(h.sum()), *m, a, game.tab, pp, c, full) == \
                hand_cost(left, pp, c, full), (h, a)
            n += 1
    return n


@pytest.mark.parametrize("name", ["doudizhu", "doudizhu4", "wakeng"])
def test_cost_after_row_equals_the_hand_left(name):
    """The incremental cost of the hand a row leaves equals the plan cost of that hand."""
    game = cardenvs.make_game(name)
    assert _check_cost_after_row(game, policy_params(game), 0, 4, 8, 2) > 100


# -- the heuristic policy (full plan cost, the rules agent's card play) --------------------------


@pytest.mark.parametrize("name", GAMES)
def test_full_hand_cost_equals_its_reference(name):
    """The full plan cost (bombs and the rocket -1, controls half) of the rank-mask code
    equals the rank-by-rank reference on random hands of every size, and the incremental
    cost after a row equals the cost of the hand it leaves."""
    game = cardenvs.make_game(name)
    pp = policy_params(game)
    c = np.zeros(16, np.int64)
    rng = np.random.default_rng(1)
    deck = np.repeat(np.arange(game.deck.n_ranks), game.deck.copies)
    for _ in range(3000):
        m = int(rng.integers(0, min(len(deck), 34)))
        h = np.bincount(rng.choice(deck, m, replace=False), minlength=16).astype(np.int64)
        assert hand_cost(h, pp, c, 1) == hand_cost_reference(h, pp, c, 1), h
    if pp[PP_WILD] != 0:
        return  # the incremental cost serves games without wild cards
    assert _check_cost_after_row(game, pp, 1, 3, 9, 3) > 50


def test_full_hand_cost_literal_hands():
    """Dou Dizhu: the rocket and a bomb take a lead back (-1), a 2 or a joker alone is half a
    turn (it usually wins its trick), a trio carries the lowest single."""
    game = cardenvs.make_game("doudizhu")
    pp = policy_params(game)
    c = np.zeros(16, np.int64)

    def cost(text, full=1):
        return hand_cost(game.deck.parse(text).astype(np.int64), pp, c, full)

    assert cost("BR") == -1.0 and cost("BR", 0) == 2.0
    assert cost("3333") == -1.0 and cost("3333", 0) == 1.0
    assert cost("2") == 0.5 and cost("B") == 0.5 and cost("22") == 0.5
    assert cost("5552") == 1.5  # the trio takes no control as its kicker
    assert cost("5559") == 1.0
    assert cost("34567BR") == 0.0  # a straight (1) and the rocket (-1)
    assert cost("3333BR9") == -1.0


def dd_position(hands, to_move, landlord, last=None, last_seat=-1):
    """A 3-player Dou Dizhu play position: ``hands`` (card strings per seat), the seat to
    move, the landlord and the play to beat (an action string) with its owner."""
    from cardenvs.core.state import HDR, LANDLORD, LAST_ROW, LAST_SEAT, NPASS, P_PLAY

    game = cardenvs.make_game("doudizhu")
    s = game.new_state()
    game.reset(s, 0)
    s[PHASE] = P_PLAY
    s[LANDLORD] = landlord
    s[CUR] = to_move
    for q, text in enumerate(hands):
        s[HDR + 16 * q:HDR + 16 * q + 16] = game.deck.parse(text)
    s[LAST_ROW] = -1 if last is None else game.string_to_action(last)
    s[LAST_SEAT] = last_seat
    s[NPASS] = 0 if last is None else (to_move - last_seat) % 3 - 1
    return game, s


def policy_move(game, s, policy="heuristic"):
    """The policy's action at ``s`` as a string (checked legal)."""
    agent = RolloutAgent(game, policy=policy)
    buf = np.empty(game.n_actions, np.int64)
    legal = buf[:game.legal(s, buf)].copy()
    a = int(legal[int(np.argmin(agent.policy_scores(s, legal)))])
    assert game.is_legal(s, a)
    return game.action_to_string(a)


# (hands by seat, to move, landlord, play to beat, its owner, the right move, why)
LITERAL = [
    (["99", "JJ", "3456789TJQ"], 1, 0, "99", 0, "JJ", "go out"),
    (["KK", "55558", "3456789TJQKA2"], 1, 0, "QQ", 0, "5555",
     "bomb the landlord about to go out"),
    (["3456789TJQKA2", "4K", "5K"], 2, 0, "8", 1, "pass", "do not beat a partner"),
    (["J", "3449", "3456789TJQ"], 1, 0, None, -1, "44", "no single into a last card"),
    (["3456789TJ", "38KK", "9"], 1, 0, None, -1, "3", "the lowest single to a partner"),
    (["3456789TJQ", "8BR", "3456789TJQ"], 1, 0, None, -1, "BR",
     "cash the sure winner before the last card"),
    (["555+3", "4666A9", "3456789TJQ"], 1, 0, "555+3", 0, "666+4", "the lowest kicker"),
]


@pytest.mark.parametrize("hands, to_move, landlord, last, owner, want, why", LITERAL,
                         ids=[row[-1] for row in LITERAL])
def test_heuristic_literal_positions(hands, to_move, landlord, last, owner, want, why):
    """Positions where the right move is unambiguous (docs/rules/doudizhu.md: the landlord
    plays alone against the two farmers; a hand that empties first wins)."""
    hands = [h.replace("+", "") for h in hands]
    game, s = dd_position(hands, to_move, landlord, last, owner)
    assert policy_move(game, s) == want, why


def test_heuristic_keeps_a_bomb_on_the_lead():
    """Leading with opponents far from going out: neither the bomb nor four 2s with two
    kickers, but a small card (the old policy spent the four 2s as 2222+45)."""
    game, s = dd_position(["3456789TJQKA", "2222459J", "3456789TJQKA"], 1, 0)
    move = policy_move(game, s)
    assert "2222" not in move, move


def test_heuristic_wulong_never_leaves_only_3s_and_declares_before_going_out():
    """Lanxi Wulong (docs/rules/wulong.md): a 3 is played only inside a chain, and a player
    left with only 3s has failed; 报牌 before the last play pays.  Against a 2 the hand
    3 9999 passes (the bomb would leave a lone 3); a lone
    Q on the lead declares first (the old policy never declared)."""
    from cardenvs.core.state import LAST_ROW, LAST_SEAT

    game = cardenvs.make_game("wulong")
    s = game.new_state()
    game.set_position(s, ["39999", "4567", "5678", "678"], 0)
    s[LAST_ROW] = game.string_to_action("2")
    s[LAST_SEAT] = 3
    assert policy_move(game, s) == "pass"  # (the 2's owner holds 3 cards: worth a bomb)
    s = game.new_state()
    game.set_position(s, ["Q", "4567", "5678", "678"], 0)
    declare = game.action_to_string(game.blocks["declare"][0])
    assert policy_move(game, s) == declare
    assert policy_move(game, s, "heuristic0") != declare


class _Recording:
    """An agent wrapper that counts its ``act_batch`` calls and the positions they held."""

    def __init__(self, agent):
        self.agent, self.calls, self.positions = agent, 0, 0
        self.needs_state = getattr(agent, "needs_state", False)
        self.name = agent.name

    def act_batch(self, obs, masks, **kw):
        self.calls += 1
        self.positions += len(obs)
        return self.agent.act_batch(obs, masks, **kw)


@pytest.mark.parametrize("name", GAMES)
def test_rollouts_with_the_policy_as_agent_equal_plain_rollouts(name):
    """``rollout(agent=, agent_seats=)`` with the rollout policy itself as the agent (the
    ``rollout`` agent, which decides from the state one position at a time) at every seat
    returns exactly the plain rollouts: the games stop at every decision of two or more legal
    actions, the agent's batched answers are played, and the pay and decisions add up."""
    game = cardenvs.make_game(name)
    states = positions(game, 6, seed=4)[:40]
    vg = VectorGame(game, len(states), observe=False, auto_reset=False)
    vg.load_states(states)
    plain = vg.rollout("heuristic", seed=9)
    plain_len = vg.last_rollout_lengths.copy()
    agent = _Recording(RolloutAgent(game))
    vg.load_states(states)
    got = vg.rollout("heuristic", seed=9, agent=agent, agent_seats=range(game.n_players))
    assert np.array_equal(got, plain)
    assert np.array_equal(vg.last_rollout_lengths, plain_len)
    assert vg.last_agent_decisions == agent.positions > 0
    # one call per round, each holding every game still waiting: far fewer calls than positions
    assert agent.calls < agent.positions / 4
    assert (vg.seat == -1).all() and (vg.n_legal == 0).all()


@pytest.mark.parametrize("name", ["doudizhu", "wakeng", "wulong"])
def test_rollouts_with_a_network_at_one_seat_equal_an_independent_replay(name):
    """The ``trained`` network at seat 0 and the policy elsewhere: the returns and lengths
    are those of stepping each state through Game.step with the network's ``act`` at seat 0
    (one position at a time) and the policy's choice at the other seats."""
    from cardenvs.agents import make_agent

    game = cardenvs.make_game(name)
    states = positions(game, 6, seed=6)[:30]
    net = make_agent("trained", game)
    pol = RolloutAgent(game)
    vg = VectorGame(game, 64, observe=False, auto_reset=False)
    slots = np.arange(5, 5 + len(states))
    vg.load_states(states, slots)
    ret = vg.rollout("heuristic", seed=2, slots=slots, agent=net, agent_seats=(0,))
    lengths = vg.last_rollout_lengths.copy()
    obs = np.zeros(game.layout.size, np.float32)

    def choose(s, legal):
        if int(s[CUR]) != 0 or len(legal) == 1:
            return pol.act_state(s, legal)
        game.encode(s, 0, obs)
        mask = np.zeros(game.n_actions, np.int8)
        mask[legal] = 1
        return net.act({"observation": obs.copy(), "action_mask": mask}, legal)

    by_net = 0
    for j, st in enumerate(states):
        r, d = replay(game, st, choose)
        assert d == lengths[j]
        assert np.allclose(r, ret[j], atol=1e-9), (j, r, ret[j])
    assert vg.last_agent_decisions > len(states)
    # the network is not the policy: the games differ from the policy's own rollouts
    vg.load_states(states, slots)
    assert not np.array_equal(vg.rollout("heuristic", seed=2, slots=slots), ret)


def test_rollout_agent_errors_name_what_is_wrong():
    game = cardenvs.make_game("wakeng")
    states = positions(game, 2, seed=8)[:6]
    vg = VectorGame(game, 8, observe=False, auto_reset=False)
    vg.load_states(states, np.arange(6))
    with pytest.raises(ValueError, match="agent_seats without an agent"):
        vg.rollout(slots=np.arange(6), agent_seats=(0,))
    with pytest.raises(ValueError, match="needs agent_seats"):
        vg.rollout(slots=np.arange(6), agent=RolloutAgent(game))
    with pytest.raises(ValueError, match=r"seats in \[0, 3\)"):
        vg.rollout(slots=np.arange(6), agent=RolloutAgent(game), agent_seats=(3,))
    with pytest.raises(TypeError, match="act_batch"):
        vg.rollout(slots=np.arange(6), agent=object(), agent_seats=(0,))

    class Illegal:
        name = "illegal"

        def act_batch(self, obs, masks):
            return np.array([int(np.flatnonzero(m == 0)[0]) for m in masks])

    with pytest.raises(ValueError, match="'illegal' chose action .* not legal"):
        vg.rollout(slots=np.arange(6), agent=Illegal(), agent_seats=(0, 1, 2))
    # the batch is usable after the error: reloaded, it rolls out as before
    vg.load_states(states, np.arange(6))
    vg.rollout(slots=np.arange(6))
    assert (vg.seat[:6] == -1).all()
