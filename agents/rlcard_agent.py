"""RLCard's rule-based Dou Dizhu model as an opponent in our 3-player Dou Dizhu.

With ``preset="rlcard"`` our play table holds exactly RLCard's action vocabulary (one row per
card string, one reading each), so an RLCard action string maps to one of our action ids and
back.  :class:`RLCardRuleAgent` builds, from our observation, the raw state RLCard's
``DouDizhuRuleAgentV1`` (the agent of ``rlcard.models.load('doudizhu-rule-v1')``) reads, and
asks it for an action:

* ``current_hand``: the hand as RLCard writes it (sorted rank characters, ``B``/``R`` jokers);
* ``self`` and ``landlord``: relative seats (0 = this seat), which is all the model compares;
* ``trace``: the play-phase actions as ``(seat, cards or "pass")``, oldest first, rebuilt from
  the observation's ``recent`` field (the last 6 actions; the model looks at the last two);
* ``actions``: the legal actions as card strings, in the order RLCard's own generator lists
  them when following (``pass`` first, then per type and rising weight, as in RLCard's
  ``type_card.json``), because the model takes the first of equally ranked plays.

The model picks at random in one case (a landlord, or a farmer against the landlord, with no
play of the required type); that draw comes from this agent's own seeded generator, not from
NumPy's global one.  RLCard's game has no auction (seat 0 is always the landlord), so with
``auction="bid"`` this agent bids with the rules agent's hand-strength rule (``bidder``); the
arena plays it with ``auction="fixed"`` by default.  ``rlcard`` is imported only when the agent
is made (it is in the ``anchors`` extra).
"""

from __future__ import annotations

from contextlib import contextmanager
from functools import lru_cache
from typing import Optional

import numpy as np

from .base import Agent, ObsReader, as_game, legal_ids, obs_vector


@lru_cache(maxsize=1)
def _rlcard_data():
    """RLCard's model class, card types and the follow order of each card string per type."""
    from rlcard.games.doudizhu.utils import CARD_TYPE, TYPE_CARD
    from rlcard.models import doudizhu_rule_models

    position: dict[str, dict[str, int]] = {}
    for ctype, by_weight in TYPE_CARD.items():
        pos: dict[str, int] = {}
        i = 0
        for _, cards_list in by_weight.items():
            for cards in cards_list:
                pos.setdefault(cards, i)
                i += 1
        position[ctype] = pos
    return doudizhu_rule_models, CARD_TYPE[0], TYPE_CARD, position


class _NumpyWithGenerator:
    """Stands in for the ``numpy`` module inside RLCard's rule model: ``np.random`` is our
    seeded generator (the model calls only ``np.random.choice``)."""

    def __init__(self, real, rng):
        self._real = real
        self.random = rng

    def __getattr__(self, name):
        return getattr(self._real, name)


@contextmanager
def _seeded(module, rng):
    real = module.np
    module.np = _NumpyWithGenerator(real, rng)
    try:
        yield
    finally:
        module.np = real


class RLCardRuleAgent(Agent):
    """RLCard's ``doudizhu-rule-v1`` playing a seat of our ``doudizhu`` with ``preset="rlcard"``.

    Args:
        game: the compiled game (3-player Dou Dizhu with ``preset="rlcard"``).
        seed: seed of the generator behind the model's random choices.
        bidder: the agent that bids for it when the game has an auction (default: the rules
            agent; RLCard's own game has none).
    """

    name = "rlcard"
    required_options = {"preset": "rlcard"}
    #: RLCard's game has no auction: seat 0 is the landlord at bid 1
    default_options = {"auction": "fixed"}

    def __init__(self, game, seed: Optional[int] = None, bidder: Optional[Agent] = None):
        game = as_game(game)
        super().__init__(game, seed)
        module, self._card_type, _, self._position = _rlcard_data()
        self._module = module
        self.model = module.DouDizhuRuleAgentV1()
        self.reader = ObsReader(game)
        if bidder is None:
            from .rules import RulesAgent

            bidder = RulesAgent(game)
        self.bidder = bidder
        self.T = game.pass_id
        self.deck = game.deck
        self.n_ranks = game.deck.n_ranks
        self._E = self.reader.n_ranks * self.reader.depth + 1 + game.n_players

    @classmethod
    def unsupported(cls, game) -> Optional[str]:
        game = as_game(game)
        if game.info.name != "doudizhu":
            return "RLCard's rule model plays 3-player Dou Dizhu only"
        if game.options.get("preset") != "rlcard":
            return ("it needs preset='rlcard' (our action table is then RLCard's vocabulary); "
                    f"this game has preset={game.options.get('preset')!r}")
        try:
            import rlcard  # noqa: F401
        except ImportError:
            return "it needs the rlcard package (pip install 'cardenvs[anchors]')"
        return None

    # -- the raw state RLCard's model reads -----------------------------------------------------------
    def _cards(self, counts) -> str:
        return self.deck.format(counts)

    def trace(self, obs: np.ndarray) -> list[tuple[int, str]]:
        """Recent play-phase actions, oldest first, as ``(relative seat, cards or "pass")``."""
        rec = self.reader.field(obs, "recent")
        R, D = self.reader.n_ranks, self.reader.depth
        C = R * D
        out = []
        for j in range(len(rec) // self._E):
            e = rec[j * self._E:(j + 1) * self._E]
            seat = np.flatnonzero(e[C + 1:] > 0.5)
            if seat.size == 0:
                break
            if e[C] > 0.5:
                out.append((int(seat[0]), "pass"))
            else:
                counts = np.zeros(16, np.int64)
                counts[:R] = (e[:C].reshape(R, D) > 0.5).sum(1)
                out.append((int(seat[0]), self._cards(counts)))
        return out[::-1]

    def raw_state(self, obs: np.ndarray, legal: np.ndarray) -> dict:
        """The ``raw_obs`` dict the model reads (relative seats: ``self`` is 0)."""
        r = self.reader
        counts = self.game.tab.counts
        strings = ["pass" if a == self.T else self._cards(counts[a]) for a in legal]
        trace = self.trace(obs)
        beat = r.one_hot(obs, "to_beat_seat")
        if beat >= 0:
            target = self._cards(r.cards(obs, "to_beat"))
            strings = self._follow_order(target, strings)
        sizes = np.rint(r.field(obs, "hand_sizes") * self.game.max_hand).astype(int)
        return {
            "current_hand": self._cards(r.cards(obs, "hand")),
            "landlord": r.one_hot(obs, "landlord"),
            "self": 0,
            "trace": trace,
            "actions": strings,
            "num_cards_left": sizes.tolist(),
        }

    def _follow_order(self, target: str, strings: list[str]) -> list[str]:
        """``strings`` in the order RLCard's generator lists plays that beat ``target``."""
        types: dict[str, int] = {}
        for ctype, weight in self._card_type[target]:
            types.setdefault(ctype, int(weight))
        types.setdefault("rocket", -1)
        types.setdefault("bomb", -1)
        order = list(types)

        def key(s):
            if s == "pass":
                return (-1, 0)
            best = (len(order), 0)
            for ctype, weight in self._card_type.get(s, ()):
                if ctype in types and int(weight) > types[ctype]:
                    best = min(best, (order.index(ctype), self._position[ctype].get(s, 0)))
            return best

        return sorted(strings, key=key)

    # -- acting --------------------------------------------------------------------------------------
    def act(self, observation, legal=None, info=None) -> int:
        legal = legal_ids(observation, legal)
        if (legal > self.T).any():  # the auction: RLCard's model has none
            return int(self.bidder.act(observation, legal))
        if len(legal) == 1:
            return int(legal[0])
        obs = obs_vector(observation)
        state = self.raw_state(obs, legal)
        with _seeded(self._module, self.rng):
            action = str(self.model.step({"raw_obs": state}))
        return self.to_action(action, legal)

    def to_action(self, action: str, legal: np.ndarray) -> int:
        """Our action id of an RLCard action string (``ValueError`` when it is not legal)."""
        if action == "pass":
            a = self.T
        else:
            rows = self.game.table.rows_of_cards(self.deck.parse(action))
            if len(rows) != 1:
                raise ValueError(f"RLCard action {action!r} is not one row of our rlcard table")
            a = rows[0]
        if a not in legal:
            raise ValueError(f"RLCard's model chose {action!r}, which is not legal here")
        return int(a)
