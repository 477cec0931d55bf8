"""跑得快 Pao De Kuai: literal positions written from the rules page (``docs/rules/paodekuai.md``),
one or more per rule and per option."""

from __future__ import annotations

import numpy as np
import pytest

import cardenvs
from cardenvs import paodekuai_v0
from cardenvs.core.follow import settle_cards_left
from cardenvs.core.combos import TRIO_PAIR
from cardenvs.core.state import CUR, NLOG, PLAYS0, REW0, hand_off

DECK16 = "3333444455556666777788889999TTTTJJJJQQQQKKKKAAA2"


def make(**opts):
    return paodekuai_v0.env(illegal="raise", **opts)


def legal(env) -> list[str]:
    return sorted(env.unwrapped.action_to_string(a) for a in env.unwrapped.legal_actions())


def play(env, text: str) -> None:
    env.step(env.unwrapped.string_to_action(text))


def rest_of(deck: str, *hands: str) -> str:
    left = list(deck)
    for h in hands:
        for ch in h:
            left.remove(ch)
    return "".join(left)


def suited_hands(lead_seat: int, lead: str = "S3") -> list[str]:
    """A suited deal of the 48 cards with ``lead`` in the hand of ``lead_seat``."""
    cards = [f"{s}{r}" for r in "3456789TJQK" for s in "SHCD"] + ["HA", "CA", "DA", "S2"]
    cards.remove(lead)
    hands = [cards[0:16], cards[16:32], cards[32:47] + [lead]]
    hands[2], hands[lead_seat] = hands[lead_seat], hands[2]
    return [" ".join(h) for h in hands]


# -- deck, deal, first lead --------------------------------------------------------------------------


def test_deck_is_48_cards_without_h2_c2_d2_sa_and_45_with_deck_15():
    g = cardenvs.make_game("paodekuai")
    assert g.deck.size == 48 and g.deck.format(g.deck.full_counts()) == DECK16
    g15 = cardenvs.make_game("paodekuai", deck="15")
    assert g15.deck.size == 45 and g15.deck.copies[g15.deck.index("K")] == 1
    for game, size in ((g, 16), (g15, 15)):
        s = game.new_state()
        game.reset(s, 7)
        assert [int(s[hand_off(i):hand_off(i) + 16].sum()) for i in range(3)] == [size] * 3
    with pytest.raises(ValueError):
        g15.table.find("KK")  # one K in the 45-card deck: no pair of Ks
    assert g15.table.find("33") >= 0


def test_the_holder_of_s3_leads_and_his_first_play_holds_a_3():
    env = make()
    for seat in range(3):
        env.reset(options={"hands": suited_hands(seat)})
        assert env.agent_selection == f"player_{seat}"
        assert env.infos[env.agent_selection]["leader"] == seat
        moves = legal(env)
        assert moves and all("3" in m for m in moves) and "pass" not in moves
    # without the rule any play of the hand is a legal first play
    env = make(first_play_has_lead_card=False)
    env.reset(options={"hands": suited_hands(1)})
    assert any("3" not in m for m in legal(env))


def test_random_deals_lead_from_the_s3_holder():
    g = cardenvs.make_game("paodekuai")
    for seed in range(20):
        s = g.new_state()
        g.reset(s, seed)
        assert s[hand_off(int(s[CUR]))] >= 1  # the leader holds a 3


def test_first_lead_h3_option():
    env = make(first_lead="H3")
    hands = suited_hands(2, lead="H3")
    env.reset(options={"hands": hands})
    assert env.agent_selection == "player_2"
    env = make()  # the same deal under the default rule: ♠3's holder leads
    env.reset(options={"hands": hands})
    assert env.agent_selection != "player_2"


def test_custom_deal_errors():
    env = make()
    with pytest.raises(ValueError, match="SA"):
        env.reset(options={"hands": suited_hands(2)[:2] + [suited_hands(2)[2].replace("HA", "SA")]})
    with pytest.raises(ValueError, match="leader"):
        env.reset(options={"hands": ["3" * 4 + "4" * 4 + "5" * 4 + "6" * 4, "7" * 4 + "8" * 4 + "9" * 4 + "T" * 4,
                                     "JJJJQQQQKKKKAAA2"]})
    with pytest.raises(ValueError, match="unknown deal option"):
        env.reset(options={"hands": suited_hands(0), "bid": 1})


# -- combinations ----------------------------------------------------------------------------------


def _free(hand: str, **opts) -> list[str]:
    """Legal plays of ``hand`` (a whole hand, seat 0 on a free lead after the first play)."""
    env = make(**opts)
    h1 = rest_of(DECK16, hand)[:16]
    h2 = rest_of(DECK16, hand, h1)[:16]
    h0 = hand + rest_of(DECK16, hand, h1, h2)
    env.reset(options={"hands": [h0, h1, h2], "leader": 0})
    s = env.unwrapped.state_vec
    s[hand_off(0):hand_off(0) + 16] = env.unwrapped.game.deck.parse(hand)
    s[NLOG] = 1  # past the first play
    env.unwrapped._after_move()
    return legal(env)


def test_trio_carries_two_kickers_and_airplanes_two_per_trio():
    moves = _free("555349")
    assert {"555+34", "555+39", "555+49"} <= set(moves)
    assert "555" not in moves and "555+3" not in moves  # not the whole hand
    moves = _free("55566")
    assert "555+66" in moves
    moves = _free("3334445678")
    assert "333444+5678" in moves
    assert not any(m.startswith("333444+") and len(m) != 11 for m in moves)
    assert "5555+34" not in _free("555534")  # no four + 3 by default
    assert "555+5" not in _free("55553")  # a kicker is never the trio's rank


def test_short_finish_trio_and_airplane_as_the_whole_hand():
    assert "555" in _free("555") and "555+3" in _free("5553")
    assert "333444+5" in _free("3334445")
    assert "555" not in _free("555", short_finish=False)
    assert "555+3" not in _free("5553", short_finish=False)


def test_pair_chains_of_two_and_straights_stop_at_a():
    moves = _free("3344")
    assert "3344" in moves
    assert "TJQKA" in _free("TJQKA") and "JQKA2" not in _free("JQKA2")


def test_aaa_bomb_option():
    g = cardenvs.make_game("paodekuai", aaa_bomb=True)
    aaa, kkkk = g.table.find("AAA"), g.table.find("KKKK")
    assert g.tab.power[aaa] > g.tab.power[kkkk] > 0
    with pytest.raises(ValueError):
        g.table.find("AAA+34")  # the three As are a bomb only
    plain = cardenvs.make_game("paodekuai")
    row = plain.table.find("AAA")  # by default a short trio (the whole hand only)
    assert plain.tab.power[row] == 0 and plain.tab.family[row] == TRIO_PAIR
    assert plain.table.find("AAA+34") >= 0


def test_four_with_three_option_is_beaten_by_a_bomb():
    g = cardenvs.make_game("paodekuai", four_with_three=True)
    row = g.table.find("5555+678")
    assert g.tab.power[row] == 0
    out = np.empty(g.n_actions, np.int64)
    from cardenvs.core.kernels import gen_legal

    k = gen_legal(g.deck.parse("66667"), row, g.tab, out)
    assert {g.action_to_string(int(a)) for a in out[:k]} == {"6666"}  # the bomb
    k = gen_legal(g.deck.parse("6666789"), row, g.tab, out)
    assert "6666+789" in {g.action_to_string(int(a)) for a in out[:k]}


# -- must beat, the forced bomb, the highest single --------------------------------------------------


def _bomb_deal():
    h0 = "3333556789TJQKA2"
    h1 = "4444" + "55666777888" + "9"
    h2 = rest_of(DECK16, h0, h1)
    return [h0, h1, h2]


def test_must_beat_forces_a_bomb_and_a_beaten_bomb_earns_nothing():
    env = make()
    env.reset(options={"hands": _bomb_deal(), "leader": 0})
    play(env, "3333")
    assert legal(env) == ["4444"]  # only the bomb beats: it must be played
    play(env, "4444")
    assert legal(env) == ["pass"]  # seat 2 cannot beat
    play(env, "pass")
    assert legal(env) == ["pass"]
    play(env, "pass")  # the trick ends: seat 1's bomb won it
    assert env.rewards == {"player_0": -10, "player_1": 20, "player_2": -10}
    assert env.agent_selection == "player_1"


def test_follower_who_can_beat_may_not_pass_unless_must_beat_is_off():
    hands = _bomb_deal()
    env = make()
    env.reset(options={"hands": hands, "leader": 0})
    play(env, "3")
    assert "pass" not in legal(env) and "5" in legal(env)
    env = make(must_beat=False)
    env.reset(options={"hands": hands, "leader": 0})
    play(env, "3")
    assert "pass" in legal(env)


def test_highest_single_when_the_next_seat_holds_one_card():
    for top_rule in (True, False):
        env = make(top_single_on_last_card=top_rule)
        env.reset(options={"hands": _bomb_deal(), "leader": 0})
        s = env.unwrapped.state_vec
        s[NLOG] = 1
        s[hand_off(1):hand_off(1) + 16] = env.unwrapped.game.deck.parse("9")  # 下家 holds one card
        env.unwrapped._after_move()
        singles = [m for m in legal(env) if len(m) == 1]
        assert singles == (["2"] if top_rule else sorted(set("3333556789TJQKA2")))
        assert "55" in legal(env)  # other combinations stay free


# -- scoring ---------------------------------------------------------------------------------------


def test_bomb_paid_mid_deal_then_cards_left_doubled_for_seats_that_never_played():
    h0 = "3333456789TJQKA2"
    h1 = rest_of(DECK16, h0)[:16]
    hands = [h0, h1, rest_of(DECK16, h0, h1)]
    for opts, mid, final in (({}, (20, -10, -10), (84, -42, -42)),
                             ({"bomb_pay": 0}, (0, 0, 0), (64, -32, -32)),
                             ({"reward": "win_loss"}, (0, 0, 0), (1, -1, -1))):
        env = make(**opts)
        env.reset(options={"hands": hands, "leader": 0})
        play(env, "3333")
        play(env, "pass")
        play(env, "pass")
        assert tuple(env.rewards[f"player_{i}"] for i in range(3)) == mid
        play(env, "456789TJQKA")
        play(env, "pass")
        play(env, "pass")
        play(env, "2")
        assert all(env.terminations.values())
        assert tuple(env.rewards[f"player_{i}"] for i in range(3)) == \
            (final if opts.get("reward") else tuple(f - m for f, m in zip(final, mid)))
        assert env.unwrapped.game.public_facts(env.unwrapped.state_vec)["scores"] == \
            ([84, -42, -42] if opts.get("reward") else list(final))


def _settle(sizes, played, winner=0, free_one=False, win_loss=False):
    s = np.zeros(600, np.int64)
    for i, c in enumerate(sizes):
        s[hand_off(i)] = c
        s[PLAYS0 + i] = played[i]
    settle_cards_left(s, 3, winner, 1, 2, free_one, 590, win_loss)
    return [int(x) for x in s[REW0:REW0 + 3]]


def test_per_card_payment_with_bei_guan_double_and_one_card_free():
    assert _settle([0, 5, 7], [3, 2, 1]) == [12, -5, -7]
    assert _settle([0, 5, 7], [3, 0, 1]) == [17, -10, -7]  # seat 1 never played: 被关
    assert _settle([0, 1, 7], [3, 2, 1]) == [8, -1, -7]
    assert _settle([0, 1, 7], [3, 2, 1], free_one=True) == [7, 0, -7]
    assert _settle([4, 0, 2], [1, 5, 0], winner=1) == [-4, 8, -4]
    assert _settle([4, 0, 2], [1, 5, 0], winner=1, win_loss=True) == [-1, 1, -1]
