"""Baseline agents for every cardenvs game, behind one interface (:class:`cardenvs.agents.base.Agent`).

Imported as ``cardenvs.agents`` (this folder, ``agents/`` in the repository, is installed
inside ``cardenvs``); the bare name ``agents`` in a checkout is an alias of the same module
(:mod:`cardenvs.subpackages`).

``make_agent(name, game, seed=...)`` builds an agent by registry name:

============== =====================================================================================
name           agent
============== =====================================================================================
random         uniform over the legal actions (:class:`agents.random_agent.RandomAgent`)
rules          heuristic player from the rules pages (:class:`agents.rules.RulesAgent`)
rlcard         RLCard's rule model ``doudizhu-rule-v1`` in our 3-player Dou Dizhu with
               ``preset="rlcard"`` (:class:`agents.rlcard_agent.RLCardRuleAgent`; needs ``rlcard``)
trained        a network-only Q network shipped as small numpy weights
               (:class:`cardenvs.agents.trained.TrainedAgent`; the file each game's registry
               record names, ``GameSpec.trained_weights``): it makes every decision itself,
               no rules fallback, scoring each legal action with the hand planner's context
               inputs; trained by imitating the ``search`` agent (``train.distill``), in
               Dou Dizhu and Wakeng then fine-tuned (``train.finetune``).  ``trained:PATH``
               plays other weights (e.g. ``cardenvs train GAME``'s)
rollout        the numba rollout policy of :mod:`cardenvs.core.policy` as a player
               (:class:`agents.search.RolloutAgent`; reads ``info["state"]``)
rollout0       the former rollout policy (``policy="heuristic0"``), for comparison
               (:class:`agents.search.Rollout0Agent`)
search         PIMC: sampled worlds, candidates scored by batched rollouts of the rollout policy
               (:class:`agents.search.SearchAgent`; reads ``info["state"]``)
trained+search PIMC guided by a ``trained`` network (its best actions join the candidates;
               its move is kept unless search finds one clearly better;
               :class:`agents.exit.ExitSearchAgent`; ``trained+search:PATH`` for your weights)
============== =====================================================================================

A name may carry an argument after ``:``: ``make_agent("trained:runs/wakeng.npz", game)``
(or ``trained+search:...``) plays your own weights (``cardenvs train`` /
``train.dmc`` output) instead of the shipped ones; ``NAME:KEY=VALUE,KEY=VALUE`` passes
constructor keywords (``"search:rollouts=1200,max_candidates=12,epsilon=0.1"``; values are
read as int, float, ``inf``, ``true`` / ``false``, ``none`` or else a string;
:func:`agent_kwargs`), so the arena and ``cardenvs play`` can field any configuration.

Entries are ``"module:Class"`` strings imported on first use, so optional dependencies
(rlcard) load only when their agent is asked for; :func:`register_agent` adds more.
"""

from __future__ import annotations

if __name__ != "cardenvs.agents":  # the checkout's folder by its bare name: one module, one name
    from cardenvs.subpackages import alias_bare_name

    alias_bare_name(__name__)
else:  # numba cache files a 0.1.0 checkout wrote under the bare name would break loading
    from pathlib import Path as _Path

    from cardenvs.subpackages import forget_bare_name_caches

    forget_bare_name_caches(_Path(__file__).resolve().parent)

import importlib
import inspect
from typing import Any, Optional

from .base import Agent, as_game
from .random_agent import RandomAgent

#: registry name -> "module:Class" (a module starting with "." is one of this package's)
AGENTS: dict[str, str] = {
    "random": ".random_agent:RandomAgent",
    "rules": ".rules:RulesAgent",
    "rlcard": ".rlcard_agent:RLCardRuleAgent",
    "trained": ".trained:TrainedAgent",
    "rollout": ".search:RolloutAgent",
    "rollout0": ".search:Rollout0Agent",
    "search": ".search:SearchAgent",
    "trained+search": ".exit:ExitSearchAgent",
}

#: agents whose ``:ARGUMENT`` is the path of a weight file
WEIGHTS_ARGUMENT = ("trained", "trained+search")


def register_agent(name: str, target: str) -> None:
    """Register an agent class as ``"module:Class"`` under ``name``."""
    if not isinstance(name, str) or not isinstance(target, str) or ":" not in target:
        raise TypeError("register_agent(name, 'module:Class') takes two strings")
    AGENTS[name] = target


def split_spec(spec: str) -> tuple[str, Optional[str]]:
    """``"trained:runs/wakeng.npz"`` -> ``("trained", "runs/wakeng.npz")``; ``"rules"`` ->
    ``("rules", None)``.  An agent spec is a registry name, optionally followed by ``:`` and
    an argument: for ``trained`` the path of a weight file (``cardenvs train`` / ``train.dmc``
    output) instead of the shipped one."""
    if not isinstance(spec, str):
        raise TypeError(f"agent name must be a string, got {type(spec).__name__}")
    name, sep, arg = spec.partition(":")
    if sep and not arg:
        raise ValueError(f"agent {spec!r}: write NAME:ARGUMENT, e.g. trained:runs/wakeng.npz")
    return name, (arg if sep else None)


def agent_class(name: str) -> type:
    """The class registered under ``name`` (``ValueError`` for an unknown or unavailable one);
    an argument after ``:`` is ignored (:func:`split_spec`)."""
    name, _ = split_spec(name)
    if name not in AGENTS:
        raise ValueError(f"unknown agent {name!r}; known agents: {', '.join(AGENTS)}")
    module, _, cls = AGENTS[name].partition(":")
    try:
        mod = importlib.import_module(module, package=__name__)
    except ModuleNotFoundError as e:
        if e.name in (module, __name__ + module):
            raise ValueError(f"agent {name!r} is not available yet (no module {module})") from None
        raise ValueError(f"agent {name!r} needs the package {e.name!r}, which is not "
                         f"installed") from None
    return getattr(mod, cls)


def _value(text: str) -> Any:
    """A keyword's value as written in a spec: int, float, ``inf``, bool, ``none`` or str."""
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "none":
        return None
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def agent_kwargs(spec: str) -> dict:
    """The constructor keywords of a spec's argument: ``trained:PATH`` -> ``weights=PATH``;
    ``search:rollouts=1200,epsilon=0.1`` -> ``{"rollouts": 1200, "epsilon": 0.1}`` (checked
    against the class's constructor: an unknown keyword is a ``ValueError`` naming the ones
    it takes)."""
    import os

    name, arg = split_spec(spec)
    if arg is None:
        return {}
    if "=" not in arg:
        if name not in WEIGHTS_ARGUMENT:
            raise ValueError(f"agent {spec!r}: only 'trained' takes an argument without a "
                             f"keyword (trained:path/to/weights.npz; trained+search:PATH too); "
                             f"give keywords as {name}:KEY=VALUE,KEY=VALUE")
        kwargs = {"weights": arg}
    else:
        kwargs = {}
        for item in arg.split(","):
            key, sep, text = item.partition("=")
            key = key.strip()
            if not sep or not key.isidentifier():
                raise ValueError(f"agent {spec!r}: {item!r} is not KEY=VALUE")
            if key in kwargs:
                raise ValueError(f"agent {spec!r}: {key!r} given twice")
            kwargs[key] = _value(text)
        params = inspect.signature(agent_class(name).__init__).parameters
        if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
            takes = [k for k, p in params.items() if k not in ("self", "game", "seed")
                     and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]
            for key in kwargs:
                if key not in takes:
                    raise ValueError(f"agent {spec!r}: unknown keyword {key!r}; {name} takes "
                                     + (", ".join(takes) if takes else "no keywords"))
    w = kwargs.get("weights")
    if isinstance(w, str) and not os.path.isfile(w):
        raise ValueError(f"agent {spec!r}: no weight file {w!r}")
    return kwargs


def split_agents(text: str) -> list[str]:
    """``"search:rollouts=1200,epsilon=0.1,rules"`` -> ``["search:rollouts=1200,epsilon=0.1",
    "rules"]``: the comma-separated agent specs of a command line, where a ``KEY=VALUE``
    item (no agent name has ``=``) continues the spec before it."""
    out: list[str] = []
    for item in (s.strip() for s in text.split(",")):
        if not item:
            continue
        if "=" in item and ":" not in item.split("=", 1)[0]:
            if not out or ":" not in out[-1]:
                raise ValueError(f"{item!r} in {text!r}: a KEY=VALUE keyword follows an agent "
                                 f"spec NAME:KEY=VALUE")
            out[-1] += "," + item
        else:
            out.append(item)
    return out


def unsupported(name: str, game) -> Optional[str]:
    """Why agent ``name`` (a spec, :func:`split_spec`) cannot play ``game`` (``None`` when it
    can)."""
    kwargs = agent_kwargs(name)
    if not kwargs:
        return agent_class(name).unsupported(as_game(game))
    try:
        agent_class(name)(as_game(game), **kwargs)
    except ValueError as e:
        return str(e)
    return None


def make_agent(name: str, game, seed: Optional[int] = None) -> Agent:
    """An agent by registry name, bound to ``game``: a game's registry name (``"wakeng"``,
    default options) or a compiled Game (``env.unwrapped.game``); ``name`` may carry an
    argument (``"trained:path/to/weights.npz"``, :func:`split_spec`)."""
    return agent_class(name)(as_game(game), seed=seed, **agent_kwargs(name))


__all__ = ["AGENTS", "Agent", "RandomAgent", "agent_class", "agent_kwargs", "as_game",
           "make_agent", "register_agent", "split_agents", "split_spec", "unsupported"]
