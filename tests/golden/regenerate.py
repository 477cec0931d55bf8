"""Rewrite the golden playthrough files: ``python tests/golden/regenerate.py [game ...]``.

Without arguments every game of ``cardenvs.GAMES`` is written; with names only those.  Run it
only after an intended behaviour change, then read the diff of the files as a person would
(legal follows, doublings, rewards) before committing them.
"""

from __future__ import annotations

import sys

from cardenvs import GAMES
from cardenvs.golden import golden_path, golden_text


def main(argv: list[str]) -> int:
    games = argv or list(GAMES)
    unknown = [g for g in games if g not in GAMES]
    if unknown:
        print(f"unknown game(s) {unknown}; known: {', '.join(GAMES)}", file=sys.stderr)
        return 2
    for game in games:
        path = golden_path(game)
        text = golden_text(game)
        old = path.read_text() if path.exists() else None
        path.write_text(text)
        state = "unchanged" if old == text else ("new" if old is None else "CHANGED")
        print(f"{game}: {path} ({state}, {text.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
