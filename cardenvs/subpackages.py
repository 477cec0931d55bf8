"""One import name for each source file of the baseline agents and the trainers.

The repository keeps them in its top-level folders ``agents/`` and ``train/``; every install
(a wheel, an editable install of a checkout) puts them inside this package, as
``cardenvs.agents`` and ``cardenvs.train``, and the code imports them by those names only.
A file loaded under two names runs twice and, worse, numba's cache records the name it was
compiled under: a cache written by ``agents.planner`` fails to load in a process that knows
only ``cardenvs.agents.planner`` (``ModuleNotFoundError: No module named 'agents'``).

Two conveniences of a checkout keep working without a second name:

* :func:`import_subpackage` loads ``cardenvs.agents`` / ``cardenvs.train`` from the
  checkout's folder when ``cardenvs`` is imported from a checkout that is not installed;
* the bare names ``agents`` and ``train`` (``python -m train.dmc`` from the repository root,
  ``import agents`` in an old script) are aliases: :func:`alias_bare_name` makes
  ``sys.modules["agents"]`` the ``cardenvs.agents`` module and resolves ``agents.X`` to the
  ``cardenvs.agents.X`` module object, so no source file is executed under the bare name.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Optional

#: the folders of a checkout installed inside ``cardenvs`` (bare name -> import name)
SUBPACKAGES: dict[str, str] = {"agents": "cardenvs.agents", "train": "cardenvs.train"}


def import_subpackage(short: str) -> ModuleType:
    """``cardenvs.agents`` (``short="agents"``) or ``cardenvs.train`` (``"train"``), imported.

    Installed (a wheel or an editable install) it is the ordinary import; from a checkout
    that is not installed (``cardenvs`` found on ``sys.path`` at the repository root) the
    checkout's folder is loaded under the same name, ``cardenvs.<short>``.
    """
    if short not in SUBPACKAGES:
        raise ValueError(f"unknown subpackage {short!r}: one of {', '.join(SUBPACKAGES)}")
    full = SUBPACKAGES[short]
    loaded = sys.modules.get(full)
    if loaded is not None:
        return loaded
    try:
        return importlib.import_module(full)
    except ModuleNotFoundError as e:
        if e.name != full:
            raise
    folder = Path(__file__).resolve().parent.parent / short
    if not (folder / "__init__.py").is_file():
        raise ModuleNotFoundError(
            f"{full} is not installed and there is no {short}/ folder beside the cardenvs "
            f"package ({folder.parent})", name=full)
    spec = importlib.util.spec_from_file_location(
        full, folder / "__init__.py", submodule_search_locations=[str(folder)])
    assert spec is not None and spec.loader is not None  # a .py file always has a loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[full] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(full, None)
        raise
    setattr(sys.modules["cardenvs"], short, module)
    return module


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves ``agents.X`` / ``train.X`` to the module object ``cardenvs.agents.X`` /
    ``cardenvs.train.X`` (imported once, under that name); installed by
    :func:`alias_bare_name`.  ``get_code`` lets ``python -m train.dmc`` run the file."""

    def find_spec(self, fullname: str, path=None, target=None):
        top, dot, rest = fullname.partition(".")
        if not dot or top not in SUBPACKAGES or sys.modules.get(top) is None:
            return None
        real = importlib.util.find_spec(f"{SUBPACKAGES[top]}.{rest}")
        if real is None:
            return None
        spec = importlib.machinery.ModuleSpec(
            fullname, self, origin=real.origin,
            is_package=real.submodule_search_locations is not None)
        spec.has_location = real.has_location
        spec.loader_state = real
        return spec

    def create_module(self, spec) -> ModuleType:
        module = importlib.import_module(spec.loader_state.name)
        spec.loader_state = module.__spec__  # the import system now sets the alias's on it
        return module

    def exec_module(self, module: ModuleType) -> None:
        assert module.__spec__ is not None  # create_module's module, spec set by the import
        module.__spec__ = module.__spec__.loader_state  # give the module its own spec back

    def get_code(self, fullname: str):
        """The code of the aliased file (``runpy``: ``python -m train.dmc``)."""
        real = _real_spec(fullname)
        return real.loader.get_code(real.name)

    def get_source(self, fullname: str) -> Optional[str]:
        real = _real_spec(fullname)
        return real.loader.get_source(real.name)

    def is_package(self, fullname: str) -> bool:
        return _real_spec(fullname).submodule_search_locations is not None


def _real_spec(fullname: str):
    top, _, rest = fullname.partition(".")
    return importlib.util.find_spec(f"{SUBPACKAGES[top]}.{rest}")


_FINDER = _AliasFinder()


def alias_bare_name(name: str) -> ModuleType:
    """Make the bare name ``name`` (``"agents"`` or ``"train"``, the checkout's folder found
    on ``sys.path``) an alias of ``cardenvs.<name>``: ``sys.modules[name]`` becomes that
    module and ``name.X`` resolves to ``cardenvs.<name>.X``.  Called first thing by the
    folder's ``__init__.py`` when it runs under the bare name; returns the real package."""
    real = import_subpackage(name)
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    sys.modules[name] = real
    return real


#: written into a checkout's ``agents/__pycache__`` / ``train/__pycache__`` once its numba cache
#: holds only files compiled under the one import name (``cardenvs.agents.X``)
CACHE_MARK = ".cardenvs-import-names"


def forget_bare_name_caches(folder: Path) -> int:
    """Delete numba cache files that a checkout's release 0.1.0 wrote under the bare name.

    0.1.0 compiled ``agents/`` and ``train/`` under the names ``agents.X`` / ``train.X`` too, and
    numba reads a cache index before it checks it, so such a file makes every later process
    that knows only ``cardenvs.agents.X`` fail (``No module named 'agents'``).  The first import
    of this version deletes the folder's ``__pycache__/*.nbi`` / ``*.nbc`` once (they are
    compiled again) and leaves :data:`CACHE_MARK` there; later imports only see the mark.
    Returns the number of files deleted (0 for a folder that is not writable).
    """
    cache = Path(folder) / "__pycache__"
    if (cache / CACHE_MARK).exists():
        return 0
    gone = 0
    try:
        cache.mkdir(exist_ok=True)
        for path in list(cache.glob("*.nbi")) + list(cache.glob("*.nbc")):
            path.unlink(missing_ok=True)
            gone += 1
        (cache / CACHE_MARK).write_text("numba's cache here holds cardenvs.* module names only\n")
    except OSError:  # a read-only install: nothing of 0.1.0's can be there to delete
        return gone
    return gone
