"""The compact action space (:mod:`cardenvs.core.compact`) for the single-agent views and for
agents that decide whole plays.

* :class:`CompactSeatEnv`: :class:`cardenvs.wrappers.SeatEnv` whose learner decides in the
  compact space (``SeatEnv(game, actions="compact")`` and the gymnasium ids with
  ``actions="compact"`` build one).  A body with kickers and every kicker but the last are
  steps of their own: the same seat moves again, reward 0, the observation carries the partial
  play.  The opponents decide whole plays (flat ids), as in the flat view.
* :class:`CompactAdapter`: an agent that decides whole plays (``act(observation, legal_ids)``
  over flat ids) driven by a compact environment: it is asked once per play, with the flat
  observation and the flat legal ids, and its play is fed to the env part by part.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
from gymnasium import spaces

from .core.compact import Pending, codec_of
from .core.state import CUR
from .wrappers import SeatEnv


class CompactSeatEnv(SeatEnv):
    """:class:`cardenvs.wrappers.SeatEnv` with the learner's decisions in the compact space.

    Spaces: ``Box(0, 1, (D + E,), float32)`` observations (the flat observation, then the
    :attr:`cardenvs.core.compact.Codec.obs_extra` partial-play fields) and
    ``Discrete(codec.n)`` actions; :meth:`action_masks` and ``info["action_mask"]`` are
    compact.  ``env.history`` is not kept here; :attr:`last_play` is the flat id of the
    learner's last complete action.
    """

    def __init__(self, *args: Any, actions: str = "compact", **kwargs: Any):
        super().__init__(*args, **kwargs)
        g = self.game
        self.actions = "compact"
        self.codec = codec_of(g)
        self._compact = Pending(self.codec)
        self._flat_size = g.layout.size
        self.observation_space = spaces.Box(0.0, 1.0, (g.layout.size + self.codec.obs_extra,),
                                            np.float32)
        self.action_space = spaces.Discrete(self.codec.n)
        self.last_play = -1

    def _refresh(self) -> None:
        super()._refresh()
        p = getattr(self, "_compact", None)
        if p is not None:
            if self._n_legal:
                p.start(self._legal_buf, self._n_legal)
            else:
                p.clear()

    def _extend(self, obs: np.ndarray) -> np.ndarray:
        out = np.empty(self._flat_size + self.codec.obs_extra, np.float32)
        out[: self._flat_size] = obs
        self.codec.encode(self._compact, out[self._flat_size:])
        return out

    def _info(self) -> dict:
        info = super()._info()
        p = self._compact
        mask = np.zeros(self.codec.n, np.int8)
        if not self._over:
            mask[p.legal[: p.n_legal]] = 1
        info["action_mask"] = mask
        if self.info_legal_actions:
            info["legal_actions"] = (np.zeros(0, np.int64) if self._over
                                     else p.legal[: p.n_legal].copy())
        return info

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        obs, info = super().reset(seed=seed, options=options)
        return self._extend(obs), info

    def step(self, action):
        action = self._action_id(action)
        c = self.codec
        p = self._compact
        if not 0 <= action < c.n:
            raise ValueError(f"action {action} is outside the compact action space [0, {c.n})")
        seat = int(self.state_vec[CUR])
        if not p.is_offered(action):
            if self.illegal == "raise":
                shown = ", ".join(c.to_string(int(a)) for a in p.legal[: min(p.n_legal, 8)])
                more = "" if p.n_legal <= 8 else f", ... ({p.n_legal} in all)"
                raise ValueError(f"illegal action {action} ({c.to_string(action)!r}) for seat "
                                 f"{seat}; legal: {shown}{more}")
            p.clear()
            self._over = True
            self._n_legal = 0
            info = self._info()
            info["illegal_move"] = True
            info["final_rewards"] = np.zeros(self.n_players)
            return self._extend(self._observation(seat)), self.illegal_reward, True, False, info
        flat = p.choose(action, self._legal_buf, self._n_legal)
        if flat < 0:  # kickers to come: the same seat decides again
            return self._extend(self._observation(seat)), 0.0, False, False, self._info()
        self.last_play = flat
        obs, reward, done, trunc, info = super().step(flat)
        return self._extend(obs), reward, done, trunc, info

    def action_masks(self) -> np.ndarray:
        """The learner's compact legal actions as a bool ``(codec.n,)`` array."""
        mask = np.zeros(self.codec.n, np.bool_)
        if self._started and not self._over:
            p = self._compact
            mask[p.legal[: p.n_legal]] = True
        return mask

    def legal_actions(self) -> np.ndarray:
        """The learner's compact legal ids (a copy; empty once the game is over)."""
        if not self._started or self._over:
            return np.zeros(0, np.int64)
        p = self._compact
        return p.legal[: p.n_legal].copy()

    def flat_legal_actions(self) -> np.ndarray:
        """The flat ids of the whole actions that complete the learner's partial play."""
        if not self._started or self._over:
            return np.zeros(0, np.int64)
        p = self._compact
        if p.body >= 0:
            return np.sort(p.cand[: p.nc])
        return self._legal().copy()

    def flat_observation(self) -> dict:
        """The learner's flat observation dict (what agents deciding whole plays take)."""
        seat = self._seat
        mask = np.zeros(self.game.n_actions, np.int8)
        mask[self.flat_legal_actions()] = 1
        return {"observation": self._observation(seat), "action_mask": mask}


class CompactAdapter:
    """Drive a compact environment with an agent that decides whole plays.

    ``agent`` has ``act(observation, legal_ids) -> flat id`` (the ``cardenvs.agents``
    interface) or is a callable of the same arguments.  :meth:`act` takes the compact env
    (an AEC env with ``actions="compact"`` or a :class:`CompactSeatEnv`) and returns the
    compact id to step now: at the first decision of a play the agent is asked for a whole
    play (given the flat observation and the flat legal ids), and its parts are returned one
    call at a time until the play is complete.
    """

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self._queue: list[int] = []

    def act(self, env: Any, agent_name: Optional[str] = None) -> int:
        u = getattr(env, "unwrapped", env)
        if self._queue:
            return self._queue.pop(0)
        codec = u.codec
        legal = u.flat_legal_actions()
        if isinstance(u, CompactSeatEnv):
            obs = u.flat_observation()
        else:
            seat = agent_name or u.agent_selection
            g = u.game
            o = np.empty(g.layout.size, np.float32)
            g.encode(u.state_vec, u._index[seat], o)
            mask = np.zeros(g.n_actions, np.int8)
            mask[legal] = 1
            obs = {"observation": o, "action_mask": mask}
        act = getattr(self.agent, "act", None)
        flat = int(act(obs, legal) if callable(act) else self.agent(obs, legal))
        if flat not in set(legal.tolist()):
            raise ValueError(f"the agent chose {flat}, which is not a legal whole action here")
        parts = codec.parts(flat)
        p = u._compact
        if p.body >= 0:  # a partial play already chosen: only the parts still to come
            parts = parts[1 + p.j:]
        self._queue = parts[1:]
        return parts[0]

    def reset(self) -> None:
        self._queue = []


def compact_seat_vec_env(game: Any, n_envs: int, seats: Any = 0, opponents: Any = "random", *,
                         seed: Optional[int] = None, illegal: str = "lose",
                         illegal_reward: float = -1.0, info_legal_actions: bool = False,
                         max_legal: Optional[int] = None, **options: Any):
    """An SB3 ``VecEnv`` of ``n_envs`` :class:`CompactSeatEnv` games with
    :class:`cardenvs.sb3.SeatVecEnv`'s conventions (what ``SeatVecEnv(..., actions="compact")``
    builds): automatic reset, ``infos[i]["action_mask"]`` (compact), ``terminal_observation``,
    ``episode`` and ``final_rewards`` at the end of a game, :meth:`action_masks`; game ``i``
    is seeded as :func:`cardenvs.vector.slot_seeds` derives slot ``i``'s seed from ``seed``.
    ``max_legal`` is accepted for the flat engine's signature and unused (a compact legal set
    is at most ``codec.n``)."""
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv

    from .vector import slot_seeds

    class CompactSeatVecEnv(VecEnv):
        """SB3 ``VecEnv`` over ``CompactSeatEnv`` games (see :func:`compact_seat_vec_env`)."""

        def __init__(self) -> None:
            self.envs = [CompactSeatEnv(game, seats, opponents, illegal=illegal,
                                        illegal_reward=illegal_reward,
                                        info_legal_actions=info_legal_actions, **options)
                         for _ in range(n_envs)]
            e = self.envs[0]
            self.game = e.game
            self.codec = e.codec
            self.seats = e.seats
            self.render_mode = None
            super().__init__(n_envs, e.observation_space, e.action_space)
            self._seed0 = seed
            self._started = False
            self._actions = np.zeros(n_envs, np.int64)
            self._ep_ret = np.zeros(n_envs)
            self._ep_len = np.zeros(n_envs, np.int64)

        def reset(self):
            seeds = self._seeds
            if all(x is not None for x in seeds):
                first = [int(x) for x in seeds]
            elif not self._started and self._seed0 is not None:
                first = [int(x) for x in slot_seeds(self._seed0, self.num_envs)]
            else:
                first = [None] * self.num_envs
            out = []
            infos = []
            for e, sd in zip(self.envs, first):
                o, info = e.reset(seed=sd)
                out.append(o)
                infos.append(info)
            self._reset_seeds()
            self._started = True
            self._ep_ret[:] = 0.0
            self._ep_len[:] = 0
            self.reset_infos = infos
            return np.stack(out)

        def step_async(self, actions) -> None:
            acts = np.asarray(actions).reshape(-1)
            if acts.shape != (self.num_envs,) or not np.issubdtype(acts.dtype, np.integer):
                raise ValueError(f"actions must be {self.num_envs} integers, got shape "
                                 f"{np.asarray(actions).shape}")
            self._actions = acts.astype(np.int64)

        def step_wait(self):
            if not self._started:
                raise ValueError("call reset() before step()")
            obs, rews, dones, infos = [], np.zeros(self.num_envs, np.float32), \
                np.zeros(self.num_envs, bool), []
            for i, e in enumerate(self.envs):
                o, r, d, _, info = e.step(int(self._actions[i]))
                self._ep_ret[i] += r
                self._ep_len[i] += 1
                rews[i] = r
                if d:
                    info["terminal_observation"] = o
                    info["episode"] = {"r": float(self._ep_ret[i]), "l": int(self._ep_len[i])}
                    self._ep_ret[i] = 0.0
                    self._ep_len[i] = 0
                    o, new = e.reset()
                    info["action_mask"] = new["action_mask"]
                    dones[i] = True
                obs.append(o)
                infos.append(info)
            return np.stack(obs), rews, dones, infos

        def action_masks(self) -> np.ndarray:
            """The learner's compact legal actions in every game, ``(n_envs, codec.n)`` bool."""
            return np.stack([e.action_masks() for e in self.envs])

        def legal_actions(self, i: int) -> np.ndarray:
            return self.envs[i].legal_actions()

        def close(self) -> None:
            pass

        def get_attr(self, attr_name: str, indices=None) -> list:
            return [getattr(self.envs[i], attr_name) for i in self._get_indices(indices)]

        def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
            for i in self._get_indices(indices):
                setattr(self.envs[i], attr_name, value)

        def env_method(self, method_name: str, *method_args, indices=None, **kw) -> list:
            return [getattr(self.envs[i], method_name)(*method_args, **kw)
                    for i in self._get_indices(indices)]

        def env_is_wrapped(self, wrapper_class, indices=None) -> list:
            return [False] * len(list(self._get_indices(indices)))

        def get_images(self):
            return [None] * self.num_envs

    return CompactSeatVecEnv()
