"""Where a self-play step's time goes: one process, ``--envs`` games, ``train.dmc``'s default
network scoring in int8 (what each actor of ``benchmarks.selfplay``'s fastest path runs).

Usage (from the repository root)::

    python -m benchmarks.selfplay_breakdown                 # writes benchmarks/selfplay_breakdown.md
    python -m benchmarks.selfplay_breakdown --games wakeng --steps 100 --out /tmp/b.md

Each part is timed by wrapping the function that does it (for the run only; the wrappers cost
a few microseconds a call, counted in "rest"):

* ``matmuls``: :func:`train.quant.int8_matmul` (the hidden layers' exact int8 products:
  oneDNN's int8 linear layer with packed weights where it runs, else ``torch._int_mm``);
* ``observation parts``: :func:`agents.trained.observation_part_cached` (each position's
  first-layer observation part from its game and seat's previous one);
* ``cuts``: :func:`train.quant.cut_first_layer`, :func:`train.quant.requantize` and
  :func:`train.quant.output_layer` (ReLU, int8 codes, the output layer);
* ``lay out positions``: :meth:`train.selfplay.SelfPlay.prepare`;
* ``choose, step the games, settle``: :meth:`train.selfplay.SelfPlay.commit`;
* ``pop samples``: :meth:`train.selfplay.SelfPlay.pop`;
* ``rest``: the remainder of the step (the scorer's Python, the action-row cache, copies).

Best of ``--repeats`` runs of ``--steps`` steps after a warm-up; one torch and numba thread.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from contextlib import contextmanager  # noqa: E402

import torch  # noqa: E402

import cardenvs.train.quant as quant  # noqa: E402
from benchmarks.run import cpu_model  # noqa: E402
from benchmarks.selfplay import _trainer  # noqa: E402
from cardenvs.arena import agents_module  # noqa: E402

PARTS = ("matmuls", "observation parts", "cuts", "lay out positions",
         "choose, step the games, settle", "pop samples")


@contextmanager
def _timing(owner, name: str, bucket: str, acc: dict):
    """Replace ``owner.name`` by a wrapper adding its time to ``acc[bucket]`` while inside."""
    inner = getattr(owner, name)

    def timed(*a, **kw):
        t0 = time.perf_counter()
        try:
            return inner(*a, **kw)
        finally:
            acc[bucket] += time.perf_counter() - t0

    setattr(owner, name, timed)
    try:
        yield
    finally:
        setattr(owner, name, inner)


def breakdown(game: str, envs: int, steps: int, repeats: int) -> dict:
    """Milliseconds a step per part (module docstring) and decisions/s, best repeat."""
    torch.set_num_threads(1)
    t = _trainer(game, "vector", envs, tempfile.mkdtemp(prefix="bench_breakdown_"), "int8")
    t.engine_step()
    sp, score = t._engine, t._score
    for _ in range(30):
        sp.step(score)
        if sp.ready_count:
            sp.pop()
    trained = agents_module("trained")
    best = None
    for _ in range(repeats):
        acc = dict.fromkeys(PARTS, 0.0)
        wraps = [(quant, "int8_matmul", "matmuls"),
                 (trained, "observation_part_cached", "observation parts"),
                 (quant, "cut_first_layer", "cuts"), (quant, "requantize", "cuts"),
                 (quant, "output_layer", "cuts"),
                 (sp, "prepare", "lay out positions"),
                 (sp, "commit", "choose, step the games, settle"),
                 (sp, "pop", "pop samples")]
        ctx = [_timing(o, n, b, acc) for o, n, b in wraps]
        for c in ctx:
            c.__enter__()
        try:
            dec = 0
            t0 = time.perf_counter()
            for _ in range(steps):
                sp.step(score)
                dec += sp.n
                if sp.ready_count:
                    sp.pop()
            wall = time.perf_counter() - t0
        finally:
            for c in reversed(ctx):
                c.__exit__(None, None, None)
        row = {k: 1e3 * v / steps for k, v in acc.items()}
        row["rest"] = 1e3 * wall / steps - sum(row.values())
        row["step"] = 1e3 * wall / steps
        row["decisions_per_s"] = dec / wall
        row["gemm"] = score.body.gemm
        if best is None or row["step"] < best["step"]:
            best = row
    return best


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", default="wakeng,doudizhu")
    p.add_argument("--envs", type=int, default=512,
                   help="games (benchmarks.selfplay's int8 actors run --envs-large, 512)")
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", default=os.path.join("benchmarks", "selfplay_breakdown.md"))
    a = p.parse_args(argv)
    load = os.getloadavg()[0]
    lines = ["# Where a self-play step's time goes (one process, int8 scoring)", "",
             f"`python -m benchmarks.selfplay_breakdown` on {cpu_model()} ({platform.machine()}), "
             f"{os.cpu_count()} CPUs, load average {load:.1f} at the start, "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: {a.envs} games, "
             f"train.dmc's default network, `--act-dtype int8`, best of {a.repeats} runs of "
             f"{a.steps} steps.", ""]
    for game in a.games.split(","):
        print(f"[breakdown] {game}", file=sys.stderr)
        r = breakdown(game, a.envs, a.steps, a.repeats)
        lines += [f"## {game}", "", f"{r['step']:.2f} ms a step of {a.envs} decisions "
                  f"({r['decisions_per_s']:,.0f} decisions/s; int8 matmuls: `{r['gemm']}`)", "",
                  "| part | ms a step | share |", "| --- | ---: | ---: |"]
        for k in (*PARTS, "rest"):
            lines.append(f"| {k} | {r[k]:.3f} | {100 * r[k] / r['step']:.0f}% |")
        lines.append("")
    text = "\n".join(lines)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, a.out)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
