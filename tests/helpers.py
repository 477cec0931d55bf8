"""Helpers shared by several test modules (the tests folder is on ``sys.path`` under pytest)."""

from __future__ import annotations

import numpy as np


def random_decisions(game, n_games: int, seed: int):
    """Walk ``n_games`` random games: yield ``(state, legal ids, d)`` at decision ``d`` of each
    game (``state`` is the live vector: copy what you keep); a uniform legal action follows."""
    rng = np.random.default_rng(seed)
    s = game.new_state()
    buf = np.empty(game.n_actions, np.int64)
    for _ in range(n_games):
        game.reset(s, int(rng.integers(2**62)))
        d = 0
        while not game.done(s):
            k = game.legal(s, buf)
            yield s, buf[:k], d
            game.step(s, int(buf[rng.integers(k)]))
            d += 1


def random_positions(game, n_games: int, seed: int):
    """(observation, legal ids) of every decision with 2+ legal actions in random games."""
    out = []
    for s, legal, _ in random_decisions(game, n_games, seed):
        if len(legal) > 1:
            obs = np.zeros(game.layout.size, np.float32)
            game.encode(s, game.current(s), obs)
            out.append((obs, legal.copy()))
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
