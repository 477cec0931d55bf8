"""Where a network-only agent gains or loses against ``rules``: its decisions split by kind.

Usage (from the repository root)::

    python -m benchmarks.decision_split wulong --deals 2000 --jobs 2
    python -m benchmarks.decision_split wakeng --weights runs/my_fit/wakeng.npz --agree 40

For a network-only weight file (default ``agents/weights/<game>_network.npz``) it writes three
variants that play as ``rules`` except for one kind of decision, made by the network (the
file's arrays, with ``rules`` as the prior and a margin of 0 for that kind and ``inf`` for the
others: :func:`agents.trained.action_margins`):

* ``plays``: a card play or the pass where ``rules`` would not pass (a lead, beating the table);
* ``passes``: a card play or the pass where ``rules`` would pass;
* ``other``: every action that is not a card play or the pass beside them (bids, burying, the
  exchange, joker picks, 报牌);

and plays each, and the file itself, against ``rules`` in the arena (duplicate deals, the
paired difference per deal with its 95% interval).  The differences of the three variants add
up roughly to the file's own: the kind whose variant loses is where the network is weak.

``--agree N`` also replays N deals of ``rules`` against itself and asks the network at every
card play of ``rules`` with two or more legal actions: the share where it makes the same play,
passes instead, or makes another card play (a lead or a follow).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from typing import Optional, Sequence

import numpy as np

#: variant name -> ``prior_margins`` (None = inf: never the network's)
VARIANTS = {
    "plays": {"play": 0.0, "other": None, "pass": None},
    "passes": {"play": None, "other": None, "pass": 0.0},
    "other": {"play": None, "other": 0.0, "pass": None},
}


def write_variant(src: str, dst: str, margins: dict, extra: Optional[dict] = None) -> str:
    """Copy the weight file ``src`` to ``dst`` as a ``rules``-prior file with ``margins``
    (``extra``: more metadata, e.g. how the file was made)."""
    from cardenvs.agents.trained import QNetwork, save_weights

    net = QNetwork(src)  # the loader's checks
    if net.meta.get("prior"):
        raise ValueError(f"{src!r} already plays with the prior {net.meta['prior']!r}: give a "
                         f"network-only file")
    meta = dict(net.meta, mode="prior", prior="rules", prior_margins=margins, **(extra or {}))
    with np.load(src, allow_pickle=False) as z:
        dtype = z["w_obs"].dtype  # stored as the source is (its values come back exactly)
    save_weights(dst, net.layer_list(), net.obs_dim, meta, dtype=dtype, ctx_dim=net.ctx_dim)
    return dst


def split(game: str, weights: str, deals: int, seed: int, jobs: int,
          progress: bool = False) -> list[tuple[str, float, float, float]]:
    """``(name, difference, low, high)`` against ``rules`` of the file and of each variant."""
    from cardenvs.arena import run_arena

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        files = [("network (every decision)", weights)]
        for name, margins in VARIANTS.items():
            files.append((f"{name} only", write_variant(weights, os.path.join(tmp, f"{name}.npz"),
                                                        margins)))
        for name, path in files:
            res = run_arena(game, [f"trained:{path}", "rules"], deals, seed=seed,
                            progress=progress, jobs=jobs)
            (st,) = res["pairwise"].values()
            rows.append((name, st["score_diff"], st["ci"][0], st["ci"][1]))
            print(f"  {name}: {st['score_diff']:+.3f} [{st['ci'][0]:+.3f}, {st['ci'][1]:+.3f}]",
                  flush=True)
    return rows


def agreement(game_name: str, weights: str, deals: int, seed: int) -> dict:
    """The ``--agree`` statistics (module docstring) over ``deals`` deals of ``rules``."""
    import cardenvs
    from cardenvs.agents.rules import RulesAgent
    from cardenvs.agents.trained import TrainedAgent

    g = cardenvs.make_game(game_name)
    rules = RulesAgent(g)
    net = TrainedAgent(g, weights=weights)
    P = g.pass_id
    buf = np.zeros(g.n_actions + 1, np.int64)
    obs = np.zeros(g.layout.size, np.float32)
    count = {"decisions": 0, "leads": 0, "same": 0, "same_leads": 0, "passes": 0, "other": 0}
    for deal in range(deals):
        s = g.new_state()
        g.reset(s, seed + deal)
        while not g.done(s):
            legal = buf[:g.legal(s, buf)].copy()
            g.encode(s, g.current(s), obs)
            ob = {"observation": obs.copy()}
            a = rules.act(ob, legal.copy())
            if len(legal) > 1 and a < P:
                b = net.act(ob, legal.copy())
                lead = P not in legal
                count["decisions"] += 1
                count["leads"] += lead
                count["same"] += a == b
                count["same_leads"] += lead and a == b
                count["passes"] += b == P
                count["other"] += b != a and b < P
            g.step(s, a)
    return count


def main(argv: Optional[Sequence[str]] = None) -> int:
    import cardenvs

    p = argparse.ArgumentParser(prog="python -m benchmarks.decision_split",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("game", choices=list(cardenvs.GAMES))
    p.add_argument("--weights", help="a network-only weight file "
                   "(default agents/weights/<game>_network.npz)")
    p.add_argument("--deals", type=int, default=2000, help="arena deals per variant")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", type=int, default=1, help="arena worker processes")
    p.add_argument("--agree", type=int, default=0, metavar="N",
                   help="also compare the network's card plays with rules' over N deals")
    p.add_argument("--no-split", action="store_true", help="skip the arena runs")
    a = p.parse_args(argv)
    from cardenvs.agents.trained import WEIGHTS_DIR

    weights = a.weights or os.path.join(WEIGHTS_DIR, f"{a.game}_network.npz")
    if a.deals < 1 or a.agree < 0:
        p.error("--deals must be >= 1 and --agree >= 0")
    if not os.path.exists(weights):
        p.error(f"no weight file at {weights}")
    if not a.no_split:
        print(f"{a.game}: {os.path.basename(weights)} against rules, {a.deals} deals, seed "
              f"{a.seed}; the network makes the decisions named, rules the rest", flush=True)
        rows = split(a.game, weights, a.deals, a.seed, a.jobs)
        print("\n| network makes | difference per deal against rules |\n| --- | --- |")
        for name, m, lo, hi in rows:
            print(f"| {name} | {m:+.3f} [{lo:+.3f}, {hi:+.3f}] |")
    if a.agree:
        c = agreement(a.game, weights, a.agree, 1000 + a.seed)
        n = max(c["decisions"], 1)
        print(f"\nrules' card plays with a choice over {a.agree} deals of rules against itself: "
              f"{c['decisions']} ({c['leads']} leads); the network makes the same play at "
              f"{c['same'] / n:.1%} (leads {c['same_leads'] / max(c['leads'], 1):.1%}), passes "
              f"at {c['passes'] / n:.1%}, makes another card play at {c['other'] / n:.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
