"""Where a network-only agent gains or loses against ``rules``: its decisions split by kind.

Usage (from the repository root)::

    python -m benchmarks.decision_split wulong --deals 2000 --jobs 2
    python -m benchmarks.decision_split wakeng --weights runs/my_fit/wakeng.npz --agree 40

For a network-only weight file (default ``agents/weights/<game>_network.npz``) it fields three
variants (:class:`SplitAgent`, the agent ``split:weights=PATH,kind=KIND``) that play as
``rules`` except for one kind of decision, where the network's best-scored action of that kind
is played when it scores above ``rules``' move (:func:`split_kinds`):

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
from typing import Optional, Sequence

import numpy as np

from cardenvs.agents.base import Agent, legal_ids, obs_vector

#: the variants: the kind of decision the network makes in each (:func:`split_kinds`)
VARIANTS = ("plays", "passes", "other")
#: the agent name of :class:`SplitAgent` (registered when this module is imported)
AGENT = "split"


def split_kinds(ids: np.ndarray, sizes: np.ndarray, pass_id: int,
                base: np.ndarray) -> dict[str, np.ndarray]:
    """Per legal action (``ids`` of positions laid end to end, ``sizes`` per position; ``base``:
    ``rules``' action of each position), which variant may play it: ``other`` for an action
    above ``pass_id`` (a bid, pick, 报牌, ...) and every action of a position offering no card
    play (no id below ``pass_id``); the card plays and the pass of the other positions are
    ``passes`` where ``rules`` passes there, else ``plays``."""
    ids = np.asarray(ids)
    sizes = np.asarray(sizes, np.int64)
    owner = np.repeat(np.arange(len(sizes)), sizes)
    has_play = np.bincount(owner, weights=ids < pass_id, minlength=len(sizes)) > 0
    other = (ids > pass_id) | ~has_play[owner]
    passed = (np.asarray(base) == pass_id)[owner]
    return {"plays": ~other & ~passed, "passes": ~other & passed, "other": other}


class SplitAgent(Agent):
    """``rules``, except for one ``kind`` of decision (:data:`VARIANTS`), where the network of
    ``weights`` plays its best-scored action of that kind when that scores above ``rules``'
    move (a network-only file; default the game's shipped one)."""

    name = AGENT

    def __init__(self, game, seed: Optional[int] = None, weights: Optional[str] = None,
                 kind: str = "plays"):
        from cardenvs.agents.rules import RulesAgent
        from cardenvs.agents.trained import TrainedAgent

        if kind not in VARIANTS:
            raise ValueError(f"kind must be one of {', '.join(VARIANTS)}, got {kind!r}")
        super().__init__(game, seed)
        self.kind = kind
        self.net = TrainedAgent(self.game, seed=seed, weights=weights)
        self.rules = RulesAgent(self.game, seed=seed)

    @classmethod
    def unsupported(cls, game) -> Optional[str]:
        """Why the shipped network cannot play ``game`` (``None`` when it can)."""
        from cardenvs.agents.trained import TrainedAgent

        return TrainedAgent.unsupported(game)

    def act(self, observation: dict, legal: Optional[np.ndarray] = None,
            info: Optional[dict] = None) -> int:
        """``rules``' move, or the network's best of the variant's kind where it scores higher."""
        legal = legal_ids(observation, legal)
        base = int(self.rules.act(observation, legal.copy(), info))
        mine = split_kinds(legal, np.array([len(legal)]), self.game.pass_id,
                           np.array([base]))[self.kind]
        if len(legal) == 1 or not mine.any():
            return base
        q = self.net.scores(np.asarray(obs_vector(observation), np.float32), legal)
        best = int(np.argmax(np.where(mine, q, -np.inf)))
        return int(legal[best]) if q[best] > q[int(np.flatnonzero(legal == base)[0])] else base

    def __repr__(self) -> str:
        return f"SplitAgent({self.game.info.name}, {self.kind})"


def _register() -> None:
    from cardenvs.agents import AGENTS, register_agent

    if AGENT not in AGENTS:
        register_agent(AGENT, f"{__name__}:SplitAgent")


_register()


def split(game: str, weights: str, deals: int, seed: int, jobs: int,
          progress: bool = False) -> list[tuple[str, float, float, float]]:
    """``(name, difference, low, high)`` against ``rules`` of the file and of each variant
    (``jobs > 1``: from ``python -m benchmarks.decision_split``, whose import in the arena's
    worker processes registers the variants' agent)."""
    from cardenvs.agents.trained import QNetwork
    from cardenvs.arena import run_arena

    QNetwork(weights)  # the loader's checks, before any arena
    rows = []
    specs = [("network (every decision)", f"trained:{weights}")]
    specs += [(f"{kind} only", f"{AGENT}:weights={weights},kind={kind}") for kind in VARIANTS]
    for name, spec in specs:
        res = run_arena(game, [spec, "rules"], deals, seed=seed, progress=progress, jobs=jobs)
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
