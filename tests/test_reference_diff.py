"""Differential test: the numba move generator against the slow pure-Python reference.

The fast path is :func:`cardenvs.core.kernels.gen_legal` over the Dou Dizhu play tables
(``play_table(3, "seed")`` and ``play_table(4, "seed")``); the reference is
:mod:`cardenvs.core.reference`, which classifies every sub-multiset of a hand straight from the
rules' definitions.  Both sides are compared as sets of ``(counts, family, length, key)``; bombs
and the rocket are compared by their cards (``length`` 0, ``key`` = the highest rank in them),
because the two sides number bomb power differently.

Checks:

* every row of the table is a reading of its cards and every reading of a row's cards is a row;
* every card multiset of up to 6 cards (3 players; 5 for 4 players): its readings are exactly the
  rows with those cards (so no play of up to that size is missing from the table);
* free leads on random hands (1-14 cards, plus a few full 17-20-card hands within a budget of
  sub-multisets), exhaustive reference;
* follows where the play to beat is a random row of every (family, length) class and every bomb,
  on random hands that half the time hold a beating play of the same class: exhaustively against
  the reference on hands whose relevant sub-multisets stay within a budget, and for every
  position (also full 17-20-card hands, and 25- and 33-card hands for 4 players) against a
  table oracle (every row that fits the hand and whose reference reading beats the play to beat).

``CARDENVS_REFDIFF_SCALE`` (default 1) multiplies the number of positions for longer runs.
"""

from __future__ import annotations

import collections
import os
from types import SimpleNamespace

import numpy as np
import pytest

from cardenvs.core.combos import BOMB, FAMILY_NAMES, ROCKET
from cardenvs.core.kernels import gen_legal
from cardenvs.core.reference import beats, classify, reference_legal, submultisets
from cardenvs.games.doudizhu import combo_rules, play_table

SCALE = float(os.environ.get("CARDENVS_REFDIFF_SCALE", "1"))


def _n(base: int) -> int:
    """A number of positions, scaled."""
    return max(1, int(round(base * SCALE)))


def _at_least(base: int) -> int:
    """A coverage threshold, scaled down (never up) with the number of positions."""
    return max(1, int(base * min(1.0, SCALE)))


# -- helpers ---------------------------------------------------------------------------------------


def _norm(counts, family: int, length: int, key: int) -> tuple:
    """Comparable form of a reading: bombs and the rocket by their cards."""
    counts = tuple(int(x) for x in counts)
    if family in (BOMB, ROCKET):
        return (counts, family, 0, max(r for r in range(16) if counts[r]))
    return (counts, family, length, key)


def _game(n_players: int) -> SimpleNamespace:
    tab = play_table(n_players, "seed")
    rules = combo_rules(n_players)
    arr = tab.arrays
    rows = [_norm(p.counts, p.family, p.length, p.key) for p in tab.plays]
    # the reference's reading of every row (the one with the row's family, length and key)
    readings = []
    for p, nr in zip(tab.plays, rows):
        match = [x for x in classify(p.counts, rules)
                 if _norm(p.counts, x.family, x.length, x.key) == nr]
        readings.append(match[0] if len(match) == 1 else None)
    classes = collections.defaultdict(list)
    for i, p in enumerate(tab.plays):
        classes[(p.family, 0 if p.family == BOMB else p.length)].append(i)
    return SimpleNamespace(
        n=n_players, tab=tab, rules=rules, arr=arr, rows=rows, readings=readings,
        classes=dict(classes), counts=np.asarray(arr.counts), out=np.empty(len(tab), np.int64),
        deck_cards=np.repeat(np.arange(rules.n_ranks), rules.deck.copies).astype(np.int64),
        full=rules.deck.full_counts(),
    )


@pytest.fixture(scope="module")
def g3() -> SimpleNamespace:
    return _game(3)


@pytest.fixture(scope="module")
def g4() -> SimpleNamespace:
    return _game(4)


def _fast(g: SimpleNamespace, hand: np.ndarray, prev_row: int) -> set:
    k = gen_legal(np.ascontiguousarray(hand, dtype=np.int64), prev_row, g.arr, g.out)
    got = g.out[:k].tolist()
    assert len(set(got)) == len(got), "gen_legal returned a row twice"
    return {g.rows[r] for r in got}


def _oracle(g: SimpleNamespace, hand: np.ndarray, prev_row: int) -> set:
    """Rows that fit the hand and whose reference reading beats the reference reading of prev."""
    fit = np.flatnonzero(np.all(g.counts <= hand[None, :], axis=1))
    prev = g.readings[prev_row]
    return {g.rows[r] for r in fit if beats(g.readings[r], prev)}


def _random_hand(g: SimpleNamespace, rng, size: int, pool: np.ndarray | None = None) -> np.ndarray:
    """``size`` random cards from ``pool`` (counts; default the whole deck)."""
    if pool is None:
        pool = g.full
    cards = np.repeat(np.arange(16), pool)
    return np.bincount(rng.choice(cards, size, replace=False), minlength=16).astype(np.int64)


def _n_sub(hand: np.ndarray, sizes) -> int:
    """Number of sub-multisets of ``hand`` with a size in ``sizes`` (generating function)."""
    p = np.array([1], dtype=np.int64)
    for c in hand:
        if c:
            p = np.convolve(p, np.ones(int(c) + 1, dtype=np.int64))
    return int(sum(p[s] for s in sizes if 0 <= s < len(p)))


def _family_counter(items) -> collections.Counter:
    return collections.Counter(FAMILY_NAMES[x[1]] for x in items)


# -- the table against the reference -------------------------------------------------------------


def test_reference_rejects_impossible_counts(g3):
    with pytest.raises(ValueError, match="the deck holds 4"):
        classify(g3.tab.deck.parse("7777") + np.eye(16, dtype=np.int64)[4], g3.rules)  # five 7s
    with pytest.raises(ValueError, match="the deck holds 1"):
        reference_legal([0] * 13 + [2, 0], None, g3.rules)


def test_submultisets_match_product():
    """The reference's enumeration of sub-multisets against itertools.product."""
    import itertools

    rng = np.random.default_rng(3)
    for t in range(100):
        h = np.zeros(16, np.int64)
        h[rng.choice(16, 5, replace=False)] = rng.integers(0, 5, 5)
        every = [tuple(int(x) for x in c)
                 for c in itertools.product(*[range(int(c) + 1) for c in h])]
        sizes = None if t % 2 == 0 else {int(x) for x in rng.integers(0, 14, 3)}
        want = sorted(c for c in every if sum(c) > 0 and (sizes is None or sum(c) in sizes))
        got = list(submultisets(h, sizes))
        assert len(got) == len(set(got)), "a sub-multiset produced twice"
        assert sorted(got) == want, (h.tolist(), sizes)



@pytest.mark.parametrize("n_players", [3, 4])
def test_every_row_is_exactly_the_readings_of_its_cards(n_players, g3, g4):
    g = g3 if n_players == 3 else g4
    assert len(set(g.rows)) == len(g.rows), "two rows with the same cards and reading"
    assert all(r is not None for r in g.readings), "a row whose reading the reference lacks"
    by_cards = collections.defaultdict(set)
    for r in g.rows:
        by_cards[r[0]].add(r)
    for cards, rows in by_cards.items():
        ref = {_norm(cards, x.family, x.length, x.key) for x in classify(cards, g.rules)}
        assert ref == rows, (g.tab.deck.format(cards), sorted(ref ^ rows))


@pytest.mark.parametrize("n_players,max_size", [(3, 6), (4, 5)])
def test_all_small_multisets(n_players, max_size, g3, g4):
    """Every card multiset of up to ``max_size`` cards: its readings are exactly the rows."""
    g = g3 if n_players == 3 else g4
    sizes = set(range(1, max_size + 1))
    ref = set()
    n_sets = 0
    for sub in submultisets(g.full, sizes):
        n_sets += 1
        for x in classify(sub, g.rules):
            ref.add(_norm(sub, x.family, x.length, x.key))
    rows = {r for r in g.rows if sum(r[0]) <= max_size}
    assert n_sets == _n_sub(g.full, sizes)
    assert ref == rows, sorted(ref ^ rows)[:10]
    fams = _family_counter(rows)
    # every family that has plays of up to max_size cards was met
    expect = {"single", "pair", "trio", "trio_pair", "straight", "bomb", "rocket"}
    if n_players == 3:
        expect |= {"trio_single", "four_two_singles", "pair_chain", "airplane"}
    assert expect <= set(fams), fams


# -- free leads ------------------------------------------------------------------------------------


def _seeded_hand(g: SimpleNamespace, rng, size: int, max_play: int) -> np.ndarray:
    """A random hand of ``size`` cards holding a random play of a random family (if it fits)."""
    fam = int(rng.integers(len(FAMILY_NAMES)))
    rows = [i for i, r in enumerate(g.rows) if r[1] == fam and sum(r[0]) <= max_play]
    if not rows:
        return _random_hand(g, rng, size)
    base = g.counts[rows[int(rng.integers(len(rows)))]].copy()
    size = max(size, int(base.sum()))
    return base + _random_hand(g, rng, size - int(base.sum()), g.full - base)


def _compare_free_leads(g, rng, n_pos: int, max_size: int) -> collections.Counter:
    """Fast against reference legal plays on ``n_pos`` free leads of 1..``max_size`` cards
    (every other hand built around a play of a random family); asserts they agree and returns
    the reference plays counted per family."""
    per_family = collections.Counter()
    for i in range(n_pos):
        size = 1 + i % max_size
        hand = _random_hand(g, rng, size) if i % 2 == 0 else _seeded_hand(g, rng, size, max_size)
        fast = _fast(g, hand, -1)
        ref = reference_legal(hand, None, g.rules)
        assert fast == ref, (g.tab.deck.format(hand), sorted(fast ^ ref)[:6])
        per_family.update(_family_counter(ref))
    return per_family


def test_free_leads_random_hands(g3):
    """Hands of 1-14 cards; every other hand is built around a play of a random family."""
    per_family = _compare_free_leads(g3, np.random.default_rng(20240601), _n(1000), 14)
    print("\n3p free leads, plays compared per family:", dict(per_family))
    for fam in FAMILY_NAMES:
        assert per_family[fam] >= _at_least(10), (fam, per_family)


def test_free_leads_full_hands(g3):
    """17- and 20-card hands (the deal and the landlord's hand), within a sub-multiset budget."""
    g = g3
    rng = np.random.default_rng(7)
    budget = 60_000
    done = collections.Counter()
    per_family = collections.Counter()
    want = {17: _n(4), 20: _n(2)}
    tries = 0
    while any(done[s] < want[s] for s in want):
        tries += 1
        assert tries < 500, "could not draw hands within the budget"
        size = 17 if done[17] < want[17] else 20
        hand = _random_hand(g, rng, size)
        if _n_sub(hand, range(1, size + 1)) > budget:
            continue
        fast = _fast(g, hand, -1)
        ref = reference_legal(hand, None, g.rules)
        assert fast == ref, (g.tab.deck.format(hand), sorted(fast ^ ref)[:6])
        assert fast == {g.rows[r] for r in np.flatnonzero(np.all(g.counts <= hand, axis=1))}
        done[size] += 1
        per_family.update(_family_counter(ref))
    assert {"airplane_singles", "four_two_singles", "straight"} & set(per_family)


@pytest.mark.parametrize("n_players,sizes", [(3, (17, 20)), (4, (25, 33))])
def test_free_leads_big_hands_against_table_oracle(n_players, sizes, g3, g4):
    """Deal-sized hands: the free-lead scan returns exactly the rows whose cards fit the hand."""
    g = g3 if n_players == 3 else g4
    rng = np.random.default_rng(11 + n_players)
    for i in range(_n(200)):
        hand = _random_hand(g, rng, sizes[i % 2])
        k = gen_legal(hand, -1, g.arr, g.out)
        got = g.out[:k].tolist()
        assert len(set(got)) == len(got)
        assert sorted(got) == np.flatnonzero(np.all(g.counts <= hand, axis=1)).tolist(), \
            g.tab.deck.format(hand)


# -- follows ---------------------------------------------------------------------------------------


def _follow_positions(g, rng, per_class: int, hand_sizes, budget: int, fast_bombs: bool):
    """Run follows for every (family, length) class; returns statistics.

    For each prev row: a hand drawn from the cards not in prev; half the time it contains a
    play of the same class with a higher key (when one exists), a quarter of the time a bomb
    or the rocket that beats prev.  The hand is checked against
    the table oracle; if its relevant sub-multisets are within ``budget`` (after shrinking a
    small copy of it) also against the exhaustive reference.
    """
    stats = SimpleNamespace(
        oracle=collections.Counter(), exhaustive=collections.Counter(),
        exhaustive_whole=collections.Counter(),  # exhaustive on the hand as drawn (not shrunk)
        beat_same=collections.Counter(), beat_bomb=collections.Counter(), classes=set(),
    )
    rules = g.rules
    bomb_sizes = set(rules.bomb_sizes) | {2 if g.n == 3 else 4}
    for cls, members in sorted(g.classes.items()):
        if cls[0] in (BOMB, ROCKET):  # every bomb (and the rocket) several times
            picks = [r for r in members for _ in range(max(2, per_class // len(members) + 1))]
        else:
            picks = [members[i] for i in rng.integers(0, len(members), per_class)]
        for j, prev_row in enumerate(picks):
            prev_counts = g.counts[prev_row]
            pool = g.full - prev_counts
            prev_rd = g.readings[prev_row]
            cand = None
            bombs = [r for r in g.classes[(BOMB, 0)] + g.classes[(ROCKET, 0)]
                     if beats(g.readings[r], prev_rd) and np.all(g.counts[r] <= pool)]
            if j % 2 == 0:  # a play of the same class that beats prev
                if cls[0] in (BOMB, ROCKET):
                    better = bombs
                else:
                    better = [r for r in members if g.readings[r].key > prev_rd.key
                              and np.all(g.counts[r] <= pool)]
                if better:
                    cand = better[int(rng.integers(len(better)))]
            elif j % 4 == 1 and bombs:  # a bomb (or the rocket) that beats prev
                cand = bombs[int(rng.integers(len(bombs)))]
            size = int(hand_sizes[int(rng.integers(len(hand_sizes)))])
            base = g.counts[cand].copy() if cand is not None else np.zeros(16, np.int64)
            size = max(size, int(base.sum()))
            hand = base + _random_hand(g, rng, size - int(base.sum()), pool - base)
            fast = _fast(g, hand, prev_row)
            assert fast == _oracle(g, hand, prev_row), (
                "oracle", g.tab.row_string(prev_row), g.tab.deck.format(hand))
            fam = FAMILY_NAMES[cls[0]]
            stats.oracle[fam] += 1
            stats.classes.add(cls)
            if any(x[1] == cls[0] for x in fast):
                stats.beat_same[fam] += 1
            if any(x[1] in (BOMB, ROCKET) for x in fast):
                stats.beat_bomb[fam] += 1
            if budget <= 0:
                continue
            # exhaustive reference on the hand, or on a smaller hand that still holds the candidate
            own = int(prev_counts.sum())
            sizes = {own} | (set() if fast_bombs else bomb_sizes)
            small = hand.copy()
            while _n_sub(small, sizes) > budget and small.sum() > base.sum():
                extra = np.repeat(np.arange(16), small - base)
                small[extra[int(rng.integers(len(extra)))]] -= 1
            if _n_sub(small, sizes) > budget:
                continue
            fast_s = _fast(g, small, prev_row)
            ref = reference_legal(small, prev_rd, rules, fast_bombs=fast_bombs)
            assert fast_s == ref, (g.tab.row_string(prev_row), g.tab.deck.format(small),
                                   sorted(fast_s ^ ref)[:6])
            stats.exhaustive[fam] += 1
            if small.sum() == hand.sum():
                stats.exhaustive_whole[fam] += 1
    return stats


def test_follows_every_class(g3):
    g = g3
    rng = np.random.default_rng(99)
    st = _follow_positions(g, rng, per_class=_n(36), hand_sizes=np.arange(4, 21), budget=2500,
                           fast_bombs=False)
    assert st.classes == set(g.classes), "some (family, length) class was never the play to beat"
    for fam in FAMILY_NAMES:
        assert st.exhaustive[fam] >= _at_least(10), (fam, st.exhaustive)
        if fam not in ("rocket",):
            assert st.beat_bomb[fam] >= 1, (fam, st.beat_bomb)
        if fam not in ("bomb", "rocket"):
            assert st.beat_same[fam] >= _at_least(5), (fam, st.beat_same)
    print("\n3p follows: oracle", dict(st.oracle), "\nexhaustive", dict(st.exhaustive),
          "\nexhaustive on the hand as drawn", dict(st.exhaustive_whole))


def test_follows_full_hands_against_table_oracle(g3):
    """Many follows with 17-20-card hands, checked against the table oracle only."""
    g = g3
    rng = np.random.default_rng(5)
    st = _follow_positions(g, rng, per_class=_n(20), hand_sizes=np.arange(17, 21), budget=0,
                           fast_bombs=False)
    assert st.classes == set(g.classes)
    assert sum(st.oracle.values()) >= _at_least(20 * 30)


# -- 4 players (two decks) -------------------------------------------------------------------------


def test_free_leads_two_decks(g4):
    per_family = _compare_free_leads(g4, np.random.default_rng(4), _n(300), 12)
    print("\n4p free leads, plays compared per family:", dict(per_family))
    for fam in ("single", "pair", "trio", "trio_pair", "straight", "bomb", "rocket", "pair_chain",
                "airplane", "airplane_pairs"):
        assert per_family[fam] >= _at_least(3), (fam, per_family)


def test_follows_two_decks(g4):
    g = g4
    rng = np.random.default_rng(44)
    st = _follow_positions(g, rng, per_class=_n(8), hand_sizes=np.array([25, 33]), budget=3000,
                           fast_bombs=True)
    assert st.classes == set(g.classes)
    for fam in ("single", "pair", "trio", "trio_pair", "straight", "bomb", "rocket",
                "pair_chain", "airplane", "airplane_pairs"):
        assert st.oracle[fam] >= _at_least(8), (fam, st.oracle)
        assert st.exhaustive[fam] >= 1, (fam, st.exhaustive)
    print("\n4p follows: oracle", dict(st.oracle), "\nexhaustive", dict(st.exhaustive),
          "\nexhaustive on the 25/33-card hand as drawn", dict(st.exhaustive_whole))
