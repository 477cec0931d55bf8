"""The collection stage of :mod:`train.distill` (``python -m train.distill collect``): the
teacher plays every seat of a collection's deals, block by block, and each block's decisions
are written as one shard (``shard_NNNNNN.npz``, atomically).  A shard already in the folder is
kept, so an interrupted collection continues where it stopped when run again; blocks run in
``jobs`` processes or as Ray tasks (:mod:`train.ray_tasks`), with the same shards.  What a
shard holds and how deals are seeded: :mod:`train.distill`'s docstring; :mod:`train.distill`
imports these names, so ``train.distill.collect`` etc. stay importable."""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Optional, Sequence

import numpy as np

from .distill_tools import _write_shard

_SHARD = "shard_{:06d}.npz"


def deal_seed(seed: int, i: int) -> int:
    """The reset seed of deal ``i`` of a collection with ``seed``."""
    return int(seed) * 1_000_003 + int(i)


def play_block(game_name: str, options: dict, teacher: str, seed: int, block: int,
               deals: Sequence[int], player: Optional[str] = None,
               player_share: float = 0.0, opponent: Optional[str] = None) -> dict:
    """The teacher at every seat of ``deals`` (deal indices); the decisions with two or more
    legal actions as arrays: ``obs`` (float16, one row per decision), ``legal`` (the legal ids
    of every decision, concatenated), ``sizes`` (legal actions per decision), ``action`` (the
    teacher's), ``deal`` (the deal index), ``seat`` and ``n_deals`` (the deals played).
    With a ``player`` (an agent spec), at each decision the player's move is played instead
    of the teacher's with probability ``player_share`` (the label stays the teacher's:
    DAgger's data).  With an ``opponent`` (an agent spec) the teacher holds seat
    ``i % players`` of deal ``i`` and the opponent every other seat; only the teacher's seat is
    stored."""
    from cardenvs.api import make_game
    from cardenvs.arena import import_agents
    from cardenvs.wrappers import policy_info

    from .common import play_deal

    agents = import_agents()
    g = make_game(game_name, **options)
    agent = agents.make_agent(teacher, g, seed=int(seed) * 7919 + int(block))
    other = None
    if player is not None and player_share > 0:
        other = agents.make_agent(player, g, seed=int(seed) * 7919 + int(block) + 1)
    opp = None
    if opponent is not None:
        opp = agents.make_agent(opponent, g, seed=int(seed) * 7919 + int(block) + 2)
    rng = np.random.default_rng([int(seed), int(block), 17])
    s = g.new_state()
    buf = np.empty(g.n_actions + 1, np.int64)
    obs = np.zeros(g.layout.size, np.float32)
    mask = np.zeros(g.n_actions, np.int8)

    rows_obs, rows_legal, sizes, actions, deal_ix, seats = [], [], [], [], [], []

    def ask(who, role: str, spec: str, legal: np.ndarray) -> int:
        """``who``'s move at the current decision (the state as the arena hands it)."""
        a = int(who.act({"observation": obs.copy(), "action_mask": mask.copy()}, legal.copy(),
                        policy_info(who, {}, s)))
        if a not in legal:
            raise ValueError(f"{role} {spec!r} chose {a}, not a legal action")
        return a

    def choose(t: int, seat: int, legal: np.ndarray) -> int:
        g.encode(s, seat, obs)
        mask[:] = 0
        mask[legal] = 1
        if opp is not None and seat != i % g.n_players:
            return ask(opp, "opponent", opponent, legal)
        a = ask(agent, "teacher", teacher, legal)
        played = a
        if other is not None and rng.random() < player_share:
            played = ask(other, "player", player, legal)
        rows_obs.append(obs.astype(np.float16))
        rows_legal.append(legal)
        sizes.append(len(legal))
        actions.append(a)
        deal_ix.append(i)
        seats.append(seat)
        return played

    for i in deals:  # choose reads the deal index i of the deal in play
        play_deal(g, s, deal_seed(seed, i), choose, buf=buf)
    D = g.layout.size
    return {"obs": np.array(rows_obs, np.float16).reshape(-1, D),
            "legal": np.concatenate(rows_legal) if rows_legal else np.zeros(0, np.int64),
            "sizes": np.array(sizes, np.int64), "action": np.array(actions, np.int64),
            "deal": np.array(deal_ix, np.int64), "seat": np.array(seats, np.int64),
            "n_deals": np.int64(len(deals))}


def _block_data(args) -> tuple[int, dict]:
    """A block's task: ``(block, its decisions)``."""
    game, options, teacher, seed, block, deals, out, player, share, opponent = args
    return block, play_block(game, options, teacher, seed, block, deals, player, share, opponent)


def _block_job(args) -> tuple[int, int]:
    """A block's task, its shard written: ``(block, decisions)``."""
    block, data = _block_data(args)
    return block, _write_block(args[6], block, data)


def collect(game: str, teacher: str, deals: int, out: str, *, options: Optional[dict] = None,
            seed: int = 0, block: int = 10, jobs: int = 1, player: Optional[str] = None,
            player_share: float = 0.0, opponent: Optional[str] = None,
            progress: bool = True, ray: Optional[str] = None) -> dict:
    """Write the shards of ``deals`` teacher-played deals into ``out`` (module docstring);
    returns ``{"blocks": written, "kept": already there, "decisions": written}``.  ``ray``
    (a cluster's address, or ``"local"``: :mod:`train.ray_tasks`) plays the blocks as Ray
    tasks instead of ``jobs`` processes, this process writing their shards: the same shards."""
    from cardenvs.api import make_game

    options = dict(options or {})
    for name, v in (("deals", deals), ("block", block), ("jobs", jobs)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be a positive int, got {v!r}")
    if not 0.0 <= player_share <= 1.0:
        raise ValueError(f"player_share must lie in [0, 1], got {player_share!r}")
    g = make_game(game, **options)  # a bad game or option fails here, before any process starts
    from cardenvs.arena import import_agents

    for role, spec in (("teacher", teacher), ("player", player), ("opponent", opponent)):
        reason = None if spec is None else import_agents().unsupported(spec, g)
        if reason is not None:
            raise ValueError(f"{role} {spec!r} cannot play {game}: {reason}")
    os.makedirs(out, exist_ok=True)
    meta_path = os.path.join(out, "collect.json")
    meta = {"game": game, "options": options, "teacher": teacher, "seed": seed, "block": block,
            "player": player, "player_share": player_share, "opponent": opponent}
    old: dict = {}
    if os.path.exists(meta_path):
        with open(meta_path) as f:
            old = json.load(f)
        old_key = {k: old.get(k, {"player": None, "player_share": 0.0, "opponent": None}.get(k))
                   for k in meta}
        if old_key != meta:
            raise ValueError(f"{out!r} holds a collection with {old_key}; this one is {meta}: "
                             f"use another --out")
    with open(meta_path, "w") as f:
        json.dump({**meta, "deals": max(deals, int(old.get("deals", 0)))}, f, indent=1)
    n_blocks = -(-deals // block)

    def complete(b: int) -> bool:  # its shard holds every deal of the block asked for now
        path = os.path.join(out, _SHARD.format(b))
        if not os.path.exists(path):
            return False
        with np.load(path) as z:
            held = int(z["n_deals"]) if "n_deals" in z.files else len(np.unique(z["deal"]))
        return held >= min(deals, (b + 1) * block) - b * block

    todo = [b for b in range(n_blocks) if not complete(b)]
    tasks = [(game, options, teacher, seed, b, list(range(b * block, min(deals, (b + 1) * block))),
              out, player, player_share, opponent) for b in todo]
    written = 0
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=deals, unit="deal", initial=deals - sum(len(t[5]) for t in tasks),
                   desc=f"collect {game} ({teacher})", dynamic_ncols=True, file=sys.stderr)
    pool: Any = None
    if ray is not None:
        from .ray_tasks import RayPool

        pool = RayPool(ray, jobs)
        results = ((b, _write_block(out, b, data))
                   for b, data in pool.imap_unordered(_block_data, tasks))
    elif jobs == 1:
        results = map(_block_job, tasks)
    else:
        import multiprocessing as mp

        pool = mp.get_context("spawn").Pool(jobs)
        results = pool.imap_unordered(_block_job, tasks)
    try:
        for b, n in results:
            written += n
            if bar is not None:
                bar.update(len(tasks[todo.index(b)][5]))
                bar.set_postfix(decisions=written)
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
        if bar is not None:
            bar.close()
    return {"blocks": len(todo), "kept": n_blocks - len(todo), "decisions": written}


def _write_block(out: str, block: int, data: dict) -> int:
    """Write a block's shard; its decisions."""
    _write_shard(os.path.join(out, _SHARD.format(block)), data)
    return len(data["action"])
