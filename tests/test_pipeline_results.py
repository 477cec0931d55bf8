"""``benchmarks/pipeline_results.py``: a finished ``cardenvs train`` run's small files are
recorded in ``benchmarks/results/pipeline/NAME/`` (never its data or weights), an unfinished
run is refused; ``benchmarks.numbers``' ``pipeline`` block puts the run beside the shipped
agent's result against ``rules``."""

from __future__ import annotations

import json
import os

import pytest

pytest.importorskip("torch")

from benchmarks import numbers, pipeline_results  # noqa: E402
from cardenvs.train import pipeline  # noqa: E402


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """A run directory whose stages are all recorded done, with a weight file (the shipped
    Wakeng one), a real arena result of it against ``rules`` (a few deals), a shard and a
    report naming the folder."""
    import io
    import shutil

    from cardenvs.agents.trained import default_weights_path
    from cardenvs.arena import main_arena

    out = str(tmp_path_factory.mktemp("pipe") / "run")
    config, state = pipeline.prepare("wakeng", {}, 0.02, out, False, 1, {}, "cpu")
    os.makedirs(os.path.join(out, "imitate", "data"))
    shutil.copyfile(default_weights_path("wakeng"), os.path.join(out, "wakeng.npz"))
    res = main_arena("wakeng", [f"trained:{out}/wakeng.npz", "rules"], 6, pipeline.ARENA_SEED,
                     {}, os.path.join(out, "arena"), progress=False, stream=io.StringIO())
    (pair, st), = res["pairwise"].items()
    for s in config["stages"]:
        state["done"][s["name"]] = {}
        state["spent_s"][s["name"]] = 1.0
    state["done"]["arena"] = {"deals": 6, "seed": pipeline.ARENA_SEED, "pair": pair,
                              "actions": "flat", "diff": st["score_diff"], "ci": st["ci"]}
    pipeline._write_json(os.path.join(out, "config.json"), config)
    pipeline._write_json(os.path.join(out, "state.json"), state)
    for name, size in (("curve.png", 100), ("imitate/data/shard_000000.npz", 1000)):
        with open(os.path.join(out, name), "wb") as f:
            f.write(b"x" * size)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(f"Command: `cardenvs train wakeng --hours 0.02 --out {out}` (1 job(s))\n"
                f"Play it: `cardenvs arena wakeng --agents trained:{out}/wakeng.npz,rules`\n")
    return out, res


def _tree(root) -> list[str]:
    return sorted(os.path.relpath(os.path.join(d, f), root)
                  for d, _, fs in os.walk(root) for f in fs)


def test_a_finished_run_is_recorded_without_its_data(finished_run, tmp_path, capsys):
    run, res = finished_run
    dest = tmp_path / "pipeline"
    assert pipeline_results.main([run, "--dest", str(dest)]) == 0
    assert "wrote" in capsys.readouterr().out
    arena = [p for p in _tree(os.path.join(run, "arena")) if p.endswith(".json")]
    assert _tree(dest / "wakeng") == sorted(["config.json", "state.json", "report.md",
                                             "curve.png", f"arena/{arena[0]}"])
    # the same files, the run directory's path written RUN_DIR
    copied = (dest / "wakeng" / f"arena/{arena[0]}").read_text()
    assert run in open(os.path.join(run, "arena", arena[0])).read() and run not in copied
    assert json.loads(copied) == json.loads(open(os.path.join(run, "arena", arena[0])).read()
                                            .replace(run + "/", "RUN_DIR/"))
    assert (dest / "wakeng" / "report.md").read_text() == (
        "Command: `cardenvs train wakeng --hours 0.02 --out RUN_DIR` (1 job(s))\n"
        "Play it: `cardenvs arena wakeng --agents trained:RUN_DIR/wakeng.npz,rules`\n")
    assert (dest / "wakeng" / "curve.png").read_bytes() == b"x" * 100
    # again: the folder is replaced as a whole; --name picks another
    (dest / "wakeng" / "old.txt").write_text("stale")
    assert pipeline_results.main([run, "--dest", str(dest)]) == 0
    assert "old.txt" not in _tree(dest / "wakeng")
    assert pipeline_results.main([run, "--dest", str(dest), "--name", "wk_short"]) == 0
    assert sorted(os.listdir(dest)) == ["wakeng", "wk_short"]


def test_an_unfinished_run_is_refused(finished_run, tmp_path, capsys):
    run, _ = finished_run
    dest = tmp_path / "pipeline"
    state = json.load(open(os.path.join(run, "state.json")))
    half = tmp_path / "half"
    half.mkdir()
    del state["done"]["report"]
    (half / "config.json").write_text(open(os.path.join(run, "config.json")).read())
    (half / "state.json").write_text(json.dumps(state))
    for argv, words in (([str(half)], "an unfinished run (stages not done: report)"),
                        ([str(tmp_path)], "no training run there"),
                        ([run, "--name", "../x"], "a plain folder name")):
        assert pipeline_results.main([*argv, "--dest", str(dest)]) == 2
        assert words in capsys.readouterr().err
    assert not dest.exists()


def test_the_docs_block_sets_a_run_beside_the_shipped_agent(finished_run, tmp_path,
                                                              monkeypatch):
    run, res = finished_run
    monkeypatch.setattr(numbers, "PIPELINE", tmp_path / "pipeline")
    assert numbers.block_pipeline() == "No `cardenvs train` run is recorded yet.\n"
    pipeline_results.record(run, dest=numbers.PIPELINE)
    text = numbers.block_pipeline()
    (_, st), = res["pairwise"].items()
    shipped = numbers.find_result("wakeng", "trained", "rules", {})
    (_, sst), = shipped["pairwise"].items()
    mine, theirs = numbers._ci(st, 2), numbers._ci(sst, 2)
    overlap = "yes" if st["ci"][0] <= sst["ci"][1] and sst["ci"][0] <= st["ci"][1] else "no"
    row = text.splitlines()[2]
    assert row == (f"| Wakeng, a 0.02 h run (`benchmarks/results/pipeline/wakeng/`)"
                   f" | defaults | 0.02 | 8 of 8 | **{mine}** (6) | {theirs} (1,000) | "
                   f"{overlap} |")
