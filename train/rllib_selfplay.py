"""RLlib PPO self-play with a snapshot league (new API stack), for any cardenvs game.

One module per role learns (:mod:`cardenvs.rllib`: ``bidder``, ``landlord``, ``farmer`` in
Dou Dizhu); a league of ``--league`` frozen snapshot slots per role holds earlier copies of
them.  In half the episodes every agent plays its learning module; in the other half one side
(the solo role, or the team) plays a snapshot slot chosen per episode, so the learners also
meet older versions of the other side.  Every ``--snapshot-every`` iterations the learning
modules are copied into the next slot (round robin).  Bidding always uses the learning
``bidder``.  Lanxi Wulong (every player for himself): one ``player`` module; in league
episodes every seat but one plays a snapshot.

    python train/rllib_selfplay.py doudizhu --iterations 20 --env-runners 2

Prints, per iteration, the mean episode return of every module and the league slot last
written.  Needs the ``rllib`` extra.
"""

from __future__ import annotations

import argparse
import zlib

from cardenvs.multiagent import role_of


def snapshot_id(module: str, slot: int) -> str:
    return f"{module}_snap{slot}"


class LeagueMapping:
    """Agent id -> module id, per episode (see the module docstring); picklable."""

    def __init__(self, learners: list[str], league: int):
        self.learners = [m for m in learners if m != "bidder"]
        self.league = league

    def __call__(self, agent_id, episode=None, **kwargs) -> str:
        module = role_of(str(agent_id))
        if module == "bidder" or episode is None or self.league == 0:
            return module
        h = zlib.crc32(str(episode.id_).encode())
        if h % 2 == 0:  # plain self-play
            return module
        h //= 2
        slot = h % self.league
        h //= self.league
        if self.learners == ["player"]:  # every player for himself: one seat learns
            seat = int(str(agent_id).rpartition("_")[2])
            return module if seat == h % 4 else snapshot_id(module, slot)
        frozen = self.learners[h % len(self.learners)]
        return snapshot_id(module, slot) if module == frozen else module


def build(game: str, env_runners: int, league: int, hidden: int, batch: int, options=None):
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec

    from cardenvs.rllib import module_ids, module_spec, ppo_config

    options = dict(options or {})
    learners = module_ids(game, **options)
    config = ppo_config(game, num_env_runners=env_runners, hidden=hidden, options=options,
                        train_batch_size_per_learner=batch, minibatch_size=max(50, batch // 8))
    frozen = [snapshot_id(m, k) for m in learners if m != "bidder" for k in range(league)]
    specs = {m: module_spec(game, hidden, **options) for m in learners + frozen}
    config.multi_agent(policies=set(specs), policy_mapping_fn=LeagueMapping(learners, league),
                       policies_to_train=learners)
    config.rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
    return config.build_algo(), learners


def snapshot(algo, learners: list[str], slot: int) -> None:
    """Copy every learning module but ``bidder`` into league slot ``slot`` (the env runners
    get the new weights through ``Algorithm.set_state``)."""
    state = {snapshot_id(m, slot): algo.get_module(m).get_state()
             for m in learners if m != "bidder"}
    algo.set_state({"learner_group": {"learner": {"rl_module": state}}})


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("game")
    ap.add_argument("--iterations", type=int, default=4)
    ap.add_argument("--env-runners", type=int, default=2)
    ap.add_argument("--league", type=int, default=2, help="snapshot slots per role")
    ap.add_argument("--snapshot-every", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--batch", type=int, default=2000, help="env steps per iteration")
    ap.add_argument("--num-cpus", type=int, default=2)
    args = ap.parse_args(argv)

    import ray

    ray.init(num_cpus=args.num_cpus, include_dashboard=False, log_to_driver=False)
    try:
        algo, learners = build(args.game, args.env_runners, args.league, args.hidden, args.batch)
        slot = -1
        for it in range(args.league):  # the league starts as copies of the initial modules
            snapshot(algo, learners, it)
        for it in range(1, args.iterations + 1):
            result = algo.train()
            if it % args.snapshot_every == 0 and args.league:
                slot = (slot + 1) % args.league
                snapshot(algo, learners, slot)
            rets = result["env_runners"].get("module_episode_returns_mean", {})
            shown = ", ".join(f"{m} {float(rets[m]):+.2f}" for m in learners if m in rets)
            met = sorted(m for m in rets if "_snap" in m)
            print(f"iter {it}: {shown}; snapshots played: {', '.join(met) or '-'}; "
                  f"league slot written: {slot if slot >= 0 else '-'}", flush=True)
        algo.stop()
        return result
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
