"""cardenvs benchmark suite: every game of ``cardenvs.GAMES`` side by side with RLCard, DouZero
and OpenSpiel (3-player Dou Dizhu), then the batched engine and the training adapters
(:mod:`benchmarks.vector`), on one core, in one process, in one report with every target.

Usage (from the repository root)::

    python -m benchmarks.run                 # full run (~6-8 minutes), writes benchmarks/results.md
    python -m benchmarks.run --quick         # ~2 minutes, indicative numbers, prints only
                                             # (unless --out is given)
    python -m benchmarks.run --games doudizhu,wakeng --out /tmp/bench.md
    python -m benchmarks.run --no-vector     # without the batched-engine section

See ``benchmarks/README.md`` for what each row measures.  Every throughput is the best of a few
repeats (the machine may be shared); anchors run in this same process one at a time, so every
ratio compares numbers measured in the same run.
"""

from __future__ import annotations

import os

# one core: must be set before numba (or any BLAS) is imported
for _v in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import datetime  # noqa: E402
import importlib  # noqa: E402
import importlib.util  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from importlib import metadata  # noqa: E402
from typing import Any, Callable, Optional  # noqa: E402

import numpy as np  # noqa: E402
import numba  # noqa: E402
from numba import njit  # noqa: E402

import cardenvs  # noqa: E402
from cardenvs.core.kernels import gen_legal, planes  # noqa: E402
from cardenvs.core.rollout import random_rollouts  # noqa: E402
from cardenvs.registry import REGISTRY  # noqa: E402
from cardenvs.core.state import (  # noqa: E402
    CUR, LAST_ROW, LAST_SEAT, LANDLORD, P_DONE, P_PLAY, PHASE, hand_off, kitty_off,
)

# the project's performance targets (printed with PASS/FAIL in the report)
TARGET_AEC_VS_RLCARD = 10.0  # AEC env steps/s >= 10x RLCard's env steps/s
TARGET_RAW_VS_OPENSPIEL = 5.0  # raw engine decisions/s >= 5x OpenSpiel's
TARGET_FREE_LEAD_US = 5.0  # free-lead legal-move generation <= 5 us on a 20-card hand
TARGET_WILD_VS_DDZ4 = 10.0  # wulong move generation <= 10x 4-player Dou Dizhu's (25 cards)
TARGET_PDK_VS_WAKENG = 1.5  # paodekuai free-lead Game.legal and AEC steps/s vs Wakeng's

DASH = "—"

#: under the targets of a ``--quick`` run
QUICK_NOTE = ("Quick mode: fewer positions and shorter timings than the full run, so these "
              "results are indicative only; ratios of sub-microsecond kernels (the Lanxi Wulong "
              "follow against 4-player Dou Dizhu's ~0.13 µs follow) vary by tens of percent "
              "from run to run. The targets are judged by the full run "
              "(`python -m benchmarks.run`).")


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


@dataclass
class Config:
    quick: bool
    budget: float  # seconds per throughput measurement (split over the repeats)
    repeats: int
    n_positions: int
    seed: int = 20240601


class Picker:
    """Uniform choices from a seeded ``numpy.random.Generator``, drawn in blocks.

    One ``Generator.integers`` call costs about a microsecond from Python; drawing 64k floats
    at a time keeps the policy's own cost out of what we measure (the same for every package).
    """

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.buf: list[float] = []

    def __call__(self, n: int) -> int:
        if not self.buf:
            self.buf = self.rng.random(65536).tolist()
        return int(self.buf.pop() * n)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def version(dist: str) -> Optional[str]:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def pin_one_core(cpu: Optional[int]) -> str:
    """Pin this process to one CPU (Linux); returns a description."""
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned (no sched_setaffinity)"
    allowed = sorted(os.sched_getaffinity(0))
    c = allowed[-1] if cpu is None else cpu
    if c not in allowed:
        raise ValueError(f"--cpu {c} is not one of the CPUs this process may use: {allowed}")
    os.sched_setaffinity(0, {c})
    return f"pinned to CPU {c}"


def peak_rss_mib() -> float:
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb / 1024.0 if sys.platform != "darwin" else kb / 2**20


def best_rate(run: Callable[[float], tuple[float, float]], cfg: Config) -> tuple[float, float]:
    """Best ``count / seconds`` over the repeats; ``run(seconds)`` returns ``(count, seconds)``.

    Returns ``(best rate, total count)``.
    """
    best, total = 0.0, 0.0
    for _ in range(cfg.repeats):
        n, dt = run(cfg.budget / cfg.repeats)
        total += n
        if dt > 0:
            best = max(best, n / dt)
    return best, total


def best_us_per_call(calls: Callable[[], int], cfg: Config) -> float:
    """Best µs per call of ``calls()`` (one pass over the positions, returning its call count)."""
    t_end = time.perf_counter() + cfg.budget
    best = float("inf")
    passes = 0
    while passes < cfg.repeats or (time.perf_counter() < t_end and passes < 50):
        t0 = time.perf_counter()
        n = calls()
        dt = time.perf_counter() - t0
        best = min(best, dt / max(n, 1) * 1e6)
        passes += 1
    return best


def fmt_rate(x: Optional[float]) -> str:
    return DASH if x is None else f"{x:,.0f}"


def fmt_us(x: Optional[float]) -> str:
    if x is None:
        return DASH
    return f"{x:.2f}" if x < 100 else f"{x:,.0f}"


def fmt_num(x: Optional[float]) -> str:
    return DASH if x is None else f"{x:.1f}"


@dataclass
class Row:
    measure: str
    cardenvs: str = DASH
    rlcard: str = DASH
    douzero: str = DASH
    openspiel: str = DASH
    note: str = ""


@dataclass
class Report:
    cfg: Config
    machine: list[tuple[str, str]] = field(default_factory=list)
    sections: list[tuple[str, list[Row]]] = field(default_factory=list)
    targets: list[tuple[str, str, str, str, str]] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    values: dict[str, float] = field(default_factory=dict)
    #: targets computed before the main ones are known, appended after them
    pending_targets: list[tuple[str, str, str, str, str]] = field(default_factory=list)

    def markdown(self) -> str:
        out = ["# cardenvs benchmarks", ""]
        out.append("| | |")
        out.append("| --- | --- |")
        for k, v in self.machine:
            out.append(f"| {k} | {v} |")
        out.append("")
        for title, rows in self.sections:
            out.append(f"## {title}")
            out.append("")
            out.append("| measure | cardenvs | RLCard | DouZero | OpenSpiel | notes |")
            out.append("| --- | ---: | ---: | ---: | ---: | --- |")
            for r in rows:
                out.append(f"| {r.measure} | {r.cardenvs} | {r.rlcard} | {r.douzero} | "
                           f"{r.openspiel} | {r.note} |")
            out.append("")
        if self.targets:
            out.append("## Targets")
            out.append("")
            out.append("| target | cardenvs | anchor | ratio / value | result |")
            out.append("| --- | ---: | ---: | ---: | --- |")
            for t in self.targets:
                if self.cfg.quick:
                    t = (*t[:4], f"{t[4]} (quick: indicative)")
                out.append("| " + " | ".join(t) + " |")
            out.append("")
            if self.cfg.quick:
                out.append(QUICK_NOTE)
                out.append("")
        out.extend(self.extra)
        return "\n".join(out).rstrip() + "\n"


def guarded(cell_name: str, fn: Callable[[], Any]) -> Any:
    """Run one measurement; on error print the traceback and return None (the run goes on)."""
    try:
        return fn()
    except Exception:  # noqa: BLE001 - a benchmark keeps going and reports the failure
        log(f"!! {cell_name} failed:")
        traceback.print_exc()
        return None


# ---------------------------------------------------------------------------------------------
# positions: free leads (the leader's hand right after the auction / kitty) and follows
# ---------------------------------------------------------------------------------------------


@dataclass
class Positions:
    free_states: list  # state vectors at a free lead
    free_counts: np.ndarray  # (N, 16) hands of the leader
    follow_states: list
    follow_counts: np.ndarray  # (M, 16) hands of the follower
    follow_prev: np.ndarray  # (M,) row to beat
    follow_src: list  # index of the free lead each follow comes from


def collect_positions(game, n: int, seed: int) -> Positions:
    """Random deals played at random until the play phase starts (a free lead), then one random
    lead (and, in the wild-joker games, its random joker picks) and the next seat's position (a
    follow of a random legal play)."""
    pick = Picker(seed)
    rng = np.random.default_rng(seed + 1)
    s = game.new_state()
    buf = np.zeros(game.n_actions + 1, np.int64)
    free_states, free_counts, follow_states, follow_counts, follow_prev = [], [], [], [], []
    follow_src: list[int] = []
    tries = 0
    while len(free_states) < n:
        tries += 1
        if tries > 20 * n + 100:
            raise RuntimeError(f"{game.info.name}: could not reach {n} free leads at random")
        game.reset(s, int(rng.integers(0, 2**62)))
        steps = 0
        while not (s[PHASE] == P_PLAY and s[LAST_ROW] < 0) and s[PHASE] != P_DONE and steps < 10000:
            k = game.legal(s, buf)
            game.step(s, int(buf[pick(k)]))
            steps += 1
        if s[PHASE] != P_PLAY or s[LAST_ROW] >= 0:
            continue
        seat = int(s[CUR])
        o = hand_off(seat)
        free_states.append(s.copy())
        free_counts.append(s[o:o + 16].copy())
        k = game.legal(s, buf)
        plays = [int(a) for a in buf[:k] if a < game.pass_id]
        if not plays:
            continue
        game.step(s, plays[pick(len(plays))])
        steps = 0
        while s[PHASE] not in (P_PLAY, P_DONE) and steps < 100:  # the lead's secondary
            k = game.legal(s, buf)                               # decisions (joker picks)
            game.step(s, int(buf[pick(k)]))
            steps += 1
        if s[PHASE] == P_PLAY and s[LAST_ROW] >= 0 and s[CUR] != s[LAST_SEAT]:
            f = int(s[CUR])
            o = hand_off(f)
            follow_states.append(s.copy())
            follow_counts.append(s[o:o + 16].copy())
            follow_prev.append(int(s[LAST_ROW]))
            follow_src.append(len(free_states) - 1)
    return Positions(free_states, np.array(free_counts, np.int64), follow_states,
                     np.array(follow_counts, np.int64).reshape(-1, 16),
                     np.array(follow_prev, np.int64), follow_src)


# ---------------------------------------------------------------------------------------------
# cardenvs measurements
# ---------------------------------------------------------------------------------------------

#: the games' own move generators, ``fn(counts, prev, tab, opts, out) -> k`` (the registry's
#: ``move_generator``): the plain :func:`gen_legal` on the tables of the wild-joker games'
#: *effective* plays would ignore the jokers, on a must-beat game's the rules it adds
WILD_GENERATORS = {name: tuple(s.move_generator.split(":")) for name, s in REGISTRY.items()
                   if s.move_generator}


@dataclass
class MoveGen:
    """How the benchmark generates a game's legal play rows for a hand and a play to beat."""

    name: str  # the function, for the notes
    fn: Optional[Callable]  # numba dispatcher; None: no standalone generator (Game.legal only)
    wild: bool  # fn(counts, prev, tab, opts, out) (wild) or gen_legal(counts, prev, tab, out)

    def call(self, game, counts, prev, out) -> int:
        if self.wild:
            return self.fn(counts, prev, game.tab, game.opts, out)
        return self.fn(counts, prev, game.tab, out)


def move_generator(name: str, game) -> MoveGen:
    """The move generator of game ``name``: :func:`gen_legal` for the plain games, the game's
    own generator (:data:`WILD_GENERATORS`) for the wild-joker and must-beat games."""
    if name in WILD_GENERATORS:
        mod, fn = WILD_GENERATORS[name]
        f = getattr(importlib.import_module(mod), fn, None)
        if f is None:
            log(f"!! {name}: {mod}.{fn} not found; move-generator rows skipped")
        what = "jokers wild" if getattr(getattr(game, "rules", None), "wilds", 0) else "its rules"
        return MoveGen(f"`{fn}(counts, prev, tab, opts, out)` ({what})", f, True)
    if getattr(getattr(game, "rules", None), "wilds", 0):
        log(f"!! {name} has wild jokers but no entry in WILD_GENERATORS; generator rows skipped")
        return MoveGen("(no standalone generator)", None, True)
    return MoveGen("`gen_legal(counts, prev, tab, out)`", gen_legal, False)



@njit(cache=True)
def _gen_loop(counts, prevs, tab, out, reps):
    """Kernel time: ``gen_legal`` over every position, ``reps`` times (no Python in the loop)."""
    total = 0
    for _ in range(reps):
        for i in range(counts.shape[0]):
            total += gen_legal(counts[i], prevs[i], tab, out)
    return total


@njit(cache=True)
def _planes_loop(counts, reps):
    """Time of the rank-plane conversion alone (the first step of ``gen_legal``)."""
    acc = np.int64(0)
    for _ in range(reps):
        for i in range(counts.shape[0]):
            lo, hi = planes(counts[i])
            acc ^= lo ^ hi
    return acc


# not cached: specialised on the generator's dispatcher (see cardenvs.core.rollout)
@njit(cache=False)
def _gen_loop_wild(gen, counts, prevs, tab, opts, out, reps):
    """Kernel time of a wild-joker game's own generator (``gen(counts, prev, tab, opts, out)``)."""
    total = 0
    for _ in range(reps):
        for i in range(counts.shape[0]):
            total += gen(counts[i], prevs[i], tab, opts, out)
    return total


def kernel_us(counts: np.ndarray, prevs: np.ndarray, game, mg: MoveGen, out,
              cfg: Config) -> tuple[float, float]:
    """(best µs per move-generator call inside numba, mean legal rows per call)."""
    tab = game.tab
    if mg.wild:
        def loop(c, p, reps):
            return _gen_loop_wild(mg.fn, c, p, tab, game.opts, out, reps)
    else:
        def loop(c, p, reps):
            return _gen_loop(c, p, tab, out, reps)
    loop(counts[:1], prevs[:1], 1)  # compile / load
    n = counts.shape[0]
    t0 = time.perf_counter()
    total = loop(counts, prevs, 1)
    one = max(time.perf_counter() - t0, 1e-6)
    reps = max(1, int(cfg.budget / cfg.repeats / one))
    best = float("inf")
    for _ in range(cfg.repeats):
        t0 = time.perf_counter()
        loop(counts, prevs, reps)
        best = min(best, (time.perf_counter() - t0) / (reps * n) * 1e6)
    return best, total / n


def planes_us(counts: np.ndarray, cfg: Config) -> float:
    _planes_loop(counts[:1], 1)
    reps = max(1, int(2e6 / counts.shape[0]))
    best = float("inf")
    for _ in range(cfg.repeats):
        t0 = time.perf_counter()
        _planes_loop(counts, reps)
        best = min(best, (time.perf_counter() - t0) / (reps * counts.shape[0]) * 1e6)
    return best


def python_gen_us(counts: np.ndarray, prevs: np.ndarray, game, mg: MoveGen, out,
                  cfg: Config) -> float:
    """µs per move-generator call from Python (numba dispatch included)."""
    rows = [counts[i] for i in range(counts.shape[0])]
    pv = [int(p) for p in prevs]
    tab, opts, fn = game.tab, game.opts, mg.fn
    if mg.wild:
        fn(rows[0], pv[0], tab, opts, out)

        def one_pass() -> int:
            for c, p in zip(rows, pv):
                fn(c, p, tab, opts, out)
            return len(rows)
    else:
        fn(rows[0], pv[0], tab, out)

        def one_pass() -> int:
            for c, p in zip(rows, pv):
                fn(c, p, tab, out)
            return len(rows)

    return best_us_per_call(one_pass, cfg)


def python_game_legal_us(game, states: list, cfg: Config) -> tuple[float, float]:
    """µs per ``Game.legal(state, out)`` from Python (the env's legal-action call; includes
    pass on follows) and the mean number of legal actions."""
    out = np.zeros(game.n_actions + 1, np.int64)
    mean = float(np.mean([game.legal(s, out) for s in states]))

    def one_pass() -> int:
        for s in states:
            game.legal(s, out)
        return len(states)

    return best_us_per_call(one_pass, cfg), mean


def free_lead_profile(game, counts: np.ndarray) -> dict[str, float]:
    """Where a free lead's time goes in the segment scan of :func:`gen_legal`
    (:func:`cardenvs.core.kernels.scan_ranges`), counted by a Python replica of it: segments
    visited (one run mask each; irregular ones test each body), segments jumped over
    (``SEG_SKIP``: no body of a shorter chain fits), groups whose body fits, kicker rows tested
    (a group with a kicker or row-bit index tests none: its rows are read from the index) and
    rows emitted.  The replica's rows are checked against ``gen_legal`` on every hand."""
    from cardenvs.core.kernels import (
        SEG_G0, SEG_G1, SEG_LEN, SEG_LONE, SEG_M, SEG_S0, SEG_SKIP,
    )
    from cardenvs.core.table import planes_of

    tab = game.tab
    seg = tab.seg
    nseg = seg.shape[0]
    n_groups = len(tab.g_lo)
    sizes = tab.g_end - tab.g_start
    row_lo, row_hi = tab.lo, tab.hi
    out = np.zeros(len(game.table) + 1, np.int64)
    indexed = (tab.g_kick >= 0) | (tab.g_bits >= 0)
    visited, irregular, fit_g, tested, lone, emitted, from_index = [], [], [], [], [], [], []
    for c in counts:
        lo, hi = planes_of(c)
        lo, hi = int(np.int64(lo)), int(np.int64(hi))
        vis = irr = fit = rt = ln = em = fi = 0

        def rows_of(g: int, is_lone: bool) -> tuple[int, int, int, int]:
            if is_lone:  # one row equal to its body: emitted without a test
                return 0, 1, 1, 0
            a, b = int(tab.g_start[g]), int(tab.g_end[g])
            ok = int(((((row_lo[a:b] & ~np.int64(lo)) | (row_hi[a:b] & ~np.int64(hi))) == 0)).sum())
            if indexed[g]:  # read from the group's index, none tested
                return 0, 0, ok, ok
            return b - a, 0, ok, 0

        i = int(tab.g_seg[0]) if n_groups else nseg
        while i < nseg and seg[i, SEG_G0] < n_groups:
            vis += 1
            g0, g1 = int(seg[i, SEG_G0]), int(min(seg[i, SEG_G1], n_groups))
            is_lone = seg[i, SEG_LONE] != 0
            m = int(seg[i, SEG_M])
            if m == 0:  # irregular: each body tested
                fitting = []
                for g in range(g0, g1):
                    irr += 1
                    if ((int(tab.g_lo[g]) & ~lo) | (int(tab.g_hi[g]) & ~hi)) == 0:
                        fitting.append(g)
            else:
                plane = (lo >> (16 * (m - 1))) & 0xFFFF if m <= 4 else (hi >> (16 * (m - 5))) & 0xFFFF
                run = plane
                for k in range(1, int(seg[i, SEG_LEN])):
                    run &= plane >> k
                full = (run >> int(seg[i, SEG_S0])) & ((1 << (int(seg[i, SEG_G1]) - g0)) - 1)
                if full == 0:
                    i = int(seg[i, SEG_SKIP])
                    continue
                fitting = [g0 + j for j in range(g1 - g0) if (full >> j) & 1]
            for g in fitting:
                fit += 1
                a, b_, e, x = rows_of(g, is_lone)
                rt += a
                ln += b_
                em += e
                fi += x
            i += 1
        k = gen_legal(c, -1, tab, out)
        if k != em:
            raise RuntimeError(f"profile replica emits {em} rows, gen_legal {k}")
        visited.append(vis)
        irregular.append(irr)
        fit_g.append(fit)
        tested.append(rt)
        lone.append(ln)
        emitted.append(em)
        from_index.append(fi)
    rt = np.array(tested)
    return {
        "groups": float(n_groups),
        "rows": float(len(tab.lo)),
        "largest_group": float(sizes.max()),
        "segments": float(nseg),
        "regular_segments": float((seg[:, SEG_M] > 0).sum()),
        "visited": float(np.mean(visited)),
        "irregular_bodies": float(np.mean(irregular)),
        "fit_groups": float(np.mean(fit_g)),
        "rows_tested": float(rt.mean()),
        "rows_tested_p50": float(np.percentile(rt, 50)),
        "rows_tested_p90": float(np.percentile(rt, 90)),
        "rows_tested_p99": float(np.percentile(rt, 99)),
        "lone_rows": float(np.mean(lone)),
        "rows_emitted": float(np.mean(emitted)),
        "rows_from_index": float(np.mean(from_index)),
    }


def raw_engine(game, encode: bool, cfg: Config) -> dict[str, float]:
    """Best games/s and decisions/s of :func:`random_rollouts` over the repeats."""
    random_rollouts(game, 2, cfg.seed, encode=encode)  # compile
    cal = random_rollouts(game, 200, cfg.seed, encode=encode)
    per_game = max(cal["seconds"] / 200, 1e-7)
    n_games = max(50, int(cfg.budget / cfg.repeats / per_game))
    best = None
    for i in range(cfg.repeats):
        r = random_rollouts(game, n_games, cfg.seed + i, encode=encode)
        if best is None or r["decisions_per_s"] > best["decisions_per_s"]:
            best = r
    return best


def aec_rate(module: str, observe: bool, cfg: Config) -> tuple[float, float]:
    """Best decisions/s of the AEC env with a masked random policy (``env.legal_actions()``),
    and decisions per game."""
    mod = importlib.import_module(f"cardenvs.{module}")
    env = mod.env()
    env.reset(seed=cfg.seed)
    pick = Picker(cfg.seed)
    stats = {"games": 0, "decisions": 0}

    def run(seconds: float) -> tuple[float, float]:
        n = 0
        t0 = time.perf_counter()
        t_end = t0 + seconds
        while time.perf_counter() < t_end:
            env.reset()
            stats["games"] += 1
            for agent in env.agent_iter():
                _, _, term, trunc, info = env.last(observe)
                if term or trunc:
                    action = None
                else:
                    legal = env.legal_actions()
                    action = legal[pick(len(legal))]
                    n += 1
                env.step(action)
        stats["decisions"] += n
        return n, time.perf_counter() - t0

    rate, _ = best_rate(run, cfg)
    return rate, stats["decisions"] / max(stats["games"], 1)


# ---------------------------------------------------------------------------------------------
# anchors
# ---------------------------------------------------------------------------------------------

#: DouZero card values of the rank indices of "3456789TJQKA2BR"
DOUZERO_VALUES = [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 17, 20, 30]


def to_douzero(counts) -> list[int]:
    out = []
    for r in range(15):
        out.extend([DOUZERO_VALUES[r]] * int(counts[r]))
    return out


def rlcard_rate(cfg: Config) -> tuple[float, float]:
    """RLCard ``doudizhu`` env steps/s (its state encoding included) and steps per game."""
    import rlcard

    env = rlcard.make("doudizhu", config={"seed": cfg.seed})
    pick = Picker(cfg.seed)
    stats = {"games": 0, "steps": 0}

    def run(seconds: float) -> tuple[float, float]:
        n = 0
        t0 = time.perf_counter()
        t_end = t0 + seconds
        while time.perf_counter() < t_end:
            state, _ = env.reset()
            stats["games"] += 1
            while not env.is_over():
                legal = list(state["legal_actions"].keys())
                state, _ = env.step(legal[pick(len(legal))])
                n += 1
        stats["steps"] += n
        return n, time.perf_counter() - t0

    rate, _ = best_rate(run, cfg)
    return rate, stats["steps"] / max(stats["games"], 1)


def douzero_free(pos: Positions, cfg: Config) -> dict[str, float]:
    from douzero.env.game import GameEnv
    from douzero.env.move_generator import MovesGener

    hands = [to_douzero(c) for c in pos.free_counts]

    def gen_pass() -> int:
        for h in hands:
            MovesGener(h).gen_moves()
        return len(hands)

    mg_us = best_us_per_call(gen_pass, cfg)
    mg_mean = float(np.mean([len(MovesGener(h).gen_moves()) for h in hands]))
    envs = []
    for h in hands:
        e = GameEnv(players={})
        e.acting_player_position = "landlord"
        e.info_sets["landlord"].player_hand_cards = list(h)
        e.card_play_action_seq = []
        envs.append(e)

    full_us, full_mean = _time_douzero_legal(envs, cfg)
    return {"mg_us": mg_us, "mg_mean": mg_mean, "full_us": full_us, "full_mean": full_mean}


def _time_douzero_legal(envs, cfg: Config) -> tuple[float, float]:
    """µs per ``GameEnv.get_legal_card_play_actions()`` call and the mean number of moves."""

    def full_pass() -> int:
        for e in envs:
            e.get_legal_card_play_actions()
        return len(envs)

    us = best_us_per_call(full_pass, cfg)
    return us, float(np.mean([len(e.get_legal_card_play_actions()) for e in envs]))


def douzero_follow(game, pos: Positions, cfg: Config) -> dict[str, float]:
    from douzero.env import move_detector as md
    from douzero.env.game import GameEnv

    envs = []
    skipped = 0
    for c, prev in zip(pos.follow_counts, pos.follow_prev):
        pv = to_douzero(game.tab.counts[prev])
        if md.get_move_type(pv)["type"] == md.TYPE_15_WRONG:
            skipped += 1  # a play of our move set DouZero does not know
            continue
        e = GameEnv(players={})
        e.acting_player_position = "landlord_down"
        e.info_sets["landlord_down"].player_hand_cards = to_douzero(c)
        e.card_play_action_seq = [pv]
        envs.append(e)

    full_us, full_mean = _time_douzero_legal(envs, cfg)
    return {"full_us": full_us, "full_mean": full_mean, "skipped": skipped, "n": len(envs)}


_OS_JOKERS = {"B": 52, "R": 53}


def _os_parse(text: str) -> tuple[int, ...]:
    """Counts per rank index of an OpenSpiel dou_dizhu play string (``"33"``, ``"(BWJ)(CJ)"``,
    ``"333444-89"`` = body-kickers)."""
    order = "3456789TJQKA2BR"
    t = text.replace("(BWJ)", "B").replace("(CJ)", "R").replace("-", "")
    c = [0] * 16
    for ch in t:
        c[order.index(ch)] += 1
    return tuple(c)


def _os_position(pyspiel_game, hands: list, kitty) -> Any:
    """An OpenSpiel state where player 0 has bid 3, taken ``kitty`` and must lead.

    ``hands[i]`` are OpenSpiel player i's 17 dealt cards (counts per rank index).  Observed
    OpenSpiel conventions: chance action ``u < 51`` picks the face-up card (first bidder
    ``u % 3``), deal action ``51 + card`` gives card (rank ``card % 13`` for ``card < 52``,
    52 = black joker, 53 = red joker) to player ``k % 3`` for the k-th card dealt; the 3 cards
    never dealt are the kitty; action 3 is "Bid 3".
    """
    suit = [0] * 15
    ids = []
    for c in list(hands) + [kitty]:
        lst = []
        for r in range(15):
            for _ in range(int(c[r])):
                if r >= 13:
                    lst.append(_OS_JOKERS["B" if r == 13 else "R"])
                else:
                    lst.append(r + 13 * suit[r])
                    suit[r] += 1
        ids.append(lst)
    s = pyspiel_game.new_initial_state()
    s.apply_action(0)
    for k in range(51):
        s.apply_action(51 + ids[k % 3][k // 3])
    s.apply_action(3)  # bid 3: player 0 is landlord and takes the kitty
    return s


def openspiel_positions(game, pos: Positions):
    """OpenSpiel states of the same free leads (landlord = player 0) and follows (player 1)."""
    import pyspiel

    g = pyspiel.load_game("dou_dizhu")
    free, follow = [], []
    follow_of = {src: i for i, src in enumerate(pos.follow_src)}
    skipped = 0
    for i, st in enumerate(pos.free_states):
        ll = int(st[LANDLORD])
        if ll < 0:
            continue
        kitty = st[kitty_off(3):kitty_off(3) + 16]
        seats = [ll, (ll + 1) % 3, (ll + 2) % 3]
        hands = [st[hand_off(q):hand_off(q) + 16].copy() for q in seats]
        hands[0] = hands[0] - kitty
        s = _os_position(g, hands, kitty)
        if i == 0:  # check the mapping once
            want = "".join("3456789TJQKA2BR"[r] * int(pos.free_counts[0][r]) for r in range(15))
            got = s.observation_string(0).split("\n")[0].replace("My hand ", "")
            got = got.replace("(BWJ)", "B").replace("(CJ)", "R")
            if got != want:
                raise RuntimeError(f"OpenSpiel position mapping is off: {got} != {want}")
        free.append(s)
        if i in follow_of:
            j = follow_of[i]
            want = tuple(int(x) for x in game.tab.counts[pos.follow_prev[j]])
            match = [a for a in s.legal_actions() if _os_parse(s.action_to_string(a)) == want]
            if not match:
                skipped += 1
                continue
            f = s.clone()
            f.apply_action(match[0])
            follow.append(f)
    return free, follow, skipped


def openspiel_legal_us(states: list, cfg: Config) -> tuple[float, float]:
    def one_pass() -> int:
        for s in states:
            s.legal_actions()
        return len(states)

    return best_us_per_call(one_pass, cfg), float(np.mean([len(s.legal_actions()) for s in states]))


def openspiel_play(observe: bool, cfg: Config) -> dict[str, float]:
    """OpenSpiel dou_dizhu random play from Python: decisions/s counting only the decision steps
    (``legal_actions`` + ``apply_action`` [+ ``observation_tensor``]), and games/s with the deal
    (52 chance steps through ``chance_outcomes``) included."""
    import pyspiel

    g = pyspiel.load_game("dou_dizhu")
    pick = Picker(cfg.seed)
    best = {"decisions_per_s": 0.0, "games_per_s": 0.0, "decisions_per_game": 0.0}

    for _ in range(cfg.repeats):
        n = games = 0
        t_chance = 0.0
        t0 = time.perf_counter()
        t_end = t0 + cfg.budget / cfg.repeats
        while time.perf_counter() < t_end:
            s = g.new_initial_state()
            games += 1
            while not s.is_terminal():
                if s.is_chance_node():
                    c0 = time.perf_counter()
                    while s.is_chance_node():
                        outs = s.chance_outcomes()
                        s.apply_action(outs[pick(len(outs))][0])
                    t_chance += time.perf_counter() - c0
                    continue
                if observe:
                    s.observation_tensor(s.current_player())
                la = s.legal_actions()
                s.apply_action(la[pick(len(la))])
                n += 1
        dt = time.perf_counter() - t0
        dps = n / max(dt - t_chance, 1e-9)
        if dps > best["decisions_per_s"]:
            best = {"decisions_per_s": dps, "games_per_s": games / dt,
                    "decisions_per_game": n / max(games, 1)}
    return best


def openspiel_cpp(cfg: Config) -> dict[str, float]:
    """OpenSpiel random play with no Python in the loop: ``pyspiel.evaluate_bots`` with three
    ``make_uniform_random_bot`` bots (the deal's chance steps included, in C++)."""
    import pyspiel

    g = pyspiel.load_game("dou_dizhu")
    bots = [pyspiel.make_uniform_random_bot(p, cfg.seed + p) for p in range(3)]
    # decisions per game, from an untimed sample (history minus the chance steps)
    dec = []
    for i in range(200):
        s = g.new_initial_state()
        pyspiel.evaluate_bots(s, bots, cfg.seed + i)
        n_chance = sum(1 for h in s.full_history() if h.player == -1)  # the chance player
        dec.append(len(s.history()) - n_chance)
    per_game = float(np.mean(dec))
    seed = [cfg.seed]

    def run(seconds: float) -> tuple[float, float]:
        games = 0
        t0 = time.perf_counter()
        t_end = t0 + seconds
        while time.perf_counter() < t_end:
            for _ in range(50):
                seed[0] += 1
                pyspiel.evaluate_bots(g.new_initial_state(), bots, seed[0])
            games += 50
        return games, time.perf_counter() - t0

    gps, _ = best_rate(run, cfg)
    return {"games_per_s": gps, "decisions_per_s": gps * per_game, "decisions_per_game": per_game}


# ---------------------------------------------------------------------------------------------
# the run
# ---------------------------------------------------------------------------------------------


def measure_ours(name: str, cfg: Config, defer: tuple[str, ...] = ()) -> dict[str, Any]:
    """Every cardenvs measurement of one game (rows 1-3), except those in ``defer`` (``"raw"``,
    ``"aec"``), which :func:`measure_anchors` measures interleaved with their anchor."""
    log(f"== {name}")
    game = cardenvs.make_game(name)
    pos = collect_positions(game, cfg.n_positions, cfg.seed)
    out = np.zeros(game.n_actions + 1, np.int64)
    free_prev = np.full(len(pos.free_counts), -1, np.int64)
    m: dict[str, Any] = {"game": game, "pos": pos, "module": cardenvs.GAMES[name]}
    m["h_free"] = float(pos.free_counts.sum(1).mean())
    m["h_follow"] = float(pos.follow_counts.sum(1).mean()) if len(pos.follow_counts) else 0.0
    mg = move_generator(name, game)
    m["mg"] = mg
    log("  legal-move generation (kernel loop / from Python)")
    if mg.fn is not None:
        m["kf"] = guarded("free kernel", lambda: kernel_us(pos.free_counts, free_prev, game, mg,
                                                           out, cfg))
        m["pf"] = guarded("free python", lambda: python_gen_us(pos.free_counts, free_prev, game,
                                                               mg, out, cfg))
    m["gf"] = guarded("free Game.legal", lambda: python_game_legal_us(game, pos.free_states, cfg))
    if len(pos.follow_counts):
        fc, fp = pos.follow_counts, pos.follow_prev
        if mg.fn is not None:
            m["kw"] = guarded("follow kernel", lambda: kernel_us(fc, fp, game, mg, out, cfg))
            m["pw"] = guarded("follow python", lambda: python_gen_us(fc, fp, game, mg, out, cfg))
        m["gw"] = guarded("follow Game.legal", lambda: python_game_legal_us(game, pos.follow_states, cfg))
    if name == "doudizhu4" and mg.fn is not None:
        # 25-card hands (the seats other than the leader, right after the auction), the hand
        # size of Lanxi Wulong: the reference of its move-generation target
        h25 = np.array([st[hand_off(q):hand_off(q) + 16] for st in pos.free_states
                        for q in range(game.n_players) if q != int(st[CUR])], np.int64)
        h25 = h25[h25.sum(1) == 25]
        m["h25_n"] = len(h25)
        m["kf25"] = guarded("free kernel 25", lambda: kernel_us(
            h25, np.full(len(h25), -1, np.int64), game, mg, out, cfg))
    log("  raw engine (numba random rollouts)")
    if "raw" not in defer:
        m["raw"] = guarded("raw engine", lambda: raw_engine(game, False, cfg))
    m["raw_e"] = guarded("raw engine + encode", lambda: raw_engine(game, True, cfg))
    log("  AEC env")
    if "aec" not in defer:
        m["aec"] = guarded("AEC", lambda: aec_rate(m["module"], True, cfg))
        m["aec_no"] = guarded("AEC no observe", lambda: aec_rate(m["module"], False, cfg))
    if name == "doudizhu" and m.get("kf"):
        m["profile_n"] = min(500, len(pos.free_counts))
        m["profile"] = guarded("profile", lambda: free_lead_profile(game, pos.free_counts[:500]))
        m["planes_us"] = guarded("planes", lambda: planes_us(pos.free_counts, cfg))
    return m


def measure_anchors(m: dict[str, Any], cfg: Config, anchors: dict[str, bool]) -> dict[str, Any]:
    """RLCard, DouZero and OpenSpiel on 3-player Dou Dizhu (the same positions as ours)."""
    game, pos = m["game"], m["pos"]
    a: dict[str, Any] = {}
    if anchors["douzero"]:
        log("  DouZero move generation")
        a["dz_free"] = guarded("douzero free", lambda: douzero_free(pos, cfg))
        a["dz_follow"] = guarded("douzero follow", lambda: douzero_follow(game, pos, cfg))
    if anchors["openspiel"]:
        log("  OpenSpiel legal actions on the same positions")
        osp = guarded("openspiel positions", lambda: openspiel_positions(game, pos))
        if osp:
            a["os_free"] = guarded("openspiel free", lambda: openspiel_legal_us(osp[0], cfg))
            if osp[1]:
                a["os_follow"] = guarded("openspiel follow", lambda: openspiel_legal_us(osp[1], cfg))
            a["os_skipped"] = osp[2]
        log("  OpenSpiel random play")
        a["ose"] = guarded("openspiel play + obs", lambda: openspiel_play(True, cfg))
        a["osc"] = guarded("openspiel evaluate_bots", lambda: openspiel_cpp(cfg))
        log("  raw engine and OpenSpiel's Python loop, interleaved")
        m["raw"], a["osr"] = paired([lambda c: raw_engine(game, False, c),
                                     lambda c: openspiel_play(False, c)],
                                    lambda r: r["decisions_per_s"], cfg)
    if anchors["rlcard"]:
        log("  AEC env and RLCard env, interleaved")
        m["aec"], m["aec_no"], a["rl"] = paired([lambda c: aec_rate(m["module"], True, c),
                                                 lambda c: aec_rate(m["module"], False, c),
                                                 rlcard_rate], lambda r: r[0], cfg)
    return a


def paired(fns: list[Callable[[Config], Any]], rate: Callable[[Any], float],
           cfg: Config) -> list[Any]:
    """Best of ``cfg.repeats`` rounds of every function in ``fns``, run one after the other in
    each round, so that ratios between them see the same machine load (it may be shared)."""
    best: list[Any] = [None] * len(fns)
    for r in range(cfg.repeats):
        sub = Config(cfg.quick, cfg.budget / cfg.repeats, 1, cfg.n_positions, cfg.seed + 7919 * r)
        for i, fn in enumerate(fns):
            res = guarded(f"paired measurement {i}", lambda: fn(sub))
            if res is not None and (best[i] is None or rate(res) > rate(best[i])):
                best[i] = res
    return best


def build_rows(name: str, m: dict[str, Any], a: dict[str, Any], rep: Report,
               anchors: dict[str, bool]) -> None:
    """The markdown rows of one game; fills ``rep.values`` for the targets."""
    ddz = name == "doudizhu"
    game, pos, module = m["game"], m["pos"], m["module"]
    g = m.get
    kf, pf, gf, kw, pw, gw = g("kf"), g("pf"), g("gf"), g("kw"), g("pw"), g("gw")
    raw, raw_e, aec, aec_no = g("raw"), g("raw_e"), g("aec"), g("aec_no")
    dz_free, dz_follow = a.get("dz_free"), a.get("dz_follow")
    os_free, os_follow = a.get("os_free"), a.get("os_follow")
    osr, ose, osc, rl = a.get("osr"), a.get("ose"), a.get("osc"), a.get("rl")
    h_free, h_follow = m["h_free"], m["h_follow"]
    n_free, n_follow = len(pos.free_counts), len(pos.follow_counts)

    def note(ours: str, *theirs: str) -> str:
        return "; ".join([ours] + (list(t for t in theirs if t) if ddz else []))

    mg = m["mg"]
    wild = bool(getattr(getattr(game, "rules", None), "wilds", 0))  # wild jokers
    gen_note = (f"{mg.name}: the game's own generator (the plain `gen_legal` on a table of "
                f"effective plays would ignore the wild jokers)" if wild else
                f"{mg.name}: the game's own generator (its play rules on top of `gen_legal`)"
                if mg.wild else mg.name)
    first = "right after the auction" if game.blocks.get("bid") else "at the start of the play"
    v = rep.values
    if kf:
        v[f"{name}.free_kernel_us"] = kf[0]
    if kw:
        v[f"{name}.follow_kernel_us"] = kw[0]
    if gf:
        v[f"{name}.free_legal_us"] = gf[0]
    if m.get("kf25"):
        v[f"{name}.free25_kernel_us"] = m["kf25"][0]
    v[f"{name}.free_hand"] = h_free
    if raw:
        v[f"{name}.raw_dps"] = raw["decisions_per_s"]
        if raw["max_abs_reward_sum"] != 0 and game.info.zero_sum:
            rep.extra.append(f"**Warning**: {name} random deals were not zero-sum "
                             f"(max |sum| {raw['max_abs_reward_sum']}).\n")
    if aec:
        v[f"{name}.aec"] = aec[0]
    if aec_no:
        v[f"{name}.aec_noobs"] = aec_no[0]
    if ddz and osr:
        v["openspiel.dps"] = osr["decisions_per_s"]
        v["openspiel.dps_with_deal"] = osr["games_per_s"] * osr["decisions_per_game"]
    if ddz and osc:
        v["openspiel.cpp_dps"] = osc["decisions_per_s"]
    if ddz and rl:
        v["rlcard.steps"] = rl[0]
    na = "n/a" if ddz and anchors["openspiel"] else DASH

    rows = [
        Row(f"legal moves, free lead ({h_free:.0f}-card hand): kernel, µs/call",
            fmt_us(kf[0] if kf else None), openspiel=na,
            note=note(f"{gen_note}, prev = -1, in a numba loop over {n_free} leads {first}",
                      "OpenSpiel's C++ generator is reachable only through Python")),
        Row("legal moves, free lead: move generator from Python, µs/call",
            fmt_us(pf), douzero=fmt_us(dz_free["mg_us"]) if dz_free else DASH,
            note=note(f"{mg.name}, prev = -1, numba dispatch included",
                      "DouZero: `MovesGener(hand).gen_moves()`")),
        Row("legal moves, free lead: full legal-action call from Python, µs/call",
            fmt_us(gf[0] if gf else None),
            douzero=fmt_us(dz_free["full_us"]) if dz_free else DASH,
            openspiel=fmt_us(os_free[0]) if os_free else DASH,
            note=note("`Game.legal(state, out)`",
                      "DouZero: `GameEnv.get_legal_card_play_actions()`",
                      "OpenSpiel: `state.legal_actions()` (building the Python list included)")),
        Row("legal moves per free lead (mean)",
            fmt_num(gf[1] if gf else None),
            douzero=fmt_num(dz_free["full_mean"]) if dz_free else DASH,
            openspiel=fmt_num(os_free[1]) if os_free else DASH,
            note=note("`Game.legal` ids: one per effective play (which jokers stand in is a "
                      "follow-up decision), plus any other action open then (Wulong's 报牌)"
                      if wild else "one action per (cards, reading)",
                      "the packages' move sets differ")),
    ]
    if m.get("kf25"):
        rows.append(Row("legal moves, free lead (25-card hand of a seat that is not leading): "
                        "kernel, µs/call", fmt_us(m["kf25"][0]),
                        note=f"{m['h25_n']} hands of the other seats at the free leads above: "
                             f"the hand size of Lanxi Wulong (its move-generation target)"))
    if n_follow:
        skipped = []
        if dz_follow and dz_follow["skipped"]:
            skipped.append(f"DouZero: {dz_follow['skipped']} leads it cannot read skipped")
        if a.get("os_skipped"):
            skipped.append(f"OpenSpiel: {a['os_skipped']} leads outside its move set skipped")
        rows += [
            Row(f"legal moves, follow ({h_follow:.0f}-card hand, random legal lead): kernel, µs/call",
                fmt_us(kw[0] if kw else None), openspiel=na,
                note=f"{n_follow} follows: the next seat against a uniformly random legal lead"),
            Row("legal moves, follow: move generator from Python, µs/call", fmt_us(pw),
                note=mg.name),
            Row("legal moves, follow: full legal-action call from Python, µs/call",
                fmt_us(gw[0] if gw else None),
                douzero=fmt_us(dz_follow["full_us"]) if dz_follow else DASH,
                openspiel=fmt_us(os_follow[0]) if os_follow else DASH,
                note=note("as for free leads, pass included", *skipped)),
            Row("legal moves per follow (mean, pass included)", fmt_num(gw[1] if gw else None),
                douzero=fmt_num(dz_follow["full_mean"]) if dz_follow else DASH,
                openspiel=fmt_num(os_follow[1]) if os_follow else DASH),
        ]
    rows += [
        Row("raw engine: random games/s",
            fmt_rate(raw["games_per_s"] if raw else None),
            openspiel=fmt_rate(osr["games_per_s"]) if osr else DASH,
            note=note("`random_rollouts`: the whole game in numba (deal and every phase)",
                      "OpenSpiel: Python loop, the deal's 52 chance steps included")),
        Row("raw engine: random decisions/s",
            fmt_rate(raw["decisions_per_s"] if raw else None),
            openspiel=fmt_rate(osr["decisions_per_s"]) if osr else DASH,
            note=note("every action of the deal (auction and play)" if ddz else
                      "every decision of every phase",
                      "OpenSpiel: `legal_actions()` + `apply_action()` from Python, time of the "
                      "chance steps left out")),
    ]
    if osc:
        rows.append(Row(
            "raw engine, no Python in the loop: games/s / decisions/s",
            f"{fmt_rate(raw['games_per_s'])} / {fmt_rate(raw['decisions_per_s'])}" if raw else DASH,
            openspiel=f"{fmt_rate(osc['games_per_s'])} / {fmt_rate(osc['decisions_per_s'])}",
            note="OpenSpiel: `pyspiel.evaluate_bots` with three `make_uniform_random_bot` "
                 "(its C++ loop, deal included)"))
    rows += [
        Row("raw engine + observation encoding: decisions/s",
            fmt_rate(raw_e["decisions_per_s"] if raw_e else None),
            openspiel=fmt_rate(ose["decisions_per_s"]) if ose else DASH,
            note=note("`k_encode` of the seat to move at every decision",
                      "OpenSpiel: plus `observation_tensor(player)`")),
        Row("env steps/s, masked random policy (with observation)",
            fmt_rate(aec[0] if aec else None),
            rlcard=fmt_rate(rl[0]) if rl else DASH,
            note=note(f"`{module}.env()`: `env.last()` + uniform pick from `env.legal_actions()`",
                      "RLCard: `env.step` with its state encoding, uniform legal action")),
        Row("env steps/s without observe", fmt_rate(aec_no[0] if aec_no else None),
            note="`env.last(observe=False)`"),
        Row("decisions per game (mean)",
            fmt_num(raw["decisions_per_game"] if raw else None),
            rlcard=fmt_num(rl[1]) if rl else DASH,
            openspiel=fmt_num(osr["decisions_per_game"]) if osr else DASH,
            note=note("auction included" if ddz else "every decision, all phases, default options",
                      "RLCard has no auction")),
    ]
    rep.sections.append((f"{game.info.title} (`{name}`)", rows))

    prof, pl = m.get("profile"), m.get("planes_us")
    if prof and kf:
        pl_text = f" `planes(counts)` alone takes {pl:.3f} µs of the {kf[0]:.2f} µs." if pl else ""
        rep.extra.append(
            f"**Free-lead kernel profile** ({name}, {h_free:.0f}-card hands, "
            f"{m['profile_n']} positions): the table has {prof['rows']:,.0f} rows in "
            f"{prof['groups']:,.0f} body groups (largest {prof['largest_group']:,.0f} rows) and "
            f"{prof['segments']:,.0f} segments ({prof['regular_segments']:,.0f} regular runs of "
            f"bodies). A free lead visits {prof['visited']:.1f} segments on average, one run "
            f"mask each (the others are jumped over: no body of a shorter chain fits)"
            + (f", and tests {prof['irregular_bodies']:.1f} bodies of irregular segments one "
               f"by one" if prof["regular_segments"] < prof["segments"] else "") +
            f"; {prof['fit_groups']:.1f} groups fit, and their kicker rows cost "
            f"{prof['rows_tested']:.0f} row tests on average (median "
            f"{prof['rows_tested_p50']:.0f}, p90 {prof['rows_tested_p90']:.0f}, p99 "
            f"{prof['rows_tested_p99']:.0f}), plus {prof['lone_rows']:.1f} single-row groups "
            f"emitted without a test and {prof.get('rows_from_index', 0):.1f} rows read from "
            f"kicker / row-bit indexes, for {prof['rows_emitted']:.1f} rows emitted."
            f"{pl_text}\n")


def wild_vs_ddz4(rep: Report) -> None:
    """The wild-joker target: Lanxi Wulong's move generation (wild jokers) at most
    :data:`TARGET_WILD_VS_DDZ4` times slower than 4-player Dou Dizhu's on 25-card hands: free
    leads (4-player Dou Dizhu: the 25-card hands of the seats not leading) and follows (both
    games: the next seat's 25 cards against a random legal lead)."""
    v = rep.values
    name = f"Lanxi Wulong: move generation <= {TARGET_WILD_VS_DDZ4:g}x slower than 4-player " \
           f"Dou Dizhu's on 25-card hands (kernel)"
    pairs = [("free lead", "wulong.free_kernel_us", "doudizhu4.free25_kernel_us"),
             ("follow", "wulong.follow_kernel_us", "doudizhu4.follow_kernel_us")]
    have = [(what, v[a], v[b]) for what, a, b in pairs if a in v and b in v]
    if "wulong.free_kernel_us" not in v and "doudizhu4.free_kernel_us" not in v:
        return  # neither game measured
    if len(have) < len(pairs):
        rep.pending_targets.append((name, DASH, DASH, "not measured (run both games)", "SKIP"))
        return
    ratios = [w / d for _, w, d in have]
    rep.pending_targets.append((
        name,
        "; ".join(f"{what} {w:.2f} µs" for what, w, _ in have),
        "; ".join(f"{what} {d:.2f} µs" for what, _, d in have),
        "; ".join(f"{what} {r:.1f}x" for (what, _, _), r in zip(have, ratios)),
        "**PASS**" if max(ratios) <= TARGET_WILD_VS_DDZ4 else "**FAIL**"))


def pdk_vs_wakeng(rep: Report) -> None:
    """Pao De Kuai's target: free-lead ``Game.legal`` at most :data:`TARGET_PDK_VS_WAKENG` times
    Wakeng's (same deck size class: 16-card hands) and AEC env steps/s at least 1 /
    :data:`TARGET_PDK_VS_WAKENG` of Wakeng's."""
    v = rep.values
    name = (f"Pao De Kuai: free-lead `Game.legal` and AEC env steps/s within "
            f"{TARGET_PDK_VS_WAKENG:g}x of Wakeng's")
    keys = ["paodekuai.free_legal_us", "wakeng.free_legal_us", "paodekuai.aec", "wakeng.aec"]
    if "paodekuai.free_legal_us" not in v and "wakeng.free_legal_us" not in v:
        return
    if any(k not in v for k in keys):
        rep.pending_targets.append((name, DASH, DASH, "not measured (run both games)", "SKIP"))
        return
    legal = v["paodekuai.free_legal_us"] / v["wakeng.free_legal_us"]
    steps = v["wakeng.aec"] / v["paodekuai.aec"]
    rep.pending_targets.append((
        name, f"{v['paodekuai.free_legal_us']:.2f} µs; {fmt_rate(v['paodekuai.aec'])} steps/s",
        f"{v['wakeng.free_legal_us']:.2f} µs; {fmt_rate(v['wakeng.aec'])} steps/s",
        f"Game.legal {legal:.2f}x; steps {steps:.2f}x slower",
        "**PASS**" if max(legal, steps) <= TARGET_PDK_VS_WAKENG else "**FAIL**"))


def main(argv: Optional[list[str]] = None) -> int:
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

    games = list(cardenvs.GAMES) if args.games is None else [g.strip() for g in args.games.split(",") if g.strip()]
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
    v = rep.values
    if "doudizhu" in games:
        def verdict(ok: bool) -> str:
            return "**PASS**" if ok else "**FAIL**"

        if "doudizhu.aec" in v and "rlcard.steps" in v:
            r = v["doudizhu.aec"] / v["rlcard.steps"]
            rn = v.get("doudizhu.aec_noobs", 0.0) / v["rlcard.steps"]
            rep.targets.append((
                f"Dou Dizhu: AEC env steps/s >= {TARGET_AEC_VS_RLCARD:g}x RLCard's",
                fmt_rate(v["doudizhu.aec"]), fmt_rate(v["rlcard.steps"]),
                f"{r:.1f}x (without observe {rn:.1f}x)", verdict(r >= TARGET_AEC_VS_RLCARD)))
        else:
            rep.targets.append((f"Dou Dizhu: AEC env steps/s >= {TARGET_AEC_VS_RLCARD:g}x RLCard's",
                                fmt_rate(v.get("doudizhu.aec")), "not measured", DASH, "SKIP"))
        if "doudizhu.raw_dps" in v and "openspiel.dps" in v:
            r = v["doudizhu.raw_dps"] / v["openspiel.dps"]
            more = [f"with its deal {v['doudizhu.raw_dps'] / v['openspiel.dps_with_deal']:.1f}x"]
            if "openspiel.cpp_dps" in v:
                more.append(f"vs its C++ loop {v['doudizhu.raw_dps'] / v['openspiel.cpp_dps']:.1f}x")
            rep.targets.append((
                f"Dou Dizhu: raw engine decisions/s >= {TARGET_RAW_VS_OPENSPIEL:g}x OpenSpiel's "
                "(Python loop, decision steps only)",
                fmt_rate(v["doudizhu.raw_dps"]), fmt_rate(v["openspiel.dps"]),
                f"{r:.1f}x ({'; '.join(more)})", verdict(r >= TARGET_RAW_VS_OPENSPIEL)))
        else:
            rep.targets.append((f"Dou Dizhu: raw engine decisions/s >= {TARGET_RAW_VS_OPENSPIEL:g}x OpenSpiel's (Python loop, decision steps only)",
                                fmt_rate(v.get("doudizhu.raw_dps")), "not measured", DASH, "SKIP"))
        if "doudizhu.free_kernel_us" in v:
            us = v["doudizhu.free_kernel_us"]
            rep.targets.append((
                f"Dou Dizhu: free-lead move generation <= {TARGET_FREE_LEAD_US:g} µs "
                f"({v['doudizhu.free_hand']:.0f}-card hand, kernel)",
                f"{us:.2f} µs", DASH, f"{us:.2f} µs", verdict(us <= TARGET_FREE_LEAD_US)))

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
        ("anchors", ", ".join(f"{k} {version(d) or 'not installed'}" + ("" if anchors[k] else " (skipped)")
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
