"""The rules agent in the wild-joker games: the planner with jokers standing in, and literal
positions of 打娘娘 (niangniang) and 兰溪乌龙 (wulong).

Expected values are derived by hand from the rules pages, restated here (the tests do not read
the pages):

*niangniang*: ranks 3 < 4 < ... < A < 2; the jokers B, R are wild: with at least one natural
card a joker stands for any natural rank the play needs (``5B`` = ``55``, ``4B678`` =
``45678``, ``333B`` = ``3333``) and is never played alone; ``BR`` is the weakest bomb; a
player whose only card is one joker is stuck and ranks below every player who goes out.  The
娘娘 takes 4 of the 14 bottom cards, then returns 4 of his 10 dealt cards (never a joker); he
loses 1 point per 活子 among them (活子: every card but 3, 2 and the jokers, which are 死子).
The three catchers play against the 娘娘 but are also scored by their own places.

*wulong*: see the wulong section below.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import cardenvs
from cardenvs.agents import make_agent
from cardenvs.agents.planner import plan_cost, plan_cost_wild, plan_costs_after_wild, plan_rules
from cardenvs.agents.rules import RulesAgent
from cardenvs.arena import run_arena
from helpers import alternate_deals, chosen_play, play_view

# -- the planner with wild jokers ----------------------------------------------------------------

GN = cardenvs.make_game("niangniang")
PR_N = plan_rules(GN.table, effective=True)
WILD_N = np.array([13, 14], np.int64)
WCFG_N = np.array([13, 2, 0], np.int64)  # 13 natural ranks, up to 2 stand-ins, any combination
LONE = 100.0  # the plan cost of a hand that can make no play


def _cost_n(cards: str) -> float:
    return float(plan_cost_wild(GN.deck.parse(cards), PR_N, 600, WILD_N, WCFG_N, LONE))


def test_wild_planner_counts_jokers_as_stand_ins():
    # 4 6 7 8 + joker: the joker fills the straight 45678 (one turn) instead of 4 loose cards
    assert _cost_n("4678B") == pytest.approx(_cost_n("45678"))
    assert _cost_n("4678B") < _cost_n("4678") - 2
    # 333 + joker is the bomb 3333: a bomb sheds its cards and takes the lead back (cost -1)
    assert _cost_n("333B") == pytest.approx(float(plan_cost(GN.deck.parse("3333"), PR_N, 600)))
    assert _cost_n("333B") < 0
    # 4444 + joker is a 5-card bomb, a play of its own (the effective rows count)
    assert _cost_n("4444B") == pytest.approx(_cost_n("4444"))
    # a joker alone is stuck: the planner's lone cost; B R together are the joker bomb
    assert _cost_n("B") == pytest.approx(LONE)
    assert _cost_n("BR") < 0


def _slow_cost_n(h: np.ndarray) -> float:
    """Reference: every way to let 0, 1 or 2 of the hand's jokers stand for any natural rank
    (13 ranks, no pruning), the best plain plan of the result; one lone joker is stuck."""
    nj, nn = int(h[13] + h[14]), int(h[:13].sum())
    if nn == 0 and nj == 1 and h.sum() == 1:
        return LONE
    best = float(plan_cost(h, PR_N, 600))
    if nn == 0:
        return best
    jokers = [13] * int(h[13]) + [14] * int(h[14])
    for k in range(1, nj + 1):
        for targets in itertools.combinations_with_replacement(range(13), k):
            c = h.copy()
            for j, t in zip(jokers[:k], targets):
                c[j] -= 1
                c[t] += 1
            best = min(best, float(plan_cost(c, PR_N, 600)))
    return best


def test_wild_planner_matches_the_exhaustive_assignment():
    # the fast search tries only held ranks and chain gaps next to held ranks; trying every
    # rank for every joker finds nothing better
    rng = np.random.default_rng(7)
    deck = np.repeat(np.arange(15), GN.deck.copies[:15])
    for _ in range(300):
        h = np.bincount(rng.choice(deck, int(rng.integers(1, 11)), replace=False),
                        minlength=16).astype(np.int64)
        if h[13] + h[14] == 0:
            h[13 + int(rng.integers(2))] = 1
        assert _cost_n(GN.deck.format(h)) == pytest.approx(_slow_cost_n(h)), GN.deck.format(h)


def test_wild_costs_after_put_a_joker_in_rather_than_leave_it_alone():
    # holding 5 5 B, the pair 55 can be played as 5B and keep a natural 5 (one single left)
    # instead of two natural 5s and a lone joker (stuck)
    hand = GN.deck.parse("55B")
    row = GN.table.find("55")
    out = np.empty(1)
    plan_costs_after_wild(hand, np.array([row], np.int64), GN.tab.counts, PR_N, 600, WILD_N,
                          WCFG_N, LONE, out)
    assert out[0] == pytest.approx(_cost_n("5"))


# -- niangniang: literal positions ---------------------------------------------------------------

RN = RulesAgent(GN)


def _nn_env():
    return cardenvs.niangniang_v0.env(illegal="raise")


def _deal(nn_hand: str, bottom: str) -> list[str]:
    """Hands: the 娘娘 (seat 0) gets ``nn_hand``; the other 30 cards go to seats 1..3."""
    d = GN.deck
    left = d.format(d.full_counts() - d.parse(nn_hand) - d.parse(bottom))
    return [nn_hand, left[:10], left[10:20], left[20:30]]


def test_niangniang_exchange_takes_the_strongest_and_returns_dead_weak_cards():
    # the 娘娘's 10: 3 4 66 88 TT QQ (no 2, no ace, no joker); the bottom holds both jokers and
    # two 2s.  Jokers stand in for anything and 2s top every single and pair: he takes those 4.
    # Of his own cards the lone 3 and the lone 4 are the weakest; the 3 is a 死子 (no
    # penalty) and the 4 a 活子, so the 3 goes back first; no 2 goes back (none of his own,
    # and a 2 is strong); a joker can never go back.
    env = _nn_env()
    bottom = "BR22A3345579JK"
    env.reset(options={"hands": _deal("34668 8TTQQ".replace(" ", ""), bottom), "bottom": bottom,
                       "niangniang": 0})
    picks = []
    for _ in range(8):
        a = RN.act(env.observe("player_0"), env.legal_actions())
        picks.append(env.action_to_string(a))
        env.step(a)
    takes, returns = picks[:4], picks[4:]
    assert sorted(takes) == ["take 2", "take 2", "take B", "take R"], picks
    assert returns[0] == "return 3", picks
    assert "return 4" in returns and not any(p.endswith(("2", "B", "R")) for p in returns), picks
    hand = GN.deck.format(RN.reader.cards(env.observe("player_0")["observation"], "hand"))
    assert "B" in hand and "R" in hand and hand.count("2") == 2


def test_niangniang_keeps_a_2_and_returns_a_live_low_card():
    # the 娘娘 holds a lone 2 and a lone 4 among pairs (77 99 JJ KK); no straight can hold the
    # 4 (5, 6 and 8 stay in the bottom).  The 2 is a 死子 (free to return) but the top natural
    # rank; the 4 is a 活子 (1 point) and the weakest card: by hand value the 4 goes back, the
    # 2 stays.
    env = _nn_env()
    nn_hand = "247799JJKK"
    bottom = "333556 8TQAA2BR".replace(" ", "")
    env.reset(options={"hands": _deal(nn_hand, bottom), "bottom": bottom, "niangniang": 0})
    picks = []
    for _ in range(8):
        a = RN.act(env.observe("player_0"), env.legal_actions())
        picks.append(env.action_to_string(a))
        env.step(a)
    assert "return 4" in picks[4:] and "return 2" not in picks[4:], picks


def test_niangniang_exchange_without_penalty_still_never_returns_jokers():
    # legality and the 活子 options: with huozi_when="never" the 4 returns are still own cards
    env = cardenvs.niangniang_v0.env(illegal="raise", huozi_when="never")
    agent = make_agent("rules", env.unwrapped.game)
    for seed in range(6):
        env.reset(seed=seed)
        nn = env.infos[env.agent_selection]["niangniang"]
        for _ in range(8):
            name = env.agent_selection
            assert name == f"player_{nn}"
            a = agent.act(env.observe(name), env.legal_actions())
            assert a in env.legal_actions()
            env.step(a)
        assert env.infos[env.agent_selection]["phase"] == "play"


def _nview(hand: str, *, beat=None, beat_seat=-1, nn=1, sizes=(10, 10, 10), out=()):
    """A play-phase view in niangniang: ``nn`` the 娘娘's relative seat (0 = me), ``out``
    relative seats that went out.  Returns (view, legal ids incl. pass when following)."""
    d = GN.deck
    h = d.parse(hand)
    sz = np.array([int(h.sum()), *sizes], np.int64)
    active = np.ones(4, bool)
    for q in out:
        active[q] = False
        sz[q] = 0
    others = active.copy()
    others[0] = False
    partners = np.zeros(4, bool)
    enemies = np.zeros(4, bool)
    if nn != 0 and active[nn]:
        enemies[nn] = True
        partners = others & ~enemies
    else:
        enemies = others
    prev = -1 if beat is None else GN.table.find(beat)
    buf = np.empty(len(GN.table) + 1, np.int64)
    k = GN.legal_rows(h, prev, buf)
    return play_view(GN, h, d.full_counts() - h, sz, beat_seat, prev, partners, enemies, buf[:k])


def _nplay(v, legal):
    return chosen_play(RN, GN, v, legal)


def test_niangniang_never_left_with_a_lone_joker():
    # holding 9 + joker, the 娘娘 (2 cards left) leads a single 5: beating it with the 9 would
    # leave the joker alone (stuck, below everyone who goes out): pass and keep the pair 9B
    assert _nplay(*_nview("9B", beat="5", beat_seat=1, sizes=(2, 10, 10))) == "pass"
    # on a free lead the same hand goes out as the pair 99
    assert _nplay(*_nview("9B")) == "99"
    # holding 5 5 B against the pair 44: 55 can be played as 5 + joker, keeping a natural 5
    assert _nplay(*_nview("55B", beat="44", beat_seat=1, sizes=(2, 10, 10))) == "55"


def test_niangniang_catchers_do_not_overtake_each_other_near_the_end():
    # the 娘娘 (seat 1) holds 2 cards; a fellow catcher (seat 2) leads a 5: pass, though the
    # lone 9 could beat it
    assert _nplay(*_nview("9JJQQKK", beat="5", beat_seat=2, nn=1, sizes=(2, 10, 10))) == "pass"
    # the same play from the 娘娘 is beaten with the plan's loose single
    assert _nplay(*_nview("9JJQQKK", beat="5", beat_seat=1, nn=1, sizes=(2, 10, 10))) == "9"
    # once the 娘娘 is out every player is for himself: the former ally's 5 is beaten too
    assert _nplay(*_nview("9JJQQKK", beat="5", beat_seat=2, nn=1, sizes=(0, 3, 10),
                          out=(1,))) == "9"


def test_niangniang_joker_follow_up_keeps_the_joker_for_a_pair():
    # seat 1 leads 55 holding 5 5 9 B 7 7 K K A A: with two natural 5s the joker stays and
    # pairs the 9 (9B, 77, the pair chain KKAA: 3 plays left) rather than 5 + joker (5, 9, 77,
    # KKAA: 4 plays left)
    env = _nn_env()
    hands = ["3334446668", "55779KKAAB", "", ""]
    d = GN.deck
    bottom_rest = d.full_counts() - d.parse(hands[0]) - d.parse(hands[1])
    rest = d.format(bottom_rest)
    hands[2], hands[3] = rest[:10], rest[10:20]
    bottom = rest[20:]
    env.reset(options={"hands": hands, "bottom": bottom, "niangniang": 0,
                       "returned": bottom[:4]})
    assert env.agent_selection == "player_1"
    env.step(env.unwrapped.string_to_action("55"))
    legal = env.legal_actions()
    names = [env.action_to_string(a) for a in legal]
    assert "no more jokers" in names and "joker as 5" in names, names
    a = RN.act(env.observe("player_1"), legal)
    assert env.action_to_string(a) == "no more jokers"


def test_niangniang_rules_never_gets_stuck_against_random():
    # a rules player can always avoid a lone joker (pass, or play the joker with naturals)
    env = _nn_env()
    g = env.unwrapped.game
    rules, rnd = make_agent("rules", g), make_agent("random", g, seed=3)
    stuck_rules = []

    def count_stuck(env, d):
        stuck = env.unwrapped.game.stuck(env.unwrapped.state_vec)
        stuck_rules.append(sum(stuck[q] for q in range(4) if (q + d) % 2 == 0))

    alternate_deals(env, rules, rnd, 12, seed=100, after_deal=count_stuck)
    assert len(stuck_rules) == 12 and sum(stuck_rules) == 0


def test_niangniang_rules_beats_random():
    res = run_arena("niangniang", "rules,random", deals=30, seed=0, progress=False)
    diff = res["pairwise"]["rules - random"]
    assert diff["ci"][0] > 1.0, diff
    roles = res["by_role"]["rules"]
    assert roles["niangniang"]["score"] > res["by_role"]["random"]["niangniang"]["score"] + 3
    assert roles["catcher"]["win_rate"] > res["by_role"]["random"]["catcher"]["win_rate"] + 0.2


# -- wulong: literal positions ---------------------------------------------------------------------
# Written from wulong.md: two decks, 25 cards each; rank order 3 < 4 < ... < A < 2 < B < R; 3s
# only inside chains (straight >= 5, pair chain >= 3 pairs, trio chain >= 2 trios, all within
# 3..A); a player whose hand holds only 3s has failed (the earliest failure pays); jokers are
# wild and also cards of their own (single B, R; pairs BB, RR; BBRR beats everything).  报牌:
# at the start of his turn, with at most 10 cards and nobody out, a player may declare; every
# play of his must then hold his top card; a declarer who is not first out pays 2.

GW = cardenvs.make_game("wulong")
RW = RulesAgent(GW)


def _wact(hands, to_move=0, **kw):
    """The rules agent's action (as a string) at a hand-made position, and the state."""
    s = GW.new_state()
    GW.set_position(s, hands, to_move, **kw)
    out = np.empty(GW.n_actions, np.int64)
    legal = out[:GW.legal(s, out)].copy()
    obs = np.empty(GW.layout.size, np.float32)
    GW.encode(s, to_move, obs)
    mask = np.zeros(GW.n_actions, np.int8)
    mask[legal] = 1
    a = RW.act({"observation": obs, "action_mask": mask}, legal)
    assert a in legal
    return GW.action_to_string(a), s


OPP = ["456789TJQKA", "456789TJQKA", "456789TJQKA"]


def test_wulong_leads_the_chain_that_takes_the_3_first():
    # 3 4 5 6 7 / 9 9 / K K: the 3 can only leave in the straight 34567; it goes first
    assert _wact(["3456799KK", *OPP])[0] == "34567"


def test_wulong_never_keeps_only_3s():
    # holding 3 3 K against a single Q: the K beats it but leaves only 3s (failed, and the
    # first failure pays): pass, even when the player of the Q holds one card
    assert _wact(["33K", "9", *OPP[1:]], 0, prev="Q", prev_seat=1)[0] == "pass"
    assert _wact(["33K", *OPP], 0, prev="Q", prev_seat=1)[0] == "pass"


def test_wulong_declares_a_hand_sure_to_run_out():
    # BBRR (天王炸, beats everything) and 22: at most one combination can be beaten -> 报牌
    # (and indeed the six cards are one play: 22 with the four jokers standing in is the
    # 6-card bomb 222222, holding the top card R as a wild)
    text, s = _wact(["BBRR22", *OPP])
    assert text == "declare"
    GW.step(s, GW.string_to_action("declare"))
    out = np.empty(GW.n_actions, np.int64)
    legal = out[:GW.legal(s, out)].copy()
    obs = np.empty(GW.layout.size, np.float32)
    GW.encode(s, 0, obs)
    a = RW.act({"observation": obs, "action_mask": np.isin(np.arange(GW.n_actions), legal)},
               legal)
    # the whole hand in one play: out first, as declared
    assert GW.action_to_string(a) == "222222"
    # five loose singles: no declaring, the lowest single is led
    assert _wact(["468TQ", *OPP])[0] == "4"


def test_wulong_joker_pick_keeps_jokers_when_naturals_make_the_play():
    # holding 44 55 66 9 B R, the pair chain 445566 can be made of naturals: done (no joker
    # in it) leaves B R 9 (a joker pairs the 9); B[4] would leave a loose 4 and spend a joker
    s = GW.new_state()
    GW.set_position(s, ["445566BR9", *OPP], 0)
    GW.step(s, GW.string_to_action("445566"))
    out = np.empty(GW.n_actions, np.int64)
    legal = out[:GW.legal(s, out)].copy()
    names = [GW.action_to_string(a) for a in legal]
    assert "done" in names and "B[4]" in names, names
    obs = np.empty(GW.layout.size, np.float32)
    GW.encode(s, 0, obs)
    a = RW.act({"observation": obs, "action_mask": np.isin(np.arange(GW.n_actions), legal)},
               legal)
    assert GW.action_to_string(a) == "done"


def test_wulong_rules_beats_random():
    res = run_arena("wulong", "rules,random", deals=30, seed=0, progress=False)
    diff = res["pairwise"]["rules - random"]
    assert diff["ci"][0] > 1.0, diff
    assert res["per_agent"]["rules"]["win_rate"] > res["per_agent"]["random"]["win_rate"] + 0.25


def test_wulong_rules_plays_3s_only_in_chains_and_declares_only_when_it_goes_out():
    from cardenvs.core.combos import AIRPLANE, AIRPLANE_PAIRS, PAIR_CHAIN, STRAIGHT

    env = cardenvs.wulong_v0.env(illegal="raise")
    g = env.unwrapped.game
    rules, rnd = make_agent("rules", g), make_agent("random", g, seed=5)
    chains = {STRAIGHT, PAIR_CHAIN, AIRPLANE, AIRPLANE_PAIRS}
    declare = g.blocks["declare"][0]
    threes = declared = 0
    for d in range(10):
        env.reset(seed=300 + d)
        mine = set()
        rew = np.zeros(4)
        for name in env.agent_iter():
            obs, r, term, trunc, info = env.last()
            seat = int(name.split("_")[1])
            rew[seat] += r
            if term or trunc:
                env.step(None)
                continue
            who = rules if (seat + d) % 2 == 0 else rnd
            a = who.act(obs, env.unwrapped.legal_actions())
            if who is rules and a < g.pass_id and g.tab.counts[a, 0] > 0:
                assert g.tab.family[a] in chains, g.action_to_string(a)
                threes += 1
            if who is rules and a == declare:
                mine.add(seat)
            env.step(a)
        for seat in mine:  # a rules declarer goes out first (and is paid)
            assert rew[seat] > 0, (d, seat, rew)
        declared += len(mine)
    assert threes > 0
    assert declared > 0
