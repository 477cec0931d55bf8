"""Calibrating and checking the Wakeng ``rules`` agent's bidding.

Usage (from the repository root)::

    python -m benchmarks.wakeng_bidding collect --deals 1500 --out runs/wakeng_bids.npz
    python -m benchmarks.wakeng_bidding fit runs/wakeng_bids.npz
    python -m benchmarks.wakeng_bidding arena --deals 1000      # new rules vs the old bidding
    python -m benchmarks.wakeng_bidding arena --agents trained,old_rules --deals 500

* ``collect``: for each deal and each seat ``d``, the auction is forced so that ``d`` digs at
  bid 1 (seats before it pass, it bids 1, the rest pass) and the deal is played out by the
  ``rules`` agent at every seat.  Stored per deal: each seat's dealt-hand strength
  (:meth:`agents.rules.RulesAgent.strength` of its 16 cards), the first bidder, and the score
  vector of each forced digger.  A Wakeng score is proportional to the bid, and the rules
  agent's play does not depend on the bid, so these three play-outs give the deal's outcome
  under *any* auction.
* ``fit``: the digger's win rate and mean score by strength, and the bidding thresholds
  (strength at which to bid 1, 2, 3) that score best in the auctions replayed from the data:
  one seat bidding by the candidate thresholds, the others by the old quantile rule, and the
  others by the candidate itself (the duplicate-arena score, averaged over the seat).
* ``arena``: :func:`cardenvs.arena.run_arena` of ``rules`` against ``old_rules`` (this
  module's private copy of the bidding it replaces, registered for the run only).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from cardenvs.agents.rules import RulesAgent, WakengPart


class OldWakengPart(WakengPart):
    """The bidding the Wakeng part had before its calibration: bid 1/2/3 at the 55/75/90%
    quantiles of random-hand strength (kept here as a baseline only)."""

    def bid_levels(self, agent):
        return agent.bid_thresholds(self.dealt_size())


class OldRulesAgent(RulesAgent):
    """``rules`` with :class:`OldWakengPart` (Wakeng only; a benchmark baseline)."""

    name = "old_rules"

    def __init__(self, game, seed=None):
        super().__init__(game, seed)
        if self.game.info.name != "wakeng":
            raise ValueError("old_rules is a Wakeng baseline")
        self.part = OldWakengPart(self.game, self.reader)


def _act(agent, game, s, obs, mask):
    k = game.legal(s, _act.buf)
    legal = _act.buf[:k].copy()
    if k == 1:
        return int(legal[0])
    game.encode(s, game.current(s), obs)
    mask[:] = 0
    mask[legal] = 1
    return int(agent.act({"observation": obs, "action_mask": mask}, legal))


def collect(deals: int, seed: int = 0, farmers: str = "rules") -> dict:
    """Forced-digger play-outs of ``deals`` deals (see the module docstring); the digger is
    the ``rules`` agent, the farmers the agent named ``farmers``."""
    from tqdm import tqdm

    from cardenvs.api import make_game

    game = make_game("wakeng")
    from cardenvs.agents import make_agent

    agent = RulesAgent(game)
    farmer = agent if farmers == "rules" else make_agent(farmers, game, seed=seed)
    n = game.n_players
    _act.buf = np.empty(game.n_actions + 1, np.int64)
    obs = np.zeros(game.layout.size, np.float32)
    mask = np.zeros(game.n_actions, np.int8)
    T = game.pass_id
    strength = np.zeros((deals, n))
    first = np.zeros(deals, np.int64)
    scores = np.zeros((deals, n, n))  # [deal, digger, seat]
    s = game.new_state()
    r = agent.reader
    for i in tqdm(range(deals), desc="wakeng deals", mininterval=5):
        for d in range(n):
            game.reset(s, seed + i)
            if d == 0:
                for q in range(n):
                    game.encode(s, q, obs)
                    strength[i, q] = agent.strength(r.cards(obs, "hand"))
                first[i] = game.current(s)
            total = np.zeros(n)
            while not game.done(s):
                c = game.current(s)
                k = game.legal(s, _act.buf)
                legal = _act.buf[:k]
                if T + 3 in legal:  # the auction (bid 3 is legal until it ends)
                    a = T + 1 if c == d else T
                else:
                    a = _act(agent if c == d else farmer, game, s, obs, mask)
                game.step(s, a)
                total += game.rewards(s)
            scores[i, d] = total
    return {"strength": strength, "first": first, "scores": scores}


def auction(levels: np.ndarray, first: int, n: int = 3) -> tuple[int, int]:
    """``(digger, bid)`` of one Wakeng auction where seat ``q`` wants to bid ``levels[q]``
    (0 = pass): each seat speaks once from ``first``, bidding its level when it is above the
    highest bid so far; a 3 ends the auction; all passing leaves ``first`` digging at 1."""
    high, who = 0, first
    for j in range(n):
        q = (first + j) % n
        if levels[q] > high:
            high, who = int(levels[q]), q
            if high == 3:
                break
    return who, max(high, 1)


def levels_of(strength: np.ndarray, th) -> np.ndarray:
    return np.searchsorted(np.asarray(th), strength, side="right")


def auctions(levels: np.ndarray, first: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`auction` of many deals at once: ``levels [D, n]``, ``first [D]``."""
    D, n = levels.shape
    rows = np.arange(D)
    high = np.zeros(D, np.int64)
    who = first.copy()
    for j in range(n):
        q = (first + j) % n
        lv = levels[rows, q]
        up = (lv > high) & (high < 3)
        high = np.where(up, lv, high)
        who = np.where(up, q, who)
    return who, np.maximum(high, 1)


def replay_score(data: dict, th_new, th_old) -> tuple[float, float]:
    """Mean score (and its 95% half-width) per deal of one seat bidding by ``th_new`` with
    the others bidding by ``th_old``, averaged over the seat, replayed from the data."""
    st, first, sc = data["strength"], data["first"], data["scores"]
    D, n = st.shape
    ln, lo = levels_of(st, th_new), levels_of(st, th_old)
    rows = np.arange(D)
    per = np.zeros(D)
    for x in range(n):
        lv = lo.copy()
        lv[:, x] = ln[:, x]
        d, b = auctions(lv, first)
        per += b * sc[rows, d, x]
    per /= n
    return float(per.mean()), float(1.96 * per.std(ddof=1) / np.sqrt(D))


def fit(data: dict, old_th) -> dict:
    st, sc = data["strength"], data["scores"]
    D, n = st.shape
    dig = sc[:, np.arange(n), np.arange(n)]  # each seat's score as the digger at bid 1
    s = st.ravel()
    v = dig.ravel()
    print(f"{D} deals; digger at bid 1: win rate {np.mean(v > 0):.3f}, mean score {v.mean():+.2f}")
    edges = np.quantile(s, np.linspace(0, 1, 11))
    print("strength bin        hands  win rate  mean digger score (bid 1)")
    for a, b in zip(edges[:-1], edges[1:]):
        m = (s >= a) & (s <= b)
        print(f"[{a:6.2f}, {b:6.2f}]  {m.sum():6d}   {np.mean(v[m] > 0):.3f}   {v[m].mean():+7.2f}")
    # thresholds t1 <= t2 <= t3 over strength quantiles (-inf: always, inf: never)
    cand = [-np.inf] + list(np.quantile(s, np.linspace(0.0, 0.95, 20))) + [np.inf]
    combos = [(cand[i], cand[j], cand[k]) for i in range(len(cand))
              for j in range(i, len(cand)) for k in range(j, len(cand))]

    def best_response(others):
        return max(combos, key=lambda th: replay_score(data, th, others)[0])

    # best-response iteration from the old bidding: the thresholds that do best when the
    # other seats bid like the previous round's (a fixed point bids well against itself)
    th = tuple(old_th)
    seen = []
    for it in range(8):
        th = best_response(th)
        r_old = replay_score(data, th, old_th)[0] - replay_score(data, old_th, th)[0]
        print(f"round {it + 1}: {tuple(round(float(t), 2) for t in th)}  "
              f"(vs old: {r_old:+.2f})")
        if th in seen:
            break
        seen.append(th)
    best = (None, th)
    th = best[1]
    a, ca = replay_score(data, th, old_th)
    b, cb = replay_score(data, old_th, th)
    print(f"best thresholds {tuple(round(float(t), 2) for t in th)}: one seat among old "
          f"bidders {a:+.2f} ± {ca:.2f}; one old bidder among them {b:+.2f} ± {cb:.2f}")
    return {"thresholds": [float(t) for t in th], "vs_old": a, "old_vs_new": b}


def arena(deals: int, seed: int = 0, agents: str = "rules,old_rules") -> dict:
    from cardenvs.agents import register_agent
    from cardenvs.arena import format_results, run_arena

    register_agent("old_rules", "benchmarks.wakeng_bidding:OldRulesAgent")
    t0 = time.time()
    res = run_arena("wakeng", agents, deals, seed=seed, progress=True)
    print(format_results(res))
    print(f"wall time {time.time() - t0:.0f} s")
    return res


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--deals", type=int, default=1500)
    c.add_argument("--seed", type=int, default=10_000)
    c.add_argument("--out", default="runs/wakeng_bids.npz")
    c.add_argument("--farmers", default="rules", help="agent playing the farmers")
    f = sub.add_parser("fit")
    f.add_argument("data")
    a = sub.add_parser("arena")
    a.add_argument("--deals", type=int, default=1000)
    a.add_argument("--seed", type=int, default=0)
    a.add_argument("--agents", default="rules,old_rules",
                   help="agents (old_rules: the former Wakeng bidding)")
    args = p.parse_args(argv)
    if args.cmd == "collect":
        import os

        t0 = time.time()
        data = collect(args.deals, args.seed, args.farmers)
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        np.savez(args.out, **data)
        print(f"wrote {args.out} ({args.deals} deals, {time.time() - t0:.0f} s)")
    elif args.cmd == "fit":
        from cardenvs.api import make_game

        with np.load(args.data) as z:
            data = {k: z[k] for k in z.files}
        old = RulesAgent(make_game("wakeng")).bid_thresholds(16)
        print(f"old thresholds (55/75/90% quantiles): {np.round(old, 2).tolist()}")
        print(json.dumps(fit(data, old)))
    else:
        arena(args.deals, args.seed, args.agents)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
