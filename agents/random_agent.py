"""The uniform-random baseline."""

from __future__ import annotations

from typing import Optional

import numpy as np

from .base import Agent, as_game, legal_ids


class RandomAgent(Agent):
    """Uniform over the legal action ids, from its own seeded ``numpy.random.Generator``.

    Args:
        game: the compiled game (optional: the random agent needs only the legal ids).
        seed: seed of the agent's generator (``None``: fresh entropy).
    """

    name = "random"

    def __init__(self, game=None, seed: Optional[int] = None):
        self.game = None if game is None else as_game(game)
        self.rng = np.random.default_rng(seed)

    def act(self, observation: dict, legal: Optional[np.ndarray] = None,
            info: Optional[dict] = None) -> int:
        """Pick one of ``legal`` (or of the mask's set entries when ``legal`` is None)."""
        legal = legal_ids(observation, legal)
        return int(legal[self.rng.integers(len(legal))])

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        masks = np.asarray(masks)
        if masks.ndim != 2:
            raise ValueError("act_batch needs masks of shape (B, N)")
        n_legal = masks.sum(1)
        if (n_legal == 0).any():
            raise ValueError("no legal action to choose from in some row of the batch")
        pick = (self.rng.random(len(masks)) * n_legal).astype(np.int64)
        cum = np.cumsum(masks > 0, axis=1)
        return np.argmax(cum > pick[:, None], axis=1).astype(np.int64)

    def __repr__(self) -> str:
        return "RandomAgent()"
