"""The speed benchmark's measurements of cardenvs itself (:mod:`benchmarks.run`): the positions
every move generator is timed on (free leads and follows of random deals), legal-move
generation in a numba loop and from Python, the free-lead kernel profile, the raw engine and
the AEC env; :func:`measure_ours` runs them all for one game.
"""

from __future__ import annotations

from benchmarks.harness import (  # first: pins numba's threads before numba is imported
    Config, Picker, best_rate, best_us_per_call, guarded, log,
)

import importlib  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from typing import Any, Callable, Optional  # noqa: E402

import numpy as np  # noqa: E402
from numba import njit  # noqa: E402

import cardenvs  # noqa: E402
from cardenvs.core.kernels import gen_legal, planes  # noqa: E402
from cardenvs.core.rollout import random_rollouts  # noqa: E402
from cardenvs.registry import REGISTRY  # noqa: E402
from cardenvs.core.state import (  # noqa: E402
    CUR, LAST_ROW, LAST_SEAT, P_DONE, P_PLAY, PHASE, hand_off,
)


# ---------------------------------------------------------------------------------------------
# positions: free leads (the leader's hand right after the auction / kitty) and follows
# ---------------------------------------------------------------------------------------------


@dataclass
class Positions:
    free_states: list  # state vectors at a free lead
    free_counts: np.ndarray  # (N, 16) hands of the leader
    follow_states: list
    follow_counts: np.ndarray  # (M, 16) hands of the follower
    follow_prev: np.ndarray  # (M,) row to beat
    follow_src: list  # index of the free lead each follow comes from


def collect_positions(game, n: int, seed: int) -> Positions:
    """Random deals played at random until the play phase starts (a free lead), then one random
    lead (and, in the wild-joker games, its random joker picks) and the next seat's position (a
    follow of a random legal play)."""
    pick = Picker(seed)
    rng = np.random.default_rng(seed + 1)
    s = game.new_state()
    buf = np.zeros(game.n_actions + 1, np.int64)
    free_states, free_counts, follow_states, follow_counts, follow_prev = [], [], [], [], []
    follow_src: list[int] = []
    tries = 0
    while len(free_states) < n:
        tries += 1
        if tries > 20 * n + 100:
            raise RuntimeError(f"{game.info.name}: could not reach {n} free leads at random")
        game.reset(s, int(rng.integers(0, 2**62)))
        steps = 0
        while not (s[PHASE] == P_PLAY and s[LAST_ROW] < 0) and s[PHASE] != P_DONE and steps < 10000:
            k = game.legal(s, buf)
            game.step(s, int(buf[pick(k)]))
            steps += 1
        if s[PHASE] != P_PLAY or s[LAST_ROW] >= 0:
            continue
        seat = int(s[CUR])
        o = hand_off(seat)
        free_states.append(s.copy())
        free_counts.append(s[o:o + 16].copy())
        k = game.legal(s, buf)
        plays = [int(a) for a in buf[:k] if a < game.pass_id]
        if not plays:
            continue
        game.step(s, plays[pick(len(plays))])
        steps = 0
        while s[PHASE] not in (P_PLAY, P_DONE) and steps < 100:  # the lead's secondary
            k = game.legal(s, buf)                               # decisions (joker picks)
            game.step(s, int(buf[pick(k)]))
            steps += 1
        if s[PHASE] == P_PLAY and s[LAST_ROW] >= 0 and s[CUR] != s[LAST_SEAT]:
            f = int(s[CUR])
            o = hand_off(f)
            follow_states.append(s.copy())
            follow_counts.append(s[o:o + 16].copy())
            follow_prev.append(int(s[LAST_ROW]))
            follow_src.append(len(free_states) - 1)
    return Positions(free_states, np.array(free_counts, np.int64), follow_states,
                     np.array(follow_counts, np.int64).reshape(-1, 16),
                     np.array(follow_prev, np.int64), follow_src)


# ---------------------------------------------------------------------------------------------
# cardenvs measurements
# ---------------------------------------------------------------------------------------------

#: the games' own move generators, ``fn(counts, prev, tab, opts, out) -> k`` (the registry's
#: ``move_generator``): the plain :func:`gen_legal` on the tables of the wild-joker games'
#: *effective* plays would ignore the jokers, on a must-beat game's the rules it adds
WILD_GENERATORS = {name: tuple(s.move_generator.split(":")) for name, s in REGISTRY.items()
                   if s.move_generator}


@dataclass
class MoveGen:
    """How the benchmark generates a game's legal play rows for a hand and a play to beat."""

    name: str  # the function, for the notes
    fn: Optional[Callable]  # numba dispatcher; None: no standalone generator (Game.legal only)
    wild: bool  # fn(counts, prev, tab, opts, out) (wild) or gen_legal(counts, prev, tab, out)

    def call(self, game, counts, prev, out) -> int:
        if self.wild:
            return self.fn(counts, prev, game.tab, game.opts, out)
        return self.fn(counts, prev, game.tab, out)


def move_generator(name: str, game) -> MoveGen:
    """The move generator of game ``name``: :func:`gen_legal` for the plain games, the game's
    own generator (:data:`WILD_GENERATORS`) for the wild-joker and must-beat games."""
    if name in WILD_GENERATORS:
        mod, fn = WILD_GENERATORS[name]
        f = getattr(importlib.import_module(mod), fn, None)
        if f is None:
            log(f"!! {name}: {mod}.{fn} not found; move-generator rows skipped")
        what = "jokers wild" if getattr(getattr(game, "rules", None), "wilds", 0) else "its rules"
        return MoveGen(f"`{fn}(counts, prev, tab, opts, out)` ({what})", f, True)
    if getattr(getattr(game, "rules", None), "wilds", 0):
        log(f"!! {name} has wild jokers but no entry in WILD_GENERATORS; generator rows skipped")
        return MoveGen("(no standalone generator)", None, True)
    return MoveGen("`gen_legal(counts, prev, tab, out)`", gen_legal, False)



@njit(cache=True)
def _gen_loop(counts, prevs, tab, out, reps):
    """Kernel time: ``gen_legal`` over every position, ``reps`` times (no Python in the loop)."""
    total = 0
    for _ in range(reps):
        for i in range(counts.shape[0]):
            total += gen_legal(counts[i], prevs[i], tab, out)
    return total


@njit(cache=True)
def _planes_loop(counts, reps):
    """Time of the rank-plane conversion alone (the first step of ``gen_legal``)."""
    acc = np.int64(0)
    for _ in range(reps):
        for i in range(counts.shape[0]):
            lo, hi = planes(counts[i])
            acc ^= lo ^ hi
    return acc


# not cached: specialised on the generator's dispatcher (see cardenvs.core.rollout)
@njit(cache=False)
def _gen_loop_wild(gen, counts, prevs, tab, opts, out, reps):
    """Kernel time of a wild-joker game's own generator (``gen(counts, prev, tab, opts, out)``)."""
    total = 0
    for _ in range(reps):
        for i in range(counts.shape[0]):
            total += gen(counts[i], prevs[i], tab, opts, out)
    return total


def kernel_us(counts: np.ndarray, prevs: np.ndarray, game, mg: MoveGen, out,
              cfg: Config) -> tuple[float, float]:
    """(best µs per move-generator call inside numba, mean legal rows per call)."""
    tab = game.tab
    if mg.wild:
        def loop(c, p, reps):
            return _gen_loop_wild(mg.fn, c, p, tab, game.opts, out, reps)
    else:
        def loop(c, p, reps):
            return _gen_loop(c, p, tab, out, reps)
    loop(counts[:1], prevs[:1], 1)  # compile / load
    n = counts.shape[0]
    t0 = time.perf_counter()
    total = loop(counts, prevs, 1)
    one = max(time.perf_counter() - t0, 1e-6)
    reps = max(1, int(cfg.budget / cfg.repeats / one))
    best = float("inf")
    for _ in range(cfg.repeats):
        t0 = time.perf_counter()
        loop(counts, prevs, reps)
        best = min(best, (time.perf_counter() - t0) / (reps * n) * 1e6)
    return best, total / n


def planes_us(counts: np.ndarray, cfg: Config) -> float:
    _planes_loop(counts[:1], 1)
    reps = max(1, int(2e6 / counts.shape[0]))
    best = float("inf")
    for _ in range(cfg.repeats):
        t0 = time.perf_counter()
        _planes_loop(counts, reps)
        best = min(best, (time.perf_counter() - t0) / (reps * counts.shape[0]) * 1e6)
    return best


def python_gen_us(counts: np.ndarray, prevs: np.ndarray, game, mg: MoveGen, out,
                  cfg: Config) -> float:
    """µs per move-generator call from Python (numba dispatch included)."""
    rows = [counts[i] for i in range(counts.shape[0])]
    pv = [int(p) for p in prevs]
    tab, opts, fn = game.tab, game.opts, mg.fn
    if mg.wild:
        fn(rows[0], pv[0], tab, opts, out)

        def one_pass() -> int:
            for c, p in zip(rows, pv):
                fn(c, p, tab, opts, out)
            return len(rows)
    else:
        fn(rows[0], pv[0], tab, out)

        def one_pass() -> int:
            for c, p in zip(rows, pv):
                fn(c, p, tab, out)
            return len(rows)

    return best_us_per_call(one_pass, cfg)


def python_game_legal_us(game, states: list, cfg: Config) -> tuple[float, float]:
    """µs per ``Game.legal(state, out)`` from Python (the env's legal-action call; includes
    pass on follows) and the mean number of legal actions."""
    out = np.zeros(game.n_actions + 1, np.int64)
    mean = float(np.mean([game.legal(s, out) for s in states]))

    def one_pass() -> int:
        for s in states:
            game.legal(s, out)
        return len(states)

    return best_us_per_call(one_pass, cfg), mean


def free_lead_profile(game, counts: np.ndarray) -> dict[str, float]:
    """Where a free lead's time goes in the segment scan of :func:`gen_legal`
    (:func:`cardenvs.core.kernels.scan_ranges`), counted by a Python replica of it: segments
    visited (one run mask each; irregular ones test each body), segments jumped over
    (``SEG_SKIP``: no body of a shorter chain fits), groups whose body fits, kicker rows tested
    (a group with a kicker or row-bit index tests none: its rows are read from the index) and
    rows emitted.  The replica's rows are checked against ``gen_legal`` on every hand."""
    from cardenvs.core.kernels import (
        SEG_G0, SEG_G1, SEG_LEN, SEG_LONE, SEG_M, SEG_S0, SEG_SKIP,
    )
    from cardenvs.core.table import planes_of

    tab = game.tab
    seg = tab.seg
    nseg = seg.shape[0]
    n_groups = len(tab.g_lo)
    sizes = tab.g_end - tab.g_start
    row_lo, row_hi = tab.lo, tab.hi
    out = np.zeros(len(game.table) + 1, np.int64)
    indexed = (tab.g_kick >= 0) | (tab.g_bits >= 0)
    visited, irregular, fit_g, tested, lone, emitted, from_index = [], [], [], [], [], [], []
    for c in counts:
        lo, hi = planes_of(c)
        lo, hi = int(np.int64(lo)), int(np.int64(hi))
        vis = irr = fit = rt = ln = em = fi = 0

        def rows_of(g: int, is_lone: bool) -> tuple[int, int, int, int]:
            if is_lone:  # one row equal to its body: emitted without a test
                return 0, 1, 1, 0
            a, b = int(tab.g_start[g]), int(tab.g_end[g])
            ok = int(((((row_lo[a:b] & ~np.int64(lo)) | (row_hi[a:b] & ~np.int64(hi))) == 0)).sum())
            if indexed[g]:  # read from the group's index, none tested
                return 0, 0, ok, ok
            return b - a, 0, ok, 0

        i = int(tab.g_seg[0]) if n_groups else nseg
        while i < nseg and seg[i, SEG_G0] < n_groups:
            vis += 1
            g0, g1 = int(seg[i, SEG_G0]), int(min(seg[i, SEG_G1], n_groups))
            is_lone = seg[i, SEG_LONE] != 0
            m = int(seg[i, SEG_M])
            if m == 0:  # irregular: each body tested
                fitting = []
                for g in range(g0, g1):
                    irr += 1
                    if ((int(tab.g_lo[g]) & ~lo) | (int(tab.g_hi[g]) & ~hi)) == 0:
                        fitting.append(g)
            else:
                plane = (lo >> (16 * (m - 1))) & 0xFFFF if m <= 4 else (hi >> (16 * (m - 5))) & 0xFFFF
                run = plane
                for k in range(1, int(seg[i, SEG_LEN])):
                    run &= plane >> k
                full = (run >> int(seg[i, SEG_S0])) & ((1 << (int(seg[i, SEG_G1]) - g0)) - 1)
                if full == 0:
                    i = int(seg[i, SEG_SKIP])
                    continue
                fitting = [g0 + j for j in range(g1 - g0) if (full >> j) & 1]
            for g in fitting:
                fit += 1
                a, b_, e, x = rows_of(g, is_lone)
                rt += a
                ln += b_
                em += e
                fi += x
            i += 1
        k = gen_legal(c, -1, tab, out)
        if k != em:
            raise RuntimeError(f"profile replica emits {em} rows, gen_legal {k}")
        visited.append(vis)
        irregular.append(irr)
        fit_g.append(fit)
        tested.append(rt)
        lone.append(ln)
        emitted.append(em)
        from_index.append(fi)
    rt = np.array(tested)
    return {
        "groups": float(n_groups),
        "rows": float(len(tab.lo)),
        "largest_group": float(sizes.max()),
        "segments": float(nseg),
        "regular_segments": float((seg[:, SEG_M] > 0).sum()),
        "visited": float(np.mean(visited)),
        "irregular_bodies": float(np.mean(irregular)),
        "fit_groups": float(np.mean(fit_g)),
        "rows_tested": float(rt.mean()),
        "rows_tested_p50": float(np.percentile(rt, 50)),
        "rows_tested_p90": float(np.percentile(rt, 90)),
        "rows_tested_p99": float(np.percentile(rt, 99)),
        "lone_rows": float(np.mean(lone)),
        "rows_emitted": float(np.mean(emitted)),
        "rows_from_index": float(np.mean(from_index)),
    }


def raw_engine(game, encode: bool, cfg: Config) -> dict[str, float]:
    """Best games/s and decisions/s of :func:`random_rollouts` over the repeats."""
    random_rollouts(game, 2, cfg.seed, encode=encode)  # compile
    cal = random_rollouts(game, 200, cfg.seed, encode=encode)
    per_game = max(cal["seconds"] / 200, 1e-7)
    n_games = max(50, int(cfg.budget / cfg.repeats / per_game))
    best = None
    for i in range(cfg.repeats):
        r = random_rollouts(game, n_games, cfg.seed + i, encode=encode)
        if best is None or r["decisions_per_s"] > best["decisions_per_s"]:
            best = r
    return best


def aec_rate(module: str, observe: bool, cfg: Config) -> tuple[float, float]:
    """Best decisions/s of the AEC env with a masked random policy (``env.legal_actions()``),
    and decisions per game."""
    mod = importlib.import_module(f"cardenvs.{module}")
    env = mod.env()
    env.reset(seed=cfg.seed)
    pick = Picker(cfg.seed)
    stats = {"games": 0, "decisions": 0}

    def run(seconds: float) -> tuple[float, float]:
        n = 0
        t0 = time.perf_counter()
        t_end = t0 + seconds
        while time.perf_counter() < t_end:
            env.reset()
            stats["games"] += 1
            for agent in env.agent_iter():
                _, _, term, trunc, info = env.last(observe)
                if term or trunc:
                    action = None
                else:
                    legal = env.legal_actions()
                    action = legal[pick(len(legal))]
                    n += 1
                env.step(action)
        stats["decisions"] += n
        return n, time.perf_counter() - t0

    rate, _ = best_rate(run, cfg)
    return rate, stats["decisions"] / max(stats["games"], 1)


def measure_ours(name: str, cfg: Config, defer: tuple[str, ...] = ()) -> dict[str, Any]:
    """Every cardenvs measurement of one game (rows 1-3), except those in ``defer`` (``"raw"``,
    ``"aec"``), which :func:`benchmarks.run_anchors.measure_anchors` measures interleaved with
    their anchor."""
    log(f"== {name}")
    game = cardenvs.make_game(name)
    pos = collect_positions(game, cfg.n_positions, cfg.seed)
    out = np.zeros(game.n_actions + 1, np.int64)
    free_prev = np.full(len(pos.free_counts), -1, np.int64)
    m: dict[str, Any] = {"game": game, "pos": pos, "module": cardenvs.GAMES[name]}
    m["h_free"] = float(pos.free_counts.sum(1).mean())
    m["h_follow"] = float(pos.follow_counts.sum(1).mean()) if len(pos.follow_counts) else 0.0
    mg = move_generator(name, game)
    m["mg"] = mg
    log("  legal-move generation (kernel loop / from Python)")
    if mg.fn is not None:
        m["kf"] = guarded("free kernel", lambda: kernel_us(pos.free_counts, free_prev, game, mg,
                                                           out, cfg))
        m["pf"] = guarded("free python", lambda: python_gen_us(pos.free_counts, free_prev, game,
                                                               mg, out, cfg))
    m["gf"] = guarded("free Game.legal", lambda: python_game_legal_us(game, pos.free_states, cfg))
    if len(pos.follow_counts):
        fc, fp = pos.follow_counts, pos.follow_prev
        if mg.fn is not None:
            m["kw"] = guarded("follow kernel", lambda: kernel_us(fc, fp, game, mg, out, cfg))
            m["pw"] = guarded("follow python", lambda: python_gen_us(fc, fp, game, mg, out, cfg))
        m["gw"] = guarded("follow Game.legal", lambda: python_game_legal_us(game, pos.follow_states, cfg))
    if name == "doudizhu4" and mg.fn is not None:
        # 25-card hands (the seats other than the leader, right after the auction), the hand
        # size of Lanxi Wulong: the reference of its move-generation target
        h25 = np.array([st[hand_off(q):hand_off(q) + 16] for st in pos.free_states
                        for q in range(game.n_players) if q != int(st[CUR])], np.int64)
        h25 = h25[h25.sum(1) == 25]
        m["h25_n"] = len(h25)
        m["kf25"] = guarded("free kernel 25", lambda: kernel_us(
            h25, np.full(len(h25), -1, np.int64), game, mg, out, cfg))
    log("  raw engine (numba random rollouts)")
    if "raw" not in defer:
        m["raw"] = guarded("raw engine", lambda: raw_engine(game, False, cfg))
    m["raw_e"] = guarded("raw engine + encode", lambda: raw_engine(game, True, cfg))
    log("  AEC env")
    if "aec" not in defer:
        m["aec"] = guarded("AEC", lambda: aec_rate(m["module"], True, cfg))
        m["aec_no"] = guarded("AEC no observe", lambda: aec_rate(m["module"], False, cfg))
    if name == "doudizhu" and m.get("kf"):
        m["profile_n"] = min(500, len(pos.free_counts))
        m["profile"] = guarded("profile", lambda: free_lead_profile(game, pos.free_counts[:500]))
        m["planes_us"] = guarded("planes", lambda: planes_us(pos.free_counts, cfg))
    return m

