"""``benchmarks.decision_split``: each variant plays as ``rules`` except for its one kind of
decision, made by the network."""

from __future__ import annotations

import os

import numpy as np
import pytest

import cardenvs
from cardenvs.agents.rules import RulesAgent
from cardenvs.agents.trained import WEIGHTS_DIR, TrainedAgent
from benchmarks import decision_split
from helpers import random_positions


def test_variants_hand_one_kind_of_decision_to_the_network(tmp_path):
    """Each variant plays rules' move unless the network scores one of the variant's actions
    higher (computed here from the network's scores and the variant's definition)."""
    g = cardenvs.make_game("niangniang")  # card plays, passes, exchanges and joker picks
    src = os.path.join(WEIGHTS_DIR, "niangniang_network.npz")
    net, rules = TrainedAgent(g, weights=src), RulesAgent(g)
    variants = {name: TrainedAgent(g, weights=decision_split.write_variant(
        src, str(tmp_path / f"{name}.npz"), margins))
        for name, margins in decision_split.VARIANTS.items()}
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


def test_write_variant_refuses_a_prior_file(tmp_path):
    src = str(tmp_path / "prior.npz")  # rules + a learned override
    decision_split.write_variant(os.path.join(WEIGHTS_DIR, "wulong_network.npz"), src,
                                 decision_split.VARIANTS["plays"])
    with pytest.raises(ValueError, match="prior"):
        decision_split.write_variant(src, str(tmp_path / "x.npz"), decision_split.VARIANTS["plays"])
    assert not (tmp_path / "x.npz").exists()
