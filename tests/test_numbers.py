"""Every number in the README and the docs comes from a file: the generated blocks are what their
sources give now (``benchmarks/numbers.py``), so a changed result file, weight file or action
layout fails here until the text is regenerated."""

from __future__ import annotations

import json
import re

import pytest

from benchmarks import numbers


def test_every_generated_block_matches_its_source():
    stale = numbers.stale_blocks()
    assert not stale, (f"stale generated blocks {stale}: run "
                       f".venv/bin/python -m benchmarks.numbers --write")


def test_the_documents_hold_their_blocks_and_none_is_empty():
    want = {"README.md": {"games", "main-job", "strength", "speed"},
            "docs/results.md": {"strength", "weights", "charts"},
            "agents/weights/README.md": {"weights"}}
    for doc, names in want.items():
        text = (numbers.ROOT / doc).read_text(encoding="utf-8")
        found = {m.group("name"): m.group("body") for m in numbers.BLOCK.finditer(text)}
        assert names <= set(found), (doc, names - set(found))
        for name in names:
            assert found[name].strip(), f"{doc}: block {name} is empty"


def test_the_strength_block_quotes_the_result_files():
    """The README's strength row of each game is the pairwise entry of its arena JSON."""
    text = (numbers.ROOT / "README.md").read_text(encoding="utf-8")
    body = re.search(r"<!-- numbers:strength -->\n(.*?)<!-- /numbers:strength -->", text,
                     re.S).group(1)
    results = numbers.strength_results()
    assert results, "no committed arena results in benchmarks/results/strength/"
    for res in results:
        (pair, st), = res["pairwise"].items()
        if pair != "trained - rules" or res["options"]:
            continue
        d = numbers._digits(st["score_diff"])
        assert f"{st['score_diff']:+.{d}f} [{st['ci'][0]:+.{d}f}, {st['ci'][1]:+.{d}f}]" in body


def test_every_shipped_weight_file_is_listed_with_its_sha256():
    import hashlib

    text = (numbers.ROOT / "agents" / "weights" / "README.md").read_text(encoding="utf-8")
    files = sorted(numbers.WEIGHTS.glob("*.npz"))
    assert files
    for path in files:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert f"| `{path.name}` |" in text and digest in text, path.name


def test_every_loaded_weight_file_ships():
    from cardenvs.registry import REGISTRY

    for name, spec in REGISTRY.items():
        assert (numbers.WEIGHTS / spec.trained_weights).is_file(), name


def test_main_job_table_drops_only_the_wrote_line():
    out = "doudizhu: 200 deals\nagent  score\nwrote a.json and a.png\n"
    assert numbers.main_job_table(out) == "doudizhu: 200 deals\nagent  score\n"


def test_check_output_compares_with_the_committed_table(tmp_path, capsys):
    same = tmp_path / "same.txt"
    same.write_text(numbers.main_job_output() + "wrote x.json\n", encoding="utf-8")
    assert numbers.main(["--check-output", str(same)]) == 0
    other = tmp_path / "other.txt"
    other.write_text(numbers.main_job_output().replace("trained", "trainee"), encoding="utf-8")
    assert numbers.main(["--check-output", str(other)]) == 1
    with pytest.raises(SystemExit):
        numbers.main(["--check-output", str(tmp_path / "missing.txt")])


def test_strength_results_are_arena_results():
    for res in numbers.strength_results():
        assert {"game", "agents", "deals", "seed", "pairwise"} <= set(res)
        assert res["deals"] >= 250, (res["_file"], res["deals"])
        json.dumps(res)
