"""The information-state accessors (cardenvs.infostate) at literal positions of the rules pages."""

from __future__ import annotations

import numpy as np
import pytest

import cardenvs
from cardenvs.core.state import hand_off

DDZ_HANDS = ["3334445556667778B", "88899TTTJJJQQQKKK", "AAAA2222R99TJQ567"]  # the rest: 34K


def _fmt(game, counts):
    return game.deck.format(np.asarray(counts, np.int64))


def test_doudizhu_auction_hides_the_kitty():
    g = cardenvs.make_game("doudizhu")
    s = g.new_state()
    g.custom_deal(s, {"hands": DDZ_HANDS}, 0)
    i = cardenvs.infostate(g, s, 0)
    assert i.hand == "3334445556667778B"
    assert i.hands == ["3334445556667778B", None, None]
    assert i.hand_sizes.tolist() == [17, 17, 17]
    assert i.kitty is None
    assert i.hidden == {"hand 1": 17, "hand 2": 17, "kitty": 3}
    assert i.known_in == {}
    # the 37 unseen cards: the deck less the own hand
    assert i.unknown == _fmt(g, g.deck.full_counts() - s[hand_off(0):hand_off(0) + 16])
    assert len(i.unknown) == 37
    assert i.played == ["", "", ""]


def test_doudizhu_shown_kitty_is_in_the_landlords_hand():
    """Rules page: the landlord takes the 3 kitty cards, shown to all."""
    g = cardenvs.make_game("doudizhu")
    s = g.new_state()
    g.custom_deal(s, {"hands": DDZ_HANDS, "kitty": "34K", "landlord": 1, "bid": 3}, 0)
    farmer = cardenvs.infostate(g, s, 0)
    assert farmer.kitty == "34K"
    assert farmer.hand_sizes.tolist() == [17, 20, 17]
    assert farmer.hidden == {"hand 1": 20, "hand 2": 17}
    assert farmer.known_in == {"hand 1": "34K"}
    assert len(farmer.unknown) == 37 and farmer.free_counts.sum() == 34
    ll = cardenvs.infostate(g, s, 1)
    assert ll.known_in == {} and ll.kitty == "34K"
    assert ll.hands[1] == "3488899TTTJJJQQQKKKK"
    # the landlord plays the 3 of the kitty: only 4K stay known in his hand
    g.step(s, g.string_to_action("3"))
    assert cardenvs.infostate(g, s, 0).known_in == {"hand 1": "4K"}
    assert cardenvs.infostate(g, s, 2).played == ["", "3", ""]


def test_doudizhu4_kitty_is_the_landlords_secret():
    g = cardenvs.make_game("doudizhu4")
    env = cardenvs.doudizhu4_v0.env(auction="fixed")
    env.reset(seed=3)
    i = cardenvs.infostate(env)  # the env's state, the seat to move (the landlord, seat 0)
    assert i.seat == 0 and i.kitty is not None and len(i.kitty) == 8
    f = cardenvs.infostate(env, seat=1)
    assert f.kitty is None and "kitty" not in f.hidden
    assert f.hidden == {"hand 0": 33, "hand 2": 25, "hand 3": 25}
    assert f.known_in == {}
    assert g.info.name == "doudizhu4"


def test_wakeng_burial_and_open_hand():
    """Rules page: the digger takes the 4 kitty cards and buries 4 (digger only); an open
    hand (明牌) shows his 16 dealt cards to everyone; reveal_kitty shows the kitty."""
    hands = ["444455556666777A", "88889999TTTTJJJA", "QQQQKKKK22223AA3"]  # kitty: 7J33
    g = cardenvs.make_game("wakeng", open_hand=True, reveal_kitty=True)
    s = g.new_state()
    g.custom_deal(s, {"hands": hands, "digger": 0, "bid": 3, "leader": 0}, 0)
    g.step(s, g.string_to_action("open"))
    f = cardenvs.infostate(g, s, 1)
    assert f.piles["open_hand"] == "444455556666777A"
    assert f.kitty == "7J33"
    assert f.hidden == {"hand 0": 20, "hand 2": 16, "buried": 0}
    assert f.known_in == {"hand 0|buried": "4444555566667777JA33"}
    d = cardenvs.infostate(g, s, 0)
    assert set(d.piles) >= {"kitty", "buried", "dealt"} and d.hidden == {"hand 1": 16, "hand 2": 16}
    g.step(s, g.string_to_action("bury 4"))
    f = cardenvs.infostate(g, s, 1)
    assert f.hidden == {"hand 0": 19, "hand 2": 16, "buried": 1}
    plain = cardenvs.make_game("wakeng")
    s2 = plain.new_state()
    plain.custom_deal(s2, {"hands": hands, "digger": 0, "bid": 2, "leader": 0}, 0)
    f2 = cardenvs.infostate(plain, s2, 2)
    assert f2.kitty is None and f2.known_in == {} and "open_hand" not in f2.piles


def test_niangniang_exchange_is_the_niangniangs_secret():
    g = cardenvs.make_game("niangniang")
    s = g.new_state()
    hands = ["3333444455", "5566667777", "88889999TT", "TTJJJJQQQQ"]
    g.custom_deal(s, {"hands": hands, "niangniang": 0}, 0)  # bottom: KKKKAAAA2222BR
    c = cardenvs.infostate(g, s, 2)
    assert c.kitty is None
    assert c.hidden == {"hand 0": 10, "hand 1": 10, "hand 3": 10, "bottom": 14}
    nn = cardenvs.infostate(g, s, 0)
    assert nn.kitty == "KKKKAAAA2222BR" and nn.hidden == {"hand 1": 10, "hand 2": 10, "hand 3": 10}
    g.step(s, g.string_to_action("take B"))
    c = cardenvs.infostate(g, s, 2)
    assert c.hidden == {"hand 0": 11, "hand 1": 10, "hand 3": 10, "bottom": 13}
    assert cardenvs.infostate(g, s, 0).piles["taken"] == "B"
    assert c.stuck == [False] * 4 and c.jokers_for == ["", "", "", ""]


def test_wulong_declared_and_failed_hands_are_known():
    g = cardenvs.make_game("wulong")
    s = g.new_state()
    g.set_position(s, ["456789TJQ", "KKAA22BR", "3456677", "333"], to_move=0, declared=[2])
    i = cardenvs.infostate(g, s, 0)
    assert i.declared == [False, False, True, False]
    assert i.failed == [False, False, False, True]
    assert i.hands == ["456789TJQ", None, "3456677", "333"]
    assert i.hidden == {"hand 1": 8, "unused": int(g.deck.size - 9 - 8 - 7 - 3)}
    assert i.allowed == {}  # an 8-card hand may hold anything (not only 3s: a check)


def test_bad_input():
    g = cardenvs.make_game("wakeng")
    s = g.new_state()
    g.reset(s, 0)
    with pytest.raises(ValueError, match="out of range"):
        cardenvs.infostate(g, s, -1)
    with pytest.raises(TypeError, match="state"):
        cardenvs.infostate(g, None, 0)
    with pytest.raises(ValueError, match="entries"):
        cardenvs.infostate(g, np.zeros(5, np.int64), 0)
    with pytest.raises(ValueError, match="no hidden pile"):
        cardenvs.infostate(g, s, 0).may_hold("moon")


def test_determinize_takes_an_environment():
    env = cardenvs.wakeng_v0.env()
    env.reset(seed=4)
    s = env.unwrapped.state_vec
    x = cardenvs.determinize(env, s, 1, np.random.default_rng(0))
    g = env.unwrapped.game
    o1, o2 = np.zeros(g.layout.size, np.float32), np.zeros(g.layout.size, np.float32)
    g.encode(s, 1, o1)
    g.encode(x, 1, o2)
    assert x.shape == s.shape and np.array_equal(o1, o2)
    assert not np.array_equal(x, s)  # another deal (or at least another generator slot)
