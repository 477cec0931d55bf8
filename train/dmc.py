"""Deep Monte-Carlo (DouZero-style) self-play learner for every cardenvs game.

The learner fits ``Q(observation, action) ~ return of the acting seat`` with mean squared error
on Monte-Carlo targets, and plays epsilon-greedy on Q.  Nothing in this file knows a game: it
drives any :class:`cardenvs.core.game.Game` through its methods (``new_state``, ``reset``,
``legal``, ``step``, ``encode``, ``rewards``, ``done``, ``current``, ``action_features``).

* **Network**: an MLP over ``[observation of the seat to move, feature row of one action]``
  (:meth:`Game.action_features`).  Its first layer is applied split: the observation part once
  per position, the action part once per legal action (the same function as one linear layer
  over the concatenation, far cheaper when a position has hundreds of legal plays).
* **Self-play** (``--engine vector``, the default): ``--envs`` games on the self-play data
  engine :class:`train.selfplay.SelfPlay` (the batched numba engine ``VectorGame``; the
  observations, action features, exploration, per-seat returns and targets in numba): each
  step scores every game's legal actions in one batched forward pass per network (positions
  with one legal action are played without the network and not learned from).  With
  ``--actors K`` the self-play runs in ``K`` separate processes (:class:`train.selfplay.ActorPool`,
  shared-memory copies of the network refreshed at most every ``--sync-seconds``: 0.1 s,
  0 for after every update) and this process only learns; the run is then not
  bit-reproducible (the batches' order depends on timing).
  ``--backend ray`` runs the actors as Ray core actors instead (:mod:`train.ray_actors`: one
  machine or a cluster, ``--ray-address``).  ``--engine lockstep`` is the former path, kept as
  the comparison baseline: the games stepped one by one from Python
  (``Game.legal``/``step``/``encode`` per game).  ``--act-dtype bfloat16`` scores self-play's
  moves with the layers after the first in bfloat16 (:class:`FactoredScorer`; the learner's
  dtype is ``--train-dtype``): on CPUs with bfloat16 dot products (AVX512-BF16, AMX) the
  matmuls run about 3x as fast (``benchmarks/selfplay.md``); on others it is slower.
  ``--act-dtype int8`` scores them with integer matmuls (:mod:`train.quant`: int8 activations with a scale per
  scored action, int8 weights with a scale per output channel; CPU only): about twice
  bfloat16's matmul rate with AVX512-VNNI, scores within 3% of float32's spread (the most
  measured on shipped networks: 2.7%).  ``--train-dtype bfloat16`` runs the learner's
  forward under ``torch.autocast`` (the weights, Adam and the loss stay float32): an update
  took 7.8 ms instead of 16.4 on a CPU with AMX.  Adam is fused (``train.common.make_adam``).
* **Warm start** (``--init FILE``): the network starts from the weights of a ``train.dmc``
  weight file of the same shape (e.g. a shipped network-only agent) and trains with its
  reward scale; the exported file's ``train_minutes`` counts this run only.
* **Exploration**: epsilon-greedy with Ape-X-style rates per game slot
  (``eps ** (1 + eps_alpha * i / (envs - 1))``: from ``eps`` down to ``eps ** (1 + eps_alpha)``).
* **Targets**: the acting seat's return from its decision on (the sum of the rewards it is paid
  by that step and every later one, so a match paying each hand mid-episode is handled), times
  ``reward_scale`` (``auto``: one over the mean absolute return of random play).
* **Teacher mode** (``--teacher NAME``, any registered agent, e.g. ``rules``): every seat is
  played by the teacher agent, except that at each decision the acting seat takes a uniformly
  random legal action with probability ``--teacher-eps`` and (``--teacher-mix p``) the
  network's greedy action with probability ``p`` of the rest.  Every decision with 2+ legal
  actions is learned from with the same Monte-Carlo targets, so the network estimates ``Q`` of
  the (slightly randomised) teacher policy and its greedy policy is one step of policy
  improvement over the teacher.  The teacher phase lasts the whole run, or until
  ``--teacher-minutes`` of training time / ``--teacher-updates`` updates (counted over every
  session of the run); then the normal self-play / pool mode continues from the learned
  network.  ``--resume`` takes the teacher settings from the command line, so a run also
  switches mode by being resumed with other flags.  The teacher is called batched
  (``act_batch``) when its class vectorises it, else once per game.  Greedy-over-Q alone
  overrates the actions the teacher rarely takes (the teacher bids 3 only with strong hands,
  so "bid 3" looks good); ``--teacher-margin m`` adds the large-margin loss of DQfD on the
  teacher's decisions (``relu(Q(s, b) + m - Q(s, teacher))`` for the network's greedy action
  and one random other action ``b``, weighted by ``--teacher-margin-weight``), so the greedy
  policy keeps the teacher's action unless the returns of explored actions say otherwise.
* **Replay** (``--replay R``, off by default): each fresh batch is followed by ``R - 1``
  updates on batches drawn from a buffer of the latest ``--replay-size`` samples, for runs
  whose samples cost more than an update (teacher mode).
* **Opponent pool**: every ``--refresh`` updates a frozen snapshot of the network joins a pool
  (at most ``--pool-size``) and the active opponent is redrawn from it; a ``--pool-frac``
  share of the games seat the learner at one random seat and the active snapshot at the others
  (only the learner's decisions are learned from).  The other games are pure self-play.
* **Evaluation**: every ``--eval-minutes`` the greedy network plays ``--eval-deals`` deals
  against each agent of ``--eval-agents`` duplicate-style (each deal once per seat, the
  network at that seat, the agent at the others); the mean score and win rate with 95%
  confidence intervals go to ``eval.csv`` and ``eval.png``.
* **Output dir** (``--out``): ``checkpoint.pt`` (network, optimizer, pool, RNG states, counters,
  evaluation history; ``--resume`` continues from it; games in flight are not saved, the
  resumed run deals fresh ones), ``log.csv``, ``eval.csv``, ``eval.png``, TensorBoard events
  when ``tensorboard`` is installed, and ``GAME.npz``: the numpy weights of
  :mod:`agents.trained` (copy to ``agents/weights/GAME.npz`` to ship them).

* **Time and stopping**: ``--minutes`` is the wall-clock budget of the session, everything
  included (evaluations are played in chunks up to the deadline, and the loop stops early
  enough for the final one); SIGTERM or Ctrl-C ends the session with a checkpoint (exit status
  128 + the signal), as does the first update of a session; ``--resume`` drops the rows of
  ``log.csv`` / ``eval.csv`` logged after the checkpoint it continues from.

Run ``python -m train.dmc GAME --minutes 10 --out runs/GAME``; ``--help`` lists every option.

The run is split by responsibility: :mod:`train.dmc_config` (:class:`Config` and its checks),
:mod:`train.dmc_net` (:class:`QNet`, :class:`FactoredScorer`, :class:`TorchPolicy`,
:func:`export_weights`), :mod:`train.dmc_eval` (duplicate-deal evaluation),
:mod:`train.dmc_learner` (the update, replay and opponent pool), :mod:`train.dmc_selfplay`
(self-play and teacher mode) and :mod:`train.dmc_trainer` (:class:`DMC`: the run's setup,
files and main loop); this module is the command line and the names other code imports.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Optional, Sequence

from .common import TRAIN_DTYPES, finish, parse_hidden, parse_names, parse_scale, run_parser
from .dmc_config import ACT_DTYPES, SYNC_SECONDS, Config, act_dtype, check_config
from .dmc_eval import duplicate_returns, evaluate_against, make_eval_agent, summarize
from .dmc_learner import random_return_scale
from .dmc_net import FactoredScorer, QNet, TorchPolicy, export_weights
from .dmc_selfplay import exploration_rates
from .dmc_trainer import DMC

__all__ = [
    "ACT_DTYPES", "SYNC_SECONDS", "Config", "act_dtype", "check_config", "QNet", "FactoredScorer",
    "TorchPolicy", "export_weights", "make_eval_agent", "duplicate_returns", "summarize",
    "evaluate_against", "random_return_scale", "exploration_rates", "DMC", "build_parser",
    "config_from_args", "main",
]


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``python -m train.dmc`` (every :class:`Config` setting)."""
    d = Config(game="")
    p = run_parser("dmc", __doc__, d.minutes, d.seed,
                   covers="the first and final evaluations, training with its periodic "
                          "evaluations and checkpoints, the final checkpoint and export")
    p.add_argument("--envs", type=int, default=d.envs, help="games stepped in lockstep")
    p.add_argument("--hidden", default=",".join(map(str, d.hidden)), help="hidden layer sizes")
    p.add_argument("--lr", type=float, default=d.lr)
    p.add_argument("--batch", type=int, default=d.batch)
    p.add_argument("--eps", type=float, default=d.eps,
                   help="exploration: game slot i of N explores with eps^(1 + alpha i/(N-1))")
    p.add_argument("--eps-alpha", type=float, default=d.eps_alpha,
                   help="spread of the per-slot exploration rates (0: every slot uses --eps)")
    p.add_argument("--pool-size", type=int, default=d.pool_size)
    p.add_argument("--pool-frac", type=float, default=d.pool_frac, help="share of games vs a snapshot")
    p.add_argument("--refresh", type=int, default=d.refresh, help="updates between pool snapshots")
    p.add_argument("--reward-scale", default="auto")
    p.add_argument("--eval-agents", default=",".join(d.eval_agents))
    p.add_argument("--eval-deals", type=int, default=d.eval_deals)
    p.add_argument("--eval-minutes", type=float, default=None, help="default: budget/6 in [0.5, 15]")
    p.add_argument("--ckpt-minutes", type=float, default=d.ckpt_minutes)
    p.add_argument("--log-seconds", type=float, default=d.log_seconds, help="seconds between log rows")
    p.add_argument("--device", default=d.device, help="auto (CUDA when present), cpu, cuda")
    p.add_argument("--threads", type=int, default=d.threads,
                   help="torch threads (0: torch's default; 1 is fastest on a shared 2-core machine)")
    p.add_argument("--max-updates", type=int, default=0, help="stop after this many updates (0: none)")
    p.add_argument("--teacher", default=None,
                   help="behaviour policy at every seat: this registered agent (e.g. rules); "
                        "'none' for self-play")
    p.add_argument("--teacher-eps", type=float, default=d.teacher_eps,
                   help="teacher mode: chance of a uniformly random legal action at a decision")
    p.add_argument("--teacher-mix", type=float, default=d.teacher_mix,
                   help="teacher mode: chance (of the non-random decisions) of the network's greedy action")
    p.add_argument("--teacher-minutes", type=float, default=None,
                   help="teacher mode for the first M training minutes of the run, then self-play")
    p.add_argument("--teacher-updates", type=int, default=0,
                   help="teacher mode for the first U updates of the run, then self-play (0: no limit)")
    p.add_argument("--teacher-margin", type=float, default=d.teacher_margin,
                   help="teacher mode: large-margin loss (DQfD) keeping the teacher's action this much "
                        "above the alternatives unless the returns say otherwise (0: off)")
    p.add_argument("--teacher-margin-weight", type=float, default=d.teacher_margin_weight,
                   help="weight of the large-margin loss")
    p.add_argument("--replay", type=int, default=d.replay,
                   help="updates per fresh batch: R > 1 adds R-1 updates on batches drawn from a "
                        "replay buffer of the latest samples (for costly samples, e.g. teacher mode)")
    p.add_argument("--replay-size", type=int, default=d.replay_size, help="replay buffer size (samples)")
    p.add_argument("--engine", default=d.engine, choices=("vector", "lockstep"),
                   help="self-play on the data engine (train.selfplay, default) or the former "
                        "per-game Python loop (the comparison baseline)")
    p.add_argument("--act-dtype", default=d.act_dtype, choices=ACT_DTYPES,
                   help="dtype self-play scores in: float32, or bfloat16 for the layers after "
                        "the first (about 3x the matmul rate on CPUs with AVX512-BF16 or AMX, "
                        "slower on others), or int8 (integer matmuls, train.quant: about 2x "
                        "bfloat16's rate with AVX512-VNNI; CPU only); the learner: --train-dtype")
    p.add_argument("--train-dtype", default=d.train_dtype, choices=TRAIN_DTYPES,
                   help="the learner's forward matmuls: float32, or bfloat16 (torch.autocast; the "
                        "weights, Adam and the loss stay float32): about 2x the update rate on "
                        "CPUs with AMX or AVX512-BF16, slower on others")
    p.add_argument("--actors", type=int, default=d.actors,
                   help="self-play in this many separate processes (0: in this process)")
    p.add_argument("--sync-seconds", type=float, default=d.sync_seconds,
                   help="the actors get the learner's weights at most every this many seconds "
                        "(0: after every update; default: 0.1 with --backend process, 1 with ray)")
    p.add_argument("--backend", default=d.backend, choices=("process", "ray"),
                   help="where the --actors run: local processes, or Ray actors (train.ray_actors: "
                        "one machine or a cluster)")
    p.add_argument("--ray-address", default=None,
                   help="with --backend ray: the cluster to join (e.g. auto after `ray start`); "
                        "default: a local Ray instance")
    p.add_argument("--init", default=None, metavar="NPZ",
                   help="warm start: the network's weights (and reward scale) from a weight file "
                        "of train.dmc (e.g. agents/weights/wakeng.npz)")
    p.add_argument("--export", default=None, help="also write the final weights here")
    p.add_argument("--no-progress", action="store_true")
    return p


def config_from_args(a: argparse.Namespace) -> Config:
    """The :class:`Config` of parsed :func:`build_parser` arguments."""
    return Config(
        game=a.game, options=dict(a.option), out=a.out or os.path.join("runs", f"dmc_{a.game}"),
        minutes=a.minutes, seed=a.seed, envs=a.envs,
        hidden=parse_hidden(a.hidden), lr=a.lr, batch=a.batch,
        eps=a.eps, eps_alpha=a.eps_alpha, pool_size=a.pool_size, pool_frac=a.pool_frac, refresh=a.refresh,
        reward_scale=parse_scale(a.reward_scale), eval_agents=parse_names(a.eval_agents),
        eval_deals=a.eval_deals, eval_minutes=a.eval_minutes, ckpt_minutes=a.ckpt_minutes, log_seconds=a.log_seconds,
        device=a.device, threads=a.threads, max_updates=a.max_updates, progress=not a.no_progress,
        teacher=None if a.teacher in (None, "", "none") else a.teacher, teacher_eps=a.teacher_eps,
        teacher_mix=a.teacher_mix, teacher_minutes=a.teacher_minutes, teacher_updates=a.teacher_updates,
        teacher_margin=a.teacher_margin, teacher_margin_weight=a.teacher_margin_weight,
        replay=a.replay, replay_size=a.replay_size, engine=a.engine, actors=a.actors, init=a.init,
        backend=a.backend, ray_address=a.ray_address, act_dtype=a.act_dtype,
        train_dtype=a.train_dtype, sync_seconds=a.sync_seconds)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m train.dmc``: one training session; prints its result as JSON and returns
    the exit status (2 for bad settings, 128 + the signal that stopped it)."""
    a = build_parser().parse_args(argv)
    try:
        cfg = config_from_args(a)
        trainer = DMC(cfg, resume=a.resume)
    except (ValueError, TypeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    res = trainer.run()
    if a.export:
        trainer.export(a.export)
    return finish(res, "eval")


if __name__ == "__main__":
    sys.exit(main())
