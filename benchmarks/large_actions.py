"""MaskablePPO steps/s with a legal-action-scoring policy vs one logit per action id.

Usage (from the repository root)::

    python -m benchmarks.large_actions                  # doudizhu and wakeng, prints markdown
    python -m benchmarks.large_actions --steps 4096 --out benchmarks/large_actions.md   # the last run
    python -m benchmarks.large_actions --games doudizhu --steps 8192 --out /tmp/large.md

For each game, sb3-contrib ``MaskablePPO`` learns ``--steps`` environment steps (32 games,
``n_steps=64``, ``batch_size=512``, ``n_epochs=4``; collection and updates both counted) with

* **old**: ``"MlpPolicy"`` on :class:`cardenvs.sb3.SeatVecEnv`: one logit per action id
  (28,241 in Dou Dizhu) and a dense mask, the masked categorical built over all of them;
* **new**: :class:`cardenvs.sb3.LegalActionPolicy` on :class:`cardenvs.sb3.LegalSlotVecEnv`:
  only the legal ids are scored, from their action features
  (:class:`cardenvs.torch_policy.LegalActionNet`).

A warm-up ``learn`` of one rollout runs first (numba compilation, torch start-up), so the
rows time steady learning.  One torch thread (``torch.set_num_threads(1)``), the engine on
one core.  Also reported: milliseconds per policy forward (sampling an action) for a batch of
32 decisions.
"""

from __future__ import annotations

import os

for _v in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from datetime import datetime, timezone  # noqa: E402



def _model(kind: str, game: str, n_envs: int, seed: int = 0):
    from sb3_contrib import MaskablePPO

    from cardenvs.sb3 import LegalActionPolicy, LegalSlotVecEnv, SeatVecEnv

    ppo = dict(n_steps=64, batch_size=512, n_epochs=4, seed=seed, verbose=0)
    if kind == "old":
        venv = SeatVecEnv(game, n_envs, seed=seed, illegal="lose")
        return MaskablePPO("MlpPolicy", venv, **ppo), venv
    venv = LegalSlotVecEnv(game, n_envs, seed=seed, illegal="lose")
    return MaskablePPO(LegalActionPolicy, venv, policy_kwargs=venv.policy_kwargs, **ppo), venv


def _forward_ms(model, venv, repeats: int = 20) -> float:
    import torch
    from sb3_contrib.common.maskable.utils import get_action_masks

    obs = venv.reset()
    masks = get_action_masks(venv)
    t = time.perf_counter()
    for _ in range(repeats):
        obs_t, _ = model.policy.obs_to_tensor(obs)
        with torch.no_grad():
            model.policy(obs_t, action_masks=masks)
    return (time.perf_counter() - t) / repeats * 1e3


def measure(game: str, kind: str, steps: int, n_envs: int = 32) -> dict:
    model, venv = _model(kind, game, n_envs)
    model.learn(64 * n_envs)  # warm-up: one rollout and one update
    t = time.perf_counter()
    model.learn(steps, reset_num_timesteps=False)
    dt = time.perf_counter() - t
    return {"game": game, "kind": kind, "steps": steps, "seconds": dt, "steps_s": steps / dt,
            "forward_ms": _forward_ms(model, venv), "n_actions": venv.vg.n_actions,
            "width": venv.action_space.n}


def table(rows: list[dict]) -> str:
    lines = ["| game | policy | action head | steps | seconds | steps/s | forward, 32 decisions (ms) | speed-up |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    base = {r["game"]: r["steps_s"] for r in rows if r["kind"] == "old"}
    for r in rows:
        head = (f"{r['n_actions']:,} logits, dense mask" if r["kind"] == "old"
                else f"legal ids scored (slots of {r['width']:,})")
        name = "MlpPolicy on SeatVecEnv" if r["kind"] == "old" else "LegalActionPolicy on LegalSlotVecEnv"
        up = (f"{r['steps_s'] / base[r['game']]:.1f}x" if r["kind"] == "new" and r["game"] in base
              else "")
        lines.append(f"| {r['game']} | {name} | {head} | {r['steps']:,} | {r['seconds']:.1f} | "
                     f"{r['steps_s']:,.0f} | {r['forward_ms']:.2f} | {up} |")
    return "\n".join(lines)


def main(argv=None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", default="doudizhu,wakeng")
    ap.add_argument("--steps", type=int, default=8192, help="timed env steps per row")
    ap.add_argument("--out", default=None, help="also write the markdown here")
    args = ap.parse_args(argv)
    import sb3_contrib
    import torch

    torch.set_num_threads(1)
    rows = []
    for game in args.games.split(","):
        for kind in ("old", "new"):
            rows.append(measure(game, kind, args.steps))
            print(f"{game} {kind}: {rows[-1]['steps_s']:.0f} steps/s", flush=True)
    head = (f"MaskablePPO learning throughput ({datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; "
            f"{platform.processor() or platform.machine()}, {os.cpu_count()} logical cores; "
            f"torch {torch.__version__}, sb3-contrib {sb3_contrib.__version__}, one torch thread; "
            f"load average {os.getloadavg()[0]:.1f} at the end)")
    md = head + "\n\n" + table(rows) + "\n"
    print(md)
    if args.out:
        with open(args.out, "w") as f:
            f.write(md)
    return md


if __name__ == "__main__":
    main()
