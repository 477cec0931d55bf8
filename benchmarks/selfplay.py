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
  ``QNet.forward`` as before the factored scorer - today's baseline; the same loop with
  :class:`train.dmc.FactoredScorer`, and with ``--envs-large`` games (so the engine's larger
  batches are set beside the former loop's with as many games: 1.04-1.11x its rate at 256 or
  512 games);
* ``engine``: ``DMC(engine="vector").engine_step()``: the same network and games on
  :class:`train.selfplay.SelfPlay` in this process, scoring with ``QNet.forward``, and with
  ``--envs-large`` games;
* ``engine, factored``: the same with :class:`train.dmc.FactoredScorer` (per-id cache of the
  first layer's action part, the observation part updated from each game and seat's previous
  one, fused layers; what ``train.dmc`` uses now); ``weights changing every step``: its
  caches emptied before every step (what a learner updating after every step costs at worst:
  the action part is then computed once per distinct id of the step, the observation part
  afresh);
* ``bfloat16`` / ``int8``: the factored scorer with ``--act-dtype bfloat16`` (the layers after
  the first in bfloat16) or ``int8`` (:mod:`train.quant`: integer matmuls);
* ``engine, N actors``: :class:`train.selfplay.ActorPool` processes (one torch thread each,
  batches handed over in shared memory, read in place as train.dmc reads them), decisions/s
  arriving at the learner in steady state
  (after ``2 * --seconds`` of draining the batches queued during start-up; 1 actor; 2 when
  ``--actors 2``), plain and factored, and the most actors with ``--envs-large`` games each,
  factored, in float32, bfloat16 and int8; each actor run beside the lockstep rate measured
  just before and just after it (this machine's speed drifts over minutes, and the actor runs
  come after the interleaved rounds);
* ``engine, no network``: the same engine with a free scoring function (the feature rows'
  sum): what the engine costs without the network, its ceiling;
* the share of the engine's step spent in the network's forward pass (plain and factored);
* the network's ceiling: the least arithmetic a decision needs (counted on the factored
  engine's steps: the body's layers on every scored action, ``2 * (512*256 + 256*256 +
  256*128 + 128)`` flops each, plus the first layer's observation part over the nonzero
  inputs of every scored position (an upper bound where it is updated from the previous
  one); the action part is cached) and the rate at which this
  machine runs the body's matmuls at the same batch size (one torch thread; float32,
  bfloat16, and int8 :func:`train.quant.int8_matmul` for the hidden layers): their quotient
  is the most decisions/s one core could reach with this network if the engine, the copies
  and the first layer cost nothing.  Set beside ten times the lockstep rate, it says whether
  a 10x target is reachable on the machine with the same network at all.

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

from benchmarks.run import cpu_model  # noqa: E402
from cardenvs.train.dmc import DMC, Config, TorchPolicy, exploration_rates  # noqa: E402
from cardenvs.train.quant import Int8Body, int8_matmul, prepack  # noqa: E402
from cardenvs.train.selfplay import ActorPool, SelfPlay, torch_scorer  # noqa: E402


def _trainer(game: str, engine: str, envs: int, out: str, act_dtype: str = "float32") -> DMC:
    cfg = Config(game=game, out=out, envs=envs, eval_deals=0, progress=False, engine=engine,
                 reward_scale=1.0, seed=0, act_dtype=act_dtype)
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


def network_ceiling(t: DMC, steps: int, seconds: float, repeats: int) -> dict:
    """Flops per decision of the network on ``t``'s engine (factored scorer) over ``steps``
    steps, the body's matmul rate at that batch size, and their quotient (module docstring)."""
    inner = t._score
    count = {"pos": 0, "rows": 0, "nnz": 0}

    def score(obs, feats, owner, *rest, **kw):
        count["pos"] += len(obs)
        count["rows"] += len(owner)
        count["nnz"] += int(np.count_nonzero(obs))
        return inner(obs, feats, owner, *rest, **kw)

    score.takes_ids = getattr(inner, "takes_ids", False)
    score.takes_keys = getattr(inner, "takes_keys", False)
    t._score = score
    decisions = 0
    try:
        for _ in range(steps):
            t.engine_step()
            t._q_obs, t._q_act, t._q_tgt, t._q_n = [], [], [], 0
            decisions += t.cfg.envs
    finally:
        t._score = inner
    layers = list(t.net.layers)
    h0 = layers[0].out_features
    body = sum(m.in_features * m.out_features for m in layers[1:])
    flops = 2 * (count["rows"] * body + count["nnz"] * h0) / decisions
    rows_per_step = max(1, round(count["rows"] / steps))
    out = {"flops_per_decision": flops, "rows_per_decision": count["rows"] / decisions,
           "nnz_per_position": count["nnz"] / max(count["pos"], 1), "rows_per_step": rows_per_step}
    # the hidden layers' integer matmuls as train.quant makes them (the output layer is a dot
    # product in its last pass), each on its own int8 input: the matmul rate alone
    gemm = Int8Body(layers[1:]).gemm
    xw = []
    for m in layers[1:-1]:
        w = np.random.default_rng(0).integers(-127, 128, (m.in_features, m.out_features)).astype(np.int8)
        xw.append((torch.randint(0, 128, (rows_per_step, m.in_features), dtype=torch.int8),
                   torch.from_numpy(w), prepack(w) if gemm == "onednn" else None))
    out["gemm"] = gemm

    def int8_pass():
        for x, w, packed in xw:
            int8_matmul(x, w, packed)
        return rows_per_step

    best = max(_rate(int8_pass, seconds) for _ in range(repeats))
    out["gflops_int8"] = best * 2 * body / 1e9
    out["ceiling_int8"] = out["gflops_int8"] * 1e9 / flops
    for dtype in (torch.float32, torch.bfloat16):
        x = torch.relu(torch.randn(rows_per_step, h0)).to(dtype)
        ws = [m.weight.detach().t().contiguous().to(dtype) for m in layers[1:]]

        def body_pass():
            h = x
            for i, w in enumerate(ws):
                h = h @ w
                if i < len(ws) - 1:
                    h = torch.relu(h)
            return rows_per_step

        with torch.no_grad():
            best = max(_rate(body_pass, seconds) for _ in range(repeats))  # rows/s
        gflops = best * 2 * body / 1e9
        key = str(dtype).replace("torch.", "")
        out[f"gflops_{key}"] = gflops
        out[f"ceiling_{key}"] = gflops * 1e9 / flops
    return out


def measure(game: str, seconds: float, repeats: int, envs: int, envs_large: int, actors: int) -> dict:
    tmp = tempfile.mkdtemp(prefix="bench_selfplay_")
    lock = _trainer(game, "lockstep", envs, tmp)
    lock_fast = _trainer(game, "lockstep", envs, tmp)
    lock_big = _trainer(game, "lockstep", envs_large, tmp)
    vec = _trainer(game, "vector", envs, tmp)
    fast = _trainer(game, "vector", envs, tmp)
    churn = _trainer(game, "vector", envs, tmp)
    big = _trainer(game, "vector", envs_large, tmp)
    big_fast = _trainer(game, "vector", envs_large, tmp)
    half = _trainer(game, "vector", envs, tmp, act_dtype="bfloat16")
    big_half = _trainer(game, "vector", envs_large, tmp, act_dtype="bfloat16")
    big_q8 = _trainer(game, "vector", envs_large, tmp, act_dtype="int8")
    for t in (lock_fast, fast, churn, big, big_fast, half, big_half, big_q8):  # the same weights everywhere
        t.net.load_state_dict(vec.net.state_dict())
    for t in (lock, lock_big):
        t.net.load_state_dict(vec.net.state_dict())
        # today's baseline scores with the network's forward (no per-id cache, no fused layers)
        t.policy = TorchPolicy(t.game, t.net, t.device, fast=False)
    lock_fast.policy = TorchPolicy(lock_fast.game, lock_fast.net, lock_fast.device, fast=True)
    for t in (vec, fast, churn, big, big_fast, half, big_half, big_q8):
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

        def score(*a, **kw):
            t0 = time.perf_counter()
            q = inner(*a, **kw)
            fwd["s"] += time.perf_counter() - t0
            return q

        score.takes_ids = getattr(inner, "takes_ids", False)
        score.takes_keys = getattr(inner, "takes_keys", False)
        score._key = None
        return score

    def free_step():
        free.step(lambda o, f, w: f.sum(axis=1))
        if free.ready_count:
            free.pop()
        return free.n

    paths = {"lockstep (today's train.dmc)": lock_step(lock),
             "lockstep, factored scorer": lock_step(lock_fast),
             f"lockstep, {envs_large} games": lock_step(lock_big),
             "engine": vec_step(vec), "engine, factored": vec_step(fast),
             "engine, factored, weights changing every step": vec_step(churn, clear=True),
             f"engine, {envs_large} games": vec_step(big),
             f"engine, {envs_large} games, factored": vec_step(big_fast),
             "engine, factored, bfloat16": vec_step(half),
             f"engine, {envs_large} games, factored, bfloat16": vec_step(big_half),
             f"engine, {envs_large} games, factored, int8": vec_step(big_q8),
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
    runs = [(k, fast_actor, envs, "float32") for k in range(1, actors + 1)
            for fast_actor in (False, True)]
    if actors:
        runs += [(actors, True, envs_large, dt) for dt in ("float32", "bfloat16", "int8")]
    beside = {}  # per actor run: the lockstep rate measured just before and just after it
    for k, fast_actor, n, dtype in runs:
        lock_before = _rate(lock_step(lock), seconds)
        pool = ActorPool(game, {}, vec.net, vec.opp_net, actors=k, n=n, seed=5,
                         eps=exploration_rates(vec.cfg.eps, vec.cfg.eps_alpha, n),
                         scale=1.0, pool_frac=0.0, batch=512, fast=fast_actor, dtype=dtype)
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
                    g = pool.get(timeout=30, copy=False)  # as train.dmc reads them
                    if g is not None:
                        dec += g[0]
                rates.append(dec / (time.perf_counter() - t0))
            name = (f"engine, {k} actor process{'es' if k > 1 else ''}" + (f", {n} games" if n != envs else "")
                    + (", factored" if fast_actor else "") + (f", {dtype}" if dtype != "float32" else ""))
            best[name] = max(rates)
        finally:
            pool.close()
        beside[name] = max(lock_before, _rate(lock_step(lock), seconds))
    ceiling = network_ceiling(fast, 50, seconds, repeats)
    return {"rates": best, "beside": beside,
            "forward_share": {k: float(np.median(v)) for k, v in share.items()}, "ceiling": ceiling}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.selfplay", description=__doc__.split("\n\n")[0])
    p.add_argument("--games", default="wakeng,doudizhu")
    p.add_argument("--seconds", type=float, default=4.0)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--envs", type=int, default=64, help="games (train.dmc's default --envs)")
    p.add_argument("--envs-large", type=int, default=512,
                   help="games of the larger batches (the int8 actors' row; in Wakeng 512 games "
                        "made 1.15-1.19x the decisions/s of 256 with two actors, 1024 no more)")
    p.add_argument("--actors", type=int, default=1, help="also measure 1..A actor processes")
    p.add_argument("--out", default=os.path.join("benchmarks", "selfplay.md"))
    a = p.parse_args(argv)
    torch.set_num_threads(1)
    lines = ["# Self-play decisions/s: train.dmc's former loop vs the self-play data engine", "",
             f"`python -m benchmarks.selfplay {' '.join(argv if argv is not None else sys.argv[1:])}`"
             .rstrip() + f" on {cpu_model()} ({platform.machine()}), "
             f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the start, "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.", "",
             "Network: train.dmc's default `QNet` (hidden 512,256,256,128), the same weights on every "
             "path, one torch thread, CPU; float32 unless `bfloat16` or `int8` is said (`--act-dtype "
             "bfloat16` / `int8`: the layers after the first; int8: `train.quant`); actor processes "
             "hand their batches over in shared memory; "
             f"{a.envs} games unless said; best of {a.repeats} interleaved repeats of {a.seconds:g} s.", ""]
    for game in a.games.split(","):
        print(f"[selfplay bench] {game}", file=sys.stderr, flush=True)
        res = measure(game, a.seconds, a.repeats, a.envs, a.envs_large, a.actors)
        base = res["rates"]["lockstep (today's train.dmc)"]
        lines += [f"## {game}", "", "| path | decisions/s | vs lockstep | vs lockstep beside it |",
                  "| --- | ---: | ---: | ---: |"]
        for name, r in res["rates"].items():
            b = res["beside"].get(name)
            near = f"{r / b:.2f}x ({b:,.0f})" if b else ""
            lines.append(f"| {name} | {r:,.0f} | {r / base:.2f}x | {near} |")
        lines += ["", "vs lockstep: against the lockstep rate of the interleaved rounds (the best "
                      "of them); beside it: against the lockstep rate measured just before and "
                      "just after that actor run (the higher of the two), since this machine's "
                      "speed drifts over minutes and the actor runs come last."]
        fs = res["forward_share"]
        lines += ["", f"The network's forward pass takes {100 * fs['engine']:.0f}% of the engine's "
                      f"self-play time with `QNet.forward`, {100 * fs['engine, factored']:.0f}% with the "
                      f"factored scorer ({a.envs} games). Load average after {game}: "
                      f"{os.getloadavg()[0]:.1f}.", ""]
        c = res["ceiling"]
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        lines += [f"Ceiling of the network: {c['rows_per_decision']:.1f} scored actions and "
                  f"{c['flops_per_decision'] / 1e6:.2f} Mflop per decision at the least (the body "
                  f"on every scored action, the first layer over {c['nnz_per_position']:.0f} nonzero "
                  f"inputs per position); this machine runs the body's matmuls at "
                  f"{c['gflops_float32']:.1f} Gflop/s in float32 and {c['gflops_bfloat16']:.1f} in "
                  f"bfloat16 on one thread ({c['rows_per_step']} rows a batch), so even if nothing "
                  f"else cost time one core reaches at most {c['ceiling_float32']:,.0f} decisions/s "
                  f"with this network in float32 ({cores} cores: {cores * c['ceiling_float32']:,.0f}, "
                  f"{cores * c['ceiling_float32'] / base:.1f}x the lockstep rate) and "
                  f"{c['ceiling_bfloat16']:,.0f} in bfloat16 ({cores} cores: "
                  f"{cores * c['ceiling_bfloat16']:,.0f}, {cores * c['ceiling_bfloat16'] / base:.1f}x); "
                  f"its int8 matmuls (`{c['gemm']}`, the hidden layers) run at "
                  f"{c['gflops_int8']:.1f} Gop/s: at most {c['ceiling_int8']:,.0f} decisions/s a core "
                  f"({cores} cores: {cores * c['ceiling_int8']:,.0f}, "
                  f"{cores * c['ceiling_int8'] / base:.1f}x); "
                  f"10x the lockstep rate is {10 * base:,.0f}.", ""]
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
