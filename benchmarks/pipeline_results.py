"""Record a finished ``cardenvs train`` run in ``benchmarks/results/pipeline/NAME/``: the small
files of its run directory, which ``docs/results.md``'s generated block
(``benchmarks.numbers``, block ``pipeline``) quotes::

    .venv/bin/python -m benchmarks.pipeline_results runs/train_doudizhu
    .venv/bin/python -m benchmarks.numbers --write

Copied: ``config.json`` (the game, options, budget, the plan), ``state.json`` (the stages
done, the minutes spent, the arena's result), the arena's result JSON (``arena/``),
``report.md`` and ``curve.png``; never the data, the checkpoints or the weights.  ``NAME`` is
the game (``--name`` for another: a run with rules options or compact actions gets the game
and its options by default, e.g. ``doudizhu_preset-rlcard``).  An unfinished run (a stage
not done, no report, no arena result) is refused, and so is a file over :data:`MAX_BYTES`;
the folder ``NAME`` is replaced as a whole.  The run directory's path, which the report and
the arena's JSON name (``trained:DIR/GAME.npz``, ``--out DIR``), is written :data:`PLACEHOLDER`
in the copies: no folder of the machine that made the run enters the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Optional, Sequence

ROOT = Path(__file__).resolve().parents[1]
#: where the runs are recorded, a folder per run
PIPELINE = ROOT / "benchmarks" / "results" / "pipeline"
#: the files of a run directory that are recorded (``curve.png`` when the run made one)
FILES = ("config.json", "state.json", "report.md", "curve.png")
#: the largest file recorded, bytes
MAX_BYTES = 3 * 2**20
#: what the run directory's path becomes in the recorded files
PLACEHOLDER = "RUN_DIR"


def _read(path: Path) -> dict:
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: not a training run's file ({e})") from None
    if not isinstance(obj, dict):
        raise ValueError(f"{path}: not a training run's file")
    return obj


def arena_result(run: Path, state: dict) -> Path:
    """The arena's result JSON in ``run/arena/`` (the one of the deals and seed the run's
    state records); a ``ValueError`` when there is none."""
    arena = state.get("done", {}).get("arena")
    if not isinstance(arena, dict):
        raise ValueError(f"{run}: the arena stage is not done")
    found = []
    for p in sorted((run / "arena").glob("*.json")):
        if p.name.endswith(".progress.json"):
            continue
        res = _read(p)
        if "pairwise" in res and res.get("deals") == arena.get("deals") and \
                res.get("seed") == arena.get("seed"):
            found.append(p)
    if len(found) != 1:
        raise ValueError(f"{run / 'arena'}: {len(found)} arena results of {arena.get('deals')} "
                         f"deals, seed {arena.get('seed')} (one expected)")
    return found[0]


def default_name(config: dict) -> str:
    """The folder of a run: its game, with its rules options and a compact action mode."""
    parts = [str(config["game"])]
    opts = dict(config.get("options") or {})
    if config.get("actions", "flat") != "flat":
        opts["actions"] = config["actions"]
    parts += [f"{k}-{v}" for k, v in sorted(opts.items())]
    name = "_".join(parts)
    return "".join(c if c.isalnum() or c in "_-." else "-" for c in name)


def check_finished(run: Path) -> tuple[dict, dict, list[Path]]:
    """``(config, state, files to copy)`` of the finished run in ``run``; a ``ValueError``
    saying what is missing otherwise."""
    if not (run / "config.json").is_file():
        raise ValueError(f"{run}: no training run there (no config.json)")
    config, state = _read(run / "config.json"), _read(run / "state.json")
    names = [st["name"] for st in config.get("stages", [])]
    missing = [n for n in names if n not in state.get("done", {})]
    if not names or missing:
        raise ValueError(f"{run}: an unfinished run (stages not done: "
                         f"{', '.join(missing) or 'no plan'}); finish it with cardenvs train "
                         f"{config.get('game')} --out {run} --resume")
    if not (run / "report.md").is_file():
        raise ValueError(f"{run}: no report.md")
    files = [run / f for f in FILES if (run / f).is_file()] + [arena_result(run, state)]
    for p in files:
        if p.stat().st_size > MAX_BYTES:
            raise ValueError(f"{p}: {p.stat().st_size:,} bytes, over {MAX_BYTES:,}: not a "
                             f"results file")
    return config, state, files


def run_paths(run: Path) -> list[str]:
    """The spellings of the run directory's path in its files: the absolute one (the arena's
    agents) and the ``--out`` of the report's command line."""
    paths = {str(run.resolve()), os.path.abspath(run)}
    try:
        report = (run / "report.md").read_text(encoding="utf-8")
    except OSError:
        report = ""
    m = re.search(r"--out (.+?)` \(", report)
    if m:
        paths.add(m.group(1))
    return sorted(paths, key=len, reverse=True)


def redact(text: str, paths: Sequence[str]) -> str:
    """``text`` with each of ``paths`` as a folder (``PATH/``) or as ``--out PATH`` written
    :data:`PLACEHOLDER`."""
    for p in paths:
        text = text.replace(f"{p}/", f"{PLACEHOLDER}/").replace(f"--out {p}`",
                                                               f"--out {PLACEHOLDER}`")
    return text


def record(run: str, name: Optional[str] = None, dest: Path = PIPELINE) -> Path:
    """Copy the small files of the finished run in ``run`` to ``dest/NAME/`` (module
    docstring), replacing that folder; returns it."""
    src = Path(run)
    config, _, files = check_finished(src)
    name = name or default_name(config)
    paths = run_paths(src)
    if not name or name != Path(name).name or name.startswith("."):
        raise ValueError(f"--name {name!r}: a plain folder name")
    dest.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=dest))
    try:
        for p in files:
            rel = p.relative_to(src)
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            if p.suffix in (".md", ".json"):
                text = redact(p.read_text(encoding="utf-8"), paths)
                (tmp / rel).write_text(text, encoding="utf-8")
            else:
                shutil.copyfile(p, tmp / rel)
        final = dest / name
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
        os.chmod(final, 0o755)  # mkdtemp's folder is the owner's only
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return final


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The command line (module docstring); the exit status."""
    ap = argparse.ArgumentParser(prog="python -m benchmarks.pipeline_results",
                                 description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", metavar="RUN_DIR", help="a finished cardenvs train run directory")
    ap.add_argument("--name", default=None,
                    help="the folder in benchmarks/results/pipeline/ (default: the game, with "
                         "the run's options)")
    ap.add_argument("--dest", default=str(PIPELINE), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    try:
        final = record(a.run, a.name, Path(a.dest))
    except ValueError as e:
        print(f"python -m benchmarks.pipeline_results: error: {e}", file=sys.stderr)
        return 2
    shown = final.relative_to(ROOT) if final.is_relative_to(ROOT) else final
    print(f"wrote {shown}: {', '.join(sorted(str(p.relative_to(final)) for p in final.rglob('*') if p.is_file()))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
