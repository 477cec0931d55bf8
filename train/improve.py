"""Rollout policy improvement: learn ``Q`` of a teacher agent from paired rollouts, then play
the teacher's move unless the network is sure of a better one.

This is one step of policy iteration over a teacher (by default the ``rules`` agent), with the
rollouts amortised into a network so that playing needs no search:

* **Data** (self-play of the teacher): every seat of a deal is played by the teacher.  At a
  decision with 2+ legal actions the acting seat's observation, the teacher's action ``t`` and
  its return ``G(t)`` (the seat's rewards from that step to the end) are kept, and for up to
  ``--alts`` other legal actions ``a`` the deal is *replayed from the same full state*: ``a``
  is played, then the teacher plays every seat to the end, giving ``G(a)``.  The engine is
  deterministic and so is the ``rules`` teacher, so ``G(a) - G(t)`` is the exact advantage of ``a`` over
  the teacher's move *in that deal*: the luck of the cards cancels from the target, and the
  network learns its expectation over what the seat cannot see.  The alternatives are the
  network's own favourite (when it differs from the teacher's: every deviation the network
  would make is checked by a rollout) and uniformly drawn other legal actions.
* **Loss**: squared error of the predicted advantage ``Q(o, a) - Q(o, t)`` against
  ``G(a) - G(t)``, plus ``--anchor`` times the squared error of ``Q`` against the returns
  (which only fixes the level of ``Q``).  Returns are scaled by ``reward_scale`` (``auto``:
  one over the mean absolute return of random play).
* **Acting** (:func:`agents.trained.choose_with_prior`): the teacher's move, unless a legal
  action scores more than a margin above it; three margins (:func:`agents.trained.action_margins`):
  ``other`` for bids, digs, burying, exchanges, joker picks and Lanxi Wulong's 报牌 (offered
  beside the card plays), ``pass`` for a card play where the teacher passes, ``play`` for a
  card play (or the pass) instead of the teacher's card play.  At the end of training the
  margins are chosen from ``--margins`` by duplicate deals against the teacher (the network at
  one seat, the teacher at the others, every seat in turn; seeds apart from the arena's), one
  kind at a time in that order with the kinds not yet chosen left to the teacher, only the
  kinds the run learned and whose decisions came up in its deals (Pao De Kuai offers no
  ``other`` decision, and under must-beat no ``pass`` one); a kind whose margins do not beat
  the teacher stays ``inf`` (never deviate).  They are written into the weight file with the name of the prior
  (``meta["prior"]``, ``meta["prior_margins"]``), so ``agents.make_agent("trained", game)``
  plays the same policy in numpy.
* **Decisions learned from** (``--decisions``): ``all``; ``other`` (only the actions under the
  ``other`` margin: every auction, exchange or 报牌 decision of many more deals per minute,
  since the card play is then never rolled out from); ``pass`` (only positions where the
  teacher passes while a card play is legal, the card plays being the alternatives).

Measured on 3-player Dou Dizhu after 35 minutes (505k decisions, 1.2M rollouts): the
network's deviations in bidding gain (+0.27 scaled return per deviation over 150 held-out
deals, se 0.07) while its deviations in card play lose (-0.15, se 0.04): per-move card-play
advantages are small next to what the unseen cards do to a rollout, so the selection keeps
card play to the teacher there.  In Da Niangniang the teacher's passes are its weak spot
(``--decisions pass``, 70 minutes: +0.14 +- 0.04 per deal at one seat over 1,000 deals), in
Lanxi Wulong its 报牌 (``--decisions other``, 70 minutes: +0.025 +- 0.008 at margin 0.8).

Output (``--out``): ``log.csv``, ``margins.csv`` (per margin triple: score per deal over the
teacher's, 95% CI), ``margins.png``, ``checkpoint.pt`` (network, optimiser, counters;
``--resume`` continues with an empty replay buffer) and ``GAME.npz`` (copy to
``agents/weights/GAME.npz`` to ship it).

``--minutes`` bounds the whole session: the margin selection is timed on a few deals first
and the training stops early enough for it to fit (its deals are cut when it alone would take
more than half the budget).  SIGTERM or Ctrl-C ends the session with a checkpoint and no
weights (``--resume`` continues; ``log.csv`` drops the rows logged after the checkpoint).

Run ``python -m train.improve GAME --minutes 30 --out runs/improve_GAME``.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Optional, Sequence

import numpy as np
import torch
from torch.nn import functional as F

from cardenvs.arena import agents_module

from .common import (
    SessionBar, StopSignals, Stopped, append_csv, finish, game_dims, load_checkpoint,
    optimizer_step, parse_hidden, parse_scale, print_stopped, run_parser, run_session,
    save_atomic, torch_device, truncate_csv, write_config,
)
from .dmc import (
    QNet, TorchPolicy, duplicate_returns, export_weights, make_eval_agent, random_return_scale,
)

_trained = agents_module("trained")
MARGIN_KEYS, action_margins, choose_with_prior = (
    _trained.MARGIN_KEYS, _trained.action_margins, _trained.choose_with_prior)
other_actions, segment_argmax = _trained.other_actions, _trained.segment_argmax
_SEED_MAX = 2**62
#: ``--decisions``: where the data comes from (and which margins are chosen at the end)
DECISIONS = ("all", "other", "pass")


@dataclass
class ImproveConfig:
    """Every setting of a run (stored in the checkpoint)."""

    game: str
    options: dict = field(default_factory=dict)
    out: str = "runs/improve"
    minutes: float = 30.0
    seed: int = 0
    teacher: str = "rules"
    alts: int = 3
    decisions: str = "all"
    hidden: tuple = (512, 256, 256, 128)
    lr: float = 3e-4
    batch: int = 256
    buffer: int = 200_000
    reuse: float = 8.0
    anchor: float = 0.1
    reward_scale: Any = "auto"
    margins: tuple = (0.0, 0.05, 0.1, 0.2, 0.4, 0.8)
    select_deals: int = 300
    log_seconds: float = 30.0
    threads: int = 1
    device: str = "auto"
    progress: bool = True

    def check(self) -> None:
        if not isinstance(self.alts, int) or self.alts < 1:
            raise ValueError(f"alts must be an int >= 1, got {self.alts!r}")
        if self.buffer < 4 * self.batch:
            raise ValueError(f"buffer ({self.buffer}) must hold at least 4 batches ({4 * self.batch})")
        if not self.margins or any(m < 0 for m in self.margins):
            raise ValueError(f"margins must be a non-empty list of numbers >= 0, got {self.margins!r}")
        if self.decisions not in DECISIONS:
            raise ValueError(f"decisions must be one of {', '.join(DECISIONS)}; got {self.decisions!r}")
        if self.reuse <= 0 or self.minutes < 0 or self.select_deals < 0:
            raise ValueError("reuse must be > 0, minutes and select_deals >= 0")


class Buffer:
    """Ring buffer of decisions: observation, teacher action and return, alternatives."""

    def __init__(self, cap: int, obs_dim: int, alts: int):
        self.cap, self.n, self.pos = cap, 0, 0
        self.obs = np.zeros((cap, obs_dim), np.float16)
        self.act = np.full((cap, alts + 1), -1, np.int64)   # column 0: the teacher's action
        self.ret = np.zeros((cap, alts + 1), np.float32)

    def add(self, obs: np.ndarray, act: np.ndarray, ret: np.ndarray) -> None:
        i = self.pos
        self.obs[i], self.act[i], self.ret[i] = obs, act, ret
        self.pos = (i + 1) % self.cap
        self.n = min(self.n + 1, self.cap)

    def sample(self, rng: np.random.Generator, B: int):
        idx = rng.integers(self.n, size=B)
        return self.obs[idx].astype(np.float32), self.act[idx], self.ret[idx]


class Improve:
    """One training run (see the module docstring)."""

    def __init__(self, cfg: ImproveConfig, resume: bool = False):
        from cardenvs.api import make_game

        cfg.check()
        self.cfg = cfg
        self.game = g = make_game(cfg.game, **cfg.options)
        self.device = torch_device(cfg.device, cfg.threads)
        self.rng = np.random.default_rng(cfg.seed)
        torch.manual_seed(cfg.seed)
        self.teacher, reason = make_eval_agent(cfg.teacher, g, seed=cfg.seed + 31)
        if self.teacher is None:
            raise ValueError(f"teacher {cfg.teacher!r} cannot be used: {reason}")
        self.obs_dim, self.feat_dim = game_dims(g)
        self.net = QNet(self.obs_dim, self.feat_dim, cfg.hidden).to(self.device)
        self.opt = torch.optim.Adam(self.net.parameters(), lr=cfg.lr)
        self.counters = {"deals": 0, "decisions": 0, "rollouts": 0, "updates": 0, "train_s": 0.0,
                         "deviations_proposed": 0, "offered_other": 0, "offered_pass": 0}
        self.buf = Buffer(cfg.buffer, self.obs_dim, cfg.alts)
        self._lbuf = np.empty(g.n_actions, np.int64)
        self._obs = np.zeros(self.obs_dim, np.float32)
        self._loss = []
        if resume:
            ck = load_checkpoint(cfg.out, cfg.game, cfg.options)
            self.net.load_state_dict(ck["net"])
            self.opt.load_state_dict(ck["optimizer"])
            self.counters.update(ck["counters"])
            for k in ("offered_other", "offered_pass"):  # an older run's checkpoint: unknown
                if k not in ck["counters"]:
                    del self.counters[k]
            self.rng.bit_generator.state = ck["np_rng"]
            self.scale = float(ck["reward_scale"])
            # rows logged after the checkpoint describe work this run discards
            truncate_csv(os.path.join(cfg.out, "log.csv"), "decisions", self.counters["decisions"])
        else:
            self.scale = (random_return_scale(g, self.rng) if cfg.reward_scale == "auto"
                          else float(cfg.reward_scale))

    # -- data ------------------------------------------------------------------------------------
    def _teacher_move(self, s: np.ndarray) -> tuple[int, int]:
        """``(action, k)``: the teacher's action in state ``s`` (the only one when ``k == 1``
        legal action); when ``k > 1`` the mover's observation is left in ``self._obs`` and the
        legal ids in ``self._lbuf[:k]``."""
        g, buf = self.game, self._lbuf
        k = g.legal(s, buf)
        if k == 1:
            return int(buf[0]), 1
        g.encode(s, g.current(s), self._obs)
        return int(self.teacher.act(self._obs, buf[:k])), k

    def _play_out(self, s: np.ndarray, seat: int) -> float:
        """Teacher at every seat from state ``s`` (modified) to the end; ``seat``'s rewards."""
        g = self.game
        total = 0.0
        while not g.done(s):
            g.step(s, self._teacher_move(s)[0])
            total += float(g.rewards(s)[seat])
        return total

    @torch.no_grad()
    def _favourites(self, obs: np.ndarray, legal: list[np.ndarray]) -> np.ndarray:
        """The network's best-scored action at each decision."""
        sizes = np.array([len(x) for x in legal])
        ids = np.concatenate(legal)
        owner = torch.from_numpy(np.repeat(np.arange(len(sizes)), sizes)).to(self.device)
        self.net.eval()
        q = self.net(torch.from_numpy(obs).to(self.device),
                     torch.from_numpy(self.game.action_features(ids)).to(self.device), owner)
        self.net.train()
        return ids[segment_argmax(q.cpu().numpy(), sizes)]

    def collect_deal(self, seed: Optional[int] = None) -> int:
        """Play one teacher deal (``seed``: drawn from the run's generator when None), roll out
        the alternatives, add its decisions to the buffer; returns their count."""
        g, cfg, rng = self.game, self.cfg, self.rng
        s = g.new_state()
        g.reset(s, int(rng.integers(_SEED_MAX)) if seed is None else int(seed))
        buf = self._lbuf
        rec = []          # (step index, state before, seat, legal ids, obs, teacher action)
        paid = []         # rewards paid by each step
        while not g.done(s):
            a, k = self._teacher_move(s)
            if k > 1:
                legal = buf[:k].copy()
                # decisions of the kinds the margins tell apart (select_margin skips a kind
                # the game never offered: Pao De Kuai has no bids, and under must-beat a pass
                # is never a choice beside a card play)
                self.counters["offered_other"] += bool(other_actions(legal, [k], g.pass_id).any())
                self.counters["offered_pass"] += bool(a == g.pass_id and (legal < a).any())
                if cfg.decisions == "other":  # the teacher's move and the "other"-margin actions
                    cand = legal[other_actions(legal, [k], g.pass_id)]
                    legal = np.union1d(cand, [a]) if (cand != a).any() else None
                elif cfg.decisions == "pass":  # the teacher passes: its pass and the card plays
                    legal = legal[legal <= a] if a == g.pass_id and (legal < a).any() else None
                if legal is not None:
                    rec.append((len(paid), s.copy(), g.current(s), legal, self._obs.copy(), a))
            g.step(s, a)
            paid.append(np.asarray(g.rewards(s), np.float64).copy())
        self.counters["deals"] += 1
        if not rec:
            return 0
        to_go = np.cumsum(np.array(paid)[::-1], axis=0)[::-1]   # to_go[t] = rewards of steps >= t
        fav = None
        if self.counters["updates"] > 0:
            fav = self._favourites(np.stack([r[4] for r in rec]), [r[3] for r in rec])
        A = cfg.alts
        for j, (t, st, c, legal, o, a) in enumerate(rec):
            acts = np.full(A + 1, -1, np.int64)
            rets = np.zeros(A + 1, np.float32)
            acts[0], rets[0] = a, to_go[t][c] * self.scale
            others = legal[legal != a]
            chosen = []
            if fav is not None and fav[j] != a:
                chosen.append(int(fav[j]))
                self.counters["deviations_proposed"] += 1
            rest = others[~np.isin(others, chosen)]
            n_more = min(A - len(chosen), len(rest))
            if n_more > 0:
                chosen.extend(int(x) for x in rng.choice(rest, n_more, replace=False))
            for i, b in enumerate(chosen, 1):
                s2 = st.copy()
                g.step(s2, b)
                G = float(g.rewards(s2)[c]) + self._play_out(s2, c)
                acts[i], rets[i] = b, G * self.scale
                self.counters["rollouts"] += 1
            self.buf.add(o, acts, rets)
        self.counters["decisions"] += len(rec)
        return len(rec)

    # -- learning --------------------------------------------------------------------------------
    def update(self) -> float:
        cfg, dev = self.cfg, self.device
        obs, act, ret = self.buf.sample(self.rng, cfg.batch)
        B, W = act.shape
        valid = act >= 0
        flat = np.where(valid, act, act[:, :1]).reshape(-1)
        owner = torch.from_numpy(np.repeat(np.arange(B), W)).to(dev)
        q = self.net(torch.from_numpy(obs).to(dev),
                     torch.from_numpy(self.game.action_features(flat)).to(dev), owner).view(B, W)
        v = torch.from_numpy(valid).to(dev)
        r = torch.from_numpy(ret).to(dev)
        adv_pred = q[:, 1:] - q[:, :1]
        adv_tgt = r[:, 1:] - r[:, :1]
        m = v[:, 1:].float()
        pair = ((adv_pred - adv_tgt) ** 2 * m).sum() / m.sum().clamp(min=1.0)
        level = F.mse_loss(q[:, 0], r[:, 0])
        loss = pair + cfg.anchor * level
        optimizer_step(self, loss, 10.0)
        return float(pair.detach())

    # -- choosing the margin ---------------------------------------------------------------------
    def margin_returns(self, margins: Sequence[tuple[float, float, float]], deals: int,
                       seed: int) -> np.ndarray:
        """``[len(margins), deals, n]``: the network+teacher policy (each ``(play, other,
        pass)`` margin triple) at seat ``s`` with the teacher at every other seat, per deal and seat
        (duplicate: the same deals for every pair; :func:`train.dmc.duplicate_returns`)."""
        seeds = np.random.default_rng(seed).integers(_SEED_MAX, size=deals)
        self.net.eval()
        out = np.stack([duplicate_returns(self.game, _PriorPolicy(self, m), self.teacher, seeds)
                        for m in margins])
        self.net.train()
        return out

    def select_margin(self) -> tuple[tuple[float, float, float], list[dict]]:
        """Choose the ``(play, other, pass)`` margins by duplicate deals against the teacher
        (each triple's score per deal minus the teacher's own at the same seats and deals),
        one kind at a time with the kinds not yet chosen left to the teacher: the ``other``
        margin (decisions ``all`` / ``other``), then the ``pass`` margin (``all`` / ``pass``),
        then the ``play`` margin (``all``); a kind whose margins do not beat the teacher keeps
        ``inf`` (the teacher's move).  Returns the triple and a row per triple tried."""
        cfg = self.cfg
        inf = math.inf
        if cfg.select_deals == 0:
            m = float(cfg.margins[0])
            return (m if cfg.decisions == "all" else inf,
                    m if cfg.decisions in ("all", "other") else inf,
                    m if cfg.decisions in ("all", "pass") else inf), []
        seed = cfg.seed + 104729
        rows: list[dict] = []
        # the teacher's own score at each seat of the same deals (not 0 in a game that is not
        # zero-sum, e.g. Lanxi Wulong's declarer payments): every triple is scored against it
        base = self.margin_returns([(inf, inf, inf)], cfg.select_deals, seed)[0].mean(axis=1)

        def sweep(triples):
            res = self.margin_returns(triples, cfg.select_deals, seed)
            for (mp, mo, mq), r in zip(triples, res):
                per_deal = r.mean(axis=1) - base
                n = len(per_deal)
                ci = 1.96 * per_deal.std(ddof=1) / np.sqrt(n) if n > 1 else float("nan")
                rows.append({"play": mp, "other": mo, "pass": mq, "score": float(per_deal.mean()),
                             "score_ci": float(ci), "deals": len(per_deal)})
            return rows[-len(triples):]

        # a triple must beat the teacher (score difference > 0) to be chosen
        best = {"play": inf, "other": inf, "pass": inf, "score": 0.0}
        for kind in self._swept_kinds():
            tried = []
            for m in cfg.margins:
                t = dict(best, **{kind: float(m)})
                tried.append((t["play"], t["other"], t["pass"]))
            for r in sweep(tried):
                if r["score"] > best["score"]:
                    best = r
        return (best["play"], best["other"], best["pass"]), rows

    # -- files -----------------------------------------------------------------------------------
    def save_checkpoint(self) -> None:
        os.makedirs(self.cfg.out, exist_ok=True)
        path = os.path.join(self.cfg.out, "checkpoint.pt")
        save_atomic({"config": asdict(self.cfg), "net": self.net.state_dict(),
                     "optimizer": self.opt.state_dict(), "counters": self.counters,
                     "np_rng": self.rng.bit_generator.state, "reward_scale": self.scale}, path)

    def export(self, margins: tuple[float, float, float], path: Optional[str] = None) -> str:
        """Write the weights with the prior's name and the ``(play, other, pass)`` margins."""
        path = path or os.path.join(self.cfg.out, f"{self.cfg.game}.npz")
        meta = {"game": self.cfg.game, "options": self.cfg.options, "reward_scale": self.scale,
                "prior": self.cfg.teacher,
                "prior_margins": {k: (None if math.isinf(m) else float(m))
                                  for k, m in zip(MARGIN_KEYS, margins)},
                "trainer": "train.improve", "hidden": list(self.cfg.hidden),
                **{k: (round(v, 1) if isinstance(v, float) else v) for k, v in self.counters.items()}}
        export_weights(self.net, path, meta)
        return path

    # -- main loop -------------------------------------------------------------------------------
    def _swept_kinds(self) -> tuple[str, ...]:
        """The margin kinds :meth:`select_margin` sweeps, in order: those of ``--decisions``,
        less ``other`` / ``pass`` when the run has collected deals and none of their decisions
        came up (their margins could not change a move; they stay ``inf``).  A checkpoint of
        an older run without these counts sweeps them all."""
        kinds = {"all": ("other", "pass", "play"), "other": ("other",), "pass": ("pass",)}
        c = self.counters
        return tuple(k for k in kinds[self.cfg.decisions]
                     if k == "play" or c["deals"] == 0 or c.get(f"offered_{k}", 1) > 0)

    def _sweep_triples(self) -> int:
        """How many margin triples :meth:`select_margin` plays (the teacher's own score included)."""
        if self.cfg.select_deals == 0:
            return 0
        return 1 + len(self._swept_kinds()) * len(self.cfg.margins)

    def _selection_seconds(self, deals: int = 2) -> float:
        """Estimated seconds of :meth:`select_margin`: ``deals`` duplicate deals played with
        the network overriding wherever it may (margins 0), timed, scaled to the sweep."""
        n = self._sweep_triples()
        if n == 0:
            return 0.0
        deals = min(deals, self.cfg.select_deals)
        t = time.perf_counter()
        self.margin_returns([(0.0, 0.0, 0.0)], deals, seed=self.cfg.seed + 1)
        return (time.perf_counter() - t) / deals * self.cfg.select_deals * n

    def run(self) -> dict:
        """Train and choose the margins within ``cfg.minutes`` of wall-clock time, everything
        included: the margin selection's time is estimated first (a few timed deals), and the
        training stops early enough for it to fit; when the selection alone would take more
        than half of the budget, ``select_deals`` is lowered to fit in that half (a note says
        so).  SIGTERM / SIGINT stop the session: the checkpoint is written and ``run`` returns
        with ``"stopped"`` set (no selection, no weights; ``--resume`` continues).  A
        checkpoint is also written right after the session's first update."""
        return run_session(self)

    def _run(self, stop: StopSignals) -> dict:
        cfg = self.cfg
        t_start = time.perf_counter()
        budget = 60.0 * cfg.minutes
        deadline = t_start + budget
        write_config(cfg)
        select_s = self._selection_seconds()
        if select_s > budget / 2 and cfg.select_deals > 1:
            fit = max(1, int(cfg.select_deals * (budget / 2) / select_s))
            print(f"[improve] the margin selection over {cfg.select_deals} deals would take about "
                  f"{select_s / 60:.1f} minutes, more than half of the {cfg.minutes:g}: {fit} deals "
                  f"instead",
                  file=sys.stderr, flush=True)
            select_s *= fit / cfg.select_deals
            cfg.select_deals = fit
        reserve = 1.2 * select_s + 2.0  # selection, checkpoint and export
        t0 = time.perf_counter()
        base_s = self.counters["train_s"]
        updates0 = self.counters["updates"]
        saved = False
        owed = 0.0
        last_log = t0
        bar = SessionBar(cfg.progress, budget, f"improve {cfg.game}", t_start)
        while stop.signum is None:
            now = time.perf_counter()
            self.counters["train_s"] = base_s + (now - t0)
            if now >= deadline - reserve:
                break
            owed += self.collect_deal() * cfg.reuse / cfg.batch
            if self.buf.n >= 4 * cfg.batch:
                while owed >= 1.0:
                    self._loss.append(self.update())
                    owed -= 1.0
            if not saved and self.counters["updates"] > updates0:
                self.save_checkpoint()  # the session's first update: there is work to lose
                saved = True
            if now - last_log >= cfg.log_seconds:
                row = self._log_row()
                last_log = now
                bar.postfix(dec=row["decisions"], upd=row["updates"], loss=f"{row['pair_loss']:.4f}")
            bar.tick()
        bar.close()
        self.counters["train_s"] = base_s + (time.perf_counter() - t0)
        self._log_row()
        self.save_checkpoint()
        if stop.signum is None:
            try:
                with stop.abortable():
                    margin, rows = self.select_margin()
            except Stopped:
                pass
        if stop.signum is not None:
            print_stopped("improve", stop, f"{self.counters['updates']} updates",
                          f"checkpoint {os.path.join(cfg.out, 'checkpoint.pt')} (no margin "
                          f"selection, no weights)")
            return {"weights": None, "margin": None, "margins": [], "stopped": stop.name,
                    **self.counters}
        if rows:
            append_csv(os.path.join(cfg.out, "margins.csv"), rows)
            plot_margins(rows, os.path.join(cfg.out, "margins.png"), cfg.game, cfg.teacher)
            for r in rows:
                print(f"[improve] margins play {r['play']:g}, other {r['other']:g}, pass {r['pass']:g}: "
                      f"{r['score']:+.3f} "
                      f"± {r['score_ci']:.3f} per deal vs {cfg.teacher} ({r['deals']} deals)",
                      file=sys.stderr, flush=True)
            print(f"[improve] chosen: play {margin[0]:g}, other {margin[1]:g}, pass {margin[2]:g}",
                  file=sys.stderr, flush=True)
        weights = self.export(margin)
        return {"weights": weights, "margin": margin, "margins": rows, "stopped": None,
                **self.counters}

    def _log_row(self) -> dict:
        row = {"train_s": round(self.counters["train_s"], 1),
               **{k: v for k, v in self.counters.items() if k != "train_s"},
               "pair_loss": float(np.mean(self._loss)) if self._loss else float("nan")}
        self._loss = []
        append_csv(os.path.join(self.cfg.out, "log.csv"), [row])
        return row


class _PriorPolicy:
    """The trained agent's choice (teacher's move or the network's override, under the
    ``(play, other, pass)`` margins) for :func:`train.dmc.duplicate_returns`."""

    def __init__(self, trainer: Improve, margins: tuple[float, float, float]):
        self.game, self.teacher, self.margins = trainer.game, trainer.teacher, margins
        self.scorer = TorchPolicy(trainer.game, trainer.net, trainer.device)

    def choose(self, obs: np.ndarray, ids: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        owner = np.repeat(np.arange(len(sizes)), sizes)
        masks = np.zeros((len(sizes), self.game.n_actions), np.int8)
        masks[owner, ids] = 1
        base = np.asarray(self.teacher.act_batch(obs, masks), np.int64)
        margin = action_margins(ids, sizes, self.game.pass_id, self.margins, base)
        if not np.isfinite(margin).any():
            return base
        return choose_with_prior(self.scorer.scores(obs, ids, sizes), ids, sizes, base, margin)


def plot_margins(rows: list[dict], path: str, game: str, teacher: str) -> None:
    """PNG: score per deal against the teacher (95% CI) for each (play, other, pass) margin triple."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    x = np.arange(len(rows))
    ax.errorbar(x, [r["score"] for r in rows], yerr=[r["score_ci"] for r in rows], marker="o", capsize=3)
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xticks(x, [f"{r['play']:g}/{r['other']:g}/{r['pass']:g}" for r in rows],
                  rotation=45)
    ax.set(xlabel="margins play/other/pass (scaled score; inf = never deviate)",
           ylabel=f"score per deal vs {teacher}", title=f"{game}: network + {teacher} by margins")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def build_parser() -> argparse.ArgumentParser:
    d = ImproveConfig(game="")
    p = run_parser("improve", __doc__, d.minutes, d.seed,
                   covers="timing the margin selection, collecting and training, the margin "
                          "selection, checkpoint and export")
    p.add_argument("--teacher", default=d.teacher, help="the agent whose play is improved")
    p.add_argument("--alts", type=int, default=d.alts, help="alternative actions rolled out per decision")
    p.add_argument("--decisions", default=d.decisions, choices=DECISIONS,
                   help="decisions learned from: all; other (bids, digs, burying, exchanges, "
                        "joker picks, 报牌); pass (a card play where the teacher passes)")
    p.add_argument("--hidden", default=",".join(map(str, d.hidden)), help="hidden layer sizes")
    p.add_argument("--lr", type=float, default=d.lr)
    p.add_argument("--batch", type=int, default=d.batch, help="decisions per update")
    p.add_argument("--buffer", type=int, default=d.buffer, help="decisions kept for replay")
    p.add_argument("--reuse", type=float, default=d.reuse, help="updates x batch per collected decision")
    p.add_argument("--anchor", type=float, default=d.anchor, help="weight of the return-level loss")
    p.add_argument("--reward-scale", default="auto")
    p.add_argument("--margins", default=",".join(f"{m:g}" for m in d.margins),
                   help="margins tried at the end, for other decisions, then card plays where "
                        "the teacher passes, then the other card plays (the best triple is "
                        "written into the weights)")
    p.add_argument("--select-deals", type=int, default=d.select_deals,
                   help="duplicate deals per margin for the choice (0: the first margin)")
    p.add_argument("--threads", type=int, default=d.threads, help="torch threads (0: torch's default)")
    p.add_argument("--device", default=d.device, help="auto (CUDA when present), cpu, cuda")
    p.add_argument("--export", default=None, help="also write the final weights here")
    p.add_argument("--no-progress", action="store_true")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    a = build_parser().parse_args(argv)
    try:
        cfg = ImproveConfig(
            game=a.game, options=dict(a.option), out=a.out or os.path.join("runs", f"improve_{a.game}"),
            minutes=a.minutes, seed=a.seed, teacher=a.teacher, alts=a.alts, decisions=a.decisions,
            hidden=parse_hidden(a.hidden), lr=a.lr, batch=a.batch,
            buffer=a.buffer, reuse=a.reuse, anchor=a.anchor,
            reward_scale=parse_scale(a.reward_scale),
            margins=tuple(float(m) for m in a.margins.split(",") if m.strip()),
            select_deals=a.select_deals, threads=a.threads, device=a.device, progress=not a.no_progress)
        trainer = Improve(cfg, resume=a.resume)
    except (ValueError, TypeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    res = trainer.run()
    if a.export and not res["stopped"]:
        trainer.export(res["margin"], a.export)
    return finish(res, "margins")


if __name__ == "__main__":
    sys.exit(main())
