"""The ``cardenvs`` command line.

``cardenvs demo GAME [--seed S] [--option key=value ...]`` plays one seeded deal between
uniform-random agents and prints it; ``cardenvs list [GAME]`` shows the games: players,
options, the action layout (id range of each block) and the observation layout (index range
of each field);
``cardenvs moves GAME HAND [PREV]`` asks the rules query API; ``cardenvs arena GAME --agents
rules,random --deals N`` plays duplicate deals between agents; ``cardenvs compare A B`` sets
two arena results of the same deals side by side, deal by deal; ``cardenvs play GAME`` lets you
play against them in the terminal; ``cardenvs replay FILE.json [--html OUT.html]`` checks a
replay and prints it or writes an HTML viewer; ``cardenvs serve [--host 127.0.0.1] [--port
8000]`` starts the web app: play and watch every game in a browser; ``cardenvs train GAME
[--hours H]`` makes a network-only agent (:mod:`cardenvs.train.pipeline`).
"""

from __future__ import annotations

import argparse
import ast
import sys
from typing import Optional, Sequence, TextIO


def parse_option(text: str) -> tuple[str, object]:
    """``"key=value"`` from the command line as ``(key, value)``; the value read as a Python
    literal when it is one (``3``, ``True``, ``"x"``), else kept as text."""
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"option {text!r} must look like key=value")
    key, _, raw = text.partition("=")
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        value = raw
    return key.strip(), value


def _env_module(game: str):
    import importlib

    import cardenvs

    if game not in cardenvs.GAMES:
        raise ValueError(f"unknown game {game!r}; choose from: {', '.join(cardenvs.GAMES)}")
    return importlib.import_module(f"cardenvs.{cardenvs.GAMES[game]}")


def demo(game: str, seed: int, options: dict, out: TextIO = sys.stdout) -> str:
    """Play one seeded deal of ``game`` between uniform-random agents and print it.

    The text is :func:`cardenvs.golden.playthrough`'s (the format of the golden files): the
    deal, one line per action with the number of legal actions, the final table and rewards.
    """
    from functools import partial

    from .golden import playthrough

    text = playthrough(partial(_env_module(game).env, **options), seed, seed)
    print(text, file=out, end="")
    return text


def wrap_items(items: Sequence[str], width: int = 100, first: str = "", indent: str = "    ",
               sep: str = ", ") -> list[str]:
    """Lines of at most ``width`` characters holding ``items`` joined by ``sep``, broken only
    between items (an item longer than a line gets a line of its own); the first line starts
    with ``first``, the others with ``indent``."""
    lines, line, empty = [], first, True
    for i, item in enumerate(items):
        piece = item + (sep if i < len(items) - 1 else "")
        if not empty and len(line + piece.rstrip()) > width:
            lines.append(line.rstrip())
            line = indent
        line += piece
        empty = False
    if not empty or first.strip():
        lines.append(line.rstrip())
    return lines


def _ranges(spans: dict, closed: bool) -> list[str]:
    """``{"play": (0, 153), "pass": (153, 154)}`` -> ``["play 0-152", "pass 153"]`` (ids) or,
    with ``closed=False``, ``["hand [0:52)", ...]`` (index ranges)."""
    if closed:
        return [f"{name} {a}" if b - a == 1 else f"{name} {a}-{b - 1}"
                for name, (a, b) in spans.items()]
    return [f"{name} [{a}:{b})" for name, (a, b) in spans.items()]


def describe_game(name: str, width: int = 100) -> str:
    """What ``cardenvs list`` prints for one game: the title, players and teams, action and
    observation sizes, options, and the action and observation layouts."""
    import cardenvs

    g = cardenvs.make_game(name)
    lines = [f"{name} ({g.info.title}): {g.n_players} players ({g.info.teams}), "
             f"{g.n_actions} actions, observation of {g.layout.size}"]
    lines += wrap_items([f"{k}={v!r}" for k, v in g.info.options.items()], width, "  options: ")
    lines += wrap_items(_ranges(g.blocks, True), width, "  actions (ids): ")
    lines += wrap_items(_ranges(g.layout.offsets, False), width, "  observation (index ranges): ")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The ``cardenvs`` command: run the subcommand ``argv`` names (default
    ``sys.argv[1:]``); returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["train"]:  # its own parser: cardenvs.train.pipeline (the train extra)
        try:
            from cardenvs.train.pipeline import main as train_main
        except ImportError as e:
            print(f"cardenvs train: error: it needs the train extra ({e.name} is missing): "
                  f"pip install \"cardenvs[train]\"", file=sys.stderr)
            return 2
        return train_main(argv[1:])
    parser = argparse.ArgumentParser(prog="cardenvs", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("demo", help="play a seeded deal between random agents and print it")
    p.add_argument("game")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--option", "-o", action="append", type=parse_option, default=[],
                   metavar="KEY=VALUE", help="a game option, e.g. -o auction=fixed (repeatable)")
    li = sub.add_parser("list", help="list the games: players, options, action and observation "
                                     "layouts")
    li.add_argument("game", nargs="?", default=None, help="only this game")
    m = sub.add_parser("moves", help="list the legal plays of a hand (rules query API)")
    m.add_argument("game")
    m.add_argument("hand")
    m.add_argument("prev", nargs="?", default=None)
    m.add_argument("--prev-type", default=None)
    a = sub.add_parser("arena", help="duplicate-deal match between agents, with 95%% CIs")
    a.add_argument("game")
    a.add_argument("--agents", default="rules,random",
                   help="comma-separated agent names (registry in agents/), e.g. rules,random; "
                        "trained:path/to/weights.npz plays your own weights; "
                        "NAME:KEY=VALUE,KEY=VALUE passes keywords to the agent, e.g. "
                        "search:rollouts=1200,epsilon=0.1,rules")
    a.add_argument("--deals", type=int, default=200)
    a.add_argument("--seed", type=int, default=0)
    a.add_argument("--out", default="arena_results", help="folder for the JSON and PNG ('' = none)")
    a.add_argument("--lineups", choices=("auto", "rotate", "solo"), default="auto")
    a.add_argument("--no-progress", action="store_true")
    a.add_argument("--save-replays", default=None, metavar="DIR",
                   help="write every game as a replay JSON to DIR (see docs/replay.md)")
    a.add_argument("--save-replays-top", type=int, default=None, metavar="N",
                   help="with --save-replays: only the games of the N most lopsided deals")
    a.add_argument("--resume", action="store_true",
                   help="continue an interrupted arena from the progress saved in --out "
                        "(same agents, deals, seed and options)")
    a.add_argument("--option", "-o", action="append", type=parse_option, default=[],
                   metavar="KEY=VALUE", help="a game option (repeatable)")
    a.add_argument("--jobs", "-j", type=int, default=1, metavar="N",
                   help="worker processes (default 1); with N > 1 the deals are played in "
                        "blocks of 10, each by agents seeded from (seed, block): the same "
                        "results for every N > 1")
    cp = sub.add_parser("compare", help="two arena results of the same deals, each an agent "
                                        "against one opponent, compared deal by deal")
    cp.add_argument("first", help="an arena result (the JSON, or the --out folder holding one)")
    cp.add_argument("second", help="another, of the same game, options and seed")
    cp.add_argument("--opponent", default="rules",
                    help="the agent both results played against (label or spec; default rules)")
    pl = sub.add_parser("play", help="play a deal in the terminal against agents")
    pl.add_argument("game")
    pl.add_argument("--agents", default="rules",
                    help="opponents, comma-separated, reused in turn (NAME:KEY=VALUE,... as "
                         "for the arena)")
    pl.add_argument("--seat", type=int, default=0, help="your seat")
    pl.add_argument("--seed", type=int, default=None)
    pl.add_argument("--option", "-o", action="append", type=parse_option, default=[],
                    metavar="KEY=VALUE", help="a game option (repeatable)")
    rp = sub.add_parser("replay", help="check a replay file; print it or write an HTML viewer")
    rp.add_argument("file")
    rp.add_argument("--html", default=None, metavar="OUT.html",
                    help="write a self-contained HTML page that steps through the game")
    sv = sub.add_parser("serve", help="play and watch every game in a browser (needs the web "
                                      "extra: pip install \"cardenvs[web]\")")
    sv.add_argument("--host", default="127.0.0.1",
                    help="the address to listen on (default 127.0.0.1: this machine only)")
    sv.add_argument("--port", type=int, default=8000)
    sub.add_parser("train", help="train a network-only agent: imitation, DAgger on search's "
                                 "labels, fine-tuning, arena and report (cardenvs train --help)")
    args = parser.parse_args(argv)

    import cardenvs

    try:
        if args.cmd == "demo":
            demo(args.game, args.seed, dict(args.option))
        elif args.cmd == "list":
            if args.game is not None and args.game not in cardenvs.GAMES:
                raise ValueError(f"unknown game {args.game!r}; choose from: "
                                 f"{', '.join(cardenvs.GAMES)}")
            for name in [args.game] if args.game else cardenvs.GAMES:
                print(describe_game(name))
        elif args.cmd == "moves":
            moves = cardenvs.legal_moves(args.game, args.hand, args.prev, prev_type=args.prev_type)
            print(" ".join(moves) if moves else "(no legal play: pass)")
        elif args.cmd == "arena":
            import signal

            from .arena import ArenaInterrupted, main_arena

            def _term(signum, frame):  # a kill saves the progress like Ctrl-C
                raise KeyboardInterrupt

            old = signal.signal(signal.SIGTERM, _term)
            try:
                main_arena(args.game, args.agents, args.deals, args.seed, dict(args.option),
                           args.out or None, lineups=args.lineups,
                           progress=not args.no_progress, resume=args.resume,
                           save_replays=args.save_replays, save_replays_top=args.save_replays_top,
                           jobs=args.jobs)
            except ArenaInterrupted as e:
                print(f"cardenvs: {e}", file=sys.stderr)
                return 130
            finally:
                signal.signal(signal.SIGTERM, old)
        elif args.cmd == "compare":
            from .arena import compare_results, format_comparison

            print(format_comparison(compare_results(args.first, args.second, args.opponent)))
        elif args.cmd == "replay":
            from .replay_html import main_replay

            main_replay(args.file, args.html)
        elif args.cmd == "play":
            from .play import play

            play(args.game, args.agents, seat=args.seat, seed=args.seed, options=dict(args.option))
        elif args.cmd == "serve":
            try:
                from .web import server
            except ImportError as e:
                raise ValueError(f"cardenvs serve needs the web extra ({e.name} is missing): "
                                 f"pip install \"cardenvs[web]\"") from None
            server.serve(args.host, args.port)
    except (ValueError, TypeError) as e:
        print(f"cardenvs: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("cardenvs: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
