"""Search benchmarks: determinizations/s, rollout decisions/s from loaded positions, and the
``search`` agent's milliseconds per decision, every game, on one core.

Usage (from the repository root)::

    python -m benchmarks.search                 # full run; writes benchmarks/search_results.md
    python -m benchmarks.search --quick         # a short run; prints only
    python -m benchmarks.search --games doudizhu --out /tmp/search.md
    python -m benchmarks.search --no-search     # the rates only (no search ms column)
    python -m benchmarks.search --games doudizhu --option preset=rlcard --option reward=win_loss \\
        --search-only search:rollouts=1200,max_candidates=12,epsilon=0.1   # one agent's ms

What it measures:

* **determinizations/s**: :func:`cardenvs.determinize_batch` of one batch of samples from
  mid-game positions of random games (the seat to move observes), after a warm-up call;
* **rollout decisions/s from loaded positions**: :meth:`cardenvs.vector.VectorGame.load_states`
  of N mid-game positions, then :meth:`~cardenvs.vector.VectorGame.rollout` to the end, with
  the ``"random"``, the ``"heuristic"`` and the former ``"heuristic0"`` policy separately
  (the ratio heuristic / heuristic0 in the last column); decisions counted from
  ``last_rollout_lengths``; the load is timed with the rollouts (the search's path);
* **search ms per decision** at the agent's default budget: ``search`` at one seat (the
  ``rules`` agent at the others) over a few deals, decisions with two or more legal actions
  (forced moves cost nothing and are left out), median and 90th percentile; the last column
  says what the default does in the game (PIMC over the ``trained`` prior in every game).

Times are this process's CPU time (``time.process_time``; numba runs one thread), so a busy
shared machine does not inflate them.  The first call of a game in a process compiles its
kernels (not timed: every measurement warms up first).  Target: >= 1,000,000 rollout decisions/s at N >= 256 on one core
for 3-player Dou Dizhu, each policy.
"""

from __future__ import annotations

import os

for _v in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import cardenvs  # noqa: E402
from benchmarks.run import cpu_model, log, pin_one_core  # noqa: E402
from cardenvs.cli import parse_option  # noqa: E402
from cardenvs.vector import VectorGame  # noqa: E402

#: the clock of every measurement: this process's CPU time (one thread), so that other jobs on
#: a shared machine do not inflate the numbers (on an idle core it equals the wall time)
_clock = time.process_time

TARGET_ROLLOUT = 1_000_000  # decisions/s, 3-player Dou Dizhu, N >= 256, one core
SIZES = (256, 1024)
POLICIES = ("random", "heuristic", "heuristic0")


def positions(game, n: int, seed: int) -> np.ndarray:
    """``n`` mid-game states (a uniformly random decision of a random game each)."""
    rng = np.random.default_rng(seed)
    s = game.new_state()
    buf = np.empty(game.n_actions, np.int64)
    out = []
    while len(out) < n:
        game.reset(s, int(rng.integers(2**62)))
        traj = []
        while not game.done(s):
            traj.append(s.copy())
            k = game.legal(s, buf)
            game.step(s, int(buf[rng.integers(k)]))
        out.append(traj[int(rng.integers(len(traj)))])
    return np.array(out)


def determinize_rate(game, states: np.ndarray, per: int, seconds: float) -> float:
    from cardenvs import determinize_batch

    rng = np.random.default_rng(0)
    determinize_batch(game, states[0], int(states[0][1]), rng, 2)  # compile
    n = 0
    t0 = _clock()
    i = 0
    while _clock() - t0 < seconds:
        s = states[i % len(states)]
        determinize_batch(game, s, int(s[1]), rng, per)
        n += per
        i += 1
    return n / (_clock() - t0)


def rollout_rate(game, states: np.ndarray, N: int, policy: str, seconds: float) -> float:
    vg = VectorGame(game, N, observe=False, auto_reset=False)
    vg.reset(seed=0)
    batch = states[:N]
    vg.load_states(batch)
    vg.rollout(policy, seed=0)  # compile
    dec = 0
    t0 = _clock()
    rep = 0
    while _clock() - t0 < seconds:
        vg.load_states(batch)
        vg.rollout(policy, seed=rep)
        dec += int(vg.last_rollout_lengths.sum())
        rep += 1
    return dec / (_clock() - t0)


def search_mode(name: str) -> str:
    """What ``search`` does by default in ``name``: its prior and margin."""
    from cardenvs.agents.search import SearchAgent

    a = SearchAgent(cardenvs.make_game(name), seed=0)
    if a._prior is None:
        return "PIMC, no prior"
    if a.margin == float("inf"):
        return f"plays its prior {a.prior_name} (margin inf)"
    return f"PIMC over prior {a.prior_name}, margin {a.margin:g} + {a.z:g} SE"


def search_ms(name: str, deals: int, spec: str = "search",
              options: dict | None = None) -> tuple[float, float, int]:
    """CPU milliseconds per decision (median, p90, decisions timed) of agent ``spec`` (a
    search agent, ``search:rollouts=1200,...`` for another budget) at one seat against
    ``rules``, over ``deals`` deals of ``name`` with ``options``."""
    from cardenvs.agents import make_agent

    options = dict(options or {})
    game = cardenvs.make_game(name, **options)
    agent = make_agent(spec, game, seed=0)
    rules = make_agent("rules", game)
    env = __import__(f"cardenvs.{cardenvs.GAMES[name]}", fromlist=["env"]).env(**options)
    times = []
    warm = False
    for d in range(deals):
        env.reset(seed=d)
        for ag in env.agent_iter():
            obs, r, term, trunc, info = env.last()
            if term or trunc:
                env.step(None)
                continue
            seat = env.possible_agents.index(ag)
            legal = env.unwrapped.legal_actions()
            if seat == d % game.n_players:
                s = env.unwrapped.state_vec
                t0 = _clock()
                a = agent.act(obs, legal, {"state": s})
                dt = _clock() - t0
                if len(legal) > 1:
                    if warm:
                        times.append(dt)
                    warm = True
            else:
                a = rules.act(obs, legal, info)
            env.step(a)
    t = np.array(times) * 1e3
    return float(np.median(t)), float(np.quantile(t, 0.9)), len(t)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--games", default=",".join(cardenvs.GAMES))
    ap.add_argument("--out", default=None)
    ap.add_argument("--cpu", type=int, default=None)
    ap.add_argument("--no-search", action="store_true",
                    help="leave out the search ms per decision (the slow part)")
    ap.add_argument("--search-only", metavar="SPEC", default=None,
                    help="only the ms per decision of this search agent spec, e.g. "
                         "search:rollouts=1200,max_candidates=12,epsilon=0.1 (prints only)")
    ap.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                    type=parse_option,
                    help="game option for --search-only (repeatable), e.g. preset=rlcard")
    ap.add_argument("--deals", type=int, default=None,
                    help="deals timed for the search column (default 3, --quick 1)")
    args = ap.parse_args(argv)
    if args.search_only is not None:
        pinned = pin_one_core(args.cpu)
        opts = dict(args.option)
        for name in (g for g in args.games.split(",") if g):
            med, p90, nd = search_ms(name, args.deals or 3, args.search_only, opts)
            print(f"{name} {opts or ''} {args.search_only}: {med:.1f} ms median, {p90:.1f} "
                  f"p90 per decision over {nd} decisions (CPU time; {pinned})")
        return
    if args.option:
        raise SystemExit("--option goes with --search-only")
    pinned = pin_one_core(args.cpu)
    games = [g for g in args.games.split(",") if g]
    for g in games:
        if g not in cardenvs.GAMES:
            raise SystemExit(f"unknown game {g!r}; choose from {', '.join(cardenvs.GAMES)}")
    sec = 0.5 if args.quick else 2.0
    deals = args.deals or (1 if args.quick else 3)
    rows = []
    for name in games:
        game = cardenvs.make_game(name)
        log(f"{name}: positions")
        states = positions(game, max(SIZES), seed=1)
        log(f"{name}: determinize")
        det = determinize_rate(game, states, 100, sec)
        rr = {}
        for pol in POLICIES:
            for N in SIZES:
                log(f"{name}: rollouts {pol} N={N}")
                rr[pol, N] = rollout_rate(game, states, N, pol, sec)
        if args.no_search:
            med, p90, nd = float("nan"), float("nan"), 0
        else:
            log(f"{name}: search")
            med, p90, nd = search_ms(name, deals)
        rows.append((name, det, rr, med, p90, nd))
    import numba

    lines = ["# Search benchmarks", "",
             f"date {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; CPU {cpu_model()} "
             f"({os.cpu_count()} logical cores on the machine; {pinned}); Python "
             f"{platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}; "
             f"{'quick' if args.quick else 'full'} mode ({sec} s per rate); load average at "
             f"the end {os.getloadavg()[0]:.1f} (CPU time: other jobs sharing a core still slow "
             f"it through its caches)", "",
             "| game | determinizations/s | rollout dec/s random N=256 | N=1024 | "
             "heuristic N=256 | N=1024 | heuristic0 N=256 | N=1024 | "
             "search ms/decision (median, p90, decisions) | search default | "
             "heuristic / heuristic0 (N=256) |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: |"]
    for name, det, rr, med, p90, nd in rows:
        lines.append(f"| {name} | {det:,.0f} | {rr['random', 256]:,.0f} | {rr['random', 1024]:,.0f} | "
                     f"{rr['heuristic', 256]:,.0f} | {rr['heuristic', 1024]:,.0f} | "
                     f"{rr['heuristic0', 256]:,.0f} | {rr['heuristic0', 1024]:,.0f} | "
                     f"{med:.1f}, {p90:.1f} ({nd}) | {search_mode(name)} | "
                     f"{rr['heuristic', 256] / rr['heuristic0', 256]:.2f} |")
    for name, det, rr, med, p90, nd in rows:
        if name == "doudizhu":
            lines += ["", "| target | value | result |", "| --- | ---: | --- |"]
            for pol in POLICIES:
                low = min(rr[pol, N] for N in SIZES)
                lines.append(f"| Dou Dizhu rollout decisions/s >= 1,000,000 at N >= 256, {pol} "
                             f"policy | {low:,.0f} | {'PASS' if low >= TARGET_ROLLOUT else 'FAIL'} |")
            if nd:
                lines.append(f"| search <= 100 ms per decision (median, default budget) | "
                             f"{med:.1f} | {'PASS' if med <= 100 else 'FAIL'} |")
    text = "\n".join(lines) + "\n"
    print(text)
    out = args.out or (None if args.quick or args.no_search else "benchmarks/search_results.md")
    if out:
        with open(out, "w") as f:
            f.write(text)
        log(f"wrote {out}")


if __name__ == "__main__":
    main()
