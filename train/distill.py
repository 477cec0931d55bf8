"""Distillation: a network-only agent that imitates a teacher agent, e.g. ``search``.

Two steps, each a subcommand (run from the repository root), a third to relabel a collection
and a fourth to combine fits::

    python -m train.distill collect doudizhu --teacher search --deals 4000 --jobs 2 \
        --out runs/distill_doudizhu
    python -m train.distill fit doudizhu --data runs/distill_doudizhu --minutes 20

* ``collect`` (:mod:`train.distill_collect`): the teacher plays every seat of ``--deals``
  deals (deal ``i`` is the game's reset with seed ``--seed * 1_000_003 + i``); at every
  decision with two or more legal actions the seat's observation, the legal action ids and
  the teacher's action are stored.
  Deals come in blocks of ``--block`` (one ``.npz`` shard each, written atomically, the
  teacher seeded from the seed and the block), over ``--jobs`` processes (or Ray tasks on a
  cluster, ``--ray ADDRESS``: :mod:`train.ray_tasks`, the same shards); a shard already in
  ``--out`` is kept, so an interrupted collection (Ctrl-C, SIGTERM) continues where it stopped
  when run again and a larger ``--deals`` adds blocks (a last block cut short by the former
  ``--deals`` is played again, whole).  Agents that search (``needs_state``) are handed the
  state in ``info["state"]``, as the arena does.  With ``--opponent SPEC`` the teacher holds
  one seat of each deal (seat ``i % players`` in deal ``i``), the opponent agent the others,
  and only the teacher's decisions are stored: data for playing against that opponent (e.g.
  ``--teacher search:opponents=greedy --opponent rlcard`` with ``--option preset=rlcard``).
* ``fit``: a :class:`train.dmc.QNet` learns to rank the teacher's action first among the
  legal ones: the cross-entropy of ``softmax`` of the scores over the teacher's action and up
  to ``--negatives`` other legal actions of the decision, drawn afresh at every step (all of
  them when there are fewer).  Shards are split by deal into training and held-out decisions
  (every ``--holdout``-th block); the log gives both agreements with the teacher (the share
  of decisions whose best-scored legal action is the teacher's, over every legal action).
  After every epoch the network alone plays ``--eval-deals`` duplicate deals against each
  ``--eval-agents`` agent (the same deals each time, the network at one seat and the agent
  at the others; ``eval.csv``: ``diff``, the paired difference per deal, network minus
  agent, as the arena's pairwise line, and ``score``, the network's own; the learning curve
  ``eval.png``).  ``--minutes`` bounds the fit (evaluations aside; 0: only ``--epochs`` does);
  SIGTERM / Ctrl-C stop it after the current step, with the weights it has then written
  (exit status 128 + the signal).  ``OUT/checkpoint.pt`` (written atomically at every
  epoch's end and at a stop: network, Adam, random states, the position in the epoch) lets
  ``fit --resume`` continue a fit stopped or killed outright (SIGKILL, out of memory) as if
  never stopped, with the same settings (``--minutes``, ``--epochs``, ``--threads`` aside;
  ``--epochs`` counts the fit's epochs in all): :mod:`train.distill_resume`.  ``--device``
  (``cpu``, ``cuda``, ``auto``: CUDA when available) is where the network learns.
  The weights (``OUT/GAME.npz``, ``"mode": "network"``: every decision is the network's) play
  as ``trained:OUT/GAME.npz``.  ``--context plan`` adds context inputs per (position, card
  play) to the network (``agents/context.py``: the hand planner's view of what each play
  leaves), computed once per shard and kept beside it (``shard_NNNNNN.ctx_plan.npy``).

* ``relabel``: a copy of a collection in which one kind of decision (an action block, e.g.
  Wakeng's ``bury``) is labelled by another teacher that plays from the observation alone
  (:func:`relabel`), e.g. the ``rules`` agent's burying under ``search``'s card play::

    python -m train.distill relabel wakeng --data runs/dw_search --block bury \
        --teacher rules --out runs/dw_search_rb

  ``fit`` takes collections of several teachers together (the weight file names them all).

* ``average``: one weight file, the mean of the weights of several fits of the game (a model
  soup: :func:`average`), e.g. of two successive DAgger rounds' fits::

    python -m train.distill average niangniang runs/nn_fit6/niangniang.npz \
        runs/nn_fit7/niangniang.npz --out runs/nn_avg/niangniang.npz

The teacher's bids, exchanges, joker picks and 报牌 are learned like its card play: one
network makes every decision.
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import sys
import time
from typing import Optional, Sequence

import numpy as np

from cardenvs.cli import parse_option

from .distill_collect import (  # noqa: F401 (re-exported: train.distill.collect etc.)
    _SHARD, _block_data, _block_job, _write_block, collect, deal_seed, play_block,
)
from .distill_tools import _progress, _write_shard, average, relabel  # noqa: F401 (re-exported)


# ---------------------------------------------------------------------------------------------
# fit
# ---------------------------------------------------------------------------------------------
def context_path(shard: str, context: str) -> str:
    """Where the context inputs of a shard's legal actions are kept: beside the shard,
    ``shard_NNNNNN.ctx_<context>.npy`` (float16 ``[len(legal), ctx_dim]``)."""
    return f"{shard[:-len('.npz')]}.ctx_{context}.npy"


def shard_context(shard: str, context, obs: np.ndarray, legal: np.ndarray,
                  sizes: np.ndarray) -> np.ndarray:
    """The context inputs of every legal action of a shard (float16, one row per entry of
    its ``legal``; ``obs``, ``legal``, ``sizes``: the shard's arrays), read from
    :func:`context_path` or computed with ``context`` (an :mod:`agents.context` object of the
    shard's game) and written there atomically."""
    path = context_path(shard, context.name)
    if os.path.exists(path):
        arr = np.load(path)
        if arr.shape == (len(legal), context.dim):
            return arr
    owner = np.repeat(np.arange(len(sizes)), sizes)
    arr = context(obs.astype(np.float32), legal, owner).astype(np.float16)
    tmp = f"{path}.{os.getpid()}.tmp.npy"  # two fits of one collection may compute it at once
    np.save(tmp, arr)
    os.replace(tmp, path)
    return arr


class Decisions:
    """The shards of a collection in memory: observations, legal ids (concatenated, with the
    offset of each decision) and the teacher's actions; with a ``context`` (an
    :mod:`agents.context` object), ``ctx``: the context inputs of every legal id (kept beside
    each shard once computed, :func:`shard_context`)."""

    def __init__(self, paths: Sequence[str], context=None, progress: bool = False):
        if not paths:
            raise ValueError("no shards to read")
        obs, legal, sizes, action, ctx = [], [], [], [], []
        todo = [p for p in paths if context is not None
                and not os.path.exists(context_path(p, context.name))]
        if todo:
            print(f"[distill] computing the {context.name!r} context inputs of {len(todo)} "
                  f"shards (kept beside them)", file=sys.stderr, flush=True)
        for p in (_progress(paths, "context") if todo and progress else paths):
            with np.load(p) as z:
                obs.append(z["obs"])
                legal.append(z["legal"])
                sizes.append(z["sizes"])
                action.append(z["action"])
            if context is not None:
                ctx.append(shard_context(p, context, obs[-1], legal[-1], sizes[-1]))
        self.obs = np.concatenate(obs)
        self.legal = np.concatenate(legal)
        self.sizes = np.concatenate(sizes)
        self.action = np.concatenate(action)
        self.ctx = np.concatenate(ctx) if context is not None else None
        self.start = np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(np.int64)

    def legal_of(self, a: int, b: int) -> tuple[np.ndarray, Optional[np.ndarray]]:
        """The legal ids of decisions ``a .. b-1``, concatenated, and their context inputs
        (float32; ``None`` without a context)."""
        lo, hi = self.start[a], self.start[b - 1] + self.sizes[b - 1]
        ctx = None if self.ctx is None else self.ctx[lo:hi].astype(np.float32)
        return self.legal[lo:hi], ctx

    def __len__(self) -> int:
        return len(self.action)


def split_shards(data: str, holdout: int) -> tuple[list[str], list[str]]:
    """The shard paths of ``data``, split into training and held-out (every ``holdout``-th
    block; none when ``holdout`` is 0)."""
    paths = sorted(glob.glob(os.path.join(data, "shard_*.npz")))
    if not paths:
        raise ValueError(f"no shards in {data!r}: run `python -m train.distill collect` first")
    if holdout <= 0 or len(paths) < 2:
        return paths, []
    held = paths[::holdout]
    return [p for p in paths if p not in held], held


def sample_batch(d: Decisions, idx: np.ndarray, negatives: int, rng: np.random.Generator,
                 positions: bool = False):
    """For decisions ``idx``: the candidate ids (the teacher's action first, then up to
    ``negatives`` other legal actions), the row of ``idx`` each belongs to and its column
    there (0: the teacher's); with ``positions``, also each candidate's index into
    ``d.legal`` (to look up its context inputs)."""
    ids, owner, col, pos = [], [], [], []
    for row, i in enumerate(idx):
        lo, k = d.start[i], d.sizes[i]
        legal = d.legal[lo:lo + k]
        other = np.flatnonzero(legal != d.action[i])
        if len(other) > negatives:
            other = other[rng.choice(len(other), negatives, replace=False)]
        ids.append(d.action[i])
        ids.extend(legal[other].tolist())
        owner.extend([row] * (1 + len(other)))
        col.extend(range(1 + len(other)))
        if positions:
            pos.append(lo + int(np.flatnonzero(legal == d.action[i])[0]))
            pos.extend((lo + other).tolist())
    out = (np.asarray(ids, np.int64), np.asarray(owner, np.int64), np.asarray(col, np.int64))
    return (*out, np.asarray(pos, np.int64)) if positions else out


def _choices(policy, d: Decisions, n: int) -> np.ndarray:
    """The action ``policy`` (a :class:`train.dmc.TorchPolicy`) chooses among all legal ones
    at each of the first ``n`` decisions of ``d``."""
    out = []
    for a in range(0, n, 512):
        b = min(n, a + 512)
        ids, ctx = d.legal_of(a, b)
        out.append(policy.choose(d.obs[a:b].astype(np.float32), ids, d.sizes[a:b], ctx))
    return np.concatenate(out) if out else np.zeros(0, np.int64)


def agreement(policy, d: Decisions, limit: int = 20000) -> float:
    """The share of (up to ``limit``) decisions of ``d`` at which ``policy`` chooses the
    teacher's action among all legal ones."""
    n = min(len(d), limit)
    if n == 0:
        return float("nan")
    return float((_choices(policy, d, n) == d.action[:n]).mean())


def block_weights(game, weights: Optional[dict], name: str = "the game") -> np.ndarray:
    """One loss weight per action block of ``game`` (1 unless ``weights`` names the block);
    ``ValueError`` on an unknown block or a weight that is not a positive number."""
    names = list(game.blocks)
    w = np.ones(len(names))
    for block, value in (weights or {}).items():
        if block not in names:
            raise ValueError(f"--weight {block}=...: {name} has no action block {block!r}; "
                             f"its blocks: {', '.join(names)}")
        try:
            v = float(value)
        except (TypeError, ValueError):
            v = float("nan")
        if not (v > 0 and math.isfinite(v)):
            raise ValueError(f"--weight {block}={value!r}: the weight must be a positive number")
        w[names.index(block)] = v
    return w


def agreement_by_block(policy, game, d: Decisions,
                       limit: int = 20000) -> tuple[float, dict[str, float]]:
    """:func:`agreement`, and the same share per action block of the teacher's action
    (``{block: share}``, the blocks with decisions among the first ``limit``)."""
    n = min(len(d), limit)
    if n == 0:
        return float("nan"), {}
    names, blk = list(game.blocks), game.block_indices(d.action[:n])
    hits = _choices(policy, d, n) == d.action[:n]
    hit = np.bincount(blk, weights=hits, minlength=len(names))
    cnt = np.bincount(blk, minlength=len(names))
    return float(hits.mean()), {names[j]: round(float(hit[j] / cnt[j]), 4)
                                for j in range(len(names)) if cnt[j]}


def fit(game: str, data, out: Optional[str] = None, *, options: Optional[dict] = None,
        minutes: float = 20.0, hidden: Sequence[int] = (512, 256, 128), lr: float = 1e-3,
        batch: int = 256, negatives: int = 31, holdout: int = 10, epochs: int = 0,
        seed: int = 0, threads: int = 1, init: Optional[str] = None,
        eval_agents: Sequence[str] = ("rules",), eval_deals: int = 100,
        weights: Optional[dict] = None, context: Optional[str] = None,
        progress: bool = True, resume: bool = False, device: str = "cpu") -> dict:
    """Fit a network to the collection in ``data`` (a folder, or several of the same game
    and teacher: e.g. a DAgger round beside the first collection; module docstring); returns
    the weight file's path, the agreements and the counters.

    ``weights`` (``{block: w}``, e.g. ``{"take": 4}``) multiplies the loss of the decisions
    whose teacher's action lies in that action block (:func:`block_weights`): for rare kinds
    of decision the network imitates badly.  ``fit.csv`` logs the held-out agreement of each
    block (``holdout_BLOCK``).

    ``context`` (e.g. ``"plan"``, :mod:`agents.context`) gives the network context inputs,
    values per (position, action) such as the hand planner's cost of what a play leaves,
    computed for every legal action of the shards once and kept beside them; an ``init`` file
    without them starts the new inputs' weights at zero, one with them sets the context (or
    starts one that extends it, e.g. ``"plan_picks"`` from a ``"plan"`` file: the added
    inputs' weights at zero).

    ``OUT/checkpoint.pt`` is written at every epoch's end and when the fit stops inside one;
    ``resume`` continues from it as if never stopped (:mod:`train.distill_resume`: the same
    settings but ``minutes``, ``epochs``, ``threads`` and ``progress``; ``epochs`` counts the
    fit's epochs in all).  ``device``: where the network learns (``"auto"``: CUDA when
    ``torch.cuda.is_available()``, else the CPU; ``"cuda"``, a ``ValueError`` where it is
    absent: :func:`train.common.select_device`); a resumed fit may change it."""
    import torch

    from cardenvs.api import make_game
    from cardenvs.arena import agents_module

    from .common import StopSignals, append_csv, game_dims, plot_eval, select_device
    from .distill_resume import (
        check_data, drop_later_rows, fit_settings, load_fit, restore, save_fit,
    )
    from .dmc import QNet, TorchPolicy, evaluate_against, export_weights

    folders = [data] if isinstance(data, (str, os.PathLike)) else list(data)
    if not folders:
        raise ValueError("no collection given")
    if minutes < 0 or epochs < 0:
        raise ValueError(f"minutes ({minutes}) and epochs ({epochs}) must be >= 0 (0: no limit)")
    if minutes == 0 and epochs == 0:
        raise ValueError("minutes and epochs are both 0 (no limit): bound the fit by one of them")
    dev = select_device(device)
    metas = []
    for folder in folders:
        meta_path = os.path.join(folder, "collect.json")
        if not os.path.exists(meta_path):
            raise ValueError(f"no collection in {folder!r} (no collect.json): run `python -m "
                             f"train.distill collect {game} --out {folder}` first")
        with open(meta_path) as f:
            metas.append(json.load(f))
        if metas[-1]["game"] != game:
            raise ValueError(f"{folder!r} holds {metas[-1]['game']} decisions, not {game}")
        if metas[-1].get("options", {}) != metas[0].get("options", {}):
            raise ValueError(f"{folder!r} was collected with other game options than "
                             f"{folders[0]!r}")
    # collections of several teachers (a relabelled one beside its source, DAgger rounds of
    # a stronger teacher) fit together; the weight file names them all
    teachers = list(dict.fromkeys(m["teacher"] for m in metas))
    cmeta = dict(metas[0], teacher=" + ".join(teachers))
    options = dict(cmeta.get("options", {}) if options is None else options)
    out = out or folders[0]
    torch.manual_seed(seed)
    torch.set_num_threads(max(1, int(threads)))
    rng = np.random.default_rng(seed)
    g = make_game(game, **options)
    bw = block_weights(g, weights, game)
    train_paths, held_paths = [], []
    for folder in folders:
        t, h = split_shards(folder, holdout)
        train_paths += t
        held_paths += h
    if init is not None:  # start from a weight file (its hidden sizes, its context)
        init_net = agents_module("trained").QNetwork(init)
        hidden = tuple(init_net.meta["hidden"])
        if init_net.context:
            if context is not None and not agents_module("context").extends(context,
                                                                            init_net.context):
                raise ValueError(f"--init {init!r} takes the context {init_net.context!r}, not "
                                 f"{context!r}")
            context = context or init_net.context
    settings = fit_settings(
        game, options, folders, hidden=[int(h) for h in hidden], lr=lr, batch=batch,
        negatives=negatives, holdout=holdout, seed=seed, init=init,
        eval_agents=list(eval_agents), eval_deals=eval_deals, context=context,
        loss_weights={b: float(v) for b, v in zip(g.blocks, bw) if v != 1}, minutes=minutes,
        epochs=epochs, threads=threads, progress=progress, out=out, device=device)
    ck = load_fit(out, settings) if resume else None  # before anything is written
    os.makedirs(out, exist_ok=True)
    ctx_fn = None
    if context:
        ctx_fn = agents_module("context").make_context(context, g)
    tr = Decisions(train_paths, ctx_fn, progress)
    ho = Decisions(held_paths, ctx_fn, progress) if held_paths else None
    if ck is not None:
        check_data(ck, out, len(tr), len(ho) if ho is not None else 0, batch)
    w_dec = torch.from_numpy(bw[g.block_indices(tr.action)].astype(np.float32)).to(dev)
    obs_dim, feat_dim = game_dims(g)
    if tr.obs.shape[1] != obs_dim:
        raise ValueError(f"the shards hold observations of {tr.obs.shape[1]} values; {game} "
                         f"with {options} has {obs_dim}")
    net = QNet(obs_dim, feat_dim, hidden, context=context)
    if init is not None:
        from .common import load_numpy_weights

        load_numpy_weights(net, init)
    net.to(dev)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    policy = TorchPolicy(g, net, dev)
    path = os.path.join(out, f"{game}.npz")
    log_path = os.path.join(out, "fit.csv")
    t0 = time.perf_counter()
    by_time = minutes > 0  # a time limit; without one the epochs alone bound the fit
    deadline = t0 + 60.0 * minutes if by_time else float("inf")
    steps = epoch = 0
    hist: list[dict] = []
    evals: list[dict] = []
    eval_seeds = np.random.default_rng(seed + 7919).integers(2**62, size=max(0, eval_deals))
    per_epoch = -(-len(tr) // batch)
    base_s, perm, pos, losses = 0.0, None, 0, []  # an epoch's order, next position, losses
    if ck is not None:  # continue as if never stopped (train/distill_resume.py)
        restore(ck, out, net, opt, rng)
        epoch, steps, base_s = int(ck["epoch"]), int(ck["steps"]), float(ck["train_s"])
        hist, evals = list(ck["history"]), list(ck["evals"])
        if ck["perm"] is not None:
            perm, pos, losses = np.asarray(ck["perm"]), int(ck["pos"]), list(ck["losses"])
        drop_later_rows(out, epoch * per_epoch)

    def elapsed() -> float:
        """Seconds of fitting, the sessions before this one included."""
        return base_s + time.perf_counter() - t0

    def done():
        """Epochs done so far: whole, or with the part of a cut-short one (2 decimals)."""
        return epoch if steps == epoch * per_epoch else round(steps / per_epoch, 2)

    def evaluate() -> None:
        """The network alone against ``eval_agents`` on the same duplicate deals each epoch:
        ``eval.csv`` and ``eval.png``."""
        if eval_deals <= 0:
            return
        net.eval()
        rows = evaluate_against(g, policy, eval_agents, eval_seeds, seed=seed + 17, chunk=25,
                                tag="distill")
        net.train()
        for r in rows:
            r.update(train_s=round(elapsed(), 1), epoch=done(), updates=steps)
            print(f"[distill] {game} epoch {done()}: network vs {r['opponent']} "
                  f"{r['diff']:+.2f} ± {r['diff_ci']:.2f} per deal (its own score "
                  f"{r['score']:+.2f}; {r['deals']} deals)",
                  file=sys.stderr, flush=True)
        evals.extend(rows)
        append_csv(os.path.join(out, "eval.csv"), rows)
        plot_eval(evals, os.path.join(out, "eval.png"), f"{game} (distilled from "
                                                        f"{cmeta['teacher']})")

    def export(note: str) -> None:
        export_weights(net, path, {
            "game": game, "options": options, "mode": "network", "trainer": "distill",
            "teacher": cmeta["teacher"], "hidden": list(hidden), "reward_scale": 1.0,
            "data": [os.path.basename(os.path.normpath(f)) for f in folders],
            "decisions": len(tr), "updates": steps, "epochs": epoch, "note": note,
            "init": init, "loss_weights": {b: float(v) for b, v in zip(g.blocks, bw) if v != 1},
            **({"context": context} if context else {}),
            "train_minutes": round(elapsed() / 60, 2)})

    def checkpoint(pending_eval: bool = False) -> None:
        """The fit's state (train/distill_resume.py); inside an epoch, its order, position
        and losses so far; ``pending_eval``: an epoch ended without its evaluation (a stop
        signal), which a resumed fit makes first."""
        inside = perm is not None and pos < len(perm)
        save_fit(out, settings, net, opt, rng, epoch=epoch, steps=steps, per_epoch=per_epoch,
                 decisions=len(tr), held_out=len(ho) if ho is not None else 0, history=hist,
                 evals=evals, train_s=elapsed(), perm=perm if inside else None, pos=pos,
                 losses=losses if inside else None, pending_eval=pending_eval)

    bar = None
    if progress:
        from tqdm import tqdm

        # a bar in seconds under a time limit, in epochs without one
        unit, digits = ("s", 0) if by_time else ("epochs", 2)
        bar = tqdm(total=round(60 * minutes) if by_time else epochs, unit=unit,
                   desc=f"fit {game}", dynamic_ncols=True, file=sys.stderr,
                   bar_format="{l_bar}{bar}| {n:.%df}/{total:.0f} %s {postfix}" % (digits, unit))
    if ck is not None and ck.get("pending_eval"):
        evaluate()  # the evaluation of the last epoch, which a stop signal put off
        checkpoint()
    with StopSignals() as stop:
        while stop.signum is None and time.perf_counter() < deadline and \
                (epochs <= 0 or epoch < epochs):
            if perm is None:  # a new epoch (a resumed one goes on in its own order)
                perm, pos, losses = rng.permutation(len(tr)), 0, []
            first = pos
            while pos < len(perm):
                if stop.signum is not None or time.perf_counter() >= deadline:
                    break
                idx = perm[pos:pos + batch]
                ids, owner, col, cpos = sample_batch(tr, idx, negatives, rng, positions=True)
                obs = torch.from_numpy(tr.obs[idx].astype(np.float32)).to(dev)
                feats = torch.from_numpy(g.action_features(ids)).to(dev)
                own = torch.from_numpy(owner).to(dev)
                ctx = (None if tr.ctx is None
                       else torch.from_numpy(tr.ctx[cpos].astype(np.float32)).to(dev))
                q = net(obs, feats, own, ctx)
                # cross-entropy of the teacher's action (column 0 of each decision) under the
                # softmax of the scores over the decision's candidates
                logits = torch.full((len(idx), negatives + 1), float("-inf"), device=dev)
                logits = logits.index_put((own, torch.from_numpy(col).to(dev)), q)
                w = w_dec[idx]
                loss = -(w * torch.log_softmax(logits, 1)[:, 0]).sum() / w.sum()
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(net.parameters(), 10.0)
                opt.step()
                steps += 1
                pos = min(len(perm), pos + batch)
                losses.append(float(loss.detach()))
                if bar is not None:
                    bar.n = min(bar.total, time.perf_counter() - t0 if by_time
                                else epoch + pos / len(perm))
                    bar.set_postfix(epoch=epoch, loss=f"{np.mean(losses[-50:]):.3f}",
                                    refresh=False)
                    bar.refresh()
            if pos == first:  # stopped before a step: nothing new to log or write
                break
            ended = pos >= len(perm)
            epoch += int(ended)
            row = {"epoch": done(), "updates": steps, "minutes": round(elapsed() / 60, 2),
                   "loss": round(float(np.mean(losses)), 4) if losses else "",
                   "train_agreement": round(agreement(policy, tr, 5000), 4),
                   "holdout_agreement": ""}
            by_block = {}
            if ho is not None:
                overall, by_block = agreement_by_block(policy, g, ho)
                row["holdout_agreement"] = round(overall, 4)
            row.update({f"holdout_{b}": by_block.get(b, "") for b in g.blocks})
            hist.append(row)
            append_csv(log_path, [row])
            print(f"[distill] {game} epoch {row['epoch']} ({row['minutes']} min, {steps} "
                  f"updates): loss "
                  f"{row['loss']}, agreement with {cmeta['teacher']} train {row['train_agreement']}"
                  f" held-out {row['holdout_agreement']}"
                  + (" (" + ", ".join(f"{b} {v}" for b, v in by_block.items()) + ")"
                     if len(by_block) > 1 else ""), file=sys.stderr, flush=True)
            export(f"{epoch} epochs")
            if stop.signum is None:
                evaluate()
            checkpoint(pending_eval=ended and stop.signum is not None and eval_deals > 0)
            if ended:
                perm = None
        stopped = stop.name
    if bar is not None:
        bar.close()
    return {"weights": path, "log": log_path, "history": hist, "eval": evals, "updates": steps,
            "epochs": epoch, "decisions": len(tr), "held_out": len(ho) if ho is not None else 0,
            "stopped": stopped}


# ---------------------------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    from cardenvs.arena import agents_module

    CONTEXTS = agents_module("context").CONTEXTS

    p = argparse.ArgumentParser(prog="python -m train.distill",
                                description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect", help="teacher-played deals into shards")
    c.add_argument("game")
    c.add_argument("--teacher", default="search", help="agent spec (default: search)")
    c.add_argument("--deals", type=int, default=1000)
    c.add_argument("--out", default=None, help="default runs/distill_GAME")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--block", type=int, default=10, help="deals per shard")
    c.add_argument("--jobs", type=int, default=1, help="processes")
    c.add_argument("--player", default=None, metavar="SPEC",
                   help="an agent whose move is played instead of the teacher's now and then "
                        "(labels stay the teacher's), e.g. trained:runs/distill_GAME/GAME.npz")
    c.add_argument("--player-share", type=float, default=0.5,
                   help="chance of playing the player's move at a decision (with --player)")
    c.add_argument("--opponent", default=None, metavar="SPEC",
                   help="an agent at every seat but the teacher's (seat i %% players in deal i); "
                        "only the teacher's decisions are stored, e.g. rlcard")
    c.add_argument("--option", action="append", default=[], type=parse_option, metavar="KEY=VALUE")
    c.add_argument("--ray", default=None, metavar="ADDRESS",
                   help="play the blocks as Ray tasks on the cluster at ADDRESS (auto, "
                        "HOST:PORT), or local: a Ray instance of --jobs CPUs here")
    c.add_argument("--no-progress", action="store_true")
    f = sub.add_parser("fit", help="a network-only agent from the shards")
    f.add_argument("game")
    f.add_argument("--data", action="append", default=None, metavar="DIR",
                   help="a collection (default runs/distill_GAME); repeat to fit on several")
    f.add_argument("--out", default=None, help="where the weights go (default: --data)")
    f.add_argument("--minutes", type=float, default=20.0,
                   help="stop after this many minutes of fitting (0: no limit; then give --epochs)")
    f.add_argument("--epochs", type=int, default=0, help="stop after this many (0: no limit)")
    f.add_argument("--hidden", default="512,256,128")
    f.add_argument("--lr", type=float, default=1e-3)
    f.add_argument("--batch", type=int, default=256)
    f.add_argument("--negatives", type=int, default=31)
    f.add_argument("--holdout", type=int, default=10, help="every N-th shard held out (0: none)")
    f.add_argument("--seed", type=int, default=0)
    f.add_argument("--threads", type=int, default=1)
    f.add_argument("--eval-agents", default="rules",
                   help="agents the network plays after every epoch (eval.csv, eval.png)")
    f.add_argument("--eval-deals", type=int, default=100,
                   help="duplicate deals of each evaluation (0: none)")
    f.add_argument("--init", default=None, metavar="NPZ",
                   help="start from this weight file (its hidden sizes), e.g. an earlier fit")
    f.add_argument("--weight", action="append", default=[], type=parse_option,
                   metavar="BLOCK=W",
                   help="loss weight of the decisions whose teacher's action is in this action "
                        "block (e.g. take=4 in niangniang; default 1); repeatable")
    f.add_argument("--context", default=None, choices=sorted(CONTEXTS),
                   help="context inputs per (position, action) for the network (agents/context.py;"
                        " plan: the hand planner's cost of what each play leaves; plan_picks: "
                        "also what each burial leaves); default: none, or the --init file's")
    f.add_argument("--device", default="cpu", choices=("auto", "cpu", "cuda"),
                   help="where the network learns (auto: CUDA when available; default cpu)")
    f.add_argument("--resume", action="store_true",
                   help="continue the fit of OUT/checkpoint.pt (the same settings; --epochs "
                        "counts all epochs, --minutes this session)")
    f.add_argument("--no-progress", action="store_true")
    r = sub.add_parser("relabel", help="a copy of a collection with one kind of decision "
                                       "labelled by another teacher")
    r.add_argument("game")
    r.add_argument("--data", required=True, metavar="DIR", help="the collection to copy")
    r.add_argument("--out", required=True, metavar="DIR", help="where the copy goes")
    r.add_argument("--teacher", required=True,
                   help="agent spec that plays from the observation alone (rules, trained:PATH)")
    r.add_argument("--block", action="append", required=True, metavar="BLOCK",
                   help="an action block whose decisions get the new labels (e.g. bury in "
                        "wakeng); repeatable")
    r.add_argument("--no-progress", action="store_true")
    v = sub.add_parser("average", help="one weight file, the mean of several (a model soup)")
    v.add_argument("game")
    v.add_argument("weights", nargs="+", metavar="NPZ",
                   help="weight files of the game, e.g. the fits of successive DAgger rounds")
    v.add_argument("--out", required=True, help="the weight file to write (.npz)")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    from .common import parse_hidden, parse_names
    from .pipeline_procs import watch_parent

    a = build_parser().parse_args(argv)
    watch_parent()  # a stage of cardenvs train: SIGTERM when the pipeline dies
    try:
        if a.cmd == "collect":
            import signal
            import threading

            def _term(signum, frame):  # SIGTERM stops a collection as Ctrl-C does
                raise KeyboardInterrupt

            if threading.current_thread() is threading.main_thread():
                signal.signal(signal.SIGTERM, _term)
            out = a.out or f"runs/distill_{a.game}"
            res = collect(a.game, a.teacher, a.deals, out, options=dict(a.option), seed=a.seed,
                          block=a.block, jobs=a.jobs, player=a.player,
                          player_share=a.player_share if a.player else 0.0,
                          opponent=a.opponent, progress=not a.no_progress, ray=a.ray)
            print(f"[distill] {a.game}: {res['blocks']} blocks written ({res['decisions']} "
                  f"decisions), {res['kept']} kept, in {out}")
        elif a.cmd == "relabel":
            res = relabel(a.game, a.data, a.out, a.teacher, a.block,
                          progress=not a.no_progress)
            print(f"[distill] {a.game}: {res['shards']} shards copied to {a.out}; "
                  f"{res['decisions']} decisions of {', '.join(a.block)} relabelled by "
                  f"{a.teacher} ({res['changed']} changed)")
        elif a.cmd == "average":
            res = average(a.game, a.weights, a.out)
            print(f"[distill] {a.game}: the mean of {len(a.weights)} weight files written to "
                  f"{res['weights']} (play it as trained:{res['weights']})")
        else:
            data = a.data or [f"runs/distill_{a.game}"]
            res = fit(a.game, data, a.out, minutes=a.minutes, hidden=parse_hidden(a.hidden),
                      lr=a.lr, batch=a.batch, negatives=a.negatives, holdout=a.holdout,
                      epochs=a.epochs, seed=a.seed, threads=a.threads, init=a.init,
                      eval_agents=parse_names(a.eval_agents), eval_deals=a.eval_deals,
                      weights=dict(a.weight), context=a.context, progress=not a.no_progress,
                      resume=a.resume, device=a.device)
            last = res["history"][-1] if res["history"] else {}
            print(f"[distill] {a.game}: {res['epochs']} epochs, {res['updates']} updates over "
                  f"{res['decisions']} decisions; agreement with the teacher: train "
                  f"{last.get('train_agreement')}, held-out {last.get('holdout_agreement')}; "
                  f"weights {res['weights']} (play them as trained:{res['weights']})")
            if res["stopped"]:
                import signal

                print(f"[distill] stopped by {res['stopped']}: checkpoint "
                      f"{os.path.join(os.path.dirname(res['weights']), 'checkpoint.pt')}; "
                      f"continue with --resume", file=sys.stderr, flush=True)
                return 128 + int(signal.Signals[res["stopped"]])
    except ValueError as e:
        print(f"python -m train.distill: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("python -m train.distill: stopped; the shards written are kept: the same command "
              "continues the collection", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
