"""The timing and report machinery of the speed benchmark (:mod:`benchmarks.run`), shared by
the other benchmarks that report in its format (:mod:`benchmarks.vector`, :mod:`benchmarks.search`,
:mod:`benchmarks.selfplay`): one core, best-of-repeats timings, the markdown report.

Importing this module pins the thread counts of numba and the BLAS libraries to one: import it
before numba (or numpy's BLAS) is first imported.
"""

from __future__ import annotations

import os

# one core: must be set before numba (or any BLAS) is imported
for _v in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import platform  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from importlib import metadata  # noqa: E402
from typing import Any, Callable, Optional  # noqa: E402

import numpy as np  # noqa: E402

DASH = "—"

#: under the targets of a ``--quick`` run
QUICK_NOTE = ("Quick mode: fewer positions and shorter timings than the full run, so these "
              "results are indicative only; ratios of sub-microsecond kernels (the Lanxi Wulong "
              "follow against 4-player Dou Dizhu's ~0.13 µs follow) vary by tens of percent "
              "from run to run. The targets are judged by the full run "
              "(`python -m benchmarks.run`).")


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

