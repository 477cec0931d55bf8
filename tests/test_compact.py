"""Compact action spaces (cardenvs.core.compact): the codec, exactness at random and literal
positions, the sizes."""

from __future__ import annotations

import os

import numpy as np
import pytest

from cardenvs import make_game
from cardenvs.core.compact import Codec, Pending, check_actions, codec_of

#: random positions per game and option set of the exactness property (CARDENVS_COMPACT_N
#: overrides it, e.g. for a quick local run)
N_POSITIONS = int(os.environ.get("CARDENVS_COMPACT_N", "10000"))

CONFIGS = [
    ("doudizhu", {}),
    ("doudizhu", {"preset": "douzero"}),
    ("doudizhu", {"preset": "rlcard"}),
    ("doudizhu4", {}),
    ("wakeng", {}),
    ("niangniang", {}),
    ("niangniang", {"allow_trio_single": True}),
    ("wulong", {}),
    ("wulong", {"wild_jokers": "none"}),
    ("paodekuai", {}),
    ("paodekuai", {"short_finish": False, "four_with_three": True}),
    ("paodekuai", {"deck": "15", "aaa_bomb": True}),
]
TARGETS = {"doudizhu": 400, "paodekuai": 400, "doudizhu4": 600, "wulong": 800}


def _id(cfg):
    name, opts = cfg
    return name + "".join(f"-{k}={v}" for k, v in opts.items())


@pytest.mark.parametrize("name", ["doudizhu", "doudizhu4", "wakeng", "niangniang", "wulong",
                                  "paodekuai"])
def test_sizes(name):
    g = make_game(name)
    c = codec_of(g)
    assert c.n == c.n_other + c.n_bodies + c.n_kickers
    assert c.n_other == g.n_actions - len(g.table)
    assert c.n <= TARGETS.get(name, g.n_actions)
    if name in TARGETS:
        assert c.n * 10 < g.n_actions


def test_doudizhu_layout_values():
    """Dou Dizhu: 308 bodies (the 309 canonical shapes but the trio+pair / airplane+pairs
    split), the 15 single kickers and 13 pairs, pass and 3 bids."""
    c = codec_of(make_game("doudizhu"))
    assert (c.n_other, c.n_bodies, c.n_kickers, c.n) == (4, 308, 28, 340)
    g = make_game("doudizhu")
    row = g.string_to_action("333444+56")
    parts = c.parts(row)
    assert [c.to_string(x) for x in parts] == ["airplane_singles 333444 +2 singles",
                                               "kicker 5", "kicker 6"]
    row = g.string_to_action("333444+5566")
    assert [c.to_string(x) for x in c.parts(row)] == ["airplane_pairs 333444 +2 pairs",
                                                      "kicker 55", "kicker 66"]
    assert c.parts(g.pass_id) == [0]
    assert c.to_string(0) == "pass"


@pytest.mark.parametrize("cfg", CONFIGS, ids=_id)
def test_codec_bijection(cfg):
    """Every flat id has one compact sequence, and the sequence gives it back."""
    name, opts = cfg
    g = make_game(name, **opts)
    c = Codec(g)
    T = len(g.table)
    seqs = {}
    for f in range(g.n_actions):
        p = tuple(c.parts(f))
        assert p not in seqs, (f, seqs.get(p))
        seqs[p] = f
        if f < T:
            assert c.n_other <= p[0] < c.n_other + c.n_bodies
            assert all(c.n_other + c.n_bodies <= x < c.n for x in p[1:])
            # the kicker ranks are non-decreasing and add the row's kickers to its body
            ranks = [int(c.kick_rank[x - c.n_other - c.n_bodies]) for x in p[1:]]
            assert ranks == sorted(ranks)
            cards = c.body_counts[p[0] - c.n_other].copy()
            for x in p[1:]:
                k = x - c.n_other - c.n_bodies
                cards[c.kick_rank[k]] += c.kick_unit[k]
            assert np.array_equal(cards, g.tab.counts[f])
            if len(p) > 1:
                assert c.row_of(p[0] - c.n_other, p[1:]) == f
        else:
            assert p == (f - T,)


def _expected_next(c: Codec, legal: np.ndarray, prefix: list[int]) -> np.ndarray:
    """The distinct next decisions among the flat legal ids matching ``prefix`` (numpy)."""
    if not prefix:
        return np.unique(c.first[legal])
    rows = legal[(legal < c.n_play)]
    rows = rows[c.first[rows] == prefix[0]]
    for j, x in enumerate(prefix[1:]):
        rows = rows[c.seq[rows, j] == x]
    return np.unique(c.seq[rows, len(prefix) - 1])


def check_position(c: Codec, pend: Pending, legal: np.ndarray, rng, walks: int = 6,
                   full: bool = False) -> None:
    """The exactness property at one position with flat legal ids ``legal``."""
    legal = np.ascontiguousarray(legal, np.int64)
    n = len(legal)
    pend.start(legal, n)
    assert np.array_equal(pend.legal[: pend.n_legal], _expected_next(c, legal, []))
    if full:  # every compact sequence, depth first: the completed plays are the legal set
        done = []

        def dfs(prefix):
            pend.start(legal, n)
            for x in prefix:
                assert pend.choose(x, legal, n) == -1
            offered = pend.legal[: pend.n_legal].copy()
            assert np.array_equal(offered, _expected_next(c, legal, prefix))
            for x in offered:
                pend.start(legal, n)
                for y in prefix:
                    pend.choose(y, legal, n)
                f = pend.choose(int(x), legal, n)
                if f >= 0:
                    done.append(f)
                else:
                    assert pend.n_legal > 0  # a kicker never leads to a dead end
                    dfs(prefix + [int(x)])

        dfs([])
        assert sorted(done) == sorted(legal.tolist())
        return
    picks = legal if n <= walks else legal[rng.choice(n, walks, replace=False)]
    for f in picks:
        pend.start(legal, n)
        parts = c.parts(int(f))
        for j, x in enumerate(parts):
            assert pend.is_offered(x), (f, parts, j)
            assert np.array_equal(pend.legal[: pend.n_legal],
                                  _expected_next(c, legal, parts[:j]))
            got = pend.choose(x, legal, n)
            assert got == (f if j == len(parts) - 1 else -1), (f, parts, j, got)


def _positions(g, c, n_positions: int, seed: int):
    """``n_positions`` decisions of random games (alternately random flat and random
    compact plays, so kicker-heavy and kicker-light lines both come up)."""
    rng = np.random.default_rng(seed)
    s = g.new_state()
    buf = np.empty(g.n_actions, np.int64)
    pend = Pending(c)
    got = 0
    game_no = 0
    while got < n_positions:
        g.reset(s, int(rng.integers(2**62)))
        game_no += 1
        while not g.done(s) and got < n_positions:
            k = g.legal(s, buf)
            yield s, buf[:k]
            got += 1
            if game_no % 2:
                a = int(buf[rng.integers(k)])
            else:  # uniform at each compact decision
                pend.start(buf, k)
                a = -1
                while a < 0:
                    a = pend.choose(int(pend.legal[rng.integers(pend.n_legal)]), buf, k)
            g.step(s, a)


@pytest.mark.parametrize("cfg", CONFIGS, ids=_id)
def test_exactness_random_positions(cfg):
    name, opts = cfg
    g = make_game(name, **opts)
    c = codec_of(g)
    pend = Pending(c)
    rng = np.random.default_rng(1)
    n = 0
    for i, (s, legal) in enumerate(_positions(g, c, N_POSITIONS, 0)):
        check_position(c, pend, legal, rng, full=i % 100 == 0 and len(legal) < 3000)
        n += 1
    assert n == N_POSITIONS


LITERAL = [
    # Dou Dizhu free lead with a hand full of airplanes and kickers
    ("doudizhu", {}, ["333444555666777BR", "88899TTJJQQKKAA22", "3456789TJQKA2456789"]),
    # 4-player Dou Dizhu (two decks): two-deck kickers (pairs of jokers, five of a rank)
    ("doudizhu4", {}, ["33333444455556666BBRR7", "777888999TTTJJJQQQ", "KKKAAA222JQ",
                       "3456789TJQKA2"]),
    # Pao De Kuai: short last plays (a trio with fewer kickers as the last cards)
    ("paodekuai", {}, ["3334", "55566677789", "TJQKA2"]),
    ("paodekuai", {}, ["333444", "55566677789", "TJQKA2"]),
]


@pytest.mark.parametrize("case", LITERAL, ids=lambda c: c[0] + "-" + c[2][0])
def test_exactness_literal_free_lead(case):
    """Every row a literal hand can make (the free-lead set of these games, short last
    plays included) is reachable through compact decisions, and only those."""
    name, opts, hands = case
    g = make_game(name, **opts)
    c = codec_of(g)
    h = np.asarray(g.deck.parse(hands[0]), np.int64)
    mine = np.flatnonzero((g.tab.counts <= h[None, :]).all(1))
    assert len(mine) > 1
    check_position(c, Pending(c), mine, np.random.default_rng(0), full=True)


def test_check_actions():
    assert check_actions("compact") == "compact"
    with pytest.raises(ValueError, match="actions='tiny' is not one of"):
        check_actions("tiny")
    with pytest.raises(TypeError, match="actions must be a str"):
        check_actions(1)


# -- the AEC environment in compact mode -----------------------------------------------------------
GAMES = ["doudizhu", "doudizhu4", "wakeng", "niangniang", "wulong", "paodekuai"]


def _env(name, **kw):
    import importlib

    from cardenvs.registry import spec

    return importlib.import_module(f"cardenvs.{spec(name).env_module}").env(**kw)


@pytest.mark.parametrize("name", GAMES)
def test_pettingzoo_api_and_seed(name):
    from pettingzoo.test import api_test, seed_test

    env = _env(name, actions="compact")
    api_test(env, num_cycles=300)
    seed_test(lambda: _env(name, actions="compact"), num_cycles=50)


def _random_compact_game(env, seed, rng):
    """Play a game with uniform compact decisions; the per-agent reward sums."""
    env.reset(seed=seed)
    total = {a: 0.0 for a in env.possible_agents}
    for agent in env.agent_iter(20000):
        obs, r, term, trunc, _ = env.last()
        total[agent] += r
        if term or trunc:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        assert np.array_equal(legal, env.unwrapped.legal_actions())
        env.step(int(legal[rng.integers(len(legal))]))
    return total


@pytest.mark.parametrize("name", GAMES)
def test_flat_history_replays_to_the_same_rewards(name):
    """A compact game's history (flat ids) replayed in a flat env with the same seed gives
    the same deal, the same final state and the same rewards."""
    rng = np.random.default_rng(3)
    for seed in range(3):
        cenv = _env(name, actions="compact")
        got = _random_compact_game(cenv, seed, rng)
        hist = list(cenv.unwrapped.history)
        fenv = _env(name)
        fenv.reset(seed=seed)
        total = {a: 0.0 for a in fenv.possible_agents}
        i = 0
        for agent in fenv.agent_iter(20000):
            _, r, term, trunc, _ = fenv.last()
            total[agent] += r
            if term or trunc:
                fenv.step(None)
                continue
            fenv.step(hist[i])
            i += 1
        assert i == len(hist)
        assert total == got
        assert np.array_equal(fenv.unwrapped.state_vec, cenv.unwrapped.state_vec)
        assert fenv.unwrapped.history == hist


def test_same_seed_same_deal_in_both_modes():
    for name in GAMES:
        a, b = _env(name), _env(name, actions="compact")
        a.reset(seed=11)
        b.reset(seed=11)
        assert np.array_equal(a.unwrapped.state_vec, b.unwrapped.state_vec)
        L = a.unwrapped.game.layout.size
        oa, ob = a.observe(a.agent_selection), b.observe(b.agent_selection)
        assert np.array_equal(oa["observation"], ob["observation"][:L])


def _kicker_position(name="doudizhu", seed=0):
    """A compact Dou Dizhu env whose mover has just chosen a body with kickers."""
    env = _env(name, actions="compact", illegal="raise")
    env.reset(seed=seed)
    c = env.unwrapped.codec
    rng = np.random.default_rng(seed)
    for _ in range(400):
        legal = env.unwrapped.legal_actions()
        bodies = [x for x in legal if c.n_other <= x < c.n_other + c.n_bodies
                  and c.ntok[x - c.n_other] > 0]
        if bodies:
            env.step(int(bodies[0]))
            return env
        env.step(int(legal[rng.integers(len(legal))]))
    raise AssertionError("no body with kickers came up")


def test_partial_play_same_seat_zero_rewards_and_observation():
    env = _kicker_position()
    u = env.unwrapped
    c = u.codec
    mover = env.agent_selection
    assert u._compact.body >= 0
    legal = u.legal_actions()
    assert len(legal) and all(x >= c.n_other + c.n_bodies for x in legal)
    assert all(v == 0.0 for v in env.rewards.values())
    L = u.game.layout.size
    o = env.observe(mover)["observation"]
    assert o[L:].any() and o[-1] == 1.0  # the pending flag
    for a in env.possible_agents:
        if a != mover:
            oo = env.observe(a)
            assert not oo["observation"][L:].any() and not oo["action_mask"].any()
    n_hist = len(u.history)
    # complete the play: the same seat chooses every kicker, then one flat id is recorded
    while env.agent_selection == mover and u._compact.body >= 0:
        env.step(int(u.legal_actions()[0]))
    assert len(u.history) == n_hist + 1
    assert u.game.tab.family[u.history[-1]] == c.body_family[c.body_of_row[u.history[-1]]]


def test_bad_kicker_raises_and_leaves_the_game_unchanged():
    env = _kicker_position()
    u = env.unwrapped
    c = u.codec
    before = u.get_state()
    offered = set(u.legal_actions().tolist())
    bad = next(x for x in range(c.n) if x not in offered)
    with pytest.raises(ValueError, match="illegal kicker"):
        env.step(bad)
    with pytest.raises(ValueError, match="outside the compact action space"):
        env.step(c.n)
    after = u.get_state()
    assert after["compact"] == before["compact"] and after["compact"] is not None
    assert np.array_equal(after["state"], before["state"])
    assert after["history"] == before["history"]
    assert np.array_equal(u.legal_actions(), np.array(sorted(offered)))


def test_illegal_kicker_loses_by_default():
    env = _kicker_position()
    env.unwrapped.illegal = "lose"
    mover = env.agent_selection
    offered = set(env.unwrapped.legal_actions().tolist())
    env.step(next(x for x in range(env.unwrapped.codec.n) if x not in offered))
    assert env.terminations[mover] and env.rewards[mover] == -1.0
    assert env.infos[mover]["illegal_move"]


def test_bad_actions_option():
    with pytest.raises(ValueError, match="actions='tiny' is not one of"):
        _env("wakeng", actions="tiny")


def test_get_set_state_and_pickle_keep_the_partial_play():
    import pickle

    env = _kicker_position()
    u = env.unwrapped
    snap = u.get_state()
    legal = u.legal_actions()
    env2 = _env("doudizhu", actions="compact", illegal="raise")
    env2.unwrapped.set_state(snap)
    assert np.array_equal(env2.unwrapped.legal_actions(), legal)
    env3 = pickle.loads(pickle.dumps(env))
    assert np.array_equal(env3.unwrapped.legal_actions(), legal)
    assert np.array_equal(env3.observe(env3.agent_selection)["observation"],
                          env.observe(env.agent_selection)["observation"])
    assert sorted(env.unwrapped.flat_legal_actions().tolist()) == sorted(
        env3.unwrapped.flat_legal_actions().tolist())


# -- golden playthroughs in compact mode --------------------------------------------------------
def compact_playthrough(name: str, seed: int = 7, policy_seed: int = 7) -> str:
    """A seeded uniform-random compact game as text: every decision (compact id and its
    string), the flat play it completes, the final render and the rewards."""
    env = _env(name, actions="compact", render_mode="ansi")
    env.reset(seed=seed)
    u = env.unwrapped
    c = u.codec
    rng = np.random.default_rng(policy_seed)
    lines = [f"# compact golden playthrough of {name}: reset(seed={seed}), uniform random "
             f"compact decisions (policy_seed={policy_seed})",
             f"# compact space: Discrete({c.n}); blocks: "
             + ", ".join(f"{k} [{a}, {b})" for k, (a, b) in c.blocks.items()),
             f"# flat space: Discrete({u.game.n_actions})", "", "## initial position",
             env.render().rstrip("\n"), "",
             "## decisions (turn  agent  legal-count  id  decision  [=> flat id  play])"]
    final = {a: 0.0 for a in env.possible_agents}
    turn = 0
    for agent in env.agent_iter(20000):
        obs, r, term, trunc, _ = env.last()
        final[agent] += r
        if term or trunc:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        a = int(legal[rng.integers(legal.size)])
        n_hist = len(u.history)
        line = f"{turn:4d}  {agent:<9} {legal.size:4d}  {a:4d}  {c.to_string(a)}"
        env.step(a)
        if len(u.history) > n_hist:
            f = u.history[-1]
            line += f"  => {f}  {u.action_to_string(f)}"
        lines.append(line)
        turn += 1
    lines += ["", "## final position", env.render().rstrip("\n"), "", "## rewards"]
    lines += [f"{a}: {v:+g}" for a, v in final.items()]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", GAMES)
def test_golden_compact(name):
    """``tests/golden/<game>_compact_seed7.txt`` (rewrite with CARDENVS_REGEN_GOLDEN=1 after an
    intended change, then read the diff)."""
    from pathlib import Path

    path = Path(__file__).parent / "golden" / f"{name}_compact_seed7.txt"
    text = compact_playthrough(name)
    if os.environ.get("CARDENVS_REGEN_GOLDEN") == "1":
        path.write_text(text)
    assert path.exists(), f"missing {path}: run with CARDENVS_REGEN_GOLDEN=1 once"
    assert text == path.read_text()
    assert text == compact_playthrough(name)


@pytest.mark.parametrize("actions", ["flat", "compact"])
def test_action_mask_is_int8_and_nonzero_reads_it(actions):
    """The observation's mask is an int8 array (cardenvs.core.mask.ActionMask) whose
    nonzero entries numpy finds through the bool fast path: the same ids either way."""
    from cardenvs.core.mask import ActionMask, new_mask

    env = _env("doudizhu", actions=actions)
    env.reset(seed=2)
    m = env.observe(env.agent_selection)["action_mask"]
    assert isinstance(m, np.ndarray) and m.dtype == np.int8
    assert np.array_equal(np.flatnonzero(m), env.unwrapped.legal_actions())
    assert np.array_equal(np.flatnonzero(m), np.flatnonzero(np.asarray(m).view(np.ndarray)))
    assert m.astype(bool).nonzero()[0].tolist() == env.unwrapped.legal_actions().tolist()
    assert env.action_space(env.agent_selection).sample(m) in set(env.unwrapped.legal_actions())
    x = new_mask(5)
    x[[1, 3]] = 1
    x[4] = 7  # any nonzero byte is a nonzero entry
    assert isinstance(x, ActionMask) and np.flatnonzero(x).tolist() == [1, 3, 4]
    assert np.nonzero(x.reshape(1, 5))[1].tolist() == [1, 3, 4]


def test_set_state_refuses_a_bad_partial_play_and_changes_nothing():
    env = _kicker_position()
    u = env.unwrapped
    good = u.get_state()
    other = _env("doudizhu", actions="compact", illegal="raise")
    other.reset(seed=99)
    before = other.unwrapped.get_state()
    for bad in [(good["compact"][0], [10**6]), (10**6, []), "x", (good["compact"][0], 3)]:
        snap = dict(good, compact=bad)
        with pytest.raises(ValueError, match="partial play"):
            other.unwrapped.set_state(snap)
        after = other.unwrapped.get_state()
        assert np.array_equal(after["state"], before["state"])
        assert after["compact"] == before["compact"] and after["history"] == before["history"]
    other.unwrapped.set_state(good)
    assert np.array_equal(other.unwrapped.legal_actions(), u.legal_actions())
