"""Self-play training for the cardenvs games (needs the ``train`` extra: torch, tqdm, matplotlib).

* ``python -m train.dmc GAME --minutes M --out DIR``: the DouZero-style Deep Monte-Carlo
  learner (:mod:`train.dmc`), which scores (state, action) pairs and exports numpy weights for
  the ``trained`` agent (:mod:`agents.trained`).
* ``cardenvs train GAME --hours H --out DIR`` (:mod:`train.pipeline`): the whole recipe of
  the shipped networks as one resumable command (imitation of ``rules``, DAgger rounds on
  ``search``'s labels, ``train.finetune``, an arena against ``rules`` and a report).
* ``python -m train.distill collect GAME --teacher search`` then ``fit GAME``: a network-only
  agent that imitates a teacher agent (:mod:`train.distill`; DAgger with ``--player``);
  ``python -m train.finetune GAME --init NPZ``: that network fine-tuned on its own score.
* :mod:`train.selfplay`: the self-play data engine every trainer can draw samples from
  (``SelfPlay(game, n).batches(policy_fn, B)``: games, observations, action features and
  Monte-Carlo targets in numba over :class:`cardenvs.vector.VectorGame`; ``ActorPool``
  processes); :mod:`train.ray_actors`: the same actors on Ray (``train.dmc --backend ray``);
  :mod:`train.quant`: int8 scoring for self-play's acting (``train.dmc --act-dtype int8``).
* :mod:`train.common`: what the trainers share (SIGTERM / Ctrl-C handling, the run
  directory's CSV logs and atomic checkpoints, the progress bar, evaluations, the common
  command-line arguments).
* ``python -m train.curves RUN_DIR ... --out curves.png``: learning curves (score against an
  opponent over training time, 95% CIs) of one or more runs.
* ``python -m train METHOD GAME ...`` runs ``train.METHOD`` (e.g. ``python -m train dmc wakeng``).
"""

if __name__ != "cardenvs.train":  # the checkout's folder by its bare name: one module, one name
    from cardenvs.subpackages import alias_bare_name

    alias_bare_name(__name__)
else:  # numba cache files a 0.1.0 checkout wrote under the bare name would break loading
    from pathlib import Path as _Path

    from cardenvs.subpackages import forget_bare_name_caches

    forget_bare_name_caches(_Path(__file__).resolve().parent)
