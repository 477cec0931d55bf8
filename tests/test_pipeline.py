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


def test_compact_run_arena_equals_the_flat_arena_of_its_weights(tmp_path):
    """``--option actions=compact``: the stages train as in a flat run, the final arena plays
    the compact env (the file through CompactAdapter), and its result is, deal by deal, the
    flat arena's of the same weights, deals and seed; config.json and report.md say so."""
    import glob

    from cardenvs.arena import run_arena

    out = tmp_path / "run"
    p = _start(out, "--option", "actions=compact")
    log, _ = p.communicate(timeout=900)
    assert p.returncode == 0, log
    state, config = _state(out), json.load(open(out / "config.json"))
    assert list(state["done"]) == STAGES
    assert config["options"] == {} and config["actions"] == "compact"
    for st in config["stages"]:  # the training stages got no action mode
        assert "actions" not in json.dumps(st)
    assert "actions" not in (out / "logs" / "imitate.collect.log").read_text()
    arena = state["done"]["arena"]
    assert arena["actions"] == "compact"
    (path,) = glob.glob(str(out / "arena" / "*.json"))
    compact = json.load(open(path))
    assert compact["options"] == {"actions": "compact"}
    flat = run_arena("wakeng", [f"trained:{out / 'wakeng.npz'}", "rules"], arena["deals"],
                     seed=pipeline.ARENA_SEED, progress=False)
    assert flat["options"] == {}
    assert compact["score_per_deal"] == flat["score_per_deal"]
    assert compact["pairwise"] == flat["pairwise"] and compact["decisions"] == flat["decisions"]
    report = (out / "report.md").read_text()
    assert "--option actions='compact'" in report and "**Action mode**: `compact`" in report


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
    (["doudizhu", "--option", "actions=compacted"], "--option actions='compacted': actions="),
    (["doudizhu", "--option", "actions=1"], "--option actions=1: actions must be a str"),
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
    # a run from before the action mode was recorded is a flat one
    assert main(["wakeng", "--out", str(out), "--resume", "--option", "actions=compact"]) == 2
    assert "has actions flat" in capsys.readouterr().err
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


# -- the device of the fits (no GPU needed: torch.cuda is monkeypatched) ---------------------
def _cuda(monkeypatch, available: bool, count: int = 1) -> None:
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: available)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: count if available else 0)


def test_select_device_picks_cuda_only_where_it_is(monkeypatch):
    from cardenvs.train.common import select_device

    _cuda(monkeypatch, True)
    assert select_device("auto").type == "cuda" and select_device("cpu").type == "cpu"
    assert select_device("cuda").type == "cuda" and select_device("cuda:0").index == 0
    with pytest.raises(ValueError, match="1 CUDA device"):
        select_device("cuda:1")
    _cuda(monkeypatch, False)
    assert select_device("auto").type == "cpu"
    with pytest.raises(ValueError, match="--device cuda: CUDA is not available here"):
        select_device("cuda")
    with pytest.raises(ValueError, match="--device must be one of auto, cpu, cuda"):
        select_device("gpu")


class Launched(Exception):
    """Raised in place of a stage's child process by :func:`_record_children`."""


def _record_children(monkeypatch) -> list:
    """Make every stage's child process record its arguments and raise :class:`Launched`."""
    seen: list = []

    def child(self, st, args, *a, **kw):
        seen.append(args)
        raise Launched

    monkeypatch.setattr(pipeline.Pipeline, "child", child)
    return seen


def test_fit_stages_learn_on_the_device_chosen(monkeypatch, tmp_path):
    """``--device auto`` is cuda where torch sees CUDA, cpu elsewhere; the fits and the
    fine-tuning get it on their command line; ``--device cuda`` without CUDA is refused (in
    the pipeline, ``distill fit`` and ``train.finetune``) before anything is written."""
    from cardenvs.train import distill
    from cardenvs.train.finetune import Finetune, FinetuneConfig

    seen = _record_children(monkeypatch)
    for available, want in ((True, "cuda"), (False, "cpu")):
        _cuda(monkeypatch, available)
        out = str(tmp_path / want)
        config, state = pipeline.prepare("wakeng", {}, 0.02, out, False, 1, {}, "auto")
        assert config["device"] == want
        pipe = pipeline.Pipeline(out, config, state, progress=False)
        os.makedirs(os.path.join(out, "logs"))
        for kind in ("fit", "finetune"):
            st = next(s for s in config["stages"] if s["kind"] == kind)
            with pytest.raises(Launched):
                getattr(pipe, f"stage_{kind}")(st, 60.0, 0, 1)
            args = seen.pop()
            assert args[args.index("--device") + 1] == want, args
    _cuda(monkeypatch, False)
    with pytest.raises(ValueError, match="CUDA is not available"):
        pipeline.prepare("wakeng", {}, 0.02, str(tmp_path / "x"), False, 1, {}, "cuda")
    assert main(["wakeng", "--device", "cuda", "--out", str(tmp_path / "y"),
                 "--no-progress"]) == 2
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()
    with pytest.raises(ValueError, match="CUDA is not available"):
        distill.fit("wakeng", str(tmp_path / "nodata"), device="cuda")
    from cardenvs.agents.trained import default_weights_path

    init = default_weights_path("wakeng")
    with pytest.raises(ValueError, match="CUDA is not available"):
        Finetune(FinetuneConfig(game="wakeng", init=init, out=str(tmp_path / "ft"),
                                device="cuda"))
    assert not (tmp_path / "ft").exists()


# -- --ray: the collections' and the arena's blocks as Ray tasks -----------------------------
@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip("ray")
    from cardenvs.train.ray_tasks import connect

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield connect("local")  # the instance started above: its address
    ray.shutdown()


def test_ray_collection_and_arena_equal_the_runs_without_ray(tmp_path, local_ray):
    import numpy as np

    from cardenvs.arena import run_arena
    from cardenvs.train.distill import collect
    from cardenvs.train.ray_tasks import RayPool

    kw = dict(teacher="rules", deals=6, block=2, seed=3, progress=False)
    plain = collect("wakeng", out=str(tmp_path / "plain"), **kw)
    on_ray = collect("wakeng", out=str(tmp_path / "ray"), jobs=2, ray=local_ray, **kw)
    assert on_ray == plain and plain["blocks"] == 3 and plain["decisions"] > 0
    for name in ("shard_000000.npz", "shard_000001.npz", "shard_000002.npz"):
        with np.load(tmp_path / "plain" / name) as a, np.load(tmp_path / "ray" / name) as b:
            assert sorted(a.files) == sorted(b.files)
            assert all(np.array_equal(a[k], b[k]) for k in a.files), name
    agents = ["trained", "rules"]  # both deterministic: blocks give the serial run's result
    serial = run_arena("wakeng", agents, 20, seed=1, progress=False)
    ray_run = run_arena("wakeng", agents, 20, seed=1, progress=False, jobs=2,
                        pool=RayPool(local_ray))
    (pair, st), = serial["pairwise"].items()
    assert ray_run["pairwise"][pair]["score_diff"] == pytest.approx(st["score_diff"], abs=1e-12)
    assert ray_run["pairwise"][pair]["ci"] == pytest.approx(st["ci"], abs=1e-12)


def test_pipeline_passes_the_ray_cluster_to_its_stages(monkeypatch, tmp_path, local_ray):
    """``--ray``: the collections' processes join the pipeline's cluster (``--ray ADDRESS``);
    the arena's blocks are Ray tasks; a resumed run may drop it."""
    seen = _record_children(monkeypatch)
    out = str(tmp_path / "run")
    config, state = pipeline.prepare("wakeng", {}, 0.02, out, False, 2, {}, "cpu", "local")
    assert config["ray"] == "local"
    pipe = pipeline.Pipeline(out, config, state, progress=False)
    from cardenvs.train.ray_tasks import connect

    pipe.ray_address = connect(pipe.ray, pipe.jobs)  # what run() does first
    os.makedirs(os.path.join(out, "logs"))
    st = next(s for s in config["stages"] if s["kind"] == "collect")
    with pytest.raises(Launched):
        pipe.stage_collect(st, 60.0, 0, 1)
    args = seen.pop()
    assert args[args.index("--ray") + 1] == local_ray
    pipeline._write_json(os.path.join(out, "config.json"), config)
    pipeline._write_json(os.path.join(out, "state.json"), state)
    again, _ = pipeline.prepare("wakeng", {}, None, out, True, 1, {}, "cpu", None)
    assert again["ray"] is None and again["jobs"] == 1
