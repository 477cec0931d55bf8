"""One import name for each source file of the agents and the trainers (``cardenvs.agents``,
``cardenvs.train``), from any folder: the ``rules`` opponent and the ``trained`` agent work
outside the checkout, also after a run in the checkout filled numba's caches (a cache
written under a second name, ``agents.planner``, cannot be loaded where only
``cardenvs.agents`` exists), and the bare names of a checkout are aliases of the same
modules."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# what a user's script does: a rules opponent in the single-agent view, the trained agent
PLAY = textwrap.dedent("""
    import json, sys
    import numpy as np
    from cardenvs.agents import make_agent
    from cardenvs.wrappers import SeatEnv

    env = SeatEnv("wakeng", seats=0, opponents="rules")
    obs, info = env.reset(seed=3)
    agent = make_agent("trained", "wakeng", seed=0)
    done, steps = False, 0
    while not done:
        mask = info["action_mask"]
        action = agent.act({"observation": obs, "action_mask": mask}, np.flatnonzero(mask))
        obs, r, term, trunc, info = env.step(action)
        done, steps = term or trunc, steps + 1
    own = sorted({m.__name__ for k, m in list(sys.modules.items())
                  if k.split(".")[0] in ("agents", "train", "cardenvs")
                  and getattr(m, "__file__", None)})
    print(json.dumps({"steps": steps, "agents_module": type(agent).__module__,
                      "names": own}))
""")


def _run(code: str, cwd, cache_dir) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir))
    env.pop("PYTHONPATH", None)
    res = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True,
                         text=True, timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_agents_run_outside_the_checkout_after_a_checkout_run_filled_the_caches(tmp_path):
    cache = tmp_path / "numba_cache"  # fresh: the checkout run compiles and writes it
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    first = _run(PLAY, ROOT, cache)
    assert any(cache.rglob("planner.*.nbi"))  # the agents' kernels were cached
    second = _run(PLAY, elsewhere, cache)  # another folder, the caches of the first run
    for res in (first, second):
        assert res["steps"] > 0
        assert res["agents_module"] == "cardenvs.agents.trained"
        # every module of ours under its one name: no agents.* or train.* module objects
        assert all(n.startswith("cardenvs") for n in res["names"]), res["names"]
    assert "cardenvs.agents.planner" in second["names"]


ALIASES = textwrap.dedent("""
    import json, sys
    import agents, agents.planner, train.common
    from agents.rules import RulesAgent
    import cardenvs.agents, cardenvs.agents.planner, cardenvs.agents.rules, cardenvs.train.common
    print(json.dumps({
        "same": [agents is cardenvs.agents, agents.planner is cardenvs.agents.planner,
                 RulesAgent is cardenvs.agents.rules.RulesAgent,
                 train.common is cardenvs.train.common],
        "names": sorted({m.__name__ for k, m in list(sys.modules.items())
                         if k.split(".")[0] in ("agents", "train")}),
        "spec": [agents.__spec__.name, agents.planner.__spec__.name],
    }))
""")


def test_bare_names_in_a_checkout_are_aliases_of_the_one_module(tmp_path):
    res = _run(ALIASES, ROOT, tmp_path / "numba_cache")
    assert res["same"] == [True, True, True, True]
    assert all(n.startswith(("cardenvs.agents", "cardenvs.train")) for n in res["names"])
    assert res["spec"] == ["cardenvs.agents", "cardenvs.agents.planner"]


def test_python_m_train_runs_from_the_checkout_under_one_name():
    # `python -m train.dmc` (the docs' commands) and `python -m train METHOD` still run
    for args in (["-m", "train.dmc", "--help"], ["-m", "train", "dmc", "--help"],
                 ["-m", "cardenvs.train.dmc", "--help"]):
        res = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True,
                             text=True, timeout=300)
        assert res.returncode == 0, res.stderr[-3000:]
        assert "--minutes" in res.stdout
    bad = subprocess.run([sys.executable, "-m", "train", "nope", "wakeng"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "unknown training method 'nope'" in bad.stderr


def test_import_subpackage_names_the_package():
    import pytest

    from cardenvs.subpackages import import_subpackage

    import cardenvs.agents
    assert import_subpackage("agents") is cardenvs.agents
    with pytest.raises(ValueError, match="unknown subpackage 'nope'"):
        import_subpackage("nope")


def test_numba_caches_of_the_bare_names_are_forgotten_once(tmp_path):
    """A checkout upgraded from 0.1.0 holds numba cache files compiled as ``agents.X``; the first
    import deletes its cache files once (they compile again), later imports keep them."""
    from cardenvs.subpackages import CACHE_MARK, forget_bare_name_caches

    cache = tmp_path / "__pycache__"
    cache.mkdir()
    for name in ("planner.plan-12.py311.nbi", "planner.plan-12.py311.1.nbc"):
        (cache / name).write_bytes(b"old")
    (cache / "planner.cpython-311.pyc").write_bytes(b"pyc")
    assert forget_bare_name_caches(tmp_path) == 2
    assert sorted(p.name for p in cache.iterdir()) == sorted([CACHE_MARK,
                                                              "planner.cpython-311.pyc"])
    (cache / "planner.plan-12.py311.nbi").write_bytes(b"new")  # compiled by this version
    assert forget_bare_name_caches(tmp_path) == 0
    assert (cache / "planner.plan-12.py311.nbi").exists()
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    assert forget_bare_name_caches(fresh) == 0 and (fresh / "__pycache__" / CACHE_MARK).exists()
