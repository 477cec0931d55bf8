"""Core state mechanics: the action log is a ring buffer and never overruns the state."""

from __future__ import annotations

import numpy as np

from cardenvs import doudizhu4_v0
from cardenvs.core.state import FIRST, LANDLORD, MAXLOG, NLOG, log_entry


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
