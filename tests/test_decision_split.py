"""``benchmarks.decision_split``: each variant plays as ``rules`` except for its one kind of
decision, made by the network."""

from __future__ import annotations

import os

import numpy as np
import pytest

import cardenvs
from cardenvs.agents import make_agent
from cardenvs.agents.rules import RulesAgent
from cardenvs.agents.trained import WEIGHTS_DIR, TrainedAgent
from benchmarks import decision_split
from helpers import random_positions


def test_variants_hand_one_kind_of_decision_to_the_network():
    """Each variant plays rules' move unless the network scores one of the variant's actions
    higher (computed here from the network's scores and the variant's definition)."""
    g = cardenvs.make_game("niangniang")  # card plays, passes, exchanges and joker picks
    src = os.path.join(WEIGHTS_DIR, "niangniang_network.npz")
    net, rules = TrainedAgent(g, weights=src), RulesAgent(g)
    variants = {kind: make_agent(f"split:weights={src},kind={kind}", g)
                for kind in decision_split.VARIANTS}
    P = g.pass_id
    overrides = dict.fromkeys(variants, 0)
    for obs, legal in random_positions(g, 6, seed=3):
        ob = {"observation": obs}
        r = rules.act(ob, legal.copy())
        q = net.scores(obs, legal)
        other = (legal > P) | ~(legal < P).any()  # not a card play or the pass beside them
        allowed = {"plays": ~other & (r != P), "passes": ~other & (r == P), "other": other}
        for name, agent in variants.items():
            expect = r
            if allowed[name].any():
                b = int(np.argmax(np.where(allowed[name], q, -np.inf)))
                if q[b] > q[int(np.flatnonzero(legal == r)[0])]:
                    expect = int(legal[b])
            assert agent.act(ob, legal.copy()) == expect, name
            overrides[name] += expect != r
    assert min(overrides.values()) > 0, overrides  # every variant overrode rules somewhere


def test_split_kinds_cover_every_action_once():
    g = cardenvs.make_game("wulong")  # 报牌 offered beside the card plays
    P = g.pass_id
    ids = np.array([0, 5, P, 7, P + 3, P + 4])
    sizes = np.array([3, 1, 2])  # a follow, a lone card play, a position of other actions
    kinds = decision_split.split_kinds(ids, sizes, P, np.array([P, 7, P + 3]))
    assert kinds["passes"].tolist() == [True, True, True, False, False, False]
    assert kinds["plays"].tolist() == [False, False, False, True, False, False]
    assert kinds["other"].tolist() == [False, False, False, False, True, True]


def test_bad_kind_is_refused():
    with pytest.raises(ValueError, match="kind must be one of plays, passes, other"):
        make_agent("split:kind=bids", "wakeng")
