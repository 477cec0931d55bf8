"""Issue 50's resume target for ``cardenvs train``, measured: "killing the run at random times 5
times and resuming loses at most one checkpoint interval and gives a file of the same strength
class (its CI overlaps the uninterrupted run's)".

The script runs ``cardenvs train wakeng --hours H`` twice, one after the other, in two folders
of ``--work``: once uninterrupted, and once stopped ``--kills`` times (5) at seeded random
moments of the run's clock (one uniform draw in each of ``--kills`` equal slices of 3-85% of
the uninterrupted run's minutes, so the stops spread over the stages), each stop followed by
the same command with ``--resume``::

    .venv/bin/python -m benchmarks.pipeline_resume                 # a tiny budget (--hours 0.02)
    .venv/bin/python -m benchmarks.pipeline_resume --hours 0.1     # writes benchmarks/results/

**The signal.**  Every stop is a SIGTERM of the pipeline's process, the clean stop
``cardenvs train`` promises for SIGTERM / Ctrl-C (each stage stops at its checkpoint, the run
records the time spent and ``--resume`` continues).  A SIGKILL of the pipeline's process alone
also stops its stage as SIGTERM does (the stage watches its parent), but the pipeline records
no time for the moment it died.  ``--sigkill K`` makes the K-th stop a SIGKILL of the pipeline
*and* its stage's process (a lost machine, the OOM killer): what the stages' own checkpoints
promise (a fit resumes from its last epoch, the fine-tuning from its last evaluation); it is
no part of the target.

**What is measured per stop**, from the run's own files (polled every 0.2 s) and in the stage's
own unit: the stage, the run's clock and the stage's progress at the stop (collection: blocks
= shards written; fit: updates, in its checkpoint; fine-tuning: iterations, rows of its
``log.csv``; arena: deals, its progress file), the progress the resumed stage restarts from
(what is on disk when ``--resume`` starts: what the stage loads), the work lost (whole units,
and seconds: from the time the restart point was reached, or the start of the stage in this
session, to the stop; nothing when the stage saved it at the stop) and the checkpoint interval
(the promised one, in units: a block, an update, an iteration, a deal; relabelling has no
checkpoint: its interval is the stage; and in seconds: the longest time between two records
of the stage in the stopped run, its start counted as one).  A stop meets the target when no
whole unit is lost and the seconds lost are at most one interval's.

**Strength.**  Each run's arena against ``rules`` (the pipeline's last stage: duplicate
deals, paired 95% CI, seed 1): the two differences per deal with their CIs and whether the
CIs overlap; both weight files are loaded as ``trained:PATH`` agents.

Written: ``--results``/``pipeline_resume.json`` and ``.md`` (default ``benchmarks/results/``).
"""

from __future__ import annotations

import argparse
import csv
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
GAME = "wakeng"
#: seconds between two looks at the run's files
POLL_S = 0.2
#: the slices of the uninterrupted run's clock the stops are drawn from
SPAN = (0.03, 0.85)
#: the promised checkpoint interval per stage kind and signal: (unit, units)
UNITS = {"collect": "blocks", "fit": "updates", "finetune": "iterations", "arena": "deals",
         "relabel": "stage", "report": "stage"}


# ---------------------------------------------------------------------------------------------
# the run directory's files
# ---------------------------------------------------------------------------------------------
def _json(path: str) -> dict:
    try:
        with open(path) as f:
            obj = json.load(f)
        return obj if isinstance(obj, dict) else {}
    except (OSError, ValueError):
        return {}


def _mtime(path: str) -> Optional[float]:
    try:
        return os.path.getmtime(path)
    except OSError:
        return None


def _checkpoint(path: str) -> dict:
    """The counters of a fit's or the fine-tuning's ``checkpoint.pt`` (``{}`` without one)."""
    import torch

    try:
        ck = torch.load(path, map_location="cpu", weights_only=False)
    except Exception:  # absent, or replaced while read: no checkpoint at this look
        return {}
    if "counters" in ck:  # the fine-tuning's
        return {"iterations": int(ck["counters"]["iterations"]),
                "train_s": float(ck["counters"]["train_s"])}
    return {"updates": int(ck.get("steps", 0)), "epoch": int(ck.get("epoch", 0)),
            "train_s": float(ck.get("train_s", 0.0))}


def _rows(path: str) -> list[dict]:
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except OSError:
        return []


class Watch:
    """What the stages of a run directory have saved, stage by stage: ``records[stage]``, the
    times (``time.time()``) at which each new progress value was first on disk."""

    def __init__(self, out: str):
        self.out = out
        self.config = _json(os.path.join(out, "config.json"))
        self.records: dict[str, list[tuple[float, float]]] = {}
        self._ck_mtime: dict[str, Optional[float]] = {}
        self._ck: dict[str, dict] = {}

    def stage(self, name: str) -> dict:
        """The plan's entry of stage ``name`` (``config.json``)."""
        if not self.config:
            self.config = _json(os.path.join(self.out, "config.json"))
        return next(s for s in self.config.get("stages", []) if s["name"] == name)

    def progress(self, name: str) -> tuple[float, Optional[float]]:
        """``(progress in the stage's unit, when it was reached)`` as the stage's files hold it
        now (the time: a shard's or checkpoint's mtime, a log row's first look, else None)."""
        st = self.stage(name)
        kind, out = st["kind"], os.path.join(self.out, st.get("out", ""))
        if kind == "collect":
            times = sorted(t for t in map(_mtime, glob.glob(os.path.join(out, "shard_*.npz")))
                           if t is not None)
            return float(len(times)), (times[-1] if times else None)
        if kind in ("fit", "finetune"):
            path = os.path.join(out, "checkpoint.pt")
            m = _mtime(path)
            if name not in self._ck or m != self._ck_mtime.get(name):
                self._ck[name], self._ck_mtime[name] = _checkpoint(path), m
            ck = self._ck[name]
            if kind == "fit":
                return float(ck.get("updates", 0)), (m if ck else None)
            rows = _rows(os.path.join(out, "log.csv"))
            return float(rows[-1]["iteration"]) if rows else 0.0, None
        if kind == "arena":
            paths = glob.glob(os.path.join(out, "*.progress.json"))
            done = _json(paths[0]).get("done", 0) if paths else 0
            return float(done), (_mtime(paths[0]) if paths else None)
        return 0.0, None

    def look(self, name: str, now: float) -> tuple[float, float]:
        """:meth:`progress`, kept in ``records`` (a value's time: when first seen, or its
        file's mtime); the latest ``(value, time)``."""
        value, when = self.progress(name)
        rec = self.records.setdefault(name, [])
        if not rec or value != rec[-1][0]:
            rec.append((value, when if when is not None else now))
        return rec[-1]

    def reached(self, name: str, value: float) -> Optional[float]:
        """When ``value`` was first seen in stage ``name`` (``None``: never, in this watch)."""
        return next((t for v, t in self.records.get(name, []) if v == value), None)


# ---------------------------------------------------------------------------------------------
# running and stopping
# ---------------------------------------------------------------------------------------------
def _command(out: str, hours: float, extra: Sequence[str], resume: bool) -> list[str]:
    return ["train", GAME, "--hours", f"{hours:g}", "--out", out, "--no-progress", *extra,
            *(["--resume"] if resume else [])]


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def session(out: str, hours: float, extra: Sequence[str], resume: bool, watch: Watch,
            stop_at: Optional[float] = None, sig: int = signal.SIGTERM,
            log: Optional[Any] = None) -> dict:
    """One ``cardenvs train`` process on ``out``; with ``stop_at`` (seconds of the run's
    clock) it is stopped by ``sig`` then (SIGKILL: the pipeline and its stage's process).
    Returns the exit status, the session's seconds and, for a stop, what it stopped."""
    state0 = _json(os.path.join(out, "state.json"))
    base = float(state0.get("elapsed_s", 0.0))
    argv = _command(out, hours, extra, resume)
    t0 = time.time()
    p = subprocess.Popen([sys.executable, "-m", "cardenvs.cli", *argv], stdout=log,
                         stderr=subprocess.STDOUT, env=dict(os.environ, PYTHONUNBUFFERED="1"))
    started: dict[str, float] = {}  # stage -> when this session was first seen in it
    ready = None  # when the pipeline first wrote its state in this session
    stop: Optional[dict] = None
    try:
        while p.poll() is None:
            time.sleep(POLL_S)
            now = time.time()
            if ready is None and (_mtime(os.path.join(out, "state.json")) or 0) >= t0:
                ready = now
            current = _json(os.path.join(out, "state.json")).get("current")
            if ready is not None and current is not None:
                started.setdefault(current, now)
                watch.look(current, now)
            clock = base + now - t0
            if (stop is None and stop_at is not None and ready is not None
                    and now - ready >= 1.0 and clock >= stop_at):
                value = watch.look(current, now)[0] if current else 0.0
                stop = {"signal": signal.Signals(sig).name, "run_s": round(clock, 1),
                        "stage": current, "at_stop": value, "t": now,
                        "stage_started": started.get(current, ready)}
                if sig == signal.SIGKILL:
                    for child in _children(p.pid):
                        os.kill(child, signal.SIGKILL)
                p.send_signal(sig)
                p.wait(timeout=900)
    finally:
        if p.poll() is None:  # this process is leaving (an error, Ctrl-C): so is the run
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=900)
    return {"rc": p.returncode, "seconds": round(time.time() - t0, 1), "stop": stop,
            "started": started}


def lost_work(out: str, watch: Watch, stop: dict) -> dict:
    """What a stop cost (module docstring): the stage it stopped, its progress at the stop and
    on disk for ``--resume``, the whole units and seconds lost, and the interval."""
    state = _json(os.path.join(out, "state.json"))
    name = state.get("current")  # the stage --resume continues (None: between stages)
    row: dict[str, Any] = {"signal": stop["signal"], "run_s": stop["run_s"],
                           "stage_at_stop": stop["stage"], "stage": name}
    if name is None or name != stop["stage"]:  # the stage ended before the signal reached it
        row.update(kind=None, unit=None, at_stop=None, resumed_from=None, lost_units=0,
                   lost_s=0.0, interval_units=None, interval_s=None)
        return row
    st = watch.stage(name)
    kind = st["kind"]
    watch.look(name, stop["t"])  # what the stage saved at its stop (reached by then at latest)
    saved, saved_t = watch.progress(name)
    if kind == "finetune":  # the iterations the checkpoint holds; reached when logged
        ck = _checkpoint(os.path.join(out, st["out"], "checkpoint.pt"))
        saved = float(ck.get("iterations", 0))
        saved_t = watch.reached(name, saved)
    at_stop = stop["at_stop"] if kind != "fit" else max(stop["at_stop"], saved)
    t_stop, t_start = stop["t"], stop["stage_started"]
    if kind == "fit" and saved_t is not None and saved_t >= t_stop - POLL_S:
        saved_t = t_stop  # written at the stop, after the update in progress: nothing lost
    if kind == "arena" and saved_t is not None and saved_t >= t_stop - POLL_S:
        saved_t = t_stop  # saved at the stop: the deal in play is replayed
    if kind in ("relabel", "report"):
        saved_t = None
    since = t_start if saved_t is None or saved_t < t_start else saved_t
    interval_units = 1
    if stop["signal"] == "SIGKILL" and kind == "fit":
        interval_units = "1 epoch"
    elif stop["signal"] == "SIGKILL" and kind == "finetune":
        interval_units = f"{st['eval_every']} (an evaluation)"
    row.update(kind=kind, unit=UNITS[kind], at_stop=at_stop, resumed_from=saved,
               lost_units=max(0.0, at_stop - saved), lost_s=round(max(0.0, t_stop - since), 1),
               interval_units=interval_units if kind not in ("relabel", "report") else "stage",
               stage_started_s=round(t_stop - t_start, 1))
    return row


def intervals(watch: Watch, run_dir: str, rows: list[dict], sessions: list[dict]) -> None:
    """Each stop's interval in seconds: the longest time between two records of its stage in
    the stopped run (shards, checkpoints, log rows, progress saves; each session's start in
    the stage counted as one); relabelling (no checkpoint): the stage's seconds."""
    state = _json(os.path.join(run_dir, "state.json"))
    for row in rows:
        name, kind = row["stage"], row["kind"]
        if name is None:
            continue
        if kind in ("relabel", "report"):
            row["interval_s"] = round(float(state["spent_s"].get(name, 0.0)), 1)
            continue
        times = sorted({t for _, t in watch.records.get(name, [])}
                       | {s["started"][name] for s in sessions if name in s["started"]})
        row["interval_s"] = round(float(np.diff(times).max()), 1) if len(times) > 1 else None


def within(row: dict) -> bool:
    """The target for one stop: no whole unit lost and at most one interval's seconds."""
    if row["stage"] is None:
        return True
    return row["lost_units"] < 1 and (row["interval_s"] is None
                                      or row["lost_s"] <= row["interval_s"])


# ---------------------------------------------------------------------------------------------
# the measurement
# ---------------------------------------------------------------------------------------------
def stop_moments(total_s: float, kills: int, seed: int) -> list[float]:
    """``kills`` moments of the run's clock, one uniform draw in each of ``kills`` equal
    slices of :data:`SPAN` of ``total_s``."""
    rng = np.random.default_rng(seed)
    lo, hi = SPAN[0] * total_s, SPAN[1] * total_s
    edges = np.linspace(lo, hi, kills + 1)
    return [round(float(rng.uniform(a, b)), 1) for a, b in zip(edges[:-1], edges[1:])]


def _arena(run_dir: str) -> dict:
    state = _json(os.path.join(run_dir, "state.json"))
    a = state.get("done", {}).get("arena")
    return {} if a is None else {"diff": a["diff"], "ci": a["ci"], "deals": a["deals"],
                                 "seed": a["seed"], "pair": a["pair"]}


def _loads(path: str) -> bool:
    """The weight file plays: ``trained:PATH`` finishes two duplicate deals against ``rules``."""
    from cardenvs.arena import run_arena

    res = run_arena(GAME, [f"trained:{path}", "rules"], 2, seed=5, progress=False)
    return int(res["deals"]) == 2


def measure(hours: float, kills: int, seed: int, work: str, extra: Sequence[str],
            sigkill: Sequence[int] = (), progress: bool = True) -> dict:
    """Both runs, the stops and the comparison (module docstring); the results as a dict."""
    say = (lambda *a: print(*a, file=sys.stderr, flush=True)) if progress else (lambda *a: None)
    plain, killed = os.path.join(work, "uninterrupted"), os.path.join(work, "killed")
    with open(os.path.join(work, "uninterrupted.log"), "w") as log:
        say(f"[pipeline_resume] the uninterrupted run ({hours:g} h)")
        first = session(plain, hours, extra, False, Watch(plain), log=log)
    if first["rc"] != 0:
        raise RuntimeError(f"the uninterrupted run failed (exit status {first['rc']}); see "
                           f"{os.path.join(work, 'uninterrupted.log')}")
    total = float(_json(os.path.join(plain, "state.json"))["elapsed_s"])
    moments = stop_moments(total, kills, seed)
    say(f"[pipeline_resume] the stopped run: stops at {moments} s of its clock")
    watch, rows, sessions = Watch(killed), [], []
    with open(os.path.join(work, "killed.log"), "w") as log:
        for k, at in enumerate(moments, 1):
            sig = signal.SIGKILL if k in sigkill else signal.SIGTERM
            s = session(killed, hours, extra, k > 1, watch, stop_at=at, sig=sig, log=log)
            sessions.append(s)
            if s["stop"] is None:  # the run ended first
                say(f"[pipeline_resume] the run completed before stop {k}")
                break
            row = lost_work(killed, watch, s["stop"])
            row.update(kill=k, rc=s["rc"])
            rows.append(row)
            say(f"[pipeline_resume] stop {k}: {row['signal']} at {row['run_s']} s in "
                f"{row['stage']} (exit status {s['rc']}); lost {row['lost_units']:g} "
                f"{row['unit']}, {row['lost_s']} s")
        if sessions and sessions[-1]["stop"] is not None:
            last = session(killed, hours, extra, True, watch, log=log)
            sessions.append(last)
            if last["rc"] != 0:
                raise RuntimeError(f"the resumed run failed (exit status {last['rc']}); see "
                                   f"{os.path.join(work, 'killed.log')}")
    intervals(watch, killed, rows, sessions)
    for row in rows:
        row["within_one_interval"] = within(row)
    runs = {}
    for label, d, secs in (("uninterrupted", plain, [first]), ("killed", killed, sessions)):
        state = _json(os.path.join(d, "state.json"))
        weights = os.path.join(d, f"{GAME}.npz")
        runs[label] = {"sessions": len(secs), "wall_s": round(sum(s["seconds"] for s in secs), 1),
                       "run_s": state.get("elapsed_s"), "stages_done": list(state.get("done", {})),
                       "weights_exist": os.path.exists(weights),
                       "weights_load": os.path.exists(weights) and _loads(weights),
                       "arena": _arena(d)}
    a, b = runs["uninterrupted"]["arena"], runs["killed"]["arena"]
    overlap = bool(a and b and a["ci"][0] <= b["ci"][1] and b["ci"][0] <= a["ci"][1])
    config = _json(os.path.join(plain, "config.json"))
    return {"game": GAME, "hours": hours, "kills": kills, "seed": seed, "sigkill": list(sigkill),
            "command": " ".join(["cardenvs", *_command("DIR", hours, extra, False)]),
            "device": config.get("device"), "jobs": config.get("jobs"),
            "stop_moments_s": moments, "stops": rows, "runs": runs, "ci_overlap": overlap,
            "all_within_one_interval": bool(rows) and all(r["within_one_interval"] for r in rows),
            "stops_done": len(rows)}


# ---------------------------------------------------------------------------------------------
# the report
# ---------------------------------------------------------------------------------------------
def _fmt(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def markdown(res: dict) -> str:
    """The results as the page ``pipeline_resume.md``."""
    lines = [
        f"# `cardenvs train {res['game']}`: stopped {res['kills']} times and resumed",
        "",
        f"Written by `python -m benchmarks.pipeline_resume --hours {res['hours']:g} --kills "
        f"{res['kills']} --seed {res['seed']}` (issue 50's target).  Both runs: "
        f"`{res['command']}` ({res['jobs']} job, device {res['device']}), one uninterrupted, "
        f"one stopped at seeded random moments of its clock, each stop followed by `--resume`.  "
        f"Units are the stages' own: blocks (shards) of a collection, updates of a fit, "
        f"iterations of the fine-tuning, deals of the arena.  Lost: whole units, and seconds "
        f"from the moment the restart point was reached (or the stage's start in that "
        f"session) to the stop; interval: the promised checkpoint interval, in units and in "
        f"the seconds it took in the stopped run.",
        "",
        "| stop | signal | run s | stage | unit | at the stop | resumed from | lost units | "
        "lost s | interval | interval s | within one interval |",
        "| ---: | --- | ---: | --- | --- | ---: | ---: | ---: | ---: | --- | ---: | --- |",
    ]
    for r in res["stops"]:
        stage = (r["stage"] if r["stage"] is not None
                 else f"between stages (after {r['stage_at_stop']})")
        lines.append(
            f"| {r['kill']} | {r['signal']} | {r['run_s']:g} | {stage} | {_fmt(r['unit'])} | "
            f"{_fmt(r['at_stop'])} | {_fmt(r['resumed_from'])} | {_fmt(r['lost_units'])} | "
            f"{_fmt(r['lost_s'])} | {_fmt(r['interval_units'])} | {_fmt(r['interval_s'])} | "
            f"{'yes' if r['within_one_interval'] else 'no'} |")
    lines += ["", "| run | sessions | wall s | run s | arena vs rules (per deal, 95% CI) | deals "
                  "| file loads |", "| --- | ---: | ---: | ---: | --- | ---: | --- |"]
    for label, run in res["runs"].items():
        a = run["arena"]
        score = (f"{a['diff']:+.2f} [{a['ci'][0]:+.2f}, {a['ci'][1]:+.2f}]" if a else "—")
        lines.append(f"| {label} | {run['sessions']} | {run['wall_s']:g} | {_fmt(run['run_s'])} "
                     f"| {score} | {a.get('deals', '—') if a else '—'} | "
                     f"{'yes' if run['weights_load'] else 'no'} |")
    lines += ["", f"Target: every stop within one checkpoint interval: "
                  f"**{'met' if res['all_within_one_interval'] else 'not met'}** "
                  f"({res['stops_done']} stops); the CIs overlap: "
                  f"**{'yes' if res['ci_overlap'] else 'no'}**.", ""]
    return "\n".join(lines)


def write(res: dict, results: str) -> tuple[str, str]:
    """``pipeline_resume.json`` and ``.md`` in ``results``; their paths."""
    os.makedirs(results, exist_ok=True)
    js = os.path.join(results, "pipeline_resume.json")
    md = os.path.join(results, "pipeline_resume.md")
    with open(js, "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")
    with open(md, "w") as f:
        f.write(markdown(res))
    return js, md


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The command line (module docstring); the exit status (0 when the target is met)."""
    from cardenvs.cli import parse_option

    ap = argparse.ArgumentParser(prog="python -m benchmarks.pipeline_resume",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--hours", type=float, default=0.02,
                    help="each run's budget (default 0.02: the tiniest that completes)")
    ap.add_argument("--kills", type=int, default=5, help="stops of the second run (default 5)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the stop moments")
    ap.add_argument("--sigkill", type=int, action="append", default=[], metavar="K",
                    help="make the K-th stop a SIGKILL of the pipeline and its stage's "
                         "process (not promised by cardenvs train; repeatable)")
    ap.add_argument("--set", action="append", type=parse_option, default=[], metavar="KEY=VALUE",
                    help="passed to both runs (cardenvs train --set)")
    ap.add_argument("--work", default=None,
                    help="folder of the two runs (absent or empty; default a temporary one, "
                         "removed at the end)")
    ap.add_argument("--results", default=str(RESULTS),
                    help="where pipeline_resume.json and .md go (default benchmarks/results)")
    a = ap.parse_args(argv)
    try:
        if not (a.hours > 0 and np.isfinite(a.hours)):
            raise ValueError(f"--hours must be a number > 0, got {a.hours!r}")
        if a.kills < 1:
            raise ValueError(f"--kills must be >= 1, got {a.kills!r}")
        if any(not 1 <= k <= a.kills for k in a.sigkill):
            raise ValueError(f"--sigkill: stop numbers in 1..{a.kills}, got {a.sigkill}")
        if a.work is not None and os.path.isdir(a.work) and os.listdir(a.work):
            raise ValueError(f"--work {a.work!r} is not empty")
    except ValueError as e:
        print(f"python -m benchmarks.pipeline_resume: error: {e}", file=sys.stderr)
        return 2
    extra = [x for k, v in a.set for x in ("--set", f"{k}={v}")]
    work = a.work or tempfile.mkdtemp(prefix="pipeline_resume_")
    os.makedirs(work, exist_ok=True)
    try:
        res = measure(a.hours, a.kills, a.seed, work, extra, a.sigkill)
    finally:
        if a.work is None:
            shutil.rmtree(work, ignore_errors=True)
    js, md = write(res, a.results)
    print(markdown(res))
    print(f"written: {js}, {md}", file=sys.stderr)
    return 0 if res["all_within_one_interval"] and res["ci_overlap"] else 1


if __name__ == "__main__":
    sys.exit(main())
