"""What the README and the tools claim about themselves holds: ``cardenvs list`` prints the
layouts it promises, a ``--quick`` benchmark marks its targets as indicative, CI runs the
README's main job."""

from __future__ import annotations

import os
import re

import cardenvs
from cardenvs.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_cli_list_prints_action_and_observation_layouts(capsys):
    assert main(["list"]) == 0
    text = capsys.readouterr().out
    for name in cardenvs.GAMES:
        g = cardenvs.make_game(name)
        assert f"{name} ({g.info.title}): {g.n_players} players" in text
        assert f"{g.n_actions} actions, observation of {g.layout.size}" in text
        flat = " ".join(text.split())  # lines wrap between entries
        for block, (a, b) in g.blocks.items():
            assert (f"{block} {a}" if b - a == 1 else f"{block} {a}-{b - 1}") in flat
        for field, (a, b) in g.layout.offsets.items():
            assert f"{field} [{a}:{b})" in flat
    # Wakeng's layout as its module documents it: 153 card plays, then pass, 3 bids, 26 bury
    # picks (13 ranks, 13 diamonds) and open / not open
    assert main(["list", "wakeng"]) == 0
    one = capsys.readouterr().out
    assert "actions (ids): play 0-152, pass 153, bid 154-156, bury 157-182, open 183-184" in one
    assert one.count("\n") < text.count("\n")


def test_quick_benchmark_targets_are_marked_indicative():
    saved = dict(os.environ)
    try:
        from benchmarks.run import QUICK_NOTE, Config, Report
    finally:  # benchmarks.run pins the thread counts of this process's environment
        os.environ.clear()
        os.environ.update(saved)
    row = ("Lanxi Wulong: move generation", "follow 1.50 µs", "follow 0.13 µs", "follow 11.5x",
           "**FAIL**")
    quick = Report(Config(quick=True, budget=0.6, repeats=2, n_positions=300), targets=[row])
    text = quick.markdown()
    assert "| **FAIL** (quick: indicative) |" in text and QUICK_NOTE in text
    full = Report(Config(quick=False, budget=4.0, repeats=3, n_positions=2000), targets=[row])
    assert "indicative" not in full.markdown() and "| **FAIL** |" in full.markdown()


def test_ci_runs_the_readme_main_job():
    """The README says CI runs its commands: the main job too, as written (test_readme.py checks
    the set-up and test lines), and CI compares its printed table with the README's."""
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    main_job = re.search(r"^# Main job.*\n(.+)$", text, re.M).group(1).strip()
    assert main_job.startswith(".venv/bin/cardenvs arena ")
    ci = open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8").read()
    assert any(line.startswith(main_job + " --out ") for line in ci.splitlines()), main_job
    assert "benchmarks.numbers --check-output" in ci


def test_readme_commands_use_the_venv():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    # code lines and `inline code` that start with a bare python (the venv's creation aside)
    found = re.findall(r"(?:^\s*|`)(python3? -m [\w.]+)", text, re.M)
    bare = [cmd for cmd in found if not cmd.endswith(" venv")]
    assert not bare, f"README commands run the system python: {bare}; write .venv/bin/python"
