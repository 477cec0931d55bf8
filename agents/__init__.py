"""Baseline agents for every cardenvs game, behind one interface (:class:`agents.base.Agent`).

``make_agent(name, game, seed=...)`` builds an agent by registry name:

======== =====================================================================================
name     agent
======== =====================================================================================
random   uniform over the legal actions (:class:`agents.random_agent.RandomAgent`)
rules    heuristic player from the rules pages (:class:`agents.rules.RulesAgent`)
rlcard   RLCard's rule model ``doudizhu-rule-v1`` in our 3-player Dou Dizhu with
         ``preset="rlcard"`` (:class:`agents.rlcard_agent.RLCardRuleAgent`; needs ``rlcard``)
trained  a Q network shipped as small weights (``agents.trained``): per game either a
         deep Monte-Carlo self-play policy (``train.dmc``) or the ``rules`` agent with the
         network overriding its moves where it scores one clearly better (``train.improve``)
rollout  the numba rollout policy of :mod:`cardenvs.core.policy` as a player
         (:class:`agents.search.RolloutAgent`; reads ``info["state"]``)
search   PIMC: sampled worlds, candidates scored by batched rollouts of the rollout policy
         (:class:`agents.search.SearchAgent`; reads ``info["state"]``)
======== =====================================================================================

Entries are ``"module:Class"`` strings imported on first use, so optional dependencies
(rlcard) load only when their agent is asked for; :func:`register_agent` adds more.
"""

from __future__ import annotations

import importlib
from typing import Optional

from .base import Agent
from .random_agent import RandomAgent

#: registry name -> "module:Class"
AGENTS: dict[str, str] = {
    "random": "agents.random_agent:RandomAgent",
    "rules": "agents.rules:RulesAgent",
    "rlcard": "agents.rlcard_agent:RLCardRuleAgent",
    "trained": "agents.trained:TrainedAgent",
    "rollout": "agents.search:RolloutAgent",
    "search": "agents.search:SearchAgent",
}


def register_agent(name: str, target: str) -> None:
    """Register an agent class as ``"module:Class"`` under ``name``."""
    if not isinstance(name, str) or not isinstance(target, str) or ":" not in target:
        raise TypeError("register_agent(name, 'module:Class') takes two strings")
    AGENTS[name] = target


def agent_class(name: str) -> type:
    """The class registered under ``name`` (``ValueError`` for an unknown or unavailable one)."""
    if not isinstance(name, str):
        raise TypeError(f"agent name must be a string, got {type(name).__name__}")
    if name not in AGENTS:
        raise ValueError(f"unknown agent {name!r}; known agents: {', '.join(AGENTS)}")
    module, _, cls = AGENTS[name].partition(":")
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name == module:
            raise ValueError(f"agent {name!r} is not available yet (no module {module})") from None
        raise ValueError(f"agent {name!r} needs the package {e.name!r}, which is not "
                         f"installed") from None
    return getattr(mod, cls)


def unsupported(name: str, game) -> Optional[str]:
    """Why agent ``name`` cannot play ``game`` (``None`` when it can)."""
    return agent_class(name).unsupported(game)


def make_agent(name: str, game, seed: Optional[int] = None) -> Agent:
    """An agent by registry name, bound to ``game`` (``env.unwrapped.game``)."""
    return agent_class(name)(game, seed=seed)


__all__ = ["AGENTS", "Agent", "RandomAgent", "agent_class", "make_agent", "register_agent",
           "unsupported"]
