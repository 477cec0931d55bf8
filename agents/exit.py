"""The ``trained+search`` agent: PIMC search (:class:`agents.search.SearchAgent`) guided by a
Q network in the :mod:`agents.trained` weight format.

The network guides the search in two ways:

* **candidates**: besides the rollout policy's best ``max_candidates`` actions (and pass,
  报牌), the network's ``net_candidates`` best-scored legal actions are searched;
* **prior**: the network's move (the :class:`agents.trained.TrainedAgent` of the weights) is
  kept unless a candidate's mean rollout return beats it, world by world, by more than
  ``margin`` plus ``z`` standard errors (:meth:`agents.search.SearchAgent._decide`);
  ``margin=None`` instead plays the best mean return among the candidates (the network then
  only widens the search).

Weights: ``trained+search:PATH`` (e.g. the ``GAME.npz`` of ``cardenvs train GAME``), by
default the ``trained`` agent's shipped weights (:func:`agents.trained.default_weights_path`).
With ``record=True`` each searched decision leaves its candidates and their mean returns in
:attr:`ExitSearchAgent.last` (policy targets for a learner).
"""

from __future__ import annotations

import os
from typing import Optional

import numpy as np

from cardenvs.core.state import CUR

from .base import check_keyword
from .search import DEFAULT_MARGIN, DEFAULT_Z, MAX_CANDIDATES, SearchAgent
from .trained import QNetwork, TrainedAgent, _mismatch, default_weights_path

#: network-ranked candidates added to the rollout policy's by default
DEFAULT_NET_CANDIDATES = 3


class ExitSearchAgent(SearchAgent):
    """PIMC guided by a Q network (module docstring).

    Args:
        game: the compiled game.
        seed: seed of the search's generator.
        weights: the ``.npz`` weight file (default: the shipped weights of the game).
        net_candidates: network-ranked actions added to the candidates.
        margin: how much a candidate must gain over the network's move (``None``: no prior,
            the best mean return wins).
        record: keep each searched decision's ``(candidates, mean returns)`` in
            :attr:`last` (``None`` after a decision that was not searched).
        **search: the other :class:`~agents.search.SearchAgent` settings (``rollouts``,
            ``ms``, ``max_candidates``, ``policy``, ``epsilon``, ``z``).
    """

    name = "trained+search"
    _TRANSIENT = SearchAgent._TRANSIENT + ("_net_agent",)

    def __init__(self, game, seed: Optional[int] = None, weights: Optional[str] = None, *,
                 net_candidates: int = DEFAULT_NET_CANDIDATES,
                 margin: Optional[float] = DEFAULT_MARGIN, record: bool = False, **search):
        from .base import as_game

        game = as_game(game)
        if "prior" in search:
            raise TypeError("trained+search takes its prior from the weights, not prior=")
        check_keyword(self.name, "net_candidates", net_candidates, low=0, high=MAX_CANDIDATES,
                      integer=True)
        check_keyword(self.name, "margin", margin, low=0, high=float("inf"), optional=True)
        if not isinstance(record, (bool, np.bool_)):
            raise TypeError(f"record must be True or False, got {type(record).__name__}")
        self.weights = weights if weights is not None else default_weights_path(game.info.name)
        self.net_candidates = int(net_candidates)
        self.keep_prior = margin is not None
        self.record = bool(record)
        self.last: Optional[tuple[np.ndarray, np.ndarray]] = None
        search.setdefault("z", DEFAULT_Z)  # its own defaults, not search's per-game ones
        super().__init__(game, seed, prior=None, margin=0.0 if margin is None else margin,
                         **search)

    @classmethod
    def unsupported(cls, game) -> Optional[str]:
        return TrainedAgent.unsupported(game)

    def _setup(self) -> None:
        super()._setup()
        self._net_agent = TrainedAgent(self.game, seed=self._seed, weights=self.weights)

    def prior_agent(self):
        """The network's agent (the prior of ``own="prior"``)."""
        return self._net_agent

    def set_weights(self, path: str) -> None:
        """Play with another weight file from now on (e.g. a learner's newest network)."""
        net = QNetwork(path)
        reason = _mismatch(net, self.game)
        if reason is not None:
            raise ValueError(f"trained+search cannot use {path!r}: {reason}")
        self.weights = path
        self._net_agent = TrainedAgent(self.game, seed=self._seed, weights=path)
        if self.own == "prior":
            self._own = None  # the new network plays the rollouts' own moves too

    def _position(self, state: np.ndarray, legal: np.ndarray) -> dict:
        g = self.game
        g.encode(state, int(state[CUR]), self._obs)
        mask = np.zeros(g.n_actions, np.int8)
        mask[legal] = 1
        return {"observation": self._obs.copy(), "action_mask": mask}

    def prior_action(self, state: np.ndarray, legal: np.ndarray) -> Optional[int]:
        """The network's move (kept unless search finds one clearly better)."""
        if not self.keep_prior:
            return None
        return int(self._net_agent.act(self._position(state, legal), legal.copy()))

    def act_state(self, state: np.ndarray, legal: Optional[np.ndarray] = None) -> int:
        self.last = None  # set again only if this decision is searched
        return super().act_state(state, legal)

    def candidates(self, state: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """The rollout policy's candidates plus the network's best ``net_candidates``."""
        cands = super().candidates(state, legal)
        if self.net_candidates == 0:
            return cands
        obs = self._position(state, legal)["observation"]
        q = self._net_agent.scores(obs, legal)
        top = legal[np.argsort(-q, kind="stable")[:self.net_candidates]]
        extra = top[~np.isin(top, cands)]
        return np.concatenate([cands, extra]).astype(np.int64) if extra.size else cands

    def _decide(self, V: np.ndarray, cands: np.ndarray, base: Optional[int]) -> int:
        if self.record:
            self.last = (cands.copy(), V.mean(0))
        return super()._decide(V, cands, base)

    def __repr__(self) -> str:
        return f"ExitSearchAgent({self.game.info.name}, {os.path.basename(self.weights)})"


__all__ = ["ExitSearchAgent", "DEFAULT_NET_CANDIDATES"]
