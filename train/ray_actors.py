"""Self-play actors on Ray: :class:`RayActorPool`, the Ray twin of
:class:`train.selfplay.ActorPool` (``train.dmc --backend ray --actors K``).

Each actor is a Ray core actor (``num_cpus=1``) holding a :class:`train.selfplay.SelfPlay`
engine and CPU copies of the learner's network and opponent network; it plays until a batch
of samples is ready and returns it.  The learner keeps one ``collect`` call in flight per
actor (``ray.wait`` hands back whichever finishes first) and sends new weights at most every
``sync_seconds`` (one ``ray.put`` shared by every actor; an actor's calls run in order, so its
next batch is played with them).  The actors run wherever the cluster has CPUs: one machine
(``ray.init(num_cpus=N)``) or many::

    # on the head machine (the learner runs here; it uses CUDA when torch sees a GPU)
    ray start --head --port=6379
    # on every other machine, with the same checkout and environment
    ray start --address=HEAD_IP:6379
    # then on the head
    python -m train.dmc doudizhu --backend ray --ray-address auto --actors 62 --minutes 60

The actors import this checkout: its root is put on their ``PYTHONPATH``
(``runtime_env``), so every machine needs the repository at the same path (or the package
installed).
"""

from __future__ import annotations

import os
import time
from typing import Optional

import numpy as np

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class _Actor:
    """The body of a Ray self-play actor (wrapped by ``ray.remote`` in :class:`RayActorPool`)."""

    def __init__(self, game: str, options: dict, n: int, seed: int, eps, scale: float,
                 pool_frac: float, obs_dim: int, feat_dim: int, hidden: tuple,
                 dtype: str = "float32"):
        import torch

        from .dmc import QNet
        from .selfplay import SelfPlay, torch_scorer

        torch.set_num_threads(1)
        torch.set_flush_denormal(True)
        self.sp = SelfPlay(game, n, seed=seed, eps=eps, scale=scale, pool_frac=pool_frac, **options)
        self.net = QNet(obs_dim, feat_dim, hidden).eval()
        self.opp = QNet(obs_dim, feat_dim, hidden).eval()
        self.score = torch_scorer(self.net, game=self.sp.game, dtype=dtype)
        self.opp_score = torch_scorer(self.opp, game=self.sp.game, dtype=dtype)
        self.has_opp = False

    def set_weights(self, state: dict, which: str) -> None:
        import torch

        sd = {k: torch.from_numpy(np.asarray(v)) for k, v in state.items()}
        (self.net if which == "net" else self.opp).load_state_dict(sd)
        if which == "opp":
            self.has_opp = True

    def collect(self, batch: int):
        """Play until ``batch`` samples are ready: ``(decisions, games, (obs, act, target))``."""
        sp = self.sp
        dec0, games0 = sp.decisions, sp.games
        while sp.ready_count < batch:
            sp.step(self.score, self.opp_score if self.has_opp else None)
        b = sp.pop(batch)
        return sp.decisions - dec0, sp.games - games0, (b.obs, b.act, b.target)


def _numpy_state(net) -> dict:
    return {k: v.detach().cpu().numpy() for k, v in net.state_dict().items()}


class RayActorPool:
    """``actors`` Ray actors playing self-play for one learner (same interface as
    :class:`train.selfplay.ActorPool`: :meth:`publish`, :meth:`get`, :meth:`close`).

    Uses the running Ray instance, or starts / joins one (``ray.init(address=address)``;
    ``address=None`` starts a local one) when none is.
    """

    def __init__(self, game: str, options: dict, net, opp_net, *, actors: int, n: int, seed: int,
                 eps, scale: float, pool_frac: float, batch: int, address: Optional[str] = None,
                 sync_seconds: float = 1.0, dtype: str = "float32"):
        import ray

        from .selfplay import check_sync_seconds

        check_sync_seconds(sync_seconds)  # before a Ray instance is started or joined
        if not ray.is_initialized():
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        self._ray = ray
        self.batch, self.sync_seconds = int(batch), float(sync_seconds)
        remote = ray.remote(num_cpus=1)(_Actor)
        env = {"env_vars": {"PYTHONPATH": os.pathsep.join(
            p for p in (_ROOT, os.environ.get("PYTHONPATH", "")) if p)}}
        eps = np.asarray(eps, np.float64)
        self.actors = [remote.options(runtime_env=env).remote(
            game, options, n, int(seed) * 1000 + i, eps, scale, pool_frac, net.obs_dim, net.feat_dim,
            tuple(net.hidden), dtype) for i in range(actors)]
        self._last_sync = -1e9
        self.publish(net=net, force=True)
        self._inflight = {a.collect.remote(self.batch): a for a in self.actors}

    def publish(self, net=None, opp_net=None, force: bool = False) -> None:
        """Send the learner's weights (at most every ``sync_seconds`` unless ``force``) and a
        new opponent (always)."""
        ray = self._ray
        if net is not None and (force or time.perf_counter() - self._last_sync >= self.sync_seconds):
            ref = ray.put(_numpy_state(net))
            for a in self.actors:
                a.set_weights.remote(ref, "net")
            self._last_sync = time.perf_counter()
        if opp_net is not None:
            ref = ray.put(_numpy_state(opp_net))
            for a in self.actors:
                a.set_weights.remote(ref, "opp")

    def get(self, timeout: float = 1.0):
        """``(decisions, games, (obs, act, target))`` of the next finished batch, or ``None``
        after ``timeout`` seconds."""
        ray = self._ray
        done, _ = ray.wait(list(self._inflight), num_returns=1, timeout=timeout)
        if not done:
            return None
        ref = done[0]
        actor = self._inflight.pop(ref)
        out = ray.get(ref)
        self._inflight[actor.collect.remote(self.batch)] = actor
        return out

    def close(self) -> None:
        ray = self._ray
        for a in self.actors:
            ray.kill(a)
        self.actors, self._inflight = [], {}
