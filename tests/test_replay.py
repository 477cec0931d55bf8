"""Replays (cardenvs.replay): every game, many seeds, reproduced exactly; bad files rejected."""

from __future__ import annotations

import importlib
import json
import pickle

import numpy as np
import pytest

import cardenvs
from cardenvs import replay as R
from cardenvs.core.state import NREDEAL, hand_off, kitty_off, played_off
from cardenvs.replay_html import main_replay, render_html

CONFIGS = [
    ("doudizhu", {}),
    ("doudizhu", {"all_pass": "redeal", "spring": True}),
    ("doudizhu4", {}),
    ("wakeng", {}),
    ("wakeng", {"open_hand": True, "reveal_kitty": True}),
    ("niangniang", {}),
    ("niangniang", {"first_niangniang": "reveal_choice"}),
    ("niangniang", {"match": True, "target_score": 8}),
    ("wulong", {}),
    ("wulong", {"wild_jokers": "big_only"}),
    ("paodekuai", {}),
    ("paodekuai", {"deck": "15", "reward": "win_loss"}),
]
SEEDS = range(6)


def make(name, **opts):
    return importlib.import_module(f"cardenvs.{cardenvs.GAMES[name]}").env(**opts)


def play_recorded(env, seed, policy_seed, reset_options=None, pass_bias=0.0):
    """Play a random game; return the trajectory: per step the mover, action, state after,
    every agent's observation and mask, rewards; plus each agent's reward sum."""
    env.reset(seed=seed, options=reset_options)
    u = env.unwrapped
    rng = np.random.default_rng(policy_seed)
    steps = []
    total = {a: 0.0 for a in env.possible_agents}
    for agent in env.agent_iter():
        obs, r, term, trunc, info = env.last()
        total[agent] += r
        if term or trunc:
            env.step(None)
            continue
        legal = env.unwrapped.legal_actions()
        if u.game.pass_id in legal and rng.random() < pass_bias:
            a = u.game.pass_id
        else:
            a = int(legal[rng.integers(len(legal))])
        before = u.state_vec.copy()
        env.step(a)
        steps.append({
            "seat": u.possible_agents.index(agent), "action": a, "before": before,
            "state": u.state_vec.copy(),
            "obs": [u.observe(x) for x in u.possible_agents],
            "rewards": dict(env.rewards),
            "term": dict(env.terminations), "trunc": dict(env.truncations),
        })
    return steps, total


def zones_of(game, s):
    n = game.n_players
    z = {f"hand {i}": s[hand_off(i):hand_off(i) + 16] for i in range(n)}
    z.update({f"played {i}": s[played_off(n, i):played_off(n, i) + 16] for i in range(n)})
    z[R.PILE_NAMES[game.info.name]] = s[kitty_off(n):kitty_off(n) + 16]
    if game.info.name == "wakeng":
        from cardenvs.games.wakeng import BURIED

        z["buried"] = s[BURIED:BURIED + 16]
    return {k: v.copy() for k, v in z.items()}


def new_deal_started(game, before, after):
    """A new deal from the state fields (independently of how the replay detects it)."""
    if game.info.name == "niangniang":
        return (game.hands_played(after) > game.hands_played(before) and not game.done(after)) \
            or (before[0] == 0 and after[0] != 0)  # the 亮3 reveal phase (0) ended: dealt
    return after[NREDEAL] > before[NREDEAL]


@pytest.mark.parametrize("name,opts", CONFIGS, ids=[f"{n}-{'-'.join(map(str, o.values())) or 'default'}"
                                                   for n, o in CONFIGS])
def test_replay_reproduces_every_game(name, opts):
    seen_new_deal = False
    for seed in SEEDS:
        env = make(name, **opts)
        steps, total = play_recorded(env, seed, 100 + seed, pass_bias=0.3)
        g = env.unwrapped.game
        rep = env.unwrapped.replay()
        text = R.dumps(rep)
        back = R.loads(text)
        assert back == json.loads(text) == rep
        # independent checks against the env
        assert rep["game"] == name and rep["seed"] == seed and rep["options"] == {
            "illegal": "lose", "illegal_reward": -1.0, "info_legal_actions": False,
            "actions": "flat", **opts}
        assert len(rep["actions"]) == len(steps)
        first = make(name, **opts)
        first.reset(seed=seed)
        s0 = first.unwrapped.state_vec
        if name != "niangniang" or opts.get("first_niangniang") != "reveal_choice":
            assert rep["deals"][0]["hands"] == [g.deck.format(s0[hand_off(i):hand_off(i) + 16])
                                                for i in range(g.n_players)]
        pile = R.PILE_NAMES[name]
        assert rep["deals"][0]["piles"][pile] == g.deck.format(
            s0[kitty_off(g.n_players):kitty_off(g.n_players) + 16])
        deal_no = 0
        for k, (st, a) in enumerate(zip(steps, rep["actions"])):
            assert a["seat"] == st["seat"] and a["id"] == st["action"]
            assert a["action"] == env.unwrapped.action_to_string(st["action"])
            if new_deal_started(g, st["before"], st["state"]):
                deal_no += 1
                seen_new_deal = True
                assert a["deal"] == deal_no
                d = rep["deals"][deal_no]
                assert d["start"] == k + 1
                assert d["hands"] == [g.deck.format(st["state"][hand_off(i):hand_off(i) + 16])
                                      for i in range(g.n_players)]
                continue
            assert "deal" not in a
            zb, za = zones_of(g, st["before"]), zones_of(g, st["state"])
            net = {z: np.zeros(16, np.int64) for z in zb}
            for src, dst, cards in a.get("moves", []):
                c = g.deck.parse(cards)
                if src is not None:
                    net[src] -= c
                if dst is not None:
                    net[dst] += c
            for z in zb:
                assert np.array_equal(net[z], za[z] - zb[z]), (k, z, a)
            if "play" in a and name == "wulong" and not g.done(st["state"]):
                want = g.play_string(st["state"])  # plays without stand-ins: the row's string
                assert a["play"] == want if "[" in want else "[" not in a["play"]
        assert len(rep["deals"]) == deal_no + 1
        assert rep["result"]["rewards"] == [total[x] for x in env.possible_agents]
        # the loaded replay steps to the same states, observations and rewards
        env2 = R.make_env(back)
        u2 = env2.unwrapped
        for st in steps:
            assert u2.agent_selection == f"player_{st['seat']}"
            env2.step(st["action"])
            assert np.array_equal(u2.state_vec, st["state"])
            for o1, x in zip(st["obs"], u2.possible_agents):
                o2 = u2.observe(x)
                assert np.array_equal(o1["observation"], o2["observation"])
                assert np.array_equal(o1["action_mask"], o2["action_mask"])
            assert env2.rewards == st["rewards"]
            assert env2.terminations == st["term"] and env2.truncations == st["trunc"]
        assert R.reproduce(back).unwrapped.state_vec.tolist() == steps[-1]["state"].tolist()
    if (name, opts) in (("doudizhu", {"all_pass": "redeal", "spring": True}),
                        ("niangniang", {"match": True, "target_score": 8}),
                        ("niangniang", {"first_niangniang": "reveal_choice"})):
        assert seen_new_deal, "these options should have produced a second deal"


def test_niangniang_match_lists_every_hand_with_its_scores():
    env = make("niangniang", match=True, target_score=10)
    steps, total = play_recorded(env, 11, 5)
    rep = env.unwrapped.replay()
    g = env.unwrapped.game
    assert len(rep["deals"]) == g.hands_played(env.unwrapped.state_vec) >= 2
    paid = np.zeros(4)
    for d in rep["deals"]:
        assert len(d["hands"]) == 4 and all(len(h) == 10 for h in d["hands"])
        assert len(d["piles"]["bottom"]) == 14
        paid += d["result"]["scores"]
        assert sorted(d["result"]["places"]) == [1, 2, 3, 4]
    assert paid.tolist() == [total[a] for a in env.possible_agents]
    assert rep["result"]["places"] == g.last_places(env.unwrapped.state_vec)
    assert rep["deals"][0]["state"]["totals"] == [0, 0, 0, 0]
    assert rep["deals"][1]["state"]["totals"] == rep["deals"][0]["result"]["scores"]
    assert rep["deals"][1]["state"]["hands_played"] == 1


def test_play_cards_matches_the_engine_on_niangniang_plays():
    """The physical cards worked out for a hand-ending play (play_cards) are what the engine
    takes from the hand on every other play."""
    g = cardenvs.make_game("niangniang")
    rng = np.random.default_rng(3)
    s = g.new_state()
    buf = np.zeros(g.n_actions, np.int64)
    T = len(g.table)
    checked = 0
    for _ in range(40):
        g.reset(s, int(rng.integers(2**62)))
        pending, picked, hand0 = -1, np.zeros(16, np.int64), None
        while not g.done(s):
            k = g.legal(s, buf)
            a = int(buf[rng.integers(k)])
            seat = g.current(s)
            if a < T:
                pending, picked = a, np.zeros(16, np.int64)
                hand0 = s[hand_off(seat):hand_off(seat) + 16].copy()
            elif g.block_of(a) == "joker" and g.action_to_string(a).startswith("joker as "):
                picked[g.deck.index(g.action_to_string(a)[-1])] += 1
            before = s[played_off(4, seat):played_off(4, seat) + 16].copy()
            g.step(s, a)
            moved = s[played_off(4, seat):played_off(4, seat) + 16] - before
            if moved.any() and not g.done(s):
                assert np.array_equal(R.play_cards(g, hand0, pending, picked), moved)
                checked += 1
    assert checked > 500


def test_replay_without_seed_custom_deal_pickle_and_set_state():
    # a reset that continues the env's generator records the generator state
    env = make("wakeng")
    play_recorded(env, 4, 0)
    env.reset()
    u = env.unwrapped
    rng = np.random.default_rng(1)
    while not u.game.done(u.state_vec):
        legal = u.legal_actions()
        env.step(int(legal[rng.integers(len(legal))]))
    rep = R.loads(R.dumps(u.replay()))
    assert rep["seed"] is None and rep["rng_state"]["bit_generator"] == "PCG64"
    assert np.array_equal(R.reproduce(rep).unwrapped.state_vec, u.state_vec)
    # a custom deal
    hands = ["3333444455556666B", "77778888999TTTTJJ", "JJQQQQKKKKAAAA222"]
    env = make("doudizhu")
    steps, _ = play_recorded(env, 9, 2, reset_options={"hands": hands, "kitty": "9R2",
                                                       "landlord": 1, "bid": 2})
    rep = env.unwrapped.replay(players=["a", "b", "c"], meta={"note": "custom"})
    assert rep["reset_options"]["kitty"] == "9R2" and rep["deals"][0]["hands"][1] == \
        "777788889999TTTTJJ2R"  # the landlord has taken the kitty before the first action
    back = R.loads(R.dumps(rep))
    assert back["players"] == ["a", "b", "c"] and back["meta"] == {"note": "custom"}
    assert np.array_equal(R.reproduce(back).unwrapped.state_vec, steps[-1]["state"])
    # mid-game pickling and set_state carry the replay's deal
    env = make("wulong")
    env.reset(seed=21)
    u = env.unwrapped
    for _ in range(30):
        env.step(int(u.legal_actions()[0]))
    clone = pickle.loads(pickle.dumps(env))
    assert clone.unwrapped.replay() == u.replay()
    other = make("wulong")
    other.reset(seed=99)
    other.unwrapped.set_state(u.get_state())
    assert other.unwrapped.replay() == u.replay()
    with pytest.raises(ValueError, match="reset"):
        make("wulong").unwrapped.replay()


def test_replay_of_an_illegal_move_ending():
    env = make("doudizhu4")
    env.reset(seed=2)
    u = env.unwrapped
    for _ in range(6):
        env.step(int(u.legal_actions()[-1]))
    bad = next(x for x in range(u.game.n_actions) if x not in set(u.legal_actions().tolist()))
    seat = u.possible_agents.index(u.agent_selection)
    env.step(bad)
    rep = R.loads(R.dumps(u.replay()))
    assert rep["result"]["illegal_move"] == seat and rep["result"]["rewards"][seat] == -1
    env2 = R.reproduce(rep)
    assert env2.rewards == env.rewards


# -- bad input ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ddz_text():
    env = make("doudizhu")
    play_recorded(env, 5, 0)
    return R.dumps(env.unwrapped.replay())


def _edit(text, fn):
    rep = json.loads(text)
    fn(rep)
    return R.dumps(rep)


def _line_of_action(text, k):
    lines = text.splitlines()
    return lines.index(' "actions": [') + 2 + k


def test_bad_version_truncation_and_foreign_files(ddz_text):
    with pytest.raises(ValueError, match=r"line 3 \(version\): replay format version 2; this "
                                         r"cardenvs reads version 1"):
        R.loads(_edit(ddz_text, lambda r: r.update(version=2)))
    cut = ddz_text[: len(ddz_text) // 2]
    with pytest.raises(ValueError, match=r"line \d+ column \d+: not valid JSON .*truncated"):
        R.loads(cut)
    with pytest.raises(ValueError, match="not a cardenvs replay"):
        R.loads(json.dumps({"format": "something-else", "version": 1}))
    with pytest.raises(ValueError, match="a replay is a JSON object"):
        R.loads("[1, 2]")
    with pytest.raises(ValueError, match=r"\(game\): unknown game 'chess'"):
        R.loads(_edit(ddz_text, lambda r: r.update(game="chess")))
    # a file cut at a line boundary is valid JSON only if the lists were dropped whole
    with pytest.raises(ValueError, match=r"'actions' is missing"):
        R.loads(_edit(ddz_text, lambda r: r.pop("actions")))
    with pytest.raises(ValueError, match=r"\(deal_seed\): deal_seed .* edited"):
        R.loads(_edit(ddz_text, lambda r: r.update(deal_seed=r["deal_seed"] + 1)))


def test_edited_actions_are_named_by_line(ddz_text):
    rep = json.loads(ddz_text)
    k = next(i for i, a in enumerate(rep["actions"]) if "play" in a and i > 3)
    line = _line_of_action(ddz_text, k)
    assert f'"id": {rep["actions"][k]["id"]}' in ddz_text.splitlines()[line - 1]

    illegal_id = _an_illegal_id(rep, k)
    with pytest.raises(ValueError, match=rf"line {line} \(actions\[{k}\]\): action \d+ \('.*'\) "
                                         rf"is illegal for player_\d here .*legal:"):
        R.loads(_edit(ddz_text, lambda r: r["actions"][k].update(id=illegal_id)))
    with pytest.raises(ValueError, match=rf"line {line} \(actions\[{k}\]\): 'action' is "
                                         rf"'nonsense' in the file, but the game gives"):
        R.loads(_edit(ddz_text, lambda r: r["actions"][k].update(action="nonsense")))
    with pytest.raises(ValueError, match=rf"line {line} \(actions\[{k}\]\): seat 7 acts"):
        R.loads(_edit(ddz_text, lambda r: r["actions"][k].update(seat=7)))
    with pytest.raises(ValueError, match=rf"line {line} \(actions\[{k}\]\): 'id' must be"):
        R.loads(_edit(ddz_text, lambda r: r["actions"][k].update(id="3")))
    n = len(rep["actions"])
    with pytest.raises(ValueError, match=rf"line {_line_of_action(ddz_text, n)} "
                                         rf"\(actions\[{n}\]\): the game is already over"):
        R.loads(_edit(ddz_text, lambda r: r["actions"].append(dict(r["actions"][-1]))))
    with pytest.raises(ValueError, match=r"\(deals\[0\]\): 'hands' is .* in the file"):
        R.loads(_edit(ddz_text, lambda r: r["deals"][0]["hands"].reverse()))
    with pytest.raises(ValueError, match=r"\(result\): 'rewards' is \[9, 9, 9\]"):
        R.loads(_edit(ddz_text, lambda r: r["result"].update(rewards=[9, 9, 9])))


def _an_illegal_id(rep, k):
    """The lowest action id that is illegal before action ``k`` of ``rep``."""
    env = R.make_env(rep)
    for a in rep["actions"][:k]:
        env.step(a["id"])
    legal = set(env.unwrapped.legal_actions().tolist())
    return next(x for x in range(env.unwrapped.game.n_actions) if x not in legal)


def test_cli_writes_nothing_for_a_bad_file(tmp_path, ddz_text, capsys):
    from cardenvs.cli import main

    bad = tmp_path / "bad.json"
    bad.write_text(_edit(ddz_text, lambda r: r.update(version=2)))
    out = tmp_path / "out.html"
    assert main(["replay", str(bad), "--html", str(out)]) == 2
    assert "version 2" in capsys.readouterr().err
    assert not out.exists() and list(tmp_path.iterdir()) == [bad]
    good = tmp_path / "good.json"
    good.write_text(ddz_text)
    assert main(["replay", str(good), "--html", str(out)]) == 0
    page = out.read_text()
    assert page == render_html(json.loads(ddz_text))
    for ref in ("http://", "https://", "<link", "<script src", "@import", "url("):
        assert ref not in page.replace('"http', "")  # no network: nothing loads from elsewhere
    assert main(["replay", str(good)]) == 0
    printed = capsys.readouterr().out
    assert json.loads(ddz_text)["deals"][0]["hands"][0] in printed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json", "good.json", "out.html"]
    assert main_replay(str(good))["game"] == "doudizhu"


def test_arena_saves_all_or_the_most_lopsided_deals(tmp_path):
    from cardenvs.arena import run_arena

    res = run_arena("wakeng", "random,rules", deals=3, seed=1, save_replays=tmp_path / "all",
                    progress=False)
    files = sorted((tmp_path / "all").iterdir())
    assert len(files) == 3 * len(res["lineups"]) == len(res["replays"])
    per_deal = {}
    for f in files:
        rep = R.load(f)
        d = rep["meta"]["arena_deal"]
        assert rep["meta"]["rewards"] == rep["result"]["rewards"]
        lu = res["lineups"][rep["meta"]["lineup"]]
        assert rep["players"] == lu
        for seat, lab in enumerate(lu):
            per_deal.setdefault(d, {}).setdefault(lab, []).append(rep["result"]["rewards"][seat])
    for d, by in per_deal.items():
        for lab, xs in by.items():
            assert np.mean(xs) == pytest.approx(res["score_per_deal"][lab][d])
    top = run_arena("wakeng", "random,rules", deals=3, seed=1, save_replays=tmp_path / "top",
                    save_replays_top=1, progress=False)
    spread = np.ptp(np.array([top["score_per_deal"][x] for x in top["agents"]]), axis=0)
    want = int(np.argmax(spread))
    names = sorted(p.name for p in (tmp_path / "top").iterdir())
    assert names == sorted(f"deal{want:05d}_lineup{i}.json" for i in range(len(top["lineups"])))
    with pytest.raises(ValueError, match="save_replays_top needs save_replays"):
        run_arena("wakeng", "random,rules", deals=1, save_replays_top=2, progress=False)


@pytest.mark.parametrize("edit,message", [
    (lambda r: r.pop("title"), r"\(title\): 'title' is missing"),
    (lambda r: r.update(title="Chess"), r"\(title\): 'title' is 'Chess', the game gives"),
    (lambda r: r.update(env="chess_v0"), r"\(env\): 'env' is 'chess_v0'"),
    (lambda r: r.pop("cardenvs"), r"'cardenvs' is missing"),
    (lambda r: r.update(cardenvs=3), r"'cardenvs' \(the version that wrote the file\) must be a"),
    (lambda r: r.update(players="abc"), r"\(players\): 'players' must be null or 3 names"),
    (lambda r: r.update(players=["a", "b"]), r"'players' must be null or 3 names"),
    (lambda r: r.update(players=["a", "b", 3]), r"'players' must be null or 3 names"),
    (lambda r: r.update(meta=[1]), r"\(meta\): 'meta' must be an object"),
    (lambda r: r.update(meta={"a": json.loads("[" * 40 + "]" * 40)}),
     r"'meta' is nested deeper than 32"),
    (lambda r: r.update(extra=1), r"\(extra\): unknown key 'extra'; a version 1 replay has"),
    (lambda r: r.update(game=["doudizhu"]), r"\(game\): unknown game \['doudizhu'\]"),
    (lambda r: r.update(n_players=True), r"'n_players' is True"),
    (lambda r: r.update(seed=-3), r"\(seed\): 'seed' must be an integer >= 0 or null, got -3"),
    (lambda r: r.update(rng_state={"bit_generator": "PCG64"}),
     r"\(rng_state\): 'rng_state' must be null beside a seed"),
    (lambda r: r.update(seed=None, rng_state={
        "bit_generator": "PCG64", "state": {"state": 2**200, "inc": -5}, "has_uint32": 0,
        "uinteger": 0}), r"\(rng_state\): not a PCG64 state"),
    (lambda r: r["result"].update(illegal_move="x"), r"'illegal_move' must be a seat in 0\.\.2"),
    (lambda r: r["result"].update(illegal_move=True), r"'illegal_move' must be a seat"),
    (lambda r: r["actions"][0].update(seat=bool(r["actions"][0]["seat"])), r"\(actions\[0\]\)"),
])
def test_every_field_is_verified(ddz_text, edit, message):
    """A field load() does not check is a field a viewer trusts: each is verified (issue 51)."""
    with pytest.raises(ValueError, match=message):
        R.loads(_edit(ddz_text, edit))


def test_deeply_nested_json_is_a_value_error():
    with pytest.raises(ValueError, match="nested too deeply"):
        R.loads("[" * 100_000 + "]" * 100_000, "deep.json")


def test_cli_refuses_damaged_files_and_bad_outputs_with_exit_2(tmp_path, ddz_text, capsys):
    """Each damaged input and each impossible --html output: ``cardenvs: error: FILE: ...`` and
    exit 2, no traceback, and nothing written."""
    from cardenvs.cli import main

    cases = {
        "notitle.json": _edit(ddz_text, lambda r: r.pop("title")),
        "rng.json": _edit(ddz_text, lambda r: r.update(seed=None, rng_state={
            "bit_generator": "PCG64", "state": {"state": 2**200, "inc": 1}, "has_uint32": 0,
            "uinteger": 0})),
        "deep.json": "[" * 100_000 + "]" * 100_000,
        "players.json": _edit(ddz_text, lambda r: r.update(players=[1, 2, 3])),
        "binary.json": None,
    }
    for name, text in cases.items():
        p = tmp_path / name
        if text is None:
            p.write_bytes(b"\xff\xfe\x00garbage")
        else:
            p.write_text(text)
    cases["missing.json"] = None
    folder = tmp_path / "out_dir"
    folder.mkdir()
    before = sorted(p.name for p in tmp_path.iterdir())
    for name in cases:
        out = tmp_path / f"{name}.html"
        assert main(["replay", str(tmp_path / name), "--html", str(out)]) == 2, name
        err = capsys.readouterr().err
        assert err.startswith(f"cardenvs: error: {tmp_path / name}"), err
        assert "Traceback" not in err
        assert not out.exists()
    good = tmp_path / "good.json"
    good.write_text(ddz_text)
    assert main(["replay", str(good), "--html", str(folder)]) == 2
    assert capsys.readouterr().err.startswith(f"cardenvs: error: {folder}: is a folder")
    assert list(folder.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(before + ["good.json"])
