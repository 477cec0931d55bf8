"""Every number the README and the docs quote, generated from the code and from committed result
files, never typed by hand.

The documents hold generated blocks between marker comments::

    <!-- numbers:strength -->
    ...generated text...
    <!-- /numbers:strength -->

``.venv/bin/python -m benchmarks.numbers --write`` regenerates every block of every document in
:data:`DOCUMENTS`; ``--check`` (what ``tests/test_numbers.py`` runs) exits 1 naming each block
whose text differs from what its sources give.  The sources:

* ``games``: the registry and each game's action layout (``cardenvs.make_game``);
* ``strength``: the arena results in ``benchmarks/results/strength/`` (``benchmarks.strength``);
* ``main-job``: ``benchmarks/results/main_job.txt``, the main job's printed table, which CI
  compares with what the command prints (``--check-output FILE``);
* ``speed``: the masked-random env loop and raw-engine rows of ``benchmarks/results.md``
  (``benchmarks.run``);
* ``weights``: the files in ``agents/weights/`` (their sha256 and metadata) with their
  strength from the arena results;
* ``pipeline``: the ``cardenvs train`` runs recorded in ``benchmarks/results/pipeline/``
  (``benchmarks.pipeline_results``), each against the shipped agent's strength result.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Callable, Optional

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
STRENGTH = RESULTS / "strength"
MAIN_JOB = RESULTS / "main_job.txt"
WEIGHTS = ROOT / "agents" / "weights"
PIPELINE = RESULTS / "pipeline"

#: the documents that hold generated blocks
DOCUMENTS = ("README.md", "agents/weights/README.md", "docs/results.md")

BLOCK = re.compile(r"(<!-- numbers:(?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /numbers:(?P=name) -->)",
                   re.S)


# -- sources --------------------------------------------------------------------------------------


def strength_results() -> list[dict]:
    """The committed arena results of :mod:`benchmarks.strength`, in registry order."""
    from cardenvs import GAMES

    found = []
    for path in sorted(STRENGTH.glob("*.json")):
        res = json.loads(path.read_text(encoding="utf-8"))
        res["_file"] = path.relative_to(ROOT).as_posix()
        found.append(res)
    order = {g: i for i, g in enumerate(GAMES)}
    return sorted(found, key=lambda r: (order.get(r["game"], 99), r["_file"]))


def _pair(res: dict) -> tuple[str, dict]:
    (name, st), = res["pairwise"].items()
    return name, st


def _ci(st: dict, digits: int) -> str:
    lo, hi = st["ci"]
    return f"{st['score_diff']:+.{digits}f} [{lo:+.{digits}f}, {hi:+.{digits}f}]"


def _digits(x: float) -> int:
    return 3 if abs(x) < 1 else 2


def find_result(game: str, first: str, second: str, options: Optional[dict] = None) -> Optional[dict]:
    """The strength result of ``first - second`` in ``game`` (labels as the arena writes them)."""
    for res in strength_results():
        if res["game"] != game or (options is not None and res["options"] != options):
            continue
        name, _ = _pair(res)
        if name == f"{first} - {second}":
            return res
    return None


# -- blocks ---------------------------------------------------------------------------------------


def block_games() -> str:
    """The games table: players, flat and compact action-space sizes, what is special."""
    from cardenvs import GAMES, make_game
    from cardenvs.registry import spec

    from cardenvs.core.compact import codec_of

    def compact_size(name: str) -> int:
        return int(codec_of(make_game(name)).n)
    hanzi = {"doudizhu": "斗地主", "doudizhu4": "四人斗地主", "wakeng": "挖坑", "niangniang": "打娘娘",
             "wulong": "兰溪乌龙", "paodekuai": "跑得快"}
    notes = {
        "doudizhu": "auction, spring, presets matching DouZero's and RLCard's move sets",
        "doudizhu4": "two decks, one landlord against three farmers",
        "wakeng": "52 cards, 明牌 open hand, bombs on/off, first-bidder variants",
        "niangniang": "wild jokers, the exchange and its 活子 penalty, match play",
        "wulong": "two decks, four wild jokers, 报牌 declarations, each for himself",
        "paodekuai": "48 cards, must beat (有大必压), short last plays, bombs paid mid-deal",
    }
    lines = ["| game | id | players | flat actions | compact actions | what is special |",
             "| --- | --- | ---: | ---: | ---: | --- |"]
    for name in GAMES:
        g = make_game(name)
        s = spec(name)
        lines.append(f"| {hanzi.get(name, '')} {g.info.title} | `{s.env_module}` | {g.n_players} | {g.n_actions:,} | "
                     f"{compact_size(name):,} | {notes.get(name, '')} |")
    return "\n".join(lines) + "\n"


def block_strength() -> str:
    """Each game's ``trained - rules``, ``search - rules`` and ``rules - random``, per deal,
    with 95% CIs (and the deals each was measured on)."""
    from cardenvs import GAMES, make_game

    pairs = (("trained", "rules"), ("search", "rules"), ("rules", "random"))
    rows = ["| game | trained − rules | search − rules | rules − random | deals |",
            "| --- | ---: | ---: | ---: | --- |"]
    for game in GAMES:
        found = [find_result(game, a, b, {}) for a, b in pairs]
        if not any(found):
            continue
        cells = []
        for res in found:
            if res is None:
                cells.append("—")
                continue
            _, st = _pair(res)
            cells.append(_ci(st, _digits(st["score_diff"])))
        deals = " / ".join(f"{r['deals']:,}" if r else "—" for r in found)
        rows.append(f"| {make_game(game).info.title} | **{cells[0]}** | {cells[1]} | {cells[2]} "
                    f"| {deals} |")
    text = "\n".join(rows) + "\n"
    extra = [r for r in strength_results() if _pair(r)[0].startswith("trained:")]
    for res in extra:
        name, st = _pair(res)
        a, b = name.split(" - ")
        opts = ", ".join(f"`{k}={v!r}`" for k, v in res["options"].items())
        spec = (res.get("agent_specs") or {}).get(a, a)
        roles = res["by_role"].get(a, {}) if res.get("by_role") else {}
        rates = ", ".join(f"{role} {v['win_rate']:.1%}" for role, v in roles.items() if v["games"])
        text += (f"\nIn {make_game(res['game']).info.title} with {opts or 'default options'}, "
                 f"`{spec}` − `{b}`: **{_ci(st, _digits(st['score_diff']))}** per deal over "
                 f"{res['deals']:,} deals" + (f"; its win rate as {rates}" if rates else "")
                 + ".\n")
    return text


def main_job_output() -> str:
    """The main job's table as committed (the text CI compares the command's output with)."""
    return MAIN_JOB.read_text(encoding="utf-8")


def block_main_job() -> str:
    return "```text\n" + main_job_output() + "```\n"


def _speed_rows(label: str) -> dict[str, list[str]]:
    text = (ROOT / "benchmarks" / "results.md").read_text(encoding="utf-8")
    found: dict[str, list[str]] = {}
    section = None
    for line in text.splitlines():
        m = re.match(r"## .*\(`(\w+)`\)", line)
        if m:
            section = m.group(1)
        elif section and line.startswith(f"| {label} |"):
            found[section] = [c.strip() for c in line.strip("|").split("|")]
    return found


def block_speed() -> str:
    """Env steps/s of the masked-random loop and raw-engine decisions/s, from benchmarks/results.md."""
    from cardenvs import make_game

    env = _speed_rows("env steps/s, masked random policy (with observation)")
    raw = _speed_rows("raw engine: random decisions/s")
    rows = ["| game | env steps/s (masked random AEC loop) | RLCard's env | raw engine decisions/s |",
            "| --- | ---: | ---: | ---: |"]
    for game in env:
        e, r = env[game], raw.get(game, ["", "—"])
        rows.append(f"| {make_game(game).info.title} | {e[1]} | {e[2]} | {r[1]} |")
    return "\n".join(rows) + "\n"


def block_weights() -> str:
    """One row per shipped weight file: game, agent name, trainer, strength, sha256."""
    from cardenvs.registry import REGISTRY

    loads = {s.trained_weights: name for name, s in REGISTRY.items() if s.trained_weights}
    rows = ["| file | game | loaded by | made by | against its opponent (per deal, 95% CI) | sha256 |",
            "| --- | --- | --- | --- | --- | --- |"]
    for path in sorted(WEIGHTS.glob("*.npz")):
        import numpy as np

        with np.load(path) as z:
            meta = json.loads(bytes(z["meta"]).decode())
        game = meta.get("game", "?")
        opts = meta.get("options", {}) or {}
        if isinstance(opts, str):
            opts = json.loads(opts.replace("'", '"'))
        if path.name in loads:
            agent = f"`trained` ({loads[path.name]})"
            res = find_result(game, "trained", "rules", {})
        else:
            agent = f"`trained:agents/weights/{path.name}`"
            res = None
            for r in strength_results():  # an arena that fielded this file by its path
                specs = (r.get("agent_specs") or {}).values()
                if any(str(v).endswith(f"weights/{path.name}") for v in specs):
                    res = r
        strength = "—"
        if res is not None:
            name, st = _pair(res)
            strength = f"{_ci(st, _digits(st['score_diff']))} against {name.split(' - ')[1]}"
            if opts:
                strength += " (" + ", ".join(f"{k}={v}" for k, v in opts.items()) + ")"
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        trainer = meta.get("trainer", "?")
        trainer = trainer if trainer.startswith("train.") else f"train.{trainer}"
        rows.append(f"| `{path.name}` | {game} | {agent} | `{trainer}` | {strength} | "
                    f"`{digest}` |")
    return "\n".join(rows) + "\n"


def block_charts() -> str:
    """The arena charts of ``trained - rules`` per game (links relative to ``docs/``)."""
    from cardenvs import make_game

    lines = []
    for res in strength_results():
        name, _ = _pair(res)
        png = (ROOT / res["_file"]).with_suffix(".png")
        if name != "trained - rules" or res["options"] or not png.exists():
            continue
        rel = Path("..") / png.relative_to(ROOT)
        title = make_game(res["game"]).info.title
        lines += [f"### {title}", "", f"![{title}: trained against rules]({rel.as_posix()})", ""]
    return "\n".join(lines)


def pipeline_runs() -> list[dict]:
    """The ``cardenvs train`` runs recorded by :mod:`benchmarks.pipeline_results`: per folder
    its ``config``, ``state``, arena result (``arena``) and folder (``_dir``), in registry
    order, then by budget."""
    from cardenvs import GAMES

    runs = []
    for path in sorted(PIPELINE.glob("*/config.json")):
        run = path.parent
        arena = [p for p in sorted((run / "arena").glob("*.json"))
                 if not p.name.endswith(".progress.json")]
        if len(arena) != 1:
            raise ValueError(f"{run}: {len(arena)} arena results (one expected)")
        runs.append({"config": json.loads(path.read_text(encoding="utf-8")),
                     "state": json.loads((run / "state.json").read_text(encoding="utf-8")),
                     "arena": json.loads(arena[0].read_text(encoding="utf-8")),
                     "_dir": f"benchmarks/results/pipeline/{run.name}"})
    order = {g: i for i, g in enumerate(GAMES)}
    return sorted(runs, key=lambda r: (order.get(r["config"]["game"], 99),
                                       float(r["config"]["hours"]), r["_dir"]))


def _overlap(a: list, b: list) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def block_pipeline() -> str:
    """One row per recorded ``cardenvs train`` run: the game and budget, options, stages
    completed, its file against ``rules`` (the run's arena JSON) beside the shipped agent's
    result against ``rules`` (the strength results), and whether the two CIs overlap."""
    from cardenvs import make_game

    rows = ["| run | options | --hours | stages completed | its file − rules (deals) | "
            "shipped `trained` − rules | CIs overlap |",
            "| --- | --- | ---: | ---: | ---: | ---: | --- |"]
    for run in pipeline_runs():
        cfg, state, arena = run["config"], run["state"], run["arena"]
        game, hours = cfg["game"], float(cfg["hours"])
        opts = dict(cfg.get("options") or {})
        shipped = find_result(game, "trained", "rules", opts)  # the rules options only
        if cfg.get("actions", "flat") != "flat":
            opts["actions"] = cfg["actions"]
        names = [st["name"] for st in cfg["stages"]]
        done = sum(n in state["done"] for n in names)
        _, st = _pair(arena)
        mine = f"**{_ci(st, _digits(st['score_diff']))}** ({arena['deals']:,})"
        theirs, overlap = "—", "—"
        if shipped is not None:
            _, sst = _pair(shipped)
            theirs = f"{_ci(sst, _digits(sst['score_diff']))} ({shipped['deals']:,})"
            overlap = "yes" if _overlap(st["ci"], sst["ci"]) else "no"
        title = make_game(game).info.title
        # the folder as text: Sphinx would take a link to its report.md for a page of the site
        rows.append(f"| {title}, a {hours:g} h run (`{run['_dir']}/`) | "
                    f"{', '.join(f'`{k}={v!r}`' for k, v in opts.items()) or 'defaults'} | "
                    f"{hours:g} | {done} of {len(names)} | {mine} | {theirs} | {overlap} |")
    if len(rows) == 2:
        return "No `cardenvs train` run is recorded yet.\n"
    return "\n".join(rows) + "\n"


BLOCKS: dict[str, Callable[[], str]] = {
    "games": block_games, "strength": block_strength, "main-job": block_main_job,
    "speed": block_speed, "weights": block_weights, "charts": block_charts,
    "pipeline": block_pipeline,
}


# -- documents ------------------------------------------------------------------------------------


def render(text: str, cache: Optional[dict] = None) -> str:
    """``text`` with every generated block replaced by what its source gives now."""
    cache = {} if cache is None else cache

    def one(m: re.Match) -> str:
        name = m.group("name")
        if name not in BLOCKS:
            raise ValueError(f"unknown generated block {name!r}; known: {', '.join(BLOCKS)}")
        if name not in cache:
            cache[name] = BLOCKS[name]()
        return m.group(1) + cache[name] + m.group(4)

    return BLOCK.sub(one, text)


def stale_blocks(root: Path = ROOT) -> list[str]:
    """``DOCUMENT: block`` for every generated block whose text is not what its source gives."""
    cache: dict = {}
    stale = []
    for doc in DOCUMENTS:
        path = root / doc
        if not path.exists():
            continue
        text = path.read_text(encoding="utf-8")
        for m in BLOCK.finditer(text):
            if render(m.group(0), cache) != m.group(0):
                stale.append(f"{doc}: {m.group('name')}")
    return stale


def write(root: Path = ROOT) -> list[str]:
    """Regenerate every block of every document; return the documents changed."""
    cache: dict = {}
    changed = []
    for doc in DOCUMENTS:
        path = root / doc
        if not path.exists():
            continue
        text = path.read_text(encoding="utf-8")
        new = render(text, cache)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(doc)
    return changed


def main_job_table(output: str) -> str:
    """The part of the main job's output that the README shows: everything before its
    ``wrote ...`` line (the folder it writes into is the caller's)."""
    keep = [line for line in output.splitlines() if not line.startswith("wrote ")]
    return "\n".join(keep).rstrip("\n") + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.numbers", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="regenerate the blocks in place")
    mode.add_argument("--check", action="store_true",
                      help="exit 1 naming each block that differs from its source")
    mode.add_argument("--check-output", metavar="FILE",
                      help="exit 1 if FILE (the main job's printed output) differs from "
                           "benchmarks/results/main_job.txt")
    mode.add_argument("--save-output", metavar="FILE",
                      help="store FILE (the main job's printed output) as "
                           "benchmarks/results/main_job.txt")
    a = ap.parse_args(argv)
    if a.write:
        for doc in write():
            print(f"updated {doc}")
        return 0
    if a.check:
        stale = stale_blocks()
        for s in stale:
            print(f"stale generated block: {s} (run .venv/bin/python -m benchmarks.numbers --write)")
        return 1 if stale else 0
    path = Path(a.check_output or a.save_output)
    if not path.is_file():
        ap.error(f"{path}: no such file")
    table = main_job_table(path.read_text(encoding="utf-8"))
    if a.save_output:
        MAIN_JOB.write_text(table, encoding="utf-8")
        print(f"wrote {MAIN_JOB.relative_to(ROOT)}")
        return 0
    if table != main_job_output():
        import difflib

        sys.stdout.writelines(difflib.unified_diff(
            main_job_output().splitlines(True), table.splitlines(True),
            "benchmarks/results/main_job.txt", str(path)))
        print("the main job printed another table than the README shows", file=sys.stderr)
        return 1
    print("the main job printed the README's table")
    return 0


if __name__ == "__main__":
    sys.exit(main())
