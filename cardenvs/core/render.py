"""Rendering of a climbing-game table, kept apart from the rules.

Every game describes its table once, as a :class:`TableView` record (``Game.table_view``):
the title and public facts, each seat's role, hand and marks, the piles, the play to beat,
the recent actions and the result.  Both renders read that record: :func:`text_of` writes
the ``render_mode="ansi"`` text and :func:`cardenvs.core.image.draw_table` draws the
``render_mode="rgb_array"`` image, so the two cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from .state import (
    BID, CUR, LANDLORD, LAST_ROW, LAST_SEAT, MAXLOG, NDOUBLE, NLOG, P_AUCTION, P_DONE, PHASE,
    REW0, WINNER, hand_off, kitty_off, log_entry,
)

#: the render modes of every cardenvs environment (``metadata["render_modes"]``)
RENDER_MODES = ["ansi", "human", "rgb_array"]
#: frames a second of a recorded video (``metadata["render_fps"]``)
RENDER_FPS = 4


@dataclass
class SeatView:
    """One seat at the table.

    Attributes:
        seat: the seat number (``player_{seat}``).
        role: the role column (``"landlord"``, ``"farmer"``; a game's status marks; ``""``).
        hand: the hand as a card string (lowest rank first).
        tag: text written after the hand (``"place 2"``); ``""`` for none.
        to_move: True for the seat to move (never once the deal is over).
        last: the seat's latest action in the recent log (``"777+3"``, ``"pass"``), or ``""``.
        reward: what the last step paid the seat, once the deal is over; None before.
    """

    seat: int
    role: str
    hand: str
    tag: str = ""
    to_move: bool = False
    last: str = ""
    reward: Optional[int] = None


@dataclass
class TableLine:
    """One line of table facts below (or, in ``TableView.head``, above) the seats.

    Attributes:
        label: what the line is (``"kitty"``, ``"to beat"``, ``"recent"``, ``"result"``).
        text: the text after the label.
        cards: a card string the image draws as cards (a pile, the play to beat); None for a
            line of text only.
        note: the image's text beside those cards (``"by player_1"``).
    """

    label: str
    text: str
    cards: Optional[str] = None
    note: str = ""


@dataclass
class TableView:
    """The whole table as both renders show it (see the module docstring).

    Attributes:
        title: the game's title.
        facts: public facts of the header, each ``"name: value"`` (``"phase: play"``).
        seats: one :class:`SeatView` a seat, in seat order.
        lines: lines below the seats, in order (piles, play to beat, recent, result).
        head: lines between the header and the seats (match totals).
        role_width: the width of the text's role column.
        done: True once the deal is over.
    """

    title: str
    facts: list
    seats: list
    lines: list
    head: list = field(default_factory=list)
    role_width: int = 8
    done: bool = False


def text_of(view: TableView) -> str:
    """The ``render_mode="ansi"`` text of a table: the header, the head lines, a line a seat
    (``->`` marking the seat to move), then the other lines; ends with a newline."""
    out = [" | ".join([view.title, *view.facts])]
    out += [f"   {ln.label}: {ln.text}" for ln in view.head]
    for s in view.seats:
        mark = "->" if s.to_move else "  "
        row = f"{mark} player_{s.seat} {s.role:>{view.role_width}} [{len(s.hand):2d}] {s.hand}"
        out.append(row + (f" {s.tag}" if s.tag else ""))
    out += [f"   {ln.label}: {ln.text}" for ln in view.lines]
    return "\n".join(out) + "\n"


def log_actions(game, state: np.ndarray, k: int) -> list:
    """The last ``k`` actions of the log (at most ``MAXLOG``), oldest first, as ``(seat,
    action string)`` pairs; ``[]`` before the first action."""
    n = game.n_players
    m = int(state[NLOG])
    out = []
    for i in range(max(0, m - min(k, MAXLOG)), m):
        e = int(log_entry(state, n, i))
        out.append((e % 8, game.action_to_string(e // 8)))
    return out


def recent_line(actions: list) -> list:
    """``[TableLine("recent", "p0:bid 1, p1:pass, ...")]`` of ``(seat, text)`` pairs; ``[]``
    for none."""
    if not actions:
        return []
    return [TableLine("recent", ", ".join(f"p{q}:{t}" for q, t in actions))]


def mark_last(view: TableView, actions: list) -> TableView:
    """Set each seat's ``last``: its latest action among ``actions`` (``(seat, text)`` pairs,
    oldest first); returns ``view``."""
    for q, t in actions:
        if 0 <= q < len(view.seats):
            view.seats[q].last = t
    return view


def rewards_text(state: np.ndarray, n: int) -> str:
    """The rewards the last step paid, one signed number a seat: ``"+2 -1 -1"``."""
    return " ".join(f"{int(state[REW0 + i]):+d}" for i in range(n))


def seat_rewards(view: TableView, state: np.ndarray) -> None:
    """Once the deal is over, give each seat of ``view`` the reward the last step paid it."""
    if view.done:
        for s in view.seats:
            s.reward = int(state[REW0 + s.seat])


def climbing_view(game, state: np.ndarray, role_name: str = "landlord",
                  recent: int = 6) -> TableView:
    """The table of a one-landlord climbing game: phase, bid and doublings; each seat's hand
    and role (``role_name`` for the landlord, ``"farmer"`` for the others once there is one);
    the kitty, the play to beat, the last ``recent`` actions and the result."""
    n = game.n_players
    deck = game.deck
    phase = int(state[PHASE])
    names = {P_AUCTION: "auction", 1: "play", P_DONE: "done"}
    ll = int(state[LANDLORD])
    done = phase == P_DONE
    seats = []
    for i in range(n):
        role = role_name if i == ll else ("farmer" if ll >= 0 else "")
        seats.append(SeatView(i, role, deck.format(state[hand_off(i):hand_off(i) + 16]),
                              to_move=not done and i == int(state[CUR])))
    kitty = deck.format(state[kitty_off(n):kitty_off(n) + 16])
    lines = [TableLine("kitty", kitty, cards=kitty)]
    prev = int(state[LAST_ROW])
    if prev >= 0:
        play, by = game.table.row_string(prev), int(state[LAST_SEAT])
        lines.append(TableLine("to beat", f"{play} by player_{by}", cards=play,
                               note=f"by player_{by}"))
    acts = log_actions(game, state, max(recent, 2 * n))
    lines += recent_line(acts[-recent:] if recent > 0 else [])
    if done:
        w = int(state[WINNER])
        lines.append(TableLine("result", f"{'void deal' if w < 0 else f'player_{w} went out'}; "
                                         f"rewards {rewards_text(state, n)}"))
    view = TableView(game.info.title, [f"phase: {names.get(phase, phase)}",
                                       f"bid: {int(state[BID])}",
                                       f"doublings: {int(state[NDOUBLE])}"],
                     seats, lines, done=done)
    seat_rewards(view, state)
    return mark_last(view, acts)


def render_climbing(game, state: np.ndarray, role_name: str = "landlord", recent: int = 6) -> str:
    """The text of :func:`climbing_view`."""
    return text_of(climbing_view(game, state, role_name, recent))


def render_for(env):
    """``render()`` of an env holding ``game``, ``state_vec``, ``render_mode`` and ``_started``.

    Shared by the AEC env and :class:`cardenvs.wrappers.SeatEnv`: the table as text for
    ``"ansi"``, printed for ``"human"``, drawn as an ``(H, W, 3)`` ``uint8`` image for
    ``"rgb_array"`` (:mod:`cardenvs.core.image`; one size for every position of a game), a
    warning and ``None`` without a render mode.
    """
    if env.render_mode is None:
        import gymnasium

        gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi' "
                              "or 'rgb_array'")
        return None
    if env.render_mode == "rgb_array":
        from .image import draw_message, draw_table

        if not env._started:
            return draw_message(env.game.n_players, "no deal yet: call reset()")
        return draw_table(env.game.table_view(env.state_vec), env.game.n_players)
    if not env._started:
        text = "(no deal yet: call reset())\n"
    else:
        text = env.game.render(env.state_vec)
    if env.render_mode == "ansi":
        return text
    print(text, end="")
    return None
