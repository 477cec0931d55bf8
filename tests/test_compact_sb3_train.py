"""benchmarks.compact_sb3_train: a (very short) training run writes its policy, JSON and table;
the arena agent composes exactly the play the compact env gets from the same policy."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import cardenvs  # noqa: E402
from benchmarks import compact_sb3_train as cst  # noqa: E402


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("compact_sb3")
    record = cst.run("doudizhu", 0.001, 4, out, n_envs=2, seed=0, hidden=32)
    return out, record


def test_a_short_run_writes_policy_json_and_table(run):
    out, record = run
    assert (out / "doudizhu_maskppo_compact.zip").is_file()
    saved = json.loads((out / "doudizhu.json").read_text())
    assert saved == json.loads(json.dumps(record))
    assert saved["train"]["steps"] >= 2 * 128 and saved["train"]["rounds"] == 1
    arena = saved["arena"]
    assert arena["deals"] == 4 and arena["pair"].endswith(" - random")
    lo, hi = arena["ci"]
    assert lo <= arena["score_diff"] <= hi
    table = (out / "README.md").read_text()
    assert "| doudizhu | 0.001 |" in table and f"{saved['train']['steps']:,}" in table


def test_agent_plays_the_compact_envs_composed_play(run):
    out, _ = run
    agent = cst.SB3CompactAgent("doudizhu", model=str(out / "doudizhu_maskppo_compact.zip"))
    env = cardenvs.doudizhu_v0.env(actions="compact", illegal="raise")
    raw = env.unwrapped
    L = raw.game.layout.size
    compared = 0
    for seed in range(3):
        env.reset(seed=seed)
        for name in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            if raw._compact.body < 0:  # a new play: what the agent would choose as a whole
                want = agent.act({"observation": obs["observation"][:L]},
                                 raw.flat_legal_actions())
                n_before = len(raw.history)
            action, _ = agent.model.predict(obs["observation"],
                                            action_masks=obs["action_mask"].astype(bool),
                                            deterministic=True)
            env.step(int(action))
            if len(raw.history) > n_before:
                assert raw.history[-1] == want
                compared += 1
    assert compared > 50


def test_agent_checks_its_model(run, tmp_path):
    out, _ = run
    with pytest.raises(ValueError, match="needs model=PATH"):
        cst.SB3CompactAgent("doudizhu")
    with pytest.raises(ValueError, match="compact space"):
        cst.SB3CompactAgent("paodekuai", model=str(out / "doudizhu_maskppo_compact.zip"))
    from cardenvs.agents import make_agent

    a = make_agent(f"{cst.AGENT_NAME}:model={out / 'doudizhu_maskppo_compact.zip'}",
                   "doudizhu", seed=0)
    g = a.game
    s = g.new_state()
    g.reset(s, 5)
    buf = np.zeros(g.n_actions, np.int64)
    k = g.legal(s, buf)
    obs = np.zeros(g.layout.size, np.float32)
    g.encode(s, g.current(s), obs)
    assert a.act({"observation": obs}, buf[:k]) in set(buf[:k].tolist())
