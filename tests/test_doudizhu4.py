"""四人斗地主 ``doudizhu4``: rules positions, auction, scoring, API conformance, bad input.

Every expected value below is derived by hand from the rules page (docs/rules/doudizhu.md,
"4 players"), restated here so the tests do not read the page:

* 108 cards (two packs, jokers ``BB RR``), 25 to each of 4 seats, 8 to a kitty the landlord
  takes and the farmers never see;
* auction: pass or bid 1/2/3 strictly rising, re-entry allowed, ends at a 3 or after three
  passes in a row following a bid; four passes before any bid -> void (0 to everyone);
* no trio + single, airplane + singles or four + two; ``BB`` and ``RR`` are pairs above
  ``22`` (``RR`` highest) and may be the pair of a trio + pair / airplane + pairs, never
  carried together; ``BR`` is no pair; three jokers are no combination;
* bombs 4..8 of a rank: more cards beat fewer whatever the rank, equal size -> higher rank;
  the rocket ``BBRR`` beats everything;
* chains within 3..A; straight <= 12, pair chain <= 12 pairs, airplane <= 11 trios
  (airplane + pairs <= 6 trios: 5 cards per trio, 33-card hand);
* stake = bid x 2^(rockets + bombs of >= 6 cards); landlord wins: +3 stake / -stake each
  farmer; landlord loses: the reverse.
"""

from __future__ import annotations

import pickle
from itertools import combinations

import numpy as np
import pytest

import cardenvs
from cardenvs import doudizhu4_v0, legal_moves
from cardenvs.core.combos import AIRPLANE

ORDER = "3456789TJQKA2BR"
G = "doudizhu4"


def lm(hand, prev=None):
    return legal_moves(G, hand, prev)


# -- literal positions ---------------------------------------------------------------------


def test_bomb_size_beats_rank():
    # a 6-card bomb of 3s beats a 5-card bomb of 2s; 3333 / 33333 do not (fewer cards or
    # same size and lower rank); 222 in hand is a trio
    assert lm("333333222", "22222") == ["333333"]
    # a 5-card bomb beats a 4-card one whatever the rank
    assert lm("33333", "2222") == ["33333"]
    assert lm("3333", "22222") == []
    # equal size: higher rank
    assert lm("4444", "3333") == ["4444"]
    assert lm("3333", "4444") == []
    assert lm("44444444", "33333333") == ["44444444"]
    assert lm("33333333", "44444444") == []
    # any bomb beats any non-bomb
    assert lm("3333", "3456789TJQKA") == ["3333"]
    assert lm("5555", "BB") == ["5555"]


def test_rocket_is_four_jokers_and_beats_everything():
    assert lm("BBRR", "22222222") == ["BBRR"]
    assert lm("BBRR22222222", "AAAAAAAA") == ["BBRR", "22222222"]  # by size, then rank
    assert lm("22222222", "BBRR") == []
    # BR, BBR, BRR are no rocket; BB and RR are pairs
    assert lm("BBR") == ["B", "R", "BB"]
    assert lm("BR", "3333") == []


def test_joker_pairs():
    assert lm("BR") == ["B", "R"]  # BR is no pair
    assert lm("BR", "33") == []
    # BB and RR rank above 22, RR highest; the four jokers are also the rocket
    assert lm("22BBRR", "AA") == ["22", "BB", "RR", "BBRR"]
    assert lm("22BBRR", "22") == ["BB", "RR", "BBRR"]
    assert lm("22RR", "BB") == ["RR"]
    assert lm("22BB", "RR") == []


def test_joker_pair_kickers():
    # RR as the pair of a trio + pair
    assert lm("333RR") == ["3", "R", "33", "RR", "333", "333RR"]
    assert lm("555RR", "444+55") == ["555RR"]
    # BB or RR may be one pair of an airplane + pairs, but never both together
    assert lm("444555BBRR66", "333444+5566") == ["BBRR", "44455566BB", "44455566RR"]
    assert lm("444555BBRR", "333444+5566") == ["BBRR"]


def test_families_that_do_not_exist():
    # no four + two (singles or pairs), no trio + single
    assert lm("333345") == ["3", "4", "5", "33", "333", "3333"]
    assert lm("33334455") == ["3", "4", "5", "33", "44", "55", "333", "3333", "33344",
                              "33355", "334455"]
    # no airplane + singles (333444+56), no trio + single (3335)
    assert lm("33344456") == ["3", "4", "5", "6", "33", "44", "333", "444", "33344", "33444",
                              "333444"]
    for prev in ("3334", "33334", "333345", "33334455", "33344456", "BBR", "BR"):
        with pytest.raises(ValueError, match="not a legal combination"):
            lm("3", prev)


def test_follow_needs_same_shape():
    # trio + pair only follows trio + pair with a higher trio; the pair's rank does not matter
    assert lm("44433", "333+22") == ["33444"]  # written sorted
    assert lm("33322", "333+44") == []
    # airplane + pairs must match the number of trios
    got = lm("444555666778899", "333444+5566")
    # 2-trio airplanes above top 4: 444555 (top 5), 555666 (top 6); pairs from the other ranks
    # held as pairs: 444555 + two of {66, 77, 88, 99}; 555666 + two of {44, 77, 88, 99}
    exp = set()
    for body, others in (("444555", "6789"), ("555666", "4789")):
        for a, b in combinations(others, 2):
            exp.add("".join(sorted(body + a * 2 + b * 2, key=ORDER.index)))
    assert set(got) == exp and len(got) == 12
    # pair chain of 3 does not follow a pair chain of 4
    assert lm("445566", "33445566") == []


def test_chain_length_caps():
    hand = "3456789TJQKA2"
    free = lm(hand)
    assert "3456789TJQKA" in free  # a straight of 12, the longest
    assert not any(len(p) >= 12 and "2" in p for p in free)  # 2 never in chains
    assert max(len(p) for p in free) == 12
    # pair chain: up to 12 pairs (33..AA), no 22
    pairs = "".join(c * 2 for c in "3456789TJQKA2")
    free = lm(pairs)
    assert "33445566778899TTJJQQKKAA" in free
    assert max(len(p) for p in free) == 24
    # airplane: at most 11 trios (33 cards, the landlord's whole hand); twelve trios 3..A
    # would need 36 cards, so the table has no such row
    trios = "".join(c * 3 for c in "3456789TJQK")
    free = lm(trios)
    assert trios in free and max(len(p) for p in free) == 33
    table = cardenvs.make_game(G).table
    air = [p for p in table.plays if p.family == AIRPLANE]
    assert max(p.length for p in air) == 11
    assert not table.rows_of_cards(table.deck.parse("".join(c * 3 for c in "3456789TJQKA")))
    # number of airplanes: lengths 2..11 over the 12 ranks 3..A = sum(13 - L)
    assert len(air) == sum(13 - L for L in range(2, 12))
    # airplane + pairs: 6 trios + 6 pairs = 30 cards is the longest (7 would be 35)
    big = "".join(c * 3 for c in "3456789") + "TTJJQQKKAA2"  # 32 cards
    free = lm(big)
    assert "".join(c * 3 for c in "34567") + "TTJJQQKKAA" in free
    assert not any(len(p) > 30 for p in free)
    assert max(len(p) for p in free) == 30


def test_action_space_size_and_families():
    g = cardenvs.make_game(G)
    fams = {}
    for p in g.table.plays:
        fams[p.family] = fams.get(p.family, 0) + 1
    from cardenvs.core.combos import FAMILY_CODES as F

    # counted by hand from the rules (13 natural ranks, 12 of them 3..A for chains)
    airplane_pairs = sum((13 - k) * (_comb(15 - k, k) - _comb(13 - k, k - 2)) for k in range(2, 7))
    expected = {
        F["single"]: 15, F["pair"]: 15, F["trio"]: 13, F["trio_pair"]: 13 * 14,
        F["straight"]: sum(13 - L for L in range(5, 13)),
        F["pair_chain"]: sum(13 - L for L in range(3, 13)),
        F["airplane"]: sum(13 - L for L in range(2, 12)),
        F["airplane_pairs"]: airplane_pairs, F["bomb"]: 5 * 13, F["rocket"]: 1,
    }
    assert fams == expected
    assert airplane_pairs == 7504
    assert len(g.table) == 7951 and g.n_actions == 7955
    assert g.blocks == {"play": (0, 7951), "pass": (7951, 7952), "bid": (7952, 7955)}


def _comb(n, k):
    from math import comb

    return comb(n, k) if k >= 0 else 0


# -- a slow reference of the 4-player move set, written from the rules -----------------------

NAT = 13  # natural ranks 3..2 (index 0..12); 12 = '2'; 13 = B, 14 = R
CHAIN_TOP = 11  # chains use 3..A


def ref_plays(h):
    """Every play (as a count tuple) the hand ``h`` (list of 15 counts) can make, with its
    (family, length, key) for comparisons; bombs are ("bomb", size, rank)."""
    out = {}

    def put(c, reading):
        out[tuple(c)] = reading

    def vec(d):
        c = [0] * 15
        for r, k in d.items():
            c[r] += k
        return c

    pairable = [r for r in range(15) if h[r] >= 2]
    for r in range(15):
        if h[r] >= 1:
            put(vec({r: 1}), ("single", 1, r))
        if h[r] >= 2:
            put(vec({r: 2}), ("pair", 1, r))
    for r in range(NAT):
        if h[r] >= 3:
            put(vec({r: 3}), ("trio", 1, r))
            for q in pairable:
                if q != r:
                    put(vec({r: 3, q: 2}), ("trio_pair", 1, r))
        for size in range(4, h[r] + 1):
            put(vec({r: size}), ("bomb", size, r))
    for mult, fam, lo_len, hi_len in ((1, "straight", 5, 12), (2, "pair_chain", 3, 12),
                                      (3, "airplane", 2, 11)):
        for L in range(lo_len, hi_len + 1):
            for top in range(L - 1, CHAIN_TOP + 1):
                ranks = range(top - L + 1, top + 1)
                if all(h[r] >= mult for r in ranks):
                    put(vec({r: mult for r in ranks}), (fam, L, top))
                    if mult == 3 and 5 * L <= 33:
                        cand = [q for q in pairable if q not in ranks]
                        for ks in combinations(cand, L):
                            if 13 in ks and 14 in ks:
                                continue
                            d = {r: 3 for r in ranks}
                            d.update({q: 2 for q in ks})
                            put(vec(d), ("airplane_pairs", L, top))
    if h[13] >= 2 and h[14] >= 2:
        put(vec({13: 2, 14: 2}), ("rocket", 0, 0))
    return out


def ref_beats(a, b):
    """Whether reading ``a`` beats reading ``b``."""
    if b[0] == "rocket":
        return False
    if a[0] == "rocket":
        return True
    if a[0] == "bomb":
        if b[0] != "bomb":
            return True
        return (a[1], a[2]) > (b[1], b[2])
    return a[0] == b[0] and a[1] == b[1] and a[2] > b[2]


def _fmt(c):
    return "".join(ORDER[r] * c[r] for r in range(15))


def _random_hand(rng, n, used=None):
    """n random cards of the two decks, outside the counts ``used`` (default: none)."""
    used = used or [0] * 15
    deck = [r for r in range(15) for _ in range((8 if r < NAT else 2) - used[r])]
    pick = rng.choice(len(deck), n, replace=False)
    h = [0] * 15
    for i in pick:
        h[deck[i]] += 1
    return h


def test_differential_against_reference():
    rng = np.random.default_rng(2024)
    for it in range(120):
        h = _random_hand(rng, 33 if it % 3 == 0 else 25)
        plays = ref_plays(h)
        hand = _fmt(h)
        assert set(lm(hand)) == {_fmt(c) for c in plays}, hand
        # previous plays: from another random hand, biased to shapes that can be followed
        other = ref_plays(_random_hand(rng, 25, used=h))
        prevs = list(other.items())
        for j in rng.choice(len(prevs), 4, replace=False):
            pc, pr = prevs[j]
            exp = {_fmt(c) for c, r in plays.items() if ref_beats(r, pr)}
            assert set(lm(hand, _fmt(pc))) == exp, (hand, _fmt(pc))


# -- custom deals, auction, scoring ------------------------------------------------------------

# Scenario A: landlord seat 0 holds 333333 44444 555666777888 99TTJJQQKK (33 with the kitty)
DEAL_A = dict(
    hands=["3333334444455566677788899", "AAAAAAAA22222222BBRR55555",
           "666667777788888999999TTTT", "33444TTJJJJJJQQQQQQKKKKKK"],
    kitty="TTJJQQKK",
)
# Scenario B: landlord seat 1 holds 2222 BBRR 333444555666777888999TTT J
DEAL_B = dict(
    hands=["3333344444555556666677777", "2222BBRR333444555666777J8",
           "8888899999TTTTTJJJJJJJQQQ", "QQQQQKKKKKKKKAAAAAAAA2222"],
    kitty="88999TTT",
)
# Scenario C: landlord seat 2; farmer seat 0 holds 222222 AAAAAAAA KKKKK 334455
DEAL_C = dict(
    hands=["222222AAAAAAAAKKKKK334455", "33333444444555555TTTTTTTT",
           "3666666667777777788888888", "JJJJJJJJQQQQQQQQKKK22BBRR"],
    kitty="99999999",
)


def make_env(**kw):
    return doudizhu4_v0.env(illegal="raise", **kw)


def play(env, moves):
    """Play ``moves`` (action strings) in order, checking each is legal for the mover."""
    u = env.unwrapped
    for m in moves:
        a = u.string_to_action(m)
        assert a in u.legal_actions(), (env.agent_selection, m)
        env.step(a)


def final_rewards(env):
    return [env._cumulative_rewards[a] for a in env.possible_agents]


PASS3 = ["pass"] * 3


def test_scoring_landlord_wins_six_and_five_card_bombs():
    env = make_env()
    env.reset(seed=0, options={**DEAL_A, "landlord": 0, "bid": 2})
    assert env.agent_selection == "player_0"
    assert env.unwrapped.game.doublings(env.unwrapped.state_vec) == 0
    play(env, ["333333"] + PASS3 + ["44444"] + PASS3 + ["555666777888"] + PASS3)
    # the 6-card bomb doubled, the 5-card one did not
    assert env.unwrapped.game.doublings(env.unwrapped.state_vec) == 1
    play(env, ["99TTJJQQKK"])
    assert all(env.terminations.values())
    # stake = 2 x 2^1 = 4: landlord +12, each farmer -4
    assert final_rewards(env) == [12.0, -4.0, -4.0, -4.0]


def test_scoring_rocket_doubles_four_card_bomb_does_not():
    env = make_env()
    env.reset(seed=0, options={**DEAL_B, "landlord": 1, "bid": 1})
    assert env.agent_selection == "player_1"
    play(env, ["2222"] + PASS3)
    assert env.unwrapped.game.doublings(env.unwrapped.state_vec) == 0
    play(env, ["BBRR"] + PASS3 + ["333444555666777888999TTT"] + PASS3 + ["J"])
    assert env.unwrapped.game.doublings(env.unwrapped.state_vec) == 1
    # stake = 1 x 2^1 = 2: landlord +6, each farmer -2
    assert final_rewards(env) == [-2.0, 6.0, -2.0, -2.0]


def test_scoring_farmers_win():
    env = make_env()
    env.reset(seed=0, options={**DEAL_C, "landlord": 2, "bid": 3})
    assert env.agent_selection == "player_2"
    # landlord leads 3; seat 3 passes; seat 0 bombs with six 2s (doubles); 1, 2, 3 pass
    play(env, ["3", "pass", "222222"] + PASS3)
    assert env.agent_selection == "player_0"  # the trick winner leads
    # eight As (doubles), five Ks (does not), then out with a pair chain
    play(env, ["AAAAAAAA"] + PASS3 + ["KKKKK"] + PASS3 + ["334455"])
    assert env.unwrapped.game.doublings(env.unwrapped.state_vec) == 2
    # stake = 3 x 2^2 = 12: landlord -36, every farmer +12 (also those who never played)
    assert final_rewards(env) == [12.0, 12.0, -36.0, 12.0]


def test_win_loss_reward():
    env = make_env(reward="win_loss")
    env.reset(seed=0, options={**DEAL_C, "landlord": 2, "bid": 3})
    play(env, ["3", "pass", "222222"] + PASS3 + ["AAAAAAAA"] + PASS3 + ["KKKKK"] + PASS3
         + ["334455"])
    assert final_rewards(env) == [1.0, 1.0, -1.0, 1.0]


def _auction_env(first):
    env = make_env()
    env.reset(seed=3, options={**DEAL_A, "first_bidder": first})
    return env


def _info(env):
    return env.infos[env.agent_selection] if env.agents else None


def test_auction_ends_after_three_passes_following_a_bid():
    env = _auction_env(1)
    assert env.agent_selection == "player_1" and _info(env)["phase"] == "auction"
    play(env, ["bid 1", "pass", "pass"])
    assert _info(env)["phase"] == "auction" and env.agent_selection == "player_0"
    # after a bid of 1 only higher bids (and pass) are legal
    u = env.unwrapped
    assert sorted(u.action_to_string(a) for a in u.legal_actions()) == ["bid 2", "bid 3", "pass"]
    play(env, ["pass"])  # third pass in a row: player_1 is landlord at 1
    info = _info(env)
    assert info["phase"] == "play" and info["landlord"] == 1 and info["bid"] == 1
    assert env.agent_selection == "player_1"
    s = u.state_vec
    from cardenvs.core.state import hand_off

    assert s[hand_off(1):hand_off(1) + 16].sum() == 33  # took the 8-card kitty


def test_auction_reentry_and_rising_bids():
    env = _auction_env(1)
    # 1 bids 1, 2 and 3 pass, 0 bids 2 (the pass count restarts), 1 passes, 2 re-enters with 3
    play(env, ["bid 1", "pass", "pass", "bid 2", "pass"])
    u = env.unwrapped
    assert env.agent_selection == "player_2"
    assert sorted(u.action_to_string(a) for a in u.legal_actions()) == ["bid 3", "pass"]
    play(env, ["bid 3"])  # a bid of 3 ends the auction at once
    info = _info(env)
    assert info["phase"] == "play" and info["landlord"] == 2 and info["bid"] == 3
    # two passes after a bid are not enough with four seats
    env = _auction_env(0)
    play(env, ["pass", "bid 2", "pass", "pass"])
    assert _info(env)["phase"] == "auction" and env.agent_selection == "player_0"
    play(env, ["pass"])
    assert _info(env)["landlord"] == 1 and _info(env)["bid"] == 2


def test_four_passes_void_the_deal():
    env = _auction_env(2)
    play(env, ["pass"] * 3)
    assert _info(env)["phase"] == "auction" and env.agent_selection == "player_1"
    play(env, ["pass"])
    assert all(env.terminations.values())
    assert final_rewards(env) == [0.0, 0.0, 0.0, 0.0]
    # all_pass="redeal": a new deal and a new auction in the same episode
    env = make_env(all_pass="redeal")
    env.reset(seed=3, options={**DEAL_A, "first_bidder": 2})
    before = env.unwrapped.state_vec.copy()
    play(env, ["pass"] * 4)
    assert not any(env.terminations.values()) and _info(env)["phase"] == "auction"
    from cardenvs.core.state import hand_off

    s = env.unwrapped.state_vec
    assert [s[hand_off(i):hand_off(i) + 16].sum() for i in range(4)] == [25] * 4
    assert not np.array_equal(s[hand_off(0):hand_off(4)], before[hand_off(0):hand_off(4)])


def test_kitty_hidden_from_farmers():
    env = make_env()
    env.reset(seed=0, options={**DEAL_A, "first_bidder": 0})
    u = env.unwrapped
    a, b = u.game.layout.offsets["kitty"]
    assert b - a == 15 * 8
    for agent in env.possible_agents:  # nobody sees it during the auction
        assert not env.observe(agent)["observation"][a:b].any()
    play(env, ["bid 3"])  # player_0 is landlord
    expected = np.zeros(b - a, np.float32)
    for ch in "TJQK":  # kitty TTJJQQKK: two copies of T, J, Q, K -> planes 1 and 2 set
        r = ORDER.index(ch)
        expected[r * 8:r * 8 + 2] = 1.0
    assert np.array_equal(env.observe("player_0")["observation"][a:b], expected)
    for agent in ("player_1", "player_2", "player_3"):
        assert not env.observe(agent)["observation"][a:b].any()
    # the landlord's hand field shows his 33 cards (eight 9..K planes included)
    h0, h1 = u.game.layout.offsets["hand"]
    assert env.observe("player_0")["observation"][h0:h1].sum() == 33


# -- bad input ---------------------------------------------------------------------------------


def test_impossible_deals_raise():
    env = make_env()
    env.reset(seed=0, options={**DEAL_A, "landlord": 0, "bid": 2})
    snap = env.unwrapped.state_vec.copy()
    h = list(DEAL_A["hands"])
    # a card 9 times in one hand
    with pytest.raises(ValueError, match="too many '3'.*holds 8"):
        env.reset(options={"hands": ["333333333" + h[0][9:]] + h[1:], "kitty": DEAL_A["kitty"]})
    # a card 9 times across hands (seat 0 has six 3s, seat 3 two, the kitty one more)
    with pytest.raises(ValueError, match="9 cards of '3'"):
        env.reset(options={"hands": h, "kitty": "3TJJQQKK"})
    # wrong hand size
    with pytest.raises(ValueError, match="hand of seat 1 has 24 cards.*25"):
        env.reset(options={"hands": [h[0], h[1][:-1], h[2], h[3]]})
    # wrong kitty size
    with pytest.raises(ValueError, match="kitty has 7 cards.*8"):
        env.reset(options={"hands": h, "kitty": "TTJJQQK"})
    with pytest.raises(ValueError, match="4 hands"):
        env.reset(options={"hands": h[:3]})
    with pytest.raises(ValueError, match="landlord"):
        env.reset(options={**DEAL_A, "landlord": 4, "bid": 1})
    with pytest.raises(ValueError, match="unknown card 'X'"):
        env.reset(options={"hands": ["X" + h[0][1:]] + h[1:]})
    assert np.array_equal(env.unwrapped.state_vec, snap)  # the game in progress is untouched
    # without a kitty, the kitty is the rest of the two packs
    env.reset(options={"hands": h})
    from cardenvs.core.state import kitty_off

    s = env.unwrapped.state_vec
    assert env.unwrapped.game.deck.format(s[kitty_off(4):kitty_off(4) + 16]) == "TTJJQQKK"


def test_string_to_action_garbage():
    u = make_env().unwrapped
    for bad in ("xyz", "BR", "BBR", "3334", "333444+BBRR", "3333+56", "bid 4", "bid x", ""):
        with pytest.raises(ValueError):
            u.string_to_action(bad)
    with pytest.raises(TypeError):
        u.string_to_action(5)


def test_action_strings_round_trip():
    u = make_env().unwrapped
    for a in range(u.game.n_actions):
        assert u.string_to_action(u.action_to_string(a)) == a
    assert u.action_to_string(7951) == "pass" and u.action_to_string(7954) == "bid 3"
    assert u.string_to_action("333+RR") == u.string_to_action("333RR")
    assert u.action_to_string(u.string_to_action("RR333")) == "333+RR"


# -- PettingZoo conformance --------------------------------------------------------------------


def test_docstring_table_matches_layout():
    g = cardenvs.make_game(G)
    assert g.layout.markdown() in doudizhu4_v0.__doc__
    assert g.layout.size == 2019
    assert "N = 7,955" in doudizhu4_v0.__doc__


def test_pettingzoo_api():
    from pettingzoo.test import api_test

    api_test(doudizhu4_v0.env(), num_cycles=300)


def test_pettingzoo_seed_and_render():
    from pettingzoo.test import render_test, seed_test

    seed_test(doudizhu4_v0.env, num_cycles=100)
    render_test(lambda render_mode=None: doudizhu4_v0.env(render_mode=render_mode))


def test_registry_make():
    import pettingzoo

    assert cardenvs.GAMES["doudizhu4"] == "doudizhu4_v0"
    env = pettingzoo.make("aec", "cardenvs/doudizhu4-v0")
    env.reset(seed=1)
    assert env.possible_agents == [f"player_{i}" for i in range(4)]
    assert env.unwrapped.game.info.n_players == 4


def test_pickle_round_trip_mid_game():
    env = make_env()
    env.reset(seed=11)
    rng = np.random.default_rng(0)
    for _ in range(15):
        legal = env.unwrapped.legal_actions()
        env.step(int(legal[rng.integers(legal.size)]))
    clone = pickle.loads(pickle.dumps(env))
    assert np.array_equal(clone.unwrapped.state_vec, env.unwrapped.state_vec)
    assert clone.agent_selection == env.agent_selection
    for agent in env.possible_agents:
        assert np.array_equal(clone.observe(agent)["observation"], env.observe(agent)["observation"])
        assert np.array_equal(clone.observe(agent)["action_mask"], env.observe(agent)["action_mask"])
    # both continue identically to the end, including the next deal drawn from the generator
    while env.agents:
        agent = env.agent_selection
        if env.terminations[agent]:
            env.step(None)
            clone.step(None)
            continue
        legal = env.unwrapped.legal_actions()
        assert np.array_equal(legal, clone.unwrapped.legal_actions())
        a = int(legal[rng.integers(legal.size)])
        env.step(a)
        clone.step(a)
    assert clone._cumulative_rewards == env._cumulative_rewards
    env.reset()
    clone.reset()
    assert np.array_equal(clone.unwrapped.state_vec, env.unwrapped.state_vec)


def test_legal_play_features():
    env = make_env()
    env.reset(seed=0, options={**DEAL_A, "landlord": 0, "bid": 2})
    u = env.unwrapped
    ids, feats = u.legal_play_features()
    assert np.array_equal(ids, u.legal_actions())
    C = 15 * 8
    row = list(ids).index(u.string_to_action("333333"))
    # cards planes: six 3s -> planes 1..6 of rank 0; the bomb flag is set
    assert feats[row, :C].sum() == 6 and feats[row, :6].all()
    from cardenvs.core.combos import FAMILY_CODES, N_FAMILIES

    assert feats[row, C + FAMILY_CODES["bomb"]] == 1.0
    assert feats[row, C + N_FAMILIES + 2] == 1.0
    row = list(ids).index(u.string_to_action("99TTJJQQKK"))
    assert feats[row, C + N_FAMILIES + 2] == 0.0
