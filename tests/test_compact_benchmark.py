"""benchmarks/compact.py: the shared timing helper, the VectorGame section and its refresh
in an existing report (--vector-only)."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks import compact as bc  # noqa: E402


def test_best_rate_counts_whole_runs():
    calls = []

    def run() -> int:
        calls.append(1)
        return 7

    r = bc.best_rate(run, 0.03, repeats=3)
    assert len(calls) >= 3 and r > 0
    # every run is counted whole: the rate is 7 steps per call over the round's time
    assert r <= 7 * len(calls) / 0.01 + 1e-9


def test_replace_section_keeps_the_other_sections():
    text = "# T\n\nintro\n\n## A\n\na1\n\n## VectorGame, 1,024 games, random decisions\n\nold\n" \
           "| x |\n\n## Profile\n\np1\n"
    sec = ["", bc.VECTOR_TITLE, "", "new row"]
    out = bc.replace_section(text, bc.VECTOR_TITLE, sec)
    assert out == ("# T\n\nintro\n\n## A\n\na1\n\n## VectorGame, 1,024 games, random "
                   "decisions\n\nnew row\n\n## Profile\n\np1\n")
    assert "old" not in out
    # the section last in the file, or missing (appended)
    out2 = bc.replace_section("# T\n\n## A\n\na1\n" + "\n".join(sec[:2]) + "\n\nold\n",
                              bc.VECTOR_TITLE, sec)
    assert out2 == "# T\n\n## A\n\na1\n\n" + bc.VECTOR_TITLE + "\n\nnew row\n"
    assert bc.replace_section("# T\n", bc.VECTOR_TITLE, sec).endswith("\nnew row\n")


def test_vector_rates_side_by_side():
    r = bc.vector_rates("paodekuai", 0.06, n=16, rounds=2)
    assert set(r) == {"flat", "flat-given", "compact"}
    for dec, plays in r.values():
        assert dec > 0 and 0 < plays <= dec
    assert r["flat"][0] == r["flat"][1]  # a flat decision is a whole play
    assert r["compact"][1] < r["compact"][0]  # Pao De Kuai's kickers: plays of several


def test_vector_only_refreshes_one_section(tmp_path, capsys):
    report = tmp_path / "compact.md"
    report.write_text("# Compact\n\n## Sizes\n\nkept\n\n" + bc.VECTOR_TITLE + "\n\nstale\n")
    assert bc.main(["--vector-only", "--games", "wakeng", "--seconds", "0.03",
                    "--out", str(report)]) == 0
    text = report.read_text()
    assert text.startswith("# Compact\n\n## Sizes\n\nkept\n\n" + bc.VECTOR_TITLE)
    assert "stale" not in text and "refreshed alone by" in text
    assert "| wakeng | False |" in text and "| wakeng | True |" in text
    with pytest.raises(SystemExit):
        bc.main(["--vector-only", "--out", str(tmp_path / "missing.md")])
    capsys.readouterr()


def test_aec_only_refreshes_one_section(tmp_path, capsys):
    report = tmp_path / "compact.md"
    report.write_text("# Compact\n\n## Sizes\n\nkept\n\n" + bc.AEC_TITLE + "\n\nstale\n\n"
                      + bc.VECTOR_TITLE + "\n\nvector kept\n")
    assert bc.main(["--aec-only", "--games", "wakeng", "--seconds", "0.03",
                    "--out", str(report)]) == 0
    text = report.read_text()
    assert text.startswith("# Compact\n\n## Sizes\n\nkept\n\n" + bc.AEC_TITLE)
    assert text.endswith(bc.VECTOR_TITLE + "\n\nvector kept\n")
    assert "stale" not in text and "refreshed alone by `python -m benchmarks.compact " \
        "--aec-only --seconds 0.03`" in text
    row = next(line for line in text.split("\n") if line.startswith("| wakeng |"))
    flat, comp = (float(x.replace(",", "")) for x in row.split("|")[2:4])
    assert flat > 0 and comp > 0
    with pytest.raises(SystemExit):
        bc.main(["--aec-only", "--out", str(tmp_path / "missing.md")])
    with pytest.raises(SystemExit):  # one section at a time
        bc.main(["--aec-only", "--vector-only", "--out", str(report)])
    capsys.readouterr()
