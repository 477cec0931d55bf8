"""The arena: duplicate-deal matches between baseline agents, with confidence intervals.

``cardenvs arena GAME --agents rules,random --deals N [--seed S] [--out DIR]`` (or
:func:`run_arena`) plays every deal several times with the agents in different seats (a
*lineup* gives each seat an agent), so every agent plays every hand:

* ``lineups="rotate"`` (the default when roles are decided in play, e.g. by an auction):
  the agent list is laid around the table and rotated through all seats, once from each
  agent; with 2 agents at 3 seats that is the 6 lineups ``ABA BAA AAB BAB ABB BBA``, and each
  seat holds each agent equally often;
* ``lineups="solo"`` (the default for a one-against-the-rest game whose solo seat is fixed
  before the play, e.g. Dou Dizhu with ``auction="fixed"``): for every ordered pair of
  agents (X, Y) one lineup with X in the solo seat and Y in all the others, so each agent
  plays each hand as landlord and as farmers against each other agent.

Statistics (all from the rewards the environment pays):

* an agent's *score per deal* is the mean reward of the seats it held in that deal, over all
  its lineups; its average and the 95% interval are over deals (mean +- 1.96 s / sqrt(n), s the
  sample standard deviation): the deals are the independent units, and the duplicate replays
  cancel the luck of the cards;
* *pairwise*: per deal the difference of two agents' scores (duplicate-paired), averaged with
  the same interval;
* *win rate*: per deal the share of the agent's seats whose side won (reward > 0), averaged
  over deals with the same interval (clipped to [0, 1]);
* *by role* (one-against-the-rest games): games, win rate with a Wilson 95% interval (over
  games) and mean score of each agent in each role.

Agents come from the registry in ``agents`` (``random``, ``rules``, ``rlcard``, ``trained``...),
imported only when the arena runs.  Results print as a table and are written as JSON and a
PNG chart (matplotlib) to ``out``.
"""

from __future__ import annotations

import importlib
import json
import math
import sys
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

Z95 = 1.959963984540054

#: role names of the one-against-the-rest games: (solo, others)
ROLE_NAMES = {
    "doudizhu": ("landlord", "farmer"),
    "doudizhu4": ("landlord", "farmer"),
    "wakeng": ("digger", "farmer"),
    "niangniang": ("niangniang", "catcher"),
}


# -- statistics ---------------------------------------------------------------------------------------


def mean_ci(x: Sequence[float], z: float = Z95) -> tuple[float, float, float]:
    """``(mean, low, high)``: the mean and its normal-approximation interval
    ``mean +- z * s / sqrt(n)`` with ``s`` the sample standard deviation (``ddof=1``).

    With fewer than two values the interval is ``(nan, nan)``.
    """
    a = np.asarray(x, np.float64)
    if a.ndim != 1 or a.size == 0:
        raise ValueError("mean_ci needs a non-empty 1-D sequence of numbers")
    m = float(a.mean())
    if a.size < 2:
        return m, math.nan, math.nan
    h = z * float(a.std(ddof=1)) / math.sqrt(a.size)
    return m, m - h, m + h


def wilson_ci(wins: int, n: int, z: float = Z95) -> tuple[float, float, float]:
    """``(rate, low, high)``: a win rate and its Wilson score interval (``nan`` when n = 0)."""
    if n <= 0:
        return math.nan, math.nan, math.nan
    p = wins / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return p, c - h, c + h


# -- lineups ------------------------------------------------------------------------------------------


def rotate_lineups(k: int, n: int) -> list[tuple[int, ...]]:
    """Lineups of ``k`` agents at ``n`` seats: ``lineup[seat] = ((seat + r) % n + s) % k`` for
    every rotation ``r`` and starting agent ``s``; duplicates are dropped when that keeps every
    seat holding every agent equally often."""
    if k < 1 or n < 1:
        raise ValueError("need at least one agent and one seat")
    full = [tuple(((i + r) % n + s) % k for i in range(n)) for s in range(k) for r in range(n)]
    unique = list(dict.fromkeys(full))
    counts = np.zeros((n, k), np.int64)
    for lu in unique:
        for seat, a in enumerate(lu):
            counts[seat, a] += 1
    return unique if (counts == counts[0, 0]).all() else full


def solo_lineups(k: int, n: int, solo: int) -> list[tuple[int, ...]]:
    """For every ordered pair of agents (x, y), x in seat ``solo`` and y in every other seat."""
    if k < 2:
        raise ValueError("solo lineups need at least two agents")
    return [tuple(x if seat == solo else y for seat in range(n))
            for x in range(k) for y in range(k) if x != y]


# -- agents -------------------------------------------------------------------------------------------


def import_agents():
    """The ``agents`` package: installed, or the ``agents/`` folder of a source checkout."""
    try:
        return importlib.import_module("agents")
    except ModuleNotFoundError as e:
        if e.name != "agents":
            raise
    root = Path(__file__).resolve().parents[1]
    if (root / "agents" / "__init__.py").is_file():
        sys.path.insert(0, str(root))
        return importlib.import_module("agents")
    raise ValueError("the baseline agents (package 'agents') are not installed; run from a "
                     "source checkout of cardenvs")


def parse_agents(spec) -> list[str]:
    """``"rules,random"`` or a list -> agent names (at least two)."""
    if isinstance(spec, str):
        names = [s.strip() for s in spec.split(",") if s.strip()]
    elif isinstance(spec, (list, tuple)) and all(isinstance(s, str) for s in spec):
        names = list(spec)
    else:
        raise TypeError("agents must be a comma-separated string or a list of names")
    if len(names) < 2:
        raise ValueError(f"the arena needs at least two agents, got {names}")
    return names


def labels_of(names: Sequence[str]) -> list[str]:
    """Unique labels: a repeated name gets ``_2``, ``_3`` ..."""
    seen: dict[str, int] = {}
    out = []
    for nm in names:
        seen[nm] = seen.get(nm, 0) + 1
        out.append(nm if seen[nm] == 1 else f"{nm}_{seen[nm]}")
    return out


def merge_options(game: str, names: Sequence[str], options: Optional[dict]) -> dict:
    """The game options: the user's, plus what the agents require or prefer."""
    agents = import_agents()
    opts = dict(options or {})
    given = set(opts)
    for nm in names:
        cls = agents.agent_class(nm)
        for key, value in getattr(cls, "required_options", {}).items():
            if key in given and opts[key] != value:
                raise ValueError(f"agent {nm!r} needs {key}={value!r}, but {key}={opts[key]!r} "
                                 f"was given")
            opts[key] = value
        for key, value in getattr(cls, "default_options", {}).items():
            if key not in given:
                opts.setdefault(key, value)
    return opts


def env_for_agents(game: str, names: Sequence[str], options: Optional[dict]):
    """``(env, options)``: the AEC env (``illegal="raise"``) with the options the agents need;
    ``ValueError`` naming the agent when one cannot play the game."""
    mod = import_agents()
    opts = merge_options(game, names, options)
    try:
        env = _env(game, opts)
    except (TypeError, ValueError):
        # an option an agent asked for may not exist in this game: say which agent cannot play
        base = _env(game, dict(options or {})).unwrapped.game
        for nm in names:
            reason = mod.agent_class(nm).unsupported(base)
            if reason is not None:
                raise ValueError(f"agent {nm!r} cannot play {game}: {reason}") from None
        raise
    return env, opts


# -- playing ------------------------------------------------------------------------------------------


def _env(game: str, options: dict):
    import cardenvs

    if game not in cardenvs.GAMES:
        raise ValueError(f"unknown game {game!r}; choose from: {', '.join(cardenvs.GAMES)}")
    mod = importlib.import_module(f"cardenvs.{cardenvs.GAMES[game]}")
    return mod.env(illegal="raise", **options)


def play_deal(env, deal_seed: int, lineup: Sequence, solo_slot: Optional[int] = None):
    """Play one deal with ``lineup[seat]`` acting for each seat.

    Returns ``(rewards per seat, solo seat or -1, number of decisions)``; the rewards are the
    episode's total per seat.
    """
    env.reset(seed=deal_seed)
    n = len(env.possible_agents)
    total = np.zeros(n)
    index = {a: i for i, a in enumerate(env.possible_agents)}
    decisions = 0
    for agent in env.agent_iter():
        obs, r, term, trunc, info = env.last()
        seat = index[agent]
        if term or trunc:
            total[seat] += r
            env.step(None)
            continue
        total[seat] += r
        a = lineup[seat].act(obs, env.unwrapped.legal_actions(), info)
        decisions += 1
        env.step(a)
    solo = int(env.unwrapped.state_vec[solo_slot]) if solo_slot is not None else -1
    return total, solo, decisions


def run_arena(game: str, agents, deals: int, seed: int = 0, options: Optional[dict] = None,
              lineups: str = "auto", progress: bool = True) -> dict:
    """Play ``deals`` duplicate deals of ``game`` between ``agents``; return the results dict.

    Args:
        game: a registry name (``cardenvs.GAMES``).
        agents: agent names (``"rules,random"`` or a list); repeated names are allowed.
        deals: number of deals (each replayed once per lineup).
        seed: seeds the deals and the agents' generators.
        options: game options (agents may add required ones, e.g. ``preset="rlcard"``).
        lineups: ``"auto"``, ``"rotate"`` or ``"solo"`` (module docstring).
        progress: show a tqdm progress bar.
    """
    from .core.state import LANDLORD, PHASE, P_PLAY

    names = parse_agents(agents)
    if isinstance(deals, bool) or not isinstance(deals, (int, np.integer)) or deals < 1:
        raise ValueError(f"deals must be a positive integer, got {deals!r}")
    if lineups not in ("auto", "rotate", "solo"):
        raise ValueError(f"lineups={lineups!r}; choose 'auto', 'rotate' or 'solo'")
    mod = import_agents()
    env, opts = env_for_agents(game, names, options)
    g = env.unwrapped.game
    n = g.n_players
    k = len(names)
    labels = labels_of(names)
    for nm in names:
        reason = mod.agent_class(nm).unsupported(g)
        if reason is not None:
            raise ValueError(f"agent {nm!r} cannot play {game}: {reason}")
    seeds = np.random.SeedSequence(seed).spawn(k + 1)
    players = [mod.make_agent(nm, g, seed=int(s.generate_state(1)[0])) for nm, s in
               zip(names, seeds[1:])]
    deal_seeds = np.random.default_rng(seeds[0]).integers(0, 2**63 - 1, size=deals)
    one_vs_rest = g.info.teams.startswith("1 vs")
    roles = ROLE_NAMES.get(game, ("solo", "team")) if one_vs_rest else None
    solo_slot = LANDLORD if one_vs_rest else None
    # the solo seat fixed before the play (auction "fixed", custom setups)?
    env.reset(seed=int(deal_seeds[0]))
    fixed_solo = -1
    if one_vs_rest and int(env.unwrapped.state_vec[PHASE]) == P_PLAY:
        fixed_solo = int(env.unwrapped.state_vec[LANDLORD])
    mode = lineups
    if mode == "auto":
        mode = "solo" if fixed_solo >= 0 else "rotate"
    if mode == "solo":
        if not one_vs_rest:
            raise ValueError(f"lineups='solo' needs a one-against-the-rest game; {game} is "
                             f"{g.info.teams}")
        if fixed_solo < 0:
            raise ValueError("lineups='solo' needs the solo seat fixed before the play "
                             "(e.g. auction='fixed')")
        plan = solo_lineups(k, n, fixed_solo)
    else:
        plan = rotate_lineups(k, n)

    score = np.zeros((deals, k))
    wins = np.zeros((deals, k))
    seats_of = [[sum(1 for a in lu if a == j) for lu in plan] for j in range(k)]
    role_games = np.zeros((k, 2), np.int64)
    role_wins = np.zeros((k, 2), np.int64)
    role_score = np.zeros((k, 2))
    void = 0
    decisions = 0
    try:
        from tqdm import tqdm

        bar = tqdm(total=deals, desc=f"arena {game}", unit="deal", disable=not progress,
                   file=sys.stderr)
    except ImportError:  # pragma: no cover - tqdm is a dev dependency
        bar = None
    for d in range(deals):
        s_sum = np.zeros(k)
        w_sum = np.zeros(k)
        all_zero = True
        for lu in plan:
            rew, solo, nd = play_deal(env, int(deal_seeds[d]), [players[a] for a in lu], solo_slot)
            decisions += nd
            if np.any(rew != 0):
                all_zero = False
            for seat, a in enumerate(lu):
                s_sum[a] += rew[seat]
                w_sum[a] += rew[seat] > 0
                if roles is not None and solo >= 0:
                    ri = 0 if seat == solo else 1
                    role_games[a, ri] += 1
                    role_wins[a, ri] += rew[seat] > 0
                    role_score[a, ri] += rew[seat]
        void += all_zero
        for j in range(k):
            m = sum(seats_of[j])
            score[d, j] = s_sum[j] / m
            wins[d, j] = w_sum[j] / m
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()

    res = {
        "game": game, "options": opts, "agents": labels, "deals": int(deals), "seed": int(seed),
        "lineup_mode": mode, "lineups": [[labels[a] for a in lu] for lu in plan],
        "void_deals": int(void), "decisions": int(decisions),
        "per_agent": {}, "pairwise": {}, "by_role": {},
        "score_per_deal": {lab: score[:, j].tolist() for j, lab in enumerate(labels)},
    }
    for j, lab in enumerate(labels):
        m, lo, hi = mean_ci(score[:, j])
        wm, wlo, whi = mean_ci(wins[:, j])
        if not math.isnan(wlo):  # a rate: clip the normal interval to [0, 1]
            wlo, whi = max(0.0, wlo), min(1.0, whi)
        res["per_agent"][lab] = {"score": m, "score_ci": [lo, hi], "win_rate": wm,
                                 "win_rate_ci": [wlo, whi]}
    for a in range(k):
        for b in range(a + 1, k):
            m, lo, hi = mean_ci(score[:, a] - score[:, b])
            res["pairwise"][f"{labels[a]} - {labels[b]}"] = {"score_diff": m, "ci": [lo, hi]}
    if roles is not None:
        for j, lab in enumerate(labels):
            res["by_role"][lab] = {}
            for ri, role in enumerate(roles):
                ng = int(role_games[j, ri])
                p, lo, hi = wilson_ci(int(role_wins[j, ri]), ng)
                res["by_role"][lab][role] = {
                    "games": ng, "win_rate": p, "win_rate_ci": [lo, hi],
                    "score": float(role_score[j, ri] / ng) if ng else math.nan,
                }
    return res


# -- reporting ----------------------------------------------------------------------------------------


def _f(x: float, signed: bool = True) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "nan"
    return f"{x:+.3f}" if signed else f"{x:.3f}"


def format_results(res: dict) -> str:
    """The results as a text table."""
    lines = [f"{res['game']}: {res['deals']} deals x {len(res['lineups'])} lineups "
             f"({res['lineup_mode']}), seed {res['seed']}, options {res['options']}"]
    if res["void_deals"]:
        lines.append(f"void deals (every seat 0): {res['void_deals']}")
    w = max(8, max(len(a) for a in res["agents"]))
    lines.append(f"{'agent':<{w}}  {'score/deal':>10}  {'95% CI':^20}  {'win rate':>8}  "
                 f"{'95% CI':^14}")
    for lab, st in res["per_agent"].items():
        lo, hi = st["score_ci"]
        wlo, whi = st["win_rate_ci"]
        lines.append(f"{lab:<{w}}  {_f(st['score']):>10}  [{_f(lo):>8}, {_f(hi):>8}]  "
                     f"{_f(st['win_rate'], False):>8}  [{_f(wlo, False)}, {_f(whi, False)}]")
    if res["pairwise"]:
        lines.append("score difference per deal (duplicate-paired):")
        for pair, st in res["pairwise"].items():
            lo, hi = st["ci"]
            lines.append(f"  {pair}: {_f(st['score_diff'])} [{_f(lo)}, {_f(hi)}]")
    if res["by_role"]:
        lines.append("by role (win rate with Wilson 95% CI over games; mean score):")
        for lab, roles in res["by_role"].items():
            for role, st in roles.items():
                if st["games"] == 0:
                    lines.append(f"  {lab:<{w}} as {role:<10} games {0:>6}  (never held this role)")
                    continue
                lo, hi = st["win_rate_ci"]
                lines.append(f"  {lab:<{w}} as {role:<10} games {st['games']:>6}  win "
                             f"{_f(st['win_rate'], False)} [{_f(lo, False)}, {_f(hi, False)}]  "
                             f"score {_f(st['score'])}")
    return "\n".join(lines)


def write_results(res: dict, out_dir) -> tuple[Path, Optional[Path]]:
    """Write ``arena_GAME.json`` and ``arena_GAME.png`` (the PNG only with matplotlib)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"arena_{res['game']}_{'_'.join(res['agents'])}"
    jpath = out / f"{stem}.json"
    jpath.write_text(json.dumps(res, indent=1, allow_nan=True) + "\n")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return jpath, None
    labs = res["agents"]
    panels = 3 if res["by_role"] else 2
    fig, axes = plt.subplots(1, panels, figsize=(4.2 * panels, 3.6))
    x = np.arange(len(labs))
    for ax, key, ci, title in ((axes[0], "score", "score_ci", "score per deal"),
                               (axes[1], "win_rate", "win_rate_ci", "win rate")):
        m = np.array([res["per_agent"][a][key] for a in labs])
        lo = np.array([res["per_agent"][a][ci][0] for a in labs])
        hi = np.array([res["per_agent"][a][ci][1] for a in labs])
        ax.bar(x, m, yerr=np.nan_to_num(np.vstack([m - lo, hi - m])), capsize=4,
               color="#4C72B0")
        ax.set_xticks(x, labs)
        ax.set_title(f"{title} (95% CI)")
        ax.axhline(0, color="k", lw=0.6)
    if res["by_role"]:
        ax = axes[2]
        roles = list(next(iter(res["by_role"].values())))
        wdt = 0.8 / len(roles)
        for i, role in enumerate(roles):
            m = np.array([res["by_role"][a][role]["win_rate"] for a in labs])
            lo = np.array([res["by_role"][a][role]["win_rate_ci"][0] for a in labs])
            hi = np.array([res["by_role"][a][role]["win_rate_ci"][1] for a in labs])
            ax.bar(x + (i - (len(roles) - 1) / 2) * wdt, m, wdt, label=role,
                   yerr=np.nan_to_num(np.vstack([m - lo, hi - m])), capsize=3)
        ax.set_xticks(x, labs)
        ax.set_ylim(0, 1)
        ax.set_title("win rate by role")
        ax.legend(fontsize=8)
    fig.suptitle(f"{res['game']}: {res['deals']} duplicate deals")
    fig.tight_layout()
    ppath = out / f"{stem}.png"
    fig.savefig(ppath, dpi=110)
    plt.close(fig)
    return jpath, ppath


def main_arena(game: str, agents: str, deals: int, seed: int, options: dict, out: Optional[str],
               lineups: str = "auto", progress: bool = True, stream=None) -> dict:
    """What ``cardenvs arena`` does: run, print the table, write JSON and PNG."""
    stream = sys.stdout if stream is None else stream
    res = run_arena(game, agents, deals, seed=seed, options=options, lineups=lineups,
                    progress=progress)
    print(format_results(res), file=stream)
    if out:
        j, p = write_results(res, out)
        print(f"wrote {j}" + (f" and {p}" if p else " (no matplotlib: no PNG)"), file=stream)
    return res
