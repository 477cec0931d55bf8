"""Replays: one versioned JSON format for every game, written by ``env.unwrapped.replay()``.

A replay holds what is needed to play the game again exactly (the game, its options, the
seed, every action id) and what a person or a viewer wants to see without running the engine
(every deal, every action's string and the cards it moved, the public state after it, the
scores).  The format is documented in ``docs/replay.md``; in short::

    {"format": "cardenvs-replay", "version": 1, "game": "doudizhu", "options": {...},
     "seed": 7, "rng_state": null, "deal_seed": 123..., "reset_options": null,
     "deals":   [{"start": 0, "hands": [...], "piles": {"kitty": "..."}, "state": {...},
                  "result": {...}}, ...],
     "actions": [{"seat": 1, "id": 28238, "action": "bid 1", "state": {...}}, ...],
     "result":  {"done": true, "rewards": [...], "places": [...], ...}}

:func:`replay_of` builds a replay from an env; :func:`save` writes one atomically with one
deal or action per line; :func:`load` reads and *verifies* one: it replays the actions from the
seed and compares every entry with what the game gives, so an edited, truncated or foreign
file is a ``ValueError`` naming the line and the entry.  :func:`make_env` /
:func:`reproduce` rebuild the environment of a replay.  The game's side (its public state, card
zones and the simulation that plays the entries) is :mod:`cardenvs.replay_sim`.
"""

from __future__ import annotations

import heapq
import importlib
import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Optional, Sequence, Union

import numpy as np
from numpy.typing import ArrayLike

from .replay_sim import (  # noqa: F401  (PILE_NAMES, ROLE_NAMES, play_cards: public here too)
    PILE_NAMES, ROLE_NAMES, _deal_state, _num, _simulate, play_cards,
)

if TYPE_CHECKING:
    from pettingzoo import AECEnv

FORMAT = "cardenvs-replay"
VERSION = 1
#: the top-level keys of a version-1 replay, in the order :func:`replay_of` writes them
KEYS = ("format", "version", "game", "env", "title", "cardenvs", "options", "seed",
        "rng_state", "deal_seed", "reset_options", "n_players", "roles", "pile", "ranks",
        "players", "meta", "deals", "actions", "result")
#: the keys a replay may leave out
OPTIONAL_KEYS = ("players", "meta")
#: the deepest nesting of the free ``meta`` object
MAX_META_DEPTH = 32
_MAX_SEED = 2**63 - 1  # the range reset() draws a deal seed from (cardenvs.core.aec)


# -- recording ------------------------------------------------------------------------------------


def _env_options(env) -> dict:
    kw = dict(getattr(env, "_ezpickle_kwargs", {}))
    kw.pop("render_mode", None)
    return kw


def _jsonable(x):
    """Options as JSON values (numpy scalars and arrays, tuples become plain values/lists)."""
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    if x is None or isinstance(x, (str, int, float, bool)):
        return x
    raise TypeError(f"a replay holds JSON values only; cannot store {type(x).__name__} {x!r}")


def _header(game, options: dict, seed, rng_state, deal_seed: int, reset_options) -> dict:
    import cardenvs

    return {
        "format": FORMAT, "version": VERSION, "game": game.info.name,
        "env": f"{cardenvs.GAMES[game.info.name]}", "title": game.info.title,
        "cardenvs": cardenvs.__version__, "options": _jsonable(options),
        "seed": seed, "rng_state": _jsonable(rng_state), "deal_seed": int(deal_seed),
        "reset_options": None if reset_options is None else _jsonable(reset_options),
        "n_players": game.n_players, "roles": list(ROLE_NAMES.get(game.info.name) or ()) or None,
        "pile": PILE_NAMES[game.info.name], "ranks": game.deck.order,
    }


def replay_of(env: AECEnv, players: Optional[Sequence[str]] = None, meta: Optional[dict] = None
              ) -> dict:
    """The replay of ``env``'s current game (what ``env.unwrapped.replay()`` returns).

    The deal is rebuilt from the seed the env recorded at ``reset`` and the actions of
    ``env.unwrapped.history`` are played on it; the result must be the env's own state, else
    ``ValueError`` (a state set from another game with ``set_state``).
    """
    u = env.unwrapped
    start = getattr(u, "_replay_start", None)
    if start is None:
        raise ValueError("no game to replay: call reset() first")
    seed, rng_state, deal_seed, reset_options = start
    game = u.game
    n = game.n_players
    if players is not None:
        if isinstance(players, str) or len(players) != n:
            raise ValueError(f"players must name the {n} seats, got {players!r}")
        players = [str(p) for p in players]
    illegal = None
    for i, a in enumerate(u.possible_agents):
        if u.infos.get(a, {}).get("illegal_move"):
            illegal = i
    deals, actions, result, s = _simulate(game, deal_seed, reset_options, list(u.history),
                                          lambda i: f"history[{i}]", illegal)
    if not np.array_equal(s, u.state_vec):
        raise ValueError("the env's state does not follow from its recorded deal and history "
                         "(was it set from another game with set_state?)")
    if illegal is not None:
        result["rewards"][illegal] = _num(result["rewards"][illegal] + u.illegal_reward)
    rep = _header(game, _env_options(u), seed, rng_state, deal_seed, reset_options)
    rep["players"] = players
    if meta is not None:
        rep["meta"] = _jsonable(meta)
    rep["deals"] = deals
    rep["actions"] = actions
    rep["result"] = result
    return rep


# -- writing ----------------------------------------------------------------------------------------


def dumps(rep: dict) -> str:
    """The replay as JSON text: one top-level key, deal or action per line."""
    def one(v) -> str:
        return json.dumps(v, ensure_ascii=False, allow_nan=False)

    lines = ["{"]
    keys = list(rep)
    for k, key in enumerate(keys):
        comma = "," if k < len(keys) - 1 else ""
        v = rep[key]
        if key in ("deals", "actions") and isinstance(v, list) and v:
            lines.append(f" {one(key)}: [")
            lines += [f"  {one(x)}{',' if j < len(v) - 1 else ''}" for j, x in enumerate(v)]
            lines.append(f" ]{comma}")
        else:
            lines.append(f" {one(key)}: {one(v)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_atomic(path: Union[str, Path], text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file in the same folder and
    ``os.replace``: a reader never sees a half-written file, and a failure leaves none."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)  # as open() would make it, not mkstemp's 0600
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


def save(rep: dict, path: Union[str, Path]) -> Path:
    """Write a replay (from :func:`replay_of`) as JSON, atomically."""
    return write_atomic(path, dumps(rep))


# -- reading and verifying --------------------------------------------------------------------------


def _lines_of(text: str) -> dict:
    """Line numbers of the top-level keys and of each element of ``deals`` / ``actions``
    (the text is valid JSON whose top level is an object)."""
    dec = json.JSONDecoder()
    ws = " \t\r\n"
    pos: dict = {}

    def skip(i: int) -> int:
        while i < len(text) and text[i] in ws:
            i += 1
        return i

    i = skip(0) + 1
    while True:
        i = skip(i)
        if text[i] == "}":
            break
        key, i = dec.raw_decode(text, i)
        i = skip(skip(i) + 1)  # past ':'
        pos[(key,)] = i
        if text[i] == "[" and key in ("deals", "actions"):
            i, k = i + 1, 0
            while True:
                i = skip(i)
                if text[i] == "]":
                    i += 1
                    break
                pos[(key, k)] = i
                _, i = dec.raw_decode(text, i)
                k += 1
                i = skip(i)
                if text[i] == ",":
                    i += 1
        else:
            _, i = dec.raw_decode(text, i)
        i = skip(i)
        if i < len(text) and text[i] == ",":
            i += 1
    return {k: text.count("\n", 0, v) + 1 for k, v in pos.items()}


class _Where:
    """Names a place in a replay file: ``name line N (actions[12])``."""

    def __init__(self, name: str, text: Optional[str]):
        self.name = name
        self.text = text
        self._lines: Optional[dict] = None

    def __call__(self, *path) -> str:
        label = path[0] if len(path) == 1 else f"{path[0]}[{path[1]}]"
        line = None
        if self.text is not None:
            if self._lines is None:
                try:
                    self._lines = _lines_of(self.text)
                except (ValueError, IndexError, RecursionError):
                    self._lines = {}
            line = self._lines.get(tuple(path)) or self._lines.get(tuple(path[:1]))
        return f"{self.name} line {line} ({label})" if line else f"{self.name} ({label})"


def _game_of(rep: dict, where: _Where):
    import cardenvs

    game = rep.get("game")
    if not isinstance(game, str) or game not in cardenvs.GAMES:
        raise ValueError(f"{where('game')}: unknown game {game!r}; choose from "
                         f"{', '.join(cardenvs.GAMES)}")
    options = rep.get("options")
    if not isinstance(options, dict):
        raise ValueError(f"{where('options')}: 'options' must be an object of env() keywords")
    mod = importlib.import_module(f"cardenvs.{cardenvs.GAMES[game]}")
    try:
        env = mod.env(**options)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{where('options')}: {e}") from None
    return env


def _deal_seed_of(rep: dict, where: _Where) -> int:
    seed, state, ds = rep.get("seed"), rep.get("rng_state"), rep.get("deal_seed")
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"{where('seed')}: 'seed' must be an integer >= 0 or null, got "
                             f"{_short(seed)}")
        if state is not None:
            raise ValueError(f"{where('rng_state')}: 'rng_state' must be null beside a seed "
                             f"(the seed alone deals the game)")
        rng = np.random.default_rng(seed)
    else:
        if not isinstance(state, dict) or state.get("bit_generator") != "PCG64":
            raise ValueError(f"{where('rng_state')}: without a seed the replay needs the "
                             f"generator state 'rng_state' (numpy PCG64)")
        rng = np.random.Generator(np.random.PCG64())
        try:
            rng.bit_generator.state = state
        except (TypeError, ValueError, KeyError, OverflowError) as e:
            raise ValueError(f"{where('rng_state')}: not a PCG64 state ({e})") from None
    drawn = int(rng.integers(0, _MAX_SEED))
    if isinstance(ds, bool) or ds != drawn:
        raise ValueError(f"{where('deal_seed')}: deal_seed {ds!r} is not the one the seed "
                         f"gives ({drawn}): the seed or the deal seed was edited")
    return drawn


def verify(rep: dict, name: str = "replay", text: Optional[str] = None) -> dict:
    """Check a replay dict against the game: replay its action ids from the seed and compare
    every deal, action and the result with what the game gives.  Returns ``rep``.

    Every top-level field is checked: the keys are :data:`KEYS` (``players`` and ``meta`` may
    be left out), the game's own fields (``game``, ``env``, ``title``, ``n_players``,
    ``roles``, ``pile``, ``ranks``) equal what the game gives, ``players`` is ``null`` or one
    name per seat, ``meta`` an object at most :data:`MAX_META_DEPTH` levels deep, and values
    compare with their JSON types (``true`` is not ``1``).

    Raises ``ValueError`` naming the line (when ``text``, the file's JSON, is given), the entry
    and what differs.
    """
    where = _Where(name, text)
    if not isinstance(rep, dict) or rep.get("format") != FORMAT:
        got = rep.get("format") if isinstance(rep, dict) else type(rep).__name__
        raise ValueError(f"{where('format')}: not a cardenvs replay (format {got!r}, expected "
                         f"{FORMAT!r})")
    if rep.get("version") != VERSION:
        raise ValueError(f"{where('version')}: replay format version {rep.get('version')!r}; "
                         f"this cardenvs reads version {VERSION} only")
    unknown = [k for k in rep if k not in KEYS]
    if unknown:
        raise ValueError(f"{where(unknown[0])}: unknown key {_short(unknown[0])}; a version "
                         f"{VERSION} replay has {', '.join(KEYS)}")
    missing = [k for k in KEYS if k not in rep and k not in OPTIONAL_KEYS]
    if missing:
        raise ValueError(f"{where(missing[0])}: {missing[0]!r} is missing (truncated or edited "
                         f"file?)")
    for key, typ in (("deals", list), ("actions", list), ("result", dict)):
        if not isinstance(rep.get(key), typ):
            raise ValueError(f"{where(key)}: {key!r} is missing or not a{'n' * (typ is list)} "
                             f"{'array' if typ is list else 'object'} (truncated or edited file?)")
    if not isinstance(rep["cardenvs"], str):
        raise ValueError(f"{where('cardenvs')}: 'cardenvs' (the version that wrote the file) "
                         f"must be a string, got {_short(rep['cardenvs'])}")
    if "meta" in rep and not isinstance(rep["meta"], dict):
        raise ValueError(f"{where('meta')}: 'meta' must be an object, got "
                         f"{_short(rep['meta'])}")
    if _depth(rep.get("meta")) > MAX_META_DEPTH:
        raise ValueError(f"{where('meta')}: 'meta' is nested deeper than {MAX_META_DEPTH} "
                         f"levels")
    env = _game_of(rep, where)
    game = env.unwrapped.game
    deal_seed = _deal_seed_of(rep, where)
    ro = rep.get("reset_options")
    if ro is not None and not isinstance(ro, dict):
        raise ValueError(f"{where('reset_options')}: 'reset_options' must be an object or null")
    try:
        _deal_state(game, deal_seed, ro)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{where('reset_options')}: the custom deal is rejected: {e}") from None
    entries = rep["actions"]
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise ValueError(f"{where('actions', i)}: an action must be an object with 'seat', "
                             f"'id' and 'action'")
    players = rep.get("players")
    if players is not None and (not isinstance(players, list) or len(players) != game.n_players
                                or not all(isinstance(p, str) for p in players)):
        raise ValueError(f"{where('players')}: 'players' must be null or {game.n_players} "
                         f"names (strings), one per seat; got {_short(players)}")
    illegal = rep["result"].get("illegal_move")
    if illegal is not None and (isinstance(illegal, bool) or not isinstance(illegal, int)
                                or not 0 <= illegal < game.n_players):
        raise ValueError(f"{where('result')}: 'illegal_move' must be a seat in "
                         f"0..{game.n_players - 1}, got {_short(illegal)}")
    deals, actions, result, _ = _simulate(
        game, deal_seed, ro, entries,
        lambda i: where("actions", i) if i < len(entries) else where("result"), illegal)
    if illegal is not None:
        result["rewards"][illegal] = _num(result["rewards"][illegal] + env.unwrapped.illegal_reward)
    head = _header(game, rep["options"], rep.get("seed"), rep.get("rng_state"), deal_seed, ro)
    for key in ("game", "env", "title", "n_players", "roles", "pile", "ranks"):
        if not _equal(rep.get(key), head[key]):
            raise ValueError(f"{where(key)}: {key!r} is {rep.get(key)!r}, the game gives "
                             f"{head[key]!r}")
    for i, (got, want) in enumerate(zip(entries, actions)):
        _same(got, want, where("actions", i))
    if len(rep["deals"]) != len(deals):
        raise ValueError(f"{where('deals')}: the file lists {len(rep['deals'])} deals, the "
                         f"actions make {len(deals)} (truncated or edited file?)")
    for k, (got, want) in enumerate(zip(rep["deals"], deals)):
        _same(got, want, where("deals", k))
    _same(rep["result"], result, where("result"))
    return rep


def _depth(x) -> int:
    """How deeply arrays and objects nest in a JSON value (0 for a scalar), without recursion."""
    deepest, todo = 0, [(x, 0)]
    while todo:
        v, d = todo.pop()
        if isinstance(v, (list, dict)):
            deepest = max(deepest, d + 1)
            todo += [(w, d + 1) for w in (v.values() if isinstance(v, dict) else v)]
    return deepest


def _equal(a, b) -> bool:
    """JSON values equal and of the same types throughout (``true`` is not ``1``)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return a == b


def _short(x, limit: int = 80) -> str:
    """``repr(x)`` cut to ``limit`` characters (a message quotes a file's value)."""
    r = repr(x)
    return r if len(r) <= limit else r[:limit - 3] + "..."


def _same(got, want: dict, at: str) -> None:
    if not isinstance(got, dict):
        raise ValueError(f"{at}: expected an object, got {got!r}")
    for key in sorted(set(got) | set(want)):
        if not _equal(got.get(key), want.get(key)):
            if key not in got:
                raise ValueError(f"{at}: {key!r} is missing; the game gives {want[key]!r}")
            if key not in want:
                raise ValueError(f"{at}: unexpected {key!r} ({got[key]!r}); the game gives none")
            raise ValueError(f"{at}: {key!r} is {got[key]!r} in the file, but the game gives "
                             f"{want[key]!r}")


def loads(text: str, name: str = "replay") -> dict:
    """Parse and :func:`verify` replay JSON text; ``ValueError`` names the line and why."""
    try:
        rep = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{name} line {e.lineno} column {e.colno}: not valid JSON ({e.msg}); "
                         f"is the file truncated or edited?") from None
    except RecursionError:
        raise ValueError(f"{name}: the JSON is nested too deeply to be a replay") from None
    if not isinstance(rep, dict):
        raise ValueError(f"{name} line 1: a replay is a JSON object, got {type(rep).__name__}")
    return verify(rep, name, text)


def load(path: Union[str, Path]) -> dict:
    """Read and verify a replay file (see :func:`verify`)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{p}: not a UTF-8 text file ({e.reason})") from None
    except OSError as e:
        raise ValueError(f"{p}: cannot read the replay ({e.strerror or e})") from None
    return loads(text, str(p))


def make_env(rep: dict, **overrides: Any) -> AECEnv:
    """A fresh env of the replay's game and options, reset to its first deal (the actions are
    not played; step ``[a["id"] for a in rep["actions"]]`` to reproduce the game).

    ``overrides`` replace env keywords (e.g. ``render_mode="ansi"``).
    """
    import cardenvs

    mod = importlib.import_module(f"cardenvs.{cardenvs.GAMES[rep['game']]}")
    env = mod.env(**{**rep["options"], **overrides})
    if rep.get("seed") is not None:
        env.reset(seed=rep["seed"], options=rep.get("reset_options"))
    else:
        env.unwrapped.np_random = np.random.Generator(np.random.PCG64())
        env.unwrapped.np_random.bit_generator.state = rep["rng_state"]
        env.reset(options=rep.get("reset_options"))
    return env


def reproduce(rep: dict, **overrides: Any) -> AECEnv:
    """:func:`make_env` with every action of the replay played: the game as it was."""
    env = make_env(rep, **overrides)
    for a in rep["actions"]:
        env.step(int(a["id"]))
    seat = rep["result"].get("illegal_move")
    if seat is not None:  # the game ended by an illegal move: any illegal id ends it alike
        legal = set(env.unwrapped.legal_actions().tolist())
        env.step(next(x for x in range(env.unwrapped.game.n_actions) if x not in legal))
    return env


# -- the arena's hook -------------------------------------------------------------------------------


class ArenaReplays:
    """Saves the arena's games as replays: every game (``top=None``) or the games of the
    ``top`` most lopsided deals (the largest spread of the agents' scores in that deal).

    The arena calls :meth:`game` after each game, :meth:`deal` after each deal and
    :meth:`close` at the end.  Files: ``DIR/deal00012_lineup3.json``.
    """

    def __init__(self, out_dir: Union[str, os.PathLike], top: Optional[int] = None):
        if top is not None and (isinstance(top, bool) or not isinstance(top, int) or top < 1):
            raise ValueError(f"save_replays_top must be a positive integer, got {top!r}")
        self.dir = Path(out_dir)
        self.top = top
        self._games: list[tuple[str, dict]] = []
        self._heap: list = []
        self.written: list[Path] = []
        self._lineup = 0

    def game(self, env: AECEnv, deal: int, players: Sequence[str], rewards: Iterable[float]
             ) -> None:
        """Record the game ``env`` just played (lineups are numbered in call order)."""
        lineup = self._lineup
        self._lineup += 1
        rep = env.unwrapped.replay(players=list(players),
                                   meta={"arena_deal": deal, "lineup": lineup,
                                         "rewards": [_num(x) for x in rewards]})
        name = f"deal{deal:05d}_lineup{lineup}.json"
        if self.top is None:
            self.written.append(save(rep, self.dir / name))
        else:
            self._games.append((name, rep))

    def deal(self, deal: int, scores: ArrayLike) -> None:
        """End of deal ``deal`` with the agents' ``scores`` per deal."""
        self._lineup = 0
        if self.top is None:
            return
        spread = float(np.ptp(np.asarray(scores, np.float64)))
        item = (spread, -deal, self._games)
        self._games = []
        if len(self._heap) < self.top:
            heapq.heappush(self._heap, item)
        elif item[:2] > self._heap[0][:2]:
            heapq.heapreplace(self._heap, item)

    def close(self) -> list[str]:
        """Write what is kept (the top deals, most lopsided first); the paths written."""
        for _, _, games in sorted(self._heap, key=lambda t: (-t[0], -t[1])):
            for name, rep in games:
                self.written.append(save(rep, self.dir / name))
        self._heap = []
        return [str(p) for p in self.written]
