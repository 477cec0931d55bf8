"""Batched-engine and training-adapter benchmarks, side by side with RLCard and OpenSpiel.

Usage (from the repository root)::

    python -m benchmarks.vector                 # full run (~2-3 minutes), prints markdown
    python -m benchmarks.vector --quick         # ~1 minute
    python -m benchmarks.vector --out /tmp/vector.md --games doudizhu,doudizhu4,wakeng

:mod:`benchmarks.run` (``python -m benchmarks.run``) appends this section to its report:
``measure_vector(cfg, anchors, games, anchor_values)`` returns a :class:`VectorSection` (rows in
that report's format, the growth table, the batched engine's targets with PASS/FAIL), reusing the
anchor measurements the report already made.

What it measures, on one core (the anchors' timing helpers are :mod:`benchmarks.run`'s):

* :class:`cardenvs.vector.VectorGame` decisions/s with uniformly random legal actions drawn
  inside numba (``step_random``), at N = 1, 64, 1024, 4096 games, without observations and
  with each game's observation of the seat to move (legal ids are always produced); ns per
  decision shows how the cost grows with N (the state and observation arrays outgrow the
  caches) and with the hand size (3- vs 4-player Dou Dizhu);
* ``step(actions)`` with the actions drawn in numpy from the legal ids (a Python policy's
  path);
* :class:`cardenvs.wrappers.SeatEnv` learner steps/s and :class:`cardenvs.sb3.SeatVecEnv`
  learner steps/s (random learner, random opponents: every step also plays the opponents);
* peak memory of N = 4096 games (``tracemalloc``: the engine's own arrays), with and without
  dense masks;
* RLCard env steps/s and OpenSpiel random play (Python loop, with observation tensors, and its
  C++ ``evaluate_bots`` loop) for 3-player Dou Dizhu.
"""

from __future__ import annotations

import os

for _v in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from typing import Any, Optional  # noqa: E402

import numpy as np  # noqa: E402

import cardenvs  # noqa: E402
from benchmarks.run import (  # noqa: E402
    DASH, Config, Picker, Row, best_rate, cpu_model, fmt_rate, guarded, log, openspiel_cpp,
    openspiel_play, peak_rss_mib, pin_one_core, rlcard_rate,
)
from cardenvs.core.state import NLOG  # noqa: E402
from cardenvs.vector import VectorGame  # noqa: E402

SIZES = (1, 64, 1024, 4096)
TARGET_RAW = 1_000_000  # decisions/s, 3-player Dou Dizhu, one core
TARGET_OBS = 300_000  # decisions/s with observations and legal ids
TARGET_MEM_MB = 1024  # peak memory of N = 4096 games
TARGET_SIZES = (64, 1024, 4096)  # the batch sizes at which the decision-rate targets must hold


def engine_rate(game: str, n: int, observe: bool, cfg: Config) -> float:
    """Best decisions/s of ``VectorGame.step_random`` over the repeats."""
    vg = VectorGame(game, n, observe=observe)
    vg.reset(seed=cfg.seed)
    vg.step_random()  # compile (first call per game in the process)
    t0 = time.perf_counter()
    calls = 0
    while time.perf_counter() - t0 < 0.05:
        vg.step_random()
        calls += 1
    per_call = (time.perf_counter() - t0) / calls

    def run(seconds: float) -> tuple[float, float]:
        k = max(1, int(seconds / per_call))
        t = time.perf_counter()
        for _ in range(k):
            vg.step_random()
        return k * n, time.perf_counter() - t

    rate, _ = best_rate(run, cfg)
    return rate


def python_policy_rate(game: str, n: int, cfg: Config) -> float:
    """Decisions/s of ``VectorGame.step(actions)`` with uniform legal actions drawn in numpy
    from the padded legal ids (observations on)."""
    vg = VectorGame(game, n)
    vg.reset(seed=cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    rows = np.arange(n)

    def one() -> None:
        pick = (rng.random(n) * vg.n_legal).astype(np.int64)
        vg.step(vg.legal[rows, pick])

    one()

    def run(seconds: float) -> tuple[float, float]:
        k = 0
        t = time.perf_counter()
        while time.perf_counter() - t < seconds:
            for _ in range(10):
                one()
            k += 10
        return k * n, time.perf_counter() - t

    rate, _ = best_rate(run, cfg)
    return rate


def seatenv_rate(game: str, cfg: Config) -> tuple[float, float]:
    """SeatEnv learner steps/s (random learner via the env's legal ids, random opponents) and
    all decisions/s (the opponents' included)."""
    from cardenvs.wrappers import SeatEnv

    env = SeatEnv(game)
    env.reset(seed=cfg.seed)
    pick = Picker(cfg.seed)
    stats = {"learner": 0, "all": 0}

    def run(seconds: float) -> tuple[float, float]:
        n = 0
        dec = 0
        t = time.perf_counter()
        while time.perf_counter() - t < seconds:
            env.reset()
            while True:
                legal = env.legal_actions()
                _, _, term, _, _ = env.step(int(legal[pick(len(legal))]))
                n += 1
                if term:
                    break
            dec += int(env.state_vec[NLOG])  # every action of the deal
        stats["learner"] += n
        stats["all"] += dec
        return n, time.perf_counter() - t

    rate, _ = best_rate(run, cfg)
    return rate, rate * stats["all"] / max(stats["learner"], 1)


def vecenv_rate(game: str, n: int, cfg: Config) -> float:
    """SeatVecEnv learner steps/s (random learner actions drawn in numpy from the legal ids,
    random opponents in numba; observations copied, masks and infos built as for SB3)."""
    from cardenvs.sb3 import SeatVecEnv

    venv = SeatVecEnv(game, n, seed=cfg.seed)
    venv.reset()
    rng = np.random.default_rng(cfg.seed)
    vg = venv.vg
    rows = np.arange(n)

    def one() -> None:
        pick = (rng.random(n) * vg.n_legal).astype(np.int64)
        venv.step(vg.legal[rows, pick])
        venv.env_method("action_masks")  # what MaskablePPO asks for every step

    one()

    def run(seconds: float) -> tuple[float, float]:
        k = 0
        t = time.perf_counter()
        while time.perf_counter() - t < seconds:
            one()
            k += 1
        return k * n, time.perf_counter() - t

    rate, _ = best_rate(run, cfg)
    return rate


def peak_memory_mb(game: str, n: int, masks: bool, steps: int = 20) -> float:
    """tracemalloc peak (MiB) of building, resetting and stepping ``n`` games."""
    VectorGame(game, 1, masks=masks).reset(seed=0)  # game tables, compilation: not counted
    tracemalloc.start()
    tracemalloc.reset_peak()
    vg = VectorGame(game, n, masks=masks, keep_final=True)
    vg.reset(seed=0)
    for _ in range(steps):
        vg.step_random()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del vg
    return peak / 2**20


@dataclass
class VectorSection:
    """The batched-engine section of a report (:func:`measure_vector`)."""

    title: str
    rows: list  # benchmarks.run.Row
    extra: list[str]  # markdown paragraphs (the growth table)
    targets: list[tuple[str, str, str, str, str]]  # (target, cardenvs, anchor, value, result)
    values: dict = field(default_factory=dict)  # (game, observe, N) -> decisions/s, "mem", ...


def _verdict(ok: bool) -> str:
    return "**PASS**" if ok else "**FAIL**"


def measure_vector(cfg: Config, anchors: Optional[dict[str, bool]] = None,
                   games: tuple[str, ...] = ("doudizhu", "doudizhu4"),
                   anchor_values: Optional[dict[str, Any]] = None) -> VectorSection:
    """The batched-engine section (rows in :mod:`benchmarks.run`'s format, the growth table,
    and the batched engine's targets for 3-player Dou Dizhu with PASS/FAIL).

    ``anchors``: which of ``rlcard`` / ``openspiel`` to run (default: those installed).
    ``anchor_values``: anchor results already measured in this run (``benchmarks.run``'s
    ``osr``, ``ose``, ``osc``, ``rl``); those are shown instead of measuring them again.
    """
    if anchors is None:
        anchors = {k: importlib.util.find_spec(m) is not None
                   for k, m in (("rlcard", "rlcard"), ("openspiel", "pyspiel"))}
    rows: list[Row] = []
    extra: list[str] = []
    targets: list[tuple[str, str, str, str, str]] = []
    values: dict[Any, Any] = {}
    for game in games:
        log(f"== batched engine: {game}")
        for observe in (False, True):
            for n in SIZES:
                r = guarded(f"{game} N={n} observe={observe}",
                            lambda: engine_rate(game, n, observe, cfg))
                values[(game, observe, n)] = r
    growth = []
    for game in games:
        title = cardenvs.make_game(game).info.title
        for observe in (False, True):
            cells = []
            for n in SIZES:
                r = values.get((game, observe, n))
                cells.append(f"N={n}: {fmt_rate(r)}" if r else f"N={n}: {DASH}")
            what = "with observations + legal ids" if observe else "raw (legal ids, no observations)"
            rows.append(Row(f"batched engine, {title}: decisions/s, {what}", "<br>".join(cells),
                            note="`VectorGame.step_random()`: uniform legal actions drawn in numba"))
            ns = [1e9 / values[(game, observe, n)] if values.get((game, observe, n)) else None
                  for n in SIZES]
            growth.append(f"| {title} | {'obs' if observe else 'raw'} | " +
                          " | ".join(DASH if x is None else f"{x:,.0f}" for x in ns) + " |")
    log("== python-policy path, adapters")
    g0 = "doudizhu" if "doudizhu" in games else games[0]  # the targets' game
    t0 = cardenvs.make_game(g0).info.title
    pp = guarded("python policy", lambda: python_policy_rate(g0, 1024, cfg))
    rows.append(Row(f"batched engine, {t0}: `step(actions)` with actions drawn in numpy, N=1024",
                    fmt_rate(pp), note="the path of a Python policy: legal ids -> numpy choice "
                                       "-> `step`, observations on"))
    se = guarded("SeatEnv", lambda: seatenv_rate(g0, cfg))
    rows.append(Row(f"SeatEnv (gymnasium), {t0}: learner steps/s",
                    f"{fmt_rate(se[0])} ({fmt_rate(se[1])} decisions/s)" if se else DASH,
                    note="seat 0 random learner, the other seats random opponents played inside "
                         "each step"))
    ve = {}
    if importlib.util.find_spec("stable_baselines3") is not None:
        for n in (64, 1024):
            ve[n] = guarded(f"SeatVecEnv N={n}", lambda: vecenv_rate(g0, n, cfg))
        rows.append(Row(f"SB3 VecEnv (`SeatVecEnv`), {t0}: learner steps/s",
                        "<br>".join(f"N={n}: {fmt_rate(v)}" for n, v in ve.items()),
                        note="random learner actions drawn in numpy; random opponents in numba; "
                             "obs copy, masks and infos as MaskablePPO gets them"))
    else:
        rows.append(Row("SB3 VecEnv (`SeatVecEnv`), learner steps/s", DASH,
                        note="stable-baselines3 not installed"))
    log("== peak memory, N=4096")
    mem = guarded("memory", lambda: peak_memory_mb(g0, 4096, masks=False))
    mem_m = guarded("memory masks", lambda: peak_memory_mb(g0, 4096, masks=True))
    values["mem"], values["mem_masks"] = mem, mem_m
    rows.append(Row(f"peak memory, N=4096 games of {t0} (MiB)",
                    f"{mem:,.0f} (with dense masks {mem_m:,.0f})" if mem and mem_m else DASH,
                    note="tracemalloc peak of the engine's arrays: states, observations, padded "
                         "legal ids (K=4096), final states; dense masks add N x A int8"))
    # anchors: reuse the run's own measurements when given
    av = dict(anchor_values or {})
    osr, ose, osc, rl = av.get("osr"), av.get("ose"), av.get("osc"), av.get("rl")
    if "doudizhu" in games and anchor_values is None:
        if anchors.get("openspiel"):
            log("== OpenSpiel random play")
            osr = guarded("openspiel play", lambda: openspiel_play(False, cfg))
            ose = guarded("openspiel play + obs", lambda: openspiel_play(True, cfg))
            osc = guarded("openspiel evaluate_bots", lambda: openspiel_cpp(cfg))
        if anchors.get("rlcard"):
            log("== RLCard")
            rl = guarded("rlcard", lambda: rlcard_rate(cfg))
    if "doudizhu" in games:
        rows.append(Row("anchors, 3-player Dou Dizhu: random decisions/s", DASH,
                        rlcard=fmt_rate(rl[0]) if rl else DASH,
                        openspiel=(f"{fmt_rate(osr['decisions_per_s'])} (Python loop); "
                                   f"{fmt_rate(osc['decisions_per_s'])} (C++ loop)"
                                   if osr and osc else DASH),
                        note="RLCard: `env.step` with its state encoding; OpenSpiel: "
                             "`legal_actions` + `apply_action` from Python, and `evaluate_bots`"))
        rows.append(Row("anchors, 3-player Dou Dizhu: decisions/s with observations", DASH,
                        rlcard=fmt_rate(rl[0]) if rl else DASH,
                        openspiel=fmt_rate(ose["decisions_per_s"]) if ose else DASH,
                        note="OpenSpiel: plus `observation_tensor(player)`"))
    # growth table
    extra.append("**Batched engine: cost per decision (ns) as N grows** (`step_random`, one "
                 "core; 4-player Dou Dizhu deals 25-card hands and shows 8 planes per rank, "
                 "3-player 17 cards and 4 planes):\n")
    extra.append("| game | outputs | " + " | ".join(f"N={n}" for n in SIZES) + " |")
    extra.append("| --- | --- | " + " | ".join("---:" for _ in SIZES) + " |")
    extra.extend(growth)
    extra.append("")
    # targets: every N of TARGET_SIZES must meet them
    if "doudizhu" in games:
        def at(observe: bool) -> tuple[float, str]:
            got = {n: values.get(("doudizhu", observe, n)) or 0.0 for n in TARGET_SIZES}
            low = min(got.values())
            cells = ", ".join(f"N={n}: {fmt_rate(r)}" for n, r in got.items())
            return low, cells

        raw_low, raw_cells = at(False)
        obs_low, obs_cells = at(True)
        sizes = ", ".join(str(n) for n in TARGET_SIZES)
        targets.append((
            f"batched engine, raw decisions/s >= {TARGET_RAW:,} at N = {sizes}",
            raw_cells, f"OpenSpiel {fmt_rate(osc['decisions_per_s']) if osc else DASH} (C++ loop)",
            f"lowest {fmt_rate(raw_low)}", _verdict(raw_low >= TARGET_RAW)))
        targets.append((
            f"batched engine, decisions/s with observations + legal ids >= {TARGET_OBS:,} at "
            f"N = {sizes}",
            obs_cells, f"OpenSpiel {fmt_rate(ose['decisions_per_s']) if ose else DASH} "
                       f"(with tensors)",
            f"lowest {fmt_rate(obs_low)}", _verdict(obs_low >= TARGET_OBS)))
        if mem is not None and mem_m is not None:
            targets.append((
                f"batched engine, peak memory of N = 4096 games < {TARGET_MEM_MB:,} MiB",
                f"{mem:,.0f} MiB ({mem_m:,.0f} with dense masks)", DASH,
                f"{max(mem, mem_m):,.0f} MiB", _verdict(max(mem, mem_m) < TARGET_MEM_MB)))
        else:
            targets.append((f"batched engine, peak memory of N = 4096 games < {TARGET_MEM_MB:,} "
                            f"MiB", DASH, DASH, "not measured", "SKIP"))
    return VectorSection("Batched engine and training adapters", rows, extra, targets, values)


def markdown(sec: VectorSection, header: list[tuple[str, str]]) -> str:
    out = ["# cardenvs batched-engine benchmarks", "", "| | |", "| --- | --- |"]
    out += [f"| {k} | {v} |" for k, v in header]
    out += ["", f"## {sec.title}", "", "| measure | cardenvs | RLCard | DouZero | OpenSpiel | notes |",
            "| --- | ---: | ---: | ---: | ---: | --- |"]
    out += [f"| {r.measure} | {r.cardenvs} | {r.rlcard} | {r.douzero} | {r.openspiel} | {r.note} |"
            for r in sec.rows]
    out.append("")
    out += sec.extra
    if sec.targets:
        out += ["**Targets** (3-player Dou Dizhu, one core):", "",
                "| target | cardenvs | anchor | value | result |", "| --- | ---: | ---: | ---: | --- |"]
        out += ["| " + " | ".join(x) + " |" for x in sec.targets]
    return "\n".join(out).rstrip() + "\n"


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="short run (~1 minute)")
    ap.add_argument("--games", default="doudizhu,doudizhu4",
                    help="comma-separated games for the engine rows (default doudizhu,doudizhu4)")
    ap.add_argument("--out", default=None, help="markdown file to write")
    ap.add_argument("--no-anchors", action="store_true", help="skip RLCard and OpenSpiel")
    ap.add_argument("--cpu", type=int, default=None, help="CPU to pin to")
    args = ap.parse_args(argv)
    games = tuple(g.strip() for g in args.games.split(",") if g.strip())
    unknown = [g for g in games if g not in cardenvs.GAMES]
    if unknown:
        ap.error(f"unknown game(s) {unknown}; known: {', '.join(cardenvs.GAMES)}")
    cfg = (Config(quick=True, budget=0.6, repeats=2, n_positions=0) if args.quick
           else Config(quick=False, budget=2.0, repeats=3, n_positions=0))
    pinned = pin_one_core(args.cpu)
    anchors = None if not args.no_anchors else {"rlcard": False, "openspiel": False}
    t0 = time.perf_counter()
    sec = measure_vector(cfg, anchors, games)
    header = [("CPU", f"{cpu_model()} ({os.cpu_count()} logical cores; {pinned})"),
              ("mode", ("quick" if cfg.quick else "full") +
               f": best of {cfg.repeats}, {cfg.budget:g} s per measurement"),
              ("peak memory (maxrss)", f"{peak_rss_mib():,.0f} MiB"),
              ("run time", f"{time.perf_counter() - t0:.0f} s")]
    text = markdown(sec, header)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
        log(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
