"""The shipped agents' strength, measured: duplicate-deal arenas whose JSON results the README
and the docs quote (through :mod:`benchmarks.numbers`, never by hand).

For every game it plays ``trained`` and ``search`` against ``rules`` and ``rules`` against
``random`` (and in Dou Dizhu the file fitted against RLCard's rule model against it) with
:func:`cardenvs.arena.run_arena` and writes each result (JSON, and PNG with matplotlib) into
``benchmarks/results/strength/``::

    .venv/bin/python -m benchmarks.strength                       # every game, 2,000 deals
    .venv/bin/python -m benchmarks.strength --games wakeng --deals 500 --jobs 2

Then ``.venv/bin/python -m benchmarks.numbers --write`` puts the new numbers into the README's
and the docs' tables.  The seed is 1: the shipped weights were made on seed-0 arenas, so these
deals are ones no training run scored itself on.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Optional

from cardenvs import GAMES
from cardenvs.arena import run_arena, write_results

OUT = Path(__file__).resolve().parent / "results" / "strength"

#: the pairings measured in every game: (agents, deals as a fraction of ``--deals``)
PAIRINGS = (("trained,rules", 1.0), ("rules,random", 0.5), ("search,rules", 0.25))

#: pairings of one game: (game, agents, deals as a fraction of ``--deals``)
EXTRA = (("doudizhu", "trained:agents/weights/doudizhu_rlcard_network.npz,rlcard", 0.5),)


def done_already(out: Path, game: str, agents: str, deals: int, seed: int) -> Optional[Path]:
    """The result in ``out`` of this very arena (game, agents, deals, seed), if there is one."""
    for path in sorted(out.glob(f"arena_{game}_*.json")):
        try:
            st = json.loads(path.read_text(encoding="utf-8")).get("settings", {})
        except (OSError, ValueError):
            continue
        if (st.get("game"), st.get("agents"), st.get("deals"), st.get("seed"),
                st.get("options")) == (game, agents.split(","), deals, seed, {}):
            return path
    return None


def measure(games, deals: int, seed: int, jobs: int, out: Path = OUT, progress: bool = True,
            stream=sys.stdout, again: bool = False) -> list[Path]:
    """Play every pairing of :data:`PAIRINGS` (and :data:`EXTRA`) in every game of ``games``;
    return the JSON paths.  An arena whose result is in ``out`` already is skipped unless
    ``again``."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for game in games:
        todo = [(a, share) for a, share in PAIRINGS]
        todo += [(a, share) for g, a, share in EXTRA if g == game]
        for agents, share in todo:
            n = max(1, int(round(deals * share)))
            found = None if again else done_already(out, game, agents, n, seed)
            if found is not None:
                print(f"{game:<11} {agents:<14} {n:>5} deals  done already: {found.name}",
                      file=stream, flush=True)
                written.append(found)
                continue
            t0 = time.perf_counter()
            res = run_arena(game, agents, n, seed=seed, progress=progress, jobs=jobs)
            jpath, _ = write_results(res, out)
            pair = next(iter(res["pairwise"].values()))
            print(f"{game:<11} {agents:<14} {n:>5} deals  diff {pair['score_diff']:+.3f} "
                  f"[{pair['ci'][0]:+.3f}, {pair['ci'][1]:+.3f}]  "
                  f"{time.perf_counter() - t0:6.0f} s  -> {jpath.name}", file=stream, flush=True)
            written.append(jpath)
    return written


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.strength", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", default=",".join(GAMES),
                    help="comma-separated games (default: all six)")
    ap.add_argument("--deals", type=int, default=2000,
                    help="deals of trained vs rules (rules vs random plays half as many)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1, help="arena worker processes")
    ap.add_argument("--no-progress", action="store_true")
    ap.add_argument("--again", action="store_true",
                    help="play arenas whose results are in the folder already again")
    a = ap.parse_args(argv)
    games = [g.strip() for g in a.games.split(",") if g.strip()]
    unknown = [g for g in games if g not in GAMES]
    if unknown:
        ap.error(f"unknown game(s) {unknown}; choose from {list(GAMES)}")
    if a.deals < 1:
        ap.error("--deals must be positive")
    measure(games, a.deals, a.seed, a.jobs, progress=not a.no_progress, again=a.again)
    return 0


if __name__ == "__main__":
    sys.exit(main())
