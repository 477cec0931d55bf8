"""cardenvs: fast PettingZoo environments for Chinese climbing card games.

Games (``cardenvs.GAMES``) are PettingZoo AEC environments over a numba bitmask engine::

    from cardenvs import doudizhu_v0
    env = doudizhu_v0.env()

Importing ``cardenvs`` registers every game with PettingZoo's registry (PettingZoo >= 1.27),
so ``pettingzoo.make("aec", "cardenvs/doudizhu-v0")`` works too, and the single-agent
:class:`cardenvs.wrappers.SeatEnv` view of every game with gymnasium's
(``cardenvs.GYM_IDS``)::

    env = gymnasium.make("cardenvs/Wakeng-Seat-v0", seats=1, opponents="random")

``cardenvs.legal_moves`` is the rules query API for people and tests; ``cardenvs.infostate``
tells what a seat knows and ``cardenvs.determinize`` samples a full state consistent with it
(for search).
"""

from .api import GAMES, game_info, legal_moves, make_game
from .core.infostate import (
    Constraint, Determinizer, InfoState, determinize, determinize_batch, infostate,
)
from .registry import REGISTRY

__version__ = "0.2.0"

#: registry name -> gymnasium id of its SeatEnv view (kwargs of ``gymnasium.make`` go to SeatEnv)
GYM_IDS = {name: s.gym_id for name, s in REGISTRY.items()}

__all__ = ["GAMES", "GYM_IDS", "REGISTRY", *GAMES.values(), "game_info", "legal_moves",
           "make_game", "infostate", "determinize",
           "determinize_batch", "InfoState", "Determinizer", "Constraint", "__version__"]


def _import_envs() -> None:
    """Import every registered game's environment page as ``cardenvs.<module>``."""
    import importlib

    for module in GAMES.values():
        globals()[module] = importlib.import_module(f".{module}", __name__)


def _register() -> None:
    import warnings

    import gymnasium

    for name, gym_id in GYM_IDS.items():
        if gym_id not in gymnasium.registry:
            gymnasium.register(gym_id, entry_point="cardenvs.wrappers:SeatEnv",
                               kwargs={"game": name})
    try:
        from pettingzoo import register
    except ImportError:  # PettingZoo < 1.27 has no registry
        import pettingzoo

        warnings.warn(f"cardenvs: PettingZoo {getattr(pettingzoo, '__version__', '?')} has no "
                      f"registry (it came in 1.27), so pettingzoo.make('aec', "
                      f"'cardenvs/<game>-v0') is not available; the envs themselves work "
                      f"(cardenvs.wakeng_v0.env()).  pip install 'pettingzoo>=1.27'",
                      UserWarning, stacklevel=2)
        return
    for name, module in GAMES.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # re-registration after a module reload
            register("aec", f"cardenvs/{name}-v0", entry_point=f"cardenvs.{module}:env")


_import_envs()
_register()
