"""The web app of ``cardenvs serve``: play every game against agents, or watch agents play,
in a browser on this machine.

:mod:`cardenvs.web.session` holds one game (no web dependency); :mod:`cardenvs.web.server`
is the Starlette application (the ``web`` extra: ``pip install "cardenvs[web]"``).  The
static files (``static/``) are the page, its script and style sheet, and the card table's
drawing code (``table.js``, ``table.css``), which the replay viewer
(:mod:`cardenvs.replay_html`) inlines: one drawing code for both.
"""

from __future__ import annotations

from pathlib import Path

#: the folder of the page's files
STATIC = Path(__file__).resolve().parent / "static"


def shared_asset(name: str) -> str:
    """The text of one of the shared drawing files (``"table.js"``, ``"table.css"``)."""
    if name not in ("table.js", "table.css"):
        raise ValueError(f"no shared asset {name!r}; the shared files are table.js and table.css")
    return (STATIC / name).read_text(encoding="utf-8")
