"""The arena's report: the text table and the PNG chart of a result (:mod:`cardenvs.arena`)."""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any

import numpy as np


def _f(x: float, signed: bool = True) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "nan"
    return f"{x:+.3f}" if signed else f"{x:.3f}"


def format_results(res: dict) -> str:
    """The results as a text table."""
    lines = [f"{res['game']}: {res['deals']} deals x {len(res['lineups'])} lineups "
             f"({res['lineup_mode']}), seed {res['seed']}, options {res['options']}"]
    lines.append(f"95% CIs over the {res['deals']} deals (the independent units: each deal is "
                 f"played once per lineup, a duplicate group)")
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
        lines.append("by role (win rate and mean score a game; 95% CIs over deals, the "
                     "independent units):")
        for lab, roles in res["by_role"].items():
            for role, st in roles.items():
                if st["games"] == 0:
                    lines.append(f"  {lab:<{w}} as {role:<10} games {0:>5}  (never held this role)")
                    continue
                lo, hi = st["win_rate_ci"]
                slo, shi = st.get("score_ci", (math.nan, math.nan))
                held = f" in {st['deals']:>4} deals" if "deals" in st else ""
                lines.append(f"  {lab:<{w}} as {role:<10} games {st['games']:>5}{held}  win "
                             f"{_f(st['win_rate'], False)} [{_f(lo, False)}, {_f(hi, False)}]  "
                             f"score {_f(st['score'])} [{_f(slo)}, {_f(shi)}]")
    return "\n".join(lines)


def format_comparison(c: dict) -> str:
    """The table ``cardenvs compare`` prints."""
    a, b = c["first"], c["second"]
    w = max(len(a["spec"]), len(b["spec"]), len("first - second"))
    opts = ", ".join(f"{k}={v}" for k, v in sorted(c["options"].items()))
    held = (a.get("deals"), b.get("deals"))
    note = "" if held[0] == held[1] else f" (the first of {held[0]} and {held[1]})"
    lines = [f"{c['game']}{' (' + opts + ')' if opts else ''}: {c['deals']} deals{note}, seed "
             f"{c['seed']}; each agent's score minus that of {c['opponent']}, paired by deal"]
    for x in (a, b):
        lines.append(f"  {x['spec']:<{w}}  {_f(x['score'])} [{_f(x['ci'][0])}, {_f(x['ci'][1])}]")
    lines.append(f"  {'first - second':<{w}}  {_f(c['diff'])} [{_f(c['ci'][0])}, "
                 f"{_f(c['ci'][1])}]")
    return "\n".join(lines)


def _errbar(values: np.ndarray, cis) -> np.ndarray:
    """``yerr`` of matplotlib from means and ``[low, high]`` intervals (nan -> no bar; an end a
    rounding error on the wrong side of the mean, as when every game scored the same or
    Wilson's upper end 0.9999999999999999 of a 100% win rate, -> 0: matplotlib refuses
    negative bars)."""
    lo = np.array([c[0] for c in cis], np.float64)
    hi = np.array([c[1] for c in cis], np.float64)
    return np.maximum(np.nan_to_num(np.vstack([values - lo, hi - values])), 0.0)


def plot_results(res: dict, plt: ModuleType) -> Any:
    """The arena's figure: the headline first, the paired score difference per deal of each
    pair of agents (95% CI), then each agent's score per deal, and for one-against-the-rest
    games the score and win rate by role.  ``plt``: ``matplotlib.pyplot``; returns its
    ``Figure``."""
    labs = res["agents"]
    has_roles = bool(res["by_role"])
    panels = 4 if has_roles else 2
    fig, axes = plt.subplots(1, panels, figsize=(4.6 * panels, 4.0))
    unit = "points per deal"
    # 1. paired differences (the headline)
    ax = axes[0]
    pairs = list(res["pairwise"])
    m = np.array([res["pairwise"][p]["score_diff"] for p in pairs])
    y = np.arange(len(pairs))[::-1]
    ax.errorbar(m, y, xerr=_errbar(m, [res["pairwise"][p]["ci"] for p in pairs]), fmt="o",
                color="#C44E52", capsize=5, label="mean, 95% CI")
    for yi, mi, p in zip(y, m, pairs):
        lo, hi = res["pairwise"][p]["ci"]
        ax.annotate(f"{mi:+.2f} [{lo:+.2f}, {hi:+.2f}]", (mi, yi), textcoords="offset points",
                    xytext=(0, 8), ha="center", fontsize=8)
    ax.axvline(0, color="k", lw=0.8, ls="--", label="no difference")
    ax.set_yticks(y, pairs)
    ax.set_ylim(-0.7, len(pairs) - 0.3)
    ax.set_xlabel(f"score difference ({unit})")
    ax.set_title("paired difference per deal (duplicate)")
    ax.legend(fontsize=8, loc="lower right")
    # 2. score per deal of each agent
    ax = axes[1]
    x = np.arange(len(labs))
    m = np.array([res["per_agent"][a]["score"] for a in labs])
    ax.bar(x, m, yerr=_errbar(m, [res["per_agent"][a]["score_ci"] for a in labs]), capsize=4,
           color="#4C72B0", label="mean, 95% CI")
    ax.axhline(0, color="k", lw=0.6)
    ax.set_xticks(x, labs)
    ax.set_xlabel("agent")
    ax.set_ylabel(f"score ({unit})")
    ax.set_title("score per deal")
    ax.legend(fontsize=8)
    if has_roles:
        roles = list(next(iter(res["by_role"].values())))
        wdt = 0.8 / len(roles)
        for ax, key, ylabel, title in (
                (axes[2], "score", "score (points per game)",
                 "score by role (95% CI over deals)"),
                (axes[3], "win_rate", "win rate (share of games won)",
                 "win rate by role (95% CI over deals)")):
            for i, role in enumerate(roles):
                st = [res["by_role"][a][role] for a in labs]
                v = np.array([s[key] for s in st], np.float64)
                ax.bar(x + (i - (len(roles) - 1) / 2) * wdt, np.nan_to_num(v), wdt, label=role,
                       yerr=_errbar(v, [s.get(f"{key}_ci", [math.nan, math.nan]) for s in st]),
                       capsize=3)
            ax.set_xticks(x, labs)
            ax.set_xlabel("agent")
            ax.set_ylabel(ylabel)
            ax.set_title(title)
            ax.legend(fontsize=8, title="role")
            if key == "win_rate":
                ax.set_ylim(0, 1)
            else:
                ax.axhline(0, color="k", lw=0.6)
    fig.suptitle(f"{res['game']}: {res['deals']} duplicate deals x {len(res['lineups'])} "
                 f"lineups, seed {res['seed']}")
    fig.tight_layout()
    return fig
