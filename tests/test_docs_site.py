"""The documentation site builds without a warning, its internal links resolve, and every code
block of its tutorials runs (a block shown with ``:class: no-run`` is skipped; its page says why).

The build needs the ``docs`` extra (Sphinx, MyST, furo); without it the build test is skipped.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
TUTORIALS = sorted((DOCS / "tutorials").glob("*.md"))


def python_blocks(text: str) -> list[str]:
    """The runnable ``python`` fences of a MyST page (not ``{code-block}`` ones marked no-run)."""
    blocks = []
    for m in re.finditer(r"^```(\{code-block\} )?python\n(.*?)^```", text, re.S | re.M):
        body = m.group(2)
        if m.group(1):
            options = re.findall(r"^:(\w[\w-]*): ?(.*)$", body, re.M)
            if ("class", "no-run") in options:
                continue
            body = re.sub(r"^:\w[\w-]*:.*\n", "", body, flags=re.M)
        blocks.append(body)
    return blocks


def test_python_blocks_are_found_and_no_run_is_skipped():
    page = ("# t\n\n```python\nx = 1\n```\n\n```{code-block} python\n:class: no-run\n\nboom()\n```"
            "\n\n```{code-block} python\n:caption: c\n\ny = 2\n```\n")
    assert python_blocks(page) == ["x = 1\n", "\ny = 2\n"]


def test_sphinx_builds_with_warnings_as_errors(tmp_path):
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_parser")
    pytest.importorskip("furo")
    out = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(DOCS),
         str(tmp_path / "html")], capture_output=True, text=True, cwd=ROOT, timeout=900)
    assert out.returncode == 0, out.stderr[-4000:]
    html = tmp_path / "html"
    for name in ("index", "api", "results", "tutorials/index", "environments/doudizhu",
                 "rules/README"):
        assert (html / f"{name}.html").exists(), name
    page = (html / "environments" / "wakeng.html").read_text(encoding="utf-8")
    assert "Observation" in page and "Wakeng" in page


@pytest.mark.parametrize("page", TUTORIALS, ids=[p.stem for p in TUTORIALS])
def test_tutorial_code_runs(page, tmp_path):
    blocks = python_blocks(page.read_text(encoding="utf-8"))
    if not blocks:
        pytest.skip(f"{page.name} has no runnable python block")
    script = tmp_path / "tutorial.py"
    script.write_text("\n\n".join(blocks), encoding="utf-8")
    env = {**os.environ, "MPLBACKEND": "Agg"}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         cwd=tmp_path, timeout=900, env=env)
    assert out.returncode == 0, f"{page.name}:\n{out.stdout[-2000:]}\n{out.stderr[-4000:]}"
