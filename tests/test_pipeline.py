"""``cardenvs train GAME`` (``train/pipeline.py``): a short run on Wakeng makes a file that
beats ``random``; SIGTERM at each stage and ``--resume`` give the stages of an uninterrupted
run; bad input is a clear error and writes nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("torch")

from cardenvs.train import pipeline  # noqa: E402
from cardenvs.train.pipeline import GAME_CONFIGS, game_config, main, make_plan  # noqa: E402

#: a short run: one DAgger round, small collections, a budget of 72 seconds, most of it
#: for imitating rules (what beats random)
SHORT = ["--hours", "0.02", "--set", "dagger_rounds=1", "--set", "imitate_deals=200",
         "--set", "dagger_deals=30", "--set", "arena_deals=40", "--set", "share_imitate=0.4",
         "--set", "share_dagger=0.3", "--set", "share_finetune=0.2", "--set", "share_arena=0.1",
         "--no-progress"]
STAGES = ["imitate.collect", "imitate.fit", "dagger1.collect", "dagger1.relabel",
          "dagger1.fit", "finetune", "arena", "report"]


def _start(out, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "cardenvs.train.pipeline", "wakeng",
                             "--out", str(out), *SHORT, *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=dict(os.environ, PYTHONUNBUFFERED="1"))


def _state(out) -> dict:
    try:
        with open(os.path.join(out, "state.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


@pytest.fixture(scope="module")
def short_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("train") / "run"
    p = _start(out)
    log, _ = p.communicate(timeout=900)
    assert p.returncode == 0, log
    return out


def test_every_game_has_a_valid_config():
    from cardenvs import GAMES

    assert set(GAME_CONFIGS) == set(GAMES)
    for game in GAMES:
        cfg = game_config(game)
        plan = make_plan(game, cfg, 3.0, 1)
        assert abs(sum(s["share"] for s in plan) - 1.0) < 1e-9
        assert [s["name"] for s in plan][-2:] == ["arena", "report"]
        assert sum(s["kind"] == "fit" for s in plan) == 1 + cfg.dagger_rounds
    # a short budget plans fewer DAgger rounds, smaller shards and no evaluations
    short = make_plan("wakeng", game_config("wakeng"), 0.033, 1)
    assert [s["name"] for s in short] == STAGES
    assert short[0]["block"] < GAME_CONFIGS["wakeng"].imitate_block
    assert short[1]["eval_deals"] == 0


def test_short_run_plays_and_beats_random(short_run):
    out = short_run
    state, config = _state(out), json.load(open(out / "config.json"))
    assert list(state["done"]) == STAGES
    assert config["game"] == "wakeng" and config["options"] == {}
    assert config["settings"]["dagger_rounds"] == 1
    assert [s["name"] for s in config["stages"]] == STAGES
    assert (out / "report.md").read_text().count("| dagger1.fit |") == 1
    assert (out / "curve.png").stat().st_size > 1000
    arena = state["done"]["arena"]
    assert arena["seed"] == pipeline.ARENA_SEED and arena["deals"] >= 20
    # the file plays as trained:DIR/wakeng.npz, and beats random
    from cardenvs.arena import run_arena

    res = run_arena("wakeng", [f"trained:{out / 'wakeng.npz'}", "random"], 30, seed=5,
                    progress=False)
    (pair, st), = res["pairwise"].items()
    assert st["ci"][0] > 0, (pair, st)


def _launches(out, stage: str) -> int:
    """How many times the pipeline started ``stage``'s process (its log's command lines)."""
    try:
        return (out / "logs" / f"{stage}.log").read_text().count("$ cardenvs.train")
    except OSError:
        return 0


def test_resume_after_sigterm_at_each_stage(tmp_path, short_run):
    """SIGTERM once each stage's process runs, then ``--resume``: the stopped stage is not done,
    the ones before it are, and the resumed run ends with every stage done.  A stage that ends
    between the poll and the signal (a short run's stages take seconds, less on an idle
    machine) is simply passed: the stop then lands in a later stage, which the test follows."""
    out = tmp_path / "run"
    targets = ["imitate.collect", "imitate.fit", "dagger1.collect", "dagger1.fit", "finetune",
               "arena"]
    stopped: list[str] = []
    first = True
    for stage in targets:
        if stage in _state(out).get("done", []):
            continue  # an earlier stop landed past it
        runs = _launches(out, stage)
        p = _start(out, *([] if first else ["--resume"]))
        first = False
        t0 = time.time()
        while True:
            state = _state(out)
            if state.get("current") == stage and _launches(out, stage) > runs:
                break  # the stage's process runs
            if stage in state.get("done", []):
                break  # it ended before a poll saw it run: the stop lands in a later stage
            assert p.poll() is None, p.communicate()[0]
            assert time.time() - t0 < 600
            time.sleep(0.05)
        p.send_signal(signal.SIGTERM)
        log, _ = p.communicate(timeout=300)
        if p.returncode == 0:  # the last stages ended before the signal: the run is complete
            assert list(_state(out)["done"]) == STAGES, log
            break
        assert p.returncode == 128 + signal.SIGTERM, log
        assert "--resume" in log
        state = _state(out)
        current = state["current"]
        assert current not in state["done"], log
        assert list(state["done"]) == STAGES[:STAGES.index(current)]
        if current == stage:
            stopped.append(current)
    assert len(stopped) >= 3, stopped
    if list(_state(out).get("done", [])) != STAGES:
        p = _start(out, "--resume")
        log, _ = p.communicate(timeout=900)
        assert p.returncode == 0, log
    assert list(_state(out)["done"]) == list(_state(short_run)["done"]) == STAGES
    assert (out / "wakeng.npz").exists()
    # a stage stopped after its process had started ran again on --resume (a fit or the
    # fine-tuning with --resume where it had written a checkpoint, else afresh)
    for stage in set(stopped) - {"arena"}:
        assert _launches(out, stage) >= 2, stage


def _listing(root) -> list:
    return sorted(os.path.relpath(os.path.join(d, f), root)
                  for d, _, fs in os.walk(root) for f in fs)


@pytest.mark.parametrize("argv, words", [
    (["nogame"], "unknown game 'nogame'"),
    (["wakeng", "--option", "bogus=1"], "no option 'bogus'"),
    (["paodekuai", "--option", "deck=14"], "deck=14"),
    (["wakeng", "--hours", "0"], "--hours must be a number > 0"),
    (["wakeng", "--hours", "nan"], "--hours must be a number > 0"),
    (["wakeng", "--set", "rounds=2"], "--set rounds: no such setting"),
    (["wakeng", "--set", "dagger_rounds=1.5"], "--set dagger_rounds: an int"),
    (["wakeng", "--set", "share_arena=0.5"], "add up to 1"),
    (["wakeng", "--jobs", "0"], "--jobs must be an int >= 1"),
    (["wakeng", "--resume"], "no training run"),
])
def test_bad_input_is_a_clear_error_and_writes_nothing(tmp_path, capsys, argv, words):
    out = tmp_path / "run"
    assert main([*argv, "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cardenvs train: error:") and words in err, err
    assert not out.exists()


def test_out_of_another_run_is_refused(tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    config = {"game": "doudizhu", "options": {}, "hours": 1.0, "jobs": 1,
              "settings": {}, "stages": []}
    (out / "config.json").write_text(json.dumps(config))
    before = {p: open(os.path.join(out, p)).read() for p in _listing(out)}
    for extra in ([], ["--resume"]):
        assert main(["wakeng", "--out", str(out), "--no-progress", *extra]) == 2
        err = capsys.readouterr().err
        assert "'doudizhu'" in err and ("another game" in err or "not 'wakeng'" in err), err
    # the same game without --resume, a folder of other files, other options on --resume
    config["game"] = "wakeng"
    config["settings"] = json.loads(json.dumps(pipeline.asdict(game_config("wakeng"))))
    (out / "config.json").write_text(json.dumps(config))
    (out / "state.json").write_text(json.dumps({"done": {}, "spent_s": {}, "elapsed_s": 0}))
    before = {p: open(os.path.join(out, p)).read() for p in _listing(out)}
    assert main(["wakeng", "--out", str(out), "--no-progress"]) == 2
    assert "continue it with --resume" in capsys.readouterr().err
    assert main(["wakeng", "--out", str(out), "--resume", "--option", "bombs=False"]) == 2
    assert "resume with the same ones" in capsys.readouterr().err
    assert main(["wakeng", "--out", str(out), "--resume", "--set", "dagger_rounds=1"]) == 2
    assert "resume with the same ones" in capsys.readouterr().err
    assert {p: open(os.path.join(out, p)).read() for p in _listing(out)} == before
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    assert main(["wakeng", "--out", str(other), "--no-progress"]) == 2
    assert "not empty" in capsys.readouterr().err
    assert _listing(other) == ["notes.txt"]


def test_cli_dispatches_train(capsys):
    from cardenvs.cli import main as cli_main

    assert cli_main(["train", "nogame", "--no-progress"]) == 2
    assert "unknown game 'nogame'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli_main(["train", "--help"])
    assert "--resume" in capsys.readouterr().out
