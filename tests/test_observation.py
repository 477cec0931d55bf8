"""The 3-player Dou Dizhu observation: the documented table, and what the encoder writes.

Expected values are worked out by hand from the field docs of the table (relative seats:
0 = the observer, 1 = the next seat 下家, 2 = the one after; cards as 15 ranks x 4 "at least k"
planes, rank order ``3456789TJQKA2BR``) on literal custom deals and scripted moves; they are
never read back from the encoder.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from cardenvs import doudizhu_v0

ORDER = "3456789TJQKA2BR"  # rules page: 3 < 4 < ... < A < 2 < B < R
FIELDS = [  # (name, size) in the documented order, for 3 players
    ("hand", 60), ("kitty", 60), ("played", 180), ("others", 60), ("hand_sizes", 3),
    ("to_beat", 60), ("to_beat_type", 14), ("to_beat_seat", 3), ("recent", 6 * 64),
    ("landlord", 4), ("bid", 4), ("auction", 15), ("doublings", 1), ("turn", 3), ("phase", 3),
]
FAMILY = {"single": 0, "pair": 1, "trio": 2, "bomb": 10, "rocket": 11}  # combos.FAMILY_NAMES codes
ENTRY = 64  # one `recent` entry: 60 card planes, pass flag, 3 seat slots

# Scenario A (a full 54-card deal, checked by hand: four of each rank 3..2 and one B, one R)
A_HANDS = ["333566778899TTJQK", "444455678JJQQKAA2", "3567899TTJQKKAA22"]
A_KITTY = "2BR"


def planes(cards: str) -> np.ndarray:
    """The 60 card planes of a card string: bit r*4+k-1 set when holding >= k of rank r."""
    v = np.zeros(60, np.float32)
    for ch in set(cards):
        r = ORDER.index(ch)
        for k in range(min(cards.count(ch), 4)):
            v[r * 4 + k] = 1.0
    return v


def onehot(n: int, i: int) -> np.ndarray:
    v = np.zeros(n, np.float32)
    v[i] = 1.0
    return v


# the literal index ranges of the documented table (3 players)
SPANS = {}
_o = 0
for _name, _size in FIELDS:
    SPANS[_name] = (_o, _o + _size)
    _o += _size
OBS_SIZE = _o  # 854


def field(obs: dict, name: str) -> np.ndarray:
    a, b = SPANS[name]
    return obs["observation"][a:b]


def played(obs: dict, rel: int) -> np.ndarray:
    return field(obs, "played")[rel * 60:(rel + 1) * 60]


def recent(obs: dict, j: int) -> tuple[np.ndarray, float, np.ndarray]:
    e = field(obs, "recent")[j * ENTRY:(j + 1) * ENTRY]
    return e[:60], e[60], e[61:64]


def auction(obs: dict, rel: int) -> np.ndarray:
    return field(obs, "auction")[rel * 5:(rel + 1) * 5]


def act(env, agent: str, text: str) -> None:
    """Step ``text`` for ``agent``, checking it is that agent's turn and the action is legal."""
    assert env.agent_selection == agent
    a = env.unwrapped.string_to_action(text)
    assert a in env.unwrapped.legal_actions(), text
    env.step(a)


@pytest.fixture
def env():
    return doudizhu_v0.env()


# -- the documented table --------------------------------------------------------------------------


def test_docstring_table_matches_layout(env):
    layout = env.unwrapped.game.layout
    doc = doudizhu_v0.__doc__
    assert [(f.name, f.size) for f in layout.fields] == FIELDS
    assert layout.size == OBS_SIZE == 854
    assert env.observation_space("player_0")["observation"].shape == (854,)
    for f in layout.fields:
        a, b = layout.offsets[f.name]
        assert (a, b) == SPANS[f.name]
        row = re.search(rf"^\| {a}:{b} \| `{f.name}` \| {f.size} \| (.+) \|$", doc, re.M)
        assert row, f"field {f.name} ({a}:{b}) missing from the docstring table"
        assert row.group(1) == f.doc
    assert "{layout}" not in doc


# -- scenario A: auction, kitty, bombs, rocket, a trick ------------------------------------------------


def test_at_the_deal(env):
    env.reset(options={"hands": A_HANDS, "kitty": A_KITTY, "first_bidder": 1})
    assert env.agent_selection == "player_1"
    o0 = env.observe("player_0")
    # three 3s: planes 1..3 of rank 3 set, not plane 4
    np.testing.assert_array_equal(field(o0, "hand")[0:4], [1, 1, 1, 0])
    np.testing.assert_array_equal(field(o0, "hand"), planes("333566778899TTJQK"))
    o1 = env.observe("player_1")
    np.testing.assert_array_equal(field(o1, "hand")[4:8], [1, 1, 1, 1])  # 4444
    np.testing.assert_array_equal(field(o1, "hand")[48:52], [1, 0, 0, 0])  # one 2
    np.testing.assert_array_equal(field(o1, "hand")[52:60], np.zeros(8))  # no jokers
    for i, agent in enumerate(env.possible_agents):
        o = env.observe(agent)
        np.testing.assert_array_equal(field(o, "hand"), planes(A_HANDS[i]))
        assert not field(o, "kitty").any()  # the kitty is hidden during the auction
        assert not field(o, "played").any()
        # others: the other two hands and the undistributed kitty
        rest = "".join(A_HANDS[j] for j in range(3) if j != i) + A_KITTY
        np.testing.assert_array_equal(field(o, "others"), planes(rest))
        np.testing.assert_allclose(field(o, "hand_sizes"), [17 / 20] * 3)
        assert not field(o, "to_beat").any() and not field(o, "to_beat_type").any()
        assert not field(o, "to_beat_seat").any() and not field(o, "recent").any()
        np.testing.assert_array_equal(field(o, "landlord"), [0, 0, 0, 1])  # not decided
        np.testing.assert_array_equal(field(o, "bid"), [1, 0, 0, 0])  # no bid yet
        for rel in range(3):
            np.testing.assert_array_equal(auction(o, rel), onehot(5, 0))  # none
        assert field(o, "doublings")[0] == 0
        np.testing.assert_array_equal(field(o, "turn"), onehot(3, (1 - i) % 3))
        np.testing.assert_array_equal(field(o, "phase"), [1, 0, 0])


def test_during_the_auction(env):
    env.reset(options={"hands": A_HANDS, "kitty": A_KITTY, "first_bidder": 1})
    act(env, "player_1", "bid 1")
    act(env, "player_2", "pass")
    o0 = env.observe("player_0")
    np.testing.assert_array_equal(field(o0, "bid"), [0, 1, 0, 0])
    np.testing.assert_array_equal(auction(o0, 0), onehot(5, 0))  # seat 0: nothing yet
    np.testing.assert_array_equal(auction(o0, 1), onehot(5, 2))  # seat 1: bid 1
    np.testing.assert_array_equal(auction(o0, 2), onehot(5, 1))  # seat 2: pass
    np.testing.assert_array_equal(field(o0, "landlord"), [0, 0, 0, 1])
    np.testing.assert_array_equal(field(o0, "turn"), [1, 0, 0])
    assert not field(o0, "kitty").any() and not field(o0, "recent").any()
    o2 = env.observe("player_2")
    np.testing.assert_array_equal(auction(o2, 0), onehot(5, 1))  # itself: pass
    np.testing.assert_array_equal(auction(o2, 1), onehot(5, 0))  # seat 0
    np.testing.assert_array_equal(auction(o2, 2), onehot(5, 2))  # seat 1: bid 1
    np.testing.assert_array_equal(field(o2, "turn"), [0, 1, 0])


def play_scenario_a(env):
    env.reset(options={"hands": A_HANDS, "kitty": A_KITTY, "first_bidder": 1})
    for agent, text in [("player_1", "bid 1"), ("player_2", "pass"), ("player_0", "bid 2"),
                        ("player_1", "pass"), ("player_2", "pass")]:
        act(env, agent, text)


def test_after_the_auction(env):
    play_scenario_a(env)
    # seat 0 is landlord at 2 and took the kitty 2BR
    assert env.infos["player_0"]["landlord"] == 0 and env.infos["player_0"]["bid"] == 2
    for i, agent in enumerate(env.possible_agents):
        o = env.observe(agent)
        np.testing.assert_array_equal(field(o, "kitty"), planes("2BR"))  # public, 3 players
        np.testing.assert_array_equal(field(o, "landlord"), onehot(4, (0 - i) % 3))
        np.testing.assert_array_equal(field(o, "bid"), [0, 0, 1, 0])
        np.testing.assert_array_equal(field(o, "phase"), [0, 1, 0])
        np.testing.assert_array_equal(field(o, "turn"), onehot(3, (0 - i) % 3))
        sizes = [20, 17, 17]
        np.testing.assert_allclose(field(o, "hand_sizes"), [sizes[(i + k) % 3] / 20 for k in range(3)])
        assert not field(o, "recent").any()  # auction actions are not play-phase actions
    o0 = env.observe("player_0")
    np.testing.assert_array_equal(field(o0, "hand"), planes("333566778899TTJQK2BR"))
    np.testing.assert_array_equal(field(o0, "others"), planes(A_HANDS[1] + A_HANDS[2]))
    np.testing.assert_array_equal(auction(o0, 0), onehot(5, 3))  # bid 2
    np.testing.assert_array_equal(auction(o0, 1), onehot(5, 1))  # passed last
    np.testing.assert_array_equal(auction(o0, 2), onehot(5, 1))
    # a farmer's `others` holds the landlord's cards, the kitty included
    o2 = env.observe("player_2")
    np.testing.assert_array_equal(field(o2, "others"), planes(A_HANDS[0] + A_KITTY + A_HANDS[1]))


def test_plays_bombs_and_recent(env):
    play_scenario_a(env)
    act(env, "player_0", "333")
    o1 = env.observe("player_1")
    np.testing.assert_array_equal(field(o1, "to_beat"), planes("333"))
    np.testing.assert_array_equal(field(o1, "to_beat_type"), onehot(14, FAMILY["trio"]))
    np.testing.assert_array_equal(field(o1, "to_beat_seat"), [0, 0, 1])  # seat 0 is 2 after 1
    cards, flag, seat = recent(o1, 0)
    np.testing.assert_array_equal(cards, planes("333"))
    assert flag == 0
    np.testing.assert_array_equal(seat, [0, 0, 1])
    assert not field(o1, "recent")[ENTRY:].any()

    act(env, "player_1", "4444")  # a bomb: one doubling
    o2 = env.observe("player_2")
    assert field(o2, "doublings")[0] == pytest.approx(1 / 16)
    np.testing.assert_array_equal(field(o2, "to_beat"), planes("4444"))
    np.testing.assert_array_equal(field(o2, "to_beat_type"), onehot(14, FAMILY["bomb"]))
    np.testing.assert_array_equal(field(o2, "to_beat_seat"), [0, 0, 1])  # seat 1 is 2 after 2

    act(env, "player_2", "pass")
    act(env, "player_0", "BR")  # the rocket: a second doubling
    o0 = env.observe("player_0")
    assert field(o0, "doublings")[0] == pytest.approx(2 / 16)
    np.testing.assert_array_equal(field(o0, "to_beat_type"), onehot(14, FAMILY["rocket"]))
    np.testing.assert_array_equal(field(o0, "to_beat_seat"), [1, 0, 0])  # its own play

    act(env, "player_1", "pass")
    act(env, "player_2", "pass")
    # the trick is over: a free lead for seat 0, nothing to beat
    o0 = env.observe("player_0")
    assert not field(o0, "to_beat").any()
    assert not field(o0, "to_beat_type").any() and not field(o0, "to_beat_seat").any()
    np.testing.assert_array_equal(field(o0, "turn"), [1, 0, 0])

    act(env, "player_0", "5")
    act(env, "player_1", "6")
    act(env, "player_2", "pass")
    # play-phase log: 333 4444 pass BR pass pass 5 6 pass (by seats 0 1 2 0 1 2 0 1 2)
    hands = ["66778899TTJQK2", "5578JJQQKAA2", A_HANDS[2]]
    plays = ["333BR5", "44446", ""]
    last6 = [("", 2), ("6", 1), ("5", 0), ("", 2), ("", 1), ("BR", 0)]  # most recent first
    for i, agent in enumerate(env.possible_agents):
        o = env.observe(agent)
        np.testing.assert_array_equal(field(o, "hand"), planes(hands[i]))
        for rel in range(3):
            np.testing.assert_array_equal(played(o, rel), planes(plays[(i + rel) % 3]))
        np.testing.assert_allclose(field(o, "hand_sizes"),
                                   [len(hands[(i + k) % 3]) / 20 for k in range(3)])
        np.testing.assert_array_equal(field(o, "to_beat"), planes("6"))
        np.testing.assert_array_equal(field(o, "to_beat_type"), onehot(14, FAMILY["single"]))
        np.testing.assert_array_equal(field(o, "to_beat_seat"), onehot(3, (1 - i) % 3))
        for j, (cards_str, seat_abs) in enumerate(last6):
            cards, flag, seat = recent(o, j)
            np.testing.assert_array_equal(cards, planes(cards_str))
            assert flag == (1.0 if cards_str == "" else 0.0)
            np.testing.assert_array_equal(seat, onehot(3, (seat_abs - i) % 3))
        np.testing.assert_array_equal(field(o, "landlord"), onehot(4, (0 - i) % 3))
        np.testing.assert_array_equal(field(o, "bid"), [0, 0, 1, 0])
        assert field(o, "doublings")[0] == pytest.approx(2 / 16)
        np.testing.assert_array_equal(field(o, "turn"), onehot(3, (0 - i) % 3))
        np.testing.assert_array_equal(field(o, "phase"), [0, 1, 0])
        np.testing.assert_array_equal(field(o, "kitty"), planes("2BR"))
    # others = deck - own hand - everything played, written out by hand for seat 1
    o1 = env.observe("player_1")
    np.testing.assert_array_equal(field(o1, "others"), planes("356667778889999TTTTJJQQKKKAA222"))
    # ... and for seat 0: seat 1's and seat 2's hands
    o0 = env.observe("player_0")
    np.testing.assert_array_equal(field(o0, "others"), planes(hands[1] + hands[2]))


def test_legal_play_features_rows_align_with_ids(env):
    play_scenario_a(env)
    for agent, text in [("player_0", "333"), ("player_1", "4444"), ("player_2", "pass"),
                        ("player_0", "BR"), ("player_1", "pass"), ("player_2", "pass"),
                        ("player_0", "5"), ("player_1", "6"), ("player_2", "pass")]:
        act(env, agent, text)
    u = env.unwrapped
    ids, feats = u.legal_play_features()
    assert env.agent_selection == "player_0"
    np.testing.assert_array_equal(ids, env.unwrapped.legal_actions())
    # seat 0 holds 66778899TTJQK2 against a single 6: singles 7 8 9 T J Q K 2, or pass
    assert sorted(u.action_to_string(a) for a in ids) == sorted("789TJQK2") + ["pass"]
    # features: 60 card planes, 14 family, length/12, key/15, bomb, pass, bid 1..3
    assert feats.shape == (len(ids), 60 + 14 + 3 + 1 + 3) and feats.dtype == np.float32
    for a, f in zip(ids, feats):
        s = u.action_to_string(a)
        if s == "pass":
            np.testing.assert_array_equal(f, onehot(81, 60 + 14 + 3))
            continue
        np.testing.assert_array_equal(f[:60], planes(s))
        np.testing.assert_array_equal(f[60:74], onehot(14, FAMILY["single"]))
        assert f[74] == pytest.approx(1 / 12)
        assert f[75] == pytest.approx(ORDER.index(s) / 15)
        assert f[76] == 0.0
        assert not f[77:].any()
    # in the auction: pass and the bids, flagged in the last four slots
    env.reset(options={"hands": A_HANDS, "kitty": A_KITTY, "first_bidder": 2})
    act(env, "player_2", "bid 1")
    ids, feats = u.legal_play_features()
    assert [u.action_to_string(a) for a in ids] == ["pass", "bid 2", "bid 3"]
    np.testing.assert_array_equal(feats[:, :77], np.zeros((3, 77)))
    np.testing.assert_array_equal(feats[:, 77:], [[1, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])


# -- scenario B: the landlord goes out; the done phase and the final score ---------------------


B_HANDS = ["3456789TJQKA22225", "33344466677788899", "59TTTJJJQQQKKKAAA"]
B_KITTY = "BR5"


def test_done_phase_and_score(env):
    env.reset(options={"hands": B_HANDS, "kitty": B_KITTY, "landlord": 0, "bid": 3})
    o = env.observe("player_1")
    np.testing.assert_array_equal(field(o, "phase"), [0, 1, 0])
    np.testing.assert_array_equal(field(o, "landlord"), [0, 0, 1, 0])
    np.testing.assert_array_equal(field(o, "bid"), [0, 0, 0, 1])
    for rel in range(3):  # the auction was skipped: no auction action anywhere
        np.testing.assert_array_equal(auction(o, rel), onehot(5, 0))
    script = ["3456789TJQKA", "pass", "pass", "2222", "pass", "pass", "BR", "pass", "pass", "55"]
    for k, text in enumerate(script):
        act(env, f"player_{k % 3}", text)
    assert all(env.terminations.values())
    for i, agent in enumerate(env.possible_agents):
        o = env.observe(agent)
        np.testing.assert_array_equal(field(o, "phase"), [0, 0, 1])
        assert not field(o, "turn").any()  # nobody to move
        assert field(o, "doublings")[0] == pytest.approx(2 / 16)  # bomb + rocket
        np.testing.assert_allclose(field(o, "hand_sizes"), [[0, 17, 17][(i + k) % 3] / 20 for k in range(3)])
        np.testing.assert_array_equal(played(o, (0 - i) % 3), planes(B_HANDS[0] + B_KITTY))
        assert not o["action_mask"].any()
    # stake = bid 3 x 2^2 = 12: landlord +24, each farmer -12
    assert env.rewards == {"player_0": 24.0, "player_1": -12.0, "player_2": -12.0}
