"""Random play with no Python in the loop: the raw speed of a game's kernels.

:func:`random_rollouts` plays ``n_games`` deals of any :class:`cardenvs.core.game.Game` inside
one numba function that calls the game's own kernels (``k_reset``, ``k_legal``, ``k_step`` and,
optionally, ``k_encode`` for the seat to move at each decision), choosing uniformly among the
legal actions.  The numba dispatchers of the kernels are passed as arguments, so one loop
serves every game (numba specialises it once per game's kernel set; the first call for a game
in a process compiles, about 1.5 s).

Randomness: one splitmix64 generator (:func:`cardenvs.core.kernels.rng_next`) held in its own
``int64`` slot, seeded with ``seed``; it draws each deal's seed and every action, so a seed
gives the same games, actions and rewards on every run and machine.  No global RNG is used.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from numba import njit

from .kernels import rng_below, rng_next
from .state import CUR, PHASE, P_DONE, REW0

#: safety cap on the decisions of one deal (no game of the suite comes near it)
MAX_DECISIONS = 100_000

# layout of the int64 stats vector filled by the kernel
_S_GAMES, _S_DECISIONS, _S_LEGAL, _S_MAXDEC, _S_VOID, _S_MAXSUM, _S_CHECK, _S_ERROR = range(8)
_S_REW0 = 8  # then one reward total per seat


# Not cached: numba keys a function specialised on dispatcher arguments by the dispatchers'
# identities, so an on-disk cache would miss (and grow) on every process; compiling it takes
# about a second and a half per game and process.
@njit(cache=False)
def _rollouts(k_reset, k_legal, k_step, k_encode, tab, opts, offsets, state, legal_buf, obs,
              n_players, n_games, rng, encode, stats):
    """Play ``n_games`` random deals; fill ``stats`` (see the ``_S_*`` slots).

    ``rng`` is a one-slot ``int64`` array holding the generator.  Stops early and sets
    ``stats[_S_ERROR]`` to 1 (no legal action in an unfinished deal) or 2 (decision cap).
    """
    check = np.int64(0)
    for g in range(n_games):
        k_reset(state, rng_next(rng, 0), tab, opts)
        dec = 0
        while state[PHASE] != P_DONE:
            k = k_legal(state, tab, opts, legal_buf)
            if k <= 0:
                stats[_S_ERROR] = 1
                return
            a = legal_buf[rng_below(rng, 0, k)]
            if encode:
                k_encode(state, state[CUR], tab, opts, offsets, obs)
            k_step(state, a, tab, opts)
            stats[_S_LEGAL] += k
            check = check * np.int64(1000003) + a  # wraps: a fingerprint of every action
            dec += 1
            if dec > MAX_DECISIONS:
                stats[_S_ERROR] = 2
                return
        total = np.int64(0)
        void = True
        for i in range(n_players):
            r = state[REW0 + i]
            stats[_S_REW0 + i] += r
            total += r
            if r != 0:
                void = False
        if void:
            stats[_S_VOID] += 1
        if abs(total) > stats[_S_MAXSUM]:
            stats[_S_MAXSUM] = abs(total)
        stats[_S_GAMES] += 1
        stats[_S_DECISIONS] += dec
        if dec > stats[_S_MAXDEC]:
            stats[_S_MAXDEC] = dec
    stats[_S_CHECK] = check


@njit(cache=False, nogil=True)  # takes a kernel: called through cardenvs.core.specialize.run
def apply_candidates(k_step, tab, opts, worlds, cands, out, paid, seat):
    """``out[w * C + c]`` = world ``w`` (a row of ``worlds``) after candidate action
    ``cands[c]``; ``paid[w * C + c]`` = what that step paid ``seat`` (the mover).  The start
    positions of a search that scores each candidate in each sampled world."""
    K = worlds.shape[0]
    C = cands.shape[0]
    for w in range(K):
        for c in range(C):
            j = w * C + c
            for q in range(worlds.shape[1]):
                out[j, q] = worlds[w, q]
            k_step(out[j], cands[c], tab, opts)
            paid[j] = out[j, REW0 + seat]


def random_rollouts(game, n_games: int, seed: int, encode: bool = False) -> dict[str, Any]:
    """Play ``n_games`` uniformly random deals of ``game`` entirely inside numba.

    Args:
        game: a registry name (default options) or a compiled
            :class:`cardenvs.core.game.Game` (e.g. ``cardenvs.make_game("doudizhu")``).
        n_games: how many deals to play (``>= 0``).
        seed: seed of the splitmix64 generator that draws every deal and every action.
        encode: also run the game's observation encoder for the seat to move before each
            decision (what an agent that looks at its observation costs).

    Returns:
        A dict: ``games``, ``decisions`` (all actions: auction and play), ``seconds``
        (wall time of the numba call; the first call for a game also compiles),
        ``games_per_s``, ``decisions_per_s``, ``decisions_per_game``, ``max_decisions``
        (longest deal), ``mean_legal`` (legal actions per decision), ``void_games`` (deals
        where every seat scored 0), ``reward_totals`` (per-seat sum of final rewards, a list),
        ``max_abs_reward_sum`` (largest ``|sum of a deal's rewards|``: 0 for zero-sum games),
        and ``checksum`` (a fingerprint of every action taken: equal seeds give equal
        checksums).

    Raises:
        TypeError / ValueError for bad arguments; RuntimeError when the game offers no legal
        action in an unfinished deal or a deal exceeds ``MAX_DECISIONS`` decisions.
    """
    if isinstance(game, str):
        from ..api import make_game

        game = make_game(game)
    for name in ("k_reset", "k_legal", "k_step", "k_encode"):
        if not hasattr(game, name):
            raise TypeError(f"game must be a cardenvs Game with kernels; {type(game).__name__} "
                            f"has no {name}")
    if isinstance(n_games, bool) or not isinstance(n_games, (int, np.integer)):
        raise TypeError(f"n_games must be an int, got {type(n_games).__name__}")
    if n_games < 0:
        raise ValueError(f"n_games must be >= 0, got {n_games}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    n = int(game.n_players)
    state = game.new_state()
    legal_buf = np.zeros(game.n_actions + 1, np.int64)
    obs = np.zeros(game.layout.size, np.float32)
    rng = np.array([(int(seed) + 2**63) % 2**64 - 2**63], np.int64)  # seed mod 2**64, as int64
    stats = np.zeros(_S_REW0 + n, np.int64)
    t0 = time.perf_counter()
    _rollouts(game.k_reset, game.k_legal, game.k_step, game.k_encode, game.tab, game.opts,
              game.offsets, state, legal_buf, obs, np.int64(n), np.int64(n_games), rng,
              bool(encode), stats)
    dt = time.perf_counter() - t0
    if stats[_S_ERROR] == 1:
        raise RuntimeError(f"{game.info.name}: no legal action in an unfinished deal "
                           f"(after {int(stats[_S_GAMES])} complete deals)")
    if stats[_S_ERROR] == 2:
        raise RuntimeError(f"{game.info.name}: a deal ran past {MAX_DECISIONS} decisions")
    games = int(stats[_S_GAMES])
    dec = int(stats[_S_DECISIONS])
    return {
        "game": game.info.name,
        "games": games,
        "decisions": dec,
        "seconds": dt,
        "games_per_s": games / dt if dt > 0 else float("inf"),
        "decisions_per_s": dec / dt if dt > 0 else float("inf"),
        "decisions_per_game": dec / games if games else 0.0,
        "max_decisions": int(stats[_S_MAXDEC]),
        "mean_legal": int(stats[_S_LEGAL]) / dec if dec else 0.0,
        "void_games": int(stats[_S_VOID]),
        "reward_totals": [int(x) for x in stats[_S_REW0:_S_REW0 + n]],
        "max_abs_reward_sum": int(stats[_S_MAXSUM]),
        "checksum": int(stats[_S_CHECK]),
        "encode": bool(encode),
    }
