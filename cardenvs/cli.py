"""The ``cardenvs`` command line.

``cardenvs demo GAME [--seed S] [--option key=value ...]`` plays one seeded deal between
uniform-random agents and prints it; ``cardenvs list`` shows the games and their options;
``cardenvs moves GAME HAND [PREV]`` asks the rules query API.
"""

from __future__ import annotations

import argparse
import ast
import sys
from typing import Optional, Sequence


def _parse_option(text: str) -> tuple[str, object]:
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
        raise SystemExit(f"unknown game {game!r}; choose from: {', '.join(cardenvs.GAMES)}")
    return importlib.import_module(f"cardenvs.{cardenvs.GAMES[game]}")


def demo(game: str, seed: int, options: dict, out=sys.stdout) -> str:
    """Play one seeded deal of ``game`` between uniform-random agents and print it.

    The text is :func:`cardenvs.golden.playthrough`'s (the format of the golden files): the
    deal, one line per action with the number of legal actions, the final table and rewards.
    """
    from functools import partial

    from .golden import playthrough

    text = playthrough(partial(_env_module(game).env, **options), seed, seed)
    print(text, file=out, end="")
    return text


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="cardenvs", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("demo", help="play a seeded deal between random agents and print it")
    p.add_argument("game")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--option", "-o", action="append", type=_parse_option, default=[],
                   metavar="KEY=VALUE", help="a game option, e.g. -o auction=fixed (repeatable)")
    sub.add_parser("list", help="list the games, their players and options")
    m = sub.add_parser("moves", help="list the legal plays of a hand (rules query API)")
    m.add_argument("game")
    m.add_argument("hand")
    m.add_argument("prev", nargs="?", default=None)
    m.add_argument("--prev-type", default=None)
    args = parser.parse_args(argv)

    import cardenvs

    try:
        if args.cmd == "demo":
            demo(args.game, args.seed, dict(args.option))
        elif args.cmd == "list":
            for name in cardenvs.GAMES:
                g = cardenvs.make_game(name)
                print(f"{name:12s} {g.info.title:28s} players={g.n_players} actions={g.n_actions} "
                      f"obs={g.layout.size} options={g.info.options}")
        elif args.cmd == "moves":
            moves = cardenvs.legal_moves(args.game, args.hand, args.prev, prev_type=args.prev_type)
            print(" ".join(moves) if moves else "(no legal play: pass)")
    except (ValueError, TypeError) as e:
        print(f"cardenvs: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
