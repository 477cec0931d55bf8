"""``cardenvs train`` killed outright (``train/pipeline_procs.py``): a SIGKILL of the pipeline
stops its running stage the way SIGTERM does (a collection keeps its shards, a fit writes
its checkpoint) within seconds, and ``--resume`` completes the run; the run directory's lock
refuses a second writer; the portable parent watch (a thread) stops a process whose parent
died."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

pytest.importorskip("torch")

from test_pipeline import STAGES, _launches, _start, _state  # noqa: E402

from cardenvs.train import pipeline  # noqa: E402
from cardenvs.train.pipeline_procs import LOCK_NAME, proc_alive, proc_start  # noqa: E402


def _lock(out) -> dict:
    try:
        with open(os.path.join(out, LOCK_NAME)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def _gone(pid: int, start, within: float) -> float:
    """Seconds until process ``pid`` ended (fails after ``within``)."""
    t0 = time.time()
    while proc_alive(pid, start):
        assert time.time() - t0 < within, f"pid {pid} still runs {within} s after its parent died"
        time.sleep(0.05)
    return time.time() - t0


def _kill_during(out, stage: str, ready, resume: bool) -> dict:
    """Start the pipeline (``--resume``), wait until ``stage``'s process runs and ``ready()``,
    SIGKILL the pipeline; the lock's record then (the stage's pid), or ``{}`` when the stage
    ended before that."""
    runs = _launches(out, stage)
    p = _start(out, *(["--resume"] if resume else []))
    t0 = time.time()
    try:
        while True:
            state, lock = _state(out), _lock(out)
            if (state.get("current") == stage and _launches(out, stage) > runs
                    and lock.get("stage_name") == stage and ready()):
                break
            if stage in state.get("done", []):
                lock = {}
                break
            assert p.poll() is None, p.communicate()[0]
            assert time.time() - t0 < 600
            time.sleep(0.05)
    finally:
        p.kill()  # SIGKILL: nothing of the pipeline runs after it
        p.communicate()
    return lock


def _log(out, stage: str) -> str:
    return (out / "logs" / f"{stage}.log").read_text()


def test_sigkill_of_the_pipeline_stops_its_stage_and_resume_completes(tmp_path):
    out = tmp_path / "run"
    data = out / "imitate" / "data"
    # 1. during the imitation's collection, once it wrote a shard
    lock = _kill_during(out, "imitate.collect", lambda: any(data.glob("shard_*.npz")), False)
    assert lock, "the collection ended before it could be killed"
    took = _gone(lock["stage"], lock.get("stage_start"), 10.0)
    # it stopped as on SIGTERM (distill collect's KeyboardInterrupt), its shards intact
    assert "stopped; the shards written are kept" in _log(out, "imitate.collect"), took
    shards = sorted(data.glob("shard_*.npz"))
    assert shards and not list(data.glob("*.tmp*"))
    for s in shards:
        with np.load(s) as z:
            assert len(z["action"]) > 0
    assert _state(out)["current"] == "imitate.collect"
    # 2. during a fit, once it wrote its first checkpoint (the next fit if one ends first)
    for fit in ("imitate.fit", "dagger1.fit"):
        ckpt = out / fit.replace(".", "/") / "checkpoint.pt"
        before = ckpt.stat().st_mtime_ns if ckpt.exists() else None
        lock = _kill_during(out, fit, lambda: ckpt.exists() and (
            before is None or ckpt.stat().st_mtime_ns != before), True)
        if lock:
            break
    assert lock, "no fit could be killed while it ran"
    _gone(lock["stage"], lock.get("stage_start"), 20.0)
    assert "[distill] stopped by SIGTERM" in _log(out, fit)
    import torch

    saved = torch.load(ckpt, map_location="cpu", weights_only=False)
    assert isinstance(saved, dict) and saved
    assert _state(out)["current"] == fit and fit not in _state(out)["done"]
    # 3. --resume completes the run; the fit continued from its checkpoint
    p = _start(out, "--resume")
    log, _ = p.communicate(timeout=900)
    assert p.returncode == 0, log
    assert list(_state(out)["done"]) == STAGES
    assert (out / "wakeng.npz").exists() and not (out / LOCK_NAME).exists()
    last = [ln for ln in _log(out, fit).splitlines() if ln.startswith("$ ")][-1]
    assert last.endswith("--resume"), last


def _run_dir(tmp_path) -> str:
    out = str(tmp_path / "run")
    config, state = pipeline.prepare("wakeng", {}, 0.02, out, False, 1, {}, "cpu")
    os.makedirs(out)
    pipeline._write_json(os.path.join(out, "config.json"), config)
    pipeline._write_json(os.path.join(out, "state.json"), state)
    return out


def _files(root) -> dict:
    return {os.path.join(d, f): open(os.path.join(d, f), "rb").read()
            for d, _, fs in os.walk(root) for f in fs}


def test_resume_is_refused_while_another_writer_lives(tmp_path, capsys, monkeypatch):
    from cardenvs.train import pipeline_procs

    out = _run_dir(tmp_path)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    try:
        lock = os.path.join(out, LOCK_NAME)
        # a pipeline that lives: refused at once
        with open(lock, "w") as f:
            json.dump({"pipeline": sleeper.pid, "pipeline_start": proc_start(sleeper.pid)}, f)
        before = _files(out)
        assert pipeline.main(["wakeng", "--out", out, "--resume", "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert f"another cardenvs train (pid {sleeper.pid}) runs there" in err, err
        assert _files(out) == before
        # a dead pipeline whose stage lives: waited for, then refused, naming the stage
        monkeypatch.setattr(pipeline_procs, "LOCK_WAIT_S", 0.5)
        with open(lock, "w") as f:
            json.dump({"pipeline": dead.pid, "stage": sleeper.pid, "stage_name": "imitate.fit",
                       "stage_start": proc_start(sleeper.pid)}, f)
        before = _files(out)
        t0 = time.time()
        assert pipeline.main(["wakeng", "--out", out, "--resume", "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert "waiting for the stage 'imitate.fit'" in err and time.time() - t0 >= 0.5
        assert f"'imitate.fit' of a stopped cardenvs train (pid {sleeper.pid}) still runs" in err
        assert _files(out) == before
        # a recycled pid (another start time) is no writer: the stale lock is taken over
        rl = pipeline_procs.RunLock(out)
        with open(lock, "w") as f:
            json.dump({"pipeline": sleeper.pid, "pipeline_start": "1"}, f)
        rl.acquire(wait_s=0)
        assert rl.read()["pipeline"] == os.getpid()
        rl.release()
        assert not os.path.exists(lock)
    finally:
        sleeper.kill()
        sleeper.wait()


def test_parent_watch_thread_stops_an_orphan(tmp_path):
    """The portable fallback (no ``prctl``): a process whose parent is SIGKILLed gets SIGTERM
    from its watch thread within a second or so."""
    mark = tmp_path / "mark"
    child = ("import os, signal, sys, time\n"
             "from cardenvs.train.pipeline_procs import kernel_watches, start_parent_watch\n"
             "def term(s, f):\n"
             f"    open({str(mark)!r}, 'w').write('SIGTERM %d' % kernel_watches()); sys.exit(0)\n"
             "signal.signal(signal.SIGTERM, term)\n"
             "start_parent_watch(os.getppid(), 0.05)\n"
             "print(os.getpid(), flush=True)\n"
             "time.sleep(60)\n")
    middle = ("import subprocess, sys, time\n"
              f"c = subprocess.Popen([sys.executable, '-c', {child!r}])\n"
              "time.sleep(60)\n")
    p = subprocess.Popen([sys.executable, "-c", middle], stdout=subprocess.PIPE, text=True)
    pid = int(p.stdout.readline())
    start = proc_start(pid)
    assert proc_alive(pid, start)
    p.kill()
    p.wait()
    _gone(pid, start, 10.0)
    assert mark.read_text() == "SIGTERM 0"  # the thread's signal, not the kernel's
