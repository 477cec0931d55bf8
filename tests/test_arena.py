"""The arena: statistics on hand-computed cases, lineups, duplicate play, the CLI, ``play``."""

from __future__ import annotations

import io
import json
import math

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


def test_cli_arena_writes_json_and_png(tmp_path, capsys):
    rc = main(["arena", "wakeng", "--agents", "rules,random", "--deals", "3", "--seed", "2",
               "--out", str(tmp_path), "--no-progress"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "rules - random" in text and "digger" in text
    data = json.loads((tmp_path / "arena_wakeng_rules_random.json").read_text())
    assert data["deals"] == 3 and set(data["per_agent"]) == {"rules", "random"}
    png = tmp_path / "arena_wakeng_rules_random.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rc = main(["arena", "wakeng", "--agents", "rules,rlcard", "--deals", "2", "--out", ""])
    assert rc == 2
    assert "3-player Dou Dizhu only" in capsys.readouterr().err


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
