"""The numba random-rollout loop (cardenvs.core.rollout) against a plain-Python replay."""

from __future__ import annotations

import numpy as np
import pytest

import cardenvs
from cardenvs.core.rollout import random_rollouts
from cardenvs.core.state import LANDLORD, PHASE, P_DONE, REW0

_M64 = (1 << 64) - 1


class _SplitMix:
    """Pure-Python splitmix64, written from the published algorithm (Steele et al. 2014)."""

    def __init__(self, seed: int):
        self.x = seed & _M64

    def next63(self) -> int:
        self.x = (self.x + 0x9E3779B97F4A7C15) & _M64
        z = self.x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
        z ^= z >> 31
        return z >> 1

    def below(self, n: int) -> int:
        return self.next63() % n


def _wrap64(v: int) -> int:
    v &= _M64
    return v - (1 << 64) if v >= 1 << 63 else v


def _python_rollouts(game, n_games: int, seed: int):
    """The same games played from Python one kernel call at a time."""
    rng = _SplitMix(seed)
    s = game.new_state()
    buf = np.zeros(game.n_actions + 1, np.int64)
    check, decisions, totals, per_game = 0, 0, [0] * game.n_players, []
    for _ in range(n_games):
        game.reset(s, rng.next63())
        while s[PHASE] != P_DONE:
            k = game.legal(s, buf)
            assert k > 0
            a = int(buf[rng.below(k)])
            game.step(s, a)
            check = _wrap64(check * 1000003 + a)
            decisions += 1
        r = [int(x) for x in s[REW0:REW0 + game.n_players]]
        per_game.append((int(s[LANDLORD]), r))
        totals = [t + x for t, x in zip(totals, r)]
    return check, decisions, totals, per_game


@pytest.fixture(scope="module")
def ddz():
    return cardenvs.make_game("doudizhu")


def test_matches_python_replay_and_is_deterministic(ddz):
    a = random_rollouts(ddz, 40, seed=12345)
    b = random_rollouts(ddz, 40, seed=12345)
    check, decisions, totals, _ = _python_rollouts(ddz, 40, 12345)
    assert a["games"] == 40
    assert a["checksum"] == b["checksum"] == check
    assert a["decisions"] == b["decisions"] == decisions
    assert a["reward_totals"] == b["reward_totals"] == totals
    c = random_rollouts(ddz, 40, seed=12346)
    assert c["checksum"] != a["checksum"]


def test_encode_does_not_change_the_games(ddz):
    a = random_rollouts(ddz, 30, seed=7)
    b = random_rollouts(ddz, 30, seed=7, encode=True)
    assert b["encode"] is True
    assert (a["checksum"], a["decisions"], a["reward_totals"]) == \
        (b["checksum"], b["decisions"], b["reward_totals"])


def test_doudizhu_deals_are_zero_sum(ddz):
    r = random_rollouts(ddz, 500, seed=3)
    assert r["games"] == 500
    assert r["max_abs_reward_sum"] == 0
    assert sum(r["reward_totals"]) == 0
    # a played deal takes at least: one bid, then a 20-card landlord hand needs >= 1 play
    assert r["decisions_per_game"] > 1
    assert 0 <= r["void_games"] < 500
    # rules page: landlord wins/loses 2x the stake, each farmer the reverse of 1x
    _, _, _, per_game = _python_rollouts(ddz, 60, 3)
    for landlord, rew in per_game:
        assert sum(rew) == 0
        if landlord >= 0 and any(rew):
            farmers = [rew[i] for i in range(3) if i != landlord]
            assert farmers[0] == farmers[1] != 0
            assert rew[landlord] == -2 * farmers[0]


def test_zero_games_and_bad_arguments(ddz):
    r = random_rollouts(ddz, 0, seed=1)
    assert r["games"] == 0 and r["decisions"] == 0
    with pytest.raises(ValueError, match="n_games"):
        random_rollouts(ddz, -1, seed=1)
    with pytest.raises(TypeError, match="n_games"):
        random_rollouts(ddz, 2.5, seed=1)
    with pytest.raises(TypeError, match="seed"):
        random_rollouts(ddz, 1, seed="x")
    with pytest.raises(TypeError, match="Game"):
        random_rollouts(object(), 1, seed=1)


@pytest.mark.parametrize("name", sorted(cardenvs.GAMES))
def test_every_game_rolls_out(name):
    game = cardenvs.make_game(name)
    a = random_rollouts(game, 20, seed=99)
    b = random_rollouts(game, 20, seed=99)
    assert a["games"] == 20 and a["decisions"] >= 20
    assert (a["checksum"], a["reward_totals"]) == (b["checksum"], b["reward_totals"])
    if game.info.zero_sum:
        assert a["max_abs_reward_sum"] == 0
