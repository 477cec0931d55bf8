"""The arena's statistics: intervals over the independent units, the deals.

A deal of the arena is played once per lineup (a duplicate group), and the games of one deal
share its cards: their results are correlated (the two farmers of a Dou Dizhu game win or
lose together, and the same cards favour the same side in every lineup).  The deals are
independent, so every interval here takes the deal as its unit:

* :func:`mean_ci`: a mean over deals (score per deal, paired differences, per-deal win
  shares) and its normal interval;
* :func:`role_stats`: an agent's games in one role (landlord, farmer ...), which number 0 to
  several per deal: the ratio of the sums over deals (wins / games, score / games), with the
  ratio estimator's variance over deals (the linearisation, or "cluster-robust", variance);
  the win rate's interval is Wilson's with the effective number of games, the games divided
  by the design effect (the ratio's variance over that of independent games, at least 1);
* :func:`compare_results`: two arena results of the same deals, paired deal by deal.
"""

from __future__ import annotations

import math
import os
from typing import Optional, Sequence, Union

import numpy as np
from numpy.typing import ArrayLike

Z95 = 1.959963984540054


def mean_ci(x: ArrayLike, z: float = Z95) -> tuple[float, float, float]:
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


def _wilson(p: float, n: float, z: float) -> tuple[float, float]:
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(max(0.0, p * (1 - p)) / n + z * z / (4 * n * n)) / d
    return c - h, c + h


def wilson_ci(wins: float, n: float, z: float = Z95) -> tuple[float, float, float]:
    """``(rate, low, high)``: a win rate and its Wilson score interval for ``wins`` in ``n``
    independent trials (``nan`` when n = 0; ``n`` may be an effective, fractional number)."""
    if n <= 0:
        return math.nan, math.nan, math.nan
    p = wins / n
    return (p, *_wilson(p, n, z))


def role_stats(games: Sequence[float], wins: Sequence[float], score: Sequence[float],
               z: float = Z95) -> dict:
    """One agent in one role, from per-deal arrays (one entry per deal of the arena, 0 where
    the agent did not hold the role): ``games`` in the role, ``wins`` among them and the
    summed ``score`` of those games.

    Returns ``games`` and ``deals`` (the deals in which the role was held), ``win_rate`` =
    sum(wins) / sum(games) and ``score`` = sum(score) / sum(games) with their 95% intervals
    ``win_rate_ci`` and ``score_ci`` over the deals, and ``effective_games``, the number of
    independent games the win rate's interval amounts to (module docstring).  With no game
    the values are ``nan``; with fewer than two deals the intervals are.
    """
    g, w, s = (np.asarray(a, np.float64) for a in (games, wins, score))
    if not (g.ndim == w.ndim == s.ndim == 1 and g.shape == w.shape == s.shape):
        raise ValueError(f"role_stats needs games, wins and score as 1-D arrays of one "
                         f"length (one entry per deal); got shapes {g.shape}, {w.shape}, "
                         f"{s.shape}")
    if not (np.isfinite(g).all() and np.isfinite(w).all() and np.isfinite(s).all()):
        raise ValueError("role_stats needs finite games, wins and score")
    if (g < 0).any() or (w < 0).any() or (w > g).any():
        raise ValueError("role_stats needs 0 <= wins <= games in every deal")
    n, total = g.size, float(g.sum())
    held = int((g > 0).sum())
    nan2 = [math.nan, math.nan]
    out = {"games": int(round(total)), "deals": held, "win_rate": math.nan,
           "win_rate_ci": nan2, "score": math.nan, "score_ci": list(nan2),
           "effective_games": math.nan}
    if total <= 0:
        return out
    p = float(w.sum()) / total
    m = float(s.sum()) / total
    out["win_rate"], out["score"] = p, m
    if n < 2:
        return out

    def ratio_var(num: np.ndarray, ratio: float) -> float:
        # the ratio estimator's variance over the n deals (deals without the role add 0)
        return n / (n - 1) * float(((num - ratio * g) ** 2).sum()) / (total * total)

    half = z * math.sqrt(ratio_var(s, m))
    out["score_ci"] = [m - half, m + half]
    binomial = p * (1 - p) / total  # the variance were the games independent
    if binomial > 0:
        deff = max(1.0, ratio_var(w, p) / binomial)
        n_eff = total / deff
    else:  # every game won (or lost): the deals holding the role are the units
        n_eff = float(held)
    out["effective_games"] = n_eff
    out["win_rate_ci"] = list(_wilson(p, n_eff, z))
    return out


# -- comparing two results ---------------------------------------------------------------------------


def names_agent(res: dict, label: str, name: str) -> bool:
    """Whether ``name`` (an agent's label or its spec) names the agent ``label`` of ``res``."""
    return label == name or (res.get("agent_specs") or {}).get(label) == name


def _label_of(res: dict, name: str) -> Optional[str]:
    """The label of the agent called ``name`` (its label or its spec) in ``res``."""
    return next((lab for lab in res["agents"] if names_agent(res, lab, name)), None)


def paired_scores(res: dict, opponent: str, path: str = "the result") -> tuple[str, np.ndarray]:
    """The agent against ``opponent`` in a two-agent arena result and, per deal, its score
    minus the opponent's (the duplicate-paired difference the arena's pairwise line averages)."""
    opp = _label_of(res, opponent)
    if opp is None:
        raise ValueError(f"{path}: no agent {opponent!r} (agents: {', '.join(res['agents'])})")
    others = [lab for lab in res["agents"] if lab != opp]
    if len(others) != 1:
        raise ValueError(f"{path}: compare takes results of two agents; this one has "
                         f"{len(res['agents'])} ({', '.join(res['agents'])})")
    try:
        per = res["score_per_deal"]
        d = np.asarray(per[others[0]], np.float64) - np.asarray(per[opp], np.float64)
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"{path}: no per-deal scores ({e!r}); rerun the arena") from None
    if d.ndim != 1 or len(d) != int(res["deals"]):
        raise ValueError(f"{path}: {len(d)} per-deal scores for {res['deals']} deals")
    return others[0], d


def compare_results(first: Union[str, os.PathLike], second: Union[str, os.PathLike],
                    opponent: str = "rules") -> dict:
    """Two arena results of the same deals, each an agent against ``opponent``, compared deal
    by deal: ``diff``, the mean over deals of (first agent - opponent) - (second agent -
    opponent), and its 95% interval ``ci``; ``first`` and ``second`` hold each result's agent
    (``agent``, its ``spec``), its own paired difference ``score`` and ``ci``.

    The results must share the game, options, seed and lineup mode, so that their deals are
    the same (the first ``deals`` deals of a seed are the same whatever their number, so the
    common prefix is compared when the numbers differ: ``deals``)."""
    from .arena_files import load_result

    (ra, pa), (rb, pb) = load_result(first), load_result(second)
    for key in ("game", "options", "seed", "lineup_mode"):
        if ra.get(key) != rb.get(key):
            raise ValueError(f"the results were played on different deals: {key} "
                             f"{ra.get(key)!r} in {pa!r}, {rb.get(key)!r} in {pb!r}")
    la, da = paired_scores(ra, opponent, pa)
    lb, db = paired_scores(rb, opponent, pb)
    n = min(len(da), len(db))
    if n < 2:
        raise ValueError(f"compare needs at least 2 common deals, the results have {n}")
    da, db = da[:n], db[:n]
    out = {"game": ra["game"], "options": ra.get("options", {}), "seed": ra["seed"],
           "deals": n, "opponent": opponent}
    for key, res, lab, d, path in (("first", ra, la, da, pa), ("second", rb, lb, db, pb)):
        m, lo, hi = mean_ci(d)
        out[key] = {"result": path, "agent": lab, "deals": int(res["deals"]),
                    "spec": (res.get("agent_specs") or {}).get(lab, lab), "score": m,
                    "ci": [lo, hi]}
    m, lo, hi = mean_ci(da - db)
    out["diff"], out["ci"] = m, [lo, hi]
    return out
