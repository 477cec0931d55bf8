"""Expert iteration (ExIt) for every cardenvs game: a Q network learns from PIMC search, then
guides the search that labels its next data.

Each **iteration**:

1. **Expert self-play.**  ``--games`` deals are played with the expert at every seat: the
   ``trained+search`` agent (:class:`agents.exit.ExitSearchAgent`) over the current network,
   i.e. PIMC (:class:`agents.search.SearchAgent`: sampled worlds, batched numba rollouts of
   the rollout policy) whose candidates are the rollout policy's best ``--candidates``
   actions plus the network's best ``--net-candidates``.  The expert plays the candidate of
   best mean rollout return (``--explore``: a random candidate instead, now and then).
   Every decision with two or more candidates is stored: the observation of the seat to move,
   the candidates with their mean rollout returns (the **policy targets**), the action played
   and the seat's return from that decision to the end of the deal (the **value target**), and
   one legal action the search did not consider.
2. **Learning.**  ``--updates`` Adam steps on batches from the latest ``--buffer`` decisions:
   ``Q(obs, candidate)`` regresses on the candidate's search value and ``Q(obs, played)`` on
   the return (weight ``--value-weight``); the **policy loss** (weight ``--policy-weight``) is
   the cross-entropy of ``softmax(Q / T)`` over the candidates and the left-out action against
   ``softmax(search value / T)`` over the candidates (``--temperature`` T; the left-out action
   gets probability 0, so the greedy network does not pick actions the search never rated).
   Targets are scaled by ``reward_scale`` (``auto``: one over the mean absolute return of
   random play, as in :mod:`train.dmc`).
3. The network is written as ``OUT/GAME.npz`` (the :mod:`agents.trained` format: numpy
   inference, ``trained:OUT/GAME.npz``; ``trained+search:OUT/GAME.npz`` plays it guiding the
   search) and the expert of the next iteration uses it.

**Evaluation**: every ``--eval-minutes`` the greedy network alone plays ``--eval-deals``
duplicate deals against each ``--eval-agents`` agent (:func:`train.dmc.duplicate_returns`);
``eval.csv`` and ``eval.png`` hold the learning curve (score with 95% CIs over training time).

**Stopping**: ``--minutes`` bounds the session, evaluations included; SIGTERM / Ctrl-C during
an iteration's deals (or the session's end reached there) drop the iteration (its deals are
played again on resume), during its updates end it; then the checkpoint and the weights are
written (exit status 128 + signal).  A checkpoint (``OUT/checkpoint.pt`` and
``OUT/buffer.npz``) is also written after every iteration, so a run killed outright resumes
from its last one: ``--resume`` drops the rows of ``log.csv`` / ``eval.csv`` of later
iterations and plays those iterations again.  Same seed, settings and machine: the same
weights at every iteration, and a stopped and resumed run ends with the iterations, log rows
(less their times) and weights of one never stopped (``--max-iterations`` counts the run's
iterations in all, resumed sessions included; evaluations follow the clock,
``--eval-minutes``).  ``--resume`` takes the checkpoint's settings: another game, option or
setting than ``--minutes``, ``--threads``, ``--max-iterations`` and ``--no-progress``, a
damaged checkpoint or a buffer that is not the checkpoint's is refused, and nothing is
written.

``--init agents/weights/GAME.npz`` starts from a trained network (e.g. the shipped DMC one)
instead of a random one.

Run ``python -m train.exit GAME --minutes 10 --out runs/exit_GAME``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import asdict, dataclass
from typing import Any, Optional, Sequence

import numpy as np
import torch
from torch.nn import functional as F

from cardenvs.arena import agents_module

from .common import (
    SessionBar, StopSignals, add_iteration_args, append_csv, check_common, check_resume_settings,
    end_session, eval_interval_s, evaluate_network, game_dims, load_checkpoint, optimizer_step,
    parse_hidden, parse_names, parse_scale, play_deal, run_command, run_parser, run_session,
    save_atomic, truncate_csv, write_config,
)
from .dmc import QNet, TorchPolicy, export_weights, random_return_scale

_SEED_MAX = 2**62
#: candidates stored per decision (more are cut; searches rarely score more than ~12)
MAX_CANDS = 24
#: the settings a resumed run may change (:func:`train.common.check_resume_settings`): the
#: session's budget, its threads, the run's length and the progress bar
RESUME_FREE = ("minutes", "threads", "max_iterations", "progress", "out")


@dataclass
class ExitConfig:
    """Every setting of an expert-iteration run (stored in the checkpoint)."""

    game: str
    options: Optional[dict] = None
    out: str = "runs/exit"
    minutes: float = 10.0
    seed: int = 0
    hidden: tuple = (256, 256, 128)
    lr: float = 1e-3
    batch: int = 256
    rollouts: int = 160
    candidates: int = 5
    net_candidates: int = 3
    games: int = 4
    updates: int = 40
    buffer: int = 20000
    value_weight: float = 0.2
    policy_weight: float = 1.0
    temperature: float = 0.1
    explore: float = 0.1
    reward_scale: Any = "auto"
    init: Optional[str] = None
    eval_agents: tuple = ("rules", "random")
    eval_deals: int = 50
    eval_minutes: Optional[float] = None
    threads: int = 1
    max_iterations: int = 0
    progress: bool = True

    def eval_interval_s(self) -> float:
        return eval_interval_s(self.minutes, self.eval_minutes, 5.0)


def _check(cfg: ExitConfig) -> None:
    check_common(cfg)
    for name in ("batch", "rollouts", "candidates", "games", "buffer"):
        v = getattr(cfg, name)
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be a positive int, got {v!r}")
    for name in ("net_candidates", "updates", "max_iterations", "eval_deals"):
        v = getattr(cfg, name)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ValueError(f"{name} must be an int >= 0, got {v!r}")
    if not 0.0 <= cfg.explore <= 1.0:
        raise ValueError(f"explore must lie in [0, 1], got {cfg.explore!r}")
    if cfg.minutes < 0 or cfg.lr <= 0 or cfg.value_weight < 0 or cfg.policy_weight < 0:
        raise ValueError("minutes, value_weight and policy_weight must be >= 0 and lr > 0")
    if not cfg.temperature > 0:
        raise ValueError(f"temperature must be > 0, got {cfg.temperature!r}")


def load_numpy_weights(net: QNet, path: str) -> dict:
    """Copy an :mod:`agents.trained` weight file (e.g. a shipped ``agents/weights/GAME.npz``)
    into ``net``, which must have its sizes; returns the file's metadata.  A file without
    context inputs may start a network with them (their weights start at zero: the same
    scores as the file's); one with them needs a network of the same context or of one that
    extends it (:func:`agents.context.extends`: the added inputs start at zero)."""
    QNetwork = agents_module("trained").QNetwork
    qn = QNetwork(path)
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


class Buffer:
    """Ring buffer of searched decisions (numpy arrays; saved with the checkpoint)."""

    FIELDS = ("obs", "cands", "vals", "played", "ret", "neg")

    def __init__(self, size: int, obs_dim: int):
        self.size = size
        self.obs = np.zeros((size, obs_dim), np.float16)
        self.cands = np.full((size, MAX_CANDS), -1, np.int64)
        self.vals = np.zeros((size, MAX_CANDS), np.float32)
        self.played = np.zeros(size, np.int64)
        self.ret = np.zeros(size, np.float32)
        self.neg = np.full(size, -1, np.int64)
        self.n = 0  # rows filled
        self.head = 0  # next row to write

    def add(self, obs, cands, vals, played, ret, neg) -> None:
        i = self.head
        c = min(len(cands), MAX_CANDS)
        self.obs[i] = obs
        self.cands[i] = -1
        self.cands[i, :c] = cands[:c]
        self.vals[i] = 0.0
        self.vals[i, :c] = vals[:c]
        self.played[i], self.ret[i], self.neg[i] = played, ret, neg
        self.head = (i + 1) % self.size
        self.n = min(self.n + 1, self.size)

    def sample(self, rng: np.random.Generator, B: int) -> np.ndarray:
        return rng.integers(self.n, size=min(B, self.n))

    def save(self, path: str, stamp: Optional[dict] = None) -> None:
        """Write the buffer to ``path`` (through a temporary file) with ``stamp`` (integer
        counters naming the state it belongs to, e.g. the trainer's iterations)."""
        tmp = path + ".tmp.npz"
        extra = {f"stamp_{k}": np.int64(v) for k, v in (stamp or {}).items()}
        np.savez(tmp, n=self.n, head=self.head, **extra,
                 **{k: getattr(self, k) for k in self.FIELDS})
        os.replace(tmp, path)

    def load(self, path: str, stamp: Optional[dict] = None) -> None:
        """Read a buffer :meth:`save` wrote; a ``ValueError`` (the buffer unchanged) when the
        file is missing, damaged, of other sizes, or (with ``stamp``) not stamped so."""
        try:
            with np.load(path) as z:
                got = {k: z[k] for k in self.FIELDS}
                n, head = int(z["n"]), int(z["head"])
                stamped = {k: int(z[f"stamp_{k}"]) for k in (stamp or {})}
        except Exception as e:  # missing, cut short, no npz, fields absent: one case here
            raise ValueError(f"{path!r} is not a readable buffer ({type(e).__name__}: {e})") \
                from None
        for k, v in got.items():
            want = getattr(self, k)
            if v.shape != want.shape or v.dtype != want.dtype:
                raise ValueError(f"{path!r} holds {k} of shape {v.shape} ({v.dtype}), the run "
                                 f"expects {want.shape} ({want.dtype}) (same --buffer and game?)")
        if not (0 <= n <= self.size and 0 <= head < self.size and (n == self.size or head == n)):
            raise ValueError(f"{path!r} holds {n} rows with the next at {head}: no buffer of "
                             f"{self.size}")
        if stamp is not None and stamped != {k: int(v) for k, v in stamp.items()}:
            raise ValueError(f"{path!r} is the buffer of {stamped}, not of {stamp}")
        for k, v in got.items():
            getattr(self, k)[:] = v
        self.n, self.head = n, head


class ExIt:
    """The expert-iteration learner (module docstring).

    Args:
        cfg: the settings.
        resume: continue from ``cfg.out``'s checkpoint: a ``ValueError``, with nothing
            written, when there is none, it is damaged, or it is of another game or settings
            (all but :data:`RESUME_FREE`).
    """

    def __init__(self, cfg: ExitConfig, resume: bool = False):
        from cardenvs.api import make_game

        ExitSearchAgent = agents_module("exit").ExitSearchAgent

        if cfg.options is None:
            cfg.options = {}
        _check(cfg)
        torch.set_num_threads(max(1, int(cfg.threads)))
        self.cfg = cfg
        self.game = make_game(cfg.game, **cfg.options)
        g = self.game
        self.obs_dim, self.feat_dim = game_dims(g)
        self.rng = np.random.default_rng(cfg.seed)
        torch.manual_seed(cfg.seed)
        self.net = QNet(self.obs_dim, self.feat_dim, cfg.hidden)
        self.opt = torch.optim.Adam(self.net.parameters(), lr=cfg.lr)
        self.buffer = Buffer(cfg.buffer, self.obs_dim)
        self.counters = {"iterations": 0, "games": 0, "decisions": 0, "updates": 0,
                         "train_s": 0.0}
        self.eval_history: list[dict] = []
        self.loss = float("nan")
        self._eval_s = 0.0
        self._stop: Optional[StopSignals] = None
        # the expert's seed is the run's first draw, resumed or not
        expert_seed = int(self.rng.integers(_SEED_MAX))
        expert_rng = None
        if resume:  # read and checked whole before anything is written
            expert_rng = self._resume()
        elif cfg.init is not None:  # start from a trained network, in its reward scale
            meta = load_numpy_weights(self.net, cfg.init)
            if meta.get("game") not in (None, cfg.game):
                raise ValueError(f"--init {cfg.init!r} holds weights for {meta.get('game')!r}")
            self.scale = float(meta.get("reward_scale", 1.0))
        else:
            self.scale = (random_return_scale(g, np.random.default_rng(cfg.seed + 1))
                          if cfg.reward_scale == "auto" else float(cfg.reward_scale))
        os.makedirs(cfg.out, exist_ok=True)
        if resume:  # by iteration: the rounded train_s of a row is no bound for the unrounded
            n = self.counters["iterations"]
            truncate_csv(os.path.join(cfg.out, "log.csv"), "iteration", n)
            truncate_csv(os.path.join(cfg.out, "eval.csv"), "iterations", n)
        self.policy = TorchPolicy(g, self.net, torch.device("cpu"))
        self.export()
        self.expert = ExitSearchAgent(g, seed=expert_seed,
                                      weights=self.weights_path, margin=None, record=True,
                                      rollouts=cfg.rollouts, max_candidates=cfg.candidates,
                                      net_candidates=cfg.net_candidates,
                                      bids=True)  # the network learns every decision kind
        if expert_rng is not None:
            self.expert.rng.bit_generator.state = expert_rng

    # -- files ---------------------------------------------------------------------------------
    @property
    def ckpt_path(self) -> str:
        return os.path.join(self.cfg.out, "checkpoint.pt")

    @property
    def weights_path(self) -> str:
        return os.path.join(self.cfg.out, f"{self.cfg.game}.npz")

    def meta(self) -> dict:
        return {"game": self.cfg.game, "options": self.cfg.options, "reward_scale": self.scale,
                "trainer": "exit", "seed": self.cfg.seed, "rollouts": self.cfg.rollouts,
                "train_minutes": round(self.counters["train_s"] / 60, 2),
                "decisions": self.counters["decisions"], "updates": self.counters["updates"],
                "iterations": self.counters["iterations"]}

    def export(self, path: Optional[str] = None) -> str:
        path = path or self.weights_path
        export_weights(self.net, path, self.meta())
        return path

    def _stamp(self) -> dict:
        """The counters that name the buffer's state (stored with it)."""
        return {k: self.counters[k] for k in ("iterations", "games", "decisions")}

    def save_checkpoint(self) -> str:
        """``OUT/checkpoint.pt`` and ``OUT/buffer.npz``: the buffer goes first to
        ``buffer.next.npz``, renamed once the checkpoint is written, so that a kill at any
        point leaves a checkpoint and a buffer of the same state (:meth:`_resume` takes the
        one whose stamp fits)."""
        out = self.cfg.out
        nxt = os.path.join(out, "buffer.next.npz")
        self.buffer.save(nxt, self._stamp())
        ck = {"config": asdict(self.cfg), "net": self.net.state_dict(),
              "opt": self.opt.state_dict(), "counters": dict(self.counters),
              "scale": self.scale, "rng": self.rng.bit_generator.state,
              "eval_history": self.eval_history,
              "expert_rng": getattr(self, "expert", None) and self.expert.rng.bit_generator.state}
        save_atomic(ck, self.ckpt_path)
        os.replace(nxt, os.path.join(out, "buffer.npz"))
        return self.ckpt_path

    def _resume(self) -> Optional[dict]:
        """Take the state of ``OUT/checkpoint.pt`` and its buffer (a ``ValueError``, nothing
        written, when either is missing, damaged or of other settings); returns the expert's
        random state."""
        cfg = self.cfg
        ck = load_checkpoint(cfg.out, cfg.game, cfg.options)
        settings, old_init = asdict(cfg), ck["config"].get("init")
        if (isinstance(old_init, str) and isinstance(cfg.init, str) and os.path.exists(old_init)
                and os.path.exists(cfg.init) and os.path.samefile(old_init, cfg.init)):
            settings["init"] = old_init  # the same file, named otherwise
        check_resume_settings(ck["config"], settings, RESUME_FREE, cfg.out)
        try:
            self.net.load_state_dict(ck["net"])
            self.opt.load_state_dict(ck["opt"])
            self.rng.bit_generator.state = ck["rng"]
            counters = {k: type(v)(ck["counters"][k]) for k, v in self.counters.items()}
            scale = float(ck["scale"])
            history = list(ck["eval_history"])
            expert_rng = ck["expert_rng"]
            np.random.default_rng(0).bit_generator.state = expert_rng  # one that fits
            bad = [k for k, v in counters.items() if not 0 <= v < float("inf")]
            if bad or not all(isinstance(r, dict) for r in history):
                raise ValueError(f"counters {bad} out of range" if bad else
                                 "evaluation rows that are no rows")
            if not 0 < abs(scale) < float("inf"):
                raise ValueError(f"reward scale {scale!r}")
        except (KeyError, TypeError, ValueError, RuntimeError, OverflowError) as e:
            raise ValueError(f"--resume: the checkpoint in {cfg.out!r} does not fit this run "
                             f"({type(e).__name__}: {e})") from None
        self.counters, self.scale, self.eval_history = counters, scale, history
        stamp, errors = self._stamp(), []
        for name in ("buffer.next.npz", "buffer.npz"):  # the newer first
            try:
                self.buffer.load(os.path.join(cfg.out, name), stamp)
                return expert_rng
            except ValueError as e:
                errors.append(str(e))
        raise ValueError(f"--resume: no buffer in {cfg.out!r} fits its checkpoint: "
                         + "; ".join(errors))

    # -- expert self-play ------------------------------------------------------------------------
    def play_game(self, stop: Optional[StopSignals] = None) -> int:
        """One expert self-play deal into the buffer; the number of decisions stored (0 when a
        stop signal cut the deal short: nothing of it is kept)."""
        deal = self._play(stop)
        return 0 if deal is None else self._keep(deal)

    def _play(self, stop: Optional[StopSignals] = None) -> Optional[dict]:
        """One expert self-play deal, kept out of the buffer (:meth:`_keep` stores it);
        ``None`` when a stop signal cut it short."""
        g, rng, ex = self.game, self.rng, self.expert
        s = g.new_state()
        deal = int(rng.integers(_SEED_MAX))
        obs = np.zeros(self.obs_dim, np.float32)
        rows = []  # (obs, cands, vals, played, seat, step index, neg)

        def choose(t: int, seat: int, legal: np.ndarray) -> int:
            a = ex.act_state(s.copy(), legal)
            if ex.last is not None:
                cands, vals = ex.last
                if rng.random() < self.cfg.explore:
                    a = int(cands[rng.integers(len(cands))])
                out = legal[~np.isin(legal, cands)]
                neg = int(out[rng.integers(len(out))]) if out.size else -1
                g.encode(s, seat, obs)
                rows.append((obs.copy(), cands, vals, a, seat, t, neg))
            return a

        played = play_deal(g, s, deal, choose, stop)
        if played is None:
            return None
        return {"seed": deal, "rows": rows, **played}

    def _keep(self, deal: dict) -> int:
        """Store a deal :meth:`_play` played in the buffer; the number of decisions stored."""
        rows, actions, rewards = deal["rows"], deal["actions"], deal["rewards"]
        # the seat's return from each decision on (the step's own reward included)
        R = np.cumsum(rewards[::-1], axis=0)[::-1]
        sc = self.scale
        for o, cands, vals, a, seat, t, neg in rows:
            self.buffer.add(o, cands, vals * sc, a, R[t, seat] * sc, neg)
        self.counters["games"] += 1
        self.counters["decisions"] += len(rows)
        #: the latest deal: its seed, every action and the step of each stored decision
        self.last_game = {"seed": deal["seed"], "actions": actions, "steps": [r[5] for r in rows],
                          "seats": [r[4] for r in rows]}
        return len(rows)

    # -- learning --------------------------------------------------------------------------------
    def update(self) -> float:
        """One Adam step on a batch from the buffer; returns the loss."""
        b = self.buffer
        idx = b.sample(self.rng, self.cfg.batch)
        cands = b.cands[idx]
        valid = cands >= 0
        B = len(idx)
        rows_c, cols_c = np.nonzero(valid)
        ids_c = cands[rows_c, cols_c]
        tgt_c = b.vals[idx][rows_c, cols_c]
        has_neg = b.neg[idx] >= 0
        rows_n = np.flatnonzero(has_neg)
        ids = np.concatenate([ids_c, b.played[idx], b.neg[idx][rows_n]])
        owner = np.concatenate([rows_c, np.arange(B), rows_n])
        feats = torch.from_numpy(self.game.action_features(ids))
        obs = torch.from_numpy(b.obs[idx].astype(np.float32))
        q = self.net(obs, feats, torch.from_numpy(owner))
        nc = len(ids_c)
        q_c, q_p, q_n = q[:nc], q[nc:nc + B], q[nc + B:]
        vals = torch.from_numpy(tgt_c)
        # values: Q of every candidate on its search value, Q of the move played on the return
        loss = F.mse_loss(q_c, vals)
        loss = loss + self.cfg.value_weight * F.mse_loss(q_p, torch.from_numpy(b.ret[idx]))
        # policy: softmax(Q / tau) over the candidates and the left-out action against
        # softmax(search value / tau) over the candidates (the left-out action: 0)
        tau = self.cfg.temperature
        W = MAX_CANDS + 1
        logits = torch.full((B, W), -1e9)
        logits = logits.index_put((torch.from_numpy(rows_c), torch.from_numpy(cols_c)), q_c / tau)
        if len(rows_n):
            logits = logits.index_put((torch.from_numpy(rows_n),
                                       torch.full((len(rows_n),), MAX_CANDS)), q_n / tau)
        target = torch.full((B, W), -1e9)
        target = target.index_put((torch.from_numpy(rows_c), torch.from_numpy(cols_c)), vals / tau)
        p = torch.softmax(target, 1)
        ce = -(p * torch.log_softmax(logits, 1)).sum(1).mean()
        loss = loss + self.cfg.policy_weight * ce
        optimizer_step(self, loss, 10.0)
        return float(loss.detach())

    # -- evaluation ------------------------------------------------------------------------------
    def evaluate(self, deadline: Optional[float] = None) -> list[dict]:
        """The greedy network alone against each ``eval_agents`` agent over ``eval_deals``
        duplicate deals (fewer when ``deadline`` comes first; dropped on a stop signal)."""
        cfg = self.cfg
        rows = evaluate_network(self, deadline, max(1, min(25, cfg.eval_deals // 2)),
                                ("iterations", "decisions", "updates"), f"{cfg.game} (ExIt)",
                                tag="exit")
        for r in rows:
            print(f"[exit] {cfg.game} iteration {r['iterations']}, {r['train_s'] / 60:.1f} min: "
                  f"network vs {r['opponent']} {r['diff']:+.2f} ± {r['diff_ci']:.2f} per deal "
                  f"({r['deals']} deals), win rate {r['win_rate']:.2f}", flush=True)
        return rows

    # -- the loop --------------------------------------------------------------------------------
    def run(self) -> dict:
        """Iterate within ``cfg.minutes`` (module docstring); returns the counters, the final
        evaluation, the files and ``"stopped"`` (the signal's name, or ``None``)."""
        return run_session(self)

    def _run(self, stop: StopSignals) -> dict:
        cfg = self.cfg
        t_start = time.perf_counter()
        deadline = t_start + 60.0 * cfg.minutes
        write_config(cfg)
        if not self.eval_history:
            self.evaluate(deadline=t_start + 0.2 * 60.0 * cfg.minutes)
        base_s = self.counters["train_s"]
        t0 = last_eval = time.perf_counter()
        evaluated_at = self.counters["updates"]
        it_s = 0.0  # the last iteration's seconds: one that would not fit is not started
        bar = SessionBar(cfg.progress, 60 * cfg.minutes, f"exit {cfg.game}", t_start)
        while stop.signum is None:
            now = time.perf_counter()
            reserve = 1.2 * self._eval_s + 2.0
            if now + it_s >= deadline - reserve:
                break
            if cfg.max_iterations and self.counters["iterations"] >= cfg.max_iterations:
                break
            done = self.iteration(stop, deadline - reserve)
            if done is None:  # a signal or the session's end in the deals: dropped
                break
            it_s = time.perf_counter() - now
            self.counters["train_s"] = base_s + (time.perf_counter() - t0)
            self.export()
            self.expert.set_weights(self.weights_path)
            append_csv(os.path.join(cfg.out, "log.csv"), [{
                "iteration": self.counters["iterations"],
                "train_s": round(self.counters["train_s"], 1), "games": self.counters["games"],
                "decisions": self.counters["decisions"], "updates": self.counters["updates"],
                "loss": round(self.loss, 5),
                "searched_dec_per_s": round(done["decisions"] / max(done["play_s"], 1e-9), 1)}])
            bar.postfix(it=self.counters["iterations"], dec=self.counters["decisions"],
                        loss=f"{self.loss:.4f}")
            bar.tick()
            if (time.perf_counter() - last_eval >= cfg.eval_interval_s()
                    and time.perf_counter() + 2 * reserve < deadline):
                self.evaluate(deadline=deadline - reserve)
                last_eval, evaluated_at = time.perf_counter(), self.counters["updates"]
            # after the iteration's rows and evaluation: a resume keeps exactly those
            self.save_checkpoint()
        bar.close()
        self.counters["train_s"] = base_s + (time.perf_counter() - t0)
        final = []
        if stop.signum is None and self.counters["updates"] != evaluated_at:
            final = self.evaluate(deadline=deadline - 1.0)
        return end_session(self, "exit", stop, t_start, final)

    def iteration(self, stop: Optional[StopSignals] = None,
                  until: Optional[float] = None) -> Optional[dict]:
        """One iteration: ``cfg.games`` expert deals, then ``cfg.updates`` updates.  A stop
        signal during the deals, or the clock (``time.perf_counter()``) past ``until`` before
        one starts, drops the iteration: the buffer, counters and random states stay as they
        were (the iteration is played the same again later), and ``None`` is returned.
        Otherwise ``{"decisions": stored, "play_s": seconds of the deals}``."""
        rng0 = self.rng.bit_generator.state
        expert0 = self.expert.rng.bit_generator.state
        t = time.perf_counter()
        deals = []
        for _ in range(self.cfg.games):
            if (stop is not None and stop.signum is not None) or \
                    (until is not None and time.perf_counter() >= until):
                deals = None
                break
            deal = self._play(stop)
            if deal is None:
                deals = None
                break
            deals.append(deal)
        if deals is None:
            self.rng.bit_generator.state = rng0
            self.expert.rng.bit_generator.state = expert0
            return None
        stored = sum(self._keep(d) for d in deals)
        play_s = time.perf_counter() - t
        if self.buffer.n:
            losses = [self.update() for _ in range(self.cfg.updates)]
            self.loss = float(np.mean(losses)) if losses else self.loss
        self.counters["iterations"] += 1
        return {"decisions": stored, "play_s": play_s}


# ---------------------------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    d = ExitConfig(game="")
    p = run_parser("exit", __doc__, d.minutes, d.seed,
                   covers="expert self-play, learning, evaluations, checkpoints and export")
    p.add_argument("--hidden", default=",".join(map(str, d.hidden)), help="hidden layer sizes")
    p.add_argument("--lr", type=float, default=d.lr)
    p.add_argument("--batch", type=int, default=d.batch)
    p.add_argument("--rollouts", type=int, default=d.rollouts, help="search rollouts per decision")
    p.add_argument("--candidates", type=int, default=d.candidates,
                   help="rollout-policy candidates per decision")
    p.add_argument("--net-candidates", type=int, default=d.net_candidates,
                   help="network-ranked candidates added per decision")
    p.add_argument("--games", type=int, default=d.games, help="expert deals per iteration")
    p.add_argument("--updates", type=int, default=d.updates, help="updates per iteration")
    p.add_argument("--buffer", type=int, default=d.buffer, help="decisions kept for learning")
    p.add_argument("--value-weight", type=float, default=d.value_weight,
                   help="weight of the return regression of the move played")
    p.add_argument("--policy-weight", type=float, default=d.policy_weight,
                   help="weight of the cross-entropy against softmax(search values / T)")
    p.add_argument("--temperature", type=float, default=d.temperature,
                   help="T of the policy targets, in scaled return units")
    p.add_argument("--explore", type=float, default=d.explore,
                   help="chance of playing a random candidate instead of the search's choice")
    p.add_argument("--reward-scale", default="auto")
    p.add_argument("--init", default=None, metavar="NPZ",
                   help="start from this weight file (e.g. agents/weights/GAME.npz; its hidden "
                        "sizes and reward scale are used)")
    p.add_argument("--eval-agents", default=",".join(d.eval_agents))
    p.add_argument("--eval-deals", type=int, default=d.eval_deals)
    p.add_argument("--eval-minutes", type=float, default=None)
    add_iteration_args(p, d.threads, "stop once the run has made this many iterations, "
                                      "resumed sessions included (0: no limit)")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    a = build_parser().parse_args(argv)
    hidden = parse_hidden(a.hidden)
    if a.init is not None:
        try:
            hidden = tuple(agents_module("trained").QNetwork(a.init).meta["hidden"])
        except ValueError as e:
            print(f"python -m train.exit: {e}", file=sys.stderr)
            return 2
    cfg = ExitConfig(
        game=a.game, options=dict(a.option), out=a.out or f"runs/exit_{a.game}",
        minutes=a.minutes, seed=a.seed, hidden=hidden, init=a.init,
        lr=a.lr, batch=a.batch, rollouts=a.rollouts, candidates=a.candidates,
        net_candidates=a.net_candidates, games=a.games, updates=a.updates, buffer=a.buffer,
        value_weight=a.value_weight, policy_weight=a.policy_weight,
        temperature=a.temperature, explore=a.explore,
        reward_scale=parse_scale(a.reward_scale),
        eval_agents=parse_names(a.eval_agents), eval_deals=a.eval_deals,
        eval_minutes=a.eval_minutes, threads=a.threads, max_iterations=a.max_iterations,
        progress=not a.no_progress)
    return run_command("exit", lambda: ExIt(cfg, resume=a.resume).run())


if __name__ == "__main__":
    raise SystemExit(main())
