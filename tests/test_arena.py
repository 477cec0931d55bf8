"""The arena: statistics on hand-computed cases, lineups, duplicate play, the CLI, ``play``."""

from __future__ import annotations

import importlib
import io
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import cardenvs
from cardenvs.arena import (
    format_results, mean_ci, rotate_lineups, run_arena, solo_lineups, wilson_ci, write_results,
)
from cardenvs.cli import main
from cardenvs.play import parse_move, play


# -- statistics, by hand --------------------------------------------------------------------------


def test_mean_ci_known_case():
    # x = 1, -1, 3, 1: mean 1; deviations 0, -2, 2, 0 -> s^2 = 8/3, s = 1.6329932;
    # half width 1.959964 * 1.6329932 / sqrt(4) = 1.6003034
    m, lo, hi = mean_ci([1, -1, 3, 1])
    assert m == 1.0
    assert lo == pytest.approx(1 - 1.6003034, abs=1e-6)
    assert hi == pytest.approx(1 + 1.6003034, abs=1e-6)
    # constant scores: zero width; one value: no interval
    assert mean_ci([2.0, 2.0, 2.0]) == (2.0, 2.0, 2.0)
    m, lo, hi = mean_ci([5.0])
    assert m == 5.0 and math.isnan(lo) and math.isnan(hi)
    with pytest.raises(ValueError):
        mean_ci([])


def test_wilson_ci_known_case():
    # 8 wins in 10, z = 1.959964, z^2 = 3.841459: the interval is
    # (2np + z^2 -+ z sqrt(z^2 + 4np(1-p))) / (2(n + z^2))
    # = (19.841459 -+ 1.959964 * sqrt(10.241459)) / 27.682918 = (19.841459 -+ 6.272332) / 27.682918
    p, lo, hi = wilson_ci(8, 10)
    assert p == 0.8
    assert lo == pytest.approx(0.490162, abs=2e-6)
    assert hi == pytest.approx(0.943317, abs=2e-6)
    assert all(math.isnan(v) for v in wilson_ci(0, 0))


def test_rotate_lineups_balanced():
    two = rotate_lineups(2, 3)
    assert sorted(two) == sorted([(0, 1, 0), (1, 0, 0), (0, 0, 1), (1, 0, 1), (0, 1, 1), (1, 1, 0)])
    three = rotate_lineups(3, 3)
    assert sorted(three) == [(0, 1, 2), (1, 2, 0), (2, 0, 1)]
    assert sorted(rotate_lineups(2, 4)) == [(0, 1, 0, 1), (1, 0, 1, 0)]
    for k, n in ((2, 3), (3, 3), (2, 4), (3, 4), (4, 4)):
        lus = rotate_lineups(k, n)
        counts = np.zeros((n, k))
        for lu in lus:
            for seat, a in enumerate(lu):
                counts[seat, a] += 1
        assert (counts == counts[0, 0]).all(), (k, n)
    assert solo_lineups(2, 3, 0) == [(0, 1, 1), (1, 0, 0)]


# -- playing --------------------------------------------------------------------------------------


def test_arena_duplicate_results_are_consistent_and_reproducible():
    r1 = run_arena("doudizhu", "rules,random", deals=6, seed=3, progress=False)
    r2 = run_arena("doudizhu", ["rules", "random"], deals=6, seed=3, progress=False)
    assert r1["per_agent"] == r2["per_agent"]
    a = np.array(r1["score_per_deal"]["rules"])
    b = np.array(r1["score_per_deal"]["random"])
    # 2 agents at 3 seats over the 6 rotations: each holds 9 seats, and the game is
    # zero-sum, so the two scores of a deal cancel
    assert np.allclose(a + b, 0)
    assert r1["lineup_mode"] == "rotate" and len(r1["lineups"]) == 6
    m, lo, hi = mean_ci(a - b)
    assert r1["pairwise"]["rules - random"]["score_diff"] == pytest.approx(m)
    assert r1["pairwise"]["rules - random"]["ci"] == pytest.approx([lo, hi])
    assert r1["per_agent"]["rules"]["score"] == pytest.approx(a.mean())
    roles = r1["by_role"]["rules"]
    assert set(roles) == {"landlord", "farmer"}
    assert sum(st["games"] for st in roles.values()) <= 6 * 9


@pytest.mark.parametrize("game,deals", [("doudizhu", 40), ("wakeng", 40), ("doudizhu4", 16)])
def test_rules_beats_random(game, deals):
    res = run_arena(game, "rules,random", deals=deals, seed=0, progress=False)
    diff = res["pairwise"]["rules - random"]
    assert diff["ci"][0] > 0, diff
    assert res["per_agent"]["rules"]["score"] > 0.5
    assert res["per_agent"]["rules"]["win_rate"] > res["per_agent"]["random"]["win_rate"] + 0.2


def test_arena_solo_lineups_with_rlcard():
    pytest.importorskip("rlcard")
    res = run_arena("doudizhu", "rules,rlcard", deals=4, seed=1, progress=False)
    assert res["options"] == {"preset": "rlcard", "auction": "fixed"}
    assert res["lineup_mode"] == "solo"
    assert res["lineups"] == [["rules", "rlcard", "rlcard"], ["rlcard", "rules", "rules"]]
    # each agent is landlord once a deal and farmer twice
    assert res["by_role"]["rules"]["landlord"]["games"] == 4
    assert res["by_role"]["rules"]["farmer"]["games"] == 8


def test_arena_bad_input():
    with pytest.raises(ValueError, match="at least two agents"):
        run_arena("doudizhu", "rules", deals=2, progress=False)
    with pytest.raises(ValueError, match="unknown agent"):
        run_arena("doudizhu", "rules,nobody", deals=2, progress=False)
    with pytest.raises(ValueError, match="deals must be a positive integer"):
        run_arena("doudizhu", "rules,random", deals=0, progress=False)
    with pytest.raises(ValueError, match="unknown game"):
        run_arena("bridge", "rules,random", deals=2, progress=False)
    with pytest.raises(ValueError, match="needs preset='rlcard'"):
        run_arena("doudizhu", "rules,rlcard", deals=2, options={"preset": "seed"}, progress=False)
    with pytest.raises(ValueError, match="lineups='solo' needs the solo seat fixed"):
        run_arena("doudizhu", "rules,random", deals=2, lineups="solo", progress=False)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="jobs must be a positive integer"):
            run_arena("doudizhu", "rules,random", deals=2, progress=False, jobs=bad)
    with pytest.raises(ValueError, match="save_replays needs jobs=1"):
        run_arena("doudizhu", "rules,random", deals=2, progress=False, jobs=2,
                  save_replays="somewhere")


def test_cli_arena_writes_json_and_png(tmp_path, capsys):
    rc = main(["arena", "wakeng", "--agents", "rules,random", "--deals", "3", "--seed", "2",
               "--out", str(tmp_path), "--no-progress"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "rules - random" in text and "digger" in text
    # the files are named by the run's settings, as the last line says
    stem = f"arena_wakeng_rules_random_3deals_seed2_{_digest('wakeng', 'rules,random', 3, 2)}"
    assert text.strip().splitlines()[-1] == (f"wrote {tmp_path / stem}.json and "
                                             f"{tmp_path / stem}.png")
    data = json.loads((tmp_path / f"{stem}.json").read_text())
    assert data["deals"] == 3 and set(data["per_agent"]) == {"rules", "random"}
    png = tmp_path / f"{stem}.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rc = main(["arena", "wakeng", "--agents", "rules,rlcard", "--deals", "2", "--out", ""])
    assert rc == 2
    assert "3-player Dou Dizhu only" in capsys.readouterr().err


def _digest(game, agents, deals, seed, options=None, lineups="auto", jobs=1):
    from cardenvs.arena import run_settings, settings_digest

    return settings_digest(run_settings(game, agents.split(","), deals, seed, options, lineups,
                                        jobs))


def test_format_and_write_without_roles(tmp_path):
    res = {"game": "g", "options": {}, "agents": ["a", "b"], "deals": 2, "seed": 0,
           "lineup_mode": "rotate", "lineups": [["a", "b"], ["b", "a"]], "void_deals": 1,
           "decisions": 10, "by_role": {}, "score_per_deal": {"a": [1, 3], "b": [-1, -3]},
           "per_agent": {"a": {"score": 2.0, "score_ci": [0.0, 4.0], "win_rate": 1.0,
                               "win_rate_ci": [1.0, 1.0]},
                         "b": {"score": -2.0, "score_ci": [-4.0, 0.0], "win_rate": 0.0,
                               "win_rate_ci": [0.0, 0.0]}},
           "pairwise": {"a - b": {"score_diff": 4.0, "ci": [0.0, 8.0]}}}
    text = format_results(res)
    assert "void deals (every seat 0): 1" in text and "a - b: +4.000 [+0.000, +8.000]" in text
    j, p = write_results(res, tmp_path)
    assert json.loads(j.read_text())["pairwise"]["a - b"]["score_diff"] == 4.0
    assert p is not None and p.exists()


# -- lost results: atomic files, --out checked first, progress and --resume, Ctrl-C ---------------


def test_unwritable_out_fails_before_any_deal(tmp_path, monkeypatch, capsys):
    import cardenvs.arena as arena

    played = []
    monkeypatch.setattr(arena, "play_deal", lambda *a, **k: played.append(1) or (_ for _ in ()).throw(
        AssertionError("a deal was played")))
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    rc = main(["arena", "wakeng", "--agents", "rules,random", "--deals", "3",
               "--out", str(blocker / "sub"), "--no-progress"])
    assert rc == 2 and not played
    err = capsys.readouterr().err
    assert "cannot write the results to" in err and "Traceback" not in err


def test_png_written_atomically_over_an_earlier_result(tmp_path, monkeypatch):
    import matplotlib.figure

    res = run_arena("wakeng", "rules,random", deals=2, seed=1, progress=False)
    j, p = write_results(res, tmp_path)
    good_png, good_json = p.read_bytes(), j.read_text()

    def broken_savefig(self, fname, *args, **kwargs):  # dies half-way through the file
        if hasattr(fname, "write"):
            fname.write(b"\x89PNG partial")
        else:
            with open(fname, "wb") as f:
                f.write(b"\x89PNG partial")
        raise OSError("disk full")

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", broken_savefig)
    with pytest.raises(OSError, match="disk full"):
        write_results(res, tmp_path)
    assert p.read_bytes() == good_png  # the earlier PNG is whole
    assert j.read_text() == good_json
    assert sorted(x.name for x in tmp_path.iterdir()) == sorted([j.name, p.name])


def _interrupt_after(monkeypatch, calls: int):
    import cardenvs.arena as arena

    real = arena.play_deal
    count = {"n": 0}

    def flaky(*a, **k):
        count["n"] += 1
        if count["n"] == calls:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(arena, "play_deal", flaky)
    return real


def test_interrupted_arena_resumes_to_the_uninterrupted_result(tmp_path, monkeypatch):
    from cardenvs.arena import ArenaInterrupted, progress_path, run_settings

    full = run_arena("wakeng", "rules,random", deals=5, seed=4, progress=False)
    # the warm-up deal is call 1; 6 lineups a deal: call 1 + 6 * 2 + 3 is inside deal 3
    real = _interrupt_after(monkeypatch, 1 + 6 * 2 + 3)
    with pytest.raises(ArenaInterrupted, match="interrupted after 2 of 5 deals; progress saved"):
        run_arena("wakeng", "rules,random", deals=5, seed=4, progress=False, out_dir=tmp_path,
                  save_seconds=1e9)
    ppath = progress_path(tmp_path, run_settings("wakeng", ["rules", "random"], 5, 4, None,
                                                 "auto", 1))
    saved = json.loads(ppath.read_text())
    assert saved["done"] == 2
    import cardenvs.arena as arena

    monkeypatch.setattr(arena, "play_deal", real)
    for bad, what in (({"seed": 5}, "seed"), ({"deals": 6}, "deals"),
                      ({"options": {"bombs": False}}, "options")):
        kw = dict(game="wakeng", agents="rules,random", deals=5, seed=4)
        kw.update(bad)
        with pytest.raises(ValueError, match=f"other settings \\({what} "):
            run_arena(progress=False, out_dir=tmp_path, resume=True, **kw)
    res = run_arena("wakeng", "rules,random", deals=5, seed=4, progress=False,
                    out_dir=tmp_path, resume=True)
    assert res["score_per_deal"] == full["score_per_deal"]
    assert res["by_role"] == full["by_role"] and res["decisions"] == full["decisions"]
    with pytest.raises(ValueError, match="no saved progress"):
        run_arena("wakeng", "rules,random", deals=5, seed=4, progress=False,
                  out_dir=tmp_path / "elsewhere", resume=True)


def test_cli_ctrl_c_saves_progress_with_one_line(tmp_path, monkeypatch, capsys):
    _interrupt_after(monkeypatch, 1 + 6 + 2)
    rc = main(["arena", "wakeng", "--agents", "rules,random", "--deals", "4", "--seed", "2",
               "--out", str(tmp_path), "--no-progress"])
    assert rc == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("cardenvs: interrupted after 1 of 4 deals")
    assert "--resume" in err[0]
    stem = f"arena_wakeng_rules_random_4deals_seed2_{_digest('wakeng', 'rules,random', 4, 2)}"
    assert (tmp_path / f"{stem}.progress.json").exists()
    assert not (tmp_path / f"{stem}.json").exists()
    import cardenvs.arena as arena

    monkeypatch.undo()
    assert main(["arena", "wakeng", "--agents", "rules,random", "--deals", "4", "--seed", "2",
                 "--out", str(tmp_path), "--no-progress", "--resume"]) == 0
    assert json.loads((tmp_path / f"{stem}.json").read_text())["deals"] == 4
    # done: the progress file is gone
    assert not (tmp_path / f"{stem}.progress.json").exists()
    assert arena.play_deal.__name__ == "play_deal"


def test_png_shows_the_paired_difference_and_score_by_role(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from cardenvs.arena import plot_results

    res = run_arena("wakeng", "rules,random", deals=3, seed=2, progress=False)
    fig = plot_results(res, plt)
    axes = fig.axes
    titles = [ax.get_title() for ax in axes]
    assert titles[0] == "paired difference per deal (duplicate)"
    assert "score by role (95% CI over deals)" in titles
    assert "win rate by role (95% CI over deals)" in titles
    # the headline number is written on the figure, as the table prints it
    d = res["pairwise"]["rules - random"]
    label = f"{d['score_diff']:+.2f} [{d['ci'][0]:+.2f}, {d['ci'][1]:+.2f}]"
    assert label in [t.get_text() for t in axes[0].texts]
    for ax in axes:
        assert ax.get_xlabel() and ax.get_legend() is not None
    assert "points" in axes[0].get_xlabel() and "points" in axes[1].get_ylabel()
    plt.close(fig)
    by = res["by_role"]["rules"]["digger"]
    assert by["score_ci"][0] <= by["score"] <= by["score_ci"][1]


def test_compile_notice_only_when_the_cache_is_cold(monkeypatch, capsys):
    import cardenvs.arena as arena

    assert arena.kernels_cached("wakeng", ["rules"])  # the suite has compiled them
    assert not arena.kernels_cached("nosuchgame")
    run_arena("wakeng", "rules,random", deals=1, seed=0, progress=False)
    assert "compiling" not in capsys.readouterr().err
    monkeypatch.setattr(arena, "kernels_cached", lambda game, names=(): False)
    run_arena("wakeng", "rules,random", deals=1, seed=0, progress=False)
    err = capsys.readouterr().err
    assert "compiling the numba kernels for wakeng" in err and "kernels compiled in" in err


@pytest.mark.parametrize("name", sorted(cardenvs.GAMES))
def test_a_game_built_once_counts_as_cached(name, capsys):
    """After a game has been built and played (its kernels compiled and cached), the compile
    notice does not come again: the check finds the kernels of a game module split into
    several (Lanxi Wulong's and Da Niangniang's live in ``wulong_play`` ... ``niangniang_rules``)."""
    from cardenvs.core.compile_notice import compile_message, kernels_cached

    env = importlib.import_module(f"cardenvs.{cardenvs.GAMES[name]}").env()
    env.reset(seed=0)
    env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    assert kernels_cached(name)
    capsys.readouterr()
    code = f"from cardenvs import {cardenvs.GAMES[name]} as m; m.env().reset(seed=0)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert compile_message(name) not in out.stderr


def test_own_weights_as_an_agent(tmp_path):
    import shutil

    import cardenvs.agents.trained
    from cardenvs import agents

    src = agents.trained.default_weights_path("wakeng")  # the file `trained` loads
    mine = tmp_path / "my_wakeng.npz"
    shutil.copy(src, mine)
    res = run_arena("wakeng", f"trained:{mine},trained", deals=2, seed=0, progress=False)
    assert res["agents"] == ["trained:my_wakeng", "trained"]
    assert res["agent_specs"]["trained:my_wakeng"] == f"trained:{mine}"
    # the same weights as the shipped ones: every deal the same score
    a = np.array(res["score_per_deal"]["trained:my_wakeng"])
    assert np.allclose(a, res["score_per_deal"]["trained"])
    g = cardenvs.make_game("wakeng")
    assert agents.make_agent(f"trained:{mine}", g).path == str(mine)
    with pytest.raises(ValueError, match="no weight file"):
        run_arena("wakeng", f"trained:{tmp_path / 'none.npz'},rules", deals=1, progress=False)
    with pytest.raises(ValueError, match="only 'trained' takes an argument without a keyword"):
        agents.make_agent("rules:x", g)
    with pytest.raises(ValueError, match="the weights are for 'wakeng'"):
        run_arena("doudizhu", f"trained:{mine},rules", deals=1, progress=False)


def test_agent_specs_carry_constructor_keywords():
    from cardenvs import agents

    g = cardenvs.make_game("doudizhu")
    a = agents.make_agent("search:rollouts=64,max_candidates=3,epsilon=0.1,margin=inf,"
                          "prior=rules,bids=true", g)
    assert (a.rollouts, a.max_candidates, a.epsilon, a.margin, a.prior_name, a.bids) == (
        64, 3, 0.1, float("inf"), "rules", True)
    assert agents.make_agent("search:prior=none", g).prior_name is None
    assert agents.split_agents("search:rollouts=64,epsilon=0.1, rules,random") == [
        "search:rollouts=64,epsilon=0.1", "rules", "random"]
    with pytest.raises(ValueError, match="a KEY=VALUE keyword follows an agent spec"):
        agents.split_agents("rollouts=64,rules")
    for spec, message in [
            ("search:rollout=64", "unknown keyword 'rollout'; search takes rollouts, ms"),
            ("rules:depth=2", "rules takes no keywords"),
            ("search:epsilon=0.1,epsilon=0.2", "'epsilon' given twice"),
            ("search:rollouts=8,x", "'x' is not KEY=VALUE"),
            ("search:rollouts=0.5", "rollouts must be a positive int"),
            ("trained:weights=nowhere.npz", "no weight file")]:
        with pytest.raises(ValueError, match=message):
            agents.make_agent(spec, g)
    # through the arena: the keywords reach the agent (margin=inf plays the prior's move, so
    # search with prior=rules is rules move for move: every deal even), the spec is its label
    res = run_arena("doudizhu", "search:margin=inf,prior=rules,rules", deals=3, seed=0,
                    progress=False)
    assert res["agents"] == ["search:margin=inf,prior=rules", "rules"]
    assert res["score_per_deal"]["search:margin=inf,prior=rules"] == [0.0, 0.0, 0.0]
    assert res["agent_specs"]["search:margin=inf,prior=rules"] == "search:margin=inf,prior=rules"
    # and a search that does search is not rules move for move
    res = run_arena("doudizhu", "search:rollouts=64,prior=none,rules", deals=3, seed=0,
                    progress=False)
    assert any(v != 0 for v in res["score_per_deal"]["search:rollouts=64,prior=none"])


# -- playing in the terminal --------------------------------------------------------------------------


def test_play_a_whole_deal_from_scripted_input():
    lines = iter(["?", "#99", "zz", "#1"] + ["#1"] * 200)
    out = io.StringIO()
    rewards = play("doudizhu", "rules", seat=1, seed=5, input_fn=lambda _: next(lines), out=out)
    text = out.getvalue()
    assert rewards is not None and rewards.sum() == 0
    assert "move numbers run from 1 to" in text
    assert "unknown card 'Z'" in text or "no card play now" in text
    assert "your turn: player_1" in text and "rewards:" in text


def test_play_quits_on_q_and_eof():
    out = io.StringIO()
    assert play("wakeng", "random", seat=0, seed=1, input_fn=lambda _: "q", out=out) is None

    def eof(_):
        raise EOFError

    assert play("wakeng", "rules", seat=2, seed=1, input_fn=eof, out=io.StringIO()) is None
    # opponents by a spec with keywords (its commas are not a list of agents)
    out = io.StringIO()
    spec = "search:rollouts=16,max_candidates=2"
    assert play("doudizhu", spec, seat=0, seed=1, input_fn=lambda _: "q", out=out) is None
    assert f"player_1 = {spec}, player_2 = {spec}" in out.getvalue()
    with pytest.raises(ValueError, match="at least one agent"):
        play("doudizhu", "", seat=0, seed=1, input_fn=lambda _: "q", out=io.StringIO())


def test_parse_move_readings_and_errors():
    g = cardenvs.make_game("doudizhu")
    rows = g.table.rows_of_cards(g.deck.parse("333444555666"))
    legal = np.array(sorted(rows) + [g.pass_id], np.int64)
    # the rules page: 333444555666 is a 4-trio airplane or a 3-trio airplane with 3 singles
    with pytest.raises(ValueError, match="several ways"):
        parse_move(g, "333444555666", legal)
    assert len(rows) == 3
    assert parse_move(g, "444555666+333", legal) == g.table.find("444555666+333")
    plane = g.table.find("333444555666", "airplane")
    assert parse_move(g, f"#{list(legal).index(plane) + 1}", legal) == plane
    assert parse_move(g, "pass", legal) == g.pass_id
    with pytest.raises(ValueError, match="you cannot play 33 now"):
        parse_move(g, "33", legal)
    with pytest.raises(ValueError, match="bid 2' is not legal now"):
        parse_move(g, "bid 2", legal)


def test_errbar_is_never_negative():
    from cardenvs.arena import _errbar

    # a mean that rounding puts just outside its interval (every game scored the same)
    m, lo, hi = mean_ci([0.1] * 6)
    bars = _errbar(np.array([0.1, 2.0, 1.0]), [(lo, hi), (1.0, 4.0), (math.nan, math.nan)])
    assert (bars >= 0).all() and bars[:, 0].max() < 1e-12
    assert bars[:, 1].tolist() == [1.0, 2.0] and bars[:, 2].tolist() == [0.0, 0.0]


def test_error_bars_of_a_perfect_win_rate_are_not_negative():
    """Wilson's upper end of 34 wins in 34 games is 0.9999999999999999, below the rate 1.0:
    the bar is 0 there, not the negative value matplotlib refuses."""
    from cardenvs.arena import _errbar, wilson_ci

    rate, lo, hi = wilson_ci(34, 34)
    assert rate == 1.0 and hi < rate
    bars = _errbar(np.array([rate]), [(lo, hi)])
    assert bars[1, 0] == 0.0 and abs(bars[0, 0] - (1.0 - lo)) < 1e-12


# -- several processes (jobs > 1) -----------------------------------------------------------------


def test_parallel_arena_equals_serial_for_deterministic_agents():
    # `rules` draws no random numbers: the blocks' own agent seeds change nothing, so the
    # process pool must give the serial run's numbers deal by deal
    kw = dict(game="doudizhu", agents="rules,rules", deals=12, seed=5, progress=False)
    serial = run_arena(**kw)
    pooled = run_arena(jobs=2, **kw)
    assert pooled["score_per_deal"] == serial["score_per_deal"]
    assert pooled["decisions"] == serial["decisions"]
    assert pooled["void_deals"] == serial["void_deals"]
    for lab, roles in serial["by_role"].items():
        for role, st in roles.items():
            got = pooled["by_role"][lab][role]
            assert got["games"] == st["games"] and got["win_rate"] == st["win_rate"]
            assert got["score"] == pytest.approx(st["score"])
    assert pooled["deal_blocks"] == 10 and "deal_blocks" not in serial


def test_parallel_arena_same_for_any_jobs_and_resumes(tmp_path, monkeypatch):
    import cardenvs.arena as arena
    from cardenvs.arena import ArenaInterrupted, progress_path, run_settings

    kw = dict(game="wakeng", agents="rules,random", deals=25, seed=4, progress=False)
    three = run_arena(jobs=3, **kw)
    # interrupted in the parent when the second block comes back: one block is kept
    real = arena._block_done
    calls = {"n": 0}

    def flaky(finished, block):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        real(finished, block)

    monkeypatch.setattr(arena, "_block_done", flaky)
    with pytest.raises(ArenaInterrupted, match=r"interrupted after (5|10) of 25 deals; progress"):
        run_arena(jobs=2, out_dir=tmp_path, save_seconds=1e9, **kw)
    saved = json.loads(progress_path(tmp_path, run_settings(
        "wakeng", ["rules", "random"], 25, 4, None, "auto", 2)).read_text())
    assert len(saved["blocks"]) == 1 and saved["settings"]["deal_blocks"] == 10
    monkeypatch.setattr(arena, "_block_done", real)
    with pytest.raises(ValueError, match="other settings \\(deal_blocks 10, not None"):
        run_arena(out_dir=tmp_path, resume=True, **kw)  # jobs=1 plays another arena
    resumed = run_arena(jobs=2, out_dir=tmp_path, resume=True, **kw)
    assert resumed["score_per_deal"] == three["score_per_deal"]
    assert resumed["by_role"] == three["by_role"]
    assert resumed["decisions"] == three["decisions"]
    # the random agent's choices are seeded per block: another arena than the serial one
    serial = run_arena(**kw)
    assert serial["score_per_deal"] != three["score_per_deal"]


# -- compare ----------------------------------------------------------------------------------------


def _result(agents, per_deal, seed=0, game="wakeng", options=None):
    """A minimal arena result of two agents (what ``compare`` reads)."""
    return {"game": game, "options": options or {}, "agents": list(agents), "deals": len(per_deal[agents[0]]),
            "seed": seed, "lineup_mode": "rotate", "pairwise": {f"{agents[0]} - {agents[1]}": {}},
            "score_per_deal": per_deal, "agent_specs": {a: a for a in agents}}


def test_compare_known_case(tmp_path, capsys):
    from cardenvs.arena import compare_results

    a = tmp_path / "a.json"
    a.write_text(json.dumps(_result(["x", "rules"], {"x": [1, 3, 2], "rules": [-1, -3, -2]})))
    b = tmp_path / "b"
    b.mkdir()  # a folder holding one result, as `arena --out` leaves it
    (b / "arena_wakeng_rules_y.json").write_text(json.dumps(
        _result(["rules", "y"], {"y": [0, 1], "rules": [0, -1]})))
    c = compare_results(a, b)
    # per deal x - rules = 2, 6, 4 and y - rules = 0, 2: the 2 common deals differ by 2, 4:
    # mean 3, s = sqrt(2), half width 1.959964 * sqrt(2) / sqrt(2) = 1.959964
    assert c["deals"] == 2 and c["first"]["agent"] == "x" and c["second"]["agent"] == "y"
    assert c["diff"] == pytest.approx(3.0)
    assert c["ci"] == pytest.approx([3 - 1.959964, 3 + 1.959964], abs=1e-6)
    # x over those 2 deals: 2, 6: mean 4, s = 2 sqrt(2), half width 1.959964 * 2 = 3.919928
    assert c["first"]["score"] == pytest.approx(4.0)
    assert c["first"]["ci"] == pytest.approx([4 - 3.919928, 4 + 3.919928], abs=1e-6)
    assert c["second"]["score"] == pytest.approx(1.0)
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "2 deals (the first of 3 and 2)" in out and "first - second" in out
    assert "+3.000 [+1.040, +4.960]" in out


def test_compare_rejects_results_of_other_deals(tmp_path, capsys):
    from cardenvs.arena import compare_results

    def put(name, res):
        p = tmp_path / name
        p.write_text(json.dumps(res))
        return p

    base = put("a.json", _result(["x", "rules"], {"x": [1, 2], "rules": [-1, -2]}))
    with pytest.raises(ValueError, match="seed"):
        compare_results(base, put("s.json", _result(["x", "rules"], {"x": [1, 2], "rules": [0, 0]}, seed=1)))
    with pytest.raises(ValueError, match="options"):
        compare_results(base, put("o.json", _result(["x", "rules"], {"x": [1, 2], "rules": [0, 0]},
                                                    options={"open_hand": True})))
    with pytest.raises(ValueError, match="no agent 'rules'"):
        compare_results(base, put("h.json", _result(["x", "y"], {"x": [1, 2], "y": [0, 0]})))
    three = _result(["x", "y", "rules"], {"x": [1, 2], "y": [0, 0], "rules": [0, 0]})
    with pytest.raises(ValueError, match="two agents"):
        compare_results(base, put("t.json", three))
    with pytest.raises(ValueError, match="at least 2 common deals"):
        compare_results(base, put("one.json", _result(["x", "rules"], {"x": [1], "rules": [0]})))
    with pytest.raises(ValueError, match="not an arena result"):
        compare_results(base, put("bad.json", {"game": "wakeng"}))
    (tmp_path / "two").mkdir()
    for n in ("arena_a.json", "arena_b.json"):
        (tmp_path / "two" / n).write_text(base.read_text())
    with pytest.raises(ValueError, match="holds 2 arena results"):
        compare_results(base, tmp_path / "two")
    assert main(["compare", str(base), str(tmp_path / "nothing.json")]) == 2
    assert "no arena result at" in capsys.readouterr().err


def test_compare_two_arenas_of_the_same_deals(tmp_path):
    """Real arenas: the comparison equals the difference of their pairwise lines when the
    deals are the same in number, and the per-deal scores it pairs are the arena's own."""
    from cardenvs.arena import compare_results

    r1 = run_arena("wakeng", "random,rules", deals=4, seed=5, progress=False)
    r2 = run_arena("wakeng", "rules,rollout", deals=4, seed=5, progress=False)
    p1, _ = write_results(r1, tmp_path / "one")
    p2, _ = write_results(r2, tmp_path / "two")
    c = compare_results(p1, p2)
    assert c["first"]["score"] == pytest.approx(r1["pairwise"]["random - rules"]["score_diff"])
    assert c["second"]["score"] == pytest.approx(-r2["pairwise"]["rules - rollout"]["score_diff"])
    assert c["diff"] == pytest.approx(c["first"]["score"] - c["second"]["score"])
    assert c["second"]["spec"] == "rollout"
