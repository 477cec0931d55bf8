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
from cardenvs.core.state import CUR, LANDLORD


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


class _Watcher:
    """RLCard's model at one seat, comparing each of its card-play decisions with the choices
    of the rollout policy and the greedy model; it plays the model's move."""

    needs_state = True  # the arena's deal loop then hands it the state in info["state"]

    def __init__(self, bot, plain: _Chooser, greedy: _Chooser, out: dict, T: int):
        self.bot, self.plain, self.greedy, self.out, self.T = bot, plain, greedy, out, T

    def act(self, observation, legal, info) -> int:
        action = self.bot.act(observation, legal, info)
        legal = np.asarray(legal, np.int64)
        if len(legal) > 1 and (legal <= self.T).all():
            state = np.array(info["state"], np.int64)  # a writable copy for the scorers
            seat = int(state[CUR])
            key = ("follow" if self.T in legal else "lead",
                   "landlord" if state[LANDLORD] == seat else "farmer")
            row = self.out.setdefault(key, [0, 0, 0])
            row[0] += 1
            row[1] += self.plain(state, legal) == action
            row[2] += self.greedy(state, legal) == action
        return action


def measure(deals: int = 100, seed: int = 1000) -> dict[tuple[str, str], list[int]]:
    """``{(kind, role): [decisions, policy agrees, greedy agrees]}`` over ``deals`` deals of
    RLCard's rule model against itself (deal ``i`` is ``env.reset(seed=seed + i)``)."""
    from cardenvs.agents.rlcard_agent import RLCardRuleAgent
    from cardenvs.arena import play_deal

    env = importlib.import_module("cardenvs.doudizhu_v0").env(preset="rlcard", auction="fixed")
    game = env.unwrapped.game
    plain = _Chooser(game, policy_params(game))
    greedy = _Chooser(game, greedy_params(game, range(game.n_players)))
    out: dict[tuple[str, str], list[int]] = {}
    lineup = [_Watcher(RLCardRuleAgent(game, seed=seed + q), plain, greedy, out, game.pass_id)
              for q in range(game.n_players)]
    for i in range(deals):
        play_deal(env, seed + i, lineup)
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
