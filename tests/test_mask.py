"""cardenvs.core.mask: ActionMask.nonzero's compiled scan against numpy's, the legal-id mask
writer, and the AEC env's direct kernel calls (own state vector) against its checked path."""

from __future__ import annotations

import numpy as np
import pytest

import cardenvs.doudizhu_v0 as ddz
from cardenvs.core.mask import _CAP, ActionMask, new_mask, ones_writer


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 255, 256, 257, 600, 28241])
@pytest.mark.parametrize("density", [0.0, 0.002, 0.05, 0.5, 1.0])
def test_nonzero_matches_numpy(n, density):
    rng = np.random.default_rng(n)
    base = new_mask(n + 16)
    for offset in range(9):  # views that start off an 8-byte boundary
        v = base[offset:offset + n]
        assert isinstance(v, ActionMask) and v.shape == (n,)
        vals = rng.integers(-128, 128, n).astype(np.int8)  # any nonzero byte counts
        v[:] = np.where(rng.random(n) < density, vals, 0)
        want = np.flatnonzero(v.view(np.ndarray))
        got = np.flatnonzero(v)
        assert got.dtype == np.intp and np.array_equal(got, want)
        (got2,) = np.nonzero(v)
        assert np.array_equal(got2, want)


def test_nonzero_past_the_first_pass_capacity():
    m = new_mask(5000)
    m[::3] = 1  # 1,667 entries: more than the first pass keeps
    assert m.sum() > _CAP
    assert np.array_equal(np.flatnonzero(m), np.arange(0, 5000, 3))
    m[:] = 0
    m[[0, 4999]] = -1
    assert np.flatnonzero(m).tolist() == [0, 4999]


def test_nonzero_other_layouts_take_numpy():
    m = new_mask(1000)
    m[[3, 500, 998]] = 1
    m.flags.writeable = False  # read-only: the same scan
    assert np.flatnonzero(m).tolist() == [3, 500, 998]
    assert np.flatnonzero(m[::2]).tolist() == [250, 499]  # strided
    two = new_mask(20).reshape(4, 5)
    two[1, 2] = two[3, 4] = 1
    assert [a.tolist() for a in np.nonzero(two)] == [[1, 3], [2, 4]]
    wide = np.zeros(10, np.int16).view(ActionMask)  # another dtype: numpy's own method
    wide[7] = 256  # a nonzero int16 whose low byte is 0
    assert np.flatnonzero(wide).tolist() == [7]


def test_ones_writer():
    w = ones_writer()
    m = np.zeros(10, np.int8)
    ids = np.array([4, 1, 9, 12, 2], np.int64)
    assert w(m, ids, 3) == -1 and np.flatnonzero(m).tolist() == [1, 4, 9]
    m[:] = 0
    assert w(m, ids, 5) == 3  # 12 is outside the mask: it and the ids after it unwritten
    assert np.flatnonzero(m).tolist() == [1, 4, 9]


def _play(env, seed, n=400):
    rng = np.random.default_rng(seed)
    out = []
    env.reset(seed=seed)
    for _ in range(n):
        if not env.agents:
            break
        obs, r, term, trunc, info = env.last()
        out.append((obs["observation"].tobytes(), obs["action_mask"].tobytes(), r,
                    repr(sorted(info.items()))))
        if term or trunc:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rng.integers(len(legal))]))
    return out, list(env.unwrapped.history)


def test_foreign_state_vector_takes_the_checked_path():
    """A state vector assigned from outside the env is used through the game's checked
    methods: the same game as on the env's own vector, and a wrong array a clear error."""
    a, b = ddz.env(), ddz.env()
    want = _play(a, 5)
    assert a.unwrapped._fast is not None  # the direct kernel calls were on
    b.reset(seed=5)
    b.unwrapped.state_vec = b.unwrapped.state_vec.copy()  # not the env's own array
    assert b.unwrapped.state_vec is not b.unwrapped._own_state
    assert _play(b, 5) == want
    b.reset(seed=6)
    b.unwrapped.state_vec = b.unwrapped.state_vec.astype(np.int32)
    with pytest.raises(TypeError, match="int64"):
        b.observe(b.agent_selection)
    with pytest.raises(TypeError, match="int64"):
        b.step(int(b.unwrapped.legal_actions()[0]))
