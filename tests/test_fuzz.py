"""Seeded, bounded fuzzing of the public entry points (issue 17, Targets).

For every game: corrupted state vectors through ``set_state`` and ``Game.check_state`` (one to
three entries of a reachable state set to hostile values), bad actions through the AEC env,
``SeatEnv``, ``VectorGame`` and the raw ``Game`` methods, bad custom deals, bad seeds, bad
buffers; damaged replay files through ``cardenvs replay --html`` (issue 51: exit 2 and nothing
written, or a valid replay and its page) and agent specs with hostile keywords and weight
files through ``make_agent`` and ``cardenvs arena``.  Every call must either succeed or raise ``ValueError`` / ``TypeError``; a rejected
call must leave everything as it was; a corrupted state that is accepted must then run
through every kernel (observe every seat, legal actions, every legal step) and stay valid.

The fuzzing runs in a child process so that a crash of the process (a segfault inside numba)
is a failed test rather than a dead test run: ``python tests/test_fuzz.py --scale 10`` runs
it by hand, ten times bigger, and prints the counts.  Run it with ``NUMBA_BOUNDSCHECK=1`` (and
``NUMBA_CACHE_DIR`` set to a scratch folder: everything compiles again) to turn any
out-of-bounds access of a kernel into an ``IndexError``, which the fuzzer reports.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

#: one option set per game, plus the ones whose state differs most (auction, redeals, match)
CASES = [("doudizhu", {}), ("doudizhu", {"auction": "fixed", "all_pass": "redeal"}),
         ("doudizhu4", {}), ("wakeng", {"open_hand": True}), ("niangniang", {}),
         ("niangniang", {"match": True, "target_score": 6, "first_niangniang": "reveal_choice"}),
         ("wulong", {})]
BAD_SEEDS = [-1, 1.5, "1", True, 2**63, -(2**63), np.float64(2.0), [1], np.bool_(False)]
REJECTED = (ValueError, TypeError)


class Failure(Exception):
    """A fuzz finding (a crash-free failure: wrong exception, changed state, invalid step)."""


def _hostile(rng, s, i, n, T, A):
    """A hostile value for entry ``i`` of state ``s``."""
    pool = [-1, -2, 0, 1, n - 1, n, n + 1, T - 1, T, T + 1, A, 8 * A, 2**31, -(2**31), 10**9,
            2**62, -(2**63), 2**63 - 1, int(s[i]) + 1, int(s[i]) - 1,
            int(rng.integers(-10, 11)), int(rng.integers(-T - 10, T + 11))]
    return max(-(2**63), min(2**63 - 1, pool[int(rng.integers(len(pool)))]))


def _snap(env) -> tuple:
    u = env.unwrapped
    return (u.state_vec.copy(), list(u.agents), dict(u._cumulative_rewards), dict(u.rewards),
            getattr(u, "agent_selection", None), list(u.history), u.legal_actions().copy())


def _same(a: tuple, b: tuple) -> bool:
    return (np.array_equal(a[0], b[0]) and a[1:6] == b[1:6] and np.array_equal(a[6], b[6]))


def _expect_rejected(what: str, call, before, after) -> int:
    """Run ``call``; it must raise ValueError/TypeError and leave ``before() == after()``."""
    b = before()
    try:
        call()
    except REJECTED:
        if not after(b):
            raise Failure(f"{what}: rejected, but the state changed")
        return 1
    raise Failure(f"{what}: accepted")


def _exercise(game, s, counts, changed=()) -> None:
    """An accepted state: every kernel runs on it and every legal step keeps it valid."""
    obs = np.empty(game.layout.size, np.float32)
    buf = np.empty(game.n_actions, np.int64)
    for seat in range(game.n_players):
        game.encode(s, seat, obs)
        if not np.isfinite(obs).all():
            raise Failure(f"{game.info.name}: non-finite observation of an accepted state")
    if game.done(s):
        return
    k = game.legal(s, buf)
    for a in buf[:k][:8]:
        t = s.copy()
        game.step(t, int(a))
        counts["steps"] += 1
        try:
            game.check_state(t)
        except ValueError as e:
            counts["invalid_after_step"] += 1
            if len(counts["examples"]) < 10:
                counts["examples"].append(f"{game.info.name}: a legal step of an accepted state "
                                          f"({changed}) gives an invalid one: {e}")


def _reachable(game, rng, n_games: int, per_game: int) -> list:
    out = []
    buf = np.empty(game.n_actions, np.int64)
    for _ in range(n_games):
        s = game.new_state()
        game.reset(s, int(rng.integers(2**62)))
        seen = []
        while True:
            seen.append(s.copy())
            if game.done(s):
                break
            k = game.legal(s, buf)
            game.step(s, int(buf[rng.integers(k)]))
        idx = rng.choice(len(seen), size=min(per_game, len(seen)), replace=False)
        out += [seen[i] for i in idx]
    return out


def _fuzz_states(name, opts, rng, scale, counts) -> None:
    import importlib

    import cardenvs

    env = importlib.import_module("cardenvs." + cardenvs.GAMES[name]).env(illegal="raise", **opts)
    env.reset(seed=int(rng.integers(1000)))
    g = env.unwrapped.game
    n, T, A, S = g.n_players, len(g.table), g.n_actions, g.state_size
    pool = _reachable(g, rng, 4 * scale, 6)
    spec = g.state_spec()
    for s in pool:
        g.check_state(s)  # every reachable state is valid
        counts["reachable"] += 1
    for j in range(150 * scale):
        base = pool[j % len(pool)]
        bad = base.copy()
        changed = []
        for _ in range(int(rng.integers(1, 3))):
            region = rng.random()
            if region < 0.5:
                i = int(rng.integers(0, 48))  # the header
            elif region < 0.9:
                i = int(rng.integers(48, S - 1))  # cards, log, the game's region
            else:
                i = S - 1  # the fingerprint
            if rng.random() < 0.5:
                bad[i] = _hostile(rng, bad, i, n, T, A)
            else:  # a value the field's own range allows: what check_state lets through
                lo, hi = max(int(spec.lo[i]), -(2**20)), min(int(spec.hi[i]), 2**20)
                bad[i] = int(rng.integers(lo, hi + 1))
            changed.append((i, int(base[i]), int(bad[i])))
        counts["states"] += 1
        snap = env.unwrapped.get_state()
        snap["state"] = bad
        before = _snap(env)
        try:
            env.unwrapped.set_state(snap)
        except REJECTED:
            counts["states_rejected"] += 1
            if not _same(before, _snap(env)):
                raise Failure(f"{name}: a rejected set_state changed the env")
            continue
        counts["states_accepted"] += 1
        try:
            _exercise(g, env.unwrapped.state_vec.copy(), counts,
                      [(spec.names[i], u, v) for i, u, v in changed])
        except Exception as e:
            what = ", ".join(f"{spec.names[i]}: {u} -> {v}" for i, u, v in changed)
            raise Failure(f"accepted state ({what}): {type(e).__name__}: {e}") from None
        env.reset(seed=int(rng.integers(1000)))


def _fuzz_actions(name, opts, rng, scale, counts) -> None:
    import importlib

    import cardenvs
    from cardenvs.vector import VectorGame
    from cardenvs.wrappers import SeatEnv

    env = importlib.import_module("cardenvs." + cardenvs.GAMES[name]).env(illegal="raise", **opts)
    g = env.unwrapped.game
    A = g.n_actions
    env.reset(seed=int(rng.integers(1000)))
    hostile = [-1, A, A + 7, 2**63 - 1, -(2**63), 1.5, "3", None, True, np.int64(-1),
               np.array([1]), np.float32(2.0), [0]]
    for _ in range(8 * scale):
        for _ in range(int(rng.integers(0, 6))):  # a random position
            if not env.agents or env.terminations[env.agent_selection]:
                env.reset(seed=int(rng.integers(1000)))
            env.step(int(rng.choice(env.unwrapped.legal_actions())))
        if not env.agents or env.terminations[env.agent_selection]:
            env.reset(seed=int(rng.integers(1000)))
        legal = set(int(a) for a in env.unwrapped.legal_actions())
        illegal = [a for a in rng.integers(0, A, 6).tolist() if a not in legal]
        for a in hostile + illegal:
            counts["actions"] += 1
            _expect_rejected(f"{name} env.step({a!r})", lambda: env.step(a),
                             lambda: _snap(env), lambda b: _same(b, _snap(env)))
            s = env.unwrapped.state_vec.copy()
            ok = isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_))
            if ok:  # the raw method: is_legal is False, step raises, the state stays
                if g.is_legal(s, a):
                    raise Failure(f"{name}: is_legal({a}) of an illegal action")
                counts["actions"] += 1
                _expect_rejected(f"{name} Game.step({a!r})", lambda: g.step(s, a),
                                 s.copy, lambda b: np.array_equal(b, s))
    # the single-agent and batched views (the batched engine compiles per game and process:
    # one game here, the engine's checks are the same for every game)
    se = SeatEnv(name, 0, illegal="raise", **opts)
    se.reset(seed=int(rng.integers(1000)))
    vg = VectorGame(name, 3, **opts) if (name, opts) == CASES[0] else None
    if vg is not None:
        vg.reset(seed=int(rng.integers(1000)))
    for a in hostile:
        counts["actions"] += 1

        def se_before():
            return se.state_vec.copy(), se._over, se._seat

        _expect_rejected(f"{name} SeatEnv.step({a!r})", lambda: se.step(a), se_before,
                         lambda b: np.array_equal(b[0], se.state_vec) and b[1:] == (se._over,
                                                                                   se._seat))
        if vg is None:
            continue
        counts["actions"] += 1
        acts = np.array([vg.legal[i, 0] for i in range(3)], np.int64)

        def vg_before():
            return vg.states.copy(), vg.rewards.copy(), vg.done.copy(), vg.legal.copy()

        def vg_same(b):
            return all(np.array_equal(x, y) for x, y in zip(b, vg_before()))

        if isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_)):
            acts[1] = a
            _expect_rejected(f"{name} VectorGame.step(.., {a!r}, ..)", lambda: vg.step(acts),
                             vg_before, vg_same)
        else:
            _expect_rejected(f"{name} VectorGame.step({a!r})", lambda: vg.step(a), vg_before,
                             vg_same)


def _fuzz_deals(name, opts, rng, scale, counts) -> None:
    import importlib

    import cardenvs
    from cardenvs.core.state import hand_off

    env = importlib.import_module("cardenvs." + cardenvs.GAMES[name]).env(**opts)
    g = env.unwrapped.game
    env.reset(seed=1)
    s = env.unwrapped.state_vec
    n = g.n_players
    hands = [g.deck.format(s[hand_off(i):hand_off(i) + 16]) for i in range(n)]
    chars = g.deck.order + "XSH0 ,[]+"
    for _ in range(10 * scale):
        h = list(hands)
        kind = rng.integers(6)
        i = int(rng.integers(n))
        if kind == 0 and h[i]:  # a card swapped for a random character
            p = int(rng.integers(len(h[i])))
            h[i] = h[i][:p] + chars[int(rng.integers(len(chars)))] + h[i][p + 1:]
            if sorted(h[i]) == sorted(hands[i]):
                continue
        elif kind == 1:  # a card too many
            h[i] = h[i] + g.deck.order[int(rng.integers(g.deck.n_ranks))]
        elif kind == 2 and h[i]:  # a card too few
            h[i] = h[i][1:]
        elif kind == 3:  # a wrong number of hands
            h = h[:int(rng.integers(n))] if rng.random() < 0.5 else h + [h[0]]
        elif kind == 4:  # wrong types
            h = [None, 3, b"33", h][int(rng.integers(4))] if rng.random() < 0.5 else "".join(h)
        else:  # a hand of another seat twice
            h[i] = h[(i + 1) % n]
        counts["deals"] += 1
        before = _snap(env)
        try:
            env.reset(options={"hands": h})
        except REJECTED:
            if not _same(before, _snap(env)):
                raise Failure(f"{name} reset(options={{'hands': {h!r}}}): rejected, but the "
                              f"state changed") from None
            continue
        g.check_state(env.unwrapped.state_vec)  # a deal that is possible after all
        counts["deals_accepted"] += 1
        env.reset(seed=1)


def _fuzz_seeds(name, opts, rng, counts) -> None:
    import importlib

    import cardenvs
    from cardenvs.sb3 import SeatVecEnv
    from cardenvs.vector import VectorGame
    from cardenvs.wrappers import SeatEnv

    env = importlib.import_module("cardenvs." + cardenvs.GAMES[name]).env(**opts)
    env.reset(seed=5)
    se = SeatEnv(name, 0, **opts)
    se.reset(seed=5)
    batched = (name, opts) == CASES[0]  # the batched engine: one game (it compiles per game)
    vg = VectorGame(name, 2, **opts)
    for seed in BAD_SEEDS:
        counts["seeds"] += 5 if batched else 2
        _expect_rejected(f"{name} env.reset(seed={seed!r})", lambda: env.reset(seed=seed),
                         lambda: (_snap(env), env.unwrapped.np_random.bit_generator.state),
                         lambda b: _same(b[0], _snap(env))
                         and b[1] == env.unwrapped.np_random.bit_generator.state)
        _expect_rejected(f"{name} SeatEnv.reset(seed={seed!r})", lambda: se.reset(seed=seed),
                         lambda: (se.state_vec.copy(), se.np_random.bit_generator.state),
                         lambda b: np.array_equal(b[0], se.state_vec)
                         and b[1] == se.np_random.bit_generator.state)
        if not batched:
            continue
        _expect_rejected(f"{name} VectorGame.reset(seed={seed!r})", lambda: vg.reset(seed=seed),
                         lambda: vg.states.copy(), lambda b: np.array_equal(b, vg.states))
        try:
            SeatVecEnv(name, 2, seed=seed, **opts)
        except REJECTED:
            pass
        else:
            raise Failure(f"{name} SeatVecEnv(seed={seed!r}) accepted")
        venv = SeatVecEnv(name, 2, seed=1, **opts)
        try:
            venv.seed(seed)
        except REJECTED:
            pass
        else:
            raise Failure(f"{name} SeatVecEnv.seed({seed!r}) accepted")


def _fuzz_buffers(name, opts, counts) -> None:
    from cardenvs.api import make_game

    g = make_game(name, **opts)
    s = g.new_state()
    g.reset(s, 3)
    buf = np.empty(g.n_actions, np.int64)
    obs = np.empty(g.layout.size, np.float32)
    wide = np.zeros((g.state_size, 2), np.int64)
    wide[:, 0] = s
    ro = s.copy()
    ro.flags.writeable = False
    bad_states = [s.astype(np.float64), s[:-1].copy(), wide[:, 0], s.astype(np.int32),
                  s.tolist(), s.reshape(1, -1)]
    for b in bad_states:
        for call in (lambda: g.legal(b, buf), lambda: g.step(b, int(buf[0])),
                     lambda: g.encode(b, 0, obs), lambda: g.is_legal(b, 0),
                     lambda: g.reset(b, 1), lambda: g.check_state(b, inplace=True)):
            counts["buffers"] += 1
            _expect_rejected(f"{name} a bad state buffer", call, s.copy,
                             lambda c: np.array_equal(c, s))
    g.legal(s, buf)
    for call in (lambda: g.step(ro, int(buf[0])), lambda: g.reset(ro, 1),
                 lambda: g.legal(s, buf[:1]), lambda: g.legal(s, buf.astype(np.int32)),
                 lambda: g.encode(s, 0, obs[:-1]), lambda: g.encode(s, 0, obs.astype(np.float64)),
                 lambda: g.encode(s, g.n_players, obs), lambda: g.encode(s, -1, obs),
                 lambda: g.reset(s, -1), lambda: g.reset(s, 1.5)):
        counts["buffers"] += 1
        _expect_rejected(f"{name} a bad buffer or argument", call, s.copy,
                         lambda c: np.array_equal(c, s))


#: values a damaged or hostile replay file may hold in place of a field
HOSTILE_JSON = [None, True, False, -1, 0, 1, 2**70, -(2**70), 1.5, float("nan"), "", "x",
                "<!--<script>", [], [1, 2, 3], {}, {"bit_generator": "PCG64"}, "\u2028",
                json.loads("[" * 40 + "]" * 40)]


def _a_replay(rng) -> str:
    """The JSON text of a random Wakeng game's replay (hostile player names included)."""
    import cardenvs.wakeng_v0 as wakeng
    from cardenvs import replay as R

    env = wakeng.env()
    env.reset(seed=int(rng.integers(1000)))
    while env.agents:
        _, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        legal = env.unwrapped.legal_actions()
        env.step(int(legal[rng.integers(len(legal))]))
    return R.dumps(env.unwrapped.replay(players=["<!--<script>", "</script>&", "a\u2028b"],
                                        meta={"deal": 1}))


def _mutate(rng, text: str) -> str:
    """One damage: a field removed or replaced, an entry of the deals / actions / result
    edited, the text cut or a byte changed, or the whole nested deeply."""
    kind = int(rng.integers(6))
    if kind == 0:  # cut
        return text[:int(rng.integers(len(text)))]
    if kind == 1:  # a character changed
        i = int(rng.integers(len(text)))
        return text[:i] + chr(int(rng.choice([0, 34, 44, 48, 57, 91, 93, 123, 125, 0x2028,
                                              int(rng.integers(32, 127))]))) + text[i + 1:]
    if kind == 2:  # nested deeply
        d = int(rng.choice([50, 900, 5000, 100_000]))
        return "[" * d + text + "]" * d
    rep = json.loads(text)
    value = HOSTILE_JSON[int(rng.integers(len(HOSTILE_JSON)))]
    if kind == 3:  # a top-level field removed, replaced or added
        key = list(rep)[int(rng.integers(len(rep)))]
        if rng.random() < 0.3:
            rep.pop(key)
        elif rng.random() < 0.8:
            rep[key] = value
        else:
            rep["x" + key] = value
    else:  # a field of a deal, an action or the result
        where = ("deals", "actions", "result")[kind - 3]
        entry = rep[where] if where == "result" else \
            rep[where][int(rng.integers(len(rep[where])))]
        key = list(entry)[int(rng.integers(len(entry)))]
        if rng.random() < 0.3:
            entry.pop(key)
        else:
            entry[key] = value
    return json.dumps(rep, ensure_ascii=False)


def _error_line(stderr: str):
    """The ``cardenvs: error: ...`` line of a refused command's stderr (``None`` when there is
    none, or a traceback); a notice such as the one-off compile may come before it."""
    if "Traceback" in stderr:
        return None
    errors = [ln for ln in stderr.splitlines() if ln.startswith("cardenvs: error: ")]
    return errors[0] if len(errors) == 1 else None


def _fuzz_replays(rng, scale, counts, folder: Path) -> None:
    """``cardenvs replay FILE --html OUT`` on damaged files: exit 0 (the file is a valid
    replay after all: OUT is its page and ``load`` reads it) or exit 2 with one
    ``cardenvs: error: FILE`` line and nothing written; never a traceback."""
    import contextlib
    import io

    from cardenvs import replay as R
    from cardenvs.cli import main

    texts = [_a_replay(rng) for _ in range(2)]
    (folder / "dir.html").mkdir()
    for j in range(60 * scale):
        text = texts[j % len(texts)]
        bad = _mutate(rng, text)
        for _ in range(int(rng.integers(0, 2))):
            try:
                bad = _mutate(rng, bad)
            except (ValueError, TypeError, IndexError, KeyError, AttributeError,
                    RecursionError):
                break  # the first damage broke the JSON or the structure: one is enough
        src = folder / f"r{j}.json"
        src.write_text(bad, encoding="utf-8", errors="surrogatepass")
        out = folder / ("dir.html" if rng.random() < 0.05 else f"r{j}.html")
        before = sorted(p.name for p in folder.iterdir())
        err, std = io.StringIO(), io.StringIO()
        counts["replays"] += 1
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(std):
                rc = main(["replay", str(src), "--html", str(out)])
        except BaseException as e:  # noqa: BLE001 - a traceback is the finding
            raise Failure(f"cardenvs replay on a damaged file: {type(e).__name__}: {e}") from None
        after = sorted(p.name for p in folder.iterdir())
        if rc == 2:
            counts["replays_rejected"] += 1
            if after != before:
                raise Failure(f"a rejected replay wrote {sorted(set(after) - set(before))}")
            line = _error_line(err.getvalue())
            if line is None:
                raise Failure(f"a rejected replay printed {err.getvalue()[-300:]!r}")
            if out.name != "dir.html" and str(src) not in line:
                raise Failure(f"the error does not name the file: {line[:300]!r}")
        elif rc == 0:
            R.load(src)  # accepted: a valid replay, and its page was written
            if not out.is_file():
                raise Failure("an accepted replay wrote no page")
            out.unlink()
        else:
            raise Failure(f"cardenvs replay exited {rc}: {err.getvalue()[:300]!r}")
        src.unlink()


#: keywords and values an agent spec may carry (numbers out of range, non-numbers, files)
SPEC_NAMES = ["search", "trained+search", "rollout", "trained", "rules", "random"]
SPEC_KEYS = ["rollouts", "ms", "z", "margin", "epsilon", "max_candidates", "net_candidates",
             "prior", "bids", "objective", "opponents", "policy", "record", "weights"]
SPEC_VALUES = ["inf", "-inf", "nan", "-1", "0", "1", "0.5", "1e11", "100000000000", "1e400",
               "true", "none", "abc", "", "trained", "rules", "trained:{garbage}",
               "trained:{empty}", "trained:{other}", "{garbage}", "{empty}", "{other}",
               "nobody", "win", "greedy", "16", "0.1", "2", "600000", "50000", "50001"]


def _fuzz_agent_specs(rng, scale, counts, folder: Path) -> None:
    """Agent specs with hostile keywords and weight files: ``make_agent`` either makes an
    agent whose numeric settings are in range or raises ValueError / TypeError (never another
    exception, never a NaN or an unbounded budget accepted); a few rejected ones also go
    through ``cardenvs arena``: exit 2, nothing written in ``--out``."""
    import contextlib
    import io
    import math

    from cardenvs.arena import import_agents
    from cardenvs.cli import main

    agents = import_agents()
    trained = importlib.import_module(agents.__name__ + ".trained")
    search = importlib.import_module(agents.__name__ + ".search")
    files = {"garbage": folder / "garbage.npz", "empty": folder / "empty.npz",
             "other": trained.default_weights_path("doudizhu")}
    files["garbage"].write_bytes(b"PK\x03\x04 not really a zip")
    files["empty"].write_bytes(b"")
    through_cli = 0
    for _ in range(40 * scale):
        name = SPEC_NAMES[int(rng.integers(len(SPEC_NAMES)))]
        items = []
        for _ in range(int(rng.integers(1, 3))):
            key = SPEC_KEYS[int(rng.integers(len(SPEC_KEYS)))]
            value = SPEC_VALUES[int(rng.integers(len(SPEC_VALUES)))].format(**files)
            items.append(f"{key}={value}")
        spec = f"{name}:{','.join(items)}" if rng.random() < 0.9 else \
            f"{name}:{SPEC_VALUES[int(rng.integers(len(SPEC_VALUES)))].format(**files)}"
        counts["agent_specs"] += 1
        try:
            agent = agents.make_agent(spec, "wakeng", seed=0)
        except REJECTED:
            counts["agent_specs_rejected"] += 1
            if through_cli < 3:
                through_cli += 1
                out = folder / "arena"
                err = io.StringIO()
                with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                    rc = main(["arena", "wakeng", "--agents", f"{spec},rules", "--deals", "2",
                               "--out", str(out), "--no-progress"])
                if rc != 2 or _error_line(err.getvalue()) is None:
                    raise Failure(f"cardenvs arena --agents {spec!r}: exit {rc}, "
                                  f"{err.getvalue()[:300]!r}")
                if out.exists() and any(out.iterdir()):
                    raise Failure(f"cardenvs arena --agents {spec!r} wrote {list(out.iterdir())}")
            continue
        except Exception as e:  # noqa: BLE001 - anything else is a finding
            raise Failure(f"make_agent({spec!r}): {type(e).__name__}: {e}") from None
        if isinstance(agent, search.SearchAgent):
            r, ms = agent.rollouts, agent.ms
            if not ((r is None or 1 <= r <= search.MAX_ROLLOUTS)
                    and (ms is None or 0 < ms <= search.MAX_MS)
                    and math.isfinite(agent.z) and not math.isnan(agent.margin)
                    and 0 <= agent.epsilon <= 1):
                raise Failure(f"make_agent({spec!r}) accepted settings out of range: "
                              f"rollouts={r}, ms={ms}, z={agent.z}, margin={agent.margin}, "
                              f"epsilon={agent.epsilon}")


def run(scale: int = 1, seed: int = 0) -> dict:
    """Fuzz every case; returns the counts (``failures`` lists what went wrong)."""
    counts = {k: 0 for k in ("reachable", "states", "states_rejected", "states_accepted",
                             "steps", "invalid_after_step", "actions", "deals", "deals_accepted", "seeds",
                             "buffers", "replays", "replays_rejected", "agent_specs",
                             "agent_specs_rejected")}
    counts["examples"] = []
    counts["failures"] = []
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory(prefix="cardenvs-fuzz-") as d:
        for part in (lambda: _fuzz_replays(rng, scale, counts, Path(d)),
                     lambda: _fuzz_agent_specs(rng, scale, counts, Path(d))):
            try:
                part()
            except Failure as e:
                counts["failures"].append(str(e))
            except Exception as e:  # noqa: BLE001 - anything else is a finding too
                counts["failures"].append(f"{type(e).__name__}: {e}")
    for name, opts in CASES:
        for part in (lambda: _fuzz_states(name, opts, rng, scale, counts),
                     lambda: _fuzz_actions(name, opts, rng, scale, counts),
                     lambda: _fuzz_deals(name, opts, rng, scale, counts),
                     lambda: _fuzz_seeds(name, opts, rng, counts),
                     lambda: _fuzz_buffers(name, opts, counts)):
            try:
                part()
            except Failure as e:
                counts["failures"].append(f"{name} {opts}: {e}")
            except Exception as e:  # noqa: BLE001 - anything else is a finding too
                counts["failures"].append(f"{name} {opts}: {type(e).__name__}: {e}")
    return counts


def test_fuzz_public_entry_points():
    """0 crashes (the child process exits cleanly), 0 failures, 0 state changes after a
    rejected call, every accepted corrupted state runs through every kernel.  (A legal step
    of an accepted state may still give a state that check_state rejects, when the corruption
    broke a relation between fields that it does not check, e.g. Wulong's joker picks against
    the hand: ``invalid_after_step`` counts them; none can crash a kernel.)"""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, str(Path(__file__)), "--scale", "1"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, (f"the fuzzing process died (exit {proc.returncode}):\n"
                                  f"{proc.stderr[-3000:]}")
    counts = json.loads(proc.stdout.strip().splitlines()[-1])
    assert counts["failures"] == [], "\n".join(counts["failures"])
    # the fuzzing did what it says
    assert counts["states_rejected"] > 0 and counts["states_accepted"] > 0
    assert counts["actions"] > 500 and counts["deals"] > 50 and counts["seeds"] > 100
    # damaged replay files and hostile agent specs: some refused, none crashed or wrote
    assert counts["replays"] >= 60 and counts["replays_rejected"] > 30
    assert counts["agent_specs"] >= 40 and counts["agent_specs_rejected"] > 10


if __name__ == "__main__":
    import argparse

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scale", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    sys.path.insert(0, str(ROOT))
    print(json.dumps(run(args.scale, args.seed)))
