"""Load test of ``cardenvs serve``: how soon an agent's move reaches the browser, with 1 and with
20 concurrent sessions on one server on 127.0.0.1.

The server runs as its own process (the app of ``cardenvs serve`` on a free port).  Each
session is a websocket client in this process playing seat 0 of a game (the six games in
turn) against one agent spec in the other seats, answering its turns with a random legal
action and starting a new deal when one ends.  Two paces:

* ``paced``: as people play: the agents' default delay (0.6 s between moves) and a player
  who answers after 1 s; measured per agent move: the server's time for it (``think_ms`` of
  its message: the agent's decision, the step and the message, in a worker thread while the
  other sessions run), i.e. how soon it could appear;
* ``flat out``: no delay, answers at once (every session loads the server all the time);
  measured per agent move: the time from the message before it (the player's action sent,
  or the previous agent move received) to its message.

Usage::

    python -m benchmarks.web_load                         # writes benchmarks/web_load.md
    python -m benchmarks.web_load --seconds 10 --sessions 1,20 --agents rules,search

The numbers are measured, not asserted: the target (an agent's move within 0.5 s at the
default budgets, on 2 cores, with 20 sessions) is read off the table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
GAMES = ["doudizhu", "doudizhu4", "wakeng", "niangniang", "wulong", "paodekuai"]

SERVER = r"""
import sys
from cardenvs.web.server import create_app
import uvicorn
uvicorn.run(create_app(delay=0), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning",
            ws="websockets-sansio")
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def session(port: int, k: int, agent: str, until: float, lat: list, deals: list,
                  paced: bool, warm: bool = False) -> None:
    """One browser session: deals of game ``k % 6`` against ``agent`` until ``until`` (the
    deal in progress then is left); ``warm``: one whole deal, nothing measured."""
    from websockets.asyncio.client import connect

    rng = np.random.default_rng(k)
    game = GAMES[k % len(GAMES)]
    async with connect(f"ws://127.0.0.1:{port}/ws", max_size=None) as ws:
        seed = 1000 * k
        while warm or time.monotonic() < until:
            seed += 1
            await ws.send(json.dumps({"type": "start", "game": game, "seat": 0, "agents": agent,
                                      "seed": seed, "delay": 0.6 if paced else 0}))
            mark = None  # when the message before the next agent move was sent / received
            while True:
                m = json.loads(await ws.recv())
                now = time.monotonic()
                if m["type"] == "error":
                    raise RuntimeError(f"{game} / {agent}: {m['message']}")
                if paced and "think_ms" in m:
                    lat.append(m["think_ms"] / 1000)
                elif not paced and mark is not None and m["turn"] > 0:
                    lat.append(now - mark)
                if m["done"]:
                    deals.append(game)
                    break
                if not warm and now > until:
                    break
                if m["to_move"] == 0:
                    if paced:
                        await asyncio.sleep(1.0)
                    legal = m["legal"]
                    await ws.send(json.dumps({"type": "act", "turn": m["turn"],
                                              "id": legal[rng.integers(len(legal))]["id"]}))
                    mark = time.monotonic()
                else:
                    mark = now
            if warm:
                return


async def run(port: int, n: int, agent: str, seconds: float, paced: bool, warm: bool = False):
    lat: list = []
    deals: list = []
    until = time.monotonic() + seconds
    await asyncio.gather(*(session(port, k, agent, until, lat, deals, paced, warm)
                           for k in range(n)))
    return np.array(lat), len(deals)


def write_table(args, rows) -> None:
    """Write the rows measured so far to ``args.out``."""
    load = os.getloadavg()
    lines = [
        "# `cardenvs serve` under load: how soon an agent's move reaches the browser",
        "",
        f"Written by `python -m benchmarks.web_load` ({time.strftime('%Y-%m-%d %H:%M')}, "
        f"{args.seconds:g} s per row; {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores; load average {load[0]:.1f} when it ended: the cores were "
        f"shared with other work).",
        "",
        "One server process on 127.0.0.1; each session plays seat 0 of a game (the six in "
        "turn) against the agent in the other seats. Paced: the default 0.6 s delay, the "
        "player answers after 1 s; latency = the server's time for an agent's move "
        "(decision, step, message). Flat out: no delay, answers at once; latency = from the "
        "message before an agent's move to its message. Deals: those finished within the "
        "row's time (a deal in progress at the end is left).",
        "",
        "| agent | pace | sessions | agent moves | deals | p50 ms | p95 ms | p99 ms | max ms | "
        "within 0.5 s |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for agent, pace, n, moves, n_deals, wall, p50, p95, p99, mx, frac in rows:
        lines.append(f"| {agent} | {pace} | {n} | {moves:,} | {n_deals:,} | {p50 * 1000:.0f} | "
                     f"{p95 * 1000:.0f} | {p99 * 1000:.0f} | {mx * 1000:.0f} | {frac:.1%} |")
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", default="1,20", help="numbers of concurrent sessions")
    ap.add_argument("--agents", default="rules,trained,search",
                    help="agent specs, each measured on its own (default budgets)")
    ap.add_argument("--seconds", type=float, default=15.0, help="time per measurement")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "web_load.md"))
    args = ap.parse_args(argv)
    sessions = [int(x) for x in args.sessions.split(",")]
    agents = args.agents.split(",")
    port = free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-c", SERVER, str(port)], cwd=ROOT, env=env)
    try:
        for _ in range(600):
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        # warm up: a whole deal of every game against every agent (numba kernels compiled or
        # loaded, weights read), not measured
        for agent in agents:
            t = time.monotonic()
            asyncio.run(run(port, len(GAMES), agent, 0, False, warm=True))
            print(f"warmed {agent} in {time.monotonic() - t:.0f} s", flush=True)
        rows = []
        for agent in agents:
            for paced in (True, False):
                for n in sessions:
                    t = time.monotonic()
                    lat, n_deals = asyncio.run(run(port, n, agent, args.seconds, paced))
                    wall = time.monotonic() - t
                    q = np.percentile(lat, [50, 95, 99]) if len(lat) else [float("nan")] * 3
                    pace = "paced" if paced else "flat out"
                    rows.append((agent, pace, n, len(lat), n_deals, wall, *q,
                                 lat.max() if len(lat) else float("nan"),
                                 float((lat <= 0.5).mean()) if len(lat) else 0.0))
                    print(f"{agent:10s} {pace:8s} {n:3d} sessions: {len(lat):6d} agent moves, "
                          f"p50 {q[0] * 1000:.0f} ms, p95 {q[1] * 1000:.0f} ms, max "
                          f"{rows[-1][9] * 1000:.0f} ms, within 0.5 s {rows[-1][10]:.1%}",
                          flush=True)
                    write_table(args, rows)
    finally:
        proc.terminate()
        proc.wait(20)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
