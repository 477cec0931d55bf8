"""The arena: duplicate-deal matches between baseline agents, with confidence intervals.

``cardenvs arena GAME --agents rules,random --deals N [--seed S] [--out DIR]`` (or
:func:`run_arena`) plays every deal several times with the agents in different seats (a
*lineup* gives each seat an agent), so every agent plays every hand:

* ``lineups="rotate"`` (the default when roles are decided in play, e.g. by an auction):
  the agent list is laid around the table and rotated through all seats, once from each
  agent; with 2 agents at 3 seats that is the 6 lineups ``ABA BAA AAB BAB ABB BBA``, and each
  seat holds each agent equally often;
* ``lineups="solo"`` (the default for a one-against-the-rest game whose solo seat is fixed
  before the play, e.g. Dou Dizhu with ``auction="fixed"``): for every ordered pair of
  agents (X, Y) one lineup with X in the solo seat and Y in all the others, so each agent
  plays each hand as landlord and as farmers against each other agent.

Statistics (all from the rewards the environment pays):

* an agent's *score per deal* is the mean reward of the seats it held in that deal, over all
  its lineups; its average and the 95% interval are over deals (mean +- 1.96 s / sqrt(n), s the
  sample standard deviation): the deals are the independent units, and the duplicate replays
  cancel the luck of the cards;
* *pairwise*: per deal the difference of two agents' scores (duplicate-paired), averaged with
  the same interval;
* *win rate*: per deal the share of the agent's seats whose side won (reward > 0), averaged
  over deals with the same interval (clipped to [0, 1]);
* *by role* (one-against-the-rest games): games, win rate with a Wilson 95% interval (over
  games) and mean score of each agent in each role.

*Comparing two results* (:func:`compare_results`, ``cardenvs compare A B``): two arenas of
the same deals (game, options, seed), each an agent against one opponent, paired deal by
deal: the difference of the two agents' paired differences, with its interval, which the
luck of the deals does not widen.

Agents come from the registry in ``agents`` (``random``, ``rules``, ``rlcard``, ``trained``...),
imported only when the arena runs.  Results print as a table and are written as JSON and a
PNG chart (matplotlib) to ``out``.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import importlib.util
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple, Optional, Sequence

import numpy as np

from .registry import REGISTRY
from .wrappers import policy_info

Z95 = 1.959963984540054

#: role names of the one-against-the-rest games: (solo, others), from the registry
ROLE_NAMES = {name: s.roles for name, s in REGISTRY.items() if s.roles}


# -- statistics ---------------------------------------------------------------------------------------


def mean_ci(x: Sequence[float], z: float = Z95) -> tuple[float, float, float]:
    """``(mean, low, high)``: the mean and its normal-approximation interval
    ``mean +- z * s / sqrt(n)`` with ``s`` the sample standard deviation (``ddof=1``).

    With fewer than two values the interval is ``(nan, nan)``.
    """
    a = np.asarray(x, np.float64)
    if a.ndim != 1 or a.size == 0:
        raise ValueError("mean_ci needs a non-empty 1-D sequence of numbers")
    m = float(a.mean())
    if a.size < 2:
        return m, math.nan, math.nan
    h = z * float(a.std(ddof=1)) / math.sqrt(a.size)
    return m, m - h, m + h


def wilson_ci(wins: int, n: int, z: float = Z95) -> tuple[float, float, float]:
    """``(rate, low, high)``: a win rate and its Wilson score interval (``nan`` when n = 0)."""
    if n <= 0:
        return math.nan, math.nan, math.nan
    p = wins / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return p, c - h, c + h


# -- lineups ------------------------------------------------------------------------------------------


def rotate_lineups(k: int, n: int) -> list[tuple[int, ...]]:
    """Lineups of ``k`` agents at ``n`` seats: ``lineup[seat] = ((seat + r) % n + s) % k`` for
    every rotation ``r`` and starting agent ``s``; duplicates are dropped when that keeps every
    seat holding every agent equally often."""
    if k < 1 or n < 1:
        raise ValueError("need at least one agent and one seat")
    full = [tuple(((i + r) % n + s) % k for i in range(n)) for s in range(k) for r in range(n)]
    unique = list(dict.fromkeys(full))
    counts = np.zeros((n, k), np.int64)
    for lu in unique:
        for seat, a in enumerate(lu):
            counts[seat, a] += 1
    return unique if (counts == counts[0, 0]).all() else full


def solo_lineups(k: int, n: int, solo: int) -> list[tuple[int, ...]]:
    """For every ordered pair of agents (x, y), x in seat ``solo`` and y in every other seat."""
    if k < 2:
        raise ValueError("solo lineups need at least two agents")
    return [tuple(x if seat == solo else y for seat in range(n))
            for x in range(k) for y in range(k) if x != y]


# -- agents -------------------------------------------------------------------------------------------


def import_agents():
    """The baseline agents package that belongs to this ``cardenvs``.

    Installed (``pip install .``) it is ``cardenvs.agents``; in a source checkout (an editable
    install, or none) it is the checkout's top-level ``agents/`` folder, imported as ``agents``
    (the name the tests and ``python -m train...`` use), so one copy of the agents is loaded.
    """
    here = Path(__file__).resolve().parent
    loaded = sys.modules.get("cardenvs.agents")
    if loaded is not None:
        return loaded
    if (here / "agents" / "__init__.py").is_file():  # installed inside the package
        return importlib.import_module("cardenvs.agents")
    root = here.parent
    if not (root / "agents" / "__init__.py").is_file():
        raise ValueError("the baseline agents are not installed (no cardenvs.agents and no "
                         "agents/ folder beside the cardenvs package)")
    loaded = sys.modules.get("agents")
    if loaded is None:
        spec = importlib.util.find_spec("agents")
        if spec is None or Path(spec.origin or "").resolve() != root / "agents" / "__init__.py":
            # not on sys.path (cardenvs imported from elsewhere than the checkout's root)
            spec = importlib.util.spec_from_file_location(
                "agents", root / "agents" / "__init__.py",
                submodule_search_locations=[str(root / "agents")])
        loaded = importlib.util.module_from_spec(spec)
        sys.modules["agents"] = loaded
        try:
            spec.loader.exec_module(loaded)
        except BaseException:
            del sys.modules["agents"]
            raise
    where = Path(getattr(loaded, "__file__", "") or "").resolve().parent
    if where != root / "agents":
        raise ValueError(f"the package 'agents' imported from {where} is not cardenvs's "
                         f"({root / 'agents'}); another project's 'agents' shadows it")
    return loaded


def agents_module(name: str):
    """A module of the baseline agents package (``"trained"`` -> ``agents.trained`` or
    ``cardenvs.agents.trained``, see :func:`import_agents`)."""
    return importlib.import_module(f"{import_agents().__name__}.{name}")


def parse_agents(spec) -> list[str]:
    """``"rules,random"`` or a list -> agent names (at least two); a spec's keywords stay
    with it (``"search:rollouts=1200,epsilon=0.1,rules"``: two agents, ``split_agents``)."""
    if isinstance(spec, str):
        names = import_agents().split_agents(spec)
    elif isinstance(spec, (list, tuple)) and all(isinstance(s, str) for s in spec):
        names = list(spec)
    else:
        raise TypeError("agents must be a comma-separated string or a list of names")
    if len(names) < 2:
        raise ValueError(f"the arena needs at least two agents, got {names}")
    return names


def labels_of(names: Sequence[str]) -> list[str]:
    """Unique labels: a repeated name gets ``_2``, ``_3`` ...; a weight file given as
    ``trained:path/to/NAME.npz`` is labelled ``trained:NAME`` (a spec with keywords,
    ``search:rollouts=1200``, is its own label)."""
    seen: dict[str, int] = {}
    out = []
    for nm in names:
        base, sep, arg = nm.partition(":")
        if sep and "=" not in arg:  # trained:runs/x/wakeng.npz -> trained:wakeng
            nm = f"{base}:{Path(arg).stem}"
        seen[nm] = seen.get(nm, 0) + 1
        out.append(nm if seen[nm] == 1 else f"{nm}_{seen[nm]}")
    return out


def merge_options(game: str, names: Sequence[str], options: Optional[dict]) -> dict:
    """The game options: the user's, plus what the agents require or prefer."""
    agents = import_agents()
    opts = dict(options or {})
    given = set(opts)
    for nm in names:
        cls = agents.agent_class(nm)
        for key, value in getattr(cls, "required_options", {}).items():
            if key in given and opts[key] != value:
                raise ValueError(f"agent {nm!r} needs {key}={value!r}, but {key}={opts[key]!r} "
                                 f"was given")
            opts[key] = value
        for key, value in getattr(cls, "default_options", {}).items():
            if key not in given:
                opts.setdefault(key, value)
    return opts


def env_for_agents(game: str, names: Sequence[str], options: Optional[dict]):
    """``(env, options)``: the AEC env (``illegal="raise"``) with the options the agents need;
    ``ValueError`` naming the agent when one cannot play the game."""
    mod = import_agents()
    opts = merge_options(game, names, options)
    try:
        env = _env(game, opts)
    except (TypeError, ValueError):
        # an option an agent asked for may not exist in this game: say which agent cannot play
        base = _env(game, dict(options or {})).unwrapped.game
        for nm in names:
            reason = mod.unsupported(nm, base)
            if reason is not None:
                raise ValueError(f"agent {nm!r} cannot play {game}: {reason}") from None
        raise
    return env, opts


# -- playing ------------------------------------------------------------------------------------------


def _env(game: str, options: dict):
    import cardenvs

    if game not in cardenvs.GAMES:
        raise ValueError(f"unknown game {game!r}; choose from: {', '.join(cardenvs.GAMES)}")
    mod = importlib.import_module(f"cardenvs.{cardenvs.GAMES[game]}")
    return mod.env(illegal="raise", **options)


def play_deal(env, deal_seed: int, lineup: Sequence, solo_slot: Optional[int] = None):
    """Play one deal with ``lineup[seat]`` acting for each seat.

    Returns ``(rewards per seat, solo seat or -1, number of decisions)``; the rewards are the
    episode's total per seat.
    """
    env.reset(seed=deal_seed)
    n = len(env.possible_agents)
    total = np.zeros(n)
    index = {a: i for i, a in enumerate(env.possible_agents)}
    decisions = 0
    for agent in env.agent_iter():
        obs, r, term, trunc, info = env.last()
        seat = index[agent]
        if term or trunc:
            total[seat] += r
            env.step(None)
            continue
        total[seat] += r
        a = lineup[seat].act(obs, env.unwrapped.legal_actions(),
                             policy_info(lineup[seat], info, env.unwrapped.state_vec))
        decisions += 1
        env.step(a)
    solo = int(env.unwrapped.state_vec[solo_slot]) if solo_slot is not None else -1
    return total, solo, decisions


#: deals per block when an arena runs in several processes (``jobs > 1``)
JOB_BLOCK = 10


class _DealStats(NamedTuple):
    """One deal over all its lineups: per agent the sums of rewards and of wins over the
    seats it held, per agent and role (solo, team) games, wins, reward and squared reward,
    whether every seat scored 0 (a void deal), and the decisions taken."""

    s_sum: np.ndarray
    w_sum: np.ndarray
    games: np.ndarray
    wins: np.ndarray
    score: np.ndarray
    sq: np.ndarray
    void: bool
    decisions: int


def _seats_held(plan, k: int) -> np.ndarray:
    """Seats each of the ``k`` agents holds in one deal over the lineups ``plan``."""
    return np.array([sum(1 for lu in plan for a in lu if a == j) for j in range(k)], np.float64)


def _play_lineups(env, players, plan, deal_seed: int, solo_slot, roles, k: int,
                  saver=None, d: int = 0, labels=()) -> _DealStats:
    """Play one deal once per lineup of ``plan`` (``players[a]`` for agent ``a``)."""
    s_sum = np.zeros(k)
    w_sum = np.zeros(k)
    d_games = np.zeros((k, 2), np.int64)
    d_wins = np.zeros((k, 2), np.int64)
    d_score = np.zeros((k, 2))
    d_sq = np.zeros((k, 2))
    all_zero = True
    d_dec = 0
    for lu in plan:
        rew, solo, nd = play_deal(env, deal_seed, [players[a] for a in lu], solo_slot)
        d_dec += nd
        if saver is not None:
            saver.game(env, d, [labels[a] for a in lu], rew)
        if np.any(rew != 0):
            all_zero = False
        for seat, a in enumerate(lu):
            s_sum[a] += rew[seat]
            w_sum[a] += rew[seat] > 0
            if roles is not None and solo >= 0:
                ri = 0 if seat == solo else 1
                d_games[a, ri] += 1
                d_wins[a, ri] += rew[seat] > 0
                d_score[a, ri] += rew[seat]
                d_sq[a, ri] += rew[seat] ** 2
    return _DealStats(s_sum, w_sum, d_games, d_wins, d_score, d_sq, all_zero, d_dec)


def _progress_bar(progress: bool, deals: int, done: int, game: str):
    if not progress:
        return None
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dev dependency
        return None
    return tqdm(total=deals, initial=done, desc=f"arena {game}", unit="deal", file=sys.stderr)


def _interrupted(done: int, deals: int, ppath) -> str:
    where = (f"; progress saved to {ppath}: continue with --resume (same agents, deals, "
             f"seed and options)") if ppath is not None else " (no --out: nothing saved)"
    return f"interrupted after {done} of {deals} deals{where}"


def _block_seeds(seed: int, block: int, k: int) -> list[int]:
    """The agents' seeds in one block of a ``jobs > 1`` arena."""
    return [int(s.generate_state(1)[0])
            for s in np.random.SeedSequence([int(seed), 1 + int(block)]).spawn(k)]


def _ignore_sigint() -> None:  # pool workers: Ctrl-C is the parent's to handle
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _block_worker(task):
    """Play one block of deals in a worker process; ``(block, [_DealStats per deal])``."""
    game, names, options, plan, solo_slot, roles, seed, block, seeds = task
    mod = import_agents()
    env, _ = env_for_agents(game, names, options)
    g = env.unwrapped.game
    k = len(names)
    players = [mod.make_agent(nm, g, seed=s) for nm, s in zip(names, _block_seeds(seed, block, k))]
    with one_blas_thread():
        rows = [_play_lineups(env, players, plan, int(ds), solo_slot, roles, k) for ds in seeds]
    return block, rows


def _run_blocks(game, names, options, plan, solo_slot, roles, seed, deal_seeds, jobs: int,
                saved, ppath, settings, progress: bool, save_seconds: float):
    """The deals of a ``jobs > 1`` arena, in blocks of :data:`JOB_BLOCK` over a process pool.

    Per-deal results are kept by deal, and the sums are taken over deals in order at the
    end, so the results do not depend on which worker finished first."""
    import multiprocessing

    deals = len(deal_seeds)
    k = len(names)
    held = _seats_held(plan, k)
    score = np.zeros((deals, k))
    wins = np.zeros((deals, k))
    per_role = np.zeros((4, deals, k, 2))  # games, wins, score, squared score
    void = np.zeros(deals, np.int64)
    dec = np.zeros(deals, np.int64)
    n_blocks = -(-deals // JOB_BLOCK)
    finished: set[int] = set()
    if saved is not None:
        finished = set(int(b) for b in saved["blocks"])
        score[:] = np.asarray(saved["score"], np.float64).reshape(deals, k)
        wins[:] = np.asarray(saved["wins"], np.float64).reshape(deals, k)
        per_role[:] = np.asarray(saved["per_role"], np.float64).reshape(per_role.shape)
        void[:] = saved["void"]
        dec[:] = saved["decisions"]

    def n_done() -> int:
        return sum(min(deals, (b + 1) * JOB_BLOCK) - b * JOB_BLOCK for b in finished)

    def save() -> None:
        if ppath is None:
            return
        state = {"settings": settings, "done": n_done(), "blocks": sorted(finished),
                 "score": score.tolist(), "wins": wins.tolist(), "per_role": per_role.tolist(),
                 "void": void.tolist(), "decisions": dec.tolist()}
        write_atomic(ppath, json.dumps(state))

    tasks = [(game, list(names), dict(options or {}), [tuple(lu) for lu in plan], solo_slot,
              roles, int(seed), b,
              [int(x) for x in deal_seeds[b * JOB_BLOCK:(b + 1) * JOB_BLOCK]])
             for b in range(n_blocks) if b not in finished]
    bar = _progress_bar(progress, deals, n_done(), game)
    last_save = time.perf_counter()
    pool = multiprocessing.get_context("spawn").Pool(min(jobs, max(1, len(tasks))),
                                                     initializer=_ignore_sigint)
    try:
        for b, rows in pool.imap_unordered(_block_worker, tasks):
            for i, st in enumerate(rows):
                d = b * JOB_BLOCK + i
                score[d] = st.s_sum / held
                wins[d] = st.w_sum / held
                per_role[:, d] = (st.games, st.wins, st.score, st.sq)
                void[d] = st.void
                dec[d] = st.decisions
            _block_done(finished, b)
            if bar is not None:
                bar.update(len(rows))
            if ppath is not None and time.perf_counter() - last_save >= save_seconds:
                save()
                last_save = time.perf_counter()
    except KeyboardInterrupt:
        pool.terminate()
        if bar is not None:
            bar.close()
        save()
        raise ArenaInterrupted(_interrupted(n_done(), deals, ppath)) from None
    except BaseException:
        pool.terminate()
        save()  # what the finished blocks hold survives the failure
        raise
    else:
        pool.close()
    finally:
        pool.join()
    if bar is not None:
        bar.close()
    tot = per_role.sum(axis=1)
    return (score, wins, tot[0].astype(np.int64), tot[1].astype(np.int64), tot[2], tot[3],
            int(void.sum()), int(dec.sum()))


def _block_done(finished: set, block: int) -> None:
    """Mark a block finished (a hook for the tests' interruptions)."""
    finished.add(block)


class ArenaInterrupted(Exception):
    """Ctrl-C (or SIGTERM under ``cardenvs arena``) during the deals; ``str()`` says how far
    it got and where the progress was saved."""


def kernels_cached(game: str, agent_names: Sequence[str] = ()) -> bool:
    """Whether numba's cache holds compiled kernels for ``game`` (the shared core, its game
    module and, for the ``rules`` / ``trained`` agents, their planner): ``False`` means the
    first use compiles them (minutes, once per machine; cached in ``__pycache__`` beside the
    sources, or in ``NUMBA_CACHE_DIR``)."""
    pkg = Path(__file__).resolve().parent
    family = {"doudizhu4": "doudizhu"}.get(game, game)
    wanted = [(pkg / "core", "encode"), (pkg / "games", family)]
    if any(nm.partition(":")[0] in ("rules", "trained") for nm in agent_names):
        wanted.append((pkg.parent / "agents" if (pkg.parent / "agents").is_dir()
                       else pkg / "agents", "planner"))
    user_dir = os.environ.get("NUMBA_CACHE_DIR")
    for folder, module in wanted:
        if user_dir:  # numba then caches there only
            if not any(Path(user_dir).rglob(f"{module}.*.nbi")):
                return False
            continue
        if any((folder / "__pycache__").glob(f"{module}.*.nbi")):
            continue
        # a read-only source folder: numba's user-wide cache
        wide = Path(os.path.expanduser("~")) / ".cache" / "numba"
        if not (wide.is_dir() and any(wide.rglob(f"{module}.*.nbi"))):
            return False
    return True


def one_blas_thread():
    """A context in which numpy's BLAS uses one thread (``threadpoolctl``; a no-op without
    it).  The agents' networks multiply small matrices, one position at a time: on a busy
    machine a multi-threaded BLAS spends far longer waking its threads than multiplying
    (measured: a ``trained`` Wakeng arena ran 7x faster on one thread on a loaded 2-core
    machine)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - a core dependency
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def _rng_states(agent, depth: int = 2) -> dict:
    """The numpy generators an agent carries (``rng``, and those of agents it holds, e.g. a
    ``trained`` agent's prior), as JSON-ready bit-generator states keyed by attribute path."""
    out = {}
    for name, value in sorted(vars(agent).items()):
        if isinstance(value, np.random.Generator):
            out[name] = value.bit_generator.state
        elif depth > 1 and hasattr(value, "act") and hasattr(value, "__dict__"):
            out.update({f"{name}.{k}": v for k, v in _rng_states(value, depth - 1).items()})
    return out


def _set_rng_states(agent, states: dict) -> None:
    for path, state in states.items():
        obj = agent
        *parents, last = path.split(".")
        for p in parents:
            obj = getattr(obj, p)
        getattr(obj, last).bit_generator.state = state


def _jsonable(x):
    """numpy scalars and big ints inside bit-generator states -> JSON (ints stay exact)."""
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    return x


def write_atomic(path, data) -> Path:
    """Write ``data`` (bytes or str) to ``path`` through a temporary file in the same folder
    and ``os.replace``: a reader (or a kill) never sees a half-written file."""
    path = Path(path)
    raw = data.encode() if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def check_writable(out_dir) -> Path:
    """Create ``out_dir`` if needed and check a file can be written there (``ValueError``
    naming the folder otherwise): done before any deal is played."""
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=out, prefix=".write-check.")
        os.close(fd)
        os.unlink(tmp)
    except OSError as e:
        raise ValueError(f"cannot write the results to {str(out)!r}: {e.strerror or e}") from None
    return out


def results_stem(game: str, labels: Sequence[str]) -> str:
    """``arena_GAME_A_B``: the file name of the results (unsafe characters replaced)."""
    stem = f"arena_{game}_{'_'.join(labels)}"
    return "".join(c if c.isalnum() or c in "_-." else "-" for c in stem)


def progress_path(out_dir, game: str, labels: Sequence[str]) -> Path:
    """Where an unfinished arena keeps its progress (deleted when it completes)."""
    return Path(out_dir) / f"{results_stem(game, labels)}.progress.json"


def run_arena(game: str, agents, deals: int, seed: int = 0, options: Optional[dict] = None,
              lineups: str = "auto", progress: bool = True, out_dir=None, resume: bool = False,
              save_seconds: float = 30.0, save_replays=None,
              save_replays_top: Optional[int] = None, jobs: int = 1) -> dict:
    """Play ``deals`` duplicate deals of ``game`` between ``agents``; return the results dict.

    Args:
        game: a registry name (``cardenvs.GAMES``).
        agents: agent names (``"rules,random"`` or a list); repeated names are allowed, and
            ``trained:path/to/weights.npz`` plays your own weights.
        deals: number of deals (each replayed once per lineup).
        seed: seeds the deals and the agents' generators.
        options: game options (agents may add required ones, e.g. ``preset="rlcard"``).
        lineups: ``"auto"``, ``"rotate"`` or ``"solo"`` (module docstring).
        progress: show a tqdm progress bar (started after a warm-up deal, so that its rate
            and ETA leave out the one-off compilation of the kernels).
        out_dir: with it, the progress is saved there every ``save_seconds`` and on Ctrl-C
            (:func:`progress_path`), and removed when the arena completes.
        resume: continue from the progress saved in ``out_dir`` (``ValueError`` if there is
            none, or if it was made with other agents, deals, seed, options or lineups); the
            results are those of an uninterrupted run.

        save_replays: a folder to write every game as a replay (:mod:`cardenvs.replay`), or
            with ``save_replays_top=N`` the games of the N most lopsided deals only (not with
            ``resume``: the deals already played are not kept).
        jobs: worker processes.  ``1`` plays the deals in order in this process, the agents'
            generators running on from deal to deal.  With ``jobs > 1`` the deals are played
            in blocks of :data:`JOB_BLOCK` by a pool of ``jobs`` processes, each block by
            agents seeded from ``(seed, block)``: the deals are the same, the results are the
            same for every ``jobs > 1`` (and reproducible), and they differ from ``jobs=1``
            only through the agents' own random choices (none for deterministic agents such
            as ``rules``).  Not with ``save_replays``.  The workers are started with
            ``multiprocessing``'s "spawn": a script that calls this with ``jobs > 1`` needs the
            usual ``if __name__ == "__main__":`` guard.

    Ctrl-C (``KeyboardInterrupt``) during the deals saves the progress and raises
    :class:`ArenaInterrupted`.
    """
    from .core.state import LANDLORD, PHASE, P_PLAY

    names = parse_agents(agents)
    if isinstance(deals, bool) or not isinstance(deals, (int, np.integer)) or deals < 1:
        raise ValueError(f"deals must be a positive integer, got {deals!r}")
    if lineups not in ("auto", "rotate", "solo"):
        raise ValueError(f"lineups={lineups!r}; choose 'auto', 'rotate' or 'solo'")
    if resume and out_dir is None:
        raise ValueError("resume needs the folder of the saved progress (out_dir / --out)")
    if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
    if jobs > 1 and save_replays:
        raise ValueError("save_replays needs jobs=1 (the replays are written in deal order "
                         "by one process)")
    labels = labels_of(names)
    ppath = progress_path(out_dir, game, labels) if out_dir is not None else None
    saved = None
    if out_dir is not None:
        check_writable(out_dir)
        if not resume and ppath.exists():
            print(f"cardenvs: {ppath} holds an unfinished arena (--resume continues it); "
                  f"starting again", file=sys.stderr, flush=True)
    settings = {"game": game, "agents": list(names), "deals": int(deals), "seed": int(seed),
                "options": _jsonable(dict(options or {})), "lineups": lineups}
    if jobs > 1:  # blocks of deals, each with its own agents: results of their own
        settings["deal_blocks"] = JOB_BLOCK
    if resume:
        if not ppath.exists():
            raise ValueError(f"--resume: no saved progress at {str(ppath)!r}")
        saved = json.loads(ppath.read_text())
        if saved["settings"] != json.loads(json.dumps(settings)):
            mine = json.loads(json.dumps(settings))
            diff = [k for k in {**saved["settings"], **mine}
                    if saved["settings"].get(k) != mine.get(k)]
            raise ValueError(
                f"--resume: the progress in {str(ppath)!r} is for other settings ("
                + ", ".join(f"{k} {saved['settings'].get(k)!r}, not {mine.get(k)!r}"
                            for k in diff)
                + "); rerun with those settings, or without --resume to start again")
    cold = not kernels_cached(game, names)
    t_warm = time.perf_counter()
    if cold:
        print(f"cardenvs: compiling the numba kernels for {game} (first run on this machine: "
              f"a few minutes; cached afterwards) ...", file=sys.stderr, flush=True)
    mod = import_agents()
    env, opts = env_for_agents(game, names, options)
    g = env.unwrapped.game
    n = g.n_players
    k = len(names)
    for nm in names:
        reason = mod.unsupported(nm, g)
        if reason is not None:
            raise ValueError(f"agent {nm!r} cannot play {game}: {reason}")
    seeds = np.random.SeedSequence(seed).spawn(k + 1)
    # the serial run's agents (with jobs > 1 each block makes its own, in its worker)
    players = [mod.make_agent(nm, g, seed=int(s.generate_state(1)[0])) for nm, s in
               zip(names, seeds[1:])] if jobs == 1 else []
    deal_seeds = np.random.default_rng(seeds[0]).integers(0, 2**63 - 1, size=deals)
    one_vs_rest = g.info.teams.startswith("1 vs")
    roles = ROLE_NAMES.get(game, ("solo", "team")) if one_vs_rest else None
    solo_slot = LANDLORD if one_vs_rest else None
    # the solo seat fixed before the play (auction "fixed", custom setups)?
    env.reset(seed=int(deal_seeds[0]))
    fixed_solo = -1
    if one_vs_rest and int(env.unwrapped.state_vec[PHASE]) == P_PLAY:
        fixed_solo = int(env.unwrapped.state_vec[LANDLORD])
    mode = lineups
    if mode == "auto":
        mode = "solo" if fixed_solo >= 0 else "rotate"
    if mode == "solo":
        if not one_vs_rest:
            raise ValueError(f"lineups='solo' needs a one-against-the-rest game; {game} is "
                             f"{g.info.teams}")
        if fixed_solo < 0:
            raise ValueError("lineups='solo' needs the solo seat fixed before the play "
                             "(e.g. auction='fixed')")
        plan = solo_lineups(k, n, fixed_solo)
    else:
        plan = rotate_lineups(k, n)
    # warm-up: one deal with throw-away agents (its own seed), so the kernels are compiled
    # before the progress bar starts; the arena's agents and deals are untouched
    spare = [mod.make_agent(nm, g, seed=1) for nm in names]
    with one_blas_thread():
        play_deal(env, 12345, [spare[a] for a in plan[0]], solo_slot)
    if cold:
        print(f"cardenvs: kernels compiled in {time.perf_counter() - t_warm:.0f} s",
              file=sys.stderr, flush=True)

    score = np.zeros((deals, k))
    wins = np.zeros((deals, k))
    held = _seats_held(plan, k)
    role_games = np.zeros((k, 2), np.int64)
    role_wins = np.zeros((k, 2), np.int64)
    role_score = np.zeros((k, 2))
    role_sq = np.zeros((k, 2))  # sums of squared scores: the by-role score intervals
    void = 0
    decisions = 0
    from .replay import ArenaReplays

    if save_replays_top is not None and not save_replays:
        raise ValueError("save_replays_top needs save_replays (the folder to write them to)")
    if save_replays_top is not None and resume:
        raise ValueError("save_replays_top cannot be combined with resume (the top deals "
                         "of the part already played were not kept)")
    if jobs > 1:
        score, wins, role_games, role_wins, role_score, role_sq, void, decisions = _run_blocks(
            game, names, options, plan, solo_slot, roles, seed, deal_seeds, jobs, saved,
            ppath, settings, progress, save_seconds)
    else:
        saver = ArenaReplays(save_replays, save_replays_top) if save_replays else None
        done = 0
        if saved is not None:
            done = int(saved["done"])
            score[:done] = np.asarray(saved["score"], np.float64).reshape(done, k)
            wins[:done] = np.asarray(saved["wins"], np.float64).reshape(done, k)
            role_games[:] = saved["role_games"]
            role_wins[:] = saved["role_wins"]
            role_score[:] = saved["role_score"]
            role_sq[:] = saved["role_sq"]
            void, decisions = int(saved["void"]), int(saved["decisions"])
            for p, st in zip(players, saved["agent_rng"]):
                _set_rng_states(p, st)

        def save() -> None:
            if ppath is None:
                return
            state = {"settings": settings, "done": done, "score": score[:done].tolist(),
                     "wins": wins[:done].tolist(), "role_games": role_games.tolist(),
                     "role_wins": role_wins.tolist(), "role_score": role_score.tolist(),
                     "role_sq": role_sq.tolist(), "void": void, "decisions": decisions,
                     "agent_rng": _jsonable(rng_at_done)}
            write_atomic(ppath, json.dumps(state))

        # the agents' generators as they were when the last whole deal ended (what a resumed
        # run restores: a deal cut short is replayed from its start)
        rng_at_done = [_rng_states(p) for p in players]
        bar = _progress_bar(progress, deals, done, game)
        last_save = time.perf_counter()
        blas = one_blas_thread()
        blas.__enter__()
        try:
            for d in range(done, deals):
                st = _play_lineups(env, players, plan, int(deal_seeds[d]), solo_slot, roles, k,
                                   saver, d, labels)
                # a deal counts once all its lineups are played (an interrupted deal is
                # replayed)
                role_games += st.games
                role_wins += st.wins
                role_score += st.score
                role_sq += st.sq
                decisions += st.decisions
                void += st.void
                score[d] = st.s_sum / held
                wins[d] = st.w_sum / held
                if saver is not None:
                    saver.deal(d, score[d])
                done = d + 1
                if ppath is not None:
                    rng_at_done = [_rng_states(p) for p in players]
                if bar is not None:
                    bar.update(1)
                if ppath is not None and time.perf_counter() - last_save >= save_seconds:
                    save()
                    last_save = time.perf_counter()
        except KeyboardInterrupt:
            if bar is not None:
                bar.close()
            save()
            raise ArenaInterrupted(_interrupted(done, deals, ppath)) from None
        finally:
            blas.__exit__(None, None, None)
        if bar is not None:
            bar.close()

    res = {
        "game": game, "options": opts, "agents": labels, "deals": int(deals), "seed": int(seed),
        "lineup_mode": mode, "lineups": [[labels[a] for a in lu] for lu in plan],
        "void_deals": int(void), "decisions": int(decisions),
        "per_agent": {}, "pairwise": {}, "by_role": {},
        "score_per_deal": {lab: score[:, j].tolist() for j, lab in enumerate(labels)},
    }
    if jobs == 1 and saver is not None:
        res["replays"] = saver.close()
    if jobs > 1:
        res["deal_blocks"] = JOB_BLOCK
    if any(":" in nm for nm in names):
        res["agent_specs"] = dict(zip(labels, names))
    for j, lab in enumerate(labels):
        m, lo, hi = mean_ci(score[:, j])
        wm, wlo, whi = mean_ci(wins[:, j])
        if not math.isnan(wlo):  # a rate: clip the normal interval to [0, 1]
            wlo, whi = max(0.0, wlo), min(1.0, whi)
        res["per_agent"][lab] = {"score": m, "score_ci": [lo, hi], "win_rate": wm,
                                 "win_rate_ci": [wlo, whi]}
    for a in range(k):
        for b in range(a + 1, k):
            m, lo, hi = mean_ci(score[:, a] - score[:, b])
            res["pairwise"][f"{labels[a]} - {labels[b]}"] = {"score_diff": m, "ci": [lo, hi]}
    if roles is not None:
        for j, lab in enumerate(labels):
            res["by_role"][lab] = {}
            for ri, role in enumerate(roles):
                ng = int(role_games[j, ri])
                p, lo, hi = wilson_ci(int(role_wins[j, ri]), ng)
                mean = float(role_score[j, ri] / ng) if ng else math.nan
                half = math.nan
                if ng > 1:  # normal interval over the games in that role
                    var = max(0.0, (role_sq[j, ri] - ng * mean * mean) / (ng - 1))
                    half = Z95 * math.sqrt(var / ng)
                res["by_role"][lab][role] = {
                    "games": ng, "win_rate": p, "win_rate_ci": [lo, hi],
                    "score": mean, "score_ci": [mean - half, mean + half],
                }
    return res


# -- reporting ----------------------------------------------------------------------------------------


def _f(x: float, signed: bool = True) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "nan"
    return f"{x:+.3f}" if signed else f"{x:.3f}"


def format_results(res: dict) -> str:
    """The results as a text table."""
    lines = [f"{res['game']}: {res['deals']} deals x {len(res['lineups'])} lineups "
             f"({res['lineup_mode']}), seed {res['seed']}, options {res['options']}"]
    if res["void_deals"]:
        lines.append(f"void deals (every seat 0): {res['void_deals']}")
    w = max(8, max(len(a) for a in res["agents"]))
    lines.append(f"{'agent':<{w}}  {'score/deal':>10}  {'95% CI':^20}  {'win rate':>8}  "
                 f"{'95% CI':^14}")
    for lab, st in res["per_agent"].items():
        lo, hi = st["score_ci"]
        wlo, whi = st["win_rate_ci"]
        lines.append(f"{lab:<{w}}  {_f(st['score']):>10}  [{_f(lo):>8}, {_f(hi):>8}]  "
                     f"{_f(st['win_rate'], False):>8}  [{_f(wlo, False)}, {_f(whi, False)}]")
    if res["pairwise"]:
        lines.append("score difference per deal (duplicate-paired):")
        for pair, st in res["pairwise"].items():
            lo, hi = st["ci"]
            lines.append(f"  {pair}: {_f(st['score_diff'])} [{_f(lo)}, {_f(hi)}]")
    if res["by_role"]:
        lines.append("by role (win rate with Wilson 95% CI over games; mean score):")
        for lab, roles in res["by_role"].items():
            for role, st in roles.items():
                if st["games"] == 0:
                    lines.append(f"  {lab:<{w}} as {role:<10} games {0:>6}  (never held this role)")
                    continue
                lo, hi = st["win_rate_ci"]
                lines.append(f"  {lab:<{w}} as {role:<10} games {st['games']:>6}  win "
                             f"{_f(st['win_rate'], False)} [{_f(lo, False)}, {_f(hi, False)}]  "
                             f"score {_f(st['score'])}")
    return "\n".join(lines)


def write_results(res: dict, out_dir) -> tuple[Path, Optional[Path]]:
    """Write ``arena_GAME_AGENTS.json`` and ``.png`` (the PNG only with matplotlib), each
    atomically (:func:`write_atomic`: an earlier result is replaced only by a whole file)."""
    out = check_writable(out_dir)
    stem = results_stem(res["game"], res["agents"])
    jpath = write_atomic(out / f"{stem}.json", json.dumps(res, indent=1, allow_nan=True) + "\n")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return jpath, None
    fig = plot_results(res, plt)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return jpath, write_atomic(out / f"{stem}.png", buf.getvalue())


def load_result(result) -> tuple[dict, str]:
    """An arena result and its path: ``result`` is the JSON ``cardenvs arena --out DIR``
    writes, or ``DIR`` holding exactly one (``ValueError`` otherwise, or for a file that is
    not an arena result)."""
    path = os.fspath(result)
    if os.path.isdir(path):
        found = sorted(Path(path).glob("arena_*.json"))
        if len(found) != 1:
            raise ValueError(f"{path!r} holds {len(found)} arena results (arena_*.json); "
                             "name the file")
        path = str(found[0])
    if not os.path.exists(path):
        raise ValueError(f"no arena result at {path!r}")
    try:
        with open(path) as f:
            res = json.load(f)
        for key in ("game", "agents", "deals", "seed", "pairwise"):
            res[key]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{path!r} is not an arena result ({e})") from None
    return res, path


def names_agent(res: dict, label: str, name: str) -> bool:
    """Whether ``name`` (an agent's label or its spec) names the agent ``label`` of ``res``."""
    return label == name or (res.get("agent_specs") or {}).get(label) == name


def _label_of(res: dict, name: str) -> Optional[str]:
    """The label of the agent called ``name`` (its label or its spec) in ``res``."""
    return next((lab for lab in res["agents"] if names_agent(res, lab, name)), None)


def paired_scores(res: dict, opponent: str, path: str = "the result") -> tuple[str, np.ndarray]:
    """The agent against ``opponent`` in a two-agent arena result and, per deal, its score
    minus the opponent's (the duplicate-paired difference the arena's pairwise line averages)."""
    opp = _label_of(res, opponent)
    if opp is None:
        raise ValueError(f"{path}: no agent {opponent!r} (agents: {', '.join(res['agents'])})")
    others = [lab for lab in res["agents"] if lab != opp]
    if len(others) != 1:
        raise ValueError(f"{path}: compare takes results of two agents; this one has "
                         f"{len(res['agents'])} ({', '.join(res['agents'])})")
    try:
        per = res["score_per_deal"]
        d = np.asarray(per[others[0]], np.float64) - np.asarray(per[opp], np.float64)
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"{path}: no per-deal scores ({e!r}); rerun the arena") from None
    if d.ndim != 1 or len(d) != int(res["deals"]):
        raise ValueError(f"{path}: {len(d)} per-deal scores for {res['deals']} deals")
    return others[0], d


def compare_results(first, second, opponent: str = "rules") -> dict:
    """Two arena results of the same deals, each an agent against ``opponent``, compared deal
    by deal: ``diff``, the mean over deals of (first agent - opponent) - (second agent -
    opponent), and its 95% interval ``ci``; ``first`` and ``second`` hold each result's agent
    (``agent``, its ``spec``), its own paired difference ``score`` and ``ci``.

    The results must share the game, options, seed and lineup mode, so that their deals are
    the same (the first ``deals`` deals of a seed are the same whatever their number, so the
    common prefix is compared when the numbers differ: ``deals``)."""
    (ra, pa), (rb, pb) = load_result(first), load_result(second)
    for key in ("game", "options", "seed", "lineup_mode"):
        if ra.get(key) != rb.get(key):
            raise ValueError(f"the results were played on different deals: {key} "
                             f"{ra.get(key)!r} in {pa!r}, {rb.get(key)!r} in {pb!r}")
    la, da = paired_scores(ra, opponent, pa)
    lb, db = paired_scores(rb, opponent, pb)
    n = min(len(da), len(db))
    if n < 2:
        raise ValueError(f"compare needs at least 2 common deals, the results have {n}")
    da, db = da[:n], db[:n]
    out = {"game": ra["game"], "options": ra.get("options", {}), "seed": ra["seed"],
           "deals": n, "opponent": opponent}
    for key, res, lab, d, path in (("first", ra, la, da, pa), ("second", rb, lb, db, pb)):
        m, lo, hi = mean_ci(d)
        out[key] = {"result": path, "agent": lab, "deals": int(res["deals"]),
                    "spec": (res.get("agent_specs") or {}).get(lab, lab), "score": m,
                    "ci": [lo, hi]}
    m, lo, hi = mean_ci(da - db)
    out["diff"], out["ci"] = m, [lo, hi]
    return out


def format_comparison(c: dict) -> str:
    """The table ``cardenvs compare`` prints."""
    a, b = c["first"], c["second"]
    w = max(len(a["spec"]), len(b["spec"]), len("first - second"))
    opts = ", ".join(f"{k}={v}" for k, v in sorted(c["options"].items()))
    held = (a.get("deals"), b.get("deals"))
    note = "" if held[0] == held[1] else f" (the first of {held[0]} and {held[1]})"
    lines = [f"{c['game']}{' (' + opts + ')' if opts else ''}: {c['deals']} deals{note}, seed "
             f"{c['seed']}; each agent's score minus that of {c['opponent']}, paired by deal"]
    for x in (a, b):
        lines.append(f"  {x['spec']:<{w}}  {_f(x['score'])} [{_f(x['ci'][0])}, {_f(x['ci'][1])}]")
    lines.append(f"  {'first - second':<{w}}  {_f(c['diff'])} [{_f(c['ci'][0])}, "
                 f"{_f(c['ci'][1])}]")
    return "\n".join(lines)


def _errbar(values: np.ndarray, cis) -> np.ndarray:
    """``yerr`` of matplotlib from means and ``[low, high]`` intervals (nan -> no bar; an end a
    rounding error on the wrong side of the mean, as when every game scored the same or
    Wilson's upper end 0.9999999999999999 of a 100% win rate, -> 0: matplotlib refuses
    negative bars)."""
    lo = np.array([c[0] for c in cis], np.float64)
    hi = np.array([c[1] for c in cis], np.float64)
    return np.maximum(np.nan_to_num(np.vstack([values - lo, hi - values])), 0.0)


def plot_results(res: dict, plt):
    """The arena's figure: the headline first, the paired score difference per deal of each
    pair of agents (95% CI), then each agent's score per deal, and for one-against-the-rest
    games the score and win rate by role."""
    labs = res["agents"]
    has_roles = bool(res["by_role"])
    panels = 4 if has_roles else 2
    fig, axes = plt.subplots(1, panels, figsize=(4.6 * panels, 4.0))
    unit = "points per deal"
    # 1. paired differences (the headline)
    ax = axes[0]
    pairs = list(res["pairwise"])
    m = np.array([res["pairwise"][p]["score_diff"] for p in pairs])
    y = np.arange(len(pairs))[::-1]
    ax.errorbar(m, y, xerr=_errbar(m, [res["pairwise"][p]["ci"] for p in pairs]), fmt="o",
                color="#C44E52", capsize=5, label="mean, 95% CI")
    for yi, mi, p in zip(y, m, pairs):
        lo, hi = res["pairwise"][p]["ci"]
        ax.annotate(f"{mi:+.2f} [{lo:+.2f}, {hi:+.2f}]", (mi, yi), textcoords="offset points",
                    xytext=(0, 8), ha="center", fontsize=8)
    ax.axvline(0, color="k", lw=0.8, ls="--", label="no difference")
    ax.set_yticks(y, pairs)
    ax.set_ylim(-0.7, len(pairs) - 0.3)
    ax.set_xlabel(f"score difference ({unit})")
    ax.set_title("paired difference per deal (duplicate)")
    ax.legend(fontsize=8, loc="lower right")
    # 2. score per deal of each agent
    ax = axes[1]
    x = np.arange(len(labs))
    m = np.array([res["per_agent"][a]["score"] for a in labs])
    ax.bar(x, m, yerr=_errbar(m, [res["per_agent"][a]["score_ci"] for a in labs]), capsize=4,
           color="#4C72B0", label="mean, 95% CI")
    ax.axhline(0, color="k", lw=0.6)
    ax.set_xticks(x, labs)
    ax.set_xlabel("agent")
    ax.set_ylabel(f"score ({unit})")
    ax.set_title("score per deal")
    ax.legend(fontsize=8)
    if has_roles:
        roles = list(next(iter(res["by_role"].values())))
        wdt = 0.8 / len(roles)
        for ax, key, ylabel, title in (
                (axes[2], "score", "score (points per game)", "score by role (95% CI)"),
                (axes[3], "win_rate", "win rate (share of games won)",
                 "win rate by role (Wilson 95% CI)")):
            for i, role in enumerate(roles):
                st = [res["by_role"][a][role] for a in labs]
                v = np.array([s[key] for s in st], np.float64)
                ax.bar(x + (i - (len(roles) - 1) / 2) * wdt, np.nan_to_num(v), wdt, label=role,
                       yerr=_errbar(v, [s.get(f"{key}_ci", [math.nan, math.nan]) for s in st]),
                       capsize=3)
            ax.set_xticks(x, labs)
            ax.set_xlabel("agent")
            ax.set_ylabel(ylabel)
            ax.set_title(title)
            ax.legend(fontsize=8, title="role")
            if key == "win_rate":
                ax.set_ylim(0, 1)
            else:
                ax.axhline(0, color="k", lw=0.6)
    fig.suptitle(f"{res['game']}: {res['deals']} duplicate deals x {len(res['lineups'])} "
                 f"lineups, seed {res['seed']}")
    fig.tight_layout()
    return fig


def main_arena(game: str, agents: str, deals: int, seed: int, options: dict, out: Optional[str],
               lineups: str = "auto", progress: bool = True, stream=None,
               resume: bool = False, save_replays=None,
               save_replays_top: Optional[int] = None, jobs: int = 1) -> dict:
    """What ``cardenvs arena`` does: check ``out`` is writable, run (saving progress to
    ``out``; ``resume`` continues it), print the table, write JSON and PNG atomically."""
    stream = sys.stdout if stream is None else stream
    res = run_arena(game, agents, deals, seed=seed, options=options, lineups=lineups,
                    progress=progress, out_dir=out or None, resume=resume,
                    save_replays=save_replays, save_replays_top=save_replays_top, jobs=jobs)
    print(format_results(res), file=stream)
    if save_replays:
        print(f"wrote {len(res['replays'])} replays to {save_replays}", file=stream)
    if out:
        j, p = write_results(res, out)
        ppath = progress_path(out, game, res["agents"])
        with contextlib.suppress(FileNotFoundError):
            ppath.unlink()
        print(f"wrote {j}" + (f" and {p}" if p else " (no matplotlib: no PNG)"), file=stream)
    return res
