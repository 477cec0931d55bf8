"""Ray for ``cardenvs train --ray ADDRESS`` (:mod:`train.pipeline`): the collections' blocks of
deals (``distill collect --ray``) and the arena's (:func:`cardenvs.arena.run_arena`'s
``pool``) as Ray tasks, one CPU each, wherever the cluster has CPUs.

``ADDRESS`` is a running cluster's (``auto``, ``HOST:PORT``; every machine needs this checkout
at the same path or the package installed, and the files a stage reads, e.g. the ``--player``
weights, at the same paths), or ``local``: a Ray instance of ``--jobs`` CPUs on this machine.
Each block is seeded by the collection's (or the arena's) seed and its index, as in the
``--jobs`` processes, so the shards and the arena's results are those of a run without Ray.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Iterable, Iterator, Optional

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def connect(address: str, cpus: int = 1) -> str:
    """Join the Ray cluster at ``address`` (``"local"``: start one of ``cpus`` CPUs here)
    unless this process has joined one already; the cluster's address (for child processes
    to join the same one)."""
    import ray

    if not isinstance(address, str) or not address:
        raise ValueError(f"--ray: a cluster address (auto, HOST:PORT) or local, got {address!r}")
    if not ray.is_initialized():
        env = {"env_vars": {"PYTHONPATH": os.pathsep.join(
            p for p in (_ROOT, os.environ.get("PYTHONPATH", "")) if p)}}
        kw: dict = dict(include_dashboard=False, log_to_driver=False, runtime_env=env)
        try:
            if address == "local":
                ray.init(num_cpus=max(1, int(cpus)), **kw)
            else:
                ray.init(address=address, **kw)
        except (ConnectionError, RuntimeError, ValueError) as e:
            raise ValueError(f"--ray {address}: cannot join a Ray cluster ({e})") from None
    return str(ray.get_runtime_context().gcs_address)


def _call(fn: Callable[[Any], Any], task: Any) -> Any:
    return fn(task)


class RayPool:
    """The part of ``multiprocessing.Pool`` the arena and the collections use
    (:meth:`imap_unordered`, :meth:`terminate`, :meth:`close`, :meth:`join`), each task a Ray
    task of one CPU on the cluster of ``address`` (:func:`connect`)."""

    def __init__(self, address: str, cpus: int = 1):
        import ray

        connect(address, cpus)
        self._ray = ray
        self._remote = ray.remote(num_cpus=1)(_call)
        self._pending: list = []

    def imap_unordered(self, fn: Callable[[Any], Any], tasks: Iterable[Any]) -> Iterator[Any]:
        """``fn(task)`` of every task (a module-level function, pickled by name), in the
        order they finish."""
        ray = self._ray
        fn_ref = ray.put(fn)
        self._pending = [self._remote.remote(fn_ref, t) for t in tasks]
        while self._pending:
            done, self._pending = ray.wait(self._pending, num_returns=1)
            yield ray.get(done[0])

    def terminate(self) -> None:
        """Cancel the tasks not finished."""
        for ref in self._pending:
            self._ray.cancel(ref, force=True)
        self._pending = []

    def close(self) -> None:
        """Nothing to close (the cluster stays up)."""

    def join(self) -> None:
        """Nothing to wait for (:meth:`imap_unordered` returned every result)."""


def shutdown(address: Optional[str]) -> None:
    """Leave the cluster this process joined (a ``local`` one stops)."""
    import ray

    if address is not None and ray.is_initialized():
        ray.shutdown()
