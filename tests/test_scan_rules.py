"""The move generator's row-bit indexes and its in-scan play rules against the plain paths.

:func:`cardenvs.core.table.row_bits` gives a middle-sized group (64 to 256 rows: Pao De Kuai's
trio + 2, Dou Dizhu's four + 2) the set of rows that need each plane bit, so the scan clears
the rows of the bits a hand lacks instead of testing every row; and
:func:`cardenvs.core.kernels.gen_rows_whole` applies two play rules of
:mod:`cardenvs.core.follow` inside the scan: the whole-hand rule (a row of fewer cards than its
family's full size only as the whole hand) and the rank a play must hold.  Checked here, on
every table of the suite and every Pao De Kuai table shape, with the tables' own indexes and
with an index on every group that can have one (or none at all):

* :func:`gen_legal` against :func:`gen_legal_scan` (tests every row): the same rows in order;
* :func:`cardenvs.core.follow.gen_allowed` against the plain scan filtered row by row with
  :func:`cardenvs.core.follow.row_allowed` (the rule as written), for random hands, plays to
  beat, required ranks and highest-single ranks;
* literal hands of the rules page (``docs/rules/paodekuai.md``: a trio takes two kickers, fewer
  only as the last play; the first play holds a 3).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import cardenvs
from cardenvs.core.cards import Deck
from cardenvs.core.combos import TRIO_PAIR
from cardenvs.core.follow import gen_allowed, row_allowed
from cardenvs.core.kernels import gen_legal, gen_legal_scan
from cardenvs.core.table import BITS_MAX_ROWS, Table, kicker_index, row_bits
from cardenvs.games import paodekuai as P
from test_kernel_segments import TABLES, _random_hand, trio_plays


def _with_bits(table: Table, min_rows: int, kick_min: int | None = None):
    """The table's arrays with row-bit indexes on groups of ``min_rows`` rows or more (none
    when ``min_rows`` is None) and, with ``kick_min``, kicker indexes from that size."""
    arr = table.arrays
    if kick_min is not None:
        g_kick, kick = kicker_index(table.plays, arr.g_start, arr.g_end, min_rows=kick_min)
        arr = arr._replace(g_kick=g_kick, kick=kick)
    if min_rows is None:
        return arr._replace(g_bits=np.full(len(arr.g_start), -1, np.int64),
                            bits=np.zeros(1, np.int64))
    g_bits, bits = row_bits(arr.lo, arr.hi, arr.ncards, arr.g_lo, arr.g_hi, arr.g_start,
                            arr.g_end, arr.g_kick >= 0, min_rows=min_rows)
    return arr._replace(g_bits=g_bits, bits=bits)


def _rows(fn, *args, n):
    out = np.full(n, -7, np.int64)
    return out[:fn(*args, out)].tolist()


def test_row_bits_literal():
    """A trio of 3s carrying 0..2 cards of 4 (at most two) and 5 (one): rows (4s, 5s) (0,0)
    (0,1) (1,0) (1,1) (2,0).  The index: bits 4 (plane 1, rank 1) and 16+1 (plane 2, rank 1)
    and 2 (plane 1, rank 2); rows of 3, 4, 4, 5, 5 cards."""
    table = Table(Deck("345", (4, 4, 4)), trio_plays([(0, 0), (0, 1), (1, 0), (1, 1), (2, 0)]))
    arr = table.arrays
    g_bits, bits = row_bits(arr.lo, arr.hi, arr.ncards, arr.g_lo, arr.g_hi, arr.g_start,
                            arr.g_end, arr.g_kick >= 0, min_rows=1)
    assert g_bits.tolist() == [0]
    # R, W, used_lo (ranks 1, 2 of plane 1; rank 1 of plane 2), used_hi, c0, nc
    assert bits[:6].tolist() == [5, 1, 0b110 | (0b10 << 16), 0, 3, 3]
    # rows needing: rank 1 plane 1 -> rows 2, 3, 4; rank 2 -> rows 1, 3; rank 1 plane 2 -> row 4
    assert bits[6:9].tolist() == [0b11100, 0b01010, 0b10000]
    # rows of 3, 4, 5 cards
    assert bits[9:12].tolist() == [0b00001, 0b00110, 0b11000]
    indexed = arr._replace(g_bits=g_bits, bits=bits)
    for hand4, hand5, want in [(1, 1, [0, 1, 2, 3]), (2, 1, [0, 1, 2, 3, 4]), (2, 0, [0, 2, 4]),
                               (0, 0, [0])]:
        hand = np.array([3, hand4, hand5] + [0] * 13, np.int64)
        assert _rows(gen_legal, hand, np.int64(-1), indexed, n=8) == want
        assert _rows(gen_legal_scan, hand, np.int64(-1), arr, n=8) == want


@pytest.mark.parametrize("name", sorted(TABLES))
def test_row_bits_rows_match_the_plain_scan(name):
    """Every table of the suite, with its own indexes and with a row-bit index on every group
    of 2..256 rows that has no kicker index: free leads and follows of random hands give the
    plain scan's rows in its order."""
    table = TABLES[name]()
    own, every = table.arrays, _with_bits(table, 2)
    sizes = every.g_end - every.g_start
    assert (own.g_bits >= 0).sum() == ((sizes >= 64) & (sizes <= BITS_MAX_ROWS)
                                       & (own.g_kick < 0)).sum()
    rng = np.random.default_rng(41)
    n = len(table) + 1
    big = min(33, sum(table.deck.copies) // 3)  # up to a hand of the deck
    kick = np.flatnonzero(every.g_bits >= 0)
    for i in range(500):
        hand = _random_hand(rng, table.deck, int(rng.integers(1, big + 1)), float(rng.random()))
        prev = -1
        if i % 3 and len(kick):  # a follow, often of a row of an indexed group
            g = int(rng.choice(kick)) if i % 3 == 1 else int(rng.integers(len(every.g_start)))
            prev = int(rng.integers(every.g_start[g], every.g_end[g]))
        want = _rows(gen_legal_scan, hand, np.int64(prev), own, n=n)
        assert _rows(gen_legal, hand, np.int64(prev), own, n=n) == want
        assert _rows(gen_legal, hand, np.int64(prev), every, n=n) == want


def test_row_bits_cover_groups_of_one_to_four_words():
    """The test above reaches groups of 1, 2, 3 and 4 words."""
    words = set()
    for name in ("ddz4", "wild-two-decks", "ddz3"):
        arr = _with_bits(TABLES[name](), 2)
        words |= {int(arr.bits[d + 1]) for d in arr.g_bits[arr.g_bits >= 0]}
    assert words == {1, 2, 3, 4}


def test_row_bits_with_planes_five_to_eight():
    """Kickers of up to six cards of a rank (eight copies): the rows need bits of planes 5..8
    (``used_hi``); every hand of 0..8 fours and 0..1 five gives the plain scan's rows."""
    plays = trio_plays(itertools.product(range(7), range(2)))
    table = Table(Deck("345", (4, 8, 4)), plays)
    arr = table.arrays
    g_bits, bits = row_bits(arr.lo, arr.hi, arr.ncards, arr.g_lo, arr.g_hi, arr.g_start,
                            arr.g_end, arr.g_kick >= 0, min_rows=1)
    assert int(bits[3]) == (1 << 1) | (1 << 17)  # rank 1 in planes 5 and 6
    indexed = arr._replace(g_bits=g_bits, bits=bits)
    for n4, n5 in itertools.product(range(9), range(2)):
        hand = np.array([3, n4, n5] + [0] * 13, np.int64)
        want = [t for t in range(len(plays))
                if table.plays[t].counts[1] <= n4 and table.plays[t].counts[2] <= n5]
        assert _rows(gen_legal, hand, np.int64(-1), indexed, n=20) == want
        assert _rows(gen_legal_scan, hand, np.int64(-1), arr, n=20) == want


#: Pao De Kuai's table shapes (deck, aaa_bomb, four_with_three, short_finish): all 16
SHAPES = list(itertools.product(("16", "15"), (False, True), (False, True), (False, True)))


def _plain_allowed(arr, hand, prev, need, top, o, n):
    """The plain path: every fitting row (:func:`gen_legal_scan`), then :func:`row_allowed`."""
    rows = _rows(gen_legal_scan, hand, np.int64(prev), arr, n=n)
    hn = int(hand.sum())
    return [r for r in rows if row_allowed(arr, r, hn, need, top, o, P.O_FULL)]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "deck{},aaa={},four={},short={}".format(*s))
def test_rules_in_the_scan_match_the_row_filter(shape):
    """``gen_allowed`` (whole-hand rule and required rank in the scan, highest single after it)
    against the plain scan filtered row by row, on random hands (and end-game hands of a trio
    or trio chain with few kickers) with and without a required rank, a highest-single rank
    and a play to beat, with the table's indexes, with every index possible and with none."""
    deck, aaa, four, short = shape
    game = cardenvs.make_game("paodekuai", deck=deck, aaa_bomb=aaa, four_with_three=four,
                              short_finish=short)
    table, o = game.table, game.opts
    variants = [table.arrays, _with_bits(table, 2, kick_min=1), _with_bits(table, None, 10**9)]
    n = len(table) + 1
    rng = np.random.default_rng(7)
    kick = [g for g in range(len(table.arrays.g_start))
            if table.plays[table.arrays.g_start[g]].family in (TRIO_PAIR, P.AIRPLANE_PAIRS)]
    shorts = needs = 0
    for i in range(400):
        if i % 3 == 2:  # a trio (chain) body with 0..2 kickers a trio: the short rows
            g = int(rng.choice(kick))
            hand = np.array(table.plays[table.arrays.g_start[g]].body, np.int64)
            L = int(table.plays[table.arrays.g_start[g]].length)
            for _ in range(int(rng.integers(0, 2 * L + 1))):
                r = int(rng.integers(0, 13))
                if hand[r] < table.deck.copies[r] and hand[r] != 3:
                    hand[r] += 1
        else:
            hand = _random_hand(rng, table.deck, int(rng.integers(1, 17)), float(rng.random()))
        held = np.flatnonzero(hand)
        need = int(rng.choice(held)) if i % 2 else -1
        top = int(rng.choice(held)) if i % 7 == 3 else -1
        prev = int(rng.integers(0, len(table))) if i % 4 == 1 else -1
        want = _plain_allowed(table.arrays, hand, prev, need, top, o, n)
        for arr in variants:
            out = np.full(n, -7, np.int64)
            k = gen_allowed(hand, np.int64(prev), arr, out, np.int64(need), np.int64(top), o,
                            np.int64(P.O_FULL))
            got = out[:k].tolist()
            assert got == want, (table.deck.format(hand), prev, need, top)
        shorts += any(table.arrays.ncards[r] < 5 * table.arrays.length[r]
                      and table.arrays.family[r] in (TRIO_PAIR, P.AIRPLANE_PAIRS) for r in want)
        needs += need >= 0 and len(want) > 0
    assert needs > 60 and (shorts > 20) == short


def _strings(game, hand_text, need=-1):
    hand = game.deck.parse(hand_text)
    out = np.full(game.n_actions + 1, -7, np.int64)
    k = gen_allowed(hand, np.int64(-1), game.tab, out, np.int64(need), np.int64(-1), game.opts,
                    np.int64(P.O_FULL))
    return sorted(game.table.row_string(int(r)) for r in out[:k])


def test_rules_page_positions():
    """``docs/rules/paodekuai.md``: a trio takes two kickers; with fewer only as the last
    play (``short_finish``); the first play of the deal holds a 3 (the lead card's rank)."""
    game = cardenvs.make_game("paodekuai")
    # 3334: the whole hand as trio + 1; the bare trio is no whole hand
    assert _strings(game, "3334") == ["3", "33", "333+4", "4"]
    # 33345: trio + 2 (the whole hand); no trio with one kicker or none
    assert _strings(game, "33345") == ["3", "33", "333+45", "4", "5"]
    # the first play from 3456789 + 5: the single 3 and the straights from 3
    assert _strings(game, "34556789", need=0) == ["3", "34567", "345678", "3456789"]
    # 333 + 5566, the first play holds a 3: every trio + 2 and the 3s
    rows = _strings(game, "3335566", need=0)
    assert rows == ["3", "33", "333+55", "333+56", "333+66"]
    strict = cardenvs.make_game("paodekuai", short_finish=False)
    assert _strings(strict, "3334") == ["3", "33", "4"]
