"""The registry of games (``cardenvs.registry``) and the consumers that read it."""

from __future__ import annotations

import gymnasium
import pytest

import cardenvs
from cardenvs.agents.rules import PARTS
from cardenvs import arena, multiagent, replay
from cardenvs.registry import REGISTRY, GameSpec, register, resolve, spec


def test_every_record_describes_its_game():
    assert list(REGISTRY) == ["doudizhu", "doudizhu4", "wakeng", "niangniang", "wulong",
                              "paodekuai"]
    for name, s in REGISTRY.items():
        g = cardenvs.make_game(name)
        assert g.info.name == name and g.n_players == s.n_players
        assert g.info.rules_page == s.rules_page
        assert type(g).__name__ == s.game_class.split(":")[1]
        mod = getattr(cardenvs, s.env_module)
        assert mod.env().metadata["name"] == s.env_module
        assert s.gym_id in gymnasium.registry
        assert (s.roles is not None) == g.info.teams.startswith("1 vs")


def test_consumers_read_the_registry():
    assert cardenvs.GAMES == {n: s.env_module for n, s in REGISTRY.items()}
    assert cardenvs.GYM_IDS == {n: s.gym_id for n, s in REGISTRY.items()}
    assert set(PARTS) == set(REGISTRY)
    assert multiagent.DEFAULT_SLOTS == {n: s.default_slots for n, s in REGISTRY.items()}
    assert replay.PILE_NAMES["paodekuai"] == "unused" and "paodekuai" not in arena.ROLE_NAMES
    assert replay.ROLE_NAMES["niangniang"] == ("娘娘", "catcher")
    assert arena.ROLE_NAMES["niangniang"] == ("niangniang", "catcher")
    assert resolve(REGISTRY["wakeng"].zones[0][1]) == cardenvs.games.wakeng.BURIED


def test_bad_records_and_names():
    with pytest.raises(ValueError, match="already registered"):
        register(REGISTRY["wakeng"])
    with pytest.raises(TypeError):
        register({"name": "x"})
    with pytest.raises(ValueError, match="places"):
        GameSpec("x", "x_v0", "m:C", 3, "cardenvs/X-v0", "docs/rules/x.md", places="best")
    with pytest.raises(ValueError, match="unknown game 'nope'; known games: doudizhu"):
        spec("nope")
    with pytest.raises(ValueError, match="unknown game"):
        cardenvs.make_game("nope")
