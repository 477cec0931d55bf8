"""Search agents: ``rollout`` (the numba rollout policy as a player) and ``search`` (PIMC).

Both agents decide from the **game state** of the position, not from the observation
vector alone: ``act(observation, legal, info)`` reads ``info["state"]`` (the int64 state
vector, ``env.unwrapped.state_vec``), as OpenSpiel's bots receive the ``State``.  In a compact
environment (``actions="compact"``) they decide each compact decision themselves when
``info["compact"]`` holds the partial play (``None`` at a play's first decision;
:func:`cardenvs.core.partial.decision_info` builds such an ``info``): they choose among the
whole plays that extend the partial play and return its next part, a compact id
(:meth:`_StatefulAgent.act_compact`).  They use only what the seat to move may know:

* ``rollout`` (:class:`RolloutAgent`) applies :mod:`cardenvs.core.policy` to the state: its
  own hand, every seat's hand size, the play to beat and its owner, the solo seat;
* ``search`` (:class:`SearchAgent`) samples worlds with
  :func:`cardenvs.determinize_batch` (every card the seat has not seen redealt uniformly
  among the places it may be), so nothing hidden survives into its reasoning.

**PIMC** (perfect-information Monte Carlo).  Per decision: the legal actions are ranked by
the rollout policy's own scores and the best ``max_candidates`` are kept (plus every
non-card-play alternative: pass, 报牌); ``worlds`` states are sampled from the seat's
information; each candidate is applied in each world and the game is played to its end by
the rollout policy (one batched numba call over ``worlds x candidates`` games,
:meth:`cardenvs.vector.VectorGame.rollout`); the candidate with the highest mean return to
the mover wins (ties: the policy's order).  A forced move (one legal action) costs nothing.
With ``own`` (e.g. ``"prior"``) the mover's own later moves in the rollouts are an agent's
(the network), decided for all the rollouts of a decision in one batched call per move.

With a ``prior`` (default the shipped ``trained`` agent, where it plays the game) the prior's
move is one of the candidates and is kept unless another beats it, world by world, by more
than ``margin`` plus ``z`` standard errors.  Auction bids are the prior's (``bids=True``
searches them too); ``margin=inf`` plays as the prior without spending a rollout
(:data:`GAME_SETTINGS` holds the defaults of ``margin`` and ``z`` where they differ from
:data:`DEFAULT_MARGIN` and :data:`DEFAULT_Z`, by game and preset).

Budget: ``rollouts`` per decision (default :data:`DEFAULT_ROLLOUTS`, at most
:data:`MAX_ROLLOUTS`, split as ``worlds = rollouts // candidates``, at least
:data:`MIN_WORLDS`), or ``ms`` per decision (up to :data:`MAX_MS`; the number of worlds is then
sized from the measured cost of the previous decisions, capped as ``rollouts`` are; not
reproducible run to run).  Deterministic under its seed with the rollout budget.  A
:attr:`SearchAgent.deadline` bounds a decision's time (the web app sets one per move).  Every
numeric keyword is checked when the agent is made (:func:`agents.base.check_keyword`: a
``ValueError`` naming the keyword and its range).

A ``prior`` given by name with an argument (``prior=trained:PATH``) or by another name than
the default must play the game: a missing, damaged or foreign weight file is a
``ValueError`` naming the file and what is wrong.  Only the default prior, ``trained``, is
left out where no trained weights play the game.
"""

from __future__ import annotations

import time
from typing import Optional

import numpy as np

from cardenvs.core.compact import codec_of
from cardenvs.core.infostate import determinize_batch
from cardenvs.core.partial import restore as restore_partial
from cardenvs.core.rollout import apply_candidates
from cardenvs.core.specialize import run as run_specialized
from cardenvs.core.policy import (K_BID, PP_KINDS, PP_SOLO, POLICIES, policy_code,
                                  policy_params, score_policy)
from cardenvs.core.state import CUR, LANDLORD, PHASE, P_DONE

from .base import Agent, as_game, check_keyword

#: rollouts per decision by default (about 100 ms or less per decision on one core)
DEFAULT_ROLLOUTS = 400
#: candidate actions kept per decision by default
DEFAULT_CANDIDATES = 6
#: the most rollouts one decision may run (``rollouts``; with ``ms``, the worlds are capped
#: alike): every rollout's start state is held at once
MAX_ROLLOUTS = 50_000
#: the longest time budget per decision, in milliseconds (``ms``): ten minutes
MAX_MS = 600_000.0
#: the most candidates kept per decision (``max_candidates``)
MAX_CANDIDATES = 10_000
#: the largest ``z`` (standard errors of the gain over the prior's move)
MAX_Z = 100.0
#: fewest sampled worlds per decision
MIN_WORLDS = 8
#: worlds per chunk of the rollouts of a decision with a deadline (:attr:`SearchAgent.deadline`)
DEADLINE_WORLDS = 8
#: the agent whose move is kept unless a candidate's mean rollout return beats it by more
#: than ``margin`` (``None``: the best candidate always)
DEFAULT_PRIOR = "trained"
DEFAULT_MARGIN = 0.25
#: ... and by more than this many standard errors of the world-by-world gain
DEFAULT_Z = 2.0
#: defaults of ``margin`` and ``z`` where they differ from :data:`DEFAULT_MARGIN` and
#: :data:`DEFAULT_Z`, by ``(game name, preset)`` (the ``preset`` option, ``None`` for the
#: rules pages' own game): :func:`default_settings`.  3-player Dou Dizhu under
#: ``preset="rlcard"``, where RLCard's rule model plays, trusts its rollouts more: against
#: that model (the same 100 deals at seed 0, paired by deal) margin 0 / z 0.5 scored +0.47
#: [-0.07, +1.00] per deal more than margin 0.25 / z 2 (at 1,600 rollouts; margin 0 / z 0.5
#: scored the same at 400 and 1,600) and +0.55 [+0.09, +1.00] more than margin 0 / z 0; with
#: the network prior of 2026-12-03 (context inputs; seed 0, 1,000 deals each) margin 0 /
#: z 0.5 wins 91.7% / 90.3% of deals against it (rollouts=1200, max_candidates=12,
#: epsilon=0.1, opponents="greedy", win_loss) where 0.25 / 2 wins 87.9% / 85.6%.  Under the
#: rules pages' own Dou Dizhu the strong prior is worth keeping more often: against the prior
#: itself 0.25 / 2 gains +0.68 [+0.46, +0.90] a deal where 0 / 0.5 gains +0.17 [-0.08,
#: +0.42], and against ``rules`` +2.60 [+2.31, +2.89] where 0 / 0.5 gains +2.48 [+2.22,
#: +2.75] (until 2026-12-04 0 / 0.5 was the game's default under every preset).
#: 4-player Dou Dizhu had ``margin=inf`` while the former rollout policy's lone landlord lost
#: to ``rules`` farmers; it searches now.
GAME_SETTINGS: dict[tuple[str, Optional[str]], dict[str, float]] = {
    ("doudizhu", "rlcard"): {"margin": 0.0, "z": 0.5},
}


def default_settings(game) -> dict[str, float]:
    """``margin`` and ``z`` of ``search`` by default in ``game`` (a compiled game or registry
    name, default options): :data:`GAME_SETTINGS` for its name and ``preset`` option, else
    :data:`DEFAULT_MARGIN` and :data:`DEFAULT_Z`."""
    game = as_game(game)
    own = GAME_SETTINGS.get((game.info.name, game.options.get("preset")), {})
    return {"margin": own.get("margin", DEFAULT_MARGIN), "z": own.get("z", DEFAULT_Z)}


#: search the auction's bids too (by default a bid is the prior's, or the policy's): rollouts
#: of the rollout policy misjudge a bid (its farmers defend worse than real ones, so being
#: the landlord looks better than it is), and in 4-player Dou Dizhu searched bids lost
#: 0.6 points per deal to ``rules`` that the trained prior's bids win
DEFAULT_BIDS = False
#: the values of ``objective``: a rollout's return, or whether it is positive (a win)
OBJECTIVES = ("reward", "win")
#: the values of ``opponents``: no model (the rollout policy for every seat), or greedy
#: followers (:data:`cardenvs.core.policy.PP_GREEDY`)
OPPONENT_MODELS = (None, "greedy")


def _state_from(game, info, observation=None) -> np.ndarray:
    """The state vector given to an agent that searches (``info["state"]``), validated."""
    state = None
    if isinstance(info, dict):
        state = info.get("state")
    if state is None and isinstance(observation, dict):
        state = observation.get("state")
    if state is None:
        raise ValueError("this agent searches from the game state: call act(observation, legal, "
                         "info) with info['state'] = env.unwrapped.state_vec (the arena, "
                         "`cardenvs play` and SeatEnv pass it)")
    if not isinstance(state, np.ndarray):
        raise TypeError(f"info['state'] must be the int64 state vector, got "
                        f"{type(state).__name__}")
    state = game.check_state(np.asarray(state))
    if state[PHASE] == P_DONE:
        raise ValueError(f"the {game.info.name} game in info['state'] is finished: there is no "
                         f"decision to make")
    return state


def _check_given(legal: Optional[np.ndarray], own: np.ndarray, what: str) -> None:
    """A ``ValueError`` when ``legal`` (the ids an agent's caller gives; ``None`` gives none)
    is not the set ``own`` (the position's own ids), naming both; ``what`` says what ``own``
    is."""
    if legal is None:
        return
    given = np.asarray(legal, np.int64)
    if given.shape != own.shape or not np.array_equal(np.sort(given), np.sort(own)):
        raise ValueError(f"the legal actions given ({given[:8].tolist()}...) are not {what} "
                         f"({own[:8].tolist()}...): the state is not this decision's")


class _StatefulAgent(Agent):
    """Shared parts: the state from ``info``, the policy's buffers, pickling by game name."""

    needs_state = True

    def __init__(self, game, seed: Optional[int] = None, policy: str = "heuristic"):
        super().__init__(game, seed)
        self._kind = policy_code(policy)
        self.policy = policy
        self._seed = seed
        #: the whole play chosen at the last compact decision, keyed by its state's bytes: the
        #: later decisions of that play return its parts (:meth:`act_compact`)
        self._plan: Optional[tuple[bytes, int]] = None
        self._setup()

    def _setup(self) -> None:
        g = self.game
        self._pp = policy_params(g)
        self._legal_buf = np.zeros(g.n_actions + 1, np.int64)
        self._tmp = np.zeros(g.state_size, np.int64)
        self._scores = np.zeros(g.n_actions + 1, np.float64)
        self._work = np.zeros(64, np.int64)

    def legal_of(self, state: np.ndarray) -> np.ndarray:
        """The legal action ids at ``state``; a ``ValueError`` when an unfinished game leaves
        the seat to move none (a state no play reaches, e.g. the mover's hand moved to his
        played pile: ``check_state`` checks each field, not every relation between them)."""
        k = self.game.legal(state, self._legal_buf)
        if k == 0:
            raise ValueError(f"agent {self.name!r}: the {self.game.info.name} state leaves "
                             f"player_{int(state[CUR])}, to move in phase {int(state[PHASE])}, "
                             f"no legal action in an unfinished game: not a position the game "
                             f"can reach, so there is no decision to make")
        return self._legal_buf[:k].copy()

    def policy_scores(self, state: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """The rollout policy's score of each legal action (lower is better)."""
        g = self.game
        legal = np.ascontiguousarray(legal, np.int64)
        run_specialized(score_policy, g, f"the rollout policy's scores for {g.info.name}",
                        state, legal, np.int64(len(legal)), g.tab, g.opts, self._pp, g.k_step,
                        self._tmp, self._scores, self._work, np.int64(self._kind))
        return self._scores[:len(legal)].copy()

    def _legal_given(self, state: np.ndarray, legal: Optional[np.ndarray]) -> np.ndarray:
        """``legal`` as int64 ids, or the state's own when ``None`` (:meth:`legal_of`); an
        empty set is a ``ValueError``."""
        if legal is None:
            return self.legal_of(state)
        legal = np.asarray(legal, np.int64)
        if legal.size == 0:
            self.legal_of(state)  # the state's own fault, named, when it has none either
            raise ValueError(f"agent {self.name!r}: no legal action given to choose from")
        return legal

    def _check_legal(self, state, legal) -> np.ndarray:
        own = self.legal_of(state)
        _check_given(legal, own, "those of info['state']")
        return own

    def act(self, observation, legal=None, info=None) -> int:
        """The action at the position of ``info["state"]``: a flat id among ``legal``; with
        ``info["compact"]`` (a compact environment's partial play, ``None`` at a play's first
        decision) a compact id among ``legal``, by :meth:`act_compact`."""
        state = _state_from(self.game, info, observation)
        if isinstance(info, dict) and "compact" in info:
            return self.act_compact(state, info["compact"], legal)
        return self.act_state(state, self._check_legal(state, legal))

    def act_compact(self, state: np.ndarray, pending=None,
                    legal: Optional[np.ndarray] = None) -> int:
        """A compact decision (:mod:`cardenvs.core.compact`): the compact id to step at
        ``state`` with the partial play ``pending`` (``(body, [kicker ids])`` as
        ``env.unwrapped.get_state()["compact"]`` writes it; ``None`` at a play's first
        decision).

        The agent chooses a whole play among those that extend the partial play (all the
        legal actions at a first decision) as :meth:`act_state` chooses among flat ids, and
        returns its next part: the body at a first decision, then each kicker.  The play
        chosen is remembered with its state, so the later decisions of the same play return
        its parts without searching again (a compact deal then plays the whole plays the
        flat deal plays); a partial play the agent did not choose (a restored position) is
        completed by a search over its completions.  One compact id offered is returned
        without searching.  ``legal`` (the env's compact legal ids) must be those of the
        position; a partial play that is not legal there is a ``ValueError``."""
        g = self.game
        state = g.check_state(state)
        p = restore_partial(g, state, pending)
        own = p.legal[:p.n_legal].copy()
        if len(own) == 0:
            self.legal_of(state)  # names the state's fault
        _check_given(legal, own, f"the compact ids of info['state'] with partial play {pending!r}")
        plays = p.cand[:p.nc].copy() if p.body >= 0 else self.legal_of(state)
        key = state.tobytes()
        plan = getattr(self, "_plan", None)
        if plan is not None and plan[0] == key and bool((plays == plan[1]).any()):
            flat = plan[1]
        elif len(own) == 1:
            return int(own[0])
        else:
            flat = self.act_state(state, plays)
            self._plan = (key, int(flat))
        parts = codec_of(g).parts(flat)
        return int(parts[1 + p.j] if p.body >= 0 else parts[0])

    def act_state(self, state: np.ndarray, legal: Optional[np.ndarray] = None) -> int:
        raise NotImplementedError

    def act_batch(self, observations, masks, states=None) -> np.ndarray:
        """Actions for a batch; ``states`` (B, S) are required (this agent searches from the
        state)."""
        if states is None:
            raise ValueError(f"agent {self.name!r} searches from the game state: act_batch needs "
                             f"states=(B, S) state vectors beside the observations")
        states = np.asarray(states)
        if states.ndim != 2:
            raise ValueError("states must be (B, S) state vectors")
        out = np.empty(len(states), np.int64)
        for i in range(len(states)):
            out[i] = self.act(None, None, {"state": states[i]})
        return out

    # -- pickling: the compiled game is rebuilt from its name and options --------------------------
    _TRANSIENT = ("game", "_pp", "_legal_buf", "_tmp", "_scores", "_work", "_vg", "_prior",
                  "_obs", "_own")

    def __getstate__(self):
        d = {k: v for k, v in self.__dict__.items() if k not in self._TRANSIENT}
        d["_spec"] = (self.game.info.name, dict(getattr(self.game, "options", {})))
        d["_rng_state"] = self.rng.bit_generator.state
        d.pop("rng", None)
        return d

    def __setstate__(self, d):
        from cardenvs.api import make_game

        name, options = d.pop("_spec")
        rng_state = d.pop("_rng_state")
        self.__dict__.update(d)
        self.game = make_game(name, **options)
        self.rng = np.random.default_rng()
        self.rng.bit_generator.state = rng_state
        self._setup()


class RolloutAgent(_StatefulAgent):
    """The numba rollout policy (:mod:`cardenvs.core.policy`) as a player (deterministic)."""

    name = "rollout"

    def act_state(self, state: np.ndarray, legal: Optional[np.ndarray] = None) -> int:
        state = self.game.check_state(state)
        legal = self._legal_given(state, legal)
        if len(legal) == 1:
            return int(legal[0])
        sc = self.policy_scores(state, legal)
        return int(legal[int(np.argmin(sc))])


class Rollout0Agent(RolloutAgent):
    """The former rollout policy (``policy="heuristic0"``) as a player, for comparison."""

    name = "rollout0"

    def __init__(self, game, seed: Optional[int] = None, policy: str = "heuristic0"):
        super().__init__(game, seed, policy)


class SearchAgent(_StatefulAgent):
    """PIMC over the rollout policy (see the module docstring).

    Args:
        game: the compiled game.
        seed: seed of the agent's generator (worlds and rollouts).
        rollouts: rollouts per decision (``worlds x candidates``); default
            :data:`DEFAULT_ROLLOUTS`.
        ms: instead, a time budget per decision in milliseconds.
        max_candidates: candidates kept after ranking by the policy.
        policy: rollout policy (``"heuristic"``, ``"random"`` or the former heuristic
            ``"heuristic0"``; :data:`cardenvs.core.policy.POLICIES`).
        epsilon: chance of a random action at each rollout decision.
        prior: agent whose move is kept unless a candidate clearly beats it (``None``: the
            best candidate); the default, ``trained``, is left out where no shipped weights
            play the game; any other prior that cannot play it is a ``ValueError``.
        margin, z: "clearly": a mean gain over the prior's move above ``margin`` plus ``z``
            standard errors (defaults: :func:`default_settings`, the game's and preset's
            :data:`GAME_SETTINGS`, else :data:`DEFAULT_MARGIN` and :data:`DEFAULT_Z`;
            ``margin=inf`` plays the prior's moves without searching).
        bids: search the auction's bids too (default: the prior's bid, or the rollout
            policy's without a prior).
        objective: what a rollout is worth to the mover: ``"reward"`` (default) its return
            under the game's options, ``"win"`` 1 for a positive return and 0 otherwise, the
            chance of winning whatever the score (with ``margin=0``, under
            ``reward="win_loss"`` both choose alike where no deal can be void).
        opponents: an opponent model for the rollouts: ``None`` (default) plays the
            mover's opponents by the rollout policy like everyone else; ``"greedy"`` plays
            them as simple rule bots: they follow whenever a plain play beats, a partner's
            too, with the lowest such play, and lead a combination without kickers holding
            their lowest card (RLCard's rule model passes in under 1% of the decisions where
            it may, the rollout policy in 39%; the model makes RLCard's move at 98.7% of its
            landlord's follows and 87% of its leads). The mover's partners and its own later
            moves keep the policy.
        own: who makes the mover's own later decisions in the rollouts: ``None`` (default)
            the rollout policy, like every seat; ``"prior"`` the prior agent (the network of
            ``trained+search``); or an agent name (``"trained"``, ``"trained:PATH"``).  That
            agent decides for all of a decision's rollouts at once
            (:meth:`cardenvs.vector.VectorGame.rollout` with ``agent``): the candidates are
            then judged by how they play out under the agent's own continuation instead of
            the rollout policy's, at the cost of one batched call of the agent per later
            decision of the mover.
    """

    name = "search"
    #: a ``time.perf_counter()`` time by which a decision ends (``None``: no limit), set by a
    #: caller that must answer in time (the web app, per move): the rollouts then run in
    #: chunks of :data:`DEADLINE_WORLDS` worlds while the time lasts and the move is decided
    #: from the worlds played (with a prior, its move is kept unless a candidate clearly beats
    #: it over those worlds); past the deadline before the first rollout, the prior's move
    #: (else the rollout policy's).  A deadline not reached plays the move the agent plays
    #: without one where the rollouts draw no random numbers (``epsilon=0`` and a heuristic
    #: policy, the default), and the agent's generator advances alike.
    deadline: Optional[float] = None

    def __init__(self, game, seed: Optional[int] = None, *, rollouts: Optional[int] = None,
                 ms: Optional[float] = None, max_candidates: int = DEFAULT_CANDIDATES,
                 policy: str = "heuristic", epsilon: float = 0.0,
                 prior: Optional[str] = DEFAULT_PRIOR, margin: Optional[float] = None,
                 z: Optional[float] = None, bids: bool = DEFAULT_BIDS,
                 objective: str = "reward", opponents: Optional[str] = None,
                 own: Optional[str] = None):
        if own is not None and not isinstance(own, str):
            raise TypeError(f"own must be None, 'prior' or an agent name, got "
                            f"{type(own).__name__}")
        self.own = own
        if opponents not in OPPONENT_MODELS:
            raise ValueError(f"opponents must be one of {OPPONENT_MODELS}, got {opponents!r}")
        if opponents is not None and policy != "heuristic":
            raise ValueError(f"opponents={opponents!r} models the heuristic policy's card play; "
                             f"policy={policy!r} has no such model")
        self.opponents = opponents
        if objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {', '.join(map(repr, OBJECTIVES))}, "
                             f"got {objective!r}")
        self.objective = objective
        if not isinstance(bids, (bool, np.bool_)):
            raise TypeError(f"bids must be True or False, got {type(bids).__name__}")
        self.bids = bool(bids)
        if rollouts is not None and ms is not None:
            raise ValueError("give rollouts or ms, not both")
        if rollouts is None and ms is None:
            rollouts = DEFAULT_ROLLOUTS
        who = self.name
        check_keyword(who, "rollouts", rollouts, low=1, high=MAX_ROLLOUTS, integer=True,
                      optional=True)
        check_keyword(who, "ms", ms, low=0, high=MAX_MS, low_open=True, optional=True)
        check_keyword(who, "max_candidates", max_candidates, low=1, high=MAX_CANDIDATES,
                      integer=True)
        check_keyword(who, "epsilon", epsilon, low=0, high=1)
        if prior is not None and not isinstance(prior, str):
            raise TypeError(f"prior must be an agent name or None, got {type(prior).__name__}")
        game = as_game(game)
        own = default_settings(game)
        if margin is None:
            margin = own["margin"]
        if z is None:
            z = own["z"]
        check_keyword(who, "margin", margin, low=0, high=float("inf"))
        check_keyword(who, "z", z, low=0, high=MAX_Z)
        self.prior_name = prior
        self.margin = float(margin)
        self.z = float(z)
        self.rollouts = None if rollouts is None else int(rollouts)
        self.ms = None if ms is None else float(ms)
        self.max_candidates = int(max_candidates)
        self.epsilon = float(epsilon)
        self._per_rollout_s = None  # measured cost of one rollout (ms budget)
        #: decisions whose worlds were sampled without the logged passes' checks (a must-beat
        #: position whose passes leave too few deals to find by rejection)
        self.relaxed_decisions = 0
        super().__init__(game, seed, policy)
        self.own_agent()  # own="prior" without a prior: refused now, not at the first decision

    def _setup(self) -> None:
        super()._setup()
        self._vg = None
        self._prior = self._make_prior()
        self._obs = np.zeros(self.game.layout.size, np.float32)
        self._own = None
        if self.own is not None and self.own != "prior":
            from . import make_agent, unsupported

            reason = unsupported(self.own, self.game)
            if reason is not None:
                raise ValueError(f"own={self.own!r} cannot play {self.game.info.name}: {reason}")
            self._own = make_agent(self.own, self.game, seed=self._seed)

    def _make_prior(self):
        """The prior agent of ``prior_name``: ``None`` without one, or for the default prior
        where the shipped weights cannot play the game; any other failure is a
        ``ValueError`` naming the prior (a damaged or foreign weight file, a bad keyword)."""
        if self.prior_name is None:
            return None
        from . import agent_class, make_agent

        if self.prior_name == DEFAULT_PRIOR and \
                agent_class(DEFAULT_PRIOR).unsupported(self.game) is not None:
            return None
        try:
            return make_agent(self.prior_name, self.game, seed=self._seed)
        except ValueError as e:
            raise ValueError(f"agent {self.name!r}: prior={self.prior_name!r} cannot play "
                             f"{self.game.info.name}: {e}") from None

    def prior_agent(self):
        """The agent whose move is kept unless a candidate clearly beats it (``None``: none)."""
        return self._prior

    def own_agent(self):
        """The agent that plays the mover's own later decisions in the rollouts (``own``;
        ``None``: the rollout policy)."""
        if self.own == "prior" and self._own is None:
            self._own = self.prior_agent()
            if self._own is None:
                raise ValueError(f"own='prior' needs a prior agent that plays "
                                 f"{self.game.info.name}; this search has none")
        return self._own

    def prior_action(self, state: np.ndarray, legal: np.ndarray) -> Optional[int]:
        """The prior agent's action at ``state`` (from the seat's own observation)."""
        if self._prior is None:
            return None
        g = self.game
        g.encode(state, int(state[CUR]), self._obs)
        mask = np.zeros(g.n_actions, np.int8)
        mask[legal] = 1
        return int(self._prior.act({"observation": self._obs.copy(), "action_mask": mask},
                                   legal.copy()))

    def _engine(self, n: int):
        from cardenvs.vector import VectorGame

        if self._vg is None or self._vg.n < n:
            self._vg = VectorGame(self.game, max(n, 64), observe=False, auto_reset=False)
            self._vg.reset(seed=0)
        return self._vg

    def candidates(self, state: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """The legal actions the search scores: the policy's best ``max_candidates`` card
        plays (or choices), plus pass and every action the policy avoids (报牌)."""
        sc = self.policy_scores(state, legal)
        order = np.argsort(sc, kind="stable")
        T = self.game.pass_id
        keep = list(order[:self.max_candidates])
        for j in order[self.max_candidates:]:
            if legal[j] >= T:  # pass, declarations: always among the candidates
                keep.append(j)
        return legal[np.array(keep, np.int64)]

    def opponents_of(self, state: np.ndarray) -> tuple:
        """The seats against the seat to move: in a ``1 vs k`` game with its solo seat known,
        the solo seat (for a partner) or every other seat (for the solo seat); else every
        other seat."""
        n = self.game.n_players
        seat = int(state[CUR])
        solo = int(state[LANDLORD]) if self._pp[PP_SOLO] == 1 else -1
        if 0 <= solo < n and seat != solo:
            return (solo,)
        return tuple(q for q in range(n) if q != seat)

    def is_bid(self, legal: np.ndarray) -> bool:
        """Whether the decision with these legal actions is an auction bid."""
        return bool((self._pp[PP_KINDS + np.asarray(legal, np.int64)] == K_BID).any())

    def act_state(self, state: np.ndarray, legal: Optional[np.ndarray] = None) -> int:
        g = self.game
        state = g.check_state(state)
        if state[PHASE] == P_DONE:
            raise ValueError("the game is finished: there is no decision to make")
        legal = self._legal_given(state, legal)
        if len(legal) == 1:
            return int(legal[0])
        base = self.prior_action(state, legal)
        if base is not None and self.margin == float("inf"):
            return base
        if not self.bids and self.is_bid(legal):
            if base is not None:
                return base
            return int(legal[int(np.argmin(self.policy_scores(state, legal)))])
        cands = self.candidates(state, legal)
        if base is not None and base not in cands:
            cands = np.concatenate([cands, [base]]).astype(np.int64)
        if len(cands) == 1:
            return int(cands[0])
        C = len(cands)
        seat = int(state[CUR])
        if self.rollouts is not None:
            K = max(MIN_WORLDS, self.rollouts // C)
        else:
            per = self._per_rollout_s or 50e-6
            K = max(MIN_WORLDS, min(int(self.ms * 1e-3 / per), MAX_ROLLOUTS) // C)
        t0 = time.perf_counter()
        try:
            worlds = determinize_batch(g, state, seat, self.rng, K)
        except RuntimeError as e:
            # a must-beat game's logged passes can leave too few deals to find by rejection
            # (the real deal meets them, so the position is reachable): search then samples
            # from the other observations alone, a wider belief, rather than stop the game
            try:
                worlds = determinize_batch(g, state, seat, self.rng, K, check_passes=False)
            except RuntimeError:
                raise RuntimeError(f"agent {self.name!r} cannot sample worlds for "
                                   f"player_{seat}: {e}") from None
            self.relaxed_decisions += 1
        n = K * C
        vg = self._engine(n)
        starts = np.empty((n, g.state_size), np.int64)
        paid = np.zeros(n, np.float64)
        run_specialized(apply_candidates, g, f"the candidates' first steps for {g.info.name}",
                        g.k_step, g.tab, g.opts, np.ascontiguousarray(worlds),
                        np.ascontiguousarray(cands, np.int64), starts, paid, np.int64(seat))
        slots = np.arange(n, dtype=np.int64)
        vg.load_states(starts, slots)
        seed = int(self.rng.integers(0, 2**62))
        greedy = () if self.opponents is None else self.opponents_of(state)
        own = self.own_agent()
        ret = self._play(vg, slots, C, seed=seed, epsilon=self.epsilon, greedy_seats=greedy,
                         agent=own, agent_seats=(seat,) if own is not None else ())
        if not len(ret):  # the deadline passed before the first rollout: the move unsearched
            return int(base) if base is not None else int(cands[0])
        K, n = len(ret) // C, len(ret)
        V = (ret[:, seat] + paid[:n]).reshape(K, C)
        if self.objective == "win":
            V = (V > 0).astype(np.float64)
        if self.ms is not None:
            dt = time.perf_counter() - t0
            self._per_rollout_s = max(dt / n, 1e-6)
        return int(cands[self._decide(V, cands, base)])

    def _play(self, vg, slots: np.ndarray, C: int, **kw) -> np.ndarray:
        """The returns of the rollouts of ``slots`` (worlds x ``C`` candidates, world by
        world): in one call; with a :attr:`deadline`, in chunks of :data:`DEADLINE_WORLDS`
        worlds, each started only while it is expected to end before the deadline (the
        chunks' mean time so far): the rows of the chunks played, none when the deadline
        has passed before the first."""
        if self.deadline is None:
            return vg.rollout(self.policy, slots=slots, **kw)
        step = DEADLINE_WORLDS * C
        parts: list[np.ndarray] = []
        t0 = time.perf_counter()
        done = 0
        while done < len(slots):
            m = min(step, len(slots) - done)
            now = time.perf_counter()
            ahead = (now - t0) / done * m if done else 0.0  # the chunk's expected time
            if now + ahead > self.deadline:
                break
            parts.append(vg.rollout(self.policy, slots=slots[done:done + m], **kw))
            done += m
        return np.concatenate(parts) if parts else np.zeros((0, self.game.n_players))

    def _decide(self, V: np.ndarray, cands: np.ndarray, base: Optional[int]) -> int:
        """Index of the chosen candidate from the returns ``V`` (worlds x candidates, the same
        worlds for every candidate): the best mean; with a prior, the prior's move unless a
        candidate's mean gain over it, world by world, exceeds ``margin`` plus ``z``
        standard errors."""
        value = V.mean(0)
        if base is None:
            return int(np.argmax(value))  # first maximum: the policy's order breaks ties
        j = int(np.flatnonzero(cands == base)[0])
        d = V - V[:, j:j + 1]
        K = V.shape[0]
        gain = d.mean(0)
        se = d.std(0, ddof=1) / np.sqrt(K) if K > 1 else np.zeros(len(cands))
        ok = gain > self.margin + self.z * se
        ok[j] = False
        if not ok.any():
            return j
        return int(np.flatnonzero(ok)[np.argmax(gain[ok])])


__all__ = ["RolloutAgent", "Rollout0Agent", "SearchAgent", "DEFAULT_ROLLOUTS", "POLICIES"]
