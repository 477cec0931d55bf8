"""Start-up time of a new process that steps a ``VectorGame``: cold and warm numba caches.

For each game, three new Python processes, each timed from its start to the end of its first
``VectorGame.step_random()`` (imports, game tables, loading or compiling the numba code):

* ``cold``: nothing cached (``NUMBA_CACHE_DIR`` and ``CARDENVS_CACHE_DIR`` point to an empty
  folder): the game's kernels and the batched engine compile;
* ``engine cold``: the game's kernels come from the usual numba cache, the batched engine
  (:mod:`cardenvs.core.specialize`) compiles (what every process paid before the engine was
  cached);
* ``warm``: everything comes from the cache, as in every later process, SubprocVecEnv worker
  or Ray worker on the machine.

Usage::

    python benchmarks/startup.py                       # every game, writes benchmarks/startup.md
    python benchmarks/startup.py --games wakeng --no-cold --repeat 3

The cold columns take minutes per game on a busy machine; ``--no-cold`` skips them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from cardenvs.vector import VectorGame
t1 = time.perf_counter()
vg = VectorGame(sys.argv[1], 64)
vg.reset(seed=0)
vg.step_random()
t2 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "first_step": t2 - t1}))
"""


def run_child(game: str, env: dict) -> dict:
    """One new process: wall time from its start to its first step, and its own split."""
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", CHILD, game], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        raise RuntimeError(f"{game}: the child failed:\n{out.stderr[-2000:]}")
    res = json.loads(out.stdout.strip().splitlines()[-1])
    res["wall"] = wall
    res["said_compiling"] = "cardenvs: compiling" in out.stderr
    return res


def main(argv=None) -> int:
    from cardenvs import GAMES

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", nargs="*", default=list(GAMES), choices=list(GAMES))
    ap.add_argument("--no-cold", action="store_true", help="skip the cold and engine-cold runs")
    ap.add_argument("--repeat", type=int, default=1, help="warm runs per game (the best counts)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "startup.md"),
                    help="markdown table to write ('-': print only)")
    args = ap.parse_args(argv)
    base = dict(os.environ)
    base["PYTHONPATH"] = str(ROOT) + os.pathsep + base.get("PYTHONPATH", "")
    rows = []
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is in the dev extra
        def tqdm(x, **_):
            return x
    for game in tqdm(args.games, desc="games"):
        row = {"game": game}
        if not args.no_cold:
            with tempfile.TemporaryDirectory() as tmp:
                env = dict(base, NUMBA_CACHE_DIR=tmp, CARDENVS_CACHE_DIR=tmp)
                row["cold"] = run_child(game, env)
            with tempfile.TemporaryDirectory() as tmp:
                row["engine_cold"] = run_child(game, dict(base, CARDENVS_CACHE_DIR=tmp))
        run_child(game, base)  # fills the usual cache when it is not filled yet
        warm = [run_child(game, base) for _ in range(max(1, args.repeat))]
        row["warm"] = min(warm, key=lambda r: r["wall"])
        rows.append(row)
    lines = [f"Start-up of a new process to its first `VectorGame(game, 64).step_random()` "
             f"(wall seconds, {os.cpu_count()} CPUs, load average "
             f"{os.getloadavg()[0]:.1f} at the end; python {sys.version.split()[0]})", "",
             "| game | cold (nothing cached) | engine cold (kernels cached) | warm | warm: "
             "import / game tables + first step | compile notice (cold / warm) |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        w = r["warm"]
        cold = f"{r['cold']['wall']:.1f}" if "cold" in r else "—"
        ecold = f"{r['engine_cold']['wall']:.1f}" if "engine_cold" in r else "—"
        said = (f"{'yes' if r['cold']['said_compiling'] else 'no'} / "
                if "cold" in r else "— / ") + ("yes" if w["said_compiling"] else "no")
        lines.append(f"| {r['game']} | {cold} | {ecold} | {w['wall']:.2f} | "
                     f"{w['import']:.2f} / {w['first_step']:.2f} | {said} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out != "-":
        Path(args.out).write_text(text)
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
