"""``cardenvs train GAME``: one resumable command that makes a network-only agent.

    cardenvs train wakeng --hours 3 --out runs/train_wakeng
    cardenvs train paodekuai --option deck=15 --hours 1 --jobs 2
    cardenvs train wakeng --out runs/train_wakeng --resume       # after Ctrl-C / SIGTERM
    cardenvs arena wakeng --agents trained:runs/train_wakeng/wakeng.npz,rules

(``python -m cardenvs.train.pipeline`` takes the same arguments.)  The run is the recipe the
shipped networks were made by (``docs/experiments/training/distill.md``), stage by stage,
each stage a process of its own (:mod:`train.distill`, :mod:`train.finetune`):

1. **imitate**: the teacher (``rules``) plays every seat of new deals (``distill collect``),
   and a network learns to rank its moves first (``distill fit``, with the game's context
   inputs, ``--context``);
2. **DAgger rounds**: ``search`` (PIMC over ``rules``) labels deals in which the latest
   network plays a share of the moves (``collect --player``); a fit from the imitation
   network on the labels of every round so far; Wakeng's burials are labelled by ``rules``
   (``relabel``), as in its recipe;
3. **fine-tune** on the network's own score (``train.finetune``);
4. **arena** against ``rules`` (:func:`cardenvs.arena.run_arena`, duplicate deals, paired
   95% CI) on the seed :data:`ARENA_SEED` (its deal seeds are 63-bit draws, none of them a
   deal of the training stages), a learning-curve PNG and a one-page report.

The run directory (``--out``, default ``runs/train_GAME``) holds ``config.json`` (the game,
options, budget and the plan: every stage's settings), ``state.json`` (the stages done, the
minutes spent), a folder per stage with its data, logs (``logs/STAGE.log``) and checkpoints,
and at the end ``GAME.npz`` (plays as ``trained:DIR/GAME.npz``), ``arena/`` (the arena's
JSON), ``curve.png`` and ``report.md``.

**Settings.**  The per-game defaults live in one place, :data:`GAME_CONFIGS` (a
:class:`GameConfig` per game: teachers, deals, DAgger rounds, network, the stages' shares of
the budget); ``--set KEY=VALUE`` changes one for this run (e.g. ``--set dagger_rounds=2``).
``--option KEY=VALUE`` sets a rules option of the game (``--option preset=rlcard``); it goes
to every stage (collections, fits, fine-tuning, arena) and into ``config.json``.
``--option actions=compact`` (the environments' action mode, no rules option) makes the
final arena play the game in compact mode, the run's file through
:class:`cardenvs.compact_seat.CompactAdapter`.  The weights do not depend on the mode (the
network scores whole plays), so the training stages play as in a flat run, and the arena's
result is the flat arena's, deal by deal; ``config.json`` (``"actions"``), the arena's JSON
and ``report.md`` record the mode.

**Budget.**  ``--hours`` bounds the whole run: stage ``i`` ends at the sum of the shares of
stages ``1..i`` of the budget (a stage that ends early leaves its time to the next), through
the stage's own limit (``fit --minutes``, ``finetune --minutes``; a collection is stopped,
its finished shards kept, when its time is up; the arena's deals are sized to its time, at
most ``arena_deals``).  The plan (DAgger rounds, shard sizes, evaluation sizes) is made from
the budget when the run starts.  Each stage shows a progress bar with its ETA on stderr.

**Stopping and resuming.**  SIGTERM or Ctrl-C stops the running stage the way its module
stops (a collection keeps its shards, a fit and the fine-tuning write their checkpoints, the
arena its progress), records the time spent and exits with 128 + the signal;
``--resume`` (same ``--out``) continues with the stage that was stopped, each from its own
checkpoint: at most one block of work (a shard, a fit's step, a fine-tuning iteration) is
lost.  A SIGKILL of the pipeline stops its running stage the same way (the stage is told
of its pipeline's death, :mod:`train.pipeline_procs`).  One writer at a time: ``--out``'s
``run.lock`` names the pipeline and its stage; ``--resume`` is refused while another
pipeline works there, and waits for the stage of a killed one to stop.  A resumed run takes
the recorded game, options and settings (another game, option or ``--set`` is refused);
``--hours`` may give it a new budget.

**Devices.**  ``--device`` (``auto``, the default: CUDA when ``torch.cuda.is_available()``;
``cpu``; ``cuda``, refused where CUDA is absent) is where the fits and the fine-tuning's
updates learn (``distill fit --device``, ``train.finetune --device``); the games and the
collections are played on the CPU.  A resumed run picks its device anew.

**Ray.**  ``--ray ADDRESS`` (a cluster's, ``auto`` or ``HOST:PORT``; or ``local``: a Ray
instance of ``--jobs`` CPUs started here) plays the collections' blocks of deals (the DAgger
rounds' search labels among them: ``distill collect --ray``) and the arena's as Ray tasks
(:mod:`train.ray_tasks`).  Each block is seeded by its index, so the shards and the arena's
result are those of a run without Ray; a resumed run may drop or change ``--ray``.
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict
from typing import Any, Optional, Sequence

from .pipeline_config import (  # noqa: F401  (the recipes' names, importable from here too)
    ARENA_SEED, GAME_CONFIGS, OPPONENT, PLAN_VERSION, GameConfig, game_config, make_plan,
)
from .pipeline_procs import PARENT_ENV, RunLock, stage_preexec

#: the least time a stage gets, seconds (a run over budget by a little completes every stage)
MIN_STAGE_S = 6.0
#: seconds a fit or the fine-tuning may run past its limit before it is stopped
GRACE_S = 20.0
#: seconds a stage's process takes to start (imports, compiled kernels from the cache)
STARTUP_S = 6.0


# ---------------------------------------------------------------------------------------------
# the run directory
# ---------------------------------------------------------------------------------------------
def _write_json(path: str, obj: Any) -> None:
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1)
    os.replace(tmp, path)


def _read_json(path: str) -> dict:
    try:
        with open(path) as f:
            obj = json.load(f)
    except (OSError, ValueError) as e:
        raise ValueError(f"cannot read {path!r}: {e}") from None
    if not isinstance(obj, dict):
        raise ValueError(f"{path!r} is not a training run's file")
    return obj


def fit_device(device: str) -> str:
    """The device the fits and the fine-tuning learn on, for ``--device`` (``auto``: ``cuda``
    when ``torch.cuda.is_available()``, else ``cpu``; ``cuda`` where CUDA is absent: a
    ``ValueError`` saying so): ``"cpu"`` or ``"cuda"``."""
    from .common import select_device

    return select_device(device).type


def prepare(game: str, options: dict, hours: Optional[float], out: str, resume: bool,
            jobs: int, overrides: dict, device: str = "auto",
            ray: Optional[str] = None) -> tuple[dict, dict]:
    """Check every input and return ``(config, state)`` of the run in ``out`` (new, or the
    one ``resume`` continues); a ``ValueError`` before anything is written."""
    from cardenvs.api import make_game
    from cardenvs.arena import import_agents
    from cardenvs.core.compact import check_actions, codec_of

    cfg = game_config(game, overrides)
    resolved = fit_device(device)
    if ray is not None and (not isinstance(ray, str) or not ray.strip()):
        raise ValueError(f"--ray: a cluster address (auto, HOST:PORT) or local, got {ray!r}")
    if hours is not None and (isinstance(hours, bool) or not math.isfinite(hours) or hours <= 0):
        raise ValueError(f"--hours must be a number > 0, got {hours!r}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"--jobs must be an int >= 1, got {jobs!r}")
    options = dict(options)
    actions = options.pop("actions", "flat")  # the arena's action mode, no rules option
    try:
        check_actions(actions)
    except (TypeError, ValueError) as e:
        raise ValueError(f"--option actions={actions!r}: {e}") from None
    g = make_game(game, **options)  # an unknown option or value is a ValueError naming it
    if actions == "compact":
        codec_of(g)  # the game's compact action space, with these options
    agents = import_agents()
    for role, spec in (("teacher", cfg.teacher), ("search teacher", cfg.search),
                       ("opponent", OPPONENT)):
        why = agents.unsupported(spec, g)
        if why is not None:
            raise ValueError(f"the {role} {spec!r} cannot play {game} {options}: {why}")
    path = os.path.join(out, "config.json")
    if resume:
        if not os.path.exists(path):
            raise ValueError(f"--resume: no training run in {out!r} (no config.json)")
        old = _read_json(path)
        if old.get("game") != game:
            raise ValueError(f"--resume: {out!r} holds a run of {old.get('game')!r}, not "
                             f"{game!r}")
        old.setdefault("actions", "flat")  # a run from before the mode was recorded
        new = {"options": options, "actions": actions, "settings": asdict(cfg)}
        for key, value in new.items():
            if json.loads(json.dumps(value)) != old.get(key):
                raise ValueError(f"--resume: the run in {out!r} has {key} {old.get(key)}; "
                                 f"this command gives {value}: resume with the same ones "
                                 f"(or start a new run in another --out)")
        state = _read_json(os.path.join(out, "state.json"))
        old["hours"] = hours if hours is not None else old["hours"]
        old["jobs"] = jobs
        old["device"] = resolved  # this session's machine
        old["ray"] = ray
        return old, state
    if os.path.exists(path):
        theirs = _read_json(path).get("game")
        what = "a run of another game" if theirs != game else "a run"
        raise ValueError(f"{out!r} holds {what} ({theirs!r}): continue it with --resume or "
                         f"give another --out")
    if os.path.isdir(out) and os.listdir(out):
        raise ValueError(f"{out!r} is not empty and holds no training run: give a new or "
                         f"empty --out")
    if os.path.exists(out) and not os.path.isdir(out):
        raise ValueError(f"--out {out!r} is a file")
    hours = 3.0 if hours is None else hours
    config = {"game": game, "options": options, "actions": actions, "hours": hours, "jobs": jobs,
              "device": resolved, "ray": ray, "settings": asdict(cfg), "plan_version": PLAN_VERSION,
              "stages": make_plan(game, cfg, hours, jobs)}
    return config, {"done": {}, "spent_s": {}, "elapsed_s": 0.0}


# ---------------------------------------------------------------------------------------------
# stopping
# ---------------------------------------------------------------------------------------------
class Stop:
    """SIGTERM / SIGINT while active: ``signum`` is set; inside :meth:`raising` (the arena,
    which saves its progress on ``KeyboardInterrupt``) the signal also raises it."""

    def __init__(self):
        self.signum: Optional[int] = None
        self.count = 0
        self._raise = False
        self._old: dict = {}

    def __enter__(self) -> "Stop":
        for sig in (signal.SIGTERM, signal.SIGINT):
            self._old[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for sig, h in self._old.items():
            signal.signal(sig, h)

    def _handle(self, signum, frame) -> None:
        self.signum, self.count = signum, self.count + 1
        if self._raise:
            raise KeyboardInterrupt

    def raising(self, on: bool) -> None:
        self._raise = on
        if on and self.signum is not None:
            raise KeyboardInterrupt


class StageError(RuntimeError):
    """A stage's process failed (its log's tail in the message)."""


# ---------------------------------------------------------------------------------------------
# the run
# ---------------------------------------------------------------------------------------------
class Pipeline:
    """A training run in ``out`` (module docstring): ``run()`` does the stages not done yet."""

    def __init__(self, out: str, config: dict, state: dict, progress: bool = True):
        self.out, self.config, self.state, self.progress = out, config, state, progress
        self.game = config["game"]
        self.options = config["options"]
        #: the final arena's action mode (``--option actions=``; the training stages' is flat)
        self.actions = str(config.get("actions", "flat"))
        #: the final arena's game options: the rules options, and ``actions`` when compact
        self.arena_options = dict(self.options, **(
            {"actions": self.actions} if self.actions != "flat" else {}))
        self.total_s = 3600.0 * float(config["hours"])
        self.jobs = int(config["jobs"])
        #: where the fits and the fine-tuning learn (:func:`fit_device`)
        self.device = str(config.get("device", "cpu"))
        #: ``--ray``: the cluster the collections and the arena run on (``None``: processes)
        self.ray: Optional[str] = config.get("ray")
        #: the joined cluster's address, which the stages' processes join (:meth:`run`)
        self.ray_address: Optional[str] = None
        self.stop: Optional[Stop] = None
        #: the run directory's lock while :meth:`run` runs (:class:`RunLock`)
        self.lock: Optional[RunLock] = None
        self._t0 = time.perf_counter()
        self._base = float(state.get("elapsed_s", 0.0))

    def path(self, rel: str) -> str:
        return os.path.abspath(os.path.join(self.out, rel))

    def elapsed(self) -> float:
        """Seconds of the run, every session."""
        return self._base + time.perf_counter() - self._t0

    def save(self) -> None:
        self.state["elapsed_s"] = round(self.elapsed(), 2)
        _write_json(os.path.join(self.out, "state.json"), self.state)

    def deadline(self, index: int) -> float:
        """When stage ``index`` must end, in run seconds (the shares of the stages so far)."""
        return self.total_s * sum(s["share"] for s in self.config["stages"][:index + 1])

    def run(self) -> int:
        """The stages not done yet; 0, or 128 + the signal that stopped the run."""
        lock = RunLock(self.out)
        lock.acquire()  # one writer in the run directory (train.pipeline_procs)
        self.lock = lock
        try:
            os.makedirs(os.path.join(self.out, "logs"), exist_ok=True)
            _write_json(os.path.join(self.out, "config.json"), self.config)
            self.save()
            stages = self.config["stages"]
            if self.ray is not None:
                from .ray_tasks import connect

                self.ray_address = connect(self.ray, self.jobs)
            try:
                return self._run_stages(stages)
            finally:
                if self.ray_address is not None:
                    from .ray_tasks import shutdown

                    shutdown(self.ray_address)
        finally:
            lock.release()
            self.lock = None

    def _run_stages(self, stages: list) -> int:
        """:meth:`run`'s loop over the stages."""
        with Stop() as self.stop:
            for i, st in enumerate(stages):
                if st["name"] in self.state["done"]:
                    continue
                if self.stop.signum is not None:
                    break
                limit = max(MIN_STAGE_S, self.deadline(i) - self.elapsed())
                self.state["current"] = st["name"]
                self.save()
                t = time.perf_counter()
                try:
                    result = getattr(self, f"stage_{st['kind']}")(st, limit, i, len(stages))
                finally:
                    spent = self.state["spent_s"]
                    spent[st["name"]] = round(spent.get(st["name"], 0.0)
                                              + time.perf_counter() - t, 2)
                    self.save()
                if result is None:  # stopped by a signal: the stage continues on --resume
                    break
                self.state["done"][st["name"]] = result
                self.state.pop("current", None)
                self.save()
        if self.stop.signum is not None and len(self.state["done"]) < len(stages):
            name = signal.Signals(self.stop.signum).name
            print(f"cardenvs train: stopped by {name} in {self.state.get('current')}; "
                  f"continue with: cardenvs train {self.game} --out {self.out} --resume",
                  file=sys.stderr, flush=True)
            return 128 + int(self.stop.signum)
        print(f"cardenvs train: {self.game} done in {self.elapsed() / 60:.1f} min: "
              f"{self.path(self.game + '.npz')} (play it as trained:"
              f"{os.path.join(self.out, self.game + '.npz')}); report "
              f"{os.path.join(self.out, 'report.md')}", file=sys.stderr, flush=True)
        return 0

    # -- one process per stage ---------------------------------------------------------------
    def _bar(self, st: dict, limit: float, i: int, n: int):
        if not self.progress:
            return None
        from tqdm import tqdm

        return tqdm(total=round(limit), desc=f"[{i + 1}/{n}] {st['name']}", unit="s",
                    file=sys.stderr, dynamic_ncols=True, mininterval=1.0,
                    bar_format="{desc}: {percentage:3.0f}%|{bar}| {elapsed}<{remaining} "
                               "{postfix}")

    def child(self, st: dict, args: list[str], limit: float, i: int, n: int,
              stoppable=lambda: True, grace: float = 0.0, note=lambda: {}) -> tuple[int, bool]:
        """Run ``python -m cardenvs.train.MODULE ARGS`` (its output in ``logs/STAGE.log``),
        in a session of its own (a terminal's Ctrl-C reaches this process only, which passes
        SIGTERM on); SIGTERM it once ``limit + grace`` seconds passed and ``stoppable()``.
        Returns its exit status and whether the budget stopped it."""
        log_path = os.path.join(self.out, "logs", f"{st['name']}.log")
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        t0 = time.perf_counter()
        bar = self._bar(st, limit, i, n)
        by_budget = sent = False
        with open(log_path, "a") as log:
            log.write(f"$ {' '.join(args)}\n")
            log.flush()
            # the stage stops (SIGTERM) when this process dies, SIGKILL included
            proc = subprocess.Popen([sys.executable, "-m", *args], stdout=log,
                                    stderr=subprocess.STDOUT, start_new_session=True,
                                    env=dict(env, **{PARENT_ENV: str(os.getpid())}),
                                    preexec_fn=stage_preexec(os.getpid()))
            if self.lock is not None:
                self.lock.stage(proc.pid, st["name"])
            try:
                last_note = 0.0
                while proc.poll() is None:
                    time.sleep(0.2)
                    now = time.perf_counter() - t0
                    if bar is not None:
                        bar.n = min(bar.total, round(now))
                        if now - last_note > 2.0:
                            bar.set_postfix(note(), refresh=False)
                            last_note = now
                        bar.refresh()
                    if self.stop.signum is not None and not sent:
                        proc.send_signal(signal.SIGTERM)
                        sent = True
                    elif self.stop.count > 1:  # asked twice: no more waiting
                        os.killpg(proc.pid, signal.SIGKILL)
                    elif not sent and now > limit + grace and stoppable():
                        proc.send_signal(signal.SIGTERM)
                        sent = by_budget = True
            finally:
                if proc.poll() is None:  # this process is leaving: its stage goes too
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                if self.lock is not None:
                    self.lock.stage(None)
                if bar is not None:
                    bar.close()
        return proc.returncode, by_budget

    def failed(self, st: dict, rc: int) -> StageError:
        with open(os.path.join(self.out, "logs", f"{st['name']}.log")) as f:
            tail = "".join(f.readlines()[-15:])
        return StageError(f"stage {st['name']} failed (exit status {rc}); the end of "
                          f"{os.path.join(self.out, 'logs', st['name'] + '.log')}:\n{tail}")

    def _options(self) -> list[str]:
        return [f"--option={k}={v!r}" for k, v in self.options.items()]

    def _user_stop(self) -> bool:
        return self.stop.signum is not None

    # -- the stages ----------------------------------------------------------------------------
    def stage_collect(self, st: dict, limit: float, i: int, n: int) -> Optional[dict]:
        out = self.path(st["out"])
        args = ["cardenvs.train.distill", "collect", self.game, "--teacher", st["teacher"],
                "--deals", str(st["deals"]), "--block", str(st["block"]), "--seed",
                str(st["seed"]), "--jobs", str(self.jobs), "--out", out, "--no-progress",
                *self._options()]
        if st.get("player"):
            args += ["--player", f"trained:{self.path(st['player'])}",
                     "--player-share", str(st["player_share"])]
        if self.ray_address is not None:
            args += ["--ray", self.ray_address]
        rc, by_budget = self.child(st, args, limit, i, n, stoppable=lambda: bool(_shards(out)),
                                   note=lambda: {"shards": len(_shards(out))})
        if self._user_stop() and not (rc == 0):
            return None
        if rc not in (0, 130) or (rc == 130 and not by_budget):
            raise self.failed(st, rc)
        return {"shards": len(_shards(out)), "decisions": _decisions(out),
                "stopped_by_budget": by_budget}

    def stage_relabel(self, st: dict, limit: float, i: int, n: int) -> Optional[dict]:
        block, teacher = st["block"], st["teacher"]
        args = ["cardenvs.train.distill", "relabel", self.game, "--data", self.path(st["data"]),
                "--out", self.path(st["out"]), "--teacher", teacher, "--block", block,
                "--no-progress"]
        rc, _ = self.child(st, args, limit, i, n, stoppable=lambda: False)
        if self._user_stop() and rc != 0:
            return None
        if rc != 0:
            raise self.failed(st, rc)
        return {"block": block, "teacher": teacher}

    def stage_fit(self, st: dict, limit: float, i: int, n: int) -> Optional[dict]:
        out = self.path(st["out"])
        data = [self.path(d) for d in st["data"]]
        resume = os.path.exists(os.path.join(out, "checkpoint.pt"))
        if not resume and os.path.isdir(out):
            shutil.rmtree(out)  # a fit stopped before its first checkpoint starts afresh
        holdout = 10 if min(len(_shards(d)) for d in data) >= 20 else 0
        args = ["cardenvs.train.distill", "fit", self.game, "--out", out,
                "--minutes", f"{max(0.05, 0.8 * (limit - STARTUP_S) / 60):.3f}", "--epochs", str(st["epochs"]),
                "--hidden", st["hidden"], "--holdout", str(holdout), "--threads", str(self.jobs),
                "--eval-deals", str(st["eval_deals"]), "--context", st["context"],
                "--device", self.device, "--no-progress"]
        for d in data:
            args += ["--data", d]
        if st.get("init"):
            args += ["--init", self.path(st["init"])]
        if resume:
            args.append("--resume")
        rc, by_budget = self.child(st, args, limit, i, n, grace=GRACE_S,
                                   note=lambda: _last_row(os.path.join(out, "fit.csv"),
                                                          ("epoch", "train_agreement")))
        weights = os.path.join(out, f"{self.game}.npz")
        if self._user_stop() and rc != 0:
            return None
        if rc not in (0, 128 + signal.SIGTERM) or (rc != 0 and not by_budget):
            raise self.failed(st, rc)
        if not os.path.exists(weights):
            raise StageError(f"stage {st['name']}: no weights after {limit:.0f} s (give the "
                             f"run more --hours)")
        row = _last_row(os.path.join(out, "fit.csv"), ("epoch", "train_agreement",
                                                       "holdout_agreement"))
        return {"weights": st["out"] + f"/{self.game}.npz", **row, "holdout": holdout}

    def stage_finetune(self, st: dict, limit: float, i: int, n: int) -> Optional[dict]:
        out = self.path(st["out"])
        resume = os.path.exists(os.path.join(out, "checkpoint.pt"))
        if not resume and os.path.isdir(out):
            shutil.rmtree(out)
        args = ["cardenvs.train.finetune", self.game, "--init", self.path(st["init"]),
                "--out", out, "--minutes", f"{max(0.05, (limit - STARTUP_S) / 60):.3f}",
                "--lr", str(st["lr"]), "--lineups", st["lineups"],
                "--eval-deals", str(st["eval_deals"]), "--eval-every", str(st["eval_every"]),
                "--threads", str(self.jobs), "--device", self.device, "--no-progress",
                *self._options()]
        if resume:
            args.append("--resume")
        rc, by_budget = self.child(st, args, limit, i, n, grace=GRACE_S,
                                   note=lambda: _last_row(os.path.join(out, "log.csv"),
                                                          ("iteration", "loss")))
        if self._user_stop() and rc != 0:
            return None
        if rc not in (0, 128 + signal.SIGTERM) or (rc != 0 and not by_budget):
            raise self.failed(st, rc)
        row = _last_row(os.path.join(out, "log.csv"), ("iteration",))
        return {"weights": st["out"] + f"/{self.game}.npz",
                "iterations": int(row.get("iteration") or 0)}

    def final_weights(self) -> str:
        """The run's weight file: the fine-tuned one (or the last fit's)."""
        for st in reversed(self.config["stages"]):
            res = self.state["done"].get(st["name"], {})
            if "weights" in res and os.path.exists(self.path(res["weights"])):
                return self.path(res["weights"])
        raise StageError("no stage made weights")

    def stage_arena(self, st: dict, limit: float, i: int, n: int) -> Optional[dict]:
        import io

        from cardenvs.arena import (
            ArenaInterrupted, main_arena, parse_agents, progress_path, run_arena, run_settings,
        )

        dst = self.path(f"{self.game}.npz")
        tmp = dst + ".tmp.npz"
        shutil.copyfile(self.final_weights(), tmp)
        os.replace(tmp, dst)
        agents = [f"trained:{dst}", OPPONENT]
        out = self.path(st["out"])
        os.makedirs(out, exist_ok=True)
        t0 = time.perf_counter()
        table = io.StringIO()
        self.stop.raising(True)
        try:
            deals = self.state.get("arena_deals")
            if deals is None:  # sized to the stage's time by the pace of a few deals
                run_arena(self.game, agents, 10, seed=st["seed"] + 10**6,
                          options=self.arena_options,
                          progress=False)
                per = (time.perf_counter() - t0) / 10
                left = limit - (time.perf_counter() - t0)
                deals = int(min(st["deals"], max(20, 0.9 * left / per)))
                self.state["arena_deals"] = deals
                self.save()
            # on Ray: blocks of deals as Ray tasks (the results of any jobs > 1, and of
            # jobs=1 too: both agents are deterministic)
            jobs, pool = self.jobs, None
            if self.ray_address is not None:
                from .ray_tasks import RayPool

                jobs, pool = max(2, self.jobs), RayPool(self.ray_address)
            settings = run_settings(self.game, parse_agents(agents), deals, st["seed"],
                                    self.arena_options, "auto", jobs)
            if self.progress:
                mode = " (compact actions)" if self.actions == "compact" else ""
                print(f"[{i + 1}/{n}] arena: {deals} duplicate deals against {OPPONENT}{mode}",
                      file=sys.stderr, flush=True)
            res = main_arena(self.game, agents, deals, st["seed"], self.arena_options, out,
                             progress=self.progress, stream=table,
                             resume=progress_path(out, settings).exists(), jobs=jobs,
                             pool=pool)
        except (ArenaInterrupted, KeyboardInterrupt):
            return None
        finally:
            self.stop.raising(False)
        with open(os.path.join(self.out, "logs", "arena.log"), "a") as f:
            f.write(table.getvalue())
        print(table.getvalue(), file=sys.stderr, end="", flush=True)
        pair, stats = next(iter(res["pairwise"].items()))
        lo, hi = stats["ci"]
        return {"deals": deals, "seed": st["seed"], "pair": pair, "actions": self.actions,
                "diff": round(float(stats["score_diff"]), 4),
                "ci": [round(float(lo), 4), round(float(hi), 4)]}

    def stage_report(self, st: dict, limit: float, i: int, n: int) -> dict:
        from .pipeline_report import write_curve, write_report

        png = write_curve(self)
        write_report(self, png)
        return {"report": "report.md", "curve": os.path.basename(png) if png else None}


def _shards(folder: str) -> list[str]:
    return sorted(glob.glob(os.path.join(folder, "shard_*.npz")))


def _decisions(folder: str) -> int:
    import numpy as np

    n = 0
    for p in _shards(folder):
        with np.load(p) as z:
            n += len(z["action"])
    return n


def _last_row(path: str, keys: Sequence[str]) -> dict:
    """``keys`` of the last row of a CSV log (``{}`` before its first row)."""
    import csv

    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError:
        return {}
    return {k: rows[-1].get(k) for k in keys} if rows else {}


# ---------------------------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------------------------
def build_parser(prog: str = "cardenvs train") -> argparse.ArgumentParser:
    from cardenvs.cli import parse_option

    p = argparse.ArgumentParser(
        prog=prog, description=__doc__.replace("``", "`"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="The stages: imitate rules (distill collect + fit), DAgger rounds on search's "
               "labels (collect with the network playing a share of the moves + fit), "
               "fine-tune on the score (train.finetune), arena against rules, curve.png and "
               "report.md.  Ctrl-C / SIGTERM stop cleanly; --resume continues.  Per-game "
               "defaults: cardenvs.train.pipeline.GAME_CONFIGS.")
    p.add_argument("game", help="registry name (cardenvs.GAMES)")
    p.add_argument("--option", "-o", action="append", type=parse_option, default=[],
                   metavar="KEY=VALUE", help="a rules option of the game, for every stage "
                                             "(repeatable), e.g. preset=rlcard; actions=compact: "
                                             "the final arena plays the compact env (the "
                                             "weights do not depend on the mode)")
    p.add_argument("--hours", type=float, default=None,
                   help="the budget of the whole run (default 3; with --resume: the run's)")
    p.add_argument("--out", default=None, help="the run directory (default runs/train_GAME)")
    p.add_argument("--resume", action="store_true",
                   help="continue the run in --out (same game, options and --set)")
    p.add_argument("--jobs", "-j", type=int, default=1,
                   help="processes for the collections and the arena, threads for fitting")
    p.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"),
                   help="where the fits and the fine-tuning learn (auto: CUDA when "
                        "torch.cuda.is_available(); cuda where it is absent is an error)")
    p.add_argument("--ray", default=None, metavar="ADDRESS",
                   help="play the collections' deals and the arena's as Ray tasks on the "
                        "cluster at ADDRESS (auto, HOST:PORT), or local: a Ray instance of "
                        "--jobs CPUs here (train.ray_tasks); the same results")
    p.add_argument("--set", action="append", type=parse_option, default=[], dest="settings",
                   metavar="KEY=VALUE", help="change a setting of the game's recipe "
                                             "(GameConfig), e.g. dagger_rounds=2")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    return p


def main(argv: Optional[Sequence[str]] = None, prog: str = "cardenvs train") -> int:
    """``cardenvs train`` (module docstring); the exit status."""
    a = build_parser(prog).parse_args(argv)
    out = a.out or os.path.join("runs", f"train_{a.game}")
    try:
        options, settings = dict(a.option), dict(a.settings)
        if len(options) != len(a.option) or len(settings) != len(a.settings):
            raise ValueError("an --option or --set key is given twice")
        config, state = prepare(a.game, options, a.hours, out, a.resume, a.jobs, settings,
                                a.device, a.ray)
        return Pipeline(out, config, state, progress=not a.no_progress).run()
    except (ValueError, TypeError, StageError) as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(prog="python -m cardenvs.train.pipeline"))
