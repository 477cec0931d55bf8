"""A joker stand-in choice in progress is the mover's secret.

Da Niangniang (``joker`` phase) and Lanxi Wulong (``wilds`` phase) split a play holding jokers
into the play itself and then the picks of what the jokers stand for.  At the table the play
and its stand-ins go down together, so until the last pick the other seats must observe the
position as it was before the play was chosen: the play phase, no pending play, no picks.
Otherwise entering the phase tells every seat that the mover holds a joker it is about to
play (and which play it is making).

Each test walks random games; at every play-phase decision it tries each legal play that
enters the choice phase and compares, for every other seat, the observation before the play
with the observation after it and after each further pick (they must be equal), and checks
that the mover's own observation does show the pending play (so the comparison can fail).
"""

from __future__ import annotations

import numpy as np
import pytest

from cardenvs.core.state import CUR, PHASE, P_PLAY
from cardenvs.games.niangniang import P_JOKER, Niangniang
from cardenvs.games.wulong import P_WILD, Wulong


def _obs(game, s, seat):
    out = np.zeros(game.layout.size, np.float32)
    game.encode(s, seat, out)
    return out


def _check_choices(game, choice_phase, n_games, seed, want):
    """Walk ``n_games`` random games; return how many choice phases were checked."""
    rng = np.random.default_rng(seed)
    s = game.new_state()
    buf = np.empty(game.n_actions, np.int64)
    pick = np.empty(game.n_actions, np.int64)
    play_end = game.blocks["play"][1]
    checked = 0
    for _ in range(n_games):
        game.reset(s, int(rng.integers(2**62)))
        while not game.done(s):
            k = game.legal(s, buf)
            legal = buf[:k].copy()
            if int(s[PHASE]) == P_PLAY:
                mover = int(s[CUR])
                others = [q for q in range(game.n_players) if q != mover]
                before = {q: _obs(game, s, q) for q in others}
                mover_before = _obs(game, s, mover)
                for a in legal[legal < play_end]:
                    t = s.copy()
                    game.step(t, int(a))
                    if int(t[PHASE]) != choice_phase:
                        continue
                    assert not np.array_equal(_obs(game, t, mover), mover_before), \
                        "the mover's observation should show its pending play"
                    while int(t[PHASE]) == choice_phase:
                        for q in others:
                            np.testing.assert_array_equal(
                                _obs(game, t, q), before[q],
                                err_msg=f"seat {q} sees seat {mover}'s joker choice in progress")
                        n = game.legal(t, pick)
                        game.step(t, int(pick[rng.integers(n)]))
                    checked += 1
                    if checked >= want:
                        return checked
            game.step(s, int(legal[rng.integers(k)]))
    return checked


@pytest.mark.parametrize("make, phase", [(Niangniang, P_JOKER), (Wulong, P_WILD)],
                         ids=["niangniang", "wulong"])
def test_choice_in_progress_hidden_from_other_seats(make, phase):
    game = make()
    checked = _check_choices(game, phase, n_games=60, seed=19, want=25)
    assert checked >= 5, f"only {checked} choice phases reached: the test checks too little"
