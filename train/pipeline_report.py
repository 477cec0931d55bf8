"""The learning curve (``curve.png``) and the one-page report (``report.md``) of a
``cardenvs train`` run (:mod:`train.pipeline`), made from the run directory's files: the
fits' and the fine-tuning's ``eval.csv``, the arena's result JSON, ``config.json`` and
``state.json``."""

from __future__ import annotations

import os
from typing import Any, Optional

from .curves import plot, read_arena, read_eval


def stage_start_minutes(pipe: Any) -> dict[str, float]:
    """The run minute each stage of the plan started at (the minutes spent before it)."""
    starts, t = {}, 0.0
    for st in pipe.config["stages"]:
        starts[st["name"]] = t / 60
        t += float(pipe.state["spent_s"].get(st["name"], 0.0))
    return starts


def write_curve(pipe: Any) -> Optional[str]:
    """``curve.png``: the fits' evaluations against ``rules``, the fine-tuning's against the
    rollout policy and the arena's result, over the run's minutes (95% CIs); its path, or
    ``None`` when no stage logged an evaluation."""
    starts = stage_start_minutes(pipe)
    fits, tune = [], []
    for st in pipe.config["stages"]:
        log = os.path.join(pipe.path(st.get("out", "")), "eval.csv")
        if st["kind"] not in ("fit", "finetune") or not os.path.exists(log):
            continue
        opponent = "rules" if st["kind"] == "fit" else "heuristic"
        for r in read_eval(log, opponent):
            r["train_s"] = float(r["train_s"]) + 60 * starts[st["name"]]
            (fits if st["kind"] == "fit" else tune).append(r)
    curves = []
    if fits:
        curves.append(("distill fits vs rules", fits, 0.0))
    if tune:
        curves.append(("fine-tuning vs the rollout policy", tune, 0.0))
    arena = pipe.state["done"].get("arena")
    if arena is not None:
        row = read_arena(pipe.path("arena"), "rules")
        row["train_s"] = 60 * starts["arena"]
        curves.append(("arena vs rules", [row], 0.0))
    if not curves:
        return None
    path = pipe.path("curve.png")
    plot(curves, path, f"{pipe.game}: cardenvs train, {pipe.config['hours']:g} h budget",
         "rules")
    return path


def _what(st: dict, res: dict) -> str:
    """One line of the report's table: what a stage did."""
    kind = st["kind"]
    if kind == "collect":
        who = st["teacher"] + (f", the network playing {st['player_share']:.0%} of the moves"
                               if st.get("player") else "")
        cut = " (stopped by its time)" if res.get("stopped_by_budget") else ""
        return f"{res['decisions']:,} decisions of `{who}` in {res['shards']} shards{cut}"
    if kind == "relabel":
        return f"`{res['block']}` decisions relabelled by `{res['teacher']}`"
    if kind == "fit":
        held = res.get("holdout_agreement") or "none held out"
        return (f"{res.get('epoch')} epochs from {st['init'] or 'scratch'}, context "
                f"`{st['context']}`; agreement with the teacher {res.get('train_agreement')} "
                f"(held out: {held})")
    if kind == "finetune":
        return f"{res['iterations']} iterations on the score from `{st['init']}`"
    if kind == "arena":
        mode = ", compact actions" if res.get("actions") == "compact" else ""
        return f"{res['deals']:,} duplicate deals against `rules`, seed {res['seed']}{mode}"
    return "this page and curve.png"


def write_report(pipe: Any, png: Optional[str]) -> str:
    """``report.md``: the command, the result against ``rules``, the curve and a table of
    the stages (minutes spent and budgeted, what each did); returns its path."""
    cfg, state, game = pipe.config, pipe.state, pipe.game
    total_min = 60 * float(cfg["hours"])
    actions = cfg.get("actions", "flat")
    opts = " ".join(f"--option {k}={v!r}" for k, v in cfg["options"].items())
    if actions != "flat":
        opts = " ".join(filter(None, (opts, f"--option actions={actions!r}")))
    lines = [f"# `cardenvs train {game}`: report", "",
             f"Command: `cardenvs train {game} {opts + ' ' if opts else ''}--hours "
             f"{cfg['hours']:g} --out {pipe.out}` ({cfg['jobs']} job(s)); every setting is in "
             f"`config.json`.  Budget {total_min:.1f} min, used "
             f"{sum(state['spent_s'].values()) / 60:.1f} min.", ""]
    arena = state["done"].get("arena")
    if arena is not None:
        lo, hi = arena["ci"]
        lines += [f"**Result**: `trained:{os.path.join(pipe.out, game + '.npz')}` against "
                  f"`rules`: **{arena['diff']:+.2f} [{lo:+.2f}, {hi:+.2f}]** points per deal "
                  f"(`{arena['pair']}`, paired over {arena['deals']:,} duplicate deals, 95% CI; "
                  f"seed {arena['seed']}, whose deals no stage trained on; `arena/`).", ""]
    lines += [f"**Action mode**: `{actions}`: " + (
        "the arena played the game with `actions=\"compact\"`, the network deciding whole "
        "plays through `cardenvs.compact_seat.CompactAdapter` (the result is the flat "
        "arena's, deal by deal).  " if actions == "compact" else
        "the arena played the game with whole actions.  ") +
        "The weights do not depend on the mode: the network scores whole plays, and the "
        "training stages played whole plays.", ""]
    if png:
        lines += [f"![learning curve]({os.path.basename(png)})", ""]
    lines += ["| stage | minutes (budget) | what it did |", "| --- | --- | --- |"]
    for st in cfg["stages"]:
        res = state["done"].get(st["name"])
        if st["kind"] == "report":
            res = {}
        spent = state["spent_s"].get(st["name"], 0.0) / 60
        what = _what(st, res) if res is not None else "not done"
        lines.append(f"| {st['name']} | {spent:.2f} ({st['share'] * total_min:.2f}) | {what} |")
    lines += ["", f"Play it: `cardenvs arena {game} --agents "
                  f"trained:{os.path.join(pipe.out, game + '.npz')},rules "
                  f"{opts + ' ' if opts else ''}--deals 2000 --seed 1`.", ""]
    path = pipe.path("report.md")
    with open(path + ".tmp", "w") as f:
        f.write("\n".join(lines))
    os.replace(path + ".tmp", path)
    return path

