"""The tools of :mod:`train.distill` beside ``collect`` and ``fit``: ``relabel`` (a copy of a
collection with one kind of decision labelled by another teacher) and ``average`` (the mean
of several fits' weights), with the shard helpers they share with ``collect`` and ``fit``.
:mod:`train.distill` imports them all; its command line runs them
(``python -m train.distill relabel`` / ``average``)."""

from __future__ import annotations

import glob
import json
import os
import sys
from typing import Sequence

import numpy as np


def _progress(items, desc: str):
    """``items`` under a tqdm bar on stderr."""
    from tqdm import tqdm

    return tqdm(items, desc=desc, unit="shard", file=sys.stderr, dynamic_ncols=True)


def _write_shard(path: str, data: dict) -> None:
    """Write a shard's arrays to ``path`` atomically: an interrupted write leaves no partial
    file behind."""
    tmp = path + ".tmp.npz"
    try:
        np.savez(tmp, **data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


# ---------------------------------------------------------------------------------------------
# average
# ---------------------------------------------------------------------------------------------
#: what a weight file's loader reads besides the sizes: equal in every file of an average, and
#: copied to the average's metadata
_KIND = ("game", "options", "mode", "reward_scale", "context")
_SAME = _KIND + ("hidden", "obs_dim", "feat_dim", "ctx_dim")


def average(game: str, paths: Sequence[str], out: str) -> dict:
    """Weight averaging (a "model soup"): one weight file whose every weight is the mean of
    those of ``paths``, e.g. the fits of successive DAgger rounds that start from the same
    file.  Fine-tunes of one network tend to lie in one basin of the loss, where the mean of
    their weights can do better than each of them (Wortsman et al. 2022, "Model soups"); it
    may also do worse, so measure it (``cardenvs arena``) before using it.

    The files must be of ``game`` and agree on what makes them play alike (:data:`_SAME`:
    options, mode, reward scale, layer sizes); the mean is taken in float32 over the
    stored float16 values and written as float16 to ``out`` (``.npz``).  Its metadata: those
    keys, the first file's ``teacher`` and ``trainer``, ``averaged`` (the paths) and
    ``sources`` (each file's own metadata, with its data, epochs and commands).
    Returns ``{"weights": out, "averaged": [...]}``."""
    from cardenvs.arena import agents_module

    trained = agents_module("trained")
    QNetwork, save_weights = trained.QNetwork, trained.save_weights

    if isinstance(paths, (str, os.PathLike)):
        raise TypeError("paths must be a list of weight files, not one path")
    paths = [os.fspath(p) for p in paths]
    if len(paths) < 2:
        raise ValueError(f"averaging needs two or more weight files, got {len(paths)}")
    nets = [QNetwork(p) for p in paths]  # ValueError for a missing or foreign file
    first = nets[0].meta
    for p, n in zip(paths, nets):
        if n.meta.get("game") != game:
            raise ValueError(f"{p!r} holds a network of {n.meta.get('game')!r}, not {game!r}")
        for key in _SAME:
            if n.meta.get(key) != first.get(key):
                raise ValueError(f"{p!r} has {key}={n.meta.get(key)!r} where {paths[0]!r} has "
                                 f"{first.get(key)!r}: only networks of one kind average")

    layers = []
    for same in zip(*(n.layer_list() for n in nets)):  # one layer, (W, b) of every file
        layers.append((np.mean([w for w, _ in same], axis=0, dtype=np.float32),
                       np.mean([b for _, b in same], axis=0, dtype=np.float32)))
    # the kind and the teacher; save_weights writes the sizes
    meta = {k: first[k] for k in _KIND + ("teacher", "trainer") if k in first}
    meta.update(note=f"the mean of {len(paths)} weight files", averaged=paths,
                sources=[n.meta for n in nets])
    save_weights(out, layers, nets[0].obs_dim, meta, ctx_dim=nets[0].ctx_dim)
    return {"weights": out, "averaged": paths}


# ---------------------------------------------------------------------------------------------
# relabel
# ---------------------------------------------------------------------------------------------
def relabel(game: str, data: str, out: str, teacher: str, blocks: Sequence[str],
            progress: bool = True) -> dict:
    """Copy the collection ``data`` to ``out`` with the label of every decision whose legal
    actions all lie in one of the action ``blocks`` (e.g. Wakeng's ``bury``) replaced by
    ``teacher``'s move on the stored observation; the other labels, the observations and any
    context inputs kept beside the shards are copied as they are.  The teacher must play from
    the observation alone (``rules``, ``trained:PATH``; not a searching agent).  ``collect.json``
    names the new teacher as ``"SOURCE; BLOCK=TEACHER"``.  Returns ``{"decisions": relabelled,
    "changed": labels that differ from the source's, "shards": copied}``."""
    import shutil

    from cardenvs.api import make_game
    from cardenvs.arena import import_agents

    meta_path = os.path.join(data, "collect.json")
    if not os.path.exists(meta_path):
        raise ValueError(f"no collection in {data!r} (no collect.json)")
    with open(meta_path) as f:
        meta = json.load(f)
    if meta["game"] != game:
        raise ValueError(f"{data!r} holds {meta['game']} decisions, not {game}")
    if os.path.abspath(out) == os.path.abspath(data):
        raise ValueError("--out must be another folder than --data (the source is kept)")
    g = make_game(game, **meta.get("options", {}))
    blocks = list(blocks)
    unknown = [b for b in blocks if b not in g.blocks]
    if not blocks or unknown:
        raise ValueError(f"action blocks {unknown or blocks!r}: {game}'s blocks are "
                         f"{', '.join(g.blocks)}")
    agents = import_agents()
    reason = agents.unsupported(teacher, g)
    if reason is not None:
        raise ValueError(f"teacher {teacher!r} cannot play {game}: {reason}")
    agent = agents.make_agent(teacher, g, seed=0)
    if getattr(agent, "needs_state", False):
        raise ValueError(f"teacher {teacher!r} needs the game state; a stored decision holds "
                         f"only the observation")
    paths = sorted(glob.glob(os.path.join(data, "shard_*.npz")))
    if not paths:
        raise ValueError(f"no shards in {data!r}")
    wanted = [list(g.blocks).index(b) for b in blocks]
    record = {"source": data, "blocks": blocks, "teacher": teacher}
    out_meta = os.path.join(out, "collect.json")
    if os.path.exists(out_meta):  # rewriting the same relabelling is fine, another is not
        with open(out_meta) as f:
            old = json.load(f).get("relabelled", {})
        if {k: old.get(k) for k in record} != record:
            raise ValueError(f"{out!r} holds another collection; use another --out")
    os.makedirs(out, exist_ok=True)
    n = changed = 0
    mask = np.zeros(g.n_actions, np.int8)
    for p in _progress(paths, "relabel") if progress else paths:
        with np.load(p) as z:
            arrays = {k: z[k] for k in z.files}
        action = arrays["action"].copy()
        start = np.concatenate([[0], np.cumsum(arrays["sizes"])])
        inside = np.isin(g.block_indices(arrays["legal"]), wanted)  # per legal id of the shard
        for i in range(len(action)):
            legal = arrays["legal"][start[i]:start[i + 1]]
            if not inside[start[i]:start[i + 1]].all():
                continue
            mask[:] = 0
            mask[legal] = 1
            a = int(agent.act({"observation": arrays["obs"][i].astype(np.float32),
                               "action_mask": mask.copy()}, legal.copy()))
            if a not in legal:
                raise ValueError(f"teacher {teacher!r} chose {a}, not a legal action")
            n += 1
            changed += int(a != action[i])
            action[i] = a
        arrays["action"] = action
        _write_shard(os.path.join(out, os.path.basename(p)), arrays)
        for ctx in glob.glob(p[:-len(".npz")] + ".ctx_*.npy"):  # obs and legal ids unchanged
            shutil.copyfile(ctx, os.path.join(out, os.path.basename(ctx)))
    new = dict(meta, teacher=f"{meta['teacher']}; {','.join(blocks)}={teacher}",
               relabelled=dict(record, decisions=n, changed=changed))
    with open(out_meta, "w") as f:  # written last: a copy cut short has none, and fit refuses it
        json.dump(new, f, indent=1)
    return {"decisions": n, "changed": changed, "shards": len(paths)}
