"""Golden playthroughs: every game whose ``tests/golden/<game>_seed7.txt`` exists must replay
to exactly that text (regenerate with ``python tests/golden/regenerate.py <game>``)."""

from __future__ import annotations

import difflib

import pytest

import cardenvs
from cardenvs import doudizhu4_v0
from cardenvs.golden import golden_path, golden_text, playthrough

GAMES_WITH_GOLDEN = [g for g in cardenvs.GAMES if golden_path(g).exists()]


def test_golden_files_present():
    for game in ("doudizhu", "doudizhu4"):
        assert game in GAMES_WITH_GOLDEN, f"missing {golden_path(game)}"


@pytest.mark.parametrize("game", GAMES_WITH_GOLDEN)
def test_golden_playthrough(game):
    expected = golden_path(game).read_text()
    got = golden_text(game)
    if got != expected:
        diff = "".join(difflib.unified_diff(
            expected.splitlines(True), got.splitlines(True), "golden", "now", n=2))
        pytest.fail(f"{game} no longer replays its golden file:\n{diff[:4000]}")


def test_playthrough_depends_on_seeds():
    a = playthrough(doudizhu4_v0.env, 7, 7)
    assert a == playthrough(doudizhu4_v0.env, 7, 7)
    assert a != playthrough(doudizhu4_v0.env, 8, 7)
    assert a != playthrough(doudizhu4_v0.env, 7, 8)
