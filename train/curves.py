"""Learning curves of one or more training runs in one PNG: the evaluation against an
opponent (``rules`` by default) over training wall time, with the 95% CIs the trainer logged
(``eval.csv`` of ``train.dmc``, ``train.distill`` or ``train.finetune`` / a run directory with
that file): the paired difference per deal, network minus opponent, or the network's own
mean score when a log has no difference column (runs from before it was logged).

    python -m train.curves runs/dmc_wakeng runs/dmc_wakeng_lockstep --opponent rules --out curves.png
    python -m train.curves runs/a:engine runs/b:lockstep        # DIR:LABEL names a curve

A run resumed from a checkpoint continues its clock (``train_s`` counts every session), so a
curve spans all of its sessions.  A third field shifts a curve by minutes (``DIR:LABEL:MIN``,
e.g. the minutes of the run a ``--init`` warm start came from), and a fourth names the
opponent as that run logged it, when it is not ``--opponent``'s name (``DIR:LABEL:MIN:NAME``:
``train.finetune`` logs its starting file as ``init``, another run the same file by its name).

A recipe of several commands (``train.distill`` collections and fits) has no one log; its
curve is drawn from the arena results of its networks, each placed at the recipe minute its
network was ready (``--arena RESULT:MINUTES[:LABEL]``, repeatable; ``RESULT`` is the JSON
``cardenvs arena --out`` writes, or its directory; the points of one ``LABEL`` make one
curve, default ``--arena-label``).  The paired difference against ``--opponent`` and its 95% CI are
read from the result, so the PNG needs no hand-written table:

    python -m train.curves --arena runs/wk8/ar_f1:7.55 --arena runs/wk8/ar_f2:23.5 \
        --arena runs/wk8/ar_f3:38.9 --arena runs/wk8/ar_f4:55.38 --out distill_wakeng.png
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
from typing import Optional, Sequence


def read_eval(run: str, opponent: str) -> list[dict]:
    """The rows of ``run/eval.csv`` against ``opponent``, as floats where numeric."""
    path = run if run.endswith(".csv") else os.path.join(run, "eval.csv")
    if not os.path.exists(path):
        raise ValueError(f"no evaluation log at {path!r}")
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r.get("opponent") == opponent]
    return [{k: (float(v) if k != "opponent" and v not in ("", None) else v) for k, v in r.items()}
            for r in rows]


def read_arena(result: str, opponent: str) -> dict:
    """One evaluation row (``train_s`` 0; the caller places it) from an arena result:
    ``diff`` and ``diff_ci`` (half the 95% interval) of the pairing against ``opponent``
    (an agent's label or spec in the result; the sign turned when the opponent is named
    first), ``deals``.  ``result``: the JSON ``cardenvs arena --out DIR`` writes, or ``DIR``
    holding exactly one."""
    from cardenvs.arena import load_result, names_agent

    res, path = load_result(result)
    try:
        pairs, deals = res["pairwise"], int(res["deals"])
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"{path!r} is not an arena result ({e})") from None

    def is_opp(label: str) -> bool:
        return names_agent(res, label, opponent)

    for pair, st in pairs.items():
        left, _, right = pair.partition(" - ")
        if is_opp(right) == is_opp(left):
            continue
        sign = 1.0 if is_opp(right) else -1.0
        try:
            lo, hi = st["ci"]
            diff, half = sign * float(st["score_diff"]), (float(hi) - float(lo)) / 2
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"{path!r}: the pairing {pair!r} is malformed ({e!r})") from None
        return {"opponent": opponent, "train_s": 0.0, "diff": diff, "diff_ci": half,
                "deals": float(deals), "source": path}
    raise ValueError(f"{path!r} has no pairing against {opponent!r} (pairs: {', '.join(pairs) or 'none'})")


def arena_curves(specs: Sequence[str], opponent: str,
                 default_label: str = "arena") -> list[tuple[str, list[dict], float]]:
    """``--arena RESULT:MINUTES[:LABEL]`` specs as curves (one per label, ``default_label``
    where a spec names none, in the order the labels first appear; points by minutes)."""
    by_label: dict[str, list[dict]] = {}
    for spec in specs:
        parts = spec.split(":")
        if len(parts) not in (2, 3) or not parts[0]:
            raise ValueError(f"--arena {spec!r}: expected RESULT:MINUTES[:LABEL]")
        try:
            minutes = float(parts[1])
        except ValueError:
            raise ValueError(f"--arena {spec!r}: MINUTES must be a number, got {parts[1]!r}") from None
        row = read_arena(parts[0], opponent)
        row["train_s"] = 60.0 * minutes
        by_label.setdefault(parts[2] if len(parts) == 3 and parts[2] else default_label, []).append(row)
    return [(label, sorted(rows, key=lambda r: r["train_s"]), 0.0) for label, rows in by_label.items()]


def plot(curves: list[tuple[str, list[dict], float]], path: str, title: str, opponent: str) -> None:
    """``curves``: ``(label, rows, offset minutes)``; writes ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .common import eval_metric

    metric, what = eval_metric([r for _, rows, _ in curves for r in rows])
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for label, rows, off in curves:
        x = [off + r["train_s"] / 60 for r in rows]
        ax.errorbar(x, [r[metric] for r in rows], yerr=[r[f"{metric}_ci"] for r in rows],
                    marker="o", capsize=3,
                    label=f"{label} ({int(rows[-1]['deals'])} deals/point)" if rows else label)
    ax.axhline(0, color="grey", lw=0.8)
    ax.set(xlabel="training wall time (minutes)",
           ylabel=f"{what.replace('opponent', opponent)} (95% CI)", title=title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m train.curves", description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="*", help="run directories (or eval.csv files), "
                   "DIR[:LABEL[:MINUTES[:OPPONENT]]] (OPPONENT: its name in that run's log)")
    p.add_argument("--arena", action="append", default=[], metavar="RESULT:MINUTES[:LABEL]",
                   help="an arena result (JSON or its --out directory) as a point at MINUTES; "
                        "repeatable, one curve per LABEL (default: --arena-label)")
    p.add_argument("--arena-label", default="arena", metavar="LABEL",
                   help="the label of --arena points that name none")
    p.add_argument("--opponent", default="rules")
    p.add_argument("--out", default="curves.png")
    p.add_argument("--title", default=None)
    a = p.parse_args(argv)
    if not a.runs and not a.arena:
        p.error("give run directories or --arena results")
    curves = []
    try:
        for spec in a.runs:
            parts = spec.split(":")
            run = parts[0]
            label = parts[1] if len(parts) > 1 and parts[1] else os.path.basename(os.path.normpath(run))
            off = float(parts[2]) if len(parts) > 2 and parts[2] else 0.0
            name = parts[3] if len(parts) > 3 and parts[3] else a.opponent
            rows = read_eval(run, name)
            if not rows:
                raise ValueError(f"{run!r} has no evaluation against {name!r}")
            curves.append((label, rows, off))
        curves += arena_curves(a.arena, a.opponent, a.arena_label)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    plot(curves, a.out, a.title or f"score against {a.opponent} over training time", a.opponent)
    print(a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
