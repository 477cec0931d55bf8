"""挖坑 ``wakeng``: combinations, first bidder / leader, auction, burying, open hand, scoring,
PettingZoo conformance and a differential test of the move generator.

Every expected value below is derived by hand from the rules page (docs/rules/wakeng.md), restated
here so the tests do not read the page:

* 52 cards, no jokers, 16 to each of 3 seats, a kitty of 4; ranks 4 < 5 < ... < A < 2 < 3;
* the holder of ♠3 bids first (♠4, ♠5, ... ♠K, ♠A, ♠2 when ♠3 is in the kitty); options
  ``lowest_heart`` / ``lowest_club``: the lowest heart / club not in the kitty from 4 upwards;
* one auction round from the first bidder, each seat speaks once: pass or a bid 1..3 strictly
  above the current one; a 3 ends it at once; all pass -> the first bidder digs at 1;
* the digger takes the kitty (20 cards) and buries exactly 4, one pick at a time; the holder
  of ♦3 then leads (♦4, ♦5, ... ♦A, ♦2 when it is buried), farmer or digger;
* single, pair, trio, straight (>= 5 ranks within 4..A), pair chain (>= 3 pairs within 4..A),
  airplane (>= 2 trios within 4..A), bomb (four of a kind, 3333 highest); no kickers;
* ``open_hand``: whoever bids 3 may play open: his 16 dealt cards are shown, the stake doubles;
* unit = bid x 2^bombs x (2 if open) x 2^floor(max(n, 8) / 8), n = cards of the losing side;
  digger +-2 unit, farmers -+unit.

The engine's own decision (documented in ``cardenvs.games.wakeng``): bury picks name a rank
(``bury 7`` = a 7 that is not the diamond) or the diamond (``bury D7``).
"""

from __future__ import annotations

import pickle
import warnings
from dataclasses import replace

import numpy as np
import pytest

import cardenvs
from cardenvs import legal_moves, wakeng_v0
from cardenvs.core.combos import BOMB
from cardenvs.core.kernels import gen_legal
from cardenvs.games.wakeng import Wakeng, combo_rules, stake_unit
from helpers import assert_bad_deal_kept_out, random_game

ORDER = "456789TJQKA23"
SUITS = "SHCD"
G = "wakeng"


def lm(hand, prev=None, **options):
    return legal_moves(G, hand, prev, **options)


# -- combinations (legal_moves) ------------------------------------------------------------------


def test_straights_stay_within_4_to_A():
    assert "TJQKA" in lm("TJQKA")
    assert "456789TJQKA" in lm("456789TJQKA")  # the longest straight: 11 ranks
    # 2 and 3 never join a chain
    assert [m for m in lm("JQKA2") if len(m) == 5] == []
    assert [m for m in lm("A2345") if len(m) >= 5] == []  # A-2-3-4-5 (written 45A23)
    assert [m for m in lm("23456") if len(m) >= 5] == []
    assert [m for m in lm("4567") if len(m) >= 4] == []  # too short
    # a straight follows a straight of the same length with a higher top card
    assert lm("56789", "45678") == ["56789"]
    assert lm("45678", "56789") == []
    assert lm("456789", "45678") == ["56789"]  # only the 5-card one


def test_pair_chains_and_airplanes():
    assert "445566" in lm("445566")
    assert [m for m in lm("4455") if len(m) == 4] == []  # two pairs are no chain
    assert lm("778899", "556677") == ["778899"]
    assert [m for m in lm("KKAA22") if len(m) == 6] == []
    assert "444555" in lm("444555")
    # 333444: the 3 is the top rank, not next to 4 (written 444333)
    assert [m for m in lm("333444") if len(m) == 6] == []
    assert [m for m in lm("AAA222") if len(m) == 6] == []
    assert lm("666777", "444555") == ["666777"]


def test_no_kickers():
    # no trio + single, trio + pair, four + two, airplane with wings
    assert [m for m in lm("4445") if len(m) == 4] == []
    assert [m for m in lm("44455") if len(m) == 5] == []
    assert [m for m in lm("444456") if len(m) == 6] == []
    assert [m for m in lm("44455567") if len(m) == 8] == []
    g = Wakeng()
    with pytest.raises(ValueError, match="not a legal combination"):
        g.table.find("4445")


def test_three_is_the_highest_rank():
    assert lm("33", "22") == ["33"]
    assert lm("22", "33") == []
    assert lm("3", "2") == ["3"]
    assert lm("333", "AAA") == ["333"]
    assert lm("2", "3") == []


def test_bombs():
    # 3333 beats every other bomb, and no bomb beats it
    for ch in ORDER[:-1]:
        assert lm("3333", ch * 4) == ["3333"]
        assert lm(ch * 4, "3333") == []
    assert lm("5555", "4444") == ["5555"]
    assert lm("4444", "5555") == []
    # any bomb beats any non-bomb
    assert lm("4444", "3") == ["4444"]
    assert lm("4444", "56789TJQKA") == ["4444"]
    assert lm("4444", "QQQKKKAAA") == ["4444"]


def test_bombs_off_four_of_a_kind_is_its_own_type():
    assert lm("4444", "3", bombs=False) == []
    assert lm("4444", "TJQKA", bombs=False) == []
    assert lm("5555", "4444", bombs=False) == ["5555"]
    assert lm("4444", "5555", bombs=False) == []
    assert lm("3333", "AAAA", bombs=False) == ["3333"]
    assert "4444" in lm("4444", bombs=False)
    g = Wakeng(bombs=False)
    row = g.table.find("4444")
    assert g.table.plays[row].bomb_power == 0 and g.table.plays[row].doubles == 0


def test_minimum_chain_options():
    assert "456" in lm("456", min_straight=3)
    assert "456" not in lm("456")
    assert "4455" in lm("4455", min_pair_chain=2)
    assert [m for m in lm("444555", min_airplane=3) if len(m) == 6] == []
    assert "444555666" in lm("444555666", min_airplane=3)
    assert [m for m in lm("456789", min_straight=6) if len(m) == 5] == []
    with pytest.raises(ValueError, match="min_straight"):
        Wakeng(min_straight=2)
    with pytest.raises(TypeError, match="bombs"):
        Wakeng(bombs=1)
    with pytest.raises(ValueError, match="first_bidder"):
        Wakeng(first_bidder="S4")


def test_table_size():
    # 13 singles + 13 pairs + 13 trios + 13 quads; straights of 5..11 within 11 chain ranks:
    # 7+6+5+4+3+2+1 = 28; pair chains of 3..8 pairs (<= 16 cards): 9+8+7+6+5+4 = 39;
    # airplanes of 2..5 trios: 10+9+8+7 = 34
    g = Wakeng()
    assert len(g.table) == 52 + 28 + 39 + 34 == 153
    assert g.n_actions == 153 + 1 + 3 + 26 + 2 == 185
    assert "N = 185" in wakeng_v0.__doc__
    assert f"({g.layout.size},)" in wakeng_v0.__doc__
    assert "| `hand` |" in wakeng_v0.__doc__  # the rendered observation table


# -- scoring function ------------------------------------------------------------------------------


def test_stake_unit_seed_example_and_card_factor():
    # bid 2, one bomb, 10 cards left on the losing side -> 2 x 2 x 2 = 8
    assert stake_unit(2, 1, False, 10) == 8
    # 2^floor(max(n, 8) / 8): "fewer than 8 count as 8"
    for n, f in ((0, 2), (1, 2), (7, 2), (8, 2), (15, 2), (16, 4), (23, 4), (24, 8), (31, 8),
                 (32, 16)):
        assert stake_unit(1, 0, False, n) == f, n
    assert stake_unit(3, 0, True, 8) == 12  # open hand doubles
    assert stake_unit(3, 2, True, 32) == 3 * 4 * 2 * 16


# -- helpers for deals ---------------------------------------------------------------------------


def suited_deal(kitty, fixed=None):
    """A suited deal: ``kitty`` (4 suited cards), ``fixed`` {card: seat}; the rest of the
    deck goes to the seats in deck order, filling seat 0, then 1, then 2."""
    fixed = dict(fixed or {})
    hands = [[], [], []]
    for card, seat in fixed.items():
        hands[seat].append(card)
    used = set(kitty) | set(fixed)
    rest = [s + r for r in ORDER for s in SUITS if s + r not in used]
    for card in rest:
        seat = next(i for i in range(3) if len(hands[i]) < 16)
        hands[seat].append(card)
    assert all(len(h) == 16 for h in hands)
    return {"hands": [" ".join(h) for h in hands], "kitty": " ".join(kitty)}


def rest_of_deck(*used: str) -> str:
    cnt = {r: 4 for r in ORDER}
    for s in used:
        for ch in s:
            cnt[ch] -= 1
    assert all(v >= 0 for v in cnt.values())
    return "".join(r * cnt[r] for r in ORDER)


def unsuited_deal(fixed: dict[int, str], kitty: str):
    """Hands given by rank for some seats, the rest of the deck split over the others."""
    rest = rest_of_deck(kitty, *fixed.values())
    hands = []
    for seat in range(3):
        if seat in fixed:
            hands.append(fixed[seat])
        else:
            hands.append(rest[:16])
            rest = rest[16:]
    assert rest == ""
    return hands


def new_env(**kw):
    return wakeng_v0.env(illegal="raise", **kw)


def act(env, text):
    env.step(env.unwrapped.string_to_action(text))


def hand_of(env, seat):
    from cardenvs.core.state import hand_off

    s = env.unwrapped.state_vec
    return env.unwrapped.game.deck.format(s[hand_off(seat):hand_off(seat) + 16])


def field_cards(env, agent, name):
    """Decode a 13x4-plane card field of ``agent``'s observation back to a card string."""
    g = env.unwrapped.game
    a, b = g.layout.offsets[name]
    planes = env.observe(agent)["observation"][a:b].reshape(13, 4)
    return "".join(ORDER[r] * int(planes[r].sum()) for r in range(13))


def legal_strings(env):
    return sorted(env.unwrapped.action_to_string(a) for a in env.unwrapped.legal_actions())


def run(env, actions):
    for t in actions:
        act(env, t)


# -- first bidder ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kitty, fixed, expected", [
    (["H4", "H5", "H6", "H7"], {"S3": 2}, 2),  # ♠3 holder
    (["S3", "H5", "H6", "H7"], {"S4": 1}, 1),  # ♠3 in the kitty -> ♠4
    (["S3", "S4", "S5", "S6"], {"S7": 0, "S8": 1}, 0),  # -> ♠7
    (["S3", "S4", "S5", "H6"], {"S6": 2}, 2),  # -> ♠6
])
def test_first_bidder_spade_three(kitty, fixed, expected):
    env = new_env()
    env.reset(seed=0, options=suited_deal(kitty, fixed))
    assert env.agent_selection == f"player_{expected}"
    assert env.infos[env.agent_selection]["first_bidder"] == expected
    assert env.infos[env.agent_selection]["phase"] == "auction"


@pytest.mark.parametrize("option, kitty, fixed, expected", [
    ("lowest_heart", ["H5", "C5", "D5", "S5"], {"S3": 0, "H4": 2, "H3": 1}, 2),
    ("lowest_heart", ["H4", "C5", "D5", "S5"], {"S3": 0, "H5": 1}, 1),
    ("lowest_club", ["C4", "C5", "D5", "S5"], {"S3": 0, "C6": 2, "C3": 1}, 2),
    ("lowest_club", ["H4", "H5", "D5", "S5"], {"S3": 1, "C4": 0}, 0),
])
def test_first_bidder_options(option, kitty, fixed, expected):
    env = new_env(first_bidder=option)
    env.reset(seed=0, options=suited_deal(kitty, fixed))
    assert env.agent_selection == f"player_{expected}"


# -- auction ---------------------------------------------------------------------------------------


HANDS = unsuited_deal({}, "4567")


def auction_env(first=1, **kw):
    env = new_env(**kw)
    env.reset(seed=0, options={"hands": HANDS, "kitty": "4567", "first_bidder": first,
                               "leader": 0})
    return env


def test_auction_one_round_highest_bidder_digs():
    env = auction_env(first=1)
    assert env.agent_selection == "player_1"
    assert legal_strings(env) == ["bid 1", "bid 2", "bid 3", "pass"]
    act(env, "pass")
    assert env.agent_selection == "player_2"
    act(env, "bid 1")
    assert env.agent_selection == "player_0"
    assert legal_strings(env) == ["bid 2", "bid 3", "pass"]  # strictly higher
    act(env, "pass")
    # every seat has spoken once: player_1 (who passed first) does not speak again
    info = env.infos[env.agent_selection]
    assert env.agent_selection == "player_2"
    assert (info["phase"], info["digger"], info["bid"]) == ("bury", 2, 1)


def test_auction_last_speaker_can_outbid():
    env = auction_env(first=2)
    run(env, ["pass", "bid 1", "bid 2"])  # seats 2, 0, 1
    info = env.infos[env.agent_selection]
    assert (env.agent_selection, info["phase"], info["digger"], info["bid"]) == \
        ("player_1", "bury", 1, 2)


def test_bid_three_ends_the_auction_at_once():
    env = auction_env(first=0)
    act(env, "bid 1")
    act(env, "bid 3")  # seat 1; seat 2 never speaks
    info = env.infos[env.agent_selection]
    assert (env.agent_selection, info["phase"], info["digger"], info["bid"]) == \
        ("player_1", "bury", 1, 3)
    env = auction_env(first=2)
    act(env, "bid 3")
    assert env.infos[env.agent_selection]["digger"] == 2


def test_all_pass_first_bidder_digs_at_one():
    env = auction_env(first=1)
    run(env, ["pass", "pass", "pass"])
    info = env.infos[env.agent_selection]
    assert (env.agent_selection, info["phase"], info["digger"], info["bid"]) == \
        ("player_1", "bury", 1, 1)


def test_illegal_bids_rejected():
    env = auction_env(first=0)
    act(env, "bid 2")
    with pytest.raises(ValueError, match="illegal action"):
        act(env, "bid 2")
    with pytest.raises(ValueError, match="illegal action"):
        act(env, "bid 1")
    with pytest.raises(ValueError, match="illegal action"):
        act(env, "bury 4")


# -- burying --------------------------------------------------------------------------------------


def test_burying_exactly_four_picks():
    kitty = "2233"
    hands = unsuited_deal({1: "44556677889TJQKA"}, kitty)
    env = new_env()
    env.reset(seed=0, options={"hands": hands, "kitty": kitty, "first_bidder": 1, "leader": 0})
    run(env, ["bid 1", "pass", "pass"])
    assert hand_of(env, 1) == "44556677889TJQKA2233"  # took the kitty: 20 cards
    # the picks: ranks held (plain picks only in a deal without suits)
    assert legal_strings(env) == sorted(f"bury {r}" for r in "456789TJQKA23")
    for i, pick in enumerate(["bury 4", "bury 3", "bury 3", "bury K"]):
        assert env.agent_selection == "player_1"
        assert env.infos["player_1"]["phase"] == "bury"
        act(env, pick)
        if i < 3:
            assert env.infos["player_1"]["phase"] == "bury"
    assert env.agent_selection == "player_0"  # the given leader
    assert env.infos["player_0"]["phase"] == "play"
    assert [len(hand_of(env, i)) for i in range(3)] == [16, 16, 16]
    assert hand_of(env, 1) == "4556677889TJQA22"
    assert env.unwrapped.game.buried(env.unwrapped.state_vec) == "4K33"
    # buried and kitty cards: the digger sees them, the farmers do not
    assert field_cards(env, "player_1", "buried") == "4K33"
    assert field_cards(env, "player_1", "kitty") == "2233"
    for f in ("player_0", "player_2"):
        assert field_cards(env, f, "buried") == ""
        assert field_cards(env, f, "kitty") == ""
    # the farmers' "others" holds the buried cards too; the digger's does not
    assert field_cards(env, "player_1", "others") == rest_of_deck(hand_of(env, 1), "4K33")
    assert field_cards(env, "player_0", "others") == rest_of_deck(hand_of(env, 0))


def test_bury_pick_must_be_held_and_reveal_kitty():
    kitty = "2233"
    hands = unsuited_deal({1: "44556677889TJQKA"}, kitty)
    env = new_env(reveal_kitty=True)
    env.reset(seed=0, options={"hands": hands, "kitty": kitty, "digger": 1, "bid": 2,
                               "leader": 2})
    assert env.agent_selection == "player_1"
    with pytest.raises(ValueError, match="illegal action"):
        act(env, "bury D4")  # no suits known
    run(env, ["bury 3", "bury 3"])
    with pytest.raises(ValueError, match="illegal action"):
        act(env, "bury 3")  # none left
    run(env, ["bury 2", "bury 2"])
    for a in ("player_0", "player_1", "player_2"):
        assert field_cards(env, a, "kitty") == "2233"  # reveal_kitty: everyone
    assert field_cards(env, "player_0", "buried") == ""
    assert env.agent_selection == "player_2"


# -- first leader ----------------------------------------------------------------------------------


def dig(env):
    """From a suited deal: the first bidder bids 3 (and so digs)."""
    act(env, "bid 3")


def bury(env, diamond_picks=()):
    """Bury the given diamond picks, then plain picks (never a diamond) up to 4 cards."""
    run(env, diamond_picks)
    while env.infos[env.agent_selection]["phase"] == "bury":
        plain = [t for t in legal_strings(env) if not t.startswith("bury D")]
        act(env, plain[0])


@pytest.mark.parametrize("kitty, fixed, picks, leader", [
    # ♦3 with a farmer: the farmer leads
    (["H4", "H5", "H6", "H7"], {"S3": 1, "D3": 0, "H3": 1}, [], 0),
    # ♦3 in the kitty, kept: the digger leads
    (["D3", "H5", "H6", "H7"], {"S3": 2, "D4": 0}, [], 2),
    # ♦3 in the kitty, buried: ♦4's holder leads (a farmer)
    (["D3", "H5", "H6", "H7"], {"S3": 2, "D4": 1}, ["bury D3"], 1),
    # ♦3 and ♦4 buried: ♦5's holder
    (["D3", "D4", "H6", "H7"], {"S3": 2, "D5": 0}, ["bury D3", "bury D4"], 0),
    # the digger buries his own ♦3 and ♦4 from his hand: ♦5 with the other farmer
    (["H8", "H9", "HT", "HJ"], {"S3": 0, "D3": 0, "D4": 0, "D5": 2}, ["bury D3", "bury D4"], 2),
    # ♦3 ♦4 ♦5 ♦6 all buried (kitty ♦3 ♦4, the digger's own ♦5 ♦6): ♦7's holder
    (["D3", "D4", "H6", "H7"], {"S3": 1, "D5": 1, "D6": 1, "D7": 2},
     ["bury D3", "bury D4", "bury D5", "bury D6"], 2),
])
def test_first_leader_diamond_three(kitty, fixed, picks, leader):
    env = new_env()
    env.reset(seed=0, options=suited_deal(kitty, fixed))
    digger = fixed["S3"]
    assert env.agent_selection == f"player_{digger}"
    dig(env)
    bury(env, picks)
    assert env.agent_selection == f"player_{leader}"
    assert env.infos[env.agent_selection]["leader"] == leader
    assert env.infos[env.agent_selection]["phase"] == "play"
    assert env.infos[env.agent_selection]["digger"] == digger
    # a free lead: plays only, no pass
    assert "pass" not in legal_strings(env)


def test_plain_pick_keeps_the_diamond():
    # the digger holds ♠3 and ♦3: "bury 3" buries the ♠3, so he still leads
    env = new_env()
    env.reset(seed=0, options=suited_deal(["H4", "H5", "H6", "H7"],
                                          {"S3": 1, "D3": 1, "D4": 2}))
    dig(env)
    picks = legal_strings(env)
    assert "bury 3" in picks and "bury D3" in picks
    bury(env, ["bury 3"])
    assert env.agent_selection == "player_1"
    # and when ♦3 is his only 3, only "bury D3" can bury it
    env.reset(seed=0, options=suited_deal(["H4", "H5", "H6", "H7"], {"S4": 0, "H3": 0, "C3": 0,
                                                                       "S3": 2, "D3": 1}))
    # ♠3 is with seat 2, who bids first; seats 2 and 0 pass, seat 1 bids
    run(env, ["pass", "pass", "bid 1"])
    assert env.infos[env.agent_selection]["digger"] == 1
    picks = legal_strings(env)
    assert "bury D3" in picks and "bury 3" not in picks


def test_diamonds_field():
    env = new_env()
    deal = suited_deal(["D3", "H5", "H6", "H7"], {"S3": 2, "D4": 0, "DK": 0})
    env.reset(seed=0, options=deal)
    g = env.unwrapped.game
    a, b = g.layout.offsets["diamonds"]
    for seat in range(3):
        obs = env.observe(f"player_{seat}")["observation"][a:b]
        own = sorted(ORDER.index(c[1]) for c in deal["hands"][seat].split() if c[0] == "D")
        assert list(np.flatnonzero(obs)) == own
    assert env.observe("player_0")["observation"][a + ORDER.index("K")] == 1
    assert not env.observe("player_2")["observation"][a:b][ORDER.index("3")]
    act(env, "bid 3")  # seat 2 digs and takes ♦3 from the kitty
    assert env.observe("player_2")["observation"][a:b][ORDER.index("3")] == 1


# -- scoring through whole deals ------------------------------------------------------------------

F2 = "445JQQQKKKAA2233"  # seat 0, a farmer
F1 = "555789TJQKAA2233"  # seat 1, a farmer, leads
DG = "446666777888999T"  # seat 2, the digger
KT = "TTJJ"


def test_seed_scoring_example_farmers_win():
    env = new_env()
    env.reset(seed=0, options={"hands": [F2, F1, DG], "kitty": KT, "digger": 2, "bid": 2,
                               "leader": 1})
    run(env, ["bury T", "bury T", "bury T", "bury J"])
    assert hand_of(env, 2) == "446666777888999J"
    run(env, ["22", "6666", "pass", "pass",  # one bomb
              "44", "pass", "AA", "pass", "pass",
              "789TJQK", "pass", "pass", "555", "pass", "pass", "33"])
    assert len(hand_of(env, 2)) == 10  # the losing digger holds 10 cards
    # unit = 2 (bid) x 2 (one bomb) x 2 (10 cards -> x2) = 8: digger -16, farmers +8
    assert env.rewards == {"player_0": 8.0, "player_1": 8.0, "player_2": -16.0}
    assert all(env.terminations.values())


DIG = "456789TJQKA22333"


def digger_goes_out(**kw):
    kitty = "5678"
    hands = unsuited_deal({0: DIG}, kitty)
    env = new_env(**kw)
    return env, hands, kitty


def test_digger_wins_farmers_hold_32():
    env, hands, kitty = digger_goes_out()
    env.reset(seed=0, options={"hands": hands, "kitty": kitty, "digger": 0, "bid": 1,
                               "leader": 0})
    run(env, ["bury 5", "bury 6", "bury 7", "bury 8"])
    run(env, ["456789TJQKA", "pass", "pass", "22", "pass", "pass", "333"])
    # unit = 1 x 1 x 2^(32/8) = 16: digger +32, farmers -16
    assert env.rewards == {"player_0": 32.0, "player_1": -16.0, "player_2": -16.0}


def test_win_loss_reward():
    env, hands, kitty = digger_goes_out(reward="win_loss")
    env.reset(seed=0, options={"hands": hands, "kitty": kitty, "digger": 0, "bid": 1,
                               "leader": 0})
    run(env, ["bury 5", "bury 6", "bury 7", "bury 8",
              "456789TJQKA", "pass", "pass", "22", "pass", "pass", "333"])
    assert env.rewards == {"player_0": 1.0, "player_1": -1.0, "player_2": -1.0}


@pytest.mark.parametrize("bombs, expected", [(True, 1 * 4 * 16), (False, 1 * 16)])
def test_quads_double_only_as_bombs(bombs, expected):
    kitty = "4444"
    hands = unsuited_deal({0: "5555666677788899"}, kitty)
    env = new_env(bombs=bombs)
    env.reset(seed=0, options={"hands": hands, "kitty": kitty, "digger": 0, "bid": 1,
                               "leader": 0})
    run(env, ["bury 4"] * 4)
    run(env, ["5555", "pass", "pass", "6666", "pass", "pass", "777888", "pass", "pass", "99"])
    assert env.rewards["player_0"] == 2 * expected
    assert env.rewards["player_1"] == -expected


# -- open hand -------------------------------------------------------------------------------------


@pytest.mark.parametrize("choice, unit", [("open", 3 * 2 * 16), ("not open", 3 * 16)])
def test_open_hand_visibility_and_doubling(choice, unit):
    env, hands, kitty = digger_goes_out(open_hand=True)
    env.reset(seed=0, options={"hands": hands, "kitty": kitty, "first_bidder": 0,
                               "leader": 0})
    act(env, "bid 3")
    assert env.agent_selection == "player_0"
    assert env.infos["player_0"]["phase"] == "open"
    assert legal_strings(env) == ["not open", "open"]
    assert hand_of(env, 0) == DIG  # the kitty is taken after the choice
    for a in env.possible_agents:
        assert field_cards(env, a, "open_cards") == ""
    act(env, choice)
    assert env.infos["player_0"]["open"] == (1 if choice == "open" else 0)
    assert env.infos["player_0"]["phase"] == "bury"
    shown = DIG if choice == "open" else ""
    for a in env.possible_agents:
        assert field_cards(env, a, "open_cards") == shown
    assert field_cards(env, "player_1", "kitty") == ""  # the kitty stays secret
    run(env, ["bury 5", "bury 6", "bury 7", "bury 8"])
    for a in env.possible_agents:
        assert field_cards(env, a, "open_cards") == shown  # the 16 dealt cards, all deal
    assert field_cards(env, "player_2", "buried") == ""
    run(env, ["456789TJQKA", "pass", "pass", "22", "pass", "pass", "333"])
    assert env.rewards == {"player_0": 2.0 * unit, "player_1": -unit, "player_2": -unit}


def test_no_open_choice_without_option_or_below_three():
    env = auction_env(first=0, open_hand=True)
    run(env, ["bid 2", "pass", "pass"])
    assert env.infos[env.agent_selection]["phase"] == "bury"
    env = auction_env(first=0)
    act(env, "bid 3")
    assert env.infos[env.agent_selection]["phase"] == "bury"
    assert env.infos[env.agent_selection]["open"] == -1


# -- custom deals: bad input -----------------------------------------------------------------------


@pytest.mark.parametrize("options, exc, fragment", [
    (dict(hands=HANDS, kitty="4567", leader=0), ValueError, "first_bidder"),
    (dict(hands=HANDS, kitty="4567", first_bidder=0), ValueError, "leader"),
    (dict(hands=HANDS, kitty="4567", first_bidder=3, leader=0), ValueError, "first_bidder=3"),
    (dict(hands=HANDS, kitty="4567", first_bidder=0, leader=0, digger=1), ValueError,
     "both 'digger' and 'bid'"),
    (dict(hands=HANDS[:2], kitty="4567", first_bidder=0, leader=0), ValueError, "3 hands"),
    (dict(hands=HANDS, kitty="456", first_bidder=0, leader=0), ValueError, "kitty has 3"),
    (dict(hands=[HANDS[0][:-1] + "4"] + HANDS[1:], kitty="4567", first_bidder=0, leader=0),
     ValueError, "'4'"),
    (dict(hands=HANDS, kitty="4567", first_bidder=0, leader=0, dealer=1), ValueError,
     "unknown deal option"),
    (dict(suited_deal(["H4", "H5", "H6", "H7"]), leader=1), ValueError, "decided by the suits"),
    (dict(hands=suited_deal(["H4", "H5", "H6", "H7"])["hands"], kitty="4567"), ValueError,
     "not a mix"),
    (dict(hands=[suited_deal(["H4", "H5", "H6", "H7"])["hands"][0]] * 3), ValueError,
     "impossible deal: .* is in the hand of seat 0 and in the hand of seat 1"),
    (dict(hands=["S3 " + h for h in suited_deal(["H4", "H5", "H6", "H7"])["hands"]]), ValueError,
     "appears twice|has 17 cards"),
    (dict(hands=["X3"] * 3), ValueError, "X3"),
])
def test_bad_custom_deals(options, exc, fragment):
    assert_bad_deal_kept_out(new_env(), options, exc, fragment, seed=3)


# -- action strings ----------------------------------------------------------------------------------


def test_action_strings_round_trip():
    env = new_env()
    g = env.unwrapped.game
    for a in range(g.n_actions):
        assert env.unwrapped.string_to_action(env.unwrapped.action_to_string(a)) == a
    assert env.unwrapped.action_to_string(g.blocks["bury"][0]) == "bury 4"
    assert env.unwrapped.action_to_string(g.blocks["bury"][1] - 1) == "bury D3"
    assert env.unwrapped.string_to_action("bury d3") == g.blocks["bury"][1] - 1
    assert env.unwrapped.action_to_string(g.blocks["open"][0]) == "not open"
    for bad in ("bury", "bury X", "bury 10", "bid 4"):
        with pytest.raises(ValueError):
            env.unwrapped.string_to_action(bad)


# -- PettingZoo conformance ----------------------------------------------------------------------


def test_pettingzoo_api_seed_render():
    from pettingzoo.test import api_test, render_test, seed_test

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(wakeng_v0.env(), num_cycles=300)
        api_test(wakeng_v0.env(open_hand=True, bombs=False, first_bidder="lowest_club"),
                 num_cycles=100)
    seed_test(wakeng_v0.env, num_cycles=200)
    render_test(wakeng_v0.env, custom_tests={"ansi": lambda s: isinstance(s, str) and len(s) > 0})


def test_registry_make():
    import pettingzoo

    assert cardenvs.GAMES["wakeng"] == "wakeng_v0"
    env = pettingzoo.make("aec", "cardenvs/wakeng-v0", render_mode="ansi")
    assert type(env.unwrapped) is wakeng_v0.raw_env
    env.reset(seed=1)
    assert "Wakeng" in env.render()


def test_pickle_round_trip_mid_bury_and_play():
    rng = np.random.default_rng(5)
    for stop in ("bury", "play"):
        env = wakeng_v0.env(open_hand=True, render_mode="ansi")
        env.reset(seed=11)
        while env.infos[env.agent_selection]["phase"] != stop:
            ids = env.unwrapped.legal_actions()
            env.step(int(ids[rng.integers(len(ids))]))
        act(env, env.unwrapped.action_to_string(int(env.unwrapped.legal_actions()[0])))
        clone = pickle.loads(pickle.dumps(env))
        np.testing.assert_array_equal(clone.unwrapped.state_vec, env.unwrapped.state_vec)
        assert clone.render() == env.render()
        for a in env.possible_agents:
            np.testing.assert_array_equal(clone.observe(a)["observation"],
                                          env.observe(a)["observation"])
        r1, r2 = np.random.default_rng(1), np.random.default_rng(1)
        random_game(env, r1)
        random_game(clone, r2)
        assert env.rewards == clone.rewards
        np.testing.assert_array_equal(clone.unwrapped.state_vec, env.unwrapped.state_vec)


def test_random_games_invariants():
    """Random deals: 16/16/16/4, zero-sum scores that match the formula, 52 cards conserved."""
    from cardenvs.core.state import BID, LANDLORD, NDOUBLE, WINNER
    from cardenvs.games.wakeng import A_OPEN

    rng = np.random.default_rng(0)
    env = wakeng_v0.env(open_hand=True)
    for seed in range(40):
        env.reset(seed=seed)
        sizes = [len(hand_of(env, i)) for i in range(3)]
        assert sizes == [16, 16, 16]
        random_game(env, rng)
        s = env.unwrapped.state_vec
        d, w = int(s[LANDLORD]), int(s[WINNER])
        assert len(hand_of(env, w)) == 0
        losers = [i for i in range(3) if (i == d) != (w == d)]
        n = sum(len(hand_of(env, i)) for i in losers)
        unit = int(s[BID]) * 2 ** int(s[NDOUBLE]) * (2 if s[A_OPEN] == 1 else 1) * \
            2 ** (max(n, 8) // 8)
        sign = 1 if w == d else -1
        exp = [sign * unit * (2 if i == d else -1) for i in range(3)]
        assert list(env.unwrapped.game.rewards(s)) == exp


# -- differential test against the slow reference ----------------------------------------------------


def test_move_generator_matches_reference():
    from cardenvs.core.reference import classify, reference_legal

    rng = np.random.default_rng(2024)
    for bombs in (True, False):
        g = Wakeng(bombs=bombs)
        rules = combo_rules()
        ref_rules = rules if bombs else replace(rules, bomb_sizes=())
        memo: dict = {}
        out = np.empty(len(g.table), np.int64)
        T = len(g.table)
        for it in range(300):
            deck = np.repeat(np.arange(13), 4)
            size = int(rng.integers(1, 17))
            cards = rng.choice(deck, size, replace=False)
            hand = np.bincount(cards, minlength=16).astype(np.int64)
            prev_row = -1 if it % 3 == 0 else int(rng.integers(T))
            prev = None
            prev_is_quad = False
            if prev_row >= 0:
                p = g.table.plays[prev_row]
                prev_is_quad = p.family == BOMB
                if bombs or not prev_is_quad:
                    prev = next(x for x in classify(p.counts, rules) if x.family == p.family)
            k = gen_legal(hand, prev_row, g.tab, out)
            got = {(g.table.plays[r].counts, g.table.plays[r].family, g.table.plays[r].length)
                   for r in out[:k]}
            assert len(got) == k  # one reading per card set in Wakeng
            if prev_is_quad and not bombs:
                exp = set()
            else:
                exp = {(c, f, L) for c, f, L, _ in reference_legal(hand, prev, ref_rules, memo)}
            if not bombs:  # four of a kind: its own type, higher rank beats lower
                for r in range(13):
                    if hand[r] == 4 and (prev_row < 0 or (prev_is_quad and
                                                          r > g.table.plays[prev_row].key - 1)):
                        exp.add((tuple(4 if i == r else 0 for i in range(16)), BOMB, 0))
            assert got == exp, (bombs, g.deck.format(hand), prev_row)


def test_random_deals_are_consistent():
    """Random deals: 52 cards 16/16/16/4; every diamond's place holds a card of its rank."""
    from cardenvs.core.state import FIRST, kitty_off
    from cardenvs.games.wakeng import DIAM

    g = Wakeng()
    s = g.new_state()
    firsts = set()
    for seed in range(60):
        g.reset(s, seed)
        counts = [s[16 * i + 48: 16 * i + 64] for i in range(3)] + [s[kitty_off(3):kitty_off(3) + 16]]
        assert [int(c.sum()) for c in counts] == [16, 16, 16, 4]
        assert list(sum(counts)[:13]) == [4] * 13
        for r in range(13):
            assert counts[int(s[DIAM + r])][r] >= 1
        firsts.add(int(s[FIRST]))
    assert firsts == {0, 1, 2}
