"""The one-line stderr notice that the numba kernels of a game are about to compile.

The first use of a game on a machine compiles its kernels (tens of seconds to minutes; cached
in ``__pycache__`` beside the sources afterwards, or in ``NUMBA_CACHE_DIR``).  Every place that
builds a game (:meth:`cardenvs.registry.GameSpec.make`: the AEC environments, ``SeatEnv``,
``VectorGame``, :func:`cardenvs.make_game`) and the arena say so, once per process and game,
when numba's cache holds no kernels for it (:func:`kernels_cached`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Sequence

#: games this process has announced (printed the notice for)
_announced: set = set()
#: games whose kernels this process found cached
_warm: set = set()


def kernels_cached(game: str, agent_names: Sequence[str] = ()) -> bool:
    """Whether numba's cache holds compiled kernels for ``game`` (the shared core, its game
    module and, for the ``rules`` / ``trained`` agents among ``agent_names``, their
    planner): ``False`` means the first use compiles them (minutes, once per machine;
    cached in ``__pycache__`` beside the sources, or in ``NUMBA_CACHE_DIR``)."""
    pkg = Path(__file__).resolve().parent.parent
    family = {"doudizhu4": "doudizhu"}.get(game, game)
    wanted = [(pkg / "core", "encode"), (pkg / "games", family)]
    if any(str(nm).partition(":")[0] in ("rules", "trained") for nm in agent_names):
        wanted.append((pkg.parent / "agents" if (pkg.parent / "agents").is_dir()
                       else pkg / "agents", "planner"))
    user_dir = os.environ.get("NUMBA_CACHE_DIR")
    for folder, module in wanted:
        # a module's kernels, or those of the modules it is split into (games/wulong.py's
        # are in wulong_play.py, wulong_moves.py ...)
        patterns = (f"{module}.*.nbi", f"{module}_*.*.nbi")
        if user_dir:  # numba then caches there only
            if not any(any(Path(user_dir).rglob(p)) for p in patterns):
                return False
            continue
        if any(any((folder / "__pycache__").glob(p)) for p in patterns):
            continue
        # a read-only source folder: numba's user-wide cache
        wide = Path(os.path.expanduser("~")) / ".cache" / "numba"
        if not (wide.is_dir() and any(any(wide.rglob(p)) for p in patterns)):
            return False
    return True


def compile_message(game: str) -> str:
    """The notice's text for ``game``."""
    return (f"cardenvs: compiling the numba kernels for {game} (first run on this machine: "
            f"a few minutes; cached afterwards) ...")


def announce(game: str, again: bool = False) -> bool:
    """Print :func:`compile_message` on stderr unless this process has announced ``game``
    already (``again=True``: print anyway, the arena's notice before its warm-up deal);
    ``True`` when it printed."""
    if game in _announced and not again:
        return False
    _announced.add(game)
    print(compile_message(game), file=sys.stderr, flush=True)
    return True


def notice_if_cold(game: str) -> bool:
    """Announce ``game``'s compilation (:func:`announce`) if its kernels are not cached, the
    first time this process asks; later calls return ``False`` at once.  ``True`` when it
    printed."""
    if game in _announced or game in _warm:
        return False
    if kernels_cached(game):
        _warm.add(game)
        return False
    return announce(game)
