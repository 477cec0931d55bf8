"""The rules query API: ask what a hand can play without building an environment."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from .registry import REGISTRY, spec as _spec

if TYPE_CHECKING:
    from .core.game import Game, GameInfo

#: registry name -> module of the AEC environment (from :data:`cardenvs.registry.REGISTRY`)
GAMES = {name: s.env_module for name, s in REGISTRY.items()}


def make_game(game: str, **options: Any) -> Game:
    """The compiled :class:`cardenvs.core.game.Game` of ``game`` with ``options``."""
    return _make_game(game, tuple(sorted(options.items())))


@lru_cache(maxsize=32)
def _make_game(game: str, options: tuple) -> Game:
    return _spec(game).make(**dict(options))


def game_info(game: str) -> GameInfo:
    """The metadata record (:class:`cardenvs.core.game.GameInfo`) of a game."""
    return make_game(game).info


def _move_generator(game: str):
    """``fn(counts, prev, tab, opts, out) -> k``: the legal plays of a whole hand against row
    ``prev`` as the game's env finds them (its registry ``move_generator``, the kernel its
    ``legal`` calls: Pao De Kuai's keeps its whole-hand-only rows out of a larger hand), or
    :func:`cardenvs.core.kernels.gen_legal` (the plain scan of the play table)."""
    ref = _spec(game).move_generator
    if ref is None:
        return _plain_generator
    import importlib

    module, name = ref.split(":")
    return getattr(importlib.import_module(module), name)


def _plain_generator(counts, prev, tab, opts, out) -> int:
    from .core.kernels import gen_legal

    return gen_legal(counts, prev, tab, out)


def legal_moves(game: str, hand: str, prev: str | None = None, *, prev_type: str | None = None,
                **options: Any) -> list[str]:
    """The distinct card sets of every legal play of ``hand`` (pass excluded).

    ``hand`` is the mover's whole hand, and the plays are those the game's env offers a seat
    holding it (the same legality code: the game's registered move generator), so rules that
    depend on the hand hold: Pao De Kuai's short trios and airplanes (``555+3``) are legal only
    as the whole hand.  Rules that depend on the rest of the position (the first play holding
    the lead card, the highest single before a one-card 下家, a declarer's top card) are not
    applied.

    Args:
        game: a registry name, e.g. ``"doudizhu"``.
        hand: the cards in hand, e.g. ``"33344455BR"``.
        prev: the play to beat (``None`` = free lead).  Plays with kickers may be written
            ``body+kickers`` (``"333444555+666"``) to fix their reading.  In the wild-joker
            games (``niangniang``, ``wulong``) ``prev`` may be written plainly (``"45678"``:
            jokers may have stood in) or with its jokers (``"45R[6]78"``: the big joker stood
            for the 6).
        prev_type: the family of ``prev`` when its cards can be read several ways
            (e.g. ``"airplane"`` or ``"airplane_singles"``).
        **options: the game's options (e.g. ``preset="douzero"``), plus the query keywords of
            games with their own query (a ``query_moves`` method and its ``query_keywords``):

            * ``niangniang``, ``wulong``: ``plain=True`` lists the distinct effective plays
              (``"45678"``) instead of every realisation;
            * ``wulong``: ``declared=True``: the hand has declared (报牌), so every play holds
              its top card.

    Returns:
        Card strings sorted by the game's rank order within each play, listed by size then
        rank.  The wild-joker games list every realisation of each play, a wild joker
        written with the rank it stands for in brackets (``"45R[6]78"``, ``"333B[3]"``; the
        game's own canonical choices of which joker stands in), ``plain=True`` the effective
        plays.  Raises ``ValueError`` for unknown cards, impossible hands, malformed bracket
        notation, or an ambiguous ``prev``.
    """
    # -- games with their own query (wild jokers): Game.query_moves(hand, prev, prev_type,
    # **query), the query keywords named by the game's ``query_keywords`` ------------------
    keys = getattr(make_game(game), "query_keywords", ()) if options else ()
    query = {k: options.pop(k) for k in keys if k in options}
    g = make_game(game, **options)
    hook = getattr(g, "query_moves", None)
    if hook is not None:
        return hook(hand, prev, prev_type, **query)
    counts = g.deck.parse(hand, what="hand")
    max_hand = getattr(g, "max_hand", None)
    if max_hand is not None and counts.sum() > max_hand:
        raise ValueError(f"hand {hand!r} has {int(counts.sum())} cards; at most {max_hand} in {game}")
    prev_row = -1
    if prev is not None:
        prev_row = g.table.find(prev, prev_type, strict=True, what="prev")
        both = counts + g.tab.counts[prev_row]
        over = np.flatnonzero(both > g.deck.full_counts())
        if over.size:
            r = int(over[0])
            raise ValueError(
                f"impossible position: hand {hand!r} and prev {prev!r} hold {int(both[r])} "
                f"cards of {g.deck.order[r]!r}; the deck has {g.deck.copies[r]}"
            )
    elif prev_type is not None:
        raise ValueError("prev_type given without prev")
    out = np.empty(len(g.table), np.int64)
    k = _move_generator(game)(np.ascontiguousarray(counts, np.int64), np.int64(prev_row), g.tab,
                              g.opts, out)
    seen = {}
    for row in out[:k]:
        c = g.table.plays[row].counts
        if c not in seen:
            seen[c] = g.deck.format(c)
    return sorted(seen.values(), key=lambda s: (len(s), [g.deck.order.index(ch) for ch in s]))
