"""``Game.check_states``: the batched validation behind ``VectorGame.load_states``.

Every row must be judged as ``Game.check_state`` judges it alone: a valid batch loads exactly
as loading its rows one at a time does, and a batch with a corrupted row raises the per-row
error of that row (the same type and message, prefixed with the row and its slot), loading
nothing.  The corruptions are the kinds ``tests/test_state.py`` uses one state at a time."""

from __future__ import annotations

import numpy as np
import pytest

import cardenvs
from cardenvs.core.state import (
    CUR, LAST_SEAT, MAXLOG, NLOG, NPASS, P_DONE, PHASE, hand_off, log_off,
)
from cardenvs.vector import VectorGame

from helpers import random_decisions

GAMES = sorted(cardenvs.GAMES)


def _batch(game, seed: int, size: int = 40) -> np.ndarray:
    """``size`` states of random games: mid-game states of every phase and finished ones."""
    rng = np.random.default_rng(seed)
    mid, done = [], []
    buf = np.empty(game.n_actions, np.int64)
    for s, _, d in random_decisions(game, 6, seed):
        if d % 5 == 0:
            mid.append(s.copy())
        t = s.copy()
        if rng.random() < 0.1:  # finish this one at random: a finished state
            while not game.done(t):
                k = game.legal(t, buf)
                game.step(t, int(buf[rng.integers(k)]))
            done.append(t)
    assert done and len(mid) >= size
    rows = mid[:size - 4] + done[:4]
    return np.array([rows[i] for i in rng.permutation(len(rows))])


def _corruptions(game, s: np.ndarray):
    """``(what, index, value)`` corruptions of the valid, unfinished state ``s`` that
    ``check_state`` refuses: fields out of range, cards not conserved, a log entry naming
    no seat, another game's or a zero fingerprint."""
    n, S = game.n_players, game.state_size
    h0 = hand_off(0) + int(np.flatnonzero(s[hand_off(0):hand_off(0) + 16])[0])
    out = [("PHASE", PHASE, 99), ("CUR", CUR, n), ("CUR", CUR, -1),
           ("LAST_SEAT", LAST_SEAT, n), ("NPASS", NPASS, -5),
           ("card from nowhere", h0, int(s[h0]) + 1), ("card count", h0, -1),
           ("log entry", log_off(n), -3),
           ("fingerprint", S - 1, 12345), ("zero fingerprint", S - 1, 0)]
    k = int(s[NLOG])
    if k:  # the newest log entry made by a seat the game does not have
        i = log_off(n) + (k - 1) % MAXLOG
        out.append(("log seat", i, int(s[i]) // 8 * 8 + 7))
    return out


def _expected(game, row: np.ndarray, j: int, slot: int):
    """The error ``check_state`` raises for ``row``, prefixed as ``load_states`` does."""
    with pytest.raises((TypeError, ValueError)) as info:
        game.check_state(row)
    e = info.value
    return type(e), f"states[{j}] (for slot {slot}): {e}"


@pytest.mark.parametrize("name", GAMES)
def test_valid_batches_load_as_row_by_row(name):
    game = cardenvs.make_game(name)
    states = _batch(game, seed=3)
    m = len(states)
    got = game.check_states(states)
    assert got is states  # contiguous int64: the same array back
    strided = np.zeros((m, 2 * game.state_size), np.int64)
    strided[:, ::2] = states
    view = strided[:, ::2]
    copy = game.check_states(view)
    assert copy.flags.c_contiguous and np.array_equal(copy, states)
    # one batch vs one row at a time, into reversed slots of two batches
    slots = np.arange(m)[::-1].copy()
    a = VectorGame(game, m, observe=True, auto_reset=False)
    b = VectorGame(game, m, observe=True, auto_reset=False)
    a.reset(seed=1)
    b.reset(seed=1)
    a.load_states(states, slots)
    for j in range(m):
        b.load_states(states[j:j + 1], [int(slots[j])])
    assert np.array_equal(a.states, b.states)
    assert np.array_equal(a.states[slots], states)
    for attr in ("seat", "n_legal", "legal", "obs", "done"):
        assert np.array_equal(getattr(a, attr), getattr(b, attr)), attr
    assert (a.seat[slots[states[:, PHASE] == P_DONE]] == -1).all()  # finished: seat -1
    assert (a.rollout("heuristic", seed=5) == b.rollout("heuristic", seed=5)).all()


@pytest.mark.parametrize("name", GAMES)
def test_a_bad_row_raises_its_own_error(name):
    """A corrupted row at a random place of a batch raises exactly the error ``check_state``
    raises for it, naming the row and its slot; nothing is loaded."""
    game = cardenvs.make_game(name)
    rng = np.random.default_rng(7)
    states = _batch(game, seed=11)
    m = len(states)
    vg = VectorGame(game, m + 3, observe=False, auto_reset=False)
    vg.reset(seed=2)
    slots = rng.permutation(m + 3)[:m]
    before = vg.states.copy()
    live = [j for j in range(m) if states[j, PHASE] != P_DONE]
    seen = set()
    for j0 in live[:8]:
        for what, index, value in _corruptions(game, states[j0]):
            j = int(rng.integers(m))
            bad = states.copy()
            bad[j] = states[j0]
            bad[j, index] = value
            exc, msg = _expected(game, bad[j], j, int(slots[j]))
            with pytest.raises(exc) as info:
                vg.load_states(bad, slots)
            assert str(info.value) == msg, what
            assert np.array_equal(vg.states, before), what  # nothing loaded
            # a second bad row after it does not change which row is named
            if j + 1 < m:
                bad[j + 1, -1] = 0
                with pytest.raises(exc) as info:
                    vg.load_states(bad, slots)
                assert str(info.value) == msg, what
            seen.add(what)
    assert {"PHASE", "card from nowhere", "log entry", "fingerprint", "log seat"} <= seen


def test_first_bad_row_wins_between_fingerprint_and_field():
    """The batched checks compare fingerprints and scan fields separately; the row named is
    still the first bad one, whichever check finds it."""
    game = cardenvs.make_game("doudizhu")
    states = _batch(game, seed=5, size=12)
    live = int(np.flatnonzero(states[:, PHASE] != P_DONE)[0])
    for fp_row, field_row in [(2, 7), (7, 2), (4, 4)]:
        bad = states.copy()
        bad[field_row] = states[live]
        bad[field_row, CUR] = 50
        bad[fp_row, -1] = 99
        first = min(fp_row, field_row)
        with pytest.raises(ValueError) as info:
            game.check_states(bad)
        want = _expected(game, bad[first], first, 0)[1].replace(" (for slot 0)", "")
        assert str(info.value) == want
        # a row with both faults is named for the fingerprint, as check_state does
        assert ("fingerprint" in str(info.value)) == (first == fp_row)


def test_check_states_refuses_bad_arrays():
    game = cardenvs.make_game("wakeng")
    states = _batch(game, seed=1, size=6)
    with pytest.raises(TypeError, match="numpy int64 array"):
        game.check_states(states.tolist())
    with pytest.raises(TypeError, match="2-D int64"):
        game.check_states(states.astype(np.int32))
    with pytest.raises(TypeError, match="2-D int64"):
        game.check_states(states[0])
    with pytest.raises(ValueError, match=rf"^states\[0\]: a wakeng state has "
                                         rf"{game.state_size} entries, got {game.state_size - 1}"):
        game.check_states(np.ascontiguousarray(states[:, 1:]))
    empty = np.zeros((0, game.state_size), np.int64)
    assert game.check_states(empty).shape == (0, game.state_size)
    with pytest.raises(ValueError, match=r"^states\[3\] \(for slot 9\): .*CUR = 9"):
        bad = states.copy()
        bad[3, CUR] = 9
        game.check_states(bad, [0, 0, 0, 9, 0, 0])
