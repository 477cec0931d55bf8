"""Multi-agent bookkeeping for turn-based games, in plain numpy (no torch, no ray).

In a climbing game only one seat moves at a time and a seat's reward usually arrives when the
game ends, after the other seats' moves.  A rollout of the batched engine
(:class:`cardenvs.vector.VectorGame`) records, per step ``t`` and game ``i``, the seat that
moved (``seats[t, i]``), what the step paid every seat (``rewards[t, i, p]``) and whether it
ended the game (``dones[t, i]``).  :func:`file_by_seat` turns that into one trajectory per
(game, seat): each transition is filed under the seat that made it and is paid everything that
seat received from its move until its next move in the same game (or the end of the game);
:func:`seat_gae` then computes advantages along those trajectories.  ``train/cleanrl_ppo.py``
uses both.

Also here: role names for agent ids (:func:`agent_name`, used by :mod:`cardenvs.rllib`) and the
default padded width of legal-id rows (:func:`default_slots`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Union

import numpy as np
from numpy.typing import ArrayLike

from .registry import REGISTRY

if TYPE_CHECKING:
    from .core.game import Game

#: default padded width ``K`` of the legal-id rows in the slot views (:mod:`cardenvs.sb3`'s
#: ``LegalSlotVecEnv``, :mod:`cardenvs.rllib`): above the largest legal counts a
#: hill-climbing search found (521 Dou Dizhu, 1,845 4-player Dou Dizhu, 1,766 Lanxi Wulong, 75
#: Wakeng, 293 Pao De Kuai in 3,000 random 16-card free leads; Da Niangniang's whole action
#: space is 349).  A position with more legal actions is
#: never truncated: the engine stops with a RuntimeError that names it.
DEFAULT_SLOTS = {name: s.default_slots for name, s in REGISTRY.items()}

#: role names of the one-against-the-rest games: (solo, others); as in :mod:`cardenvs.arena`
from .arena import ROLE_NAMES  # noqa: E402


def default_slots(game: Union[str, Any]) -> Optional[int]:
    """:data:`DEFAULT_SLOTS` of a game (a registry name or a Game); ``None`` if unknown."""
    name = game if isinstance(game, str) else game.info.name
    return DEFAULT_SLOTS.get(name)


def file_by_seat(seats: ArrayLike, rewards: ArrayLike, dones: ArrayLike) -> dict[str, np.ndarray]:
    """File a turn-based rollout's transitions under their seats and pay each its return.

    Args:
        seats: ``(T, N)`` int, the seat that moved at step ``t`` in game ``i`` (``-1``: no
            move was recorded, e.g. a finished slot).
        rewards: ``(T, N, P)`` float, what step ``t`` paid each seat of game ``i`` (the
            engine's ``VectorGame.rewards`` after the step).
        dones: ``(T, N)`` bool, step ``t`` ended game ``i`` (the next step of slot ``i``
            belongs to a new game, as with ``VectorGame``'s automatic reset).

    Returns a dict of ``(T, N)`` arrays:

    * ``reward``: the transition's pay: what its seat received from its move (inclusive)
      until its next move in the same game (exclusive) or the end of the game;
    * ``done``: the game ended before the seat's next move (no bootstrap);
    * ``next``: the step of the seat's next move in the same game (``-1`` when ``done`` or
      not within the rollout);
    * ``valid``: the transition is complete: ``done``, or its next move is in the rollout.
      The last move of a seat whose game is still running at the end of the rollout is not
      (its pay is not known yet): leave it out of the update.

    Pay to a seat that has not moved yet in the current game is dropped (nothing to file
    it under).
    """
    seats = np.asarray(seats)
    rewards = np.asarray(rewards, np.float64)
    dones = np.asarray(dones)
    if seats.ndim != 2:
        raise ValueError(f"seats must be (T, N), got shape {seats.shape}")
    T, N = seats.shape
    if rewards.ndim != 3 or rewards.shape[:2] != (T, N):
        raise ValueError(f"rewards must be (T, N, P) = ({T}, {N}, P), got {rewards.shape}")
    if dones.shape != (T, N):
        raise ValueError(f"dones must be (T, N) = ({T}, {N}), got {dones.shape}")
    P = rewards.shape[2]
    if not np.issubdtype(seats.dtype, np.integer) or (seats >= P).any() or (seats < -1).any():
        raise ValueError(f"seats must be integers in [-1, {P})")
    reward = np.zeros((T, N), np.float64)
    done = np.zeros((T, N), np.bool_)
    nxt = np.full((T, N), -1, np.int64)
    open_ = np.full((N, P), -1, np.int64)  # the seat's last move in the running game
    for t in range(T):
        p = seats[t]
        mv = np.flatnonzero(p >= 0)
        prev = open_[mv, p[mv]]
        link = prev >= 0
        nxt[prev[link], mv[link]] = t
        open_[mv, p[mv]] = t
        # pay of step t to each seat's open transition
        r = rewards[t]
        has = open_ >= 0
        ii, qq = np.nonzero(has & (r != 0))
        np.add.at(reward, (open_[ii, qq], ii), r[ii, qq])
        ended = np.flatnonzero(dones[t])
        if ended.size:
            ii, qq = np.nonzero(open_[ended] >= 0)
            done[open_[ended[ii], qq], ended[ii]] = True
            open_[ended] = -1
    valid = done | (nxt >= 0)
    return {"reward": reward, "done": done, "next": nxt, "valid": valid}


def seat_gae(values: ArrayLike, filed: dict, gamma: float = 1.0, lam: float = 0.95
             ) -> tuple[np.ndarray, np.ndarray]:
    """Generalised advantage estimates along each seat's trajectory (see :func:`file_by_seat`).

    ``values`` ``(T, N)``: the value estimate of every recorded move (from the mover's view).
    Returns ``(advantages, returns)`` ``(T, N)`` float64 (``returns = advantages + values``;
    both 0 where ``filed["valid"]`` is False).  A transition whose next move is the seat's
    last, incomplete one bootstraps from that move's value (GAE truncated there, as at the
    end of a rollout).
    """
    values = np.asarray(values, np.float64)
    rew, done, nxt, valid = filed["reward"], filed["done"], filed["next"], filed["valid"]
    if values.shape != rew.shape:
        raise ValueError(f"values must have shape {rew.shape}, got {values.shape}")
    T, N = values.shape
    adv = np.zeros((T, N), np.float64)
    cols = np.arange(N)
    for t in range(T - 1, -1, -1):
        n = nxt[t]
        has = n >= 0
        nv = np.where(has, values[np.where(has, n, 0), cols], 0.0)
        na = np.where(has & valid[np.where(has, n, 0), cols], adv[np.where(has, n, 0), cols], 0.0)
        live = ~done[t]
        delta = rew[t] + gamma * nv * live - values[t]
        adv[t] = np.where(valid[t], delta + gamma * lam * na * live, 0.0)
    ret = np.where(valid, adv + values, 0.0)
    return adv, ret


def agent_name(game: Game, state: np.ndarray, seat: int, agent_ids: str = "role") -> str:
    """The agent id of ``seat`` in ``state`` (used by :mod:`cardenvs.rllib`).

    ``agent_ids="seat"``: ``player_<seat>``.  ``"role"``: in the one-against-the-rest games,
    before the solo seat is known (the auction) ``bidder_<seat>``; then the solo role's name
    (``landlord``, ``digger``, ``niangniang``) for the solo seat and ``<team>_<k>`` for the
    others, ``k`` their place after the solo seat (``farmer_1`` moves right after the
    landlord); games of every player for himself: ``player_<seat>``.
    """
    from .core.state import LANDLORD

    name = game.info.name
    if agent_ids == "seat" or not game.info.teams.startswith("1 vs"):
        return f"player_{seat}"
    solo = int(state[LANDLORD])
    if solo < 0:
        return f"bidder_{seat}"
    roles = ROLE_NAMES.get(name, ("solo", "team"))
    if seat == solo:
        return roles[0]
    return f"{roles[1]}_{(seat - solo) % game.n_players}"


def role_of(agent_id: str) -> str:
    """The module id of an agent id: its role without the seat / place suffix
    (``farmer_2`` -> ``farmer``, ``bidder_0`` -> ``bidder``, ``landlord`` -> ``landlord``)."""
    head, _, tail = agent_id.rpartition("_")
    return head if head and tail.isdigit() else agent_id


def agent_names(game: Game, agent_ids: str = "role") -> list[str]:
    """Every agent id :func:`agent_name` can give in ``game`` (PettingZoo's
    ``possible_agents``)."""
    P = game.n_players
    if agent_ids == "seat" or not game.info.teams.startswith("1 vs"):
        return [f"player_{s}" for s in range(P)]
    roles = ROLE_NAMES.get(game.info.name, ("solo", "team"))
    return ([f"bidder_{s}" for s in range(P)] + [roles[0]]
            + [f"{roles[1]}_{k}" for k in range(1, P)])
