"""Combination families of the climbing games, as data.

A game describes which combinations exist with a :class:`ComboRules` record; this module
turns it into the list of every canonical play (:func:`enumerate_plays`), each a
:class:`Play` with its *reading* (family, chain length, main rank, kicker counts).  The play
table (:mod:`cardenvs.core.table`) compiles that list into the integer arrays the numba
kernels scan.  Nothing here is game-specific: Dou Dizhu, 4-player Dou Dizhu and Wakeng are
three parameter sets; presets that reproduce other packages' move sets are filters
(:attr:`ComboRules.kicker_filter`) plus extra follow readings (see the game modules).

Rank indices are the game's own order (0 = lowest).  A *reading* is what the rules README
calls "one action, one meaning": the same cards may have several readings (``333444555666`` is
a 4-trio airplane or a 3-trio airplane with three single kickers) and each reading is its own
row and action.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import combinations, combinations_with_replacement
from typing import Callable, Iterator, Optional, Sequence

from .cards import NSLOT, Deck

# Families (the "type" of a play).  Codes are stable: they appear in observations.
SINGLE, PAIR, TRIO, TRIO_SINGLE, TRIO_PAIR = 0, 1, 2, 3, 4
STRAIGHT, PAIR_CHAIN, AIRPLANE, AIRPLANE_SINGLES, AIRPLANE_PAIRS = 5, 6, 7, 8, 9
BOMB, ROCKET, FOUR_TWO_SINGLES, FOUR_TWO_PAIRS = 10, 11, 12, 13
N_FAMILIES = 14
FAMILY_NAMES = (
    "single", "pair", "trio", "trio_single", "trio_pair", "straight", "pair_chain",
    "airplane", "airplane_singles", "airplane_pairs", "bomb", "rocket",
    "four_two_singles", "four_two_pairs",
)
FAMILY_CODES = {n: i for i, n in enumerate(FAMILY_NAMES)}
CHAIN_FAMILIES = (STRAIGHT, PAIR_CHAIN, AIRPLANE, AIRPLANE_SINGLES, AIRPLANE_PAIRS)


@dataclass(frozen=True)
class Play:
    """One canonical play: the cards and one reading of them.

    ``key`` orders plays of one shape class: the chain's highest rank, or the rank of the
    trio / quad / pair / single.  ``bomb_power`` is 0 for non-bombs and orders bombs and
    the rocket against each other (higher beats lower, any bomb beats any non-bomb).
    """

    counts: tuple[int, ...]
    family: int
    length: int
    key: int
    body: tuple[int, ...]
    bomb_power: int = 0
    doubles: int = 0  # how many times the play doubles the stake when played

    @property
    def n_cards(self) -> int:
        return sum(self.counts)

    @property
    def shape(self) -> tuple[int, int]:
        """The shape class a follow must match: (family, chain length)."""
        return (self.family, self.length)


@dataclass(frozen=True)
class ComboRules:
    """Which combinations a game has.  Defaults are 3-player Dou Dizhu's (rules: doudizhu.md).

    Attributes:
        deck: ranks and copies.
        chain_lo, chain_hi: rank indices of the lowest and highest rank allowed in chains.
        straight, pair_chain, airplane: (min, max) chain lengths; ``None`` = family absent.
        airplane_singles, airplane_pairs: (min, max) lengths of airplanes with kickers.
        trio_single, trio_pair, four_two_singles, four_two_pairs: whether the family exists.
        joker_pairs: ``BB`` / ``RR`` are pairs (two-deck games).
        single_kicker_max_same: at most this many single kickers of one rank.
        kickers_both_jokers: single kickers may include both ``B`` and ``R``.
        bomb_sizes: sizes of plain bombs (4 for one deck, 4..8 for two).
        bomb_order: ``"rank"`` (bombs compare by rank) or ``"size_rank"`` (size, then rank).
        rocket: joker counts of the rocket, e.g. ``{"B": 1, "R": 1}``; ``None`` = no rocket.
        double_min_bomb: bombs of at least this many cards double the stake (and the rocket).
        max_cards: the largest hand, which caps every play's size.
        kicker_filter: optional extra predicate ``(family, body_counts, kicker_counts) -> bool``
            used by presets to drop kicker variants.
        wilds: how many wild jokers the deck holds.  The table's rows are *effective* plays:
            a natural rank may appear up to ``copies + wilds`` times (jokers standing in), with
            at most ``wilds`` cards beyond the copies in one play.  Whether a hand can make a
            row with its wilds is :mod:`cardenvs.core.wild`'s business.
        joker_singles: a joker may be played alone as a single (False in Da Niangniang).
        rocket_low: the rocket is the weakest bomb (Da Niangniang's ``BR``) instead of the top.
        chain_only: rank indices that may appear only inside chains (straights, pair chains,
            trio chains): no single, pair, trio, bomb or kicker of them (Lanxi Wulong's 3s).
        pairs_both_joker_pairs: kicker pairs may be ``BB`` and ``RR`` together (two-deck games
            whose rocket is not ``BR``).
    """

    deck: Deck
    chain_lo: int = 0
    chain_hi: int = 11
    straight: Optional[tuple[int, int]] = (5, 12)
    pair_chain: Optional[tuple[int, int]] = (3, 10)
    airplane: Optional[tuple[int, int]] = (2, 6)
    airplane_singles: Optional[tuple[int, int]] = (2, 5)
    airplane_pairs: Optional[tuple[int, int]] = (2, 4)
    trio_single: bool = True
    trio_pair: bool = True
    four_two_singles: bool = True
    four_two_pairs: bool = True
    joker_pairs: bool = False
    single_kicker_max_same: int = 3
    kickers_both_jokers: bool = False
    four_two_both_jokers: bool = False
    bomb_sizes: tuple[int, ...] = (4,)
    bomb_order: str = "rank"
    rocket: Optional[tuple[tuple[str, int], ...]] = (("B", 1), ("R", 1))
    double_min_bomb: int = 4
    max_cards: int = 20
    kicker_filter: Optional[Callable[[int, tuple, tuple], bool]] = field(default=None, compare=False)
    # -- wild-card games (Da Niangniang, Lanxi Wulong) ----------------------------------------------
    wilds: int = 0
    joker_singles: bool = True
    rocket_low: bool = False
    chain_only: tuple[int, ...] = ()
    pairs_both_joker_pairs: bool = False

    # -- helpers -------------------------------------------------------------------------------
    @property
    def n_ranks(self) -> int:
        return self.deck.n_ranks

    def joker_indices(self) -> list[int]:
        return [i for i, c in enumerate(self.deck.order) if c in "BR"]

    def natural_indices(self) -> list[int]:
        return [i for i, c in enumerate(self.deck.order) if c not in "BR"]

    def can_pair(self, r: int) -> bool:
        """Whether two cards of rank ``r`` make a pair (kicker pairs included)."""
        if r in self.chain_only:
            return False
        if self.deck.order[r] in "BR":
            return self.joker_pairs and self.deck.copies[r] >= 2
        return self.deck.copies[r] + self.wilds >= 2

    def limit(self, r: int) -> int:
        """The most cards of rank index ``r`` one play may hold (wilds stand in for naturals)."""
        if r >= self.n_ranks:
            return 0
        c = self.deck.copies[r]
        return c if self.deck.order[r] in "BR" else c + self.wilds

    def fits_deck(self, counts: Sequence[int]) -> bool:
        """Whether a play's counts can be made from the deck with its ``wilds``."""
        over = 0
        for r in range(NSLOT):
            if counts[r] > self.limit(r):
                return False
            if r < self.n_ranks:
                over += max(0, counts[r] - self.deck.copies[r])
        return over <= self.wilds

    def rocket_counts(self) -> Optional[tuple[int, ...]]:
        if self.rocket is None:
            return None
        c = [0] * NSLOT
        for ch, n in self.rocket:
            c[self.deck.index(ch)] = n
        return tuple(c)


def _vec(pairs) -> tuple[int, ...]:
    c = [0] * NSLOT
    for r, n in pairs:
        c[r] += n
    return tuple(c)


def _add(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(x + y for x, y in zip(a, b))


def bomb_power(rules: ComboRules, size: int, rank: int) -> int:
    """Strength of a plain bomb (positive; larger beats smaller)."""
    if rules.bomb_order == "rank":
        return 1 + rank
    if rules.bomb_order == "size_rank":
        return 1 + size * NSLOT + rank
    raise ValueError(f"unknown bomb_order {rules.bomb_order!r}")


def rocket_power(rules: ComboRules) -> int:
    """The rocket's power: above every bomb, or below every bomb with ``rocket_low``."""
    if rules.rocket_low:
        return 1
    top = max((*rules.bomb_sizes, 8)) + 1
    return 1 + top * NSLOT + NSLOT


def _single_kickers(rules: ComboRules, k: int, exclude: set[int]) -> Iterator[tuple[int, ...]]:
    """Every multiset of ``k`` single kicker cards from ranks not in ``exclude``."""
    jokers = set(rules.joker_indices())
    ranks = [r for r in range(rules.n_ranks) if r not in exclude and r not in rules.chain_only
             and (rules.joker_singles or r not in jokers)]
    for combo in combinations_with_replacement(ranks, k):
        cnt: dict[int, int] = {}
        for r in combo:
            cnt[r] = cnt.get(r, 0) + 1
        if any(n > min(rules.limit(r), rules.single_kicker_max_same) for r, n in cnt.items()):
            continue
        if len(jokers) == 2 and not rules.kickers_both_jokers and all(j in cnt for j in jokers):
            continue
        yield _vec(cnt.items())


def _pair_kickers(rules: ComboRules, k: int, exclude: set[int]) -> Iterator[tuple[int, ...]]:
    """Every set of ``k`` pairs of distinct ranks not in ``exclude`` (BB+RR never together)."""
    ranks = [r for r in range(rules.n_ranks) if r not in exclude and rules.can_pair(r)]
    jokers = set(rules.joker_indices())
    for combo in combinations(ranks, k):
        if len(jokers) == 2 and jokers <= set(combo) and not rules.pairs_both_joker_pairs:
            continue  # BB + RR would carry the rocket
        yield _vec((r, 2) for r in combo)


def enumerate_plays(rules: ComboRules) -> list[Play]:
    """Every canonical play of the game, one :class:`Play` per (cards, reading)."""
    out: list[Play] = []
    R = rules.n_ranks
    maxc = rules.max_cards
    filt = rules.kicker_filter

    def add(body, kick, family, length, key, power=0, doubles=0):
        counts = _add(body, kick) if kick is not None else body
        if sum(counts) > maxc:
            return
        if not rules.fits_deck(counts):
            return
        if kick is not None and filt is not None and not filt(family, body, kick):
            return
        out.append(Play(counts, family, length, key, body, power, doubles))

    jokers = set(rules.joker_indices())
    for r in range(R):
        if r in rules.chain_only or (r in jokers and not rules.joker_singles):
            continue
        add(_vec([(r, 1)]), None, SINGLE, 1, r)
        if rules.can_pair(r):
            add(_vec([(r, 2)]), None, PAIR, 1, r)
    naturals = [r for r in rules.natural_indices() if r not in rules.chain_only]
    for r in naturals:
        if rules.limit(r) < 3:
            continue
        trio = _vec([(r, 3)])
        add(trio, None, TRIO, 1, r)
        if rules.trio_single:
            for kick in _single_kickers(rules, 1, {r}):
                add(trio, kick, TRIO_SINGLE, 1, r)
        if rules.trio_pair:
            for kick in _pair_kickers(rules, 1, {r}):
                add(trio, kick, TRIO_PAIR, 1, r)
    # chains
    lo, hi = rules.chain_lo, rules.chain_hi
    for fam, mult, bounds in (
        (STRAIGHT, 1, rules.straight),
        (PAIR_CHAIN, 2, rules.pair_chain),
        (AIRPLANE, 3, rules.airplane),
    ):
        if bounds is None:
            continue
        for length in range(bounds[0], bounds[1] + 1):
            for top in range(lo + length - 1, hi + 1):
                body = _vec((r, mult) for r in range(top - length + 1, top + 1))
                add(body, None, fam, length, top)
    for fam, bounds, gen in (
        (AIRPLANE_SINGLES, rules.airplane_singles, _single_kickers),
        (AIRPLANE_PAIRS, rules.airplane_pairs, _pair_kickers),
    ):
        if bounds is None:
            continue
        for length in range(bounds[0], bounds[1] + 1):
            for top in range(lo + length - 1, hi + 1):
                chain = set(range(top - length + 1, top + 1))
                body = _vec((r, 3) for r in chain)
                if sum(body) + length * (1 if fam == AIRPLANE_SINGLES else 2) > maxc:
                    continue
                for kick in gen(rules, length, chain):
                    add(body, kick, fam, length, top)
    # four + two
    for r in naturals:
        if rules.limit(r) < 4:
            continue
        quad = _vec([(r, 4)])
        if rules.four_two_singles:
            sub = replace(rules, single_kicker_max_same=2,
                          kickers_both_jokers=rules.four_two_both_jokers)
            for kick in _single_kickers(sub, 2, {r}):
                add(quad, kick, FOUR_TWO_SINGLES, 1, r)
        if rules.four_two_pairs:
            for kick in _pair_kickers(rules, 2, {r}):
                add(quad, kick, FOUR_TWO_PAIRS, 1, r)
    # bombs and rocket
    for size in rules.bomb_sizes:
        for r in naturals:
            if rules.limit(r) >= size:
                add(_vec([(r, size)]), None, BOMB, 0, bomb_power(rules, size, r),
                    bomb_power(rules, size, r), int(size >= rules.double_min_bomb))
    rc = rules.rocket_counts()
    if rc is not None:
        p = rocket_power(rules)
        add(rc, None, ROCKET, 0, p, p, 1)
    return out


def trio_kicker_plays(rules: ComboRules, family: int, lengths: tuple[int, int], per: int,
                      short: bool = False, skip: Sequence[int] = ()) -> list[Play]:
    """Trios (``lengths == (1, 1)``) or trio chains of ``lengths[0]..lengths[1]`` trios within
    ``chain_lo..chain_hi``, each trio carrying any ``per`` other cards as kickers (singles,
    pairs or more of one rank, none of the trios' ranks; at most ``single_kicker_max_same``
    of one rank), read as ``family`` (Pao De Kuai's trio + 2 and airplanes).

    With ``short`` the plays with fewer kickers (down to none) are rows too, of the same
    family, length and key: the last-play relaxation, legal only as a whole hand (see
    :func:`cardenvs.core.follow.is_short`).  Trios of the ranks in ``skip`` are left out.
    """
    out: list[Play] = []
    naturals = [r for r in rules.natural_indices() if r not in rules.chain_only]
    for length in range(lengths[0], lengths[1] + 1):
        if length == 1:
            tops = [r for r in naturals if rules.limit(r) >= 3]
        else:
            tops = list(range(rules.chain_lo + length - 1, rules.chain_hi + 1))
        for top in tops:
            chain = set(range(top - length + 1, top + 1))
            if chain & set(skip) or any(rules.limit(r) < 3 for r in chain):
                continue
            body = _vec((r, 3) for r in chain)
            for k in range(0 if short else per * length, per * length + 1):
                if 3 * length + k > rules.max_cards:
                    break
                for kick in _single_kickers(rules, k, chain):
                    if rules.fits_deck(_add(body, kick)):
                        out.append(Play(_add(body, kick), family, length, top, body))
    return out


def quad_kicker_plays(rules: ComboRules, family: int, k: int) -> list[Play]:
    """Four of a kind with any ``k`` other cards as kickers, read as ``family`` (Pao De
    Kuai's four + 3): an ordinary combination, no bomb power."""
    out = []
    for r in rules.natural_indices():
        if rules.limit(r) >= 4 and r not in rules.chain_only:
            body = _vec([(r, 4)])
            out += [Play(_add(body, kick), family, 1, r, body) for kick in _single_kickers(rules, k, {r})
                    if sum(body) + k <= rules.max_cards]
    return out
