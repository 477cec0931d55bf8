"""A Stable-Baselines3 ``VecEnv`` over the batched engine: :class:`SeatVecEnv`.

``SeatVecEnv(game, n_envs)`` is :class:`cardenvs.wrappers.SeatEnv` for ``n_envs`` games at
once, in one process, on :class:`cardenvs.vector.VectorGame`: the learner plays ``seats`` of
every game, the opponents' moves are played inside (random opponents entirely in numba), and
``sb3_contrib.MaskablePPO`` trains on it directly, masks included::

    from sb3_contrib import MaskablePPO
    from cardenvs.sb3 import SeatVecEnv

    venv = SeatVecEnv("wakeng", 64, seed=0)
    model = MaskablePPO("MlpPolicy", venv, n_steps=128).learn(100_000)

Needs the ``train`` extra (``pip install cardenvs[train]``: stable-baselines3, sb3-contrib,
torch).

Conventions (as :class:`~cardenvs.wrappers.SeatEnv`, batched):

* observations ``(n_envs, D)`` float32: each game's observation for the learner's seat to
  move (fresh arrays each step);
* rewards: what each game paid the learner from its last action until its next decision or
  the end of the game (opponents' moves included); for a team, the mean of its seats';
* ``infos[i]["action_mask"]`` (every step, and ``reset_infos`` after :meth:`reset`): the
  ``int8[A]`` mask of game ``i``'s learner seat to move (the game that the returned
  observation shows), as in :class:`~cardenvs.wrappers.SeatEnv`; with
  ``info_legal_actions=True`` also ``infos[i]["legal_actions"]`` (its legal ids);
* ``dones[i]`` True on the step that ended game ``i``; then ``infos[i]`` also holds
  ``terminal_observation`` (the learner's final observation), ``episode`` (``r``: the
  learner's return, ``l``: its decisions; what ``VecMonitor`` reports) and
  ``final_rewards`` (every seat's last payout), and the observation returned is already the
  next game's first learner decision;
* :meth:`action_masks` returns the ``(n_envs, A)`` bool masks; ``env_method("action_masks")``
  (what ``sb3_contrib``'s ``get_action_masks`` calls) returns their rows;
* seeds: game ``i``'s deals are those of the AEC env after ``env.reset(seed=seeds[i])``
  (see :mod:`cardenvs.vector`): ``seed=s`` at construction derives them with
  :func:`cardenvs.vector.slot_seeds`; ``venv.seed(s)`` (SB3's convention) makes them
  ``s + i`` for the next :meth:`reset`.

Opponents: ``"random"`` (in numba), or per seat as in :class:`~cardenvs.wrappers.SeatEnv`;
a policy object with ``act_batch(observations, masks)`` (the ``agents`` package's batched
interface: ``(B, D)`` float32 and ``(B, A)`` int8) is called once per round for all games
where its seats are to move; objects with only ``act`` and plain callables are called per game
with the AEC-style observation dict and the legal ids.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn, Optional, Sequence, Union, cast

import numpy as np

try:
    from stable_baselines3.common.vec_env.base_vec_env import (VecEnv, VecEnvIndices, VecEnvObs,
                                                               VecEnvStepReturn)
except ImportError as e:  # pragma: no cover - depends on the installed extras
    raise ImportError("cardenvs.sb3 needs stable-baselines3 (and sb3-contrib for MaskablePPO): "
                      "pip install 'cardenvs[train]'") from e
import gymnasium
from gymnasium import spaces

from .core.options import check_seed
from .vector import OP_ADVANCE, OP_RANDOM_STEP, OP_STEP, VectorGame
from .wrappers import _check_seats, call_policy, seat_policies

if TYPE_CHECKING:
    from .core.game import Game


class SeatVecEnv(VecEnv):
    """``n_envs`` games of ``game`` as one SB3 ``VecEnv`` (see the module docstring).

    Args:
        game: a registry name (any of ``cardenvs.GAMES``) or a compiled Game.
        n_envs: number of games.
        seats: the learner's seat, or a tuple of seats (a team).
        opponents: the other seats' policies (default ``"random"``).
        illegal: ``"lose"`` (default, as in every view of the games and PettingZoo): an
            illegal learner action ends that game with ``illegal_reward`` and
            ``infos[i]["illegal_move"]``; ``"raise"``: a ``ValueError`` naming the game and
            the action, no game changed.
        illegal_reward: the learner's reward for an illegal action with ``illegal="lose"``.
        seed: seed of the games (see the module docstring); ``None``: fresh entropy.
        max_legal: padded legal-id width of the engine (see :mod:`cardenvs.vector`).
        info_legal_actions: also put each game's legal ids in ``infos[i]["legal_actions"]``.
        actions: ``"flat"`` (default) or ``"compact"``: the learner chooses a play's body,
            then each kicker, as separate steps; builds the ``VecEnv`` of
            :func:`cardenvs.compact_seat.compact_seat_vec_env` (the same conventions, one
            :class:`~cardenvs.compact_seat.CompactSeatEnv` per game).
        **options: the game's options.
    """

    def __new__(cls, game: Union[str, Any] = None, n_envs: int = 1, *args: Any,
                actions: str = "flat", **kwargs: Any):
        from .core.compact import check_actions

        if check_actions(actions) == "compact":
            if cls is not SeatVecEnv:
                raise ValueError(f"{cls.__name__} has no compact mode (its legal-id slots are "
                                 f"already a small action space); use "
                                 f"SeatVecEnv(..., actions='compact')")
            from .compact_seat import compact_seat_vec_env

            return compact_seat_vec_env(game, n_envs, *args, **kwargs)
        return super().__new__(cls)

    def __init__(self, game: Union[str, Any], n_envs: int, seats: Union[int, Sequence[int]] = 0,
                 opponents: Any = "random", *, illegal: str = "lose",
                 illegal_reward: float = -1.0, seed: Optional[int] = None,
                 max_legal: Optional[int] = None, info_legal_actions: bool = False,
                 actions: str = "flat", **options: Any):
        self.vg = VectorGame(game, n_envs, observe=True, masks=True, keep_final=True,
                             max_legal=max_legal, **options)
        vg = self.vg
        self.game = vg.game
        if illegal not in ("lose", "raise"):
            raise ValueError(f"illegal={illegal!r}; choose 'lose' or 'raise'")
        if not isinstance(info_legal_actions, (bool, np.bool_)):
            raise TypeError(f"info_legal_actions must be a bool, got "
                            f"{type(info_legal_actions).__name__}")
        self.info_legal_actions = bool(info_legal_actions)
        if isinstance(illegal_reward, (bool, np.bool_)) or not isinstance(
                illegal_reward, (int, float, np.integer, np.floating)):
            raise TypeError(f"illegal_reward must be a number, got {type(illegal_reward).__name__}")
        self.illegal = illegal
        P = vg.n_players
        self.seats = _check_seats(seats, P)
        vg._set_learner(self.seats, illegal == "lose", float(illegal_reward))
        self.set_opponents(opponents)
        if seed is not None:
            check_seed(seed)
        self._seed0 = seed
        obs_space = spaces.Box(0.0, 1.0, (vg.obs_size,), np.float32)
        self.render_mode = None
        super().__init__(n_envs, obs_space, spaces.Discrete(vg.n_actions))
        n = n_envs
        self._actions = np.zeros(n, np.int64)
        self._carry = np.zeros(n, np.float64)  # pay of the next episodes, before their 1st move
        self._ep_ret = np.zeros(n, np.float64)
        self._mask_rows = list(vg._masks)  # row views of the engine's mask array
        self._started = False

    # -- opponents ---------------------------------------------------------------------------------
    def set_opponents(self, opponents: Any) -> None:
        """Replace the opponents' policies (e.g. with a new frozen snapshot)."""
        self.opponents = seat_policies(opponents, self.seats, self.vg.n_players, self.vg.game)
        others = [p for p in self.opponents if p is not None]
        self._all_random = all(isinstance(p, str) and p == "random" for p in others)
        # distinct policies and the seats each plays
        groups: list = []
        for seat, p in enumerate(self.opponents):
            if p is None:
                continue
            for g in groups:
                if g[0] is p:
                    g[1][seat] = True
                    break
            else:
                m = np.zeros(self.vg.n_players + 1, np.bool_)
                m[seat] = True
                groups.append((p, m))
        self._groups = groups

    def _play_opponents(self) -> None:
        """Opponents move in every game until a learner seat is to move."""
        vg = self.vg
        if self._all_random:
            vg._run(OP_ADVANCE, vg._all, self._actions, clear=False)
            return
        rounds = 0
        while True:
            moved = False
            for policy, seat_mask in self._groups:
                idx = np.flatnonzero(seat_mask[vg.seat])
                if idx.size == 0:
                    continue
                moved = True
                if isinstance(policy, str):  # "random"
                    vg._run(OP_RANDOM_STEP, idx, np.zeros(idx.size, np.int64), clear=False)
                    continue
                acts = self._policy_actions(policy, idx)
                try:
                    vg._run(OP_STEP, idx, acts, clear=False)
                except ValueError as e:
                    raise ValueError(f"opponent {policy!r}: {e}") from None
            if not moved:
                return
            rounds += 1
            if rounds > 100_000:
                raise RuntimeError("opponents kept moving for 100,000 rounds")

    def _policy_actions(self, policy, idx: np.ndarray) -> np.ndarray:
        vg = self.vg
        batch = getattr(policy, "act_batch", None)
        if callable(batch):
            if getattr(policy, "needs_state", False):  # search agents: the positions too
                acts = np.asarray(batch(vg._obs[idx], vg._masks[idx], states=vg.states[idx]))
            else:
                acts = np.asarray(batch(vg._obs[idx], vg._masks[idx]))
            if acts.shape != (idx.size,) or not np.issubdtype(acts.dtype, np.integer):
                raise TypeError(f"opponent {policy!r}: act_batch returned {acts.shape} "
                                f"{acts.dtype}; expected ({idx.size},) integers")
            return acts.astype(np.int64)
        out = np.zeros(idx.size, np.int64)
        for j, i in enumerate(idx):
            obs = {"observation": vg._obs[i].copy(), "action_mask": vg._masks[i].copy()}
            out[j] = call_policy(policy, obs, vg.legal_actions(i))
        return out

    # -- VecEnv API --------------------------------------------------------------------------------
    def reset(self) -> VecEnvObs:
        """Deal every game and play the opponents up to the learner's first decisions;
        returns the ``(n_envs, D)`` observations."""
        vg = self.vg
        seeds = self._seeds
        if all(s is not None for s in seeds):
            vg.reset(seeds=np.asarray(seeds, np.int64))
        elif not self._started and self._seed0 is not None:
            vg.reset(seed=self._seed0)
        else:
            vg.reset()
        self._reset_seeds()
        self._reset_options()
        self._started = True
        self._play_opponents()
        # pay before the learner's first decision goes to its first step; a deal that ended
        # before the learner moved was skipped (its pay dropped, counted in skipped_deals)
        self._carry[:] = np.where(vg.done, vg._carry, vg._acc)
        vg.skipped_deals += int(vg.done.sum())
        self._ep_ret[:] = 0.0
        self.reset_infos = self._new_infos()
        return vg._obs.copy()

    def step_async(self, actions: np.ndarray) -> None:
        """Keep the learner's ``(n_envs,)`` action ids for :meth:`step_wait`."""
        acts = np.asarray(actions)
        if acts.shape == (self.num_envs, 1):  # SB3's policies may give a trailing axis
            acts = acts.reshape(-1)
        if acts.shape != (self.num_envs,) or not np.issubdtype(acts.dtype, np.integer):
            raise ValueError(f"actions must be {self.num_envs} integers, got shape "
                             f"{np.asarray(actions).shape} dtype {np.asarray(actions).dtype}")
        self._actions = np.ascontiguousarray(acts, np.int64).copy()

    def seed(self, seed: Optional[int] = None) -> Sequence[Optional[int]]:
        """SB3's ``seed``: game ``i`` gets seed ``seed + i`` at the next :meth:`reset`
        (``None``: a random base seed); ``TypeError`` / ``ValueError`` for a bad one."""
        if seed is not None:
            check_seed(seed)
            check_seed(seed + self.num_envs - 1, "seed + n_envs - 1")
        return super().seed(seed)

    def step_wait(self) -> VecEnvStepReturn:
        """Play the kept actions, then the opponents up to the learner's next decisions.

        Returns:
            ``(observations, rewards, dones, infos)``; a finished game's info holds its
            ``terminal_observation``, ``episode`` and ``final_rewards``.
        """
        if not self._started:
            raise ValueError("call reset() before step()")
        vg = self.vg
        vg._run(OP_STEP, vg._all, self._actions, clear=True)
        self._bad_learner = vg._bad.copy()  # the games the learner lost by an illegal action
        self._play_opponents()
        rew = vg._acc + self._carry
        self._carry[:] = vg._carry
        self._ep_ret += rew
        dones = vg.done.copy()
        infos = self._new_infos()
        ended = np.flatnonzero(dones)
        for i in ended:
            info = infos[i]
            info["terminal_observation"] = vg._final_obs[i].copy()
            info["episode"] = {"r": float(self._ep_ret[i]), "l": int(vg._final_len[i])}
            info["final_rewards"] = vg._final_states[i, _rew_slice(vg)].astype(np.float64)
            if self._bad_learner[i]:
                info["illegal_move"] = True
        self._ep_ret[ended] = 0.0
        return vg._obs.copy(), rew.astype(np.float32), dones, infos

    def _new_infos(self) -> list[dict]:
        """One info dict per game: the mask (rows of one fresh array) and, when asked, the
        legal ids of the learner seat to move."""
        masks = self.vg._masks.copy()
        infos = [{"action_mask": row} for row in masks]
        if self.info_legal_actions:
            for i, info in enumerate(infos):
                info["legal_actions"] = self.vg.legal_actions(i)
        return infos

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions in every game, ``(n_envs, A)`` bool."""
        return self.vg._masks.astype(np.bool_)

    def legal_actions(self, i: int) -> np.ndarray:
        """The legal action ids of game ``i``'s learner seat to move."""
        return self.vg.legal_actions(i)

    @property
    def skipped_deals(self) -> int:
        """Deals that ended before the learner moved (skipped, their pay dropped)."""
        return self.vg.skipped_deals

    @property
    def seat(self) -> np.ndarray:
        """The learner's seat to move in each game."""
        return self.vg.seat

    def close(self) -> None:
        """Nothing to release (SB3 API)."""

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The attribute of this batch once per game index (the games share one object)."""
        value = getattr(self, attr_name)
        return [value] * len(list(self._get_indices(indices)))

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set an attribute of the whole batch (games have no separate objects)."""
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None,
                   **method_kwargs: Any) -> list[Any]:
        """``"action_masks"``: each game's mask row (what ``get_action_masks`` stacks).
        Other methods run once on the batch; the result is repeated per game index."""
        idx = list(self._get_indices(indices))
        if method_name == "action_masks":
            if len(idx) == self.num_envs and idx == list(range(self.num_envs)):
                return list(self._mask_rows)
            return [self._mask_rows[i] for i in idx]
        result = getattr(self, method_name)(*method_args, **method_kwargs)
        return [result] * len(idx)

    def env_is_wrapped(self, wrapper_class: type[gymnasium.Wrapper],
                       indices: VecEnvIndices = None) -> list[bool]:
        """``False`` per game index: the games are no gymnasium envs, nothing wraps them."""
        return [False] * len(list(self._get_indices(indices)))

    def get_images(self) -> Sequence[Optional[np.ndarray]]:
        """``None`` per game: the batch renders no images."""
        return [None] * self.num_envs


def _rew_slice(vg: VectorGame) -> slice:
    from .core.state import REW0

    return slice(REW0, REW0 + vg.n_players)


# --------------------------------------------------------------------------------------------
# large action spaces: the legal ids in the observation, the action a slot among them
# --------------------------------------------------------------------------------------------

from .multiagent import default_slots  # noqa: E402


class LegalSlotVecEnv(SeatVecEnv):
    """:class:`SeatVecEnv` whose observation carries the legal ids and whose action is a
    *slot* among them, for policies that score the legal actions
    (:class:`LegalActionPolicy`, :class:`cardenvs.torch_policy.LegalActionNet`).

    * observation: ``{"observation": (n_envs, D) float32, "legal": (n_envs, K) int64}``,
      the legal ids of the learner's seat to move padded with ``-1`` after the legal ones
      (``K`` = ``max_legal``, default :func:`cardenvs.multiagent.default_slots`);
    * action ``Discrete(K)``: slot ``j`` plays the id ``legal[i, j]``; a padded slot is an
      illegal action (``illegal`` as in :class:`SeatVecEnv`: with ``"raise"`` a
      ``ValueError`` naming the game and the slot);
    * :meth:`action_masks`: ``(n_envs, K)`` bool, ``legal >= 0`` (what ``MaskablePPO``
      stores; :class:`LegalActionPolicy` reads the same from the observation);
    * ``infos[i]["terminal_observation"]`` is a dict of the same keys (no legal ids).

    Rewards, episodes, seeds and opponents are :class:`SeatVecEnv`'s.  :attr:`policy_kwargs`
    is what :class:`LegalActionPolicy` needs (the game and its options).
    """

    def __init__(self, game: Union[str, Any], n_envs: int, seats: Union[int, Sequence[int]] = 0,
                 opponents: Any = "random", *, max_legal: Optional[int] = None, **kwargs: Any):
        if max_legal is None:
            max_legal = default_slots(game)
        super().__init__(game, n_envs, seats, opponents, max_legal=max_legal, **kwargs)
        K = self.vg.max_legal
        self.observation_space = spaces.Dict({
            "observation": self.observation_space,
            "legal": spaces.Box(-1, self.vg.n_actions - 1, (K,), np.int64),
        })
        self.action_space = spaces.Discrete(K)
        self._no_legal = np.full(K, -1, np.int64)

    @property
    def policy_kwargs(self) -> dict:
        """``policy_kwargs`` for :class:`LegalActionPolicy` (the game and its options)."""
        return {"game": self.game.info.name,
                "game_options": dict(getattr(self.game, "options", {}))}

    def _observe(self, obs: np.ndarray) -> dict:
        return {"observation": obs, "legal": self.vg.legal.copy()}

    def reset(self) -> VecEnvObs:
        """:meth:`SeatVecEnv.reset` with the legal ids in the observation."""
        return self._observe(cast(np.ndarray, super().reset()))  # SeatVecEnv's are arrays

    def step_async(self, actions: np.ndarray) -> None:
        """Keep the action ids in the learner's ``(n_envs,)`` chosen slots."""
        slots = np.asarray(actions)
        if slots.shape != (self.num_envs,):
            slots = slots.reshape(-1)
        if slots.shape != (self.num_envs,) or not np.issubdtype(slots.dtype, np.integer):
            raise ValueError(f"actions must be {self.num_envs} slot indices, got shape "
                             f"{np.asarray(actions).shape} dtype {np.asarray(actions).dtype}")
        legal = self.vg.legal
        K = legal.shape[1]
        inside = (slots >= 0) & (slots < K)
        ids = np.full(self.num_envs, -1, np.int64)
        ids[inside] = legal[np.flatnonzero(inside), slots[inside]]
        bad = np.flatnonzero(ids < 0)
        if bad.size and self.illegal == "raise":
            i = int(bad[0])
            raise ValueError(f"{self.game.info.name} game {i} of the batch: slot {int(slots[i])} "
                             f"holds no legal action (the seat to move has "
                             f"{int(self.vg.n_legal[i])} legal actions, slots 0..."
                             f"{int(self.vg.n_legal[i]) - 1})")
        super().step_async(ids)

    def step_wait(self) -> VecEnvStepReturn:
        """:meth:`SeatVecEnv.step_wait` with the legal ids in the observations (the
        terminal observations' legal ids are all ``-1``)."""
        obs, rew, dones, infos = super().step_wait()
        for i in np.flatnonzero(dones):
            info = dict(infos[i])
            if "terminal_observation" in info:
                info["terminal_observation"] = {"observation": info["terminal_observation"],
                                                "legal": self._no_legal.copy()}
            infos[i] = info
        return self._observe(cast(np.ndarray, obs)), rew, dones, infos  # SeatVecEnv's are arrays

    def action_masks(self) -> np.ndarray:
        """Which slots hold a legal id, ``(n_envs, K)`` bool."""
        return self.vg.legal >= 0

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None,
                   **method_kwargs: Any) -> list[Any]:
        """``"action_masks"``: each game's slot mask; else :meth:`SeatVecEnv.env_method`."""
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for i in self._get_indices(indices)]
        return super().env_method(method_name, *method_args, indices=indices, **method_kwargs)


def play_episodes(model: Any, venv: LegalSlotVecEnv, n_games: int, *,
                  deterministic: bool = False, seed: Optional[int] = None) -> np.ndarray:
    """The learner's return in ``n_games`` fresh games of ``venv`` (the first
    ``ceil(n_games / n_envs)`` games of each slot, so short games are not favoured).

    ``model``: anything with SB3's ``predict(obs, deterministic=...)`` over the slot view
    (e.g. ``MaskablePPO`` with :class:`LegalActionPolicy`), or ``None`` for a uniformly random
    legal slot (the baseline: the same deals played by a random learner).  ``seed`` seeds the
    deals (``venv.seed(seed)``: the same seed gives every model the same deals).
    """
    if isinstance(n_games, bool) or not isinstance(n_games, (int, np.integer)) or n_games < 1:
        raise ValueError(f"n_games must be a positive int, got {n_games!r}")
    if seed is not None:
        venv.seed(seed)
    obs = venv.reset()
    rng = np.random.default_rng(seed)
    n = venv.num_envs
    per = -(-int(n_games) // n)
    got: list[list[float]] = [[] for _ in range(n)]
    while min(len(g) for g in got) < per:
        if model is None:
            acts = (rng.random(n) * venv.vg.n_legal).astype(np.int64)
        else:
            acts, _ = model.predict(obs, deterministic=deterministic)
        obs, _, dones, infos = venv.step(acts)
        for i in np.flatnonzero(dones):
            got[i].append(infos[i]["episode"]["r"])
    out = np.asarray([r for g in got for r in g[:per]], np.float64)
    return out[:n_games]


try:
    import torch as _th
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy as _MaskablePolicy
    from stable_baselines3.common.type_aliases import PyTorchObs, Schedule
    _HAVE_MASKABLE = True
except ImportError:  # pragma: no cover - depends on the installed extras
    _HAVE_MASKABLE = False

if _HAVE_MASKABLE:
    from .torch_policy import LegalActionNet, trim_legal_tensor

    def _features(obs: PyTorchObs) -> _th.Tensor:
        """The ``observation`` part of :class:`LegalSlotVecEnv`'s dict observations (SB3 types
        an observation as a tensor or a dict of them)."""
        return cast("dict[str, _th.Tensor]", obs)["observation"]

    class LegalActionPolicy(_MaskablePolicy):
        """sb3-contrib ``MaskablePPO`` policy over :class:`LegalSlotVecEnv`: a categorical
        over the legal slots only, scored by :class:`cardenvs.torch_policy.LegalActionNet`.

        Keyword arguments (``policy_kwargs``; ``venv.policy_kwargs`` gives the first two):
            game: the game's registry name (or a compiled Game).
            game_options: the game's options.
            hidden: width of the net's hidden layers (default 256).

        The slot mask comes from the observation's legal ids (``MaskablePPO``'s
        ``action_masks`` are the same and are not needed), so the log-probability of a
        stored action is recomputed exactly at update time; the padded columns beyond the
        batch's largest legal count are dropped before scoring.
        """

        #: ``(game, game_options, hidden)`` of the net :meth:`_build` makes
        _net_args: tuple[Union[str, Game, None], Optional[dict], int]

        def __init__(self, observation_space: spaces.Space, action_space: spaces.Space,
                     lr_schedule: Schedule, *, game: Union[str, Game, None] = None,
                     game_options: Optional[dict] = None, hidden: int = 256, **kwargs: Any):
            if game is None:
                raise TypeError("LegalActionPolicy needs the game: policy_kwargs="
                                "venv.policy_kwargs (or {'game': 'doudizhu'})")
            if not isinstance(observation_space, spaces.Dict) or set(observation_space.spaces) \
                    != {"observation", "legal"}:
                raise TypeError("LegalActionPolicy needs LegalSlotVecEnv's observation space "
                                "(a Dict of 'observation' and 'legal')")
            object.__setattr__(self, "_net_args", (game, game_options, hidden))
            super().__init__(observation_space, action_space, lr_schedule, **kwargs)

        def _build(self, lr_schedule) -> None:
            game, game_options, hidden = self._net_args
            self.net = LegalActionNet(game, hidden=hidden, game_options=game_options)
            # type[Optimizer]'s __init__ takes no lr, every optimizer's does (as SB3's _build)
            self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1),  # type: ignore[call-arg]
                                                  **self.optimizer_kwargs)

        def _get_constructor_parameters(self) -> dict:
            data = super()._get_constructor_parameters()
            name, options = self.net.spec
            data.update(game=name, game_options=options, hidden=self._net_args[2])
            return data

        def _dist(self, obs):
            legal = trim_legal_tensor(obs["legal"])
            logits = self.net.logits(obs["observation"], legal)
            return _th.distributions.Categorical(logits=logits)

        def forward(self, obs: PyTorchObs, deterministic: bool = False,
                    action_masks: Optional[np.ndarray] = None
                    ) -> tuple[_th.Tensor, _th.Tensor, _th.Tensor]:
            """``(actions, values, log_probs)``: slots sampled (or the likeliest with
            ``deterministic``) among the legal ones; ``action_masks`` is not needed."""
            dist = self._dist(obs)
            actions = dist.probs.argmax(dim=1) if deterministic else dist.sample()
            values = self.net.value(_features(obs)).unsqueeze(-1)
            return actions, values, dist.log_prob(actions)

        def evaluate_actions(self, obs: PyTorchObs, actions: _th.Tensor,
                             action_masks: Optional[_th.Tensor] = None
                             ) -> tuple[_th.Tensor, _th.Tensor, Optional[_th.Tensor]]:
            """``(values, log_probs, entropy)`` of the slots ``actions`` (the stored
            ones at update time); ``action_masks`` is not needed."""
            dist = self._dist(obs)
            values = self.net.value(_features(obs)).unsqueeze(-1)
            return values, dist.log_prob(actions.long().reshape(-1)), dist.entropy()

        def predict_values(self, obs: PyTorchObs) -> _th.Tensor:
            """The value estimates, ``(batch, 1)``."""
            return self.net.value(_features(obs)).unsqueeze(-1)

        def _predict(self, observation, deterministic: bool = False, action_masks=None):
            dist = self._dist(observation)
            return dist.probs.argmax(dim=1) if deterministic else dist.sample()

        def get_distribution(self, obs: PyTorchObs, action_masks: Optional[np.ndarray] = None
                             ) -> NoReturn:
            """Not available: raises ``NotImplementedError`` (the distribution is a torch
            ``Categorical`` over the legal slots, inside :meth:`forward`)."""
            raise NotImplementedError("LegalActionPolicy builds a torch Categorical over the "
                                      "legal slots: use forward / evaluate_actions / predict")
