"""The Wakeng ``rules`` agent's calibrated bidding (agents.rules.WakengPart) and the auction
replay that calibrated it (benchmarks/wakeng_bidding.py)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import cardenvs
from cardenvs.agents import make_agent
from benchmarks.wakeng_bidding import OldRulesAgent, auction, auctions, replay_score

# rank order 4 < 5 < ... < A < 2 < 3 (chains stop at A; 2s and 3s are the controls)
STRONG = "22223333AKKQQJJT"  # two bombs of controls: wins almost surely as the digger
MEDIUM = "4445566778899TJQ"  # no control, a long straight: the old quantile rule passed
WEAK = "4445667799TTJQQA"  # no control, scattered: among the weakest hands the deck deals


def _env():
    return importlib.import_module(f"cardenvs.{cardenvs.GAMES['wakeng']}").env(illegal="raise")


def _deal(env, hand, first=0):
    """Seat 0 holds ``hand``; the other 36 cards dealt alternately in rank order (the last
    four are the kitty); ``first`` bids first.  Returns seat 0's observation."""
    g = env.unwrapped.game
    fmt = lambda cards: g.deck.format(np.bincount(cards, minlength=16))  # noqa: E731
    rest = np.repeat(np.arange(16), g.deck.full_counts() - g.deck.parse(hand))
    a, b = rest[0::2], rest[1::2]
    env.reset(seed=0, options={"hands": [hand, fmt(a[:16]), fmt(b[:16])],
                               "kitty": fmt(np.concatenate([a[16:], b[16:]])),
                               "first_bidder": first, "leader": 0})
    return env.observe("player_0")


@pytest.mark.parametrize("hand, bid", [(STRONG, "bid 3"), (MEDIUM, "bid 3"), (WEAK, "pass")])
def test_rules_bids_3_or_passes_by_estimated_win_chance(hand, bid):
    env = _env()
    g = env.unwrapped.game
    agent = make_agent("rules", g)
    obs = _deal(env, hand)
    assert agent.reader.cards(obs["observation"], "hand").tolist() == g.deck.parse(hand).tolist()
    assert env.action_to_string(agent.act(obs, env.legal_actions())) == bid
    p = agent.part.win_probability(agent, g.deck.parse(hand))
    assert (p >= agent.part.BID_WIN_P[2]) == (bid == "bid 3")


def test_old_quantile_bidding_passed_the_medium_hand():
    # the baseline the calibration replaced: a bid only above the 55% strength quantile
    env = _env()
    old = OldRulesAgent(env.unwrapped.game)
    for hand, bid in ((STRONG, "bid 3"), (MEDIUM, "pass"), (WEAK, "pass")):
        obs = _deal(env, hand)
        assert env.action_to_string(old.act(obs, env.legal_actions())) == bid


def test_rules_bids_3_over_a_lower_bid():
    env = _env()
    g = env.unwrapped.game
    agent = make_agent("rules", g)
    _deal(env, MEDIUM, first=2)  # seat 2 speaks first, then seat 0
    assert env.agent_selection == "player_2"
    env.step(g.pass_id + 1)  # seat 2 bids 1
    assert env.agent_selection == "player_0"
    obs = env.observe("player_0")
    assert env.action_to_string(agent.act(obs, env.legal_actions())) == "bid 3"


def test_auction_replay_literal_and_batched():
    assert auction(np.array([0, 0, 0]), 1) == (1, 1)  # all pass: the first bidder digs at 1
    assert auction(np.array([3, 3, 3]), 2) == (2, 3)  # a 3 ends the auction
    assert auction(np.array([2, 1, 0]), 1) == (0, 2)  # 1 bids 1, 2 passes, 0 (last) bids 2
    assert auction(np.array([1, 2, 0]), 0) == (1, 2)
    assert auction(np.array([2, 2, 1]), 0) == (0, 2)  # an equal bid is not higher
    rng = np.random.default_rng(0)
    L = rng.integers(0, 4, size=(500, 3))
    F = rng.integers(0, 3, size=500)
    who, bid = auctions(L, F)
    assert [(int(a), int(b)) for a, b in zip(who, bid)] == [auction(l, int(f)) for l, f in zip(L, F)]


def test_replay_score_of_a_literal_deal():
    # one deal, seat 0 bids first; scores at bid 1 with each seat digging
    sc = np.zeros((1, 3, 3))
    sc[0, 0] = [8, -4, -4]  # seat 0 digs and wins
    sc[0, 1] = [2, -4, 2]  # seat 1 digs and loses
    sc[0, 2] = [-6, -6, 12]  # seat 2 digs and wins
    data = {"strength": np.array([[0.0, 1.0, 2.0]]), "first": np.array([0]), "scores": sc}
    inf = np.inf
    # the candidate always bids 3, the others never bid: the candidate always digs at 3
    s, _ = replay_score({**data, "strength": np.repeat(data["strength"], 2, 0),
                         "first": np.repeat(data["first"], 2), "scores": np.repeat(sc, 2, 0)},
                        (-inf, -inf, -inf), (inf, inf, inf))
    assert s == pytest.approx((3 * 8 + 3 * -4 + 3 * 12) / 3)
