"""What ``pip install`` puts on a machine: ``cardenvs`` with its agents and trainers inside it
(``cardenvs.agents``, ``cardenvs.train``), no top-level ``agents`` or ``train`` package to
clash with another project's; both a regular and an editable install.

Each install goes into a fresh virtual environment that borrows this environment's packages
(numpy, numba, torch ... through a ``.pth`` line) and is built with ``--no-deps
--no-build-isolation``, so nothing is downloaded.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import sysconfig
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (found, not imported: importing setuptools here would clash with distutils already loaded)
if any(importlib.util.find_spec(m) is None for m in ("pip", "setuptools")):
    pytest.skip("pip and setuptools are needed to build the package", allow_module_level=True)

CHECK = textwrap.dedent("""
    import importlib.util, json, os, sys
    import cardenvs, cardenvs.agents, cardenvs.train.dmc, cardenvs.train.pipeline
    from cardenvs.arena import import_agents, agents_module
    pkg = import_agents()
    print(json.dumps({
        "cardenvs": cardenvs.__file__,
        "agents_pkg": pkg.__name__, "agents_file": pkg.__file__,
        "top_agents": importlib.util.find_spec("agents") is not None,
        "top_train": importlib.util.find_spec("train") is not None,
        "weights": os.path.isfile(os.path.join(os.path.dirname(pkg.__file__), "weights",
                                               "wakeng_network.npz")),
        "trained": agents_module("trained").__name__,
        "registry": pkg.agent_class("rules").__module__,
        "train_main": importlib.util.find_spec("cardenvs.train.__main__") is not None,
    }))
""")


def _venv_with_shared_packages(path) -> str:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    py = os.path.join(path, "bin", "python")
    site = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    with open(os.path.join(site, "_shared_env.pth"), "w") as f:
        f.write(sysconfig.get_paths()["purelib"] + "\n")  # numpy, numba, pip, setuptools ...
    return py


def _source_copy(dest) -> str:
    """The files a build reads, copied (a build writes build/ and *.egg-info beside them,
    which must not land in the checkout while other tests run)."""
    import shutil

    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc")
    os.makedirs(dest)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(os.path.join(ROOT, name), dest)
    for name in ("cardenvs", "agents", "train"):
        shutil.copytree(os.path.join(ROOT, name), os.path.join(dest, name), ignore=ignore)
    return str(dest)


def _install_and_check(tmp_path, editable: bool) -> dict:
    import json

    src = _source_copy(tmp_path / "src")
    py = _venv_with_shared_packages(tmp_path / "venv")
    args = [py, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
            "--no-index"] + (["-e", src] if editable else [src])
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    res = subprocess.run(args, capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    out = subprocess.run([py, "-c", CHECK], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=300)  # outside the source folder
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_regular_install_puts_agents_and_train_inside_cardenvs(tmp_path):
    info = _install_and_check(tmp_path, editable=False)
    assert info["cardenvs"].startswith(str(tmp_path / "venv"))
    assert not info["top_agents"] and not info["top_train"]
    assert info["agents_pkg"] == "cardenvs.agents" and info["weights"]
    assert info["trained"] == "cardenvs.agents.trained"
    assert info["registry"] == "cardenvs.agents.rules"
    assert info["train_main"]


def test_editable_install_uses_the_checkout_without_top_level_packages(tmp_path):
    info = _install_and_check(tmp_path, editable=True)
    src = str(tmp_path / "src")
    assert info["cardenvs"] == os.path.join(src, "cardenvs", "__init__.py")
    assert not info["top_agents"] and not info["top_train"]
    # the checkout's agents/ folder, loaded once under the name the tests and trainers use
    assert info["agents_file"] == os.path.join(src, "agents", "__init__.py")
    assert info["weights"] and info["registry"].endswith(".rules")


RELEASE_CHECK = textwrap.dedent("""
    import json
    import numpy as np
    import cardenvs
    from cardenvs import wakeng_v0
    from cardenvs.agents import make_agent
    from cardenvs.arena import run_arena

    env = wakeng_v0.env()
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    trained = make_agent("trained", "wakeng")
    res = run_arena("wakeng", "trained,rules", 5, seed=0, progress=False)
    print(json.dumps({"version": cardenvs.__version__, "file": cardenvs.__file__,
                      "weights": trained.net.path if hasattr(trained.net, "path") else "",
                      "deals": res["deals"], "pairs": list(res["pairwise"])}))
""")


def test_release_builds_a_wheel_that_plays_from_outside_the_checkout(tmp_path):
    """``python -m build`` makes an sdist and a wheel; the wheel, installed into a fresh virtual
    environment, runs an env, the ``trained`` agent (its weights inside the wheel) and a 5-deal
    arena from a folder outside the checkout."""
    pytest.importorskip("build")
    import glob
    import json
    import zipfile

    src = _source_copy(tmp_path / "src")
    for name in ("LICENSE", "CHANGELOG.md"):
        if os.path.exists(os.path.join(ROOT, name)):
            import shutil

            shutil.copy(os.path.join(ROOT, name), src)
    dist = tmp_path / "dist"
    res = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist),
                          src], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-3000:]
    wheels = glob.glob(str(dist / "cardenvs-*.whl"))
    sdists = glob.glob(str(dist / "cardenvs-*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, os.listdir(dist)
    names = zipfile.ZipFile(wheels[0]).namelist()
    assert "cardenvs/agents/weights/wakeng_network.npz" in names
    assert "cardenvs/py.typed" in names and "cardenvs/web/static/index.html" in names
    assert not any(n.startswith(("agents/", "train/", "tests/")) for n in names)
    py = _venv_with_shared_packages(tmp_path / "venv")
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    res = subprocess.run([py, "-m", "pip", "install", "-q", "--no-deps", "--no-index", wheels[0]],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    out = subprocess.run([py, "-c", RELEASE_CHECK], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    info = json.loads(out.stdout.strip().splitlines()[-1])
    from cardenvs import __version__

    assert info["version"] == __version__
    assert info["file"].startswith(str(tmp_path / "venv"))
    assert info["deals"] == 5 and info["pairs"] == ["trained - rules"]
