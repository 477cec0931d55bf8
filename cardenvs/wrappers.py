"""Single-agent views of the multi-player games: :class:`SeatEnv`.

A learner controls one seat (or a team of seats) of a game; the other seats are played inside
the environment by opponent policies.  Each ``step`` returns the learner's *own* next
observation and the reward paid to the learner since its previous decision, so the two
problems of wrapping a turn-based PettingZoo game for single-agent RL (observations from the
wrong seat, and the final reward lost when an opponent's move ends the game) do not arise.

Opponent policies (``opponents=``), for every non-learner seat, or per seat as a dict
``{seat: policy}`` or a list with one entry per seat (``None`` at the learner's seats):

* ``"random"``: uniform over the legal actions, from the env's own seeded generator;
* another agent registry name (``"rules"``, ``"rlcard"``, ``"trained"``: the
  ``cardenvs.agents`` package), built once with ``make_agent(name, game, seed=0)`` and
  shared by the seats that name it;
* an object with ``act(observation, legal_ids)`` (the ``cardenvs.agents`` package's
  interface, e.g. ``cardenvs.agents.make_agent("rules", game)``; one with only
  ``act_batch(observations, masks)`` is asked with a batch of one), or
* any callable ``policy(observation, legal_ids) -> action`` (e.g. a frozen snapshot of the
  learner).

Both get what the AEC environment gives that seat: ``observation`` is the dict
``{"observation": float32[D], "action_mask": int8[A]}`` of the seat to move, ``legal_ids``
its legal action ids (``int64``).  An opponent choosing an illegal action is a ``ValueError``
naming the seat and the action.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

import gymnasium
import numpy as np
from gymnasium import spaces

from .core.options import check_seed, set_env_args
from .core.render import RENDER_FPS, RENDER_MODES
from .core.state import CUR, P_DONE, PHASE, REW0

if TYPE_CHECKING:
    from .core.game import Game

_MAX_SEED = 2**63 - 1  # deal seeds as in cardenvs.core.aec.CardEnv.reset
#: deals in a row that end before the learner moves, before reset() gives up
MAX_SKIPPED_DEALS = 1000
#: opponent decisions in one step before the env gives up (no game comes near it)
MAX_DECISIONS = 100_000
_OPP_SALT = 0x5EA7E4F  # opponents' generator: default_rng([seed, _OPP_SALT])


def _check_seats(seats: object, n_players: int) -> tuple[int, ...]:
    if isinstance(seats, (int, np.integer)) and not isinstance(seats, (bool, np.bool_)):
        seats = (int(seats),)
    if not isinstance(seats, (tuple, list)) or not seats:
        raise TypeError(f"seats must be a seat (int) or a non-empty tuple of seats, got {seats!r}")
    out = []
    for s in seats:
        if isinstance(s, (bool, np.bool_)) or not isinstance(s, (int, np.integer)):
            raise TypeError(f"seats must be ints, got {s!r}")
        if not 0 <= s < n_players:
            raise ValueError(f"seat {s} is not a seat of a {n_players}-player game")
        out.append(int(s))
    if len(set(out)) != len(out):
        raise ValueError(f"seats repeat: {seats!r}")
    if len(out) == n_players:
        raise ValueError("the learner cannot hold every seat: leave at least one to opponents")
    return tuple(sorted(out))


def _make_agent(name: str, game: Optional[Game]) -> Any:
    """The agent registered as ``name`` (``cardenvs.agents``), bound to ``game``; ``name``
    may be a spec with an argument (``trained:PATH``, ``search:rollouts=64,epsilon=0.1``)."""
    from .subpackages import import_subpackage

    try:
        agents = import_subpackage("agents")
    except ModuleNotFoundError as e:  # pragma: no cover - the agents package is not installed
        if e.name != "cardenvs.agents":
            raise
        raise ValueError(f"unknown opponent {name!r}: give 'random', an object with "
                         f"act(observation, legal_ids), or a callable (the agents package "
                         f"with more names is not installed)") from None
    AGENTS, make_agent, split_spec = agents.AGENTS, agents.make_agent, agents.split_spec
    if split_spec(name)[0] not in AGENTS:  # a spec may carry an argument: search:rollouts=64
        raise ValueError(f"unknown opponent {name!r}: give 'random', an agent name "
                         f"({', '.join(a for a in AGENTS if a != 'random')}), an object with "
                         f"act(observation, legal_ids), or a callable")
    if game is None:
        raise ValueError(f"opponent {name!r} needs the game to build the agent")
    return make_agent(name, game, seed=0)


def check_policy(policy: object, game: Optional[Game] = None,
                 built: Optional[dict[str, Any]] = None) -> Any:
    """An opponent policy checked (or built).

    Args:
        policy: ``"random"``, an object with ``act`` or ``act_batch``, a callable, or
            another agent registry name.
        game: the game an agent named by ``policy`` is built for.
        built: agents already built, by name (an agent named twice is built once).

    Returns:
        ``policy`` itself, or the agent its name builds.
    """
    if isinstance(policy, str):
        if policy == "random":
            return policy
        if built is None:
            built = {}
        if policy not in built:
            built[policy] = _make_agent(policy, game)
        return built[policy]
    if (callable(getattr(policy, "act", None)) or callable(getattr(policy, "act_batch", None))
            or callable(policy)):
        return policy
    raise TypeError(f"an opponent must be 'random', an object with act(observation, legal_ids) "
                    f"or act_batch(observations, masks), or a callable, got "
                    f"{type(policy).__name__}")


def seat_policies(opponents: object, seats: tuple[int, ...], n_players: int,
                  game: Optional[Game] = None) -> list[Any]:
    """One policy per seat (``None`` at the learner's seats) from the ``opponents`` argument
    (agent names are built for ``game``)."""
    out: list[Any] = [None] * n_players
    built: dict[str, Any] = {}
    others = [s for s in range(n_players) if s not in seats]
    if isinstance(opponents, dict):
        for s in opponents:
            if s not in others:
                raise ValueError(f"opponents names seat {s!r}, which is not an opponent seat "
                                 f"(opponent seats: {others})")
        missing = [s for s in others if s not in opponents]
        if missing:
            raise ValueError(f"no opponent policy for seat(s) {missing}")
        for s in others:
            out[s] = check_policy(opponents[s], game, built)
    elif isinstance(opponents, (list, tuple)):
        if len(opponents) != n_players:
            raise ValueError(f"a list of opponents needs one entry per seat ({n_players}), "
                             f"got {len(opponents)}")
        for s in range(n_players):
            if s in seats:
                if opponents[s] is not None:
                    raise ValueError(f"seat {s} is the learner's: its entry must be None")
            else:
                out[s] = check_policy(opponents[s], game, built)
    else:
        p = check_policy(opponents, game, built)
        for s in others:
            out[s] = p
    return out


def policy_info(policy: object, info: Optional[dict], state: np.ndarray) -> Optional[dict]:
    """The ``info`` to hand ``policy.act``: for a policy that declares ``needs_state = True``
    (the search agents, which sample worlds from the position as OpenSpiel's bots receive the
    ``State``), ``info`` plus ``"state"``, a read-only copy of the game's state vector; for
    every other policy ``info`` unchanged (learners never see hidden cards through it)."""
    if not getattr(policy, "needs_state", False):
        return info
    view = np.array(state, np.int64)
    view.flags.writeable = False
    return {**(info or {}), "state": view}


def call_policy(policy: Any, observation: dict, legal: np.ndarray,
                state: Optional[np.ndarray] = None) -> int:
    """Ask ``policy`` (an object with ``act`` or ``act_batch``, or a callable) for an action;
    ``state`` (the game's state vector) reaches policies that declare ``needs_state``."""
    act = getattr(policy, "act", None)
    batch = getattr(policy, "act_batch", None)
    if callable(act):
        if state is not None and getattr(policy, "needs_state", False):
            a = act(observation, legal, policy_info(policy, None, state))
        else:
            a = act(observation, legal)
    elif callable(batch):
        a = np.asarray(batch(observation["observation"][None], observation["action_mask"][None]))[0]
    else:
        a = policy(observation, legal)
    if isinstance(a, np.ndarray) and a.shape == ():
        a = a.item()
    if isinstance(a, (bool, np.bool_)) or not isinstance(a, (int, np.integer)):
        raise TypeError(f"an opponent policy returned {a!r} ({type(a).__name__}); expected an "
                        f"int action id")
    return int(a)


class SeatEnv(gymnasium.Env):
    """A ``gymnasium.Env`` in which the learner plays ``seats`` of a game against opponents.

    Args:
        game: a registry name (any of ``cardenvs.GAMES``) or a compiled Game.
        seats: the learner's seat, or a tuple of seats (a team).
        opponents: the other seats' policies (see the module docstring); default random.
        illegal: ``"lose"`` (default, like the AEC env): an illegal learner action ends the
            game with ``illegal_reward`` for the learner and ``info["illegal_move"]``;
            ``"raise"``: a ``ValueError`` naming the action, the game unchanged.
        illegal_reward: the learner's reward for an illegal action (``-1``).
        render_mode: ``None``, ``"ansi"`` (:meth:`render` returns the whole table as text),
            ``"human"`` (prints it after every step) or ``"rgb_array"`` (returns it as an
            ``(H, W, 3)`` ``uint8`` image; gymnasium's ``RecordVideo`` records it).
        info_legal_actions: also put the learner's legal action ids in
            ``info["legal_actions"]`` (a varying-length ``int64`` array; off by default so
            that ``gymnasium.vector`` and other stackers see fixed-shape infos).
        actions: ``"flat"`` (default) or ``"compact"``: the learner chooses a play's body,
            then each kicker, as separate steps (a :class:`cardenvs.compact_seat.CompactSeatEnv`).
        **options: the game's options (with a registry name).

    Spaces: ``Box(0, 1, (D,), float32)`` observations (the game's observation vector for the
    learner's seat to move; at the end, for the learner's seat that moved last) and
    ``Discrete(A)`` actions; :meth:`action_masks` gives the legal actions (bool ``(A,)``) as
    ``sb3_contrib.MaskablePPO`` expects, also through ``SubprocVecEnv``.

    Rewards: the reward of a step is what the game paid the learner from its action until its
    next decision (or the end of the game), the opponents' moves included; for a team, the
    mean of its seats' payments.  Games paying only at the end give 0 until the last step.

    Seeds: ``reset(seed=s)`` deals exactly as ``env.reset(seed=s)`` of the game's AEC env
    (the deal seed is the first ``integers(0, 2**63 - 1)`` of ``default_rng(s)``), and later
    ``reset()`` calls continue that generator as the AEC env does; the opponents draw from a
    separate generator (``default_rng([s, 0x5EA7E4F])``).  Deals that end before the learner
    has moved are skipped (the next deal is dealt) and counted in ``info["skipped_deals"]``.

    ``info`` has a fixed shape (what ``gymnasium.vector`` stacks): ``action_mask`` (the
    learner's legal actions, ``int8[A]`` as in the AEC env's observation and gymnasium's own
    masked envs; all zeros at the end), ``seat`` (the learner's seat to move, or the one that
    moved last at the end), ``deal_seed``, ``skipped_deals``, and at the end ``final_rewards``
    (every seat's payout of the last step, ``float64[P]``) and, after an illegal action,
    ``illegal_move``.  The legal ids are :meth:`legal_actions` (and ``info["legal_actions"]``
    with ``info_legal_actions=True``).

    Registered with gymnasium as ``cardenvs/<Game>-Seat-v0`` (``cardenvs.GYM_IDS``), e.g.
    ``gymnasium.make("cardenvs/Wakeng-Seat-v0", seats=1)``.
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": RENDER_FPS}
    # set by cardenvs.core.options.set_env_args
    illegal: str
    illegal_reward: float
    info_legal_actions: bool

    def __new__(cls, *args: Any, actions: str = "flat", **kwargs: Any):
        """``actions="compact"`` makes a :class:`cardenvs.compact_seat.CompactSeatEnv`
        (the learner decides bodies and kickers one at a time; see :mod:`cardenvs.core.compact`)."""
        from .core.compact import check_actions

        if check_actions(actions) == "compact" and cls is SeatEnv:
            from .compact_seat import CompactSeatEnv

            cls = CompactSeatEnv
        return super().__new__(cls)

    def __init__(self, game: Union[str, Any] = "doudizhu", seats: Union[int, Sequence[int]] = 0,
                 opponents: Any = "random", *, illegal: str = "lose",
                 illegal_reward: float = -1.0, render_mode: Optional[str] = None,
                 info_legal_actions: bool = False, actions: str = "flat", **options: Any):
        from .vector import _as_game

        self.game = _as_game(game, options)
        g = self.game
        self._spec = (g.info.name, dict(getattr(g, "options", {})))
        set_env_args(self, render_mode, illegal, illegal_reward, info_legal_actions)
        self.n_players = int(g.n_players)
        self.seats = _check_seats(seats, self.n_players)
        self._is_learner = np.zeros(self.n_players, np.bool_)
        self._is_learner[list(self.seats)] = True
        self._weight = 1.0 / len(self.seats)
        self.set_opponents(opponents)
        self.observation_space = spaces.Box(0.0, 1.0, (g.layout.size,), np.float32)
        self.action_space = spaces.Discrete(g.n_actions)
        self.state_vec = g.new_state()
        self._legal_buf = np.zeros(g.n_actions + 1, np.int64)
        self._n_legal = 0
        self._opp_rng = np.random.default_rng()
        self._picks: list[float] = []
        self._started = False
        self._over = False
        self._seat = -1
        self._deal_seed = -1
        self._skipped = 0

    # -- opponents ---------------------------------------------------------------------------------
    def set_opponents(self, opponents: Any) -> None:
        """Replace the opponents' policies (takes effect at once; e.g. a new frozen snapshot)."""
        self.opponents = seat_policies(opponents, self.seats, self.n_players, self.game)

    def _pick(self, k: int) -> int:
        if not self._picks:
            self._picks = self._opp_rng.random(1024).tolist()
        return int(self._picks.pop() * k)

    # -- the game loop ---------------------------------------------------------------------------
    def _legal(self) -> np.ndarray:
        return self._legal_buf[: self._n_legal]

    def _refresh(self) -> None:
        s = self.state_vec
        if s[PHASE] == P_DONE:
            self._n_legal = 0
        else:
            self._n_legal = self.game.legal(s, self._legal_buf)
            if self._n_legal <= 0:
                raise RuntimeError(f"{self.game.info.name}: no legal action in an unfinished deal")

    def _paid(self) -> float:
        """What the last step paid the learner (mean over its seats)."""
        r = self.state_vec[REW0:REW0 + self.n_players].tolist()
        return sum(r[s] for s in self.seats) * self._weight

    def _observation(self, seat: int) -> np.ndarray:
        obs = np.empty(self.game.layout.size, np.float32)
        self.game.encode(self.state_vec, seat, obs)
        return obs

    def _play_opponents(self) -> float:
        """Opponents move until a learner seat is to move or the game ends; their moves' pay
        to the learner is returned."""
        g = self.game
        s = self.state_vec
        paid = 0.0
        moves = 0
        while s[PHASE] != P_DONE:
            seat = int(s[CUR])
            if self._is_learner[seat]:
                break
            policy = self.opponents[seat]
            legal = self._legal()
            if policy == "random":
                a = int(legal[self._pick(len(legal))])
            else:
                mask = np.zeros(g.n_actions, np.int8)
                mask[legal] = 1
                a = call_policy(policy, {"observation": self._observation(seat),
                                         "action_mask": mask}, legal.copy(), s)
                if not (0 <= a < g.n_actions and g.is_legal(s, a)):
                    raise ValueError(f"the opponent at seat {seat} ({policy!r}) chose the illegal "
                                     f"action {a} in {g.info.name}")
            g._step_checked(s, a)
            paid += self._paid()
            self._refresh()
            moves += 1
            if moves > MAX_DECISIONS:
                raise RuntimeError(f"{g.info.name}: {MAX_DECISIONS} opponent moves in one step")
        return paid

    def _info(self) -> dict:
        mask = np.zeros(self.game.n_actions, np.int8)
        if not self._over:
            mask[self._legal()] = 1
        info = {"action_mask": mask, "seat": self._seat, "deal_seed": self._deal_seed,
                "skipped_deals": self._skipped}
        if self.info_legal_actions:
            info["legal_actions"] = (np.zeros(0, np.int64) if self._over
                                     else self._legal().copy())
        if self._over:
            info["final_rewards"] = self.state_vec[REW0:REW0 + self.n_players].astype(np.float64)
        return info

    # -- gymnasium API -----------------------------------------------------------------------------
    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal a new game and play the opponents up to the learner's first decision.

        Args:
            seed: seeds the deals (and the opponents' generator); ``None`` continues them.
            options: a custom deal, by the game's deal keys (``None``: a random deal).

        Returns:
            ``(observation, info)`` of the learner's seat to move.
        """
        if seed is not None:
            check_seed(seed)
        if options is not None and not isinstance(options, dict):
            raise TypeError(f"options must be a dict, got {type(options).__name__}")
        # a rejected reset (a bad custom deal, an opponent policy that raises) leaves the
        # env as it was: the running game, the deal generator and the opponents' generator
        saved = dict(self.__dict__)
        saved["_picks"] = list(self._picks)
        saved_state = self.state_vec.copy()
        gen = getattr(self, "_np_random", None)
        saved_gen = None if gen is None else gen.bit_generator.state
        saved_opp = self._opp_rng.bit_generator.state
        try:
            return self._reset(seed, options)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            self.state_vec[:] = saved_state
            if gen is not None:
                gen.bit_generator.state = saved_gen
            self._opp_rng.bit_generator.state = saved_opp
            raise

    def _reset(self, seed: Optional[int], options: Optional[dict]
               ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:
            self._opp_rng = np.random.default_rng([int(seed), _OPP_SALT])
            self._picks = []
        g = self.game
        self._skipped = 0
        custom = bool(options and set(options) & set(g.deal_keys))
        if options and not custom:
            gymnasium.logger.warn(f"reset(options=...) ignored: none of the deal keys "
                                  f"{list(g.deal_keys)} given")
        while True:
            self._deal_seed = int(self.np_random.integers(0, _MAX_SEED))
            if custom:
                new_state = g.new_state()
                g.custom_deal(new_state, options, self._deal_seed)
                self.state_vec = new_state
            else:
                g.reset(self.state_vec, self._deal_seed)
            self._started, self._over = True, False
            self._refresh()
            self._play_opponents()
            if self.state_vec[PHASE] != P_DONE:
                break
            if custom:
                raise ValueError("the custom deal ends before the learner's first decision")
            self._skipped += 1
            if self._skipped >= MAX_SKIPPED_DEALS:
                raise RuntimeError(f"{g.info.name}: {MAX_SKIPPED_DEALS} deals in a row ended "
                                   f"before the learner's seats {self.seats} moved")
        self._seat = int(self.state_vec[CUR])
        if self.render_mode == "human":
            self.render()
        return self._observation(self._seat), self._info()

    def _action_id(self, action: Union[int, np.integer, np.ndarray]) -> int:
        """``action`` as an int id, once the game is started and not over (a ``ValueError``
        otherwise; a ``TypeError`` for anything but an integer or a 0-d integer array)."""
        if not self._started:
            raise ValueError("call reset() before step()")
        if self._over:
            raise ValueError("the game is over; call reset()")
        if (isinstance(action, np.ndarray) and action.shape == ()
                and np.issubdtype(action.dtype, np.integer)):
            action = int(action)
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise TypeError(f"action must be an int action id, got {type(action).__name__}")
        return int(action)

    def step(self, action: Union[int, np.integer, np.ndarray]
             ) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Play the learner's ``action``, then the opponents up to its next decision.

        Returns:
            ``(observation, reward, terminated, truncated, info)``: the reward is what the
            game paid the learner from this action until its next decision (or the end).
        """
        action = self._action_id(action)
        g = self.game
        s = self.state_vec
        if not 0 <= action < g.n_actions:
            raise ValueError(f"action {action} is outside the action space [0, {g.n_actions})")
        seat = int(s[CUR])
        if not self._is_learner[seat]:
            raise ValueError(f"seat {seat}, an opponent's, is to move: the previous call did not "
                             f"finish (an opponent policy raised?); call reset()")
        self._seat = seat
        if not g.is_legal(s, action):
            if self.illegal == "raise":
                legal = self._legal()
                shown = ", ".join(g.action_to_string(int(a)) for a in legal[:8])
                more = "" if len(legal) <= 8 else f", ... ({len(legal)} in all)"
                raise ValueError(f"illegal action {action} ({g.action_to_string(action)!r}) for "
                                 f"seat {seat}; legal: {shown}{more}")
            self._over = True
            self._n_legal = 0
            info = self._info()
            info["illegal_move"] = True
            info["final_rewards"] = np.zeros(self.n_players)  # the game paid nobody
            return self._observation(seat), self.illegal_reward, True, False, info
        g._step_checked(s, action)
        reward = self._paid()
        self._refresh()
        reward += self._play_opponents()
        if s[PHASE] == P_DONE:
            self._over = True
            obs = self._observation(seat)
        else:
            self._seat = int(s[CUR])
            obs = self._observation(self._seat)
        if self.render_mode == "human":
            self.render()
        return obs, reward, self._over, False, self._info()

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner's seat to move as a bool ``(A,)`` array (all False
        once the game is over)."""
        mask = np.zeros(self.game.n_actions, np.bool_)
        if self._started and not self._over:
            mask[self._legal()] = True
        return mask

    def legal_actions(self) -> np.ndarray:
        """The learner's legal action ids (a copy; empty once the game is over)."""
        if not self._started or self._over:
            return np.zeros(0, np.int64)
        return self._legal().copy()

    # gymnasium types the return with a TypeVar that no argument binds: no concrete type matches
    def render(self) -> Union[str, np.ndarray, None]:  # type: ignore[override]
        """The table: text for ``"ansi"``, printed for ``"human"`` (``None``), an image for
        ``"rgb_array"``."""
        from .core.render import render_for

        return render_for(self)

    def close(self) -> None:
        """Nothing to release (gymnasium API)."""

    # -- pickling: the compiled game is rebuilt from its registry name and options ----------------
    def __getstate__(self):
        d = dict(self.__dict__)
        d.pop("game")
        return d

    def __setstate__(self, d):
        from .api import make_game

        self.__dict__.update(d)
        name, options = d["_spec"]
        self.game = make_game(name, **options)

