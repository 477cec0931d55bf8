"""RLlib (new API stack) for every game: a multi-agent env, a masking RLModule, role mapping.

Needs the ``rllib`` extra (``pip install 'cardenvs[rllib]'``: ``ray[rllib]`` and torch); the
core package never imports this module.  The recipe::

    import ray
    from cardenvs.rllib import ppo_config

    ray.init(num_cpus=2)
    algo = ppo_config("doudizhu", num_env_runners=2).build_algo()
    for _ in range(3):
        print(algo.train()["env_runners"]["module_episode_returns_mean"])

Pieces (each usable alone):

* :class:`CardGameEnv` (``MultiAgentEnv``): one game; only the agent to move gets an
  observation, ``{"observations": (D,) float32, "legal": (K,) int64}`` (its legal ids padded
  with ``-1``; ``K`` from :func:`cardenvs.multiagent.default_slots`), and its action is a
  *slot* ``j`` (``Discrete(K)``) that plays ``legal[j]``.  A position with more than ``K``
  legal actions is a ``RuntimeError`` (never truncated).  Rewards are paid to the seat's
  agents when the step pays them (the end of the game); at the end every agent that moved
  gets its final observation and ``terminateds["__all__"]`` is True.
* ``CardGameEnv({"game": ..., "actions": "compact"})``: the compact action space
  (:mod:`cardenvs.core.compact`: a play with kickers is its body, then each kicker, decisions
  of the same agent): the observation is ``{"observations": (D + codec.obs_extra,) float32,
  "action_mask": (n,) int8}`` and the action a compact id (``Discrete(n)``, a few hundred
  ids), for generic learners that score one logit per id: :class:`MaskedMLPRLModule`.
* :func:`register_envs`: ``ray.tune.register_env`` for every game, as ``cardenvs_<game>``
  (env config: ``options`` (the game's options), ``agent_ids``, ``max_legal``, ``seed``).
* :class:`MaskedMLPRLModule`: a PPO RLModule for the compact mode, an MLP with one logit per
  compact id, the ids outside ``action_mask`` at ``FLOAT_MIN``.
* :class:`LegalActionRLModule`: a PPO RLModule (``TorchRLModule`` + ``ValueFunctionAPI``)
  over :class:`cardenvs.torch_policy.LegalActionNet`: it scores only the legal ids from their
  action features, so a 28,241-id action space costs what its legal actions cost; logits of
  padded slots are ``FLOAT_MIN``.
* Team-aware mapping.  RLlib asks the mapping function for a module once per agent id and
  episode, when the agent first appears, and keeps that answer for the episode; a seat's role
  is only known after the auction, so a seat-named agent cannot change module when the
  auction makes it landlord.  With ``agent_ids="role"`` (the default) the agent ids *are* the
  roles: during the auction a seat acts as ``bidder_<seat>``; once the solo seat is known it
  acts as ``landlord`` (``digger``, ``niangniang``) or ``farmer_<k>`` (``catcher_<k>``), new
  agents that appear in the episode at that moment.  :func:`policy_mapping_fn` maps an id to
  its role (``farmer_2`` -> module ``farmer``), so PPO trains one module per role (and one
  for bidding).  A seat's pay goes to every agent id it acted as in the episode (its bids are
  credited with the outcome of the deal they led to).  ``agent_ids="seat"``: ``player_<seat>``
  for one shared module (roles are in the observation).  Lanxi Wulong (every player for
  himself) always uses ``player_<seat>``.  Match play (``match=True``: roles change within
  an episode) needs ``agent_ids="seat"``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Optional, cast

import numpy as np

try:
    import gymnasium as gym
    from ray.rllib.env.multi_agent_env import MultiAgentEnv
except ImportError as e:  # pragma: no cover - depends on the installed extras
    raise ImportError("cardenvs.rllib needs ray[rllib]: pip install 'cardenvs[rllib]'") from e

from .api import GAMES, make_game
from .core.compact import Codec, Pending, check_actions, codec_of
from .multiagent import agent_name, agent_names, default_slots, role_of

if TYPE_CHECKING:
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

_MAX_SEED = 2**63 - 1


class CardGameEnv(MultiAgentEnv):
    """One game of a cardenvs game as an RLlib ``MultiAgentEnv`` (see the module docstring).

    ``config`` (a dict or RLlib's ``EnvContext``):
        game: registry name (any of ``cardenvs.GAMES``; required).
        options: the game's options (dict).
        agent_ids: ``"role"`` (default) or ``"seat"``.
        max_legal: padded width ``K`` of the legal ids (default per game).
        seed: seed of the first :meth:`reset` without one (default: fresh entropy; RLlib's
            env runners pass their own seeds to ``reset``).
        actions: ``"flat"`` (default: the action is a slot among the legal ids) or
            ``"compact"`` (a compact id under ``action_mask``; ``max_legal`` is unused).
        illegal: a slot that holds no legal id (compact: an id the mask does not offer): ``"lose"`` (default, as the AEC env: the game
            ends, the mover's agent is paid ``illegal_reward``, the others 0; RLlib's env
            check plays random slots) or ``"raise"`` (a ``ValueError``).
        illegal_reward: default -1.
    """

    _KEYS = {"game", "options", "agent_ids", "max_legal", "seed", "illegal", "illegal_reward",
             "actions"}

    def __init__(self, config: Optional[dict] = None):
        super().__init__()
        cfg = dict(config or {})
        unknown = set(cfg) - self._KEYS
        if unknown:
            raise ValueError(f"unknown CardGameEnv config keys {sorted(unknown)}; known: "
                             f"{sorted(self._KEYS)}")
        if "game" not in cfg:
            raise ValueError(f"CardGameEnv needs config['game'], one of {sorted(GAMES)}")
        options = dict(cfg.get("options") or {})
        self.game = make_game(cfg["game"], **options)
        g = self.game
        self.agent_ids = cfg.get("agent_ids", "role")
        if self.agent_ids not in ("role", "seat"):
            raise ValueError(f"agent_ids={self.agent_ids!r}; choose 'role' or 'seat'")
        if self.agent_ids == "role" and getattr(g, "options", {}).get("match"):
            raise ValueError("match play changes roles within an episode: use agent_ids='seat'")
        K = cfg.get("max_legal") or default_slots(g) or min(g.n_actions, 4096)
        if isinstance(K, bool) or not isinstance(K, (int, np.integer)) or not 1 <= K <= g.n_actions:
            raise ValueError(f"max_legal must be an int in [1, {g.n_actions}], got {K!r}")
        self.K = int(K)
        self.possible_agents = list(agent_names(g, self.agent_ids))
        self.agents = []
        self.actions = check_actions(cfg.get("actions", "flat"))
        self.codec: Optional[Codec] = None
        self._pending: Optional[Pending] = None
        act_space: gym.spaces.Discrete
        if self.actions == "compact":
            self.codec = codec_of(g)
            self._pending = Pending(self.codec)
            obs_space = gym.spaces.Dict({
                "observations": gym.spaces.Box(0.0, 1.0, (g.layout.size + self.codec.obs_extra,),
                                               np.float32),
                "action_mask": gym.spaces.Box(0, 1, (self.codec.n,), np.int8),
            })
            act_space = gym.spaces.Discrete(self.codec.n)
        else:
            obs_space = gym.spaces.Dict({
                "observations": gym.spaces.Box(0.0, 1.0, (g.layout.size,), np.float32),
                "legal": gym.spaces.Box(-1, g.n_actions - 1, (self.K,), np.int64),
            })
            act_space = gym.spaces.Discrete(self.K)
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: act_space for a in self.possible_agents}
        self.state = g.new_state()
        self._buf = np.zeros(g.n_actions + 1, np.int64)
        self._n = 0
        seed = cfg.get("seed")
        self._rng = np.random.default_rng(seed)
        self._acted: list[list[str]] = [[] for _ in range(g.n_players)]  # per seat
        self._current: Optional[str] = None
        self._seat = -1
        self.illegal = cfg.get("illegal", "lose")
        if self.illegal not in ("lose", "raise"):
            raise ValueError(f"illegal={self.illegal!r}; choose 'lose' or 'raise'")
        self.illegal_reward = float(cfg.get("illegal_reward", -1.0))

    # -- helpers -----------------------------------------------------------------------------
    def _observe(self, seat: int, final: bool = False) -> dict:
        g = self.game
        if self.codec is not None:
            return self._observe_compact(seat, final)
        obs = np.zeros(g.layout.size, np.float32)
        g.encode(self.state, seat, obs)
        legal = np.full(self.K, -1, np.int64)
        if not final:
            legal[:self._n] = self._buf[:self._n]
        return {"observations": obs, "legal": legal}

    def _observe_compact(self, seat: int, final: bool) -> dict:
        g, c, p = self.game, self.codec, self._pending
        assert c is not None and p is not None
        L = g.layout.size
        obs = np.zeros(L + c.obs_extra, np.float32)
        g.encode(self.state, seat, obs)
        mask = np.zeros(c.n, np.int8)
        if not final:  # the mover's partial play and its offered ids
            c.encode(p, obs[L:])
            mask[p.legal[:p.n_legal]] = 1
        return {"observations": obs, "action_mask": mask}

    def _next_decision(self) -> dict:
        g = self.game
        n = g.legal(self.state, self._buf)
        if self._pending is not None:
            self._pending.start(self._buf, n)
        elif n > self.K:
            raise RuntimeError(f"{g.info.name}: {n} legal actions, more than max_legal="
                               f"{self.K}; nothing was truncated: create the env with "
                               f"config['max_legal'] >= {n}")
        self._n = n
        seat = g.current(self.state)
        agent = agent_name(g, self.state, seat, self.agent_ids)
        if agent not in self._acted[seat]:
            self._acted[seat].append(agent)
        if agent not in self.agents:
            self.agents.append(agent)
        self._seat, self._current = seat, agent
        return {agent: self._observe(seat)}

    # -- MultiAgentEnv API ---------------------------------------------------------------------
    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None
              ) -> tuple[dict, dict]:
        """Deal a new game (``seed`` reseeds the env's generator; ``options`` is unused):
        ``({agent: observation}, {})`` for the agent to move."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.game.reset(self.state, int(self._rng.integers(0, _MAX_SEED)))
        self._acted = [[] for _ in range(self.game.n_players)]
        self.agents = []
        if self.game.done(self.state):  # pragma: no cover - no game ends at its deal
            raise RuntimeError("the deal ended the game before any move")
        return self._next_decision(), {}

    def step(self, action_dict: dict) -> tuple[dict, dict, dict, dict, dict]:
        """Play the slot ``action_dict[agent]`` of the agent to move: ``(observations,
        rewards, terminateds, truncateds, infos)``, the next agent's observation, or at the
        end every agent's final one; the rewards of every agent that has acted since its
        last reward.  A slot holding no legal action raises (``illegal="raise"``) or ends
        the game with ``illegal_reward`` to the mover."""
        agent = self._current
        if agent is None:
            raise ValueError("call reset() before step()")
        if agent not in action_dict:
            raise ValueError(f"{agent!r} is to move; got actions for {sorted(action_dict, key=str)}")
        slot = action_dict[agent]
        if isinstance(slot, np.ndarray):
            slot = slot.item()
        what = "a compact action id" if self._pending is not None else "a slot index"
        if isinstance(slot, bool) or not isinstance(slot, (int, np.integer)):
            raise TypeError(f"the action of {agent!r} must be {what} (int), got {slot!r}")
        g = self.game
        rewards: dict = {}
        flat = -1
        if self._pending is not None:
            flat = self._compact_step(agent, int(slot))
            if flat == _MORE:  # a body or kicker with kickers to come: the same agent again,
                # paid 0 as every agent that has acted (RLlib wants a reward for each step)
                zero = {a: 0.0 for seat in range(g.n_players) for a in self._acted[seat]}
                return ({agent: self._observe(self._seat)}, zero, {"__all__": False},
                        {"__all__": False}, {})
        elif 0 <= slot < self._n:
            flat = int(self._buf[slot])
        elif self.illegal == "raise":
            raise ValueError(f"{g.info.name}: slot {slot} of {agent!r} holds no legal "
                             f"action ({self._n} legal actions: slots 0..{self._n - 1})")
        if flat < 0:
            rewards = {a: 0.0 for seat in range(g.n_players) for a in self._acted[seat]}
            rewards[agent] = self.illegal_reward
            ended = True
        else:
            g.step(self.state, flat)
            paid = g.rewards(self.state)
            for seat in range(g.n_players):
                for a in self._acted[seat]:
                    rewards[a] = rewards.get(a, 0.0) + float(paid[seat])
            ended = g.done(self.state)
        if ended:
            obs = {a: self._observe(seat, final=True)
                   for seat in range(g.n_players) for a in self._acted[seat]}
            self._current = None
            done = {a: True for a in obs}
            done["__all__"] = True
            trunc = {"__all__": False}
            return obs, rewards, done, trunc, {}
        obs = self._next_decision()
        return obs, rewards, {"__all__": False}, {"__all__": False}, {}


    def _compact_step(self, agent: str, cid: int) -> int:
        """Apply compact id ``cid`` of the mover: the flat action it completes, ``_MORE``
        while kickers remain, ``-1`` for an id the mask does not offer (``illegal="lose"``;
        ``"raise"``: a ``ValueError``, nothing changed)."""
        c, p = self.codec, self._pending
        assert c is not None and p is not None
        if not p.is_offered(cid):
            if self.illegal == "raise":
                shown = ", ".join(c.to_string(a) for a in p.legal[:min(p.n_legal, 8)])
                more = "" if p.n_legal <= 8 else f", ... ({p.n_legal} in all)"
                name = c.to_string(cid) if 0 <= cid < c.n else f"outside [0, {c.n})"
                raise ValueError(f"{self.game.info.name}: compact id {cid} ({name}) of "
                                 f"{agent!r} is not offered; offered: {shown}{more}")
            p.clear()
            return -1
        flat = p.choose(cid, self._buf, self._n)
        return _MORE if flat < 0 else flat


#: :meth:`CardGameEnv._compact_step`: the play goes on (kickers to choose)
_MORE = -2


def env_name(game: str) -> str:
    """The name :func:`register_envs` registers ``game`` under: ``cardenvs_<game>``."""
    return f"cardenvs_{game}"


def register_envs(games: Optional[Iterable[str]] = None) -> list[str]:
    """``ray.tune.register_env`` for each game (default: every game); returns the names.

    The env config is :class:`CardGameEnv`'s without ``game``:
    ``config.environment("cardenvs_doudizhu", env_config={"options": {"reward": "win_loss"}})``.
    """
    from ray.tune.registry import register_env

    names = []
    for game in (sorted(GAMES) if games is None else games):
        if game not in GAMES:
            raise ValueError(f"unknown game {game!r}; choose from {sorted(GAMES)}")

        def creator(config: Optional[dict], _game: str = game) -> CardGameEnv:
            return CardGameEnv({**dict(config or {}), "game": _game})

        register_env(env_name(game), creator)
        names.append(env_name(game))
    return names


def policy_mapping_fn(agent_id: Any, episode: Any = None, **kwargs: Any) -> str:
    """Module id of an agent id: its role (``farmer_1`` -> ``farmer``, ``bidder_2`` ->
    ``bidder``, ``player_3`` -> ``player``); see the module docstring."""
    return role_of(str(agent_id))


def module_ids(game: str, agent_ids: str = "role", **options: Any) -> list[str]:
    """The module ids :func:`policy_mapping_fn` gives in ``game`` (``bidder`` only where the
    game starts with an auction)."""
    env = CardGameEnv({"game": game, "options": options, "agent_ids": agent_ids, "seed": 0})
    env.reset(seed=0)
    ids = list(dict.fromkeys(role_of(str(a)) for a in env.possible_agents))
    from .core.state import LANDLORD

    if "bidder" in ids and int(env.state[LANDLORD]) >= 0:  # no auction (fixed roles)
        ids.remove("bidder")
    return ids


try:
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
    from ray.rllib.core.rl_module.torch import TorchRLModule
    from ray.rllib.utils.torch_utils import FLOAT_MIN
    _HAVE_TORCH = True
except ImportError:  # pragma: no cover - torch missing
    _HAVE_TORCH = False

if _HAVE_TORCH:
    from .torch_policy import LegalActionNet, trim_legal_tensor

    class LegalActionRLModule(TorchRLModule, ValueFunctionAPI):
        """PPO RLModule over :class:`cardenvs.torch_policy.LegalActionNet` (see the module
        docstring).  ``model_config``: ``game`` (required), ``game_options``, ``hidden``."""

        def setup(self) -> None:
            """Build the :class:`~cardenvs.torch_policy.LegalActionNet` of ``model_config``."""
            cfg = dict(cast(Optional[dict], self.model_config) or {})
            if "game" not in cfg:
                raise ValueError("LegalActionRLModule needs model_config={'game': ...}")
            self.net = LegalActionNet(cfg["game"], hidden=int(cfg.get("hidden", 256)),
                                      game_options=cfg.get("game_options"))

        def _logits(self, batch) -> torch.Tensor:
            obs = batch[Columns.OBS]
            legal = obs["legal"]
            short = trim_legal_tensor(legal)
            scores = self.net.logits(obs["observations"], short).clamp(min=FLOAT_MIN)
            if short.shape[1] == legal.shape[1]:
                return scores
            out = torch.full(legal.shape, FLOAT_MIN, dtype=scores.dtype, device=scores.device)
            out[:, :short.shape[1]] = scores
            return out

        def _forward(self, batch, **kwargs):
            return {Columns.ACTION_DIST_INPUTS: self._logits(batch)}

        def compute_values(self, batch: dict[str, Any], embeddings: Optional[Any] = None
                           ) -> torch.Tensor:
            """The value estimate of each observation of ``batch``."""
            return self.net.value(batch[Columns.OBS]["observations"])

    class MaskedMLPRLModule(TorchRLModule, ValueFunctionAPI):
        """PPO RLModule for :class:`CardGameEnv`'s compact mode: an MLP over
        ``observations`` (two hidden layers of ``model_config["hidden"]``, default 256) with one
        logit per compact id, the ids outside ``action_mask`` at ``FLOAT_MIN``, and a value
        head on the same trunk."""

        def setup(self) -> None:
            """Build the trunk and the two heads from the spaces."""
            cfg = dict(cast(Optional[dict], self.model_config) or {})
            space = cast(gym.spaces.Dict, self.observation_space)
            if not isinstance(space, gym.spaces.Dict) or "action_mask" not in space.spaces:
                raise ValueError("MaskedMLPRLModule needs CardGameEnv's compact observations "
                                 "({'observations', 'action_mask'}): actions='compact'")
            shape = space["observations"].shape
            assert shape is not None  # a Box
            d = int(shape[0])
            n = int(cast(gym.spaces.Discrete, self.action_space).n)
            h = int(cfg.get("hidden", 256))
            self.trunk = torch.nn.Sequential(torch.nn.Linear(d, h), torch.nn.ReLU(),
                                             torch.nn.Linear(h, h), torch.nn.ReLU())
            self.pi = torch.nn.Linear(h, n)
            self.vf = torch.nn.Linear(h, 1)

        def _forward(self, batch, **kwargs):
            obs = batch[Columns.OBS]
            logits = self.pi(self.trunk(obs["observations"]))
            logits = logits.masked_fill(obs["action_mask"] == 0, FLOAT_MIN)
            return {Columns.ACTION_DIST_INPUTS: logits}

        def compute_values(self, batch: dict[str, Any], embeddings: Optional[Any] = None
                           ) -> torch.Tensor:
            """The value estimate of each observation of ``batch``."""
            return self.vf(self.trunk(batch[Columns.OBS]["observations"])).squeeze(-1)

    def module_spec(game: str, hidden: int = 256, actions: str = "flat", **options: Any
                    ) -> RLModuleSpec:
        """An ``RLModuleSpec`` for ``game``: :class:`LegalActionRLModule` (``actions=
        "flat"``) or :class:`MaskedMLPRLModule` (``"compact"``)."""
        from ray.rllib.core.rl_module.rl_module import RLModuleSpec

        if check_actions(actions) == "compact":
            return RLModuleSpec(module_class=MaskedMLPRLModule, model_config={"hidden": hidden})
        return RLModuleSpec(module_class=LegalActionRLModule,
                            model_config={"game": game, "game_options": options,
                                          "hidden": hidden})

    def ppo_config(game: str, *, agent_ids: str = "role", num_env_runners: int = 2,
                   hidden: int = 256, options: Optional[dict] = None, actions: str = "flat",
                   **training: Any) -> PPOConfig:
        """A ``PPOConfig`` (new API stack) for ``game``: the env registered, one module per
        module id (:func:`module_ids`), mapping by role.  ``actions="flat"``: a
        :class:`LegalActionRLModule` over the legal-id slots; ``"compact"``: the compact
        action space and a :class:`MaskedMLPRLModule`.

        ``training``: passed to ``config.training`` (defaults: ``train_batch_size_per_learner
        =2000``, ``minibatch_size=250``, ``num_epochs=4``, ``lr=3e-4``, ``gamma=1.0``).
        """
        from ray.rllib.algorithms.ppo import PPOConfig
        from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec

        options = dict(options or {})
        register_envs([game])
        mods = module_ids(game, agent_ids, **options)
        train: dict[str, Any] = {"train_batch_size_per_learner": 2000, "minibatch_size": 250, "num_epochs": 4,
                 "lr": 3e-4, "gamma": 1.0}
        train.update(training)
        return (
            PPOConfig()
            .environment(env_name(game), env_config={"options": options, "agent_ids": agent_ids,
                                                     "actions": check_actions(actions)})
            .env_runners(num_env_runners=num_env_runners, num_cpus_per_env_runner=1)
            .multi_agent(policies=set(mods), policy_mapping_fn=policy_mapping_fn,
                         policies_to_train=list(mods))
            .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
                m: module_spec(game, hidden, actions, **options) for m in mods}))
            .training(**train)
        )
