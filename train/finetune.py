"""Policy-gradient fine-tuning of a network-only weight file against a fixed opponent: the
network plays whole deals against the engine's rule-based rollout policy, and learns from the
score it makes, not from a teacher's moves.

Imitation (``train.distill``) copies a teacher and stays below it; this trainer improves the
network on the score itself.  Each **iteration**:

1. **Groups of the same deal.**  ``--deals`` new deals; every deal is played ``--group`` (K)
   times from the same cards in each *lineup* (``--lineups single``: the network at one seat,
   every seat in turn; ``all``: also at every other set of seats an arena of two agents gives
   it, e.g. two seats of three), the other seats played by the rollout policy of
   :meth:`cardenvs.vector.VectorGame.rollout` (``"heuristic"``: the ``rules`` agent's card play
   in numba, deterministic), or by a network opponent (``--opponents``: each iteration the
   next of the list, in turn: ``heuristic``, that policy; ``init``, the starting file;
   ``self``, the network's latest snapshot, taken every ``--eval-every`` iterations; or any
   network-only file of the game; a network opponent plays its best-scored move).  The
   network *samples* its actions from ``softmax(scores / T)``
   over the legal ones (``--temperature`` T), so the K copies of a deal differ only by its own
   choices.  All games of a lineup run together in numba; the network scores every waiting
   game in one batch.
2. **Advantages.**  Each copy's score at a seat minus the mean score of the other K - 1 copies
   of the same deal and seat (leave-one-out): the luck of the cards cancels and what is left
   is what the network's choices made of them.  Every decision the network made at that seat
   gets that advantage, divided by the standard deviation over the iteration's decisions.
3. **Learning.**  ``--epochs`` passes in minibatches of ``--minibatch`` decisions over the
   iteration's decisions, with the clipped surrogate of PPO (``--clip``; the ratio of the
   current to the sampling policy's probability of the action taken), Adam (``--lr``), the
   gradient's norm clipped at 1; ``--train-dtype bfloat16`` runs the forward's matmuls in
   bfloat16 (``torch.autocast``; the weights, Adam and the loss in float32): the update took
   2.2x less time on this machine's CPU, which has bfloat16 instructions.  ``--device cuda``
   (or ``auto``: CUDA when available) runs the update on the GPU; the games are played by
   the network's copy on the CPU, which takes the new weights after each update.

**Evaluation** (every ``--eval-every`` iterations and at the end): the greedy network against
the rollout policy, and against each weight file of ``--opponents`` (not ``self``), on
``--eval-deals`` fixed deals, in the lineups ``cardenvs arena`` plays with two agents (per
deal the network's mean seat score minus the opponent's): ``eval.csv`` (a row per opponent)
and ``eval.png``; the weights are written then (``OUT/GAME.npz``, and a copy per evaluation
in ``OUT/snapshots/``).  The opponent of the arena's reference
numbers is the ``rules`` agent, which this opponent approximates; measure a file against it
with ``cardenvs arena GAME --agents trained:OUT/GAME.npz,rules``.

**Stopping**: ``--minutes`` bounds the session; SIGTERM / Ctrl-C stop at the next lineup's
games (the iteration's games are dropped) or after the iteration's update (a few seconds),
then write the checkpoint and the weights (exit status 128 + signal); ``--resume`` continues
from ``OUT/checkpoint.pt`` exactly as if never stopped (a dropped iteration is redone).  A
checkpoint is also written at every evaluation, so a run killed outright (SIGKILL) resumes from
its latest one: the rows of ``log.csv`` / ``eval.csv`` of later iterations are dropped and
those iterations played again.  Same seed, settings and machine: the same weights at every
iteration, and a stopped and resumed run ends with the iterations, rows and weights of one
never stopped (``--max-iterations`` counts the run's iterations in all, resumed sessions
included, and makes a run's length independent of the machine's speed).  ``--resume`` takes
the checkpoint's settings: another game, option or setting than ``--minutes``, ``--threads``,
``--max-iterations`` and ``--no-progress`` is refused, and nothing is written.

Measured (``docs/training/distill.md``, Wakeng): from the 76-minute distilled file (+5.55 a
deal against ``rules``, 2,000 duplicate deals, seed 0), 78 minutes on one core made the
shipped ``wakeng_network.npz``, +11.27, which loses to the file it started from head to head
(-1.20): the network learns to beat the opponent it plays, the rollout policy.  From the
same start, ``--opponents heuristic,init,heuristic,self --train-dtype bfloat16`` for 900
iterations (37 minutes) made ``wakeng_mixed.npz``: +6.34 against ``rules``, but +2.53 head to
head with ``wakeng_network.npz`` and +1.48 with the file it started from.

Run ``python -m train.finetune GAME --init agents/weights/GAME_network.npz --minutes 30``.
"""

from __future__ import annotations

import argparse
import copy
import os
import shutil
import sys
import time
from dataclasses import asdict, dataclass
from typing import Optional, Sequence

import numpy as np
import torch

from cardenvs.api import GAMES, make_game
from cardenvs.arena import agents_module, mean_ci, one_blas_thread, rotate_lineups, solo_lineups
from cardenvs.core.state import LANDLORD, P_PLAY, PHASE
from cardenvs.vector import VectorGame

from .common import (
    TRAIN_DTYPES, SessionBar, StopSignals, add_iteration_args, append_csv, check_resume_settings,
    check_train_dtype, end_session, learner_autocast, load_checkpoint, load_numpy_weights,
    plot_eval, run_command, run_parser, run_session, save_atomic, select_device, truncate_csv,
    write_config,
)
from .dmc import QNet, export_weights

_trained = agents_module("trained")
segment_argmax, segment_starts = _trained.segment_argmax, _trained.segment_starts

#: the rollout policy the opponents play (:meth:`cardenvs.vector.VectorGame.rollout`)
OPPONENT = "heuristic"
#: the seed of the evaluation deals is ``EVAL_SEED + seed``
EVAL_SEED = 10**9 + 7
LINEUPS = ("single", "all")
#: the opponents besides a weight file's path (``--opponents``)
OPPONENT_NAMES = (OPPONENT, "init", "self")


def opponent_list(spec: str) -> list[str]:
    """The opponents of ``--opponents`` (comma-separated; an iteration plays the next one in
    turn, so a name given twice plays twice as many iterations): ``heuristic`` (the engine's
    rollout policy), ``init`` (the starting file, greedy), ``self`` (the network as of its
    last snapshot, every ``eval_every`` iterations; greedy) or the path of a network-only
    weight file of the game (greedy)."""
    if not isinstance(spec, str):
        raise TypeError(f"opponents must be a str such as 'heuristic,init', got {type(spec).__name__}")
    out = [x.strip() for x in spec.split(",")]
    for x in out:
        if x not in OPPONENT_NAMES and not (x.endswith(".npz") and os.path.isfile(x)):
            raise ValueError(f"opponents: {x!r} is none of {', '.join(OPPONENT_NAMES)} and no "
                             f"weight file (.npz) that exists")
    return out


#: the settings a resumed run may change (:func:`train.common.check_resume_settings`): the
#: session's budget, its threads and device, the run's length and the progress bar
RESUME_FREE = ("minutes", "threads", "max_iterations", "progress", "out", "device")


@dataclass
class FinetuneConfig:
    """Every setting of a fine-tuning run (stored in the checkpoint)."""

    game: str
    init: str
    options: Optional[dict] = None
    out: str = "runs/finetune"
    minutes: float = 30.0
    seed: int = 0
    deals: int = 32
    group: int = 8
    lineups: str = "single"
    lr: float = 1e-4
    temperature: float = 1.0
    clip: float = 0.2
    epochs: int = 2
    minibatch: int = 2048
    eval_deals: int = 1000
    eval_every: int = 25
    threads: int = 1
    max_iterations: int = 0
    opponents: str = "heuristic"
    train_dtype: str = "float32"
    #: where the update learns (:func:`train.common.select_device`; the games are played by
    #: the network's copy on the CPU)
    device: str = "cpu"
    progress: bool = True


def _check(cfg: FinetuneConfig) -> None:
    if cfg.game not in GAMES:
        raise ValueError(f"unknown game {cfg.game!r}; known games: {', '.join(GAMES)}")
    if not isinstance(cfg.init, str) or not os.path.exists(cfg.init):
        raise ValueError(f"--init: no weight file at {cfg.init!r} (a network-only file, e.g. "
                         f"agents/weights/{cfg.game}_network.npz)")
    for name, low in (("deals", 1), ("group", 2), ("epochs", 1), ("minibatch", 1),
                      ("eval_every", 1), ("threads", 1), ("eval_deals", 0), ("max_iterations", 0)):
        v = getattr(cfg, name)
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
            raise ValueError(f"{name} must be an int >= {low}, got {v!r}")
    if cfg.eval_deals == 1:
        raise ValueError("eval_deals must be 0 (no evaluation) or >= 2 (for an interval)")
    if cfg.lineups not in LINEUPS:
        raise ValueError(f"lineups must be one of {LINEUPS}, got {cfg.lineups!r}")
    check_train_dtype(cfg.train_dtype)
    select_device(cfg.device)
    opponent_list(cfg.opponents)
    for name in ("lr", "temperature", "clip", "minutes"):
        v = getattr(cfg, name)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
            raise ValueError(f"{name} must be a number > 0, got {v!r}")


def lineups(n_players: int, which: str = "all") -> list[tuple[int, ...]]:
    """The sets of seats the network holds: ``single``: each seat alone, in seat order;
    ``all``: those and every set an arena of two agents gives one of them
    (:func:`cardenvs.arena.rotate_lineups`), by size; sets larger than the opponent's ordered
    by the opponent's seats (with three seats: ``(0,) (1,) (2,) (1, 2) (0, 2) (0, 1)``)."""
    singles = [(s,) for s in range(n_players)]
    if which == "single":
        return singles
    sets = {tuple(s for s, a in enumerate(lu) if a == 0) for lu in rotate_lineups(2, n_players)}
    sets = (sets | set(singles)) - {(), tuple(range(n_players))}

    def key(lu):
        rest = tuple(s for s in range(n_players) if s not in lu)
        return (len(lu), lu if len(lu) <= len(rest) else rest)

    return sorted(sets, key=key)


def leave_one_out(returns: np.ndarray) -> np.ndarray:
    """``returns [D, K, ...]`` (K >= 2 copies of each deal) minus the mean of the other K - 1
    copies of the same deal: the advantage of each copy."""
    K = returns.shape[1]
    return returns - (returns.sum(1, keepdims=True) - returns) / (K - 1)


def segment_log_softmax(q: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """``log softmax`` of ``q`` within consecutive segments of ``sizes`` (all >= 1)."""
    starts = segment_starts(sizes)
    mx = np.maximum.reduceat(q, starts)
    e = np.exp(q - np.repeat(mx, sizes))
    s = np.add.reduceat(e, starts)
    return q - np.repeat(mx + np.log(s), sizes)


def sample_segments(p: np.ndarray, sizes: np.ndarray, u: np.ndarray) -> np.ndarray:
    """For each segment of ``p`` (probabilities, ``sizes`` long each), the index within it
    where its cumulative sum passes ``u * (its sum)``: a draw from the segment with the
    uniform ``u`` of that segment."""
    out = np.zeros(len(sizes), np.int64)
    a = 0
    for r, k in enumerate(sizes):
        seg = p[a:a + k]
        c = np.searchsorted(np.cumsum(seg), u[r] * seg.sum(), side="right")
        out[r] = min(c, k - 1)
        a += k
    return out


class NetworkSampler:
    """The network as a rollout agent (:meth:`VectorGame.rollout`'s ``agent``): samples from
    ``softmax(scores / temperature)`` (or plays the best-scored action with ``greedy``), and
    keeps every decision it made (``records``) with the game's slot and seat."""

    needs_slots = True

    def __init__(self, net: QNet, game, context=None, temperature: float = 1.0,
                 greedy: bool = False, rng: Optional[np.random.Generator] = None):
        self.net, self.game, self.context = net, game, context
        self.temperature, self.greedy = float(temperature), bool(greedy)
        self.rng = rng if rng is not None else np.random.default_rng(0)
        self.name = "network"
        self.clear()

    def clear(self) -> None:
        self.records: dict[str, list] = {k: [] for k in (
            "obs", "ids", "sizes", "ctx", "choice", "logp", "slot", "seat")}

    def act_batch(self, obs: np.ndarray, masks: np.ndarray, slots: Optional[np.ndarray] = None,
                  seats: Optional[np.ndarray] = None) -> np.ndarray:
        rows, ids = np.nonzero(masks)
        sizes = np.bincount(rows, minlength=len(masks))
        ctx = self.context(obs, ids, rows) if self.context is not None else None
        with torch.no_grad():
            q = self.net(torch.from_numpy(np.ascontiguousarray(obs, np.float32)),
                         torch.from_numpy(self.game.action_features(ids)), torch.from_numpy(rows),
                         None if ctx is None else
                         torch.from_numpy(np.ascontiguousarray(ctx, np.float32)))
        q = q.numpy().astype(np.float64)
        if self.greedy:
            return ids[segment_argmax(q, sizes)]
        starts = segment_starts(sizes)
        lp = segment_log_softmax(q / self.temperature, sizes)
        choice = sample_segments(np.exp(lp), sizes, self.rng.random(len(sizes)))
        R = self.records
        R["obs"].append(np.asarray(obs).astype(np.float16))
        R["ids"].append(ids)
        R["sizes"].append(sizes)
        R["ctx"].append(None if ctx is None else np.asarray(ctx, np.float32))
        R["choice"].append(choice)
        R["logp"].append(lp[starts + choice])
        R["slot"].append(np.array(slots, np.int64) if slots is not None else np.zeros(len(sizes), np.int64))
        R["seat"].append(np.array(seats, np.int64) if seats is not None else np.zeros(len(sizes), np.int64))
        return ids[starts + choice]


def new_deals(game, n: int, seed: int) -> np.ndarray:
    """``(n, S)`` states of ``n`` new deals (:meth:`VectorGame.reset` with ``seed``)."""
    vg = VectorGame(game, n, observe=False, auto_reset=False)
    vg.reset(seed=seed)
    return vg.states.copy()


class SeatSplit:
    """Two agents as one rollout agent: ``learner`` at ``seats``, ``other`` at the other
    seats (each any agent with ``act_batch(observations, masks)``, e.g. a ``trained`` agent;
    one that ``needs_slots``, such as :class:`NetworkSampler`, gets its slots and seats)."""

    needs_slots = True

    def __init__(self, learner, seats: Sequence[int], other):
        self.learner, self.seats, self.other = learner, np.asarray(tuple(seats), np.int64), other
        self.name = f"{learner.name} and {getattr(other, 'name', 'opponent')}"

    def act_batch(self, obs: np.ndarray, masks: np.ndarray, slots: np.ndarray,
                  seats: np.ndarray) -> np.ndarray:
        mine = np.isin(seats, self.seats)
        acts = np.zeros(len(obs), np.int64)
        for agent, rows in ((self.learner, mine), (self.other, ~mine)):
            if rows.any():
                kw = ({"slots": slots[rows], "seats": seats[rows]}
                      if getattr(agent, "needs_slots", False) else {})
                acts[rows] = agent.act_batch(obs[rows], masks[rows], **kw)
        return acts


def play_lineup(vg: VectorGame, states: np.ndarray, agent, seats: Sequence[int], copies: int,
                seed: int, opponent=None) -> np.ndarray:
    """Every deal of ``states`` ``copies`` times (consecutive slots), ``agent`` at ``seats``
    and the rollout policy elsewhere (or ``opponent``, an agent with ``act_batch``);
    ``(len(states) * copies, P)`` scores."""
    vg.load_states(np.repeat(states, copies, axis=0))
    if opponent is None:
        return vg.rollout(OPPONENT, seed=seed, agent=agent, agent_seats=tuple(seats))
    return vg.rollout(OPPONENT, seed=seed, agent=SeatSplit(agent, seats, opponent),
                      agent_seats=tuple(range(vg.n_players)))


def half_width(x: np.ndarray) -> float:
    """Half the 95% interval of the mean of ``x`` (:func:`cardenvs.arena.mean_ci`, z = 1.96)."""
    _, low, high = mean_ci(x, 1.96)
    return (high - low) / 2


def arena_seat_sets(game, state: np.ndarray) -> list[tuple[int, ...]]:
    """The seats the first of two agents holds in each lineup ``cardenvs arena`` plays (its
    ``auto`` lineups) on deals like ``state``: ``solo`` lineups when the solo seat is fixed
    before the play (:func:`cardenvs.arena.solo_lineups`), else ``rotate`` ones."""
    P = int(game.n_players)
    if game.info.teams.startswith("1 vs") and int(state[PHASE]) == P_PLAY:
        plan = solo_lineups(2, P, int(state[LANDLORD]))
    else:
        plan = rotate_lineups(2, P)
    return [tuple(s for s, a in enumerate(lu) if a == 0) for lu in plan]


def arena_difference(game, net: QNet, context, states: np.ndarray, opponent=None) -> dict:
    """The greedy network against the rollout policy (or ``opponent``, an agent with
    ``act_batch``) on ``states``, in the lineups of ``cardenvs arena``
    (:func:`arena_seat_sets`): per deal its mean seat score minus the opponent's; the mean,
    its 95% half-width and the network's win rate (share of its seats paid > 0)."""
    agent = NetworkSampler(net, game, context, greedy=True)
    D, P = len(states), int(game.n_players)
    vg = VectorGame(game, D, observe=True, auto_reset=False)
    vg.reset(seed=0)
    mine, theirs, wins = np.zeros(D), np.zeros(D), np.zeros(D)
    n_mine = n_theirs = 0
    for lu in arena_seat_sets(game, states[0]):
        r = play_lineup(vg, states, agent, lu, 1, 0, opponent)
        for q in range(P):
            if q in lu:
                mine += r[:, q]
                wins += r[:, q] > 0
                n_mine += 1
            else:
                theirs += r[:, q]
                n_theirs += 1
    d = mine / n_mine - theirs / n_theirs
    w = wins / n_mine
    return {"diff": float(d.mean()), "diff_ci": half_width(d), "win_rate": float(w.mean()),
            "win_ci": half_width(w), "deals": D}


class Finetune:
    """A fine-tuning run (module docstring); ``run()`` within ``cfg.minutes``."""

    def __init__(self, cfg: FinetuneConfig, resume: bool = False):
        cfg.options = dict(cfg.options or {})
        _check(cfg)
        self.cfg = cfg
        torch.set_num_threads(int(cfg.threads))
        self.game = g = make_game(cfg.game, **cfg.options)
        qn = _trained.QNetwork(cfg.init)
        why = _trained._mismatch(qn, g)
        if why is not None:
            raise ValueError(f"--init {cfg.init!r} does not fit {cfg.game} {cfg.options}: {why}")
        self.init_meta = dict(qn.meta)
        feat_dim = g.action_features(np.zeros(1, np.int64)).shape[1]
        self.net = QNet(g.layout.size, feat_dim, tuple(qn.meta["hidden"]), context=qn.context)
        load_numpy_weights(self.net, cfg.init)
        self.context = (agents_module("context").make_context(qn.context, g)
                        if qn.context else None)
        #: the device of the update, and the network it updates there: ``net`` itself on the
        #: CPU, else a copy whose weights ``net`` (which plays the games) takes after each one
        self.device = select_device(cfg.device)
        self.learner = (self.net if self.device.type == "cpu"
                        else copy.deepcopy(self.net).to(self.device))
        self.opt = torch.optim.Adam(self.learner.parameters(), lr=cfg.lr)
        self.sampler = NetworkSampler(self.net, g, self.context, cfg.temperature,
                                      rng=np.random.default_rng(cfg.seed))
        self.lineups = lineups(int(g.n_players), cfg.lineups)
        self.opponents = opponent_list(cfg.opponents)
        self._opponent_agents: dict[str, object] = {}
        for name in self.opponents:  # a file that cannot play fails now, not at its turn
            if name not in (OPPONENT, "self"):
                self.opponent_agent(name)
        self.counters = {"iterations": 0, "games": 0, "decisions": 0, "updates": 0, "train_s": 0.0}
        self.eval_history: list[dict] = []
        self._eval_states = None
        self._stop: Optional[StopSignals] = None
        if resume:  # checked whole before anything is written
            self._resume()
        os.makedirs(cfg.out, exist_ok=True)

    def _resume(self) -> None:
        """The state of ``OUT/checkpoint.pt`` (a ``ValueError``, nothing written, when it is
        missing, damaged or of other settings); the rows of ``log.csv`` / ``eval.csv``
        logged after it (by iteration) are dropped."""
        cfg = self.cfg
        ck = load_checkpoint(cfg.out, cfg.game, cfg.options)
        settings, old_init = asdict(cfg), ck["config"].get("init")
        if (isinstance(old_init, str) and os.path.exists(old_init)
                and os.path.samefile(old_init, cfg.init)):  # the same file, named otherwise
            settings["init"] = old_init
        check_resume_settings(ck["config"], settings, RESUME_FREE, cfg.out)
        try:
            self.net.load_state_dict(ck["net"])
            self.learner.load_state_dict(ck["net"])
            self.opt.load_state_dict(ck["opt"])
            self.sampler.rng.bit_generator.state = ck["rng"]
            counters = {k: type(v)(ck["counters"][k]) for k, v in self.counters.items()}
            history = list(ck["eval_history"])
            bad = [k for k, v in counters.items() if not 0 <= v < float("inf")]
            if bad or not all(isinstance(r, dict) for r in history):
                raise ValueError(f"counters {bad} out of range" if bad else
                                 "evaluation rows that are no rows")
        except (KeyError, TypeError, ValueError, RuntimeError, OverflowError) as e:
            raise ValueError(f"--resume: the checkpoint in {cfg.out!r} does not fit this run "
                             f"({type(e).__name__}: {e})") from None
        self.counters, self.eval_history = counters, history
        # by iteration: the rounded train_s of a row is no bound for the unrounded one
        truncate_csv(os.path.join(cfg.out, "log.csv"), "iteration", counters["iterations"])
        truncate_csv(os.path.join(cfg.out, "eval.csv"), "iterations", counters["iterations"])

    # -- files -----------------------------------------------------------------------------------
    @property
    def weights_path(self) -> str:
        return os.path.join(self.cfg.out, f"{self.cfg.game}.npz")

    def export(self) -> str:
        cfg = self.cfg
        keep = {k: self.init_meta[k] for k in ("teacher", "data") if k in self.init_meta}
        export_weights(self.net, self.weights_path, {
            **keep, "game": cfg.game, "options": cfg.options, "mode": "network",
            "trainer": "finetune", "init": cfg.init, "hidden": list(self.net.hidden),
            "reward_scale": 1.0, "opponent": cfg.opponents,
            "settings": {k: v for k, v in asdict(cfg).items()
                         if k not in ("game", "options", "init", "out", "progress")},
            **{k: v for k, v in self.counters.items() if k != "train_s"},
            "train_minutes": round(self.counters["train_s"] / 60, 2)})
        return self.weights_path

    def save_checkpoint(self) -> str:
        return save_atomic({"config": asdict(self.cfg), "net": self.net.state_dict(),
                            "opt": self.opt.state_dict(),
                            "rng": self.sampler.rng.bit_generator.state,
                            "counters": dict(self.counters),
                            "eval_history": list(self.eval_history)},
                           os.path.join(self.cfg.out, "checkpoint.pt"))

    # -- opponents -------------------------------------------------------------------------------
    def opponent_path(self, name: str) -> Optional[str]:
        """The weight file of opponent ``name`` now (``None``: the rollout policy)."""
        if name == OPPONENT:
            return None
        if name == "init":
            return self.cfg.init
        if name == "self":
            n = self.counters["iterations"] // self.cfg.eval_every * self.cfg.eval_every
            return self.cfg.init if n == 0 else self.snapshot_path(n)
        return name

    def opponent_agent(self, name: str):
        """Opponent ``name`` as a rollout agent (``None``: the rollout policy): the greedy
        ``trained`` agent of its weight file."""
        path = self.opponent_path(name)
        if path is None:
            return None
        agent = self._opponent_agents.get(path)
        if agent is None:
            if len(self._opponent_agents) > 4:  # "self" moves on: forget its former files
                self._opponent_agents.clear()
            agent = self._opponent_agents[path] = _trained.TrainedAgent(self.game, weights=path)
        return agent

    def snapshot_path(self, iterations: int) -> str:
        return os.path.join(self.cfg.out, "snapshots", f"{self.cfg.game}_it{iterations}.npz")

    def snapshot(self) -> str:
        """The weights now (``OUT/GAME.npz``) and their copy in ``OUT/snapshots/``."""
        path = self.export()
        os.makedirs(os.path.join(self.cfg.out, "snapshots"), exist_ok=True)
        shutil.copyfile(path, self.snapshot_path(self.counters["iterations"]))
        return path

    # -- one iteration ---------------------------------------------------------------------------
    def collect(self, it: int) -> Optional[dict]:
        """The iteration's games (module docstring, steps 1-2): the decisions with their
        advantages, or ``None`` when a stop signal came."""
        cfg, g = self.cfg, self.game
        D, K, P = cfg.deals, cfg.group, int(g.n_players)
        states = new_deals(g, D, cfg.seed * 1_000_003 + it)
        vg = getattr(self, "_vg", None)
        if vg is None:
            vg = self._vg = VectorGame(g, D * K, observe=True, auto_reset=False)
            vg.reset(seed=0)
        parts: dict[str, list] = {k: [] for k in (
            "obs", "ids", "sizes", "ctx", "choice", "logp", "adv")}
        samp = self.sampler
        opponent = self.opponent_agent(self.opponents[(it - 1) % len(self.opponents)])
        rng_state = samp.rng.bit_generator.state
        games = 0
        for li, lu in enumerate(self.lineups):
            if self._stop is not None and self._stop.signum is not None:
                samp.rng.bit_generator.state = rng_state  # the iteration is redone on --resume
                return None
            samp.clear()
            r = play_lineup(vg, states, samp, lu, K, it * 7 + li, opponent)
            adv = leave_one_out(r.reshape(D, K, P)).reshape(D * K, P)
            games += D * K
            R = samp.records
            if not R["sizes"]:
                continue
            for k in ("obs", "ids", "sizes", "choice", "logp"):
                parts[k].append(np.concatenate(R[k]))
            if self.context is not None:
                parts["ctx"].append(np.concatenate(R["ctx"]))
            parts["adv"].append(adv[np.concatenate(R["slot"]), np.concatenate(R["seat"])])
        if not parts["sizes"]:
            return {"n": 0, "games": games}
        out = {k: (np.concatenate(v) if v else None) for k, v in parts.items()}
        out["adv"] = out["adv"] / (out["adv"].std() + 1e-6)
        out["n"], out["games"] = len(out["sizes"]), games
        return out

    def learn(self, it: int, data: dict) -> float:
        """The update of the iteration (module docstring, step 3; a stop signal waits for its
        end, a few seconds); the mean loss."""
        rng = np.random.default_rng(it)
        starts = segment_starts(data["sizes"])
        losses: list[float] = []
        for _ in range(self.cfg.epochs):
            self._epoch(data, rng, starts, losses)
        if self.learner is not self.net:
            self.net.load_state_dict(self.learner.state_dict())  # copied to the CPU
        return float(np.mean(losses)) if losses else 0.0

    def _epoch(self, data: dict, rng: np.random.Generator, starts: np.ndarray,
               losses: list) -> None:
        """One pass in minibatches over the iteration's decisions (``bfloat16``: the
        forward's matmuls under ``torch.autocast``, the loss and the weights in float32)."""
        cfg, g, net, dev = self.cfg, self.game, self.learner, self.device
        sizes, ids, choice = data["sizes"], data["ids"], data["choice"]
        N = len(sizes)
        perm = rng.permutation(N)
        for b in range(0, N, cfg.minibatch):
            idx = perm[b:b + cfg.minibatch]
            k = sizes[idx]
            pos = np.concatenate([np.arange(starts[i], starts[i] + sizes[i]) for i in idx])
            own = np.repeat(np.arange(len(idx)), k)
            col = np.concatenate([np.arange(x) for x in k])
            ctx = None if data["ctx"] is None else torch.from_numpy(data["ctx"][pos]).to(dev)
            own_t = torch.from_numpy(own).to(dev)
            with learner_autocast(dev.type, cfg.train_dtype):
                q = net(torch.from_numpy(data["obs"][idx].astype(np.float32)).to(dev),
                        torch.from_numpy(g.action_features(ids[pos])).to(dev), own_t,
                        ctx).float()
            L = torch.full((len(idx), int(k.max())), float("-inf"), device=dev)
            L = L.index_put((own_t, torch.from_numpy(col).to(dev)), q / cfg.temperature)
            pick = torch.from_numpy(choice[idx]).to(dev)[:, None]
            lp = torch.log_softmax(L, 1).gather(1, pick)[:, 0]
            ratio = torch.exp(lp - torch.from_numpy(data["logp"][idx]).float().to(dev))
            A = torch.from_numpy(data["adv"][idx]).float().to(dev)
            loss = -torch.min(ratio * A, ratio.clamp(1 - cfg.clip, 1 + cfg.clip) * A).mean()
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            self.opt.step()
            self.counters["updates"] += 1
            losses.append(float(loss.detach()))

    def eval_opponents(self) -> list[str]:
        """The opponents of an evaluation: the rollout policy, then every weight file of
        ``--opponents`` but ``self``."""
        return list(dict.fromkeys([OPPONENT] + [x for x in self.opponents
                                                if x not in (OPPONENT, "self")]))

    def evaluate(self) -> list[dict]:
        """The arena-style evaluation (module docstring) against each of
        :meth:`eval_opponents`: ``eval.csv``, ``eval.png``; then the weights and their
        snapshot (:meth:`snapshot`, also without an evaluation)."""
        cfg = self.cfg
        if cfg.eval_deals <= 0:
            self.snapshot()
            return []
        if self._eval_states is None:
            self._eval_states = new_deals(self.game, cfg.eval_deals, EVAL_SEED + cfg.seed)
        rows = []
        self.net.eval()
        try:
            for name in self.eval_opponents():
                row = arena_difference(self.game, self.net, self.context, self._eval_states,
                                       self.opponent_agent(name))
                row.update(opponent=name if name in OPPONENT_NAMES else os.path.basename(name),
                           train_s=round(self.counters["train_s"], 1),
                           iterations=self.counters["iterations"], games=self.counters["games"],
                           decisions=self.counters["decisions"])
                rows.append(row)
        finally:
            self.net.train()
        self.eval_history.extend(rows)
        append_csv(os.path.join(cfg.out, "eval.csv"), rows)
        plot_eval(self.eval_history, os.path.join(cfg.out, "eval.png"),
                  f"{cfg.game} (fine-tuned from {os.path.basename(cfg.init)})")
        self.snapshot()
        if cfg.progress:
            for row in rows:
                print(f"[finetune] {cfg.game} iteration {row['iterations']}, "
                      f"{row['train_s'] / 60:.1f} min: network vs {row['opponent']} "
                      f"{row['diff']:+.2f} ± {row['diff_ci']:.2f} per deal ({row['deals']} deals)",
                      file=sys.stderr, flush=True)
        return rows

    # -- the loop --------------------------------------------------------------------------------
    def run(self) -> dict:
        """Iterate within ``cfg.minutes``; returns the counters, the last evaluation, the
        files and ``"stopped"`` (the signal's name, or ``None``)."""
        with one_blas_thread():  # the numpy opponents' small matmuls: one thread is fastest
            return run_session(self)

    def _run(self, stop: StopSignals) -> dict:
        cfg = self.cfg
        t_start = time.perf_counter()
        deadline = t_start + 60.0 * cfg.minutes
        write_config(cfg)
        last: list[dict] = []
        it_s = eval_s = 0.0  # the last iteration's and evaluation's seconds: kept in reserve
        if not self.eval_history:
            t_ev = time.perf_counter()
            last = self.evaluate()
            eval_s = time.perf_counter() - t_ev
        base_s, t0 = self.counters["train_s"], time.perf_counter()
        bar = SessionBar(cfg.progress, 60 * cfg.minutes, f"finetune {cfg.game}", t_start)
        evaluated_at = self.counters["iterations"]
        while stop.signum is None:
            now = time.perf_counter()
            if now + it_s + eval_s > deadline:
                break
            if cfg.max_iterations and self.counters["iterations"] >= cfg.max_iterations:
                break
            it = self.counters["iterations"] + 1
            data = self.collect(it)
            if data is None:
                break
            t_col = time.perf_counter() - now
            loss = self.learn(it, data) if data["n"] else 0.0
            self.counters["iterations"] = it
            self.counters["games"] += data["games"]
            self.counters["decisions"] += data["n"]
            self.counters["train_s"] = base_s + (time.perf_counter() - t0)
            it_s = time.perf_counter() - now
            append_csv(os.path.join(cfg.out, "log.csv"), [{
                "iteration": it, "train_s": round(self.counters["train_s"], 1),
                "games": self.counters["games"], "decisions": self.counters["decisions"],
                "updates": self.counters["updates"], "loss": round(loss, 5),
                "collect_s": round(t_col, 2), "learn_s": round(it_s - t_col, 2)}])
            bar.postfix(it=it, dec=self.counters["decisions"], loss=f"{loss:.4f}")
            bar.tick()
            if it % cfg.eval_every == 0:
                t_ev = time.perf_counter()
                last = self.evaluate()
                eval_s = time.perf_counter() - t_ev
                evaluated_at = it
                self.save_checkpoint()
        bar.close()
        self.counters["train_s"] = base_s + (time.perf_counter() - t0)
        if stop.signum is None and self.counters["iterations"] != evaluated_at:
            last = self.evaluate()
        return end_session(self, "finetune", stop, t_start, last)


# ---------------------------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    d = FinetuneConfig(game="", init="")
    p = run_parser("finetune", __doc__, d.minutes, d.seed,
                   covers="games, learning, evaluations, checkpoints and export")
    p.add_argument("--init", required=True, metavar="NPZ",
                   help="the network-only weight file to start from (its sizes and context)")
    p.add_argument("--deals", type=int, default=d.deals, help="new deals per iteration")
    p.add_argument("--group", type=int, default=d.group,
                   help="copies of each deal and lineup (K >= 2: the leave-one-out baseline)")
    p.add_argument("--lineups", choices=LINEUPS, default=d.lineups,
                   help="the network at one seat (single) or at every set of seats an arena "
                        "of two agents gives it (all)")
    p.add_argument("--lr", type=float, default=d.lr)
    p.add_argument("--temperature", type=float, default=d.temperature,
                   help="T of the sampling policy softmax(scores / T)")
    p.add_argument("--clip", type=float, default=d.clip, help="PPO's ratio clip")
    p.add_argument("--epochs", type=int, default=d.epochs, help="passes over each iteration's decisions")
    p.add_argument("--minibatch", type=int, default=d.minibatch, help="decisions per Adam step")
    p.add_argument("--eval-deals", type=int, default=d.eval_deals)
    p.add_argument("--eval-every", type=int, default=d.eval_every, help="iterations between evaluations")
    p.add_argument("--opponents", default=d.opponents, metavar="LIST",
                   help="comma-separated opponents, one per iteration in turn: heuristic (the "
                        "engine's rollout policy), init (the --init file), self (the network's "
                        "latest snapshot) or a network-only .npz; e.g. heuristic,init,heuristic,self")
    p.add_argument("--train-dtype", choices=TRAIN_DTYPES, default=d.train_dtype,
                   help="the learner's forward matmuls (bfloat16: torch.autocast, about 2x "
                        "faster on CPUs with bfloat16 instructions; the weights stay float32)")
    p.add_argument("--device", default=d.device, choices=("auto", "cpu", "cuda"),
                   help="where the update learns (auto: CUDA when available; the games are "
                        "played on the CPU)")
    add_iteration_args(p, d.threads, "stop once the run has made this many iterations, "
                                      "resumed sessions included (0: no limit)")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    from .pipeline_procs import watch_parent

    a = build_parser().parse_args(argv)
    watch_parent()  # a stage of cardenvs train: SIGTERM when the pipeline dies
    cfg = FinetuneConfig(
        game=a.game, init=a.init, options=dict(a.option), out=a.out or f"runs/finetune_{a.game}",
        minutes=a.minutes, seed=a.seed, deals=a.deals, group=a.group, lineups=a.lineups,
        lr=a.lr, temperature=a.temperature, clip=a.clip, epochs=a.epochs,
        minibatch=a.minibatch, eval_deals=a.eval_deals, eval_every=a.eval_every,
        threads=a.threads, max_iterations=a.max_iterations, opponents=a.opponents,
        train_dtype=a.train_dtype, device=a.device, progress=not a.no_progress)
    return run_command("finetune", lambda: Finetune(cfg, resume=a.resume).run())


if __name__ == "__main__":
    sys.exit(main())
