"""打娘娘 ``niangniang``: combinations with wild jokers, the stuck rule and turns, the joker
follow-up, the exchange, scoring with the 活子 penalty, match play, custom deals, observation
privacy and PettingZoo conformance with non-default options.

Every expected value below is derived by hand from the rules page (docs/rules/niangniang.md),
restated here so the tests do not read the page:

* 4 players, 54 cards; ranks 3 < 4 < ... < A < 2 (``three_high``: 4 < ... < A < 2 < 3);
  10 cards each, 14 in the bottom; the 娘娘 takes 4 bottom cards, then returns 4 of his 10
  dealt cards, never a joker; the 娘娘's next seat leads;
* a joker is never played alone; with at least one natural card it stands for any natural rank
  the play needs (``5B`` = ``55``, ``66R`` = ``666``, ``4B678`` = ``45678``, 小王+333 = ``3333``,
  大王+4444 = a 5-card bomb of 4s); ``BR`` is the joker bomb, the weakest bomb;
* single, pair, trio, trio + pair, straight (>= 5 within 3..A), pair chain (>= 2 pairs within
  3..A), bomb (>= 4 of one rank); bombs beat every non-bomb; between bombs more cards beat
  fewer, equal size -> higher rank, equal size and rank never beats (5555 and 555+joker are
  equal); no trio + single, no airplanes;
* a player whose only card is one joker is stuck: no longer active, below every player who goes
  out, several stuck players by when they got stuck (earlier = lower); play goes on until at
  most one active player remains, who takes the best place still open;
* 娘娘 +6/+3/-3/-6 for places 1..4; catchers +2/+1/-1/-2 by overall place, but +1/0/-1 in
  their order when the 娘娘 is 1st; the 娘娘 loses 1 per 活子 (not 3, 2, B, R) among the 4
  returned cards; the seed's example: catchers 1st and 2nd, 3 活子 returned -> 娘娘 -6 - 3 = -9;
* match: hands until a total reaches 40; the highest total wins, an exact tie plays on; the
  lowest scorer of a hand (ties: the worse place) is the next 娘娘.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

import cardenvs
from cardenvs import legal_moves, niangniang_v0
from cardenvs.core.combos import FAMILY_NAMES
from cardenvs.core.state import CUR, LANDLORD, LAST_ROW
from cardenvs.games.niangniang import NP, X_PLACE, X_RET, X_TOTAL, hand_scores, kitty_off
from helpers import assert_bad_deal_kept_out, move, play_script

G = "niangniang"


def lm(hand, prev=None, **options):
    """The effective plays of a hand (``plain=True``: ``"55"`` for ``5B[5]``); every
    realisation in the bracket notation is tested in ``tests/test_wild_query.py``."""
    return legal_moves(G, hand, prev, plain=True, **options)


def make(**kw):
    return niangniang_v0.env(illegal="raise", **kw)


def seat(env) -> int:
    return int(env.unwrapped.state_vec[CUR])


def legal_strings(env) -> list[str]:
    return [env.unwrapped.action_to_string(a) for a in env.unwrapped.legal_actions()]


def info(env) -> dict:
    return env.infos[env.agent_selection]


# -- the play table ---------------------------------------------------------------------------------


def test_table_size_and_blocks():
    g = cardenvs.make_game(G)
    fams = {}
    for p in g.table.plays:
        fams[FAMILY_NAMES[p.family]] = fams.get(FAMILY_NAMES[p.family], 0) + 1
    # 13 ranks; trio + pair: 13 trios x 12 other pair ranks; straights of 5..10 within the 12
    # ranks 3..A: 8+7+6+5+4+3; pair chains of 2..5 pairs: 11+10+9+8; bombs of 4, 5, 6 cards
    assert fams == {"single": 13, "pair": 13, "trio": 13, "trio_pair": 156, "straight": 33,
                    "pair_chain": 38, "bomb": 39, "rocket": 1}
    assert len(g.table) == 306
    assert g.blocks == {"play": (0, 306), "pass": (306, 307), "take": (307, 322),
                        "return": (322, 335), "joker": (335, 349)}
    assert g.n_actions == 349
    r = cardenvs.make_game(G, first_niangniang="reveal_choice")
    assert r.blocks["reveal"] == (307, 309) and r.n_actions == 351
    # options that change the table: trio + single adds 13 x 12 rows; pair chains from 3 pairs
    assert len(cardenvs.make_game(G, allow_trio_single=True).table) == 306 + 156
    assert len(cardenvs.make_game(G, min_pair_chain=3).table) == 306 - 11


# -- combinations and jokers (legal_moves) --------------------------------------------------------


def test_joker_stands_in_with_a_natural_card():
    assert "55" in lm("5B")  # 5B is a pair of 5s
    assert "666" in lm("66R")  # 66R a trio
    assert "45678" in lm("4B678")  # a straight
    assert "3333" in lm("333B")  # 小王 + 333 = 3333
    assert "44444" in lm("4444R")  # 大王 + 4444 = a 5-card bomb of 4s
    assert "555" in lm("5BR") and "5555" not in lm("5BR")
    assert "3344" in lm("3344") and "3344" in lm("33B4")  # pair chain from two pairs


def test_joker_never_alone():
    assert lm("B") == [] and lm("R") == []
    assert lm("5B") == ["5", "55"]
    assert lm("BR") == ["BR"]  # the joker bomb, never a pair
    assert lm("B7", "A") == []  # no joker single
    assert lm("B7", "6") == ["7"]
    assert lm("BR", "33") == ["BR"]  # a bomb over a pair, not a pair


def test_combinations_of_the_page():
    assert lm("3334") == ["3", "4", "33", "333"]  # no trio + single
    assert "3334" in lm("3334", allow_trio_single=True)
    assert "33344" in lm("33344")  # trio + pair
    assert "34567" in lm("34567") and "TJQKA" in lm("TJQKA")
    assert [m for m in lm("JQKA2") if len(m) == 5] == []  # 2 never in a chain
    assert "TJQKA" in lm("JQKA2B") and "JQKA2" not in lm("JQKA2B")
    assert [m for m in lm("3344", min_pair_chain=3) if len(m) == 4] == []
    assert lm("56789", "45678") == ["56789"]
    assert lm("4444", "45678") == ["4444"]


def test_bomb_rules():
    # bombs beat every non-bomb
    assert lm("333B", "22") == ["3333"]
    # the joker bomb is the weakest bomb: it beats non-bombs, no bomb; every bomb beats it
    assert lm("BR", "22") == ["BR"]
    assert lm("BR", "3333") == []
    assert lm("3333", "BR") == ["3333"]
    # more cards beat fewer whatever the rank
    assert "33333" in lm("3333B", "2222") and "3333" not in lm("3333B", "2222")
    assert lm("AAAA", "33333") == []
    assert lm("AAAAB", "33333") == ["AAAAA"]
    assert "33333" in lm("3333B", "AAAA")
    # equal size -> higher rank
    assert lm("6666", "5555") == ["6666"]
    assert lm("555B", "6666") == []  # 用小王配成的5555炸弹，比自然形成的6666炸弹小
    assert lm("666B", "5555") == ["6666"]
    # equal size and rank never beats: 5555 and 555 + joker are one row, which does not beat
    # itself (one deck cannot hold both, so this is asked of the generator directly)
    g = cardenvs.make_game(G)
    out = np.empty(len(g.table), np.int64)
    for hand in ("5555", "555B", "55BR"):
        k = g.legal_rows(g.deck.parse(hand), g.table.find("5555"), out)
        assert [g.table.row_string(t) for t in out[:k]] == []
    k = g.legal_rows(g.deck.parse("5555B"), g.table.find("5555"), out)
    assert [g.table.row_string(t) for t in out[:k]] == ["55555"]


def test_three_high_rank_order():
    assert lm("3", "2", rank_order="three_high") == ["3"]
    assert lm("3", "2") == []
    assert lm("2", "3", rank_order="three_high") == []
    assert "3333" in lm("3333", "2222", rank_order="three_high")
    # chains within 4..A: 3 joins none
    assert [m for m in lm("34567", rank_order="three_high") if len(m) == 5] == []
    assert "45678" in lm("45678", rank_order="three_high")


def test_bombs_only_scope():
    assert lm("5B", joker_wild_scope="bombs_only") == ["5"]
    assert lm("5B", "44", joker_wild_scope="bombs_only") == []
    assert "5555" in lm("555B", joker_wild_scope="bombs_only")
    assert "55" in lm("555B", joker_wild_scope="bombs_only")  # natural pairs still fine
    assert lm("BR", "22", joker_wild_scope="bombs_only") == ["BR"]
    assert "45678" not in lm("4B678", joker_wild_scope="bombs_only")


def test_legal_moves_bad_positions():
    with pytest.raises(ValueError, match="at most 10"):
        lm("33334444555")
    with pytest.raises(ValueError, match="impossible position"):
        lm("5555", "555555")  # six 5s need two jokers; the hand holds all four 5s
    with pytest.raises(ValueError, match="impossible position"):
        lm("B5", "BR")
    with pytest.raises(ValueError, match="impossible position"):
        lm("5555", "55")  # the pair would be BR: no natural card
    # with jokers standing in these are possible positions
    assert lm("555", "55") == []  # the pair was 5 + a joker
    assert lm("55", "5555") == []  # the bomb was 55 + BR


# -- custom deals -------------------------------------------------------------------------------------

# a deal written by hand (10 + 10 + 10 + 10 + 14 = 54); the 娘娘 is seat 0
STUCK_DEAL = {
    "hands": ["3344556677", "3456789TJB", "3456789TJR", "QQQQKKKKAA"],
    "bottom": "889 9TTJJAA2222",
    "niangniang": 0,
}


@pytest.mark.parametrize("options, exc, fragment", [
    ({"hands": STUCK_DEAL["hands"]}, ValueError, "niangniang"),
    ({**STUCK_DEAL, "niangniang": 4}, ValueError, "niangniang=4"),
    ({**STUCK_DEAL, "hands": STUCK_DEAL["hands"][:3]}, ValueError, "4 hands"),
    ({**STUCK_DEAL, "hands": ["334455667", *STUCK_DEAL["hands"][1:]]}, ValueError, "deals 10"),
    ({**STUCK_DEAL, "bottom": "889"}, ValueError, "bottom has 3 cards"),
    ({**STUCK_DEAL, "returned": "22B2"}, ValueError, "too many 'B'|joker"),
    ({**STUCK_DEAL, "returned": "2222B"}, ValueError, "returns 4"),
    ({**STUCK_DEAL, "returned": "QQ22"}, ValueError, "not in the bottom"),
    ({**STUCK_DEAL, "leader": 1}, ValueError, "unknown deal option"),
])
def test_bad_custom_deals(options, exc, fragment):
    assert_bad_deal_kept_out(make(), options, exc, fragment, seed=1)


def test_returned_may_not_be_a_joker():
    deal = {"hands": ["3344556677", "3456789TJ2", "3456789TJ2", "QQQQKKKKAA"],
            "bottom": "8899TTJJAA22BR", "niangniang": 0, "returned": "22BR"}
    with pytest.raises(ValueError, match="joker"):
        make().reset(options=deal)


# -- the exchange -------------------------------------------------------------------------------------


def test_exchange_takes_then_returns_from_the_dealt_hand():
    env = make()
    env.reset(options={"hands": ["3456789TJB", "3344556677", "3456789TJR", "QQQQKKKKAA"],
                       "bottom": "889 9TTJJAA2222", "niangniang": 0})
    g = env.unwrapped.game
    s = env.unwrapped.state_vec
    assert info(env)["phase"] == "take" and seat(env) == 0
    # takes: any bottom card by rank
    assert sorted(legal_strings(env)) == sorted(f"take {c}" for c in "89TJA2")
    for c in "2222":
        move(env, f"take {c}")
    assert info(env)["phase"] == "return"
    # returns: only ranks of the 10 dealt cards, never a joker, never a taken 2
    assert legal_strings(env) == [f"return {c}" for c in "3456789TJ"]
    with pytest.raises(ValueError, match="illegal"):
        env.step(g.string_to_action("return 2"))
    move(env, "return 9")
    assert "return 9" not in legal_strings(env)  # his only dealt 9 is back in the bottom
    for c in "TJ8":
        move(env, f"return {c}")
    assert info(env)["phase"] == "play" and seat(env) == 1  # the 娘娘's next seat leads
    assert g.cards(s, "hand0") == "345672222B"
    assert g.cards(s, "returned") == "89TJ"
    assert g.cards(s, "taken") == "2222"
    assert g.cards(s, "bottom") == "888999TTTJJJAA"


def test_random_exchanges_never_return_a_joker():
    env = niangniang_v0.env()
    g = env.unwrapped.game
    js = [13, 14]
    for seed in range(40):
        env.reset(seed=seed)
        s = env.unwrapped.state_vec
        rng = np.random.default_rng(seed)
        nn = int(s[LANDLORD])
        bottom_jokers = int(s[kitty_off(NP) + 13] + s[kitty_off(NP) + 14])
        while info(env)["phase"] in ("take", "return"):
            ids = env.unwrapped.legal_actions()
            if info(env)["phase"] == "return":
                assert all(g.block_of(int(a)) == "return" for a in ids)
            env.step(int(ids[rng.integers(len(ids))]))
        taken = g.deck.parse(g.cards(s, "taken"))
        ret = g.deck.parse(g.cards(s, "returned"))
        dealt = g.deck.parse(g.cards(s, "dealt"))
        assert taken.sum() == 4 and ret.sum() == 4
        assert ret[js].sum() == 0
        assert np.all(ret <= dealt)
        assert len(g.cards(s, f"hand{nn}")) == 10 and len(g.cards(s, "bottom")) == 14
        bottom = g.deck.parse(g.cards(s, "bottom"))
        assert bottom[js].sum() == bottom_jokers - taken[js].sum()


# -- the joker follow-up -------------------------------------------------------------------------------

# seat 1 leads (the 娘娘 is seat 0); the deal is after the exchange
JOKER_DEAL = {
    "hands": ["3334447 7JJ", "5566BR789T", "3456789TJQ", "QQQKKKKAAA"],
    "bottom": "5688 99TTJA2222", "niangniang": 0, "returned": "2222",
}


def test_voluntary_joker_choice_offered_only_when_real():
    env = make()
    env.reset(options=JOKER_DEAL)
    g = env.unwrapped.game
    s = env.unwrapped.state_vec
    assert seat(env) == 1
    move(env, "55")  # holding 55 and two jokers: 55, 5B (a joker as 5) are both possible
    assert info(env)["phase"] == "joker" and seat(env) == 1
    assert legal_strings(env) == ["joker as 5", "no more jokers"]
    move(env, "joker as 5")
    # BR as 55 has no natural card: no second joker is offered, the play is made
    assert info(env)["phase"] == "play" and seat(env) == 2
    assert g.cards(s, "played1") == "5B"  # B stands in first
    assert g.cards(s, "hand1") == "566789TR"
    assert "p1:55 (joker=5)" in g.render(s)


def test_voluntary_jokers_in_non_decreasing_rank_order():
    env = make()
    env.reset(options=JOKER_DEAL)
    move(env, "5566")
    assert legal_strings(env) == ["joker as 5", "joker as 6", "no more jokers"]
    move(env, "joker as 6")
    assert legal_strings(env) == ["joker as 6", "no more jokers"]  # not 5 after 6
    move(env, "no more jokers")
    g = env.unwrapped.game
    assert g.cards(env.unwrapped.state_vec, "played1") == "556B"


def test_forced_stand_in_is_automatic_and_rocket_has_no_choice():
    env = make()
    deal = dict(JOKER_DEAL, hands=["3344556677", "56BR789TJQ", "3456789TJ4", "QQQKKKKAAA"],
                bottom="3889 9TTJJA2222")
    env.reset(options=deal)
    g = env.unwrapped.game
    s = env.unwrapped.state_vec
    # the pair 55 from 5 + a joker: forced; a second joker would leave no natural card
    move(env, "55")
    assert info(env)["phase"] == "play" and seat(env) == 2
    assert g.cards(s, "played1") == "5B"
    env.reset(options=deal)
    move(env, "BR")
    s = env.unwrapped.state_vec
    assert info(env)["phase"] == "play" and g.cards(s, "played1") == "BR"


def test_bombs_only_follow_up_only_for_bombs():
    env = make(joker_wild_scope="bombs_only")
    env.reset(options=JOKER_DEAL)
    move(env, "55")  # no joker outside a bomb: played at once
    assert info(env)["phase"] == "play" and seat(env) == 2
    env.reset(options=dict(JOKER_DEAL, hands=["3334447 7JJ", "5556BR789T", "3466789TJQ",
                                              "QQQKKKKAAA"]))
    move(env, "5555")  # one joker forced; a second may replace a natural 5
    assert legal_strings(env) == ["joker as 5", "no more jokers"]


# -- stuck players and turns ----------------------------------------------------------------------------


def test_stuck_players_rank_last_in_order_and_lose_their_turns():
    env = make()
    env.reset(options={**STUCK_DEAL, "returned": "89TJ"})
    g = env.unwrapped.game
    s = env.unwrapped.state_vec
    assert seat(env) == 1
    move(env, "3456789TJ")  # leaves B: holding a joker, he could spend it instead
    move(env, "no more jokers")
    assert g.stuck(s) == [False, True, False, False]
    assert g.places(s) == [0, 4, 0, 0]  # the first stuck player is last
    assert seat(env) == 2
    move(env, "pass")
    move(env, "pass")
    move(env, "pass")  # seat 0: every other active player has passed
    # the trick's last player is stuck: the next active seat after him leads
    assert seat(env) == 2 and int(s[LAST_ROW]) == -1
    move(env, "3456789TJ")
    move(env, "no more jokers")
    assert g.places(s) == [0, 4, 3, 0]  # the second stuck player is 3rd
    assert g.stuck(s) == [False, True, True, False]
    move(env, "pass")  # seat 3
    move(env, "pass")  # seat 0; seats 1 and 2 never move again
    assert seat(env) == 3 and int(s[LAST_ROW]) == -1
    move(env, "QQQQ")
    assert seat(env) == 0  # seat 1 and 2 skipped
    move(env, "pass")
    assert seat(env) == 3
    move(env, "KKKK")
    move(env, "pass")
    move(env, "AA")  # out: 1st; the 娘娘 is the last active player and takes 2nd
    assert g.done(s)
    assert g.places(s) == [2, 4, 3, 1]
    # 娘娘 2nd: +3, minus the 4 活子 returned (8, 9, T, J); catchers by overall place
    assert env.rewards == {"player_0": -1.0, "player_1": -2.0, "player_2": -1.0, "player_3": 2.0}


def test_trick_goes_to_the_next_active_seat_when_its_winner_is_out():
    env = make()
    # seat 1 leads and goes out at once with a 5-pair chain
    env.reset(options={"hands": ["3456789TJQ", "3344556677", "8899TTJJQQ", "KKKKAAAA22"],
                       "bottom": "3456789TJQ22BR", "niangniang": 0, "returned": "3456"})
    s = env.unwrapped.state_vec
    g = env.unwrapped.game
    move(env, "3344556677")
    assert g.places(s) == [0, 1, 0, 0]
    move(env, "pass")  # seat 2 could beat with 8899TTJJQQ but passes
    move(env, "pass")
    assert seat(env) == 0
    move(env, "pass")
    assert seat(env) == 2 and int(s[LAST_ROW]) == -1  # seat 1 is out: seat 2 leads


# -- scoring ----------------------------------------------------------------------------------------------


def _scores(places, returned="", nn=0, **options):
    g = cardenvs.make_game(G, **options)
    s = g.new_state()
    s[LANDLORD] = nn
    s[X_PLACE:X_PLACE + NP] = places
    s[X_RET:X_RET + 16] = g.deck.parse(returned)
    out = np.zeros(NP, np.int64)
    hand_scores(s, g.opts, out)
    return [int(x) for x in out]


@pytest.mark.parametrize("places, returned, expected", [
    # the 娘娘 (seat 0) 1st: +6; catchers +1/0/-1 in their order (seat 2 before 3 before 1)
    ([1, 4, 2, 3], "3322", [6, -1, 1, 0]),
    ([1, 4, 2, 3], "3452", [6 - 2, -1, 1, 0]),
    # 2nd: +3; catchers by overall place
    ([2, 1, 3, 4], "3322", [3, 2, -1, -2]),
    ([2, 1, 3, 4], "4567", [3 - 4, 2, -1, -2]),
    # 3rd: -3
    ([3, 2, 4, 1], "2233", [-3, 1, -2, 2]),
    ([3, 2, 4, 1], "2A33", [-3 - 1, 1, -2, 2]),
    # 4th: -6; the seed's own example: catchers 1st and 2nd, 3 活子 returned -> -9
    ([4, 1, 2, 3], "3322", [-6, 2, 1, -1]),
    ([4, 1, 2, 3], "89T2", [-9, 2, 1, -1]),
])
def test_seed_scoring_every_place(places, returned, expected):
    assert _scores(places, returned) == expected


def test_scoring_options():
    # positional: catchers by overall place even when the 娘娘 is 1st
    assert _scores([1, 4, 2, 3], "3322", scoring="positional") == [6, -2, 1, -1]
    # zero_sum: each catcher -1/3 of the 娘娘's ladder
    assert _scores([1, 4, 2, 3], "3322", scoring="zero_sum") == [6, -2, -2, -2]
    assert _scores([3, 2, 4, 1], "3322", scoring="zero_sum") == [-3, 1, 1, 1]
    assert _scores([3, 2, 4, 1], "4567", scoring="zero_sum") == [-7, 1, 1, 1]
    # huozi_when: last only / never
    assert _scores([2, 1, 3, 4], "4567", huozi_when="last")[0] == 3
    assert _scores([4, 1, 2, 3], "4567", huozi_when="last")[0] == -10
    assert _scores([4, 1, 2, 3], "4567", huozi_when="never")[0] == -6
    # three_high: 3 and 2 are still 死子
    assert _scores([4, 1, 2, 3], "3322", rank_order="three_high")[0] == -6
    assert _scores([4, 1, 2, 3], "3342", rank_order="three_high")[0] == -7


def test_huozi_scope_bottom_counts_the_whole_bottom():
    g = cardenvs.make_game(G, huozi_scope="bottom")
    s = g.new_state()
    s[LANDLORD] = 1
    s[X_PLACE:X_PLACE + NP] = [1, 2, 3, 4]
    s[kitty_off(NP):kitty_off(NP) + 16] = g.deck.parse("3333222BR456KK")  # 5 活子
    s[X_RET:X_RET + 16] = g.deck.parse("3333")
    out = np.zeros(NP, np.int64)
    hand_scores(s, g.opts, out)
    assert list(out) == [2, 3 - 5, -1, -2]


def _play_seed_example(env):
    """Catchers go out 1st, 2nd and 3rd, the 娘娘 (seat 0) is last; he returned 8, 9, T (活子)
    and a 2 (死子)."""
    env.reset(options={"hands": ["AAA222BR55", "3333444455", "6666777788", "99TTJJQQKK"],
                       "bottom": "8899TTJJQQKKA2", "niangniang": 0, "returned": "89T2"})
    script = ["3333", "pass", "pass", "pass", "4444", "pass", "pass", "pass", "55",
              "pass", "pass", "pass", "6666", "pass", "pass", "7777", "pass", "pass", "88",
              "pass", "pass", "99TTJJQQKK"]
    return play_script(env, script)


def test_seed_example_full_hand():
    env = make()
    rewards = _play_seed_example(env)
    g = env.unwrapped.game
    assert g.done(env.unwrapped.state_vec)
    assert g.places(env.unwrapped.state_vec) == [4, 1, 2, 3]
    assert rewards == {"player_0": -9.0, "player_1": 2.0, "player_2": 1.0, "player_3": -1.0}
    # the bottom and the returned cards are public once the hand is over
    assert "returned: 89T2 (3 活子)" in g.render(env.unwrapped.state_vec)


def test_niangniang_first_catchers_score_in_their_order():
    env = make()
    env.reset(options={"hands": ["2222AAAAKK", "3456789TJQ", "3344556677", "8899TTJJQQ"],
                       "bottom": "3456789TJQKKBR", "niangniang": 0, "returned": "3KKQ"})
    for text in ["3", "pass", "pass", "2222", "pass", "pass", "pass", "AAAA", "pass", "pass",
                 "pass", "KK",  # the 娘娘 is out first
                 "pass", "pass", "pass",  # seat 1 leads next (the next active seat)
                 "456789TJQ", "pass", "pass",  # seat 1 out
                 "33445566", "8899TTJJ", "pass", "QQ"]:  # seat 3 out, seat 2 last
        move(env, text)
    g = env.unwrapped.game
    s = env.unwrapped.state_vec
    assert g.places(s) == [1, 2, 4, 3]
    # 娘娘 +6 - 3 活子 (K, K, Q); catchers +1 / 0 / -1 in the order they went out
    assert g.last_scores(s) == [3, 1, -1, 0]
    assert env.rewards == {"player_0": 3.0, "player_1": 1.0, "player_2": -1.0, "player_3": 0.0}


def test_win_loss_reward_is_the_sign_of_the_score():
    env = make(reward="win_loss")
    rewards = _play_seed_example(env)
    assert rewards == {"player_0": -1.0, "player_1": 1.0, "player_2": 1.0, "player_3": -1.0}


# -- choosing the 娘娘 ----------------------------------------------------------------------------------

_M64 = (1 << 64) - 1


class _SplitMix:
    """Pure-Python splitmix64, written from the published algorithm (Steele et al. 2014)."""

    def __init__(self, seed: int):
        self.x = seed & _M64

    def below(self, n: int) -> int:
        self.x = (self.x + 0x9E3779B97F4A7C15) & _M64
        z = self.x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
        z ^= z >> 31
        return (z >> 1) % n


def _draw_threes(rng: _SplitMix) -> list[int]:
    """The 亮3 draw from the rules: shuffle 54 cards (Fisher-Yates), deal one at a time from a
    random seat, return the seats receiving the four 3s in deal order."""
    cards = [r for r in range(13) for _ in range(4)] + [13, 14]
    for i in range(len(cards) - 1, 0, -1):
        j = rng.below(i + 1)
        cards[i], cards[j] = cards[j], cards[i]
    start = rng.below(4)
    return [(start + p) % 4 for p, c in enumerate(cards) if c == 0]


def test_first_three_receiver_is_niangniang():
    g = cardenvs.make_game(G)
    s = g.new_state()
    seen = set()
    for seed in range(30):
        g.reset(s, seed)
        threes = _draw_threes(_SplitMix(seed))
        assert int(s[LANDLORD]) == threes[0]
        seen.add(threes[0])
    assert seen == {0, 1, 2, 3}


def test_reveal_choice():
    env = make(first_niangniang="reveal_choice")
    env.reset(seed=3)
    assert info(env)["phase"] == "reveal" and info(env)["niangniang"] == -1
    # hide every 3 of the first draw: a new draw follows; reveal the 2nd 3 of the second draw
    for _ in range(4):
        assert legal_strings(env) == ["reveal", "hide"]
        move(env, "hide")
    assert info(env)["phase"] == "reveal"
    move(env, "hide")
    second = seat(env)
    move(env, "reveal")
    assert info(env)["phase"] == "take" and info(env)["niangniang"] == second == seat(env)
    assert len(env.unwrapped.game.cards(env.unwrapped.state_vec, "bottom")) == 14


def test_reveal_choice_all_hidden_four_draws_first_receiver():
    env = make(first_niangniang="reveal_choice")
    env.reset(seed=5)
    s = env.unwrapped.state_vec
    n = 0
    while info(env)["phase"] == "reveal":
        if n == 12:
            first_of_last_draw = seat(env)
        move(env, "hide")
        n += 1
    # the original draw and 3 redeals, four 3s offered in each; then the first receiver
    assert n == 16
    assert int(s[LANDLORD]) == first_of_last_draw


def test_reveal_choice_draws_follow_the_procedure():
    g = cardenvs.make_game(G, first_niangniang="reveal_choice")
    s = g.new_state()
    for seed in range(10):
        g.reset(s, seed)
        rng = _SplitMix(seed)
        for draw in range(4):
            threes = _draw_threes(rng)
            for k in range(4):
                assert int(s[CUR]) == threes[k], (seed, draw, k)
                g.step(s, g.string_to_action("hide"))
        assert int(s[LANDLORD]) == threes[0]


def test_random_seat_option():
    g = cardenvs.make_game(G, first_niangniang="random_seat")
    s = g.new_state()
    seen = set()
    for seed in range(40):
        g.reset(s, seed)
        seen.add(int(s[LANDLORD]))
    assert seen == {0, 1, 2, 3}


# -- match play -------------------------------------------------------------------------------------------


def _run_match(env, rng, favour: bool = False):
    """Play a whole match; returns per-agent reward sums and one record per finished hand.

    The policy is uniformly random; with ``favour`` seat 0 always makes the biggest play it
    can and the other seats mostly pass when they may, so that seat 0 gathers points quickly.
    """
    totals = {a: 0.0 for a in env.possible_agents}
    hands = []
    nn_before = info(env)["niangniang"]
    g = env.unwrapped.game
    for agent in env.agent_iter(1_000_000):
        _, reward, term, trunc, inf = env.last()
        totals[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        hand_before = g.hands_played(env.unwrapped.state_vec)
        ids = env.unwrapped.legal_actions()
        a = int(ids[rng.integers(len(ids))])
        if favour and inf["phase"] == "play":
            if agent == "player_0":
                a = int(max(ids, key=lambda x: len(g.action_to_string(int(x)))
                            if x < g.pass_id else -1))
            elif g.pass_id in ids and rng.random() < 0.7:
                a = g.pass_id
        env.step(a)
        if env.agents and env.unwrapped.game.hands_played(env.unwrapped.state_vec) > hand_before:
            i = env.infos[env.agent_selection]
            hands.append((nn_before, list(i["last_scores"]), list(i["last_places"]),
                          list(i["totals"]), i["niangniang"], dict(env.rewards)))
            nn_before = i["niangniang"]
    return totals, hands


def test_match_ends_at_40_and_pays_every_hand():
    env = make(match=True)
    env.reset(seed=11)
    rng = np.random.default_rng(11)
    s = env.unwrapped.state_vec
    g = env.unwrapped.game
    paid, hands = _run_match(env, rng, favour=True)
    final = g.totals(s)
    assert g.done(s) and not g.truncated(s)
    assert max(final) >= 40 and final.count(max(final)) == 1
    assert paid == {f"player_{i}": float(final[i]) for i in range(NP)}
    assert len(hands) == g.hands_played(s) >= 2
    running = [0] * NP
    for k, (nn, scores, places, totals, next_nn, rewards) in enumerate(hands):
        running = [a + b for a, b in zip(running, scores)]
        assert totals == running
        # scores of the hand are paid when it ends
        assert rewards == {f"player_{i}": float(scores[i]) for i in range(NP)}
        # before the last hand nobody had a single highest total of 40 or more
        if k < len(hands) - 1:
            top = max(totals)
            assert top < 40 or totals.count(top) > 1
        # next 娘娘: the lowest score, ties to the worse place
        low = min(scores)
        worst = max(places[i] for i in range(NP) if scores[i] == low)
        expect = [i for i in range(NP) if scores[i] == low and places[i] == worst]
        if k < len(hands) - 1:
            assert next_nn == expect[0]
        assert sorted(places) == [1, 2, 3, 4]


def test_match_exact_tie_plays_on_and_single_leader_wins():
    env = make(match=True)
    # the seed example as the first hand: scores [-9, +2, +1, -1]; seat 1 and 2 start at 38, 39
    env.reset(options={"hands": ["AAA222BR55", "3333444455", "6666777788", "99TTJJQQKK"],
                       "bottom": "8899TTJJQQKKA2", "niangniang": 0, "returned": "89T2"})
    s = env.unwrapped.state_vec
    s[X_TOTAL:X_TOTAL + NP] = [0, 38, 39, 0]
    script = ["3333", "pass", "pass", "pass", "4444", "pass", "pass", "pass", "55",
              "pass", "pass", "pass", "6666", "pass", "pass", "7777", "pass", "pass", "88",
              "pass", "pass", "99TTJJQQKK"]
    for text in script:
        move(env, text)
    g = env.unwrapped.game
    assert g.totals(s) == [-9, 40, 40, -1]  # an exact tie at the top: another hand
    assert not g.done(s) and info(env)["phase"] == "take"
    assert info(env)["niangniang"] == 0  # the lowest score of the hand
    assert env.rewards == {"player_0": -9.0, "player_1": 2.0, "player_2": 1.0, "player_3": -1.0}
    # now seat 2 at 41, seat 1 at 40: the single highest total wins
    env.reset(options={"hands": ["AAA222BR55", "3333444455", "6666777788", "99TTJJQQKK"],
                       "bottom": "8899TTJJQQKKA2", "niangniang": 0, "returned": "89T2"})
    s = env.unwrapped.state_vec
    s[X_TOTAL:X_TOTAL + NP] = [0, 38, 40, 0]
    for text in script:
        move(env, text)
    assert g.done(s) and g.totals(s) == [-9, 40, 41, -1]
    assert env.infos["player_0"]["winner"] == 2 and env.terminations["player_0"]


def test_match_next_niangniang_tie_goes_to_the_worse_place():
    env = make(match=True, scoring="zero_sum", huozi_when="never")
    env.reset(options={"hands": ["2222AAAAKK", "3456789TJQ", "3344556677", "8899TTJJQQ"],
                       "bottom": "3456789TJQKKBR", "niangniang": 0, "returned": "3KKQ"})
    for text in ["3", "pass", "pass", "2222", "pass", "pass", "pass", "AAAA", "pass", "pass",
                 "pass", "KK", "pass", "pass", "pass", "456789TJQ", "pass", "pass",
                 "33445566", "8899TTJJ", "pass", "QQ"]:
        move(env, text)
    i = info(env)
    # the 娘娘 1st: +6, each catcher -2; the three tie, seat 2 (4th place) is the next 娘娘
    assert i["last_scores"] == [6, -2, -2, -2] and i["last_places"] == [1, 2, 4, 3]
    assert i["niangniang"] == 2 and i["phase"] == "take" and seat(env) == 2
    assert i["totals"] == [6, -2, -2, -2] and i["hand"] == 1
    assert env.rewards == {"player_0": 6.0, "player_1": -2.0, "player_2": -2.0, "player_3": -2.0}


def test_match_win_loss_and_truncation():
    env = make(match=True, max_hands=1)
    env.reset(seed=2)
    rng = np.random.default_rng(2)
    paid, hands = _run_match(env, rng)
    g = env.unwrapped.game
    s = env.unwrapped.state_vec
    assert g.done(s) and g.truncated(s) and g.hands_played(s) == 1
    assert paid == {f"player_{i}": float(x) for i, x in enumerate(g.totals(s))}
    env.reset(seed=2)
    seen_trunc = []
    for agent in env.agent_iter():
        _, _, term, trunc, _ = env.last()
        if term or trunc:
            seen_trunc.append((term, trunc))
            env.step(None)
            continue
        ids = env.unwrapped.legal_actions()
        env.step(int(ids[rng.integers(len(ids))]))
    assert seen_trunc == [(False, True)] * 4
    # win_loss: each hand pays the sign of each of its scores when it ends (README: the sign of
    # the score the reward would pay); the episode's sums are the sums of those signs
    env = make(match=True, reward="win_loss", target_score=8)
    env.reset(seed=4)
    paid, hands = _run_match(env, np.random.default_rng(4))
    assert len(hands) >= 2
    for h in hands[:-1]:
        assert h[5] == {f"player_{i}": float(np.sign(x)) for i, x in enumerate(h[1])}
    last = env.unwrapped.game.last_scores(env.unwrapped.state_vec)
    signs = [sum(float(np.sign(h[1][i])) for h in hands[:-1]) + float(np.sign(last[i]))
             for i in range(NP)]
    assert paid == {f"player_{i}": signs[i] for i in range(NP)}


# -- observation ------------------------------------------------------------------------------------------


def test_private_information():
    env = niangniang_v0.env()
    env.reset(options={**STUCK_DEAL})
    g = env.unwrapped.game
    off = g.layout.offsets
    for _ in range(4):
        move(env, "take 2")
    obs = {a: env.observe(a)["observation"] for a in env.possible_agents}
    for field in ("taken", "returned", "bottom"):
        a, b = off[field]
        assert obs["player_0"][a:b].any() or field == "returned"
        for q in (1, 2, 3):
            assert not obs[f"player_{q}"][a:b].any(), field
    a, b = off["others"]
    # the 娘娘 has seen the bottom: he misses only the 30 cards of the catchers
    counts = obs["player_0"][a:b].reshape(15, 4).sum()
    assert counts == 30
    assert obs["player_1"][a:b].reshape(15, 4).sum() == 54 - 10
    a, b = off["niangniang"]
    assert obs["player_1"][a:b].tolist() == [0, 0, 0, 1, 0]  # seat 0 is 3 seats after seat 1


def test_played_jokers_are_public():
    env = niangniang_v0.env()
    env.reset(options=JOKER_DEAL)
    move(env, "5566")
    move(env, "joker as 6")
    move(env, "no more jokers")
    g = env.unwrapped.game
    off = g.layout.offsets
    o = env.observe("player_3")["observation"]
    a, b = off["jokers_for"]
    per = (b - a) // 4
    jf = o[a + 2 * per:a + 3 * per].reshape(13, 2)  # seat 1 is relative seat 2 of seat 3
    assert jf[3].tolist() == [1, 0] and jf.sum() == 1  # one joker stood for a 6 (index 3)
    a, b = off["played"]
    pl = o[a + 2 * (b - a) // 4:a + 3 * (b - a) // 4].reshape(15, 4)
    assert pl[13, 0] == 1 and pl[14, 0] == 0  # the B was played
    a, b = off["to_beat_jokers"]
    assert o[a:b].reshape(13, 2)[3].tolist() == [1, 0]


# -- PettingZoo with non-default options ------------------------------------------------------------------


@pytest.mark.parametrize("options", [
    dict(match=True, target_score=10),
    dict(first_niangniang="reveal_choice", rank_order="three_high",
         joker_wild_scope="bombs_only", allow_trio_single=True),
    dict(scoring="zero_sum", huozi_scope="bottom", huozi_when="last", reward="win_loss",
         first_niangniang="random_seat", min_pair_chain=3),
])
def test_pettingzoo_api_with_options(options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(niangniang_v0.env(**options), num_cycles=300)
    seed_test(lambda **kw: niangniang_v0.env(**options, **kw), num_cycles=100)


def test_pickle_mid_joker_choice():
    env = make()
    env.reset(options=JOKER_DEAL)
    move(env, "5566")
    clone = pickle.loads(pickle.dumps(env))
    assert legal_strings(clone) == legal_strings(env) == ["joker as 5", "joker as 6",
                                                          "no more jokers"]
    np.testing.assert_array_equal(clone.unwrapped.state_vec, env.unwrapped.state_vec)


def test_bad_options():
    with pytest.raises(ValueError, match="rank_order"):
        niangniang_v0.env(rank_order="ace_high")
    with pytest.raises(ValueError, match="min_pair_chain"):
        niangniang_v0.env(min_pair_chain=6)
    with pytest.raises(TypeError, match="match"):
        niangniang_v0.env(match=1)
    with pytest.raises(ValueError, match="scoring"):
        niangniang_v0.env(scoring="zero")
    with pytest.raises(ValueError, match="reveal"):
        cardenvs.make_game(G).string_to_action("reveal")


def test_registry_and_info():
    assert cardenvs.GAMES["niangniang"] == "niangniang_v0"
    g = cardenvs.make_game(G)
    assert g.info.n_players == 4 and g.info.deck_size == 54 and not g.info.zero_sum
    assert cardenvs.make_game(G, scoring="zero_sum", huozi_when="never").info.zero_sum
    env = niangniang_v0.env()
    env.reset(seed=0)
    i = info(env)
    assert i["phase"] == "take" and i["niangniang"] == seat(env)
    assert i["places"] == [0, 0, 0, 0] and i["stuck"] == [False] * 4 and i["leader"] == -1
    assert "totals" not in i
