"""The segment scan of the move generator against the plain group-by-group scan.

:func:`cardenvs.core.kernels.gen_legal` visits the play table by *segments* (runs of groups whose
bodies are the same run of ranks shifted one rank per group, see :mod:`cardenvs.core.table`),
finds the fitting bodies of a segment with one run mask and jumps over the longer chains after a
segment none of whose bodies fits.  :func:`cardenvs.core.kernels.gen_legal_scan` tests every
group's body and then every row of a fitting group, the definition of the legal rows.  Both must
return the same rows in the same order on every table of the suite (3- and 4-player Dou Dizhu,
the DouZero and RLCard presets, Wakeng, and the effective-play tables of the wild-joker games,
whose bombs of up to 12 cards make irregular segments), for free leads and for follows of rows
of every shape class.

Also checked here: the segment columns against their definition (every body of a regular
segment is its run), the skip pointers (a hand with no body of a segment has none of the
segments skipped), and the rank planes against the pure-Python ``planes_of``.
"""

from __future__ import annotations

import numpy as np
import pytest

from cardenvs.core.cards import NSLOT, Deck
from cardenvs.core.combos import (
    AIRPLANE_PAIRS, AIRPLANE_SINGLES, TRIO_PAIR, ComboRules, Play, enumerate_plays,
)
from cardenvs.core.kernels import (
    SEG_G0, SEG_G1, SEG_LEN, SEG_LONE, SEG_M, SEG_S0, SEG_SKIP, gen_legal, gen_legal_scan, planes,
)
from cardenvs.core.table import Table, kicker_index, planes_of, run_of
from cardenvs.games.doudizhu import play_table
from cardenvs.games.paodekuai import play_table as pdk_table

ORDER = "3456789TJQKA2BR"


def _wild_two_decks() -> Table:
    rules = ComboRules(
        deck=Deck.standard(ORDER, 2), chain_lo=0, chain_hi=11, straight=(5, 12),
        pair_chain=(3, 12), airplane=(2, 8), airplane_singles=None, airplane_pairs=(2, 5),
        trio_single=False, four_two_singles=False, four_two_pairs=False, joker_pairs=True,
        bomb_sizes=tuple(range(4, 13)), bomb_order="size_rank", rocket=(("B", 2), ("R", 2)),
        wilds=4, chain_only=(0,), pairs_both_joker_pairs=True, max_cards=25)
    return Table(rules.deck, enumerate_plays(rules))


def _wild_one_deck() -> Table:
    rules = ComboRules(
        deck=Deck.standard(ORDER, 1), chain_lo=0, chain_hi=11, straight=(5, 12),
        pair_chain=(2, 12), airplane=None, airplane_singles=None, airplane_pairs=None,
        trio_single=False, four_two_singles=False, four_two_pairs=False,
        bomb_sizes=(4, 5, 6), bomb_order="size_rank", rocket=(("B", 1), ("R", 1)),
        rocket_low=True, wilds=2, joker_singles=False, max_cards=10)
    return Table(rules.deck, enumerate_plays(rules))


def _wakeng() -> Table:
    from cardenvs.games.wakeng import play_table as wakeng_table

    return wakeng_table()


TABLES = {
    "ddz3": lambda: play_table(3, "seed"),
    "ddz3-douzero": lambda: play_table(3, "douzero"),
    "ddz3-rlcard": lambda: play_table(3, "rlcard"),
    "ddz4": lambda: play_table(4, "seed"),
    "wakeng": _wakeng,
    "paodekuai": lambda: pdk_table(),
    "wild-one-deck": _wild_one_deck,
    "wild-two-decks": _wild_two_decks,
}


@pytest.fixture(scope="module", params=sorted(TABLES))
def table(request) -> Table:
    return TABLES[request.param]()


def _random_hand(rng, deck: Deck, size: int, boost: float) -> np.ndarray:
    """A random hand of ``size`` cards of ``deck``; with ``boost`` > 0 biased towards many
    copies of few ranks (trios, bombs, long chains of pairs), so every segment gets hits."""
    cards = np.repeat(np.arange(deck.n_ranks), deck.copies)
    if boost > 0:
        w = rng.random(deck.n_ranks) ** (1 + 4 * boost)
        p = w[cards]
        pick = rng.choice(len(cards), size, replace=False, p=p / p.sum())
    else:
        pick = rng.choice(len(cards), size, replace=False)
    hand = np.zeros(NSLOT, np.int64)
    np.add.at(hand, cards[pick], 1)
    return hand


def _both(tab, hand, prev):
    n = len(tab.plays) + 1
    a, b = np.full(n, -7, np.int64), np.full(n, -7, np.int64)
    ka = gen_legal(hand, np.int64(prev), tab.arrays, a)
    kb = gen_legal_scan(hand, np.int64(prev), tab.arrays, b)
    return list(a[:ka]), list(b[:kb])


def test_segment_columns_match_their_definition(table):
    arr = table.arrays
    seg, g_seg = arr.seg, arr.g_seg
    G = len(arr.g_lo)
    assert seg[0, SEG_G0] == 0 and seg[-1, SEG_G1] == G
    assert np.all(seg[1:, SEG_G0] == seg[:-1, SEG_G1])
    for i, row in enumerate(seg):
        g0, g1 = int(row[SEG_G0]), int(row[SEG_G1])
        assert g0 < g1 and np.all(g_seg[g0:g1] == i)
        assert i < row[SEG_SKIP] <= len(seg)
        for j, g in enumerate(range(g0, g1)):
            a, b = arr.g_start[g], arr.g_end[g]
            body = table.plays[a].body
            if row[SEG_M] > 0:
                assert run_of(body) == (row[SEG_M], row[SEG_LEN], row[SEG_S0] + j)
            if row[SEG_LONE]:
                assert b - a == 1 and table.plays[a].counts == body
            # every row of a group has the group's body
            assert all(table.plays[t].body == body for t in range(a, b))


def test_run_of_literal():
    def c(**kw):
        v = [0] * NSLOT
        for r, n in kw.items():
            v[int(r[1:])] = n
        return tuple(v)

    assert run_of(c(r3=1)) == (1, 1, 3)
    assert run_of(c(r0=2, r1=2, r2=2)) == (2, 3, 0)  # 334455
    assert run_of(c(r0=2, r1=2, r3=2)) is None  # a gap
    assert run_of(c(r0=3, r1=2)) is None  # mixed multiplicities
    assert run_of(c(r4=8)) == (8, 1, 4)
    assert run_of(c(r4=9)) is None  # beyond plane 8
    assert run_of(c()) is None


def test_skip_pointers_are_sound(table):
    """A hand with no body of segment i fits no body of the segments i+1 .. skip-1."""
    arr = table.arrays
    seg = arr.seg
    rng = np.random.default_rng(5)
    deck = table.deck
    for _ in range(300):
        hand = _random_hand(rng, deck, int(rng.integers(1, min(sum(deck.copies), 34))),
                            float(rng.random()))
        lo, hi = planes_of(hand)
        fit = ((arr.g_lo & ~np.int64(lo)) | (arr.g_hi & ~np.int64(hi))) == 0
        for i, row in enumerate(seg):
            if row[SEG_M] > 0 and not fit[row[SEG_G0]:row[SEG_G1]].any():
                j = int(row[SEG_SKIP])
                assert not fit[row[SEG_G1]:seg[j - 1, SEG_G1]].any()


def test_free_leads_match_plain_scan(table):
    rng = np.random.default_rng(11)
    deck = table.deck
    total = sum(deck.copies)
    emitted = 0
    for i in range(600):
        size = int(rng.integers(1, min(total, 34) + 1))
        hand = _random_hand(rng, deck, size, boost=(i % 3) / 2)
        a, b = _both(table, hand, -1)
        assert a == b, deck.format(hand)
        emitted += len(a)
    assert emitted > 600  # the hands do make plays


def test_follows_match_plain_scan(table):
    """Follows of rows of every shape class (and bombs), by hands that often can beat them."""
    rng = np.random.default_rng(12)
    deck = table.deck
    arr = table.arrays
    total = sum(deck.copies)
    seg = arr.seg
    # one random row of each segment, several times over
    prevs = []
    for _ in range(6):
        for row in seg:
            g = int(rng.integers(row[SEG_G0], row[SEG_G1]))
            prevs.append(int(rng.integers(arr.g_start[g], arr.g_end[g])))
    beaten = 0
    for i, prev in enumerate(prevs):
        for _ in range(4):
            size = int(rng.integers(1, min(total, 34) + 1))
            hand = _random_hand(rng, deck, size, boost=float(rng.random()))
            a, b = _both(table, hand, prev)
            assert a == b, (table.row_string(prev), deck.format(hand))
            beaten += bool(a)
    assert beaten > len(prevs)  # many of the hands can follow


def test_planes_match_python():
    rng = np.random.default_rng(3)
    for _ in range(2000):
        counts = rng.integers(0, 10, NSLOT).astype(np.int64)
        counts[rng.random(NSLOT) < 0.5] = 0
        lo, hi = planes(counts)
        assert (int(lo), int(hi)) == tuple(
            x - (1 << 64) if x >= 1 << 63 else x for x in planes_of(np.minimum(counts, 8)))


# -- kicker indexes (groups whose rows are every kicker vector of a box) --------------------------

#: the options that shape Pao De Kuai's table (deck, aaa_bomb, four_with_three, short_finish),
#: each on and off
KICK_TABLES = [("16", False, False, True), ("15", True, False, True), ("16", False, True, False),
               ("15", False, True, True), ("16", True, True, False)]


def _index_all(table: Table):
    """The table's arrays with a kicker index on every group that qualifies (any size)."""
    arr = table.arrays
    g_kick, kick = kicker_index(table.plays, arr.g_start, arr.g_end, min_rows=1)
    return arr._replace(g_kick=g_kick, kick=kick)


def _gen(arr, hand, prev, n):
    out = np.full(n, -7, np.int64)
    return list(out[:gen_legal(hand, np.int64(prev), arr, out)])


def _gen_scan(arr, hand, prev, n):
    out = np.full(n, -7, np.int64)
    return list(out[:gen_legal_scan(hand, np.int64(prev), arr, out)])


def trio_plays(vectors) -> list[Play]:
    """Trios of 3s (``Deck("345", ...)``) carrying the kicker vectors ``(4s, 5s)`` given."""
    body = (3,) + (0,) * (NSLOT - 1)
    plays = []
    for n4, n5 in vectors:
        c = list(body)
        c[1], c[2] = n4, n5
        plays.append(Play(tuple(c), TRIO_PAIR, 1, 0, body))
    return plays


def test_kicker_index_literal():
    """A trio of 3s carrying 0..2 cards of 4 (at most two) and 5 (at most one): five rows, the
    kicker vectors (4s, 5s) in the order (0,0) (0,1) (1,0) (1,1) (2,0); a hand 333 4 5 makes
    the first four, in that order.  Without the row (1,1) the rows are no box: no index."""
    deck = Deck("345", (4, 4, 4))
    vectors = [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0)]
    table = Table(deck, trio_plays(reversed(vectors)))
    assert [table.plays[t].counts[1:3] for t in range(5)] == vectors
    g_kick, kick = kicker_index(table.plays, [0], [5], min_rows=1)
    assert g_kick.tolist() == [0]
    assert kick[0:2].tolist() == [0, 2] and kick[2:2 + NSLOT].tolist() == [0, 2, 1] + [0] * 13
    arr = table.arrays._replace(g_kick=g_kick, kick=kick)
    hand = np.array([3, 1, 1] + [0] * 13, np.int64)
    assert _gen(arr, hand, -1, 8) == [0, 1, 2, 3] == _gen_scan(arr, hand, -1, 8)
    hand[1] = 2
    assert _gen(arr, hand, -1, 8) == [0, 1, 2, 3, 4]
    hand[2] = 0
    assert _gen(arr, hand, -1, 8) == [0, 2, 4]
    # the default threshold leaves a 5-row group to the row-by-row test
    assert table.arrays.g_kick.tolist() == [-1]
    holed = Table(deck, trio_plays(v for v in vectors if v != (1, 1)))
    assert kicker_index(holed.plays, [0], [4], min_rows=1)[0].tolist() == [-1]


def test_kicker_index_skips_groups_that_are_no_box():
    """Dou Dizhu's airplanes with single kickers may not carry both jokers: no box, no index;
    Pao De Kuai's airplanes (any cards of other ranks) have one."""
    everything = _index_all(play_table(3, "seed"))
    fam = play_table(3, "seed").arrays.family
    arr = play_table(3, "seed").arrays
    indexed = {int(fam[arr.g_start[g]]) for g in np.flatnonzero(everything.g_kick >= 0)}
    assert AIRPLANE_SINGLES not in indexed
    pdk = pdk_table().arrays
    assert {int(pdk.family[pdk.g_start[g]]) for g in np.flatnonzero(pdk.g_kick >= 0)} == {
        AIRPLANE_PAIRS}


@pytest.mark.parametrize("shape", KICK_TABLES, ids=lambda s: "deck{},aaa={},four={},short={}".format(*s))
def test_kicker_index_rows_match_the_plain_scan(shape):
    """Free leads and follows of hands of 1..16 cards (random, or a kicker group's body plus
    random cards), with the table's own indexes and with every box group indexed, against
    the plain scan that tests every row: the same rows in the same order."""
    table = pdk_table(*shape)
    arr, everything = table.arrays, _index_all(table)
    n = len(table) + 1
    deck = table.deck
    groups = np.flatnonzero(everything.g_kick >= 0)
    assert (arr.g_kick >= 0).sum() > 0 and len(groups) > (arr.g_kick >= 0).sum()
    rng = np.random.default_rng(23)
    indexed_rows = 0
    for i in range(700):
        size = int(rng.integers(1, 17))
        if i % 2:
            hand = _random_hand(rng, deck, size, boost=float(rng.random()))
        else:  # a kicker group's body and random other cards
            g = int(rng.choice(groups))
            hand = np.array(table.plays[arr.g_start[g]].body, np.int64)
            free = np.repeat(np.arange(deck.n_ranks), np.array(deck.copies) - hand[:deck.n_ranks])
            extra = rng.choice(len(free), min(len(free), max(0, size - int(hand.sum()))),
                               replace=False)
            np.add.at(hand, free[extra], 1)
        prev = -1
        if i % 5 == 4:  # a follow of a row of a kicker group
            g = int(rng.choice(groups))
            prev = int(rng.integers(arr.g_start[g], arr.g_end[g]))
        want = _gen_scan(arr, hand, prev, n)
        assert _gen(arr, hand, prev, n) == want, (deck.format(hand), prev)
        assert _gen(everything, hand, prev, n) == want, (deck.format(hand), prev)
        indexed_rows += sum(int(everything.g_kick[arr.group[t]] >= 0) for t in want)
    assert indexed_rows > 5000  # the indexes did produce rows
