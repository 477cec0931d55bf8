"""What every trainer of :mod:`train` shares: stopping cleanly on SIGTERM / SIGINT, the run
directory's files (CSV logs, ``config.json``, atomic checkpoints, the evaluation plot), the
session's progress bar and evaluations, and the command line's common arguments.

:mod:`train.dmc`, :mod:`train.distill` and :mod:`train.finetune` are each one learner over these
pieces; a trainer object used with :func:`run_session` / :func:`evaluate_network` has a
``cfg`` (with ``game``, ``out``, ``seed``, ``eval_agents``, ``eval_deals``), a ``game``, a
``net`` with its greedy ``policy``, ``counters`` (``train_s`` among them), ``eval_history``
and a ``_run(stop)`` method.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import signal
import sys
import threading
import time
from dataclasses import asdict
from typing import Any, Callable, Optional, Sequence

import numpy as np

from cardenvs.cli import parse_option

_SEED_MAX = 2**62


# ---------------------------------------------------------------------------------------------
# stopping cleanly: SIGTERM / SIGINT
# ---------------------------------------------------------------------------------------------
class Stopped(Exception):
    """Raised inside an abortable phase (an evaluation) when a stop signal arrives."""


class StopSignals:
    """While active (``with StopSignals() as stop``), SIGTERM and SIGINT set ``stop.signum``
    instead of killing the process, so a trainer's loop can finish its step, checkpoint and
    return; inside ``with stop.abortable():`` (work that can be thrown away, e.g. an
    evaluation) a signal raises :class:`Stopped` at once.  Handlers are installed only in the
    main thread (elsewhere Python cannot); the previous handlers come back on exit."""

    def __init__(self):
        self.signum: Optional[int] = None
        self._old: dict = {}
        self._abortable = 0

    def __enter__(self) -> "StopSignals":
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                self._old[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for sig, handler in self._old.items():
            signal.signal(sig, handler)
        self._old.clear()

    def _handle(self, signum, frame) -> None:
        self.signum = signum
        if self._abortable:
            raise Stopped(signal.Signals(signum).name)

    @property
    def name(self) -> Optional[str]:
        return None if self.signum is None else signal.Signals(self.signum).name

    @contextlib.contextmanager
    def abortable(self):
        """A phase a signal may cut short (raising :class:`Stopped`)."""
        if self.signum is not None:
            raise Stopped(self.name)
        self._abortable += 1
        try:
            yield
        finally:
            self._abortable -= 1


def run_session(trainer: Any, cleanup: Optional[Callable[[], None]] = None) -> dict:
    """``trainer._run(stop)`` with the stop signals caught (``trainer._stop`` is the active
    :class:`StopSignals` meanwhile, ``None`` after); ``cleanup`` runs at the end, whatever
    happens.  Returns what ``_run`` returns."""
    with StopSignals() as stop:
        trainer._stop = stop
        try:
            return trainer._run(stop)
        finally:
            trainer._stop = None
            if cleanup is not None:
                cleanup()


def end_session(trainer: Any, tag: str, stop: StopSignals, t_start: float, final: list) -> dict:
    """The end of an iterating trainer's session: ``trainer.save_checkpoint()`` and
    ``trainer.export()``, the stop line when a signal ended it; the session's result (files,
    ``final`` evaluation, the signal's name or ``None``, seconds, ``trainer.counters``)."""
    ckpt = trainer.save_checkpoint()
    weights = trainer.export()
    if stop.signum is not None:
        print_stopped(tag, stop, f"{trainer.counters['iterations']} iterations",
                      f"checkpoint {ckpt}, weights {weights}")
    return {"checkpoint": ckpt, "weights": weights, "eval": final, "stopped": stop.name,
            "session_s": time.perf_counter() - t_start, **trainer.counters}


def print_stopped(tag: str, stop: StopSignals, done: str, files: str) -> None:
    """The line on stderr of a session ended by a signal: what it did, what it wrote."""
    print(f"[{tag}] stopped by {stop.name} after {done}: {files}; continue with --resume",
          file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# one deal, an agent asked at each decision
# ---------------------------------------------------------------------------------------------
def play_deal(game: Any, state: Any, seed: int,
              choose: Callable[[int, int, np.ndarray], int],
              stop: Optional[StopSignals] = None, buf: Optional[np.ndarray] = None) -> Optional[dict]:
    """Play deal ``seed`` of ``game`` in ``state`` to its end: the one deal loop of the
    trainers that ask an agent at each decision (``train.distill``'s collection).  At a decision with two or more legal actions
    ``choose(step, seat, legal)`` gives the action to play (``step``: the actions played so
    far; ``legal``: a fresh array the callback may keep); a lone legal action is played
    without asking.  Returns ``{"actions": [...], "rewards": (steps, players) float64}``, or
    ``None`` when ``stop`` holds a signal at some step (the deal is abandoned there)."""
    if buf is None:
        buf = np.empty(game.n_actions + 1, np.int64)
    game.reset(state, int(seed))
    actions: list[int] = []
    rewards: list[np.ndarray] = []
    while not game.done(state):
        if stop is not None and stop.signum is not None:
            return None
        k = game.legal(state, buf)
        if k == 1:
            a = int(buf[0])
        else:
            a = int(choose(len(actions), int(game.current(state)), buf[:k].copy()))
        game.step(state, a)
        actions.append(a)
        rewards.append(game.rewards(state))  # a new float64 array each step
    shape = (0, game.n_players)
    return {"actions": actions, "rewards": np.stack(rewards) if rewards else np.zeros(shape)}


# ---------------------------------------------------------------------------------------------
# the run directory's files
# ---------------------------------------------------------------------------------------------
def truncate_csv(path: str, column: str, limit: float) -> int:
    """Drop the rows of ``path`` whose ``column`` exceeds ``limit`` (the work a resumed run
    discarded: logged after the checkpoint it resumes from); rewrites the file atomically.
    Returns the number of rows dropped (0 when the file does not exist)."""
    if not os.path.exists(path):
        return 0
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        fields = reader.fieldnames or []
        rows = list(reader)
    if column not in fields:
        return 0
    keep = [r for r in rows if r[column] in ("", None) or float(r[column]) <= limit]
    if len(keep) == len(rows):
        return 0
    with open(path + ".tmp", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(keep)
    os.replace(path + ".tmp", path)
    return len(rows) - len(keep)


def append_csv(path: str, rows: list[dict]) -> None:
    """Append ``rows`` to the CSV file ``path`` (its header from the first row when new; the
    columns of an existing file are kept, e.g. of a run resumed by another version)."""
    if not rows:
        return
    new = not os.path.exists(path)
    fields = list(rows[0])
    if not new:  # keep the columns of an existing file (a run resumed by another version)
        with open(path, newline="") as f:
            fields = next(csv.reader(f), None) or fields
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        if new:
            w.writeheader()
        w.writerows(rows)


def write_config(cfg: Any) -> None:
    """``cfg.out/config.json``: every setting of the run (a dataclass), for the record."""
    os.makedirs(cfg.out, exist_ok=True)
    with open(os.path.join(cfg.out, "config.json"), "w") as f:
        json.dump(asdict(cfg), f, indent=1, default=str)


def save_atomic(obj: Any, path: str) -> str:
    """``torch.save(obj)`` to ``path`` through a temporary file, so that a kill during the
    write never leaves a truncated checkpoint; returns ``path``."""
    import torch

    torch.save(obj, path + ".tmp")
    os.replace(path + ".tmp", path)
    return path


def load_checkpoint(out: str, game: str, options: dict, settings: Optional[dict] = None,
                    free: Sequence[str] = ()) -> dict:
    """``out/checkpoint.pt`` of a run of ``game`` with ``options`` (``--resume``); a
    ``ValueError`` when there is none, it cannot be read (a damaged file, or no trainer's
    checkpoint), or it is another game's or options'.  With ``settings`` (the resumed run's
    settings, e.g. its config as a dict) every setting not in ``free`` must also equal the
    checkpoint's ``config`` (:func:`check_resume_settings`).  Reads only: nothing is written."""
    import torch

    path = os.path.join(out, "checkpoint.pt")
    if not os.path.isfile(path):
        raise ValueError(f"--resume: no checkpoint at {path!r}")
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as e:  # a damaged file fails in pickle, zipfile or torch: all one case here
        raise ValueError(f"--resume: {path!r} is not a readable checkpoint "
                         f"({type(e).__name__}: {e})") from None
    old = ckpt.get("config") if isinstance(ckpt, dict) else None
    if not isinstance(old, dict) or "game" not in old or "options" not in old:
        raise ValueError(f"--resume: {path!r} is not a trainer's checkpoint (it has no config "
                         f"naming a game and options)")
    if old["game"] != game or old["options"] != options:
        raise ValueError(f"the checkpoint in {out!r} is for {old['game']} {old['options']}, "
                         f"not {game} {options}")
    if settings is not None:
        check_resume_settings(old, settings, free, out)
    return ckpt


def _plain(v: Any) -> Any:
    """``v`` with its tuples as lists (recursively), so stored and given settings compare."""
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


def check_resume_settings(old: dict, new: dict, free: Sequence[str], out: str) -> None:
    """A ``ValueError`` naming every setting of ``new`` (not in ``free``) that differs from
    ``old`` (a checkpoint's settings; one it lacks, written by an older version, is not
    compared): a resumed run goes on with the settings it started with, so that it ends as
    the run never stopped would."""
    diff = [k for k in new if k not in free and k in old and _plain(old[k]) != _plain(new[k])]
    if diff:
        was = ", ".join(f"{k}={old[k]!r}" for k in diff)
        now = ", ".join(f"{k}={new[k]!r}" for k in diff)
        raise ValueError(f"--resume: the checkpoint in {out!r} was written with {was}; this run "
                         f"has {now}: resume with the checkpoint's settings, or start a new run "
                         f"in another --out")


def eval_metric(rows: list[dict]) -> tuple[str, str]:
    """The column an evaluation curve plots and its axis label: ``diff`` (the paired
    difference per deal, network minus opponent) when every row has it, else ``score`` (the
    network's own mean score: the logs of runs from before the difference was logged)."""
    if rows and all(r.get("diff") not in (None, "") for r in rows):
        return "diff", "score difference per deal, network - opponent"
    return "score", "network's mean score per deal"


def plot_eval(history: list[dict], path: str, game: str) -> None:
    """PNG of the evaluation's paired difference (:func:`eval_metric`) and win rate (95% CI
    bars) over training minutes, per opponent."""
    if not history:
        return
    metric, label = eval_metric(history)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    for name in dict.fromkeys(r["opponent"] for r in history):
        rs = [r for r in history if r["opponent"] == name]
        x = [r["train_s"] / 60 for r in rs]
        ax1.errorbar(x, [r[metric] for r in rs], yerr=[r[f"{metric}_ci"] for r in rs],
                     marker="o", capsize=3, label=f"vs {name}")
        ax2.errorbar(x, [r["win_rate"] for r in rs], yerr=[r["win_ci"] for r in rs], marker="o",
                     capsize=3, label=f"vs {name}")
    ax1.axhline(0, color="grey", lw=0.8)
    ax1.set(xlabel="training minutes", ylabel=f"{label} (duplicate)", title=f"{game}: score")
    ax2.set(xlabel="training minutes", ylabel="win rate", title=f"{game}: win rate")
    ax1.legend()
    ax2.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# ---------------------------------------------------------------------------------------------
# settings, the session
# ---------------------------------------------------------------------------------------------
def check_common(cfg: Any) -> None:
    """The checks of the settings every trainer has: ``game``, ``hidden`` and ``reward_scale``."""
    from cardenvs.api import GAMES

    if cfg.game not in GAMES:
        raise ValueError(f"unknown game {cfg.game!r}; known games: {', '.join(GAMES)}")
    if not cfg.hidden or any(int(h) < 1 for h in cfg.hidden):
        raise ValueError(f"hidden sizes must be positive ints, got {cfg.hidden!r}")
    if cfg.reward_scale != "auto" and not float(cfg.reward_scale) > 0:
        raise ValueError(f"reward_scale must be 'auto' or a positive number, got "
                         f"{cfg.reward_scale!r}")


def eval_interval_s(minutes: float, eval_minutes: Optional[float], parts: float) -> float:
    """Seconds between evaluations: ``eval_minutes``, or by default the session's ``minutes``
    over ``parts``, within 0.5 to 15 minutes."""
    if eval_minutes is not None:
        return 60.0 * eval_minutes
    return 60.0 * min(15.0, max(0.5, minutes / parts))


#: the values of a trainer's ``--device``
DEVICES = ("auto", "cpu", "cuda")


def select_device(device: str):
    """The torch device of ``--device``: ``"auto"`` is CUDA when ``torch.cuda.is_available()``,
    else the CPU; ``"cpu"``; ``"cuda"`` (or ``"cuda:N"``) only where CUDA is available (a
    ``ValueError`` saying so otherwise, and for any other value)."""
    import torch

    if not isinstance(device, str) or not (device in DEVICES or (
            device.startswith("cuda:") and device[5:].isdigit())):
        raise ValueError(f"--device must be one of {', '.join(DEVICES)} (or cuda:N), got "
                         f"{device!r}")
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ValueError(f"--device {device}: CUDA is not available here (torch "
                             f"{torch.__version__}, torch.cuda.is_available() is False); "
                             f"use --device cpu or auto")
        index = int(device[5:]) if ":" in device else 0
        if index >= torch.cuda.device_count():
            raise ValueError(f"--device {device}: this machine has "
                             f"{torch.cuda.device_count()} CUDA device(s)")
    return torch.device(device)


def torch_device(device: str, threads: int):
    """Set torch's threads (``threads`` > 0; 0 keeps torch's default) and flush denormals;
    the device to train on (:func:`select_device`: ``"auto"`` is CUDA when present)."""
    import torch

    if threads:
        torch.set_num_threads(threads)
    torch.set_flush_denormal(True)
    return select_device(device)


def game_dims(game) -> tuple[int, int]:
    """``(obs_dim, feat_dim)`` of a game: its observation size and its action-feature width."""
    return game.layout.size, game.action_features(np.zeros(1, np.int64)).shape[1]


def load_numpy_weights(net: Any, path: str) -> dict:
    """Copy an :mod:`agents.trained` weight file (e.g. a shipped ``agents/weights/GAME.npz``)
    into ``net`` (a :class:`train.dmc.QNet`), which must have its sizes; returns the file's
    metadata.  A file without context inputs may start a network with them (their weights
    start at zero: the same scores as the file's); one with them needs a network of the same
    context or of one that extends it (:func:`agents.context.extends`: the added inputs start
    at zero)."""
    from cardenvs.arena import agents_module

    qn = agents_module("trained").QNetwork(path)
    ctx_dim = getattr(net, "ctx_dim", 0)
    if qn.ctx_dim and (qn.ctx_dim > ctx_dim or not agents_module("context").extends(
            getattr(net, "context", None), qn.context)):
        raise ValueError(f"{path!r} takes {qn.ctx_dim} inputs of context {qn.context!r}; the "
                         f"network takes {ctx_dim} of {getattr(net, 'context', None)!r}")
    shapes = [tuple(w.shape) for w, _ in qn.layer_list()]
    shapes[0] = (shapes[0][0] + ctx_dim - qn.ctx_dim, shapes[0][1])
    want = [(m.in_features, m.out_features) for m in net.layers]
    if shapes != want:
        raise ValueError(f"{path!r} holds layers {shapes}; the network has {want} (give the "
                         f"file's hidden sizes, {qn.meta.get('hidden')})")
    net.load_numpy(qn)
    return qn.meta


#: the dtypes of a learner's forward matmuls (``--train-dtype``; ``bfloat16``: under
#: ``torch.autocast``, the weights, the optimizer's state and the loss stay float32)
TRAIN_DTYPES = ("float32", "bfloat16")


def check_train_dtype(name: str) -> None:
    """``ValueError`` unless ``name`` is one of :data:`TRAIN_DTYPES`."""
    if name not in TRAIN_DTYPES:
        raise ValueError(f"train_dtype must be one of {', '.join(TRAIN_DTYPES)}, got {name!r}")


def learner_autocast(device: Any, train_dtype: str):
    """The context a learner's forward runs in: ``torch.autocast`` to bfloat16 on ``device``'s
    type for ``train_dtype="bfloat16"`` (on CPUs with AMX or AVX512-BF16 about twice the
    float32 rate: an update of ``train.dmc``'s default network on 512 samples 16.4 -> 7.8 ms
    on an Intel Xeon with AMX), else a context that changes nothing."""
    import torch

    check_train_dtype(train_dtype)
    dev = torch.device(device).type
    return torch.autocast(dev, dtype=torch.bfloat16, enabled=train_dtype == "bfloat16")


def _bump_versions(opt, args, kwargs) -> None:
    """A step post-hook: the fused Adam kernel writes the parameters without bumping torch's
    version counters, which caches keyed on them (``train.dmc.FactoredScorer``,
    ``train.quant.Int8Body``) read as "the weights changed"."""
    from torch.autograd.graph import increment_version

    increment_version([p for g in opt.param_groups for p in g["params"]])


def make_adam(params, lr: float):
    """``torch.optim.Adam(params, lr)``, fused into one kernel where the build supports it
    (on a CPU 0.6 ms a step for ``train.dmc``'s default network against 1.6-2.5 ms for the
    per-tensor loop; the same arithmetic, float32 rounding aside), else the per-tensor loop.
    After each fused step the parameters' version counters are bumped, as every other
    optimizer's in-place update does."""
    import torch

    params = list(params)
    try:
        opt = torch.optim.Adam(params, lr=lr, fused=True)
    except (RuntimeError, TypeError, ValueError):  # an older torch or an unsupported device
        return torch.optim.Adam(params, lr=lr)
    opt.register_step_post_hook(_bump_versions)
    return opt


def load_optimizer_state(opt, state: dict) -> None:
    """``opt.load_state_dict(state)`` keeping ``opt``'s implementation (fused or not): a
    checkpoint's parameter groups carry the flags of the optimizer that wrote it."""
    keep = [{k: g.get(k) for k in ("fused", "foreach")} for g in opt.param_groups]
    opt.load_state_dict(state)
    for g, flags in zip(opt.param_groups, keep):
        g.update(flags)


def optimizer_step(trainer: Any, loss, clip: float) -> None:
    """One step of ``trainer.opt`` on ``loss``: gradients cleared, backpropagated, clipped to
    norm ``clip`` over ``trainer.net``'s parameters, applied; ``counters["updates"]`` + 1."""
    import torch

    trainer.opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(trainer.net.parameters(), clip)
    trainer.opt.step()
    trainer.counters["updates"] += 1


class SessionBar:
    """A tqdm bar of the session's wall-clock seconds out of its budget (nothing when
    ``enabled`` is false); :meth:`tick` moves it to the time elapsed since ``t_start``."""

    def __init__(self, enabled: bool, budget_s: float, desc: str, t_start: float):
        self.t_start, self.bar = t_start, None
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=int(budget_s), unit="s", desc=desc, dynamic_ncols=True)
            self.tick()

    def tick(self) -> None:
        if self.bar is not None:
            n = min(int(time.perf_counter() - self.t_start), self.bar.total)
            if n > self.bar.n:
                self.bar.update(n - self.bar.n)

    def postfix(self, **values: Any) -> None:
        if self.bar is not None:
            self.bar.set_postfix(**values)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def evaluate_network(trainer: Any, deadline: Optional[float], chunk: int,
                     counters: Sequence[str], title: str, **kwargs: Any) -> list[dict]:
    """The greedy network (``trainer.policy``) against each ``cfg.eval_agents`` agent over
    ``cfg.eval_deals`` duplicate deals (:func:`train.dmc.evaluate_against`, in chunks of
    ``chunk`` up to ``deadline``; ``kwargs`` go to it); each row gets ``train_s`` and the
    ``counters`` named, goes to ``eval.csv`` and ``trainer.eval_history``, and ``eval.png``
    (titled ``title``) is redrawn.  A stop signal during it (``trainer._stop``) discards it:
    ``[]``.  ``trainer._eval_s`` is set to the seconds it took."""
    from .dmc import evaluate_against

    cfg = trainer.cfg
    if cfg.eval_deals <= 0:
        return []
    t0 = time.perf_counter()
    seeds = np.random.default_rng(cfg.seed + 7919).integers(_SEED_MAX, size=cfg.eval_deals)
    trainer.net.eval()
    stop = trainer._stop
    try:
        with (stop.abortable() if stop is not None else contextlib.nullcontext()):
            rows = evaluate_against(trainer.game, trainer.policy, cfg.eval_agents, seeds,
                                    seed=cfg.seed + 17, chunk=chunk, deadline=deadline, **kwargs)
        for res in rows:
            res.update(train_s=round(trainer.counters["train_s"], 1),
                       **{k: trainer.counters[k] for k in counters})
    except Stopped:
        return []
    finally:
        trainer.net.train()
    trainer._eval_s = time.perf_counter() - t0
    trainer.eval_history.extend(rows)
    append_csv(os.path.join(cfg.out, "eval.csv"), rows)
    plot_eval(trainer.eval_history, os.path.join(cfg.out, "eval.png"), title)
    return rows


# ---------------------------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------------------------
def run_parser(module: str, doc: str, minutes: float, seed: int,
               covers: str) -> argparse.ArgumentParser:
    """The arguments every trainer's command line shares (``python -m train.MODULE``): the
    game, ``--out`` (default ``runs/MODULE_GAME``), ``--minutes`` (``covers``: what its
    budget includes, for the help), ``--resume``, ``--option`` and ``--seed``."""
    p = argparse.ArgumentParser(prog=f"python -m train.{module}", description=doc.split("\n\n")[0])
    p.add_argument("game", help="registry name (cardenvs.GAMES)")
    p.add_argument("--out", default=None, help=f"output dir (default runs/{module}_GAME)")
    p.add_argument("--minutes", type=float, default=minutes,
                   help=f"wall-clock minutes of this session, everything included ({covers}); "
                        f"SIGTERM / Ctrl-C stop early, writing the checkpoint")
    p.add_argument("--resume", action="store_true", help="continue from OUT/checkpoint.pt")
    p.add_argument("--option", "-o", action="append", type=parse_option, default=[],
                   metavar="KEY=VALUE", help="a game option (repeatable)")
    p.add_argument("--seed", type=int, default=seed)
    return p


def add_iteration_args(p: argparse.ArgumentParser, threads: int,
                       max_help: str = "stop after this many (0: no limit)") -> None:
    """The last arguments of an iterating trainer's command line (``train.finetune``): ``--threads``, ``--max-iterations`` (its help: ``max_help``) and
    ``--no-progress``."""
    p.add_argument("--threads", type=int, default=threads, help="torch threads")
    p.add_argument("--max-iterations", type=int, default=0, help=max_help)
    p.add_argument("--no-progress", action="store_true")


def parse_hidden(text: str) -> tuple[int, ...]:
    """``--hidden 256,256,128`` -> ``(256, 256, 128)``."""
    return tuple(int(h) for h in text.split(",") if h.strip())


def parse_scale(text: str) -> Any:
    """``--reward-scale``: ``"auto"`` or a number."""
    return text if text == "auto" else float(text)


def parse_names(text: str) -> tuple[str, ...]:
    """``--eval-agents rules,random`` -> ``("rules", "random")``."""
    return tuple(x for x in text.split(",") if x)


def run_command(module: str, start: Callable[[], dict], drop: str = "eval") -> int:
    """A trainer's command line: ``start()`` builds the trainer and runs it; a ``ValueError``
    (bad settings, a file that does not fit) is one line ``python -m train.MODULE: ...`` on
    stderr and exit status 2; otherwise :func:`finish` with the result."""
    try:
        res = start()
    except ValueError as e:
        print(f"python -m train.{module}: {e}", file=sys.stderr)
        return 2
    return finish(res, drop)


def finish(res: dict, drop: str) -> int:
    """Print a session's result (less its ``drop`` entry) as JSON; the process's exit status:
    0, or 128 + the number of the signal that stopped it (the shell's convention)."""
    print(json.dumps({k: v for k, v in res.items() if k != drop}, default=str))
    return 128 + int(signal.Signals[res["stopped"]]) if res["stopped"] else 0
