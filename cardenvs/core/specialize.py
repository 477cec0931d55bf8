"""Cached per-game copies of numba functions that take a game's kernels as arguments.

A function such as :func:`cardenvs.vector._engine` serves every game because the game's
kernels (numba dispatchers) are passed to it as arguments.  numba cannot cache such a function
(a dispatcher argument is lowered as the address of a live Python object), so every new
process compiled it again: about 15 s per game even with a warm cache.

:func:`specialize` writes, once per game's kernel set, a small module holding the template's
source with its kernel parameters (those named ``k_*``) turned into module globals imported
from the game's kernel module, decorated ``@njit(cache=True)``, and imports it; numba then
caches its machine code like any other function, and a new process loads it from there.
Every function the template calls (directly or through others) that takes kernel parameters
too, such as the rollout policy's scorers under the rollout engine, gets a copy of its own
in the module (``_bound_NAME``, the kernels bound the same way, the calls rewritten): a
dispatcher handed down as an argument would make the whole copy uncacheable.  :func:`run`
calls a template through its copy, memoised per kernel set.  The
generated module's text carries a fingerprint of every source it depends on (the template's
own source and the values of the globals it reads, the kernels' modules, ``cardenvs/core``
and ``cardenvs/games``, numba's and Python's versions): when one changes, the text changes,
the file is rewritten and numba compiles afresh (numba's own cache only watches the file of
the function itself).

The modules live in ``$CARDENVS_CACHE_DIR`` when set, else in ``cardenvs/__pycache__/engines``
when the package directory is writable, else in ``$XDG_CACHE_HOME/cardenvs/engines``
(``~/.cache/...``); numba's cache files go to their ``__pycache__``.  Games whose kernels are
not importable module-level functions (built at run time) keep the uncached template.

The first call of a specialised function that has no cached machine code says so on stderr
(once per process and function) with a rough duration, and how long it took when done.
"""

from __future__ import annotations

import ast
import glob
import hashlib
import importlib.util
import inspect
import os
import sys
import textwrap
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import numba

if TYPE_CHECKING:
    from .game import Game

_PACKAGE = Path(__file__).resolve().parent.parent  # cardenvs/
_SPECS: dict = {}
_FINGERPRINT: Optional[str] = None


@dataclass
class Specialized:
    """A specialised function: ``dispatcher`` takes the template's parameters whose ``keep``
    flag is set (the kernels' are dropped)."""

    dispatcher: Any
    keep: tuple
    label: str

    def args(self, full: tuple) -> tuple:
        """The arguments of ``dispatcher`` from the template's (a prefix is fine)."""
        return tuple(a for a, k in zip(full, self.keep) if k)

    def call(self, args: tuple):
        """Call ``dispatcher``; the first call without cached machine code says that it
        compiles (stderr) and how long that took."""
        d = self.dispatcher
        if d.overloads or _has_cache_index(d):
            return d(*args)
        print(f"cardenvs: compiling {self.label} (once per machine; typically 15-60 s, longer "
              f"when the game's own kernels compile too) ...", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        out = d(*args)
        print(f"cardenvs: compiled {self.label} in {time.perf_counter() - t0:.0f} s (cached in "
              f"{d.stats.cache_path})", file=sys.stderr, flush=True)
        return out


def _has_cache_index(d) -> bool:
    path = d.stats.cache_path
    stem = Path(inspect.getfile(d.py_func)).stem
    return bool(path) and bool(glob.glob(os.path.join(path, f"{stem}.{d.py_func.__name__}-*.nbi")))


def cache_dir(kind: str = "engines") -> Path:
    """Where cardenvs keeps what it builds once per machine, by ``kind`` (``"engines"``: the
    generated modules; ``"tables"``: the play tables of :func:`cardenvs.core.table.cached`);
    see the module docstring."""
    env = os.environ.get("CARDENVS_CACHE_DIR")
    if env:
        return Path(env).expanduser() / kind
    local = _PACKAGE / "__pycache__"
    try:
        local.mkdir(exist_ok=True)
        if os.access(local, os.W_OK):
            return local / kind
    except OSError:
        pass
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "cardenvs" / kind


def _fingerprint(extra_files, extra_text: str = "") -> str:
    """A hash of ``cardenvs/core`` and ``cardenvs/games``, numba's and Python's versions,
    ``extra_files`` and ``extra_text``."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        h = hashlib.sha256()
        h.update(f"numba {numba.__version__}; python {sys.version}".encode())
        files = sorted(set(glob.glob(str(_PACKAGE / "core" / "*.py"))
                           + glob.glob(str(_PACKAGE / "games" / "*.py"))))
        for f in files:
            h.update(f.encode())
            h.update(Path(f).read_bytes())
        _FINGERPRINT = h.hexdigest()
    h = hashlib.sha256(_FINGERPRINT.encode())
    for f in sorted(set(extra_files)):
        h.update(Path(f).read_bytes())
    h.update(extra_text.encode())
    return h.hexdigest()[:32]


def _stable_repr(value) -> str:
    """``repr`` of a constant; a function by its module and name (its source is hashed with
    its module's file)."""
    if isinstance(value, (bool, int, float, str, bytes, tuple)):
        return repr(value)
    py = getattr(value, "py_func", value)
    return f"{getattr(py, '__module__', '?')}.{getattr(py, '__qualname__', type(value).__name__)}"


def _kernel_ref(dispatcher) -> Optional[tuple[str, str]]:
    """``(module, name)`` under which ``dispatcher`` can be imported, or ``None``."""
    py = getattr(dispatcher, "py_func", None)
    if py is None:
        return None
    mod = sys.modules.get(py.__module__)
    if mod is None or getattr(mod, py.__name__, None) is not dispatcher:
        return None
    return py.__module__, py.__name__


_BOUND = "_bound_"  # prefix of the copies of the template's kernel-taking callees


def _kernel_params(py) -> list[str]:
    return [p for p in inspect.signature(py).parameters if p.startswith("k_")]


def _tree(py) -> ast.FunctionDef:
    fn = ast.parse(textwrap.dedent(inspect.getsource(py))).body[0]
    assert isinstance(fn, ast.FunctionDef)
    return fn


def _bound_functions(template, kernels: dict) -> Optional[list]:
    """The template's Python function and every function it calls, directly or through
    others, that takes kernel parameters (those get copies with the kernels bound too: a
    dispatcher passed down as an argument would make the copy uncacheable); ``None`` when
    a callee takes a kernel the game does not bind."""
    order, seen, stack = [], set(), [template.py_func]
    while stack:
        py = stack.pop()
        if py in seen:
            continue
        seen.add(py)
        order.append(py)
        module = vars(sys.modules[py.__module__])
        for node in ast.walk(_tree(py)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                callee = getattr(module.get(node.func.id), "py_func", None)
                if callee is not None and callee is not py and _kernel_params(callee):
                    if not set(_kernel_params(callee)) <= set(kernels):
                        return None
                    stack.append(callee)
    return order


def _source(template, kernels: dict, fingerprint: str, funcs: list) -> Optional[str]:
    """The generated module's text: ``funcs`` (:func:`_bound_functions`) with their kernel
    parameters removed and bound to module globals, the callees renamed ``_bound_NAME``;
    ``None`` when a call passes something else than the same kernel down, or two modules
    would give one name two meanings."""
    bound = {py for py in funcs[1:]}
    imports: dict[str, tuple[str, object]] = {}  # name -> (module, object)
    bodies = []
    for py in funcs:
        module = vars(sys.modules[py.__module__])
        fn = _tree(py)
        fn.decorator_list = []
        fn.args.args = [a for a in fn.args.args if a.arg not in kernels]
        if py is not funcs[0]:
            fn.name = _BOUND + py.__name__
        for node in ast.walk(fn):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            callee = getattr(module.get(node.func.id), "py_func", None)
            if callee is None or callee not in bound:
                continue
            params = list(inspect.signature(callee).parameters)
            for i in sorted((params.index(k) for k in _kernel_params(callee)), reverse=True):
                arg = node.args[i] if i < len(node.args) else None
                if not (isinstance(arg, ast.Name) and arg.id == params[i]):
                    return None
                del node.args[i]
            if any(kw.arg in kernels for kw in node.keywords):
                return None
            node.func.id = _BOUND + callee.__name__
        used = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
        for n in sorted(used):
            if n in kernels or n not in module or n.startswith(_BOUND):
                continue
            if getattr(module[n], "py_func", None) in bound:
                continue
            prev = imports.get(n)
            if prev is not None and prev[1] is not module[n]:
                return None
            imports[n] = (py.__module__, module[n])
        opts = {k: v for k, v in (sys.modules[py.__module__].__dict__[py.__name__]
                                  .targetoptions.items())
                if k not in ("nopython", "cache") and v is not None}
        flags = "".join(f", {k}={v!r}" for k, v in sorted(opts.items()))
        bodies += ["", "", f"@njit(cache=True{flags})", ast.unparse(fn)]
    py = template.py_func
    lines = [f"# Generated by cardenvs.core.specialize: {py.__module__}.{py.__name__} with the "
             f"kernels of {', '.join(sorted({m for m, _ in kernels.values()}))} bound.",
             "# Do not edit: rewritten when a source it depends on changes.",
             f"# fingerprint {fingerprint}",
             "from numba import njit",
             ""]
    by_module: dict[str, list[str]] = {}
    for n, (m, _) in sorted(imports.items()):
        by_module.setdefault(m, []).append(n)
    for m, names in sorted(by_module.items()):
        lines.append(f"from {m} import {', '.join(names)}")
    for param, (mod, name) in sorted(kernels.items()):
        lines.append(f"from {mod} import {name} as {param}")
    lines += bodies + [""]
    return "\n".join(lines)


def specialize(template: Any, game: Game, label: str) -> Optional[Specialized]:
    """The cached copy of ``template`` (an ``njit`` function whose ``k_*`` parameters take
    ``game``'s kernels of the same name) for ``game``, or ``None`` when ``game``'s kernels
    cannot be imported by name (then call ``template`` itself)."""
    params = list(inspect.signature(template.py_func).parameters)
    kernels = {}
    for p in params:
        if p.startswith("k_"):
            ref = _kernel_ref(getattr(game, p, None))
            if ref is None:
                return None
            kernels[p] = ref
    key = (template.py_func.__module__, template.py_func.__qualname__,
           tuple(sorted(kernels.items())))
    spec = _SPECS.get(key)
    if spec is not None:
        return spec
    with _LOCK:  # one thread writes and imports a module; the others wait and reuse it
        spec = _SPECS.get(key)
        if spec is None:
            spec = _specialize(template, kernels, params, key, label)
        return spec


def _specialize(template: Any, kernels: dict, params: list, key: tuple,
                label: str) -> Optional[Specialized]:
    """:func:`specialize`'s work for a kernel set not made yet in this process."""
    # the template's own source and the values of the globals it reads (not its whole
    # module: editing the rest of cardenvs/vector_kernels.py does not recompile the engines)
    funcs = _bound_functions(template, kernels)
    if funcs is None:
        return None
    text_in = []
    for py in funcs:  # each function's source and the values of the globals it reads
        module = vars(sys.modules[py.__module__])
        glob_values = {n: _stable_repr(module[n]) for n in py.__code__.co_names
                       if n in module and n not in kernels}
        text_in.append(inspect.getsource(py) + repr(sorted(glob_values.items())))
    files = [sys.modules[m].__file__ for m, _ in kernels.values()]
    fingerprint = _fingerprint(files, "\n".join(text_in))
    kmods = sorted({m for m, _ in kernels.values()})
    stem = "_".join([template.py_func.__name__.strip("_")]
                    + [m.rsplit(".", 1)[-1] for m in kmods])
    stem += "_" + hashlib.sha256(repr(key).encode()).hexdigest()[:8]
    text = _source(template, kernels, fingerprint, funcs)
    if text is None:
        return None
    folder = cache_dir()
    path = folder / f"{stem}.py"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text() != text:
            tmp = folder / f".{stem}.{os.getpid()}.tmp"
            tmp.write_text(text)
            os.replace(tmp, path)  # atomic: concurrent processes write the same text
    except OSError:
        return None
    modname = f"_cardenvs_specialized_{stem}"
    loaded = sys.modules.get(modname)
    if loaded is None:
        loader_spec = importlib.util.spec_from_file_location(modname, path)
        assert loader_spec is not None and loader_spec.loader is not None  # a .py file
        loaded = importlib.util.module_from_spec(loader_spec)
        sys.modules[modname] = loaded
        loader_spec.loader.exec_module(loaded)
    spec = Specialized(getattr(loaded, template.py_func.__name__),
                       tuple(p not in kernels for p in params), label)
    _SPECS[key] = spec
    return spec


_LOCK = threading.RLock()
_KERNEL_PARAMS: dict = {}  # template -> its k_* parameter names
_RUN: dict = {}  # (template, kernels) -> Specialized or None
_MISSING = object()


def run(template, game, label: str, *args):
    """``template(*args)`` through its cached copy for ``game`` (:func:`specialize`), or
    ``template`` itself when ``game``'s kernels cannot be imported by name.

    ``args`` are the template's full arguments, the kernels (``game.k_*``) included; the
    look-up is memoised per template and kernel set, so a call costs a few microseconds
    more than calling the dispatcher."""
    names = _KERNEL_PARAMS.get(template)
    if names is None:
        names = tuple(p for p in inspect.signature(template.py_func).parameters
                      if p.startswith("k_"))
        _KERNEL_PARAMS[template] = names
    key = (template, tuple(getattr(game, p, None) for p in names))
    spec = _RUN.get(key, _MISSING)
    if spec is _MISSING:
        spec = specialize(template, game, label)
        _RUN[key] = spec
    if spec is None:
        return template(*args)
    return spec.call(spec.args(args))
