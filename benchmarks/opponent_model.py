"""How often ``search``'s opponent model makes RLCard's rule model's move.

Usage (from the repository root; needs the ``anchors`` extra for ``rlcard``)::

    python -m benchmarks.opponent_model --deals 100 --seed 1000

RLCard's ``doudizhu-rule-v1`` (the ``rlcard`` agent) plays every seat of 3-player Dou Dizhu
with ``preset="rlcard"`` and its fixed auction.  At each of its card-play decisions with two or
more legal actions the rollout policy (``policy="heuristic"``) chooses for the same seat from
the same state, once as itself and once as a greedy seat
(:data:`cardenvs.core.policy.PP_GREEDY`, the ``opponents="greedy"`` model of
:class:`agents.search.SearchAgent`); the table gives the share of decisions where each makes
RLCard's move, by kind (a lead, or a follow where passing is legal) and role.  RLCard's moves
come from its own seeded generator, so a run is reproducible.
"""

from __future__ import annotations

import argparse
import importlib

import numpy as np

from cardenvs.core.policy import greedy_params, policy_code, policy_params, score_policy
from cardenvs.core.specialize import run as run_specialized
from cardenvs.core.state import LANDLORD


class _Chooser:
    """The rollout policy's move under one parameter vector."""

    def __init__(self, game, pp: np.ndarray):
        self.g, self.pp = game, pp
        self.tmp = np.zeros(game.state_size, np.int64)
        self.scores = np.zeros(game.n_actions + 1, np.float64)
        self.work = np.zeros(64, np.int64)
        self.kind = np.int64(policy_code("heuristic"))

    def __call__(self, state: np.ndarray, legal: np.ndarray) -> int:
        g = self.g
        legal = np.ascontiguousarray(legal, np.int64)
        run_specialized(score_policy, g, f"the rollout policy's scores for {g.info.name}",
                        state, legal, np.int64(len(legal)), g.tab, g.opts, self.pp, g.k_step,
                        self.tmp, self.scores, self.work, self.kind)
        return int(legal[int(np.argmin(self.scores[:len(legal)]))])


def measure(deals: int = 100, seed: int = 1000) -> dict[tuple[str, str], list[int]]:
    """``{(kind, role): [decisions, policy agrees, greedy agrees]}`` over ``deals`` deals of
    RLCard's rule model against itself (deal ``i`` is ``env.reset(seed=seed + i)``)."""
    from agents.rlcard_agent import RLCardRuleAgent

    env = importlib.import_module("cardenvs.doudizhu_v0").env(preset="rlcard", auction="fixed")
    game = env.unwrapped.game
    T = game.pass_id
    plain = _Chooser(game, policy_params(game))
    greedy = _Chooser(game, greedy_params(game, range(game.n_players)))
    bots = [RLCardRuleAgent(game, seed=seed + q) for q in range(game.n_players)]
    out: dict[tuple[str, str], list[int]] = {}
    for i in range(deals):
        env.reset(seed=seed + i)
        for agent in env.agent_iter():
            obs, _, term, trunc, info = env.last()
            if term or trunc:
                env.step(None)
                continue
            seat = env.possible_agents.index(agent)
            state = env.unwrapped.state_vec.copy()
            legal = np.asarray(env.unwrapped.legal_actions(), np.int64)
            action = bots[seat].act(obs, legal, info)
            if len(legal) > 1 and (legal <= T).all():
                key = ("follow" if T in legal else "lead",
                       "landlord" if state[LANDLORD] == seat else "farmer")
                row = out.setdefault(key, [0, 0, 0])
                row[0] += 1
                row[1] += plain(state, legal) == action
                row[2] += greedy(state, legal) == action
            env.step(action)
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--deals", type=int, default=100, help="deals of RLCard against itself")
    ap.add_argument("--seed", type=int, default=1000, help="deal i is reset(seed=SEED + i)")
    args = ap.parse_args(argv)
    if args.deals < 1:
        ap.error("--deals must be >= 1")
    table = measure(args.deals, args.seed)
    print(f"RLCard's rule model, {args.deals} deals from seed {args.seed}: share of its card-play "
          f"decisions where each model makes its move")
    print("| decision | role | decisions | rollout policy | greedy model |")
    print("| --- | --- | ---: | ---: | ---: |")
    for (kind, role), (n, p, g) in sorted(table.items()):
        print(f"| {kind} | {role} | {n} | {p / n:.1%} | {g / n:.1%} |")


if __name__ == "__main__":
    main()
