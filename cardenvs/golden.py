"""Golden playthroughs: a seeded random game written out as person-readable text.

A golden file (``tests/golden/<game>_seed7.txt``) pins the whole behaviour of an environment
for one seed: the deal, the legal actions the random policy chose from, every action's id and
string, and every agent's total reward (mid-deal payments included).  ``tests/test_golden.py`` regenerates each file that exists and
compares exactly; ``python tests/golden/regenerate.py [game ...]`` rewrites them after an
intended change (then read the diff).

The policy is uniform over the legal actions (``action_mask``), drawn from
``numpy.random.default_rng(policy_seed)``, so the text depends only on the environment, the
seed and the policy seed.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Callable

import numpy as np

from .core.state import LAST_ROW, PHASE, P_PLAY

#: the seed of the committed golden files (``<game>_seed7.txt``)
GOLDEN_SEED = 7
#: safety bound on the number of agent turns of one playthrough
MAX_TURNS = 20_000


def _fmt_reward(r: float) -> str:
    return f"{int(r):+d}" if float(r).is_integer() else f"{r:+.6g}"


def playthrough(env_fn: Callable, seed: int, policy_seed: int) -> str:
    """Play one game with a seeded uniform-random legal policy and describe it as text.

    Args:
        env_fn: creates the environment; called as ``env_fn(render_mode="ansi")`` (a game
            module's ``env`` function, e.g. ``cardenvs.doudizhu4_v0.env``).
        seed: passed to ``env.reset(seed=seed)``.
        policy_seed: seeds the policy's ``numpy.random.Generator``.

    Returns:
        The text: a header, the initial render, one line per action (turn number, agent,
        number of legal actions, whether it was a free lead (no pass and no play to beat),
        action id and string), the final render and every agent's total reward (the sum of
        the rewards ``env.last()`` reports at its turns).
    """
    env = env_fn(render_mode="ansi")
    env.reset(seed=seed)
    rng = np.random.default_rng(policy_seed)
    game = env.unwrapped.game
    name = env.metadata.get("name", type(env).__name__)
    lines = [
        f"# golden playthrough of {name}: reset(seed={seed}), uniform random legal policy "
        f"(policy_seed={policy_seed})",
        f"# action space: Discrete({game.n_actions}); blocks: "
        + ", ".join(f"{k} [{a}, {b})" for k, (a, b) in game.blocks.items()),
        "",
        "## initial position",
        env.render().rstrip("\n"),
        "",
        "## actions (turn  agent  legal-count  [lead]  id  action)",
    ]
    pass_id = getattr(game, "pass_id", None)
    final: dict[str, float] = {}
    turn = 0
    for agent in env.agent_iter(MAX_TURNS):
        _, reward, term, trunc, _ = env.last()
        final[agent] = final.get(agent, 0.0) + float(reward)  # paid since its last turn
        if term or trunc:
            env.step(None)
            continue
        mask = env.observe(agent)["action_mask"]
        legal = np.flatnonzero(mask)
        if legal.size == 0:
            raise RuntimeError(f"{agent} has no legal action at turn {turn}")
        a = int(legal[rng.integers(legal.size)])
        st = env.unwrapped.state_vec  # a forced follow (must beat) is no lead
        follow = int(st[PHASE]) == P_PLAY and int(st[LAST_ROW]) >= 0
        lead = "lead" if pass_id is not None and not mask[pass_id] and not follow else "    "
        lines.append(
            f"{turn:4d}  {agent:<9} {legal.size:5d}  {lead}  {a:6d}  {env.unwrapped.action_to_string(a)}"
        )
        env.step(a)
        turn += 1
    else:
        if env.agents:
            raise RuntimeError(f"the game did not end within {MAX_TURNS} turns")
    lines += ["", "## final position", env.render().rstrip("\n"), "", "## rewards"]
    for a in env.possible_agents:
        lines.append(f"{a}: {_fmt_reward(final.get(a, 0.0))}")
    lines.append(f"sum: {_fmt_reward(sum(final.values()))}")
    env.close()
    return "\n".join(lines) + "\n"


def golden_dir() -> Path:
    """``tests/golden`` of the source checkout."""
    return Path(__file__).resolve().parent.parent / "tests" / "golden"


def golden_path(game: str) -> Path:
    """The golden file of a registered game."""
    return golden_dir() / f"{game}_seed{GOLDEN_SEED}.txt"


def golden_text(game: str) -> str:
    """Regenerate the golden text of a registered game (``cardenvs.GAMES`` name)."""
    from .api import GAMES

    if game not in GAMES:
        raise ValueError(f"unknown game {game!r}; known games: {', '.join(GAMES)}")
    module = importlib.import_module(f"cardenvs.{GAMES[game]}")
    return playthrough(module.env, GOLDEN_SEED, GOLDEN_SEED)
