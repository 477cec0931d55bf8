"""Sphinx configuration of the cardenvs documentation (Sphinx + MyST + furo).

Build: ``.venv/bin/python -m sphinx -W --keep-going -b html docs docs/_build/html`` (the
``docs`` extra installs the tools).  The environment pages are generated at build time from
each env module's docstring (the same text ``help(cardenvs.doudizhu_v0)`` shows), so no table
is written twice.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

import cardenvs  # noqa: E402

project = "cardenvs"
author = "the cardenvs developers"
copyright = "2026, the cardenvs developers"
release = cardenvs.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 4
html_theme = "furo"
html_title = f"cardenvs {release}"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
autodoc_member_order = "bysource"
autodoc_inherit_docstrings = False  # gymnasium's own docstrings are not ours to format
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_ivar = True  # dataclass fields: one description each, not a second one
nitpicky = False
suppress_warnings = ["myst.header"]  # rules pages start at level-2 headings in places


def rst_to_myst(text: str) -> str:
    """A module docstring's RST inline markup as MyST: double-backtick literals and roles."""
    text = re.sub(r"``(.+?)``", r"`\1`", text)
    text = re.sub(r":(mod|class|func|meth|attr|data):`~?([^`]+)`", r"`\2`", text)
    return text


def write_env_pages(app) -> None:
    """docs/environments/<game>.md from each registered game's env module docstring."""
    import importlib

    from cardenvs import make_game
    from cardenvs.core.compact import codec_of
    from cardenvs.registry import REGISTRY

    out = HERE / "environments"
    out.mkdir(exist_ok=True)
    names = []
    for name, spec in REGISTRY.items():
        module = importlib.import_module(f"cardenvs.{spec.env_module}")
        doc = rst_to_myst(module.__doc__ or "")
        title, _, body = doc.strip().partition("\n")
        codec = codec_of(make_game(name))
        compact = (f"\n\n**Compact actions** (`actions=\"compact\"`, [how they work](../compact.md)): "
                   f"{codec.n:,} ids, against {codec.n_flat:,} flat.\n\n"
                   + codec.layout_markdown())
        page = f"# {title.strip()}\n\n{body.strip()}{compact}\n"
        path = out / f"{name}.md"
        if not path.exists() or path.read_text(encoding="utf-8") != page:
            path.write_text(page, encoding="utf-8")
        names.append(name)
    index = ("# Environments\n\nOne page per game, generated from its env module's docstring "
             "(`help(cardenvs.<game>_v0)` shows the same text).\n\n```{toctree}\n:maxdepth: 1\n\n"
             + "\n".join(names) + "\n```\n")
    path = out / "index.md"
    if not path.exists() or path.read_text(encoding="utf-8") != index:
        path.write_text(index, encoding="utf-8")


def setup(app):
    app.connect("builder-inited", write_env_pages)
    return {"parallel_read_safe": True}
