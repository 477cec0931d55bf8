"""A compact position's pending partial play, as information states, determinization and
search see it.

In compact mode (:mod:`cardenvs.core.compact`) a play with kickers is chosen as its body, then
each kicker, the same seat moving until the play is complete.  The partial play lives beside
the rules state, never in it: the state vector of a position between the decisions of one
play is the position before the play (the committed cards are still in the mover's hand), and
the environment keeps the partial play as a snapshot ``(body, [kicker ids])``
(``env.unwrapped.get_state()["compact"]``; ``None`` when no play is pending).

A position is then ``(state, snapshot)``.  The mover knows the partial play, every other seat
knows only the position before it (their observations do not change between the decisions of
one play), so:

* :func:`cardenvs.core.infostate.infostate` gives the mover's information state a
  :class:`PartialPlay` (``InfoState.pending``) and every other seat's none;
* :func:`cardenvs.core.determinizer.determinize` samples worlds from the state: the
  mover's hand and the public record are kept in every world, so the partial play is legal in
  each and completes to the same whole plays (``Determinizer.pending`` holds it);
* the search agents (:mod:`cardenvs.agents.search`), asked for a compact decision
  (``info["compact"]``), search the whole plays that extend the partial play and return its
  next part.

Functions take the snapshot as the environment writes it; :func:`pending_of` reads it from a
compact environment.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import numpy as np

from .compact import Codec, Pending, codec_of
from .state import CUR

#: a partial play as the environments' snapshots write it: ``(body, [compact kicker ids])``
Snapshot = tuple[int, list[int]]
#: what the ``pending`` arguments take: a snapshot, ``None`` (no play pending) or ``"env"``
#: (the environment's own: :func:`pending_of`)
PendingLike = Union[None, str, Sequence[Any]]


class PartialPlay:
    """The mover's pending partial play in one position.

    Attributes:
        body: the chosen body (``0 .. codec.n_bodies - 1``); ``body_id`` its compact id.
        kickers: the compact ids of the kickers chosen so far, in order.
        counts: ``int64[16]`` the cards committed so far (body and kickers), which are still
            in the mover's hand; ``cards`` the same as a card string.  They are the play
            table's effective ranks (what the mover's observation encodes): in a wild-joker
            game a joker may stand in for one of them, and which physical cards the play
            takes is settled when it completes.
        kickers_left: the kicker decisions still to make (at least one).
        plays: the flat ids of the whole plays that complete it, ascending.
        legal: the compact ids of the next decision (kickers), ascending.
        text: readable form (``"trio 333 +1 single; kicker 5"``).
    """

    def __init__(self, codec: Codec, pending: Pending) -> None:
        if pending.body < 0:
            raise ValueError("no partial play is pending")
        c = codec
        self.codec = c
        self.body = int(pending.body)
        self.body_id = c.n_other + self.body
        self.kickers: tuple[int, ...] = tuple(int(x) for x in pending.prefix[: pending.j])
        counts = np.zeros(16, np.int64)
        counts[: c.body_counts.shape[1]] = c.body_counts[self.body]
        for x in self.kickers:
            k = x - c.n_other - c.n_bodies
            counts[c.kick_rank[k]] += c.kick_unit[k]
        self.counts = counts
        self.cards = c._table.deck.format(counts)
        self.kickers_left = int(c.ntok[self.body]) - len(self.kickers)
        self.plays = np.sort(pending.cand[: pending.nc])
        self.legal = np.sort(pending.legal[: pending.n_legal])
        self.text = "; ".join(c.to_string(x) for x in (self.body_id, *self.kickers))

    def snapshot(self) -> Snapshot:
        """``(body, [kicker ids])``, as ``env.unwrapped.get_state()["compact"]`` writes it."""
        return (self.body, list(self.kickers))

    def extends(self, flat: int) -> bool:
        """Whether the whole play ``flat`` (a flat id) completes this partial play."""
        i = int(np.searchsorted(self.plays, int(flat)))
        return i < len(self.plays) and int(self.plays[i]) == int(flat)

    def next_part(self, flat: int) -> int:
        """The compact id of the next decision of the whole play ``flat`` (a kicker);
        ``ValueError`` when ``flat`` does not complete this partial play."""
        if not self.extends(flat):
            raise ValueError(f"play {flat} ({self.codec._game.action_to_string(int(flat))!r}) "
                             f"does not complete the partial play {self.text!r}")
        return self.codec.parts(int(flat))[1 + len(self.kickers)]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PartialPlay):
            return NotImplemented
        return self.codec is other.codec and self.snapshot() == other.snapshot()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"PartialPlay({self.text!r}, cards={self.cards!r}, "
                f"kickers_left={self.kickers_left}, plays={len(self.plays)})")


def check_snapshot_form(snap: Any) -> Optional[Snapshot]:
    """``snap`` as ``(body, [kicker ids])`` ints, or ``None``; ``TypeError`` / ``ValueError``
    for anything else (its legality is :func:`restore`'s to check)."""
    if snap is None:
        return None
    if (not isinstance(snap, (tuple, list)) or len(snap) != 2
            or not isinstance(snap[1], (tuple, list))):
        raise ValueError(f"a partial play is (body, [kicker ids]) as "
                         f"env.unwrapped.get_state()['compact'] writes it, got {snap!r}")
    body, kickers = snap
    for x in (body, *kickers):
        if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
            raise TypeError(f"partial play {snap!r}: body and kicker ids must be ints, got "
                            f"{type(x).__name__}")
    return (int(body), [int(x) for x in kickers])


def restore(game: Any, state: np.ndarray, snap: Any) -> Pending:
    """A :class:`cardenvs.core.compact.Pending` of ``game``'s codec restored over
    ``state``'s legal ids: the partial play ``snap`` (a snapshot, or ``None`` for the first
    decision of a play).  ``ValueError`` when ``snap`` is not a legal, incomplete partial play
    of the seat to move in ``state``."""
    snap = check_snapshot_form(snap)
    c = codec_of(game)
    buf = np.zeros(game.n_actions, np.int64)
    n = game.legal(state, buf)
    p = Pending(c)
    if snap is not None and n == 0:
        raise ValueError(f"partial play {snap!r}: the seat to move has no legal play")
    p.restore(snap, buf, n)
    return p


def partial_play(game: Any, state: np.ndarray, snap: Any) -> Optional[PartialPlay]:
    """The :class:`PartialPlay` of snapshot ``snap`` in ``state`` (``None`` for ``None``);
    ``ValueError`` when it is not a legal, incomplete partial play of the seat to move."""
    if check_snapshot_form(snap) is None:
        return None
    return PartialPlay(codec_of(game), restore(game, state, snap))


def pending_of(game_or_env: Any, state: Optional[np.ndarray] = None,
               pending: PendingLike = "env") -> Optional[Snapshot]:
    """The partial play of a position, as a snapshot (``None``: none pending).

    ``pending="env"`` (the default of the functions that take it): the partial play of the
    compact environment ``game_or_env`` (an AEC env with ``actions="compact"`` or a
    :class:`cardenvs.compact_seat.CompactSeatEnv`) when ``state`` is omitted or is its
    current state, else ``None`` (a flat environment, a game, another state).  Any other
    value is the snapshot itself (checked for form here, for legality by :func:`restore`).
    """
    if isinstance(pending, str):
        if pending != "env":
            raise ValueError(f"pending must be None, a (body, [kicker ids]) partial play or "
                             f"'env', got {pending!r}")
        inner = getattr(game_or_env, "unwrapped", game_or_env)
        p = getattr(inner, "_compact", None)
        if not isinstance(p, Pending):
            return None
        own = getattr(inner, "state_vec", None)
        if state is not None and (own is None or not np.array_equal(np.asarray(state), own)):
            return None
        return p.snapshot()
    return check_snapshot_form(pending)


def decision_info(env: Any) -> dict:
    """The ``info`` a state-reading agent (``needs_state``: the search agents) takes for the
    decision now in ``env``: ``{"state": the state vector (a copy)}``, plus, in a compact
    environment, ``"compact"``: the partial play (``None`` at a play's first decision), which
    asks for a compact id."""
    inner = getattr(env, "unwrapped", env)
    info: dict = {"state": np.array(inner.state_vec, np.int64)}
    if isinstance(getattr(inner, "_compact", None), Pending):
        info["compact"] = pending_of(inner)
    return info


def mover_partial(game: Any, state: np.ndarray, seat: int, snap: Any) -> Optional[PartialPlay]:
    """What ``seat`` knows of the partial play ``snap`` in ``state``: its
    :class:`PartialPlay` when ``seat`` is the seat to move, else ``None`` (the other seats see
    the position before the play).  The snapshot is checked either way."""
    pp = partial_play(game, state, snap)
    return pp if int(state[CUR]) == int(seat) else None
