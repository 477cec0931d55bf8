"""cardenvs: fast PettingZoo environments for Chinese climbing card games.

Games (``cardenvs.GAMES``) are PettingZoo AEC environments over a numba bitmask engine::

    from cardenvs import doudizhu_v0
    env = doudizhu_v0.env()

Importing ``cardenvs`` registers every game with PettingZoo's registry, so
``pettingzoo.make("aec", "cardenvs/doudizhu-v0")`` works too.  ``cardenvs.legal_moves`` is
the rules query API for people and tests; ``cardenvs.infostate`` tells what a seat knows and
``cardenvs.determinize`` samples a full state consistent with it (for search).
"""

from __future__ import annotations

from .api import GAMES, game_info, legal_moves, make_game
from .core.infostate import (
    Constraint, Determinizer, InfoState, determinize, determinize_batch, infostate,
)
from . import doudizhu_v0
from . import wakeng_v0
from . import doudizhu4_v0
from . import niangniang_v0
from . import wulong_v0

__version__ = "0.1.0"

__all__ = ["GAMES", "doudizhu_v0", "doudizhu4_v0", "wakeng_v0", "niangniang_v0", "wulong_v0", "game_info", "legal_moves", "make_game", "infostate", "determinize", "determinize_batch",
           "InfoState", "Determinizer", "Constraint", "__version__"]


def _register() -> None:
    try:
        from pettingzoo import register
    except ImportError:  # pragma: no cover - older PettingZoo without a registry
        return
    import warnings

    for name, module in GAMES.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            register("aec", f"cardenvs/{name}-v0", entry_point=f"cardenvs.{module}:env")


_register()
