"""Compact vs flat action spaces, measured side by side in one run.

``.venv/bin/python -m benchmarks.compact [--seconds 3] [--sb3-steps 512] [--out benchmarks/compact.md]``

* the action-space sizes of every game, flat and compact (:mod:`cardenvs.core.compact`);
* SB3 ``sb3_contrib.MaskablePPO("MlpPolicy")`` learning steps/s on Dou Dizhu, one
  ``SeatEnv`` in a ``DummyVecEnv``, flat vs ``actions="compact"`` (``--sb3-steps`` steps each,
  timed over ``learn``: rollouts and updates; torch on one thread);
* the masked-random AEC loop (``env.last()``, a uniform pick among ``obs["action_mask"]``'s
  ones) on every game, flat vs compact: decisions/s and whole plays/s (a compact play with
  kickers is several decisions), with RLCard's ``doudizhu`` env beside it when ``rlcard`` is
  installed (its steps are whole plays);
* ``--profile``: where the flat Dou Dizhu loop's time goes (cProfile, top functions).
"""

from __future__ import annotations

import argparse
import importlib
import platform
import time
from typing import Optional

import numpy as np

from cardenvs import make_game
from cardenvs.core.compact import codec_of
from cardenvs.registry import REGISTRY, spec


def sizes() -> list[tuple[str, int, int, int, int, int]]:
    """``(game, flat, compact, other ids, bodies, kicker ids)`` of every registered game."""
    out = []
    for name in REGISTRY:
        g = make_game(name)
        c = codec_of(g)
        out.append((name, g.n_actions, c.n, c.n_other, c.n_bodies, c.n_kickers))
    return out


def aec_loop(name: str, actions: str, seconds: float, seed: int = 0,
             repeats: int = 3) -> tuple[float, float]:
    """Masked-random AEC loop: the best ``(decisions/s, whole actions/s)`` of ``repeats``
    runs of ``seconds / repeats`` each (the best run is the least disturbed by other load)."""
    mod = importlib.import_module(f"cardenvs.{spec(name).env_module}")
    env = mod.env(actions=actions)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    best = (0.0, 0.0)
    for _ in range(repeats):
        r = _loop(env, rng, seconds / repeats)
        best = max(best, r)
    return best


def _loop(env, rng, seconds: float) -> tuple[float, float]:
    decisions = plays = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        env.reset()
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
            decisions += 1
        plays += len(env.unwrapped.history)
    dt = time.perf_counter() - t0
    return decisions / dt, plays / dt


def rlcard_loop(seconds: float, seed: int = 0, repeats: int = 3) -> Optional[float]:
    """RLCard ``doudizhu`` steps/s with a uniform legal pick, the best of ``repeats`` runs
    (``None`` without rlcard)."""
    try:
        import rlcard
    except ImportError:
        return None
    env = rlcard.make("doudizhu", config={"seed": seed})
    rng = np.random.default_rng(seed)
    best = 0.0
    for _ in range(repeats):
        n = 0
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds / repeats:
            state, _ = env.reset()
            while not env.is_over():
                legal = list(state["legal_actions"].keys())
                state, _ = env.step(legal[rng.integers(len(legal))])
                n += 1
        best = max(best, n / (time.perf_counter() - t0))
    return best


def sb3_rate(name: str, actions: str, steps: int, seed: int = 0) -> Optional[float]:
    """MaskablePPO ``MlpPolicy`` learning steps/s on one ``SeatEnv`` (``None`` without
    sb3-contrib)."""
    try:
        from sb3_contrib import MaskablePPO
        from stable_baselines3.common.vec_env import DummyVecEnv
    except ImportError:
        return None
    import torch

    from cardenvs.wrappers import SeatEnv

    torch.set_num_threads(1)  # a small MLP: more threads only contend (2-core machines)
    venv = DummyVecEnv([lambda: SeatEnv(name, actions=actions)])
    n_steps = min(256, steps)
    model = MaskablePPO("MlpPolicy", venv, n_steps=n_steps, batch_size=min(64, n_steps),
                        n_epochs=4, seed=seed, device="cpu")
    model.learn(min(64, steps))  # warm-up: torch, the kernels
    t0 = time.perf_counter()
    model.learn(steps, reset_num_timesteps=True)
    return steps / (time.perf_counter() - t0)


def vector_rate(name: str, actions: str, seconds: float, n: int = 1024, observe: bool = False,
                repeats: int = 3) -> tuple[float, float]:
    """``VectorGame(name, n, actions=actions)`` with random decisions: the best
    ``(decisions/s, whole plays/s)`` of ``repeats`` runs (``"flat"``: ``step_random``, picked
    inside numba; ``"flat-given"``: ``step(random_actions())``, actions handed in as an agent
    would; ``"compact"``: a uniform offered decision per slot, picked in numpy)."""
    from cardenvs.vector import VectorGame

    vg = VectorGame(name, n, actions="flat" if actions == "flat-given" else actions,
                    observe=observe)
    vg.reset(seed=0)
    vg.step_random()
    best = (0.0, 0.0)
    for _ in range(repeats):
        dec = plays = 0
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds / repeats:
            if actions == "flat-given":
                vg.step(vg.random_actions())
            else:
                vg.step_random()
            dec += n
            plays += int(vg.completed.sum()) if actions == "compact" else n
        dt = time.perf_counter() - t0
        best = max(best, (dec / dt, plays / dt))
    return best


def profile_flat(name: str = "doudizhu", seconds: float = 3.0, top: int = 14) -> str:
    """The top functions (cumulative time) of the flat masked-random AEC loop."""
    import cProfile
    import io
    import pstats

    aec_loop(name, "flat", 0.5)
    pr = cProfile.Profile()
    pr.enable()
    aec_loop(name, "flat", seconds)
    pr.disable()
    buf = io.StringIO()
    pstats.Stats(pr, stream=buf).sort_stats("tottime").print_stats(top)
    return relative_paths(buf.getvalue())


def relative_paths(text: str) -> str:
    """``text`` with this checkout's and the installed packages' folders left out of its paths
    (a results file names no folder of the machine that wrote it)."""
    import os
    import site
    import sysconfig

    roots = [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]
    roots += [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["stdlib"],
              *site.getsitepackages()]
    for root in sorted(set(roots), key=len, reverse=True):
        text = text.replace(root.rstrip("/") + "/", "")
    return text


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="per AEC loop measurement")
    ap.add_argument("--sb3-steps", type=int, default=512)
    ap.add_argument("--games", default=",".join(REGISTRY))
    ap.add_argument("--no-sb3", action="store_true")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--out", default=None, help="write the markdown report here")
    a = ap.parse_args(argv)
    games = [g for g in a.games.split(",") if g]
    import os

    lines = [f"# Compact action spaces: measurements ({time.strftime('%Y-%m-%d %H:%M')}, "
             f"{platform.processor() or platform.machine()}, one process)", "",
             f"Written by `python -m benchmarks.compact --seconds {a.seconds:g} --sb3-steps "
             f"{a.sb3_steps}`, on {os.cpu_count()} CPUs with a load average of "
             f"{os.getloadavg()[0]:.1f} at the start (other work shares the machine: compare "
             f"the rows side by side, not with other runs).", "",
             "## Sizes", "", "| game | flat | compact | other ids | bodies | kicker ids | ratio |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name, flat, comp, other, bodies, kick in sizes():
        lines.append(f"| {name} | {flat:,} | {comp:,} | {other} | {bodies} | {kick} | "
                     f"{flat / comp:.1f}x |")
    print("\n".join(lines), flush=True)
    if not a.no_sb3:
        fl = sb3_rate("doudizhu", "flat", a.sb3_steps)
        co = sb3_rate("doudizhu", "compact", a.sb3_steps)
        sec = ["", "## SB3 MaskablePPO MlpPolicy on Dou Dizhu (one SeatEnv, learn steps/s)", ""]
        if fl is None:
            sec.append("sb3-contrib is not installed.")
        else:
            sec += ["| actions | learning steps/s |", "| --- | ---: |",
                    f"| flat | {fl:,.1f} |", f"| compact | {co:,.1f} |", "",
                    f"compact / flat: **{co / fl:.1f}x** ({a.sb3_steps} steps each)"]
        print("\n".join(sec), flush=True)
        lines += sec
    sec = ["", "## Masked-random AEC loop (`env.last()`, uniform among the mask's ones)", "",
           "| game | flat decisions/s | compact decisions/s | compact plays/s | "
           "compact/flat (decisions) |", "| --- | ---: | ---: | ---: | ---: |"]
    rates = {}
    rl: Optional[float] = None
    for name in games:
        # interleaved rounds (RLCard beside Dou Dizhu), the best of each: a load that comes
        # and goes hits all of them alike
        f = c = cp = 0.0
        for _ in range(3):
            if name == "doudizhu":
                r = rlcard_loop(a.seconds / 3, repeats=1)
                rl = None if r is None else max(rl or 0.0, r)
            f = max(f, aec_loop(name, "flat", a.seconds / 3, repeats=1)[0])
            c2, cp2 = aec_loop(name, "compact", a.seconds / 3, repeats=1)
            c, cp = max(c, c2), max(cp, cp2)
        rates[name] = (f, c, cp)
        sec.append(f"| {name} | {f:,.0f} | {c:,.0f} | {cp:,.0f} | {c / f:.2f}x |")
        print(sec[-1], flush=True)
    if rl is not None and "doudizhu" in rates:
        f, c, cp = rates["doudizhu"]
        sec += ["", f"RLCard `doudizhu` env, the same loop: {rl:,.0f} steps/s (whole plays). "
                f"Dou Dizhu flat: **{f / rl:.1f}x** RLCard; compact: **{c / rl:.1f}x** in "
                f"decisions, {cp / rl:.1f}x in whole plays."]
    lines += sec
    print("\n".join(sec[-2:]), flush=True)
    sec = ["", "## VectorGame, 1,024 games, random decisions", "",
           "Raw: `observe=False`; with observations: `observe=True` (the compact batch copies "
           "each moved game's flat observation into its wider rows).", "",
           "| game | observe | flat step_random plays/s | flat step(actions) plays/s | "
           "compact decisions/s | compact plays/s | flat / compact (plays: step_random, "
           "step(actions)) |", "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for name in games:
        for observe in (False, True):
            _, fp = vector_rate(name, "flat", a.seconds, observe=observe)
            _, fg = vector_rate(name, "flat-given", a.seconds, observe=observe)
            cd, cp = vector_rate(name, "compact", a.seconds, observe=observe)
            sec.append(f"| {name} | {observe} | {fp:,.0f} | {fg:,.0f} | {cd:,.0f} | "
                       f"{cp:,.0f} | {fp / cp:.2f}x, {fg / cp:.2f}x |")
            print(sec[-1], flush=True)
    lines += sec
    if a.profile:
        prof = profile_flat()
        lines += ["", "## Profile of the flat Dou Dizhu loop (tottime)", "", "```text",
                  prof.strip(), "```"]
        print(prof)
    if a.out:
        with open(a.out, "w") as fh:
            fh.write("\n".join(lines) + "\n")
        print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
