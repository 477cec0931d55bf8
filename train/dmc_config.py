"""The settings of a :mod:`train.dmc` run: :class:`Config` (stored in the checkpoint), its
checks (:func:`check_config`), and the dtypes self-play may score in (:data:`ACT_DTYPES`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import torch

from .common import check_common, check_train_dtype, eval_interval_s
from .selfplay import check_sync_seconds

#: how often the actors get the learner's weights at most (``--sync-seconds``), per backend:
#: local processes every 0.1 s (after every update, 81 a second, wakeng 3 min, 2 int8 actors,
#: bfloat16 learner: 14,258 updates; every 0.1 s: 17,423, the copy and the actors' new int8
#: weights no longer every step), Ray every second (a ``ray.put`` and a message per actor)
SYNC_SECONDS = {"process": 0.1, "ray": 1.0}

#: the values of ``Config.act_dtype`` / ``--act-dtype``: the dtype self-play scores in
ACT_DTYPES = ("float32", "bfloat16", "int8")


def act_dtype(name: str):
    """The torch dtype of an :data:`ACT_DTYPES` name (``ValueError`` for another); ``"int8"``
    is :class:`train.dmc_net.FactoredScorer`'s on a CPU only (:mod:`train.quant`)."""
    if name not in ACT_DTYPES:
        raise ValueError(f"act_dtype must be one of {', '.join(ACT_DTYPES)}, got {name!r}")
    return getattr(torch, name)


@dataclass
class Config:
    """Every setting of a run (stored in the checkpoint)."""

    game: str
    options: dict = field(default_factory=dict)
    out: str = "runs/dmc"
    minutes: float = 10.0
    seed: int = 0
    envs: int = 64
    hidden: tuple = (512, 256, 256, 128)
    lr: float = 3e-4
    batch: int = 512
    grad_clip: float = 10.0
    eps: float = 0.4
    eps_alpha: float = 7.0
    pool_size: int = 8
    pool_frac: float = 0.25
    refresh: int = 250
    reward_scale: Any = "auto"
    eval_agents: tuple = ("rules", "random")
    eval_deals: int = 100
    eval_minutes: Optional[float] = None
    log_seconds: float = 10.0
    ckpt_minutes: float = 5.0
    device: str = "auto"
    threads: int = 1
    max_updates: int = 0
    progress: bool = True
    teacher: Optional[str] = None
    teacher_eps: float = 0.1
    teacher_mix: float = 0.0
    teacher_minutes: Optional[float] = None
    teacher_updates: int = 0
    teacher_margin: float = 0.0
    teacher_margin_weight: float = 1.0
    replay: int = 1
    replay_size: int = 65536
    engine: str = "vector"
    actors: int = 0
    init: Optional[str] = None
    backend: str = "process"
    ray_address: Optional[str] = None
    act_dtype: str = "float32"
    train_dtype: str = "float32"
    sync_seconds: Optional[float] = None

    def eval_interval_s(self) -> float:
        """Seconds between periodic evaluations (``eval_minutes``, else the budget / 6 in
        [0.5, 15] minutes: :func:`train.common.eval_interval_s`)."""
        return eval_interval_s(self.minutes, self.eval_minutes, 6.0)


def check_config(cfg: Config) -> None:
    """``ValueError`` / ``TypeError`` naming the first setting of ``cfg`` out of range."""
    check_common(cfg)
    for name in ("envs", "batch", "pool_size", "refresh"):
        v = getattr(cfg, name)
        if not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be a positive int, got {v!r}")
    if not 0.0 <= cfg.eps <= 1.0 or not 0.0 <= cfg.pool_frac <= 1.0:
        raise ValueError("eps and pool_frac must lie in [0, 1]")
    if cfg.eps_alpha < 0:
        raise ValueError(f"eps_alpha must be >= 0, got {cfg.eps_alpha!r}")
    if cfg.minutes < 0 or cfg.lr <= 0 or cfg.eval_deals < 0:
        raise ValueError("minutes and eval_deals must be >= 0 and lr > 0")
    if cfg.teacher is not None and not isinstance(cfg.teacher, str):
        raise TypeError(f"teacher must be an agent name (str) or None, got {type(cfg.teacher).__name__}")
    if not 0.0 <= cfg.teacher_eps <= 1.0 or not 0.0 <= cfg.teacher_mix <= 1.0:
        raise ValueError(f"teacher_eps and teacher_mix must lie in [0, 1], got {cfg.teacher_eps!r}, "
                         f"{cfg.teacher_mix!r}")
    if cfg.teacher_minutes is not None and not cfg.teacher_minutes >= 0:
        raise ValueError(f"teacher_minutes must be >= 0 or None, got {cfg.teacher_minutes!r}")
    if not cfg.teacher_margin >= 0 or not cfg.teacher_margin_weight >= 0:
        raise ValueError(f"teacher_margin and teacher_margin_weight must be >= 0, got "
                         f"{cfg.teacher_margin!r}, {cfg.teacher_margin_weight!r}")
    if not isinstance(cfg.replay, int) or cfg.replay < 1:
        raise ValueError(f"replay must be an int >= 1, got {cfg.replay!r}")
    if cfg.replay > 1 and (not isinstance(cfg.replay_size, int) or cfg.replay_size < cfg.batch):
        raise ValueError(f"replay_size must be an int >= batch ({cfg.batch}), got {cfg.replay_size!r}")
    if cfg.engine not in ("vector", "lockstep"):
        raise ValueError(f"engine must be 'vector' or 'lockstep', got {cfg.engine!r}")
    if not isinstance(cfg.actors, int) or cfg.actors < 0:
        raise ValueError(f"actors must be an int >= 0, got {cfg.actors!r}")
    act_dtype(cfg.act_dtype)
    check_train_dtype(cfg.train_dtype)
    check_sync_seconds(cfg.sync_seconds, allow_none=True)
    if cfg.act_dtype != "float32" and cfg.engine != "vector":
        raise ValueError(f"act_dtype {cfg.act_dtype!r} needs the vector engine (--engine vector)")
    if cfg.backend not in ("process", "ray"):
        raise ValueError(f"backend must be 'process' or 'ray', got {cfg.backend!r}")
    if cfg.actors and cfg.engine != "vector":
        raise ValueError("actors need the vector engine (--engine vector)")
    if not isinstance(cfg.teacher_updates, int) or cfg.teacher_updates < 0:
        raise ValueError(f"teacher_updates must be an int >= 0, got {cfg.teacher_updates!r}")

