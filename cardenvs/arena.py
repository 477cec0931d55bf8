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

Statistics (all from the rewards the environment pays; :mod:`cardenvs.arena_stats`).  Every
interval is over the deals, the independent units: the lineups of one deal (a duplicate group)
share its cards, and partners share their side's result, so its games are not independent.

* an agent's *score per deal* is the mean reward of the seats it held in that deal, over all
  its lineups; its average and the 95% interval are over deals (mean +- 1.96 s / sqrt(n), s the
  sample standard deviation), and the duplicate replays cancel the luck of the cards;
* *pairwise*: per deal the difference of two agents' scores (duplicate-paired), averaged with
  the same interval;
* *win rate*: per deal the share of the agent's seats whose side won (reward > 0), averaged
  over deals with the same interval (clipped to [0, 1]);
* *by role* (one-against-the-rest games): each agent's games in each role, the deals in which
  it held the role, its win rate and mean score a game, with 95% intervals over the deals
  (:func:`role_stats`: the ratio estimator's variance over deals; Wilson's interval with the
  games discounted by the design effect for the win rate).

*Comparing two results* (:func:`compare_results`, ``cardenvs compare A B``): two arenas of
the same deals (game, options, seed), each an agent against one opponent, paired deal by
deal: the difference of the two agents' paired differences, with its interval, which the
luck of the deals does not widen.

Agents come from the registry in ``agents`` (``random``, ``rules``, ``rlcard``, ``trained``...),
imported only when the arena runs.  Results print as a table (:mod:`cardenvs.arena_report`)
and are written as JSON and a PNG chart (matplotlib) to ``out``, named by the run's settings
(:mod:`cardenvs.arena_files`).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import json
import math
import os
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import IO, TYPE_CHECKING, Any, Callable, ContextManager, NamedTuple, Optional, Sequence, Union

import numpy as np

# the arena's statistics, files and report live in their own modules; their public names
# are importable from here
from .arena_files import (  # noqa: F401
    _jsonable, check_writable, labels_of, load_result, other_progress, progress_path,
    read_progress, results_stem, settings_digest, settings_of_result, write_atomic,
    write_results,
)
from .arena_report import (  # noqa: F401
    _errbar, _f, format_comparison, format_results, plot_results,
)
from .arena_stats import (  # noqa: F401
    Z95, _label_of, compare_results, mean_ci, names_agent, paired_scores, role_stats, wilson_ci,
)
from .core.compile_notice import announce, kernels_cached  # noqa: F401 (kernels_cached: API)
from .registry import REGISTRY
from .wrappers import policy_info

if TYPE_CHECKING:
    from pettingzoo import AECEnv

#: role names of the one-against-the-rest games: (solo, others), from the registry
ROLE_NAMES = {name: s.roles for name, s in REGISTRY.items() if s.roles}


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


def import_agents() -> ModuleType:
    """The baseline agents package, ``cardenvs.agents``: installed inside ``cardenvs`` (a
    wheel, or an editable install mapping it to a checkout's ``agents/`` folder), or, from a
    checkout that is not installed, that folder loaded under the same name
    (:func:`cardenvs.subpackages.import_subpackage`): one name for each source file, whatever
    the working directory."""
    from .subpackages import import_subpackage

    try:
        return import_subpackage("agents")
    except ModuleNotFoundError as e:
        if e.name != "cardenvs.agents":
            raise
        raise ValueError(f"the baseline agents are not installed ({e})") from None


def agents_module(name: str) -> ModuleType:
    """A module of the baseline agents package (``"trained"`` -> ``cardenvs.agents.trained``,
    see :func:`import_agents`)."""
    return importlib.import_module(f"{import_agents().__name__}.{name}")


def parse_agents(spec: Union[str, Sequence[str]]) -> list[str]:
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


def env_for_agents(game: str, names: Sequence[str], options: Optional[dict]
                   ) -> tuple[AECEnv, dict]:
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


def _env(game: str, options: dict) -> AECEnv:
    import cardenvs

    if game not in cardenvs.GAMES:
        raise ValueError(f"unknown game {game!r}; choose from: {', '.join(cardenvs.GAMES)}")
    mod = importlib.import_module(f"cardenvs.{cardenvs.GAMES[game]}")
    return mod.env(illegal="raise", **options)


def play_deal(env: AECEnv, deal_seed: int, lineup: Sequence[Any], solo_slot: Optional[int] = None
              ) -> tuple[np.ndarray, int, int]:
    """Play one deal with ``lineup[seat]`` acting for each seat.

    Returns ``(rewards per seat, solo seat or -1, number of decisions)``; the rewards are the
    episode's total per seat.  In a compact env (``actions="compact"``) each agent decides
    whole plays, through :class:`cardenvs.compact_seat.CompactAdapter` (asked once per play:
    one decision; the play's parts are stepped one by one): the deal is the flat env's.
    """
    env.reset(seed=deal_seed)
    n = len(env.possible_agents)
    total = np.zeros(n)
    index = {a: i for i, a in enumerate(env.possible_agents)}
    decisions = 0
    u = env.unwrapped
    adapters = None
    if getattr(u, "actions", "flat") == "compact":
        from .compact_seat import CompactAdapter

        def whole(p: Any) -> Callable[[dict, np.ndarray], int]:
            def ask(o: dict, legal: np.ndarray) -> int:
                nonlocal decisions
                decisions += 1
                return p.act(o, legal, policy_info(p, info, u.state_vec))
            return ask

        adapters = [CompactAdapter(whole(p)) for p in lineup]
    for agent in env.agent_iter():
        obs, r, term, trunc, info = env.last()
        seat = index[agent]
        if term or trunc:
            total[seat] += r
            env.step(None)
            continue
        total[seat] += r
        if adapters is not None:
            env.step(adapters[seat].act(env, agent))
            continue
        a = lineup[seat].act(obs, u.legal_actions(), policy_info(lineup[seat], info, u.state_vec))
        decisions += 1
        env.step(a)
    solo = int(env.unwrapped.state_vec[solo_slot]) if solo_slot is not None else -1
    return total, solo, decisions


#: deals per block when an arena runs in several processes (``jobs > 1``)
JOB_BLOCK = 10


class _DealStats(NamedTuple):
    """One deal over all its lineups: per agent the sums of rewards and of wins over the
    seats it held, per agent and role (solo, team) games, wins and summed reward, whether
    every seat scored 0 (a void deal), and the decisions taken."""

    s_sum: np.ndarray
    w_sum: np.ndarray
    games: np.ndarray
    wins: np.ndarray
    score: np.ndarray
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
    return _DealStats(s_sum, w_sum, d_games, d_wins, d_score, all_zero, d_dec)


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
                saved, ppath, settings, progress: bool, save_seconds: float, pool=None):
    """The deals of a ``jobs > 1`` arena, in blocks of :data:`JOB_BLOCK` over a process pool.

    Per-deal results are kept by deal, and the sums are taken over deals in order at the
    end, so the results do not depend on which worker finished first.  Returns the arrays
    :func:`run_arena` keeps: ``(score, wins, per_role, void, decisions)``."""
    import multiprocessing

    deals = len(deal_seeds)
    k = len(names)
    held = _seats_held(plan, k)
    score = np.zeros((deals, k))
    wins = np.zeros((deals, k))
    per_role = np.zeros((3, deals, k, 2))  # games, wins, score by deal, agent and role
    void = np.zeros(deals, np.int64)
    dec = np.zeros(deals, np.int64)
    n_blocks = -(-deals // JOB_BLOCK)
    finished: set[int] = set()
    if saved is not None:  # checked by read_progress
        finished = set(saved["blocks"])
        score[:], wins[:], per_role[:] = saved["score"], saved["wins"], saved["per_role"]
        void[:], dec[:] = saved["void"], saved["decisions"]

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
    if pool is None:
        pool = multiprocessing.get_context("spawn").Pool(min(jobs, max(1, len(tasks))),
                                                         initializer=_ignore_sigint)
    try:
        for b, rows in pool.imap_unordered(_block_worker, tasks):
            for i, st in enumerate(rows):
                d = b * JOB_BLOCK + i
                score[d] = st.s_sum / held
                wins[d] = st.w_sum / held
                per_role[:, d] = (st.games, st.wins, st.score)
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
    return score, wins, per_role, int(void.sum()), int(dec.sum())


def _block_done(finished: set, block: int) -> None:
    """Mark a block finished (a hook for the tests' interruptions)."""
    finished.add(block)


class ArenaInterrupted(Exception):
    """Ctrl-C (or SIGTERM under ``cardenvs arena``) during the deals; ``str()`` says how far
    it got and where the progress was saved."""


def one_blas_thread() -> ContextManager[Any]:
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


def run_settings(game: str, agents: Sequence[str], deals: int, seed: int,
                 options: Optional[dict], lineups: str, jobs: int) -> dict:
    """The settings that decide an arena's results, as its progress and result files record
    them (and name them by, :func:`results_stem`): the game, the agents' specs, deals, seed,
    the options given, the lineups asked for and, with ``jobs > 1``, the deals per block
    (each block's agents are seeded by the block)."""
    settings = {"game": game, "agents": list(agents), "deals": int(deals), "seed": int(seed),
                "options": _jsonable(dict(options or {})), "lineups": lineups}
    if jobs > 1:  # blocks of deals, each with its own agents: results of their own
        settings["deal_blocks"] = JOB_BLOCK
    return settings


def run_arena(game: str, agents: Union[str, Sequence[str]], deals: int, seed: int = 0,
              options: Optional[dict] = None, lineups: str = "auto", progress: bool = True,
              out_dir: Union[str, os.PathLike, None] = None, resume: bool = False,
              save_seconds: float = 30.0, save_replays: Union[str, os.PathLike, None] = None,
              save_replays_top: Optional[int] = None, jobs: int = 1, pool: Any = None) -> dict:
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
            (:func:`progress_path`, a file named by all the settings: runs of other
            settings in the same folder keep theirs), and removed when the arena completes.
        resume: continue from the progress saved in ``out_dir`` by a run of the same
            settings (``ValueError`` if there is none, saying which settings the progress
            files of these agents there have, or if the file is damaged,
            :func:`read_progress`; nothing is written then); the results are those of an
            uninterrupted run.

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
        pool: with ``jobs > 1``, what plays the blocks instead of the ``jobs`` processes: an
            object with ``multiprocessing.Pool``'s ``imap_unordered``, ``terminate``,
            ``close`` and ``join`` (e.g. ``cardenvs.train.ray_tasks.RayPool``, Ray tasks on a
            cluster); the same results.

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
    settings = run_settings(game, names, deals, seed, options, lineups, jobs)
    ppath = progress_path(out_dir, settings) if out_dir is not None else None
    saved = None
    if resume:  # checked in full before anything is written
        assert out_dir is not None and ppath is not None  # resume needs out_dir (above)
        if not ppath.exists():
            others = "".join(f"; {p} is for other settings ({diff})"
                             for p, diff in other_progress(out_dir, settings))
            raise ValueError(f"--resume: no saved progress for these settings at "
                             f"{str(ppath)!r}{others}; rerun with the settings of a saved "
                             "progress, or without --resume to start again")
        saved = read_progress(ppath, settings, len(names),
                              -(-int(deals) // JOB_BLOCK) if jobs > 1 else None)
    if out_dir is not None:
        check_writable(out_dir)
        if not resume and ppath is not None and ppath.exists():
            print(f"cardenvs: {ppath} holds an unfinished arena of these settings (--resume "
                  f"continues it); starting again", file=sys.stderr, flush=True)
    cold = not kernels_cached(game, names)
    t_warm = time.perf_counter()
    if cold:  # the envs built below then stay silent (one notice per process and game)
        announce(game, again=True)
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
    per_role = np.zeros((3, deals, k, 2))  # games, wins, score by deal, agent and role
    void = 0
    decisions = 0
    from .replay import ArenaReplays

    if save_replays_top is not None and not save_replays:
        raise ValueError("save_replays_top needs save_replays (the folder to write them to)")
    if save_replays_top is not None and resume:
        raise ValueError("save_replays_top cannot be combined with resume (the top deals "
                         "of the part already played were not kept)")
    if jobs > 1:
        score, wins, per_role, void, decisions = _run_blocks(
            game, names, options, plan, solo_slot, roles, seed, deal_seeds, jobs, saved,
            ppath, settings, progress, save_seconds, pool)
    else:
        saver = ArenaReplays(save_replays, save_replays_top) if save_replays else None
        done = 0
        if saved is not None:  # checked by read_progress
            done = saved["done"]
            score[:done], wins[:done] = saved["score"], saved["wins"]
            per_role[:, :done] = saved["per_role"]
            void, decisions = saved["void"], saved["decisions"]
            for i, (p, st) in enumerate(zip(players, saved["agent_rng"])):
                if set(st) != set(_rng_states(p)):
                    raise ValueError(
                        f"--resume: {ppath} is not a usable arena progress file: the "
                        f"generators saved for agent {i} ({', '.join(st) or 'none'}) are not "
                        f"those of {names[i]!r} ({', '.join(_rng_states(p)) or 'none'}); "
                        "start again without --resume")
                _set_rng_states(p, st)

        def save() -> None:
            if ppath is None:
                return
            state = {"settings": settings, "done": done, "score": score[:done].tolist(),
                     "wins": wins[:done].tolist(), "per_role": per_role[:, :done].tolist(),
                     "void": void, "decisions": decisions, "agent_rng": _jsonable(rng_at_done)}
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
                per_role[:, d] = (st.games, st.wins, st.score)
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

    res: dict[str, Any] = {
        "game": game, "options": opts, "agents": labels, "deals": int(deals), "seed": int(seed),
        "settings": settings, "lineup_mode": mode, "lineups": [[labels[a] for a in lu] for lu in plan],
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
    if roles is not None:  # per deal: the deals, not the games, are the independent units
        for j, lab in enumerate(labels):
            res["by_role"][lab] = {role: role_stats(*per_role[:, :, j, ri])
                                   for ri, role in enumerate(roles)}
    return res


def main_arena(game: str, agents: str, deals: int, seed: int, options: dict, out: Optional[str],
               lineups: str = "auto", progress: bool = True, stream: Optional[IO[str]] = None,
               resume: bool = False, save_replays: Union[str, os.PathLike, None] = None,
               save_replays_top: Optional[int] = None, jobs: int = 1, pool: Any = None) -> dict:
    """What ``cardenvs arena`` does: check ``out`` is writable, run (saving progress to
    ``out``; ``resume`` continues it), print the table, write JSON and PNG atomically."""
    stream = sys.stdout if stream is None else stream
    res = run_arena(game, agents, deals, seed=seed, options=options, lineups=lineups,
                    progress=progress, out_dir=out or None, resume=resume,
                    save_replays=save_replays, save_replays_top=save_replays_top, jobs=jobs,
                    pool=pool)
    print(format_results(res), file=stream)
    if save_replays:
        print(f"wrote {len(res['replays'])} replays to {save_replays}", file=stream)
    if out:
        j, p = write_results(res, out)
        ppath = progress_path(out, res["settings"])  # this run's only
        with contextlib.suppress(FileNotFoundError):
            ppath.unlink()
        print(f"wrote {j}" + (f" and {p}" if p else " (no matplotlib: no PNG)"), file=stream)
    return res
