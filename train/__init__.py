"""Self-play training for the cardenvs games (needs the ``train`` extra: torch, tqdm, matplotlib).

* ``python -m train.dmc GAME --minutes M --out DIR``: the DouZero-style Deep Monte-Carlo
  learner (:mod:`train.dmc`), which scores (state, action) pairs and exports numpy weights for
  the ``trained`` agent (:mod:`agents.trained`).
* ``python -m train METHOD GAME ...`` runs ``train.METHOD`` (e.g. ``python -m train dmc wakeng``).
"""
