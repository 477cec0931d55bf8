"""The stages' processes of ``cardenvs train`` (:mod:`train.pipeline`): they end with their
pipeline, and one run directory has one writer at a time.

**A stage stops when its pipeline dies.**  Each stage runs in a session of its own (a
terminal's Ctrl-C reaches the pipeline only, which passes SIGTERM on).  A pipeline killed
outright (SIGKILL, the OOM killer) cannot pass anything on, so its stage is told by other
means, and stops the way it stops on SIGTERM (a collection keeps its shards, a fit and the
fine-tuning write their checkpoints):

* on Linux the kernel sends the stage SIGTERM when the pipeline dies
  (``prctl(PR_SET_PDEATHSIG, SIGTERM)``, set by :func:`stage_preexec` between the fork and
  the exec; a pipeline that died before that is seen there, ``os.getppid()`` no longer
  being its pid, and the stage exits before it starts).  The signal follows the *thread*
  that started the stage: the pipeline starts its stages from its main thread;
* elsewhere the stage's module watches its parent (:func:`watch_parent`, called first thing
  by ``train.distill`` and ``train.finetune`` when :data:`PARENT_ENV` names the pipeline's
  pid): a daemon thread that sends the process SIGTERM, once, when its parent is no longer
  that pid.

**The run directory's lock.**  ``OUT/run.lock`` (:class:`RunLock`) holds the pid of the
pipeline working in ``OUT`` and of its running stage (with their start times, so that a
recycled pid is not taken for them).  A second ``cardenvs train`` in ``OUT`` (``--resume``)
is refused while that pipeline lives; when only its stage lives (the pipeline was killed and
the stage is writing its checkpoint) it waits up to :data:`LOCK_WAIT_S` seconds for the
stage to end, and is refused if it does not, naming the process.  The pipeline removes the
lock when it ends.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from typing import Callable, Optional

#: the environment variable a stage's process finds its pipeline's pid in
PARENT_ENV = "CARDENVS_TRAIN_PARENT"
#: the lock file of a run directory
LOCK_NAME = "run.lock"
#: seconds a new session waits for the stage of a killed pipeline to end
LOCK_WAIT_S = 60.0
#: seconds between two looks of :func:`watch_parent`'s thread at the parent
WATCH_S = 1.0

_PR_SET_PDEATHSIG = 1
_PR_GET_PDEATHSIG = 2


def _prctl() -> Optional[Callable[..., int]]:
    """libc's ``prctl`` (Linux), or ``None``."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl
    except (OSError, AttributeError):
        return None


def stage_preexec(parent: int) -> Optional[Callable[[], None]]:
    """The ``preexec_fn`` of a stage's ``Popen``: SIGTERM to the stage when ``parent`` (the
    pipeline's pid, ``os.getpid()`` there) dies; ``None`` where ``prctl`` is missing (then
    :func:`watch_parent` alone watches)."""
    prctl = _prctl()
    if prctl is None:
        return None
    term = int(signal.SIGTERM)

    def preexec() -> None:  # in the forked child, before the exec: no imports, no locks
        prctl(_PR_SET_PDEATHSIG, term, 0, 0, 0)
        if os.getppid() != parent:  # the pipeline died before prctl: do not start at all
            os._exit(128 + term)

    return preexec


def kernel_watches() -> bool:
    """Whether the kernel sends this process a signal when its parent dies (``prctl``)."""
    prctl = _prctl()
    if prctl is None:
        return False
    import ctypes

    sig = ctypes.c_int(0)
    return prctl(_PR_GET_PDEATHSIG, ctypes.byref(sig), 0, 0, 0) == 0 and sig.value != 0


def start_parent_watch(parent: int, every: float = WATCH_S) -> threading.Thread:
    """A daemon thread that sends this process SIGTERM, once, as soon as its parent is no
    longer ``parent`` (the parent died and the process was adopted)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        os.kill(os.getpid(), signal.SIGTERM)

    t = threading.Thread(target=watch, name="parent-watch", daemon=True)
    t.start()
    return t


def watch_parent() -> None:
    """Called first by a stage's module: when :data:`PARENT_ENV` names the pipeline that
    started this process, stop (SIGTERM, the module's clean stop) when it dies: the kernel
    does it where :func:`stage_preexec` set it up, else a thread (:func:`start_parent_watch`).
    The variable is removed from the environment (the stage's own workers do not watch)."""
    raw = os.environ.pop(PARENT_ENV, None)
    if not raw:
        return
    try:
        parent = int(raw)
    except ValueError:
        return
    if os.getppid() != parent:  # gone already
        os.kill(os.getpid(), signal.SIGTERM)
        return
    if not kernel_watches():
        start_parent_watch(parent)


# ---------------------------------------------------------------------------------------------
# the run directory's lock
# ---------------------------------------------------------------------------------------------
def proc_start(pid: int) -> Optional[str]:
    """The start time of process ``pid`` (``/proc/PID/stat``, clock ticks since boot), or
    ``None`` where it cannot be read (no such process, no ``/proc``)."""
    try:
        with open(f"/proc/{int(pid)}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError, ValueError):
        return None
    return fields[19] if len(fields) > 19 else None


def proc_alive(pid: Optional[int], start: Optional[str] = None) -> bool:
    """Whether process ``pid`` runs (a zombie does not), and is the one that started at
    ``start`` (:func:`proc_start`) when that is given."""
    if not pid or pid <= 0:
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, another user's
    try:
        with open(f"/proc/{int(pid)}/stat") as f:
            tail = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return True  # no /proc: os.kill's answer
    if tail and tail[0] in ("Z", "X"):
        return False
    return start is None or len(tail) <= 19 or tail[19] == start


class RunLock:
    """``OUT/run.lock`` (module docstring): :meth:`acquire` it, :meth:`stage` records the
    running stage's process, :meth:`release` removes it."""

    def __init__(self, out: str):
        self.out = out
        self.path = os.path.join(out, LOCK_NAME)
        self.held = False

    def read(self) -> dict:
        """The lock's record (``{}`` when there is none or it cannot be read)."""
        try:
            with open(self.path) as f:
                obj = json.load(f)
        except (OSError, ValueError):
            return {}
        return obj if isinstance(obj, dict) else {}

    def _write(self, rec: dict) -> None:
        tmp = f"{self.path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            json.dump(rec, f)
        os.replace(tmp, self.path)

    def acquire(self, wait_s: Optional[float] = None) -> None:
        """Take the lock of ``out`` for this process; a ``ValueError`` while another pipeline
        works there, or while the stage of a killed one still runs after ``wait_s`` seconds
        (default :data:`LOCK_WAIT_S`)."""
        wait_s = LOCK_WAIT_S if wait_s is None else wait_s
        os.makedirs(self.out, exist_ok=True)
        me = {"pipeline": os.getpid(), "pipeline_start": proc_start(os.getpid())}
        t0, said = time.monotonic(), False
        while True:
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                old = self.read()
            else:
                with os.fdopen(fd, "w") as f:
                    json.dump(me, f)
                self.held = True
                return
            if proc_alive(old.get("pipeline"), old.get("pipeline_start")) and \
                    old.get("pipeline") != os.getpid():
                raise ValueError(f"{self.out!r} is in use: another cardenvs train (pid "
                                 f"{old['pipeline']}) runs there; wait for it to end or stop it "
                                 f"(kill -TERM {old['pipeline']}) before --resume")
            stage = old.get("stage")
            if proc_alive(stage, old.get("stage_start")):
                if time.monotonic() - t0 >= wait_s:
                    raise ValueError(
                        f"{self.out!r} is in use: the stage {old.get('stage_name')!r} of a "
                        f"stopped cardenvs train (pid {stage}) still runs there after "
                        f"{wait_s:.0f} s; wait for it to end or stop it (kill -TERM {stage}) "
                        f"before --resume")
                if not said:
                    print(f"cardenvs train: waiting for the stage {old.get('stage_name')!r} of "
                          f"the previous session (pid {stage}) to stop in {self.out}",
                          file=sys.stderr, flush=True)
                    said = True
                time.sleep(0.2)
                continue
            try:  # a stale lock: nobody lives there
                os.remove(self.path)
            except FileNotFoundError:
                pass

    def stage(self, pid: Optional[int], name: Optional[str] = None) -> None:
        """Record the running stage's process (``None``: no stage runs)."""
        rec = {"pipeline": os.getpid(), "pipeline_start": proc_start(os.getpid())}
        if pid is not None:
            rec.update(stage=int(pid), stage_start=proc_start(pid), stage_name=name)
        self._write(rec)

    def release(self) -> None:
        """Remove the lock (this process's only)."""
        if self.held and self.read().get("pipeline") == os.getpid():
            try:
                os.remove(self.path)
            except FileNotFoundError:
                pass
        self.held = False
