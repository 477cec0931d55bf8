"""Presets of the 3-player Dou Dizhu move set: ``"seed"``, ``"douzero"``, ``"rlcard"``.

A preset returns the list of plays and, per play, what a follower must beat after it (see
:class:`cardenvs.core.table.Table`).  The ``douzero`` and ``rlcard`` presets reproduce the legal
plays of those packages exactly (the same card sets on every hand, for a free lead and against
every previous play); ``tests/test_presets.py`` checks them against the installed packages on
random positions.  Neither package is needed at run time: both move sets are stated below as
rules and generated here.

Rank indices are this game's order ``3 4 5 6 7 8 9 T J Q K A 2 B R`` (0..14).

``preset="seed"`` (default)
    The combination table of the rules page (``docs/rules/doudizhu.md``).  28,237 plays.

``preset="rlcard"`` — RLCard 1.2's Dou Dizhu action set (27,471 plays + pass = 27,472)
    Differences from ``seed``:

    * airplane + singles: a kicker rank carried three times may not be the rank just below or
      just above the chain (so ``333444555+666`` and ``444555666+333`` do not exist: those
      cards are only the 4-trio airplane ``333444555666``); three ``2`` are allowed next to a
      chain ending at ``A`` (``QQQKKKAAA+222``).
    * consequently every card set has exactly one reading (the seed's 766 readings of an
      airplane with an adjacent kicker trio are removed).

    Everything else is the seed's: trio + single may carry ``2``/``B``/``R``; airplane kickers
    never hold four of a rank nor both jokers; four + two never carries ``BR``; lengths
    straight 5..12, pair chain 3..10, airplane 2..6, with singles 2..5, with pairs 2..4.  A play
    is beaten by a play of the same type and length with a higher main rank, or by a bomb /
    the rocket, exactly as in the seed rules (RLCard's weights order each type as our keys do).

``preset="douzero"`` — DouZero 1.1's move generator, detector and selector (29,993 plays)
    DouZero lists the moves of a hand with a generator per type, and decides what a follower
    must beat by *re-reading the cards* of the previous play with its detector.  Differences
    from ``seed``:

    * airplane + singles: the ``k`` kickers are any ``k`` cards of ranks outside the chain:
      four of a rank (``333444555666+7777``), both jokers (``333444+BR``) and a trio next to
      the chain are allowed.  One row per card set and length: of the two chains of
      ``333444555666`` read with a kicker trio the row keeps the higher one
      (``444555666+333``).
    * four + two singles may carry ``BR`` (``3333+BR``).
    * the comparison rank (the row's ``key``) of airplane + singles is the highest rank held
      exactly three times in the play, kickers included: ``333444555+777`` (key ``7``) beats
      ``444555666+89T`` (key ``6``) and is beaten by ``444555666+999`` (key ``9``); a kicker
      quad does not count.
    * what a follower must beat is the detector's reading of the cards, not the row's:

      - ``444555666+333`` (an airplane + singles of 3 with a kicker trio next to the chain)
        reads as the 4-trio airplane ``333444555666``, so both rows of those cards are
        beaten only by a higher 4-trio airplane (or a bomb / the rocket);
      - an airplane + singles whose kickers hold four of a rank (``333444555666+7777``), or
        of length 4 or 5 whose kickers hold three of a rank (``333444555666+8889``), is
        unreadable (DouZero's ``TYPE_15_WRONG``): after it only a bomb or the rocket can be
        played (3,838 rows);
      - an airplane + singles of 3 with a kicker trio not next to the chain
        (``333444555777``) stays an airplane + singles of 3 with key the higher trio.

    Everything else is the seed's: trio + single may carry ``2``/``B``/``R``, four + two
    singles may be a pair, four + two pairs are two distinct pairs, airplane + pairs carry
    distinct pairs outside the chain, the lengths are the seed's (all of DouZero's moves fit a
    20-card hand), bombs compare by rank and the rocket beats everything.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Literal, Optional, Union

from ..core.cards import NSLOT
from ..core.combos import (
    AIRPLANE, AIRPLANE_PAIRS, AIRPLANE_SINGLES, BOMB, FOUR_TWO_PAIRS, FOUR_TWO_SINGLES, PAIR,
    PAIR_CHAIN, ROCKET, SINGLE, STRAIGHT, TRIO, TRIO_PAIR, TRIO_SINGLE, ComboRules, Play,
    enumerate_plays,
)

PRESET_NAMES = ("seed", "douzero", "rlcard")

#: A follow override: ``None`` (own reading), ``(family, length, key)``, or ``False``.
Follow = Union[None, bool, tuple[int, int, int]]


def preset_plays(rules: ComboRules, preset: str, n_players: int = 3
                 ) -> tuple[list[Play], Optional[list[Follow]]]:
    """``(plays, follow)`` of a preset (``follow`` is ``None`` when every play keeps its reading).

    Args:
        rules: the game's combination rules (:func:`cardenvs.games.doudizhu.combo_rules`).
        preset: ``"seed"``, ``"douzero"`` or ``"rlcard"``.
        n_players: 3 or 4; the package presets exist for 3 players only.
    """
    if not isinstance(preset, str):
        raise TypeError(f"preset must be a string, got {type(preset).__name__}")
    if preset == "seed":
        return enumerate_plays(rules), None
    if preset not in PRESET_NAMES:
        raise ValueError(f"unknown preset {preset!r}; known: {', '.join(PRESET_NAMES)}")
    if n_players != 3:
        raise ValueError(f"preset {preset!r} exists for 3 players only, got n_players={n_players}")
    _check_standard(rules)
    if preset == "rlcard":
        return enumerate_plays(replace(rules, kicker_filter=rlcard_kicker_filter)), None
    return douzero_plays(rules)


def _check_standard(rules: ComboRules) -> None:
    if rules.deck.order != "3456789TJQKA2BR" or rules.deck.copies != (4,) * 13 + (1, 1):
        raise ValueError("the douzero / rlcard presets need the one-deck 3-player Dou Dizhu deck")


# ---------------------------------------------------------------------------------------------
# RLCard
# ---------------------------------------------------------------------------------------------

_TWO = 12  # rank index of "2" (one above A, never in chains)


def rlcard_kicker_filter(family: int, body: tuple, kick: tuple) -> bool:
    """RLCard's extra kicker rule: no kicker trio just below / above an airplane's chain.

    Three ``2`` are the exception (``2`` is never part of a chain).  Other families keep the
    seed's kickers.
    """
    if family != AIRPLANE_SINGLES:
        return True
    chain = [r for r in range(NSLOT) if body[r]]
    for r in (chain[0] - 1, chain[-1] + 1):
        if 0 <= r < _TWO and kick[r] >= 3:
            return False
    return True


# ---------------------------------------------------------------------------------------------
# DouZero
# ---------------------------------------------------------------------------------------------

_ACE = 11  # highest rank index allowed in chains
_B, _R = 13, 14


def _consecutive(ranks: list[int]) -> bool:
    """Consecutive in DouZero's card values (3..14 for 3..A, 17 for 2, 20/30 for jokers).

    Those values are consecutive exactly where our indices are and stay within 3..A.
    """
    return all(b == a + 1 and b <= _ACE for a, b in zip(ranks, ranks[1:]))


def douzero_reading(counts: Iterable[int]) -> Union[Literal[False], tuple[int, int, int]]:
    """DouZero's detector reading of a card set as ``(family, length, key)``, or ``False``.

    ``key`` is in this module's convention (rank indices; chains by their highest rank; the
    airplane + singles by the highest rank held exactly three times; bombs and the rocket by
    the rank for bombs, unused for the rocket: those keep their own readings).  ``False`` is
    DouZero's ``TYPE_15_WRONG`` (only bombs and the rocket can follow).  The decision order is
    DouZero's: size 1..4 shapes, straight, size 5, four + two (6 cards), four + two pairs
    (8 cards), pair chain, airplane, then airplanes with kickers.
    """
    cnt = {r: int(c) for r, c in enumerate(counts) if int(c) > 0}
    n = sum(cnt.values())
    ranks = sorted(cnt)
    by_count: dict[int, list[int]] = {}
    for r in ranks:
        by_count.setdefault(cnt[r], []).append(r)
    ncount = {k: len(v) for k, v in by_count.items()}
    if n == 0:
        raise ValueError("an empty card set has no reading")
    if n == 1:
        return (SINGLE, 1, ranks[0])
    if n == 2:
        if len(ranks) == 1:
            return (PAIR, 1, ranks[0])
        if ranks == [_B, _R]:
            return (ROCKET, 0, -1)
        return False
    if n == 3:
        return (TRIO, 1, ranks[0]) if len(ranks) == 1 else False
    if n == 4:
        if len(ranks) == 1:
            return (BOMB, 0, ranks[0])
        if len(ranks) == 2 and 3 in by_count:
            return (TRIO_SINGLE, 1, by_count[3][0])
        return False
    if len(ranks) == n and _consecutive(ranks):
        return (STRAIGHT, n, ranks[-1])
    if n == 5:
        if len(ranks) == 2:  # the middle card of the sorted five: the trio's rank
            return (TRIO_PAIR, 1, max(ranks, key=lambda r: cnt[r]))
        return False
    if n == 6 and len(ranks) in (2, 3) and ncount.get(4) == 1 and (
            ncount.get(2) == 1 or ncount.get(1) == 2):
        return (FOUR_TWO_SINGLES, 1, by_count[4][0])
    if n == 8 and ((len(ranks) in (2, 3) and ncount.get(4) == 1 and ncount.get(2) == 2)
                   or ncount.get(4) == 2):
        return (FOUR_TWO_PAIRS, 1, max(by_count[4]))
    if ncount.get(2) == len(ranks) and _consecutive(ranks):
        return (PAIR_CHAIN, len(ranks), ranks[-1])
    if ncount.get(3) == len(ranks) and _consecutive(ranks):
        return (AIRPLANE, len(ranks), ranks[-1])
    if ncount.get(3, 0) >= 2:
        if any(c not in (1, 2, 3) for c in cnt.values()):
            return False
        trios = by_count[3]
        singles, pairs = ncount.get(1, 0), ncount.get(2, 0)
        key = max(trios)  # DouZero compares these by the highest rank held exactly 3 times
        if _consecutive(trios):
            if len(trios) == singles + 2 * pairs:
                return (AIRPLANE_SINGLES, len(trios), key)
            if len(trios) == pairs and len(ranks) == 2 * len(trios):
                return (AIRPLANE_PAIRS, len(trios), key)
        if len(trios) == 4 and (_consecutive(trios[1:]) or _consecutive(trios[:-1])):
            return (AIRPLANE_SINGLES, 3, key)
    return False


def douzero_plays(rules: ComboRules) -> tuple[list[Play], list[Follow]]:
    """DouZero's move set as plays and follow overrides (see the module docstring)."""
    wide = replace(rules, single_kicker_max_same=4, kickers_both_jokers=True,
                   four_two_both_jokers=True, kicker_filter=None)
    plays: list[Play] = []
    airplane_singles: dict[tuple, Play] = {}
    for p in enumerate_plays(wide):
        if p.family != AIRPLANE_SINGLES:
            plays.append(p)
            continue
        # key: the highest rank held exactly three times (DouZero's comparison rank); one row
        # per card set: keep the reading with the highest chain (its key is then its top
        # whenever a chain can end at the key)
        key = max(r for r in range(NSLOT) if p.counts[r] == 3)
        q = replace(p, key=key)
        old = airplane_singles.get((p.length, p.counts))
        if old is None or max(_ranks(q.body)) > max(_ranks(old.body)):
            airplane_singles[(p.length, p.counts)] = q
    plays.extend(airplane_singles.values())
    follow: list[Follow] = []
    for p in plays:
        reading = douzero_reading(p.counts)
        if reading is False:
            follow.append(False)
            continue
        fam, length, key = reading
        if fam in (BOMB, ROCKET):
            if p.family != fam:
                raise AssertionError(f"{p} reads as a bomb")
            follow.append(None)
        elif (fam, length, key) == (p.family, p.length, p.key):
            follow.append(None)
        else:
            follow.append((fam, length, key))
    return plays, follow


def _ranks(body: tuple) -> list[int]:
    return [r for r in range(NSLOT) if body[r]]
