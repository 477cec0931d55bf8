"""A torch policy for large action spaces: score the legal actions, not one logit per action id.

Dou Dizhu has 28,241 action ids, of which a position offers a handful (a few hundred at most).
A policy head with one logit per id spends almost all its time on ids that are illegal (and
a masked categorical over 28,241 logits per step dominates a PPO update).
:class:`LegalActionNet` instead takes the legal ids of each position, padded to a width
``W`` with ``-1`` (what :attr:`cardenvs.vector.VectorGame.legal` holds), embeds each legal
id from its feature row (:meth:`cardenvs.core.game.Game.action_features`: the play's cards,
family, chain length, key rank, bomb flag; pass, bids and the other non-play ids one-hot)
and scores it against the observation::

    h_obs  = obs_net(observation)                 (B, H)
    h_act  = act_net(action_features[id])         (M, H)   only the M legal entries
    logit  = score_net(h_obs[row] + h_act)        (M,)     scattered into (B, W), -inf padding
    value  = value_net(observation)               (B,)

The action is then a *slot*: index ``j`` into the row of legal ids (the env maps it back to
the id ``legal[i, j]``).  Under PPO the log-probability of a stored slot is recomputed at
update time from the stored observation and legal ids alone, so nothing but the observation
and the ids needs to be kept.  The cost grows with the number of legal actions, not with
the size of the action space.

Used by:

* :class:`cardenvs.sb3.LegalActionPolicy` (sb3-contrib ``MaskablePPO`` over
  :class:`cardenvs.sb3.LegalSlotVecEnv`);
* :class:`cardenvs.rllib.LegalActionRLModule` (RLlib's PPO, new API stack);
* ``train/cleanrl_ppo.py`` (a single-file masked PPO over :class:`cardenvs.vector.VectorGame`).

Needs torch (the ``train`` extra).  The multi-agent helpers for turn-based games
(:func:`cardenvs.multiagent.file_by_seat`, :func:`cardenvs.multiagent.seat_gae`) are plain
numpy and live in :mod:`cardenvs.multiagent`.
"""

from __future__ import annotations

from typing import Any, Optional, Union, cast

import numpy as np

try:
    import torch
    from torch import nn
except ImportError as e:  # pragma: no cover - depends on the installed extras
    raise ImportError("cardenvs.torch_policy needs torch: pip install 'cardenvs[train]'") from e


def game_spec(game: Union[str, Any], options: Optional[dict] = None) -> tuple[str, dict]:
    """``(name, options)`` of a registry name or a compiled Game (what rebuilds it)."""
    if isinstance(game, str):
        return game, dict(options or {})
    info = getattr(game, "info", None)
    if info is None or not hasattr(game, "action_features"):
        raise TypeError(f"game must be a registry name (one of cardenvs.GAMES) or a cardenvs "
                        f"Game, got {type(game).__name__}")
    if options:
        raise TypeError("options are given with a game name, not with a Game object")
    return info.name, dict(getattr(game, "options", {}))


def _mlp(sizes: list[int], last_act: bool) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2 or last_act:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class LegalActionNet(nn.Module):
    """Actor-critic over legal action ids (see the module docstring).

    Args:
        game: a registry name (any of ``cardenvs.GAMES``) or a compiled Game; it gives the
            observation size and the action feature table.
        hidden: width ``H`` of every hidden layer.
        game_options: the game's options (with a registry name): they change the action
            table of some games (e.g. Dou Dizhu's ``preset``).

    ``forward(obs, legal)`` takes ``obs`` ``(B, D)`` float and ``legal`` ``(B, W)`` integer
    (or float holding integers) ids padded with ``-1``, and returns ``(logits, value)``:
    ``logits`` ``(B, W)`` with ``-inf`` at padded slots, ``value`` ``(B,)``.
    """

    action_table: torch.Tensor  # a buffer: each action id's features (rows of the game's table)

    def __init__(self, game: Union[str, Any], hidden: int = 256,
                 game_options: Optional[dict] = None):
        super().__init__()
        name, options = game_spec(game, game_options)
        if isinstance(hidden, bool) or not isinstance(hidden, int) or hidden < 1:
            raise ValueError(f"hidden must be a positive int, got {hidden!r}")
        if isinstance(game, str):
            from .api import make_game

            game = make_game(name, **options)
        self.spec = (name, options)
        self.obs_size = int(game.layout.size)
        self.n_actions = int(game.n_actions)
        table = torch.as_tensor(game.action_features(np.arange(self.n_actions)))
        # rebuilt from the game, not saved in state_dict
        self.register_buffer("action_table", table, persistent=False)
        H = hidden
        self.obs_net = _mlp([self.obs_size, H, H], last_act=True)
        self.act_net = _mlp([table.shape[1], H, H], last_act=False)
        self.score_net = nn.Sequential(nn.ReLU(), nn.Linear(H, H), nn.ReLU(), nn.Linear(H, 1))
        self.value_net = nn.Sequential(_mlp([self.obs_size, H, H], last_act=True), nn.Linear(H, 1))
        score_out = cast(nn.Linear, self.score_net[-1])
        value_out = cast(nn.Linear, self.value_net[-1])
        with torch.no_grad():  # near-uniform policy and small values at the start
            score_out.weight.mul_(0.01)
            score_out.bias.zero_()
            value_out.weight.mul_(0.1)

    def _check(self, obs: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
        if obs.dim() != 2 or obs.shape[1] != self.obs_size:
            raise ValueError(f"obs must have shape (B, {self.obs_size}), got {tuple(obs.shape)}")
        if legal.dim() != 2 or legal.shape[0] != obs.shape[0]:
            raise ValueError(f"legal must have shape ({obs.shape[0]}, W), got {tuple(legal.shape)}")
        if legal.is_floating_point():
            legal = legal.round()
        return legal.long()

    def logits(self, obs: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
        """``(B, W)`` scores of the legal ids, ``-inf`` at padding (a row without any legal
        id gets 0 at slot 0 so that its distribution stays defined)."""
        legal = self._check(obs, legal)
        valid = legal >= 0
        if valid.any() and int(legal.max()) >= self.n_actions:
            raise ValueError(f"legal ids must be < {self.n_actions} (the action space), got "
                             f"{int(legal.max())}")
        rows = valid.nonzero(as_tuple=True)[0]
        h_obs = self.obs_net(obs)
        h_act = self.act_net(self.action_table[legal[valid]])
        s = self.score_net(h_obs[rows] + h_act).squeeze(-1)
        out = torch.full(legal.shape, float("-inf"), dtype=s.dtype, device=s.device)
        out[valid] = s
        empty = ~valid.any(dim=1)
        if empty.any():
            out[empty, 0] = 0.0
        return out

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        """``(B,)`` state values."""
        return self.value_net(obs).squeeze(-1)

    def forward(self, obs: torch.Tensor, legal: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(logits, value)``: :meth:`logits` and :meth:`value` of the batch."""
        return self.logits(obs, legal), self.value(obs)

    def distribution(self, obs: torch.Tensor, legal: torch.Tensor) -> torch.distributions.Categorical:
        """The categorical distribution over slots (padding has probability 0)."""
        return torch.distributions.Categorical(logits=self.logits(obs, legal))


def trim_legal(legal: np.ndarray, n_legal: Optional[np.ndarray] = None) -> np.ndarray:
    """``legal[:, :w]`` with ``w`` the largest legal count of the batch (at least 1): the
    padded columns every row leaves unused cost nothing to drop (slot indices are kept)."""
    legal = np.asarray(legal)
    if n_legal is None:
        n_legal = (legal >= 0).sum(axis=1)
    w = max(1, int(np.max(n_legal)) if len(n_legal) else 1)
    return legal[:, :w]


def trim_legal_tensor(legal: torch.Tensor) -> torch.Tensor:
    """The torch version of :func:`trim_legal` (ids padded with ``-1`` at the end of rows)."""
    w = max(1, int((legal >= 0).sum(dim=1).max())) if legal.shape[0] else 1
    return legal[:, :w]
