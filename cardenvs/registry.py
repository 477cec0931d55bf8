"""The registry of games: one metadata record per game, read by every part of the package.

A game is added to cardenvs by writing its rules module (``cardenvs/games/<game>.py``), its
environment page (``cardenvs/<game>_v0.py``: the module docstring, ``class raw_env(CardEnv,
game="<game>")`` with the game's ``_extra_info`` fields, ``env = env_function(raw_env)`` and
``__doc__ = env_doc(__doc__, obs_layout())``, see :mod:`cardenvs.core.aec`) and one
:class:`GameSpec` in :data:`REGISTRY` below.  Everything else finds it here (OpenSpiel's ``GameType`` records play the same part):
:func:`cardenvs.make_game` and ``cardenvs.GAMES``, the PettingZoo and gymnasium registrations
(``cardenvs.GYM_IDS``), the replay files and viewer (pile, roles, extra zones, places), the
slot views' default width (:mod:`cardenvs.multiagent`), the arena's role names, the rules
agent's game part (``agents/rules.py``), the benchmark suite's move generator, the
conformance and documentation tests.

The record holds import paths as strings (``"module:attribute"``), so reading the registry
imports no game: a game's module is imported when it is first used.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    from .core.game import Game

#: how the replay files rank the seats at the end of a deal (:attr:`GameSpec.places`)
PLACES = ("solo", "winner", "last_places", "ranking")


@dataclass(frozen=True)
class GameSpec:
    """What the package needs to know about a game, besides its rules module.

    Attributes:
        name: the registry name (``"wakeng"``); PettingZoo id ``cardenvs/<name>-v0``.
        env_module: the environment page, a module of :mod:`cardenvs` (``"wakeng_v0"``).
        game_class: ``"module:Class"`` of the :class:`cardenvs.core.game.Game` subclass.
        game_args: positional arguments of that class before the options (Dou Dizhu's
            player count).
        n_players: seats.
        gym_id: the gymnasium id of the game's single-agent ``SeatEnv`` view.
        rules_page: the rules page in the repository (``docs/rules/wakeng.md``).
        pile: the replay name of the state's kitty region (``kitty``, ``bottom``, ``unused``).
        roles: ``(solo, others)`` agent roles of a one-against-the-rest game, as the arena
            and the multi-agent views name them; ``None``: every seat plays for himself.
        role_titles: the same roles as the replay viewer shows them (default: ``roles``).
        zones: extra 16-slot card zones a replay records, ``(name, "module:OFFSET")``.
        places: how a replay ranks the seats after a deal (:data:`PLACES`): ``"solo"`` the
            solo seat's side against the rest, ``"winner"`` the seat that went out first and
            then the others, ``"last_places"`` / ``"ranking"`` the game's own method.
        default_slots: default padded width of the legal-id rows of the slot views
            (above the largest legal count a search found).
        rules_part: ``"module:Class"`` of the rules agent's part for the game, the module
            within the agents package ``cardenvs.agents`` (the repository's ``agents/``
            folder), e.g. ``"rules:WakengPart"``.
        move_generator: ``"module:function"`` of the game's standalone move generator
            ``fn(counts, prev, tab, opts, out) -> k`` for the benchmarks (games whose legal
            plays are not the plain :func:`cardenvs.core.kernels.gen_legal` of their table:
            wild jokers, must-beat); ``None``: ``gen_legal``.
        trained_weights: file name, in the agents package's ``weights`` folder, of the
            ``trained`` agent's shipped weights (``None``: ``<name>.npz``); the strongest file
            against ``rules`` that the game ships.
    """

    name: str
    env_module: str
    game_class: str
    n_players: int
    gym_id: str
    rules_page: str
    pile: str = "kitty"
    roles: Optional[tuple[str, str]] = None
    role_titles: Optional[tuple[str, str]] = None
    zones: tuple[tuple[str, str], ...] = ()
    places: str = "solo"
    default_slots: int = 1024
    rules_part: Optional[str] = None
    move_generator: Optional[str] = None
    game_args: tuple = ()
    trained_weights: Optional[str] = None

    def __post_init__(self) -> None:
        if self.places not in PLACES:
            raise ValueError(f"{self.name}: places={self.places!r} is not one of {PLACES}")

    def make(self, **options: Any) -> Game:
        """A new :class:`Game` of this game with ``options`` (use :func:`cardenvs.make_game`
        for the cached one).  An option the game does not have is a ``ValueError`` naming
        the game, its options and the closest name
        (:func:`cardenvs.core.options.check_option_names`); the first game of a process whose
        numba kernels are not cached yet says on stderr that they compile
        (:func:`cardenvs.core.compile_notice.notice_if_cold`)."""
        from .core.compile_notice import notice_if_cold
        from .core.options import check_option_names

        cls = resolve(self.game_class)
        check_option_names(self.name, self.env_module, options, self.option_names(cls))
        notice_if_cold(self.name)
        return cls(*self.game_args, **options)

    def option_names(self, cls: Optional[type] = None) -> tuple[str, ...]:
        """The names of the game's options: its class's ``OPTIONS``, or else the keywords
        its constructor takes after :attr:`game_args`."""
        import inspect

        game_class: Any = resolve(self.game_class) if cls is None else cls
        if isinstance(getattr(game_class, "OPTIONS", None), dict):
            return tuple(game_class.OPTIONS)
        params = list(inspect.signature(game_class.__init__).parameters.values())[1:]
        return tuple(p.name for p in params[len(self.game_args):]
                     if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD))

    @property
    def titles(self) -> Optional[tuple[str, str]]:
        """The roles as the replay viewer shows them: :attr:`role_titles`, or else :attr:`roles`."""
        return self.role_titles or self.roles


def resolve(path: str) -> Any:
    """The object named by ``"module:attribute"``."""
    mod, _, attr = path.partition(":")
    return getattr(importlib.import_module(mod), attr)


#: registry name -> record, in the order games are listed everywhere
REGISTRY: dict[str, GameSpec] = {}


def register(spec: GameSpec) -> GameSpec:
    """Add a game's record (a ``ValueError`` for a name already taken)."""
    if not isinstance(spec, GameSpec):
        raise TypeError(f"register() takes a GameSpec, got {type(spec).__name__}")
    if spec.name in REGISTRY:
        raise ValueError(f"a game named {spec.name!r} is already registered")
    REGISTRY[spec.name] = spec
    return spec


def spec(name: str) -> GameSpec:
    """The record of game ``name`` (a ``ValueError`` naming the known games otherwise)."""
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown game {name!r}; known games: {', '.join(REGISTRY)}") from None


register(GameSpec(
    "doudizhu", "doudizhu_v0", "cardenvs.games.doudizhu:DouDizhu", 3,
    "cardenvs/DouDizhu-Seat-v0", "docs/rules/doudizhu.md", game_args=(3,),
    roles=("landlord", "farmer"), default_slots=1024, rules_part="rules:DouDizhuPart",
    # the network-only agent with context inputs: +1.82 a deal over `rules`, +0.51 over the
    # file of 2026-12-02 without them (which beat the override file doudizhu.npz by +0.64)
    trained_weights="doudizhu_network.npz"))
register(GameSpec(
    "doudizhu4", "doudizhu4_v0", "cardenvs.games.doudizhu:DouDizhu", 4,
    "cardenvs/DouDizhu4-Seat-v0", "docs/rules/doudizhu.md", game_args=(4,),
    roles=("landlord", "farmer"), default_slots=2048, rules_part="rules:DouDizhuPart",
    # the network-only agent with context inputs: +3.09 a deal over `rules`, +0.54 over the
    # override file doudizhu4.npz head to head
    trained_weights="doudizhu4_network.npz"))
register(GameSpec(
    "wakeng", "wakeng_v0", "cardenvs.games.wakeng:Wakeng", 3,
    "cardenvs/Wakeng-Seat-v0", "docs/rules/wakeng.md", roles=("digger", "farmer"),
    zones=(("buried", "cardenvs.games.wakeng:BURIED"),), default_slots=128,
    rules_part="rules:WakengPart",
    # the network-only agent with context inputs for its card plays and burials (76 minutes
    # of train.distill, then 78 of train.finetune on its own score): +11.27 a deal over `rules`
    trained_weights="wakeng_network.npz"))
register(GameSpec(
    "niangniang", "niangniang_v0", "cardenvs.games.niangniang:Niangniang", 4,
    "cardenvs/Niangniang-Seat-v0", "docs/rules/niangniang.md", pile="bottom",
    roles=("niangniang", "catcher"), role_titles=("娘娘", "catcher"), places="last_places",
    default_slots=349, rules_part="rules:NiangniangPart",
    move_generator="cardenvs.games.niangniang:legal_wild_rows",
    # the network-only agent with context inputs (86 minutes of train.distill): +0.18 a deal
    # over `rules`, +0.071 over the override file niangniang.npz head to head
    trained_weights="niangniang_network.npz"))
register(GameSpec(
    "wulong", "wulong_v0", "cardenvs.games.wulong:Wulong", 4,
    "cardenvs/Wulong-Seat-v0", "docs/rules/wulong.md", pile="unused", places="ranking",
    default_slots=2048, rules_part="rules:WulongPart",
    move_generator="cardenvs.games.wulong:gen_rows",
    # the network-only agent with context inputs (85 minutes of train.distill): +0.083 a deal
    # over `rules`, +0.065 over the override file wulong.npz head to head
    trained_weights="wulong_network.npz"))
register(GameSpec(
    "paodekuai", "paodekuai_v0", "cardenvs.games.paodekuai:PaoDeKuai", 3,
    "cardenvs/PaoDeKuai-Seat-v0", "docs/rules/paodekuai.md", pile="unused", places="winner",
    default_slots=1024, rules_part="rules:PaoDeKuaiPart",
    move_generator="cardenvs.games.paodekuai:gen_rows",
    # the network-only agent with context inputs: +3.30 a deal over `rules` (whom an override
    # file only matched), +0.95 over the file of 2026-12-02 without them
    trained_weights="paodekuai_network.npz"))
