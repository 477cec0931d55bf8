"""``benchmarks/pipeline_resume.py`` (issue 50's resume target) at its tiny default budget: the
stopped run is stopped 5 times and resumed, no stop loses a whole checkpoint interval, both
runs end with an arena result and a weight file that plays, and the results files are written.
(About three minutes: two ``cardenvs train wakeng --hours 0.02`` runs, one of them in six
sessions.)"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")

from benchmarks import pipeline_resume  # noqa: E402
from cardenvs.train.pipeline import ARENA_SEED  # noqa: E402


def test_stop_moments_are_seeded_and_spread():
    moments = pipeline_resume.stop_moments
    a = moments(100.0, 5, 0)
    assert a == moments(100.0, 5, 0) != moments(100.0, 5, 1)
    edges = [3 + 16.4 * k for k in range(6)]  # five equal slices of 3..85 s
    assert all(lo <= t <= hi for t, lo, hi in zip(a, edges[:-1], edges[1:])), a


def test_bad_input_is_a_clear_error(tmp_path, capsys):
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "x").write_text("mine")
    for argv, words in ((["--hours", "0"], "--hours must be a number > 0"),
                        (["--kills", "0"], "--kills must be >= 1"),
                        (["--sigkill", "6"], "--sigkill: stop numbers in 1..5"),
                        (["--work", str(busy)], "is not empty")):
        assert pipeline_resume.main([*argv, "--results", str(tmp_path / "r")]) == 2
        assert words in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_five_stops_lose_at_most_one_interval(tmp_path):
    results = tmp_path / "results"
    rc = pipeline_resume.main(["--work", str(tmp_path / "work"), "--results", str(results)])
    res = json.loads((results / "pipeline_resume.json").read_text())
    md = (results / "pipeline_resume.md").read_text()
    assert rc == (0 if res["all_within_one_interval"] and res["ci_overlap"] else 1)
    assert res["hours"] == 0.02 and res["stops_done"] == 5 and len(res["stops"]) == 5
    assert [r["kill"] for r in res["stops"]] == [1, 2, 3, 4, 5]
    assert all(r["signal"] == "SIGTERM" and r["rc"] == 143 for r in res["stops"])
    run_s = [r["run_s"] for r in res["stops"]]
    assert run_s == sorted(run_s) and run_s[0] >= res["stop_moments_s"][0]
    for r in res["stops"]:
        if r["stage"] is None:  # landed between two stages: nothing to lose
            continue
        assert r["unit"] == pipeline_resume.UNITS[r["kind"]]
        assert r["resumed_from"] >= 0 and r["lost_units"] < 1, r  # no whole unit lost
        assert r["interval_s"] is not None and r["lost_s"] <= r["interval_s"], r
        assert r["within_one_interval"], r
    assert res["all_within_one_interval"]
    stages = ["imitate.collect", "imitate.fit", "dagger1.collect", "dagger1.relabel",
              "dagger1.fit", "finetune", "arena", "report"]
    for label, sessions in (("uninterrupted", 1), ("killed", 6)):
        run = res["runs"][label]
        assert run["sessions"] == sessions and run["stages_done"] == stages
        assert run["weights_exist"] and run["weights_load"]
        arena = run["arena"]
        assert arena["seed"] == ARENA_SEED and arena["deals"] >= 20
        assert arena["ci"][0] <= arena["diff"] <= arena["ci"][1]
    a, b = res["runs"]["uninterrupted"]["arena"]["ci"], res["runs"]["killed"]["arena"]["ci"]
    assert res["ci_overlap"] == (a[0] <= b[1] and b[0] <= a[1])
    assert md.count("| SIGTERM |") == 5 and "| uninterrupted | 1 |" in md
    assert "/tmp" not in json.dumps(res)  # no folder of this machine in the results
