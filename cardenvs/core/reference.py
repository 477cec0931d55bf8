"""A slow, obviously-correct reference of the combination rules (for differential tests).

Nothing here is used at run time.  :func:`classify` reads a card multiset directly from the
definitions of the rules pages (one check per combination type, no tables, no bit tricks) and
returns every :class:`Reading` of it under a :class:`~cardenvs.core.combos.ComboRules`;
:func:`reference_legal` enumerates every sub-multiset of a hand, classifies it and keeps the
readings that beat the play to beat (rules README, convention 3).  The fast generator
(:func:`cardenvs.core.kernels.gen_legal` over the play table) must agree with it exactly; see
``tests/test_reference_diff.py``.

This module deliberately does not call :func:`cardenvs.core.combos.enumerate_plays`: it
shares only the family codes and the rule parameters with it.

Conventions of a reading (the same as the play table's, except for bombs):

* ``key`` is the main rank: the single's / pair's rank, the trio's or quad's rank, or the
  highest rank of a chain;
* ``length`` is the chain length (number of distinct chain ranks) for chain families, 1 for
  the other plain families and 0 for bombs and the rocket (which form one class);
* for bombs ``key`` is the bomb's rank and for the rocket the highest joker's rank index;
  ``bomb_power`` orders bombs and the rocket (0 for every other reading).  Its numbers are this
  module's own: only comparisons between readings of this module mean anything.

Sub-multiset enumeration is exponential in the hand: fine for hands of up to ~14 cards, a
second or so for a 20-card hand.
"""

from __future__ import annotations

from itertools import chain
from typing import Callable, Iterable, Iterator, NamedTuple, Optional, Sequence

from .cards import NSLOT
from .combos import (
    AIRPLANE, AIRPLANE_PAIRS, AIRPLANE_SINGLES, BOMB, FOUR_TWO_PAIRS, FOUR_TWO_SINGLES, PAIR,
    PAIR_CHAIN, ROCKET, SINGLE, STRAIGHT, TRIO, TRIO_PAIR, TRIO_SINGLE, ComboRules,
)

Counts = tuple[int, ...]

#: the power of the rocket: above every bomb this module can rate
_ROCKET_POWER = 10**6


class Reading(NamedTuple):
    """One interpretation of a set of cards (see the module docstring for the fields)."""

    family: int
    length: int
    key: int
    bomb_power: int = 0


# -- the rule facts a classification needs, computed once per rules --------------------------------


class _Ctx:
    """Per-rules facts: which ranks are jokers, pairable, allowed in chains; the rocket."""

    def __init__(self, rules: ComboRules):
        order = rules.deck.order
        self.rules = rules
        self.R = len(order)
        # the most cards of a rank a multiset may hold (wild jokers stand in for naturals)
        self.copies = tuple(rules.limit(r) for r in range(NSLOT))
        self.joker = [ch in "BR" for ch in order]
        # ranks that appear only inside chains (never alone, paired, as a trio, bomb or kicker)
        self.chain_only = [r in rules.chain_only for r in range(self.R)]
        # two cards of a rank are a pair: any natural rank; jokers only with joker_pairs
        self.pairable = [((not j) or rules.joker_pairs) and not co
                         for j, co in zip(self.joker, self.chain_only)]
        # a rank that may be a single card or a single kicker
        self.single_ok = [not co and (rules.joker_singles or not j)
                          for j, co in zip(self.joker, self.chain_only)]
        # a rank that may be a trio, a quad or a bomb
        self.set_ok = [not j and not co for j, co in zip(self.joker, self.chain_only)]
        # chains: ranks chain_lo..chain_hi, never a joker
        self.chainable = [rules.chain_lo <= r <= rules.chain_hi and not self.joker[r]
                          for r in range(self.R)]
        self.B = order.find("B")
        self.R_joker = order.find("R")
        if rules.rocket is None:
            self.rocket: Optional[Counts] = None
        else:
            d = {order.index(ch): k for ch, k in rules.rocket}
            self.rocket = tuple(d.get(r, 0) for r in range(NSLOT))

    def both_jokers(self, ranks) -> bool:
        """Whether the rank indices ``ranks`` include both ``B`` and ``R``."""
        return self.B >= 0 and self.R_joker >= 0 and self.B in ranks and self.R_joker in ranks

    def check(self, counts: Sequence[int]) -> Counts:
        """The counts as a 16-tuple of ints; ``ValueError`` when they do not fit the deck."""
        c = tuple(int(x) for x in counts)
        if not self.R <= len(c) <= NSLOT:
            raise ValueError(f"counts must have between {self.R} and {NSLOT} entries, got {len(c)}")
        c = c + (0,) * (NSLOT - len(c))
        for r in range(NSLOT):
            if not 0 <= c[r] <= self.copies[r]:
                what = self.rules.deck.order[r] if r < self.R else f"slot {r}"
                raise ValueError(f"{c[r]} cards of {what!r}: the deck holds {self.copies[r]}")
        return c

    def filter_ok(self, family: int, body: dict[int, int], kick: Counts) -> bool:
        """A preset's extra kicker predicate (``None`` in the rules pages' own sets)."""
        f: Optional[Callable] = self.rules.kicker_filter
        return f is None or bool(f(family, _vec(body), kick))


def _minus(c: Counts, body: dict[int, int]) -> Counts:
    return tuple(c[r] - body.get(r, 0) for r in range(NSLOT))


def _vec(d: dict[int, int]) -> Counts:
    return tuple(d.get(r, 0) for r in range(NSLOT))


def _bomb_power(rules: ComboRules, size: int, rank: int) -> int:
    """This module's own bomb order: by rank, or by size then rank (``bomb_order``)."""
    if rules.bomb_order == "rank":
        return 2 + rank
    if rules.bomb_order == "size_rank":
        return 2 + 100 * size + rank
    raise ValueError(f"unknown bomb_order {rules.bomb_order!r}")


# -- classification --------------------------------------------------------------------------------


def classify(counts: Sequence[int], rules: ComboRules) -> list[Reading]:
    """Every reading of the card multiset ``counts`` (rank-index counts) under ``rules``.

    Each combination type is checked straight from its definition in the rules pages:

    * single: one card.  pair: two cards of one rank (jokers only with ``joker_pairs``; ``BR``
      is never a pair).  trio: three of one natural rank.
    * trio + single: a trio and one card of another rank (any card).  trio + pair: a trio and a
      pair of another rank.
    * straight / pair chain / airplane: exactly 1 / 2 / 3 cards of each of ``L`` consecutive
      ranks inside ``chain_lo..chain_hi`` (never a joker), ``L`` within the family's bounds.
    * airplane + singles: ``L`` consecutive trios and ``L`` single kickers of ranks outside the
      chain, at most ``single_kicker_max_same`` of one rank, never both ``B`` and ``R`` unless
      ``kickers_both_jokers``.
    * airplane + pairs: ``L`` consecutive trios and ``L`` pairs of distinct ranks outside the
      chain (jokers only with ``joker_pairs``, never ``BB`` with ``RR``).
    * four + two singles: a quad and two cards of other ranks (may be a pair; never ``B`` with
      ``R`` unless ``four_two_both_jokers``).  four + two pairs: a quad and two pairs of distinct
      other ranks.
    * bomb: ``n`` cards of one natural rank, ``n`` in ``bomb_sizes``.  rocket: the rocket cards.

    Every play has at most ``max_cards`` cards.  Readings come in no particular order.
    Raises ``ValueError`` when ``counts`` does not fit the deck.
    """
    ctx = _ctx_of(rules)
    return _classify(ctx.check(counts), ctx)


_CTX_CACHE: dict[int, tuple[ComboRules, _Ctx]] = {}


def _ctx_of(rules: ComboRules) -> _Ctx:
    """The (cached) facts of ``rules``; keyed by identity, the rules object is kept alive."""
    hit = _CTX_CACHE.get(id(rules))
    if hit is not None and hit[0] is rules:
        return hit[1]
    ctx = _Ctx(rules)
    _CTX_CACHE[id(rules)] = (rules, ctx)
    return ctx


def _classify(c: Counts, ctx: _Ctx) -> list[Reading]:
    rules = ctx.rules
    n = sum(c)
    out: list[Reading] = []
    if n == 0 or n > rules.max_cards:
        return out
    R = ctx.R
    present = [r for r in range(R) if c[r] > 0]
    one_rank = len(present) == 1
    r0 = present[0]

    # single, pair, trio
    if n == 1 and ctx.single_ok[r0]:
        out.append(Reading(SINGLE, 1, r0))
    if n == 2 and one_rank and ctx.pairable[r0]:
        out.append(Reading(PAIR, 1, r0))
    if n == 3 and one_rank and ctx.set_ok[r0]:
        out.append(Reading(TRIO, 1, r0))

    # trio + single, trio + pair: one rank holds exactly the trio, the rest is one other rank
    if rules.trio_single and n == 4 and len(present) == 2:
        for t in present:
            other = present[0] if t == present[1] else present[1]
            if c[t] == 3 and ctx.set_ok[t] and ctx.single_ok[other]:
                if ctx.filter_ok(TRIO_SINGLE, {t: 3}, _minus(c, {t: 3})):
                    out.append(Reading(TRIO_SINGLE, 1, t))
    if rules.trio_pair and n == 5 and len(present) == 2:
        for t in present:
            other = present[0] if t == present[1] else present[1]
            if c[t] == 3 and ctx.set_ok[t] and c[other] == 2 and ctx.pairable[other]:
                if ctx.filter_ok(TRIO_PAIR, {t: 3}, _minus(c, {t: 3})):
                    out.append(Reading(TRIO_PAIR, 1, t))

    # plain chains: every present rank has exactly `mult` cards and the ranks are consecutive
    for fam, mult, bounds in ((STRAIGHT, 1, rules.straight), (PAIR_CHAIN, 2, rules.pair_chain),
                              (AIRPLANE, 3, rules.airplane)):
        if bounds is None:
            continue
        length = len(present)
        if not bounds[0] <= length <= bounds[1] or n != mult * length:
            continue
        if any(c[r] != mult for r in present):
            continue
        if not all(ctx.chainable[r] for r in present):
            continue
        if present[-1] - present[0] != length - 1:
            continue
        out.append(Reading(fam, length, present[-1]))

    # airplanes with kickers: try every chain of trios the cards contain
    for fam, per, bounds in ((AIRPLANE_SINGLES, 4, rules.airplane_singles),
                             (AIRPLANE_PAIRS, 5, rules.airplane_pairs)):
        if bounds is None or n % per != 0:
            continue
        length = n // per
        if not bounds[0] <= length <= bounds[1]:
            continue
        for top in range(length - 1, R):
            chain = range(top - length + 1, top + 1)
            if not all(ctx.chainable[r] and c[r] >= 3 for r in chain):
                continue
            body = {r: 3 for r in chain}
            kick = _minus(c, body)
            if any(kick[r] for r in chain):
                continue  # kickers must be of ranks outside the chain
            kranks = [r for r in range(R) if kick[r] > 0]
            if fam == AIRPLANE_SINGLES:
                if any(kick[r] > rules.single_kicker_max_same or not ctx.single_ok[r]
                       for r in kranks):
                    continue
                if ctx.both_jokers(kranks) and not rules.kickers_both_jokers:
                    continue
            else:
                if len(kranks) != length or any(kick[r] != 2 for r in kranks):
                    continue  # exactly `length` pairs, of distinct ranks
                if not all(ctx.pairable[r] for r in kranks):
                    continue
                if ctx.both_jokers(kranks) and not rules.pairs_both_joker_pairs:
                    continue  # BB + RR would carry the rocket
            if ctx.filter_ok(fam, body, kick):
                out.append(Reading(fam, length, top))

    # four + two
    if (rules.four_two_singles and n == 6) or (rules.four_two_pairs and n == 8):
        for q in present:
            if c[q] < 4 or not ctx.set_ok[q]:
                continue
            kick = _minus(c, {q: 4})
            if kick[q]:
                continue  # the kickers are of other ranks
            kranks = [r for r in range(R) if kick[r] > 0]
            if any(ctx.chain_only[r] for r in kranks):
                continue
            if n == 6 and rules.four_two_singles:
                if not (ctx.both_jokers(kranks) and not rules.four_two_both_jokers):
                    if ctx.filter_ok(FOUR_TWO_SINGLES, {q: 4}, kick):
                        out.append(Reading(FOUR_TWO_SINGLES, 1, q))
            if n == 8 and rules.four_two_pairs:
                if (len(kranks) == 2 and all(kick[r] == 2 and ctx.pairable[r] for r in kranks)
                        and not ctx.both_jokers(kranks)):
                    if ctx.filter_ok(FOUR_TWO_PAIRS, {q: 4}, kick):
                        out.append(Reading(FOUR_TWO_PAIRS, 1, q))

    # bombs and the rocket
    if one_rank and n in rules.bomb_sizes and ctx.set_ok[r0]:
        out.append(Reading(BOMB, 0, r0, _bomb_power(rules, n, r0)))
    if c == ctx.rocket:
        power = 1 if rules.rocket_low else _ROCKET_POWER
        out.append(Reading(ROCKET, 0, present[-1], power))
    return out


def reading_size(reading: Reading, rules: ComboRules) -> Optional[int]:
    """Cards in a play of this reading; ``None`` for bombs and the rocket (several sizes)."""
    f, L = reading.family, reading.length
    sizes = {SINGLE: 1, PAIR: 2, TRIO: 3, TRIO_SINGLE: 4, TRIO_PAIR: 5, FOUR_TWO_SINGLES: 6,
             FOUR_TWO_PAIRS: 8, STRAIGHT: L, PAIR_CHAIN: 2 * L, AIRPLANE: 3 * L,
             AIRPLANE_SINGLES: 4 * L, AIRPLANE_PAIRS: 5 * L}
    if f in (BOMB, ROCKET):
        return None
    return sizes[f]


def beats(a: Reading, b: Reading) -> bool:
    """Whether a play read as ``a`` may follow a play read as ``b`` (README convention 3).

    Bombs (and the rocket) beat every non-bomb and a lower bomb; any other play must have the
    same family and chain length and a strictly higher key.  Equal never beats equal.
    """
    if a.bomb_power > 0:
        return b.bomb_power == 0 or a.bomb_power > b.bomb_power
    if b.bomb_power > 0:
        return False
    return a.family == b.family and a.length == b.length and a.key > b.key


def submultisets(hand: Sequence[int], sizes: Optional[set[int]] = None) -> Iterator[Counts]:
    """Every non-empty sub-multiset of ``hand`` (16-tuples), optionally only of the given sizes.

    Each sub-multiset is produced once: a branch picks the next rank it takes cards of (in
    increasing rank order) and how many.
    """
    h = tuple(int(x) for x in hand) + (0,) * (NSLOT - len(hand))
    if any(x < 0 for x in h):
        raise ValueError(f"negative count in hand {h}")
    ranks = [r for r in range(NSLOT) if h[r] > 0]
    suffix = [0] * (len(ranks) + 1)  # cards in ranks[j:]
    for j in range(len(ranks) - 1, -1, -1):
        suffix[j] = suffix[j + 1] + h[ranks[j]]
    if sizes is None:
        targets = set(range(1, suffix[0] + 1))
    else:
        targets = {s for s in sizes if 0 < s <= suffix[0]}
    if not targets:
        return
    lo_t, hi_t = min(targets), max(targets)
    cur = [0] * NSLOT

    def rec(i: int, total: int) -> Iterator[Counts]:
        # cur holds a multiset of `total` cards of ranks before ranks[i]; the rest are zero
        if total in targets:
            yield tuple(cur)
        for j in range(i, len(ranks)):
            if total + suffix[j] < lo_t:
                break  # even every card left would not reach the smallest size wanted
            r = ranks[j]
            for k in range(1, min(h[r], hi_t - total) + 1):
                cur[r] = k
                yield from rec(j + 1, total + k)
            cur[r] = 0

    yield from rec(0, 0)


def reference_legal(hand_counts: Sequence[int], prev: Optional[Reading], rules: ComboRules,
                    memo: Optional[dict] = None, *, fast_bombs: bool = False,
                    ) -> set[tuple[Counts, int, int, int]]:
    """Every legal play of a hand as ``(counts16, family, length, key)``.

    ``prev`` is the reading of the play to beat (``None`` on a free lead).  On a follow only
    sub-multisets of the sizes that can beat it are classified: the size of ``prev`` (when it
    is not a bomb) and the sizes of bombs and the rocket.  ``memo`` (optional) caches
    :func:`classify` results by counts across calls with the same ``rules``.

    ``fast_bombs=True`` (for big two-deck hands, where every sub-multiset of 4 to 8 cards is too
    many) classifies, among the bomb and rocket sizes other than the size of ``prev``, only the
    sub-multisets of one rank and the rocket's cards: by definition every bomb is cards of one
    rank and the rocket is fixed cards, so the result is the same, but it relies on that
    reading of the definitions instead of checking it.
    """
    ctx = _ctx_of(rules)
    hand = ctx.check(hand_counts)
    if prev is None:
        subs: Iterable[Counts] = submultisets(hand)
    else:
        bomb_sizes = set(rules.bomb_sizes)
        if ctx.rocket is not None:
            bomb_sizes.add(sum(ctx.rocket))
        own = reading_size(prev, rules)
        if not fast_bombs:
            subs = submultisets(hand, bomb_sizes | ({own} if own is not None else set()))
        else:
            parts: list[Iterable[Counts]] = []
            if own is not None:
                parts.append(submultisets(hand, {own}))
            one_rank = [tuple(k if q == r else 0 for q in range(NSLOT))
                        for r in range(NSLOT) for k in bomb_sizes
                        if k != own and 0 < k <= hand[r]]
            parts.append(one_rank)
            if (ctx.rocket is not None and sum(ctx.rocket) != own
                    and all(a <= b for a, b in zip(ctx.rocket, hand))):
                parts.append([ctx.rocket])
            subs = chain.from_iterable(parts)
    out: set[tuple[Counts, int, int, int]] = set()
    for sub in subs:
        if memo is not None:
            rd = memo.get(sub)
            if rd is None:
                rd = memo[sub] = _classify(sub, ctx)
        else:
            rd = _classify(sub, ctx)
        for x in rd:
            if prev is None or beats(x, prev):
                out.add((sub, x.family, x.length, x.key))
    return out
