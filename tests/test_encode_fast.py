"""The fast observation encoders equal the first ones, value for value.

Each game that has a fast encoder (no zero-fill of the whole vector, no allocation, no
reference counting: the dense ``set_*`` writers of :mod:`cardenvs.core.encode`) keeps its
first encoder as ``encode_reference`` (zero the vector, set the ones with the ``put_*``
writers).  Here both run on many random states of every phase, from every seat, with option
sets that switch each field on and off; the fast encoder writes into a buffer pre-filled with
NaN, so an entry it forgets to write shows up as a difference.  The dense writers are also
checked one by one against their ``put_*`` twins, on counts outside ``0..depth`` and on depths
other than the unrolled 4 and 8.
"""

from __future__ import annotations

import numpy as np
import pytest

import cardenvs
from cardenvs.core.combos import N_FAMILIES
from cardenvs.core.encode import put_cards, set_cards, set_row, zero
from cardenvs.core.state import CUR, PHASE, P_DONE, P_PLAY
from cardenvs.games import doudizhu as ddz
from cardenvs.games import paodekuai as pdk
from cardenvs.games import wakeng as wk

# (game, options, reference encoder, deals): the option sets switch the optional fields
CASES = [
    ("doudizhu", {}, ddz.encode_reference, 120),
    ("doudizhu", {"auction": "fixed", "preset": "douzero"}, ddz.encode_reference, 40),
    ("doudizhu", {"all_pass": "redeal", "preset": "rlcard"}, ddz.encode_reference, 40),
    ("doudizhu4", {}, ddz.encode_reference, 60),
    ("wakeng", {}, wk.encode_reference, 120),
    ("wakeng", {"open_hand": True, "reveal_kitty": True}, wk.encode_reference, 120),
    ("wakeng", {"bombs": False, "first_bidder": "lowest_club", "min_straight": 3},
     wk.encode_reference, 60),
    ("paodekuai", {}, pdk.encode_reference, 60),
    ("paodekuai", {"deck": "15", "bomb_pay": 0}, pdk.encode_reference, 30),
]


def both(game, ref, state, seat):
    """(fast, reference) observations of ``seat``."""
    fast = np.full(game.layout.size, np.nan, np.float32)
    game.encode(state, seat, fast)
    slow = np.zeros(game.layout.size, np.float32)
    ref(state, np.int64(seat), game.tab, game.opts, game.offsets, slow)
    return fast, slow


def assert_same(game, ref, state, seat, where):
    fast, slow = both(game, ref, state, seat)
    if not np.array_equal(fast, slow):  # name the first field that differs
        bad = int(np.flatnonzero(~(fast == slow))[0])
        name = next(f for f, (a, b) in game.layout.offsets.items() if a <= bad < b)
        pytest.fail(f"{game.info.name} {where}, seat {seat}: field {name!r} index {bad}: "
                    f"fast {fast[bad]} != reference {slow[bad]}")


@pytest.mark.parametrize("name,options,ref,deals", CASES,
                         ids=[f"{c[0]}-{'-'.join(f'{k}={v}' for k, v in c[1].items()) or 'default'}"
                              for c in CASES])
def test_fast_encoder_equals_reference_on_random_play(name, options, ref, deals):
    game = cardenvs.make_game(name, **options)
    rng = np.random.default_rng(len(name) * 1000 + len(options))
    s = game.new_state()
    buf = np.zeros(game.n_actions + 1, np.int64)
    checked = 0
    phases = set()
    for d in range(deals):
        game.reset(s, int(rng.integers(0, 2**62)))
        step = 0
        while True:
            phases.add(int(s[PHASE]))
            # every seat at the first decisions and at random ones, the mover always
            seats = range(game.n_players) if step < 6 or rng.random() < 0.2 else [int(s[CUR])]
            for seat in seats:
                assert_same(game, ref, s, seat, f"deal {d} step {step}")
                checked += 1
            if s[PHASE] == P_DONE:
                break
            k = game.legal(s, buf)
            game.step(s, int(buf[rng.integers(k)]))
            step += 1
    assert checked > 20 * deals
    assert {P_PLAY, P_DONE} <= phases
    if name == "wakeng":
        assert wk.P_BURY in phases
        if options.get("open_hand"):
            assert wk.P_OPEN in phases


def test_wakeng_unsuited_custom_deal_open_hand():
    """A deal given without suits (no diamonds known), the digger set and the hand open."""
    game = cardenvs.make_game("wakeng", open_hand=True)
    s = game.new_state()
    deal = {"hands": ["4444555566667777", "88889999TTTTJJJJ", "QQQQKKKKAAAA2222"],
            "kitty": "3333", "first_bidder": 1, "leader": 2}
    game.custom_deal(s, deal, 5)
    buf = np.zeros(game.n_actions + 1, np.int64)
    rng = np.random.default_rng(3)
    while s[PHASE] != P_DONE:
        for seat in range(3):
            assert_same(game, wk.encode_reference, s, seat, "unsuited deal")
        k = game.legal(s, buf)
        game.step(s, int(buf[rng.integers(k)]))
    for seat in range(3):
        assert_same(game, wk.encode_reference, s, seat, "unsuited deal, done")


@pytest.mark.parametrize("depth", [1, 3, 4, 5, 8])
def test_dense_card_writers_equal_put_cards(depth):
    rng = np.random.default_rng(depth)
    n_ranks = 13
    for _ in range(300):
        counts = rng.integers(-2, 11, 16).astype(np.int64)
        base = int(rng.integers(0, 4))
        arr = np.zeros(40, np.int64)
        arr[base:base + 16] = counts
        off = int(rng.integers(0, 5))
        want = np.zeros(off + n_ranks * depth + 3, np.float32)
        put_cards(want, off, counts, n_ranks, depth)
        got = np.full_like(want, np.nan)
        got[:off] = 0.0
        got[off + n_ranks * depth:] = 0.0
        set_cards(got, off, arr, base, n_ranks, depth)
        assert np.array_equal(got, want), (counts, depth)


@pytest.mark.parametrize("name", ["doudizhu", "doudizhu4", "wakeng"])
def test_set_row_equals_put_cards_of_every_row(name):
    """``set_row`` reads a row's rank planes; it must match the row's counts, at every depth
    (deeper than the game's too: 4-player Dou Dizhu rows hold up to 8 of a rank)."""
    game = cardenvs.make_game(name)
    tab = game.tab
    R = game.deck.n_ranks
    rows = np.random.default_rng(1).choice(len(game.table), min(3000, len(game.table)), False)
    for depth in (2, 4, 8):
        for t in rows:
            want = np.zeros(R * depth + 2, np.float32)
            put_cards(want, 1, tab.counts[t], R, depth)
            got = np.full_like(want, np.nan)
            got[0] = got[-1] = 0.0
            set_row(got, 1, tab, np.int64(t), R, depth)
            assert np.array_equal(got, want), (name, int(t), depth)


def test_zero_and_family_width():
    out = np.ones(10, np.float32)
    zero(out, 2, 7)
    assert out.tolist() == [1, 1, 0, 0, 0, 0, 0, 1, 1, 1]
    for name in ("doudizhu", "wakeng"):
        a, b = cardenvs.make_game(name).layout.offsets["to_beat_type"]
        assert b - a == N_FAMILIES  # set_table zeroes N_FAMILIES entries there
