"""Core state mechanics: the action log is a ring buffer and never overruns the state;
``Game.check_state`` rejects every corrupted field, card count, log entry and state of
another game or option set with a ``ValueError`` naming it (issue 17 items 1 and 2), and the
raw ``Game`` methods reject bad buffers instead of crashing."""

from __future__ import annotations

import importlib
import re

import numpy as np
import pytest

import cardenvs
from cardenvs import doudizhu4_v0
from cardenvs.api import make_game
from cardenvs.core.state import (
    CUR, FIRST, LANDLORD, LAST_ROW, LAST_SEAT, MAXLOG, NLOG, NPASS, PHASE, hand_off, kitty_off,
    log_entry, log_off, n_active, next_active, played_off,
)


def test_active_seat_helpers():
    # per-seat entries at 3..6 (0 = still in the hand); seats 1 and 3 are in
    s = np.array([9, 9, 9, 2, 0, 1, 0, 9], np.int64)
    assert n_active(s, 3, 4) == 2
    assert [next_active(s, 3, q, 4) for q in range(4)] == [1, 3, 3, 1]  # the seat itself never
    s[3 + 3] = 1
    assert n_active(s, 3, 4) == 1
    assert next_active(s, 3, 1, 4) == -1 and next_active(s, 3, 2, 4) == 1
    s[3:7] = 5
    assert n_active(s, 3, 4) == 0 and next_active(s, 3, 0, 4) == -1


def test_log_ring_buffer_survives_more_than_maxlog_actions():
    # 4 passes per voided deal; 130 redeals = 520 logged passes > MAXLOG (512)
    env = doudizhu4_v0.env(all_pass="redeal", max_redeals=1000, render_mode="ansi")
    env.reset(seed=0)
    game = env.unwrapped.game
    passed = game.string_to_action("pass")
    for _ in range(520):
        env.step(passed)
    env.step(game.string_to_action("bid 3"))
    s = env.unwrapped.state_vec
    assert s[NLOG] == 521 > MAXLOG
    assert len(s) == game.state_size  # nothing written past the end
    # the newest entry is the bid 3, made by the first bidder of the last redeal (it opened
    # that deal's auction); the one before is the last pass of the previous deal
    first = int(s[FIRST])
    assert int(s[LANDLORD]) == first
    assert log_entry(s, 4, 520) == game.string_to_action("bid 3") * 8 + first
    assert log_entry(s, 4, 519) // 8 == passed
    rng = np.random.default_rng(0)
    for _ in range(6):
        ids = env.unwrapped.legal_actions()
        env.step(int(ids[rng.integers(len(ids))]))
    obs = env.observe(env.agent_selection)["observation"]
    assert np.isfinite(obs).all() and obs.min() >= 0 and obs.max() <= 1
    assert "recent:" in env.render()


# -- Game.check_state: every field in range, cards conserved, the game's own fields ----------


def _env(name, **kwargs):
    return importlib.import_module("cardenvs." + cardenvs.GAMES[name]).env(**kwargs)


def _corrupt(env, index, value):
    snap = env.unwrapped.get_state()
    snap["state"][index] = value
    return snap


def _unchanged(env, before):
    after = env.unwrapped.get_state()
    assert np.array_equal(after["state"], before["state"])
    assert after["history"] == before["history"] and after["agents"] == before["agents"]
    assert np.array_equal(after["legal"], before["legal"])


def test_issue_examples_are_value_errors_naming_the_field():
    # wakeng, CUR = 1e9 through set_state, then observe: was a SIGSEGV
    env = _env("wakeng")
    env.reset(seed=0)
    before = env.unwrapped.get_state()
    with pytest.raises(ValueError, match=r"wakeng state field CUR = 1000000000 out of range "
                                         r"\[0, 2\]"):
        env.unwrapped.set_state(_corrupt(env, CUR, 10**9))
    _unchanged(env, before)
    env.observe(env.agent_selection)  # the env still works
    # 3-player Dou Dizhu with a fixed auction, LAST_ROW = 1e6: was a SIGSEGV
    env = _env("doudizhu", auction="fixed")
    env.reset(seed=0)
    T = len(env.unwrapped.game.table)
    with pytest.raises(ValueError, match=rf"LAST_ROW = 1000000 out of range \[-1, {T - 1}\]"):
        env.unwrapped.set_state(_corrupt(env, LAST_ROW, 10**6))


@pytest.mark.parametrize("name", sorted(cardenvs.GAMES))
def test_corrupted_fields_are_rejected(name):
    env = _env(name)
    env.reset(seed=1)
    g = env.unwrapped.game
    n = g.n_players
    S = g.state_size
    s = env.unwrapped.state_vec
    h0 = hand_off(0) + int(np.flatnonzero(s[hand_off(0):hand_off(0) + 16])[0])
    cases = [
        (PHASE, 99, r"PHASE = 99 out of range"),
        (CUR, -1, r"CUR = -1 out of range"),
        (CUR, n, rf"CUR = {n} out of range"),
        (LAST_SEAT, n, rf"LAST_SEAT = {n} out of range"),
        (NPASS, -5, r"NPASS = -5 out of range"),
        (h0, s[h0] + 1, r"cards are not conserved|out of range"),  # a card from nowhere
        (h0, -1, r"hand of seat 0 \[.\] = -1 out of range"),
        (hand_off(0) + 15, 1, r"hand of seat 0 \[-\] = 1 out of range \[0, 0\]"),
        (played_off(n, n - 1), 9, r"played by seat .* out of range"),
        (log_off(n), -3, r"log entry.* = -3 out of range"),
        (S - 1, 12345, r"another game or option set"),
        (S - 1, 0, r"zero fingerprint"),
    ]
    for index, value, fragment in cases:
        before = env.unwrapped.get_state()
        with pytest.raises(ValueError, match=fragment):
            env.unwrapped.set_state(_corrupt(env, index, value))
        _unchanged(env, before)
        with pytest.raises(ValueError, match=fragment):
            bad = s.copy()
            bad[index] = value
            g.check_state(bad)


def test_game_specific_fields_are_checked():
    from cardenvs.games import niangniang as nn
    from cardenvs.games import wakeng as wk
    from cardenvs.games import wulong as wl

    for name, index, value, fragment in [
            ("wakeng", wk.DIAM + 2, 7, r"DIAM\[2\] = 7 out of range \[-1, 4\]"),
            ("wakeng", wk.A_OPEN, 2, r"A_OPEN = 2 out of range"),
            ("niangniang", nn.X_PLACE + 1, 5, r"X_PLACE\[1\] = 5 out of range \[0, 4\]"),
            ("niangniang", nn.X_REC + 1, 10**6, r"X_REC\[0\] row = 1000000 out of range"),
            ("niangniang", nn.A_JMIN, 99, r"A_JMIN = 99"),
            ("wulong", wl.X_STATUS + 3, 3, r"X_STATUS\[3\] = 3 out of range \[0, 2\]"),
            ("wulong", wl.X_PSEQ, 99, r"X_PSEQ\[0\] = 99"),
            ("wulong", wl.A_PEND, 10**5, r"A_PEND = 100000")]:
        g = make_game(name)
        s = g.new_state()
        g.reset(s, 5)
        g.check_state(s)
        s[index] = value
        with pytest.raises(ValueError, match=fragment):
            g.check_state(s)


def test_conditional_fields_and_the_kitty():
    g = make_game("doudizhu")
    s = g.new_state()
    g.reset(s, 2)
    buf = np.empty(g.n_actions, np.int64)
    while s[PHASE] == 0:  # to the play phase
        g.step(s, int(buf[g.legal(s, buf) - 1]))  # the highest bid
    g.check_state(s)
    bad = s.copy()
    bad[LANDLORD] = -1  # a play phase without a landlord (the kitty would count twice)
    with pytest.raises(ValueError, match=r"LANDLORD = -1 out of range \[0, 2\] while PHASE = 1"):
        g.check_state(bad)
    # the kitty joined the landlord's hand: it is a record now, the hands hold the deck
    ll = int(s[LANDLORD])
    r = int(np.flatnonzero(s[kitty_off(3):kitty_off(3) + 16])[0])
    bad = s.copy()
    bad[hand_off(ll) + r] -= 1
    with pytest.raises(ValueError, match=rf"cards of rank index {r} in hand of seat 0, "
                                         rf"hand of seat 1, hand of seat 2, played"):
        g.check_state(bad)


@pytest.mark.parametrize("name, opts, other", [
    ("doudizhu", {"preset": "douzero"}, {"preset": "seed"}),
    ("wakeng", {"min_straight": 4}, {}),
    ("niangniang", {"min_pair_chain": 3}, {}),
    ("doudizhu", {"reward": "win_loss"}, {}),
])
def test_state_of_another_option_set_is_rejected(name, opts, other):
    src = _env(name, **opts)
    src.reset(seed=4)
    dst = _env(name, **other)
    dst.reset(seed=4)
    snap = src.unwrapped.get_state()
    assert len(snap["state"]) == dst.unwrapped.game.state_size  # same length, another table
    before = dst.unwrapped.get_state()
    with pytest.raises(ValueError, match=r"another game or option set"):
        dst.unwrapped.set_state(snap)
    _unchanged(dst, before)
    want = next(f"{k}={v!r}" for k, v in opts.items())
    with pytest.raises(ValueError, match=re.escape(want)):
        dst.unwrapped.game.check_state(snap["state"])


@pytest.mark.parametrize("name", sorted(cardenvs.GAMES))
def test_every_reachable_state_is_valid(name):
    g = make_game(name)
    rng = np.random.default_rng(11)
    buf = np.empty(g.n_actions, np.int64)
    k = 0
    for _ in range(15):
        s = g.new_state()
        g.reset(s, int(rng.integers(2**62)))
        while True:
            assert g.check_state(s) is s  # contiguous: the same array back
            k += 1
            if g.done(s):
                break
            g.step(s, int(buf[rng.integers(g.legal(s, buf))]))
    assert k > 15 * 10


def test_check_state_types_and_memory():
    g = make_game("wakeng")
    s = g.new_state()
    g.reset(s, 1)
    with pytest.raises(TypeError, match="int64"):
        g.check_state(s.astype(np.float64))
    with pytest.raises(TypeError, match="numpy"):
        g.check_state(list(s))
    with pytest.raises(ValueError, match=f"has {g.state_size} entries, got {g.state_size - 1}"):
        g.check_state(s[:-1])
    wide = np.stack([s, s], axis=1)
    got = g.check_state(wide[:, 0])  # a strided view is read through a contiguous copy...
    assert got.flags.c_contiguous and np.array_equal(got, s)
    with pytest.raises(ValueError, match="strided"):  # ...but not for an in-place update
        g.check_state(wide[:, 0], inplace=True)
    ro = s.copy()
    ro.flags.writeable = False
    assert np.array_equal(g.check_state(ro), s)
    with pytest.raises(ValueError, match="read-only"):
        g.check_state(ro, inplace=True)


def test_raw_game_methods_reject_bad_buffers_instead_of_crashing():
    g = make_game("doudizhu")
    s = g.new_state()
    g.reset(s, 1)
    buf = np.empty(g.n_actions, np.int64)
    obs = np.empty(g.layout.size, np.float32)
    k = g.legal(s, buf)
    a = int(buf[0])
    wide = np.zeros((g.state_size, 2), np.int64)
    wide[:, 0] = s
    ro = s.copy()
    ro.flags.writeable = False
    for bad, exc, fragment in [(s.astype(np.float64), TypeError, "dtype int64"),
                               (s[:-5].copy(), ValueError, "entries"),
                               (wide[:, 0], ValueError, "strided"),
                               (s.reshape(1, -1), TypeError, "1-D")]:
        for call in (lambda: g.legal(bad, buf), lambda: g.step(bad, a),
                     lambda: g.encode(bad, 0, obs), lambda: g.reset(bad, 3),
                     lambda: g.is_legal(bad, a)):
            with pytest.raises(exc, match=fragment):
                call()
    assert np.array_equal(wide[:, 1], np.zeros(g.state_size))  # no write into the neighbour
    with pytest.raises(ValueError, match="read-only"):
        g.step(ro, a)
    with pytest.raises(ValueError, match="read-only"):
        g.reset(ro, 3)
    assert g.legal(ro, buf) == k  # reading a read-only state is fine
    g.encode(ro, 0, obs)
    with pytest.raises(ValueError, match="at least"):
        g.legal(s, buf[:3])
    with pytest.raises(TypeError, match="float32"):
        g.encode(s, 0, obs.astype(np.float64))
    with pytest.raises(ValueError, match="seat 3"):
        g.encode(s, 3, obs)
    with pytest.raises(TypeError, match="an action must be an int"):
        g.is_legal(s, 1.5)
    assert not g.is_legal(s, -1) and not g.is_legal(s, g.n_actions + 10**12)
    before = s.copy()
    illegal = next(x for x in range(g.n_actions) if not g.is_legal(s, x))
    with pytest.raises(ValueError, match="illegal action"):
        g.step(s, illegal)
    assert np.array_equal(s, before)
    with pytest.raises(ValueError, match=r"2\*\*63"):
        g.reset(s, -1)
    with pytest.raises(TypeError):
        g.reset(s, True)
