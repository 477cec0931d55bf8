"""Text rendering of a climbing-game table (``render_mode="ansi"``); kept apart from the rules."""

from __future__ import annotations

import numpy as np

from .state import (
    BID, CUR, LANDLORD, LAST_ROW, LAST_SEAT, MAXLOG, NDOUBLE, NLOG, P_AUCTION, P_DONE, PHASE,
    REW0, WINNER, hand_off, kitty_off, log_entry,
)


def render_climbing(game, state: np.ndarray, role_name: str = "landlord", recent: int = 6) -> str:
    """The table as text: phase, each seat's hand and role, the play to beat, recent actions."""
    n = game.n_players
    deck = game.deck
    lines = []
    phase = int(state[PHASE])
    names = {P_AUCTION: "auction", 1: "play", P_DONE: "done"}
    ll = int(state[LANDLORD])
    lines.append(
        f"{game.info.title} | phase: {names.get(phase, phase)} | bid: {int(state[BID])} | "
        f"doublings: {int(state[NDOUBLE])}"
    )
    for i in range(n):
        role = role_name if i == ll else ("farmer" if ll >= 0 else "")
        mark = "->" if phase != P_DONE and i == int(state[CUR]) else "  "
        hand = deck.format(state[hand_off(i):hand_off(i) + 16])
        lines.append(f"{mark} player_{i} {role:>8} [{len(hand):2d}] {hand}")
    lines.append(f"   kitty: {deck.format(state[kitty_off(n):kitty_off(n) + 16])}")
    prev = int(state[LAST_ROW])
    if prev >= 0:
        lines.append(f"   to beat: {game.table.row_string(prev)} by player_{int(state[LAST_SEAT])}")
    lines += recent_lines(game, state, recent)
    if phase == P_DONE:
        w = int(state[WINNER])
        lines.append(f"   result: {'void deal' if w < 0 else f'player_{w} went out'}; "
                     f"rewards {rewards_text(state, n)}")
    return "\n".join(lines) + "\n"


def recent_lines(game, state: np.ndarray, recent: int = 6) -> list:
    """``["   recent: p0:bid 1, p1:pass, ..."]``: the last ``recent`` actions of the log (at most
    ``MAXLOG``), seat and action string; ``[]`` before the first action."""
    n = game.n_players
    k = int(state[NLOG])
    hist = []
    for i in range(max(0, k - min(recent, MAXLOG)), k):
        e = int(log_entry(state, n, i))
        hist.append(f"p{e % 8}:{game.action_to_string(e // 8)}")
    return ["   recent: " + ", ".join(hist)] if hist else []


def rewards_text(state: np.ndarray, n: int) -> str:
    """The rewards the last step paid, one signed number a seat: ``"+2 -1 -1"``."""
    return " ".join(f"{int(state[REW0 + i]):+d}" for i in range(n))


def render_for(env):
    """``render()`` of an env holding ``game``, ``state_vec``, ``render_mode`` and ``_started``.

    Shared by the AEC env and :class:`cardenvs.wrappers.SeatEnv`: the table as text for
    ``"ansi"``, printed for ``"human"``, a warning and ``None`` without a render mode.
    """
    if env.render_mode is None:
        import gymnasium

        gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi'")
        return None
    if not env._started:
        text = "(no deal yet: call reset())\n"
    else:
        text = env.game.render(env.state_vec)
    if env.render_mode == "ansi":
        return text
    print(text, end="")
    return None
