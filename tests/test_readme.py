"""The README's set-up and test commands are exactly what CI runs, and the demo works."""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _readme_commands() -> dict[str, str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```bash\n(.*?)```", text, re.S).group(1)
    cmds, label = {}, None
    for line in block.splitlines():
        if line.startswith("# "):
            label = line[2:].split(":")[0].strip().lower()
        elif line.strip() and label:
            cmds[label] = line.strip()
    return cmds


def test_ci_runs_the_readme_commands_verbatim():
    cmds = _readme_commands()
    assert set(cmds) >= {"set up", "main job", "test"}
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert cmds["set up"] in ci
    assert cmds["test"] in ci


def test_main_job_command_runs_the_arena(tmp_path):
    """The main job is an arena run of the shipped agents; run it with fewer deals."""
    from cardenvs.cli import main

    cmd = _readme_commands()["main job"].split()
    assert cmd[0].endswith("cardenvs") and cmd[1] == "arena"
    game = cmd[2]
    agents = cmd[cmd.index("--agents") + 1].split(",")
    assert "trained" in agents and "rules" in agents
    from cardenvs.agents.trained import default_weights_path

    assert os.path.exists(default_weights_path(game)), "the main job needs shipped weights"
    args = cmd[1:]
    args[args.index("--deals") + 1] = "3"
    assert main(args + ["--out", str(tmp_path), "--no-progress"]) == 0
    assert list(tmp_path.glob("*.json")), "the arena writes its JSON"


def test_demo_plays_a_deal():
    from cardenvs.cli import demo, main

    out = io.StringIO()
    text = demo("doudizhu", 0, {}, out=out)
    assert out.getvalue() == text
    assert "phase: done" in text
    assert "sum: +0" in text  # Dou Dizhu is zero-sum
    assert main(["moves", "doudizhu", "33X"]) == 2  # bad input: clear error, exit status 2


def test_readme_rules_query_examples_run():
    """The README's ``legal_moves`` example and its ambiguous-``prev`` variants are valid
    positions (issue 17 item 10: the first version held six 3s) and show what it says."""
    import pytest

    import cardenvs

    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    m = re.search(r'cardenvs\.legal_moves\("doudizhu", "(\w+)", prev="(\w+)"\)', text)
    assert m, "the README's rules-query example is gone"
    hand, prev = m.groups()
    moves = cardenvs.legal_moves("doudizhu", hand, prev=prev)
    # prev 3339 is a trio + single: every trio of the hand with a kicker beats it, and the rocket
    assert "BR" in moves and "7778" in moves and "TTTR" in moves
    assert all(len(mv) == 4 or mv == "BR" for mv in moves)
    amb = re.search(r'ambiguous `prev` such as `"(\d+)"` needs `prev_type="(\w+)"` or the '
                    r'`body\+kickers` notation `"([\d+]+)"`', text)
    assert amb, "the README's ambiguous-prev sentence is gone"
    plain, prev_type, split = amb.groups()
    with pytest.raises(ValueError, match="more than one way"):
        cardenvs.legal_moves("doudizhu", hand, prev=plain)
    # read as an airplane of four trios, only four higher trios (or the rocket) beat it
    assert cardenvs.legal_moves("doudizhu", hand, prev=plain, prev_type=prev_type) == [
        "BR", "777888999TTT"]
    # read as three trios + three singles, three higher trios with any three kickers beat it
    kick = cardenvs.legal_moves("doudizhu", hand, prev=split)
    assert {"777888999TTB", "77888999TTTR"} <= set(kick) and "BR" in kick


def test_readme_python_blocks_run_from_outside_the_checkout(tmp_path):
    """Every ``python`` block of the README runs as written, in a folder outside the checkout
    (as an installed user runs it)."""
    import subprocess
    import sys

    from test_docs_site import python_blocks

    blocks = python_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(blocks) >= 2, "the README's quick start and recipe blocks are gone"
    for i, code in enumerate(blocks):
        script = tmp_path / f"block{i}.py"
        script.write_text(code, encoding="utf-8")
        out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                             cwd=tmp_path, timeout=900, env={**os.environ, "MPLBACKEND": "Agg"})
        assert out.returncode == 0, f"README python block {i}:\n{code}\n{out.stderr[-3000:]}"
