"""Compact vs flat action spaces, measured side by side in one run.

``.venv/bin/python -m benchmarks.compact [--seconds 3] [--sb3-steps 512] [--quick] [--out benchmarks/compact.md]``

``--vector-only --out benchmarks/compact.md`` measures only the VectorGame section and
replaces it in the existing report, keeping the other sections as they are (the section says
when and how it was refreshed); ``--aec-only`` does the same for the masked-random AEC loop's
section (RLCard measured beside it), and with ``--profile`` for the flat loop's profile too.

Times are this process's CPU seconds (``time.process_time``; torch on one thread), so that
other work on a shared machine slows the measurements less than it would wall-clock ones.

* the action-space sizes of every game, flat and compact (:mod:`cardenvs.core.compact`);
* SB3 ``sb3_contrib.MaskablePPO("MlpPolicy")`` learning steps/s on Dou Dizhu, one
  ``SeatEnv`` in a ``DummyVecEnv``, flat vs ``actions="compact"`` (``--sb3-steps`` steps each,
  timed over ``learn``: rollouts and updates; torch on one thread);
* the masked-random AEC loop (``env.last()``, a uniform pick among ``obs["action_mask"]``'s
  ones) on every game, flat vs compact: decisions/s and whole plays/s (a compact play with
  kickers is several decisions), with RLCard's ``doudizhu`` env beside it when ``rlcard`` is
  installed (its steps are whole plays);
* Tianshou's ``Collector`` (``PettingZooEnv`` over the AEC env, a ``DummyVectorEnv`` of 4)
  with the DQN of ``docs/tutorials/tianshou.md`` (an MLP of two 128-unit layers for
  ``player_0``, masked random seats beside it), Dou Dizhu and Pao De Kuai, flat vs compact:
  env steps/s of ``collect`` (no gradient steps);
* RLlib's ``CardGameEnv`` (:mod:`cardenvs.rllib`): env steps/s with uniform legal picks, flat
  (a slot among the legal ids) vs compact (an id under the mask);
* ``VectorGame`` (1,024 games, random decisions), flat ``step_random`` and ``step(actions)``
  vs compact ``step_random``, in whole plays/s (the issue's target: compact within 1.5x of
  flat), interleaved rounds;
* ``--profile``: where the flat Dou Dizhu AEC loop's time goes, and the flat Dou Dizhu
  Tianshou Collector's (cProfile, top functions).
"""

from __future__ import annotations

import argparse
import importlib
import platform
import time
from typing import Callable, Optional

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


#: the clock of every measurement: this process's CPU time (see the module docstring)
_clock = time.process_time


def _loop(env, rng, seconds: float) -> tuple[float, float]:
    decisions = plays = 0
    t0 = _clock()
    while _clock() - t0 < seconds:
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
    dt = _clock() - t0
    return decisions / dt, plays / dt


def best_rate(run: Callable[[], int], seconds: float, repeats: int = 3) -> float:
    """The best of ``repeats`` rates, each over whole calls of ``run`` (it returns the steps it
    made) for ``seconds / repeats`` of CPU time: steps per second."""
    best = 0.0
    for _ in range(repeats):
        n = 0
        t0 = _clock()
        while _clock() - t0 < seconds / repeats:
            n += run()
        best = max(best, n / (_clock() - t0))
    return best


def rlcard_loop(seconds: float, seed: int = 0, repeats: int = 3) -> Optional[float]:
    """RLCard ``doudizhu`` steps/s with a uniform legal pick, the best of ``repeats`` runs
    (``None`` without rlcard)."""
    try:
        import rlcard
    except ImportError:
        return None
    env = rlcard.make("doudizhu", config={"seed": seed})
    rng = np.random.default_rng(seed)

    def game() -> int:
        n = 0
        state, _ = env.reset()
        while not env.is_over():
            legal = list(state["legal_actions"].keys())
            state, _ = env.step(legal[rng.integers(len(legal))])
            n += 1
        return n

    return best_rate(game, seconds, repeats)


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
    t0 = _clock()
    model.learn(steps, reset_num_timesteps=True)
    return steps / (_clock() - t0)


def tianshou_collector(name: str, actions: str, n_envs: int = 4, hidden: int = 128,
                       seed: int = 0):
    """The Tianshou ``Collector`` of ``docs/tutorials/tianshou.md``'s DQN recipe on ``name``
    (``player_0`` a DQN, ``hidden`` x 2 MLP, epsilon 0.1; the other seats masked random),
    over ``n_envs`` envs with a replay buffer; ``None`` without tianshou."""
    try:
        from tianshou.algorithm import DQN
        from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
        from tianshou.algorithm.multiagent.marl import MultiAgentOffPolicyAlgorithm
        from tianshou.algorithm.optim import AdamOptimizerFactory
        from tianshou.algorithm.random import (
            MARLRandomDiscreteMaskedOffPolicyAlgorithm as Random)
        from tianshou.data import Collector, VectorReplayBuffer
        from tianshou.env import DummyVectorEnv, PettingZooEnv
        from tianshou.utils.net.common import Net
    except ImportError:
        return None
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(seed)
    mod = importlib.import_module(f"cardenvs.{spec(name).env_module}")

    def make():
        return PettingZooEnv(mod.env(actions=actions))

    env = make()
    net = Net(state_shape=env.observation_space["observation"].shape,
              action_shape=env.action_space.n, hidden_sizes=[hidden, hidden])
    dqn = DQN(policy=DiscreteQLearningPolicy(model=net, action_space=env.action_space,
                                             eps_training=0.1),
              optim=AdamOptimizerFactory(lr=1e-3), gamma=1.0, target_update_freq=200)
    algorithm = MultiAgentOffPolicyAlgorithm(
        algorithms=[dqn] + [Random(env.action_space) for _ in env.agents[1:]], env=env)
    venv = DummyVectorEnv([make] * n_envs)
    venv.seed(seed)
    collector = Collector(algorithm, venv, VectorReplayBuffer(20_000, n_envs),
                          exploration_noise=True)
    collector.reset()
    return collector


def tianshou_rate(name: str, actions: str, seconds: float, repeats: int = 3
                  ) -> Optional[float]:
    """Env steps/s of the DQN recipe's ``Collector.collect`` (:func:`tianshou_collector`), the
    best of ``repeats`` runs of ``seconds / repeats`` each (``None`` without tianshou)."""
    import warnings

    collector = tianshou_collector(name, actions)
    if collector is None:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Tianshou's notes on object-dtype batches
        collector.collect(n_step=8)  # warm-up
        return best_rate(lambda: collector.collect(n_step=8).n_collected_steps, seconds,
                         repeats)


def rllib_rate(name: str, actions: str, seconds: float, seed: int = 0, repeats: int = 3
               ) -> Optional[float]:
    """Env steps/s of RLlib's ``CardGameEnv`` with uniform legal picks (a slot among the legal
    ids, or an id under the compact mask), the best of ``repeats`` runs (``None`` without
    ray[rllib])."""
    try:
        from cardenvs.rllib import CardGameEnv
    except ImportError:
        return None
    env = CardGameEnv({"game": name, "actions": actions, "seed": seed})
    rng = np.random.default_rng(seed)

    def game() -> int:
        n = 0
        obs, _ = env.reset()
        done = False
        while not done:
            (agent, o), = obs.items()
            if actions == "compact":
                legal = np.flatnonzero(o["action_mask"])
                act = int(legal[rng.integers(len(legal))])
            else:
                act = int(rng.integers(int((o["legal"] >= 0).sum())))
            obs, _, term, _, _ = env.step({agent: act})
            done = term["__all__"]
            n += 1
        return n

    return best_rate(game, seconds, repeats)


def vector_rates(name: str, seconds: float, n: int = 1024, observe: bool = False,
                 rounds: int = 3) -> dict[str, tuple[float, float]]:
    """``VectorGame(name, n)`` with random decisions, flat and compact side by side:
    ``{"flat": ..., "flat-given": ..., "compact": ...}``, each the best ``(decisions/s, whole
    plays/s)`` of ``rounds`` interleaved rounds of ``seconds / rounds`` each (a load that
    comes and goes hits all three alike).  ``"flat"``: ``step_random``, picked inside numba;
    ``"flat-given"``: ``step(random_actions())``, actions handed in as an agent would;
    ``"compact"``: ``VectorGame(..., actions="compact").step_random()``, a uniform offered
    decision per slot (a play with kickers takes several)."""
    from cardenvs.vector import VectorGame

    batches = {}
    for kind in ("flat", "flat-given", "compact"):
        vg = VectorGame(name, n, actions="compact" if kind == "compact" else "flat",
                        observe=observe)
        vg.reset(seed=0)
        vg.step_random()
        batches[kind] = vg
    steps: dict[str, Callable[[], int]] = {
        "flat": lambda: (batches["flat"].step_random(), n)[1],
        "flat-given": lambda: (batches["flat-given"].step(batches["flat-given"].random_actions()),
                               n)[1],
        "compact": lambda: (batches["compact"].step_random(),
                            int(batches["compact"].completed.sum()))[1],
    }
    best = {kind: (0.0, 0.0) for kind in steps}
    for _ in range(rounds):
        for kind, step in steps.items():
            dec = plays = 0
            t0 = _clock()
            while _clock() - t0 < seconds / rounds:
                plays += step()
                dec += n
            dt = _clock() - t0
            best[kind] = max(best[kind], (dec / dt, plays / dt))
    return best


AEC_TITLE = "## Masked-random AEC loop (`env.last()`, uniform among the mask's ones)"
PROFILE_TITLE = "## Profile of the flat Dou Dizhu loop (tottime)"


def aec_section(games: list[str], seconds: float, note: str = "") -> list[str]:
    """The report's masked-random AEC loop section: flat and compact per game, with RLCard's
    ``doudizhu`` measured in the same interleaved rounds as Dou Dizhu (the best round of
    each: a load that comes and goes hits all of them alike), printed row by row; ``note``
    (a sentence) follows the table."""
    sec = ["", AEC_TITLE, "",
           "| game | flat decisions/s | compact decisions/s | compact plays/s | "
           "compact/flat (decisions) |", "| --- | ---: | ---: | ---: | ---: |"]
    print("\n".join(sec), flush=True)
    rates = {}
    rl: Optional[float] = None
    for name in games:
        f = c = cp = 0.0
        for _ in range(3):
            if name == "doudizhu":
                r = rlcard_loop(seconds / 3, repeats=1)
                rl = None if r is None else max(rl or 0.0, r)
            f = max(f, aec_loop(name, "flat", seconds / 3, repeats=1)[0])
            c2, cp2 = aec_loop(name, "compact", seconds / 3, repeats=1)
            c, cp = max(c, c2), max(cp, cp2)
        rates[name] = (f, c, cp)
        sec.append(f"| {name} | {f:,.0f} | {c:,.0f} | {cp:,.0f} | {c / f:.2f}x |")
        print(sec[-1], flush=True)
    tail = []
    if rl is not None and "doudizhu" in rates:
        f, c, cp = rates["doudizhu"]
        tail.append(f"RLCard `doudizhu` env, the same loop: {rl:,.0f} steps/s (whole plays). "
                    f"Dou Dizhu flat: **{f / rl:.1f}x** RLCard; compact: **{c / rl:.1f}x** in "
                    f"decisions, {cp / rl:.1f}x in whole plays.")
    if note:
        tail.append(note)
    if tail:
        sec += ["", " ".join(tail)]
        print("\n".join(sec[-2:]), flush=True)
    return sec


def profile_section() -> list[str]:
    """The report's section on where the flat Dou Dizhu AEC loop's time goes
    (:func:`profile_flat`)."""
    prof = profile_flat()
    print(prof)
    return ["", PROFILE_TITLE, "", "```text", prof.strip(), "```"]


VECTOR_TITLE = "## VectorGame, 1,024 games, random decisions"


def vector_section(games: list[str], seconds: float, note: str = "") -> list[str]:
    """The report's VectorGame section (:func:`vector_rates` per game, raw and observing),
    printed row by row as measured; ``note`` (a sentence) follows its introduction."""
    sec = ["", VECTOR_TITLE, "",
           "Raw: `observe=False`; with observations: `observe=True`. Each row's three batches "
           "are measured in interleaved rounds (the best round of each). The target (issue 48): "
           "compact whole plays/s within 1.5x of flat `step_random`'s, i.e. the last column's "
           "first ratio at most 1.5." + (" " + note if note else ""), "",
           "| game | observe | flat step_random plays/s | flat step(actions) plays/s | "
           "compact decisions/s | compact plays/s | flat / compact (plays: step_random, "
           "step(actions)) |", "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    print("\n".join(sec), flush=True)
    for name in games:
        for observe in (False, True):
            r = vector_rates(name, seconds, observe=observe)
            fp, fg = r["flat"][1], r["flat-given"][1]
            cd, cp = r["compact"]
            sec.append(f"| {name} | {observe} | {fp:,.0f} | {fg:,.0f} | {cd:,.0f} | "
                       f"{cp:,.0f} | {fp / cp:.2f}x, {fg / cp:.2f}x |")
            print(sec[-1], flush=True)
    return sec


def replace_section(text: str, title: str, section: list[str]) -> str:
    """``text`` (a report) with its section headed ``title`` (up to the next ``## `` heading)
    replaced by ``section`` (lines, starting with a blank one), or ``section`` appended."""
    lines = text.rstrip("\n").split("\n")
    if title not in lines:
        return "\n".join(lines + section) + "\n"
    a = lines.index(title)
    b = next((k for k in range(a + 1, len(lines)) if lines[k].startswith("## ")), len(lines))
    while a > 0 and lines[a - 1] == "":
        a -= 1
    keep_tail = [""] + lines[b:] if b < len(lines) else []
    return "\n".join(lines[:a] + section + keep_tail) + "\n"


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


def _profile_collect(name: str, actions: str, steps: int):
    """cProfile stats of the DQN recipe's ``collect(n_step=steps)`` (``None`` without
    tianshou)."""
    import cProfile
    import pstats
    import warnings

    collector = tianshou_collector(name, actions)
    if collector is None:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        collector.collect(n_step=8)
        pr = cProfile.Profile()
        pr.enable()
        collector.collect(n_step=steps)
        pr.disable()
    return pstats.Stats(pr)


def profile_tianshou_flat(name: str = "doudizhu", steps: int = 200, top: int = 12
                          ) -> Optional[str]:
    """The top functions (internal time) of the DQN recipe's ``Collector.collect`` on the flat
    space of ``name`` (``None`` without tianshou)."""
    import io

    st = _profile_collect(name, "flat", steps)
    if st is None:
        return None
    buf = io.StringIO()
    st.stream = buf  # type: ignore[attr-defined]
    st.sort_stats("tottime").print_stats(top)
    return relative_paths(buf.getvalue())


def tianshou_env_share(name: str = "doudizhu", actions: str = "compact", steps: int = 1000
                       ) -> Optional[float]:
    """The share of the DQN recipe's ``collect`` time spent in ``PettingZooEnv.step`` (the
    cardenvs env and Tianshou's mask list), under cProfile (``None`` without tianshou)."""
    st = _profile_collect(name, actions, steps)
    if st is None:
        return None
    total = env = 0.0
    for (path, _, func), row in st.stats.items():  # type: ignore[attr-defined]
        if path.endswith("tianshou/data/collector.py") and func == "collect":
            total = max(total, row[3])
        if path.endswith("tianshou/env/pettingzoo_env.py") and func == "step":
            env += row[3]
    return env / total if total else None


def relative_paths(text: str) -> str:
    """``text`` with this checkout's and the installed packages' folders left out of its paths
    and the objects' addresses left out (a results file names no folder of the machine that
    wrote it)."""
    import os
    import site
    import sysconfig

    roots = [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]
    roots += [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["stdlib"],
              *site.getsitepackages()]
    for root in sorted(set(roots), key=len, reverse=True):
        text = text.replace(root.rstrip("/") + "/", "")
    import re

    return re.sub(r" at 0x[0-9a-f]+", "", text)  # nor an address of the process


def tianshou_section(seconds: float) -> list[str]:
    """The report's Tianshou section: :func:`tianshou_rate` flat and compact, Dou Dizhu and
    Pao De Kuai, interleaved rounds (the best of each)."""
    sec = ["", "## Tianshou Collector with the DQN recipe (env steps/s of `collect`)", "",
           "`PettingZooEnv` over the AEC env, 4 envs in a `DummyVectorEnv`, `player_0` a DQN "
           "(two 128-unit layers, epsilon 0.1), the other seats masked random; no gradient "
           "steps (docs/tutorials/tianshou.md).", ""]
    rows = {}
    for name in ("doudizhu", "paodekuai"):
        f = c = 0.0
        for _ in range(2):
            r = tianshou_rate(name, "flat", seconds / 2, repeats=1)
            if r is None:
                return sec + ["tianshou is not installed."]
            f = max(f, r)
            c = max(c, tianshou_rate(name, "compact", seconds / 2, repeats=1) or 0.0)
        rows[name] = (f, c)
    sec += ["| game | flat steps/s | compact steps/s | compact / flat |",
            "| --- | ---: | ---: | ---: |"]
    sec += [f"| {name} | {f:,.1f} | {c:,.0f} | **{c / f:.1f}x** |"
            for name, (f, c) in rows.items()]
    return sec


def rllib_section(seconds: float) -> list[str]:
    """The report's RLlib section: :func:`rllib_rate` flat and compact, Dou Dizhu and Pao De
    Kuai."""
    sec = ["", "## RLlib `CardGameEnv` (env steps/s, uniform legal picks)", "",
           "Flat: the action is a slot among the legal ids (`LegalActionRLModule` scores them); "
           "compact: a compact id under `action_mask` (`MaskedMLPRLModule`). A compact step is "
           "one decision (a play with kickers takes several).", ""]
    rows = {}
    for name in ("doudizhu", "paodekuai"):
        f = rllib_rate(name, "flat", seconds)
        if f is None:
            return sec + ["ray[rllib] is not installed."]
        rows[name] = (f, rllib_rate(name, "compact", seconds) or 0.0)
    sec += ["| game | flat steps/s | compact steps/s | compact / flat |",
            "| --- | ---: | ---: | ---: |"]
    sec += [f"| {name} | {f:,.0f} | {c:,.0f} | {c / f:.2f}x |" for name, (f, c) in rows.items()]
    return sec


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="per AEC loop measurement")
    ap.add_argument("--sb3-steps", type=int, default=512)
    ap.add_argument("--games", default=",".join(REGISTRY))
    ap.add_argument("--no-sb3", action="store_true")
    ap.add_argument("--no-tianshou", action="store_true")
    ap.add_argument("--no-rllib", action="store_true")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--quick", action="store_true",
                    help="short measurements: --seconds 1 --sb3-steps 256")
    ap.add_argument("--out", default=None, help="write the markdown report here")
    only = ap.add_mutually_exclusive_group()
    only.add_argument("--vector-only", action="store_true",
                      help="measure only the VectorGame section and replace it in --out, "
                           "keeping the report's other sections")
    only.add_argument("--aec-only", action="store_true",
                      help="measure only the masked-random AEC loop section (RLCard beside "
                           "it; with --profile, the flat loop's profile too) and replace it in "
                           "--out, keeping the report's other sections")
    a = ap.parse_args(argv)
    if a.quick:
        a.seconds, a.sb3_steps = 1.0, 256
    games = [g for g in a.games.split(",") if g]
    import os

    if a.vector_only:
        if not a.out or not os.path.exists(a.out):
            ap.error("--vector-only replaces the VectorGame section of an existing report: "
                     "give it with --out")
        note = (f"This section was refreshed alone by `python -m benchmarks.compact "
                f"--vector-only --seconds {a.seconds:g}` ({time.strftime('%Y-%m-%d %H:%M')}, "
                f"load average {os.getloadavg()[0]:.1f} at its start); the other sections are "
                f"from the run named at the top.")
        sec = vector_section(games, a.seconds, note)
        with open(a.out) as fh:
            text = fh.read()
        with open(a.out, "w") as fh:
            fh.write(replace_section(text, VECTOR_TITLE, sec))
        print(f"wrote {a.out}")
        return 0
    if a.aec_only:
        if not a.out or not os.path.exists(a.out):
            ap.error("--aec-only replaces the AEC loop section of an existing report: give it "
                     "with --out")
        cmd = "--aec-only" + (" --profile" if a.profile else "")
        note = (f"This section was refreshed alone by `python -m benchmarks.compact {cmd} "
                f"--seconds {a.seconds:g}` ({time.strftime('%Y-%m-%d %H:%M')}, load average "
                f"{os.getloadavg()[0]:.1f} at its start)" + (", with the flat loop's profile"
                if a.profile else "") + "; the other sections are from the run named at the top.")
        sec = aec_section(games, a.seconds, note)
        with open(a.out) as fh:
            text = replace_section(fh.read(), AEC_TITLE, sec)
        if a.profile:
            text = replace_section(text, PROFILE_TITLE, profile_section())
        with open(a.out, "w") as fh:
            fh.write(text)
        print(f"wrote {a.out}")
        return 0

    flags = "".join(f" --{f}" for f in ("profile",) if getattr(a, f))
    lines = [f"# Compact action spaces: measurements ({time.strftime('%Y-%m-%d %H:%M')}, "
             f"{platform.processor() or platform.machine()}, one process)", "",
             f"Written by `python -m benchmarks.compact --seconds {a.seconds:g} --sb3-steps "
             f"{a.sb3_steps}{flags}`, on {os.cpu_count()} CPUs with a load average of "
             f"{os.getloadavg()[0]:.1f} at the start. Rates are per second of this process's "
             f"CPU time, so other work on the machine slows them less than wall time would; "
             f"compare the rows side by side, not with other runs.", "",
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
    if not a.no_tianshou:
        sec = tianshou_section(a.seconds)
        print("\n".join(sec), flush=True)
        lines += sec
    if not a.no_rllib:
        sec = rllib_section(a.seconds)
        print("\n".join(sec), flush=True)
        lines += sec
    lines += aec_section(games, a.seconds)
    lines += vector_section(games, a.seconds)
    if a.profile:
        lines += profile_section()
        ts = None if a.no_tianshou else profile_tianshou_flat()
        if ts is not None:
            lines += ["", "## Profile of the flat Dou Dizhu Tianshou Collector (tottime)", "",
                      "The DQN recipe's `collect(n_step=200)` on `doudizhu_v0.env()`; "
                      "`pettingzoo_env.py(<listcomp>)` is `PettingZooEnv`'s "
                      "`[obm == 1 for obm in observation[\"action_mask\"]]` at every step, "
                      "and `numpy.asanyarray` mostly the Collector's conversion of that list.",
                      "", "```text", ts.strip(), "```"]
            print(ts)
            share = tianshou_env_share()
            if share is not None:
                lines += ["", f"In compact mode (`doudizhu_v0.env(actions=\"compact\")`, "
                          f"`collect(n_step=1000)`) `PettingZooEnv.step`, the env with "
                          f"Tianshou's mask list, is **{100 * share:.0f}%** of the collect "
                          f"time under cProfile; the rest is Tianshou's policy dispatch and "
                          f"batches."]
                print(lines[-1])
    if a.out:
        with open(a.out, "w") as fh:
            fh.write("\n".join(lines) + "\n")
        print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
