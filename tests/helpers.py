"""Helpers shared by several test modules (the tests folder is on ``sys.path`` under pytest)."""

from __future__ import annotations

import numpy as np


def random_positions(game, n_games: int, seed: int):
    """(observation, legal ids) of every decision with 2+ legal actions in random games."""
    rng = np.random.default_rng(seed)
    s = game.new_state()
    buf = np.empty(game.n_actions, np.int64)
    out = []
    for _ in range(n_games):
        game.reset(s, int(rng.integers(2**62)))
        while not game.done(s):
            k = game.legal(s, buf)
            if k > 1:
                obs = np.zeros(game.layout.size, np.float32)
                game.encode(s, game.current(s), obs)
                out.append((obs, buf[:k].copy()))
            game.step(s, int(buf[rng.integers(k)]))
    return out


def stop_with_sigterm(proc, out) -> dict:
    """SIGTERM a trainer subprocess (``train.dmc`` / ``train.improve`` writing to ``out``):
    it must exit with 128 + SIGTERM, say so without a traceback, and leave a checkpoint
    holding at least one update, which is returned."""
    import signal

    import torch

    proc.send_signal(signal.SIGTERM)
    rc = proc.wait(timeout=60)
    err = proc.stderr.read()
    assert rc == 128 + signal.SIGTERM, err[-2000:]
    assert "stopped by SIGTERM" in err and "Traceback" not in err
    ck = torch.load(out / "checkpoint.pt", map_location="cpu", weights_only=False)
    assert ck["counters"]["updates"] >= 1
    return ck
