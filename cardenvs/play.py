"""Play a deal in the terminal against the baseline agents: ``cardenvs play GAME``.

You hold one seat (``--seat``, default 0); the other seats are played by agents from the
registry in ``agents`` (``--agents rules`` by default; a list is reused in turn).  At your turn
you see your hand, what you may know of the table (hand sizes, the play to beat, a public
kitty, your role) and the numbered legal moves.  Type:

* cards in the rules notation (``33344``, ``TJQKA``, ``BR``), or ``body+kickers``
  (``333444+59``) to fix a reading; ``pass``; ``bid 2``; ``bury 7`` / ``bury D7`` ... —
  the same strings as ``env.action_to_string``;
* with wild jokers (Da Niangniang, Lanxi Wulong) either the cards you hold (``AAAB``: the
  small joker stands for the missing ace), the effective play (``AAAA``) or the bracket
  notation (``45R[6]78``: the big joker as the 6), whose joker choice then answers the
  game's joker pick by itself;
* ``#k`` for the k-th listed move; ``?`` for help and every legal move; ``q`` to quit.

Cards that can be played several ways (``333444555666``) list the readings to pick from;
a typo such as ``pss`` gets a suggestion.  Other players' card plays, passes, bids and joker
picks are shown as they happen; private picks (burying, the exchange) only as such.  In
Wakeng your diamonds are listed beside the hand (``bury D7`` buries the 7 of diamonds).
Ctrl-C or ``q`` ends the game.
"""

from __future__ import annotations

import difflib
import shutil
import sys
from typing import IO, TYPE_CHECKING, Callable, Optional, Sequence, Union

import numpy as np

from .cli import wrap_items
from .wrappers import policy_info

if TYPE_CHECKING:
    from pettingzoo import AECEnv

    from .agents.base import Agent
    from .core.game import Game

#: action blocks whose actions every player sees (joker picks: how a wild joker in a card
#: play on the table is read)
PUBLIC_BLOCKS = {"play", "pass", "bid", "open", "declare", "double", "pick", "joker"}
#: words a player may type (besides cards), for suggestions on typos
WORDS = ("pass", "bid", "bury", "open", "not open", "declare", "double", "take", "return",
         "joker", "quit", "help")
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


def describe_turn(env: AECEnv, seat: int, legal: np.ndarray, info: dict) -> str:
    """What the player at ``seat`` may see at his turn, and his numbered legal moves."""
    from .core.state import LAST_ROW, LAST_SEAT, P_PLAY, PHASE, hand_off

    g = env.unwrapped.game
    s = env.unwrapped.state_vec
    obs = env.observe(env.possible_agents[seat])["observation"]
    lines = [f"--- your turn: player_{seat}" + _role_text(info, seat) +
             (f", phase {info['phase']}" if "phase" in info else "") + " ---"]
    lines.append(f"hand: {g.deck.format(s[hand_off(seat):hand_off(seat) + 16])}")
    diamonds = _card_field(g, obs, "diamonds") if "diamonds" in g.layout.offsets else None
    if diamonds is not None:
        held = [f"D{g.deck.order[r]}" for r in range(g.deck.n_ranks) if diamonds[r]]
        lines.append("diamonds in your hand: " + (" ".join(held) if held else "none") +
                     (" ('bury D7' buries the 7 of diamonds, 'bury 7' another 7)"
                      if any(g.block_of(int(a)) == "bury" for a in legal) else ""))
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


def format_moves(game: Game, legal: np.ndarray, limit: Optional[int] = None,
                 width: Optional[int] = None) -> str:
    """``moves: [1] pass  [2] 44 ...`` (the first ``limit`` moves), wrapped to ``width``
    (default: the terminal's) between moves, never inside one."""
    if width is None:
        width = max(40, shutil.get_terminal_size((100, 24)).columns - 1)
    shown = legal if limit is None else legal[:limit]
    items = [f"[{i + 1}] {game.action_to_string(int(a))}" for i, a in enumerate(shown)]
    if limit is not None and len(legal) > limit:
        items.append(f"... {len(legal) - limit} more ('?' lists all)")
    return "\n".join(wrap_items(items, width, "moves: ", "       ", "  "))


def _wild_slots(game) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(joker slots, wild joker slots)`` of a wild-joker game; ``((), ())`` otherwise."""
    js = getattr(game, "joker_slots", None)
    if js is None:
        return (), ()
    return tuple(int(j) for j in js), tuple(int(j) for j in getattr(game, "wild_slots", js))


def _stand_in_rows(game, typed: np.ndarray, rows: list[int]) -> list[tuple[int, list[str]]]:
    """The card-play ``rows`` made from exactly the ``typed`` cards with at least one wild
    joker standing in for a missing natural card (``AAAB`` -> ``AAAA``), each with the joker
    picks it implies when they are unambiguous (``["B[A]"]``), else ``[]``."""
    js, ws = _wild_slots(game)
    if not ws or not any(typed[j] for j in ws):
        return []
    naturals = [r for r in range(game.deck.n_ranks) if r not in js]
    out = []
    for a in rows:
        e = game.tab.counts[a]
        if int(e.sum()) != int(typed.sum()):
            continue
        if any(typed[r] > e[r] for r in naturals) or any(e[j] > typed[j] for j in js):
            continue
        if any(typed[j] != e[j] for j in js if j not in ws):
            continue
        need = [(r, int(e[r] - typed[r])) for r in naturals if e[r] > typed[r]]
        if not need or not any(typed[r] for r in naturals):
            continue
        spare = [j for j in ws if typed[j] > e[j]]
        picks = []
        if len(spare) == 1:  # one kind of joker stands in: the picks follow
            J = game.deck.order[spare[0]]
            picks = [f"{J}[{game.deck.order[r]}]" for r, k in need for _ in range(k)]
        out.append((int(a), picks))
    return out


def _suggest(game, text: str, legal: np.ndarray) -> str:
    """``"; did you mean 'pass'?"`` for a near miss of a word or a listed move, else ``""``."""
    low = text.strip().lower()
    options = list(WORDS) + [game.action_to_string(int(a)).lower() for a in legal]
    close = difflib.get_close_matches(low, list(dict.fromkeys(options)), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def parse_move(game: Game, text: str, legal: np.ndarray, picks: Optional[list] = None) -> int:
    """The legal action the player typed; ``ValueError`` with a helpful message otherwise.

    In a wild-joker game the cards may be typed as held (``AAAB``), as the effective play
    (``AAAA``) or in the bracket notation (``45R[6]78``); the joker picks the writing implies
    (``"R[6]"``) are appended to ``picks`` when it is given (:func:`play` answers the game's
    joker pick with them)."""
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
    words = ("pass", "bid", "bury", "open", "not open", "declare", "double", "take", "return",
             "joker")
    js, ws = _wild_slots(game)
    if not any(low.startswith(w) for w in words) and not (ws and _is_pick(game, t)):
        if not (legal < T).any():
            raise ValueError(f"{text.strip()!r}: no card play now; choose one of the listed "
                             f"moves" + _suggest(game, t, legal))
        t = t.upper().replace(" ", "")
        if "+" not in t:
            implied: list[str] = []
            if "[" in t and ws:
                from .core.wild import parse_wild

                wp = parse_wild(t, game.deck, js, ws, what="move")
                counts = wp.effective
                implied = [f"{game.deck.order[j]}[{game.deck.order[r]}]"
                           for j, r in zip(*np.nonzero(wp.stands)) for _ in range(wp.stands[j, r])]
            else:
                try:
                    counts = game.table.play_deck.parse(t, what="move")
                except ValueError as e:
                    raise ValueError(f"{e}{_suggest(game, text, legal)}") from None
            plays = [int(a) for a in legal if a < T]
            found = [(a, implied) for a in plays
                     if tuple(game.tab.counts[a]) == tuple(int(c) for c in counts)]
            if "[" not in t:  # the cards held, jokers standing in ("AAAB"); "444RR" may be
                # 444 with two jokers as themselves or 444KK: both are listed
                found += [f for f in _stand_in_rows(game, np.asarray(counts), plays)
                          if f[0] not in {r for r, _ in found}]
            if len(found) == 1:
                if picks is not None:
                    picks.extend(found[0][1])
                return found[0][0]
            if len(found) > 1:
                opts = ", ".join(f"#{list(legal).index(r) + 1} {game.action_to_string(r)}"
                                 + (f" ({game.table.reading(r)})" if not ws else "")
                                 for r, _ in found)
                raise ValueError(f"{t} can be played several ways: {opts}; pick one with #k"
                                 + ("" if ws else " or write body+kickers"))
            raise ValueError(f"you cannot play {game.deck.format(counts)} now" +
                             (" (it does not beat the play on the table or is not a combination)"
                              if T in legal else " (not a combination you hold)"))
    try:
        a = game.string_to_action(t)
    except ValueError as e:
        raise ValueError(f"{e}{_suggest(game, text, legal)}") from None
    if a not in legal:
        raise ValueError(f"{game.action_to_string(a)!r} is not legal now")
    return int(a)


def _is_pick(game, text: str) -> bool:
    """Whether ``text`` is one of the game's joker-pick strings (``B[5]``)."""
    try:
        a = game.string_to_action(text.strip())
    except (ValueError, TypeError):
        return False
    return game.block_of(a) == "pick"


def _public(game, action: int) -> str:
    """How another player's action is shown: card plays, passes, bids, joker picks as
    written (a pick ``R[6]`` as "joker R as 6"); a private choice only as such."""
    block = game.block_of(action)
    text = game.action_to_string(action)
    if block == "pick" and len(text) >= 4 and text[1] == "[":
        return f"joker {text[0]} as {text[2:-1]}"
    if block in PUBLIC_BLOCKS:
        return text
    return f"(a private {block} choice)"


def seat_agents(game: str, agents: Union[str, Sequence[str]] = "rules", seat: Optional[int] = 0,
                seed: Optional[int] = None, options: Optional[dict] = None
                ) -> tuple[AECEnv, dict[int, tuple[str, Agent]], int]:
    """The table of a deal against agents: ``(env, bots, seed)``.

    ``env`` is the AEC env of ``game`` (``illegal="raise"``, with the options the agents need),
    not reset; ``bots`` maps each seat but ``seat`` (every seat when ``seat`` is ``None``: a
    game between agents) to ``(spec, agent)``, the specs of ``agents`` (a comma-separated
    string or a list) taken in turn; ``seed`` is the deal seed (drawn when ``None``), and the
    agent at seat ``i`` is seeded ``seed + 1 + i``.  A bad game, agent spec, option or seat
    is a ``ValueError`` / ``TypeError`` naming it."""
    import cardenvs

    from .arena import env_for_agents, import_agents

    if game not in cardenvs.GAMES:
        raise ValueError(f"unknown game {game!r}; choose from: {', '.join(cardenvs.GAMES)}")
    mod = import_agents()
    if isinstance(agents, (list, tuple)):
        names = list(agents)
        for nm in names:
            if not isinstance(nm, str) or not nm.strip():
                raise ValueError(f"an agent spec must be a non-empty string, got {nm!r}")
        names = [nm.strip() for nm in names]
    elif isinstance(agents, str):
        names = mod.split_agents(agents)
    else:
        raise TypeError(f"agents must be a comma-separated string or a list of specs, got "
                        f"{type(agents).__name__}")
    if not names:
        raise ValueError("give at least one agent (e.g. agents='rules')")
    env, _ = env_for_agents(game, names, options)
    g = env.unwrapped.game
    for nm in dict.fromkeys(names):
        reason = mod.unsupported(nm, g)
        if reason is not None:
            raise ValueError(f"agent {nm!r} cannot play {game}: {reason}")
    n = g.n_players
    if seat is not None and (isinstance(seat, bool) or not isinstance(seat, int)
                             or not 0 <= seat < n):
        raise ValueError(f"seat must be 0..{n - 1}, got {seat!r}")
    if seed is None:
        seed = int(np.random.default_rng().integers(0, 2**31))
    bots = {}
    others = [i for i in range(n) if i != seat]
    for j, i in enumerate(others):
        nm = names[j % len(names)]
        bots[i] = (nm, mod.make_agent(nm, g, seed=seed + 1 + i))
    return env, bots, seed


def agent_move(env: AECEnv, bot: Agent) -> int:
    """The action ``bot`` chooses for the seat to move in ``env`` (its observation, legal
    actions and info, with the state for the agents that sample worlds)."""
    obs, _, _, _, info = env.last()
    return int(bot.act(obs, env.unwrapped.legal_actions(),
                       policy_info(bot, info, env.unwrapped.state_vec)))


def play(game: str, agents: Union[str, Sequence[str]] = "rules", seat: int = 0,
         seed: Optional[int] = None, options: Optional[dict] = None,
         input_fn: Optional[Callable[[str], str]] = None, out: Optional[IO[str]] = None
         ) -> Optional[np.ndarray]:
    """Play one deal of ``game`` at ``seat`` against agents; returns the rewards per seat
    (``None`` when the player quits).  ``input_fn`` / ``out`` make it scriptable."""
    out = sys.stdout if out is None else out
    input_fn = input if input_fn is None else input_fn
    if seat is None:
        raise ValueError("seat must be a seat number, got None")
    env, bots, seed = seat_agents(game, agents, seat, seed, options)
    g = env.unwrapped.game
    n = g.n_players
    print(f"{g.info.title}, seed {seed}: you are player_{seat}; "
          + ", ".join(f"player_{i} = {nm}" for i, (nm, _) in bots.items()), file=out)
    print(HELP, file=out)
    env.reset(seed=seed)
    index = {a: i for i, a in enumerate(env.possible_agents)}
    total = np.zeros(n)
    picks: list[str] = []  # joker picks implied by the player's last card play ("R[6]")
    try:
        for agent in env.agent_iter():
            obs, r, term, trunc, info = env.last()
            i = index[agent]
            total[i] += r
            if term or trunc:
                env.step(None)
                continue
            legal = env.unwrapped.legal_actions()
            if i == seat:
                a = _typed_pick(g, legal, picks)
                if a is not None:
                    print(f"you: {_public(g, a)} (as you wrote it)", file=out)
                    env.step(a)
                    continue
                picks.clear()
                print(describe_turn(env, seat, legal, info), file=out)
                try:
                    a = _ask(g, legal, input_fn, out, picks)
                except Quit:
                    print("bye", file=out)
                    return None
                env.step(a)
                continue
            nm, bot = bots[i]
            a = agent_move(env, bot)
            print(f"player_{i} ({nm}): {_public(g, a)}", file=out)
            env.step(a)
    except KeyboardInterrupt:
        print("\ninterrupted: bye", file=out)
        return None
    print(env.unwrapped.game.render(env.unwrapped.state_vec), end="", file=out)
    print("rewards: " + ", ".join(f"player_{i} {total[i]:+g}" for i in range(n))
          + f"  (you: {total[seat]:+g})", file=out)
    return total


def _typed_pick(game, legal: np.ndarray, picks: list) -> Optional[int]:
    """The joker pick the player's bracket writing already made (``R[6]``), when it is one
    of the legal actions now; consumed from ``picks``."""
    if not picks:
        return None
    by_text = {game.action_to_string(int(a)): int(a) for a in legal}
    want = picks[0]
    rank = want[2:-1]
    for text in (want, f"joker as {rank}"):
        if text in by_text and game.block_of(by_text[text]) in ("pick", "joker"):
            picks.pop(0)
            return by_text[text]
    return None


def _ask(game, legal: np.ndarray, input_fn, out, picks: Optional[list] = None) -> int:
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
            return parse_move(game, text, legal, picks)
        except (ValueError, TypeError) as e:
            print(f"  {e}", file=out)
