"""Learning curves of one or more training runs in one PNG: the evaluation against an
opponent (``rules`` by default) over training wall time, with the 95% CIs the trainer logged
(``eval.csv`` of ``train.dmc``, ``train.exit`` or ``train.distill`` / a run directory with
that file): the paired difference per deal, network minus opponent, or the network's own
mean score when a log has no difference column (runs from before it was logged).

    python -m train.curves runs/dmc_wakeng runs/dmc_wakeng_lockstep --opponent rules --out curves.png
    python -m train.curves runs/a:engine runs/b:lockstep        # DIR:LABEL names a curve

A run resumed from a checkpoint continues its clock (``train_s`` counts every session), so a
curve spans all of its sessions.  ``--offset-minutes`` shifts a curve (``DIR:LABEL:MIN``, e.g.
the minutes of the run a ``--init`` warm start came from).
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
    p.add_argument("runs", nargs="+", help="run directories (or eval.csv files), DIR[:LABEL[:MINUTES]]")
    p.add_argument("--opponent", default="rules")
    p.add_argument("--out", default="curves.png")
    p.add_argument("--title", default=None)
    a = p.parse_args(argv)
    curves = []
    try:
        for spec in a.runs:
            parts = spec.split(":")
            run = parts[0]
            label = parts[1] if len(parts) > 1 and parts[1] else os.path.basename(os.path.normpath(run))
            off = float(parts[2]) if len(parts) > 2 else 0.0
            rows = read_eval(run, a.opponent)
            if not rows:
                raise ValueError(f"{run!r} has no evaluation against {a.opponent!r}")
            curves.append((label, rows, off))
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    plot(curves, a.out, a.title or f"score against {a.opponent} over training time", a.opponent)
    print(a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
