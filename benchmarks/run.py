"""cardenvs benchmark suite: every game of ``cardenvs.GAMES`` side by side with RLCard, DouZero
and OpenSpiel (3-player Dou Dizhu), then the batched engine and the training adapters
(:mod:`benchmarks.vector`), on one core, in one process, in one report with every target.

Usage (from the repository root)::

    python -m benchmarks.run                 # full run (~6-8 minutes), writes benchmarks/results.md
    python -m benchmarks.run --quick         # ~2 minutes, indicative numbers, prints only
                                             # (unless --out is given)
    python -m benchmarks.run --games doudizhu,wakeng --out /tmp/bench.md
    python -m benchmarks.run --no-vector     # without the batched-engine section

The run is split by responsibility: :mod:`benchmarks.harness` (one core, timing, the report
format), :mod:`benchmarks.run_ours` (cardenvs' measurements), :mod:`benchmarks.run_anchors`
(RLCard, DouZero, OpenSpiel), :mod:`benchmarks.run_tables` (the rows and the targets); this
module runs them.

See ``benchmarks/README.md`` for what each row measures.  Every throughput is the best of a few
repeats (the machine may be shared); anchors run in this same process one at a time, so every
ratio compares numbers measured in the same run.
"""

from __future__ import annotations

# first: benchmarks.harness pins the thread counts of numba and BLAS before they are imported
from benchmarks.harness import (
    Config, Report, cpu_model, guarded, log, peak_rss_mib, pin_one_core, version,
)
# importable from here too (benchmarks.vector, .search, .selfplay and tests/test_claims.py)
from benchmarks.harness import DASH, QUICK_NOTE, Picker, Row, best_rate, fmt_rate  # noqa: F401

import argparse  # noqa: E402
import datetime  # noqa: E402
import importlib.util  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from typing import Any, Optional  # noqa: E402

import numpy as np  # noqa: E402
import numba  # noqa: E402

import cardenvs  # noqa: E402
from benchmarks.run_anchors import (  # noqa: E402,F401
    measure_anchors, openspiel_cpp, openspiel_play, rlcard_rate,
)
from benchmarks.run_ours import WILD_GENERATORS, measure_ours  # noqa: E402,F401
from benchmarks.run_tables import (  # noqa: E402
    build_rows, doudizhu_targets, pdk_vs_wakeng, wild_vs_ddz4,
)


def main(argv: Optional[list[str]] = None) -> int:
    """Run the benchmark with the command-line flags ``argv``; prints the report (and writes
    it to ``--out``); returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="short run (~2 minutes): indicative numbers, its targets marked so")
    ap.add_argument("--games", default=None,
                    help=f"comma-separated games (default: all of {', '.join(cardenvs.GAMES)})")
    ap.add_argument("--out", default=None,
                    help="markdown file to write (default: benchmarks/results.md for a full run, "
                         "none for --quick)")
    ap.add_argument("--no-anchors", action="store_true", help="skip RLCard, DouZero, OpenSpiel")
    ap.add_argument("--no-vector", action="store_true",
                    help="skip the batched-engine section (benchmarks/vector.py)")
    ap.add_argument("--cpu", type=int, default=None,
                    help="CPU to pin to (default: the last one this process may use)")
    args = ap.parse_args(argv)

    games = (list(cardenvs.GAMES) if args.games is None
             else [g.strip() for g in args.games.split(",") if g.strip()])
    unknown = [g for g in games if g not in cardenvs.GAMES]
    if unknown:
        ap.error(f"unknown game(s) {unknown}; known: {', '.join(cardenvs.GAMES)}")
    games.sort(key=lambda g: g != "doudizhu")  # 3-player Dou Dizhu first
    if args.quick:
        cfg = Config(quick=True, budget=0.6, repeats=2, n_positions=300)
    else:
        cfg = Config(quick=False, budget=4.0, repeats=3, n_positions=2000)
    out_path = args.out if args.out is not None else (None if args.quick else
                                                      os.path.join(os.path.dirname(__file__),
                                                                   "results.md"))
    pinned = pin_one_core(args.cpu)
    t_start = time.perf_counter()

    anchors = {"rlcard": False, "douzero": False, "openspiel": False}
    if not args.no_anchors:
        for key, mod in (("rlcard", "rlcard"), ("douzero", "douzero.env.move_generator"),
                         ("openspiel", "pyspiel")):
            try:  # find without importing, so the first memory figure is cardenvs' own
                found = importlib.util.find_spec(mod) is not None
            except ImportError:
                found = False
            anchors[key] = found
            if not found:
                log(f"anchor {key} skipped: {mod} is not installed")

    rep = Report(cfg)
    defer = tuple(k for k, anchor in (("raw", "openspiel"), ("aec", "rlcard")) if anchors[anchor])
    ours = {name: measure_ours(name, cfg, defer if name == "doudizhu" else ()) for name in games}
    rss_ours = peak_rss_mib()
    theirs: dict[str, dict[str, Any]] = {name: {} for name in games}
    if "doudizhu" in games and any(anchors.values()):
        log("== anchors (3-player Dou Dizhu)")
        theirs["doudizhu"] = measure_anchors(ours["doudizhu"], cfg, anchors)
    none = {"rlcard": False, "douzero": False, "openspiel": False}
    for name in games:
        build_rows(name, ours[name], theirs[name], rep, anchors if name == "doudizhu" else none)
    wild_vs_ddz4(rep)
    pdk_vs_wakeng(rep)

    # the batched engine and the training adapters (benchmarks/vector.py), same process
    vec = None
    if not args.no_vector:
        from benchmarks.vector import measure_vector

        vcfg = Config(cfg.quick, min(cfg.budget, 2.0), cfg.repeats, 0, cfg.seed)
        vec = guarded("batched engine", lambda: measure_vector(
            vcfg, {k: anchors[k] for k in ("rlcard", "openspiel")}, tuple(games),
            anchor_values=theirs["doudizhu"] if "doudizhu" in games else None))
        if vec:
            rep.sections.append((vec.title, vec.rows))
            rep.extra.extend(vec.extra)

    # targets
    if "doudizhu" in games:
        doudizhu_targets(rep)
    rep.targets.extend(rep.pending_targets)
    if vec:
        rep.targets.extend(vec.targets)

    elapsed = time.perf_counter() - t_start
    rep.machine = [
        ("date", datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")),
        ("CPU", f"{cpu_model()} ({os.cpu_count()} logical cores on the machine; {pinned})"),
        ("OS", platform.platform()),
        ("Python", platform.python_version()),
        ("numpy / numba", f"{np.__version__} / {numba.__version__} "
                          f"(NUMBA_NUM_THREADS={os.environ['NUMBA_NUM_THREADS']})"),
        ("cardenvs", cardenvs.__version__),
        ("anchors", ", ".join(f"{k} {version(d) or 'not installed'}"
                              + ("" if anchors[k] else " (skipped)")
                              for k, d in (("rlcard", "rlcard"), ("douzero", "douzero"),
                                           ("openspiel", "open_spiel")))),
        ("mode", ("quick" if cfg.quick else "full") + f": best of {cfg.repeats} repeats, "
                 f"{cfg.budget:g} s per throughput measurement, {cfg.n_positions} positions"),
        ("peak memory (maxrss)", f"{rss_ours:,.0f} MiB after the per-game cardenvs "
                                 f"measurements; {peak_rss_mib():,.0f} MiB at the end (anchors "
                                 f"loaded, batched engine at N = 4096 run)"),
        ("run time", f"{elapsed:.0f} s"),
    ]
    text = rep.markdown()
    print(text)
    if out_path:
        with open(out_path, "w") as f:
            f.write(text)
        log(f"wrote {out_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
