"""The rules passages clarified in the rules pages (``docs/rules/``), one literal test each.

Every expected value is worked out by hand from the rules text quoted in each section, not read
from the code:

1. Lanxi Wulong, end of the hand: "a lone active player (the other three failed) plays on until
   he goes out (头家) or fails too (void deal)"; "once the 头家 is known, a hand also ends when
   only one active player remains"; it ends "as soon as the 头家 is known and the payer is
   fixed" (a failed declarer, or a player failed with only 3s: the 末家).
2. Lanxi Wulong, wild jokers: a joker played with at least one natural card stands for any
   natural rank the combination needs (a 2 too, a 3 only inside a chain, a whole part of the
   play); jokers are also themselves (singles, ``BB`` / ``RR`` pairs above ``22``, ``BR`` no
   pair, ``BBRR`` the 天王炸, three jokers no combination); the play says which jokers it uses.
3. Lanxi Wulong ``joker_order="first_played"``: ``R`` and ``B`` are equal as singles; ``RR``
   stays above ``BB`` as pairs.
4. 4-player Dou Dizhu: "the ``spring`` option doubles as for 3 players" (春天: the farmers
   never played a card; 反春: the landlord made only his opening play).
5. ``reward="win_loss"`` is the sign of the score the reward would pay (+1 / 0 / -1), also for
   each hand of a Da Niangniang match.
6. Da Niangniang ``reveal_choice``: "in the 4th draw the first player to receive a 3 becomes
   娘娘 (the choices are still offered there but cannot prevent it)".
7. Da Niangniang: the bottom and the returned cards are known only to the 娘娘 until the hand
   ends, also in a match (where the next hand is dealt at once).
"""

from __future__ import annotations

import numpy as np
import pytest

import cardenvs
from cardenvs import legal_moves
from cardenvs.core.state import CUR, LANDLORD, LAST_ROW, WINNER
from cardenvs.games import wulong as W
from helpers import move, play_script
from test_doudizhu4 import DEAL_A, DEAL_B, DEAL_C, PASS3, final_rewards, make_env, play
from test_niangniang import _draw_threes, _SplitMix, info, make, seat
from test_wulong import act, legal_strings, position

# -- 1. Lanxi Wulong: the lone active player and the end of the hand -------------------------------


@pytest.fixture(scope="module")
def wl() -> W.Wulong:
    return cardenvs.make_game("wulong")


def _end(g, s) -> tuple:
    """(done, status, rewards, 头家, 末家)."""
    return (g.done(s), g.status(s), [int(x) for x in g.rewards(s)], int(s[WINNER]),
            int(s[W.A_LOSER]))


def test_lone_player_answers_the_failed_players_play_then_goes_out(wl):
    # seats 1, 2, 3 fail in turn (each left with 33); seat 0 is alone before anyone is out
    s = position(wl, ["KA", "334", "335", "336"], 1)
    for card in "456":
        act(wl, s, card)
    assert _end(wl, s) == (False, ["active", "failed", "failed", "failed"], [0] * 4, -1, 1)
    # the last play (seat 3's 6) still stands: he beats it or passes, then leads again
    assert int(s[CUR]) == 0 and legal_strings(wl, s) == ["K", "A", "pass", "declare"]
    act(wl, s, "K")
    assert not wl.done(s) and int(s[CUR]) == 0 and int(s[LAST_ROW]) == -1
    act(wl, s, "A")  # out: 头家 seat 0; 末家 the earliest failure, seat 1; undeclared: 1
    assert _end(wl, s) == (True, ["out", "failed", "failed", "failed"], [1, -1, 0, 0], 0, 1)


def test_lone_player_who_passes_leads_next(wl):
    s = position(wl, ["4A", "334", "335", "336"], 1)
    for card in "456":
        act(wl, s, card)
    act(wl, s, "pass")  # every other active player passed: the trick ends, he leads
    assert int(s[CUR]) == 0 and int(s[LAST_ROW]) == -1 and "pass" not in legal_strings(wl, s)
    act(wl, s, "4")
    act(wl, s, "A")
    assert _end(wl, s)[:3] == (True, ["out", "failed", "failed", "failed"], [1, -1, 0, 0])


def test_lone_player_fails_too_void_deal(wl):
    s = position(wl, ["3A", "334", "335", "336"], 1)
    for card in "456":
        act(wl, s, card)
    act(wl, s, "A")  # left with a 3: every player failed before anyone went out
    assert _end(wl, s) == (True, ["failed"] * 4, [0, 0, 0, 0], -1, 1)


def test_lone_player_declares_then_goes_out(wl):
    s = position(wl, ["4A", "334", "335", "336"], 1)
    for card in "456":
        act(wl, s, card)
    act(wl, s, "pass")
    act(wl, s, "declare")  # 2 cards, nobody out yet
    assert legal_strings(wl, s) == ["A"]  # his top card must be in every play
    act(wl, s, "A")
    act(wl, s, "4")  # a declared 头家 is paid 2 by the 末家 (seat 1, the earliest failure)
    assert _end(wl, s)[:3] == (True, ["out", "failed", "failed", "failed"], [2, -2, 0, 0])


def test_lone_player_with_a_failed_declarer(wl):
    s = position(wl, ["KA", "334", "335", "336"], 1, declared=[2])
    for card in "456":
        act(wl, s, card)
    act(wl, s, "K")
    act(wl, s, "A")  # the declarer who is not the 头家 pays 2; nobody else pays
    assert _end(wl, s)[:3] == (True, ["out", "failed", "failed", "failed"], [2, 0, -2, 0])


def test_two_failures_then_an_out_ends_at_once(wl):
    s = position(wl, ["45", "334", "335", "6"], 1)
    act(wl, s, "4")
    act(wl, s, "5")
    act(wl, s, "6")  # seat 3 out: 头家 known, 末家 (seat 1) fixed: over, seat 0 still holds 45
    assert _end(wl, s) == (True, ["active", "failed", "failed", "out"], [0, -1, 0, 1], 3, 1)


def test_outs_without_failures_end_at_the_last_active_player(wl):
    s = position(wl, ["5", "6", "7", "89"], 0)
    act(wl, s, "5")
    assert _end(wl, s)[:2] == (False, ["out", "active", "active", "active"])
    act(wl, s, "6")
    assert _end(wl, s)[:2] == (False, ["out", "out", "active", "active"])
    act(wl, s, "7")  # only seat 3 is active: he is the 末家
    assert _end(wl, s) == (True, ["out", "out", "out", "active"], [1, 0, 0, -1], 0, 3)


@pytest.mark.parametrize("hands, plays, status, rewards", [
    (["5", "36", "7", "89"], "56", ["out", "failed", "active", "active"], [1, -1, 0, 0]),
    (["5", "6", "37", "89"], "567", ["out", "out", "failed", "active"], [1, 0, -1, 0]),
], ids=["out_then_fail", "out_out_then_fail"])
def test_failure_after_the_head_ends_the_hand(wl, hands, plays, status, rewards):
    s = position(wl, hands, 0)
    for card in plays:
        act(wl, s, card)
    assert _end(wl, s)[:3] == (True, status, rewards)


def test_lone_player_play_to_completion():
    g = cardenvs.make_game("wulong", play_to_completion=True)
    s = position(g, ["KA", "334", "335", "336"], 1)
    for card in "456":
        act(g, s, card)
    assert not g.done(s)
    act(g, s, "K")
    act(g, s, "A")
    assert _end(g, s)[:3] == (True, ["out", "failed", "failed", "failed"], [1, -1, 0, 0])
    assert g.ranking(s) == [0, 3, 2, 1]  # then the failures, the earlier lower


# -- 2. Lanxi Wulong: wild jokers --------------------------------------------------------------------


def wlm(hand, prev=None, **options):
    return legal_moves("wulong", hand, prev, **options)


@pytest.mark.parametrize("hand, prev, expected", [
    # jokers alone: singles, BB / RR pairs, BBRR; BR no pair; three jokers nothing; no wild meaning
    ("BR", None, ["B", "R"]),
    ("BBR", None, ["B", "R", "BB"]),
    ("BRR", None, ["B", "R", "RR"]),
    ("BBRR", "2222", ["BBRR"]),
    ("RR", "22", ["RR"]),
    ("BR", "22", []),
    ("BBR", "222", []),
    # with a natural card a joker stands for any natural rank, a 2 included (R + 222 = 2222)
    ("5R", None, ["5", "R", "5R[5]"]),
    ("222R", "AAAA", ["222R[2]"]),
    # a 3 only inside a chain, natural or wild
    ("3R", None, ["R"]),
    ("JQKAR", "34567", ["R[T]JQKA"]),  # never a 2 in a chain
    ("R4567", "34567", ["4567R[8]"]),
    # jokers may be a whole part of the play: both cells of the pair 44 of 445566
    ("5566BR", "334455", ["55B[5]R[5]", "66B[6]R[6]", "B[4]R[4]5566", "5566B[7]R[7]"]),
], ids=lambda x: repr(x))
def test_wild_joker_plays(hand, prev, expected):
    assert wlm(hand, prev) == expected


def test_wild_joker_plays_that_hold_a_chain_three_or_joker_pairs():
    assert "R[3]4567" in wlm("R4567")  # R[3]4567: the joker is the 3 of the straight
    assert "3R[3]4455" in wlm("34455R")  # 3R[3]4455
    # 444RR: a trio with the pair RR, the bomb 44444, or a trio with a pair made of jokers
    moves = wlm("444RR")
    assert {"444RR", "444R[4]R[4]", "444R[5]R[5]", "444R[2]R[2]"} <= set(moves)
    assert "444BR" not in wlm("444BR")  # BR is no pair
    assert [m for m in wlm("3BR") if len(m) > 1] == []


@pytest.mark.parametrize("option, hand, expected", [
    ("big_only", "444B", ["4", "B", "44", "444"]),  # the small joker is only itself
    ("big_only", "5R", ["5", "R", "5R[5]"]),
    ("none", "444R", ["4", "R", "44", "444"]),
])
def test_wild_joker_options(option, hand, expected):
    assert wlm(hand, wild_jokers=option) == expected


def test_the_play_says_which_joker_it_uses(wl):
    # holding 5BR, the pair 55 is 5 + the small joker or 5 + the big one: two hands are left
    s = position(wl, ["5BR9", "6", "7", "8"], 0)
    act(wl, s, "55")
    assert legal_strings(wl, s) == ["B[5]", "R[5]"]
    act(wl, s, "R[5]")
    assert wl.deck.format(s[W.hand_off(0):W.hand_off(0) + 16]) == "9B"
    s = position(wl, ["5BR9", "6", "7", "8"], 0)
    act(wl, s, "55")
    act(wl, s, "B[5]")
    assert wl.deck.format(s[W.hand_off(0):W.hand_off(0) + 16]) == "9R"


# -- 3. Lanxi Wulong joker_order="first_played" -------------------------------------------------------


@pytest.mark.parametrize("hand, prev, default, first_played", [
    ("R", "B", ["R"], []),  # equal singles: the first played stands
    ("B", "R", [], []),
    ("RR", "BB", ["RR"], ["RR"]),  # pairs keep RR above BB
    ("BB", "RR", [], []),
    ("R", "2", ["R"], ["R"]),
    ("B", "2", ["B"], ["B"]),
    ("BB", "22", ["BB"], ["BB"]),
])
def test_first_played_joker_order(hand, prev, default, first_played):
    assert wlm(hand, prev) == default
    assert wlm(hand, prev, joker_order="first_played") == first_played


def test_first_played_in_a_game():
    g = cardenvs.make_game("wulong", joker_order="first_played")
    s = position(g, ["R5", "B6", "7", "8"], 1)
    act(g, s, "B")
    assert legal_strings(g, s) == ["pass", "declare"]  # seats 2 and 3 cannot beat B either
    for _ in range(3):
        act(g, s, "pass")
    assert int(s[CUR]) == 1 and int(s[LAST_ROW]) == -1  # the B stood: seat 1 leads


# -- 4. 4-player Dou Dizhu spring --------------------------------------------------------------------

# DEAL_A: landlord 0 at bid 2 goes out with one 6-card bomb (x2): stake 4, no farmer plays
A_SPRING = ["333333"] + PASS3 + ["44444"] + PASS3 + ["555666777888"] + PASS3 + ["99TTJJQQKK"]
# DEAL_B: landlord 1 at bid 1, after a farmer played a Q; BBRR doubles: stake 2
B_FARMER_PLAYED = (["J", "Q", "pass", "pass", "2222"] + PASS3 + ["BBRR"] + PASS3
                   + ["333444555666777888999TTT"])
# DEAL_C: landlord 2 at bid 3 plays only his opening 3; 222222 and AAAAAAAA double: stake 12
C_ANTI_SPRING = (["3", "pass", "222222"] + PASS3 + ["AAAAAAAA"] + PASS3 + ["KKKKK"] + PASS3
                 + ["334455"])
# DEAL_C again, the landlord plays twice (3, then the 4-card bomb 9999, no doubling): stake 12
C_TWO_PLAYS = (["3", "J", "K", "pass", "9999", "pass", "222222"] + PASS3 + ["AAAAAAAA"] + PASS3
               + ["KKKK"] + PASS3 + ["334455"])


@pytest.mark.parametrize("deal, ll, bid, moves, plain, spring", [
    (DEAL_A, 0, 2, A_SPRING, [12, -4, -4, -4], [24, -8, -8, -8]),  # 春天: x2
    (DEAL_B, 1, 1, B_FARMER_PLAYED, [-2, 6, -2, -2], [-2, 6, -2, -2]),  # a farmer played
    (DEAL_C, 2, 3, C_ANTI_SPRING, [12, 12, -36, 12], [24, 24, -72, 24]),  # 反春: x2
    (DEAL_C, 2, 3, C_TWO_PLAYS, [12, 12, -36, 12], [12, 12, -36, 12]),  # two landlord plays
], ids=["spring", "farmer_played", "anti_spring", "landlord_played_twice"])
def test_doudizhu4_spring(deal, ll, bid, moves, plain, spring):
    for option, expected in ((False, plain), (True, spring)):
        env = make_env(spring=option)
        env.reset(seed=0, options={**deal, "landlord": ll, "bid": bid})
        play(env, moves)
        assert all(env.terminations.values())
        assert final_rewards(env) == expected


# -- 5. win_loss is the sign of the score --------------------------------------------------------------

# the 娘娘 (seat 0) returned 3KKQ (3 活子) and goes out 1st: +6 - 3 = +3; the catchers +1 / 0 / -1
# in the order they go out: seat 1 (2nd) +1, seat 3 (3rd) 0, seat 2 (last) -1
NN_FIRST = dict(hands=["2222AAAAKK", "3456789TJQ", "3344556677", "8899TTJJQQ"],
                bottom="3456789TJQKKBR", niangniang=0, returned="3KKQ")
NN_FIRST_SCRIPT = ["3", "pass", "pass", "2222", "pass", "pass", "pass", "AAAA", "pass", "pass",
                   "pass", "KK", "pass", "pass", "pass", "456789TJQ", "pass", "pass",
                   "33445566", "8899TTJJ", "pass", "QQ"]


@pytest.mark.parametrize("match", [False, True])
def test_niangniang_win_loss_is_the_sign_of_each_hand(match):
    scores = {"player_0": 3.0, "player_1": 1.0, "player_2": -1.0, "player_3": 0.0}
    env = make(match=match)
    env.reset(options=NN_FIRST)
    assert play_script(env, NN_FIRST_SCRIPT) == scores
    env = make(match=match, reward="win_loss")
    env.reset(options=NN_FIRST)
    # paid when the hand ends, in a match too (the middle catcher's 0 stays 0)
    assert play_script(env, NN_FIRST_SCRIPT) == {a: float(np.sign(v)) for a, v in scores.items()}
    g, s = env.unwrapped.game, env.unwrapped.state_vec
    assert g.done(s) != match  # a match deals its next hand (totals 3 < 40)
    if match:
        assert info(env)["phase"] == "take" and info(env)["totals"] == [3, 1, -1, 0]


def test_niangniang_match_win_loss_pays_every_hand():
    # a whole seeded match: each hand pays the signs of its scores, the episode's sum is theirs
    env = make(match=True, reward="win_loss", target_score=8)
    env_s = make(match=True, target_score=8)
    env.reset(seed=4)
    env_s.reset(seed=4)
    rng = np.random.default_rng(4)
    hands = 0
    while not all(env.terminations.values()) and not all(env.truncations.values()):
        ids = env.unwrapped.legal_actions()
        a = int(ids[rng.integers(len(ids))])
        env.step(a)
        env_s.step(a)
        if env_s.unwrapped.game.hands_played(env_s.unwrapped.state_vec) > hands:
            hands += 1
            scores = env_s.unwrapped.game.last_scores(env_s.unwrapped.state_vec)
            assert env.rewards == {f"player_{q}": float(np.sign(v)) for q, v in enumerate(scores)}
        else:
            assert all(v == 0 for v in env.rewards.values())
    assert hands >= 2


def test_win_loss_zero_for_a_wulong_seat_that_pays_nothing(wl):
    g = cardenvs.make_game("wulong", reward="win_loss")
    s = position(g, ["5", "6", "7", "8"], 0, declared=[1])
    act(g, s, "5")  # the failed declarer (seat 1) pays 2; seats 2 and 3 pay nothing
    assert [int(x) for x in g.rewards(s)] == [1, -1, 0, 0]


# -- 6. Da Niangniang reveal_choice: the 4th draw ----------------------------------------------------


def _to_fourth_draw(seed: int):
    """A game state after hiding every 3 of the first three draws; the 4th draw's receivers
    (the draws computed by the test's own implementation of the procedure)."""
    g = cardenvs.make_game("niangniang", first_niangniang="reveal_choice")
    s = g.new_state()
    g.reset(s, seed)
    rng = _SplitMix(seed)
    for _ in range(3):
        for q in _draw_threes(rng):
            assert int(s[CUR]) == q
            _choose(g, s, "hide")
    return g, s, _draw_threes(rng)


def _choose(g, s, text):
    out = np.empty(g.n_actions, np.int64)
    k = g.legal(s, out)
    assert [g.action_to_string(int(a)) for a in out[:k]] == ["reveal", "hide"]
    g.step(s, g.string_to_action(text))


def test_fourth_draw_later_reveal_cannot_prevent_the_first_receiver():
    cases = 0
    for seed in range(10):
        g, s, threes = _to_fourth_draw(seed)
        k = next((i for i, q in enumerate(threes) if q != threes[0]), None)
        if k is None:
            continue  # one seat received all four 3s
        for q in threes[:k]:
            assert int(s[CUR]) == q
            _choose(g, s, "hide")
        assert int(s[CUR]) == threes[k]
        _choose(g, s, "reveal")  # offered, but the first receiver is 娘娘
        assert int(s[LANDLORD]) == threes[0] == int(s[CUR]), seed
        cases += 1
    assert cases >= 5


@pytest.mark.parametrize("seed", range(4))
def test_fourth_draw_first_receiver_reveals_or_all_hide(seed):
    g, s, threes = _to_fourth_draw(seed)
    _choose(g, s, "reveal")
    assert int(s[LANDLORD]) == threes[0]
    g, s, threes = _to_fourth_draw(seed)
    for q in threes:
        assert int(s[CUR]) == q
        _choose(g, s, "hide")
    assert int(s[LANDLORD]) == threes[0]


def test_fourth_draw_known_case_env_seed_0():
    # env.reset(seed=0): the 4th draw's first 3 goes to seat 0; seat 3 reveals a later one
    env = make(first_niangniang="reveal_choice")
    env.reset(seed=0)
    for _ in range(12):
        move(env, "hide")
    first = seat(env)
    assert first == 0
    while seat(env) != 3:
        move(env, "hide")
    move(env, "reveal")
    assert info(env)["phase"] == "take" and info(env)["niangniang"] == first


def test_earlier_draws_a_later_reveal_still_chooses():
    # draws 1 to 3 are unchanged: the first to reveal becomes the 娘娘
    g = cardenvs.make_game("niangniang", first_niangniang="reveal_choice")
    s = g.new_state()
    for seed in range(8):
        g.reset(s, seed)
        threes = _draw_threes(_SplitMix(seed))
        _choose(g, s, "hide")
        _choose(g, s, "reveal")
        assert int(s[LANDLORD]) == threes[1]


# -- 7. Da Niangniang: a finished hand's bottom in a match ---------------------------------------------


def _cards_field(env, agent, field):
    a, b = env.unwrapped.game.layout.offsets[field]
    return env.observe(agent)["observation"][a:b]


def _set_of(vec) -> str:
    """The card string of a 15 x 4 card-set field (bit r*4+k-1: >= k of rank r)."""
    order = "3456789TJQKA2BR"
    return "".join(order[r] * int(vec[4 * r:4 * r + 4].sum()) for r in range(15))


def test_match_catchers_see_the_finished_hands_bottom():
    env = make(match=True)
    env.reset(options=NN_FIRST)
    catchers = ["player_1", "player_2", "player_3"]
    for text in NN_FIRST_SCRIPT[:-1]:
        move(env, text)
    for agent in catchers:  # until the hand ends the catchers see nothing of it
        for field in ("taken", "returned", "bottom"):
            assert not _cards_field(env, agent, field).any()
    move(env, NN_FIRST_SCRIPT[-1])  # the hand ends; the match deals its second hand at once
    assert info(env)["phase"] == "take" and info(env)["hand"] == 1
    nn = f"player_{info(env)['niangniang']}"
    assert nn == "player_2"  # the lowest score of hand 1: seat 2, -1
    for agent in env.possible_agents:
        if agent == nn:  # the new 娘娘 sees his new bottom
            assert len(_set_of(_cards_field(env, agent, "bottom"))) == 14
            assert not _cards_field(env, agent, "returned").any()
            continue
        assert _set_of(_cards_field(env, agent, "taken")) == ""  # the custom deal gave none
        assert _set_of(_cards_field(env, agent, "returned")) == "3QKK"
        assert _set_of(_cards_field(env, agent, "bottom")) == "3456789TJQKKBR"


def test_match_catchers_see_what_the_niangniang_saw():
    env = make(match=True)
    env.reset(seed=11)
    g = env.unwrapped.game
    rng = np.random.default_rng(11)
    fields = ("taken", "returned", "bottom")
    checked = 0
    seen = None
    while checked < 3 and not all(env.terminations.values()):
        nn = f"player_{info(env)['niangniang']}"
        if info(env)["phase"] == "play":
            seen = [_cards_field(env, nn, f).copy() for f in fields]
            for agent in env.possible_agents:
                if agent != nn and checked == 0:
                    assert not any(_cards_field(env, agent, f).any() for f in fields)
        before = g.hands_played(env.unwrapped.state_vec)
        ids = env.unwrapped.legal_actions()
        env.step(int(ids[rng.integers(len(ids))]))
        if g.hands_played(env.unwrapped.state_vec) > before:
            new_nn = f"player_{info(env)['niangniang']}"
            for agent in env.possible_agents:
                if agent != new_nn or all(env.terminations.values()):
                    for f, v in zip(fields, seen):
                        assert np.array_equal(_cards_field(env, agent, f), v), (agent, f)
            assert len(_set_of(seen[0])) == 4 and len(_set_of(seen[2])) == 14
            checked += 1
    assert checked == 3
