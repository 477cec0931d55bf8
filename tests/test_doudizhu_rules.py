"""Literal positions for the rules of 3-player Dou Dizhu (斗地主, ``doudizhu``).

Every expected value here was written by hand from the rules text (the project's rules page for
3-player Dou Dizhu and the shared conventions), never copied from the code's output.  The facts
used, restated so that this file stands alone:

* ranks ``3 < 4 < ... < K < A < 2 < B < R``; suits never matter;
* single; pair (two of a rank 3..2; ``BR`` is not a pair); trio; trio + single (kicker of another
  rank, may be 2, B or R); trio + pair (a pair of another rank);
* straight (>= 5 consecutive ranks within 3..A; 2 and jokers never in chains; no wrap), pair chain
  (>= 3 pairs), airplane (>= 2 trios), airplane + singles (k trios + k single kickers of ranks
  outside the chain, at most 3 of one rank, never both B and R), airplane + pairs (k trios + k
  pairs of distinct ranks outside the chain, no jokers);
* bomb (four of a rank; beats every non-bomb; higher rank beats lower); rocket ``BR`` (beats
  everything); four + two singles (may be a pair, never ``BR``; not a bomb); four + two pairs
  (two pairs of distinct other ranks; a different type from four + two singles);
* same type and shape compare by the main rank; equal never beats equal; a leader may not pass,
  a follower may always pass;
* lengths capped by the 20-card hand: straight <= 12, pair chain <= 10, airplane <= 6, with
  singles <= 5, with pairs <= 4;
* auction: pass or bid strictly above the current bid (1..3); re-entry after a pass allowed;
  ends after a 3 or two passes in a row after a bid; all pass -> void (0 for all) or redeal;
  ``auction="fixed"``: seat 0 landlord at bid 1;
* scoring: stake = bid x 2^(bombs + rockets); landlord wins +2 stake / farmers -stake each, or
  the reverse; ``spring`` doubles for 春天 (farmers never played) and 反春 (landlord made
  only his opening play); ``reward="win_loss"`` pays +-1.
"""

from __future__ import annotations

import numpy as np
import pytest

from cardenvs import doudizhu_v0, legal_moves
from cardenvs.core.combos import BOMB, FAMILY_NAMES, ROCKET
from cardenvs.core.state import hand_off, kitty_off
from cardenvs.games.doudizhu import play_table

T = play_table(3, "seed")
ORDER = "3456789TJQKA2BR"


def readings(cards: str) -> set[tuple]:
    """Every reading of ``cards`` in the table: (family, length, main rank character).

    Bombs and the rocket are given as (family, 0, highest rank character in them).
    """
    out = set()
    for row in T.rows_of_cards(T.deck.parse(cards)):
        p = T.plays[row]
        if p.family in (BOMB, ROCKET):
            key = max(r for r in range(16) if p.counts[r])
            out.add((FAMILY_NAMES[p.family], 0, ORDER[key]))
        else:
            out.add((FAMILY_NAMES[p.family], p.length, ORDER[p.key]))
    return out


def moves(hand: str, prev: str | None = None, **kw) -> list[str]:
    return legal_moves("doudizhu", hand, prev, **kw)


# -- combination types --------------------------------------------------------------------------


@pytest.mark.parametrize("cards,expected", [
    # singles and pairs
    ("3", {("single", 1, "3")}),
    ("R", {("single", 1, "R")}),
    ("22", {("pair", 1, "2")}),
    ("BR", {("rocket", 0, "R")}),  # BR is the rocket, never a pair
    ("777", {("trio", 1, "7")}),
    # trio + single / pair (seed examples 6-6-6-8, Q-Q-Q-6-6)
    ("6668", {("trio_single", 1, "6")}),
    ("3332", {("trio_single", 1, "3")}),
    ("333B", {("trio_single", 1, "3")}),
    ("333R", {("trio_single", 1, "3")}),
    ("QQQ66", {("trio_pair", 1, "Q")}),
    ("33322", {("trio_pair", 1, "3")}),
    ("333BR", set()),  # BR is no pair
    # straights
    ("89TJQ", {("straight", 5, "Q")}),
    ("TJQKA", {("straight", 5, "A")}),
    ("JQKA2", set()),  # 2 never in chains
    ("QKA23", set()),  # no wrap
    ("A2345", set()),
    ("3456", set()),  # too short
    ("3456789TJQKA", {("straight", 12, "A")}),
    ("789TJQKA2", set()),
    ("9TJQKAB", set()),
    # pair chains (seed example 10-10-J-J-Q-Q-K-K)
    ("TTJJQQKK", {("pair_chain", 4, "K")}),
    ("334455", {("pair_chain", 3, "5")}),
    ("3344", set()),
    ("KKAA22", set()),
    ("33445566778899TTJJQQ", {("pair_chain", 10, "Q")}),
    # airplanes (seed example 4-4-4-5-5-5)
    ("444555", {("airplane", 2, "5")}),
    ("KKKAAA", {("airplane", 2, "A")}),
    ("AAA222", set()),  # 2 never in chains; six cards are no trio + single
    ("333444555666777888", {("airplane", 6, "8")}),
    # airplane + singles (seed example 7-7-7-8-8-8-3-6)
    ("77788836", {("airplane_singles", 2, "8")}),
    ("7778882B", {("airplane_singles", 2, "8")}),
    ("777888BR", set()),  # never both jokers
    ("33344455", {("airplane_singles", 2, "4")}),  # two single kickers may share a rank
    ("33334445", set()),  # a kicker may not be of a chain rank; not four + two either
    ("3334445556667777", set()),  # at most 3 kickers of one rank
    ("333444555666", {("airplane", 4, "6"), ("airplane_singles", 3, "5"),
                      ("airplane_singles", 3, "6")}),
    # airplane + pairs (seed example 8-8-8-9-9-9-4-4-J-J)
    ("88899944JJ", {("airplane_pairs", 2, "9")}),
    ("3334442255", {("airplane_pairs", 2, "4")}),  # a pair of 2s may be carried
    ("3334445555", set()),  # pairs of distinct ranks
    ("333444BR55", set()),  # no jokers
    ("333444677", set()),  # singles and pairs never mixed (seed)
    # bombs, rocket, four + two
    ("2222", {("bomb", 0, "2")}),
    ("666689", {("four_two_singles", 1, "6")}),
    ("666688", {("four_two_singles", 1, "6")}),  # the two singles may be a pair
    ("66662B", {("four_two_singles", 1, "6")}),
    ("6666BR", set()),  # never BR
    ("JJJJ99QQ", {("four_two_pairs", 1, "J")}),
    ("JJJJ9999", set()),  # pairs of distinct ranks
    # every chain of trios would leave the 4th card of a chain rank as a kicker
    ("3333444455556666", set()),
])
def test_readings(cards, expected):
    assert readings(cards) == expected, (cards, readings(cards))


def test_length_caps():
    lengths = {}
    for p in T.plays:
        lengths.setdefault(FAMILY_NAMES[p.family], set()).add(p.length)
    assert lengths["straight"] == set(range(5, 13))
    assert lengths["pair_chain"] == set(range(3, 11))
    assert lengths["airplane"] == set(range(2, 7))
    assert lengths["airplane_singles"] == set(range(2, 6))
    assert lengths["airplane_pairs"] == set(range(2, 5))
    # 11 pairs (22 cards) and 7 trios (21 cards) exceed the 20-card hand
    for cards in ("33445566778899TTJJQQKK", "333444555666777888999"):
        assert readings(cards) == set()
        with pytest.raises(ValueError, match="not a legal combination"):
            T.find(cards)


def test_number_of_plays_per_type():
    """Counts derived by hand from the rules (13 natural ranks, 12 of them chainable 3..A)."""
    count = {}
    for p in T.plays:
        k = (FAMILY_NAMES[p.family], p.length)
        count[k] = count.get(k, 0) + 1
    fam = {}
    for (f, _), v in count.items():
        fam[f] = fam.get(f, 0) + v
    assert fam["single"] == 15
    assert fam["pair"] == 13  # 3..2, BR is not a pair
    assert fam["trio"] == 13 and fam["bomb"] == 13 and fam["rocket"] == 1
    assert fam["trio_single"] == 13 * 14  # kicker: 12 other naturals + B + R
    assert fam["trio_pair"] == 13 * 12
    assert fam["straight"] == sum(13 - L for L in range(5, 13))  # 36
    assert fam["pair_chain"] == sum(13 - L for L in range(3, 11))  # 52
    assert fam["airplane"] == sum(13 - L for L in range(2, 7))  # 45
    # four + two singles: C(14, 2) distinct ranks minus BR, plus 12 natural pairs
    assert fam["four_two_singles"] == 13 * (91 - 1 + 12)
    assert fam["four_two_pairs"] == 13 * 66  # C(12, 2)
    # airplane + pairs of length L: (13 - L) chains x C(13 - L, L) kicker pairs
    assert count[("airplane_pairs", 2)] == 11 * 55
    assert count[("airplane_pairs", 3)] == 10 * 120
    assert count[("airplane_pairs", 4)] == 9 * 126
    # airplane + singles of length L: kickers from m = 13 - L natural ranks (<= 3 each) plus at
    # most one joker (B or R): M(m, L) + 2 M(m, L - 1), M = multisets with at most 3 of a kind
    assert count[("airplane_singles", 2)] == 11 * (66 + 2 * 11)
    assert count[("airplane_singles", 3)] == 10 * (220 + 2 * 55)
    assert count[("airplane_singles", 4)] == 9 * ((495 - 9) + 2 * 165)
    assert count[("airplane_singles", 5)] == 8 * ((792 - 64) + 2 * (330 - 8))


# -- following -------------------------------------------------------------------------------------


def test_trio_single_compares_by_trio():
    assert moves("9993", "888A") == ["3999"]  # seed: 9-9-9-3 beats 8-8-8-A
    assert moves("888K", "999A") == []


def test_trio_pair_compares_by_trio():
    assert moves("QQQ66", "TTTKK") == ["66QQQ"]  # seed: Q-Q-Q-6-6 beats 10-10-10-K-K
    assert moves("TTTKK", "QQQ66") == []


def test_equal_never_beats_equal():
    assert moves("55", "55") == []
    assert moves("5", "5") == []
    assert moves("34567", "34567") == []



def test_follow_must_match_type_and_length():
    assert moves("45678", "34567") == ["45678"]
    assert moves("345678", "34567") == ["45678"]  # only the 5-card straight above 34567
    assert moves("456789", "345678") == ["456789"]
    assert moves("45678", "345678") == []
    assert moves("444555", "333") == ["444", "555"]
    assert moves("445566", "33") == ["44", "55", "66"]
    assert moves("8888", "7") == ["8", "8888"]  # a bomb beats a single too


def test_four_two_singles_and_pairs_are_different_types():
    assert moves("99995566", "888834") == ["9999", "559999", "569999", "669999"]
    assert moves("99995566", "88883344") == ["9999", "55669999"]
    assert moves("999956", "88883344") == ["9999"]


def test_bombs():
    assert moves("3333", "22224455") == ["3333"]  # a bomb beats four + two
    assert moves("3333", "KKK22") == ["3333"]
    assert moves("99995566", "8888") == ["9999"]  # four + two is no bomb
    assert moves("2222", "AAAA") == ["2222"]  # higher bomb beats lower
    assert moves("AAAA", "2222") == []
    assert moves("BR", "2222") == ["BR"]  # the rocket beats a bomb
    assert moves("2222", "BR") == []  # nothing beats the rocket
    assert moves("BR3", "2") == ["B", "R", "BR"]


def test_free_lead_lists_every_play():
    assert moves("333444BR") == [
        "3", "4", "B", "R", "33", "44", "BR", "333", "444",
        "3334", "333B", "333R", "3444", "444B", "444R", "33344", "33444", "333444",
    ]  # no airplane + singles with both jokers


def test_airplane_kickers():
    lead = moves("33344455BR")
    eight = [m for m in lead if len(m) == 8]
    assert eight == ["33344455", "3334445B", "3334445R"]  # never both B and R
    assert [m for m in lead if len(m) > 8] == []  # 55 + BR is no airplane + pairs
    with pytest.raises(ValueError):
        T.find("333444+55BR")
    with pytest.raises(ValueError):
        T.find("333444+BR")
    # follows need the same kicker kind (singles vs pairs)
    assert moves("5556667788", "333444+99TT") == ["5556667788"]
    assert moves("5556667788", "333444+9T") == ["55566677", "55566678", "55566688"]
    assert moves("55566678", "333444+99") == ["55566678"]
    assert moves("55566678", "333444+99TT") == []


def test_ambiguous_prev_needs_a_type():
    with pytest.raises(ValueError, match="more than one way"):
        moves("777888999JQK", "333444555666")
    with pytest.raises(ValueError, match="more than one way"):
        moves("777888999JQK", "333444555666", prev_type="airplane_singles")
    assert moves("777888999JQK", "333444555666", prev_type="airplane") == []
    assert moves("777888999TTT", "333444555666", prev_type="airplane") == ["777888999TTT"]
    # the same cards as airplane + singles: 333444555+666 (main rank 5) or 444555666+333 (6)
    assert moves("777888999JQK", "333444555+666") == ["777888999JQK"]
    assert moves("777888999JQK", "444555666+333") == ["777888999JQK"]
    assert moves("777888999TTT", "333444555+666") == ["777888999TTT"]  # 777888999+TTT
    # the hand and the play to beat must fit one deck
    with pytest.raises(ValueError, match="impossible"):
        moves("444555666777", "333444555666", prev_type="airplane")
    with pytest.raises(ValueError):
        moves("777888999JQK", prev=None, prev_type="airplane")


# -- the environment: turns, auction, scoring ------------------------------------------------------

DEAL_A = {  # landlord 0 can win alone with two bombs, the rocket, a straight and a 2
    "hands": ["3333444456789TJQK", "555666777888999TT", "TJJJQQQKKKAAAA222"],
    "kitty": "BR2", "landlord": 0, "bid": 3,
}
DEAL_B = {  # farmer 1 holds two bombs, the rocket and a straight
    "hands": ["555666777888999TT", "3333444456789TJBR", "TJJJQQQQKKKKAAAA2"],
    "kitty": "222", "landlord": 0, "bid": 3,
}


def _env(**options):
    env = doudizhu_v0.env(illegal="raise", **options)
    return env


def _play(env, actions):
    """Step the scripted actions (strings); returns the rewards of the last step."""
    u = env.unwrapped
    for a in actions:
        assert env.agents, f"the game ended before {a!r}"
        env.step(u.string_to_action(a))
    return {agent: env.rewards[agent] for agent in env.possible_agents}


LANDLORD_WINS = ["3333", "pass", "pass", "4444", "pass", "pass", "BR", "pass", "pass",
                 "56789TJQK", "pass", "pass", "2"]
FARMERS_WIN = ["5", "3333", "pass", "pass", "4444", "pass", "pass", "BR", "pass", "pass",
               "56789TJ"]


def _done(env):
    return all(env.terminations.values())


def test_seed_scoring_example_landlord_wins():
    env = _env()
    env.reset(seed=0, options=DEAL_A)
    r = _play(env, LANDLORD_WINS)
    assert _done(env)
    # bid 3, two bombs and a rocket: stake 3 x 2^3 = 24
    assert r == {"player_0": 48.0, "player_1": -24.0, "player_2": -24.0}


def test_seed_scoring_example_farmers_win():
    env = _env()
    env.reset(seed=0, options=DEAL_B)
    r = _play(env, FARMERS_WIN)
    assert _done(env)
    assert r == {"player_0": -48.0, "player_1": 24.0, "player_2": 24.0}


def test_win_loss_reward():
    env = _env(reward="win_loss")
    env.reset(seed=0, options=DEAL_A)
    assert _play(env, LANDLORD_WINS) == {"player_0": 1.0, "player_1": -1.0, "player_2": -1.0}
    env.reset(seed=0, options=DEAL_B)
    assert _play(env, FARMERS_WIN) == {"player_0": -1.0, "player_1": 1.0, "player_2": 1.0}


def test_spring_doubles():
    env = _env(spring=True)
    env.reset(seed=0, options=DEAL_A)  # 春天: the farmers never played a card
    assert _play(env, LANDLORD_WINS) == {"player_0": 96.0, "player_1": -48.0, "player_2": -48.0}
    env.reset(seed=0, options=DEAL_B)  # 反春: the landlord made only his opening play
    assert _play(env, FARMERS_WIN) == {"player_0": -96.0, "player_1": 48.0, "player_2": 48.0}


def test_spring_not_when_both_sides_played():
    seq = ["5", "T", "A", "2", "pass", "pass", "3333", "pass", "pass", "4444", "pass", "pass",
           "BR", "pass", "pass", "6789TJQK"]
    for spring in (False, True):
        env = _env(spring=spring)
        env.reset(seed=0, options=DEAL_A)
        assert _play(env, seq) == {"player_0": 48.0, "player_1": -24.0, "player_2": -24.0}
    # landlord loses after two plays of his own: no 反春
    seq_b = ["5", "3333", "pass", "pass", "4444", "pass", "pass", "5", "pass", "6", "BR",
             "pass", "pass", "6789TJ"]
    env = _env(spring=True)
    env.reset(seed=0, options=DEAL_B)
    assert _play(env, seq_b) == {"player_0": -48.0, "player_1": 24.0, "player_2": 24.0}


def test_no_bombs_stake_is_the_bid():
    deal = {**DEAL_A, "bid": 2}
    env = _env()
    env.reset(seed=0, options=deal)
    seq = ["3", "5", "T", "K", "pass", "pass", "3", "pass", "pass", "3", "pass", "pass", "3",
           "pass", "pass", "44", "pass", "pass", "44", "pass", "pass", "B", "pass", "pass", "R",
           "pass", "pass", "56789TJQ", "pass", "pass", "2"]
    assert _play(env, seq) == {"player_0": 4.0, "player_1": -2.0, "player_2": -2.0}


def test_leader_cannot_pass_follower_can():
    env = _env()
    env.reset(seed=0, options=DEAL_A)
    u = env.unwrapped
    pass_id = u.string_to_action("pass")
    assert env.agent_selection == "player_0"
    assert pass_id not in env.unwrapped.legal_actions()
    assert env.observe("player_0")["action_mask"][pass_id] == 0
    with pytest.raises(ValueError):
        env.step(pass_id)
    env.step(u.string_to_action("5"))
    assert env.agent_selection == "player_1"
    assert pass_id in env.unwrapped.legal_actions()
    # player_1 may pass although he can beat the 5
    assert u.string_to_action("6") in env.unwrapped.legal_actions()
    env.step(pass_id)
    env.step(u.string_to_action("A"))
    env.step(u.string_to_action("2"))
    env.step(pass_id)
    env.step(pass_id)
    # trick over: player_0 (the last to play) leads again and may not pass
    assert env.agent_selection == "player_0"
    assert pass_id not in env.unwrapped.legal_actions()


def test_pass_does_not_lock_out():
    env = _env()
    env.reset(seed=0, options=DEAL_B)
    u = env.unwrapped
    for a in ("5", "pass", "T", "pass"):  # landlord 5, farmer 1 passes, farmer 2 T, landlord pass
        env.step(u.string_to_action(a))
    assert env.agent_selection == "player_1"
    legal = {u.action_to_string(a) for a in env.unwrapped.legal_actions()}
    assert {"J", "B", "R", "pass", "3333", "4444", "BR"} == legal


# -- auction ---------------------------------------------------------------------------------------

AUCTION_DEAL = {"hands": DEAL_A["hands"], "kitty": "BR2"}


def _hand_size(env, seat):
    s = env.unwrapped.state_vec
    return int(s[hand_off(seat):hand_off(seat) + 16].sum())


def _auction(env, first, actions, **extra):
    env.reset(seed=3, options={**AUCTION_DEAL, "first_bidder": first, **extra})
    assert env.infos[env.agent_selection]["phase"] == "auction"
    assert env.agent_selection == f"player_{first}"
    u = env.unwrapped
    for a in actions:
        env.step(u.string_to_action(a))


def test_auction_passes_and_reentry():
    env = _env()
    _auction(env, 0, ["pass", "bid 1", "pass", "bid 2", "pass"])
    assert env.infos[env.agent_selection]["phase"] == "auction"  # one pass after the bid
    env.step(env.unwrapped.string_to_action("pass"))  # second pass in a row: seat 0 wins at 2
    info = env.infos[env.agent_selection]
    assert (info["phase"], info["landlord"], info["bid"]) == ("play", 0, 2)
    assert env.agent_selection == "player_0"  # the landlord leads
    assert _hand_size(env, 0) == 20 and _hand_size(env, 1) == 17 and _hand_size(env, 2) == 17


def test_auction_bids_strictly_rise():
    env = _env()
    _auction(env, 1, ["bid 2"])
    u = env.unwrapped
    legal = {u.action_to_string(a) for a in env.unwrapped.legal_actions()}
    assert legal == {"pass", "bid 3"}
    with pytest.raises(ValueError):
        env.step(u.string_to_action("bid 2"))
    with pytest.raises(ValueError):
        env.step(u.string_to_action("bid 1"))


def test_auction_ends_after_a_three():
    env = _env()
    _auction(env, 2, ["bid 1", "bid 3"])
    info = env.infos[env.agent_selection]
    assert (info["phase"], info["landlord"], info["bid"]) == ("play", 0, 3)
    assert env.agent_selection == "player_0"
    _auction(env, 2, ["bid 3"])
    info = env.infos[env.agent_selection]
    assert (info["phase"], info["landlord"], info["bid"]) == ("play", 2, 3)


def test_auction_pass_counting_restarts_after_a_bid():
    env = _env()
    _auction(env, 0, ["bid 1", "pass", "bid 2", "pass"])
    assert env.infos[env.agent_selection]["phase"] == "auction"
    assert env.agent_selection == "player_1"
    env.step(env.unwrapped.string_to_action("pass"))
    info = env.infos[env.agent_selection]
    assert (info["phase"], info["landlord"], info["bid"]) == ("play", 2, 2)


def test_passes_before_the_first_bid_do_not_end_the_auction():
    env = _env()
    _auction(env, 0, ["pass", "pass", "bid 1", "pass"])
    assert env.infos[env.agent_selection]["phase"] == "auction"
    env.step(env.unwrapped.string_to_action("pass"))
    info = env.infos[env.agent_selection]
    assert (info["phase"], info["landlord"], info["bid"]) == ("play", 2, 1)


def test_kitty_is_shown_to_everyone_after_the_auction():
    env = _env()
    _auction(env, 0, ["bid 1"])
    layout = env.unwrapped.game.layout
    a, b = layout.offsets["kitty"]
    for agent in env.possible_agents:  # hidden during the auction
        assert not env.observe(agent)["observation"][a:b].any()
    for act in ("pass", "pass"):
        env.step(env.unwrapped.string_to_action(act))
    depth = (b - a) // 15
    want = [ORDER.index(c) * depth for c in "2BR"]  # kitty BR2: one of each
    for agent in env.possible_agents:
        assert np.flatnonzero(env.observe(agent)["observation"][a:b]).tolist() == want


def test_first_bidder_is_seeded_and_varies():
    firsts = set()
    env = _env()
    for seed in range(12):
        env.reset(seed=seed)
        first = env.agent_selection
        env.reset(seed=seed)
        assert env.agent_selection == first  # same seed, same first bidder
        firsts.add(first)
    assert firsts == {"player_0", "player_1", "player_2"}


def test_auction_lone_bid_wins():
    env = _env()
    _auction(env, 1, ["bid 1", "pass", "pass"])
    info = env.infos[env.agent_selection]
    assert (info["phase"], info["landlord"], info["bid"]) == ("play", 1, 1)


def test_all_pass_void():
    env = _env()
    _auction(env, 1, ["pass", "pass", "pass"])
    assert _done(env)
    assert env.rewards == {"player_0": 0.0, "player_1": 0.0, "player_2": 0.0}


def test_all_pass_redeal():
    env = _env(all_pass="redeal", max_redeals=1)
    _auction(env, 1, ["pass", "pass", "pass"])
    assert not _done(env)
    info = env.infos[env.agent_selection]
    assert info["phase"] == "auction" and info["landlord"] == -1 and info["bid"] == 0
    assert [_hand_size(env, i) for i in range(3)] == [17, 17, 17]
    s = env.unwrapped.state_vec
    assert int(s[kitty_off(3):kitty_off(3) + 16].sum()) == 3
    u = env.unwrapped
    for _ in range(3):  # the redeal budget is spent: void
        env.step(u.string_to_action("pass"))
    assert _done(env)
    assert env.rewards == {"player_0": 0.0, "player_1": 0.0, "player_2": 0.0}


def test_fixed_auction():
    env = _env(auction="fixed")
    env.reset(seed=5)
    info = env.infos[env.agent_selection]
    assert (info["phase"], info["landlord"], info["bid"]) == ("play", 0, 1)
    assert env.agent_selection == "player_0" and _hand_size(env, 0) == 20
    env.reset(seed=5, options=AUCTION_DEAL)
    info = env.infos[env.agent_selection]
    assert (info["phase"], info["landlord"], info["bid"]) == ("play", 0, 1)
    assert _hand_size(env, 0) == 20
    s = env.unwrapped.state_vec
    assert T.deck.format(s[hand_off(0):hand_off(0) + 16]) == "3333444456789TJQK2BR"
