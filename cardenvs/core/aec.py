"""The PettingZoo AEC environment shared by every game.

One class, no wrapper stack: it does natively what PettingZoo's ``OrderEnforcingWrapper``,
``AssertOutOfBoundsWrapper`` and ``TerminateIllegalWrapper`` do (those wrappers' attribute
forwarding alone costs about 85 us a step), and it passes ``pettingzoo.test.api_test``.

Conventions shared by every game:

* agents ``player_0 .. player_{n-1}`` by seat; roles are in the observation and ``info``;
* ``observe(agent)`` returns ``{"observation": float32[D], "action_mask": int8[N]}``, fresh
  arrays every call; the mask is all zeros for agents not to move;
* infos are fixed-shape and numeric by default: every entry of ``infos[agent]`` is a number
  or a list with one number per seat, so libraries that stack infos across steps or envs or
  make tensors of them (Tianshou's ``Collector``, ``gymnasium.vector``, TorchRL's
  ``PettingZooWrapper``) can; a categorical entry (``info["phase"]``: its index in the env's
  ``PHASES``) is a :class:`cardenvs.core.infocode.Named` int, which prints as its name and
  compares equal to it (``info["phase"] == "play"``); the legal action ids of the agent to
  move are :meth:`CardEnv.legal_actions` (or the mask's set entries).  With
  ``info_legal_actions=True`` they are also in ``infos[agent]["legal_actions"]`` (an ``int64``
  array of varying length; empty at the end of the game);
* an illegal action: by default (``illegal="lose"``) the game ends, the mover gets
  ``illegal_reward`` (-1) and everyone else 0, and ``infos[mover]["illegal_move"]`` is True;
  with ``illegal="raise"`` a ``ValueError`` names the action and the state is unchanged;
* an action outside the action space, of a wrong type, a step before ``reset`` or after every
  agent is done raise ``ValueError`` / ``TypeError``;
* ``reset(seed=s)`` seeds a ``numpy.random.Generator``; each deal is dealt by the numba kernel
  from a 63-bit seed drawn from it, so the same seed and actions always give the same game;
* pickling keeps the whole game (state, generator, agents), and ``get_state`` /
  ``set_state`` clone a position for search.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional, Sequence, Union

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv

from . import compact as _compact
from .game import Game
from .mask import ActionMask, ones_writer
from .infocode import Named, named_codes
from .options import check_seed, set_env_args
from .state import CUR, P_DONE, PHASE, REW0
from .render import RENDER_FPS, RENDER_MODES

_MAX_SEED = 2**63 - 1
#: what :meth:`CardEnv.replay` needs to re-deal a game: ``(seed, the generator's state when no
#: seed was given, the deal's seed, the custom deal's options)``
_ReplayStart = tuple[Optional[int], Optional[Mapping[str, Any]], int, Optional[dict]]
_SNAPSHOT_KEYS = ("state", "agents", "rewards", "cumulative", "terminations", "truncations",
                  "infos", "agent_selection", "history", "legal", "started")


class CardEnv(AECEnv, EzPickle):
    """Base AEC environment over a :class:`cardenvs.core.game.Game`.

    Args:
        render_mode: ``None``, ``"ansi"`` (:meth:`render` returns the table as text),
            ``"human"`` (prints it after every step) or ``"rgb_array"`` (returns it as an
            ``(H, W, 3)`` ``uint8`` image, one size for every position of a game).
        illegal: ``"lose"`` (default, PettingZoo's convention): an illegal action ends the
            game, the mover gets ``illegal_reward`` and ``infos[mover]["illegal_move"]`` is
            True; ``"raise"``: a ``ValueError`` naming the action, the game unchanged.
        illegal_reward: the mover's reward for an illegal action (``-1``).
        info_legal_actions: also put the legal action ids (a varying-length ``int64``
            array) in ``infos[agent]["legal_actions"]``; off by default so that infos keep
            a fixed shape (see the module docstring).
        actions: ``"flat"`` (default: one id per whole action) or ``"compact"``: a play
            with kickers is its body, then each kicker, as decisions of the same seat
            (rewards 0 between; the partial play in the mover's observation only; the
            history records the whole play's flat id; see :mod:`cardenvs.core.compact`).
        **options: the game's options.
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": RENDER_FPS,
                "name": "cardenv_v0", "is_parallelizable": False}
    game_class: type = Game
    #: the registry name of the game (:mod:`cardenvs.registry`), set by the class keyword of a
    #: game's environment: ``class raw_env(CardEnv, game="wakeng")``
    game_name: Optional[str] = None
    #: the names of ``info["phase"]``'s values (the state's phase codes): ``info["phase"]`` is
    #: the index of its name here, a :class:`cardenvs.core.infocode.Named` int
    PHASES: tuple[str, ...] = ("auction", "play", "done")
    _phase_codes: tuple[Named, ...] = named_codes(PHASES)

    def __init_subclass__(cls, game: Optional[str] = None, **kwargs: Any) -> None:
        """``class raw_env(CardEnv, game=NAME)``: the environment of registered game ``NAME``
        (its ``metadata["name"]`` is the registry's ``env_module``, :meth:`make_game` builds
        the registry's game class)."""
        super().__init_subclass__(**kwargs)
        cls._phase_codes = named_codes(cls.PHASES)
        if game is not None:
            from ..registry import spec

            cls.game_name = game
            cls.metadata = {**cls.metadata, "name": spec(game).env_module}

    def __init__(self, render_mode: Optional[str] = None, illegal: str = "lose",
                 illegal_reward: float = -1.0, info_legal_actions: bool = False,
                 actions: str = "flat", **options: Any):
        EzPickle.__init__(self, render_mode=render_mode, illegal=illegal,
                          illegal_reward=illegal_reward, info_legal_actions=info_legal_actions,
                          actions=actions, **options)
        self.actions = _compact.check_actions(actions)
        super().__init__()
        set_env_args(self, render_mode, illegal, illegal_reward, info_legal_actions)
        self.game: Game = self.make_game(**options)
        g = self.game
        n = g.n_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agents: list[str] = []
        self.rewards: dict = {}
        self._cumulative_rewards: dict = {}
        self.terminations: dict = {}
        self.truncations: dict = {}
        self.infos: dict = {}
        self._index = {a: i for i, a in enumerate(self.possible_agents)}
        obs_space = spaces.Dict({
            "observation": spaces.Box(0.0, 1.0, (g.layout.size,), np.float32),
            "action_mask": spaces.Box(0, 1, (g.n_actions,), np.int8),
        })
        agents = self.possible_agents
        self.observation_spaces: dict[str, spaces.Dict] = {a: obs_space for a in agents}
        self.action_spaces: dict[str, spaces.Discrete] = {a: spaces.Discrete(g.n_actions)
                                                          for a in agents}
        self.state_vec = g.new_state()
        self._legal_buf = np.zeros(g.n_actions, np.int64)
        self._n_legal = 0
        # the hot path (step, _after_move, observe) calls the game's compiled kernels directly
        # (Game.entry_points, None until each has been called through its checked method) on
        # the state vector this env made itself (_own_state; a state_vec assigned from
        # outside goes through the checked methods); the kernels' constant arguments:
        self._fast: Optional[tuple[Callable, Callable, Callable, Callable]] = None
        self._own_state = self.state_vec
        self._tab, self._opts, self._offsets = g.tab, g.opts, g.offsets
        self._n_actions = g.n_actions
        self._obs_size = g.layout.size
        self._rew_slice = slice(REW0, REW0 + n)
        self._set_ones = ones_writer()  # observe's mask of the legal ids
        self.np_random = np.random.default_rng()
        self._np_random_seed: Optional[int] = None
        self._started = False
        self.history: list[int] = []
        self._replay_start: Optional[_ReplayStart] = None
        # compact mode: the mover's partial play (cardenvs.core.compact)
        self._compact: Optional[_compact.Pending] = None
        if self.actions == "compact":
            _compact.attach(self)

    # -- construction hook -----------------------------------------------------------------------
    @classmethod
    def make_game(cls, **options: Any) -> Game:
        """A new game of this environment with ``options`` (the registry's game class)."""
        if cls.game_name is None:
            raise NotImplementedError(f"{cls.__name__} names no game: declare it as "
                                      f"class {cls.__name__}(CardEnv, game=NAME)")
        from ..registry import spec

        return spec(cls.game_name).make(**options)

    # -- spaces ------------------------------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Dict:
        """The observation space of ``agent``: ``observation`` and ``action_mask`` boxes."""
        return self.observation_spaces[self._check_agent(agent)]

    def action_space(self, agent: str) -> spaces.Discrete:
        """The action space of ``agent``: the action ids (compact ids in compact mode)."""
        return self.action_spaces[self._check_agent(agent)]

    def _check_agent(self, agent: object) -> str:
        if agent not in self._index:
            raise self._unknown_agent(agent)
        return agent

    def _unknown_agent(self, agent: object) -> ValueError:
        return ValueError(f"unknown agent {agent!r}; agents are {', '.join(self.possible_agents)}")

    # -- API ---------------------------------------------------------------------------------------
    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None) -> None:
        """Deal a new game.

        Args:
            seed: seeds the env's generator (``None``: the generator keeps running).
            options: a custom deal, by the game's deal keys (``None``: a random deal).
        """
        if seed is not None:
            check_seed(seed)
        saved = (self.np_random, self._np_random_seed, self.np_random.bit_generator.state)
        if seed is not None:
            self.np_random = np.random.default_rng(seed)
            self._np_random_seed = seed
        deal_seed = int(self.np_random.integers(0, _MAX_SEED))
        try:
            self._deal(deal_seed, options)
        except Exception:
            # a rejected custom deal leaves the running game and the generator untouched
            self.np_random, self._np_random_seed, state = saved
            self.np_random.bit_generator.state = state
            raise
        # what replay() needs to re-deal this game exactly (cardenvs.replay)
        self._replay_start = (seed, saved[2] if seed is None else None, deal_seed,
                              dict(options) if options else None)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.history = []
        self._started = True
        self._after_move()

    def _deal(self, deal_seed: int, options: Optional[dict]) -> None:
        g = self.game
        if options is not None and not isinstance(options, dict):
            raise TypeError(f"options must be a dict, got {type(options).__name__}")
        if options and not set(options) & set(g.deal_keys):
            import gymnasium

            gymnasium.logger.warn(
                f"reset(options=...) ignored: none of the deal keys {list(g.deal_keys)} given "
                f"(got {sorted(map(str, options))})"
            )
            options = None
        if options:
            new_state = g.new_state()
            g.custom_deal(new_state, options, deal_seed)  # validates before touching self
            self.state_vec = self._own_state = new_state
        else:
            g.reset(self.state_vec, deal_seed)

    def _after_move(self) -> None:
        """Refresh the mover, legal ids, infos; end the game when the state says so."""
        g = self.game
        s = self.state_vec
        if s.item(PHASE) == P_DONE:  # g.done(s)
            r = g.rewards(s)
            for i, a in enumerate(self.possible_agents):
                if a in self.rewards:
                    self.rewards[a] = float(r[i])
                    self.terminations[a] = True
            self._accumulate_rewards()
            self._clear_legal()
            return
        if any(s[self._rew_slice].tolist()):  # a payout before the end (a match)
            r = g.rewards(s)
            for i, a in enumerate(self.possible_agents):
                if a in self.rewards:
                    self.rewards[a] = float(r[i])
            self._accumulate_rewards()
        agent = self.agent_selection = self.possible_agents[s.item(CUR)]  # g.current(s)
        fast = self._fast
        if fast is not None and s is self._own_state:
            self._n_legal = fast[2](s, self._tab, self._opts, self._legal_buf)
        else:
            self._n_legal = g.legal(s, self._legal_buf)
            if fast is None:
                self._fast = g.entry_points()
        info = self.infos[agent]
        if self.info_legal_actions:
            info["legal_actions"] = self._legal_buf[: self._n_legal].copy()
        self._extra_info(info)
        if self._compact is not None:
            _compact.refresh(self)

    def _extra_info(self, info: dict) -> None:
        """Game-specific public info for the agent to move (roles, phase)."""

    def phase(self) -> Named:
        """The phase of the game (``info["phase"]``): its index in :attr:`PHASES`, a
        :class:`cardenvs.core.infocode.Named` int that prints as the name."""
        return self._phase_codes[self.state_vec.item(PHASE)]

    def observe(self, agent: str) -> dict:
        """``{"observation": float32[D], "action_mask": int8[N]}`` of ``agent`` (fresh
        arrays; the mask is all zeros unless ``agent`` is to move)."""
        seat = self._index.get(agent)
        if seat is None:
            raise self._unknown_agent(agent)
        if not self._started:
            raise ValueError("call reset() before observe()")
        if self._compact is not None:
            return _compact.observe(self, agent, seat)
        obs = np.empty(self._obs_size, np.float32)
        s = self.state_vec
        fast = self._fast
        if fast is not None and s is self._own_state:
            fast[3](s, seat, self._tab, self._opts, self._offsets, obs)
        else:
            self.game.encode(s, seat, obs)
        # legal ids exist only while the game is on (_after_move, _clear_legal, set_state);
        # int8, and np.flatnonzero of it takes a fast path (cardenvs.core.mask)
        m = np.zeros(self._n_actions, np.int8)
        if self._n_legal and agent == self.agent_selection:
            self._set_ones(m, self._legal_buf, self._n_legal)  # m[legal ids] = 1
        return {"observation": obs, "action_mask": m.view(ActionMask)}

    def legal_actions(self) -> np.ndarray:
        """Legal action ids of the agent to move (a copy; compact ids in compact mode)."""
        if self._compact is not None:
            return self._compact.legal[: self._compact.n_legal].copy()
        return self._legal_buf[: self._n_legal].copy()

    def flat_legal_actions(self) -> np.ndarray:
        """The flat ids of the whole actions legal now: in compact mode those that complete
        the mover's partial play (all legal ids when none is pending); else
        :meth:`legal_actions`."""
        if self._compact is not None:
            return _compact.flat_legal(self)
        return self._legal_buf[: self._n_legal].copy()

    def legal_play_features(self) -> tuple[np.ndarray, np.ndarray]:
        """Legal action ids and per-action features for (state, action) scoring agents.

        Returns ``(ids, features)`` where ``features[i]`` describes action ``ids[i]``
        (layout in :meth:`cardenvs.core.game.Game.action_features`: card planes, family,
        chain length, key, bomb flag, then one slot per non-play action such as pass or a bid).
        """
        ids = self.legal_actions()
        return ids, self.game.action_features(ids)

    def step(self, action: Union[int, np.integer, np.ndarray, None]) -> None:
        """Play ``action`` (an action id; ``None`` for an agent that is done) for the agent
        to move."""
        if not self._started:
            raise ValueError("call reset() before step()")
        if not self.agents:
            raise ValueError("the game is over and every agent has stepped out; call reset()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            if action is not None:
                raise ValueError(f"{agent} is done; step(None) for it (PettingZoo dead step)")
            self._was_dead_step(action)
            return
        if type(action) is not int:  # the usual case, a plain int, needs no conversion
            action = _action_int(agent, action)
        g = self.game
        s = self.state_vec
        fast = self._fast if s is self._own_state else None
        if self._compact is not None:  # a body or a kicker: the whole play's flat id, or -1
            action = _compact.step(self, agent, action)
            if action < 0:
                return
            fast = None  # (the checked path below: a numpy int from the codec)
            # a completed play is one of the flat legal ids the offered decisions came from
        elif not 0 <= action < self._n_actions:
            raise ValueError(f"action {action} is outside the action space [0, {g.n_actions})")
        elif not (fast[0](s, action, self._tab, self._opts) if fast is not None
                  else g.is_legal(s, action)):
            if self.illegal == "raise":  # nothing changes, the pending reward included
                shown = ", ".join(g.action_to_string(a) for a in self._legal_buf[: min(self._n_legal, 8)])
                more = "" if self._n_legal <= 8 else f", ... ({self._n_legal} in all)"
                raise ValueError(
                    f"illegal action {action} ({g.action_to_string(action)!r}) for {agent}; "
                    f"legal: {shown}{more}"
                )
            self._cumulative_rewards[agent] = 0.0
            self._terminate_illegal(agent)
            return
        self._cumulative_rewards[agent] = 0.0
        self.history.append(action)
        if fast is not None:
            fast[1](s, action, self._tab, self._opts)
        else:
            g._step_checked(s, action)
        rewards = self.rewards
        for a in rewards:
            rewards[a] = 0.0
        self._after_move()
        if self.render_mode == "human":
            self.render()

    def _terminate_illegal(self, agent: str) -> None:
        for a in self.agents:
            self.rewards[a] = 0.0
            self.terminations[a] = True
        self.rewards[agent] = self.illegal_reward
        self._clear_legal()
        self.infos[agent]["illegal_move"] = True
        self._accumulate_rewards()

    def _clear_legal(self) -> None:
        """At the end of a game no agent has legal actions; infos say so."""
        self._n_legal = 0
        if self._compact is not None:
            self._compact.clear()
        empty = np.zeros(0, np.int64)
        for a in self.agents:
            info = self.infos[a]
            if self.info_legal_actions:
                info["legal_actions"] = empty
            self._extra_info(info)

    def render(self) -> Union[str, np.ndarray, None]:
        """The table: text for ``"ansi"``, printed for ``"human"`` (``None``), an image for
        ``"rgb_array"``."""
        from .render import render_for

        return render_for(self)

    def close(self) -> None:
        """Nothing to release (PettingZoo API)."""

    # -- helpers for people and search -------------------------------------------------------------
    def action_to_string(self, action: int) -> str:
        """Readable form of an action id (cards in the rules notation, ``pass``, ``bid 2``...)."""
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise TypeError(f"action must be an int, got {type(action).__name__}")
        return self.game.action_to_string(int(action))

    def string_to_action(self, text: str) -> int:
        """Inverse of :meth:`action_to_string`; raises ``ValueError`` for unknown strings."""
        return self.game.string_to_action(text)

    def replay(self, players: Optional[Sequence[str]] = None, meta: Optional[dict] = None) -> dict:
        """The game so far as a replay (the JSON-ready dict of :mod:`cardenvs.replay`):
        options, seed, every deal, every action with the cards it moved, rewards.

        ``players``: optional names per seat (e.g. the agents); ``meta``: extra JSON data.
        """
        from ..replay import replay_of

        return replay_of(self, players=players, meta=meta)

    def get_state(self) -> dict:
        """A snapshot of the whole game for search (restore with :meth:`set_state`)."""
        return {
            "state": self.state_vec.copy(),
            "agents": list(self.agents),
            "rewards": dict(self.rewards),
            "cumulative": dict(self._cumulative_rewards),
            "terminations": dict(self.terminations),
            "truncations": dict(self.truncations),
            "infos": {a: dict(v) for a, v in self.infos.items()},
            "agent_selection": getattr(self, "agent_selection", None),
            "history": list(self.history),
            "legal": self._legal_buf[: self._n_legal].copy(),
            "started": self._started,
            "replay_start": self._replay_start,
            "compact": None if self._compact is None else self._compact.snapshot(),
        }

    def set_state(self, snap: dict) -> None:
        """Restore a snapshot of :meth:`get_state` (of this game and option set).

        Everything is checked before anything changes: the state vector by
        :meth:`cardenvs.core.game.Game.check_state` (a ``ValueError`` names the bad field or
        the other game / option set it came from), the snapshot's keys and agents.  The legal
        actions are recomputed from the state, not taken from the snapshot.
        """
        if not isinstance(snap, dict):
            raise TypeError(f"set_state takes a dict from get_state(), got {type(snap).__name__}")
        missing = [k for k in _SNAPSHOT_KEYS if k not in snap]
        if missing:
            raise ValueError(f"not a get_state() snapshot: missing {', '.join(missing)}")
        g = self.game
        if not snap["started"] and np.array_equal(snap["state"], g.new_state()):
            state = g.new_state()  # an env never reset: its blank state, no position yet
        else:
            state = g.check_state(snap["state"]).copy()
        agents = list(snap["agents"])
        for a in agents:
            self._check_agent(a)
        sel = snap["agent_selection"]
        if sel is not None:
            self._check_agent(sel)
        terms = dict(snap["terminations"])
        live = bool(agents) and not g.done(state) and not any(terms.get(a) for a in agents)
        if live and sel != self.possible_agents[g.current(state)]:
            raise ValueError(f"snapshot's agent_selection {sel!r} is not the seat to move in its "
                             f"state ({self.possible_agents[g.current(state)]})")
        if self._compact is not None and live:  # a partial play checked before any change
            _compact.check_snapshot(self, state, snap.get("compact"))
        self.state_vec = self._own_state = state
        self.agents = agents
        self.rewards = dict(snap["rewards"])
        self._cumulative_rewards = dict(snap["cumulative"])
        self.terminations = terms
        self.truncations = dict(snap["truncations"])
        self.infos = {a: dict(v) for a, v in snap["infos"].items()}
        if sel is not None:
            self.agent_selection = sel
        self.history = list(snap["history"])
        self._n_legal = g.legal(state, self._legal_buf) if live else 0
        self._started = bool(snap["started"])
        self._replay_start = snap.get("replay_start")
        if self._compact is not None:  # the partial play, each decision checked again
            self._compact.restore(snap.get("compact") if live else None, self._legal_buf,
                                  self._n_legal)

    def __getstate__(self):
        d = EzPickle.__getstate__(self)
        d["_snapshot"] = self.get_state()
        d["_rng"] = self.np_random.bit_generator.state
        return d

    def __setstate__(self, d):
        snap = d.pop("_snapshot", None)
        rng = d.pop("_rng", None)
        EzPickle.__setstate__(self, d)
        if snap is not None:
            self.set_state(snap)
        if rng is not None:
            self.np_random.bit_generator.state = rng


def _action_int(agent: str, action: Any) -> int:
    """``action`` (anything but a plain ``int``) as an action id: a numpy integer or a 0-d
    integer array; ``None``, a bool or anything else is a ``TypeError``."""
    if action is None:
        raise TypeError(f"{agent} must act: action is None but the game is not over")
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        if isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
            return int(action)
        raise TypeError(f"action must be an int action id, got {type(action).__name__}")
    return int(action)


def env_function(raw_env: type) -> Callable[..., CardEnv]:
    """The ``env()`` function of a game's environment page (``cardenvs/<game>_v0.py``):
    ``env = env_function(raw_env)`` there.  It pickles by name as ``<module>.env``."""

    def env(**kwargs: Any) -> CardEnv:
        """Create the environment (PettingZoo convention; no wrappers are needed or added)."""
        return raw_env(**kwargs)

    env.__module__ = raw_env.__module__
    env.__qualname__ = "env"
    env.__annotations__ = {"kwargs": Any, "return": raw_env}
    return env


def env_doc(doc: str, layout: Any) -> str:
    """A game environment page's module docstring with its observation table: ``{layout}``
    becomes ``layout.markdown()`` and ``{obs_size}`` its size (``1,234``)."""
    return doc.replace("{layout}", layout.markdown()).replace("{obs_size}", f"{layout.size:,}")
