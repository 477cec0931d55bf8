"""Play a deal in the terminal against the baseline agents: ``cardenvs play GAME``.

You hold one seat (``--seat``, default 0); the other seats are played by agents from the
registry in ``agents`` (``--agents rules`` by default; a list is reused in turn).  At your turn
you see your hand, what you may know of the table (hand sizes, the play to beat, a public
kitty, your role) and the numbered legal moves.  Type:

* cards in the rules notation (``33344``, ``TJQKA``, ``BR``), or ``body+kickers``
  (``333444+59``) to fix a reading; ``pass``; ``bid 2``; ``bury 7`` / ``bury D7`` ... —
  the same strings as ``env.action_to_string``;
* ``#k`` for the k-th listed move; ``?`` for help and every legal move; ``q`` to quit.

Cards that can be played several ways (``333444555666``) list the readings to pick from.
Other players' card plays, passes and bids are shown as they happen; private picks (burying)
are not.
"""

from __future__ import annotations

import sys
from typing import Callable, Optional

import numpy as np

#: action blocks whose actions every player sees
PUBLIC_BLOCKS = {"play", "pass", "bid", "open", "declare", "double"}
SHOW_MOVES = 40

HELP = ("Type cards (e.g. 33344, TJQKA, 333444+59), 'pass', 'bid 2', 'bury 7', ... as listed; "
        "'#k' picks move k; '?' lists every legal move; 'q' quits.")


class Quit(Exception):
    """The player asked to stop."""


def _card_field(game, obs: np.ndarray, name: str) -> Optional[np.ndarray]:
    off = game.layout.offsets.get(name)
    if off is None:
        return None
    R = game.deck.n_ranks
    planes = obs[off[0]:off[1]]
    D = len(planes) // R
    counts = np.zeros(16, np.int64)
    counts[:R] = (planes.reshape(R, D) > 0.5).sum(1)
    return counts


def describe_turn(env, seat: int, legal: np.ndarray, info: dict) -> str:
    """What the player at ``seat`` may see at his turn, and his numbered legal moves."""
    from .core.state import LAST_ROW, LAST_SEAT, P_PLAY, PHASE, hand_off

    g = env.unwrapped.game
    s = env.unwrapped.state_vec
    obs = env.observe(env.possible_agents[seat])["observation"]
    lines = [f"--- your turn: player_{seat}" + _role_text(info, seat) +
             (f", phase {info['phase']}" if "phase" in info else "") + " ---"]
    lines.append(f"hand: {g.deck.format(s[hand_off(seat):hand_off(seat) + 16])}")
    kitty = _card_field(g, obs, "kitty")
    if kitty is not None and kitty.any():
        lines.append(f"kitty: {g.deck.format(kitty)}")
    sizes = ", ".join(f"player_{i} {int(s[hand_off(i):hand_off(i) + 16].sum())}"
                      for i in range(g.n_players))
    lines.append(f"cards in hand: {sizes}")
    if int(s[PHASE]) == P_PLAY:
        prev = int(s[LAST_ROW])
        if prev >= 0:
            lines.append(f"to beat: {g.table.row_string(prev)} ({g.table.reading(prev)}) by "
                         f"player_{int(s[LAST_SEAT])}")
        else:
            lines.append("you lead")
    lines.append(format_moves(g, legal, SHOW_MOVES))
    return "\n".join(lines)


def _role_text(info: dict, seat: int) -> str:
    for key in ("landlord", "digger", "niangniang"):
        if key in info and int(info[key]) >= 0:
            return f" ({key})" if int(info[key]) == seat else f" ({key}: player_{int(info[key])})"
    return ""


def format_moves(game, legal: np.ndarray, limit: Optional[int] = None) -> str:
    """``[1] pass  [2] 44 ...`` (the first ``limit`` moves)."""
    shown = legal if limit is None else legal[:limit]
    text = "  ".join(f"[{i + 1}] {game.action_to_string(int(a))}" for i, a in enumerate(shown))
    if limit is not None and len(legal) > limit:
        text += f"  ... {len(legal) - limit} more ('?' lists all)"
    return "moves: " + text


def parse_move(game, text: str, legal: np.ndarray) -> int:
    """The legal action the player typed; ``ValueError`` with a helpful message otherwise."""
    t = text.strip()
    if not t:
        raise ValueError("type a move (or '?' for help)")
    if t.startswith("#"):
        try:
            k = int(t[1:])
        except ValueError:
            raise ValueError(f"{t!r}: write '#' and a move number, e.g. #3") from None
        if not 1 <= k <= len(legal):
            raise ValueError(f"{t!r}: move numbers run from 1 to {len(legal)}")
        return int(legal[k - 1])
    low = t.lower()
    T = game.pass_id
    words = ("pass", "bid", "bury", "open", "not open", "declare", "double")
    if not any(low.startswith(w) for w in words):
        if not (legal < T).any():
            raise ValueError(f"{text.strip()!r}: no card play now; choose one of the listed moves")
        t = t.upper().replace(" ", "")
        if "+" not in t:
            counts = game.table.play_deck.parse(t, what="move")
            rows = [int(a) for a in legal if a < T
                    and tuple(game.tab.counts[a]) == tuple(int(c) for c in counts)]
            if len(rows) == 1:
                return rows[0]
            if len(rows) > 1:
                opts = ", ".join(f"#{list(legal).index(r) + 1} {game.table.reading(r)}"
                                 for r in rows)
                raise ValueError(f"{t} can be played several ways: {opts}; pick one with #k "
                                 f"or write body+kickers")
            raise ValueError(f"you cannot play {game.deck.format(counts)} now" +
                             (" (it does not beat the play on the table or is not a combination)"
                              if T in legal else " (not a combination you hold)"))
    a = game.string_to_action(t)
    if a not in legal:
        raise ValueError(f"{game.action_to_string(a)!r} is not legal now")
    return int(a)


def _public(game, action: int) -> str:
    block = game.block_of(action)
    if block in PUBLIC_BLOCKS:
        return game.action_to_string(action)
    return f"({block} pick)"


def play(game: str, agents="rules", seat: int = 0, seed: Optional[int] = None,
         options: Optional[dict] = None, input_fn: Callable[[str], str] = input,
         out=None) -> Optional[np.ndarray]:
    """Play one deal of ``game`` at ``seat`` against agents; returns the rewards per seat
    (``None`` when the player quits).  ``input_fn`` / ``out`` make it scriptable."""
    import cardenvs

    from .arena import env_for_agents, import_agents, parse_agents

    out = sys.stdout if out is None else out
    if game not in cardenvs.GAMES:
        raise ValueError(f"unknown game {game!r}; choose from: {', '.join(cardenvs.GAMES)}")
    names = parse_agents(agents) if isinstance(agents, (list, tuple)) or "," in agents else [agents]
    mod = import_agents()
    env, _ = env_for_agents(game, names, options)
    g = env.unwrapped.game
    for nm in set(names):
        reason = mod.agent_class(nm).unsupported(g)
        if reason is not None:
            raise ValueError(f"agent {nm!r} cannot play {game}: {reason}")
    n = g.n_players
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < n:
        raise ValueError(f"seat must be 0..{n - 1}, got {seat!r}")
    if seed is None:
        seed = int(np.random.default_rng().integers(0, 2**31))
    bots = {}
    others = [i for i in range(n) if i != seat]
    for j, i in enumerate(others):
        nm = names[j % len(names)]
        bots[i] = (nm, mod.make_agent(nm, g, seed=seed + 1 + i))
    print(f"{g.info.title}, seed {seed}: you are player_{seat}; "
          + ", ".join(f"player_{i} = {nm}" for i, (nm, _) in bots.items()), file=out)
    print(HELP, file=out)
    env.reset(seed=seed)
    index = {a: i for i, a in enumerate(env.possible_agents)}
    total = np.zeros(n)
    for agent in env.agent_iter():
        obs, r, term, trunc, info = env.last()
        i = index[agent]
        total[i] += r
        if term or trunc:
            env.step(None)
            continue
        legal = env.unwrapped.legal_actions()
        if i == seat:
            print(describe_turn(env, seat, legal, info), file=out)
            try:
                a = _ask(g, legal, input_fn, out)
            except Quit:
                print("bye", file=out)
                return None
            env.step(a)
            continue
        nm, bot = bots[i]
        a = bot.act(obs, legal, info)
        print(f"player_{i} ({nm}): {_public(g, a)}", file=out)
        env.step(a)
    print(env.unwrapped.game.render(env.unwrapped.state_vec), end="", file=out)
    print("rewards: " + ", ".join(f"player_{i} {total[i]:+g}" for i in range(n))
          + f"  (you: {total[seat]:+g})", file=out)
    return total


def _ask(game, legal: np.ndarray, input_fn, out) -> int:
    while True:
        try:
            text = input_fn("> ")
        except EOFError:
            raise Quit from None
        t = text.strip().lower()
        if t in ("q", "quit", "exit"):
            raise Quit
        if t in ("?", "help", "h", "all", "moves"):
            print(HELP, file=out)
            print(format_moves(game, legal), file=out)
            continue
        try:
            return parse_move(game, text, legal)
        except (ValueError, TypeError) as e:
            print(f"  {e}", file=out)
