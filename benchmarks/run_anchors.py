"""The speed benchmark's anchors (:mod:`benchmarks.run`): RLCard, DouZero and OpenSpiel on
3-player Dou Dizhu, timed on the same positions as cardenvs (:class:`benchmarks.run_ours.Positions`);
:func:`measure_anchors` runs them, the two target ratios interleaved with cardenvs' side.
"""

from __future__ import annotations

from benchmarks.harness import (  # first: pins numba's threads before numba is imported
    Config, Picker, best_rate, best_us_per_call, guarded, log, paired,
)

import time  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from benchmarks.run_ours import Positions, aec_rate, raw_engine  # noqa: E402
from cardenvs.core.state import LANDLORD, hand_off, kitty_off  # noqa: E402


#: DouZero card values of the rank indices of "3456789TJQKA2BR"
DOUZERO_VALUES = [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 17, 20, 30]


def to_douzero(counts) -> list[int]:
    out = []
    for r in range(15):
        out.extend([DOUZERO_VALUES[r]] * int(counts[r]))
    return out


def rlcard_rate(cfg: Config) -> tuple[float, float]:
    """RLCard ``doudizhu`` env steps/s (its state encoding included) and steps per game."""
    import rlcard

    env = rlcard.make("doudizhu", config={"seed": cfg.seed})
    pick = Picker(cfg.seed)
    stats = {"games": 0, "steps": 0}

    def run(seconds: float) -> tuple[float, float]:
        n = 0
        t0 = time.perf_counter()
        t_end = t0 + seconds
        while time.perf_counter() < t_end:
            state, _ = env.reset()
            stats["games"] += 1
            while not env.is_over():
                legal = list(state["legal_actions"].keys())
                state, _ = env.step(legal[pick(len(legal))])
                n += 1
        stats["steps"] += n
        return n, time.perf_counter() - t0

    rate, _ = best_rate(run, cfg)
    return rate, stats["steps"] / max(stats["games"], 1)


def douzero_free(pos: Positions, cfg: Config) -> dict[str, float]:
    from douzero.env.game import GameEnv
    from douzero.env.move_generator import MovesGener

    hands = [to_douzero(c) for c in pos.free_counts]

    def gen_pass() -> int:
        for h in hands:
            MovesGener(h).gen_moves()
        return len(hands)

    mg_us = best_us_per_call(gen_pass, cfg)
    mg_mean = float(np.mean([len(MovesGener(h).gen_moves()) for h in hands]))
    envs = []
    for h in hands:
        e = GameEnv(players={})
        e.acting_player_position = "landlord"
        e.info_sets["landlord"].player_hand_cards = list(h)
        e.card_play_action_seq = []
        envs.append(e)

    full_us, full_mean = _time_douzero_legal(envs, cfg)
    return {"mg_us": mg_us, "mg_mean": mg_mean, "full_us": full_us, "full_mean": full_mean}


def _time_douzero_legal(envs, cfg: Config) -> tuple[float, float]:
    """µs per ``GameEnv.get_legal_card_play_actions()`` call and the mean number of moves."""

    def full_pass() -> int:
        for e in envs:
            e.get_legal_card_play_actions()
        return len(envs)

    us = best_us_per_call(full_pass, cfg)
    return us, float(np.mean([len(e.get_legal_card_play_actions()) for e in envs]))


def douzero_follow(game, pos: Positions, cfg: Config) -> dict[str, float]:
    from douzero.env import move_detector as md
    from douzero.env.game import GameEnv

    envs = []
    skipped = 0
    for c, prev in zip(pos.follow_counts, pos.follow_prev):
        pv = to_douzero(game.tab.counts[prev])
        if md.get_move_type(pv)["type"] == md.TYPE_15_WRONG:
            skipped += 1  # a play of our move set DouZero does not know
            continue
        e = GameEnv(players={})
        e.acting_player_position = "landlord_down"
        e.info_sets["landlord_down"].player_hand_cards = to_douzero(c)
        e.card_play_action_seq = [pv]
        envs.append(e)

    full_us, full_mean = _time_douzero_legal(envs, cfg)
    return {"full_us": full_us, "full_mean": full_mean, "skipped": skipped, "n": len(envs)}


_OS_JOKERS = {"B": 52, "R": 53}


def _os_parse(text: str) -> tuple[int, ...]:
    """Counts per rank index of an OpenSpiel dou_dizhu play string (``"33"``, ``"(BWJ)(CJ)"``,
    ``"333444-89"`` = body-kickers)."""
    order = "3456789TJQKA2BR"
    t = text.replace("(BWJ)", "B").replace("(CJ)", "R").replace("-", "")
    c = [0] * 16
    for ch in t:
        c[order.index(ch)] += 1
    return tuple(c)


def _os_position(pyspiel_game, hands: list, kitty) -> Any:
    """An OpenSpiel state where player 0 has bid 3, taken ``kitty`` and must lead.

    ``hands[i]`` are OpenSpiel player i's 17 dealt cards (counts per rank index).  Observed
    OpenSpiel conventions: chance action ``u < 51`` picks the face-up card (first bidder
    ``u % 3``), deal action ``51 + card`` gives card (rank ``card % 13`` for ``card < 52``,
    52 = black joker, 53 = red joker) to player ``k % 3`` for the k-th card dealt; the 3 cards
    never dealt are the kitty; action 3 is "Bid 3".
    """
    suit = [0] * 15
    ids = []
    for c in list(hands) + [kitty]:
        lst = []
        for r in range(15):
            for _ in range(int(c[r])):
                if r >= 13:
                    lst.append(_OS_JOKERS["B" if r == 13 else "R"])
                else:
                    lst.append(r + 13 * suit[r])
                    suit[r] += 1
        ids.append(lst)
    s = pyspiel_game.new_initial_state()
    s.apply_action(0)
    for k in range(51):
        s.apply_action(51 + ids[k % 3][k // 3])
    s.apply_action(3)  # bid 3: player 0 is landlord and takes the kitty
    return s


def openspiel_positions(game, pos: Positions):
    """OpenSpiel states of the same free leads (landlord = player 0) and follows (player 1)."""
    import pyspiel

    g = pyspiel.load_game("dou_dizhu")
    free, follow = [], []
    follow_of = {src: i for i, src in enumerate(pos.follow_src)}
    skipped = 0
    for i, st in enumerate(pos.free_states):
        ll = int(st[LANDLORD])
        if ll < 0:
            continue
        kitty = st[kitty_off(3):kitty_off(3) + 16]
        seats = [ll, (ll + 1) % 3, (ll + 2) % 3]
        hands = [st[hand_off(q):hand_off(q) + 16].copy() for q in seats]
        hands[0] = hands[0] - kitty
        s = _os_position(g, hands, kitty)
        if i == 0:  # check the mapping once
            want = "".join("3456789TJQKA2BR"[r] * int(pos.free_counts[0][r]) for r in range(15))
            got = s.observation_string(0).split("\n")[0].replace("My hand ", "")
            got = got.replace("(BWJ)", "B").replace("(CJ)", "R")
            if got != want:
                raise RuntimeError(f"OpenSpiel position mapping is off: {got} != {want}")
        free.append(s)
        if i in follow_of:
            j = follow_of[i]
            want = tuple(int(x) for x in game.tab.counts[pos.follow_prev[j]])
            match = [a for a in s.legal_actions() if _os_parse(s.action_to_string(a)) == want]
            if not match:
                skipped += 1
                continue
            f = s.clone()
            f.apply_action(match[0])
            follow.append(f)
    return free, follow, skipped


def openspiel_legal_us(states: list, cfg: Config) -> tuple[float, float]:
    def one_pass() -> int:
        for s in states:
            s.legal_actions()
        return len(states)

    return best_us_per_call(one_pass, cfg), float(np.mean([len(s.legal_actions()) for s in states]))


def openspiel_play(observe: bool, cfg: Config) -> dict[str, float]:
    """OpenSpiel dou_dizhu random play from Python: decisions/s counting only the decision steps
    (``legal_actions`` + ``apply_action`` [+ ``observation_tensor``]), and games/s with the deal
    (52 chance steps through ``chance_outcomes``) included."""
    import pyspiel

    g = pyspiel.load_game("dou_dizhu")
    pick = Picker(cfg.seed)
    best = {"decisions_per_s": 0.0, "games_per_s": 0.0, "decisions_per_game": 0.0}

    for _ in range(cfg.repeats):
        n = games = 0
        t_chance = 0.0
        t0 = time.perf_counter()
        t_end = t0 + cfg.budget / cfg.repeats
        while time.perf_counter() < t_end:
            s = g.new_initial_state()
            games += 1
            while not s.is_terminal():
                if s.is_chance_node():
                    c0 = time.perf_counter()
                    while s.is_chance_node():
                        outs = s.chance_outcomes()
                        s.apply_action(outs[pick(len(outs))][0])
                    t_chance += time.perf_counter() - c0
                    continue
                if observe:
                    s.observation_tensor(s.current_player())
                la = s.legal_actions()
                s.apply_action(la[pick(len(la))])
                n += 1
        dt = time.perf_counter() - t0
        dps = n / max(dt - t_chance, 1e-9)
        if dps > best["decisions_per_s"]:
            best = {"decisions_per_s": dps, "games_per_s": games / dt,
                    "decisions_per_game": n / max(games, 1)}
    return best


def openspiel_cpp(cfg: Config) -> dict[str, float]:
    """OpenSpiel random play with no Python in the loop: ``pyspiel.evaluate_bots`` with three
    ``make_uniform_random_bot`` bots (the deal's chance steps included, in C++)."""
    import pyspiel

    g = pyspiel.load_game("dou_dizhu")
    bots = [pyspiel.make_uniform_random_bot(p, cfg.seed + p) for p in range(3)]
    # decisions per game, from an untimed sample (history minus the chance steps)
    dec = []
    for i in range(200):
        s = g.new_initial_state()
        pyspiel.evaluate_bots(s, bots, cfg.seed + i)
        n_chance = sum(1 for h in s.full_history() if h.player == -1)  # the chance player
        dec.append(len(s.history()) - n_chance)
    per_game = float(np.mean(dec))
    seed = [cfg.seed]

    def run(seconds: float) -> tuple[float, float]:
        games = 0
        t0 = time.perf_counter()
        t_end = t0 + seconds
        while time.perf_counter() < t_end:
            for _ in range(50):
                seed[0] += 1
                pyspiel.evaluate_bots(g.new_initial_state(), bots, seed[0])
            games += 50
        return games, time.perf_counter() - t0

    gps, _ = best_rate(run, cfg)
    return {"games_per_s": gps, "decisions_per_s": gps * per_game, "decisions_per_game": per_game}


def measure_anchors(m: dict[str, Any], cfg: Config, anchors: dict[str, bool]) -> dict[str, Any]:
    """RLCard, DouZero and OpenSpiel on 3-player Dou Dizhu (the same positions as ours)."""
    game, pos = m["game"], m["pos"]
    a: dict[str, Any] = {}
    if anchors["douzero"]:
        log("  DouZero move generation")
        a["dz_free"] = guarded("douzero free", lambda: douzero_free(pos, cfg))
        a["dz_follow"] = guarded("douzero follow", lambda: douzero_follow(game, pos, cfg))
    if anchors["openspiel"]:
        log("  OpenSpiel legal actions on the same positions")
        osp = guarded("openspiel positions", lambda: openspiel_positions(game, pos))
        if osp:
            a["os_free"] = guarded("openspiel free", lambda: openspiel_legal_us(osp[0], cfg))
            if osp[1]:
                a["os_follow"] = guarded("openspiel follow", lambda: openspiel_legal_us(osp[1], cfg))
            a["os_skipped"] = osp[2]
        log("  OpenSpiel random play")
        a["ose"] = guarded("openspiel play + obs", lambda: openspiel_play(True, cfg))
        a["osc"] = guarded("openspiel evaluate_bots", lambda: openspiel_cpp(cfg))
        log("  raw engine and OpenSpiel's Python loop, interleaved")
        m["raw"], a["osr"] = paired([lambda c: raw_engine(game, False, c),
                                     lambda c: openspiel_play(False, c)],
                                    lambda r: r["decisions_per_s"], cfg)
    if anchors["rlcard"]:
        log("  AEC env and RLCard env, interleaved")
        m["aec"], m["aec_no"], a["rl"] = paired([lambda c: aec_rate(m["module"], True, c),
                                                 lambda c: aec_rate(m["module"], False, c),
                                                 rlcard_rate], lambda r: r[0], cfg)
    return a

