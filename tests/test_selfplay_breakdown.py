"""benchmarks/selfplay_breakdown.py: a short run writes its table, the parts add up to the
step, and every function it wrapped is back as it was."""

from __future__ import annotations

import re

import pytest

torch = pytest.importorskip("torch")

import cardenvs.agents.trained  # noqa: E402
from cardenvs import agents  # noqa: E402
import cardenvs.train.quant as quant  # noqa: E402
from benchmarks import selfplay_breakdown as bd  # noqa: E402


def test_breakdown_parts_add_up_and_wrappers_are_undone(tmp_path):
    before = (quant.int8_matmul, agents.trained.observation_part_cached, quant.cut_first_layer,
              quant.requantize, quant.output_layer)
    out = tmp_path / "b.md"
    assert bd.main(["--games", "wakeng", "--envs", "16", "--steps", "20", "--repeats", "1",
                    "--out", str(out)]) == 0
    assert before == (quant.int8_matmul, agents.trained.observation_part_cached,
                      quant.cut_first_layer, quant.requantize, quant.output_layer)
    text = out.read_text()
    step = float(re.search(r"([0-9.]+) ms a step of 16 decisions", text).group(1))
    rows = dict(re.findall(r"^\| ([a-z ,]+) \| ([0-9.-]+) \|", text, re.M))
    assert set(rows) == {*bd.PARTS, "rest"}
    parts = {k: float(v) for k, v in rows.items()}
    assert abs(sum(parts.values()) - step) <= 0.01 + 0.01 * step  # rounding of the table
    # the network and the engine did run: every measured part took time
    assert all(parts[k] > 0 for k in bd.PARTS)
