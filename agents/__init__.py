"""Baseline agents for every cardenvs game (one interface: ``act(observation, legal) -> action``).

Only the uniform-random agent exists so far; the rule-based and trained agents are issue 8.
"""

from __future__ import annotations

from typing import Optional

import numpy as np


class RandomAgent:
    """Uniform over the legal action ids, from its own seeded generator.

    Args:
        seed: seed of the agent's ``numpy.random.Generator`` (``None``: fresh entropy).
    """

    name = "random"

    def __init__(self, seed: Optional[int] = None):
        self.rng = np.random.default_rng(seed)

    def act(self, observation: dict, legal: Optional[np.ndarray] = None) -> int:
        """Pick one of ``legal`` (or of the mask's set entries when ``legal`` is None)."""
        if legal is None:
            legal = np.flatnonzero(observation["action_mask"])
        if len(legal) == 0:
            raise ValueError("no legal action to choose from")
        return int(legal[self.rng.integers(len(legal))])
