"""Context features: inputs of a Q network that depend on the hand *and* the action.

A network of :mod:`agents.trained` sees the position as the observation vector and each
legal action as a feature row of its own (``game.action_features(id)``): the action's row
does not depend on the hand it is played from, so how a play changes what the hand can do
next (the turns the rest of the hand needs, the jokers the play uses) is a function the
network must learn from card planes.  A *context* computes such quantities per (position,
action) pair and hands them to the network as extra inputs of its first layer (the weight
file's ``w_ctx`` rows; ``meta["context"]`` names the context).  The network still makes every
decision: the context is an input, not a fallback.

Contexts (:data:`CONTEXTS`):

* ``"plan"`` (:class:`PlanContext`): the rule-based agent's hand planner
  (:mod:`agents.planner`) evaluated on the hand left after each card play.  Seven values
  per card play, all zero for the pass and every other kind of action:

  0. the change of the plan's cost (turns still needed to empty the hand) the play makes,
     clipped to [-4, 4] and divided by 4 (0 for a play that empties the hand);
  1. 1 when the play empties the hand;
  2. the wild jokers the play takes (stand-ins and jokers played as themselves), / 4;
  3. 1 when the play leaves a hand that can make no play (Lanxi Wulong's lone 3s, a lone
     joker in Da Niangniang);
  4. 1 when no combination of the cards not seen beats the play (a sure winner);
  5. the plan's cost of the hand before the play, clipped to [0, 20], / 20;
  6. the plan's cost of the hand left, clipped to [0, 20], / 20 (0 when it empties the hand).

  Any game with a rules part (``agents.rules.PARTS``) has it.
* ``"plan_picks"`` (:class:`PlanPicksContext`): ``"plan"``'s seven values and five more for
  picks that take a card out of the hand without playing it (Wakeng's burying): the plan's
  cost and the hand's strength before and after the pick.  A ``"plan"`` weight file starts a
  network of this context (``--init``) with the same scores.

Speed: ``ctx(obs, ids, owner)`` computes a whole batch in one pass (:meth:`PlanContext.columns`:
the hands and unseen cards read from every observation at once, the planner's costs and the
sure winners of every (position, play) pair in numba), equal bit for bit to
:meth:`PlanContext.position` position by position, the readable reference over the rules
agent's methods (the tests hold them equal); with the network, a batch of 600 Wakeng
positions costs about 0.1 ms a position where one position at a time costs about 0.3
(``benchmarks/agent_scoring.md``).
"""

from __future__ import annotations

from typing import Optional

import numpy as np
from numba import njit

from cardenvs.core.kernels import gen_legal
from cardenvs.core.wild import gen_legal_wild

from .base import as_game
from .planner import plan_cost, plan_cost_wild, plan_costs_after, plan_costs_after_wild

PLAN_DIM = 7


# -- the batched path: the planner's costs and the sure winners of many positions in one call --


@njit(cache=True)
def _costs(hands, starts, rows, tab_counts, pr, budget, now, after):
    """``now[p]``: plan cost of ``hands[p]``; ``after[a:b]`` (``a, b = starts[p], starts[p+1]``):
    the cost of the hand each row ``rows[a:b]`` leaves (:func:`agents.planner.plan_costs_after`)."""
    for p in range(hands.shape[0]):
        a, b = starts[p], starts[p + 1]
        if a < b:
            now[p] = plan_cost(hands[p], pr, budget)
            plan_costs_after(hands[p], rows[a:b], tab_counts, pr, budget, after[a:b])


@njit(cache=True)
def _costs_wild(hands, starts, rows, tab_counts, pr, budget, wild, wcfg, lone, now, after):
    """:func:`_costs` in a wild-joker game (the planner's ``_wild`` functions)."""
    for p in range(hands.shape[0]):
        a, b = starts[p], starts[p + 1]
        if a < b:
            now[p] = plan_cost_wild(hands[p], pr, budget, wild, wcfg, lone)
            plan_costs_after_wild(hands[p], rows[a:b], tab_counts, pr, budget, wild, wcfg, lone,
                                  after[a:b])


@njit(cache=True)
def _sure(others, starts, rows, tab, buf, out):
    """``out[i]``: 1 when no play of the unseen cards ``others[p]`` beats ``rows[i]`` (``i`` in
    position ``p``'s range of ``starts``)."""
    for p in range(others.shape[0]):
        for i in range(starts[p], starts[p + 1]):
            out[i] = 1.0 if gen_legal(others[p], rows[i], tab, buf) == 0 else 0.0


@njit(cache=True)
def _sure_wild(others, starts, rows, tab, wr, buf, out):
    """:func:`_sure` in a wild-joker game."""
    for p in range(others.shape[0]):
        for i in range(starts[p], starts[p + 1]):
            out[i] = 1.0 if gen_legal_wild(others[p], rows[i], tab, wr, buf) == 0 else 0.0


class PlanContext:
    """The ``"plan"`` context of ``game`` (module docstring): ``ctx(obs, ids, owner)`` ->
    ``float32 [m, 7]`` for ``m`` actions ``ids``, action ``j`` in the position ``obs[owner[j]]``.

    Deterministic (a function of the observation and the action only); pickles.
    """

    name = "plan"
    dim = PLAN_DIM

    def __init__(self, game):
        from .rules import RulesAgent

        game = as_game(game)
        reason = RulesAgent.unsupported(game)
        if reason is not None:
            raise ValueError(f"context 'plan' needs the rules agent's planner: {reason}")
        self.game = game
        self.agent = RulesAgent(game, seed=0)
        self.T = int(game.pass_id)

    def __getstate__(self) -> dict:
        return {"game": self.game}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["game"])

    def position(self, obs: np.ndarray, ids: np.ndarray) -> np.ndarray:
        """The features ``[len(ids), 7]`` of the actions ``ids`` in one position ``obs``."""
        ids = np.asarray(ids, np.int64)
        out = np.zeros((len(ids), PLAN_DIM), np.float32)
        sel = np.flatnonzero(ids < self.T)
        if sel.size:
            obs = np.asarray(obs, np.float32)
            part = self.agent.part
            out[sel] = self.features(part.hand(obs), part.view(obs).others, ids[sel])
        return out

    def features(self, hand: np.ndarray, others: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The features ``[len(rows), 7]`` of the card plays ``rows`` (play-table rows) from
        ``hand`` (rank counts) with ``others`` (rank counts of the cards not seen) unseen."""
        a = self.agent
        hand = np.ascontiguousarray(hand, np.int64)
        others = np.ascontiguousarray(others, np.int64)
        rows = np.asarray(rows, np.int64)
        out = np.zeros((len(rows), PLAN_DIM), np.float32)
        if len(rows) == 0:
            return out
        if rows.min() < 0 or rows.max() >= self.T:
            raise ValueError(f"card plays are play-table rows in [0, {self.T}); got "
                             f"{int(rows.min())}..{int(rows.max())}")
        if hand.shape != others.shape or hand.ndim != 1:
            raise ValueError(f"hand {hand.shape} and others {others.shape} must be rank counts "
                             f"of one length")
        now = a.cost(hand)
        after = a.costs_after(hand, rows)
        out_ = a.tab.ncards[rows] == int(hand.sum())
        sure = np.array([a.sure_winner(int(r), others) for r in rows], np.float32)
        dead = (after >= a.lone - 1e-9) & ~out_ if a.lone >= 0 else np.zeros(len(rows), np.bool_)
        delta = np.where(out_, 0.0, np.clip(after - now, -4.0, 4.0) / 4.0)
        out[:, 0] = delta
        out[:, 1] = out_
        out[:, 2] = a._deficits(hand, rows) / 4.0
        out[:, 3] = dead
        out[:, 4] = sure
        out[:, 5] = min(max(now, 0.0), 20.0) / 20.0
        out[:, 6] = np.where(out_, 0.0, np.clip(after, 0.0, 20.0) / 20.0)
        return out

    def columns(self, hands: np.ndarray, others: np.ndarray, starts: np.ndarray,
                rows: np.ndarray) -> np.ndarray:
        """:meth:`features` of many positions in one pass (the batched path of
        :meth:`__call__`): ``[len(rows), 7]`` for the card plays ``rows[starts[p]:starts[p+1]]``
        from ``hands[p]`` with ``others[p]`` unseen (``hands``, ``others``: ``int64 [n, 16]``;
        ``starts``: ``int64 [n + 1]``, non-decreasing, from 0 to ``len(rows)``).  The same
        numbers as :meth:`features` position by position (the tests hold them equal), the
        planner's costs and the sure winners computed in numba."""
        a = self.agent
        hands = np.ascontiguousarray(hands, np.int64)
        others = np.ascontiguousarray(others, np.int64)
        starts = np.ascontiguousarray(starts, np.int64)
        rows = np.ascontiguousarray(rows, np.int64)
        m = len(rows)
        out = np.zeros((m, PLAN_DIM), np.float32)
        if m == 0:
            return out
        now = np.zeros(len(hands), np.float64)
        after = np.empty(m, np.float64)
        sure = np.empty(m, np.float64)
        if a.wild.size:
            _costs_wild(hands, starts, rows, a.tab.counts, a.pr, a.budget, a.wild, a.wcfg,
                        a.lone, now, after)
            _sure_wild(others, starts, rows, a.tab, a.wr, a._buf, sure)
        else:
            _costs(hands, starts, rows, a.tab.counts, a.pr, a.budget, now, after)
            _sure(others, starts, rows, a.tab, a._buf, sure)
        pos = np.repeat(np.arange(len(hands)), np.diff(starts))
        out_ = a.tab.ncards[rows] == hands.sum(1)[pos]
        now = now[pos]
        if a.wild.size:
            nat = a.nat
            c = a.tab.counts[rows]
            need = np.maximum(c[:, :nat] - hands[pos, :nat], 0).sum(1)
            out[:, 2] = (need + c[:, a.wild].sum(1)) / 4.0
        out[:, 0] = np.where(out_, 0.0, np.clip(after - now, -4.0, 4.0) / 4.0)
        out[:, 1] = out_
        if a.lone >= 0:
            out[:, 3] = (after >= a.lone - 1e-9) & ~out_
        out[:, 4] = sure
        out[:, 5] = np.clip(now, 0.0, 20.0) / 20.0
        out[:, 6] = np.where(out_, 0.0, np.clip(after, 0.0, 20.0) / 20.0)
        return out

    def _plan_batch(self, obs: np.ndarray, ids: np.ndarray, owner: np.ndarray,
                    out: np.ndarray) -> None:
        """``out[:, :7]`` of :meth:`__call__` for every card play, in one :meth:`columns` pass."""
        sel = np.flatnonzero(ids < self.T)
        if not sel.size:
            return
        sel = sel[np.argsort(owner[sel], kind="stable")]
        pos, count = np.unique(owner[sel], return_counts=True)
        starts = np.zeros(len(pos) + 1, np.int64)
        starts[1:] = np.cumsum(count)
        reader = self.agent.reader
        seen = obs[pos]
        out[sel, :PLAN_DIM] = self.columns(reader.cards_batch(seen, "hand"),
                                           reader.cards_batch(seen, "others"), starts, ids[sel])

    def __call__(self, obs: np.ndarray, ids: np.ndarray, owner: np.ndarray) -> np.ndarray:
        """The features ``[m, dim]`` of the actions ``ids [m]``, action ``j`` in the position
        ``obs[owner[j]]`` (``obs [n, obs_dim]``): :meth:`position` of every position, computed
        in one batched pass (:meth:`columns`)."""
        obs = np.asarray(obs, np.float32)
        ids = np.asarray(ids, np.int64)
        owner = np.asarray(owner, np.int64)
        if obs.ndim != 2:
            raise ValueError(f"observations of shape {obs.shape}; expected (n, obs_dim)")
        if ids.shape != owner.shape or ids.ndim != 1:
            raise ValueError(f"ids {ids.shape} and owner {owner.shape} must be 1-d of one length")
        out = np.zeros((len(ids), self.dim), np.float32)
        if len(ids) == 0:
            return out
        if owner.min() < 0 or owner.max() >= len(obs):
            raise ValueError("owner out of range")
        if ids.min() < 0 or ids.max() >= self.game.n_actions:
            raise ValueError(f"action ids must lie in [0, {self.game.n_actions})")
        self._plan_batch(obs, ids, owner, out)
        self._more(obs, ids, owner, out)
        return out

    def _more(self, obs: np.ndarray, ids: np.ndarray, owner: np.ndarray, out: np.ndarray) -> None:
        """The columns after the first seven (a subclass's own; none here)."""


PICKS_DIM = PLAN_DIM + 5


class PlanPicksContext(PlanContext):
    """The ``"plan_picks"`` context (module docstring): ``"plan"``'s seven columns, then five
    for *picks*, actions that take one card out of the hand without playing it (Wakeng's
    burying: :meth:`agents.rules.GamePart.removed_ranks`), which ``"plan"`` leaves at zero:
    the same planner on the hand the pick leaves.

    7. the change of the plan's cost the pick makes, clipped to [-4, 4] and divided by 4;
    8. the plan's cost of the hand before the pick, clipped to [0, 20], / 20;
    9. the plan's cost of the hand left, clipped to [0, 20], / 20;
    10. the change of the hand's strength (the rule-based agent's measure for bidding and
        burying: controls and bombs less half the plan's turns), clipped to [-4, 4], / 4;
    11. 1 (the action is a pick).

    All five are zero for card plays, the pass and every other action; the first seven
    columns are ``"plan"``'s (:attr:`extends`), so a ``"plan"`` weight file starts a network of
    this context with its own scores (the new inputs' weights at zero)."""

    name = "plan_picks"
    dim = PICKS_DIM
    extends = "plan"

    def position(self, obs: np.ndarray, ids: np.ndarray) -> np.ndarray:
        ids = np.asarray(ids, np.int64)
        out = np.zeros((len(ids), PICKS_DIM), np.float32)
        out[:, :PLAN_DIM] = super().position(obs, ids)
        ranks = self.agent.part.removed_ranks(ids)
        sel = np.flatnonzero(ranks >= 0)
        if sel.size:
            hand = self.agent.part.hand(np.asarray(obs, np.float32))
            out[sel, PLAN_DIM:] = self.pick_features(hand, ranks[sel])
        return out

    def _more(self, obs: np.ndarray, ids: np.ndarray, owner: np.ndarray, out: np.ndarray) -> None:
        ranks = self.agent.part.removed_ranks(ids)
        sel = np.flatnonzero(ranks >= 0)
        for p in np.unique(owner[sel]):  # picks are few (Wakeng's burials): one position at a time
            grp = sel[owner[sel] == p]
            hand = self.agent.part.hand(obs[p])
            out[grp, PLAN_DIM:] = self.pick_features(hand, ranks[grp])

    def pick_features(self, hand: np.ndarray, ranks: np.ndarray) -> np.ndarray:
        """Columns 7-11 (``[len(ranks), 5]``) of picks taking one card of each rank slot in
        ``ranks`` out of ``hand`` (rank counts; each rank must be held)."""
        a = self.agent
        hand = np.ascontiguousarray(hand, np.int64)
        ranks = np.asarray(ranks, np.int64)
        if len(ranks) and (ranks.min() < 0 or ranks.max() >= len(hand)
                           or (hand[ranks] < 1).any()):
            raise ValueError(f"picks of rank slots {ranks.tolist()} from a hand that does not "
                             f"hold them all ({hand.tolist()})")
        out = np.zeros((len(ranks), PICKS_DIM - PLAN_DIM), np.float32)
        now, strength = a.cost(hand), a.strength(hand)
        for r in np.unique(ranks):
            h = hand.copy()
            h[r] -= 1
            after = a.cost(h)
            out[ranks == r] = (np.clip(after - now, -4.0, 4.0) / 4.0,
                               min(max(now, 0.0), 20.0) / 20.0,
                               min(max(after, 0.0), 20.0) / 20.0,
                               np.clip(a.strength(h) - strength, -4.0, 4.0) / 4.0, 1.0)
        return out


#: context name -> class (``cls(game)``, with ``dim`` and ``__call__(obs, ids, owner)``;
#: ``extends``: the context whose columns lead its own, when it has one)
CONTEXTS = {"plan": PlanContext, "plan_picks": PlanPicksContext}


def extends(name: Optional[str], base: Optional[str]) -> bool:
    """Whether the context ``name``'s leading columns are those of ``base`` (or the same)."""
    while name:
        if name == base:
            return True
        name = getattr(CONTEXTS.get(name), "extends", None)
    return False


def context_dim(name: Optional[str]) -> int:
    """The number of inputs the context ``name`` adds (0 for ``None``)."""
    if not name:
        return 0
    if name not in CONTEXTS:
        raise ValueError(f"unknown context {name!r}; known: {', '.join(sorted(CONTEXTS))}")
    return int(CONTEXTS[name].dim)


def make_context(name: str, game):
    """The context ``name`` (:data:`CONTEXTS`) of ``game``."""
    if name not in CONTEXTS:
        raise ValueError(f"unknown context {name!r}; known: {', '.join(sorted(CONTEXTS))}")
    return CONTEXTS[name](game)
