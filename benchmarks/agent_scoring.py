"""Per-decision scoring time of the numpy ``trained`` agent: the former path (feature rows of the
legal actions, then ``QNetwork.scores``: dense observation part, action part per legal action)
against the factored one (``TrainedAgent.scores``: observation part over its nonzero entries,
action part cached per id), interleaved on the same positions, for every shipped weight file.
Both paths compute the context inputs of a network that takes them (``agents/context.py``),
in one batched numba pass (``PlanContext.__call__``, since 2026-12-04); the column "factored,
context by position" computes them as before, position by position over the rules agent's
methods (``PlanContext.position``, the reference the tests hold the batched path to), and
"batched" scores every position in one ``TrainedAgent.act_batch`` call (as a search's
rollouts and the arena's vectorised callers do).

Usage (from the repository root)::

    python -m benchmarks.agent_scoring                  # prints; --out FILE writes the table too

Positions: the learner positions of the first steps of 32 self-play games (``SelfPlay``,
random scores, exploration 0.3), the first ``--positions`` of them; best of ``--repeats``.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import glob  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from typing import Optional  # noqa: E402

import numpy as np  # noqa: E402

from cardenvs.agents.trained import WEIGHTS_DIR, QNetwork, TrainedAgent  # noqa: E402
from cardenvs.api import make_game  # noqa: E402
from benchmarks.selfplay import write_report  # noqa: E402
from cardenvs.train.selfplay import SelfPlay  # noqa: E402


def positions(name: str, count: int, options: Optional[dict] = None) -> list:
    """``(obs, legal ids)`` of positions met in self-play of ``name`` (with ``options``)."""
    sp = SelfPlay(name, 32, seed=0, eps=0.3, **(options or {}))
    rng = np.random.default_rng(0)
    out: list = []
    while len(out) < count:
        pos = sp.prepare()
        for p in range(pos.n):
            out.append((pos.obs[p].copy(), pos.ids[pos.owner == p].copy()))
        sp.commit(rng.normal(size=pos.m).astype(np.float32))
    return out[:count]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.agent_scoring", description=__doc__.split("\n\n")[0])
    p.add_argument("--positions", type=int, default=600)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", default=None)
    a = p.parse_args(argv)
    lines = ["# The numpy trained agent: scoring time per decision, former vs factored", "",
             f"`python -m benchmarks.agent_scoring` on {os.cpu_count()} CPUs, load average "
             f"{os.getloadavg()[0]:.1f} at the start, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
             f"{a.positions} self-play positions per game, best of {a.repeats}.", "",
             "| weights | legal actions (mean) | former us/decision | factored, context by position | "
             "factored us/decision | speed-up | batched us/decision | max score diff |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for path in sorted(glob.glob(os.path.join(WEIGHTS_DIR, "*.npz"))):
        meta = QNetwork(path).meta
        agent = TrainedAgent(make_game(meta["game"], **meta.get("options", {})), weights=path)
        g, net = agent.game, agent.net
        P = positions(g.info.name, a.positions, meta.get("options"))

        def ctx(o, ids):  # a network with context inputs (agents/context.py) needs them on both paths
            if agent.context is None:
                return None
            return agent.context(o[None, :], ids, np.zeros(len(ids), np.int64))

        def former():
            return [net.scores(o, g.action_features(ids), ctx(o, ids)) for o, ids in P]

        def factored():
            return [agent.scores(o, ids) for o, ids in P]

        def by_position():  # the context as computed until 2026-12-04
            out = []
            for o, ids in P:
                c = None if agent.context is None else agent.context.position(o, ids)
                out.append(net.scores_ids(o[None, :], ids, np.zeros(len(ids), np.int64),
                                          agent._rows, g.action_features, c))
            return out

        obs = np.stack([o for o, _ in P])
        masks = np.zeros((len(P), g.n_actions), np.int8)
        for i, (_, ids) in enumerate(P):
            masks[i, ids] = 1

        def batched():
            return agent.act_batch(obs, masks)

        diff = max(float(np.abs(x - y).max()) for x, y in zip(former(), factored()))
        diff = max([diff] + [float(np.abs(x - y).max()) for x, y in zip(by_position(), factored())])
        best = {"former": np.inf, "by_position": np.inf, "factored": np.inf, "batched": np.inf}
        for _ in range(a.repeats):
            for k, f in (("former", former), ("by_position", by_position),
                         ("factored", factored), ("batched", batched)):
                t0 = time.perf_counter()
                f()
                best[k] = min(best[k], (time.perf_counter() - t0) / len(P) * 1e6)
        lines.append(f"| {os.path.basename(path)} | {np.mean([len(i) for _, i in P]):.1f} | {best['former']:.0f} | "
                     f"{best['by_position']:.0f} | {best['factored']:.0f} | "
                     f"{best['former'] / best['factored']:.2f}x | {best['batched']:.0f} | {diff:.1e} |")
        print(lines[-1], file=sys.stderr, flush=True)
    write_report(lines, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
