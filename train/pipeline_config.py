"""The recipes of ``cardenvs train GAME`` (:mod:`train.pipeline`): the per-game settings
(:class:`GameConfig`, one per game in :data:`GAME_CONFIGS`; ``--set KEY=VALUE`` changes one,
:func:`game_config`) and the plan made from them and the budget when a run starts
(:func:`make_plan`: every stage's name, kind, share of the budget and settings, as
``config.json`` records them).  The runner and the command line are :mod:`train.pipeline`'s."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Optional

#: the arena's seed: its deals are 63-bit draws of ``SeedSequence(ARENA_SEED)``, none of them
#: a deal seed of the collections (``seed * 1_000_003 + i``) or of the fine-tuning
ARENA_SEED = 1
#: the opponent of the final arena
OPPONENT = "rules"
#: the version of the plan ``config.json`` records
PLAN_VERSION = 1


@dataclass(frozen=True)
class GameConfig:
    """The recipe of one game: every setting of every stage (:data:`GAME_CONFIGS`).

    ``share_*``: the stages' shares of the budget (they add up to 1); ``*_deal_s``: the
    expected seconds per deal of each teacher on one core, used only to size the collections'
    shards to the budget."""

    teacher: str = "rules"
    imitate_deals: int = 30000
    imitate_block: int = 100
    imitate_epochs: int = 6
    search: str = "search:prior=rules"
    dagger_rounds: int = 3
    dagger_deals: int = 6000
    dagger_block: int = 20
    dagger_epochs: int = 3
    player_share: float = 0.5
    #: a recipe's relabelling of one action block's labels, ``BLOCK=TEACHER`` ("" for none)
    relabel: str = ""
    context: str = "plan"
    hidden: str = "512,256,128"
    fit_eval_deals: int = 100
    finetune_lr: float = 1e-4
    finetune_lineups: str = "single"
    finetune_eval_deals: int = 1000
    finetune_eval_every: int = 50
    arena_deals: int = 2000
    teacher_deal_s: float = 0.1
    #: deals of the teacher's decisions one second of fitting covers (an epoch), used only to
    #: size the imitation's collection to its fit in a short budget
    fit_deals_per_s: float = 60.0
    search_deal_s: float = 1.0
    #: the least minutes a DAgger round is planned with (fewer rounds in a short budget)
    min_round_minutes: float = 2.0
    share_imitate: float = 0.15
    share_dagger: float = 0.45
    share_finetune: float = 0.32
    share_arena: float = 0.08

    def check(self) -> None:
        """A ``ValueError`` naming a setting out of its range."""
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if f.type in ("int", "float") and (isinstance(v, bool) or not isinstance(v, (int, float))
                                               or not math.isfinite(v)):
                raise ValueError(f"--set {f.name}: a number, got {v!r}")
        for name in ("imitate_deals", "imitate_block", "imitate_epochs", "dagger_rounds",
                     "dagger_deals", "dagger_block", "dagger_epochs", "arena_deals",
                     "finetune_eval_every"):
            if getattr(self, name) < 1:
                raise ValueError(f"--set {name}: must be >= 1, got {getattr(self, name)!r}")
        for name in ("fit_eval_deals", "finetune_eval_deals"):
            if getattr(self, name) < 0:
                raise ValueError(f"--set {name}: must be >= 0, got {getattr(self, name)!r}")
        for name in ("teacher_deal_s", "search_deal_s", "fit_deals_per_s", "min_round_minutes",
                     "finetune_lr"):
            if getattr(self, name) <= 0:
                raise ValueError(f"--set {name}: must be > 0, got {getattr(self, name)!r}")
        if not 0.0 <= self.player_share <= 1.0:
            raise ValueError(f"--set player_share: must lie in [0, 1], got {self.player_share!r}")
        shares = [getattr(self, f"share_{s}") for s in ("imitate", "dagger", "finetune", "arena")]
        if min(shares) < 0 or abs(sum(shares) - 1.0) > 1e-6:
            raise ValueError(f"--set share_*: the stages' shares must be >= 0 and add up to 1, "
                             f"got {shares}")
        if self.relabel and "=" not in self.relabel:
            raise ValueError(f"--set relabel: BLOCK=TEACHER, got {self.relabel!r}")


#: the per-game defaults: the recipes of docs/experiments/training/distill.md as one command
GAME_CONFIGS: dict[str, GameConfig] = {
    "doudizhu": GameConfig(search_deal_s=1.5),
    "doudizhu4": GameConfig(search_deal_s=3.0, teacher_deal_s=0.2, hidden="512,256,128"),
    "wakeng": GameConfig(context="plan_picks", relabel="bury=rules", search_deal_s=1.0),
    "niangniang": GameConfig(search_deal_s=3.0, teacher_deal_s=0.2),
    "wulong": GameConfig(search="search:rollouts=100,prior=rules", dagger_block=10,
                         search_deal_s=4.0, teacher_deal_s=0.3),
    "paodekuai": GameConfig(search_deal_s=1.0),
}


def game_config(game: str, overrides: Optional[dict] = None) -> GameConfig:
    """The :class:`GameConfig` of ``game`` with ``overrides`` (``--set``; each value cast to
    the field's type); a ``ValueError`` for an unknown game or setting."""
    from cardenvs.api import GAMES

    if game not in GAMES:
        raise ValueError(f"unknown game {game!r}; choose from: {', '.join(GAMES)}")
    cfg = GAME_CONFIGS[game]
    names = {f.name: f for f in dataclasses.fields(GameConfig)}
    changes: dict[str, Any] = {}
    for key, value in (overrides or {}).items():
        if key not in names:
            raise ValueError(f"--set {key}: no such setting; the settings are "
                             f"{', '.join(names)}")
        kind = {"int": int, "float": float, "str": str}[str(names[key].type)]
        if kind is str:
            changes[key] = str(value)
        elif isinstance(value, bool) or not isinstance(value, (int, float)) or (
                kind is int and float(value) != int(value)):
            raise ValueError(f"--set {key}: a{'n int' if kind is int else ' number'}, "
                             f"got {value!r}")
        else:
            changes[key] = kind(value)
    cfg = dataclasses.replace(cfg, **changes)
    cfg.check()
    return cfg


# ---------------------------------------------------------------------------------------------
# the plan: every stage's settings, fixed when the run starts
# ---------------------------------------------------------------------------------------------
def _block(budget_s: float, deal_s: float, most: int, jobs: int) -> int:
    """Deals per shard: a shard of each job takes about a tenth of the collection's time."""
    return int(max(1, min(most, budget_s / 10.0 / max(deal_s, 1e-3))))


def _eval_deals(budget_s: float, most: int, per_deal_s: float) -> int:
    """Evaluation deals worth a sixth of a stage's time (0 when fewer than 10 fit)."""
    n = min(most, int(budget_s / 6.0 / per_deal_s))
    return n if n >= 10 else 0


def make_plan(game: str, cfg: GameConfig, hours: float, jobs: int) -> list[dict]:
    """The stages of a run of ``hours``: name, kind, share of the budget and settings (module
    docstring).  Paths are relative to the run directory."""
    total = 3600.0 * hours
    s_dag = total * cfg.share_dagger
    rounds = max(1, min(cfg.dagger_rounds, int(s_dag / 60.0 / cfg.min_round_minutes)))
    im_c, im_f = cfg.share_imitate * 0.4, cfg.share_imitate * 0.6
    dg_c, dg_f = cfg.share_dagger / rounds * 0.6, cfg.share_dagger / rounds * 0.4
    fit = dict(context=cfg.context, hidden=cfg.hidden, eval_deals=0)
    stages = [
        dict(name="imitate.collect", kind="collect", share=im_c, out="imitate/data",
             teacher=cfg.teacher, seed=0, player=None,
             deals=int(min(cfg.imitate_deals, max(50, total * im_f * cfg.fit_deals_per_s
                                                  / cfg.imitate_epochs))),
             block=_block(total * im_c, cfg.teacher_deal_s, cfg.imitate_block, jobs)),
        dict(fit, name="imitate.fit", kind="fit", share=im_f, data=["imitate/data"],
             out="imitate/fit", init=None, epochs=cfg.imitate_epochs,
             eval_deals=_eval_deals(total * im_f, cfg.fit_eval_deals, 0.3))]
    labels = []
    prev = f"imitate/fit/{game}.npz"
    for r in range(1, rounds + 1):
        stages.append(dict(name=f"dagger{r}.collect", kind="collect", share=dg_c,
                           out=f"dagger{r}/data", teacher=cfg.search, deals=cfg.dagger_deals,
                           seed=r, player=prev, player_share=cfg.player_share,
                           block=_block(total * dg_c, cfg.search_deal_s, cfg.dagger_block, jobs)))
        data = f"dagger{r}/data"
        if cfg.relabel:
            block, _, teacher = cfg.relabel.partition("=")
            stages.append(dict(name=f"dagger{r}.relabel", kind="relabel", share=0.0,
                               data=data, out=f"dagger{r}/relabelled", block=block,
                               teacher=teacher))
            data = f"dagger{r}/relabelled"
        labels.append(data)
        stages.append(dict(fit, name=f"dagger{r}.fit", kind="fit", share=dg_f, data=list(labels),
                           out=f"dagger{r}/fit", init=f"imitate/fit/{game}.npz",
                           epochs=cfg.dagger_epochs,
                           eval_deals=_eval_deals(total * dg_f, cfg.fit_eval_deals, 0.3)))
        prev = f"dagger{r}/fit/{game}.npz"
    ft = total * cfg.share_finetune
    # about a dozen evaluations (an iteration takes seconds), all of them a sixth of the time
    every = max(1, min(cfg.finetune_eval_every, int(ft / 5.0 / 12)))
    n_evals = max(1.0, ft / 5.0 / every)
    stages.append(dict(name="finetune", kind="finetune", share=cfg.share_finetune, init=prev,
                       out="finetune", lr=cfg.finetune_lr, lineups=cfg.finetune_lineups,
                       eval_deals=_eval_deals(ft / n_evals, cfg.finetune_eval_deals, 0.1),
                       eval_every=every))
    stages.append(dict(name="arena", kind="arena", share=cfg.share_arena, out="arena",
                       deals=cfg.arena_deals, seed=ARENA_SEED))
    stages.append(dict(name="report", kind="report", share=0.0))
    return stages
