"""The wild-joker generator (``cardenvs.core.wild``) against the slow reference.

Two rule sets in the shape of the wild games' pages: one deck with two wild jokers, ``BR`` the
weakest bomb and no joker alone (Da Niangniang), and two decks with four wild jokers, ``RR`` /
``BB`` pairs, 3s only inside chains and ``BBRR`` on top (Lanxi Wulong).  For random hands and
plays to beat, the rows the fast generator returns must be exactly the (effective play,
reading) pairs found by enumerating every sub-multiset of the hand and every way its jokers
can stand in.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from cardenvs.api import make_game
from cardenvs.core.cards import NSLOT, Deck
from cardenvs.core.combos import (
    AIRPLANE, AIRPLANE_PAIRS, BOMB, PAIR, PAIR_CHAIN, ROCKET, SINGLE, STRAIGHT, TRIO, TRIO_PAIR,
    ComboRules, enumerate_plays,
)
from cardenvs.core.reference import beats, classify
from cardenvs.core.table import Table
from cardenvs.core.wild import (
    WildReading, classify_wild, gen_legal_wild, min_wilds, pack_wild_rows, popcount,
    reference_legal_wild, wild_rows, wild_rows_at,
)

ORDER = "3456789TJQKA2BR"


def _one_deck() -> ComboRules:
    return ComboRules(
        deck=Deck.standard(ORDER, 1), chain_lo=0, chain_hi=11, straight=(5, 12),
        pair_chain=(2, 12), airplane=None, airplane_singles=None, airplane_pairs=None,
        trio_single=False, four_two_singles=False, four_two_pairs=False,
        bomb_sizes=(4, 5, 6), bomb_order="size_rank", rocket=(("B", 1), ("R", 1)),
        rocket_low=True, wilds=2, joker_singles=False, max_cards=10)


def _two_decks() -> ComboRules:
    return ComboRules(
        deck=Deck.standard(ORDER, 2), chain_lo=0, chain_hi=11, straight=(5, 12),
        pair_chain=(3, 12), airplane=(2, 8), airplane_singles=None, airplane_pairs=(2, 5),
        trio_single=False, four_two_singles=False, four_two_pairs=False, joker_pairs=True,
        bomb_sizes=tuple(range(4, 13)), bomb_order="size_rank", rocket=(("B", 2), ("R", 2)),
        wilds=4, chain_only=(0,), pairs_both_joker_pairs=True, max_cards=25)


def _has(tab: Table, text: str, family: str) -> bool:
    try:
        tab.find(text, family)
    except ValueError:
        return False
    return True


class _G:
    def __init__(self, rules: ComboRules):
        self.rules = rules
        self.tab = Table(rules.deck, enumerate_plays(rules))
        self.arr = self.tab.arrays
        self.js = rules.joker_indices()
        self.wr = wild_rows(self.arr.counts, self.js, self.js)
        # the reference reading of each row: the reading of its own effective cards that has
        # the row's family (and chain length / key), bombs and the rocket by family alone
        self.readings = []
        for p in self.tab.plays:
            rds = [r for r in classify(p.counts, rules) if r.family == p.family
                   and (p.family in (BOMB, ROCKET) or (r.length, r.key) == (p.length, p.key))]
            assert len(rds) == 1, (self.tab.deck.format(p.counts), rds)
            self.readings.append(rds[0])

    def fast(self, hand, prev_row) -> set:
        out = np.empty(len(self.tab) + 1, np.int64)
        k = gen_legal_wild(np.asarray(hand, np.int64), prev_row, self.arr, self.wr, out)
        return {WildReading(self.tab.plays[t].counts, self.readings[t]) for t in out[:k]}

    def slow(self, hand, prev_row) -> set:
        prev = None if prev_row < 0 else self.readings[prev_row]
        return reference_legal_wild(hand, prev, self.rules, self.js, self.js)


@pytest.fixture(scope="module")
def one() -> _G:
    return _G(_one_deck())


@pytest.fixture(scope="module")
def two() -> _G:
    return _G(_two_decks())


def _hand(rules: ComboRules, rng, size: int) -> np.ndarray:
    pool = np.repeat(np.arange(rules.n_ranks), rules.deck.copies)
    h = np.zeros(NSLOT, np.int64)
    for r in rng.choice(pool, size, replace=False):
        h[r] += 1
    return h


def test_popcount():
    rng = np.random.default_rng(0)
    for x in rng.integers(0, 2**62, 200):
        assert popcount(np.int64(x)) == bin(int(x)).count("1")
    assert popcount(np.int64(0)) == 0


def test_rows_are_effective_plays(one, two):
    f1 = one.tab.deck
    # one deck: 5555 + one or two wilds make 5- and 6-card bombs; BR is the weakest bomb
    assert _has(one.tab, "555555", "bomb") and not _has(one.tab, "5555555", "bomb")
    br = one.tab.find("BR")
    bombs = [t for t, p in enumerate(one.tab.plays) if p.family in (BOMB, ROCKET)]
    assert bombs[0] == br
    # no joker alone, no joker pair
    assert all(p.counts[13] + p.counts[14] == 0 or p.family == ROCKET for p in one.tab.plays)
    assert f1.format(one.tab.plays[bombs[1]].counts) == "3333"
    # two decks: 3s only in chains; RR and BB pairs; 12-card bombs; BBRR on top
    fam3 = {p.family for p in two.tab.plays if p.counts[0]}
    assert fam3 == {STRAIGHT, PAIR_CHAIN, AIRPLANE, AIRPLANE_PAIRS}  # chains only
    assert not any(p.counts[0] and p.family in (SINGLE, PAIR, TRIO, BOMB, TRIO_PAIR) for p in two.tab.plays)
    assert _has(two.tab, "RR", "pair") and _has(two.tab, "BB", "pair")
    assert not _has(two.tab, "BR", "pair")
    assert _has(two.tab, "444RR", "trio_pair") and _has(two.tab, "44444", "bomb")
    big = [t for t, p in enumerate(two.tab.plays) if p.family in (BOMB, ROCKET)]
    assert two.tab.plays[big[-1]].family == ROCKET
    assert sum(two.tab.plays[big[-2]].counts) == 12


def test_literal_wild_positions(one, two):
    d1 = one.tab.deck
    h = d1.parse("333B")  # 小王 + 333 = 3333 (niangniang.md)
    rows = one.fast(h, -1)
    assert ("3333", BOMB) in {(d1.format(w.effective), w.reading.family) for w in rows}
    # a joker is never played alone, and two jokers are only the joker bomb
    assert one.fast(d1.parse("B"), -1) == set()
    got = {(d1.format(w.effective), w.reading.family) for w in one.fast(d1.parse("BR"), -1)}
    assert got == {("BR", ROCKET)}
    # 5B is a pair of 5s; B + R + 5 is a trio of 5s
    got = {d1.format(w.effective) for w in one.fast(d1.parse("5BR"), -1)}
    assert {"5", "55", "555", "BR"} <= got and "5555" not in got
    # two decks: R[2]222 is the bomb 2222; 3s cannot lead alone, 34567 can, a wild can be the 3
    d2 = two.tab.deck
    got = {d2.format(w.effective) for w in two.fast(d2.parse("222R"), -1)}
    assert "2222" in got
    assert two.fast(d2.parse("33"), -1) == set()
    got = {d2.format(w.effective) for w in two.fast(d2.parse("34567"), -1)}
    assert "34567" in got and "3" not in got
    got = {d2.format(w.effective) for w in two.fast(d2.parse("4567R"), -1)}
    assert {"34567", "45678"} <= got
    assert min_wilds(d2.parse("4567R"), d2.parse("34567"), two.js) == 1


@pytest.mark.parametrize("which,sizes,n", [("one", (1, 10), 100), ("two", (1, 10), 60)])
def test_free_leads_match_reference(which, sizes, n, one, two):
    g = one if which == "one" else two
    rng = np.random.default_rng(11 if which == "one" else 12)
    for _ in range(n):
        h = _hand(g.rules, rng, int(rng.integers(*sizes)))
        # make jokers common: they are what this test is about
        if rng.random() < 0.7:
            for j in g.js:
                h[j] = min(g.rules.deck.copies[j], h[j] + int(rng.integers(0, 2)))
        fast, slow = g.fast(h, -1), g.slow(h, -1)
        assert fast == slow, (g.tab.deck.format(h), fast ^ slow)


@pytest.mark.parametrize("which", ["one", "two"])
def test_follows_match_reference(which, one, two):
    g = one if which == "one" else two
    rng = np.random.default_rng(21)
    small = np.flatnonzero(g.arr.ncards <= 8)
    checked = 0
    for _ in range(60):
        prev = int(rng.choice(small))
        size = int(g.arr.ncards[prev])
        h = _hand(g.rules, rng, int(rng.integers(size, min(size + 4, 11))))
        for j in g.js:
            h[j] = min(g.rules.deck.copies[j], h[j] + int(rng.integers(0, 2)))
        assert g.fast(h, prev) == g.slow(h, prev), (g.tab.row_string(prev), g.tab.deck.format(h))
        checked += 1
    assert checked == 60


def test_classify_wild_needs_a_natural(one):
    d = one.tab.deck
    assert {(d.format(w.effective), w.reading.family)
            for w in classify_wild(d.parse("BR"), one.rules, one.js, one.js)} == {("BR", ROCKET)}
    assert {w.reading.family for w in classify_wild(d.parse("7B"), one.rules, one.js, one.js)} == {PAIR}


def test_wild_rows_round_trip_through_an_options_vector(two):
    wr = two.wr
    T = len(wr.wfix)
    o = np.full(7 + 3 * T + 2, -5, np.int64)
    pack_wild_rows(o, wr, 3, 1, 5, 7)
    assert (o[3], o[1], o[5]) == (wr.jall, wr.wslots, T)
    assert o[0] == o[2] == o[4] == o[6] == o[-1] == o[-2] == -5  # nothing else written
    back = wild_rows_at(o, 3, 1, 5, 7)
    assert (back.jall, back.wslots) == (wr.jall, wr.wslots)
    for a, b in zip(back[2:], wr[2:]):
        assert np.array_equal(a, b)
    with pytest.raises(ValueError, match="no room for"):
        pack_wild_rows(np.zeros(7 + 3 * T - 1, np.int64), wr, 3, 1, 5, 7)


@pytest.mark.parametrize("name", ["wulong", "niangniang"])
def test_games_read_their_wild_rows_from_their_options(name):
    lay = importlib.import_module(f"cardenvs.games.{name}_layout")
    g = make_game(name)
    own = g.wr if name == "wulong" else g.wild
    back = wild_rows_at(g.opts, lay.O_JALL, lay.O_WSLOTS, lay.O_T, lay.N_OPTS)
    assert back.jall == own.jall and back.wslots == own.wslots and back.wslots != 0
    for a, b in zip(back[2:], own[2:]):
        assert len(a) == len(g.table) and np.array_equal(a, b)
