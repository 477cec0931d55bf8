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
* ``dones[i]`` True on the step that ended game ``i``; then ``infos[i]`` holds
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

from typing import Any, Optional, Sequence, Union

import numpy as np

try:
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv
except ImportError as e:  # pragma: no cover - depends on the installed extras
    raise ImportError("cardenvs.sb3 needs stable-baselines3 (and sb3-contrib for MaskablePPO): "
                      "pip install 'cardenvs[train]'") from e
from gymnasium import spaces

from .core.options import check_seed
from .vector import OP_ADVANCE, OP_RANDOM_STEP, OP_STEP, VectorGame
from .wrappers import _check_seats, call_policy, seat_policies


class SeatVecEnv(VecEnv):
    """``n_envs`` games of ``game`` as one SB3 ``VecEnv`` (see the module docstring).

    Args:
        game: a registry name (any of ``cardenvs.GAMES``) or a compiled Game.
        n_envs: number of games.
        seats: the learner's seat, or a tuple of seats (a team).
        opponents: the other seats' policies (default ``"random"``).
        illegal: ``"raise"`` (default): an illegal learner action is a ``ValueError`` naming
            the game and the action; ``"lose"``: that game ends with ``illegal_reward``.
        illegal_reward: the learner's reward for an illegal action with ``illegal="lose"``.
        seed: seed of the games (see the module docstring); ``None``: fresh entropy.
        max_legal: padded legal-id width of the engine (see :mod:`cardenvs.vector`).
        **options: the game's options.
    """

    def __init__(self, game: Union[str, Any], n_envs: int, seats: Union[int, Sequence[int]] = 0,
                 opponents: Any = "random", *, illegal: str = "raise",
                 illegal_reward: float = -1.0, seed: Optional[int] = None,
                 max_legal: Optional[int] = None, **options: Any):
        self.vg = VectorGame(game, n_envs, observe=True, masks=True, keep_final=True,
                             max_legal=max_legal, **options)
        vg = self.vg
        self.game = vg.game
        if illegal not in ("lose", "raise"):
            raise ValueError(f"illegal={illegal!r}; choose 'raise' or 'lose'")
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
        self._infos: list[dict] = [{} for _ in range(n)]
        self._dirty = np.zeros(0, np.int64)
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
    def reset(self):
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
        self._clear_infos(np.arange(self.num_envs))
        return vg._obs.copy()

    def step_async(self, actions: np.ndarray) -> None:
        acts = np.asarray(actions)
        if acts.shape == (self.num_envs, 1):  # SB3's policies may give a trailing axis
            acts = acts.reshape(-1)
        if acts.shape != (self.num_envs,) or not np.issubdtype(acts.dtype, np.integer):
            raise ValueError(f"actions must be {self.num_envs} integers, got shape "
                             f"{np.asarray(actions).shape} dtype {np.asarray(actions).dtype}")
        self._actions = np.ascontiguousarray(acts, np.int64).copy()

    def seed(self, seed: Optional[int] = None) -> list:
        """SB3's ``seed``: game ``i`` gets seed ``seed + i`` at the next :meth:`reset`
        (``None``: a random base seed); ``TypeError`` / ``ValueError`` for a bad one."""
        if seed is not None:
            check_seed(seed)
            check_seed(seed + self.num_envs - 1, "seed + n_envs - 1")
        return super().seed(seed)

    def step_wait(self):
        if not self._started:
            raise ValueError("call reset() before step()")
        vg = self.vg
        vg._run(OP_STEP, vg._all, self._actions, clear=True)
        self._play_opponents()
        rew = vg._acc + self._carry
        self._carry[:] = vg._carry
        self._ep_ret += rew
        dones = vg.done.copy()
        self._clear_infos(self._dirty)
        ended = np.flatnonzero(dones)
        for i in ended:
            self._infos[i] = {
                "terminal_observation": vg._final_obs[i].copy(),
                "episode": {"r": float(self._ep_ret[i]), "l": int(vg._final_len[i])},
                "final_rewards": vg._final_states[i, _rew_slice(vg)].astype(np.float64),
            }
        self._ep_ret[ended] = 0.0
        self._dirty = ended
        return vg._obs.copy(), rew.astype(np.float32), dones, list(self._infos)

    def _clear_infos(self, idx) -> None:
        for i in idx:
            self._infos[i] = {}

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
        pass

    def get_attr(self, attr_name: str, indices=None) -> list:
        """The attribute of this batch once per game index (the games share one object)."""
        value = getattr(self, attr_name)
        return [value] * len(list(self._get_indices(indices)))

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        """Set an attribute of the whole batch (games have no separate objects)."""
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list:
        """``"action_masks"``: each game's mask row (what ``get_action_masks`` stacks).
        Other methods run once on the batch; the result is repeated per game index."""
        idx = list(self._get_indices(indices))
        if method_name == "action_masks":
            if len(idx) == self.num_envs and idx == list(range(self.num_envs)):
                return list(self._mask_rows)
            return [self._mask_rows[i] for i in idx]
        result = getattr(self, method_name)(*method_args, **method_kwargs)
        return [result] * len(idx)

    def env_is_wrapped(self, wrapper_class, indices=None) -> list:
        return [False] * len(list(self._get_indices(indices)))

    def get_images(self):
        return [None] * self.num_envs


def _rew_slice(vg: VectorGame) -> slice:
    from .core.state import REW0

    return slice(REW0, REW0 + vg.n_players)
