"""The rules query API: ask what a hand can play without building an environment."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

#: registry name -> module of the AEC environment
GAMES = {"doudizhu": "doudizhu_v0", "doudizhu4": "doudizhu4_v0", "wakeng": "wakeng_v0",
         "niangniang": "niangniang_v0", "wulong": "wulong_v0"}


def make_game(game: str, **options):
    """The compiled :class:`cardenvs.core.game.Game` of ``game`` with ``options``."""
    return _make_game(game, tuple(sorted(options.items())))


@lru_cache(maxsize=32)
def _make_game(game: str, options: tuple):
    opts = dict(options)
    if game == "doudizhu":
        from .games.doudizhu import DouDizhu

        return DouDizhu(3, **opts)
    if game == "doudizhu4":
        from .games.doudizhu import DouDizhu

        return DouDizhu(4, **opts)
    if game == "wakeng":
        from .games.wakeng import Wakeng

        return Wakeng(**opts)
    if game == "niangniang":
        from .games.niangniang import Niangniang

        return Niangniang(**opts)
    if game == "wulong":
        from .games.wulong import Wulong

        return Wulong(**opts)
    raise ValueError(f"unknown game {game!r}; known games: {', '.join(GAMES)}")


def game_info(game: str):
    """The metadata record (:class:`cardenvs.core.game.GameInfo`) of a game."""
    return make_game(game).info


def legal_moves(game: str, hand: str, prev: str | None = None, *, prev_type: str | None = None,
                **options) -> list[str]:
    """The distinct card sets of every legal play of ``hand`` (pass excluded).

    Args:
        game: a registry name, e.g. ``"doudizhu"``.
        hand: the cards in hand, e.g. ``"33344455BR"``.
        prev: the play to beat (``None`` = free lead).  Plays with kickers may be written
            ``body+kickers`` (``"333444555+666"``) to fix their reading.
        prev_type: the family of ``prev`` when its cards can be read several ways
            (e.g. ``"airplane"`` or ``"airplane_singles"``).
        **options: the game's options (e.g. ``preset="douzero"``).

    Returns:
        Card strings sorted by the game's rank order within each play, listed by size then
        rank.  Raises ``ValueError`` for unknown cards, impossible hands, or an ambiguous
        ``prev``.
    """
    from .core.kernels import gen_legal

    # -- wulong: its own query (cardenvs.games.wulong.Wulong.legal_moves): every realisation of
    # a play with its wild jokers, written "45R[6]78"; keywords plain=True (effective plays,
    # "45678") and declared=True (the hand has declared: every play holds its top card) ------
    if game == "wulong":
        query = {k: options.pop(k) for k in ("plain", "declared") if k in options}
        return make_game(game, **options).legal_moves(hand, prev, prev_type, **query)
    g = make_game(game, **options)
    counts = g.deck.parse(hand, what="hand")
    max_hand = getattr(g, "max_hand", None)
    if max_hand is not None and counts.sum() > max_hand:
        raise ValueError(f"hand {hand!r} has {int(counts.sum())} cards; at most {max_hand} in {game}")
    prev_row = -1
    if prev is not None:
        prev_row = g.table.find(prev, prev_type, strict=True, what="prev")
        both = counts + g.tab.counts[prev_row]
        over = np.flatnonzero(both > g.deck.full_counts())
        check = getattr(g, "check_position", None)  # wild-joker games: jokers may stand in
        if check is not None:
            check(counts, prev_row)
        elif over.size:
            r = int(over[0])
            raise ValueError(
                f"impossible position: hand {hand!r} and prev {prev!r} hold {int(both[r])} "
                f"cards of {g.deck.order[r]!r}; the deck has {g.deck.copies[r]}"
            )
    elif prev_type is not None:
        raise ValueError("prev_type given without prev")
    out = np.empty(len(g.table), np.int64)
    rows = getattr(g, "legal_rows", None)  # wild-joker games generate with their jokers
    k = rows(counts, prev_row, out) if rows is not None else gen_legal(counts, prev_row, g.tab, out)
    seen = {}
    for row in out[:k]:
        c = g.table.plays[row].counts
        if c not in seen:
            seen[c] = g.deck.format(c)
    return sorted(seen.values(), key=lambda s: (len(s), [g.deck.order.index(ch) for ch in s]))
