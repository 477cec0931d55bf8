"""One :mod:`train.dmc` run: :class:`DMC` sets it up (fresh, warm-started with ``--init`` or
resumed from ``checkpoint.pt``), writes its files (the checkpoint, the exported weights, the
logs) and runs the session's main loop: self-play steps (:class:`train.dmc_selfplay.SelfPlayer`),
updates (:class:`train.dmc_learner.Learner`), periodic evaluations and checkpoints, all within
the time budget."""

from __future__ import annotations

import copy
import math
import os
import sys
import time
from dataclasses import asdict
from typing import Optional

import numpy as np
import torch

from cardenvs.arena import agents_module
from .common import (
    SessionBar, StopSignals, append_csv, evaluate_network, game_dims, load_checkpoint,
    load_optimizer_state, make_adam, print_stopped, run_session, save_atomic, torch_device,
    truncate_csv, write_config,
)
from .dmc_config import Config, check_config
from .dmc_eval import make_eval_agent
from .dmc_learner import Learner, random_return_scale
from .dmc_net import QNet, TorchPolicy, export_weights
from .dmc_selfplay import SelfPlayer

# the agents package beside this one: ``agents`` in a checkout, ``cardenvs.agents`` installed
_trained = agents_module("trained")


class DMC(SelfPlayer, Learner):
    """One training run (see :mod:`train.dmc`); :meth:`run` trains for the time budget."""

    def __init__(self, cfg: Config, resume: bool = False):
        from cardenvs.api import make_game

        if resume:
            ckpt = load_checkpoint(cfg.out, cfg.game, cfg.options)
            # the network's shape comes from the checkpoint
            cfg.hidden = tuple(ckpt["config"]["hidden"])
        else:
            ckpt = None
        check_config(cfg)
        self.cfg = cfg
        self.game = make_game(cfg.game, **cfg.options)
        g = self.game
        self.device = torch_device(cfg.device, cfg.threads)
        self.rng = np.random.default_rng(cfg.seed)
        torch.manual_seed(cfg.seed)
        self.obs_dim, self.feat_dim = game_dims(g)
        self.net = QNet(self.obs_dim, self.feat_dim, cfg.hidden).to(self.device)
        self.opp_net = copy.deepcopy(self.net).eval()
        self.opt = make_adam(self.net.parameters(), cfg.lr)
        self.pool: list[dict] = []
        self.opp_index = -1
        self.counters = {"decisions": 0, "samples": 0, "games": 0, "updates": 0, "train_s": 0.0,
                         "teacher_decisions": 0}
        self.eval_history: list[dict] = []
        self._eval_skipped: set = set()  # evaluation agents reported as unable to play
        self.teacher = None
        if cfg.teacher is not None:
            self.teacher, reason = make_eval_agent(cfg.teacher, g, seed=cfg.seed + 31)
            if self.teacher is None:
                raise ValueError(f"teacher {cfg.teacher!r} cannot be used: {reason}")
        self._eval_s = 0.0  # seconds of the latest evaluation (reserved at the end of a run)
        if ckpt is not None:
            self._load(ckpt)
            # rows logged after the checkpoint describe work this run discards
            for name in ("log.csv", "eval.csv"):
                truncate_csv(os.path.join(cfg.out, name), "decisions", self.counters["decisions"])
        elif cfg.init is not None:
            self.scale = self._load_init(cfg.init)
        else:
            self.scale = (random_return_scale(g, self.rng) if cfg.reward_scale == "auto"
                          else float(cfg.reward_scale))
        self.policy = TorchPolicy(g, self.net, self.device)
        self.opp_policy = TorchPolicy(g, self.opp_net, self.device)
        # training queue: lists of finished samples
        self._q_obs: list[np.ndarray] = []
        self._q_act: list[np.ndarray] = []
        self._q_tgt: list[np.ndarray] = []
        self._q_alt: list[np.ndarray] = []  # teacher margin: 2 alternative actions per sample
        self._margin_on = cfg.teacher is not None and cfg.teacher_margin > 0
        self._rb = None  # replay buffer (--replay > 1; not checkpointed, refilled on resume)
        self._q_n = 0
        self._loss_sum, self._loss_n, self._q_sum = 0.0, 0, 0.0
        self._teacher_s, self._teaching, self._margin_sum = 0.0, False, 0.0
        self._tb = None
        self._stop: Optional[StopSignals] = None
        self._engine = self._actors = None

    # -- checkpoints ---------------------------------------------------------------------------
    def _load_init(self, path: str) -> float:
        """Warm start (``--init``): the network's weights from an :mod:`agents.trained` file of
        the same shape; returns the reward scale to train with (the file's, unless
        ``--reward-scale`` is a number)."""
        net = _trained.QNetwork(path)
        reason = _trained._mismatch(net, self.game)
        if reason is not None:
            raise ValueError(f"--init {path!r}: {reason}")
        if net.ctx_dim:
            raise ValueError(f"--init {path!r}: the network takes the context {net.context!r} "
                             f"(agents/context.py), which train.dmc's self-play does not compute")
        if list(net.meta.get("hidden", [])) != list(self.cfg.hidden):
            raise ValueError(f"--init {path!r}: hidden sizes {net.meta.get('hidden')} differ from "
                             f"--hidden {list(self.cfg.hidden)}")
        self.net.load_numpy(net)
        self.opp_net.load_state_dict(self.net.state_dict())
        if self.cfg.reward_scale != "auto":
            return float(self.cfg.reward_scale)
        return float(net.meta.get("reward_scale", 1.0))

    def _load(self, ckpt: dict) -> None:
        self.net.load_state_dict(ckpt["net"])
        load_optimizer_state(self.opt, ckpt["optimizer"])
        self.pool = [{k: v.to(self.device) for k, v in sd.items()} for sd in ckpt["pool"]]
        self.opp_index = ckpt["opp_index"]
        if self.opp_index >= 0:
            self.opp_net.load_state_dict(self.pool[self.opp_index])
        self.rng.bit_generator.state = ckpt["np_rng"]
        torch.set_rng_state(ckpt["torch_rng"])
        self.counters = {"teacher_decisions": 0, **ckpt["counters"]}
        rng_state = ckpt.get("teacher_rng")
        if rng_state is not None and isinstance(getattr(self.teacher, "rng", None), np.random.Generator):
            self.teacher.rng.bit_generator.state = rng_state
        self.eval_history = list(ckpt["eval_history"])
        self.scale = float(ckpt["reward_scale"])
        self._eval_s = float(ckpt.get("eval_s", 0.0))

    def save_checkpoint(self) -> str:
        """Write ``checkpoint.pt`` atomically; returns its path."""
        os.makedirs(self.cfg.out, exist_ok=True)
        path = os.path.join(self.cfg.out, "checkpoint.pt")
        ckpt = {
            "config": asdict(self.cfg), "net": self.net.state_dict(), "optimizer": self.opt.state_dict(),
            "pool": [{k: v.cpu() for k, v in sd.items()} for sd in self.pool],
            "opp_index": self.opp_index, "np_rng": self.rng.bit_generator.state,
            "torch_rng": torch.get_rng_state(), "counters": dict(self.counters),
            "eval_history": list(self.eval_history), "reward_scale": self.scale,
            "eval_s": self._eval_s,
        }
        trng = getattr(self.teacher, "rng", None)
        if isinstance(trng, np.random.Generator):
            ckpt["teacher_rng"] = trng.bit_generator.state
        return save_atomic(ckpt, path)

    def meta(self) -> dict:
        """Metadata stored in the exported weights."""
        return {"game": self.cfg.game, "options": self.cfg.options, "reward_scale": self.scale,
                "trainer": "dmc", "mode": "network", "decisions": self.counters["decisions"],
                "updates": self.counters["updates"], "train_minutes": round(self.counters["train_s"] / 60, 2),
                "seed": self.cfg.seed, "teacher": self.cfg.teacher, "init": self.cfg.init,
                "teacher_decisions": self.counters["teacher_decisions"]}

    def export(self, path: Optional[str] = None, dtype=np.float16) -> str:
        """Write the network's weights (``OUT/GAME.npz`` unless ``path``); returns the path."""
        path = path or os.path.join(self.cfg.out, f"{self.cfg.game}.npz")
        export_weights(self.net, path, self.meta(), dtype=dtype)
        return path

    # -- evaluation ----------------------------------------------------------------------------
    def evaluate(self, deadline: Optional[float] = None) -> list[dict]:
        """Play the evaluation deals against each ``--eval-agents`` agent; record and return.

        With a ``deadline`` (a ``time.perf_counter()`` value) the deals are played in chunks
        and the evaluation stops at the first chunk boundary past it (each row says how many
        deals it has; none when not one chunk fitted).  A stop signal during it discards the
        evaluation (returns ``[]``)."""
        n = self.cfg.eval_deals
        rows = evaluate_network(self, deadline, n if deadline is None else max(1, min(25, n // 4)),
                                ("decisions", "updates"), self.cfg.game, skipped=self._eval_skipped)
        if self._tb is not None:
            for r in rows:
                self._tb.add_scalar(f"eval/score_vs_{r['opponent']}", r["score"], self.counters["decisions"])
                self._tb.add_scalar(f"eval/diff_vs_{r['opponent']}", r["diff"], self.counters["decisions"])
        return rows

    # -- main loop -----------------------------------------------------------------------------
    def run(self) -> dict:
        """Train within ``cfg.minutes`` of wall-clock time for this session, everything
        included: the first evaluation, training (with periodic evaluations and checkpoints),
        and the final evaluation, checkpoint and export (the training loop stops early enough
        for the final evaluation, timed by the latest one, to fit).

        SIGTERM / SIGINT end the session cleanly: the current step finishes (an evaluation in
        progress is dropped), then the checkpoint and the weights are written and ``run``
        returns with ``"stopped"`` set to the signal's name; ``--resume`` continues from there.
        A checkpoint is also written right after the session's first update, so a run killed
        outright (SIGKILL) loses at most the minutes since its latest checkpoint.
        """
        return run_session(self, cleanup=self._stop_engine)

    def _run(self, stop: StopSignals) -> dict:
        cfg = self.cfg
        t_start = time.perf_counter()
        deadline = t_start + 60.0 * cfg.minutes
        write_config(cfg)
        self._tb = _tensorboard(cfg.out)
        budget = 60.0 * cfg.minutes
        self._start_selfplay()
        if not self.eval_history:  # at most a quarter of the budget
            self._print_eval(self.evaluate(deadline=t_start + 0.25 * budget))
        evaluated_at = self.counters["updates"]
        t0 = time.perf_counter()
        base_s = self.counters["train_s"]
        updates0 = self.counters["updates"]
        saved = False
        last_log = last_eval = last_ckpt = t0
        log_dec, log_t = self.counters["decisions"], t0
        self._log_t, self._teacher_s = t0, 0.0
        bar = SessionBar(cfg.progress, budget, f"dmc {cfg.game}", t_start)
        while stop.signum is None:
            now = time.perf_counter()
            self.counters["train_s"] = base_s + (now - t0)
            # what the end of the session needs: the final evaluation and the files
            reserve = 1.2 * self._eval_s + 1.0
            if now >= deadline - reserve or (cfg.max_updates and self.counters["updates"] >= cfg.max_updates):
                break
            self.step()
            updated = False
            # one step can fill several batches; max_updates is an exact bound
            while self._q_n >= cfg.batch and not (cfg.max_updates and self.counters["updates"] >= cfg.max_updates):
                self._update()
                updated = True
            if updated and self._actors is not None:
                self._actors.publish(net=self.net)
            if not saved and self.counters["updates"] > updates0:
                # the first learning step of the session: from now on there is work to lose
                self.save_checkpoint()
                saved, last_ckpt = True, time.perf_counter()
            if now - last_log >= cfg.log_seconds:
                rate = (self.counters["decisions"] - log_dec) / max(now - log_t, 1e-9)
                row = self._log_row(rate)
                log_dec, log_t, last_log = self.counters["decisions"], now, now
                bar.postfix(dec_s=f"{rate:.0f}", loss=f"{row['loss']:.4f}", upd=row["updates"])
            bar.tick()
            # a periodic evaluation only when the final one still fits after it
            if (now - last_eval >= cfg.eval_interval_s()
                    and time.perf_counter() + 2 * reserve < deadline):
                self._print_eval(self.evaluate(deadline=deadline - reserve))
                last_eval, evaluated_at = time.perf_counter(), self.counters["updates"]
            if now - last_ckpt >= 60.0 * cfg.ckpt_minutes:
                self.save_checkpoint()
                last_ckpt = time.perf_counter()
        bar.close()
        self.counters["train_s"] = base_s + (time.perf_counter() - t0)
        elapsed = time.perf_counter() - t0
        rate = (self.counters["decisions"] - log_dec) / max(time.perf_counter() - log_t, 1e-9)
        self._log_row(rate)
        final = []  # the network after its last update, unless that was evaluated already
        if stop.signum is None and self.counters["updates"] != evaluated_at:
            final = self.evaluate(deadline=deadline - 1.0)
        self._print_eval(final)
        ckpt = self.save_checkpoint()
        weights = self.export()
        if self._tb is not None:
            self._tb.close()
        if stop.signum is not None:
            print_stopped("dmc", stop, f"{self.counters['updates']} updates",
                          f"checkpoint {ckpt}, weights {weights}")
        return {"checkpoint": ckpt, "weights": weights, "eval": final, "session_s": elapsed,
                "stopped": stop.name, **self.counters}

    def _log_row(self, rate: float) -> dict:
        now = time.perf_counter()
        span = now - getattr(self, "_log_t", now)
        teacher_frac = self._teacher_s / span if span > 0 else 0.0
        self._log_t, self._teacher_s = now, 0.0
        n = max(self._loss_n, 1)
        row = {"train_s": round(self.counters["train_s"], 1), **{k: v for k, v in self.counters.items()
                                                                 if k != "train_s"},
               "dec_per_s": round(rate, 1), "loss": self._loss_sum / n if self._loss_n else float("nan"),
               "q_mean": self._q_sum / n if self._loss_n else float("nan"),
               "pool": len(self.pool), "opponent": self.opp_index,
               "mode": "teacher" if self._teaching else "selfplay", "teacher_frac": round(teacher_frac, 3),
               "margin_loss": self._margin_sum / n if self._loss_n else float("nan")}
        self._margin_sum = 0.0
        self._loss_sum, self._loss_n, self._q_sum = 0.0, 0, 0.0
        append_csv(os.path.join(self.cfg.out, "log.csv"), [row])
        if self._tb is not None:
            for k in ("loss", "q_mean", "dec_per_s", "teacher_frac"):
                if not math.isnan(row[k]):
                    self._tb.add_scalar(f"train/{k}", row[k], self.counters["decisions"])
        return row

    def _print_eval(self, rows: list[dict]) -> None:
        for r in rows:
            msg = (f"[dmc] eval vs {r['opponent']} after {r['train_s'] / 60:.1f} min: score "
                   f"{r['score']:+.3f} ± {r['score_ci']:.3f}, difference {r['diff']:+.3f} ± "
                   f"{r['diff_ci']:.3f}, win rate {r['win_rate']:.3f} ± {r['win_ci']:.3f}")
            print(msg, file=sys.stderr, flush=True)


def _tensorboard(out: str):
    """A TensorBoard writer of ``OUT/tb``, or ``None`` when tensorboard is not installed."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except Exception:  # tensorboard not installed: CSV only
        return None
    return SummaryWriter(os.path.join(out, "tb"))
