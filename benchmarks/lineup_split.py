"""Where a head-to-head result of two agents comes from: the arena's lineups grouped by how
many seats the first agent holds.

Usage (from the repository root)::

    python -m benchmarks.lineup_split wakeng trained:agents/weights/wakeng_network.npz \\
        trained:agents/weights/wakeng_network.npz --deals 4000

In a game of three seats ``cardenvs arena`` plays every deal in six lineups: the first agent
alone at each seat, and at each pair of seats.  Each group of three is itself paired (the deal's
luck cancels over the three rotations of a zero-sum game), so the head-to-head difference per
deal splits into the group where the agent plays alone against two copies of the other and
the group where it plays beside a copy of itself.  An agent tuned to one kind of opponent
shows it here: it may hold its own alone and lose beside itself.  Games whose arena plays
other lineups (a solo seat fixed before the play, four seats) are grouped the same way.

The deals are played by :meth:`cardenvs.vector.VectorGame.rollout` with both agents asked in
batches (``act_batch``; a ``trained`` agent scores a whole batch in one pass); a lone legal
action is played without asking.  Prints each lineup's mean difference, then each
group's with its 95% interval, then all lineups together.
"""

from __future__ import annotations

import argparse
from typing import Optional, Sequence

import numpy as np


def lineup_split(game: str, first: str, second: str, deals: int = 4000,
                 seed: int = 12345) -> dict:
    """``{"lineups": [(seats, mean)], "groups": {k: (mean, half)}, "all": (mean, half)}``:
    the first agent's mean seat score minus the second's per deal, per lineup (the seats the
    first holds), per number of seats it holds, and over every lineup."""
    from cardenvs.agents import make_agent
    from cardenvs.api import make_game
    from cardenvs.arena import one_blas_thread
    from cardenvs.vector import VectorGame
    from cardenvs.train.finetune import arena_seat_sets, half_width, new_deals, play_lineup

    g = make_game(game)
    a, b = make_agent(first, g, seed=0), make_agent(second, g, seed=1)
    if deals < 2:
        raise ValueError(f"deals must be >= 2 (for an interval), got {deals}")
    P = int(g.n_players)
    states = new_deals(g, deals, seed)
    vg = VectorGame(g, deals, observe=True, auto_reset=False)
    vg.reset(seed=0)
    per, groups = [], {}
    with one_blas_thread():
        for lu in arena_seat_sets(g, states[0]):
            r = play_lineup(vg, states, a, lu, 1, 0, opponent=b)
            rest = [q for q in range(P) if q not in lu]
            d = r[:, list(lu)].mean(1) - r[:, rest].mean(1)
            per.append((lu, float(d.mean())))
            groups.setdefault(len(lu), []).append(d)
    out = {k: np.mean(v, axis=0) for k, v in sorted(groups.items())}
    total = np.mean([d for v in groups.values() for d in v], axis=0)
    return {"lineups": per, "groups": {k: (float(d.mean()), half_width(d)) for k, d in out.items()},
            "all": (float(total.mean()), half_width(total)), "deals": deals}


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.lineup_split",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("game")
    p.add_argument("first", help="agent spec, e.g. trained:agents/weights/wakeng_network.npz")
    p.add_argument("second", help="agent spec")
    p.add_argument("--deals", type=int, default=4000)
    p.add_argument("--seed", type=int, default=12345, help="the deals' seed")
    a = p.parse_args(argv)
    try:
        res = lineup_split(a.game, a.first, a.second, a.deals, a.seed)
    except ValueError as e:
        p.error(str(e))
    print(f"{a.game}: {a.first} - {a.second}, {res['deals']} deals (seed {a.seed}), "
          f"score difference per deal")
    for lu, m in res["lineups"]:
        print(f"  first at seats {','.join(map(str, lu)):<8} {m:+.2f}")
    for k, (m, h) in res["groups"].items():
        print(f"  first at {k} seat{'s' if k > 1 else ''}: {m:+.2f} [{m - h:+.2f}, {m + h:+.2f}]")
    m, h = res["all"]
    print(f"  all lineups:      {m:+.2f} [{m - h:+.2f}, {m + h:+.2f}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
