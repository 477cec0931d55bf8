"""train.dmc with its self-play on Ray core actors (``--backend ray``): a local cluster of 2
CPUs, one actor, a few seconds of training; the learner gets the actor's batches and updates."""

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'cardenvs[rllib]')")
torch = pytest.importorskip("torch", reason="torch is not installed")

from cardenvs.train.dmc import DMC, Config  # noqa: E402


def test_dmc_trains_with_ray_actors(tmp_path):
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        cfg = Config(game="wakeng", out=str(tmp_path), minutes=5.0, max_updates=6, envs=16,
                     hidden=(32, 32), batch=128, eval_deals=0, progress=False, actors=1,
                     backend="ray", seed=1)
        t = DMC(cfg)
        before = [p.detach().clone() for p in t.net.parameters()]
        res = t.run()
    finally:
        ray.shutdown()
    assert res["updates"] == 6 and res["stopped"] is None
    # every sample came from the actor: 6 batches of 128 at least, from finished games
    assert res["samples"] >= 6 * 128 and res["games"] > 0 and res["decisions"] > res["samples"]
    assert any(not torch.equal(a, b) for a, b in zip(before, t.net.parameters()))
    assert (tmp_path / "wakeng.npz").exists()
