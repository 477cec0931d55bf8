"""The agent interface shared by every baseline agent, and observation decoding helpers.

An agent is bound to one compiled game (:class:`cardenvs.core.game.Game`: the play table that
decodes action ids into cards, the deck, the action blocks and the observation layout) when
it is made, and then answers one question::

    action = agent.act(observation, legal)

* ``observation`` is what the AEC environment's ``observe(agent)`` returns: a dict with
  ``"observation"`` (float32 vector laid out by ``game.layout``) and ``"action_mask"``;
* ``legal`` is ``env.unwrapped.legal_actions()`` (int64 ids; also
  ``infos[agent]["legal_actions"]`` with ``info_legal_actions=True``); when ``None`` the
  mask's set entries are used;
* ``info`` (optional) is ``infos[agent]``; the built-in agents never need it.

Everything an agent may know is in the observation (its hand, the play to beat and who made
it, every seat's hand size, roles as relative seats: 0 = the observer, 1 = the next seat ...),
so agents work the same on the AEC environment and on a batched engine, where
:meth:`Agent.act_batch` takes a stack of observation vectors and masks.  One agent object may
play several seats at once: ``act`` must not keep per-seat state between calls (caches keyed
by what they depend on are fine).

Agents choose only legal actions; an agent that cannot play a game says why in
:meth:`Agent.unsupported` (the arena and the tests use it).
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np


def check_keyword(agent: str, key: str, value: Any, *, low: float, high: float,
                  integer: bool = False, low_open: bool = False, high_open: bool = False,
                  optional: bool = False) -> Any:
    """One numeric constructor keyword of an agent, checked: ``value`` itself when it is a
    number (an ``int`` with ``integer=True``; never a bool) in the range from ``low`` to
    ``high`` (each end included unless ``low_open`` / ``high_open``; ``high=inf`` with
    ``high_open=False`` admits ``inf``), ``None`` when ``optional``.  NaN is never in range.

    Raises ``ValueError`` for a value that is not such a number, naming the agent, the
    keyword and its allowed range: the one check of every agent's numeric keywords
    (``search:ms=nan`` is refused when the agent is made, before a deal is played)."""
    if value is None and optional:
        return None
    lo = f"{'(' if low_open else '['}{_fmt_bound(low)}"
    hi = f"{_fmt_bound(high)}{')' if high_open else ']'}"
    kind = ("a positive int" if low == 1 and not low_open else "an int") if integer \
        else "a number"
    what = f"{kind} in {lo}, {hi}" + (" or none" if optional else "")
    number = (int, np.integer) if integer else (int, float, np.integer, np.floating)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, number):
        raise ValueError(f"agent {agent!r}: {key} must be {what}, got {value!r} "
                         f"({type(value).__name__})")
    v = float(value) if not integer else int(value)
    inside = (v > low if low_open else v >= low) and (v < high if high_open else v <= high)
    if not inside:  # NaN fails every comparison
        raise ValueError(f"agent {agent!r}: {key} must be {what}, got {value!r}")
    return value


def _fmt_bound(x: float) -> str:
    """A range end as the messages write it: ``inf``, ``50000``, ``0.5``."""
    if x == float("inf") or x == float("-inf"):
        return "inf" if x > 0 else "-inf"
    return f"{int(x)}" if float(x).is_integer() else f"{x}"


def as_game(game):
    """The compiled game of ``game``: a registry name (any of ``cardenvs.GAMES``, default
    options) or a Game itself (``env.unwrapped.game``, ``cardenvs.make_game(name, ...)``)."""
    from cardenvs.vector import _as_game

    return _as_game(game, {})


class Agent:
    """Base class of the baseline agents.

    Args:
        game: the game the agent plays: a registry name (``"wakeng"``) or a compiled Game
            (``env.unwrapped.game``, for games with options).
        seed: seed of the agent's own ``numpy.random.Generator`` (``None``: fresh entropy).

    Agents pickle (the game by its name and options, see
    :meth:`cardenvs.core.game.Game.__reduce__`) and play the same after unpickling.
    """

    #: registry name
    name = "agent"
    #: game options the agent needs (the arena merges them into the game's options)
    required_options: dict = {}
    #: whether ``act`` needs the game state as ``info["state"]`` (search agents; the arena,
    #: ``cardenvs play`` and SeatEnv / SeatVecEnv opponents pass it through
    #: :func:`cardenvs.wrappers.policy_info`)
    needs_state: bool = False

    def __init__(self, game, seed: Optional[int] = None):
        game = as_game(game)
        reason = self.unsupported(game)
        if reason is not None:
            raise ValueError(f"agent {self.name!r} cannot play {game.info.name}: {reason}")
        self.game = game
        self.rng = np.random.default_rng(seed)

    # -- what the agent can play --------------------------------------------------------------------
    @classmethod
    def unsupported(cls, game) -> Optional[str]:
        """``None`` when the agent can play ``game``; otherwise the reason it cannot."""
        return None

    # -- acting ------------------------------------------------------------------------------------
    def act(self, observation: dict, legal: Optional[np.ndarray] = None,
            info: Optional[dict] = None) -> int:
        """One legal action id for the seat whose observation this is."""
        raise NotImplementedError

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Actions for a batch: ``observations`` (B, D) float32, ``masks`` (B, N) 0/1.

        The default loops over :meth:`act`; agents with a vectorised policy override it.
        """
        observations = np.asarray(observations)
        masks = np.asarray(masks)
        if observations.ndim != 2 or masks.ndim != 2 or len(observations) != len(masks):
            raise ValueError("act_batch needs observations (B, D) and masks (B, N) of one batch size")
        out = np.empty(len(observations), np.int64)
        for i in range(len(observations)):
            out[i] = self.act({"observation": observations[i], "action_mask": masks[i]},
                              np.flatnonzero(masks[i]))
        return out

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.game.info.name})"


def legal_ids(observation: dict, legal: Optional[np.ndarray]) -> np.ndarray:
    """The legal action ids: ``legal`` when given, else the mask's set entries.

    Raises ``ValueError`` when there is nothing to choose from (the game is over).
    """
    if legal is None:
        if not isinstance(observation, dict) or "action_mask" not in observation:
            raise TypeError("observation must be the env's dict with 'observation' and "
                            "'action_mask' (or pass legal=env.unwrapped.legal_actions())")
        legal = np.flatnonzero(observation["action_mask"])
    legal = np.asarray(legal, np.int64)
    if legal.size == 0:
        raise ValueError("no legal action to choose from (is the game over?)")
    return legal


def obs_vector(observation) -> np.ndarray:
    """The float observation vector of an env observation dict (or the vector itself)."""
    if isinstance(observation, dict):
        return np.asarray(observation["observation"])
    return np.asarray(observation)


class ObsReader:
    """Reads named fields of a game's observation vector (see ``game.layout``).

    Card fields are "at least k copies" planes (``n_ranks x depth``); :meth:`cards` turns one
    back into an ``int64[16]`` count vector.
    """

    def __init__(self, game):
        self.layout = game.layout
        self.n_ranks = game.deck.n_ranks
        hand = self.layout.offsets["hand"]
        self.depth = (hand[1] - hand[0]) // self.n_ranks
        self.n = game.n_players

    def has(self, name: str) -> bool:
        return name in self.layout.offsets

    def field(self, obs: np.ndarray, name: str) -> np.ndarray:
        a, b = self.layout.offsets[name]
        return obs[a:b]

    def cards(self, obs: np.ndarray, name: str, depth: Optional[int] = None,
              n_ranks: Optional[int] = None) -> np.ndarray:
        """Counts per rank (``int64[16]``) of a card field; ``depth`` / ``n_ranks`` for a field
        laid out with other planes or ranks than the hand (an effective play with more copies
        of a rank than a hand can hold, joker stand-ins over the natural ranks)."""
        return self.cards_batch(np.asarray(obs)[None, :], name, depth, n_ranks)[0]

    def cards_batch(self, obs: np.ndarray, name: str, depth: Optional[int] = None,
                    n_ranks: Optional[int] = None) -> np.ndarray:
        """:meth:`cards` of every row of ``obs`` (``[n, obs_dim]``): ``int64 [n, 16]``."""
        a, b = self.layout.offsets[name]
        R = self.n_ranks if n_ranks is None else n_ranks
        if depth is None:
            depth = (b - a) // R
        planes = np.asarray(obs)[:, a:b].reshape(len(obs), R, depth)
        out = np.zeros((len(obs), 16), np.int64)
        out[:, :R] = (planes > 0.5).sum(2)
        return out

    def one_hot(self, obs: np.ndarray, name: str) -> int:
        """Index of the set entry of a one-hot field, or -1 when none is set."""
        f = self.field(obs, name)
        hits = np.flatnonzero(f > 0.5)
        return int(hits[0]) if hits.size else -1
