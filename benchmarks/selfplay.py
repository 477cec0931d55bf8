"""Self-play decisions/s of ``train.dmc``: the former per-game Python loop against the self-play
data engine (``train/selfplay.py``), with the network's plain forward and with the factored
scorer, side by side in one run, with the same network (same weights).

Usage (from the repository root)::

    python -m benchmarks.selfplay                       # wakeng, doudizhu; writes benchmarks/selfplay.md
    python -m benchmarks.selfplay --games wakeng --seconds 2 --out /tmp/selfplay.md

What it measures, per game, each measurement ``--seconds`` long and repeated ``--repeats``
times round-robin (every path sees the same machine load; the best repeat is kept):

* ``lockstep``: ``DMC(engine="lockstep").selfplay_step()`` (``--envs`` games, the network of
  ``train.dmc``'s default shape, untrained, batched forward per step) scoring with
  ``QNet.forward`` as before the factored scorer - today's baseline; and the same loop with
  :class:`train.dmc.FactoredScorer`;
* ``engine``: ``DMC(engine="vector").engine_step()``: the same network and games on
  :class:`train.selfplay.SelfPlay` in this process, scoring with ``QNet.forward``, and with
  ``--envs-large`` games;
* ``engine, factored``: the same with :class:`train.dmc.FactoredScorer` (per-id cache of the
  first layer's action part, fused layers; what ``train.dmc`` uses now); ``weights changing
  every step``: its cache emptied before every step (what a learner updating after every step
  costs at worst: the action part is then computed once per distinct id of the step);
* ``engine, N actors``: :class:`train.selfplay.ActorPool` processes (one torch thread each),
  decisions/s arriving at the learner in steady state (after ``2 * --seconds`` of draining
  the batches queued during start-up; 1 actor; 2 when ``--actors 2``), plain and factored,
  and the most actors with ``--envs-large`` games each, factored;
* ``engine, no network``: the same engine with a free scoring function (the feature rows'
  sum): what the engine costs without the network, its ceiling;
* the share of the engine's step spent in the network's forward pass (plain and factored).

Only self-play is timed (no learning updates), one torch thread, CPU.  A "decision" is one
move of one game (forced moves included), as in ``train.dmc``'s ``dec_per_s``.
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

import numpy as np  # noqa: E402
import torch  # noqa: E402

from train.dmc import DMC, Config, TorchPolicy, exploration_rates  # noqa: E402
from train.selfplay import ActorPool, SelfPlay, torch_scorer  # noqa: E402


def _trainer(game: str, engine: str, envs: int, out: str) -> DMC:
    cfg = Config(game=game, out=out, envs=envs, eval_deals=0, progress=False, engine=engine,
                 reward_scale=1.0, seed=0)
    t = DMC(cfg)
    t._start_selfplay()
    return t


def _rate(step, seconds: float) -> float:
    """Decisions/s of ``step()`` (returns decisions made) over ``seconds``."""
    step()  # warm
    t0 = time.perf_counter()
    dec = 0
    while time.perf_counter() - t0 < seconds:
        dec += step()
    return dec / (time.perf_counter() - t0)


def measure(game: str, seconds: float, repeats: int, envs: int, envs_large: int, actors: int) -> dict:
    tmp = tempfile.mkdtemp(prefix="bench_selfplay_")
    lock = _trainer(game, "lockstep", envs, tmp)
    lock_fast = _trainer(game, "lockstep", envs, tmp)
    vec = _trainer(game, "vector", envs, tmp)
    fast = _trainer(game, "vector", envs, tmp)
    churn = _trainer(game, "vector", envs, tmp)
    big = _trainer(game, "vector", envs_large, tmp)
    big_fast = _trainer(game, "vector", envs_large, tmp)
    for t in (lock_fast, fast, churn, big, big_fast):  # the same weights everywhere
        t.net.load_state_dict(vec.net.state_dict())
    lock.net.load_state_dict(vec.net.state_dict())
    # today's baseline scores with the network's forward (no per-id cache, no fused layers)
    lock.policy = TorchPolicy(lock.game, lock.net, lock.device, fast=False)
    lock_fast.policy = TorchPolicy(lock_fast.game, lock_fast.net, lock_fast.device, fast=True)
    for t in (vec, fast, churn, big, big_fast):
        t.engine_step()  # starts the engine (FactoredScorer: what train.dmc uses)
    for t in (vec, big):
        t._score = torch_scorer(t.net)  # QNet.forward
    free = SelfPlay(game, envs_large, seed=1, eps=0.01)

    def lock_step(t):
        def f():
            t.selfplay_step()
            t._q_obs, t._q_act, t._q_tgt, t._q_n = [], [], [], 0
            return t.cfg.envs
        return f

    def vec_step(t, clear=False):
        def f():
            if clear:
                t._score._key = None  # as if the weights had changed since the last step
            t.engine_step()
            t._q_obs, t._q_act, t._q_tgt, t._q_n = [], [], [], 0
            return t.cfg.envs
        return f

    def timed(t, fwd):
        inner = t._score

        def score(*a):
            t0 = time.perf_counter()
            q = inner(*a)
            fwd["s"] += time.perf_counter() - t0
            return q

        score.takes_ids = getattr(inner, "takes_ids", False)
        score._key = None
        return score

    def free_step():
        free.step(lambda o, f, w: f.sum(axis=1))
        if free.ready_count:
            free.pop()
        return free.n

    paths = {"lockstep (today's train.dmc)": lock_step(lock),
             "lockstep, factored scorer": lock_step(lock_fast),
             "engine": vec_step(vec), "engine, factored": vec_step(fast),
             "engine, factored, weights changing every step": vec_step(churn, clear=True),
             f"engine, {envs_large} games": vec_step(big),
             f"engine, {envs_large} games, factored": vec_step(big_fast),
             "engine, no network": free_step}
    timed_paths = {"engine": vec, "engine, factored": fast}
    best = {k: 0.0 for k in paths}
    share: dict = {k: [] for k in timed_paths}
    for _ in range(repeats):
        for name, fn in paths.items():
            t = timed_paths.get(name)
            if t is not None:
                fwd = {"s": 0.0}
                inner = t._score
                t._score = timed(t, fwd)
                t0 = time.perf_counter()
                r = _rate(fn, seconds)
                share[name].append(fwd["s"] / (time.perf_counter() - t0))
                t._score = inner
            else:
                r = _rate(fn, seconds)
            best[name] = max(best[name], r)
    runs = [(k, fast_actor, envs) for k in range(1, actors + 1) for fast_actor in (False, True)]
    if actors:
        runs.append((actors, True, envs_large))
    for k, fast_actor, n in runs:
        pool = ActorPool(game, {}, vec.net, vec.opp_net, actors=k, n=n, seed=5,
                         eps=exploration_rates(vec.cfg.eps, vec.cfg.eps_alpha, n),
                         scale=1.0, pool_frac=0.0, batch=512, fast=fast_actor)
        try:
            got = None
            while got is None:  # the actors' start-up (spawned processes import everything)
                got = pool.get(timeout=120)
            # drain what the actors queued while the others started: only steady production counts
            t0 = time.perf_counter()
            while time.perf_counter() - t0 < 2 * seconds:
                pool.get(timeout=30)
            rates = []
            for _ in range(repeats):
                t0, dec = time.perf_counter(), 0
                while time.perf_counter() - t0 < seconds:
                    g = pool.get(timeout=30)
                    if g is not None:
                        dec += g[0]
                rates.append(dec / (time.perf_counter() - t0))
            name = (f"engine, {k} actor process{'es' if k > 1 else ''}" + (f", {n} games" if n != envs else "")
                    + (", factored" if fast_actor else ""))
            best[name] = max(rates)
        finally:
            pool.close()
    return {"rates": best, "forward_share": {k: float(np.median(v)) for k, v in share.items()}}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.selfplay", description=__doc__.split("\n\n")[0])
    p.add_argument("--games", default="wakeng,doudizhu")
    p.add_argument("--seconds", type=float, default=4.0)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--envs", type=int, default=64, help="games (train.dmc's default --envs)")
    p.add_argument("--envs-large", type=int, default=256)
    p.add_argument("--actors", type=int, default=1, help="also measure 1..A actor processes")
    p.add_argument("--out", default=os.path.join("benchmarks", "selfplay.md"))
    a = p.parse_args(argv)
    torch.set_num_threads(1)
    lines = ["# Self-play decisions/s: train.dmc's former loop vs the self-play data engine", "",
             f"`python -m benchmarks.selfplay {' '.join(argv if argv is not None else sys.argv[1:])}`"
             .rstrip() + f" on {platform.processor() or platform.machine()}, "
             f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the start, "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.", "",
             "Network: train.dmc's default `QNet` (hidden 512,256,256,128), the same weights on every "
             "path, one torch thread, CPU; "
             f"{a.envs} games unless said; best of {a.repeats} interleaved repeats of {a.seconds:g} s.", ""]
    for game in a.games.split(","):
        print(f"[selfplay bench] {game}", file=sys.stderr, flush=True)
        res = measure(game, a.seconds, a.repeats, a.envs, a.envs_large, a.actors)
        base = res["rates"]["lockstep (today's train.dmc)"]
        lines += [f"## {game}", "", "| path | decisions/s | vs lockstep |", "| --- | ---: | ---: |"]
        for name, r in res["rates"].items():
            lines.append(f"| {name} | {r:,.0f} | {r / base:.2f}x |")
        fs = res["forward_share"]
        lines += ["", f"The network's forward pass takes {100 * fs['engine']:.0f}% of the engine's "
                      f"self-play time with `QNet.forward`, {100 * fs['engine, factored']:.0f}% with the "
                      f"factored scorer ({a.envs} games). Load average after {game}: "
                      f"{os.getloadavg()[0]:.1f}.", ""]
    write_report(lines, a.out)
    return 0


def write_report(lines: list, out) -> None:
    """Print the report's lines and write them to ``out`` (when given)."""
    text = "\n".join(lines) + "\n"
    print(text)
    if out:
        with open(out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    sys.exit(main())
