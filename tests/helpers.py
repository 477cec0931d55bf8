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


def sigterm_after_first_log(proc, out, timeout: float = 240) -> dict:
    """Wait until the trainer subprocess ``proc`` has logged an iteration (``out/log.csv``),
    then :func:`stop_with_sigterm` it; the checkpoint."""
    import time

    t0 = time.monotonic()
    while not (out / "log.csv").exists():
        assert proc.poll() is None, proc.stderr.read()[-2000:]
        assert time.monotonic() - t0 < timeout, "no iteration logged"
        time.sleep(0.2)
    return stop_with_sigterm(proc, out)


def stop_with_sigterm(proc, out) -> dict:
    """SIGTERM a trainer subprocess (``train.dmc`` / ``train.finetune`` writing to ``out``):
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


def assert_bad_deal_kept_out(env, options: dict, exc: type, fragment: str, seed: int) -> None:
    """``env.reset(options=options)`` after ``env.reset(seed=seed)`` raises ``exc`` with a
    message matching ``fragment`` and leaves the game dealt before untouched (rules README,
    convention 8: an impossible deal is refused, the current game stays)."""
    import pytest

    env.reset(seed=seed)
    before = env.unwrapped.state_vec.copy()
    with pytest.raises(exc, match=fragment):
        env.reset(options=options)
    np.testing.assert_array_equal(env.unwrapped.state_vec, before)


def move(env, text: str) -> None:
    """Step the agent to move with the action written ``text`` (it must be legal)."""
    a = env.unwrapped.string_to_action(text)
    legal = env.unwrapped.legal_actions()
    assert a in legal, (text, [env.unwrapped.action_to_string(x) for x in legal])
    env.step(a)


def play_script(env, script) -> dict:
    """:func:`move` through the action strings of ``script``; each agent's rewards summed."""
    paid = {a: 0.0 for a in env.possible_agents}
    for text in script:
        move(env, text)
        for a, r in env.rewards.items():
            paid[a] += r
    return paid


def play_view(game, hand, unseen, sizes, beat_seat: int, prev: int, partners, enemies, legal):
    """A play-phase :class:`agents.rules.PlayView` of ``game`` (``hand`` and ``unseen`` rank
    counts, hand sizes and the relative seats, ``prev`` the table row to beat played by
    ``beat_seat``, -1 on a free lead) and its legal ids: ``legal`` plus the pass when
    following.  Returns ``(view, legal)``."""
    from cardenvs.agents.rules import PlayView

    v = PlayView(hand, unseen, sizes, beat_seat, -1 if prev < 0 else int(game.tab.family[prev]),
                 np.zeros(16, np.int64) if prev < 0 else game.tab.counts[prev].copy(), partners,
                 enemies)
    return v, (np.append(legal, game.pass_id) if prev >= 0 else legal)


def chosen_play(agent, g, view, legal) -> str:
    """The play of ``g`` (table row string, or ``"pass"``) that ``agent`` (a rules agent)
    chooses in ``view``; it must be one of ``legal``."""
    a = agent.play(view, legal)
    assert a in legal
    return "pass" if a == g.pass_id else g.table.row_string(a)


def random_game(env, rng: np.random.Generator, max_steps: int | None = None) -> None:
    """Play the AEC ``env`` (already reset) to the end, or ``max_steps`` agent turns, with
    uniformly random legal actions drawn from ``rng``; agents that are done step ``None``."""
    for _ in (env.agent_iter() if max_steps is None else env.agent_iter(max_steps)):
        _, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        ids = env.unwrapped.legal_actions()
        env.step(int(ids[rng.integers(len(ids))]))


def alternate_deals(env, agent, other, deals: int, seed: int = 0, after_deal=None) -> int:
    """Play ``deals`` deals of the AEC ``env`` (seeds ``seed``, ``seed + 1``, ...) with
    ``agent`` at the seats ``q`` where ``q + deal`` is even and ``other`` at the rest; assert
    every choice is one of the legal ids and set in the action mask.  ``after_deal(env, d)``
    is called at the end of deal ``d``.  Returns how many choices ``agent`` made."""
    n = len(env.possible_agents)
    made = 0
    for d in range(deals):
        env.reset(seed=seed + d)
        for name in env.agent_iter():
            obs, _, term, trunc, info = env.last()
            if term or trunc:
                env.step(None)
                continue
            seat = int(name.split("_")[1])
            who = agent if (seat + d) % 2 == 0 else other
            legal = env.unwrapped.legal_actions()
            a = who.act(obs, legal)
            assert a in legal, (name, a, legal[:10])
            assert obs["action_mask"][a] == 1
            made += who is agent
            env.step(a)
        assert n == len(env.possible_agents)
        if after_deal is not None:
            after_deal(env, d)
    return made
