"""Evaluation of a :mod:`train.dmc` network: duplicate deals against registered agents
(:func:`duplicate_returns`, :func:`evaluate_against`) and their mean score, win rate and paired
difference with 95% confidence intervals (:func:`summarize`)."""

from __future__ import annotations

import math
import sys
import time
from typing import Optional, Sequence

import numpy as np

from cardenvs.arena import import_agents
from .dmc_net import TorchPolicy


def make_eval_agent(name: str, game, seed: int):
    """An evaluation opponent from the agents registry (``agents.make_agent``), or ``None``
    (with the reason) when that agent is not available or cannot play ``game``."""
    agents = import_agents()
    try:
        reason = agents.unsupported(name, game)
        if reason is None:
            return agents.make_agent(name, game, seed=seed), None
    except ValueError as e:
        reason = str(e)
    return None, reason


def duplicate_returns(game, policy: TorchPolicy, agent, seeds: Sequence[int], *,
                      with_opponent: bool = False):
    """Returns ``[len(seeds), n]``: entry ``(d, s)`` is the network's return in deal ``d``
    playing seat ``s`` with ``agent`` at every other seat (all games stepped in lockstep; the
    agent's moves of one step go through one ``agent.act_batch`` call).

    With ``with_opponent``, a pair ``(network, opponent)`` of such arrays: ``opponent[d, s]``
    is the mean return of ``agent``'s seats in that same game, for the paired difference
    of :func:`summarize` (games whose scores do not sum to zero need it)."""
    n = game.n_players
    G = len(seeds) * n
    states = np.stack([game.new_state() for _ in range(G)])
    net_seat = np.tile(np.arange(n), len(seeds))
    for i, sd in enumerate(np.repeat(np.asarray(seeds, np.int64), n)):
        game.reset(states[i], int(sd))
    ret = np.zeros((G, n))
    live = [g for g in range(G) if not game.done(states[g])]
    buf = np.empty(game.n_actions, np.int64)
    obs = np.zeros((G, game.layout.size), np.float32)
    while live:
        net_g, net_ids, net_sizes, opp_g, opp_ids = [], [], [], [], []
        moves = {}
        for g in live:
            s = states[g]
            k = game.legal(s, buf)
            c = game.current(s)
            if k == 1:
                moves[g] = int(buf[0])
                continue
            game.encode(s, c, obs[g])
            if c == net_seat[g]:
                net_g.append(g)
                net_ids.append(buf[:k].copy())
                net_sizes.append(k)
            else:
                opp_g.append(g)
                opp_ids.append(buf[:k].copy())
        if net_g:
            chosen = policy.choose(obs[net_g], np.concatenate(net_ids), np.array(net_sizes))
            moves.update(zip(net_g, chosen.tolist()))
        if opp_g:
            masks = np.zeros((len(opp_g), game.n_actions), np.int8)
            for j, ids in enumerate(opp_ids):
                masks[j, ids] = 1
            chosen = agent.act_batch(obs[opp_g], masks)
            for j, g in enumerate(opp_g):
                a = int(chosen[j])
                if not masks[j, a]:
                    raise RuntimeError(f"evaluation agent {agent!r} chose the illegal action {a}")
                moves[g] = a
        still = []
        for g in live:
            s = states[g]
            game.step(s, moves[g])
            ret[g] += game.rewards(s)
            if not game.done(s):
                still.append(g)
        live = still
    own = ret[np.arange(G), net_seat]
    net = own.reshape(len(seeds), n)
    if not with_opponent:
        return net
    return net, ((ret.sum(axis=1) - own) / (n - 1)).reshape(len(seeds), n)


def summarize(returns: np.ndarray, opponent: Optional[np.ndarray] = None) -> dict:
    """Mean score and win rate per deal (averaged over seats) with 95% CIs (normal approx.).

    With ``opponent`` (the opponent's mean return in the same games, as
    ``duplicate_returns(..., with_opponent=True)`` gives it) also ``diff`` and ``diff_ci``:
    the paired difference per deal, network minus opponent, as the arena's pairwise line
    computes it over these lineups (one network seat, the opponent at the others)."""
    per_deal = returns.mean(axis=1)
    wins = (returns > 0).mean(axis=1)
    D = len(per_deal)

    def ci(x):
        return float(1.96 * x.std(ddof=1) / math.sqrt(D)) if D > 1 else float("nan")

    row = {"deals": D, "score": float(per_deal.mean()), "score_ci": ci(per_deal),
           "win_rate": float(wins.mean()), "win_ci": ci(wins)}
    if opponent is not None:
        if opponent.shape != returns.shape:
            raise ValueError(f"opponent returns of shape {opponent.shape} do not match the "
                             f"network's {returns.shape}")
        diff = per_deal - opponent.mean(axis=1)
        row.update(diff=float(diff.mean()), diff_ci=ci(diff))
    return row


def evaluate_against(game, policy: TorchPolicy, names: Sequence[str], seeds: np.ndarray, *,
                     seed: int, chunk: int, deadline: Optional[float] = None,
                     skipped: Optional[set] = None, tag: str = "dmc") -> list[dict]:
    """``policy`` against each agent of ``names`` over the duplicate deals ``seeds``: one
    :func:`summarize` row per agent with its ``opponent`` name (``diff``: the paired
    difference per deal, network minus that agent).

    The deals are played in chunks of ``chunk``, and an agent's evaluation stops at the first
    chunk boundary past ``deadline`` (a ``time.perf_counter()`` value; no row when not one
    chunk fitted).  An agent that cannot play the game is left out with a line on stderr (once
    per name when a ``skipped`` set is given: the names already reported)."""
    rows = []
    for name in names:
        agent, reason = make_eval_agent(name, game, seed=seed)
        if agent is None:
            if skipped is None or name not in skipped:
                print(f"[{tag}] evaluation against {name!r} skipped: {reason}", file=sys.stderr)
                if skipped is not None:
                    skipped.add(name)
            continue
        parts = []
        for i in range(0, len(seeds), chunk):
            if deadline is not None and time.perf_counter() >= deadline:
                break
            parts.append(duplicate_returns(game, policy, agent, seeds[i:i + chunk],
                                           with_opponent=True))
        if parts:
            net, opp = (np.concatenate(x) for x in zip(*parts))
            rows.append({**summarize(net, opp), "opponent": name})
    return rows

