"""Checkpoints of ``python -m train.distill fit`` and ``--resume``.

A fit writes ``OUT/checkpoint.pt`` (:func:`train.common.save_atomic`: a temporary file, then
``os.replace``) at the end of every epoch, after its log row, weights and evaluation, and when
it stops inside an epoch (SIGTERM / Ctrl-C, ``--minutes``): the network, Adam's state, the
numpy and torch random states, the counters, the log and evaluation rows of the whole epochs,
and, inside an epoch, the epoch's order of decisions, the next position in it and the losses so
far.  ``--resume`` continues from it as if never stopped: the same decisions in the same
order, the same negatives drawn, so the same weights, and ``fit.csv`` / ``eval.csv`` keep the
rows of the whole epochs the checkpoint holds (a row of a cut-short epoch, or of an epoch
done after the checkpoint by a fit killed outright, is dropped: its epoch is done again).

A resumed fit takes the checkpoint's settings: the same game, options, collections (and the
same decisions in them), network and learning settings; only :data:`FREE` may change
(``--epochs`` counts the fit's epochs in all, resumed sessions included; ``--minutes`` bounds
each session).  Anything else is refused with a ``ValueError`` before anything is written.
"""

from __future__ import annotations

import os
from typing import Any, Optional

import numpy as np

from .common import load_checkpoint, save_atomic, truncate_csv

#: the settings of a fit that a resumed one may change: the session's budget, the fit's
#: length, the threads, the device and the progress bar
FREE = ("minutes", "epochs", "threads", "progress", "out", "device")

CHECKPOINT = "checkpoint.pt"


def fit_settings(game: str, options: dict, folders: list, **settings: Any) -> dict:
    """The settings of a fit as its checkpoint stores them (``config``): the game, its
    options, the collections (their real paths) and ``settings`` (the resolved network and
    learning settings; an ``init`` file as its real path)."""
    init = settings.get("init")
    return {"game": game, "options": dict(options),
            "data": [os.path.realpath(f) for f in folders],
            **settings, "init": None if init is None else os.path.realpath(init)}


def load_fit(out: str, settings: dict) -> dict:
    """The checkpoint of the fit in ``out`` with ``settings`` (:func:`fit_settings`); a
    ``ValueError`` when there is none, it cannot be read, or it is of another game, options
    or settings (any but :data:`FREE`).  Reads only."""
    ck = load_checkpoint(out, settings["game"], settings["options"], settings, FREE)
    need = ("net", "opt", "np_rng", "torch_rng", "epoch", "steps", "decisions", "held_out",
            "history", "evals", "train_s", "perm", "pos", "losses")
    missing = [k for k in need if k not in ck]
    if missing:
        raise ValueError(f"--resume: the checkpoint in {out!r} is not a distill fit's "
                         f"(it lacks {', '.join(missing)})")
    return ck


def _count(v: Any) -> bool:
    """``v`` is an int >= 0 (not a bool)."""
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 0


def _damage(ck: dict, decisions: int, batch: int) -> Optional[str]:
    """What makes the checkpoint's counters, order and rows inconsistent with each other and
    with ``decisions`` training decisions in batches of ``batch`` (``None``: nothing)."""
    for k in ("epoch", "steps", "decisions", "held_out", "pos"):
        if not _count(ck.get(k)):
            return f"{k}={ck.get(k)!r} is no count"
    t = ck["train_s"]
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 <= t < float("inf"):
        return f"train_s={t!r} is no number of seconds"
    per_epoch = -(-decisions // batch)
    perm, pos, losses = ck.get("perm"), ck["pos"], ck.get("losses")
    inside = 0
    if perm is not None:
        perm = np.asarray(perm)
        if (perm.shape != (decisions,) or perm.dtype.kind not in "iu"
                or not np.array_equal(np.sort(perm), np.arange(decisions))):
            return "the epoch's order is no permutation of the training decisions"
        if not 0 < pos < decisions:
            return f"the position {pos} lies outside the epoch's {decisions} decisions"
        inside = -(-pos // batch)
        if (not isinstance(losses, list) or len(losses) != inside
                or not all(isinstance(x, float) and np.isfinite(x) for x in losses)):
            return "the epoch's losses do not match its position"
    if ck["steps"] != ck["epoch"] * per_epoch + inside:
        return (f"{ck['steps']} updates are not {ck['epoch']} epochs of {per_epoch} and "
                f"{inside} more")
    for k in ("history", "evals"):
        rows = ck[k]
        if not isinstance(rows, list) or not all(
                isinstance(r, dict) and _count(r.get("updates")) and r["updates"] <= ck["steps"]
                for r in rows):
            return f"its {k} rows are no list of rows logged up to its updates"
    return None


def check_data(ck: dict, out: str, decisions: int, held_out: int, batch: int) -> None:
    """A ``ValueError`` when the collections now hold other decisions than when the
    checkpoint was written (a resumed fit must see the same ones), or when the checkpoint's
    state is inconsistent (a damaged or hand-edited file)."""
    if _count(ck["decisions"]) and _count(ck["held_out"]) and \
            (ck["decisions"], ck["held_out"]) != (decisions, held_out):
        raise ValueError(f"--resume: the checkpoint in {out!r} was fitted on {ck['decisions']} "
                         f"training and {ck['held_out']} held-out decisions; the collections "
                         f"now hold {decisions} and {held_out}: a resumed fit needs the same "
                         f"ones (start a new fit in another --out)")
    why = _damage(ck, decisions, batch)
    if why is not None:
        raise ValueError(f"--resume: the checkpoint in {out!r} is damaged: {why}")


def restore(ck: dict, out: str, net, opt, rng: np.random.Generator) -> None:
    """Load the checkpoint's network, Adam state and random states (numpy's ``rng``,
    torch's); a ``ValueError`` when they do not fit."""
    import torch

    try:
        net.load_state_dict(ck["net"])
        opt.load_state_dict(ck["opt"])
        rng.bit_generator.state = ck["np_rng"]
        torch.set_rng_state(ck["torch_rng"])
    except (KeyError, TypeError, ValueError, RuntimeError) as e:
        raise ValueError(f"--resume: the checkpoint in {out!r} does not fit this fit "
                         f"({type(e).__name__}: {e})") from None


def whole_rows(rows: list, steps: int) -> list:
    """The rows of ``rows`` (``fit.csv`` / ``eval.csv`` rows) logged at or before ``steps``
    updates (those of the whole epochs, when ``steps`` ends one)."""
    return [r for r in rows if int(r["updates"]) <= steps]


def drop_later_rows(out: str, steps: int) -> None:
    """Drop the rows of ``fit.csv`` and ``eval.csv`` logged after ``steps`` updates (the end
    of the checkpoint's last whole epoch): work the resumed fit does again."""
    for name in ("fit.csv", "eval.csv"):
        truncate_csv(os.path.join(out, name), "updates", steps)


def save_fit(out: str, settings: dict, net, opt, rng: np.random.Generator, *, epoch: int,
             steps: int, per_epoch: int, decisions: int, held_out: int, history: list,
             evals: list, train_s: float, perm: Optional[np.ndarray] = None, pos: int = 0,
             losses: Optional[list] = None, pending_eval: bool = False) -> str:
    """Write the fit's checkpoint atomically (module docstring); ``perm``, ``pos`` and
    ``losses``: the order, the next position and the losses of an epoch cut short (``None``
    at an epoch's end); ``pending_eval``: the last epoch's evaluation is still to be made (a
    stop signal came first).  Returns its path."""
    import torch

    whole = epoch * per_epoch
    return save_atomic({
        "config": settings, "net": net.state_dict(), "opt": opt.state_dict(),
        "np_rng": rng.bit_generator.state, "torch_rng": torch.get_rng_state(),
        "epoch": int(epoch), "steps": int(steps), "per_epoch": int(per_epoch),
        "decisions": int(decisions), "held_out": int(held_out),
        "history": whole_rows(history, whole), "evals": whole_rows(evals, whole),
        "train_s": float(train_s),
        "perm": None if perm is None else np.asarray(perm, np.int64), "pos": int(pos),
        "losses": list(losses or []), "pending_eval": bool(pending_eval)},
        os.path.join(out, CHECKPOINT))
