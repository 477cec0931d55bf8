"""SB3 MaskablePPO with MlpPolicy in compact mode, trained for a fixed wall time, then measured
against ``random`` in the duplicate-deal arena (issue 48's target: a 10-minute run on 2 cores
beats ``random``, its 95% CI above 0, in Dou Dizhu and Pao De Kuai).

``.venv/bin/python -m benchmarks.compact_sb3_train [--games doudizhu,paodekuai] [--minutes 10]
[--deals 500] [--out-dir benchmarks/results/compact_sb3]``

Per game:

* training: ``cardenvs.sb3.SeatVecEnv(game, n_envs, actions="compact", opponents=...)``, the
  SB3 convention (the learner holds seat 0, the other seats are played inside the env by
  ``--opponents``, ``random`` by default; in Dou Dizhu the auction makes seat 0 landlord or
  farmer); ``MaskablePPO("MlpPolicy")`` learns in rounds of one rollout until ``--minutes``
  of wall time have passed (torch on ``--threads`` threads);
* the policy is saved as ``<game>_maskppo_compact.zip`` and played in the arena by
  :class:`SB3CompactAgent` (registered as ``sb3_compact``; ``sb3_compact:model=PATH``): it
  decides a whole play from the flat observation and legal ids by the compact decisions (body,
  then each kicker), the observation of each being the one the compact env gives;
* the arena (:func:`cardenvs.arena.run_arena`, seed 1: deals no training run saw): the policy
  against ``random``, every deal replayed with the agents rotated through the seats; the
  score difference per deal with its 95% CI over deals;
* ``<game>.json`` (settings, training steps, the arena's summary) and ``README.md`` (a table
  of every game's JSON in the folder) are written to ``--out-dir``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path
from typing import Any, Optional

import numpy as np

from cardenvs.agents import Agent, register_agent
from cardenvs.core.compact import Pending, codec_of

#: the arena name of :class:`SB3CompactAgent`
AGENT_NAME = "sb3_compact"
DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "compact_sb3"


class SB3CompactAgent(Agent):
    """A MaskablePPO policy trained in compact mode, playing whole plays (an arena agent).

    Args:
        game: the game (a registry name or a compiled Game).
        seed: unused (the policy plays deterministically); the arena passes one.
        model: the path of the saved ``MaskablePPO`` (``.zip``).
        deterministic: the policy's most likely decision (default) or a sample.
    """

    name = AGENT_NAME

    def __init__(self, game: Any, seed: Optional[int] = None, model: str = "",
                 deterministic: bool = True) -> None:
        super().__init__(game, seed=seed)
        if not model:
            raise ValueError(f"agent {AGENT_NAME!r} needs model=PATH (a MaskablePPO .zip)")
        from sb3_contrib import MaskablePPO

        self.model_path = str(model)
        self.model = MaskablePPO.load(self.model_path, device="cpu")
        self.codec = codec_of(self.game)
        want = self.game.layout.size + self.codec.obs_extra
        shape = self.model.observation_space.shape
        if shape != (want,) or self.model.action_space.n != self.codec.n:
            raise ValueError(f"{self.model_path}: a policy for observations {shape} and "
                             f"{self.model.action_space.n} actions, not {self.game.info.name}'s "
                             f"compact space ({want},) and {self.codec.n}")
        self.deterministic = bool(deterministic)
        self._pending = Pending(self.codec)

    def act(self, observation: dict, legal: Optional[np.ndarray] = None,
            info: Optional[dict] = None) -> int:
        """The whole play (a flat id) the policy composes decision by decision."""
        flat_obs = np.asarray(observation["observation"], np.float32)
        if legal is None:
            legal = np.flatnonzero(observation["action_mask"])
        legal = np.ascontiguousarray(legal, np.int64)
        c, p = self.codec, self._pending
        p.start(legal, len(legal))
        L = flat_obs.shape[0]
        obs = np.zeros(L + c.obs_extra, np.float32)
        obs[:L] = flat_obs
        while True:
            c.encode(p, obs[L:])
            mask = np.zeros(c.n, bool)
            mask[p.legal[:p.n_legal]] = True
            action, _ = self.model.predict(obs, action_masks=mask,
                                           deterministic=self.deterministic)
            flat = p.choose(int(action), legal, len(legal))
            if flat >= 0:
                return int(flat)


register_agent(AGENT_NAME, f"{__name__}:SB3CompactAgent")


def train(game: str, minutes: float, out_dir: Path, *, opponents: str = "random",
          n_envs: int = 8, seed: int = 0, threads: int = 1, hidden: int = 256,
          n_steps: int = 128) -> dict:
    """Train MaskablePPO MlpPolicy on ``game``'s compact seat env for ``minutes`` of wall
    time; save it in ``out_dir``; return the training record."""
    import torch
    from sb3_contrib import MaskablePPO

    from cardenvs.sb3 import SeatVecEnv

    torch.set_num_threads(threads)
    venv = SeatVecEnv(game, n_envs, actions="compact", opponents=opponents, seed=seed)
    model = MaskablePPO("MlpPolicy", venv, n_steps=n_steps, batch_size=256, n_epochs=4,
                        learning_rate=3e-4, gamma=1.0, ent_coef=0.01, seed=seed, device="cpu",
                        policy_kwargs={"net_arch": [hidden, hidden]})
    t0 = time.perf_counter()
    rounds = 0
    while rounds == 0 or time.perf_counter() - t0 < 60.0 * minutes:
        model.learn(n_steps * n_envs, reset_num_timesteps=rounds == 0)
        rounds += 1
    seconds = time.perf_counter() - t0
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{game}_maskppo_compact.zip"
    model.save(str(path))
    return {"model": path.name, "steps": int(model.num_timesteps), "rounds": rounds,
            "train_seconds": round(seconds, 1), "opponents": opponents, "n_envs": n_envs,
            "n_steps": n_steps, "net_arch": [hidden, hidden], "torch_threads": threads,
            "seed": seed}


def evaluate(game: str, model_path: Path, deals: int, seed: int = 1) -> dict:
    """The arena of the saved policy against ``random``: its summary (score difference per
    deal with the 95% CI, each agent's score and win rate)."""
    from cardenvs.arena import run_arena

    spec = f"{AGENT_NAME}:model={os.path.relpath(model_path)}"  # no folder of the machine
    res = run_arena(game, [spec, "random"], deals, seed=seed, progress=False)
    (pair, diff), = res["pairwise"].items()
    return {"deals": deals, "seed": seed, "lineups": res["lineups"], "pair": pair,
            "score_diff": diff["score_diff"], "ci": diff["ci"],
            "per_agent": res["per_agent"], "by_role": res["by_role"]}


def write_markdown(out_dir: Path) -> Path:
    """``README.md`` in ``out_dir``: one row per ``<game>.json`` there."""
    rows = []
    for f in sorted(out_dir.glob("*.json")):
        r = json.loads(f.read_text())
        a = r["arena"]
        lo, hi = a["ci"]
        beats = "yes" if lo > 0 else "no"
        rows.append(f"| {r['game']} | {r['minutes']:g} | {r['train']['steps']:,} | "
                    f"{a['deals']:,} | {a['score_diff']:+.3f} [{lo:+.3f}, {hi:+.3f}] | {beats} |")
    text = "\n".join([
        "# SB3 MaskablePPO MlpPolicy in compact mode against random", "",
        "Written by `python -m benchmarks.compact_sb3_train` (each game's settings, machine "
        "and arena details are in its JSON file). The policy trains in the compact seat env "
        "(seat 0, the other seats random) for the wall time given, then plays `random` in the "
        "duplicate-deal arena (seed 1, agents rotated through the seats): the score difference "
        "per deal, policy - random, with its 95% CI over deals. The trained policies "
        "(`GAME_maskppo_compact.zip`) are not kept in the repository: the command writes "
        "them here.", "",
        "| game | minutes | training steps | deals | policy - random [95% CI] | CI above 0 |",
        "| --- | ---: | ---: | ---: | --- | --- |", *rows, ""])
    path = out_dir / "README.md"
    path.write_text(text)
    return path


def run(game: str, minutes: float, deals: int, out_dir: Path, **kwargs: Any) -> dict:
    """Train, save, evaluate ``game``; write ``<game>.json`` and the folder's ``README.md``."""
    load = os.getloadavg()[0]
    record: dict[str, Any] = {"game": game, "minutes": minutes,
                              "machine": {"cpus": os.cpu_count(),
                                          "processor": platform.processor() or platform.machine(),
                                          "load_average_at_start": round(load, 2)}}
    record["train"] = train(game, minutes, out_dir, **kwargs)
    record["arena"] = evaluate(game, out_dir / record["train"]["model"], deals)
    (out_dir / f"{game}.json").write_text(json.dumps(record, indent=1) + "\n")
    write_markdown(out_dir)
    return record


def main(argv: Optional[list[str]] = None) -> int:
    """The command line (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", default="doudizhu,paodekuai")
    ap.add_argument("--minutes", type=float, default=10.0, help="training wall time per game")
    ap.add_argument("--deals", type=int, default=500, help="arena deals against random")
    ap.add_argument("--opponents", default="random", help="the other seats while training")
    ap.add_argument("--n-envs", type=int, default=8)
    ap.add_argument("--threads", type=int, default=1, help="torch threads")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out-dir", default=str(DEFAULT_OUT))
    a = ap.parse_args(argv)
    if a.minutes <= 0:
        raise ValueError(f"--minutes must be positive, got {a.minutes}")
    out = Path(a.out_dir)
    for game in [g for g in a.games.split(",") if g]:
        r = run(game, a.minutes, a.deals, out, opponents=a.opponents, n_envs=a.n_envs,
                seed=a.seed, threads=a.threads)
        ar = r["arena"]
        print(f"{game}: {r['train']['steps']:,} steps in {r['train']['train_seconds']:.0f} s; "
              f"{ar['pair']}: {ar['score_diff']:+.3f} [{ar['ci'][0]:+.3f}, {ar['ci'][1]:+.3f}] "
              f"over {ar['deals']} deals", flush=True)
    print(f"wrote {out / 'README.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
