"""Compact action spaces: a play with kickers chosen one decision at a time.

The flat action space of a game is its exact move set, one id per play row of the play table
(:mod:`cardenvs.core.table`) plus the ids of the other blocks (pass, bids, picks...).  Almost
all of its size is kicker combinations.  In the *compact* space a play with kickers is chosen
as its **body** first (the play without kickers, with the kind and number of its kickers:
"trio 333 with one single"), then each **kicker** as its own decision (a single or a pair of
one rank, in non-decreasing rank order, so that every play has exactly one sequence), the
same seat moving until the play is complete.  A play without kickers is one decision, and
every action id outside the play block (pass, bids, burying, the exchange, 报牌, joker picks)
maps to one compact id.

One :class:`Codec` per game and option set, derived from the play table alone (no per-game
code):

* a body is a table group (shape class, key, body cards) together with the number of kicker
  cards its rows carry; its kicker *unit* is a pair when every one of those rows carries only
  even counts of each rank, else a single.  A row's kicker sequence is its kicker cards cut
  into units, ranks non-decreasing; so (body, sequence) <-> row is a bijection;
* the compact layout is ``[non-play ids][bodies][kicker ids]`` (:attr:`Codec.blocks`);
* exactness by construction: at a position the compact legal set of step ``j`` is the set of
  distinct ``j``-th elements among the flat legal rows that match the prefix chosen so far
  (:class:`Pending`), so no play is lost or added and every offered kicker can be completed.

The pending prefix lives beside the rules state (in the environment), never in it: the
history, replays and the arena record the composed play as its flat id.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Sequence

import numpy as np
from numba import njit

from .cards import NSLOT
from .combos import FAMILY_NAMES, N_FAMILIES
from .kernels import HOT_INLINE
from .mask import new_mask

if TYPE_CHECKING:
    from .game import Game

#: the values of the ``actions`` option of the environments and views
ACTION_MODES = ("flat", "compact")


def check_actions(actions: Any) -> str:
    """``actions`` checked as an action-space mode (``"flat"`` or ``"compact"``)."""
    if not isinstance(actions, str):
        raise TypeError(f"actions must be a str ('flat' or 'compact'), got {type(actions).__name__}")
    if actions not in ACTION_MODES:
        raise ValueError(f"actions={actions!r} is not one of {ACTION_MODES}")
    return actions


class Codec:
    """The compact action space of one game and option set.

    Attributes:
        n_flat: size of the flat space; ``n_play``: play rows (flat ids ``0 .. n_play-1``).
        n_other: flat ids outside the play block; compact ids ``0 .. n_other-1`` are flat
            ids ``n_play .. n_flat-1`` in order.
        n_bodies, n_kickers: bodies (compact ids from ``n_other``) and kicker ids (after them).
        n: size of the compact space.
        first: ``(n_flat,)`` compact id of each flat id's first decision.
        body_of_row: ``(n_play,)`` body of each row (``0 .. n_bodies-1``).
        seq: ``(n_play, max_kick)`` compact kicker ids of each row's sequence, ``-1`` after it.
        ntok: ``(n_bodies,)`` kicker decisions of each body.
        body_counts: ``(n_bodies, 16)`` body cards; ``body_family``, ``body_unit``
            (1 single, 2 pair), ``body_row``: the first row of the body.
        kick_rank, kick_unit: ``(n_kickers,)`` rank and unit of each kicker id.
    """

    def __init__(self, game: "Game") -> None:
        tab = game.tab
        table = game.table
        T = len(table)
        self.n_flat = int(game.n_actions)
        self.n_play = T
        self.n_other = self.n_flat - T
        counts = np.asarray(tab.counts, np.int64)
        plays = table.plays
        body = np.array([p.body for p in plays], np.int64).reshape(T, NSLOT)
        kv = counts - body
        if (kv < 0).any():
            raise AssertionError("a play row holds fewer cards than its body")
        ksum = kv.sum(1)
        group = np.asarray(tab.group, np.int64)
        # bodies: (group, kicker cards), in row order (rows are sorted by group)
        key = group * 64 + ksum
        bkeys, body_of_row = np.unique(key, return_inverse=True)
        body_of_row = body_of_row.astype(np.int64).reshape(T)
        B = len(bkeys)
        unit = np.ones(B, np.int64)
        odd = (kv % 2).any(1)
        has_odd = np.zeros(B, bool)
        np.logical_or.at(has_odd, body_of_row, odd)
        unit[~has_odd] = 2
        unit[bkeys % 64 == 0] = 1
        ntok = (bkeys % 64) // unit
        # kicker ids: (unit, rank) pairs in use, singles by rank then pairs by rank
        row_unit = unit[body_of_row]
        used = np.zeros((3, NSLOT), bool)
        for u in (1, 2):
            sel = row_unit == u
            if sel.any():
                used[u] = (kv[sel] > 0).any(0)
        kick_unit: list[int] = []
        kick_rank: list[int] = []
        kid = np.full((3, NSLOT), -1, np.int64)
        for u in (1, 2):
            for r in range(NSLOT):
                if used[u, r]:
                    kid[u, r] = len(kick_unit)
                    kick_unit.append(u)
                    kick_rank.append(r)
        K = len(kick_unit)
        self.n_bodies, self.n_kickers = B, K
        self.n = self.n_other + B + K
        kick0 = self.n_other + B
        max_kick = int(ntok.max()) if B else 0
        seq = np.full((T, max(max_kick, 1)), -1, np.int64)
        reps = kv // row_unit[:, None]  # units of each rank, per row
        cum = np.cumsum(reps, axis=1)
        rows = np.arange(T)
        for j in range(max_kick):  # the j-th unit is on the first rank whose cum passes j
            r = (cum <= j).sum(1)
            live = j < cum[:, -1]
            rr = np.minimum(r, NSLOT - 1)
            seq[live, j] = kick0 + kid[row_unit[live], rr[live]]
        if (cum[:, -1] != ntok[body_of_row]).any() or (seq[rows, 0][ntok[body_of_row] > 0] < kick0).any():
            raise AssertionError("a play row's kicker decisions differ from its body's count")
        first = np.empty(self.n_flat, np.int64)
        first[:T] = self.n_other + body_of_row
        first[T:] = np.arange(self.n_other)
        self.first = first
        self.body_of_row = body_of_row
        self.seq = seq
        self.ntok = ntok
        self.max_kick = max_kick
        b_row = np.zeros(B, np.int64)
        b_row[body_of_row[::-1]] = np.arange(T)[::-1]
        self.body_row = b_row
        self.body_counts = body[b_row]
        self.body_family = np.asarray(tab.family, np.int64)[b_row]
        self.body_unit = unit
        self.kick_unit = np.array(kick_unit, np.int64)
        self.kick_rank = np.array(kick_rank, np.int64)
        self._table = table
        self._game = game
        self._rows: Optional[dict] = None
        # the (body, sequence) -> row check: every row's sequence is its own
        packed = np.concatenate([body_of_row[:, None], seq], 1)
        if len(np.unique(packed, axis=0)) != T:
            raise AssertionError("two play rows share a compact sequence")
        self.blocks = {"other": (0, self.n_other), "body": (self.n_other, kick0),
                       "kicker": (kick0, self.n)}
        R = game.deck.n_ranks
        self.ranks = R
        self.depth = int(max(1, counts[:, :R].max())) if T else 1
        #: the observation fields the mover gets for a partial play (see :meth:`encode`)
        self.obs_extra = R * self.depth + N_FAMILIES + 3

    # -- ids -------------------------------------------------------------------------------
    def parts(self, flat: int) -> list[int]:
        """The compact decisions of flat action ``flat``, in order."""
        flat = int(flat)
        if not 0 <= flat < self.n_flat:
            raise ValueError(f"action {flat} is outside the flat action space [0, {self.n_flat})")
        out = [int(self.first[flat])]
        if flat < self.n_play:
            out += [int(x) for x in self.seq[flat, : self.ntok[self.body_of_row[flat]]]]
        return out

    def row_of(self, body: int, kickers: Sequence[int]) -> int:
        """The flat row of body ``body`` (``0 .. n_bodies-1``) with compact kicker ids
        ``kickers`` (``ValueError`` when no row has them)."""
        if self._rows is None:  # (body, kickers...) -> row, built on first use
            self._rows = {(int(self.body_of_row[t]),
                           *self.seq[t, : self.ntok[self.body_of_row[t]]].tolist()): t
                          for t in range(self.n_play)}
        key = (int(body), *(int(x) for x in kickers))
        row = self._rows.get(key)
        if row is None:
            raise ValueError(f"no play of body {body} has kickers {list(key[1:])}")
        return int(row)

    def to_string(self, cid: int) -> str:
        """Readable form of compact id ``cid`` (``pass``, ``333 +1 single``, ``kicker 55``)."""
        cid = int(cid)
        if not 0 <= cid < self.n:
            raise ValueError(f"action {cid} is outside the compact action space [0, {self.n})")
        deck = self._table.deck
        if cid < self.n_other:
            return self._game.action_to_string(self.n_play + cid)
        if cid < self.n_other + self.n_bodies:
            b = cid - self.n_other
            cards = deck.format(tuple(int(c) for c in self.body_counts[b]))
            name = FAMILY_NAMES[int(self.body_family[b])]
            n = int(self.ntok[b])
            if n == 0:
                return f"{name} {cards}"
            what = "single" if self.body_unit[b] == 1 else "pair"
            return f"{name} {cards} +{n} {what}{'s' if n > 1 else ''}"
        k = cid - self.n_other - self.n_bodies
        c = np.zeros(NSLOT, np.int64)
        c[self.kick_rank[k]] = self.kick_unit[k]
        return "kicker " + deck.format(tuple(int(x) for x in c))

    def layout_markdown(self) -> str:
        """The compact layout as a markdown table (block, ids, size)."""
        lines = ["| block | compact ids | size |", "| --- | --- | ---: |"]
        for name, (a, b) in self.blocks.items():
            lines.append(f"| {name} | {a}-{b - 1} | {b - a:,} |" if b > a else f"| {name} | - | 0 |")
        lines.append(f"| total | | {self.n:,} |")
        return "\n".join(lines)

    # -- the mover's partial play ----------------------------------------------------------
    def encode(self, pending: "Pending", out: np.ndarray) -> None:
        """Write the partial-play fields (:attr:`obs_extra` floats) into ``out``: the cards
        committed so far as "at least k of the rank" planes (``ranks x depth``), the body's
        family one-hot, whether kickers are pairs, the kicker decisions still to make
        (divided by the most any body has), and a pending flag.  All zeros when no play is
        pending (and for every seat but the mover)."""
        out[: self.obs_extra] = 0.0
        b = pending.body
        if b < 0:
            return
        R, D = self.ranks, self.depth
        c = self.body_counts[b].copy()
        for x in pending.prefix[: pending.j]:
            k = x - self.n_other - self.n_bodies
            c[self.kick_rank[k]] += self.kick_unit[k]
        planes = (c[:R, None] > np.arange(D)[None, :]).reshape(-1)
        out[: R * D] = planes
        o = R * D
        out[o + int(self.body_family[b])] = 1.0
        o += N_FAMILIES
        out[o] = float(self.body_unit[b] == 2)
        out[o + 1] = (self.ntok[b] - pending.j) / max(1, self.max_kick)
        out[o + 2] = 1.0


def codec_of(game: "Game") -> Codec:
    """The compact codec of ``game`` (built on first use and kept on the game object)."""
    c = getattr(game, "_compact_codec", None)
    if c is None:
        c = Codec(game)
        setattr(game, "_compact_codec", c)  # kept with the game (not a declared attribute)
    return c


# -- kernels ----------------------------------------------------------------------------------
@njit(cache=True)
def _first_step(legal, n, first, mark, out, n_old):
    """Distinct first decisions of the flat legal ids ``legal[:n]``, ascending, into ``out``;
    ``mark`` (0/1 per compact id) ends up marking exactly them (the previous set,
    ``out[:n_old]``, unmarked first)."""
    for i in range(n_old):
        mark[out[i]] = 0
    for i in range(n):
        mark[first[legal[i]]] = 1
    k = 0
    for c in range(mark.shape[0]):
        if mark[c]:
            out[k] = c
            k += 1
    return k


@njit(cache=True)
def _narrow_body(legal, n, first, cid, cand):
    """The flat legal ids whose first decision is ``cid``, into ``cand``; their count."""
    k = 0
    for i in range(n):
        if first[legal[i]] == cid:
            cand[k] = legal[i]
            k += 1
    return k


@njit(cache=True)
def _narrow_kick(cand, n, seq, j, cid):
    """Keep (in place) the rows of ``cand[:n]`` whose ``j``-th kicker is ``cid``."""
    k = 0
    for i in range(n):
        if seq[cand[i], j] == cid:
            cand[k] = cand[i]
            k += 1
    return k


@njit(cache=True)
def _next_kicks(cand, n, seq, j, mark, out, n_old):
    """Distinct ``j``-th kickers of the rows ``cand[:n]``, ascending, into ``out``; ``mark``
    marks exactly them afterwards (the previous set, ``out[:n_old]``, unmarked first)."""
    for i in range(n_old):
        mark[out[i]] = 0
    lo = mark.shape[0]
    hi = 0
    for i in range(n):
        c = seq[cand[i], j]
        mark[c] = 1
        lo = min(lo, c)
        hi = max(hi, c)
    k = 0
    for c in range(lo, hi + 1):
        if mark[c]:
            out[k] = c
            k += 1
    return k


@njit(**HOT_INLINE)
def first_decisions(i, vlegal, vn, first, marks, mark, legal, n_legal):
    """Slot ``i``'s compact legal ids at a first decision (for a compact batch: the batched
    engine, :func:`cardenvs.vector_kernels._engine`, calls it for every slot it moves): the
    distinct first decisions of its flat legal ids ``vlegal[i, :vn[i]]``, ascending, into
    ``legal[i]`` (``-1`` after them), their count into ``n_legal[i]``; with ``marks``,
    ``mark[i]`` marks exactly them afterwards (1 at each, 0 elsewhere).

    Each id is inserted from the end of the list built so far (a duplicate is skipped): flat
    legal ids come ascending in every game, so their bodies come non-decreasing and each costs
    one comparison (the few ids outside the play block, listed last, are the smallest compact
    ids and move to the front); any other order gives the same list, more slowly."""
    n_old = clear_ids(i, marks, mark, legal, n_legal)
    m = 0
    for k in range(vn[i]):
        m = insert_distinct(legal, i, m, first[vlegal[i, k]])
    close_ids(i, m, n_old, marks, mark, legal, n_legal)


@njit(**HOT_INLINE)
def clear_ids(i, marks, mark, legal, n_legal):
    """Before slot ``i``'s compact legal ids are rebuilt in ``legal[i]``: with ``marks``,
    unmark the current ones in ``mark[i]``; returns their count (for :func:`close_ids`)."""
    n_old = n_legal[i]
    if marks:
        for k in range(n_old):
            mark[i, legal[i, k]] = 0
    return n_old


@njit(**HOT_INLINE)
def close_ids(i, m, n_old, marks, mark, legal, n_legal):
    """After ``m`` new ids were written to ``legal[i, :m]``: ``-1`` over the rest of the
    ``n_old`` former ones, the count into ``n_legal[i]``, and with ``marks`` the new ids
    marked in ``mark[i]``."""
    for k in range(m, n_old):
        legal[i, k] = -1
    if marks:
        for k in range(m):
            mark[i, legal[i, k]] = 1
    n_legal[i] = m


@njit(**HOT_INLINE)
def insert_distinct(out, i, m, x):
    """Insert ``x`` into the ascending distinct ids ``out[i, :m]`` unless it is there; the new
    count.  The search runs from the end (``x`` mostly belongs there)."""
    p = m
    while p > 0 and out[i, p - 1] > x:
        p -= 1
    if p > 0 and out[i, p - 1] == x:
        return m
    for q in range(m, p, -1):
        out[i, q] = out[i, q - 1]
    out[i, p] = x
    return m + 1


class Pending:
    """A seat's partial play and the compact legal ids of its next decision.

    ``body``: the chosen body (``-1``: none, the next decision is a first one); ``j``:
    kickers chosen so far, ``prefix[:j]`` their compact ids; ``cand[:nc]``: the flat legal
    rows that still match; ``legal[:n_legal]``: the compact legal ids now.
    """

    def __init__(self, codec: Codec) -> None:
        self.codec = codec
        self.body = -1
        self.j = 0
        self.prefix = np.full(max(codec.max_kick, 1), -1, np.int64)
        self.cand = np.zeros(codec.n_flat, np.int64)
        self.nc = 0
        self.legal = np.zeros(codec.n, np.int64)
        self.n_legal = 0
        self._mark = np.zeros(codec.n, np.int8)

    def start(self, flat_legal: np.ndarray, n: int) -> None:
        """A new decision: the compact legal ids of the first step of ``flat_legal[:n]``."""
        c = self.codec
        self.body = -1
        self.j = 0
        self.nc = 0
        self.n_legal = int(_first_step(flat_legal, n, c.first, self._mark, self.legal,
                                       self.n_legal))

    def clear(self) -> None:
        """No decision pending (the end of a game)."""
        self._mark[self.legal[: self.n_legal]] = 0
        self.body = -1
        self.j = 0
        self.nc = 0
        self.n_legal = 0

    def is_offered(self, cid: int) -> bool:
        """Whether compact id ``cid`` is among the legal ids now."""
        return 0 <= cid < self._mark.shape[0] and self._mark[cid] != 0

    def choose(self, cid: int, flat_legal: np.ndarray, n: int) -> int:
        """Apply the offered compact id ``cid``: the flat action it completes, or ``-1``
        while kickers remain (the legal ids are then the next kicker's)."""
        c = self.codec
        if self.body < 0:
            if cid < c.n_other:
                return c.n_play + cid
            b = cid - c.n_other
            if c.ntok[b] == 0:  # a body without kickers is one row, the play
                return int(c.body_row[b])
            self.body = b
            self.j = 0
            self.nc = int(_narrow_body(flat_legal, n, c.first, cid, self.cand))
        else:
            self.nc = int(_narrow_kick(self.cand, self.nc, c.seq, self.j, cid))
            self.prefix[self.j] = cid
            self.j += 1
            if self.j == c.ntok[self.body]:
                if self.nc != 1:
                    raise AssertionError(f"{self.nc} rows complete one compact sequence")
                return int(self.cand[0])
        self.n_legal = int(_next_kicks(self.cand, self.nc, c.seq, self.j, self._mark,
                                       self.legal, self.n_legal))
        return -1

    def snapshot(self) -> Optional[tuple]:
        """``(body, prefix)`` of the partial play, ``None`` when none is pending."""
        if self.body < 0:
            return None
        return (int(self.body), [int(x) for x in self.prefix[: self.j]])

    def restore(self, snap: Any, flat_legal: np.ndarray, n: int) -> None:
        """Replay a :meth:`snapshot` over the flat legal ids ``flat_legal[:n]`` (each of its
        decisions checked as offered; ``ValueError`` otherwise)."""
        self.start(flat_legal, n)
        if snap is None:
            return
        body, prefix = snap
        c = self.codec
        if not 0 <= int(body) < c.n_bodies:
            raise ValueError(f"snapshot's partial play {snap!r}: body {body} is not in "
                             f"[0, {c.n_bodies})")
        for cid in [c.n_other + int(body), *(int(x) for x in prefix)]:
            if not self.is_offered(cid):
                raise ValueError(f"snapshot's partial play {snap!r} is not legal in its state")
            if self.choose(cid, flat_legal, n) >= 0:
                raise ValueError(f"snapshot's partial play {snap!r} is a complete play")


# -- the AEC environment's compact mode (hooks of cardenvs.core.aec.CardEnv) ---------------------
def attach(env) -> None:
    """Turn ``env`` (a fresh :class:`cardenvs.core.aec.CardEnv`) into its compact mode: its
    action spaces become the codec's, its observations gain the partial-play fields, and
    ``env._compact`` holds the mover's :class:`Pending` partial play."""
    from gymnasium import spaces

    g = env.game
    c = codec_of(g)
    size = g.layout.size + c.obs_extra
    obs_space = spaces.Dict({
        "observation": spaces.Box(0.0, 1.0, (size,), np.float32),
        "action_mask": spaces.Box(0, 1, (c.n,), np.int8),
    })
    env.observation_spaces = {a: obs_space for a in env.possible_agents}
    env.action_spaces = {a: spaces.Discrete(c.n) for a in env.possible_agents}
    env.codec = c
    env._compact = Pending(c)


def refresh(env) -> None:
    """After the flat legal ids changed: the compact legal ids of a new first decision."""
    p = env._compact
    if env._n_legal:
        p.start(env._legal_buf, env._n_legal)
    else:
        p.clear()
    _info_legal(env)


def _info_legal(env) -> None:
    if env.info_legal_actions and env.agents and env._n_legal:
        env.infos[env.agent_selection]["legal_actions"] = env._compact.legal[
            : env._compact.n_legal].copy()


def observe(env, agent: str, seat: int) -> dict:
    """``env.observe(agent)`` (of seat ``seat``) in compact mode: the flat observation, then
    the partial-play fields (the mover's own only; zeros for every other seat), and the
    compact mask."""
    g = env.game
    c = env.codec
    p = env._compact
    L = g.layout.size
    obs = np.empty(L + c.obs_extra, np.float32)
    g.encode(env.state_vec, seat, obs)
    mask = new_mask(c.n)
    # legal ids exist only while the game is on (refresh, clear, restore)
    if p.n_legal and agent == env.agent_selection:
        mask[p.legal[: p.n_legal]] = 1
        if p.body >= 0:
            c.encode(p, obs[L:])
            return {"observation": obs, "action_mask": mask}
    obs[L:] = 0.0
    return {"observation": obs, "action_mask": mask}


def step(env, agent: str, action: int) -> int:
    """The compact part of ``env.step(action)`` (``action`` an int already): the flat action
    the decision completes, or ``-1`` when the step is done here (a body or kicker chosen
    with kickers still to come: the same seat moves again, every reward 0; or an illegal
    action handled by the env's ``illegal`` policy).  ``ValueError`` outside the space."""
    c = env.codec
    p = env._compact
    if not 0 <= action < c.n:
        raise ValueError(f"action {action} is outside the compact action space [0, {c.n})")
    if not p.is_offered(action):
        if env.illegal == "raise":
            shown = ", ".join(c.to_string(a) for a in p.legal[: min(p.n_legal, 8)])
            more = "" if p.n_legal <= 8 else f", ... ({p.n_legal} in all)"
            what = "kicker" if p.body >= 0 else "action"
            raise ValueError(f"illegal {what} {action} ({c.to_string(action)!r}) for {agent}; "
                             f"legal: {shown}{more}")
        env._cumulative_rewards[agent] = 0.0
        p.clear()
        env._terminate_illegal(agent)
        return -1
    flat = p.choose(action, env._legal_buf, env._n_legal)
    if flat >= 0:
        return flat
    env._cumulative_rewards[agent] = 0.0
    for a in env.rewards:
        env.rewards[a] = 0.0
    env._accumulate_rewards()
    _info_legal(env)
    return -1


def check_snapshot(env, state: np.ndarray, snap) -> None:
    """``ValueError`` unless ``snap`` (a :meth:`Pending.snapshot`) is a partial play that is
    legal, and not complete, in ``state`` (checked on scratch buffers: nothing changes)."""
    if snap is None:
        return
    if (not isinstance(snap, (tuple, list)) or len(snap) != 2
            or not isinstance(snap[1], (tuple, list))):
        raise ValueError(f"snapshot's partial play {snap!r} is not (body, [kickers])")
    buf = np.zeros(env.game.n_actions, np.int64)
    n = env.game.legal(state, buf)
    Pending(env.codec).restore((snap[0], list(snap[1])), buf, n)


def flat_legal(env) -> np.ndarray:
    """The flat ids of the whole plays that complete the mover's partial play (all flat
    legal ids when none is pending)."""
    p = env._compact
    if p.body >= 0:
        return np.sort(p.cand[: p.nc])
    return env._legal_buf[: env._n_legal].copy()
