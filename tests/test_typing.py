"""The public API is typed and documented: mypy finds no errors in the ``cardenvs`` package
(``[tool.mypy]`` in pyproject.toml), every public callable of the public modules has type
hints and a docstring, and ``cardenvs.__all__`` lists the package's public names."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
import types
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

import cardenvs

ROOT = Path(__file__).resolve().parent.parent

#: the modules a user imports from; their public names (``__all__``, else every name without
#: a leading underscore) that cardenvs defines are the public callables checked below
PUBLIC_MODULES = [
    "cardenvs", "cardenvs.api", "cardenvs.registry", "cardenvs.core.aec", "cardenvs.core.game",
    "cardenvs.wrappers", "cardenvs.sb3", "cardenvs.vector", "cardenvs.core.infostate",
    "cardenvs.arena", "cardenvs.replay", "cardenvs.rllib", "cardenvs.multiagent",
    "cardenvs.torch_policy", "cardenvs.play", "cardenvs.cli",
    *(f"cardenvs.{m}" for m in cardenvs.GAMES.values()),
]


def _functions_of(qual: str, obj: Any) -> Iterator[tuple[str, Callable, bool]]:
    """``(qualified name, function, is_property)`` of a public function or class: the class's
    own public methods, ``__init__``, static and class methods and property getters."""
    if inspect.isfunction(obj):
        yield qual, obj, False
        return
    for k, v in vars(obj).items():
        if k.startswith("_") and k != "__init__":
            continue
        if isinstance(v, (staticmethod, classmethod)):
            v = v.__func__
        if isinstance(v, property) and v.fget is not None:
            yield f"{qual}.{k}", v.fget, True
        elif inspect.isfunction(v):
            yield f"{qual}.{k}", v, False


def public_callables() -> tuple[dict[str, Callable], dict[str, Any], list[str]]:
    """The public functions and methods of :data:`PUBLIC_MODULES` by qualified name, the
    public classes, and the modules skipped because an optional extra is missing."""
    funcs: dict[str, Callable] = {}
    classes: dict[str, Any] = {}
    skipped = []
    for name in PUBLIC_MODULES:
        try:
            mod = importlib.import_module(name)
        except ImportError as e:  # an optional extra (torch, ray, SB3) is not installed
            if (e.name or "").startswith("cardenvs"):
                raise
            skipped.append(f"{name} ({e.name} missing)")
            continue
        names = getattr(mod, "__all__", None) or [n for n in dir(mod) if not n.startswith("_")]
        for n in names:
            obj = getattr(mod, n)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            if not str(getattr(obj, "__module__", "")).startswith("cardenvs"):
                continue
            qual = f"{obj.__module__}.{obj.__qualname__}"
            if inspect.isclass(obj):
                classes[qual] = obj
            for q, f, _ in _functions_of(qual, obj):
                funcs.setdefault(q, f)
    return funcs, classes, skipped


def missing_hints_and_docs() -> tuple[list[str], list[str], int]:
    """The public callables without full type hints, those without a docstring, and the
    number checked."""
    funcs, classes, _ = public_callables()
    no_hints, no_doc = [], []
    for q, obj in classes.items():
        if not (obj.__doc__ or "").strip():
            no_doc.append(q)
    for q, f in sorted(funcs.items()):
        init = q.endswith(".__init__")
        if not init and not (f.__doc__ or "").strip():
            no_doc.append(q)
        sig = inspect.signature(f)
        params = [p for i, p in enumerate(sig.parameters.values())
                  if not (i == 0 and p.name in ("self", "cls"))]
        if (any(p.annotation is inspect.Parameter.empty for p in params)
                or (sig.return_annotation is inspect.Signature.empty and not init)):
            no_hints.append(q)
    return no_hints, no_doc, len(funcs)


def test_public_callables_have_hints_and_docstrings():
    no_hints, no_doc, n = missing_hints_and_docs()
    assert n > 200  # the scan finds the API (the modules import)
    assert not no_hints, f"{len(no_hints)} public callables without full type hints:\n  " + \
        "\n  ".join(no_hints)
    assert not no_doc, f"{len(no_doc)} public callables without a docstring:\n  " + \
        "\n  ".join(no_doc)


def test_the_scan_sees_what_it_checks():
    funcs, classes, _ = public_callables()
    assert "cardenvs.api.make_game" in funcs
    assert "cardenvs.core.infostate.InfoState.hand" in funcs  # a property's getter
    assert "cardenvs.core.game.Game.step" in funcs
    assert "cardenvs.core.aec.CardEnv" in classes
    assert not any(q.split(".")[-1].startswith("_") and not q.endswith("__init__")
                   for q in funcs)


def test_all_lists_the_public_names():
    public = {n for n in dir(cardenvs) if not n.startswith("_")
              and not isinstance(getattr(cardenvs, n), types.ModuleType)}
    assert "annotations" not in dir(cardenvs)
    assert public == set(cardenvs.__all__) - {"__version__"} - set(cardenvs.GAMES.values())
    assert all(hasattr(cardenvs, n) for n in cardenvs.__all__)
    assert len(cardenvs.__all__) == len(set(cardenvs.__all__))
    star: dict[str, Any] = {}
    exec("from cardenvs import *", star)
    assert set(star) - {"__builtins__"} == set(cardenvs.__all__)


def test_mypy_finds_no_errors():
    pytest.importorskip("mypy")
    proc = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert proc.stdout.startswith("Success: no issues found"), proc.stdout
